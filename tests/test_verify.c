/* verify/: the typed exact comparison, input enumeration and random inputs, reports, and the
 * sample driver on compiled models, pristine and deliberately corrupted. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "tests/compile_fixture.h"
#include "tests/runtime_fixtures.h"
#include "verify/verify.h"

/* ---- comparison ---- */

START_TEST(test_kinds_differ) {
    Value one[] = {value_int(1), value_float(1.0), value_bool(true)};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            ck_assert_msg(verify_same_atom(one[i], one[j], 0) == (i == j), "%zu vs %zu", i, j);
            ck_assert(verify_same_atom(one[i], one[j], 1.0) == (i == j)); /* a bound never merges kinds */
        }
    ck_assert(!verify_same_atom(value_int(0), value_bool(false), 0));
    ck_assert(!verify_same_atom(value_str("1"), value_int(1), 0));
    ck_assert(verify_same_atom(value_bool(false), value_bool(false), 0));
    ck_assert(!verify_same_atom(value_bool(true), value_bool(false), 0));
    ck_assert(verify_same_atom(value_int(-7), value_int(-7), 0));
    ck_assert(!verify_same_atom(value_int(INT64_MAX), value_int(INT64_MAX - 1), 0));
}
END_TEST

START_TEST(test_strings_by_bytes) {
    char a[] = "caf\xc3\xa9", b[] = "caf\xc3\xa9";
    ck_assert(verify_same_atom(value_str(a), value_str(b), 0)); /* different storage, same bytes */
    ck_assert(!verify_same_atom(value_str("a"), value_str("a "), 0));
    ck_assert(!verify_same_atom(value_str("a"), value_str("A"), 0));
    ck_assert(verify_same_atom(value_str(""), value_str(""), 0));
}
END_TEST

START_TEST(test_floats_bitwise) {
    /* -0.0 and 0.0 differ exactly (Python prints them differently); a bound merges them */
    ck_assert(!verify_same_atom(value_float(-0.0), value_float(0.0), 0));
    ck_assert(verify_same_atom(value_float(-0.0), value_float(-0.0), 0));
    ck_assert(verify_same_atom(value_float(-0.0), value_float(0.0), 1e-12));
    /* the last bit counts */
    volatile double x = 0.1, y = 0.2;
    ck_assert(!verify_same_atom(value_float(x + y), value_float(0.3), 0));
    ck_assert(verify_same_atom(value_float(x + y), value_float(0.3), 1e-12));
    ck_assert(!verify_same_atom(value_float(1.0), value_float(1.5), 0.25));
    ck_assert(verify_same_atom(value_float(1.0), value_float(1.25), 0.25));
    /* NaN equals NaN whatever its sign; never a number */
    ck_assert(verify_same_atom(value_float(NAN), value_float(NAN), 0));
    ck_assert(verify_same_atom(value_float(NAN), value_float(-NAN), 0));
    ck_assert(!verify_same_atom(value_float(NAN), value_float(1.0), 0));
    ck_assert(!verify_same_atom(value_float(1.0), value_float(NAN), 1e300));
    /* infinities: equal only to themselves, even with a bound */
    ck_assert(verify_same_atom(value_float(INFINITY), value_float(INFINITY), 0));
    ck_assert(verify_same_atom(value_float(INFINITY), value_float(INFINITY), 1e-9));
    ck_assert(!verify_same_atom(value_float(INFINITY), value_float(-INFINITY), 1e-9));
    ck_assert(!verify_same_atom(value_float(INFINITY), value_float(1e308), 1e300));
}
END_TEST

START_TEST(test_same_output) {
    Value a[] = {value_int(1), value_str("x"), value_float(2.0)};
    Value b[] = {value_int(1), value_str("x"), value_int(2)};
    size_t where = 99;
    ck_assert(verify_same_output(a, a, 3, 0, 0, &where));
    ck_assert_uint_eq(where, 99);
    ck_assert(!verify_same_output(a, b, 3, 0, 0, &where));
    ck_assert_uint_eq(where, 2);
    ck_assert(verify_same_output(a, b, 2, 0, 0, NULL));
    ck_assert(verify_same_output(a, b, 0, 0, 0, NULL));
}
END_TEST

