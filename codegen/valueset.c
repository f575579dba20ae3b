/* Value-set analysis: the exact finite set of values of every reachable s-op, given the
 * vocabulary and the maximum length. Sets are never approximated from below; a set that would
 * be infinite or too large is marked unbounded, and only a consumer that must enumerate it
 * (an MLP, a categorical encoding) turns that into an error naming the s-op. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

static ValueSet vs_unbounded(void) { return (ValueSet){NULL, 0, true, true, false, false, false, false}; }

/* Whether a set holds a float. A map of approximate arguments (rationals standing for the doubles
 * the reference reaches) that yields no float decided it by a comparison, a round or a lookup,
 * which the MLP that decides it checks against the rounding of its arguments (mlp.c): its values
 * are exact, and only floats stay approximate. */
static bool has_floats(const ValueSet *vs) {
    for (size_t i = 0; i < vs->n; i++)
        if (vs->vals[i].kind == VAL_FLOAT) return true;
    return vs->unbounded;
}

/* ---- kinds: where 1, 1.0 and True must be told apart ---- */

/* The kinds an s-op can hold, as a bit set over ValueKind: a forward pass over the IR alone. */
enum { K_BOOL = 1 << VAL_BOOL, K_INT = 1 << VAL_INT, K_FLOAT = 1 << VAL_FLOAT, K_STR = 1 << VAL_STR };

static unsigned table_kinds(const Value *t, size_t n) {
    unsigned k = 0;
    for (size_t i = 0; i < n; i++) k |= 1u << t[i].kind;
    return k;
}

static unsigned node_kinds(Plan *p, const IrNode *n) {
    static const unsigned token_kinds[] = {K_STR, K_INT, K_FLOAT, K_BOOL};
    const unsigned *k = p->kinds_possible;
    switch (n->kind) {
    case IR_TOKENS: return token_kinds[n->u.token_type];
    case IR_INDICES: case IR_LENGTH: case IR_SELECTOR_WIDTH: return K_INT;
    case IR_CONST: return 1u << n->u.constant.kind;
    case IR_AGGREGATE: { /* the default, one key's value, or a mean */
        if (selector_never_selects(p, n->u.aggregate.selector)) return 1u << n->u.aggregate.default_value.kind;
        unsigned s = k[n->u.aggregate.sop->id];
        return (1u << n->u.aggregate.default_value.kind) | s | (s & (K_INT | K_FLOAT) ? K_FLOAT : 0);
    }
    case IR_MAP: break;
    default: return 0;
    }
    unsigned a = k[n->u.map.args[0]->id], b = n->u.map.nargs > 1 ? k[n->u.map.args[1]->id] : 0;
    unsigned ints = K_INT | K_BOOL;
    switch (n->u.map.kind) {
    case IR_MAP_UNARY:
        switch (n->u.map.op) {
        case VOP_NEG: case VOP_POS: return (a & ints ? K_INT : 0) | (a & K_FLOAT);
        case VOP_NOT: return K_BOOL;
        default: return K_INT; /* round, indicator */
        }
    case IR_MAP_BINARY:
        switch (n->u.map.op) {
        case VOP_ADD: case VOP_SUB: case VOP_MUL: case VOP_MOD: case VOP_POW:
            return ((a & K_FLOAT) || (b & K_FLOAT) ? K_FLOAT : 0) | ((a & ints) && (b & ints) ? K_INT : 0) |
                   (n->u.map.op == VOP_POW && (a & ints) ? K_FLOAT : 0) | ((a & K_STR) && (b & K_STR) ? K_STR : 0) |
                   (n->u.map.op == VOP_MUL && ((a & K_STR) || (b & K_STR)) ? K_STR : 0);
        case VOP_DIV: return K_FLOAT;
        case VOP_AND: case VOP_OR: return a | b;
        default: return K_BOOL; /* comparisons */
        }
    case IR_MAP_COND: return b | k[n->u.map.args[2]->id];
    case IR_MAP_IN: return K_BOOL;
    default: return table_kinds(n->u.map.table_values, n->u.map.table_len); /* lookup, index */
    }
}

/* Whether the kind of a map's result depends on the kind of its argument j (the values being
 * equal as numbers): arithmetic keeps kinds (True + 1 is 2, 1 + 1.0 is 2.0) unless the other
 * operand is always a float, a comparison, a truth test or a division does not, and a list index
 * raises on a float. */
static bool map_arg_kind_flows(Plan *p, const IrNode *n, uint32_t j) {
    switch (n->u.map.kind) {
    case IR_MAP_UNARY: return n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS;
    case IR_MAP_BINARY:
        switch (n->u.map.op) {
        case VOP_ADD: case VOP_SUB: case VOP_MUL: case VOP_MOD: case VOP_POW:
            return p->kinds_possible[n->u.map.args[1 - j]->id] != K_FLOAT; /* else the result is a float */
        case VOP_AND: case VOP_OR: return true;
        default: return false; /* comparisons (bool), / (always a float) */
        }
    case IR_MAP_COND: return j > 0;
    case IR_MAP_INDEX: return true;
    default: return false; /* in, dict lookup: by value */
    }
}

/* Whether the sign of a zero result depends on the sign of a zero argument j: arithmetic keeps it
 * (-0.0 - 0.0 is -0.0, 1 * -0.0 too, whatever the other operand's kind), comparisons, truth
 * tests and lookups do not. */
static bool map_arg_zero_sign_flows(const IrNode *n, uint32_t j) {
    switch (n->u.map.kind) {
    case IR_MAP_UNARY: return n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS;
    case IR_MAP_BINARY:
        switch (n->u.map.op) {
        case VOP_ADD: case VOP_SUB: case VOP_MUL: case VOP_DIV: case VOP_MOD: case VOP_POW: case VOP_AND: case VOP_OR:
            return true;
        default: return false;
        }
    case IR_MAP_COND: return j > 0;
    case IR_MAP_INDEX: return true;
    default: return false;
    }
}

/* kind_matters[id]: some consumer of the s-op (or the output, which is printed with its kind)
 * tells 1, 1.0 and True apart. Elsewhere the s-op's numbers are collapsed to one atom per value:
 * its consumers cannot see the difference, and a numerical encoding could not make it. */
static void kinds_compute(Plan *p, const IrNode *out) {
    p->kinds_possible = ARENA_ARRAY(p->arena, unsigned, (size_t)out->id + 1);
    for (size_t id = 0; id <= out->id; id++)
        if (p->info[id].reachable) p->kinds_possible[id] = node_kinds(p, p->g->nodes[id]);
    p->info[out->id].kind_matters = p->info[out->id].zero_sign_matters = !p->numbers_only;
    for (size_t id = out->id + 1; id-- > 0;) {
        SopInfo *info = &p->info[id];
        const IrNode *n = info->node;
        if (!info->reachable) continue;
        if (n->kind == IR_MAP && n->u.map.kind == IR_MAP_INDEX) /* a float index raises, whatever the result */
            p->info[n->u.map.args[0]->id].kind_matters = true;
        if (info->zero_sign_matters && n->kind == IR_MAP) {
            for (uint32_t j = 0; j < n->u.map.nargs; j++)
                if (map_arg_zero_sign_flows(n, j)) p->info[n->u.map.args[j]->id].zero_sign_matters = true;
        } else if (info->zero_sign_matters && n->kind == IR_AGGREGATE) {
            p->info[n->u.aggregate.sop->id].zero_sign_matters = true;
        }
        if (!info->kind_matters) continue;
        if (n->kind == IR_MAP) {
            for (uint32_t j = 0; j < n->u.map.nargs; j++)
                if (map_arg_kind_flows(p, n, j)) p->info[n->u.map.args[j]->id].kind_matters = true;
        } else if (n->kind == IR_AGGREGATE) { /* one key: the value itself */
            p->info[n->u.aggregate.sop->id].kind_matters = true;
        }
    }
}

