#include "runtime/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void model_init(Model *m) {
    memset(m, 0, sizeof *m);
    arena_init(&m->arena);
}

void model_free(Model *m) {
    matrix_free_all(&m->matrices);
    arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}

Matrix model_matrix(Model *m, size_t rows, size_t cols) { return matrix_new(&m->matrices, rows, cols); }

/* Every stored parameter block: embeddings, head and MLP weights, biases, readout. */
typedef struct Counter { size_t all, nonzero; } Counter;

static void count(Counter *c, const double *x, size_t n) {
    if (!x) return;
    c->all += n;
    for (size_t i = 0; i < n; i++) c->nonzero += x[i] != 0.0;
}

static void count_matrix(Counter *c, const Matrix *w) {
    c->all += w->rows * w->cols;
    c->nonzero += matrix_nonzero(w);
}

static Counter count_params(const Model *m) {
    Counter c = {0, 0};
    count_matrix(&c, &m->token_embed);
    count_matrix(&c, &m->pos_embed);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            const Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            for (int k = 0; k < 4; k++) count_matrix(&c, w[k]);
        }
        const ModelMlp *M = &L->mlp;
        count_matrix(&c, &M->w1);
        count(&c, M->b1, M->w1.cols);
        count_matrix(&c, &M->w2);
        count(&c, M->b2, m->d_model);
        if (M->gated) {
            count_matrix(&c, &M->w3);
            count(&c, M->b3, M->w3.cols);
        }
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) count(&c, m->out_readout, m->d_model);
    return c;
}

size_t model_param_count(const Model *m) { return count_params(m).all; }
size_t model_nonzero_count(const Model *m) { return count_params(m).nonzero; }

void model_softmax_beta(const Model *m, double eps, double *within, double *exact) {
    *within = *exact = 0;
    for (size_t l = 0; l < m->n_layers; l++)
        for (size_t h = 0; h < m->layers[l].n_heads; h++) {
            double tau = m->layers[l].heads[h].tie_tol;
            double w = tau > 0 ? log(fmax((double)m->max_len, 1) / eps) / tau : INFINITY;
            double e = tau > 0 ? 746 / tau : INFINITY; /* exp(-x) is 0.0 for x > 745.14 */
            *within = fmax(*within, w);
            *exact = fmax(*exact, e);
        }
}

const Value *model_output_values(const Model *m, size_t n_input, size_t *count) {
    if (m->out_len_count == 0) {
        *count = m->out_count;
        return m->out_values;
    }
    if (n_input == 0 || n_input > m->out_len_count || !m->out_len_start) {
        *count = 0;
        return NULL;
    }
    *count = m->out_len_start[n_input] - m->out_len_start[n_input - 1];
    return m->out_len_values + m->out_len_start[n_input - 1];
}

