/* The lowering plan: how each s-op is encoded (categorical / numerical, materialised or
 * virtual), when it becomes available (ASAP slots), which residual dims it owns, and the heads
 * and MLPs that compute it. Weights are written later by emit.c, layer by layer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"





/* ---- forward pass: views, dims, slots, ops ---- */









/* A positional s-op that depends on the index alone: its views are sums over the index
 * one-hot (a constant's are multiples of `one`). */
static bool plan_pos_free(Plan *p, SopInfo *info, const SopInfo *indices) {
    const PosTable *t = info->pos;
    info->cat = ARENA_ARRAY(p->arena, LinView, info->vs.n ? info->vs.n : 1);
    LvBuild *cat = calloc(info->vs.n ? info->vs.n : 1, sizeof *cat), num = {0};
    for (size_t i = 0; i < p->max_len; i++) {
        Value v;
        size_t w;
        if (!pos_lookup(t, (int64_t)i, (int64_t)i + 1, p->max_len, &v) || !vs_contains(&info->vs, v, &w)) {
            for (size_t k = 0; k < info->vs.n; k++) free(cat[k].t);
            free(cat);
            free(num.t);
            return plan_error(p, info->node, "has no value at an index (internal compiler error)");
        }
        LinView e = t->dep == POS_CONST ? lv_unit(p->arena, DIM_ONE, 1) : indices->cat[i];
        if (t->dep == POS_CONST && i > 0) break;
        lvb_add(&cat[w], 1, e);
        if (value_is_number(v)) lvb_add(&num, value_as_double(v), e);
    }
    for (size_t w = 0; w < info->vs.n; w++) info->cat[w] = lvb_done(p->arena, &cat[w]);
    free(cat);
    info->has_cat = true;
    LinView nv = lvb_done(p->arena, &num);
    if (info->vs.numeric) {
        info->num = nv;
        info->has_num = true;
    }
    info->time = 0;
    return true;
}



/* The index-match features of a positional target q (see SopInfo.target): over the index
 * one-hot when q depends on the index alone, else two MLPs from the index and the length. */
static bool plan_target(Plan *p, SopInfo *q) {
    size_t N = p->max_len, cells = N * (N + 1) / 2;
    PosTable *tt = ARENA_NEW(p->arena, PosTable), *tb = ARENA_NEW(p->arena, PosTable);
    tt->val = ARENA_ARRAY(p->arena, Value, cells);
    tb->val = ARENA_ARRAY(p->arena, Value, cells);
    tt->fail = tb->fail = q->pos->fail;
    for (size_t c = 0; c < cells; c++) {
        Value v = q->pos->val[c];
        double x = value_is_number(v) ? value_as_double(v) : -1;
        bool valid = x >= 0 && x == floor(x) && x < (double)N; /* an index some key has (10^15 is none) */
        double t = valid ? x : 0;
        tt->val[c] = value_float(t);
        tb->val[c] = value_float(t * t + 0.5 - valid);
    }
    tt->dep = tb->dep = q->pos->dep;
    const SopInfo *ix = &p->info[p->indices->id];
    if (q->pos->dep == POS_I || q->pos->dep == POS_CONST) {
        LvBuild bt = {0}, bb = {0};
        for (size_t i = 0; i < N; i++) {
            LinView e = q->pos->dep == POS_CONST ? lv_unit(p->arena, DIM_ONE, 1) : ix->cat[i];
            lvb_add(&bt, tt->val[pos_at(i + 1, i)].as.f, e);
            lvb_add(&bb, tb->val[pos_at(i + 1, i)].as.f, e);
            if (q->pos->dep == POS_CONST) break;
        }
        q->target = lvb_done(p->arena, &bt);
        q->target_bos = lvb_done(p->arena, &bb);
        q->target_time = 0;
        q->has_target = true;
        return true;
    }
    SopInfo *len = &p->info[p->length->id];
    int slot = next_slot(len->u_time > ix->time ? len->u_time : ix->time, false);
    const IrNode **lv = ARENA_ARRAY(p->arena, const IrNode *, 2);
    lv[0] = p->indices;
    lv[1] = p->length;
    for (int k = 0; k < 2; k++) {
        MlpOp *m = plan_new_mlp(p);
        m->node = q->node;
        m->fn = MLP_FN_TABLE;
        m->table = k ? tb : tt;
        m->leaves = lv;
        m->layer = slot_layer(slot);
        if (!plan_scalar_arg(p, m, 0, (SopInfo *)ix, true) || !plan_scalar_arg(p, m, 1, len, true)) return false;
        m->out_cat = false;
        m->out_vs = NULL;
        m->out_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, "%s:%s", plan_node_name(p, q->node),
                                                        k ? "bos score" : "target"), NULL);
        *(k ? &q->target_bos : &q->target) = lv_unit(p->arena, m->out_dim, 1);
    }
    q->target_time = slot;
    q->has_target = true;
    return true;
}


/* selector_width (and length, the width of the full selector): one head per term of the
 * selector, each attending uniformly to its selected keys and BOS and averaging the BOS flag,
 * so u = 1/(w+1); width = sum coef * (1/u - 1). An MLP turns the u's into the width's own
 * encoding when a consumer needs one; consumer MLPs read the u's directly. */
