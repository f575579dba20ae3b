/* The forward pass (runtime/forward.h) on hand-built models with hand-computed results. Every
 * case runs both with the default workspace and with one that holds a single input at a time;
 * a random model against a plain reference of the stated arithmetic, bit for bit. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "runtime/forward.h"
#include "tests/runtime_fixtures.h"

static Model model;
static Workspace ws;
static Arena out_arena;
static char err[256];

static void setup(void) {
    model_init(&model);
    arena_init(&out_arena);
    memset(&ws, 0, sizeof ws);
}
static void teardown(void) {
    workspace_free(&ws);
    model_free(&model);
    arena_free(&out_arena);
}

/* tight: a workspace that holds one input of max_len (a batch of one); else the default. */
static void ready(bool tight) {
    workspace_free(&ws);
    ck_assert_msg(workspace_init_rows(&ws, &model, tight ? 1 : 0, err, sizeof err), "%s", err);
}

static Value *strs(const char *s) {
    size_t n = strlen(s);
    Value *v = ARENA_ARRAY(&out_arena, Value, n + 1);
    for (size_t i = 0; i < n; i++) v[i] = value_str(arena_strndup(&out_arena, s + i, 1));
    return v;
}

static Value *ints(const int64_t *x, size_t n) {
    Value *v = ARENA_ARRAY(&out_arena, Value, n + 1);
    for (size_t i = 0; i < n; i++) v[i] = value_int(x[i]);
    return v;
}

static bool run(const Value *in, size_t n, Value **out) {
    return model_run(&model, &ws, in, n, &out_arena, out, err, sizeof err);
}

static void expect_strs(const char *input, const char *const *want) {
    Value *out;
    size_t n = strlen(input);
    ck_assert_msg(run(strs(input), n, &out), "%s: %s", input, err);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(out[i].kind, VAL_STR);
        ck_assert_str_eq(out[i].as.s, want[i]);
    }
}

START_TEST(test_previous_token) {
    fx_prev_token(&model);
    ready(_i == 0);
    const char *w1[] = {"-", "a"};
    expect_strs("ab", w1);
    const char *w2[] = {"-", "b", "b", "a"};
    expect_strs("bbab", w2);
    const char *w3[] = {"-"};
    expect_strs("a", w3);
    Value *out;
    ck_assert(run(NULL, 0, &out)); /* the empty input has an empty output */
}
END_TEST

START_TEST(test_average_hard_ties) {
    fx_mean(&model, false);
    ready(_i == 0);
    int64_t in[3] = {1, 2, 0};
    Value *out;
    ck_assert_msg(run(ints(in, 3), 3, &out), "%s", err);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(out[i].kind, VAL_FLOAT);
        ck_assert(out[i].as.f == 1.0); /* (1+2+0)/3, snapped exactly */
    }
    int64_t in2[2] = {1, 2};
    ck_assert(run(ints(in2, 2), 2, &out));
    ck_assert(out[0].as.f == 1.5 && out[1].as.f == 1.5);
    /* within the head's tie_tol (1e-6) counts as a tie; beyond it does not */
    matrix_set(&model.layers[0].heads[0].wk, 0, 0, 1e-9); /* token value nudges its score */
    ready(_i == 0);
    ck_assert(run(ints(in2, 2), 2, &out));
    ck_assert(out[0].as.f == 1.5); /* 2e-9 apart: a tie under 1e-6 */
    matrix_set(&model.layers[0].heads[0].wk, 0, 0, 1e-3);
    ready(_i == 0);
    ck_assert(run(ints(in2, 2), 2, &out));
    ck_assert(out[0].as.f == 2.0); /* the larger token alone wins */
}
END_TEST

START_TEST(test_causal_mask) {
    fx_mean(&model, true);
    ready(_i == 0);
    int64_t in[4] = {1, 2, 3, 3};
    Value *out;
    ck_assert_msg(run(ints(in, 4), 4, &out), "%s", err);
    const double want[4] = {1.0, 1.5, 2.0, 2.25};
    for (int i = 0; i < 4; i++) ck_assert_msg(fabs(out[i].as.f - want[i]) < 1e-12, "pos %d: %g", i, out[i].as.f);
}
END_TEST

START_TEST(test_mlp_relu) {
    fx_relu(&model);
    ready(_i == 0);
    int64_t in[5] = {0, 1, 2, 3, 2};
    Value *out;
    ck_assert_msg(run(ints(in, 5), 5, &out), "%s", err);
    const int64_t want[5] = {10, 10, 11, 12, 11};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(out[i].kind, VAL_INT);
        ck_assert_int_eq(out[i].as.i, want[i]);
    }
    /* a bool input is an int for tokens_int */
    Value b[1] = {value_bool(true)};
    ck_assert(run(b, 1, &out) && out[0].as.i == 10);
}
END_TEST

START_TEST(test_not_one_hot_output) {
    fx_mix(&model, false);
    ready(_i == 0);
    Value *out;
    ck_assert(run(strs("bb"), 2, &out) && strcmp(out[1].as.s, "b") == 0);
    ck_assert(!run(strs("ab"), 2, &out));
    ck_assert_msg(strstr(err, "mix") && strstr(err, "not one-hot at position 0"), "%s", err);
}
END_TEST

START_TEST(test_check_fires) {
    fx_mix(&model, true);
    ready(_i == 0);
    Value *out;
    ck_assert(run(strs("aaa"), 3, &out));
    ck_assert(!run(strs("aba"), 3, &out));
    ck_assert_str_eq(err, "s-op mixed has no value at position 0: the program raises there");
}
END_TEST

START_TEST(test_out_of_margin) {
    fx_relu(&model);
    model.layers[0].mlp.b2[2] = 10.3; /* 10.3: 0.3 from 10, beyond the margin 0.25 */
    ready(_i == 0);
    Value *out;
    int64_t in[2] = {2, 0};
    ck_assert(!run(ints(in, 2), 2, &out));
    ck_assert_str_eq(err, "output at position 0: model value 11.300000000000001 is not within the decoding margin of "
                          "any value the program can produce");
    model.layers[0].mlp.b2[2] = 10.25; /* exactly at the margin: still 10 */
    ready(_i == 0);
    ck_assert_msg(run(ints(in + 1, 1), 1, &out), "%s", err);
    ck_assert(out[0].kind == VAL_INT && out[0].as.i == 10);
}
END_TEST

/* 10.000000013975296 + 1 decodes to the int 11 exactly. */
START_TEST(test_exact_decode) {
    fx_relu(&model);
    model.layers[0].mlp.b2[2] = 10.000000013975296;
    ready(_i == 0);
    Value *out;
    int64_t in[3] = {2, 3, 0};
    ck_assert_msg(run(ints(in, 3), 3, &out), "%s", err);
    const int64_t want[3] = {11, 12, 10};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(out[i].kind, VAL_INT);
        ck_assert_int_eq(out[i].as.i, want[i]);
    }
    /* the decoder on a bare row: the nearest member, both sides of a midpoint */
    double row[3] = {0, 0, 11.000000013975296};
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && out[0].kind == VAL_INT && out[0].as.i == 11);
    row[2] = 11.75;
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && out[0].as.i == 12);
    row[2] = 12.25;
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && out[0].as.i == 12);
    row[2] = 9.75;
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && out[0].as.i == 10);
    row[2] = 9.7;
    ck_assert(!model_read_output(&model, row, 3, 4, out, err, sizeof err));
    ck_assert_msg(strstr(err, "output at position 3: model value 9.6999999999999993 is not within"), "%s", err);
    row[2] = NAN;
    ck_assert(!model_read_output(&model, row, 0, 1, out, err, sizeof err));
    ck_assert_msg(strstr(err, "not a finite number"), "%s", err);
}
END_TEST

