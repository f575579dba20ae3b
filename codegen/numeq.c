/* Numerical equality: select(K, Q, ==) between numbers, scored through the numbers themselves.
 *
 * The table lowering (selector.c) reads both sides' one-hots: a residual dim and an MLP step per
 * value. For numbers with many values that explodes: long addition's target position
 * `indices + length - mean(...)` takes ~N^3 values. Here each side is an affine form of s-ops,
 * rearranged, and the head scores key value k for query value q as
 *
 *     score = s (2 q k - h(k)) + 1 - s g(q)
 *           = 1 - s [(q - k)^2 + (h(k) - k^2) + (g(q) - q^2)]
 *
 * in three bilinear columns: (2 s q, k), (-s, h(k)) and (1 - s g(q), one). h and g are x^2 where
 * it is cheap to have exactly (a function of a one-hot or of the position, or of one s-op whose
 * table MLP writes x^2 beside its number: MlpOp.beside), else the chords of x^2 through knots (a
 * ReLU per knot, an MLP after the number's): both lie on or above x^2 over every value either side takes
 * and equal it where the sides can meet. So a key equal to its query scores 1 and every other key
 * at most 1 - s (q - k)^2 <= 1 - s dmin^2, dmin the least distance between distinct key and query
 * values. When every query value is a knot of h and g is exact there, s (2 q k - h(k)) is concave
 * in k with its maximum at q, and the loss is also >= s sigma |q - k| (sigma the least spacing of
 * the knots): the gap G = dmin max(dmin, sigma). With s = 1/G the levels are a table conjunct's
 * (selected 1, the others <= 0), so the lowering composes with tables in sums, BOS scores m - 1/2
 * (m for widths) as it does for tables, and tie tolerances stay 1/4 and 1/2.
 *
 * Rearranging: a term with the same value at every position (the length, a mean over a selector
 * that ignores its queries) may move to the other side. Uniform terms go where they keep the other
 * side a function of the position alone, whose value and square then come from the position: free
 * over the index one-hot, tables over (index, length) in the first MLP, or, affine in the length,
 * the length's number with n^2 from a table of the length and the products with n paired with the
 * key row's copy of n. Long addition's `indices + length - a == indices` becomes
 * `indices - a == indices - length`: one ReLU per query value on the key side, the length's number
 * and its square on the query side, all in layer 0.
 *
 * Exactness. dmin comes from the exact value sets of K and Q when both are bounded; otherwise from
 * the form: integral terms (indices, length, integers) contribute integers, so |K - Q| >= the
 * distance of the non-integral terms' sum from the integers, enumerated over their values (a mean
 * of integers too large to enumerate, s/m, is >= 1/max_len from them). The reference decides
 * K == Q on rounded doubles, the model on the rearranged real sum; they agree because dmin exceeds
 * every rounding by far (checked, at the scale of everything summed), and an integral sum is
 * computed exactly (a non-integral s-op read twice, or on both sides, leaves the form unknown).
 * Scores are checked against float64: each number read is taken within 2^-40 of its magnitude,
 * products and sums round at 2^-52, and the total must stay below 1/16 of the gap; else the select
 * is refused with a located message when no table can replace it. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

enum {
    NQ_TERMS = 8,            /* s-ops one side is an affine form of */
    NQ_MAX_VALUES = 1 << 18, /* a side's values are enumerated (as knots) up to this many */
    NQ_MAX_FRAC = 1 << 20,   /* combinations of non-integral terms examined for dmin */
};
/* How far a number the head reads may be from the reference's, relative to its magnitude: means
 * and MLP outputs are within a few hundred roundings; this allows 4096. */
static const double NQ_REL_ERR = 0x1p-40;
/* The largest score error allowed, in units of the gap (tie tolerances are 1/4 and 1/2). */
static const double NQ_MAX_SCORE_ERR = 1.0 / 16;

typedef enum NqKind { NQ_POS, NQ_UNIFORM, NQ_OTHER } NqKind;

/* coef * x: a positional s-op (indices, length, a table), a uniform s-op, or another. */
typedef struct NqTerm {
    const IrNode *x;
    double coef;
    NqKind kind;
    PosDep dep;    /* NQ_POS */
    unsigned from; /* bit s: read by original side s (0 keys, 1 queries) */
    /* a mean of integers whose values are too many to enumerate: s/m for integers s and
     * m = 1..max_len, or its default, all within [lo, hi] */
    bool mean;
    double lo, hi;
    bool merged;   /* the s-op is read more than once (its coefficients added) */
} NqTerm;

/* How a side's square (h or g) is computed: from tables of the position, from the one-hot of its
 * single s-op, by chords of its numerical view (an MLP after the number's), or beside the number
 * of its single s-op, by the table MLP that computes that number (the same units, a second output
 * whose steps are the square's: no layer more). */
typedef enum NqFeat { FEAT_POS, FEAT_CAT, FEAT_PL, FEAT_BESIDE } NqFeat;

typedef struct NqSide {
    double c0;
    size_t n;
    NqTerm t[NQ_TERMS];
    size_t n_gone;         /* terms that cancelled (their coefficients summed to 0) */
    NqTerm gone[NQ_TERMS];
    double ops_mag;        /* the sum of |coef| |value| of everything read: the scale of the
                              reference's roundings, which cancellations do not undo */
    bool has_pos;         /* positional terms: their sum per cell (n, i) is cell[pos_at(n, i)] */
    double *cell;
    PosDep dep;
    double lo, hi;        /* every value c0 + terms lies in [lo, hi] */
    double *vals;         /* the distinct values, ascending, or NULL (too many to enumerate) */
    size_t n_vals;
    NqFeat feat;
    /* FEAT_POS queries whose positional sum is a_n n + a_i i + a_c: read through the length's
     * number, the square's products with n paired with the key row's copy of n (numeq_columns) */
    bool affine;
    double a_n, a_i, a_c;
    double *knots;        /* the square's chords, or NULL: x^2 itself (exact features only) */
    size_t n_knots;
    double err;           /* |model's value - reference's| at most */
    /* planned once (a selector may serve several heads) */
    bool built;
    LinView view, square, n_view;
    int time;
} NqSide;

struct NumEq {
    NqSide side[2]; /* keys, queries (rearranged) */
    double dmin, gap, scale;
    const char *why; /* the numbers cannot be told apart in float64: reported when planned */
};

/* ---- the affine form of a side ---- */

static bool finite_number(Value v) { return value_is_number(v) && isfinite(value_as_double(v)); }

/* x as a positional term: indices, length, or an s-op with an exact numerical table. */
static bool positional_term(const Plan *p, const IrNode *x, PosDep *dep) {
    if (x->kind == IR_INDICES || x->kind == IR_LENGTH) {
        *dep = x->kind == IR_INDICES ? POS_I : POS_N;
        return true;
    }
    const PosTable *t = p->info[x->id].pos;
    if (!t || !t->val || t->any_fail) return false;
    for (size_t c = 0, cells = pos_at(p->max_len + 1, 0); c < cells; c++)
        if (!finite_number(t->val[c])) return false;
    *dep = t->dep;
    return true;
}

