#include "runtime/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/json.h"

/* The reference implementation refuses headers above 100 MB; so do we, which also bounds the
 * memory a hostile header can make the JSON parser allocate. */
enum { ST_MAX_HEADER = 100 * 1000 * 1000, ST_MAX_NDIM = 4 };

static const char *const dtype_names[] = {"F64", "F32", "I64", "I32", "U8"};

size_t st_dtype_size(StDtype d) {
    switch (d) {
    case ST_F64: case ST_I64: return 8;
    case ST_F32: case ST_I32: return 4;
    case ST_U8: return 1;
    }
    return 0;
}

static bool errf(char *err, size_t errsize, const char *fmt, const char *arg) {
    if (err && errsize) snprintf(err, errsize, fmt, arg);
    return false;
}

static uint64_t read_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* One tensor entry: {"dtype": "F64", "shape": [..], "data_offsets": [b, e]}. */
static bool parse_entry(const char *name, const JsonValue *v, size_t data_len, StTensor *t,
                        size_t offs[2], char *err, size_t errsize) {
    char what[160];
    snprintf(what, sizeof what, "tensor '%.100s'", name);
    if (v->kind != JSON_OBJECT) return errf(err, errsize, "safetensors: %s: entry is not an object", what);
    const JsonValue *dt = NULL, *shape = NULL, *off = NULL;
    for (size_t i = 0; i < v->count; i++) {
        const char *k = v->keys[i];
        const JsonValue **slot = strcmp(k, "dtype") == 0 ? &dt
                               : strcmp(k, "shape") == 0 ? &shape
                               : strcmp(k, "data_offsets") == 0 ? &off : NULL;
        if (!slot) return errf(err, errsize, "safetensors: %s: unknown field", what);
        if (*slot) return errf(err, errsize, "safetensors: %s: duplicate field", what);
        *slot = &v->items[i];
    }
    if (!dt || !shape || !off)
        return errf(err, errsize, "safetensors: %s: needs dtype, shape and data_offsets", what);
    if (dt->kind != JSON_STRING) return errf(err, errsize, "safetensors: %s: dtype is not a string", what);
    bool known = false;
    for (int d = 0; d < (int)(sizeof dtype_names / sizeof *dtype_names); d++)
        if (strcmp(dt->text, dtype_names[d]) == 0) { t->dtype = (StDtype)d; known = true; }
    if (!known) return errf(err, errsize, "safetensors: %s: unsupported dtype", what);
    if (shape->kind != JSON_ARRAY || shape->count > ST_MAX_NDIM)
        return errf(err, errsize, "safetensors: %s: shape must be an array of at most 4 sizes", what);
    uint64_t elems = 1;
    bool overflow = false;
    t->ndim = shape->count;
    for (size_t i = 0; i < shape->count; i++) {
        uint64_t d;
        if (!json_as_u64(&shape->items[i], &d) || d > SIZE_MAX)
            return errf(err, errsize, "safetensors: %s: shape entries must be non-negative integers", what);
        t->shape[i] = (size_t)d;
        if (d != 0 && elems > UINT64_MAX / d) overflow = true;
        else elems *= d;
    }
    /* A zero dimension makes the product 0 even after an intermediate overflow. */
    for (size_t i = 0; i < shape->count; i++) if (t->shape[i] == 0) { overflow = false; elems = 0; }
    if (overflow || elems > SIZE_MAX / st_dtype_size(t->dtype))
        return errf(err, errsize, "safetensors: %s: shape overflows", what);
    if (off->kind != JSON_ARRAY || off->count != 2)
        return errf(err, errsize, "safetensors: %s: data_offsets must be [begin, end]", what);
    uint64_t b, e;
    if (!json_as_u64(&off->items[0], &b) || !json_as_u64(&off->items[1], &e))
        return errf(err, errsize, "safetensors: %s: data_offsets must be non-negative integers", what);
    if (b > e || e > data_len)
        return errf(err, errsize, "safetensors: %s: data_offsets out of range", what);
    if (e - b != elems * st_dtype_size(t->dtype))
        return errf(err, errsize, "safetensors: %s: size does not match dtype x shape", what);
    offs[0] = (size_t)b;
    offs[1] = (size_t)e;
    t->nbytes = (size_t)(e - b);
    return true;
}