/* The kind block picks True, 1 or 1.0 for the value 1, and 0 or 0.0 (never -0.0) for a tiny
 * negative value. */
START_TEST(test_kind_block) {
    fx_kinds(&model);
    ready(_i == 0);
    Value *out;
    ck_assert_msg(run(strs("bifnm"), 5, &out), "%s", err);
    ck_assert(out[0].kind == VAL_BOOL && out[0].as.b);
    ck_assert(out[1].kind == VAL_INT && out[1].as.i == 1);
    ck_assert(out[2].kind == VAL_FLOAT && out[2].as.f == 1.0);
    ck_assert(out[3].kind == VAL_INT && out[3].as.i == 0);
    ck_assert(out[4].kind == VAL_FLOAT && out[4].as.f == 0.0 && !signbit(out[4].as.f));
    ck_assert(!run(strs("bz"), 2, &out));
    ck_assert_str_eq(err, "output at position 1: model value 0.59999999999999998 is not within the decoding margin of "
                          "any value the program can produce");
    ck_assert(!run(strs("iq"), 2, &out));
    ck_assert_str_eq(err, "output at position 1: the kind block of the output is not one-hot");
    ck_assert(!run(strs("w"), 1, &out));
    ck_assert_msg(strstr(err, "output at position 0: model value 2.5 decodes to 2.5, but no value of kind int has it"),
                  "%s", err);
    /* -0.0 itself decodes to the members 0 / 0.0 */
    double row[5] = {-0.0, 0, 0, 1, 0};
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err));
    ck_assert(out[0].kind == VAL_FLOAT && out[0].as.f == 0.0 && !signbit(out[0].as.f));
    row[3] = 0;
    row[1] = 1;
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && out[0].kind == VAL_BOOL && !out[0].as.b);
}
END_TEST

/* An unbounded output (no value set) is the float itself. */
START_TEST(test_unbounded) {
    fx_mean(&model, false);
    ready(_i == 0);
    int64_t in[3] = {1, 1, 0};
    Value *out;
    ck_assert_msg(run(ints(in, 3), 3, &out), "%s", err);
    for (int i = 0; i < 3; i++) ck_assert(out[i].kind == VAL_FLOAT && out[i].as.f == 2.0 / 3.0);
}
END_TEST

/* The tie tolerance is absolute and per head: at scores near 1e6 a gap of 1 is no tie (a
 * relative 1e-6 tolerance averaged them). */
START_TEST(test_absolute_tie_tolerance) {
    fx_mean(&model, false);
    ModelHead *h = &model.layers[0].heads[0];
    AT(h->wk, 0, 0) = 1; /* score = token value (BOS: -1) */
    AT(model.token_embed, 1, 0) = 1e6;
    AT(model.token_embed, 2, 0) = 1e6 + 1;
    ready(_i == 0);
    int64_t in[2] = {1, 2};
    Value *out;
    ck_assert_msg(run(ints(in, 2), 2, &out), "%s", err);
    ck_assert(out[0].as.f == 1e6 + 1 && out[1].as.f == 1e6 + 1);
    h->tie_tol = 1.5;
    ready(_i == 0);
    ck_assert_msg(run(ints(in, 2), 2, &out), "%s", err);
    ck_assert(out[0].as.f == 1e6 + 0.5);
    /* tie_tol 0: exact ties only */
    h->tie_tol = 0;
    ready(_i == 0);
    ck_assert_msg(run(ints(in, 2), 2, &out), "%s", err);
    ck_assert(out[0].as.f == 1e6 + 1);
    int64_t same[2] = {2, 2};
    ck_assert_msg(run(ints(same, 2), 2, &out), "%s", err);
    ck_assert(out[0].as.f == 1e6 + 1);
}
END_TEST

static bool same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

/* Per-length value sets: the same model value decodes to the member of the input's length, even
 * when the members of two lengths are 1 ulp apart; a value near a member of another length only
 * is an error. */
START_TEST(test_values_by_length) {
    fx_by_length(&model);
    ck_assert_msg(model_check_output(&model, err, sizeof err), "%s", err);
    double a = fx_len_a(), b = fx_len_b();
    ck_assert(b > a && nextafter(a, INFINITY) == b); /* 1 ulp apart */
    ready(_i == 0);
    Value *out;
    int64_t one[1] = {0}, two[2] = {0, 1};
    ck_assert_msg(run(ints(one, 1), 1, &out), "%s", err);
    ck_assert(out[0].kind == VAL_FLOAT && same_bits(out[0].as.f, a));
    ck_assert_msg(run(ints(two, 2), 2, &out), "%s", err); /* x = A and A + 1 at length 2 */
    ck_assert(out[0].kind == VAL_FLOAT && same_bits(out[0].as.f, b));
    ck_assert(out[1].kind == VAL_FLOAT && same_bits(out[1].as.f, b + 1));
    int64_t three[3] = {0, 0, 0};
    ck_assert(!run(ints(three, 3), 3, &out));
    ck_assert_str_eq(err, "output at position 0: model value 18.095238095238095 is not within the decoding margin of "
                          "any value the program can produce for an input of length 3");
    /* the decoder on a bare row: B itself at length 1 is A; A itself at length 2 is B */
    double row[3] = {0, 0, b};
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && same_bits(out[0].as.f, a));
    row[2] = a;
    ck_assert(model_read_output(&model, row, 0, 2, out, err, sizeof err) && same_bits(out[0].as.f, b));
    row[2] = 99.8; /* length 3: the int 100 */
    ck_assert(model_read_output(&model, row, 2, 3, out, err, sizeof err) && out[0].kind == VAL_INT &&
              out[0].as.i == 100);
    ck_assert(!model_read_output(&model, row, 0, 2, out, err, sizeof err)); /* 100 is no value of length 2 */
    ck_assert_msg(strstr(err, "for an input of length 2"), "%s", err);
    row[2] = a + 1.2; /* 0.2 from A + 1: within the margin at lengths 1 and 2 */
    ck_assert(model_read_output(&model, row, 0, 1, out, err, sizeof err) && same_bits(out[0].as.f, a + 1));
    /* a length without a set (0, or beyond max_len) is an error, never a read out of bounds */
    ck_assert(!model_read_output(&model, row, 0, 4, out, err, sizeof err));
    ck_assert(!model_read_output(&model, row, 0, 0, out, err, sizeof err));
    /* an empty set at length 3: nothing decodes there */
    model.out_len_start[3] = 4;
    ck_assert_msg(model_check_output(&model, err, sizeof err), "%s", err);
    row[2] = 0;
    ck_assert(!model_read_output(&model, row, 0, 3, out, err, sizeof err));
    ck_assert_msg(strstr(err, "for an input of length 3"), "%s", err);
}
END_TEST

