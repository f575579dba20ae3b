/* Numerical equality selectors (codegen/numeq.c), differentially: programs with select(K, Q, ==)
 * between numbers with many values (index arithmetic, means, long addition's target position),
 * compiled at max-len 7, 16 and 40. Each must lower its equality through the numbers (the head
 * has a handful of score columns, not one per value) and agree with the reference evaluator, the
 * evaluator `raspcc --eval --json` runs, on every input up to a length and on random inputs up to
 * the maximum length: same atoms of the same kinds, or both an error. Plus the refusal of numbers
 * that float64 scores cannot tell apart, located at the select. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "tests/compile_fixture.h"
#include "verify/verify.h"

typedef struct Case {
    const char *what;
    const char *src;
    const char *vocab;
    const char *head; /* the label of the head that must score through the numbers */
    bool and_table;   /* the head also has a table conjunct over the index (max-len columns) */
} Case;

/* Every program's output is `r`. */
static const Case cases[] = {
    {"long addition's target position: indices + length - a mean, against the index",
     "a = aggregate(select(tokens, \"+\", ==), indices);\n"
     "t = indices + length - a;\n"
     "r = aggregate(select(t, indices, ==), indicator(tokens == \"b\"), 0);",
     "ab+", "aggregate r", false},
    {"index arithmetic: twice the key index against the reflected query index",
     "r = aggregate(select(indices * 2, length - indices - 1, ==), tokens, \"-\");", "abc", "aggregate r", false},
    {"prefix means against the index (twice the mean equals the position)",
     "m = aggregate(select(indices, indices, <=), tokens_int);\n"
     "r = aggregate(select(2 * m, indices, ==), tokens_int, -1);",
     "0..3", "aggregate r", false},
    {"a width: how many positions share my prefix mean",
     "m = aggregate(select(indices, indices, <=), tokens_int);\n"
     "r = selector_width(select(m, m, ==));",
     "0..3", "r: 1/(width+1)", false},
    {"a width of an and with a table conjunct: earlier positions sharing my prefix mean",
     "m = aggregate(select(indices, indices, <=), tokens_int);\n"
     "r = selector_width(select(m, m, ==) and select(indices, indices, <));",
     "0..3", "r: 1/(width+1)", true},
    {"a mean over the positions sharing my prefix mean (several keys averaged)",
     "m = aggregate(select(indices, indices, <=), tokens_int);\n"
     "r = aggregate(select(m, m, ==), tokens_int);",
     "0..3", "aggregate r", false},
    {"a uniform mean as the query, often not an index: the default where nothing matches",
     "a = aggregate(select(tokens_int, 0, ==), indices);\n"
     "r = aggregate(select(indices, a, ==), tokens_int, 9);",
     "0..3", "aggregate r", false},
    {"float tokens: twice a prefix mean against a token plus one",
     "s = aggregate(select(indices, indices, <=), tokens_float) * 2;\n"
     "r = aggregate(select(s, tokens_float + 1, ==), indices, -1);",
     "0.5,1,2.5", "aggregate r", false},
};
static const size_t max_lens[] = {7, 16, 40};
enum { N_LENS = sizeof max_lens / sizeof *max_lens, N_RANDOM = 300, EXHAUSTIVE_LIMIT = 3000 };

/* The score columns of the head labelled `label` (dk, with the BOS column), 0 if none is. */
static size_t head_columns(const Model *m, const char *label) {
    for (size_t l = 0; l < m->n_layers; l++)
        for (size_t h = 0; h < m->layers[l].n_heads; h++)
            if (strncmp(m->layers[l].heads[h].label, label, strlen(label)) == 0) return m->layers[l].heads[h].wq.cols;
    return 0;
}

/* One input through model and reference; fails the test on a disagreement. */
static void agree_on(const VerifyPair *pair, const Value *in, size_t n, const char *what) {
    Arena scratch;
    arena_init(&scratch);
    VerifyOutcome o;
    VerifyVerdict v = verify_input(pair, in, n, &scratch, &o);
    if (v == VERIFY_MISMATCH) {
        char *report = verify_format_report(&o);
        ck_abort_msg("%s (max-len %zu): %s", what, pair->model->max_len, report ? report : "a mismatch");
    }
    ck_assert_msg(v == VERIFY_AGREE || v == VERIFY_BOTH_ERROR, "%s: an input outside the model (verdict %d)", what, v);
    arena_free(&scratch);
}

