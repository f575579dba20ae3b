#include "runtime/model_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/json.h"
#include "runtime/safetensors.h"

/* Sizes beyond these are certainly not a model we wrote; they also keep index arithmetic such
 * as max_len + 1 far from overflow. */
#define MODEL_MAX_DIM ((uint64_t)1 << 32)

/* The metadata values covered by the checksum, in checksum order. */
static const char *const checksummed_keys[] = {"format", "version", "config", "labels",
                                               "program", "program_name", "compile_flags"};
enum { N_CHECKSUMMED = sizeof checksummed_keys / sizeof *checksummed_keys };

static const char *const token_type_names[] = {"tokens_str", "tokens_int", "tokens_float", "tokens_bool"};

static bool fail(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t errsize, const char *fmt, ...) {
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return false;
}

uint64_t model_fnv1a(uint64_t h, const void *bytes, size_t n) {
    const uint8_t *p = bytes;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- writing ---- */

static const char *const kind_names[] = {"bool", "int", "float"};

static bool write_atom(JsonBuf *b, Value v) {
    switch (v.kind) {
    case VAL_BOOL: jbuf_puts(b, v.as.b ? "true" : "false"); return true;
    case VAL_INT: jbuf_i64(b, v.as.i); return true;
    case VAL_FLOAT:
        if (!isfinite(v.as.f)) return false;
        jbuf_double(b, v.as.f);
        return true;
    case VAL_STR: /* a model file's header is UTF-8 JSON: a string that is not text has no place in it */
        if (v.as.s && !json_utf8(v.as.s, strlen(v.as.s))) return false;
        jbuf_string(b, v.as.s ? v.as.s : "");
        return true;
    }
    return false;
}

static bool write_atoms(JsonBuf *b, const Value *v, size_t n) {
    bool ok = true;
    jbuf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) jbuf_puts(b, ",");
        ok &= write_atom(b, v[i]);
    }
    jbuf_puts(b, "]");
    return ok;
}

static bool write_config(const Model *m, JsonBuf *b) {
    bool ok = true;
    jbuf_printf(b, "{\"d_model\":%zu,\"max_len\":%zu,\"n_vocab\":%zu,\"vocab\":", m->d_model, m->max_len, m->n_vocab);
    ok &= write_atoms(b, m->vocab, m->n_vocab);
    int tt = m->token_type >= 0 && m->token_type < 4 ? m->token_type : 0;
    jbuf_printf(b, ",\"token_type\":\"%s\",\"numeric_tokens\":", token_type_names[tt]);
    if (m->numeric_tokens) {
        jbuf_printf(b, "{\"dim\":%zu,\"lo\":", m->token_value_dim);
        jbuf_double(b, m->token_lo);
        jbuf_puts(b, ",\"hi\":");
        jbuf_double(b, m->token_hi);
        jbuf_puts(b, "}");
    } else {
        jbuf_puts(b, "null");
    }
    jbuf_printf(b, ",\"n_layers\":%zu,\"layers\":[", m->n_layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        jbuf_puts(b, l ? ",{\"heads\":[" : "{\"heads\":[");
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            jbuf_printf(b, "%s{\"dk\":%zu,\"dv\":%zu,\"causal\":%s,\"tie_tol\":", h ? "," : "", H->wq.cols,
                        H->wv.cols, H->causal ? "true" : "false");
            jbuf_double(b, H->tie_tol);
            if (H->bos_extra != 0) { /* written only where used: files without it read as 0 */
                jbuf_puts(b, ",\"bos_extra\":");
                jbuf_double(b, H->bos_extra);
            }
            jbuf_puts(b, ",\"label\":");
            jbuf_string(b, H->label ? H->label : "");
            jbuf_puts(b, "}");
        }
        jbuf_printf(b, "],\"mlp_hidden\":%zu,\"gated\":%s}", L->mlp.w1.cols, L->mlp.gated ? "true" : "false");
    }
    jbuf_puts(b, "],\"output\":{\"name\":");
    jbuf_string(b, m->output_name ? m->output_name : "");
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        jbuf_printf(b, ",\"kind\":\"categorical\",\"dim\":%zu,\"count\":%zu,\"values\":", m->out_dim, m->out_count);
        ok &= write_atoms(b, m->out_values, m->out_count);
        jbuf_puts(b, "}");
    } else {
        jbuf_puts(b, ",\"kind\":\"numerical\",\"values\":");
        ok &= write_atoms(b, m->out_values, m->out_count);
        if (m->out_len_count) {
            jbuf_puts(b, ",\"values_by_length\":[");
            for (size_t n = 1; n <= m->out_len_count; n++) {
                if (n > 1) jbuf_puts(b, ",");
                size_t count;
                const Value *v = model_output_values(m, n, &count);
                ok &= write_atoms(b, v, count);
            }
            jbuf_puts(b, "]");
        }
        jbuf_puts(b, ",\"margin\":");
        jbuf_double(b, m->out_margin);
        if (m->out_kind_count) {
            jbuf_printf(b, ",\"kind_block\":{\"dim\":%zu,\"kinds\":[", m->out_kind_dim);
            for (size_t i = 0; i < m->out_kind_count; i++)
                jbuf_printf(b, "%s\"%s\"", i ? "," : "", kind_names[m->out_kinds[i] <= VAL_FLOAT ? m->out_kinds[i] : 0]);
            jbuf_puts(b, "]}");
        } else {
            jbuf_puts(b, ",\"kind_block\":null");
        }
        jbuf_puts(b, ",\"error_bound\":");
        jbuf_double(b, m->out_error_bound);
        jbuf_puts(b, ",\"error_rel\":");
        jbuf_double(b, m->out_error_rel);
        jbuf_puts(b, "}");
    }
    jbuf_puts(b, ",\"checks\":[");
    for (size_t i = 0; i < m->n_checks; i++) {
        const ModelCheck *c = &m->checks[i];
        if (c->kind == MODEL_CHECK_MARGIN) {
            const ModelMargin *g = &m->margins[c->dim];
            jbuf_printf(b, "%s{\"kind\":\"margin\",\"after_layer\":%zu,\"what\":", i ? "," : "", c->after_layer);
            jbuf_string(b, c->what ? c->what : "");
            jbuf_puts(b, ",\"terms\":[");
            for (size_t t = 0; t < g->n_terms; t++) {
                jbuf_printf(b, "%s[%zu,", t ? "," : "", g->dims[t]);
                jbuf_double(b, g->coefs[t]);
                jbuf_puts(b, "]");
            }
            jbuf_puts(b, "],\"thresholds\":[");
            for (size_t j = 0; j < g->n_thresholds; j++) {
                if (j) jbuf_puts(b, ",");
                jbuf_double(b, g->thresholds[j]);
            }
            jbuf_puts(b, "],\"margin\":");
            jbuf_double(b, g->m);
            jbuf_puts(b, "}");
            continue;
        }
        jbuf_printf(b, "%s{\"kind\":\"%s\",\"after_layer\":%zu,\"dim\":%zu,\"count\":%zu,\"what\":", i ? "," : "",
                    c->kind == MODEL_CHECK_SINGLE_KEY ? "single_key" : c->kind == MODEL_CHECK_ONE_KIND ? "one_kind" : "one_hot",
                    c->after_layer, c->dim, c->count);
        jbuf_string(b, c->what ? c->what : "");
        if (c->kind == MODEL_CHECK_ONE_KIND) {
            jbuf_puts(b, ",\"strings\":[");
            for (size_t d = 0; d < c->count; d++) jbuf_printf(b, "%s%s", d ? "," : "", c->is_string[d] ? "true" : "false");
            jbuf_puts(b, "]");
        }
        jbuf_puts(b, "}");
    }
    jbuf_puts(b, "]");
    if (m->has_error_flag) jbuf_printf(b, ",\"error_flag\":{\"dim\":%zu}", m->error_flag_dim); /* absent: none */
    jbuf_puts(b, "}");
    return ok;
}

