/* runtime/matrix.h: a sparse matrix behaves as the dense one it stands for. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/matrix.h"
#include "tests/check_main.h"

/* The same writes to a sparse matrix and a dense array: every read agrees, bit for bit. */
START_TEST(test_matches_dense) {
    MatrixStore *list = NULL;
    size_t R = 13, C = 7;
    Matrix w = matrix_new(&list, R, C);
    double dense[13 * 7] = {0};
    srand(11);
    for (int i = 0; i < 400; i++) {
        size_t r = (size_t)rand() % R, c = (size_t)rand() % C;
        double v = (rand() % 9 - 4) / 4.0;
        if (rand() % 3 == 0) {
            matrix_set(&w, r, c, v);
            dense[r * C + c] = v;
        } else {
            matrix_add(&w, r, c, v);
            dense[r * C + c] += v;
        }
    }
    double back[13 * 7];
    matrix_to_dense(&w, back);
    ck_assert(memcmp(back, dense, sizeof dense) == 0);
    for (size_t r = 0; r < R; r++)
        for (size_t c = 0; c < C; c++) ck_assert(memcmp(&(double){matrix_get(&w, r, c)}, &dense[r * C + c], 8) == 0);
    for (size_t c = 0; c < C; c++) { /* columns: rows strictly increasing */
        MatrixColumn col = matrix_column(&w, c);
        for (uint32_t k = 1; k < col.n; k++) ck_assert_uint_lt(col.row[k - 1], col.row[k]);
    }
    size_t nz = 0;
    for (size_t i = 0; i < R * C; i++) nz += dense[i] != 0.0;
    ck_assert_uint_eq(matrix_nonzero(&w), nz);
    matrix_free_all(&list);
    ck_assert_ptr_null(list);
}
END_TEST

/* Signed zeros as dense arithmetic has them: a new entry is 0.0 + v, set keeps -0.0, setting
 * +0.0 where nothing is stored stores nothing. */
START_TEST(test_signed_zeros) {
    MatrixStore *list = NULL;
    Matrix w = matrix_new(&list, 2, 2);
    matrix_add(&w, 0, 0, -0.0);
    ck_assert(!signbit(matrix_get(&w, 0, 0))); /* 0.0 + -0.0 = +0.0 */
    matrix_set(&w, 1, 1, -0.0);
    ck_assert(signbit(matrix_get(&w, 1, 1)));
    matrix_set(&w, 0, 1, 0.0);
    ck_assert_uint_eq(matrix_column(&w, 1).n, 1); /* only the -0.0 */
    ck_assert_uint_eq(matrix_nonzero(&w), 0);
    *matrix_at(&w, 1, 0) = 3.0;
    ck_assert(matrix_get(&w, 1, 0) == 3.0);
    matrix_free_all(&list);
}
END_TEST

/* Appending in row order and inserting out of order give the same column. */
START_TEST(test_insert_order) {
    MatrixStore *list = NULL;
    Matrix a = matrix_new(&list, 100, 1), b = matrix_new(&list, 100, 1);
    for (size_t r = 0; r < 100; r += 3) matrix_set(&a, r, 0, (double)r + 1);
    for (size_t r = 99; r + 1 > 0; r--)
        if (r % 3 == 0) matrix_set(&b, r, 0, (double)r + 1);
    MatrixColumn x = matrix_column(&a, 0), y = matrix_column(&b, 0);
    ck_assert_uint_eq(x.n, 34);
    ck_assert_uint_eq(y.n, 34);
    ck_assert(memcmp(x.row, y.row, x.n * sizeof *x.row) == 0 && memcmp(x.val, y.val, x.n * sizeof *x.val) == 0);
    matrix_free_all(&list);
}
END_TEST

int main(void) {
    Suite *s = suite_create("matrix");
    TCase *tc = tcase_create("matrix");
    tcase_add_test(tc, test_matches_dense);
    tcase_add_test(tc, test_signed_zeros);
    tcase_add_test(tc, test_insert_order);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