static bool reaches_2_53(const ValueSet *vs) {
    for (size_t i = 0; i < vs->n; i++)
        if (value_is_number(vs->vals[i]) && fabs(value_as_double(vs->vals[i])) >= 0x1p53) return true;
    return false;
}

/* Whether every number of the set is finite and below 2^26 in magnitude: sums, differences and
 * products of two such numbers are exact in float64 where both are integers. */
static bool small_finite(const ValueSet *vs) {
    for (size_t i = 0; i < vs->n; i++)
        if (value_is_number(vs->vals[i]) && !(fabs(value_as_double(vs->vals[i])) < 0x1p26)) return false;
    return true;
}

/* The same number as an atom of kind k, if it has one (1.5 is no int, 2 is no bool, -0.0 neither). */
static bool as_kind(Value v, ValueKind k, Value *out) {
    double x = value_as_double(v);
    switch (k) {
    case VAL_FLOAT: *out = value_float(x); return true;
    case VAL_INT: /* -0.0 is a float alone */
        if (x != floor(x) || fabs(x) >= 0x1p63 || vs_negative_zero(v)) return false;
        *out = v.kind == VAL_INT ? v : value_int((int64_t)x);
        return true;
    case VAL_BOOL:
        if ((x != 0 && x != 1) || vs_negative_zero(v)) return false;
        *out = value_bool(x == 1);
        return true;
    default: return false;
    }
}

/* Whether two results of one map are the same number (and zero sign, where that shows). */
static bool same_result(ValueResult a, ValueResult b, bool zero_signs) {
    if (a.ok != b.ok) return false;
    if (!a.ok || !value_is_number(a.value) || !value_is_number(b.value)) return true; /* kinds: kinds_compute */
    if (value_number_order(a.value, b.value) != 0) return false;
    return !zero_signs || vs_negative_zero(a.value) == vs_negative_zero(b.value);
}

/* Whether a collapsed argument's kind decides the value of map n after all: kinds_collapse kept
 * one atom per number where no consumer tells 1 from 1.0, but the number n computes can depend on
 * it: 3 + 2^53 is not 3.0 + 2^53, (2^56 + 15) / 23 is not (2^56 + 15) / 23.0, 5 % -1 is 0 and
 * 5.0 % -1 is -0.0, -(0) is 0 and -(0.0) is -0.0. Each member is tried in each kind the argument
 * can hold; an argument whose kind changes a result is marked (kind_matters), and vs_compute runs
 * the pass again. Where the argument combinations are too many to try, arithmetic past 2^53 marks
 * them, as a bound. */
static bool kinds_decide_value(Plan *p, const SopInfo *info) {
    const IrNode *n = info->node;
    if (n->kind != IR_MAP) return false;
    bool unary = n->u.map.kind == IR_MAP_UNARY && n->u.map.op == VOP_NEG; /* -(0) is 0, -(0.0) is -0.0 */
    if (!unary && n->u.map.kind != IR_MAP_BINARY) return false;
    switch (unary ? VOP_NEG : n->u.map.op) {
    case VOP_NEG: case VOP_ADD: case VOP_SUB: case VOP_MUL: case VOP_POW: case VOP_DIV: case VOP_MOD: break;
    default: return false;
    }
    uint32_t nargs = unary ? 1 : 2;
    const ValueSet *sets[2] = {NULL, NULL};
    bool mixed[2] = {false, false}, any = false;
    double total = 1;
    for (uint32_t j = 0; j < nargs; j++) {
        const IrNode *a = n->u.map.args[j];
        const SopInfo *x = &p->info[a->id];
        unsigned k = a->kind == IR_CONST ? 0 : p->kinds_possible[a->id];
        mixed[j] = !x->kind_matters && (k & K_FLOAT) && (k & (K_INT | K_BOOL));
        any = any || mixed[j];
        sets[j] = a->kind == IR_CONST ? NULL : &x->vs;
        if (sets[j] && sets[j]->unbounded) return false;
        total *= sets[j] ? (double)sets[j]->n : 1;
    }
    if (!any) return false;
    /* x + y, x - y, x * y of small numbers: an int and the float of the same value give the same
     * number (exact either way), and without zero signs nothing else can differ: no argument's
     * kind decides, and the grid need not be tried (millions of pairs of means, seconds). */
    ValueOp op = unary ? VOP_NEG : n->u.map.op;
    if ((op == VOP_ADD || op == VOP_SUB || op == VOP_MUL) && !info->zero_sign_matters) {
        bool small = true;
        for (uint32_t j = 0; j < nargs && small; j++) {
            const IrNode *a = n->u.map.args[j];
            Value c = a->kind == IR_CONST ? a->u.constant : value_int(0);
            small = sets[j] ? small_finite(sets[j]) : !value_is_number(c) || fabs(value_as_double(c)) < 0x1p26;
        }
        if (small) return false;
    }
    bool decides[2] = {false, false};
    if (total > CG_MAX_GRID) {
        bool past = reaches_2_53(&info->vs);
        for (uint32_t j = 0; j < nargs; j++) {
            const IrNode *a = n->u.map.args[j];
            past = past || (a->kind == IR_CONST ? value_is_number(a->u.constant) && fabs(value_as_double(a->u.constant)) >= 0x1p53
                                                : reaches_2_53(sets[j]));
        }
        decides[0] = decides[1] = past;
    }
    char msg[160];
    for (size_t combo = 0; combo < (size_t)total && total <= CG_MAX_GRID; combo++) {
        Value in[2];
        size_t rest = combo;
        for (uint32_t j = nargs; j-- > 0;) {
            in[j] = sets[j] ? sets[j]->vals[rest % sets[j]->n] : n->u.map.args[j]->u.constant;
            if (sets[j]) rest /= sets[j]->n;
        }
        ValueResult r = ir_map_apply(n, in, p->arena, msg, sizeof msg);
        for (uint32_t j = 0; j < nargs; j++) {
            if (!mixed[j] || decides[j] || !value_is_number(in[j])) continue;
            unsigned k = p->kinds_possible[n->u.map.args[j]->id];
            for (int kind = VAL_BOOL; kind <= VAL_FLOAT && !decides[j]; kind++) {
                Value alt[2] = {in[0], in[1]};
                if (!(k & (1u << kind)) || !as_kind(in[j], (ValueKind)kind, &alt[j])) continue;
                decides[j] = !same_result(r, ir_map_apply(n, alt, p->arena, msg, sizeof msg), info->zero_sign_matters);
            }
        }
    }
    bool marked = false;
    for (uint32_t j = 0; j < nargs; j++)
        if (mixed[j] && decides[j]) marked = p->info[n->u.map.args[j]->id].kind_matters = true;
    return marked;
}

static bool merges_into(const ValueSet *result, Value v, Value kept) {
    return value_is_number(v) && value_is_number(kept) && vs_member_order(result, v, kept) == 0;
}

