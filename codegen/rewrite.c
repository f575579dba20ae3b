/* The first pass: the reachable part of the IR copied into the compiler's own graph, with
 * rewrites that keep the program's meaning exactly and make it cheaper to compile.
 *
 * Diagonal selectors. A selector with a conjunct select(indices, indices, ==) selects at most the
 * query's own position, so every other comparison in it compares values at that one position:
 *   aggregate(S, x, d)   = x if P else d        (one key or none: no mean, no raise)
 *   selector_width(S)    = 1 if P else 0
 * where P is the selector's formula with each select(K, Q, cmp) read as the map `K cmp Q` and
 * and/or/not as the maps of the same name (all of them bools). The multi-head files of the
 * simulator paper route values this way; as maps they need no attention head.
 *
 * The BOS idiom. aggregate(s or select(indices, 0, ==), indicator(indices == 0)) is how the RASP
 * paper counts with a beginning-of-sequence token; it is a map of a selector width (bos_idiom).
 *
 * Signs of prefix counts. A prefix mean of a 0/1 indicator, m = aggregate(select(indices,
 * indices, <=), indicator(x)), is a / w for the count a of ones among the w keys; so is a suffix
 * mean (>=), and a strict one (<, >) whose default is 0. The sum or difference of two such means
 * over one window, plus or minus 0, times or divided by factors of one sign at every position
 * (indices + 1, length - indices, -2), compared with 0 is the same comparison of a + b or a - b
 * (reversed for a negative factor; a factor whose sign depends on the position, 0 included, or
 * a divisor of that kind never 0, multiplies the counts' sign by its own); two such means compared are a - b compared with 0;
 * a mean so scaled compared with 0 is the mean compared (prefix_sign). Float64 keeps these signs
 * exactly where the factors leave the means among the normal doubles: a mean is 0 only for
 * a = 0, and a / w, b / w, 1 / w apart, never round to one double, though (a / w - b / w) * w is
 * not always a - b. The counts' difference is read as one number through a heavy BOS; what it
 * replaces needs a table of every pair of means or a real with a margin at 0, which refuses every
 * balanced prefix (outsider out25-001, -010). */
#include <math.h>
#include <string.h>

#include "codegen/internal.h"

typedef struct Rewriter {
    const IrGraph *src;
    IrGraph *dst;
    IrNode **map; /* per source id: its copy, or NULL when not reached yet */
    size_t max_len;
} Rewriter;

static IrNode *copy_node(Rewriter *r, const IrNode *n);

static IrNode *arg(Rewriter *r, const IrNode *n) {
    return r->map[n->id] ? r->map[n->id] : copy_node(r, n);
}

/* Whether selector `s` can only select the key at the query's own position. */
static bool diagonal(const IrNode *s) {
    if (s->kind == IR_SELECT)
        return s->u.select.cmp == IR_CMP_EQ && s->u.select.keys->kind == IR_INDICES &&
               s->u.select.queries->kind == IR_INDICES;
    if (s->kind == IR_SELECT_AND) return diagonal(s->u.combine.lhs) || diagonal(s->u.combine.rhs);
    return false;
}

static const ValueOp cmp_ops[] = {VOP_EQ, VOP_NE, VOP_LT, VOP_GT, VOP_LE, VOP_GE};

/* The selector's formula at key position = query position, as a bool s-op (in dst). */
static IrNode *diagonal_formula(Rewriter *r, const IrNode *s) {
    switch (s->kind) {
    case IR_SELECT:
        if (s->u.select.keys == s->u.select.queries && s->u.select.keys->kind == IR_INDICES) {
            IrCmp c = s->u.select.cmp; /* an index against itself: known */
            return ir_const(r->dst, value_bool(c == IR_CMP_EQ || c == IR_CMP_LE || c == IR_CMP_GE), s->loc);
        }
        return ir_map_binary(r->dst, cmp_ops[s->u.select.cmp], arg(r, s->u.select.keys), arg(r, s->u.select.queries),
                             s->loc);
    case IR_SELECT_NOT: return ir_map_unary(r->dst, VOP_NOT, diagonal_formula(r, s->u.combine.lhs), s->loc);
    case IR_SELECT_AND: case IR_SELECT_OR: {
        IrNode *a = diagonal_formula(r, s->u.combine.lhs), *b = diagonal_formula(r, s->u.combine.rhs);
        bool and = s->kind == IR_SELECT_AND;
        /* True and b = b, False or b = b (bools: Python returns the other operand) */
        if (a->kind == IR_CONST && value_truthy(a->u.constant) == and) return b;
        if (b->kind == IR_CONST && value_truthy(b->u.constant) == and) return a;
        return ir_map_binary(r->dst, and ? VOP_AND : VOP_OR, a, b, s->loc);
    }
    default: return ir_const(r->dst, value_bool(false), s->loc); /* not a selector: unreachable */
    }
}

