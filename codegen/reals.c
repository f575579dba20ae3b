/* Real-valued s-ops: the interval each can take and a bound on the model's error, soundly.
 *
 * With real tokens (tokens_float, --range LO..HI) every s-op that depends on them is real: no
 * finite value set, but an interval [lo, hi] that holds every value the reference computes, and
 * err, a bound on |model - reference| at every position. With finite tokens, a product or
 * quotient whose values are too many to list is real too, and so is what reads it (too_many_numbers). This pass (called by valueset.c for
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

/* [lo, hi] rounded outward; a computed 0 stays 0, so that signs stay known (what it loses, an
 * underflow below DBL_MIN, the rounding terms cover) */
static Ival ival_of(double lo, double hi) {
    return (Ival){lo == 0 ? 0 : nextafter(lo, -INFINITY), hi == 0 ? 0 : nextafter(hi, INFINITY)};
}
static double mag(Ival a) { return fmax(fabs(a.lo), fabs(a.hi)); }
static Ival widen(Ival r, double e) { return ival_of(r.lo - e, r.hi + e); }

/* An error bound: |model - reference| <= abs + rel |reference|. Relative parts survive means,
 * sums of one sign, scalings, products and functions of one sign (exp, 1 / y), where absolute
 * bounds would multiply the largest magnitudes of unrelated factors. */
typedef struct Bound {
    double abs, rel;
} Bound;

static bool one_sign(Ival r) { return r.lo >= 0 || r.hi <= 0; }
static double abs_of(Bound b, Ival r) { return b.abs + b.rel * mag(r); }
static Bound bound_of(const RealInfo *r) { return (Bound){r->err, r->rel}; }
/* Where the model's value lies, for the reference's in r and |model - reference| <= b.abs + b.rel
 * |reference|: y - b.rel |y| grows with y (b.rel < 1), so each end moves by its own magnitude's
 * share (widen(r, abs_of(b, r)) moves the low end of [1e-9, 3e9] by 3e9 b.rel, past 0). */
static Ival model_range(Ival r, Bound b) {
    return ival_of(r.lo - b.abs - b.rel * fabs(r.lo), r.hi + b.abs + b.rel * fabs(r.hi));
}

/* The interval and error of an argument: its RealInfo, or its finite value set (exact). */
static bool arg_range(Plan *p, const IrNode *a, Ival *r, Bound *b) {
    const SopInfo *x = &p->info[a->id];
    if (a->kind == IR_CONST) {
        if (!value_is_number(a->u.constant)) return false;
        double c = value_as_double(a->u.constant);
        *r = (Ival){c, c};
        *b = (Bound){0, 0};
        return true;
    }
    if (x->real) {
        *r = x->real->range;
        *b = bound_of(x->real);
        return true;
    }
    if (x->vs.unbounded || !x->vs.numeric || x->vs.n == 0) return false;
    *r = (Ival){value_as_double(x->vs.vals[0]), value_as_double(x->vs.vals[x->vs.n - 1])};
    *b = (Bound){0, 0};
    return true;
}

/* A finite s-op computed as a real (as_real) keeps its values, for a divisor's 0. */
static const ValueSet *finite_values(Plan *p, const SopInfo *info) {
    if (info->vs.unbounded || !info->vs.numeric) return NULL;
    ValueSet *f = ARENA_NEW(p->arena, ValueSet);
    *f = info->vs;
    return f;
}

static RealInfo *new_real(Plan *p, SopInfo *info, Ival range, Bound b, RealHow how) {
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    r->finite = finite_values(p, info);
    r->range = range;
    r->err = b.abs;
    r->rel = b.rel;
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

/* What a map of reals reads: its real sources, looking through affine maps of reals and through
 * finite functions of them (comparisons, rounds), which realfn.c evaluates inside one function;
 * and the finite, non-constant s-ops it reads besides. */
typedef struct RealReads {
    const IrNode *leaf;        /* the first real source */
    bool several;              /* more than one real source */
    const IrNode *finite;      /* the first finite s-op */
    bool several_finite;
    const RealInfo *refused;   /* a source that cannot be bounded */
} RealReads;

static void real_reads(Plan *p, const IrNode *n, RealReads *r, bool through_affine) {
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const IrNode *a = n->u.map.args[j];
        const SopInfo *x = &p->info[a->id];
        if (a->kind == IR_CONST) continue;
        if (x->real && x->real->how == REAL_REFUSED) {
            r->refused = x->real;
            continue;
        }
        if (a->kind == IR_MAP && (x->real_fn || (through_affine && x->real && x->real->how == REAL_AFFINE))) {
            real_reads(p, a, r, through_affine);
            continue;
        }
        const IrNode **slot = x->real ? &r->leaf : &r->finite;
        bool *more = x->real ? &r->several : &r->several_finite;
        if (!*slot) *slot = a;
        else if (*slot != a) *more = true;
    }
}

/* a + b or a - b: relative where both terms have one sign (then |a da + b db| <= max(d) |a + b|) */
static Bound sum_bound(Ival ra, Bound ba, Ival rb, Bound bb, bool sub) {
    Ival t = sub ? (Ival){-rb.hi, -rb.lo} : rb;
    if ((ra.lo >= 0 && t.lo >= 0) || (ra.hi <= 0 && t.hi <= 0))
        return (Bound){ba.abs + bb.abs, fmax(ba.rel, bb.rel) + rounding(1, 4)};
    return (Bound){abs_of(ba, ra) + abs_of(bb, rb) + rounding(mag(ra) + mag(rb), 4), 0};
}

/* Whether fn is max(x, c) over its range: every knot on it (within an ulp or two: a knot's value
 * is f's limit from inside its piece, an ulp in), chords only, a knot at c where the range crosses
 * it; its slopes are then 0 and 1 within rounding, which its bound's rounding terms cover. ReLU is
 * c = 0. */
static bool is_clamp(const RealFn *fn, double c) {
    if (fn->err != 0 || fn->n_jumps || fn->n_knots < 2 || fn->quadratic) return false;
    bool atc = fn->kx[0] >= c || fn->kx[fn->n_knots - 1] <= c;
    for (size_t i = 0; i < fn->n_knots; i++) {
        if (!(fabs(fn->ky[i] - fmax(fn->kx[i], c)) <= 4 * DBL_EPSILON * fmax(fabs(fn->kx[i]), fabs(c)))) return false;
        atc = atc || fn->kx[i] == c;
    }
    return atc;
}
static bool is_relu(const RealFn *fn) { return is_clamp(fn, 0); }

/* a + r for r = ReLU(y), y = b - a or a head's copy of it that may select nothing (default 0):
 * max(a, b), or a. The usual ReLU maximum; max is 1-Lipschitz in each argument, so the model is
 * within the larger of a's and b's errors plus the roundings of b - a, of the copy, of the ReLU and
 * of the sum, where the sum's bound counts a's error twice and b's once, at every level of a tree
 * of maxima (U's row maximum: 27 times at 3 levels). False where the pattern is not this. */
static bool max_of_two(Plan *p, const IrNode *a, const IrNode *r, Ival *range, Bound *bound) {
    const SopInfo *ri = &p->info[r->id];
    if (a->kind == IR_CONST || !ri->real || ri->real->how != REAL_FN || !is_relu(&ri->real->fn)) return false;
    const IrNode *y = ri->real->arg, *d = y;
    if (y->kind == IR_AGGREGATE) { /* a copy at its own position, or the default 0 (out22b-001: from another
                                    * position, b - a is not this position's) */
        Value dv = y->u.aggregate.default_value;
        bool always;
        if (!p->info[y->id].real || p->info[y->id].real->how != REAL_COPY || !value_is_number(dv) ||
            value_as_double(dv) != 0 || !selector_self_or_none(p, y->u.aggregate.selector, &always))
            return false;
        d = y->u.aggregate.sop;
    }
    if (d->kind != IR_MAP || d->u.map.kind != IR_MAP_BINARY || d->u.map.op != VOP_SUB || d->u.map.args[1] != a ||
        !p->info[d->id].real)
        return false;
    const IrNode *b = d->u.map.args[0];
    Ival ra, rb, rd, ry, rr;
    Bound ba, bb, bd, by, br;
    if (!arg_range(p, a, &ra, &ba) || !arg_range(p, b, &rb, &bb) || !arg_range(p, d, &rd, &bd) ||
        !arg_range(p, y, &ry, &by) || !arg_range(p, r, &rr, &br))
        return false;
    double ea = abs_of(ba, ra), eb = abs_of(bb, rb), ed = abs_of(bd, rd), ey = abs_of(by, ry), er = abs_of(br, rr);
    *bound = (Bound){fmax(ea, eb) + fmax(0, ed - ea - eb) + fmax(0, ey - ed) + fmax(0, er - ey) +
                         rounding(mag(ra) + mag(rr), 4), 0};
    /* the reference's a + (b - a) can land an ulp or two past b (out22c-001: 1.7000000000000002
     * for b = 1.7, and a comparison with 1.7 was folded): rounded outward by that */
    double slack = rounding(fmax(mag(ra), mag(rb)), 2);
    *range = ival_of(ra.lo - slack, fmax(ra.hi, rb.hi) + slack);
    return true;
}

