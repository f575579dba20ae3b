/* Positional analysis: s-ops and selectors that depend only on positions and the length.
 *
 * indices, length and constants are positional; so is a map, aggregate, width or selector built
 * only from positional parts. Their value at position i of an input of length n is a function of
 * (i, n), which the compiler computes exactly by running the reference evaluator on every length
 * 1..N (the tokens do not matter). From the tables come exact value sets (index arithmetic such
 * as (indices % n) * n + indices / n takes its ~N^2/2 reachable values, not the product of its
 * parts' sets), the exact number of keys a positional selector selects, and the MLPs that
 * compute such s-ops from the index and the length (plan.c, mlp.c). */
#include <math.h>
#include <string.h>

#include "codegen/internal.h"
#include "ir/eval.h"

/* The arguments of node n (s-ops or selectors); returns how many. */
static int node_deps(const IrNode *n, const IrNode *deps[3]) {
    deps[0] = deps[1] = deps[2] = NULL;
    switch (n->kind) {
    case IR_MAP:
        for (uint32_t j = 0; j < n->u.map.nargs; j++) deps[j] = n->u.map.args[j];
        return (int)n->u.map.nargs;
    case IR_SELECT: deps[0] = n->u.select.keys; deps[1] = n->u.select.queries; return 2;
    case IR_SELECT_AND: case IR_SELECT_OR: deps[0] = n->u.combine.lhs; deps[1] = n->u.combine.rhs; return 2;
    case IR_SELECT_NOT: deps[0] = n->u.combine.lhs; return 1;
    case IR_AGGREGATE: deps[0] = n->u.aggregate.selector; deps[1] = n->u.aggregate.sop; return 2;
    case IR_SELECTOR_WIDTH: deps[0] = n->u.width.selector; return 1;
    default: return 0;
    }
}

PosDep pos_classify(const PosTable *t, size_t N) {
    bool by_i = true, by_n = true; /* the same value for every n (per i) / every i (per n) */
    for (size_t n = 1; n <= N; n++)
        for (size_t i = 0; i < n; i++) {
            size_t a = pos_at(n, i);
            if (n > i + 1) { /* against the same index at the shortest length that has it */
                size_t b = pos_at(i + 1, i);
                if (t->fail[a] != t->fail[b] || (!t->fail[a] && atom_order(t->val[a], t->val[b]) != 0)) by_i = false;
            }
            if (i > 0) {
                size_t b = pos_at(n, 0);
                if (t->fail[a] != t->fail[b] || (!t->fail[a] && atom_order(t->val[a], t->val[b]) != 0)) by_n = false;
            }
        }
    return by_i && by_n ? POS_CONST : by_i ? POS_I : by_n ? POS_N : POS_IN;
}

