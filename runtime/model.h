/* A compiled transformer in memory: what codegen produces, what model.bin stores
 * (docs/model-format.md) and what the runtime executes.
 *
 * The machine (row-vector convention, residual X is (n+1) x D, row 0 is the BOS position):
 *   X = token_embed[token_id] + pos_embed[position]          (BOS has token id n_vocab)
 *       (+ value * e_token_value_dim for real-valued tokens)
 *   for each layer:  X += sum_h AHAT_h(X);   X += MLP(X)
 *   MLP(X) = (ReLU(X W1 + b1) * G) W2 + b2, elementwise, with the multiplier G = X W3 + b3 in a
 *     gated (bilinear, ReGLU-style) layer and G = 1 otherwise (ModelMlp.gated). A product x*y of
 *     two residual dims is exact with two gated units: ReLU(x) y - ReLU(-x) y.
 *   AHAT_h(X): S = (X Wq)(X Wk)^T; for query i, m_i = max_j S_ij over the allowed keys (j <= i
 *     when causal), and the keys j with S_ij >= m_i - tie_tol_h are averaged:
 *     out_i = mean_j (X Wv)_j, BOS (j = 0) weighing 1 + bos_extra_h; then out Wo. tie_tol_h is the head's ABSOLUTE tie tolerance
 *     (ModelHead.tie_tol): the compiler knows each head's smallest gap between distinct scores
 *     and sets it below that, above the floating-point error of the scores.
 * The output s-op is read from the final X, row by row (position i is row i+1):
 *   categorical: the block [out_dim, out_dim + out_count) must be one-hot (within
 *     MODEL_ONEHOT_TOL, else the input is an error); the atom is out_values[hot].
 *   numerical: x = X_row . out_readout, decoded against out_values, or against the value set of
 *     the input's length when the output has per-length value sets (see below).
 * `checks` are assertions on intermediate blocks, tested after a layer (in their order; the
 * first that fails fails the input): a categorical block that is not one-hot (a map raised, or
 * values were mixed), or an aggregate of non-numeric values that selected several keys (the
 * reference evaluator raises then, even when the values are equal), so the runtime reports the
 * same error.
 *
 * Margin checks (MODEL_CHECK_MARGIN) guard comparisons of real numbers. The compiler computes a
 * real-valued s-op with a stated error bound, and where the program compares it with constants
 * (c_1..c_k) the model compares its approximation instead: the comparison is exact whenever the
 * approximation is farther than the error bound from every c_j, and may be wrong otherwise. A
 * margin check (with a margin at least that error bound) states this: after its layer, at every
 * non-BOS row x, the value v = sum_t coef_t * x[dim_t] (a sparse linear functional of the
 * residual) must satisfy |v - c_j| > margin for every threshold c_j; otherwise the model refuses
 * the input with an error whose message starts with MODEL_MARGIN_ERROR ("within the margin",
 * runtime/forward.h): outside the margin the model's answer is exact, inside it the model
 * refuses rather than answer wrongly, and the verify tooling counts such refusals apart from
 * disagreements.
 *
 * Numerical readout contract (model_read_output in runtime/forward.h implements it):
 *   - out_values[out_count] is the exact finite set of atoms the output can take (bools, ints,
 *     floats: never strings), sorted ascending by numeric value (True = 1, False = 0); members
 *     may share a numeric value only with different kinds (1, 1.0, True). Empty = unbounded
 *     (real-valued outputs): x is returned as a float, and the compiler guarantees
 *     |x - reference| <= out_error_bound + out_error_rel |reference| (a relative part where the
 *     compiler proved one, for values of one sign such as softmax's); with a kind block (below) naming int or bool at a
 *     position, the atom there is the integer nearest x, which must be within out_error_bound.
 *   - Otherwise x decodes to the member value v nearest to x, which must satisfy
 *     |x - v| <= out_margin (an absolute margin; the model is refused at load unless
 *     2 * out_margin < the smallest gap between distinct member values, so the nearest member
 *     is unambiguous). Else the input fails: "output at position P: model value X is not within
 *     the decoding margin of any value the program can produce".
 *   - Kind block: when out_kind_count > 0, [out_kind_dim, out_kind_dim + out_kind_count) is a
 *     one-hot block whose dim d means kind out_kinds[d]; the decoded atom is the member with
 *     value v and the hot kind (an error when the block is not one-hot or there is none).
 *     Without a kind block, members sharing a numeric value are refused at load.
 *   - The decoded atom is the member itself (its kind and exact value), so ints print as ints,
 *     floats as floats, bools as True/False, and a computed -0.0 or 10.999999999 disappears.
 *   - Per-length value sets: some outputs take values whose exact bits depend on the input length
 *     through rounding (fl(fl(20/7) * fl(19/3)) and fl(fl(19/7) * fl(20/3)) are two doubles 1 ulp
 *     apart), so no margin separates the members of the global set, while for one length each
 *     member is far from the others. When out_len_count > 0 (it is then max_len), an input of
 *     length n (1..max_len) decodes as above against the members
 *     out_len_values[out_len_start[n-1] .. out_len_start[n]) instead of out_values. Each such
 *     range obeys every rule above (numbers, sorted, kind sharing only with a kind block covering
 *     its kinds, 2 * out_margin below the smallest gap between its distinct values); an empty
 *     range means the output takes no value at that length (every input of that length fails to
 *     decode). out_values is then the union of the ranges (for display): non-empty, sorted, no
 *     member twice, containing every member of every range, but exempt from the gap and
 *     kind-sharing rules. The error message ends with " for an input of length N". */