static bool out_fail(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool out_fail(char *err, size_t errsize, const char *fmt, ...) {
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool is_number_kind(ValueKind k) { return k == VAL_BOOL || k == VAL_INT || k == VAL_FLOAT; }

/* The same atom: kind and exact value (a float's bits, so 0.0 and -0.0 differ). */
static bool same_member(Value a, Value b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_INT: return a.as.i == b.as.i;
    case VAL_FLOAT: return memcmp(&a.as.f, &b.as.f, sizeof a.as.f) == 0;
    case VAL_STR: return false;
    }
    return false;
}

/* The rules of one numerical value set (values[count]): numbers, finite, kinds covered by the
 * kind block, sorted, no member twice; when `strict` (a set the output decodes against), also
 * members sharing a numeric value only with a kind block, and 2 * margin below every gap. `where`
 * ends each message ("" or " (inputs of length N)"). */
static bool check_value_set(const Model *m, const Value *values, size_t count, bool strict, const char *where,
                            char *err, size_t errsize) {
    size_t kc = m->out_kind_count;
    char a[64], b[64];
    for (size_t i = 0; i < count; i++) {
        Value v = values[i];
        if (!is_number_kind(v.kind))
            return out_fail(err, errsize, "numerical output value %zu is not a number%s", i, where);
        if (v.kind == VAL_FLOAT && !isfinite(v.as.f))
            return out_fail(err, errsize, "numerical output value %zu is not finite%s", i, where);
        if (kc) {
            bool covered = false;
            for (size_t j = 0; j < kc; j++) covered |= m->out_kinds[j] == v.kind;
            if (!covered) {
                value_format(v, a, sizeof a);
                return out_fail(err, errsize, "output value %s has kind %s, which the kind block lacks%s", a,
                                value_kind_name(v.kind), where);
            }
        }
        if (i == 0) continue;
        Value u = values[i - 1];
        double x = value_as_double(u), y = value_as_double(v);
        const char *fault = NULL; /* formatted only on failure: a set may hold 10^5 values */
        if (y < x) fault = "output values are not sorted ascending (%s before %s)%s";
        else if (y == x && u.kind == v.kind && strict) /* the union of per-length sets may hold -0.0 and 0.0 */
            fault = "output values %s and %s have the same kind and numeric value%s";
        else if (y == x && strict && !kc)
            fault = "output values %s and %s share a numeric value but the output has no kind block to tell them "
                    "apart%s";
        if (fault) {
            value_format(u, a, sizeof a);
            value_format(v, b, sizeof b);
            return out_fail(err, errsize, fault, a, b, where);
        }
        if (y != x && strict && !(2 * m->out_margin < y - x)) {
            value_format(u, a, sizeof a);
            value_format(v, b, sizeof b);
            return out_fail(err, errsize, "output margin %.17g is not below half the gap between output values %s and "
                            "%s%s", m->out_margin, a, b, where);
        }
    }
    return true;
}

/* Whether the sorted set values[count] holds the atom v. */
static bool set_contains(const Value *values, size_t count, Value v) {
    double x = value_as_double(v);
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (value_as_double(values[mid]) < x) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < count && value_as_double(values[lo]) == x; lo++)
        if (same_member(values[lo], v)) return true;
    return false;
}

/* The per-length value sets: max_len ranges, consistent offsets, each range a strict value set
 * whose members out_values (already checked) contains. */
static bool check_len_values(const Model *m, char *err, size_t errsize) {
    if (m->output_kind != MODEL_OUT_NUMERICAL)
        return out_fail(err, errsize, "per-length output values are for numerical outputs only");
    if (m->out_len_count != m->max_len)
        return out_fail(err, errsize, "output has per-length values for %zu lengths, but max_len is %zu",
                        m->out_len_count, m->max_len);
    if (m->out_count == 0)
        return out_fail(err, errsize, "output has per-length values but no values (their union)");
    const size_t *start = m->out_len_start;
    if (!start || start[0] != 0) return out_fail(err, errsize, "output per-length offsets are missing or do not start at 0");
    for (size_t n = 1; n <= m->out_len_count; n++)
        if (start[n] < start[n - 1]) return out_fail(err, errsize, "output per-length offsets decrease at length %zu", n);
    if (start[m->out_len_count] && !m->out_len_values) return out_fail(err, errsize, "output has no per-length values");
    char where[64], a[64];
    for (size_t n = 1; n <= m->out_len_count; n++) {
        const Value *v = m->out_len_values + start[n - 1];
        size_t count = start[n] - start[n - 1];
        snprintf(where, sizeof where, " (inputs of length %zu)", n);
        if (!check_value_set(m, v, count, true, where, err, errsize)) return false;
        for (size_t i = 0; i < count; i++)
            if (!set_contains(m->out_values, m->out_count, v[i])) {
                value_format(v[i], a, sizeof a);
                return out_fail(err, errsize, "output value %s of length %zu is not among the output values", a, n);
            }
    }
    return true;
}