/* One weight tensor of the machine: a dense vector (data) or a matrix (mat). */
typedef struct Logical {
    const char *name;
    const double *data;
    const Matrix *mat;
    size_t rows, cols; /* a vector has cols 1 and ndim 1 */
    size_t ndim;
} Logical;

static void add_vector(Logical *t, size_t *n, const char *name, const double *data, size_t len) {
    t[(*n)++] = (Logical){name, data, NULL, len, 1, 1};
}

static void add_matrix(Logical *t, size_t *n, const char *name, const Matrix *w) {
    t[(*n)++] = (Logical){name, NULL, w, w->rows, w->cols, 2};
}

/* An entry is stored sparse when its bits are not those of +0.0 (so -0.0 survives exactly). */
static bool stored_entry(double x) { return x != 0.0 || signbit(x); }

static void put_le(uint8_t *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t double_bits(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* The stored entries of x in row-major order: *flat and *vals (nnz each, in arena a). A matrix
 * is stored by column, so its entries are bucketed by row (a counting sort, columns ascending
 * within each row). */
static size_t row_major_entries(Arena *a, const Logical *x, uint64_t **flat, double **vals) {
    size_t nnz = 0;
    if (!x->mat) {
        size_t entries = x->rows * x->cols;
        for (size_t i = 0; i < entries; i++) nnz += stored_entry(x->data[i]);
        *flat = ARENA_ARRAY(a, uint64_t, nnz ? nnz : 1);
        *vals = ARENA_ARRAY(a, double, nnz ? nnz : 1);
        for (size_t i = 0, k = 0; i < entries; i++)
            if (stored_entry(x->data[i])) {
                (*flat)[k] = i;
                (*vals)[k++] = x->data[i];
            }
        return nnz;
    }
    size_t *start = ARENA_ARRAY(a, size_t, x->rows + 1);
    for (size_t c = 0; c < x->cols; c++) {
        MatrixColumn col = matrix_column(x->mat, c);
        for (uint32_t k = 0; k < col.n; k++)
            if (stored_entry(col.val[k])) start[col.row[k] + 1]++, nnz++;
    }
    for (size_t r = 0; r < x->rows; r++) start[r + 1] += start[r];
    *flat = ARENA_ARRAY(a, uint64_t, nnz ? nnz : 1);
    *vals = ARENA_ARRAY(a, double, nnz ? nnz : 1);
    for (size_t c = 0; c < x->cols; c++) {
        MatrixColumn col = matrix_column(x->mat, c);
        for (uint32_t k = 0; k < col.n; k++) {
            if (!stored_entry(col.val[k])) continue;
            size_t at = start[col.row[k]]++;
            (*flat)[at] = (uint64_t)col.row[k] * x->cols + c;
            (*vals)[at] = col.val[k];
        }
    }
    return nnz;
}

/* The file form of logical tensor x: either itself (F64, dense), or three tensors NAME.shape
 * (I64 [ndim]), NAME.values (F64 [nnz]) and NAME.index (I32 [nnz], or I64 when rows x cols
 * exceeds INT32_MAX) of the stored entries in row-major order, whichever takes fewer bytes.
 * 8-byte tensors go to `main`, I32 index tensors to `tail` (written last: every F64 tensor
 * stays 8-byte aligned in the file). */
static void file_form(Arena *a, const Logical *x, StTensor *main, size_t *n_main, StTensor *tail, size_t *n_tail) {
    size_t entries = x->rows * x->cols;
    uint64_t *flat;
    double *vals;
    size_t nnz = row_major_entries(a, x, &flat, &vals);
    bool wide = entries > (size_t)INT32_MAX;
    size_t isize = wide ? 8 : 4;
    uint64_t dense_bytes = (uint64_t)entries * 8, sparse_bytes = 8 * (uint64_t)x->ndim + (uint64_t)nnz * (8 + isize);
    if (dense_bytes <= sparse_bytes) {
        double *dense = (double *)x->data;
        if (x->mat) {
            dense = ARENA_ARRAY(a, double, entries ? entries : 1);
            for (size_t k = 0; k < nnz; k++) dense[flat[k]] = vals[k];
        }
        main[(*n_main)++] = (StTensor){.name = x->name, .dtype = ST_F64, .ndim = x->ndim, .shape = {x->rows, x->cols},
                                       .data = dense, .nbytes = entries * 8};
        return;
    }
    uint8_t *shape = arena_alloc(a, 16), *values = arena_array(a, nnz ? nnz : 1, 8),
            *index = arena_array(a, nnz ? nnz : 1, isize);
    put_le(shape, x->rows, 8);
    put_le(shape + 8, x->cols, 8);
    for (size_t k = 0; k < nnz; k++) {
        put_le(values + 8 * k, double_bits(vals[k]), 8);
        put_le(index + isize * k, flat[k], (int)isize);
    }
    main[(*n_main)++] = (StTensor){.name = arena_printf(a, "%s.shape", x->name), .dtype = ST_I64, .ndim = 1,
                                   .shape = {x->ndim}, .data = shape, .nbytes = 8 * x->ndim};
    main[(*n_main)++] = (StTensor){.name = arena_printf(a, "%s.values", x->name), .dtype = ST_F64, .ndim = 1,
                                   .shape = {nnz}, .data = values, .nbytes = 8 * nnz};
    StTensor idx = {.name = arena_printf(a, "%s.index", x->name), .dtype = wide ? ST_I64 : ST_I32, .ndim = 1,
                    .shape = {nnz}, .data = index, .nbytes = isize * nnz};
    if (wide) main[(*n_main)++] = idx;
    else tail[(*n_tail)++] = idx;
}

bool model_serialize(const Model *m, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    *buf = NULL;
    *len = 0;
    char why[300];
    if (!model_check_layers(m, why, sizeof why) || !model_check_output(m, why, sizeof why) ||
        !model_check_checks(m, why, sizeof why))
        return fail(err, errsize, "model: %s", why);
    Arena tmp;
    arena_init(&tmp);
    size_t cap = 3;
    for (size_t l = 0; l < m->n_layers; l++) cap += 4 * m->layers[l].n_heads + 6;
    Logical *x = ARENA_ARRAY(&tmp, Logical, cap);
    size_t n = 0, D = m->d_model;
    add_matrix(x, &n, "embed.token", &m->token_embed);
    add_matrix(x, &n, "embed.pos", &m->pos_embed);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            const Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            const char *wn[4] = {"wq", "wk", "wv", "wo"};
            for (int k = 0; k < 4; k++)
                add_matrix(x, &n, arena_printf(&tmp, "layer.%zu.head.%zu.%s", l, h, wn[k]), w[k]);
        }
        const ModelMlp *M = &L->mlp;
        add_matrix(x, &n, arena_printf(&tmp, "layer.%zu.mlp.w1", l), &M->w1);
        add_vector(x, &n, arena_printf(&tmp, "layer.%zu.mlp.b1", l), M->b1, M->w1.cols);
        add_matrix(x, &n, arena_printf(&tmp, "layer.%zu.mlp.w2", l), &M->w2);
        add_vector(x, &n, arena_printf(&tmp, "layer.%zu.mlp.b2", l), M->b2, D);
        if (M->gated) {
            add_matrix(x, &n, arena_printf(&tmp, "layer.%zu.mlp.w3", l), &M->w3);
            add_vector(x, &n, arena_printf(&tmp, "layer.%zu.mlp.b3", l), M->b3, M->w3.cols);
        }
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) add_vector(x, &n, "output.readout", m->out_readout, D);
    /* the reader's limits: never write a file it would refuse */
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t entries = (uint64_t)x[i].rows * x[i].cols;
        if ((x[i].cols && x[i].rows > MODEL_MAX_MATRIX_ENTRIES / x[i].cols) || entries > MODEL_MAX_MATRIX_ENTRIES) {
            arena_free(&tmp);
            return fail(err, errsize, "model: tensor '%s' has %zu x %zu entries, over the limit of %llu per tensor",
                        x[i].name, x[i].rows, x[i].cols, (unsigned long long)MODEL_MAX_MATRIX_ENTRIES);
        }
        total += entries;
        if (total > MODEL_MAX_TOTAL_BYTES / 8) {
            arena_free(&tmp);
            return fail(err, errsize, "model: the weights take more than %llu bytes, over the reader's limit",
                        (unsigned long long)MODEL_MAX_TOTAL_BYTES);
        }
        if (entries && !x[i].data && !(x[i].mat && x[i].mat->store)) {
            arena_free(&tmp);
            return fail(err, errsize, "model: tensor '%s' has no data", x[i].name);
        }
    }
    StTensor *t = ARENA_ARRAY(&tmp, StTensor, 3 * n + 1), *tail = ARENA_ARRAY(&tmp, StTensor, n + 1);
    size_t nt = 0, ntail = 0;
    for (size_t i = 0; i < n; i++) file_form(&tmp, &x[i], t, &nt, tail, &ntail);
    for (size_t i = 0; i < ntail; i++) t[nt++] = tail[i];

    JsonBuf config, labels;
    jbuf_init(&config);
    jbuf_init(&labels);
    bool atoms_ok = write_config(m, &config);
    jbuf_puts(&labels, "[");
    for (size_t i = 0; i < D; i++) {
        if (i) jbuf_puts(&labels, ",");
        jbuf_string(&labels, m->labels && m->labels[i] ? m->labels[i] : "");
    }
    jbuf_puts(&labels, "]");
    bool ok = false;
    if (!atoms_ok) {
        fail(err, errsize, "model: a vocabulary or output value is a non-finite float or a string that is not UTF-8 text");
    } else if (config.failed || labels.failed) {
        fail(err, errsize, "model: out of memory");
    } else {
        const char *values[N_CHECKSUMMED] = {MODEL_FORMAT_NAME, MODEL_FORMAT_VERSION, config.data, labels.data,
                                             m->program_source ? m->program_source : "",
                                             m->program_name ? m->program_name : "",
                                             m->compile_flags ? m->compile_flags : ""};
        uint64_t h = MODEL_FNV_OFFSET;
        for (size_t i = 0; i < nt; i++) h = model_fnv1a(h, t[i].data, t[i].nbytes);
        StMeta meta[N_CHECKSUMMED + 1];
        for (size_t i = 0; i < N_CHECKSUMMED; i++) {
            h = model_fnv1a(h, values[i], strlen(values[i]) + 1);
            meta[i] = (StMeta){checksummed_keys[i], values[i]};
        }
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, h);
        meta[N_CHECKSUMMED] = (StMeta){"checksum", hex};
        StFile f = {t, nt, meta, N_CHECKSUMMED + 1};
        ok = st_serialize(&f, buf, len, err, errsize);
    }
    jbuf_free(&config);
    jbuf_free(&labels);
    arena_free(&tmp);
    return ok;
}

