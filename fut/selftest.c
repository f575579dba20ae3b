/* selftest: draw random targets, program the backbone, compare UT(X, E) with T(X). */
#include "fut/selftest.h"

#include <math.h>
#include <stdio.h>

bool fut_selftest(const FutSelftestOptions *o, FutSelftestResult *r, char *err, size_t errsize) {
    Arena a;
    arena_init(&a);
    FutBackbone b;
    bool ok;
    switch (o->kind) {
    case FUT_SPARSE: ok = fut_backbone_sparse(&a, o->L, o->H, o->d, o->residual, o->causal, &b, err, errsize); break;
    case FUT_LOOPED: ok = fut_backbone_looped(&a, o->L, o->H, o->d, o->residual, o->causal, &b, err, errsize); break;
    default:
        ok = fut_backbone_random(&a, o->L, o->H, o->d, o->residual, o->causal, o->m, o->seed ^ 0x5eedULL, &b, err,
                                 errsize);
        break;
    }
    *r = (FutSelftestResult){.m = ok ? b.m : 0, .lower_bound = fut_lower_bound(o->L, o->H, o->d, o->residual),
                             .min_cond = INFINITY};
    FutRng rng;
    fut_rng_seed(&rng, o->seed);
    size_t n = o->n ? o->n : 6, inputs = o->inputs ? o->inputs : 4;
    for (size_t t = 0; ok && t < o->trials; t++) {
        Arena ta;
        arena_init(&ta);
        FutTarget target;
        fut_target_random(&ta, &rng, o->L, o->H, o->d, o->residual, o->causal, &target);
        FutMat E;
        FutSolveInfo info;
        ok = fut_embed(&ta, &b, &target, &E, &info, err, errsize);
        if (ok && o->kind == FUT_RANDOM) {
            r->columns = info.columns;
            if (info.cond > r->max_cond) r->max_cond = info.cond;
            if (info.cond < r->min_cond) r->min_cond = info.cond;
        }
        for (size_t k = 0; ok && k < inputs; k++) {
            FutMat X = fut_mat_new(&ta, n, o->d);
            for (size_t i = 0; i < n * o->d; i++) X.data[i] = fut_rng_gauss(&rng);
            FutMat want = fut_target_forward(&ta, &target, X);
            FutMat got = fut_backbone_forward(&ta, &b, E, X);
            double e = fut_mat_max_abs_diff(want, got);
            if (!(e <= r->max_abs_error)) r->max_abs_error = e;
            double s = fut_mat_max_abs(want);
            if (s > r->max_output) r->max_output = s;
        }
        arena_free(&ta);
    }
    if (o->kind != FUT_RANDOM || !isfinite(r->min_cond)) r->min_cond = r->max_cond;
    arena_free(&a);
    return ok;
}
