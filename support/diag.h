/* Diagnostics: errors and warnings carried as values, each with a source location.
 *
 * Every stage reports problems by appending to a DiagList and returning false; nothing prints
 * on its own. The driver renders the list as `FILE:LINE:COL: error: message`, followed by the
 * source line and a caret under the column (chibicc style). */
#ifndef RASPCC_SUPPORT_DIAG_H
#define RASPCC_SUPPORT_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "support/arena.h"

/* One loaded source text. Owned by whoever loaded it (usually an arena); never mutated. */
typedef struct SourceFile {
    const char *name; /* path as given by the user, or "<prelude>" */
    const char *text; /* NUL-terminated contents */
    size_t len;
} SourceFile;

/* A position in a source file. line and col are 1-based; file NULL means "no location". */
typedef struct SrcLoc {
    const SourceFile *file;
    int line, col;
} SrcLoc;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagSeverity;

typedef struct Diag {
    DiagSeverity severity;
    SrcLoc loc;
    const char *message; /* arena-owned */
} Diag;

/* A growable list of diagnostics, allocated in `arena`. */
typedef struct DiagList {
    Arena *arena;
    Diag *items;
    size_t count, cap;
    size_t error_count;
} DiagList;

void diag_init(DiagList *d, Arena *arena);
void diag_add(DiagList *d, DiagSeverity sev, SrcLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define diag_error(d, loc, ...) diag_add((d), DIAG_ERROR, (loc), __VA_ARGS__)
#define diag_warning(d, loc, ...) diag_add((d), DIAG_WARNING, (loc), __VA_ARGS__)
static inline bool diag_has_errors(const DiagList *d) { return d->error_count > 0; }

/* Renders one diagnostic: "file:line:col: error: msg\n  source line\n  ^\n". */
/* Drops the diagnostics added after the first `count` (a tentative step that was abandoned). */
void diag_truncate(DiagList *d, size_t count);
void diag_render(FILE *out, const Diag *d);
void diag_render_all(FILE *out, const DiagList *d);

/* How a tool renders: in colour as compilers do (the location bold, "error:" bold red,
 * "warning:" bold magenta, "note:" bold cyan, the caret bold green; support/term.h
 * term_use_color decides), and `quiet` (-q) leaves out warnings and the notes that follow them
 * (errors and their notes are always shown). */
typedef struct DiagStyle {
    bool color, quiet;
} DiagStyle;
void diag_render_styled(FILE *out, const Diag *d, DiagStyle style);
/* Items [from, d->count) of the list. */
void diag_render_from(FILE *out, const DiagList *d, size_t from, DiagStyle style);
/* "file:line:col" (or "<unknown>") into buf. */
void srcloc_format(SrcLoc loc, char *buf, size_t size);

/* Reads a whole file into the arena as a SourceFile. Returns NULL and sets *why on failure. */
SourceFile *source_read_file(Arena *a, const char *path, const char **why);
/* The same from an open stream (standard input for a program given as "-"), named `name`. */
SourceFile *source_read_stream(Arena *a, FILE *fp, const char *name, const char **why);
SourceFile *source_from_string(Arena *a, const char *name, const char *text);

#endif
