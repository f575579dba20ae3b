/* Maps computed as switches: for each case (a set of values of some gate s-ops), a step function
 * of at most one numeric s-op.
 *
 * A map of maps costs an MLP per map where the inner one reads a mean through a threshold
 * (`aggregate(s, indicator(b)) > 0`) and the outer one combines that with booleans: a table
 * must discretise the mean first, and one table of both holds every pair of means (far too
 * many). But where each assignment of the booleans leaves the value depending on one mean at
 * most (a mux `c if flag else nc`, an or over `tokens == e`), one MLP computes it. For case a
 * and each step of its mean x between consecutive values lo < hi,
 *     ReLU(s + M g_a) - ReLU(s - 1 + M g_a),   s = 2 (x - lo) / (hi - lo) - 1/2,
 * where g_a = (for each gate the case sets, the sum of the one-hots of the values it allows) -
 * (the number of such gates) is 0 where a holds and at most -1 elsewhere, and M exceeds s's
 * largest value: a ramp over the middle half of the step where a holds, 0 elsewhere. ReLU(1 +
 * g_a) adds a's value at the least x. mlp.c builds the units.
 *
 * switch_analyse finds the cases as the leaves of a decision tree over the gates (explore): it
 * evaluates the map's subtree with the gates set so far (dep_of), splits on a gate the value
 * still depends on, and lets values of a gate whose subtrees come out the same share one. A map
 * whose arguments still vary depends only on those that change its value for some setting of the
 * others, over every combination of their value sets (`False and x` is False whatever x; `c if g
 * else d` with g set reads c alone). The sets are supersets of what occurs, so a proof over them
 * holds; a case that raises anywhere, or depends on two numeric leaves, makes the map no switch. */
#include <string.h>

#include "codegen/internal.h"

enum { SW_MAX_COMBOS = 4096 };

/* What a node is under the current case: a constant v, or dependent on the numeric leaves in
 * mask; !ok where it raises or is no map of the leaves. */
typedef struct Dep {
    uint64_t mask; /* bit j: numeric leaf j; bit 32 + i: gate i, where the case leaves it open */
    bool ok;
    Value v;
    uint32_t stamp;
} Dep;

typedef struct SwCtx {
    Plan *p;
    const Switch *sw;
    Dep *memo;          /* by node id, valid when its stamp is the current one */
    uint32_t stamp;
    Value *gate_v;      /* the case's gate values, where gate_set */
    uint32_t *gate_idx; /* their indices in the gates' sets */
    bool *gate_set;
    int x;              /* the numeric leaf fixed to x_v, or -1 */
    Value x_v;
    Value *res;         /* SW_MAX_COMBOS results of one map (apply_or_prove) */
} SwCtx;

static int leaf_index(const IrNode *const *set, uint32_t n, const IrNode *x) {
    for (uint32_t k = 0; k < n; k++)
        if (set[k] == x) return (int)k;
    return -1;
}

/* The set a varying argument is enumerated over: exact numbers (no rounding twins merged). A set
 * by number holds one member for 1, 1.0 and True: their kinds make no difference to any consumer
 * (valueset.c), so one stands for all. */
static const ValueSet *candidates(const SwCtx *c, const IrNode *a) {
    const ValueSet *vs = &c->p->info[a->id].vs;
    return vs->unbounded || vs->approx || vs->n == 0 ? NULL : vs;
}

/* Map n over its arguments' states: applied when they are constants; else over every
 * combination of the varying ones' sets, depending on the leaves of those that change its value
 * for some setting of the others (`c if g else d` with g fixed: on c's alone), constant when none
 * does. Where a combination raises, on all of them. */
static Dep apply_or_prove(SwCtx *c, const IrNode *n, const Dep *a, uint64_t mask) {
    char msg[160];
    Value in[3];
    uint32_t nargs = n->u.map.nargs;
    for (uint32_t j = 0; j < nargs; j++) in[j] = a[j].v;
    if (!mask) {
        ValueResult r = ir_map_apply(n, in, c->p->arena, msg, sizeof msg);
        return (Dep){0, r.ok, r.value, 0};
    }
    const ValueSet *set[3] = {NULL, NULL, NULL};
    size_t stride[3] = {0, 0, 0}, combos = 1;
    for (uint32_t j = 0; j < nargs; j++) {
        if (!a[j].mask) continue;
        if (!(set[j] = candidates(c, n->u.map.args[j])) || combos * set[j]->n > SW_MAX_COMBOS) return (Dep){mask, true, {0}, 0};
        stride[j] = combos;
        combos *= set[j]->n;
    }
    Value *res = c->res;
    for (size_t k = 0; k < combos; k++) {
        for (uint32_t j = 0; j < nargs; j++)
            if (set[j]) in[j] = set[j]->vals[k / stride[j] % set[j]->n];
        ValueResult r = ir_map_apply(n, in, c->p->arena, msg, sizeof msg);
        if (!r.ok) return (Dep){mask, true, {0}, 0};
        res[k] = r.value;
    }
    uint64_t on = 0;
    for (uint32_t j = 0; j < nargs; j++) {
        if (!set[j]) continue;
        bool matters = false;
        for (size_t k = 0; k < combos && !matters; k++)
            if (k / stride[j] % set[j]->n) matters = atom_order(res[k], res[k - k / stride[j] % set[j]->n * stride[j]]) != 0;
        if (matters) on |= a[j].mask;
    }
    return (Dep){on, true, res[0], 0};
}