/* What model_check_output requires of per-length sets, and what it no longer requires of the
 * global set then. */
START_TEST(test_values_by_length_rules) {
    fx_by_length(&model);
    ck_assert_msg(model_check_output(&model, err, sizeof err), "%s", err);
    /* without the per-length sets the global set's A and B are too close for the margin */
    model.out_len_count = 0;
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "not below half the gap"), "%s", err);
    model.out_len_count = 2; /* not max_len */
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "for 2 lengths, but max_len is 3"), "%s", err);
    model.out_len_count = 3;
    model.out_len_start[1] = 5; /* offsets: 0 5 4 6 */
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "offsets decrease at length 2"), "%s", err);
    model.out_len_start[1] = 2;
    model.out_len_start[0] = 1;
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "do not start at 0"), "%s", err);
    model.out_len_start[0] = 0;
    /* a member of one length missing from the global set */
    model.out_len_values[5] = value_int(101);
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "output value 101 of length 3 is not among the output values"), "%s", err);
    model.out_len_values[5] = value_float(100.0); /* same number, another kind: not a member either */
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "of length 3 is not among"), "%s", err);
    model.out_len_values[5] = value_int(100);
    /* the gap rule per length: A and B in one range */
    model.out_len_values[1] = value_float(fx_len_b());
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "not below half the gap") && strstr(err, "(inputs of length 1)"), "%s", err);
    model.out_len_values[1] = value_float(fx_len_a() + 1);
    /* sorted per length */
    Value t = model.out_len_values[4];
    model.out_len_values[4] = model.out_len_values[5];
    model.out_len_values[5] = t;
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "not sorted ascending (100 before 0) (inputs of length 3)"), "%s", err);
    model.out_len_values[5] = model.out_len_values[4];
    model.out_len_values[4] = t;
    ck_assert_msg(model_check_output(&model, err, sizeof err), "%s", err);
    /* the global set must still be sorted, and is needed */
    t = model.out_values[0];
    model.out_values[0] = model.out_values[1];
    model.out_values[1] = t;
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "not sorted ascending"), "%s", err);
    model.out_values[1] = model.out_values[0];
    model.out_values[0] = t;
    model.out_count = 0;
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "no values (their union)"), "%s", err);
    model.out_count = 6;
    /* kind sharing within one length needs a kind block; across lengths it does not */
    model.out_len_values[5] = value_float(100.0);
    model.out_values = ARENA_ARRAY(&model.arena, Value, 7);
    Value all[7] = {value_int(0), value_float(fx_len_a()), value_float(fx_len_b()), value_float(fx_len_a() + 1),
                    value_float(fx_len_b() + 1), value_int(100), value_float(100.0)};
    memcpy(model.out_values, all, sizeof all);
    model.out_count = 7;
    model.out_len_values[3] = value_int(100); /* length 2: {B, 100}... */
    model.out_len_values[2] = value_float(fx_len_b());
    ck_assert_msg(model_check_output(&model, err, sizeof err), "%s", err); /* 100 at length 2, 100.0 at 3 */
    model.out_len_values[4] = value_int(100); /* length 3: {100, 100.0} */
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "no kind block") && strstr(err, "(inputs of length 3)"), "%s", err);
    /* categorical outputs have no per-length sets */
    model_free(&model);
    model_init(&model);
    fx_prev_token(&model);
    model.out_len_count = 4;
    model.out_len_start = ARENA_ARRAY(&model.arena, size_t, 5);
    ck_assert(!model_check_output(&model, err, sizeof err));
    ck_assert_msg(strstr(err, "numerical outputs only"), "%s", err);
}
END_TEST

START_TEST(test_input_errors) {
    fx_prev_token(&model);
    ready(_i == 0);
    Value *out;
    ck_assert(!run(strs("abbab"), 5, &out));
    ck_assert_str_eq(err, "input has length 5 > max length 4");
    ck_assert(!run(strs("abc"), 3, &out));
    ck_assert_msg(strstr(err, "\"c\"") && strstr(err, "not in the vocabulary"), "%s", err);
    size_t ids[4];
    ck_assert(model_tokenize(&model, strs("ba"), 2, ids, NULL, err, sizeof err));
    ck_assert(ids[0] == 1 && ids[1] == 0);
    /* 70 > 64 tokens takes the arena path for ids, and still reports the length */
    Value *many = strs("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ck_assert(!run(many, 70, &out));
    ck_assert_str_eq(err, "input has length 70 > max length 4");
}
END_TEST

/* Integer tokens through the workspace's table of ids: the ids, outputs and errors model_tokenize
 * gives (the first equal vocabulary atom, 5 == 5.0; out-of-range and unknown integers, a bool and
 * a float input, an input too long all fall to model_tokenize and its message). */
START_TEST(test_int_token_table) {
    fx_prev_token(&model);
    model.token_type = IR_TOKENS_INT;
    model.vocab[0] = value_float(5.0);
    model.vocab[1] = value_int(-1);
    ready(false);
    ck_assert_uint_eq(ws.int_n, 7); /* -1 .. 5 */
    const int64_t seq[] = {5, -1, 5, 5};
    Value *out;
    ck_assert_msg(run(ints(seq, 4), 4, &out), "%s", err);
    const char *want[] = {"-", "a", "b", "a"};
    for (size_t i = 0; i < 4; i++) ck_assert_str_eq(out[i].as.s, want[i]);
    Value bad[5][5];
    size_t lens[5] = {2, 2, 2, 2, 5};
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < 5; i++) bad[k][i] = value_int(i % 2 ? -1 : 5);
    bad[0][1] = value_int(3);        /* unknown, in the table's span */
    bad[1][0] = value_int(-1000000); /* outside it */
    bad[2][1] = value_bool(true);
    bad[3][0] = value_float(5.0);
    for (int k = 0; k < 5; k++) { /* bad[4]: longer than max_len */
        size_t ids[8];
        char want_err[256];
        ck_assert(!model_tokenize(&model, bad[k], lens[k], ids, NULL, want_err, sizeof want_err));
        ck_assert(!run(bad[k], lens[k], &out));
        ck_assert_str_eq(err, want_err);
    }
    /* the reference's order (findings-out31 001): a token that does not convert is reported before
       an unknown token ahead of it and before the length */
    Value mixed[6] = {value_int(3), value_float(2.0), value_int(5), value_int(5), value_int(5), value_int(5)};
    ck_assert(!run(mixed, 2, &out));
    ck_assert_msg(strstr(err, "2.0") && strstr(err, "not valid"), "%s", err);
    ck_assert(!run(mixed + 1, 5, &out));
    ck_assert_msg(strstr(err, "2.0") && strstr(err, "not valid"), "%s", err);
    ck_assert_msg(run(mixed + 2, 4, &out), "%s", err); /* and the rest of it runs */
}
END_TEST

/* The machine of runtime/model.h on dense rows, one element at a time, in the arithmetic
 * runtime/forward.h states: each product's element one fma chain over the whole inner dimension
 * from +0.0 (a zero weight leaves a chain unchanged), then added to what it feeds. */
static double chain_dense(const double *x, const Matrix *W, size_t c, size_t k_n) {
    double acc = 0.0;
    for (size_t k = 0; k < k_n; k++) acc = fma(x[k], matrix_get(W, k, c), acc);
    return acc;
}

