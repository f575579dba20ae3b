/* Match2 and k-PARITY as single-layer attentions T = (A, V) with entries in [-2, 2], their
 * inputs, readouts and true answers (sim/sim.h describes the constructions). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#define SIM_PI 3.14159265358979323846

enum { SCORE = 8 }; /* the score of a match: entries 2 of X, 2 of A and 2 of X */

/* Match2: the smallest c_i possible with a match, over every input of n tokens: one matching
 * key (weight e^8, value 1) and c other keys all at one non-matching value u (weight e^(8u));
 * keys sharing the worst u are the worst case (for a weighted mean whose weights depend on the
 * values, each key's best choice at the optimum is the same u). */
static double match2_low(int M, size_t n) {
    double low = 1;
    for (size_t c = 0; c < n; c++)
        for (int m = 1; m < M; m++) {
            double u = cos(2 * SIM_PI * m / M), w = (double)c * exp(SCORE * (u - 1));
            low = fmin(low, (1 + w * u) / (1 + w));
        }
    return low;
}

/* k-PARITY: the attention mass off S, at most (n - k) e^-8 / (k e^8 + (n - k) e^-8). */
static double parity_off_mass(size_t n, size_t k) {
    double off = (double)(n - k) * exp(-2.0 * SCORE);
    return off / ((double)k + off);
}

bool sim_task_build(SimTask *t, char *err, size_t errsize) {
    if (t->n < 1 || t->n > SIM_MAX_N) {
        snprintf(err, errsize, "n must be 1..%d, not %zu", SIM_MAX_N, t->n);
        return false;
    }
    size_t d = t->d;
    memset(t->A, 0, sizeof t->A);
    memset(t->V, 0, sizeof t->V);
    if (t->kind == SIM_MATCH2) {
        if (t->M < 2 || t->M > 64) {
            snprintf(err, errsize, "Match2's modulus M must be 2..64, not %d", t->M);
            return false;
        }
        if (d < 2 || d > SIM_MAX_D) {
            snprintf(err, errsize, "Match2 needs 2 <= d <= %d, not %zu", SIM_MAX_D, d);
            return false;
        }
        t->A[0] = 2, t->A[d + 1] = -2;
        t->V[0] = 1, t->V[d + 1] = -1;
        double high = cos(2 * SIM_PI / t->M), low = match2_low(t->M, t->n);
        if (!(low > high + 1e-3)) {
            snprintf(err, errsize,
                     "Match2 with M = %d and n = %zu: with entries in [-2, 2], T's readout cannot tell a match "
                     "(worst %.4f) from none (up to %.4f)", t->M, t->n, low, high);
            return false;
        }
        t->threshold = (low + high) / 2;
        t->margin = (low - high) / 2;
        return true;
    }
    if (t->k < 1 || t->k > t->n) {
        snprintf(err, errsize, "k-PARITY needs 1 <= k <= n, not k = %zu, n = %zu", t->k, t->n);
        return false;
    }
    if (d != t->n + 1 || d > SIM_MAX_D) {
        snprintf(err, errsize, "k-PARITY on %zu bits needs d = n + 1 = %zu (at most %d)", t->n, t->n + 1, SIM_MAX_D);
        return false;
    }
    bool in_s[SIM_MAX_N] = {false};
    for (size_t i = 0; i < t->k; i++) {
        if (t->positions[i] >= t->n || in_s[t->positions[i]]) {
            snprintf(err, errsize, "k-PARITY's positions must be distinct and below n = %zu", t->n);
            return false;
        }
        in_s[t->positions[i]] = true;
    }
    for (size_t a = 0; a < t->n; a++)
        for (size_t s = 0; s < t->n; s++) t->A[(1 + a) * d + 1 + s] = in_s[s] ? 2 : -2;
    t->V[0] = 1;
    t->threshold = 0;
    t->margin = 0.5 - (double)t->k * parity_off_mass(t->n, t->k);
    return true;
}

void sim_task_tokens(const SimTask *t, SimRng *rng, int *tokens) {
    for (size_t i = 0; i < t->n; i++)
        tokens[i] = (int)sim_rng_below(rng, t->kind == SIM_MATCH2 ? (size_t)t->M : 2);
}

void sim_task_encode(const SimTask *t, const int *tokens, double *X) {
    size_t d = t->d;
    memset(X, 0, t->n * d * sizeof *X);
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind == SIM_MATCH2) {
            double angle = 2 * SIM_PI * tokens[i] / t->M;
            X[i * d] = 2 * cos(angle);
            X[i * d + 1] = 2 * sin(angle);
        } else {
            X[i * d] = tokens[i];
            X[i * d + 1 + i] = 2;
        }
    }
}

void sim_task_readout(const SimTask *t, const double *X, const double *TX, int *answers, double *slack) {
    size_t d = t->d;
    double least = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        const double *x = X + i * d, *y = TX + i * d;
        if (t->kind == SIM_MATCH2) {
            /* c = sum_j P_ij cos(t_i + t_j); an error e in y's entries moves c by at most
             * (|x0| + |x1|) e / 4 */
            double c = (y[0] * x[0] + y[1] * x[1]) / 4;
            answers[i] = c > t->threshold;
            least = fmin(least, fabs(c - t->threshold) * 4 / (fabs(x[0]) + fabs(x[1])));
        } else {
            double count = (double)t->k * y[0];
            double nearest = round(count);
            answers[i] = (int)fmod(fabs(nearest), 2.0);
            least = fmin(least, (0.5 - fabs(count - nearest)) / (double)t->k);
        }
    }
    if (slack) *slack = least;
}

void sim_task_truth(const SimTask *t, const int *tokens, int *answers) {
    if (t->kind == SIM_MATCH2) {
        sim_match2(tokens, t->n, t->M, answers);
        return;
    }
    int parity = sim_parity(tokens, t->n, t->positions, t->k);
    for (size_t i = 0; i < t->n; i++) answers[i] = parity;
}
