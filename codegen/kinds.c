/* Kinds: telling 1, 1.0 and True apart where a number alone cannot.
 *
 * A numerical encoding carries a number, not its kind. Where an s-op can hold equal numbers of
 * different kinds (an aggregate gives the int 2 when it selects one key and the float 2.0 when
 * it averages several) and the kind matters (it reaches the output, valueset.c), the s-op gets a
 * *kind block*: a categorical encoding over the kinds it takes.
 *   aggregate  a view of its one-hot when it copies one (the kinds of the atoms copied); else
 *              its kind follows from how many keys it selects (none: the default's kind, one:
 *              the source's, several: float): one more width head on its selector, in the same
 *              layer, and an MLP from that head's u;
 *   positional its kind at (i, n) is in its table: free over the index one-hot when it depends
 *              on the index alone, else an MLP from the index and the length;
 *   map        from its arguments: free when it depends on one argument's kind alone
 *              (x + 1 keeps x's kind), else an MLP over the arguments' values and kinds.
 * The readout decodes the number against the value set and takes the kind from the block. */
#include <string.h>

#include "codegen/internal.h"


/* The kinds as a value set of ints (the codes of ValueKind), the output set of kind MLPs. */
static ValueSet *kind_codes(Plan *p, const SopInfo *x) {
    ValueSet *vs = ARENA_NEW(p->arena, ValueSet);
    Value *v = ARENA_ARRAY(p->arena, Value, 3);
    for (uint32_t k = 0; k < x->n_kinds; k++) v[k] = value_int(x->kinds[k]);
    *vs = vs_from_values(v, x->n_kinds);
    return vs;
}

/* Whether map x's kind is a function of its one non-constant argument's kind alone; if so
 * *to[k] gets the result's kind for argument kind a->kinds[k]. */
static bool map_kind_unary(Plan *p, const IrNode *x, const SopInfo *a, ValueKind to[3]) {
    bool set[3] = {false, false, false};
    char msg[160];
    /* a real has no value set: one number of each of its kinds stands for all (its map is
     * arithmetic, whose kinds do not depend on the numbers) */
    Value reps[3];
    for (uint32_t k = 0; k < a->n_kinds && a->vs.unbounded; k++)
        reps[k] = a->kinds[k] == VAL_INT ? value_int(1) : a->kinds[k] == VAL_BOOL ? value_bool(true) : value_float(1);
    const Value *vals = a->vs.unbounded ? reps : a->vs.vals;
    size_t n = a->vs.unbounded ? a->n_kinds : a->vs.n;
    for (size_t i = 0; i < n; i++) {
        ValueResult r = map_value_via(p, x, a->node, vals[i], msg, sizeof msg);
        if (!r.ok || !value_is_number(r.value)) return false;
        uint32_t k = 0;
        while (a->kinds[k] != vals[i].kind) k++;
        if (set[k] && to[k] != r.value.kind) return false;
        to[k] = r.value.kind;
        set[k] = true;
    }
    for (uint32_t k = 0; k < a->n_kinds; k++)
        if (!set[k]) return false; /* a kind no member has: not a function of the kind it can see */
    return true;
}

/* The kind block as the one-hot output of m. */
static void kind_output(Plan *p, MlpOp *m, SopInfo *x) {
    m->kind_of = true;
    m->out_cat = true;
    m->out_vs = kind_codes(p, x);
    m->out_dim = plan_alloc_dims(p, x->n_kinds, arena_printf(p->arena, "%s:kind", plan_node_name(p, x->node)), m->out_vs);
    for (uint32_t k = 0; k < x->n_kinds; k++) x->kind_cat[k] = lv_unit(p->arena, m->out_dim + k, 1);
    x->kind_dim = m->out_dim;
    x->kind_block = true;
    x->has_kind = true;
}

/* x's kind block from a table of atoms whose kinds are x's kinds at each (i, n): free over the
 * index one-hot when it depends on the index alone, else an MLP from the index and the length. */
static bool kinds_from_table(Plan *p, SopInfo *x, const PosTable *t) {
    if (t->dep != POS_IN && t->dep != POS_N && !t->any_fail) {
        const SopInfo *ix = &p->info[p->indices->id];
        LvBuild b[3] = {{0}, {0}, {0}};
        for (size_t i = 0; i < p->max_len; i++) {
            Value v;
            if (!pos_lookup(t, (int64_t)i, (int64_t)i + 1, p->max_len, &v)) continue;
            uint32_t k = 0;
            while (k < x->n_kinds && x->kinds[k] != v.kind) k++;
            if (k < x->n_kinds) lvb_add(&b[k], 1, ix->cat[i]);
        }
        for (uint32_t k = 0; k < 3; k++) x->kind_cat[k] = lvb_done(p->arena, &b[k]);
        x->has_kind = true;
        x->kind_time = 0;
        return true;
    }
    MlpOp *m = plan_new_mlp(p);
    m->node = x->node;
    m->fn = MLP_FN_TABLE;
    m->table = t;
    const IrNode **lv = ARENA_ARRAY(p->arena, const IrNode *, 2);
    lv[0] = p->indices;
    lv[1] = p->length;
    m->leaves = lv;
    SopInfo *ix = &p->info[p->indices->id], *len = &p->info[p->length->id];
    if (!plan_scalar_arg(p, m, 0, ix, true) || !plan_scalar_arg(p, m, 1, len, true)) return false;
    int slot = next_slot(len->u_time > ix->time ? len->u_time : ix->time, false);
    m->layer = slot_layer(slot);
    kind_output(p, m, x);
    x->kind_time = slot;
    return true;
}