static void reference_forward(const Model *m, const size_t *ids, size_t n, double *X) {
    size_t D = m->d_model, R = n + 1;
    for (size_t r = 0; r < R; r++)
        for (size_t j = 0; j < D; j++)
            X[r * D + j] = matrix_get(&m->token_embed, r ? ids[r - 1] : m->n_vocab, j) + matrix_get(&m->pos_embed, r, j);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        size_t width = 0, at = 0;
        for (size_t h = 0; h < L->n_heads; h++) width += L->heads[h].wv.cols;
        double *A = calloc(R * width + 1, sizeof *A);
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            size_t dk = H->wq.cols, dv = H->wv.cols;
            double *Q = calloc(R * dk + 1, sizeof *Q), *K = calloc(R * dk + 1, sizeof *K), *V = calloc(R * dv + 1, sizeof *V);
            for (size_t r = 0; r < R; r++) {
                for (size_t c = 0; c < dk; c++) Q[r * dk + c] = chain_dense(X + r * D, &H->wq, c, D);
                for (size_t c = 0; c < dk; c++) K[r * dk + c] = chain_dense(X + r * D, &H->wk, c, D);
                for (size_t c = 0; c < dv; c++) V[r * dv + c] = chain_dense(X + r * D, &H->wv, c, D);
            }
            for (size_t i = 0; i < R; i++) {
                size_t last = H->causal ? i : R - 1, ties = 0;
                double *s = calloc(R, sizeof *s), best;
                for (size_t j = 0; j < R; j++) {
                    double acc = 0.0;
                    for (size_t c = 0; c < dk; c++) acc = fma(Q[i * dk + c], K[j * dk + c], acc);
                    s[j] = acc;
                }
                best = s[0];
                for (size_t j = 1; j <= last; j++) if (s[j] > best) best = s[j];
                for (size_t j = 0; j <= last; j++) ties += s[j] >= best - H->tie_tol;
                double extra = s[0] >= best - H->tie_tol ? H->bos_extra : 0.0; /* BOS weighs 1 + bos_extra */
                for (size_t c = 0; c < dv; c++) {
                    double sum = extra * V[c];
                    for (size_t j = 0; j <= last; j++) if (s[j] >= best - H->tie_tol) sum += V[j * dv + c];
                    A[i * width + at + c] = sum / ((double)ties + extra);
                }
                free(s);
            }
            free(Q), free(K), free(V);
            at += dv;
        }
        at = 0;
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            for (size_t r = 0; r < R; r++)
                for (size_t d = 0; d < D; d++) X[r * D + d] += chain_dense(A + r * width + at, &H->wo, d, H->wv.cols);
            at += H->wv.cols;
        }
        free(A);
        const ModelMlp *f = &L->mlp;
        size_t hidden = f->w1.cols;
        double *Hd = calloc(hidden + 1, sizeof *Hd);
        for (size_t r = 0; r < R; r++) {
            for (size_t c = 0; c < hidden; c++) {
                double z = chain_dense(X + r * D, &f->w1, c, D) + f->b1[c];
                z = z > 0.0 ? z : 0.0;
                if (f->gated) z *= chain_dense(X + r * D, &f->w3, c, D) + f->b3[c];
                Hd[c] = z;
            }
            for (size_t d = 0; d < D; d++) X[r * D + d] += chain_dense(Hd, &f->w2, d, hidden);
            for (size_t d = 0; d < D; d++) X[r * D + d] += f->b2[d];
        }
        free(Hd);
    }
}

/* model_forward over all the model's layers on ids (n tokens) equals reference_forward bit for bit. */
static void expect_reference(const Model *m, const size_t *ids, size_t n) {
    size_t D = m->d_model;
    double *want = calloc((n + 1) * D, sizeof(double)), *got = calloc((n + 1) * D, sizeof(double));
    reference_forward(m, ids, n, want);
    model_forward(m, ids, n, 0, m->n_layers, got, &ws);
    for (size_t i = 0; i < (n + 1) * D; i++)
        ck_assert_msg(memcmp(&want[i], &got[i], sizeof(double)) == 0, "length %zu entry %zu: %.17g vs %.17g", n, i,
                      want[i], got[i]);
    free(want);
    free(got);
}

/* A model of integer tokens 0 .. V-1 up to length N in D dims, its embeddings empty. */
static void int_tokens(Model *m, size_t V, size_t N, size_t D) {
    m->d_model = D;
    m->max_len = N;
    m->n_vocab = V;
    m->vocab = ARENA_ARRAY(&m->arena, Value, V);
    for (size_t v = 0; v < V; v++) m->vocab[v] = value_int((int64_t)v);
    m->token_type = IR_TOKENS_INT;
    m->token_embed = model_matrix(m, V + 1, D);
    m->pos_embed = model_matrix(m, N + 1, D);
}

/* int_tokens whose dims 0 .. V-1 hold the token's one-hot code, V BOS's (token row V), V+1 ..
 * V+N+1 the position's; the rest for the test to use. */
static void one_hot_codes(Model *m, size_t V, size_t N, size_t D) {
    int_tokens(m, V, N, D);
    for (size_t t = 0; t <= V; t++) AT(m->token_embed, t, t) = 1;
    for (size_t p = 0; p <= N; p++) AT(m->pos_embed, p, V + 1 + p) = 1;
}

/* A batch leaves the lines of fresh dims as they were, and those only the embedding writes where
 * the last batch cleared its entries (runtime/write_plan.h): on random models of three layers whose
 * heads and MLPs read and write random dims (dims read before they are written, written by a bias
 * alone, by two heads of a layer, read by a check), a workspace whose residual holds NaN
 * everywhere (and says so: its embedding's lines are not zero) gives every sequence of a batch
 * reference_forward's final residual bit for bit, and so do three batches after it (other inputs,
 * other lengths), unpoisoned: a dim taken for fresh that something reads first, or that nothing
 * stores, shows as a NaN, and an embedding entry a batch failed to clear as a wrong number. */
