#include "runtime/kernels_avx2.h"

#ifdef KERNEL_HAVE_AVX2
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#define AVX2 __attribute__((target("avx2,fma")))

/* Lane masks by their bits (bit t: lane t), as blend/maskload masks: all ones in those lanes. */
static const int64_t LANE_MASKS[16][4] = {
    {0, 0, 0, 0},    {-1, 0, 0, 0},    {0, -1, 0, 0},    {-1, -1, 0, 0},    {0, 0, -1, 0},    {-1, 0, -1, 0},
    {0, -1, -1, 0},  {-1, -1, -1, 0},  {0, 0, 0, -1},    {-1, 0, 0, -1},    {0, -1, 0, -1},   {-1, -1, 0, -1},
    {0, 0, -1, -1},  {-1, 0, -1, -1},  {0, -1, -1, -1},  {-1, -1, -1, -1},
};

AVX2 static inline __m256i lane_mask(unsigned bits) { return _mm256_loadu_si256((const __m256i *)LANE_MASKS[bits & 0xfu]); }

/* The first `live` (1..4) lanes. */
AVX2 static inline __m256i live_mask(size_t live) { return lane_mask(live >= 4 ? 0xfu : (1u << live) - 1); }

/* ---- products ---- */

/* One element's chain continued over the column's entries, 4 rows per register. */
#define CHAIN_STEP(a, off) a = _mm256_fmadd_pd(w, _mm256_loadu_pd(x + (off)), a)

AVX2 void kernel_avx2_chain(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                            size_t len, const double *init, double *out) {
    size_t i = 0;
    for (; i + 16 <= len; i += 16) { /* 16 rows in 4 registers */
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
            CHAIN_STEP(a0, 0);
            CHAIN_STEP(a1, 4);
            CHAIN_STEP(a2, 8);
            CHAIN_STEP(a3, 12);
        }
        _mm256_storeu_pd(out + i, a0), _mm256_storeu_pd(out + i + 4, a1);
        _mm256_storeu_pd(out + i + 8, a2), _mm256_storeu_pd(out + i + 12, a3);
    }
    for (; i < len; i += 4) {
        __m256d a = init ? _mm256_loadu_pd(init + i) : _mm256_setzero_pd();
        for (size_t k = 0; k < n; k++)
            a = _mm256_fmadd_pd(_mm256_set1_pd(val[k]), _mm256_loadu_pd(in + (size_t)(row[k] - base) * ld + i), a);
        _mm256_storeu_pd(out + i, a);
    }
}

/* A chain's epilogue (kernels.h KernelEpilogue); max(t, +0.0) returns its second operand when t
 * is NaN or a zero: t > 0 ? t : +0.0, as the scalar ReLU. */
#define EPI256(acc, o)                                                                                              \
    (e == KERNEL_STORE  ? (acc)                                                                                     \
     : e == KERNEL_ADD  ? _mm256_add_pd(_mm256_loadu_pd(o), (acc))                                                  \
     : e == KERNEL_FRESH ? _mm256_add_pd((acc), zero)                                                               \
     : e == KERNEL_RELU ? _mm256_max_pd(_mm256_add_pd((acc), b), zero)                                              \
                        : _mm256_mul_pd(_mm256_loadu_pd(o), _mm256_add_pd((acc), b)))

AVX2 void kernel_avx2_epilogue(const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
    const __m256d b = _mm256_set1_pd(bias), zero = _mm256_setzero_pd();
    for (size_t i = 0; i < len; i += 4) _mm256_storeu_pd(out + i, EPI256(_mm256_loadu_pd(c + i), out + i));
}

/* 32 rows: a chain step in the 8 registers a0..a7, and their epilogue into o .. o + 31. */
#define CHAIN_STEPS_32                                                                                              \
    CHAIN_STEP(a0, 0), CHAIN_STEP(a1, 4), CHAIN_STEP(a2, 8), CHAIN_STEP(a3, 12), CHAIN_STEP(a4, 16),              \
        CHAIN_STEP(a5, 20), CHAIN_STEP(a6, 24), CHAIN_STEP(a7, 28)
