/* Interactive sessions (ir/session.h): the elaborator one statement at a time, with the original
 * REPL's labels, `out`, reserved names, tests on the running example and faults. */
#include "ir/elab_internal.h"

#include <stdarg.h>
#include <string.h>

#include "ir/pyerror.h"

/* The original's limit on names (FunctionalSupport.name_maxlen). */
enum { LABEL_MAX = 30 };

struct ElabSession {
    Elab E;
    Env *console;
    MvLabel prim_labels[PRIM_TOKENS_ASIS + 1];
    MetaValue example;
    const MetaValue *backup; /* the example while a one-argument call's callee is evaluated */
    /* passed[id] == generation: node id passed its test on the running example */
    uint32_t *passed;
    size_t passed_cap;
    uint32_t generation;
};

/* ---- hooks the elaborator calls ---- */

void elab_fault(Elab *E, ElabFaultKind kind, const char *fmt, ...) {
    if (!E->session || E->fault.kind != ELAB_FAULT_NONE) return;
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    E->fault.kind = kind;
    E->fault.text = kind == ELAB_FAULT_NOT_IMPLEMENTED ? NULL : arena_strdup(E->arena, buf);
}

static const char *fit_label(MetaValue v, const char *name) {
    if (strlen(name) <= LABEL_MAX) return name;
    return v.kind == MV_SEL ? "sel" : "s-op";
}

void elab_label(Elab *E, MetaValue *v, const char *name) {
    if (!E->session || (v->kind != MV_SOP && v->kind != MV_SEL)) return;
    v->label = ARENA_NEW(E->arena, MvLabel);
    v->label->name = arena_strdup(E->arena, fit_label(*v, name));
}

void elab_rename(Elab *E, MetaValue v, const char *name) {
    if (!E->session || (v.kind != MV_SOP && v.kind != MV_SEL) || !v.label) return;
    v.label->name = arena_strdup(E->arena, fit_label(v, name));
}

const char *elab_quickname(Elab *E, MetaValue v) {
    if ((v.kind == MV_SOP || v.kind == MV_SEL) && v.label) return v.label->name;
    return meta_pystr(E->arena, v);
}

MvLabel *elab_prim_label(Elab *E, Prim p) {
    return E->session ? &E->session->prim_labels[p] : NULL;
}

const MetaValue *elab_backup_example(Elab *E, const MetaValue *arg) {
    if (!E->session) return NULL;
    const MetaValue *prev = E->session->backup;
    E->session->backup = arg;
    return prev;
}

