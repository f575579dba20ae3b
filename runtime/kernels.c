#include "runtime/kernels.h"

#include "runtime/kernels_avx2.h"
#include "runtime/matrix.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KERNEL_X86 1
#endif

/* The reference: one element at a time. */
static void chain_scalar(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld, size_t len,
                         const double *init, double *out) {
    for (size_t i = 0; i < len; i++) {
        double acc = init ? init[i] : 0.0;
        for (size_t k = 0; k < n; k++) acc = fma(val[k], in[(size_t)(row[k] - base) * ld + i], acc);
        out[i] = acc;
    }
}

#ifdef KERNEL_X86
__attribute__((target("avx512f"))) static void chain_avx512(const uint32_t *row, const double *val, size_t n,
                                                             const double *in, size_t base, size_t ld, size_t len,
                                                             const double *init, double *out) {
    if (len == KERNEL_BLOCK) { /* the whole block in 8 registers */
        __m512d a0, a1, a2, a3, a4, a5, a6, a7;
        if (init) {
            a0 = _mm512_loadu_pd(init), a1 = _mm512_loadu_pd(init + 8), a2 = _mm512_loadu_pd(init + 16);
            a3 = _mm512_loadu_pd(init + 24), a4 = _mm512_loadu_pd(init + 32), a5 = _mm512_loadu_pd(init + 40);
            a6 = _mm512_loadu_pd(init + 48), a7 = _mm512_loadu_pd(init + 56);
        } else {
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _mm512_setzero_pd();
        }
        for (size_t k = 0; k < n; k++) {
            __m512d w = _mm512_set1_pd(val[k]);
            const double *x = in + (size_t)(row[k] - base) * ld;
            a0 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x), a0);
            a1 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 8), a1);
            a2 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 16), a2);
            a3 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 24), a3);
            a4 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 32), a4);
            a5 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 40), a5);
            a6 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 48), a6);
            a7 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 56), a7);
        }
        _mm512_storeu_pd(out, a0), _mm512_storeu_pd(out + 8, a1), _mm512_storeu_pd(out + 16, a2);
        _mm512_storeu_pd(out + 24, a3), _mm512_storeu_pd(out + 32, a4), _mm512_storeu_pd(out + 40, a5);
        _mm512_storeu_pd(out + 48, a6), _mm512_storeu_pd(out + 56, a7);
        return;
    }
    for (size_t i = 0; i < len; i += 8) {
        __m512d a = init ? _mm512_loadu_pd(init + i) : _mm512_setzero_pd();
        for (size_t k = 0; k < n; k++)
            a = _mm512_fmadd_pd(_mm512_set1_pd(val[k]), _mm512_loadu_pd(in + (size_t)(row[k] - base) * ld + i), a);
        _mm512_storeu_pd(out + i, a);
    }
}

#endif

/* Chains (temporary) then the epilogue, 8 rows at a time: vectorised by the compiler or not,
 * each element gets exactly the one rounding per operation stated in kernels.h. */
static void epilogue_scalar(const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
    for (size_t i = 0; i < len; i++) {
        double t;
        switch (e) {
        case KERNEL_STORE: out[i] = c[i]; break;
        case KERNEL_ADD: out[i] = out[i] + c[i]; break;
        case KERNEL_RELU: t = c[i] + bias; out[i] = t > 0.0 ? t : 0.0; break;
        case KERNEL_GATE: out[i] = out[i] * (c[i] + bias); break;
        }
    }
}

#ifdef KERNEL_X86
__attribute__((target("avx512f"))) static void epilogue_avx512(const double *c, size_t len, KernelEpilogue e,
                                                                double bias, double *out) {
    __m512d b = _mm512_set1_pd(bias), zero = _mm512_setzero_pd();
    for (size_t i = 0; i < len; i += 8) {
        __m512d x = _mm512_loadu_pd(c + i);
        switch (e) {
        case KERNEL_STORE: break;
        case KERNEL_ADD: x = _mm512_add_pd(_mm512_loadu_pd(out + i), x); break;
        /* max(t, +0.0) returns its second operand when t is NaN or a zero: t > 0 ? t : +0.0 */
        case KERNEL_RELU: x = _mm512_max_pd(_mm512_add_pd(x, b), zero); break;
        case KERNEL_GATE: x = _mm512_mul_pd(_mm512_loadu_pd(out + i), _mm512_add_pd(x, b)); break;
        }
        _mm512_storeu_pd(out + i, x);
    }
}
#endif