#define STORE_32(o)                                                                                                 \
    do {                                                                                                            \
        _mm256_storeu_pd((o), EPI256(a0, (o)));                                                                     \
        _mm256_storeu_pd((o) + 4, EPI256(a1, (o) + 4));                                                             \
        _mm256_storeu_pd((o) + 8, EPI256(a2, (o) + 8));                                                             \
        _mm256_storeu_pd((o) + 12, EPI256(a3, (o) + 12));                                                           \
        _mm256_storeu_pd((o) + 16, EPI256(a4, (o) + 16));                                                           \
        _mm256_storeu_pd((o) + 20, EPI256(a5, (o) + 20));                                                           \
        _mm256_storeu_pd((o) + 24, EPI256(a6, (o) + 24));                                                           \
        _mm256_storeu_pd((o) + 28, EPI256(a7, (o) + 28));                                                           \
    } while (0)

/* One column over rows [0, len) (a multiple of 8): 32 rows in 8 registers, then 8 at a time. A
 * one-entry column (a copy with a scale: most of a compiled head's projections) keeps its weight
 * and input line out of the loop. Inlined with a constant epilogue. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
column_rows(const MatrixColumn *col, const double *in, size_t base, size_t ld, size_t len, KernelEpilogue e, __m256d b,
            double *o) {
    const __m256d zero = _mm256_setzero_pd();
    size_t i0 = 0;
    if (col->n == 1) {
        const __m256d w = _mm256_set1_pd(col->val[0]);
        const double *x0 = in + (size_t)(col->row[0] - base) * ld;
        for (; i0 + 32 <= len; i0 += 32) {
            const double *x = x0 + i0;
            double *oo = o + i0;
            __m256d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
            CHAIN_STEPS_32;
            STORE_32(oo);
        }
    }
    for (; i0 + 32 <= len; i0 += 32) {
        __m256d a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero, a6 = zero, a7 = zero;
        for (uint32_t k = 0; k < col->n; k++) {
            __m256d w = _mm256_set1_pd(col->val[k]);
            const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
            CHAIN_STEPS_32;
        }
        double *oo = o + i0;
        STORE_32(oo);
    }
    for (; i0 < len; i0 += 8) {
        __m256d a0 = zero, a1 = zero;
        for (uint32_t k = 0; k < col->n; k++) {
            __m256d w = _mm256_set1_pd(col->val[k]);
            const double *x = in + (size_t)(col->row[k] - base) * ld + i0;
            CHAIN_STEP(a0, 0);
            CHAIN_STEP(a1, 4);
        }
        double *oo = o + i0;
        _mm256_storeu_pd(oo, EPI256(a0, oo));
        _mm256_storeu_pd(oo + 4, EPI256(a1, oo + 4));
    }
}

/* One chain given to every unit: 32 rows in 8 registers, then 8 at a time. Inlined with a
 * constant epilogue. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
fan_out_rows(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units, size_t n_units,
             double *out, size_t out_ld) {
    const __m256d zero = _mm256_setzero_pd();
    size_t i0 = 0;
    for (; i0 + 32 <= len; i0 += 32) {
        __m256d a0 = _mm256_loadu_pd(c + i0), a1 = _mm256_loadu_pd(c + i0 + 4), a2 = _mm256_loadu_pd(c + i0 + 8);
        __m256d a3 = _mm256_loadu_pd(c + i0 + 12), a4 = _mm256_loadu_pd(c + i0 + 16), a5 = _mm256_loadu_pd(c + i0 + 20);
        __m256d a6 = _mm256_loadu_pd(c + i0 + 24), a7 = _mm256_loadu_pd(c + i0 + 28);
        for (size_t j = 0; j < n_units; j++) {
            const __m256d b = _mm256_set1_pd(bias[units[j]]);
            double *o = out + (size_t)units[j] * out_ld + i0;
            STORE_32(o);
        }
    }
    for (; i0 < len; i0 += 8) {
        __m256d a0 = _mm256_loadu_pd(c + i0), a1 = _mm256_loadu_pd(c + i0 + 4);
        for (size_t j = 0; j < n_units; j++) {
            const __m256d b = _mm256_set1_pd(bias[units[j]]);
            double *o = out + (size_t)units[j] * out_ld + i0;
            _mm256_storeu_pd(o, EPI256(a0, o));
            _mm256_storeu_pd(o + 4, EPI256(a1, o + 4));
        }
    }
}

AVX2 void kernel_avx2_fan_out(const double *c, size_t len, KernelEpilogue e, const double *bias, const uint32_t *units,
                              size_t n_units, double *out, size_t out_ld) {
    switch (e) {
    case KERNEL_STORE: fan_out_rows(c, len, KERNEL_STORE, bias, units, n_units, out, out_ld); break;
    case KERNEL_ADD: fan_out_rows(c, len, KERNEL_ADD, bias, units, n_units, out, out_ld); break;
    case KERNEL_FRESH: fan_out_rows(c, len, KERNEL_FRESH, bias, units, n_units, out, out_ld); break;
    case KERNEL_RELU: fan_out_rows(c, len, KERNEL_RELU, bias, units, n_units, out, out_ld); break;
    case KERNEL_GATE: fan_out_rows(c, len, KERNEL_GATE, bias, units, n_units, out, out_ld); break;
    }
}
#undef CHAIN_STEPS_32
#undef STORE_32

/* Column by column, each over all its rows: a panel's output lines are written one after another. */
#define COLUMNS_WITH(E)                                                                                             \
    for (size_t j = 0; j < n_cols; j++) {                                                                           \
        size_t c = which ? which[j] : j;                                                                            \
        column_rows(&cols[c], in, base, ld, len, E, _mm256_set1_pd(bias ? bias[c] : 0.0), out + c * out_ld);       \
    }

