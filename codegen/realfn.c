/* Functions of one real s-op, as piecewise-linear approximations with proven error bounds.
 *
 * A map whose only varying argument is real (2.718 ^ x, x ^ 0.5, 1 / x, `0 if x < 0 else x`,
 * round(x), `x < c`) is a function f of that argument x over the interval X that x's value (and
 * the model's error on it) can take. realfn_build analyses the map's expression tree:
 *   - comparisons of x (or of an affine form of x) with constants, and round(), split X into
 *     pieces on which f is smooth; at each split f is either continuous (no price) or jumps (the
 *     model cannot decide exactly near the split: a margin the runtime checks);
 *   - on each piece, interval arithmetic with first and second derivatives (jets, outward
 *     rounding) bounds |f'| and |f''|, and the piece is split until the chord error bound
 *     min((b-a)^2 max|f''| / 8, (b-a)/2 (max f' - min f'), max f - min f) is below the tolerance;
 *   - the result is a continuous piecewise-linear function through knots (x_k, f(x_k)), with a
 *     ramp of width 2 * margin across every jump, whose error outside the margins is at most the
 *     tolerance, and the Lipschitz constant of f (how the argument's error propagates).
 * Everything the analysis cannot bound (x * x > 2, a power of a negative base, a division whose
 * interval holds 0) is refused with a message: never a bound that is not one. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

/* ---- intervals, rounded outward ---- */

/* [min, max] of the two bounds, rounded outward (never an inverted interval, whatever order a
 * caller computes them in). A computed 0 stays 0, as in reals.c: a sum or difference that rounds
 * to 0 is exact, and a piece that starts at 0 must not reach below it (the root of
 * `0.0 if x < 0 else x` read -4.9e-324, out21c-004); what it loses, a product's underflow below
 * DBL_MIN, the rounding terms cover. */
static double down(double x) { return x == 0 ? 0 : nextafter(x, -INFINITY); }
static double up(double x) { return x == 0 ? 0 : nextafter(x, INFINITY); }
static Ival ival(double lo, double hi) { return (Ival){down(fmin(lo, hi)), up(fmax(lo, hi))}; }
static Ival ival_point(double x) { return (Ival){x, x}; }
static Ival iv_add(Ival a, Ival b) { return ival(a.lo + b.lo, a.hi + b.hi); }
static Ival iv_sub(Ival a, Ival b) { return ival(a.lo - b.hi, a.hi - b.lo); }
static Ival iv_neg(Ival a) { return (Ival){-a.hi, -a.lo}; }
static Ival iv_scale(Ival a, double c) { return c >= 0 ? ival(a.lo * c, a.hi * c) : ival(a.hi * c, a.lo * c); }
static Ival iv_mul(Ival a, Ival b) {
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}, lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++) {
        if (isnan(p[i])) return (Ival){-INFINITY, INFINITY}; /* 0 * inf */
        lo = fmin(lo, p[i]);
        hi = fmax(hi, p[i]);
    }
    return isnan(lo) ? (Ival){-INFINITY, INFINITY} : ival(lo, hi);
}
static bool iv_has_zero(Ival a) { return a.lo <= 0 && a.hi >= 0; }
static Ival iv_recip(Ival a) { return ival(1 / a.hi, 1 / a.lo); } /* 0 not in a */
static Ival iv_div(Ival a, Ival b) { return iv_mul(a, iv_recip(b)); }
static Ival iv_hull(Ival a, Ival b) { return (Ival){fmin(a.lo, b.lo), fmax(a.hi, b.hi)}; }
static double iv_mag(Ival a) { return fmax(fabs(a.lo), fabs(a.hi)); }

/* x^p for x in a, a > 0 or p an integer: monotone pieces */
static Ival iv_pow(Ival a, double e) {
    if (e == floor(e) && iv_has_zero(a) && fmod(e, 2) == 0 && e > 0) { /* even power through 0 */
        double m = fmax(pow(fabs(a.lo), e), pow(fabs(a.hi), e));
        return ival(0, m);
    }
    double x = pow(a.lo, e), y = pow(a.hi, e);
    return ival(fmin(x, y), fmax(x, y));
}

/* ---- jets: f and its first three derivatives over an interval of x ---- */

typedef struct Jet {
    Ival v, d1, d2, d3;
} Jet;

static Jet jet_const(double c) { return (Jet){ival_point(c), ival_point(0), ival_point(0), ival_point(0)}; }
static Jet jet_identity(Ival X) { return (Jet){X, ival_point(1), ival_point(0), ival_point(0)}; }

static Jet jet_add(Jet a, Jet b, double sb) {
    Jet r = {iv_add(a.v, iv_scale(b.v, sb)), iv_add(a.d1, iv_scale(b.d1, sb)), iv_add(a.d2, iv_scale(b.d2, sb)),
             iv_add(a.d3, iv_scale(b.d3, sb))};
    return r;
}

/* Leibniz: (ab)' = a1 b + a b1, (ab)'' = a2 b + 2 a1 b1 + a b2, (ab)''' = a3 b + 3 a2 b1 + 3 a1 b2 + a b3 */
static Jet jet_mul(Jet a, Jet b) {
    Jet r;
    r.v = iv_mul(a.v, b.v);
    r.d1 = iv_add(iv_mul(a.d1, b.v), iv_mul(a.v, b.d1));
    r.d2 = iv_add(iv_add(iv_mul(a.d2, b.v), iv_scale(iv_mul(a.d1, b.d1), 2)), iv_mul(a.v, b.d2));
    r.d3 = iv_add(iv_add(iv_mul(a.d3, b.v), iv_scale(iv_mul(a.d2, b.d1), 3)),
                  iv_add(iv_scale(iv_mul(a.d1, b.d2), 3), iv_mul(a.v, b.d3)));
    return r;
}

/* g(u), with enclosures g1, g2, g3 of g's derivatives over u's values (Faa di Bruno):
 * (g u)1 = g1 u1, (g u)2 = g2 u1^2 + g1 u2, (g u)3 = g3 u1^3 + 3 g2 u1 u2 + g1 u3 */
static Jet jet_chain(Jet u, Ival g, Ival g1, Ival g2, Ival g3) {
    Jet r;
    r.v = g;
    r.d1 = iv_mul(g1, u.d1);
    r.d2 = iv_add(iv_mul(g2, iv_mul(u.d1, u.d1)), iv_mul(g1, u.d2));
    r.d3 = iv_add(iv_add(iv_mul(g3, iv_mul(u.d1, iv_mul(u.d1, u.d1))), iv_scale(iv_mul(g2, iv_mul(u.d1, u.d2)), 3)),
                  iv_mul(g1, u.d3));
    return r;
}

/* The analysis context: the real leaf and how its pieces are being split. */

typedef struct Ctx {
    Plan *p;
    const IrNode *leaf;
    RealElem elem;       /* with no map: the elementary function analysed */
    char why[200];       /* set on failure */
    double *cuts;        /* thresholds found (x values where f may not be smooth) */
    size_t n_cuts, cap;
    double shift;        /* the most the reference's rounding moves a comparison's cut */
} Ctx;

