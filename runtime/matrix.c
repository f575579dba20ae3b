#include "runtime/matrix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


struct MatrixStore {
    MatrixStore *next;
    size_t cols, stored;
    MatrixColumn col[];  /* cols columns; their entry arrays are malloc'd and grown with realloc
                            (an arena would keep every outgrown copy: 3x the entries in all) */
};

Matrix matrix_new(MatrixStore **list, size_t rows, size_t cols) {
    if (rows > MATRIX_MAX_ROWS || cols > (SIZE_MAX - sizeof(MatrixStore)) / sizeof(MatrixColumn)) abort();
    MatrixStore *s = calloc(1, sizeof *s + cols * sizeof(MatrixColumn));
    if (!s) abort();
    s->cols = cols;
    s->next = *list;
    *list = s;
    return (Matrix){rows, cols, s};
}

void matrix_free_all(MatrixStore **list) {
    for (MatrixStore *s = *list, *next; s; s = next) {
        next = s->next;
        for (size_t c = 0; c < s->cols; c++) {
            free(s->col[c].row);
            free(s->col[c].val);
        }
        free(s);
    }
    *list = NULL;
}

/* The position of row r in column col: where it is, or where it would be inserted. */
static uint32_t find_row(const MatrixColumn *col, uint32_t r, bool *found) {
    if (col->n > 0 && col->row[col->n - 1] < r) { /* the common case: appending */
        *found = false;
        return col->n;
    }
    uint32_t lo = 0, hi = col->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (col->row[mid] < r) lo = mid + 1;
        else hi = mid;
    }
    *found = lo < col->n && col->row[lo] == r;
    return lo;
}

static void insert_at(MatrixStore *s, MatrixColumn *col, uint32_t at, uint32_t r, double v) {
    if (col->n == col->cap) {
        uint32_t cap = col->cap ? col->cap + col->cap / 2 + 1 : 2;
        uint32_t *row = realloc(col->row, cap * sizeof *row);
        if (row) col->row = row;
        double *val = row ? realloc(col->val, cap * sizeof *val) : NULL;
        if (!val) abort(); /* out of memory, as matrix_new */
        col->val = val;
        col->cap = cap;
    }
    memmove(col->row + at + 1, col->row + at, (col->n - at) * sizeof *col->row);
    memmove(col->val + at + 1, col->val + at, (col->n - at) * sizeof *col->val);
    col->row[at] = r;
    col->val[at] = v;
    col->n++;
    s->stored++;
}

double matrix_get(const Matrix *w, size_t r, size_t c) {
    if (!w->store) return 0.0;
    bool found;
    const MatrixColumn *col = &w->store->col[c];
    uint32_t at = find_row(col, (uint32_t)r, &found);
    return found ? col->val[at] : 0.0;
}

void matrix_add(Matrix *w, size_t r, size_t c, double v) {
    MatrixColumn *col = &w->store->col[c];
    bool found;
    uint32_t at = find_row(col, (uint32_t)r, &found);
    if (found) col->val[at] += v;
    else insert_at(w->store, col, at, (uint32_t)r, 0.0 + v); /* as the dense zero would have it */
}

void matrix_set(Matrix *w, size_t r, size_t c, double v) {
    MatrixColumn *col = &w->store->col[c];
    bool found;
    uint32_t at = find_row(col, (uint32_t)r, &found);
    if (found) col->val[at] = v;
    else if (v != 0.0 || signbit(v)) insert_at(w->store, col, at, (uint32_t)r, v);
}

MatrixColumn matrix_column(const Matrix *w, size_t c) {
    if (!w->store) return (MatrixColumn){0, 0, NULL, NULL};
    return w->store->col[c];
}

const MatrixColumn *matrix_columns(const Matrix *w) { return w->store ? w->store->col : NULL; }

size_t matrix_stored(const Matrix *w) { return w->store ? w->store->stored : 0; }

size_t matrix_nonzero(const Matrix *w) {
    size_t n = 0;
    for (size_t c = 0; w->store && c < w->cols; c++) {
        const MatrixColumn *col = &w->store->col[c];
        for (uint32_t k = 0; k < col->n; k++) n += col->val[k] != 0.0;
    }
    return n;
}

void matrix_to_dense(const Matrix *w, double *out) {
    memset(out, 0, w->rows * w->cols * sizeof *out);
    for (size_t c = 0; w->store && c < w->cols; c++) {
        const MatrixColumn *col = &w->store->col[c];
        for (uint32_t k = 0; k < col->n; k++) out[(size_t)col->row[k] * w->cols + c] = col->val[k];
    }
}

void matrix_row_dense(const Matrix *w, size_t r, double *out) {
    for (size_t c = 0; c < w->cols; c++) out[c] = matrix_get(w, r, c);
}

double *matrix_at(Matrix *w, size_t r, size_t c) {
    MatrixColumn *col = &w->store->col[c];
    bool found;
    uint32_t at = find_row(col, (uint32_t)r, &found);
    if (!found) insert_at(w->store, col, at, (uint32_t)r, 0.0);
    return &col->val[at];
}

MatrixRow *matrix_rows(Arena *a, const Matrix *w) {
    MatrixRow *rows = ARENA_ARRAY(a, MatrixRow, w->rows ? w->rows : 1);
    for (size_t c = 0; c < w->cols; c++) {
        MatrixColumn col = matrix_column(w, c);
        for (uint32_t k = 0; k < col.n; k++) rows[col.row[k]].n++;
    }
    for (size_t r = 0; r < w->rows; r++) {
        rows[r].dims = ARENA_ARRAY(a, uint32_t, rows[r].n ? rows[r].n : 1);
        rows[r].vals = ARENA_ARRAY(a, double, rows[r].n ? rows[r].n : 1);
        rows[r].n = 0;
    }
    for (size_t c = 0; c < w->cols; c++) { /* columns ascending: each row's dims come sorted */
        MatrixColumn col = matrix_column(w, c);
        for (uint32_t k = 0; k < col.n; k++) {
            MatrixRow *row = &rows[col.row[k]];
            row->dims[row->n] = (uint32_t)c;
            row->vals[row->n++] = col.val[k];
        }
    }
    return rows;
}
