#include "viz/trace.h"

#include <stdlib.h>
#include <string.h>

bool viz_trace_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *arena, VizTrace *t, char *err,
                   size_t errsize) {
    memset(t, 0, sizeof *t);
    size_t *ids = ARENA_ARRAY(arena, size_t, n ? n : 1);
    if (!model_tokenize(m, input, n, ids, ws->token_values, err, errsize)) return false;
    size_t D = m->d_model, rows = n + 1, stage = rows * D;
    t->n = n;
    t->n_stages = m->n_layers + 1;
    t->d = D;
    t->X = calloc(t->n_stages * stage + 1, sizeof(double));
    double *X = calloc(stage + 1, sizeof(double));
    if (!t->X || !X) abort();
    model_forward(m, ids, n, 0, 0, X, ws);
    memcpy(t->X, X, stage * sizeof(double));
    for (size_t l = 0; l < m->n_layers; l++) {
        model_forward(m, ids, n, l, l + 1, X, ws);
        memcpy(t->X + (l + 1) * stage, X, stage * sizeof(double));
    }
    free(X);
    /* the answer, checks included, exactly as rasprun gives it */
    t->ok = model_run(m, ws, input, n, arena, &t->out, t->err, sizeof t->err);
    return true;
}

void viz_trace_free(VizTrace *t) {
    free(t->X);
    t->X = NULL;
}

/* Whether block b is zero at every row of stage s / differs between stages s - 1 and s. */
static bool block_zero(const VizTrace *t, const ResidualBlock *b, size_t s) {
    for (size_t r = 0; r <= t->n; r++)
        for (size_t k = 0; k < b->count; k++)
            if (viz_trace_row(t, s, r)[b->dim + k] != 0.0) return false;
    return true;
}

static bool block_changed(const VizTrace *t, const ResidualBlock *b, size_t s) {
    if (s == 0) return !block_zero(t, b, 0);
    for (size_t r = 0; r <= t->n; r++)
        for (size_t k = 0; k < b->count; k++)
            if (viz_trace_row(t, s, r)[b->dim + k] != viz_trace_row(t, s - 1, r)[b->dim + k]) return true;
    return false;
}

enum { CELL = 48, NAME_MAX_WIDTH = 40 };

static void print_stage_header(FILE *out, const Model *m, size_t s) {
    if (s == 0) {
        fputs("embedding\n", out);
        return;
    }
    const ModelLayer *ly = &m->layers[s - 1];
    fprintf(out, "layer %zu (attention: %zu head%s; MLP: %zu hidden unit%s%s)\n", s - 1, ly->n_heads,
            ly->n_heads == 1 ? "" : "s", ly->mlp.w1.cols, ly->mlp.w1.cols == 1 ? "" : "s", ly->mlp.gated ? ", gated" : "");
}

void viz_trace_print(FILE *out, const Model *m, const ResidualLayout *L, const VizTrace *t, const Value *input) {
    size_t cols = t->n + 1;
    /* column widths over every stage, so the sections line up */
    size_t *width = calloc(cols, sizeof *width), name_width = 4;
    char cell[CELL];
    if (!width) abort();
    width[0] = 3; /* "BOS" */
    for (size_t c = 1; c < cols; c++) width[c] = (size_t)snprintf(cell, sizeof cell, "%zu", c - 1);
    for (size_t b = 0; b < L->n_blocks; b++) {
        size_t w = strlen(L->blocks[b].name);
        name_width = w > name_width ? w : name_width;
        for (size_t s = 0; s < t->n_stages; s++)
            for (size_t c = 0; c < cols; c++) {
                residual_block_text(&L->blocks[b], viz_trace_row(t, s, c), cell, sizeof cell);
                size_t len = strlen(cell);
                width[c] = len > width[c] ? len : width[c];
            }
    }
    if (name_width > NAME_MAX_WIDTH) name_width = NAME_MAX_WIDTH;
    fputs("input: [", out);
    for (size_t i = 0; i < t->n; i++) {
        if (i) fputs(", ", out);
        value_print_repl(out, input[i]);
    }
    fputs("]\n", out);
    for (size_t s = 0; s < t->n_stages; s++) {
        print_stage_header(out, m, s);
        fprintf(out, "    %-*s", (int)name_width, "s-op");
        for (size_t c = 0; c < cols; c++) {
            if (c == 0) fprintf(out, "  %*s", (int)width[0], "BOS");
            else fprintf(out, "  %*zu", (int)width[c], c - 1);
        }
        fputc('\n', out);
        for (size_t b = 0; b < L->n_blocks; b++) {
            const ResidualBlock *B = &L->blocks[b];
            if (block_zero(t, B, s)) continue;
            fprintf(out, "  %c %-*.*s", block_changed(t, B, s) ? '+' : ' ', (int)name_width, (int)name_width, B->name);
            for (size_t c = 0; c < cols; c++) {
                residual_block_text(B, viz_trace_row(t, s, c), cell, sizeof cell);
                fprintf(out, "  %*s", (int)width[c], cell);
            }
            fputc('\n', out);
        }
    }
    if (t->ok) {
        fputs("output: [", out);
        for (size_t i = 0; i < t->n; i++) {
            if (i) fputs(", ", out);
            value_print_repl(out, t->out[i]);
        }
        fputs("]\n", out);
    } else {
        fprintf(out, "error: %s\n", t->err);
    }
    free(width);
}