bool elab_session_reserved(const Elab *E, const char *name) {
    static const char *const names[] = {"out", "range", "zip", "len", "get", "tokens_asis"};
    if (!E->session) return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

/* ---- evaluation on inputs, the original's way ---- */

/* The atoms of an input as the original iterates it: a string's characters (UTF-8 code
 * points), a list's items, a dict's keys. False with the original's message otherwise. */
static bool input_atoms(Arena *a, MetaValue in, Value **atoms, size_t *n, ElabFault *fault) {
    *n = 0;
    if (in.kind == MV_ATOM && in.u.atom.kind == VAL_STR) {
        const char *s = in.u.atom.as.s;
        size_t len = strlen(s);
        *atoms = ARENA_ARRAY(a, Value, len ? len : 1);
        for (size_t i = 0; i < len;) {
            size_t k = 1;
            while (i + k < len && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
            (*atoms)[(*n)++] = value_str(arena_strndup(a, s + i, k));
            i += k;
        }
    } else if (in.kind == MV_LIST) {
        *n = in.u.list.count;
        *atoms = ARENA_ARRAY(a, Value, *n ? *n : 1);
        for (size_t i = 0; i < *n; i++) {
            if (in.u.list.items[i].kind != MV_ATOM) {
                fault->kind = ELAB_FAULT_IGNORED;
                fault->text = arena_printf(a, "attempted to create sequence with illegal val types "
                                              "(vals must be bool, float, int or string):\n\t\t %s",
                                           meta_pystr(a, in));
                return false;
            }
            (*atoms)[i] = in.u.list.items[i].u.atom;
        }
    } else if (in.kind == MV_DICT) {
        *n = in.u.dict.count;
        *atoms = in.u.dict.keys;
    }
    bool iterable = (in.kind == MV_ATOM && in.u.atom.kind == VAL_STR) || in.kind == MV_LIST || in.kind == MV_DICT;
    if (!iterable || *n == 0) {
        fault->kind = ELAB_FAULT_IGNORED;
        fault->text = arena_printf(a, "RASP sequences/selectors expect non-empty iterables, got: %s",
                                   meta_pystr(a, in));
        return false;
    }
    if (*n > ELAB_MAX_APPLY) {
        fault->kind = ELAB_FAULT_EXCEPTION;
        fault->text = arena_printf(a, "input too long (more than %d)", ELAB_MAX_APPLY);
        return false;
    }
    return true;
}

bool elab_session_apply(ElabSession *s, const IrNode *node, MetaValue input, Arena *scratch,
                        void **result, size_t *n, ElabFault *fault) {
    Value *atoms;
    fault->kind = ELAB_FAULT_NONE;
    fault->text = NULL;
    if (!input_atoms(scratch, input, &atoms, n, fault)) return false;
    IrEvalOptions opt = {.python_tokens = true};
    IrEvalError err;
    if (ir_eval_with(s->E.g, node, atoms, *n, scratch, &opt, result, &err)) return true;
    *fault = py_eval_fault(scratch, &err);
    fault->text = arena_strdup(s->E.arena, fault->text); /* outlives the scratch arena */
    return false;
}

static void force_fault(Elab *E, ElabFault f) {
    E->fault = f;
    E->fault.text = f.text ? arena_strdup(E->arena, f.text) : NULL;
}

bool elab_session_apply_value(Elab *E, IrNode *node, MetaValue input, MetaValue *out) {
    void *res;
    size_t n;
    ElabFault f;
    if (!elab_session_apply(E->session, node, input, E->arena, &res, &n, &f)) {
        force_fault(E, f);
        return false;
    }
    MetaValue *items = ARENA_ARRAY(E->arena, MetaValue, n);
    if (!ir_is_selector(node)) {
        for (size_t i = 0; i < n; i++) items[i] = mv_atom(((Value *)res)[i]);
    } else {
        const bool *m = res;
        for (size_t q = 0; q < n; q++) {
            MetaValue *row = ARENA_ARRAY(E->arena, MetaValue, n);
            for (size_t k = 0; k < n; k++) row[k] = mv_atom(value_bool(m[q * n + k]));
            items[q] = mv_list(row, n);
        }
    }
    *out = mv_list(items, n);
    return true;
}

/* The original tests every new s-op or selector on an example, so that a statement making one
 * that fails there fails itself. Passing the running example is remembered per node. */
static bool test_on_example(ElabSession *s, IrNode *node, SrcLoc loc) {
    Elab *E = &s->E;
    bool main_example = !s->backup;
    if (main_example && node->id < s->passed_cap && s->passed[node->id] == s->generation) return true;
    Arena scratch;
    arena_init(&scratch);
    void *res;
    size_t n;
    ElabFault f;
    bool ok = elab_session_apply(s, node, main_example ? s->example : *s->backup, &scratch, &res, &n, &f);
    if (!ok) {
        force_fault(E, f);
        diag_error(E->diags, loc, "fails on the example: %s", E->fault.text ? E->fault.text : "");
    }
    arena_free(&scratch);
    if (ok && main_example) {
        if (node->id >= s->passed_cap) {
            size_t cap = s->passed_cap ? s->passed_cap : 256;
            while (cap <= node->id) cap *= 2;
            s->passed = arena_grow(E->arena, s->passed, s->passed_cap, cap, sizeof *s->passed);
            s->passed_cap = cap;
        }
        s->passed[node->id] = s->generation;
    }
    return ok;
}

bool elab_session_after_expr(Elab *E, Env *env, const AstExpr *e, MetaValue *v) {
    if (E->last_apply == e) return true; /* an application's result is only printed */
    if ((v->kind == MV_SOP || v->kind == MV_SEL) && !test_on_example(E->session, v->u.node, e->loc))
        return false;
    if (env->keeps_out) env_set_out(E, env, *v);
    return true;
}

/* ---- the session API ---- */

static void bind_prim(Elab *E, Env *env, const char *name, Prim p) {
    MetaValue v;
    memset(&v, 0, sizeof v);
    v.kind = MV_PRIM;
    v.u.prim = p;
    env_assign(E, env, name, v, (SrcLoc){0});
}

ElabSession *elab_session_new(IrGraph *g, DiagList *diags, const char *base_dir) {
    ElabSession *s = ARENA_NEW(g->arena, ElabSession);
    Elab *E = &s->E;
    E->g = g;
    E->arena = g->arena;
    E->diags = diags;
    E->base_dir = base_dir;
    E->max_steps = ELAB_DEFAULT_STEPS;
    E->session = s;
    static const char *const prim_names[] = {"tokens_str", "tokens_int", "tokens_float", "tokens_bool",
                                             "indices", "length", "selector_width", "tokens_asis"};
    for (int p = 0; p <= PRIM_TOKENS_ASIS; p++) s->prim_labels[p].name = prim_names[p];
    s->example = mv_atom(value_str("hello"));
    s->generation = 1;
    elab_bind_root(E);
    bind_prim(E, E->root, "tokens_asis", PRIM_TOKENS_ASIS);
    E->prelude = env_new(E, E->root);
    E->prelude->name = "RASP_support/rasplib";
    elab_prelude(E);
    E->top = s->console = env_new(E, E->prelude);
    s->console->protect_outer = true;
    s->console->keeps_out = true;
    s->console->name = "console";
    return s;
}

Env *elab_session_console(ElabSession *s) { return s->console; }
Env *elab_session_base(ElabSession *s) { return s->E.prelude; }
IrGraph *elab_session_graph(ElabSession *s) { return s->E.g; }
const MetaValue *elab_session_lookup(Env *scope, const char *name) { return env_lookup(scope, name); }

Env *elab_session_file_scope(ElabSession *s, Env *loader, const char *name) {
    Env *scope = env_new(&s->E, s->E.prelude);
    scope->export_to = loader;
    scope->keeps_out = true;
    scope->name = arena_strdup(s->E.arena, name);
    return scope;
}

void elab_session_set_example(ElabSession *s, MetaValue example) {
    s->example = example;
    s->generation++;
}

static void begin_statement(Elab *E) {
    memset(&E->fault, 0, sizeof E->fault);
    E->steps = 0;
    E->budget_reported = false;
    E->nesting = 0;
    E->call_depth = 0;
    E->last_apply = NULL;
    E->session->backup = NULL;
}

/* The value a name holds in scope after a statement assigned it. */
static void add_named(Env *scope, ElabOutcome *out, const char *name) {
    const MetaValue *v = env_lookup(scope, name);
    if (!v) return;
    out->named[out->n_named++] = (ElabNamed){name, *v};
}

void elab_session_run(ElabSession *s, Env *scope, const AstStmt *stmt, ElabOutcome *out) {
    Elab *E = &s->E;
    memset(out, 0, sizeof *out);
    begin_statement(E);
    bool ok;
    switch (stmt->kind) {
    case AST_STMT_EXPR: {
        MetaValue v;
        ok = elab_expr(E, scope, stmt->u.expr, &v);
        if (!ok) break;
        if (E->last_apply == stmt->u.expr) {
            out->applied = true;
            out->applied_node = E->applied_node;
            out->applied_input = E->applied_input;
            break;
        }
        out->named = ARENA_NEW(E->arena, ElabNamed);
        out->named[out->n_named++] =
            (ElabNamed){stmt->u.expr->kind == AST_NAME ? stmt->u.expr->u.name : "out", v};
        break;
    }
    case AST_STMT_ASSIGN: {
        ok = elab_stmt(E, scope, stmt);
        if (!ok) break;
        const AstNameList *t = &stmt->u.assign.targets;
        out->named = ARENA_ARRAY(E->arena, ElabNamed, t->count);
        for (size_t i = 0; i < t->count; i++) add_named(scope, out, t->names[i]);
        break;
    }
    case AST_STMT_DEF:
        ok = elab_stmt(E, scope, stmt);
        if (!ok) break;
        out->named = ARENA_NEW(E->arena, ElabNamed);
        add_named(scope, out, stmt->u.def.name);
        break;
    default:
        ok = elab_stmt(E, scope, stmt);
        break;
    }
    out->ok = ok;
    out->fault = E->fault;
}

bool elab_session_eval(ElabSession *s, Env *scope, const AstExpr *e, const MetaValue *example, MetaValue *out,
                       ElabFault *fault) {
    Elab *E = &s->E;
    begin_statement(E);
    s->backup = example;
    bool ok = elab_expr(E, scope, e, out);
    s->backup = NULL;
    *fault = E->fault;
    return ok;
}