static bool affine_map(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    Ival ra, rb;
    Bound ba, bb;
    if (n->u.map.kind == IR_MAP_UNARY && (n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS)) {
        if (!arg_range(p, n->u.map.args[0], &ra, &ba)) return false;
        new_real(p, info, n->u.map.op == VOP_NEG ? (Ival){-ra.hi, -ra.lo} : ra, ba, REAL_AFFINE);
        return true;
    }
    if (n->u.map.kind != IR_MAP_BINARY) return false;
    const IrNode *a = n->u.map.args[0], *b = n->u.map.args[1];
    bool ca = a->kind == IR_CONST, cb = b->kind == IR_CONST;
    switch (n->u.map.op) {
    case VOP_ADD: case VOP_SUB: {
        if (!arg_range(p, a, &ra, &ba) || !arg_range(p, b, &rb, &bb)) return false;
        bool sub = n->u.map.op == VOP_SUB;
        Ival r = sub ? ival_of(ra.lo - rb.hi, ra.hi - rb.lo) : ival_of(ra.lo + rb.lo, ra.hi + rb.hi);
        Ival mr;
        Bound mb;
        if (!sub && (max_of_two(p, a, b, &mr, &mb) || max_of_two(p, b, a, &mr, &mb))) {
            new_real(p, info, mr, mb, REAL_AFFINE);
            return true;
        }
        new_real(p, info, r, sum_bound(ra, ba, rb, bb, sub), REAL_AFFINE);
        return true;
    }
    case VOP_MUL: case VOP_DIV: {
        if (!(cb || (ca && n->u.map.op == VOP_MUL))) return false;
        const IrNode *x = cb ? a : b;
        double c = value_as_double((cb ? b : a)->u.constant);
        if (n->u.map.op == VOP_DIV) {
            if (c == 0) return false; /* raises: the analysis of functions says so */
            c = 1 / c;
        }
        if (!arg_range(p, x, &ra, &ba)) return false;
        Ival r = c >= 0 ? ival_of(ra.lo * c, ra.hi * c) : ival_of(ra.hi * c, ra.lo * c);
        new_real(p, info, r, (Bound){fabs(c) * ba.abs, ba.rel + rounding(1, 4)}, REAL_AFFINE);
        return true;
    }
    default: return false;
    }
}

/* An argument's error e carried through a slope k: none from an exact argument, also where the
 * slope is unbounded (x ^ 0.5 at 0) */
static double carried(double k, double e) { return e > 0 ? k * e : 0; }

/* fn's approximation error as an absolute one */
static double fn_abs_err(const RealFn *fn) { return fn->err * (fn->relative ? mag(fn->range) : 1); }

/* The terms the MLP of fn sums: a unit per knot, two with quadratics (gated MLPs), and biases. */
static double fn_units(const RealFn *fn) { return 4 + (double)fn->n_knots * (fn->quadratic ? 2 : 1); }

/* The largest |slope| of fn's chords: the model's function, its pieces extended past the ends
 * (constant on one side, the end piece's slope on the other), changes by at most this times the
 * change of its input. */
static double pieces_lip(const RealFn *fn) {
    double l = 0;
    for (size_t i = 0; i + 1 < fn->n_knots; i++) l = fmax(l, fabs((fn->ky[i + 1] - fn->ky[i]) / (fn->kx[i + 1] - fn->kx[i])));
    return l;
}

/* The float64 rounding of fn's MLP for arguments within X: a few ulps per term of the terms'
 * magnitudes, which add up to at most sum_mag, or |f| + 2 against_mag (RealFn). For f of one sign
 * the second is partly relative, and taken unless it is much larger where |f| is largest: then,
 * unless the argument is one dim (x - k rounded once, relative to itself: one of the term's
 * roundings), each unit's input, rounded at |x| + |k| <= 2 mag(X), also moves f by at most that
 * times |f'| <= log_lip |f| (twice that for the pieces' slopes, which overshoot f's a little). */
static Bound fn_rounding(const RealFn *fn, Ival X) {
    double ops = fn_units(fn);
    /* the relative part: a sum of ops terms of one sign, each at most 3 roundings off (x - k, the
     * gate's product, the weight), is within gamma = (ops + 3) u (1 + 2 (ops + 3) u) of it in any
     * order (u = DBL_EPSILON / 2, the standard bound of a float sum), and no more: the reference's f
     * (libm's exp, pow) is within an ulp or two, which fn_bound adds */
    double g = (ops + 3) * DBL_EPSILON / 2;
    if (fn->relative && isfinite(fn->log_lip) && mag(fn->range) + 2 * fn->against_mag <= 1.01 * fn->sum_mag)
        return (Bound){rounding(2 * fn->against_mag, ops),
                       g * (1 + 2 * g) + (fn->one_dim ? 0 : 2 * fn->log_lip * rounding(2 * mag(X), 2))};
    return (Bound){rounding(fn->sum_mag, ops), 0};
}

/* The error of f(x') for the model's x' = x (1 + d) + e (|d| <= b.rel, |e| <= b.abs) and its
 * piecewise-linear f (realfn.c): relative for f of one sign (through log f's slope, or its
 * elasticity for x of one sign), else absolute through f's Lipschitz constant. */
static Bound fn_bound(Plan *p, const RealFn *fn, Ival X, Bound b, Ival range) {
    double ops = fn_units(fn); /* the MLP's sums */
    double ex = abs_of(b, X);
    if (!fn->relative)
        return (Bound){fn->err + fmin(carried(fn->lip, ex), realfn_modulus(p, fn, X, ex)) +
                           rounding(fmax(mag(range), fn->sum_mag), ops),
                       0};
    double lambda = carried(fn->log_lip, ex); /* |ln f(x') - ln f(x)| */
    double xmin = fmin(fabs(X.lo), fabs(X.hi)), q = b.rel + b.abs / xmin;
    if (isfinite(fn->elasticity) && (X.lo > 0 || X.hi < 0) && q < 0.5)
        lambda = fmin(lambda, fn->elasticity * -log1p(-q)); /* |ln x' - ln x| <= -ln(1 - q) */
    /* the reference's own f is rounded too: a few ulps */
    Bound r = fn_rounding(fn, widen(X, ex));
    return (Bound){r.abs, expm1(lambda) + fn->err * exp(lambda) + rounding(1, 16) + r.rel * (1 + fn->err) * exp(lambda)};
}

/* The margin around fn's jumps that keeps the reference's x on the model's side of each: the
 * margin, and twice x's error at the farthest jump (its relative part taken there, not at x's
 * largest value). INFINITY without jumps. */
static double jump_margin(const Plan *p, const RealInfo *xr, const RealFn *fn) {
    if (!fn->n_jumps) return INFINITY;
    double t = 0;
    for (size_t i = 0; i < fn->n_jumps; i++) t = fmax(t, fabs(fn->jump_at[i]));
    return p->real_margin + 2 * (xr->err + xr->rel * (t + p->real_margin));
}

/* A map of one real source x (through comparisons, conditionals, arithmetic): a piecewise-linear
 * function of x (realfn.c). One with finitely many values (a comparison, a round) is exact
 * outside the margins at its jumps and is no longer real (info->real_fn). */