/* The bound a model states applies to real-valued outputs only. */
START_TEST(test_model_bound) {
    Model m;
    model_init(&m);
    m.output_kind = MODEL_OUT_NUMERICAL;
    m.out_error_bound = 1e-9;
    ck_assert(verify_model_bound(&m) == 1e-9); /* no value set: real-valued */
    Value vals[] = {value_int(0), value_int(1)};
    m.out_values = vals;
    m.out_count = 2;
    ck_assert(verify_model_bound(&m) == 0); /* decoded to exact atoms */
    m.output_kind = MODEL_OUT_CATEGORICAL;
    ck_assert(verify_model_bound(&m) == 0);
    m.out_values = NULL;
    model_free(&m);
}
END_TEST

/* ---- inputs ---- */

START_TEST(test_counts) {
    ck_assert_uint_eq(verify_count_inputs(3, 2), 3 + 9);
    ck_assert_uint_eq(verify_count_inputs(1, 4), 4);
    ck_assert_uint_eq(verify_count_inputs(0, 5), 0);
    ck_assert_uint_eq(verify_count_inputs(7, 0), 0);
    ck_assert_uint_eq(verify_count_inputs(10, 8), 111111110);
    ck_assert_uint_eq(verify_count_inputs(1000, 100), SIZE_MAX);
    ck_assert_uint_eq(verify_lengths_within(3, 8, 2000), 6); /* 1092 <= 2000 < 3279 */
    ck_assert_uint_eq(verify_lengths_within(3, 8, 12), 2);
    ck_assert_uint_eq(verify_lengths_within(3, 8, 11), 1);
    ck_assert_uint_eq(verify_lengths_within(3, 8, 2), 0);
    ck_assert_uint_eq(verify_lengths_within(2, 3, 1000000), 3); /* clipped by max_len */
    ck_assert_uint_eq(verify_lengths_within(0, 8, 1000), 0);
    ck_assert_uint_eq(verify_lengths_within(1000, 100, SIZE_MAX - 1), 6);
}
END_TEST

START_TEST(test_odometer) {
    Arena a;
    arena_init(&a);
    Value vocab[] = {value_str("a"), value_str("b"), value_str("c")};
    VerifyOdometer o;
    verify_odometer_init(&o, vocab, 3, 3, &a);
    Value in[3];
    size_t n, count = 0, per_len[4] = {0};
    char prev[4] = "", cur[4];
    while (verify_odometer_next(&o, in, &n)) {
        ck_assert(n >= 1 && n <= 3);
        for (size_t i = 0; i < n; i++) cur[i] = in[i].as.s[0];
        cur[n] = '\0';
        /* lengths ascending; within a length, strictly increasing */
        ck_assert_msg(strlen(prev) < n || strcmp(prev, cur) < 0, "%s then %s", prev, cur);
        if (count == 0) ck_assert_str_eq(cur, "a");
        if (count == 3) ck_assert_str_eq(cur, "aa");
        memcpy(prev, cur, sizeof cur);
        per_len[n]++;
        count++;
    }
    ck_assert_str_eq(prev, "ccc");
    ck_assert_uint_eq(count, verify_count_inputs(3, 3));
    ck_assert_uint_eq(per_len[1], 3);
    ck_assert_uint_eq(per_len[2], 9);
    ck_assert_uint_eq(per_len[3], 27);
    ck_assert(!verify_odometer_next(&o, in, &n)); /* stays done */
    verify_odometer_init(&o, vocab, 0, 3, &a);
    ck_assert(!verify_odometer_next(&o, in, &n));
    verify_odometer_init(&o, vocab, 3, 0, &a);
    ck_assert(!verify_odometer_next(&o, in, &n));
    arena_free(&a);
}
END_TEST

/* A model with only what input generation reads. */
static void small_model(Model *m, size_t n_vocab, size_t max_len) {
    model_init(m);
    m->max_len = max_len;
    m->n_vocab = n_vocab;
    m->vocab = ARENA_ARRAY(&m->arena, Value, n_vocab);
    for (size_t i = 0; i < n_vocab; i++) m->vocab[i] = value_int((int64_t)i * 10);
}

