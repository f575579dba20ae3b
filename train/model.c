/* Building the model (tables, backbone, buffers, initialisation), batches, and the dispatch to
 * the engine of the chosen precision (train/model.h). */
#include "train/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/engine.h"

#include <cblas.h>

static const char *const KIND_NAMES[] = {"sparse", "looped", "random", "full"};
static const char *const POS_NAMES[] = {"absolute", "none", "rotary"};

const char *tr_kind_name(TrKind k) { return (unsigned)k < 4 ? KIND_NAMES[k] : "?"; }
const char *tr_pos_name(TrPos p) { return (unsigned)p < 3 ? POS_NAMES[p] : "?"; }

bool tr_kind_parse(const char *s, TrKind *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(s, KIND_NAMES[i]) == 0) {
            *out = (TrKind)i;
            return true;
        }
    return false;
}

bool tr_pos_parse(const char *s, TrPos *out) {
    for (int i = 0; i < 3; i++)
        if (strcmp(s, POS_NAMES[i]) == 0) {
            *out = (TrPos)i;
            return true;
        }
    return false;
}

void tr_blas_single_thread(void) {
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
#endif
}

/* ---- tables ---------------------------------------------------------------------------- */

static size_t table_add(Arena *a, TrTable *t, const char *name, size_t rows, size_t cols, bool trainable) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        t->t = arena_grow(a, t->t, t->cap, cap, sizeof(TrTensor));
        t->cap = cap;
    }
    TrTensor *x = &t->t[t->n];
    snprintf(x->name, sizeof x->name, "%.47s", name);
    x->rows = rows;
    x->cols = cols;
    x->offset = t->total;
    x->trainable = trainable;
    t->total += rows * cols;
    return t->n++;
}

static size_t add_param(TrModel *md, bool trainable, size_t rows, size_t cols, const char *fmt, size_t l, size_t h) {
    char name[96];
    snprintf(name, sizeof name, fmt, l, h);
    return table_add(&md->arena, &md->params, name, rows, cols, trainable);
}

static size_t add_act(TrModel *md, size_t rows, size_t cols, const char *fmt, size_t l, size_t h) {
    char name[96];
    snprintf(name, sizeof name, fmt, l, h);
    return table_add(&md->arena, &md->acts, name, rows, cols, false);
}

/* ---- precision dispatch ------------------------------------------------------------------ */

static size_t real_size(const TrModel *md) { return md->cfg.precision == TR_F32 ? sizeof(float) : sizeof(double); }

double tr_model_forward(TrModel *md, const TrBatch *b) {
    return md->cfg.precision == TR_F32 ? tr_engine_forward_f32(md, b) : tr_engine_forward_f64(md, b);
}

void tr_model_backward(TrModel *md, const TrBatch *b, bool all) {
    if (md->cfg.precision == TR_F32) tr_engine_backward_f32(md, b, all);
    else tr_engine_backward_f64(md, b, all);
}

double tr_model_adam(TrModel *md, const TrAdam *opt) {
    return md->cfg.precision == TR_F32 ? tr_engine_adam_f32(md, opt) : tr_engine_adam_f64(md, opt);
}

void tr_model_predictions(const TrModel *md, const TrBatch *b, uint32_t *pred) {
    if (md->cfg.precision == TR_F32) tr_engine_predictions_f32(md, b, pred);
    else tr_engine_predictions_f64(md, b, pred);
}

size_t tr_model_correct(const TrModel *md, const TrBatch *b) {
    uint32_t *pred = malloc((b->n_answers ? b->n_answers : 1) * sizeof *pred);
    if (!pred) abort();
    tr_model_predictions(md, b, pred);
    size_t ok = 0;
    for (size_t a = 0; a < b->n_answers; a++) ok += pred[a] == b->ans_label[a];
    free(pred);
    return ok;
}

double tr_model_param_at(const TrModel *md, size_t tensor, size_t i) {
    return md->cfg.precision == TR_F32 ? tr_engine_get_f32(md, tensor, i, 0) : tr_engine_get_f64(md, tensor, i, 0);
}

double tr_model_grad_at(const TrModel *md, size_t tensor, size_t i) {
    return md->cfg.precision == TR_F32 ? tr_engine_get_f32(md, tensor, i, 1) : tr_engine_get_f64(md, tensor, i, 1);
}

/* The compressed form of a fixed tensor whose entries are at most a quarter non-zero (NULL
 * otherwise); rebuilt whenever the tensor changes. Storage: malloc, freed with the model. */
static void sparse_free(TrSparse *s) {
    if (!s) return;
    free(s->row_start);
    free(s->col);
    free(s->val);
    free(s);
}

