/* A trace (viz/trace.h) as a PNG heatmap (rasprun --trace-png), written with libpng.
 *
 * One panel per stage, side by side: the embedding, then each layer. In a panel a row per
 * residual dim, labelled on the left with the dim's label ("tokens:3"), and a column per position
 * (BOS first), headed by the input's tokens. A cell's colour is its value over the largest
 * |value| that dim takes anywhere in the trace: red for positive, blue for negative, white for 0.
 * A thin grey line starts each s-op block. Text is in the 7x11 bitmap font of viz/font.h. Rows
 * are 12 pixels high (room for a label) up to 320 dims; beyond, thinner and unlabelled, and a
 * picture over 64 million pixels is refused. */
#ifndef RASPCC_VIZ_HEATMAP_H
#define RASPCC_VIZ_HEATMAP_H

#include <stdbool.h>
#include <stdio.h>

#include "viz/trace.h"

/* Writes the picture of t (for `input`) to out; false with a message in err. */
bool viz_heatmap_write(FILE *out, const Model *m, const ResidualLayout *L, const VizTrace *t, const Value *input,
                       char *err, size_t errsize);

#endif
