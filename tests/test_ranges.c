/* model_tighten_bounds (runtime/ranges.h): every residual entry of every input run stays within
 * the bound (up to the forward pass's own rounding), and a comparison of real values built from
 * two steep units is bounded by its values, not its slopes. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "compile_fixture.h"
#include "runtime/forward.h"
#include "runtime/precision.h"
#include "runtime/ranges.h"

typedef struct Case {
    const char *src, *vocab;
    size_t max_len;
    double lo, hi; /* real-valued tokens when lo < hi */
} Case;

static const Case cases[] = {
    {"r = aggregate(select(indices, length - indices - 1, ==), tokens);", "abc", 5, 0, 0},
    {"r = selector_width(select(tokens, tokens, ==));", "abc", 5, 0, 0},
    {"p = select(indices, indices, <=);\nb = aggregate(p, indicator(tokens == \"(\")) - aggregate(p, indicator(tokens == \")\"));\n"
     "r = \"T\" if b == 0 else \"P\";",
     "()", 6, 0, 0},
    {"tokens = tokens_float; r = 1 if tokens > 0 else tokens;", NULL, 4, -2, 2},
    {"tokens = tokens_float; m = aggregate(select(indices, indices, <=), tokens); r = round(m * 4) + (m > 0);", NULL, 4, -1, 1},
};

static Compiled *compile_case(const Case *k) {
    CodegenOptions o = {.vocab_spec = k->vocab, .max_len = k->max_len};
    if (k->lo < k->hi) o.have_range = true, o.range_lo = k->lo, o.range_hi = k->hi;
    Compiled *c = compile_with(k->src, "r", o);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    return c;
}

START_TEST(test_bounds_hold) {
    const Case *k = &cases[_i];
    Compiled *c = compile_case(k);
    const Model *m = &c->model;
    size_t D = m->d_model, N = m->max_len;
    double *bound = calloc(D, sizeof *bound), *loose = calloc(D, sizeof *loose);
    model_value_bounds(m, loose);
    memcpy(bound, loose, D * sizeof *bound);
    model_tighten_bounds(m, bound);
    for (size_t d = 0; d < D; d++) ck_assert_msg(bound[d] <= loose[d], "dim %zu", d);
    Workspace ws;
    char err[256];
    ck_assert(workspace_init(&ws, m, err, sizeof err));
    double *X = calloc((N + 1) * D, sizeof *X);
    size_t ids[16];
    uint64_t seed = 12345;
    for (int trial = 0; trial < 400; trial++) {
        size_t n = 1 + (size_t)trial % N;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(seed >> 11) * 0x1p-53;
            if (m->numeric_tokens) {
                ids[i] = 0;
                ws.token_values[i] = k->lo + (k->hi - k->lo) * (trial % 7 == 0 ? (double)(trial % 3) / 2 : u);
            } else {
                ids[i] = (size_t)(u * (double)m->n_vocab);
            }
        }
        model_forward(m, ids, n, 0, m->n_layers, X, &ws);
        for (size_t r = 0; r <= n; r++)
            for (size_t d = 0; d < D; d++)
                ck_assert_msg(fabs(X[r * D + d]) <= bound[d] * (1 + 1e-9) + 1e-9, "%s: row %zu dim %zu (%s): %.17g > %.17g",
                              k->src, r, d, m->labels[d], X[r * D + d], bound[d]);
    }
    free(X);
    workspace_free(&ws);
    free(bound);
    free(loose);
    compiled_free(c);
}
END_TEST

/* `1 if tokens > 0 else tokens` on [-2, 2]: the output is bounded by a few, not by the slope of
 * the comparison's step (model_value_bounds: about 2e6). */
START_TEST(test_steep_step_bounded) {
    Compiled *c = compile_case(&cases[3]);
    const Model *m = &c->model;
    double *bound = calloc(m->d_model, sizeof *bound), loose = 0, tight = 0;
    model_value_bounds(m, bound);
    for (size_t d = 0; d < m->d_model; d++) loose += fabs(m->out_readout[d]) * bound[d];
    model_tighten_bounds(m, bound);
    for (size_t d = 0; d < m->d_model; d++) tight += fabs(m->out_readout[d]) * bound[d];
    ck_assert_msg(loose > 1e5 && tight <= 4, "readout bound %g (model_value_bounds %g)", tight, loose);
    free(bound);
    compiled_free(c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ranges");
    TCase *tc = tcase_create("ranges");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_bounds_hold, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_test(tc, test_steep_step_bounded);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
