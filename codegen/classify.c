/* Map classification and fusion, and the demand pass (see internal.h).
 *
 * A map is a free categorical view (one categorical argument), a free affine numerical view, or
 * tabulated by an MLP from chosen leaves; demand records which views each consumer reads. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/internal.h"


/* The one non-constant argument of a map, or NULL when there are several. */
const IrNode *map_single_varying_arg(const IrNode *n) {
    const IrNode *x = NULL;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        if (n->u.map.args[j]->kind == IR_CONST) continue;
        if (x && x != n->u.map.args[j]) return NULL;
        x = n->u.map.args[j];
    }
    return x;
}

/* The one s-op map n is a function of through its arguments: an argument itself, or the source
 * of arguments that are views of it (MAP_UNARY_CAT); NULL when there are several. */
static const IrNode *unary_source(Plan *p, const IrNode *n, const MapClass *cls) {
    const IrNode *x = NULL;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const IrNode *a = n->u.map.args[j];
        if (a->kind == IR_CONST) continue;
        const IrNode *s = a->kind == IR_MAP && cls[a->id] == MAP_UNARY_CAT ? p->info[a->id].cat_src : a;
        if (x && x != s) return NULL;
        x = s;
    }
    return x;
}

bool aggregate_averages(Plan *p, const IrNode *agg) {
    const ValueSet *src = &p->info[agg->u.aggregate.sop->id].vs;
    bool all_bool = true;
    for (size_t i = 0; i < src->n; i++) all_bool = all_bool && src->vals[i].kind == VAL_BOOL;
    return src->numeric && !(all_bool && !src->unbounded);
}

static bool cat_capable(Plan *p, const IrNode *x, const MapClass *cls) {
    if (p->info[x->id].pos_free) return true;
    switch (x->kind) {
    case IR_TOKENS: case IR_INDICES: case IR_CONST: case IR_LENGTH: case IR_SELECTOR_WIDTH: return true;
    case IR_AGGREGATE: return !aggregate_averages(p, x) || selector_at_most_one(p, x->u.aggregate.selector);
    case IR_MAP: return cls[x->id] == MAP_UNARY_CAT;
    default: return false;
    }
}

static bool affine_op(const IrNode *n) {
    if (n->u.map.kind == IR_MAP_UNARY) return n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS;
    if (n->u.map.kind != IR_MAP_BINARY) return false;
    switch (n->u.map.op) {
    case VOP_ADD: case VOP_SUB: return true;
    case VOP_MUL: return n->u.map.args[0]->kind == IR_CONST || n->u.map.args[1]->kind == IR_CONST;
    case VOP_DIV: return n->u.map.args[1]->kind == IR_CONST;
    default: return false;
    }
}

/* How many heads a selector_width is decomposed into (plan_width). */
static size_t width_terms(Plan *p, const IrNode *n) {
    SopInfo *info = &p->info[n->id];
    if (!info->n_terms) { /* memoised: fusion asks once per candidate leaf set */
        SelTerm *terms;
        size_t count = 1;
        if (!selector_terms(p, n->u.width.selector, &terms, &count)) count = CG_MAX_WIDTH_TERMS;
        if (count > CG_MAX_WIDTH_TERMS) count = 1; /* one head through the joint one-hots */
        info->n_terms = count ? count : 1;
    }
    return info->n_terms;
}

/* The inputs a table reads for width n: one through a heavy BOS (ops.c), else one per term. */
static size_t width_axes(Plan *p, const IrNode *n) { return width_bos_weight(p, n) > 1 ? 1 : width_terms(p, n); }

/* Whether some affine map of two s-ops adds width w to (or takes it from) another count: a width,
 * or an affine map that reads one (Dyck's depth, openers minus closers). */
static bool counted_with_another(Plan *p, const IrNode *w) {
    for (size_t id = w->id + 1; id < p->g->count; id++) {
        const IrNode *m = p->g->nodes[id];
        if (!p->info[id].reachable || m->kind != IR_MAP || !affine_op(m) || m->u.map.nargs != 2) continue;
        const IrNode *a = m->u.map.args[0], *b = m->u.map.args[1];
        if (a != w && b != w) continue;
        const IrNode *other = a == w ? b : a;
        if (other->kind == IR_SELECTOR_WIDTH) return true;
        if (other->kind == IR_MAP && affine_op(other))
            for (uint32_t j = 0; j < other->u.map.nargs; j++)
                if (other->u.map.args[j]->kind == IR_SELECTOR_WIDTH) return true;
    }
    return false;
}

/* The sum of |coef| of width w's terms (0: no heavy BOS for it). */
static double width_coefs(Plan *p, const IrNode *w) {
    SelTerm *terms;
    size_t n;
    if (!selector_terms(p, w->u.width.selector, &terms, &n) || n == 0 || n > CG_MAX_WIDTH_TERMS) return 0;
    if (n == 1 && !counted_with_another(p, w)) return 0;
    double coefs = 0;
    for (size_t t = 0; t < n; t++) coefs += fabs(terms[t].coef);
    return coefs;
}

double width_bos_weight(Plan *p, const IrNode *w) {
    if (w->kind != IR_SELECTOR_WIDTH) return 1;
    SopInfo *info = &p->info[w->id];
    if (info->bos_weight == 0) {
        double coefs = p->plain_widths || p->plain_heads ? 0 : width_coefs(p, w), N = (double)p->max_len;
        info->bos_weight = coefs > 0 ? exp2(ceil(log2(64 * coefs * N * N))) : 1;
    }
    p->used_heavy = p->used_heavy || info->bos_weight > 1;
    return info->bos_weight;
}

/* Whether every value of x is an integer (a heavy view lists them 1 or more apart). */
static bool integral(const ValueSet *vs) {
    if (vs->unbounded || !vs->numeric || vs->n == 0 || vs_inexact_as_numbers(vs)) return false;
    for (size_t i = 0; i < vs->n; i++) {
        double v = value_as_double(vs->vals[i]);
        if (v != floor(v) || fabs(v) > 0x1p40) return false;
    }
    return true;
}