AVX2 void kernel_avx2_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in, size_t base,
                              size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out, size_t out_ld) {
    switch (e) {
    case KERNEL_STORE: COLUMNS_WITH(KERNEL_STORE) break;
    case KERNEL_ADD: COLUMNS_WITH(KERNEL_ADD) break;
    case KERNEL_FRESH: COLUMNS_WITH(KERNEL_FRESH) break;
    case KERNEL_RELU: COLUMNS_WITH(KERNEL_RELU) break;
    case KERNEL_GATE: COLUMNS_WITH(KERNEL_GATE) break;
    }
}
#undef COLUMNS_WITH
#undef EPI256

/* ---- attention ---- */

AVX2 size_t kernel_avx2_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows) {
    const __m256d zero = _mm256_setzero_pd();
    size_t n = 0;
    for (size_t c = 0; c < n_lines; c++)
        for (size_t j = 0; j < rows; j += 4) {
            __m256d x = rows - j >= 4 ? _mm256_loadu_pd(line[c] + o + j)
                                      : _mm256_maskload_pd(line[c] + o + j, live_mask(rows - j));
            n += (size_t)__builtin_popcount((unsigned)_mm256_movemask_pd(_mm256_cmp_pd(x, zero, _CMP_NEQ_UQ)));
        }
    return n;
}

/* The non-zero entries of x[0 .. n) (n <= 64) as bits (a NaN is not zero), without a branch: a
 * line's few non-zeros fall anywhere, so a test per group of keys would mispredict. */
__attribute__((target("avx2,fma"), always_inline)) static inline uint64_t nonzero_64(const double *x, size_t n) {
    const __m256d zero = _mm256_setzero_pd();
    uint64_t bits = 0;
    size_t r = 0;
    for (; r + 4 <= n; r += 4)
        bits |= (uint64_t)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(x + r), zero, _CMP_NEQ_UQ)) << r;
    if (r < n)
        bits |= (uint64_t)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_maskload_pd(x + r, live_mask(n - r)), zero, _CMP_NEQ_UQ))
                << r;
    return bits;
}

AVX2 void kernel_avx2_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows,
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

/* The score chain's step: a = fma(w, q, a) where q is not zero, a kept where it is (the skipped
 * product). */
#define SCORE_STEP(a, off)                                                                                         \
    do {                                                                                                           \
        __m256d q = _mm256_loadu_pd(x + (off));                                                                     \
        a = _mm256_blendv_pd(a, _mm256_fmadd_pd(w, q, a), _mm256_cmp_pd(q, zero, _CMP_NEQ_UQ));                    \
    } while (0)

/* The first step of a chain, from +0.0, needs no test when w is finite: a zero q gives
 * fma(w, q, +0.0) = (+-0) + (+0.0) = +0.0, the chain it skips. (Later steps keep the test: an
 * underflowing product can leave a -0.0 that adding a zero product would turn into +0.0.) */
#define SCORE_FIRST(a, off) a = _mm256_fmadd_pd(w, _mm256_loadu_pd(x + (off)), zero)

