/* Atom semantics: Python 3's, as the original RASP interpreter inherits them (see value.h). */
#include "ir/value.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/arena.h"

static const char *const kind_names[] = {"bool", "int", "float", "string"};

const char *value_kind_name(ValueKind k) { return kind_names[k]; }

/* bool and int behave as Python ints. */
static bool is_intlike(Value v) { return v.kind == VAL_BOOL || v.kind == VAL_INT; }
static int64_t as_int(Value v) { return v.kind == VAL_BOOL ? (int64_t)v.as.b : v.as.i; }

double value_as_double(Value v) {
    switch (v.kind) {
    case VAL_BOOL: return v.as.b ? 1.0 : 0.0;
    case VAL_INT: return (double)v.as.i;
    case VAL_FLOAT: return v.as.f;
    case VAL_STR: break;
    }
    return 0.0;
}

bool value_truthy(Value v) {
    switch (v.kind) {
    case VAL_BOOL: return v.as.b;
    case VAL_INT: return v.as.i != 0;
    case VAL_FLOAT: return v.as.f != 0.0;
    case VAL_STR: return v.as.s[0] != '\0';
    }
    return false;
}

static const char *const op_texts[] = {
    [VOP_ADD] = "+", [VOP_SUB] = "-", [VOP_MUL] = "*", [VOP_DIV] = "/", [VOP_MOD] = "%",
    [VOP_POW] = "^", [VOP_EQ] = "==", [VOP_NE] = "!=", [VOP_LT] = "<", [VOP_GT] = ">",
    [VOP_LE] = "<=", [VOP_GE] = ">=", [VOP_AND] = "and", [VOP_OR] = "or", [VOP_NOT] = "not",
    [VOP_NEG] = "-", [VOP_POS] = "+", [VOP_ROUND] = "round", [VOP_INDICATOR] = "indicator",
};

const char *value_op_text(ValueOp op) { return op_texts[op]; }
bool value_op_is_unary(ValueOp op) { return op >= VOP_NOT; }

static ValueResult ok(Value v) { return (ValueResult){true, v, NULL}; }

static ValueResult fail(char *buf, size_t size, const char *fmt, const char *a, const char *b,
                        const char *c) {
    if (!buf || size == 0) return (ValueResult){false, value_int(0), "invalid operation"};
    snprintf(buf, size, fmt, a, b, c);
    return (ValueResult){false, value_int(0), buf};
}

static ValueResult type_error(ValueOp op, Value a, Value b, char *buf, size_t size) {
    return fail(buf, size, "unsupported operand types for %s: %s and %s", op_texts[op],
                kind_names[a.kind], kind_names[b.kind]);
}

static ValueResult overflow(ValueOp op, char *buf, size_t size) {
    return fail(buf, size, "integer overflow in %s%s%s", op_texts[op], "", "");
}

static ValueResult zero_division(char *buf, size_t size, const char *what) {
    return fail(buf, size, "%s by zero%s%s", what, "", "");
}

/* Python's float %: the result takes the sign of the divisor. */
static double py_fmod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0.0) {
        if ((b < 0) != (r < 0)) r += b;
    } else {
        r = copysign(0.0, b);
    }
    return r;
}

static ValueResult int_pow(int64_t base, int64_t exp, char *buf, size_t size) {
    int64_t result = 1;
    while (exp > 0) {
        if (exp & 1) {
            if (__builtin_mul_overflow(result, base, &result)) return overflow(VOP_POW, buf, size);
        }
        exp >>= 1;
        if (exp && __builtin_mul_overflow(base, base, &base)) return overflow(VOP_POW, buf, size);
    }
    return ok(value_int(result));
}

/* x / y rounded once, as Python's int true division: the double quotient of two doubles rounds
 * twice when |x| or |y| exceeds 2^53. The quotient is taken to 55+ bits plus a sticky bit, which
 * the conversion to double then rounds correctly (to nearest, ties to even). */
static double int_true_div(int64_t x, int64_t y) {
    const int64_t exact = (int64_t)1 << 53;
    if (x >= -exact && x <= exact && y >= -exact && y <= exact) return (double)x / (double)y;
    bool neg = (x < 0) != (y < 0);
    if (x == 0) return y < 0 ? -0.0 : 0.0; /* Python: 0 / -y is -0.0 */
    uint64_t a = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, b = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
    int shift = 56 + (64 - __builtin_clzll(b)) - (64 - __builtin_clzll(a)); /* a, b != 0 here */
    unsigned __int128 num = a, den = b;
    if (shift >= 0) num <<= shift;
    else den <<= -shift;
    uint64_t q = (uint64_t)(num / den) | (num % den != 0); /* 56 or 57 bits */
    double r = ldexp((double)q, -shift);
    return neg ? -r : r;
}

