/* Writes the weights of the planned heads and MLPs into a Model, layer by layer.
 *
 * The BOS position (row 0) is kept input-independent: in every head the BOS query scores only
 * the BOS key (its other score columns are cancelled through the `bos` dim), so its residual row
 * is a compile-time constant that we track here exactly as the runtime will compute it. Knowing
 * it, each head's key and value columns are corrected at BOS: keys contribute nothing but the
 * BOS column, and the value the BOS key contributes is exactly the aggregate's default. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

static void put_view(Matrix *w, size_t col, LinView v, double scale) {
    for (size_t t = 0; t < v.n; t++) w->data[(size_t)v.terms[t].dim * w->cols + col] += scale * v.terms[t].coef;
}

static bool emit_head(Plan *p, Model *m, const HeadOp *op, ModelHead *h, const double *bos_row) {
    size_t D = p->n_dims, dk = op->n_cols + 1, dv = op->n_vals;
    if (D > CG_MAX_MATRIX / (dk > dv ? dk : dv)) {
        diag_error(p->diags, op->node->loc, "this head would need %zu score columns over a residual of %zu (limit %d "
                   "weights per matrix): lower --max-len or --vocab", dk, D, CG_MAX_MATRIX);
        return false;
    }
    h->wq = model_matrix(m, D, dk);
    h->wk = model_matrix(m, D, dk);
    h->wv = model_matrix(m, D, dv);
    h->wo = model_matrix(m, dv, D);
    h->causal = false;
    h->label = arena_strdup(&m->arena, op->label);
    for (size_t c = 0; c < op->n_cols; c++) {
        put_view(&h->wq, c, op->cols[c].q, 1);
        put_view(&h->wk, c, op->cols[c].k, 1);
        h->wq.data[DIM_BOS * dk + c] -= lv_eval(op->cols[c].q, bos_row);
        h->wk.data[DIM_BOS * dk + c] -= lv_eval(op->cols[c].k, bos_row);
    }
    /* the BOS column: `bos_level` for ordinary queries, 1 (and nothing else) for the BOS query */
    size_t b = op->n_cols;
    h->wq.data[DIM_ONE * dk + b] = op->bos_level;
    h->wq.data[DIM_BOS * dk + b] = 1.0 - op->bos_level;
    h->wk.data[DIM_BOS * dk + b] = 1.0;
    for (size_t j = 0; j < dv; j++) {
        put_view(&h->wv, j, op->vals[j], 1);
        h->wv.data[DIM_BOS * dv + j] += op->bos_value[j] - lv_eval(op->vals[j], bos_row);
        h->wo.data[j * D + op->out_dims[j]] = 1.0;
    }
    return true;
}

/* ---- MLPs: one hidden pair per change of the tabulated function along the projection ---- */

typedef struct HiddenBuf {
    size_t n, cap;
    LinView *in;      /* W1 column (before scaling) */
    double *scale, *bias;
    uint32_t *out_dim; /* W2 row entries: up to two per unit */
    double *out_coef;
    uint32_t *out_dim2;
    double *out_coef2;
} HiddenBuf;

static size_t hidden_add(Plan *p, HiddenBuf *hb, LinView in, double scale, double bias) {
    if (hb->n == hb->cap) {
        size_t cap = hb->cap ? hb->cap * 2 : 64;
        hb->in = arena_grow(p->arena, hb->in, hb->n, cap, sizeof *hb->in);
        hb->scale = arena_grow(p->arena, hb->scale, hb->n, cap, sizeof *hb->scale);
        hb->bias = arena_grow(p->arena, hb->bias, hb->n, cap, sizeof *hb->bias);
        hb->out_dim = arena_grow(p->arena, hb->out_dim, hb->n, cap, sizeof *hb->out_dim);
        hb->out_coef = arena_grow(p->arena, hb->out_coef, hb->n, cap, sizeof *hb->out_coef);
        hb->out_dim2 = arena_grow(p->arena, hb->out_dim2, hb->n, cap, sizeof *hb->out_dim2);
        hb->out_coef2 = arena_grow(p->arena, hb->out_coef2, hb->n, cap, sizeof *hb->out_coef2);
        hb->cap = cap;
    }
    size_t i = hb->n++;
    hb->in[i] = in;
    hb->scale[i] = scale;
    hb->bias[i] = bias;
    hb->out_coef[i] = hb->out_coef2[i] = 0;
    hb->out_dim[i] = hb->out_dim2[i] = 0;
    return i;
}

