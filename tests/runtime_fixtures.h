/* Hand-built models whose outputs can be worked out on paper, shared by the runtime tests.
 * Each builder fills a Model initialised with model_init. */
#ifndef RASPCC_TESTS_RUNTIME_FIXTURES_H
#define RASPCC_TESTS_RUNTIME_FIXTURES_H

#include <string.h>

#include "ir/ir.h"
#include "runtime/model.h"

static void fx_layers(Model *m, size_t n_layers, const size_t *heads, const size_t *hidden) {
    m->n_layers = n_layers;
    m->layers = ARENA_ARRAY(&m->arena, ModelLayer, n_layers ? n_layers : 1);
    for (size_t l = 0; l < n_layers; l++) {
        ModelLayer *L = &m->layers[l];
        L->n_heads = heads[l];
        L->heads = ARENA_ARRAY(&m->arena, ModelHead, heads[l] ? heads[l] : 1);
        L->mlp.w1 = model_matrix(m, m->d_model, hidden[l]);
        L->mlp.b1 = ARENA_ARRAY(&m->arena, double, hidden[l] + 1);
        L->mlp.w2 = model_matrix(m, hidden[l], m->d_model);
        L->mlp.b2 = ARENA_ARRAY(&m->arena, double, m->d_model);
    }
}

/* Makes layer l's MLP gated: w3 (D x H) and b3 (H), zeroed. */
static void fx_gate(Model *m, size_t l) {
    ModelMlp *f = &m->layers[l].mlp;
    f->gated = true;
    f->w3 = model_matrix(m, m->d_model, f->w1.cols);
    f->b3 = ARENA_ARRAY(&m->arena, double, f->w1.cols + 1);
}

/* Appends a margin check after layer `after`: v = sum coefs[t] * x[dims[t]] must lie farther
 * than `margin` from each of the n_thr thresholds. */
static void fx_margin(Model *m, size_t after, const char *what, size_t n_terms, const size_t *dims,
                      const double *coefs, size_t n_thr, const double *thr, double margin) {
    ModelCheck *checks = ARENA_ARRAY(&m->arena, ModelCheck, m->n_checks + 1);
    ModelMargin *margins = ARENA_ARRAY(&m->arena, ModelMargin, m->n_margins + 1);
    if (m->n_checks) memcpy(checks, m->checks, m->n_checks * sizeof *checks);
    if (m->n_margins) memcpy(margins, m->margins, m->n_margins * sizeof *margins);
    ModelMargin *g = &margins[m->n_margins];
    g->n_terms = n_terms;
    g->dims = ARENA_ARRAY(&m->arena, size_t, n_terms + 1);
    g->coefs = ARENA_ARRAY(&m->arena, double, n_terms + 1);
    memcpy(g->dims, dims, n_terms * sizeof *dims);
    memcpy(g->coefs, coefs, n_terms * sizeof *coefs);
    g->n_thresholds = n_thr;
    g->thresholds = ARENA_ARRAY(&m->arena, double, n_thr + 1);
    memcpy(g->thresholds, thr, n_thr * sizeof *thr);
    g->m = margin;
    checks[m->n_checks] = (ModelCheck){after, m->n_margins, 1, what, MODEL_CHECK_MARGIN, NULL};
    m->checks = checks;
    m->margins = margins;
    m->n_checks++;
    m->n_margins++;
}

static void fx_head(Model *m, ModelHead *h, size_t dk, size_t dv, bool causal, const char *label) {
    h->wq = model_matrix(m, m->d_model, dk);
    h->wk = model_matrix(m, m->d_model, dk);
    h->wv = model_matrix(m, m->d_model, dv);
    h->wo = model_matrix(m, dv, m->d_model);
    h->causal = causal;
    h->tie_tol = 1e-6; /* absolute; the fixtures' scores are small integers */
    h->label = label;
}

