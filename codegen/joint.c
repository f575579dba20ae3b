/* Selectors whose comparisons read several s-ops on one side, combined with or/not: the
 * selections aggregates make through them, exactly.
 *
 * An attention score is bilinear in a query row and a key row. A selector over one (keys,
 * queries) pair is a 0/1 table over their values, hence bilinear in their one-hot encodings; an
 * `and` of such tables is a sum of them that only the selected keys maximise. An `or` or a `not`
 * across different pairs is neither: the indicator of `A or B` is [A] + [B] - [A][B], and the
 * product needs, on each side, the joint value of the s-ops it reads. So each side gets a joint
 * one-hot: the tuple of its s-ops' values (one s-op: its own one-hot; none: a constant; more: an
 * MLP that tabulates the tuple's index from them, one layer before the head). The selector is
 * then one 0/1 table over (query tuple, key tuple): one head, selected keys at score 1, BOS at
 * 1/2, the others at 0. Cost: the product of the sides' value-set sizes. */
#include <string.h>

#include "codegen/internal.h"




/* The member values of tuple t. */
static void tuple_values(Plan *p, const Joint *j, size_t t, Value *out) {
    for (size_t i = 0; i < j->n_members; i++) {
        const ValueSet *vs = &p->info[j->members[i]->id].vs;
        out[i] = vs->vals[(t / j->stride[i]) % vs->n];
    }
}

/* The one-hot of a side's tuple: a member's own views, a constant, or an MLP. */
static bool plan_joint(Plan *p, const IrNode *sel, Joint *j) {
    j->n_tuples = 1;
    for (size_t i = 0; i < j->n_members; i++) {
        const ValueSet *vs = &p->info[j->members[i]->id].vs;
        if (vs->unbounded) return plan_error(p, j->members[i], "has too many possible values to select on jointly");
        if (vs->n == 0) return plan_error(p, j->members[i], "takes no value (internal compiler error)");
        j->stride[i] = j->n_tuples;
        j->n_tuples *= vs->n ? vs->n : 1;
        if (j->n_tuples > CG_MAX_JOINT_TUPLES) {
            char d[128];
            vs_describe(sel, d, sizeof d);
            diag_error(p->diags, sel->loc,
                       "%s combines comparisons of several s-ops with or/not; attending through it exactly needs "
                       "the joint values of those s-ops, more than %d of them", d, CG_MAX_JOINT_TUPLES);
            return false;
        }
    }
    if (j->n_members == 0) {
        j->cat = ARENA_NEW(p->arena, LinView);
        j->cat[0] = lv_unit(p->arena, DIM_ONE, 1);
        j->time = 0;
        return true;
    }
    if (j->n_members == 1) {
        SopInfo *a = &p->info[j->members[0]->id];
        if (!a->has_cat && !plan_convert_to_cat(p, a)) return false;
        j->cat = a->cat;
        j->time = a->time;
        return true;
    }
    MlpOp *m = plan_new_mlp(p);
    m->node = sel;
    m->fn = MLP_FN_JOINT;
    m->joint = j;
    joint_sources(p, j);
    if (j->n_leaves > CG_MAX_LEAVES) return plan_error(p, sel, "reads too many s-ops to attend through jointly");
    m->leaves = j->leaves;
    int t = 0;
    bool may_fail = false;
    for (size_t i = 0; i < j->n_leaves; i++) {
        SopInfo *a = &p->info[j->leaves[i]->id];
        if (!plan_scalar_arg(p, m, i, a, true)) return false;
        int ta = plan_leaf_time(a);
        if (ta > t) t = ta;
    }
    for (size_t i = 0; i < j->n_members; i++) may_fail = may_fail || p->info[j->members[i]->id].may_fail;
    int slot = next_slot(t, false);
    m->layer = slot_layer(slot);
    ValueSet *codes = ARENA_NEW(p->arena, ValueSet);
    Value *v = ARENA_ARRAY(p->arena, Value, j->n_tuples);
    for (size_t k = 0; k < j->n_tuples; k++) v[k] = value_int((int64_t)k);
    *codes = vs_from_values(v, j->n_tuples);
    m->out_cat = true;
    m->out_vs = codes;
    m->out_dim = plan_alloc_dims(p, j->n_tuples, arena_printf(p->arena, "joint@%d:%d", sel->loc.line, sel->loc.col), codes);
    j->cat = ARENA_ARRAY(p->arena, LinView, j->n_tuples);
    for (size_t k = 0; k < j->n_tuples; k++) j->cat[k] = lv_unit(p->arena, m->out_dim + (uint32_t)k, 1);
    /* where a member raises, the tuple has no value: the block is empty there, and checked */
    if (may_fail) plan_add_check(p, m->layer, m->out_dim, j->n_tuples, plan_node_name(p, sel));
    j->time = slot;
    return true;
}

