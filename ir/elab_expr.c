/* Expressions of the meta-language: literals, names, lists, dicts, comprehensions, operators
 * and the conditional. The built-in forms (select, aggregate, indexing, calls, ...) are in
 * elab_builtin.c. */
#include "ir/elab_internal.h"

#include <string.h>

#include "ir/pyerror.h"

bool elab_as_sop(Elab *E, MetaValue v, SrcLoc loc, const char *what, IrNode **out) {
    if (v.kind == MV_SOP) {
        *out = v.u.node;
        return true;
    }
    if (v.kind == MV_ATOM) {
        *out = ir_const(E->g, v.u.atom, loc);
        return true;
    }
    diag_error(E->diags, loc, "%s must be an s-op or an atom, got %s", what,
               mv_describe(E, v));
    elab_fault(E, ELAB_FAULT_IGNORED, "%s must be an s-op or an atom, got: %s", what,
               meta_strdesc(E->arena, v, 0));
    return false;
}

/* The IR node a built-in name stands for; selector_width stays a callable. */
static MetaValue materialise_node(Elab *E, Prim p, SrcLoc loc) {
    switch (p) {
    case PRIM_TOKENS_STR: return mv_node(ir_tokens(E->g, IR_TOKENS_STR, loc));
    case PRIM_TOKENS_INT: return mv_node(ir_tokens(E->g, IR_TOKENS_INT, loc));
    case PRIM_TOKENS_FLOAT: return mv_node(ir_tokens(E->g, IR_TOKENS_FLOAT, loc));
    case PRIM_TOKENS_BOOL: return mv_node(ir_tokens(E->g, IR_TOKENS_BOOL, loc));
    case PRIM_INDICES: return mv_node(ir_indices(E->g, loc));
    case PRIM_LENGTH: return mv_node(ir_length(E->g, loc));
    case PRIM_TOKENS_ASIS: return mv_node(ir_tokens(E->g, IR_TOKENS_ASIS, loc));
    case PRIM_SELECTOR_WIDTH: break;
    }
    MetaValue m;
    memset(&m, 0, sizeof m);
    m.kind = MV_PRIM;
    m.u.prim = p;
    return m;
}

static MetaValue materialise_prim(Elab *E, Prim p, SrcLoc loc) {
    MetaValue m = materialise_node(E, p, loc);
    m.label = elab_prim_label(E, p);
    return m;
}

static bool elab_name(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    const MetaValue *v = env_lookup(env, e->u.name);
    if (!v) {
        diag_error(E->diags, e->loc, "undefined variable '%s'", e->u.name);
        elab_fault(E, ELAB_FAULT_IGNORED, "Error: Undefined variable: %s", e->u.name);
        return false;
    }
    *out = v->kind == MV_PRIM ? materialise_prim(E, v->u.prim, e->loc) : *v;
    return true;
}

/* list = "[" expr, ... "]" */
static bool elab_list(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    size_t n = e->u.list.count;
    MetaValue *items = ARENA_ARRAY(E->arena, MetaValue, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        if (!elab_expr(E, env, e->u.list.items[i], &items[i])) return false;
    *out = mv_list(items, n);
    return true;
}

/* Dict under construction: atom keys, Python's insertion order, later values win. */
typedef struct DictBuilder {
    Value *keys;
    MetaValue *values;
    size_t count, cap;
} DictBuilder;

static bool dict_put(Elab *E, DictBuilder *d, MetaValue key, MetaValue value, SrcLoc loc) {
    if (key.kind != MV_ATOM) {
        diag_error(E->diags, loc, "dictionary keys can only be atoms, got %s",
                   mv_describe(E, key));
        elab_fault(E, ELAB_FAULT_IGNORED, "dictionary keys can only be atoms, but instead got: %s",
                   meta_strdesc(E->arena, key, 0));
        return false;
    }
    if (!elab_charge(E, d->count, loc)) return false; /* linear search: charge it */
    for (size_t i = 0; i < d->count; i++) {
        if (value_equal(d->keys[i], key.u.atom)) {
            d->values[i] = value;
            return true;
        }
    }
    if (d->count >= ELAB_MAX_LIST) {
        diag_error(E->diags, loc, "dictionary too large (more than %d entries)", ELAB_MAX_LIST);
        return false;
    }
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        d->keys = arena_grow(E->arena, d->keys, d->count, cap, sizeof(Value));
        d->values = arena_grow(E->arena, d->values, d->count, cap, sizeof(MetaValue));
        d->cap = cap;
    }
    d->keys[d->count] = key.u.atom;
    d->values[d->count++] = value;
    return true;
}

