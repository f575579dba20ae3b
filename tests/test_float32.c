/* The float32 path (runtime/forward32.h, runtime/kernels32.h): its kernels against the
 * one-element reference bit for bit; on models shown safe in float32, every input's outcome is
 * the same alone, in any batch and on every core, and the one float64 gives; models whose
 * margins are too thin are refused and stay in float64. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "runtime/forward32.h"
#include "runtime/kernels32.h"
#include "runtime/kernels_avx2.h"
#include "runtime/parallel.h"
#include "runtime/precision.h"
#include "tests/check_main.h"
#include "tests/compile_fixture.h"

static float random_float(uint64_t *seed) {
    uint64_t r = verify_rng_next(seed);
    if (r % 7 == 0) return 0.0f;
    return (float)((double)(r >> 11) * 0x1p-53 * 4.0 - 2.0) * (r % 5 == 0 ? 1e3f : 1.0f);
}

/* Every epilogue, with and without a starting value, at lengths around the block sizes (64 and
 * 16 rows, the last 8 masked), a non-zero base: AVX-512 and AVX2 (where there are) = the reference. */
START_TEST(test_kernel32_matches_reference) {
    enum { ROWS = 40, COLS = 9, LD = 208 };
    static float in[ROWS * LD], bias[COLS], init[COLS * LD], ref[COLS * LD], got[COLS * LD], before[COLS * LD];
    static uint32_t rows[COLS][ROWS];
    static float vals[COLS][ROWS];
    uint64_t seed = 11;
    for (size_t i = 0; i < ROWS * LD; i++) in[i] = random_float(&seed);
    MatrixColumn32 cols[COLS];
    for (size_t c = 0; c < COLS; c++) {
        uint32_t n = 0;
        for (uint32_t r = 0; r < ROWS; r++)
            if (verify_rng_next(&seed) % 3 == 0) {
                rows[c][n] = r + 5; /* base 5 */
                vals[c][n++] = random_float(&seed);
            }
        cols[c] = (MatrixColumn32){n, rows[c], vals[c]};
        bias[c] = random_float(&seed);
    }
    const uint32_t which[] = {8, 0, 3, 5};
    static const size_t lens[] = {8, 16, 24, 56, 64, 72, 136, 200};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int e = KERNEL_STORE; e <= KERNEL_GATE; e++)
            for (int with_init = 0; with_init < 2; with_init++) {
                if (with_init && e != KERNEL_STORE) continue;
                for (size_t i = 0; i < COLS * LD; i++) init[i] = ref[i] = got[i] = random_float(&seed);
                for (int w = 0; w < 2; w++) {
                    const uint32_t *wh = w ? which : NULL;
                    size_t n = w ? 4 : COLS;
                    memcpy(before, ref, sizeof before);
                    kernel32_columns_scalar(cols, wh, n, in, 5, LD, lens[li], (KernelEpilogue)e, bias,
                                            with_init ? init : NULL, LD, ref, LD);
                    kernel32_columns(cols, wh, n, in, 5, LD, lens[li], (KernelEpilogue)e, bias,
                                     with_init ? init : NULL, LD, got, LD);
                    ck_assert_msg(memcmp(ref, got, sizeof ref) == 0, "len %zu epilogue %d init %d which %d", lens[li],
                                  e, with_init, w);
#ifdef KERNEL_HAVE_AVX2
                    if (kernel_isa() >= KERNEL_AVX2) { /* on an AVX-512 processor too */
                        memcpy(got, before, sizeof got);
                        kernel_avx2_columns32(cols, wh, n, in, 5, LD, lens[li], (KernelEpilogue)e, bias,
                                              with_init ? init : NULL, LD, got, LD);
                        ck_assert_msg(memcmp(ref, got, sizeof ref) == 0, "avx2 len %zu epilogue %d", lens[li], e);
                    }
#endif
                }
            }
}
END_TEST