static ValueResult arithmetic(ValueOp op, Value a, Value b, char *buf, size_t size) {
    if (is_intlike(a) && is_intlike(b)) {
        int64_t x = as_int(a), y = as_int(b), r;
        switch (op) {
        case VOP_ADD:
            if (__builtin_add_overflow(x, y, &r)) return overflow(op, buf, size);
            return ok(value_int(r));
        case VOP_SUB:
            if (__builtin_sub_overflow(x, y, &r)) return overflow(op, buf, size);
            return ok(value_int(r));
        case VOP_MUL:
            if (__builtin_mul_overflow(x, y, &r)) return overflow(op, buf, size);
            return ok(value_int(r));
        case VOP_DIV:
            if (y == 0) return zero_division(buf, size, "division");
            return ok(value_float(int_true_div(x, y)));
        case VOP_MOD:
            if (y == 0) return zero_division(buf, size, "modulo");
            if (y == -1) return ok(value_int(0)); /* avoids INT64_MIN % -1 */
            r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return ok(value_int(r));
        case VOP_POW:
            if (y >= 0) return int_pow(x, y, buf, size);
            if (x == 0) return fail(buf, size, "0 cannot be raised to a negative power%s%s%s", "", "", "");
            return ok(value_float(pow((double)x, (double)y)));
        default: break;
        }
    }
    double x = value_as_double(a), y = value_as_double(b);
    switch (op) {
    case VOP_ADD: return ok(value_float(x + y));
    case VOP_SUB: return ok(value_float(x - y));
    case VOP_MUL: return ok(value_float(x * y));
    case VOP_DIV:
        if (y == 0.0) return zero_division(buf, size, "division");
        return ok(value_float(x / y));
    case VOP_MOD:
        if (y == 0.0) return zero_division(buf, size, "modulo");
        return ok(value_float(py_fmod(x, y)));
    case VOP_POW:
        /* as Python: infinite and NaN operands follow C's pow (0.0 ^ -inf is inf) */
        if (x == 0.0 && y < 0 && isfinite(y))
            return fail(buf, size, "0.0 cannot be raised to a negative power%s%s%s", "", "", "");
        if (x < 0 && isfinite(x) && isfinite(y) && y != floor(y))
            return fail(buf, size, "negative number raised to a fractional power%s%s%s", "", "", "");
        {
            double r = pow(x, y);
            if (isinf(r) && !isinf(x) && !isinf(y))
                return fail(buf, size, "numerical result out of range%s%s%s", "", "", "");
            return ok(value_float(r));
        }
    default: break;
    }
    return type_error(op, a, b, buf, size);
}

/* Exact comparison of an int with a non-NaN float, as Python compares them (converting the
 * int to a double would make 2^53 + 1 == 2.0^53). */
static int cmp_int_float(int64_t i, double f) {
    if (f >= 9223372036854775808.0) return -1;
    if (f < -9223372036854775808.0) return 1;
    double t = trunc(f);
    int64_t ti = (int64_t)t;
    if (i != ti) return i < ti ? -1 : 1;
    return (f - t < 0) - (f - t > 0);
}

/* Numbers by exact value; NaN after everything else (and equal to itself). */
static int num_cmp(Value a, Value b) {
    bool an = a.kind == VAL_FLOAT && isnan(a.as.f), bn = b.kind == VAL_FLOAT && isnan(b.as.f);
    if (an || bn) return an - bn;
    if (is_intlike(a) && is_intlike(b)) {
        int64_t x = as_int(a), y = as_int(b);
        return (x > y) - (x < y);
    }
    if (is_intlike(a)) return cmp_int_float(as_int(a), b.as.f);
    if (is_intlike(b)) return -cmp_int_float(as_int(b), a.as.f);
    return (a.as.f > b.as.f) - (a.as.f < b.as.f);
}

int value_number_order(Value a, Value b) { return num_cmp(a, b); }

/* -1, 0, 1 for numbers and strings; *err set when they cannot be ordered. */
static int compare(Value a, Value b, bool *err) {
    *err = false;
    if (a.kind == VAL_STR && b.kind == VAL_STR) {
        int c = strcmp(a.as.s, b.as.s);
        return (c > 0) - (c < 0);
    }
    if (a.kind == VAL_STR || b.kind == VAL_STR) {
        *err = true;
        return 0;
    }
    return num_cmp(a, b);
}

bool value_equal(Value a, Value b) {
    if ((a.kind == VAL_STR) != (b.kind == VAL_STR)) return false;
    bool err;
    return compare(a, b, &err) == 0 && !err && !(a.kind == VAL_FLOAT && isnan(a.as.f)) &&
           !(b.kind == VAL_FLOAT && isnan(b.as.f));
}

