/* The forward pass of a compiled model (runtime/model.h describes the machine), and running it
 * on one input: tokenize, forward, checks, readout.
 *
 * Residual X is (n+1) x D, row-major; row 0 is BOS (position 0), input token i sits in row i+1
 * (position i+1). Attention is average-hard: for query i the keys whose score is at least
 * max - tie_tol are averaged, with the head's absolute tolerance (ModelHead.tie_tol).
 *
 * Dense products go through CBLAS. Compiled weights are very sparse: most matrices read or
 * write only a few residual directions. A Workspace therefore precomputes, per weight matrix,
 * the residual rows it reads (Wq, Wk, Wv, W1) or the residual columns it writes (Wo, W2), packed
 * densely, so each product touches only those; `sparse = false` runs the plain dense products
 * (the two agree up to floating-point summation order). */
#ifndef RASPCC_RUNTIME_FORWARD_H
#define RASPCC_RUNTIME_FORWARD_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/model.h"
#include "support/arena.h"

/* A block must be within this of one-hot (entries near 0, exactly one near 1). Mixing k
 * different one-hot values gives entries at most 1 - 1/(max_len+1) away, so any small constant
 * separates them; compiled weights reproduce one-hot vectors to ~1e-12. */
#define MODEL_ONEHOT_TOL 1e-6

/* Every error of a failed margin check (MODEL_CHECK_MARGIN, runtime/model.h) starts with this,
 * and no other error does: "within the margin: s-op WHAT is V at position P, within M of the
 * threshold C it is compared with; the model cannot decide the comparison exactly". The verify
 * tooling classifies such refusals apart from disagreements (verify/verify.h VERIFY_MARGIN). */
#define MODEL_MARGIN_ERROR "within the margin"

/* The residual directions one weight matrix touches, with those rows (or columns) packed. */
typedef struct SparsePlan {
    size_t n;       /* touched residual directions */
    size_t *dims;   /* their indices, ascending */
    double *packed; /* reads: n x cols (rows dims of W); writes: rows x n (columns dims of W) */
} SparsePlan;

typedef struct HeadPlan { SparsePlan q, k, v, o; } HeadPlan;
typedef struct MlpPlan { SparsePlan w1, w2, w3; SparsePlan b2; /* b2: non-zero entries; w3: gated only */ } MlpPlan;

/* Scratch for one forward pass at any length up to max_len, allocated once. */
typedef struct Workspace {
    size_t rows;      /* max_len + 1 */
    double *X;        /* rows x D: the residual stream (model_run's) */
    double *gathered; /* rows x (widest read plan): X restricted to the directions a matrix reads */
    double *Q, *K;    /* rows x max dk */
    double *V;        /* rows x max dv */
    double *A;        /* rows x (largest sum of dv over a layer's heads): attention outputs */
    double *S;        /* rows x rows: attention scores */
    double *H;        /* rows x max MLP hidden width */
    double *G;        /* rows x max hidden width of a gated MLP: the multipliers X W3 + b3 */
    double *T;        /* rows x (widest write plan): an output before it is scattered into X */
    double *token_values; /* rows: values of real-valued tokens, filled by model_tokenize */
    bool sparse;      /* use the plans (default true) */
    HeadPlan **heads; /* heads[l][h] */
    MlpPlan *mlps;    /* mlps[l] */
    Arena arena;      /* plans */
    double *block;    /* the one allocation holding the buffers above */
} Workspace;

/* Fails (with a message, never aborting) when the buffers would be unreasonably large. */
bool workspace_init(Workspace *ws, const Model *m, char *err, size_t errsize);
void workspace_free(Workspace *ws);

/* Maps input atoms to token ids (converted as the program's token type requires); for a model
 * with real-valued tokens also writes each token's value to values[i] (values may be NULL
 * otherwise). Errors: "input has length N > max length M", "token 'x' is not in the
 * vocabulary", "token x is outside the range", conversion errors. */
bool model_tokenize(const Model *m, const Value *input, size_t n, size_t *ids, double *values, char *err,
                    size_t errsize);

/* Runs layers [first_layer, end_layer) on X ((n+1) x D). When first_layer is 0, X is first set
 * to the embedding of ids (and, for real-valued tokens, ws->token_values); otherwise X must hold
 * the residual after layer first_layer-1. */
void model_forward(const Model *m, const size_t *ids, size_t n, size_t first_layer, size_t end_layer, double *X,
                   Workspace *ws);

/* Tokenizes, runs every layer (applying the model's checks after their layers, in their order)
 * and reads the output: n atoms allocated in out_arena. Errors name the position (0-based, BOS
 * excluded); a failed margin check's starts with MODEL_MARGIN_ERROR. */
bool model_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *out_arena, Value **out,
               char *err, size_t errsize);

/* Reads the output atom of one final residual row x (position pos, 0-based, BOS excluded, of an
 * input of length n_input) by the readout contract of runtime/model.h: categorical = the value
 * of the one-hot output block, numerical = x . out_readout decoded against the value set of
 * inputs of length n_input (model_output_values: out_values, or the per-length range when the
 * model has per-length value sets) with the margin and the kind block, or the float itself when
 * out_values is empty. Strings of the atom point into the model. */
bool model_read_output(const Model *m, const double *x, size_t pos, size_t n_input, Value *out, char *err,
                       size_t errsize);

/* Whether the block [dim, dim+count) of row x is one-hot within MODEL_ONEHOT_TOL; *hot gets the
 * index (within the block) of the 1. */
bool model_block_one_hot(const double *x, size_t dim, size_t count, size_t *hot);

#endif