static bool plan_width(Plan *p, SopInfo *info, const IrNode *out) {
    const IrNode *n = info->node;
    WidthHeads w;
    if (!plan_width_heads(p, n, n->kind == IR_SELECTOR_WIDTH ? n->u.width.selector : NULL, &w)) return false;
    int slot = w.time;
    info->has_u = true;
    info->n_u = w.n_u;
    info->u_time = info->time = slot;
    memcpy(info->u_dims, w.u_dims, sizeof w.u_dims);
    memcpy(info->u_coef, w.u_coef, sizeof w.u_coef);
    info->u_lambda = w.u_lambda;
    if (w.u_lambda > 1) { /* sum_t coef_t lambda (1 - u_t), within heavy_dev of the width */
        LinView y = lv_empty();
        for (uint32_t t = 0; t < w.n_u; t++) {
            y = lv_combine(p->arena, 1, y, -w.u_coef[t] * w.u_lambda, lv_unit(p->arena, w.u_dims[t], 1));
            y = lv_combine(p->arena, 1, y, w.u_coef[t] * w.u_lambda, lv_unit(p->arena, DIM_ONE, 1));
        }
        info->heavy = y;
        info->heavy_dev = heavy_dev(p, n, NULL);
        info->heavy_time = slot;
        info->has_heavy = true;
    }
    if (!info->want_cat && !info->want_num && n != out) return true; /* only read through u */
    if (info->n_u == 0 && !info->want_cat && n != out) { /* a selector that never selects: 0 */
        info->num = lv_empty();
        info->has_num = true;
        return true;
    }
    /* through a heavy BOS the terms' sum is one input (ops.c): tabulated along it, not a grid */
    bool joint = info->u_lambda > 1 || pow((double)p->max_len + 1, (double)info->n_u) <= CG_MAX_WIDTH_JOINT;
    if (((!info->want_cat && info->want_num) || (info->want_cat && !joint)) && info->u_lambda == 1) {
        /* numerical: sum_i coef_i * w_i, one small MLP per term into one dim (tabulating the
         * terms jointly would cost a hidden pair per grid point of all the u's) */
        uint32_t dim = plan_alloc_dims(p, 1, plan_node_name(p, n), NULL);
        for (uint32_t t = 0; t < info->n_u; t++) {
            MlpOp *m = plan_new_mlp(p);
            m->layer = slot_layer(slot);
            m->node = n;
            m->fn = MLP_FN_IDENTITY;
            m->n_leaves = 1;
            LeafMap *leaf = &m->leaf[0];
            leaf->width = true;
            leaf->n_u = 1;
            leaf->coef[0] = info->u_coef[t];
            leaf->base[0] = n->kind == IR_LENGTH ? 1 : 0; /* leaf->vs stays NULL: every w_i occurs */
            double *sc = NULL;
            size_t base = (size_t)leaf->base[0];
            if (!plan_add_grid(p, m, lv_unit(p->arena, info->u_dims[t], -1), p->max_len + 1 - base, &sc, &leaf->args[0]))
                return false;
            for (size_t w = base; w <= p->max_len; w++) sc[w - base] = -1.0 / ((double)w + 1.0); /* lambda 1 */
            m->out_cat = false;
            m->out_vs = &info->vs;
            m->out_dim = dim;
        }
        info->num = lv_unit(p->arena, dim, 1);
        info->has_num = true;
        info->time = slot + 1;
        return true; /* a categorical encoding, if wanted, is discretised from `num` (plan_build) */
    }
    MlpOp *m = plan_new_mlp(p);
    m->layer = slot_layer(slot);
    m->node = n;
    m->fn = MLP_FN_IDENTITY;
    if (!plan_scalar_arg(p, m, 0, info, true)) return false;
    plan_mlp_output(p, m, info, info->want_cat || !info->want_num);
    info->time = slot + 1;
    return true;
}

/* Whether s-op x can hold booleans and numbers of another kind (True and 0; its value set may
 * merge True with 1, its kinds do not). */
static bool bools_and_numbers(const Plan *p, const IrNode *x) {
    unsigned k = p->kinds_possible[x->id];
    return (k >> VAL_BOOL & 1) && (k >> VAL_INT & 1 || k >> VAL_FLOAT & 1);
}

/* The one-hot views of the members of src equal to the number v whatever their kind (False and
 * 0), summed: what a member of a set compared by number (ValueSet.by_number) copies; where that
 * set keeps zero signs, only the zeros of v's sign (an int 0 is +0). */
static LinView same_number(Plan *p, const SopInfo *src, Value v, bool zero_signs) {
    LvBuild b = {0};
    for (size_t k = 0; k < src->vs.n && value_is_number(v); k++)
        if (value_is_number(src->vs.vals[k]) && value_number_order(src->vs.vals[k], v) == 0 &&
            !(zero_signs && vs_negative_zero(src->vs.vals[k]) != vs_negative_zero(v)))
            lvb_add(&b, 1, src->cat[k]);
    return lvb_done(p->arena, &b);
}

/* Tokens whose value set merged vocabulary tokens that no consumer tells apart (-0.0 and 0.0
 * where no sign shows): each member is the sum of its tokens' embedding dims, a view. */
static bool tokens_merged(Plan *p, SopInfo *info) {
    LvBuild *b = calloc(info->vs.n ? info->vs.n : 1, sizeof *b);
    if (!b) abort();
    bool ok = true;
    for (size_t t = 0; t < p->n_vocab && ok; t++) {
        size_t m;
        ok = vs_contains(&info->vs, p->vocab[t], &m);
        if (ok) lvb_add(&b[m], 1, lv_unit(p->arena, p->tok_dim + (uint32_t)t, 1));
    }
    for (size_t m = 0; m < info->vs.n; m++) {
        if (ok) info->cat[m] = lvb_done(p->arena, &b[m]);
        free(b[m].t);
    }
    free(b);
    info->cat_block = false;
    return ok || plan_error(p, info->node, "has a vocabulary token outside its value set (internal compiler error)");
}

