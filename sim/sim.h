/* The universal simulator U (rasp_examples/simulator/attention.rasp) seen from outside: the
 * mathematics the simulator programs must reproduce, computed directly in float64; the
 * single-layer attentions T that solve Match2 and k-PARITY, with their inputs, readouts and true
 * answers; U's input encoding; and running a compiled model on numeric tokens.
 *
 * Matrices are row-major float64 arrays owned by the caller. Nothing here prints, allocates
 * behind the caller's back (except sim_run, which uses the arena it is given) or aborts.
 * tools/raspsim.c and tests/test_simulator.c are the users. */
#ifndef RASPCC_SIM_SIM_H
#define RASPCC_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/value.h"
#include "runtime/forward.h"
#include "runtime/model.h"
#include "support/arena.h"

enum {
    SIM_MAX_D = 16, /* widest attention a task builds (k-PARITY: n + 1) */
    SIM_MAX_N = 64  /* most tokens of one task input */
};

/* ---- rng.c: seeded random numbers (splitmix64), the same sequence on every machine ---- */

typedef struct SimRng {
    uint64_t state;
} SimRng;

void sim_rng_seed(SimRng *r, uint64_t seed);
uint64_t sim_rng_next(SimRng *r);
double sim_rng_uniform(SimRng *r, double lo, double hi); /* in [lo, hi), all 53 bits random */
size_t sim_rng_below(SimRng *r, size_t n);              /* in [0, n), n > 0 */

/* ---- reference.c: the mathematics, directly ---- */

/* out (cols x rows) = m^T for m rows x cols. */
void sim_transpose(const double *m, size_t rows, size_t cols, double *out);
/* out (n x m) = a (n x k) b (k x m). */
void sim_matmul(const double *a, const double *b, size_t n, size_t k, size_t m, double *out);
/* The softmax of each row of x (len entries, rows of d; a last shorter row is a row of its
 * own), with the largest entry subtracted first. */
void sim_softmax_rows(const double *x, size_t len, size_t d, double *out);
/* max(x, 0) entrywise. */
void sim_relu(const double *x, size_t len, double *out);
/* Each pair (x[2t], x[2t+1]) in decreasing order; a last unpaired entry stays. */
void sim_maxmin_pairs(const double *x, size_t len, double *out);
/* The inverse of the n x n matrix m (LAPACKE dgetrf + dgetri); false when m is singular. */
bool sim_inverse(const double *m, size_t n, double *out);
/* T(X) = softmax(X A X^T) X V for X (n x d), A and V (d x d): out is n x d; rows of the score
 * matrix are shifted by their maximum before exp. */
void sim_attention(const double *X, size_t n, size_t d, const double *A, const double *V, double *out);
/* Match2 with modulus M: out[i] = 1 when some j (j = i allowed) has x[i] + x[j] = 0 mod M. */
void sim_match2(const int *x, size_t n, int M, int *out);
/* The parity of the bits at positions pos[0..k) (positions >= n count as 0). */
int sim_parity(const int *bits, size_t n, const size_t *pos, size_t k);

/* ---- tasks.c: single-layer attentions that solve Match2 and k-PARITY ----
 *
 * Entries of X, A and V stay within [-2, 2] (U's --range), so that U reads them.
 * Match2 (modulus M, n tokens in 0..M-1), any d >= 2: token x -> X row (2 cos t, 2 sin t, 0...),
 *   t = 2 pi x / M; A = 2 diag(1, -1, 0...), so the score of keys j for query i is
 *   8 cos(t_i + t_j), largest (8) exactly at the matches; V = diag(1, -1, 0...), so the value of
 *   key j is 2 (cos t_j, -sin t_j). Readout at i: c_i = T(X)[i][0..1] . (cos t_i, sin t_i) / 2 =
 *   sum_j P_ij cos(t_i + t_j), which is at most cos(2 pi / M) without a match and at least the
 *   `low` of sim_task_build with one; the answer is c_i > threshold, their midpoint.
 * k-PARITY (n bits, k distinct positions S), d = n + 1: bit b at position j -> X row
 *   (b, 2 e_j); A[1 + a][1 + s] = 2 for s in S and -2 for s not in S (every a), so every query
 *   scores +8 on the keys in S and -8 elsewhere; V = e_0 e_0^T, the value of key j is (b_j, 0...).
 *   T(X)[i][0] = sum_j P_ij b_j, the mean of the bits in S up to the mass off S
 *   (<= (n - k) e^-16 / k); readout at every i: round(k T(X)[i][0]) mod 2. */