void kernel_chain_to(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                     size_t len, KernelEpilogue e, double bias, double *out) {
    double c[KERNEL_BLOCK];
    for (size_t i0 = 0; i0 < len; i0 += KERNEL_BLOCK) {
        size_t l = len - i0 < KERNEL_BLOCK ? len - i0 : KERNEL_BLOCK;
        KernelIsa isa = kernel_isa();
        kernel_chain_isa(isa, row, val, n, in + i0, base, ld, l, NULL, e == KERNEL_STORE ? out + i0 : c);
        if (e == KERNEL_STORE) continue;
#ifdef KERNEL_X86
        if (isa == KERNEL_AVX512) {
            epilogue_avx512(c, l, e, bias, out + i0);
            continue;
        }
#endif
        epilogue_scalar(c, l, e, bias, out + i0);
    }
}

void kernel_add(const double *y, size_t len, double *out) {
#ifdef KERNEL_X86
    KernelIsa isa = kernel_isa();
    if (isa == KERNEL_AVX512) {
        epilogue_avx512(y, len, KERNEL_ADD, 0.0, out);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_add(y, len, out);
        return;
    }
#endif
    epilogue_scalar(y, len, KERNEL_ADD, 0.0, out);
}

/* ---- many columns per call ---- */

static double epi_scalar(double c, KernelEpilogue e, double bias, double o) {
    double t;
    switch (e) {
    case KERNEL_ADD: return o + c;
    case KERNEL_RELU: t = c + bias; return t > 0.0 ? t : 0.0;
    case KERNEL_GATE: return o * (c + bias);
    case KERNEL_STORE: break;
    }
    return c;
}

static void columns_scalar(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                           size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                           size_t out_ld) {
    for (size_t j = 0; j < n_cols; j++) {
        size_t c = which ? which[j] : j;
        const MatrixColumn *col = &cols[c];
        double b = bias ? bias[c] : 0.0, *o = out + c * out_ld;
        for (size_t i = 0; i < len; i++) {
            double acc = 0.0;
            for (uint32_t k = 0; k < col->n; k++) acc = fma(col->val[k], in[(size_t)(col->row[k] - base) * ld + i], acc);
            o[i] = epi_scalar(acc, e, b, o[i]);
        }
    }
}

#ifdef KERNEL_X86
#define EPI512(acc, o)                                                                                              \
    (e == KERNEL_STORE  ? (acc)                                                                                     \
     : e == KERNEL_ADD  ? _mm512_add_pd(_mm512_loadu_pd(o), (acc))                                                  \
     : e == KERNEL_RELU ? _mm512_max_pd(_mm512_add_pd((acc), b), zero)                                              \
                        : _mm512_mul_pd(_mm512_loadu_pd(o), _mm512_add_pd((acc), b)))