static double pos_value(const Plan *p, const IrNode *x, size_t n, size_t i) {
    if (x->kind == IR_INDICES) return (double)i;
    if (x->kind == IR_LENGTH) return (double)n;
    return value_as_double(p->info[x->id].pos->val[pos_at(n, i)]);
}

/* x = sum_j a[j] args[j] (constant arguments included) when x is a map the compiler reads as a
 * free affine view of numbers. */
static bool affine_map(const Plan *p, const IrNode *x, double a[2]) {
    const SopInfo *info = &p->info[x->id];
    if (x->kind != IR_MAP || info->may_fail || info->real || info->real_fn) return false;
    for (uint32_t j = 0; j < x->u.map.nargs; j++)
        if (!p->info[x->u.map.args[j]->id].vs.numeric) return false;
    const IrNode *const *arg = (const IrNode *const *)x->u.map.args;
    if (x->u.map.kind == IR_MAP_UNARY) {
        a[0] = x->u.map.op == VOP_NEG ? -1 : 1;
        return x->u.map.op == VOP_NEG || x->u.map.op == VOP_POS;
    }
    if (x->u.map.kind != IR_MAP_BINARY) return false;
    switch (x->u.map.op) {
    case VOP_ADD: a[0] = 1; a[1] = 1; return true;
    case VOP_SUB: a[0] = 1; a[1] = -1; return true;
    case VOP_MUL:
        for (int j = 0; j < 2; j++)
            if (arg[j]->kind == IR_CONST && finite_number(arg[j]->u.constant)) {
                a[1 - j] = value_as_double(arg[j]->u.constant);
                a[j] = 0;
                return true;
            }
        return false;
    case VOP_DIV: {
        if (arg[1]->kind != IR_CONST || !finite_number(arg[1]->u.constant)) return false;
        double c = value_as_double(arg[1]->u.constant);
        a[0] = 1 / c;
        a[1] = 0;
        return c != 0 && isfinite(a[0]);
    }
    default: return false;
    }
}

static bool add_term(NqSide *s, const NqTerm *t) {
    for (size_t k = 0; k < s->n; k++)
        if (s->t[k].x == t->x) {
            s->t[k].coef += t->coef;
            s->t[k].from |= t->from;
            s->t[k].merged = true;
            return true;
        }
    if (s->n == NQ_TERMS) return false;
    s->t[s->n++] = *t;
    return true;
}

/* Whether x is a mean of integers (an aggregate of an s-op with a finite set of integers and an
 * integer default): its values lie in [lo, hi] and are s/m with m <= max_len or the default. */
static bool mean_of_integers(const Plan *p, const IrNode *x, double *lo, double *hi) {
    if (x->kind != IR_AGGREGATE) return false;
    const ValueSet *src = &p->info[x->u.aggregate.sop->id].vs;
    Value d = x->u.aggregate.default_value;
    if (src->unbounded || !src->all_int || !src->numeric || src->n == 0 || !finite_number(d) ||
        value_as_double(d) != floor(value_as_double(d)))
        return false;
    *lo = *hi = value_as_double(d);
    for (size_t v = 0; v < src->n; v++) {
        *lo = fmin(*lo, value_as_double(src->vals[v]));
        *hi = fmax(*hi, value_as_double(src->vals[v]));
    }
    return fmax(fabs(*lo), fabs(*hi)) < 0x1p40;
}

/* The largest |value| of term t. */
static double term_magnitude(const Plan *p, const NqTerm *t) {
    double m = 0;
    if (t->kind == NQ_POS) {
        for (size_t n = 1; n <= p->max_len; n++)
            for (size_t i = 0; i < n; i++) m = fmax(m, fabs(pos_value(p, t->x, n, i)));
        return m;
    }
    if (t->mean) return fmax(fabs(t->lo), fabs(t->hi));
    const ValueSet *vs = &p->info[t->x->id].vs;
    for (size_t v = 0; v < vs->n; v++) m = fmax(m, fabs(value_as_double(vs->vals[v])));
    return m;
}

/* Adds coef * x to side s: constants into c0, affine maps through their arguments, other
 * positional s-ops as they are, anything else as one term (NQ_OTHER; it needs an exact, bounded
 * set of numbers). */
static bool decompose(const Plan *p, const IrNode *x, double coef, NqSide *s, unsigned from, int depth) {
    if (depth > 16 || !isfinite(coef)) return false;
    if (x->kind == IR_CONST) {
        if (!finite_number(x->u.constant)) return false;
        s->c0 += coef * value_as_double(x->u.constant);
        s->ops_mag += fabs(coef * value_as_double(x->u.constant));
        return true;
    }
    double a[2] = {0, 0};
    if (affine_map(p, x, a)) { /* through positional ones too: indices + length splits, and the length may move */
        for (uint32_t j = 0; j < x->u.map.nargs; j++)
            if (a[j] != 0 && !decompose(p, x->u.map.args[j], coef * a[j], s, from, depth + 1)) return false;
        return true;
    }
    NqTerm t = {x, coef, NQ_OTHER, POS_CONST, from, false, 0, 0, false};
    const SopInfo *info = &p->info[x->id];
    const ValueSet *vs = &info->vs;
    if (positional_term(p, x, &t.dep)) {
        t.kind = NQ_POS;
    } else if (info->real || info->real_fn || !vs->numeric) {
        return false;
    } else if (vs->unbounded) {
        if (!(t.mean = mean_of_integers(p, x, &t.lo, &t.hi))) return false;
    } else {
        if (vs->approx || vs->n == 0) return false;
        for (size_t v = 0; v < vs->n; v++)
            if (!finite_number(vs->vals[v])) return false;
    }
    s->ops_mag += fabs(coef) * term_magnitude(p, &t);
    return add_term(s, &t);
}

/* ---- rearranging ---- */

static bool side_has(const NqSide *s, NqKind kind) {
    for (size_t k = 0; k < s->n; k++)
        if (s->t[k].kind == kind) return true;
    return false;
}

static bool movable(const NqTerm *t, NqKind kind) {
    return t->kind == kind && (kind == NQ_UNIFORM || t->dep == POS_N || t->dep == POS_CONST);
}

/* Moves the terms of `kind` that have one value at every position from side `from` to `to`
 * (K + c x == Q  <=>  K == Q - c x). */
