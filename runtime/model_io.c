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

static bool write_atom(JsonBuf *b, Value v) {
    switch (v.kind) {
    case VAL_BOOL: jbuf_puts(b, v.as.b ? "true" : "false"); return true;
    case VAL_INT: jbuf_i64(b, v.as.i); return true;
    case VAL_FLOAT:
        if (!isfinite(v.as.f)) return false;
        jbuf_double(b, v.as.f);
        return true;
    case VAL_STR: jbuf_string(b, v.as.s ? v.as.s : ""); return true;
    }
    return false;
}

static bool write_config(const Model *m, JsonBuf *b) {
    bool ok = true;
    jbuf_printf(b, "{\"d_model\":%zu,\"max_len\":%zu,\"n_vocab\":%zu,\"vocab\":[", m->d_model, m->max_len, m->n_vocab);
    for (size_t i = 0; i < m->n_vocab; i++) {
        if (i) jbuf_puts(b, ",");
        ok &= write_atom(b, m->vocab[i]);
    }
    int tt = m->token_type >= 0 && m->token_type < 4 ? m->token_type : 0;
    jbuf_printf(b, "],\"token_type\":\"%s\",\"numeric_tokens\":", token_type_names[tt]);
    if (m->numeric_tokens) {
        jbuf_printf(b, "{\"dim\":%zu,\"lo\":", m->token_value_dim);
        jbuf_double(b, m->token_lo);
        jbuf_puts(b, ",\"hi\":");
        jbuf_double(b, m->token_hi);
        jbuf_puts(b, "}");
    } else {
        jbuf_puts(b, "null");
    }
    jbuf_puts(b, ",\"tie_tolerance\":");
    jbuf_double(b, m->tie_tolerance);
    jbuf_printf(b, ",\"n_layers\":%zu,\"layers\":[", m->n_layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        jbuf_puts(b, l ? ",{\"heads\":[" : "{\"heads\":[");
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            jbuf_printf(b, "%s{\"dk\":%zu,\"dv\":%zu,\"causal\":%s,\"label\":", h ? "," : "", H->wq.cols,
                        H->wv.cols, H->causal ? "true" : "false");
            jbuf_string(b, H->label ? H->label : "");
            jbuf_puts(b, "}");
        }
        jbuf_printf(b, "],\"mlp_hidden\":%zu}", L->mlp.w1.cols);
    }
    jbuf_puts(b, "],\"output\":{\"name\":");
    jbuf_string(b, m->output_name ? m->output_name : "");
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        jbuf_printf(b, ",\"kind\":\"categorical\",\"dim\":%zu,\"count\":%zu,\"values\":[", m->out_dim, m->out_count);
        for (size_t i = 0; i < m->out_count; i++) {
            if (i) jbuf_puts(b, ",");
            ok &= write_atom(b, m->out_values[i]);
        }
        jbuf_puts(b, "]}");
    } else {
        jbuf_printf(b, ",\"kind\":\"numerical\",\"integral\":%s}", m->out_integral ? "true" : "false");
    }
    jbuf_puts(b, ",\"checks\":[");
    for (size_t i = 0; i < m->n_checks; i++) {
        const ModelCheck *c = &m->checks[i];
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
    jbuf_puts(b, "]}");
    return ok;
}

static void add_tensor(StTensor *t, size_t *n, const char *name, const double *data, size_t rows, size_t cols,
                       int ndim) {
    StTensor *x = &t[(*n)++];
    x->name = name;
    x->dtype = ST_F64;
    x->ndim = (size_t)ndim;
    x->shape[0] = rows;
    x->shape[1] = cols;
    x->data = data;
    x->nbytes = rows * (ndim == 2 ? cols : 1) * sizeof(double);
}