__attribute__((target("avx512f"))) static void columns_avx512(const MatrixColumn *cols, const uint32_t *which,
                                                               size_t n_cols, const double *in, size_t base, size_t ld,
                                                               size_t len, KernelEpilogue e, const double *bias,
                                                               double *out, size_t out_ld) {
    const __m512d zero = _mm512_setzero_pd();
    size_t i0 = 0;
    for (; i0 + 64 <= len; i0 += 64) /* 64 rows in 8 registers */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn *col = &cols[c];
            const __m512d b = _mm512_set1_pd(bias ? bias[c] : 0.0);
            __m512d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
            for (uint32_t k = 0; k < col->n; k++) {
                __m512d w = _mm512_set1_pd(col->val[k]);
                const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
                a0 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x), a0);
                a1 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 8), a1);
                a2 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 16), a2);
                a3 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 24), a3);
                a4 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 32), a4);
                a5 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 40), a5);
                a6 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 48), a6);
                a7 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 56), a7);
            }
            double *o = out + c * out_ld + i0;
            _mm512_storeu_pd(o, EPI512(a0, o));
            _mm512_storeu_pd(o + 8, EPI512(a1, o + 8));
            _mm512_storeu_pd(o + 16, EPI512(a2, o + 16));
            _mm512_storeu_pd(o + 24, EPI512(a3, o + 24));
            _mm512_storeu_pd(o + 32, EPI512(a4, o + 32));
            _mm512_storeu_pd(o + 40, EPI512(a5, o + 40));
            _mm512_storeu_pd(o + 48, EPI512(a6, o + 48));
            _mm512_storeu_pd(o + 56, EPI512(a7, o + 56));
        }
    for (; i0 + 32 <= len; i0 += 32) /* then 32 rows in 4 */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn *col = &cols[c];
            const __m512d b = _mm512_set1_pd(bias ? bias[c] : 0.0);
            __m512d a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            for (uint32_t k = 0; k < col->n; k++) {
                __m512d w = _mm512_set1_pd(col->val[k]);
                const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
                a0 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x), a0);
                a1 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 8), a1);
                a2 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 16), a2);
                a3 = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + 24), a3);
            }
            double *o = out + c * out_ld + i0;
            _mm512_storeu_pd(o, EPI512(a0, o));
            _mm512_storeu_pd(o + 8, EPI512(a1, o + 8));
            _mm512_storeu_pd(o + 16, EPI512(a2, o + 16));
            _mm512_storeu_pd(o + 24, EPI512(a3, o + 24));
        }
    for (; i0 < len; i0 += 8) /* then 8 at a time */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn *col = &cols[c];
            const __m512d b = _mm512_set1_pd(bias ? bias[c] : 0.0);
            __m512d a0 = zero;
            for (uint32_t k = 0; k < col->n; k++)
                a0 = _mm512_fmadd_pd(_mm512_set1_pd(col->val[k]),
                                     _mm512_loadu_pd(in + (size_t)(col->row[k] - base) * ld + i0), a0);
            double *o = out + c * out_ld + i0;
            _mm512_storeu_pd(o, EPI512(a0, o));
        }
}
#endif

