/* Where the lines of a head's query and key panels are. A compiled head's W_Q and W_K are mostly
 * columns with one entry of weight 1.0 (a copy of one residual dim: a token's or a position's
 * one-hot code). Such a panel line is the residual's own line: every reader of the query and key
 * panels (kernel_gather_keys, kernel_scores, kernel_count_nonzero) skips zeros, and x and the
 * product fma(1.0, x, +0.0) differ only in the sign of a zero. So only the other columns are
 * computed, and the readers get a line pointer per column. */
#ifndef RASPCC_RUNTIME_PANEL_VIEW_H
#define RASPCC_RUNTIME_PANEL_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/matrix.h"
#include "support/arena.h"

#define PANEL_COMPUTED UINT32_MAX

/* Made once per matrix. */
typedef struct PanelPlan {
    uint32_t *copy_of;  /* per column: the residual dim it copies, or PANEL_COMPUTED */
    uint32_t *computed; /* the columns to compute, ascending */
    size_t n_computed;
} PanelPlan;

void panel_plan(Arena *a, const Matrix *W, PanelPlan *p);

/* The computed columns of the panel F W for rows [0, padded) (a multiple of 8) into their lines
 * of `panel` (line c at panel + c * ld); F has lines of ld doubles. */
void panel_compute(const PanelPlan *p, const Matrix *W, const double *F, size_t ld, size_t padded, double *panel);

/* lines[c] for each of W's `cols` columns: F's line copy_of[c], or the panel's line c. */
void panel_lines(const PanelPlan *p, size_t cols, const double *F, const double *panel, size_t ld,
                 const double **lines);

#endif
