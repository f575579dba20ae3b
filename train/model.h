/* The training engine: a transformer whose fixed parts are the backbones of fut/ (sparse,
 * looped, random) or, for the baseline, a fully trainable transformer of the same shape.
 * docs/train.md derives every forward and backward pass used here.
 *
 *   Y_0 = E[x_r] (+ E[vocab + 1 + p_r] with absolute positions)            (row r: token x_r, position p_r)
 *   layer l:  Z = LN(Y)            (identity without --layernorm)
 *             Y' = [Y S_l] + sum_h softmax(mask(rot(Z R_Q) rot(Z R_K)^T)) (Z R_V)
 *             Y'' = [Y'] + ReLU(LN(Y') W_1 + b_1) W_2 + b_2                  (only with --mlp)
 *   logits = LN(Y_L) U;  loss = mean over the answers of -log softmax(logits_row)[label]
 *
 * [.] is the residual (S_l = I, or the looped backbone's fixed skip map); mask hides keys after
 * the query when causal; rot is the rotary encoding (identity unless --pos rotary). Scores are
 * not scaled by 1/sqrt(d): the backbones of fut/ do not scale them either. Every example is one
 * segment of rows (BOS first); attention never crosses segments.
 *
 * Trainable: E and U for the fixed backbones (sparse, looped, random); everything for full.
 * Fixed layer norms have gain 1 and bias 0; fixed MLPs are Gaussian (W_1 N(0, 2/m), W_2
 * N(0, 1/hidden), biases 0) from the seed.
 *
 * Storage (after llm.c): every parameter in one contiguous buffer and every activation in
 * another, each described by a table of named tensors with their shapes; gradients, Adam's
 * moments and activation gradients mirror those buffers. Float32 or float64, chosen at run
 * time: train/layers.inc and train/engine.inc are compiled once per precision
 * (engine_f32.c, engine_f64.c). Everything is seeded: the same config, seed and data give
 * the same bits (BLAS runs single-threaded, see tr_blas_single_thread). */
#ifndef RASPCC_TRAIN_MODEL_H
#define RASPCC_TRAIN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fut/fut.h"
#include "support/arena.h"
#include "train/layers.h"
#include "train/task.h"

typedef enum TrKind { TR_SPARSE, TR_LOOPED, TR_RANDOM, TR_FULL } TrKind;
typedef enum TrPos { TR_POS_ABSOLUTE, TR_POS_NONE, TR_POS_ROTARY } TrPos;
typedef enum TrPrecision { TR_F32, TR_F64 } TrPrecision;

const char *tr_kind_name(TrKind k);
bool tr_kind_parse(const char *s, TrKind *out);
const char *tr_pos_name(TrPos p);
bool tr_pos_parse(const char *s, TrPos *out);

typedef struct TrConfig {
    TrKind kind;
    size_t L, H, d;    /* the target shape the backbone simulates: layers, heads, head width */
    size_t m;          /* embedding width; 0 = the backbone's own (sparse tree width, 1.25 N random) */
    bool residual, layernorm, mlp, causal;
    size_t mlp_hidden; /* 0 = m */
    TrPos pos;
    size_t vocab;      /* token ids 0..vocab-1; BOS = vocab */
    size_t max_len;    /* longest string; a segment has at most max_len + 1 rows */
    size_t classes;
    TrPrecision precision;
    uint64_t seed;     /* backbone (random kinds) and initialisation */
    double init_embed; /* standard deviation of E's entries at initialisation (0 = 1.0) */
} TrConfig;

/* A named tensor in a buffer: rows x cols reals at offset (in reals). */
typedef struct TrTensor {
    char name[48];
    size_t rows, cols, offset;
    bool trainable; /* parameters only */
} TrTensor;

typedef struct TrTable {
    TrTensor *t;
    size_t n, cap, total; /* total reals */
} TrTable;

enum { TR_NONE = (size_t)-1 };

/* Parameter tensors of one layer (TR_NONE when absent). Tied backbones point every layer at
 * the same tensors. */
typedef struct TrLayer {
    size_t ln1_g, ln1_b;
    size_t *rq, *rk, *rv; /* H each */
    size_t skip;
    size_t ln2_g, ln2_b, w1, b1, w2, b2;
} TrLayer;

