/* A weight matrix of a compiled model, stored by its entries: memory follows the non-zeros,
 * not rows x cols (a compiled MLP of 400k hidden units over a residual of 200 holds about a
 * million entries, where the dense matrix would take 640 MB).
 *
 * Storage is by column (compressed sparse columns): each column keeps its stored entries sorted
 * by row. That is the order the forward pass consumes them in (an output element of X W is a
 * chain over the rows of one column of W), and the order in which compilers and the reader
 * produce them (a column at a time, rows ascending), so building is an append in the common
 * case. Random access (matrix_get, matrix_add at any position) is a binary search in a column.
 *
 * Semantics are those of the dense matrix it stands for: every entry not stored is +0.0;
 * matrix_add(w, r, c, v) does w[r][c] += v with the dense arithmetic (a new entry becomes
 * 0.0 + v), matrix_set stores v exactly (a -0.0 is kept; setting +0.0 where nothing is stored
 * stores nothing). A stored entry may hold +0.0 (after a cancellation); readers that count
 * non-zeros look at the value.
 *
 * Ownership: a Matrix is a handle (rows, cols, store); copies of the handle share the store.
 * Stores are made by matrix_new, chained into a list the caller owns (Model.matrices) and freed
 * with matrix_free_all. */
#ifndef RASPCC_RUNTIME_MATRIX_H
#define RASPCC_RUNTIME_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"

typedef struct MatrixStore MatrixStore;
typedef struct MatrixColumn MatrixColumn;

typedef struct Matrix {
    size_t rows, cols;
    MatrixStore *store; /* NULL only for a Matrix never made by matrix_new (treated as all zero) */
} Matrix;

/* One column's stored entries: rows strictly increasing. */
struct MatrixColumn {
    uint32_t n, cap;
    uint32_t *row;
    double *val;
};

/* The largest number of rows a Matrix may have (row indices are 32-bit). */
#define MATRIX_MAX_ROWS ((size_t)UINT32_MAX)

/* An empty rows x cols matrix whose store is pushed on *list. Aborts on out-of-memory or
 * rows > MATRIX_MAX_ROWS (callers check shapes first: the reader's limits are far below). */
Matrix matrix_new(MatrixStore **list, size_t rows, size_t cols);
/* Frees every store of the list. */
void matrix_free_all(MatrixStore **list);

double matrix_get(const Matrix *w, size_t r, size_t c);
void matrix_add(Matrix *w, size_t r, size_t c, double v);
void matrix_set(Matrix *w, size_t r, size_t c, double v);

/* The stored entry (r, c), stored as +0.0 first when absent: for code written against a dense
 * matrix (*matrix_at(w, r, c) = v). The pointer is valid until the next entry is stored in
 * column c. */
double *matrix_at(Matrix *w, size_t r, size_t c);

/* Every column (cols of them), for loops over many columns; NULL for a matrix without a store. */
const MatrixColumn *matrix_columns(const Matrix *w);

/* Column c's stored entries (an empty column when nothing is stored). */
MatrixColumn matrix_column(const Matrix *w, size_t c);
/* The number of stored entries. */
size_t matrix_stored(const Matrix *w);
/* The number of entries whose value is not 0.0 (so -0.0 counts as zero, as in dense counting). */
size_t matrix_nonzero(const Matrix *w);
/* The dense expansion into out (rows x cols, row-major), for small matrices and tests. */
void matrix_to_dense(const Matrix *w, double *out);
/* Row r into out (cols doubles): the dense row. */
void matrix_row_dense(const Matrix *w, size_t r, double *out);

/* One row of a matrix stored by column: the columns (dims) of its entries, ascending, and their
 * values. */
typedef struct MatrixRow {
    size_t n;
    uint32_t *dims;
    double *vals;
} MatrixRow;

/* The rows of w as entry lists, in arena a (what a product by a one-hot or sparse row reads). */
MatrixRow *matrix_rows(Arena *a, const Matrix *w);

#endif