static bool real_function(Plan *p, SopInfo *info, const IrNode *leaf) {
    const IrNode *n = info->node;
    const RealInfo *xr = p->info[leaf->id].real;
    double ex = abs_of(bound_of(xr), xr->range);
    /* the model's argument: within ex of the reference's; exactly it where ex is 0 (a jump at an
     * end of the range, round(x) over 0.5..4, is then the end's, not one an ulp inside: out21c-005) */
    Ival X = ex > 0 ? model_range(xr->range, bound_of(xr)) : xr->range;
    RealFn fn;
    char why[256], why_range[256];
    bool on_range = false; /* built over the reference's range only */
    double margin = p->real_margin + ex; /* around each jump: the runtime refuses within it */
    if (realfn_build(p, n, leaf, X, p->real_tol, margin, p->gated_mlp, &fn, why, sizeof why)) {
        /* x's error where it jumps, not at x's largest: a relative error makes that far smaller
         * (1 / 2 ^ x jumps at 8.9e-16 where 2 ^ x's error reaches 1e8: out23b-004) */
        double m2 = jump_margin(p, xr, &fn);
        RealFn tight;
        char why_tight[256];
        if (m2 < margin && realfn_build(p, n, leaf, X, p->real_tol, m2, p->gated_mlp, &tight, why_tight, sizeof why_tight) &&
            jump_margin(p, xr, &tight) <= m2) {
            fn = tight;
            margin = m2;
        }
    } else {
        /* it raises just outside what the reference computes ((x + 2) ^ 0.5 at -1e-14, the
         * rounding of x + 2): built over that, the model's x' near its ends reads the end pieces'
         * extension (constant, or their slope), within pieces_lip |x' - x| of the pieces at x */
        on_range = ex > 0 &&
                   realfn_build(p, n, leaf, xr->range, p->real_tol, margin, false, &fn, why_range, sizeof why_range);
        if (!on_range) { /* over the reference's range, what stops it is what matters */
            refuse(p, info, "%s", ex > 0 ? why_range : why);
            return true;
        }
    }
    if (on_range && fn.n_knots >= 2) { /* past the edge where it raises, the model stays at its end value:
                                        * flat there, not the end chord continued (the steepest, at a
                                        * root's 0: out20b-005) */
        double lo_slope = fabs((fn.ky[1] - fn.ky[0]) / (fn.kx[1] - fn.kx[0]));
        size_t k = fn.n_knots - 1;
        double hi_slope = fabs((fn.ky[k] - fn.ky[k - 1]) / (fn.kx[k] - fn.kx[k - 1]));
        realfn_set_anchor(p, &fn, xr->range, lo_slope < hi_slope);
    }
    fn.one_dim = xr->how != REAL_AFFINE; /* affine reals are views of several dims */
    if (!on_range && fn.quadratic && ex > 0 && !isfinite(fn.lip)) {
        /* an unbounded slope (a root at 0) carries the argument's error only through the model's
         * modulus of continuity, computed for chords: those, then (out22d-003, gated) */
        RealFn lin;
        char why_lin[256];
        if (realfn_build(p, n, leaf, X, p->real_tol, margin, false, &lin, why_lin, sizeof why_lin) &&
            (margin == p->real_margin + ex || jump_margin(p, xr, &lin) <= margin)) {
            lin.one_dim = fn.one_dim;
            fn = lin;
        }
    }
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    r->how = REAL_FN;
    r->fn = fn;
    r->fn_margin = margin;
    r->arg = leaf;
    /* the reference's values: the pieces' enclosures of f (realfn.c) hold them (the model's lie
     * within the error bound around them) */
    r->range = ival_of(fn.range.lo, fn.range.hi);
    Bound b = on_range ? (Bound){fn_abs_err(&fn) + fmin(carried(pieces_lip(&fn), ex), realfn_modulus(p, &fn, xr->range, ex)) +
                                     rounding(fmax(mag(r->range), fn.sum_mag), fn_units(&fn)), 0}
                       : fn_bound(p, &fn, xr->range, bound_of(xr), r->range);
    r->err = b.abs;
    r->rel = b.rel;
    if (fn.constant_pieces) { /* finitely many values, exact outside the margins */
        char msg[160];
        Value *v = ARENA_ARRAY(p->arena, Value, fn.n_knots ? fn.n_knots : 1);
        size_t nv = 0;
        for (size_t i = 0; i < fn.n_knots; i++) {
            ValueResult res = realfn_eval(p, n, leaf, fn.kx[i], msg, sizeof msg);
            if (res.ok) v[nv++] = res.value;
        }
        info->vs = vs_from_values(v, nv);
        r->err = r->rel = 0;
        info->real_fn = r;
        return true;
    }
    info->real = r;
    info->vs.unbounded = true;
    info->vs.numeric = true;
    return true;
}

/* y's RealInfo, or for a finite numeric y one of its own: its hull, exact. */
static const RealInfo *real_or_exact(Plan *p, const IrNode *y) {
    if (p->info[y->id].real) return p->info[y->id].real;
    Ival r;
    Bound b;
    if (!arg_range(p, y, &r, &b)) return NULL;
    RealInfo *e = ARENA_NEW(p->arena, RealInfo);
    e->how = REAL_INPUT;
    e->range = r;
    return e;
}

/* How far a staircase's one-hot (a comparison or round of a real: mlp.c staircase_units) can be off
 * 0 and 1 outside its margins, for arguments within X: each ramp reads x / w - k / w for knots k
 * a width w apart, rounded at (|x| + |k|) / w. */
static double staircase_leak(const RealFn *f, Ival X) {
    double w = INFINITY, k = 0;
    for (size_t i = 0; i < f->n_knots; i++) {
        if (i) w = fmin(w, f->kx[i] - f->kx[i - 1]);
        k = fmax(k, fabs(f->kx[i]));
    }
    return isfinite(w) && w > 0 ? rounding((mag(X) + k) / w, 4) : 0;
}

/* f(g, y) for a real (or finite) y and a finite g, affine in y for each value g_v: y + g, y - g, g - y, y * g,
 * y / g (g never 0), `y if g else c`, `y if g else y2`: a gated MLP (see Gated), exact but for rounding. */
static bool real_gated(Plan *p, SopInfo *info, const IrNode *g, const IrNode *y, const IrNode *y2) {
    const IrNode *n = info->node;
    const ValueSet *G = &p->info[g->id].vs;
    const RealInfo *Y = real_or_exact(p, y), *Y2 = y2 ? real_or_exact(p, y2) : NULL;
    if (!Y || (y2 && !Y2)) return false;
    if (G->unbounded || G->n == 0 || G->n > CG_MAX_GATE) return false;
    bool cond = n->u.map.kind == IR_MAP_COND && n->u.map.args[0] == g;
    if (y2 && !cond) return false;
    if (!cond && !(n->u.map.kind == IR_MAP_BINARY && ((n->u.map.args[0] == g && n->u.map.args[1] == y) ||
                                                      (n->u.map.args[0] == y && n->u.map.args[1] == g))))
        return false;
    Gated *gd = ARENA_NEW(p->arena, Gated);
    gd->gate = g;
    gd->y = y;
    gd->y2 = y2;
    gd->n = G->n;
    gd->a = ARENA_ARRAY(p->arena, double, G->n);
    gd->b = ARENA_ARRAY(p->arena, double, G->n);
    if (y2) gd->on_y2 = ARENA_ARRAY(p->arena, bool, G->n);
    double amax = 0, ey = 0, err = 0, rel = 0;
    bool scaled = true; /* every b_v is 0: y scaled, relative errors stay relative */
    Ival range = {INFINITY, -INFINITY};
    for (size_t v = 0; v < G->n; v++) {
        Value gv = G->vals[v];
        double a, b;
        const RealInfo *Yv = Y; /* the real this value reads: y, or y2 */
        if (cond) { /* the branch this value takes: y, y2, or a number */
            const IrNode *branch = n->u.map.args[value_truthy(gv) ? 1 : 2];
            if (branch == y || (y2 && branch == y2)) a = 1, b = 0;
            else if (branch->kind == IR_CONST && value_is_number(branch->u.constant))
                a = 0, b = value_as_double(branch->u.constant);
            else return false;
            if (y2 && branch == y2) gd->on_y2[v] = true, Yv = Y2;
        } else {
            if (!value_is_number(gv)) return false;
            double c = value_as_double(gv);
            bool y_first = n->u.map.args[0] == y;
            switch (n->u.map.op) {
            case VOP_ADD: a = 1, b = c; break;
            case VOP_SUB: a = y_first ? 1 : -1, b = y_first ? -c : c; break;
            case VOP_MUL: a = c, b = 0; break;
            case VOP_DIV:
                if (!y_first || c == 0) return false; /* c / y is not affine; y / 0 raises */
                a = 1 / c, b = 0;
                break;
            default: return false;
            }
        }
        if (!isfinite(a) || !isfinite(b)) return false;
        gd->a[v] = a;
        gd->b[v] = b;
        scaled = scaled && b == 0;
        amax = fmax(amax, fabs(a));
        double eyv = abs_of(bound_of(Yv), Yv->range);
        ey = fmax(ey, fabs(a) * eyv);
        err = fmax(err, fabs(a) * Yv->err);
        rel = fmax(rel, a != 0 ? Yv->rel : 0);
        Ival t = a >= 0 ? ival_of(a * Yv->range.lo + b, a * Yv->range.hi + b) : ival_of(a * Yv->range.hi + b, a * Yv->range.lo + b);
        range = (Ival){fmin(range.lo, t.lo), fmax(range.hi, t.hi)};
        gd->bound = fmax(gd->bound, mag(t) + fabs(a) * eyv);
    }
    info->gated = gd;
    /* the model's a_v y' + b_v against the reference's rounded f(g_v, y); the MLP's two units
     * cancel a constant M > bound, whose rounding is absolute */
    Bound b = scaled ? (Bound){err + rounding(2 * gd->bound + 1, 8), rel + rounding(1, 4)}
                     : (Bound){ey + rounding(2 * gd->bound + 1, 8), 0};
    /* a gate that is a staircase of a real (a comparison: `y if x < c else z`) is 0 or 1 only within
     * its ramps' rounding, which the constant M multiplies (out22f-005: a step of 1e12 leaked 58) */
    const RealInfo *gf = p->info[g->id].real_fn;
    if (gf) b.abs += 2 * (2 * gd->bound + 1) * staircase_leak(&gf->fn, p->info[gf->arg->id].real->range);
    new_real(p, info, range, b, REAL_GATED);
    return true;
}

