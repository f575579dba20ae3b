/* The error flag (raspcc --error-flag): layers appended to a compiled model whose weights compute
 * one residual dim, `err`, that says at every position whether the runtime's checks fail there,
 * so that a framework running the weights alone (NumPy, PyTorch) sees what rasprun raises.
 *
 * A pass over a finished Model (runtime/model.h), after codegen_compile: it widens the residual
 * by `err` and scratch dims, and appends 1 to 3 layers (docs/model-format.md, "The error flag",
 * states the construction and the contract):
 *   stage A (a layer): heads for the input's length 1/(n+1) (per-length value sets) and, per
 *     one_kind check, whether some position holds a string and whether some holds a number; an
 *     MLP of ReLU ramps of linear functionals of the residual. A failure region that is
 *     unbounded (a tail: an entry above 1 + t, a value above every member) is one unit straight
 *     into err; a bounded one is a clamped bump summed into a scratch dim (`err:raw`, or an
 *     indicator that stage B ANDs); the one_kind AND goes straight into err;
 *   stage B (a layer): dead zones over the scratch dims, err += 2 ReLU(raw - 1/4),
 *     4 ReLU(sum of k indicators - k + 1/2), 64 ReLU(variance - 5/64), the margin checks'
 *     ReLU(m + 2 eta - |v - c|) / eta, and the first half of the integer test below;
 *   stage C (a layer, only for a real-valued output read as an int or bool): the integer test,
 *     on exact distances to the nearest integer (errflag.c, integer_kinds).
 * Every unit that writes err has a positive output weight, so err is a sum of terms >= 0; every
 * unit is switched off at the BOS row, so err and the scratch dims are 0 there.
 *
 * The contract (runtime/flag_band.h; exact for the runtime's float64 arithmetic): an input the
 * runtime runs and refuses has err > 0 at some non-BOS row (>= 1 at a row where a check fails,
 * but for the integer test's and the range tails' own scale); one it answers has err = 0.0 at every
 * row unless a checked value lies inside the flag's band (a stated distance from its check's
 * boundary, on the passing side). Each ramp lies inside that band and reaches 1 on the boundary.
 * Covered: one_hot, single_key, one_kind and margin checks; the output's one-hot test
 * (categorical), decoding, per-length value sets, kind block and kind of the decoded value
 * (numerical); real-valued tokens outside their range (no band). Not covered, and refused or left
 * to the input's encoding: an input longer than max_len or a token outside the vocabulary (no
 * embedding row), a non-finite residual, an unbounded output read as an int whose values the
 * interval analysis (runtime/ranges.h) does not bound by ERRFLAG_MAX_INTEGERS. The one_kind heads assume what the
 * compiler guarantees: a one_kind block that is not one-hot at a position fails another check
 * there (a one_hot or single_key check on the s-op that wrote it). */
#ifndef RASPCC_CODEGEN_ERRFLAG_H
#define RASPCC_CODEGEN_ERRFLAG_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/model.h"

/* Outside a real-valued token's range: err = ReLU(lo - x) / (this x (1 + hi - lo)), and alike
 * above hi (no band: exactly 0 inside). */
#define ERRFLAG_RANGE_RAMP 1e-6
/* An unbounded output read as an int: the flag checks each integer its values can reach. */
#define ERRFLAG_MAX_INTEGERS 4096.0
/* Limits on what the flag adds (refused beyond): residual dims, and hidden units of one layer. */
#define ERRFLAG_MAX_DIMS ((size_t)1 << 16)
#define ERRFLAG_MAX_UNITS ((size_t)1 << 22)

/* Adds the error flag to m (it must not have one). False with a message when a check reads a
 * dim that a later layer writes again (the flag reads every check after the last layer), the
 * model has a check the flag cannot express (above), or the rounding of the flag's sums could
 * reach its dead zones (values too large against their margins); m is then unchanged. */
bool errflag_add(Model *m, char *err, size_t errsize);

#endif
