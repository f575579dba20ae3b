/* runtime/kernels.h: every instruction set computes the stated chains bit for bit. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/forward.h"
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
            case KERNEL_FRESH: *o = acc + 0.0; break;
            case KERNEL_RELU: t = acc + b; *o = t > 0.0 ? t : 0.0; break;
            case KERNEL_GATE: *o = *o * (acc + b); break;
            }
        }
    }
}

/* Random sparse columns over a random panel; lengths 8..200 (all the block paths); each
 * epilogue: kernel_columns on every instruction set this machine has, and kernel_chain_to. */
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
            for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
                memcpy(got, init, 9 * LD * 8);
                kernel_columns_isa((KernelIsa)isa, matrix_columns(&W), NULL, 9, in, 3, LD, lens[li], (KernelEpilogue)e,
                                   bias, got, LD);
                for (size_t c = 0; c < 9; c++)
                    ck_assert_msg(memcmp(want + c * LD, got + c * LD, lens[li] * 8) == 0, "columns %s len %zu epilogue %d",
                                  kernel_isa_name((KernelIsa)isa), lens[li], e);
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

/* The epilogues as kernels.h states them, one element at a time. */
static double epilogue(double c, KernelEpilogue e, double bias, double o) {
    double t = c + bias;
    switch (e) {
    case KERNEL_STORE: return c;
    case KERNEL_ADD: return o + c;
    case KERNEL_FRESH: return c + 0.0;
    case KERNEL_RELU: return t > 0.0 ? t : 0.0;
    case KERNEL_GATE: return o * t;
    }
    return c;
}

/* kernel_epilogue (every instruction set) on chains already computed: each epilogue as stated,
 * NaN, infinities and zeros of both signs among the chains. */
START_TEST(test_epilogue) {
    srand(7);
    static double c[LD], init[LD], got[LD];
    for (size_t i = 0; i < LD; i++) {
        int r = rand() % 8;
        c[i] = r == 0 ? -0.0 : r == 1 ? 0.0 : r == 2 ? NAN : r == 3 ? -INFINITY : rnd();
        init[i] = rand() % 5 ? rnd() : rand() % 2 ? -0.0 : 0.0;
    }
    const size_t lens[] = {8, 16, 64, 136};
    for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++)
        for (int e = KERNEL_STORE; e <= KERNEL_GATE; e++)
            for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
                memcpy(got, init, sizeof got);
                kernel_epilogue_isa((KernelIsa)isa, c, lens[li], (KernelEpilogue)e, 0.25, got);
                for (size_t i = 0; i < LD; i++) {
                    double want = i < lens[li] ? epilogue(c[i], (KernelEpilogue)e, 0.25, init[i]) : init[i];
                    ck_assert_msg(memcmp(&want, &got[i], sizeof want) == 0, "%s epilogue %d len %zu row %zu",
                                  kernel_isa_name((KernelIsa)isa), e, lens[li], i);
                }
            }
}
END_TEST

/* KERNEL_FRESH is X += chain on X = +0.0 without reading X, also where a chain is -0.0 (a product
 * that underflows), which a plain store would keep. */
START_TEST(test_fresh_store) {
    MatrixStore *list = NULL;
    Matrix W = matrix_new(&list, 1, 1);
    matrix_set(&W, 0, 0, -1e-200);
    static double in[64], added[64], fresh[64], stored[64];
    for (int i = 0; i < 64; i++) in[i] = i % 2 ? 1e-200 : rnd(), added[i] = 0.0, fresh[i] = NAN;
    for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
        kernel_columns_isa((KernelIsa)isa, matrix_columns(&W), NULL, 1, in, 0, 64, 64, KERNEL_ADD, NULL, added, 64);
        kernel_columns_isa((KernelIsa)isa, matrix_columns(&W), NULL, 1, in, 0, 64, 64, KERNEL_FRESH, NULL, fresh, 64);
        kernel_columns_isa((KernelIsa)isa, matrix_columns(&W), NULL, 1, in, 0, 64, 64, KERNEL_STORE, NULL, stored, 64);
        ck_assert(memcmp(added, fresh, sizeof added) == 0);
        ck_assert(signbit(stored[1]) && !signbit(fresh[1])); /* the underflowing -0.0 */
        for (int i = 0; i < 64; i++) added[i] = 0.0, fresh[i] = NAN;
    }
    matrix_free_all(&list);
}
END_TEST

