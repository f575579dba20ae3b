/* The plan's toolkit: residual dims, heads, MLP ops and checks, and the encodings they give
 * s-ops (internal.h declares them). plan.c, kinds.c and the lowering passes build with these. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

static int cmp_named(const void *a, const void *b) {
    const IrNode *x = *(const IrNode *const *)a, *y = *(const IrNode *const *)b;
    int c = strcmp(x->name, y->name);
    if (!c) c = (x->loc.line > y->loc.line) - (x->loc.line < y->loc.line);
    if (!c) c = (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

void plan_unique_names(Plan *p, const IrNode *out) {
    size_t n = 0;
    const IrNode **v = ARENA_ARRAY(p->arena, const IrNode *, out->id + 1);
    for (size_t id = 0; id <= out->id; id++)
        if (p->info[id].reachable && p->info[id].node->name) v[n++] = p->info[id].node;
    if (n) qsort(v, n, sizeof *v, cmp_named);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(v[j]->name, v[i]->name)) j++;
        for (size_t k = i; j - i > 1 && k < j; k++) { /* a name several s-ops share: where each is */
            size_t same = 0, at = 0;
            for (size_t m = i; m < j; m++)
                if (v[m]->loc.line == v[k]->loc.line && v[m]->loc.col == v[k]->loc.col) {
                    if (m < k) at++;
                    same++;
                }
            p->info[v[k]->id].label = same > 1 ? arena_printf(p->arena, "%s@%d:%d#%zu", v[k]->name, v[k]->loc.line,
                                                              v[k]->loc.col, at + 1)
                                               : arena_printf(p->arena, "%s@%d:%d", v[k]->name, v[k]->loc.line,
                                                              v[k]->loc.col);
        }
        i = j;
    }
}

const char *plan_node_name(Plan *p, const IrNode *n) {
    if (p->info[n->id].label) return p->info[n->id].label;
    if (n->name) return n->name;
    return arena_printf(p->arena, "%s@%d:%d", ir_kind_name(n->kind), n->loc.line, n->loc.col);
}

uint32_t plan_alloc_dims(Plan *p, size_t count, const char *name, const ValueSet *vs) {
    uint32_t first = p->n_dims;
    if (p->n_dims + count > p->labels_cap) {
        size_t cap = p->labels_cap ? p->labels_cap * 2 : 256;
        while (cap < p->n_dims + count) cap *= 2;
        p->labels = arena_grow(p->arena, p->labels, p->n_dims, cap, sizeof(char *));
        p->labels_cap = cap;
    }
    for (size_t i = 0; i < count; i++) {
        char v[96];
        if (vs) value_format(vs->vals[i], v, sizeof v);
        p->labels[p->n_dims++] = vs ? arena_printf(p->arena, "%s:%s", name, v) : arena_strdup(p->arena, name);
    }
    return first;
}

bool plan_error(Plan *p, const IrNode *n, const char *what) {
    char d[160];
    vs_describe(n, d, sizeof d);
    const char *why = p->info[n->id].vs.unbounded ? vs_unbounded_why(p, n) : "";
    diag_error(p->diags, n->loc, "%s %s%s", d, what, why);
    return false;
}

LinView plan_index_power(Plan *p, unsigned power) {
    Term *t = ARENA_ARRAY(p->arena, Term, p->max_len ? p->max_len : 1);
    size_t n = 0;
    for (size_t i = 1; i < p->max_len; i++) /* i = 0 contributes nothing */
        t[n++] = (Term){p->pos_dim + (uint32_t)i, power == 1 ? (double)i : (double)(i * i)};
    return (LinView){t, n};
}

HeadOp *plan_new_head(Plan *p) {
    if (p->n_heads == p->heads_cap) {
        size_t cap = p->heads_cap ? p->heads_cap * 2 : 16;
        p->heads = arena_grow(p->arena, p->heads, p->n_heads, cap, sizeof(HeadOp));
        p->heads_cap = cap;
    }
    HeadOp *h = &p->heads[p->n_heads++];
    memset(h, 0, sizeof *h);
    return h;
}

