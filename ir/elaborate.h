/* The elaborator: runs the RASP meta-program (atoms, lists, dicts, functions, for loops, loads
 * are compile-time values) and builds the IR graph of s-ops and selectors it denotes.
 *
 * The prelude (ir/prelude.rasp, embedded in the binary) is elaborated first unless disabled; it
 * binds `tokens = tokens_str` and the library functions of the original REPL. `length` and
 * `selector_width` are native primitives (IR_LENGTH, IR_SELECTOR_WIDTH), not RASP code.
 *
 * Errors (undefined names, type errors, wrong argument counts, bad loads, recursion deeper than
 * a fixed limit, ...) are appended to `diags` with their source locations; elaboration continues
 * past an erroneous top-level statement to report several. */
#ifndef RASPCC_IR_ELABORATE_H
#define RASPCC_IR_ELABORATE_H

#include "ir/ir.h"
#include "parser/ast.h"

/* A top-level variable bound to an s-op after the whole program ran. */
typedef struct ElabBinding {
    const char *name;
    IrNode *node;
    SrcLoc loc; /* of the last assignment to it */
} ElabBinding;

typedef struct ElabResult {
    ElabBinding *sops;  /* user-program top-level s-op variables, in order of first assignment */
    size_t count;
    const char *last_name; /* the target of the last top-level assignment of an s-op, or NULL */
    IrNode *last_sop;
    /* The program text with every override (below) written in place of the value it replaces:
     * elaborated without overrides, it denotes the same program (raspcc stores it in the model,
     * whose self-check and rasprun --check re-elaborate it). Lines keep their numbers. The file's
     * own text when there are no overrides. */
    const char *source;
} ElabResult;

/* An override of a top-level constant (raspcc -D NAME=VALUE). VALUE is the text of a RASP
 * literal: an int, a float (1.5; the lexer has no exponents), a string in double quotes, True,
 * False, a sign before a number, or a list or dict of literals. The first top-level assignment
 * of NAME in the program file (a statement of the file itself: not of a loaded file, a function
 * or a loop body) takes VALUE instead of the expression written for NAME, which is not
 * evaluated; later assignments run as written (`N = 4; N = N + 1;` with N=10 gives N = 11). In
 * `a, b = e1, e2;` only a's expression is replaced. Errors (elaboration then stops before the
 * program runs): a NAME the program file never assigns at top level (located at the file); a
 * first assignment that unpacks one value into several names (located there); a VALUE that is
 * not a literal (located in a source named "-D NAME" whose text is VALUE). Of two overrides of
 * one name the later counts. */
typedef struct ElabOverride {
    const char *name;
    const char *value;
} ElabOverride;

typedef struct ElabOptions {
    bool no_prelude;      /* do not elaborate the prelude first */
    const char *base_dir; /* where `load "file";` looks (the program's directory); NULL = cwd
                             (rasp_load_program: NULL = the directory of `path`) */
    uint64_t max_steps;   /* work budget (expression evaluations + loop iterations); 0 = default */
    const ElabOverride *overrides; /* n_overrides of them, applied to the user program only */
    size_t n_overrides;
} ElabOptions;

bool elaborate_program(IrGraph *g, const AstProgram *prog, const ElabOptions *opt,
                       ElabResult *out, DiagList *diags);

/* Reads, parses and elaborates a program file, or (when path is NULL) the text `source` under
 * the name `display_name`. Everything is allocated in g->arena. `opt` may be NULL. */
bool rasp_load_program(IrGraph *g, const char *path, const char *source, const char *display_name,
                       const ElabOptions *opt, ElabResult *out, DiagList *diags);

/* The s-op bound to top-level variable `name`, or NULL. */
IrNode *elab_find_output(const ElabResult *r, const char *name);

/* The prelude's source text. */
extern const char rasp_prelude_source[];

#endif
