/* Tests of the scanner (lexer/lexer.l) on its own: tokens, values, 1-based locations, the
 * context-sensitive words (builtins before `(`, REPL commands at statement start), and the
 * lexical errors, which are reported with a location and never stop the scan. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "parser/ast_build.h"
#include "parser.h"
#include "lexer.h"

static Arena arena;
static DiagList diags;

static void setup(void) {
    arena_init(&arena);
    diag_init(&diags, &arena);
}

static void teardown(void) { arena_free(&arena); }

static const char *tok_name(int t) {
    static char one[4];
    switch (t) {
    case END_OF_FILE: return "EOF";
    case ID: return "ID";
    case INT: return "INT";
    case FLOAT: return "FLOAT";
    case STRING: return "STRING";
    case REPL_CMD: return "REPL";
    case SET_EXAMPLE: return "SET_EXAMPLE";
    case REPL_END: return "REPL_END";
    case DEF: return "def";
    case FOR: return "for";
    case IN: return "in";
    case RETURN: return "return";
    case LOAD: return "load";
    case IF: return "if";
    case ELSE: return "else";
    case AND: return "and";
    case OR: return "or";
    case NOT: return "not";
    case SELECT_LP: return "select(";
    case AGGREGATE_LP: return "aggregate(";
    case RANGE_LP: return "range(";
    case ZIP_LP: return "zip(";
    case LEN_LP: return "len(";
    case ROUND_LP: return "round(";
    case INDICATOR_LP: return "indicator(";
    case DRAW_LP: return "draw(";
    case EQ: return "==";
    case NE: return "!=";
    case LT: return "<";
    case GT: return ">";
    case LE: return "<=";
    case GE: return ">=";
    default:
        if (t > 0 && t < 128) {
            snprintf(one, sizeof one, "%c", t);
            return one;
        }
        return "?";
    }
}

/* Scans `len` bytes of `text`; returns the tokens as "NAME[(value)]@line:col" joined by spaces,
 * ending with EOF. */
static const char *lex_n(const char *text, size_t len) {
    SourceFile *f = ARENA_NEW(&arena, SourceFile);
    f->name = "<lex>";
    f->text = text;
    f->len = len;
    ParseCtx ctx = {.arena = &arena, .file = f, .diags = &diags, .line = 1, .col = 1, .at_stmt_start = true};
    yyscan_t scanner;
    ck_assert_int_eq(yylex_init_extra(&ctx, &scanner), 0);
    YY_BUFFER_STATE buf = yy_scan_bytes(text, (int)len, scanner);
    char *out = NULL;
    size_t outlen = 0;
    FILE *fp = open_memstream(&out, &outlen);
    for (int n = 0; n < 1000; n++) {
        YYSTYPE val;
        YYLTYPE loc;
        memset(&val, 0, sizeof val);
        int t = yylex(&val, &loc, scanner);
        fprintf(fp, "%s%s", n ? " " : "", tok_name(t));
        if (t == ID || t == STRING || t == REPL_CMD || t == SET_EXAMPLE) fprintf(fp, "(%s)", val.str);
        if (t == INT) fprintf(fp, "(%lld)", (long long)val.ival);
        if (t == FLOAT) fprintf(fp, "(%g)", val.fval);
        fprintf(fp, "@%d:%d", loc.first_line, loc.first_column);
        if (t == END_OF_FILE) break;
    }
    fclose(fp);
    yy_delete_buffer(buf, scanner);
    yylex_destroy(scanner);
    char *s = arena_strdup(&arena, out);
    free(out);
    return s;
}

static const char *lex(const char *text) { return lex_n(text, strlen(text)); }

static const char *diag_text(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t i = 0; i < diags.count; i++)
        fprintf(f, "%d:%d: %s\n", diags.items[i].loc.line, diags.items[i].loc.col, diags.items[i].message);
    fclose(f);
    char *s = arena_strdup(&arena, buf);
    free(buf);
    return s;
}

START_TEST(test_simple_statement) {
    ck_assert_str_eq(lex("x = 1;"), "ID(x)@1:1 =@1:3 INT(1)@1:5 ;@1:6 EOF@1:7");
    ck_assert_int_eq((int)diags.count, 0);
}
END_TEST

