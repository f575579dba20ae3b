/* Compiled attention-only RASP programs exported as FUT targets (fut/from_model.h): the
 * target's softmax forward pass on the model's embedding must reproduce the compiled model's
 * residual stream (average-hard attention) to ~1e-12 per row, and the model's readout of it must
 * give the compiled model's (and the reference evaluator's) answer on every input up to length 4.
 * A sparse and a random backbone programmed with an exported target reproduce it too; a program
 * with an MLP is refused with a message naming the layer. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "fut/from_model.h"
#include "fut/io.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "runtime/forward.h"
#include "tests/check_main.h"
#include "tests/compile_fixture.h"

/* The exported target computes with softmax at a finite temperature: numbers agree within 1e-9
 * relative (bools and strings exactly). */
static bool loosely_same(Value a, Value b) {
    if (value_is_number(a) && value_is_number(b) && a.kind != VAL_BOOL && b.kind != VAL_BOOL)
        return fabs(value_as_double(a) - value_as_double(b)) <= 1e-9 * fmax(1.0, fabs(value_as_double(b)));
    return a.kind == b.kind && value_equal(a, b);
}

/* FUT targets carry numbers: compile without kind blocks (raspcc --fut-target does the same). */
static Compiled *compile_numbers(const char *src, const char *output, const char *vocab, size_t max_len) {
    return compile_with(src, output,
                        (CodegenOptions){.vocab_spec = vocab, .max_len = max_len, .numbers_only = true, .plain_heads = true});
}

/* Next input of length n over n_vocab tokens (an odometer); false after the last. */
static bool next_input(size_t *idx, size_t n, size_t n_vocab) {
    size_t k = 0;
    while (k < n && ++idx[k] == n_vocab) idx[k++] = 0;
    return k < n;
}

typedef struct Stats {
    size_t inputs, answers;
    double max_err;     /* max |target residual - model residual| */
    double max_err_row; /* the same divided by n + 1 */
} Stats;

/* One input: the target's residual against model_forward's, readouts against model_run's and
 * the reference's. */
static void check_input(Compiled *c, const FutTarget *t, Workspace *ws, const size_t *ids, size_t n, Stats *st) {
    const Model *m = &c->model;
    Arena a;
    arena_init(&a);
    FutMat X = fut_model_embedding(&a, m, ids, n);
    FutMat Y = fut_target_forward(&a, t, X);
    model_forward(m, ids, n, 0, m->n_layers, ws->X, ws);
    FutMat Ym = {n + 1, m->d_model, ws->X};
    double e = fut_mat_max_abs_diff(Y, Ym);
    if (e > st->max_err) st->max_err = e;
    if (e / (double)(n + 1) > st->max_err_row) st->max_err_row = e / (double)(n + 1);
    Value in[8], *got, *want, *ref;
    for (size_t i = 0; i < n; i++) in[i] = m->vocab[ids[i]];
    char err[256], err2[256];
    IrEvalError ref_err;
    bool model_ok = model_run(m, ws, in, n, &a, &want, err, sizeof err);
    bool ref_ok = ir_eval(&c->g, c->out, in, n, &a, &ref, &ref_err);
    ck_assert_msg(model_ok == ref_ok, "model %s, reference %s", model_ok ? "ok" : err, ref_ok ? "ok" : ref_err.message);
    if (model_ok) {
        ck_assert_msg(fut_model_readout(&a, m, Y, &got, err2, sizeof err2), "target readout: %s", err2);
        for (size_t i = 0; i < n; i++) {
            ck_assert_msg(loosely_same(got[i], want[i]), "position %zu: target and model disagree", i);
            ck_assert_msg(loosely_same(got[i], ref[i]), "position %zu: target and reference disagree", i);
        }
        st->answers += n;
    }
    st->inputs++;
    arena_free(&a);
}

/* Every input of length 1..len over the vocabulary. */
static Stats check_all(Compiled *c, const FutTarget *t, size_t len) {
    Stats st = {0};
    Workspace ws;
    char err[256];
    ck_assert_msg(workspace_init(&ws, &c->model, err, sizeof err), "%s", err);
    for (size_t n = 1; n <= len; n++) {
        size_t idx[8] = {0};
        do check_input(c, t, &ws, idx, n, &st);
        while (next_input(idx, n, c->model.n_vocab));
    }
    workspace_free(&ws);
    return st;
}

typedef struct Case {
    const char *what, *src, *output;
    size_t layers, max_heads;
} Case;