bool joint_tuple_index(Plan *p, const Joint *j, const Value *leaf_vals, size_t *t) {
    *t = 0;
    char msg[160];
    for (size_t i = 0; i < j->n_members; i++) {
        ValueResult r = plan_fused_apply(p, j->members[i], j->leaves, j->n_leaves, leaf_vals, msg, sizeof msg);
        size_t k;
        if (!r.ok || !vs_contains(&p->info[j->members[i]->id].vs, r.value, &k)) return false;
        *t += k * j->stride[i];
    }
    return true;
}

/* Truth of the selector for a key tuple and a query tuple. */
static bool eval_joint(const IrNode *sel, const Joint *kj, const Value *kv, const Joint *qj, const Value *qv, bool *ok) {
    switch (sel->kind) {
    case IR_SELECT: {
        Value k = sel->u.select.keys->u.constant, q = sel->u.select.queries->u.constant;
        for (size_t i = 0; i < kj->n_members; i++)
            if (kj->members[i] == sel->u.select.keys) k = kv[i];
        for (size_t i = 0; i < qj->n_members; i++)
            if (qj->members[i] == sel->u.select.queries) q = qv[i];
        char msg[160];
        ValueResult r = ir_cmp_apply(sel->u.select.cmp, k, q, msg, sizeof msg);
        if (!r.ok) *ok = false;
        return r.ok && r.value.as.b;
    }
    case IR_SELECT_AND: return eval_joint(sel->u.combine.lhs, kj, kv, qj, qv, ok) & eval_joint(sel->u.combine.rhs, kj, kv, qj, qv, ok);
    case IR_SELECT_OR: return eval_joint(sel->u.combine.lhs, kj, kv, qj, qv, ok) | eval_joint(sel->u.combine.rhs, kj, kv, qj, qv, ok);
    case IR_SELECT_NOT: return !eval_joint(sel->u.combine.lhs, kj, kv, qj, qv, ok);
    default: return false;
    }
}

bool joint_columns(Plan *p, const IrNode *sel, ScoreColumn **cols_out, size_t *n_out, double *bos_level, int *time) {
    Joint *kj = ARENA_NEW(p->arena, Joint), *qj = ARENA_NEW(p->arena, Joint);
    selector_side(sel, true, kj);
    selector_side(sel, false, qj);
    if (kj->n_members > CG_MAX_JOINT || qj->n_members > CG_MAX_JOINT)
        return plan_error(p, sel, "compares too many different s-ops to attend through exactly");
    if (!plan_joint(p, sel, kj) || !plan_joint(p, sel, qj)) return false;
    size_t nk = kj->n_tuples, nq = qj->n_tuples;
    bool ok = true, *M = ARENA_ARRAY(p->arena, bool, nk * nq);
    Value kv[CG_MAX_JOINT], qv[CG_MAX_JOINT];
    for (size_t a = 0; a < nq; a++) {
        tuple_values(p, qj, a, qv);
        for (size_t b = 0; b < nk; b++) {
            tuple_values(p, kj, b, kv);
            M[a * nk + b] = eval_joint(sel, kj, kv, qj, qv, &ok);
        }
    }
    if (!ok) return plan_error(p, sel, "compares values that cannot be ordered (a string with a number)");
    size_t n = 0, major = nk <= nq ? nk : nq;
    ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, major ? major : 1);
    for (size_t c = 0; c < major; c++) { /* one column per tuple of the smaller side */
        LvBuild b = {0};
        for (size_t o = 0; o < (nk <= nq ? nq : nk); o++) {
            bool sel_ab = nk <= nq ? M[o * nk + c] : M[c * nk + o];
            if (sel_ab) lvb_add(&b, 1, nk <= nq ? qj->cat[o] : kj->cat[o]);
        }
        LinView other = lvb_done(p->arena, &b);
        if (other.n == 0) continue;
        cols[n++] = nk <= nq ? (ScoreColumn){other, kj->cat[c]} : (ScoreColumn){qj->cat[c], other};
    }
    *cols_out = cols;
    *n_out = n;
    *bos_level = 0.5;
    *time = kj->time > qj->time ? kj->time : qj->time;
    return true;
}
