/* model.bin (runtime/model_io.h): round trip of hand-built models and every kind of bad file. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "runtime/forward.h"
#include "runtime/json.h"
#include "runtime/model_io.h"
#include "runtime/safetensors.h"
#include "tests/runtime_fixtures.h"

static char err[512];

static void same_matrix(const Matrix *a, const Matrix *b) {
    ck_assert_uint_eq(a->rows, b->rows);
    ck_assert_uint_eq(a->cols, b->cols);
    double *x = calloc(a->rows * a->cols + 1, sizeof *x), *y = calloc(b->rows * b->cols + 1, sizeof *y);
    matrix_to_dense(a, x);
    matrix_to_dense(b, y);
    ck_assert(memcmp(x, y, a->rows * a->cols * sizeof(double)) == 0);
    free(x);
    free(y);
}

static void same_model(const Model *a, const Model *b) {
    ck_assert_uint_eq(a->d_model, b->d_model);
    ck_assert_uint_eq(a->max_len, b->max_len);
    ck_assert_uint_eq(a->n_vocab, b->n_vocab);
    for (size_t i = 0; i < a->n_vocab; i++) {
        ck_assert_int_eq(a->vocab[i].kind, b->vocab[i].kind);
        ck_assert(value_equal(a->vocab[i], b->vocab[i]));
    }
    ck_assert_int_eq(a->token_type, b->token_type);
    for (size_t i = 0; i < a->d_model; i++) ck_assert_str_eq(a->labels[i], b->labels[i]);
    same_matrix(&a->token_embed, &b->token_embed);
    same_matrix(&a->pos_embed, &b->pos_embed);
    ck_assert_uint_eq(a->n_layers, b->n_layers);
    for (size_t l = 0; l < a->n_layers; l++) {
        const ModelLayer *x = &a->layers[l], *y = &b->layers[l];
        ck_assert_uint_eq(x->n_heads, y->n_heads);
        for (size_t h = 0; h < x->n_heads; h++) {
            same_matrix(&x->heads[h].wq, &y->heads[h].wq);
            same_matrix(&x->heads[h].wk, &y->heads[h].wk);
            same_matrix(&x->heads[h].wv, &y->heads[h].wv);
            same_matrix(&x->heads[h].wo, &y->heads[h].wo);
            ck_assert_int_eq(x->heads[h].causal, y->heads[h].causal);
            ck_assert(x->heads[h].tie_tol == y->heads[h].tie_tol);
            ck_assert(x->heads[h].bos_extra == y->heads[h].bos_extra);
            ck_assert_str_eq(x->heads[h].label, y->heads[h].label);
        }
        same_matrix(&x->mlp.w1, &y->mlp.w1);
        same_matrix(&x->mlp.w2, &y->mlp.w2);
        ck_assert(memcmp(x->mlp.b1, y->mlp.b1, x->mlp.w1.cols * sizeof(double)) == 0);
        ck_assert(memcmp(x->mlp.b2, y->mlp.b2, a->d_model * sizeof(double)) == 0);
        ck_assert_int_eq(x->mlp.gated, y->mlp.gated);
        if (x->mlp.gated) {
            same_matrix(&x->mlp.w3, &y->mlp.w3);
            ck_assert(memcmp(x->mlp.b3, y->mlp.b3, x->mlp.w1.cols * sizeof(double)) == 0);
        }
    }
    ck_assert_str_eq(a->output_name, b->output_name);
    ck_assert_int_eq(a->output_kind, b->output_kind);
    ck_assert_uint_eq(a->out_count, b->out_count);
    for (size_t i = 0; i < a->out_count; i++) {
        ck_assert_int_eq(a->out_values[i].kind, b->out_values[i].kind);
        ck_assert(value_equal(a->out_values[i], b->out_values[i]));
    }
    if (a->output_kind == MODEL_OUT_CATEGORICAL) {
        ck_assert_uint_eq(a->out_dim, b->out_dim);
    } else {
        ck_assert(memcmp(a->out_readout, b->out_readout, a->d_model * sizeof(double)) == 0);
        ck_assert(a->out_margin == b->out_margin);
        ck_assert(a->out_error_bound == b->out_error_bound);
        ck_assert_uint_eq(a->out_kind_count, b->out_kind_count);
        if (a->out_kind_count) ck_assert_uint_eq(a->out_kind_dim, b->out_kind_dim);
        for (size_t i = 0; i < a->out_kind_count; i++) ck_assert_int_eq(a->out_kinds[i], b->out_kinds[i]);
        ck_assert_uint_eq(a->out_len_count, b->out_len_count);
        for (size_t n = 1; n <= a->out_len_count; n++) {
            size_t ca, cb;
            const Value *va = model_output_values(a, n, &ca), *vb = model_output_values(b, n, &cb);
            ck_assert_uint_eq(ca, cb);
            for (size_t i = 0; i < ca; i++) {
                ck_assert_int_eq(va[i].kind, vb[i].kind);
                ck_assert(memcmp(&va[i].as, &vb[i].as, sizeof va[i].as) == 0 || va[i].kind == VAL_BOOL);
                ck_assert(value_equal(va[i], vb[i]));
            }
        }
    }
    ck_assert_uint_eq(a->n_checks, b->n_checks);
    for (size_t i = 0; i < a->n_checks; i++) {
        ck_assert_uint_eq(a->checks[i].after_layer, b->checks[i].after_layer);
        ck_assert_uint_eq(a->checks[i].dim, b->checks[i].dim);
        ck_assert_uint_eq(a->checks[i].count, b->checks[i].count);
        ck_assert_str_eq(a->checks[i].what, b->checks[i].what);
        ck_assert_int_eq(a->checks[i].kind, b->checks[i].kind);
        if (a->checks[i].kind != MODEL_CHECK_MARGIN) continue;
        const ModelMargin *g = &a->margins[a->checks[i].dim], *h = &b->margins[b->checks[i].dim];
        ck_assert_uint_eq(g->n_terms, h->n_terms);
        ck_assert(memcmp(g->dims, h->dims, g->n_terms * sizeof *g->dims) == 0);
        ck_assert(memcmp(g->coefs, h->coefs, g->n_terms * sizeof *g->coefs) == 0);
        ck_assert_uint_eq(g->n_thresholds, h->n_thresholds);
        ck_assert(memcmp(g->thresholds, h->thresholds, g->n_thresholds * sizeof *g->thresholds) == 0);
        ck_assert(memcmp(&g->m, &h->m, sizeof g->m) == 0);
    }
    ck_assert_str_eq(a->program_source ? a->program_source : "", b->program_source);
    ck_assert_str_eq(a->program_name ? a->program_name : "", b->program_name);
    ck_assert_str_eq(a->compile_flags ? a->compile_flags : "", b->compile_flags);
}

static void build(Model *m, int which) {
    model_init(m);
    switch (which) {
    case 0: fx_prev_token(m); break;
    case 1: fx_mean(m, true); break;
    case 2: fx_relu(m); break;
    case 3: fx_mix(m, true); break;
    case 4: fx_kinds(m); break;
    case 5: fx_by_length(m); break;
    default: { /* a gated MLP and a margin check (its numbers survive bit for bit) */
        fx_product(m);
        m->layers[0].mlp.b3[1] = -0.1;
        const size_t dims[2] = {2, 3};
        const double coefs[2] = {1.0 / 3.0, -1e-300}, thr[3] = {-1, 0.1, 1e300};
        fx_margin(m, 0, "r \"compared\"", 2, dims, coefs, 3, thr, 1e-6 / 3.0);
        break;
    }
    }
}

