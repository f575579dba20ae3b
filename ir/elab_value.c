/* Meta-values and environments of the elaborator. */
#include "ir/elab_internal.h"

#include <string.h>

MetaValue mv_atom(Value v) {
    MetaValue m;
    memset(&m, 0, sizeof m);
    m.kind = MV_ATOM;
    m.u.atom = v;
    return m;
}

MetaValue mv_node(IrNode *n) {
    MetaValue m;
    memset(&m, 0, sizeof m);
    m.kind = ir_is_selector(n) ? MV_SEL : MV_SOP;
    m.u.node = n;
    return m;
}

MetaValue mv_list(MetaValue *items, size_t count) {
    MetaValue m;
    memset(&m, 0, sizeof m);
    m.kind = MV_LIST;
    m.u.list.items = items;
    m.u.list.count = count;
    return m;
}

const char *mv_kind_name(MvKind k) {
    switch (k) {
    case MV_ATOM: return "atom";
    case MV_LIST: return "list";
    case MV_DICT: return "dict";
    case MV_FUNC: return "function";
    case MV_SOP: return "s-op";
    case MV_SEL: return "selector";
    case MV_PRIM: return "built-in";
    }
    return "?";
}

/* Appends the description of v to buf (bounded; long lists are elided). */
static void describe_into(MetaValue v, char *buf, size_t size, int depth) {
    size_t len = strlen(buf);
    if (len + 8 >= size) return;
    char *p = buf + len;
    size_t room = size - len;
    switch (v.kind) {
    case MV_ATOM: value_format(v.u.atom, p, room); return;
    case MV_SOP:
    case MV_SEL: {
        const IrNode *n = v.u.node;
        const char *name = n->name ? n->name
                           : n->kind == IR_INDICES ? "indices"
                           : n->kind == IR_LENGTH ? "length"
                           : n->kind == IR_TOKENS ? ir_token_type_name(n->u.token_type) : "(unnamed)";
        snprintf(p, room, "%s", name);
        return;
    }
    case MV_FUNC: snprintf(p, room, "function %s", v.u.func->def->u.def.name); return;
    case MV_PRIM: snprintf(p, room, "built-in"); return;
    case MV_LIST:
    case MV_DICT: {
        bool is_list = v.kind == MV_LIST;
        size_t n = is_list ? v.u.list.count : v.u.dict.count;
        snprintf(p, room, is_list ? "[" : "{");
        for (size_t i = 0; i < n; i++) {
            if (depth > 3 || i >= 8 || strlen(buf) + 16 >= size) {
                strncat(buf, "...", size - strlen(buf) - 1);
                break;
            }
            if (i) strncat(buf, ", ", size - strlen(buf) - 1);
            if (is_list) {
                describe_into(v.u.list.items[i], buf, size, depth + 1);
            } else {
                describe_into(mv_atom(v.u.dict.keys[i]), buf, size, depth + 1);
                strncat(buf, ": ", size - strlen(buf) - 1);
                describe_into(v.u.dict.values[i], buf, size, depth + 1);
            }
        }
        strncat(buf, is_list ? "]" : "}", size - strlen(buf) - 1);
        return;
    }
    }
}

const char *mv_describe(Elab *E, MetaValue v) {
    char buf[160] = "";
    if (v.kind != MV_ATOM) snprintf(buf, sizeof buf, "%s ", mv_kind_name(v.kind));
    describe_into(v, buf, sizeof buf, 0);
    return arena_strdup(E->arena, buf);
}

bool mv_truthy(MetaValue v) {
    switch (v.kind) {
    case MV_ATOM: return value_truthy(v.u.atom);
    case MV_LIST: return v.u.list.count > 0;
    case MV_DICT: return v.u.dict.count > 0;
    default: return true; /* objects are truthy in Python */
    }
}

