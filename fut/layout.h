/* Block layout shared by the sparse and looped backbones (internal to fut/).
 *
 * The embedding is a sequence of levels k = 0..L. Level k holds one node per word w of length k
 * over W letters (W = H, plus the identity letter H for residual backbones), in base-W order
 * with w_1 most significant. A node of level k < L has H+1 slots: slot 0 is its key block
 * K_w = C_w, slot 1+h its query block Q_{w,h} = C_w A_{k+1,h}; a leaf (level L) has one slot,
 * its output block O_w = C_w. Every slot is one block of d columns. */
#ifndef RASPCC_FUT_LAYOUT_H
#define RASPCC_FUT_LAYOUT_H

#include <stddef.h>

typedef struct FutLayout {
    size_t L, H, W, d;
} FutLayout;

static inline size_t fut_layout_pow(size_t W, size_t k) {
    size_t p = 1;
    while (k--) p *= W;
    return p;
}
static inline size_t fut_layout_slots(const FutLayout *y, size_t k) { return k < y->L ? y->H + 1 : 1; }
/* First block of level k. */
static inline size_t fut_layout_level(const FutLayout *y, size_t k) {
    size_t s = 0;
    for (size_t j = 0; j < k; j++) s += (y->H + 1) * fut_layout_pow(y->W, j);
    return s;
}
/* Block index of slot s of node i at level k. */
static inline size_t fut_layout_block(const FutLayout *y, size_t k, size_t i, size_t s) {
    return fut_layout_level(y, k) + i * fut_layout_slots(y, k) + s;
}
/* Letter number l (1-based, l <= k) of the word of node i at level k. */
static inline size_t fut_layout_letter(const FutLayout *y, size_t k, size_t i, size_t l) {
    return (i / fut_layout_pow(y->W, k - l)) % y->W;
}
/* Writes the k letters of node i at level k into w. */
static inline void fut_layout_word(const FutLayout *y, size_t k, size_t i, size_t *w) {
    for (size_t l = 1; l <= k; l++) w[l - 1] = fut_layout_letter(y, k, i, l);
}

#endif