START_TEST(test_round_trip) {
    Model a, b;
    build(&a, _i);
    if (_i == 1) { /* atoms of every kind in the vocabulary survive */
        a.vocab[1] = value_float(0.1);
        a.vocab[2] = value_bool(true);
        a.vocab[3] = value_str("q\"\n\xc3\xa9");
        a.token_type = IR_TOKENS_FLOAT;
        a.layers[0].heads[0].tie_tol = 1e-7;
        a.out_error_bound = 1e-9;
    }
    if (_i == 0) a.layers[0].heads[0].tie_tol = 0.25;
    if (_i == 2) a.layers[0].heads[0].bos_extra = 0x1p20 - 1; /* a heavy BOS survives */
    if (_i == 2) matrix_set(&a.token_embed, 3 / a.token_embed.cols, 3 % a.token_embed.cols, -0.0); /* kept bit for bit */
    uint8_t *buf;
    size_t len;
    ck_assert_msg(model_serialize(&a, &buf, &len, err, sizeof err), "%s", err);
    ck_assert_msg(model_read_buffer(buf, len, &b, err, sizeof err), "%s", err);
    same_model(&a, &b);
    /* the file is a plain safetensors container with the documented names */
    Arena ar;
    arena_init(&ar);
    StFile f;
    ck_assert(st_parse(&ar, buf, len, &f, err, sizeof err));
    ck_assert_str_eq(st_meta_get(&f, "format"), "raspcc-model");
    ck_assert_str_eq(st_meta_get(&f, "version"), "3");
    ck_assert((st_find(&f, "layer.0.mlp.w3") || st_find(&f, "layer.0.mlp.w3.values")) == a.layers[0].mlp.gated);
    ck_assert(st_find(&f, "embed.token") || st_find(&f, "embed.token.index"));
    ck_assert(st_find(&f, "layer.0.mlp.b2") || st_find(&f, "layer.0.mlp.b2.values"));
    ck_assert((st_find(&f, "output.readout") || st_find(&f, "output.readout.shape")) ==
              (a.output_kind == MODEL_OUT_NUMERICAL));
    /* every 8-byte tensor starts 8-byte aligned in the file */
    for (size_t i = 0; i < f.n_tensors; i++)
        if (st_dtype_size(f.tensors[i].dtype) == 8) ck_assert_uint_eq((size_t)((const uint8_t *)f.tensors[i].data - buf) % 8, 0);
    ck_assert_uint_eq(model_file_bytes(&a), len);
    arena_free(&ar);
    free(buf);
    model_free(&a);
    model_free(&b);
}
END_TEST

START_TEST(test_file_round_trip_and_missing_file) {
    Model a, b;
    build(&a, 0);
    char path[] = "/tmp/raspcc_model_io_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    ck_assert_msg(model_write(&a, path, err, sizeof err), "%s", err);
    ck_assert_msg(model_read(path, &b, err, sizeof err), "%s", err);
    same_model(&a, &b);
    model_free(&b);
    remove(path);
    ck_assert(!model_read(path, &b, err, sizeof err));
    ck_assert_msg(strstr(err, "cannot open"), "%s", err);
    model_free(&a);
}
END_TEST

static void serialize(int which, uint8_t **buf, size_t *len) {
    Model a;
    build(&a, which);
    ck_assert(model_serialize(&a, buf, len, err, sizeof err));
    model_free(&a);
}

static bool reads(const uint8_t *buf, size_t len) {
    Model m;
    if (!model_read_buffer(buf, len, &m, err, sizeof err)) return false;
    model_free(&m);
    return true;
}

START_TEST(test_truncated_and_flipped) {
    uint8_t *buf;
    size_t len;
    serialize(_i, &buf, &len);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut + 1);
        memcpy(copy, buf, cut);
        if (reads(copy, cut)) ck_abort_msg("accepted a %zu-byte prefix", cut);
        free(copy);
    }
    /* any flipped bit in the data area or a metadata value is caught by the checksum */
    size_t data_len = len; /* find the data area: after the header */
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    data_len = len - 8 - (size_t)hlen;
    for (size_t i = len - data_len; i < len; i++) {
        buf[i] ^= 0x10;
        ck_assert(!reads(buf, len));
        ck_assert_msg(strstr(err, "checksum mismatch"), "%s", err);
        buf[i] ^= 0x10;
    }
    /* flips in the header never crash */
    for (size_t i = 0; i < 8 + hlen; i++) {
        buf[i] ^= 0x04;
        (void)reads(buf, len);
        buf[i] ^= 0x04;
    }
    ck_assert(reads(buf, len));
    free(buf);
}
END_TEST

/* Rewrites one metadata value (keeping the file otherwise valid) and optionally re-seals the
 * checksum, to reach the checks behind it. */
static void rewrite(const uint8_t *buf, size_t len, const char *key, const char *value, bool reseal, uint8_t **out,
                    size_t *outlen) {
    Arena ar;
    arena_init(&ar);
    StFile f;
    ck_assert(st_parse(&ar, buf, len, &f, err, sizeof err));
    const char *order[] = {"format", "version", "config", "labels", "program", "program_name", "compile_flags"};
    for (size_t i = 0; i < f.n_meta; i++)
        if (strcmp(f.meta[i].key, key) == 0) f.meta[i].value = value;
    char hex[17];
    if (reseal) {
        size_t data_len = 0;
        for (size_t i = 0; i < f.n_tensors; i++) data_len += f.tensors[i].nbytes;
        uint64_t h = model_fnv1a(MODEL_FNV_OFFSET, buf + len - data_len, data_len);
        for (int k = 0; k < 7; k++) {
            const char *v = st_meta_get(&f, order[k]);
            h = model_fnv1a(h, v, strlen(v) + 1);
        }
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
        for (size_t i = 0; i < f.n_meta; i++)
            if (strcmp(f.meta[i].key, "checksum") == 0) f.meta[i].value = hex;
    }
    /* tensors must be re-serialised in data order for the checksum to hold: sort by pointer */
    for (size_t i = 1; i < f.n_tensors; i++)
        for (size_t j = i; j > 0 && (const uint8_t *)f.tensors[j].data < (const uint8_t *)f.tensors[j - 1].data; j--) {
            StTensor t = f.tensors[j];
            f.tensors[j] = f.tensors[j - 1];
            f.tensors[j - 1] = t;
        }
    ck_assert(st_serialize(&f, out, outlen, err, sizeof err));
    arena_free(&ar);
}