static bool plan_aggregate(Plan *p, SopInfo *info, const IrNode *out) {
    const IrNode *n = info->node;
    SopInfo *src = &p->info[n->u.aggregate.sop->id];
    if (selector_never_selects(p, n->u.aggregate.selector) && info->vs.n == 1 && !info->may_fail && n != out) {
        /* its default everywhere: a constant, no head (scores of huge keys need not be exact) */
        info->cat = ARENA_NEW(p->arena, LinView);
        info->cat[0] = lv_unit(p->arena, DIM_ONE, 1);
        info->has_cat = true;
        plan_num_from_cat(p, info);
        info->time = 0;
        return true;
    }
    if (vs_mixed_kinds(&src->vs) && !selector_at_most_one(p, n->u.aggregate.selector))
        return plan_error(p, n, "averages an s-op that holds strings on some inputs and numbers on others; the "
                                "compiler needs one kind to know whether it averages or copies");
    if (bools_and_numbers(p, n->u.aggregate.sop) && aggregate_averages(p, n) &&
        !selector_at_most_one(p, n->u.aggregate.selector))
        return plan_error(p, n, "averages an s-op that holds booleans and other numbers (e.g. a default 0): the "
                                "reference raises on several keys when every value of the sequence is a boolean, and "
                                "averages otherwise, which the compiler cannot track; use indicator(...) for numbers");
    HeadOp *h = plan_new_head(p);
    h->tie_tol = 0.25; /* scores m (selected), m - 1/2 (BOS), at most m - 1 (others); index match: gaps 1 */
    int t_sel;
    if (!selector_lower(p, n->u.aggregate.selector, &h->cols, &h->n_cols, &h->bos_level, &h->bos_q, &t_sel, &h->causal))
        return false;
    bool one = selector_at_most_one(p, n->u.aggregate.selector);
    bool copy = !aggregate_averages(p, n) || (one && (info->want_cat || n == out) && src->has_cat);
    int slot = next_slot(t_sel > src->time ? t_sel : src->time, true);
    h->layer = slot_layer(slot);
    h->node = n;
    h->label = arena_printf(p->arena, "aggregate %s", plan_node_name(p, n));
    Value d = n->u.aggregate.default_value;
    if (copy) {
        if (!src->has_cat) return plan_error(p, src->node, "has no categorical encoding (internal)");
        if (info->vs.unbounded) return plan_error(p, n, "has too many possible values");
        plan_own_cat_block(p, info);
        h->n_vals = info->vs.n;
        h->vals = ARENA_ARRAY(p->arena, LinView, h->n_vals ? h->n_vals : 1);
        h->bos_value = ARENA_ARRAY(p->arena, double, h->n_vals ? h->n_vals : 1);
        h->out_dims = ARENA_ARRAY(p->arena, uint32_t, h->n_vals ? h->n_vals : 1);
        bool by_number = info->vs.by_number; /* its members stand for every kind of their number */
        for (size_t i = 0; i < info->vs.n; i++) {
            Value v = info->vs.vals[i];
            size_t si;
            h->vals[i] = vs_contains(&src->vs, v, &si) ? src->cat[si]
                         : by_number                   ? same_number(p, src, v, info->vs.zero_signs)
                                                       : lv_empty();
            h->bos_value[i] = vs_member_order(&info->vs, v, d) == 0; /* -0.0 is not 0.0 where the sign shows */
            h->out_dims[i] = info->cat_dim + (uint32_t)i;
        }
        plan_num_from_cat(p, info);
        plan_check_one_kind(p, info, h->layer);
        if (!one) { /* the reference raises when several keys are selected: so must we */
            const char *name = plan_node_name(p, n);
            uint32_t d = plan_alloc_dims(p, 1, arena_printf(p->arena, "%s:mean(i)", name), NULL);
            plan_alloc_dims(p, 1, arena_printf(p->arena, "%s:mean(i^2)", name), NULL);
            size_t k = h->n_vals;
            h->vals = arena_grow(p->arena, h->vals, k, k + 2, sizeof *h->vals);
            h->bos_value = arena_grow(p->arena, h->bos_value, k, k + 2, sizeof *h->bos_value);
            h->out_dims = arena_grow(p->arena, h->out_dims, k, k + 2, sizeof *h->out_dims);
            h->vals[k] = plan_index_power(p, 1);
            h->vals[k + 1] = plan_index_power(p, 2);
            h->out_dims[k] = d;
            h->out_dims[k + 1] = d + 1;
            h->n_vals = k + 2;
            plan_add_check(p, h->layer, d, 2, plan_node_name(p, n))->kind = MODEL_CHECK_SINGLE_KEY;
        }
    } else {
        if (!value_is_number(d)) return plan_error(p, n, "averages numbers but has a non-numeric default");
        if (!src->has_num) return plan_error(p, src->node, "has no numerical encoding (internal)");
        uint32_t dim = plan_alloc_dims(p, 1, plan_node_name(p, n), NULL);
        h->n_vals = 1;
        h->vals = ARENA_NEW(p->arena, LinView);
        h->vals[0] = src->num;
        h->bos_value = ARENA_NEW(p->arena, double);
        h->bos_value[0] = value_as_double(d);
        h->out_dims = ARENA_NEW(p->arena, uint32_t);
        h->out_dims[0] = dim;
        info->num = lv_unit(p->arena, dim, 1);
        info->has_num = true;
    }
    info->time = slot;
    return true;
}

/* The heavy view of an affine map (SopInfo.heavy): the same combination of its arguments' heavy
 * views (widths through a heavy BOS, heavy maps) and exact free views, off by their deviations. */
static bool plan_heavy_affine(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    LinView v[2] = {lv_empty(), lv_empty()};
    double c[2] = {0, 0}, dev[2] = {0, 0};
    int t = 0;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->node->kind == IR_CONST) {
            c[j] = value_as_double(a->node->u.constant);
            continue;
        }
        if (a->has_heavy) {
            v[j] = a->heavy;
            dev[j] = a->heavy_dev;
            if (a->heavy_time > t) t = a->heavy_time;
        } else if (a->has_num) {
            v[j] = a->num;
            if (a->time > t) t = a->time;
        } else {
            return plan_error(p, a->node, "has no heavy or free numerical view (internal compiler error)");
        }
    }
    switch (n->u.map.op) {
    case VOP_NEG: info->heavy = lv_combine(p->arena, -1, v[0], 0, lv_empty()); info->heavy_dev = dev[0]; break;
    case VOP_POS: info->heavy = v[0]; info->heavy_dev = dev[0]; break;
    case VOP_ADD: /* a constant argument's view is empty: add it */
    case VOP_SUB: {
        double s = n->u.map.op == VOP_SUB ? -1 : 1;
        info->heavy = lv_combine(p->arena, 1, v[0], s, v[1]);
        info->heavy = lv_combine(p->arena, 1, info->heavy, c[0] + s * c[1], lv_unit(p->arena, DIM_ONE, 1));
        info->heavy_dev = dev[0] + dev[1];
        break;
    }
    case VOP_MUL: {
        int k = n->u.map.args[1]->kind == IR_CONST ? 1 : 0;
        info->heavy = lv_combine(p->arena, c[k], v[1 - k], 0, lv_empty());
        info->heavy_dev = fabs(c[k]) * dev[1 - k];
        break;
    }
    default: return plan_error(p, n, "has no heavy view (internal compiler error)");
    }
    info->heavy_time = t;
    info->has_heavy = true;
    return true;
}