static bool strict_sign(Ival r) { return r.lo > 0 || r.hi < 0; }

/* ln|a| as a piecewise-linear function into *fn, with *src what it reads and *d a bound on
 * |model - ln|a||: of a's own real source when a is a function of it (ln(c ^ t) = t ln c: no layer
 * of its own, no error of a's), else of a, which must keep one strict sign. */
static bool log_of(Plan *p, const IrNode *a, Ival ra, Bound ba, RealFn *fn, const IrNode **src, double *d) {
    const SopInfo *x = &p->info[a->id];
    char why[256];
    if (x->real && x->real->how == REAL_FN && x->real->fn.n_jumps == 0) {
        const RealInfo *t = p->info[x->real->arg->id].real;
        double et = abs_of(bound_of(t), t->range);
        if (realfn_build_elem(p, RE_LN_ABS, a, x->real->arg, widen(t->range, et), p->real_tol / 4, fn, why, sizeof why)) {
            *src = x->real->arg;
            *d = fn_abs_err(fn) + carried(fn->lip, et) + rounding(fmax(mag(fn->range), fn->sum_mag), fn_units(fn));
            return true;
        }
    }
    Ival A = model_range(ra, ba);
    double q = ba.rel + ba.abs / fmin(fabs(ra.lo), fabs(ra.hi));
    if (!strict_sign(A) || !strict_sign(ra) || q >= 0.5) return false;
    if (!realfn_build_elem(p, RE_LN_ABS, NULL, NULL, A, p->real_tol / 4, fn, why, sizeof why)) return false;
    *src = a;
    /* ln|x'| - ln|x| = ln(1 + d + e / x), |.| <= -ln(1 - q) */
    *d = -log1p(-q) + fn_abs_err(fn) + rounding(fmax(mag(fn->range), fn->sum_mag), fn_units(fn));
    return true;
}

/* x * y or x / y for x and y of one strict sign each, in the log domain: s exp(ln|x| +- ln|y|),
 * two layers of piecewise-linear functions (one where a factor is a function of a real) whose
 * errors stay relative (1 / y and a product by squares cost far more pieces over wide ranges,
 * and their errors are absolute). False when a factor may be 0 or a function cannot be built. */
static bool real_log_product(Plan *p, SopInfo *info, bool divide, Ival ra, Bound ba, Ival rb, Bound bb) {
    const IrNode *n = info->node;
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    double da, db;
    if (!log_of(p, n->u.map.args[0], ra, ba, &r->fn, &r->arg, &da) ||
        !log_of(p, n->u.map.args[1], rb, bb, &r->fn_y, &r->arg_y, &db))
        return false;
    double delta = da + db + rounding(mag(r->fn.range) + mag(r->fn_y.range), 4); /* |u' - u| */
    Ival U = divide ? ival_of(r->fn.range.lo - r->fn_y.range.hi, r->fn.range.hi - r->fn_y.range.lo)
                    : ival_of(r->fn.range.lo + r->fn_y.range.lo, r->fn.range.hi + r->fn_y.range.hi);
    char why[256];
    if (!realfn_build_elem(p, RE_EXP, NULL, NULL, widen(U, delta), p->real_tol / 2, &r->fn_exp, why, sizeof why))
        return false;
    double sign = (ra.lo > 0) == (rb.lo > 0) ? 1 : -1;
    if (sign < 0) /* -exp(u) (gated MLPs: out21c-001, where -exp's pieces bent the way of exp's) */
        realfn_negate(p, &r->fn_exp);
    r->how = REAL_LOGPROD;
    r->divide = divide;
    Ival q = divide ? (Ival){1 / rb.hi, 1 / rb.lo} : rb;
    r->range = ival_of(fmin(fmin(ra.lo * q.lo, ra.lo * q.hi), fmin(ra.hi * q.lo, ra.hi * q.hi)),
                       fmax(fmax(ra.lo * q.lo, ra.lo * q.hi), fmax(ra.hi * q.lo, ra.hi * q.hi)));
    /* exp(u') = exp(u) e^(+-delta), times the exponential's own relative error; the reference
     * rounds its x * y once */
    Bound round = fn_rounding(&r->fn_exp, widen(U, delta));
    r->rel = expm1(delta) * (1 + r->fn_exp.err) + r->fn_exp.err + rounding(1, 16) +
             round.rel * (1 + r->fn_exp.err) * exp(delta);
    r->err = round.abs;
    info->real = r;
    info->vs.unbounded = true;
    info->vs.numeric = true;
    return true;
}

/* Whether finite divisor b is best computed as a real (SopInfo.as_real): a product or quotient of
 * finite numbers with this one reader, whose values are rounded two ways. */
static bool single_divisor_rounded_two_ways(const Plan *p, const IrNode *b) {
    const SopInfo *y = &p->info[b->id];
    if (y->as_real || b->kind != IR_MAP || b->u.map.kind != IR_MAP_BINARY ||
        (b->u.map.op != VOP_MUL && b->u.map.op != VOP_DIV) || !vs_inexact_as_numbers(&y->vs))
        return false;
    size_t readers = 0;
    for (size_t id = b->id + 1; id < p->g->count && readers < 2; id++) {
        const IrNode *n = p->g->nodes[id];
        if (!p->info[id].reachable) continue;
        if (n->kind == IR_MAP)
            for (uint32_t j = 0; j < n->u.map.nargs; j++) readers += n->u.map.args[j] == b;
        else if (n->kind == IR_AGGREGATE) readers += n->u.aggregate.sop == b;
        else if (n->kind == IR_SELECT) readers += (n->u.select.keys == b) + (n->u.select.queries == b);
    }
    return readers == 1 && b != p->output;
}

/* For a finite divisor that holds 0 (where the reference raises) among other numbers: the least
 * |value| of the others, which a check at half of it tells from 0; else 0. */
static double zero_hole(const ValueSet *B) {
    bool zero = false;
    double least = INFINITY;
    for (size_t i = 0; i < B->n; i++) {
        if (!value_is_number(B->vals[i])) return 0;
        double v = fabs(value_as_double(B->vals[i]));
        if (v == 0) zero = true;
        else least = fmin(least, v);
    }
    return zero && isfinite(least) ? least : 0;
}

/* 1 / y for a divisor whose values are 0 (where the reference raises) and others at least hole
 * away (ry their range, by y's error), by sign: fn(t+) + fn_y(t-) for t+ = ReLU(y) + K ReLU(-y) and
 * t- = ReLU(-y) + K ReLU(y), fn = 1 / t and fn_y = -1 / t over the model's |y| (at least hole - ey),
 * each a function of one sign summed from its far end (rounded relative to it; one function across
 * the hole cancels terms as large as the range times its steepest slope: Invert3x3's 1 / det was
 * rounded to 1.4e-6), then a chord to 0 at T, past which it is exactly 0: K |y| >= T on the other
 * side. Sets r->fn, r->fn_y (n_knots 0: no values on that side), r->split_k, r->split_at, *ref (the
 * reference's 1 / y: the sides' enclosures), r->recip_range (the model's) and r->err, r->rel (1 /
 * y's bound, which the caller then replaces by the quotient's); false with why when a side cannot
 * be built. */