PlanMargin *plan_add_margin(Plan *p) {
    if (p->n_margins == p->margins_cap) {
        size_t cap = p->margins_cap ? p->margins_cap * 2 : 8;
        p->margins = arena_grow(p->arena, p->margins, p->n_margins, cap, sizeof(PlanMargin));
        p->margins_cap = cap;
    }
    PlanMargin *m = &p->margins[p->n_margins++];
    memset(m, 0, sizeof *m);
    return m;
}

MlpOp *plan_new_mlp(Plan *p) {
    if (p->n_mlps == p->mlps_cap) {
        size_t cap = p->mlps_cap ? p->mlps_cap * 2 : 16;
        p->mlps = arena_grow(p->arena, p->mlps, p->n_mlps, cap, sizeof(MlpOp));
        p->mlps_cap = cap;
    }
    MlpOp *m = &p->mlps[p->n_mlps++];
    memset(m, 0, sizeof *m);
    return m;
}

ModelCheck *plan_add_check(Plan *p, int layer, uint32_t dim, size_t count, const char *what) {
    if (p->n_checks == p->checks_cap) {
        size_t cap = p->checks_cap ? p->checks_cap * 2 : 8;
        p->checks = arena_grow(p->arena, p->checks, p->n_checks, cap, sizeof(ModelCheck));
        p->checks_cap = cap;
    }
    p->checks[p->n_checks] = (ModelCheck){(size_t)layer, dim, count, what, MODEL_CHECK_ONE_HOT, NULL};
    return &p->checks[p->n_checks++];
}

/* After the layer that writes a block: all positions must hold one kind of value. */
void plan_check_one_kind(Plan *p, SopInfo *info, int layer) {
    if (!vs_mixed_kinds(&info->vs)) return;
    ModelCheck *c = plan_add_check(p, layer, info->cat_dim, info->vs.n, plan_node_name(p, info->node));
    c->kind = MODEL_CHECK_ONE_KIND;
    c->is_string = ARENA_ARRAY(p->arena, bool, info->vs.n);
    for (size_t i = 0; i < info->vs.n; i++) c->is_string[i] = info->vs.vals[i].kind == VAL_STR;
}

/* Gives s-op `info` a categorical block of fresh dims (its views become unit vectors). */
void plan_own_cat_block(Plan *p, SopInfo *info) {
    info->cat_dim = plan_alloc_dims(p, info->vs.n, plan_node_name(p, info->node), &info->vs);
    info->cat_block = info->has_cat = true;
    info->cat = ARENA_ARRAY(p->arena, LinView, info->vs.n ? info->vs.n : 1);
    for (size_t i = 0; i < info->vs.n; i++) info->cat[i] = lv_unit(p->arena, info->cat_dim + (uint32_t)i, 1);
}

/* The numerical view of a categorical s-op with numeric values: sum of value * one-hot. */
void plan_num_from_cat(Plan *p, SopInfo *info) {
    if (!info->has_cat || !info->vs.numeric || info->has_num) return;
    LvBuild b = {0};
    for (size_t i = 0; i < info->vs.n; i++) lvb_add(&b, value_as_double(info->vs.vals[i]), info->cat[i]);
    LinView v = lvb_done(p->arena, &b);
    info->num = v;
    info->has_num = true;
}

bool plan_add_grid(Plan *p, MlpOp *m, LinView view, size_t n, double **scalar, uint32_t *index) {
    if (m->n_grid == CG_MAX_GRID_ARGS)
        return plan_error(p, m->node, "reads too many s-ops for one MLP (internal limit)");
    *index = (uint32_t)m->n_grid;
    GridArg *g = &m->grid[m->n_grid++];
    g->view = view;
    g->n = n;
    g->scalar = *scalar = ARENA_ARRAY(p->arena, double, n ? n : 1);
    g->onehot = NULL;
    g->dev = 0;
    return true;
}