static void refresh_sparse(TrModel *md, size_t tensor) {
    const TrTensor *t = &md->params.t[tensor];
    sparse_free(md->sparse[tensor]);
    md->sparse[tensor] = NULL;
    if (t->trainable) return;
    size_t n = t->rows * t->cols, nnz = 0;
    for (size_t i = 0; i < n; i++) nnz += tr_model_param_at(md, tensor, i) != 0;
    if (4 * nnz > n) return;
    TrSparse *s = calloc(1, sizeof *s);
    if (!s) abort();
    *s = (TrSparse){.rows = t->rows, .cols = t->cols, .nnz = nnz, .row_start = malloc((t->rows + 1) * sizeof(size_t)),
                    .col = malloc((nnz ? nnz : 1) * sizeof(uint32_t)), .val = malloc((nnz ? nnz : 1) * sizeof(double))};
    if (!s->row_start || !s->col || !s->val) abort();
    size_t k = 0;
    for (size_t r = 0; r < t->rows; r++) {
        s->row_start[r] = k;
        for (size_t c = 0; c < t->cols; c++) {
            double v = tr_model_param_at(md, tensor, r * t->cols + c);
            if (v != 0) s->col[k] = (uint32_t)c, s->val[k++] = v;
        }
    }
    s->row_start[t->rows] = k;
    md->sparse[tensor] = s;
}

static void put_raw(TrModel *md, size_t tensor, size_t i, double v) {
    if (md->cfg.precision == TR_F32) tr_engine_put_f32(md, tensor, i, v);
    else tr_engine_put_f64(md, tensor, i, v);
}

void tr_model_param_put(TrModel *md, size_t tensor, size_t i, double v) {
    put_raw(md, tensor, i, v);
    if (md->sparse[tensor]) refresh_sparse(md, tensor);
}

void tr_model_get(const TrModel *md, size_t tensor, double *out) {
    size_t n = md->params.t[tensor].rows * md->params.t[tensor].cols;
    for (size_t i = 0; i < n; i++) out[i] = tr_model_param_at(md, tensor, i);
}

void tr_model_set(TrModel *md, size_t tensor, const double *in) {
    size_t n = md->params.t[tensor].rows * md->params.t[tensor].cols;
    for (size_t i = 0; i < n; i++) put_raw(md, tensor, i, in[i]);
    refresh_sparse(md, tensor);
}

size_t tr_model_find(const TrModel *md, const char *name) {
    for (size_t i = 0; i < md->params.n; i++)
        if (strcmp(md->params.t[i].name, name) == 0) return i;
    return TR_NONE;
}

size_t tr_model_trainable(const TrModel *md) {
    size_t n = 0;
    for (size_t i = 0; i < md->params.n; i++)
        if (md->params.t[i].trainable) n += md->params.t[i].rows * md->params.t[i].cols;
    return n;
}

/* ---- initialisation ---------------------------------------------------------------------- */

static void put_mat(TrModel *md, size_t tensor, FutMat M) {
    tr_model_set(md, tensor, M.data);
}

static void put_gauss(TrModel *md, size_t tensor, FutRng *rng, double sd) {
    size_t n = md->params.t[tensor].rows * md->params.t[tensor].cols;
    for (size_t i = 0; i < n; i++) put_raw(md, tensor, i, sd * fut_rng_gauss(rng));
}

static void put_const(TrModel *md, size_t tensor, double v) {
    size_t n = md->params.t[tensor].rows * md->params.t[tensor].cols;
    for (size_t i = 0; i < n; i++) put_raw(md, tensor, i, v);
}

/* Independent random streams from one seed. */
enum { STREAM_INIT = 1, STREAM_MLP = 2 };
static void stream(FutRng *r, uint64_t seed, uint64_t which) { fut_rng_seed(r, seed * 0x9e3779b97f4a7c15ULL + which); }

static bool build_backbone(TrModel *md, char *err, size_t es) {
    const TrConfig *c = &md->cfg;
    switch (c->kind) {
    case TR_SPARSE: return fut_backbone_sparse(&md->arena, c->L, c->H, c->d, c->residual, c->causal, &md->backbone, err, es);
    case TR_LOOPED: return fut_backbone_looped(&md->arena, c->L, c->H, c->d, c->residual, c->causal, &md->backbone, err, es);
    case TR_RANDOM:
        return fut_backbone_random(&md->arena, c->L, c->H, c->d, c->residual, c->causal, c->m, c->seed, &md->backbone,
                                   err, es);
    case TR_FULL: break;
    }
    return true;
}

