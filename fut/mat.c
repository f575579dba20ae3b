/* Dense float64 matrices in arenas; products through CBLAS. */
#include "fut/fut.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

FutMat fut_mat_new(Arena *a, size_t rows, size_t cols) {
    FutMat m = {rows, cols, NULL};
    if (rows && cols) m.data = ARENA_ARRAY(a, double, rows * cols);
    return m;
}

FutMat fut_mat_copy(Arena *a, FutMat src) {
    FutMat m = fut_mat_new(a, src.rows, src.cols);
    if (m.data) memcpy(m.data, src.data, src.rows * src.cols * sizeof(double));
    return m;
}

FutMat fut_mat_identity(Arena *a, size_t n) {
    FutMat m = fut_mat_new(a, n, n);
    for (size_t i = 0; i < n; i++) FUT_AT(m, i, i) = 1.0;
    return m;
}

static void gemm(FutMat *C, double alpha, FutMat A, bool ta, FutMat B, bool tb, double beta) {
    size_t M = ta ? A.cols : A.rows, K = ta ? A.rows : A.cols;
    size_t N = tb ? B.rows : B.cols;
    if (!M || !N) return;
    if (!K) {
        if (beta == 0.0) memset(C->data, 0, M * N * sizeof(double));
        return;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, alpha, A.data, (int)A.cols, B.data, (int)B.cols, beta,
                C->data, (int)C->cols);
}

FutMat fut_mat_mul(Arena *a, FutMat A, bool ta, FutMat B, bool tb) {
    FutMat C = fut_mat_new(a, ta ? A.cols : A.rows, tb ? B.rows : B.cols);
    gemm(&C, 1.0, A, ta, B, tb, 0.0);
    return C;
}

void fut_mat_mul_acc(FutMat *C, double alpha, FutMat A, FutMat B) {
    gemm(C, alpha, A, false, B, false, 1.0);
}

double fut_mat_max_abs_diff(FutMat A, FutMat B) {
    double m = 0.0;
    for (size_t i = 0; i < A.rows * A.cols; i++) {
        double e = fabs(A.data[i] - B.data[i]);
        if (!(e <= m)) m = e; /* NaN propagates */
    }
    return m;
}

double fut_mat_max_abs(FutMat A) {
    double m = 0.0;
    for (size_t i = 0; i < A.rows * A.cols; i++) {
        double e = fabs(A.data[i]);
        if (!(e <= m)) m = e;
    }
    return m;
}

void fut_softmax_rows(FutMat *S, bool causal) {
    for (size_t i = 0; i < S->rows; i++) {
        double *row = S->data + i * S->cols;
        size_t n = causal ? (i + 1 < S->cols ? i + 1 : S->cols) : S->cols;
        double mx = -INFINITY;
        for (size_t j = 0; j < n; j++)
            if (row[j] > mx) mx = row[j];
        double sum = 0.0;
        for (size_t j = 0; j < n; j++) {
            row[j] = exp(row[j] - mx);
            sum += row[j];
        }
        for (size_t j = 0; j < n; j++) row[j] /= sum;
        for (size_t j = n; j < S->cols; j++) row[j] = 0.0;
    }
}
