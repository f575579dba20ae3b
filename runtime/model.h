/* A compiled transformer in memory: what codegen produces, what model.bin stores
 * (docs/model-format.md) and what the runtime executes.
 *
 * The machine (row-vector convention, residual X is (n+1) x D, row 0 is the BOS position):
 *   X = token_embed[token_id] + pos_embed[position]          (BOS has token id n_vocab)
 *       (+ value * e_token_value_dim for real-valued tokens)
 *   for each layer:  X += sum_h AHAT_h(X);   X += ReLU(X W1 + b1) W2 + b2
 *   AHAT_h(X): S = (X Wq)(X Wk)^T; for query i, keys j (j <= i when causal) whose score is within
 *     `tie_tolerance` of the row maximum are averaged: out_i = mean_j (X Wv)_j; then out Wo.
 * The output s-op is read from the final X: categorical = argmax over its one-hot dims (which
 * must be one-hot within tolerance, else the input is an error); numerical = X row . readout.
 * `checks` are assertions on intermediate blocks, tested after a layer: a categorical block that
 * is not one-hot (a map raised, or values were mixed), or an aggregate of non-numeric values
 * that selected several keys (the reference evaluator raises then, even when the values are
 * equal), so the runtime reports the same error. */
#ifndef RASPCC_RUNTIME_MODEL_H
#define RASPCC_RUNTIME_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/value.h"
#include "support/arena.h"

/* Row-major dense matrix. */
typedef struct Matrix {
    size_t rows, cols;
    double *data; /* rows*cols */
} Matrix;

typedef struct ModelHead {
    Matrix wq, wk; /* D x dk */
    Matrix wv;     /* D x dv */
    Matrix wo;     /* dv x D */
    bool causal;
    const char *label; /* what it computes, e.g. "aggregate reverse @ prog.rasp:3:11" */
} ModelHead;

typedef struct ModelMlp {
    Matrix w1;  /* D x H (H may be 0) */
    double *b1; /* H */
    Matrix w2;  /* H x D */
    double *b2; /* D */
} ModelMlp;

typedef struct ModelLayer {
    size_t n_heads;
    ModelHead *heads;
    ModelMlp mlp;
} ModelLayer;

typedef enum ModelOutputKind { MODEL_OUT_CATEGORICAL, MODEL_OUT_NUMERICAL } ModelOutputKind;

typedef enum ModelCheckKind {
    MODEL_CHECK_ONE_HOT,    /* the block [dim, dim+count) is one-hot */
    MODEL_CHECK_SINGLE_KEY, /* count = 2: dims hold the mean of the selected keys' index i and of
                               i^2; their variance is 0 iff at most one key was selected */
    MODEL_CHECK_ONE_KIND,   /* a one-hot block whose values mix strings and non-strings: all
                               positions must hold the same kind (the reference evaluator refuses
                               an s-op that mixes them); `is_string[d]` per dim of the block */
} ModelCheckKind;

typedef struct ModelCheck {
    size_t after_layer; /* checked on X after this layer's MLP (0-based layer index) */
    size_t dim, count;  /* the block [dim, dim+count), tested at every non-BOS position */
    const char *what;   /* s-op description for the error message */
    ModelCheckKind kind;
    bool *is_string;    /* MODEL_CHECK_ONE_KIND: count flags */
} ModelCheck;

typedef struct Model {
    /* configuration */
    size_t d_model;       /* residual width D */
    size_t max_len;       /* longest input (BOS excluded) */
    size_t n_vocab;       /* token values; id n_vocab is BOS */
    Value *vocab;         /* n_vocab atoms, in id order */
    int token_type;       /* IrTokenType the program's tokens use */
    /* Real-valued tokens (tokens_float compiled with --range): every token is a number in
     * [token_lo, token_hi]; each uses token row 0 and adds its value on dim token_value_dim. */
    bool numeric_tokens;
    size_t token_value_dim;
    double token_lo, token_hi;
    double tie_tolerance; /* attention scores within this of the max count as ties */
    char **labels;        /* D residual direction labels, "sop:value" */

    Matrix token_embed;   /* (n_vocab + 1) x D */
    Matrix pos_embed;     /* (max_len + 1) x D */
    size_t n_layers;
    ModelLayer *layers;

    /* output */
    const char *output_name;
    ModelOutputKind output_kind;
    size_t out_dim, out_count; /* categorical: block [out_dim, out_dim+out_count) */
    Value *out_values;         /* categorical: the value of each dim of the block */
    double *out_readout;       /* numerical: D weights, value = X_i . out_readout */
    bool out_integral;         /* numerical: print as int (value set all integers) */

    size_t n_checks;
    ModelCheck *checks;

    /* provenance: the program, so --check needs nothing else */
    const char *program_source;
    const char *program_name;  /* file name it was compiled from */
    const char *compile_flags; /* e.g. "--vocab abc --max-len 8", informational */

    Arena arena; /* owns everything above */
} Model;

void model_init(Model *m);
void model_free(Model *m);
Matrix model_matrix(Model *m, size_t rows, size_t cols); /* zeroed, owned by m->arena */

/* Parameter counts: every stored weight entry, and those that are not zero. */
size_t model_param_count(const Model *m);
size_t model_nonzero_count(const Model *m);

#endif