static bool validate(const TrConfig *c, char *err, size_t es) {
    if (c->L < 1 || c->L > 16 || c->H < 1 || c->H > 16 || c->d < 1 || c->d > 1024) {
        snprintf(err, es, "need 1 <= layers <= 16, 1 <= heads <= 16, 1 <= width d <= 1024 (got L=%zu H=%zu d=%zu)",
                 c->L, c->H, c->d);
        return false;
    }
    if (c->vocab < 1 || c->vocab > 4096 || c->max_len < 1 || c->max_len > TR_MAX_LEN || c->classes < 2 ||
        c->classes > 4096) {
        snprintf(err, es, "bad task shape (vocab %zu, max length %zu, classes %zu)", c->vocab, c->max_len, c->classes);
        return false;
    }
    if (c->m && c->kind != TR_RANDOM && c->kind != TR_FULL) {
        snprintf(err, es, "--m applies to random and full backbones only (sparse and looped widths follow from L, H, d)");
        return false;
    }
    return true;
}

bool tr_model_init(TrModel *md, const TrConfig *cfg, size_t batch_cap, char *err, size_t es) {
    memset(md, 0, sizeof *md);
    if (!validate(cfg, err, es)) return false;
    md->cfg = *cfg;
    arena_init(&md->arena);
    const TrConfig *c = &md->cfg;
    if (!build_backbone(md, err, es)) {
        arena_free(&md->arena);
        return false;
    }
    md->m = c->kind == TR_FULL ? (c->m ? c->m : fut_sparse_width(c->L, c->H, c->d, c->residual)) : md->backbone.m;
    if (md->m == 0 || md->m > 8192) {
        snprintf(err, es, "width m=%zu out of range for training (1..8192)", md->m);
        arena_free(&md->arena);
        return false;
    }
    size_t m = md->m, d = c->d, L = c->L, H = c->H;
    md->hidden = c->mlp ? (c->mlp_hidden ? c->mlp_hidden : m) : 0;
    md->d_in = c->vocab + 1 + (c->pos == TR_POS_ABSOLUTE ? c->max_len + 1 : 0);
    md->batch_cap = batch_cap ? batch_cap : 1;
    md->rows_cap = md->batch_cap * (c->max_len + 1);
    md->p_cap = md->batch_cap * (c->max_len + 1) * (c->max_len + 1);
    bool full = c->kind == TR_FULL, tied = c->kind == TR_LOOPED;

    /* parameters */
    md->embed = add_param(md, true, md->d_in, m, "embed", 0, 0);
    md->layer = ARENA_ARRAY(&md->arena, TrLayer, L);
    for (size_t l = 0; l < L; l++) {
        TrLayer *P = &md->layer[l];
        *P = (TrLayer){.ln1_g = TR_NONE, .ln1_b = TR_NONE, .skip = TR_NONE, .ln2_g = TR_NONE, .ln2_b = TR_NONE,
                       .w1 = TR_NONE, .b1 = TR_NONE, .w2 = TR_NONE, .b2 = TR_NONE};
        P->rq = ARENA_ARRAY(&md->arena, size_t, H);
        P->rk = ARENA_ARRAY(&md->arena, size_t, H);
        P->rv = ARENA_ARRAY(&md->arena, size_t, H);
        if (c->layernorm) {
            P->ln1_g = add_param(md, full, 1, m, "layers.%zu.ln1.gain", l, 0);
            P->ln1_b = add_param(md, full, 1, m, "layers.%zu.ln1.bias", l, 0);
        }
        for (size_t h = 0; h < H; h++) {
            if (tied && l > 0) {
                P->rq[h] = md->layer[0].rq[h];
                P->rk[h] = md->layer[0].rk[h];
                P->rv[h] = md->layer[0].rv[h];
                continue;
            }
            char name[96];
            static const char *const WHAT[3] = {"r_q", "r_k", "r_v"};
            size_t *slot[3] = {&P->rq[h], &P->rk[h], &P->rv[h]};
            for (int w = 0; w < 3; w++) {
                if (tied) snprintf(name, sizeof name, "shared.heads.%zu.%s", h, WHAT[w]);
                else snprintf(name, sizeof name, "layers.%zu.heads.%zu.%s", l, h, WHAT[w]);
                *slot[w] = table_add(&md->arena, &md->params, name, m, w == 2 ? m : d, full);
            }
        }
        if (c->residual && md->backbone.skip) {
            if (tied && l > 0) P->skip = md->layer[0].skip;
            else P->skip = add_param(md, false, m, m, tied ? "shared.skip" : "layers.%zu.skip", l, 0);
        }
        if (c->mlp) {
            if (c->layernorm) {
                P->ln2_g = add_param(md, full, 1, m, "layers.%zu.ln2.gain", l, 0);
                P->ln2_b = add_param(md, full, 1, m, "layers.%zu.ln2.bias", l, 0);
            }
            P->w1 = add_param(md, full, m, md->hidden, "layers.%zu.mlp.w1", l, 0);
            P->b1 = add_param(md, full, 1, md->hidden, "layers.%zu.mlp.b1", l, 0);
            P->w2 = add_param(md, full, md->hidden, m, "layers.%zu.mlp.w2", l, 0);
            P->b2 = add_param(md, full, 1, m, "layers.%zu.mlp.b2", l, 0);
        }
    }
    md->lnf_g = md->lnf_b = TR_NONE;
    if (c->layernorm) {
        md->lnf_g = add_param(md, full, 1, m, "final_ln.gain", 0, 0);
        md->lnf_b = add_param(md, full, 1, m, "final_ln.bias", 0, 0);
    }
    md->unembed = add_param(md, true, m, c->classes, "unembed", 0, 0);

    /* activations (an index reused when a step is the identity: z1 = y without layer norm) */
    size_t R = md->rows_cap, hid = md->hidden;
    md->y0 = add_act(md, R, m, "y0", 0, 0);
    md->lact = ARENA_ARRAY(&md->arena, TrLayerActs, L);
    size_t y = md->y0;
    for (size_t l = 0; l < L; l++) {
        TrLayerActs *A = &md->lact[l];
        A->ln1_mean = A->ln1_rstd = A->ln2_mean = A->ln2_rstd = A->h_pre = A->h_act = TR_NONE;
        A->z1 = y;
        if (c->layernorm) {
            A->ln1_mean = add_act(md, R, 1, "layers.%zu.ln1.mean", l, 0);
            A->ln1_rstd = add_act(md, R, 1, "layers.%zu.ln1.rstd", l, 0);
            A->z1 = add_act(md, R, m, "layers.%zu.z1", l, 0);
        }
        A->q = ARENA_ARRAY(&md->arena, size_t, H);
        A->k = ARENA_ARRAY(&md->arena, size_t, H);
        A->v = ARENA_ARRAY(&md->arena, size_t, H);
        A->p = ARENA_ARRAY(&md->arena, size_t, H);
        for (size_t h = 0; h < H; h++) {
            A->q[h] = add_act(md, R, d, "layers.%zu.heads.%zu.q", l, h);
            A->k[h] = add_act(md, R, d, "layers.%zu.heads.%zu.k", l, h);
            A->v[h] = add_act(md, R, m, "layers.%zu.heads.%zu.v", l, h);
            A->p[h] = add_act(md, md->p_cap, 1, "layers.%zu.heads.%zu.att", l, h);
        }
        A->y_mid = add_act(md, R, m, "layers.%zu.y_mid", l, 0);
        A->y_out = A->y_mid;
        A->z2 = A->y_mid;
        if (c->mlp) {
            if (c->layernorm) {
                A->ln2_mean = add_act(md, R, 1, "layers.%zu.ln2.mean", l, 0);
                A->ln2_rstd = add_act(md, R, 1, "layers.%zu.ln2.rstd", l, 0);
                A->z2 = add_act(md, R, m, "layers.%zu.z2", l, 0);
            }
            A->h_pre = add_act(md, R, hid, "layers.%zu.mlp.pre", l, 0);
            A->h_act = add_act(md, R, hid, "layers.%zu.mlp.act", l, 0);
            A->y_out = add_act(md, R, m, "layers.%zu.y_out", l, 0);
        }
        y = A->y_out;
    }
    md->lnf_mean = md->lnf_rstd = TR_NONE;
    md->zf = y;
    if (c->layernorm) {
        md->lnf_mean = add_act(md, R, 1, "final_ln.mean", 0, 0);
        md->lnf_rstd = add_act(md, R, 1, "final_ln.rstd", 0, 0);
        md->zf = add_act(md, R, m, "final_ln.z", 0, 0);
    }
    md->logits = add_act(md, R, c->classes, "logits", 0, 0);
    md->probs = add_act(md, R, c->classes, "probs", 0, 0);

    size_t rs = real_size(md);
    md->param = arena_array(&md->arena, md->params.total, rs);
    md->grad = arena_array(&md->arena, md->params.total, rs);
    md->adam_m = arena_array(&md->arena, md->params.total, rs);
    md->adam_v = arena_array(&md->arena, md->params.total, rs);
    md->act = arena_array(&md->arena, md->acts.total, rs);
    md->dact = arena_array(&md->arena, md->acts.total, rs);
    md->scratch = arena_array(&md->arena, (c->max_len + 1) * (c->max_len + 1), rs);
    md->sparse = ARENA_ARRAY(&md->arena, TrSparse *, md->params.n);

    /* initial values */
    FutRng init, mlp;
    stream(&init, c->seed, STREAM_INIT);
    stream(&mlp, c->seed, STREAM_MLP);
    put_gauss(md, md->embed, &init, c->init_embed > 0 ? c->init_embed : 1.0);
    for (size_t l = 0; l < L; l++) {
        TrLayer *P = &md->layer[l];
        if (c->layernorm) put_const(md, P->ln1_g, 1.0);
        for (size_t h = 0; h < H && !(tied && l > 0); h++) {
            size_t i = l * H + h;
            if (full) {
                double sd = 1.0 / sqrt((double)m);
                put_gauss(md, P->rq[h], &init, sd);
                put_gauss(md, P->rk[h], &init, sd);
                put_gauss(md, P->rv[h], &init, sd);
            } else {
                put_mat(md, P->rq[h], md->backbone.rq[i]);
                put_mat(md, P->rk[h], md->backbone.rk[i]);
                put_mat(md, P->rv[h], md->backbone.rv[i]);
            }
        }
        if (P->skip != TR_NONE && !(tied && l > 0)) put_mat(md, P->skip, md->backbone.skip[l]);
        if (c->mlp) {
            if (c->layernorm) put_const(md, P->ln2_g, 1.0);
            put_gauss(md, P->w1, &mlp, sqrt(2.0 / (double)m));
            put_gauss(md, P->w2, &mlp, 1.0 / sqrt((double)md->hidden));
        }
    }
    if (c->layernorm) put_const(md, md->lnf_g, 1.0);
    put_gauss(md, md->unembed, &init, 1.0 / sqrt((double)m));
    for (size_t i = 0; i < md->params.n; i++) refresh_sparse(md, i);
    return true;
}