bool model_serialize(const Model *m, uint8_t **buf, size_t *len, char *err, size_t errsize) {
    *buf = NULL;
    *len = 0;
    Arena tmp;
    arena_init(&tmp);
    size_t cap = 3;
    for (size_t l = 0; l < m->n_layers; l++) cap += 4 * m->layers[l].n_heads + 4;
    StTensor *t = ARENA_ARRAY(&tmp, StTensor, cap);
    size_t n = 0, D = m->d_model;
    add_tensor(t, &n, "embed.token", m->token_embed.data, m->token_embed.rows, m->token_embed.cols, 2);
    add_tensor(t, &n, "embed.pos", m->pos_embed.data, m->pos_embed.rows, m->pos_embed.cols, 2);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            const Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            const char *wn[4] = {"wq", "wk", "wv", "wo"};
            for (int k = 0; k < 4; k++)
                add_tensor(t, &n, arena_printf(&tmp, "layer.%zu.head.%zu.%s", l, h, wn[k]), w[k]->data, w[k]->rows,
                           w[k]->cols, 2);
        }
        const ModelMlp *M = &L->mlp;
        add_tensor(t, &n, arena_printf(&tmp, "layer.%zu.mlp.w1", l), M->w1.data, M->w1.rows, M->w1.cols, 2);
        add_tensor(t, &n, arena_printf(&tmp, "layer.%zu.mlp.b1", l), M->b1, M->w1.cols, 0, 1);
        add_tensor(t, &n, arena_printf(&tmp, "layer.%zu.mlp.w2", l), M->w2.data, M->w2.rows, M->w2.cols, 2);
        add_tensor(t, &n, arena_printf(&tmp, "layer.%zu.mlp.b2", l), M->b2, D, 0, 1);
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) add_tensor(t, &n, "output.readout", m->out_readout, D, 0, 1);
    for (size_t i = 0; i < n; i++)
        if (t[i].nbytes && !t[i].data) {
            arena_free(&tmp);
            return fail(err, errsize, "model: tensor '%s' has no data", t[i].name);
        }

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
        fail(err, errsize, "model: a vocabulary or output value is a non-finite float");
    } else if (config.failed || labels.failed) {
        fail(err, errsize, "model: out of memory");
    } else {
        const char *values[N_CHECKSUMMED] = {MODEL_FORMAT_NAME, MODEL_FORMAT_VERSION, config.data, labels.data,
                                             m->program_source ? m->program_source : "",
                                             m->program_name ? m->program_name : "",
                                             m->compile_flags ? m->compile_flags : ""};
        uint64_t h = MODEL_FNV_OFFSET;
        for (size_t i = 0; i < n; i++) h = model_fnv1a(h, t[i].data, t[i].nbytes);
        StMeta meta[N_CHECKSUMMED + 1];
        for (size_t i = 0; i < N_CHECKSUMMED; i++) {
            h = model_fnv1a(h, values[i], strlen(values[i]) + 1);
            meta[i] = (StMeta){checksummed_keys[i], values[i]};
        }
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, h);
        meta[N_CHECKSUMMED] = (StMeta){"checksum", hex};
        StFile f = {t, n, meta, N_CHECKSUMMED + 1};
        ok = st_serialize(&f, buf, len, err, errsize);
    }
    jbuf_free(&config);
    jbuf_free(&labels);
    arena_free(&tmp);
    return ok;
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
    char *err;
    size_t errsize;
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

static bool read_atoms(Reader *r, const JsonValue *arr, const char *what, Value **out) {
    Value *v = ARENA_ARRAY(&r->m->arena, Value, arr->count ? arr->count : 1);
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
    *out = v;
    return true;
}

