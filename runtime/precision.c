#include "runtime/precision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/forward.h"

/* Bounds on a set of quantities: |x| <= b[i], |computed - exact| <= e[i]. */
typedef struct Bounds {
    double *b, *e;
} Bounds;

typedef struct Analysis {
    const Model *m;
    double u, uw; /* unit roundoff; the weights' relative rounding (0 or u) */
    ModelPrecision *out;
} Analysis;

static Bounds bounds_new(size_t n) {
    Bounds x = {calloc(n ? n : 1, sizeof(double)), calloc(n ? n : 1, sizeof(double))};
    if (!x.b || !x.e) abort();
    return x;
}

static void bounds_free(Bounds *x) {
    free(x->b);
    free(x->e);
}

static double gamma_n(double u, double n) { return n * u < 0.5 ? n * u / (1 - n * u) : INFINITY; }

/* A decision with error bound err and margin: the worst ratio so far. */
static void decide(Analysis *a, double err, double margin, const char *what) {
    double ratio = margin > 0 ? err / margin : (err > 0 ? INFINITY : 0.0);
    if (!(ratio <= a->out->worst)) {
        a->out->worst = ratio;
        snprintf(a->out->worst_what, sizeof a->out->worst_what, "%s", what);
    }
}

/* Column c of W (rows index `in`): y = sum_k w_k x_k as an FMA chain. */
static void column(const Analysis *a, const Matrix *W, size_t c, const Bounds *in, double *b, double *e) {
    MatrixColumn col = matrix_column(W, c);
    double s1 = 0, s2 = 0, s3 = 0;
    for (uint32_t k = 0; k < col.n; k++) {
        double w = fabs(col.val[k]), bk = in->b[col.row[k]], ek = in->e[col.row[k]];
        s1 += w * bk;
        s2 += w * ek;
        s3 += w * (bk + ek);
    }
    *b = s1;
    *e = s2 + (gamma_n(a->u, col.n) * (1 + a->uw) + a->uw) * s3;
}

/* x += y, one rounding. */
static void add_into(double u, double *bx, double *ex, double by, double ey) {
    double t = *bx + *ex + by + ey;
    *ex += ey + u * t;
    *bx += by;
}

static void embedding(Analysis *a, Bounds *X) {
    const Model *m = a->m;
    size_t D = m->d_model;
    double *bt = calloc(D ? D : 1, sizeof *bt), *bp = calloc(D ? D : 1, sizeof *bp);
    if (!bt || !bp) abort();
    for (size_t d = 0; d < D; d++) {
        MatrixColumn t = matrix_column(&m->token_embed, d), p = matrix_column(&m->pos_embed, d);
        for (uint32_t k = 0; k < t.n; k++) bt[d] = fmax(bt[d], fabs(t.val[k]));
        for (uint32_t k = 0; k < p.n; k++) bp[d] = fmax(bp[d], fabs(p.val[k]));
        X->b[d] = bt[d] + bp[d];
        X->e[d] = (a->u + 2 * a->uw) * X->b[d];
    }
    if (m->numeric_tokens && m->token_value_dim < D) {
        size_t d = m->token_value_dim;
        double v = fmax(fabs(m->token_lo), fabs(m->token_hi));
        add_into(a->u, &X->b[d], &X->e[d], v, a->uw * v);
    }
    free(bt);
    free(bp);
}

/* Every head of layer l reads X; their outputs are added in order. */
static void heads(Analysis *a, size_t l, Bounds *X) {
    const Model *m = a->m;
    const ModelLayer *L = &m->layers[l];
    size_t D = m->d_model, N = m->max_len + 1;
    for (size_t h = 0; h < L->n_heads; h++) {
        const ModelHead *H = &L->heads[h];
        size_t dk = H->wq.cols, dv = H->wv.cols;
        double es = 0, sum_terms = 0;
        for (size_t c = 0; c < dk; c++) {
            double bq, eq, bk, ek;
            column(a, &H->wq, c, X, &bq, &eq);
            column(a, &H->wk, c, X, &bk, &ek);
            es += bq * ek + bk * eq + eq * ek;
            sum_terms += (bq + eq) * (bk + ek);
        }
        es += gamma_n(a->u, (double)dk) * sum_terms;
        char what[96];
        snprintf(what, sizeof what, "layer %zu head %zu: scores (half the tie tolerance)", l, h);
        decide(a, es, H->tie_tol / 2, what);
        Bounds O = bounds_new(dv); /* the means of the selected values */
        for (size_t c = 0; c < dv; c++) {
            double bv, ev;
            column(a, &H->wv, c, X, &bv, &ev);
            O.b[c] = bv;
            /* a sum of at most N selected values (BOS's times 1 + bos_extra: a product, one more
             * rounding, and a term as large as (1 + bos_extra) |v|), then the division by a rounded
             * count; relative to the mean, as without the extra weight */
            double k = H->bos_extra > 0 ? (double)N + 2 : (double)N;
            O.e[c] = ev + (gamma_n(a->u, k) + a->u * (1 + gamma_n(a->u, k)) + (H->bos_extra > 0 ? 2 * a->u : 0)) * (bv + ev);
        }
        for (size_t d = 0; d < D; d++) {
            if (matrix_column(&H->wo, d).n == 0) continue;
            double by, ey;
            column(a, &H->wo, d, &O, &by, &ey);
            add_into(a->u, &X->b[d], &X->e[d], by, ey);
        }
        bounds_free(&O);
    }
}