static Dep dep_of(SwCtx *c, const IrNode *n) {
    Dep *m = &c->memo[n->id];
    if (m->stamp == c->stamp) return *m;
    Dep d = {0, true, {0}, 0};
    int k;
    if ((k = leaf_index(c->sw->gates, c->sw->n_gates, n)) >= 0) {
        if (c->gate_set[k]) d.v = c->gate_v[k];
        else d.mask = (uint64_t)1 << (32 + k);
    } else if ((k = leaf_index(c->sw->xs, c->sw->n_xs, n)) >= 0) {
        if (k == c->x) d.v = c->x_v;
        else d.mask = (uint64_t)1 << k;
    } else if (n->kind == IR_CONST) d.v = n->u.constant;
    else if (n->kind != IR_MAP) d.ok = false;
    else {
        Dep a[3];
        uint64_t mask = 0;
        for (uint32_t j = 0; j < n->u.map.nargs && d.ok; j++) {
            a[j] = dep_of(c, n->u.map.args[j]);
            d.ok = a[j].ok;
            mask |= a[j].mask;
        }
        if (d.ok) d = apply_or_prove(c, n, a, mask);
    }
    d.stamp = c->stamp;
    *m = d;
    return d;
}

/* The map's value at the case's gates and x_v (leaf c->x), as an index in its set. */
static bool value_at(SwCtx *c, const IrNode *n, Value xv, uint32_t *index) {
    c->x_v = xv;
    c->stamp++;
    Dep d = dep_of(c, n);
    size_t at;
    if (!d.ok || d.mask || !vs_contains(&c->p->info[n->id].vs, d.v, &at)) return false;
    *index = (uint32_t)at;
    return true;
}

/* The cases found so far (growing arrays) and the switch's units. */
typedef struct Build {
    size_t cap_cases, cap_steps, n_steps;
} Build;

static void add_case(SwCtx *c, Build *b) {
    Switch *sw = (Switch *)c->sw;
    Plan *p = c->p;
    uint32_t ng = sw->n_gates ? sw->n_gates : 1;
    if (sw->n_cases == b->cap_cases) {
        size_t cap = b->cap_cases ? 2 * b->cap_cases : 16;
        sw->gate_val = arena_grow(p->arena, sw->gate_val, sw->n_cases * ng, cap * ng, sizeof *sw->gate_val);
        sw->x_of = arena_grow(p->arena, sw->x_of, sw->n_cases, cap, sizeof *sw->x_of);
        sw->first = arena_grow(p->arena, sw->first, sw->n_cases, cap, sizeof *sw->first);
        sw->step_start = arena_grow(p->arena, sw->step_start, sw->n_cases + 1, cap + 1, sizeof *sw->step_start);
        b->cap_cases = cap;
    }
    size_t k = sw->n_cases++;
    for (uint32_t i = 0; i < sw->n_gates; i++)
        sw->gate_val[k * ng + i] = c->gate_set[i] ? (uint64_t)1 << c->gate_idx[i] : SW_OPEN;
    sw->step_start[k] = b->n_steps;
}

static bool add_step(SwCtx *c, Build *b, double lo, double hi, uint32_t to) {
    Switch *sw = (Switch *)c->sw;
    Plan *p = c->p;
    if (b->n_steps == b->cap_steps) {
        size_t cap = b->cap_steps ? 2 * b->cap_steps : 64;
        sw->step_lo = arena_grow(p->arena, sw->step_lo, b->n_steps, cap, sizeof *sw->step_lo);
        sw->step_hi = arena_grow(p->arena, sw->step_hi, b->n_steps, cap, sizeof *sw->step_hi);
        sw->step_to = arena_grow(p->arena, sw->step_to, b->n_steps, cap, sizeof *sw->step_to);
        b->cap_steps = cap;
    }
    sw->step_lo[b->n_steps] = lo;
    sw->step_hi[b->n_steps] = hi;
    sw->step_to[b->n_steps++] = to;
    sw->units += 2;
    return sw->units <= SW_MAX_UNITS;
}