static bool split_recip(Plan *p, const IrNode *recip, const IrNode *b, Ival ry, Bound by, double hole, RealInfo *r,
                        Ival *ref, char *why, size_t whysize) {
    double t0 = hole - 2 * (by.abs + by.rel * hole); /* the model's |y| is at least hole - its error there */
    Ival side[2] = {{hole, ry.hi}, {hole, -ry.lo}};
    RealFn *fn[2] = {&r->fn, &r->fn_y};
    Bound own[2] = {{0, 0}, {0, 0}};
    Ival range = {INFINITY, -INFINITY};
    r->split_at = 2 * (mag(model_range(ry, by)));
    r->split_k = 2 * r->split_at / t0;
    for (int s = 0; s < 2; s++) {
        memset(fn[s], 0, sizeof *fn[s]);
        if (side[s].hi < hole) continue;
        RealFn g;
        if (!realfn_build(p, recip, b, ival_of(t0, model_range(side[s], by).hi), p->real_tol, 0, p->gated_mlp, &g, why,
                          whysize))
            return false;
        if (s) realfn_negate(p, &g); /* -1 / t */
        *fn[s] = realfn_zero_beyond(p, &g, r->split_at);
        own[s] = fn_bound(p, fn[s], side[s], by, fn[s]->range);
        range = (Ival){fmin(range.lo, fn[s]->range.lo), fmax(range.hi, fn[s]->range.hi)};
    }
    r->err = fmax(own[0].abs, own[1].abs);
    r->rel = fmax(own[0].rel, own[1].rel);
    double er = r->err + r->rel * mag(range);
    *ref = range;
    r->recip_range = ival_of(range.lo - er, range.hi + er);
    return true;
}

/* x * y and x / y of two real s-ops (or a real and a number): a product of two views; a divisor
 * first becomes 1 / y (realfn.c), which needs its interval to stay away from 0. */
/* The rounding of the two squares' sums (mlp.c product_units) for |x| <= mx, |y| <= my: each
 * square of u = sc x +- y / sc (|u| <= U = 2 sqrt(mx my), sc balancing the two) sums positive
 * ReLU terms at knots h = 2 sqrt(tol) apart from 0 outward, at most U / h + 1 of them non-zero
 * (exact zeros add no rounding), to about u^2 <= U^2 + tol, a quarter each; one dot product sums
 * both, after the hidden units' own rounding of u - k (a few ulps of U each). */
static double squares_reach(double mx, double my) { return mx > 0 && my > 0 ? 2 * sqrt(mx * my) : mx + my; }
static double squares_rounding(double mx, double my, double tol) {
    double U = squares_reach(mx, my), h = 2 * sqrt(tol);
    double terms = 2 * (ceil(U / h) + 1);
    /* the sum's; then each term's, a few ulps of 2 U in u - k times its weight h / 2 */
    return rounding((U * U + tol) / 2, terms + 8) + rounding(U * h, terms);
}

/* A product's (or quotient's, x * (1 / y)) own error on top of its factors': the squares' chords
 * (at the finest spacing of their levels, squares.c) and the rounding of their sums (ReLU MLPs),
 * or one rounding relative to x y (gated), or the rounding of x * pwl(1 / y)'s gated units. The
 * squares' levels into *sq (when not NULL); infinite where they would be too fine to build. */
static Bound product_own(const Plan *p, Ival ra, Bound ba, Ival rb, Bound bb, bool divide, SquareLevels *sq) {
    double ma = mag(ra) + abs_of(ba, ra), mb = mag(rb) + abs_of(bb, rb);
    double big = (ma + mb + 1) * (ma + mb + 1); /* x * pwl(1 / y)'s gated units' magnitude */
    if (!p->gated_mlp) {
        double U = squares_reach(ma, mb);
        SquareLevels levels = square_levels(U, p->real_tol, p->deep_squares);
        if (sq) *sq = levels;
        if (levels.depth == 0) return (Bound){INFINITY, 0};
        /* (u+^2 - u-^2) / 4: each square's chords within tol, one-sided, and a quarter of its rounding */
        return (Bound){levels.h * levels.h / 16 + squares_rounding(ma, mb, levels.h1 * levels.h1 / 4) +
                           square_levels_rounding(&levels, U) / 2,
                       rounding(1, 4)};
    }
    return (Bound){divide ? rounding(big, 16) : 0, rounding(1, 4)};
}

/* ---- weighted means: (sum_k e_k v_k) / max(sum_k e_k, c), e_k >= 0 ---- */

enum { WM_MAX_TERMS = 64 };

/* The terms of a sum (a tree of +), zeros left out; false past WM_MAX_TERMS or for another constant. */
static bool sum_terms(const IrNode *n, const IrNode **out, size_t *k) {
    if (n->kind == IR_CONST) return value_is_number(n->u.constant) && value_as_double(n->u.constant) == 0;
    if (n->kind == IR_MAP && n->u.map.kind == IR_MAP_BINARY && n->u.map.op == VOP_ADD)
        return sum_terms(n->u.map.args[0], out, k) && sum_terms(n->u.map.args[1], out, k);
    if (*k == WM_MAX_TERMS) return false;
    out[(*k)++] = n;
    return true;
}

/* What x is a head's copy of, at its own position everywhere (fresh(x)); else x. */
static const IrNode *uncopied(const Plan *p, const IrNode *x) {
    bool always;
    return x->kind == IR_AGGREGATE && selector_self_or_none(p, x->u.aggregate.selector, &always) && always
               ? x->u.aggregate.sop
               : x;
}

/* max(d, c) written `d if d > c else c` (or >=), c > 0: d and c; else w itself and 0. */
static const IrNode *clamped(const IrNode *w, double *c) {
    *c = 0;
    if (w->kind != IR_MAP || w->u.map.kind != IR_MAP_COND) return w;
    const IrNode *cond = w->u.map.args[0], *d = w->u.map.args[1], *k = w->u.map.args[2];
    if (cond->kind != IR_MAP || cond->u.map.kind != IR_MAP_BINARY ||
        (cond->u.map.op != VOP_GT && cond->u.map.op != VOP_GE) || cond->u.map.args[0] != d || k->kind != IR_CONST ||
        cond->u.map.args[1]->kind != IR_CONST ||
        !value_is_number(k->u.constant) || !value_is_number(cond->u.map.args[1]->u.constant))
        return w;
    double kv = value_as_double(k->u.constant);
    if (kv != value_as_double(cond->u.map.args[1]->u.constant) || !(kv > 0)) return w;
    *c = kv;
    return d;
}

/* For A = num * (c1 / W) or num / W, W = max(den, c) or den (of range > 0), den = sum_k e_k and
 * num = sum_k e_k v_k over the same reals e_k >= 0 (den maybe a head's copy): A is c1 times a
 * weighted mean of the v_k (scaled by den / c where den < c), so it lies within c1 [min v, max v]
 * and its error is at most about (max v - min v) times the e_k's relative error, where the sum of
 * the terms' bounds would add every |v_k| (U's normalisation: 8 rows, each |v| <= 12). With the
 * model's e'_k = e_k (1 + rho_k) + alpha_k, v'_k = v_k + beta_k, products rounded by pi (relative)
 * and eps, num's sums by R_n, den' within rho_d den + E_d, G = c1 f(W') (1 + gamma_r) + gamma_a for
 * f(t) = 1 / max(t, c): |num' - num| <= den P + Q and |f(t') - f(t)| <= |t' - t| f(t) f(t'),
 * whence the bound below. Replaces r's bound (REAL_PRODUCT or REAL_QUOTIENT) where that is
 * smaller at |value| 1. */
