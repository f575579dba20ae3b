/* The component programs of rasp_examples/simulator against the mathematics (sim/sim.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"

static const char *const names[SIM_PROG_COUNT] = {"transpose", "matmul", "softmax", "relu",     "maxmin",
                                                  "inverse",   "match2", "parity",  "attention"};
/* the s-op each program outputs, which the model records */
static const char *const outputs[SIM_PROG_COUNT] = {"transposed", "product", "softmax", "relu",     "maxmin",
                                                    "inverse",    "match2",  "parity",  "attention"};

const char *sim_program_name(SimProgram p) { return p < SIM_PROG_COUNT ? names[p] : "?"; }

bool sim_program_parse(const char *name, SimProgram *p) {
    for (int i = 0; i < SIM_PROG_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *p = (SimProgram)i;
            return true;
        }
    return false;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One input: its tokens, the length, and what the mathematics says (want), or that it raises. */
typedef struct Case {
    double *tokens, *want;
    size_t len;
    bool ints;
    bool raises;      /* the mathematics has no answer (a singular matrix) */
    double gap;       /* the program's own distance from the mathematics, beyond the model's bound */
} Case;

/* The determinant of a 3 x 3 integer matrix, exactly. */
static long long det3(const double *m) {
    long long a[9];
    for (int i = 0; i < 9; i++) a[i] = (long long)m[i];
    return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
}

static double vocab_number(const Model *m, SimRng *rng) {
    return value_as_double(m->vocab[sim_rng_below(rng, m->n_vocab)]);
}

/* Draws case c for program p; false (with a message) when the model cannot take the program's
 * inputs. */
static bool draw(const Model *m, SimProgram p, double d, SimRng *rng, Case *c, char *err, size_t errsize) {
    size_t N = m->max_len, dd = (size_t)d;
    c->raises = false;
    c->gap = 0;
    c->ints = !m->numeric_tokens;
    switch (p) {
    case SIM_PROG_TRANSPOSE: case SIM_PROG_MATMUL: {
        size_t base = p == SIM_PROG_MATMUL ? dd * dd : 0;
        if (N < base + dd) {
            snprintf(err, errsize, "max length %zu holds no row of width d = %zu", N, dd);
            return false;
        }
        size_t rows = 1 + sim_rng_below(rng, (N - base) / dd);
        c->len = rows * dd + base;
        break;
    }
    case SIM_PROG_INVERSE:
        if (N < 9) {
            snprintf(err, errsize, "the inverse takes 9 tokens; the model's max length is %zu", N);
            return false;
        }
        c->len = 9;
        break;
    default: c->len = 1 + sim_rng_below(rng, N); break;
    }
    for (size_t i = 0; i < c->len; i++)
        c->tokens[i] = c->ints ? vocab_number(m, rng) : sim_rng_uniform(rng, m->token_lo, m->token_hi);
    /* float64 rounding in another order than the program's (a few ulps) */
    double ulps = 64 * DBL_EPSILON;
    switch (p) {
    case SIM_PROG_TRANSPOSE: sim_transpose(c->tokens, c->len / dd, dd, c->want); break;
    case SIM_PROG_MATMUL: {
        size_t rows = (c->len - dd * dd) / dd;
        sim_matmul(c->tokens, c->tokens + rows * dd, rows, dd, dd, c->want);
        for (size_t i = rows * dd; i < c->len; i++) c->want[i] = 0;
        c->gap = ulps * 4 * d;
        break;
    }
    case SIM_PROG_SOFTMAX: sim_softmax_rows(c->tokens, c->len, dd, c->want); c->gap = ulps; break;
    case SIM_PROG_RELU: sim_relu(c->tokens, c->len, c->want); break;
    case SIM_PROG_MAXMIN: sim_maxmin_pairs(c->tokens, c->len, c->want); break;
    case SIM_PROG_INVERSE: {
        /* the program raises exactly when det = 0; LAPACK's rounding at these small integer
         * matrices stays far below 1e-9 (1 + |value|) */
        if (det3(c->tokens) == 0 || !sim_inverse(c->tokens, 3, c->want)) c->raises = true;
        c->gap = 1e-9;
        break;
    }
    case SIM_PROG_MATCH2: {
        int x[SIM_MAX_N * 4], out[SIM_MAX_N * 4];
        for (size_t i = 0; i < c->len; i++) x[i] = (int)c->tokens[i];
        sim_match2(x, c->len, (int)d, out);
        for (size_t i = 0; i < c->len; i++) c->want[i] = out[i];
        break;
    }
    case SIM_PROG_PARITY: {
        size_t pos[SIM_MAX_N];
        size_t k = sim_program_list(m->program_source, "positions", pos, SIM_MAX_N);
        int x[SIM_MAX_N * 4];
        for (size_t i = 0; i < c->len; i++) x[i] = (int)c->tokens[i];
        int parity = sim_parity(x, c->len, pos, k);
        for (size_t i = 0; i < c->len; i++) c->want[i] = parity;
        break;
    }
    default: break;
    }
    return true;
}

bool sim_check_program(const Model *m, Workspace *ws, SimProgram p, size_t inputs, uint64_t seed,
                       const SimProgress *progress, SimCheck *r, char *err, size_t errsize) {
    memset(r, 0, sizeof *r);
    r->min_slack = INFINITY;
    if (!m->output_name || strcmp(m->output_name, outputs[p]) != 0) {
        snprintf(err, errsize, "the model outputs '%s', not '%s': it was not compiled from %s.rasp",
                 m->output_name ? m->output_name : "?", outputs[p], names[p]);
        return false;
    }
    if (p == SIM_PROG_ATTENTION) {
        SimUProgram u;
        return sim_u_program(m, &u, err, errsize) && sim_check_u_random(m, ws, &u, inputs, seed, progress, r, err, errsize);
    }
    if ((p == SIM_PROG_MATCH2 || p == SIM_PROG_PARITY || p == SIM_PROG_INVERSE) == m->numeric_tokens) {
        snprintf(err, errsize, "%s takes %s tokens; the model was compiled %s", names[p],
                 m->numeric_tokens ? "integer" : "real-valued", m->numeric_tokens ? "with --range" : "with --vocab");
        return false;
    }
    if (m->max_len > SIM_MAX_N * 4) {
        snprintf(err, errsize, "this tool checks models of max length up to %d, not %zu", SIM_MAX_N * 4, m->max_len);
        return false;
    }
    /* the constant the program was compiled with: d (rows), M (Match2) */
    const char *constant = p == SIM_PROG_MATCH2 ? "M" : "d";
    double d = 0;
    bool needs = p == SIM_PROG_TRANSPOSE || p == SIM_PROG_MATMUL || p == SIM_PROG_SOFTMAX || p == SIM_PROG_MATCH2;
    if (needs && (!sim_program_number(m->program_source, constant, &d) || d < 1 || d != floor(d))) {
        snprintf(err, errsize, "the model's program assigns no literal %s: it is not %s.rasp", constant, names[p]);
        return false;
    }
    size_t pos[SIM_MAX_N];
    if (p == SIM_PROG_PARITY && sim_program_list(m->program_source, "positions", pos, SIM_MAX_N) == 0) {
        snprintf(err, errsize, "the model's program assigns no literal list of positions: it is not parity.rasp");
        return false;
    }
    double tokens[SIM_MAX_N * 4], want[SIM_MAX_N * 4], got[SIM_MAX_N * 4];
    Case c = {.tokens = tokens, .want = want};
    Arena scratch;
    arena_init(&scratch);
    SimRng rng;
    sim_rng_seed(&rng, seed);
    bool ok = true;
    for (size_t in = 0; ok && in < inputs; in++) {
        if (!(ok = draw(m, p, d, &rng, &c, err, errsize))) break;
        char why[256];
        double t0 = now_seconds();
        bool ran = sim_run(m, ws, c.tokens, c.len, c.ints, got, &scratch, why, sizeof why);
        r->seconds += now_seconds() - t0;
        r->runs++;
        if (progress) progress->fn(progress->ctx, in + 1, inputs);
        if (c.raises || !ran) {
            if (c.raises && !ran) r->raised++;
            else if (r->over_bound++ == 0)
                snprintf(r->first_failure, sizeof r->first_failure, "input %zu (length %zu): %s", in, c.len,
                         ran ? "the model answers where the mathematics has no answer" : why);
            continue;
        }
        for (size_t i = 0; i < c.len; i++) {
            double allowed = sim_model_bound(m, fabs(want[i])) + c.gap * (1 + fabs(want[i]));
            double e = fabs(got[i] - want[i]);
            r->max_error = fmax(r->max_error, e);
            r->max_allowed = fmax(r->max_allowed, allowed);
            if (!(e <= allowed) && r->over_bound++ == 0)
                snprintf(r->first_failure, sizeof r->first_failure,
                         "input %zu (length %zu), position %zu: the model gives %.17g, the mathematics %.17g "
                         "(allowed %.3g)", in, c.len, i, got[i], want[i], allowed);
        }
    }
    arena_free(&scratch);
    return ok;
}