static MetaValue dict_finish(DictBuilder *d) {
    MetaValue m;
    memset(&m, 0, sizeof m);
    m.kind = MV_DICT;
    m.u.dict.keys = d->keys;
    m.u.dict.values = d->values;
    m.u.dict.count = d->count;
    return m;
}

/* dict = "{" expr ":" expr, ... "}" */
static bool elab_dict(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    DictBuilder d = {0};
    for (size_t i = 0; i + 1 < e->u.list.count; i += 2) {
        MetaValue k, v;
        if (!elab_expr(E, env, e->u.list.items[i], &k)) return false;
        if (!elab_expr(E, env, e->u.list.items[i + 1], &v)) return false;
        if (!dict_put(E, &d, k, v, e->u.list.items[i]->loc)) return false;
    }
    *out = dict_finish(&d);
    return true;
}

bool elab_iteration_items(Elab *E, MetaValue it, SrcLoc loc, const char *what, MetaValue **items,
                          size_t *n) {
    if (it.kind == MV_LIST) {
        *items = it.u.list.items;
        *n = it.u.list.count;
        return true;
    }
    if (it.kind == MV_DICT) {
        *n = it.u.dict.count;
        *items = ARENA_ARRAY(E->arena, MetaValue, *n ? *n : 1);
        for (size_t i = 0; i < *n; i++) (*items)[i] = mv_atom(it.u.dict.keys[i]);
        return true;
    }
    diag_error(E->diags, loc, "%s needs a list or dict to iterate over, got %s", what,
               mv_describe(E, it));
    if (strcmp(what, "for loop") == 0)
        elab_fault(E, ELAB_FAULT_IGNORED, "for loop needs to iterate over a list or dict, but got: %s",
                   meta_strdesc(E->arena, it, 0));
    else
        elab_fault(E, ELAB_FAULT_IGNORED, "%s should have got a list or dict to loop over, but got: %s",
                   what, meta_strdesc(E->arena, it, 0));
    return false;
}

/* list_comp = "[" expr "for" names "in" expr "]"   dict_comp = "{" expr ":" expr "for" ... "}"
 * Each iteration runs in a fresh scope nested in the current one, so the loop names do not
 * leak (unlike a for statement). */
static bool elab_comprehension(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue it, *items;
    size_t n;
    bool is_dict = e->kind == AST_DICT_COMP;
    if (!elab_expr(E, env, e->u.comp.iterable, &it)) return false;
    if (!elab_iteration_items(E, it, e->u.comp.iterable->loc,
                              is_dict ? "dict comprehension" : "list comprehension", &items, &n))
        return false;
    MetaValue *results = ARENA_ARRAY(E->arena, MetaValue, n ? n : 1);
    DictBuilder d = {0};
    for (size_t i = 0; i < n; i++) {
        if (!elab_step(E, e->loc)) return false;
        Env *scope = env_new(E, env);
        if (!elab_bind_names(E, scope, &e->u.comp.names, items[i], e->loc)) return false;
        if (is_dict) {
            MetaValue k, v;
            if (!elab_expr(E, scope, e->u.comp.key, &k)) return false;
            if (!elab_expr(E, scope, e->u.comp.body, &v)) return false;
            if (!dict_put(E, &d, k, v, e->u.comp.key->loc)) return false;
        } else if (!elab_expr(E, scope, e->u.comp.body, &results[i])) {
            return false;
        }
    }
    *out = is_dict ? dict_finish(&d) : mv_list(results, n);
    return true;
}

static ValueOp unary_value_op(AstUnaryOp op) {
    switch (op) {
    case AST_NOT: return VOP_NOT;
    case AST_NEG: return VOP_NEG;
    case AST_POS: return VOP_POS;
    case AST_ROUND: return VOP_ROUND;
    case AST_INDICATOR: return VOP_INDICATOR;
    }
    return VOP_NOT;
}