static void fx_labels(Model *m) {
    m->labels = ARENA_ARRAY(&m->arena, char *, m->d_model);
    for (size_t i = 0; i < m->d_model; i++) m->labels[i] = arena_printf(&m->arena, "dir:%zu", i);
}

#define AT(M, r, c) (*matrix_at(&(M), (r), (c)))

/* Previous token: out[i] = tokens[i-1], and "-" at position 0 (where the head finds BOS).
 * Residual: 0,1 tokens a,b | 2..6 positions 0..4 | 7 BOS | 8,9,10 output a,b,"-". */
static void fx_prev_token(Model *m) {
    m->d_model = 11;
    m->max_len = 4;
    m->n_vocab = 2;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 2);
    m->vocab[0] = value_str("a");
    m->vocab[1] = value_str("b");
    m->token_type = IR_TOKENS_STR;
    m->token_embed = model_matrix(m, 3, 11);
    AT(m->token_embed, 0, 0) = 1;
    AT(m->token_embed, 1, 1) = 1;
    AT(m->token_embed, 2, 7) = 1;
    m->pos_embed = model_matrix(m, 5, 11);
    for (size_t p = 0; p < 5; p++) AT(m->pos_embed, p, 2 + p) = 1;
    size_t heads[1] = {1}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    ModelHead *h = &m->layers[0].heads[0];
    fx_head(m, h, 5, 3, false, "aggregate prev");
    for (size_t p = 1; p < 5; p++) AT(h->wq, 2 + p, p - 1) = 1; /* query at p looks for p-1 */
    for (size_t p = 0; p < 5; p++) AT(h->wk, 2 + p, p) = 1;
    AT(h->wv, 0, 0) = 1;
    AT(h->wv, 1, 1) = 1;
    AT(h->wv, 7, 2) = 1;
    for (size_t c = 0; c < 3; c++) AT(h->wo, c, 8 + c) = 1;
    m->output_name = "prev";
    m->output_kind = MODEL_OUT_CATEGORICAL;
    m->out_dim = 8;
    m->out_count = 3;
    m->out_values = ARENA_ARRAY(&m->arena, Value, 3);
    m->out_values[0] = value_str("a");
    m->out_values[1] = value_str("b");
    m->out_values[2] = value_str("-");
    fx_labels(m);
    m->program_source = "prev = aggregate(select(indices, indices - 1, ==), tokens, \"-\");\n";
    m->program_name = "prev.rasp";
    m->compile_flags = "--vocab ab --max-len 4";
}

/* Mean of the tokens (ints 0..3) over every non-BOS position (or the prefix when causal).
 * Residual: 0 token value | 1 BOS | 2 output | 3 constant one. */
static void fx_mean(Model *m, bool causal) {
    m->d_model = 4;
    m->max_len = 5;
    m->n_vocab = 4;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 4);
    m->token_type = IR_TOKENS_INT;
    m->token_embed = model_matrix(m, 5, 4);
    for (size_t v = 0; v < 4; v++) {
        m->vocab[v] = value_int((int64_t)v);
        AT(m->token_embed, v, 0) = (double)v;
    }
    AT(m->token_embed, 4, 1) = 1;
    m->pos_embed = model_matrix(m, 6, 4);
    for (size_t p = 0; p < 6; p++) AT(m->pos_embed, p, 3) = 1;
    size_t heads[1] = {1}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    ModelHead *h = &m->layers[0].heads[0];
    fx_head(m, h, 1, 1, causal, "mean");
    AT(h->wq, 3, 0) = 1;  /* every query ... */
    AT(h->wk, 1, 0) = -1; /* ... scores BOS -1 and every token 0: all tokens tie */
    AT(h->wv, 0, 0) = 1;
    AT(h->wo, 0, 2) = 1;
    m->output_name = "mean";
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_readout = ARENA_ARRAY(&m->arena, double, 4);
    m->out_readout[2] = 1;
    fx_labels(m);
}