/* Where case e's steps end (the last case's: at n_steps). */
static size_t steps_end(const Switch *sw, size_t e, size_t n_steps) {
    return e + 1 < sw->n_cases ? sw->step_start[e + 1] : n_steps;
}

/* Whether cases [a, a_end) and [b, b_end) are the same but for gate i's values, steps included. */
static bool same_cases(const Switch *sw, uint32_t i, size_t a, size_t a_end, size_t b, size_t b_end, size_t n_steps) {
    if (a_end - a != b_end - b) return false;
    for (size_t k = 0; k < a_end - a; k++) {
        size_t x = a + k, y = b + k;
        for (uint32_t g = 0; g < sw->n_gates; g++)
            if (g != i && sw->gate_val[x * sw->n_gates + g] != sw->gate_val[y * sw->n_gates + g]) return false;
        if (sw->x_of[x] != sw->x_of[y] || sw->first[x] != sw->first[y]) return false;
        size_t sx = sw->step_start[x], sy = sw->step_start[y], nx = steps_end(sw, x, n_steps) - sx;
        if (nx != steps_end(sw, y, n_steps) - sy) return false;
        for (size_t t = 0; t < nx; t++)
            if (sw->step_lo[sx + t] != sw->step_lo[sy + t] || sw->step_hi[sx + t] != sw->step_hi[sy + t] ||
                sw->step_to[sx + t] != sw->step_to[sy + t])
                return false;
    }
    return true;
}

/* The cases under the gates set so far: one, when the map no longer depends on an open gate and
 * reads one numeric leaf at most (its steps along that leaf); else one subtree per value of the
 * first open gate it depends on. False where a case raises or reads two leaves, or past the
 * limits. */
static bool explore(SwCtx *c, const IrNode *n, Build *b) {
    Switch *sw = (Switch *)c->sw;
    const ValueSet *out_vs = &c->p->info[n->id].vs;
    c->x = -1;
    c->stamp++;
    Dep d = dep_of(c, n);
    if (!d.ok) return false;
    uint32_t open = (uint32_t)(d.mask >> 32), xs = (uint32_t)d.mask;
    if (open) { /* a subtree per value of the gate; values with the same subtree share it */
        int i = __builtin_ctz(open);
        const ValueSet *g = &c->p->info[sw->gates[i]->id].vs;
        size_t start[SW_MAX_GATE_VALUES + 1] = {sw->n_cases};
        uint32_t n_groups = 0;
        c->gate_set[i] = true;
        for (size_t v = 0; v < g->n; v++) {
            size_t at = sw->n_cases, steps = b->n_steps, units = sw->units;
            c->gate_v[i] = g->vals[v];
            c->gate_idx[i] = (uint32_t)v;
            if (!explore(c, n, b)) return false;
            uint32_t k = 0;
            while (k < n_groups && !same_cases(sw, i, start[k], start[k + 1], at, sw->n_cases, b->n_steps)) k++;
            if (k == n_groups) { /* a new subtree */
                start[++n_groups] = sw->n_cases;
                continue;
            }
            for (size_t e = start[k]; e < start[k + 1]; e++) sw->gate_val[e * sw->n_gates + i] |= (uint64_t)1 << v;
            sw->n_cases = at; /* the copy goes */
            b->n_steps = steps;
            sw->units = units;
        }
        c->gate_set[i] = false;
        return true;
    }
    if ((xs & (xs - 1)) || sw->n_cases == SW_MAX_CASES) return false; /* two leaves matter here */
    add_case(c, b);
    size_t k = sw->n_cases - 1;
    sw->units++;
    sw->x_of[k] = -1;
    if (!xs) {
        size_t at;
        if (!vs_contains(out_vs, d.v, &at)) return false;
        sw->first[k] = (uint32_t)at;
        return true;
    }
    int j = __builtin_ctz(xs);
    const ValueSet *x = &c->p->info[sw->xs[j]->id].vs;
    sw->x_of[k] = j;
    c->x = j;
    uint32_t prev;
    if (!value_at(c, n, x->vals[0], &prev)) return false;
    sw->first[k] = prev;
    for (size_t i = 1; i < x->n; i++) {
        uint32_t cur;
        if (!value_at(c, n, x->vals[i], &cur)) return false;
        if (cur == prev) continue;
        double lo = value_as_double(x->vals[i - 1]), hi = value_as_double(x->vals[i]);
        /* the ramp's slope times the leaf's reach stays far inside float64 (its rounding must
         * stay below a quarter of the step) */
        double reach = fmax(fabs(lo), fabs(sw->x_max[j])) + sw->x_max[j] - lo;
        if (reach / (hi - lo) > 1e8 || !add_step(c, b, lo, hi, cur)) return false;
        prev = cur;
    }
    return true;
}

