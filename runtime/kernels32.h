/* The inner loops of the float32 forward pass (runtime/forward32.h): the kernels of
 * runtime/kernels.h with float operands, weights and results.
 *
 * The arithmetic of one element is fixed as in float64: acc = +0.0f, then acc = fmaf(w_k, x_k,
 * acc) over the column's entries in ascending row order (one float32 rounding each), then the
 * epilogue with one float32 rounding per operation. The AVX-512 (16 lanes) and AVX2 (8 lanes,
 * runtime/kernels_avx2.h) versions and the one-element-at-a-time references agree bit for bit;
 * other processors run the references. */
#ifndef RASPCC_RUNTIME_KERNELS32_H
#define RASPCC_RUNTIME_KERNELS32_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"

/* One column's stored entries in float32: rows strictly increasing (those of the float64
 * column it was rounded from). */
typedef struct MatrixColumn32 {
    uint32_t n;
    const uint32_t *row;
    const float *val;
} MatrixColumn32;

/* kernel_columns in float32: for each j < n_cols, column c = which[j] (which NULL: c = j), line
 * c of out (out + c * out_ld) gets, for rows [0, len) (len a multiple of 8), the chain of that
 * column's entries over the panel `in` (line r - base of `in` for row r) then the epilogue with
 * bias[c] (bias NULL: 0). With `init` (KERNEL_STORE only), each chain starts from line c of
 * init (init_ld apart; init may equal out) instead of +0.0f: a chain continued over a later
 * range of entries, the same arithmetic as one chain. */
void kernel32_columns(const MatrixColumn32 *cols, const uint32_t *which, size_t n_cols, const float *in, size_t base,
                      size_t ld, size_t len, KernelEpilogue e, const float *bias, const float *init, size_t init_ld,
                      float *out, size_t out_ld);
/* Its one-element-at-a-time reference (fmaf), for tests and processors without AVX-512. */
void kernel32_columns_scalar(const MatrixColumn32 *cols, const uint32_t *which, size_t n_cols, const float *in,
                             size_t base, size_t ld, size_t len, KernelEpilogue e, const float *bias,
                             const float *init, size_t init_ld, float *out, size_t out_ld);

/* out[i] = out[i] + y[i] for i < len. */
void kernel32_add(const float *y, size_t len, float *out);

/* Average-hard selection over float scores S[0..n) (n >= 1): the keys j with !(S[j] < max -
 * tol), the comparison made in float64 (every float is a double: no rounding but the
 * threshold's), ascending, into sel; returns how many. */
size_t kernel32_select(const float *S, size_t n, double tol, uint32_t *sel);

/* kernel_peak_flops in float32: the peak of the instruction set kernel32_columns uses on this
 * processor (AVX-512: 16 lanes, AVX2: 8; otherwise the scalar fmaf loop). */
double kernel32_peak_flops(double (*clock_s)(void), double seconds, double *checksum);

#endif
