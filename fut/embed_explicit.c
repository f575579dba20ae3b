/* The explicit embedding of the sparse and looped backbones: every node w of the level layout
 * (fut/layout.h) gets its blocks K_w = O_w = C_w and Q_{w,h} = C_w A_{k+1,h}.
 *
 * The sparse residual backbone has the plain residual Y_l = Y_{l-1} + sum_h P_lh Y_{l-1} D_lh,
 * so after k layers node q carries G_q X e_q with G_q = prod_l (I + P_{l,q_l}) over its head
 * letters: the sum over q of G_q X e_q is sum_p P_p X F(p) with F(p) = sum of e_q over the q
 * that agree with p on p's head letters. Setting F(p) = C_p (times A) and inverting on the
 * product of "identity below every head" posets gives
 *   e_q = sum over p that agree with q on q's head letters, of (-1)^{#letters where q has the
 *         identity and p a head} F(p).
 * The looped residual backbone shifts the identity subtree like a head, so it needs no
 * inversion. */
#include "fut/fut.h"
#include "fut/layout.h"

#include <stdio.h>
#include <string.h>

/* F(p) for slot s at level k: C_p (s == 0) or C_p A_{k+1, s-1}. */
static FutMat slot_value(Arena *a, const FutProgram *p, const size_t *w, size_t k, size_t s) {
    FutMat C = fut_program_path(a, p, w, k);
    if (s == 0) return C;
    return fut_mat_mul(a, C, false, p->A[k * p->H + (s - 1)], false);
}

static void add_block(FutMat *E, size_t blk, double sign, FutMat V) {
    for (size_t i = 0; i < V.rows; i++)
        for (size_t j = 0; j < V.cols; j++) FUT_AT(*E, i, blk * V.cols + j) += sign * FUT_AT(V, i, j);
}

bool fut_embed_explicit(Arena *a, const FutBackbone *b, const FutProgram *p, FutMat *E, char *err,
                        size_t errsize) {
    if (b->kind == FUT_RANDOM) {
        snprintf(err, errsize, "a random backbone has no explicit embedding: use the solver");
        return false;
    }
    if (p->L != b->L || p->H != b->H || p->d != b->d) {
        snprintf(err, errsize, "internal: program shape does not match the backbone");
        return false;
    }
    bool moebius = b->kind == FUT_SPARSE && b->residual;
    FutLayout y = {b->L, b->H, fut_alphabet(b->H, b->residual), b->d};
    FutMat full = fut_mat_new(a, b->d, b->m);
    size_t w[FUT_MAX_LAYERS], pw[FUT_MAX_LAYERS], free_pos[FUT_MAX_LAYERS];
    for (size_t k = 0; k <= b->L; k++) {
        size_t nodes = fut_layout_pow(y.W, k);
        for (size_t i = 0; i < nodes; i++) {
            fut_layout_word(&y, k, i, w);
            size_t nfree = 0;
            if (moebius)
                for (size_t l = 0; l < k; l++)
                    if (w[l] == b->H) free_pos[nfree++] = l;
            size_t combos = fut_layout_pow(y.W, nfree);
            for (size_t s = 0; s < fut_layout_slots(&y, k); s++) {
                size_t blk = fut_layout_block(&y, k, i, s);
                for (size_t c = 0; c < combos; c++) {
                    memcpy(pw, w, k * sizeof(size_t));
                    size_t rest = c, flips = 0;
                    for (size_t f = 0; f < nfree; f++) {
                        pw[free_pos[f]] = rest % y.W;
                        rest /= y.W;
                        if (pw[free_pos[f]] != b->H) flips++;
                    }
                    add_block(&full, blk, (flips & 1) ? -1.0 : 1.0, slot_value(a, p, pw, k, s));
                }
            }
        }
    }
    *E = fut_mat_new(a, p->d_in, b->m);
    memcpy(E->data, full.data, p->d_in * b->m * sizeof(double));
    return true;
}