/* An aggregate's kind block as a view of its one-hot over exact atoms: each kind the sum of its
 * members' dims. A copy through one key of a source of several kinds carries them this way (the
 * number of keys alone cannot tell them). Maps keep their kind MLP: it runs beside their table. */
static bool kinds_from_cat(Plan *p, SopInfo *x) {
    if (x->node->kind != IR_AGGREGATE || !x->has_cat || x->vs.by_number || x->vs.unbounded) return false;
    LvBuild b[3] = {{0}, {0}, {0}};
    for (size_t i = 0; i < x->vs.n; i++) {
        uint32_t k = 0;
        while (k < x->n_kinds && x->kinds[k] != x->vs.vals[i].kind) k++;
        if (k < x->n_kinds) lvb_add(&b[k], 1, x->cat[i]); /* a string lights no kind (mlp.c reads it so) */
    }
    for (uint32_t k = 0; k < 3; k++) x->kind_cat[k] = lvb_done(p->arena, &b[k]);
    x->has_kind = true;
    x->kind_time = x->time;
    return true;
}

/* Whether the members of a's value set are the atoms it holds, kinds and all (a member that
 * stands for 1, 1.0 and True alike is exact only when a holds one kind of number). */
bool source_kinds_exact(Plan *p, const SopInfo *a) {
    unsigned k = p->kinds_possible[a->node->id] & 7;
    return !a->vs.unbounded && (!a->vs.by_number || (k & (k - 1)) == 0);
}

/* A view of its source's one-hot (MAP_UNARY_CAT): each kind the sum of the source values'
 * dims that the map takes to a value of that kind (a string: none). */
static bool kinds_from_source(Plan *p, SopInfo *x) {
    const IrNode *n = x->node;
    if (n->kind != IR_MAP || !x->cat_src) return false;
    const SopInfo *a = &p->info[x->cat_src->id];
    if (!a->has_cat || !source_kinds_exact(p, a)) return false;
    LvBuild b[3] = {{0}, {0}, {0}};
    char msg[160];
    for (size_t i = 0; i < a->vs.n; i++) {
        ValueResult r = map_value_via(p, n, a->node, a->vs.vals[i], msg, sizeof msg);
        if (!r.ok) continue; /* no value there: no kind either (the map's check sees it) */
        uint32_t k = 0;
        while (k < x->n_kinds && x->kinds[k] != r.value.kind) k++;
        if (k < x->n_kinds) lvb_add(&b[k], 1, a->cat[i]);
    }
    for (uint32_t k = 0; k < 3; k++) x->kind_cat[k] = lvb_done(p->arena, &b[k]);
    x->has_kind = true;
    x->kind_time = a->time;
    return true;
}

