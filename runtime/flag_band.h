/* The error flag's band: where the weights' flag (raspcc --error-flag, codegen/errflag.h) may be
 * set although every check of the runtime passes. docs/model-format.md, "The error flag", states
 * the contract; this header is its one definition, read by the compiler (which builds the flag's
 * ramps inside the band) and by the runtime (which reports an input inside it as a note, not as
 * a disagreement: runtime/forward.h, ModelOutcome.note).
 *
 * The contract, for the runtime's own float64 arithmetic:
 *   - an input the runtime runs and refuses (a check or the readout fails, but for a non-finite
 *     number) has err > 0 at some non-BOS row;
 *   - an input it answers has err = 0.0 at every row, unless at some position a checked value
 *     lies inside the band of its check's boundary, on the passing side:
 *       one-hot blocks (one_hot checks, the categorical output, a kind block): an entry e with
 *         FLAG_BAND_ONEHOT t < |e| <= t or FLAG_BAND_ONEHOT t < |e - 1| <= t (t = MODEL_ONEHOT_TOL);
 *       single_key: a variance in [FLAG_BAND_VARIANCE, 1/8);
 *       a numerical output's decoding: v within margin m of the member it decodes to, but
 *         farther than FLAG_BAND_DECODE m;
 *       a real-valued output read as an int or bool: v within b = error_bound + error_rel |r| of
 *         the integer r nearest it, but farther than b - 2 delta (delta = flag_rounding of the
 *         readout: 0, so no band, for a readout of one dim);
 *       a margin check: m < |v - c| < m + 3 eta for a threshold c (eta = flag_margin_eta).
 * The one_kind check and a real-valued token's range have no band. */
#ifndef RASPCC_RUNTIME_FLAG_BAND_H
#define RASPCC_RUNTIME_FLAG_BAND_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/model.h"

#define FLAG_BAND_ONEHOT 0.25   /* x MODEL_ONEHOT_TOL */
#define FLAG_BAND_VARIANCE 0.0625
#define FLAG_BAND_DECODE 0.25   /* x the output's decoding margin */
#define FLAG_MARGIN_REL 0x1p-20 /* eta's part relative to a margin check's m */

/* How far two float64 evaluations of sum_t coefs[t] x[dims[t]] (each in its own order, fused
 * or not) can differ over every input whose residual satisfies |x_d| <= bound[d]: 0 for a single
 * term whose coefficient is a power of two (both exact), else (4 n + 4) 2^-53 sum_t |coefs[t]|
 * bound[dims[t]] (plus abs_extra, a constant added to the sum, e.g. a threshold). */
double flag_rounding(size_t n, const size_t *dims, const double *coefs, const double *bound, double abs_extra);

/* A margin check's eta: FLAG_MARGIN_REL m plus flag_rounding of its functional with its largest
 * |threshold|. bound: model_value_bounds (runtime/precision.h) of the model without its flag, or
 * with it (the flag's layers write only dims of their own). */
double flag_margin_eta(const ModelMargin *g, const double *bound);

/* Whether an input the runtime answered (X: its n + 1 final rows, row-major, BOS first) lies
 * inside the band above at some position; then a description ("at position 2: s-op x is
 * 1.0000009 within ...") in note. */
bool flag_in_band(const Model *m, const double *X, size_t n, char *note, size_t notesize);

#endif
