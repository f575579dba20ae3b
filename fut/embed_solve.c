/* The embedding as the solution of a linear system (any backbone; the only way for random).
 *
 * After k layers Y_k = sum_w P_w X E M_w over the words w of length k, with
 * M_w = S_{1,w_1} ... S_{k,w_k}, S_{l,h} = R_V^{l,h} and S_{l,identity} = the skip map (I for the
 * plain residual). Matching every block along every attention path,
 *   E M_w R_Q^{k+1,h} = C_w A_{k+1,h},  E M_w R_K^{k+1,h} = C_w   (|w| = k < L, every head h)
 *   E M_w U = C_w                                                 (|w| = L)
 * makes every score (Y_k R_Q)(Y_k R_K)^T equal X_k A X_k^T and the output Y_L U equal X_L.
 * Stacked: E Phi = Psi with Phi m x N, Psi d x N, N = fut_random_columns(L, H, d, residual).
 * It is solved as Phi^T E^T = Psi^T by LAPACKE_dgelsd (SVD, minimum norm). Every target is
 * programmable iff Phi has rank N, which needs m >= N. */
#include "fut/fut.h"
#include "fut/layout.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* G <- M_w G, applying S_{k,w_k} first. */
static FutMat apply_word(Arena *a, const FutBackbone *b, const size_t *w, size_t k, FutMat G) {
    for (size_t l = k; l-- > 0;) {
        if (w[l] == b->H) {
            if (b->skip) G = fut_mat_mul(a, b->skip[l], false, G, false);
        } else {
            G = fut_mat_mul(a, b->rv[l * b->H + w[l]], false, G, false);
        }
    }
    return G;
}

static void put_cols(FutMat *M, size_t col, FutMat V) {
    for (size_t i = 0; i < V.rows; i++)
        for (size_t j = 0; j < V.cols; j++) FUT_AT(*M, i, col + j) = FUT_AT(V, i, j);
}