/* out = ReLU(token - 1) + 10, an int in {10, 11, 12} (decoded with margin 0.25).
 * Residual: 0 token value | 1 BOS | 2 output. */
static void fx_relu(Model *m) {
    m->d_model = 3;
    m->max_len = 6;
    m->n_vocab = 4;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 4);
    m->token_type = IR_TOKENS_INT;
    m->token_embed = model_matrix(m, 5, 3);
    for (size_t v = 0; v < 4; v++) {
        m->vocab[v] = value_int((int64_t)v);
        AT(m->token_embed, v, 0) = (double)v;
    }
    AT(m->token_embed, 4, 1) = 1;
    m->pos_embed = model_matrix(m, 7, 3);
    size_t heads[1] = {0}, hidden[1] = {1};
    fx_layers(m, 1, heads, hidden);
    ModelMlp *f = &m->layers[0].mlp;
    AT(f->w1, 0, 0) = 1;
    f->b1[0] = -1;
    AT(f->w2, 0, 2) = 1;
    f->b2[2] = 10;
    m->output_name = "relu";
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_count = 3;
    m->out_values = ARENA_ARRAY(&m->arena, Value, 3);
    for (size_t i = 0; i < 3; i++) m->out_values[i] = value_int(10 + (int64_t)i);
    m->out_margin = 0.25;
    m->out_readout = ARENA_ARRAY(&m->arena, double, 3);
    m->out_readout[2] = 1;
    fx_labels(m);
}

/* Averages the one-hot tokens a/b of every position into an output block: one-hot only when all
 * tokens are equal. Residual: 0,1 tokens | 2 BOS | 3 one | 4,5 output. With `check`, a check
 * after layer 0 guards the output block. */
static void fx_mix(Model *m, bool check) {
    m->d_model = 6;
    m->max_len = 3;
    m->n_vocab = 2;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 2);
    m->vocab[0] = value_str("a");
    m->vocab[1] = value_str("b");
    m->token_type = IR_TOKENS_STR;
    m->token_embed = model_matrix(m, 3, 6);
    AT(m->token_embed, 0, 0) = 1;
    AT(m->token_embed, 1, 1) = 1;
    AT(m->token_embed, 2, 2) = 1;
    m->pos_embed = model_matrix(m, 4, 6);
    for (size_t p = 0; p < 4; p++) AT(m->pos_embed, p, 3) = 1;
    size_t heads[1] = {1}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    ModelHead *h = &m->layers[0].heads[0];
    fx_head(m, h, 1, 2, false, "mix");
    AT(h->wq, 3, 0) = 1;
    AT(h->wk, 2, 0) = -1;
    AT(h->wv, 0, 0) = 1;
    AT(h->wv, 1, 1) = 1;
    AT(h->wo, 0, 4) = 1;
    AT(h->wo, 1, 5) = 1;
    m->output_name = "mix";
    m->output_kind = MODEL_OUT_CATEGORICAL;
    m->out_dim = 4;
    m->out_count = 2;
    m->out_values = ARENA_ARRAY(&m->arena, Value, 2);
    m->out_values[0] = value_str("a");
    m->out_values[1] = value_str("b");
    if (check) {
        m->n_checks = 1;
        m->checks = ARENA_ARRAY(&m->arena, ModelCheck, 1);
        m->checks[0] = (ModelCheck){0, 4, 2, "mixed", MODEL_CHECK_ONE_HOT, NULL};
    }
    fx_labels(m);
}

/* A numerical output whose kind comes from a kind block. Each token puts a number on dim 0 and
 * picks a kind on dims 1..3 (bool, int, float); values {False, 0, 0.0, True, 1, 1.0, 2.5}, margin
 * 0.25. Tokens: "b" 1 bool, "i" 1 int, "f" 1 float, "n" -1e-17 int, "m" -1e-17 float, "z" 0.6
 * int (outside every margin), "q" 1 with kinds int and float (not one-hot), "w" 2.5 int (no int
 * member there). Residual: 0 value | 1,2,3 kinds | 4 BOS. One layer, no heads, no MLP units. */