START_TEST(test_fresh_dims_poisoned) {
    Model *m = &model;
    srand(21);
    enum { V = 3, N = 9, D = 24, SEQS = 5 };
    for (int round = 0; round < 12; round++) {
        if (round) {
            teardown();
            setup();
        }
        int_tokens(m, V, N, D);
        for (size_t t = 0; t <= V; t++) AT(m->token_embed, t, t) = 1;
        for (size_t p = 0; p <= N; p++) AT(m->pos_embed, p, V + 1) = 1, AT(m->pos_embed, p, V + 2) = (double)p;
        size_t heads[3] = {2, 1, 2}, hidden[3] = {3, 2, 0};
        fx_layers(m, 3, heads, hidden);
        for (size_t l = 0; l < 3; l++) {
            ModelLayer *L = &m->layers[l];
            for (size_t h = 0; h < L->n_heads; h++) {
                ModelHead *H = &L->heads[h];
                fx_head(m, H, 2, 2, (l + h) % 2 == 1, "r");
                for (size_t c = 0; c < 2; c++) {
                    AT(H->wq, (size_t)rand() % D, c) = rand() % 3 - 1;
                    AT(H->wk, (size_t)rand() % D, c) = rand() % 3 - 1;
                    AT(H->wv, (size_t)rand() % D, c) = rand() % 5 - 2;
                    AT(H->wo, c, V + 3 + (size_t)rand() % (D - V - 3)) = rand() % 3 ? 1 : -0.5;
                }
            }
            ModelMlp *f = &L->mlp;
            for (size_t u = 0; u < f->w1.cols; u++) {
                AT(f->w1, (size_t)rand() % D, u) = rand() % 3 - 1;
                f->b1[u] = rand() % 3;
                AT(f->w2, u, V + 3 + (size_t)rand() % (D - V - 3)) = rand() % 2 ? 1 : -2;
            }
            if (rand() % 2) f->b2[V + 3 + (size_t)rand() % (D - V - 3)] = 0.5;
        }
        size_t dims[1] = {(size_t)rand() % D};
        double coefs[1] = {1}, thr[1] = {1e6};
        fx_margin(m, (size_t)rand() % 3, "check", 1, dims, coefs, 1, thr, 0.1);
        m->output_name = "out";
        m->output_kind = MODEL_OUT_NUMERICAL;
        m->out_readout = ARENA_ARRAY(&m->arena, double, D);
        fx_labels(m);
        ready(false);
        for (size_t i = 0; i < D * ws.ld; i++) ws.F[i] = NAN;
        ws.embedding_lines_zero = false;
        for (int batch = 0; batch < 4; batch++) {
            Value *inputs[SEQS];
            size_t lens[SEQS], ids[SEQS][N], count = 1 + (size_t)rand() % SEQS;
            for (size_t s = 0; s < count; s++) {
                lens[s] = 1 + (size_t)rand() % N;
                int64_t x[N];
                for (size_t i = 0; i < lens[s]; i++) ids[s][i] = (size_t)rand() % V, x[i] = (int64_t)ids[s][i];
                inputs[s] = ints(x, lens[s]);
            }
            ModelOutcome outcomes[SEQS];
            model_run_batch(m, &ws, (const Value *const *)inputs, lens, count, &out_arena, outcomes);
            ck_assert_uint_gt(ws.writes.n_embedding_only, 0);
            for (size_t s = 0, o = 0; s < count; o += lens[s] + 1, s++) {
                double want[(N + 1) * D];
                reference_forward(m, ids[s], lens[s], want);
                for (size_t r = 0; r <= lens[s]; r++)
                    for (size_t d = 0; d < D; d++)
                        ck_assert_msg(ws.writes.is_embedding_only[d] || /* cleared as the batch ended */
                                          memcmp(&want[r * D + d], &ws.F[d * ws.ld + o + r], sizeof(double)) == 0,
                                      "round %d batch %d sequence %zu row %zu dim %zu: %.17g vs %.17g", round, batch, s,
                                      r, d, want[r * D + d], ws.F[d * ws.ld + o + r]);
            }
            for (size_t t = 0; t < ws.writes.n_embedding_only; t++) /* zero, whole, for the next batch */
                for (size_t r = 0; r < ws.ld; r++)
                    ck_assert(same_bits(ws.F[ws.writes.embedding_only[t] * ws.ld + r], 0.0));
        }
    }
}
END_TEST

/* Attention of long inputs (three blocks of queries, keys in chunks of 64) scored from either side:
 * heads whose keys have far more entries than their queries (scored from the queries' side), the
 * other way round, causal or not, with ties, each equal to reference_forward bit for bit. */
START_TEST(test_attention_both_sides) {
    Model *m = &model;
    srand(8);
    enum { D = 30, N = 150, DK = 24 };
    int_tokens(m, 4, N, D);
    for (size_t i = 0; i < 5 * D; i++) matrix_set(&m->token_embed, i / D, i % D, rand() % 4 == 0 ? rand() % 3 : 0);
    for (size_t i = 0; i < (N + 1) * D; i++) matrix_set(&m->pos_embed, i / D, i % D, rand() % 6 == 0 ? rand() % 3 : 0);
    size_t heads[1] = {4}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    for (size_t h = 0; h < 4; h++) {
        ModelHead *H = &m->layers[0].heads[h];
        fx_head(m, H, DK, 2, h >= 2, "r");
        H->bos_extra = h == 1 ? 31 : 0;
        bool dense_keys = h % 2 == 0; /* heads 0, 2: keys dense, queries sparse; 1, 3: the reverse */
        for (size_t i = 0; i < D * DK; i++) {
            double q = rand() % 2 ? 1.0 : -1.0, k = rand() % 3 ? 0.5 : 1.0;
            matrix_set(&H->wq, i / DK, i % DK, rand() % (dense_keys ? 25 : 2) == 0 ? q : 0.0);
            matrix_set(&H->wk, i / DK, i % DK, rand() % (dense_keys ? 2 : 25) == 0 ? k : 0.0);
        }
        for (size_t i = 0; i < D * 2; i++) matrix_set(&H->wv, i / 2, i % 2, rand() % 5 == 0 ? rand() % 5 - 2 : 0);
        for (size_t i = 0; i < 2 * D; i++) matrix_set(&H->wo, i / D, i % D, rand() % 4 == 0 ? 1 : 0);
    }
    size_t ids[N];
    for (size_t i = 0; i < N; i++) ids[i] = (size_t)rand() % 4;
    ready(false);
    expect_reference(m, ids, N);
}
END_TEST

/* The attention shortcuts (runtime/forward.c) against reference_forward bit for bit, on inputs of
 * several lengths: heads whose queries read only the token (few distinct queries: computed once
 * per group when not causal) and heads whose keys are one-hot by position (found through an index
 * of the keys: attend_sparse), causal or not, with ties (weights 1 and 0.5 against a tolerance of
 * 0.5), a heavy BOS selected alone, tied or not selected, and values of both signs of zero. The workspace says which shortcut each
 * head took, so the test sees them taken. */
