/* The built-in forms of the meta-language: select, aggregate, range, zip, len, indexing, `in`,
 * function calls, selector_width, and applying an s-op to an input. */
#include "ir/elab_internal.h"

#include <string.h>

#include "ir/eval.h"

static IrCmp select_cmp(AstBinaryOp op) {
    switch (op) {
    case AST_NE: return IR_CMP_NE;
    case AST_LT: return IR_CMP_LT;
    case AST_GT: return IR_CMP_GT;
    case AST_LE: return IR_CMP_LE;
    case AST_GE: return IR_CMP_GE;
    default: return IR_CMP_EQ;
    }
}

IrNode *elab_full_selector(Elab *E, SrcLoc loc) {
    IrNode *one = ir_const(E->g, value_int(1), loc);
    return ir_select(E->g, one, one, IR_CMP_EQ, loc);
}

/* select = "select" "(" expr "," expr "," cmp ")"   (atoms become constant s-ops) */
bool elab_select(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue k, q;
    IrNode *kn, *qn;
    if (!elab_expr(E, env, e->u.select.keys, &k) || !elab_expr(E, env, e->u.select.queries, &q))
        return false;
    if (!elab_as_sop(E, k, e->u.select.keys->loc, "the keys of select", &kn) ||
        !elab_as_sop(E, q, e->u.select.queries->loc, "the queries of select", &qn))
        return false;
    *out = mv_node(ir_select(E->g, kn, qn, select_cmp(e->u.select.cmp), e->loc));
    elab_label(E, out, "plain select");
    return true;
}

/* aggregate = "aggregate" "(" expr "," expr ["," expr] ")"   default: an atom, 0 if absent */
bool elab_aggregate(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue sel, sop, def = mv_atom(value_int(0));
    IrNode *sn;
    if (!elab_expr(E, env, e->u.aggregate.selector, &sel)) return false;
    if (!elab_expr(E, env, e->u.aggregate.sop, &sop)) return false;
    if (e->u.aggregate.default_value && !elab_expr(E, env, e->u.aggregate.default_value, &def))
        return false;
    if (sel.kind != MV_SEL) {
        diag_error(E->diags, e->u.aggregate.selector->loc,
                   "aggregate expects a selector first, got %s", mv_describe(E, sel));
        /* the original's message names a variable it never defined */
        elab_fault(E, ELAB_FAULT_EXCEPTION, "name 'selector' is not defined");
        return false;
    }
    if (!elab_as_sop(E, sop, e->u.aggregate.sop->loc, "the aggregated value", &sn)) return false;
    if (def.kind != MV_ATOM) {
        diag_error(E->diags, e->u.aggregate.default_value->loc,
                   "the default of aggregate must be an atom, got %s", mv_describe(E, def));
        elab_fault(E, ELAB_FAULT_IGNORED, "Expected atom, got: %s", meta_strdesc(E->arena, def, 0));
        return false;
    }
    *out = mv_node(ir_aggregate(E->g, sel.u.node, sn, def.u.atom, e->loc));
    elab_label(E, out, "s-op");
    return true;
}

/* An int (bools are ints, as in Python) or false. */
static bool as_int(MetaValue v, int64_t *out) {
    if (v.kind != MV_ATOM) return false;
    if (v.u.atom.kind == VAL_INT) *out = v.u.atom.as.i;
    else if (v.u.atom.kind == VAL_BOOL) *out = v.u.atom.as.b;
    else return false;
    return true;
}