static void mlp(Analysis *a, size_t l, Bounds *X) {
    const Model *m = a->m;
    const ModelMlp *f = &m->layers[l].mlp;
    size_t D = m->d_model, Hn = f->w1.cols;
    Bounds Hb = bounds_new(Hn);
    for (size_t c = 0; c < Hn; c++) {
        double bz, ez;
        column(a, &f->w1, c, X, &bz, &ez);
        double b1 = fabs(f->b1[c]) * (1 + a->uw);
        ez += a->uw * fabs(f->b1[c]) + a->u * (bz + ez + b1);
        bz += b1;
        if (f->gated) {
            double bg, eg;
            column(a, &f->w3, c, X, &bg, &eg);
            double b3 = fabs(f->b3[c]) * (1 + a->uw);
            eg += a->uw * fabs(f->b3[c]) + a->u * (bg + eg + b3);
            bg += b3;
            Hb.b[c] = bz * bg;
            Hb.e[c] = bz * eg + bg * ez + ez * eg + a->u * (bz + ez) * (bg + eg);
        } else {
            Hb.b[c] = bz;
            Hb.e[c] = ez;
        }
    }
    for (size_t d = 0; d < D; d++) {
        if (matrix_column(&f->w2, d).n) {
            double by, ey;
            column(a, &f->w2, d, &Hb, &by, &ey);
            add_into(a->u, &X->b[d], &X->e[d], by, ey);
        }
        if (f->b2[d] != 0.0) add_into(a->u, &X->b[d], &X->e[d], fabs(f->b2[d]), a->uw * fabs(f->b2[d]));
    }
    bounds_free(&Hb);
}

static void one_hot_block(Analysis *a, const Bounds *X, size_t dim, size_t count, const char *what) {
    char w[128];
    for (size_t j = 0; j < count; j++) {
        snprintf(w, sizeof w, "%s (dim %zu: %s)", what, dim + j, a->m->labels ? a->m->labels[dim + j] : "");
        decide(a, X->e[dim + j], MODEL_ONEHOT_TOL, w);
    }
}

static void checks(Analysis *a, size_t l, const Bounds *X) {
    const Model *m = a->m;
    for (size_t i = 0; i < m->n_checks; i++) {
        const ModelCheck *k = &m->checks[i];
        if (k->after_layer != l) continue;
        if (k->kind == MODEL_CHECK_MARGIN) {
            snprintf(a->out->uncovered, sizeof a->out->uncovered,
                     "margin checks (their refusals near the boundary follow the computed value)");
            continue;
        }
        if (k->kind == MODEL_CHECK_SINGLE_KEY) {
            size_t d = k->dim;
            double err = X->e[d + 1] + 2 * X->b[d] * X->e[d] + X->e[d] * X->e[d] +
                         a->u * 2 * (X->b[d + 1] + (X->b[d] + X->e[d]) * (X->b[d] + X->e[d]));
            char w[128];
            snprintf(w, sizeof w, "single-key check after layer %zu (%s)", l, k->what);
            decide(a, err, 0.125, w);
            continue;
        }
        one_hot_block(a, X, k->dim, k->count, "one-hot check");
    }
}

static void output(Analysis *a, const Bounds *X) {
    const Model *m = a->m;
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        one_hot_block(a, X, m->out_dim, m->out_count, "the output block");
        return;
    }
    if (m->out_kind_count) one_hot_block(a, X, m->out_kind_dim, m->out_kind_count, "the output's kind block");
    if (m->out_count == 0) {
        snprintf(a->out->uncovered, sizeof a->out->uncovered,
                 "a real-valued output (the number printed follows the computed value)");
        return;
    }
    double s2 = 0, s3 = 0; /* read_number: a plain sum over the dims */
    for (size_t d = 0; d < m->d_model; d++) {
        double r = fabs(m->out_readout[d]);
        s2 += r * X->e[d];
        s3 += r * (X->b[d] + X->e[d]);
    }
    decide(a, s2 + gamma_n(a->u, 2.0 * (double)m->d_model) * s3, m->out_margin, "the numerical output (its decoding margin)");
}

void model_value_bounds(const Model *m, double *bound) {
    ModelPrecision out;
    memset(&out, 0, sizeof out);
    Analysis a = {m, 0.0, 0.0, &out};
    Bounds X = bounds_new(m->d_model);
    embedding(&a, &X);
    for (size_t l = 0; l < m->n_layers; l++) {
        heads(&a, l, &X);
        mlp(&a, l, &X);
    }
    memcpy(bound, X.b, m->d_model * sizeof *bound);
    bounds_free(&X);
}

void model_precision(const Model *m, double u, bool round_weights, ModelPrecision *out) {
    memset(out, 0, sizeof *out);
    out->u = u;
    Analysis a = {m, u, round_weights ? u : 0.0, out};
    Bounds X = bounds_new(m->d_model);
    embedding(&a, &X);
    for (size_t l = 0; l < m->n_layers; l++) {
        heads(&a, l, &X);
        mlp(&a, l, &X);
        checks(&a, l, &X);
    }
    output(&a, &X);
    if (m->has_error_flag) /* its units test for exact zeros, which error bounds cannot show */
        snprintf(out->uncovered, sizeof out->uncovered, "the error flag (whether err is exactly 0 follows the computed values)");
    bounds_free(&X);
    out->safe = out->worst <= PRECISION_SAFETY && !out->uncovered[0];
}