static bool jet_of(Ctx *c, const IrNode *n, Ival X, double mid, Jet *out);
static bool ref_err(Ctx *c, const IrNode *n, Ival X, double mid, double *abs, double *rel);

static void add_cut(Ctx *c, double x) {
    if (c->n_cuts == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->cuts = arena_grow(c->p->arena, c->cuts, c->n_cuts, c->cap, sizeof *c->cuts);
    }
    c->cuts[c->n_cuts++] = x;
}

/* The affine form a*x + b of a subtree, when it is one (false otherwise). */
static bool affine_in(const Ctx *c, const IrNode *n, double *a, double *b) {
    if (n == c->leaf) { *a = 1; *b = 0; return true; }
    if (n->kind == IR_CONST) {
        if (!value_is_number(n->u.constant)) return false;
        *a = 0;
        *b = value_as_double(n->u.constant);
        return true;
    }
    if (n->kind != IR_MAP) return false;
    double a1, b1, a2 = 0, b2 = 0;
    if (!affine_in(c, n->u.map.args[0], &a1, &b1)) return false;
    if (n->u.map.kind == IR_MAP_UNARY) {
        if (n->u.map.op == VOP_NEG) { *a = -a1; *b = -b1; return true; }
        if (n->u.map.op == VOP_POS) { *a = a1; *b = b1; return true; }
        return false;
    }
    if (n->u.map.kind != IR_MAP_BINARY || !affine_in(c, n->u.map.args[1], &a2, &b2)) return false;
    switch (n->u.map.op) {
    case VOP_ADD: *a = a1 + a2; *b = b1 + b2; return true;
    case VOP_SUB: *a = a1 - a2; *b = b1 - b2; return true;
    case VOP_MUL:
        if (a1 == 0) { *a = b1 * a2; *b = b1 * b2; return true; }
        if (a2 == 0) { *a = a1 * b2; *b = b1 * b2; return true; }
        return false;
    case VOP_DIV:
        if (a2 == 0 && b2 != 0) { *a = a1 / b2; *b = b1 / b2; return true; }
        return false;
    default: return false;
    }
}

/* The jet of an elementary function over X: e^x, or ln|x| for X of one sign. */
static bool elem_jet(RealElem e, Ival X, Jet *out) {
    if (e == RE_EXP) {
        Ival v = ival(exp(X.lo), exp(X.hi));
        *out = (Jet){v, v, v, v};
        return isfinite(v.hi);
    }
    /* ln|x|: 1/x, -1/x^2, 2/x^3 */
    double a = 2 / (X.lo * X.lo * X.lo), b = 2 / (X.hi * X.hi * X.hi);
    if (X.lo > 0) {
        *out = (Jet){ival(log(X.lo), log(X.hi)), ival(1 / X.hi, 1 / X.lo), ival(-1 / (X.lo * X.lo), -1 / (X.hi * X.hi)),
                     ival(fmin(a, b), fmax(a, b))};
        return true;
    }
    if (X.hi < 0) {
        *out = (Jet){ival(log(-X.hi), log(-X.lo)), ival(1 / X.hi, 1 / X.lo), ival(-1 / (X.hi * X.hi), -1 / (X.lo * X.lo)),
                     ival(fmin(a, b), fmax(a, b))};
        return true;
    }
    return false;
}

/* Collects the x values at which a comparison or a round() in the tree can change: the pieces. */
static bool find_cuts(Ctx *c, const IrNode *n, Ival X) {
    if (!n || n == c->leaf || n->kind == IR_CONST) return true;
    if (n->kind != IR_MAP) {
        snprintf(c->why, sizeof c->why, "reads a %s besides the real value", ir_kind_name(n->kind));
        return false;
    }
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (!find_cuts(c, n->u.map.args[j], X)) return false;
    bool cmp = n->u.map.kind == IR_MAP_BINARY && n->u.map.op >= VOP_EQ && n->u.map.op <= VOP_GE;
    bool rnd = n->u.map.kind == IR_MAP_UNARY && n->u.map.op == VOP_ROUND;
    if (!cmp && !rnd) return true;
    double a, b; /* the compared (or rounded) quantity as a*x + b */
    if (cmp) {
        double a1, b1, a2, b2;
        if (!affine_in(c, n->u.map.args[0], &a1, &b1) || !affine_in(c, n->u.map.args[1], &a2, &b2)) {
            snprintf(c->why, sizeof c->why, "compares values that are not affine in the real value");
            return false;
        }
        a = a1 - a2;
        b = b1 - b2;
        if (a != 0) {
            /* the reference compares its rounded values: the jump moves by their rounding over the
             * slope, which the margin must cover (out22f-003: (x + 1e15) - 1e15 < 0.3 jumps at 0.3125) */
            double e0, r0, e1, r1;
            Jet j0, j1;
            double mid = (X.lo + X.hi) / 2;
            if (!ref_err(c, n->u.map.args[0], X, mid, &e0, &r0) || !ref_err(c, n->u.map.args[1], X, mid, &e1, &r1) ||
                !jet_of(c, n->u.map.args[0], X, mid, &j0) || !jet_of(c, n->u.map.args[1], X, mid, &j1)) {
                snprintf(c->why, sizeof c->why, "compares values whose rounding the compiler cannot bound");
                return false;
            }
            double shift = (e0 + r0 * iv_mag(j0.v) + e1 + r1 * iv_mag(j1.v)) / fabs(a);
            if (shift > c->shift) c->shift = shift;
            add_cut(c, -b / a);
        }
        return true;
    }
    if (!affine_in(c, n->u.map.args[0], &a, &b) || a == 0) {
        snprintf(c->why, sizeof c->why, "rounds a value that is not affine in the real value");
        return false;
    }
    Ival q = iv_add(iv_scale(X, a), ival_point(b)); /* round() jumps at k + 1/2 */
    if (q.hi - q.lo > 1e6) {
        snprintf(c->why, sizeof c->why, "rounds a value that takes too many integers");
        return false;
    }
    for (double k = floor(q.lo) - 1; k <= q.hi + 1; k++) add_cut(c, (k + 0.5 - b) / a);
    return true;
}

ValueResult realfn_eval(Plan *p, const IrNode *n, const IrNode *leaf, double x, char *msg, size_t msgsize) {
    return map_value_via(p, n, leaf, value_float(x), msg, msgsize);
}

/* The truth of a condition at x. */
static bool mid_truth(Ctx *c, const IrNode *cond, double x) {
    char msg[160];
    ValueResult r = realfn_eval(c->p, cond, c->leaf, x, msg, sizeof msg);
    return r.ok && value_truthy(r.value);
}

/* The jet of subtree n over X, a piece on which every comparison has one value (decided at the
 * piece's midpoint mid). False (with c->why) where f cannot be bounded. */