/* The reference itself: a chain is fmaf from +0.0f in row order, then the epilogue. */
START_TEST(test_kernel32_reference_arithmetic) {
    const uint32_t row[3] = {0, 1, 2};
    const float val[3] = {3.0f, 0.1f, -1e-8f}, x[3 * 8] = {[0] = 1.5f, [8] = 7.0f, [16] = 3.0f};
    MatrixColumn32 col = {3, row, val};
    float out[8] = {2.0f}, bias = 0.25f;
    kernel32_columns_scalar(&col, NULL, 1, x, 0, 8, 8, KERNEL_GATE, &bias, NULL, 0, out, 8);
    float acc = fmaf(val[2], 3.0f, fmaf(val[1], 7.0f, fmaf(val[0], 1.5f, 0.0f)));
    ck_assert(out[0] == 2.0f * (acc + bias));
    ck_assert(out[1] == 0.0f * (0.0f + bias));
}
END_TEST

/* Programs float32 is shown safe for at these lengths (heads, MLPs, maps, numerical outputs). */
static const struct {
    const char *src, *out, *vocab;
    size_t max_len;
} SAFE[] = {
    {"x = selector_width(select(tokens, tokens, ==));", "x", "abcd", 8},
    {"x = selector_width(select(tokens, tokens, ==));", "x", "abcd", 16},
    {"x = selector_width(select(tokens, \"a\", ==));", "x", "abc", 16},
    {"x = selector_width(select(tokens, tokens, <));", "x", "abcd", 8},
    {"w = selector_width(select(tokens, tokens, ==)); x = w > 2;", "x", "abcd", 8},
    {"x = tokens == \"a\";", "x", "abc", 8},
    {"tokens = tokens_int; x = tokens + 1;", "x", "0..5", 9},
};

static bool same_outcome(const ModelOutcome *a, const ModelOutcome *b, size_t n) {
    if (a->ok != b->ok) return false;
    if (!a->ok) return strcmp(a->err, b->err) == 0;
    for (size_t j = 0; j < n; j++) {
        if (a->out[j].kind != b->out[j].kind) return false;
        if (a->out[j].kind == VAL_FLOAT ? memcmp(&a->out[j].as.f, &b->out[j].as.f, sizeof(double)) != 0
                                        : !value_equal(a->out[j], b->out[j]))
            return false;
    }
    return true;
}

