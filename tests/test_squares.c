/* Squares by depth (codegen/squares.c): the levels chosen for a reach and a tolerance, the
 * identity they rest on (checked here with the interpolants written out directly, not with the
 * compiler's units), and products compiled with them: a model against the reference on random
 * inputs and on the knots of the first level, within the bound it states, at sizes one MLP of
 * chords cannot reach. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/internal.h"
#include "tests/check_main.h"
#include "tests/compile_fixture.h"

/* I_h(u): the chord of u^2 between the multiples of h around u. */
static double chords(double u, double h) {
    double a = floor(u / h) * h, b = a + h;
    return a * a + (u - a) * (b * b - a * a) / h;
}

/* tri(v): the distance from v to the nearest even integer. */
static double tri(double v) { return fabs(v - 2 * round(v / 2)); }

/* psi(t) = t - I_{1/K}(t^2) on [0, 1]. */
static double psi(double t, double K) { return t - chords(t, 1 / K); }

START_TEST(test_levels_choice) {
    /* one MLP while the knots are few, or when not deep */
    SquareLevels sq = square_levels(4, 1e-6, true);
    ck_assert_int_eq(sq.depth, 1);
    ck_assert(sq.h == sq.h1 && sq.h == 2 * sqrt(1e-6));
    sq = square_levels(100, 1e-12, false);
    ck_assert_int_eq(sq.depth, 1);
    /* deep: the fewest levels, at least as fine as asked */
    double asks[][2] = {{4, 1e-9}, {100, 1e-12}, {9.8, 1e-10}, {1e4, 1e-14}, {1e-3, 1e-30}};
    for (size_t i = 0; i < sizeof asks / sizeof *asks; i++) {
        double U = asks[i][0], tol = asks[i][1];
        sq = square_levels(U, tol, true);
        ck_assert_msg(sq.depth >= 2 && sq.depth <= SQ_MAX_DEPTH, "U %g tol %g: depth %d", U, tol, sq.depth);
        /* as fine as asked, or as float64's rounding of the squares makes useful */
        ck_assert_msg(sq.h <= fmax(2 * sqrt(tol), 2 * sqrt(16 * DBL_EPSILON * U * U)), "U %g tol %g: h %g", U, tol, sq.h);
        ck_assert_double_eq_tol(sq.h1, U / SQ_FIRST_STEPS, 1e-12 * U);
        ck_assert_double_eq_tol(sq.h * pow(sq.k, sq.depth - 1), sq.h1, 1e-9 * sq.h1);
        if (sq.depth > 2) /* one level fewer would not have reached it */
            ck_assert(SQ_FIRST_STEPS * pow(SQ_REFINE, sq.depth - 2) < ceil(U / (2 * sqrt(tol))));
        /* and never deeper than float64's rounding of the squares makes useful (out23b-003) */
        ck_assert_msg(SQ_FIRST_STEPS * pow(SQ_REFINE, sq.depth - 2) < ceil(U / (2 * sqrt(16 * DBL_EPSILON * U * U))),
                      "U %g tol %g: depth %d", U, tol, sq.depth);
    }
    /* a tolerance past float64's resolution: the depth that resolves it, no deeper */
    sq = square_levels(1e6, 1e-40, true);
    ck_assert_msg(sq.depth >= 2 && sq.depth == square_levels(1e6, 1e-20, true).depth, "depth %d", sq.depth);
}
END_TEST

/* I_{h1}(u) - sum_s h_s^2 psi(tri(u / h_s)) is I_{h_D}(u), within h_D^2 / 4 of u^2, and
 * tri(K tri(v)) = tri(K v): what the levels add up to, at every kind of point (knots of each
 * level, between them, negative u). */
START_TEST(test_levels_identity) {
    const double K = 8, h1 = 0.75;
    const int depth = 3;
    for (int i = -4000; i <= 4000; i++) {
        double u = i * 0.00123 + (i % 7) * 1e-5, sum = chords(u, h1), h = h1, w = tri(u / h1);
        for (int s = 1; s < depth; s++) {
            ck_assert_double_eq_tol(w, tri(u / h), 1e-9);
            sum -= h * h * psi(w, K);
            w = tri(K * w);
            h /= K;
        }
        ck_assert_msg(fabs(sum - chords(u, h)) <= 1e-12, "u %g: %.17g vs %.17g", u, sum, chords(u, h));
        ck_assert_msg(sum >= u * u - 1e-12 && sum - u * u <= h * h / 4 + 1e-12, "u %g", u);
    }
}
END_TEST