bool model_check_output(const Model *m, char *err, size_t errsize) {
    size_t D = m->d_model;
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        if (m->out_count == 0 || m->out_dim > D || m->out_count > D - m->out_dim)
            return out_fail(err, errsize, "output block [%zu, %zu) is empty or outside the residual (D = %zu)",
                            m->out_dim, m->out_dim + m->out_count, D);
        if (!m->out_values) return out_fail(err, errsize, "output has no values");
        if (m->out_len_count) return check_len_values(m, err, errsize);
        return true;
    }
    if (m->output_kind != MODEL_OUT_NUMERICAL) return out_fail(err, errsize, "output kind is unknown");
    if (!m->out_readout) return out_fail(err, errsize, "numerical output has no readout");
    if (!isfinite(m->out_margin) || m->out_margin < 0)
        return out_fail(err, errsize, "output margin must be a finite number >= 0");
    if (!isfinite(m->out_error_bound) || m->out_error_bound < 0)
        return out_fail(err, errsize, "output error bound must be a finite number >= 0");
    if (!isfinite(m->out_error_rel) || m->out_error_rel < 0 || m->out_error_rel >= 1)
        return out_fail(err, errsize, "output relative error bound must be a finite number in [0, 1)");
    if (m->out_count && !m->out_values) return out_fail(err, errsize, "output has no values");
    size_t kd = m->out_kind_dim, kc = m->out_kind_count;
    if (kc) {
        if (kd > D || kc > D - kd || kc > 3 || !m->out_kinds)
            return out_fail(err, errsize, "output kind block [%zu, %zu) is outside the residual (D = %zu) or has more "
                            "than 3 dims", kd, kd + kc, D);
        for (size_t i = 0; i < kc; i++) {
            if (!is_number_kind(m->out_kinds[i]))
                return out_fail(err, errsize, "output kind block dim %zu is not bool, int or float", i);
            for (size_t j = 0; j < i; j++)
                if (m->out_kinds[j] == m->out_kinds[i])
                    return out_fail(err, errsize, "output kind block names kind %s twice", value_kind_name(m->out_kinds[i]));
        }
    }
    /* with per-length sets, the global set is only their union: the decoding rules hold per length */
    if (!check_value_set(m, m->out_values, m->out_count, m->out_len_count == 0, "", err, errsize)) return false;
    return m->out_len_count ? check_len_values(m, err, errsize) : true;
}

static bool shape_is(const Matrix *w, size_t rows, size_t cols) {
    return w->rows == rows && w->cols == cols && (rows * cols == 0 || w->store);
}

bool model_check_layers(const Model *m, char *err, size_t errsize) {
    size_t D = m->d_model;
    if (D == 0) return out_fail(err, errsize, "d_model is 0");
    if (!shape_is(&m->token_embed, m->n_vocab + 1, D))
        return out_fail(err, errsize, "embed.token is %zu x %zu, expected %zu x %zu", m->token_embed.rows,
                        m->token_embed.cols, m->n_vocab + 1, D);
    if (!shape_is(&m->pos_embed, m->max_len + 1, D))
        return out_fail(err, errsize, "embed.pos is %zu x %zu, expected %zu x %zu", m->pos_embed.rows, m->pos_embed.cols,
                        m->max_len + 1, D);
    if (m->n_layers && !m->layers) return out_fail(err, errsize, "the model has %zu layers but none stored", m->n_layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        if (L->n_heads && !L->heads) return out_fail(err, errsize, "layer %zu has %zu heads but none stored", l, L->n_heads);
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            size_t dk = H->wq.cols, dv = H->wv.cols;
            if (!shape_is(&H->wq, D, dk) || !shape_is(&H->wk, D, dk) || !shape_is(&H->wv, D, dv) ||
                !shape_is(&H->wo, dv, D))
                return out_fail(err, errsize, "layer %zu head %zu: wq, wk, wv, wo are %zux%zu, %zux%zu, %zux%zu, %zux%zu; "
                                "expected D x dk, D x dk, D x dv, dv x D (D = %zu)", l, h, H->wq.rows, H->wq.cols,
                                H->wk.rows, H->wk.cols, H->wv.rows, H->wv.cols, H->wo.rows, H->wo.cols, D);
            if (!isfinite(H->tie_tol) || H->tie_tol < 0)
                return out_fail(err, errsize, "layer %zu head %zu: tie tolerance %g is not a finite number >= 0", l, h,
                                H->tie_tol);
            if (!isfinite(H->bos_extra) || H->bos_extra < 0 || H->bos_extra > MODEL_MAX_BOS_EXTRA)
                return out_fail(err, errsize, "layer %zu head %zu: BOS extra weight %g is not a number in [0, %g]", l, h,
                                H->bos_extra, MODEL_MAX_BOS_EXTRA);
        }
        const ModelMlp *M = &L->mlp;
        size_t hidden = M->w1.cols;
        if (!shape_is(&M->w1, D, hidden) || !shape_is(&M->w2, hidden, D) || (hidden && !M->b1) || !M->b2)
            return out_fail(err, errsize, "layer %zu MLP: w1 is %zu x %zu and w2 %zu x %zu (or a bias is missing); expected "
                            "D x H and H x D (D = %zu)", l, M->w1.rows, M->w1.cols, M->w2.rows, M->w2.cols, D);
        if (M->gated && (!shape_is(&M->w3, D, hidden) || (hidden && !M->b3)))
            return out_fail(err, errsize, "layer %zu gated MLP: w3 is %zu x %zu (or b3 is missing); expected D x H = %zu x "
                            "%zu, like w1", l, M->w3.rows, M->w3.cols, D, hidden);
    }
    return true;
}