static void fx_kinds(Model *m) {
    static const char *const toks = "bifnmzqw";
    static const double x[8] = {1, 1, 1, -1e-17, -1e-17, 0.6, 1, 2.5};
    static const int kind[8] = {1, 2, 3, 2, 3, 2, 2, 2};
    m->d_model = 5;
    m->max_len = 6;
    m->n_vocab = 8;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 8);
    m->token_type = IR_TOKENS_STR;
    m->token_embed = model_matrix(m, 9, 5);
    for (size_t t = 0; t < 8; t++) {
        m->vocab[t] = value_str(arena_strndup(&m->arena, toks + t, 1));
        AT(m->token_embed, t, 0) = x[t];
        AT(m->token_embed, t, kind[t]) = 1;
    }
    AT(m->token_embed, 6, 3) = 1; /* "q": two kinds */
    AT(m->token_embed, 8, 4) = 1;
    m->pos_embed = model_matrix(m, 7, 5);
    size_t heads[1] = {0}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    m->output_name = "kinds";
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_readout = ARENA_ARRAY(&m->arena, double, 5);
    m->out_readout[0] = 1;
    Value v[7] = {value_bool(false), value_int(0), value_float(0.0), value_bool(true), value_int(1), value_float(1.0),
                  value_float(2.5)};
    m->out_count = 7;
    m->out_values = ARENA_ARRAY(&m->arena, Value, 7);
    memcpy(m->out_values, v, sizeof v);
    m->out_margin = 0.25;
    m->out_kind_dim = 1;
    m->out_kind_count = 3;
    m->out_kinds = ARENA_ARRAY(&m->arena, ValueKind, 3);
    m->out_kinds[0] = VAL_BOOL;
    m->out_kinds[1] = VAL_INT;
    m->out_kinds[2] = VAL_FLOAT;
    m->out_error_bound = 0;
    fx_labels(m);
}

/* Per-length value sets: out = token + c (tokens ints 0 and 1; c = fl(fl(20/7) * fl(19/3)) comes
 * from every position's embedding). The value sets by length: 1: {A, A + 1}, 2: {B, B + 1} with
 * A = fl(fl(20/7) * fl(19/3)) and B = fl(fl(19/7) * fl(20/3)) (1 ulp above A: ~380/21 computed
 * two ways), 3: {0, 100}; out_values is their union, where A and B are far closer than twice the
 * margin 0.25. Residual: 0 token value | 1 BOS | 2 the constant c. */
static double fx_len_a(void) { return (20.0 / 7.0) * (19.0 / 3.0); }
static double fx_len_b(void) { return (19.0 / 7.0) * (20.0 / 3.0); }

static void fx_by_length(Model *m) {
    double a = fx_len_a(), b = fx_len_b();
    m->d_model = 3;
    m->max_len = 3;
    m->n_vocab = 2;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 2);
    m->vocab[0] = value_int(0);
    m->vocab[1] = value_int(1);
    m->token_type = IR_TOKENS_INT;
    m->token_embed = model_matrix(m, 3, 3);
    AT(m->token_embed, 1, 0) = 1;
    AT(m->token_embed, 2, 1) = 1;
    m->pos_embed = model_matrix(m, 4, 3);
    for (size_t p = 0; p < 4; p++) AT(m->pos_embed, p, 2) = a;
    size_t heads[1] = {0}, hidden[1] = {0};
    fx_layers(m, 1, heads, hidden);
    m->output_name = "scaled";
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_readout = ARENA_ARRAY(&m->arena, double, 3);
    m->out_readout[0] = 1;
    m->out_readout[2] = 1;
    m->out_margin = 0.25;
    Value by_len[6] = {value_float(a), value_float(a + 1), value_float(b), value_float(b + 1), value_int(0),
                       value_int(100)};
    m->out_len_count = 3;
    m->out_len_start = ARENA_ARRAY(&m->arena, size_t, 4);
    for (size_t n = 0; n <= 3; n++) m->out_len_start[n] = 2 * n;
    m->out_len_values = ARENA_ARRAY(&m->arena, Value, 6);
    memcpy(m->out_len_values, by_len, sizeof by_len);
    Value all[6] = {value_int(0), value_float(a), value_float(b), value_float(a + 1), value_float(b + 1), value_int(100)};
    m->out_count = 6;
    m->out_values = ARENA_ARRAY(&m->arena, Value, 6);
    memcpy(m->out_values, all, sizeof all);
    fx_labels(m);
}