/* range = "range" "(" expr ["," expr ["," expr]] ")"   ints only, Python's semantics */
bool elab_range(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    size_t n = e->u.list.count;
    int64_t a[3] = {0, 0, 1};
    if (n < 1 || n > 3) {
        diag_error(E->diags, e->loc, "range expects 1, 2 or 3 arguments, got %zu", n);
        elab_fault(E, ELAB_FAULT_IGNORED, "wrong number of inputs to range, expected: 1, 2, or 3, got: %zu", n);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        MetaValue v;
        if (!elab_expr(E, env, e->u.list.items[i], &v)) return false;
        if (!as_int(v, &a[n == 1 ? 1 : i])) {
            diag_error(E->diags, e->u.list.items[i]->loc, "range expects integers, got %s",
                       mv_describe(E, v));
            elab_fault(E, ELAB_FAULT_IGNORED, "range expects all integer inputs, but got: %s",
                       meta_strdesc(E->arena, v, 0));
            return false;
        }
    }
    int64_t start = a[0], stop = a[1], step = a[2];
    if (step == 0) {
        diag_error(E->diags, e->loc, "range step must not be zero");
        elab_fault(E, ELAB_FAULT_EXCEPTION, "range() arg 3 must not be zero");
        return false;
    }
    uint64_t count = 0; /* unsigned differences cannot overflow */
    if (step > 0 && start < stop) count = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    if (step < 0 && start > stop)
        count = ((uint64_t)start - (uint64_t)stop - 1) / (0 - (uint64_t)step) + 1;
    if (count > ELAB_MAX_LIST) {
        diag_error(E->diags, e->loc, "range too large (%llu elements, limit %d)",
                   (unsigned long long)count, ELAB_MAX_LIST);
        return false;
    }
    if (!elab_charge(E, count, e->loc)) return false;
    MetaValue *items = ARENA_ARRAY(E->arena, MetaValue, count ? count : 1);
    for (uint64_t i = 0; i < count; i++) items[i] = mv_atom(value_int(start + (int64_t)i * step));
    *out = mv_list(items, count);
    return true;
}

/* zip = "zip" "(" expr, ... ")"   equal-length lists -> a list of lists */
bool elab_zip(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    size_t k = e->u.list.count;
    if (k == 0) {
        diag_error(E->diags, e->loc, "zip needs at least one list");
        return false;
    }
    MetaValue *lists = ARENA_ARRAY(E->arena, MetaValue, k);
    for (size_t i = 0; i < k; i++) {
        if (!elab_expr(E, env, e->u.list.items[i], &lists[i])) return false;
        if (lists[i].kind != MV_LIST) {
            diag_error(E->diags, e->u.list.items[i]->loc, "zip expects lists, argument %zu is %s",
                       i + 1, mv_describe(E, lists[i]));
            elab_fault(E, ELAB_FAULT_IGNORED, "attempting to zip lists, but %zu -th element is not list: %s",
                       i + 1, meta_strdesc(E->arena, lists[i], 0));
            return false;
        }
        if (lists[i].u.list.count != lists[0].u.list.count) {
            diag_error(E->diags, e->u.list.items[i]->loc,
                       "zip of lists of different lengths (%zu and %zu)",
                       lists[0].u.list.count, lists[i].u.list.count);
            elab_fault(E, ELAB_FAULT_IGNORED, "attempting to zip lists of length %zu , but %zu -th list has length %zu",
                       lists[0].u.list.count, i + 1, lists[i].u.list.count);
            return false;
        }
    }
    size_t n = lists[0].u.list.count;
    if (!elab_charge(E, (uint64_t)n * k, e->loc)) return false;
    MetaValue *rows = ARENA_ARRAY(E->arena, MetaValue, n ? n : 1);
    for (size_t r = 0; r < n; r++) {
        MetaValue *row = ARENA_ARRAY(E->arena, MetaValue, k);
        for (size_t i = 0; i < k; i++) row[i] = lists[i].u.list.items[r];
        rows[r] = mv_list(row, k);
    }
    *out = mv_list(rows, n);
    return true;
}

/* len = "len" "(" expr ")"   lists only, as in the original */
bool elab_len(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue v;
    if (!elab_expr(E, env, e->u.len.arg, &v)) return false;
    if (v.kind != MV_LIST) {
        diag_error(E->diags, e->u.len.arg->loc, "len expects a list, got %s",
                   mv_describe(E, v));
        elab_fault(E, ELAB_FAULT_IGNORED, "attempting to compute length of non-list: %s",
                   meta_strdesc(E->arena, v, 0));
        return false;
    }
    *out = mv_atom(value_int((int64_t)v.u.list.count));
    return true;
}

/* The atoms of a list (or the characters of a string) for a table map; false if some element
 * is not an atom. */
static bool table_atoms(Elab *E, MetaValue v, Value **atoms, size_t *n) {
    if (v.kind == MV_ATOM) { /* a string: its characters */
        const char *s = v.u.atom.as.s;
        *n = strlen(s);
        *atoms = ARENA_ARRAY(E->arena, Value, *n ? *n : 1);
        for (size_t i = 0; i < *n; i++) (*atoms)[i] = value_str(arena_strndup(E->arena, s + i, 1));
        return true;
    }
    *n = v.u.list.count;
    *atoms = ARENA_ARRAY(E->arena, Value, *n ? *n : 1);
    for (size_t i = 0; i < *n; i++) {
        if (v.u.list.items[i].kind != MV_ATOM) return false;
        (*atoms)[i] = v.u.list.items[i].u.atom;
    }
    return true;
}