/* Keeps one atom per number (an int over a float over a bool: flags such as all_int stay as
 * strong as they can) and marks the set as compared by number. */
static void kinds_collapse(ValueSet *vs, bool keep_zero_signs) {
    if (vs->unbounded || vs->by_number) return;
    static const int pref[] = {[VAL_BOOL] = 0, [VAL_INT] = 2, [VAL_FLOAT] = 1, [VAL_STR] = 0};
    const ValueSet result = {.by_number = true, .zero_signs = keep_zero_signs}; /* how members compare */
    size_t u = 0;
    for (size_t i = 0; i < vs->n; i++) {
        Value v = vs->vals[i];
        /* the kept atom v merges into: equal as a number (and, where signs are kept, of v's zero
         * sign: an int 0 or False is +0 in arithmetic, so -0.0 stays apart from it); the atoms
         * come sorted, so it is one of the last two kept (-0 and +0) */
        size_t k = u > 0 && merges_into(&result, v, vs->vals[u - 1])   ? u - 1
                   : u > 1 && merges_into(&result, v, vs->vals[u - 2]) ? u - 2
                                                                        : u;
        if (k < u) {
            if (pref[v.kind] > pref[vs->vals[k].kind]) vs->vals[k] = v;
            continue;
        }
        vs->vals[u++] = v;
    }
    for (size_t i = 1; i < u && keep_zero_signs; i++) /* -0.0 before an int 0 (vs_member_order) */
        if (vs_negative_zero(vs->vals[i]) && value_is_number(vs->vals[i - 1]) &&
            value_number_order(vs->vals[i], vs->vals[i - 1]) == 0) {
            Value t = vs->vals[i];
            vs->vals[i] = vs->vals[i - 1];
            vs->vals[i - 1] = t;
        }
    vs->n = u;
    vs->by_number = true;
    vs->zero_signs = keep_zero_signs;
    vs->all_int = true;
    for (size_t i = 0; i < u; i++) vs->all_int = vs->all_int && (vs->vals[i].kind == VAL_INT || vs->vals[i].kind == VAL_BOOL);
}

static ValueSet range_set(Arena *a, int64_t lo, int64_t hi) {
    size_t n = hi >= lo ? (size_t)(hi - lo + 1) : 0;
    Value *v = ARENA_ARRAY(a, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++) v[i] = value_int(lo + (int64_t)i);
    return vs_from_values(v, n);
}

/* ---- supports ---- */

static size_t n_cells(const Plan *p) { return p->max_len * (p->max_len + 1) / 2; }

/* The cells of the lengths in the analysis window [win_lo, win_hi]: [*first, *end). */
static void window_cells(const Plan *p, size_t *first, size_t *end) {
    *first = pos_at(p->win_lo, 0);
    *end = pos_at(p->win_hi + 1, 0);
}

/* The support of an s-op (see SopInfo.support), from its selector or its arguments. */
static void support_compute(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    size_t cells = n_cells(p);
    if (!p->have_pos || info->pos) return;
    if (n->kind == IR_AGGREGATE) {
        const PosTable *t = p->info[n->u.aggregate.selector->id].pos;
        if (!t) return;
        info->support = ARENA_ARRAY(p->arena, bool, cells);
        for (size_t c = 0; c < cells; c++) info->support[c] = t->fail[c] || t->count[c] > 0;
        info->rest = n->u.aggregate.default_value;
        return;
    }
    if (n->kind != IR_MAP) return;
    Value rest[3];
    bool any = false;
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->node->kind == IR_CONST) rest[j] = a->node->u.constant;
        else if (a->support) rest[j] = a->rest, any = true;
        else return;
    }
    char msg[160];
    ValueResult r = ir_map_apply(n, rest, p->arena, msg, sizeof msg);
    if (!any || !r.ok) return;
    info->rest = r.value;
    info->support = ARENA_ARRAY(p->arena, bool, cells);
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->support)
            for (size_t c = 0; c < cells; c++) info->support[c] = info->support[c] || a->support[c];
    }
}

/* Whether the non-constant arguments of map n all have supports, pairwise disjoint; *covered
 * tells whether their union is every cell. */
static bool disjoint_args(Plan *p, const IrNode *n, bool *covered) {
    size_t first, cells, k = 0;
    window_cells(p, &first, &cells);
    const bool *sup[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->node->kind == IR_CONST) continue;
        if (!a->support) return false;
        sup[k++] = a->support;
    }
    if (k < 2) return false;
    *covered = true;
    for (size_t c = first; c < cells; c++) {
        int hits = 0;
        for (size_t j = 0; j < k; j++) hits += sup[j][c];
        if (hits > 1) return false;
        if (hits == 0) *covered = false;
    }
    return true;
}

/* A map whose arguments have disjoint supports takes, at each position, at most one argument
 * away from its rest value: the union of those cases. */
static ValueSet map_values_disjoint(Plan *p, SopInfo *info, bool covered) {
    const IrNode *n = info->node;
    size_t nargs = n->u.map.nargs, total = covered ? 0 : 1;
    Value rest[3];
    for (size_t j = 0; j < nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->vs.unbounded) return vs_unbounded();
        rest[j] = a->node->kind == IR_CONST ? a->node->u.constant : a->rest;
        total += a->vs.n;
    }
    Value *out = ARENA_ARRAY(p->arena, Value, total ? total : 1);
    size_t count = 0;
    char msg[160];
    ValueResult r;
    if (!covered && (r = ir_map_apply(n, rest, p->arena, msg, sizeof msg)).ok) out[count++] = r.value;
    for (size_t j = 0; j < nargs; j++) {
        const SopInfo *a = &p->info[n->u.map.args[j]->id];
        if (a->node->kind == IR_CONST) continue;
        for (size_t i = 0; i < a->vs.n; i++) {
            Value in[3] = {rest[0], rest[1], rest[2]};
            in[j] = a->vs.vals[i];
            r = ir_map_apply(n, in, p->arena, msg, sizeof msg);
            if (r.ok) out[count++] = r.value;
            else info->may_fail = true;
        }
    }
    ValueSet vs = vs_from_values(out, count);
    for (size_t j = 0; j < nargs; j++) vs.approx = vs.approx || p->info[n->u.map.args[j]->id].vs.approx;
    vs.approx = vs.approx && has_floats(&vs);
    return vs;
}

static ValueSet aggregate_values_at(Plan *p, const IrNode *n, const ValueSet *src, const bool *counts);

/* ---- maps of arguments that are correlated through the position ---- */

/* How an argument of a map is known at a cell: a positional s-op by its value there, an
 * aggregate over a positional selector by how many keys it selects there, anything else not. */
typedef enum CellKey { CK_NONE, CK_VALUE, CK_COUNT } CellKey;

static CellKey cell_key(Plan *p, const IrNode *a) {
    const SopInfo *x = &p->info[a->id];
    if (x->pos && x->pos->val && !x->pos->any_fail) return CK_VALUE;
    if (a->kind == IR_AGGREGATE) {
        const PosTable *t = p->info[a->u.aggregate.selector->id].pos;
        if (t && t->count && !t->any_fail) return CK_COUNT;
    }
    return CK_NONE;
}

typedef struct CellTuple {
    size_t key[3]; /* per argument: value index (CK_VALUE) or count (CK_COUNT) */
} CellTuple;

static int tuple_cmp(const void *a, const void *b) { return memcmp(a, b, sizeof(CellTuple)); }

