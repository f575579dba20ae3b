/* The reference evaluator: runs the IR on one input, exactly as the original RASP interpreter
 * would (ir/ir.h gives each node's meaning). Everything the compiler produces is checked against
 * this evaluator, so it favours obviousness over speed.
 *
 * Errors (type errors, division by zero, averaging strings, a missing dict key, mixed value types
 * in one s-op, ...) are returned as values with the location of the node that failed. */
#ifndef RASPCC_IR_EVAL_H
#define RASPCC_IR_EVAL_H

#include "ir/ir.h"

typedef struct IrEvalError {
    SrcLoc loc;
    char message[256];
} IrEvalError;

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

/* Evaluates every node whose wanted[id] is set (ids below `count`; wanted must be closed under
 * arguments) on one input, continuing past failures: results[id] is Value[n] (s-op) or bool[n*n]
 * (selector) for each wanted node that succeeded, NULL otherwise; failed[id] tells which raised,
 * directly or through an argument. The compiler uses it to tabulate s-ops that depend only on
 * positions and the length. Always returns true. */
bool ir_eval_nodes(const IrGraph *g, const bool *wanted, size_t count, const Value *input, size_t n, Arena *scratch,
                   void **results, bool *failed);

#endif