AVX2 void kernel_avx2_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines,
                             size_t o, size_t lanes, double *S) {
    const __m256d zero = _mm256_setzero_pd();
    for (size_t j = 0; j < n_keys; j++) {
        const uint32_t *dim = e->dim + j * e->stride;
        const double *val = e->val + j * e->stride;
        double *out = S + j * KERNEL_BLOCK;
        size_t n = e->count[j], i = kernel_first_lane(j, causal_first), first = n && isfinite(val[0]);
        for (; i + 16 <= lanes; i += 16) { /* 16 lanes in 4 registers */
            __m256d a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            if (first) {
                __m256d w = _mm256_set1_pd(val[0]);
                const double *x = lines[dim[0]] + o + i;
                SCORE_FIRST(a0, 0);
                SCORE_FIRST(a1, 4);
                SCORE_FIRST(a2, 8);
                SCORE_FIRST(a3, 12);
            }
            for (size_t k = first; k < n; k++) {
                __m256d w = _mm256_set1_pd(val[k]);
                const double *x = lines[dim[k]] + o + i;
                SCORE_STEP(a0, 0);
                SCORE_STEP(a1, 4);
                SCORE_STEP(a2, 8);
                SCORE_STEP(a3, 12);
            }
            _mm256_storeu_pd(out + i, a0), _mm256_storeu_pd(out + i + 4, a1);
            _mm256_storeu_pd(out + i + 8, a2), _mm256_storeu_pd(out + i + 12, a3);
        }
        for (; i < lanes; i += 4) { /* Q is read only at lanes < lanes */
            __m256i live = live_mask(lanes - i);
            __m256d a = zero;
            for (size_t k = 0; k < n; k++) {
                __m256d q = _mm256_maskload_pd(lines[dim[k]] + o + i, live);
                a = _mm256_blendv_pd(a, _mm256_fmadd_pd(_mm256_set1_pd(val[k]), q, a), _mm256_cmp_pd(q, zero, _CMP_NEQ_UQ));
            }
            _mm256_maskstore_pd(out + i, live, a);
        }
    }
}
#undef SCORE_STEP
#undef SCORE_FIRST

AVX2 void kernel_avx2_transpose(const double *T, size_t rows, size_t cols, double *S) {
    for (size_t q = 0; q < rows; q += 4)
        for (size_t j = 0; j < cols; j += 4) { /* the 4 x 4 tile at (q, j) */
            const double *t = T + q * KERNEL_BLOCK + j;
            __m256d r0 = _mm256_loadu_pd(t), r1 = _mm256_loadu_pd(t + KERNEL_BLOCK);
            __m256d r2 = _mm256_loadu_pd(t + 2 * KERNEL_BLOCK), r3 = _mm256_loadu_pd(t + 3 * KERNEL_BLOCK);
            __m256d a = _mm256_unpacklo_pd(r0, r1), b = _mm256_unpackhi_pd(r0, r1);
            __m256d c = _mm256_unpacklo_pd(r2, r3), d = _mm256_unpackhi_pd(r2, r3);
            double *s = S + j * KERNEL_BLOCK + q;
            _mm256_storeu_pd(s, _mm256_permute2f128_pd(a, c, 0x20));
            _mm256_storeu_pd(s + KERNEL_BLOCK, _mm256_permute2f128_pd(b, d, 0x20));
            _mm256_storeu_pd(s + 2 * KERNEL_BLOCK, _mm256_permute2f128_pd(a, c, 0x31));
            _mm256_storeu_pd(s + 3 * KERNEL_BLOCK, _mm256_permute2f128_pd(b, d, 0x31));
        }
}

/* The lanes q0 + t (t < 8) that see key j, as bits. */
static inline unsigned lanes_seeing(const AttendKeys *k, size_t j, size_t q0) {
    if (!k->causal || j <= k->first + q0) return 0xffu;
    size_t d = j - k->first - q0;
    return d >= 8 ? 0u : (0xffu << d) & 0xffu;
}

/* Value columns up to this many are summed in the pass that selects the keys; wider ones over a
 * list of the selected keys (fewer operations when few keys are selected). */
#define DIRECT_DV 2