/* A map computed by an MLP from its leaves (see choose_leaves). */
static bool tabulate(Plan *p, SopInfo *info, bool out_cat) {
    const IrNode *n = info->node;
    if (info->vs.unbounded) return plan_error(p, n, "has too many possible values to tabulate");
    int t = 0;
    for (uint32_t k = 0; k < info->n_leaves; k++) {
        const SopInfo *a = &p->info[info->leaves[k]->id];
        int tk = plan_leaf_time(a);
        if (tk > t) t = tk;
    }
    MlpOp *m = plan_new_mlp(p);
    int slot = next_slot(t, false);
    m->layer = slot_layer(slot);
    m->node = n;
    m->fn = MLP_FN_MAP;
    m->leaves = info->leaves;
    for (int heavy_first = 1; heavy_first >= 0; heavy_first--) /* a heavy map's view off its values first */
        for (uint32_t k = 0; k < info->n_leaves; k++) {
            SopInfo *a = &p->info[info->leaves[k]->id];
            if ((a->has_heavy && a->node->kind == IR_MAP) == heavy_first && !plan_scalar_arg(p, m, k, a, true))
                return false;
        }
    LinView keep = info->num;
    bool had_num = info->has_num;
    /* the tabulated subtree may raise even where this map itself cannot (x % y - 5) */
    info->may_fail = info->may_fail || map_subtree_may_fail(p, n, info->leaves, info->n_leaves);
    out_cat = out_cat || info->may_fail;
    plan_mlp_output(p, m, info, out_cat);
    if (had_num) info->num = keep; /* a free numerical view stays the earlier one */
    info->time = slot;
    return true;
}

/* A gated map (internal.h, Gated): one MLP op, a numerical output. */
static bool plan_gated(Plan *p, SopInfo *info) {
    const Gated *gd = info->gated;
    SopInfo *g = &p->info[gd->gate->id], *y = &p->info[gd->y->id], *y2 = gd->y2 ? &p->info[gd->y2->id] : y;
    if (!g->has_cat && !plan_convert_to_cat(p, g)) return false;
    if (!y->has_num) return plan_error(p, y->node, "has no numerical encoding (internal compiler error)");
    if (!y2->has_num) return plan_error(p, y2->node, "has no numerical encoding (internal compiler error)");
    MlpOp *m = plan_new_mlp(p);
    int t = g->time > y->time ? g->time : y->time;
    int slot = next_slot(t > y2->time ? t : y2->time, false);
    m->layer = slot_layer(slot);
    m->node = info->node;
    m->fn = MLP_FN_GATED;
    m->gated = gd;
    m->gate_views = g->cat;
    m->y_view = y->num;
    m->y2_view = y2->num;
    m->out_cat = false;
    m->out_vs = &info->vs;
    m->out_dim = plan_alloc_dims(p, 1, plan_node_name(p, info->node), NULL);
    info->num = lv_unit(p->arena, m->out_dim, 1);
    info->has_num = true;
    info->time = slot;
    return true;
}

/* Near a jump of fn, a function of s-op x (read through view xv), the model cannot decide: the
 * runtime refuses there, within the margin widened by x's error (then the reference's x is on
 * the same side), naming s-op `node`. A program's function is built a margin plus x's largest
 * error past each jump, and checked as wide. A lowering's own (a quotient's 1 / y, whose pieces
 * stop a margin short of a steep end: out23 fuzz, x / 2 ^ x over -50..50 answered -1e8 for
 * -5.6e16; a log-domain product's logarithms) is built a margin past it alone: checked by the
 * margin and twice x's error there, not at x's largest (out23b-004: 2 ^ x within 1e8 of 8.9e-16
 * refused three quarters of the range). */
static void plan_jump_margins(Plan *p, const RealFn *fn, const SopInfo *x, LinView xv, const IrNode *node, bool own,
                              double fn_margin) {
    if (!fn->n_jumps) return;
    PlanMargin *mg = plan_add_margin(p);
    mg->view = xv;
    mg->thresholds = fn->jump_at;
    mg->n = fn->n_jumps;
    mg->margin = p->real_margin + (x->real ? real_abs_err(x->real) : 0);
    if (!own && fn_margin > 0) mg->margin = fn_margin; /* a program's function: as it was built */
    if (own && x->real) { /* the reference's x past the pieces' start wherever the model's is past the check */
        double t = 0;
        for (size_t i = 0; i < fn->n_jumps; i++) t = fmax(t, fabs(fn->jump_at[i]));
        mg->margin = fmin(mg->margin, p->real_margin + 2 * (x->real->err + x->real->rel * (t + p->real_margin)));
    }
    mg->node = node;
    mg->after_slot = x->time;
}

/* An MLP in the layer of `slot` computing the piecewise-linear fn of view x into a new dim,
 * named after s-op `about`; the dim. */
static uint32_t plan_pwl_dim(Plan *p, const RealFn *fn, LinView x, int slot, const IrNode *node, const char *fmt,
                             const IrNode *about) {
    MlpOp *m = plan_new_mlp(p);
    m->node = node;
    m->fn = MLP_FN_PWL;
    m->pwl = fn;
    m->x_view = x;
    m->layer = slot_layer(slot);
    m->out_cat = false;
    m->out_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, fmt, plan_node_name(p, about)), NULL);
    return m->out_dim;
}

/* Where the model's view of a numerical argument lies: a real's range widened by its error, or
 * a finite set's extremes. */
static Ival view_range(const SopInfo *x) {
    if (x->real) return (Ival){x->real->range.lo - real_abs_err(x->real), x->real->range.hi + real_abs_err(x->real)};
    if (x->node->kind == IR_CONST) {
        double c = value_as_double(x->node->u.constant);
        return (Ival){c, c};
    }
    return (Ival){value_as_double(x->vs.vals[0]), value_as_double(x->vs.vals[x->vs.n - 1])};
}

/* A numerical view of an argument, constants included. */
static bool num_view(Plan *p, const SopInfo *x, LinView *v) {
    if (x->node->kind == IR_CONST) {
        *v = lv_unit(p->arena, DIM_ONE, value_as_double(x->node->u.constant));
        return true;
    }
    if (!x->has_num) return plan_error(p, x->node, "has no numerical encoding (internal compiler error)");
    *v = x->num;
    return true;
}

/* c ReLU(x) for x up to top, as a piecewise-linear function (one unit, no bias). */
static const RealFn *ramp_fn(Plan *p, double top, double c) {
    RealFn *f = ARENA_NEW(p->arena, RealFn);
    f->n_knots = 2;
    f->kx = ARENA_ARRAY(p->arena, double, 2);
    f->ky = ARENA_ARRAY(p->arena, double, 2);
    f->kx[0] = f->ky[0] = 0;
    f->kx[1] = top;
    f->ky[1] = c * top;
    return f;
}

/* The squares of product MLP mlps[i] by depth (squares.c): its later levels, one MLP a layer,
 * each adding its part to the product's dim and passing the sawtooths w on in dims of their own;
 * the product is read after the last. */
