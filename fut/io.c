/* raspfut files on top of the safetensors container (fut/io.h). */
#include "fut/io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/safetensors.h"

enum { MAX_HEADS = 64, MAX_WIDTH = 4096, MAX_M = 25000 };

/* ---- metadata --------------------------------------------------------------------------- */

static bool meta_u64(const StFile *f, const char *key, uint64_t max, uint64_t *out, char *err, size_t errsize) {
    const char *v = st_meta_get(f, key);
    if (!v) {
        snprintf(err, errsize, "metadata '%s' missing", key);
        return false;
    }
    uint64_t x = 0;
    if (!*v) goto bad;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9' || (p == v && *p == '0' && p[1])) goto bad;
        unsigned dgt = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - dgt) / 10) goto bad;
        x = x * 10 + dgt;
    }
    if (x > max) {
        snprintf(err, errsize, "metadata '%s' = %llu is out of range (at most %llu)", key, (unsigned long long)x,
                 (unsigned long long)max);
        return false;
    }
    *out = x;
    return true;
bad:
    snprintf(err, errsize, "metadata '%s' must be a decimal integer", key);
    return false;
}

static bool meta_size(const StFile *f, const char *key, size_t lo, size_t max, size_t *out, char *err, size_t errsize) {
    uint64_t x;
    if (!meta_u64(f, key, max, &x, err, errsize)) return false;
    if (x < lo) {
        snprintf(err, errsize, "metadata '%s' must be at least %zu", key, lo);
        return false;
    }
    *out = (size_t)x;
    return true;
}

static bool meta_bool(const StFile *f, const char *key, bool *out, char *err, size_t errsize) {
    const char *v = st_meta_get(f, key);
    if (v && strcmp(v, "true") == 0) *out = true;
    else if (v && strcmp(v, "false") == 0) *out = false;
    else {
        snprintf(err, errsize, "metadata '%s' must be \"true\" or \"false\"", key);
        return false;
    }
    return true;
}

static bool check_format(const StFile *f, const char *want, char *err, size_t errsize) {
    const char *fmt = st_meta_get(f, "format"), *ver = st_meta_get(f, "version");
    if (!fmt || strcmp(fmt, want) != 0) {
        snprintf(err, errsize, "not a %s file (metadata format is %s%.60s%s)", want, fmt ? "'" : "",
                 fmt ? fmt : "missing", fmt ? "'" : "");
        return false;
    }
    if (!ver || strcmp(ver, "1") != 0) {
        snprintf(err, errsize, "%s: unsupported version (want \"1\")", want);
        return false;
    }
    return true;
}

/* ---- tensors ---------------------------------------------------------------------------- */

/* Copies tensor `name` into a fresh matrix. rows/cols of SIZE_MAX accept any extent >= 1;
 * empty_hint is added to the message for an extent of 0. */
static bool get_mat_hint(Arena *a, const StFile *f, const char *name, size_t rows, size_t cols, const char *empty_hint,
                         FutMat *out, char *err, size_t errsize) {
    const StTensor *t = st_find(f, name);
    if (!t) {
        snprintf(err, errsize, "tensor '%s' missing", name);
        return false;
    }
    if (t->ndim != 2 || (t->dtype != ST_F64 && t->dtype != ST_F32)) {
        snprintf(err, errsize, "tensor '%s' must be a 2-d F64 or F32 matrix", name);
        return false;
    }
    if (t->shape[0] == 0 || t->shape[1] == 0) { /* before the comparison: a free extent of 0 is no match */
        snprintf(err, errsize, "tensor '%s' has shape [%zu, %zu]: an empty matrix (every extent must be at least 1%s)",
                 name, t->shape[0], t->shape[1], empty_hint);
        return false;
    }
    if ((rows != SIZE_MAX && t->shape[0] != rows) || (cols != SIZE_MAX && t->shape[1] != cols)) {
        snprintf(err, errsize, "tensor '%s' has shape [%zu, %zu], expected [%zu, %zu]", name, t->shape[0],
                 t->shape[1], rows == SIZE_MAX ? t->shape[0] : rows, cols == SIZE_MAX ? t->shape[1] : cols);
        return false;
    }
    size_t n = t->shape[0] * t->shape[1], es = st_dtype_size(t->dtype);
    if (t->shape[1] > SIZE_MAX / t->shape[0] || n > t->nbytes / es) {
        snprintf(err, errsize, "tensor '%s': size does not match its shape", name);
        return false;
    }
    FutMat m = fut_mat_new(a, t->shape[0], t->shape[1]);
    const unsigned char *src = t->data;
    for (size_t i = 0; i < n; i++) {
        double v;
        if (t->dtype == ST_F64) memcpy(&v, src + 8 * i, 8);
        else {
            float x;
            memcpy(&x, src + 4 * i, 4);
            v = x;
        }
        if (!isfinite(v)) {
            snprintf(err, errsize, "tensor '%s' holds a non-finite value", name);
            return false;
        }
        m.data[i] = v;
    }
    *out = m;
    return true;
}