/* A map with a positional argument and an aggregate over a positional selector, such as
 * (indices + 1) * aggregate(select(indices, indices, <=), x): at each cell the first has one
 * value and the second averages a known number of keys, so the map's values are the union over
 * the cells' (value, count) classes, not the product of the whole sets (Dyck's n_opens). False
 * when no argument is so correlated or the union would be too large. */
static bool map_values_by_cell(Plan *p, SopInfo *info, ValueSet *out) {
    const IrNode *n = info->node;
    size_t nargs = n->u.map.nargs, keyed = 0;
    CellKey kind[3];
    for (size_t j = 0; j < nargs; j++) {
        kind[j] = cell_key(p, n->u.map.args[j]);
        keyed += kind[j] != CK_NONE && n->u.map.args[j]->kind != IR_CONST;
        if (p->info[n->u.map.args[j]->id].vs.unbounded) return false;
    }
    if (keyed < 2 || !p->have_pos) return false;
    size_t first, end;
    window_cells(p, &first, &end);
    CellTuple *tu = ARENA_ARRAY(p->arena, CellTuple, end - first + 1);
    size_t nt = 0;
    for (size_t c = first; c < end; c++) {
        CellTuple t;
        memset(&t, 0, sizeof t);
        for (size_t j = 0; j < nargs; j++) {
            const IrNode *a = n->u.map.args[j];
            if (kind[j] == CK_VALUE) {
                if (a->kind == IR_CONST) continue;
                if (!vs_contains(&p->info[a->id].vs, p->info[a->id].pos->val[c], &t.key[j])) return false;
            } else if (kind[j] == CK_COUNT) {
                t.key[j] = (size_t)p->info[a->u.aggregate.selector->id].pos->count[c];
            }
        }
        tu[nt++] = t;
    }
    qsort(tu, nt, sizeof *tu, tuple_cmp);
    size_t u = 0;
    for (size_t i = 0; i < nt; i++)
        if (u == 0 || memcmp(&tu[u - 1], &tu[i], sizeof *tu)) tu[u++] = tu[i];
    Value *vals = NULL;
    size_t count = 0, cap = 0, work = 0;
    char msg[160];
    bool *counts = ARENA_ARRAY(p->arena, bool, p->max_len + 1);
    for (size_t i = 0; i < u; i++) {
        ValueSet sets[3];
        size_t total = 1;
        for (size_t j = 0; j < nargs; j++) {
            const IrNode *a = n->u.map.args[j];
            const SopInfo *x = &p->info[a->id];
            if (kind[j] == CK_VALUE && a->kind != IR_CONST) {
                sets[j] = (ValueSet){(Value *)&x->vs.vals[tu[i].key[j]], 1, false, true, true, false, x->vs.by_number, x->vs.zero_signs};
            } else if (kind[j] == CK_COUNT) {
                memset(counts, 0, (p->max_len + 1) * sizeof *counts);
                counts[tu[i].key[j]] = true;
                sets[j] = aggregate_values_at(p, a, &p->info[a->u.aggregate.sop->id].vs, counts);
                if (sets[j].unbounded) return false;
            } else {
                sets[j] = x->vs;
            }
            total *= sets[j].n;
        }
        work += total;
        if (work > CG_MAX_GRID) return false;
        if (count + total > cap) {
            size_t nc = cap ? cap * 2 : 256;
            while (nc < count + total) nc *= 2;
            vals = arena_grow(p->arena, vals, count, nc, sizeof *vals);
            cap = nc;
        }
        for (size_t combo = 0; combo < total; combo++) {
            Value in[3];
            size_t rest = combo;
            for (size_t j = nargs; j-- > 0;) {
                in[j] = sets[j].vals[rest % sets[j].n];
                rest /= sets[j].n;
            }
            ValueResult r = ir_map_apply(n, in, p->arena, msg, sizeof msg);
            if (r.ok) vals[count++] = r.value;
            else info->may_fail = true;
        }
    }
    *out = vs_from_values(vals, count);
    for (size_t j = 0; j < nargs; j++) out->approx = out->approx || p->info[n->u.map.args[j]->id].vs.approx;
    out->approx = out->approx && has_floats(out);
    return true;
}

/* ---- maps of maps of the same s-ops ---- */

enum { SRC_MAX = 4 };

/* The s-ops a map is computed from through maps (up to SRC_MAX of them): positional s-ops and
 * non-maps are sources. False when there are more. */
static bool map_sources_of(const Plan *p, const IrNode *n, const IrNode **src, size_t *count, bool top) {
    if (n->kind == IR_CONST) return true;
    if (n->kind == IR_MAP && (top || !p->info[n->id].pos)) {
        for (uint32_t j = 0; j < n->u.map.nargs; j++)
            if (!map_sources_of(p, n->u.map.args[j], src, count, false)) return false;
        return true;
    }
    for (size_t k = 0; k < *count; k++)
        if (src[k] == n) return true;
    if (*count == SRC_MAX) return false;
    src[(*count)++] = n;
    return true;
}

/* n at the sources' values, as the reference computes it; false where some step raises. */
static bool eval_from_sources(Plan *p, const IrNode *n, const IrNode *const *src, const Value *vals, size_t ns,
                              Value *out) {
    for (size_t k = 0; k < ns; k++)
        if (src[k] == n) {
            *out = vals[k];
            return true;
        }
    if (n->kind == IR_CONST) {
        *out = n->u.constant;
        return true;
    }
    Value in[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++)
        if (!eval_from_sources(p, n->u.map.args[j], src, vals, ns, &in[j])) return false;
    char msg[160];
    ValueResult r = ir_map_apply(n, in, p->arena, msg, sizeof msg);
    *out = r.value;
    return r.ok;
}

/* A map whose arguments are maps of fewer shared s-ops (x1 = x0 + c; x2 = x1 + c): its values
 * over the product of those s-ops' sets, which is smaller than the product of its arguments'
 * (and exact where they are correlated). False when that is not smaller or too large. */
static bool map_values_by_sources(Plan *p, SopInfo *info, ValueSet *out) {
    const IrNode *n = info->node, *src[SRC_MAX];
    size_t ns = 0;
    if (!map_sources_of(p, n, src, &ns, true) || ns == 0) return false;
    double by_src = 1, by_args = 1;
    for (size_t k = 0; k < ns; k++) {
        const ValueSet *vs = &p->info[src[k]->id].vs;
        if (vs->unbounded || vs->approx) return false;
        by_src *= (double)vs->n;
    }
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        const ValueSet *vs = &p->info[n->u.map.args[j]->id].vs;
        if (vs->unbounded) return false;
        if (n->u.map.args[j]->kind != IR_CONST) by_args *= (double)vs->n;
    }
    if (by_src >= by_args || by_src > CG_MAX_GRID || by_src == 0) return false;
    size_t total = (size_t)by_src, count = 0;
    Value *vals = ARENA_ARRAY(p->arena, Value, total);
    for (size_t combo = 0; combo < total; combo++) {
        Value in[SRC_MAX];
        size_t rest = combo;
        for (size_t k = ns; k-- > 0;) {
            const ValueSet *vs = &p->info[src[k]->id].vs;
            in[k] = vs->vals[rest % vs->n];
            rest /= vs->n;
        }
        Value args[3];
        bool ok = true;
        for (uint32_t j = 0; j < n->u.map.nargs && ok; j++) ok = eval_from_sources(p, n->u.map.args[j], src, in, ns, &args[j]);
        if (!ok) continue; /* an argument raises first: no value here */
        char msg[160];
        ValueResult r = ir_map_apply(n, args, p->arena, msg, sizeof msg);
        if (r.ok) vals[count++] = r.value;
        else info->may_fail = true;
    }
    *out = vs_from_values(vals, count);
    return true;
}