START_TEST(test_random_reproducible) {
    Model m;
    small_model(&m, 4, 6);
    enum { K = 200 };
    Value a[6], b[6];
    uint64_t s1 = 42, s2 = 42, s3 = 43;
    size_t seen_len[7] = {0}, differ = 0;
    for (int k = 0; k < K; k++) {
        size_t na = verify_random_input(&m, 0, &s1, a), nb = verify_random_input(&m, 0, &s2, b);
        ck_assert_uint_eq(na, nb);
        ck_assert(na >= 1 && na <= 6);
        ck_assert(verify_same_output(a, b, na, 0, 0, NULL));
        for (size_t i = 0; i < na; i++) ck_assert(a[i].kind == VAL_INT && a[i].as.i % 10 == 0 && a[i].as.i <= 30);
        seen_len[na]++;
        size_t nc = verify_random_input(&m, 0, &s3, b);
        differ += nc != na || !verify_same_output(a, b, na, 0, 0, NULL);
    }
    for (size_t l = 1; l <= 6; l++) ck_assert_msg(seen_len[l] > 0, "length %zu never drawn", l);
    ck_assert_uint_gt(differ, K / 2); /* another seed, other inputs */
    /* a shorter random_max_len bounds the lengths; a longer one is clipped to the model's */
    for (int k = 0; k < K; k++) {
        ck_assert_uint_le(verify_random_input(&m, 2, &s1, a), 2);
        ck_assert_uint_le(verify_random_input(&m, 60, &s1, a), 6);
    }
    model_free(&m);
}
END_TEST

