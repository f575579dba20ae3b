/* IR construction: hash-consed node builders, constant folding, naming, dumping. */
#include "ir/ir.h"

#include <math.h>
#include <string.h>

/* ---- structural hashing and equality (the identity of a node, not its location) ---- */

static uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t id_of(const IrNode *n) { return n ? (uint64_t)n->id + 1 : 0; }

static uint64_t table_hash(uint64_t h, const Value *t, size_t n) {
    h = mix(h, n);
    for (size_t i = 0; t && i < n; i++) h = mix(h, value_hash(t[i]));
    return h;
}

/* Exact identity of atoms: same kind and same value (1, 1.0 and True are different nodes, and
 * so are 0.0 and -0.0, which print differently). */
static bool same_value(Value a, Value b) {
    if (a.kind != b.kind || value_order(a, b) != 0) return false;
    return a.kind != VAL_FLOAT || signbit(a.as.f) == signbit(b.as.f);
}

static bool same_table(const Value *a, const Value *b, size_t n) {
    if (!a || !b) return a == b;
    for (size_t i = 0; i < n; i++)
        if (!same_value(a[i], b[i])) return false;
    return true;
}

static uint64_t node_hash(const IrNode *n) {
    uint64_t h = mix(0, n->kind);
    switch (n->kind) {
    case IR_TOKENS: h = mix(h, n->u.token_type); break;
    case IR_INDICES: case IR_LENGTH: break;
    case IR_CONST: h = mix(h, value_hash(n->u.constant)); break;
    case IR_MAP:
        h = mix(h, n->u.map.kind);
        h = mix(h, n->u.map.op);
        for (uint32_t i = 0; i < n->u.map.nargs; i++) h = mix(h, id_of(n->u.map.args[i]));
        h = table_hash(h, n->u.map.table_keys, n->u.map.table_len);
        h = table_hash(h, n->u.map.table_values, n->u.map.table_len);
        break;
    case IR_SELECT:
        h = mix(mix(mix(h, id_of(n->u.select.keys)), id_of(n->u.select.queries)), n->u.select.cmp);
        break;
    case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
        h = mix(mix(h, id_of(n->u.combine.lhs)), id_of(n->u.combine.rhs));
        break;
    case IR_AGGREGATE:
        h = mix(mix(h, id_of(n->u.aggregate.selector)), id_of(n->u.aggregate.sop));
        h = mix(h, value_hash(n->u.aggregate.default_value));
        break;
    case IR_SELECTOR_WIDTH: h = mix(h, id_of(n->u.width.selector)); break;
    }
    return h;
}

static bool node_equal(const IrNode *a, const IrNode *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case IR_TOKENS: return a->u.token_type == b->u.token_type;
    case IR_INDICES: case IR_LENGTH: return true;
    case IR_CONST: return same_value(a->u.constant, b->u.constant);
    case IR_MAP:
        if (a->u.map.kind != b->u.map.kind || a->u.map.op != b->u.map.op ||
            a->u.map.nargs != b->u.map.nargs || a->u.map.table_len != b->u.map.table_len)
            return false;
        for (uint32_t i = 0; i < a->u.map.nargs; i++)
            if (a->u.map.args[i] != b->u.map.args[i]) return false;
        return same_table(a->u.map.table_keys, b->u.map.table_keys, a->u.map.table_len) &&
               same_table(a->u.map.table_values, b->u.map.table_values, a->u.map.table_len);
    case IR_SELECT:
        return a->u.select.keys == b->u.select.keys && a->u.select.queries == b->u.select.queries &&
               a->u.select.cmp == b->u.select.cmp;
    case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
        return a->u.combine.lhs == b->u.combine.lhs && a->u.combine.rhs == b->u.combine.rhs;
    case IR_AGGREGATE:
        return a->u.aggregate.selector == b->u.aggregate.selector &&
               a->u.aggregate.sop == b->u.aggregate.sop &&
               same_value(a->u.aggregate.default_value, b->u.aggregate.default_value);
    case IR_SELECTOR_WIDTH: return a->u.width.selector == b->u.width.selector;
    }
    return false;
}

void ir_graph_init(IrGraph *g, Arena *arena) {
    memset(g, 0, sizeof *g);
    g->arena = arena;
}

static void rehash(IrGraph *g, size_t nbuckets) {
    IrNode **b = ARENA_ARRAY(g->arena, IrNode *, nbuckets);
    for (size_t i = 0; i < g->count; i++) {
        size_t j = node_hash(g->nodes[i]) & (nbuckets - 1);
        while (b[j]) j = (j + 1) & (nbuckets - 1);
        b[j] = g->nodes[i];
    }
    g->buckets = b;
    g->nbuckets = nbuckets;
}

