/* The original REPL's view of what was typed: its ANTLR grammar (RASP.g4), run as the original
 * runs it on the text gathered so far, to decide whether the input is a statement, needs more
 * lines, or is a syntax error, and with which message.
 *
 * The original parses the whole text with `r : statement+? EOF` and an error listener that
 * treats any error at the end of the text, and any "missing ';'", as "not finished: read another
 * line"; other errors are printed as ANTLR words them ("mismatched input 'if' expecting {...}",
 * "extraneous input ...", "missing ID at 'in'", "no viable alternative at input ...",
 * "token recognition error at: ..."). This module recognises that grammar with ANTLR's error
 * strategy (sync before decisions with single-token deletion, single-token deletion and
 * insertion at a mismatched token, prediction failures as "no viable alternative") and its
 * lexer (longest match, keywords first), so it answers as the original does. It builds no tree:
 * the statement is then parsed by the project's parser (parser/parser.h). */
#ifndef RASPCC_REPL_SYNTAX_H
#define RASPCC_REPL_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>

#include "support/arena.h"

typedef enum SynStatus {
    SYN_COMPLETE,   /* one or more whole statements */
    SYN_INCOMPLETE, /* the original would read another line */
    SYN_ERROR,      /* a syntax error: `message` is ANTLR's */
} SynStatus;

/* What the first statement is. */
typedef enum SynKind {
    SYN_RASP,            /* an expression, assignment, def, for or load: parse it */
    SYN_DRAW,            /* draw(expr [, expr]); */
    SYN_SET_EXAMPLE,     /* set [s-op|selector] example EXPR */
    SYN_SHOW_EXAMPLE,    /* show [s-op|selector] example */
    SYN_TOGGLE_EXAMPLES, /* [s-op|selector] examples on|off */
    SYN_TOGGLE_VERBOSE,  /* full seq display on|off */
    SYN_EXIT,            /* exit, exit(), quit, quit() */
    SYN_COMMENT,         /* a comment alone */
} SynKind;

typedef enum SynSubset { SYN_BOTH, SYN_SOP, SYN_SELECTOR } SynSubset;

/* A byte range [start, end) of the text. */
typedef struct SynSpan {
    size_t start, end;
} SynSpan;

typedef struct SynResult {
    SynStatus status;
    const char *message;  /* SYN_ERROR */
    size_t n_statements;  /* SYN_COMPLETE: the original runs the text only when it is 1 */
    SynKind kind;         /* of the first statement */
    SynSpan stmt;         /* the first statement, without its trailing comment */
    SynSubset subset;     /* set/show example, examples on|off */
    bool on;              /* examples / full seq display */
    SynSpan expr[2];      /* set example: expr[0]; draw: expr[0] and, if n_exprs == 2, expr[1] */
    size_t n_exprs;
    const char *load_path; /* SYN_RASP that is `load "PATH";`: PATH, else NULL */
} SynResult;

/* Checks `text` (the lines read so far) as the original would. Allocates in `a`. */
SynResult syn_check(Arena *a, const char *text);

#endif