START_TEST(test_float32_batches_equal_single_and_float64) {
    Compiled *c = compile_src(SAFE[_i].src, SAFE[_i].out, SAFE[_i].vocab, SAFE[_i].max_len);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    const Model *m = &c->model;
    enum { K = 400 };
    Arena a;
    arena_init(&a);
    const Value *in[K];
    size_t len[K];
    uint64_t seed = 5 + (uint64_t)_i;
    for (size_t i = 0; i < K; i++) { /* lengths 0..max_len + 1: the last is an error of its own */
        len[i] = verify_rng_next(&seed) % (m->max_len + 2);
        Value *v = ARENA_ARRAY(&a, Value, len[i] + 1);
        for (size_t j = 0; j < len[i]; j++) v[j] = m->vocab[verify_rng_next(&seed) % m->n_vocab];
        in[i] = v;
    }
    char err[1024];
    Workspace f32, tight, f64;
    ck_assert(workspace_init(&f32, m, err, sizeof err));
    ck_assert_msg(workspace_use_float32(&f32, m, err, sizeof err), "%s", err);
    ck_assert(f32.f32 != NULL);
    ck_assert(workspace_init_rows(&tight, m, 1, err, sizeof err)); /* one sequence per batch */
    ck_assert(workspace_use_float32(&tight, m, err, sizeof err));
    ck_assert(workspace_init(&f64, m, err, sizeof err));
    ModelRunner pool;
    ck_assert(model_runner_init(&pool, m, 2, err, sizeof err));
    ck_assert(model_runner_use_float32(&pool, m, err, sizeof err));
    ModelOutcome batch[K], small[K], pooled[K], wide[K], alone;
    model_run_batch(m, &f32, in, len, K, &a, batch);
    model_run_batch(m, &tight, in, len, K, &a, small);
    model_runner_run(&pool, m, in, len, K, pooled);
    model_run_batch(m, &f64, in, len, K, &a, wide);
    size_t failed = 0;
    for (size_t i = 0; i < K; i++) {
        model_run_batch(m, &f32, &in[i], &len[i], 1, &a, &alone);
        ck_assert_msg(same_outcome(&batch[i], &alone, len[i]), "input %zu: batch != alone", i);
        ck_assert_msg(same_outcome(&small[i], &alone, len[i]), "input %zu: small batches != alone", i);
        ck_assert_msg(same_outcome(&pooled[i], &alone, len[i]), "input %zu: threads != alone", i);
        ck_assert_msg(same_outcome(&wide[i], &alone, len[i]), "input %zu: float64 != float32", i);
        failed += !alone.ok;
    }
    ck_assert_uint_gt(failed, 0); /* the over-long inputs at least */
    ck_assert_uint_lt(failed, K);
    model_runner_free(&pool);
    workspace_free(&f32);
    workspace_free(&tight);
    workspace_free(&f64);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* Thin margins are refused: a sort at 64 (scores), the first safe program with its tie
 * tolerance set to 1e-9, or its output margin cut 1000-fold, and a real-valued output (not
 * covered). The workspace stays in float64 and says why. */
START_TEST(test_float32_refused) {
    char err[1024];
    Workspace ws;
    Compiled *s = compile_src("tokens = tokens_int;\nprecedes = select(tokens, tokens, <) or (select(tokens, tokens, ==) "
                              "and select(indices, indices, <));\ntarget = selector_width(precedes);\ns = "
                              "aggregate(select(target, indices, ==), tokens);",
                              "s", "0..9", 64);
    ck_assert_msg(s->ok, "%s", compiled_first_error(s));
    ck_assert(workspace_init(&ws, &s->model, err, sizeof err));
    ck_assert(!workspace_use_float32(&ws, &s->model, err, sizeof err));
    ck_assert(ws.f32 == NULL);
    ck_assert_msg(strstr(err, "float32 is not shown safe") && strstr(err, "tie tolerance"), "%s", err);
    workspace_free(&ws);
    compiled_free(s);

    Compiled *c = compile_src(SAFE[0].src, SAFE[0].out, SAFE[0].vocab, SAFE[0].max_len);
    ck_assert(c->ok);
    ModelPrecision p;
    model_precision(&c->model, PRECISION_U32, true, &p);
    ck_assert(p.safe);
    double tol = c->model.layers[0].heads[0].tie_tol, margin = c->model.out_margin;
    c->model.layers[0].heads[0].tie_tol = 1e-9; /* float64 would still be safe: 2^29 finer */
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    ck_assert(!workspace_use_float32(&ws, &c->model, err, sizeof err));
    ck_assert_msg(strstr(err, "scores"), "%s", err);
    workspace_free(&ws);
    c->model.layers[0].heads[0].tie_tol = tol;
    c->model.out_margin = margin * 1e-3;
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    ck_assert(!workspace_use_float32(&ws, &c->model, err, sizeof err));
    ck_assert_msg(strstr(err, "numerical output"), "%s", err);
    workspace_free(&ws);
    compiled_free(c);

    Compiled *r = compile_with("y = aggregate(select(indices, indices, <=), tokens_float);", "y",
                               (CodegenOptions){.max_len = 4, .have_range = true, .range_lo = 0, .range_hi = 1});
    ck_assert_msg(r->ok, "%s", compiled_first_error(r));
    ck_assert(workspace_init(&ws, &r->model, err, sizeof err));
    ck_assert(!workspace_use_float32(&ws, &r->model, err, sizeof err));
    ck_assert_msg(strstr(err, "not covered"), "%s", err);
    workspace_free(&ws);
    compiled_free(r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("float32");
    TCase *tc = tcase_create("float32");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kernel32_matches_reference);
    tcase_add_test(tc, test_kernel32_reference_arithmetic);
    tcase_add_loop_test(tc, test_float32_batches_equal_single_and_float64, 0, (int)(sizeof SAFE / sizeof *SAFE));
    tcase_add_test(tc, test_float32_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