START_TEST(test_attention_shortcuts) {
    Model *m = &model;
    srand(9);
    enum { V = 5, N = 150, P = N + 1, D = V + 1 + P + 4, DK = P };
    one_hot_codes(m, V, N, D); /* then 4 dims of noise in every row */
    for (size_t p = 0; p < P; p++)
        for (size_t d = V + 1 + P; d < D; d++) AT(m->pos_embed, p, d) = rand() % 3 ? (rand() % 5) - 2 : 0;
    size_t heads[1] = {4}, hidden[1] = {0}, perm[P];
    for (size_t p = 0; p < P; p++) perm[p] = p;
    for (size_t p = P - 1; p > 0; p--) { /* shuffled */
        size_t r = (size_t)rand() % (p + 1), t = perm[p];
        perm[p] = perm[r], perm[r] = t;
    }
    fx_layers(m, 1, heads, hidden);
    for (size_t h = 0; h < 4; h++) {
        ModelHead *H = &m->layers[0].heads[h];
        fx_head(m, H, DK, 2, h % 2 == 1, "r");
        H->tie_tol = 0.5;
        H->bos_extra = h >= 2 ? 63 : h == 1 ? 7 : 0;
        if (h < 2) { /* queries from the token alone; keys from the position and the noise */
            for (size_t t = 0; t <= V; t++) /* head 0's: copies of the token's dims, grouped by token id */
                for (size_t c = 0; c < 8; c++)
                    matrix_set(&H->wq, t, c, h == 0 ? (c == t ? (t % 2 ? 1.0 : 0.5) : 0.0)
                                                     : rand() % 3 ? 0.0 : rand() % 2 ? 1.0 : 0.5);
            for (size_t d = V + 1; d < D; d++)
                for (size_t c = 0; c < 8; c++) matrix_set(&H->wk, d, c, rand() % 4 ? 0.0 : rand() % 2 ? 1.0 : -1.0);
        } else { /* keys one-hot by position (in dims not in position order); each token asks for a few */
            for (size_t p = 0; p < P; p++) matrix_set(&H->wk, V + 1 + p, perm[p], rand() % 4 ? 1.0 : 0.5);
            for (size_t t = 0; t <= V; t++)
                for (int k = 0; k < 3; k++) matrix_set(&H->wq, t, (size_t)rand() % P, rand() % 2 ? 1.0 : 0.5);
            /* BOS (position 0) for token 0 below the tolerance of its best key, for token 1 alone,
               for token 2 tied with position 5 */
            for (size_t t = 0; t < 3; t++)
                for (size_t c = 0; c < P; c++) matrix_set(&H->wq, t, c, 0.0);
            matrix_set(&H->wq, 0, perm[0], 0.25);
            matrix_set(&H->wq, 0, perm[1], 1.0);
            matrix_set(&H->wq, 1, perm[0], 1.0);
            matrix_set(&H->wq, 2, perm[5], 1.0);
            matrix_set(&H->wq, 2, perm[0], 1.0);
        }
        /* values whose sums depend on their order; some -0.0 */
        for (size_t d = 0; d < D; d++)
            for (size_t c = 0; c < 2; c++)
                matrix_set(&H->wv, d, c, rand() % 3 ? 0.0 : rand() % 4 ? (double)(rand() % 2001 - 1000) / 97.0 : -0.0);
        matrix_set(&H->wv, V, 0, 1.5); /* BOS's value: its weight shows */
        for (size_t c = 0; c < 2; c++) matrix_set(&H->wo, c, (size_t)rand() % D, 1.0);
    }
    ready(false);
    const size_t lengths[] = {N, 17, 64, 1, 100};
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
        size_t n = lengths[k], ids[N];
        for (size_t i = 0; i < n; i++) ids[i] = (size_t)rand() % V;
        expect_reference(m, ids, n);
    }
    ck_assert(ws.sides[0][0].grouped && !ws.sides[0][1].grouped); /* judged on the length-150 input */
    ck_assert(ws.panels[0][0][0].token_only && !ws.panels[0][1][0].token_only);
    ck_assert(ws.sides[0][2].sparse && ws.sides[0][3].sparse);
}
END_TEST

/* Gathers from the embedding's lists (runtime/panel_view.h): key columns that copy position and
 * token dims (weights 1, -1, 0.5; a token dim the BOS row also holds) with computed columns among
 * them, keys read by a second layer after the first wrote some dims (those scanned), causal and
 * not: reference_forward's numbers bit for bit, and the plans listed where they should be. */
START_TEST(test_listed_gathers) {
    Model *m = &model;
    srand(14);
    enum { V = 4, N = 40, P = N + 1, D = V + 1 + P + 3, DK = P + 4 };
    one_hot_codes(m, V, N, D); /* then 3 dims the layers write */
    AT(m->token_embed, V, 0) = 2; /* BOS holds token dim 0 too */
    size_t heads[2] = {2, 1}, hidden[2] = {0, 0};
    fx_layers(m, 2, heads, hidden);
    for (size_t l = 0; l < 2; l++)
        for (size_t h = 0; h < heads[l]; h++) {
            ModelHead *H = &m->layers[l].heads[h];
            fx_head(m, H, DK, 1, h == 1, "listed");
            H->tie_tol = 0.25;
            /* keys: position codes (weights 1, -1, 0.5) and the token's; two computed columns among
               them (their lines scanned, their entries put in column order); in layer 1 one copy
               of a dim layer 0 wrote (scanned, not listed) */
            for (size_t p = 0; p < P; p++)
                matrix_set(&H->wk, V + 1 + p, p + 2, p % 3 == 0 ? 1.0 : p % 3 == 1 ? -1.0 : 0.5);
            matrix_set(&H->wk, 0, 0, 1.0);
            matrix_set(&H->wk, 1, 1, -1.0);
            for (size_t d = 0; d < V; d++) matrix_set(&H->wk, d, P + 2, (double)(d + 1) / 10.0);
            matrix_set(&H->wk, V, 10, 1.0 / 3.0), matrix_set(&H->wk, V + 1 + 9, 10, 1.0 / 3.0);
            matrix_set(&H->wk, l ? D - 1 : V + 2, P + 3, 1.0);
            /* queries: ask for a position, a token and the computed columns, with numbers whose sums
               round differently in another order (entries out of column order would show) */
            for (size_t p = 0; p < P; p++) matrix_set(&H->wq, V + 1 + p, (p * 7 + h) % P + 2, 1.0 / 7.0);
            for (size_t p = 0; p < P; p++) matrix_set(&H->wq, V + 1 + p, 10, 0.1);
            for (size_t d = 0; d < V; d++) matrix_set(&H->wq, d, d % 2, 0.3), matrix_set(&H->wq, d, P + 2, 0.7);
            matrix_set(&H->wq, V + 1, P + 3, 1.0);
            matrix_set(&H->wv, (size_t)(h + l) % V, 0, 1.0);
            matrix_set(&H->wo, 0, D - 1 - h, 1.0);
        }
    ready(false);
    ck_assert(ws.panels[0][0][1].listed && ws.panels[0][0][1].n_scans == 2);
    ck_assert(ws.panels[1][0][1].listed && ws.panels[1][0][1].n_scans == 3);
    const size_t lengths[] = {N, 1, 17, 0, 33, N};
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
        size_t n = lengths[k], ids[N];
        for (size_t i = 0; i < n; i++) ids[i] = (size_t)rand() % V;
        expect_reference(m, ids, n);
    }
}
END_TEST

/* MLPs whose hidden units share a few W1 (and W3) columns, over several chunks, plain and gated:
 * one chain per class of equal columns (UnitClasses) gives reference_forward's numbers bit for
 * bit, each unit with its own bias. */