/* Loads tensor `name`, which must be F64 with the given shape (cols 0 = a vector), into dst. */
static bool load(Reader *r, const char *name, size_t rows, size_t cols, bool vector, double *dst) {
    const StTensor *t = st_find(r->f, name);
    if (!t) return fail(r->err, r->errsize, "model: tensor '%s' is missing", name);
    if (t->dtype != ST_F64) return fail(r->err, r->errsize, "model: tensor '%s' is not F64", name);
    bool shape_ok = vector ? (t->ndim == 1 && t->shape[0] == rows)
                           : (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols);
    if (!shape_ok) {
        if (vector) return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu] (config)", name, rows);
        return fail(r->err, r->errsize, "model: tensor '%s' should have shape [%zu, %zu] (config)", name, rows, cols);
    }
    size_t n = vector ? rows : rows * cols;
    const uint8_t *p = t->data;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = 0;
        for (int k = 7; k >= 0; k--) bits = (bits << 8) | p[8 * i + (size_t)k]; /* little-endian */
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) return fail(r->err, r->errsize, "model: tensor '%s' has a non-finite entry", name);
        dst[i] = x;
    }
    return true;
}

static bool load_matrix(Reader *r, const char *name, size_t rows, size_t cols, Matrix *out) {
    *out = model_matrix(r->m, rows, cols);
    return load(r, name, rows, cols, false, out->data);
}

static bool load_vector(Reader *r, const char *name, size_t n, double **out) {
    *out = ARENA_ARRAY(&r->m->arena, double, n ? n : 1);
    return load(r, name, n, 0, true, *out);
}

static bool read_layers(Reader *r, const JsonValue *cfg, size_t *n_tensors) {
    Model *m = r->m;
    size_t D = m->d_model;
    const JsonValue *layers = NULL;
    if (!get_size(r, cfg, "n_layers", "", &m->n_layers) || !get_array(r, cfg, "layers", "", &layers)) return false;
    if (layers->count != m->n_layers)
        return fail(r->err, r->errsize, "model: config: n_layers is %zu but 'layers' has %zu entries", m->n_layers,
                    layers->count);
    m->layers = ARENA_ARRAY(&m->arena, ModelLayer, m->n_layers ? m->n_layers : 1);
    char name[96], where[64];
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
                !get_bool(r, hj, "causal", where, &H->causal) || !get_string(r, hj, "label", where, &H->label))
                return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wq", l, h);
            if (!load_matrix(r, name, D, dk, &H->wq)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wk", l, h);
            if (!load_matrix(r, name, D, dk, &H->wk)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wv", l, h);
            if (!load_matrix(r, name, D, dv, &H->wv)) return false;
            snprintf(name, sizeof name, "layer.%zu.head.%zu.wo", l, h);
            if (!load_matrix(r, name, dv, D, &H->wo)) return false;
            *n_tensors += 4;
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
        *n_tensors += 4;
    }
    return true;
}