static bool check_margin(const Model *m, const ModelCheck *c, size_t i, char *err, size_t errsize) {
    if (c->count != 1 || c->dim >= m->n_margins || !m->margins)
        return out_fail(err, errsize, "check %zu (margin) names margin %zu (count %zu) of %zu", i, c->dim, c->count,
                        m->n_margins);
    const ModelMargin *g = &m->margins[c->dim];
    if (g->n_terms == 0 || g->n_terms > m->d_model || !g->dims || !g->coefs)
        return out_fail(err, errsize, "check %zu (margin) needs 1 to d_model = %zu terms, has %zu", i, m->d_model,
                        g->n_terms);
    for (size_t t = 0; t < g->n_terms; t++) {
        if (g->dims[t] >= m->d_model)
            return out_fail(err, errsize, "check %zu (margin) term %zu reads dim %zu, outside the residual (D = %zu)", i,
                            t, g->dims[t], m->d_model);
        if (t && g->dims[t] <= g->dims[t - 1])
            return out_fail(err, errsize, "check %zu (margin) term dims are not strictly increasing (term %zu)", i, t);
        if (!isfinite(g->coefs[t]))
            return out_fail(err, errsize, "check %zu (margin) term %zu has a non-finite coefficient", i, t);
    }
    if (g->n_thresholds == 0 || g->n_thresholds > MODEL_MAX_THRESHOLDS || !g->thresholds)
        return out_fail(err, errsize, "check %zu (margin) needs 1 to %zu thresholds, has %zu", i,
                        (size_t)MODEL_MAX_THRESHOLDS, g->n_thresholds);
    for (size_t j = 0; j < g->n_thresholds; j++) {
        if (!isfinite(g->thresholds[j]))
            return out_fail(err, errsize, "check %zu (margin) threshold %zu is not finite", i, j);
        if (j && !(g->thresholds[j] > g->thresholds[j - 1]))
            return out_fail(err, errsize, "check %zu (margin) thresholds are not strictly increasing (threshold %zu)", i,
                            j);
    }
    if (!isfinite(g->m) || !(g->m > 0))
        return out_fail(err, errsize, "check %zu (margin) margin must be a finite number > 0", i);
    return true;
}

bool model_check_checks(const Model *m, char *err, size_t errsize) {
    if (m->has_error_flag && m->error_flag_dim >= m->d_model)
        return out_fail(err, errsize, "the error flag's dim %zu is outside the residual (d_model %zu)", m->error_flag_dim,
                        m->d_model);
    if (m->n_checks && !m->checks) return out_fail(err, errsize, "the model has %zu checks but none stored", m->n_checks);
    for (size_t i = 0; i < m->n_checks; i++) {
        const ModelCheck *c = &m->checks[i];
        if (c->after_layer >= m->n_layers)
            return out_fail(err, errsize, "check %zu is outside the model (after layer %zu of %zu)", i, c->after_layer,
                            m->n_layers);
        switch (c->kind) {
        case MODEL_CHECK_MARGIN:
            if (!check_margin(m, c, i, err, errsize)) return false;
            continue;
        case MODEL_CHECK_SINGLE_KEY:
            if (c->count != 2) return out_fail(err, errsize, "check %zu (single_key) must span 2 dims", i);
            break;
        case MODEL_CHECK_ONE_KIND:
            if (!c->is_string) return out_fail(err, errsize, "check %zu (one_kind) has no string flags", i);
            break;
        case MODEL_CHECK_ONE_HOT: break;
        default: return out_fail(err, errsize, "check %zu has an unknown kind", i);
        }
        if (c->count == 0 || c->dim > m->d_model || c->count > m->d_model - c->dim)
            return out_fail(err, errsize, "check %zu is outside the model (layer %zu, dims [%zu, %zu))", i, c->after_layer,
                            c->dim, c->dim + c->count);
    }
    return true;
}