/* Adds leaf `a` of an MLP: a selector width through its heads' outputs u (-1/(w+1) ascends
 * with w), a number through its numerical view, anything else through the rank of its value. */
/* A leaf whose kinds collide (1 and 1.0) and matter gets its kind block as a second input. */
static bool kind_axis(Plan *p, MlpOp *m, size_t j, SopInfo *a) {
    if (!a->want_kind || !a->has_kind) return true;
    LeafMap *leaf = &m->leaf[j];
    double *sc = NULL;
    LinView v = lv_empty();
    for (uint32_t k = 0; k < a->n_kinds; k++) v = lv_combine(p->arena, 1, v, (double)k, a->kind_cat[k]);
    if (!plan_add_grid(p, m, v, a->n_kinds, &sc, &leaf->kind_arg)) return false;
    for (uint32_t k = 0; k < a->n_kinds; k++) sc[k] = (double)k;
    leaf->has_kind_axis = true;
    leaf->kinds = a->kinds;
    return true;
}

static bool scalar_arg_value(Plan *p, MlpOp *m, size_t j, SopInfo *a, bool via_u);

bool plan_kind_leaf(Plan *p, MlpOp *m, size_t j, SopInfo *a) {
    LeafMap *leaf = &m->leaf[j];
    m->n_leaves = j + 1 > m->n_leaves ? j + 1 : m->n_leaves;
    leaf->node = a->node;
    leaf->vs = NULL;
    if (a->n_kinds == 0) a->n_kinds = sop_kinds(p, a->node, a->kinds);
    bool block = a->has_kind && a->n_kinds > 1;
    if (!block && a->n_kinds != 1) return plan_error(p, a->node, "has no kind block (internal compiler error)");
    LinView v = lv_empty();
    for (uint32_t k = 0; block && k < a->n_kinds; k++) v = lv_combine(p->arena, 1, v, (double)k, a->kind_cat[k]);
    double *sc = NULL;
    if (!plan_add_grid(p, m, v, block ? a->n_kinds : 1, &sc, &leaf->kind_arg)) return false;
    for (uint32_t k = 0; k < (block ? a->n_kinds : 1); k++) sc[k] = (double)k;
    leaf->has_kind_axis = true;
    leaf->kinds = a->kinds;
    return true;
}

int plan_leaf_time(const SopInfo *a) {
    int t = a->has_u ? a->u_time : a->has_heavy ? a->heavy_time : a->time;
    return a->want_kind && a->has_kind && a->kind_time > t ? a->kind_time : t;
}

/* Whether x is read as exact one-hot dims of the embedding. */
static bool embedding_onehot(const Plan *p, const IrNode *x) {
    return x->kind == IR_INDICES || (x->kind == IR_TOKENS && !p->numeric_tokens);
}

bool plan_scalar_arg(Plan *p, MlpOp *m, size_t j, SopInfo *a, bool via_u) {
    return scalar_arg_value(p, m, j, a, via_u) && kind_axis(p, m, j, a);
}

/* Whether MLP m can read heavy view a off its values besides its other inputs: mlp.c puts such
 * inputs fastest, so with one there already, each must be within 1/16 of a step of the other's
 * span (classify.c heavy_pair raised their BOS weights for it); else a takes the exact way. */
static bool deviation_fits(const Plan *p, const MlpOp *m, const SopInfo *a) {
    size_t others = 0;
    for (size_t j = 0; j < m->n_grid; j++) {
        const GridArg *g = &m->grid[j];
        if (!(g->dev > 0)) continue;
        double span_g = g->scalar[g->n - 1] - g->scalar[0] + 1, span_a = heavy_span(p, a->node);
        if (++others > 1 || a->heavy_dev * 16 * span_g > 1 || g->dev * 16 * span_a > 1) return false;
    }
    return true;
}

/* s-op a read through its heavy view (SopInfo.heavy: a width through a heavy BOS, or an affine
 * map of such widths): one input listing its values (a width's 0..N), off them by heavy_dev
 * (<= 1/8) besides rounding; mlp.c steps between consecutive values, flat a quarter around each. */
