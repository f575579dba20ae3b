/* The safetensors container (runtime/safetensors.h): round trip and every rejection path. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "runtime/safetensors.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static const double A[6] = {1, 2, 3, 4, 5, 6.5};
static const uint8_t B[3] = {7, 8, 9};
static const int32_t C[2] = {-1, 42};

/* A container with three tensors of different dtypes (one empty) and two metadata entries. */
static void make_sample(uint8_t **buf, size_t *len) {
    StTensor t[4] = {
        {.name = "a", .dtype = ST_F64, .ndim = 2, .shape = {2, 3}, .data = A, .nbytes = sizeof A},
        {.name = "empty", .dtype = ST_F64, .ndim = 2, .shape = {0, 5}, .data = NULL, .nbytes = 0},
        {.name = "c.i32", .dtype = ST_I32, .ndim = 1, .shape = {2}, .data = C, .nbytes = sizeof C},
        {.name = "b\"q", .dtype = ST_U8, .ndim = 1, .shape = {3}, .data = B, .nbytes = sizeof B},
    };
    StMeta m[2] = {{"format", "test"}, {"note", "line\nbreak \xc3\xa9"}};
    StFile f = {t, 4, m, 2};
    char err[256];
    ck_assert_msg(st_serialize(&f, buf, len, err, sizeof err), "%s", err);
}

/* Builds a raw container from a header string and `ndata` zero data bytes. */
static uint8_t *raw(const char *header, size_t ndata, size_t *len) {
    size_t h = strlen(header);
    *len = 8 + h + ndata;
    uint8_t *b = calloc(1, *len);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    return b;
}

static bool parse_raw(const char *header, size_t ndata, char *err, size_t errsize) {
    size_t len;
    uint8_t *b = raw(header, ndata, &len);
    StFile f;
    bool ok = st_parse(&arena, b, len, &f, err, errsize);
    free(b);
    return ok;
}