/* {False, True}: what a comparison of two numbers can give, where their pairs are too many to
 * try (the index against a mean of indices, at max-len 43: 43 x 27,633). A superset is sound;
 * numbers never raise in a comparison. */
static bool comparison_codomain(Plan *p, const IrNode *n, ValueSet *out) {
    if (n->u.map.kind != IR_MAP_BINARY || n->u.map.op < VOP_EQ || n->u.map.op > VOP_GE) return false;
    for (uint32_t j = 0; j < 2; j++) /* reals are compared by reals.c, with margins */
        if ((p->kinds_possible[n->u.map.args[j]->id] & K_STR) || p->info[n->u.map.args[j]->id].real) return false;
    Value *v = ARENA_ARRAY(p->arena, Value, 2);
    v[0] = value_bool(false);
    v[1] = value_bool(true);
    *out = vs_from_values(v, 2);
    return true;
}

/* Tabulates a map over the product of its arguments' value sets. */
/* The lowest and highest of a set that holds every int between them and nothing else (no bool,
 * no float), below 2^60 in magnitude. */
static bool int_range(const IrNode *a, const ValueSet *vs, int64_t *lo, int64_t *hi) {
    if (a->kind == IR_CONST || vs->unbounded || vs->n == 0) return false;
    for (size_t i = 0; i < vs->n; i++)
        if (vs->vals[i].kind != VAL_INT) return false;
    *lo = vs->vals[0].as.i, *hi = vs->vals[vs->n - 1].as.i;
    return *hi - *lo + 1 == (int64_t)vs->n && *lo > -((int64_t)1 << 60) && *hi < ((int64_t)1 << 60);
}

/* x + y or x - y of two such ranges of ints: the range between the extremes, every int of it
 * reached (a width minus a width: not a grid of every pair, sorted, at every length). */
static bool int_range_sum(Plan *p, const IrNode *n, const ValueSet *const *args, ValueSet *out) {
    if (n->u.map.kind != IR_MAP_BINARY || (n->u.map.op != VOP_ADD && n->u.map.op != VOP_SUB)) return false;
    int64_t lo[2], hi[2];
    for (int j = 0; j < 2; j++)
        if (!int_range(n->u.map.args[j], args[j], &lo[j], &hi[j])) return false;
    bool add = n->u.map.op == VOP_ADD;
    *out = range_set(p->arena, add ? lo[0] + lo[1] : lo[0] - hi[1], add ? hi[0] + hi[1] : hi[0] - lo[1]);
    return true;
}

static ValueSet map_values(Plan *p, SopInfo *info) {
    const IrNode *n = info->node;
    size_t nargs = n->u.map.nargs, total = 1;
    const ValueSet *args[3];
    bool covered;
    if (disjoint_args(p, n, &covered)) return map_values_disjoint(p, info, covered);
    ValueSet by_cell;
    if (map_values_by_cell(p, info, &by_cell)) return by_cell;
    if (map_values_by_sources(p, info, &by_cell)) return by_cell;
    for (size_t j = 0; j < nargs; j++) {
        args[j] = &p->info[n->u.map.args[j]->id].vs;
        if (args[j]->n == 0 && !args[j]->unbounded) return vs_from_values(NULL, 0);
    }
    ValueSet range;
    if (int_range_sum(p, n, args, &range)) return range;
    for (size_t j = 0; j < nargs; j++) {
        if (args[j]->unbounded || total > CG_MAX_GRID / args[j]->n)
            return comparison_codomain(p, n, &by_cell) ? by_cell : vs_unbounded();
        total *= args[j]->n;
    }
    Value *out = ARENA_ARRAY(p->arena, Value, total);
    size_t count = 0;
    char msg[160];
    for (size_t combo = 0; combo < total; combo++) {
        Value in[3];
        size_t rest = combo;
        for (size_t j = nargs; j-- > 0;) {
            in[j] = args[j]->vals[rest % args[j]->n];
            rest /= args[j]->n;
        }
        ValueResult r = ir_map_apply(n, in, p->arena, msg, sizeof msg);
        if (r.ok) out[count++] = r.value;
        else info->may_fail = true;
    }
    ValueSet vs = vs_from_values(out, count);
    for (size_t j = 0; j < nargs; j++) vs.approx = vs.approx || args[j]->approx;
    vs.approx = vs.approx && has_floats(&vs);
    return vs;
}

/* c0 + s/k for k = 2..N and every integer s in [k*lo, k*hi] (the means of k integers from
 * [lo, hi]), into a fresh array with `extra` more free slots; false when over CG_MAX_VALUES. */
static bool means_of_range(Plan *p, int64_t lo, int64_t hi, int scale, double c0, const bool *counts, size_t extra,
                           Value **out, size_t *count) {
    size_t total = extra;
    /* sums past 2^53 are not exact in float64 (nor is the model's mean of them) */
    if (fmax(fabs((double)lo), fabs((double)hi)) * (double)p->win_hi > 9007199254740992.0) return false;
    for (size_t k = 2; k <= p->win_hi; k++) {
        if (counts && !counts[k]) continue;
        double span = (double)k * (double)(hi - lo) + 1;
        if (span + (double)total > CG_MAX_VALUES) return false;
        total += (size_t)span;
    }
    Value *v = ARENA_ARRAY(p->arena, Value, total ? total : 1);
    size_t n = 0;
    bool every_k = true;
    for (size_t k = 2; k <= p->win_hi && counts && every_k; k++) every_k = counts[k];
    /* (s 2^-scale) / k rounds as s / k does, scaled exactly (no subnormals: see dyadic_grid) */
    if (every_k && p->win_hi >= 2 && hi > lo) {
        /* every k: m + a/b for a/b in the Farey sequence of order N, in ascending order (the
         * next of a/b, c/d is (t c - a)/(t d - b), t = (N + b) / d), then hi: the same rationals
         * once each, each rounding as its unreduced s/k does, and sorted for vs_make */
        int64_t N = (int64_t)p->win_hi;
        for (int64_t m = lo; m < hi; m++)
            for (int64_t a = 0, b = 1, c = 1, d = N; a < b;) {
                v[n++] = value_float(c0 + ldexp((double)(m * b + a) / (double)b, -scale));
                int64_t t = (N + b) / d, e = t * c - a, f = t * d - b;
                a = c, b = d, c = e, d = f;
            }
        v[n++] = value_float(c0 + ldexp((double)hi, -scale));
    } else {
        for (int64_t k = 2; k <= (int64_t)p->win_hi; k++)
            if (!counts || counts[k])
                for (int64_t s = k * lo; s <= k * hi; s++)
                    v[n++] = value_float(c0 + ldexp((double)s / (double)k, -scale));
    }
    *out = v;
    *count = n;
    return true;
}