START_TEST(test_operators) {
    ck_assert_str_eq(lex("+ - * / % ^ == != < > <= >= = ( ) [ ] { } , : ;"),
                     "+@1:1 -@1:3 *@1:5 /@1:7 %@1:9 ^@1:11 ==@1:13 !=@1:16 <@1:19 >@1:21 <=@1:23 "
                     ">=@1:26 =@1:29 (@1:31 )@1:33 [@1:35 ]@1:37 {@1:39 }@1:41 ,@1:43 :@1:45 ;@1:47 EOF@1:48");
    ck_assert_str_eq(lex("a<=b==c"), "ID(a)@1:1 <=@1:2 ID(b)@1:4 ==@1:5 ID(c)@1:7 EOF@1:8");
}
END_TEST

START_TEST(test_literals) {
    ck_assert_str_eq(lex("0 42 3.25 \"a b\" \"\""),
                     "INT(0)@1:1 INT(42)@1:3 FLOAT(3.25)@1:6 STRING(a b)@1:11 STRING()@1:17 EOF@1:19");
    ck_assert_str_eq(lex("9223372036854775807"), "INT(9223372036854775807)@1:1 EOF@1:20");
    ck_assert_str_eq(lex("\"#not a comment\""), "STRING(#not a comment)@1:1 EOF@1:17");
    ck_assert_int_eq((int)diags.count, 0);
}
END_TEST

START_TEST(test_keywords_and_names) {
    ck_assert_str_eq(lex("def for in return load if else and or not"),
                     "def@1:1 for@1:5 in@1:9 return@1:12 load@1:19 if@1:24 else@1:27 and@1:32 "
                     "or@1:36 not@1:39 EOF@1:42");
    ck_assert_str_eq(lex("define format inx True _a1 notx"),
                     "ID(define)@1:1 ID(format)@1:8 ID(inx)@1:15 ID(True)@1:19 ID(_a1)@1:24 "
                     "ID(notx)@1:28 EOF@1:32");
}
END_TEST

START_TEST(test_builtins_need_paren) {
    ck_assert_str_eq(lex("select(aggregate (range\t(zip(len(round(indicator("),
                     "select(@1:1 aggregate(@1:8 range(@1:19 zip(@1:26 len(@1:30 round(@1:34 "
                     "indicator(@1:40 EOF@1:50");
    ck_assert_str_eq(lex("select selector( len length round"),
                     "ID(select)@1:1 ID(selector)@1:8 (@1:16 ID(len)@1:18 ID(length)@1:22 ID(round)@1:29 EOF@1:34");
    /* whitespace before the parenthesis may include a newline; locations follow it */
    ck_assert_str_eq(lex("len\n  (x) y"), "len(@1:1 ID(x)@2:4 )@2:5 ID(y)@2:7 EOF@2:8");
}
END_TEST

START_TEST(test_locations) {
    ck_assert_str_eq(lex("a\n\tb  c\r\n  # comment\nd"),
                     "ID(a)@1:1 ID(b)@2:2 ID(c)@2:5 ID(d)@4:1 EOF@4:2");
    ck_assert_str_eq(lex(""), "EOF@1:1");
    ck_assert_str_eq(lex("x # comment at end"), "ID(x)@1:1 EOF@1:19");
}
END_TEST

START_TEST(test_repl_words) {
    ck_assert_str_eq(lex("set example \"a\"\nexit\n"),
                     "SET_EXAMPLE(set example)@1:1 STRING(a)@1:13 REPL_END@1:16 REPL(exit)@2:1 EOF@3:1");
    ck_assert_str_eq(lex("set  s-op\texample x;"),
                     "SET_EXAMPLE(set s-op example)@1:1 ID(x)@1:19 ;@1:20 EOF@1:21");
    ck_assert_str_eq(lex("full seq display on; selector examples off quit()"),
                     "REPL(full seq display on)@1:1 ;@1:20 REPL(selector examples off)@1:22 REPL(quit())@1:44 EOF@1:50");
    ck_assert_str_eq(lex("show example"), "REPL(show example)@1:1 EOF@1:13");
    ck_assert_str_eq(lex("draw (x);"), "draw(@1:1 ID(x)@1:7 )@1:8 ;@1:9 EOF@1:10");
    /* the expression of `set example` ends at EOF too */
    ck_assert_str_eq(lex("set example [1,\n2]"),
                     "SET_EXAMPLE(set example)@1:1 [@1:13 INT(1)@1:14 ,@1:15 INT(2)@2:1 ]@2:2 REPL_END@2:3 EOF@2:3");
}
END_TEST

