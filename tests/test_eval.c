/* Unit tests for ir/eval.c: small graphs built by hand, evaluated with ir_eval. Expected
 * numbers are Python 3's (the original RASP interpreter's semantics, ir/ir.h). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "ir/eval.h"

#define I(x) value_int(x)
#define F(x) value_float(x)
#define B(x) value_bool(x)
#define S(x) value_str(x)

static Arena arena, scratch;
static IrGraph g;
static SourceFile src = {"prog.rasp", "", 0};
static IrEvalError err;

static SrcLoc at(int line, int col) { return (SrcLoc){&src, line, col}; }
static const SrcLoc L1 = {&src, 1, 1};

static void setup(void) {
    arena_init(&arena);
    arena_init(&scratch);
    ir_graph_init(&g, &arena);
    memset(&err, 0, sizeof err);
}
static void teardown(void) {
    arena_free(&scratch);
    arena_free(&arena);
}

/* Evaluates `out`, which must succeed. */
static Value *eval_ok(const IrNode *out, const Value *in, size_t n) {
    Value *res = NULL;
    bool ok = ir_eval(&g, out, in, n, &scratch, &res, &err);
    ck_assert_msg(ok, "ir_eval failed: %s", err.message);
    ck_assert_ptr_nonnull(res);
    return res;
}

/* Evaluates `out`, which must fail at (line, col) with a message containing `part`. */
static void eval_fails(const IrNode *out, const Value *in, size_t n, int line, int col,
                       const char *part) {
    Value *res = NULL;
    bool ok = ir_eval(&g, out, in, n, &scratch, &res, &err);
    ck_assert_msg(!ok, "ir_eval should fail (%s)", part);
    ck_assert_ptr_eq(err.loc.file, &src);
    ck_assert_msg(err.loc.line == line && err.loc.col == col, "error at %d:%d, want %d:%d (%s)",
                  err.loc.line, err.loc.col, line, col, err.message);
    ck_assert_msg(strstr(err.message, part) != NULL, "message '%s' lacks '%s'", err.message, part);
}

static void expect_ints(const Value *r, const int64_t *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(r[i].kind == VAL_INT, "position %zu: a %s, want an int", i,
                      value_kind_name(r[i].kind));
        ck_assert_msg(r[i].as.i == want[i], "position %zu: %lld, want %lld", i,
                      (long long)r[i].as.i, (long long)want[i]);
    }
}

static void expect_floats(const Value *r, const double *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(r[i].kind == VAL_FLOAT, "position %zu: a %s, want a float", i,
                      value_kind_name(r[i].kind));
        ck_assert_msg(r[i].as.f == want[i], "position %zu: %.17g, want %.17g", i, r[i].as.f, want[i]);
    }
}

static void expect_strs(const Value *r, const char *const *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(r[i].kind == VAL_STR, "position %zu: a %s, want a string", i,
                      value_kind_name(r[i].kind));
        ck_assert_str_eq(r[i].as.s, want[i]);
    }
}

static Value *str_input(const char *text) {
    size_t n = strlen(text);
    Value *in = ARENA_ARRAY(&arena, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++) in[i] = S(arena_strndup(&arena, text + i, 1));
    return in;
}

/* ---------------------------------------------------------------- tokens */