#ifndef RASPCC_RUNTIME_MODEL_H
#define RASPCC_RUNTIME_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/value.h"
#include "runtime/matrix.h"
#include "support/arena.h"


typedef struct ModelHead {
    Matrix wq, wk; /* D x dk */
    Matrix wv;     /* D x dv */
    Matrix wo;     /* dv x D */
    bool causal;
    /* Absolute tie tolerance (finite, >= 0): for query i the keys scoring >= max_i - tie_tol are
     * averaged. Every builder sets it per head; 0 averages exact ties only. */
    double tie_tol;
    /* The BOS key's extra weight (finite, >= 0; 0 by default): in the mean over the tie set BOS
     * counts as 1 + bos_extra keys. A width head with a heavy BOS outputs Lambda / (Lambda + w),
     * nearly affine in w (docs/model-format.md, "A heavy BOS"); in softmax attention it is a sink
     * logit, ln(1 + bos_extra) / beta added to BOS's score. */
    double bos_extra;
    const char *label; /* what it computes, e.g. "aggregate reverse @ prog.rasp:3:11" */
} ModelHead;

typedef struct ModelMlp {
    Matrix w1;  /* D x H (H may be 0) */
    double *b1; /* H */
    Matrix w2;  /* H x D */
    double *b2; /* D */
    /* Gated (bilinear) layer: hidden unit c is ReLU((X W1 + b1)_c) * (X W3 + b3)_c. When not
     * gated, w3 and b3 are unused (NULL/empty) and the multiplier is 1. */
    Matrix w3;  /* D x H, gated only */
    double *b3; /* H, gated only */
    bool gated;
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
    MODEL_CHECK_MARGIN,     /* v = sum_t coefs[t] * x[dims[t]] must lie farther than the
                               margin from every threshold (the machine above): the ModelMargin
                               Model.margins[dim], count 1 */
} ModelCheckKind;

/* A margin check's functional, thresholds and margin (see the machine above). The rules, applied
 * by model_check_checks (and so by the reader and the writer): 1 <= n_terms, dims strictly
 * increasing and < D (so n_terms <= D), coefs finite; 1 <= n_thresholds <= MODEL_MAX_THRESHOLDS,
 * thresholds finite and strictly increasing; m finite and > 0. */
#define MODEL_MAX_THRESHOLDS ((size_t)1 << 20)
/* The largest BOS extra weight a head may have (ModelHead.bos_extra): counts up to 2^20 keys read
 * apart with one in float64 at 2^50. */
#define MODEL_MAX_BOS_EXTRA 0x1p50

typedef struct ModelMargin {
    size_t n_terms;
    size_t *dims;      /* v = sum_t coefs[t] * x[dims[t]] */
    double *coefs;
    size_t n_thresholds;
    double *thresholds; /* c_1 < ... < c_k */
    double m;          /* the margin: |v - c_j| > m for every j, else the input fails */
} ModelMargin;