double heavy_dev(Plan *p, const IrNode *x, const MapClass *cls) {
    const SopInfo *info = &p->info[x->id];
    if (x->kind == IR_SELECTOR_WIDTH) {
        double lambda = width_bos_weight(p, x), coefs = lambda > 1 ? width_coefs(p, x) : 0, N = (double)p->max_len;
        /* w^2 / (lambda + w) per term, and lambda times u's rounding (a few ulps of 1) */
        return lambda > 1 ? coefs * (N * N / lambda + 8 * lambda * DBL_EPSILON) : INFINITY;
    }
    if (x->kind != IR_MAP || !affine_op(x) || cls[x->id] != MAP_AFFINE || info->may_fail || !integral(&info->vs))
        return INFINITY;
    double dev = 0, scale = 1;
    bool heavy = false;
    if (x->u.map.kind == IR_MAP_BINARY && x->u.map.op == VOP_MUL) { /* by an integer constant */
        const IrNode *k = x->u.map.args[0]->kind == IR_CONST ? x->u.map.args[0] : x->u.map.args[1];
        double c = value_is_number(k->u.constant) ? value_as_double(k->u.constant) : NAN;
        if (!(c == floor(c))) return INFINITY;
        scale = fabs(c);
    } else if (x->u.map.kind == IR_MAP_BINARY && x->u.map.op == VOP_DIV) {
        return INFINITY;
    }
    for (uint32_t j = 0; j < x->u.map.nargs; j++) {
        const IrNode *a = x->u.map.args[j];
        if (a->kind == IR_CONST) continue;
        double d = heavy_dev(p, a, cls);
        if (d < INFINITY) {
            dev += scale * d;
            heavy = true;
        } else if (!(a->kind == IR_MAP && cls[a->id] == MAP_UNARY_CAT) && !p->info[a->id].pos_free) {
            return INFINITY; /* neither heavy nor a free view of the embedding */
        }
    }
    return heavy && dev <= 0.125 ? dev : INFINITY;
}

/* Doubles the BOS weight of every heavy width heavy view x reads. */
static void double_bos(Plan *p, const IrNode *x, const MapClass *cls) {
    if (x->kind == IR_SELECTOR_WIDTH) {
        p->info[x->id].bos_weight *= 2;
        return;
    }
    for (uint32_t j = 0; j < x->u.map.nargs; j++)
        if (x->u.map.args[j]->kind != IR_CONST && heavy_dev(p, x->u.map.args[j], cls) < INFINITY)
            double_bos(p, x->u.map.args[j], cls);
}

double heavy_span(const Plan *p, const IrNode *x) {
    if (x->kind == IR_SELECTOR_WIDTH) return (double)p->max_len + 1;
    const ValueSet *vs = &p->info[x->id].vs; /* integers (heavy_dev): gaps of 1 or more */
    return value_as_double(vs->vals[vs->n - 1]) - value_as_double(vs->vals[0]) + 1;
}

bool heavy_pair(Plan *p, const IrNode *a, const IrNode *b, const MapClass *cls) {
    /* either may come first: each off by at most 1/16 of a step of the other, half its own */
    for (int k = 0; k < 2; k++) {
        const IrNode *x = k ? b : a, *other = k ? a : b;
        double target = 1 / (16 * heavy_span(p, other)), dev = heavy_dev(p, x, cls);
        while (dev > target) {
            double before = dev;
            double_bos(p, x, cls);
            dev = heavy_dev(p, x, cls);
            if (!(dev < before)) return false; /* past the weight where rounding grows: no share */
        }
    }
    return true;
}

/* Whether some map between `n` and the leaves can raise for some argument values: then the
 * MLP's output is categorical and checked one-hot, so a raise becomes a runtime error. */
bool map_subtree_may_fail(Plan *p, const IrNode *n, const IrNode *const *leaves, uint32_t n_leaves) {
    for (uint32_t k = 0; k < n_leaves; k++)
        if (leaves[k] == n) return false;
    const PosTable *t = p->info[n->id].pos;
    if (t && t->any_fail) return true; /* looked up in its table, which raises somewhere */
    if (n->kind != IR_MAP) return false;
    if (p->info[n->id].may_fail) return true;
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (map_subtree_may_fail(p, n->u.map.args[j], leaves, n_leaves)) return true;
    return false;
}

/* Whether map `n` is computed (through maps) from a selector_width or length. */
static bool reads_width(const IrNode *n) {
    if (n->kind == IR_LENGTH || n->kind == IR_SELECTOR_WIDTH) return true;
    if (n->kind != IR_MAP) return false;
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (reads_width(n->u.map.args[j])) return true;
    return false;
}

/* Whether reading map `n` would wait for an MLP of its own or a width's discretisation:
 * a tabulated map, a selector width, or a free view of one of those. */
static bool costly(Plan *p, const IrNode *n, const MapClass *cls) {
    if (p->info[n->id].pos_free) return false;
    if (n->kind == IR_LENGTH || n->kind == IR_SELECTOR_WIDTH) return true;
    if (n->kind != IR_MAP) return false;
    SopInfo *info = &p->info[n->id];
    if (info->costly_known) return info->costly;
    bool c = cls[n->id] == MAP_MLP || cls[n->id] == MAP_GATED || cls[n->id] == MAP_SWITCH;
    for (uint32_t j = 0; j < n->u.map.nargs && !c; j++) c = costly(p, n->u.map.args[j], cls);
    info->costly_known = true;
    info->costly = c;
    return c;
}

void pos_leaves(Plan *p, const SopInfo *info, const IrNode *out[2]) {
    out[0] = info->pos->dep == POS_I || info->pos->dep == POS_IN ? p->indices : NULL;
    out[1] = info->pos->dep == POS_N || info->pos->dep == POS_IN ? p->length : NULL;
}

/* Whether a tabulation reading `n` may read indices and length instead, and look n up in its
 * table: a positional s-op (other than those two) that is not free anyway. */
static bool expands_to_position(Plan *p, const IrNode *n) {
    const SopInfo *info = &p->info[n->id];
    return info->pos && info->pos->val && !info->pos_free && n->kind != IR_INDICES && n->kind != IR_LENGTH &&
           n->kind != IR_CONST;
}

/* Adds `n` to a leaf set unless it is a constant or already there. */
static void add_leaf(const IrNode **set, uint32_t *n, const IrNode *x) {
    if (x->kind == IR_CONST) return;
    for (uint32_t k = 0; k < *n; k++)
        if (set[k] == x) return;
    set[(*n)++] = x;
}

static double grid_size(Plan *p, const IrNode *const *set, uint32_t n) {
    double grid = 1;
    bool has_index = false, correlated = false;
    for (uint32_t j = 0; j < n; j++) {
        if (p->info[set[j]->id].vs.unbounded && set[j]->kind != IR_SELECTOR_WIDTH) return INFINITY; /* a real */
        has_index = has_index || set[j]->kind == IR_INDICES;
        correlated = correlated || agg_count_by_index(p, set[j]);
    }
    if (has_index && correlated) { /* the pairs that occur: per index, the values at its count */
        double total = 0;
        for (size_t i = 0; i < p->max_len; i++) {
            double g = 1;
            for (uint32_t j = 0; j < n; j++) {
                const int32_t *c = agg_count_by_index(p, set[j]);
                if (set[j]->kind == IR_INDICES) continue;
                g *= c ? agg_values_with_count(p, set[j], c[i]) + 1
                       : set[j]->kind == IR_SELECTOR_WIDTH ? pow((double)p->max_len + 1, width_axes(p, set[j]))
                                                           : (double)(p->info[set[j]->id].vs.n + 1);
            }
            total += g;
        }
        return total;
    }
    for (uint32_t j = 0; j < n; j++)
        grid *= set[j]->kind == IR_SELECTOR_WIDTH ? pow((double)p->max_len + 1, width_axes(p, set[j]))
                                                  : (double)(p->info[set[j]->id].vs.n + 1);
    return grid;
}

