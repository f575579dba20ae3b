/* selftest: random targets programmed into one backbone, compared with the targets on random
 * inputs (fut/selftest.c). */
#ifndef RASPCC_FUT_SELFTEST_H
#define RASPCC_FUT_SELFTEST_H

#include "fut/fut.h"

typedef struct FutSelftestOptions {
    FutKind kind;
    size_t L, H, d;
    bool residual;  /* residual targets (and a residual backbone) */
    bool causal;
    size_t trials;  /* targets drawn */
    size_t n;       /* sequence length of each input X; 0 = 6 */
    size_t inputs;  /* inputs X per target; 0 = 4 */
    size_t m;       /* random backbones: width, 0 = default */
    uint64_t seed;
} FutSelftestOptions;

typedef struct FutSelftestResult {
    size_t m, lower_bound, columns; /* columns: N of the matching system (random only) */
    double max_abs_error;           /* over every trial and input */
    double max_cond, min_cond;      /* random only */
    double max_output;              /* largest |T(X)| seen, for scale */
} FutSelftestResult;

/* Runs the sweep. Fails (message in err) only when a backbone cannot be built or programmed;
 * accuracy is the caller's judgement. */
bool fut_selftest(const FutSelftestOptions *o, FutSelftestResult *r, char *err, size_t errsize);

#endif