static void weighted_mean(Plan *p, const SopInfo *info, RealInfo *r) {
    const IrNode *n = info->node, *num = n->u.map.args[0], *w = NULL, *g = NULL;
    double c1 = 1;
    if (r->how == REAL_QUOTIENT && !r->split && n->u.map.op == VOP_DIV) {
        w = n->u.map.args[1];
    } else if (r->how == REAL_PRODUCT && n->u.map.op == VOP_MUL) {
        for (int side = 0; side < 2 && !w; side++) {
            const IrNode *x = n->u.map.args[side];
            const RealInfo *gx = p->info[x->id].real;
            if (x->kind == IR_MAP && x->u.map.kind == IR_MAP_BINARY && x->u.map.op == VOP_DIV &&
                x->u.map.args[0]->kind == IR_CONST && value_is_number(x->u.map.args[0]->u.constant) && gx &&
                gx->how == REAL_FN && value_as_double(x->u.map.args[0]->u.constant) > 0) {
                g = x;
                w = x->u.map.args[1];
                c1 = value_as_double(x->u.map.args[0]->u.constant);
                num = n->u.map.args[1 - side];
            }
        }
    }
    if (!w) return;
    double c;
    const IrNode *d = clamped(w, &c), *den = uncopied(p, d);
    const IrNode *nt[WM_MAX_TERMS], *dt[WM_MAX_TERMS];
    size_t nn = 0, nd = 0;
    if (!sum_terms(num, nt, &nn) || !sum_terms(den, dt, &nd) || nn != nd || nn == 0) return;
    bool used[WM_MAX_TERMS] = {false};
    double V = 0, beta = 0, rho = 0, alpha = 0, pi = 0, eps = 0, terms = 0, vlo = 0, vhi = 0;
    for (size_t k = 0; k < nn; k++) { /* each term of num: e_j * v, for a term e_j of den not yet used */
        const IrNode *t = nt[k];
        if (t->kind != IR_MAP || t->u.map.kind != IR_MAP_BINARY || t->u.map.op != VOP_MUL || !p->info[t->id].real ||
            p->info[t->id].real->how != REAL_PRODUCT)
            return;
        size_t j = nd;
        int side = 0;
        for (; side < 2 && j == nd; side++)
            for (size_t i = 0; i < nd && j == nd; i++)
                if (!used[i] && dt[i] == t->u.map.args[side]) j = i;
        if (j == nd) return;
        used[j] = true;
        const IrNode *e = t->u.map.args[side - 1], *v = t->u.map.args[2 - side];
        Ival re, rv, rt;
        Bound be, bv, bt;
        if (!arg_range(p, e, &re, &be) || !arg_range(p, v, &rv, &bv) || !arg_range(p, t, &rt, &bt) || re.lo < 0) return;
        Bound own = product_own(p, re, be, rv, bv, false, NULL);
        V = fmax(V, mag(rv));
        vlo = fmin(vlo, rv.lo);
        vhi = fmax(vhi, rv.hi);
        beta = fmax(beta, abs_of(bv, rv));
        rho = fmax(rho, be.rel);
        alpha = fmax(alpha, be.abs);
        pi = fmax(pi, own.rel);
        eps = fmax(eps, own.abs);
        terms += abs_of(bt, rt);
    }
    Ival rn, rd, rw;
    Bound bn, bd, bw;
    if (!arg_range(p, num, &rn, &bn) || !arg_range(p, d, &rd, &bd) || !arg_range(p, w, &rw, &bw)) return;
    if (c == 0) c = rd.lo; /* 1 / den: den's interval must stay away from 0 */
    if (!(c > 0) || rd.lo < 0) return;
    /* W = max(D, c) computed exactly but for its rounding: D's error, plus that */
    double m = (double)nn, rho_d = bd.rel, e_d = bd.abs;
    if (w != d) {
        const RealInfo *wr = p->info[w->id].real;
        if (!wr || wr->how != REAL_FN || wr->arg != d || !is_clamp(&wr->fn, c)) return;
        e_d += rounding(mag(rw), fn_units(&wr->fn));
    }
    double R_n = fmax(0, abs_of(bn, rn) - terms), den_max = rd.hi;
    if (!(rho_d + e_d / c < 0.5)) return;
    double kappa = 1 / (1 - rho_d - e_d / c);
    /* G's own error (exact W): the reciprocal's pieces and rounding */
    const RealInfo *gi = g ? p->info[g->id].real : NULL, *gin = gi ? p->info[gi->arg->id].real : NULL;
    const RealFn *fn = gi ? &gi->fn : &r->fn;
    Bound ga = fn_bound(p, fn, gin ? gin->range : rw, (Bound){0, 0}, fn->range);
    double gr = ga.rel, gab = ga.abs;
    double P = (rho + pi + rho * pi) * V + (1 + rho) * (1 + pi) * beta;
    double Q = m * alpha * (V + beta) * (1 + pi) + m * eps + R_n;
    double E0 = P * c1 * kappa * (1 + gr) + Q * c1 * kappa * (1 + gr) / c + (den_max * P + Q) * gab +
                V * c1 * (1 + gr) * kappa * (rho_d + e_d / c) + V * c1 * gr + V * den_max * gab +
                V * c1 * rounding(1, 2 * m + 4); /* the reference's own sums: |num| <= V den within rounding */
    /* the reference's own roundings of num, den and the quotient move it off the weighted mean
     * by a few ulps per term (out22c-002: 1.7000000000000002 for every v_k = 1.7) */
    double slack = V * c1 * rounding(1, 2 * m + 4);
    Ival ra = ival_of(c1 * fmin(vlo, 0) - slack, c1 * fmax(vhi, 0) + slack);
    Ival rg = gi ? gi->range : r->recip_range;
    Bound bg = gi ? bound_of(gi) : (Bound){0, 0};
    Bound fin = product_own(p, rn, bn, rg, bg, !g, NULL);
    double E = E0 * (1 + fin.rel) + fin.rel * V * c1 + fin.abs;
    if (!(E < r->err + r->rel * fmin(1, mag(r->range)))) return; /* smaller where --tol measures it, at |value| 1 */
    r->err = E;
    r->rel = 0;
    r->range = (Ival){fmax(r->range.lo, ra.lo), fmin(r->range.hi, ra.hi)};
}

static bool real_product(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    if (n->u.map.kind != IR_MAP_BINARY || (n->u.map.op != VOP_MUL && n->u.map.op != VOP_DIV)) return false;
    const IrNode *a = n->u.map.args[0], *b = n->u.map.args[1];
    Ival ra, rb;
    Bound ba, bb;
    if (!arg_range(p, a, &ra, &ba) || !arg_range(p, b, &rb, &bb)) return false;
    /* with ReLU MLPs the log domain where it applies; with gated ones products are exact, and a
     * quotient takes whichever of x * (1 / y) and the log domain proves the smaller bound (1 / y
     * over a wide range sums large terms, whose rounding adds up) */
    bool divide = n->u.map.op == VOP_DIV;
    const RealInfo *logq = NULL;
    if ((!p->gated_mlp || divide) && real_log_product(p, info, divide, ra, ba, rb, bb)) {
        if (!p->gated_mlp) return true;
        logq = info->real;
    }
    RealInfo *r = ARENA_NEW(p->arena, RealInfo);
    if (n->u.map.op == VOP_DIV) {
        const SopInfo *y = &p->info[b->id];
        const ValueSet *B = y->real ? y->real->finite : &y->vs;
        bool finite = B && !B->unbounded && B->numeric && b->kind != IR_CONST;
        if (!y->real && !finite) return false;
        if (!y->real && single_divisor_rounded_two_ways(p, b)) {
            p->info[b->id].as_real = p->values_again = true; /* computed as a real: then again */
            return true;
        }
        double hole = finite ? zero_hole(B) : 0;
        if (hole > 0 && bb.abs + bb.rel * hole >= hole / 4) hole = 0; /* the model's divisor too far off to tell 0 */
        if (finite && y->real && B->n) /* the reference's values are these: the model's are near */
            rb = (Ival){fmax(rb.lo, value_as_double(B->vals[0])), fmin(rb.hi, value_as_double(B->vals[B->n - 1]))};
        Ival Y = model_range(rb, bb);
        if (Y.lo <= 0 && Y.hi >= 0 && !(hole > 0)) {
            char why[96];
            snprintf(why, sizeof why, "divides by a value whose range [%g, %g] holds 0", Y.lo, Y.hi);
            if (logq) info->real = (RealInfo *)logq;
            else refuse(p, info, "%s", why);
            return true;
        }
        /* 1 / y as a function of y: a synthetic map node, evaluated like the program's */
        IrNode *one = ARENA_NEW(p->arena, IrNode), *recip = ARENA_NEW(p->arena, IrNode);
        one->kind = IR_CONST;
        one->u.constant = value_float(1.0);
        *recip = *n;
        recip->u.map.args[0] = one;
        char why[256];
        /* linear: a gated MLP multiplies its pieces by x (mlp.c) */
        Ival recip_ref;
        bool built = hole > 0 ? split_recip(p, recip, b, rb, bb, hole, r, &recip_ref, why, sizeof why)
                              : realfn_build(p, recip, b, Y, p->real_tol, p->real_margin, false, &r->fn, why, sizeof why);
        if (!built) {
            if (logq) info->real = (RealInfo *)logq;
            else refuse(p, info, "%s", why);
            return true;
        }
        r->how = REAL_QUOTIENT;
        r->arg = b;
        r->zero_hole = hole;
        r->split = hole > 0;
        if (r->split) { /* then x * (1 / y) */
            rb = recip_ref;
            bb = (Bound){r->err, r->rel};
        } else {
            Ival ry = rb;
            rb = r->fn.range;
            bb = fn_bound(p, &r->fn, ry, bb, rb);
            double er = abs_of(bb, rb);
            r->recip_range = ival_of(rb.lo - er, rb.hi + er);
        }
    } else {
        r->how = REAL_PRODUCT;
    }
    /* x' y' = x y (1 + dx)(1 + dy) + x (1 + dx) ey + y (1 + dy) ex + ex ey */
    Ival range = ival_of(fmin(fmin(ra.lo * rb.lo, ra.lo * rb.hi), fmin(ra.hi * rb.lo, ra.hi * rb.hi)),
                         fmax(fmax(ra.lo * rb.lo, ra.lo * rb.hi), fmax(ra.hi * rb.lo, ra.hi * rb.hi)));
    if (a == b && n->u.map.op == VOP_MUL) /* x * x: a square, never negative */
        range = ival_of(ra.lo >= 0 ? ra.lo * ra.lo : ra.hi <= 0 ? ra.hi * ra.hi : 0, range.hi);
    Bound own = product_own(p, ra, ba, rb, bb, divide, &r->sq);
    r->range = range;
    r->err = mag(ra) * (1 + ba.rel) * bb.abs + mag(rb) * (1 + bb.rel) * ba.abs + ba.abs * bb.abs + own.abs;
    r->rel = (1 + ba.rel) * (1 + bb.rel) - 1 + own.rel;
    r->finite = finite_values(p, info);
    weighted_mean(p, info, r);
    info->real = r;
    if (logq && logq->err + logq->rel < r->err + r->rel) info->real = (RealInfo *)logq;
    info->vs.unbounded = true;
    info->vs.numeric = true;
    return true;
}

