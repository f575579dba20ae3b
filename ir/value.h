/* Atom values: what one position of an s-op holds. bool, int, float or string, with the
 * arithmetic and comparisons of Python 3, which the original RASP interpreter inherits:
 *   - bool is an int in arithmetic (True + 1 == 2) and compares equal to 1;
 *   - ints and floats mix; 3 == 3.0; / is true division (always float);
 *   - % takes the sign of the divisor (floats too); // is not in the language;
 *   - ^ is power: int ^ non-negative int is an exact int, otherwise a float;
 *     a negative base with a fractional exponent is an error (Python would go complex);
 *   - round() ties to even and returns an int;
 *   - == and != between a string and a number are simply false / true;
 *     < > <= >= between a string and a number are a type error;
 *   - `and`/`or` return one of their operands (Python truthiness), `not` returns a bool.
 * Integer overflow of int64 is an error, not wrap-around.
 *
 * Strings are NUL-terminated and owned elsewhere (an arena): values are plain copies. */
#ifndef RASPCC_IR_VALUE_H
#define RASPCC_IR_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ValueKind { VAL_BOOL, VAL_INT, VAL_FLOAT, VAL_STR } ValueKind;

typedef struct Value {
    ValueKind kind;
    union {
        bool b;
        int64_t i;
        double f;
        const char *s;
    } as;
} Value;

static inline Value value_bool(bool b) { Value v; v.kind = VAL_BOOL; v.as.b = b; return v; }
static inline Value value_int(int64_t i) { Value v; v.kind = VAL_INT; v.as.i = i; return v; }
static inline Value value_float(double f) { Value v; v.kind = VAL_FLOAT; v.as.f = f; return v; }
static inline Value value_str(const char *s) { Value v; v.kind = VAL_STR; v.as.s = s; return v; }

static inline bool value_is_number(Value v) { return v.kind != VAL_STR; } /* bools count */
/* Numeric value as a double (bool -> 0/1). Precondition: value_is_number(v). */
double value_as_double(Value v);
/* Python truthiness: 0, 0.0, False and "" are false. */
bool value_truthy(Value v);

/* Binary and unary operators on atoms. */
typedef enum ValueOp {
    VOP_ADD, VOP_SUB, VOP_MUL, VOP_DIV, VOP_MOD, VOP_POW,
    VOP_EQ, VOP_NE, VOP_LT, VOP_GT, VOP_LE, VOP_GE,
    VOP_AND, VOP_OR,
    VOP_NOT, VOP_NEG, VOP_POS, VOP_ROUND, VOP_INDICATOR, /* unary: rhs ignored */
} ValueOp;

/* Result of an operation that may fail: ok, or an error message (static or in `msgbuf`). */
typedef struct ValueResult {
    bool ok;
    Value value;
    const char *error; /* set when !ok; points into a static string or the caller's buffer */
} ValueResult;

/* Applies op. Strings: + concatenates only if `concat_arena` is non-NULL (else a type error);
 * msgbuf (may be NULL) receives formatted error text. */
struct Arena;
ValueResult value_binary(ValueOp op, Value a, Value b, struct Arena *concat_arena,
                         char *msgbuf, size_t msgsize);
ValueResult value_unary(ValueOp op, Value a, char *msgbuf, size_t msgsize);
const char *value_op_text(ValueOp op);
bool value_op_is_unary(ValueOp op);

/* Python == on atoms (3 == 3.0 == True? no: True == 1 and 1 == 1.0, strings by content). */
bool value_equal(Value a, Value b);
/* A total order used for sorting value sets and tables (not Python's <): numbers (by value,
 * then kind) before strings (by bytes). Returns <0, 0, >0. */
int value_order(Value a, Value b);
/* -1, 0, 1 comparing two numbers (ints, floats, bools) as Python does, exactly (2^53 + 1 > 2.0^53);
 * NaN after every other number. */
int value_number_order(Value a, Value b);
/* Identity for hashing/deduplication: equal under value_order == 0. */
uint64_t value_hash(Value v);

/* Printing.
 * value_print_repl: the REPL's style inside sequences: strings bare, bools T/F, floats as
 *   Python's round(v, 3) repr (0.667), ints as ints.
 * value_print_json: JSON: strings quoted and escaped, true/false, ints as ints, floats as
 *   Python's repr (shortest round-trip, "1.0" for integral floats; NaN/inf as null). */
void value_print_repl(FILE *out, Value v);
void value_print_json(FILE *out, Value v);
/* Source-literal style, for diagnostics and labels: "a" quoted, True/False, 1, 0.5. */
void value_format(Value v, char *buf, size_t size);
const char *value_kind_name(ValueKind k); /* "bool", "int", "float", "string" */

#endif