/* unary = ("not" | "-" | "+" | "round" | "indicator") expr */
static bool elab_unary(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue x;
    AstUnaryOp op = e->u.unary.op;
    if (!elab_expr(E, env, e->u.unary.operand, &x)) return false;
    if (x.kind == MV_SEL && op == AST_NOT) {
        *out = mv_node(ir_select_not(E->g, x.u.node, e->loc));
        elab_label(E, out, "plain select");
        return true;
    }
    if (x.kind == MV_SOP) {
        *out = mv_node(ir_map_unary(E->g, unary_value_op(op), x.u.node, e->loc));
        if (E->session) {
            const char *n = elab_quickname(E, x);
            elab_label(E, out, op == AST_INDICATOR ? arena_printf(E->arena, "I(%s)", n)
                               : arena_printf(E->arena, "( %s %s )", ast_unary_op_text(op), n));
        }
        return true;
    }
    /* indicator is only for s-ops, as in the original (it builds an s-op). */
    if (x.kind == MV_ATOM && op != AST_INDICATOR) {
        char msg[256];
        ValueResult r = value_unary(unary_value_op(op), x.u.atom, msg, sizeof msg);
        if (!r.ok) {
            diag_error(E->diags, e->loc, "%s", r.error);
            elab_fault(E, ELAB_FAULT_EXCEPTION, "%s",
                       py_unary_error(E->arena, unary_value_op(op), x.u.atom));
            return false;
        }
        *out = mv_atom(r.value);
        return true;
    }
    if (op == AST_NOT) { /* Python's `not` works on any value */
        *out = mv_atom(value_bool(!mv_truthy(x)));
        return true;
    }
    diag_error(E->diags, e->loc, "cannot apply '%s' to %s%s", ast_unary_op_text(op),
               mv_describe(E, x),
               op == AST_INDICATOR ? " (indicator expects an s-op)" : "");
    if (op == AST_INDICATOR)
        elab_fault(E, ELAB_FAULT_IGNORED, "indicator operator expects s-op, got: %s",
                   meta_pystr(E->arena, x));
    else
        elab_fault(E, ELAB_FAULT_EXCEPTION, "bad operand type for unary %s: '%s'",
                   ast_unary_op_text(op), meta_py_type(x));
    return false;
}

/* `and` / `or`: selectors combine into selectors, s-ops (with atoms) into maps, atoms by
 * Python's rules. Both operands are evaluated first, as the original does. */
static bool elab_logic(Elab *E, const AstExpr *e, MetaValue a, MetaValue b, MetaValue *out) {
    bool is_and = e->u.binary.op == AST_AND;
    bool any_sel = a.kind == MV_SEL || b.kind == MV_SEL;
    bool any_sop = a.kind == MV_SOP || b.kind == MV_SOP;
    if (any_sel) {
        if (a.kind != MV_SEL || b.kind != MV_SEL) {
            diag_error(E->diags, e->loc, "cannot apply '%s' between a selector and %s",
                       is_and ? "and" : "or",
                       mv_kind_name(a.kind == MV_SEL ? b.kind : a.kind));
            elab_fault(E, ELAB_FAULT_IGNORED, "Cannot apply and/or between selector and non-selector");
            return false;
        }
        *out = mv_node(is_and ? ir_select_and(E->g, a.u.node, b.u.node, e->loc)
                              : ir_select_or(E->g, a.u.node, b.u.node, e->loc));
        elab_label(E, out, "plain select");
        return true;
    }
    if (any_sop) {
        IrNode *x, *y;
        if (!elab_as_sop(E, a, e->u.binary.lhs->loc, "operand", &x) ||
            !elab_as_sop(E, b, e->u.binary.rhs->loc, "operand", &y))
            return false;
        *out = mv_node(ir_map_binary(E->g, is_and ? VOP_AND : VOP_OR, x, y, e->loc));
        if (E->session)
            elab_label(E, out, arena_printf(E->arena, "( %s %s %s)", elab_quickname(E, a),
                                            is_and ? "and" : "or", elab_quickname(E, b)));
        return true;
    }
    bool t = mv_truthy(a);
    *out = (is_and ? !t : t) ? a : b;
    return true;
}

static ValueOp binary_value_op(AstBinaryOp op) {
    switch (op) {
    case AST_ADD: return VOP_ADD;
    case AST_SUB: return VOP_SUB;
    case AST_MUL: return VOP_MUL;
    case AST_DIV: return VOP_DIV;
    case AST_MOD: return VOP_MOD;
    case AST_POW: return VOP_POW;
    case AST_EQ: return VOP_EQ;
    case AST_NE: return VOP_NE;
    case AST_LT: return VOP_LT;
    case AST_GT: return VOP_GT;
    case AST_LE: return VOP_LE;
    case AST_GE: return VOP_GE;
    case AST_AND: return VOP_AND;
    case AST_OR: return VOP_OR;
    case AST_IN: break;
    }
    return VOP_EQ;
}

