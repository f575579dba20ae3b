/* The REPL's recogniser of the original grammar (repl/syntax.h): whole statements, input that
 * needs more lines, and syntax errors worded as the original's ANTLR parser words them (the
 * expected messages are the original's, from its own test transcripts and its grammar). */
#include <check.h>
#include <string.h>

#include "tests/check_main.h"
#include "repl/syntax.h"

static const char *const STMT_SET =
    "{'set', 's-op', 'selector', 'show', 'full seq display', 'examples', 'exit()', 'exit', 'quit', "
    "'quit()', 'load', 'draw', '(', 'def', '{', 'for', 'aggregate(', '[', 'not', '-', '+', 'round', "
    "'indicator', 'select(', 'range(', 'zip(', 'len(', Float, PosInt, String, Comment, ID}";
static const char *const EXPR_SET =
    "{'(', '{', 'aggregate(', '[', 'not', '-', '+', 'round', 'indicator', 'select(', 'range(', 'zip(', "
    "'len(', Float, PosInt, String, ID}";

static SynResult check(Arena *a, const char *text) { return syn_check(a, text); }

static void assert_error(const char *text, const char *message) {
    Arena a;
    arena_init(&a);
    SynResult r = check(&a, text);
    ck_assert_msg(r.status == SYN_ERROR, "%s: not an error", text);
    ck_assert_str_eq(r.message, message);
    arena_free(&a);
}

static SynStatus status_of(const char *text) {
    Arena a;
    arena_init(&a);
    SynStatus s = check(&a, text).status;
    arena_free(&a);
    return s;
}

START_TEST(test_complete_statements) {
    const char *ok[] = {"a = 3;", "a, b = 1, 2;", "tokens;", "{};", "def f(x) { return x; }",
                        "def f() { y = 1; # c\n return y, 2; }", "for i in range(3) { a = a + i; }",
                        "load \"lib\";", "x = [v for v in [1, 2]];", "d = {k: 1 for k in \"ab\"};",
                        "select(indices, indices, !=);", "aggregate(s, t, 0);", "\"a\" if x else b;",
                        "a = 3; # a comment", "# only a comment", "set example [1, 2]", "show example",
                        "selector examples off", "full seq display on", "quit()", "draw(tokens, \"ab\");",
                        "not a == b;", "f(x)[0](y);"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) ck_assert_msg(status_of(ok[i]) == SYN_COMPLETE, "%s", ok[i]);
}
END_TEST

START_TEST(test_needs_more_lines) {
    const char *more[] = {"", "   ", "indices+", "tokens==tokens", "def f(x) {", "select(", "a = 3",
                          "for i in x { a = 1;", "[1, 2", "a = 3 b = 4;" /* "missing ';'" */};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        ck_assert_msg(status_of(more[i]) == SYN_INCOMPLETE, "%s", more[i]);
}
END_TEST

START_TEST(test_statement_kinds) {
    Arena a;
    arena_init(&a);
    SynResult r = check(&a, "set selector example \"abc\"");
    ck_assert_int_eq(r.kind, SYN_SET_EXAMPLE);
    ck_assert_int_eq(r.subset, SYN_SELECTOR);
    ck_assert_uint_eq(r.expr[0].start, 21);
    ck_assert_uint_eq(r.expr[0].end, 26);
    r = check(&a, "s-op examples on");
    ck_assert_int_eq(r.kind, SYN_TOGGLE_EXAMPLES);
    ck_assert_int_eq(r.subset, SYN_SOP);
    ck_assert(r.on);
    r = check(&a, "load \"tests/x\"; # c");
    ck_assert_str_eq(r.load_path, "tests/x");
    r = check(&a, "a=3;b=4;");
    ck_assert_int_eq(r.status, SYN_COMPLETE);
    ck_assert_uint_eq(r.n_statements, 2);
    r = check(&a, "draw(a, [1]);");
    ck_assert_int_eq(r.kind, SYN_DRAW);
    ck_assert_uint_eq(r.n_exprs, 2);
    arena_free(&a);
}
END_TEST

START_TEST(test_antlr_messages) {
    Arena a;
    arena_init(&a);
    assert_error("if=1;", arena_printf(&a, "mismatched input 'if' expecting %s", STMT_SET));
    assert_error("in 4;", arena_printf(&a, "extraneous input 'in' expecting %s", STMT_SET));
    assert_error("not=3;", arena_printf(&a, "extraneous input '=' expecting %s", EXPR_SET));
    assert_error("not;", arena_printf(&a, "mismatched input ';' expecting %s", EXPR_SET));
    assert_error("def=4;", "mismatched input '=' expecting ID");
    assert_error("for;", "mismatched input ';' expecting ID");
    assert_error("for in;", "missing ID at 'in'");
    assert_error("selector_width(tokens,tokens,==);", arena_printf(&a, "mismatched input '==' expecting %s", EXPR_SET));
    assert_error("tokens;;", arena_printf(&a, "extraneous input ';' expecting {<EOF>, %s", STMT_SET + 1));
    assert_error(";", arena_printf(&a, "mismatched input ';' expecting %s", STMT_SET));
    assert_error("a b;", "no viable alternative at input 'ab'");
    assert_error("[1 2];", "no viable alternative at input '[12'");
    assert_error("x @ 3;", "token recognition error at: '@'");
    /* != is only select's: after a name, no alternative fits; after a bracket, ';' was due */
    assert_error("a != b;", "no viable alternative at input 'a!='");
    assert_error("(a) != b;", "mismatched input '!=' expecting ';'");
    assert_error("set example \"a\";",
                 arena_printf(&a, "extraneous input ';' expecting {<EOF>, %s", STMT_SET + 1));
    arena_free(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("repl_syntax");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_complete_statements);
    tcase_add_test(tc, test_needs_more_lines);
    tcase_add_test(tc, test_statement_kinds);
    tcase_add_test(tc, test_antlr_messages);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
