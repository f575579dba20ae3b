/* The Gaussian backbone: every fixed weight drawn N(0, 1/m) from a seed (R_Q, R_K: m x d per
 * layer and head, R_V: m x m, U: m x d; plain residual when residual). Universality is generic:
 * with m >= N (fut_random_columns) the matching system of embed_solve.c has full column rank
 * with probability 1, which fut_embed_solve checks numerically. */
#include "fut/fut.h"

#include <math.h>
#include <stdio.h>

static FutMat gauss(Arena *a, FutRng *r, size_t rows, size_t cols, double sd) {
    FutMat m = fut_mat_new(a, rows, cols);
    for (size_t i = 0; i < rows * cols; i++) m.data[i] = sd * fut_rng_gauss(r);
    return m;
}

bool fut_backbone_random(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         size_t m, uint64_t seed, FutBackbone *out, char *err, size_t errsize) {
    size_t n = fut_random_columns(L, H, d, residual);
    if (L == 0 || L > FUT_MAX_LAYERS || H == 0 || d == 0 || n == 0 || n > 20000) {
        snprintf(err, errsize, "random backbone L=%zu H=%zu d=%zu: N=%zu out of range (need L,H,d >= 1, N <= 20000)",
                 L, H, d, n);
        return false;
    }
    if (m == 0) m = n + (n + 3) / 4;
    if (m > 25000) {
        snprintf(err, errsize, "random backbone width m=%zu too large (limit 25000)", m);
        return false;
    }
    *out = (FutBackbone){.kind = FUT_RANDOM, .L = L, .H = H, .d = d, .m = m, .residual = residual,
                         .causal = causal, .seed = seed};
    FutRng rng;
    fut_rng_seed(&rng, seed);
    double sd = 1.0 / sqrt((double)m);
    out->rq = ARENA_ARRAY(a, FutMat, L * H);
    out->rk = ARENA_ARRAY(a, FutMat, L * H);
    out->rv = ARENA_ARRAY(a, FutMat, L * H);
    for (size_t i = 0; i < L * H; i++) {
        out->rq[i] = gauss(a, &rng, m, d, sd);
        out->rk[i] = gauss(a, &rng, m, d, sd);
        out->rv[i] = gauss(a, &rng, m, m, sd);
    }
    out->u = gauss(a, &rng, m, d, sd);
    return true;
}