static bool jet_of(Ctx *c, const IrNode *n, Ival X, double mid, Jet *out) {
    if (n == c->leaf) { *out = jet_identity(X); return true; }
    if (n->kind == IR_CONST) {
        if (!value_is_number(n->u.constant)) {
            snprintf(c->why, sizeof c->why, "has a non-numeric constant");
            return false;
        }
        *out = jet_const(value_as_double(n->u.constant));
        return true;
    }
    if (n->kind != IR_MAP) return false;
    char msg[160];
    if (n->u.map.kind == IR_MAP_COND) { /* the branch the piece takes */
        return jet_of(c, n->u.map.args[mid_truth(c, n->u.map.args[0], mid) ? 1 : 2], X, mid, out);
    }
    bool cmp = n->u.map.kind == IR_MAP_BINARY && n->u.map.op >= VOP_EQ && n->u.map.op <= VOP_GE;
    bool rnd = n->u.map.kind == IR_MAP_UNARY && (n->u.map.op == VOP_ROUND || n->u.map.op == VOP_NOT ||
                                                  n->u.map.op == VOP_INDICATOR);
    bool logic = n->u.map.kind == IR_MAP_BINARY && (n->u.map.op == VOP_AND || n->u.map.op == VOP_OR);
    if (cmp || rnd || logic) { /* constant on the piece: its value at the midpoint */
        ValueResult r = realfn_eval(c->p, n, c->leaf, mid, msg, sizeof msg);
        if (!r.ok || !value_is_number(r.value)) {
            snprintf(c->why, sizeof c->why, "%s", r.ok ? "has a non-numeric value" : r.error);
            return false;
        }
        *out = jet_const(value_as_double(r.value));
        return true;
    }
    Jet a, b;
    if (!jet_of(c, n->u.map.args[0], X, mid, &a)) return false;
    if (n->u.map.kind == IR_MAP_UNARY) {
        switch (n->u.map.op) {
        case VOP_NEG: *out = (Jet){iv_neg(a.v), iv_neg(a.d1), iv_neg(a.d2), iv_neg(a.d3)}; return true;
        case VOP_POS: *out = a; return true;
        default: snprintf(c->why, sizeof c->why, "uses %s on a real value", value_op_text(n->u.map.op)); return false;
        }
    }
    if (n->u.map.kind != IR_MAP_BINARY || !jet_of(c, n->u.map.args[1], X, mid, &b)) {
        if (!c->why[0]) snprintf(c->why, sizeof c->why, "uses a table lookup on a real value");
        return false;
    }
    switch (n->u.map.op) {
    case VOP_ADD: *out = jet_add(a, b, 1); return true;
    case VOP_SUB: *out = jet_add(a, b, -1); return true;
    case VOP_MUL:
        *out = jet_mul(a, b);
        if (n->u.map.args[0] == n->u.map.args[1] && a.v.lo < 0 && a.v.hi > 0) /* a square: never negative */
            out->v.lo = 0;
        return true;
    case VOP_DIV: { /* a * (1/b): (1/b)' = -b'/b^2, (1/b)'' = 2b'^2/b^3 - b''/b^2 */
        if (iv_has_zero(b.v)) {
            snprintf(c->why, sizeof c->why, "divides by a value whose range [%g, %g] holds 0", b.v.lo, b.v.hi);
            return false;
        }
        Ival r = iv_recip(b.v), r2 = iv_mul(r, r); /* 1/y: -1/y^2, 2/y^3, -6/y^4 */
        Jet inv = jet_chain(b, r, iv_neg(r2), iv_scale(iv_mul(r2, r), 2), iv_scale(iv_mul(r2, r2), -6));
        *out = jet_mul(a, inv);
        return true;
    }
    case VOP_POW: {
        bool const_base = a.d1.lo == 0 && a.d1.hi == 0 && a.d2.lo == 0 && a.d2.hi == 0 && a.v.lo == a.v.hi;
        bool const_exp = b.d1.lo == 0 && b.d1.hi == 0 && b.d2.lo == 0 && b.d2.hi == 0 && b.v.lo == b.v.hi;
        if (const_base && const_exp) {
            *out = jet_const(pow(a.v.lo, b.v.lo));
            return true;
        }
        if (const_base) { /* c ^ u: (c^u)' = ln c c^u u' */
            double base = a.v.lo;
            if (base <= 0) {
                snprintf(c->why, sizeof c->why, "raises %g to a real power", base);
                return false;
            }
            double l = log(base);
            Ival g = ival(pow(base, l >= 0 ? b.v.lo : b.v.hi), pow(base, l >= 0 ? b.v.hi : b.v.lo));
            if (!isfinite(g.hi)) {
                snprintf(c->why, sizeof c->why, "overflows: %g ^ %g", base, b.v.hi);
                return false;
            }
            *out = jet_chain(b, g, iv_scale(g, l), iv_scale(g, l * l), iv_scale(g, l * l * l));
            return true;
        }
        if (const_exp) { /* u ^ e: e u^(e-1) u', e(e-1) u^(e-2) */
            double e = b.v.lo;
            bool integer = e == floor(e) && fabs(e) < 1e6;
            if (!integer && a.v.lo < 0 && a.v.lo > -DBL_MIN && a.v.hi >= 0) a.v.lo = 0; /* 0 rounded outward */
            if (!integer && a.v.lo < 0) {
                snprintf(c->why, sizeof c->why, "raises values down to %g to the power %g (a negative base raises)", a.v.lo, e);
                return false;
            }
            if ((e < 2 && !integer && a.v.lo <= 0) || (e < 0 && iv_has_zero(a.v))) {
                if (e < 0) {
                    snprintf(c->why, sizeof c->why, "raises values through 0 to the power %g", e);
                    return false;
                }
                /* x^e near 0 with 0 < e < 2: f'' unbounded; the value range still bounds pieces */
                Ival g = iv_pow(a.v, e);
                if (g.lo < 0) g.lo = 0; /* a power of x >= 0, 0 rounded outward */
                Ival inf = {-INFINITY, INFINITY};
                *out = (Jet){g, inf, inf, inf};
                return true;
            }
            Ival g = iv_pow(a.v, e), g1 = iv_scale(iv_pow(a.v, e - 1), e),
                 g2 = iv_scale(iv_pow(a.v, e - 2), e * (e - 1)), g3 = iv_scale(iv_pow(a.v, e - 3), e * (e - 1) * (e - 2));
            if (e == floor(e) && e >= 0 && e < 3) g3 = ival_point(0); /* 1, x, x^2 */
            if (e == floor(e) && e >= 0 && e < 2) g2 = ival_point(0);
            if (!isfinite(g.lo) || !isfinite(g.hi)) {
                snprintf(c->why, sizeof c->why, "overflows: a power of values up to %g", iv_mag(a.v));
                return false;
            }
            *out = jet_chain(a, g, g1, g2, g3);
            return true;
        }
        snprintf(c->why, sizeof c->why, "raises a real value to a real power");
        return false;
    }
    case VOP_MOD: snprintf(c->why, sizeof c->why, "takes %% of a real value"); return false;
    default: snprintf(c->why, sizeof c->why, "uses %s on a real value", value_op_text(n->u.map.op)); return false;
    }
}

/* ---- piecewise-linear approximation ---- */

