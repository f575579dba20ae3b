#include "runtime/kernels_avx512.h"

#ifdef KERNEL_HAVE_AVX512
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#define AVX512 __attribute__((target("avx512f")))
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) static inline

/* The first `live` lanes of a register (all 8 from 8 on). */
static inline __mmask8 live_lanes(size_t live) { return live >= 8 ? 0xff : (__mmask8)((1u << live) - 1); }

/* ---- products ---- */

/* One element's chain continued over the column's entries, 8 rows per register. */
#define CHAIN_STEP(a, off) a = _mm512_fmadd_pd(w, _mm512_loadu_pd(x + (off)), a)
/* 64 rows: a chain step in the 8 registers a0..a7. */
#define CHAIN_STEPS_64                                                                                              \
    CHAIN_STEP(a0, 0), CHAIN_STEP(a1, 8), CHAIN_STEP(a2, 16), CHAIN_STEP(a3, 24), CHAIN_STEP(a4, 32),             \
        CHAIN_STEP(a5, 40), CHAIN_STEP(a6, 48), CHAIN_STEP(a7, 56)

AVX512 void kernel_avx512_chain(const uint32_t *row, const double *val, size_t n, const double *in, size_t base,
                                size_t ld, size_t len, const double *init, double *out) {
    size_t i = 0;
    for (; i + 64 <= len; i += 64) { /* 64 rows in 8 registers */
        __m512d a0, a1, a2, a3, a4, a5, a6, a7;
        if (init) {
            a0 = _mm512_loadu_pd(init + i), a1 = _mm512_loadu_pd(init + i + 8), a2 = _mm512_loadu_pd(init + i + 16);
            a3 = _mm512_loadu_pd(init + i + 24), a4 = _mm512_loadu_pd(init + i + 32);
            a5 = _mm512_loadu_pd(init + i + 40), a6 = _mm512_loadu_pd(init + i + 48);
            a7 = _mm512_loadu_pd(init + i + 56);
        } else {
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _mm512_setzero_pd();
        }
        for (size_t k = 0; k < n; k++) {
            __m512d w = _mm512_set1_pd(val[k]);
            const double *x = in + (size_t)(row[k] - base) * ld + i;
            CHAIN_STEPS_64;
        }
        _mm512_storeu_pd(out + i, a0), _mm512_storeu_pd(out + i + 8, a1), _mm512_storeu_pd(out + i + 16, a2);
        _mm512_storeu_pd(out + i + 24, a3), _mm512_storeu_pd(out + i + 32, a4);
        _mm512_storeu_pd(out + i + 40, a5), _mm512_storeu_pd(out + i + 48, a6);
        _mm512_storeu_pd(out + i + 56, a7);
    }
    for (; i < len; i += 8) {
        __m512d a = init ? _mm512_loadu_pd(init + i) : _mm512_setzero_pd();
        for (size_t k = 0; k < n; k++)
            a = _mm512_fmadd_pd(_mm512_set1_pd(val[k]), _mm512_loadu_pd(in + (size_t)(row[k] - base) * ld + i), a);
        _mm512_storeu_pd(out + i, a);
    }
}

/* A chain's epilogue (kernels.h KernelEpilogue); max(t, +0.0) returns its second operand when t
 * is NaN or a zero: t > 0 ? t : +0.0, as the scalar ReLU. */
#define EPI512(acc, o)                                                                                              \
    (e == KERNEL_STORE  ? (acc)                                                                                     \
     : e == KERNEL_ADD  ? _mm512_add_pd(_mm512_loadu_pd(o), (acc))                                                  \
     : e == KERNEL_FRESH ? _mm512_add_pd((acc), zero)                                                               \
     : e == KERNEL_RELU ? _mm512_max_pd(_mm512_add_pd((acc), b), zero)                                              \
                        : _mm512_mul_pd(_mm512_loadu_pd(o), _mm512_add_pd((acc), b)))

AVX512 void kernel_avx512_epilogue(const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
    const __m512d b = _mm512_set1_pd(bias), zero = _mm512_setzero_pd();
    for (size_t i = 0; i < len; i += 8) _mm512_storeu_pd(out + i, EPI512(_mm512_loadu_pd(c + i), out + i));
}