static bool plan_square_levels(Plan *p, SopInfo *info, size_t i, const SquareLevels *sq) {
    if (sq->depth == 0) return plan_error(p, info->node, "needs squares finer than any depth builds (internal compiler error)");
    p->mlps[i].sq = sq;
    p->mlps[i].level = 0;
    if (sq->depth == 1) return true;
    /* x * x: (x - x)^2 is exactly 0 (mlp.c adds nothing for it), one square to refine */
    int sides = info->node->u.map.args[0] == info->node->u.map.args[1] ? 1 : 2;
    uint32_t w[2] = {UINT32_MAX, UINT32_MAX};
    p->mlps[i].sq_next[1] = UINT32_MAX;
    for (int s = 0; s < sides; s++)
        w[s] = p->mlps[i].sq_next[s] = plan_alloc_dims(p, 1, arena_printf(p->arena, "%s w1%c", plan_node_name(p, info->node), "+-"[s]), NULL);
    for (int level = 1; level < sq->depth; level++) {
        MlpOp *m = plan_new_mlp(p), *first = &p->mlps[i]; /* plan_new_mlp may move the array */
        m->node = info->node;
        m->fn = MLP_FN_SQUARE_LEVEL;
        m->sq = sq;
        m->level = level;
        m->x_view = lv_unit(p->arena, w[0], 1);
        m->y_view = sides == 2 ? lv_unit(p->arena, w[1], 1) : lv_empty();
        m->layer = first->layer + level;
        m->out_cat = false;
        m->out_dim = first->out_dim;
        m->sq_next[0] = m->sq_next[1] = UINT32_MAX;
        for (int s = 0; s < sides && level + 1 < sq->depth; s++)
            w[s] = m->sq_next[s] = plan_alloc_dims(
                p, 1, arena_printf(p->arena, "%s w%d%c", plan_node_name(p, info->node), level + 1, "+-"[s]), NULL);
    }
    info->time += 2 * (sq->depth - 1);
    return true;
}

/* A map of real s-ops (reals.c chose how): a piecewise-linear function of one real, with margin
 * checks around its jumps; a product of two numbers; a quotient, x * (1 / y), with 1 / y a
 * function of y first (or both in one gated MLP). */
