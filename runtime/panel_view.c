#include "runtime/panel_view.h"

#include <string.h>

#include "runtime/kernels.h"

void panel_plan(Arena *a, const Matrix *W, PanelPlan *p) {
    size_t cols = W->cols ? W->cols : 1;
    p->copy_of = ARENA_ARRAY(a, uint32_t, cols);
    p->computed = ARENA_ARRAY(a, uint32_t, cols);
    p->n_computed = 0;
    for (size_t c = 0; c < W->cols; c++) {
        MatrixColumn col = matrix_column(W, c);
        bool copy = col.n == 1 && col.val[0] == 1.0;
        p->copy_of[c] = copy ? col.row[0] : PANEL_COMPUTED;
        if (!copy) p->computed[p->n_computed++] = (uint32_t)c;
    }
}

void panel_compute(const PanelPlan *p, const Matrix *W, const double *F, size_t ld, size_t padded, double *panel) {
    const MatrixColumn *cols = matrix_columns(W);
    if (cols && p->n_computed)
        kernel_columns(cols, p->computed, p->n_computed, F, 0, ld, padded, KERNEL_STORE, NULL, panel, ld);
    else /* no store: every column is zero */
        for (size_t j = 0; j < p->n_computed; j++) memset(panel + (size_t)p->computed[j] * ld, 0, padded * sizeof *panel);
}

void panel_lines(const PanelPlan *p, size_t cols, const double *F, const double *panel, size_t ld,
                 const double **lines) {
    for (size_t c = 0; c < cols; c++) lines[c] = p->copy_of[c] == PANEL_COMPUTED ? panel + c * ld : F + (size_t)p->copy_of[c] * ld;
}