typedef enum SimTaskKind { SIM_MATCH2, SIM_PARITY } SimTaskKind;

typedef struct SimTask {
    SimTaskKind kind;
    size_t n;                      /* tokens per input */
    size_t d;                      /* width of X, A and V */
    int M;                         /* Match2: the modulus, 2..64 */
    size_t k;                      /* k-PARITY: how many positions */
    size_t positions[SIM_MAX_N];   /* k-PARITY: the positions, distinct, < n */
    /* filled by sim_task_build */
    double A[SIM_MAX_D * SIM_MAX_D], V[SIM_MAX_D * SIM_MAX_D];
    double threshold;              /* Match2: the readout's threshold */
    double margin;                 /* half the gap the readout decides across: Match2
                                      (low - cos(2 pi / M)) / 2; k-PARITY 1/2 - k * (mass off S) */
} SimTask;

/* Checks the parameters and builds A, V and the readout. Refuses (with a message) sizes whose T
 * does not separate the answers with entries in [-2, 2] (Match2 when the worst case with a
 * match is not above cos(2 pi / M)), a d too small or above SIM_MAX_D, n above SIM_MAX_N. */
bool sim_task_build(SimTask *t, char *err, size_t errsize);
/* n random tokens: Match2 uniform in 0..M-1, k-PARITY uniform bits. */
void sim_task_tokens(const SimTask *t, SimRng *rng, int *tokens);
/* X (n x d) for the tokens. */
void sim_task_encode(const SimTask *t, const int *tokens, double *X);
/* The n answers the readout gives from X and an output TX (n x d) of T, and the smallest
 * distance of the read statistic from the readout's decision boundary (how much error TX could
 * take without changing an answer; may be NULL). */
void sim_task_readout(const SimTask *t, const double *X, const double *TX, int *answers, double *slack);
/* The n true answers. */
void sim_task_truth(const SimTask *t, const int *tokens, int *answers);

/* ---- encode.c: U's input ---- */

/* [X | A | V] row-major: n d + 2 d^2 numbers written to out. */
size_t sim_u_input(const double *X, size_t n, size_t d, const double *A, const double *V, double *out);
/* The input length for n rows of width d. */
static inline size_t sim_u_length(size_t n, size_t d) { return n * d + 2 * d * d; }

/* ---- program.c: the constants a model's program was compiled with ---- */

/* The number NAME is first assigned at the start of a line of the program text (raspcc writes
 * -D NAME=VALUE there); false when there is no such literal assignment. */
bool sim_program_number(const char *source, const char *name, double *value);
/* The list of non-negative ints NAME is first assigned ("[0, 2, 3]"); how many were read (at
 * most max; 0 when none). */
size_t sim_program_list(const char *source, const char *name, size_t *out, size_t max);

/* ---- check.c, programs.c: compiled simulator programs against the mathematics ---- */

/* The outcome of running a model on seeded random inputs against the direct computation. An
 * output entry passes when |model - mathematics| <= the model's stated bound at that value
 * (sim_model_bound) plus the program's own distance from the mathematics (U's clamp of its
 * exponents, float64 rounding in a different order, LAPACK's rounding for the inverse). */