static const char *config_of(const uint8_t *buf, size_t len, Arena *ar) {
    StFile f;
    ck_assert(st_parse(ar, buf, len, &f, err, sizeof err));
    return st_meta_get(&f, "config");
}

static char *replace(const char *s, const char *from, const char *to) {
    const char *p = strstr(s, from);
    ck_assert_msg(p != NULL, "'%s' not in config", from);
    char *r = malloc(strlen(s) + strlen(to) + 1);
    memcpy(r, s, (size_t)(p - s));
    strcpy(r + (p - s), to);
    strcat(r, p + strlen(from));
    return r;
}

START_TEST(test_rejections) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(0, &buf, &len);
    ck_assert(reads(buf, len));

    rewrite(buf, len, "format", "gpt2", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "not a raspcc model file"), "%s", err);
    free(bad);

    rewrite(buf, len, "version", "4", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "unsupported raspcc model version \"4\" (this build reads version 3)"), "%s", err);
    free(bad);

    rewrite(buf, len, "version", "2", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_str_eq(err, "raspcc model version 2 is no longer supported (this build reads version 3, with gated MLPs "
                          "and margin checks): recompile the program with raspcc");
    free(bad);

    rewrite(buf, len, "version", "1", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "version 1 is no longer supported") && strstr(err, "recompile"), "%s", err);
    free(bad);

    rewrite(buf, len, "program", "changed", false, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "checksum mismatch"), "%s", err);
    free(bad);

    rewrite(buf, len, "program", "changed", true, &bad, &blen);
    ck_assert_msg(reads(bad, blen), "%s", err); /* re-sealed: fine */
    free(bad);

    /* a foreign safetensors file (no metadata at all) */
    double x = 1;
    StTensor t = {.name = "w", .dtype = ST_F64, .ndim = 1, .shape = {1}, .data = &x, .nbytes = 8};
    StFile f = {&t, 1, NULL, 0};
    ck_assert(st_serialize(&f, &bad, &blen, err, sizeof err));
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "not a raspcc model file") && strstr(err, "missing"), "%s", err);
    free(bad);

    /* inconsistent configs, re-sealed so the checksum passes */
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
    struct { const char *from, *to, *msg; } cases[] = {
        {"\"d_model\":11", "\"d_model\":12", "d_model = 12"},
        {"\"d_model\":11", "\"d_model\":0", "d_model is 0"},
        {"\"max_len\":4", "\"max_len\":5", "embed.pos"},
        {"\"dk\":5", "\"dk\":4", "layer.0.head.0.wq"},
        {"\"mlp_hidden\":0", "\"mlp_hidden\":2", "layer.0.mlp.w1"},
        {"\"n_layers\":1", "\"n_layers\":2", "'layers' has 1"},
        {"\"n_vocab\":2", "\"n_vocab\":3", "'vocab' has 2"},
        {"\"dim\":8", "\"dim\":9", "outside the residual"},
        {"\"tokens_str\"", "\"tokens_zz\"", "token_type"},
        {"\"categorical\"", "\"numerical\"", "margin"},
        {"\"tie_tol\":9.9999999999999995e-07", "\"tie_tol\":-1.0", "'tie_tol' must be a finite number >= 0"},
        {"\"tie_tol\":9.9999999999999995e-07,", "", "'tie_tol' must be"},
        {"\"causal\":false", "\"causal\":0", "causal"},
        {"\"causal\":false", "\"causal\":false,\"bos_extra\":-1", "'bos_extra' must be a finite number >= 0"},
        {"\"causal\":false", "\"causal\":false,\"bos_extra\":1e39", "bos_extra 9.9999999999999994e+38 is above 2^50"},
        {"\"causal\":false", "\"causal\":false,\"bos_extra\":\"x\"", "'bos_extra' must be"},
        {"\"vocab\":[\"a\"", "\"vocab\":[null", "not an atom"},
        {"\"checks\":[]", "\"checks\":[{\"kind\":\"one_hot\",\"after_layer\":1,\"dim\":0,\"count\":1,\"what\":\"x\"}]", "outside the model"},
        {"\"checks\":[]", "\"checks\":[{\"kind\":\"sideways\",\"after_layer\":0,\"dim\":0,\"count\":1,\"what\":\"x\"}]", "unknown kind"},
        {"\"checks\":[]", "\"checks\":7", "'checks' must be an array"},
        {"{\"d_model\"", "[{\"d_model\"", "not valid JSON"},
        {"\"max_len\":4", "\"max_len\":18446744073709551615", "not a size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = replace(cfg, cases[i].from, cases[i].to);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        if (reads(bad, blen)) ck_abort_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg)) ck_abort_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
        free(bad);
        free(c);
    }
    rewrite(buf, len, "labels", "[\"x\"]", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "labels must be an array"), "%s", err);
    free(bad);
    arena_free(&ar);
    free(buf);
}
END_TEST

START_TEST(test_non_finite_weight_rejected) {
    Model a;
    build(&a, 2);
    a.layers[0].mlp.b1[0] = NAN;
    uint8_t *buf;
    size_t len;
    ck_assert(model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert(!reads(buf, len));
    ck_assert_msg(strstr(err, "layer.0.mlp.b1") && strstr(err, "non-finite"), "%s", err);
    free(buf);
    a.vocab[0] = value_float(INFINITY);
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    /* a string that is not UTF-8 text has no place in the header: refused, not written unreadable */
    a.vocab[0] = value_str("\xc3");
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "not UTF-8 text"), "%s", err);
    a.vocab[0] = value_str("\xc3\xa9");
    a.layers[0].mlp.b1[0] = 0.0;
    ck_assert_msg(model_serialize(&a, &buf, &len, err, sizeof err), "%s", err);
    ck_assert_msg(reads(buf, len), "%s", err);
    free(buf);
    model_free(&a);
}
END_TEST

/* Inputs the fuzzer once crashed or hung on: each must be read (accepted or rejected) safely. */
START_TEST(test_fuzz_regressions) {
    const char *dir = "tests/fuzz_regressions/model";
    DIR *d = opendir(dir);
    if (!d) return; /* run from another directory: nothing to replay */
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        uint8_t *buf = malloc(1 << 20);
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        (void)reads(buf, n);
        free(buf);
        files++;
    }
    closedir(d);
    ck_assert_int_ge(files, 3); /* the hostile inputs kept in the folder */
}
END_TEST