bool pos_compute(Plan *p, const IrNode *out) {
    size_t count = (size_t)out->id + 1, N = p->max_len;
    bool *wanted = ARENA_ARRAY(p->arena, bool, count);
    size_t n_pos = 0, n_sel = 0;
    for (size_t id = 0; id < count; id++) {
        const IrNode *n = p->g->nodes[id];
        if (!p->info[id].reachable) continue;
        bool pos = n->kind == IR_INDICES || n->kind == IR_LENGTH || n->kind == IR_CONST || n->kind == IR_MAP ||
                   n->kind == IR_AGGREGATE || n->kind == IR_SELECTOR_WIDTH || ir_is_selector(n);
        const IrNode *deps[3];
        int nd = node_deps(n, deps);
        for (int j = 0; j < nd && pos; j++) pos = wanted[deps[j]->id];
        wanted[id] = pos;
        if (pos && n->kind != IR_CONST) ir_is_selector(n) ? n_sel++ : n_pos++;
    }
    /* bounded: the tables hold (n_pos + n_sel) * N(N+1)/2 entries, and evaluating a selector at
     * every length costs ~N^3/3 comparisons */
    double entries = (double)(n_pos + n_sel) * (double)N * (double)(N + 1) / 2;
    double work = (double)n_sel * (double)N * (double)N * (double)N / 3;
    if (n_pos + n_sel == 0 || entries > CG_MAX_POS_ENTRIES || work > CG_MAX_POS_WORK) return true;

    size_t cells = N * (N + 1) / 2;
    p->have_pos = true;
    for (size_t id = 0; id < count; id++) {
        if (!wanted[id] || p->g->nodes[id]->kind == IR_CONST) continue;
        PosTable *t = ARENA_NEW(p->arena, PosTable);
        if (ir_is_selector(p->g->nodes[id])) {
            t->count = ARENA_ARRAY(p->arena, int32_t, cells);
            t->counts_seen = ARENA_ARRAY(p->arena, bool, N + 1);
            if (N <= CG_MAX_LEN_KEYS) t->keys = ARENA_ARRAY(p->arena, uint8_t, pos_keys_at(N + 1, 0) / 8 + 1);
        } else {
            t->val = ARENA_ARRAY(p->arena, Value, cells);
        }
        t->fail = ARENA_ARRAY(p->arena, bool, cells);
        p->info[id].pos = t;
    }
    Value *input = ARENA_ARRAY(p->arena, Value, N);
    for (size_t i = 0; i < N; i++) input[i] = value_int(0); /* positional s-ops never read it */
    void **results = ARENA_ARRAY(p->arena, void *, count);
    bool *failed = ARENA_ARRAY(p->arena, bool, count);
    for (size_t n = 1; n <= N; n++) {
        Arena scratch;
        arena_init(&scratch);
        ir_eval_nodes(p->g, wanted, count, input, n, &scratch, results, failed);
        for (size_t id = 0; id < count; id++) {
            PosTable *t = p->info[id].pos;
            if (!t) continue;
            for (size_t i = 0; i < n; i++) {
                size_t c = pos_at(n, i);
                t->fail[c] = failed[id];
                t->any_fail = t->any_fail || failed[id];
                if (failed[id]) continue;
                if (t->count) {
                    const bool *m = results[id];
                    int32_t w = 0;
                    for (size_t k = 0; k < n; k++) {
                        w += m[i * n + k];
                        size_t b = pos_keys_at(n, i) + k;
                        if (t->keys && m[i * n + k]) t->keys[b / 8] |= (uint8_t)(1u << (b % 8));
                    }
                    t->count[c] = w;
                    t->counts_seen[w] = true;
                } else {
                    Value v = ((const Value *)results[id])[i];
                    if (v.kind == VAL_STR) v.as.s = arena_strdup(p->arena, v.as.s);
                    t->val[c] = v;
                }
            }
        }
        arena_free(&scratch);
    }
    for (size_t id = 0; id < count; id++) {
        PosTable *t = p->info[id].pos;
        if (!t) continue;
        if (t->count) {
            t->at_most_one = true;
            for (size_t c = 2; c <= N; c++) t->at_most_one = t->at_most_one && !t->counts_seen[c];
        } else {
            t->dep = pos_classify(t, N);
        }
    }
    return true;
}

ValueSet pos_value_set(Plan *p, const PosTable *t) {
    size_t first = pos_at(p->win_lo, 0), cells = pos_at(p->win_hi + 1, 0), k = 0;
    Value *v = ARENA_ARRAY(p->arena, Value, cells - first + 1);
    for (size_t c = first; c < cells; c++)
        if (!t->fail[c]) v[k++] = t->val[c];
    return vs_from_values(v, k);
}

bool pos_lookup(const PosTable *t, int64_t i, int64_t n, size_t max_len, Value *v) {
    if (n < 1 || (size_t)n > max_len || i < 0 || i >= n) return false;
    size_t c = pos_at((size_t)n, (size_t)i);
    if (t->fail[c]) return false;
    *v = t->val[c];
    return true;
}

/* select(x, x, cmp) with the given comparisons */
static bool self_compare(const IrNode *sel, const IrNode *x, IrCmp a, IrCmp b) {
    return sel->kind == IR_SELECT && sel->u.select.keys == x && sel->u.select.queries == x &&
           (sel->u.select.cmp == a || sel->u.select.cmp == b);
}

/* Whether sel is a strict total order of the positions: select(indices, indices, <) (or >), or
 * lexicographic, select(k, k, <) or (select(k, k, ==) and T) for such a T (the sort idiom),
 * over values of k that are ordered (all numbers or all strings). Then the width of sel is
 * each position's rank: no two positions share it. */
