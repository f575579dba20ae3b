/* The reference evaluator: runs the IR on one input, exactly as the original RASP interpreter
 * would (ir/ir.h gives each node's meaning). Everything the compiler produces is checked against
 * this evaluator, so it favours obviousness over speed.
 *
 * Errors (type errors, division by zero, averaging strings, a missing dict key, mixed value types
 * in one s-op, ...) are returned as values with the location of the node that failed. */
#ifndef RASPCC_IR_EVAL_H
#define RASPCC_IR_EVAL_H

#include "ir/ir.h"

/* What failed, for callers that report errors in another wording (the REPL prints the
 * original interpreter's): the node and, by kind, the atoms involved. */
typedef enum IrEvalFault {
    IR_FAULT_OTHER,
    IR_FAULT_TOKEN,   /* an input atom the node's token type cannot take: args[0] */
    IR_FAULT_MAP,     /* a map's function failed at one position: its arguments args[0..nargs-1] */
    IR_FAULT_SELECT,  /* a comparison of select failed: args[0] = key, args[1] = query */
    IR_FAULT_AVERAGE, /* an aggregate averaged non-numbers: values = the aggregated s-op's */
    IR_FAULT_MIXED,   /* an s-op's values mix strings with numbers: values = them */
} IrEvalFault;

typedef struct IrEvalError {
    SrcLoc loc;
    char message[256];
    IrEvalFault fault;
    const IrNode *node;  /* the node that failed */
    Value args[3];
    uint32_t nargs;
    const Value *values; /* n of them, in the scratch arena */
    size_t n;
} IrEvalError;

/* How input atoms become tokens. Strict (the default) takes only atoms of the token type (bools
 * as ints for tokens_int, numbers as floats for tokens_float); `python_tokens` converts as the
 * original interpreter does, with Python's str(), int(), float() and bool(). */
typedef struct IrEvalOptions {
    bool python_tokens;
} IrEvalOptions;

/* Converts the raw input atoms to the atoms `tokens` holds for the given token type:
 * tokens_str needs strings, tokens_int ints (bools are ints), tokens_float numbers (as floats),
 * tokens_bool bools. */
bool ir_convert_token(IrTokenType type, Value in, Value *out, char *errbuf, size_t errsize);

/* Evaluates s-op `out` on `input` (n atoms). On success *result points at n atoms allocated in
 * `scratch`. n may be 0. */
bool ir_eval(const IrGraph *g, const IrNode *out, const Value *input, size_t n, Arena *scratch,
             Value **result, IrEvalError *err);

/* Evaluates a selector node: *matrix is n*n booleans, matrix[q*n + k]. */
bool ir_eval_selector(const IrGraph *g, const IrNode *sel, const Value *input, size_t n,
                      Arena *scratch, bool **matrix, IrEvalError *err);

/* ir_eval / ir_eval_selector with options: *result is Value[n] for an s-op, bool[n*n] for a
 * selector. `opt` may be NULL (strict). */
bool ir_eval_with(const IrGraph *g, const IrNode *out, const Value *input, size_t n, Arena *scratch,
                  const IrEvalOptions *opt, void **result, IrEvalError *err);

/* Python's conversion of one input atom for a token type (str(1) = "1", int("12") = 12,
 * int(2.7) = 2, bool("0") = True, ...); false with Python's message, e.g.
 * "invalid literal for int() with base 10: 'h'". IR_TOKENS_ASIS keeps the atom. */
bool ir_convert_token_python(IrTokenType type, Value in, Arena *arena, Value *out, char *errbuf,
                             size_t errsize);

/* Evaluates every node whose wanted[id] is set (ids below `count`; wanted must be closed under
 * arguments) on one input, continuing past failures: results[id] is Value[n] (s-op) or bool[n*n]
 * (selector) for each wanted node that succeeded, NULL otherwise; failed[id] tells which raised,
 * directly or through an argument. The compiler uses it to tabulate s-ops that depend only on
 * positions and the length. Always returns true. */
bool ir_eval_nodes(const IrGraph *g, const bool *wanted, size_t count, const Value *input, size_t n, Arena *scratch,
                   void **results, bool *failed);

#endif