void kernel_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in, size_t base,
                    size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out, size_t out_ld) {
    kernel_columns_isa(kernel_isa(), cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
}

void kernel_columns_isa(KernelIsa isa, const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                        size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                        size_t out_ld) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        columns_avx512(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_columns(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
        return;
    }
#endif
    (void)isa;
    columns_scalar(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
}

static void fan_out_scalar(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units,
                           size_t n_units, double *out, size_t out_ld) {
    for (size_t j = 0; j < n_units; j++) {
        double *o = out + (size_t)units[j] * out_ld;
        for (size_t i = 0; i < len; i++) o[i] = epi_scalar(c[i], e, bias[units[j]], o[i]);
    }
}

void kernel_fan_out(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units,
                    size_t n_units, double *out, size_t out_ld) {
    kernel_fan_out_isa(kernel_isa(), c, len, e, bias, units, n_units, out, out_ld);
}

void kernel_fan_out_isa(KernelIsa isa, const double *c, size_t len, KernelEpilogue e, const double *bias,
                        const uint32_t *units, size_t n_units, double *out, size_t out_ld) {
#ifdef KERNEL_X86
    if (isa >= KERNEL_AVX2) { /* AVX-512 machines run the AVX2 loop: the same bits */
        kernel_avx2_fan_out(c, len, e, bias, units, n_units, out, out_ld);
        return;
    }
#endif
    (void)isa;
    fan_out_scalar(c, len, e, bias, units, n_units, out, out_ld);
}

/* ---- attention, one query per lane ---- */

static void scores_scalar(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines,
                          size_t o, size_t lanes, double *S) {
    for (size_t j = 0; j < n_keys; j++) {
        const uint32_t *dim = e->dim + j * e->stride;
        const double *val = e->val + j * e->stride;
        for (size_t i = kernel_first_lane(j, causal_first); i < lanes; i++) {
            double acc = 0.0;
            for (size_t k = 0; k < e->count[j]; k++) {
                double q = lines[dim[k]][o + i];
                if (q != 0.0) acc = fma(val[k], q, acc);
            }
            S[j * KERNEL_BLOCK + i] = acc;
        }
    }
}

#ifdef KERNEL_X86
/* mask3_fmadd keeps acc where q is zero: the skipped product. */
#define SCORE_STEP(a, off)                                                                                         \
    do {                                                                                                           \
        __m512d q = _mm512_loadu_pd(x + (off));                                                                     \
        a = _mm512_mask3_fmadd_pd(w, q, a, _mm512_cmp_pd_mask(q, zero, _CMP_NEQ_UQ));                              \
    } while (0)

__attribute__((target("avx512f"))) static void scores_avx512(const KeyEntries *e, size_t n_keys, size_t causal_first,
                                                              const double *const *lines, size_t o, size_t lanes,
                                                              double *S) {
    const __m512d zero = _mm512_setzero_pd();
    for (size_t j = 0; j < n_keys; j++) {
        const uint32_t *dim = e->dim + j * e->stride;
        const double *val = e->val + j * e->stride;
        double *out = S + j * KERNEL_BLOCK;
        size_t n = e->count[j], i0 = kernel_first_lane(j, causal_first);
        if (lanes == KERNEL_BLOCK && i0 == 0) { /* the whole block in 8 registers */
            __m512d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
            for (size_t k = 0; k < n; k++) {
                __m512d w = _mm512_set1_pd(val[k]);
                const double *x = lines[dim[k]] + o;
                SCORE_STEP(a0, 0);
                SCORE_STEP(a1, 8);
                SCORE_STEP(a2, 16);
                SCORE_STEP(a3, 24);
                SCORE_STEP(a4, 32);
                SCORE_STEP(a5, 40);
                SCORE_STEP(a6, 48);
                SCORE_STEP(a7, 56);
            }
            _mm512_storeu_pd(out, a0), _mm512_storeu_pd(out + 8, a1), _mm512_storeu_pd(out + 16, a2);
            _mm512_storeu_pd(out + 24, a3), _mm512_storeu_pd(out + 32, a4), _mm512_storeu_pd(out + 40, a5);
            _mm512_storeu_pd(out + 48, a6), _mm512_storeu_pd(out + 56, a7);
            continue;
        }
        for (size_t i = i0; i < lanes; i += 8) {
            __mmask8 live = lanes - i >= 8 ? 0xff : (__mmask8)((1u << (lanes - i)) - 1);
            __m512d a = zero;
            for (size_t k = 0; k < n; k++) {
                __m512d q = _mm512_maskz_loadu_pd(live, lines[dim[k]] + o + i);
                a = _mm512_mask3_fmadd_pd(_mm512_set1_pd(val[k]), q, a, _mm512_cmp_pd_mask(q, zero, _CMP_NEQ_UQ));
            }
            _mm512_mask_storeu_pd(out + i, live, a);
        }
    }
}
#undef SCORE_STEP
#endif

void kernel_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines, size_t o,
                   size_t lanes, double *S) {
    kernel_scores_isa(kernel_isa(), e, n_keys, causal_first, lines, o, lanes, S);
}

void kernel_scores_isa(KernelIsa isa, const KeyEntries *e, size_t n_keys, size_t causal_first,
                       const double *const *lines, size_t o, size_t lanes, double *S) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        scores_avx512(e, n_keys, causal_first, lines, o, lanes, S);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_scores(e, n_keys, causal_first, lines, o, lanes, S);
        return;
    }
#endif
    (void)isa;
    scores_scalar(e, n_keys, causal_first, lines, o, lanes, S);
}

static size_t count_nonzero_scalar(const double *const *line, size_t o, size_t n_lines, size_t rows) {
    size_t n = 0;
    for (size_t c = 0; c < n_lines; c++)
        for (size_t j = 0; j < rows; j++) n += line[c][o + j] != 0.0;
    return n;
}

#ifdef KERNEL_X86
__attribute__((target("avx512f"))) static size_t count_nonzero_avx512(const double *const *line, size_t o,
                                                                       size_t n_lines, size_t rows) {
    const __m512d zero = _mm512_setzero_pd();
    size_t n = 0;
    for (size_t c = 0; c < n_lines; c++)
        for (size_t j = 0; j < rows; j += 8) {
            __mmask8 live = rows - j >= 8 ? 0xff : (__mmask8)((1u << (rows - j)) - 1);
            n += (size_t)__builtin_popcount(
                _mm512_mask_cmp_pd_mask(live, _mm512_maskz_loadu_pd(live, line[c] + o + j), zero, _CMP_NEQ_UQ));
        }
    return n;
}
#endif

size_t kernel_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows) {
    return kernel_count_nonzero_isa(kernel_isa(), line, o, n_lines, rows);
}

size_t kernel_count_nonzero_isa(KernelIsa isa, const double *const *line, size_t o, size_t n_lines, size_t rows) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) return count_nonzero_avx512(line, o, n_lines, rows);
    if (isa == KERNEL_AVX2) return kernel_avx2_count_nonzero(line, o, n_lines, rows);
