/* Maps computed as switches: for each assignment of a few gate s-ops, a step function of at most
 * one numeric s-op.
 *
 * A map of maps costs an MLP per map where the inner one reads a mean through a threshold
 * (`aggregate(s, indicator(b)) > 0`) and the outer one combines that with booleans: a table
 * must discretise the mean first, and one table of both holds every pair of means (far too
 * many). But where each assignment of the booleans leaves the value depending on one mean at
 * most (a mux `c if flag else nc`, an or over `tokens == e`), one MLP computes it. For case a
 * (an assignment of the gates) and each step of its mean x between consecutive values lo < hi,
 *     ReLU(s + M g_a) - ReLU(s - 1 + M g_a),   s = 2 (x - lo) / (hi - lo) - 1/2,
 * where g_a = (sum of the gates' one-hot views at a) - (number of gates) is 0 where a holds and
 * at most -1 elsewhere, and M exceeds s's largest value: a ramp over the middle half of the step
 * where a holds, 0 elsewhere. ReLU(1 + g_a) adds a's value at the least x. mlp.c builds the units.
 *
 * switch_analyse proves the dependence on one leaf per case by evaluating the map's subtree with
 * the gates fixed: a map whose arguments still vary is constant when it gives one value over
 * every combination of their value sets (`False and x` is False whatever x). The sets are
 * supersets of what occurs, so a proof over them holds; a case that raises anywhere, or depends
 * on two leaves, makes the map no switch. */
#include <string.h>

#include "codegen/internal.h"

enum { SW_MAX_COMBOS = 4096 };

/* What a node is under the current case: a constant v, or dependent on the numeric leaves in
 * mask; !ok where it raises or is no map of the leaves. */
typedef struct Dep {
    uint32_t mask;
    bool ok;
    Value v;
    uint32_t stamp;
} Dep;