int mv_equal(Elab *E, MetaValue a, MetaValue b, SrcLoc loc) {
    if (!elab_step(E, loc)) return -1; /* shared sublists can make this exponential */
    if (a.kind != b.kind) return 0;
    switch (a.kind) {
    case MV_ATOM: return value_equal(a.u.atom, b.u.atom);
    case MV_LIST:
        if (a.u.list.count != b.u.list.count) return 0;
        for (size_t i = 0; i < a.u.list.count; i++) {
            int r = mv_equal(E, a.u.list.items[i], b.u.list.items[i], loc);
            if (r != 1) return r;
        }
        return 1;
    case MV_DICT:
        if (a.u.dict.count != b.u.dict.count) return 0;
        for (size_t i = 0; i < a.u.dict.count; i++) {
            if (!value_equal(a.u.dict.keys[i], b.u.dict.keys[i])) return 0;
            int r = mv_equal(E, a.u.dict.values[i], b.u.dict.values[i], loc);
            if (r != 1) return r;
        }
        return 1;
    case MV_FUNC: return a.u.func == b.u.func;
    case MV_SOP:
    case MV_SEL: return a.u.node == b.u.node;
    case MV_PRIM: return a.u.prim == b.u.prim;
    }
    return 0;
}

bool mv_all_atoms(const MetaValue *items, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (items[i].kind != MV_ATOM) return false;
    return true;
}

Env *env_new(Elab *E, Env *parent) {
    Env *env = ARENA_NEW(E->arena, Env);
    env->parent = parent;
    return env;
}

static EnvEntry *env_find_local(const Env *env, const char *name) {
    for (size_t i = 0; i < env->count; i++)
        if (strcmp(env->entries[i].name, name) == 0) return &env->entries[i];
    return NULL;
}

const MetaValue *env_lookup(const Env *env, const char *name) {
    for (; env; env = env->parent) {
        EnvEntry *e = env_find_local(env, name);
        if (e) return &e->value;
    }
    return NULL;
}

/* The built-in token/index names are constants in every scope, as in the original. */
static bool is_constant_name(const char *name) {
    static const char *const names[] = {"tokens_str", "tokens_int", "tokens_float", "tokens_bool",
                                        "indices", "True", "False"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

static bool check_reserved(Elab *E, const Env *env, const char *name, SrcLoc loc) {
    if (!env->parent) return true; /* the root scope is where the built-ins are bound */
    bool reserved = is_constant_name(name);
    /* The top scope may not rebind what the prelude or the built-ins define (the original
     * stores its library as constants), except `tokens`, which programs are meant to rebind. */
    if (!reserved && env->protect_outer && strcmp(name, "tokens") != 0 && env->parent &&
        env_lookup(env->parent, name))
        reserved = true;
    if (!reserved && elab_session_reserved(E, name)) reserved = true;
    if (reserved) {
        diag_error(E->diags, loc, "cannot assign to reserved name '%s'", name);
        elab_fault(E, ELAB_FAULT_IGNORED, "Error: Cannot set reserved name: %s", name);
    }
    return !reserved;
}

bool env_assign(Elab *E, Env *env, const char *name, MetaValue v, SrcLoc loc) {
    if (!check_reserved(E, env, name, loc)) return false;
    if (env->export_to && name[0] != '_' && !check_reserved(E, env->export_to, name, loc))
        return false;
    if (v.kind == MV_SOP || v.kind == MV_SEL) ir_set_name(E->g, v.u.node, name);
    for (Env *t = env; t; t = (name[0] != '_') ? t->export_to : NULL) {
        EnvEntry *e = env_find_local(t, name);
        if (e) {
            e->value = v;
            e->loc = loc;
        } else {
            if (t->count == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 8;
                t->entries = arena_grow(E->arena, t->entries, t->count, cap, sizeof(EnvEntry));
                t->cap = cap;
            }
            t->entries[t->count++] = (EnvEntry){arena_strdup(E->arena, name), v, loc};
        }
    }
    return true;
}

void env_set_out(Elab *E, Env *env, MetaValue v) {
    EnvEntry *e = env_find_local(env, "out");
    if (e) {
        e->value = v;
        return;
    }
    if (env->count == env->cap) {
        size_t cap = env->cap ? env->cap * 2 : 8;
        env->entries = arena_grow(E->arena, env->entries, env->count, cap, sizeof(EnvEntry));
        env->cap = cap;
    }
    env->entries[env->count++] = (EnvEntry){"out", v, (SrcLoc){0}};
}

bool elab_step(Elab *E, SrcLoc loc) { return elab_charge(E, 1, loc); }

bool elab_charge(Elab *E, uint64_t units, SrcLoc loc) {
    E->steps += units;
    if (E->steps <= E->max_steps) return true;
    if (!E->budget_reported) {
        diag_error(E->diags, loc,
                   "program does too much work at compile time (more than %llu steps)",
                   (unsigned long long)E->max_steps);
        E->budget_reported = true;
    }
    return false;
}