/* The span of the projection a table of these leaves steps along (mlp.c's p_max): per leaf its
 * range in units of its least gap (a width read through 1/(w+1), about (N+1)^2 per term; through
 * a heavy BOS, N+1). */
static double table_span(Plan *p, const IrNode *const *set, uint32_t n) {
    double span = 1, N1 = (double)p->max_len + 1;
    for (uint32_t j = 0; j < n; j++) {
        const ValueSet *vs = &p->info[set[j]->id].vs;
        if (set[j]->kind == IR_SELECTOR_WIDTH && width_bos_weight(p, set[j]) > 1) {
            span *= N1;
            continue;
        }
        if (set[j]->kind == IR_SELECTOR_WIDTH || set[j]->kind == IR_LENGTH) {
            span *= pow(N1 * N1, set[j]->kind == IR_LENGTH ? 1 : width_terms(p, set[j]));
            continue;
        }
        if (vs->unbounded) return INFINITY;
        if (!vs->numeric || vs->n < 2) {
            span *= (double)(vs->n ? vs->n : 1);
            continue;
        }
        double lo = value_as_double(vs->vals[0]), hi = value_as_double(vs->vals[vs->n - 1]), gap = INFINITY;
        for (size_t i = 1; i < vs->n; i++) {
            double d = value_as_double(vs->vals[i]) - value_as_double(vs->vals[i - 1]);
            if (d > 0) gap = fmin(gap, d);
        }
        span *= isfinite(gap) ? (hi - lo) / gap + 1 : 1;
    }
    return span;
}

/* A map whose values mix strings with other atoms must be computed on its own dims, where the
 * one-kind check sees it (the reference refuses such a sequence): never fused through. */
static bool mixed(Plan *p, const IrNode *n) { return vs_mixed_kinds(&p->info[n->id].vs); }

/* Collects what `n` is computed from through the maps that would cost a layer of their own
 * (costly; every map when all_maps): non-map s-ops and free views stay leaves. False when
 * more than CG_MAX_LEAVES. */
static bool map_sources(Plan *p, const IrNode *n, const MapClass *cls, bool all_maps, const IrNode **out,
                        uint32_t *count) {
    if (n->kind == IR_CONST) return true;
    if (expands_to_position(p, n)) { /* computed from its table: from indices and length */
        const IrNode *pl[2];
        pos_leaves(p, &p->info[n->id], pl);
        for (int j = 0; j < 2; j++)
            if (pl[j] && !map_sources(p, pl[j], cls, all_maps, out, count)) return false;
        return true;
    }
    if (n->kind == IR_MAP && !mixed(p, n) && (all_maps || costly(p, n, cls))) {
        for (uint32_t j = 0; j < n->u.map.nargs; j++)
            if (!map_sources(p, n->u.map.args[j], cls, all_maps, out, count)) return false;
        return true;
    }
    for (uint32_t k = 0; k < *count; k++)
        if (out[k] == n) return true;
    if (*count == CG_MAX_LEAVES) return false;
    out[(*count)++] = n;
    return true;
}

/* Grid points a fused tabulation may have: one leaf's grid is its value set, which changes
 * value at few points for most maps, so it may be large; joint grids of several leaves change
 * at most points and are kept small. */
static double fused_budget(uint32_t n_leaves) { return n_leaves <= 1 ? CG_MAX_GRID : CG_MAX_FUSED_GRID; }

/* Chooses the s-ops an MLP-tabulated map reads (map fusion). Start from its arguments; then,
 * while it stays within the limits, replace a leaf that would cost a layer of its own (a map
 * tabulated by its own MLP, or a view of a selector width, which an MLP can read straight from
 * the width's heads) by what that leaf is computed from. Every step keeps the map computable
 * from the leaves. */
/* Slot at which s-op x becomes available to a consumer, under the classification so far (ids
 * ascend, so x and everything it reads are classified): as an MLP leaf a width counts from its
 * heads' u, otherwise from its own MLP. An estimate of plan.c's ASAP slots, used to choose leaves. */
static int est_time(Plan *p, const IrNode *x, const MapClass *cls, bool as_leaf);

/* As est_time, for a number read through its affine form (numeq.c scores an equality of numbers
 * from the terms of sums and differences, whatever their tables would cost). */
static int est_numeric_time(Plan *p, const IrNode *x, const MapClass *cls) {
    const SopInfo *info = &p->info[x->id];
    if (x->kind != IR_MAP || !affine_op(x) || info->may_fail || info->real || info->real_fn || !info->vs.numeric)
        return est_time(p, x, cls, false);
    int t = 0;
    for (uint32_t j = 0; j < x->u.map.nargs; j++) {
        int a = x->u.map.args[j]->kind == IR_CONST ? 0 : est_numeric_time(p, x->u.map.args[j], cls);
        if (a > t) t = a;
    }
    return t;
}

static int est_selector_time(Plan *p, const IrNode *sel, const MapClass *cls) {
    if (sel->kind == IR_SELECT) {
        const IrNode *K = sel->u.select.keys, *Q = sel->u.select.queries;
        bool numeq = sel->u.select.cmp == IR_CMP_EQ && p->info[K->id].vs.numeric && p->info[Q->id].vs.numeric;
        int k = numeq ? est_numeric_time(p, K, cls) : est_time(p, K, cls, false);
        int q = numeq ? est_numeric_time(p, Q, cls) : est_time(p, Q, cls, false);
        return k > q ? k : q;
    }
    int a = est_selector_time(p, sel->u.combine.lhs, cls);
    int b = sel->u.combine.rhs ? est_selector_time(p, sel->u.combine.rhs, cls) : 0;
    return a > b ? a : b;
}

