/* Demand: which views each consumer reads (categorical, numerical, a width's u, a kind block,
 * index-target features), and which s-ops the model computes at all. A sweep from the output
 * down, after classification (classify.c) and before anything is built (plan.c). */
#include <string.h>

#include "codegen/internal.h"

/* Every comparison of a selector lowered as score tables (selector.c: an index match counts
 * only for the whole selector): its keys and queries one-hot. */
static void want_tables(Plan *p, const IrNode *sel) {
    if (sel->kind == IR_SELECT) {
        p->info[sel->u.select.keys->id].want_cat = true;
        p->info[sel->u.select.queries->id].want_cat = true;
        return;
    }
    want_tables(p, sel->u.combine.lhs);
    if (sel->u.combine.rhs) want_tables(p, sel->u.combine.rhs);
}

void selector_want(Plan *p, const IrNode *sel, bool for_width) {
    if (selector_total_index_match(p, sel, for_width)) { /* the query is read numerically */
        p->info[sel->u.select.queries->id].want_num = true;
        return;
    }
    if (selector_index_match(p, sel, for_width) == IM_POSITIONAL) { /* the target's features */
        p->info[sel->u.select.queries->id].want_target = true;
        p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
        p->info[p->length->id].needed = true;
        return;
    }
    if (numeq_want(p, sel, for_width)) return; /* numbers compared through their numbers (numeq.c) */
    want_tables(p, sel);
}

void joint_want(Plan *p, const IrNode *sel) {
    for (int side = 0; side < 2; side++) {
        Joint j = {0};
        selector_side(sel, side == 0, &j);
        if (j.n_members == 1) { /* its own one-hot */
            SopInfo *a = &p->info[j.members[0]->id];
            a->needed = a->want_cat = true;
            continue;
        }
        joint_sources(p, &j);
        for (size_t i = 0; i < j.n_leaves; i++) {
            SopInfo *a = &p->info[j.leaves[i]->id];
            a->needed = true;
            if (a->node->kind == IR_LENGTH || a->node->kind == IR_SELECTOR_WIDTH) continue; /* read via u */
            if (!a->vs.numeric) a->want_cat = true;
            else a->want_num = true;
        }
    }
}

/* A map of reals (reals.c) reads its arguments' numerical views: the one real of a function,
 * both factors of a product or quotient. */
static void real_want(Plan *p, const SopInfo *info) {
    const RealInfo *r = info->real_fn ? info->real_fn : info->real;
    if (r->how == REAL_FN) {
        p->info[r->arg->id].needed = p->info[r->arg->id].want_num = true;
        return;
    }
    if (r->how == REAL_LOGPROD) { /* its logs read these */
        p->info[r->arg->id].needed = p->info[r->arg->id].want_num = true;
        p->info[r->arg_y->id].needed = p->info[r->arg_y->id].want_num = true;
        return;
    }
    if (r->how != REAL_PRODUCT && r->how != REAL_QUOTIENT) return; /* refused when planned */
    for (uint32_t j = 0; j < info->node->u.map.nargs; j++) {
        SopInfo *a = &p->info[info->node->u.map.args[j]->id];
        if (a->node->kind != IR_CONST) a->needed = a->want_num = true;
    }
}

/* A switch reads its gates' one-hot blocks (a gate of two numbers: its number) and its numeric
 * leaves' numbers (a width's u). */
static void switch_want(Plan *p, const Switch *sw) {
    for (uint32_t i = 0; i < sw->n_gates; i++) {
        SopInfo *g = &p->info[sw->gates[i]->id];
        g->needed = true;
        if (sw->gate_by_num[i]) g->want_num = true;
        else g->want_cat = true;
    }
    for (uint32_t j = 0; j < sw->n_xs; j++) { /* a width by u: its heads, which it always has */
        SopInfo *x = &p->info[sw->xs[j]->id];
        x->needed = true;
        if (!sw->x_u[j]) x->want_num = true;
    }
}

/* The views the width heads of a selector read. */
static void width_want(Plan *p, const IrNode *sel) {
    if (selector_width_needs_joint(p, sel)) joint_want(p, sel);
    else selector_want(p, sel, true);
}