static bool move_terms(NqSide *from, NqSide *to, NqKind kind) {
    size_t kept = 0;
    for (size_t k = 0; k < from->n; k++) {
        NqTerm *t = &from->t[k];
        if (!movable(t, kind)) {
            from->t[kept++] = *t;
            continue;
        }
        NqTerm moved = *t;
        moved.coef = -t->coef;
        if (!add_term(to, &moved)) return false;
    }
    from->n = kept;
    return true;
}

/* Uniform non-positional terms join the side that has other non-positional terms (the keys when
 * neither has); positional ones of the length join a side that is otherwise positional. */
static bool rearrange(NqSide side[2]) {
    bool other[2] = {side_has(&side[0], NQ_OTHER), side_has(&side[1], NQ_OTHER)};
    if (other[0] != other[1] || !other[0]) {
        int to = other[1] && !other[0] ? 1 : 0;
        if (!move_terms(&side[1 - to], &side[to], NQ_UNIFORM)) return false;
    }
    bool np[2];
    for (int s = 0; s < 2; s++) np[s] = side_has(&side[s], NQ_OTHER) || side_has(&side[s], NQ_UNIFORM);
    if (np[0] != np[1]) {
        int to = np[0] ? 1 : 0;
        if (!move_terms(&side[1 - to], &side[to], NQ_POS)) return false;
    }
    for (int s = 0; s < 2; s++) { /* terms that cancelled: remembered for the exactness argument */
        size_t kept = 0;
        for (size_t k = 0; k < side[s].n; k++)
            if (side[s].t[k].coef != 0) side[s].t[kept++] = side[s].t[k];
            else side[s].gone[side[s].n_gone++] = side[s].t[k];
        side[s].n = kept;
    }
    return true;
}

/* ---- values of a side ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static size_t sort_unique(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

static PosDep cells_dep(const double *cell, size_t N) {
    bool by_i = true, by_n = true;
    for (size_t n = 1; n <= N; n++)
        for (size_t i = 0; i < n; i++) {
            double v = cell[pos_at(n, i)];
            if (v != cell[pos_at(i + 1, i)]) by_i = false;
            if (v != cell[pos_at(n, 0)]) by_n = false;
        }
    return by_i && by_n ? POS_CONST : by_i ? POS_I : by_n ? POS_N : POS_IN;
}

/* Whether the cells are a_n n + a_i i + a_c exactly (fitted at three cells, checked at all). */
static bool cells_affine(const double *cell, size_t N, double *a_n, double *a_i, double *a_c) {
    if (N < 2) return false;
    *a_i = cell[pos_at(2, 1)] - cell[pos_at(2, 0)];
    *a_n = cell[pos_at(2, 0)] - cell[pos_at(1, 0)];
    *a_c = cell[pos_at(1, 0)] - *a_n;
    for (size_t n = 1; n <= N; n++)
        for (size_t i = 0; i < n; i++)
            if (cell[pos_at(n, i)] != *a_n * (double)n + *a_i * (double)i + *a_c) return false;
    return true;
}

/* Whether x's one-hot is free (an embedding block or a map of one): its square then is too. */
static bool free_cat(Plan *p, const IrNode *x, int depth) {
    const SopInfo *info = &p->info[x->id];
    if (info->pos_free) return true;
    switch (x->kind) {
    case IR_TOKENS: return !p->numeric_tokens;
    case IR_INDICES: case IR_CONST: return true;
    case IR_MAP: {
        const IrNode *y = map_single_varying_arg(x);
        return depth < 8 && y && !info->may_fail && !info->vs.unbounded && !vs_mixed_kinds(&info->vs) &&
               !p->info[y->id].vs.unbounded && free_cat(p, y, depth + 1);
    }
    default: return false;
    }
}

/* Whether a reachable select compares x by order (<, >=, ...): a table that needs x's one-hot. */
static bool compared_by_order(const Plan *p, const IrNode *x) {
    for (size_t id = 0; id < p->g->count; id++) {
        const IrNode *n = p->g->nodes[id];
        if (n->kind == IR_SELECT && p->info[id].reachable && n->u.select.cmp != IR_CMP_EQ &&
            (n->u.select.keys == x || n->u.select.queries == x))
            return true;
    }
    return false;
}

/* Whether x's number will come from one table MLP (a map, a width of one term) that can output
 * its square beside it (side_build finds out; chords a layer later where it cannot). Not where a
 * comparison by order needs x's one-hot anyway (sort by frequency's -width): the table then
 * costs nothing more, and its scores stay small where the numbers' grow with the squares (the
 * precision analysis showed sort_freq at 64 safe in float64 only with the table). */
static bool beside_possible(Plan *p, const IrNode *x) {
    if (compared_by_order(p, x)) return false;
    const SopInfo *info = &p->info[x->id];
    /* values of about the length's size (a level, a count): a table of larger ones may round past
     * its limit once its number is wanted (out23c-003: keys 700 ca + cb at 24 were refused) */
    if (info->vs.unbounded || !info->vs.numeric || info->vs.n > 4 * p->max_len + 8) return false;
    for (size_t v = 0; v < info->vs.n; v++)
        if (fabs(value_as_double(info->vs.vals[v])) > 4.0 * (double)p->max_len + 8) return false;
    /* a map that classify.c made a table (not gated, not a switch: out23c-002, those cannot carry
     * a second output and cost the chords' layers) */
    if (x->kind == IR_MAP) return !info->real && !info->gated && !info->sw;
    if (x->kind != IR_SELECTOR_WIDTH) return false;
    SelTerm *terms;
    size_t n;
    return selector_terms(p, x->u.width.selector, &terms, &n) && n == 1;
}

