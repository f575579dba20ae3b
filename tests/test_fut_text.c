/* Matrices written as text (fut/matrix_text.h): the INPUT syntax of `raspfut run`. Every
 * malformed number is refused with its row and place, never read as something else. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "tests/check_main.h"
#include "fut/matrix_text.h"

/* Parses text with `cols` columns; on success returns the matrix, on failure the message. */
static bool parse(Arena *a, const char *text, size_t cols, FutMat *m, char *err, size_t es) {
    return fut_matrix_from_text(a, text, cols, m, err, es);
}

#define REFUSED(text, cols, want)                                                           \
    do {                                                                                    \
        FutMat m_;                                                                          \
        char e_[256];                                                                       \
        ck_assert_msg(!parse(&a, text, cols, &m_, e_, sizeof e_), "accepted %s", text);     \
        ck_assert_msg(strcmp(e_, want) == 0, "%s: got '%s' want '%s'", text, e_, want);    \
    } while (0)

START_TEST(test_accepted) {
    Arena a;
    arena_init(&a);
    char err[256];
    FutMat m;
    /* commas, blanks, both, rows by ';' or newlines, trailing separators, CRLF */
    const char *same[] = {"1,-2.5,3e-4;0,.5,7.", "1 -2.5 3e-4;0 .5 7.", "1, -2.5 ,3e-4 ; 0\t.5 7.",
                          "1,-2.5,3E-4\n0,.5,+7\n", "1,-2.5,3e-4\r\n0,.5,7.0e0\r\n\n", "1,-2.5,0.0003;0,0.5,7;"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        ck_assert_msg(parse(&a, same[i], 3, &m, err, sizeof err), "%s: %s", same[i], err);
        ck_assert_uint_eq(m.rows, 2);
        double want[] = {1, -2.5, 3e-4, 0, 0.5, 7};
        for (size_t k = 0; k < 6; k++) ck_assert_msg(m.data[k] == want[k], "%s [%zu] = %g", same[i], k, m.data[k]);
    }
    /* the extremes of a double, subnormals included */
    ck_assert(parse(&a, "1.7976931348623157e308 -4.9e-324 2.2e-308", 3, &m, err, sizeof err));
    ck_assert(m.data[0] == 1.7976931348623157e308 && m.data[1] == -4.9e-324 && m.data[2] == 2.2e-308);
    /* zero written any way is zero */
    ck_assert(parse(&a, "0e-999,-0.000,0", 3, &m, err, sizeof err));
    ck_assert(m.data[0] == 0 && m.data[1] == 0 && signbit(m.data[1]));
    /* many rows */
    char big[4096] = "";
    for (int i = 0; i < 300; i++) strcat(big, "1,2;");
    ck_assert(parse(&a, big, 2, &m, err, sizeof err));
    ck_assert_uint_eq(m.rows, 300);
    double v;
    ck_assert(fut_number_from_text("-12.5e1", &v, err, sizeof err) && v == -125);
    arena_free(&a);
}
END_TEST

START_TEST(test_refused) {
    Arena a;
    arena_init(&a);
    REFUSED("1,,0,0", 3, "row 1, number 2: empty (two commas in a row)");
    REFUSED(",1,0", 2, "row 1, number 1: empty (a comma starts the row)");
    REFUSED("1,0,", 2, "row 1 ends with a comma");
    REFUSED("0x10,0", 2, "row 1, number 1: \"0x10\" is not a decimal number");
    REFUSED("1,inf", 2, "row 1, number 2: \"inf\" is not a decimal number");
    REFUSED("nan 1", 2, "row 1, number 1: \"nan\" is not a decimal number");
    REFUSED("1e 2", 2, "row 1, number 1: \"1e\" is not a decimal number");
    REFUSED("1.2.3 0", 2, "row 1, number 1: \"1.2.3\" is not a decimal number");
    REFUSED("- 1", 2, "row 1, number 1: \"-\" is not a decimal number");
    REFUSED("1;2,abc", 1, "row 2, number 2: \"abc\" is not a decimal number");
    REFUSED("1e-400,0", 2, "row 1, number 1: 1e-400 is too small for a double: it would read as 0 (smallest 4.9e-324)");
    REFUSED("1,-1e400", 2, "row 1, number 2: -1e400 is too large for a double (largest 1.8e308)");
    REFUSED("1,0;;1,0", 2, "row 2 is empty");
    REFUSED(";1,0", 2, "row 1 is empty");
    REFUSED("1,0\n\n1,0", 2, "row 2 is empty");
    REFUSED("1,0;1", 2, "row 2 has 1 number, expected 2");
    REFUSED("1,0,0", 2, "row 1 has 3 numbers, expected 2");
    REFUSED("", 2, "the input is empty");
    REFUSED(" ;\n ", 2, "the input is empty");
    double v;
    char err[256];
    ck_assert(!fut_number_from_text("1 ", &v, err, sizeof err));
    ck_assert(!fut_number_from_text("", &v, err, sizeof err));
    ck_assert(!fut_number_from_text("1,2", &v, err, sizeof err));
    arena_free(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("fut_text");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_accepted);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