static int est_time(Plan *p, const IrNode *x, const MapClass *cls, bool as_leaf) {
    SopInfo *info = &p->info[x->id];
    if (info->pos_free) return 0;
    int leaf = as_leaf && (x->kind == IR_LENGTH || x->kind == IR_SELECTOR_WIDTH ||
                           (x->kind == IR_MAP && heavy_dev(p, x, cls) < INFINITY)); /* its heavy view */
    if (info->est_known[leaf]) return info->est[leaf];
    int t = 0;
    switch (x->kind) {
    case IR_LENGTH: t = leaf ? 1 : 2; break;
    case IR_SELECTOR_WIDTH: t = next_slot(est_selector_time(p, x->u.width.selector, cls), true) + !leaf; break;
    case IR_AGGREGATE: {
        int s = est_selector_time(p, x->u.aggregate.selector, cls), v = est_time(p, x->u.aggregate.sop, cls, false);
        t = next_slot(s > v ? s : v, true);
        break;
    }
    case IR_MAP:
        if (leaf) { /* a heavy view: from its arguments' heavy and free views */
            for (uint32_t j = 0; j < x->u.map.nargs; j++) {
                int a = x->u.map.args[j]->kind == IR_CONST ? 0 : est_time(p, x->u.map.args[j], cls, true);
                if (a > t) t = a;
            }
        } else if (cls[x->id] == MAP_SWITCH) { /* it reads widths by value, or by u (Switch.x_u) */
            for (uint32_t k = 0; k < info->sw->n_gates + info->sw->n_xs; k++) {
                bool gate = k < info->sw->n_gates;
                const IrNode *l = gate ? info->sw->gates[k] : info->sw->xs[k - info->sw->n_gates];
                int a = est_time(p, l, cls, !gate && info->sw->x_u[k - info->sw->n_gates]);
                if (a > t) t = a;
            }
            t = next_slot(t, false);
        } else if (cls[x->id] == MAP_MLP || cls[x->id] == MAP_GATED) {
            for (uint32_t k = 0; k < info->n_leaves; k++) {
                int a = est_time(p, info->leaves[k], cls, true);
                if (a > t) t = a;
            }
            t = next_slot(t, false);
        } else {
            for (uint32_t j = 0; j < x->u.map.nargs; j++) {
                int a = est_time(p, x->u.map.args[j], cls, false);
                if (a > t) t = a;
            }
        }
        break;
    default: break;
    }
    /* read as a leaf, a map whose equal numbers differ in kind (1 and 1.0) is read with its kind
     * block, which an MLP computes after it (kinds.c) */
    if (as_leaf && x->kind == IR_MAP && info->kind_matters && vs_kind_collisions(&info->vs)) t = next_slot(t, false);
    info->est[leaf] = t;
    info->est_known[leaf] = true;
    return t;
}

/* A leaf set's cost: the slot its MLP gets, then the size of its grid. */
typedef struct LeafCost {
    int slot;
    double grid;
    uint32_t n;
} LeafCost;

static bool leaf_cost(Plan *p, const IrNode *const *set, uint32_t n, const MapClass *cls, LeafCost *c) {
    if (n > CG_MAX_LEAVES) return false;
    /* a table reads one input off its values (ops.c), or two whose deviations fit each other's steps */
    const IrNode *heavy[2];
    uint32_t heavy_maps = 0;
    for (uint32_t k = 0; k < n; k++)
        if (set[k]->kind == IR_MAP && heavy_dev(p, set[k], cls) < INFINITY) {
            if (heavy_maps == 2) return false;
            heavy[heavy_maps++] = set[k];
        }
    bool pair = heavy_maps == 2 && n == 2;
    if (heavy_maps == 2 && (!pair || !heavy_pair(p, heavy[0], heavy[1], cls))) return false;
    c->grid = grid_size(p, set, n);
    if (c->grid > (pair ? CG_MAX_GRID : fused_budget(n))) return false;
    int t = 0;
    for (uint32_t k = 0; k < n; k++) {
        int a = est_time(p, set[k], cls, true);
        if (a > t) t = a;
    }
    c->slot = next_slot(t, false);
    c->n = n;
    return true;
}

static bool cheaper(LeafCost a, LeafCost b) {
    if (a.slot != b.slot) return a.slot < b.slot;
    if (a.grid != b.grid) return a.grid < b.grid;
    return a.n < b.n;
}

/* set with its leaf k replaced by what that leaf is computed from, into cand (*nc members);
 * false when leaf k is not a map or positional s-op that can be looked through. */
static bool expand_leaf(Plan *p, const IrNode *const *set, uint32_t n, uint32_t k, const MapClass *cls,
                        const IrNode **cand, uint32_t *nc) {
    const IrNode *l = set[k];
    bool positional = expands_to_position(p, l);
    if ((l->kind != IR_MAP && !positional) || mixed(p, l)) return false;
    *nc = 0;
    for (uint32_t j = 0; j < n; j++)
        if (j != k) add_leaf(cand, nc, set[j]);
    if (positional) { /* never into its arguments: its table is exact, their product is not */
        const IrNode *pl[2];
        pos_leaves(p, &p->info[l->id], pl);
        for (int j = 0; j < 2; j++)
            if (pl[j]) add_leaf(cand, nc, pl[j]);
    } else if (cls[l->id] == MAP_MLP)
        for (uint32_t j = 0; j < p->info[l->id].n_leaves; j++) add_leaf(cand, nc, p->info[l->id].leaves[j]);
    else
        for (uint32_t j = 0; j < l->u.map.nargs; j++) add_leaf(cand, nc, l->u.map.args[j]);
    return true;
}

/* set with every leaf that is available last (at the slot's predecessor) replaced by what it is
 * computed from, one level, into cand: a slot is saved only when all of them are looked through
 * (a mux of two maps of the same layer). False when one of them cannot be. */
static bool expand_latest(Plan *p, const IrNode *const *set, uint32_t n, const MapClass *cls, const IrNode **cand,
                          uint32_t *nc) {
    int latest = 0;
    for (uint32_t k = 0; k < n; k++) {
        int t = est_time(p, set[k], cls, true);
        if (t > latest) latest = t;
    }
    const IrNode *cur[6 * CG_MAX_LEAVES];
    uint32_t ncur = n, expanded = 0;
    memcpy(cur, set, n * sizeof *set);
    for (uint32_t k = 0; k < ncur;) {
        if (est_time(p, cur[k], cls, true) != latest || !(cur[k]->kind == IR_MAP || expands_to_position(p, cur[k]))) {
            k++;
            continue;
        }
        const IrNode *next[6 * CG_MAX_LEAVES];
        uint32_t nn = 0;
        if (!expand_leaf(p, cur, ncur, k, cls, next, &nn) || nn > 2 * CG_MAX_LEAVES) return false;
        memcpy(cur, next, nn * sizeof *next);
        ncur = nn; /* leaf k's place now holds the next one; what it brought is at the end */
        expanded++;
        if (expanded > 2 * CG_MAX_LEAVES) return false;
    }
    if (expanded < 2) return false; /* one leaf: descend() tries that itself */
    memcpy(cand, cur, ncur * sizeof *cur);
    *nc = ncur;
    return true;
}

/* From a starting leaf set, expands map leaves into what they read while that is cheaper: one
 * leaf, or, where that saves a slot, one leaf and then one of the leaves it brought (a sum
 * v1 + v2 costs as much as its terms, but one of the terms may be earlier through what it reads),
 * or every leaf that comes last at once. */