START_TEST(test_random_reals) {
    Model m;
    small_model(&m, 1, 5);
    m.numeric_tokens = true;
    m.token_lo = -2.5;
    m.token_hi = 1.25;
    Value in[5];
    uint64_t s = 7;
    double lo = 1e9, hi = -1e9;
    size_t ends = 0, zeros = 0, neg_zeros = 0, decimals = 0, fine = 0;
    for (int k = 0; k < 500; k++) {
        size_t n = verify_random_input(&m, 0, &s, in);
        for (size_t i = 0; i < n; i++) {
            ck_assert(in[i].kind == VAL_FLOAT);
            double v = in[i].as.f;
            ck_assert(v >= -2.5 && v <= 1.25);
            ends += v == -2.5 || v == 1.25;
            zeros += v == 0;
            neg_zeros += v == 0 && signbit(v);
            if (fabs(v * 1000 - round(v * 1000)) < 1e-6) decimals++; /* on the grid, as typed */
            else fine++;                                              /* full precision */
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    ck_assert(lo < -2.3 && hi > 1.1); /* spread over the range */
    ck_assert(ends > 50 && zeros > 50 && neg_zeros > 10 && decimals > 200 && fine > 500);
    model_free(&m);
}
END_TEST

/* ---- reports ---- */

static char *report_of(const VerifyOutcome *o) {
    char *r = verify_format_report(o);
    ck_assert(r != NULL);
    return r;
}

START_TEST(test_report_format) {
    Value in[] = {value_str("a"), value_str("\"")};
    Value model[] = {value_float(1.0), value_float(-0.0)};
    Value ref[] = {value_int(1), value_float(0.0)};
    VerifyOutcome o;
    memset(&o, 0, sizeof o);
    o.verdict = VERIFY_MISMATCH;
    o.input = in;
    o.n = 2;
    o.model_ok = o.ref_ok = true;
    o.model_out = model;
    o.ref_out = ref;
    char *r = report_of(&o);
    ck_assert_str_eq(r, "input [\"a\", \"\\\"\"]: model [1.0, -0.0], reference [1, 0.0]");
    free(r);
    o.model_ok = false;
    snprintf(o.model_err, sizeof o.model_err, "output s-op x is not one-hot at position 1");
    Value nan_ref[] = {value_float(NAN), value_float(-INFINITY)};
    o.ref_out = nan_ref;
    r = report_of(&o);
    ck_assert_str_eq(r, "input [\"a\", \"\\\"\"]: model {\"error\": \"output s-op x is not one-hot at position 1\"}, "
                        "reference [NaN, -Infinity]");
    free(r);
    Value bools[] = {value_bool(true), value_bool(false)};
    o.model_ok = true;
    o.model_out = bools;
    o.ref_ok = false;
    snprintf(o.ref_err, sizeof o.ref_err, "t.rasp:1:5: division by zero");
    r = report_of(&o);
    ck_assert_str_eq(r, "input [\"a\", \"\\\"\"]: model [true, false], reference {\"error\": \"t.rasp:1:5: division by zero\"}");
    free(r);
}
END_TEST

/* ---- one input and the sample driver, on compiled models ---- */

typedef struct Fixture {
    Compiled *c;
    Workspace ws;
    VerifyReference ref;
    VerifyPair pair;
} Fixture;

static Fixture *fixture(const char *src, const char *vocab, size_t max_len) {
    Fixture *f = calloc(1, sizeof *f);
    f->c = compile_src(src, "r", vocab, max_len);
    ck_assert_msg(f->c->ok, "%s", compiled_first_error(f->c));
    char err[256];
    ck_assert_msg(workspace_init(&f->ws, &f->c->model, err, sizeof err), "%s", err);
    ck_assert_msg(verify_reference_load(&f->ref, &f->c->model, NULL, stderr, err, sizeof err), "%s", err);
    f->pair = (VerifyPair){.model = &f->c->model, .ws = &f->ws, .ref = &f->ref, .bound = 0.0};
    return f;
}

static void fixture_free(Fixture *f) {
    verify_reference_free(&f->ref);
    workspace_free(&f->ws);
    compiled_free(f->c);
    free(f);
}

static const char REVERSE[] = "r = aggregate(select(indices, length - indices - 1, ==), tokens);";
/* an integer output read out numerically (an affine view, not a one-hot block) */
static const char AFFINE[] = "r = 3 * selector_width(select(tokens, tokens, ==)) - indices;";
/* averaging strings: the reference raises when several keys are selected, even equal ones */
static const char COPY_SAME[] = "r = aggregate(select(tokens, tokens, ==), tokens);";

START_TEST(test_verdicts) {
    Fixture *f = fixture(COPY_SAME, "ab", 3);
    Arena a;
    arena_init(&a);
    VerifyOutcome o;
    Value ab[] = {value_str("a"), value_str("b")}, aa[] = {value_str("a"), value_str("a")};
    ck_assert_int_eq(verify_input(&f->pair, ab, 2, &a, &o), VERIFY_AGREE);
    ck_assert(o.model_ok && o.ref_ok);
    ck_assert_int_eq(verify_input(&f->pair, aa, 2, &a, &o), VERIFY_BOTH_ERROR);
    ck_assert(!o.model_ok && !o.ref_ok && *o.model_err && strstr(o.ref_err, "t.rasp:"));
    Value unknown[] = {value_str("z")}, longer[] = {ab[0], ab[1], ab[0], ab[1]};
    ck_assert_int_eq(verify_input(&f->pair, unknown, 1, &a, &o), VERIFY_OUTSIDE);
    ck_assert(strstr(o.model_err, "not in the vocabulary"));
    ck_assert_int_eq(verify_input(&f->pair, longer, 4, &a, &o), VERIFY_OUTSIDE);
    arena_free(&a);
    fixture_free(f);
}
END_TEST

START_TEST(test_sample_pristine) {
    Fixture *f = fixture(REVERSE, "abc", 4);
    VerifySampleOptions so = {.exhaustive_len = 4, .random = 50, .seed = 3};
    VerifySampleResult r;
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.inputs, verify_count_inputs(3, 4) + 50);
    ck_assert_uint_eq(r.exhaustive_len, 4);
    ck_assert_uint_eq(r.random, 50);
    ck_assert_uint_eq(r.random_max_len, 4);
    ck_assert_uint_eq(r.mismatches, 0);
    ck_assert(!r.timed_out && !r.out_of_inputs && r.first_mismatch == NULL);
    verify_sample_result_free(&r);
    /* as many lengths as fit in a limit; then an input budget */
    so = (VerifySampleOptions){.exhaustive_len = 4, .exhaustive_limit = 40, .random = 5};
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.exhaustive_len, 3);
    ck_assert_uint_eq(r.inputs, 39 + 5);
    verify_sample_result_free(&r);
    so = (VerifySampleOptions){.exhaustive_len = 4, .random = 5, .max_inputs = 10};
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.inputs, 10);
    ck_assert_uint_eq(r.exhaustive_len, 1); /* the 3 of length 1, then 7 of length 2 */
    ck_assert_uint_eq(r.random, 0);
    ck_assert(r.out_of_inputs && !r.timed_out);
    verify_sample_result_free(&r);
    /* a time limit on the exhaustive phase alone: the random phase still runs */
    so = (VerifySampleOptions){.exhaustive_len = 4, .exhaustive_seconds = 1e-9, .random = 7};
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert(r.exhaustive_cut && !r.timed_out);
    ck_assert_uint_eq(r.random, 7);
    ck_assert_uint_lt(r.exhaustive_len, 4);
    verify_sample_result_free(&r);
    /* runs of one token at the maximum length come first, as many as asked (at most the
     * vocabulary), and still run when the exhaustive phase is cut at once */
    so = (VerifySampleOptions){.runs = 5, .exhaustive_len = 4, .exhaustive_seconds = 1e-9};
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.runs, 3);
    ck_assert_uint_ge(r.inputs, 3);
    ck_assert_uint_eq(r.random, 0);
    verify_sample_result_free(&r);
    /* a time budget (tiny: stops almost at once, but says so) */
    so = (VerifySampleOptions){.random = 1000000, .max_seconds = 1e-9};
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert(r.timed_out);
    ck_assert_uint_lt(r.inputs, 1000000);
    verify_sample_result_free(&r);
    fixture_free(f);
}
END_TEST

