/* Real-valued s-ops: the interval each can take and a bound on the model's error, soundly.
 *
 * With real tokens (tokens_float, --range LO..HI) every s-op that depends on them is real: no
 * finite value set, but an interval [lo, hi] that holds every value the reference computes, and
 * err, a bound on |model - reference| at every position. This pass (called by valueset.c for
 * each node, in topological order) sets them and chooses how the node is computed:
 *   tokens        the range, error 0 (the embedding adds each token's value exactly);
 *   affine        a*x + b*y + c of reals and numbers: a free view; intervals and errors add up;
 *   aggregates    a mean (or a copy) of a real source: the hull of the source and the default;
 *                 the error of the source, plus rounding of the mean;
 *   functions     a map of one real argument (2.718 ^ x, x ^ 0.5, 1 / x, ReLU, round, x < c):
 *                 a piecewise-linear MLP (realfn.c) within --tol of f outside the margins at
 *                 its jumps; the argument's error times f's Lipschitz constant adds to it. A
 *                 function that is constant between its jumps (a comparison, a round) has a
 *                 finite value set, exact outside the margins, and is no longer real;
 *   products      x * y of two reals (x / y = x * (1 / y)): from two squares,
 *                 ((x + y)^2 - (x - y)^2) / 4, or exactly with gated MLPs (--mlp gated);
 *   gated         x * k, x if c else 0, ... for a finite-valued k, c: exact for each value.
 * Where no bound can be proven (a division whose range holds 0, a power of a negative base, a
 * product of two functions...) the node gets a message, reported if the model needs it. Every
 * rounding in the model and in the reference is accounted for, with room to spare: errors are
 * bounds, not estimates. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/internal.h"

/* float64 rounding of a computation of `ops` steps on values of magnitude mag, in the model and
 * in the reference each, with a factor of 2 to spare */
static double rounding(double mag, double ops) { return 4 * ops * DBL_EPSILON * fmax(mag, DBL_MIN); }

static Ival ival_of(double lo, double hi) { return (Ival){nextafter(lo, -INFINITY), nextafter(hi, INFINITY)}; }
static double mag(Ival a) { return fmax(fabs(a.lo), fabs(a.hi)); }

/* The interval and error of an argument: its RealInfo, or its finite value set (exact). */
static bool arg_range(Plan *p, const IrNode *a, Ival *r, double *err) {
    const SopInfo *x = &p->info[a->id];
    if (x->real) {
        *r = x->real->range;
        *err = x->real->err;
        return true;
    }
    if (x->vs.unbounded || !x->vs.numeric || x->vs.n == 0) return false;
    *r = (Ival){value_as_double(x->vs.vals[0]), value_as_double(x->vs.vals[x->vs.n - 1])};
    *err = 0;
    return true;
}

static RealInfo *new_real(Plan *p, SopInfo *info, Ival range, double err, RealHow how) {
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    r->range = range;
    r->err = err;
    r->how = how;
    info->real = r;
    info->vs.unbounded = true;
    info->vs.numeric = true;
    return r;
}

static void refuse(Plan *p, SopInfo *info, const char *fmt, const char *detail) {
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    r->how = REAL_REFUSED;
    r->why = arena_printf(p->arena, fmt, detail);
    r->range = (Ival){-INFINITY, INFINITY};
    r->err = INFINITY;
    info->real = r;
}

/* The real arguments of a map and whether the others are constants. */
static size_t real_args(Plan *p, const IrNode *n, const IrNode **reals) {
    size_t k = 0;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const IrNode *a = n->u.map.args[j];
        if (!p->info[a->id].real) continue;
        bool dup = false;
        for (size_t i = 0; i < k; i++) dup = dup || reals[i] == a;
        if (!dup) reals[k++] = a;
    }
    return k;
}

static bool affine_map(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    if (n->u.map.kind == IR_MAP_UNARY && (n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS)) {
        Ival r;
        double e;
        if (!arg_range(p, n->u.map.args[0], &r, &e)) return false;
        new_real(p, info, n->u.map.op == VOP_NEG ? (Ival){-r.hi, -r.lo} : r, e, REAL_AFFINE);
        return true;
    }
    if (n->u.map.kind != IR_MAP_BINARY) return false;
    const IrNode *a = n->u.map.args[0], *b = n->u.map.args[1];
    bool ca = a->kind == IR_CONST, cb = b->kind == IR_CONST;
    Ival ra, rb;
    double ea, eb;
    switch (n->u.map.op) {
    case VOP_ADD: case VOP_SUB:
        if (!arg_range(p, a, &ra, &ea) || !arg_range(p, b, &rb, &eb)) return false;
        {
            Ival r = n->u.map.op == VOP_ADD ? ival_of(ra.lo + rb.lo, ra.hi + rb.hi) : ival_of(ra.lo - rb.hi, ra.hi - rb.lo);
            new_real(p, info, r, ea + eb + rounding(mag(r), 4), REAL_AFFINE);
        }
        return true;
    case VOP_MUL: case VOP_DIV: {
        if (!(cb || (ca && n->u.map.op == VOP_MUL))) return false;
        const IrNode *x = cb ? a : b;
        double c = value_as_double((cb ? b : a)->u.constant);
        if (n->u.map.op == VOP_DIV) {
            if (c == 0) return false; /* raises: the analysis of functions says so */
            c = 1 / c;
        }
        if (!arg_range(p, x, &ra, &ea)) return false;
        Ival r = c >= 0 ? ival_of(ra.lo * c, ra.hi * c) : ival_of(ra.hi * c, ra.lo * c);
        new_real(p, info, r, fabs(c) * ea + rounding(mag(r), 4), REAL_AFFINE);
        return true;
    }
    default: return false;
    }
}