START_TEST(test_convert_token) {
    char buf[128];
    Value out;
    ck_assert(ir_convert_token(IR_TOKENS_STR, S("a"), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_STR && strcmp(out.as.s, "a") == 0);
    ck_assert(!ir_convert_token(IR_TOKENS_STR, I(1), &out, buf, sizeof buf));
    ck_assert_ptr_nonnull(strstr(buf, "tokens_str"));
    ck_assert(ir_convert_token(IR_TOKENS_INT, I(-4), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_INT && out.as.i == -4);
    ck_assert(ir_convert_token(IR_TOKENS_INT, B(true), &out, buf, sizeof buf)); /* bools are ints */
    ck_assert(out.kind == VAL_INT && out.as.i == 1);
    ck_assert(!ir_convert_token(IR_TOKENS_INT, F(3.0), &out, buf, sizeof buf));
    ck_assert_ptr_nonnull(strstr(buf, "tokens_int"));
    ck_assert(!ir_convert_token(IR_TOKENS_INT, S("3"), &out, buf, sizeof buf));
    ck_assert(ir_convert_token(IR_TOKENS_FLOAT, I(2), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_FLOAT && out.as.f == 2.0);
    ck_assert(ir_convert_token(IR_TOKENS_FLOAT, F(0.25), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_FLOAT && out.as.f == 0.25);
    ck_assert(ir_convert_token(IR_TOKENS_FLOAT, B(false), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_FLOAT && out.as.f == 0.0);
    ck_assert(!ir_convert_token(IR_TOKENS_FLOAT, S("1.5"), &out, buf, sizeof buf));
    ck_assert_ptr_nonnull(strstr(buf, "tokens_float"));
    ck_assert(ir_convert_token(IR_TOKENS_BOOL, B(false), &out, buf, sizeof buf));
    ck_assert(out.kind == VAL_BOOL && !out.as.b);
    ck_assert(!ir_convert_token(IR_TOKENS_BOOL, I(1), &out, buf, sizeof buf));
    ck_assert(!ir_convert_token(IR_TOKENS_BOOL, S("T"), &out, buf, sizeof buf));
    ck_assert_ptr_nonnull(strstr(buf, "tokens_bool"));
}
END_TEST

START_TEST(test_tokens_node) {
    Value in[] = {I(3), B(true), I(-1)};
    IrNode *ti = ir_tokens(&g, IR_TOKENS_INT, at(2, 4));
    expect_ints(eval_ok(ti, in, 3), (int64_t[]){3, 1, -1}, 3);
    IrNode *tf = ir_tokens(&g, IR_TOKENS_FLOAT, at(3, 4));
    expect_floats(eval_ok(tf, in, 3), (double[]){3.0, 1.0, -1.0}, 3);
    IrNode *ts = ir_tokens(&g, IR_TOKENS_STR, at(4, 4));
    eval_fails(ts, in, 3, 4, 4, "tokens_str");
    IrNode *tb = ir_tokens(&g, IR_TOKENS_BOOL, at(5, 6));
    eval_fails(tb, in, 3, 5, 6, "tokens_bool");
    Value bools[] = {B(true), B(false)};
    Value *r = eval_ok(tb, bools, 2);
    ck_assert(r[0].kind == VAL_BOOL && r[0].as.b && r[1].kind == VAL_BOOL && !r[1].as.b);
    Value mixed[] = {I(1), F(2.5)};
    eval_fails(ti, mixed, 2, 2, 4, "2.5");
}
END_TEST

START_TEST(test_indices_length_const) {
    Value in[] = {S("a"), S("b"), S("c"), S("d")};
    expect_ints(eval_ok(ir_indices(&g, L1), in, 4), (int64_t[]){0, 1, 2, 3}, 4);
    expect_ints(eval_ok(ir_length(&g, L1), in, 4), (int64_t[]){4, 4, 4, 4}, 4);
    expect_strs(eval_ok(ir_const(&g, S("z"), L1), in, 4), (const char *[]){"z", "z", "z", "z"}, 4);
    IrNode *e = ir_map_binary(&g, VOP_SUB, ir_length(&g, L1), ir_indices(&g, L1), L1);
    expect_ints(eval_ok(e, in, 4), (int64_t[]){4, 3, 2, 1}, 4);
}
END_TEST

/* ---------------------------------------------------------------- select */

static bool cmp_holds(IrCmp c, int64_t k, int64_t q) {
    switch (c) {
    case IR_CMP_EQ: return k == q;
    case IR_CMP_NE: return k != q;
    case IR_CMP_LT: return k < q;
    case IR_CMP_GT: return k > q;
    case IR_CMP_LE: return k <= q;
    case IR_CMP_GE: return k >= q;
    }
    return false;
}

START_TEST(test_select_every_comparison) {
    Value in[] = {I(0), I(0), I(0), I(0)};
    IrNode *idx = ir_indices(&g, L1);
    for (IrCmp c = IR_CMP_EQ; c <= IR_CMP_GE; c++) {
        IrNode *sel = ir_select(&g, idx, idx, c, L1);
        bool *m = NULL;
        ck_assert(ir_eval_selector(&g, sel, in, 4, &scratch, &m, &err));
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 4; k++)
                ck_assert_msg(m[q * 4 + k] == cmp_holds(c, k, q), "cmp %s: q=%d k=%d got %d",
                              ir_cmp_text(c), q, k, m[q * 4 + k]);
    }
    /* select(indices, indices, <): query 2 selects keys 0 and 1 */
    bool *m = NULL;
    ck_assert(ir_eval_selector(&g, ir_select(&g, idx, idx, IR_CMP_LT, L1), in, 4, &scratch, &m, &err));
    ck_assert(m[2 * 4 + 0] && m[2 * 4 + 1] && !m[2 * 4 + 2] && !m[2 * 4 + 3]);
    ck_assert(!m[0 * 4 + 1]);
}
END_TEST

/* keys and queries from different s-ops: sel[q][k] = key[k] CMP query[q] */
START_TEST(test_select_keys_vs_queries) {
    Value in[] = {I(5), I(1), I(3)};
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1), *idx = ir_indices(&g, L1);
    IrNode *sel = ir_select(&g, tok, idx, IR_CMP_GT, L1); /* tokens[k] > q */
    bool *m = NULL;
    ck_assert(ir_eval_selector(&g, sel, in, 3, &scratch, &m, &err));
    const int64_t tk[] = {5, 1, 3};
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) ck_assert_int_eq(m[q * 3 + k], tk[k] > q);
    /* strings against numbers: == is false, < is a type error at the select */
    Value sin[] = {S("a"), S("b")};
    IrNode *ts = ir_tokens(&g, IR_TOKENS_STR, L1);
    IrNode *eq = ir_select(&g, ts, idx, IR_CMP_EQ, at(3, 9));
    ck_assert(ir_eval_selector(&g, eq, sin, 2, &scratch, &m, &err));
    for (int i = 0; i < 4; i++) ck_assert(!m[i]);
    IrNode *lt = ir_select(&g, ts, idx, IR_CMP_LT, at(4, 9));
    ck_assert(!ir_eval_selector(&g, lt, sin, 2, &scratch, &m, &err));
    ck_assert_int_eq(err.loc.line, 4);
    ck_assert_int_eq(err.loc.col, 9);
    ck_assert_ptr_nonnull(strstr(err.message, "not supported"));
}
END_TEST

START_TEST(test_selector_and_or_not) {
    Value in[] = {I(0), I(0), I(0)};
    IrNode *idx = ir_indices(&g, L1);
    IrNode *le = ir_select(&g, idx, idx, IR_CMP_LE, L1);
    IrNode *ge = ir_select(&g, idx, idx, IR_CMP_GE, L1);
    IrNode *lt = ir_select(&g, idx, idx, IR_CMP_LT, L1);
    bool *m = NULL;
    ck_assert(ir_eval_selector(&g, ir_select_and(&g, le, ge, L1), in, 3, &scratch, &m, &err));
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) ck_assert_int_eq(m[q * 3 + k], k == q);
    ck_assert(ir_eval_selector(&g, ir_select_or(&g, lt, ir_select(&g, idx, idx, IR_CMP_GT, L1), L1),
                               in, 3, &scratch, &m, &err));
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) ck_assert_int_eq(m[q * 3 + k], k != q);
    ck_assert(ir_eval_selector(&g, ir_select_not(&g, lt, L1), in, 3, &scratch, &m, &err));
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) ck_assert_int_eq(m[q * 3 + k], k >= q);
}
END_TEST

