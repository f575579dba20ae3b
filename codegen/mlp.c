/* Tabulated maps -> the hidden units of a ReLU MLP, exactly.
 *
 * An MlpOp (internal.h) computes f(leaves) from a few scalar inputs s_j (GridArg: a linear view
 * of the residual and the ascending values it takes). The inputs are combined into one
 * projection
 *     p = sum_j c_j (s_j - min_j) / gap_j,   c_1 = 1,  c_{j+1} = c_j (range_j / gap_j + 1),
 * which orders the grid of input values lexicographically with gaps >= 1. Along p, f is
 * piecewise constant; each change between consecutive grid points a < b is one exact step
 *     step(p) = ReLU((p - p_a)/w) - ReLU((p - p_b)/w),   w = p_b - p_a,
 * (0 at or below p_a, 1 at or above p_b): two hidden units. Points no input can produce (an
 * index at or past the length, a combination of width terms whose sum exceeds N) are don't-cares.
 *
 * Gating. When one input is an exact one-hot of the embedding (indices or tokens) and there are
 * others, the grid is cut by that input's value g: each slice is tabulated along the projection
 * of the other inputs, and its units are switched off unless e_g = 1:
 *     ReLU((p - p_a)/w + M e_g - M),   M = p_max - p_min + 1 >= every (p - p_a)/w,
 * plus one unit ReLU(e_g) carrying the slice's first value. A function of (index, length) then
 * costs N + 2 x (its changes along the length for each index), each unit reading two residual
 * dims, instead of a projection that reads every index dim.
 *
 * Exactness. Values that share one scalar (1, 1.0 and True through a numerical view) must give
 * the same output at every point; otherwise the map is refused, since the MLP cannot tell them
 * apart. Distinct scalars closer than 1e-9 of their magnitude are refused too. Only approximate
 * value sets (ValueSet.approx) merge rounding twins. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

size_t hidden_add(Plan *p, HiddenBuf *hb, LinView in, double scale, double bias) {
    if (hb->n == hb->cap) {
        size_t cap = hb->cap ? hb->cap * 2 : 64;
        hb->in = arena_grow(p->arena, hb->in, hb->n, cap, sizeof *hb->in);
        hb->scale = arena_grow(p->arena, hb->scale, hb->n, cap, sizeof *hb->scale);
        hb->bias = arena_grow(p->arena, hb->bias, hb->n, cap, sizeof *hb->bias);
        hb->out_dim = arena_grow(p->arena, hb->out_dim, hb->n, cap, sizeof *hb->out_dim);
        hb->out_coef = arena_grow(p->arena, hb->out_coef, hb->n, cap, sizeof *hb->out_coef);
        hb->out_dim2 = arena_grow(p->arena, hb->out_dim2, hb->n, cap, sizeof *hb->out_dim2);
        hb->out_coef2 = arena_grow(p->arena, hb->out_coef2, hb->n, cap, sizeof *hb->out_coef2);
        hb->gate = arena_grow(p->arena, hb->gate, hb->n, cap, sizeof *hb->gate);
        hb->gate_bias = arena_grow(p->arena, hb->gate_bias, hb->n, cap, sizeof *hb->gate_bias);
        hb->cap = cap;
    }
    size_t i = hb->n++;
    hb->gate[i] = lv_empty();
    hb->gate_bias[i] = 1;
    hb->in[i] = in;
    hb->scale[i] = scale;
    hb->bias[i] = bias;
    hb->out_coef[i] = hb->out_coef2[i] = 0;
    hb->out_dim[i] = hb->out_dim2[i] = 0;
    return i;
}

void hidden_gate(HiddenBuf *hb, size_t h, LinView gate, double bias) {
    hb->gate[h] = gate;
    hb->gate_bias[h] = bias;
    hb->gated = true;
}

/* The output at one grid point: an index into out_vs (categorical), a number, or a raise. */
typedef struct GridOut {
    bool ok;
    size_t index;
    double number;
    Value value;
} GridOut;

/* One input's distinct scalars, each with the group of its values (indices into GridArg order)
 * that share it. */
typedef struct Axis {
    size_t n;          /* distinct scalars */
    double *uniq;
    size_t *start, *count;
    double min, gap, coef;
} Axis;

typedef struct Tab {
    Plan *p;
    const MlpOp *op;
    Axis ax[CG_MAX_GRID_ARGS];
    int gate;          /* the gating input, or -1 */
    double M;          /* gating constant */
    LinView proj;      /* the projection of the non-gate inputs, centred */
    int pos_i, pos_n;  /* leaves holding indices / length (for reachability), or -1 */
    int view_leaf;     /* a leaf that is an injective free view of indices (i + 1), or -1 */
    const int32_t *view_index; /* its member m holds at index view_index[m] */
    const int32_t *count_at[CG_MAX_LEAVES]; /* per leaf: its keys per index (agg_count_by_index) */
    size_t *allow[CG_MAX_GRID_ARGS];        /* per input: its points that occur in the current slice */
    double total;                           /* the points the slices enumerate */
    size_t order[CG_MAX_GRID_ARGS];         /* the inputs from the fastest along the projection */
    size_t n_allow[CG_MAX_GRID_ARGS];
} Tab;

