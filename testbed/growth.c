/* Growth classes by least squares (growth.h). */
#include "testbed/growth.h"

#include <math.h>

double tb_growth_f(TbGrowth g, double n) {
    switch (g) {
    case TB_GROWTH_CONST: return 0;
    case TB_GROWTH_LOG: return log2(n);
    case TB_GROWTH_LINEAR: return n;
    case TB_GROWTH_NLOGN: return n * log2(n);
    case TB_GROWTH_SQUARE: return n * n;
    case TB_GROWTH_CUBE: return n * n * n;
    default: return 0;
    }
}

const char *tb_growth_name(TbGrowth g) {
    static const char *const names[] = {"constant", "log n", "n", "n log n", "n^2", "n^3", "too few points"};
    return names[g <= TB_GROWTH_TOO_FEW ? g : TB_GROWTH_TOO_FEW];
}

/* y ~ a + b f over the points, b >= 0; returns the largest |deviation|. */
static double fit_one(TbGrowth g, const double *n, const double *y, size_t k, double *a, double *b) {
    double mf = 0, my = 0;
    for (size_t i = 0; i < k; i++) {
        mf += tb_growth_f(g, n[i]);
        my += y[i];
    }
    mf /= (double)k;
    my /= (double)k;
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < k; i++) {
        double df = tb_growth_f(g, n[i]) - mf;
        sxy += df * (y[i] - my);
        sxx += df * df;
    }
    *b = sxx > 0 && sxy > 0 ? sxy / sxx : 0;
    *a = my - *b * mf;
    double worst = 0;
    for (size_t i = 0; i < k; i++) worst = fmax(worst, fabs(*a + *b * tb_growth_f(g, n[i]) - y[i]));
    return worst;
}

TbGrowthFit tb_growth_fit(const double *n, const double *y, size_t k) {
    TbGrowthFit best = {TB_GROWTH_TOO_FEW, false, 0, 0, 0};
    if (k < 3) return best;
    double scale = 0;
    for (size_t i = 0; i < k; i++) scale = fmax(scale, fabs(y[i]));
    if (scale == 0) scale = 1;
    TbGrowthFit fit[TB_GROWTH_CLASSES];
    for (int g = TB_GROWTH_CONST; g < TB_GROWTH_CLASSES; g++) {
        fit[g].cls = (TbGrowth)g;
        fit[g].error = fit_one((TbGrowth)g, n, y, k, &fit[g].a, &fit[g].b) / scale;
        if (g != TB_GROWTH_CONST && fit[g].b == 0) fit[g].error = INFINITY; /* not growing */
        if (best.cls == TB_GROWTH_TOO_FEW || fit[g].error < best.error) best = fit[g];
    }
    /* Flat up to the last n, then a jump: one point carries no growth class (any steep f fits
     * it), so that is the constant fit, flagged by its error. */
    bool flat_before_last = k > 3;
    for (size_t i = 1; i + 1 < k; i++) flat_before_last = flat_before_last && y[i] == y[0];
    if (flat_before_last) best = fit[TB_GROWTH_CONST];
    for (int g = TB_GROWTH_CONST; g < (int)best.cls; g++) /* the simplest within the tie margin */
        if (fit[g].error <= best.error + TB_GROWTH_TIE) {
            best = fit[g];
            break;
        }
    best.fits = best.error <= TB_GROWTH_TOL;
    return best;
}