/* A loaded model computes what the built one does. */
START_TEST(test_loaded_model_runs) {
    Model a, b;
    build(&a, 0);
    uint8_t *buf;
    size_t len;
    ck_assert(model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert(model_read_buffer(buf, len, &b, err, sizeof err));
    Workspace ws;
    ck_assert(workspace_init(&ws, &b, err, sizeof err));
    Arena ar;
    arena_init(&ar);
    Value in[3] = {value_str("b"), value_str("a"), value_str("a")};
    Value *out;
    ck_assert_msg(model_run(&b, &ws, in, 3, &ar, &out, err, sizeof err), "%s", err);
    ck_assert_str_eq(out[0].as.s, "-");
    ck_assert_str_eq(out[1].as.s, "b");
    ck_assert_str_eq(out[2].as.s, "a");
    arena_free(&ar);
    workspace_free(&ws);
    free(buf);
    model_free(&a);
    model_free(&b);
}
END_TEST

/* The numerical output's description: every violation of the readout contract is refused. */
START_TEST(test_output_rejections) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(4, &buf, &len);
    ck_assert_msg(reads(buf, len), "%s", err);
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
    ck_assert_msg(strstr(cfg, "\"values\":[false,0,0.0,true,1,1.0,2.5],\"margin\":0.25,\"kind_block\":{\"dim\":1,"
                              "\"kinds\":[\"bool\",\"int\",\"float\"]},\"error_bound\":0.0,\"error_rel\":0.0}"), "%s", cfg);
    struct { const char *from, *to, *msg; } cases[] = {
        {"\"margin\":0.25", "\"margin\":0.5", "margin 0.5 is not below half the gap between output values 0.0 and True"},
        {"\"margin\":0.25", "\"margin\":-0.25", "'margin' must be a finite number >= 0"},
        {"\"error_rel\":0.0", "\"error_rel\":-1e-9", "'error_rel' must be a finite number >= 0"},
        {"\"error_rel\":0.0", "\"error_rel\":1.5", "relative error bound must be a finite number in [0, 1)"},
        {"\"margin\":0.25,", "", "'margin' must be"},
        {"\"error_bound\":0.0", "\"error_bound\":null", "'error_bound' must be"},
        {"[false,0,0.0,true,1,1.0,2.5]", "[false,0,0.0,true,1,2.5,1.0]", "not sorted ascending (2.5 before 1.0)"},
        {"[false,0,0.0,true,1,1.0,2.5]", "[false,0,0.0,true,1,1,2.5]", "same kind and numeric value"},
        {"[false,0,0.0,true,1,1.0,2.5]", "[false,0,0.0,true,1,\"1\",2.5]", "value 5 is not a number"},
        {"{\"dim\":1,\"kinds\":[\"bool\",\"int\",\"float\"]}", "null", "share a numeric value but the output has no kind block"},
        {"\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[\"bool\",\"int\"]", "value 0.0 has kind float, which the kind block lacks"},
        {"\"dim\":1,\"kinds\"", "\"dim\":3,\"kinds\"", "outside the residual"},
        {"\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[\"bool\",\"int\",\"str\"]", "must be \"bool\", \"int\" or \"float\""},
        {"\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[\"bool\",\"int\",\"int\"]", "names kind int twice"},
        {"\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[]", "1 to 3 kinds"},
        {",\"kind_block\":{\"dim\":1,\"kinds\":[\"bool\",\"int\",\"float\"]}", "", "lacks 'kind_block'"},
        {"\"error_bound\":0.0", "\"error_bound\":0.0,\"legacy_integral\":true", "'legacy_integral' is no longer supported"},
        {"\"error_bound\":0.0", "\"error_bound\":0.0,\"legacy_integral\":false", "'legacy_integral' is no longer supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = replace(cfg, cases[i].from, cases[i].to);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        if (reads(bad, blen)) ck_abort_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg)) ck_abort_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
        free(bad);
        free(c);
    }
    /* a kind block that lacks a member's kind */
    char *c = replace(cfg, "\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[\"bool\",\"float\",\"int\"]");
    char *c2 = replace(c, "[false,0,0.0,true,1,1.0,2.5]", "[false,0.0,true,1.0,2.5]");
    rewrite(buf, len, "config", c2, true, &bad, &blen);
    ck_assert_msg(reads(bad, blen), "%s", err); /* the order of the kinds is free */
    free(bad);
    free(c2);
    c2 = replace(cfg, "\"kinds\":[\"bool\",\"int\",\"float\"]", "\"kinds\":[\"bool\",\"float\"]");
    char *c3 = replace(c2, "[false,0,0.0,true,1,1.0,2.5]", "[false,0,0.0,true,1.0,2.5]");
    rewrite(buf, len, "config", c3, true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "output value 0 has kind int, which the kind block lacks"), "%s", err);
    free(bad);
    free(c);
    free(c2);
    free(c3);
    arena_free(&ar);
    free(buf);

    /* the writer refuses what the reader would */
    Model a;
    build(&a, 4);
    a.out_kind_count = 0;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "share a numeric value"), "%s", err);
    model_free(&a);
    build(&a, 2);
    a.out_margin = INFINITY;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "margin must be a finite number"), "%s", err);
    model_free(&a);
    build(&a, 0);
    a.layers[0].heads[0].tie_tol = -1;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "tie tolerance"), "%s", err);
    model_free(&a);
}
END_TEST

/* Per-length value sets in the file: "values_by_length" and every way it can be wrong. */
START_TEST(test_values_by_length_file) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(5, &buf, &len);
    ck_assert_msg(reads(buf, len), "%s", err);
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
#define L1 "[18.095238095238095,19.095238095238095]"
#define L2 "[18.095238095238098,19.095238095238098]"
#define VBL(x) "\"values_by_length\":" x
    const char *orig = VBL("[" L1 "," L2 ",[0,100]]");
    ck_assert_msg(strstr(cfg, "\"values\":[0,18.095238095238095,18.095238095238098,19.095238095238095,"
                              "19.095238095238098,100]," VBL("[" L1 "," L2 ",[0,100]]") ",\"margin\":0.25"), "%s", cfg);
    struct { const char *to, *msg; } cases[] = {
        {VBL("7"), "'values_by_length' must be null or an array"},
        {VBL("[" L1 "," L2 "]"), "'values_by_length' has 2 lists, but max_len is 3"},
        {VBL("[" L1 "," L2 ",[0,100],[]]"), "'values_by_length' has 4 lists, but max_len is 3"},
        {VBL("[]"), "'values_by_length' has 0 lists, but max_len is 3"},
        {VBL("[" L1 "," L2 ",7]"), "'values_by_length' entry 2 is not a list"},
        {VBL("[" L1 "," L2 ",[0,\"100\"]]"), "value 1 is not a number (inputs of length 3)"},
        {VBL("[" L1 "," L2 ",[0,null]]"), "output value of length 3, number 1 is not an atom"},
        {VBL("[" L1 "," L2 ",[0,{}]]"), "is not an atom"},
        {VBL("[" L1 "," L2 ",[0,99999999999999999999]]"), "out of range"},
        {VBL("[" L1 "," L2 ",[100,0]]"), "not sorted ascending (100 before 0) (inputs of length 3)"},
        {VBL("[[18.095238095238095,18.095238095238098]," L2 ",[0,100]]"),
         "margin 0.25 is not below half the gap between output values 18.095238095238095 and 18.0952380952381 "
         "(inputs of length 1)"},
        {VBL("[" L1 "," L2 ",[0,0.5]]"), "margin 0.25 is not below half the gap between output values 0 and 0.5 "
                                         "(inputs of length 3)"},
        {VBL("[" L1 "," L2 ",[0,100.0]]"), "output value 100.0 of length 3 is not among the output values"},
        {VBL("[" L1 "," L2 ",[0,99]]"), "output value 99 of length 3 is not among the output values"},
        {VBL("[" L1 "," L2 ",[0,true]]"), "output value True of length 3 is not among the output values"},
        {VBL("[" L1 "," L2 ",[0,0.0]]"), "share a numeric value but the output has no kind block to tell them apart "
                                         "(inputs of length 3)"},
        {VBL("null"), "not below half the gap between output values 18.095238095238095 and 18.0952380952381"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = replace(cfg, orig, cases[i].to);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        if (reads(bad, blen)) ck_abort_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg)) ck_abort_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
        free(bad);
        free(c);
    }
    /* absent: none, so the global gap rule applies again */
    char *c = replace(cfg, "," VBL("[" L1 "," L2 ",[0,100]]"), "");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "not below half the gap"), "%s", err);
    free(bad);
    free(c);
    /* accepted: an empty list (no value at that length), members of the union in no list */
    c = replace(cfg, orig, VBL("[" L1 "," L2 ",[]]"));
    rewrite(buf, len, "config", c, true, &bad, &blen);
    Model m;
    ck_assert_msg(model_read_buffer(bad, blen, &m, err, sizeof err), "%s", err);
    size_t count;
    ck_assert(model_output_values(&m, 3, &count) != NULL && count == 0);
    ck_assert(model_output_values(&m, 2, &count)[1].as.f == fx_len_b() + 1 && count == 2);
    model_free(&m);
    free(bad);
    free(c);
    arena_free(&ar);
    free(buf);
