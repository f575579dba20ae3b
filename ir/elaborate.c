/* Statements, loads, the prelude and the program: the entry points of ir/elaborate.h. */
#include "ir/elab_internal.h"

#include <string.h>
#include <sys/stat.h>

#include "parser/parser.h"

bool elab_bind_names(Elab *E, Env *env, const AstNameList *names, MetaValue v, SrcLoc loc) {
    if (names->count == 1) return env_assign(E, env, names->names[0], v, names->locs[0]);
    if (v.kind != MV_LIST || v.u.list.count != names->count) {
        diag_error(E->diags, loc, "expected %zu values to unpack, got %s", names->count,
                   mv_describe(E, v));
        if (v.kind == MV_LIST)
            elab_fault(E, ELAB_FAULT_IGNORED, "expected %zu values, but got: %zu", names->count, v.u.list.count);
        else
            elab_fault(E, ELAB_FAULT_EXCEPTION, "object of type '%s' has no len()", meta_py_type(v));
        return false;
    }
    for (size_t i = 0; i < names->count; i++)
        if (!env_assign(E, env, names->names[i], v.u.list.items[i], names->locs[i])) return false;
    return true;
}

/* assign = names "=" expr, ... ";"   one value per name, or one list unpacked */
static bool elab_assign(Elab *E, Env *env, const AstStmt *s) {
    size_t n = s->u.assign.values.count;
    MetaValue *vals = ARENA_ARRAY(E->arena, MetaValue, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        const AstExpr *given = elab_override_for(E, s, i); /* -D NAME=VALUE */
        if (!elab_expr(E, env, given ? given : s->u.assign.values.items[i], &vals[i])) return false;
    }
    MetaValue v = n == 1 ? vals[0] : mv_list(vals, n);
    if (!elab_bind_names(E, env, &s->u.assign.targets, v, s->loc)) return false;
    if (E->session) { /* the original renames each assigned s-op or selector */
        const AstNameList *t = &s->u.assign.targets;
        for (size_t i = 0; i < t->count; i++)
            elab_rename(E, t->count == 1 ? v : v.u.list.items[i], t->names[i]);
    }
    if (env == E->top) { /* remember the default output: the last s-op the program assigned */
        const AstNameList *t = &s->u.assign.targets;
        for (size_t i = 0; i < t->count; i++) {
            const MetaValue *b = env_lookup(env, t->names[i]);
            if (b && b->kind == MV_SOP) {
                E->last_name = t->names[i];
                E->last_sop = b->u.node;
            }
        }
    }
    return true;
}

/* for = "for" names "in" expr "{" stmts "}"   the loop names live in the enclosing scope */
static bool elab_for(Elab *E, Env *env, const AstStmt *s) {
    MetaValue it, *items;
    size_t n;
    if (!elab_expr(E, env, s->u.for_loop.iterable, &it)) return false;
    if (!elab_iteration_items(E, it, s->u.for_loop.iterable->loc, "for loop", &items, &n)) return false;
    for (size_t i = 0; i < n; i++) {
        if (!elab_step(E, s->loc)) return false;
        if (!elab_bind_names(E, env, &s->u.for_loop.names, items[i], s->loc)) return false;
        if (!elab_stmts(E, env, &s->u.for_loop.body)) return false;
    }
    return true;
}

static bool elab_file_stmts(Elab *E, Env *env, const AstStmtList *stmts);

/* Same file: stat identity, so "a.rasp" and "./a.rasp" are one file in a cycle. */
static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* load = "load" string ";"   the path is relative to the program's directory; as in the
 * original, "name" also finds "name.rasp". The file runs in a scope nested in the loader's,
 * and its public names (not starting with '_') are written into the loader's scope. */