static void descend(Plan *p, const IrNode **set, uint32_t *n, LeafCost *cost, const MapClass *cls) {
    for (bool improved = true; improved;) {
        improved = false;
        const IrNode *all[6 * CG_MAX_LEAVES];
        uint32_t na = 0;
        LeafCost ca;
        if (expand_latest(p, set, *n, cls, all, &na) && leaf_cost(p, all, na, cls, &ca) && ca.slot < cost->slot &&
            table_span(p, all, na) <= CG_MAX_FUSED_SPAN) {
            memcpy(set, all, na * sizeof *all);
            *n = na;
            *cost = ca;
            improved = true;
            continue;
        }
        for (uint32_t k = 0; k < *n && !improved; k++) {
            const IrNode *cand[3 * CG_MAX_LEAVES], *cand2[6 * CG_MAX_LEAVES];
            uint32_t nc = 0, nc2 = 0;
            if (!expand_leaf(p, set, *n, k, cls, cand, &nc) || nc > 2 * CG_MAX_LEAVES) continue;
            LeafCost c;
            bool fits = leaf_cost(p, cand, nc, cls, &c);
            if (fits && cheaper(c, *cost)) {
                memcpy(set, cand, nc * sizeof *cand);
                *n = nc;
                *cost = c;
                improved = true;
                break;
            }
            for (uint32_t k2 = *n - 1; k2 < nc && !improved; k2++) { /* the leaves leaf k brought */
                /* two steps deep only to save a slot, and where the projection stays short (a
                 * much longer one rounds near its steps, and mlp.c would refuse the table) */
                if (!expand_leaf(p, cand, nc, k2, cls, cand2, &nc2) || !leaf_cost(p, cand2, nc2, cls, &c) ||
                    c.slot >= cost->slot || table_span(p, cand2, nc2) > CG_MAX_FUSED_SPAN)
                    continue;
                memcpy(set, cand2, nc2 * sizeof *cand2);
                *n = nc2;
                *cost = c;
                improved = true;
            }
        }
    }
}

/* Whether map n's table was refused for rounding with tables first (Plan.size_rule): it then
 * reads its own arguments and is gated where large. */
static bool table_refused(const Plan *p, const IrNode *n) {
    return p->tables_first && n->id < p->n_size_rule && p->size_rule[n->id];
}

/* Whether map n is gated where large even when a table would save a slot: every map under the
 * size rule, and the maps whose tables were refused. */
static bool size_rule(const Plan *p, const IrNode *n) { return !p->tables_first || table_refused(p, n); }

/* Chooses the s-ops an MLP-tabulated map reads (map fusion): the cheapest leaf set (earliest
 * slot, then smallest grid) reached by descend() from the map's arguments, from what its costly
 * maps are computed from, and from what all its maps are computed from. Every candidate keeps
 * the map computable from its leaves. */
static void choose_leaves(Plan *p, SopInfo *info, const MapClass *cls) {
    const IrNode *n = info->node;
    info->n_leaves = 0;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) add_leaf(info->leaves, &info->n_leaves, n->u.map.args[j]);
    if (table_refused(p, n)) return; /* its fused table rounded too much: its arguments */
    LeafCost best;
    if (!leaf_cost(p, info->leaves, info->n_leaves, cls, &best)) /* the arguments are what they are */
        best = (LeafCost){1 << 30, INFINITY, info->n_leaves};
    descend(p, info->leaves, &info->n_leaves, &best, cls);
    for (int all_maps = 0; all_maps < 2; all_maps++) {
        const IrNode *src[3 * CG_MAX_LEAVES];
        uint32_t ns = 0;
        bool fits = true;
        for (uint32_t j = 0; j < n->u.map.nargs && fits; j++)
            fits = map_sources(p, n->u.map.args[j], cls, all_maps, src, &ns);
        LeafCost c;
        if (!fits || !leaf_cost(p, src, ns, cls, &c)) continue;
        descend(p, src, &ns, &c, cls);
        if (!cheaper(c, best)) continue;
        memcpy(info->leaves, src, ns * sizeof *src);
        info->n_leaves = ns;
        best = c;
    }
}

/* The map n at g = gv and y = yv (its other arguments are constants). */
static ValueResult gated_apply(Plan *p, const IrNode *n, const IrNode *g, Value gv, const IrNode *y, Value yv, char *msg,
                               size_t msgsize) {
    Value in[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const IrNode *arg = n->u.map.args[j];
        in[j] = arg == g ? gv : arg == y ? yv : arg->u.constant;
    }
    return ir_map_apply(n, in, p->arena, msg, msgsize);
}

/* Whether the output `out` decodes per length with gaps (>= 1e-6 |value|) far wider than a gated
 * MLP's error: its affine fit within 1e-12, the rounding of sums near M = 2 bound + 1, and the
 * ulps of the gate's one-hot times M. The model's number is then nearest the right value of its
 * length, whatever the twins of other lengths (rasprun --verify checks it). */
static bool wide_gaps_per_length(Plan *p, const IrNode *out) {
    const ValueSet *sets = vs_output_sets(p, out);
    for (size_t n = 0; sets && n < p->max_len; n++) {
        double gap, mag = 1;
        if (!sets[n].n) continue;
        if (!vs_decodable(&sets[n], true, &gap)) return false;
        for (size_t i = 0; i < sets[n].n; i++) mag = fmax(mag, fabs(value_as_double(sets[n].vals[i])));
        if (gap < 1e-6 * mag) return false;
    }
    return sets != NULL;
}

/* Whether tabulating map n would round near the gaps of its values: a projection over more than
 * 1e6 grid points, or numbers more than 1e7 gaps large (mlp.c then refuses the table). A gated
 * sum is preferred there even where it costs more units. */
static bool table_rounding_prone(Plan *p, const IrNode *n, double grid) {
    const ValueSet *vs = &p->info[n->id].vs;
    if (grid > 1e6) return true;
    if (vs->unbounded || !vs->numeric || vs->n < 2) return false;
    double mag, gap = vs_resolved_gap(vs, false, &mag);
    return mag > 1e7 * gap;
}

/* Whether a gated sum's float64 rounding stays far below the gaps its consumers resolve: every
 * unit sums terms near M = 2 bound + 1, a few ulps of M each (`x if c else 2 ^ 53` cannot be read
 * to the unit). The output is also read against each length's values. */
static bool gated_rounding_ok(Plan *p, const IrNode *n, double bound) {
    const ValueSet *vs = &p->info[n->id].vs;
    double gap = fmin(vs_inexact_as_numbers(vs) ? INFINITY : vs_resolved_gap(vs, false, NULL),
                      vs_output_resolved_gap(p, n, false));
    return (2 * bound + 1) * 64 * DBL_EPSILON <= gap / 16;
}

/* Whether a conditional `t if g else e` between two numbers of one kind can be gated: g has few
 * values, each of which picks t or e (Gated.y2); fills *gd. Instead of a table of every (g, t, e),
 * four units per gate value. */