/* ---------------------------------------------------------------- aggregate */

START_TEST(test_aggregate_empty_selection_default) {
    Value in[] = {I(7), I(8), I(9)};
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1), *idx = ir_indices(&g, L1);
    IrNode *none = ir_select(&g, idx, ir_length(&g, L1), IR_CMP_GT, L1); /* k > n: never */
    expect_ints(eval_ok(ir_aggregate(&g, none, tok, I(0), L1), in, 3), (int64_t[]){0, 0, 0}, 3);
    expect_floats(eval_ok(ir_aggregate(&g, none, tok, F(0.5), L1), in, 3), (double[]){0.5, 0.5, 0.5}, 3);
    /* select(indices, indices, <): query 0 has no key; queries 1, 2 average */
    IrNode *lt = ir_select(&g, idx, idx, IR_CMP_LT, L1);
    Value *r = eval_ok(ir_aggregate(&g, lt, tok, I(0), L1), in, 3);
    ck_assert(r[0].kind == VAL_INT && r[0].as.i == 0);
    ck_assert(r[1].kind == VAL_INT && r[1].as.i == 7); /* exactly one: unchanged */
    ck_assert(r[2].kind == VAL_FLOAT && r[2].as.f == 7.5);
    /* string defaults for string s-ops */
    Value *sin = str_input("xyz");
    IrNode *ts = ir_tokens(&g, IR_TOKENS_STR, L1);
    expect_strs(eval_ok(ir_aggregate(&g, none, ts, S("-"), L1), sin, 3),
                (const char *[]){"-", "-", "-"}, 3);
    expect_strs(eval_ok(ir_aggregate(&g, lt, ts, S(""), L1), str_input("xy"), 2),
                (const char *[]){"", "x"}, 2);
}
END_TEST

