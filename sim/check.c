/* Compiled simulator programs against the mathematics (sim/sim.h): seeded random inputs, the
 * model's outputs, the direct computation, the stated bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool sim_u_program(const Model *m, SimUProgram *u, char *err, size_t errsize) {
    double d, nmax, gap;
    if (!sim_program_number(m->program_source, "d", &d) || !sim_program_number(m->program_source, "nmax", &nmax) ||
        !sim_program_number(m->program_source, "floor_gap", &gap)) {
        snprintf(err, errsize, "the model's program assigns no literal d, nmax and floor_gap: it is not "
                               "rasp_examples/simulator/attention.rasp");
        return false;
    }
    if (d < 1 || d > SIM_MAX_D || nmax < 1 || nmax > SIM_MAX_N || d != floor(d) || nmax != floor(nmax)) {
        snprintf(err, errsize, "the model's program has d = %g, nmax = %g (this tool takes d <= %d, nmax <= %d)", d,
                 nmax, SIM_MAX_D, SIM_MAX_N);
        return false;
    }
    if (!m->numeric_tokens) {
        snprintf(err, errsize, "the model does not take real-valued tokens (compile it with --range)");
        return false;
    }
    u->d = (size_t)d;
    u->nmax = (size_t)nmax;
    u->floor_gap = gap;
    return true;
}

size_t sim_u_rows(const Model *m, const SimUProgram *u) {
    size_t base = 2 * u->d * u->d;
    if (m->max_len <= base) return 0;
    size_t rows = (m->max_len - base) / u->d;
    return rows < u->nmax ? rows : u->nmax;
}

/* Runs U on X (n x d) with T = (A, V); compares its output with softmax(X A X^T) X V and the zeros
 * after it. Adds to the result; writes U's T(X) to ux. */
static bool run_u(const Model *m, Workspace *ws, const SimUProgram *u, const double *X, size_t n, const double *A,
                  const double *V, double *ux, SimCheck *r, Arena *scratch, char *err, size_t errsize) {
    size_t d = u->d, len = sim_u_length(n, d);
    double *in = malloc(len * sizeof *in), *out = malloc(len * sizeof *out), *tx = malloc(n * d * sizeof *tx),
           *xv = malloc(n * d * sizeof *xv);
    if (!in || !out || !tx || !xv) abort();
    sim_u_input(X, n, d, A, V, in);
    sim_attention(X, n, d, A, V, tx);
    sim_matmul(X, V, n, d, d, xv);
    /* the program clamps exponents at floor_gap below the row maximum: within this of T(X) */
    double wmax = 0;
    for (size_t i = 0; i < n * d; i++) wmax = fmax(wmax, fabs(xv[i]));
    double clamp = 2.0 * (double)u->nmax * wmax * exp(-u->floor_gap);
    double t0 = now_seconds();
    bool ok = sim_run(m, ws, in, len, false, out, scratch, err, errsize);
    r->seconds += now_seconds() - t0;
    r->runs++;
    for (size_t i = 0; ok && i < len; i++) {
        double want = i < n * d ? tx[i] : 0.0, allowed = sim_model_bound(m, fabs(want) + clamp) + clamp;
        double e = fabs(out[i] - want);
        r->max_error = fmax(r->max_error, e);
        r->max_allowed = fmax(r->max_allowed, allowed);
        if (!(e <= allowed)) { /* NaN counts */
            if (r->over_bound++ == 0)
                snprintf(r->first_failure, sizeof r->first_failure,
                         "n = %zu, position %zu: U gives %.17g, softmax(X A X^T) X V is %.17g (allowed %.3g)", n, i,
                         out[i], want, allowed);
        }
    }
    if (ok) memcpy(ux, out, n * d * sizeof *ux);
    free(in);
    free(out);
    free(tx);
    free(xv);
    return ok;
}

