/* Private to the elaborator (ir/elaborate.c, elab_expr.c, elab_builtin.c, elab_value.c).
 *
 * The elaborator is an interpreter of the RASP meta-language whose values are MetaValues:
 * atoms, lists, dicts and functions are ordinary compile-time data; s-ops and selectors are IR
 * nodes. Every evaluation function returns false after appending a located diagnostic, and the
 * caller unwinds; the statement loop of the program decides where to resume. */
#ifndef RASPCC_IR_ELAB_INTERNAL_H
#define RASPCC_IR_ELAB_INTERNAL_H

#include "ir/elaborate.h"
#include "ir/meta.h"
#include "ir/session.h"

/* Limits that keep hostile programs from hanging or exhausting memory. */
enum {
    ELAB_MAX_CALL_DEPTH = 200,     /* nested function calls (the original hits Python's limit) */
    ELAB_MAX_NESTING = 4000,       /* nested expression evaluations, calls included */
    ELAB_MAX_LIST = 1000000,       /* elements of one list, range or dict */
    ELAB_MAX_STRING = 1 << 20,     /* bytes of one string built by + */
    ELAB_MAX_APPLY = 1024,         /* length of an input an s-op is applied to in the program */
    ELAB_DEFAULT_STEPS = 10000000, /* units of work (expressions, iterations, elements built) */
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
    /* Sessions (ir/session.h) only; NULL / unused in batch elaboration. */
    ElabSession *session;
    ElabFault fault;               /* the first fault of the statement running */
    const AstExpr *last_apply;     /* the last call expression that applied an s-op/selector */
    IrNode *applied_node;          /* ... what it applied, to what */
    MetaValue applied_input;
} Elab;

/* ---- session.c: what sessions add (all are no-ops without E->session) ---- */
/* Records how the original reports the error being raised (kept: the first of a statement). */
void elab_fault(Elab *E, ElabFaultKind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Gives v (an s-op or selector just made) a label: `name`, or the original's placeholder when
 * the name is longer than 30 characters. */
void elab_label(Elab *E, MetaValue *v, const char *name);
/* Renames the object v holds (the original's setname). */
void elab_rename(Elab *E, MetaValue v, const char *name);
/* The name the original uses for v inside a composed name: an s-op's label, an atom's str(). */
const char *elab_quickname(Elab *E, MetaValue v);
/* The label of a built-in (one object per session, as in the original). */
MvLabel *elab_prim_label(Elab *E, Prim p);
/* After e evaluated to *v in env: the original's test of a new s-op or selector on the running
 * example (false + fault when it fails there), then `out` = *v in console and file scopes. */
bool elab_session_after_expr(Elab *E, Env *env, const AstExpr *e, MetaValue *v);
/* The example new s-ops are tested on while a one-argument call's callee is evaluated. */
const MetaValue *elab_backup_example(Elab *E, const MetaValue *arg);
/* Applies an s-op or selector to an input the original's way (ElabSession's apply). */
bool elab_session_apply_value(Elab *E, IrNode *node, MetaValue input, MetaValue *out);
/* Reserved in sessions besides the built-ins and the library (out, range, zip, len, get). */
bool elab_session_reserved(const Elab *E, const char *name);

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
/* Binds `out` in env, which no program may assign (sessions). */
void env_set_out(Elab *E, Env *env, MetaValue v);

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
bool elab_stmt(Elab *E, Env *env, const AstStmt *s);
/* Binds the built-in names in a new root scope (E->root). */
void elab_bind_root(Elab *E);
/* Elaborates the prelude into E->prelude. */
bool elab_prelude(Elab *E);
bool elab_stmts(Elab *E, Env *env, const AstStmtList *stmts);
/* Binds `names` to v: one name takes v whole; several unpack a list of the same length. */
bool elab_bind_names(Elab *E, Env *env, const AstNameList *names, MetaValue v, SrcLoc loc);

#endif
