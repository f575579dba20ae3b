#include "runtime/kernels.h"

#include "runtime/kernels_avx2.h"
#include "runtime/kernels_avx512.h"
#include "runtime/matrix.h"

#include <math.h>

/* The vector kernels exist (runtime/kernels_avx2.h, kernels_avx512.h). */
#if defined(KERNEL_HAVE_AVX2) && defined(KERNEL_HAVE_AVX512)
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


/* Chains (temporary) then the epilogue, 8 rows at a time: vectorised by the compiler or not,
 * each element gets exactly the one rounding per operation stated in kernels.h. */
static void epilogue_scalar(const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
    for (size_t i = 0; i < len; i++) {
        double t;
        switch (e) {
        case KERNEL_STORE: out[i] = c[i]; break;
        case KERNEL_ADD: out[i] = out[i] + c[i]; break;
        case KERNEL_FRESH: out[i] = c[i] + 0.0; break;
        case KERNEL_RELU: t = c[i] + bias; out[i] = t > 0.0 ? t : 0.0; break;
        case KERNEL_GATE: out[i] = out[i] * (c[i] + bias); break;
        }
    }
}


void kernel_chain_to(const uint32_t *row, const double *val, size_t n, const double *in, size_t base, size_t ld,
                     size_t len, KernelEpilogue e, double bias, double *out) {
    double c[KERNEL_BLOCK];
    for (size_t i0 = 0; i0 < len; i0 += KERNEL_BLOCK) {
        size_t l = len - i0 < KERNEL_BLOCK ? len - i0 : KERNEL_BLOCK;
        KernelIsa isa = kernel_isa();
        kernel_chain_isa(isa, row, val, n, in + i0, base, ld, l, NULL, e == KERNEL_STORE ? out + i0 : c);
        if (e != KERNEL_STORE) kernel_epilogue_isa(isa, c, l, e, bias, out + i0);
    }
}

void kernel_epilogue(const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
    kernel_epilogue_isa(kernel_isa(), c, len, e, bias, out);
}

void kernel_epilogue_isa(KernelIsa isa, const double *c, size_t len, KernelEpilogue e, double bias, double *out) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_epilogue(c, len, e, bias, out);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_epilogue(c, len, e, bias, out);
        return;
    }
#endif
    (void)isa;
    epilogue_scalar(c, len, e, bias, out);
}

/* ---- many columns per call ---- */

static double epi_scalar(double c, KernelEpilogue e, double bias, double o) {
    double t;
    switch (e) {
    case KERNEL_ADD: return o + c;
    case KERNEL_FRESH: return c + 0.0;
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


void kernel_columns(const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in, size_t base,
                    size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out, size_t out_ld) {
    kernel_columns_isa(kernel_isa(), cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
}

void kernel_columns_isa(KernelIsa isa, const MatrixColumn *cols, const uint32_t *which, size_t n_cols, const double *in,
                        size_t base, size_t ld, size_t len, KernelEpilogue e, const double *bias, double *out,
                        size_t out_ld) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_columns(cols, which, n_cols, in, base, ld, len, e, bias, out, out_ld);
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
    if (isa == KERNEL_AVX512) {
        kernel_avx512_fan_out(c, len, e, bias, units, n_units, out, out_ld);
        return;
    }
    if (isa == KERNEL_AVX2) {
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


void kernel_scores(const KeyEntries *e, size_t n_keys, size_t causal_first, const double *const *lines, size_t o,
                   size_t lanes, double *S) {
    kernel_scores_isa(kernel_isa(), e, n_keys, causal_first, lines, o, lanes, S);
}

void kernel_scores_isa(KernelIsa isa, const KeyEntries *e, size_t n_keys, size_t causal_first,
                       const double *const *lines, size_t o, size_t lanes, double *S) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_scores(e, n_keys, causal_first, lines, o, lanes, S);
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


size_t kernel_count_nonzero(const double *const *line, size_t o, size_t n_lines, size_t rows) {
    return kernel_count_nonzero_isa(kernel_isa(), line, o, n_lines, rows);
}

size_t kernel_count_nonzero_isa(KernelIsa isa, const double *const *line, size_t o, size_t n_lines, size_t rows) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) return kernel_avx512_count_nonzero(line, o, n_lines, rows);
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


void kernel_gather_keys(const double *const *lines, const double *scale, size_t o, size_t rows, const KeyEntries *e) {
    kernel_gather_keys_isa(kernel_isa(), lines, scale, o, rows, e);
}

void kernel_gather_keys_isa(KernelIsa isa, const double *const *lines, const double *scale, size_t o, size_t rows,
                            const KeyEntries *e) {
    for (size_t j = 0; j < rows; j++) e->count[j] = 0;
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_gather_keys(lines, scale, o, rows, e);
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


void kernel_attend(const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld, size_t dv,
                   double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch) {
    kernel_attend_isa(kernel_isa(), S, k, lanes, V, v_ld, dv, out, out_ld, mask_scratch, key_scratch);
}

void kernel_attend_isa(KernelIsa isa, const double *S, const AttendKeys *k, size_t lanes, const double *V, size_t v_ld,
                       size_t dv, double *out, size_t out_ld, uint8_t *mask_scratch, uint32_t *key_scratch) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_attend(S, k, lanes, V, v_ld, dv, out, out_ld, mask_scratch, key_scratch);
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
        kernel_avx512_chain(row, val, n, in, base, ld, len, init, out);
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

/* ---- readout ---- */

static void one_hot_scalar(const double *lines, size_t ld, size_t count, size_t rows, double tol, uint32_t *hot) {
    for (size_t j = 0; j < rows; j++) {
        size_t ones = 0, at = 0;
        bool off = false;
        for (size_t c = 0; c < count; c++) {
            double v = lines[c * ld + j];
            bool one = fabs(v - 1.0) <= tol;
            ones += one, at = one ? c : at;
            off |= !one && fabs(v) > tol;
        }
        hot[j] = ones == 1 && !off ? (uint32_t)at : KERNEL_NOT_ONE_HOT;
    }
}

void kernel_one_hot(const double *lines, size_t ld, size_t count, size_t rows, double tol, uint32_t *hot) {
    kernel_one_hot_isa(kernel_isa(), lines, ld, count, rows, tol, hot);
}

void kernel_one_hot_isa(KernelIsa isa, const double *lines, size_t ld, size_t count, size_t rows, double tol,
                        uint32_t *hot) {
#ifdef KERNEL_X86
    if (isa == KERNEL_AVX512) {
        kernel_avx512_one_hot(lines, ld, count, rows, tol, hot);
        return;
    }
    if (isa == KERNEL_AVX2) {
        kernel_avx2_one_hot(lines, ld, count, rows, tol, hot);
        return;
    }
#endif
    (void)isa;
    one_hot_scalar(lines, ld, count, rows, tol, hot);
}

/* ---- peak ---- */


double kernel_peak_flops(double (*clock_s)(void), double seconds, double *checksum) {
    KernelIsa isa = kernel_isa();
    size_t iters = 1 << 16, lanes = isa == KERNEL_AVX512 ? 8 : isa == KERNEL_AVX2 ? 4 : 1;
    double best = 0.0, sum = 0.0, t_end = clock_s() + seconds;
    while (clock_s() < t_end) {
        double t0 = clock_s();
#ifdef KERNEL_X86
        if (isa == KERNEL_AVX512) sum += kernel_avx512_fma_loop(iters);
        else if (isa == KERNEL_AVX2) sum += kernel_avx2_fma_loop(iters);
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
