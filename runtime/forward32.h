/* The float32 forward pass: the batched pass of runtime/forward.h with the residual stream, the
 * weights (rounded to nearest float) and every operation in float32, twice the SIMD lanes of
 * float64.
 *
 * It is only ever run for a model that runtime/precision.h shows safe in float32 (unit roundoff
 * 2^-24, weights rounded): then every decision (selection, one-hot blocks, single-key checks,
 * numerical decoding) comes out as in the exact machine, so every decoded output and every error
 * is the one float64 gives. workspace_use_float32 (runtime/forward.h) refuses any other model.
 *
 * The arithmetic is fixed per element as in float64 (runtime/kernels32.h): an input gives the
 * same bits alone or in any batch. Checks and the readout read the float32 residual converted
 * to float64 (exactly) and run as in float64. Selection compares scores in float64 against
 * max - tie tolerance. */
#ifndef RASPCC_RUNTIME_FORWARD32_H
#define RASPCC_RUNTIME_FORWARD32_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/forward.h"

/* The float32 weights and panels of a workspace (made for ws's model, rows and plans). Fails
 * with a message when out of memory. */
bool forward32_new(Forward32 **out, const Model *m, const Workspace *ws, char *err, size_t errsize);
void forward32_free(Forward32 *f);

/* The embedding of rows [0, rows) (ws->ids, ws->pos, ws->row_values) into the float32 residual;
 * rows [rows, padded) zeroed. */
void forward32_embed(const Model *m, Workspace *ws, size_t rows, size_t padded);
/* Layer l on the batch (as layer() of runtime/forward.c; ws->score_flops counts the scores). */
void forward32_layer(const Model *m, size_t l, Workspace *ws, const size_t *starts, size_t count, size_t padded);
/* Rows [o, o + rows) of the float32 residual into X ((rows) x D, row-major, float64): the dims
 * the checks and the readout read (Workspace.read_dims); X's other entries are left as they are. */
void forward32_rows(const Workspace *ws, size_t D, size_t o, size_t rows, double *X);

#endif
