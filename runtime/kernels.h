/* The inner loops of the forward pass: fused multiply-add chains over the stored entries of one
 * weight column, applied to many residual rows at once.
 *
 * Operands are feature-major: a panel holds one feature (residual dim, hidden unit, score
 * column) per line of `ld` doubles, one residual row (a position of some sequence of the batch)
 * per element, so the rows of a block are contiguous and a chain runs over whole SIMD vectors.
 *
 * The arithmetic of one output element is fixed, whatever the block, the batch or the
 * instruction set: acc = +0.0, then acc = fma(w_k, x_k, acc) for the entries k of the column in
 * ascending row order (one rounding per entry), which is what a BLAS dgemm micro-kernel does for
 * one element when the inner dimension fits one of its blocks. So a row's result never depends
 * on which other rows share its block or batch, and the AVX-512, AVX2 and scalar versions agree
 * bit for bit (C99 fma() rounds once, as vfmadd does). */
#ifndef RASPCC_RUNTIME_KERNELS_H
#define RASPCC_RUNTIME_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/matrix.h"

/* The instruction sets the kernels come in, all giving the same bits: every kernel_X below runs
 * in kernel_isa(), and kernel_X_isa in a given one (at most kernel_isa(); KERNEL_SCALAR is the
 * one-element-at-a-time reference), which the tests compare. */
typedef enum KernelIsa { KERNEL_SCALAR, KERNEL_AVX2, KERNEL_AVX512 } KernelIsa;
/* The best instruction set this processor has (what kernel_chain uses), and its name. */
KernelIsa kernel_isa(void);
const char *kernel_isa_name(KernelIsa isa);

/* Rows per block: out[i] for i in [0, KERNEL_BLOCK) at a time (a multiple of every vector width). */
#define KERNEL_BLOCK 64

/* out[i] = chain over k < n of (val[k], in[(row[k] - base) * ld + i]), for i in [0, len); len a
 * multiple of 8 (fastest at KERNEL_BLOCK); every row[k] >= base. With `init`, the chain starts from
 * init[i] instead of +0.0 (a chain continued over a later range of entries: the same arithmetic
 * as one chain); init may equal out. */
void kernel_chain(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                  size_t len, const double *init, double *out);

/* What becomes of a block's chains c[i] (one rounding each, in this order):
 *   KERNEL_STORE  out[i] = c[i]
 *   KERNEL_ADD    out[i] = out[i] + c[i]                 (X += a product)
 *   KERNEL_FRESH  out[i] = c[i] + 0.0                    (X += a product where X is +0.0: the same
 *                                                         bits, out not read: runtime/write_plan.h)
 *   KERNEL_RELU   out[i] = max(c[i] + bias, +0.0)        (ReLU(x W1 + b1); a NaN gives +0.0)
 *   KERNEL_GATE   out[i] = out[i] * (c[i] + bias)        (a hidden unit times its gate) */
typedef enum KernelEpilogue { KERNEL_STORE, KERNEL_ADD, KERNEL_FRESH, KERNEL_RELU, KERNEL_GATE } KernelEpilogue;

/* kernel_chain without init, then the epilogue into out. */
void kernel_chain_to(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                     size_t len, KernelEpilogue e, double bias, double *out);

/* The epilogue e of chains already computed: out[i] gets e of c[i] for i < len (a multiple of 8),
 * as kernel_chain_to gives it. */
void kernel_epilogue(const double *c, size_t len, KernelEpilogue e, double bias, double *out);
void kernel_epilogue_isa(KernelIsa isa, const double *c, size_t len, KernelEpilogue e, double bias, double *out);

/* For each j < n_cols, column c = which[j] (which NULL: c = j) of a matrix stored by column
 * (cols[c]: rows ascending, runtime/matrix.h): line c of out (out + c * out_ld) gets, for rows
 * [0, len) (a multiple of 8), the chain of that column's entries over the panel `in` followed by
 * the epilogue with bias[c] (bias NULL: 0). The same arithmetic as kernel_chain_to per column. */
void kernel_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in, size_t base,
                    size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out, size_t out_ld);
void kernel_columns_isa(KernelIsa isa, const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                        size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                        size_t out_ld);

/* One chain's values c[i] (i < len, a multiple of 8) taken by several outputs: for each j <
 * n_units, line u = units[j] of out (out + u * out_ld) gets the epilogue with bias[u] of c, as
 * kernel_columns gives it to a column whose chain is c (hidden units whose W1 columns are equal). */
void kernel_fan_out(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units,
                    size_t n_units, double *out, size_t out_ld);
void kernel_fan_out_isa(KernelIsa isa, const double *c, size_t len, KernelEpilogue e, const double *bias,
                        const uint32_t *units, size_t n_units, double *out, size_t out_ld);

/* A sequence's keys by their non-zero entries: key j has count[j] entries, dims dim[j * stride ..]
 * (ascending) and values val[j * stride ..]. */
typedef struct KeyEntries {
    size_t stride;
    uint32_t *count, *dim;
    double *val;
} KeyEntries;

/* The non-zero entries of `rows` keys from a panel K given by its lines (e->stride of them: key j's
 * entry c is lines[c][o + j] * scale[c], scale NULL meaning 1.0; a line may be any array, e.g. a
 * line of the residual itself): each non-zero line element's product, where that is not zero. */
void kernel_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows, const KeyEntries *e);
void kernel_gather_keys_isa(KernelIsa isa, const double *const *lines, const double *scale, size_t o, size_t rows,
                            const KeyEntries *e);

