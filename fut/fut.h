/* Fixed universal transformers (Liu, Andoni, Hsu, "Fixed Universal Transformers", 2026):
 * one transformer with fixed weights (the backbone) computes any attention-only target
 * transformer of a class once its input embedding E (the program) is chosen.
 * docs/fut.md derives every construction used here.
 *
 * Conventions (row vectors, float64, every matrix row-major):
 *   target T   X_0 = X (n x d'); X_l = [X_{l-1}] + sum_h softmax(mask(X_{l-1} A_lh X_{l-1}^T)) X_{l-1} B_lh
 *              with A_lh = W_Q W_K^T / sqrt(d_k), B_lh = W_V W_O; [.] only for residual targets.
 *   backbone   Y_0 = X E (n x m); Y_l = [Y_{l-1} S_l] + sum_h softmax(mask((Y R_Q)(Y R_K)^T)) Y R_V;
 *              output Y_L U. S_l is the identity (plain residual) unless the backbone stores a
 *              fixed skip map (the looped residual backbone, see backbone.c).
 *   path / word  a sequence w = (w_1..w_k) of letters, a letter being a head 0..H-1 or, for
 *              residual backbones, the identity letter H. C_w = B_{1,w_1} ... B_{k,w_k} with
 *              B_{l,identity} = b_l I (b_l = 1 for residual layers, 0 otherwise).
 *   block      d columns of the embedding; the embedding is a sequence of blocks.
 *
 * Library contract: no global state; every object lives in an Arena given by the caller;
 * failures return false with a message in a caller buffer, never abort (except the arena's
 * out-of-memory). */
#ifndef RASPCC_FUT_FUT_H
#define RASPCC_FUT_FUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"

/* Deepest target or backbone handled (words are kept in fixed arrays of this size). */
#define FUT_MAX_LAYERS 32

/* ---- matrices (fut/mat.c) ------------------------------------------------------------- */

typedef struct FutMat {
    size_t rows, cols;
    double *data; /* rows*cols, row-major; NULL only for a 0-sized matrix */
} FutMat;

#define FUT_AT(M, i, j) ((M).data[(size_t)(i) * (M).cols + (size_t)(j)])

FutMat fut_mat_new(Arena *a, size_t rows, size_t cols); /* zeroed */
FutMat fut_mat_copy(Arena *a, FutMat m);
FutMat fut_mat_identity(Arena *a, size_t n);
/* C = op(A) op(B) (CBLAS dgemm); C is allocated in a. */
FutMat fut_mat_mul(Arena *a, FutMat A, bool ta, FutMat B, bool tb);
/* C += alpha * A B, C preallocated with the right shape. */
void fut_mat_mul_acc(FutMat *C, double alpha, FutMat A, FutMat B);
double fut_mat_max_abs_diff(FutMat A, FutMat B); /* shapes must agree */
double fut_mat_max_abs(FutMat A);
/* Row-wise softmax in place, with max subtraction; causal masks j > i. */
void fut_softmax_rows(FutMat *S, bool causal);

/* ---- random numbers (fut/rng.c): xoshiro256** seeded by splitmix64 ------------------- */

typedef struct FutRng {
    uint64_t s[4];
} FutRng;

void fut_rng_seed(FutRng *r, uint64_t seed);
uint64_t fut_rng_next(FutRng *r);
double fut_rng_uniform(FutRng *r);   /* [0, 1) */
double fut_rng_gauss(FutRng *r);     /* standard normal (Box-Muller) */
size_t fut_rng_below(FutRng *r, size_t n); /* uniform in [0, n), n > 0 */

/* ---- targets (fut/target.c) ---------------------------------------------------------- */

typedef struct FutHead {
    FutMat wq, wk; /* d x dk */
    FutMat wv;     /* d x dv */
    FutMat wo;     /* dv x d */
} FutHead;

/* An attention-only transformer: L layers of H heads, width d; no MLP, no normalisation. */
typedef struct FutTarget {
    size_t L, H, d;
    bool residual; /* X_l = X_{l-1} + attention */
    bool causal;   /* key j > query i masked */
    FutHead *heads; /* L*H, heads[l*H + h] */
} FutTarget;

/* Draws a random target: W_Q, W_K, W_V, W_O with N(0, 1/d) entries, d_k = d_v = d. */
void fut_target_random(Arena *a, FutRng *rng, size_t L, size_t H, size_t d, bool residual,
                       bool causal, FutTarget *out);
/* Checks shapes (every head d x dk, dk x d ...) and finiteness of every weight. */
bool fut_target_validate(const FutTarget *t, char *err, size_t errsize);
/* T(X): the reference forward pass, computed from W_Q, W_K, W_V, W_O (not from A and B). */
FutMat fut_target_forward(Arena *a, const FutTarget *t, FutMat X);

/* The target in path form, padded to a backbone of L layers, H heads and block width d:
 * A[l*H+h], B[l*H+h] are d x d (zero outside the target's d' x d' corner; heads beyond the
 * target's are zero), bid[l] is the coefficient of the identity letter at layer l (1 for a
 * residual layer, 0 otherwise). Layers beyond the target's are identity layers (bid = 1,
 * heads zero), which only a residual backbone can run. */