/* Whether every number of src is z * 2^-scale for an integer z with |z| * N below 2^53, for the
 * least such scale: then every partial sum of N of them is exact in float64 (and zero is +0.0,
 * as 0.0 + -0.0 is), and their mean is one rounding of s / k, scaled. [*lo, *hi] is the range
 * of z. Integers have scale 0; 0.5, 0.25, -0.0 are dyadic too; 0.1 is not. */
static bool dyadic_grid(const Plan *p, const ValueSet *src, int *scale, int64_t *lo, int64_t *hi) {
    double limit = 9007199254740992.0 / (double)(p->win_hi > 1 ? p->win_hi : 1);
    for (int e = 0; e <= 60; e++) {
        bool ok = true;
        for (size_t i = 0; ok && i < src->n; i++) {
            double z = ldexp(value_as_double(src->vals[i]), e);
            ok = z == floor(z) && fabs(z) <= limit && (z == 0 || fabs(value_as_double(src->vals[i])) >= 0x1p-960);
        }
        if (!ok) continue;
        *scale = e;
        *lo = (int64_t)ldexp(value_as_double(src->vals[0]), e);
        *hi = (int64_t)ldexp(value_as_double(src->vals[src->n - 1]), e);
        return true;
    }
    return false;
}

/* The values of an aggregate: the default (no key), the source's values (one key) and, for
 * numbers, the means of k = 2..N integers from their range; a positional selector says exactly
 * which numbers of keys occur. */
static ValueSet aggregate_values(Plan *p, const IrNode *n, const ValueSet *src) {
    const PosTable *t = p->info[n->u.aggregate.selector->id].pos;
    bool *counts = NULL;
    if (t) { /* the numbers of keys it selects at the lengths of the window */
        size_t first, end;
        window_cells(p, &first, &end);
        counts = ARENA_ARRAY(p->arena, bool, p->max_len + 1);
        for (size_t c = first; c < end; c++)
            if (!t->fail[c]) counts[t->count[c]] = true;
    }
    return aggregate_values_at(p, n, src, counts);
}

/* The values of the aggregate when it selects one of the numbers of keys in counts (NULL: any). */
static ValueSet aggregate_values_at(Plan *p, const IrNode *n, const ValueSet *src, const bool *counts) {
    Value d = n->u.aggregate.default_value;
    bool none = !counts || counts[0], one = !counts || counts[1];
    bool several = !selector_at_most_one(p, n->u.aggregate.selector);
    bool averages = several && src->numeric;
    bool all_bool = true;
    for (size_t i = 0; i < src->n; i++) all_bool = all_bool && src->vals[i].kind == VAL_BOOL;
    if (src->unbounded) return vs_unbounded();
    Value *v;
    size_t count = 0;
    if (!averages || all_bool || src->n == 0) {
        v = ARENA_ARRAY(p->arena, Value, src->n + 1);
    } else {
        int scale;
        int64_t lo, hi;
        if (!dyadic_grid(p, src, &scale, &lo, &hi)) return vs_unbounded();
        if (!means_of_range(p, lo, hi, scale, 0, counts, src->n + 1, &v, &count)) return vs_unbounded();
    }
    if (one || (several && !averages)) /* several non-numbers raise; the model checks that */
        for (size_t i = 0; i < src->n; i++) v[count++] = src->vals[i];
    if (none) v[count++] = d;
    ValueSet vs = vs_from_values(v, count);
    vs.approx = src->approx;
    return vs;
}

/* ---- linear combinations of means over one selector ---- */

static bool integral(double x) { return x == floor(x) && fabs(x) < 9e15; }

/* The LinMean of an averaging aggregate (integer source values, numeric default), of a constant
 * (sel NULL), or of an affine map of those; NULL otherwise. */
static LinMean *linmean_of(Plan *p, const IrNode *n) {
    LinMean *m = ARENA_NEW(p->arena, LinMean);
    if (n->kind == IR_CONST) {
        if (!value_is_number(n->u.constant)) return NULL;
        m->c0 = value_as_double(n->u.constant);
        m->float_c0 = n->u.constant.kind == VAL_FLOAT;
        return m;
    }
    if (n->kind == IR_AGGREGATE) {
        const ValueSet *src = &p->info[n->u.aggregate.sop->id].vs;
        if (src->unbounded || !src->all_int || !value_is_number(n->u.aggregate.default_value)) return NULL;
        m->sel = n->u.aggregate.selector;
        m->n = 1;
        m->coef[0] = 1;
        m->agg[0] = n;
        return m;
    }
    if (n->kind != IR_MAP) return NULL;
    const LinMean *x = n->u.map.nargs >= 1 ? p->info[n->u.map.args[0]->id].linmean : NULL;
    const LinMean *y = n->u.map.nargs >= 2 ? p->info[n->u.map.args[1]->id].linmean : NULL;
    if (n->u.map.args[0]->kind == IR_CONST) x = linmean_of(p, n->u.map.args[0]);
    if (n->u.map.nargs >= 2 && n->u.map.args[1]->kind == IR_CONST) y = linmean_of(p, n->u.map.args[1]);
    if (!x) return NULL;
    double a = 1, b = 0; /* result = a*x + b*y */
    if (n->u.map.kind == IR_MAP_UNARY && n->u.map.op == VOP_NEG) a = -1;
    else if (n->u.map.kind == IR_MAP_UNARY && n->u.map.op == VOP_POS) a = 1;
    else if (n->u.map.kind != IR_MAP_BINARY || !y) return NULL;
    else if (n->u.map.op == VOP_ADD) b = 1;
    else if (n->u.map.op == VOP_SUB) b = -1;
    else if (n->u.map.op == VOP_MUL && y->sel == NULL && y->n == 0) a = y->c0, y = NULL;
    else if (n->u.map.op == VOP_MUL && x->sel == NULL && x->n == 0) a = x->c0, x = y, y = NULL;
    else return NULL;
    if (!integral(a)) return NULL;
    *m = *x;
    for (size_t j = 0; j < m->n; j++) m->coef[j] *= a;
    m->c0 *= a;
    if (y && b != 0) {
        if (y->sel && m->sel && y->sel != m->sel) return NULL;
        if (y->sel) m->sel = y->sel;
        m->c0 += b * y->c0;
        m->float_c0 = m->float_c0 || y->float_c0;
        for (size_t j = 0; j < y->n; j++) {
            if (m->n == LINMEAN_TERMS) return NULL;
            m->coef[m->n] = b * y->coef[j];
            m->agg[m->n++] = y->agg[j];
        }
    }
    return m->n ? m : NULL;
}

/* Values of a LinMean: c0 + s/k for k keys selected, s a sum of k combined source values (each
 * sum_j coef_j v_j with v_j from source j), or c0 + sum_j coef_j default_j for none. */
