/* parse_size (support/parse.h): the count every tool's options take. */
#include <check.h>
#include <stdint.h>

#include "support/parse.h"
#include "tests/check_main.h"

START_TEST(test_counts) {
    size_t v = 7;
    ck_assert(parse_size("0", &v) && v == 0);
    ck_assert(parse_size("42", &v) && v == 42);
    ck_assert(parse_size("18446744073709551615", &v) && v == SIZE_MAX); /* 64-bit size_t */
    v = 7;
    static const char *const bad[] = {"", "-1", "+1", "12x", " 3", "1e3", "18446744073709551616", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) ck_assert_msg(!parse_size(bad[i], &v), "%s", bad[i]);
    ck_assert(!parse_size(NULL, &v));
    ck_assert_uint_eq(v, 7); /* untouched when refused */
}
END_TEST

int main(void) {
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_counts);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