/* The selecting pass of kernel_avx2_attend for a narrow value (dv <= DIRECT_DV; a constant where
 * inlined, so the sums stay in registers): keys [0, end) against the two registers' thresholds,
 * ties and sums continued in key order. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
direct_pass(const double *s, const __m256d thresholds[2], const AttendKeys *k, size_t q0, size_t full, size_t end,
            const double *V, size_t v_ld, size_t dv, __m256d *sum0, __m256d *sum1, __m256d ties[2]) {
    const __m256d one = _mm256_set1_pd(1.0);
    for (size_t j = 0; j < end; j++) {
        __m256d m0 = _mm256_cmp_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK), thresholds[0], _CMP_NLT_UQ);
        __m256d m1 = _mm256_cmp_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK + 4), thresholds[1], _CMP_NLT_UQ);
        if (j >= full) {
            unsigned see = lanes_seeing(k, j, q0);
            m0 = _mm256_and_pd(m0, _mm256_castsi256_pd(lane_mask(see)));
            m1 = _mm256_and_pd(m1, _mm256_castsi256_pd(lane_mask(see >> 4)));
        }
        /* ties >= +0.0 throughout, so adding +0.0 where unselected leaves it as it is */
        ties[0] = _mm256_add_pd(ties[0], _mm256_and_pd(m0, one));
        ties[1] = _mm256_add_pd(ties[1], _mm256_and_pd(m1, one));
#pragma GCC unroll 2
        for (size_t c = 0; c < dv; c++) {
            __m256d v = _mm256_set1_pd(V[c * v_ld + j]);
            sum0[c] = _mm256_blendv_pd(sum0[c], _mm256_add_pd(sum0[c], v), m0);
            sum1[c] = _mm256_blendv_pd(sum1[c], _mm256_add_pd(sum1[c], v), m1);
        }
    }
}

/* Eight lanes (two registers) at a time, each group on its own: its maxima over the keys its
 * lanes see (max_pd(x, best) is x > best ? x : best, so a NaN is never taken and a NaN best
 * stays), then the keys at or above the threshold: each value column summed over them in key
 * order (ties counted alike), in the selecting pass itself for a narrow value, or over a list of
 * the selected keys with their lane masks. Every lane of a group sees keys [0, full); only keys
 * [full, end) (at most 7, causal) need a mask. Lanes past `lanes` compute garbage, never stored. */