static bool elab_load(Elab *E, Env *env, const AstStmt *s) {
    const char *rel = s->u.load.path;
    const char *path = (rel[0] == '/' || !E->base_dir || !E->base_dir[0])
                           ? rel : arena_printf(E->arena, "%s/%s", E->base_dir, rel);
    if (!file_exists(path)) {
        const char *with_ext = arena_printf(E->arena, "%s.rasp", path);
        if (file_exists(with_ext)) path = with_ext;
    }
    for (LoadFrame *f = E->loading; f; f = f->outer) {
        if (same_file(f->path, path)) {
            diag_error(E->diags, s->loc, "load cycle: \"%s\" is already being loaded", rel);
            return false;
        }
    }
    const char *why = "";
    SourceFile *file = source_read_file(E->arena, path, &why);
    if (!file) {
        diag_error(E->diags, s->loc, "cannot load \"%s\": %s", rel, why);
        elab_fault(E, ELAB_FAULT_IGNORED, "could not find file: %s.rasp", rel);
        return false;
    }
    AstProgram prog;
    if (!parse_program(E->arena, file, &prog, E->diags)) {
        diag_add(E->diags, DIAG_NOTE, s->loc, "in the file loaded here");
        return false;
    }
    LoadFrame frame = {path, E->loading};
    Env *scope = env_new(E, env);
    scope->export_to = env;
    E->loading = &frame;
    bool ok = elab_file_stmts(E, scope, &prog.stmts);
    E->loading = frame.outer;
    if (!ok) diag_add(E->diags, DIAG_NOTE, s->loc, "in the file loaded here");
    return ok;
}

bool elab_stmt(Elab *E, Env *env, const AstStmt *s) {
    switch (s->kind) {
    case AST_STMT_EXPR: {
        MetaValue v;
        if (!elab_expr(E, env, s->u.expr, &v)) return false;
        if (env == E->top && s->u.expr->kind == AST_CALL && v.kind == MV_LIST)
            diag_warning(E->diags, s->loc, "the value of this expression is not shown in batch mode");
        return true;
    }
    case AST_STMT_ASSIGN: return elab_assign(E, env, s);
    case AST_STMT_DEF: {
        Closure *f = ARENA_NEW(E->arena, Closure);
        f->def = s;
        f->env = env;
        MetaValue v;
        memset(&v, 0, sizeof v);
        v.kind = MV_FUNC;
        v.u.func = f;
        return env_assign(E, env, s->u.def.name, v, s->loc);
    }
    case AST_STMT_FOR: return elab_for(E, env, s);
    case AST_STMT_LOAD: return elab_load(E, env, s);
    case AST_STMT_REPL: return true; /* the parser already warned */
    }
    return true;
}

/* Statements of a function body or loop: the first error ends them. */
bool elab_stmts(Elab *E, Env *env, const AstStmtList *stmts) {
    for (size_t i = 0; i < stmts->count; i++)
        if (!elab_stmt(E, env, stmts->items[i])) return false;
    return true;
}

/* Statements of a file: an error ends only its statement, so several can be reported. */
static bool elab_file_stmts(Elab *E, Env *env, const AstStmtList *stmts) {
    bool ok = true;
    for (size_t i = 0; i < stmts->count && !E->budget_reported; i++)
        if (!elab_stmt(E, env, stmts->items[i])) ok = false;
    return ok && !E->budget_reported;
}

static void bind_prim(Elab *E, const char *name, Prim p) {
    MetaValue v;
    memset(&v, 0, sizeof v);
    v.kind = MV_PRIM;
    v.u.prim = p;
    env_assign(E, E->root, name, v, (SrcLoc){0});
}

void elab_bind_root(Elab *E) {
    E->root = env_new(E, NULL);
    bind_prim(E, "tokens_str", PRIM_TOKENS_STR);
    bind_prim(E, "tokens_int", PRIM_TOKENS_INT);
    bind_prim(E, "tokens_float", PRIM_TOKENS_FLOAT);
    bind_prim(E, "tokens_bool", PRIM_TOKENS_BOOL);
    bind_prim(E, "indices", PRIM_INDICES);
    bind_prim(E, "length", PRIM_LENGTH);
    bind_prim(E, "selector_width", PRIM_SELECTOR_WIDTH);
    bind_prim(E, "tokens", PRIM_TOKENS_STR); /* so programs run without the prelude too */
    env_assign(E, E->root, "True", mv_atom(value_bool(true)), (SrcLoc){0});
    env_assign(E, E->root, "False", mv_atom(value_bool(false)), (SrcLoc){0});
}