/* Both-error inputs are agreements and are counted. */
START_TEST(test_sample_errors_agreed) {
    Fixture *f = fixture(COPY_SAME, "ab", 3);
    VerifySampleOptions so = {.exhaustive_len = 3};
    VerifySampleResult r;
    ck_assert(verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.inputs, 14);
    ck_assert_uint_eq(r.errors_agreed, 14 - 2 - 2); /* all but a, b, ab, ba repeat a token */
    verify_sample_result_free(&r);
    fixture_free(f);
}
END_TEST

static size_t mismatch_calls;
static void count_mismatch(void *ctx, const VerifyOutcome *o) {
    (void)ctx;
    ck_assert_int_eq(o->verdict, VERIFY_MISMATCH);
    mismatch_calls++;
}

/* Token 'a' embedded as 'b': the model now answers "b" where the program says "a". */
START_TEST(test_sample_corrupted_embedding) {
    Fixture *f = fixture(REVERSE, "abc", 4);
    Matrix *E = &f->c->model.token_embed;
    for (size_t j = 0; j < E->cols; j++) {
        double t = matrix_get(E, 0, j);
        matrix_set(E, 0, j, matrix_get(E, 1, j));
        matrix_set(E, 1, j, t);
    }
    workspace_free(&f->ws); /* a workspace is made for the weights as they are */
    char err[256];
    ck_assert_msg(workspace_init(&f->ws, &f->c->model, err, sizeof err), "%s", err);
    VerifySampleOptions so = {.exhaustive_len = 4, .random = 100, .on_mismatch = count_mismatch};
    VerifySampleResult r;
    mismatch_calls = 0;
    ck_assert(!verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.inputs, 1); /* stops at the first */
    ck_assert_uint_eq(r.mismatches, 1);
    ck_assert_uint_eq(mismatch_calls, 1);
    ck_assert_uint_eq(r.exhaustive_len, 0);
    ck_assert_ptr_nonnull(r.first_mismatch);
    ck_assert_str_eq(r.first_mismatch, "input [\"a\"]: model [\"b\"], reference [\"a\"]");
    verify_sample_result_free(&r);
    /* keep going: every input holding an 'a' or 'b'... all but those made of 'c' alone */
    so.keep_going = true;
    mismatch_calls = 0;
    ck_assert(!verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.inputs, verify_count_inputs(3, 4) + 100);
    ck_assert_uint_eq(mismatch_calls, r.mismatches);
    ck_assert_uint_ge(r.mismatches, verify_count_inputs(3, 4) - 4);
    ck_assert_str_eq(r.first_mismatch, "input [\"a\"]: model [\"b\"], reference [\"a\"]");
    verify_sample_result_free(&r);
    fixture_free(f);
}
END_TEST

/* A numerical output read out at twice its weight. */
START_TEST(test_sample_corrupted_readout) {
    Fixture *f = fixture(AFFINE, "ab", 4);
    VerifySampleOptions so = {.exhaustive_len = 4, .random = 20};
    VerifySampleResult r;
    ck_assert_msg(verify_sample(&f->pair, &so, &r), "pristine: %s", r.first_mismatch);
    verify_sample_result_free(&r);
    ck_assert_int_eq(f->c->model.output_kind, MODEL_OUT_NUMERICAL);
    for (size_t j = 0; j < f->c->model.d_model; j++) f->c->model.out_readout[j] *= 2;
    ck_assert(!verify_sample(&f->pair, &so, &r));
    ck_assert_uint_eq(r.mismatches, 1);
    ck_assert_msg(strncmp(r.first_mismatch, "input [\"a\"]: model ", 19) == 0 && strstr(r.first_mismatch, "reference [3]"),
                  "%s", r.first_mismatch);
    verify_sample_result_free(&r);
    fixture_free(f);
}
END_TEST