ValueResult value_binary(ValueOp op, Value a, Value b, struct Arena *concat_arena, char *msgbuf,
                         size_t msgsize) {
    switch (op) {
    case VOP_AND: return ok(value_truthy(a) ? b : a);
    case VOP_OR: return ok(value_truthy(a) ? a : b);
    case VOP_EQ: return ok(value_bool(value_equal(a, b)));
    case VOP_NE: return ok(value_bool(!value_equal(a, b)));
    case VOP_LT: case VOP_GT: case VOP_LE: case VOP_GE: {
        bool err;
        int c = compare(a, b, &err);
        if (err)
            return fail(msgbuf, msgsize, "'%s' not supported between %s and %s", op_texts[op],
                        kind_names[a.kind], kind_names[b.kind]);
        if ((a.kind == VAL_FLOAT && isnan(a.as.f)) || (b.kind == VAL_FLOAT && isnan(b.as.f)))
            return ok(value_bool(false));
        bool r = op == VOP_LT ? c < 0 : op == VOP_GT ? c > 0 : op == VOP_LE ? c <= 0 : c >= 0;
        return ok(value_bool(r));
    }
    case VOP_ADD:
        if (a.kind == VAL_STR && b.kind == VAL_STR) {
            if (!concat_arena) return type_error(op, a, b, msgbuf, msgsize);
            return ok(value_str(arena_printf(concat_arena, "%s%s", a.as.s, b.as.s)));
        }
        /* fall through */
    case VOP_SUB: case VOP_MUL: case VOP_DIV: case VOP_MOD: case VOP_POW:
        if (a.kind == VAL_STR || b.kind == VAL_STR) return type_error(op, a, b, msgbuf, msgsize);
        return arithmetic(op, a, b, msgbuf, msgsize);
    default: break;
    }
    return fail(msgbuf, msgsize, "'%s' is not a binary operator%s%s", op_texts[op], "", "");
}

/* Python's round(): ties to even, result an int. */
static ValueResult round_half_even(double x, char *buf, size_t size) {
    if (!isfinite(x)) return fail(buf, size, "cannot round a non-finite float%s%s%s", "", "", "");
    double r = nearbyint(x); /* default rounding mode: to nearest, ties to even */
    if (r >= 9.2233720368547758e18 || r < -9.2233720368547758e18) return overflow(VOP_ROUND, buf, size);
    return ok(value_int((int64_t)r));
}

ValueResult value_unary(ValueOp op, Value a, char *msgbuf, size_t msgsize) {
    switch (op) {
    case VOP_NOT: return ok(value_bool(!value_truthy(a)));
    case VOP_INDICATOR: return ok(value_int(value_truthy(a) ? 1 : 0));
    default: break;
    }
    if (a.kind == VAL_STR)
        return fail(msgbuf, msgsize, "bad operand type for %s: %s%s", op_texts[op], kind_names[a.kind], "");
    switch (op) {
    case VOP_NEG:
        if (a.kind == VAL_FLOAT) return ok(value_float(-a.as.f));
        if (as_int(a) == INT64_MIN) return overflow(op, msgbuf, msgsize);
        return ok(value_int(-as_int(a)));
    case VOP_POS:
        return ok(a.kind == VAL_FLOAT ? a : value_int(as_int(a)));
    case VOP_ROUND:
        if (a.kind == VAL_FLOAT) return round_half_even(a.as.f, msgbuf, msgsize);
        return ok(value_int(as_int(a)));
    default: break;
    }
    return fail(msgbuf, msgsize, "'%s' is not a unary operator%s%s", op_texts[op], "", "");
}

int value_order(Value a, Value b) {
    bool as = a.kind == VAL_STR, bs = b.kind == VAL_STR;
    if (as != bs) return as ? 1 : -1;
    if (as) {
        int c = strcmp(a.as.s, b.as.s);
        return (c > 0) - (c < 0);
    }
    int c = num_cmp(a, b);
    if (c) return c;
    return (a.kind > b.kind) - (a.kind < b.kind);
}

uint64_t value_hash(Value v) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)v.kind;
    const unsigned char *p;
    size_t n;
    uint64_t bits;
    if (v.kind == VAL_STR) {
        p = (const unsigned char *)v.as.s;
        n = strlen(v.as.s);
    } else {
        if (v.kind == VAL_FLOAT) {
            double f = v.as.f == 0.0 ? 0.0 : v.as.f; /* -0.0 hashes like 0.0 */
            if (isnan(f)) f = NAN;                     /* every NaN alike, as value_order has it */
            memcpy(&bits, &f, sizeof bits);
        } else {
            bits = (uint64_t)as_int(v);
        }
        p = (const unsigned char *)&bits;
        n = sizeof bits;
    }
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Writes the `prec` significant digits of mag (finite, >= 0) rounded to nearest into digits
 * (NUL-terminated) and returns the decimal exponent. */