void tr_model_free(TrModel *md) {
    for (size_t i = 0; md->sparse && i < md->params.n; i++) sparse_free(md->sparse[i]);
    arena_free(&md->arena);
    memset(md, 0, sizeof *md);
}

/* ---- batches ------------------------------------------------------------------------------- */

void tr_batch_build(Arena *a, const TrModel *md, const TrExample *ex, size_t n, TrBatch *b) {
    memset(b, 0, sizeof *b);
    size_t rows = 0, answers = 0, pcells = 0;
    if (n > md->batch_cap) {
        fprintf(stderr, "tr_batch_build: %zu examples for a model built for batches of %zu\n", n, md->batch_cap);
        abort();
    }
    for (size_t s = 0; s < n; s++) {
        if (ex[s].len > md->cfg.max_len) {
            fprintf(stderr, "tr_batch_build: an example of length %zu for a model of max_len %zu\n", ex[s].len,
                    md->cfg.max_len);
            abort();
        }
        rows += ex[s].len + 1;
        answers += ex[s].n_answers;
    }
    b->n_seq = n;
    b->rows = rows;
    b->n_answers = answers;
    b->seg_row = ARENA_ARRAY(a, size_t, n ? n : 1);
    b->seg_len = ARENA_ARRAY(a, size_t, n ? n : 1);
    b->seg_p = ARENA_ARRAY(a, size_t, n ? n : 1);
    b->ids = ARENA_ARRAY(a, uint32_t, rows ? rows : 1);
    b->pos = ARENA_ARRAY(a, uint32_t, rows ? rows : 1);
    b->ans_row = ARENA_ARRAY(a, size_t, answers ? answers : 1);
    b->ans_label = ARENA_ARRAY(a, uint32_t, answers ? answers : 1);
    size_t r = 0, k = 0;
    for (size_t s = 0; s < n; s++) {
        size_t len = ex[s].len + 1;
        b->seg_row[s] = r;
        b->seg_len[s] = len;
        b->seg_p[s] = pcells;
        pcells += len * len;
        b->ids[r] = (uint32_t)md->cfg.vocab; /* BOS */
        b->pos[r] = 0;
        for (size_t i = 0; i < ex[s].len; i++) {
            b->ids[r + 1 + i] = ex[s].tok[i];
            b->pos[r + 1 + i] = (uint32_t)(i + 1);
        }
        for (size_t j = 0; j < ex[s].n_answers; j++) {
            b->ans_row[k] = r + 1 + ex[s].answers[j].pos;
            b->ans_label[k] = ex[s].answers[j].label;
            k++;
        }
        r += len;
    }
}
