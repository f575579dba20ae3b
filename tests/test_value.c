/* Unit tests for ir/value.c: every rule of ir/value.h against what Python 3 gives.
 * Each expected value was obtained by running the expression in python3 (3.11); the Python
 * expression is quoted next to the check. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "ir/value.h"
#include "support/arena.h"

static char msg[256];

static ValueResult bin(ValueOp op, Value a, Value b) {
    return value_binary(op, a, b, NULL, msg, sizeof msg);
}
static ValueResult un(ValueOp op, Value a) { return value_unary(op, a, msg, sizeof msg); }

#define I(x) value_int(x)
#define F(x) value_float(x)
#define B(x) value_bool(x)
#define S(x) value_str(x)

#define EXPECT_OK(r)                                                                              \
    ck_assert_msg((r).ok, "%s failed: %s", #r, (r).error ? (r).error : "(no message)")

#define EXPECT_INT(expr, want)                                                                    \
    do {                                                                                          \
        ValueResult r_ = (expr);                                                                  \
        ck_assert_msg(r_.ok, "%s failed: %s", #expr, r_.error);                                   \
        ck_assert_msg(r_.value.kind == VAL_INT, "%s: expected an int, got a %s", #expr,          \
                      value_kind_name(r_.value.kind));                                           \
        ck_assert_msg(r_.value.as.i == (int64_t)(want), "%s: got %lld, want %lld", #expr,        \
                      (long long)r_.value.as.i, (long long)(want));                              \
    } while (0)

/* Exact float comparison, including the sign of zero; NaN matches NaN. */
#define EXPECT_FLOAT(expr, want)                                                                  \
    do {                                                                                          \
        ValueResult r_ = (expr);                                                                  \
        double w_ = (want);                                                                       \
        ck_assert_msg(r_.ok, "%s failed: %s", #expr, r_.error);                                   \
        ck_assert_msg(r_.value.kind == VAL_FLOAT, "%s: expected a float, got a %s", #expr,       \
                      value_kind_name(r_.value.kind));                                           \
        ck_assert_msg((isnan(w_) && isnan(r_.value.as.f)) ||                                      \
                          (r_.value.as.f == w_ && !signbit(r_.value.as.f) == !signbit(w_)),       \
                      "%s: got %.17g, want %.17g", #expr, r_.value.as.f, w_);                     \
    } while (0)

#define EXPECT_BOOL(expr, want)                                                                   \
    do {                                                                                          \
        ValueResult r_ = (expr);                                                                  \
        ck_assert_msg(r_.ok, "%s failed: %s", #expr, r_.error);                                   \
        ck_assert_msg(r_.value.kind == VAL_BOOL, "%s: expected a bool, got a %s", #expr,         \
                      value_kind_name(r_.value.kind));                                           \
        ck_assert_msg(r_.value.as.b == (want), "%s: got %d", #expr, r_.value.as.b);              \
    } while (0)

#define EXPECT_STR(expr, want)                                                                    \
    do {                                                                                          \
        ValueResult r_ = (expr);                                                                  \
        ck_assert_msg(r_.ok, "%s failed: %s", #expr, r_.error);                                   \
        ck_assert_msg(r_.value.kind == VAL_STR, "%s: expected a string, got a %s", #expr,        \
                      value_kind_name(r_.value.kind));                                           \
        ck_assert_str_eq(r_.value.as.s, (want));                                                  \
    } while (0)

/* An error whose message contains `part`. */
#define EXPECT_ERR(expr, part)                                                                    \
    do {                                                                                          \
        ValueResult r_ = (expr);                                                                  \
        ck_assert_msg(!r_.ok, "%s: expected an error", #expr);                                    \
        ck_assert_ptr_nonnull(r_.error);                                                          \
        ck_assert_msg(strstr(r_.error, (part)) != NULL, "%s: message '%s' lacks '%s'", #expr,    \
                      r_.error, (part));                                                         \
    } while (0)

static const int64_t I64MAX = INT64_MAX;
static const int64_t I64MIN = INT64_MIN;

/* ---------------------------------------------------------------- arithmetic */

START_TEST(test_add_sub_mul_mixing) {
    EXPECT_INT(bin(VOP_ADD, B(true), I(1)), 2);                /* True + 1 -> 2 */
    EXPECT_INT(bin(VOP_ADD, B(true), B(true)), 2);             /* True + True -> 2 (int) */
    EXPECT_FLOAT(bin(VOP_ADD, I(1), F(2.5)), 3.5);             /* 1 + 2.5 */
    EXPECT_FLOAT(bin(VOP_MUL, B(true), F(2.5)), 2.5);          /* True * 2.5 */
    EXPECT_INT(bin(VOP_SUB, I(7), B(true)), 6);                /* 7 - True */
    EXPECT_INT(bin(VOP_MUL, I(3), I(4)), 12);
    EXPECT_FLOAT(bin(VOP_ADD, F(0.1), F(0.2)), 0.30000000000000004);
    EXPECT_FLOAT(bin(VOP_ADD, F(1.0), I(2)), 3.0);             /* float + int stays float */
    EXPECT_INT(bin(VOP_SUB, I(I64MAX - 1), I(-1)), I64MAX);     /* 2**62 + 2**62 - 1 */
    /* Python floats overflow to inf without error: 1e308 * 10 -> inf, 1e308 + 1e308 -> inf */
    EXPECT_FLOAT(bin(VOP_MUL, F(1e308), I(10)), INFINITY);
    EXPECT_FLOAT(bin(VOP_ADD, F(1e308), F(1e308)), INFINITY);
    EXPECT_FLOAT(bin(VOP_MUL, F(-1e308), I(10)), -INFINITY);
}
END_TEST

START_TEST(test_int_overflow_is_error) {
    EXPECT_ERR(bin(VOP_ADD, I(I64MAX), I(1)), "overflow");
    EXPECT_ERR(bin(VOP_ADD, I(I64MAX), B(true)), "overflow");
    EXPECT_ERR(bin(VOP_SUB, I(I64MIN), I(1)), "overflow");
    EXPECT_ERR(bin(VOP_MUL, I(I64MAX / 2 + 1), I(2)), "overflow");
    EXPECT_ERR(bin(VOP_MUL, I(I64MIN), I(-1)), "overflow");
    EXPECT_INT(bin(VOP_MUL, I(I64MIN / 2), I(2)), I64MIN);
    /* no message buffer: still an error, with some message */
    ValueResult r = value_binary(VOP_ADD, I(I64MAX), I(1), NULL, NULL, 0);
    ck_assert(!r.ok);
    ck_assert_ptr_nonnull(r.error);
}
END_TEST

START_TEST(test_true_division) {
    EXPECT_FLOAT(bin(VOP_DIV, I(1), I(2)), 0.5);               /* 1 / 2 */
    EXPECT_FLOAT(bin(VOP_DIV, I(4), I(2)), 2.0);               /* 4 / 2 -> 2.0, a float */
    EXPECT_FLOAT(bin(VOP_DIV, B(true), I(2)), 0.5);
    EXPECT_FLOAT(bin(VOP_DIV, I(-7), I(2)), -3.5);
    EXPECT_FLOAT(bin(VOP_DIV, I(1), I(3)), 0.3333333333333333);
    EXPECT_FLOAT(bin(VOP_DIV, F(2.5), F(0.5)), 5.0);
    EXPECT_FLOAT(bin(VOP_DIV, I(0), I(-5)), -0.0);             /* 0/-5 -> -0.0 */
    EXPECT_FLOAT(bin(VOP_DIV, F(1e-320), F(1e10)), 0.0);
    EXPECT_ERR(bin(VOP_DIV, I(1), I(0)), "division by zero");
    EXPECT_ERR(bin(VOP_DIV, F(1.0), F(0.0)), "by zero");
    EXPECT_ERR(bin(VOP_DIV, I(1), B(false)), "by zero");
    EXPECT_ERR(bin(VOP_DIV, F(1.0), F(-0.0)), "by zero");
}
END_TEST

/* Python divides ints exactly and rounds once; converting each to a double first does not. */
START_TEST(test_true_division_large_ints) {
    EXPECT_FLOAT(bin(VOP_DIV, I(9007199254740993), I(3)), 3002399751580331.0); /* (2**53+1)/3 */
    EXPECT_FLOAT(bin(VOP_DIV, I(I64MAX), I(3)), 3.0744573456182584e+18);       /* (2**63-1)/3 */
    EXPECT_FLOAT(bin(VOP_DIV, I(I64MIN), I(3)), -3.0744573456182584e+18);      /* -(2**63)/3 */
    EXPECT_FLOAT(bin(VOP_DIV, I(I64MAX), I(I64MAX - 1)), 1.0);
    EXPECT_FLOAT(bin(VOP_DIV, I(1), I(I64MAX)), 1.0842021724855044e-19);      /* 1/(2**63-1) */
    EXPECT_FLOAT(bin(VOP_DIV, I(4611686018427387907), I(-7)), -6.588122883467697e+17);
    EXPECT_FLOAT(bin(VOP_DIV, I(I64MIN), I(-1)), 9.223372036854776e+18);
    EXPECT_FLOAT(bin(VOP_DIV, I(12345678901234567), I(10)), 1234567890123456.8);
    EXPECT_FLOAT(bin(VOP_DIV, I(7), I(1152921504606846977)), 6.071532165918825e-18); /* 7/(2**60+1) */
}
END_TEST

START_TEST(test_modulo_sign_of_divisor) {
    EXPECT_INT(bin(VOP_MOD, I(7), I(3)), 1);
    EXPECT_INT(bin(VOP_MOD, I(-7), I(3)), 2);                  /* -7 % 3 -> 2 */
    EXPECT_INT(bin(VOP_MOD, I(7), I(-3)), -2);                 /* 7 % -3 -> -2 */
    EXPECT_INT(bin(VOP_MOD, I(-7), I(-3)), -1);
    EXPECT_INT(bin(VOP_MOD, I(0), I(-3)), 0);
    EXPECT_INT(bin(VOP_MOD, B(true), I(2)), 1);
    EXPECT_INT(bin(VOP_MOD, I(I64MIN), I(-1)), 0);             /* -(2**63) % -1 -> 0 */
    EXPECT_INT(bin(VOP_MOD, I(I64MIN), I(3)), 1);              /* -(2**63) % 3 -> 1 */
    EXPECT_INT(bin(VOP_MOD, I(5), I(-1)), 0);
    EXPECT_FLOAT(bin(VOP_MOD, F(7.5), I(2)), 1.5);
    EXPECT_FLOAT(bin(VOP_MOD, F(-7.5), I(2)), 0.5);            /* -7.5 % 2 -> 0.5 */
    EXPECT_FLOAT(bin(VOP_MOD, F(7.5), I(-2)), -0.5);           /* 7.5 % -2 -> -0.5 */
    EXPECT_FLOAT(bin(VOP_MOD, F(-0.0), I(5)), 0.0);            /* -0.0 % 5 -> 0.0 */
    EXPECT_FLOAT(bin(VOP_MOD, F(0.0), I(-5)), -0.0);           /* 0.0 % -5 -> -0.0 */
    EXPECT_FLOAT(bin(VOP_MOD, F(5.0), I(-5)), -0.0);           /* 5.0 % -5 -> -0.0 */
    EXPECT_FLOAT(bin(VOP_MOD, I(-5), F(5.0)), 0.0);            /* -5 % 5.0 -> 0.0 */
    EXPECT_FLOAT(bin(VOP_MOD, F(-1e-20), F(1.0)), 1.0);        /* -1e-20 % 1.0 -> 1.0 */
    EXPECT_FLOAT(bin(VOP_MOD, I(5), F(2.5)), 0.0);
    EXPECT_ERR(bin(VOP_MOD, I(1), I(0)), "modulo by zero");
    EXPECT_ERR(bin(VOP_MOD, I(1), F(0.0)), "by zero");
    EXPECT_ERR(bin(VOP_MOD, F(0.0), I(0)), "by zero");
    EXPECT_ERR(bin(VOP_MOD, I(1), B(false)), "by zero");
}
END_TEST

START_TEST(test_power) {
    EXPECT_INT(bin(VOP_POW, I(2), I(10)), 1024);
    EXPECT_INT(bin(VOP_POW, I(-2), I(3)), -8);
    EXPECT_INT(bin(VOP_POW, I(2), I(0)), 1);
    EXPECT_INT(bin(VOP_POW, I(0), I(0)), 1);                   /* 0 ** 0 -> 1 */
    EXPECT_INT(bin(VOP_POW, B(true), I(5)), 1);                /* True ** 5 -> 1 (int) */
    EXPECT_INT(bin(VOP_POW, I(2), B(true)), 2);
    EXPECT_INT(bin(VOP_POW, I(-2), I(63)), I64MIN);            /* (-2)**63 fits */
    EXPECT_INT(bin(VOP_POW, I(10), I(18)), 1000000000000000000LL);
    EXPECT_INT(bin(VOP_POW, I(3), I(39)), 4052555153018976267LL);
    EXPECT_INT(bin(VOP_POW, I(-1), I(I64MAX)), -1);
    EXPECT_INT(bin(VOP_POW, I(1), I(I64MAX)), 1);
    EXPECT_FLOAT(bin(VOP_POW, I(2), I(-1)), 0.5);              /* 2 ** -1 -> 0.5 */
    EXPECT_FLOAT(bin(VOP_POW, I(-2), I(-1)), -0.5);
    EXPECT_FLOAT(bin(VOP_POW, I(2), I(-2000)), 0.0);           /* underflow is not an error */
    EXPECT_FLOAT(bin(VOP_POW, I(2), F(0.5)), 1.4142135623730951);
    EXPECT_FLOAT(bin(VOP_POW, F(4.0), F(0.5)), 2.0);
    EXPECT_FLOAT(bin(VOP_POW, F(-8.0), F(2.0)), 64.0);         /* integral float exponent ok */
    EXPECT_FLOAT(bin(VOP_POW, I(-8), F(3.0)), -512.0);
    EXPECT_FLOAT(bin(VOP_POW, F(0.0), I(0)), 1.0);
    /* errors */
    EXPECT_ERR(bin(VOP_POW, I(0), I(-1)), "negative power");   /* 0 ** -1: ZeroDivisionError */
    EXPECT_ERR(bin(VOP_POW, F(0.0), I(-1)), "negative power");
    EXPECT_ERR(bin(VOP_POW, I(-2), F(0.5)), "fractional");     /* Python would go complex */
    EXPECT_ERR(bin(VOP_POW, I(-8), F(1.0 / 3.0)), "fractional");
    EXPECT_ERR(bin(VOP_POW, I(2), I(63)), "overflow");
    EXPECT_ERR(bin(VOP_POW, I(3), I(40)), "overflow");
    EXPECT_ERR(bin(VOP_POW, I(-2), I(64)), "overflow");
    EXPECT_ERR(bin(VOP_POW, F(10.0), I(400)), "out of range"); /* OverflowError */
    EXPECT_ERR(bin(VOP_POW, F(1.5), I(2000)), "out of range");
}
END_TEST

/* Python's float ** checks infinite and NaN exponents before the zero-base and negative-base
 * rules: 0.0 ** -inf -> inf, (-2.0) ** nan -> nan, (-inf) ** 0.5 -> inf, (-inf) ** 3 -> -inf. */
START_TEST(test_power_non_finite) {
    EXPECT_FLOAT(bin(VOP_POW, F(0.0), F(-INFINITY)), INFINITY);
    EXPECT_FLOAT(bin(VOP_POW, F(-2.0), F(NAN)), NAN);
    EXPECT_FLOAT(bin(VOP_POW, F(-INFINITY), F(0.5)), INFINITY);
    EXPECT_FLOAT(bin(VOP_POW, F(-INFINITY), I(3)), -INFINITY);
    EXPECT_FLOAT(bin(VOP_POW, F(INFINITY), I(-1)), 0.0);
}
END_TEST

START_TEST(test_string_arithmetic) {
    EXPECT_ERR(bin(VOP_ADD, S("a"), S("b")), "unsupported");   /* no arena: a type error */
    EXPECT_ERR(bin(VOP_ADD, S("a"), I(1)), "unsupported");
    EXPECT_ERR(bin(VOP_ADD, I(1), S("a")), "unsupported");
    EXPECT_ERR(bin(VOP_SUB, S("a"), S("b")), "unsupported");
    EXPECT_ERR(bin(VOP_MUL, S("a"), I(2)), "unsupported");
    EXPECT_ERR(bin(VOP_MOD, S("a"), I(2)), "unsupported");
    EXPECT_ERR(bin(VOP_POW, S("a"), I(2)), "unsupported");
    EXPECT_ERR(bin(VOP_DIV, I(2), S("a")), "unsupported");

    Arena a;
    arena_init(&a);
    char left[] = "ab", right[] = "cd";
    ValueResult r = value_binary(VOP_ADD, S(left), S(right), &a, msg, sizeof msg);
    EXPECT_OK(r);
    ck_assert_int_eq(r.value.kind, VAL_STR);
    ck_assert_str_eq(r.value.as.s, "abcd");
    left[0] = 'X'; /* the result is a new string, not a view of the operands */
    ck_assert_str_eq(r.value.as.s, "abcd");
    EXPECT_STR(value_binary(VOP_ADD, S(""), S("x"), &a, msg, sizeof msg), "x");
    EXPECT_STR(value_binary(VOP_ADD, S(""), S(""), &a, msg, sizeof msg), "");
    /* an arena does not make string + number legal, nor numbers strings */
    EXPECT_ERR(value_binary(VOP_ADD, S("a"), I(1), &a, msg, sizeof msg), "unsupported");
    EXPECT_INT(value_binary(VOP_ADD, I(1), I(2), &a, msg, sizeof msg), 3);
    arena_free(&a);
}
END_TEST

/* ---------------------------------------------------------------- unary */

START_TEST(test_round_ties_to_even) {
    EXPECT_INT(un(VOP_ROUND, F(0.5)), 0);
    EXPECT_INT(un(VOP_ROUND, F(1.5)), 2);
    EXPECT_INT(un(VOP_ROUND, F(2.5)), 2);
    EXPECT_INT(un(VOP_ROUND, F(-0.5)), 0);
    EXPECT_INT(un(VOP_ROUND, F(-1.5)), -2);
    EXPECT_INT(un(VOP_ROUND, F(-2.5)), -2);
    EXPECT_INT(un(VOP_ROUND, F(2.675)), 3);
    EXPECT_INT(un(VOP_ROUND, F(0.49999999999999994)), 0);
    EXPECT_INT(un(VOP_ROUND, F(-3.7)), -4);
    EXPECT_INT(un(VOP_ROUND, F(4503599627370497.0)), 4503599627370497LL);
    EXPECT_INT(un(VOP_ROUND, F(9.223372036854775e18)), 9223372036854774784LL);
    EXPECT_INT(un(VOP_ROUND, F(-9.223372036854775808e18)), I64MIN);
    EXPECT_INT(un(VOP_ROUND, I(7)), 7);
    EXPECT_INT(un(VOP_ROUND, B(true)), 1);                     /* round(True) -> 1 (int) */
    EXPECT_ERR(un(VOP_ROUND, F(1e300)), "overflow");           /* beyond int64: an error */
    EXPECT_ERR(un(VOP_ROUND, F(9.223372036854775808e18)), "overflow");
    EXPECT_ERR(un(VOP_ROUND, F(NAN)), "non-finite");
    EXPECT_ERR(un(VOP_ROUND, F(INFINITY)), "non-finite");
    EXPECT_ERR(un(VOP_ROUND, F(-INFINITY)), "non-finite");
    EXPECT_ERR(un(VOP_ROUND, S("a")), "bad operand");
}
END_TEST

START_TEST(test_negation_and_plus) {
    EXPECT_INT(un(VOP_NEG, B(true)), -1);                      /* -True -> -1 */
    EXPECT_INT(un(VOP_NEG, B(false)), 0);
    EXPECT_INT(un(VOP_POS, B(true)), 1);                       /* +True -> 1 (int) */
    EXPECT_INT(un(VOP_NEG, I(5)), -5);
    EXPECT_INT(un(VOP_NEG, I(I64MAX)), -I64MAX);
    EXPECT_ERR(un(VOP_NEG, I(I64MIN)), "overflow");            /* -(-2**63) does not fit */
    EXPECT_FLOAT(un(VOP_NEG, F(-0.0)), 0.0);
    EXPECT_FLOAT(un(VOP_NEG, F(0.0)), -0.0);
    EXPECT_FLOAT(un(VOP_NEG, F(2.5)), -2.5);
    EXPECT_FLOAT(un(VOP_POS, F(-0.0)), -0.0);
    EXPECT_INT(un(VOP_POS, I(-3)), -3);
    EXPECT_ERR(un(VOP_NEG, S("a")), "bad operand");
    EXPECT_ERR(un(VOP_POS, S("a")), "bad operand");
}
END_TEST

START_TEST(test_not_and_indicator) {
    EXPECT_BOOL(un(VOP_NOT, I(0)), true);
    EXPECT_BOOL(un(VOP_NOT, I(3)), false);
    EXPECT_BOOL(un(VOP_NOT, S("")), true);
    EXPECT_BOOL(un(VOP_NOT, S("a")), false);
    EXPECT_BOOL(un(VOP_NOT, F(0.0)), true);
    EXPECT_BOOL(un(VOP_NOT, F(-0.0)), true);
    EXPECT_BOOL(un(VOP_NOT, B(false)), true);
    EXPECT_BOOL(un(VOP_NOT, F(2.5)), false);
    EXPECT_BOOL(un(VOP_NOT, F(NAN)), false);                    /* nan is truthy */
    EXPECT_INT(un(VOP_INDICATOR, B(true)), 1);
    EXPECT_INT(un(VOP_INDICATOR, B(false)), 0);
    EXPECT_INT(un(VOP_INDICATOR, I(5)), 1);
    EXPECT_INT(un(VOP_INDICATOR, I(0)), 0);
    EXPECT_INT(un(VOP_INDICATOR, F(0.25)), 1);
    EXPECT_INT(un(VOP_INDICATOR, F(-0.0)), 0);
    EXPECT_INT(un(VOP_INDICATOR, S("x")), 1);
    EXPECT_INT(un(VOP_INDICATOR, S("")), 0);
}
END_TEST

START_TEST(test_truthy_and_as_double) {
    ck_assert(!value_truthy(I(0)));
    ck_assert(value_truthy(I(-1)));
    ck_assert(!value_truthy(F(0.0)));
    ck_assert(!value_truthy(F(-0.0)));
    ck_assert(value_truthy(F(1e-300)));
    ck_assert(!value_truthy(B(false)));
    ck_assert(value_truthy(B(true)));
    ck_assert(!value_truthy(S("")));
    ck_assert(value_truthy(S("0")));                            /* "0" is a non-empty string */
    ck_assert(value_as_double(B(true)) == 1.0);
    ck_assert(value_as_double(B(false)) == 0.0);
    ck_assert(value_as_double(I(-3)) == -3.0);
    ck_assert(value_as_double(F(2.5)) == 2.5);
    ck_assert(value_is_number(B(true)));
    ck_assert(!value_is_number(S("1")));
}
END_TEST

START_TEST(test_op_tables) {
    ck_assert(!value_op_is_unary(VOP_ADD));
    ck_assert(!value_op_is_unary(VOP_OR));
    ck_assert(value_op_is_unary(VOP_NOT));
    ck_assert(value_op_is_unary(VOP_INDICATOR));
    ck_assert_str_eq(value_op_text(VOP_POW), "^");
    ck_assert_str_eq(value_op_text(VOP_MOD), "%");
    ck_assert_str_eq(value_op_text(VOP_AND), "and");
    ck_assert_str_eq(value_op_text(VOP_GE), ">=");
    ck_assert_str_eq(value_kind_name(VAL_BOOL), "bool");
    ck_assert_str_eq(value_kind_name(VAL_STR), "string");
    /* a unary op given to value_binary and vice versa is an error, not a crash */
    EXPECT_ERR(bin(VOP_NOT, I(1), I(2)), "not a binary operator");
    EXPECT_ERR(un(VOP_ADD, I(1)), "not a unary operator");
}
END_TEST

/* ---------------------------------------------------------------- comparisons and logic */

START_TEST(test_equality) {
    EXPECT_BOOL(bin(VOP_EQ, I(3), F(3.0)), true);              /* 3 == 3.0 */
    EXPECT_BOOL(bin(VOP_EQ, B(true), I(1)), true);             /* True == 1 */
    EXPECT_BOOL(bin(VOP_EQ, B(true), F(1.0)), true);
    EXPECT_BOOL(bin(VOP_EQ, B(false), I(0)), true);
    EXPECT_BOOL(bin(VOP_EQ, B(true), I(2)), false);
    EXPECT_BOOL(bin(VOP_EQ, S("a"), I(1)), false);             /* "a" == 1 -> False */
    EXPECT_BOOL(bin(VOP_NE, S("a"), I(1)), true);
    EXPECT_BOOL(bin(VOP_EQ, S("1"), I(1)), false);
    EXPECT_BOOL(bin(VOP_EQ, I(0), S("")), false);
    EXPECT_BOOL(bin(VOP_EQ, S("ab"), S("ab")), true);
    EXPECT_BOOL(bin(VOP_NE, S("ab"), S("ac")), true);
    EXPECT_BOOL(bin(VOP_EQ, F(0.0), F(-0.0)), true);
    EXPECT_BOOL(bin(VOP_EQ, F(NAN), F(NAN)), false);
    EXPECT_BOOL(bin(VOP_NE, F(NAN), F(NAN)), true);
    ck_assert(value_equal(I(3), F(3.0)));
    ck_assert(value_equal(B(true), I(1)));
    ck_assert(!value_equal(S("a"), I(1)));
    /* different string pointers, same contents */
    char x[] = "hello", y[] = "hello";
    ck_assert(value_equal(S(x), S(y)));
}
END_TEST

/* Python compares ints and floats exactly, without converting the int to a double. */
START_TEST(test_int_float_compare_exact) {
    const double two53 = 9007199254740992.0, two63 = 9223372036854775808.0;
    EXPECT_BOOL(bin(VOP_EQ, I(9007199254740993), F(two53)), false); /* 2**53 + 1 == 2.0**53 */
    EXPECT_BOOL(bin(VOP_GT, I(9007199254740993), F(two53)), true);
    EXPECT_BOOL(bin(VOP_LT, F(two53), I(9007199254740993)), true);
    EXPECT_BOOL(bin(VOP_EQ, I(9007199254740992), F(two53)), true);
    EXPECT_BOOL(bin(VOP_LT, I(I64MAX), F(two63)), true);           /* 2**63-1 < 2.0**63 */
    EXPECT_BOOL(bin(VOP_EQ, I(I64MAX), F(two63)), false);
    EXPECT_BOOL(bin(VOP_EQ, I(I64MIN), F(-two63)), true);
    EXPECT_BOOL(bin(VOP_GT, I(I64MIN), F(-INFINITY)), true);
    EXPECT_BOOL(bin(VOP_LT, I(I64MAX), F(INFINITY)), true);
    EXPECT_BOOL(bin(VOP_LT, I(2), F(2.5)), true);
    EXPECT_BOOL(bin(VOP_GT, I(-2), F(-2.5)), true);
    EXPECT_BOOL(bin(VOP_LT, I(-3), F(-2.5)), true);
    EXPECT_BOOL(bin(VOP_LE, F(-2.5), I(-3)), false);
    ck_assert(!value_equal(I(9007199254740993), F(two53)));
    ck_assert(value_order(I(9007199254740993), F(two53)) > 0);
    ck_assert(value_order(I(9007199254740995), F(9007199254740996.0)) < 0);
    ck_assert(value_order(F(9007199254740996.0), I(9007199254740997)) < 0);
}
END_TEST

START_TEST(test_ordering) {
    EXPECT_BOOL(bin(VOP_LT, S("a"), S("b")), true);            /* "a" < "b" */
    EXPECT_BOOL(bin(VOP_LT, S("b"), S("a")), false);
    EXPECT_BOOL(bin(VOP_LT, S("abc"), S("abd")), true);
    EXPECT_BOOL(bin(VOP_LT, S("ab"), S("abc")), true);
    EXPECT_BOOL(bin(VOP_LT, S(""), S("a")), true);
    EXPECT_BOOL(bin(VOP_LT, S("B"), S("a")), true);             /* code point order */
    EXPECT_BOOL(bin(VOP_GE, S("b"), S("b")), true);
    EXPECT_BOOL(bin(VOP_LT, I(2), F(2.5)), true);
    EXPECT_BOOL(bin(VOP_LT, B(true), I(2)), true);
    EXPECT_BOOL(bin(VOP_GE, I(3), F(3.0)), true);
    EXPECT_BOOL(bin(VOP_LE, I(3), I(2)), false);
    EXPECT_BOOL(bin(VOP_GT, I(3), I(2)), true);
    EXPECT_BOOL(bin(VOP_GT, B(false), B(true)), false);
    EXPECT_BOOL(bin(VOP_LT, F(NAN), I(1)), false);
    EXPECT_BOOL(bin(VOP_GE, F(NAN), I(1)), false);
    EXPECT_BOOL(bin(VOP_LE, I(1), F(NAN)), false);
    /* "a" < 1: TypeError, in either order and for every ordering operator */
    EXPECT_ERR(bin(VOP_LT, S("a"), I(1)), "not supported");
    EXPECT_ERR(bin(VOP_GT, I(1), S("a")), "not supported");
    EXPECT_ERR(bin(VOP_LE, S("a"), F(1.0)), "not supported");
    EXPECT_ERR(bin(VOP_GE, B(true), S("a")), "not supported");
}
END_TEST

START_TEST(test_and_or_return_operands) {
    EXPECT_INT(bin(VOP_AND, I(0), I(5)), 0);                    /* 0 and 5 -> 0 */
    EXPECT_INT(bin(VOP_AND, I(3), I(5)), 5);                    /* 3 and 5 -> 5 */
    EXPECT_INT(bin(VOP_OR, I(3), I(5)), 3);                     /* 3 or 5 -> 3 */
    EXPECT_INT(bin(VOP_OR, I(0), I(5)), 5);
    EXPECT_STR(bin(VOP_OR, F(0.0), S("x")), "x");               /* 0.0 or 'x' -> 'x' */
    EXPECT_STR(bin(VOP_AND, S(""), I(1)), "");                  /* '' and 1 -> '' */
    EXPECT_INT(bin(VOP_AND, S("a"), I(0)), 0);
    EXPECT_STR(bin(VOP_OR, S("a"), I(1)), "a");
    EXPECT_INT(bin(VOP_OR, B(false), I(0)), 0);                 /* False or 0 -> 0 (the int) */
    EXPECT_FLOAT(bin(VOP_AND, B(true), F(2.5)), 2.5);
    EXPECT_BOOL(bin(VOP_AND, B(true), B(false)), false);
    EXPECT_BOOL(bin(VOP_OR, B(false), B(true)), true);
    EXPECT_FLOAT(bin(VOP_AND, F(-0.0), I(7)), -0.0);            /* -0.0 and 7 -> -0.0 */
}
END_TEST

/* ---------------------------------------------------------------- order and hash */

START_TEST(test_order_and_hash) {
    Value vals[] = {
        B(false), B(true), I(-5), I(0), I(1), I(2), I(I64MAX), I(I64MIN), F(0.0), F(-0.0),
        F(1.0), F(0.5), F(-2.5), F(1e300), F(-INFINITY), F(INFINITY), S(""), S("a"), S("b"),
        S("ab"), F(NAN), F(-NAN), I(9007199254740993), F(9007199254740992.0),
    };
    size_t n = sizeof vals / sizeof vals[0];
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(value_order(vals[i], vals[i]), 0);
        for (size_t j = 0; j < n; j++) {
            int ij = value_order(vals[i], vals[j]), ji = value_order(vals[j], vals[i]);
            ck_assert_msg((ij > 0) - (ij < 0) == -((ji > 0) - (ji < 0)), "antisymmetry %zu %zu", i, j);
            if (ij == 0)
                ck_assert_msg(value_hash(vals[i]) == value_hash(vals[j]),
                              "order-equal values %zu and %zu hash differently", i, j);
            for (size_t k = 0; k < n; k++) {
                int jk = value_order(vals[j], vals[k]), ik = value_order(vals[i], vals[k]);
                if (ij <= 0 && jk <= 0) ck_assert_msg(ik <= 0, "transitivity %zu %zu %zu", i, j, k);
            }
        }
    }
    /* numbers before strings */
    ck_assert(value_order(F(1e300), S("")) < 0);
    ck_assert(value_order(S(""), B(false)) > 0);
    /* by value, then kind: 1, 1.0 and True are distinct but adjacent */
    ck_assert(value_order(I(1), F(1.0)) != 0);
    ck_assert(value_order(I(1), B(true)) != 0);
    ck_assert(value_order(F(1.0), B(true)) != 0);
    ck_assert(value_order(I(1), F(1.5)) < 0);
    ck_assert(value_order(F(0.5), B(true)) < 0);
    ck_assert(value_order(B(true), I(2)) < 0);
    ck_assert(value_order(I(-5), F(-2.5)) < 0);
    ck_assert(value_order(I(I64MIN), I(I64MAX)) < 0);
    ck_assert(value_order(I(I64MAX - 1), I(I64MAX)) < 0);       /* beyond 2^53 */
    ck_assert(value_order(S("a"), S("ab")) < 0);
    ck_assert(value_order(S("b"), S("ab")) > 0);
    /* different pointers, same contents */
    char x[] = "same", y[] = "same";
    ck_assert_int_eq(value_order(S(x), S(y)), 0);
    ck_assert(value_hash(S(x)) == value_hash(S(y)));
    /* -0.0 and 0.0 are the same value */
    ck_assert_int_eq(value_order(F(-0.0), F(0.0)), 0);
    ck_assert(value_hash(F(-0.0)) == value_hash(F(0.0)));
    /* every NaN is alike, after all other numbers */
    ck_assert_int_eq(value_order(F(NAN), F(-NAN)), 0);
    ck_assert(value_hash(F(NAN)) == value_hash(F(-NAN)));
    ck_assert(value_order(F(INFINITY), F(NAN)) < 0);
    /* hashes tell kinds apart (not required, but 1/1.0/True colliding would be poor) */
    ck_assert(value_hash(I(1)) != value_hash(F(1.0)));
    ck_assert(value_hash(I(1)) != value_hash(B(true)));
    ck_assert(value_hash(S("a")) != value_hash(S("b")));
}
END_TEST

/* ---------------------------------------------------------------- printing */

static char printed[512];

/* What fn prints for v, in `printed`. */
static const char *print_with(void (*fn)(FILE *, Value), Value v) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    fn(f, v);
    fclose(f);
    ck_assert_uint_lt(len, sizeof printed);
    memcpy(printed, buf, len + 1);
    free(buf);
    return printed;
}
static const char *json(Value v) { return print_with(value_print_json, v); }
static const char *repl(Value v) { return print_with(value_print_repl, v); }

/* Each string is Python 3's repr(float) of the value (the hex literal is the exact double; the
 * comment is the Python expression it was computed from). */
static const struct { double v; const char *repr; } float_reprs[] = {
    {0x1.999999999999ap-4, "0.1"}, /* 0.1 */
    {0x1.5555555555555p-2, "0.3333333333333333"}, /* 1/3 */
    {0x1.5555555555555p-1, "0.6666666666666666"}, /* 2/3 */
    {0x1.1c37937e08000p+53, "1e+16"}, /* 1e16 */
    {0x1.4f8b588e368f1p-17, "1e-05"}, /* 1e-5 */
    {0x1.d6f3454000000p+26, "123456789.0"}, /* 123456789.0 */
    {-0x0.0p+0, "-0.0"}, /* -0.0 */
    {0x0.0p+0, "0.0"}, /* 0.0 */
    {0x0.0000000000001p-1022, "5e-324"}, /* 5e-324 */
    {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"}, /* 1.7976931348623157e308 */
    {0x1.3333333333334p-2, "0.30000000000000004"}, /* 0.1+0.2 */
    {0x1.0000000000000p+0, "1.0"}, /* 1.0 */
    {-0x1.8000000000000p+0, "-1.5"}, /* -1.5 */
    {0x1.9000000000000p+6, "100.0"}, /* 100.0 */
    {0x1.c6bf526340000p+49, "1000000000000000.0"}, /* 1e15 */
    {0x1.1c37937e07fffp+53, "9999999999999998.0"}, /* 9999999999999998.0 */
    {0x1.0f0cf064dd592p+73, "1e+22"}, /* 1e22 */
    {0x1.a36e2eb1c432dp-14, "0.0001"}, /* 1e-4 */
    {0x1.0624dd2f1a9fcp-10, "0.001"}, /* 0.001 */
    {0x1.421f5f40d8376p-23, "1.5e-07"}, /* 1.5e-7 */
    {0x1.0000000000000p-1022, "2.2250738585072014e-308"}, /* 2.0**-1022 */
    {0x1.0000000000000p-1019, "1.7800590868057611e-307"}, /* 2.0**-1019 */
    {0x1.0000000000000p-1008, "3.645561009778199e-304"}, /* 2.0**-1008 (16 digits, not 17) */
    {0x1.921fb54442d18p+1, "3.141592653589793"}, /* 3.141592653589793 */
    {-0x1.5bf0a8b145769p+1, "-2.718281828459045"}, /* -2.718281828459045 */
    {0x1.0000000000000p-1, "0.5"}, /* 0.5 */
    {0x1.81cd6c8b43958p+13, "12345.678"}, /* 12345.678 */
    {0x1.b1ae4d6e2ef50p+69, "1e+21"}, /* 1e21 */
    {0x1.d7e7e70161236p+996, "1.2345e+300"}, /* 1.2345e+300 */
    {0x1.0000000000000p+60, "1.152921504606847e+18"}, /* 2.0**60 */
    {0x1.0000000000001p+53, "9007199254740994.0"}, /* 2.0**53+2 */
    {0x1.1666666666666p+2, "4.35"}, /* 4.35 */
    {0x1.6666666666666p-1, "0.7"}, /* 0.7 */
    {-0x1.ad7f29abcaf48p-24, "-1e-07"}, /* -1e-7 */
    {0x1.fe185ca57c517p+78, "6.02214076e+23"}, /* 6.02214076e23 */
    {0x1.18b54f22aeb03p+50, "1234567890123456.8"}, /* 1234567890123456.8 */
    {0x1p-1017, "7.120236347223045e-307"}, /* 2.0**-1017 */
    {0x0.0000000006000p-1022, "1.2142e-319"}, /* float.fromhex("0x0.0000000006000p-1022") */
    {0x0.0000000000006p-1022, "3e-323"}, /* 6 * 5e-324 */
};

START_TEST(test_json_float_is_python_repr) {
    for (size_t i = 0; i < sizeof float_reprs / sizeof float_reprs[0]; i++)
        ck_assert_msg(strcmp(json(F(float_reprs[i].v)), float_reprs[i].repr) == 0,
                      "repr(%.17g): got %s, want %s", float_reprs[i].v, printed,
                      float_reprs[i].repr);
    /* NaN and infinities are not JSON numbers */
    ck_assert_str_eq(json(F(NAN)), "null");
    ck_assert_str_eq(json(F(INFINITY)), "null");
    ck_assert_str_eq(json(F(-INFINITY)), "null");
}
END_TEST

/* Powers of two whose shortest repr is not the nearest 16-digit decimal: Python's repr finds a
 * 16-digit string one unit up (the round-trip interval is wider above a power of two). */
START_TEST(test_json_float_powers_of_two) {
    static const struct { double v; const char *repr; } pw[] = {
        {0x1p-1008, "3.645561009778199e-304"}, /* repr(2.0**-1008) */
        {0x1p-957, "8.209073602596753e-289"},  /* repr(2.0**-957) */
        {0x1p-921, "5.641232424577593e-278"},  /* repr(2.0**-921) */
        {0x1p-808, "5.858190679279809e-244"},  /* repr(2.0**-808) */
        {0x1p+1000, "1.0715086071862673e+301"}, /* repr(2.0**1000) */
    };
    for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i++) {
        ck_assert_msg(strcmp(json(F(pw[i].v)), pw[i].repr) == 0, "repr(%a): got %s, want %s",
                      pw[i].v, printed, pw[i].repr);
        ck_assert_msg(strtod(printed, NULL) == pw[i].v, "does not round-trip");
    }
}
END_TEST

/* Shortest round-trip over many values: every printed float parses back to itself, and no
 * shorter digit string would. */
START_TEST(test_json_float_round_trips) {
    uint64_t x = 88172645463325252ULL; /* xorshift */
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double f;
        memcpy(&f, &x, sizeof f);
        if (!isfinite(f)) continue;
        json(F(f));
        ck_assert_msg(strtod(printed, NULL) == f, "%s does not round-trip to %a", printed, f);
        /* count significant digits of the printed mantissa */
        char sig[40];
        int digits = 0;
        for (const char *c = printed; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9' && (digits > 0 || *c != '0')) sig[digits++] = *c;
        while (digits > 1 && sig[digits - 1] == '0') digits--;
        ck_assert_msg(digits <= 17, "%s: too many digits", printed);
        if (digits > 1) {
            char shorter[40];
            snprintf(shorter, sizeof shorter, "%.*e", digits - 2, f);
            ck_assert_msg(strtod(shorter, NULL) != f, "%s is not shortest (%s)", printed, shorter);
        }
    }
}
END_TEST

START_TEST(test_json_other_kinds) {
    ck_assert_str_eq(json(B(true)), "true");
    ck_assert_str_eq(json(B(false)), "false");
    ck_assert_str_eq(json(I(0)), "0");
    ck_assert_str_eq(json(I(-42)), "-42");
    ck_assert_str_eq(json(I(I64MIN)), "-9223372036854775808");
    ck_assert_str_eq(json(I(I64MAX)), "9223372036854775807");
    ck_assert_str_eq(json(S("abc")), "\"abc\"");
    ck_assert_str_eq(json(S("")), "\"\"");
    ck_assert_str_eq(json(S("a\"b")), "\"a\\\"b\"");
    ck_assert_str_eq(json(S("a\\b")), "\"a\\\\b\"");
    ck_assert_str_eq(json(S("l1\nl2")), "\"l1\\nl2\"");
    ck_assert_str_eq(json(S("a\tb")), "\"a\\tb\"");
    ck_assert_str_eq(json(S("\x01")), "\"\\u0001\"");          /* json.dumps('\x01') */
    ck_assert_str_eq(json(S("\x1f")), "\"\\u001f\"");
    ck_assert_str_eq(json(S("/")), "\"/\"");
    ck_assert_str_eq(json(S("\xc3\xa9")), "\"\xc3\xa9\"");      /* UTF-8 passes through */
    /* control characters must never appear raw */
    json(S("\r\b\f"));
    for (const char *c = printed; *c; c++) ck_assert_msg((unsigned char)*c >= 0x20, "raw control");
}
END_TEST

/* Each string is Python 3's str(round(v, 3)). */
static const struct { double v; const char *str; } repl_floats[] = {
    {0x1.5555555555555p-1, "0.667"}, /* str(round(2/3, 3)) */
    {0x1.5555555555555p-2, "0.333"}, /* str(round(1/3, 3)) */
    {0x1.999999999999ap-4, "0.1"}, /* str(round(0.1, 3)) */
    {0x1.4000000000000p+1, "2.5"}, /* str(round(2.5, 3)) */
    {0x1.0020c49ba5e35p+0, "1.0"}, /* str(round(1.0005, 3)) */
    {0x1.0624dd2f1a9fcp-11, "0.001"}, /* str(round(0.0005, 3)) */
    {0x1.89374bc6a7efap-10, "0.002"}, /* str(round(0.0015, 3)) */
    {-0x1.a36e2eb1c432dp-12, "-0.0"}, /* str(round(-0.0004, 3)) */
    {0x1.9000000000000p+6, "100.0"}, /* str(round(100.0, 3)) */
    {0x1.1c37937e08000p+53, "1e+16"}, /* str(round(1e16, 3)) */
    {0x1.7e43c8800759cp+996, "1e+300"}, /* str(round(1e300, 3)) */
    {-0x1.0f0cf064dd592p+73, "-1e+22"}, /* str(round(-1e22, 3)) */
    {0x1.e240ca1d53cdep+16, "123456.79"}, /* str(round(123456.78951, 3)) */
    {0x1.5666666666666p+1, "2.675"}, /* str(round(2.675, 3)) */
    {0x1.b7cdfd9d7bdbbp-34, "0.0"}, /* str(round(1e-10, 3)) */
    {0x1.fff972474538fp+0, "2.0"}, /* str(round(1.9999, 3)) */
    {-0x1.4000000000000p+1, "-2.5"}, /* str(round(-2.5, 3)) */
    {0x1.c6bf526340002p+49, "1000000000000000.2"}, /* str(round(1e15+0.3, 3)) */
    {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"}, /* str(round(1.7976931348623157e308, 3)) */
    {-0x1.d7e7e70161236p+996, "-1.2345e+300"}, /* str(round(-1.2345e300, 3)) */
};

START_TEST(test_repl_printing) {
    for (size_t i = 0; i < sizeof repl_floats / sizeof repl_floats[0]; i++)
        ck_assert_msg(strcmp(repl(F(repl_floats[i].v)), repl_floats[i].str) == 0,
                      "str(round(%.17g, 3)): got %s, want %s", repl_floats[i].v, printed,
                      repl_floats[i].str);
    ck_assert_str_eq(repl(F(NAN)), "nan");
    ck_assert_str_eq(repl(F(INFINITY)), "inf");
    ck_assert_str_eq(repl(F(-INFINITY)), "-inf");
    ck_assert_str_eq(repl(B(true)), "T");
    ck_assert_str_eq(repl(B(false)), "F");
    ck_assert_str_eq(repl(S("hello")), "hello");                /* strings bare */
    ck_assert_str_eq(repl(S("")), "");
    ck_assert_str_eq(repl(S("a \"q\"")), "a \"q\"");
    ck_assert_str_eq(repl(I(-7)), "-7");
    ck_assert_str_eq(repl(I(I64MIN)), "-9223372036854775808");
}
END_TEST

START_TEST(test_format) {
    char buf[64];
    value_format(S("a"), buf, sizeof buf);
    ck_assert_str_eq(buf, "\"a\"");
    value_format(B(true), buf, sizeof buf);
    ck_assert_str_eq(buf, "True");
    value_format(B(false), buf, sizeof buf);
    ck_assert_str_eq(buf, "False");
    value_format(I(1), buf, sizeof buf);
    ck_assert_str_eq(buf, "1");
    value_format(F(0.5), buf, sizeof buf);
    ck_assert_str_eq(buf, "0.5");
    value_format(F(2.0), buf, sizeof buf);
    ck_assert_str_eq(buf, "2.0");
    value_format(F(1e-5), buf, sizeof buf);
    ck_assert_str_eq(buf, "1e-05");
    char small[4];
    value_format(F(0.3333333333333333), small, sizeof small); /* truncated, NUL-terminated */
    ck_assert_str_eq(small, "0.3");
}
END_TEST

static Suite *value_suite(void) {
    Suite *s = suite_create("value");
    TCase *arith = tcase_create("arithmetic");
    tcase_add_test(arith, test_add_sub_mul_mixing);
    tcase_add_test(arith, test_int_overflow_is_error);
    tcase_add_test(arith, test_true_division);
    tcase_add_test(arith, test_true_division_large_ints);
    tcase_add_test(arith, test_modulo_sign_of_divisor);
    tcase_add_test(arith, test_power);
    tcase_add_test(arith, test_power_non_finite);
    tcase_add_test(arith, test_string_arithmetic);
    suite_add_tcase(s, arith);
    TCase *unary = tcase_create("unary");
    tcase_add_test(unary, test_round_ties_to_even);
    tcase_add_test(unary, test_negation_and_plus);
    tcase_add_test(unary, test_not_and_indicator);
    tcase_add_test(unary, test_truthy_and_as_double);
    tcase_add_test(unary, test_op_tables);
    suite_add_tcase(s, unary);
    TCase *cmp = tcase_create("compare");
    tcase_add_test(cmp, test_equality);
    tcase_add_test(cmp, test_int_float_compare_exact);
    tcase_add_test(cmp, test_ordering);
    tcase_add_test(cmp, test_and_or_return_operands);
    tcase_add_test(cmp, test_order_and_hash);
    suite_add_tcase(s, cmp);
    TCase *print = tcase_create("print");
    tcase_set_timeout(print, 60); /* the round-trip sweep is slow under sanitizers */
    tcase_add_test(print, test_json_float_is_python_repr);
    tcase_add_test(print, test_json_float_powers_of_two);
    tcase_add_test(print, test_json_float_round_trips);
    tcase_add_test(print, test_json_other_kinds);
    tcase_add_test(print, test_repl_printing);
    tcase_add_test(print, test_format);
    suite_add_tcase(s, print);
    return s;
}

int main(void) {
    return run_suite(value_suite());
}