/* ---- per-cell intervals: where positions correlate (softmax's n * aggregate(sel_k, exp) sums,
 * of which exactly one is non-zero at each position) ---- */

static const Ival EMPTY = {INFINITY, -INFINITY};

/* The length of cell c = pos_at(n, i). */
static size_t cell_length(size_t c) {
    size_t n = 1;
    while (pos_at(n + 1, 0) <= c) n++;
    return n;
}

static Ival cell_of(Plan *p, const IrNode *a, size_t c) {
    if (a->kind == IR_CONST) return (Ival){value_as_double(a->u.constant), value_as_double(a->u.constant)};
    const SopInfo *x = &p->info[a->id];
    if (x->real) return x->real->cell ? x->real->cell[c] : x->real->range;
    if (x->pos && x->pos->val) {
        if (x->pos->fail[c] || !value_is_number(x->pos->val[c])) return EMPTY;
        double v = value_as_double(x->pos->val[c]);
        return (Ival){v, v};
    }
    if (x->vs.unbounded || !x->vs.numeric || x->vs.n == 0) return (Ival){-INFINITY, INFINITY};
    return (Ival){value_as_double(x->vs.vals[0]), value_as_double(x->vs.vals[x->vs.n - 1])};
}

/* The absolute part of a's error at cell c. */
static double cell_err_of(Plan *p, const IrNode *a, size_t c) {
    const SopInfo *x = &p->info[a->id];
    if (a->kind == IR_CONST || !x->real) return 0;
    return x->real->cell_err ? x->real->cell_err[c] : x->real->err;
}

/* Whether a's interval varies by cell. */
static bool has_cells(const Plan *p, const IrNode *a) {
    const SopInfo *x = &p->info[a->id];
    return (x->real && x->real->cell) || (!x->real && x->pos && x->pos->val);
}

static Ival cell_mul(Ival a, Ival b) {
    return ival_of(fmin(fmin(a.lo * b.lo, a.lo * b.hi), fmin(a.hi * b.lo, a.hi * b.hi)),
                   fmax(fmax(a.lo * b.lo, a.lo * b.hi), fmax(a.hi * b.lo, a.hi * b.hi)));
}

static Ival cell_affine(const IrNode *n, Ival a, Ival b) {
    if (a.lo > a.hi || b.lo > b.hi) return EMPTY;
    switch (n->u.map.op) {
    case VOP_NEG: return (Ival){-a.hi, -a.lo};
    case VOP_POS: return a;
    case VOP_ADD: return ival_of(a.lo + b.lo, a.hi + b.hi);
    case VOP_SUB: return ival_of(a.lo - b.hi, a.hi - b.lo);
    case VOP_MUL: return cell_mul(a, b); /* by a constant */
    case VOP_DIV: { /* by a non-zero constant */
        double c = 1 / b.lo;
        return c >= 0 ? ival_of(a.lo * c, a.hi * c) : ival_of(a.hi * c, a.lo * c);
    }
    default: return (Ival){-INFINITY, INFINITY};
    }
}

/* Refines a real s-op's range from its arguments' per-cell intervals (aggregates over positional
 * selectors: the default only where nothing is selected; affine and gated maps: cell by cell). */
static void real_cells(Plan *p, SopInfo *info) {
    RealInfo *r = info->real;
    const IrNode *n = info->node;
    size_t first = pos_at(p->win_lo, 0), end = pos_at(p->win_hi + 1, 0);
    if (!p->have_pos || !r || end > ((size_t)1 << 16)) return;
    const PosTable *sel = n->kind == IR_AGGREGATE ? p->info[n->u.aggregate.selector->id].pos : NULL;
    bool any = sel && sel->count;
    if (n->kind == IR_MAP && (r->how == REAL_AFFINE || r->how == REAL_GATED))
        for (uint32_t j = 0; j < n->u.map.nargs; j++) any = any || has_cells(p, n->u.map.args[j]);
    if (!any) return;
    Ival *cell = ARENA_ARRAY(p->arena, Ival, end), hull = EMPTY;
    double *err = ARENA_ARRAY(p->arena, double, end), worst = 0;
    for (size_t c = 0; c < end; c++) {
        Ival v = EMPTY;
        double e = 0;
        if (n->kind == IR_AGGREGATE) {
            const SopInfo *src = &p->info[n->u.aggregate.sop->id];
            double d = value_as_double(n->u.aggregate.default_value);
            v = sel->fail[c] ? EMPTY : sel->count[c] == 0 ? (Ival){d, d} : src->real->range;
            e = sel->fail[c] || sel->count[c] == 0 ? 0 : r->err; /* the default comes from BOS, exactly */
            if (!sel->fail[c] && sel->count[c] > 0 && sel->keys) { /* the hull of the keys it selects there */
                size_t len = cell_length(c), i = c - pos_at(len, 0);
                v = EMPTY;
                for (size_t k = 0; k < len; k++)
                    if (pos_selects(sel, len, i, k)) {
                        Ival s = cell_of(p, n->u.aggregate.sop, pos_at(len, k));
                        v = (Ival){fmin(v.lo, s.lo), fmax(v.hi, s.hi)};
                    }
            }
        } else if (r->how == REAL_GATED) {
            const Gated *gd = info->gated;
            Ival g = cell_of(p, gd->gate, c);
            for (size_t k = 0; k < gd->n && g.lo <= g.hi; k++) { /* the gate values within g's cell interval */
                double gv = value_as_double(p->info[gd->gate->id].vs.vals[k]);
                if (!value_is_number(p->info[gd->gate->id].vs.vals[k]) || gv < g.lo || gv > g.hi) continue;
                const IrNode *yn = gd->y2 && gd->on_y2[k] ? gd->y2 : gd->y;
                Ival y = cell_of(p, yn, c);
                Ival t = y.lo <= y.hi ? cell_mul(y, (Ival){gd->a[k], gd->a[k]}) : EMPTY;
                t = ival_of(t.lo + gd->b[k], t.hi + gd->b[k]);
                v = (Ival){fmin(v.lo, t.lo), fmax(v.hi, t.hi)};
                /* as real_gated's bound, with y's error here */
                const RealInfo *yr = p->info[yn->id].real;
                double ey = cell_err_of(p, yn, c) + (r->rel > 0 || !yr ? 0 : yr->rel * mag(y));
                e = fmax(e, fabs(gd->a[k]) * ey + rounding(2 * gd->bound + 1, 8));
            }
        } else {
            const IrNode *an = n->u.map.args[0], *bn = n->u.map.nargs > 1 ? n->u.map.args[1] : NULL;
            Ival a = cell_of(p, an, c), b = bn ? cell_of(p, bn, c) : (Ival){0, 0};
            v = cell_affine(n, a, b);
            /* as affine_map's bound, with the arguments' errors here */
            const RealInfo *ra = p->info[an->id].real, *rb = bn ? p->info[bn->id].real : NULL;
            double ea = cell_err_of(p, an, c), eb = bn ? cell_err_of(p, bn, c) : 0;
            if (v.lo > v.hi) e = 0;
            else if (n->u.map.op == VOP_ADD || n->u.map.op == VOP_SUB) {
                if (r->rel > 0) e = ea + eb;
                else e = ea + (ra ? ra->rel * mag(a) : 0) + eb + (rb ? rb->rel * mag(b) : 0) + rounding(mag(a) + mag(b), 4);
            } else if (n->u.map.op == VOP_MUL || n->u.map.op == VOP_DIV) {
                double k = an->kind == IR_CONST ? value_as_double(an->u.constant) : bn ? value_as_double(bn->u.constant) : 1;
                e = (an->kind == IR_CONST ? eb : ea) * (n->u.map.op == VOP_DIV ? 1 / fabs(k) : fabs(k));
            } else {
                e = ea; /* -x, +x */
            }
        }
        cell[c] = v;
        err[c] = fmin(e, r->err); /* never above the bound without cells */
        if (c >= first && v.lo <= v.hi) worst = fmax(worst, err[c]);
        if (c >= first && v.lo <= v.hi) hull = (Ival){fmin(hull.lo, v.lo), fmax(hull.hi, v.hi)};
    }
    r->cell = cell;
    r->cell_err = err;
    r->err = worst;
    if (hull.lo <= hull.hi) r->range = (Ival){fmax(r->range.lo, hull.lo), fmin(r->range.hi, hull.hi)};
}