/* The output of one grid point: an index into out_vs (categorical), a number, or failure. */
typedef struct GridOut {
    bool ok;
    bool missing; /* the result is not in the value set: a compiler bug, never tabulated */
    size_t index;
    double number;
} GridOut;

static GridOut grid_output(Plan *p, const MlpOp *op, const Value *leaf_vals) {
    GridOut g = {false, false, 0, 0};
    char msg[160];
    ValueResult r;
    if (op->fn == MLP_FN_MAP) r = plan_fused_apply(p, op->node, op->leaves, op->n_leaves, leaf_vals, msg, sizeof msg);
    else r = (ValueResult){true, leaf_vals[0], NULL};
    if (!r.ok) return g; /* the program raises here: the output block stays empty and is checked */
    if (op->out_cat) {
        g.ok = vs_contains(op->out_vs, r.value, &g.index);
        g.missing = !g.ok;
    } else {
        g.ok = value_is_number(r.value);
        g.number = g.ok ? value_as_double(r.value) : 0;
    }
    return g;
}

static bool same_out(GridOut a, GridOut b, bool cat) {
    if (a.ok != b.ok) return false;
    if (!a.ok) return true;
    return cat ? a.index == b.index : a.number == b.number;
}

/* Adds output weights for the change a -> b (coefficient sign +1) to a hidden unit. */
static void out_change(HiddenBuf *hb, size_t unit, const MlpOp *op, GridOut a, GridOut b, double sign) {
    if (op->out_cat) {
        if (b.ok) { hb->out_dim[unit] = op->out_dim + (uint32_t)b.index; hb->out_coef[unit] = sign; }
        if (a.ok) { hb->out_dim2[unit] = op->out_dim + (uint32_t)a.index; hb->out_coef2[unit] = -sign; }
    } else {
        hb->out_dim[unit] = op->out_dim;
        hb->out_coef[unit] = sign * ((b.ok ? b.number : 0) - (a.ok ? a.number : 0));
    }
}

/* Tabulates op over the grid of its inputs' distinct scalar values. The inputs are combined
 * into p = sum_j c_j (s_j - min_j) / gap_j, with c_j growing so that p orders the grid
 * lexicographically with gaps >= 1; along p the function is piecewise constant, and each change
 * between consecutive grid points is one exact ReLU step (two hidden units). */
