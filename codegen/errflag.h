/* The error flag (raspcc --error-flag): layers appended to a compiled model whose weights compute
 * one residual dim, `err`, that says at every position whether the runtime's checks fail there,
 * so that a framework running the weights alone (NumPy, PyTorch) sees what rasprun raises.
 *
 * A pass over a finished Model (runtime/model.h), after codegen_compile: it widens the residual
 * by `err` and a few scratch dims, and appends 1 to 3 layers (docs/model-format.md, "The error
 * flag", states the construction, the exact decoding and the safe softmax range):
 *   stage A (a layer): per failure region of every check, ReLU ramps of a functional of the
 *     residual summed into a scratch dim `err:raw` (about 0 where the checks pass, >= 1 where one
 *     fails by more than its ramp width); the length 1/(n+1) (a head) and its one-hot, and the
 *     per-length and per-value indicators that checks combining two conditions need;
 *   stage B (a layer): err = 2 ReLU(raw - 1/4), plus one unit per AND of indicators (a value of
 *     the wrong kind, a decoding failure at the input's length, a variance >= 1/8);
 *   stage C (a layer, only for one_kind checks): a head averaging "this position holds a string"
 *     and "... a number" over the positions, and err += 2 max_len min(the two means).
 * Every unit is switched off at the BOS row, so err and the scratch dims are 0 there.
 *
 * Covered (err != 0 at some non-BOS row iff the runtime raises, but within a ramp width of a
 * check's boundary): one_hot, single_key, one_kind and margin checks; the output's one-hot test
 * (categorical), decoding margin, per-length value sets, kind block and kind of the decoded
 * value (numerical); real-valued tokens outside their range. Not covered, and refused or left to
 * the input's encoding: an input longer than max_len or a token outside the vocabulary (no
 * embedding row: the encoding fails in every framework), a non-finite residual, and an
 * unbounded output whose kind block names int or bool (whether a real lies within the error
 * bound of some integer has no finite ReLU construction): errflag_add refuses such a model. */
#ifndef RASPCC_CODEGEN_ERRFLAG_H
#define RASPCC_CODEGEN_ERRFLAG_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/model.h"

/* Ramp widths, relative to each check's own tolerance: within them err may be in (0, 1). */
#define ERRFLAG_ONEHOT_RAMP 1.0   /* x MODEL_ONEHOT_TOL, outside the one-hot tolerance */
#define ERRFLAG_MARGIN_RAMP 1e-3  /* x the check's margin, inside [c - m, c + m] */
#define ERRFLAG_DECODE_RAMP 1.0   /* x the output's margin (at most half a failing gap), outside */
#define ERRFLAG_RANGE_RAMP 1e-6   /* x (1 + hi - lo), outside a real-valued token's range */
#define ERRFLAG_INTEGER_RAMP 0.25 /* absolute, outside the error bound around an integer */
/* An unbounded output read as an int: the flag checks each integer its values can reach. */
#define ERRFLAG_MAX_INTEGERS 4096.0
/* Limits on what the flag adds (refused beyond): residual dims, and hidden units of one layer. */
#define ERRFLAG_MAX_DIMS ((size_t)1 << 16)
#define ERRFLAG_MAX_UNITS ((size_t)1 << 22)

/* Adds the error flag to m (it must not have one). False with a message when a check reads a
 * dim that a later layer writes again (the flag reads every check after the last layer) or the
 * model has a check the flag cannot express (above); m is then unchanged. */
bool errflag_add(Model *m, char *err, size_t errsize);

#endif
