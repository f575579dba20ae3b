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
    ck_assert(a->rows * a->cols == 0 || memcmp(a->data, b->data, a->rows * a->cols * sizeof(double)) == 0);
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
    ck_assert(a->tie_tolerance == b->tie_tolerance);
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
            ck_assert_str_eq(x->heads[h].label, y->heads[h].label);
        }
        same_matrix(&x->mlp.w1, &y->mlp.w1);
        same_matrix(&x->mlp.w2, &y->mlp.w2);
        ck_assert(memcmp(x->mlp.b1, y->mlp.b1, x->mlp.w1.cols * sizeof(double)) == 0);
        ck_assert(memcmp(x->mlp.b2, y->mlp.b2, a->d_model * sizeof(double)) == 0);
    }
    ck_assert_str_eq(a->output_name, b->output_name);
    ck_assert_int_eq(a->output_kind, b->output_kind);
    if (a->output_kind == MODEL_OUT_CATEGORICAL) {
        ck_assert_uint_eq(a->out_dim, b->out_dim);
        ck_assert_uint_eq(a->out_count, b->out_count);
        for (size_t i = 0; i < a->out_count; i++) ck_assert(value_equal(a->out_values[i], b->out_values[i]));
    } else {
        ck_assert(memcmp(a->out_readout, b->out_readout, a->d_model * sizeof(double)) == 0);
        ck_assert_int_eq(a->out_integral, b->out_integral);
    }
    ck_assert_uint_eq(a->n_checks, b->n_checks);
    for (size_t i = 0; i < a->n_checks; i++) {
        ck_assert_uint_eq(a->checks[i].after_layer, b->checks[i].after_layer);
        ck_assert_uint_eq(a->checks[i].dim, b->checks[i].dim);
        ck_assert_uint_eq(a->checks[i].count, b->checks[i].count);
        ck_assert_str_eq(a->checks[i].what, b->checks[i].what);
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
    default: fx_mix(m, true); break;
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
        a.tie_tolerance = 1e-7;
    }
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
    ck_assert_str_eq(st_meta_get(&f, "version"), "1");
    ck_assert(st_find(&f, "embed.token") && st_find(&f, "layer.0.mlp.b2"));
    ck_assert((st_find(&f, "output.readout") != NULL) == (a.output_kind == MODEL_OUT_NUMERICAL));
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

    rewrite(buf, len, "version", "2", true, &bad, &blen);
    ck_assert(!reads(bad, blen));
    ck_assert_msg(strstr(err, "unsupported raspcc model version \"2\""), "%s", err);
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
        {"\"categorical\"", "\"numerical\"", "integral"},
        {"\"causal\":false", "\"causal\":0", "causal"},
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

int main(void) {
    Suite *s = suite_create("model_io");
    TCase *tc = tcase_create("model_io");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_round_trip, 0, 4);
    tcase_add_test(tc, test_file_round_trip_and_missing_file);
    tcase_add_loop_test(tc, test_truncated_and_flipped, 0, 2);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_non_finite_weight_rejected);
    tcase_add_test(tc, test_fuzz_regressions);
    tcase_add_test(tc, test_loaded_model_runs);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