typedef struct ModelCheck {
    size_t after_layer; /* checked on X after this layer's MLP (0-based layer index) */
    size_t dim, count;  /* the block [dim, dim+count), tested at every non-BOS position; for a
                           margin check, dim is the index of its ModelMargin in Model.margins and
                           count is 1 */
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
    char **labels;        /* D residual direction labels, "sop:value" */

    Matrix token_embed;   /* (n_vocab + 1) x D */
    Matrix pos_embed;     /* (max_len + 1) x D */
    size_t n_layers;
    ModelLayer *layers;

    /* output */
    const char *output_name;
    ModelOutputKind output_kind;
    size_t out_dim;            /* categorical: the block [out_dim, out_dim+out_count) */
    size_t out_count;          /* number of out_values */
    Value *out_values;         /* categorical: the value of each dim of the block; numerical: the
                                  atoms the output can take, sorted (empty = unbounded); with
                                  per-length value sets (out_len_count, below), their union */
    double *out_readout;       /* numerical: D weights, x = X_i . out_readout */
    double out_margin;         /* numerical: |x - v| <= out_margin to decode to value v */
    size_t out_kind_dim, out_kind_count; /* numerical: kind block (count 0 = none) */
    ValueKind *out_kinds;      /* out_kind_count kinds (VAL_BOOL/INT/FLOAT), one per dim */
    double out_error_bound;    /* numerical, unbounded: guaranteed |model - reference| <= */
    double out_error_rel;      /*   out_error_bound + out_error_rel * |reference| */
    /* numerical, optional per-length value sets (see the readout contract above; stored as
     * "values_by_length"): out_len_count is 0 (none: every input decodes against out_values)
     * or max_len; then inputs of length n decode against the out_len_start[n] -
     * out_len_start[n-1] members out_len_values[out_len_start[n-1] ..), and out_values is their
     * union. out_len_start has out_len_count + 1 non-decreasing offsets, out_len_start[0] = 0. */
    size_t out_len_count;
    size_t *out_len_start;
    Value *out_len_values;

    size_t n_checks;
    ModelCheck *checks;
    /* The functionals, thresholds and margins of the margin checks: a check of kind
     * MODEL_CHECK_MARGIN uses margins[check.dim]. (They live beside the checks so that ModelCheck
     * keeps its six fields, which builders initialise positionally.) */
    size_t n_margins;
    ModelMargin *margins;

    /* The error flag (raspcc --error-flag, codegen/errflag.h; stored as config "error_flag"):
     * when has_error_flag, residual dim error_flag_dim ("err") is computed by the weights so that
     * at every non-BOS row it is 0 when every check and the output's decoding pass there, and
     * > 0 (>= 1 but within a check's ramp of its boundary) when one fails: the input fails iff
     * some non-BOS row has err != 0. The runtime compares it with its own checks
     * (MODEL_FLAG_ERROR, runtime/forward.h). */
    bool has_error_flag;
    size_t error_flag_dim;

    /* provenance: the program, so --check needs nothing else */
    const char *program_source;
    const char *program_name;  /* file name it was compiled from */
    const char *compile_flags; /* e.g. "--vocab abc --max-len 8", informational */

    Arena arena;            /* owns everything above but the weight matrices' entries */
    MatrixStore *matrices;  /* the entries of every Matrix made by model_matrix */
} Model;

void model_init(Model *m);
void model_free(Model *m);
/* An all-zero rows x cols matrix whose entries m owns (runtime/matrix.h: stored sparse, by
 * column; write it with matrix_add / matrix_set, read it with matrix_get / matrix_column). */
Matrix model_matrix(Model *m, size_t rows, size_t cols);

/* Parameter counts: every stored weight entry (w3 and b3 of gated layers included), and those
 * that are not zero. */
size_t model_param_count(const Model *m);
size_t model_nonzero_count(const Model *m);

/* The inverse temperatures at which softmax(beta S) reproduces every head's average-hard
 * attention (docs/model-format.md, "Softmax attention"): *within, the least beta at which the
 * keys below a head's tie set weigh at most `eps` together, ln(max_len / eps) / tie_tol; *exact,
 * 746 / tie_tol, at which each of their weights is 0.0 in float64. Each the largest over the
 * heads; INFINITY when a head has tie_tol 0 (exact ties only), 0 with no heads. */
void model_softmax_beta(const Model *m, double eps, double *within, double *exact);

/* The members a numerical output decodes against for an input of length n_input: the
 * per-length range of that length when the model has per-length value sets (NULL and *count 0
 * when n_input is not in 1..out_len_count), else out_values (*count = out_count). */
const Value *model_output_values(const Model *m, size_t n_input, size_t *count);

/* Checks the output description against the readout contract above (block inside the
 * residual, values sorted, no string in a numerical output, margin below half the smallest
 * gap, kinds sharing a value only with a kind block that covers every member's kind, finite
 * margin and error bound; with per-length value sets, those rules per length, max_len ranges
 * with consistent offsets, and out_values sorted and containing every member). The writer and
 * the reader both apply it; compilers may too. */
bool model_check_output(const Model *m, char *err, size_t errsize);

/* Checks the shapes of the weights against the configuration (d_model, n_vocab, max_len, each
 * head's dk and dv, each MLP's H; w3 and b3 present exactly when gated) and the checks (a layer
 * of the model, a block inside the residual, single_key spans 2 dims, one_kind has its flags, a
 * margin check names one of Model.margins, which obeys the rules of ModelMargin above). The writer applies it; the reader builds
 * shapes from the configuration and applies the check rules. */
bool model_check_layers(const Model *m, char *err, size_t errsize);
bool model_check_checks(const Model *m, char *err, size_t errsize);

#endif