static bool emit_grid_mlp(Plan *p, const MlpOp *op, HiddenBuf *hb, double *b2) {
    size_t na = op->n_grid;
    size_t nd[CG_MAX_GRID_ARGS];
    double *uniq[CG_MAX_GRID_ARGS], minv[CG_MAX_GRID_ARGS], gap[CG_MAX_GRID_ARGS], coef[CG_MAX_GRID_ARGS];
    size_t *rep[CG_MAX_GRID_ARGS]; /* first input value index of each distinct scalar */
    double total = 1, mult = 1;
    for (size_t j = 0; j < na; j++) {
        const GridArg *g = &op->grid[j];
        uniq[j] = ARENA_ARRAY(p->arena, double, g->n + 1);
        rep[j] = ARENA_ARRAY(p->arena, size_t, g->n + 1);
        nd[j] = 0;
        for (size_t i = 0; i < g->n; i++) {
            double s = g->scalar[i];
            /* rounding twins (see valueset.c) are one grid point */
            if (nd[j] && scalar_twins(s, uniq[j][nd[j] - 1])) continue;
            if (nd[j] && s < uniq[j][nd[j] - 1]) {
                diag_error(p->diags, op->node->loc, "internal: unsorted MLP input values");
                return false;
            }
            uniq[j][nd[j]] = s;
            rep[j][nd[j]++] = i;
        }
        if (nd[j] == 0) return true; /* the input takes no value: nothing to tabulate */
        minv[j] = uniq[j][0];
        gap[j] = INFINITY;
        for (size_t i = 1; i < nd[j]; i++)
            if (uniq[j][i] - uniq[j][i - 1] < gap[j]) gap[j] = uniq[j][i] - uniq[j][i - 1];
        if (!isfinite(gap[j])) gap[j] = 1;
        /* values must stay apart in float64 at their magnitude, with a wide margin */
        double mag = fmax(fabs(minv[j]), fabs(uniq[j][nd[j] - 1]));
        if (gap[j] < 1e-9 * mag) {
            char d[128];
            vs_describe(op->node, d, sizeof d);
            diag_error(p->diags, op->node->loc,
                       "%s reads values %.17g apart at magnitude %.3g, too close to tabulate exactly in float64", d,
                       gap[j], mag);
            return false;
        }
        coef[j] = mult;
        mult *= (uniq[j][nd[j] - 1] - minv[j]) / gap[j] + 1;
        total *= (double)nd[j];
    }
    if (total > CG_MAX_GRID || mult > 1e12) {
        char d[128];
        vs_describe(op->node, d, sizeof d);
        diag_error(p->diags, op->node->loc, "%s needs a table of %.0f entries (limit %d): lower --max-len or --vocab",
                   d, total, CG_MAX_GRID);
        return false;
    }
    /* each input is centred before it is scaled, so a large constant in its view cancels
     * exactly here (Sterbenz) instead of in the MLP's sums */
    LinView proj = lv_empty();
    for (size_t j = 0; j < na; j++) {
        LinView centred = lv_combine(p->arena, 1, op->grid[j].view, -minv[j], lv_unit(p->arena, DIM_ONE, 1));
        proj = lv_combine(p->arena, 1, proj, coef[j] / gap[j], centred);
    }
    /* enumerate in ascending p: the first input varies fastest */
    size_t n = (size_t)total, idx[CG_MAX_GRID_ARGS] = {0};
    GridOut prev = {false, false, 0, 0};
    double prev_p = 0;
    bool started = false;
    for (size_t k = 0; k < n; k++) {
        double pk = 0;
        for (size_t j = 0; j < na; j++) pk += coef[j] * (uniq[j][idx[j]] - minv[j]) / gap[j];
        Value leaf_vals[CG_MAX_LEAVES];
        bool reachable = true;
        for (size_t l = 0; l < op->n_leaves; l++) {
            const LeafMap *lm = &op->leaf[l];
            if (lm->width) {
                double w = 0;
                for (uint32_t i = 0; i < lm->n_u; i++) w += lm->coef[i] * (lm->base[i] + (double)idx[lm->args[i]]);
                leaf_vals[l] = value_int((int64_t)llround(w));
                /* decomposed widths: combinations of term widths that no input produces */
                reachable = reachable && (!lm->vs || vs_contains(lm->vs, leaf_vals[l], NULL));
            } else {
                leaf_vals[l] = lm->vs->vals[rep[lm->arg][idx[lm->arg]]];
            }
        }
        for (size_t j = 0; j < na; j++) { /* odometer */
            if (++idx[j] < nd[j]) break;
            idx[j] = 0;
        }
        if (!reachable) continue; /* a don't-care point: it lies inside the next ramp */
        GridOut cur = grid_output(p, op, leaf_vals);
        if (cur.missing) {
            char d[128];
            vs_describe(op->node, d, sizeof d);
            diag_error(p->diags, op->node->loc, "internal compiler error: a value of %s is missing from its value set", d);
            return false;
        }
        if (!cur.ok && !op->out_cat) {
            char d[128];
            vs_describe(op->node, d, sizeof d);
            diag_error(p->diags, op->node->loc, "internal compiler error: %s can raise but was given a numerical encoding", d);
            return false;
        }
        if (!started) {
            if (cur.ok) {
                if (op->out_cat) b2[op->out_dim + cur.index] += 1;
                else b2[op->out_dim] += cur.number;
            }
            started = true;
        } else if (!same_out(prev, cur, op->out_cat)) {
            double w = pk - prev_p;
            size_t h1 = hidden_add(p, hb, proj, 1.0 / w, -prev_p / w);
            size_t h2 = hidden_add(p, hb, proj, 1.0 / w, -pk / w);
            out_change(hb, h1, op, prev, cur, +1);
            out_change(hb, h2, op, prev, cur, -1);
        }
        prev = cur;
        prev_p = pk;
    }
    return true;
}