/* ---- real-valued outputs: margin refusals and the largest error ---- */

/* The hand-built gated product model (tests/runtime_fixtures.h) against the program stored in
 * it, which the reference evaluates: r_i = x_i * x_{i-1}, real-valued, bound 1e-9. */
typedef struct Product {
    Model model;
    Workspace ws;
    VerifyReference ref;
    VerifyPair pair;
} Product;

static Product *product(bool margin) {
    Product *p = calloc(1, sizeof *p);
    model_init(&p->model);
    fx_product(&p->model);
    if (margin) { /* as if the program compared r with 1: refused within 0.05 of it */
        const size_t dims[1] = {3};
        const double coefs[1] = {1}, thr[1] = {1};
        fx_margin(&p->model, 0, "r", 1, dims, coefs, 1, thr, 0.05);
    }
    char err[256];
    ck_assert_msg(workspace_init(&p->ws, &p->model, err, sizeof err), "%s", err);
    ck_assert_msg(verify_reference_load(&p->ref, &p->model, NULL, stderr, err, sizeof err), "%s", err);
    p->pair = (VerifyPair){.model = &p->model, .ws = &p->ws, .ref = &p->ref, .bound = verify_model_bound(&p->model)};
    ck_assert(p->pair.bound == 1e-9);
    return p;
}

static void product_free(Product *p) {
    verify_reference_free(&p->ref);
    workspace_free(&p->ws);
    model_free(&p->model);
    free(p);
}

START_TEST(test_margin_verdict) {
    Product *p = product(true);
    Arena a;
    arena_init(&a);
    VerifyOutcome o;
    Value at_one[] = {value_float(2), value_float(0.5)}, fine[] = {value_float(2), value_float(0.25)};
    ck_assert_int_eq(verify_input(&p->pair, at_one, 2, &a, &o), VERIFY_MARGIN);
    ck_assert(!o.model_ok && o.ref_ok && verify_is_margin_error(o.model_err));
    ck_assert_str_eq(o.model_err, "within the margin: s-op r is 1.0 at position 1, within 0.05 of the threshold 1.0 it is "
                                  "compared with; the model cannot decide the comparison exactly");
    ck_assert(o.max_error == 0);
    ck_assert_int_eq(verify_input(&p->pair, fine, 2, &a, &o), VERIFY_AGREE);
    ck_assert(!verify_is_margin_error("s-op r has no value at position 0: the program raises there"));
    ck_assert(!verify_is_margin_error("within the"));
    /* a sample: refusals are counted apart, never as mismatches, and do not stop it */
    VerifySampleOptions so = {.random = 3000, .seed = 5};
    VerifySampleResult r;
    ck_assert_msg(verify_sample(&p->pair, &so, &r), "%s", r.first_mismatch);
    ck_assert_uint_eq(r.inputs, 3000);
    ck_assert_uint_eq(r.mismatches, 0);
    ck_assert_uint_eq(r.errors_agreed, 0);
    ck_assert_uint_gt(r.margins, 0);
    ck_assert_uint_lt(r.margins, 300);
    ck_assert(r.max_error == 0); /* the products are exact */
    verify_sample_result_free(&r);
    arena_free(&a);
    product_free(p);
}
END_TEST

