/* Writes the weights of the planned heads and MLPs into a Model, layer by layer.
 *
 * The BOS position (row 0) is kept input-independent: in every head the BOS query scores only
 * the BOS key (its other score columns are cancelled through the `bos` dim), so its residual row
 * is a compile-time constant that we track here exactly as the runtime will compute it. Knowing
 * it, each head's key and value columns are corrected at BOS: keys contribute nothing but the
 * BOS column, and the value the BOS key contributes is exactly the aggregate's default. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

static void put_view(Matrix *w, size_t col, LinView v, double scale) {
    for (size_t t = 0; t < v.n; t++) matrix_add(w, v.terms[t].dim, col, scale * v.terms[t].coef);
}

/* Counts `entries` more weights against --max-bytes; false (with a located error) past it. */
static bool budget(Plan *p, const IrNode *at, double entries, const char *what) {
    p->weight_bytes += 8 * entries;
    if (p->weight_bytes <= (double)p->max_bytes) return true;
    diag_error(p->diags, at->loc, "%s brings the model's weights to %.3g bytes (limit %zu, --max-bytes): lower "
               "--max-len or --vocab, or raise the limit", what, p->weight_bytes, p->max_bytes);
    return false;
}

/* Whether the BOS position's value j comes out as bos_value: the value view read at the BOS row
 * (vb) plus its correction on the BOS dim is summed in float64 in any order; with terms as large
 * as 2^53 (a view of `length - (2 ^ 53 + 1)`) the default 1 came out 0. Allowed: a rounding of at
 * most 1e-9 of the default's magnitude (the relative rule of value sets), else a located error. */
static bool bos_value_exact(Plan *p, const HeadOp *op, size_t j, double vb, const double *bos_row) {
    double c = op->bos_value[j] - vb, mag = fabs(c) + fabs(vb);
    LinView v = op->vals[j];
    for (size_t t = 0; t < v.n; t++) mag = fmax(mag, fabs(v.terms[t].coef * bos_row[v.terms[t].dim]));
    double err = (double)(v.n + 2) * DBL_EPSILON * mag;
    if (err <= 1e-9 * fmax(1, fabs(op->bos_value[j])) && isfinite(c)) return true;
    diag_error(p->diags, op->node->loc,
               "this aggregate's values reach %.3g where its default is %g: float64 cannot set the default exactly "
               "at the first position the model attends to when nothing is selected (rounding up to %.3g)",
               mag, op->bos_value[j], err);
    return false;
}

static bool emit_head(Plan *p, Model *m, const HeadOp *op, ModelHead *h, const double *bos_row) {
    size_t D = p->n_dims, dk = op->n_cols + 1, dv = op->n_vals;
    char what[96];
    snprintf(what, sizeof what, "this head (%zu score columns, %zu values over a residual of %zu)", dk, dv, D);
    if (!budget(p, op->node, (double)D * (double)(2 * dk + 2 * dv), what)) return false;
    h->wq = model_matrix(m, D, dk);
    h->wk = model_matrix(m, D, dk);
    h->wv = model_matrix(m, D, dv);
    h->wo = model_matrix(m, dv, D);
    h->causal = op->causal;
    h->tie_tol = op->tie_tol;
    h->bos_extra = op->bos_extra;
    h->label = arena_strdup(&m->arena, op->label);
    for (size_t c = 0; c < op->n_cols; c++) {
        put_view(&h->wq, c, op->cols[c].q, 1);
        put_view(&h->wk, c, op->cols[c].k, 1);
        matrix_add(&h->wq, DIM_BOS, c, -lv_eval(op->cols[c].q, bos_row));
        matrix_add(&h->wk, DIM_BOS, c, -lv_eval(op->cols[c].k, bos_row));
    }
    /* the BOS column: `bos_level` for ordinary queries, 1 (and nothing else) for the BOS query */
    size_t b = op->n_cols;
    if (op->bos_q.n) { /* a score per query; the BOS query still gets 1 */
        put_view(&h->wq, b, op->bos_q, 1);
        matrix_add(&h->wq, DIM_BOS, b, 1.0 - lv_eval(op->bos_q, bos_row));
    } else {
        matrix_set(&h->wq, DIM_ONE, b, op->bos_level);
        matrix_set(&h->wq, DIM_BOS, b, 1.0 - op->bos_level);
    }
    matrix_set(&h->wk, DIM_BOS, b, 1.0);
    for (size_t j = 0; j < dv; j++) {
        put_view(&h->wv, j, op->vals[j], 1);
        double vb = lv_eval(op->vals[j], bos_row);
        if (!bos_value_exact(p, op, j, vb, bos_row)) return false;
        matrix_add(&h->wv, DIM_BOS, j, op->bos_value[j] - vb);
        matrix_set(&h->wo, j, op->out_dims[j], 1.0);
    }
    return true;
}