/* kernel_fan_out (every instruction set): one chain's values given to several units, each with its
 * own bias and the epilogue, other lines untouched; a NaN and a -0.0 among the values. */
START_TEST(test_fan_out) {
    srand(6);
    enum { UNITS = 9 };
    static double c[LD], init[UNITS * LD], got[UNITS * LD];
    double bias[UNITS];
    const uint32_t units[] = {0, 4, 7, 2};
    for (size_t u = 0; u < UNITS; u++) bias[u] = rnd();
    for (size_t i = 0; i < LD; i++) c[i] = rnd();
    c[3] = NAN, c[5] = -0.0, c[9] = -bias[0]; /* unit 0's ReLU at exactly zero */
    for (size_t i = 0; i < UNITS * LD; i++) init[i] = rnd();
    const size_t lens[] = {8, 32, 40, 64, 72, 136};
    for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++)
        for (int e = KERNEL_STORE; e <= KERNEL_GATE; e++)
            for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
                memcpy(got, init, sizeof got);
                kernel_fan_out_isa((KernelIsa)isa, c, lens[li], (KernelEpilogue)e, bias, units, 4, got, LD);
                for (size_t u = 0; u < UNITS; u++) {
                    bool listed = u == 0 || u == 4 || u == 7 || u == 2;
                    for (size_t i = 0; i < LD; i++) {
                        double want = listed && i < lens[li] ? epilogue(c[i], (KernelEpilogue)e, bias[u], init[u * LD + i])
                                                             : init[u * LD + i];
                        ck_assert_msg(memcmp(&want, &got[u * LD + i], sizeof want) == 0, "%s epilogue %d len %zu unit %zu row %zu",
                                      kernel_isa_name((KernelIsa)isa), e, lens[li], u, i);
                    }
                }
            }
}
END_TEST

/* kernel_gather_keys (every instruction set) lists each key's non-zero entries in dim order, -0.0
 * counted as zero, a NaN or a subnormal as not; lines dense and sparse (whole runs of zeros). */
START_TEST(test_gather_keys) {
    srand(11);
    enum { DK = 13, ROWS = 77 };
    static double K[DK * LD];
    uint32_t count[ROWS], dim[ROWS * DK];
    double val[ROWS * DK];
    KeyEntries e = {DK, count, dim, val};
    for (size_t rows = 1; rows <= ROWS; rows += 2) {
        int sparse = rows % 4 == 3 ? 40 : 3; /* one entry in 40, or in 3 */
        for (size_t i = 0; i < DK * LD; i++) {
            int r = rand() % 12;
            K[i] = rand() % sparse ? (r == 0 ? -0.0 : 0.0) : r == 1 ? NAN : r == 2 ? 4.9e-324 : r == 3 ? -0.0 : rnd();
        }
        /* the lines anywhere (here K's lines in another order), read from row o on */
        const double *lines[DK];
        size_t o = rows % 3;
        for (size_t c = 0; c < DK; c++) lines[c] = K + (c * 5) % DK * LD;
        for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
        size_t nonzero = 0;
        for (size_t c = 0; c < DK; c++)
            for (size_t j = 0; j < rows; j++) nonzero += lines[c][o + j] != 0.0;
        ck_assert_uint_eq(kernel_count_nonzero_isa((KernelIsa)isa, lines, o, DK, rows), nonzero);
        kernel_gather_keys_isa((KernelIsa)isa, lines, NULL, o, rows, &e);
        for (size_t j = 0; j < rows; j++) {
            size_t n = 0;
            for (size_t c = 0; c < DK; c++) {
                if (lines[c][o + j] == 0.0) continue;
                ck_assert_uint_lt(n, count[j]);
                ck_assert_uint_eq(dim[j * DK + n], c);
                ck_assert(memcmp(&val[j * DK + n], &lines[c][o + j], sizeof(double)) == 0);
                n++;
            }
            ck_assert_uint_eq(n, count[j]);
        }
        /* scaled lines (a panel column that copies a residual line with weight w): the entries of
           the product line fma(w, x, +0.0), including products that underflow to zero */
        double scale[DK], P[DK * LD];
        const double *plines[DK];
        for (size_t c = 0; c < DK; c++) {
            scale[c] = c % 4 == 0 ? 1.0 : c % 4 == 1 ? -1.0 : c % 4 == 2 ? 0.375 : 1e-300;
            plines[c] = P + c * LD;
            for (size_t j = 0; j < o + rows; j++) P[c * LD + j] = fma(scale[c], lines[c][j], 0.0);
        }
        kernel_gather_keys_isa((KernelIsa)isa, lines, scale, o, rows, &e);
        uint32_t count2[ROWS], dim2[ROWS * DK];
        double val2[ROWS * DK];
        KeyEntries e2 = {DK, count2, dim2, val2};
        kernel_gather_keys_isa(KERNEL_SCALAR, plines, NULL, o, rows, &e2);
        for (size_t j = 0; j < rows; j++) {
            ck_assert_uint_eq(count[j], count2[j]);
            ck_assert(memcmp(dim + j * DK, dim2 + j * DK, count[j] * sizeof *dim) == 0);
            ck_assert(memcmp(val + j * DK, val2 + j * DK, count[j] * sizeof *val) == 0);
        }
        }
    }
}
END_TEST