/* Drops the gates no case sets and the numeric leaves no case reads: the MLP need not wait for
 * them. */
static void prune(Plan *p, Switch *sw) {
    enum { DROPPED = UINT32_MAX };
    uint32_t ng = sw->n_gates, keep = 0, map[SW_MAX_LEAVES];
    for (uint32_t i = 0; i < ng; i++) {
        bool used = false;
        for (size_t k = 0; k < sw->n_cases && !used; k++) used = sw->gate_val[k * ng + i] != SW_OPEN;
        map[i] = used ? keep++ : DROPPED;
    }
    uint64_t *vals = ARENA_ARRAY(p->arena, uint64_t, sw->n_cases * (keep ? keep : 1));
    for (size_t k = 0; k < sw->n_cases; k++)
        for (uint32_t i = 0; i < ng; i++)
            if (map[i] != DROPPED) vals[k * keep + map[i]] = sw->gate_val[k * ng + i];
    for (uint32_t i = 0; i < ng; i++)
        if (map[i] != DROPPED) {
            sw->gates[map[i]] = sw->gates[i];
            sw->gate_by_num[map[i]] = sw->gate_by_num[i];
        }
    sw->gate_val = vals;
    sw->n_gates = keep;
    for (uint32_t i = 0; i < keep; i++)
        sw->gate_base[i] = i ? sw->gate_base[i - 1] + (uint32_t)p->info[sw->gates[i - 1]->id].vs.n : 0;
    uint32_t nx = 0, xmap[SW_MAX_LEAVES];
    for (uint32_t j = 0; j < sw->n_xs; j++) {
        bool used = false;
        for (size_t k = 0; k < sw->n_cases && !used; k++) used = sw->x_of[k] == (int32_t)j;
        xmap[j] = used ? nx++ : DROPPED;
        if (used) {
            sw->xs[xmap[j]] = sw->xs[j];
            sw->x_max[xmap[j]] = sw->x_max[j];
            sw->x_u[xmap[j]] = sw->x_u[j];
        }
    }
    for (size_t k = 0; k < sw->n_cases; k++)
        if (sw->x_of[k] >= 0) sw->x_of[k] = (int32_t)xmap[sw->x_of[k]];
    sw->n_xs = nx;
}

bool switch_analyse(Plan *p, const IrNode *n, const IrNode *const *gates, const bool *gate_by_num, uint32_t n_gates,
                    const IrNode *const *xs, const bool *x_u, uint32_t n_xs, Switch *out) {
    const ValueSet *out_vs = &p->info[n->id].vs;
    /* (equal numbers of two kinds are two members of the one-hot output: kinds.c reads the kind
     * from it) */
    if (out_vs->unbounded || out_vs->approx || !out_vs->n || n_gates > SW_MAX_LEAVES || n_xs > SW_MAX_LEAVES)
        return false;
    memset(out, 0, sizeof *out);
    out->n_gates = n_gates;
    out->n_xs = n_xs;
    for (uint32_t i = 0; i < n_gates; i++) {
        const ValueSet *g = &p->info[gates[i]->id].vs;
        if (g->unbounded || g->approx || !g->n) return false;
        out->gates[i] = gates[i];
        out->gate_by_num[i] = gate_by_num[i];
    }
    for (uint32_t j = 0; j < n_xs; j++) {
        const ValueSet *x = &p->info[xs[j]->id].vs;
        /* distinct numbers, each exact as a double: the view carries them */
        if (x->unbounded || x->approx || !x->numeric || !vs_decodable(x, false, NULL) || vs_inexact_as_numbers(x))
            return false;
        out->xs[j] = xs[j];
        out->x_u[j] = x_u[j];
        out->x_max[j] = value_as_double(x->vals[x->n - 1]);
    }
    Value gv[SW_MAX_LEAVES];
    uint32_t gi[SW_MAX_LEAVES];
    bool gs[SW_MAX_LEAVES] = {false};
    SwCtx c = {p, out, ARENA_ARRAY(p->arena, Dep, (size_t)n->id + 1), 0, gv, gi, gs, -1, {0},
               ARENA_ARRAY(p->arena, Value, SW_MAX_COMBOS)};
    Build b = {0, 0, 0};
    if (!explore(&c, n, &b)) return false;
    add_case(&c, &b); /* the end of the last case's steps */
    out->n_cases--;
    prune(p, out);
    return true;
}
