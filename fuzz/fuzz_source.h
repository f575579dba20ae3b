/* Shared by the fuzz targets that read programs: the fuzzer's bytes as a NUL-terminated source
 * file (embedded NULs stay part of it) with an arena and a diagnostics list, and parsing plus
 * elaboration without disk access and with a work budget, so no input can hang a target. */
#ifndef RASPCC_FUZZ_FUZZ_SOURCE_H
#define RASPCC_FUZZ_FUZZ_SOURCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/elaborate.h"
#include "parser/parser.h"

typedef struct FuzzSession {
    Arena arena;
    DiagList diags;
    SourceFile file;
    char *text;
} FuzzSession;

static inline bool fuzz_begin(FuzzSession *s, const uint8_t *data, size_t size) {
    s->text = malloc(size + 1);
    if (!s->text) return false;
    memcpy(s->text, data, size);
    s->text[size] = '\0';
    s->file = (SourceFile){"<fuzz>", s->text, size};
    arena_init(&s->arena);
    diag_init(&s->diags, &s->arena);
    return true;
}

static inline void fuzz_end(FuzzSession *s) {
    arena_free(&s->arena);
    free(s->text);
}

/* Parses and elaborates the source into g; `load` finds no files. */
static inline bool fuzz_elaborate(FuzzSession *s, IrGraph *g, ElabResult *r) {
    AstProgram prog;
    ir_graph_init(g, &s->arena);
    if (!parse_program(&s->arena, &s->file, &prog, &s->diags)) return false;
    ElabOptions opt = {0};
    opt.base_dir = "/nonexistent";
    opt.max_steps = 20000;
    return elaborate_program(g, &prog, &opt, r, &s->diags);
}

#endif
