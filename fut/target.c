/* Attention-only targets: random draws, validation, the reference forward pass, and the path
 * form (A = W_Q W_K^T / sqrt(d_k), B = W_V W_O) padded to a backbone's shape. */
#include "fut/fut.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static FutMat gauss_mat(Arena *a, FutRng *rng, size_t r, size_t c, double sd) {
    FutMat m = fut_mat_new(a, r, c);
    for (size_t i = 0; i < r * c; i++) m.data[i] = sd * fut_rng_gauss(rng);
    return m;
}

void fut_target_random(Arena *a, FutRng *rng, size_t L, size_t H, size_t d, bool residual,
                       bool causal, FutTarget *out) {
    out->L = L;
    out->H = H;
    out->d = d;
    out->residual = residual;
    out->causal = causal;
    out->heads = ARENA_ARRAY(a, FutHead, L * H);
    double sd = 1.0 / sqrt((double)d);
    for (size_t i = 0; i < L * H; i++) {
        out->heads[i].wq = gauss_mat(a, rng, d, d, sd);
        out->heads[i].wk = gauss_mat(a, rng, d, d, sd);
        out->heads[i].wv = gauss_mat(a, rng, d, d, sd);
        out->heads[i].wo = gauss_mat(a, rng, d, d, sd);
    }
}

static bool finite_mat(FutMat m) {
    for (size_t i = 0; i < m.rows * m.cols; i++)
        if (!isfinite(m.data[i])) return false;
    return true;
}

bool fut_target_validate(const FutTarget *t, char *err, size_t errsize) {
    if (t->L == 0 || t->H == 0 || t->d == 0 || t->L > FUT_MAX_LAYERS) {
        snprintf(err, errsize, "target needs 1..32 layers, at least one head and width 1 (got L=%zu H=%zu d=%zu)",
                 t->L, t->H, t->d);
        return false;
    }
    for (size_t l = 0; l < t->L; l++)
        for (size_t h = 0; h < t->H; h++) {
            const FutHead *hd = &t->heads[l * t->H + h];
            size_t dk = hd->wq.cols, dv = hd->wv.cols;
            if (hd->wq.rows != t->d || hd->wk.rows != t->d || hd->wk.cols != dk || dk == 0 ||
                hd->wv.rows != t->d || dv == 0 || hd->wo.rows != dv || hd->wo.cols != t->d) {
                snprintf(err, errsize,
                         "layer %zu head %zu: shapes must be W_Q, W_K d x dk, W_V d x dv, W_O dv x d "
                         "with d = %zu (got %zux%zu, %zux%zu, %zux%zu, %zux%zu)",
                         l, h, t->d, hd->wq.rows, hd->wq.cols, hd->wk.rows, hd->wk.cols, hd->wv.rows,
                         hd->wv.cols, hd->wo.rows, hd->wo.cols);
                return false;
            }
            if (!finite_mat(hd->wq) || !finite_mat(hd->wk) || !finite_mat(hd->wv) || !finite_mat(hd->wo)) {
                snprintf(err, errsize, "layer %zu head %zu: weights must be finite", l, h);
                return false;
            }
        }
    return true;
}

FutMat fut_target_forward(Arena *a, const FutTarget *t, FutMat X) {
    for (size_t l = 0; l < t->L; l++) {
        FutMat Xn = t->residual ? fut_mat_copy(a, X) : fut_mat_new(a, X.rows, X.cols);
        for (size_t h = 0; h < t->H; h++) {
            const FutHead *hd = &t->heads[l * t->H + h];
            FutMat Q = fut_mat_mul(a, X, false, hd->wq, false);
            FutMat K = fut_mat_mul(a, X, false, hd->wk, false);
            FutMat S = fut_mat_mul(a, Q, false, K, true);
            double scale = 1.0 / sqrt((double)hd->wq.cols);
            for (size_t i = 0; i < S.rows * S.cols; i++) S.data[i] *= scale;
            fut_softmax_rows(&S, t->causal);
            FutMat V = fut_mat_mul(a, X, false, hd->wv, false);
            FutMat O = fut_mat_mul(a, S, false, V, false);
            fut_mat_mul_acc(&Xn, 1.0, O, hd->wo);
        }
        X = Xn;
    }
    return X;
}

bool fut_program_from_target(Arena *a, const FutTarget *t, size_t L, size_t H, size_t d,
                             bool backbone_residual, FutProgram *out, char *err, size_t errsize) {
    if (t->d > d) {
        snprintf(err, errsize, "target too large: width %zu exceeds the backbone's block width %zu", t->d, d);
        return false;
    }
    if (t->H > H) {
        snprintf(err, errsize, "target too large: %zu heads per layer, the backbone simulates at most %zu", t->H, H);
        return false;
    }
    if (t->L > L) {
        snprintf(err, errsize, "target too large: %zu layers, the backbone simulates at most %zu", t->L, L);
        return false;
    }
    if (t->residual && !backbone_residual) {
        snprintf(err, errsize, "target has residual connections but the backbone has none "
                               "(build the backbone with --residual)");
        return false;
    }
    if (t->L < L && !backbone_residual) {
        snprintf(err, errsize, "target has %zu layers but this backbone (no residual connections) simulates "
                               "exactly %zu: a layer cannot be skipped without the identity path",
                 t->L, L);
        return false;
    }
    out->L = L;
    out->H = H;
    out->d = d;
    out->d_in = t->d;
    out->causal = t->causal;
    out->A = ARENA_ARRAY(a, FutMat, L * H);
    out->B = ARENA_ARRAY(a, FutMat, L * H);
    out->bid = ARENA_ARRAY(a, double, L);
    for (size_t l = 0; l < L; l++) {
        out->bid[l] = (l < t->L && !t->residual) ? 0.0 : 1.0;
        for (size_t h = 0; h < H; h++) {
            FutMat A = fut_mat_new(a, d, d), B = fut_mat_new(a, d, d);
            if (l < t->L && h < t->H) {
                const FutHead *hd = &t->heads[l * t->H + h];
                FutMat a0 = fut_mat_mul(a, hd->wq, false, hd->wk, true);
                FutMat b0 = fut_mat_mul(a, hd->wv, false, hd->wo, false);
                double scale = 1.0 / sqrt((double)hd->wq.cols);
                for (size_t i = 0; i < t->d; i++)
                    for (size_t j = 0; j < t->d; j++) {
                        FUT_AT(A, i, j) = scale * FUT_AT(a0, i, j);
                        FUT_AT(B, i, j) = FUT_AT(b0, i, j);
                    }
            }
            out->A[l * H + h] = A;
            out->B[l * H + h] = B;
        }
    }
    return true;
}

FutMat fut_program_path(Arena *a, const FutProgram *p, const size_t *w, size_t k) {
    FutMat C = fut_mat_identity(a, p->d);
    for (size_t l = 0; l < k; l++) {
        if (w[l] == p->H) { /* identity letter */
            for (size_t i = 0; i < p->d * p->d; i++) C.data[i] *= p->bid[l];
        } else {
            C = fut_mat_mul(a, C, false, p->B[l * p->H + w[l]], false);
        }
    }
    return C;
}
