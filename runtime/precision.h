/* Whether a floating-point format is precise enough for a model: a sufficient condition read from
 * the model file alone.
 *
 * The exact machine (runtime/model.h in real arithmetic) takes discrete decisions: which keys a
 * query selects (a tie within the head's tolerance), whether a checked block is one-hot, whether
 * an aggregate selected one key, which value a numerical output decodes to. A computed forward
 * pass takes the same decisions when its error in each decided quantity is below that decision's
 * margin:
 *   - selection: the compiler sets each head's tie tolerance to half the smallest gap between
 *     distinct exact scores (docs/compiler.md, "Aggregates -> heads"), so scores computed within
 *     tol/2 of the exact ones select exactly the exact keys;
 *   - one-hot blocks (checks, the categorical output, kind blocks): exact entries are 0 or 1, or
 *     (mixed) at least 1/(max_len+1) from both, so an error below MODEL_ONEHOT_TOL decides alike;
 *   - single-key checks: the exact variance is 0 or at least 1/4, decided at 1/8;
 *   - numerical outputs: the exact value is a member, decoded within the output's margin.
 * The error of every quantity is bounded by forward error analysis over all inputs at once: per
 * residual dim, a bound B on |x| (interval arithmetic from the embeddings through every layer)
 * and a bound E on |computed x - exact x|; a chain of n fused multiply-adds over entries w_k adds
 * at most gamma_n sum |w_k| (B_k + E_k) (gamma_n = n u / (1 - n u), whatever the order of the
 * sum), each further operation one rounding u, and (when weights are rounded to the format) each
 * weight u |w|. Attention outputs are means of selected values (bounded by them), ReLU is
 * 1-Lipschitz.
 *
 * The bounds hold for any order of evaluating each sum, so a model that passes with the unit
 * roundoff of float64 takes the same decisions whatever the summation order (the runtime's fixed
 * FMA chains or a BLAS's blocked sums): its decoded outputs do not depend on it. Two things are
 * not covered and make a format "not safe": margin checks (their refusals near the boundary of
 * the margin follow the computed value), real-valued outputs (the printed number itself) and the
 * error flag (whether err is exactly 0). */
#ifndef RASPCC_RUNTIME_PRECISION_H
#define RASPCC_RUNTIME_PRECISION_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/model.h"

#define PRECISION_U64 0x1p-53
#define PRECISION_U32 0x1p-24
/* "Far below": every error bound at most this fraction of its margin. */
#define PRECISION_SAFETY 0.5

typedef struct ModelPrecision {
    double u;              /* unit roundoff analysed */
    bool safe;             /* worst <= PRECISION_SAFETY and nothing uncovered */
    double worst;          /* the largest ratio (error bound) / (decision margin) */
    char worst_what[160];  /* which decision that is */
    char uncovered[160];   /* "" or what the analysis does not cover (margin checks, a real output) */
} ModelPrecision;

/* The analysis for unit roundoff u; round_weights when the weights themselves are rounded to the
 * format (float32 copies of float64 weights). */
void model_precision(const Model *m, double u, bool round_weights, ModelPrecision *out);

/* Bounds on the exact residual after the last layer, over every input the model takes: |x_d| <=
 * bound[d] (D entries; the interval part of the analysis above, without rounding). */
void model_value_bounds(const Model *m, double *bound);

#endif