/* The side's positional sum per cell, its range and values, and how its square is computed. */
static bool side_analyse(Plan *p, NqSide *s) {
    size_t N = p->max_len, cells = pos_at(N + 1, 0);
    s->has_pos = side_has(s, NQ_POS);
    double plo = 0, phi = 0;
    if (s->has_pos) {
        if (cells > CG_MAX_POS_ENTRIES) return false;
        s->cell = ARENA_ARRAY(p->arena, double, cells);
        for (size_t n = 1; n <= N; n++)
            for (size_t i = 0; i < n; i++) {
                double v = 0;
                for (size_t k = 0; k < s->n; k++)
                    if (s->t[k].kind == NQ_POS) v += s->t[k].coef * pos_value(p, s->t[k].x, n, i);
                s->cell[pos_at(n, i)] = v;
            }
        s->dep = cells_dep(s->cell, N);
        plo = phi = s->cell[0];
        for (size_t c = 0; c < cells; c++) {
            plo = fmin(plo, s->cell[c]);
            phi = fmax(phi, s->cell[c]);
        }
    }
    s->lo = s->c0 + plo;
    s->hi = s->c0 + phi;
    size_t n_np = 0;
    const NqTerm *single = NULL;
    for (size_t k = 0; k < s->n; k++) {
        if (s->t[k].kind == NQ_POS) continue;
        const ValueSet *vs = &p->info[s->t[k].x->id].vs;
        double a = INFINITY, b = -INFINITY;
        for (size_t v = 0; v < vs->n; v++) { /* sets of numbers are ordered, but bools and ints interleave */
            double x = s->t[k].coef * value_as_double(vs->vals[v]);
            a = fmin(a, x);
            b = fmax(b, x);
        }
        if (s->t[k].mean) {
            a = fmin(s->t[k].coef * s->t[k].lo, s->t[k].coef * s->t[k].hi);
            b = fmax(s->t[k].coef * s->t[k].lo, s->t[k].coef * s->t[k].hi);
        }
        s->lo += a;
        s->hi += b;
        n_np++;
        single = &s->t[k];
    }
    if (!isfinite(s->lo) || !isfinite(s->hi)) return false;
    /* the values: positional sums, then each term added in turn, while few enough */
    size_t n = 1;
    double *cur = ARENA_NEW(p->arena, double);
    cur[0] = 0;
    if (s->has_pos) {
        cur = ARENA_ARRAY(p->arena, double, cells);
        memcpy(cur, s->cell, cells * sizeof *cur);
        n = sort_unique(cur, cells);
    }
    for (size_t k = 0; k < s->n && cur; k++) {
        if (s->t[k].kind == NQ_POS) continue;
        const ValueSet *vs = &p->info[s->t[k].x->id].vs;
        if (s->t[k].mean || (double)n * (double)vs->n > NQ_MAX_VALUES) {
            cur = NULL;
            break;
        }
        double *next = ARENA_ARRAY(p->arena, double, n * vs->n);
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < vs->n; b++) next[a * vs->n + b] = cur[a] + s->t[k].coef * value_as_double(vs->vals[b]);
        cur = next;
        n = sort_unique(cur, n * vs->n);
    }
    if (cur && n <= NQ_MAX_VALUES) {
        for (size_t v = 0; v < n; v++) cur[v] += s->c0;
        s->vals = cur;
        s->n_vals = sort_unique(cur, n);
    }
    s->feat = n_np == 0                                           ? FEAT_POS
              : n_np == 1 && !s->has_pos && free_cat(p, single->x, 0) ? FEAT_CAT
              : n_np == 1 && !s->has_pos && beside_possible(p, single->x) ? FEAT_BESIDE
                                                                      : FEAT_PL;
    return true;
}

/* ---- the gap ---- */

/* The least |k - q| over k in K, q in Q with k != q (both ascending), INFINITY if none. */
static double least_distance(const double *k, size_t nk, const double *q, size_t nq) {
    double best = INFINITY;
    size_t j = 0;
    for (size_t i = 0; i < nq; i++) {
        while (j < nk && k[j] < q[i]) j++;
        if (j > 0) best = fmin(best, q[i] - k[j - 1]);
        size_t a = j;
        while (a < nk && k[a] == q[i]) a++;
        if (a < nk) best = fmin(best, k[a] - q[i]);
    }
    return best;
}

/* The distinct numbers of an exact value set, ascending. */
static double *set_numbers(Plan *p, const ValueSet *vs, size_t *n) {
    double *v = ARENA_ARRAY(p->arena, double, vs->n ? vs->n : 1);
    for (size_t i = 0; i < vs->n; i++) v[i] = value_as_double(vs->vals[i]);
    *n = sort_unique(v, vs->n);
    return v;
}

static bool integral(double x) { return x == floor(x) && fabs(x) < 0x1p50; }

/* Whether every value of s-op t->x is an integer (whatever the coefficient). */
static bool term_integral(const Plan *p, const NqTerm *t) {
    if (t->mean) return false;
    if (t->kind == NQ_POS) {
        for (size_t n = 1; n <= p->max_len; n++)
            for (size_t i = 0; i < n; i++)
                if (!integral(pos_value(p, t->x, n, i))) return false;
        return true;
    }
    const ValueSet *vs = &p->info[t->x->id].vs;
    for (size_t v = 0; v < vs->n; v++)
        if (!integral(value_as_double(vs->vals[v]))) return false;
    return true;
}

typedef enum NqBound { NQ_BOUND, NQ_UNKNOWN, NQ_TOO_CLOSE } NqBound;

/* Whether a + b is exact in float64 (Knuth's two-sum: its rounding error is 0). */
static bool exact_sum(double a, double b) {
    double s = a + b, bb = s - a;
    return (a - (s - bb)) + (b - bb) == 0;
}

/* A lower bound on |K - Q| where they differ, from the form: the integral terms sum to an
 * integer, so the bound is the distance from the integers of the other terms' sum, over every
 * combination of their values. NQ_UNKNOWN where the form does not say: a non-integral term both
 * sides read (the reference rounds the two differently), too many combinations; NQ_TOO_CLOSE
 * where the equality is a matter of rounding: a non-integral sum that is an integer or within
 * rounding of one. */
static NqBound structural_dmin(Plan *p, NumEq *e, double mag, double *dmin) {
    *dmin = 1;
    const NqTerm *frac[2 * NQ_TERMS];
    double sign[2 * NQ_TERMS];
    size_t nf = 0;
    double c0 = e->side[0].c0 - e->side[1].c0, combos = 1;
    size_t means = 0;
    for (int s = 0; s < 2; s++) /* a non-integral s-op read twice and cancelled: the reference's sum was rounded */
        for (size_t k = 0; k < e->side[s].n_gone; k++)
            if (!term_integral(p, &e->side[s].gone[k])) return NQ_UNKNOWN;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < e->side[s].n; k++) {
            const NqTerm *t = &e->side[s].t[k];
            bool whole = integral(t->coef);
            if (t->kind != NQ_POS && t->merged && !term_integral(p, t)) return NQ_UNKNOWN;
            if (t->kind == NQ_POS) {
                for (size_t n = 1; whole && n <= p->max_len; n++)
                    for (size_t i = 0; whole && i < n; i++) whole = integral(pos_value(p, t->x, n, i));
                if (!whole) return NQ_UNKNOWN;
                continue;
            }
            if (t->mean) { /* s/m: at least 1/m from the integers unless it is one (then exact) */
                if (fabs(t->coef) != 1 || t->from == 3) return NQ_UNKNOWN;
                means++;
                continue;
            }
            const ValueSet *vs = &p->info[t->x->id].vs;
            for (size_t v = 0; whole && v < vs->n; v++) whole = integral(value_as_double(vs->vals[v]));
            if (whole) continue;
            if (t->from == 3) return NQ_UNKNOWN;
            frac[nf] = t;
            sign[nf++] = s ? -1 : 1;
            combos *= (double)vs->n;
        }
    if (combos > NQ_MAX_FRAC || means > 1 || (means && (nf || !integral(c0)))) return NQ_UNKNOWN;
    if (means) *dmin = 1 / (double)p->max_len;
    double tiny = 64 * DBL_EPSILON * (mag + 1) * (double)(e->side[0].n + e->side[1].n + 2);
    if (means) return *dmin > tiny ? NQ_BOUND : NQ_TOO_CLOSE;
    for (size_t combo = 0; combo < (size_t)combos; combo++) {
        size_t rest = combo;
        double f = c0;
        bool whole = integral(c0), exact = true;
        for (size_t j = 0; j < nf; j++) {
            const ValueSet *vs = &p->info[frac[j]->x->id].vs;
            double v = value_as_double(vs->vals[rest % vs->n]), c = sign[j] * frac[j]->coef, t = c * v;
            rest /= vs->n;
            exact = exact && fma(c, v, -t) == 0 && exact_sum(f, t);
            f += t;
            whole = whole && integral(v) && integral(frac[j]->coef);
        }
        /* an integer reached without rounding (0.5 * 6): a match, decided exactly */
        if (whole || (exact && integral(f))) continue;
        double d = fabs(f - nearbyint(f));
        *dmin = fmin(*dmin, d);
        if (d <= tiny) return NQ_TOO_CLOSE;
    }
    return NQ_BOUND;
}