static bool gated_cond_form(Plan *p, const IrNode *n, double span, Gated *gd) {
    if (n->u.map.kind != IR_MAP_COND || n->u.map.nargs != 3) return false;
    const IrNode *g = n->u.map.args[0], *t = n->u.map.args[1], *e = n->u.map.args[2];
    if (g->kind == IR_CONST || t->kind == IR_CONST || e->kind == IR_CONST || t == e || g == t || g == e) return false;
    const ValueSet *G = &p->info[g->id].vs, *T = &p->info[t->id].vs, *E = &p->info[e->id].vs;
    const ValueSet *out = &p->info[n->id].vs;
    if (G->unbounded || G->n == 0 || G->n > CG_MAX_GATE || T->unbounded || E->unbounded || !T->numeric || !E->numeric ||
        vs_inexact_as_numbers(T) || vs_inexact_as_numbers(E) ||
        (T->n + E->n <= 2 * G->n && !table_rounding_prone(p, n, span)))
        return false;
    /* one kind of number throughout (or kinds that no consumer sees), exact as numbers */
    for (size_t i = 0; i < out->n && !out->by_number; i++)
        if (out->vals[i].kind != out->vals[0].kind) return false;
    if (vs_inexact_as_numbers(out) && !(n == p->output && wide_gaps_per_length(p, n))) return false;
    gd->gate = g;
    gd->y = t;
    gd->y2 = e;
    gd->n = G->n;
    gd->a = ARENA_ARRAY(p->arena, double, G->n);
    gd->b = ARENA_ARRAY(p->arena, double, G->n);
    gd->on_y2 = ARENA_ARRAY(p->arena, bool, G->n);
    gd->bound = 0;
    for (size_t i = 0; i < T->n; i++) gd->bound = fmax(gd->bound, fabs(value_as_double(T->vals[i])));
    for (size_t i = 0; i < E->n; i++) gd->bound = fmax(gd->bound, fabs(value_as_double(E->vals[i])));
    char msg[160];
    for (size_t v = 0; v < G->n; v++) { /* which branch the gate value takes: markers 1 and 2 */
        ValueResult r = ir_map_apply(n, (Value[3]){G->vals[v], value_int(1), value_int(2)}, p->arena, msg, sizeof msg);
        if (!r.ok || r.value.kind != VAL_INT) return false;
        gd->on_y2[v] = r.value.as.i == 2;
        gd->a[v] = 1;
        gd->b[v] = 0;
    }
    return gated_rounding_ok(p, n, gd->bound);
}

/* Whether map n is affine in y for each value of the other varying argument g (see Gated),
 * over the exact grid of their values; fills *gd. Worth it only when g has few values and y many. */
static bool gated_form(Plan *p, const IrNode *n, const IrNode *g, const IrNode *y, double span, Gated *gd) {
    const ValueSet *G = &p->info[g->id].vs, *Y = &p->info[y->id].vs;
    if (G->unbounded || Y->unbounded || !Y->numeric || G->n == 0 || G->n > CG_MAX_GATE || Y->n < 4 ||
        (double)G->n * (double)Y->n > CG_MAX_GRID ||
        (Y->n <= 2 * G->n && !table_rounding_prone(p, n, span)))
        return false;
    /* a y * k rounded two ways (S / k * k is S or a neighbour): only a table tells them apart,
     * unless it is the output read against each length's value set */
    if (vs_inexact_as_numbers(&p->info[n->id].vs) && !(n == p->output && wide_gaps_per_length(p, n))) return false;
    gd->gate = g;
    gd->y = y;
    gd->n = G->n;
    gd->a = ARENA_ARRAY(p->arena, double, G->n);
    gd->b = ARENA_ARRAY(p->arena, double, G->n);
    gd->bound = 0;
    char msg[160];
    for (size_t v = 0; v < G->n; v++) {
        /* the slope from the two ends of y's range (the least rounding), checked at every y */
        double y0 = value_as_double(Y->vals[0]), y1 = value_as_double(Y->vals[Y->n - 1]), f0 = 0, f1 = 0;
        for (size_t i = 0; i < Y->n; i += Y->n - 1) {
            ValueResult r = gated_apply(p, n, g, G->vals[v], y, Y->vals[i], msg, sizeof msg);
            if (!r.ok || !value_is_number(r.value)) return false;
            *(i ? &f1 : &f0) = value_as_double(r.value);
        }
        double a = y1 > y0 ? (f1 - f0) / (y1 - y0) : 0;
        for (size_t i = 0; i < Y->n; i++) {
            ValueResult r = gated_apply(p, n, g, G->vals[v], y, Y->vals[i], msg, sizeof msg);
            if (!r.ok || !value_is_number(r.value)) return false;
            double f = value_as_double(r.value), d = a * (value_as_double(Y->vals[i]) - y0);
            if (fabs(f0 + d - f) > 1e-12 * fmax(1, fmax(fabs(f0), fabs(d)))) return false;
            gd->bound = fmax(gd->bound, fabs(f));
        }
        gd->a[v] = a;
        gd->b[v] = f0 - a * y0;
    }
    return gated_rounding_ok(p, n, gd->bound);
}

/* A gated map's leaves: the gate and y (and y2). */
static MapClass gated_leaves(SopInfo *info) {
    info->leaves[0] = info->gated->gate;
    info->leaves[1] = info->gated->y;
    info->n_leaves = 2;
    if (info->gated->y2) info->leaves[info->n_leaves++] = info->gated->y2;
    return MAP_GATED;
}

/* ---- switches (switch.c) ---- */

/* Whether s-op x has a one-hot block when its value is available: as cat_capable, or a map an
 * MLP of its own tabulates (into a one-hot block). */
static bool gate_capable(Plan *p, const IrNode *x, const MapClass *cls) {
    return cat_capable(p, x, cls) || (x->kind == IR_MAP && (cls[x->id] == MAP_MLP || cls[x->id] == MAP_SWITCH));
}

/* Whether a switch may read map x's arguments instead of x: a map that needs no check of its own
 * and costs a slot somewhere (a free view of an aggregate is read as it is: two values, not the
 * aggregate's many). */
static bool switch_through(Plan *p, const IrNode *x, const MapClass *cls) {
    const SopInfo *info = &p->info[x->id];
    return x->kind == IR_MAP && !info->pos_free && !expands_to_position(p, x) && !mixed(p, x) && !info->real &&
           !info->real_fn && !info->may_fail && costly(p, x, cls);
}

/* Whether s-op x is a width (or the length) a switch can read through its one head's u. */
static bool via_u(Plan *p, const IrNode *x) {
    return x->kind == IR_LENGTH || (x->kind == IR_SELECTOR_WIDTH && width_terms(p, x) == 1);
}

/* When a switch can read x: a width from its head's u, anything else as a value. */
static int switch_time(Plan *p, const IrNode *x, const MapClass *cls) { return est_time(p, x, cls, via_u(p, x)); }