#endif
    (void)isa;
    return count_nonzero_scalar(line, o, n_lines, rows);
}

static void gather_keys_scalar(const double *const *lines, const double *scale, size_t o, size_t rows,
                               const KeyEntries *e) {
    for (size_t c = 0; c < e->stride; c++) {
        const double *line = lines[c] + o;
        double w = scale ? scale[c] : 1.0;
        for (size_t j = 0; j < rows; j++)
            if (line[j] != 0.0) kernel_append_entry(e, j, (uint32_t)c, line[j] * w);
    }
}

#ifdef KERNEL_X86
/* Eight entries of a line compared with zero at once; the non-zero ones' keys are compressed into
 * a list (no branch per entry), then appended key by key. */
__attribute__((target("avx512f"))) static void gather_keys_avx512(const double *const *lines, const double *scale,
                                                                   size_t o, size_t rows, const KeyEntries *e) {
    const __m512d zero = _mm512_setzero_pd();
    const __m512i step = _mm512_set1_epi64(8);
    int64_t at[8];
    for (size_t c = 0; c < e->stride; c++) {
        const double *line = lines[c] + o;
        double w = scale ? scale[c] : 1.0;
        __m512i j = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
        for (size_t j0 = 0; j0 < rows; j0 += 8, j = _mm512_add_epi64(j, step)) {
            __mmask8 live = rows - j0 >= 8 ? 0xff : (__mmask8)((1u << (rows - j0)) - 1);
            __mmask8 nz = _mm512_mask_cmp_pd_mask(live, _mm512_maskz_loadu_pd(live, line + j0), zero, _CMP_NEQ_UQ);
            if (!nz) continue;
            _mm512_storeu_si512(at, _mm512_maskz_compress_epi64(nz, j));
            for (int t = 0, n = __builtin_popcount(nz); t < n; t++)
                kernel_append_entry(e, (size_t)at[t], (uint32_t)c, line[at[t]] * w);
        }
    }
}
#endif

void kernel_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows, const KeyEntries *e) {
    kernel_gather_keys_isa(kernel_isa(), lines, scale, o, rows, e);
}

void kernel_gather_keys_isa(KernelIsa isa, const double *const *lines, const double *scale, size_t o, size_t rows,
                            const KeyEntries *e) {
    for (size_t j = 0; j < rows; j++) e->count[j] = 0;
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        gather_keys_avx512(lines, scale, o, rows, e);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_gather_keys(lines, scale, o, rows, e);
        return;
    }
#endif
    (void)isa;
    gather_keys_scalar(lines, scale, o, rows, e);
}

void kernel_transpose(const double *T, size_t rows, size_t cols, double *S) {
    rows = (rows + 3) / 4 * 4, cols = (cols + 3) / 4 * 4;
#ifdef KERNEL_X86
    if (kernel_isa() >= KERNEL_AVX2) {
        kernel_avx2_transpose(T, rows, cols, S);
        return;
    }
#endif
    for (size_t q = 0; q < rows; q++)
        for (size_t j = 0; j < cols; j++) S[j * KERNEL_BLOCK + q] = T[q * KERNEL_BLOCK + j];
}

static void attend_scalar(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld,
                          size_t dv, double *out, size_t out_ld) {
    for (size_t q = 0; q < lanes; q++) {
        size_t last = attend_last_key(k, q), ties = 0;
        double best = S[q];
        for (size_t j = 1; j <= last; j++)
            if (S[j * KERNEL_BLOCK + q] > best) best = S[j * KERNEL_BLOCK + q];
        double threshold = best - k->tol;
        for (size_t j = 0; j <= last; j++) ties += !(S[j * KERNEL_BLOCK + q] < threshold);
        double extra = !(S[q] < threshold) ? k->bos_extra : 0.0;
        for (size_t c = 0; c < dv; c++) {
            const double *v = V + c * v_ld;
            double sum = extra * v[0];
            for (size_t j = 0; j <= last; j++)
                if (!(S[j * KERNEL_BLOCK + q] < threshold)) sum += v[j];
            out[c * out_ld + q] = sum / ((double)ties + extra);
        }
    }
}

#ifdef KERNEL_X86
/* The lanes q0 + t (t < 8) that see key j. */
static inline __mmask8 lanes_seeing(const AttendKeys *k, size_t j, size_t q0) {
    if (!k->causal || j <= k->first + q0) return 0xff;
    size_t d = j - k->first - q0;
    return d >= 8 ? 0 : (__mmask8)(0xffu << d);
}