static bool get_mat(Arena *a, const StFile *f, const char *name, size_t rows, size_t cols, FutMat *out, char *err,
                    size_t errsize) {
    return get_mat_hint(a, f, name, rows, cols, "", out, err, errsize);
}

static bool expect_count(const StFile *f, size_t want, const char *what, char *err, size_t errsize) {
    if (f->n_tensors != want) {
        snprintf(err, errsize, "%s: %zu tensors, expected exactly %zu (unknown or duplicate tensor names)", what,
                 f->n_tensors, want);
        return false;
    }
    return true;
}

/* Builder for serialisation: tensors and metadata in an arena. */
typedef struct Out {
    Arena *a;
    StFile f;
    size_t cap_t, cap_m;
} Out;

static void out_init(Out *o, Arena *a, size_t tensors) {
    o->a = a;
    o->f = (StFile){0};
    o->cap_t = tensors;
    o->cap_m = 16;
    o->f.tensors = ARENA_ARRAY(a, StTensor, tensors);
    o->f.meta = ARENA_ARRAY(a, StMeta, o->cap_m);
}
static void out_meta(Out *o, const char *k, const char *v) {
    if (o->f.n_meta < o->cap_m) o->f.meta[o->f.n_meta++] = (StMeta){arena_strdup(o->a, k), arena_strdup(o->a, v)};
}
static void out_meta_z(Out *o, const char *k, uint64_t v) { out_meta(o, k, arena_printf(o->a, "%llu", (unsigned long long)v)); }
static void out_mat(Out *o, const char *name, FutMat m) {
    if (o->f.n_tensors >= o->cap_t) return;
    StTensor *t = &o->f.tensors[o->f.n_tensors++];
    *t = (StTensor){.name = arena_strdup(o->a, name), .dtype = ST_F64, .ndim = 2, .shape = {m.rows, m.cols},
                    .data = m.data, .nbytes = m.rows * m.cols * sizeof(double)};
}
static bool out_finish(Out *o, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    return st_serialize(&o->f, buf, len, err, errsize);
}

/* ---- target ----------------------------------------------------------------------------- */