START_TEST(test_aggregate_single_keeps_value) {
    IrNode *idx = ir_indices(&g, L1);
    IrNode *eq = ir_select(&g, idx, idx, IR_CMP_EQ, L1);
    Value in[] = {I(4), I(-2), I(9)};
    expect_ints(eval_ok(ir_aggregate(&g, eq, ir_tokens(&g, IR_TOKENS_INT, L1), I(0), L1), in, 3),
                (int64_t[]){4, -2, 9}, 3);
    expect_strs(eval_ok(ir_aggregate(&g, eq, ir_tokens(&g, IR_TOKENS_STR, L1), I(0), L1),
                        str_input("abc"), 3),
                (const char *[]){"a", "b", "c"}, 3);
    Value bin[] = {B(true), B(false)};
    Value *r = eval_ok(ir_aggregate(&g, eq, ir_tokens(&g, IR_TOKENS_BOOL, L1), I(0), L1), bin, 2);
    ck_assert(r[0].kind == VAL_BOOL && r[0].as.b);
    ck_assert(r[1].kind == VAL_BOOL && !r[1].as.b);
    Value fin[] = {F(0.1), F(2.0)};
    expect_floats(eval_ok(ir_aggregate(&g, eq, ir_tokens(&g, IR_TOKENS_FLOAT, L1), I(0), L1), fin, 2),
                  (double[]){0.1, 2.0}, 2);
}
END_TEST