/* kernel_scores equals its one-lane reference bit for bit (zeros of both signs, a NaN query
 * entry, infinite and NaN key entries, products that underflow to -0.0, every lane count up to a
 * block), and for finite numbers the dense chain over every dim: skipping a product with a zero
 * factor changes nothing. */
START_TEST(test_scores) {
    srand(12);
    enum { DK = 9, KEYS = 20 };
    static double Q[DK * LD], a[KEYS * KERNEL_BLOCK], b[KEYS * KERNEL_BLOCK], Kd[KEYS * DK];
    uint32_t count[KEYS], dim[KEYS * DK];
    double val[KEYS * DK];
    KeyEntries e = {DK, count, dim, val};
    const double *lines[DK];
    for (size_t c = 0; c < DK; c++) lines[c] = Q + c * LD;
    for (int round = 0; round < 40; round++)
        for (size_t lanes = 1; lanes <= KERNEL_BLOCK; lanes += 1 + (size_t)(round % 5)) {
            bool nan = round % 10 == 3, wild_keys = round % 10 == 5, tiny = round % 10 == 6;
            double scale = tiny ? 1e-170 : 1.0; /* products of two such entries underflow */
            for (size_t i = 0; i < DK * LD; i++) Q[i] = rand() % 3 ? 0.0 : rand() % 7 ? rnd() * scale : -0.0;
            if (nan) Q[(size_t)(rand() % DK) * LD + (size_t)rand() % lanes] = NAN;
            for (size_t j = 0; j < KEYS; j++) {
                count[j] = 0;
                for (size_t c = 0; c < DK; c++) {
                    Kd[j * DK + c] = rand() % 2 ? 0.0 : rnd() * scale;
                    if (wild_keys && Kd[j * DK + c] != 0.0 && rand() % 3 == 0)
                        Kd[j * DK + c] = rand() % 3 == 0 ? NAN : rand() % 2 ? INFINITY : -INFINITY;
                    if (Kd[j * DK + c] != 0.0) dim[j * DK + count[j]] = (uint32_t)c, val[j * DK + count[j]++] = Kd[j * DK + c];
                }
            }
            kernel_scores_isa(KERNEL_SCALAR, &e, KEYS, KERNEL_NOT_CAUSAL, lines, 0, lanes, b);
            /* a causal block (lane 0 at row `first`) gives the same scores from key j's first lane
               kernel_attend reads: j - first rounded down to 8 */
            size_t first = round % 4 == 1 ? (size_t)(rand() % 6) : KERNEL_NOT_CAUSAL;
            for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
                for (size_t i = 0; i < KEYS * KERNEL_BLOCK; i++) a[i] = 12345.0; /* what was not written shows */
                kernel_scores_isa((KernelIsa)isa, &e, KEYS, first, lines, 0, lanes, a);
                for (size_t j = 0; j < KEYS; j++) {
                    size_t from = first == KERNEL_NOT_CAUSAL || j <= first ? 0 : (j - first) / 8 * 8;
                    if (from < lanes)
                        ck_assert_msg(memcmp(a + j * KERNEL_BLOCK + from, b + j * KERNEL_BLOCK + from,
                                             (lanes - from) * sizeof *a) == 0,
                                      "scores %s lanes %zu first %zu", kernel_isa_name((KernelIsa)isa), lanes, first);
                }
            }
            for (size_t j = 0; j < KEYS; j++) {
                for (size_t q = 0; q < lanes && !nan && !wild_keys && !tiny; q++) {
                    double acc = 0.0;
                    for (size_t c = 0; c < DK; c++) acc = fma(Kd[j * DK + c], Q[c * LD + q], acc);
                    ck_assert(memcmp(&acc, &b[j * KERNEL_BLOCK + q], sizeof acc) == 0);
                }
            }
        }
}
END_TEST