/* The pre-activation of each unit at `row` (bias included), and the magnitude of its terms. */
static void preactivations(const ModelMlp *mlp, size_t D, const double *row, double *pre, double *mag) {
    for (size_t h = 0; h < mlp->w1.cols; h++) {
        pre[h] = mlp->b1[h];
        mag[h] = fabs(pre[h]);
        for (size_t d = 0; d < D; d++) {
            double t = row[d] * matrix_get(&mlp->w1, d, h);
            pre[h] += t;
            mag[h] += fabs(t);
        }
    }
}

/* The MLP applied to `row`, given its units' pre-activations there. */
static void mlp_apply_row(const ModelMlp *mlp, size_t D, double *row, const double *pre) {
    size_t H = mlp->w1.cols;
    double *delta = calloc(D, sizeof *delta);
    for (size_t h = 0; h < H; h++) {
        double a = pre[h];
        if (a <= 0) continue;
        if (mlp->gated) {
            double g = mlp->b3[h];
            for (size_t d = 0; d < D; d++) g += row[d] * matrix_get(&mlp->w3, d, h);
            a *= g;
        }
        for (size_t d = 0; d < D; d++) delta[d] += a * matrix_get(&mlp->w2, h, d);
    }
    for (size_t d = 0; d < D; d++) row[d] += delta[d] + mlp->b2[d];
    free(delta);
}

typedef struct UnitKey {
    uintptr_t view;
    size_t n;
    bool positive;
    size_t unit;
} UnitKey;

static int cmp_unit_key(const void *a, const void *b) {
    const UnitKey *x = a, *y = b;
    if (x->view != y->view) return x->view < y->view ? -1 : 1;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    return (int)x->positive - (int)y->positive;
}

/* Every unit switched off at the BOS row through its BOS dim (no other row has it): there a
 * table reads whatever heads wrote (an aggregate's default, 2 ^ 53 for one), often far off its
 * grid, where the runtime would round differently from this simulation, from which heads set
 * their BOS values. Off, the MLP writes only its biases there, exactly. Units that read one view
 * (the steps of a table) get one shift k, scaled with each, so that they still share one input
 * functional (runtime/ranges.c bounds them together): scale * (view - k) + bias <= -1 at BOS. */
static void bos_off(ModelMlp *mlp, const HiddenBuf *hb, double *pre, const double *mag) {
    size_t H = mlp->w1.cols;
    double *need = malloc((H ? H : 1) * sizeof *need); /* the k each unit needs */
    UnitKey *key = malloc((H ? H : 1) * sizeof *key);
    if (!need || !key) abort();
    for (size_t h = 0; h < H; h++) {
        need[h] = (fmax(pre[h], 0) + 1 + 1e-9 * mag[h]) / hb->scale[h];
        key[h] = (UnitKey){(uintptr_t)hb->in[h].terms, hb->in[h].n, hb->scale[h] > 0, h};
    }
    qsort(key, H, sizeof *key, cmp_unit_key);
    for (size_t i = 0; i < H;) { /* a group: the units of one view and one sign of scale */
        size_t j = i;
        double k = need[key[i].unit];
        while (j < H && cmp_unit_key(&key[i], &key[j]) == 0) {
            k = key[i].positive ? fmax(k, need[key[j].unit]) : fmin(k, need[key[j].unit]);
            j++;
        }
        for (; i < j; i++) {
            size_t h = key[i].unit;
            if (hb->scale[h] == 0) continue;
            matrix_add(&mlp->w1, DIM_BOS, h, -hb->scale[h] * k);
            pre[h] -= hb->scale[h] * k;
        }
    }
    free(key);
    free(need);
}