START_TEST(test_aggregate_mean) {
    IrNode *idx = ir_indices(&g, L1);
    IrNode *le = ir_select(&g, idx, idx, IR_CMP_LE, L1); /* prefix */
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    IrNode *agg = ir_aggregate(&g, le, tok, I(0), L1);
    /* mean of ints 1, 1 is 1.0, a float: sum([1,1])*1.0/2 */
    Value ones[] = {I(1), I(1)};
    Value *r = eval_ok(agg, ones, 2);
    ck_assert(r[0].kind == VAL_INT && r[0].as.i == 1);
    ck_assert(r[1].kind == VAL_FLOAT && r[1].as.f == 1.0);
    /* sum([1,2,4])*1.0/3 -> 2.3333333333333335 */
    Value in[] = {I(1), I(2), I(4)};
    r = eval_ok(agg, in, 3);
    ck_assert(r[1].kind == VAL_FLOAT && r[1].as.f == 1.5);
    ck_assert(r[2].kind == VAL_FLOAT && r[2].as.f == 2.3333333333333335);
    /* floats: sum([0.1]*3)*1.0/3 -> 0.10000000000000002 (left-to-right sum) */
    IrNode *aggf = ir_aggregate(&g, le, ir_tokens(&g, IR_TOKENS_FLOAT, L1), I(0), L1);
    Value tenths[] = {F(0.1), F(0.1), F(0.1)};
    r = eval_ok(aggf, tenths, 3);
    ck_assert(r[2].as.f == 0.10000000000000002);
    /* ints summed exactly: sum([2**63-1, 2, -(2**63-1)])*1.0/3 -> 0.6666666666666666 */
    Value keys[] = {I(0), I(1), I(2)}, vals[] = {I(INT64_MAX), I(2), I(-INT64_MAX)};
    IrNode *big = ir_map_lookup(&g, idx, keys, vals, 3, L1);
    r = eval_ok(ir_aggregate(&g, le, big, I(0), L1), in, 3);
    ck_assert(r[0].kind == VAL_INT && r[0].as.i == INT64_MAX);
    ck_assert_msg(r[2].as.f == 0.6666666666666666, "got %.17g", r[2].as.f);
    /* sum([2**63-1, 2**63-1, 0.5])*1.0/3 -> 6.148914691236517e+18 */
    Value vals2[] = {I(INT64_MAX), I(INT64_MAX), F(0.5)};
    IrNode *big2 = ir_map_lookup(&g, idx, keys, vals2, 3, L1);
    r = eval_ok(ir_aggregate(&g, le, ir_map_binary(&g, VOP_MUL, big2, ir_const(&g, I(1), L1), L1),
                             I(0), L1), in, 3);
    ck_assert_msg(r[2].as.f == 6.148914691236517e+18, "got %.17g", r[2].as.f);
}
END_TEST

START_TEST(test_aggregate_non_numeric_errors) {
    IrNode *idx = ir_indices(&g, L1);
    IrNode *le = ir_select(&g, idx, idx, IR_CMP_LE, L1);
    /* several strings */
    IrNode *agg = ir_aggregate(&g, le, ir_tokens(&g, IR_TOKENS_STR, L1), S(""), at(6, 2));
    eval_fails(agg, str_input("ab"), 2, 6, 2, "non-numeric");
    /* all-bool s-op, several selected */
    IrNode *aggb = ir_aggregate(&g, le, ir_tokens(&g, IR_TOKENS_BOOL, L1), I(0), at(7, 3));
    Value bools[] = {B(true), B(true)};
    eval_fails(aggb, bools, 2, 7, 3, "non-numeric");
    /* ... but one bool selected per query is fine */
    IrNode *eq = ir_select(&g, idx, idx, IR_CMP_EQ, L1);
    eval_ok(ir_aggregate(&g, eq, ir_tokens(&g, IR_TOKENS_BOOL, L1), I(0), L1), bools, 2);
    /* mixed bool/int is numeric: [True, 2, False] -> prefix means 1.5, 1.0 */
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    IrNode *mixed = ir_map_cond(&g, ir_map_binary(&g, VOP_EQ, idx, ir_const(&g, I(1), L1), L1), tok,
                                ir_map_binary(&g, VOP_EQ, idx, ir_const(&g, I(0), L1), L1), L1);
    Value in[] = {I(9), I(2), I(9)};
    Value *m = eval_ok(mixed, in, 3);
    ck_assert(m[0].kind == VAL_BOOL && m[1].kind == VAL_INT && m[2].kind == VAL_BOOL);
    Value *r = eval_ok(ir_aggregate(&g, le, mixed, I(0), L1), in, 3);
    ck_assert(r[0].kind == VAL_BOOL && r[0].as.b);
    ck_assert(r[1].kind == VAL_FLOAT && r[1].as.f == 1.5);
    ck_assert(r[2].kind == VAL_FLOAT && r[2].as.f == 1.0);
}
END_TEST