/* A located error about op's s-op: "<description> <message>". */
static bool refuse(Plan *p, const MlpOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool refuse(Plan *p, const MlpOp *op, const char *fmt, ...) {
    char d[128], msg[400];
    vs_describe(op->node, d, sizeof d);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(p->diags, op->node->loc, "%s %s", d, msg);
    return false;
}

static bool build_axis(Tab *t, size_t j, bool approx) {
    const GridArg *g = &t->op->grid[j];
    Axis *a = &t->ax[j];
    a->uniq = ARENA_ARRAY(t->p->arena, double, g->n + 1);
    a->start = ARENA_ARRAY(t->p->arena, size_t, g->n + 1);
    a->count = ARENA_ARRAY(t->p->arena, size_t, g->n + 1);
    a->n = 0;
    for (size_t i = 0; i < g->n; i++) {
        double s = g->scalar[i];
        if (a->n && s < a->uniq[a->n - 1]) {
            diag_error(t->p->diags, t->op->node->loc, "internal compiler error: unsorted MLP input values");
            return false;
        }
        if (a->n && (s == a->uniq[a->n - 1] || (approx && scalar_twins(s, a->uniq[a->n - 1])))) {
            a->count[a->n - 1]++;
            continue;
        }
        a->uniq[a->n] = s;
        a->start[a->n] = i;
        a->count[a->n++] = 1;
    }
    if (a->n == 0) return true;
    a->min = a->uniq[0];
    a->gap = INFINITY;
    for (size_t i = 1; i < a->n; i++)
        if (a->uniq[i] - a->uniq[i - 1] < a->gap) a->gap = a->uniq[i] - a->uniq[i - 1];
    if (!isfinite(a->gap)) a->gap = 1;
    double mag = fmax(fabs(a->min), fabs(a->uniq[a->n - 1]));
    if (a->gap < 1e-9 * mag) {
        return refuse(t->p, t->op, "reads values %.17g apart at magnitude %.3g, too close to tell apart exactly in float64",
                      a->gap, mag);
    }
    return true;
}

/* The result at a point, from the leaves' values (before the output encoding). */
static ValueResult evaluate(Plan *p, const MlpOp *op, const Value *vals, char *msg, size_t msgsize) {
    switch (op->fn) {
    case MLP_FN_MAP: return plan_fused_apply(p, op->node, op->leaves, op->n_leaves, vals, msg, msgsize);
    case MLP_FN_AGG_KIND: { /* none: the default's kind; one: the source's; several: a mean */
        int64_t w = vals[0].as.i;
        const IrNode *n = op->node;
        if (w == 0) return (ValueResult){true, n->u.aggregate.default_value, NULL};
        const ValueSet *src = &p->info[n->u.aggregate.sop->id].vs;
        return (ValueResult){true, w == 1 && src->n ? src->vals[0] : value_float(0), NULL};
    }
    case MLP_FN_JOINT: {
        size_t t;
        if (joint_tuple_index(p, op->joint, vals, &t)) return (ValueResult){true, value_int((int64_t)t), NULL};
        snprintf(msg, msgsize, "a value outside its set");
        return (ValueResult){false, value_int(0), msg};
    }
    case MLP_FN_TABLE: { /* leaves (indices, length), or (length) alone for a table of the length */
        Value v;
        int64_t i = op->n_leaves == 1 ? 0 : vals[0].as.i, n = vals[op->n_leaves == 1 ? 0 : 1].as.i;
        if (pos_lookup(op->table, i, n, p->max_len, &v)) return (ValueResult){true, v, NULL};
        snprintf(msg, msgsize, "raises at this position");
        return (ValueResult){false, value_int(0), msg};
    }
    default: return (ValueResult){true, vals[0], NULL};
    }
}

/* Whether a map's result at a grid point can occur: within the s-op's value set. */
static bool map_point_possible(Plan *p, const MlpOp *op, ValueResult r) {
    const ValueSet *vs = &p->info[op->node->id].vs;
    return !r.ok || vs->unbounded || vs_contains(vs, r.value, NULL);
}

/* Whether f is the same at every member of a kind-axis leaf's group that has the kind taken
 * (twin[l], the member taken): a number and a kind cannot tell -0.0 from 0.0. */
static bool kind_twins_agree(const Tab *t, const size_t *idx, const size_t *twin, const Value *vals, ValueResult r) {
    const MlpOp *op = t->op;
    Value v[CG_MAX_LEAVES];
    memcpy(v, vals, op->n_leaves * sizeof *v);
    for (size_t l = 0; l < op->n_leaves; l++) {
        const LeafMap *lm = &op->leaf[l];
        if (twin[l] == SIZE_MAX) continue;
        const Axis *a = &t->ax[lm->arg];
        size_t s = a->start[idx[lm->arg]], end = s + a->count[idx[lm->arg]];
        for (size_t m = s; m < end; m++) {
            if (m == twin[l] || lm->vs->vals[m].kind != lm->vs->vals[twin[l]].kind) continue;
            v[l] = lm->vs->vals[m];
            char msg[160];
            ValueResult s2 = evaluate(t->p, op, v, msg, sizeof msg);
            if (s2.ok != r.ok || (r.ok && atom_order(s2.value, r.value) != 0)) return false;
        }
        v[l] = vals[l];
    }
    return true;
}

/* Whether a rational 0 of the combination m is exactly 0 in the reference too: k * (a / w) for
 * a = 0, or k * (a / w) - k * (b / w) for a = b (one count gives one double, and equal doubles
 * times one k are equal). Not with other coefficients: 2 * (3 / 5) - 3 * (2 / 5) is -2.2e-16
 * in float64 (outsider out28-001, -003), nor with a constant or three or more means. */
static bool zero_is_exact(const LinMean *m) {
    if (!m) return true; /* not a combination: one mean, 0 only for a count of 0 */
    if (m->c0 != 0 || m->n > 2) return false;
    return m->n < 2 || m->coef[0] == -m->coef[1];
}

/* Whether f at a point of approximate leaves (combinations of means kept as exact rationals,
 * ValueSet.approx) is what it is at the doubles the reference may compute instead: those lie
 * within a few ulps, so f must not change there (numbers may, by rounding twins), and a rational
 * 0 is perturbed too unless it is exactly 0 in the reference (zero_is_exact). */
static bool rounding_agrees(const Tab *t, const Value *vals, ValueResult r) {
    const MlpOp *op = t->op;
    Value v[CG_MAX_LEAVES];
    memcpy(v, vals, op->n_leaves * sizeof *v);
    for (size_t l = 0; l < op->n_leaves; l++) {
        const LeafMap *lm = &op->leaf[l];
        if (lm->width || !lm->vs || !lm->vs->approx || vals[l].kind == VAL_STR || vals[l].kind == VAL_BOOL) continue;
        const LinMean *lmean = t->p->info[lm->node->id].linmean;
        if (value_as_double(vals[l]) == 0 && zero_is_exact(lmean)) continue;
        for (int dir = -1; dir <= 1; dir += 2) {
            double x = value_as_double(vals[l]);
            for (int k = 0; k < 8; k++) x = nextafter(x, dir * INFINITY);
            v[l] = value_float(x);
            char msg[160];
            ValueResult s = evaluate(t->p, op, v, msg, sizeof msg);
            bool numbers = s.ok && r.ok && value_is_number(s.value) && value_is_number(r.value) &&
                           s.value.kind != VAL_BOOL && r.value.kind != VAL_BOOL;
            bool same = s.ok == r.ok &&
                        (!r.ok || atom_order(s.value, r.value) == 0 ||
                         (numbers && scalar_twins(value_as_double(s.value), value_as_double(r.value))));
            if (!same) return false;
        }
        v[l] = vals[l];
    }
    return true;
}

/* One combination of group members at a grid point: skipped where those leaf values never occur
 * together; else its output, which must agree with the point's (*out, once *reachable). False
 * where the compiler refuses the map. */
static bool combination_output(Tab *t, const size_t *idx, const size_t *pick, const size_t *twin, const Value *vals,
                               GridOut *out, bool *reachable) {
    const MlpOp *op = t->op;
    Plan *p = t->p;
    bool possible = !(t->pos_i >= 0 && t->pos_n >= 0 && vals[t->pos_i].as.i >= vals[t->pos_n].as.i);
    if (t->view_leaf >= 0 && t->pos_n >= 0) { /* the index behind a view of it, against the length */
        const LeafMap *lm = &op->leaf[t->view_leaf];
        size_t m = t->ax[lm->arg].start[idx[lm->arg]] + pick[t->view_leaf];
        if (t->view_index[m] >= vals[t->pos_n].as.i) possible = false;
    }
    for (size_t l = 0; l < op->n_leaves && possible && t->pos_i >= 0; l++) /* an aggregate at this index */
        if (t->count_at[l] &&
            !agg_value_possible(p, op->leaf[l].node, vals[l], t->count_at[l][vals[t->pos_i].as.i]))
            possible = false;
    if (!possible) return true;
    char msg[160];
    ValueResult r = evaluate(p, op, vals, msg, sizeof msg);
    if (!kind_twins_agree(t, idx, twin, vals, r))
        return refuse(p, op, "depends on a distinction its inputs' numerical encoding cannot make: two values "
                      "equal as numbers and of one kind (-0.0 and 0.0) give different results");
    if (!rounding_agrees(t, vals, r)) {
        char v[96];
        value_format(r.value, v, sizeof v);
        return refuse(p, op, "is %s or not, depending on how the reference rounds the means it combines (a "
                      "threshold their exact value meets): lower --max-len, or compare with a margin", v);
    }
    if (r.ok && op->kind_of && r.value.kind == VAL_STR) r.ok = false; /* a string: no kind dim is hot */
    if (r.ok && op->kind_of) r.value = value_int(r.value.kind);
    GridOut g = {r.ok, 0, 0, r.ok ? r.value : value_int(0)};
    /* a positional s-op's table is exact and never raises: a point where it raises or leaves
     * its value set combines leaf values that never occur together */
    const PosTable *pt = p->info[op->node->id].pos;
    if (op->fn == MLP_FN_MAP && !op->kind_of && pt && pt->val && !pt->any_fail &&
        (!r.ok || !vs_contains(&p->info[op->node->id].vs, r.value, NULL)))
        return true;
    /* The value set is sound and often finer than the grid (it knows which values meet at
     * which index): a point whose result lies outside it combines leaf values that never
     * occur together. */
    if (op->fn == MLP_FN_MAP && !op->kind_of && !map_point_possible(p, op, r)) return true;
    if (r.ok && op->out_cat && !vs_contains(op->out_vs, r.value, &g.index))
        return true; /* a kind the s-op never has here: those leaf values never meet */
    if (r.ok && !op->out_cat) {
        if (!value_is_number(r.value))
            return refuse(p, op, "has a non-numeric value but a numerical encoding (internal compiler error)");
        g.number = value_as_double(r.value);
    }
    if (!r.ok && !op->out_cat)
        return refuse(p, op, "can raise but was given a numerical encoding (internal compiler error)");
    if (!*reachable) {
        *out = g;
        *reachable = true;
    } else if (out->ok != g.ok || (g.ok && atom_order(out->value, g.value) != 0 &&
                                   !(op->out_vs && op->out_vs->approx && out->index == g.index))) {
        char a[96], b[96];
        value_format(out->value, a, sizeof a);
        value_format(g.value, b, sizeof b);
        if (!out->ok) snprintf(a, sizeof a, "an error");
        if (!g.ok) snprintf(b, sizeof b, "an error");
        return refuse(p, op,
                      "depends on a distinction its inputs' numerical encoding cannot make: it is %s and %s for "
                      "arguments that are equal as numbers (1 and 1.0, or -0.0 and 0.0)",
                      a, b);
    }
    return true;
}

/* f at the grid point given by each input's distinct-scalar index; every value of a shared
 * scalar is tried (or, with a kind axis, the one of that kind), and they must agree. */
static bool point_output(Tab *t, const size_t *idx, GridOut *out, bool *reachable) {
    const MlpOp *op = t->op;
    Value vals[CG_MAX_LEAVES];
    size_t pick[CG_MAX_LEAVES] = {0}; /* member of the group, for direct leaves */
    size_t twin[CG_MAX_LEAVES];       /* kind-axis leaves: the member taken, whose same-kind twins must agree */
    for (size_t l = 0; l < CG_MAX_LEAVES; l++) twin[l] = SIZE_MAX;
    *reachable = true;
    for (size_t l = 0; l < op->n_leaves; l++) {
        const LeafMap *lm = &op->leaf[l];
        if (lm->width) {
            double w = 0;
            for (uint32_t i = 0; i < lm->n_u; i++) w += lm->coef[i] * (lm->base[i] + (double)idx[lm->args[i]]);
            vals[l] = value_int((int64_t)llround(w));
            /* decomposed widths: combinations of term widths that no input produces */
            if (lm->vs && !vs_contains(lm->vs, vals[l], NULL) && !(lm->vs_zero && w == 0)) *reachable = false;
        } else if (lm->has_kind_axis && !lm->vs) { /* a kind alone: 1 of it (0 would divide by zero) */
            vals[l] = lm->kinds[idx[lm->kind_arg]] == VAL_FLOAT ? value_float(1)
                      : lm->kinds[idx[lm->kind_arg]] == VAL_BOOL ? value_bool(true) : value_int(1);
        } else if (lm->has_kind_axis) { /* the member of this number with this kind */
            const Axis *a = &t->ax[lm->arg];
            size_t s = a->start[idx[lm->arg]], k = 0;
            while (k < a->count[idx[lm->arg]] && lm->vs->vals[s + k].kind != lm->kinds[idx[lm->kind_arg]]) k++;
            /* a string has no kind in the block (all of it 0, which reads as the first kind) */
            if (k == a->count[idx[lm->arg]] && a->count[idx[lm->arg]] == 1 && lm->vs->vals[s].kind == VAL_STR &&
                idx[lm->kind_arg] == 0)
                k = 0;
            if (k == a->count[idx[lm->arg]]) *reachable = false;
            else vals[l] = lm->vs->vals[s + k];
            twin[l] = k < a->count[idx[lm->arg]] ? s + k : SIZE_MAX; /* -0.0 and 0.0: one number, one kind */
        }
    }
    if (!*reachable) return true;
    /* every combination of group members (values equal as numbers) that can occur must give the
     * same output; a combination that cannot occur (an int 0 default where a key is always
     * selected, beside its -0.0) is skipped, and the point is reachable if any can */
    *reachable = false;
    for (;;) {
        for (size_t l = 0; l < op->n_leaves; l++) {
            const LeafMap *lm = &op->leaf[l];
            if (!lm->width && !lm->has_kind_axis) vals[l] = lm->vs->vals[t->ax[lm->arg].start[idx[lm->arg]] + pick[l]];
        }
        if (!combination_output(t, idx, pick, twin, vals, out, reachable)) return false;
        /* next combination of group members */
        size_t l = 0;
        for (; l < op->n_leaves; l++) {
            const LeafMap *lm = &op->leaf[l];
            if (lm->width || lm->has_kind_axis) continue;
            if (++pick[l] < t->ax[lm->arg].count[idx[lm->arg]]) break;
            pick[l] = 0;
        }
        if (l == op->n_leaves) return true;
    }
}

static bool same_out(const GridOut *a, const GridOut *b, bool cat) {
    if (a->ok != b->ok) return false;
    if (!a->ok) return true;
    return cat ? a->index == b->index : a->number == b->number;
}

/* What op writes beside its number v (MlpOp.beside). */
static double beside_value(double v) { return v * v; }

/* Output weights of a unit: the change a -> b with sign +1 (first unit of a step) or -1. */
static void out_change(HiddenBuf *hb, size_t unit, const MlpOp *op, const GridOut *a, const GridOut *b, double sign) {
    if (op->out_cat) {
        if (b->ok) { hb->out_dim[unit] = op->out_dim + (uint32_t)b->index; hb->out_coef[unit] = sign; }
        if (a->ok) { hb->out_dim2[unit] = op->out_dim + (uint32_t)a->index; hb->out_coef2[unit] = -sign; }
    } else {
        hb->out_dim[unit] = op->out_dim;
        hb->out_coef[unit] = sign * ((b->ok ? b->number : 0) - (a->ok ? a->number : 0));
        if (op->beside) { /* the square's steps on the same units */
            hb->out_dim2[unit] = op->beside_dim;
            hb->out_coef2[unit] = sign * ((b->ok ? beside_value(b->number) : 0) - (a->ok ? beside_value(a->number) : 0));
        }
    }
}

/* The slice of the grid where the gate takes value g (or the whole grid when there is none):
 * its points in ascending projection, and the units of its changes. */
/* For a leaf that is a free view of indices taking each value at one index only (i + 1, 2 * i):
 * the index of each member of its value set; NULL otherwise. */
static const int32_t *view_indices(Plan *p, const LeafMap *lm) {
    const SopInfo *x = &p->info[lm->node->id];
    if (!x->pos_free || !x->pos || !x->pos->val || x->pos->dep != POS_I) return NULL;
    int32_t *at = ARENA_ARRAY(p->arena, int32_t, lm->vs->n ? lm->vs->n : 1);
    for (size_t m = 0; m < lm->vs->n; m++) at[m] = -1;
    for (size_t i = 0; i < p->max_len; i++) {
        size_t m;
        if (!vs_contains(lm->vs, x->pos->val[pos_at(i + 1, i)], &m)) return NULL;
        if (at[m] >= 0) return NULL; /* two indices share a value */
        at[m] = (int32_t)i;
    }
    for (size_t m = 0; m < lm->vs->n; m++)
        if (at[m] < 0) return NULL;
    return at;
}

/* Whether point u of input j can occur at index i: every aggregate leaf read through j, with a
 * fixed number of keys at each index, has a member there that is a mean of that many values. */
static bool point_at_index(const Tab *t, size_t j, size_t u, int64_t i) {
    for (size_t l = 0; l < t->op->n_leaves; l++) {
        const LeafMap *lm = &t->op->leaf[l];
        if (!t->count_at[l] || lm->arg != j) continue;
        bool any = false;
        for (size_t k = 0; k < t->ax[j].count[u] && !any; k++)
            any = agg_value_possible(t->p, lm->node, lm->vs->vals[t->ax[j].start[u] + k], t->count_at[l][i]);
        if (!any) return false;
    }
    return true;
}

/* The points of each non-gate input that can occur in gate slice g (t->allow): all of them,
 * except when the gate is indices and an aggregate's number of keys is fixed per index. The
 * number of grid points of the slice. */
static double slice_points(Tab *t, size_t g) {
    const MlpOp *op = t->op;
    bool by_index = t->gate >= 0 && t->pos_i >= 0 && !op->leaf[t->pos_i].width && op->leaf[t->pos_i].arg == (size_t)t->gate;
    int64_t i = by_index ? op->leaf[t->pos_i].vs->vals[t->ax[t->gate].start[g]].as.i : 0;
    double points = 1;
    for (size_t j = 0; j < op->n_grid; j++) {
        if ((int)j == t->gate) continue;
        t->n_allow[j] = 0;
        for (size_t u = 0; u < t->ax[j].n; u++)
            if (!by_index || i < 0 || (size_t)i >= t->p->max_len || point_at_index(t, j, u, i)) t->allow[j][t->n_allow[j]++] = u;
        points *= (double)t->n_allow[j];
    }
    return points;
}

static bool tabulate_slice(Tab *t, size_t g, HiddenBuf *hb, double *b2) {
    const MlpOp *op = t->op;
    Plan *p = t->p;
    size_t na = op->n_grid, idx[CG_MAX_GRID_ARGS] = {0}, at[CG_MAX_GRID_ARGS] = {0};
    LinView gate_view = t->gate >= 0 ? op->grid[t->gate].onehot[t->ax[t->gate].start[g]] : lv_empty();
    if (t->gate >= 0) idx[t->gate] = g;
    if (slice_points(t, g) == 0) return true;
    for (size_t j = 0; j < na; j++)
        if ((int)j != t->gate) idx[j] = t->allow[j][0];
    GridOut prev = {false, 0, 0, {0}};
    double prev_p = 0;
    bool started = false;
    for (;;) {
        double pk = 0;
        for (size_t j = 0; j < na; j++)
            if ((int)j != t->gate) pk += t->ax[j].coef * (t->ax[j].uniq[idx[j]] - t->ax[j].min) / t->ax[j].gap;
        GridOut cur;
        bool reachable;
        if (!point_output(t, idx, &cur, &reachable)) return false;
        if (reachable) {
            if (!started) {
                if (cur.ok && t->gate < 0) { /* the first value everywhere: a bias */
                    if (op->out_cat) b2[op->out_dim + cur.index] += 1;
                    else b2[op->out_dim] += cur.number;
                    if (!op->out_cat && op->beside) b2[op->beside_dim] += beside_value(cur.number);
                } else if (cur.ok) { /* the slice's first value, switched by the gate */
                    GridOut none = {false, 0, 0, {0}};
                    out_change(hb, hidden_add(p, hb, gate_view, 1, 0), op, &none, &cur, +1);
                }
                started = true;
            } else if (!same_out(&prev, &cur, op->out_cat)) {
                double w = pk - prev_p;
                LinView in = t->proj;
                double bias_off = 0;
                if (t->gate >= 0) { /* (p - p_a)/w + M e_g - M, as view + bias */
                    in = lv_combine(p->arena, 1.0 / w, t->proj, t->M, gate_view);
                    bias_off = -t->M;
                }
                /* a ramp over the middle half of the step, flat a quarter of it around each point:
                 * inputs off by less than that (upstream rounding) give the exact output */
                double scale = t->gate >= 0 ? 2 : 2.0 / w, at = 2 * (-prev_p / w + bias_off);
                size_t h1 = hidden_add(p, hb, in, scale, at - 0.5);
                size_t h2 = hidden_add(p, hb, in, scale, at - 1.5);
                out_change(hb, h1, op, &prev, &cur, +1);
                out_change(hb, h2, op, &prev, &cur, -1);
            }
            prev = cur;
            prev_p = pk;
        }
        if (hb->n > hb->stop) return true; /* over a limit: emit.c reports it */
        size_t q = 0; /* odometer over the non-gate inputs' points that occur, in t->order */
        for (; q < na; q++) {
            size_t j = t->order[q];
            if ((int)j == t->gate) continue;
            if (++at[j] < t->n_allow[j]) {
                idx[j] = t->allow[j][at[j]];
                break;
            }
            at[j] = 0;
            idx[j] = t->allow[j][0];
        }
        if (q == na) return true;
    }
}

/* Whether the table's float64 rounding stays far below what its output must tell apart.
 * Every unit of a step reads p = sum_j c_j (s_j - min_j) / gap_j, up to p_max = mult, where the
 * steps are at least 1 apart. Rounding makes p off by dp: the inputs' own errors (a residual
 * number computed by attention or an MLP, a few ulps of its magnitude per key: u (N + 8) |s_j|
 * is taken for it) scaled by c_j / gap_j, and the projection's sum. A step ramps over the middle
 * half between its points, so dp below 1/4 passes nothing on; each active unit's pre-activation,
 * as large as 2 p_max, adds its own rounding. The output's error must stay below 1/16 of its
 * one-hot tolerance or of the gap between its numbers; a projection over too fine a grid (mult
 * near 1e12) fails it. */
static bool table_rounding_ok(const Tab *t, const HiddenBuf *hb, size_t first, double mult) {
    const MlpOp *op = t->op;
    const double u = 0x1p-53, N = (double)t->p->max_len + 1;
    double dp = 0, proj_mag = 0;
    for (size_t j = 0; j < op->n_grid; j++) {
        if ((int)j == t->gate || t->ax[j].n == 0) continue;
        const Axis *a = &t->ax[j];
        double mag = fmax(fabs(a->min), fabs(a->uniq[a->n - 1])), scale = a->coef / a->gap;
        if (!op->grid[j].onehot) dp += scale * u * (N + 8) * mag; /* one-hot inputs are exact */
        dp += scale * op->grid[j].dev;                              /* a view off its values by design */
        proj_mag += scale * (mag + fabs(a->min)) * (double)(op->grid[j].view.n + 2);
    }
    dp += u * proj_mag;
    /* per output dim (a one-hot's units spread over its dims): the sum of |df| and the count */
    size_t n_out = op->out_cat && op->out_vs ? op->out_vs->n : 1;
    double *sum_df = calloc(n_out, sizeof *sum_df), *nnz = calloc(n_out, sizeof *nnz);
    if (!sum_df || !nnz) abort();
    for (size_t h = first; h < hb->n; h++)
        for (int k = 0; k < 2; k++) {
            double c = fabs(k ? hb->out_coef2[h] : hb->out_coef[h]);
            uint32_t d = k ? hb->out_dim2[h] : hb->out_dim[h];
            if (c == 0 || d < op->out_dim || d - op->out_dim >= n_out) continue;
            sum_df[d - op->out_dim] += c;
            nnz[d - op->out_dim]++;
        }
    double pre = 8 * u * (double)(t->proj.n + 4) * (mult + 1); /* one unit's pre-activation */
    double err = dp < 0.25 ? 0 : INFINITY;
    for (size_t d = 0; d < n_out; d++)
        err = fmax(err, (pre + 2 * (nnz[d] + 2) * u * (mult + 1)) * sum_df[d]);
    free(sum_df);
    free(nnz);
    /* A number within a quarter of the gap decodes to the right value (the output's margin);
     * past half of it, to a wrong one, silently. A one-hot entry off by more than its tolerance
     * makes the runtime raise instead, and the bound above is loose for one-hots (it adds the
     * rounding of every active unit with one sign): those are left to the runtime's check. */
    double limit = fmin(vs_resolved_gap(op->out_vs, true, NULL), vs_output_resolved_gap(t->p, op->node, true)) / 4;
    if (!op->out_cat && !(err <= limit) && isfinite(limit)) {
        t->p->table_refused = op->node->id + 1; /* the size rule may compute it otherwise (codegen.c) */
        return refuse(t->p, op,
                      "needs a table over %.3g grid points whose float64 rounding (up to %.3g) is not below "
                      "a quarter of the gap between its values (%.3g): lower --max-len or --vocab, or compute it "
                      "from fewer or coarser inputs", mult, err, limit);
    }
    return true;
}

/* sum_v e_v (a_v y + b_v): for each gate value the pair
 *   ReLU(a_v y + b_v + M e_v - M) - ReLU(-(a_v y + b_v) + M e_v - M),
 * which is a_v y + b_v when e_v = 1 and 0 when e_v = 0, since |a_v y + b_v| <= bound < M. A conditional
 * between two numbers reads y2 instead of y for the gate values that take its other branch. */
static bool gated_units(Plan *p, const MlpOp *op, HiddenBuf *hb) {
    const Gated *gd = op->gated;
    double M = 2 * gd->bound + 1;
    for (size_t v = 0; v < gd->n; v++) {
        if (gd->a[v] == 0 && gd->b[v] == 0) continue;
        LinView y = gd->y2 && gd->on_y2[v] ? op->y2_view : op->y_view;
        for (int sign = 1; sign >= -1; sign -= 2) {
            LinView in = lv_combine(p->arena, sign * gd->a[v], y, M, op->gate_views[v]);
            size_t h = hidden_add(p, hb, in, 1, sign * gd->b[v] - M);
            hb->out_dim[h] = op->out_dim;
            hb->out_coef[h] = sign;
            if (op->split) { /* the same unit again, into t+ and t- (MlpOp.split) */
                size_t s = hidden_add(p, hb, in, 1, sign * gd->b[v] - M);
                hb->out_dim[s] = op->split_dim[sign < 0];
                hb->out_coef[s] = 1;
                hb->out_dim2[s] = op->split_dim[sign > 0];
                hb->out_coef2[s] = op->split_k;
            }
        }
    }
    return true;
}

/* A continuous piecewise-linear function through knots (kx, ky) of the view x:
 *   f(x) = ky_0 + sum_i (s_i - s_{i-1}) ReLU(x - kx_i),  s_i the slope after knot i (s_{-1} = 0),
 * one unit per knot but the last (x stays within the knots). */
static void pwl_units(Plan *p, HiddenBuf *hb, LinView x, const double *kx, const double *ky, size_t n, double scale,
                      uint32_t out_dim, double *b2) {
    b2[out_dim] += scale * ky[0];
    double prev = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double s = (ky[i + 1] - ky[i]) / (kx[i + 1] - kx[i]);
        if (s != prev) {
            size_t h = hidden_add(p, hb, x, 1, -kx[i]);
            hb->out_dim[h] = out_dim;
            hb->out_coef[h] = scale * (s - prev);
        }
        prev = s;
    }
}

