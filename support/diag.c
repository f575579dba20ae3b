#include "support/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void diag_init(DiagList *d, Arena *arena) {
    memset(d, 0, sizeof *d);
    d->arena = arena;
}

void diag_add(DiagList *d, DiagSeverity sev, SrcLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *msg = arena_alloc(d->arena, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        d->items = arena_grow(d->arena, d->items, d->count, cap, sizeof(Diag));
        d->cap = cap;
    }
    d->items[d->count++] = (Diag){sev, loc, msg};
    if (sev == DIAG_ERROR) d->error_count++;
}

void srcloc_format(SrcLoc loc, char *buf, size_t size) {
    if (!loc.file) snprintf(buf, size, "<unknown>");
    else if (loc.line <= 0) snprintf(buf, size, "%s", loc.file->name);
    else snprintf(buf, size, "%s:%d:%d", loc.file->name, loc.line, loc.col);
}

/* Finds the start and length of 1-based line `line` in the file. */
static bool find_line(const SourceFile *f, int line, const char **start, size_t *len) {
    const char *p = f->text, *end = f->text + f->len;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *start = p;
    *len = (size_t)((nl ? nl : end) - p);
    return true;
}

/* ANSI SGR sequences, as GCC and Clang colour their diagnostics. */
#define SGR_BOLD "\033[1m"
#define SGR_RESET "\033[m"
static const char *const sev_name[] = {"error", "warning", "note"};
static const char *const sev_color[] = {"\033[1;31m", "\033[1;35m", "\033[1;36m"};

void diag_truncate(DiagList *d, size_t count) {
    for (size_t i = count; i < d->count; i++)
        if (d->items[i].severity == DIAG_ERROR) d->error_count--;
    if (count < d->count) d->count = count;
}

void diag_render_styled(FILE *out, const Diag *d, DiagStyle style) {
    char where[512];
    srcloc_format(d->loc, where, sizeof where);
    if (style.color)
        fprintf(out, SGR_BOLD "%s:" SGR_RESET " %s%s:" SGR_RESET " %s\n", where, sev_color[d->severity],
                sev_name[d->severity], d->message);
    else
        fprintf(out, "%s: %s: %s\n", where, sev_name[d->severity], d->message);
    const char *line;
    size_t len;
    if (!d->loc.file || d->loc.line <= 0 || !find_line(d->loc.file, d->loc.line, &line, &len))
        return;
    if (len > 200) len = 200;
    fprintf(out, "  %.*s\n  ", (int)len, line);
    for (int c = 1; c < d->loc.col && (size_t)c <= len; c++) fputc(line[c - 1] == '\t' ? '\t' : ' ', out);
    fputs(style.color ? "\033[1;32m^" SGR_RESET "\n" : "^\n", out);
}

void diag_render(FILE *out, const Diag *d) { diag_render_styled(out, d, (DiagStyle){0}); }

void diag_render_from(FILE *out, const DiagList *d, size_t from, DiagStyle style) {
    bool shown = true; /* whether the diagnostic a note belongs to was shown */
    for (size_t i = from; i < d->count; i++) {
        const Diag *g = &d->items[i];
        if (g->severity != DIAG_NOTE) shown = !style.quiet || g->severity == DIAG_ERROR;
        if (shown) diag_render_styled(out, g, style);
    }
}

void diag_render_all(FILE *out, const DiagList *d) { diag_render_from(out, d, 0, (DiagStyle){0}); }

SourceFile *source_from_string(Arena *a, const char *name, const char *text) {
    SourceFile *f = ARENA_NEW(a, SourceFile);
    f->name = arena_strdup(a, name);
    f->len = strlen(text);
    f->text = arena_strndup(a, text, f->len);
    return f;
}

SourceFile *source_read_file(Arena *a, const char *path, const char **why) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        *why = strerror(errno);
        return NULL;
    }
    SourceFile *f = source_read_stream(a, fp, path, why);
    fclose(fp);
    return f;
}

SourceFile *source_read_stream(Arena *a, FILE *fp, const char *name, const char **why) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) abort();
    for (;;) {
        if (len == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) abort();
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    if (ferror(fp)) {
        free(buf);
        *why = "read error";
        return NULL;
    }
    if (memchr(buf, '\0', len)) {
        free(buf);
        *why = "file contains a NUL byte (not a text file)";
        return NULL;
    }
    SourceFile *f = ARENA_NEW(a, SourceFile);
    f->name = arena_strdup(a, name);
    f->text = arena_strndup(a, buf, len);
    f->len = len;
    free(buf);
    return f;
}