typedef struct SimCheck {
    size_t runs;            /* inputs run through the model */
    size_t raised;          /* inputs the model rejects as the mathematics does (a singular matrix) */
    size_t over_bound;      /* output entries farther from the mathematics than allowed */
    double max_error;       /* the largest |model - mathematics| */
    double max_allowed;     /* the largest error allowed to an entry */
    double min_slack;       /* tasks: the readout's smallest slack on U's outputs (sim_task_readout) */
    double seconds;         /* spent in the model's forward passes */
    char first_failure[512];
} SimCheck;

/* Progress of a long check, for a bar on a terminal (NULL: none). */
typedef struct SimProgress {
    void (*fn)(void *ctx, size_t done, size_t total);
    void *ctx;
} SimProgress;

/* U's constants, from the program a model stores. */
typedef struct SimUProgram {
    size_t d, nmax;
    double floor_gap;
} SimUProgram;

/* Reads d, nmax and floor_gap from m's program; false (with a message) when m is not U or
 * does not take real-valued tokens. */
bool sim_u_program(const Model *m, SimUProgram *u, char *err, size_t errsize);
/* The most rows X can have in an input of the model (min of nmax and what max_len holds). */
size_t sim_u_rows(const Model *m, const SimUProgram *u);

typedef struct SimTaskResult {
    SimCheck u;             /* U's outputs against T(X) computed directly */
    size_t inputs, answers; /* inputs drawn; positions answered (n per input) */
    size_t correct;         /* answers read from U's output equal to the truth */
    size_t target_correct;  /* answers read from T(X) computed directly equal to the truth */
} SimTaskResult;

/* Runs U (m, compiled from attention.rasp) on `inputs` random inputs of task t (built with
 * u's d), seeded: U's output against T(X), its readout against the truth. False (with a
 * message) when the task does not fit the model or the model fails on an input. */
bool sim_check_task(const Model *m, Workspace *ws, const SimUProgram *u, const SimTask *t, size_t inputs,
                    uint64_t seed, const SimProgress *progress, SimTaskResult *r, char *err, size_t errsize);
/* U on random X, A, V with entries uniform in the model's range and 1..sim_u_rows rows. */
bool sim_check_u_random(const Model *m, Workspace *ws, const SimUProgram *u, size_t inputs, uint64_t seed,
                        const SimProgress *progress, SimCheck *r, char *err, size_t errsize);

/* The programs of rasp_examples/simulator, by file name. */
typedef enum SimProgram {
    SIM_PROG_TRANSPOSE, SIM_PROG_MATMUL, SIM_PROG_SOFTMAX, SIM_PROG_RELU, SIM_PROG_MAXMIN,
    SIM_PROG_INVERSE, SIM_PROG_MATCH2, SIM_PROG_PARITY, SIM_PROG_ATTENTION, SIM_PROG_COUNT
} SimProgram;
const char *sim_program_name(SimProgram p); /* "transpose", ... "attention" */
bool sim_program_parse(const char *name, SimProgram *p);
/* Runs m, compiled from program p (its constants read from the stored program), on `inputs`
 * seeded random inputs and compares with the mathematics: real tokens uniform in the model's
 * range (all 53 bits), ints from its vocabulary, lengths the program takes up to max_len. */
bool sim_check_program(const Model *m, Workspace *ws, SimProgram p, size_t inputs, uint64_t seed,
                       const SimProgress *progress, SimCheck *r, char *err, size_t errsize);

/* ---- run.c: a compiled model on numeric tokens ---- */

/* Runs m (workspace ws, made for m) on len tokens (ints when `ints`, else floats) and writes
 * the len outputs as doubles (bools and ints converted). False with the model's message when
 * the input is outside the model's domain or the model raises. Scratch lives in `scratch`,
 * reset before returning. */
bool sim_run(const Model *m, Workspace *ws, const double *tokens, size_t len, bool ints, double *out, Arena *scratch,
             char *err, size_t errsize);
/* The error the model states for an output of reference value v: out_error_bound +
 * out_error_rel |v| (0 for an exact output). */
double sim_model_bound(const Model *m, double v);

#endif
