/* The first pass: the reachable part of the IR copied into the compiler's own graph, with
 * rewrites that keep the program's meaning exactly and make it cheaper to compile.
 *
 * Diagonal selectors. A selector with a conjunct select(indices, indices, ==) selects at most the
 * query's own position, so every other comparison in it compares values at that one position:
 *   aggregate(S, x, d)   = x if P else d        (one key or none: no mean, no raise)
 *   selector_width(S)    = 1 if P else 0
 * where P is the selector's formula with each select(K, Q, cmp) read as the map `K cmp Q` and
 * and/or/not as the maps of the same name (all of them bools). The multi-head files of the
 * simulator paper route values this way; as maps they need no attention head. */
#include <string.h>

#include "codegen/internal.h"

typedef struct Rewriter {
    const IrGraph *src;
    IrGraph *dst;
    IrNode **map; /* per source id: its copy, or NULL when not reached yet */
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

static IrNode *copy_node(Rewriter *r, const IrNode *n) {
    IrGraph *g = r->dst;
    IrNode *c = NULL;
    switch (n->kind) {
    case IR_TOKENS: c = ir_tokens(g, n->u.token_type, n->loc); break;
    case IR_INDICES: c = ir_indices(g, n->loc); break;
    case IR_LENGTH: c = ir_length(g, n->loc); break;
    case IR_CONST: c = ir_const(g, n->u.constant, n->loc); break;
    case IR_MAP: {
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
        if (diagonal(n->u.aggregate.selector)) {
            IrNode *d = ir_const(g, n->u.aggregate.default_value, n->loc);
            IrNode *f = diagonal_formula(r, n->u.aggregate.selector);
            c = f->kind == IR_CONST ? (value_truthy(f->u.constant) ? arg(r, n->u.aggregate.sop) : d)
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

const IrNode *rewrite_program(const IrGraph *src, const IrNode *out, IrGraph *dst) {
    Rewriter r = {src, dst, NULL};
    r.map = ARENA_ARRAY(dst->arena, IrNode *, (size_t)out->id + 1);
    /* indices and length always exist, first: s-ops computed from their positional tables read
     * them even when the program does not mention them */
    ir_indices(dst, out->loc);
    ir_length(dst, out->loc);
    /* arguments first, in id order, so the recursion in arg() stays shallow */
    for (size_t id = 0; id <= out->id; id++)
        if (!r.map[id]) copy_node(&r, src->nodes[id]);
    return r.map[out->id];
}