/* list[i] / string[i] with an int i (Python: negative counts from the end) or an s-op. */
static bool index_sequence(Elab *E, const AstExpr *e, MetaValue obj, MetaValue idx, MetaValue *out) {
    bool is_str = obj.kind == MV_ATOM;
    const char *what = is_str ? "string" : "list";
    if (idx.kind == MV_SOP) {
        Value *atoms;
        size_t n;
        if (!table_atoms(E, obj, &atoms, &n)) {
            diag_error(E->diags, e->u.index.object->loc,
                       "indexing a list with an s-op needs a list of atoms, got %s",
                       mv_describe(E, obj));
            elab_fault(E, ELAB_FAULT_IGNORED, "indexing a list with an s-op needs a list of atoms, got: %s",
                       meta_strdesc(E->arena, obj, 0));
            return false;
        }
        *out = mv_node(ir_map_index(E->g, idx.u.node, atoms, n, e->loc));
        elab_label(E, out, "s-op");
        return true;
    }
    int64_t i;
    if (!as_int(idx, &i)) {
        diag_error(E->diags, e->u.index.index->loc, "index into %s has to be an s-op or an integer, got %s",
                   what, mv_describe(E, idx));
        elab_fault(E, ELAB_FAULT_IGNORED, "index into %s has to be integer, got: %s", what,
                   meta_strdesc(E->arena, idx, 0));
        return false;
    }
    size_t n = is_str ? strlen(obj.u.atom.as.s) : obj.u.list.count;
    int64_t j = i < 0 ? i + (int64_t)n : i;
    if (j < 0 || (uint64_t)j >= n) {
        diag_error(E->diags, e->u.index.index->loc, "index %lld out of range for %s of length %zu",
                   (long long)i, what, n);
        elab_fault(E, ELAB_FAULT_IGNORED, "index %lld out of range for %s of length %zu",
                   (long long)i, what, n);
        return false;
    }
    *out = is_str ? mv_atom(value_str(arena_strndup(E->arena, obj.u.atom.as.s + j, 1)))
                  : obj.u.list.items[j];
    return true;
}

static bool index_dict(Elab *E, const AstExpr *e, MetaValue d, MetaValue key, MetaValue *out) {
    if (key.kind == MV_SOP) {
        if (!mv_all_atoms(d.u.dict.values, d.u.dict.count)) {
            diag_error(E->diags, e->u.index.object->loc,
                       "indexing a dict with an s-op needs atom values, got %s", mv_describe(E, d));
            elab_fault(E, ELAB_FAULT_IGNORED, "indexing a dict with an s-op needs atom values, got: %s",
                       meta_strdesc(E->arena, d, 0));
            return false;
        }
        size_t n = d.u.dict.count;
        Value *vals = ARENA_ARRAY(E->arena, Value, n ? n : 1);
        for (size_t i = 0; i < n; i++) vals[i] = d.u.dict.values[i].u.atom;
        *out = mv_node(ir_map_lookup(E->g, key.u.node, d.u.dict.keys, vals, n, e->loc));
        elab_label(E, out, "s-op");
        return true;
    }
    if (key.kind != MV_ATOM) {
        diag_error(E->diags, e->u.index.index->loc, "index into dict has to be an s-op or an atom, got %s",
                   mv_describe(E, key));
        elab_fault(E, ELAB_FAULT_IGNORED,
                   "index into dict has to be atom (i.e., string, int, float, bool), got: %s",
                   meta_strdesc(E->arena, key, 0));
        return false;
    }
    if (!elab_charge(E, d.u.dict.count, e->loc)) return false;
    for (size_t i = 0; i < d.u.dict.count; i++) {
        if (value_equal(d.u.dict.keys[i], key.u.atom)) {
            *out = d.u.dict.values[i];
            return true;
        }
    }
    diag_error(E->diags, e->u.index.index->loc, "key %s not in dict", mv_describe(E, key));
    elab_fault(E, ELAB_FAULT_IGNORED, "index [ %s ] not in dict.", meta_strdesc(E->arena, key, 0));
    return false;
}

