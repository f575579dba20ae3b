#include "runtime/panel_view.h"

#include <math.h>
#include <string.h>

#include "runtime/kernels.h"

void panel_plan(Arena *a, const Matrix *W, PanelPlan *p) {
    size_t cols = W->cols ? W->cols : 1;
    p->copy_of = ARENA_ARRAY(a, uint32_t, cols);
    p->weight = ARENA_ARRAY(a, double, cols);
    p->computed = ARENA_ARRAY(a, uint32_t, cols);
    p->scaled = ARENA_ARRAY(a, uint32_t, cols);
    p->n_computed = p->n_scaled = 0;
    for (size_t c = 0; c < W->cols; c++) {
        MatrixColumn col = matrix_column(W, c);
        /* a finite non-zero weight: w * x then has the product's value wherever it is not zero */
        bool copy = col.n == 1 && col.val[0] != 0.0 && isfinite(col.val[0]);
        p->copy_of[c] = copy ? col.row[0] : PANEL_COMPUTED;
        p->weight[c] = copy ? col.val[0] : 0.0;
        if (!copy) p->computed[p->n_computed++] = (uint32_t)c;
        else if (col.val[0] != 1.0) p->scaled[p->n_scaled++] = (uint32_t)c;
    }
}

void panel_view_init(Arena *a, size_t cols, PanelView *v) {
    v->line = ARENA_ARRAY(a, const double *, cols ? cols : 1);
    v->scale = ARENA_ARRAY(a, double, cols ? cols : 1);
    v->lines = false;
}

/* The columns `which` of F W into their panel lines, rows [0, padded). */
static void compute(const Matrix *W, const uint32_t *which, size_t n, const double *F, double *panel, size_t ld,
                    size_t padded) {
    const MatrixColumn *cols = matrix_columns(W);
    if (cols && n) kernel_columns(cols, which, n, F, 0, ld, padded, KERNEL_STORE, NULL, panel, ld);
    else /* no store: every column is zero */
        for (size_t j = 0; j < n; j++) memset(panel + (size_t)which[j] * ld, 0, padded * sizeof *panel);
}

void panel_view_start(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded) {
    compute(W, p->computed, p->n_computed, F, panel, ld, padded);
    for (size_t c = 0; c < W->cols; c++) {
        bool copy = p->copy_of[c] != PANEL_COMPUTED;
        v->line[c] = copy ? F + (size_t)p->copy_of[c] * ld : panel + c * ld;
        v->scale[c] = copy ? p->weight[c] : 1.0;
    }
    v->lines = p->n_scaled == 0;
}

void panel_view_lines(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded) {
    if (v->lines) return;
    compute(W, p->scaled, p->n_scaled, F, panel, ld, padded);
    for (size_t j = 0; j < p->n_scaled; j++) {
        size_t c = p->scaled[j];
        v->line[c] = panel + c * ld, v->scale[c] = 1.0;
    }
    v->lines = true;
}
