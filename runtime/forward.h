/* The forward pass of a compiled model (runtime/model.h describes the machine), on one input or
 * a batch of them: tokenize, forward, checks, readout.
 *
 * A batch stacks the residual rows of its sequences (each its BOS row and one row per token) and
 * stores them feature-major (runtime/kernels.h): every weight product runs over the stored
 * entries of each weight column for blocks of KERNEL_BLOCK rows at once, whichever sequences
 * those rows belong to, and each head's attention runs per sequence over that sequence's own
 * rows (the mask). MLPs run a chunk of hidden units at a time, so no buffer grows with the
 * hidden width times the batch.
 *
 * The arithmetic is fixed per element and independent of the batch (runtime/kernels.h): a
 * product's element is one fused multiply-add chain over the stored entries of its weight
 * column in ascending order, starting from +0.0, and then added to whatever it feeds (X += chain,
 * chain + b1, ...), exactly in the order the machine of runtime/model.h states it. So an input
 * gives the same bits alone or in any batch. A BLAS dgemm (the runtime before this one) sums
 * an inner dimension in an order of its own (its micro-kernel's, in blocks), so residuals may
 * differ from it in the last bits; runtime/precision.h shows for a model, when it can, that no
 * decision depends on the order of any sum (docs/benchmarks.md: what was measured). */
#ifndef RASPCC_RUNTIME_FORWARD_H
#define RASPCC_RUNTIME_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/attend_sparse.h"
#include "runtime/panel_view.h"
#include "runtime/model.h"
#include "runtime/query_groups.h"
#include "runtime/write_plan.h"
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

/* A model with an error flag (runtime/model.h, codegen/errflag.h) is run with its checks as
 * always, and then its flag is compared with them: an input that fails (a check or the readout,
 * not a non-finite number) must have err != 0 at some non-BOS row, and one that passes err = 0 at
 * every row, unless it lies inside the flag's band (runtime/flag_band.h: a checked value within a
 * stated distance of its check's boundary, on the passing side), where err != 0 is a note
 * (ModelOutcome.note), not a disagreement. A disagreement fails the input with an error starting
 * with this (an internal error: the weights and the checks say different things). */
#define MODEL_FLAG_ERROR "the error flag disagrees with the checks"

/* Hidden units per chunk of an MLP block: no buffer grows with the hidden width. */
#define WORKSPACE_HIDDEN_CHUNK 256

/* The float32 state of a workspace (runtime/forward32.h). */
typedef struct Forward32 Forward32;

/* A range [from, to) of the entries of written dim j's W2 column (runtime/forward.c). */
typedef struct Segment {
    uint32_t j, from, to;
} Segment;

/* W2's entries by hidden chunk: chunk c's segments are seg[start[c] .. start[c+1]). */
typedef struct ChunkSegments {
    size_t *start;
    Segment *seg;
} ChunkSegments;

/* Which side a head's scores come from (runtime/forward.c), judged on the longest sequence that
 * has led a batch so far: the side changes the time, never the numbers. */
typedef struct HeadSide {
    size_t judged_rows; /* 0: not judged yet */
    bool by_query;
    bool sparse;        /* through an index of the keys (runtime/attend_sparse.h) where it can */
    bool grouped;       /* once per group of equal queries (runtime/query_groups.h) where it pays */
} HeadSide;

/* The hidden units of a W1 (or W3) by equal column (the same entries, bit for bit), chunk by
 * chunk: one chain serves each class (runtime/forward.c). Used where the classes are at most a
 * quarter of the units: compiled MLPs that tabulate a function of one number have many hidden
 * units reading the same combination. */
typedef struct UnitClasses {
    bool used;
    size_t *chunk_start;  /* chunk c's classes are [chunk_start[c], chunk_start[c + 1]) */
    MatrixColumn *cols;   /* per class: the column its units share */
    size_t *unit_start;   /* per class (and one past the last): where its units are in units */
    uint32_t *units;      /* the units of each class, counted from their chunk's first unit */
} UnitClasses;

/* One row of an embedding: its stored entries, dims ascending. */
typedef MatrixRow EmbedRow;

/* The most integers a workspace's table of token ids spans. */
#define WORKSPACE_INT_TABLE 65536

/* Scratch for forward passes of batches up to `cap_rows` residual rows (at least one input of
 * max_len), allocated once. */
