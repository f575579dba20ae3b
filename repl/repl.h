/* The interactive RASP REPL, a drop-in for the original interpreter's (Weiss et al. 2021):
 * the same prompts, commands and printouts, on a session of the elaborator (ir/session.h).
 *
 *   >> statement            runs it; assignments, expressions and defs print their values,
 *                           s-ops and selectors with an example on the running example
 *   .. (more lines)         until the text is a whole statement (repl/syntax.h)
 *   set [s-op|selector] example EXPR    show [s-op|selector] example
 *   [s-op|selector] examples on|off     full seq display on|off
 *   load "FILE";            runs FILE.rasp (relative to the working directory) line by line,
 *                           printing the last value of each public name it sets
 *   draw(SOP [, INPUT]);    writes the s-op's computation as Graphviz dot (see repl/draw.h)
 *   compile NAME [raspcc options] -o FILE    compiles s-op NAME of the session (repl/compile.h)
 *   exit | quit             ends the session (so does the end of the input)
 *
 * Errors are reported as the original reports them and the session goes on. */
#ifndef RASPCC_REPL_REPL_H
#define RASPCC_REPL_REPL_H

#include <stdio.h>

#include "ir/session.h"

/* Where lines come from: a terminal (line editing and history) or a stream (a pipe, a file). */
typedef struct LineSource LineSource;

/* One result waiting to be printed: loads print their results when the file is done. */
typedef enum ReplEntryKind {
    ENTRY_NAMED,   /* a named value (printed as the original's print_named_val) */
    ENTRY_EXAMPLE, /* `show example` */
    ENTRY_APPLIED, /* an s-op or selector applied to an input */
    ENTRY_TEXT,    /* an error message, printed as it is */
} ReplEntryKind;

typedef struct ReplEntry {
    ReplEntryKind kind;
    bool print;           /* the original keeps some results without printing them */
    const char *name;     /* ENTRY_NAMED */
    MetaValue value;      /* ENTRY_NAMED; ENTRY_APPLIED: the input */
    IrNode *node;         /* ENTRY_APPLIED */
    int subset;           /* ENTRY_EXAMPLE: SynSubset */
    const char *text;     /* ENTRY_TEXT */
} ReplEntry;

typedef struct Repl {
    Arena arena;          /* the session's graph and values */
    IrGraph graph;
    DiagList diags;
    ElabSession *session;
    FILE *out;
    MetaValue seq_example, sel_example; /* the running examples ("hello") */
    bool show_seq_examples, show_sel_examples;
    bool verbose;         /* full seq display */
    bool stop;            /* exit was typed */
    /* results kept while files load, printed when a load finishes (repl_load.c) */
    ReplEntry *pending;
    size_t n_pending, cap_pending;
    /* The console statements that ran without error, one a line: the program `compile` stores. */
    char *transcript;
    size_t transcript_len, transcript_cap;
} Repl;

void repl_init(Repl *r, FILE *out);
void repl_free(Repl *r);
/* Runs the session on `src` until it ends (exit, or the end of the input). */
void repl_run(Repl *r, LineSource *src);

/* ---- repl.c, for the files of the REPL ---- */
/* Reads and runs statements from src in `scope` until the input ends or exit; in a file
 * (`store`), results go to r->pending instead of being printed. */
void repl_run_lines(Repl *r, LineSource *src, Env *scope, bool store);
/* Prints or keeps one result. */
void repl_emit(Repl *r, ReplEntry e, bool store);
/* Appends a console statement to the transcript. */
void repl_note_statement(Repl *r, const char *text, size_t len);
/* The message of the last diagnostic (for errors the original has no words for). */
const char *repl_last_diag(const Repl *r);

/* ---- repl_load.c ---- */
/* load "NAME";  run from `scope`. False + message in *err when NAME.rasp cannot be read. */
bool repl_load(Repl *r, const char *name, Env *scope, const char **err);

/* ---- show.c: the original's printouts ---- */
/* Prints one result; false + the message of the error raised while printing (*fault). */
bool show_entry(Repl *r, const ReplEntry *e, ElabFault *fault);

#endif