#define STORE_64(o)                                                                                                 \
    do {                                                                                                            \
        _mm512_storeu_pd((o), EPI512(a0, (o)));                                                                     \
        _mm512_storeu_pd((o) + 8, EPI512(a1, (o) + 8));                                                             \
        _mm512_storeu_pd((o) + 16, EPI512(a2, (o) + 16));                                                           \
        _mm512_storeu_pd((o) + 24, EPI512(a3, (o) + 24));                                                           \
        _mm512_storeu_pd((o) + 32, EPI512(a4, (o) + 32));                                                           \
        _mm512_storeu_pd((o) + 40, EPI512(a5, (o) + 40));                                                           \
        _mm512_storeu_pd((o) + 48, EPI512(a6, (o) + 48));                                                           \
        _mm512_storeu_pd((o) + 56, EPI512(a7, (o) + 56));                                                           \
    } while (0)

/* One column over rows [0, len) (a multiple of 8): 64 rows in 8 registers, then 8 at a time. A
 * one-entry column (a copy with a scale: most of a compiled head's projections) keeps its weight
 * and input line out of the loop. Inlined with a constant epilogue. */
AVX512_INLINE void column_rows(const MatrixColumn *col, const double *in, size_t base, size_t ld, size_t len,
                               KernelEpilogue e, __m512d b, double *o) {
    const __m512d zero = _mm512_setzero_pd();
    size_t i0 = 0;
    if (col->n == 1) {
        const __m512d w = _mm512_set1_pd(col->val[0]);
        const double *x0 = in + (size_t)(col->row[0] - base) * ld;
        for (; i0 + 64 <= len; i0 += 64) {
            const double *x = x0 + i0;
            double *oo = o + i0;
            __m512d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
            CHAIN_STEPS_64;
            STORE_64(oo);
        }
    }
    for (; i0 + 64 <= len; i0 += 64) {
        __m512d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
        for (uint32_t k = 0; k < col->n; k++) {
            __m512d w = _mm512_set1_pd(col->val[k]);
            const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
            CHAIN_STEPS_64;
        }
        double *oo = o + i0;
        STORE_64(oo);
    }
    for (; i0 < len; i0 += 8) {
        __m512d a0 = zero;
        for (uint32_t k = 0; k < col->n; k++) {
            __m512d w = _mm512_set1_pd(col->val[k]);
            const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
            CHAIN_STEP(a0, 0);
        }
        _mm512_storeu_pd(o + i0, EPI512(a0, o + i0));
    }
}

/* Column by column, each over all its rows: a panel's output lines are written one after another. */
#define COLUMNS_WITH(E)                                                                                             \
    for (size_t j = 0; j < n_cols; j++) {                                                                           \
        size_t c = which ? which[j] : j;                                                                            \
        column_rows(&cols[c], in, base, ld, len, E, _mm512_set1_pd(bias ? bias[c] : 0.0), out + c * out_ld);       \
    }

AVX512 void kernel_avx512_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                                  size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias,
                                  double *out, size_t out_ld) {
    switch (e) {
    case KERNEL_STORE: COLUMNS_WITH(KERNEL_STORE) break;
    case KERNEL_ADD: COLUMNS_WITH(KERNEL_ADD) break;
    case KERNEL_FRESH: COLUMNS_WITH(KERNEL_FRESH) break;
    case KERNEL_RELU: COLUMNS_WITH(KERNEL_RELU) break;
    case KERNEL_GATE: COLUMNS_WITH(KERNEL_GATE) break;
    }
}
#undef COLUMNS_WITH

/* One chain given to every unit: 64 rows in 8 registers, then 8 at a time. Inlined with a
 * constant epilogue. */
AVX512_INLINE void fan_out_rows(const double *c, size_t len, KernelEpilogue e, const double *bias,
                                const uint32_t *units, size_t n_units, double *out, size_t out_ld) {
    const __m512d zero = _mm512_setzero_pd();
    size_t i0 = 0;
    for (; i0 + 64 <= len; i0 += 64) {
        __m512d a0 = _mm512_loadu_pd(c + i0), a1 = _mm512_loadu_pd(c + i0 + 8), a2 = _mm512_loadu_pd(c + i0 + 16);
        __m512d a3 = _mm512_loadu_pd(c + i0 + 24), a4 = _mm512_loadu_pd(c + i0 + 32);
        __m512d a5 = _mm512_loadu_pd(c + i0 + 40), a6 = _mm512_loadu_pd(c + i0 + 48);
        __m512d a7 = _mm512_loadu_pd(c + i0 + 56);
        for (size_t j = 0; j < n_units; j++) {
            const __m512d b = _mm512_set1_pd(bias[units[j]]);
            double *o = out + (size_t)units[j] * out_ld + i0;
            STORE_64(o);
        }
    }
    for (; i0 < len; i0 += 8) {
        __m512d a0 = _mm512_loadu_pd(c + i0);
        for (size_t j = 0; j < n_units; j++) {
            const __m512d b = _mm512_set1_pd(bias[units[j]]);
            double *o = out + (size_t)units[j] * out_ld + i0;
            _mm512_storeu_pd(o, EPI512(a0, o));
        }
    }
}