typedef struct Workspace {
    size_t cap_rows;      /* rows a batch may hold (BOS rows included) */
    size_t ld;            /* doubles per feature line of a panel: cap_rows rounded up, plus slack */
    double *F;            /* D x ld: the residual stream of the batch, feature-major */
    double *Q, *K;        /* max dk x ld: the computed lines of a head's query and key panels ... */
    PanelView q_view, k_view; /* ... where each line of them is (runtime/panel_view.h) ... */
    const ModelHead *head; /* ... for this head ... */
    const PanelPlan *head_plans; /* ... whose plans these are, and the rows of the batch: */
    size_t padded;
    bool embedded;        /* F's dims only the embedding writes hold what it wrote (not so where
                             model_forward starts from a given residual) */
    bool fresh;           /* the batch started from the embedding and runs every layer: fresh dims'
                             first writers store them (runtime/write_plan.h) */
    bool embedding_lines_zero; /* F's lines of the dims only the embedding writes are +0.0 whole (a
                             new workspace, or a batch cleared its entries): the next need not zero them */
    double *V;            /* max dv x ld */
    double *A;            /* (largest sum of dv over a layer's heads) x ld: attention outputs */
    double *S;            /* KERNEL_BLOCK queries' scores over their sequence's keys */
    double *H;            /* hidden chunk x KERNEL_BLOCK: the hidden units of a block */
    double *Y;            /* (widest write plan) x KERNEL_BLOCK: chains of a write-back */
    double *X;            /* (max_len + 1) x D: one sequence row-major (checks, readout; a buffer
                             callers of model_forward may use, as model_run does) */
    uint32_t *read_dims;  /* the dims the checks, the readout and the error flag read, ascending: */
    size_t n_read;        /* a batch copies only these into X (every dim for a numerical output,
                             whose readout is a dot product over the whole row) */
    double *token_values; /* max_len + 1: one input's real-valued tokens (model_tokenize) */
    double *row_values;   /* ld: the real-valued token of each row of a batch */
    size_t *ids, *pos;    /* ld: the token id and position of each row of a batch */
    size_t *seq_start, *seq_input; /* cap_rows + 1: each sequence of a batch, its first row and input */
    uint32_t *selected;   /* KERNEL_BLOCK / 8 x (max_len + 1): the keys eight queries select ... */
    uint8_t *key_mask;    /* ... and which of the eight select each (kernel_attend) */
    uint32_t *qrow;       /* KERNEL_BLOCK x dk: float32 queries' non-zero score columns */
    uint32_t *hot;        /* max_len + 1: a sequence's categorical outputs (kernel_one_hot) */
    uint32_t *key_count;  /* max_len + 1: a sequence's keys' non-zero entries, key j's count ... */
    uint32_t *key_dim;    /* (max_len + 1) x dk: ... its dims (ascending) from j * dk on ... */
    double *key_val;      /* (max_len + 1) x dk: ... and their values */
    uint32_t *query_count, *query_dim; /* the same for a sequence's queries ... */
    double *query_val;    /* ... (scores from the queries' side, attend_sparse) */
    SparseScratch sparse; /* the index of attend_sparse */
    QueryGroups groups;   /* a sequence's queries by their entries ... */
    double *group_out;    /* ... (max dv) x KERNEL_BLOCK: the outputs of a block of groups */
    double *T;            /* KERNEL_BLOCK x KERNEL_BLOCK: those scores query-major */
    double score_flops;   /* 2 x queries that see the key per non-zero key entry, summed over
                             every head run (callers reset it to measure) */
    WritePlans writes;    /* the dims each head's Wo and each W2 writes; which a batch zeroes */
    HeadSide **sides;     /* sides[l][h]: where head h of layer l takes its scores from */
    PanelPlan ***panels;  /* panels[l][h][0], [1]: which lines of its Q and K panels are F's */
    ChunkSegments *segments; /* segments[l]: W2's entries by chunk of hidden units */
    UnitClasses *w1_classes, *w3_classes; /* [l]: W1's and W3's hidden units by equal column ... */
    double *C;            /* ... (most classes in a chunk) x KERNEL_BLOCK: their chains */
    uint32_t **b2_dims;   /* b2_dims[l]: the dims with a non-zero b2 (b2_count[l] of them) */
    size_t *b2_count;
    EmbedRow *token_rows, *pos_rows; /* n_vocab + 1, max_len + 1 */
    bool embed_disjoint;  /* no dim has entries in both embeddings */
    int64_t int_lo;       /* integer tokens: the id of the integer int_lo + k is int_id[k] ... */
    size_t int_n;         /* ... for k < int_n (0: no table), n_vocab where it is no token */
    uint32_t *int_id;
    Arena arena;          /* plans */
    double *block;        /* the one allocation holding the buffers above */
    Forward32 *f32;       /* NULL: batches run in float64; else in float32 (workspace_use_float32) */
} Workspace;

