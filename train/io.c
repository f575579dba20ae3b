/* Trained models on disk (train/io.h). */
#include "train/io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fut/io.h"
#include "runtime/safetensors.h"

/* ---- writing --------------------------------------------------------------------------- */

typedef struct Meta {
    StMeta kv[40];
    size_t n;
    char text[40][64];
} Meta;

static void meta_put(Meta *m, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void meta_put(Meta *m, const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->text[m->n], sizeof m->text[m->n], fmt, ap);
    va_end(ap);
    m->kv[m->n] = (StMeta){key, m->text[m->n]};
    m->n++;
}

static const char *tf(bool b) { return b ? "true" : "false"; }

bool tr_model_serialize(const TrModel *md, const TrTask *task, const TrFileInfo *info, uint8_t **buf, size_t *len,
                        char *err, size_t es) {
    const TrConfig *c = &md->cfg;
    Meta m = {.n = 0};
    meta_put(&m, "format", "raspfut-trained");
    meta_put(&m, "version", "1");
    meta_put(&m, "task", "%s", tr_task_name(task->kind));
    meta_put(&m, "n", "%zu", task->max_len);
    meta_put(&m, "k", "%zu", task->k);
    meta_put(&m, "alphabet", "%zu", task->alphabet);
    meta_put(&m, "p_balanced", "%.17g", task->p_balanced);
    meta_put(&m, "p_equal", "%.17g", task->p_equal);
    meta_put(&m, "kind", "%s", tr_kind_name(c->kind));
    meta_put(&m, "layers", "%zu", c->L);
    meta_put(&m, "heads", "%zu", c->H);
    meta_put(&m, "width", "%zu", c->d);
    meta_put(&m, "m", "%zu", md->m);
    meta_put(&m, "residual", "%s", tf(c->residual));
    meta_put(&m, "layernorm", "%s", tf(c->layernorm));
    meta_put(&m, "mlp", "%s", tf(c->mlp));
    meta_put(&m, "mlp_hidden", "%zu", md->hidden);
    meta_put(&m, "causal", "%s", tf(c->causal));
    meta_put(&m, "pos", "%s", tr_pos_name(c->pos));
    meta_put(&m, "vocab", "%zu", c->vocab);
    meta_put(&m, "max_len", "%zu", c->max_len);
    meta_put(&m, "classes", "%zu", c->classes);
    meta_put(&m, "precision", "%s", c->precision == TR_F32 ? "f32" : "f64");
    meta_put(&m, "seed", "%llu", (unsigned long long)c->seed);
    if (info) {
        meta_put(&m, "steps", "%zu", info->steps);
        if (info->accuracy >= 0) meta_put(&m, "accuracy", "%.6f", info->accuracy);
    }
    size_t rs = c->precision == TR_F32 ? sizeof(float) : sizeof(double);
    StTensor *t = calloc(md->params.n, sizeof *t);
    if (!t) abort();
    for (size_t i = 0; i < md->params.n; i++) {
        const TrTensor *p = &md->params.t[i];
        t[i] = (StTensor){.name = p->name, .dtype = c->precision == TR_F32 ? ST_F32 : ST_F64, .ndim = 2,
                          .shape = {p->rows, p->cols}, .data = (const char *)md->param + p->offset * rs,
                          .nbytes = p->rows * p->cols * rs};
    }
    StFile f = {.tensors = t, .n_tensors = md->params.n, .meta = m.kv, .n_meta = m.n};
    bool ok = st_serialize(&f, buf, len, err, es);
    free(t);
    return ok;
}

/* ---- reading --------------------------------------------------------------------------- */

static bool meta_text(const StFile *f, const char *key, const char **out, char *err, size_t es) {
    *out = st_meta_get(f, key);
    if (!*out) snprintf(err, es, "metadata '%s' missing", key);
    return *out != NULL;
}

static bool meta_size(const StFile *f, const char *key, size_t max, size_t *out, char *err, size_t es) {
    const char *v;
    if (!meta_text(f, key, &v, err, es)) return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-' || x > max) {
        snprintf(err, es, "metadata '%s' must be an integer in 0..%zu (got \"%.40s\")", key, max, v);
        return false;
    }
    *out = (size_t)x;
    return true;
}

static bool meta_flag(const StFile *f, const char *key, bool *out, char *err, size_t es) {
    const char *v;
    if (!meta_text(f, key, &v, err, es)) return false;
    if (strcmp(v, "true") == 0) *out = true;
    else if (strcmp(v, "false") == 0) *out = false;
    else {
        snprintf(err, es, "metadata '%s' must be \"true\" or \"false\"", key);
        return false;
    }
    return true;
}