START_TEST(test_selector_width) {
    Value in[] = {I(0), I(0), I(0), I(0)};
    IrNode *idx = ir_indices(&g, L1);
    expect_ints(eval_ok(ir_selector_width(&g, ir_select(&g, idx, idx, IR_CMP_LE, L1), L1), in, 4),
                (int64_t[]){1, 2, 3, 4}, 4);
    expect_ints(eval_ok(ir_selector_width(&g, ir_select(&g, idx, idx, IR_CMP_GT, L1), L1), in, 4),
                (int64_t[]){3, 2, 1, 0}, 4);
    expect_ints(eval_ok(ir_selector_width(&g, ir_select(&g, idx, idx, IR_CMP_NE, L1), L1), in, 4),
                (int64_t[]){3, 3, 3, 3}, 4);
}
END_TEST

/* ---------------------------------------------------------------- errors and edge cases */

START_TEST(test_mixed_types_error) {
    IrNode *idx = ir_indices(&g, L1);
    IrNode *is0 = ir_map_binary(&g, VOP_EQ, idx, ir_const(&g, I(0), L1), L1);
    IrNode *mix = ir_map_cond(&g, is0, ir_const(&g, S("a"), L1), ir_const(&g, I(1), L1), at(9, 4));
    Value in[] = {I(0), I(0), I(0)};
    eval_fails(mix, in, 3, 9, 4, "mixes value types");
    /* one position: nothing to mix */
    Value *r = eval_ok(mix, in, 1);
    ck_assert(r[0].kind == VAL_STR);
    /* numbers of different kinds are not mixed types */
    IrNode *num = ir_map_cond(&g, is0, ir_const(&g, F(0.5), L1), idx, L1);
    r = eval_ok(num, in, 3);
    ck_assert(r[0].kind == VAL_FLOAT && r[1].kind == VAL_INT);
    /* nor are bools and ints */
    IrNode *bi = ir_map_cond(&g, is0, ir_const(&g, B(true), L1), idx, L1);
    eval_ok(bi, in, 3);
}
END_TEST

START_TEST(test_empty_input) {
    IrNode *idx = ir_indices(&g, L1), *tok = ir_tokens(&g, IR_TOKENS_STR, L1);
    IrNode *sel = ir_select(&g, tok, tok, IR_CMP_EQ, L1);
    IrNode *agg = ir_aggregate(&g, ir_select(&g, idx, idx, IR_CMP_LE, L1), tok, S(""), L1);
    IrNode *w = ir_selector_width(&g, sel, L1);
    IrNode *m = ir_map_binary(&g, VOP_DIV, ir_length(&g, L1), idx, L1); /* would fail if run */
    Value none[1] = {I(0)};
    Value *res = NULL;
    ck_assert(ir_eval(&g, agg, none, 0, &scratch, &res, &err));
    ck_assert(ir_eval(&g, w, none, 0, &scratch, &res, &err));
    ck_assert(ir_eval(&g, m, none, 0, &scratch, &res, &err));
    ck_assert(ir_eval(&g, ir_length(&g, L1), NULL, 0, &scratch, &res, &err));
    bool *mat = NULL;
    ck_assert(ir_eval_selector(&g, sel, none, 0, &scratch, &mat, &err));
}
END_TEST

START_TEST(test_error_locations) {
    IrNode *idx = ir_indices(&g, at(1, 1));
    IrNode *inv = ir_map_binary(&g, VOP_DIV, ir_const(&g, I(1), L1), idx, at(7, 3));
    Value in[] = {I(0), I(0)};
    eval_fails(inv, in, 2, 7, 3, "by zero");
    ck_assert_ptr_nonnull(strstr(err.message, "position 0"));
    /* a user of the failing node reports the failing node, not itself */
    IrNode *user = ir_map_unary(&g, VOP_NEG, inv, at(8, 1));
    eval_fails(user, in, 2, 7, 3, "by zero");
    /* a constant-argument map that cannot fold fails at run time at its own location */
    IrNode *cdiv = ir_map_binary(&g, VOP_DIV, ir_const(&g, I(1), L1), ir_const(&g, I(0), L1), at(2, 5));
    ck_assert_int_eq(cdiv->kind, IR_MAP);
    eval_fails(cdiv, in, 2, 2, 5, "by zero");
    /* missing dict key, list index out of range */
    Value keys[] = {I(0)}, vals[] = {S("zero")};
    eval_fails(ir_map_lookup(&g, idx, keys, vals, 1, at(3, 3)), in, 2, 3, 3, "not in the dict");
    eval_fails(ir_map_index(&g, idx, vals, 1, at(4, 4)), in, 2, 4, 4, "out of range");
    /* nodes the output does not depend on are not evaluated */
    expect_ints(eval_ok(ir_map_binary(&g, VOP_ADD, idx, idx, L1), in, 2), (int64_t[]){0, 2}, 2);
    /* s-op vs selector mix-ups */
    IrNode *sel = ir_select(&g, idx, idx, IR_CMP_EQ, at(5, 5));
    Value *res = NULL;
    ck_assert(!ir_eval(&g, sel, in, 2, &scratch, &res, &err));
    ck_assert_int_eq(err.loc.line, 5);
    bool *mat = NULL;
    ck_assert(!ir_eval_selector(&g, idx, in, 2, &scratch, &mat, &err));
    /* an error leaves a usable state: evaluate again successfully afterwards */
    expect_ints(eval_ok(idx, in, 2), (int64_t[]){0, 1}, 2);
}
END_TEST