/* A piecewise function of x: pieces linear (pwl_units) or, in a gated MLP, quadratic:
 *   f(x) = ky_0 + sum_i dS_i ReLU(x - kx_i) + dC_i ReLU(x - kx_i) (x - kx_i),
 * dS_i and dC_i the changes of slope and curvature at knot i (realfn_piece). Its terms grow
 * with the range past each knot and cancel: realfn.c bounds their rounding (sum_mag). */
static void fn_units(Plan *p, HiddenBuf *hb, LinView x, const RealFn *f, double scale, uint32_t out_dim, double *b2) {
    RealFn mirror;
    if (f->from_right) { /* f(x) = g(-x) */
        mirror = realfn_mirror(p, f);
        f = &mirror;
        x = lv_combine(p->arena, -1, x, 0, lv_empty());
    }
    if (!f->quadratic) {
        pwl_units(p, hb, x, f->kx, f->ky, f->n_knots, scale, out_dim, b2);
        return;
    }
    b2[out_dim] += scale * f->ky[0];
    double end_slope = 0, curv = 0;
    for (size_t i = 0; i + 1 < f->n_knots; i++) {
        RealPiece q = realfn_piece(f, i);
        if (q.slope != end_slope) {
            size_t h = hidden_add(p, hb, x, 1, -f->kx[i]);
            hb->out_dim[h] = out_dim;
            hb->out_coef[h] = scale * (q.slope - end_slope);
        }
        if (q.curv != curv) {
            size_t h = hidden_add(p, hb, x, 1, -f->kx[i]);
            hidden_gate(hb, h, x, -f->kx[i]);
            hb->out_dim[h] = out_dim;
            hb->out_coef[h] = scale * (q.curv - curv);
        }
        end_slope = q.slope + 2 * q.curv * (f->kx[i + 1] - f->kx[i]);
        curv = q.curv;
    }
}