bool elab_prelude(Elab *E) {
    SourceFile *file = source_from_string(E->arena, "<prelude>", rasp_prelude_source);
    AstProgram prog;
    if (!parse_program(E->arena, file, &prog, E->diags)) return false;
    return elab_file_stmts(E, E->prelude, &prog.stmts);
}

/* The user's top-level s-op variables, in order of first assignment. */
static void collect_result(Elab *E, ElabResult *out) {
    memset(out, 0, sizeof *out);
    out->sops = ARENA_ARRAY(E->arena, ElabBinding, E->top->count ? E->top->count : 1);
    for (size_t i = 0; i < E->top->count; i++) {
        const EnvEntry *en = &E->top->entries[i];
        if (en->value.kind == MV_SOP)
            out->sops[out->count++] = (ElabBinding){en->name, en->value.u.node, en->loc};
    }
    out->last_name = E->last_name;
    out->last_sop = E->last_sop;
}

bool elaborate_program(IrGraph *g, const AstProgram *prog, const ElabOptions *opt,
                       ElabResult *out, DiagList *diags) {
    ElabOptions defaults = {0};
    if (!opt) opt = &defaults;
    size_t errors_before = diags->error_count;
    Elab E;
    memset(&E, 0, sizeof E);
    E.g = g;
    E.arena = g->arena;
    E.diags = diags;
    E.base_dir = opt->base_dir;
    E.max_steps = opt->max_steps ? opt->max_steps : ELAB_DEFAULT_STEPS;
    elab_bind_root(&E);
    /* Builtins are bound; from here assignments to them are reserved. */
    E.prelude = env_new(&E, E.root);
    E.top = env_new(&E, E.prelude);
    E.top->protect_outer = true;
    /* A bad -D stops before the program runs: its value would be missing or wrong. */
    if (elab_overrides_resolve(&E, prog, opt->overrides, opt->n_overrides)) {
        if (!opt->no_prelude) elab_prelude(&E);
        elab_file_stmts(&E, E.top, &prog->stmts);
    }
    collect_result(&E, out);
    const SourceFile *file = prog->file;
    out->source = !file ? NULL : E.n_sites ? elab_overrides_source(&E, file) : file->text;
    return diags->error_count == errors_before;
}

/* The directory part of a path ("." when it has none). */
static const char *dir_of(Arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    return arena_strndup(a, path, (size_t)(slash - path));
}

bool rasp_load_program(IrGraph *g, const char *path, const char *source, const char *display_name,
                       const ElabOptions *opt, ElabResult *out, DiagList *diags) {
    ElabOptions o = {0};
    if (opt) o = *opt;
    memset(out, 0, sizeof *out);
    SourceFile *file;
    if (path) {
        const char *why = "";
        file = source_read_file(g->arena, path, &why);
        if (!file) {
            SrcLoc where = {source_from_string(g->arena, path, ""), 0, 0};
            diag_error(diags, where, "cannot read program: %s", why);
            return false;
        }
        if (!o.base_dir) o.base_dir = dir_of(g->arena, path);
    } else {
        file = source_from_string(g->arena, display_name ? display_name : "<string>", source ? source : "");
    }
    AstProgram prog;
    if (!parse_program(g->arena, file, &prog, diags)) return false;
    return elaborate_program(g, &prog, &o, out, diags);
}

IrNode *elab_find_output(const ElabResult *r, const char *name) {
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->sops[i].name, name) == 0) return r->sops[i].node;
    return NULL;
}