/* Returns the existing node equal to *proto, or a new arena copy of it. */
static IrNode *intern(IrGraph *g, const IrNode *proto) {
    if ((g->count + 1) * 2 > g->nbuckets) rehash(g, g->nbuckets ? g->nbuckets * 2 : 64);
    size_t j = node_hash(proto) & (g->nbuckets - 1);
    while (g->buckets[j]) {
        if (node_equal(g->buckets[j], proto)) return g->buckets[j];
        j = (j + 1) & (g->nbuckets - 1);
    }
    IrNode *n = ARENA_NEW(g->arena, IrNode);
    *n = *proto;
    n->id = (uint32_t)g->count;
    if (g->count == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        g->nodes = arena_grow(g->arena, g->nodes, g->count, cap, sizeof(IrNode *));
        g->cap = cap;
    }
    g->nodes[g->count++] = n;
    g->buckets[j] = n;
    return n;
}

static IrNode proto(IrKind kind, SrcLoc loc) {
    IrNode n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    n.loc = loc;
    return n;
}

static Value copy_value(IrGraph *g, Value v) {
    if (v.kind == VAL_STR) v.as.s = arena_strdup(g->arena, v.as.s);
    return v;
}

static const Value *copy_table(IrGraph *g, const Value *t, size_t n) {
    if (!t) return NULL;
    Value *c = ARENA_ARRAY(g->arena, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++) c[i] = copy_value(g, t[i]);
    return c;
}

IrNode *ir_tokens(IrGraph *g, IrTokenType type, SrcLoc loc) {
    IrNode n = proto(IR_TOKENS, loc);
    n.u.token_type = type;
    return intern(g, &n);
}

IrNode *ir_indices(IrGraph *g, SrcLoc loc) { IrNode n = proto(IR_INDICES, loc); return intern(g, &n); }
IrNode *ir_length(IrGraph *g, SrcLoc loc) { IrNode n = proto(IR_LENGTH, loc); return intern(g, &n); }

IrNode *ir_const(IrGraph *g, Value v, SrcLoc loc) {
    IrNode n = proto(IR_CONST, loc);
    n.u.constant = v;
    IrNode *r = intern(g, &n);
    if (r->id == g->count - 1 && r->u.constant.kind == VAL_STR && r->u.constant.as.s == v.as.s)
        r->u.constant = copy_value(g, v); /* a new node: own its string */
    return r;
}

/* Interns a map; folds it to a constant when every argument is one and the function succeeds. */
static IrNode *finish_map(IrGraph *g, IrNode *n) {
    bool all_const = true;
    Value args[3];
    for (uint32_t i = 0; i < n->u.map.nargs; i++) {
        all_const = all_const && n->u.map.args[i]->kind == IR_CONST;
        if (all_const) args[i] = n->u.map.args[i]->u.constant;
    }
    if (all_const) {
        char msg[128];
        ValueResult r = ir_map_apply(n, args, g->arena, msg, sizeof msg);
        if (r.ok) return ir_const(g, r.value, n->loc);
    }
    return intern(g, n);
}

IrNode *ir_map_unary(IrGraph *g, ValueOp op, IrNode *x, SrcLoc loc) {
    IrNode n = proto(IR_MAP, loc);
    n.u.map.kind = IR_MAP_UNARY;
    n.u.map.op = op;
    n.u.map.args[0] = x;
    n.u.map.nargs = 1;
    return finish_map(g, &n);
}

IrNode *ir_map_binary(IrGraph *g, ValueOp op, IrNode *a, IrNode *b, SrcLoc loc) {
    IrNode n = proto(IR_MAP, loc);
    n.u.map.kind = IR_MAP_BINARY;
    n.u.map.op = op;
    n.u.map.args[0] = a;
    n.u.map.args[1] = b;
    n.u.map.nargs = 2;
    return finish_map(g, &n);
}

IrNode *ir_map_cond(IrGraph *g, IrNode *cond, IrNode *then_v, IrNode *else_v, SrcLoc loc) {
    IrNode n = proto(IR_MAP, loc);
    n.u.map.kind = IR_MAP_COND;
    n.u.map.args[0] = cond;
    n.u.map.args[1] = then_v;
    n.u.map.args[2] = else_v;
    n.u.map.nargs = 3;
    return finish_map(g, &n);
}

