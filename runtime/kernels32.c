#include "runtime/kernels32.h"

#include "runtime/kernels_avx2.h"

#include <math.h>
#include <stdbool.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KERNEL32_X86 1
#endif

static float epi32(float c, KernelEpilogue e, float bias, float o) {
    float t;
    switch (e) {
    case KERNEL_ADD: return o + c;
    case KERNEL_FRESH: return c + 0.0f;
    case KERNEL_RELU: t = c + bias; return t > 0.0f ? t : 0.0f;
    case KERNEL_GATE: return o * (c + bias);
    case KERNEL_STORE: break;
    }
    return c;
}

void kernel32_columns_scalar(const MatrixColumn32 *cols, const uint32_t *which, size_t n_cols, const float *in,
                             size_t base, size_t ld, size_t len, KernelEpilogue e, const float *bias,
                             const float *init, size_t init_ld, float *out, size_t out_ld) {
    for (size_t j = 0; j < n_cols; j++) {
        size_t c = which ? which[j] : j;
        const MatrixColumn32 *col = &cols[c];
        float b = bias ? bias[c] : 0.0f, *o = out + c * out_ld;
        const float *start = init ? init + c * init_ld : NULL;
        for (size_t i = 0; i < len; i++) {
            float acc = start ? start[i] : 0.0f;
            for (uint32_t k = 0; k < col->n; k++) acc = fmaf(col->val[k], in[(size_t)(col->row[k] - base) * ld + i], acc);
            o[i] = epi32(acc, e, b, o[i]);
        }
    }
}

#ifdef KERNEL32_X86
/* The epilogue of 16 chains (lanes outside `live` neither loaded nor stored). */
__attribute__((target("avx512f"))) static inline void store16(float *o, __m512 acc, KernelEpilogue e, __m512 b,
                                                              __mmask16 live) {
    const __m512 zero = _mm512_setzero_ps();
    switch (e) {
    case KERNEL_STORE: break;
    case KERNEL_ADD: acc = _mm512_add_ps(_mm512_maskz_loadu_ps(live, o), acc); break;
    case KERNEL_FRESH: acc = _mm512_add_ps(acc, zero); break;
    /* max(t, +0.0f) returns its second operand when t is NaN or a zero: t > 0 ? t : +0.0f */
    case KERNEL_RELU: acc = _mm512_max_ps(_mm512_add_ps(acc, b), zero); break;
    case KERNEL_GATE: acc = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, o), _mm512_add_ps(acc, b)); break;
    }
    _mm512_mask_storeu_ps(o, live, acc);
}

__attribute__((target("avx512f"))) static void columns32_avx512(const MatrixColumn32 *cols, const uint32_t *which,
                                                                 size_t n_cols, const float *in, size_t base,
                                                                 size_t ld, size_t len, KernelEpilogue e,
                                                                 const float *bias, const float *init, size_t init_ld,
                                                                 float *out, size_t out_ld) {
    size_t i0 = 0;
    for (; i0 + 64 <= len; i0 += 64) /* 64 rows in 4 registers */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn32 *col = &cols[c];
            const __m512 b = _mm512_set1_ps(bias ? bias[c] : 0.0f);
            __m512 a0, a1, a2, a3;
            if (init) {
                const float *s = init + c * init_ld + i0;
                a0 = _mm512_loadu_ps(s), a1 = _mm512_loadu_ps(s + 16), a2 = _mm512_loadu_ps(s + 32);
                a3 = _mm512_loadu_ps(s + 48);
            } else {
                a0 = a1 = a2 = a3 = _mm512_setzero_ps();
            }
            for (uint32_t k = 0; k < col->n; k++) {
                __m512 w = _mm512_set1_ps(col->val[k]);
                const float *x = in + (size_t)(col->row[k] - base) * ld + i0;
                a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(x), a0);
                a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + 16), a1);
                a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + 32), a2);
                a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + 48), a3);
            }
            float *o = out + c * out_ld + i0;
            store16(o, a0, e, b, 0xffff), store16(o + 16, a1, e, b, 0xffff);
            store16(o + 32, a2, e, b, 0xffff), store16(o + 48, a3, e, b, 0xffff);
        }
    for (; i0 < len; i0 += 16) { /* then 16 (or the last 8) at a time */
        __mmask16 live = len - i0 >= 16 ? 0xffff : 0x00ff;
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn32 *col = &cols[c];
            __m512 a = init ? _mm512_maskz_loadu_ps(live, init + c * init_ld + i0) : _mm512_setzero_ps();
            for (uint32_t k = 0; k < col->n; k++)
                a = _mm512_fmadd_ps(_mm512_set1_ps(col->val[k]),
                                    _mm512_maskz_loadu_ps(live, in + (size_t)(col->row[k] - base) * ld + i0), a);
            store16(out + c * out_ld + i0, a, e, _mm512_set1_ps(bias ? bias[c] : 0.0f), live);
        }
    }
}
#endif

