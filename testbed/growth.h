/* The measured growth class of a size against n: which of constant, log n, n, n log n, n^2,
 * n^3 describes the measurements y(n_1..n_k) best.
 *
 * For each class f, least squares fits y = a + b f(n) with b >= 0 (b = 0 is the constant fit).
 * A fit's error is its largest deviation relative to the largest measurement. The answer is the
 * class with the smallest error, or a simpler one whose error is within TB_GROWTH_TIE of it
 * (n log n and n differ by 3% over 8..256, so "within tolerance" alone would not tell them
 * apart); it fits when its error is at most TB_GROWTH_TOL. Measurements that are flat but for
 * the last (a jump when the compiler changes strategy at the largest n) get the constant class,
 * which then does not fit. Three measurements at least; fewer say "too few". */
#ifndef RASPCC_TESTBED_GROWTH_H
#define RASPCC_TESTBED_GROWTH_H

#include <stdbool.h>
#include <stddef.h>

#define TB_GROWTH_TOL 0.05
#define TB_GROWTH_TIE 0.005

typedef enum TbGrowth {
    TB_GROWTH_CONST, TB_GROWTH_LOG, TB_GROWTH_LINEAR, TB_GROWTH_NLOGN, TB_GROWTH_SQUARE, TB_GROWTH_CUBE,
    TB_GROWTH_CLASSES, TB_GROWTH_TOO_FEW = TB_GROWTH_CLASSES
} TbGrowth;

typedef struct TbGrowthFit {
    TbGrowth cls;
    bool fits;      /* the error is within TB_GROWTH_TOL */
    double error;   /* the chosen fit's largest relative deviation */
    double a, b;    /* y ~ a + b f(n) */
} TbGrowthFit;

TbGrowthFit tb_growth_fit(const double *n, const double *y, size_t k);
/* "constant", "log n", "n", "n log n", "n^2", "n^3", "too few points"; fits = false adds "~". */
const char *tb_growth_name(TbGrowth g);
double tb_growth_f(TbGrowth g, double n);

#endif