AVX512 void kernel_avx512_fan_out(const double *c, size_t len, KernelEpilogue e, const double *bias,
                                  const uint32_t *units, size_t n_units, double *out, size_t out_ld) {
    switch (e) {
    case KERNEL_STORE: fan_out_rows(c, len, KERNEL_STORE, bias, units, n_units, out, out_ld); break;
    case KERNEL_ADD: fan_out_rows(c, len, KERNEL_ADD, bias, units, n_units, out, out_ld); break;
    case KERNEL_FRESH: fan_out_rows(c, len, KERNEL_FRESH, bias, units, n_units, out, out_ld); break;
    case KERNEL_RELU: fan_out_rows(c, len, KERNEL_RELU, bias, units, n_units, out, out_ld); break;
    case KERNEL_GATE: fan_out_rows(c, len, KERNEL_GATE, bias, units, n_units, out, out_ld); break;
    }
}
#undef STORE_64
#undef CHAIN_STEPS_64
#undef CHAIN_STEP
#undef EPI512

/* ---- attention ---- */

AVX512 size_t kernel_avx512_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows) {
    const __m512d zero = _mm512_setzero_pd();
    size_t n = 0;
    for (size_t c = 0; c < n_lines; c++)
        for (size_t j = 0; j < rows; j += 8) {
            __mmask8 live = live_lanes(rows - j);
            n += (size_t)__builtin_popcount(
                _mm512_mask_cmp_pd_mask(live, _mm512_maskz_loadu_pd(live, line[c] + o + j), zero, _CMP_NEQ_UQ));
        }
    return n;
}

/* The non-zero entries of x[0 .. n) (n <= 64) as bits (a NaN is not zero), without a branch: a
 * line's few non-zeros fall anywhere, so a test per group of keys would mispredict. */
AVX512_INLINE uint64_t nonzero_64(const double *x, size_t n) {
    const __m512d zero = _mm512_setzero_pd();
    uint64_t bits = 0;
#pragma GCC unroll 8
    for (size_t r = 0; r < 8; r++) {
        __mmask8 live = n > 8 * r ? live_lanes(n - 8 * r) : 0;
        bits |= (uint64_t)_mm512_mask_cmp_pd_mask(live, _mm512_maskz_loadu_pd(live, x + 8 * r), zero, _CMP_NEQ_UQ) << (8 * r);
    }
    return bits;
}

AVX512 void kernel_avx512_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows,
                                      const KeyEntries *e) {
    const KeyEntries local = *e; /* its pointers stay in registers across the entries' stores */
    for (size_t c = 0; c < local.stride; c++) {
        const double *line = lines[c] + o;
        double w = scale ? scale[c] : 1.0;
        for (size_t j0 = 0; j0 < rows; j0 += 64) /* 64 keys at a time */
            for (uint64_t nz = nonzero_64(line + j0, rows - j0 < 64 ? rows - j0 : 64); nz; nz &= nz - 1) {
                size_t k = j0 + (size_t)__builtin_ctzll(nz);
                kernel_append_entry(&local, k, (uint32_t)c, line[k] * w);
            }
    }
}

/* The score chain's step in register r: a = fma(w, q, a) where q is not zero, a kept where it is
 * (the skipped product); lanes outside live[r] are neither read nor changed. */
#define SCORE_STEP(r)                                                                                               \
    do {                                                                                                            \
        __m512d q = _mm512_maskz_loadu_pd(live[r], x + 8 * (r));                                                    \
        a[r] = _mm512_mask3_fmadd_pd(w, q, a[r], _mm512_cmp_pd_mask(q, zero, _CMP_NEQ_UQ));                         \
    } while (0)