/* The chord error bound of a piece from its jet (see the file's comment). */
static double chord_bound(Jet j, double a, double b) {
    double w = b - a, e = INFINITY;
    double m2 = fmax(fabs(j.d2.lo), fabs(j.d2.hi));
    if (isfinite(m2)) e = fmin(e, w * w * m2 / 8);
    if (isfinite(j.d1.lo) && isfinite(j.d1.hi)) e = fmin(e, w / 2 * (j.d1.hi - j.d1.lo));
    if (isfinite(j.v.lo) && isfinite(j.v.hi)) e = fmin(e, j.v.hi - j.v.lo);
    return e;
}

typedef struct Knots {
    double *x, *y, *mid; /* mid[i]: f at the middle of the piece ending at knot i (NAN: linear) */
    size_t n, cap;
} Knots;

static void knot(Plan *p, Knots *k, double x, double y, double mid) {
    if (k->n && x <= k->x[k->n - 1]) return; /* a shared endpoint */
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        k->x = arena_grow(p->arena, k->x, k->n, cap, sizeof *k->x);
        k->y = arena_grow(p->arena, k->y, k->n, cap, sizeof *k->y);
        k->mid = arena_grow(p->arena, k->mid, k->n, cap, sizeof *k->mid);
        k->cap = cap;
    }
    k->x[k->n] = x;
    k->mid[k->n] = k->n ? mid : NAN;
    k->y[k->n++] = y;
}

/* The error of the quadratic through f at a, (a + b) / 2 and b: |f'''| / 6 times the largest
 * |(x - a)(x - m)(x - b)|, which is h^3 / (12 sqrt 3). */
static double quad_bound(Jet j, double a, double b) {
    double m3 = fmax(fabs(j.d3.lo), fabs(j.d3.hi)), h = b - a;
    return isfinite(m3) ? m3 * h * h * h / (72 * sqrt(3.0)) : INFINITY;
}

/* f at x, evaluated as the reference does, taking the branch of the piece around `side` (a point
 * inside the piece: at a split the comparison could go either way). */
static bool f_at(Ctx *c, const IrNode *n, double x, double side, double *y, ValueKind *kind) {
    char msg[160];
    double at = x;
    if (side != x) { /* the limit from inside the piece: one ulp inside */
        at = nextafter(x, side);
    }
    ValueResult r = realfn_eval(c->p, n, c->leaf, at, msg, sizeof msg);
    if (!r.ok || !value_is_number(r.value)) {
        if (r.ok) snprintf(c->why, sizeof c->why, "has a non-numeric value at %g", at);
        else snprintf(c->why, sizeof c->why, "raises at %g, where its argument can be (%s)", at, r.error);
        return false;
    }
    *y = value_as_double(r.value);
    if (kind) *kind = r.value.kind;
    return true;
}

/* The function analysed: the map, an elementary function of x, or the elementary function of the
 * map (ln|f(x)| for a product in the log domain of a function of x). */
static bool root_jet(Ctx *c, const IrNode *map, Ival X, double mid, Jet *out) {
    if (c->elem == RE_NONE) return jet_of(c, map, X, mid, out);
    if (!map) return elem_jet(c->elem, X, out);
    Jet inner, g;
    if (!jet_of(c, map, X, mid, &inner) || !elem_jet(c->elem, inner.v, &g)) return false;
    *out = jet_chain(inner, g.v, g.d1, g.d2, g.d3);
    return true;
}

/* The reference's own float64 rounding of subtree n over X (the piece around mid): *abs + *rel |v|
 * bounds |the reference's value - the exact value v| that the jets describe. Each + - * / rounds
 * once, relative to its result; libm's pow within two ulps; the operands' errors carry through
 * their magnitudes (the jets), relative where the operation keeps them relative. An intermediate
 * of large magnitude shows here: (x + 1e15) - 1e15 rounds x to a multiple of 0.125, which the
 * pieces of the exact x do not see (out22d-001). False where no bound follows (INFINITY). */
static bool ref_err(Ctx *c, const IrNode *n, Ival X, double mid, double *abs, double *rel) {
    const double u = DBL_EPSILON / 2;
    *abs = *rel = 0;
    if (!n || n == c->leaf || n->kind == IR_CONST) return true;
    if (n->kind != IR_MAP) return false;
    if (n->u.map.kind == IR_MAP_COND)
        return ref_err(c, n->u.map.args[mid_truth(c, n->u.map.args[0], mid) ? 1 : 2], X, mid, abs, rel);
    bool cmp = n->u.map.kind == IR_MAP_BINARY && n->u.map.op >= VOP_EQ && n->u.map.op <= VOP_GE;
    bool constant = cmp || (n->u.map.kind == IR_MAP_UNARY && (n->u.map.op == VOP_ROUND || n->u.map.op == VOP_NOT ||
                                                              n->u.map.op == VOP_INDICATOR)) ||
                    (n->u.map.kind == IR_MAP_BINARY && (n->u.map.op == VOP_AND || n->u.map.op == VOP_OR));
    if (constant) return true; /* one value on the piece, exact outside the margins */
    double ea, ra, eb = 0, rb = 0;
    if (!ref_err(c, n->u.map.args[0], X, mid, &ea, &ra)) return false;
    if (n->u.map.kind == IR_MAP_UNARY) {
        *abs = ea;
        *rel = ra;
        return true;
    }
    Jet a, b;
    if (n->u.map.kind != IR_MAP_BINARY || !ref_err(c, n->u.map.args[1], X, mid, &eb, &rb) ||
        !jet_of(c, n->u.map.args[0], X, mid, &a) || !jet_of(c, n->u.map.args[1], X, mid, &b))
        return false;
    double ma = iv_mag(a.v), mb = iv_mag(b.v);
    double la = fmin(fabs(a.v.lo), fabs(a.v.hi)), lb = fmin(fabs(b.v.lo), fabs(b.v.hi));
    if (iv_has_zero(a.v)) la = 0;
    if (iv_has_zero(b.v)) lb = 0;
    switch (n->u.map.op) {
    case VOP_ADD: case VOP_SUB: /* cancellation turns the operands' relative errors absolute */
        *abs = ea + ra * ma + eb + rb * mb;
        *rel = u;
        return true;
    case VOP_MUL:
        *abs = ma * (1 + ra) * eb + mb * (1 + rb) * ea + ea * eb;
        *rel = (1 + ra) * (1 + rb) * (1 + u) - 1;
        return true;
    case VOP_DIV: { /* 1 / b' = (1 / b) / (1 + rb + eb / b) */
        double q = rb + (eb > 0 ? eb / lb : 0);
        if (!(q < 0.5)) return false;
        double ri = q / (1 - q);
        *abs = ea * (1 + ri) / lb;
        *rel = (1 + ra) * (1 + ri) * (1 + u) - 1;
        return isfinite(*abs) || ea == 0;
    }
    case VOP_POW: {
        bool const_base = a.v.lo == a.v.hi && a.d1.lo == 0 && a.d1.hi == 0;
        bool const_exp = b.v.lo == b.v.hi && b.d1.lo == 0 && b.d1.hi == 0;
        if (const_base && !const_exp) { /* c ^ x': c ^ x times c ^ (x' - x) */
            double d = eb + rb * mb;
            *rel = expm1(fabs(log(a.v.lo)) * d) + 4 * u;
            return isfinite(*rel);
        }
        if (const_exp) { /* x' ^ e = x ^ e (x' / x) ^ e */
            double e = fabs(b.v.lo), q = ra + (ea > 0 ? ea / la : 0);
            if (!(q < 0.5)) return false;
            *rel = expm1(e * -log1p(-q)) + 4 * u;
            return isfinite(*rel);
        }
        return false;
    }
    default: return false;
    }
}

