/* The AVX-512 versions of the kernels of runtime/kernels.h (8 doubles per register);
 * runtime/kernels.c dispatches to them when kernel_isa() is KERNEL_AVX512.
 *
 * Each computes exactly what its kernels.h contract states, with the same one rounding per
 * operation in the same order as the scalar reference: the same bits. A masked operation keeps
 * the other lanes' bits as they were (where runtime/kernels_avx2.c blends with a compare mask).
 * Callable only on a processor with AVX-512F; on other targets this file compiles to nothing. */
#ifndef RASPCC_RUNTIME_KERNELS_AVX512_H
#define RASPCC_RUNTIME_KERNELS_AVX512_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define KERNEL_HAVE_AVX512 1

/* kernel_chain. */
void kernel_avx512_chain(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                         size_t len, const double *init, double *out);
/* The epilogues of kernel_chain_to: out[i] = e(c[i]) for i < len (a multiple of 8). */
void kernel_avx512_epilogue(const double *c, size_t len, KernelEpilogue e, double bias, double *out);
/* kernel_columns. */
void kernel_avx512_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                           size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                           size_t out_ld);
/* kernel_fan_out. */
void kernel_avx512_fan_out(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units,
                           size_t n_units, double *out, size_t out_ld);
/* kernel_gather_keys after the counts are zeroed. */
void kernel_avx512_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows,
                               const KeyEntries *e);
/* kernel_count_nonzero. */
size_t kernel_avx512_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows);
/* kernel_scores. */
void kernel_avx512_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines,
                          size_t o, size_t lanes, double *S);
/* kernel_attend (key_scratch and mask_scratch as kernels.h states). */
void kernel_avx512_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld, size_t dv,
                          double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch);
/* kernel_one_hot. */
void kernel_avx512_one_hot(const double *lines, size_t ld, size_t count, size_t rows, double tol, uint32_t *hot);
/* kernel_peak_flops' loop: 12 independent FMA chains of 8 doubles, iters times; their sum. */
double kernel_avx512_fma_loop(size_t iters);
#endif

#endif