static bool meta_real(const StFile *f, const char *key, double *out, char *err, size_t es) {
    const char *v;
    if (!meta_text(f, key, &v, err, es)) return false;
    char *end;
    *out = strtod(v, &end);
    if (!*v || *end || !isfinite(*out)) {
        snprintf(err, es, "metadata '%s' must be a finite number", key);
        return false;
    }
    return true;
}

bool tr_model_parse(const uint8_t *buf, size_t len, size_t batch_cap, TrModel *md, TrTask *task, char *err,
                    size_t es) {
    Arena a;
    arena_init(&a);
    StFile f;
    bool ok = false;
    const char *fmt, *ver, *name;
    TrConfig c = {0};
    size_t m = 0, hidden = 0, seed = 0;
    if (!st_parse(&a, buf, len, &f, err, es)) goto done;
    if (!meta_text(&f, "format", &fmt, err, es) || strcmp(fmt, "raspfut-trained") != 0) {
        snprintf(err, es, "not a raspfut-trained file");
        goto done;
    }
    if (!meta_text(&f, "version", &ver, err, es) || strcmp(ver, "1") != 0) {
        snprintf(err, es, "raspfut-trained: unsupported version (want \"1\")");
        goto done;
    }
    TrTaskKind tk;
    if (!meta_text(&f, "task", &name, err, es)) goto done;
    if (!tr_task_parse(name, &tk)) {
        snprintf(err, es, "metadata 'task' must be dyck1 or khop");
        goto done;
    }
    *task = tr_task_default(tk, 0, 0);
    if (!meta_size(&f, "n", TR_MAX_LEN, &task->max_len, err, es) || !meta_size(&f, "k", 64, &task->k, err, es) ||
        !meta_size(&f, "alphabet", 64, &task->alphabet, err, es) ||
        !meta_real(&f, "p_balanced", &task->p_balanced, err, es) || !meta_real(&f, "p_equal", &task->p_equal, err, es))
        goto done;
    if (!tr_task_validate(task, err, es)) goto done;
    if (!meta_text(&f, "kind", &name, err, es)) goto done;
    if (!tr_kind_parse(name, &c.kind)) {
        snprintf(err, es, "metadata 'kind' must be sparse, looped, random or full");
        goto done;
    }
    if (!meta_text(&f, "pos", &name, err, es)) goto done;
    if (!tr_pos_parse(name, &c.pos)) {
        snprintf(err, es, "metadata 'pos' must be absolute, none or rotary");
        goto done;
    }
    if (!meta_text(&f, "precision", &name, err, es)) goto done;
    if (strcmp(name, "f32") && strcmp(name, "f64")) {
        snprintf(err, es, "metadata 'precision' must be f32 or f64");
        goto done;
    }
    c.precision = strcmp(name, "f32") == 0 ? TR_F32 : TR_F64;
    if (!meta_size(&f, "layers", 16, &c.L, err, es) || !meta_size(&f, "heads", 16, &c.H, err, es) ||
        !meta_size(&f, "width", 1024, &c.d, err, es) || !meta_size(&f, "m", 8192, &m, err, es) ||
        !meta_flag(&f, "residual", &c.residual, err, es) || !meta_flag(&f, "layernorm", &c.layernorm, err, es) ||
        !meta_flag(&f, "mlp", &c.mlp, err, es) || !meta_size(&f, "mlp_hidden", 1 << 16, &hidden, err, es) ||
        !meta_flag(&f, "causal", &c.causal, err, es) || !meta_size(&f, "vocab", 4096, &c.vocab, err, es) ||
        !meta_size(&f, "max_len", TR_MAX_LEN, &c.max_len, err, es) ||
        !meta_size(&f, "classes", 4096, &c.classes, err, es) || !meta_size(&f, "seed", SIZE_MAX, &seed, err, es))
        goto done;
    c.seed = seed;
    c.mlp_hidden = c.mlp ? hidden : 0;
    if (c.kind == TR_RANDOM || c.kind == TR_FULL) c.m = m;
    if (tr_task_vocab(task) != c.vocab || tr_task_classes(task) != c.classes || task->max_len > c.max_len) {
        snprintf(err, es, "the model's vocab/classes/max_len do not fit its task");
        goto done;
    }
    if (!tr_model_init(md, &c, batch_cap, err, es)) goto done;
    if (md->m != m) {
        snprintf(err, es, "metadata 'm' = %zu, but the backbone has m = %zu", m, md->m);
        goto fail_model;
    }
    if (f.n_tensors != md->params.n) {
        snprintf(err, es, "%zu tensors, expected exactly %zu", f.n_tensors, md->params.n);
        goto fail_model;
    }
    double *row = NULL;
    for (size_t i = 0; i < md->params.n; i++) {
        const TrTensor *p = &md->params.t[i];
        const StTensor *t = st_find(&f, p->name);
        if (!t) {
            snprintf(err, es, "tensor '%s' missing", p->name);
            goto fail_model;
        }
        if (t->ndim != 2 || t->shape[0] != p->rows || t->shape[1] != p->cols || (t->dtype != ST_F32 && t->dtype != ST_F64)) {
            snprintf(err, es, "tensor '%s' must be an F32 or F64 matrix [%zu, %zu]", p->name, p->rows, p->cols);
            goto fail_model;
        }
        size_t n = p->rows * p->cols, esz = st_dtype_size(t->dtype);
        if (t->nbytes != n * esz) {
            snprintf(err, es, "tensor '%s': size does not match its shape", p->name);
            goto fail_model;
        }
        row = realloc(row, n * sizeof *row);
        if (!row) abort();
        for (size_t j = 0; j < n; j++) {
            if (t->dtype == ST_F64) memcpy(&row[j], (const char *)t->data + 8 * j, 8);
            else {
                float x;
                memcpy(&x, (const char *)t->data + 4 * j, 4);
                row[j] = x;
            }
            if (!isfinite(row[j])) {
                snprintf(err, es, "tensor '%s' holds a non-finite value", p->name);
                free(row);
                goto fail_model;
            }
        }
        tr_model_set(md, i, row);
    }
    free(row);
    ok = true;
    goto done;
fail_model:
    tr_model_free(md);
done:
    arena_free(&a);
    return ok;
}