/* kernel_attend equals its one-lane reference bit for bit: random scores with ties, signed zeros
 * and NaNs, causal or not, BOS light or heavy, values that are +0.0 past BOS (a selector width's),
 * every lane count up to a block. */
START_TEST(test_attend) {
    srand(13);
    enum { KEYS = 70, DV = 3 };
    static double S[KEYS * KERNEL_BLOCK], V[DV * LD], a[DV * LD], b[DV * LD];
    uint8_t masks[KERNEL_BLOCK / 8 * KEYS];
    uint32_t keys[KERNEL_BLOCK / 8 * KEYS];
    for (int round = 0; round < 200; round++) {
        size_t lanes = 1 + (size_t)rand() % KERNEL_BLOCK, n = 1 + (size_t)rand() % KEYS;
        AttendKeys k = {n, round % 2 == 1, (size_t)rand() % n, round % 4 < 2 ? 0.25 : 0.0,
                        round % 3 == 0 ? 0.0 : 1023.0};
        if (k.causal) /* as forward.c runs them: the keys up to the last query's row */
            k.first = (size_t)rand() % (KEYS - lanes + 1), k.n = k.first + lanes;
        for (size_t i = 0; i < KEYS * KERNEL_BLOCK; i++) S[i] = (double)(rand() % 5) - 2.0 + (rand() % 7 ? 0.0 : 1e-9);
        if (round % 10 == 1) S[(size_t)rand() % (n * KERNEL_BLOCK)] = -0.0;
        if (round % 10 == 2) S[(size_t)rand() % (n * KERNEL_BLOCK)] = NAN;
        if (round % 20 == 5) S[(size_t)rand() % lanes] = NAN; /* BOS's score */
        for (size_t i = 0; i < DV * LD; i++) V[i] = rand() % 4 ? rnd() : -0.0;
        if (round % 3 == 1) /* a selector width's value: +0.0 (or -0.0) past BOS, BOS's of either sign */
            for (size_t c = 0; c < DV; c++)
                for (size_t j = 0; j < LD; j++)
                    V[c * LD + j] = j ? (round / 3 % 2 ? -0.0 : 0.0) : rand() % 3 == 0 ? -0.0 : rand() % 2 ? -rnd() : rnd();
        size_t dv = (size_t)round % (DV + 1);
        for (size_t i = 0; i < DV * LD; i++) b[i] = 42.0;
        kernel_attend_isa(KERNEL_SCALAR, S, &k, lanes, V, LD, dv, b, LD, masks, keys);
        for (int isa = KERNEL_SCALAR + 1; isa <= (int)kernel_isa(); isa++) {
            for (size_t i = 0; i < DV * LD; i++) a[i] = 42.0;
            kernel_attend_isa((KernelIsa)isa, S, &k, lanes, V, LD, dv, a, LD, masks, keys);
            ck_assert_msg(memcmp(a, b, sizeof a) == 0, "attend %s round %d", kernel_isa_name((KernelIsa)isa), round);
        }
    }
}
END_TEST