size_t model_file_bytes(const Model *m) {
    uint8_t *buf;
    size_t len;
    if (!model_serialize(m, &buf, &len, NULL, 0)) return 0;
    free(buf);
    return len;
}

bool model_write(const Model *m, const char *path, char *err, size_t errsize) {
    uint8_t *buf;
    size_t len;
    if (!model_serialize(m, &buf, &len, err, errsize)) return false;
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return fail(err, errsize, "cannot write %s: %s", path, strerror(errno));
    }
    bool ok = fwrite(buf, 1, len, f) == len;
    ok &= fclose(f) == 0;
    free(buf);
    if (!ok) return fail(err, errsize, "cannot write %s: %s", path, strerror(errno));
    return true;
}

/* ---- reading ---- */

typedef struct Reader {
    Model *m;
    const StFile *f;
    const StTensor **by_name; /* the file's tensors sorted by name */
    char *err;
    size_t errsize;
    uint64_t max_matrix_entries, max_total_entries;
    uint64_t total_entries; /* dense entries loaded so far */
    size_t n_tensors;       /* file tensors the config accounts for so far */
} Reader;

static bool get_size(Reader *r, const JsonValue *obj, const char *key, const char *where, size_t *out) {
    uint64_t v;
    const JsonValue *x = json_get(obj, key);
    if (!x) return fail(r->err, r->errsize, "model: config: %s lacks '%s'", where, key);
    if (!json_as_u64(x, &v) || v > MODEL_MAX_DIM)
        return fail(r->err, r->errsize, "model: config: %s '%s' is not a size", where, key);
    *out = (size_t)v;
    return true;
}

static bool get_bool(Reader *r, const JsonValue *obj, const char *key, const char *where, bool *out) {
    const JsonValue *x = json_get(obj, key);
    if (!x || x->kind != JSON_BOOL) return fail(r->err, r->errsize, "model: config: %s '%s' must be true or false", where, key);
    *out = x->boolean;
    return true;
}

