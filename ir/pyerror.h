/* Python's exception texts for failing operations. The original RASP interpreter is Python, and
 * its REPL prints these texts ("something went wrong: unsupported operand type(s) for /: 'int'
 * and 'str'"); sessions (ir/session.h) report errors with them. */
#ifndef RASPCC_IR_PYERROR_H
#define RASPCC_IR_PYERROR_H

#include "ir/eval.h"
#include "ir/session.h"

/* `a op b` failed (value_binary said no). */
const char *py_binary_error(Arena *a, ValueOp op, Value x, Value y);
/* `op x` failed (value_unary said no). */
const char *py_unary_error(Arena *a, ValueOp op, Value x);
/* An operator between two values of Python types tx and ty that do not support it. */
const char *py_type_error(Arena *a, ValueOp op, const char *tx, const char *ty);
/* Python's name of an atom's type: bool, int, float, str. */
const char *py_atom_type(Value v);
/* How the original reports an evaluation error of the reference evaluator. */
ElabFault py_eval_fault(Arena *a, const IrEvalError *err);

#endif