START_TEST(test_repl_words_not_at_statement_start) {
    /* After `=`, the words are names; the scanner gives back the rest of the match. */
    ck_assert_str_eq(lex("x = exit; y = set example; z = s-op examples on"),
                     "ID(x)@1:1 =@1:3 ID(exit)@1:5 ;@1:9 ID(y)@1:11 =@1:13 ID(set)@1:15 "
                     "ID(example)@1:19 ;@1:26 ID(z)@1:28 =@1:30 ID(s)@1:32 -@1:33 ID(op)@1:34 "
                     "ID(examples)@1:37 ID(on)@1:46 EOF@1:48");
    /* `exit` followed by more than `;` or end of line is a name, even at statement start */
    ck_assert_str_eq(lex("exit = 1;"), "ID(exit)@1:1 =@1:6 INT(1)@1:8 ;@1:9 EOF@1:10");
    ck_assert_str_eq(lex("exit(1)"), "ID(exit)@1:1 (@1:5 INT(1)@1:6 )@1:7 EOF@1:8");
    ck_assert_str_eq(lex("f(x) draw(y)"), "ID(f)@1:1 (@1:2 ID(x)@1:3 )@1:4 ID(draw)@1:6 (@1:10 ID(y)@1:11 )@1:12 EOF@1:13");
    /* a `{` after an expression opens a block, where a statement may begin */
    ck_assert_str_eq(lex("for i in l { exit }"),
                     "for@1:1 ID(i)@1:5 in@1:7 ID(l)@1:10 {@1:12 ID(exit)@1:14 }@1:19 EOF@1:20");
    ck_assert_str_eq(lex("for i in l {\nexit\n}"),
                     "for@1:1 ID(i)@1:5 in@1:7 ID(l)@1:10 {@1:12 REPL(exit)@2:1 }@3:1 EOF@3:2");
    ck_assert_str_eq(lex("x = {\nexit\n: 1}"),
                     "ID(x)@1:1 =@1:3 {@1:5 ID(exit)@2:1 :@3:1 INT(1)@3:3 }@3:4 EOF@3:5");
}
END_TEST

START_TEST(test_errors) {
    ck_assert_str_eq(lex("a @ b $"), "ID(a)@1:1 ID(b)@1:5 EOF@1:8");
    ck_assert_str_eq(lex("x = \"abc\ny"), "ID(x)@1:1 =@1:3 STRING(abc)@1:5 ID(y)@2:1 EOF@2:2");
    ck_assert_str_eq(lex("9223372036854775808"), "INT(0)@1:1 EOF@1:20");
    ck_assert_str_eq(lex("1. .5 !x"), "INT(1)@1:1 INT(5)@1:5 ID(x)@1:8 EOF@1:9");
    ck_assert_str_eq(diag_text(),
                     "1:3: unexpected character '@'\n"
                     "1:7: unexpected character '$'\n"
                     "1:5: unterminated string literal\n"
                     "1:1: integer literal 9223372036854775808 is too large (the maximum is 9223372036854775807)\n"
                     "1:2: unexpected character '.'\n"
                     "1:4: unexpected character '.'\n"
                     "1:7: unexpected character '!'\n");
    ck_assert_uint_eq(diags.error_count, 7);
}
END_TEST

START_TEST(test_binary_bytes) {
    static const char text[] = "a\0b\x80\xff";
    ck_assert_str_eq(lex_n(text, sizeof text - 1), "ID(a)@1:1 ID(b)@1:3 EOF@1:6");
    ck_assert_str_eq(diag_text(),
                     "1:2: unexpected character '\\x00'\n"
                     "1:4: unexpected character '\\x80'\n"
                     "1:5: unexpected character '\\xff'\n");
}
END_TEST

static Suite *lexer_suite(void) {
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("lexer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_simple_statement);
    tcase_add_test(tc, test_operators);
    tcase_add_test(tc, test_literals);
    tcase_add_test(tc, test_keywords_and_names);
    tcase_add_test(tc, test_builtins_need_paren);
    tcase_add_test(tc, test_locations);
    tcase_add_test(tc, test_repl_words);
    tcase_add_test(tc, test_repl_words_not_at_statement_start);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_binary_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(lexer_suite());
}