/* A finite number >= 0. */
static bool get_nonneg(Reader *r, const JsonValue *obj, const char *key, const char *where, double *out) {
    const JsonValue *x = json_get(obj, key);
    if (!x || x->kind != JSON_NUMBER || !isfinite(x->number) || x->number < 0)
        return fail(r->err, r->errsize, "model: config: %s '%s' must be a finite number >= 0", where, key);
    *out = x->number;
    return true;
}

static bool get_string(Reader *r, const JsonValue *obj, const char *key, const char *where, const char **out) {
    const JsonValue *x = json_get(obj, key);
    if (!x || x->kind != JSON_STRING) return fail(r->err, r->errsize, "model: config: %s '%s' must be a string", where, key);
    *out = arena_strdup(&r->m->arena, x->text);
    return true;
}

static bool get_array(Reader *r, const JsonValue *obj, const char *key, const char *where, const JsonValue **out) {
    const JsonValue *x = json_get(obj, key);
    if (!x || x->kind != JSON_ARRAY) return fail(r->err, r->errsize, "model: config: %s '%s' must be an array", where, key);
    *out = x;
    return true;
}

/* The atoms of arr into v[arr->count]. */
static bool read_atoms_into(Reader *r, const JsonValue *arr, const char *what, Value *v) {
    for (size_t i = 0; i < arr->count; i++) {
        const JsonValue *x = &arr->items[i];
        switch (x->kind) {
        case JSON_STRING: v[i] = value_str(arena_strdup(&r->m->arena, x->text)); break;
        case JSON_BOOL: v[i] = value_bool(x->boolean); break;
        case JSON_NUMBER:
            if (x->is_integer) {
                int64_t k;
                if (!json_as_i64(x, &k)) return fail(r->err, r->errsize, "model: config: %s %zu is out of range", what, i);
                v[i] = value_int(k);
            } else {
                if (!isfinite(x->number)) return fail(r->err, r->errsize, "model: config: %s %zu is not finite", what, i);
                v[i] = value_float(x->number);
            }
            break;
        default: return fail(r->err, r->errsize, "model: config: %s %zu is not an atom", what, i);
        }
    }
    return true;
}

static bool read_atoms(Reader *r, const JsonValue *arr, const char *what, Value **out) {
    *out = ARENA_ARRAY(&r->m->arena, Value, arr->count ? arr->count : 1);
    return read_atoms_into(r, arr, what, *out);
}

static int tensor_name_cmp(const void *a, const void *b) {
    return strcmp((*(const StTensor *const *)a)->name, (*(const StTensor *const *)b)->name);
}

static const StTensor *find(const Reader *r, const char *name) {
    size_t lo = 0, hi = r->f->n_tensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->by_name[mid]->name, name);
        if (c == 0) return r->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static uint64_t get_le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

static double get_f64(const uint8_t *p) {
    uint64_t bits = get_le(p, 8);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static bool is_vector(const StTensor *t, StDtype dtype) { return t->dtype == dtype && t->ndim == 1; }

/* Where a tensor's entries go: a dense vector (zeroed doubles) or a matrix (stored sparse). */
typedef struct Sink {
    double *vec;
    Matrix *mat;
} Sink;

/* Entry `flat` (row-major) of the tensor; entries arrive in increasing order, so a matrix
 * column grows by appending. */
static void sink_put(Sink *s, uint64_t flat, double x) {
    if (s->vec) s->vec[flat] = x;
    else matrix_set(s->mat, (size_t)(flat / s->mat->cols), (size_t)(flat % s->mat->cols), x);
}

/* Fills the sink from the sparse triple NAME.shape/.index/.values. */
static bool load_sparse(Reader *r, const char *name, const StTensor *shape, const StTensor *index,
                        const StTensor *values, size_t rows, size_t cols, bool vector, uint64_t entries, Sink *dst) {
    size_t ndim = vector ? 1 : 2;
    if (!is_vector(shape, ST_I64) || shape->shape[0] != ndim)
        return fail(r->err, r->errsize, "model: tensor '%s.shape' must be I64 of shape [%zu]", name, ndim);
    const uint8_t *sp = shape->data;
    if (get_le(sp, 8) != rows || (!vector && get_le(sp + 8, 8) != cols)) {
        if (vector) return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu] (config)", name, rows);
        return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu, %zu] (config)", name, rows, cols);
    }
    if (!(is_vector(index, ST_I32) || is_vector(index, ST_I64)))
        return fail(r->err, r->errsize, "model: tensor '%s.index' must be a vector of I32 or I64", name);
    if (!is_vector(values, ST_F64)) return fail(r->err, r->errsize, "model: tensor '%s.values' must be a vector of F64", name);
    size_t nnz = values->shape[0];
    if (index->shape[0] != nnz)
        return fail(r->err, r->errsize, "model: tensor '%s' has %zu indices but %zu values", name, index->shape[0], nnz);
    int isize = index->dtype == ST_I32 ? 4 : 8;
    const uint8_t *ip = index->data, *vp = values->data;
    uint64_t prev = 0;
    for (size_t k = 0; k < nnz; k++) {
        uint64_t raw = get_le(ip + (size_t)isize * k, isize);
        /* indices are signed in the file: a negative one is out of range */
        if ((isize == 4 && raw > (uint64_t)INT32_MAX) || raw > (uint64_t)INT64_MAX || raw >= entries)
            return fail(r->err, r->errsize, "model: tensor '%s' has an index out of range (entry %zu)", name, k);
        if (k > 0 && raw <= prev)
            return fail(r->err, r->errsize, "model: tensor '%s' has indices not strictly increasing (entry %zu)", name, k);
        prev = raw;
        double x = get_f64(vp + 8 * k);
        if (!isfinite(x)) return fail(r->err, r->errsize, "model: tensor '%s' has a non-finite entry", name);
        sink_put(dst, raw, x);
    }
    return true;
}

/* Loads the weight tensor `name` of the given shape (vector: [rows]) into a fresh dense array
 * (*vec_out) or a fresh matrix (*mat_out), from its dense F64 form NAME or its sparse form
 * NAME.shape/.index/.values, after checking the dense expansion against the limits. A matrix
 * stores the entries whose bits are not those of +0.0 (runtime/matrix.h), whichever the form. */
