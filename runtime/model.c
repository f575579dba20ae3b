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
    arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}

Matrix model_matrix(Model *m, size_t rows, size_t cols) {
    Matrix x = {rows, cols, NULL};
    /* arena_array checks rows x cols for overflow; empty matrices still get a valid pointer. */
    x.data = arena_array(&m->arena, rows ? rows : 1, (cols ? cols : 1) * sizeof(double));
    return x;
}

/* Every stored parameter block: embeddings, head and MLP weights, biases, readout. */
typedef struct Counter { size_t all, nonzero; } Counter;

static void count(Counter *c, const double *x, size_t n) {
    if (!x) return;
    c->all += n;
    for (size_t i = 0; i < n; i++) c->nonzero += x[i] != 0.0;
}

static Counter count_params(const Model *m) {
    Counter c = {0, 0};
    count(&c, m->token_embed.data, m->token_embed.rows * m->token_embed.cols);
    count(&c, m->pos_embed.data, m->pos_embed.rows * m->pos_embed.cols);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            const Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            for (int k = 0; k < 4; k++) count(&c, w[k]->data, w[k]->rows * w[k]->cols);
        }
        const ModelMlp *M = &L->mlp;
        count(&c, M->w1.data, M->w1.rows * M->w1.cols);
        count(&c, M->b1, M->w1.cols);
        count(&c, M->w2.data, M->w2.rows * M->w2.cols);
        count(&c, M->b2, m->d_model);
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) count(&c, m->out_readout, m->d_model);
    return c;
}

size_t model_param_count(const Model *m) { return count_params(m).all; }
size_t model_nonzero_count(const Model *m) { return count_params(m).nonzero; }

double model_head_tie_tol(const Model *m, const ModelHead *h) {
    return h->tie_tol != 0.0 ? h->tie_tol : m->tie_tolerance;
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

bool model_check_output(const Model *m, char *err, size_t errsize) {
    size_t D = m->d_model;
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        if (m->out_count == 0 || m->out_dim > D || m->out_count > D - m->out_dim)
            return out_fail(err, errsize, "output block [%zu, %zu) is empty or outside the residual (D = %zu)",
                            m->out_dim, m->out_dim + m->out_count, D);
        if (!m->out_values) return out_fail(err, errsize, "output has no values");
        return true;
    }
    if (m->output_kind != MODEL_OUT_NUMERICAL) return out_fail(err, errsize, "output kind is unknown");
    if (!m->out_readout) return out_fail(err, errsize, "numerical output has no readout");
    if (!isfinite(m->out_margin) || m->out_margin < 0)
        return out_fail(err, errsize, "output margin must be a finite number >= 0");
    if (!isfinite(m->out_error_bound) || m->out_error_bound < 0)
        return out_fail(err, errsize, "output error bound must be a finite number >= 0");
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
    char a[64], b[64];
    for (size_t i = 0; i < m->out_count; i++) {
        Value v = m->out_values[i];
        if (!is_number_kind(v.kind)) return out_fail(err, errsize, "numerical output value %zu is not a number", i);
        if (v.kind == VAL_FLOAT && !isfinite(v.as.f))
            return out_fail(err, errsize, "numerical output value %zu is not finite", i);
        if (kc) {
            bool covered = false;
            for (size_t j = 0; j < kc; j++) covered |= m->out_kinds[j] == v.kind;
            value_format(v, a, sizeof a);
            if (!covered)
                return out_fail(err, errsize, "output value %s has kind %s, which the kind block lacks", a,
                                value_kind_name(v.kind));
        }
        if (i == 0) continue;
        Value u = m->out_values[i - 1];
        double x = value_as_double(u), y = value_as_double(v);
        value_format(u, a, sizeof a);
        value_format(v, b, sizeof b);
        if (y < x) return out_fail(err, errsize, "output values are not sorted ascending (%s before %s)", a, b);
        if (y == x) {
            if (u.kind == v.kind)
                return out_fail(err, errsize, "output values %s and %s have the same kind and numeric value", a, b);
            if (!kc)
                return out_fail(err, errsize, "output values %s and %s share a numeric value but the output has no kind "
                                "block to tell them apart", a, b);
        } else if (!(2 * m->out_margin < y - x)) {
            return out_fail(err, errsize, "output margin %.17g is not below half the gap between output values %s and %s",
                            m->out_margin, a, b);
        }
    }
    return true;
}