/* sop[i]: the value at position i (from the end when negative), at every position. */
static bool index_sop(Elab *E, const AstExpr *e, MetaValue obj, MetaValue idx, MetaValue *out) {
    IrNode *sop = obj.u.node;
    int64_t i;
    if (!as_int(idx, &i)) {
        diag_error(E->diags, e->u.index.index->loc, "index into an s-op has to be an integer, got %s",
                   mv_describe(E, idx));
        elab_fault(E, ELAB_FAULT_IGNORED, "index into sequence has to be integer, got: %s",
                   meta_strdesc(E->arena, idx, 0));
        return false;
    }
    IrNode *where = ir_const(E->g, value_int(i), e->loc);
    if (i < 0) where = ir_map_binary(E->g, VOP_ADD, ir_length(E->g, e->loc), where, e->loc);
    IrNode *sel = ir_select(E->g, ir_indices(E->g, e->loc), where, IR_CMP_EQ, e->loc);
    *out = mv_node(ir_aggregate(E->g, sel, sop, value_int(0), e->loc));
    if (E->session)
        elab_label(E, out, arena_printf(E->arena, "%s[%lld]", elab_quickname(E, obj), (long long)i));
    return true;
}

/* index = expr "[" expr "]" */
bool elab_index(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue obj, idx;
    if (!elab_expr(E, env, e->u.index.object, &obj)) return false;
    if (!elab_expr(E, env, e->u.index.index, &idx)) return false;
    if (obj.kind == MV_LIST || (obj.kind == MV_ATOM && obj.u.atom.kind == VAL_STR))
        return index_sequence(E, e, obj, idx, out);
    if (obj.kind == MV_DICT) return index_dict(E, e, obj, idx, out);
    if (obj.kind == MV_SOP) return index_sop(E, e, obj, idx, out);
    diag_error(E->diags, e->u.index.object->loc,
               "can only index into a list, dict, string or s-op, got %s",
               mv_describe(E, obj));
    elab_fault(E, ELAB_FAULT_IGNORED,
               "can only index into a list, dict, string, or sequence, but instead got: %s",
               meta_strdesc(E->arena, obj, 0));
    return false;
}

/* item "in" container */
bool elab_in(Elab *E, MetaValue item, MetaValue container, SrcLoc loc, MetaValue *out) {
    if (item.kind == MV_SOP) {
        if (container.kind != MV_LIST ||
            !mv_all_atoms(container.u.list.items, container.u.list.count)) {
            diag_error(E->diags, loc, "\"s-op in X\" expects X to be a list of atoms, got %s",
                       mv_describe(E, container));
            elab_fault(E, ELAB_FAULT_IGNORED, "\"[s-op] in X\" expects X tobe list of atoms, but got non-list: %s",
                       meta_strdesc(E->arena, container, 0));
            return false;
        }
        Value *atoms;
        size_t n;
        table_atoms(E, container, &atoms, &n);
        *out = mv_node(ir_map_in(E->g, item.u.node, atoms, n, loc));
        return true;
    }
    if (item.kind == MV_ATOM && container.kind == MV_LIST) {
        bool found = false;
        for (size_t i = 0; i < container.u.list.count && !found; i++) {
            int r = mv_equal(E, item, container.u.list.items[i], loc);
            if (r < 0) return false;
            found = r == 1;
        }
        *out = mv_atom(value_bool(found));
        return true;
    }
    if (item.kind == MV_ATOM && container.kind == MV_SOP) {
        /* aggregate(full_s, indicator(sop == atom)) > 0, as the original builds it */
        IrNode *eq = ir_map_binary(E->g, VOP_EQ, container.u.node, ir_const(E->g, item.u.atom, loc), loc);
        IrNode *ind = ir_map_unary(E->g, VOP_INDICATOR, eq, loc);
        IrNode *frac = ir_aggregate(E->g, elab_full_selector(E, loc), ind, value_int(0), loc);
        *out = mv_node(ir_map_binary(E->g, VOP_GT, frac, ir_const(E->g, value_int(0), loc), loc));
        return true;
    }
    if (item.kind == MV_ATOM) {
        diag_error(E->diags, loc, "\"atom in X\" expects X to be a list or an s-op, got %s",
                   mv_describe(E, container));
        elab_fault(E, ELAB_FAULT_IGNORED, "\"[atom] in X\" expects X to be list or s-op, but got: %s",
                   meta_strdesc(E->arena, container, 0));
    } else {
        diag_error(E->diags, loc, "\"A in X\" expects A to be an s-op or an atom, got %s",
                   mv_kind_name(item.kind));
        elab_fault(E, ELAB_FAULT_IGNORED, "\"A in X\" expects A to be s-op or atom, but got A: %s",
                   meta_strdesc(E->arena, item, 0));
    }
    return false;
}