/* Concatenation of two lists (Python's +), bounded. */
static bool list_concat(Elab *E, MetaValue a, MetaValue b, SrcLoc loc, MetaValue *out) {
    size_t n = a.u.list.count + b.u.list.count;
    if (!elab_charge(E, n, loc)) return false;
    if (n > ELAB_MAX_LIST) {
        diag_error(E->diags, loc, "list too large (more than %d elements)", ELAB_MAX_LIST);
        return false;
    }
    MetaValue *items = ARENA_ARRAY(E->arena, MetaValue, n ? n : 1);
    if (a.u.list.count) memcpy(items, a.u.list.items, a.u.list.count * sizeof *items);
    if (b.u.list.count) memcpy(items + a.u.list.count, b.u.list.items, b.u.list.count * sizeof *items);
    *out = mv_list(items, n);
    return true;
}

/* Arithmetic and comparison: an s-op on either side builds a map; two atoms compute now. */
static bool elab_arith(Elab *E, const AstExpr *e, MetaValue a, MetaValue b, MetaValue *out) {
    AstBinaryOp op = e->u.binary.op;
    ValueOp vop = binary_value_op(op);
    if (a.kind == MV_SEL || b.kind == MV_SEL) {
        diag_error(E->diags, e->loc, "cannot apply '%s' to selector(s)", ast_binary_op_text(op));
        elab_fault(E, ELAB_FAULT_IGNORED, "Cannot apply %s to selector(s)", ast_binary_op_text(op));
        return false;
    }
    bool a_seq = a.kind == MV_SOP || a.kind == MV_ATOM, b_seq = b.kind == MV_SOP || b.kind == MV_ATOM;
    if ((a.kind == MV_SOP || b.kind == MV_SOP) && a_seq && b_seq) {
        IrNode *x, *y;
        if (!elab_as_sop(E, a, e->u.binary.lhs->loc, "operand", &x) ||
            !elab_as_sop(E, b, e->u.binary.rhs->loc, "operand", &y))
            return false;
        *out = mv_node(ir_map_binary(E->g, vop, x, y, e->loc));
        if (E->session) /* the original names x ^ y by the Python function it calls */
            elab_label(E, out, arena_printf(E->arena, "( %s %s %s )", elab_quickname(E, a),
                                            op == AST_POW ? "pow" : ast_binary_op_text(op),
                                            elab_quickname(E, b)));
        return true;
    }
    if (a.kind == MV_ATOM && b.kind == MV_ATOM) {
        if (op == AST_ADD && a.u.atom.kind == VAL_STR && b.u.atom.kind == VAL_STR &&
            strlen(a.u.atom.as.s) + strlen(b.u.atom.as.s) > ELAB_MAX_STRING) {
            diag_error(E->diags, e->loc, "string too long (more than %d bytes)", ELAB_MAX_STRING);
            return false;
        }
        if (a.u.atom.kind == VAL_STR && b.u.atom.kind == VAL_STR &&
            !elab_charge(E, strlen(a.u.atom.as.s) / 64, e->loc))
            return false;
        char msg[256];
        ValueResult r = value_binary(vop, a.u.atom, b.u.atom, E->arena, msg, sizeof msg);
        if (!r.ok) {
            diag_error(E->diags, e->loc, "%s", r.error);
            elab_fault(E, ELAB_FAULT_EXCEPTION, "%s", py_binary_error(E->arena, vop, a.u.atom, b.u.atom));
            return false;
        }
        *out = mv_atom(r.value);
        return true;
    }
    if (op == AST_ADD && a.kind == MV_LIST && b.kind == MV_LIST) return list_concat(E, a, b, e->loc, out);
    if (op == AST_EQ || op == AST_NE) { /* Python compares any two values */
        int r = mv_equal(E, a, b, e->loc);
        if (r < 0) return false;
        bool eq = r == 1;
        *out = mv_atom(value_bool(op == AST_EQ ? eq : !eq));
        return true;
    }
    diag_error(E->diags, e->loc, "cannot apply '%s' to %s and %s", ast_binary_op_text(op),
               mv_kind_name(a.kind), mv_kind_name(b.kind));
    elab_fault(E, ELAB_FAULT_EXCEPTION, "%s",
               py_type_error(E->arena, vop, meta_py_type(a), meta_py_type(b)));
    return false;
}