static const Case cases[] = {
    {"shift", "s = shift(tokens, 1, \"_\");", "s", 1, 1},
    {"prefix mean", "p = aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));", "p", 1, 1},
    {"first token (index match)", "f = aggregate(select(indices, 0, ==), tokens);", "f", 1, 1},
    {"suffix mean", "r = aggregate(select(indices, indices, >=), indicator(tokens == \"b\"));", "r", 1, 1},
    {"numerical mean of indices over equal tokens", "r = aggregate(select(tokens, tokens, ==), indices);", "r", 1, 1},
    {"2 layers: match on the shifted token",
     "s = shift(tokens, 1, \"_\"); t = aggregate(select(s, tokens, ==), indicator(tokens == \"a\"));", "t", 2, 1},
    {"2 layers: prefix mean of the shifted token",
     "s = shift(tokens, 1, \"_\"); t = aggregate(select(indices, indices, <=), indicator(s == \"a\"));", "t", 2, 1},
    {"2 layers: shift of a shift", "s = shift(tokens, 1, \"_\"); t = shift(s, 1, \"_\");", "t", 2, 1},
    {"2 layers, 2 heads in layer 0",
     "a = shift(tokens, 1, \"_\"); b = shift(tokens, 2, \"_\"); c = aggregate(select(a, b, ==), indicator(tokens == \"a\"));",
     "c", 2, 2},
    {"2 layers: index match, then select on its result",
     "a = aggregate(select(indices, 0, ==), tokens); r = aggregate(select(tokens, a, ==), indices);", "r", 2, 1},
};

static void assert_attention_only(const Model *m, const Case *k) {
    ck_assert_msg(m->n_layers == k->layers, "%s: %zu layers, expected %zu", k->what, m->n_layers, k->layers);
    size_t H = 0;
    for (size_t l = 0; l < m->n_layers; l++) {
        ck_assert_msg(m->layers[l].mlp.w1.cols == 0, "%s: layer %zu has MLP hidden units", k->what, l);
        if (m->layers[l].n_heads > H) H = m->layers[l].n_heads;
    }
    ck_assert_uint_eq(H, k->max_heads);
}