/* Activation tensors of one layer. */
typedef struct TrLayerActs {
    size_t ln1_mean, ln1_rstd, z1;  /* z1 = y_in when there is no layer norm */
    size_t *q, *k, *v, *p;          /* H each; q, k after the rotary encoding; p the attention weights */
    size_t y_mid;                   /* after attention (and residual) */
    size_t ln2_mean, ln2_rstd, z2, h_pre, h_act;
    size_t y_out;                   /* = y_mid without an MLP */
} TrLayerActs;

/* A batch: examples laid out as segments of rows, BOS first. */
typedef struct TrBatch {
    size_t n_seq, rows, n_answers;
    size_t *seg_row, *seg_len, *seg_p; /* first row, rows, offset of its len x len attention block */
    uint32_t *ids, *pos;               /* per row: token id (BOS = vocab), position (BOS = 0) */
    size_t *ans_row;                   /* per answer */
    uint32_t *ans_label;
} TrBatch;

typedef struct TrModel {
    TrConfig cfg;
    size_t m, hidden, d_in;  /* width, MLP hidden width, rows of E */
    size_t batch_cap;        /* sequences per batch */
    size_t rows_cap, p_cap;  /* rows and attention weights a batch may need */
    TrTable params, acts;
    TrLayer *layer;
    TrLayerActs *lact;
    size_t embed, unembed, lnf_g, lnf_b;            /* parameters */
    size_t y0, lnf_mean, lnf_rstd, zf, logits, probs; /* activations */
    void *param, *grad, *adam_m, *adam_v;            /* params.total reals each */
    void *act, *dact;                                /* acts.total reals each */
    void *scratch;                                   /* (max_len+1)^2 reals */
    TrSparse **sparse; /* per parameter: the compressed form of a fixed, mostly-zero tensor, or NULL */
    size_t adam_t;
    FutBackbone backbone; /* the fut backbone (not for full); its R_Q, R_K, R_V, skip are copied in */
    Arena arena;
} TrModel;

typedef struct TrAdam {
    double lr, beta1, beta2, eps, clip; /* clip: global gradient norm (0 = none) */
} TrAdam;

/* Builds the model for cfg (the backbone from fut/, tables, buffers) and initialises it from
 * cfg->seed. batch_cap sequences of at most cfg->max_len tokens per batch. */
bool tr_model_init(TrModel *md, const TrConfig *cfg, size_t batch_cap, char *err, size_t errsize);
void tr_model_free(TrModel *md);
size_t tr_model_trainable(const TrModel *md); /* number of trainable reals */

/* Lays n examples out as a batch; storage in the arena. n <= batch_cap and every length <=
 * max_len, or the process aborts (a caller's bug, not an input error). */
void tr_batch_build(Arena *a, const TrModel *md, const TrExample *ex, size_t n, TrBatch *b);

/* Forward pass; returns the mean cross-entropy over the answers. */
double tr_model_forward(TrModel *md, const TrBatch *b);
/* Backward pass after tr_model_forward on the same batch: gradients of the trainable tensors
 * (or of every tensor with all = true, for gradient checks), zeroed first. */
void tr_model_backward(TrModel *md, const TrBatch *b, bool all);
/* Adam step on the trainable tensors; returns the gradient norm before clipping. */
double tr_model_adam(TrModel *md, const TrAdam *opt);
/* After tr_model_forward: answers whose largest logit is the label (ties count as wrong). */
size_t tr_model_correct(const TrModel *md, const TrBatch *b);
/* After tr_model_forward: the predicted class of each answer. */
void tr_model_predictions(const TrModel *md, const TrBatch *b, uint32_t *pred);

/* Tensor access in float64, whatever the precision. */
size_t tr_model_find(const TrModel *md, const char *name); /* parameter index or TR_NONE */
void tr_model_get(const TrModel *md, size_t tensor, double *out);
void tr_model_set(TrModel *md, size_t tensor, const double *in);
double tr_model_grad_at(const TrModel *md, size_t tensor, size_t i);
double tr_model_param_at(const TrModel *md, size_t tensor, size_t i);
void tr_model_param_put(TrModel *md, size_t tensor, size_t i, double v);

/* OpenBLAS threads: 1 (small matrices; bit-reproducible whatever the machine's load). */
void tr_blas_single_thread(void);

#endif
