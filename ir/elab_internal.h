/* Private to the elaborator (ir/elaborate.c, elab_expr.c, elab_builtin.c, elab_value.c).
 *
 * The elaborator is an interpreter of the RASP meta-language whose values are MetaValues:
 * atoms, lists, dicts and functions are ordinary compile-time data; s-ops and selectors are IR
 * nodes. Every evaluation function returns false after appending a located diagnostic, and the
 * caller unwinds; the statement loop of the program decides where to resume. */
#ifndef RASPCC_IR_ELAB_INTERNAL_H
#define RASPCC_IR_ELAB_INTERNAL_H

#include "ir/elaborate.h"

/* Limits that keep hostile programs from hanging or exhausting memory. */
enum {
    ELAB_MAX_CALL_DEPTH = 200,     /* nested function calls (the original hits Python's limit) */
    ELAB_MAX_NESTING = 4000,       /* nested expression evaluations, calls included */
    ELAB_MAX_LIST = 1000000,       /* elements of one list, range or dict */
    ELAB_MAX_STRING = 1 << 20,     /* bytes of one string built by + */
    ELAB_MAX_APPLY = 1024,         /* length of an input an s-op is applied to in the program */
    ELAB_DEFAULT_STEPS = 10000000, /* units of work (expressions, iterations, elements built) */
};

typedef enum MvKind {
    MV_ATOM,  /* u.atom */
    MV_LIST,  /* u.list (also the tuple a function with several return values yields) */
    MV_DICT,  /* u.dict: atom keys in insertion order */
    MV_FUNC,  /* u.func: a closure */
    MV_SOP,   /* u.node, not a selector */
    MV_SEL,   /* u.node, a selector */
    MV_PRIM,  /* u.prim: a built-in name, materialised when looked up */
} MvKind;

/* The built-in names of the root environment. */
typedef enum Prim {
    PRIM_TOKENS_STR, PRIM_TOKENS_INT, PRIM_TOKENS_FLOAT, PRIM_TOKENS_BOOL,
    PRIM_INDICES, PRIM_LENGTH,
    PRIM_SELECTOR_WIDTH, /* the only native function */
} Prim;

typedef struct MetaValue MetaValue;
typedef struct Closure Closure;
typedef struct Env Env;

struct MetaValue {
    MvKind kind;
    union {
        Value atom;
        struct { MetaValue *items; size_t count; } list;
        struct { Value *keys; MetaValue *values; size_t count; } dict;
        const Closure *func;
        IrNode *node;
        Prim prim;
    } u;
};

/* A `def`: its AST and the environment it was defined in (lexical scoping). */
struct Closure {
    const AstStmt *def; /* AST_STMT_DEF */
    Env *env;
};

typedef struct EnvEntry {
    const char *name;
    MetaValue value;
    SrcLoc loc; /* of the last assignment */
} EnvEntry;

/* A scope. Lookups walk `parent`; assignments write this scope. A scope created by `load`
 * also writes every public name (not starting with '_') into `export_to`, as the original
 * REPL's file environments do. */
struct Env {
    Env *parent;
    Env *export_to;
    bool protect_outer; /* the program's top scope: prelude and built-in names are reserved */
    EnvEntry *entries;  /* in order of first assignment */
    size_t count, cap;
};

/* A file being loaded, for cycle detection. */
typedef struct LoadFrame {
    const char *path;
    struct LoadFrame *outer;
} LoadFrame;

/* An override (ElabOverride) resolved against the program: the value it replaces. */
typedef struct ElabSite {
    const AstStmt *stmt;  /* the first top-level assignment of the name in the program file */
    size_t index;         /* which of its values: the name's position among the targets */
    const AstExpr *value; /* the literal that replaces it (in its own "-D NAME" source) */
    const char *text;     /* that literal's text, as the rewritten program shows it */
} ElabSite;