bool reals_node(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    info->real = NULL;
    if (!p->numeric_tokens) return true;
    if (n->kind == IR_TOKENS) {
        new_real(p, info, (Ival){p->token_lo, p->token_hi}, 0, REAL_INPUT);
        return true;
    }
    if (n->kind == IR_AGGREGATE) {
        const SopInfo *src = &p->info[n->u.aggregate.sop->id];
        if (!src->real) return true;
        if (src->real->how == REAL_REFUSED) {
            info->real = src->real;
            return true;
        }
        Value d = n->u.aggregate.default_value;
        Ival r = src->real->range;
        if (value_is_number(d)) r = (Ival){fmin(r.lo, value_as_double(d)), fmax(r.hi, value_as_double(d))};
        else {
            refuse(p, info, "averages real values with a non-numeric default%s", "");
            return true;
        }
        bool one = selector_at_most_one(p, n->u.aggregate.selector);
        new_real(p, info, r, src->real->err + (one ? 0 : rounding(mag(r), (double)p->max_len + 4)),
                 one ? REAL_COPY : REAL_MEAN);
        return true;
    }
    if (n->kind != IR_MAP) return true;
    const IrNode *reals[3];
    size_t k = real_args(p, n, reals);
    if (k == 0) return true;
    for (size_t j = 0; j < k; j++)
        if (p->info[reals[j]->id].real->how == REAL_REFUSED) {
            info->real = p->info[reals[j]->id].real;
            return true;
        }
    if (affine_map(p, info)) return true;
    bool others_const = true;
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        others_const = others_const && (n->u.map.args[j]->kind == IR_CONST || p->info[n->u.map.args[j]->id].real);
    if (k == 1 && others_const) { /* a function of one real */
        const SopInfo *x = &p->info[reals[0]->id];
        Ival X = ival_of(x->real->range.lo - x->real->err, x->real->range.hi + x->real->err);
        RealFn fn;
        char why[256];
        if (!realfn_build(p, n, reals[0], X, p->real_tol, p->real_margin + x->real->err, &fn, why, sizeof why)) {
            refuse(p, info, "%s", why);
            return true;
        }
        RealInfo *r = ARENA_NEW(p->arena, RealInfo);
        r->how = REAL_FN;
        r->fn = fn;
        r->arg = reals[0];
        r->range = ival_of(fn.range.lo - fn.err, fn.range.hi + fn.err);
        double ops = 4 + 2 * (double)fn.n_knots; /* the MLP's sums */
        r->err = fn.err + fn.lip * x->real->err + rounding(fmax(mag(r->range), fn.lip * mag(X)), ops);
        if (fn.constant_pieces) { /* a comparison, a round: finitely many values, exact outside the margins */
            char msg[160];
            Value *v = ARENA_ARRAY(p->arena, Value, fn.n_knots ? fn.n_knots : 1);
            size_t nv = 0;
            for (size_t i = 0; i < fn.n_knots; i++) {
                ValueResult res = realfn_eval(p, n, reals[0], fn.kx[i], msg, sizeof msg);
                if (res.ok) v[nv++] = res.value;
            }
            info->vs = vs_from_values(v, nv);
            r->err = 0;
            info->real_fn = r; /* lowered as a function, but not real */
            return true;
        }
        info->real = r;
        info->vs.unbounded = true;
        info->vs.numeric = true;
        return true;
    }
    if (k == 2 && n->u.map.kind == IR_MAP_BINARY && (n->u.map.op == VOP_MUL || n->u.map.op == VOP_DIV)) {
        Ival ra, rb;
        double ea, eb;
        arg_range(p, n->u.map.args[0], &ra, &ea);
        arg_range(p, n->u.map.args[1], &rb, &eb);
        if (n->u.map.op == VOP_DIV) {
            refuse(p, info, "divides a real value by another%s (write x * (1 / y))", "");
            return true;
        }
        /* |xy - x'y'| <= |x| |y - y'| + |y'| |x - x'| */
        Ival r = ival_of(fmin(fmin(ra.lo * rb.lo, ra.lo * rb.hi), fmin(ra.hi * rb.lo, ra.hi * rb.hi)),
                         fmax(fmax(ra.lo * rb.lo, ra.lo * rb.hi), fmax(ra.hi * rb.lo, ra.hi * rb.hi)));
        double e = mag(ra) * eb + (mag(rb) + eb) * ea;
        double sq = p->gated_mlp ? 0 : p->real_tol; /* the two squares' approximation, / 4 each */
        new_real(p, info, r, e + sq + rounding(mag(r) + (mag(ra) + mag(rb)) * (mag(ra) + mag(rb)), 16), REAL_PRODUCT);
        return true;
    }
    refuse(p, info, "combines real values in a way the compiler cannot bound (%s)", value_op_text(n->u.map.op));
    return true;
}