/* Knots: the values vals plus one below and one above everything [lo, hi]. */
static double *with_ends(Plan *p, const double *vals, size_t n, double lo, double hi, size_t *out_n) {
    double *k = ARENA_ARRAY(p->arena, double, n + 2);
    memcpy(k, vals, n * sizeof *k);
    k[n] = lo;
    k[n + 1] = hi;
    *out_n = sort_unique(k, n + 2);
    return k;
}

static double least_spacing(const double *k, size_t n) {
    double s = INFINITY;
    for (size_t i = 1; i < n; i++) s = fmin(s, k[i] - k[i - 1]);
    return s;
}

/* The chords of x^2 through the knots, at x (knots ascending; x within them). */
static double chords(const double *k, size_t n, double x) {
    if (!k) return x * x;
    size_t a = 0, b = n - 1;
    while (b - a > 1) {
        size_t m = (a + b) / 2;
        if (k[m] <= x) a = m;
        else b = m;
    }
    if (x <= k[a]) return k[a] * k[a];
    return k[a] * k[a] + (k[a] + k[b]) * (x - k[a]); /* slope (k_b^2 - k_a^2) / (k_b - k_a) */
}

/* Units of an MLP that tabulates cells over (index, length) (mlp.c, gated by the index): one per
 * index, two per change along the length. */
static double table_units(const double *cell, PosDep dep, size_t N) {
    if (dep == POS_CONST || dep == POS_I) return 0;
    double u = (double)N;
    for (size_t i = 0; i < N; i++)
        for (size_t n = i + 2; n <= N; n++) u += 2 * (cell[pos_at(n, i)] != cell[pos_at(n - 1, i)]);
    return u;
}

/* Weights of the table lowering's one-hot of x (an estimate, about five per hidden unit): none
 * when it is free; a table over (index, length) for a positional x; a tabulation over its leaves'
 * grid for a map; else an MLP step pair per value. INFINITY when x has no finite set. */
static double onehot_cost(Plan *p, const IrNode *x) {
    if (x->kind == IR_CONST || free_cat(p, x, 0)) return 0;
    const SopInfo *info = &p->info[x->id];
    if (info->vs.unbounded || info->vs.approx) return INFINITY;
    double per_value = 10.0 * (double)info->vs.n;
    PosDep dep;
    if (positional_term(p, x, &dep)) {
        size_t N = p->max_len;
        double *cell = ARENA_ARRAY(p->arena, double, pos_at(N + 1, 0));
        for (size_t n = 1; n <= N; n++)
            for (size_t i = 0; i < n; i++) cell[pos_at(n, i)] = pos_value(p, x, n, i);
        return 5 * table_units(cell, dep, N) + per_value;
    }
    if (x->kind == IR_MAP && info->n_leaves) {
        double grid = 1;
        for (uint32_t k = 0; k < info->n_leaves; k++) {
            const SopInfo *a = &p->info[info->leaves[k]->id];
            if (a->vs.unbounded) return INFINITY;
            bool width = a->node->kind == IR_LENGTH || a->node->kind == IR_SELECTOR_WIDTH;
            grid *= width ? (double)p->max_len + 1 : (double)a->vs.n;
        }
        return 10 * grid + per_value;
    }
    return per_value;
}

/* Whether a side read through chords waits for an MLP that computes one of its terms (a map, a
 * width's number, a positional view of the length): then the chords come a layer after a table's
 * one-hot would. */
static bool chords_wait(Plan *p, const NqSide *s) {
    if (s->feat != FEAT_PL) return false; /* (FEAT_BESIDE: in the number's own MLP) */
    if (s->has_pos && (s->dep == POS_N || s->dep == POS_IN)) return true;
    for (size_t k = 0; k < s->n; k++) {
        const IrNode *x = s->t[k].x;
        if (s->t[k].kind != NQ_POS && (x->kind == IR_MAP || x->kind == IR_SELECTOR_WIDTH)) return true;
    }
    (void)p;
    return false;
}

