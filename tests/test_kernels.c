/* runtime/kernels.h: every instruction set computes the stated chains bit for bit. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels.h"
#include "runtime/matrix.h"
#include "tests/check_main.h"

enum { LINES = 40, LD = 200 };

static double rnd(void) { return (double)(rand() % 20001 - 10000) / 977.0; }

/* The reference: one element at a time, as kernels.h states the arithmetic. */
static void reference(const Matrix *W, const double *in, size_t base, size_t len, KernelEpilogue e, const double *bias,
                      double *out) {
    for (size_t c = 0; c < W->cols; c++) {
        MatrixColumn col = matrix_column(W, c);
        for (size_t i = 0; i < len; i++) {
            double acc = 0.0, b = bias ? bias[c] : 0.0, *o = &out[c * LD + i], t;
            for (uint32_t k = 0; k < col.n; k++) acc = fma(col.val[k], in[(col.row[k] - base) * LD + i], acc);
            switch (e) {
            case KERNEL_STORE: *o = acc; break;
            case KERNEL_ADD: *o = *o + acc; break;
            case KERNEL_RELU: t = acc + b; *o = t > 0.0 ? t : 0.0; break;
            case KERNEL_GATE: *o = *o * (acc + b); break;
            }
        }
    }
}

/* Random sparse columns over a random panel; lengths 8..200 (all the block paths); each
 * epilogue: kernel_columns and kernel_chain_to on every instruction set this machine has. */
START_TEST(test_isas_agree) {
    srand(5);
    MatrixStore *list = NULL;
    Matrix W = matrix_new(&list, LINES + 3, 9);
    for (size_t c = 0; c < 9; c++)
        for (size_t r = 3; r < LINES + 3; r++)
            if (rand() % 4 == 0) matrix_set(&W, r, c, rnd());
    double *in = malloc(LINES * LD * sizeof *in), bias[9];
    for (size_t i = 0; i < LINES * LD; i++) in[i] = rnd();
    for (size_t c = 0; c < 9; c++) bias[c] = rnd();
    double *want = malloc(9 * LD * sizeof *want), *got = malloc(9 * LD * sizeof *got), *init = malloc(9 * LD * 8);
    for (size_t i = 0; i < 9 * LD; i++) init[i] = rnd();
    size_t lens[] = {8, 16, 24, 32, 40, 56, 64, 72, 96, 128, 136, 200};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int e = KERNEL_STORE; e <= KERNEL_GATE; e++) {
            memcpy(want, init, 9 * LD * 8);
            reference(&W, in, 3, lens[li], (KernelEpilogue)e, bias, want);
            memcpy(got, init, 9 * LD * 8);
            kernel_columns(matrix_columns(&W), NULL, 9, in, 3, LD, lens[li], (KernelEpilogue)e, bias, got, LD);
            for (size_t c = 0; c < 9; c++)
                ck_assert_msg(memcmp(want + c * LD, got + c * LD, lens[li] * 8) == 0, "columns len %zu epilogue %d",
                              lens[li], e);
            memcpy(got, init, 9 * LD * 8);
            kernel_columns_isa_scalar(matrix_columns(&W), NULL, 9, in, 3, LD, lens[li], (KernelEpilogue)e, bias, got, LD);
            for (size_t c = 0; c < 9; c++) ck_assert(memcmp(want + c * LD, got + c * LD, lens[li] * 8) == 0);
            for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
                memcpy(got, init, 9 * LD * 8);
                for (size_t c = 0; c < 9; c++) {
                    MatrixColumn col = matrix_column(&W, c);
                    if (e == KERNEL_STORE)
                        kernel_chain_isa((KernelIsa)isa, col.row, col.val, col.n, in, 3, LD, lens[li], NULL, got + c * LD);
                    else
                        kernel_chain_to(col.row, col.val, col.n, in, 3, LD, lens[li], (KernelEpilogue)e, bias[c],
                                        got + c * LD);
                }
                for (size_t c = 0; c < 9; c++)
                    ck_assert_msg(memcmp(want + c * LD, got + c * LD, lens[li] * 8) == 0, "chain %s len %zu epilogue %d",
                                  kernel_isa_name((KernelIsa)isa), lens[li], e);
            }
        }
    /* a chain continued from init is one chain */
    MatrixColumn col = matrix_column(&W, 0);
    uint32_t half = col.n / 2;
    for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
        kernel_chain_isa((KernelIsa)isa, col.row, col.val, col.n, in, 3, LD, 64, NULL, want);
        kernel_chain_isa((KernelIsa)isa, col.row, col.val, half, in, 3, LD, 64, NULL, got);
        kernel_chain_isa((KernelIsa)isa, col.row + half, col.val + half, col.n - half, in, 3, LD, 64, got, got);
        ck_assert(memcmp(want, got, 64 * 8) == 0);
    }
    free(in), free(want), free(got), free(init);
    matrix_free_all(&list);
}
END_TEST

/* max(t, +0.0) is t > 0 ? t : +0.0 for NaN and signed zeros too. */
START_TEST(test_relu_edges) {
    MatrixStore *list = NULL;
    Matrix W = matrix_new(&list, 1, 1);
    matrix_set(&W, 0, 0, 1.0);
    double in[64], out[64], bias = 0.0;
    for (int i = 0; i < 64; i++) in[i] = i % 4 == 0 ? NAN : i % 4 == 1 ? -0.0 : i % 4 == 2 ? -1.0 : 2.0;
    kernel_columns(matrix_columns(&W), NULL, 1, in, 0, 64, 64, KERNEL_RELU, &bias, out, 64);
    for (int i = 0; i < 64; i++) {
        double t = fma(1.0, in[i], 0.0) + 0.0, want = t > 0.0 ? t : 0.0;
        ck_assert(memcmp(&want, &out[i], 8) == 0);
    }
    matrix_free_all(&list);
}
END_TEST

/* kernel_select equals the one-at-a-time selection: random scores with ties, signed zeros, a
 * NaN, every length up to 70. */
START_TEST(test_select) {
    srand(9);
    double S[70];
    uint32_t a[70], b[70];
    for (int round = 0; round < 300; round++)
        for (size_t n = 1; n <= 70; n += 1 + (size_t)(round % 3)) {
            for (size_t j = 0; j < n; j++) S[j] = (double)(rand() % 7) - 3.0 + (rand() % 5 == 0 ? 1e-9 : 0.0);
            if (round % 10 == 1) S[rand() % n] = -0.0;
            if (round % 50 == 2) S[rand() % n] = NAN;
            double tol = round % 4 == 0 ? 0.0 : 0.25;
            size_t x = kernel_select(S, n, tol, a), y = kernel_select_scalar(S, n, tol, b);
            ck_assert_uint_eq(x, y);
            ck_assert(x >= 1 && memcmp(a, b, x * sizeof *a) == 0);
        }
}
END_TEST

int main(void) {
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("kernels");
    tcase_add_test(tc, test_isas_agree);
    tcase_add_test(tc, test_relu_edges);
    tcase_add_test(tc, test_select);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