/* kernel_one_hot (every instruction set) is model_block_one_hot row by row: rows with one entry
 * near 1 and the rest near 0, two near 1, none, an entry off, NaN (neither a one nor off), entries
 * exactly at the tolerance and just past it; every row count up to 70 (lanes past the rows not
 * read: the lines end there). */
START_TEST(test_one_hot) {
    srand(14);
    enum { COUNT = 7, ROWS = 70 };
    const double tol = 1e-6, near[] = {0.0, -0.0, 1e-7, -1e-6, 1.0, 1.0 + 1e-6, 1.0 - 5e-7, 2e-6, 0.5, NAN, 1.0 + 2e-6};
    double *lines = malloc(COUNT * ROWS * sizeof *lines);
    uint32_t want[ROWS], got[ROWS + 8];
    for (int round = 0; round < 60; round++) {
        for (size_t j = 0; j < ROWS; j++) {
            size_t one = (size_t)rand() % (COUNT + 1); /* COUNT: no one */
            for (size_t c = 0; c < COUNT; c++) lines[c * ROWS + j] = c == one ? 1.0 : 0.0;
            if (rand() % 3 == 0) lines[(size_t)rand() % COUNT * ROWS + j] = near[rand() % (sizeof near / sizeof *near)];
        }
        size_t rows = 1 + (size_t)rand() % ROWS;
        for (size_t j = 0; j < rows; j++) {
            double x[COUNT];
            size_t hot = 0;
            for (size_t c = 0; c < COUNT; c++) x[c] = lines[c * ROWS + j];
            want[j] = model_block_one_hot(x, 0, COUNT, &hot) ? (uint32_t)hot : KERNEL_NOT_ONE_HOT;
        }
        for (int isa = KERNEL_SCALAR; isa <= (int)kernel_isa(); isa++) {
            for (size_t j = 0; j < ROWS + 8; j++) got[j] = 12345;
            kernel_one_hot_isa((KernelIsa)isa, lines, ROWS, COUNT, rows, tol, got);
            for (size_t j = 0; j < rows; j++)
                ck_assert_msg(got[j] == want[j], "%s rows %zu row %zu: %u vs %u", kernel_isa_name((KernelIsa)isa), rows, j,
                              got[j], want[j]);
            ck_assert_uint_eq(got[rows], 12345); /* nothing written past the rows */
        }
    }
    free(lines);
}
END_TEST

/* kernel_transpose moves rows x cols of T key-major into S, every shape up to a block. */
START_TEST(test_transpose) {
    static double T[KERNEL_BLOCK * KERNEL_BLOCK], S[(KERNEL_BLOCK + 4) * KERNEL_BLOCK];
    for (size_t i = 0; i < KERNEL_BLOCK * KERNEL_BLOCK; i++) T[i] = (double)i;
    for (size_t rows = 1; rows <= KERNEL_BLOCK; rows += 3)
        for (size_t cols = 1; cols <= KERNEL_BLOCK; cols += 5) {
            memset(S, 0, sizeof S);
            kernel_transpose(T, rows, cols, S);
            for (size_t q = 0; q < rows; q++)
                for (size_t j = 0; j < cols; j++) ck_assert(S[j * KERNEL_BLOCK + q] == T[q * KERNEL_BLOCK + j]);
        }
}
END_TEST

int main(void) {
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("kernels");
    tcase_add_test(tc, test_isas_agree);
    tcase_add_test(tc, test_transpose);
    tcase_add_test(tc, test_relu_edges);
    tcase_add_test(tc, test_gather_keys);
    tcase_add_test(tc, test_fan_out);
    tcase_add_test(tc, test_epilogue);
    tcase_add_test(tc, test_fresh_store);
    tcase_add_test(tc, test_scores);
    tcase_add_test(tc, test_attend);
    tcase_add_test(tc, test_one_hot);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