typedef struct Span { size_t begin, end, index; } Span;

static int span_cmp(const void *a, const void *b) {
    const Span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool st_parse(Arena *arena, const uint8_t *buf, size_t len, StFile *out, char *err, size_t errsize) {
    memset(out, 0, sizeof *out);
    if (len < 8) return errf(err, errsize, "safetensors: file too short (%s bytes of the 8-byte header length)",
                             len == 0 ? "0" : "fewer than 8");
    uint64_t hlen = read_le64(buf);
    if (hlen > ST_MAX_HEADER) return errf(err, errsize, "safetensors: header length %s is too large", "(> 100 MB)");
    if (hlen > len - 8) return errf(err, errsize, "safetensors: %s", "header length exceeds the file size (truncated?)");
    if (hlen < 2 || buf[8] != '{') return errf(err, errsize, "safetensors: %s", "header is not a JSON object");
    const uint8_t *data = buf + 8 + hlen;
    size_t data_len = len - 8 - (size_t)hlen;

    JsonValue *root;
    char jerr[128];
    if (!json_parse(arena, (const char *)buf + 8, (size_t)hlen, &root, jerr, sizeof jerr))
        return errf(err, errsize, "safetensors: bad header: %s", jerr);
    if (root->kind != JSON_OBJECT) return errf(err, errsize, "safetensors: %s", "header is not a JSON object");

    size_t n_tensors = 0, n_meta = 0;
    bool have_meta = false;
    for (size_t i = 0; i < root->count; i++) {
        if (strcmp(root->keys[i], "__metadata__") != 0) { n_tensors++; continue; }
        if (have_meta) return errf(err, errsize, "safetensors: %s", "duplicate __metadata__");
        have_meta = true;
        const JsonValue *m = &root->items[i];
        if (m->kind != JSON_OBJECT) return errf(err, errsize, "safetensors: %s", "__metadata__ is not an object");
        for (size_t j = 0; j < m->count; j++)
            if (m->items[j].kind != JSON_STRING)
                return errf(err, errsize, "safetensors: metadata '%.100s' is not a string", m->keys[j]);
        n_meta = m->count;
    }
    out->tensors = ARENA_ARRAY(arena, StTensor, n_tensors);
    out->meta = ARENA_ARRAY(arena, StMeta, n_meta);
    Span *spans = ARENA_ARRAY(arena, Span, n_tensors);
    for (size_t i = 0; i < root->count; i++) {
        const JsonValue *v = &root->items[i];
        if (strcmp(root->keys[i], "__metadata__") == 0) {
            for (size_t j = 0; j < v->count; j++) {
                out->meta[out->n_meta].key = v->keys[j];
                out->meta[out->n_meta].value = v->items[j].text;
                out->n_meta++;
            }
            continue;
        }
        StTensor *t = &out->tensors[out->n_tensors];
        t->name = root->keys[i];
        size_t offs[2] = {0, 0};
        if (!parse_entry(t->name, v, data_len, t, offs, err, errsize)) return false;
        t->data = data + offs[0];
        spans[out->n_tensors] = (Span){offs[0], offs[1], out->n_tensors};
        out->n_tensors++;
    }

    /* Names and metadata keys must be unique. */
    const char **names = ARENA_ARRAY(arena, const char *, n_tensors + n_meta);
    for (size_t i = 0; i < n_tensors; i++) names[i] = out->tensors[i].name;
    qsort(names, n_tensors, sizeof *names, name_cmp);
    for (size_t i = 1; i < n_tensors; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return errf(err, errsize, "safetensors: duplicate tensor '%.100s'", names[i]);
    for (size_t i = 0; i < n_meta; i++) names[i] = out->meta[i].key;
    qsort(names, n_meta, sizeof *names, name_cmp);
    for (size_t i = 1; i < n_meta; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return errf(err, errsize, "safetensors: duplicate metadata key '%.100s'", names[i]);

    /* Sorted by offset, the tensors must tile the data area: no gap, no overlap. */
    qsort(spans, n_tensors, sizeof *spans, span_cmp);
    size_t at = 0;
    for (size_t i = 0; i < n_tensors; i++) {
        if (spans[i].begin < at)
            return errf(err, errsize, "safetensors: tensor '%.100s' overlaps another", out->tensors[spans[i].index].name);
        if (spans[i].begin > at)
            return errf(err, errsize, "safetensors: gap in the data before tensor '%.100s'", out->tensors[spans[i].index].name);
        at = spans[i].end;
    }
    if (at != data_len)
        return errf(err, errsize, "safetensors: %s", "tensors do not cover the data area exactly (trailing bytes or truncated)");
    return true;
}

bool st_serialize(const StFile *f, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    *buf = NULL;
    *len = 0;
    JsonBuf h;
    jbuf_init(&h);
    jbuf_puts(&h, "{");
    bool first = true;
    if (f->n_meta) {
        jbuf_puts(&h, "\"__metadata__\":{");
        for (size_t i = 0; i < f->n_meta; i++) {
            if (i) jbuf_puts(&h, ",");
            jbuf_string(&h, f->meta[i].key);
            jbuf_puts(&h, ":");
            jbuf_string(&h, f->meta[i].value ? f->meta[i].value : "");
        }
        jbuf_puts(&h, "}");
        first = false;
    }
    size_t at = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const StTensor *t = &f->tensors[i];
        if (t->ndim > ST_MAX_NDIM || strcmp(t->name, "__metadata__") == 0) {
            jbuf_free(&h);
            return errf(err, errsize, "safetensors: cannot write tensor '%.100s'", t->name);
        }
        size_t elems = 1;
        for (size_t d = 0; d < t->ndim; d++) {
            if (t->shape[d] && elems > SIZE_MAX / t->shape[d]) elems = SIZE_MAX; else elems *= t->shape[d];
        }
        if (elems == SIZE_MAX || elems * st_dtype_size(t->dtype) != t->nbytes) {
            jbuf_free(&h);
            return errf(err, errsize, "safetensors: tensor '%.100s': nbytes does not match its shape", t->name);
        }
        if (!first) jbuf_puts(&h, ",");
        first = false;
        jbuf_string(&h, t->name);
        jbuf_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", dtype_names[t->dtype]);
        for (size_t d = 0; d < t->ndim; d++) jbuf_printf(&h, "%s%zu", d ? "," : "", t->shape[d]);
        jbuf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", at, at + t->nbytes);
        at += t->nbytes;
    }
    jbuf_puts(&h, "}");
    /* Pad with spaces (as the reference writer does) so the data area starts 8-byte aligned. */
    while (!h.failed && (8 + h.len) % 8 != 0) jbuf_puts(&h, " ");
    if (h.failed) {
        jbuf_free(&h);
        return errf(err, errsize, "safetensors: %s", "out of memory");
    }
    size_t total = 8 + h.len + at;
    uint8_t *out = malloc(total ? total : 1);
    if (!out) {
        jbuf_free(&h);
        return errf(err, errsize, "safetensors: %s", "out of memory");
    }
    uint64_t hl = h.len;
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(hl >> (8 * i));
    memcpy(out + 8, h.data, h.len);
    size_t pos = 8 + h.len;
    for (size_t i = 0; i < f->n_tensors; i++) {
        if (f->tensors[i].nbytes) memcpy(out + pos, f->tensors[i].data, f->tensors[i].nbytes);
        pos += f->tensors[i].nbytes;
    }
    jbuf_free(&h);
    *buf = out;
    *len = total;
    return true;
}

const StTensor *st_find(const StFile *f, const char *name) {
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *st_meta_get(const StFile *f, const char *key) {
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}