/* ---------------------------------------------------------------- whole programs */

/* reverse = aggregate(select(indices, length - indices - 1, ==), tokens) */
START_TEST(test_reverse) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_STR, L1), *idx = ir_indices(&g, L1);
    IrNode *opp = ir_map_binary(&g, VOP_SUB, ir_map_binary(&g, VOP_SUB, ir_length(&g, L1), idx, L1),
                                ir_const(&g, I(1), L1), L1);
    IrNode *flip = ir_select(&g, idx, opp, IR_CMP_EQ, L1);
    IrNode *rev = ir_aggregate(&g, flip, tok, I(0), L1);
    expect_strs(eval_ok(rev, str_input("hello"), 5), (const char *[]){"o", "l", "l", "e", "h"}, 5);
    expect_strs(eval_ok(rev, str_input("a"), 1), (const char *[]){"a"}, 1);
    expect_strs(eval_ok(rev, str_input("ab"), 2), (const char *[]){"b", "a"}, 2);
    Value words[] = {S("the"), S("quick"), S("fox")};
    expect_strs(eval_ok(rev, words, 3), (const char *[]){"fox", "quick", "the"}, 3);
    Value *res = NULL;
    ck_assert(ir_eval(&g, rev, NULL, 0, &scratch, &res, &err));
    /* the selector is the anti-diagonal */
    bool *m = NULL;
    ck_assert(ir_eval_selector(&g, flip, str_input("abc"), 3, &scratch, &m, &err));
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 3; k++) ck_assert_int_eq(m[q * 3 + k], k == 2 - q);
}
END_TEST

/* hist = selector_width(select(tokens, tokens, ==)) */
START_TEST(test_histogram) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_STR, L1);
    IrNode *hist = ir_selector_width(&g, ir_select(&g, tok, tok, IR_CMP_EQ, L1), L1);
    expect_ints(eval_ok(hist, str_input("hello"), 5), (int64_t[]){1, 1, 2, 2, 1}, 5);
    expect_ints(eval_ok(hist, str_input("aaabbc"), 6), (int64_t[]){3, 3, 3, 2, 2, 1}, 6);
    Value words[] = {S("ab"), S("a"), S("ab"), S("b")};
    expect_ints(eval_ok(hist, words, 4), (int64_t[]){2, 1, 2, 1}, 4);
}
END_TEST

/* frac_prevs: the fraction of positions up to each one holding "x", averaging indicator(...),
 * an int s-op */
START_TEST(test_frac_prevs) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_STR, L1), *idx = ir_indices(&g, L1);
    IrNode *isx = ir_map_unary(&g, VOP_INDICATOR,
                               ir_map_binary(&g, VOP_EQ, tok, ir_const(&g, S("x"), L1), L1), L1);
    IrNode *prevs = ir_select(&g, idx, idx, IR_CMP_LE, L1);
    IrNode *frac = ir_aggregate(&g, prevs, isx, I(0), L1);
    Value *r = eval_ok(frac, str_input("xaxb"), 4);
    ck_assert(r[0].kind == VAL_INT && r[0].as.i == 1); /* one selected: the int itself */
    expect_floats(r + 1, (double[]){0.5, 2.0 / 3.0, 0.5}, 3);
}
END_TEST