/* The same for the function analysed (root_jet's): an elementary function of an exact x is within
 * two ulps; of the map, its error carried (exp: relative, ln: absolute). */
static bool root_ref_err(Ctx *c, const IrNode *map, Ival X, double mid, double *abs, double *rel) {
    const double u = DBL_EPSILON / 2;
    if (c->elem == RE_NONE) return ref_err(c, map, X, mid, abs, rel);
    double ea = 0, ra = 0;
    Jet inner;
    if (map && (!ref_err(c, map, X, mid, &ea, &ra) || !jet_of(c, map, X, mid, &inner))) return false;
    if (c->elem == RE_EXP) {
        *abs = 0;
        *rel = expm1(ea + ra * (map ? iv_mag(inner.v) : iv_mag(X))) + 4 * u;
        return isfinite(*rel);
    }
    double lo = map ? fmin(fabs(inner.v.lo), fabs(inner.v.hi)) : fmin(fabs(X.lo), fabs(X.hi));
    double q = ra + (ea > 0 ? ea / lo : 0);
    if (!(q < 0.5)) return false;
    *abs = -log1p(-q) + 4 * u * 800; /* |ln| <= 745: libm's log within two ulps of it */
    *rel = 0;
    return true;
}

static bool root_f(Ctx *c, const IrNode *map, double x, double side, double *y, ValueKind *kind) {
    if (c->elem == RE_NONE) return f_at(c, map, x, side, y, kind);
    double v = side != x ? nextafter(x, side) : x;
    if (map && !f_at(c, map, x, side, &v, NULL)) return false;
    *y = c->elem == RE_EXP ? exp(v) : log(fabs(v)); /* libm's, within an ulp (reals.c's rounding terms cover it) */
    if (kind) *kind = VAL_FLOAT;
    return isfinite(*y);
}

/* The limit of f at a cut x from the side of step d, extrapolated linearly from x + d and x + 2 d
 * (exact for a linear piece, within d^2 |f''| for a smooth one). */
static bool extrapolated_limit(Ctx *c, const IrNode *map, double x, double d, double *y, ValueKind *kind) {
    double y1, y2;
    if (!root_f(c, map, x + d, x + d, &y1, kind) || !root_f(c, map, x + 2 * d, x + 2 * d, &y2, NULL)) return false;
    *y = 2 * y1 - y2;
    return true;
}

/* Where piece i (between bounds[i] and bounds[i + 1]) starts and ends: a margin inside a jump. */
static double piece_start(const double *bounds, const bool *jump, const bool end_jump[2], size_t i, double margin) {
    return bounds[i] + ((i > 0 && jump[i]) || (i == 0 && end_jump[0]) ? margin : 0);
}
static double piece_end(const double *bounds, const bool *jump, const bool end_jump[2], size_t nb, size_t i, double margin) {
    bool last = i + 2 == nb;
    return bounds[i + 1] - ((!last && jump[i + 1]) || (last && end_jump[1]) ? margin : 0);
}

/* The MLP's terms (mlp.c's fn_units) over X: a slope change times ReLU(x - k), a curvature change
 * times ReLU(x - k)^2, each at most its value at X.hi. Gives their sum and, in *against, the sum of
 * those whose sign is not ky_0's (the first term's where ky_0 is 0): since the terms add up to the
 * model's f, their magnitudes add up to at most |f| + 2 *against. */
static double terms_mag(const RealFn *f, Ival X, double *against) {
    double mag = f->n_knots ? fabs(f->ky[0]) : 0, end_slope = 0, curv = 0, sign = f->n_knots ? f->ky[0] : 0;
    *against = 0;
    for (size_t i = 0; i + 1 < f->n_knots; i++) {
        RealPiece q = realfn_piece(f, i);
        double w = X.hi - f->kx[i], ds = q.slope - end_slope, dc = q.curv - curv;
        if (sign == 0) sign = ds != 0 ? ds : dc; /* ky_0 = 0: the first term's sign */
        mag += fabs(ds) * w + fabs(dc) * w * w;
        *against += (ds * sign < 0 ? fabs(ds) * w : 0) + (dc * sign < 0 ? fabs(dc) * w * w : 0);
        end_slope = q.slope + 2 * q.curv * (f->kx[i + 1] - f->kx[i]);
        curv = q.curv;
    }
    return mag;
}

void realfn_negate(Plan *p, RealFn *f) {
    double *ky = ARENA_ARRAY(p->arena, double, f->n_knots ? f->n_knots : 1);
    double *km = f->kmid ? ARENA_ARRAY(p->arena, double, f->n_knots ? f->n_knots : 1) : NULL;
    for (size_t i = 0; i < f->n_knots; i++) {
        ky[i] = -f->ky[i];
        if (km) km[i] = -f->kmid[i]; /* NAN stays NAN */
    }
    f->ky = ky;
    f->kmid = km;
    f->range = (Ival){-f->range.hi, -f->range.lo};
}

RealFn realfn_mirror(Plan *p, const RealFn *f) {
    RealFn g = *f;
    size_t n = f->n_knots;
    g.kx = ARENA_ARRAY(p->arena, double, n ? n : 1);
    g.ky = ARENA_ARRAY(p->arena, double, n ? n : 1);
    g.kmid = f->kmid ? ARENA_ARRAY(p->arena, double, n ? n : 1) : NULL;
    for (size_t i = 0; i < n; i++) {
        g.kx[i] = -f->kx[n - 1 - i];
        g.ky[i] = f->ky[n - 1 - i];
        if (g.kmid) g.kmid[i] = i == 0 ? NAN : f->kmid[n - i]; /* the piece ending at g's knot i */
    }
    g.from_right = false;
    return g;
}

/* The total variation of fn's model (chords) from its first knot to x (negative left of it): the
 * pieces' |slopes| integrated; past the end it is summed from no unit is active (slope 0), past the
 * other every unit is (the end piece's slope continues; mlp.c). */