void kinds_demand(Plan *p, SopInfo *x) {
    const IrNode *n = x->node;
    x->n_kinds = sop_kinds(p, x->node, x->kinds);
    if (x->pos && x->pos->val) { /* from its table, through indices and length */
        p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
        p->info[p->length->id].needed = true;
        return;
    }
    if (n->kind == IR_AGGREGATE) { /* a width head on its selector, or its positional counts */
        const PosTable *t = p->info[n->u.aggregate.selector->id].pos;
        if (t && t->count) {
            p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
            p->info[p->length->id].needed = true;
        } else {
            width_want(p, n->u.aggregate.selector);
        }
        return;
    }
    if (n->kind != IR_MAP) return;
    if (x->cat_src && source_kinds_exact(p, &p->info[x->cat_src->id])) {
        SopInfo *a = &p->info[x->cat_src->id]; /* a view of its source's one-hot (kinds.c) */
        a->needed = a->want_cat = true;
        return;
    }
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->node->kind == IR_CONST) continue;
        a->needed = true;
        if (vs_kind_collisions(&a->vs)) a->want_kind = true;
        ValueKind k[3];
        if (a->real && sop_kinds(p, a->node, k) > 1) a->want_kind = true; /* read by its kind alone */
        if (a->vs.numeric) a->want_num = true;
        else a->want_cat = true;
    }
}

/* A selector lowered as score tables: every comparison's keys and queries are computed. */
static void need_tables(Plan *p, const IrNode *sel) {
    p->info[sel->id].needed = true;
    if (sel->kind == IR_SELECT) {
        p->info[sel->u.select.keys->id].needed = true;
        p->info[sel->u.select.queries->id].needed = true;
        return;
    }
    need_tables(p, sel->u.combine.lhs);
    if (sel->u.combine.rhs) need_tables(p, sel->u.combine.rhs);
}

static void need_selector(Plan *p, const IrNode *sel, bool for_width) {
    if (selector_index_match(p, sel, for_width) == IM_POSITIONAL) { /* its target's features */
        p->info[sel->id].needed = true;
        return;
    }
    if (numeq_want(p, sel, for_width)) return; /* what numeq.c reads instead of the tables */
    need_tables(p, sel);
}

/* Whether the output, not decodable from one value set, is from the value set of each length
 * (then kept in p->out_by_len). */
static bool decodable_by_length(Plan *p, const IrNode *out) {
    p->out_by_len = vs_output_sets(p, out);
    return p->out_by_len != NULL;
}

/* Whether map n, whose values were too many to enumerate (so may_fail was not found), has an
 * operation that raises on some numbers: computed, its table or real bound sees where. */
static bool may_raise_unseen(const IrNode *n) {
    if (n->u.map.kind == IR_MAP_LOOKUP || n->u.map.kind == IR_MAP_INDEX) return true;
    if (n->u.map.kind != IR_MAP_BINARY && n->u.map.kind != IR_MAP_UNARY) return false;
    return n->u.map.op == VOP_DIV || n->u.map.op == VOP_MOD || n->u.map.op == VOP_POW || n->u.map.op == VOP_ROUND;
}