/* The original's conversions of an input for each token type: Python's str/int/float/bool. */
START_TEST(test_convert_token_python) {
    Arena a;
    arena_init(&a);
    char msg[128];
    Value out;
    ck_assert(ir_convert_token_python(IR_TOKENS_INT, value_str(" 12 "), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_INT && out.as.i == 12);
    ck_assert(ir_convert_token_python(IR_TOKENS_INT, value_str("-1_000"), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_INT && out.as.i == -1000);
    ck_assert(ir_convert_token_python(IR_TOKENS_INT, value_float(-2.7), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_INT && out.as.i == -2);
    ck_assert(!ir_convert_token_python(IR_TOKENS_INT, value_str("1.5"), &a, &out, msg, sizeof msg));
    ck_assert_str_eq(msg, "invalid literal for int() with base 10: '1.5'");
    ck_assert(ir_convert_token_python(IR_TOKENS_FLOAT, value_str("1e3"), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_FLOAT && out.as.f == 1000.0);
    ck_assert(!ir_convert_token_python(IR_TOKENS_FLOAT, value_str("h"), &a, &out, msg, sizeof msg));
    ck_assert_str_eq(msg, "could not convert string to float: 'h'");
    ck_assert(ir_convert_token_python(IR_TOKENS_BOOL, value_str("0"), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_BOOL && out.as.b); /* a non-empty string is true */
    ck_assert(ir_convert_token_python(IR_TOKENS_BOOL, value_float(0.0), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_BOOL && !out.as.b);
    ck_assert(ir_convert_token_python(IR_TOKENS_STR, value_bool(true), &a, &out, msg, sizeof msg));
    ck_assert_str_eq(out.as.s, "True");
    ck_assert(ir_convert_token_python(IR_TOKENS_STR, value_float(1.5), &a, &out, msg, sizeof msg));
    ck_assert_str_eq(out.as.s, "1.5");
    ck_assert(ir_convert_token_python(IR_TOKENS_ASIS, value_int(7), &a, &out, msg, sizeof msg));
    ck_assert(out.kind == VAL_INT && out.as.i == 7);
    arena_free(&a);
}
END_TEST

static Suite *eval_suite(void) {
    Suite *s = suite_create("eval");
    TCase *tc = tcase_create("primitives");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_convert_token);
    tcase_add_test(tc, test_convert_token_python);
    tcase_add_test(tc, test_tokens_node);
    tcase_add_test(tc, test_indices_length_const);
    tcase_add_test(tc, test_select_every_comparison);
    tcase_add_test(tc, test_select_keys_vs_queries);
    tcase_add_test(tc, test_selector_and_or_not);
    suite_add_tcase(s, tc);
    TCase *ag = tcase_create("aggregate");
    tcase_add_checked_fixture(ag, setup, teardown);
    tcase_add_test(ag, test_aggregate_empty_selection_default);
    tcase_add_test(ag, test_aggregate_single_keeps_value);
    tcase_add_test(ag, test_aggregate_mean);
    tcase_add_test(ag, test_aggregate_non_numeric_errors);
    tcase_add_test(ag, test_selector_width);
    suite_add_tcase(s, ag);
    TCase *er = tcase_create("errors");
    tcase_add_checked_fixture(er, setup, teardown);
    tcase_add_test(er, test_mixed_types_error);
    tcase_add_test(er, test_empty_input);
    tcase_add_test(er, test_error_locations);
    suite_add_tcase(s, er);
    TCase *pr = tcase_create("programs");
    tcase_add_checked_fixture(pr, setup, teardown);
    tcase_add_test(pr, test_reverse);
    tcase_add_test(pr, test_histogram);
    tcase_add_test(pr, test_frac_prevs);
    suite_add_tcase(s, pr);
    return s;
}

int main(void) {
    return run_suite(eval_suite());
}