START_TEST(test_largest_error) {
    Product *p = product(false);
    VerifySampleOptions so = {.random = 500, .seed = 9, .keep_going = true};
    VerifySampleResult r;
    ck_assert_msg(verify_sample(&p->pair, &so, &r), "%s", r.first_mismatch);
    ck_assert(r.max_error == 0 && r.margins == 0);
    verify_sample_result_free(&r);
    /* a readout 1e-12 off: within the bound, and measured */
    p->model.out_readout[3] = 1 + 1e-12;
    ck_assert_msg(verify_sample(&p->pair, &so, &r), "%s", r.first_mismatch);
    /* at most 16e-12 (|x y| <= 16), plus the products' rounding at full-precision inputs */
    ck_assert_msg(r.max_error > 1e-12 && r.max_error <= 16e-12 + 1e-14, "%g", r.max_error);
    verify_sample_result_free(&r);
    /* 1e-3 off: mismatches, and the largest error says by how much */
    p->model.out_readout[3] = 1 + 1e-3;
    ck_assert(!verify_sample(&p->pair, &so, &r));
    ck_assert_uint_gt(r.mismatches, 0);
    ck_assert_msg(r.max_error > 1e-3 && r.max_error <= 16e-3 + 1e-14, "%g", r.max_error);
    verify_sample_result_free(&r);
    product_free(p);
}
END_TEST

START_TEST(test_summary_format) {
    Model m;
    model_init(&m);
    m.n_layers = 1;
    char line[256];
    VerifyCounts c = {12, 0, 0, 0, 0};
    verify_format_summary(&m, 0, &c, line, sizeof line);
    ck_assert_str_eq(line, "12 inputs, 0 mismatches, 0 errors agreed");
    c = (VerifyCounts){1000, 1, 3, 2, 3.14e-10};
    verify_format_summary(&m, 0, &c, line, sizeof line); /* refusals without margin checks: shown */
    ck_assert_str_eq(line, "1000 inputs, 1 mismatches, 3 errors agreed, 2 inside the margin");
    verify_format_summary(&m, 1e-6, &c, line, sizeof line);
    ck_assert_str_eq(line, "1000 inputs, 1 mismatches, 3 errors agreed, 2 inside the margin; largest error 3.14e-10 (bound "
                           "1e-06)");
    /* a model with a margin check shows the count even when it is 0 */
    const size_t dims[1] = {0};
    const double coefs[1] = {1}, thr[1] = {0};
    m.d_model = 1;
    fx_margin(&m, 0, "x", 1, dims, coefs, 1, thr, 0.1);
    ck_assert(verify_model_has_margins(&m));
    c = (VerifyCounts){5, 0, 0, 0, 0};
    verify_format_summary(&m, 0, &c, line, sizeof line);
    ck_assert_str_eq(line, "5 inputs, 0 mismatches, 0 errors agreed, 0 inside the margin");
    verify_format_summary(&m, 2.5e-7, &c, line, sizeof line);
    ck_assert_str_eq(line, "5 inputs, 0 mismatches, 0 errors agreed, 0 inside the margin; largest error 0 (bound 2.5e-07)");
    char small[20]; /* truncated, never overrun */
    verify_format_summary(&m, 1e-6, &c, small, sizeof small);
    ck_assert_str_eq(small, "5 inputs, 0 mismatc");
    model_free(&m);
}
END_TEST

/* The reference is the stored program: one that does not load, or lacks the output, fails. */
START_TEST(test_reference_load) {
    Compiled *c = compile_src(REVERSE, "r", "ab", 3);
    ck_assert(c->ok);
    VerifyReference ref;
    char err[256];
    c->model.output_name = "nope";
    ck_assert(!verify_reference_load(&ref, &c->model, NULL, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "no s-op 'nope'"), "%s", err);
    c->model.output_name = "r";
    c->model.program_source = "r = undefined_thing;";
    ck_assert(!verify_reference_load(&ref, &c->model, NULL, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "does not load"), "%s", err);
    compiled_free(c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("verify");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kinds_differ);
    tcase_add_test(tc, test_strings_by_bytes);
    tcase_add_test(tc, test_floats_bitwise);
    tcase_add_test(tc, test_same_output);
    tcase_add_test(tc, test_model_bound);
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_odometer);
    tcase_add_test(tc, test_random_reproducible);
    tcase_add_test(tc, test_random_reals);
    tcase_add_test(tc, test_report_format);
    tcase_add_test(tc, test_verdicts);
    tcase_add_test(tc, test_sample_pristine);
    tcase_add_test(tc, test_sample_errors_agreed);
    tcase_add_test(tc, test_sample_corrupted_embedding);
    tcase_add_test(tc, test_sample_corrupted_readout);
    tcase_add_test(tc, test_reference_load);
    tcase_add_test(tc, test_margin_verdict);
    tcase_add_test(tc, test_largest_error);
    tcase_add_test(tc, test_summary_format);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