/* A function of a real with finitely many values (a comparison, a round): its first value as a
 * bias and, across each jump, a step ramp from one value to the next on the one-hot block. */
static bool staircase_units(Plan *p, const MlpOp *op, HiddenBuf *hb, double *b2) {
    const RealFn *f = op->pwl;
    const SopInfo *info = &p->info[op->node->id];
    const RealInfo *r = info->real_fn ? info->real_fn : info->real;
    size_t prev = 0;
    for (size_t i = 0; i < f->n_knots; i++) {
        char msg[160];
        ValueResult v = realfn_eval(p, op->node, r->arg, f->kx[i], msg, sizeof msg);
        if (v.ok && op->kind_of) v.value = value_int(v.value.kind); /* the kind block of a real function */
        size_t at;
        if (!v.ok || !vs_contains(op->out_vs, v.value, &at))
            return refuse(p, op, "has a value outside its set at %g (internal compiler error)", f->kx[i]);
        if (i == 0) b2[op->out_dim + at] += 1;
        else if (at != prev) { /* a ramp from knot i-1 to knot i: across a jump */
            double w = f->kx[i] - f->kx[i - 1];
            size_t h1 = hidden_add(p, hb, op->x_view, 1 / w, -f->kx[i - 1] / w);
            size_t h2 = hidden_add(p, hb, op->x_view, 1 / w, -f->kx[i] / w);
            hb->out_dim[h1] = op->out_dim + (uint32_t)at;
            hb->out_coef[h1] = 1;
            hb->out_dim2[h1] = op->out_dim + (uint32_t)prev;
            hb->out_coef2[h1] = -1;
            hb->out_dim[h2] = op->out_dim + (uint32_t)at;
            hb->out_coef[h2] = -1;
            hb->out_dim2[h2] = op->out_dim + (uint32_t)prev;
            hb->out_coef2[h2] = 1;
        }
        prev = at;
    }
    return true;
}