static bool load(Reader *r, const char *name, size_t rows, size_t cols, bool vector, double **vec_out,
                 Matrix *mat_out) {
    uint64_t entries = vector ? rows : (uint64_t)rows * cols;
    if ((!vector && cols && rows > r->max_matrix_entries / cols) || entries > r->max_matrix_entries) {
        if (vector)
            return fail(r->err, r->errsize, "model: tensor '%s' would expand to %zu entries, over the limit of %llu per "
                        "tensor", name, rows, (unsigned long long)r->max_matrix_entries);
        return fail(r->err, r->errsize, "model: tensor '%s' would expand to %zu x %zu entries, over the limit of %llu per "
                    "tensor", name, rows, cols, (unsigned long long)r->max_matrix_entries);
    }
    if (entries > r->max_total_entries - r->total_entries)
        return fail(r->err, r->errsize, "model: the weights would take more than %llu bytes in memory (at tensor '%s')",
                    (unsigned long long)r->max_total_entries * 8, name);
    r->total_entries += entries;
    char sname[160], iname[160], vname[160];
    snprintf(sname, sizeof sname, "%s.shape", name);
    snprintf(iname, sizeof iname, "%s.index", name);
    snprintf(vname, sizeof vname, "%s.values", name);
    const StTensor *t = find(r, name), *shape = find(r, sname), *index = find(r, iname), *values = find(r, vname);
    int parts = (shape != NULL) + (index != NULL) + (values != NULL);
    if (t && parts) return fail(r->err, r->errsize, "model: tensor '%s' is stored both dense and sparse", name);
    if (!t && parts == 0) return fail(r->err, r->errsize, "model: tensor '%s' is missing", name);
    if (!t && parts < 3)
        return fail(r->err, r->errsize, "model: sparse tensor '%s' needs all of '%s', '%s' and '%s'", name, sname, iname,
                    vname);
    if (t) {
        if (t->dtype != ST_F64) return fail(r->err, r->errsize, "model: tensor '%s' is not F64", name);
        bool shape_ok = vector ? (t->ndim == 1 && t->shape[0] == rows)
                               : (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols);
        if (!shape_ok) {
            if (vector) return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu] (config)", name, rows);
            return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu, %zu] (config)", name, rows, cols);
        }
    }
    Sink dst = {NULL, NULL};
    if (vector) {
        dst.vec = ARENA_ARRAY(&r->m->arena, double, entries ? (size_t)entries : 1);
        *vec_out = dst.vec;
    } else {
        *mat_out = model_matrix(r->m, rows, cols);
        dst.mat = mat_out;
    }
    if (!t) {
        r->n_tensors += 3;
        return load_sparse(r, name, shape, index, values, rows, cols, vector, entries, &dst);
    }
    r->n_tensors += 1;
    const uint8_t *p = t->data;
    for (size_t i = 0; i < (size_t)entries; i++) {
        double x = get_f64(p + 8 * i);
        if (!isfinite(x)) return fail(r->err, r->errsize, "model: tensor '%s' has a non-finite entry", name);
        if (x != 0.0 || signbit(x)) sink_put(&dst, i, x);
    }
    return true;
}

/* Whether the file holds the weight tensor `name` in either form (or a part of the sparse one). */
static bool present(const Reader *r, const char *name) {
    static const char *const parts[] = {"", ".shape", ".index", ".values"};
    char full[160];
    for (int k = 0; k < 4; k++) {
        snprintf(full, sizeof full, "%s%s", name, parts[k]);
        if (find(r, full)) return true;
    }
    return false;
}

static bool load_matrix(Reader *r, const char *name, size_t rows, size_t cols, Matrix *out) {
    *out = (Matrix){rows, cols, NULL};
    return load(r, name, rows, cols, false, NULL, out);
}

static bool load_vector(Reader *r, const char *name, size_t n, double **out) {
    return load(r, name, n, 0, true, out, NULL);
}