/* The analysis of select(K, Q, ==); NULL when it does not apply or the table lowering is better. */
static NumEq *analyse(Plan *p, const IrNode *sel) {
    if (sel->kind != IR_SELECT || sel->u.select.cmp != IR_CMP_EQ) return NULL;
    const IrNode *K = sel->u.select.keys, *Q = sel->u.select.queries;
    if (K->kind == IR_CONST || Q->kind == IR_CONST) return NULL;
    const ValueSet *vk = &p->info[K->id].vs, *vq = &p->info[Q->id].vs;
    if (!vk->numeric || !vq->numeric || vk->approx || vq->approx) return NULL;
    NumEq *e = ARENA_NEW(p->arena, NumEq);
    if (!decompose(p, K, 1, &e->side[0], 1, 0) || !decompose(p, Q, 1, &e->side[1], 2, 0)) return NULL;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < e->side[s].n; k++)
            if (e->side[s].t[k].kind == NQ_OTHER && pos_uniform(p, e->side[s].t[k].x)) e->side[s].t[k].kind = NQ_UNIFORM;
    if (!rearrange(e->side) || !side_analyse(p, &e->side[0]) || !side_analyse(p, &e->side[1])) return NULL;
    for (int s = 0; s < 2; s++) /* (the side as written: neg_hist, whose term is a width) */
        if (e->side[s].feat == FEAT_BESIDE && compared_by_order(p, s ? Q : K)) e->side[s].feat = FEAT_PL;
    NqSide *ks = &e->side[0], *qs = &e->side[1];
    /* the scale of every rounding: the values, and what the reference summed to reach them */
    double mag = fmax(fmax(fmax(fabs(ks->lo), fabs(ks->hi)), fmax(fabs(qs->lo), fabs(qs->hi))), fmax(ks->ops_mag, qs->ops_mag));
    bool exact_sets = !vk->unbounded && !vq->unbounded && !vs_inexact_as_numbers(vk) && !vs_inexact_as_numbers(vq);
    if (exact_sets) {
        size_t nk, nq;
        double *a = set_numbers(p, vk, &nk), *b = set_numbers(p, vq, &nq);
        e->dmin = least_distance(a, nk, b, nq);
    } else {
        NqBound b = structural_dmin(p, e, mag, &e->dmin);
        if (b == NQ_UNKNOWN) return NULL;
        if (b == NQ_TOO_CLOSE) { /* refused here when no table can replace it */
            e->why = arena_printf(p->arena, "compares numbers that float64 cannot tell apart: values up to %.3g, as close "
                                  "as %.3g", mag, e->dmin);
            return isfinite(onehot_cost(p, K) + onehot_cost(p, Q)) ? NULL : e;
        }
    }
    if (!isfinite(e->dmin)) e->dmin = 1; /* no two values differ: any gap separates nothing */
    /* the knots: every query value where that is possible (the better gap), else every key value */
    double lo = fmin(ks->lo, qs->lo) - 1, hi = fmax(ks->hi, qs->hi) + 1;
    const double *kv = qs->vals ? qs->vals : ks->vals;
    size_t nkv = qs->vals ? qs->n_vals : ks->n_vals;
    if (qs->vals || ks->feat == FEAT_PL || ks->feat == FEAT_BESIDE) {
        if (!kv) return NULL; /* neither side's values can be enumerated */
        ks->knots = with_ends(p, kv, nkv, lo, hi, &ks->n_knots);
    }
    if (qs->feat == FEAT_PL || qs->feat == FEAT_BESIDE) {
        if (!kv) return NULL;
        qs->knots = with_ends(p, kv, nkv, lo, hi, &qs->n_knots);
    }
    /* a square beside a number is exact at the side's own values: those are knots too, so that
     * the least knot spacing sigma is at most dmin and the gap below stays dmin^2 for it */
    for (int s = 0; s < 2; s++) {
        NqSide *d = &e->side[s];
        if (d->feat != FEAT_BESIDE) continue;
        if (!d->vals) { /* too many values to know the square at each: chords, a layer later */
            d->feat = FEAT_PL;
            continue;
        }
        double *u = ARENA_ARRAY(p->arena, double, d->n_knots + d->n_vals);
        memcpy(u, d->knots, d->n_knots * sizeof *u);
        memcpy(u + d->n_knots, d->vals, d->n_vals * sizeof *u);
        d->knots = with_ends(p, u, d->n_knots + d->n_vals, lo, hi, &d->n_knots);
    }
    qs->affine = qs->feat == FEAT_POS && qs->has_pos && (qs->dep == POS_N || qs->dep == POS_IN) &&
                 cells_affine(qs->cell, p->max_len, &qs->a_n, &qs->a_i, &qs->a_c);
    bool concave = qs->vals != NULL; /* every query a knot of h, and g exact at every query */
    e->gap = e->dmin * (concave ? fmax(e->dmin, least_spacing(ks->knots, ks->n_knots)) : e->dmin);
    e->scale = 1 / e->gap;
    /* float64: each side's value within err of the reference's (the numbers read, each within
     * NQ_REL_ERR of its magnitude but the exact index, and the roundings of both sums). The score
     * errs by the slopes (|2q|, |2k|, h' and g', all <= 2M) times those, plus the roundings of the
     * chords (terms up to ~M^2 each), of tables of squares (within NQ_REL_ERR) and of the columns. */
    double M = fmax(fmax(fabs(ks->lo), fabs(ks->hi)), fmax(fabs(qs->lo), fabs(qs->hi))) + 2, Mq = fmax(fabs(qs->lo), fabs(qs->hi)) + 2;
    double rounding = 16 * DBL_EPSILON * ((double)ks->n_knots * M * M + (double)qs->n_knots * Mq * Mq + 8 * M * M);
    for (int s = 0; s < 2; s++) {
        NqSide *d = &e->side[s];
        d->err = 2 * (double)(d->n + d->n_gone + 1) * DBL_EPSILON * fmax(M, mag);
        for (size_t k = 0; k < d->n; k++)
            if (d->t[k].x->kind != IR_INDICES)
                d->err += fabs(d->t[k].coef) * NQ_REL_ERR * fmax(1, term_magnitude(p, &d->t[k]));
        if (d->has_pos && (d->dep == POS_N || d->dep == POS_IN)) rounding += NQ_REL_ERR * (s ? Mq * Mq : M * M);
    }
    double score_err = e->scale * (4 * M * (ks->err + qs->err) + rounding);
    if (e->dmin <= 64 * (ks->err + qs->err) || !(score_err <= NQ_MAX_SCORE_ERR))
        e->why = arena_printf(p->arena, "compares numbers that float64 cannot tell apart in attention scores: values "
                              "up to %.3g, as close as %.3g", mag, e->dmin);
    /* the table lowering instead: when it can be built, keep it where it is cheaper or earlier */
    double table = onehot_cost(p, K) + onehot_cost(p, Q);
    if (!isfinite(table)) return e;
    if (e->why || chords_wait(p, ks) || chords_wait(p, qs)) return NULL;
    double ours = 0;
    for (int s = 0; s < 2; s++) {
        NqSide *d = &e->side[s];
        if (d->affine) ours += 4 * (double)p->max_len; /* the length's number and its square */
        else if (d->has_pos) ours += table_units(d->cell, d->dep, p->max_len) * (d->feat == FEAT_POS ? 2 : 1);
        if (d->feat == FEAT_PL) ours += (double)d->n_knots; /* (FEAT_BESIDE: the number's own units) */
    }
    return 5 * ours + 40 < table ? e : NULL;
}

const NumEq *numeq_of(Plan *p, const IrNode *sel) {
    SopInfo *info = &p->info[sel->id];
    if (!info->numeq_known) {
        info->numeq = analyse(p, sel);
        info->numeq_known = true;
    }
    return info->numeq;
}

/* ---- demand ---- */

/* The views a side is read through: numbers of its non-positional terms, one-hots where its
 * square comes from one, the index and the length for its positional tables. */
static void side_want(Plan *p, const NqSide *s) {
    if (s->has_pos) {
        p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
        if (s->dep == POS_N || s->dep == POS_IN) p->info[p->length->id].needed = true;
        if (s->affine) p->info[p->length->id].want_num = true;
    }
    for (size_t k = 0; k < s->n; k++) {
        if (s->t[k].kind == NQ_POS) continue;
        SopInfo *x = &p->info[s->t[k].x->id];
        x->needed = true;
        if (s->feat == FEAT_CAT) x->want_cat = true;
        else x->want_num = true;
    }
}