/* One key's scores at `regs` registers of lanes from lane i (a constant where inlined: the
 * registers stay registers), the last `last` lanes live. The first step of a chain, from +0.0,
 * needs no test when w is finite: a zero q gives fma(w, q, +0.0) = (+-0) + (+0.0) = +0.0, the
 * chain it skips. (Later steps keep the test: an underflowing product can leave a -0.0 that
 * adding a zero product would turn into +0.0.) */
AVX512_INLINE void score_regs(const uint32_t *dim, const double *val, size_t n, const double *const *lines, size_t o,
                              size_t i, size_t regs, __mmask8 last, double *out) {
    const __m512d zero = _mm512_setzero_pd();
    __m512d a[8];
    __mmask8 live[8];
#pragma GCC unroll 8
    for (size_t r = 0; r < regs; r++) a[r] = zero, live[r] = r + 1 < regs ? 0xff : last;
    size_t k = 0;
    if (n && isfinite(val[0])) {
        __m512d w = _mm512_set1_pd(val[0]);
        const double *x = lines[dim[0]] + o + i;
#pragma GCC unroll 8
        for (size_t r = 0; r < regs; r++) a[r] = _mm512_maskz_fmadd_pd(live[r], w, _mm512_maskz_loadu_pd(live[r], x + 8 * r), zero);
        k = 1;
    }
    for (; k < n; k++) {
        __m512d w = _mm512_set1_pd(val[k]);
        const double *x = lines[dim[k]] + o + i;
#pragma GCC unroll 8
        for (size_t r = 0; r < regs; r++) SCORE_STEP(r);
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < regs; r++) _mm512_mask_storeu_pd(out + i + 8 * r, live[r], a[r]);
}
#undef SCORE_STEP

AVX512 void kernel_avx512_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines,
                                 size_t o, size_t lanes, double *S) {
    for (size_t j = 0; j < n_keys; j++) {
        const uint32_t *dim = e->dim + j * e->stride;
        const double *val = e->val + j * e->stride;
        size_t n = e->count[j], i = kernel_first_lane(j, causal_first);
        if (i >= lanes) continue;
        __mmask8 last = live_lanes(lanes - i - (lanes - i - 1) / 8 * 8);
        double *out = S + j * KERNEL_BLOCK;
        switch ((lanes - i + 7) / 8) { /* Q is read only at lanes < lanes */
        case 1: score_regs(dim, val, n, lines, o, i, 1, last, out); break;
        case 2: score_regs(dim, val, n, lines, o, i, 2, last, out); break;
        case 3: score_regs(dim, val, n, lines, o, i, 3, last, out); break;
        case 4: score_regs(dim, val, n, lines, o, i, 4, last, out); break;
        case 5: score_regs(dim, val, n, lines, o, i, 5, last, out); break;
        case 6: score_regs(dim, val, n, lines, o, i, 6, last, out); break;
        case 7: score_regs(dim, val, n, lines, o, i, 7, last, out); break;
        default: score_regs(dim, val, n, lines, o, i, 8, last, out); break;
        }
    }
}

/* The lanes q0 + t (t < 16) that see key j, as bits. */
static inline unsigned lanes_seeing(const AttendKeys *k, size_t j, size_t q0) {
    if (!k->causal || j <= k->first + q0) return 0xffffu;
    size_t d = j - k->first - q0;
    return d >= 16 ? 0u : (0xffffu << d) & 0xffffu;
}

/* Value columns up to this many are summed in the pass that selects the keys; wider ones over a
 * list of the selected keys (fewer operations when few keys are selected). */
#define DIRECT_DV 2

/* The selecting pass for a narrow value (dv <= DIRECT_DV; a constant where inlined, so the sums
 * stay in registers): keys [0, end) against the two registers' thresholds, ties and sums
 * continued in key order. */