AVX2 void kernel_avx2_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld, size_t dv,
                             double *out, size_t out_ld, uint8_t *masks, uint32_t *keys) {
    const __m256d one = _mm256_set1_pd(1.0), tol = _mm256_set1_pd(k->tol), bos_extra = _mm256_set1_pd(k->bos_extra);
    bool direct = dv <= DIRECT_DV;
    for (size_t q0 = 0; q0 < lanes; q0 += 8) {
        size_t n_live = lanes - q0 < 8 ? lanes - q0 : 8, end = attend_last_key(k, q0 + n_live - 1) + 1, n_sel = 0;
        size_t full = attend_last_key(k, q0) + 1 < end ? attend_last_key(k, q0) + 1 : end;
        unsigned live = n_live == 8 ? 0xffu : (1u << n_live) - 1;
        const double *s = S + q0;
        __m256d best0 = _mm256_loadu_pd(s), best1 = _mm256_loadu_pd(s + 4);
        for (size_t j = 1; j < full; j++) {
            best0 = _mm256_max_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK), best0);
            best1 = _mm256_max_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK + 4), best1);
        }
        for (size_t j = full > 1 ? full : 1; j < end; j++) {
            unsigned see = lanes_seeing(k, j, q0);
            best0 = _mm256_blendv_pd(best0, _mm256_max_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK), best0),
                                     _mm256_castsi256_pd(lane_mask(see)));
            best1 = _mm256_blendv_pd(best1, _mm256_max_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK + 4), best1),
                                     _mm256_castsi256_pd(lane_mask(see >> 4)));
        }
        __m256d threshold0 = _mm256_sub_pd(best0, tol), threshold1 = _mm256_sub_pd(best1, tol);
        /* BOS (key 0, seen by every lane) weighs 1 + bos_extra where selected */
        __m256d bos0 = _mm256_cmp_pd(_mm256_loadu_pd(s), threshold0, _CMP_NLT_UQ);
        __m256d bos1 = _mm256_cmp_pd(_mm256_loadu_pd(s + 4), threshold1, _CMP_NLT_UQ);
        __m256d extra0 = _mm256_and_pd(bos0, bos_extra), extra1 = _mm256_and_pd(bos1, bos_extra);
        __m256d ties0 = _mm256_setzero_pd(), ties1 = _mm256_setzero_pd();
        __m256d sum0[DIRECT_DV], sum1[DIRECT_DV];
        if (direct) {
            for (size_t c = 0; c < dv; c++) {
                __m256d v0 = _mm256_set1_pd(V[c * v_ld]);
                sum0[c] = _mm256_mul_pd(extra0, v0), sum1[c] = _mm256_mul_pd(extra1, v0);
            }
            const __m256d thresholds[2] = {threshold0, threshold1};
            __m256d ties[2] = {ties0, ties1};
            if (dv == 1) direct_pass(s, thresholds, k, q0, full, end, V, v_ld, 1, sum0, sum1, ties);
            else if (dv == 2) direct_pass(s, thresholds, k, q0, full, end, V, v_ld, 2, sum0, sum1, ties);
            else direct_pass(s, thresholds, k, q0, full, end, V, v_ld, 0, sum0, sum1, ties);
            ties0 = ties[0], ties1 = ties[1];
        } else {
            for (size_t j = 0; j < end; j++) { /* appended without a branch */
                unsigned sel =
                    (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK), threshold0, _CMP_NLT_UQ)) |
                    (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(s + j * KERNEL_BLOCK + 4), threshold1, _CMP_NLT_UQ)) << 4;
                sel &= live;
                if (j >= full) sel &= lanes_seeing(k, j, q0);
                keys[n_sel] = (uint32_t)j;
                masks[n_sel] = (uint8_t)sel;
                n_sel += sel != 0;
            }
            for (size_t t = 0; t < n_sel; t++) {
                ties0 = _mm256_blendv_pd(ties0, _mm256_add_pd(ties0, one), _mm256_castsi256_pd(lane_mask(masks[t])));
                ties1 = _mm256_blendv_pd(ties1, _mm256_add_pd(ties1, one), _mm256_castsi256_pd(lane_mask(masks[t] >> 4u)));
            }
        }
        __m256d denominator0 = _mm256_add_pd(ties0, extra0), denominator1 = _mm256_add_pd(ties1, extra1);
        __m256i store0 = lane_mask(live), store1 = lane_mask(live >> 4);
        for (size_t c = 0; c < dv; c++) {
            __m256d total0, total1;
            if (direct) {
                total0 = sum0[c], total1 = sum1[c];
            } else {
                const double *v = V + c * v_ld;
                __m256d v0 = _mm256_set1_pd(v[0]);
                total0 = _mm256_mul_pd(extra0, v0), total1 = _mm256_mul_pd(extra1, v0);
                for (size_t t = 0; t < n_sel; t++) {
                    __m256d x = _mm256_set1_pd(v[keys[t]]);
                    total0 = _mm256_blendv_pd(total0, _mm256_add_pd(total0, x), _mm256_castsi256_pd(lane_mask(masks[t])));
                    total1 = _mm256_blendv_pd(total1, _mm256_add_pd(total1, x), _mm256_castsi256_pd(lane_mask(masks[t] >> 4u)));
                }
            }
            _mm256_maskstore_pd(out + c * out_ld + q0, store0, _mm256_div_pd(total0, denominator0));
            if (n_live > 4) _mm256_maskstore_pd(out + c * out_ld + q0 + 4, store1, _mm256_div_pd(total1, denominator1));
        }
    }
}
/* ---- readout ---- */

/* Four rows at a time: per lane, the ones counted, any entry off, the last one's line (as doubles:
 * small integers, exact). */
AVX2 void kernel_avx2_one_hot(const double *lines, size_t ld, size_t count, size_t rows, double tol, uint32_t *hot) {
    const __m256d one = _mm256_set1_pd(1.0), t = _mm256_set1_pd(tol), zero = _mm256_setzero_pd();
    const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
    for (size_t j = 0; j < rows; j += 4) {
        size_t n = rows - j < 4 ? rows - j : 4;
        __m256i live = live_mask(n);
        __m256d ones = zero, at = zero, off = zero;
        for (size_t c = 0; c < count; c++) {
            __m256d v = _mm256_maskload_pd(lines + c * ld + j, live);
            __m256d is_one = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(v, one), abs), t, _CMP_LE_OQ);
            off = _mm256_or_pd(off, _mm256_andnot_pd(is_one, _mm256_cmp_pd(_mm256_and_pd(v, abs), t, _CMP_GT_OQ)));
            ones = _mm256_add_pd(ones, _mm256_and_pd(is_one, one));
            at = _mm256_blendv_pd(at, _mm256_set1_pd((double)c), is_one);
        }
        double a[4], k[4], f[4];
        _mm256_storeu_pd(a, at), _mm256_storeu_pd(k, ones), _mm256_storeu_pd(f, off);
        for (size_t i = 0; i < n; i++)
            hot[j + i] = k[i] == 1.0 && f[i] == 0.0 ? (uint32_t)a[i] : KERNEL_NOT_ONE_HOT;
    }
}