/* Model against reference: every input of the lengths that fit in EXHAUSTIVE_LIMIT inputs, then
 * N_RANDOM random inputs of lengths 1..max_len (a fixed seed). Returns how many were compared. */
static size_t agree_with_reference(Compiled *c, const char *what) {
    const Model *m = &c->model;
    char err[256];
    VerifyReference ref;
    ck_assert_msg(verify_reference_load(&ref, m, NULL, NULL, err, sizeof err), "%s: %s", what, err);
    Workspace ws;
    ck_assert_msg(workspace_init(&ws, m, err, sizeof err), "%s", err);
    VerifyPair pair = {m, &ws, NULL, &ref, verify_model_bound(m)};
    Value *in = calloc(m->max_len, sizeof *in);
    Arena arena;
    arena_init(&arena);
    VerifyOdometer odo;
    verify_odometer_init(&odo, m->vocab, m->n_vocab, verify_lengths_within(m->n_vocab, m->max_len, EXHAUSTIVE_LIMIT),
                         &arena);
    size_t n, compared = 0;
    for (; verify_odometer_next(&odo, in, &n); compared++) agree_on(&pair, in, n, what);
    uint64_t seed = 12345;
    for (size_t r = 0; r < N_RANDOM; r++, compared++) {
        n = verify_random_input(m, 0, &seed, in);
        agree_on(&pair, in, n, what);
    }
    arena_free(&arena);
    free(in);
    workspace_free(&ws);
    verify_reference_free(&ref);
    return compared;
}

START_TEST(test_numerical_equality) {
    const Case *k = &cases[_i / N_LENS];
    size_t max_len = max_lens[_i % N_LENS];
    Compiled *c = compile_src(k->src, "r", k->vocab, max_len);
    ck_assert_msg(c->ok, "%s (max-len %zu): compile failed: %s", k->what, max_len, compiled_first_error(c));
    size_t dk = head_columns(&c->model, k->head);
    /* 2 q k, h(k), 1 - g(q) (or its three parts for a query affine in the length), and BOS; the
     * table lowering would have one per value of the smaller side */
    ck_assert_msg(dk >= 2 && dk <= 7 + (k->and_table ? max_len : 0),
                  "%s (max-len %zu): head '%s' has %zu score columns, not a numerical equality", k->what, max_len,
                  k->head, dk);
    ck_assert_uint_gt(agree_with_reference(c, k->what), 0);
    compiled_free(c);
}
END_TEST

/* Long addition's selects at the corpus lengths: the target position's values explode (~N^3),
 * its scores do not. The whole program, as the RASP authors wrote it (../shared/corpus), is in
 * tests/corpus.sh; this is its core with the carry chain left out. */
START_TEST(test_long_addition_core) {
    static const char *src =
        "def dig2num(t) {\n"
        "    ddig2num = {\"0\":0, \"1\":1, \"2\":2, \"3\":3, \"4\":4, \"5\":5, \"6\":6, \"7\":7, \"8\":8, \"9\":9};\n"
        "    res = -1;\n"
        "    for d in ddig2num { res = ddig2num[d] if t==d else res; }\n"
        "    return res;\n"
        "}\n"
        "add_index = aggregate(select(tokens, \"+\", ==), indices);\n"
        "as_nums = dig2num(tokens);\n"
        "val2 = as_nums if indices > add_index else 0;\n"
        "val1_target_pos = indices + length - add_index;\n"
        "val1 = aggregate(select(val1_target_pos, indices, ==), as_nums, 0);\n"
        "r = val1 + val2;";
    static const size_t lens[] = {5, 11, 21, 33};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        Compiled *c = compile_src(src, "r", "0123456789+", lens[i]);
        ck_assert_msg(c->ok, "max-len %zu: %s", lens[i], compiled_first_error(c));
        size_t dk = head_columns(&c->model, "aggregate val1");
        ck_assert_msg(dk >= 2 && dk <= 7, "max-len %zu: %zu score columns", lens[i], dk);
        ck_assert_msg(c->model.n_layers <= 3, "max-len %zu: %zu layers", lens[i], c->model.n_layers);
        ck_assert_uint_gt(agree_with_reference(c, "long addition core"), 0);
        compiled_free(c);
    }
}
END_TEST