static ValueSet linmean_values(Plan *p, const LinMean *m) {
    int64_t lo = 0, hi = 0;
    for (size_t j = 0; j < m->n; j++) {
        const ValueSet *src = &p->info[m->agg[j]->u.aggregate.sop->id].vs;
        if (src->n == 0 || !integral(m->coef[j])) return vs_unbounded();
        double a = m->coef[j] * value_as_double(src->vals[0]), b = m->coef[j] * value_as_double(src->vals[src->n - 1]);
        lo += (int64_t)fmin(a, b);
        hi += (int64_t)fmax(a, b);
    }
    Value *v;
    size_t count;
    if (hi - lo + 2 > CG_MAX_VALUES || !means_of_range(p, lo, hi, 0, m->c0, NULL, (size_t)(hi - lo + 2), &v, &count))
        return vs_unbounded();
    double d = m->c0;
    bool float_d = m->float_c0; /* none selected: the defaults, of their kinds (a 0.0 makes a float) */
    for (size_t j = 0; j < m->n; j++) {
        Value dv = m->agg[j]->u.aggregate.default_value;
        d += m->coef[j] * value_as_double(dv);
        float_d = float_d || dv.kind == VAL_FLOAT;
    }
    v[count++] = integral(d) && !float_d ? value_int((int64_t)d) : value_float(d);
    bool int_c0 = integral(m->c0) && !m->float_c0;
    for (int64_t s = lo; s <= hi; s++) /* one key: the values themselves, ints */
        v[count++] = int_c0 ? value_int((int64_t)m->c0 + s) : value_float(m->c0 + (double)s);
    ValueSet vs = vs_from_values(v, count);
    vs.approx = true; /* the rationals, not the doubles the reference's float steps reach */
    return vs;
}

static Affine affine_of(Plan *p, const IrNode *n) {
    Affine none = {false, 0, 0, 0};
    switch (n->kind) {
    case IR_INDICES: return (Affine){true, 0, 1, 0};
    case IR_LENGTH: return (Affine){true, 1, 0, 0};
    case IR_CONST:
        if (!value_is_number(n->u.constant)) return none;
        return (Affine){true, 0, 0, value_as_double(n->u.constant)};
    case IR_MAP: break;
    default: return none;
    }
    if (n->u.map.kind == IR_MAP_UNARY) {
        Affine x = p->info[n->u.map.args[0]->id].affine;
        if (!x.valid) return none;
        if (n->u.map.op == VOP_NEG) return (Affine){true, -x.a, -x.b, -x.c};
        if (n->u.map.op == VOP_POS) return x;
        return none;
    }
    if (n->u.map.kind != IR_MAP_BINARY) return none;
    Affine x = p->info[n->u.map.args[0]->id].affine, y = p->info[n->u.map.args[1]->id].affine;
    if (!x.valid || !y.valid) return none;
    bool xc = x.a == 0 && x.b == 0, yc = y.a == 0 && y.b == 0;
    switch (n->u.map.op) {
    case VOP_ADD: return (Affine){true, x.a + y.a, x.b + y.b, x.c + y.c};
    case VOP_SUB: return (Affine){true, x.a - y.a, x.b - y.b, x.c - y.c};
    case VOP_MUL:
        if (yc) return (Affine){true, x.a * y.c, x.b * y.c, x.c * y.c};
        if (xc) return (Affine){true, y.a * x.c, y.b * x.c, y.c * x.c};
        return none;
    default: return none;
    }
}

static bool values_pass(Plan *p, const IrNode *out);

bool vs_compute(Plan *p, const IrNode *out) {
    /* reachability: ids are topological, so one descending sweep */
    p->info[out->id].reachable = true;
    for (size_t id = 0; id <= out->id; id++) {
        const IrNode *n = p->g->nodes[id];
        if (n->kind == IR_INDICES) p->indices = n;
        if (n->kind == IR_LENGTH) p->length = n;
    }
    p->info[p->indices->id].reachable = p->info[p->length->id].reachable = true;
    for (size_t id = out->id + 1; id-- > 0;) {
        SopInfo *info = &p->info[id];
        const IrNode *n = p->g->nodes[id];
        info->node = n;
        if (!info->reachable) continue;
        const IrNode *deps[3] = {0};
        switch (n->kind) {
        case IR_MAP: for (uint32_t j = 0; j < n->u.map.nargs; j++) deps[j] = n->u.map.args[j]; break;
        case IR_SELECT: deps[0] = n->u.select.keys; deps[1] = n->u.select.queries; break;
        case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
            deps[0] = n->u.combine.lhs; deps[1] = n->u.combine.rhs; break;
        case IR_AGGREGATE: deps[0] = n->u.aggregate.selector; deps[1] = n->u.aggregate.sop; break;
        case IR_SELECTOR_WIDTH: deps[0] = n->u.width.selector; break;
        default: break;
        }
        for (int j = 0; j < 3; j++)
            if (deps[j]) p->info[deps[j]->id].reachable = true;
    }
    if (!pos_compute(p, out)) return false;
    kinds_compute(p, out);
    while (values_pass(p, out)) { /* an operand's kind turned out to matter: again, with it kept */
        kinds_compute(p, out);
        for (size_t id = 0; id <= out->id; id++) p->info[id].support = NULL, p->info[id].linmean = NULL;
    }
    return true;
}

void vs_output_by_length(Plan *p, const IrNode *out, ValueSet *by_len) {
    size_t count = (size_t)out->id + 1;
    SopInfo *saved = p->info, *copy = ARENA_ARRAY(p->arena, SopInfo, count);
    memcpy(copy, saved, count * sizeof *copy);
    p->info = copy;
    for (size_t n = 1; n <= p->max_len; n++) {
        p->win_lo = p->win_hi = n;
        for (size_t id = 0; id < count; id++) { /* what the pass derives, afresh */
            copy[id] = saved[id];
            copy[id].support = NULL;
            copy[id].linmean = NULL;
        }
        (void)values_pass(p, out); /* the kinds are settled: it marks nothing */
        by_len[n - 1] = copy[out->id].vs;
    }
    p->win_lo = 1;
    p->win_hi = p->max_len;
    p->info = saved;
}

const ValueSet *vs_output_sets(Plan *p, const IrNode *out) {
    const SopInfo *o = &p->info[out->id];
    if (p->max_len > CG_MAX_LEN_DECODE || !o->vs.numeric || o->vs.unbounded || o->vs.approx || o->may_fail) return NULL;
    /* two values or fewer (a comparison, a 0/1 map): a length's set is one of them or both, no
     * sparser; and computing them would evaluate every operand length by length */
    if (o->vs.n <= 2) return NULL;
    if (!p->len_sets) {
        ValueSet *by_len = ARENA_ARRAY(p->arena, ValueSet, p->max_len);
        vs_output_by_length(p, out, by_len);
        p->len_sets = by_len;
    }
    bool any = false;
    for (size_t n = 0; n < p->max_len; n++) {
        if (!p->len_sets[n].n) continue; /* the output always raises at this length */
        if (!vs_decodable(&p->len_sets[n], true, NULL)) return NULL;
        any = true;
    }
    if (!any) return NULL; /* it raises at every length: nothing to read per length */
    /* one margin serves every length (emit.c): values 1 apart at one length, 1e38 at another: no */
    double mag, gap = vs_len_sets_gap(p->len_sets, p->max_len, false, &mag);
    return gap < 1e-9 * mag ? NULL : p->len_sets;
}

double vs_output_resolved_gap(Plan *p, const IrNode *n, bool twins_are_one) {
    const ValueSet *sets = n == p->output ? vs_output_sets(p, n) : NULL;
    return sets ? vs_len_sets_gap(sets, p->max_len, twins_are_one, NULL) : INFINITY;
}

/* The value sets of the reachable s-ops, in topological order, over the lengths of the window.
 * True when it marked an s-op whose kind matters after all (kinds_decide_value): the sets
 * after it are then wrong, and the caller runs the pass again. */