static bool heavy_axis(Plan *p, MlpOp *m, LeafMap *leaf, const SopInfo *a) {
    double *sc = NULL;
    uint32_t arg;
    bool width = a->node->kind == IR_SELECTOR_WIDTH;
    size_t n = width ? p->max_len + 1 : a->vs.n;
    if (!plan_add_grid(p, m, a->heavy, n, &sc, &arg)) return false;
    for (size_t i = 0; i < n; i++) sc[i] = width ? (double)i : value_as_double(a->vs.vals[i]);
    m->grid[arg].dev = a->heavy_dev;
    leaf->vs = &a->vs;
    if (!width) {
        leaf->arg = arg;
        return true;
    }
    leaf->width = true;
    leaf->args[0] = arg;
    leaf->n_u = 1;
    leaf->coef[0] = 1;
    leaf->base[0] = 0;
    return true;
}

static bool scalar_arg_value(Plan *p, MlpOp *m, size_t j, SopInfo *a, bool via_u) {
    if (a->vs.unbounded) return plan_error(p, a->node, "has too many possible values to tabulate in an MLP");
    LeafMap *leaf = &m->leaf[j];
    m->n_leaves = j + 1 > m->n_leaves ? j + 1 : m->n_leaves;
    leaf->node = a->node;
    double *sc = NULL;
    /* the embedding's one-hot blocks are exact: such an input can gate the others (mlp.c) */
    bool onehot = a->node->kind == IR_INDICES || (a->node->kind == IR_TOKENS && !p->numeric_tokens) ||
                  (a->pos_free && a->has_cat) || /* a free view of indices: a sum of its one-hot dims */
                  (a->cat_src && a->has_cat && embedding_onehot(p, a->cat_src)); /* the same of tokens */
    if (a->has_u && via_u) {
        leaf->width = true;
        leaf->vs = &a->vs;
        size_t base = a->node->kind == IR_LENGTH ? 1 : 0;
        double lambda = a->u_lambda > 1 ? a->u_lambda : 1;
        if (a->has_heavy && deviation_fits(p, m, a)) return heavy_axis(p, m, leaf, a);
        leaf->n_u = a->n_u;
        for (uint32_t i = 0; i < a->n_u; i++) {
            if (!plan_add_grid(p, m, lv_unit(p->arena, a->u_dims[i], -1), p->max_len + 1 - base, &sc, &leaf->args[i]))
                return false;
            for (size_t w = base; w <= p->max_len; w++) sc[w - base] = -lambda / (lambda + (double)w);
            leaf->coef[i] = a->u_coef[i];
            leaf->base[i] = (double)base;
        }
        return true;
    }
    if (via_u && a->has_heavy && deviation_fits(p, m, a)) return heavy_axis(p, m, leaf, a);
    leaf->vs = &a->vs;
    /* a number through its numerical view, unless that view cannot tell members apart (1 and
     * 1.0, -0.0 and 0.0, rounding twins) and the rank of a one-hot can */
    bool by_number = a->vs.by_number ? !vs_inexact_as_numbers(&a->vs) : vs_decodable(&a->vs, false, NULL);
    if (a->vs.numeric && a->has_num && (!a->has_cat || by_number)) {
        if (!plan_add_grid(p, m, a->num, a->vs.n, &sc, &leaf->arg)) return false;
        for (size_t i = 0; i < a->vs.n; i++) sc[i] = value_as_double(a->vs.vals[i]);
        if (onehot && a->has_cat) m->grid[leaf->arg].onehot = a->cat;
        return true;
    }
    if (!a->has_cat) return plan_error(p, a->node, "has no encoding an MLP can read (internal)");
    LvBuild b = {0};
    for (size_t i = 0; i < a->vs.n; i++) lvb_add(&b, (double)i, a->cat[i]);
    LinView v = lvb_done(p->arena, &b);
    if (!plan_add_grid(p, m, v, a->vs.n, &sc, &leaf->arg)) return false;
    for (size_t i = 0; i < a->vs.n; i++) sc[i] = (double)i;
    if (onehot) m->grid[leaf->arg].onehot = a->cat;
    return true;
}

