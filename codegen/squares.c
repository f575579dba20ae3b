/* Squares by depth: u^2 to a fine spacing h in a few small MLPs instead of one wide one.
 *
 * A ReLU MLP of one layer approximates u^2 by its chords I_h(u) through knots h apart (error
 * h^2 / 4, one unit per knot: mlp.c product_units). A spacing fine enough for a product within
 * 1e-10 takes about a million units. Depth does it with a few hundred (Yarotsky 2017, "Error
 * bounds for approximations with deep ReLU networks", in base K rather than 2):
 *
 *   I_h(u) - I_{h/K}(u) = h^2 psi(tri(u / h)),   psi(t) = t - I_{1/K}(t^2)  on [0, 1],
 *
 * where tri(v) is the distance from v to the nearest even integer (the difference of the two
 * interpolants is the same bump on every piece, and psi(t) = psi(1 - t)), and
 * tri(K tri(v)) = tri(K v) for an integer K. So with h_s = h_1 / K^(s-1):
 *
 *   level 0 (layer L):     I_{h_1}(u)                and  w_1 = tri(u / h_1)
 *   level s (layer L + s): - h_s^2 psi(w_s)          and  w_{s+1} = tri(K w_s)  (not at the last)
 *
 * and the levels add up to I_{h_D}(u), D = depth: the chords at the finest spacing h = h_D, every
 * function on the way piecewise linear with its kinks on knots (exact up to float64 rounding).
 * Each level adds its part to the product's own residual dim; the w_s are dims of their own.
 *
 * This file is the arithmetic both sides share: reals.c bounds the product with it, mlp.c writes
 * the units. No Plan, no other pass. */
#include <float.h>
#include <math.h>

#include "codegen/internal.h"

/* float64 rounding of `ops` operations on values of magnitude mag (as reals.c's rounding) */
static double rounding(double mag, double ops) { return 4 * ops * DBL_EPSILON * fmax(mag, DBL_MIN); }

SquareLevels square_levels(double U, double tol, bool deep) {
    double h = 2 * sqrt(tol), steps = ceil(U / h);
    SquareLevels sq = {1, h, h, 1};
    if (!deep || !(steps > SQ_ONE_LAYER_STEPS)) return sq;
    /* chords finer than the squares' own float64 rounding (a few ulps of U^2 per term) only add
     * levels: a layer each, and a worse bound (out23b-003: x * x at --tol 1e-25 took 5 layers
     * for 4.11e-13 where 3 gave 4.08e-13) */
    steps = fmin(steps, ceil(U / (2 * sqrt(16 * DBL_EPSILON * U * U))));
    /* the fewest levels that reach h, each as fine as it goes: finer than asked at no cost in
     * layers (a product by depth is then within float64's rounding of its factors' product, and
     * the share of --tol goes to the functions that need units). Level 0 stays coarse, its
     * sawtooth's rounding grows with the cube of its knots. */
    for (int depth = 2; depth <= SQ_MAX_DEPTH; depth++) {
        if (SQ_FIRST_STEPS * pow(SQ_REFINE, depth - 1) < steps) continue;
        sq.depth = depth;
        sq.k = SQ_REFINE;
        sq.h1 = U / SQ_FIRST_STEPS;
        sq.h = sq.h1 / pow(SQ_REFINE, depth - 1);
        return sq;
    }
    sq.depth = 0; /* too fine even with SQ_MAX_DEPTH levels */
    return sq;
}

/* The rounding of a sawtooth of n teeth summed from its first knot (tri over [0, n] in units of
 * its step, values in [0, 1]): its terms' magnitudes add up to n^2 (n at the first unit, 2 (n - i)
 * at unit i), and every unit's input error in_err (in the step's units) goes out times its slope
 * change (2 n in all). */
static double sawtooth_rounding(double n, double in_err) { return rounding(n * n, n + 8) + 2 * n * in_err; }

double square_levels_rounding(const SquareLevels *sq, double U) {
    if (sq->depth <= 1) return 0;
    double K = sq->k, n0 = ceil(U / sq->h1);
    /* w_1 = tri(u / h_1): a unit per knot each way from 0 (the other way's all exactly 0 but the
     * first), each input rounded by a few ulps of 2 U (as the chords', reals.c squares_rounding) */
    double delta = sawtooth_rounding(n0 + 1, rounding(2 * U, 2) / sq->h1);
    double total = 0, h = sq->h1;
    for (int s = 1; s < sq->depth; s++) {
        /* level s reads w_s in [-delta, 1 + delta]: psi is 1-Lipschitz, and the later levels
         * read it through tri(K .) (slope K) at h^2 / K^2 the weight: delta K / (K - 1) in all;
         * psi's own terms (slope 1 - 1 / K, then 2 / K less at each knot) add up to at most 3 */
        double in_err = rounding(2, 2);
        double psi = rounding(3, K + 8) + 3 * in_err;
        total += h * h * (delta * K / (K - 1) + psi);
        delta = sawtooth_rounding(K + 1, in_err * K); /* w_{s+1} = tri(K w_s) */
        h /= K;
    }
    /* the residual adds the product's dim up `depth` times (|u^2| <= U^2 + tol) */
    return total + rounding(U * U + sq->h * sq->h, sq->depth);
}