/* A gated MLP multiplying two real-valued residual dims: r_i = x_i * x_{i-1} for real tokens x
 * in [-4, 4] (x_{-1} = 0, the BOS row's). A causal head copies the previous row's token value
 * to y; two gated units make ReLU(x) y - ReLU(-x) y = x y, exactly (one rounding). The output
 * is real-valued with an error bound of 1e-9 (the reference gives -0.0 for x * 0 with x < 0,
 * the model +0.0). Residual: 0 x | 1 BOS | 2 y | 3 r | 4 + p position p (p = 0..6). */
static const char FX_PRODUCT_SOURCE[] = "tokens = tokens_float;\n"
                                        "prev = aggregate(select(indices, indices - 1, ==), tokens, 0);\n"
                                        "r = tokens * prev;\n";

static void fx_product(Model *m) {
    size_t L = 6, D = 4 + L + 1;
    m->d_model = D;
    m->max_len = L;
    m->n_vocab = 1;
    m->vocab = ARENA_ARRAY(&m->arena, Value, 1);
    m->vocab[0] = value_float(-4.0);
    m->token_type = IR_TOKENS_FLOAT;
    m->numeric_tokens = true;
    m->token_value_dim = 0;
    m->token_lo = -4;
    m->token_hi = 4;
    m->token_embed = model_matrix(m, 2, D);
    AT(m->token_embed, 1, 1) = 1;
    m->pos_embed = model_matrix(m, L + 1, D);
    for (size_t p = 0; p <= L; p++) AT(m->pos_embed, p, 4 + p) = 1;
    size_t heads[1] = {1}, hidden[1] = {2};
    fx_layers(m, 1, heads, hidden);
    ModelHead *h = &m->layers[0].heads[0];
    fx_head(m, h, L + 1, 1, true, "aggregate prev");
    for (size_t p = 1; p <= L; p++) AT(h->wq, 4 + p, p - 1) = 1; /* query at p looks for p-1 */
    for (size_t p = 0; p <= L; p++) AT(h->wk, 4 + p, p) = 1;
    AT(h->wv, 0, 0) = 1;
    AT(h->wo, 0, 2) = 1;
    fx_gate(m, 0);
    ModelMlp *f = &m->layers[0].mlp;
    AT(f->w1, 0, 0) = 1;  /* ReLU(x) ... */
    AT(f->w1, 0, 1) = -1; /* ReLU(-x) ... */
    AT(f->w3, 2, 0) = 1;  /* ... times y */
    AT(f->w3, 2, 1) = 1;
    AT(f->w2, 0, 3) = 1;
    AT(f->w2, 1, 3) = -1;
    m->output_name = "r";
    m->output_kind = MODEL_OUT_NUMERICAL;
    m->out_readout = ARENA_ARRAY(&m->arena, double, D);
    m->out_readout[3] = 1;
    m->out_error_bound = 1e-9;
    fx_labels(m);
    m->program_source = FX_PRODUCT_SOURCE;
    m->program_name = "prod.rasp";
    m->compile_flags = "--max-len 6 --range -4..4";
}

#endif