static bool values_pass(Plan *p, const IrNode *out) {
    for (size_t id = 0; id <= out->id; id++) {
        SopInfo *info = &p->info[id];
        const IrNode *n = info->node;
        if (!info->reachable || ir_is_selector(n)) continue;
        switch (n->kind) {
        case IR_TOKENS: {
            if (p->numeric_tokens) { /* real-valued: only numerical uses compile */
                info->vs = vs_unbounded();
                break;
            }
            Value *v = ARENA_ARRAY(p->arena, Value, p->n_vocab ? p->n_vocab : 1);
            memcpy(v, p->vocab, p->n_vocab * sizeof *v);
            info->vs = vs_from_values(v, p->n_vocab);
            break;
        }
        case IR_INDICES: info->vs = range_set(p->arena, 0, (int64_t)p->win_hi - 1); break;
        case IR_LENGTH: info->vs = range_set(p->arena, (int64_t)p->win_lo, (int64_t)p->win_hi); break;
        case IR_SELECTOR_WIDTH: info->vs = range_set(p->arena, 0, (int64_t)p->win_hi); break;
        case IR_CONST: {
            Value *v = ARENA_NEW(p->arena, Value);
            *v = n->u.constant;
            info->vs = vs_from_values(v, 1);
            break;
        }
        case IR_MAP:
            info->linmean = linmean_of(p, n);
            info->vs = map_values(p, info);
            if (info->linmean && info->linmean->n >= 2 && !info->may_fail) {
                /* the product of the means' sets is far larger than one mean's: use the latter */
                ValueSet lm = linmean_values(p, info->linmean);
                if (!lm.unbounded && (info->vs.unbounded || lm.n < info->vs.n)) info->vs = lm;
            }
            break;
        case IR_AGGREGATE:
            info->vs = aggregate_values(p, n, &p->info[n->u.aggregate.sop->id].vs);
            if (info->vs.numeric && !selector_at_most_one(p, n->u.aggregate.selector)) info->linmean = linmean_of(p, n);
            break;
        default: break;
        }
        if (!reals_node(p, info)) return false;
        if (p->values_again) { /* an earlier s-op is computed as a real now: its readers' sets change */
            p->values_again = false;
            return true;
        }
        if (kinds_decide_value(p, info)) return true;
        support_compute(p, info);
        if (info->pos && info->pos->val) /* exactly the values its table holds (where it does not raise) */
            info->vs = pos_value_set(p, info->pos);
        if (info->pos && info->pos->any_fail) info->may_fail = true;
        if (!info->vs.unbounded && info->vs.n > CG_MAX_VALUES) info->vs = vs_unbounded();
        if (!info->kind_matters) kinds_collapse(&info->vs, info->zero_sign_matters);
        info->affine = affine_of(p, n);
    }
    return false;
}

/* ---- an aggregate's value at a position of a positional selector ---- */

const int32_t *agg_count_by_index(Plan *p, const IrNode *agg) {
    SopInfo *info = &p->info[agg->id];
    if (agg->kind != IR_AGGREGATE) return NULL;
    if (info->count_known) return info->count_by_index;
    info->count_known = true;
    const PosTable *t = p->info[agg->u.aggregate.selector->id].pos;
    if (!t || !t->count || t->any_fail) return NULL;
    int32_t *c = ARENA_ARRAY(p->arena, int32_t, p->max_len);
    for (size_t i = 0; i < p->max_len; i++) {
        c[i] = t->count[pos_at(i + 1, i)];
        for (size_t n = i + 2; n <= p->max_len; n++)
            if (t->count[pos_at(n, i)] != c[i]) return NULL;
    }
    info->count_by_index = c;
    return c;
}

const char *vs_unbounded_why(Plan *p, const IrNode *n) {
    if (p->numeric_tokens)
        return "; it depends on real-valued tokens, which compile where the program computes with them (arithmetic, "
               "functions, means, products), not where a table, a select or a categorical readout needs their values";
    for (int depth = 0; depth < 64; depth++) { /* down to the first s-op that is unbounded itself */
        const IrNode *next = NULL;
        if (n->kind == IR_AGGREGATE) next = n->u.aggregate.sop;
        else if (n->kind == IR_MAP)
            for (uint32_t j = 0; j < n->u.map.nargs && !next; j++)
                if (p->info[n->u.map.args[j]->id].vs.unbounded) next = n->u.map.args[j];
        if (next && p->info[next->id].vs.unbounded) {
            n = next;
            continue;
        }
        const ValueSet *src = n->kind == IR_AGGREGATE ? &p->info[n->u.aggregate.sop->id].vs : NULL;
        int scale;
        int64_t lo, hi;
        if (src && src->numeric && src->n && !dyadic_grid(p, src, &scale, &lo, &hi)) {
            double m = fmax(fabs(value_as_double(src->vals[0])), fabs(value_as_double(src->vals[src->n - 1])));
            if (m * (double)p->win_hi > 9007199254740992.0)
                return arena_printf(p->arena,
                                    "; the aggregate at %d:%d averages numbers as large as %.3g: their sums pass "
                                    "2^53, where float64 stops being exact",
                                    n->loc.line, n->loc.col, m);
            return arena_printf(p->arena,
                                "; the aggregate at %d:%d averages numbers that are not all multiples of one power "
                                "of two (such as 1/3): their float64 means depend on the order of the sum, so no "
                                "exact list of them exists",
                                n->loc.line, n->loc.col);
        }
        break;
    }
    return "; lower --max-len or --vocab";
}

bool agg_value_possible(Plan *p, const IrNode *agg, Value v, int32_t k) {
    const ValueSet *src = &p->info[agg->u.aggregate.sop->id].vs;
    if (k == 0) return value_equal(v, agg->u.aggregate.default_value);
    int scale;
    int64_t lo, hi;
    if (k == 1 || !src->numeric || src->unbounded || src->n == 0 || !dyadic_grid(p, src, &scale, &lo, &hi))
        return vs_contains(src, v, NULL) || k > 1;
    if (!value_is_number(v)) return false; /* a float, or its int twin in a set collapsed by number */
    double x = value_as_double(v), s = round(ldexp(x, scale) * (double)k); /* the mean of k values z 2^-scale */
    return s >= (double)lo * k && s <= (double)hi * k && ldexp(s / (double)k, -scale) == x;
}

double agg_values_with_count(Plan *p, const IrNode *agg, int32_t k) {
    const ValueSet *src = &p->info[agg->u.aggregate.sop->id].vs;
    int scale;
    int64_t lo, hi;
    if (k == 0) return 1;
    if (k == 1 || !src->numeric || src->n == 0 || !dyadic_grid(p, src, &scale, &lo, &hi)) return (double)src->n;
    return (double)k * (double)(hi - lo) + 1;
}

/* The kinds of an s-op's numbers, ascending (bool, int, float); their count. From its value set,
 * or, when that is unbounded (real-valued tokens), from the kinds it can hold at all. */
uint32_t sop_kinds(Plan *p, const IrNode *x, ValueKind kinds[3]) {
    const ValueSet *vs = &p->info[x->id].vs;
    bool seen[3] = {false, false, false};
    for (size_t i = 0; i < vs->n; i++)
        if (vs->vals[i].kind != VAL_STR) seen[vs->vals[i].kind] = true;
    for (int k = 0; k < 3 && vs->unbounded; k++) seen[k] = p->kinds_possible[x->id] >> k & 1;
    uint32_t n = 0;
    for (int k = 0; k < 3; k++)
        if (seen[k]) kinds[n++] = (ValueKind)k;
    return n;
}