/* Output of an MLP op: a categorical block (with a one-hot check when a combination fails) or
 * a numerical dim. */
void plan_mlp_output(Plan *p, MlpOp *m, SopInfo *info, bool want_cat_out) {
    m->out_vs = &info->vs;
    if (want_cat_out) {
        plan_own_cat_block(p, info);
        m->out_cat = true;
        m->out_dim = info->cat_dim;
        plan_num_from_cat(p, info);
        if (info->may_fail)
            plan_add_check(p, m->layer, info->cat_dim, info->vs.n, plan_node_name(p, info->node));
        plan_check_one_kind(p, info, m->layer);
    } else {
        m->out_dim = plan_alloc_dims(p, 1, plan_node_name(p, info->node), NULL);
        info->num = lv_unit(p->arena, m->out_dim, 1);
        info->has_num = true;
    }
}

/* The slot from which every dim view v reads holds its value, or `t` if later: the embedding's
 * at 0, others at the slot of the op that writes them (a kind block's kind_time can be later
 * than the views it ends up with, or earlier than a block materialised since). */
int plan_view_time(const Plan *p, LinView v, int t) {
    uint32_t embedded = p->pos_dim + (uint32_t)p->max_len;
    for (size_t i = 0; i < v.n; i++) {
        uint32_t d = v.terms[i].dim;
        if (d < embedded) continue;
        for (size_t h = 0; h < p->n_heads; h++)
            for (size_t j = 0; j < p->heads[h].n_vals; j++)
                if (p->heads[h].out_dims[j] == d && 2 * p->heads[h].layer + 1 > t) t = 2 * p->heads[h].layer + 1;
        for (size_t j = 0; j < p->n_mlps; j++) {
            const MlpOp *op = &p->mlps[j];
            if (d >= op->out_dim && d < op->out_dim + mlp_out_count(op) && 2 * op->layer + 2 > t) t = 2 * op->layer + 2;
        }
    }
    return t;
}

/* The slot after which MLP m's leaf 0 can be read: `t`, or later for its kind axis. */
static int leaf_kinds_time(const Plan *p, const MlpOp *m, int t) {
    return m->leaf[0].has_kind_axis ? plan_view_time(p, m->grid[m->leaf[0].kind_arg].view, t) : t;
}

/* A categorical encoding for an s-op that only has a numerical one: an MLP discretises it. */
bool plan_convert_to_cat(Plan *p, SopInfo *info) {
    if (info->vs.unbounded)
        return plan_error(p, info->node, "is used categorically but has too many possible values");
    MlpOp *m = plan_new_mlp(p);
    m->node = info->node;
    m->fn = MLP_FN_IDENTITY;
    if (!plan_scalar_arg(p, m, 0, info, false)) return false;
    /* after the number, and after the kind block when it reads it (0 and 0.0 tell apart) */
    int slot = next_slot(leaf_kinds_time(p, m, info->time), false);
    m->layer = slot_layer(slot);
    LinView keep = info->num;
    plan_mlp_output(p, m, info, true);
    info->num = keep; /* the original numerical view stays exact and available earlier */
    info->time = slot;
    return true;
}