/* A layer's MLP past the limits: its largest map, if tables first tabulated it where the size
 * rule gates it, takes the size rule on the next attempt (Plan.table_refused). */
static void blame_map(Plan *p, const IrNode *largest) {
    if (largest && largest->kind == IR_MAP && p->info[largest->id].table_over_gate) p->table_refused = largest->id + 1;
}

static bool emit_layer_mlp(Plan *p, Model *m, int layer, ModelMlp *mlp, double *bos_row) {
    size_t D = p->n_dims;
    HiddenBuf hb = {0};
    /* the units the limits allow: stop tabulating past them rather than build and then refuse */
    double room = ((double)p->max_bytes - p->weight_bytes) / (16.0 * (double)D);
    hb.stop = room < (double)p->max_mlp ? (room > 0 ? (size_t)room : 0) : p->max_mlp;
    double *b2 = ARENA_ARRAY(&m->arena, double, D);
    size_t most = 0;
    for (size_t i = 0; i < p->n_mlps && hb.n <= hb.stop; i++) {
        size_t before = hb.n;
        if (p->mlps[i].layer == layer && !mlp_tabulate(p, &p->mlps[i], &hb, b2)) return false;
        if (hb.n - before > most) { /* where a limit error points */
            most = hb.n - before;
            hb.largest = p->mlps[i].node;
        }
        if (hb.n > p->max_mlp) {
            blame_map(p, hb.largest);
            char d[128];
            vs_describe(p->mlps[i].node, d, sizeof d);
            diag_error(p->diags, p->mlps[i].node->loc,
                       "%s brings layer %d's MLP to %zu hidden units (limit %zu, --max-mlp): lower --max-len or --vocab, "
                       "or raise the limit", d, layer, hb.n, p->max_mlp);
            return false;
        }
    }
    if (diag_has_errors(p->diags)) return false;
    size_t H = hb.n;
    char what[96];
    snprintf(what, sizeof what, "layer %d's MLP (%s%zu hidden units over a residual of %zu)", layer,
             H > hb.stop ? "more than " : "", H > hb.stop ? hb.stop : H, D);
    if (H && !budget(p, hb.largest, (hb.gated ? 3.0 : 2.0) * (double)D * (double)H, what)) {
        blame_map(p, hb.largest);
        return false;
    }
    mlp->w1 = model_matrix(m, D, H);
    mlp->w2 = model_matrix(m, H, D);
    mlp->b1 = ARENA_ARRAY(&m->arena, double, H ? H : 1);
    mlp->b2 = b2;
    if (hb.gated) { /* a gated MLP: every unit times its gate (1 where it has none) */
        mlp->gated = true;
        mlp->w3 = model_matrix(m, D, H);
        mlp->b3 = ARENA_ARRAY(&m->arena, double, H ? H : 1);
        for (size_t h = 0; h < H; h++) {
            put_view(&mlp->w3, h, hb.gate[h], 1);
            mlp->b3[h] = hb.gate_bias[h];
        }
    }
    for (size_t h = 0; h < H; h++) {
        put_view(&mlp->w1, h, hb.in[h], hb.scale[h]);
        mlp->b1[h] = hb.bias[h];
        if (hb.out_coef[h] != 0) matrix_add(&mlp->w2, h, hb.out_dim[h], hb.out_coef[h]);
        if (hb.out_coef2[h] != 0) matrix_add(&mlp->w2, h, hb.out_dim2[h], hb.out_coef2[h]);
    }
    double *pre = ARENA_ARRAY(p->arena, double, H ? H : 1), *mag = ARENA_ARRAY(p->arena, double, H ? H : 1);
    preactivations(mlp, D, bos_row, pre, mag);
    bos_off(mlp, &hb, pre, mag);
    mlp_apply_row(mlp, D, bos_row, pre);
    return true;
}