/* x * y = ((s x + y / s)^2 - (s x - y / s)^2) / 4, each square a chord interpolation with knots h
 * apart: a chord of u^2 lies above it by at most h^2 / 4, so the difference of the two is within
 * h^2 / 4 and the product within h^2 / 16: h = 2 sqrt(tol) keeps it within tol / 4. The scale
 * s = sqrt(|y| / |x|) balances the factors: the squares span 4 sqrt(|x| |y|), not 2 (|x| + |y|)
 * (x / det of Invert3x3, |x| <= 162 and |1 / det| <= 1: 6 times fewer pieces). */
static bool product_units(Plan *p, const MlpOp *op, HiddenBuf *hb, double *b2) {
    const SquareLevels *sq = op->sq;
    double h = sq->h1; /* by depth (squares.c): level 0's spacing, and tri(u / h) into w_1 */
    double mx = fmax(fabs(op->x_range.lo), fabs(op->x_range.hi)), my = fmax(fabs(op->y_range.lo), fabs(op->y_range.hi));
    double sc = mx > 0 && my > 0 && isfinite(mx) && isfinite(my) ? sqrt(my / mx) : 1;
    Ival X = {op->x_range.lo * sc, op->x_range.hi * sc}, Y = {op->y_range.lo / sc, op->y_range.hi / sc};
    for (int side = 0; side < 2; side++) {
        double sign = side ? -1 : 1;
        LinView u = lv_combine(p->arena, sc, op->x_view, sign / sc, op->y_view);
        double lo = side ? X.lo - Y.hi : X.lo + Y.lo;
        double hi = side ? X.hi - Y.lo : X.hi + Y.hi;
        if (u.n == 0) continue; /* x - x of a square x * x: exactly 0, nothing to add */
        if (!(hi > lo)) { /* one value: a constant */
            b2[op->out_dim] += sign / 4 * lo * lo;
            continue;
        }
        /* u^2 by chords on the grid i h from 0 outward, each way: slope h on the first piece, then
         * 2 h more at each knot, all ReLU terms positive (they add up to about u^2, where one sum
         * from lo would cancel terms of lo^2: far more rounding), a unit per knot the range reaches */
        for (int dir = 0; dir < 2; dir++) {
            double reach = dir ? -lo : hi; /* how far u goes this way from 0 */
            if (reach <= 0) continue;
            double steps = ceil(reach / h);
            if (steps > (double)(1 << 20)) return refuse(p, op, "needs %.0f linear pieces for a square (raise --tol)", steps);
            LinView v = dir ? lv_combine(p->arena, -1, u, 0, lv_empty()) : u;
            for (size_t i = 0; i < (size_t)steps; i++) {
                size_t k = hidden_add(p, hb, v, 1, -(double)i * h);
                hb->out_dim[k] = op->out_dim;
                hb->out_coef[k] = sign / 4 * (i ? 2 * h : h);
            }
            /* tri(u / h) = |u| / h on the first piece, then slopes -+1 / h alternating at each knot */
            for (size_t i = 0; sq->depth > 1 && i < (size_t)steps; i++) {
                size_t k = hidden_add(p, hb, v, 1, -(double)i * h);
                hb->out_dim[k] = op->sq_next[side];
                hb->out_coef[k] = (i == 0 ? 1 : i % 2 ? -2 : 2) / h;
            }
        }
    }
    return true;
}

