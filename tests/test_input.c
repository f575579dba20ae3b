/* Input literals: strings, lists of atoms, bare words, and clear errors for anything else. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "ir/input.h"

typedef struct Parsed {
    Arena arena;
    Value *atoms;
    size_t n;
    bool ok;
    char err[256];
} Parsed;

static Parsed *parse(const char *text) {
    Parsed *p = calloc(1, sizeof *p);
    arena_init(&p->arena);
    p->ok = input_parse(&p->arena, text, &p->atoms, &p->n, p->err, sizeof p->err);
    return p;
}

static void done(Parsed *p) {
    arena_free(&p->arena);
    free(p);
}

START_TEST(test_string_literal) {
    Parsed *p = parse("\"hello\"");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 5);
    ck_assert_int_eq(p->atoms[0].kind, VAL_STR);
    ck_assert_str_eq(p->atoms[0].as.s, "h");
    ck_assert_str_eq(p->atoms[4].as.s, "o");
    done(p);
    p = parse("  \"a b\"\n");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 3);
    ck_assert_str_eq(p->atoms[1].as.s, " ");
    done(p);
    p = parse("\"\"");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 0);
    done(p);
}
END_TEST

START_TEST(test_list_of_atoms) {
    Parsed *p = parse("[1, -2, 2.5, -0.5, \"ab\", True, False, +3]");
    ck_assert_msg(p->ok, "%s", p->err);
    ck_assert_uint_eq(p->n, 8);
    ck_assert_int_eq(p->atoms[0].kind, VAL_INT);
    ck_assert_int_eq(p->atoms[0].as.i, 1);
    ck_assert_int_eq(p->atoms[1].as.i, -2);
    ck_assert_int_eq(p->atoms[2].kind, VAL_FLOAT);
    ck_assert_double_eq(p->atoms[2].as.f, 2.5);
    ck_assert_double_eq(p->atoms[3].as.f, -0.5);
    ck_assert_int_eq(p->atoms[4].kind, VAL_STR);
    ck_assert_str_eq(p->atoms[4].as.s, "ab"); /* a string in a list is one atom */
    ck_assert_int_eq(p->atoms[5].kind, VAL_BOOL);
    ck_assert(p->atoms[5].as.b);
    ck_assert(!p->atoms[6].as.b);
    ck_assert_int_eq(p->atoms[7].as.i, 3);
    done(p);
    p = parse("[]");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 0);
    done(p);
    /* outsider note (out21c): numbers in exponent form, as Python and rasprun print them */
    p = parse("[1e-05, -2.5E3, 7e0]");
    ck_assert_msg(p->ok, "%s", p->err);
    ck_assert_uint_eq(p->n, 3);
    ck_assert_int_eq(p->atoms[0].kind, VAL_FLOAT);
    ck_assert_double_eq(p->atoms[0].as.f, 1e-05);
    ck_assert_double_eq(p->atoms[1].as.f, -2500.0);
    ck_assert_int_eq(p->atoms[2].kind, VAL_FLOAT);
    ck_assert_double_eq(p->atoms[2].as.f, 7.0);
    done(p);
}
END_TEST

START_TEST(test_bare_word) {
    Parsed *p = parse("hello");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 5);
    ck_assert_str_eq(p->atoms[1].as.s, "e");
    done(p);
    p = parse("(()\n");
    ck_assert(p->ok);
    ck_assert_uint_eq(p->n, 3);
    ck_assert_str_eq(p->atoms[0].as.s, "(");
    done(p);
}
END_TEST

START_TEST(test_errors) {
    const char *bad[] = {"[1, [2]]", "[1, x]", "[1,", "\"abc", "[1] + [2]", "\"a\" \"b\"", "[-\"a\"]", "",
                         "   "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Parsed *p = parse(bad[i]);
        ck_assert_msg(!p->ok, "accepted %s", bad[i]);
        ck_assert_msg(strlen(p->err) > 0, "no message for %s", bad[i]);
        done(p);
    }
    Parsed *p = parse("[1, [2]]");
    ck_assert(strstr(p->err, "element 2") != NULL);
    done(p);
}
END_TEST

int main(void) {
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_string_literal);
    tcase_add_test(tc, test_list_of_atoms);
    tcase_add_test(tc, test_bare_word);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