AVX512_INLINE void direct_pass(const double *s, const __m512d threshold[2], const AttendKeys *k, size_t q0,
                               size_t full, size_t end, const double *V, size_t v_ld, size_t dv, __m512d sum[2][DIRECT_DV],
                               __m512d ties[2]) {
    const __m512d one = _mm512_set1_pd(1.0);
    for (size_t j = 0; j < end; j++) {
        __mmask8 m0 = _mm512_cmp_pd_mask(_mm512_loadu_pd(s + j * KERNEL_BLOCK), threshold[0], _CMP_NLT_UQ);
        __mmask8 m1 = _mm512_cmp_pd_mask(_mm512_loadu_pd(s + j * KERNEL_BLOCK + 8), threshold[1], _CMP_NLT_UQ);
        if (j >= full) {
            unsigned see = lanes_seeing(k, j, q0);
            m0 &= (__mmask8)see, m1 &= (__mmask8)(see >> 8);
        }
        ties[0] = _mm512_mask_add_pd(ties[0], m0, ties[0], one);
        ties[1] = _mm512_mask_add_pd(ties[1], m1, ties[1], one);
#pragma GCC unroll 2
        for (size_t c = 0; c < dv; c++) {
            __m512d v = _mm512_set1_pd(V[c * v_ld + j]);
            sum[0][c] = _mm512_mask_add_pd(sum[0][c], m0, sum[0][c], v);
            sum[1][c] = _mm512_mask_add_pd(sum[1][c], m1, sum[1][c], v);
        }
    }
}

/* Sixteen lanes (two registers) at a time, each group on its own: its maxima over the keys its
 * lanes see (max_pd(x, best) is x > best ? x : best, so a NaN is never taken and a NaN best
 * stays), then the keys at or above the threshold: each value column summed over them in key
 * order (ties counted alike), in the selecting pass itself for a narrow value, or over a list of
 * the selected keys with their lane masks (two bytes a key). Every lane of a group sees keys
 * [0, full); only keys [full, end) (at most 15, causal) need a mask. Lanes past `lanes` compute
 * garbage, never stored. */
AVX512 void kernel_avx512_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld,
                                 size_t dv, double *out, size_t out_ld, uint8_t *masks, uint32_t *keys) {
    const __m512d one = _mm512_set1_pd(1.0), tol = _mm512_set1_pd(k->tol), bos_extra = _mm512_set1_pd(k->bos_extra);
    bool direct = dv <= DIRECT_DV;
    for (size_t q0 = 0; q0 < lanes; q0 += 16) {
        size_t n_live = lanes - q0 < 16 ? lanes - q0 : 16, end = attend_last_key(k, q0 + n_live - 1) + 1, n_sel = 0;
        size_t full = attend_last_key(k, q0) + 1 < end ? attend_last_key(k, q0) + 1 : end;
        unsigned live = (1u << n_live) - 1;
        const double *s = S + q0;
        __m512d best0 = _mm512_loadu_pd(s), best1 = _mm512_loadu_pd(s + 8);
        for (size_t j = 1; j < full; j++) {
            best0 = _mm512_max_pd(_mm512_loadu_pd(s + j * KERNEL_BLOCK), best0);
            best1 = _mm512_max_pd(_mm512_loadu_pd(s + j * KERNEL_BLOCK + 8), best1);
        }
        for (size_t j = full > 1 ? full : 1; j < end; j++) {
            unsigned see = lanes_seeing(k, j, q0);
            best0 = _mm512_mask_max_pd(best0, (__mmask8)see, _mm512_loadu_pd(s + j * KERNEL_BLOCK), best0);
            best1 = _mm512_mask_max_pd(best1, (__mmask8)(see >> 8), _mm512_loadu_pd(s + j * KERNEL_BLOCK + 8), best1);
        }
        __m512d threshold[2] = {_mm512_sub_pd(best0, tol), _mm512_sub_pd(best1, tol)};
        /* BOS (key 0, seen by every lane) weighs 1 + bos_extra where selected */
        __m512d extra0 = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(_mm512_loadu_pd(s), threshold[0], _CMP_NLT_UQ), bos_extra);
        __m512d extra1 = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(_mm512_loadu_pd(s + 8), threshold[1], _CMP_NLT_UQ), bos_extra);
        __m512d ties[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
        __m512d sum[2][DIRECT_DV];
        if (direct) {
            for (size_t c = 0; c < dv; c++) {
                __m512d v0 = _mm512_set1_pd(V[c * v_ld]);
                sum[0][c] = _mm512_mul_pd(extra0, v0), sum[1][c] = _mm512_mul_pd(extra1, v0);
            }
            if (dv == 1) direct_pass(s, threshold, k, q0, full, end, V, v_ld, 1, sum, ties);
            else if (dv == 2) direct_pass(s, threshold, k, q0, full, end, V, v_ld, 2, sum, ties);
            else direct_pass(s, threshold, k, q0, full, end, V, v_ld, 0, sum, ties);
        } else {
            for (size_t j = 0; j < end; j++) { /* appended without a branch */
                unsigned sel = (unsigned)_mm512_cmp_pd_mask(_mm512_loadu_pd(s + j * KERNEL_BLOCK), threshold[0], _CMP_NLT_UQ) |
                               (unsigned)_mm512_cmp_pd_mask(_mm512_loadu_pd(s + j * KERNEL_BLOCK + 8), threshold[1], _CMP_NLT_UQ) << 8;
                sel &= live;
                if (j >= full) sel &= lanes_seeing(k, j, q0);
                keys[n_sel] = (uint32_t)j;
                masks[2 * n_sel] = (uint8_t)sel, masks[2 * n_sel + 1] = (uint8_t)(sel >> 8);
                n_sel += sel != 0;
            }
            for (size_t t = 0; t < n_sel; t++) {
                ties[0] = _mm512_mask_add_pd(ties[0], masks[2 * t], ties[0], one);
                ties[1] = _mm512_mask_add_pd(ties[1], masks[2 * t + 1], ties[1], one);
            }
        }
        __m512d denominator0 = _mm512_add_pd(ties[0], extra0), denominator1 = _mm512_add_pd(ties[1], extra1);
        for (size_t c = 0; c < dv; c++) {
            __m512d total0, total1;
            if (direct) {
                total0 = sum[0][c], total1 = sum[1][c];
            } else {
                const double *v = V + c * v_ld;
                __m512d v0 = _mm512_set1_pd(v[0]);
                total0 = _mm512_mul_pd(extra0, v0), total1 = _mm512_mul_pd(extra1, v0);
                for (size_t t = 0; t < n_sel; t++) {
                    __m512d x = _mm512_set1_pd(v[keys[t]]);
                    total0 = _mm512_mask_add_pd(total0, masks[2 * t], total0, x);
                    total1 = _mm512_mask_add_pd(total1, masks[2 * t + 1], total1, x);
                }
            }
            double *o = out + c * out_ld + q0;
            _mm512_mask_storeu_pd(o, (__mmask8)live, _mm512_div_pd(total0, denominator0));
            if (n_live > 8) _mm512_mask_storeu_pd(o + 8, (__mmask8)(live >> 8), _mm512_div_pd(total1, denominator1));
        }
    }
}

