/* Bounds on a model's residual over every input, tighter than model_value_bounds
 * (runtime/precision.h) where an MLP builds a function of one quantity from several units.
 *
 * model_value_bounds bounds |x_d| unit by unit, so a step built from two steep units (a
 * comparison of real values: 5e5 ReLU(x + 1e-6) - 5e5 ReLU(x - 1e-6)) counts as 1e6 where it is
 * 1. model_tighten_bounds propagates signed intervals [lo, hi] over every row (BOS included)
 * through the embedding, each head (a mean of selected values lies within their span) and each
 * MLP, where the hidden units that read one functional G (up to a factor) are one
 * piecewise-linear function of G: its range on G's interval is its range at the interval's ends
 * and its breakpoints. Units of a gated layer, and groups too large to evaluate point by point,
 * count unit by unit. The bounds are of the exact residual (as model_value_bounds'), widened by
 * 2^-40 of the magnitudes summed for the rounding of the evaluation itself. Used by the error
 * flag (codegen/errflag.c) for the integers a real-valued output read as an int may reach. */
#ifndef RASPCC_RUNTIME_RANGES_H
#define RASPCC_RUNTIME_RANGES_H

#include "runtime/model.h"

/* bound[d] (D entries, on entry a bound on |x_d| such as model_value_bounds gives) becomes the
 * smaller of itself and the bound of the analysis above. */
void model_tighten_bounds(const Model *m, double *bound);

#endif