typedef struct Elab {
    IrGraph *g;
    Arena *arena;      /* = g->arena */
    DiagList *diags;
    const char *base_dir;
    Env *root;         /* built-in names */
    Env *prelude;      /* the prelude's definitions (parent: root) */
    Env *top;          /* the user program's scope (parent: prelude) */
    LoadFrame *loading;
    int call_depth, nesting;
    uint64_t steps, max_steps;
    bool budget_reported;
    /* The last top-level assignment of an s-op (ElabResult.last_*). */
    const char *last_name;
    IrNode *last_sop;
    const ElabSite *sites; /* the resolved overrides */
    size_t n_sites;
} Elab;

/* ---- elab_value.c: meta-values and environments ---- */
MetaValue mv_atom(Value v);
MetaValue mv_node(IrNode *n); /* MV_SOP or MV_SEL by kind */
MetaValue mv_list(MetaValue *items, size_t count);
const char *mv_kind_name(MvKind k); /* "atom", "list", "s-op", ... as in the original */
/* Short source-like description for messages ("[1, 2]", "\"a\"", "s-op x"). */
const char *mv_describe(Elab *E, MetaValue v);
bool mv_truthy(MetaValue v);
/* Python == between meta-values (atoms, and lists/dicts element-wise; nodes by identity):
 * 1 equal, 0 not, -1 when the work budget ran out (diagnostic added). */
int mv_equal(Elab *E, MetaValue a, MetaValue b, SrcLoc loc);
bool mv_all_atoms(const MetaValue *items, size_t n);

Env *env_new(Elab *E, Env *parent);
/* Looks a name up through the scope chain; NULL when unbound. */
const MetaValue *env_lookup(const Env *env, const char *name);
/* Binds name in env (and its export target); false + diagnostic for a reserved name. */
bool env_assign(Elab *E, Env *env, const char *name, MetaValue v, SrcLoc loc);

/* Counts one unit of work (or `units`, for work proportional to a size); false + diagnostic
 * once the program's budget is spent. */
bool elab_step(Elab *E, SrcLoc loc);
bool elab_charge(Elab *E, uint64_t units, SrcLoc loc);

/* ---- elab_expr.c ---- */
bool elab_expr(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
/* An atom or s-op as an s-op (atoms become IR_CONST); false + diagnostic otherwise. */
bool elab_as_sop(Elab *E, MetaValue v, SrcLoc loc, const char *what, IrNode **out);
/* The elements a for loop or comprehension visits: a list's items or a dict's keys. */
bool elab_iteration_items(Elab *E, MetaValue it, SrcLoc loc, const char *what, MetaValue **items,
                          size_t *n);

/* ---- elab_builtin.c: the language's built-in forms ---- */
bool elab_select(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_aggregate(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_range(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_zip(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_len(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_index(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
bool elab_in(Elab *E, MetaValue item, MetaValue container, SrcLoc loc, MetaValue *out);
/* callee(args): a closure call, selector_width, or applying an s-op/selector to an input. */
bool elab_call(Elab *E, Env *env, const AstExpr *e, MetaValue *out);
/* full_s = select(1, 1, ==), built through the IR. */
IrNode *elab_full_selector(Elab *E, SrcLoc loc);

/* ---- elab_override.c: -D overrides of top-level constants ---- */
/* Parses each override's literal and finds the value it replaces among the top-level
 * statements of prog (E->sites); false after reporting every bad override. */
bool elab_overrides_resolve(Elab *E, const AstProgram *prog, const ElabOverride *ov, size_t n);
/* The literal that replaces value `index` of statement s, or NULL when none does. */
const AstExpr *elab_override_for(const Elab *E, const AstStmt *s, size_t index);
/* The text of `file` with every resolved override written in (ElabResult.source). */
const char *elab_overrides_source(Elab *E, const SourceFile *file);

/* ---- elaborate.c ---- */
bool elab_stmts(Elab *E, Env *env, const AstStmtList *stmts);
/* Binds `names` to v: one name takes v whole; several unpack a list of the same length. */
bool elab_bind_names(Elab *E, Env *env, const AstNameList *names, MetaValue v, SrcLoc loc);

#endif