#undef L1
#undef L2

    /* "values_by_length": null on a model without per-length sets is the same model; lists on a
     * categorical output are refused */
    serialize(2, &buf, &len);
    arena_init(&ar);
    cfg = config_of(buf, len, &ar);
    c = replace(cfg, "\"margin\":", VBL("null") ",\"margin\":");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert_msg(reads(bad, blen), "%s", err);
    free(bad);
    free(c);
    c = replace(cfg, "\"margin\":", VBL("[[10],[10,11],[10,11,12],[12],[11],[10,12]]") ",\"margin\":");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert_msg(model_read_buffer(bad, blen, &m, err, sizeof err), "%s", err);
    ck_assert(m.out_len_count == 6 && model_output_values(&m, 3, &count)[2].as.i == 12 && count == 3);
    model_free(&m);
    free(bad);
    free(c);
    arena_free(&ar);
    free(buf);
    serialize(0, &buf, &len);
    arena_init(&ar);
    cfg = config_of(buf, len, &ar);
    c = replace(cfg, "\"values\":[", VBL("[[\"a\"],[\"a\"],[\"a\"],[\"a\"]]") ",\"values\":[");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "per-length output values are for numerical outputs only"), "%s", err);
    free(bad);
    free(c);
    arena_free(&ar);
    free(buf);
#undef VBL
}
END_TEST

/* ---- gated MLPs and margin checks ---- */

/* Mutates the tensors of model `which` with `edit` and returns whether the file reads. */
static bool tensors_read(int which, void (*edit)(StFile *f, Arena *ar));

static void drop_b3(StFile *f, Arena *ar) {
    (void)ar;
    size_t k = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strncmp(f->tensors[i].name, "layer.0.mlp.b3", 14) != 0) f->tensors[k++] = f->tensors[i];
    f->n_tensors = k;
}

static void drop_w3_values(StFile *f, Arena *ar) {
    (void)ar;
    size_t k = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, "layer.0.mlp.w3.values") != 0) f->tensors[k++] = f->tensors[i];
    f->n_tensors = k;
}

static void widen_w3(StFile *f, Arena *ar) {
    (void)ar;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, "layer.0.mlp.w3.shape") == 0) ((int64_t *)(uintptr_t)f->tensors[i].data)[1] = 3;
}

static void dense_w3_too(StFile *f, Arena *ar) {
    StTensor *t = ARENA_ARRAY(ar, StTensor, f->n_tensors + 1);
    memcpy(t, f->tensors, f->n_tensors * sizeof *t);
    t[f->n_tensors++] = (StTensor){.name = "layer.0.mlp.w3", .dtype = ST_F64, .ndim = 2, .shape = {11, 2},
                                    .data = arena_array(ar, 22, 8), .nbytes = 22 * 8};
    f->tensors = t;
}

/* A w3 tensor on a layer that is not gated (the relu model, one layer of 1 hidden unit). */
static void stray_w3(StFile *f, Arena *ar) {
    StTensor *t = ARENA_ARRAY(ar, StTensor, f->n_tensors + 1);
    memcpy(t, f->tensors, f->n_tensors * sizeof *t);
    t[f->n_tensors++] = (StTensor){.name = "layer.0.mlp.b3", .dtype = ST_F64, .ndim = 1, .shape = {1},
                                    .data = arena_array(ar, 1, 8), .nbytes = 8};
    f->tensors = t;
}

START_TEST(test_gated_file) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(6, &buf, &len);
    ck_assert_msg(reads(buf, len), "%s", err);
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
    ck_assert_msg(strstr(cfg, "\"mlp_hidden\":2,\"gated\":true}"), "%s", cfg);
    struct { const char *from, *to, *msg; } cases[] = {
        {"\"gated\":true", "\"gated\":false", "tensor 'layer.0.mlp.w3' is present but layer 0 is not gated"},
        {",\"gated\":true", "", "layer 0 'gated' must be true or false"},
        {"\"gated\":true", "\"gated\":1", "layer 0 'gated' must be true or false"},
        {"\"mlp_hidden\":2", "\"mlp_hidden\":3", "tensor 'layer.0.mlp.w1' should have shape [11, 3]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = replace(cfg, cases[i].from, cases[i].to);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        if (reads(bad, blen)) ck_abort_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg)) ck_abort_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
        free(bad);
        free(c);
    }
    arena_free(&ar);
    free(buf);
    /* a layer that is not gated says so, and gating it asks for the tensors */
    serialize(2, &buf, &len);
    arena_init(&ar);
    cfg = config_of(buf, len, &ar);
    ck_assert_msg(strstr(cfg, "\"mlp_hidden\":1,\"gated\":false}"), "%s", cfg);
    char *c = replace(cfg, "\"gated\":false", "\"gated\":true");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "tensor 'layer.0.mlp.w3' is missing"), "%s", err);
    free(bad);
    free(c);
    arena_free(&ar);
    free(buf);
    /* the tensors themselves */
    ck_assert(!tensors_read(6, drop_b3));
    ck_assert_msg(strstr(err, "tensor 'layer.0.mlp.b3' is missing"), "%s", err);
    ck_assert(!tensors_read(6, drop_w3_values));
    ck_assert_msg(strstr(err, "sparse tensor 'layer.0.mlp.w3' needs all of"), "%s", err);
    ck_assert(!tensors_read(6, widen_w3));
    ck_assert_msg(strstr(err, "tensor 'layer.0.mlp.w3' should have shape [11, 2] (config)"), "%s", err);
    ck_assert(!tensors_read(6, dense_w3_too));
    ck_assert_msg(strstr(err, "tensor 'layer.0.mlp.w3' is stored both dense and sparse"), "%s", err);
    ck_assert(!tensors_read(2, stray_w3));
    ck_assert_msg(strstr(err, "tensor 'layer.0.mlp.b3' is present but layer 0 is not gated"), "%s", err);

    /* the writer refuses what the reader would */
    Model a;
    build(&a, 6);
    a.layers[0].mlp.w3 = model_matrix(&a, 11, 3);
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "layer 0 gated MLP: w3 is 11 x 3"), "%s", err);
    model_free(&a);
    build(&a, 6);
    a.layers[0].mlp.b3 = NULL;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "b3 is missing"), "%s", err);
    model_free(&a);
    build(&a, 2);
    a.layers[0].mlp.w2 = model_matrix(&a, 2, 3);
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "layer 0 MLP: w1 is 3 x 1 and w2 2 x 3"), "%s", err);
    model_free(&a);
    build(&a, 0);
    a.layers[0].heads[0].wk = model_matrix(&a, 11, 4);
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "layer 0 head 0: wq, wk, wv, wo are 11x5, 11x4, 11x3, 3x11"), "%s", err);
    model_free(&a);
}
END_TEST