static bool strict_total_order(Plan *p, const IrNode *sel) {
    if (self_compare(sel, p->indices, IR_CMP_LT, IR_CMP_GT)) return true;
    if (sel->kind != IR_SELECT_OR) return false;
    for (int side = 0; side < 2; side++) {
        const IrNode *strict = side ? sel->u.combine.rhs : sel->u.combine.lhs;
        const IrNode *ties = side ? sel->u.combine.lhs : sel->u.combine.rhs;
        if (strict->kind != IR_SELECT || ties->kind != IR_SELECT_AND) continue;
        const IrNode *k = strict->u.select.keys;
        if (!self_compare(strict, k, IR_CMP_LT, IR_CMP_GT)) continue;
        const ValueSet *vs = &p->info[k->id].vs;
        bool ordered = !vs->unbounded && vs->n > 0;
        for (size_t i = 0; ordered && i < vs->n; i++)
            ordered = (vs->vals[i].kind == VAL_STR) == (vs->vals[0].kind == VAL_STR) &&
                      !(vs->vals[i].kind == VAL_FLOAT && isnan(vs->vals[i].as.f));
        if (!ordered) continue;
        for (int t = 0; t < 2; t++) {
            const IrNode *eq = t ? ties->u.combine.rhs : ties->u.combine.lhs;
            const IrNode *rest = t ? ties->u.combine.lhs : ties->u.combine.rhs;
            if (self_compare(eq, k, IR_CMP_EQ, IR_CMP_EQ) && strict_total_order(p, rest)) return true;
        }
    }
    return false;
}

static bool query_blind(Plan *p, const IrNode *sel, int depth);

/* Whether s-op n has the same value at every position of a sequence (length, constants, means
 * over a selector that ignores its queries, maps of such): a proof, `false` when unsure. */
static bool uniform(Plan *p, const IrNode *n, int depth) {
    if (depth > 12) return false;
    switch (n->kind) {
    case IR_CONST: case IR_LENGTH: return true;
    case IR_MAP:
        for (uint32_t j = 0; j < n->u.map.nargs; j++)
            if (!uniform(p, n->u.map.args[j], depth + 1)) return false;
        return true;
    case IR_AGGREGATE: return query_blind(p, n->u.aggregate.selector, depth + 1);
    case IR_SELECTOR_WIDTH: return query_blind(p, n->u.width.selector, depth + 1);
    default: return false;
    }
}

/* Whether every query of selector sel selects the same keys: its queries are uniform. */
static bool query_blind(Plan *p, const IrNode *sel, int depth) {
    if (depth > 12) return false;
    switch (sel->kind) {
    case IR_SELECT: return uniform(p, sel->u.select.queries, depth + 1);
    case IR_SELECT_AND: case IR_SELECT_OR:
        return query_blind(p, sel->u.combine.lhs, depth + 1) && query_blind(p, sel->u.combine.rhs, depth + 1);
    case IR_SELECT_NOT: return query_blind(p, sel->u.combine.lhs, depth + 1);
    default: return false;
    }
}

/* A bound on |n| over every input, where one follows from n's set or table, or through sums,
 * differences, constant multiples and means of s-ops that have one (indices + length - a mean of
 * digits has one though its set is too large to enumerate). */
static bool magnitude_bound(const Plan *p, const IrNode *n, int depth, double *mag) {
    const SopInfo *info = &p->info[n->id];
    const ValueSet *vs = &info->vs;
    if (depth > 16 || info->real || info->real_fn) return false;
    if (!vs->unbounded) {
        *mag = 0;
        for (size_t i = 0; i < vs->n; i++) {
            if (!value_is_number(vs->vals[i])) return false;
            *mag = fmax(*mag, fabs(value_as_double(vs->vals[i])));
        }
        return isfinite(*mag);
    }
    double a, b;
    if (n->kind == IR_AGGREGATE) { /* a mean lies within its values, or is its default */
        Value d = n->u.aggregate.default_value;
        if (!value_is_number(d) || !magnitude_bound(p, n->u.aggregate.sop, depth + 1, &a)) return false;
        *mag = fmax(a, fabs(value_as_double(d)));
        return isfinite(*mag);
    }
    if (n->kind != IR_MAP) return false;
    const IrNode *x = n->u.map.args[0], *y = n->u.map.nargs > 1 ? n->u.map.args[1] : NULL;
    if (n->u.map.kind == IR_MAP_UNARY && (n->u.map.op == VOP_NEG || n->u.map.op == VOP_POS))
        return magnitude_bound(p, x, depth + 1, mag);
    if (n->u.map.kind != IR_MAP_BINARY || !y) return false;
    switch (n->u.map.op) {
    case VOP_ADD: case VOP_SUB: case VOP_MUL:
        if (!magnitude_bound(p, x, depth + 1, &a) || !magnitude_bound(p, y, depth + 1, &b)) return false;
        *mag = n->u.map.op == VOP_MUL ? a * b : a + b;
        return isfinite(*mag);
    default: return false;
    }
}