/* The rounding the later levels add grows with the reach and the first level's knots, and is
 * none with one level. */
START_TEST(test_levels_rounding) {
    SquareLevels one = square_levels(4, 1e-6, true);
    ck_assert(square_levels_rounding(&one, 4) == 0);
    SquareLevels a = square_levels(4, 1e-12, true), b = square_levels(40, 1e-12, true);
    double ra = square_levels_rounding(&a, 4), rb = square_levels_rounding(&b, 40);
    ck_assert_msg(ra > 0 && rb > ra && rb < 1e-6 * 40 * 40, "%g %g", ra, rb);
}
END_TEST

/* A product over -50..50 asked within 1e-8: one MLP of chords cannot prove it (its sums round
 * by more), squares by depth do, in more layers and far fewer units; the model agrees with the
 * reference within its bound on random inputs and at the first level's knots and next to them. */
START_TEST(test_deep_product) {
    const char *src = "r = tokens_float * aggregate(select(indices, indices, <=), tokens_float);";
    Compiled *c = compile_with(src, "r", (CodegenOptions){.max_len = 7, .have_range = true, .range_lo = -50,
                                                          .range_hi = 50, .real_tol = 1e-8});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    ck_assert_msg(c->model.out_error_bound + c->model.out_error_rel <= 1e-8, "bound %g + %g |v|",
                  c->model.out_error_bound, c->model.out_error_rel);
    ck_assert_uint_ge(c->model.n_layers, 2);
    for (size_t l = 0; l < c->model.n_layers; l++) ck_assert_uint_le(c->model.layers[l].mlp.w1.cols, 8192);
    Arena a;
    arena_init(&a);
    Workspace ws;
    char err[256];
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    uint64_t seed = 7;
    for (int t = 0; t < 3000; t++) {
        size_t n = 1 + (size_t)t % 7;
        Value in[7];
        for (size_t j = 0; j < n; j++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            double r = (double)(seed >> 11) / 9007199254740992.0;
            /* every third input on a knot of the first level (multiples of 100 / 64 of the
             * scaled sum), or a few ulps off one */
            double x = t % 3 ? -50 + 100 * r : (floor(r * 64) - 32) * (100.0 / 64) / 2 + (t % 2 ? 0 : 1e-13 * (r - 0.5));
            in[j] = value_float(fmax(-50, fmin(50, x)));
        }
        ck_assert_msg(expect_agree_or_margin(c, &ws, &a, in, n, "product", t), "input %d refused", t);
    }
    workspace_free(&ws);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* What asked more than float64's rounding allows still compiles, with the bound it proves, and
 * says so (the search keeps the least bound of either kind of squares). */
START_TEST(test_beyond_rounding) {
    Compiled *c = compile_with("r = tokens_float * aggregate(select(indices, indices, <=), tokens_float);", "r",
                               (CodegenOptions){.max_len = 7, .have_range = true, .range_lo = -50, .range_hi = 50,
                                                .real_tol = 1e-12});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    bool warned = false;
    for (size_t i = 0; i < c->diags.count; i++)
        warned = warned || (c->diags.items[i].severity == DIAG_WARNING && strstr(c->diags.items[i].message, "--tol"));
    ck_assert_msg(warned && c->model.out_error_bound > 1e-12, "bound %g, no warning", c->model.out_error_bound);
    compiled_free(c);
}
END_TEST

/* Outsider findings out23-001..003: squares by depth also for a square of one s-op (it went the
 * way of a function of one real, refused past its knots), for a product whose result only feeds a
 * comparison (a non-real output was built with one MLP per square only), and a --tol too fine
 * for any function states the least bound it proves instead of refusing. */
START_TEST(test_outsider_out23) {
    static const struct { const char *src; double lo, hi, tol; bool real_out; } k[] = {
        {"r = tokens_float * tokens_float;", -1, 1, 1e-10, true},
        {"first = aggregate(select(indices, indices, <=), tokens_float); p = tokens_float * first;\n"
         "r = 1 if p > 0.5 else 0;", 0, 100, 1e-9, false},
        {"r = 2.718281828459045 ^ tokens_float;", -30, 0, 1e-8, true},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        Compiled *c = compile_with(k[i].src, "r", (CodegenOptions){.max_len = 6, .have_range = true, .range_lo = k[i].lo,
                                                                    .range_hi = k[i].hi, .real_tol = k[i].tol});
        ck_assert_msg(c->ok, "%zu: %s", i, compiled_first_error(c));
        if (k[i].real_out) /* within --tol, or above it with the bound stated */
            ck_assert_msg(c->model.out_error_bound + c->model.out_error_rel > 0, "%zu: no bound", i);
        Arena a;
        arena_init(&a);
        Workspace ws;
        char err[256];
        ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
        uint64_t seed = 11 + i;
        for (int t = 0; t < 1000; t++) {
            size_t n = 1 + (size_t)t % 6;
            Value in[6];
            for (size_t j = 0; j < n; j++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                in[j] = value_float(k[i].lo + (k[i].hi - k[i].lo) * ((double)(seed >> 11) / 9007199254740992.0));
            }
            expect_agree_or_margin(c, &ws, &a, in, n, k[i].src, t);
        }
        workspace_free(&ws);
        arena_free(&a);
        compiled_free(c);
    }
}
END_TEST

/* Outsider findings out23b: a square with no one-MLP share at all (x * x over -1e8..1e8) went
 * by depth without the warning that its bound is above --tol (001); --tol 1e-100 was refused
 * (002); x / 2 ^ x refused every x below 27 over -50..50, its divisor's check as wide as the
 * divisor's largest error, 1.2e8 (004): now a margin past 8.9e-16, x = -19 answered. */
static bool warned_tol(const Compiled *c) {
    for (size_t i = 0; i < c->diags.count; i++)
        if (c->diags.items[i].severity == DIAG_WARNING && strstr(c->diags.items[i].message, "above the")) return true;
    return false;
}

START_TEST(test_outsider_out23b) {
    Compiled *c = compile_with("r = tokens_float * tokens_float;", "r",
                               (CodegenOptions){.max_len = 3, .have_range = true, .range_lo = -1e8, .range_hi = 1e8});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    ck_assert_msg(c->model.out_error_bound > 1e-6 && warned_tol(c), "bound %g, warned %d", c->model.out_error_bound,
                  warned_tol(c));
    compiled_free(c);
    c = compile_with("m = aggregate(select(indices, indices, <=), tokens_float); r = m * tokens_float;", "r",
                     (CodegenOptions){.max_len = 3, .have_range = true, .range_lo = -50, .range_hi = 50, .real_tol = 1e-100});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    ck_assert(warned_tol(c));
    compiled_free(c);
    c = compile_with("x = tokens_float; r = x / (2.0 ^ x);", "r",
                     (CodegenOptions){.max_len = 3, .have_range = true, .range_lo = -50, .range_hi = 50});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    Arena a;
    arena_init(&a);
    Workspace ws;
    char err[256];
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    Value in[1] = {value_float(-19)};
    ck_assert_msg(expect_agree_or_margin(c, &ws, &a, in, 1, "x / 2 ^ x at -19", 0), "-19 refused");
    workspace_free(&ws);
    compiled_free(c);
    /* and 1 / 2 ^ x, a function of the real 2 ^ x: its jump's margin at 2 ^ x's error there (it
     * refused every x below 29, 2 ^ x's largest error being 5e8) */
    c = compile_with("x = tokens_float; r = 1.0 / (2.0 ^ x);", "r",
                     (CodegenOptions){.max_len = 3, .have_range = true, .range_lo = -50, .range_hi = 50});
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    ck_assert_msg(expect_agree_or_margin(c, &ws, &a, in, 1, "1 / 2 ^ x at -19", 0), "-19 refused");
    for (int t = 0; t <= 100; t++) { /* refused or within the bound everywhere */
        Value v[1] = {value_float(-50 + t)};
        expect_agree_or_margin(c, &ws, &a, v, 1, "1 / 2 ^ x", t);
    }
    workspace_free(&ws);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("squares");
    TCase *t = tcase_create("squares");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_levels_choice);
    tcase_add_test(t, test_levels_identity);
    tcase_add_test(t, test_levels_rounding);
    tcase_add_test(t, test_deep_product);
    tcase_add_test(t, test_beyond_rounding);
    tcase_add_test(t, test_outsider_out23);
    tcase_add_test(t, test_outsider_out23b);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    return run_suite(suite());
}
