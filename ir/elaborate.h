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
} ElabResult;

typedef struct ElabOptions {
    bool no_prelude;      /* do not elaborate the prelude first */
    const char *base_dir; /* where `load "file";` looks (the program's directory); NULL = cwd
                             (rasp_load_program: NULL = the directory of `path`) */
    uint64_t max_steps;   /* work budget (expression evaluations + loop iterations); 0 = default */
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
