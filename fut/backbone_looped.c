/* The looped (weight-tied) {0,1} backbone: one R_Q, R_K, R_V per head shared by every layer.
 * Same level layout as the sparse tree (fut/layout.h), but each layer reads the root (level 0)
 * and shifts every level down by one: R_V of head h maps slot s of node (h, w') at level k to
 * slot s of node w' at level k-1, so after layer l the nodes of level l sit at level 0 and the
 * contributions of the H heads merge there, which is exactly the sum over paths the target
 * computes. One head: R_V shifts the blocks by two each layer.
 *   R_Q(h) = root query slot 1+h, R_K(h) = root key slot 0, U = root slot 0.
 * Residual: a weight-tied backbone with the plain identity residual cannot simulate an untied
 * residual target (docs/fut.md proves it), so the residual backbone's skip connection carries
 * the fixed {0,1} map S that shifts the identity letter's subtree like a head would:
 * Y_l = Y_{l-1} S + sum_h attention. */
#include "fut/fut.h"
#include "fut/layout.h"

#include <stdio.h>

static FutMat shift_map(Arena *a, const FutLayout *y, size_t m, size_t letter) {
    FutMat rv = fut_mat_new(a, m, m);
    for (size_t k = 1; k <= y->L; k++) {
        size_t sub = fut_layout_pow(y->W, k - 1);
        for (size_t i2 = 0; i2 < sub; i2++) {
            size_t src_node = letter * sub + i2;
            for (size_t s = 0; s < fut_layout_slots(y, k); s++) {
                size_t src = fut_layout_block(y, k, src_node, s), dst = fut_layout_block(y, k - 1, i2, s);
                for (size_t c = 0; c < y->d; c++) FUT_AT(rv, src * y->d + c, dst * y->d + c) = 1.0;
            }
        }
    }
    return rv;
}

bool fut_backbone_looped(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         FutBackbone *out, char *err, size_t errsize) {
    size_t m = fut_sparse_width(L, H, d, residual);
    if (L == 0 || L > FUT_MAX_LAYERS || H == 0 || d == 0 || m == 0 || m > 20000) {
        snprintf(err, errsize, "looped backbone L=%zu H=%zu d=%zu: width m=%zu out of range (need L,H,d >= 1, m <= 20000)",
                 L, H, d, m);
        return false;
    }
    FutLayout y = {L, H, fut_alphabet(H, residual), d};
    *out = (FutBackbone){.kind = FUT_LOOPED, .L = L, .H = H, .d = d, .m = m, .residual = residual,
                         .causal = causal, .tied = true};
    out->rq = ARENA_ARRAY(a, FutMat, L * H);
    out->rk = ARENA_ARRAY(a, FutMat, L * H);
    out->rv = ARENA_ARRAY(a, FutMat, L * H);
    for (size_t h = 0; h < H; h++) {
        FutMat rq = fut_mat_new(a, m, d), rk = fut_mat_new(a, m, d);
        for (size_t c = 0; c < d; c++) {
            FUT_AT(rq, fut_layout_block(&y, 0, 0, 1 + h) * d + c, c) = 1.0;
            FUT_AT(rk, fut_layout_block(&y, 0, 0, 0) * d + c, c) = 1.0;
        }
        FutMat rv = shift_map(a, &y, m, h);
        for (size_t l = 0; l < L; l++) {
            out->rq[l * H + h] = rq;
            out->rk[l * H + h] = rk;
            out->rv[l * H + h] = rv;
        }
    }
    if (residual) {
        FutMat s = shift_map(a, &y, m, H);
        out->skip = ARENA_ARRAY(a, FutMat, L);
        for (size_t l = 0; l < L; l++) out->skip[l] = s;
    }
    out->u = fut_mat_new(a, m, d);
    for (size_t c = 0; c < d; c++) FUT_AT(out->u, fut_layout_block(&y, 0, 0, 0) * d + c, c) = 1.0;
    return true;
}
