/* The residual stream of one input through a compiled model, stage by stage (rasprun --trace):
 * after the embedding and after each layer (its attention and then its MLP), decoded by s-op
 * with viz/residual.h, with the model's answer.
 *
 * The text form: one section per stage, a row per s-op block that is not zero everywhere at
 * that stage, a column per position (BOS first, then 0..n-1) holding what the block holds there
 * (residual_block_text). A row marked '+' was written by that stage (some entry changed).
 * The residual stream is additive, so a block once written stays. The last line is the output
 * as rasprun prints it, or "error: ..." (the model's checks included). */
#ifndef RASPCC_VIZ_TRACE_H
#define RASPCC_VIZ_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/forward.h"
#include "viz/residual.h"

typedef struct VizTrace {
    size_t n;          /* input length: n + 1 rows a stage, BOS first */
    size_t n_stages;   /* 1 + the model's layers: stage 0 is the embedding, stage l + 1 layer l */
    size_t d;          /* residual width */
    double *X;         /* n_stages x (n + 1) x d, malloc'ed */
    bool ok;           /* the model answered (model_run): out; else err */
    Value *out;        /* n atoms, in the arena given to viz_trace_run */
    char err[1024];
} VizTrace;

/* Runs input[0..n) through m. False (with the reason in err) when the model cannot take the
 * input (too long, a token outside the vocabulary); a failing check or readout is a trace with
 * ok false. */
bool viz_trace_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *arena, VizTrace *t, char *err,
                   size_t errsize);
void viz_trace_free(VizTrace *t);

/* Row r (0 = BOS) of stage s. */
static inline const double *viz_trace_row(const VizTrace *t, size_t s, size_t r) {
    return t->X + (s * (t->n + 1) + r) * t->d;
}

/* The text form above, for `input` (the atoms traced). */
void viz_trace_print(FILE *out, const Model *m, const ResidualLayout *L, const VizTrace *t, const Value *input);

#endif