typedef struct SwCtx {
    Plan *p;
    const Switch *sw;
    Dep *memo;          /* by node id, valid when its stamp is the current one */
    uint32_t stamp;
    const Value *gate_v; /* the case's gate values */
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
static Dep apply_or_prove(SwCtx *c, const IrNode *n, const Dep *a, uint32_t mask) {
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
    uint32_t on = 0;
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
    if ((k = leaf_index(c->sw->gates, c->sw->n_gates, n)) >= 0) d.v = c->gate_v[k];
    else if ((k = leaf_index(c->sw->xs, c->sw->n_xs, n)) >= 0) {
        if (k == c->x) d.v = c->x_v;
        else d.mask = 1u << k;
    } else if (n->kind == IR_CONST) d.v = n->u.constant;
    else if (n->kind != IR_MAP) d.ok = false;
    else {
        Dep a[3];
        uint32_t mask = 0;
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

bool switch_analyse(Plan *p, const IrNode *n, const IrNode *const *gates, const bool *gate_by_num, uint32_t n_gates,
                    const IrNode *const *xs, uint32_t n_xs, Switch *out) {
    const ValueSet *out_vs = &p->info[n->id].vs;
    /* equal numbers of two kinds would need a kind block, which kinds.c computes from the map's
     * arguments, not from a switch's leaves */
    if (out_vs->unbounded || out_vs->approx || !out_vs->n || vs_kind_collisions(out_vs)) return false;
    memset(out, 0, sizeof *out);
    out->n_gates = n_gates;
    out->n_xs = n_xs;
    double cases = 1;
    for (uint32_t i = 0; i < n_gates; i++) {
        const ValueSet *g = &p->info[gates[i]->id].vs;
        if (g->unbounded || g->approx || !g->n) return false;
        out->gates[i] = gates[i];
        out->gate_by_num[i] = gate_by_num[i];
        out->gate_base[i] = i ? out->gate_base[i - 1] + (uint32_t)p->info[gates[i - 1]->id].vs.n : 0;
        cases *= (double)g->n;
    }
    if (cases > SW_MAX_CASES) return false;
    for (uint32_t j = 0; j < n_xs; j++) {
        const ValueSet *x = &p->info[xs[j]->id].vs;
        /* distinct numbers, each exact as a double: the view carries them */
        if (x->unbounded || x->approx || !x->numeric || !vs_decodable(x, false, NULL) ||
            vs_inexact_as_numbers(x))
            return false;
        out->xs[j] = xs[j];
        out->x_max[j] = value_as_double(x->vals[x->n - 1]);
    }
    size_t nc = (size_t)cases;
    out->n_cases = nc;
    out->gate_val = ARENA_ARRAY(p->arena, uint32_t, nc * (n_gates ? n_gates : 1));
    out->x_of = ARENA_ARRAY(p->arena, int32_t, nc);
    out->first = ARENA_ARRAY(p->arena, uint32_t, nc);
    out->step_start = ARENA_ARRAY(p->arena, size_t, nc + 1);
    size_t cap = 64, n_steps = 0;
    out->step_lo = ARENA_ARRAY(p->arena, double, cap);
    out->step_hi = ARENA_ARRAY(p->arena, double, cap);
    out->step_to = ARENA_ARRAY(p->arena, uint32_t, cap);
    SwCtx c = {p, out, ARENA_ARRAY(p->arena, Dep, (size_t)n->id + 1), 0, NULL, -1, {0},
               ARENA_ARRAY(p->arena, Value, SW_MAX_COMBOS)};
    Value gv[SW_MAX_LEAVES];
    c.gate_v = gv;
    for (size_t k = 0; k < nc; k++) {
        size_t rest = k;
        for (uint32_t i = 0; i < n_gates; i++) { /* case k: gate 0 fastest */
            const ValueSet *g = &p->info[gates[i]->id].vs;
            out->gate_val[k * n_gates + i] = (uint32_t)(rest % g->n);
            gv[i] = g->vals[rest % g->n];
            rest /= g->n;
        }
        c.x = -1;
        c.stamp++;
        Dep d = dep_of(&c, n);
        if (!d.ok || (d.mask & (d.mask - 1))) return false; /* raises, or reads two leaves */
        out->step_start[k] = n_steps;
        out->x_of[k] = -1;
        if (!d.mask) {
            size_t at;
            if (!vs_contains(out_vs, d.v, &at)) return false;
            out->first[k] = (uint32_t)at;
            out->units++;
            continue;
        }
        int j = __builtin_ctz(d.mask);
        const ValueSet *x = &p->info[xs[j]->id].vs;
        out->x_of[k] = j;
        c.x = j;
        uint32_t prev;
        if (!value_at(&c, n, x->vals[0], &prev)) return false;
        out->first[k] = prev;
        out->units++;
        for (size_t i = 1; i < x->n; i++) {
            uint32_t cur;
            if (!value_at(&c, n, x->vals[i], &cur)) return false;
            if (cur == prev) continue;
            double lo = value_as_double(x->vals[i - 1]), hi = value_as_double(x->vals[i]);
            /* the ramp's slope times the leaf's reach stays far inside float64 (its rounding
             * must stay below a quarter of the step) */
            double reach = fmax(fabs(lo), fabs(out->x_max[j])) + out->x_max[j] - lo;
            if (reach / (hi - lo) > 1e8) return false;
            if (n_steps == cap) {
                out->step_lo = arena_grow(p->arena, out->step_lo, n_steps, 2 * cap, sizeof *out->step_lo);
                out->step_hi = arena_grow(p->arena, out->step_hi, n_steps, 2 * cap, sizeof *out->step_hi);
                out->step_to = arena_grow(p->arena, out->step_to, n_steps, 2 * cap, sizeof *out->step_to);
                cap *= 2;
            }
            out->step_lo[n_steps] = lo;
            out->step_hi[n_steps] = hi;
            out->step_to[n_steps++] = cur;
            out->units += 2;
            prev = cur;
        }
        if (out->units > SW_MAX_UNITS) return false;
    }
    out->step_start[nc] = n_steps;
    return true;
}