START_TEST(test_mlp_unit_classes) {
    Model *m = &model;
    srand(10);
    enum { D = 20, N = 12, H0 = 2 * WORKSPACE_HIDDEN_CHUNK + 5, H1 = 40 };
    int_tokens(m, 3, N, D);
    for (size_t i = 0; i < 4 * D; i++) matrix_set(&m->token_embed, i / D, i % D, rand() % 3 ? 0 : (double)(rand() % 41 - 20) / 7.0);
    for (size_t i = 0; i < (N + 1) * D; i++) matrix_set(&m->pos_embed, i / D, i % D, rand() % 3 ? 0 : (double)(rand() % 41 - 20) / 7.0);
    size_t heads[2] = {0, 0}, hidden[2] = {H0, H1};
    fx_layers(m, 2, heads, hidden);
    fx_gate(m, 1);
    double proto[3][D];
    for (size_t l = 0; l < 2; l++) {
        ModelMlp *f = &m->layers[l].mlp;
        Matrix *w[2] = {&f->w1, &f->w3};
        for (int k = 0; k < (l ? 2 : 1); k++) {
            for (int p = 0; p < 2; p++)
                for (size_t d = 0; d < D; d++) proto[p][d] = rand() % 3 ? 0.0 : (double)(rand() % 41 - 20) / 9.0;
            for (size_t d = 0; d < D; d++) proto[2][d] = 2 * proto[0][d]; /* the same dims as the first */
            for (size_t u = 0; u < hidden[l]; u++)
                for (size_t d = 0; d < D; d++) matrix_set(w[k], d, u, proto[(u * 7 + k) % 3][d]);
        }
        for (size_t u = 0; u < hidden[l]; u++) {
            f->b1[u] = (double)(rand() % 41 - 20) / 5.0;
            if (l) f->b3[u] = (double)(rand() % 11 - 5) / 3.0;
        }
        for (size_t i = 0; i < hidden[l] * D; i++)
            matrix_set(&f->w2, i / D, i % D, rand() % 9 ? 0.0 : (double)(rand() % 41 - 20) / 11.0);
    }
    ready(false);
    for (int k = 0; k < 4; k++) {
        size_t n = k ? 1 + (size_t)rand() % N : N, ids[N];
        for (size_t i = 0; i < n; i++) ids[i] = (size_t)rand() % 3;
        expect_reference(m, ids, n);
    }
    ck_assert(ws.w1_classes[0].used && ws.w1_classes[1].used && ws.w3_classes[1].used);
}
END_TEST

/* A random sparse model: the forward pass equals reference_forward bit for bit, and running the
 * layers one range at a time equals running them all at once. */
START_TEST(test_forward_matches_reference) {
    Model *m = &model;
    srand(7);
    m->d_model = 40;
    m->max_len = 9;
    m->n_vocab = 3;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 3);
    for (int v = 0; v < 3; v++) m->vocab[v] = value_int(v);
    m->token_type = IR_TOKENS_INT;
    m->token_embed = model_matrix(m, 4, 40);
    m->pos_embed = model_matrix(m, 10, 40);
    for (size_t i = 0; i < 4 * 40; i++) matrix_set(&m->token_embed, i / 40, i % 40, (rand() % 5 == 0) ? rand() % 3 : 0);
    for (size_t i = 0; i < 10 * 40; i++) matrix_set(&m->pos_embed, i / 40, i % 40, (rand() % 5 == 0) ? rand() % 3 : 0);
    /* layer 1's hidden units span three chunks: its W2 chains go on from chunk to chunk */
    size_t heads[3] = {2, 1, 3}, hidden[3] = {5, 2 * WORKSPACE_HIDDEN_CHUNK + 3, 7};
    fx_layers(m, 3, heads, hidden);
    for (size_t l = 0; l < 3; l++) {
        for (size_t h = 0; h < heads[l]; h++) {
            ModelHead *H = &m->layers[l].heads[h];
            fx_head(m, H, 3, 4, h % 2 == 1, "r");
            if (h == 0) H->bos_extra = l == 0 ? 7 : 1023; /* a heavy BOS, where BOS ties */
            Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            for (int k = 0; k < 4; k++)
                for (size_t i = 0; i < w[k]->rows * w[k]->cols; i++)
                    matrix_set(w[k], i / w[k]->cols, i % w[k]->cols,
                               rand() % 9 == 0 ? (double)(rand() % 7) / 4.0 - 0.75 : 0.0);
        }
        ModelMlp *f = &m->layers[l].mlp;
        for (size_t i = 0; i < f->w1.rows * f->w1.cols; i++)
            matrix_set(&f->w1, i / f->w1.cols, i % f->w1.cols, rand() % 6 == 0 ? rand() % 5 - 2 : 0);
        for (size_t i = 0; i < f->w2.rows * f->w2.cols; i++)
            matrix_set(&f->w2, i / f->w2.cols, i % f->w2.cols, rand() % 6 == 0 ? rand() % 5 - 2 : 0);
        for (size_t i = 0; i < hidden[l]; i++) f->b1[i] = rand() % 3 - 1;
        for (size_t i = 0; i < 40; i++) f->b2[i] = rand() % 8 == 0 ? 1 : 0;
        if (l == 2) { /* a gated layer: its multipliers read through a plan of their own */
            fx_gate(m, l);
            for (size_t i = 0; i < f->w3.rows * f->w3.cols; i++)
                matrix_set(&f->w3, i / f->w3.cols, i % f->w3.cols, rand() % 5 == 0 ? rand() % 5 - 2 : 0);
            for (size_t i = 0; i < hidden[l]; i++) f->b3[i] = rand() % 3 - 1;
        }
    }
    size_t ids[9] = {0, 2, 1, 1, 0, 2, 2, 1, 0};
    size_t n = 9, D = 40;
    double *want = calloc((n + 1) * D, sizeof(double)), *got = calloc((n + 1) * D, sizeof(double)),
           *steps = calloc((n + 1) * D, sizeof(double));
    reference_forward(m, ids, n, want);
    ready(false);
    model_forward(m, ids, n, 0, 3, got, &ws);
    model_forward(m, ids, n, 0, 1, steps, &ws);
    model_forward(m, ids, n, 1, 2, steps, &ws);
    model_forward(m, ids, n, 2, 3, steps, &ws);
    double norm = 0;
    for (size_t i = 0; i < (n + 1) * D; i++) {
        ck_assert_msg(memcmp(&want[i], &got[i], sizeof(double)) == 0, "entry %zu: %.17g vs %.17g", i, want[i], got[i]);
        ck_assert(steps[i] == got[i]);
        norm += fabs(want[i]);
    }
    ck_assert(norm > 1.0); /* the model actually computes something */
    free(want);
    free(got);
    free(steps);
}
END_TEST

static Value *reals(const double *x, size_t n) {
    Value *v = ARENA_ARRAY(&out_arena, Value, n + 1);
    for (size_t i = 0; i < n; i++) v[i] = value_float(x[i]);
    return v;
}

/* A gated MLP multiplies two real-valued dims exactly: r_i = x_i * x_{i-1}, on many inputs (the
 * ends of the range, zeros, random reals), and with b3 the multiplier is shifted. */
