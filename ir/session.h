/* An interactive elaboration session: the elaborator run one statement at a time in scopes
 * that persist, with what the original RASP REPL adds to the language (rasp's REPL uses it):
 *
 *   - labels: every s-op and selector carries the name the original gives it (ir/meta.h);
 *   - `out`: each expression evaluated in a console or file scope is bound to `out` there;
 *   - the original's reserved names (out, range, zip, len, get, tokens_asis besides the
 *     built-ins and the library) and its `tokens_asis`;
 *   - a test of every s-op or selector as it is made, on the running example (or, while the
 *     callee of a one-argument call is evaluated, on that argument, as the original does), so
 *     that an s-op that fails on the example fails its statement;
 *   - faults: a failed statement says how the original reports it, with its wording.
 *
 * Scopes: the prelude's (the original's library, the "base" environment every file starts
 * from), the console's (nested in it), and file scopes made for `load` (nested in the base,
 * writing their public names into the loader's scope). Statements in a session never load
 * files themselves (the REPL reads loaded files line by line as the original does), except
 * inside loops and functions, where the elaborator's own load runs. */
#ifndef RASPCC_IR_SESSION_H
#define RASPCC_IR_SESSION_H

#include "ir/elaborate.h"
#include "ir/meta.h"

typedef struct ElabSession ElabSession;

/* How the original reports a failed statement. */
typedef enum ElabFaultKind {
    ELAB_FAULT_NONE,
    ELAB_FAULT_IGNORED,         /* "\t\t!!ignoring input:\n\t TEXT": names, RASP type/value errors */
    ELAB_FAULT_EXCEPTION,       /* "something went wrong: TEXT": a Python exception */
    ELAB_FAULT_NOT_IMPLEMENTED, /* "not implemented this command yet! ignoring" */
} ElabFaultKind;

typedef struct ElabFault {
    ElabFaultKind kind;
    const char *text; /* the original's message (NULL for NOT_IMPLEMENTED) */
} ElabFault;

/* A value a statement names, which the original prints: an assignment's targets, a def's
 * function, an expression statement's value (named by the variable it reads, else "out"). */
typedef struct ElabNamed {
    const char *name;
    MetaValue value;
} ElabNamed;

typedef struct ElabOutcome {
    bool ok;
    ElabNamed *named; /* in order; several for `a, b = ...` */
    size_t n_named;
    /* An expression statement that applies an s-op or selector to an input (`f("abc");`):
     * the original prints the result rather than a named value. */
    bool applied;
    IrNode *applied_node;
    MetaValue applied_input;
    ElabFault fault; /* when !ok; kind NONE when the elaborator's own message (diags) says it */
} ElabOutcome;

/* Starts a session: binds the built-ins and elaborates the prelude (labels on). Allocations go
 * in g->arena; diagnostics (the elaborator's own wording) are appended to diags. */
ElabSession *elab_session_new(IrGraph *g, DiagList *diags, const char *base_dir);

Env *elab_session_console(ElabSession *s);
Env *elab_session_base(ElabSession *s);
/* A scope for a loaded file called `name`: nested in the base, exporting to `loader`. */
Env *elab_session_file_scope(ElabSession *s, Env *loader, const char *name);

/* The running example the session tests new s-ops and selectors on: a string or a list of
 * atoms (anything else makes every test fail, as it would in the original). */
void elab_session_set_example(ElabSession *s, MetaValue example);

/* Runs one statement in `scope`. Never a `load` (the REPL does those). */
void elab_session_run(ElabSession *s, Env *scope, const AstStmt *stmt, ElabOutcome *out);
/* Evaluates one expression in `scope` (`set example EXPR`); new s-ops are tested on `example`
 * when given (draw's input), else on the running example. */
bool elab_session_eval(ElabSession *s, Env *scope, const AstExpr *e, const MetaValue *example, MetaValue *out,
                       ElabFault *fault);

/* Evaluates an s-op (result: Value[n]) or selector (bool[n*n], row = query) on an input the way
 * the original does: the input converted by Python's str/int/float/bool, and a failure reported
 * as the original would (its kind and text in *fault). */
bool elab_session_apply(ElabSession *s, const IrNode *node, MetaValue input, Arena *scratch,
                        void **result, size_t *n, ElabFault *fault);

/* What `name` holds in scope (through its enclosing scopes), or NULL. */
const MetaValue *elab_session_lookup(Env *scope, const char *name);

/* The graph every value of the session lives in. */
IrGraph *elab_session_graph(ElabSession *s);

#endif