static int decimal_digits(double mag, int prec, char *digits) {
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, mag); /* d[.ddd]e[+-]XX */
    const char *e = strchr(tmp, 'e');
    size_t nd = 0;
    for (const char *c = tmp; c < e; c++)
        if (*c != '.') digits[nd++] = *c;
    digits[nd] = '\0';
    return atoi(e + 1);
}

static bool digits_round_trip(double mag, const char *digits, int exp) {
    char tmp[48];
    snprintf(tmp, sizeof tmp, "%c.%se%d", digits[0], digits + 1, exp);
    return strtod(tmp, NULL) == mag;
}

/* Python's repr of a float: the shortest digits that round-trip (the nearest such when several
 * do), in fixed notation for exponents -4..15 (with ".0" when integral) and scientific
 * ("1e-05", "1.5e+16") otherwise. */
static void float_repr(double f, char *buf, size_t size) {
    if (isnan(f)) { snprintf(buf, size, "nan"); return; }
    if (isinf(f)) { snprintf(buf, size, f > 0 ? "inf" : "-inf"); return; }
    double mag = fabs(f);
    char digits[20];
    int exp = 0;
    for (int prec = 1; prec <= 17; prec++) {
        exp = decimal_digits(mag, prec, digits);
        if (digits_round_trip(mag, digits, exp)) break;
        /* The nearest prec-digit decimal is outside the round-trip interval. At a power of two
         * that interval is twice as wide above as below, so the next decimal up may be inside. */
        char up[20];
        memcpy(up, digits, (size_t)prec + 1);
        int i = prec - 1, up_exp = exp;
        while (i >= 0 && up[i] == '9') up[i--] = '0';
        if (i >= 0) up[i]++;
        else { up[0] = '1'; up_exp++; }
        if (digits_round_trip(mag, up, up_exp)) {
            memcpy(digits, up, (size_t)prec + 1);
            exp = up_exp;
            break;
        }
    }
    size_t nd = strlen(digits);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    char out[64];
    size_t o = 0;
    if (signbit(f)) out[o++] = '-';
    if (exp < -4 || exp >= 16) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++) out[o++] = digits[i];
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else if (exp < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp - 1; i++) out[o++] = '0';
        for (size_t i = 0; i < nd; i++) out[o++] = digits[i];
    } else {
        for (int i = 0; i <= exp; i++) out[o++] = (size_t)i < nd ? digits[i] : '0';
        out[o++] = '.';
        if ((size_t)exp + 1 < nd)
            for (size_t i = (size_t)exp + 1; i < nd; i++) out[o++] = digits[i];
        else
            out[o++] = '0';
    }
    out[o] = '\0';
    snprintf(buf, size, "%s", out);
}

void value_format(Value v, char *buf, size_t size) {
    switch (v.kind) {
    case VAL_BOOL: snprintf(buf, size, "%s", v.as.b ? "True" : "False"); break;
    case VAL_INT: snprintf(buf, size, "%" PRId64, v.as.i); break;
    case VAL_FLOAT: float_repr(v.as.f, buf, size); break;
    case VAL_STR: snprintf(buf, size, "\"%s\"", v.as.s); break;
    }
}

void value_print_repl(FILE *out, Value v) {
    char buf[64];
    switch (v.kind) {
    case VAL_BOOL: fputs(v.as.b ? "T" : "F", out); return;
    case VAL_STR: fputs(v.as.s, out); return;
    case VAL_INT: value_format(v, buf, sizeof buf); break;
    case VAL_FLOAT: {
        /* Python: str(round(v, 3)); rounding to 3 decimals via the decimal string */
        double r = v.as.f;
        if (fabs(r) < 1e16) { /* larger floats are integers: round(v, 3) == v */
            char tmp[64];
            snprintf(tmp, sizeof tmp, "%.3f", r);
            r = strtod(tmp, NULL);
        }
        float_repr(r, buf, sizeof buf);
        break;
    }
    }
    fputs(buf, out);
}

void value_print_json(FILE *out, Value v) {
    char buf[64];
    switch (v.kind) {
    case VAL_BOOL: fputs(v.as.b ? "true" : "false", out); return;
    case VAL_INT: value_format(v, buf, sizeof buf); fputs(buf, out); return;
    case VAL_FLOAT:
        if (!isfinite(v.as.f)) { fputs("null", out); return; }
        float_repr(v.as.f, buf, sizeof buf);
        fputs(buf, out);
        return;
    case VAL_STR:
        fputc('"', out);
        for (const unsigned char *c = (const unsigned char *)v.as.s; *c; c++) {
            if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
            else if (*c == '\n') fputs("\\n", out);
            else if (*c == '\t') fputs("\\t", out);
            else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
            else fputc(*c, out);
        }
        fputc('"', out);
        return;
    }
}
