/* Compiled attention-only models as FUT targets (fut/from_model.h explains the temperature). */
#include "fut/from_model.h"

#include <math.h>

#include "ir/eval.h"
#include "runtime/forward.h"

static FutMat mat_from_model(Arena *a, Matrix w, double scale) {
    FutMat m = fut_mat_new(a, w.rows, w.cols);
    matrix_to_dense(&w, m.data);
    for (size_t i = 0; i < w.rows * w.cols; i++) m.data[i] = scale * m.data[i];
    return m;
}

/* A layer is attention-only when its MLP has no hidden units and adds no bias. */
static bool mlp_is_empty(const Model *m, const ModelMlp *f) {
    if (f->w1.cols > 0) return false;
    for (size_t j = 0; j < m->d_model; j++)
        if (f->b2 && f->b2[j] != 0.0) return false;
    return true;
}

static bool check_attention_only(const Model *m, char *err, size_t errsize) {
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelMlp *f = &m->layers[l].mlp;
        if (mlp_is_empty(m, f)) continue;
        snprintf(err, errsize,
                 "layer %zu has an MLP (%zu hidden units%s): a FUT target is attention-only, so only "
                 "programs that compile to attention layers alone can be exported",
                 l, f->w1.cols, f->w1.cols ? "" : ", non-zero bias");
        return false;
    }
    return true;
}

/* Whether every head is causal (or none): the target has one flag. */
static bool common_causal(const Model *m, bool *causal, char *err, size_t errsize) {
    size_t n = 0, yes = 0;
    for (size_t l = 0; l < m->n_layers; l++)
        for (size_t h = 0; h < m->layers[l].n_heads; h++, n++) yes += m->layers[l].heads[h].causal;
    if (yes != 0 && yes != n) {
        snprintf(err, errsize, "%zu of the model's %zu heads are causal: a FUT target masks all heads or none", yes,
                 n);
        return false;
    }
    *causal = n > 0 && yes == n;
    return true;
}

/* The head with scores beta * (X W_Q)(X W_K)^T: W_Q times beta sqrt(d_k) cancels the target's
 * 1/sqrt(d_k). */
static FutHead head_from_model(Arena *a, const ModelHead *h, double beta) {
    FutHead t;
    t.wq = mat_from_model(a, h->wq, beta * sqrt((double)h->wq.cols));
    t.wk = mat_from_model(a, h->wk, 1.0);
    t.wv = mat_from_model(a, h->wv, 1.0);
    t.wo = mat_from_model(a, h->wo, 1.0);
    return t;
}

/* A head that adds nothing: W_V = W_O = 0 (d_k = d_v = 1, the format needs >= 1). */
static FutHead zero_head(Arena *a, size_t d) {
    FutHead t = {fut_mat_new(a, d, 1), fut_mat_new(a, d, 1), fut_mat_new(a, d, 1), fut_mat_new(a, 1, d)};
    return t;
}

/* A compiled head with d_k = 0 scores every key 0 (the runtime averages them all); a target
 * head needs d_k >= 1, and a zero column scores the same. */
static bool head_shapes_ok(const Model *m, const ModelHead *h) {
    size_t D = m->d_model;
    return h->wq.rows == D && h->wk.rows == D && h->wk.cols == h->wq.cols && h->wv.rows == D &&
           h->wo.rows == h->wv.cols && h->wo.cols == D;
}

static FutHead head_padded(Arena *a, const Model *m, const ModelHead *h, double beta) {
    FutHead t = head_from_model(a, h, beta);
    size_t D = m->d_model;
    if (t.wq.cols == 0) {
        t.wq = fut_mat_new(a, D, 1);
        t.wk = fut_mat_new(a, D, 1);
    }
    if (t.wv.cols == 0) {
        t.wv = fut_mat_new(a, D, 1);
        t.wo = fut_mat_new(a, 1, D);
    }
    return t;
}