/* All lanes at once, eight per register: the maxima (max_pd(x, best) is x > best ? x : best, so
 * a NaN is never taken and a NaN best stays), then each register's selected keys with their lane
 * masks (appended without a branch), then each value column summed over just those keys. With
 * regs a constant (a full block), the loops over registers unroll and their arrays stay in
 * registers. */
__attribute__((target("avx512f"), always_inline)) static inline void
attend_regs(const double *S, const AttendKeys *k, size_t lanes, size_t regs, const double *V, size_t v_ld, size_t dv,
            double *out, size_t out_ld, uint8_t *masks, uint32_t *keys) {
    const __m512d one = _mm512_set1_pd(1.0);
    size_t end = attend_last_key(k, lanes - 1) + 1, n_sel[KERNEL_BLOCK / 8];
    __m512d best[KERNEL_BLOCK / 8], threshold[KERNEL_BLOCK / 8];
#pragma GCC unroll 8
    for (size_t r = 0; r < KERNEL_BLOCK / 8; r++) /* registers past regs are never read */
        best[r] = threshold[r] = _mm512_setzero_pd(), n_sel[r] = 0;
#pragma GCC unroll 8
    for (size_t r = 0; r < regs; r++) best[r] = _mm512_loadu_pd(S + 8 * r);
    for (size_t j = 1; j < end; j++) {
        const double *s = S + j * KERNEL_BLOCK;
#pragma GCC unroll 8
        for (size_t r = 0; r < regs; r++)
            best[r] = _mm512_mask_max_pd(best[r], lanes_seeing(k, j, 8 * r), _mm512_loadu_pd(s + 8 * r), best[r]);
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < regs; r++) threshold[r] = _mm512_sub_pd(best[r], _mm512_set1_pd(k->tol));
    /* register r's list: keys[r * end + t], masks[r * end + t] for t < n_sel[r] */
    for (size_t j = 0; j < end; j++) {
        const double *s = S + j * KERNEL_BLOCK;
#pragma GCC unroll 8
        for (size_t r = 0; r < regs; r++) {
            __mmask8 live = lanes - 8 * r >= 8 ? 0xff : (__mmask8)((1u << (lanes - 8 * r)) - 1);
            __mmask8 sel = _mm512_mask_cmp_pd_mask(lanes_seeing(k, j, 8 * r) & live, _mm512_loadu_pd(s + 8 * r),
                                                   threshold[r], _CMP_NLT_UQ);
            keys[r * end + n_sel[r]] = (uint32_t)j;
            masks[r * end + n_sel[r]] = sel;
            n_sel[r] += sel != 0;
        }
    }
    for (size_t r = 0; r < regs; r++) {
        const uint32_t *key = keys + r * end;
        const uint8_t *mask = masks + r * end;
        __mmask8 live = lanes - 8 * r >= 8 ? 0xff : (__mmask8)((1u << (lanes - 8 * r)) - 1);
        __m512d ties = _mm512_setzero_pd();
        for (size_t t = 0; t < n_sel[r]; t++) ties = _mm512_mask_add_pd(ties, mask[t], ties, one);
        __mmask8 bos = n_sel[r] && key[0] == 0 ? mask[0] : 0;
        __m512d extra = _mm512_maskz_mov_pd(bos, _mm512_set1_pd(k->bos_extra));
        __m512d denominator = _mm512_add_pd(ties, extra);
        for (size_t c = 0; c < dv; c++) {
            const double *v = V + c * v_ld;
            __m512d sum = _mm512_mul_pd(extra, _mm512_set1_pd(v[0]));
            for (size_t t = 0; t < n_sel[r]; t++) sum = _mm512_mask_add_pd(sum, mask[t], sum, _mm512_set1_pd(v[key[t]]));
            _mm512_mask_storeu_pd(out + c * out_ld + 8 * r, live, _mm512_div_pd(sum, denominator));
        }
    }
}