static void mlp_apply_row(const ModelMlp *mlp, size_t D, double *row) {
    size_t H = mlp->w1.cols;
    double *delta = calloc(D, sizeof *delta);
    for (size_t h = 0; h < H; h++) {
        double a = mlp->b1[h];
        for (size_t d = 0; d < D; d++) a += row[d] * mlp->w1.data[d * H + h];
        if (a <= 0) continue;
        for (size_t d = 0; d < D; d++) delta[d] += a * mlp->w2.data[h * D + d];
    }
    for (size_t d = 0; d < D; d++) row[d] += delta[d] + mlp->b2[d];
    free(delta);
}

static bool emit_layer_mlp(Plan *p, Model *m, int layer, ModelMlp *mlp, double *bos_row) {
    size_t D = p->n_dims;
    HiddenBuf hb = {0};
    double *b2 = ARENA_ARRAY(&m->arena, double, D);
    for (size_t i = 0; i < p->n_mlps; i++)
        if (p->mlps[i].layer == layer && !emit_grid_mlp(p, &p->mlps[i], &hb, b2)) return false;
    if (diag_has_errors(p->diags)) return false;
    size_t H = hb.n;
    if (H && D > CG_MAX_MATRIX / H) {
        const MlpOp *first = NULL;
        for (size_t i = 0; i < p->n_mlps && !first; i++)
            if (p->mlps[i].layer == layer) first = &p->mlps[i];
        diag_error(p->diags, first->node->loc,
                   "layer %d's MLP would need %zu hidden units over a residual of %zu (%.3g weights, limit %d per "
                   "matrix): lower --max-len or --vocab", layer, H, D, (double)D * (double)H, CG_MAX_MATRIX);
        return false;
    }
    mlp->w1 = model_matrix(m, D, H);
    mlp->w2 = model_matrix(m, H, D);
    mlp->b1 = ARENA_ARRAY(&m->arena, double, H ? H : 1);
    mlp->b2 = b2;
    for (size_t h = 0; h < H; h++) {
        put_view(&mlp->w1, h, hb.in[h], hb.scale[h]);
        mlp->b1[h] = hb.bias[h];
        if (hb.out_coef[h] != 0) mlp->w2.data[h * D + hb.out_dim[h]] += hb.out_coef[h];
        if (hb.out_coef2[h] != 0) mlp->w2.data[h * D + hb.out_dim2[h]] += hb.out_coef2[h];
    }
    mlp_apply_row(mlp, D, bos_row);
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
    if (o->has_num) {
        m->output_kind = MODEL_OUT_NUMERICAL;
        m->out_readout = ARENA_ARRAY(&m->arena, double, p->n_dims);
        for (size_t t = 0; t < o->num.n; t++) m->out_readout[o->num.terms[t].dim] += o->num.terms[t].coef;
        m->out_integral = !o->vs.unbounded && o->vs.all_int;
        return true;
    }
    diag_error(p->diags, out->loc, "internal: the output has no readable encoding");
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
    m->tie_tolerance = 1e-6;
    m->labels = ARENA_ARRAY(&m->arena, char *, D);
    for (size_t d = 0; d < D; d++) m->labels[d] = arena_strdup(&m->arena, p->labels[d]);
    m->token_embed = model_matrix(m, p->n_vocab + 1, D);
    m->pos_embed = model_matrix(m, N + 1, D);
    for (size_t t = 0; t <= p->n_vocab; t++) m->token_embed.data[t * D + DIM_ONE] = 1;
    if (p->numeric_tokens) { /* one row for every real token; the runtime adds its value */
        m->numeric_tokens = true;
        m->token_value_dim = p->tok_dim;
        m->token_lo = p->token_lo;
        m->token_hi = p->token_hi;
    } else {
        for (size_t t = 0; t < p->n_vocab; t++) m->token_embed.data[t * D + p->tok_dim + t] = 1;
    }
    m->token_embed.data[p->n_vocab * D + DIM_BOS] = 1;
    for (size_t i = 0; i < N; i++) m->pos_embed.data[(i + 1) * D + p->pos_dim + i] = 1;

    int layers = 0;
    for (size_t i = 0; i < p->n_heads; i++) if (p->heads[i].layer + 1 > layers) layers = p->heads[i].layer + 1;
    for (size_t i = 0; i < p->n_mlps; i++) if (p->mlps[i].layer + 1 > layers) layers = p->mlps[i].layer + 1;
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
    if (!ok) return false;
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