/* A workspace is made for the model's weights as they are then (it keeps the embeddings' rows
 * and which dims each matrix writes): after changing weights, make a new one. Fails (with a
 * message, never aborting) when the buffers would be unreasonably large. A
 * workspace holds batches of up to max(rows, max_len + 1) residual rows (rows 0: a default that
 * keeps a few hundred rows in flight). */
bool workspace_init(Workspace *ws, const Model *m, char *err, size_t errsize);
bool workspace_init_rows(Workspace *ws, const Model *m, size_t rows, char *err, size_t errsize);
void workspace_free(Workspace *ws);

/* From now on model_run and model_run_batch run in float32 (runtime/forward32.h), if and only if
 * runtime/precision.h shows the model safe in float32 (model_precision with PRECISION_U32 and
 * rounded weights): every decoded output and error is then the one float64 gives. Otherwise
 * (or out of memory) returns false with the reason, e.g. "float32 is not shown safe for this
 * model: largest error bound / margin 9.5 (layer 1 head 0: scores (half the tie tolerance))",
 * and the workspace stays in float64. model_forward always runs in float64. */
bool workspace_use_float32(Workspace *ws, const Model *m, char *err, size_t errsize);

/* Maps input atoms to token ids (converted as the program's token type requires); for a model
 * with real-valued tokens also writes each token's value to values[i] (values may be NULL
 * otherwise). Errors, in the reference evaluator's order: a token that does not convert (the
 * first), then "input has length N > max length M" (ids are not written), then the first "token
 * 'x' at position i is not in the vocabulary" or "token x ... is outside the range". */
bool model_tokenize(const Model *m, const Value *input, size_t n, size_t *ids, double *values, char *err,
                    size_t errsize);

/* Runs layers [first_layer, end_layer) on X ((n+1) x D, row-major). When first_layer is 0, X is
 * first set to the embedding of ids (and, for real-valued tokens, ws->token_values); otherwise X
 * must hold the residual after layer first_layer-1. */
void model_forward(const Model *m, const size_t *ids, size_t n, size_t first_layer, size_t end_layer, double *X,
                   Workspace *ws);

/* Tokenizes, runs every layer (applying the model's checks after their layers, in their order)
 * and reads the output: n atoms allocated in out_arena. Errors name the position (0-based, BOS
 * excluded); a failed margin check's starts with MODEL_MARGIN_ERROR. */
bool model_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *out_arena, Value **out,
               char *err, size_t errsize);

/* The outcome of one input of a batch: its atoms, or its error (both in the caller's arena). */
typedef struct ModelOutcome {
    bool ok;
    Value *out;      /* n atoms when ok */
    const char *err; /* when !ok: what model_run would have written to err */
    double *flag;    /* a model with an error flag, an input that ran: err at each of its n
                        positions (in the caller's arena); NULL otherwise */
    const char *note; /* an answered input whose flag is set inside the flag's band: where
                         (runtime/flag_band.h), in the caller's arena; NULL otherwise */
} ModelOutcome;

/* model_run on count inputs (inputs[i] of lens[i] atoms) at once, in batches as large as the
 * workspace holds: the same outcome for each input as model_run gives it, bit for bit (in the
 * workspace's format). */
void model_run_batch(const Model *m, Workspace *ws, const Value *const *inputs, const size_t *lens, size_t count,
                     Arena *out_arena, ModelOutcome *outcomes);

/* The floating-point operations one forward pass of an input of length n needs, but for the
 * scores: 2 per stored non-zero weight and residual row (n + 1 rows) of every weight product,
 * one per query and value column for the mean (one key per query: the fewest), (n + 1) per
 * hidden unit for its bias (three when gated: both biases and the product). The scores depend
 * on the input: 2 per non-zero entry of a key and query that sees the key (float64; in float32,
 * 2 (n + 1) per non-zero entry of a query), which the forward pass adds up in
 * Workspace.score_flops per head and input (a product with a zero factor is skipped: it leaves
 * the chain as it is): what the dense scores need, also where a shortcut (the index of the keys,
 * groups of equal queries) finds the outputs with fewer. */
double model_forward_flops(const Model *m, size_t n);

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