START_TEST(test_gated_product) {
    fx_product(&model);
    ready(_i == 0);
    uint64_t state = 42;
    const double special[] = {-4, 4, 0, -0.0, 1, -1, 0.001, -3.999, 2.5, -2.5};
    for (int shifted = 0; shifted < 2; shifted++) {
        if (shifted) { /* multiplier y + 0.5: r_i = x_i * (x_{i-1} + 0.5) */
            model.layers[0].mlp.b3[0] = model.layers[0].mlp.b3[1] = 0.5;
            ready(_i == 0);
        }
        for (int k = 0; k < 400; k++) {
            double x[6];
            size_t n = 1 + (size_t)(k % 6);
            for (size_t i = 0; i < n; i++) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                double u = (double)(state >> 11) / 9007199254740992.0;
                x[i] = k < 40 ? special[(k + 3 * i) % 10] : (k % 3 ? round((8 * u - 4) * 1000) / 1000 : 8 * u - 4);
            }
            Value *out;
            ck_assert_msg(run(reals(x, n), n, &out), "%s", err);
            for (size_t i = 0; i < n; i++) {
                double y = (i ? x[i - 1] : 0.0) + (shifted ? 0.5 : 0.0), want = x[i] * y;
                ck_assert_int_eq(out[i].kind, VAL_FLOAT);
                ck_assert_msg(out[i].as.f == want, "input %d position %zu: %.17g * %.17g = %.17g, model %.17g", k, i, x[i],
                              y, want, out[i].as.f);
            }
        }
    }
    /* without the gate the same weights are a plain ReLU MLP: ReLU(x) - ReLU(-x) = x */
    model.layers[0].mlp.gated = false;
    ready(_i == 0);
    double x[2] = {1.5, -2.25};
    Value *out;
    ck_assert_msg(run(reals(x, 2), 2, &out), "%s", err);
    ck_assert(out[0].as.f == 1.5 && out[1].as.f == -2.25);
}
END_TEST

/* A margin check refuses an input whose functional lies within the margin of a threshold, with
 * the message verify/ recognises; farther away the input runs. */
START_TEST(test_margin_check) {
    fx_product(&model);
    const size_t dims[1] = {3};
    const double coefs[1] = {1}, thr[2] = {-1, 1};
    fx_margin(&model, 0, "r", 1, dims, coefs, 2, thr, 0.01);
    ready(_i == 0);
    Value *out;
    double ok[3] = {2, 0.6, -1.5}; /* r = 0, 1.2, -0.9 */
    ck_assert_msg(run(reals(ok, 3), 3, &out), "%s", err);
    ck_assert(out[1].as.f == 2 * 0.6 && out[2].as.f == 0.6 * -1.5);
    double at_one[2] = {2, 0.5}; /* r at position 1 is 1.0 */
    ck_assert(!run(reals(at_one, 2), 2, &out));
    ck_assert_str_eq(err, "within the margin: s-op r is 1.0 at position 1, within 0.01 of the threshold 1.0 it is "
                          "compared with; the model cannot decide the comparison exactly");
    ck_assert(strncmp(err, MODEL_MARGIN_ERROR, strlen(MODEL_MARGIN_ERROR)) == 0);
    double near[3] = {3, 2, -0.502}; /* r: 0, 6, -1.004: within 0.01 of -1 */
    ck_assert(!run(reals(near, 3), 3, &out));
    ck_assert_msg(strstr(err, "within the margin: s-op r is -1.004 at position 2, within 0.01 of the threshold -1.0 "),
                  "%s", err);
    double between[2] = {1, 0.02}; /* r = 0.02: far from both */
    ck_assert_msg(run(reals(between, 2), 2, &out), "%s", err);
    /* the nearest threshold is found among many (sorted): every one of 0.1, 0.2, ..., 3.0 */
    double many[30];
    for (int j = 0; j < 30; j++) many[j] = (j + 1) / 10.0;
    model.margins[0].thresholds = many;
    model.margins[0].n_thresholds = 30;
    for (int j = 0; j < 30; j++) {
        double in[2] = {1, many[j] + 0.005};
        ck_assert(!run(reals(in, 2), 2, &out));
        ck_assert_msg(strstr(err, "within 0.01 of the threshold"), "%s", err);
        in[1] = many[j] + 0.05; /* halfway between two thresholds */
        ck_assert_msg(run(reals(in, 2), 2, &out), "%g: %s", in[1], err);
    }
    /* a functional that overflows is an error of its own, not "within the margin" */
    model.margins[0].coefs[0] = 1e308;
    double big[2] = {4, 4};
    ck_assert(!run(reals(big, 2), 2, &out));
    ck_assert_str_eq(err, "s-op r is inf at position 1, not a finite number");
}
END_TEST

START_TEST(test_param_counts) {
    fx_relu(&model);
    /* embeddings 5*3 + 7*3, w1 3x1, b1 1, w2 1x3, b2 3, readout 3 */
    ck_assert_uint_eq(model_param_count(&model), 15 + 21 + 3 + 1 + 3 + 3 + 3);
    /* non-zero: token values 1,2,3 + BOS, w1, b1, w2, b2[2], readout[2] */
    ck_assert_uint_eq(model_nonzero_count(&model), 4 + 1 + 1 + 1 + 1 + 1);
    model_free(&model);
    model_init(&model);
    fx_product(&model);
    /* embeddings 2x11 + 7x11, wq wk 11x7, wv 11x1, wo 1x11, w1 11x2, b1 2, w2 2x11, b2 11, w3
     * 11x2, b3 2, readout 11 */
    size_t gate = 22 + 2;
    ck_assert_uint_eq(model_param_count(&model), 22 + 77 + 77 + 77 + 11 + 11 + 22 + 2 + 22 + 11 + gate + 11);
    /* non-zero: BOS, 7 positions, wq 6, wk 7, wv, wo, w1 2, w2 2, w3 2, readout */
    ck_assert_uint_eq(model_nonzero_count(&model), 1 + 7 + 6 + 7 + 1 + 1 + 2 + 2 + 2 + 1);
    model.layers[0].mlp.gated = false; /* w3 and b3 are not parameters of an ungated layer */
    ck_assert_uint_eq(model_param_count(&model), 22 + 77 + 77 + 77 + 11 + 11 + 22 + 2 + 22 + 11 + 11);
}
END_TEST

int main(void) {
    Suite *s = suite_create("forward");
    TCase *tc = tcase_create("forward");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* loop index 0: the default workspace; 1: one that holds a single input of max_len */
    tcase_add_loop_test(tc, test_previous_token, 0, 2);
    tcase_add_loop_test(tc, test_average_hard_ties, 0, 2);
    tcase_add_loop_test(tc, test_causal_mask, 0, 2);
    tcase_add_loop_test(tc, test_mlp_relu, 0, 2);
    tcase_add_loop_test(tc, test_not_one_hot_output, 0, 2);
    tcase_add_loop_test(tc, test_check_fires, 0, 2);
    tcase_add_loop_test(tc, test_out_of_margin, 0, 2);
    tcase_add_loop_test(tc, test_exact_decode, 0, 2);
    tcase_add_loop_test(tc, test_kind_block, 0, 2);
    tcase_add_loop_test(tc, test_unbounded, 0, 2);
    tcase_add_loop_test(tc, test_absolute_tie_tolerance, 0, 2);
    tcase_add_loop_test(tc, test_values_by_length, 0, 2);
    tcase_add_test(tc, test_values_by_length_rules);
    tcase_add_loop_test(tc, test_input_errors, 0, 2);
    tcase_add_test(tc, test_int_token_table);
    tcase_add_test(tc, test_forward_matches_reference);
    tcase_add_test(tc, test_attention_both_sides);
    tcase_add_test(tc, test_attention_shortcuts);
    tcase_add_test(tc, test_listed_gathers);
    tcase_add_test(tc, test_mlp_unit_classes);
    tcase_add_test(tc, test_fresh_dims_poisoned);
    tcase_add_loop_test(tc, test_gated_product, 0, 2);
    tcase_add_loop_test(tc, test_margin_check, 0, 2);
    tcase_add_test(tc, test_param_counts);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
