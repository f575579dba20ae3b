/* The sparse {0,1} backbone: one block set per node of the tree of attention paths
 * (fut/layout.h). Layer l, head h:
 *   R_Q sums the query blocks Q_{w,h} of every node w of level l-1,
 *   R_K sums the key blocks K_w of every node of level l-1,
 *   R_V is the diagonal mask keeping the nodes of level >= l whose l-th letter is h;
 * U sums the leaves' output blocks. A residual backbone has the plain residual Y + attention:
 * a node whose l-th letter is the identity is carried by the residual only, and the embedding
 * undoes the extra identity terms by Moebius inversion (embed_explicit.c). */
#include "fut/fut.h"
#include "fut/layout.h"

#include <stdio.h>

static void put_block(FutMat *M, size_t row_block, size_t col_block, size_t d) {
    for (size_t c = 0; c < d; c++) FUT_AT(*M, row_block * d + c, col_block * d + c) = 1.0;
}

bool fut_backbone_sparse(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         FutBackbone *out, char *err, size_t errsize) {
    size_t m = fut_sparse_width(L, H, d, residual);
    if (L == 0 || L > FUT_MAX_LAYERS || H == 0 || d == 0 || m == 0 || m > 20000) {
        snprintf(err, errsize, "sparse backbone L=%zu H=%zu d=%zu: width m=%zu out of range (need L,H,d >= 1, m <= 20000)",
                 L, H, d, m);
        return false;
    }
    FutLayout y = {L, H, fut_alphabet(H, residual), d};
    *out = (FutBackbone){.kind = FUT_SPARSE, .L = L, .H = H, .d = d, .m = m, .residual = residual,
                         .causal = causal};
    out->rq = ARENA_ARRAY(a, FutMat, L * H);
    out->rk = ARENA_ARRAY(a, FutMat, L * H);
    out->rv = ARENA_ARRAY(a, FutMat, L * H);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < H; h++) {
            FutMat rq = fut_mat_new(a, m, d), rk = fut_mat_new(a, m, d), rv = fut_mat_new(a, m, m);
            size_t nodes = fut_layout_pow(y.W, l);
            for (size_t i = 0; i < nodes; i++) {
                put_block(&rq, fut_layout_block(&y, l, i, 1 + h), 0, d);
                put_block(&rk, fut_layout_block(&y, l, i, 0), 0, d);
            }
            for (size_t k = l + 1; k <= L; k++) {
                size_t nk = fut_layout_pow(y.W, k);
                for (size_t i = 0; i < nk; i++) {
                    if (fut_layout_letter(&y, k, i, l + 1) != h) continue;
                    for (size_t s = 0; s < fut_layout_slots(&y, k); s++) {
                        size_t blk = fut_layout_block(&y, k, i, s);
                        put_block(&rv, blk, blk, d);
                    }
                }
            }
            out->rq[l * H + h] = rq;
            out->rk[l * H + h] = rk;
            out->rv[l * H + h] = rv;
        }
    out->u = fut_mat_new(a, m, d);
    for (size_t i = 0; i < fut_layout_pow(y.W, L); i++) put_block(&out->u, fut_layout_block(&y, L, i, 0), 0, d);
    return true;
}