void plan_dump(Plan *p, const IrNode *out, FILE *f) {
    static const char *const dep[] = {"const", "index", "length", "index+length"};
    fprintf(f, "# s-op                             values     encoding                  available\n");
    for (size_t id = 0; id <= out->id; id++) {
        const SopInfo *x = &p->info[id];
        if (!x->reachable || ir_is_selector(x->node) || (!x->needed && !x->want_target)) continue;
        char name[64], vals[32], enc[96] = "";
        snprintf(name, sizeof name, "%s@%d:%d", x->node->name ? x->node->name : ir_kind_name(x->node->kind),
                 x->node->loc.line, x->node->loc.col);
        if (x->vs.unbounded) snprintf(vals, sizeof vals, "unbounded");
        else snprintf(vals, sizeof vals, "%zu%s", x->vs.n, x->vs.approx ? "~" : "");
        size_t k = 0;
        if (x->cat_block) k += (size_t)snprintf(enc + k, sizeof enc - k, "one-hot ");
        else if (x->has_cat) k += (size_t)snprintf(enc + k, sizeof enc - k, "cat-view ");
        if (x->has_num && k < sizeof enc) k += (size_t)snprintf(enc + k, sizeof enc - k, "num ");
        if (x->has_u && k < sizeof enc) k += (size_t)snprintf(enc + k, sizeof enc - k, "u%u ", x->n_u);
        if (x->has_kind && k < sizeof enc) k += (size_t)snprintf(enc + k, sizeof enc - k, "kind ");
        if (x->has_target && k < sizeof enc) k += (size_t)snprintf(enc + k, sizeof enc - k, "target ");
        if (x->gated && k < sizeof enc) k += (size_t)snprintf(enc + k, sizeof enc - k, "gated ");
        if (x->pos && x->pos->val && k < sizeof enc)
            snprintf(enc + k, sizeof enc - k, "pos:%s%s", dep[x->pos->dep], x->pos_free ? "(free)" : "");
        int t = x->has_u ? x->u_time : x->time;
        fprintf(f, "%-34s %-10s %-25s slot %d (layer %d %s)", name, vals, enc, t, t ? slot_layer(t) : 0,
                t == 0 ? "embedding" : t % 2 ? "attention" : "mlp");
        if (x->sw) { /* a switch (switch.c): its gates, then its numeric leaves */
            fprintf(f, "  switch of");
            for (uint32_t k = 0; k < x->sw->n_gates + x->sw->n_xs; k++) {
                const IrNode *l = k < x->sw->n_gates ? x->sw->gates[k] : x->sw->xs[k - x->sw->n_gates];
                fprintf(f, " %s@%d:%d", l->name ? l->name : ir_kind_name(l->kind), l->loc.line, l->loc.col);
            }
        }
        if (x->has_mlp_leaves) { /* what its MLP reads */
            fprintf(f, "  reads");
            for (uint32_t k = 0; k < x->n_leaves; k++)
                fprintf(f, " %s@%d:%d", x->leaves[k]->name ? x->leaves[k]->name : ir_kind_name(x->leaves[k]->kind),
                        x->leaves[k]->loc.line, x->leaves[k]->loc.col);
        }
        if (x->real) { /* reals.c: where it lies and how far the model may be from it */
            static const char *const how[] = {"input",    "affine",  "mean",  "copy",   "function",
                                              "product",  "quotient", "log-domain product", "gated", "refused"};
            fprintf(f, "  real %s [%g, %g] error %.3g + %.3g|x|", how[x->real->how], x->real->range.lo,
                    x->real->range.hi, x->real->err, x->real->rel);
            const RealFn *fns[3] = {&x->real->fn, &x->real->fn_y, &x->real->fn_exp};
            int nf = x->real->how == REAL_FN ? 1 : x->real->how == REAL_QUOTIENT ? 1 + x->real->split
                                                  : x->real->how == REAL_LOGPROD ? 3 : 0;
            for (int i = 0; i < nf; i++)
                fprintf(f, " (%zu knots%s, %s error %.3g)", fns[i]->n_knots, fns[i]->quadratic ? " quadratic" : "",
                        fns[i]->relative ? "relative" : "absolute", fns[i]->err);
            const SquareLevels *sq = &x->real->sq;
            if ((x->real->how == REAL_PRODUCT || x->real->how == REAL_QUOTIENT) && sq->depth > 1)
                fprintf(f, " (squares in %d MLPs: chords %.3g apart, refined %u-fold per level)", sq->depth, sq->h1, sq->k);
        }
        fputc('\n', f);
    }
}