/* A margin check in the file: every rule on its terms, thresholds and margin. */
START_TEST(test_margin_file) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(6, &buf, &len);
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
#define MC "{\"kind\":\"margin\",\"after_layer\":0,\"what\":\"r \\\"compared\\\"\","
    const char *orig = MC "\"terms\":[[2,0.33333333333333331],[3,-1e-300]],"
                          "\"thresholds\":[-1.0,0.10000000000000001,1.0000000000000001e+300],"
                          "\"margin\":3.333333333333333e-07}";
    ck_assert_msg(strstr(cfg, orig), "%s", cfg);
    struct { const char *to, *msg; } cases[] = {
        {MC "\"terms\":[],\"thresholds\":[0.5],\"margin\":0.1}", "check 0 (margin) needs 1 to d_model = 11 terms, has 0"},
        {MC "\"terms\":[[11,1.0]],\"thresholds\":[0.5],\"margin\":0.1}",
         "check 0 (margin) term 0 reads dim 11, outside the residual (D = 11)"},
        {MC "\"terms\":[[3,1.0],[2,1.0]],\"thresholds\":[0.5],\"margin\":0.1}",
         "check 0 (margin) term dims are not strictly increasing (term 1)"},
        {MC "\"terms\":[[3,1.0],[3,1.0]],\"thresholds\":[0.5],\"margin\":0.1}", "not strictly increasing (term 1)"},
        {MC "\"terms\":[[3]],\"thresholds\":[0.5],\"margin\":0.1}", "check 0 (margin) term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":[[3,\"1\"]],\"thresholds\":[0.5],\"margin\":0.1}", "term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":[[3,1e999]],\"thresholds\":[0.5],\"margin\":0.1}", "term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":[[-1,1.0]],\"thresholds\":[0.5],\"margin\":0.1}", "term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":[[3.0,1.0]],\"thresholds\":[0.5],\"margin\":0.1}", "term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":[3,1.0],\"thresholds\":[0.5],\"margin\":0.1}", "term 0 must be [dim, finite coefficient]"},
        {MC "\"terms\":{},\"thresholds\":[0.5],\"margin\":0.1}", "check 0 'terms' must be an array"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[],\"margin\":0.1}", "check 0 (margin) needs 1 to 1048576 thresholds, has 0"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5,0.5],\"margin\":0.1}",
         "check 0 (margin) thresholds are not strictly increasing (threshold 1)"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5,-0.5],\"margin\":0.1}", "thresholds are not strictly increasing"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5,1e400],\"margin\":0.1}",
         "check 0 (margin) threshold 1 must be a finite number"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[null],\"margin\":0.1}", "threshold 0 must be a finite number"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":0.5,\"margin\":0.1}", "check 0 'thresholds' must be an array"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5],\"margin\":0}", "check 0 (margin) 'margin' must be a finite number > 0"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5],\"margin\":-0.1}", "'margin' must be a finite number > 0"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5],\"margin\":1e999}", "'margin' must be a finite number > 0"},
        {MC "\"terms\":[[3,1.0]],\"thresholds\":[0.5]}", "'margin' must be a finite number > 0"},
        {"{\"kind\":\"margin\",\"after_layer\":1,\"what\":\"r\",\"terms\":[[3,1.0]],\"thresholds\":[0.5],\"margin\":0.1}",
         "check 0 is outside the model (after layer 1 of 1)"},
        {"{\"kind\":\"margin\",\"after_layer\":0,\"terms\":[[3,1.0]],\"thresholds\":[0.5],\"margin\":0.1}",
         "check 0 'what' must be a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = replace(cfg, orig, cases[i].to);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        if (reads(bad, blen)) ck_abort_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg)) ck_abort_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
        free(bad);
        free(c);
    }
    /* accepted: integer coefficients and thresholds, extra keys ignored, a one-hot check beside it */
    char *c = replace(cfg, orig, MC "\"terms\":[[0,2],[3,1]],\"thresholds\":[-3,7],\"margin\":1,\"note\":null},"
                                    "{\"kind\":\"one_hot\",\"after_layer\":0,\"dim\":1,\"count\":1,\"what\":\"bos\"}");
    rewrite(buf, len, "config", c, true, &bad, &blen);
    Model m;
    ck_assert_msg(model_read_buffer(bad, blen, &m, err, sizeof err), "%s", err);
    ck_assert_uint_eq(m.n_checks, 2);
    ck_assert_uint_eq(m.n_margins, 1);
    ck_assert(m.checks[0].kind == MODEL_CHECK_MARGIN && m.checks[0].dim == 0 && m.checks[0].count == 1);
    ck_assert(m.margins[0].n_terms == 2 && m.margins[0].dims[0] == 0 && m.margins[0].coefs[0] == 2.0);
    ck_assert(m.margins[0].n_thresholds == 2 && m.margins[0].thresholds[1] == 7.0 && m.margins[0].m == 1.0);
    ck_assert(m.checks[1].kind == MODEL_CHECK_ONE_HOT && m.checks[1].dim == 1);
    model_free(&m);
    free(bad);
    free(c);
    /* too many thresholds */
    JsonBuf many;
    jbuf_init(&many);
    jbuf_puts(&many, MC "\"terms\":[[3,1.0]],\"margin\":0.1,\"thresholds\":[0");
    for (size_t j = 0; j < MODEL_MAX_THRESHOLDS; j++) jbuf_puts(&many, ",0");
    jbuf_puts(&many, "]}");
    ck_assert(!many.failed);
    c = replace(cfg, orig, many.data);
    jbuf_free(&many);
    rewrite(buf, len, "config", c, true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "check 0 (margin) needs 1 to 1048576 thresholds, has 1048577"), "%s", err);
    free(bad);
    free(c);