static IrNode *table_map(IrGraph *g, IrMapKind kind, IrNode *x, const Value *keys,
                         const Value *values, size_t len, SrcLoc loc) {
    IrNode n = proto(IR_MAP, loc);
    n.u.map.kind = kind;
    n.u.map.args[0] = x;
    n.u.map.nargs = 1;
    n.u.map.table_keys = copy_table(g, keys, len);
    n.u.map.table_values = copy_table(g, values, len);
    n.u.map.table_len = len;
    return finish_map(g, &n);
}

IrNode *ir_map_in(IrGraph *g, IrNode *x, const Value *list, size_t n, SrcLoc loc) {
    return table_map(g, IR_MAP_IN, x, list, NULL, n, loc);
}

IrNode *ir_map_lookup(IrGraph *g, IrNode *x, const Value *keys, const Value *values, size_t n, SrcLoc loc) {
    return table_map(g, IR_MAP_LOOKUP, x, keys, values, n, loc);
}

IrNode *ir_map_index(IrGraph *g, IrNode *x, const Value *list, size_t n, SrcLoc loc) {
    return table_map(g, IR_MAP_INDEX, x, NULL, list, n, loc);
}

IrNode *ir_select(IrGraph *g, IrNode *keys, IrNode *queries, IrCmp cmp, SrcLoc loc) {
    IrNode n = proto(IR_SELECT, loc);
    n.u.select.keys = keys;
    n.u.select.queries = queries;
    n.u.select.cmp = cmp;
    return intern(g, &n);
}

static IrNode *combine(IrGraph *g, IrKind kind, IrNode *a, IrNode *b, SrcLoc loc) {
    IrNode n = proto(kind, loc);
    n.u.combine.lhs = a;
    n.u.combine.rhs = b;
    return intern(g, &n);
}

IrNode *ir_select_and(IrGraph *g, IrNode *a, IrNode *b, SrcLoc loc) { return combine(g, IR_SELECT_AND, a, b, loc); }
IrNode *ir_select_or(IrGraph *g, IrNode *a, IrNode *b, SrcLoc loc) { return combine(g, IR_SELECT_OR, a, b, loc); }
IrNode *ir_select_not(IrGraph *g, IrNode *a, SrcLoc loc) { return combine(g, IR_SELECT_NOT, a, NULL, loc); }

IrNode *ir_aggregate(IrGraph *g, IrNode *selector, IrNode *sop, Value default_value, SrcLoc loc) {
    IrNode n = proto(IR_AGGREGATE, loc);
    n.u.aggregate.selector = selector;
    n.u.aggregate.sop = sop;
    n.u.aggregate.default_value = default_value;
    IrNode *r = intern(g, &n);
    if (r->id == g->count - 1) r->u.aggregate.default_value = copy_value(g, default_value);
    return r;
}

IrNode *ir_selector_width(IrGraph *g, IrNode *selector, SrcLoc loc) {
    IrNode n = proto(IR_SELECTOR_WIDTH, loc);
    n.u.width.selector = selector;
    return intern(g, &n);
}

void ir_set_name(IrGraph *g, IrNode *n, const char *name) {
    if (!n->name && name) n->name = arena_strdup(g->arena, name);
}

/* ---- semantics shared by the evaluator and the compiler ---- */

ValueResult ir_cmp_apply(IrCmp cmp, Value key, Value query, char *msgbuf, size_t msgsize) {
    static const ValueOp ops[] = {VOP_EQ, VOP_NE, VOP_LT, VOP_GT, VOP_LE, VOP_GE};
    return value_binary(ops[cmp], key, query, NULL, msgbuf, msgsize);
}