/* Every comparison in a conjunct computed and read through one-hots (as demand.c's tables). */
static void want_onehots(Plan *p, const IrNode *sel) {
    if (sel->kind == IR_SELECT) {
        SopInfo *k = &p->info[sel->u.select.keys->id], *q = &p->info[sel->u.select.queries->id];
        k->needed = k->want_cat = q->needed = q->want_cat = true;
        return;
    }
    want_onehots(p, sel->u.combine.lhs);
    if (sel->u.combine.rhs) want_onehots(p, sel->u.combine.rhs);
}

/* Every selector node of sel's tree is computed. */
static void need_tree(Plan *p, const IrNode *sel) {
    p->info[sel->id].needed = true;
    if (sel->kind == IR_SELECT) return;
    need_tree(p, sel->u.combine.lhs);
    if (sel->u.combine.rhs) need_tree(p, sel->u.combine.rhs);
}

bool numeq_want(Plan *p, const IrNode *sel, bool for_width) {
    SelTerm *terms;
    size_t n;
    if (selector_index_match(p, sel, for_width) != IM_NONE || !selector_terms(p, sel, &terms, &n)) return false;
    bool any = false;
    for (size_t t = 0; t < n; t++)
        for (size_t c = 0; c < terms[t].n_conj; c++) any = any || numeq_of(p, terms[t].conj[c]);
    if (!any) return false;
    for (size_t t = 0; t < n; t++)
        for (size_t c = 0; c < terms[t].n_conj; c++) {
            const NumEq *e = numeq_of(p, terms[t].conj[c]);
            if (!e) {
                want_onehots(p, terms[t].conj[c]);
                continue;
            }
            side_want(p, &e->side[0]);
            side_want(p, &e->side[1]);
        }
    need_tree(p, sel);
    return true;
}

/* ---- plan ---- */

/* A number per cell as an MLP of the index and the length (a dim), or free over the index one-hot. */
static bool cells_view(Plan *p, const IrNode *sel, const double *cell, PosDep dep, const char *what, LinView *out,
                       int *time) {
    size_t N = p->max_len, cells = pos_at(N + 1, 0);
    const SopInfo *ix = &p->info[p->indices->id];
    if (dep == POS_CONST || dep == POS_I) {
        LvBuild b = {0};
        for (size_t i = 0; i < N; i++) {
            lvb_add(&b, cell[pos_at(i + 1, i)], dep == POS_CONST ? lv_unit(p->arena, DIM_ONE, 1) : ix->cat[i]);
            if (dep == POS_CONST) break;
        }
        *out = lvb_done(p->arena, &b);
        *time = dep == POS_CONST ? 0 : ix->time;
        return true;
    }
    PosTable *t = ARENA_NEW(p->arena, PosTable);
    t->val = ARENA_ARRAY(p->arena, Value, cells);
    t->fail = ARENA_ARRAY(p->arena, bool, cells);
    for (size_t c = 0; c < cells; c++) t->val[c] = value_float(cell[c]);
    t->dep = dep;
    SopInfo *len = &p->info[p->length->id];
    if (!len->has_u) return plan_error(p, sel, "reads the length, which is not computed (internal compiler error)");
    bool by_n = dep == POS_N; /* a function of the length alone: one input, no slice per index */
    const IrNode **lv = ARENA_ARRAY(p->arena, const IrNode *, 2);
    lv[0] = by_n ? p->length : p->indices;
    lv[1] = p->length;
    MlpOp *m = plan_new_mlp(p);
    m->node = sel;
    m->fn = MLP_FN_TABLE;
    m->table = t;
    m->leaves = lv;
    int slot = next_slot(len->u_time > ix->time ? len->u_time : ix->time, false);
    m->layer = slot_layer(slot);
    if (by_n ? !plan_scalar_arg(p, m, 0, len, true)
             : !plan_scalar_arg(p, m, 0, (SopInfo *)ix, true) || !plan_scalar_arg(p, m, 1, len, true))
        return false;
    m->out_cat = false;
    m->out_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, "select@%d:%d:%s", sel->loc.line, sel->loc.col, what), NULL);
    *out = lv_unit(p->arena, m->out_dim, 1);
    *time = slot;
    return true;
}

/* FEAT_BESIDE: x^2 as a second output of the one table MLP that writes x's number, and the side's
 * square (c0 + c x)^2 from the two into s->square; false (chords instead, a layer later) where
 * x's number is not one such MLP's. */
static bool square_beside(Plan *p, NqSide *s) {
    const NqTerm *t = NULL;
    for (size_t k = 0; k < s->n; k++)
        if (s->t[k].kind != NQ_POS) t = &s->t[k];
    const SopInfo *x = &p->info[t->x->id];
    if (!x->has_num || x->num.n != 1 || x->num.terms[0].coef != 1) return false;
    uint32_t dim = x->num.terms[0].dim;
    MlpOp *op = NULL;
    for (size_t i = 0; i < p->n_mlps; i++) {
        MlpOp *m = &p->mlps[i];
        if (m->out_cat || m->out_dim != dim) continue;
        if (op) return false; /* a sum of several MLPs' outputs (a width of several terms) */
        op = m;
    }
    if (!op || (op->fn != MLP_FN_MAP && op->fn != MLP_FN_IDENTITY && op->fn != MLP_FN_TABLE)) return false;
    if (!op->beside) { /* x^2 itself at every value x takes */
        op->beside = true;
        op->beside_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, "%s^2", plan_node_name(p, t->x)), NULL);
    }
    /* (c0 + c x)^2 = c0^2 + 2 c0 c x + c^2 x^2 at every value x takes: one x^2 serves every affine
     * form a select reads (out23c-001: x and x - 1 in two selects cost Dyck's prefix a layer) */
    LvBuild b = {0};
    lvb_add(&b, s->c0 * s->c0, lv_unit(p->arena, DIM_ONE, 1));
    lvb_add(&b, 2 * s->c0 * t->coef, x->num);
    lvb_add(&b, t->coef * t->coef, lv_unit(p->arena, op->beside_dim, 1));
    s->square = lvb_done(p->arena, &b);
    return true;
}