/* A switch computing map n in a slot before `slot` (where a table of it would be), or NULL. Its
 * leaves: n's arguments, with every map among those available last read through until none of
 * those is a costly map, and views of one s-op replaced by that s-op; then those with a one-hot
 * block (or two numbers) gate, the rest are its numeric leaves (widths by their u). */
static Switch *try_switch(Plan *p, const IrNode *n, const MapClass *cls, int slot) {
    enum { CAP = 2 * SW_MAX_LEAVES + 3 };
    const IrNode *set[CAP];
    uint32_t ns = 0;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) add_leaf(set, &ns, n->u.map.args[j]);
    int latest;
    for (;;) {
        latest = 0;
        for (uint32_t k = 0; k < ns; k++) {
            int t = switch_time(p, set[k], cls);
            if (t > latest) latest = t;
        }
        const IrNode *next[CAP];
        uint32_t nn = 0;
        bool through = false;
        for (uint32_t k = 0; k < ns; k++) {
            if (nn + 3 > CAP) return NULL;
            if (switch_time(p, set[k], cls) == latest && switch_through(p, set[k], cls)) {
                for (uint32_t j = 0; j < set[k]->u.map.nargs; j++) add_leaf(next, &nn, set[k]->u.map.args[j]);
                through = true;
            } else {
                add_leaf(next, &nn, set[k]);
            }
        }
        if (!through) break;
        memcpy(set, next, nn * sizeof *next);
        ns = nn;
    }
    /* views of one s-op (tokens == "a", tokens == "b") gate as that s-op: as separate gates, their
     * impossible combinations (both true) would be cases too */
    const IrNode *src[CAP], *grouped[CAP];
    uint32_t n_grouped = 0;
    for (uint32_t k = 0; k < ns; k++)
        src[k] = set[k]->kind == IR_MAP && cls[set[k]->id] == MAP_UNARY_CAT ? p->info[set[k]->id].cat_src : NULL;
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t views = 0;
        for (uint32_t l = 0; src[k] && l < ns; l++) views += src[l] == src[k];
        add_leaf(grouped, &n_grouped, views >= 2 ? src[k] : set[k]);
    }
    memcpy(set, grouped, n_grouped * sizeof *grouped);
    ns = n_grouped;
    if (ns == 0 || ns > SW_MAX_LEAVES || next_slot(latest, false) >= slot) return NULL;
    const IrNode *gates[SW_MAX_LEAVES], *xs[SW_MAX_LEAVES];
    bool by_num[SW_MAX_LEAVES], x_u[SW_MAX_LEAVES];
    uint32_t ng = 0, nx = 0;
    for (uint32_t k = 0; k < ns; k++) {
        const ValueSet *vs = &p->info[set[k]->id].vs;
        bool finite = !vs->unbounded && vs->n > 0;
        /* a width whose one-hot would come too late: by its u */
        bool u = via_u(p, set[k]) && est_time(p, set[k], cls, false) >= next_slot(latest, false);
        if (u) {
            x_u[nx] = true;
            xs[nx++] = set[k];
        } else if (finite && vs->n <= 64 && gate_capable(p, set[k], cls)) {
            by_num[ng] = false;
            gates[ng++] = set[k];
        } else if (finite && vs->n == 2 && vs->numeric && vs_decodable(vs, false, NULL) && !vs_inexact_as_numbers(vs)) {
            by_num[ng] = true; /* two numbers: which one, from the number */
            gates[ng++] = set[k];
        } else {
            x_u[nx] = false;
            xs[nx++] = set[k];
        }
    }
    Switch *sw = ARENA_NEW(p->arena, Switch);
    return switch_analyse(p, n, gates, by_num, ng, xs, x_u, nx, sw) ? sw : NULL;
}

/* Whether the table over info's leaves comes a slot before the gated form gd would (a gated map
 * reads its gate and numbers, not what they are computed from). */
static bool table_saves_slot(Plan *p, const SopInfo *info, const Gated *gd, const MapClass *cls) {
    LeafCost tc;
    if (!leaf_cost(p, info->leaves, info->n_leaves, cls, &tc)) return false;
    const IrNode *read[3] = {gd->gate, gd->y, gd->y2};
    int t = 0;
    for (int k = 0; k < 3; k++) {
        int a = read[k] ? est_time(p, read[k], cls, true) : 0;
        if (a > t) t = a;
    }
    return tc.slot < next_slot(t, false);
}

static MapClass map_classify(Plan *p, const IrNode *n, const MapClass *cls) {
    SopInfo *info = &p->info[n->id];
    if (info->pos_free) return MAP_POS_FREE;
    if (info->real && info->real->how == REAL_GATED) /* reals.c found the gate */
        return gated_leaves(info);
    if (info->real_fn || (info->real && info->real->how != REAL_AFFINE)) { /* reals.c chose how */
        info->n_leaves = 0;
        return MAP_REAL;
    }
    const IrNode *x = unary_source(p, n, cls);
    MapClass c = MAP_MLP;
    bool fails = info->may_fail;
    if (x && !fails && !p->info[x->id].vs.unbounded && cat_capable(p, x, cls) && !vs_mixed_kinds(&info->vs)) {
        c = MAP_UNARY_CAT;
        info->cat_src = x;
    } else if (affine_op(n) && !fails) {
        bool ok = true;
        for (uint32_t j = 0; j < n->u.map.nargs; j++) {
            const ValueSet *a = &p->info[n->u.map.args[j]->id].vs;
            ok = ok && a->numeric && !vs_inexact_as_numbers(a);
        }
        if (ok && !vs_inexact_as_numbers(&info->vs)) c = MAP_AFFINE;
    }
    /* every map gets leaves: MLP maps are tabulated from them, and a free view that must
     * become categorical is tabulated from them too */
    choose_leaves(p, info, cls);
    if (c == MAP_MLP && !fails && p->switches) { /* a switch where it saves a slot (the table's, or its arguments') */
        LeafCost tc;
        int slot = 0;
        if (leaf_cost(p, info->leaves, info->n_leaves, cls, &tc)) slot = tc.slot;
        else
            for (uint32_t j = 0; j < n->u.map.nargs; j++) {
                int t = next_slot(n->u.map.args[j]->kind == IR_CONST ? 0 : est_time(p, n->u.map.args[j], cls, true), false);
                if (t > slot) slot = t;
            }
        if ((info->sw = try_switch(p, n, cls, slot))) {
            info->n_leaves = 0; /* it reads its gates and numeric leaves (Switch) */
            return MAP_SWITCH;
        }
    }
    double span = table_span(p, info->leaves, info->n_leaves);
    if (c == MAP_MLP && !fails && (grid_size(p, info->leaves, info->n_leaves) > CG_GATE_WHEN_GRID || table_rounding_prone(p, n, span))) {
        /* a large tabulation; with two varying arguments, one may gate the other instead */
        const IrNode *v[2];
        uint32_t nv = 0;
        for (uint32_t j = 0; j < n->u.map.nargs; j++) {
            const IrNode *a = n->u.map.args[j];
            if (a->kind == IR_CONST || (nv && v[nv - 1] == a)) continue;
            if (nv == 2) { nv = 3; break; }
            v[nv++] = a;
        }
        Gated gd = {0};
        for (int k = 0; nv == 2 && k < 2 && c == MAP_MLP; k++)
            if (gated_form(p, n, v[k], v[1 - k], span, &gd)) c = MAP_GATED;
        if (nv == 3 && gated_cond_form(p, n, span, &gd)) c = MAP_GATED;
        if (c == MAP_GATED && !size_rule(p, n) && table_saves_slot(p, info, &gd, cls)) {
            c = MAP_MLP; /* tables first: a slot earlier than the gate; mlp.c checks its rounding */
            p->table_over_gate = info->table_over_gate = true;
        }
        if (c == MAP_GATED) {
            info->gated = ARENA_NEW(p->arena, Gated);
            *info->gated = gd;
        }
    }
    if (c == MAP_GATED) return gated_leaves(info);
    if (c == MAP_MLP) info->may_fail = map_subtree_may_fail(p, n, info->leaves, info->n_leaves);
    return c;
}