bool fut_target_from_model(Arena *a, const Model *m, double beta, FutTarget *out, char *err, size_t errsize) {
    if (!(beta > 0.0) || !isfinite(beta)) {
        snprintf(err, errsize, "the inverse temperature beta must be finite and > 0 (got %g)", beta);
        return false;
    }
    if (!check_attention_only(m, err, errsize)) return false;
    bool causal;
    if (!common_causal(m, &causal, err, errsize)) return false;
    size_t L = m->n_layers ? m->n_layers : 1, H = 1;
    if (L > FUT_MAX_LAYERS) {
        snprintf(err, errsize, "the model has %zu layers; a FUT target has at most %d", m->n_layers, FUT_MAX_LAYERS);
        return false;
    }
    for (size_t l = 0; l < m->n_layers; l++)
        if (m->layers[l].n_heads > H) H = m->layers[l].n_heads;
    out->L = L;
    out->H = H;
    out->d = m->d_model;
    out->residual = true;
    out->causal = causal;
    out->heads = ARENA_ARRAY(a, FutHead, L * H);
    for (size_t l = 0; l < L; l++)
        for (size_t h = 0; h < H; h++) {
            const ModelHead *mh = l < m->n_layers && h < m->layers[l].n_heads ? &m->layers[l].heads[h] : NULL;
            if (mh && !head_shapes_ok(m, mh)) {
                snprintf(err, errsize, "layer %zu head %zu: weight shapes do not match the residual width %zu", l, h,
                         m->d_model);
                return false;
            }
            if (mh && mh->bos_extra > 0) { /* a FUT head is plain softmax attention, with no sink */
                snprintf(err, errsize, "layer %zu head %zu weighs BOS %g times (a heavy BOS); a FUT target's heads "
                         "have none", l, h, 1 + mh->bos_extra);
                return false;
            }
            out->heads[l * H + h] = mh ? head_padded(a, m, mh, beta) : zero_head(a, m->d_model);
        }
    return fut_target_validate(out, err, errsize);
}

bool fut_model_token_ids(const Model *m, const Value *input, size_t n, size_t *ids, char *err, size_t errsize) {
    if (n > m->max_len) {
        snprintf(err, errsize, "input has length %zu > max length %zu", n, m->max_len);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        Value tok;
        if (!ir_convert_token((IrTokenType)m->token_type, input[i], &tok, err, errsize)) return false;
        ids[i] = m->n_vocab;
        for (size_t v = 0; v < m->n_vocab && ids[i] == m->n_vocab; v++)
            if (value_equal(tok, m->vocab[v])) ids[i] = v;
        if (ids[i] == m->n_vocab) {
            char text[120];
            value_format(input[i], text, sizeof text);
            snprintf(err, errsize, "token %s at position %zu is not in the vocabulary", text, i);
            return false;
        }
    }
    return true;
}

FutMat fut_model_embedding(Arena *a, const Model *m, const size_t *ids, size_t n) {
    size_t D = m->d_model;
    FutMat X = fut_mat_new(a, n + 1, D);
    for (size_t r = 0; r <= n; r++) {
        size_t tok = r == 0 ? m->n_vocab : ids[r - 1];
        for (size_t j = 0; j < D; j++)
            FUT_AT(X, r, j) = matrix_get(&m->token_embed, tok, j) + matrix_get(&m->pos_embed, r, j);
    }
    return X;
}

bool fut_model_readout(Arena *a, const Model *m, FutMat Y, Value **out, char *err, size_t errsize) {
    if (Y.rows == 0 || Y.cols != m->d_model) {
        snprintf(err, errsize, "residual has shape %zux%zu, the model's width is %zu (plus a BOS row)", Y.rows,
                 Y.cols, m->d_model);
        return false;
    }
    size_t n = Y.rows - 1;
    Value *res = ARENA_ARRAY(a, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        const double *x = Y.data + (i + 1) * Y.cols;
        if (m->output_kind == MODEL_OUT_NUMERICAL) { /* decoded as the runtime does */
            if (!model_read_output(m, x, i, n, &res[i], err, errsize)) return false;
            continue;
        }
        size_t hot;
        if (!model_block_one_hot(x, m->out_dim, m->out_count, &hot)) {
            snprintf(err, errsize, "output s-op %s is not one-hot at position %zu", m->output_name, i);
            return false;
        }
        res[i] = m->out_values[hot];
    }
    *out = res;
    return true;
}

void fut_print_rows(FILE *f, FutMat X) {
    for (size_t i = 0; i < X.rows; i++) {
        if (i) fputc(';', f);
        for (size_t j = 0; j < X.cols; j++) fprintf(f, "%s%.17g", j ? "," : "", FUT_AT(X, i, j));
    }
    fputc('\n', f);
}