static double variation_to(const RealFn *f, const double *cum, double x) {
    size_t n = f->n_knots;
    double first = fabs((f->ky[1] - f->ky[0]) / (f->kx[1] - f->kx[0]));
    double last = fabs((f->ky[n - 1] - f->ky[n - 2]) / (f->kx[n - 1] - f->kx[n - 2]));
    if (x <= f->kx[0]) return f->from_right ? -first * (f->kx[0] - x) : 0;
    if (x >= f->kx[n - 1]) return cum[n - 1] + (f->from_right ? 0 : last * (x - f->kx[n - 1]));
    size_t lo = 0, hi = n - 1; /* kx[lo] <= x < kx[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (f->kx[mid] <= x) lo = mid;
        else hi = mid;
    }
    return cum[lo] + fabs((f->ky[lo + 1] - f->ky[lo]) / (f->kx[lo + 1] - f->kx[lo])) * (x - f->kx[lo]);
}

double realfn_modulus(Plan *p, const RealFn *f, Ival X, double e) {
    size_t n = f->n_knots;
    if (f->quadratic || n < 2 || !(e > 0)) return e > 0 ? INFINITY : 0;
    double *cum = ARENA_ARRAY(p->arena, double, n);
    cum[0] = 0;
    for (size_t i = 0; i + 1 < n; i++) cum[i + 1] = cum[i] + fabs(f->ky[i + 1] - f->ky[i]);
    /* V(a + w) - V(a) over windows [a, a + w] of width w = 2 e about the reference's x in X (the
     * model's x' within e of it): V is piecewise linear, so the largest is where a window's end
     * is at a knot or at an end of the interval */
    double w = 2 * e, best = 0;
    for (size_t i = 0; i <= n + 1; i++) {
        double starts[2] = {i < n ? f->kx[i] : X.lo - e, i < n ? f->kx[i] - w : X.hi + e - w};
        for (int k = 0; k < 2; k++) {
            double a = fmax(starts[k], X.lo - e), b = fmin(a + w, X.hi + e);
            if (b > a) best = fmax(best, variation_to(f, cum, b) - variation_to(f, cum, a));
        }
    }
    return best * (1 + 4 * DBL_EPSILON); /* the sums' own rounding, generously */
}

RealFn realfn_zero_beyond(Plan *p, const RealFn *g, double T) {
    RealFn out = *g;
    size_t n = g->n_knots + 1;
    out.kx = ARENA_ARRAY(p->arena, double, n);
    out.ky = ARENA_ARRAY(p->arena, double, n);
    out.kmid = ARENA_ARRAY(p->arena, double, n);
    for (size_t i = 0; i < g->n_knots; i++) {
        out.kx[i] = g->kx[i];
        out.ky[i] = g->ky[i];
        out.kmid[i] = g->kmid ? g->kmid[i] : NAN;
    }
    out.kx[n - 1] = T;
    out.ky[n - 1] = 0;
    out.kmid[n - 1] = NAN; /* the chord to 0 */
    out.n_knots = n;
    out.from_right = true;
    RealFn m = realfn_mirror(p, &out);
    out.sum_mag = terms_mag(&m, (Ival){-T, -g->kx[0]}, &out.against_mag);
    return out;
}

/* The scale of the rounding of the MLP's sum: its terms' magnitudes, at most sum_mag, or at most
 * |f| + 2 against_mag, whichever is less where f is at its largest. */
static double rounding_scale(const RealFn *f, double sum_mag, double against) {
    return fmin(sum_mag, fmax(fabs(f->range.lo), fabs(f->range.hi)) + 2 * against);
}

void realfn_set_anchor(Plan *p, RealFn *f, Ival X, bool from_right) {
    if (from_right) {
        RealFn g = realfn_mirror(p, f);
        f->sum_mag = terms_mag(&g, (Ival){-X.hi, -X.lo}, &f->against_mag);
    } else {
        f->sum_mag = terms_mag(f, X, &f->against_mag);
    }
    f->from_right = from_right;
}

/* Sums the MLP's terms from whichever end keeps their rounding smaller (RealFn.from_right). */
static void choose_anchor(Plan *p, RealFn *f, Ival X) {
    f->from_right = false;
    f->sum_mag = terms_mag(f, X, &f->against_mag);
    RealFn g = realfn_mirror(p, f);
    double against, m = terms_mag(&g, (Ival){-X.hi, -X.lo}, &against);
    if (rounding_scale(f, m, against) < rounding_scale(f, f->sum_mag, f->against_mag)) {
        f->from_right = true;
        f->sum_mag = m;
        f->against_mag = against;
    }
}

static int dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool realfn_build_in(Plan *p, const IrNode *map, const IrNode *leaf, RealElem elem, Ival X, double tol,
                            double margin, bool quadratic, RealFn *out, char *why, size_t whysize);

/* The error a piecewise function adds at worst: its approximation (at f's largest value if
 * relative) and the rounding of its MLP's sums. */
static double fn_cost(const RealFn *f) {
    double units = (double)f->n_knots * (f->quadratic ? 2 : 1) + 4;
    return f->err * (f->relative ? fmax(fabs(f->range.lo), fabs(f->range.hi)) : 1) + 4 * units * DBL_EPSILON * f->sum_mag;
}

/* Quadratic pieces where allowed, unless chords alone do better: a quadratic's terms grow with
 * the range past its knot, and over a wide range their rounding outweighs the fewer pieces. */
static bool build_best(Plan *p, const IrNode *map, const IrNode *leaf, RealElem elem, Ival X, double tol, double margin,
                       bool quadratic, RealFn *out, char *why, size_t whysize) {
    bool ok = realfn_build_in(p, map, leaf, elem, X, tol, margin, quadratic, out, why, whysize);
    if (!quadratic || !out->quadratic) return ok;
    RealFn lin;
    char w2[256];
    if (realfn_build_in(p, map, leaf, elem, X, tol, margin, false, &lin, w2, sizeof w2) && (!ok || fn_cost(&lin) < fn_cost(out))) {
        *out = lin;
        return true;
    }
    return ok;
}

bool realfn_build_elem(Plan *p, RealElem elem, const IrNode *map, const IrNode *leaf, Ival X, double tol, RealFn *out,
                       char *why, size_t whysize) {
    return build_best(p, map, leaf, elem, X, tol, 0, p->gated_mlp, out, why, whysize);
}

bool realfn_build(Plan *p, const IrNode *map, const IrNode *leaf, Ival X, double tol, double margin, bool quadratic,
                  RealFn *out, char *why, size_t whysize) {
    return build_best(p, map, leaf, RE_NONE, X, tol, margin, quadratic, out, why, whysize);
}

/* A step d of f (below a jump's tol / 4) where |f| is at least y: the most of it absolutely and
 * relative to f. */
static void note_step(double *abs, double *rel, double d, double y) {
    *abs = fmax(*abs, d);
    *rel = fmax(*rel, y != 0 ? d / y : d > 0 ? INFINITY : 0);
}

/* How far f steps at a cut x between its limits yl (from `left`) and yr (from `right`, or f(x) itself
 * where right == x), less what its slope explains over those ulps (the change over the next ulp
 * out on each side, half again): ReLU at 0 and a clamp at 30 do not step, x + 2.4e-7 past 0.5
 * does. */
static bool step_at(Ctx *c, const IrNode *map, double x, double left, double right, double yl, double yr, double *d) {
    double yl2, yr2 = yr;
    if (!root_f(c, map, nextafter(x, left), left, &yl2, NULL)) return false;
    if (right != x && !root_f(c, map, nextafter(x, right), right, &yr2, NULL)) return false;
    *d = fmax(0, fabs(yl - yr) - 1.5 * (fabs(yl2 - yl) + fabs(yr2 - yr)));
    return true;
}