static bool plan_real(Plan *p, SopInfo *info) {
    const RealInfo *r = info->real_fn ? info->real_fn : info->real;
    if (r->how == REAL_REFUSED) return plan_error(p, info->node, arena_printf(p->arena, "cannot be compiled with a proven "
                                                                              "error bound: it %s", r->why));
    if (r->how == REAL_FN) {
        SopInfo *x = &p->info[r->arg->id];
        LinView xv;
        if (!num_view(p, x, &xv)) return false;
        plan_jump_margins(p, &r->fn, x, xv, info->node, false, r->fn_margin);
        MlpOp *m = plan_new_mlp(p);
        m->node = info->node;
        m->fn = MLP_FN_PWL;
        m->pwl = &r->fn;
        m->x_view = xv;
        int slot = next_slot(x->time, false);
        m->layer = slot_layer(slot);
        if (info->real_fn) { /* finitely many values: a one-hot block, exact outside the margins */
            plan_mlp_output(p, m, info, true);
        } else {
            m->out_cat = false;
            m->out_dim = plan_alloc_dims(p, 1, plan_node_name(p, info->node), NULL);
            info->num = lv_unit(p->arena, m->out_dim, 1);
            info->has_num = true;
        }
        info->time = slot;
        return true;
    }
    if (r->how != REAL_PRODUCT && r->how != REAL_QUOTIENT && r->how != REAL_LOGPROD)
        return plan_error(p, info->node, "is real-valued but has no lowering (internal compiler error)");
    SopInfo *x = &p->info[info->node->u.map.args[0]->id], *y = &p->info[info->node->u.map.args[1]->id];
    LinView xv, yv;
    if (r->how == REAL_LOGPROD) { /* ln|x| and ln|y| in one layer, then +-exp of their sum or difference */
        x = &p->info[r->arg->id]; /* what the logs read: a factor, or the real a factor is a function of */
        y = &p->info[r->arg_y->id];
        if (!num_view(p, x, &xv) || !num_view(p, y, &yv)) return false;
        if (r->fn_exp.n_jumps) return plan_error(p, info->node, "has a jump in its exponential (internal compiler error)");
        plan_jump_margins(p, &r->fn, x, xv, x->node, true, 0);
        plan_jump_margins(p, &r->fn_y, y, yv, y->node, true, 0);
        int sx = next_slot(x->time, false), sy = next_slot(y->time, false);
        uint32_t lx = plan_pwl_dim(p, &r->fn, xv, sx, info->node, "ln|%s|", x->node);
        uint32_t ly = plan_pwl_dim(p, &r->fn_y, yv, sy, info->node, "ln|%s|", y->node);
        LinView u = lv_combine(p->arena, 1, lv_unit(p->arena, lx, 1), r->divide ? -1 : 1, lv_unit(p->arena, ly, 1));
        int slot = next_slot(sx > sy ? sx : sy, false);
        info->num = lv_unit(p->arena, plan_pwl_dim(p, &r->fn_exp, u, slot, info->node, "%s", info->node), 1);
        info->has_num = true;
        info->time = slot;
        return true;
    }
    if (!num_view(p, x, &xv) || !num_view(p, y, &yv)) return false;
    if (r->how == REAL_QUOTIENT && r->zero_hole > 0) { /* a finite divisor at 0: the reference raises */
        static const double zero[1] = {0};
        PlanMargin *mg = plan_add_margin(p);
        mg->view = yv;
        mg->thresholds = zero;
        mg->n = 1;
        mg->margin = r->zero_hole / 2; /* its other values are at least zero_hole from 0 */
        mg->node = y->node;               /* the runtime names the divisor */
        mg->after_slot = y->time;
    }
    Ival xr = view_range(x), yr = view_range(y);
    int t = x->time > y->time ? x->time : y->time;
    int fn = MLP_FN_PRODUCT;
    if (r->how == REAL_QUOTIENT && r->split) { /* t+ and t- (reals.c split_recip), 1 / y, the product */
        double top = fmax(fabs(yr.lo), fabs(yr.hi)), k = r->split_k;
        const RealFn *unit = ramp_fn(p, top > 0 ? top : 1, 1), *far = ramp_fn(p, top > 0 ? top : 1, k);
        int s1 = next_slot(y->time, false);
        LinView pos = yv, neg = lv_combine(p->arena, -1, yv, 0, lv_empty());
        const RealFn *fns[2] = {&r->fn, &r->fn_y};
        uint32_t out = plan_alloc_dims(p, 1, arena_printf(p->arena, "1/%s", plan_node_name(p, y->node)), NULL);
        /* a gated divisor's MLP computes t+ and t- beside it, from the same units: no MLP of their own */
        size_t src = p->n_mlps;
        for (size_t i = 0; i < p->n_mlps; i++)
            if (p->mlps[i].node == y->node && p->mlps[i].fn == MLP_FN_GATED && !p->mlps[i].split) src = i;
        uint32_t t_dims[2] = {0, 0};
        bool folded = src < p->n_mlps;
        if (folded) {
            s1 = y->time;
            p->mlps[src].split = true;
            p->mlps[src].split_k = k;
            for (int s = 0; s < 2; s++)
                t_dims[s] = p->mlps[src].split_dim[s] = plan_alloc_dims(
                    p, 1, arena_printf(p->arena, s ? "|%s| or far" : "%s or far", plan_node_name(p, y->node)), NULL);
        }
        int s2 = next_slot(s1, false);
        for (int s = 0; s < 2; s++) {
            if (!fns[s]->n_knots) continue;
            /* t = ReLU(+-y) + K ReLU(-+y): one of the two units is exactly 0 */
            uint32_t t_dim = t_dims[s];
            if (!folded) {
                t_dim = plan_pwl_dim(p, unit, s ? neg : pos, s1, info->node, s ? "|%s| or far" : "%s or far", y->node);
                MlpOp *other = plan_new_mlp(p);
                other->node = info->node;
                other->fn = MLP_FN_PWL;
                other->pwl = far;
                other->x_view = s ? pos : neg;
                other->layer = slot_layer(s1);
                other->out_cat = false;
                other->out_dim = t_dim;
            }
            MlpOp *g = plan_new_mlp(p);
            g->node = info->node;
            g->fn = MLP_FN_PWL;
            g->pwl = fns[s];
            g->x_view = lv_unit(p->arena, t_dim, 1);
            g->layer = slot_layer(s2);
            g->out_cat = false;
            g->out_dim = out; /* the two sides add up in one dim */
        }
        yv = lv_unit(p->arena, out, 1);
        yr = r->recip_range;
        if (s2 > t) t = s2;
    } else if (r->how == REAL_QUOTIENT && p->gated_mlp) {
        plan_jump_margins(p, &r->fn, y, yv, y->node, true, 0); /* 1 / y's pieces stop short of a steep end */
        fn = MLP_FN_PWL_PRODUCT; /* x * pwl(y) in one gated MLP */
    } else if (r->how == REAL_QUOTIENT) { /* 1 / y into a dim of its own, then the product */
        plan_jump_margins(p, &r->fn, y, yv, y->node, true, 0);
        MlpOp *inv = plan_new_mlp(p);
        int s = next_slot(y->time, false);
        inv->layer = slot_layer(s);
        inv->node = info->node;
        inv->fn = MLP_FN_PWL;
        inv->pwl = &r->fn;
        inv->x_view = yv;
        inv->out_cat = false;
        inv->out_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, "1/%s", plan_node_name(p, y->node)), NULL);
        yv = lv_unit(p->arena, inv->out_dim, 1);
        yr = r->recip_range;
        if (s > t) t = s;
    }
    MlpOp *m = plan_new_mlp(p);
    m->node = info->node;
    m->fn = fn;
    m->x_view = xv;
    m->y_view = yv;
    m->x_range = xr;
    m->y_range = yr;
    m->pwl = &r->fn;
    int slot = next_slot(t, false);
    m->layer = slot_layer(slot);
    m->out_cat = false;
    m->out_dim = plan_alloc_dims(p, 1, plan_node_name(p, info->node), NULL);
    info->num = lv_unit(p->arena, m->out_dim, 1);
    info->has_num = true;
    info->time = slot;
    if (fn == MLP_FN_PRODUCT && !p->gated_mlp) return plan_square_levels(p, info, m - p->mlps, &r->sq);
    return true;
}

/* A switch (switch.c): one MLP op reading its gates' one-hot views (for a gate of two numbers
 * v0 < v1, (v1 - x) / (v1 - v0) and (x - v0) / (v1 - v0)) and its numeric leaves' views; a
 * one-hot output. */
static bool plan_switch(Plan *p, SopInfo *info) {
    const Switch *sw = info->sw;
    size_t n_views = 0;
    for (uint32_t i = 0; i < sw->n_gates; i++) n_views += p->info[sw->gates[i]->id].vs.n;
    LinView *gv = ARENA_ARRAY(p->arena, LinView, n_views ? n_views : 1), *xv = ARENA_ARRAY(p->arena, LinView, sw->n_xs + 1);
    int t = 0;
    for (uint32_t i = 0; i < sw->n_gates; i++) {
        SopInfo *g = &p->info[sw->gates[i]->id];
        LinView *v = gv + sw->gate_base[i];
        if (sw->gate_by_num[i]) {
            if (!g->has_num) return plan_error(p, g->node, "has no numerical encoding (internal compiler error)");
            double v0 = value_as_double(g->vs.vals[0]), v1 = value_as_double(g->vs.vals[1]), w = v1 - v0;
            v[0] = lv_combine(p->arena, -1 / w, g->num, v1 / w, lv_unit(p->arena, DIM_ONE, 1));
            v[1] = lv_combine(p->arena, 1 / w, g->num, -v0 / w, lv_unit(p->arena, DIM_ONE, 1));
        } else {
            if (!g->has_cat && !plan_convert_to_cat(p, g)) return false;
            memcpy(v, g->cat, g->vs.n * sizeof *v);
        }
        for (size_t k = 0; k < (sw->gate_by_num[i] ? 2 : g->vs.n); k++) t = plan_view_time(p, v[k], t);
    }
    bool *xu = ARENA_ARRAY(p->arena, bool, sw->n_xs + 1);
    for (uint32_t j = 0; j < sw->n_xs; j++) {
        SopInfo *x = &p->info[sw->xs[j]->id];
        if (sw->x_u[j] && x->has_u && x->n_u <= 1 && (x->n_u == 0 || x->u_coef[0] == 1)) {
            /* -u = -1/(w + 1); a selector that never selects: w = 0 */
            xv[j] = x->n_u ? lv_unit(p->arena, x->u_dims[0], -1) : lv_unit(p->arena, DIM_ONE, -1);
            xu[j] = true;
            if (x->n_u && x->u_time > t) t = x->u_time;
            continue;
        }
        if (!x->has_num) return plan_error(p, x->node, "has no numerical encoding (internal compiler error)");
        xv[j] = x->num;
        t = plan_view_time(p, xv[j], t);
    }
    MlpOp *m = plan_new_mlp(p);
    int slot = next_slot(t, false);
    m->layer = slot_layer(slot);
    m->node = info->node;
    m->fn = MLP_FN_SWITCH;
    m->sw = sw;
    m->gate_views = gv;
    m->x_views = xv;
    m->x_u = xu;
    plan_mlp_output(p, m, info, true);
    info->time = slot;
    return true;
}

