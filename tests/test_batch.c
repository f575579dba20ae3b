/* Batches (runtime/forward.h model_run_batch, runtime/parallel.h) give every input exactly the
 * outcome model_run gives it alone, and the precision analysis (runtime/precision.h) on compiled
 * models. */
#include <check.h>
#include <string.h>

#include "runtime/parallel.h"
#include "runtime/precision.h"
#include "tests/check_main.h"
#include "tests/compile_fixture.h"

/* Prefix means (floats), a sort, and a program that raises on some inputs. */
static const char *const PROGRAMS[][3] = {
    {"m = aggregate(select(indices, indices, <=), tokens_int);", "m", "0..5"},
    {"tokens = tokens_int;\nprecedes = select(tokens, tokens, <) or (select(tokens, tokens, ==) and "
     "select(indices, indices, <));\ntarget = selector_width(precedes);\ns = aggregate(select(target, indices, ==), "
     "tokens);", "s", "0..5"},
    {"d = {\"a\": 1, \"b\": 2};\nx = d[tokens];", "x", "abc"},
};

static bool same_value(Value a, Value b) {
    if (a.kind != b.kind) return false;
    if (a.kind == VAL_FLOAT) return memcmp(&a.as.f, &b.as.f, sizeof a.as.f) == 0;
    return value_equal(a, b);
}

START_TEST(test_batches_equal_single) {
    Compiled *c = compile_src(PROGRAMS[_i][0], PROGRAMS[_i][1], PROGRAMS[_i][2], 9);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    const Model *m = &c->model;
    enum { K = 300 };
    Arena a;
    arena_init(&a);
    const Value *in[K];
    size_t len[K];
    uint64_t seed = 3;
    for (size_t i = 0; i < K; i++) { /* lengths 0..10: 10 is over max_len, an error of its own */
        len[i] = verify_rng_next(&seed) % 11;
        Value *v = ARENA_ARRAY(&a, Value, len[i] + 1);
        for (size_t j = 0; j < len[i]; j++) v[j] = m->vocab[verify_rng_next(&seed) % m->n_vocab];
        in[i] = v;
    }
    char err[1024];
    Workspace one, tight;
    ck_assert(workspace_init(&one, m, err, sizeof err));
    ck_assert(workspace_init_rows(&tight, m, 1, err, sizeof err)); /* a batch of one sequence at a time */
    ModelOutcome batch[K], small[K], pooled[K];
    model_run_batch(m, &one, in, len, K, &a, batch);
    model_run_batch(m, &tight, in, len, K, &a, small);
    ModelRunner pool;
    ck_assert(model_runner_init(&pool, m, 2, err, sizeof err));
    model_runner_run(&pool, m, in, len, K, pooled);
    size_t failed = 0;
    for (size_t i = 0; i < K; i++) {
        Value *out = NULL;
        bool ok = model_run(m, &one, in[i], len[i], &a, &out, err, sizeof err);
        const ModelOutcome *o[3] = {&batch[i], &small[i], &pooled[i]};
        for (int k = 0; k < 3; k++) {
            ck_assert_int_eq(o[k]->ok, ok);
            if (!ok) {
                ck_assert_str_eq(o[k]->err, err);
                continue;
            }
            for (size_t j = 0; j < len[i]; j++) ck_assert(same_value(o[k]->out[j], out[j]));
        }
        failed += !ok;
    }
    ck_assert_uint_gt(failed, 0);   /* the over-long inputs at least */
    ck_assert_uint_lt(failed, K);
    model_runner_free(&pool);
    workspace_free(&one);
    workspace_free(&tight);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* Small compiled models are safe in float64 with room to spare; a head with tie tolerance 0
 * cannot be shown safe (any error could split a tie); a real-valued output is not covered. */
START_TEST(test_precision) {
    Compiled *c = compile_src(PROGRAMS[1][0], PROGRAMS[1][1], PROGRAMS[1][2], 9);
    ck_assert(c->ok);
    ModelPrecision p64, p32;
    model_precision(&c->model, PRECISION_U64, false, &p64);
    model_precision(&c->model, PRECISION_U32, true, &p32);
    ck_assert_msg(p64.safe && p64.worst < 1e-6, "%g %s", p64.worst, p64.worst_what);
    ck_assert(p32.worst > p64.worst * 1e6); /* the bounds scale with u (2^29 apart) */
    c->model.layers[c->model.n_layers - 1].heads[0].tie_tol = 0.0;
    model_precision(&c->model, PRECISION_U64, false, &p64);
    ck_assert(!p64.safe);
    compiled_free(c);
    Compiled *r = compile_with("y = aggregate(select(indices, indices, <=), tokens_float);", "y",
                               (CodegenOptions){.max_len = 4, .have_range = true, .range_lo = 0, .range_hi = 1});
    ck_assert_msg(r->ok, "%s", compiled_first_error(r));
    model_precision(&r->model, PRECISION_U64, false, &p64);
    ck_assert(!p64.safe && p64.uncovered[0]);
    compiled_free(r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_batches_equal_single, 0, 3);
    tcase_add_test(tc, test_precision);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