/* ---- the BOS idiom: aggregate(s or select(indices, 0, ==), v) ---- */

/* Whether s is select(indices, 0, ==): it selects the first position for every query. */
static bool first_position(const IrNode *s) {
    return s->kind == IR_SELECT && s->u.select.cmp == IR_CMP_EQ && s->u.select.keys->kind == IR_INDICES &&
           s->u.select.queries->kind == IR_CONST && value_is_number(s->u.select.queries->u.constant) &&
           value_as_double(s->u.select.queries->u.constant) == 0;
}

/* The value of a map of indices, length and constants at index i of a sequence of length len
 * (len < 0: a map of indices and constants alone); false when it reads anything else or raises. */
static bool cell_value(const IrNode *n, int64_t len, int64_t i, Value *v) {
    if (n->kind == IR_INDICES) { *v = value_int(i); return true; }
    if (n->kind == IR_LENGTH && len >= 0) { *v = value_int(len); return true; }
    if (n->kind == IR_CONST) { *v = n->u.constant; return true; }
    if (n->kind != IR_MAP) return false;
    Value args[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (!cell_value(n->u.map.args[j], len, i, &args[j])) return false;
    char msg[160];
    ValueResult res = ir_map_apply(n, args, NULL, msg, sizeof msg);
    *v = res.value;
    return res.ok;
}

static bool index_value(const IrNode *n, int64_t i, Value *v) { return cell_value(n, -1, i, v); }

/* Whether a map in n's subtree takes strings at some indices and other atoms at others: the
 * reference refuses such a sequence at every length that holds both ("the map mixes value
 * types"), which only computing the map shows (fuzz run 30). */
static bool mixes_strings(const IrNode *n, size_t max_len) {
    if (n->kind != IR_MAP) return false;
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (mixes_strings(n->u.map.args[j], max_len)) return true;
    bool str = false, other = false;
    for (size_t i = 0; i < max_len; i++) {
        Value v;
        if (!index_value(n, (int64_t)i, &v)) continue;
        *(v.kind == VAL_STR ? &str : &other) = true;
    }
    return str && other;
}

/* aggregate(x or select(indices, 0, ==), v) where v is a number c at index 0 and zero at every
 * other index (the RASP paper's BOS idiom, v = indicator(indices == 0)): it selects the first
 * position and the w = selector_width(x and select(indices, 0, !=)) others, so it is c when
 * w = 0 (one key: the value itself) and the mean S / (w + 1) otherwise. A width, one layer.
 * S is the reference's sum (ir/eval.c mean_of): c as a double, plus zeros, from 0: so 2^53 + 1
 * is rounded before it is divided, and -0.0 becomes 0.0. */
static IrNode *bos_idiom(Rewriter *r, const IrNode *n) {
    const IrNode *s = n->u.aggregate.selector, *x;
    if (s->kind != IR_SELECT_OR) return NULL;
    if (first_position(s->u.combine.rhs)) x = s->u.combine.lhs;
    else if (first_position(s->u.combine.lhs)) x = s->u.combine.rhs;
    else return NULL;
    const IrNode *v = n->u.aggregate.sop;
    Value c;
    if (!index_value(v, 0, &c) || (c.kind != VAL_INT && c.kind != VAL_FLOAT) || mixes_strings(v, r->max_len)) return NULL;
    for (size_t i = 1; i < r->max_len; i++) {
        Value z;
        if (!index_value(v, (int64_t)i, &z) || !value_is_number(z) || value_as_double(z) != 0) return NULL;
    }
    IrGraph *g = r->dst;
    SrcLoc loc = n->loc;
    IrNode *zero = ir_const(g, value_int(0), loc), *one = ir_const(g, value_int(1), loc), *cc = ir_const(g, c, loc);
    IrNode *others = ir_select_and(g, arg(r, x), ir_select(g, ir_indices(g, loc), zero, IR_CMP_NE, loc), loc);
    IrNode *w = ir_selector_width(g, others, loc);
    IrNode *sum = ir_const(g, value_float(value_as_double(c) + 0.0), loc);
    IrNode *mean = ir_map_binary(g, VOP_DIV, sum, ir_map_binary(g, VOP_ADD, w, one, loc), loc);
    return ir_map_cond(g, ir_map_binary(g, VOP_EQ, w, zero, loc), cc, mean, loc);
}

/* ---- signs of prefix counts ---- */

/* The comparison of a window selector, select(indices, indices, <=) (query i selects the i + 1
 * keys up to it: a prefix), >= (the length - i keys from it on: a suffix), or < and > (the same
 * without the query's own key: none at one end); -1 for anything else. */
static int window_selector(const IrNode *s) {
    if (s->kind != IR_SELECT || s->u.select.keys->kind != IR_INDICES || s->u.select.queries->kind != IR_INDICES)
        return -1;
    switch (s->u.select.cmp) {
    case IR_CMP_LE: case IR_CMP_GE: case IR_CMP_LT: case IR_CMP_GT: return (int)s->u.select.cmp;
    default: return -1;
    }
}

static bool const_value_zero(Value v) { return value_is_number(v) && value_as_double(v) == 0; }

static bool const_number(const IrNode *n, double v) {
    return n->kind == IR_CONST && value_is_number(n->u.constant) && value_as_double(n->u.constant) == v;
}

/* What a factor is at every position of every length: whether a finite number everywhere, its
 * sign where one sign holds throughout (+1: indices + 1, length - indices; -1: -2, indices -
 * length; 0 where it changes or is 0 somewhere: indices - 3, indices), whether it is 0 somewhere,
 * and the least and greatest magnitude of its nonzero values (1 if none). */
typedef struct FactorCells {
    bool finite, zero;
    int sign;
    double lo, hi;
} FactorCells;

static FactorCells factor_cells(const IrNode *n, size_t max_len) {
    FactorCells f = {true, false, 0, INFINITY, 0};
    bool pos = false, neg = false;
    for (int64_t len = 1; len <= (int64_t)max_len && f.finite; len++)
        for (int64_t i = 0; i < len && f.finite; i++) {
            Value v;
            double x = cell_value(n, len, i, &v) && value_is_number(v) ? value_as_double(v) : NAN;
            if (!isfinite(x)) f.finite = false;
            else if (x == 0) f.zero = true;
            else pos |= x > 0, neg |= x < 0, f.lo = fmin(f.lo, fabs(x)), f.hi = fmax(f.hi, fabs(x));
        }
    f.sign = f.zero || pos == neg ? 0 : pos ? 1 : -1;
    if (f.lo == INFINITY) f.lo = f.hi = 1;
    return f;
}

/* The 0/1 s-op v of n = aggregate(W, v) for a window selector W (its comparison in *window) with
 * v = indicator(x), 1 if x else 0 or 0 if x else 1; NULL for anything else. A query of <= or >=
 * selects a key, so the mean is never the default; one of < or > may select none, and the
 * default must then be 0, the count of its (no) ones. */
static const IrNode *prefix_indicator(const IrNode *n, int *window) {
    if (n->kind != IR_AGGREGATE || (*window = window_selector(n->u.aggregate.selector)) < 0) return NULL;
    if ((*window == IR_CMP_LT || *window == IR_CMP_GT) && !const_value_zero(n->u.aggregate.default_value)) return NULL;
    const IrNode *v = n->u.aggregate.sop;
    if (v->kind != IR_MAP) return NULL;
    if (v->u.map.kind == IR_MAP_UNARY && v->u.map.op == VOP_INDICATOR) return v;
    /* 1 if x else 0, or 0 if x else 1 (the indicator of not x: its width counts v == 1 alike) */
    const IrNode *then = v->u.map.kind == IR_MAP_COND ? v->u.map.args[1] : NULL, *other = then ? v->u.map.args[2] : NULL;
    if (then && ((const_number(then, 1) && const_number(other, 0)) || (const_number(then, 0) && const_number(other, 1))) &&
        then->u.constant.kind != VAL_BOOL && other->u.constant.kind != VAL_BOOL)
        return v; /* (bools would make the aggregate a non-numeric one) */
    return NULL;
}

/* The count at each position of the keys of its window where v is 1: the width of
 * select(indices, indices, window) and select(v, 1, ==). */
static IrNode *prefix_width(Rewriter *r, const IrNode *v, int window, SrcLoc loc) {
    IrGraph *g = r->dst;
    IrNode *upto = ir_select(g, ir_indices(g, loc), ir_indices(g, loc), (IrCmp)window, loc);
    IrNode *ones = ir_select(g, arg(r, v), ir_const(g, value_int(1), loc), IR_CMP_EQ, loc);
    return ir_selector_width(g, ir_select_and(g, upto, ones, loc), loc);
}

/* Factors of varying sign one comparison may take (their signs are multiplied in one table). */
enum { MAX_VARYING = 4 };

/* Whether x * f (x / f with div) keeps x's sign up to *sign (-1: reversed), or multiplies it by
 * f's varying sign (f appended to varying); *scale: the least it can shrink |x|. A divisor must
 * never be 0 (the reference raises there). */
static bool take_factor(const Rewriter *r, const IrNode *f, bool div, int *sign, double *scale, const IrNode **varying,
                        size_t *n_varying) {
    FactorCells c = factor_cells(f, r->max_len);
    if (!c.finite || (div && c.zero) || (!c.sign && *n_varying == MAX_VARYING)) return false;
    if (c.sign) *sign = c.sign;
    else *sign = 1, varying[(*n_varying)++] = f;
    *scale *= fmin(1, div ? 1 / c.hi : c.lo);
    return true;
}

/* What has the sign of m, or of -m (*flip), or of m times the factors varying[0 .. *n_varying)
 * (finite at every position, of any sign, 0 included), and is cheaper to compare: the sum or difference of
 * the counts of two means of indicators over one window for their sum or difference, the mean for
 * a mean, either times factors of one sign (either order) or divided by one, plus or minus 0
 * (0 - x flips); NULL for anything else, and for a mean alone (already so). Each step keeps the
 * sign exactly in float64: a product or quotient with such a factor, and x + 0, x - 0, 0 - x.
 * A nonzero mean (sum, difference) is at least 1 / max_len in magnitude; the factors that
 * shrink it, taken together (scale: a lower bound of every partial product, whatever the
 * order), must leave it above 2^-1016, among the normal doubles: no underflow to 0. Growing
 * past the largest double gives an infinity of the same sign. */
static IrNode *sign_counts(Rewriter *r, const IrNode *m, SrcLoc loc, bool *flip, const IrNode **varying,
                           size_t *n_varying) {
    bool changed = false;
    double scale = 1.0;
    *flip = false;
    *n_varying = 0;
    while (m->kind == IR_MAP && m->u.map.kind == IR_MAP_BINARY) {
        const IrNode *x = m->u.map.args[0], *y = m->u.map.args[1];
        int sign;
        bool mul = m->u.map.op == VOP_MUL, div = m->u.map.op == VOP_DIV;
        if ((mul || div) && take_factor(r, y, div, &sign, &scale, varying, n_varying)) m = x;
        else if (mul && take_factor(r, x, false, &sign, &scale, varying, n_varying)) m = y;
        else if ((m->u.map.op == VOP_ADD || m->u.map.op == VOP_SUB) && const_number(y, 0)) m = x, sign = 1;
        else if (m->u.map.op == VOP_ADD && const_number(x, 0)) m = y, sign = 1;
        else if (m->u.map.op == VOP_SUB && const_number(x, 0)) m = y, sign = -1;
        else break;
        if (!(scale >= 0x1p-1016 * (double)r->max_len)) return NULL;
        if (sign < 0) *flip = !*flip;
        changed = true;
    }
    /* one mean: its own sign, one ramp at 0 (a width would be decoded value by value) */
    int wa, wb;
    if (prefix_indicator(m, &wa)) return changed ? arg(r, m) : NULL;
    if (m->kind != IR_MAP || m->u.map.kind != IR_MAP_BINARY || (m->u.map.op != VOP_ADD && m->u.map.op != VOP_SUB))
        return NULL;
    const IrNode *a = prefix_indicator(m->u.map.args[0], &wa), *b = prefix_indicator(m->u.map.args[1], &wb);
    if (!a || !b || wa != wb) return NULL; /* one window: one w divides both counts */
    return ir_map_binary(r->dst, m->u.map.op, prefix_width(r, a, wa, loc), prefix_width(r, b, wb, loc), loc);
}

/* 1, 0 or -1: the sign of x (an int). */
static IrNode *sign_of(IrGraph *g, IrNode *x, SrcLoc loc) {
    IrNode *zero = ir_const(g, value_int(0), loc);
    IrNode *negative = ir_map_cond(g, ir_map_binary(g, VOP_LT, x, zero, loc), ir_const(g, value_int(-1), loc), zero, loc);
    return ir_map_cond(g, ir_map_binary(g, VOP_GT, x, zero, loc), ir_const(g, value_int(1), loc), negative, loc);
}

/* x CMP 0 or 0 CMP x where x has the sign of counts (sign_counts): the counts CMP 0; o CMP c
 * for two means of indicators over one window: their counts compared. */
static IrNode *prefix_sign(Rewriter *r, const IrNode *n) {
    if (n->kind != IR_MAP || n->u.map.kind != IR_MAP_BINARY) return NULL;
    switch (n->u.map.op) {
    case VOP_EQ: case VOP_NE: case VOP_LT: case VOP_GT: case VOP_LE: case VOP_GE: break;
    default: return NULL;
    }
    const IrNode *a = n->u.map.args[0], *b = n->u.map.args[1];
    int wa = -1, wb = -1;
    const IrNode *va = prefix_indicator(a, &wa), *vb = prefix_indicator(b, &wb);
    IrNode *zero = ir_const(r->dst, value_int(0), n->loc);
    if (va && vb && wa == wb) { /* o CMP c: the same w divides both counts, keeping their order (out25-010) */
        IrNode *d = ir_map_binary(r->dst, VOP_SUB, prefix_width(r, va, wa, n->loc), prefix_width(r, vb, wb, n->loc),
                                  n->loc);
        return ir_map_binary(r->dst, n->u.map.op, d, zero, n->loc);
    }
    bool zero_right = const_number(b, 0), flip;
    if (!zero_right && !const_number(a, 0)) return NULL;
    const IrNode *varying[MAX_VARYING];
    size_t n_varying;
    IrNode *counts = sign_counts(r, zero_right ? a : b, n->loc, &flip, varying, &n_varying);
    if (!counts) return NULL;
    if (n_varying) { /* sign(counts) * sign(f) ...: a table of a few values each */
        counts = sign_of(r->dst, counts, n->loc);
        for (size_t k = 0; k < n_varying; k++)
            counts = ir_map_binary(r->dst, VOP_MUL, counts, sign_of(r->dst, arg(r, varying[k]), n->loc), n->loc);
    }
    ValueOp op = n->u.map.op; /* -x CMP 0 is x CMP' 0 with the order reversed */
    if (flip) op = op == VOP_LT ? VOP_GT : op == VOP_GT ? VOP_LT : op == VOP_LE ? VOP_GE : op == VOP_GE ? VOP_LE : op;
    return ir_map_binary(r->dst, op, zero_right ? counts : zero, zero_right ? zero : counts, n->loc);
}

static IrNode *copy_node(Rewriter *r, const IrNode *n) {
    IrGraph *g = r->dst;
    IrNode *c = NULL;
    switch (n->kind) {
    case IR_TOKENS: c = ir_tokens(g, n->u.token_type, n->loc); break;
    case IR_INDICES: c = ir_indices(g, n->loc); break;
    case IR_LENGTH: c = ir_length(g, n->loc); break;
    case IR_CONST: c = ir_const(g, n->u.constant, n->loc); break;
    case IR_MAP: {
        if ((c = prefix_sign(r, n))) break;
        IrNode *a[3] = {0};
        for (uint32_t j = 0; j < n->u.map.nargs; j++) a[j] = arg(r, n->u.map.args[j]);
        switch (n->u.map.kind) {
        case IR_MAP_UNARY: c = ir_map_unary(g, n->u.map.op, a[0], n->loc); break;
        case IR_MAP_BINARY: c = ir_map_binary(g, n->u.map.op, a[0], a[1], n->loc); break;
        case IR_MAP_COND: c = ir_map_cond(g, a[0], a[1], a[2], n->loc); break;
        case IR_MAP_IN: c = ir_map_in(g, a[0], n->u.map.table_keys, n->u.map.table_len, n->loc); break;
        case IR_MAP_LOOKUP:
            c = ir_map_lookup(g, a[0], n->u.map.table_keys, n->u.map.table_values, n->u.map.table_len, n->loc);
            break;
        case IR_MAP_INDEX: c = ir_map_index(g, a[0], n->u.map.table_values, n->u.map.table_len, n->loc); break;
        }
        break;
    }
    case IR_SELECT: c = ir_select(g, arg(r, n->u.select.keys), arg(r, n->u.select.queries), n->u.select.cmp, n->loc); break;
    case IR_SELECT_AND: c = ir_select_and(g, arg(r, n->u.combine.lhs), arg(r, n->u.combine.rhs), n->loc); break;
    case IR_SELECT_OR: c = ir_select_or(g, arg(r, n->u.combine.lhs), arg(r, n->u.combine.rhs), n->loc); break;
    case IR_SELECT_NOT: c = ir_select_not(g, arg(r, n->u.combine.lhs), n->loc); break;
    case IR_AGGREGATE:
        if ((c = bos_idiom(r, n))) break;
        if (diagonal(n->u.aggregate.selector)) {
            IrNode *d = ir_const(g, n->u.aggregate.default_value, n->loc);
            IrNode *f = diagonal_formula(r, n->u.aggregate.selector);
            /* never selecting, it is still `x if False else d`: x stays computed, and raises where
             * the reference's x raises */
            c = f->kind == IR_CONST && value_truthy(f->u.constant) ? arg(r, n->u.aggregate.sop)
                                                                   : ir_map_cond(g, f, arg(r, n->u.aggregate.sop), d, n->loc);
        } else {
            c = ir_aggregate(g, arg(r, n->u.aggregate.selector), arg(r, n->u.aggregate.sop), n->u.aggregate.default_value,
                             n->loc);
        }
        break;
    case IR_SELECTOR_WIDTH:
        if (diagonal(n->u.width.selector))
            c = ir_map_cond(g, diagonal_formula(r, n->u.width.selector), ir_const(g, value_int(1), n->loc),
                            ir_const(g, value_int(0), n->loc), n->loc);
        else
            c = ir_selector_width(g, arg(r, n->u.width.selector), n->loc);
        break;
    }
    if (n->name) ir_set_name(g, c, n->name);
    r->map[n->id] = c;
    return c;
}

const IrNode *rewrite_program(const IrGraph *src, const IrNode *out, size_t max_len, IrGraph *dst) {
    Rewriter r = {src, dst, NULL, max_len};
    r.map = ARENA_ARRAY(dst->arena, IrNode *, (size_t)out->id + 1);
    /* indices and length always exist, first: s-ops computed from their positional tables read
     * them even when the program does not mention them */
    ir_indices(dst, out->loc);
    ir_length(dst, out->loc);
    /* arguments first, in id order, so the recursion in arg() stays shallow */
    for (size_t id = 0; id <= out->id; id++)
        if (!r.map[id]) copy_node(&r, src->nodes[id]);
    IrNode *o = r.map[out->id];
    /* the passes visit the nodes up to the output: it must come after indices and length (+x is
     * x for the ints these two hold) */
    if (o->kind == IR_INDICES || o->kind == IR_LENGTH) o = ir_map_unary(dst, VOP_POS, o, o->loc);
    return o;
}