START_TEST(test_round_trip) {
    uint8_t *buf;
    size_t len;
    make_sample(&buf, &len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    ck_assert_uint_eq((8 + hlen) % 8, 0); /* data area aligned */
    StFile f;
    char err[256];
    ck_assert_msg(st_parse(&arena, buf, len, &f, err, sizeof err), "%s", err);
    ck_assert_uint_eq(f.n_tensors, 4);
    const StTensor *a = st_find(&f, "a");
    ck_assert(a && a->dtype == ST_F64 && a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 3);
    double got[6];
    memcpy(got, a->data, sizeof got);
    ck_assert(memcmp(got, A, sizeof A) == 0);
    const StTensor *e = st_find(&f, "empty");
    ck_assert(e && e->nbytes == 0 && e->shape[0] == 0 && e->shape[1] == 5);
    const StTensor *b = st_find(&f, "b\"q");
    ck_assert(b && b->dtype == ST_U8 && memcmp(b->data, B, 3) == 0);
    const StTensor *c = st_find(&f, "c.i32");
    ck_assert(c && c->dtype == ST_I32 && memcmp(c->data, C, sizeof C) == 0);
    ck_assert(st_find(&f, "nope") == NULL);
    ck_assert_str_eq(st_meta_get(&f, "format"), "test");
    ck_assert_str_eq(st_meta_get(&f, "note"), "line\nbreak \xc3\xa9");
    ck_assert(st_meta_get(&f, "nope") == NULL);
    ck_assert_uint_eq(st_dtype_size(ST_F32), 4);
    ck_assert_uint_eq(st_dtype_size(ST_I64), 8);
    free(buf);
}
END_TEST

START_TEST(test_empty_container) {
    StFile f = {0};
    uint8_t *buf;
    size_t len;
    char err[256];
    ck_assert(st_serialize(&f, &buf, &len, err, sizeof err));
    StFile g;
    ck_assert_msg(st_parse(&arena, buf, len, &g, err, sizeof err), "%s", err);
    ck_assert_uint_eq(g.n_tensors, 0);
    ck_assert_uint_eq(g.n_meta, 0);
    free(buf);
}
END_TEST

/* Every strict prefix of a valid file is rejected, and so is the file with one byte appended. */
START_TEST(test_truncated_everywhere) {
    uint8_t *buf;
    size_t len;
    make_sample(&buf, &len);
    char err[256];
    for (size_t cut = 0; cut < len; cut++) {
        StFile f;
        uint8_t *copy = malloc(cut ? cut : 1); /* exact-size copy so ASan sees over-reads */
        memcpy(copy, buf, cut);
        if (st_parse(&arena, copy, cut, &f, err, sizeof err)) ck_abort_msg("accepted a prefix of %zu bytes", cut);
        free(copy);
    }
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    StFile f;
    ck_assert(!st_parse(&arena, longer, len + 1, &f, err, sizeof err));
    ck_assert(strstr(err, "cover") != NULL);
    free(longer);
    free(buf);
}
END_TEST

/* Flipping any single byte never crashes (it may or may not be accepted). */
START_TEST(test_bit_flips_never_crash) {
    uint8_t *buf;
    size_t len;
    make_sample(&buf, &len);
    char err[256];
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            StFile f;
            (void)st_parse(&arena, buf, len, &f, err, sizeof err);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    free(buf);
}
END_TEST

START_TEST(test_bad_header_length) {
    char err[256];
    StFile f;
    uint8_t short_buf[5] = {0};
    ck_assert(!st_parse(&arena, short_buf, sizeof short_buf, &f, err, sizeof err));
    ck_assert(strstr(err, "too short") != NULL);
    uint8_t huge[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'};
    ck_assert(!st_parse(&arena, huge, sizeof huge, &f, err, sizeof err));
    ck_assert(strstr(err, "too large") != NULL);
    uint8_t over[12] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    ck_assert(!st_parse(&arena, over, sizeof over, &f, err, sizeof err));
    ck_assert(strstr(err, "exceeds") != NULL);
    uint8_t zero[8] = {0};
    ck_assert(!st_parse(&arena, zero, sizeof zero, &f, err, sizeof err));
}
END_TEST

START_TEST(test_rejections) {
    struct { const char *header; size_t ndata; const char *msg; } cases[] = {
        {"[]", 0, "not a JSON object"},
        {"{\"a\":1", 0, "bad header"},
        {"{} x", 0, "bad header"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 16, "cover"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[4,12]}}", 12, "overlaps"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]}}", 16, "gap"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,16]}}", 8, "out of range"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,0]}}", 8, "out of range"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "does not match"},
        {"{\"a\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, "unsupported dtype"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8, "non-negative"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1.0],\"data_offsets\":[0,8]}}", 8, "non-negative"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,8]}}", 8, "at most 4"},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,2],\"data_offsets\":[0,0]}}", 0, "overflows"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", 0, "overflows"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1]}}", 8, "needs"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8],\"x\":1}}", 8, "unknown field"},
        {"{\"a\":{\"dtype\":\"F64\",\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, "duplicate field"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0]}}", 8, "[begin, end]"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
         "\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]}}", 16, "duplicate tensor"},
        {"{\"a\":7}", 0, "not an object"},
        {"{\"a\":{\"dtype\":8,\"shape\":[1],\"data_offsets\":[0,8]}}", 8, "not a string"},
        {"{\"__metadata__\":[]}", 0, "__metadata__ is not an object"},
        {"{\"__metadata__\":{\"k\":1}}", 0, "not a string"},
        {"{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, "duplicate metadata"},
        {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate __metadata__"},
        {"{\"__metadata__\":{\"k\":\"\xff\"}}", 0, "UTF-8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[256] = "";
        if (parse_raw(cases[i].header, cases[i].ndata, err, sizeof err))
            ck_abort_msg("case %zu accepted: %s", i, cases[i].header);
        if (!strstr(err, cases[i].msg))
            ck_abort_msg("case %zu: message '%s' lacks '%s'", i, err, cases[i].msg);
    }
    /* accepted edge cases: a zero-length tensor anywhere, trailing header spaces, scalars */
    char err[256];
    ck_assert_msg(parse_raw("{\"z\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[0,0]},"
                            "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]}}   ", 8, err, sizeof err),
                  "%s", err);
}
END_TEST

START_TEST(test_serialize_rejects_bad_tensor) {
    StTensor t = {.name = "a", .dtype = ST_F64, .ndim = 1, .shape = {3}, .data = A, .nbytes = 8};
    StFile f = {&t, 1, NULL, 0};
    uint8_t *buf;
    size_t len;
    char err[256];
    ck_assert(!st_serialize(&f, &buf, &len, err, sizeof err));
    ck_assert(strstr(err, "does not match") != NULL);
}
END_TEST

int main(void) {
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_empty_container);
    tcase_add_test(tc, test_truncated_everywhere);
    tcase_add_test(tc, test_bit_flips_never_crash);
    tcase_add_test(tc, test_bad_header_length);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_serialize_rejects_bad_tensor);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
