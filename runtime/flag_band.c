/* The error flag's band (flag_band.h): what the compiler builds the flag's ramps inside, and what
 * the runtime tests before it calls a set flag on an answered input a disagreement. */
#include "runtime/flag_band.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/forward.h"
#include "runtime/precision.h"
#include "ir/value.h"

double flag_rounding(size_t n, const size_t *dims, const double *coefs, const double *bound, double abs_extra) {
    int e;
    if (n == 1 && fabs(frexp(coefs[0], &e)) == 0.5) return 0.0;
    double s = fabs(abs_extra);
    for (size_t t = 0; t < n; t++) s += fabs(coefs[t]) * bound[dims[t]];
    return (4.0 * (double)n + 4.0) * 0x1p-53 * s;
}

double flag_margin_eta(const ModelMargin *g, const double *bound) {
    double c = fmax(fabs(g->thresholds[0]), fabs(g->thresholds[g->n_thresholds - 1]));
    return FLAG_MARGIN_REL * g->m + flag_rounding(g->n_terms, g->dims, g->coefs, bound, c);
}

/* |e| or |e - 1| in (FLAG_BAND_ONEHOT t, t] for an entry of [dim, dim + count). */
static bool onehot_band(const double *x, size_t dim, size_t count, size_t *at) {
    double t = MODEL_ONEHOT_TOL, lo = FLAG_BAND_ONEHOT * t;
    for (size_t j = 0; j < count; j++) {
        double a = fabs(x[dim + j]), b = fabs(x[dim + j] - 1.0);
        if ((a > lo && a <= t) || (b > lo && b <= t)) {
            *at = dim + j;
            return true;
        }
    }
    return false;
}

/* model_value_bounds, computed at the first need. */
static const double *bounds(const Model *m, double **bound) {
    if (!*bound) {
        *bound = malloc((m->d_model ? m->d_model : 1) * sizeof **bound);
        if (!*bound) abort();
        model_value_bounds(m, *bound);
    }
    return *bound;
}

/* delta of the output's readout (flag_band.h). */
static double readout_rounding(const Model *m, const double *bound) {
    size_t n = 0, *dims = malloc((m->d_model ? m->d_model : 1) * sizeof *dims);
    double *coefs = malloc((m->d_model ? m->d_model : 1) * sizeof *coefs);
    if (!dims || !coefs) abort();
    for (size_t d = 0; d < m->d_model; d++)
        if (m->out_readout[d] != 0) dims[n] = d, coefs[n++] = m->out_readout[d];
    double r = flag_rounding(n, dims, coefs, bound, 0);
    free(dims);
    free(coefs);
    return r;
}

/* The output's decoding at one row: v within the margin of the nearest member (of the input's
 * length), but farther than FLAG_BAND_DECODE of it; or, real-valued and read as an int or bool,
 * within the error bound b of the nearest integer but farther than b - 2 delta. */
static bool output_band(const Model *m, const double *x, size_t n_input, double **bound, double *v_out, double *near_out) {
    if (m->output_kind != MODEL_OUT_NUMERICAL) return false;
    double v = 0.0;
    for (size_t j = 0; j < m->d_model; j++) v += x[j] * m->out_readout[j];
    *v_out = v;
    if (m->out_count == 0) {
        double r = round(v), b = m->out_error_bound + m->out_error_rel * fabs(r), d = fabs(v - r);
        *near_out = r;
        return m->out_kind_count && d <= b && d > b - 2 * readout_rounding(m, bounds(m, bound));
    }
    size_t count;
    const Value *set = model_output_values(m, n_input, &count);
    for (size_t i = 0; i < count; i++) {
        double u = value_as_double(set[i]), d = fabs(v - u);
        if (d > FLAG_BAND_DECODE * m->out_margin && d <= m->out_margin) {
            *near_out = u;
            return true;
        }
    }
    return false;
}

bool flag_in_band(const Model *m, const double *X, size_t n, char *note, size_t notesize) {
    size_t D = m->d_model;
    double *bound = NULL;
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        const double *x = X + (i + 1) * D;
        size_t at;
        double v, c;
        if ((m->output_kind == MODEL_OUT_CATEGORICAL && onehot_band(x, m->out_dim, m->out_count, &at)) ||
            (m->output_kind == MODEL_OUT_NUMERICAL && onehot_band(x, m->out_kind_dim, m->out_kind_count, &at))) {
            snprintf(note, notesize, "at position %zu, entry %s of the output is %.17g, within %g of 0 or 1 but not %g", i,
                     m->labels[at], x[at], MODEL_ONEHOT_TOL, FLAG_BAND_ONEHOT * MODEL_ONEHOT_TOL);
            found = true;
        } else if (output_band(m, x, n, &bound, &v, &c)) {
            snprintf(note, notesize, "at position %zu, the output's value %.17g is near the edge of the interval that "
                     "decodes to %.17g", i, v, c);
            found = true;
        }
        for (size_t k = 0; k < m->n_checks && !found; k++) {
            const ModelCheck *ck = &m->checks[k];
            if (ck->kind == MODEL_CHECK_ONE_HOT && onehot_band(x, ck->dim, ck->count, &at)) {
                snprintf(note, notesize, "at position %zu, entry %s of s-op %s is %.17g, within %g of 0 or 1 but not %g", i,
                         m->labels[at], ck->what, x[at], MODEL_ONEHOT_TOL, FLAG_BAND_ONEHOT * MODEL_ONEHOT_TOL);
                found = true;
            } else if (ck->kind == MODEL_CHECK_SINGLE_KEY) {
                double var = x[ck->dim + 1] - x[ck->dim] * x[ck->dim];
                if (var >= FLAG_BAND_VARIANCE && var < 0.125) {
                    snprintf(note, notesize, "at position %zu, the variance of the keys s-op %s selects is %.17g, in "
                             "[%g, 1/8)", i, ck->what, var, FLAG_BAND_VARIANCE);
                    found = true;
                }
            } else if (ck->kind == MODEL_CHECK_MARGIN) {
                const ModelMargin *g = &m->margins[ck->dim];
                double eta = flag_margin_eta(g, bounds(m, &bound)), s = 0.0;
                for (size_t t = 0; t < g->n_terms; t++) s += g->coefs[t] * x[g->dims[t]];
                for (size_t j = 0; j < g->n_thresholds && !found; j++) {
                    double d = fabs(s - g->thresholds[j]);
                    if (d > g->m && d < g->m + 3 * eta) {
                        snprintf(note, notesize, "at position %zu, s-op %s is %.17g, farther than %g from the threshold "
                                 "%.17g but by less than %.3g", i, ck->what, s, g->m, g->thresholds[j], 3 * eta);
                        found = true;
                    }
                }
            }
        }
    }
    free(bound);
    return found;
}