typedef struct FutProgram {
    size_t L, H, d;
    size_t d_in;  /* the target's width d' (rows of the embedding, columns of the answer) */
    bool causal;
    FutMat *A, *B;
    double *bid;
} FutProgram;

/* Fits target t into (L, H, d, residual backbone?). Errors name what does not fit. */
bool fut_program_from_target(Arena *a, const FutTarget *t, size_t L, size_t H, size_t d,
                             bool backbone_residual, FutProgram *out, char *err, size_t errsize);
/* C_w for the word w of length k (letters 0..H-1 heads, H the identity). */
FutMat fut_program_path(Arena *a, const FutProgram *p, const size_t *w, size_t k);

/* ---- backbones (fut/backbone*.c) ----------------------------------------------------- */

typedef enum FutKind { FUT_SPARSE, FUT_LOOPED, FUT_RANDOM } FutKind;

const char *fut_kind_name(FutKind k);
bool fut_kind_parse(const char *s, FutKind *out);

typedef struct FutBackbone {
    FutKind kind;
    size_t L, H, d; /* simulates targets with <= L layers (exactly L unless residual), <= H heads, width <= d */
    size_t m;       /* embedding width */
    bool residual;  /* has residual connections */
    bool causal;    /* masks key j > query i */
    bool tied;      /* every layer shares one set of weights (looped) */
    uint64_t seed;  /* random backbones only */
    /* rq[l*H+h], rk: m x d; rv: m x m. For tied backbones every layer's pointers alias layer 0. */
    FutMat *rq, *rk, *rv;
    /* skip[l]: m x m fixed skip map of a residual layer; NULL array = identity skip. */
    FutMat *skip;
    FutMat u; /* unembedding, m x d */
} FutBackbone;

/* Number of letters per step: H, plus the identity letter for residual backbones. */
size_t fut_alphabet(size_t H, bool residual);
/* Embedding width of the sparse and looped constructions:
 * m = d * ((H+1) * sum_{k<L} W^k + W^L), W = fut_alphabet(H, residual). 0 on overflow. */
size_t fut_sparse_width(size_t L, size_t H, size_t d, bool residual);
/* Columns of the random backbone's matching system:
 * N = d * (2H * sum_{k<L} W^k + W^L). The random backbone needs m >= N. 0 on overflow. */
size_t fut_random_columns(size_t L, size_t H, size_t d, bool residual);
/* The path-matching lower bound on m (docs/fut.md): d * W^L, or d * (W^L - 1) + 1 when
 * residual (the all-identity path contributes one direction per row). 0 on overflow. */
size_t fut_lower_bound(size_t L, size_t H, size_t d, bool residual);

/* Sparse {0,1} backbone (backbone_sparse.c): the tree of attention paths. */
bool fut_backbone_sparse(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         FutBackbone *out, char *err, size_t errsize);
/* Looped (weight-tied) {0,1} backbone (backbone_looped.c): blocks shift one level per layer. */
bool fut_backbone_looped(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         FutBackbone *out, char *err, size_t errsize);
/* Gaussian backbone (backbone_random.c): R_Q, R_K, R_V, U with N(0, 1/m) entries from seed.
 * m = 0 picks ceil(1.25 N). No rank check here: fut_embed_solve does it. */
bool fut_backbone_random(Arena *a, size_t L, size_t H, size_t d, bool residual, bool causal,
                         size_t m, uint64_t seed, FutBackbone *out, char *err, size_t errsize);
bool fut_backbone_validate(const FutBackbone *b, char *err, size_t errsize);

/* UT(X, E): the backbone's forward pass, X is n x d_in, E is d_in x m; returns n x d_in
 * (the first d_in columns of Y_L U). */
FutMat fut_backbone_forward(Arena *a, const FutBackbone *b, FutMat E, FutMat X);

/* ---- embeddings (fut/embed_explicit.c, fut/embed_solve.c) ---------------------------- */

typedef struct FutSolveInfo {
    size_t columns;     /* N, columns of Phi */
    size_t rank;        /* numerical rank of Phi */
    double cond;        /* sigma_max / sigma_min of Phi (inf when rank deficient) */
    double residual;    /* max |E Phi - Psi| */
} FutSolveInfo;

/* The explicit block embedding of a sparse or looped backbone (no linear algebra). */
bool fut_embed_explicit(Arena *a, const FutBackbone *b, const FutProgram *p, FutMat *E,
                        char *err, size_t errsize);
/* Solves E Phi = Psi (LAPACKE dgelsd, minimum norm) for any backbone kind. With
 * require_full_rank, a Phi of rank < N is an error that says how large m must be. */
bool fut_embed_solve(Arena *a, const FutBackbone *b, const FutProgram *p, bool require_full_rank,
                     FutMat *E, FutSolveInfo *info, char *err, size_t errsize);
/* The embedding of target t for backbone b: fits t (fut_program_from_target), then explicit
 * blocks for sparse/looped, the solver for random. info may be NULL. */
bool fut_embed(Arena *a, const FutBackbone *b, const FutTarget *t, FutMat *E, FutSolveInfo *info,
               char *err, size_t errsize);

#endif