/* Level s >= 1 of the squares by depth (squares.c), for each square's w_s in [0, 1]: its part
 * -h_s^2 psi(w_s) of the square (a quarter, signed, of the product), psi(t) = t - I_{1/K}(t^2)
 * (slope 1 - 1 / K, then 2 / K less at each knot j / K), and w_(s+1) = tri(K w_s) (slope K, then
 * -+2 K alternating at each knot) unless s is the last level. */
static bool square_level_units(Plan *p, const MlpOp *op, HiddenBuf *hb) {
    const SquareLevels *sq = op->sq;
    double K = sq->k, hs = sq->h1 / pow(K, op->level - 1);
    for (int side = 0; side < 2; side++) {
        double sign = side ? -1 : 1;
        LinView w = side ? op->y_view : op->x_view;
        if (w.n == 0) continue; /* the square of x - x in x * x */
        for (uint32_t j = 0; j < sq->k; j++) {
            size_t k = hidden_add(p, hb, w, 1, -(double)j / K);
            hb->out_dim[k] = op->out_dim;
            hb->out_coef[k] = -sign / 4 * hs * hs * (j == 0 ? 1 - 1 / K : -2 / K);
        }
        for (uint32_t j = 0; op->level + 1 < sq->depth && j < sq->k; j++) {
            size_t k = hidden_add(p, hb, w, 1, -(double)j / K);
            hb->out_dim[k] = op->sq_next[side];
            hb->out_coef[k] = j == 0 ? K : j % 2 ? -2 * K : 2 * K;
        }
    }
    return true;
}