START_TEST(test_export_matches_model) {
    const Case *k = &cases[_i];
    Compiled *c = compile_numbers(k->src, k->output, "abc", 4);
    ck_assert_msg(c->ok, "%s: compile failed", k->what);
    assert_attention_only(&c->model, k);
    Arena a;
    arena_init(&a);
    FutTarget t;
    char err[512];
    ck_assert_msg(fut_target_from_model(&a, &c->model, FUT_FROM_MODEL_BETA, &t, err, sizeof err), "%s", err);
    ck_assert(t.residual && !t.causal && t.d == c->model.d_model && t.L == k->layers && t.H == k->max_heads);
    Stats st = check_all(c, &t, 4);
    printf("fut export, %s: %zu inputs (%zu answers), max |T(X) - model| = %.3g (%.3g per row)\n", k->what,
           st.inputs, st.answers, st.max_err, st.max_err_row);
    ck_assert_uint_eq(st.inputs, 3 + 9 + 27 + 81);
    ck_assert_msg(st.max_err_row <= 1e-12, "%s: residual error %g per row", k->what, st.max_err_row);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* The temperature matters: at beta = 2 the unselected keys leak visibly. */
START_TEST(test_low_beta_leaks) {
    Compiled *c = compile_numbers(cases[0].src, cases[0].output, "abc", 4);
    ck_assert(c->ok);
    Arena a;
    arena_init(&a);
    FutTarget t;
    char err[512];
    ck_assert_msg(fut_target_from_model(&a, &c->model, 2.0, &t, err, sizeof err), "%s", err);
    size_t ids[3] = {0, 1, 2};
    FutMat Y = fut_target_forward(&a, &t, fut_model_embedding(&a, &c->model, ids, 3));
    Workspace ws;
    ck_assert(workspace_init(&ws, &c->model, err, sizeof err));
    model_forward(&c->model, ids, 3, 0, c->model.n_layers, ws.X, &ws);
    FutMat Ym = {4, c->model.d_model, ws.X};
    ck_assert_double_gt(fut_mat_max_abs_diff(Y, Ym), 1e-3);
    workspace_free(&ws);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

/* A backbone programmed with the exported target computes it on every embedding. */
static void check_backbone(Compiled *c, const FutBackbone *b, const FutTarget *t, double bound) {
    Arena a;
    arena_init(&a);
    char err[512];
    FutMat E;
    ck_assert_msg(fut_embed(&a, b, t, &E, NULL, err, sizeof err), "%s", err);
    double worst = 0;
    for (size_t n = 1; n <= 4; n++) {
        size_t idx[8] = {0};
        do {
            FutMat X = fut_model_embedding(&a, &c->model, idx, n);
            FutMat T = fut_target_forward(&a, t, X), U = fut_backbone_forward(&a, b, E, X);
            double e = fut_mat_max_abs_diff(T, U);
            if (e > worst) worst = e;
            Value *from_t, *from_u;
            char e1[256], e2[256];
            bool ok_t = fut_model_readout(&a, &c->model, T, &from_t, e1, sizeof e1);
            bool ok_u = fut_model_readout(&a, &c->model, U, &from_u, e2, sizeof e2);
            ck_assert_msg(ok_t == ok_u, "readouts: %s / %s", ok_t ? "ok" : e1, ok_u ? "ok" : e2);
            for (size_t i = 0; ok_t && i < n; i++) ck_assert(loosely_same(from_t[i], from_u[i]));
        } while (next_input(idx, n, c->model.n_vocab));
    }
    printf("fut export on a %s backbone (m = %zu): max |UT(X, E) - T(X)| = %.3g\n", fut_kind_name(b->kind), b->m,
           worst);
    ck_assert_double_le(worst, bound);
    arena_free(&a);
}

START_TEST(test_backbones_run_exported_target) {
    const Case *k2 = &cases[5], *k1 = &cases[0];
    Arena a;
    arena_init(&a);
    char err[512];
    Compiled *c = compile_numbers(k2->src, k2->output, "abc", 4);
    ck_assert(c->ok);
    FutTarget t;
    FutBackbone b;
    ck_assert_msg(fut_target_from_model(&a, &c->model, FUT_FROM_MODEL_BETA, &t, err, sizeof err), "%s", err);
    ck_assert_msg(fut_backbone_sparse(&a, t.L, t.H, t.d, true, false, &b, err, sizeof err), "%s", err);
    check_backbone(c, &b, &t, 1e-9);
    compiled_free(c);

    c = compile_numbers(k1->src, k1->output, "abc", 4);
    ck_assert(c->ok);
    ck_assert_msg(fut_target_from_model(&a, &c->model, FUT_FROM_MODEL_BETA, &t, err, sizeof err), "%s", err);
    ck_assert_msg(fut_backbone_random(&a, t.L, t.H, t.d, true, false, 0, 7, &b, err, sizeof err), "%s", err);
    check_backbone(c, &b, &t, 1e-6);
    compiled_free(c);
    arena_free(&a);
}
END_TEST

/* The exported target survives the file format. */
START_TEST(test_file_round_trip) {
    Compiled *c = compile_numbers(cases[8].src, cases[8].output, "abc", 4);
    ck_assert(c->ok);
    Arena a;
    arena_init(&a);
    char err[512];
    FutTarget t, back;
    ck_assert_msg(fut_target_from_model(&a, &c->model, FUT_FROM_MODEL_BETA, &t, err, sizeof err), "%s", err);
    uint8_t *buf;
    size_t len;
    ck_assert_msg(fut_target_serialize(&t, &buf, &len, err, sizeof err), "%s", err);
    ck_assert_msg(fut_target_parse(&a, buf, len, &back, err, sizeof err), "%s", err);
    free(buf);
    size_t ids[4] = {0, 2, 1, 0};
    FutMat X = fut_model_embedding(&a, &c->model, ids, 4);
    ck_assert_double_eq(fut_mat_max_abs_diff(fut_target_forward(&a, &t, X), fut_target_forward(&a, &back, X)), 0);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

START_TEST(test_mlp_is_refused) {
    Compiled *c = compile_numbers("h = selector_width(select(tokens, tokens, ==));", "h", "abc", 4);
    ck_assert(c->ok);
    Arena a;
    arena_init(&a);
    FutTarget t;
    char err[512];
    ck_assert(!fut_target_from_model(&a, &c->model, FUT_FROM_MODEL_BETA, &t, err, sizeof err));
    ck_assert_msg(strstr(err, "layer 0 has an MLP") != NULL, "message: %s", err);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

START_TEST(test_bad_beta_and_tokens) {
    Compiled *c = compile_numbers(cases[0].src, cases[0].output, "abc", 4);
    ck_assert(c->ok);
    Arena a;
    arena_init(&a);
    FutTarget t;
    char err[512];
    ck_assert(!fut_target_from_model(&a, &c->model, 0.0, &t, err, sizeof err));
    ck_assert(strstr(err, "beta") != NULL);
    ck_assert(!fut_target_from_model(&a, &c->model, INFINITY, &t, err, sizeof err));
    Value in[5] = {value_str("a"), value_str("z")};
    size_t ids[5];
    ck_assert(!fut_model_token_ids(&c->model, in, 2, ids, err, sizeof err));
    ck_assert_msg(strstr(err, "not in the vocabulary") != NULL, "%s", err);
    ck_assert(!fut_model_token_ids(&c->model, in, 5, ids, err, sizeof err));
    ck_assert(fut_model_token_ids(&c->model, in, 1, ids, err, sizeof err) && ids[0] == 0);
    arena_free(&a);
    compiled_free(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("fut_export");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_export_matches_model, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_test(tc, test_low_beta_leaks);
    tcase_add_test(tc, test_backbones_run_exported_target);
    tcase_add_test(tc, test_file_round_trip);
    tcase_add_test(tc, test_mlp_is_refused);
    tcase_add_test(tc, test_bad_beta_and_tokens);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(suite());
}