void kernel32_columns(const MatrixColumn32 *cols, const uint32_t *which, size_t n_cols, const float *in, size_t base,
                      size_t ld, size_t len, KernelEpilogue e, const float *bias, const float *init, size_t init_ld,
                      float *out, size_t out_ld) {
#ifdef KERNEL32_X86
    if (kernel_isa() == KERNEL_AVX512) {
        columns32_avx512(cols, which, n_cols, in, base, ld, len, e, bias, init, init_ld, out, out_ld);
        return;
    }
    if (kernel_isa() == KERNEL_AVX2) {
        kernel_avx2_columns32(cols, which, n_cols, in, base, ld, len, e, bias, init, init_ld, out, out_ld);
        return;
    }
#endif
    kernel32_columns_scalar(cols, which, n_cols, in, base, ld, len, e, bias, init, init_ld, out, out_ld);
}

void kernel32_add(const float *y, size_t len, float *out) {
    for (size_t i = 0; i < len; i++) out[i] = out[i] + y[i]; /* one rounding each, vectorised or not */
}

size_t kernel32_select(const float *S, size_t n, double tol, uint32_t *sel) {
    float best = S[0];
    for (size_t j = 1; j < n; j++)
        if (S[j] > best) best = S[j];
    double threshold = (double)best - tol;
    size_t ties = 0;
    for (size_t j = 0; j < n; j++)
        if (!((double)S[j] < threshold)) sel[ties++] = (uint32_t)j;
    return ties;
}

/* ---- peak ---- */

#ifdef KERNEL32_X86
/* 12 independent FMA chains of 16 floats (kernels.c's float64 loop in float32). */
__attribute__((target("avx512f"))) static double fma_loop32_avx512(size_t iters) {
    __m512 a[12], x = _mm512_set1_ps(1.0f - 1e-6f), y = _mm512_set1_ps(1e-6f);
    for (int k = 0; k < 12; k++) a[k] = _mm512_set1_ps((float)k);
    for (size_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm512_fmadd_ps(a[k], x, y);
    __m512 s = a[0];
    for (int k = 1; k < 12; k++) s = _mm512_add_ps(s, a[k]);
    return (double)_mm512_reduce_add_ps(s);
}
#endif

double kernel32_peak_flops(double (*clock_s)(void), double seconds, double *checksum) {
    KernelIsa isa = kernel_isa();
    size_t iters = 1 << 16, lanes = isa == KERNEL_AVX512 ? 16 : isa == KERNEL_AVX2 ? 8 : 1;
    double best = 0.0, sum = 0.0, t_end = clock_s() + seconds;
    while (clock_s() < t_end) {
        double t0 = clock_s();
#ifdef KERNEL32_X86
        if (isa == KERNEL_AVX512) sum += fma_loop32_avx512(iters);
        else if (isa == KERNEL_AVX2) sum += kernel_avx2_fma_loop32(iters);
        else
#endif
        {
            float a = 1.0f;
            for (size_t i = 0; i < 12 * iters; i++) a = fmaf(a, 1.0f - 1e-6f, 1e-6f);
            sum += a;
        }
        double dt = clock_s() - t0;
        double rate = dt > 0 ? (double)iters * 12.0 * (double)lanes * 2.0 / dt : 0.0;
        if (rate > best) best = rate;
    }
    *checksum = sum;
    return best;
}