#undef MC
    arena_free(&ar);
    free(buf);

    /* the writer refuses what the reader would */
    Model a;
    build(&a, 6);
    a.margins[0].m = 0;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "model: check 0 (margin) margin must be a finite number > 0"), "%s", err);
    a.margins[0].m = 0.5;
    a.margins[0].thresholds[2] = 0.1;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "thresholds are not strictly increasing (threshold 2)"), "%s", err);
    a.margins[0].thresholds[2] = INFINITY;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "threshold 2 is not finite"), "%s", err);
    a.margins[0].thresholds[2] = 2;
    a.checks[0].dim = 1; /* names a margin the model lacks */
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "check 0 (margin) names margin 1 (count 1) of 1"), "%s", err);
    a.checks[0].dim = 0;
    a.margins[0].dims[1] = 11;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "term 1 reads dim 11, outside the residual"), "%s", err);
    a.margins[0].dims[1] = 3;
    a.margins[0].coefs[0] = NAN;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "term 0 has a non-finite coefficient"), "%s", err);
    a.margins[0].coefs[0] = 1;
    a.checks[0].after_layer = 1;
    ck_assert(!model_serialize(&a, &buf, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "check 0 is outside the model"), "%s", err);
    a.checks[0].after_layer = 0;
    ck_assert_msg(model_serialize(&a, &buf, &len, err, sizeof err), "%s", err);
    free(buf);
    model_free(&a);
}
END_TEST

/* ---- sparse tensors ---- */

/* Re-serialises the tensors of f (in the given order, which becomes the file order) with the
 * checksum recomputed, so that the tensor checks behind it are reached. */
static void reseal(StFile *f, uint8_t **out, size_t *outlen) {
    const char *order[] = {"format", "version", "config", "labels", "program", "program_name", "compile_flags"};
    uint64_t h = MODEL_FNV_OFFSET;
    for (size_t i = 0; i < f->n_tensors; i++) h = model_fnv1a(h, f->tensors[i].data, f->tensors[i].nbytes);
    for (int k = 0; k < 7; k++) {
        const char *v = st_meta_get(f, order[k]);
        h = model_fnv1a(h, v, strlen(v) + 1);
    }
    static char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, "checksum") == 0) f->meta[i].value = hex;
    ck_assert(st_serialize(f, out, outlen, err, sizeof err));
}

/* The tensors of a serialised model, in file order, with copies of their bytes (to mutate). */
static StFile parsed(Arena *ar, const uint8_t *buf, size_t len) {
    StFile f;
    ck_assert(st_parse(ar, buf, len, &f, err, sizeof err));
    for (size_t i = 1; i < f.n_tensors; i++)
        for (size_t j = i; j > 0 && (const uint8_t *)f.tensors[j].data < (const uint8_t *)f.tensors[j - 1].data; j--) {
            StTensor t = f.tensors[j];
            f.tensors[j] = f.tensors[j - 1];
            f.tensors[j - 1] = t;
        }
    for (size_t i = 0; i < f.n_tensors; i++) {
        void *copy = arena_alloc(ar, f.tensors[i].nbytes + 8);
        if (f.tensors[i].nbytes) memcpy(copy, f.tensors[i].data, f.tensors[i].nbytes);
        f.tensors[i].data = copy;
    }
    return f;
}

static StTensor *tensor(StFile *f, const char *name) {
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    ck_abort_msg("no tensor %s", name);
    return NULL;
}

static int32_t *i32(StTensor *t) { return (int32_t *)(uintptr_t)t->data; }
static double *f64(StTensor *t) { return (double *)(uintptr_t)t->data; }
static int64_t *i64(StTensor *t) { return (int64_t *)(uintptr_t)t->data; }

/* Mutation `which` of the previous-token model's sparse embed.token (3 x 11, 3 entries at flat
 * indices 0, 12, 29); returns whether the file reads, with err set. */
static bool mutated_reads(int which) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(0, &buf, &len);
    Arena ar;
    arena_init(&ar);
    StFile f = parsed(&ar, buf, len);
    StTensor *shape = tensor(&f, "embed.token.shape"), *index = tensor(&f, "embed.token.index"),
             *values = tensor(&f, "embed.token.values");
    ck_assert_int_eq(index->dtype, ST_I32);
    ck_assert_uint_eq(index->shape[0], 3);
    ck_assert(i32(index)[0] == 0 && i32(index)[1] == 12 && i32(index)[2] == 29);
    ck_assert(i64(shape)[0] == 3 && i64(shape)[1] == 11);
    StTensor *extra = ARENA_ARRAY(&ar, StTensor, f.n_tensors + 1);
    memcpy(extra, f.tensors, f.n_tensors * sizeof *extra);
    switch (which) {
    case 0: i32(index)[2] = 33; break;                             /* out of range */
    case 1: i32(index)[1] = 30; break;                             /* not increasing */
    case 2: i32(index)[1] = 0; break;                              /* repeated */
    case 3: values->shape[0] = 2; values->nbytes = 16; break;      /* counts differ */
    case 4: i64(shape)[1] = 12; break;                             /* shape against the config */
    case 5: index->dtype = ST_F64; index->shape[0] = 1; index->nbytes = 8; i32(index)[1] = 0; break;
    case 6: f64(values)[1] = INFINITY; break;
    case 7: i32(index)[0] = -1; break;                             /* negative */
    case 8: /* no values: the shape and the index alone */
        for (size_t i = 0; i < f.n_tensors; i++)
            if (&f.tensors[i] == values) {
                memmove(&f.tensors[i], &f.tensors[i + 1], (f.n_tensors - i - 1) * sizeof *f.tensors);
                f.n_tensors--;
                break;
            }
        break;
    case 9: /* a dense embed.token as well */
        extra[f.n_tensors] = (StTensor){.name = "embed.token", .dtype = ST_F64, .ndim = 2, .shape = {3, 11},
                                         .data = arena_array(&ar, 33, 8), .nbytes = 33 * 8};
        f.tensors = extra;
        f.n_tensors++;
        break;
    case 10: /* an unknown tensor */
        extra[f.n_tensors] = (StTensor){.name = "layer.0.extra", .dtype = ST_F64, .ndim = 1, .shape = {1},
                                         .data = arena_array(&ar, 1, 8), .nbytes = 8};
        f.tensors = extra;
        f.n_tensors++;
        break;
    case 11: { /* an I64 index is fine too */
        int64_t *wide = arena_array(&ar, 3, 8);
        for (int k = 0; k < 3; k++) wide[k] = i32(index)[k];
        index->dtype = ST_I64;
        index->data = wide;
        index->nbytes = 24;
        break;
    }
    case 12: shape->shape[0] = 1; shape->nbytes = 8; break;          /* a 1-d shape for a matrix */
    default: index->dtype = ST_I64; index->shape[0] = 1; index->nbytes = 8; i64(index)[0] = INT64_MIN; break;
    }
    reseal(&f, &bad, &blen);
    bool ok = reads(bad, blen);
    free(bad);
    arena_free(&ar);
    free(buf);
    return ok;
}