static int cmp_term(const void *a, const void *b) {
    uint32_t x = ((const Term *)a)->dim, y = ((const Term *)b)->dim;
    return (x > y) - (x < y);
}

/* The margin checks (reals.c, plan.c): each a functional of the residual (its terms sorted by
 * dim, merged), its thresholds and its margin, checked after the layer that computes the view. */
static bool emit_margins(Plan *p, Model *m) {
    m->n_margins = 0;
    m->margins = ARENA_ARRAY(&m->arena, ModelMargin, p->n_margins ? p->n_margins : 1);
    for (size_t i = 0; i < p->n_margins; i++) {
        const PlanMargin *pm = &p->margins[i];
        ModelMargin *mm = &m->margins[m->n_margins];
        Term *t = ARENA_ARRAY(p->arena, Term, pm->view.n ? pm->view.n : 1);
        if (pm->view.n) {
            memcpy(t, pm->view.terms, pm->view.n * sizeof *t);
            qsort(t, pm->view.n, sizeof *t, cmp_term);
        }
        mm->dims = ARENA_ARRAY(&m->arena, size_t, pm->view.n ? pm->view.n : 1);
        mm->coefs = ARENA_ARRAY(&m->arena, double, pm->view.n ? pm->view.n : 1);
        for (size_t k = 0; k < pm->view.n; k++) {
            if (mm->n_terms && mm->dims[mm->n_terms - 1] == t[k].dim) mm->coefs[mm->n_terms - 1] += t[k].coef;
            else mm->dims[mm->n_terms] = t[k].dim, mm->coefs[mm->n_terms++] = t[k].coef;
        }
        bool constant = true; /* x - x: its terms cancel, and it is 0 at every input */
        for (size_t k = 0; k < mm->n_terms; k++) constant = constant && mm->coefs[k] == 0;
        if (constant) {
            for (size_t k = 0; k < pm->n; k++)
                if (fabs(pm->thresholds[k]) <= pm->margin)
                    return plan_error(p, pm->node, arena_printf(p->arena, "is 0 at every input, within the margin %g of "
                                                                "%g where it is compared: the model cannot decide it",
                                                                pm->margin, pm->thresholds[k]));
            continue; /* always on one side: nothing to check */
        }
        mm->n_thresholds = pm->n;
        mm->thresholds = ARENA_ARRAY(&m->arena, double, pm->n ? pm->n : 1);
        memcpy(mm->thresholds, pm->thresholds, pm->n * sizeof *pm->thresholds);
        mm->m = pm->margin;
        ModelCheck *c = plan_add_check(p, slot_layer(pm->after_slot), (uint32_t)m->n_margins++, 1,
                                       plan_node_name(p, pm->node));
        c->kind = MODEL_CHECK_MARGIN;
    }
    return true;
}

/* The output's kind block, when it has one. */
static void kind_readout(const SopInfo *o, Model *m) {
    if (!o->has_kind) return;
    m->out_kind_dim = o->kind_dim;
    m->out_kind_count = o->n_kinds;
    m->out_kinds = ARENA_ARRAY(&m->arena, ValueKind, o->n_kinds);
    memcpy(m->out_kinds, o->kinds, o->n_kinds * sizeof *o->kinds);
}

/* A numerical output decoded against its values at the input's length (plan_demand chose it:
 * one set for all lengths would hold values too close to tell apart). */