/* A side's value and its square (chords through its knots, or x^2) as views of its row. */
static bool side_build(Plan *p, const IrNode *sel, NqSide *s, bool keys) {
    if (s->built) return true;
    const char *name = keys ? "key" : "query";
    size_t N = p->max_len, cells = pos_at(N + 1, 0);
    LinView pos = lv_empty();
    int t_pos = 0;
    s->time = 0;
    if (s->has_pos && s->feat != FEAT_POS &&
        !cells_view(p, sel, s->cell, s->dep, arena_printf(p->arena, "%s", name), &pos, &t_pos))
        return false;
    if (s->affine) { /* a_i i + a_n n + a_c + c0 from the index and the length's number; n^2 on its own */
        SopInfo *len = &p->info[p->length->id];
        if (!len->has_num) return plan_error(p, sel, "reads the length's number, which is not computed (internal compiler "
                                                  "error)");
        s->n_view = len->num;
        double *n2 = ARENA_ARRAY(p->arena, double, cells);
        for (size_t n = 1; n <= N; n++)
            for (size_t i = 0; i < n; i++) n2[pos_at(n, i)] = (double)n * (double)n;
        int t_n2;
        if (!cells_view(p, sel, n2, POS_N, "length^2", &s->square, &t_n2)) return false;
        LvBuild b = {0};
        lvb_add(&b, s->a_i, plan_index_power(p, 1));
        lvb_add(&b, s->a_n, len->num);
        lvb_add(&b, s->a_c + s->c0, lv_unit(p->arena, DIM_ONE, 1));
        s->view = lvb_done(p->arena, &b);
        s->time = plan_view_time(p, s->view, t_n2);
        s->built = true;
        return true;
    }
    if (s->feat == FEAT_POS) { /* value and square both tabulated over the position */
        double *v = ARENA_ARRAY(p->arena, double, cells), *sq = ARENA_ARRAY(p->arena, double, cells);
        for (size_t c = 0; c < cells; c++) {
            v[c] = s->c0 + (s->has_pos ? s->cell[c] : 0);
            sq[c] = chords(s->knots, s->n_knots, v[c]);
        }
        PosDep dep = s->has_pos ? s->dep : POS_CONST;
        int t1, t2;
        if (!cells_view(p, sel, v, dep, name, &s->view, &t1) ||
            !cells_view(p, sel, sq, dep, arena_printf(p->arena, "%s^2", name), &s->square, &t2))
            return false;
        s->time = t1 > t2 ? t1 : t2;
        s->built = true;
        return true;
    }
    LvBuild b = {0};
    lvb_add(&b, 1, pos);
    lvb_add(&b, s->c0, lv_unit(p->arena, DIM_ONE, 1));
    for (size_t k = 0; k < s->n; k++) {
        if (s->t[k].kind == NQ_POS) continue;
        SopInfo *x = &p->info[s->t[k].x->id];
        if (!x->has_num) plan_num_from_cat(p, x);
        if (!x->has_num) {
            free(b.t);
            return plan_error(p, x->node, "has no numerical encoding (internal compiler error)");
        }
        lvb_add(&b, s->t[k].coef, x->num);
    }
    s->view = lvb_done(p->arena, &b);
    int t_view = plan_view_time(p, s->view, t_pos);
    const NqTerm *single = NULL;
    for (size_t k = 0; k < s->n; k++)
        if (s->t[k].kind != NQ_POS) single = &s->t[k];
    bool onehot = s->feat == FEAT_BESIDE && p->info[single->x->id].has_cat; /* computed anyway: free */
    if (s->feat == FEAT_CAT || onehot) { /* one term c x: the square over x's one-hot */
        const NqTerm *t = single;
        SopInfo *x = &p->info[t->x->id];
        if (!x->has_cat && !plan_convert_to_cat(p, x)) return false;
        LvBuild sq = {0};
        for (size_t v = 0; v < x->vs.n; v++)
            lvb_add(&sq, chords(s->knots, s->n_knots, s->c0 + t->coef * value_as_double(x->vs.vals[v])), x->cat[v]);
        s->square = lvb_done(p->arena, &sq);
        int t_sq = plan_view_time(p, s->square, x->time);
        s->time = t_view > t_sq ? t_view : t_sq;
        s->built = true;
        return true;
    }
    if (s->feat == FEAT_BESIDE && square_beside(p, s)) {
        int t_sq = plan_view_time(p, s->square, t_view);
        s->time = t_view > t_sq ? t_view : t_sq;
        s->built = true;
        return true;
    }
    /* chords of the view: a ReLU per knot (mlp.c, MLP_FN_PWL) */
    RealFn *fn = ARENA_NEW(p->arena, RealFn);
    fn->n_knots = s->n_knots;
    fn->kx = s->knots;
    fn->ky = ARENA_ARRAY(p->arena, double, s->n_knots);
    for (size_t k = 0; k < s->n_knots; k++) fn->ky[k] = s->knots[k] * s->knots[k];
    MlpOp *m = plan_new_mlp(p);
    m->node = sel;
    m->fn = MLP_FN_PWL;
    m->pwl = fn;
    m->x_view = s->view;
    int slot = next_slot(t_view, false);
    m->layer = slot_layer(slot);
    m->out_cat = false;
    m->out_dim = plan_alloc_dims(p, 1, arena_printf(p->arena, "select@%d:%d:%s^2", sel->loc.line, sel->loc.col, name), NULL);
    s->square = lv_unit(p->arena, m->out_dim, 1);
    s->time = slot;
    s->built = true;
    return true;
}

bool numeq_columns(Plan *p, const IrNode *sel, ScoreColumn *cols, size_t *n, int *time) {
    NumEq *e = p->info[sel->id].numeq;
    if (!e) return plan_error(p, sel, "is not a numerical equality (internal compiler error)");
    if (e->why) return plan_error(p, sel, e->why);
    NqSide *ks = &e->side[0], *qs = &e->side[1];
    if (!side_build(p, sel, ks, true) || !side_build(p, sel, qs, false)) return false;
    double s = e->scale;
    LinView one = lv_unit(p->arena, DIM_ONE, 1);
    cols[(*n)++] = (ScoreColumn){lv_combine(p->arena, 2 * s, qs->view, 0, lv_empty()), ks->view};
    cols[(*n)++] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, -s), ks->square};
    if (qs->affine) { /* q^2 = (a_i i + c)^2 + 2 a_n (a_i i + c) n + a_n^2 n^2, c = a_c + c0: n and n^2 of the key row */
        double c = qs->a_c + qs->c0;
        LvBuild b = {0};
        lvb_add(&b, 1, one);
        lvb_add(&b, -s * qs->a_i * qs->a_i, plan_index_power(p, 2));
        lvb_add(&b, -s * 2 * qs->a_i * c, plan_index_power(p, 1));
        lvb_add(&b, -s * c * c, one);
        cols[(*n)++] = (ScoreColumn){lvb_done(p->arena, &b), one};
        LinView lin = lv_combine(p->arena, -s * 2 * qs->a_n * qs->a_i, plan_index_power(p, 1), -s * 2 * qs->a_n * c, one);
        cols[(*n)++] = (ScoreColumn){lin, qs->n_view};
        cols[(*n)++] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, -s * qs->a_n * qs->a_n), qs->square};
    } else {
        cols[(*n)++] = (ScoreColumn){lv_combine(p->arena, 1, one, -s, qs->square), one};
    }
    if (ks->time > *time) *time = ks->time;
    if (qs->time > *time) *time = qs->time;
    return true;
}