static bool plan_map(Plan *p, SopInfo *info, MapClass cls, const IrNode *out) {
    const IrNode *n = info->node;
    if (cls == MAP_GATED) return plan_gated(p, info);
    if (cls == MAP_SWITCH) return plan_switch(p, info);
    if (cls == MAP_REAL) return plan_real(p, info);
    info->time = 0;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        int t = p->info[n->u.map.args[j]->id].time;
        if (cls != MAP_MLP && t > info->time) info->time = t;
    }
    for (uint32_t k = 0; cls == MAP_MLP && k < info->n_leaves; k++) {
        const SopInfo *a = &p->info[info->leaves[k]->id];
        int t = plan_leaf_time(a);
        if (t > info->time) info->time = t;
    }
    if (cls == MAP_UNARY_CAT) {
        const IrNode *x = info->cat_src;
        SopInfo *X = &p->info[x->id];
        if (!X->has_cat && !plan_convert_to_cat(p, X)) return false;
        if (X->time > info->time) info->time = X->time;
        info->cat = ARENA_ARRAY(p->arena, LinView, info->vs.n ? info->vs.n : 1);
        LvBuild *cat = calloc(info->vs.n ? info->vs.n : 1, sizeof *cat);
        char msg[160];
        for (size_t i = 0; i < X->vs.n; i++) {
            ValueResult r = map_value_via(p, n, x, X->vs.vals[i], msg, sizeof msg);
            size_t w;
            if (!r.ok || !vs_contains(&info->vs, r.value, &w)) {
                for (size_t k = 0; k < info->vs.n; k++) free(cat[k].t);
                free(cat);
                return plan_error(p, n, "could not be tabulated (internal)");
            }
            lvb_add(&cat[w], 1, X->cat[i]);
        }
        for (size_t w = 0; w < info->vs.n; w++) info->cat[w] = lvb_done(p->arena, &cat[w]);
        free(cat);
        info->has_cat = true;
        plan_num_from_cat(p, info);
        return true;
    }
    if (cls == MAP_AFFINE) {
        if (info->want_heavy && !plan_heavy_affine(p, info)) return false;
        if (info->want_num || n == out) {
            LinView v[2];
            double c[2] = {0, 0};
            for (uint32_t j = 0; j < n->u.map.nargs; j++) {
                SopInfo *a = &p->info[n->u.map.args[j]->id];
                if (!a->has_num) return plan_error(p, a->node, "has no numerical encoding (internal)");
                v[j] = a->num;
                if (a->node->kind == IR_CONST) c[j] = value_as_double(a->node->u.constant);
            }
            switch (n->u.map.op) {
            case VOP_NEG: info->num = lv_combine(p->arena, -1, v[0], 0, lv_empty()); break;
            case VOP_POS: info->num = v[0]; break;
            case VOP_ADD: info->num = lv_combine(p->arena, 1, v[0], 1, v[1]); break;
            case VOP_SUB: info->num = lv_combine(p->arena, 1, v[0], -1, v[1]); break;
            case VOP_MUL:
                info->num = n->u.map.args[1]->kind == IR_CONST ? lv_combine(p->arena, c[1], v[0], 0, lv_empty())
                                                               : lv_combine(p->arena, c[0], v[1], 0, lv_empty());
                break;
            case VOP_DIV: info->num = lv_combine(p->arena, 1.0 / c[1], v[0], 0, lv_empty()); break;
            default: return plan_error(p, n, "is not affine (internal)");
            }
            info->has_num = true;
        }
        /* categorical: tabulated from the leaves, not discretised from the numerical view,
         * which may only be available later */
        int t_num = info->time;
        if (info->want_cat && !tabulate(p, info, true)) return false;
        if (info->has_num && !info->want_cat) info->time = t_num;
        return true;
    }
    return tabulate(p, info, info->want_cat || !info->vs.numeric || info->may_fail || !info->want_num);
}

/* The lengths at which some positional s-op the output depends on raises: every input of such a
 * length raises in the reference, whether or not the model reads that s-op there. A one-value
 * block computed from the length, empty at those lengths and checked one-hot. */
static bool plan_length_guard(Plan *p, const IrNode *out) {
    size_t N = p->max_len, cells = N * (N + 1) / 2;
    PosTable *g = NULL;
    const IrNode *first = NULL;
    for (size_t id = 0; id <= out->id; id++) {
        const PosTable *t = p->info[id].pos;
        if (!p->info[id].reachable || !t || !t->any_fail) continue;
        if (!first) first = p->info[id].node;
        if (!g) {
            g = ARENA_NEW(p->arena, PosTable);
            g->val = ARENA_ARRAY(p->arena, Value, cells);
            g->fail = ARENA_ARRAY(p->arena, bool, cells);
            for (size_t c = 0; c < cells; c++) g->val[c] = value_bool(true);
            g->dep = POS_N;
        }
        for (size_t n = 1; n <= N; n++) { /* a failing cell fails its whole length */
            bool fails = false;
            for (size_t i = 0; i < n; i++) fails = fails || t->fail[pos_at(n, i)];
            for (size_t i = 0; i < n && fails; i++) g->fail[pos_at(n, i)] = g->any_fail = true;
        }
    }
    if (!g) return true;
    Value *ok = ARENA_NEW(p->arena, Value);
    *ok = value_bool(true);
    ValueSet *vs = ARENA_NEW(p->arena, ValueSet);
    *vs = vs_from_values(ok, 1);
    SopInfo *len = &p->info[p->length->id];
    MlpOp *m = plan_new_mlp(p);
    m->node = p->length;
    m->fn = MLP_FN_TABLE;
    m->table = g;
    m->leaves = &p->length;
    if (!plan_scalar_arg(p, m, 0, len, true)) return false;
    int slot = next_slot(len->u_time, false);
    m->layer = slot_layer(slot);
    m->out_cat = true;
    m->out_vs = vs;
    m->out_dim = plan_alloc_dims(p, 1, "guard:length", vs);
    plan_add_check(p, m->layer, m->out_dim, 1, plan_node_name(p, first));
    return true;
}