/* ---- readout ---- */

/* Eight rows at a time: per lane, the ones counted, any entry off, the last one's line. */
AVX512 void kernel_avx512_one_hot(const double *lines, size_t ld, size_t count, size_t rows, double tol,
                                  uint32_t *hot) {
    const __m512d one = _mm512_set1_pd(1.0), t = _mm512_set1_pd(tol);
    const __m512i unit = _mm512_set1_epi64(1), not_one_hot = _mm512_set1_epi64(KERNEL_NOT_ONE_HOT);
    for (size_t j = 0; j < rows; j += 8) {
        __mmask8 live = live_lanes(rows - j), off = 0;
        __m512i ones = _mm512_setzero_si512(), at = _mm512_setzero_si512();
        for (size_t c = 0; c < count; c++) {
            __m512d v = _mm512_maskz_loadu_pd(live, lines + c * ld + j);
            __mmask8 is_one = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(v, one)), t, _CMP_LE_OQ);
            off |= (__mmask8)~is_one & _mm512_cmp_pd_mask(_mm512_abs_pd(v), t, _CMP_GT_OQ);
            ones = _mm512_mask_add_epi64(ones, is_one, ones, unit);
            at = _mm512_mask_mov_epi64(at, is_one, _mm512_set1_epi64((int64_t)c));
        }
        __mmask8 good = (__mmask8)(_mm512_cmpeq_epi64_mask(ones, unit) & ~off);
        _mm512_mask_cvtepi64_storeu_epi32(hot + j, live, _mm512_mask_mov_epi64(not_one_hot, good, at));
    }
}

/* ---- peak ---- */

/* 12 independent FMA chains of 8 doubles: enough to keep two FMA pipes of latency 4 busy. */
AVX512 double kernel_avx512_fma_loop(size_t iters) {
    __m512d a[12], x = _mm512_set1_pd(1.0 - 1e-9), y = _mm512_set1_pd(1e-9);
    for (int k = 0; k < 12; k++) a[k] = _mm512_set1_pd((double)k);
    for (size_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm512_fmadd_pd(a[k], x, y);
    __m512d s = a[0];
    for (int k = 1; k < 12; k++) s = _mm512_add_pd(s, a[k]);
    return _mm512_reduce_add_pd(s);
}
#endif
