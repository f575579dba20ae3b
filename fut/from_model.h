/* A compiled RASP model (runtime/model.h) as a FUT target (fut/fut.h), when the model is
 * attention-only: every layer's MLP has no hidden units and b2 = 0.
 *
 * The compiled machine is X_l = X_{l-1} + sum_h AHAT_h(X_{l-1}) with average-hard attention
 * (keys tied with the row maximum are averaged). The target is the residual softmax machine
 * X_l = X_{l-1} + sum_h softmax(beta * S_h) X W_V W_O with the same weights and the scores
 * S_h = (X W_Q)(X W_K)^T multiplied by an inverse temperature beta (stored in W_Q, times
 * sqrt(d_k) to cancel the format's 1/sqrt(d_k)). Width d = the model's residual width D.
 *
 * Why softmax reproduces hard attention: every compiled head scores the keys it selects at one
 * level s_max and every other key (BOS included) at most s_max - 0.5 (table and sum selectors:
 * levels m, m - 0.5 for BOS, <= m - 1 otherwise; index match: q^2 at the selected key, q^2 - 1 at
 * the next, -1 at BOS). So each unselected key gets softmax weight at most exp(-beta/2) relative
 * to a selected one, and the head's output moves by at most n * exp(-beta/2) * max|value|.
 * The default beta = 80 gives exp(-40) = 4.2e-18 per key. docs/fut.md, "From a compiled RASP
 * program", has the numbers measured. */
#ifndef RASPCC_FUT_FROM_MODEL_H
#define RASPCC_FUT_FROM_MODEL_H

#include <stdio.h>

#include "fut/fut.h"
#include "runtime/model.h"

#define FUT_FROM_MODEL_BETA 80.0

/* The target of an attention-only model. L = max(1, layers), H = the most heads of any layer
 * (at least 1; layers with fewer are padded with zero heads, d_k = d_v = 1), d = D, residual;
 * causal iff the model's heads are (all of them, or none: mixed is an error). Errors: a layer
 * with an MLP (named, with its hidden width), beta not finite and > 0, too many layers. The
 * model's runtime checks (one-hot, single key) are not part of the target. */
bool fut_target_from_model(Arena *a, const Model *m, double beta, FutTarget *out, char *err, size_t errsize);

/* Token ids of an input for the model's vocabulary (as the runtime converts them). Errors: too
 * long, a token that does not convert or is not in the vocabulary. Models with real-valued
 * tokens (compiled with --range) are not handled here. */
bool fut_model_token_ids(const Model *m, const Value *input, size_t n, size_t *ids, char *err, size_t errsize);

/* The model's input embedding for token ids (n <= max_len, every id < n_vocab): (n+1) x D,
 * row 0 = BOS, row r = token_embed[ids[r-1]] + pos_embed[r]. */
FutMat fut_model_embedding(Arena *a, const Model *m, const size_t *ids, size_t n);

/* Reads the output s-op from a final residual Y ((n+1) x D) as the runtime does: categorical =
 * the value of the one-hot output block (an error when it is not one-hot), numerical = Y_i .
 * out_readout decoded by model_read_output (the value set of inputs of length n, margin, kind
 * block; the float itself for a real-valued output). n atoms in a. */
bool fut_model_readout(Arena *a, const Model *m, FutMat Y, Value **out, char *err, size_t errsize);

/* Prints X in the inline syntax of `raspfut run`: rows separated by ';', numbers by ','. */
void fut_print_rows(FILE *f, FutMat X);

#endif