static bool realfn_build_in(Plan *p, const IrNode *map, const IrNode *leaf, RealElem elem, Ival X, double tol,
                            double margin, bool quadratic, RealFn *out, char *why, size_t whysize) {
    Ctx c = {p, leaf, elem, "", NULL, 0, 0, 0};
    memset(out, 0, sizeof *out);
    if (!find_cuts(&c, map, X)) goto fail;
    if (c.n_cuts && c.shift > 0 && !(c.shift <= margin / 4)) {
        snprintf(c.why, sizeof c.why, "compares values that the reference rounds by up to %g, more than a quarter of "
                 "the margin %g (--margin)", c.shift, margin);
        goto fail;
    }
    if (c.n_cuts) qsort(c.cuts, c.n_cuts, sizeof *c.cuts, dcmp);
    /* the pieces: X split at the cuts inside it */
    double *bounds = ARENA_ARRAY(p->arena, double, c.n_cuts + 2);
    size_t nb = 0;
    bounds[nb++] = X.lo;
    for (size_t i = 0; i < c.n_cuts; i++)
        if (c.cuts[i] > X.lo && c.cuts[i] < X.hi && c.cuts[i] > bounds[nb - 1]) bounds[nb++] = c.cuts[i];
    bounds[nb++] = X.hi;
    /* which cuts are jumps: the limits from both sides differ */
    bool *jump = ARENA_ARRAY(p->arena, bool, nb);
    /* a step below tol / 4 is no jump: the pieces run through it, and it is part of the error
     * (out22e-001: x + 2.4e-7 past 0.5 was stated within 6e-15), absolutely and relative to f */
    double step_abs = 0, step_rel = 0;
    for (size_t i = 1; i + 1 < nb; i++) {
        double yl, yr;
        ValueKind kl, kr;
        if (!root_f(&c, map, bounds[i], bounds[i - 1], &yl, &kl) || !root_f(&c, map, bounds[i], bounds[i + 1], &yr, &kr))
            goto fail;
        jump[i] = fabs(yl - yr) > tol / 4 || kl != kr; /* a kind changes too: 0 if x < 0 else x */
        if (!jump[i]) {
            double d;
            if (!step_at(&c, map, bounds[i], bounds[i - 1], bounds[i + 1], yl, yr, &d)) goto fail;
            note_step(&step_abs, &step_rel, d, fmin(fabs(yl), fabs(yr)));
        }
        /* the float arithmetic before a comparison or a round can move its jump a few ulps off the
         * cut (7 x reaches 8.5 two ulps past 8.5 / 7): also compare the limits extrapolated from
         * inside, a quarter margin away, where they are what the model's pieces take */
        double d = fmin(margin, fmin(bounds[i] - bounds[i - 1], bounds[i + 1] - bounds[i])) / 4;
        if (!jump[i] && d > 0) {
            if (!extrapolated_limit(&c, map, bounds[i], -d, &yl, &kl) ||
                !extrapolated_limit(&c, map, bounds[i], d, &yr, &kr))
                goto fail;
            jump[i] = fabs(yl - yr) > tol / 4 || kl != kr;
            if (!jump[i]) /* the limits extrapolated from inside, less the extrapolation's own rounding */
                note_step(&step_abs, &step_rel, fmax(0, fabs(yl - yr) - 8 * DBL_EPSILON * fmax(fabs(yl), fabs(yr))),
                          fmin(fabs(yl), fabs(yr)));
        }
        if (jump[i]) {
            if (bounds[i] - margin <= bounds[i - 1] || bounds[i] + margin >= bounds[i + 1]) {
                snprintf(c.why, sizeof c.why, "jumps at %g and near it again, closer than the margin %g", bounds[i], margin);
                goto fail;
            }
            /* a margin float64 cannot tell from 0 at the jump leaves no gap (out22f-001: 1e-17 at 0.5) */
            if (!(bounds[i] - margin < nextafter(bounds[i], -INFINITY) - 4 * DBL_EPSILON * fabs(bounds[i]) &&
                  bounds[i] + margin > nextafter(bounds[i], INFINITY) + 4 * DBL_EPSILON * fabs(bounds[i]))) {
                snprintf(c.why, sizeof c.why, "jumps at %g, where the margin %g is below float64's resolution "
                         "(--margin)", bounds[i], margin);
                goto fail;
            }
            out->n_jumps++;
        }
    }
    /* at an end of X, f can differ from its limit inside at that one point (`0 if x < 0 else x`
     * over -1..0 is 0.0 at 0 only): the end is then a jump too, the model's piece stops a margin
     * before it, and the runtime refuses the inputs within the margin */
    bool end_jump[2] = {false, false};
    for (int e = 0; e < 2 && margin > 0; e++) {
        double x = e ? X.hi : X.lo, in = e ? bounds[nb - 2] : bounds[1], yl, ye;
        ValueKind kl, ke;
        if (!root_f(&c, map, x, in, &yl, &kl) || !root_f(&c, map, x, x, &ye, &ke)) goto fail;
        end_jump[e] = fabs(yl - ye) > tol / 4 || kl != ke;
        if (end_jump[e] && kl == ke) { /* a steep f changes by more than tol in an ulp (1 / x at 1e-12): the
                                        * next ulp in changes it as much, where a jump would not (out22b-003) */
            double y2;
            if (!root_f(&c, map, nextafter(x, in), in, &y2, NULL)) goto fail;
            end_jump[e] = fabs(yl - ye) > 4 * fabs(y2 - yl) + tol / 4;
        }
        if (!end_jump[e]) { /* out22e-002 */
            double d;
            if (!step_at(&c, map, x, in, x, yl, ye, &d)) goto fail;
            note_step(&step_abs, &step_rel, d, fmin(fabs(yl), fabs(ye)));
        }
        if (end_jump[e] && fabs(in - x) <= 2 * margin) {
            snprintf(c.why, sizeof c.why, "changes at the end of the range (%g) and near it again, closer than the margin %g", x, margin);
            goto fail;
        }
        out->n_jumps += end_jump[e];
    }
    out->jump_at = ARENA_ARRAY(p->arena, double, out->n_jumps ? out->n_jumps : 1);
    /* one sign throughout: then chords are held to a relative tolerance and errors propagate
     * relatively (exp, 1 / y), which interval magnitudes would overstate */
    out->relative = elem != RE_LN_ABS; /* a log is wanted to an absolute error (its exp's relative) */
    for (size_t i = 0; i + 1 < nb && out->relative; i++) {
        double a = piece_start(bounds, jump, end_jump, i, margin), b = piece_end(bounds, jump, end_jump, nb, i, margin);
        Jet whole;
        if (!root_jet(&c, map, ival(a, b), (bounds[i] + bounds[i + 1]) / 2, &whole)) goto fail;
        out->relative = whole.v.lo > 0 || whole.v.hi < 0;
    }

    Knots k = {0};
    out->lip = 0;
    out->range = (Ival){INFINITY, -INFINITY};
    out->constant_pieces = true;
    size_t nj = 0;
    double worst = 0, worst_ref = 0; /* the largest chord bound of a piece kept, and reference rounding */
    enum { MAX_KNOTS = 1 << 17 };
    for (size_t i = 0; i + 1 < nb; i++) {
        double a = piece_start(bounds, jump, end_jump, i, margin), b = piece_end(bounds, jump, end_jump, nb, i, margin);
        double mid = (bounds[i] + bounds[i + 1]) / 2;
        if (i == 0 && end_jump[0]) out->jump_at[nj++] = bounds[0];
        if (i > 0 && jump[i]) out->jump_at[nj++] = bounds[i];
        if (i + 2 == nb && end_jump[1]) out->jump_at[nj + (out->n_jumps - nj - 1)] = bounds[nb - 1]; /* the last */
        Jet whole;
        if (!root_jet(&c, map, ival(a, b), mid, &whole)) goto fail;
        out->lip = fmax(out->lip, fmax(fabs(whole.d1.lo), fabs(whole.d1.hi)));

        bool constant = whole.d1.lo == 0 && whole.d1.hi == 0;
        out->constant_pieces = out->constant_pieces && constant;
        /* split [a, b] until every chord is within tol / 2: into as many equal parts as the
         * piece's bound says it needs (its chord error shrinks as the square of the width, a
         * quadratic's as the cube), at most SPLIT_WAYS, where halving would leave pieces up to
         * twice as narrow as needed (exp over a wide range: twice the units) */
        enum { SPLIT_WAYS = 16, SPLIT_STACK = 64 * SPLIT_WAYS };
        double stack[SPLIT_STACK][2];
        int level[SPLIT_STACK], top = 0;
        level[top] = 0;
        stack[top][0] = a;
        stack[top++][1] = b;
        double ya;
        if (!root_f(&c, map, a, mid, &ya, NULL)) goto fail;
        knot(p, &k, a, ya, NAN); /* the ramp across a jump is linear */
        while (top) {
            double u = stack[top - 1][0], v = stack[top - 1][1];
            Jet j;
            if (!root_jet(&c, map, ival(u, v), mid, &j)) goto fail;
            double chord = constant ? 0 : chord_bound(j, u, v);
            double quad = constant || !quadratic ? INFINITY : quad_bound(j, u, v); /* gated MLPs: quadratics */
            if (out->relative) { /* relative to |f| on the piece */
                chord /= fmin(fabs(j.v.lo), fabs(j.v.hi));
                quad /= fmin(fabs(j.v.lo), fabs(j.v.hi));
            }
            bool use_quad = quad < chord;
            if (use_quad) chord = quad;
            if (chord <= tol / 2 || level[top - 1] == 63 || v - u <= 4 * DBL_EPSILON * fmax(1, fabs(u))) {
                if (chord > tol / 2) {
                    if (!isfinite(j.v.lo) || !isfinite(j.v.hi)) /* the function's values, not its slope */
                        snprintf(c.why, sizeof c.why, "can overflow float64 near %g, past the largest double; narrow --range", u);
                    else if (fmax(fabs(j.d1.lo), fabs(j.d1.hi)) < 1e300)
                        snprintf(c.why, sizeof c.why, "cannot be approximated within %g near %g, where it reaches %g: too "
                                 "steep for pieces that fine (raise --tol or narrow --range)", tol, u,
                                 fmax(fabs(j.v.lo), fabs(j.v.hi)));
                    else
                        snprintf(c.why, sizeof c.why, "cannot be approximated within %g near %g (its slope is unbounded there)",
                                 tol, u);
                    goto fail;
                }
                worst = fmax(worst, chord);
                /* the reference's own rounding over the piece, as f's error (relative like chord) */
                double ref_abs, ref_rel;
                if (!root_ref_err(&c, map, ival(u, v), mid, &ref_abs, &ref_rel)) {
                    snprintf(c.why, sizeof c.why, "computes with roundings the compiler cannot bound near %g", u);
                    goto fail;
                }
                double fmax_piece = fmax(fabs(j.v.lo), fabs(j.v.hi)), ref = ref_abs + ref_rel * fmax_piece;
                if (out->relative) ref /= fmin(fabs(j.v.lo), fabs(j.v.hi));
                worst_ref = fmax(worst_ref, ref);
                /* f's values: the pieces kept enclose them (a piece that was split may enclose far
                 * more: x * x over [-2, 2] as intervals is [-4, 4]) */
                out->range = iv_hull(out->range, j.v);
                if (out->relative) { /* f'/f and x f'/f over the piece kept */
                    double fmin_abs = fmin(fabs(j.v.lo), fabs(j.v.hi)), d1 = fmax(fabs(j.d1.lo), fabs(j.d1.hi));
                    out->log_lip = fmax(out->log_lip, d1 / fmin_abs);
                    out->elasticity = u > 0 || v < 0 ? fmax(out->elasticity, fmax(fabs(u), fabs(v)) * d1 / fmin_abs) : INFINITY;
                }
                double yv, ym = NAN;
                if (!root_f(&c, map, v, mid, &yv, NULL)) goto fail;
                if (use_quad && !root_f(&c, map, (u + v) / 2, mid, &ym, NULL)) goto fail;
                knot(p, &k, v, yv, ym);
                out->quadratic = out->quadratic || use_quad;
                if (k.n > MAX_KNOTS) {
                    snprintf(c.why, sizeof c.why, "needs more than %d linear pieces for the tolerance %g (raise --tol)",
                             MAX_KNOTS, tol);
                    goto fail;
                }
                top--;
                continue;
            }
            double need = use_quad ? cbrt(chord / (tol / 2)) : sqrt(chord / (tol / 2));
            /* past SPLIT_WAYS, fewer parts that each still need several: the bound of a narrower
             * piece is tighter, and its own split then comes out near what it needs */
            double w = need <= SPLIT_WAYS ? ceil(need) : fmin(SPLIT_WAYS, ceil(need / SPLIT_WAYS));
            int ways = isfinite(w) ? (int)w : SPLIT_WAYS, lv = level[top - 1] + 1;
            if (ways < 2 || top + ways > SPLIT_STACK) ways = 2;
            top--; /* the parts, the rightmost first on the stack: knots come out in order */
            for (int i = ways - 1; i >= 0; i--) {
                stack[top][0] = i ? u + (v - u) * i / ways : u;
                stack[top][1] = i + 1 < ways ? u + (v - u) * (i + 1) / ways : v;
                level[top++] = lv;
            }
        }
    }
    out->n_knots = k.n;
    out->kx = k.x;
    out->ky = k.y;
    out->kmid = k.mid;
    /* the knots' values are the reference's, off by its rounding too: a chord through two of them
     * within that, a quadratic through three within 1.25 times it (its Lebesgue constant) */
    out->err = worst + (out->quadratic ? 2.25 : 2) * worst_ref + (out->relative ? step_rel : step_abs);
    choose_anchor(p, out, X);
    return true;
fail:
    snprintf(why, whysize, "%s", c.why[0] ? c.why : "cannot be analysed as a function of a real value");
    return false;
}