ValueResult ir_map_apply(const IrNode *map, const Value *args, Arena *arena, char *msgbuf,
                         size_t msgsize) {
    switch (map->u.map.kind) {
    case IR_MAP_UNARY: return value_unary(map->u.map.op, args[0], msgbuf, msgsize);
    case IR_MAP_BINARY: return value_binary(map->u.map.op, args[0], args[1], arena, msgbuf, msgsize);
    case IR_MAP_COND:
        return (ValueResult){true, value_truthy(args[0]) ? args[1] : args[2], NULL};
    case IR_MAP_IN:
        for (size_t i = 0; i < map->u.map.table_len; i++)
            if (value_equal(args[0], map->u.map.table_keys[i]))
                return (ValueResult){true, value_bool(true), NULL};
        return (ValueResult){true, value_bool(false), NULL};
    case IR_MAP_LOOKUP:
        for (size_t i = 0; i < map->u.map.table_len; i++)
            if (value_equal(args[0], map->u.map.table_keys[i]))
                return (ValueResult){true, map->u.map.table_values[i], NULL};
        break;
    case IR_MAP_INDEX:
        if (args[0].kind == VAL_INT || args[0].kind == VAL_BOOL) {
            int64_t i = args[0].kind == VAL_BOOL ? args[0].as.b : args[0].as.i;
            int64_t len = (int64_t)map->u.map.table_len;
            if (i < 0) i += len;
            if (i >= 0 && i < len) return (ValueResult){true, map->u.map.table_values[i], NULL};
            char v[64];
            value_format(args[0], v, sizeof v);
            snprintf(msgbuf, msgsize, "list index %s out of range for a list of length %zu", v,
                     map->u.map.table_len);
            return (ValueResult){false, value_int(0), msgbuf};
        }
        snprintf(msgbuf, msgsize, "list index must be an int, got %s", value_kind_name(args[0].kind));
        return (ValueResult){false, value_int(0), msgbuf};
    }
    char v[64];
    value_format(args[0], v, sizeof v);
    snprintf(msgbuf, msgsize, "key %s is not in the dict", v);
    return (ValueResult){false, value_int(0), msgbuf};
}

/* ---- names and printing ---- */

const char *ir_kind_name(IrKind k) {
    static const char *const names[] = {
        "tokens", "indices", "length", "const", "map", "select", "select_and", "select_or",
        "select_not", "aggregate", "selector_width",
    };
    return names[k];
}

const char *ir_cmp_text(IrCmp c) {
    static const char *const t[] = {"==", "!=", "<", ">", "<=", ">="};
    return t[c];
}

const char *ir_token_type_name(IrTokenType t) {
    static const char *const names[] = {"tokens_str", "tokens_int", "tokens_float", "tokens_bool",
                                        "tokens_asis"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "tokens_?";
}

static void dump_table(FILE *out, const Value *t, size_t n) {
    char buf[96];
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        value_format(t[i], buf, sizeof buf);
        fprintf(out, "%s%s", i ? ", " : "", buf);
    }
    fputc(']', out);
}

void ir_dump(FILE *out, const IrGraph *g) {
    static const char *const map_kinds[] = {"unary", "binary", "cond", "in", "lookup", "index"};
    char buf[96];
    for (size_t i = 0; i < g->count; i++) {
        const IrNode *n = g->nodes[i];
        fprintf(out, "%%%u = %s", n->id, ir_kind_name(n->kind));
        switch (n->kind) {
        case IR_TOKENS: fprintf(out, "(%s)", ir_token_type_name(n->u.token_type)); break;
        case IR_INDICES: case IR_LENGTH: break;
        case IR_CONST: value_format(n->u.constant, buf, sizeof buf); fprintf(out, "(%s)", buf); break;
        case IR_MAP:
            /* "map(-, %1, %2)": the operator for unary and binary maps, else the map kind */
            fprintf(out, "(%s", n->u.map.kind <= IR_MAP_BINARY ? value_op_text(n->u.map.op)
                                                                : map_kinds[n->u.map.kind]);
            for (uint32_t a = 0; a < n->u.map.nargs; a++) fprintf(out, ", %%%u", n->u.map.args[a]->id);
            if (n->u.map.table_keys) { fputs(", keys=", out); dump_table(out, n->u.map.table_keys, n->u.map.table_len); }
            if (n->u.map.table_values) { fputs(", values=", out); dump_table(out, n->u.map.table_values, n->u.map.table_len); }
            fputc(')', out);
            break;
        case IR_SELECT:
            fprintf(out, "(keys=%%%u, queries=%%%u, %s)", n->u.select.keys->id, n->u.select.queries->id,
                    ir_cmp_text(n->u.select.cmp));
            break;
        case IR_SELECT_AND: case IR_SELECT_OR:
            fprintf(out, "(%%%u, %%%u)", n->u.combine.lhs->id, n->u.combine.rhs->id);
            break;
        case IR_SELECT_NOT: fprintf(out, "(%%%u)", n->u.combine.lhs->id); break;
        case IR_AGGREGATE:
            value_format(n->u.aggregate.default_value, buf, sizeof buf);
            fprintf(out, "(%%%u, %%%u, default=%s)", n->u.aggregate.selector->id, n->u.aggregate.sop->id, buf);
            break;
        case IR_SELECTOR_WIDTH: fprintf(out, "(%%%u)", n->u.width.selector->id); break;
        }
        char where[256];
        srcloc_format(n->loc, where, sizeof where);
        fprintf(out, "  # %s%s@ %s\n", n->name ? n->name : "", n->name ? " " : "", where);
    }
}