static bool output_by_length(Plan *p, const SopInfo *o, Model *m) {
    size_t N = p->max_len, total = 0;
    for (size_t n = 0; n < N; n++) {
        if (!p->out_by_len[n].n) continue; /* the output always raises at this length */
        if (!vs_decodable(&p->out_by_len[n], o->has_kind, NULL)) return false;
        total += p->out_by_len[n].n;
    }
    double margin = vs_len_sets_gap(p->out_by_len, N, false, NULL) / 4;
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_readout = ARENA_ARRAY(&m->arena, double, p->n_dims);
    for (size_t t = 0; t < o->num.n; t++) m->out_readout[o->num.terms[t].dim] += o->num.terms[t].coef;
    /* their union (the per-length sets keep kinds that the s-op's own set may have merged) */
    Value *all = ARENA_ARRAY(p->arena, Value, total ? total : 1);
    for (size_t n = 0, k = 0; n < N; n++)
        for (size_t i = 0; i < p->out_by_len[n].n; i++) all[k++] = p->out_by_len[n].vals[i];
    ValueSet u = vs_from_values(all, total);
    m->out_count = u.n;
    m->out_values = ARENA_ARRAY(&m->arena, Value, u.n ? u.n : 1);
    memcpy(m->out_values, u.vals, u.n * sizeof *m->out_values);
    m->out_len_count = N;
    m->out_len_start = ARENA_ARRAY(&m->arena, size_t, N + 1);
    m->out_len_values = ARENA_ARRAY(&m->arena, Value, total ? total : 1);
    for (size_t n = 0, k = 0; n < N; n++) {
        m->out_len_start[n] = k;
        if (p->out_by_len[n].n) /* none at a length where the output always raises */
            memcpy(m->out_len_values + k, p->out_by_len[n].vals, p->out_by_len[n].n * sizeof(Value));
        k += p->out_by_len[n].n;
        m->out_len_start[n + 1] = k;
    }
    m->out_margin = margin;
    kind_readout(o, m);
    return true;
}

/* The readout of the output s-op. */
static bool emit_output(Plan *p, const IrNode *out, const char *output_name, Model *m) {
    SopInfo *o = &p->info[out->id];
    m->output_name = arena_strdup(&m->arena, output_name);
    if (o->cat_block) {
        m->output_kind = MODEL_OUT_CATEGORICAL;
        m->out_dim = o->cat_dim;
        m->out_count = o->vs.n;
        m->out_values = ARENA_ARRAY(&m->arena, Value, o->vs.n ? o->vs.n : 1);
        for (size_t i = 0; i < o->vs.n; i++) {
            m->out_values[i] = o->vs.vals[i];
            if (m->out_values[i].kind == VAL_STR) m->out_values[i].as.s = arena_strdup(&m->arena, o->vs.vals[i].as.s);
        }
        return true;
    }
    double gap;
    bool real = (p->numeric_tokens || o->real) && o->vs.unbounded;
    if (o->has_num && p->out_by_len) return output_by_length(p, o, m);
    if (o->has_num && (real || vs_decodable(&o->vs, o->has_kind, &gap))) {
        m->output_kind = MODEL_OUT_NUMERICAL;
        m->out_readout = ARENA_ARRAY(&m->arena, double, p->n_dims);
        for (size_t t = 0; t < o->num.n; t++) m->out_readout[o->num.terms[t].dim] += o->num.terms[t].coef;
        if (real) { /* the bound reals.c proved; positive, so that outputs compare as numbers (the
                     * residual stream's sums turn -0.0 into 0.0) */
            m->out_error_bound = fmax(o->real ? o->real->err : 1e-9 * (1 + fmax(fabs(p->token_lo), fabs(p->token_hi))),
                                      DBL_TRUE_MIN);
            m->out_error_rel = o->real ? o->real->rel : 0;
            if (m->out_error_rel >= 0.5) { /* no use as a relative bound: all of it absolute */
                m->out_error_bound = real_abs_err(o->real);
                m->out_error_rel = 0;
            }
            kind_readout(o, m);
            return true;
        }
        m->out_count = o->vs.n;
        m->out_values = ARENA_ARRAY(&m->arena, Value, o->vs.n);
        memcpy(m->out_values, o->vs.vals, o->vs.n * sizeof *m->out_values);
        m->out_margin = gap / 4;
        kind_readout(o, m);
        return true;
    }
    char d[128];
    vs_describe(out, d, sizeof d);
    diag_error(p->diags, out->loc, "%s cannot be read out exactly: %s", d,
               o->vs.unbounded ? "it has too many possible values" : "its values are too close to tell apart as numbers");
    return false;
}

