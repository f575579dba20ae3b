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

/* Where things are in the picture: a cell of stage s, position r (0 = BOS), dim d covers
 * x in [panel_x + s * panel_step + r * cell_w, + cell_w) and y in [top + d * row_h, + row_h). */
typedef struct VizHeatmapLayout {
    size_t width, height;         /* of the picture */
    size_t cell_w, row_h;
    size_t panel_x, panel_step, top;
    size_t label_chars;           /* characters of a dim's label shown (0: no labels) */
    size_t head_chars;            /* characters of a column heading shown */
} VizHeatmapLayout;

void viz_heatmap_layout(const Model *m, const VizTrace *t, const Value *input, VizHeatmapLayout *out);

/* Writes the picture of t (for `input`) to out; false with a message in err. */
bool viz_heatmap_write(FILE *out, const Model *m, const ResidualLayout *L, const VizTrace *t, const Value *input,
                       char *err, size_t errsize);

#endif