/* Key k's next entry (c, v) unless v is zero (a NaN is not); the count read once (a store to dim
 * may alias it, which would make the compiler read it again). */
static inline void kernel_append_entry(const KeyEntries *e, size_t k, uint32_t c, double v) {
    if (v == 0.0) return;
    uint32_t n = e->count[k];
    e->dim[k * e->stride + n] = c;
    e->val[k * e->stride + n] = v;
    e->count[k] = n + 1;
}

/* The entries line[c][o + j] (c < n_lines, j < rows) that are not zero. */
size_t kernel_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows);
size_t kernel_count_nonzero_isa(KernelIsa isa, const double *const *line, size_t o, size_t n_lines, size_t rows);

/* Scores of keys [0, n_keys) for `lanes` (<= KERNEL_BLOCK) queries, one query per lane, query q's
 * entry c being Q[c][q] = lines[c][o + q]:
 * S[j * KERNEL_BLOCK + q] = +0.0, then acc = fma(val, Q[dim][q], acc) over key j's entries
 * in order, skipping a zero query entry: a product with a zero factor is skipped, so the score is
 * the dense chain over every dim for finite numbers, whichever side is stored. Q is read only at
 * lanes < lanes. With causal_first != KERNEL_NOT_CAUSAL (lane q is row causal_first + q and sees
 * keys j <= causal_first + q), key j's scores may be left unwritten at the lanes below
 * j - causal_first rounded down to a multiple of 8: lanes that do not see it, and in groups of 8
 * that kernel_attend does not read it for (a causal block does half the work). */
#define KERNEL_NOT_CAUSAL SIZE_MAX
void kernel_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines, size_t o,
                   size_t lanes, double *S);
void kernel_scores_isa(KernelIsa isa, const KeyEntries *e, size_t n_keys, size_t causal_first,
                       const double *const *lines, size_t o, size_t lanes, double *S);

/* The first lane kernel_scores writes key j's scores at: lane 0, or for a causal block
 * j - causal_first rounded down to a multiple of 8 (the first group of 8 lanes that sees key j). */
static inline size_t kernel_first_lane(size_t j, size_t causal_first) {
    return causal_first == KERNEL_NOT_CAUSAL || j <= causal_first ? 0 : (j - causal_first) & ~(size_t)7;
}

/* S[j * KERNEL_BLOCK + q] = T[q * KERNEL_BLOCK + j] for q < rows, j < cols (both <= KERNEL_BLOCK,
 * rounded up to 4: tiles of 4 x 4 move whole; both buffers must hold them): scores turned
 * key-major. */
void kernel_transpose(const double *T, size_t rows, size_t cols, double *S);

/* The keys and causal limit of kernel_attend's queries. */
typedef struct AttendKeys {
    size_t n;      /* keys 0 .. n-1; key 0 is BOS */
    bool causal;   /* lane q sees keys j <= first + q only */
    size_t first;  /* the row of lane 0 (causal) */
    double tol;    /* absolute tie tolerance */
    double bos_extra; /* BOS weighs 1 + bos_extra keys in the mean when selected */
} AttendKeys;

/* The last key lane q sees: it sees keys [0, attend_last_key(k, q)]. */
static inline size_t attend_last_key(const AttendKeys *k, size_t q) {
    return k->causal && k->first + q < k->n - 1 ? k->first + q : k->n - 1;
}

/* Average-hard attention for `lanes` (<= KERNEL_BLOCK) queries at once, one per lane:
 * S[j * KERNEL_BLOCK + q] is lane q's score of key j. Lane q takes the greatest score it sees
 * (the first of the greatest, key order; a NaN is never greater), selects the keys j it sees with
 * !(S < max - tol), and writes out[c * out_ld + q] = (extra * V[c][0] + V[c][j1] + V[c][j2] ...) /
 * (ties + extra), the selected keys ascending, one rounding per operation in that order,
 * extra = bos_extra where BOS is selected and 0.0 otherwise; V[c][j] = V[c * v_ld + j], c < dv.
 * Only lanes < lanes of out are written. Scratch: KERNEL_BLOCK / 8 x n bytes and as many uint32. */
void kernel_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld, size_t dv,
                   double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch);
void kernel_attend_isa(KernelIsa isa, const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld,
                       size_t dv, double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch);

void kernel_chain_isa(KernelIsa isa, const uint32_t *row, const double *val, size_t n, const double *in, size_t base,
                      size_t ld, size_t len, const double *init, double *out);

/* One-hot rows of a block of `count` lines (line c at lines + c * ld): for each row j < rows, hot[j]
 * is the c whose entry is within tol of 1.0 when exactly one entry is and no other is farther than
 * tol from 0.0 (a NaN is neither), else KERNEL_NOT_ONE_HOT (runtime/forward.h model_block_one_hot,
 * a row at a time). */
#define KERNEL_NOT_ONE_HOT UINT32_MAX
void kernel_one_hot(const double *lines, size_t ld, size_t count, size_t rows, double tol, uint32_t *hot);
void kernel_one_hot_isa(KernelIsa isa, const double *lines, size_t ld, size_t count, size_t rows, double tol,
                        uint32_t *hot);

/* The machine's peak rate of fused multiply-adds in this instruction set on one core, in FLOP/s
 * (2 per lane per FMA), measured: the best of repeated runs of 12 independent register-resident
 * FMA chains over `seconds` of clock_s (a monotonic clock in seconds). *checksum receives the
 * chains' sum (print or ignore it: it keeps the loop from being optimised away). */
double kernel_peak_flops(double (*clock_s)(void), double seconds, double *checksum);

#endif