bool emit_model(Plan *p, const IrNode *out, const char *output_name, const CodegenOptions *opt, Model *m) {
    size_t D = p->n_dims, N = p->max_len;
    m->d_model = D;
    m->max_len = N;
    m->n_vocab = p->n_vocab;
    m->vocab = ARENA_ARRAY(&m->arena, Value, p->n_vocab ? p->n_vocab : 1);
    for (size_t i = 0; i < p->n_vocab; i++) {
        m->vocab[i] = p->vocab[i];
        if (m->vocab[i].kind == VAL_STR) m->vocab[i].as.s = arena_strdup(&m->arena, p->vocab[i].as.s);
    }
    m->token_type = (int)p->token_type;
    m->labels = ARENA_ARRAY(&m->arena, char *, D);
    for (size_t d = 0; d < D; d++) m->labels[d] = arena_strdup(&m->arena, p->labels[d]);
    m->token_embed = model_matrix(m, p->n_vocab + 1, D);
    m->pos_embed = model_matrix(m, N + 1, D);
    for (size_t t = 0; t <= p->n_vocab; t++) matrix_set(&m->token_embed, t, DIM_ONE, 1);
    if (p->numeric_tokens) { /* one row for every real token; the runtime adds its value */
        m->numeric_tokens = true;
        m->token_value_dim = p->tok_dim;
        m->token_lo = p->token_lo;
        m->token_hi = p->token_hi;
    } else {
        for (size_t t = 0; t < p->n_vocab; t++) matrix_set(&m->token_embed, t, p->tok_dim + t, 1);
    }
    matrix_set(&m->token_embed, p->n_vocab, DIM_BOS, 1);
    for (size_t i = 0; i < N; i++) matrix_set(&m->pos_embed, i + 1, p->pos_dim + i, 1);

    int layers = schedule_layers(p);
    m->n_layers = (size_t)layers;
    m->layers = ARENA_ARRAY(&m->arena, ModelLayer, layers ? (size_t)layers : 1);

    double *bos_row = calloc(D, sizeof *bos_row);
    bos_row[DIM_ONE] = bos_row[DIM_BOS] = 1;
    bool ok = true;
    for (int l = 0; l < layers && ok; l++) {
        ModelLayer *L = &m->layers[l];
        for (size_t i = 0; i < p->n_heads; i++) L->n_heads += p->heads[i].layer == l;
        L->heads = ARENA_ARRAY(&m->arena, ModelHead, L->n_heads ? L->n_heads : 1);
        size_t h = 0;
        for (size_t i = 0; i < p->n_heads && ok; i++)
            if (p->heads[i].layer == l) ok = emit_head(p, m, &p->heads[i], &L->heads[h++], bos_row);
        if (!ok) break;
        for (size_t i = 0; i < p->n_heads; i++) /* BOS attends only to itself */
            if (p->heads[i].layer == l)
                for (size_t j = 0; j < p->heads[i].n_vals; j++) bos_row[p->heads[i].out_dims[j]] += p->heads[i].bos_value[j];
        ok = emit_layer_mlp(p, m, l, &L->mlp, bos_row);
    }
    free(bos_row);
    if (!ok || !emit_margins(p, m)) return false;
    m->n_checks = p->n_checks;
    m->checks = ARENA_ARRAY(&m->arena, ModelCheck, p->n_checks ? p->n_checks : 1);
    for (size_t i = 0; i < p->n_checks; i++) {
        m->checks[i] = p->checks[i];
        m->checks[i].what = arena_strdup(&m->arena, p->checks[i].what);
        if (p->checks[i].is_string) { /* the plan's arena dies with the plan */
            m->checks[i].is_string = ARENA_ARRAY(&m->arena, bool, p->checks[i].count);
            memcpy(m->checks[i].is_string, p->checks[i].is_string, p->checks[i].count * sizeof(bool));
        }
    }
    if (!emit_output(p, out, output_name, m)) return false;
    m->program_source = arena_strdup(&m->arena, opt->program_source ? opt->program_source : "");
    m->program_name = arena_strdup(&m->arena, opt->program_name ? opt->program_name : "");
    m->compile_flags = arena_strdup(&m->arena, opt->compile_flags ? opt->compile_flags : "");
    return true;
}