bool kinds_plan(Plan *p, SopInfo *x) {
    const IrNode *n = x->node;
    if (x->n_kinds == 0) x->n_kinds = sop_kinds(p, x->node, x->kinds);
    if (x->pos && x->pos->val) return kinds_from_table(p, x, x->pos);
    if (kinds_from_cat(p, x) || kinds_from_source(p, x)) return true;
    const PosTable *sel_pos = n->kind == IR_AGGREGATE ? p->info[n->u.aggregate.selector->id].pos : NULL;
    if (!x->pos && sel_pos && sel_pos->count) { /* a positional selector: the kind is positional too */
        const ValueSet *src = &p->info[n->u.aggregate.sop->id].vs;
        if (sop_kinds(p, n->u.aggregate.sop, (ValueKind[3]){0}) > 1 || !src->numeric)
            return plan_error(p, n, "averages values of several kinds; the compiler cannot track which kind one key gives");
        size_t cells = p->max_len * (p->max_len + 1) / 2;
        PosTable *kt = ARENA_NEW(p->arena, PosTable);
        kt->val = ARENA_ARRAY(p->arena, Value, cells);
        kt->fail = sel_pos->fail;
        kt->any_fail = sel_pos->any_fail;
        for (size_t c = 0; c < cells; c++) {
            int32_t w = sel_pos->count[c];
            kt->val[c] = w == 0 ? n->u.aggregate.default_value : w == 1 && src->n ? src->vals[0] : value_float(0);
        }
        kt->dep = pos_classify(kt, p->max_len);
        return kinds_from_table(p, x, kt);
    }
    MlpOp *m = plan_new_mlp(p);
    m->node = n;
    int t = 0;
    if (n->kind == IR_AGGREGATE) { /* from the number of keys */
        const ValueSet *src = &p->info[n->u.aggregate.sop->id].vs;
        if (vs_kind_collisions(src) || sop_kinds(p, n->u.aggregate.sop, (ValueKind[3]){0}) > 1)
            return plan_error(p, n, "averages values of several kinds; the compiler cannot track which kind one key gives");
        WidthHeads w;
        if (!plan_width_heads(p, n, n->u.aggregate.selector, &w)) return false;
        m->fn = MLP_FN_AGG_KIND;
        m->n_leaves = 1;
        LeafMap *leaf = &m->leaf[0];
        leaf->width = true;
        leaf->n_u = w.n_u;
        for (uint32_t i = 0; i < w.n_u; i++) {
            double *sc;
            if (!plan_add_grid(p, m, lv_unit(p->arena, w.u_dims[i], -1), p->max_len + 1, &sc, &leaf->args[i])) return false;
            for (size_t c = 0; c <= p->max_len; c++) sc[c] = -1.0 / ((double)c + 1.0);
            leaf->coef[i] = w.u_coef[i];
        }
        leaf->vs = &p->info[p->length->id].vs; /* widths 1..N: a decomposed sum past N is a don't-care */
        leaf->vs_zero = true;
        t = w.time;
    } else if (n->kind == IR_MAP && x->real && x->real->how == REAL_FN) {
        /* constant between the function's jumps, which include its changes of kind */
        const SopInfo *a = &p->info[x->real->arg->id];
        if (!a->has_num) return plan_error(p, a->node, "has no numerical encoding (internal compiler error)");
        m->fn = MLP_FN_PWL;
        m->pwl = &x->real->fn;
        m->x_view = a->num;
        t = a->time;
    } else if (n->kind == IR_MAP) {
        const IrNode *arg = x->cat_src ? x->cat_src : map_single_varying_arg(n);
        ValueKind to[3];
        if (arg && p->info[arg->id].has_kind && map_kind_unary(p, n, &p->info[arg->id], to)) {
            /* free: each of the argument's kinds maps to one of the result's */
            const SopInfo *a = &p->info[arg->id];
            for (uint32_t k = 0; k < a->n_kinds; k++) {
                uint32_t r = 0;
                while (r < x->n_kinds && x->kinds[r] != to[k]) r++;
                if (r < x->n_kinds) x->kind_cat[r] = lv_combine(p->arena, 1, x->kind_cat[r], 1, a->kind_cat[k]);
            }
            x->has_kind = true;
            x->kind_time = a->kind_time;
            p->n_mlps--; /* no MLP after all */
            return true;
        }
        m->fn = MLP_FN_MAP;
        /* from what the map's own MLP reads (its kind comes out in the same layer), else its
         * arguments */
        uint32_t nsrc = x->has_mlp_leaves ? x->n_leaves : n->u.map.nargs;
        const IrNode **lv = ARENA_ARRAY(p->arena, const IrNode *, nsrc);
        uint32_t nl = 0;
        for (uint32_t j = 0; j < nsrc; j++) {
            SopInfo *a = &p->info[(x->has_mlp_leaves ? x->leaves[j] : n->u.map.args[j])->id];
            if (a->node->kind == IR_CONST) continue;
            bool dup = false;
            for (uint32_t k = 0; k < nl; k++) dup = dup || lv[k] == a->node;
            if (dup) continue;
            lv[nl] = a->node;
            /* a real value by its kind alone: arithmetic's kinds do not depend on the numbers */
            if (a->real ? !plan_kind_leaf(p, m, nl++, a) : !plan_scalar_arg(p, m, nl++, a, true)) return false;
            int ta = plan_leaf_time(a);
            if (ta > t) t = ta;
        }
        m->leaves = lv;
    } else {
        return plan_error(p, n, "needs a kind block the compiler cannot build (internal compiler error)");
    }
    int slot = next_slot(t, false);
    m->layer = slot_layer(slot);
    kind_output(p, m, x);
    x->kind_time = slot;
    return true;
}

bool kinds_materialise(Plan *p, SopInfo *x) {
    if (x->kind_block) return true;
    MlpOp *m = plan_new_mlp(p);
    m->node = x->node;
    m->fn = MLP_FN_KIND_IDENTITY;
    LeafMap *leaf = &m->leaf[0];
    m->n_leaves = 1;
    leaf->node = x->node;
    double *sc;
    LinView v = lv_empty();
    for (uint32_t k = 0; k < x->n_kinds; k++) v = lv_combine(p->arena, 1, v, (double)k, x->kind_cat[k]);
    if (!plan_add_grid(p, m, v, x->n_kinds, &sc, &leaf->kind_arg)) return false;
    for (uint32_t k = 0; k < x->n_kinds; k++) sc[k] = (double)k;
    leaf->has_kind_axis = true;
    leaf->kinds = x->kinds;
    int slot = next_slot(x->kind_time, false);
    m->layer = slot_layer(slot);
    kind_output(p, m, x);
    x->kind_time = slot;
    return true;
}
