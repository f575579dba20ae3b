/* The strict JSON reader and writer (runtime/json.h). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "runtime/json.h"

static Arena arena; /* each parse's result lives until the next parse */

static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static bool parses(const char *s, JsonValue **v) {
    char err[128];
    arena_free(&arena);
    return json_parse(&arena, s, strlen(s), v, err, sizeof err);
}

static bool ok(const char *s) { JsonValue *v; return parses(s, &v); }

START_TEST(test_scalars) {
    JsonValue *v;
    ck_assert(parses("true", &v) && v->kind == JSON_BOOL && v->boolean);
    ck_assert(parses(" false ", &v) && v->kind == JSON_BOOL && !v->boolean);
    ck_assert(parses("null", &v) && v->kind == JSON_NULL);
    ck_assert(parses("-12", &v) && v->kind == JSON_NUMBER && v->is_integer && v->number == -12);
    ck_assert(parses("0.5e1", &v) && !v->is_integer && v->number == 5.0);
    ck_assert(parses("1E-2", &v) && fabs(v->number - 0.01) < 1e-15);
    int64_t i;
    ck_assert(parses("-9223372036854775808", &v) && json_as_i64(v, &i) && i == INT64_MIN);
    ck_assert(parses("9223372036854775808", &v) && !json_as_i64(v, &i));
    uint64_t u;
    ck_assert(parses("18446744073709551615", &v) && json_as_u64(v, &u) && u == UINT64_MAX);
    ck_assert(parses("18446744073709551616", &v) && !json_as_u64(v, &u));
    ck_assert(parses("1.0", &v) && !json_as_u64(v, &u));
}
END_TEST

START_TEST(test_strings) {
    JsonValue *v;
    ck_assert(parses("\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\"", &v));
    ck_assert_str_eq(v->text, "a\"b\\c/d\n\t\r\b\f");
    ck_assert(parses("\"\\u00e9\\u20AC\"", &v));
    ck_assert_str_eq(v->text, "\xc3\xa9\xe2\x82\xac");
    ck_assert(parses("\"\\ud83d\\ude00\"", &v)); /* surrogate pair -> U+1F600 */
    ck_assert_str_eq(v->text, "\xf0\x9f\x98\x80");
    ck_assert(parses("\"h\xc3\xa9llo\"", &v));
    ck_assert_uint_eq(v->len, 6);
}
END_TEST

START_TEST(test_containers) {
    JsonValue *v;
    ck_assert(parses("{\"a\": [1, 2, {\"b\": []}], \"c\": {}}", &v));
    ck_assert_int_eq(v->kind, JSON_OBJECT);
    ck_assert_uint_eq(v->count, 2);
    const JsonValue *a = json_get(v, "a");
    ck_assert(a && a->kind == JSON_ARRAY && a->count == 3);
    ck_assert(json_get(&a->items[2], "b")->count == 0);
    ck_assert(json_get(v, "zz") == NULL);
    ck_assert(json_get(a, "a") == NULL); /* not an object */
    /* many elements exercise growth */
    char big[4096] = "[";
    for (int i = 0; i < 500; i++) strcat(big, i ? ",7" : "7");
    strcat(big, "]");
    ck_assert(parses(big, &v) && v->count == 500 && v->items[499].number == 7);
}
END_TEST

START_TEST(test_rejections) {
    const char *bad[] = {
        "", " ", "tru", "nul", "01", "-", "1.", ".5", "1e", "+1", "1 2", "[1,]", "[1 2]",
        "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "[", "{", "\"abc", "\"\\x\"", "\"\\u12\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\u0000\"", "\"a\x01\"",
        "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"",
        "[1]x", "{} {}", "NaN", "Infinity", "'a'", "[1,\n", "\"\\",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (ok(bad[i])) ck_abort_msg("accepted invalid JSON: %s", bad[i]);
    }
    /* embedded NUL byte in the text */
    Arena a;
    arena_init(&a);
    JsonValue *v;
    char err[128];
    ck_assert(!json_parse(&a, "[1]\0", 4, &v, err, sizeof err));
    ck_assert(strstr(err, "trailing") != NULL);
    arena_free(&a);
}
END_TEST

START_TEST(test_depth_limit) {
    char s[2 * (JSON_MAX_DEPTH + 2) + 1];
    size_t n = 0;
    for (int i = 0; i < JSON_MAX_DEPTH; i++) s[n++] = '[';
    for (int i = 0; i < JSON_MAX_DEPTH; i++) s[n++] = ']';
    s[n] = 0;
    ck_assert(ok(s));
    n = 0;
    for (int i = 0; i < JSON_MAX_DEPTH + 1; i++) s[n++] = '[';
    for (int i = 0; i < JSON_MAX_DEPTH + 1; i++) s[n++] = ']';
    s[n] = 0;
    ck_assert(!ok(s));
}
END_TEST

START_TEST(test_writer_round_trip) {
    JsonBuf b;
    jbuf_init(&b);
    jbuf_puts(&b, "[");
    jbuf_string(&b, "q\"\\\n\x01\xc3\xa9");
    jbuf_puts(&b, ",");
    jbuf_double(&b, 2.0);
    jbuf_puts(&b, ",");
    jbuf_double(&b, 0.1);
    jbuf_puts(&b, ",");
    jbuf_i64(&b, INT64_MIN);
    jbuf_puts(&b, ",");
    jbuf_double(&b, NAN);
    jbuf_puts(&b, "]");
    ck_assert(!b.failed);
    JsonValue *v;
    ck_assert(parses(b.data, &v));
    ck_assert_str_eq(v->items[0].text, "q\"\\\n\x01\xc3\xa9");
    ck_assert(!v->items[1].is_integer && v->items[1].number == 2.0);
    ck_assert(v->items[2].number == 0.1);
    int64_t i;
    ck_assert(json_as_i64(&v->items[3], &i) && i == INT64_MIN);
    ck_assert_int_eq(v->items[4].kind, JSON_NULL);
    jbuf_free(&b);
    /* long printf output takes the heap path */
    jbuf_init(&b);
    char longs[1000];
    memset(longs, 'x', 999);
    longs[999] = 0;
    jbuf_printf(&b, "%s", longs);
    ck_assert_uint_eq(b.len, 999);
    jbuf_free(&b);
}
END_TEST


/* json_utf8: text a JSON string holds as it is, and not lone or overlong bytes, surrogates, NUL. */
START_TEST(test_utf8) {
    ck_assert(json_utf8("abc", 3) && json_utf8("", 0) && json_utf8("\xc3\xa9", 2) && json_utf8("\xf0\x9f\x98\x80", 4));
    ck_assert(!json_utf8("\xc3", 1) && !json_utf8("\xa9", 1) && !json_utf8("\xc0\x80", 2));
    ck_assert(!json_utf8("\xed\xa0\x80", 3) && !json_utf8("a\0b", 3) && !json_utf8("\xf4\x90\x80\x80", 4));
}
END_TEST

int main(void) {
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_scalars);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_containers);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_writer_round_trip);
    tcase_add_test(tc, test_utf8);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