/* binary = expr op expr */
static bool elab_binary(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue a, b;
    if (!elab_expr(E, env, e->u.binary.lhs, &a)) return false;
    if (!elab_expr(E, env, e->u.binary.rhs, &b)) return false;
    switch (e->u.binary.op) {
    case AST_AND:
    case AST_OR: return elab_logic(E, e, a, b, out);
    case AST_IN:
        if (!elab_in(E, a, b, e->loc, out)) return false;
        if (E->session && a.kind == MV_SOP) { /* the container by its variable name, if any */
            const AstExpr *c = e->u.binary.rhs;
            const char *cname = c->kind == AST_NAME ? c->u.name : meta_pystr(E->arena, b);
            elab_label(E, out, arena_printf(E->arena, "%s in %s", elab_quickname(E, a), cname));
        } else if (E->session && out->kind == MV_SOP) {
            elab_label(E, out, "( s-op > 0 )");
        }
        return true;
    default: return elab_arith(E, e, a, b, out);
    }
}

/* cond = expr "if" expr "else" expr. An s-op condition builds a map of both branches; an
 * atom condition evaluates only the branch taken (so recursion can terminate). */
static bool elab_cond(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue c;
    if (!elab_expr(E, env, e->u.cond.cond, &c)) return false;
    if (c.kind == MV_SEL) {
        diag_error(E->diags, e->u.cond.cond->loc, "the condition of 'if' cannot be a selector");
        elab_fault(E, ELAB_FAULT_EXCEPTION, "the condition of 'if' cannot be a selector");
        return false;
    }
    if (c.kind != MV_SOP)
        return elab_expr(E, env, mv_truthy(c) ? e->u.cond.then_e : e->u.cond.else_e, out);
    MetaValue t, f;
    IrNode *tn, *fn;
    if (!elab_expr(E, env, e->u.cond.then_e, &t)) return false;
    if (!elab_expr(E, env, e->u.cond.else_e, &f)) return false;
    if (!elab_as_sop(E, t, e->u.cond.then_e->loc, "a branch of an s-op conditional", &tn) ||
        !elab_as_sop(E, f, e->u.cond.else_e->loc, "a branch of an s-op conditional", &fn))
        return false;
    *out = mv_node(ir_map_cond(E->g, c.u.node, tn, fn, e->loc));
    if (E->session)
        elab_label(E, out, arena_printf(E->arena, "%s if %s else %s", elab_quickname(E, t),
                                        elab_quickname(E, c), elab_quickname(E, f)));
    return true;
}

bool elab_expr(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    if (!elab_step(E, e->loc)) return false;
    if (E->nesting >= ELAB_MAX_NESTING) {
        diag_error(E->diags, e->loc, "expression nested too deeply (limit %d)", ELAB_MAX_NESTING);
        return false;
    }
    E->nesting++;
    bool ok = false;
    switch (e->kind) {
    case AST_INT_LIT: *out = mv_atom(value_int(e->u.int_value)); ok = true; break;
    case AST_FLOAT_LIT: *out = mv_atom(value_float(e->u.float_value)); ok = true; break;
    case AST_STRING_LIT: *out = mv_atom(value_str(e->u.string_value)); ok = true; break;
    case AST_NAME: ok = elab_name(E, env, e, out); break;
    case AST_LIST: ok = elab_list(E, env, e, out); break;
    case AST_DICT: ok = elab_dict(E, env, e, out); break;
    case AST_LIST_COMP:
    case AST_DICT_COMP: ok = elab_comprehension(E, env, e, out); break;
    case AST_UNARY: ok = elab_unary(E, env, e, out); break;
    case AST_BINARY: ok = elab_binary(E, env, e, out); break;
    case AST_COND: ok = elab_cond(E, env, e, out); break;
    case AST_SELECT: ok = elab_select(E, env, e, out); break;
    case AST_AGGREGATE: ok = elab_aggregate(E, env, e, out); break;
    case AST_RANGE: ok = elab_range(E, env, e, out); break;
    case AST_ZIP: ok = elab_zip(E, env, e, out); break;
    case AST_LEN: ok = elab_len(E, env, e, out); break;
    case AST_INDEX: ok = elab_index(E, env, e, out); break;
    case AST_CALL: ok = elab_call(E, env, e, out); break;
    }
    E->nesting--;
    if (ok && E->session) ok = elab_session_after_expr(E, env, e, out);
    return ok;
}
