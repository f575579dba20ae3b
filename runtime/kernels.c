#include "runtime/kernels.h"

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

__attribute__((target("avx2,fma"))) static void chain_avx2(const uint32_t *row, const double *val, size_t n,
                                                            const double *in, size_t base, size_t ld, size_t len,
                                                            const double *init, double *out) {
    for (size_t i = 0; i < len; i += 16) { /* 16 rows (4 registers) at a time; len is a multiple of 8 */
        if (len - i < 16) {
            for (size_t j = i; j < len; j += 4) {
                __m256d a = init ? _mm256_loadu_pd(init + j) : _mm256_setzero_pd();
                for (size_t k = 0; k < n; k++)
                    a = _mm256_fmadd_pd(_mm256_set1_pd(val[k]), _mm256_loadu_pd(in + (size_t)(row[k] - base) * ld + j), a);
                _mm256_storeu_pd(out + j, a);
            }
            break;
        }
        __m256d a0, a1, a2, a3;
        if (init) {
            a0 = _mm256_loadu_pd(init + i), a1 = _mm256_loadu_pd(init + i + 4);
            a2 = _mm256_loadu_pd(init + i + 8), a3 = _mm256_loadu_pd(init + i + 12);
        } else {
            a0 = a1 = a2 = a3 = _mm256_setzero_pd();
        }
        for (size_t k = 0; k < n; k++) {
            __m256d w = _mm256_set1_pd(val[k]);
            const double *x = in + (size_t)(row[k] - base) * ld + i;
            a0 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x), a0);
            a1 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x + 4), a1);
            a2 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x + 8), a2);
            a3 = _mm256_fmadd_pd(w, _mm256_loadu_pd(x + 12), a3);
        }
        _mm256_storeu_pd(out + i, a0), _mm256_storeu_pd(out + i + 4, a1);
        _mm256_storeu_pd(out + i + 8, a2), _mm256_storeu_pd(out + i + 12, a3);
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
    if (kernel_isa() == KERNEL_AVX512) {
        epilogue_avx512(y, len, KERNEL_ADD, 0.0, out);
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
#ifdef KERNEL_X86
    if (kernel_isa() == KERNEL_AVX512) {
        columns_avx512(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
        return;
    }
#endif
    /* AVX2 and scalar: column by column through kernel_chain_to (the same arithmetic) */
    for (size_t j = 0; j < n_cols; j++) {
        size_t c = which ? which[j] : j;
        kernel_chain_to(cols[c].row, cols[c].val, cols[c].n, in, base, ld, len, e, bias ? bias[c] : 0.0,
                        out + c * out_ld);
    }
}

void kernel_columns_isa_scalar(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                               size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                               size_t out_ld) {
    columns_scalar(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
}

/* ---- average-hard selection ---- */

static size_t select_scalar(const double *S, size_t n, double tol, uint32_t *sel) {
    double best = S[0];
    for (size_t j = 1; j < n; j++)
        if (S[j] > best) best = S[j];
    double threshold = best - tol;
    size_t ties = 0;
    for (size_t j = 0; j < n; j++)
        if (!(S[j] < threshold)) sel[ties++] = (uint32_t)j;
    return ties;
}

#ifdef KERNEL_X86
/* The same selection: the maximum of finite scores does not depend on the order of comparison
 * (a -0.0 or +0.0 maximum gives the same threshold); any NaN takes the scalar path. */
__attribute__((target("avx512f"))) static size_t select_avx512(const double *S, size_t n, double tol,
                                                               uint32_t *sel) {
    __m512d best = _mm512_set1_pd(-INFINITY);
    for (size_t j = 0; j < n; j += 8) {
        __mmask8 live = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
        __m512d x = _mm512_mask_loadu_pd(best, live, S + j);
        if (_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q)) return select_scalar(S, n, tol, sel);
        best = _mm512_max_pd(best, x);
    }
    __m512d threshold = _mm512_set1_pd(_mm512_reduce_max_pd(best) - tol);
    size_t ties = 0;
    for (size_t j = 0; j < n; j += 8) {
        __mmask8 live = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
        unsigned bits = _mm512_mask_cmp_pd_mask(live, _mm512_mask_loadu_pd(threshold, live, S + j), threshold,
                                                _CMP_NLT_UQ);
        while (bits) {
            sel[ties++] = (uint32_t)(j + (size_t)__builtin_ctz(bits));
            bits &= bits - 1;
        }
    }
    return ties;
}
#endif

size_t kernel_select(const double *S, size_t n, double tol, uint32_t *sel) {
#ifdef KERNEL_X86
    if (kernel_isa() == KERNEL_AVX512) return select_avx512(S, n, tol, sel);
#endif
    return select_scalar(S, n, tol, sel);
}

size_t kernel_select_scalar(const double *S, size_t n, double tol, uint32_t *sel) {
    return select_scalar(S, n, tol, sel);
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
        chain_avx2(row, val, n, in, base, ld, len, init, out);
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