/* Calls a closure: a new scope nested in the scope the function was defined in. Several
 * return values come back as a list (tuple assignment unpacks it). */
static bool call_closure(Elab *E, const AstExpr *e, const Closure *f, MetaValue *args, size_t nargs,
                         MetaValue *out) {
    const AstStmt *def = f->def;
    if (nargs != def->u.def.params.count) {
        diag_error(E->diags, e->loc, "wrong number of arguments for %s: expected %zu, got %zu",
                   def->u.def.name, def->u.def.params.count, nargs);
        elab_fault(E, ELAB_FAULT_IGNORED, "wrong number of args for %s- expected: %zu, got: %zu.",
                   def->u.def.name, def->u.def.params.count, nargs);
        return false;
    }
    if (E->call_depth >= ELAB_MAX_CALL_DEPTH) {
        diag_error(E->diags, e->loc, "recursion too deep in call to %s (limit %d)",
                   def->u.def.name, ELAB_MAX_CALL_DEPTH);
        return false;
    }
    Env *scope = env_new(E, f->env);
    if (E->session) scope->name = arena_printf(E->arena, "%s'", f->env->name ? f->env->name : "");
    for (size_t i = 0; i < nargs; i++)
        if (!env_assign(E, scope, def->u.def.params.names[i], args[i], def->u.def.params.locs[i]))
            return false;
    E->call_depth++;
    const MetaValue *outer_backup = elab_backup_example(E, NULL); /* a body tests on the example */
    bool ok = elab_stmts(E, scope, &def->u.def.body);
    size_t nret = def->u.def.returns.count;
    MetaValue *rets = ARENA_ARRAY(E->arena, MetaValue, nret ? nret : 1);
    for (size_t i = 0; ok && i < nret; i++) ok = elab_expr(E, scope, def->u.def.returns.items[i], &rets[i]);
    E->call_depth--;
    elab_backup_example(E, outer_backup);
    if (!ok) return false;
    *out = nret == 1 ? rets[0] : mv_list(rets, nret);
    if (E->session && (out->kind == MV_SOP || out->kind == MV_SEL)) {
        /* the original renames what a function returns after the call */
        const char *name = def->u.def.name;
        for (size_t i = 0; i < nargs; i++)
            name = arena_printf(E->arena, "%s%s%s", name, i ? " , " : "(", meta_strdesc(E->arena, args[i], 20));
        elab_rename(E, *out, nargs ? arena_printf(E->arena, "%s)", name) : arena_printf(E->arena, "%s()", name));
    }
    return true;
}

/* The input of an application: a list of atoms or a string's characters. */
static bool application_input(Elab *E, const AstExpr *e, MetaValue in, Value **atoms, size_t *n) {
    bool ok = (in.kind == MV_ATOM && in.u.atom.kind == VAL_STR) ||
              (in.kind == MV_LIST && mv_all_atoms(in.u.list.items, in.u.list.count));
    if (ok) table_atoms(E, in, atoms, n);
    if (ok && (*n == 0 || *n > ELAB_MAX_APPLY)) ok = false; /* the original rejects empty inputs */
    if (!ok) {
        diag_error(E->diags, e->u.call.args.items[0]->loc,
                   "applying an s-op or selector expects a non-empty string or list of atoms "
                   "(at most %d), got %s", ELAB_MAX_APPLY,
                   mv_describe(E, in));
        elab_fault(E, ELAB_FAULT_IGNORED, "Applying unfinished expects iterable input, got: %s",
                   meta_strdesc(E->arena, in, 0));
    }
    return ok;
}

