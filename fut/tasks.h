/* Two real targets built by hand (fut/tasks.c, docs/fut.md "Match2 and k-PARITY"): single-layer
 * single-head softmax attentions whose output T(X) a fixed readout turns into the answer.
 *
 * Match2 (modulus M): tokens x_1..x_n in Z_M, X row i = one-hot(x_i) (width M). Position i
 *   answers whether some j (j = i allowed) has x_i + x_j = 0 mod M. Residual target,
 *   A = beta * Pi, B = Pi with Pi[a][b] = [a + b = 0 mod M]; readout: max_c T(X)[i][c] > 1.5.
 * k-PARITY (n bits, positions S, |S| = k): X row j = [x_j, 1, e_j] (width n + 2). Non-residual,
 *   A = beta * e_1 (sum_{s in S} e_{2+s})^T (every query puts score beta on the keys in S),
 *   B = e_0 e_0^T; T(X)[i][0] = (1/k) sum_{s in S} x_s; readout round(k T(X)[i][0]) mod 2. */
#ifndef RASPCC_FUT_TASKS_H
#define RASPCC_FUT_TASKS_H

#include "fut/fut.h"

typedef enum FutTaskKind { FUT_TASK_MATCH2, FUT_TASK_PARITY } FutTaskKind;

typedef struct FutTask {
    FutTaskKind kind;
    size_t M;           /* Match2 modulus (>= 2) */
    size_t max_len;     /* Match2: inputs have 1..max_len tokens */
    size_t n, k;        /* k-PARITY: n bits, k of them counted */
    size_t positions[64]; /* k-PARITY: the k positions, distinct, < n */
    double beta;        /* attention sharpness; 0 = default (30 for Match2, 40 for parity) */
} FutTask;

/* Checks the parameters (M in 2..256, n in 1..64, k in 1..n, distinct positions < n). */
bool fut_task_validate(const FutTask *t, char *err, size_t errsize);
/* The hand-built target. */
void fut_task_target(Arena *a, const FutTask *t, FutTarget *out);
/* Draws a random input: tokens (Match2: n tokens in Z_M; parity: n bits) and its X. */
FutMat fut_task_input(Arena *a, const FutTask *t, FutRng *rng, size_t *tokens, size_t *n_out);
/* The answer at position i read from an output Y (T(X) or UT(X, E)). */
int fut_task_readout(const FutTask *t, FutMat Y, size_t i);
/* The true answer at position i, computed combinatorially from the tokens. */
int fut_task_truth(const FutTask *t, const size_t *tokens, size_t n, size_t i);
/* Positions answered: every position for Match2, position 0 for parity. */
size_t fut_task_answers(const FutTask *t, size_t n);

typedef struct FutTaskResult {
    size_t inputs, answers;   /* inputs drawn, positions answered in total */
    size_t ut_correct;        /* answers of the programmed backbone equal to the truth */
    size_t target_correct;    /* answers of the target itself equal to the truth */
    double max_abs_error;     /* max |UT(X,E) - T(X)| */
    double cond;              /* random backbones: condition number of the matching system */
} FutTaskResult;

/* Programs backbone b with the task's target and checks `inputs` random inputs. */
bool fut_task_check(const FutBackbone *b, const FutTask *t, size_t inputs, uint64_t seed, FutTaskResult *r,
                    char *err, size_t errsize);

#endif
