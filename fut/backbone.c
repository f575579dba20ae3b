/* What every backbone shares: sizes, validation and the forward pass. */
#include "fut/fut.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *fut_kind_name(FutKind k) {
    switch (k) {
    case FUT_SPARSE: return "sparse";
    case FUT_LOOPED: return "looped";
    case FUT_RANDOM: return "random";
    }
    return "?";
}

bool fut_kind_parse(const char *s, FutKind *out) {
    for (int k = FUT_SPARSE; k <= FUT_RANDOM; k++)
        if (strcmp(s, fut_kind_name((FutKind)k)) == 0) {
            *out = (FutKind)k;
            return true;
        }
    return false;
}

size_t fut_alphabet(size_t H, bool residual) { return H + (residual ? 1 : 0); }

/* a*b + c with overflow to 0 (sizes here are far below 2^32, but the file reader feeds us
 * whatever a file says). */
static size_t mul_ok(size_t a, size_t b, bool *ok) {
    if (a && b > SIZE_MAX / a) *ok = false;
    return *ok ? a * b : 0;
}
static size_t add_ok(size_t a, size_t b, bool *ok) {
    if (b > SIZE_MAX - a) *ok = false;
    return *ok ? a + b : 0;
}
static size_t pow_ok(size_t W, size_t k, bool *ok) {
    size_t p = 1;
    for (size_t i = 0; i < k && *ok; i++) p = mul_ok(p, W, ok);
    return p;
}
static size_t geo_ok(size_t W, size_t L, bool *ok) { /* sum_{k<L} W^k */
    size_t s = 0;
    for (size_t k = 0; k < L && *ok; k++) s = add_ok(s, pow_ok(W, k, ok), ok);
    return s;
}

size_t fut_sparse_width(size_t L, size_t H, size_t d, bool residual) {
    bool ok = L < 64;
    size_t W = fut_alphabet(H, residual);
    size_t m = mul_ok(d, add_ok(mul_ok(H + 1, geo_ok(W, L, &ok), &ok), pow_ok(W, L, &ok), &ok), &ok);
    return ok ? m : 0;
}

size_t fut_random_columns(size_t L, size_t H, size_t d, bool residual) {
    bool ok = L < 64;
    size_t W = fut_alphabet(H, residual);
    size_t n = mul_ok(d, add_ok(mul_ok(2 * H, geo_ok(W, L, &ok), &ok), pow_ok(W, L, &ok), &ok), &ok);
    return ok ? n : 0;
}

size_t fut_lower_bound(size_t L, size_t H, size_t d, bool residual) {
    bool ok = L < 64;
    size_t p = pow_ok(fut_alphabet(H, residual), L, &ok);
    size_t m = residual ? add_ok(mul_ok(d, p - 1, &ok), 1, &ok) : mul_ok(d, p, &ok);
    return ok ? m : 0;
}

static bool shape_ok(FutMat m, size_t r, size_t c) {
    if (m.rows != r || m.cols != c || !m.data) return false;
    for (size_t i = 0; i < r * c; i++)
        if (!isfinite(m.data[i])) return false;
    return true;
}

bool fut_backbone_validate(const FutBackbone *b, char *err, size_t errsize) {
    if (b->L == 0 || b->L > FUT_MAX_LAYERS || b->H == 0 || b->d == 0 || b->m == 0) {
        snprintf(err, errsize, "backbone needs L, H, d, m >= 1 (got L=%zu H=%zu d=%zu m=%zu)", b->L, b->H,
                 b->d, b->m);
        return false;
    }
    if (!b->rq || !b->rk || !b->rv) {
        snprintf(err, errsize, "backbone has no attention weights");
        return false;
    }
    for (size_t i = 0; i < b->L * b->H; i++)
        if (!shape_ok(b->rq[i], b->m, b->d) || !shape_ok(b->rk[i], b->m, b->d) ||
            !shape_ok(b->rv[i], b->m, b->m)) {
            snprintf(err, errsize, "backbone layer %zu head %zu: R_Q, R_K must be %zu x %zu and R_V %zu x %zu, finite",
                     i / b->H, i % b->H, b->m, b->d, b->m, b->m);
            return false;
        }
    if (b->skip) {
        if (!b->residual) {
            snprintf(err, errsize, "backbone has a skip map but no residual connections");
            return false;
        }
        for (size_t l = 0; l < b->L; l++)
            if (!shape_ok(b->skip[l], b->m, b->m)) {
                snprintf(err, errsize, "backbone layer %zu: skip map must be %zu x %zu, finite", l, b->m, b->m);
                return false;
            }
    }
    if (!shape_ok(b->u, b->m, b->d)) {
        snprintf(err, errsize, "backbone unembedding must be %zu x %zu, finite", b->m, b->d);
        return false;
    }
    return true;
}

FutMat fut_backbone_forward(Arena *a, const FutBackbone *b, FutMat E, FutMat X) {
    FutMat Y = fut_mat_mul(a, X, false, E, false);
    for (size_t l = 0; l < b->L; l++) {
        FutMat Yn;
        if (!b->residual) Yn = fut_mat_new(a, Y.rows, b->m);
        else if (b->skip) Yn = fut_mat_mul(a, Y, false, b->skip[l], false);
        else Yn = fut_mat_copy(a, Y);
        for (size_t h = 0; h < b->H; h++) {
            size_t i = l * b->H + h;
            FutMat Q = fut_mat_mul(a, Y, false, b->rq[i], false);
            FutMat K = fut_mat_mul(a, Y, false, b->rk[i], false);
            FutMat S = fut_mat_mul(a, Q, false, K, true);
            fut_softmax_rows(&S, b->causal);
            FutMat V = fut_mat_mul(a, Y, false, b->rv[i], false);
            fut_mat_mul_acc(&Yn, 1.0, S, V);
        }
        Y = Yn;
    }
    FutMat out = fut_mat_mul(a, Y, false, b->u, false);
    FutMat ans = fut_mat_new(a, X.rows, E.rows);
    for (size_t i = 0; i < X.rows; i++)
        for (size_t j = 0; j < E.rows && j < b->d; j++) FUT_AT(ans, i, j) = FUT_AT(out, i, j);
    return ans;
}
