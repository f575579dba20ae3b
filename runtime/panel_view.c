#include "runtime/panel_view.h"

#include <math.h>
#include <string.h>

#include "runtime/kernels.h"

/* The lists of one embedding E (rows: token ids or positions): entry (c, (x + 0.0) * w) for each
 * listed column c that copies a dim d E stores, x E's number at (row, d) (the embedding adds it
 * to the other's +0.0), where that is not zero; a row's in column order. */
static void list_entries(Arena *a, const PanelPlan *p, const bool *listed, size_t cols, const Matrix *E,
                         ListedEntries *s) {
    size_t rows = E->rows, total = 0;
    s->start = ARENA_ARRAY(a, uint32_t, rows + 2);
    for (size_t c = 0; c < cols; c++)
        if (listed[c] && p->copy_of[c] != PANEL_COMPUTED) total += matrix_column(E, p->copy_of[c]).n;
    s->col = ARENA_ARRAY(a, uint32_t, total ? total : 1);
    s->val = ARENA_ARRAY(a, double, total ? total : 1);
    for (int pass = 0; pass < 2; pass++) { /* counts (row r's at start[r + 2]), then the entries */
        for (size_t c = 0; c < cols; c++) {
            if (!listed[c] || p->copy_of[c] == PANEL_COMPUTED) continue; /* an empty column: no entries */
            MatrixColumn d = matrix_column(E, p->copy_of[c]);
            for (size_t k = 0; k < d.n; k++) {
                double v = (d.val[k] + 0.0) * p->weight[c];
                if (v == 0.0) continue;
                if (pass == 0) s->start[d.row[k] + 2]++;
                else s->col[s->start[d.row[k] + 1]] = (uint32_t)c, s->val[s->start[d.row[k] + 1]++] = v;
            }
        }
        if (pass == 0) /* start[r + 1]: where row r begins; the fill moves it to where row r + 1 does */
            for (size_t r = 0; r < rows; r++) s->start[r + 2] += s->start[r + 1];
    }
}

/* The plan's lists, where the columns that copy a dim the embedding writes from one of its two, or
 * are empty (no entries to list), are all but at most PANEL_LISTED_SCANS, and at least four times as many as the others plus one (the
 * others are scanned key by key, and an entry put among listed ones moves them: a gather that
 * spares few line scans costs more than it saves). */
static void plan_lists(Arena *a, const Matrix *W, const PanelEmbedding *emb, PanelPlan *p) {
    bool *listed = ARENA_ARRAY(a, bool, W->cols ? W->cols : 1);
    size_t n_listed = 0;
    for (size_t c = 0; c < W->cols; c++) {
        listed[c] = p->copy_of[c] != PANEL_COMPUTED ? emb->by_one[p->copy_of[c]] : matrix_column(W, c).n == 0;
        n_listed += listed[c];
    }
    size_t n_other = W->cols - n_listed;
    if (!n_listed || n_other > PANEL_LISTED_SCANS || n_listed < 4 * (n_other + 1)) return;
    p->listed = true;
    p->scans = ARENA_ARRAY(a, uint32_t, PANEL_LISTED_SCANS);
    for (size_t c = 0; c < W->cols; c++)
        if (!listed[c]) p->scans[p->n_scans++] = (uint32_t)c;
    list_entries(a, p, listed, W->cols, emb->token, &p->by_token);
    list_entries(a, p, listed, W->cols, emb->pos, &p->by_pos);
    p->token_only = !p->n_scans && p->by_pos.start[emb->pos->rows] == 0;
}

void panel_plan(Arena *a, const Matrix *W, const PanelEmbedding *emb, PanelPlan *p) {
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
    p->listed = p->token_only = false;
    p->n_scans = 0;
    if (emb) plan_lists(a, W, emb, p);
}

void panel_view_init(Arena *a, size_t cols, PanelView *v) {
    v->line = ARENA_ARRAY(a, const double *, cols ? cols : 1);
    v->scale = ARENA_ARRAY(a, double, cols ? cols : 1);
    v->lines = false;
}

void panel_columns(const Matrix *W, const uint32_t *which, size_t n, const double *F, double *panel, size_t ld,
                   size_t padded) {
    const MatrixColumn *cols = matrix_columns(W);
    if (cols && n) kernel_columns(cols, which, n, F, 0, ld, padded, KERNEL_STORE, NULL, panel, ld);
    else /* no store: every column is zero */
        for (size_t j = 0; j < n; j++) memset(panel + (which ? which[j] : j) * ld, 0, padded * sizeof *panel);
}

void panel_view_start(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded) {
    panel_columns(W, p->computed, p->n_computed, F, panel, ld, padded);
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
    panel_columns(W, p->scaled, p->n_scaled, F, panel, ld, padded);
    for (size_t j = 0; j < p->n_scaled; j++) {
        size_t c = p->scaled[j];
        v->line[c] = panel + c * ld, v->scale[c] = 1.0;
    }
    v->lines = true;
}

/* Row k's entries from two lists (a's row ra, b's row rb), merged in column order (no column is in
 * both: a dim is written from the token or from the position). */
static void merge_lists(const KeyEntries *e, size_t k, const ListedEntries *a, size_t ra, const ListedEntries *b,
                        size_t rb) {
    uint32_t ia = a->start[ra], ea = a->start[ra + 1], ib = b->start[rb], eb = b->start[rb + 1], n = 0;
    uint32_t *dim = e->dim + k * e->stride;
    double *val = e->val + k * e->stride;
    while (ia < ea && ib < eb)
        if (a->col[ia] < b->col[ib]) dim[n] = a->col[ia], val[n++] = a->val[ia++];
        else dim[n] = b->col[ib], val[n++] = b->val[ib++];
    for (; ia < ea; ia++) dim[n] = a->col[ia], val[n++] = a->val[ia];
    for (; ib < eb; ib++) dim[n] = b->col[ib], val[n++] = b->val[ib];
    e->count[k] = n;
}

/* Entry (c, v) into row k in column order (c is in none of its entries). */
static void insert_entry(const KeyEntries *e, size_t k, uint32_t c, double v) {
    uint32_t *dim = e->dim + k * e->stride;
    double *val = e->val + k * e->stride;
    size_t t = e->count[k]++;
    for (; t > 0 && dim[t - 1] > c; t--) dim[t] = dim[t - 1], val[t] = val[t - 1];
    dim[t] = c, val[t] = v;
}

void panel_view_gather(const PanelView *v, const PanelPlan *p, bool embedded, const size_t *ids, const size_t *pos,
                       size_t o, size_t rows, const KeyEntries *e) {
    if (!p->listed || !embedded) {
        kernel_gather_keys(v->line, v->scale, o, rows, e);
        return;
    }
    for (size_t k = 0; k < rows; k++) merge_lists(e, k, &p->by_token, ids[o + k], &p->by_pos, pos[o + k]);
    for (size_t j = 0; j < p->n_scans; j++) { /* the other lines, as kernel_gather_keys reads them */
        uint32_t c = p->scans[j];
        const double *line = v->line[c] + o;
        double w = v->scale[c];
        for (size_t k = 0; k < rows; k++) {
            double x = line[k] * w; /* w is finite: zero where line[k] is, or where the product underflows */
            if (x != 0.0) insert_entry(e, k, c, x);
        }
    }
}