void plan_demand(Plan *p, const IrNode *out, const MapClass *cls) {
    for (size_t id = 0; id <= out->id; id++) /* the length guard (plan.c) reads the length */
        if (p->info[id].reachable && p->info[id].pos && p->info[id].pos->any_fail) p->info[p->length->id].needed = true;
    SopInfo *o = &p->info[out->id];
    o->needed = true;
    /* The reference computes every s-op the output depends on, at every position, and raises when
     * one raises, even where a selector's algebra makes it irrelevant ((a or b) and b is b): a
     * map that may raise, an s-op that may mix strings with other values in one sequence, or an
     * aggregate that copies and may select several keys, is computed, with its check, whether or
     * not anything reads it. */
    for (size_t id = 0; id < out->id; id++) {
        SopInfo *x = &p->info[id];
        if (!x->reachable || x->pos || ir_is_selector(x->node)) continue;
        if (x->node->kind == IR_MAP && x->may_fail) x->needed = x->want_cat = true;
        if ((x->node->kind == IR_MAP || x->node->kind == IR_AGGREGATE) && vs_mixed_kinds(&x->vs))
            x->needed = x->want_cat = true;
        if (x->node->kind == IR_MAP && x->vs.unbounded && may_raise_unseen(x->node)) x->needed = true;
        if (x->node->kind == IR_AGGREGATE && !aggregate_averages(p, x->node) &&
            !selector_at_most_one(p, x->node->u.aggregate.selector))
            x->needed = x->want_cat = true;
    }
    /* the readout: a number decoded against its value set where that is exact, else one-hot */
    if (vs_decodable(&o->vs, false, NULL) && !o->may_fail) {
        o->want_num = true;
    } else if (vs_decodable(&o->vs, true, NULL) && !o->may_fail) {
        o->want_num = o->want_kind = true; /* 1 and 1.0: a kind block tells them apart */
    } else if (decodable_by_length(p, out)) {
        o->want_num = true; /* the exact double depends on rounding that differs per length */
        o->want_kind = vs_kind_collisions(&o->vs);
    } else if ((p->numeric_tokens || o->real) && o->vs.unbounded) { /* real-valued: the number, and its kind if it varies */
        unsigned k = p->kinds_possible[out->id] & 7;
        o->want_num = true;
        o->want_kind = !p->numbers_only && (k & (k - 1)) != 0;
    } else {
        o->want_cat = true;
        /* a number read into a one-hot tells 0 from 0.0 by its kind block (a mean of one key) */
        o->want_kind = o->vs.numeric && vs_kind_collisions(&o->vs);
    }
    for (size_t id = out->id + 1; id-- > 0;) {
        SopInfo *info = &p->info[id];
        const IrNode *n = info->node;
        if (!info->needed || ir_is_selector(n)) continue;
        if (info->want_kind) kinds_demand(p, info);
        if (info->pos_free) { /* a view of the index one-hot */
            p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
            continue;
        }
        switch (n->kind) {
        case IR_AGGREGATE: need_selector(p, n->u.aggregate.selector, false); p->info[n->u.aggregate.sop->id].needed = true; break;
        case IR_SELECTOR_WIDTH: need_selector(p, n->u.width.selector, true); break;
        case IR_MAP:
            if (cls[id] == MAP_MLP || (cls[id] == MAP_AFFINE && info->want_cat))
                for (uint32_t k = 0; k < info->n_leaves; k++) p->info[info->leaves[k]->id].needed = true;
            if (cls[id] == MAP_UNARY_CAT) p->info[info->cat_src->id].needed = true;
            if (cls[id] == MAP_AFFINE && (info->want_num || info->want_heavy || n == out))
                for (uint32_t j = 0; j < n->u.map.nargs; j++) p->info[n->u.map.args[j]->id].needed = true;
            if (cls[id] == MAP_GATED) {
                SopInfo *g = &p->info[info->gated->gate->id], *y = &p->info[info->gated->y->id];
                g->needed = g->want_cat = true;
                y->needed = y->want_num = true;
                if (info->gated->y2) p->info[info->gated->y2->id].needed = p->info[info->gated->y2->id].want_num = true;
            }
            if (cls[id] == MAP_REAL) real_want(p, info);
            if (cls[id] == MAP_SWITCH) switch_want(p, info->sw);
            break;
        default: break;
        }
        switch (n->kind) {
        case IR_AGGREGATE: {
            if (selector_needs_joint(p, n->u.aggregate.selector)) joint_want(p, n->u.aggregate.selector);
            else selector_want(p, n->u.aggregate.selector, false);
            SopInfo *src = &p->info[n->u.aggregate.sop->id];
            bool copy = !aggregate_averages(p, n) || (selector_at_most_one(p, n->u.aggregate.selector) && !src->vs.unbounded &&
                                            (info->want_cat || n == out));
            if (copy) src->want_cat = true;
            else src->want_num = true;
            break;
        }
        case IR_SELECTOR_WIDTH: width_want(p, n->u.width.selector); break;
        case IR_MAP:
            if (cls[id] == MAP_MLP || (cls[id] == MAP_AFFINE && info->want_cat)) {
                for (uint32_t k = 0; k < info->n_leaves; k++) {
                    SopInfo *a = &p->info[info->leaves[k]->id];
                    if (vs_kind_collisions(&a->vs)) a->want_kind = true; /* 1 and 1.0 may map differently */
                    if (a->node->kind == IR_LENGTH || a->node->kind == IR_SELECTOR_WIDTH) continue; /* read via u */
                    if (a->node->kind == IR_MAP && heavy_dev(p, a->node, cls) < INFINITY) { /* its heavy view */
                        a->want_heavy = true;
                        continue;
                    }
                    /* rounding twins (length * mean: 3.0 and 2.9999999999999996) only by rank */
                    if (a->vs.numeric && !vs_inexact_as_numbers(&a->vs)) a->want_num = true;
                    else a->want_cat = true;
                }
            }
            if (cls[id] == MAP_UNARY_CAT) p->info[info->cat_src->id].want_cat = true;
            for (uint32_t j = 0; j < n->u.map.nargs && cls[id] == MAP_AFFINE && (info->want_num || n == out); j++)
                p->info[n->u.map.args[j]->id].want_num = true;
            for (uint32_t j = 0; j < n->u.map.nargs && cls[id] == MAP_AFFINE && info->want_heavy; j++) {
                SopInfo *a = &p->info[n->u.map.args[j]->id]; /* heavy from heavy and free views */
                if (a->node->kind == IR_SELECTOR_WIDTH || a->node->kind == IR_CONST) continue; /* via u */
                if (a->node->kind == IR_MAP && heavy_dev(p, a->node, cls) < INFINITY) a->want_heavy = true;
                else a->want_num = true;
            }
            break;
        default: break;
        }
    }
}