/* Whether map n tests a real argument at single points: ==, !=, in, a lookup, or a truth test
 * (not, indicator, and/or, a conditional) is x != 0. realfn.c finds a function's jumps between
 * the points it samples, and a change at one point has no between: the model would miss it. */
static bool point_test(const Plan *p, const IrNode *n) {
    const IrNode *a0 = n->u.map.args[0];
    bool real0 = p->info[a0->id].real != NULL;
    switch (n->u.map.kind) {
    case IR_MAP_UNARY: return real0 && (n->u.map.op == VOP_NOT || n->u.map.op == VOP_INDICATOR);
    case IR_MAP_BINARY:
        if (n->u.map.op == VOP_AND || n->u.map.op == VOP_OR) return real0;
        return (n->u.map.op == VOP_EQ || n->u.map.op == VOP_NE) &&
               (real0 || (n->u.map.nargs > 1 && p->info[n->u.map.args[1]->id].real != NULL));
    case IR_MAP_COND: case IR_MAP_IN: case IR_MAP_LOOKUP: return real0;
    default: return false;
    }
}

/* Whether n reads a real s-op. */
static bool reads_real(const Plan *p, const IrNode *n) {
    if (n->kind == IR_AGGREGATE) return p->info[n->u.aggregate.sop->id].real != NULL;
    if (n->kind != IR_MAP) return false;
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (p->info[n->u.map.args[j]->id].real) return true;
    return false;
}

/* With finite tokens: a product or quotient of finite numbers whose results are too many to list
 * (Invert3x3's `major / det`: 267 x 27,407 quotients). It is computed as a real, from its
 * arguments' numbers, within a bound. */
static bool too_many_numbers(const Plan *p, const SopInfo *info) {
    const IrNode *n = info->node;
    if (n->kind != IR_MAP || n->u.map.kind != IR_MAP_BINARY || !(info->vs.unbounded || info->as_real)) return false;
    if (n->u.map.op != VOP_MUL && n->u.map.op != VOP_DIV) return false; /* sums are free views, exact */
    for (uint32_t j = 0; j < 2; j++) {
        const IrNode *a = n->u.map.args[j];
        const ValueSet *A = &p->info[a->id].vs;
        if (a->kind == IR_CONST ? !value_is_number(a->u.constant) : A->unbounded || !A->numeric || A->n == 0) return false;
        for (size_t i = 0; a->kind != IR_CONST && i < A->n; i++)
            if (A->vals[i].kind == VAL_STR) return false;
    }
    return true;
}

/* A product of finite numbers, one of which has few values (a length): gated by it, exact but for
 * rounding (Invert3x3's det, length * mean). */
static bool few_valued_factor(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    if (n->u.map.op != VOP_MUL) return false;
    for (uint32_t j = 0; j < 2; j++) {
        const IrNode *g = n->u.map.args[j], *y = n->u.map.args[1 - j];
        if (g->kind != IR_CONST && y->kind != IR_CONST && real_gated(p, info, g, y, NULL)) {
            real_cells(p, info);
            return true;
        }
    }
    return false;
}

static bool reals_node_in(Plan *p, SopInfo *info);

bool reals_node(Plan *p, SopInfo *info) {
    bool ok = reals_node_in(p, info);
    const RealInfo *r = info->real;
    /* float64 overflows where the values reach past DBL_MAX: the reference then computes inf (or
     * raises), which no model can match (out22-001: x^4 over +-1e100 was written, then raised) */
    if (ok && r && r->how != REAL_REFUSED &&
        !(isfinite(r->range.lo) && isfinite(r->range.hi) && isfinite(r->err) && isfinite(r->rel))) {
        char why[160];
        if (isfinite(r->range.lo) && isfinite(r->range.hi)) /* the values fit, their error bound does not */
            snprintf(why, sizeof why, "has values up to %g but no finite error bound (an unbounded slope where its "
                     "argument errs, or float64 overflow); narrow --range", mag(r->range));
        else
            snprintf(why, sizeof why, "can overflow float64: its values can pass the largest double; narrow --range");
        refuse(p, info, "%s", why);
    }
    return ok;
}

static bool reals_node_in(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    info->real = NULL;
    if (!p->numeric_tokens && !reads_real(p, n) && !too_many_numbers(p, info)) return true;
    if (n->kind == IR_TOKENS) {
        new_real(p, info, (Ival){p->token_lo, p->token_hi}, (Bound){0, 0}, REAL_INPUT);
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
        /* a mean of values of one sign keeps their relative error; its own rounding is relative */
        bool one = selector_at_most_one(p, n->u.aggregate.selector);
        Bound b = bound_of(src->real), sum = {b.abs, b.rel + rounding(1, (double)p->max_len + 4)};
        if (!one_sign(src->real->range)) sum = (Bound){abs_of(b, src->real->range) + rounding(mag(r), (double)p->max_len + 4), 0};
        new_real(p, info, r, one ? b : sum, one ? REAL_COPY : REAL_MEAN);
        real_cells(p, info);
        return true;
    }
    if (n->kind != IR_MAP) return true;
    /* its direct arguments: a map of finite-valued functions of reals is finite itself (tabulated) */
    const IrNode *real = NULL, *finite = NULL;
    bool one_real = true, one_finite = true;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const IrNode *a = n->u.map.args[j];
        if (a->kind == IR_CONST) continue;
        const IrNode **slot = p->info[a->id].real ? &real : &finite;
        bool *one = p->info[a->id].real ? &one_real : &one_finite;
        if (*slot && *slot != a) *one = false;
        *slot = a;
    }
    if (!real) { /* finite arguments: a product or quotient too large to tabulate, or nothing real */
        if (too_many_numbers(p, info) && !few_valued_factor(p, info)) real_product(p, info);
        return true;
    }
    RealReads rr = {0};
    real_reads(p, n, &rr, false);
    if (rr.refused) { /* an argument's own refusal says why (out22f-004: a comparison refused at the
                       * range's end was reported as the conditional's equality test) */
        info->real = (RealInfo *)rr.refused;
        return true;
    }
    if (point_test(p, n)) {
        refuse(p, info, "tests a real number for equality (x == c, x in [...], or its truth, x != 0), which changes at "
                        "single points that no margin can bracket: compare with < or > instead%s", "");
        return true;
    }
    if (affine_map(p, info)) {
        real_cells(p, info);
        return true;
    }
    /* x * x with gated MLPs: the exact product beats a square by pieces; and squares by depth
     * beat one MLP of chords where they are tried (out23-001: x * x refused at --tol 1e-10, where
     * x * fresh(x) states 4.1e-13) */
    if ((p->gated_mlp || p->deep_squares) && n->u.map.kind == IR_MAP_BINARY && n->u.map.op == VOP_MUL && p->info[n->u.map.args[0]->id].real &&
        p->info[n->u.map.args[1]->id].real && real_product(p, info))
        return true;
    /* a function of one real, its direct argument (y < 0 for y = a - b) or what that is made of
     * (f(2 t) + t): one MLP; a gate would wait for the comparison's own */
    if (!rr.several && !rr.finite) return real_function(p, info, rr.leaf);
    RealReads deep = {0};
    real_reads(p, n, &deep, true);
    if (!deep.refused && !deep.several && !deep.finite) return real_function(p, info, deep.leaf);
    if (one_real && finite && one_finite && real_gated(p, info, finite, real, NULL)) {
        real_cells(p, info);
        return true;
    }
    /* `y if c else y2` between two reals: a gate that picks one of them */
    IrNode *const *arg = n->u.map.args;
    if (n->u.map.kind == IR_MAP_COND && !p->info[arg[0]->id].real && p->info[arg[1]->id].real &&
        p->info[arg[2]->id].real && real_gated(p, info, arg[0], arg[1], arg[2])) {
        real_cells(p, info);
        return true;
    }
    if (real_product(p, info)) return true;
    refuse(p, info, "combines real values in a way the compiler cannot bound (%s)",
           n->u.map.kind == IR_MAP_COND ? "a conditional of several reals"
           : n->u.map.kind == IR_MAP_BINARY || n->u.map.kind == IR_MAP_UNARY ? value_op_text(n->u.map.op)
                                                                              : "a lookup");
    return true;
}