static bool tensors_read(int which, void (*edit)(StFile *f, Arena *ar)) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(which, &buf, &len);
    Arena ar;
    arena_init(&ar);
    StFile f = parsed(&ar, buf, len);
    edit(&f, &ar);
    reseal(&f, &bad, &blen);
    bool ok = reads(bad, blen);
    free(bad);
    arena_free(&ar);
    free(buf);
    return ok;
}

START_TEST(test_sparse_rejections) {
    static const char *const want[] = {
        "tensor 'embed.token' has an index out of range (entry 2)",
        "tensor 'embed.token' has indices not strictly increasing (entry 2)",
        "tensor 'embed.token' has indices not strictly increasing (entry 1)",
        "tensor 'embed.token' has 3 indices but 2 values",
        "tensor 'embed.token' should have shape [3, 11] (config)",
        "tensor 'embed.token.index' must be a vector of I32 or I64",
        "tensor 'embed.token' has a non-finite entry",
        "tensor 'embed.token' has an index out of range (entry 0)",
        "sparse tensor 'embed.token' needs all of 'embed.token.shape', 'embed.token.index' and 'embed.token.values'",
        "tensor 'embed.token' is stored both dense and sparse",
        "the file holds",
        NULL,
        "tensor 'embed.token.shape' must be I64 of shape [2]",
        "tensor 'embed.token' has 1 indices but 3 values",
    };
    for (int i = 0; i < (int)(sizeof want / sizeof *want); i++) {
        bool ok = mutated_reads(i);
        if (!want[i]) {
            ck_assert_msg(ok, "case %d: %s", i, err);
            continue;
        }
        ck_assert_msg(!ok, "case %d accepted", i);
        ck_assert_msg(strstr(err, want[i]), "case %d: '%s' lacks '%s'", i, err, want[i]);
    }
}
END_TEST

/* The dense expansion is checked against the limits before anything is allocated for it. */
START_TEST(test_expansion_limits) {
    uint8_t *buf, *bad;
    size_t len, blen;
    serialize(0, &buf, &len);
    Model m;
    ModelReadOptions o = {true, 32, 1 << 20};
    ck_assert(!model_read_buffer_opts(buf, len, &o, &m, err, sizeof err));
    ck_assert_msg(strstr(err, "tensor 'embed.token' would expand to 3 x 11 entries, over the limit of 32 per tensor"),
                  "%s", err);
    o = (ModelReadOptions){true, 1 << 20, 800};
    ck_assert(!model_read_buffer_opts(buf, len, &o, &m, err, sizeof err));
    ck_assert_msg(strstr(err, "the weights would take more than 800 bytes in memory"), "%s", err);
    o = (ModelReadOptions){true, 1 << 20, 1 << 20};
    ck_assert_msg(model_read_buffer_opts(buf, len, &o, &m, err, sizeof err), "%s", err);
    model_free(&m);
    /* a tiny file claiming a huge matrix: refused by the default limits, nothing allocated */
    Arena ar;
    arena_init(&ar);
    const char *cfg = config_of(buf, len, &ar);
    const char *huge[] = {"\"max_len\":24403243", "\"max_len\":4294967295"};
    for (int k = 0; k < 2; k++) {
        char *c = replace(cfg, "\"max_len\":4", huge[k]);
        rewrite(buf, len, "config", c, true, &bad, &blen);
        ck_assert(!reads(bad, blen));
        ck_assert_msg(strstr(err, "tensor 'embed.pos' would expand to") && strstr(err, "over the limit of 268435456"),
                      "%s", err);
        free(bad);
        free(c);
    }
    arena_free(&ar);
    free(buf);
}
END_TEST

/* The file grows with the non-zeros: a 2000 x 1000 query matrix with 3 entries costs bytes, not
 * megabytes; a full matrix stays dense. */
START_TEST(test_file_size_follows_nonzeros) {
    Model a;
    build(&a, 0);
    ModelHead *h = &a.layers[0].heads[0];
    size_t small = model_file_bytes(&a);
    ck_assert(small > 0);
    h->wq = model_matrix(&a, a.d_model, 1000);
    h->wk = model_matrix(&a, a.d_model, 1000);
    AT(h->wq, 3, 0) = 1;
    AT(h->wk, 2, 0) = 1;
    AT(h->wk, 10, 999) = -0.5;
    size_t big = model_file_bytes(&a);
    ck_assert_msg(big < small + 200, "%zu vs %zu", big, small); /* + 2 x 1000 dims in the config */
    for (size_t i = 0; i < a.token_embed.rows * a.token_embed.cols; i++)
        matrix_set(&a.token_embed, i / a.token_embed.cols, i % a.token_embed.cols, (double)i + 1);
    uint8_t *buf;
    size_t len;
    ck_assert(model_serialize(&a, &buf, &len, err, sizeof err));
    Arena ar;
    arena_init(&ar);
    StFile f;
    ck_assert(st_parse(&ar, buf, len, &f, err, sizeof err));
    ck_assert(st_find(&f, "embed.token") && !st_find(&f, "embed.token.index")); /* full: dense */
    ck_assert(!st_find(&f, "embed.pos") && st_find(&f, "embed.pos.index"));
    ck_assert_int_eq(st_find(&f, "layer.0.head.0.wk.index")->dtype, ST_I32);
    ck_assert_uint_eq(st_find(&f, "layer.0.head.0.wk.values")->shape[0], 2);
    Model b;
    ck_assert_msg(model_read_buffer(buf, len, &b, err, sizeof err), "%s", err);
    same_model(&a, &b);
    model_free(&b);
    arena_free(&ar);
    free(buf);
    model_free(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("model_io");
    TCase *tc = tcase_create("model_io");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_round_trip, 0, 7);
    tcase_add_test(tc, test_file_round_trip_and_missing_file);
    tcase_add_loop_test(tc, test_truncated_and_flipped, 0, 7);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_non_finite_weight_rejected);
    tcase_add_test(tc, test_fuzz_regressions);
    tcase_add_test(tc, test_loaded_model_runs);
    tcase_add_test(tc, test_output_rejections);
    tcase_add_test(tc, test_values_by_length_file);
    tcase_add_test(tc, test_gated_file);
    tcase_add_test(tc, test_margin_file);
    tcase_add_test(tc, test_sparse_rejections);
    tcase_add_test(tc, test_expansion_limits);
    tcase_add_test(tc, test_file_size_follows_nonzeros);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