bool fut_embed_solve(Arena *a, const FutBackbone *b, const FutProgram *p, bool require_full_rank,
                     FutMat *E, FutSolveInfo *info, char *err, size_t errsize) {
    if (p->L != b->L || p->H != b->H || p->d != b->d) {
        snprintf(err, errsize, "internal: program shape does not match the backbone");
        return false;
    }
    size_t d = b->d, m = b->m, N = fut_random_columns(b->L, b->H, d, b->residual);
    if (N == 0 || N > 50000) {
        snprintf(err, errsize, "matching system too large (N=%zu columns)", N);
        return false;
    }
    if (require_full_rank && m < N) {
        snprintf(err, errsize,
                 "backbone width m=%zu is too small to program every target with L=%zu H=%zu d=%zu%s: "
                 "the matching system has N=%zu columns (2H*d per path of length < L, d per path of "
                 "length L), so m must be at least %zu",
                 m, b->L, b->H, d, b->residual ? " (residual)" : "", N, N);
        return false;
    }
    FutLayout y = {b->L, b->H, fut_alphabet(b->H, b->residual), d};
    FutMat Phi = fut_mat_new(a, m, N), Psi = fut_mat_new(a, d, N);
    size_t col = 0, w[FUT_MAX_LAYERS];
    for (size_t k = 0; k <= b->L; k++) {
        size_t words = fut_layout_pow(y.W, k);
        for (size_t i = 0; i < words; i++) {
            Arena scratch;
            arena_init(&scratch);
            fut_layout_word(&y, k, i, w);
            FutMat C = fut_program_path(&scratch, p, w, k);
            if (k < b->L) {
                for (size_t h = 0; h < b->H; h++) {
                    put_cols(&Phi, col, apply_word(&scratch, b, w, k, b->rq[k * b->H + h]));
                    put_cols(&Psi, col, fut_mat_mul(&scratch, C, false, p->A[k * b->H + h], false));
                    col += d;
                    put_cols(&Phi, col, apply_word(&scratch, b, w, k, b->rk[k * b->H + h]));
                    put_cols(&Psi, col, C);
                    col += d;
                }
            } else {
                put_cols(&Phi, col, apply_word(&scratch, b, w, k, b->u));
                put_cols(&Psi, col, C);
                col += d;
            }
            arena_free(&scratch);
        }
    }
    /* Phi^T (N x m) X = Psi^T (N x d); X (m x d) = E^T. */
    size_t rows_b = N > m ? N : m, ns = N < m ? N : m;
    double *At = ARENA_ARRAY(a, double, N * m);
    double *Bt = ARENA_ARRAY(a, double, rows_b * d);
    double *s = ARENA_ARRAY(a, double, ns);
    for (size_t r = 0; r < m; r++)
        for (size_t c = 0; c < N; c++) At[c * m + r] = FUT_AT(Phi, r, c);
    for (size_t r = 0; r < d; r++)
        for (size_t c = 0; c < N; c++) Bt[c * d + r] = FUT_AT(Psi, r, c);
    lapack_int rank = 0;
    lapack_int rc = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)N, (lapack_int)m, (lapack_int)d, At,
                                   (lapack_int)m, Bt, (lapack_int)d, s, 1e-12, &rank);
    if (rc != 0) {
        snprintf(err, errsize, "dgelsd failed (info %d): the SVD did not converge", (int)rc);
        return false;
    }
    FutMat full = fut_mat_new(a, d, m);
    for (size_t r = 0; r < d; r++)
        for (size_t c = 0; c < m; c++) FUT_AT(full, r, c) = Bt[c * d + r];
    FutMat check = fut_mat_mul(a, full, false, Phi, false);
    double res = fut_mat_max_abs_diff(check, Psi), scale = fut_mat_max_abs(Psi);
    FutSolveInfo inf = {.columns = N, .rank = (size_t)rank,
                        .cond = (ns && s[ns - 1] > 0 && (size_t)rank == ns) ? s[0] / s[ns - 1] : INFINITY,
                        .residual = res};
    if (info) *info = inf;
    if (require_full_rank && (size_t)rank < N) {
        snprintf(err, errsize,
                 "backbone is rank-deficient: the matching system has rank %zu < N=%zu columns "
                 "(m=%zu; sigma_max=%.3g, sigma_min=%.3g), so some targets cannot be programmed; "
                 "rebuild it with another seed or a larger m (at least %zu)",
                 (size_t)rank, N, m, ns ? s[0] : 0.0, ns ? s[ns - 1] : 0.0, N);
        return false;
    }
    if (!(res <= 1e-8 * (1.0 + scale))) {
        snprintf(err, errsize, "the matching system E Phi = Psi has no exact solution (residual %.3g)", res);
        return false;
    }
    *E = fut_mat_new(a, p->d_in, m);
    memcpy(E->data, full.data, p->d_in * m * sizeof(double));
    return true;
}

bool fut_embed(Arena *a, const FutBackbone *b, const FutTarget *t, FutMat *E, FutSolveInfo *info,
               char *err, size_t errsize) {
    if (!fut_target_validate(t, err, errsize) || !fut_backbone_validate(b, err, errsize)) return false;
    if (t->causal != b->causal) {
        snprintf(err, errsize, "target is %s but the backbone is %s (build the backbone %s --causal)",
                 t->causal ? "causal" : "not causal", b->causal ? "causal" : "not causal",
                 t->causal ? "with" : "without");
        return false;
    }
    FutProgram p;
    if (!fut_program_from_target(a, t, b->L, b->H, b->d, b->residual, &p, err, errsize)) return false;
    if (b->kind == FUT_RANDOM) return fut_embed_solve(a, b, &p, true, E, info, err, errsize);
    if (info) *info = (FutSolveInfo){0};
    return fut_embed_explicit(a, b, &p, E, err, errsize);
}