__attribute__((target("avx512f"))) static void attend_avx512(const double *S, const AttendKeys *k, size_t lanes,
                                                              const double *V, size_t v_ld, size_t dv, double *out,
                                                              size_t out_ld, uint8_t *masks, uint32_t *keys) {
    if (lanes == KERNEL_BLOCK) attend_regs(S, k, lanes, KERNEL_BLOCK / 8, V, v_ld, dv, out, out_ld, masks, keys);
    else attend_regs(S, k, lanes, (lanes + 7) / 8, V, v_ld, dv, out, out_ld, masks, keys);
}
#endif

void kernel_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld, size_t dv,
                   double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch) {
    kernel_attend_isa(kernel_isa(), S, k, lanes, V, v_ld, dv, out, out_ld, mask_scratch, key_scratch);
}

void kernel_attend_isa(KernelIsa isa, const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld,
                       size_t dv, double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        attend_avx512(S, k, lanes, V, v_ld, dv, out, out_ld, mask_scratch, key_scratch);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_attend(S, k, lanes, V, v_ld, dv, out, out_ld, mask_scratch, key_scratch);
        return;
    }
#endif
    (void)isa, (void)mask_scratch, (void)key_scratch;
    attend_scalar(S, k, lanes, V, v_ld, dv, out, out_ld);
}

KernelIsa kernel_isa(void) {
#ifdef KERNEL_X86
    if (__builtin_cpu_supports("avx512f")) return KERNEL_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KERNEL_AVX2;
#endif
    return KERNEL_SCALAR;
}

const char *kernel_isa_name(KernelIsa isa) {
    return isa == KERNEL_AVX512 ? "avx512" : isa == KERNEL_AVX2 ? "avx2" : "scalar";
}

void kernel_chain_isa(KernelIsa isa, const uint32_t *row, const double *val, size_t n, const double *in, size_t base,
                      size_t ld, size_t len, const double *init, double *out) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        chain_avx512(row, val, n, in, base, ld, len, init, out);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_chain(row, val, n, in, base, ld, len, init, out);
        return;
    }
#endif
    (void)isa;
    chain_scalar(row, val, n, in, base, ld, len, init, out);
}

void kernel_chain(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                  size_t len, const double *init, double *out) {
    kernel_chain_isa(kernel_isa(), row, val, n, in, base, ld, len, init, out);
}

/* ---- peak ---- */

#ifdef KERNEL_X86
/* 12 independent FMA chains of 8 doubles: enough to keep two FMA pipes of latency 4 busy. */
__attribute__((target("avx512f"))) static double fma_loop_avx512(size_t iters) {
    __m512d a[12], x = _mm512_set1_pd(1.0 - 1e-9), y = _mm512_set1_pd(1e-9);
    for (int k = 0; k < 12; k++) a[k] = _mm512_set1_pd((double)k);
    for (size_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm512_fmadd_pd(a[k], x, y);
    __m512d s = a[0];
    for (int k = 1; k < 12; k++) s = _mm512_add_pd(s, a[k]);
    return _mm512_reduce_add_pd(s);
}

__attribute__((target("avx2,fma"))) static double fma_loop_avx2(size_t iters) {
    __m256d a[12], x = _mm256_set1_pd(1.0 - 1e-9), y = _mm256_set1_pd(1e-9);
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_pd((double)k);
    for (size_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_fmadd_pd(a[k], x, y);
    __m256d s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_pd(s, a[k]);
    double t[4];
    _mm256_storeu_pd(t, s);
    return t[0] + t[1] + t[2] + t[3];
}
#endif

double kernel_peak_flops(double (*clock_s)(void), double seconds, double *checksum) {
    KernelIsa isa = kernel_isa();
    size_t iters = 1 << 16, lanes = isa == KERNEL_AVX512 ? 8 : isa == KERNEL_AVX2 ? 4 : 1;
    double best = 0.0, sum = 0.0, t_end = clock_s() + seconds;
    while (clock_s() < t_end) {
        double t0 = clock_s();
#ifdef KERNEL_X86
        if (isa == KERNEL_AVX512) sum += fma_loop_avx512(iters);
        else if (isa == KERNEL_AVX2) sum += fma_loop_avx2(iters);
        else
#endif
        {
            double a = 1.0;
            for (size_t i = 0; i < 12 * iters; i++) a = fma(a, 1.0 - 1e-9, 1e-9);
            sum += a;
        }
        double dt = clock_s() - t0;
        double rate = dt > 0 ? (double)iters * 12.0 * (double)lanes * 2.0 / dt : 0.0;
        if (rate > best) best = rate;
    }
    *checksum = sum;
    return best;
}