bool fut_target_parse(Arena *a, const uint8_t *buf, size_t len, FutTarget *out, char *err, size_t errsize) {
    StFile f;
    if (!st_parse(a, buf, len, &f, err, errsize) || !check_format(&f, "raspfut-target", err, errsize)) return false;
    FutTarget t = {0};
    if (!meta_size(&f, "layers", 1, FUT_MAX_LAYERS, &t.L, err, errsize) ||
        !meta_size(&f, "heads", 1, MAX_HEADS, &t.H, err, errsize) ||
        !meta_size(&f, "width", 1, MAX_WIDTH, &t.d, err, errsize) ||
        !meta_bool(&f, "residual", &t.residual, err, errsize) || !meta_bool(&f, "causal", &t.causal, err, errsize) ||
        !expect_count(&f, 4 * t.L * t.H, "target", err, errsize))
        return false;
    t.heads = ARENA_ARRAY(a, FutHead, t.L * t.H);
    char name[96];
    for (size_t l = 0; l < t.L; l++)
        for (size_t h = 0; h < t.H; h++) {
            FutHead *hd = &t.heads[l * t.H + h];
            const char *dk = ": a head needs d_k >= 1", *dv = ": a head needs d_v >= 1";
            snprintf(name, sizeof name, "layers.%zu.heads.%zu.w_q", l, h);
            if (!get_mat_hint(a, &f, name, t.d, SIZE_MAX, dk, &hd->wq, err, errsize)) return false;
            snprintf(name, sizeof name, "layers.%zu.heads.%zu.w_k", l, h);
            if (!get_mat_hint(a, &f, name, t.d, hd->wq.cols, dk, &hd->wk, err, errsize)) return false;
            snprintf(name, sizeof name, "layers.%zu.heads.%zu.w_v", l, h);
            if (!get_mat_hint(a, &f, name, t.d, SIZE_MAX, dv, &hd->wv, err, errsize)) return false;
            snprintf(name, sizeof name, "layers.%zu.heads.%zu.w_o", l, h);
            if (!get_mat_hint(a, &f, name, hd->wv.cols, t.d, dv, &hd->wo, err, errsize)) return false;
        }
    *out = t;
    return fut_target_validate(out, err, errsize);
}

bool fut_target_serialize(const FutTarget *t, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    if (!fut_target_validate(t, err, errsize)) return false;
    Arena a;
    arena_init(&a);
    Out o;
    out_init(&o, &a, 4 * t->L * t->H);
    out_meta(&o, "format", "raspfut-target");
    out_meta(&o, "version", "1");
    out_meta_z(&o, "layers", t->L);
    out_meta_z(&o, "heads", t->H);
    out_meta_z(&o, "width", t->d);
    out_meta(&o, "residual", t->residual ? "true" : "false");
    out_meta(&o, "causal", t->causal ? "true" : "false");
    for (size_t l = 0; l < t->L; l++)
        for (size_t h = 0; h < t->H; h++) {
            const FutHead *hd = &t->heads[l * t->H + h];
            out_mat(&o, arena_printf(&a, "layers.%zu.heads.%zu.w_q", l, h), hd->wq);
            out_mat(&o, arena_printf(&a, "layers.%zu.heads.%zu.w_k", l, h), hd->wk);
            out_mat(&o, arena_printf(&a, "layers.%zu.heads.%zu.w_v", l, h), hd->wv);
            out_mat(&o, arena_printf(&a, "layers.%zu.heads.%zu.w_o", l, h), hd->wo);
        }
    bool ok = out_finish(&o, buf, len, err, errsize);
    arena_free(&a);
    return ok;
}

/* ---- backbone --------------------------------------------------------------------------- */

static void backbone_meta(Out *o, const FutBackbone *b) {
    out_meta(o, "kind", fut_kind_name(b->kind));
    out_meta_z(o, "layers", b->L);
    out_meta_z(o, "heads", b->H);
    out_meta_z(o, "width", b->d);
    out_meta_z(o, "m", b->m);
    out_meta(o, "residual", b->residual ? "true" : "false");
    out_meta(o, "causal", b->causal ? "true" : "false");
    out_meta_z(o, "seed", b->seed);
}

/* Reads the metadata fields backbones and embeddings share. */
static bool backbone_meta_parse(const StFile *f, FutKind *kind, size_t *L, size_t *H, size_t *d, size_t *m,
                                bool *residual, bool *causal, uint64_t *seed, char *err, size_t errsize) {
    const char *k = st_meta_get(f, "kind");
    if (!k || !fut_kind_parse(k, kind)) {
        snprintf(err, errsize, "metadata 'kind' must be sparse, looped or random");
        return false;
    }
    return meta_size(f, "layers", 1, FUT_MAX_LAYERS, L, err, errsize) &&
           meta_size(f, "heads", 1, MAX_HEADS, H, err, errsize) && meta_size(f, "width", 1, MAX_WIDTH, d, err, errsize) &&
           meta_size(f, "m", 1, MAX_M, m, err, errsize) && meta_bool(f, "residual", residual, err, errsize) &&
           meta_bool(f, "causal", causal, err, errsize) && meta_u64(f, "seed", UINT64_MAX, seed, err, errsize);
}