static bool read_output_and_checks(Reader *r, const JsonValue *cfg, size_t *n_tensors) {
    Model *m = r->m;
    size_t D = m->d_model;
    const JsonValue *out = json_get(cfg, "output"), *kind;
    if (!out || out->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: 'output' must be an object");
    if (!get_string(r, out, "name", "output", &m->output_name)) return false;
    kind = json_get(out, "kind");
    if (kind && kind->kind == JSON_STRING && strcmp(kind->text, "categorical") == 0) {
        const JsonValue *values = NULL;
        m->output_kind = MODEL_OUT_CATEGORICAL;
        if (!get_size(r, out, "dim", "output", &m->out_dim) || !get_size(r, out, "count", "output", &m->out_count) ||
            !get_array(r, out, "values", "output", &values))
            return false;
        if (m->out_count == 0 || m->out_dim + m->out_count > D)
            return fail(r->err, r->errsize, "model: config: output block [%zu, %zu) is empty or outside the residual (D = %zu)",
                        m->out_dim, m->out_dim + m->out_count, D);
        if (values->count != m->out_count)
            return fail(r->err, r->errsize, "model: config: output has %zu dims but %zu values", m->out_count, values->count);
        if (!read_atoms(r, values, "output value", &m->out_values)) return false;
    } else if (kind && kind->kind == JSON_STRING && strcmp(kind->text, "numerical") == 0) {
        m->output_kind = MODEL_OUT_NUMERICAL;
        if (!get_bool(r, out, "integral", "output", &m->out_integral)) return false;
        if (!load_vector(r, "output.readout", D, &m->out_readout)) return false;
        (*n_tensors)++;
    } else {
        return fail(r->err, r->errsize, "model: config: output 'kind' must be \"categorical\" or \"numerical\"");
    }

    const JsonValue *checks = NULL;
    if (!get_array(r, cfg, "checks", "", &checks)) return false;
    m->n_checks = checks->count;
    m->checks = ARENA_ARRAY(&m->arena, ModelCheck, m->n_checks ? m->n_checks : 1);
    for (size_t i = 0; i < m->n_checks; i++) {
        ModelCheck *c = &m->checks[i];
        const JsonValue *cj = &checks->items[i];
        char where[32];
        snprintf(where, sizeof where, "check %zu", i);
        if (cj->kind != JSON_OBJECT) return fail(r->err, r->errsize, "model: config: %s is not an object", where);
        const char *kind;
        if (!get_string(r, cj, "kind", where, &kind) || !get_size(r, cj, "after_layer", where, &c->after_layer) ||
            !get_size(r, cj, "dim", where, &c->dim) || !get_size(r, cj, "count", where, &c->count) ||
            !get_string(r, cj, "what", where, &c->what))
            return false;
        if (!strcmp(kind, "one_hot")) c->kind = MODEL_CHECK_ONE_HOT;
        else if (!strcmp(kind, "single_key")) c->kind = MODEL_CHECK_SINGLE_KEY;
        else if (!strcmp(kind, "one_kind")) c->kind = MODEL_CHECK_ONE_KIND;
        else return fail(r->err, r->errsize, "model: config: %s has unknown kind '%.40s'", where, kind);
        if (c->kind == MODEL_CHECK_SINGLE_KEY && c->count != 2)
            return fail(r->err, r->errsize, "model: config: %s (single_key) must span 2 dims", where);
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
        if (c->after_layer >= m->n_layers || c->count == 0 || c->dim + c->count > D)
            return fail(r->err, r->errsize, "model: config: %s is outside the model (layer %zu, dims [%zu, %zu))", where,
                        c->after_layer, c->dim, c->dim + c->count);
    }
    return true;
}

static bool read_config(Reader *r, const char *config_text, const char *labels_text) {
    Model *m = r->m;
    Arena tmp;
    arena_init(&tmp);
    JsonValue *cfg, *labels;
    char jerr[128];
    bool ok = false;
    size_t n_tensors = 2;
    const JsonValue *vocab = NULL, *tt = NULL, *tol = NULL;
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
    tol = json_get(cfg, "tie_tolerance");
    if (!tol || tol->kind != JSON_NUMBER || !isfinite(tol->number) || tol->number < 0) {
        fail(r->err, r->errsize, "model: config: tie_tolerance must be a non-negative number");
        goto done;
    }
    m->tie_tolerance = tol->number;

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
        !load_matrix(r, "embed.pos", m->max_len + 1, m->d_model, &m->pos_embed) || !read_layers(r, cfg, &n_tensors) ||
        !read_output_and_checks(r, cfg, &n_tensors))
        goto done;
    if (n_tensors != r->f->n_tensors) {
        fail(r->err, r->errsize, "model: the file holds %zu tensors but the config describes %zu", r->f->n_tensors, n_tensors);
        goto done;
    }
    ok = true;
done:
    arena_free(&tmp);
    return ok;
}

bool model_read_buffer(const uint8_t *buf, size_t len, Model *m, char *err, size_t errsize) {
    return model_read_buffer_ex(buf, len, true, m, err, errsize);
}

bool model_read_buffer_ex(const uint8_t *buf, size_t len, bool verify_checksum, Model *m, char *err, size_t errsize) {
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
    if (verify_checksum && strcmp(hex, stored) != 0) {
        fail(err, errsize, "model file is corrupted: checksum mismatch (stored %.20s, computed %s)", stored, hex);
        goto done;
    }
    Reader r = {m, &f, err, errsize};
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