/* sop(input) / sel(input): evaluated now with the reference evaluator (the REPL's feature). */
static bool apply_to_input(Elab *E, const AstExpr *e, IrNode *node, MetaValue in, MetaValue *out) {
    Value *atoms;
    size_t n;
    IrEvalError err;
    if (E->session) { /* the original's conversions and errors */
        E->last_apply = e;
        E->applied_node = node;
        E->applied_input = in;
        if (elab_session_apply_value(E, node, in, out)) return true;
        diag_error(E->diags, e->loc, "evaluating on this input failed: %s", E->fault.text ? E->fault.text : "");
        return false;
    }
    if (!application_input(E, e, in, &atoms, &n)) return false;
    if (!ir_is_selector(node)) {
        Value *res;
        if (!ir_eval(E->g, node, atoms, n, E->arena, &res, &err)) goto failed;
        MetaValue *items = ARENA_ARRAY(E->arena, MetaValue, n);
        for (size_t i = 0; i < n; i++) items[i] = mv_atom(res[i]);
        *out = mv_list(items, n);
        return true;
    }
    bool *m;
    if (!ir_eval_selector(E->g, node, atoms, n, E->arena, &m, &err)) goto failed;
    MetaValue *rows = ARENA_ARRAY(E->arena, MetaValue, n);
    for (size_t q = 0; q < n; q++) {
        MetaValue *row = ARENA_ARRAY(E->arena, MetaValue, n);
        for (size_t k = 0; k < n; k++) row[k] = mv_atom(value_bool(m[q * n + k]));
        rows[q] = mv_list(row, n);
    }
    *out = mv_list(rows, n);
    return true;
failed: {
    char where[512];
    srcloc_format(err.loc, where, sizeof where);
    diag_error(E->diags, e->loc, "evaluating on this input failed: %s (at %s)", err.message, where);
    return false;
}
}

/* call = expr "(" expr, ... ")" */
bool elab_call(Elab *E, Env *env, const AstExpr *e, MetaValue *out) {
    MetaValue callee;
    size_t nargs = e->u.call.args.count;
    MetaValue *args = ARENA_ARRAY(E->arena, MetaValue, nargs ? nargs : 1);
    if (E->session && nargs == 1) {
        /* as the original: the argument first, the example the callee's s-ops are tested on */
        if (!elab_expr(E, env, e->u.call.args.items[0], &args[0])) return false;
        const MetaValue *prev = elab_backup_example(E, &args[0]);
        bool ok = elab_expr(E, env, e->u.call.callee, &callee);
        elab_backup_example(E, prev);
        if (!ok) return false;
    } else {
        if (!elab_expr(E, env, e->u.call.callee, &callee)) return false;
        for (size_t i = 0; i < nargs; i++)
            if (!elab_expr(E, env, e->u.call.args.items[i], &args[i])) return false;
    }
    switch (callee.kind) {
    case MV_FUNC: return call_closure(E, e, callee.u.func, args, nargs, out);
    case MV_PRIM: /* selector_width */
        if (nargs != 1 || args[0].kind != MV_SEL) {
            diag_error(E->diags, e->loc, "selector_width expects one selector%s%s",
                       nargs == 1 ? ", got " : "", nargs == 1 ? mv_describe(E, args[0]) : "");
            if (nargs != 1) /* as the library function of the original would fail */
                elab_fault(E, ELAB_FAULT_IGNORED, "wrong number of args for selector_width- expected: 1, got: %zu.", nargs);
            else
                elab_fault(E, ELAB_FAULT_IGNORED, "Cannot apply and/or between selector and non-selector");
            return false;
        }
        *out = mv_node(ir_selector_width(E->g, args[0].u.node, e->loc));
        if (E->session)
            elab_label(E, out, arena_printf(E->arena, "selector_width(%s)", meta_strdesc(E->arena, args[0], 20)));
        return true;
    case MV_SOP:
    case MV_SEL:
        if (nargs != 1) {
            diag_error(E->diags, e->loc, "applying a %s expects one input, got %zu arguments",
                       mv_kind_name(callee.kind), nargs);
            elab_fault(E, ELAB_FAULT_IGNORED, "wrong number of args for evaluate unfinished- expected: 1, got: %zu.", nargs);
            return false;
        }
        return apply_to_input(E, e, callee.u.node, args[0], out);
    default:
        diag_error(E->diags, e->u.call.callee->loc, "%s is not callable", mv_describe(E, callee));
        elab_fault(E, ELAB_FAULT_NOT_IMPLEMENTED, "not callable");
        return false;
    }
}