/* The target position at max-len 100: add_index's values (means s/m, m <= 100) are too many to
 * enumerate, so its distance from the integers (>= 1/m) bounds the gap. */
START_TEST(test_unbounded_mean) {
    Compiled *c = compile_src(cases[0].src, "r", cases[0].vocab, 100);
    ck_assert_msg(c->ok, "%s", compiled_first_error(c));
    size_t dk = head_columns(&c->model, "aggregate r");
    ck_assert_msg(dk >= 2 && dk <= 7, "%zu score columns", dk);
    ck_assert_uint_gt(agree_with_reference(c, "the target position at max-len 100"), 0);
    compiled_free(c);
}
END_TEST

/* Numbers a thousand billion apart per index, compared to a mean that differs from an integer by
 * 1/40: no float64 score separates them, and no table can replace the head (the target takes
 * millions of values). */
START_TEST(test_refused_when_float64_cannot_separate) {
    Compiled *c = compile_src("a = aggregate(select(tokens, \"+\", ==), indices);\n"
                              "t = indices * 1000000000000 + length - a;\n"
                              "r = aggregate(select(t, indices, ==), indicator(tokens == \"b\"), 0);",
                              "r", "ab+", 40);
    ck_assert(!c->ok);
    bool found = false;
    for (size_t i = 0; i < c->diags.count; i++) {
        const Diag *d = &c->diags.items[i];
        if (d->severity != DIAG_ERROR || !strstr(d->message, "float64 cannot tell apart")) continue;
        ck_assert_int_eq(d->loc.line, 3); /* at the select */
        found = true;
    }
    ck_assert_msg(found, "no float64 refusal: %s", compiled_first_error(c));
    compiled_free(c);
}
END_TEST

/* Squares beside their numbers (numeq.c): the outsider's cases out23c-001..003. A width read as
 * x and as x - 1 (one x^2 serves both), a map made gated (no table to carry a square: tables
 * instead), keys of magnitude 17,000 (a table of them rounds past its limit: tables instead), and
 * the RASP paper's Dyck-2 with `depth_index - 1`: each in as few layers as with one-hot tables
 * (the counts are the previous build's), and agreeing with the reference. */
START_TEST(test_square_beside) {
    static const struct { const char *src; size_t max_len, layers; } k[] = {
        {"upto = select(indices, indices, <=);\n"
         "ca = selector_width(upto and select(tokens, \"a\", ==));\n"
         "r = selector_width(select(ca, ca - 1, ==));", 16, 2},
        {"upto = select(indices, indices, <=);\n"
         "ca = selector_width(upto and select(tokens, \"a\", ==));\n"
         "cb = selector_width(upto and select(tokens, \"b\", ==));\n"
         "wn = selector_width(select(tokens, \"c\", !=));\n"
         "m0 = wn - 1 if ca > cb else -1;\n"
         "r = selector_width(select(ca, m0 + 1, ==));", 20, 2},
        {"upto = select(indices, indices, <=);\n"
         "ca = selector_width(upto and select(tokens, \"a\", ==));\n"
         "cb = selector_width(upto and select(tokens, \"b\", ==));\n"
         "h = 700 * ca + cb if tokens == \"a\" else 700 * cb - ca;\n"
         "q = 700 * cb + ca if tokens == \"b\" else 700 * ca - cb + 1;\n"
         "r = selector_width(select(h, q, ==));", 24, 2},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        Compiled *c = compile_src(k[i].src, "r", "abc", k[i].max_len);
        ck_assert_msg(c->ok, "%zu: %s", i, compiled_first_error(c));
        ck_assert_msg(c->model.n_layers == k[i].layers, "%zu: %zu layers", i, c->model.n_layers);
        ck_assert_uint_gt(agree_with_reference(c, k[i].src), 0);
        compiled_free(c);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("numeq");
    TCase *t = tcase_create("differential");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_numerical_equality, 0, (int)(sizeof cases / sizeof *cases * N_LENS));
    tcase_add_test(t, test_long_addition_core);
    tcase_add_test(t, test_unbounded_mean);
    tcase_add_test(t, test_refused_when_float64_cannot_separate);
    tcase_add_test(t, test_square_beside);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    return run_suite(suite());
}
