/* The mathematics the simulator programs compute, done directly in float64 (sim/sim.h). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

void sim_transpose(const double *m, size_t rows, size_t cols, double *out) {
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) out[j * rows + i] = m[i * cols + j];
}

void sim_matmul(const double *a, const double *b, size_t n, size_t k, size_t m, double *out) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            double s = 0;
            for (size_t t = 0; t < k; t++) s += a[i * k + t] * b[t * m + j];
            out[i * m + j] = s;
        }
}

void sim_softmax_rows(const double *x, size_t len, size_t d, double *out) {
    for (size_t start = 0; start < len; start += d) {
        size_t end = start + d < len ? start + d : len;
        double top = x[start], sum = 0;
        for (size_t i = start; i < end; i++) top = fmax(top, x[i]);
        for (size_t i = start; i < end; i++) sum += out[i] = exp(x[i] - top);
        for (size_t i = start; i < end; i++) out[i] /= sum;
    }
}

void sim_relu(const double *x, size_t len, double *out) {
    for (size_t i = 0; i < len; i++) out[i] = x[i] > 0 ? x[i] : 0.0;
}

void sim_maxmin_pairs(const double *x, size_t len, double *out) {
    for (size_t i = 0; i < len; i++) {
        if (i % 2 == 0 && i + 1 < len) out[i] = fmax(x[i], x[i + 1]);
        else if (i % 2 == 1) out[i] = fmin(x[i], x[i - 1]);
        else out[i] = x[i];
    }
}

bool sim_inverse(const double *m, size_t n, double *out) {
    lapack_int ipiv[SIM_MAX_D];
    if (n == 0 || n > SIM_MAX_D) return false;
    memcpy(out, m, n * n * sizeof *out);
    lapack_int N = (lapack_int)n;
    if (LAPACKE_dgetrf(LAPACK_ROW_MAJOR, N, N, out, N, ipiv) != 0) return false; /* > 0: singular */
    return LAPACKE_dgetri(LAPACK_ROW_MAJOR, N, out, N, ipiv) == 0;
}

void sim_attention(const double *X, size_t n, size_t d, const double *A, const double *V, double *out) {
    double *XA = malloc(n * d * sizeof *XA), *XV = malloc(n * d * sizeof *XV), *p = malloc(n * sizeof *p);
    if (!XA || !XV || !p) abort();
    sim_matmul(X, A, n, d, d, XA);
    sim_matmul(X, V, n, d, d, XV);
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, sum = 0;
        for (size_t k = 0; k < n; k++) { /* score (X A X^T)[i][k] */
            double s = 0;
            for (size_t j = 0; j < d; j++) s += XA[i * d + j] * X[k * d + j];
            p[k] = s;
            top = fmax(top, s);
        }
        for (size_t k = 0; k < n; k++) sum += p[k] = exp(p[k] - top);
        for (size_t j = 0; j < d; j++) {
            double s = 0;
            for (size_t k = 0; k < n; k++) s += p[k] * XV[k * d + j];
            out[i * d + j] = s / sum;
        }
    }
    free(XA);
    free(XV);
    free(p);
}

void sim_match2(const int *x, size_t n, int M, int *out) {
    for (size_t i = 0; i < n; i++) {
        out[i] = 0;
        for (size_t j = 0; j < n && !out[i]; j++) out[i] = ((x[i] + x[j]) % M + M) % M == 0;
    }
}

int sim_parity(const int *bits, size_t n, const size_t *pos, size_t k) {
    int ones = 0;
    for (size_t t = 0; t < k; t++) ones += pos[t] < n && bits[pos[t]] == 1;
    return ones % 2;
}