bool fut_backbone_serialize(const FutBackbone *b, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    if (!fut_backbone_validate(b, err, errsize)) return false;
    Arena a;
    arena_init(&a);
    Out o;
    size_t layers = b->tied ? 1 : b->L;
    out_init(&o, &a, layers * (3 * b->H + 1) + 1);
    out_meta(&o, "format", "raspfut-backbone");
    out_meta(&o, "version", "1");
    backbone_meta(&o, b);
    out_meta(&o, "tied", b->tied ? "true" : "false");
    for (size_t l = 0; l < layers; l++) {
        const char *pre = b->tied ? "shared" : arena_printf(&a, "layers.%zu", l);
        for (size_t h = 0; h < b->H; h++) {
            out_mat(&o, arena_printf(&a, "%s.heads.%zu.r_q", pre, h), b->rq[l * b->H + h]);
            out_mat(&o, arena_printf(&a, "%s.heads.%zu.r_k", pre, h), b->rk[l * b->H + h]);
            out_mat(&o, arena_printf(&a, "%s.heads.%zu.r_v", pre, h), b->rv[l * b->H + h]);
        }
        if (b->skip) out_mat(&o, arena_printf(&a, "%s.skip", pre), b->skip[l]);
    }
    out_mat(&o, "unembed", b->u);
    bool ok = out_finish(&o, buf, len, err, errsize);
    arena_free(&a);
    return ok;
}

bool fut_backbone_parse(Arena *a, const uint8_t *buf, size_t len, FutBackbone *out, char *err, size_t errsize) {
    StFile f;
    if (!st_parse(a, buf, len, &f, err, errsize) || !check_format(&f, "raspfut-backbone", err, errsize)) return false;
    FutBackbone b = {0};
    if (!backbone_meta_parse(&f, &b.kind, &b.L, &b.H, &b.d, &b.m, &b.residual, &b.causal, &b.seed, err, errsize) ||
        !meta_bool(&f, "tied", &b.tied, err, errsize))
        return false;
    bool has_skip = st_find(&f, b.tied ? "shared.skip" : "layers.0.skip") != NULL;
    size_t layers = b.tied ? 1 : b.L;
    if (!expect_count(&f, layers * (3 * b.H + (has_skip ? 1 : 0)) + 1, "backbone", err, errsize)) return false;
    b.rq = ARENA_ARRAY(a, FutMat, b.L * b.H);
    b.rk = ARENA_ARRAY(a, FutMat, b.L * b.H);
    b.rv = ARENA_ARRAY(a, FutMat, b.L * b.H);
    if (has_skip) b.skip = ARENA_ARRAY(a, FutMat, b.L);
    char name[96];
    for (size_t l = 0; l < layers; l++) {
        char pre[32];
        if (b.tied) snprintf(pre, sizeof pre, "shared");
        else snprintf(pre, sizeof pre, "layers.%zu", l);
        for (size_t h = 0; h < b.H; h++) {
            size_t i = l * b.H + h;
            snprintf(name, sizeof name, "%s.heads.%zu.r_q", pre, h);
            if (!get_mat(a, &f, name, b.m, b.d, &b.rq[i], err, errsize)) return false;
            snprintf(name, sizeof name, "%s.heads.%zu.r_k", pre, h);
            if (!get_mat(a, &f, name, b.m, b.d, &b.rk[i], err, errsize)) return false;
            snprintf(name, sizeof name, "%s.heads.%zu.r_v", pre, h);
            if (!get_mat(a, &f, name, b.m, b.m, &b.rv[i], err, errsize)) return false;
        }
        if (has_skip) {
            snprintf(name, sizeof name, "%s.skip", pre);
            if (!get_mat(a, &f, name, b.m, b.m, &b.skip[l], err, errsize)) return false;
        }
    }
    if (b.tied)
        for (size_t l = 1; l < b.L; l++) {
            for (size_t h = 0; h < b.H; h++) {
                b.rq[l * b.H + h] = b.rq[h];
                b.rk[l * b.H + h] = b.rk[h];
                b.rv[l * b.H + h] = b.rv[h];
            }
            if (has_skip) b.skip[l] = b.skip[0];
        }
    if (!get_mat(a, &f, "unembed", b.m, b.d, &b.u, err, errsize)) return false;
    *out = b;
    return fut_backbone_validate(out, err, errsize);
}