/* One classification of the maps up to out; the output's estimated slot. What map_classify
 * derives (memos, leaves, may_fail) is reset first from may_fail0. */
static int classify_pass(Plan *p, const IrNode *out, MapClass *cls, const bool *may_fail0, bool switches) {
    p->switches = switches;
    for (size_t id = 0; id <= out->id; id++) {
        SopInfo *info = &p->info[id];
        info->est_known[0] = info->est_known[1] = info->costly_known = false;
        info->may_fail = may_fail0[id];
        info->sw = NULL;
        info->gated = info->real && info->real->how == REAL_GATED ? info->gated : NULL;
        info->table_over_gate = false;
    }
    for (size_t id = 0; id <= out->id; id++) {
        SopInfo *info = &p->info[id];
        if (info->reachable && info->node->kind == IR_MAP) {
            cls[id] = map_classify(p, info->node, cls);
            info->has_mlp_leaves = cls[id] == MAP_MLP;
        }
    }
    return est_time(p, out, cls, false);
}

void classify_maps(Plan *p, const IrNode *out, MapClass *cls) {
    bool *may_fail0 = ARENA_ARRAY(p->arena, bool, (size_t)out->id + 1);
    for (size_t id = 0; id <= out->id; id++) may_fail0[id] = p->info[id].may_fail;
    int without = classify_pass(p, out, cls, may_fail0, false);
    bool any = false;
    int with = classify_pass(p, out, cls, may_fail0, true);
    for (size_t id = 0; id <= out->id && !any; id++) any = p->info[id].sw != NULL;
    if (any && with >= without) classify_pass(p, out, cls, may_fail0, false);
}

uint32_t sop_sources(Plan *p, const IrNode *x, const IrNode **out) {
    const SopInfo *info = &p->info[x->id];
    if (info->may_fail || info->pos_free || vs_mixed_kinds(&info->vs)) { /* read as it is, checks and all */
        out[0] = x;
        return 1;
    }
    if (expands_to_position(p, x)) {
        const IrNode *pl[2];
        pos_leaves(p, info, pl);
        uint32_t n = 0;
        for (int j = 0; j < 2; j++)
            if (pl[j]) out[n++] = pl[j];
        return n;
    }
    if (x->kind == IR_MAP && info->n_leaves && !info->gated && info->has_mlp_leaves) {
        memcpy(out, info->leaves, info->n_leaves * sizeof *out);
        return info->n_leaves;
    }
    out[0] = x;
    return 1;
}

/* The s-ops a side's tuple is tabulated from: each member itself, or, when the member is
 * computed by an MLP of its own (a layer later than what it reads), what that MLP reads, so the
 * tuple comes out in the same layer as the member would (sort_bos keeps the paper's 2 layers). */
void joint_sources(Plan *p, Joint *j) {
    j->n_leaves = 0;
    for (size_t i = 0; i < j->n_members && i < CG_MAX_JOINT; i++) { /* past that, joint.c refuses */
        const IrNode *x[CG_MAX_LEAVES + 2];
        uint32_t n = sop_sources(p, j->members[i], x);
        for (uint32_t k = 0; k < n; k++) {
            bool dup = false;
            for (size_t l = 0; l < j->n_leaves; l++) dup = dup || j->leaves[l] == x[k];
            if (!dup && j->n_leaves < CG_MAX_JOINT_LEAVES) j->leaves[j->n_leaves++] = x[k];
        }
    }
}

ValueResult plan_fused_apply(Plan *p, const IrNode *n, const IrNode *const *leaves, size_t n_leaves,
                             const Value *leaf_vals, char *msg, size_t msgsize) {
    for (size_t k = 0; k < n_leaves; k++)
        if (leaves[k] == n) return (ValueResult){true, leaf_vals[k], NULL};
    if (n->kind == IR_CONST) return (ValueResult){true, n->u.constant, NULL};
    const PosTable *t = p->info[n->id].pos;
    if (t && t->val) { /* positional: its table, at the index and length the leaves give */
        int64_t i = -1, len = -1;
        for (size_t k = 0; k < n_leaves; k++) {
            if (leaves[k]->kind == IR_INDICES) i = leaf_vals[k].as.i;
            if (leaves[k]->kind == IR_LENGTH) len = leaf_vals[k].as.i;
        }
        if (t->dep == POS_N || t->dep == POS_CONST) i = i < 0 ? 0 : i;
        if ((t->dep == POS_I || t->dep == POS_CONST) && len < 0) len = i + 1;
        if (i >= 0 && len >= 0) {
            Value v;
            if (pos_lookup(t, i, len, p->max_len, &v)) return (ValueResult){true, v, NULL};
            snprintf(msg, msgsize, "raises at position %lld of length %lld", (long long)i, (long long)len);
            return (ValueResult){false, value_int(0), msg};
        }
    }
    if (n->kind != IR_MAP) {
        /* classify() guarantees this cannot happen; if it did, stop rather than tabulate garbage */
        diag_error(p->diags, n->loc, "internal compiler error: fused map reaches a non-map s-op");
        snprintf(msg, msgsize, "internal: fused map reaches a non-map s-op");
        return (ValueResult){false, value_int(0), msg};
    }
    Value args[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        ValueResult r = plan_fused_apply(p, n->u.map.args[j], leaves, n_leaves, leaf_vals, msg, msgsize);
        if (!r.ok) return r;
        args[j] = r.value;
    }
    return ir_map_apply(n, args, p->arena, msg, msgsize);
}