bool plan_build(Plan *p, const IrNode *out) {
    size_t count = (size_t)out->id + 1;
    p->output = out;
    plan_unique_names(p, out);
    MapClass *cls = ARENA_ARRAY(p->arena, MapClass, count);
    const SopInfo *indices = &p->info[p->indices->id];
    for (size_t id = 0; id < count; id++) {
        SopInfo *info = &p->info[id];
        const IrNode *n = info->node;
        info->pos_free = info->reachable && info->pos && info->pos->val && !info->pos->any_fail &&
                         (info->pos->dep == POS_CONST || info->pos->dep == POS_I) && n->kind != IR_INDICES &&
                         n->kind != IR_CONST && n->kind != IR_LENGTH;
    }
    classify_maps(p, out, cls);
    plan_demand(p, out, cls);
    for (size_t id = 0; id < count; id++) { /* inf and nan: what no residual number can carry */
        const SopInfo *info = &p->info[id];
        for (size_t i = 0; info->needed && !info->vs.unbounded && i < info->vs.n; i++)
            if (value_is_number(info->vs.vals[i]) && !isfinite(value_as_double(info->vs.vals[i]))) {
                char v[32];
                value_format(info->vs.vals[i], v, sizeof v);
                return plan_error(p, info->node,
                                  arena_printf(p->arena, "takes the value %s on some input (a float64 overflow), which a "
                                               "model cannot carry: narrow --vocab", v));
            }
    }

    /* fixed dims and the embedding blocks */
    plan_alloc_dims(p, 1, "one", NULL);
    plan_alloc_dims(p, 1, "bos", NULL);
    ValueSet vocab = {p->vocab, p->n_vocab, false, true, true, false, false, false};
    p->tok_dim = p->numeric_tokens ? plan_alloc_dims(p, 1, "tokens", NULL) : plan_alloc_dims(p, p->n_vocab, "tokens", &vocab);
    ValueSet positions = {NULL, p->max_len, false, true, true, false, false, false};
    positions.vals = ARENA_ARRAY(p->arena, Value, p->max_len);
    for (size_t i = 0; i < p->max_len; i++) positions.vals[i] = value_int((int64_t)i);
    p->pos_dim = plan_alloc_dims(p, p->max_len, "indices", &positions);

    for (size_t id = 0; id < count; id++) {
        SopInfo *info = &p->info[id];
        const IrNode *n = info->node;
        if (!info->reachable || ir_is_selector(n)) continue;
        if (!info->needed) { /* read only through its index-target features, if at all */
            if (info->want_target && !plan_target(p, info)) return false;
            continue;
        }
        bool ok = true;
        if (info->pos_free) {
            ok = plan_pos_free(p, info, indices);
            if (ok && info->want_cat && !info->has_cat) ok = plan_convert_to_cat(p, info);
            if (ok && info->want_kind) ok = kinds_plan(p, info);
            if (ok && info->want_target) ok = plan_target(p, info); /* also a select's query */
            if (!ok) return false;
            continue;
        }
        switch (n->kind) {
        case IR_TOKENS:
            if (p->numeric_tokens) { /* the embedding writes the value on one dim */
                info->num = lv_unit(p->arena, p->tok_dim, 1);
                info->has_num = true;
                break;
            }
            /* fall through */
        case IR_INDICES: {
            uint32_t base = n->kind == IR_TOKENS ? p->tok_dim : p->pos_dim;
            info->cat = ARENA_ARRAY(p->arena, LinView, info->vs.n ? info->vs.n : 1);
            for (size_t i = 0; i < info->vs.n; i++) info->cat[i] = lv_unit(p->arena, base + (uint32_t)i, 1);
            info->has_cat = info->cat_block = true;
            info->cat_dim = base;
            if (n->kind == IR_TOKENS && info->vs.n != p->n_vocab && !tokens_merged(p, info)) return false;
            plan_num_from_cat(p, info);
            break;
        }
        case IR_CONST:
            info->cat = ARENA_NEW(p->arena, LinView);
            info->cat[0] = lv_unit(p->arena, DIM_ONE, 1);
            info->has_cat = true;
            plan_num_from_cat(p, info);
            break;
        case IR_LENGTH: case IR_SELECTOR_WIDTH: ok = plan_width(p, info, out); break;
        case IR_AGGREGATE: ok = plan_aggregate(p, info, out); break;
        case IR_MAP: ok = plan_map(p, info, cls[id], out); break;
        default: break;
        }
        /* the kind block first: a one-hot made from the number reads it (0 and 0.0) */
        if (ok && info->want_kind) ok = kinds_plan(p, info);
        if (ok && info->want_cat && !info->has_cat) ok = plan_convert_to_cat(p, info);
        if (ok && info->want_target) ok = plan_target(p, info);
        if (!ok) return false;
        if (p->n_dims > CG_MAX_DIMS) return plan_error(p, n, "needs more residual dims than supported");
    }
    if (p->info[out->id].want_kind && !kinds_materialise(p, &p->info[out->id])) return false;
    if (!plan_length_guard(p, out)) return false;
    /* the readout needs the output on its own dims: a categorical block, or a numerical view
     * where demand chose one (decodable exactly) */
    SopInfo *o = &p->info[out->id];
    if (!o->cat_block && (!o->has_num || !o->want_num)) {
        MlpOp *m = plan_new_mlp(p);
        m->node = out;
        m->fn = MLP_FN_IDENTITY;
        if (!plan_scalar_arg(p, m, 0, o, true)) return false;
        const LeafMap *leaf = &m->leaf[0]; /* after the kind block, when it reads it */
        int ready = leaf->has_kind_axis ? plan_view_time(p, m->grid[leaf->kind_arg].view, o->time) : o->time;
        int slot = next_slot(ready, false);
        m->layer = slot_layer(slot);
        plan_mlp_output(p, m, o, true);
        o->time = slot;
    }
    return true;
}