/* Whether all of s-op n's values are numbers below 2^50 in magnitude: numbers a whole unit apart
 * stay different doubles after adding or subtracting one more of them. */
static bool small_numbers(const Plan *p, const IrNode *n) {
    const ValueSet *vs = &p->info[n->id].vs;
    double bound; /* an unbounded sum of bounded terms (indices + length - mean) */
    if (vs->unbounded) return vs->numeric && magnitude_bound(p, n, 0, &bound) && bound < 0x1p50;
    if (!vs->numeric) return false;
    for (size_t v = 0; v < vs->n; v++)
        if (!(fabs(value_as_double(vs->vals[v])) < 0x1p50)) return false;
    return true;
}

/* Whether keys k are distinct at distinct positions: indices, or such keys plus or minus a
 * uniform number (k = i + length - m: one unit apart from one index to the next). */
static bool distinct_by_position(Plan *p, const IrNode *k, int depth) {
    if (k->kind == IR_INDICES) return true;
    if (depth > 8 || k->kind != IR_MAP || k->u.map.kind != IR_MAP_BINARY || (k->u.map.op != VOP_ADD && k->u.map.op != VOP_SUB) ||
        !small_numbers(p, k))
        return false;
    for (int side = 0; side < 2; side++) {
        const IrNode *x = k->u.map.args[side], *c = k->u.map.args[1 - side];
        if (small_numbers(p, c) && uniform(p, c, 0) && distinct_by_position(p, x, depth + 1)) return true;
    }
    return false;
}

bool selector_never_selects(const Plan *p, const IrNode *sel) {
    const PosTable *t = p->info[sel->id].pos;
    if (!t || !t->counts_seen || t->any_fail) return false;
    for (size_t c = 1; c <= p->max_len; c++)
        if (t->counts_seen[c]) return false;
    return true;
}

bool selector_at_most_one(Plan *p, const IrNode *sel) {
    const PosTable *t = p->info[sel->id].pos;
    if (t && t->at_most_one) return true;
    switch (sel->kind) {
    case IR_SELECT:
        if (sel->u.select.cmp != IR_CMP_EQ) return false;
        if (distinct_by_position(p, sel->u.select.keys, 0)) return true;
        /* select(rank, indices, ==) for a rank no two positions share */
        return sel->u.select.queries->kind == IR_INDICES && sel->u.select.keys->kind == IR_SELECTOR_WIDTH &&
               strict_total_order(p, sel->u.select.keys->u.width.selector);
    case IR_SELECT_AND:
        return selector_at_most_one(p, sel->u.combine.lhs) || selector_at_most_one(p, sel->u.combine.rhs);
    default: return false;
    }
}

bool selector_self_or_none(const Plan *p, const IrNode *sel, bool *always) {
    const PosTable *t = p->info[sel->id].pos;
    *always = false;
    if (!t || !t->count || !t->keys || t->any_fail) return false;
    bool all = true;
    for (size_t n = 1; n <= p->max_len; n++)
        for (size_t i = 0; i < n; i++) {
            int32_t c = t->count[pos_at(n, i)];
            if (c > 1 || (c == 1 && !pos_selects(t, n, i, i))) return false;
            all = all && c == 1;
        }
    *always = all;
    return true;
}

bool pos_uniform(Plan *p, const IrNode *x) { return uniform(p, x, 0); }