bool sim_check_task(const Model *m, Workspace *ws, const SimUProgram *u, const SimTask *t, size_t inputs,
                    uint64_t seed, const SimProgress *progress, SimTaskResult *r, char *err, size_t errsize) {
    memset(r, 0, sizeof *r);
    r->u.min_slack = INFINITY;
    if (t->d != u->d) {
        snprintf(err, errsize, "the task's attention has d = %zu but the model was compiled with d = %zu", t->d, u->d);
        return false;
    }
    if (t->n > sim_u_rows(m, u)) {
        snprintf(err, errsize, "n = %zu rows do not fit the model (nmax = %zu, max length %zu: at most %zu rows)", t->n,
                 u->nmax, m->max_len, sim_u_rows(m, u));
        return false;
    }
    if (m->token_lo > -2 || m->token_hi < 2) {
        snprintf(err, errsize, "the task's entries lie in [-2, 2] but the model's range is [%g, %g]", m->token_lo,
                 m->token_hi);
        return false;
    }
    size_t n = t->n, d = t->d;
    int tokens[SIM_MAX_N], truth[SIM_MAX_N], got[SIM_MAX_N], direct[SIM_MAX_N];
    double *X = malloc(n * d * sizeof *X), *tx = malloc(n * d * sizeof *tx), *ux = malloc(n * d * sizeof *ux);
    if (!X || !tx || !ux) abort();
    Arena scratch;
    arena_init(&scratch);
    SimRng rng;
    sim_rng_seed(&rng, seed);
    bool ok = true;
    for (size_t in = 0; ok && in < inputs; in++) {
        sim_task_tokens(t, &rng, tokens);
        sim_task_encode(t, tokens, X);
        sim_task_truth(t, tokens, truth);
        ok = run_u(m, ws, u, X, n, t->A, t->V, ux, &r->u, &scratch, err, errsize);
        if (!ok) break;
        double slack;
        sim_task_readout(t, X, ux, got, &slack);
        r->u.min_slack = fmin(r->u.min_slack, slack);
        sim_attention(X, n, d, t->A, t->V, tx);
        sim_task_readout(t, X, tx, direct, NULL);
        r->inputs++;
        if (progress) progress->fn(progress->ctx, in + 1, inputs);
        for (size_t i = 0; i < n; i++) {
            r->answers++;
            r->correct += got[i] == truth[i];
            r->target_correct += direct[i] == truth[i];
        }
    }
    arena_free(&scratch);
    free(X);
    free(tx);
    free(ux);
    return ok;
}

bool sim_check_u_random(const Model *m, Workspace *ws, const SimUProgram *u, size_t inputs, uint64_t seed,
                        const SimProgress *progress, SimCheck *r, char *err, size_t errsize) {
    memset(r, 0, sizeof *r);
    r->min_slack = INFINITY;
    size_t rows = sim_u_rows(m, u), d = u->d;
    if (rows == 0) {
        snprintf(err, errsize, "the model's max length %zu holds no row (it needs more than 2 d^2 = %zu)", m->max_len,
                 2 * d * d);
        return false;
    }
    double *X = malloc(rows * d * sizeof *X), *ux = malloc(rows * d * sizeof *ux), A[SIM_MAX_D * SIM_MAX_D],
           V[SIM_MAX_D * SIM_MAX_D];
    if (!X || !ux) abort();
    Arena scratch;
    arena_init(&scratch);
    SimRng rng;
    sim_rng_seed(&rng, seed);
    bool ok = true;
    for (size_t in = 0; ok && in < inputs; in++) {
        size_t n = 1 + sim_rng_below(&rng, rows);
        for (size_t i = 0; i < n * d; i++) X[i] = sim_rng_uniform(&rng, m->token_lo, m->token_hi);
        for (size_t i = 0; i < d * d; i++) A[i] = sim_rng_uniform(&rng, m->token_lo, m->token_hi);
        for (size_t i = 0; i < d * d; i++) V[i] = sim_rng_uniform(&rng, m->token_lo, m->token_hi);
        ok = run_u(m, ws, u, X, n, A, V, ux, r, &scratch, err, errsize);
        if (ok && progress) progress->fn(progress->ctx, in + 1, inputs);
    }
    arena_free(&scratch);
    free(X);
    free(ux);
    return ok;
}