/* x * y exactly in a gated MLP: ReLU(x) y - ReLU(-x) y. One of the two units is exactly 0, the
 * other is x y rounded once: the product's rounding is relative to it (reals.c real_product). */
static bool gated_product_units(Plan *p, const MlpOp *op, HiddenBuf *hb) {
    size_t h1 = hidden_add(p, hb, op->x_view, 1, 0), h2 = hidden_add(p, hb, op->x_view, -1, 0);
    hidden_gate(hb, h1, op->y_view, 0);
    hidden_gate(hb, h2, op->y_view, 0);
    hb->out_dim[h1] = hb->out_dim[h2] = op->out_dim;
    hb->out_coef[h1] = 1;
    hb->out_coef[h2] = -1;
    return true;
}

/* x * pwl(y) in a gated MLP, pwl(y) = ky_0 + sum_i (s_i - s_{i-1}) ReLU(y - kx_i) (see
 * pwl_units): one unit per knot, each gated by x. */
static bool gated_pwl_product_units(Plan *p, const MlpOp *op, HiddenBuf *hb) {
    const RealFn *f = op->pwl;
    LinView y = op->y_view;
    RealFn mirror;
    if (f->from_right) { /* pwl(y) = g(-y) */
        mirror = realfn_mirror(p, f);
        f = &mirror;
        y = lv_combine(p->arena, -1, y, 0, lv_empty());
    }
    size_t h0 = hidden_add(p, hb, lv_empty(), 1, 1); /* ReLU(1) x ky_0 */
    hidden_gate(hb, h0, op->x_view, 0);
    hb->out_dim[h0] = op->out_dim;
    hb->out_coef[h0] = f->ky[0];
    double prev = 0;
    for (size_t i = 0; i + 1 < f->n_knots; i++) {
        double s = (f->ky[i + 1] - f->ky[i]) / (f->kx[i + 1] - f->kx[i]);
        if (s != prev) {
            size_t h = hidden_add(p, hb, y, 1, -f->kx[i]);
            hidden_gate(hb, h, op->x_view, 0);
            hb->out_dim[h] = op->out_dim;
            hb->out_coef[h] = s - prev;
        }
        prev = s;
    }
    return true;
}

/* The table's units along the projection of its inputs, sliced by input `gate` (-1: none);
 * *mult the projection's span, *fits false (nothing added) when the points to enumerate are
 * over CG_MAX_GRID (t->total) or the span over 1e12. */
static bool tabulate_gated(Tab *t, int gate, bool by_size, HiddenBuf *hb, double *b2, double *mult_out, bool *fits) {
    const MlpOp *op = t->op;
    Plan *p = t->p;
    size_t na = op->n_grid;
    t->gate = gate;
    for (size_t q = 0; q < na; q++) t->order[q] = q;
    for (size_t q = 1; q < na && by_size; q++) /* the inputs with the most points fastest */
        for (size_t r = q; r > 0 && t->ax[t->order[r]].n > t->ax[t->order[r - 1]].n; r--) {
            size_t tmp = t->order[r];
            t->order[r] = t->order[r - 1];
            t->order[r - 1] = tmp;
        }
    for (size_t q = 1; q < na; q++) /* an input off its values (GridArg.dev) fastest: its steps are 1 apart */
        if (op->grid[t->order[q]].dev > 0)
            for (size_t r = q; r > 0; r--) {
                size_t tmp = t->order[r];
                t->order[r] = t->order[r - 1];
                t->order[r - 1] = tmp;
            }
    double total = 1, mult = 1;
    for (size_t q = 0; q < na; q++) {
        size_t j = t->order[q];
        t->allow[j] = ARENA_ARRAY(p->arena, size_t, t->ax[j].n);
        total *= (double)t->ax[j].n;
        if ((int)j == t->gate) continue;
        t->ax[j].coef = mult;
        mult *= (t->ax[j].uniq[t->ax[j].n - 1] - t->ax[j].min) / t->ax[j].gap + 1;
    }
    if (t->gate >= 0) { /* the points the slices enumerate */
        total = 0;
        for (size_t g = 0; g < t->ax[t->gate].n; g++) total += slice_points(t, g);
    }
    t->total = total;
    *mult_out = mult;
    *fits = total <= CG_MAX_GRID && mult <= 1e12;
    if (!*fits) return true;
    /* each input is centred before it is scaled, so a large constant in its view cancels
     * exactly here (Sterbenz) instead of in the MLP's sums */
    t->proj = lv_empty();
    for (size_t j = 0; j < na; j++) {
        if ((int)j == t->gate) continue;
        LinView centred = lv_combine(p->arena, 1, op->grid[j].view, -t->ax[j].min, lv_unit(p->arena, DIM_ONE, 1));
        t->proj = lv_combine(p->arena, 1, t->proj, t->ax[j].coef / t->ax[j].gap, centred);
    }
    t->M = mult + 1; /* > p_max - p_min, which is below mult */
    if (t->gate < 0) return tabulate_slice(t, 0, hb, b2);
    for (size_t g = 0; g < t->ax[t->gate].n; g++)
        if (!tabulate_slice(t, g, hb, b2)) return false;
    return true;
}

/* A switch (switch.c): per case, a unit for its value at its leaf's least value and a ramp
 * pair per step, each shut by M times the gates that disagree with the case. */
