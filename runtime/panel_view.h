/* Where the lines of a head's query and key panels are. A compiled head's W_Q and W_K are mostly
 * columns with one entry (a copy of one residual dim, a token's or a position's one-hot code,
 * with a weight: 1.0, or -1.0 where a score subtracts). Such a panel line is the residual's own
 * line times that weight, so it is not computed:
 *   - gathering a query's or key's entries (kernel_gather_keys) reads the residual's line and
 *     multiplies each non-zero by the weight: w * x is the product fma(w, x, +0.0) wherever that
 *     is not zero;
 *   - reading the panel line by line (kernel_scores' dense side, kernel_count_nonzero) takes the
 *     residual's line where the weight is 1.0 (x and fma(1.0, x, +0.0) differ only in the sign
 *     of a zero, which those readers skip), and the other copies are computed first, once per
 *     batch, only when a batch reads that panel so (panel_view_lines).
 * Columns with more than one entry (or none) are computed for every batch. */
#ifndef RASPCC_RUNTIME_PANEL_VIEW_H
#define RASPCC_RUNTIME_PANEL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/matrix.h"
#include "support/arena.h"

#define PANEL_COMPUTED UINT32_MAX

/* Made once per matrix. */
typedef struct PanelPlan {
    uint32_t *copy_of;  /* per column: the residual dim its one entry reads, or PANEL_COMPUTED */
    double *weight;     /* per column: that entry's weight */
    uint32_t *computed; /* the columns computed for every batch, ascending */
    size_t n_computed;
    uint32_t *scaled;   /* the copies whose weight is not 1.0, ascending */
    size_t n_scaled;
} PanelPlan;

/* A batch's panel: line c times scale[c] is the panel's column c (rows from 0). */
typedef struct PanelView {
    const double **line; /* per column */
    double *scale;       /* per column: 1.0, or a scaled copy's weight */
    bool lines;          /* every scale is 1.0: the lines are the panel's, to read line by line */
} PanelView;

void panel_plan(Arena *a, const Matrix *W, PanelPlan *p);

/* A view with room for `cols` columns. */
void panel_view_init(Arena *a, size_t cols, PanelView *v);

/* A new batch: the computed columns of the panel F W for rows [0, padded) (a multiple of 8) into
 * their lines of `panel` (line c at panel + c * ld; F has lines of ld doubles), and the view. */
void panel_view_start(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded);

/* Makes every line of the view the panel's column itself (scale 1.0): the scaled copies computed
 * into the panel, rows [0, padded), if not yet for this batch. */
void panel_view_lines(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded);

#endif