static bool read_layers(Reader *r, const JsonValue *cfg) {
    Model *m = r->m;
    size_t D = m->d_model;
    const JsonValue *layers = NULL;
    if (!get_size(r, cfg, "n_layers", "", &m->n_layers) || !get_array(r, cfg, "layers", "", &layers)) return false;
    if (layers->count != m->n_layers)
        return fail(r->err, r->errsize, "model: config: n_layers is %zu but 'layers' has %zu entries", m->n_layers,
                    layers->count);
    m->layers = ARENA_ARRAY(&m->arena, ModelLayer, m->n_layers ? m->n_layers : 1);
    char name[128], where[64];
    for (size_t l = 0; l < m->n_layers; l++) {
        ModelLayer *L = &m->layers[l];
        const JsonValue *lj = &layers->items[l], *heads = NULL;
        snprintf(where, sizeof where, "layer %zu", l);
        if (lj->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: %s is not an object", where);
        if (!get_array(r, lj, "heads", where, &heads)) return false;
        L->n_heads = heads->count;
        L->heads = ARENA_ARRAY(&m->arena, ModelHead, L->n_heads ? L->n_heads : 1);
        for (size_t h = 0; h < L->n_heads; h++) {
            ModelHead *H = &L->heads[h];
            const JsonValue *hj = &heads->items[h];
            size_t dk, dv;
            snprintf(where, sizeof where, "layer %zu head %zu", l, h);
            if (hj->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: %s is not an object", where);
            if (!get_size(r, hj, "dk", where, &dk) || !get_size(r, hj, "dv", where, &dv) ||
                !get_bool(r, hj, "causal", where, &H->causal) || !get_nonneg(r, hj, "tie_tol", where, &H->tie_tol) ||
                !get_string(r, hj, "label", where, &H->label))
                return false;
            H->bos_extra = 0;
            if (json_get(hj, "bos_extra") && !get_nonneg(r, hj, "bos_extra", where, &H->bos_extra)) return false;
            if (H->bos_extra > MODEL_MAX_BOS_EXTRA) /* out24b-004: 1e39 is inf in float32 */
                return fail(r->err, r->errsize, "model: config: %s: bos_extra %.17g is above 2^50", where, H->bos_extra);
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wq", l, h);
            if (!load_matrix(r, name, D, dk, &H->wq)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wk", l, h);
            if (!load_matrix(r, name, D, dk, &H->wk)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wv", l, h);
            if (!load_matrix(r, name, D, dv, &H->wv)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wo", l, h);
            if (!load_matrix(r, name, dv, D, &H->wo)) return false;
        }
        size_t hidden;
        snprintf(where, sizeof where, "layer %zu", l);
        if (!get_size(r, lj, "mlp_hidden", where, &hidden)) return false;
        snprintf(name, sizeof name, "layer.%zu.mlp.w1", l);
        if (!load_matrix(r, name, D, hidden, &L->mlp.w1)) return false;
        snprintf(name, sizeof name, "layer.%zu.mlp.b1", l);
        if (!load_vector(r, name, hidden, &L->mlp.b1)) return false;
        snprintf(name, sizeof name, "layer.%zu.mlp.w2", l);
        if (!load_matrix(r, name, hidden, D, &L->mlp.w2)) return false;
        snprintf(name, sizeof name, "layer.%zu.mlp.b2", l);
        if (!load_vector(r, name, D, &L->mlp.b2)) return false;
        if (!get_bool(r, lj, "gated", where, &L->mlp.gated)) return false;
        if (L->mlp.gated) {
            snprintf(name, sizeof name, "layer.%zu.mlp.w3", l);
            if (!load_matrix(r, name, D, hidden, &L->mlp.w3)) return false;
            snprintf(name, sizeof name, "layer.%zu.mlp.b3", l);
            if (!load_vector(r, name, hidden, &L->mlp.b3)) return false;
        } else {
            static const char *const gate[2] = {"w3", "b3"};
            for (int k = 0; k < 2; k++) {
                snprintf(name, sizeof name, "layer.%zu.mlp.%s", l, gate[k]);
                if (present(r, name))
                    return fail(r->err, r->errsize, "model: tensor '%s' is present but layer %zu is not gated (config "
                                "'gated': false)", name, l);
            }
        }
    }
    return true;
}

static bool read_kind_block(Reader *r, const JsonValue *out) {
    Model *m = r->m;
    const JsonValue *kb = json_get(out, "kind_block"), *kinds = NULL;
    if (!kb) return fail(r->err, r->errsize, "model: config: output lacks 'kind_block'");
    if (kb->kind == JSON_NULL) return true;
    if (kb->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: output 'kind_block' must be null or an object");
    if (!get_size(r, kb, "dim", "output kind_block", &m->out_kind_dim) ||
        !get_array(r, kb, "kinds", "output kind_block", &kinds))
        return false;
    if (kinds->count == 0 || kinds->count > 3)
        return fail(r->err, r->errsize, "model: config: output kind_block must name 1 to 3 kinds");
    m->out_kind_count = kinds->count;
    m->out_kinds = ARENA_ARRAY(&m->arena, ValueKind, kinds->count);
    for (size_t i = 0; i < kinds->count; i++) {
        const JsonValue *k = &kinds->items[i];
        int found = -1;
        for (int j = 0; j < 3; j++)
            if (k->kind == JSON_STRING && strcmp(k->text, kind_names[j]) == 0) found = j;
        if (found < 0) return fail(r->err, r->errsize, "model: config: output kind_block kinds must be \"bool\", \"int\" or \"float\"");
        m->out_kinds[i] = (ValueKind)found;
    }
    return true;
}

/* "values_by_length": absent or null (none), or max_len lists of atoms, stored one after the
 * other in out_len_values with their offsets in out_len_start. The rules of the readout contract
 * (numbers, sorted, margin per list, every member in "values") are model_check_output's. */
static bool read_values_by_length(Reader *r, const JsonValue *out) {
    Model *m = r->m;
    const JsonValue *vbl = json_get(out, "values_by_length");
    if (!vbl || vbl->kind == JSON_NULL) return true;
    if (vbl->kind != JSON_ARRAY)
        return fail(r->err, r->errsize, "model: config: output 'values_by_length' must be null or an array");
    if (vbl->count != m->max_len)
        return fail(r->err, r->errsize, "model: config: output 'values_by_length' has %zu lists, but max_len is %zu",
                    vbl->count, m->max_len);
    size_t total = 0;
    for (size_t n = 0; n < vbl->count; n++) {
        if (vbl->items[n].kind != JSON_ARRAY)
            return fail(r->err, r->errsize, "model: config: output 'values_by_length' entry %zu is not a list", n);
        total += vbl->items[n].count; /* no overflow: each item is at least one byte of the config */
    }
    m->out_len_count = vbl->count;
    m->out_len_start = ARENA_ARRAY(&m->arena, size_t, vbl->count + 1);
    m->out_len_values = ARENA_ARRAY(&m->arena, Value, total ? total : 1);
    size_t at = 0;
    char what[64];
    for (size_t n = 0; n < vbl->count; n++) {
        const JsonValue *list = &vbl->items[n];
        snprintf(what, sizeof what, "output value of length %zu, number", n + 1);
        if (!read_atoms_into(r, list, what, m->out_len_values + at)) return false;
        m->out_len_start[n] = at;
        at += list->count;
    }
    m->out_len_start[vbl->count] = at;
    return true;
}

/* A margin check's "terms" ([[dim, coef], ...]), "thresholds" and "margin"; the rules on their
 * values (dims in range and increasing, finite numbers, margin > 0, counts) are
 * model_check_checks'. */
static bool read_margin_check(Reader *r, const JsonValue *cj, const char *where, ModelMargin *g) {
    Model *m = r->m;
    const JsonValue *terms = NULL, *thresholds = NULL, *margin;
    if (!get_array(r, cj, "terms", where, &terms) || !get_array(r, cj, "thresholds", where, &thresholds)) return false;
    g->n_terms = terms->count;
    g->dims = ARENA_ARRAY(&m->arena, size_t, g->n_terms ? g->n_terms : 1);
    g->coefs = ARENA_ARRAY(&m->arena, double, g->n_terms ? g->n_terms : 1);
    for (size_t t = 0; t < g->n_terms; t++) {
        const JsonValue *term = &terms->items[t];
        uint64_t dim;
        if (term->kind != JSON_ARRAY || term->count != 2 || !json_as_u64(&term->items[0], &dim) ||
            dim > MODEL_MAX_DIM || term->items[1].kind != JSON_NUMBER || !isfinite(term->items[1].number))
            return fail(r->err, r->errsize, "model: config: %s (margin) term %zu must be [dim, finite coefficient]", where,
                        t);
        g->dims[t] = (size_t)dim;
        g->coefs[t] = term->items[1].number;
    }
    g->n_thresholds = thresholds->count;
    g->thresholds = ARENA_ARRAY(&m->arena, double, g->n_thresholds ? g->n_thresholds : 1);
    for (size_t j = 0; j < g->n_thresholds; j++) {
        const JsonValue *x = &thresholds->items[j];
        if (x->kind != JSON_NUMBER || !isfinite(x->number))
            return fail(r->err, r->errsize, "model: config: %s (margin) threshold %zu must be a finite number", where, j);
        g->thresholds[j] = x->number;
    }
    margin = json_get(cj, "margin");
    if (!margin || margin->kind != JSON_NUMBER || !isfinite(margin->number) || !(margin->number > 0))
        return fail(r->err, r->errsize, "model: config: %s (margin) 'margin' must be a finite number > 0", where);
    g->m = margin->number;
    return true;
}

static bool read_output_and_checks(Reader *r, const JsonValue *cfg) {
    Model *m = r->m;
    size_t D = m->d_model;
    const JsonValue *out = json_get(cfg, "output"), *kind, *values = NULL;
    char why[300];
    if (!out || out->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: 'output' must be an object");
    if (!get_string(r, out, "name", "output", &m->output_name)) return false;
    kind = json_get(out, "kind");
    if (kind && kind->kind == JSON_STRING && strcmp(kind->text, "categorical") == 0) {
        m->output_kind = MODEL_OUT_CATEGORICAL;
        if (!get_size(r, out, "dim", "output", &m->out_dim) || !get_size(r, out, "count", "output", &m->out_count) ||
            !get_array(r, out, "values", "output", &values))
            return false;
        if (values->count != m->out_count)
            return fail(r->err, r->errsize, "model: config: output has %zu dims but %zu values", m->out_count, values->count);
        if (!read_atoms(r, values, "output value", &m->out_values) || !read_values_by_length(r, out)) return false;
    } else if (kind && kind->kind == JSON_STRING && strcmp(kind->text, "numerical") == 0) {
        m->output_kind = MODEL_OUT_NUMERICAL;
        if (!get_array(r, out, "values", "output", &values) || !read_atoms(r, values, "output value", &m->out_values) ||
            !get_nonneg(r, out, "margin", "output", &m->out_margin) || !read_kind_block(r, out) ||
            !get_nonneg(r, out, "error_bound", "output", &m->out_error_bound) ||
            !get_nonneg(r, out, "error_rel", "output", &m->out_error_rel))
            return false;
        m->out_count = values->count;
        if (json_get(out, "legacy_integral"))
            return fail(r->err, r->errsize, "model: config: output 'legacy_integral' is no longer supported (a model of an "
                        "older compiler): recompile the program with raspcc");
        if (!read_values_by_length(r, out)) return false;
        if (!load_vector(r, "output.readout", D, &m->out_readout)) return false;
    } else {
        return fail(r->err, r->errsize, "model: config: output 'kind' must be \"categorical\" or \"numerical\"");
    }
    if (!model_check_output(m, why, sizeof why)) return fail(r->err, r->errsize, "model: config: %s", why);

    const JsonValue *checks = NULL;
    if (!get_array(r, cfg, "checks", "", &checks)) return false;
    m->n_checks = checks->count;
    m->checks = ARENA_ARRAY(&m->arena, ModelCheck, m->n_checks ? m->n_checks : 1);
    m->margins = ARENA_ARRAY(&m->arena, ModelMargin, m->n_checks ? m->n_checks : 1); /* at most one each */
    for (size_t i = 0; i < m->n_checks; i++) {
        ModelCheck *c = &m->checks[i];
        const JsonValue *cj = &checks->items[i];
        char where[32];
        snprintf(where, sizeof where, "check %zu", i);
        if (cj->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: %s is not an object", where);
        const char *kind;
        if (!get_string(r, cj, "kind", where, &kind) || !get_size(r, cj, "after_layer", where, &c->after_layer) ||
            !get_string(r, cj, "what", where, &c->what))
            return false;
        if (!strcmp(kind, "one_hot")) c->kind = MODEL_CHECK_ONE_HOT;
        else if (!strcmp(kind, "single_key")) c->kind = MODEL_CHECK_SINGLE_KEY;
        else if (!strcmp(kind, "one_kind")) c->kind = MODEL_CHECK_ONE_KIND;
        else if (!strcmp(kind, "margin")) c->kind = MODEL_CHECK_MARGIN;
        else return fail(r->err, r->errsize, "model: config: %s has unknown kind '%.40s'", where, kind);
        if (c->kind == MODEL_CHECK_MARGIN) { /* its payload goes to the next of m->margins */
            c->dim = m->n_margins++;
            c->count = 1;
            if (!read_margin_check(r, cj, where, &m->margins[c->dim])) return false;
            continue;
        }
        if (!get_size(r, cj, "dim", where, &c->dim) || !get_size(r, cj, "count", where, &c->count)) return false;
        if (c->kind == MODEL_CHECK_ONE_KIND) {
            const JsonValue *s = NULL;
            if (!get_array(r, cj, "strings", where, &s)) return false;
            if (s->count != c->count)
                return fail(r->err, r->errsize, "model: config: %s has %zu string flags for %zu dims", where, s->count, c->count);
            c->is_string = ARENA_ARRAY(&m->arena, bool, c->count);
            for (size_t d = 0; d < c->count; d++) {
                if (s->items[d].kind != JSON_BOOL)
                    return fail(r->err, r->errsize, "model: config: %s string flags must be booleans", where);
                c->is_string[d] = s->items[d].boolean;
            }
        }
    }
    /* "error_flag": absent or null (files without it, older ones included), or {"dim": d} */
    const JsonValue *flag = json_get(cfg, "error_flag");
    if (flag && flag->kind != JSON_NULL) {
        if (flag->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: 'error_flag' must be null or an object");
        if (!get_size(r, flag, "dim", "error_flag", &m->error_flag_dim)) return false;
        m->has_error_flag = true;
    }
    if (!model_check_checks(m, why, sizeof why)) return fail(r->err, r->errsize, "model: config: %s", why);
    return true;
}

static bool read_config(Reader *r, const char *config_text, const char *labels_text) {
    Model *m = r->m;
    Arena tmp;
    arena_init(&tmp);
    JsonValue *cfg, *labels;
    char jerr[128];
    bool ok = false;
    const JsonValue *vocab = NULL, *tt = NULL;
    if (!json_parse(&tmp, config_text, strlen(config_text), &cfg, jerr, sizeof jerr)) {
        fail(r->err, r->errsize, "model: config is not valid JSON: %s", jerr);
        goto done;
    }
    if (cfg->kind != JSON_OBJECT) { fail(r->err, r->errsize, "model: config is not a JSON object"); goto done; }
    if (!get_size(r, cfg, "d_model", "", &m->d_model) || !get_size(r, cfg, "max_len", "", &m->max_len) ||
        !get_size(r, cfg, "n_vocab", "", &m->n_vocab) || !get_array(r, cfg, "vocab", "", &vocab))
        goto done;
    if (m->d_model == 0) { fail(r->err, r->errsize, "model: config: d_model is 0"); goto done; }
    if (vocab->count != m->n_vocab) {
        fail(r->err, r->errsize, "model: config: n_vocab is %zu but 'vocab' has %zu atoms", m->n_vocab, vocab->count);
        goto done;
    }
    if (!read_atoms(r, vocab, "vocabulary atom", &m->vocab)) goto done;
    tt = json_get(cfg, "token_type");
    m->token_type = -1;
    for (int i = 0; i < 4; i++)
        if (tt && tt->kind == JSON_STRING && strcmp(tt->text, token_type_names[i]) == 0) m->token_type = i;
    if (m->token_type < 0) { fail(r->err, r->errsize, "model: config: unknown token_type"); goto done; }
    const JsonValue *nt = json_get(cfg, "numeric_tokens");
    if (!nt) { fail(r->err, r->errsize, "model: config: 'numeric_tokens' is missing"); goto done; }
    if (nt->kind == JSON_OBJECT) {
        const JsonValue *lo = json_get(nt, "lo"), *hi = json_get(nt, "hi");
        if (!get_size(r, nt, "dim", "numeric_tokens", &m->token_value_dim)) goto done;
        if (!lo || !hi || lo->kind != JSON_NUMBER || hi->kind != JSON_NUMBER || !isfinite(lo->number) ||
            !isfinite(hi->number) || lo->number > hi->number || m->token_value_dim >= m->d_model || m->n_vocab != 1) {
            fail(r->err, r->errsize, "model: config: numeric_tokens needs dim < d_model, finite lo <= hi, one vocabulary row");
            goto done;
        }
        m->numeric_tokens = true;
        m->token_lo = lo->number;
        m->token_hi = hi->number;
    } else if (nt->kind != JSON_NULL) {
        fail(r->err, r->errsize, "model: config: 'numeric_tokens' must be null or an object");
        goto done;
    }
    if (!json_parse(&tmp, labels_text, strlen(labels_text), &labels, jerr, sizeof jerr)) {
        fail(r->err, r->errsize, "model: labels are not valid JSON: %s", jerr);
        goto done;
    }
    if (labels->kind != JSON_ARRAY || labels->count != m->d_model) {
        fail(r->err, r->errsize, "model: labels must be an array of d_model = %zu strings", m->d_model);
        goto done;
    }
    m->labels = ARENA_ARRAY(&m->arena, char *, m->d_model);
    for (size_t i = 0; i < m->d_model; i++) {
        if (labels->items[i].kind != JSON_STRING) { fail(r->err, r->errsize, "model: label %zu is not a string", i); goto done; }
        m->labels[i] = arena_strdup(&m->arena, labels->items[i].text);
    }

    if (!load_matrix(r, "embed.token", m->n_vocab + 1, m->d_model, &m->token_embed) ||
        !load_matrix(r, "embed.pos", m->max_len + 1, m->d_model, &m->pos_embed) || !read_layers(r, cfg) ||
        !read_output_and_checks(r, cfg))
        goto done;
    if (r->n_tensors != r->f->n_tensors) {
        fail(r->err, r->errsize, "model: the file holds %zu tensors but the config describes %zu", r->f->n_tensors,
             r->n_tensors);
        goto done;
    }
    ok = true;
done:
    arena_free(&tmp);
    return ok;
}

bool model_read_buffer(const uint8_t *buf, size_t len, Model *m, char *err, size_t errsize) {
    return model_read_buffer_opts(buf, len, NULL, m, err, errsize);
}

bool model_read_buffer_ex(const uint8_t *buf, size_t len, bool verify_checksum, Model *m, char *err, size_t errsize) {
    ModelReadOptions o = {verify_checksum, MODEL_MAX_MATRIX_ENTRIES, MODEL_MAX_TOTAL_BYTES};
    return model_read_buffer_opts(buf, len, &o, m, err, errsize);
}

bool model_read_buffer_opts(const uint8_t *buf, size_t len, const ModelReadOptions *opt, Model *m, char *err,
                            size_t errsize) {
    static const ModelReadOptions defaults = {true, MODEL_MAX_MATRIX_ENTRIES, MODEL_MAX_TOTAL_BYTES};
    if (!opt) opt = &defaults;
    model_init(m);
    Arena tmp;
    arena_init(&tmp);
    StFile f;
    bool ok = false;
    const char *values[N_CHECKSUMMED], *stored;
    char hex[17];
    if (!st_parse(&tmp, buf, len, &f, err, errsize)) goto done;
    const char *format = st_meta_get(&f, "format"), *version = st_meta_get(&f, "version");
    if (!format || strcmp(format, MODEL_FORMAT_NAME) != 0) {
        fail(err, errsize, "not a raspcc model file (safetensors metadata 'format' is %s%.40s%s, expected \"%s\")",
             format ? "\"" : "", format ? format : "missing", format ? "\"" : "", MODEL_FORMAT_NAME);
        goto done;
    }
    if (version && strcmp(version, "1") == 0) {
        fail(err, errsize, "raspcc model version 1 is no longer supported (this build reads version %s, with sparse "
             "tensors and exact readout): recompile the program with raspcc", MODEL_FORMAT_VERSION);
        goto done;
    }
    if (version && strcmp(version, "2") == 0) {
        fail(err, errsize, "raspcc model version 2 is no longer supported (this build reads version %s, with gated MLPs "
             "and margin checks): recompile the program with raspcc", MODEL_FORMAT_VERSION);
        goto done;
    }
    if (!version || strcmp(version, MODEL_FORMAT_VERSION) != 0) {
        fail(err, errsize, "unsupported raspcc model version \"%.40s\" (this build reads version %s)",
             version ? version : "(missing)", MODEL_FORMAT_VERSION);
        goto done;
    }
    for (size_t i = 0; i < N_CHECKSUMMED; i++) {
        values[i] = st_meta_get(&f, checksummed_keys[i]);
        if (!values[i]) { fail(err, errsize, "model: metadata '%s' is missing", checksummed_keys[i]); goto done; }
    }
    stored = st_meta_get(&f, "checksum");
    if (!stored) { fail(err, errsize, "model: metadata 'checksum' is missing"); goto done; }
    {
        /* st_parse guarantees the tensors tile the data area, which ends the buffer. */
        size_t data_len = 0;
        for (size_t i = 0; i < f.n_tensors; i++) data_len += f.tensors[i].nbytes;
        uint64_t h = model_fnv1a(MODEL_FNV_OFFSET, buf + len - data_len, data_len);
        for (size_t i = 0; i < N_CHECKSUMMED; i++) h = model_fnv1a(h, values[i], strlen(values[i]) + 1);
        snprintf(hex, sizeof hex, "%016" PRIx64, h);
    }
    if (opt->verify_checksum && strcmp(hex, stored) != 0) {
        fail(err, errsize, "model file is corrupted: checksum mismatch (stored %.20s, computed %s)", stored, hex);
        goto done;
    }
    Reader r = {.m = m, .f = &f, .err = err, .errsize = errsize, .max_matrix_entries = opt->max_matrix_entries,
                .max_total_entries = opt->max_total_bytes / 8};
    r.by_name = ARENA_ARRAY(&tmp, const StTensor *, f.n_tensors ? f.n_tensors : 1);
    for (size_t i = 0; i < f.n_tensors; i++) r.by_name[i] = &f.tensors[i];
    if (f.n_tensors > 1) qsort(r.by_name, f.n_tensors, sizeof *r.by_name, tensor_name_cmp);
    if (!read_config(&r, values[2], values[3])) goto done;
    m->program_source = arena_strdup(&m->arena, values[4]);
    m->program_name = arena_strdup(&m->arena, values[5]);
    m->compile_flags = arena_strdup(&m->arena, values[6]);
    ok = true;
done:
    arena_free(&tmp);
    if (!ok) model_free(m);
    return ok;
}

bool model_read(const char *path, Model *m, char *err, size_t errsize) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        model_init(m);
        model_free(m);
        return fail(err, errsize, "cannot open %s: %s", path, strerror(errno));
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool read_error = ferror(f);
    fclose(f);
    if (!buf || read_error) {
        free(buf);
        model_init(m);
        model_free(m);
        return fail(err, errsize, "cannot read %s: %s", path, buf ? "read error" : "out of memory");
    }
    char inner[512];
    bool ok = model_read_buffer(buf, len, m, inner, sizeof inner);
    free(buf);
    if (!ok) return fail(err, errsize, "%s: %s", path, inner);
    return true;
}