static bool switch_units(Plan *p, const MlpOp *op, HiddenBuf *hb) {
    const Switch *sw = op->sw;
    for (size_t c = 0; c < sw->n_cases; c++) {
        /* agree: the one-hots of the gates the case sets, minus their number: 0 where the case
         * holds, <= -1 elsewhere */
        LinView agree = lv_empty();
        double set = 0;
        for (uint32_t i = 0; i < sw->n_gates; i++) {
            uint64_t allowed = sw->gate_val[c * sw->n_gates + i];
            if (allowed == SW_OPEN) continue;
            for (uint32_t v = 0; v < 64 && allowed >> v; v++) /* the one-hots of its allowed values: 1 or 0 */
                if (allowed >> v & 1) agree = lv_combine(p->arena, 1, agree, 1, op->gate_views[sw->gate_base[i] + v]);
            set++;
        }
        agree = lv_combine(p->arena, 1, agree, -set, lv_unit(p->arena, DIM_ONE, 1));
        GridOut none = {false, 0, 0, {0}}, prev = {true, sw->first[c], 0, {0}};
        out_change(hb, hidden_add(p, hb, agree, 1, 1), op, &none, &prev, +1);
        for (size_t s = sw->step_start[c]; s < sw->step_start[c + 1]; s++) {
            int j = sw->x_of[c];
            double lo = sw->step_lo[s], hi = sw->step_hi[s], top = sw->x_max[j];
            if (op->x_u[j]) { /* read as -u = -1/(w + 1), which grows with w */
                lo = -1 / (lo + 1);
                hi = -1 / (hi + 1);
                top = -1 / (top + 1);
            }
            double w = hi - lo;
            double M = 2 * (top - lo) / w + 1.5; /* above the ramp's largest value, by 2 */
            /* 2 (x - lo) / w - 1/2 + M agree: flat a quarter step around each value (upstream rounding) */
            LinView in = lv_combine(p->arena, 2 / w, op->x_views[j], M, agree);
            size_t h1 = hidden_add(p, hb, in, 1, -2 * lo / w - 0.5), h2 = hidden_add(p, hb, in, 1, -2 * lo / w - 1.5);
            GridOut cur = {true, sw->step_to[s], 0, {0}};
            out_change(hb, h1, op, &prev, &cur, +1);
            out_change(hb, h2, op, &prev, &cur, -1);
            prev = cur;
        }
        if (hb->n > hb->stop) return true; /* over a limit: emit.c reports it */
    }
    return true;
}

bool mlp_tabulate(Plan *p, const MlpOp *op, HiddenBuf *hb, double *b2) {
    if (op->fn == MLP_FN_SWITCH) return switch_units(p, op, hb);
    if (op->fn == MLP_FN_PWL_PRODUCT) return gated_pwl_product_units(p, op, hb);
    if (op->fn == MLP_FN_PRODUCT && p->gated_mlp) return gated_product_units(p, op, hb);
    if (op->fn == MLP_FN_GATED) return gated_units(p, op, hb);
    if (op->fn == MLP_FN_PWL && op->out_cat) return staircase_units(p, op, hb, b2);
    if (op->fn == MLP_FN_PWL) {
        fn_units(p, hb, op->x_view, op->pwl, 1, op->out_dim, b2);
        return true;
    }
    if (op->fn == MLP_FN_PRODUCT) return product_units(p, op, hb, b2);
    if (op->fn == MLP_FN_SQUARE_LEVEL) return square_level_units(p, op, hb);
    Tab t;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.op = op;
    t.gate = -1;
    t.pos_i = t.pos_n = t.view_leaf = -1;
    size_t na = op->n_grid;
    bool approx = false;
    for (size_t l = 0; l < op->n_leaves; l++) {
        const LeafMap *lm = &op->leaf[l];
        if (lm->vs && lm->vs->approx) approx = true;
        if (!lm->width && lm->node && lm->node->kind == IR_INDICES) t.pos_i = (int)l;
        if (lm->node && lm->node->kind == IR_LENGTH) t.pos_n = (int)l;
        if (!lm->width && !lm->has_kind_axis && lm->node && lm->node->kind == IR_AGGREGATE)
            t.count_at[l] = agg_count_by_index(p, lm->node);
        if (!lm->width && !lm->has_kind_axis && lm->node && t.view_leaf < 0 && (t.view_index = view_indices(p, lm)))
            t.view_leaf = (int)l;
    }
    for (size_t j = 0; j < na; j++) {
        if (!build_axis(&t, j, approx)) return false;
        if (t.ax[j].n == 0) return true; /* an input takes no value: nothing to tabulate */
    }
    /* gate on an exact one-hot input when other inputs remain; which one, and the order of the
     * others along the projection (as given, or the most points fastest), the way that gives
     * the fewest units: a threshold on a mean costs a step per value of a faster input */
    int gates[CG_MAX_GRID_ARGS], n_gates = 0;
    for (size_t j = 0; j < na && na > 1; j++)
        if (op->grid[j].onehot) gates[n_gates++] = (int)j;
    if (!n_gates) gates[n_gates++] = -1;
    size_t first = hb->n;
    int gate = gates[0];
    bool by_size = false;
    if (n_gates > 1 || na > 2) {
        double *b2_saved = malloc(p->n_dims * sizeof *b2_saved);
        if (!b2_saved) abort();
        memcpy(b2_saved, b2, p->n_dims * sizeof *b2);
        size_t best_units = SIZE_MAX;
        for (int k = 0; k < 2 * n_gates; k++) {
            if (k % 2 && na - (gates[k / 2] >= 0) < 2) continue; /* one input besides the gate: no order */
            double mult;
            bool fits;
            size_t diags = p->diags->count;
            if (!tabulate_gated(&t, gates[k / 2], k % 2, hb, b2, &mult, &fits)) { /* the final run says why */
                diag_truncate(p->diags, diags);
                fits = false;
            }
            if (fits && hb->n - first < best_units) {
                best_units = hb->n - first;
                gate = gates[k / 2];
                by_size = k % 2;
            }
            hb->n = first; /* a trial: its units and biases are dropped */
            memcpy(b2, b2_saved, p->n_dims * sizeof *b2);
        }
        free(b2_saved);
    }
    double mult;
    bool fits;
    if (!tabulate_gated(&t, gate, by_size, hb, b2, &mult, &fits)) return false;
    if (!fits && t.total > CG_MAX_GRID)
        return refuse(p, op, "needs a table of %.0f entries (limit %d): lower --max-len or --vocab", t.total, CG_MAX_GRID);
    if (!fits)
        return refuse(p, op,
                      "needs a table along %.3g grid steps (its inputs' ranges over their smallest gaps), past the "
                      "1e12 that float64 resolves: compute it from fewer or coarser inputs", mult);
    return hb->n > hb->stop || table_rounding_ok(&t, hb, first, mult);
}