/* ---- embedding -------------------------------------------------------------------------- */

bool fut_embedding_serialize(const FutBackbone *b, FutMat E, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    if (E.cols != b->m || E.rows == 0 || E.rows > b->d) {
        snprintf(err, errsize, "embedding shape %zux%zu does not fit the backbone (m=%zu, d=%zu)", E.rows, E.cols, b->m,
                 b->d);
        return false;
    }
    Arena a;
    arena_init(&a);
    Out o;
    out_init(&o, &a, 1);
    out_meta(&o, "format", "raspfut-embedding");
    out_meta(&o, "version", "1");
    backbone_meta(&o, b);
    out_meta_z(&o, "target_width", E.rows);
    out_mat(&o, "embedding", E);
    bool ok = out_finish(&o, buf, len, err, errsize);
    arena_free(&a);
    return ok;
}

bool fut_embedding_parse(Arena *a, const uint8_t *buf, size_t len, FutEmbedding *out, char *err, size_t errsize) {
    StFile f;
    if (!st_parse(a, buf, len, &f, err, errsize) || !check_format(&f, "raspfut-embedding", err, errsize)) return false;
    FutEmbedding e = {0};
    size_t dt;
    if (!backbone_meta_parse(&f, &e.kind, &e.L, &e.H, &e.d, &e.m, &e.residual, &e.causal, &e.seed, err, errsize) ||
        !meta_size(&f, "target_width", 1, MAX_WIDTH, &dt, err, errsize) ||
        !expect_count(&f, 1, "embedding", err, errsize) ||
        !get_mat(a, &f, "embedding", dt, e.m, &e.E, err, errsize))
        return false;
    if (dt > e.d) {
        snprintf(err, errsize, "embedding target_width %zu exceeds the backbone width %zu", dt, e.d);
        return false;
    }
    *out = e;
    return true;
}

bool fut_embedding_matches(const FutEmbedding *e, const FutBackbone *b, char *err, size_t errsize) {
    if (e->kind != b->kind || e->L != b->L || e->H != b->H || e->d != b->d || e->m != b->m ||
        e->residual != b->residual || e->causal != b->causal || e->seed != b->seed) {
        snprintf(err, errsize,
                 "embedding was made for a different backbone (%s L=%zu H=%zu d=%zu m=%zu seed=%llu), this one is "
                 "%s L=%zu H=%zu d=%zu m=%zu seed=%llu",
                 fut_kind_name(e->kind), e->L, e->H, e->d, e->m, (unsigned long long)e->seed, fut_kind_name(b->kind),
                 b->L, b->H, b->d, b->m, (unsigned long long)b->seed);
        return false;
    }
    return true;
}

/* ---- files ------------------------------------------------------------------------------ */

bool fut_read_file(Arena *a, const char *path, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *data = malloc(cap);
    bool ok = data != NULL;
    while (ok) {
        if (n == cap) {
            uint8_t *nd = realloc(data, cap * 2);
            if (!nd) { ok = false; break; }
            data = nd;
            cap *= 2;
        }
        size_t got = fread(data + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    if (ferror(fp)) ok = false;
    fclose(fp);
    if (!ok) {
        free(data);
        snprintf(err, errsize, "%s: cannot read", path);
        return false;
    }
    *buf = arena_alloc(a, n ? n : 1);
    memcpy(*buf, data, n);
    *len = n;
    free(data);
    return true;
}

bool fut_write_file(const char *path, const uint8_t *buf, size_t len, char *err, size_t errsize) {
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(buf, 1, len, fp) == len;
    ok = (fclose(fp) == 0) && ok;
    if (!ok) snprintf(err, errsize, "%s: write failed", path);
    return ok;
}