/* ---- raspfut backbone and embedding ---------------------------------------------------------- */

bool tr_model_fut_exportable(const TrModel *md, char *err, size_t es) {
    const TrConfig *c = &md->cfg;
    const char *why = c->kind == TR_FULL            ? "a fully trained model is not a fixed backbone"
                      : c->layernorm                ? "raspfut backbones have no layer norm"
                      : c->mlp                      ? "raspfut backbones have no MLP layers"
                      : c->pos == TR_POS_ROTARY     ? "raspfut backbones have no rotary encoding"
                                                    : NULL;
    if (why) snprintf(err, es, "cannot write a raspfut backbone and embedding: %s", why);
    return why == NULL;
}

/* A copy of M (rows x cols) with zero columns up to `cols`. */
static FutMat pad_cols(Arena *a, FutMat M, size_t cols) {
    FutMat P = fut_mat_new(a, M.rows, cols);
    for (size_t i = 0; i < M.rows; i++)
        for (size_t j = 0; j < M.cols; j++) FUT_AT(P, i, j) = FUT_AT(M, i, j);
    return P;
}

bool tr_model_export_fut(const TrModel *md, uint8_t **bb, size_t *bb_len, uint8_t **emb, size_t *emb_len, char *err,
                         size_t es) {
    if (!tr_model_fut_exportable(md, err, es)) return false;
    Arena a;
    arena_init(&a);
    const TrConfig *c = &md->cfg;
    size_t C = c->classes, width = c->d;
    if (md->d_in > width) width = md->d_in;
    if (C > width) width = C;
    /* the backbone at width `width`: R_Q, R_K padded with zero columns (the same scores) */
    FutBackbone b = md->backbone;
    b.d = width;
    b.rq = ARENA_ARRAY(&a, FutMat, c->L * c->H);
    b.rk = ARENA_ARRAY(&a, FutMat, c->L * c->H);
    for (size_t i = 0; i < c->L * c->H; i++) {
        b.rq[i] = pad_cols(&a, md->backbone.rq[i], width);
        b.rk[i] = pad_cols(&a, md->backbone.rk[i], width);
    }
    FutMat U = fut_mat_new(&a, md->m, C);
    tr_model_get(md, md->unembed, U.data);
    b.u = pad_cols(&a, U, width);
    FutMat E = fut_mat_new(&a, md->d_in, md->m);
    tr_model_get(md, md->embed, E.data);
    bool ok = fut_backbone_serialize(&b, bb, bb_len, err, es);
    if (ok && !fut_embedding_serialize(&b, E, emb, emb_len, err, es)) {
        free(*bb);
        ok = false;
    }
    arena_free(&a);
    return ok;
}

void tr_print_input(FILE *f, const TrModel *md, const uint8_t *tok, size_t len) {
    const TrConfig *c = &md->cfg;
    for (size_t r = 0; r <= len; r++) {
        size_t id = r == 0 ? c->vocab : tok[r - 1];
        for (size_t j = 0; j < md->d_in; j++) {
            bool one = j == id || (c->pos == TR_POS_ABSOLUTE && j == c->vocab + 1 + r);
            fprintf(f, "%s%d", j ? "," : "", one ? 1 : 0);
        }
        fprintf(f, "%s", r < len ? ";" : "\n");
    }
}