/* ---- peak ---- */

/* 12 independent FMA chains of 4 doubles: enough to keep two FMA pipes of latency 4 busy. */
AVX2 double kernel_avx2_fma_loop(size_t iters) {
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

/* ---- float32 ---- */

/* The epilogue of 8 float chains (kernels.h KernelEpilogue; max(t, +0.0f) as the float64 one). */
#define EPI256F(acc, o)                                                                                             \
    (e == KERNEL_STORE  ? (acc)                                                                                     \
     : e == KERNEL_ADD  ? _mm256_add_ps(_mm256_loadu_ps(o), (acc))                                                  \
     : e == KERNEL_FRESH ? _mm256_add_ps((acc), zero)                                                               \
     : e == KERNEL_RELU ? _mm256_max_ps(_mm256_add_ps((acc), b), zero)                                              \
                        : _mm256_mul_ps(_mm256_loadu_ps(o), _mm256_add_ps((acc), b)))

AVX2 void kernel_avx2_columns32(const MatrixColumn32 *cols, const uint32_t *which, size_t n_cols, const float *in,
                                size_t base, size_t ld, size_t len, KernelEpilogue e, const float *bias, const float *init,
                                size_t init_ld, float *out, size_t out_ld) {
    const __m256 zero = _mm256_setzero_ps();
    size_t i0 = 0;
    for (; i0 + 32 <= len; i0 += 32) /* 32 rows in 4 registers */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn32 *col = &cols[c];
            const __m256 b = _mm256_set1_ps(bias ? bias[c] : 0.0f);
            __m256 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            if (init) {
                const float *t = init + c * init_ld + i0;
                a0 = _mm256_loadu_ps(t), a1 = _mm256_loadu_ps(t + 8), a2 = _mm256_loadu_ps(t + 16);
                a3 = _mm256_loadu_ps(t + 24);
            }
            for (uint32_t k = 0; k < col->n; k++) {
                __m256 w = _mm256_set1_ps(col->val[k]);
                const float *x = in + (size_t)(col->row[k] - base) * ld + i0;
                a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x), a0);
                a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + 8), a1);
                a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + 16), a2);
                a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + 24), a3);
            }
            float *o = out + c * out_ld + i0;
            _mm256_storeu_ps(o, EPI256F(a0, o));
            _mm256_storeu_ps(o + 8, EPI256F(a1, o + 8));
            _mm256_storeu_ps(o + 16, EPI256F(a2, o + 16));
            _mm256_storeu_ps(o + 24, EPI256F(a3, o + 24));
        }
    for (; i0 < len; i0 += 8) /* then 8 at a time (len is a multiple of 8) */
        for (size_t j = 0; j < n_cols; j++) {
            size_t c = which ? which[j] : j;
            const MatrixColumn32 *col = &cols[c];
            const __m256 b = _mm256_set1_ps(bias ? bias[c] : 0.0f);
            __m256 a = init ? _mm256_loadu_ps(init + c * init_ld + i0) : zero;
            for (uint32_t k = 0; k < col->n; k++)
                a = _mm256_fmadd_ps(_mm256_set1_ps(col->val[k]), _mm256_loadu_ps(in + (size_t)(col->row[k] - base) * ld + i0), a);
            float *o = out + c * out_ld + i0;
            _mm256_storeu_ps(o, EPI256F(a, o));
        }
}
#undef EPI256F

AVX2 double kernel_avx2_fma_loop32(size_t iters) {
    __m256 a[12], x = _mm256_set1_ps(1.0f - 1e-6f), y = _mm256_set1_ps(1e-6f);
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_ps((float)k);
    for (size_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_fmadd_ps(a[k], x, y);
    __m256 s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_ps(s, a[k]);
    float t[8];
    _mm256_storeu_ps(t, s);
    return (double)t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#endif
