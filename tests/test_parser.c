/* Tests of the parser (parser/parser.y, parser/parse.c, parser/ast.c): every construct, every
 * precedence level and pairwise interaction (checked through the fully parenthesised printer),
 * statement forms, REPL commands, located syntax errors, and robustness on garbage. */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "parser/ast_build.h"
#include "parser/parser.h"

static Arena arena;
static DiagList diags;

static void setup(void) {
    arena_init(&arena);
    diag_init(&diags, &arena);
}

static void teardown(void) { arena_free(&arena); }

/* Text printed by `print` for `arg`, in the arena. */
static const char *capture_expr(const AstExpr *e) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ast_print_expr(f, e);
    fclose(f);
    char *s = arena_strdup(&arena, buf);
    free(buf);
    return s;
}

static const char *capture_program(const AstProgram *p) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ast_print_program(f, p);
    fclose(f);
    char *s = arena_strdup(&arena, buf);
    free(buf);
    return s;
}

/* All diagnostics as "line:col: severity: message" lines, for assertions. */
static const char *diag_text(void) {
    static const char *const sev[] = {"error", "warning", "note"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t i = 0; i < diags.count; i++)
        fprintf(f, "%d:%d: %s: %s\n", diags.items[i].loc.line, diags.items[i].loc.col,
                sev[diags.items[i].severity], diags.items[i].message);
    fclose(f);
    char *s = arena_strdup(&arena, buf);
    free(buf);
    return s;
}

/* Parses `src` as a single expression and returns its parenthesised print ("ERROR" on failure). */
static const char *pe(const char *src) {
    AstExpr *e = NULL;
    SourceFile *f = source_from_string(&arena, "<test>", src);
    if (!parse_expression(&arena, f, &e, &diags)) return "ERROR";
    return capture_expr(e);
}

/* Parses `src` as a program; returns its print ("ERROR" on failure). */
static const char *pp(const char *src, AstProgram *out) {
    AstProgram p;
    SourceFile *f = source_from_string(&arena, "<test>", src);
    bool ok = parse_program(&arena, f, &p, &diags);
    if (out) *out = p;
    return ok ? capture_program(&p) : "ERROR";
}

/* ---- literals and primaries ---- */

START_TEST(test_literals) {
    ck_assert_str_eq(pe("42"), "42");
    ck_assert_str_eq(pe("0"), "0");
    ck_assert_str_eq(pe("9223372036854775807"), "9223372036854775807");
    ck_assert_str_eq(pe("2.5"), "2.5");
    ck_assert_str_eq(pe("0.1"), "0.1");
    ck_assert_str_eq(pe("3.0"), "3.0");
    ck_assert_str_eq(pe("\"hello world\""), "\"hello world\"");
    ck_assert_str_eq(pe("\"\""), "\"\"");
    ck_assert_str_eq(pe("\"a#b\""), "\"a#b\"");
    ck_assert_str_eq(pe("tokens"), "tokens");
    ck_assert_str_eq(pe("True"), "True");
    ck_assert_str_eq(pe("_x9"), "_x9");
    ck_assert_int_eq((int)diags.count, 0);
}
END_TEST

START_TEST(test_literal_values) {
    AstExpr *e;
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "9223372036854775807"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_INT_LIT);
    ck_assert(e->u.int_value == INT64_MAX);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "1.25"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_FLOAT_LIT);
    ck_assert(e->u.float_value == 1.25);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "\"ab c\""), &e, &diags));
    ck_assert_int_eq(e->kind, AST_STRING_LIT);
    ck_assert_str_eq(e->u.string_value, "ab c");
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "-3"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_UNARY);
    ck_assert_int_eq(e->u.unary.op, AST_NEG);
    ck_assert_int_eq(e->u.unary.operand->kind, AST_INT_LIT);
    ck_assert(e->u.unary.operand->u.int_value == 3);
}
END_TEST

START_TEST(test_input_literals) {
    ck_assert_str_eq(pe("[1, -2.5, \"a\", True]"), "[1, (-2.5), \"a\", True]");
    ck_assert_str_eq(pe("  \"hello\"  \n"), "\"hello\"");
    ck_assert_str_eq(pe("[]"), "[]");
    ck_assert_str_eq(pe("\"hello\" extra"), "ERROR");
    ck_assert_str_eq(diag_text(), "1:9: error: syntax error, unexpected identifier, expecting operator or end of file\n");
}
END_TEST

START_TEST(test_empty_expression_is_error) {
    ck_assert_str_eq(pe(""), "ERROR");
    ck_assert_str_eq(diag_text(), "1:1: error: syntax error, unexpected end of file, expecting expression\n");
}
END_TEST

START_TEST(test_lists_and_dicts) {
    ck_assert_str_eq(pe("[1, 2, 3]"), "[1, 2, 3]");
    ck_assert_str_eq(pe("[[1], [], [2, [3]]]"), "[[1], [], [2, [3]]]");
    ck_assert_str_eq(pe("{}"), "{}");
    ck_assert_str_eq(pe("{\"a\": 1, \"b\": 2 + 3}"), "{\"a\": 1, \"b\": (2 + 3)}");
    ck_assert_str_eq(pe("{1: {2: 3}}"), "{1: {2: 3}}");
    AstExpr *e;
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "{\"a\": 1, \"b\": 2}"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_DICT);
    ck_assert_uint_eq(e->u.list.count, 4);
    ck_assert_str_eq(e->u.list.items[2]->u.string_value, "b");
    ck_assert(e->u.list.items[3]->u.int_value == 2);
}
END_TEST

START_TEST(test_comprehensions) {
    ck_assert_str_eq(pe("[x + 1 for x in l]"), "[(x + 1) for x in l]");
    ck_assert_str_eq(pe("[a * b for a, b in zip(l, m)]"), "[(a * b) for a, b in zip(l, m)]");
    ck_assert_str_eq(pe("{k: v for k, v in zip(a, b)}"), "{k: v for k, v in zip(a, b)}");
    ck_assert_str_eq(pe("[x in l for x in m]"), "[(x in l) for x in m]");
    ck_assert_str_eq(pe("[x for x in a in b]"), "[x for x in (a in b)]");
    ck_assert_str_eq(pe("[[y for y in range(x)] for x in range(3)]"),
                     "[[y for y in range(x)] for x in range(3)]");
    AstExpr *e;
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "{k: 1 for k in l}"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_DICT_COMP);
    ck_assert_str_eq(e->u.comp.key->u.name, "k");
    ck_assert_uint_eq(e->u.comp.names.count, 1);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "[k for k in l]"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_LIST_COMP);
    ck_assert_ptr_null(e->u.comp.key);
}
END_TEST

START_TEST(test_builtins) {
    ck_assert_str_eq(pe("select(indices, indices, ==)"), "select(indices, indices, ==)");
    ck_assert_str_eq(pe("select(a, b, !=)"), "select(a, b, !=)");
    ck_assert_str_eq(pe("select(a, b, <)"), "select(a, b, <)");
    ck_assert_str_eq(pe("select(a, b, >)"), "select(a, b, >)");
    ck_assert_str_eq(pe("select(a, b, <=)"), "select(a, b, <=)");
    ck_assert_str_eq(pe("select(a, b, >=)"), "select(a, b, >=)");
    ck_assert_str_eq(pe("select(indices, length - indices - 1, ==)"),
                     "select(indices, ((length - indices) - 1), ==)");
    ck_assert_str_eq(pe("aggregate(s, tokens)"), "aggregate(s, tokens)");
    ck_assert_str_eq(pe("aggregate(s, tokens, -1)"), "aggregate(s, tokens, (-1))");
    ck_assert_str_eq(pe("range(3)"), "range(3)");
    ck_assert_str_eq(pe("range(1, 5, 2)"), "range(1, 5, 2)");
    ck_assert_str_eq(pe("zip(a, b, c)"), "zip(a, b, c)");
    ck_assert_str_eq(pe("len(l)"), "len(l)");
    ck_assert_str_eq(pe("round(x / 2)"), "round((x / 2))");
    ck_assert_str_eq(pe("indicator(tokens == \"a\")"), "indicator((tokens == \"a\"))");
    ck_assert_int_eq((int)diags.count, 0);
}
END_TEST

START_TEST(test_builtin_kinds) {
    AstExpr *e;
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "select(k, q, <=)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_SELECT);
    ck_assert_int_eq(e->u.select.cmp, AST_LE);
    ck_assert_str_eq(e->u.select.keys->u.name, "k");
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "aggregate(s, v)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_AGGREGATE);
    ck_assert_ptr_null(e->u.aggregate.default_value);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "round(x)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_UNARY);
    ck_assert_int_eq(e->u.unary.op, AST_ROUND);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "range(1, 2)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_RANGE);
    ck_assert_uint_eq(e->u.list.count, 2);
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "len(x)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_LEN);
}
END_TEST

START_TEST(test_builtin_words_as_names) {
    /* Keywords only when followed by `(`, with any whitespace before it. */
    ck_assert_str_eq(pe("select (a, b, ==)"), "select(a, b, ==)");
    ck_assert_str_eq(pe("len\n(x)"), "len(x)");
    ck_assert_str_eq(pe("len + range * zip"), "(len + (range * zip))");
    ck_assert_str_eq(pe("selector_width(select(a, b, ==))"), "selector_width(select(a, b, ==))");
    ck_assert_str_eq(pe("[round, indicator, aggregate, select]"), "[round, indicator, aggregate, select]");
    ck_assert_str_eq(pe("lengths(x)"), "lengths(x)");
}
END_TEST

START_TEST(test_range_arity) {
    ck_assert_str_eq(pe("range(1, 2, 3, 4)"), "ERROR");
    ck_assert_str_eq(diag_text(), "1:1: error: range() takes 1 to 3 arguments, not 4\n");
}
END_TEST

START_TEST(test_postfix) {
    ck_assert_str_eq(pe("a[0]"), "a[0]");
    ck_assert_str_eq(pe("a[0][1]"), "a[0][1]");
    ck_assert_str_eq(pe("f()"), "f()");
    ck_assert_str_eq(pe("f(x, y + 1)"), "f(x, (y + 1))");
    ck_assert_str_eq(pe("f(x)(y)"), "f(x)(y)");
    ck_assert_str_eq(pe("f(x)[2]"), "f(x)[2]");
    ck_assert_str_eq(pe("{\"a\": 1}[tokens]"), "{\"a\": 1}[tokens]");
    ck_assert_str_eq(pe("[1, 2][i]"), "[1, 2][i]");
    ck_assert_str_eq(pe("(a + b)[0]"), "(a + b)[0]");
    ck_assert_str_eq(pe("round(x)[0]"), "round(x)[0]");
    ck_assert_str_eq(pe("a[i + 1]"), "a[(i + 1)]");
    AstExpr *e;
    ck_assert(parse_expression(&arena, source_from_string(&arena, "t", "f(x)(y)"), &e, &diags));
    ck_assert_int_eq(e->kind, AST_CALL);
    ck_assert_int_eq(e->u.call.callee->kind, AST_CALL);
    ck_assert_uint_eq(e->u.call.args.count, 1);
}
END_TEST

/* ---- precedence ---- */

START_TEST(test_precedence_examples) {
    /* The cases spelled out in the grammar. */
    ck_assert_str_eq(pe("not a == b"), "((not a) == b)");
    ck_assert_str_eq(pe("-x ^ 2"), "((-x) ^ 2)");
    ck_assert_str_eq(pe("a * b % c"), "((a * b) % c)");
    ck_assert_str_eq(pe("a % b * c"), "(a % (b * c))");
    ck_assert_str_eq(pe("a or b and c"), "((a or b) and c)");
    ck_assert_str_eq(pe("a and b or c"), "((a and b) or c)");
    ck_assert_str_eq(pe("a and b if c else d"), "((a and b) if c else d)");
    ck_assert_str_eq(pe("x + 1 in l"), "((x + 1) in l)");
    ck_assert_str_eq(pe("x in l and y"), "(x in (l and y))");
    ck_assert_str_eq(pe("-a + b"), "((-a) + b)");
    ck_assert_str_eq(pe("-a * b"), "((-a) * b)");
    ck_assert_str_eq(pe("not a and b"), "((not a) and b)");
}
END_TEST

START_TEST(test_precedence_associativity) {
    ck_assert_str_eq(pe("a - b - c"), "((a - b) - c)");
    ck_assert_str_eq(pe("a / b / c"), "((a / b) / c)");
    ck_assert_str_eq(pe("a % b % c"), "((a % b) % c)");
    ck_assert_str_eq(pe("a ^ b ^ c"), "((a ^ b) ^ c)");
    ck_assert_str_eq(pe("a < b < c"), "((a < b) < c)");
    ck_assert_str_eq(pe("a in b in c"), "((a in b) in c)");
    ck_assert_str_eq(pe("a if b else c if d else e"), "(a if b else (c if d else e))");
    ck_assert_str_eq(pe("(a if b else c) if d else e"), "((a if b else c) if d else e)");
    ck_assert_str_eq(pe("a if b if c else d else e"), "(a if (b if c else d) else e)");
    ck_assert_str_eq(pe("a if x in l else b"), "(a if (x in l) else b)");
}
END_TEST

START_TEST(test_precedence_prefix) {
    ck_assert_str_eq(pe("- - a"), "(-(-a))");
    ck_assert_str_eq(pe("not not a"), "(not (not a))");
    ck_assert_str_eq(pe("-+a"), "(-(+a))");
    ck_assert_str_eq(pe("not -a"), "(not (-a))");
    ck_assert_str_eq(pe("-a[0]"), "(-a[0])");
    ck_assert_str_eq(pe("-f(x)"), "(-f(x))");
    ck_assert_str_eq(pe("not f(x)[1]"), "(not f(x)[1])");
    ck_assert_str_eq(pe("a ^ -b"), "(a ^ (-b))");
    ck_assert_str_eq(pe("a - -b"), "(a - (-b))");
    ck_assert_str_eq(pe("a == not b"), "(a == (not b))");
    ck_assert_str_eq(pe("-round(x)"), "(-round(x))");
    ck_assert_str_eq(pe("round(x) ^ 2"), "(round(x) ^ 2)");
    ck_assert_str_eq(pe("indicator(a) * 2 + 1"), "((indicator(a) * 2) + 1)");
    ck_assert_str_eq(pe("-x if c else y"), "((-x) if c else y)");
    ck_assert_str_eq(pe("not x in l"), "((not x) in l)");
    ck_assert_str_eq(pe("(a + b) * c"), "((a + b) * c)");
}
END_TEST

/* The binary operators with their level (smaller binds tighter); all are left-associative. */
static const struct { const char *op; int level; } binops[] = {
    {"^", 5}, {"*", 6}, {"/", 6}, {"%", 7}, {"+", 8}, {"-", 8}, {"==", 9}, {"!=", 9},
    {"<", 9}, {">", 9}, {"<=", 9}, {">=", 9}, {"and", 10}, {"or", 10}, {"in", 12},
};
enum { N_BINOPS = sizeof binops / sizeof binops[0] };

/* `a OP1 b OP2 c` for every ordered pair of binary operators. */
START_TEST(test_precedence_pairs) {
    int i = _i / N_BINOPS, j = _i % N_BINOPS;
    char src[64], want[80];
    snprintf(src, sizeof src, "a %s b %s c", binops[i].op, binops[j].op);
    if (binops[i].level <= binops[j].level)
        snprintf(want, sizeof want, "((a %s b) %s c)", binops[i].op, binops[j].op);
    else
        snprintf(want, sizeof want, "(a %s (b %s c))", binops[i].op, binops[j].op);
    ck_assert_str_eq(pe(src), want);
}
END_TEST

/* Every binary operator against the prefix operators and the conditional. */
START_TEST(test_precedence_with_unary_and_cond) {
    const char *op = binops[_i].op;
    int level = binops[_i].level;
    char src[64], want[80];
    snprintf(src, sizeof src, "-a %s b", op);
    snprintf(want, sizeof want, "((-a) %s b)", op);
    ck_assert_str_eq(pe(src), want);
    snprintf(src, sizeof src, "not a %s b", op);
    snprintf(want, sizeof want, "((not a) %s b)", op);
    ck_assert_str_eq(pe(src), want);
    snprintf(src, sizeof src, "a %s -b", op);
    snprintf(want, sizeof want, "(a %s (-b))", op);
    ck_assert_str_eq(pe(src), want);
    snprintf(src, sizeof src, "a %s b[0]", op);
    snprintf(want, sizeof want, "(a %s b[0])", op);
    ck_assert_str_eq(pe(src), want);
    /* then-branch and else-branch of a conditional */
    snprintf(src, sizeof src, "a %s b if c else d", op);
    if (level < 11) snprintf(want, sizeof want, "((a %s b) if c else d)", op);
    else snprintf(want, sizeof want, "(a %s (b if c else d))", op);
    ck_assert_str_eq(pe(src), want);
    snprintf(src, sizeof src, "a if c else b %s d", op);
    if (level < 11) snprintf(want, sizeof want, "(a if c else (b %s d))", op);
    else snprintf(want, sizeof want, "((a if c else b) %s d)", op);
    ck_assert_str_eq(pe(src), want);
}
END_TEST

/* ---- statements ---- */

START_TEST(test_statements) {
    AstProgram p;
    const char *src =
        "# a comment\n"
        "x = 1;  # trailing\n"
        "a, b = 1, 2;\n"
        "q, r = f(x);\n"
        "x + 1;\n"
        "load \"lib.rasp\";\n";
    ck_assert_str_eq(pp(src, &p), "x = 1;\na, b = 1, 2;\nq, r = f(x);\n(x + 1);\nload \"lib.rasp\";\n");
    ck_assert_uint_eq(p.stmts.count, 5);
    ck_assert_int_eq(p.stmts.items[0]->kind, AST_STMT_ASSIGN);
    ck_assert_int_eq(p.stmts.items[0]->loc.line, 2);
    ck_assert_int_eq(p.stmts.items[1]->u.assign.targets.count, 2);
    ck_assert_int_eq(p.stmts.items[1]->u.assign.targets.locs[1].col, 4);
    ck_assert_uint_eq(p.stmts.items[2]->u.assign.values.count, 1);
    ck_assert_int_eq(p.stmts.items[3]->kind, AST_STMT_EXPR);
    ck_assert_int_eq(p.stmts.items[4]->kind, AST_STMT_LOAD);
    ck_assert_str_eq(p.stmts.items[4]->u.load.path, "lib.rasp");
    ck_assert_ptr_eq(p.file, p.stmts.items[0]->loc.file);
    ck_assert_int_eq((int)diags.count, 0);
}
END_TEST

START_TEST(test_empty_program) {
    AstProgram p;
    ck_assert_str_eq(pp("", &p), "");
    ck_assert_uint_eq(p.stmts.count, 0);
    ck_assert_str_eq(pp("  # only a comment\n\n", &p), "");
}
END_TEST

START_TEST(test_def) {
    AstProgram p;
    const char *src =
        "def match2(p) {\n"
        "    r = tokens % p;\n"
        "    return 1 if r > 0 else 0;\n"
        "}\n"
        "def none() { return 1, 2; }\n"
        "def two(a, b) {\n"
        "    for i in range(3) { a = a + i; }\n"
        "    def inner(x) { return x; }\n"
        "    return inner(a), b;\n"
        "}\n";
    ck_assert_str_eq(pp(src, &p),
                     "def match2(p) {\n"
                     "    r = (tokens % p);\n"
                     "    return (1 if (r > 0) else 0);\n"
                     "}\n"
                     "def none() {\n"
                     "    return 1, 2;\n"
                     "}\n"
                     "def two(a, b) {\n"
                     "    for i in range(3) {\n"
                     "        a = (a + i);\n"
                     "    }\n"
                     "    def inner(x) {\n"
                     "        return x;\n"
                     "    }\n"
                     "    return inner(a), b;\n"
                     "}\n");
    AstStmt *d = p.stmts.items[0];
    ck_assert_int_eq(d->kind, AST_STMT_DEF);
    ck_assert_str_eq(d->u.def.name, "match2");
    ck_assert_uint_eq(d->u.def.params.count, 1);
    ck_assert_uint_eq(d->u.def.body.count, 1);
    ck_assert_uint_eq(d->u.def.returns.count, 1);
    ck_assert_uint_eq(p.stmts.items[1]->u.def.params.count, 0);
    ck_assert_uint_eq(p.stmts.items[1]->u.def.returns.count, 2);
    ck_assert_int_eq(p.stmts.items[2]->u.def.params.locs[1].line, 6);
    ck_assert_int_eq(p.stmts.items[2]->u.def.params.locs[1].col, 12);
}
END_TEST

START_TEST(test_def_requires_return) {
    ck_assert_str_eq(pp("def f(x) { y = x; }\n", NULL), "ERROR");
    ck_assert_str_eq(diag_text(), "1:19: error: syntax error, unexpected '}'\n");
}
END_TEST

START_TEST(test_for) {
    AstProgram p;
    const char *src =
        "for r in range(2) {\n"
        "    for c, d in zip(a, b) {\n"
        "        product = product + (entry(r, c) if indices == 2 * r + c else 0);\n"
        "    }\n"
        "}\n"
        "for x in [] { }\n"
        "for k in {\"a\": 1} { y = {}; }\n";
    ck_assert_str_eq(pp(src, &p),
                     "for r in range(2) {\n"
                     "    for c, d in zip(a, b) {\n"
                     "        product = (product + (entry(r, c) if (indices == ((2 * r) + c)) else 0));\n"
                     "    }\n"
                     "}\n"
                     "for x in [] {\n"
                     "}\n"
                     "for k in {\"a\": 1} {\n"
                     "    y = {};\n"
                     "}\n");
    AstStmt *inner = p.stmts.items[0]->u.for_loop.body.items[0];
    ck_assert_int_eq(inner->kind, AST_STMT_FOR);
    ck_assert_uint_eq(inner->u.for_loop.names.count, 2);
    ck_assert_int_eq(inner->loc.line, 2);
    ck_assert_int_eq(inner->loc.col, 5);
}
END_TEST

START_TEST(test_locations) {
    AstProgram p;
    pp("x = 1;\n\tfoo = -a + b * c;\n", &p);
    AstStmt *s = p.stmts.items[1];
    ck_assert_int_eq(s->loc.line, 2);
    ck_assert_int_eq(s->loc.col, 2); /* a tab is one column */
    AstExpr *e = s->u.assign.values.items[0];
    ck_assert_int_eq(e->kind, AST_BINARY);
    ck_assert_int_eq(e->loc.col, 8); /* first token: the `-` */
    ck_assert_int_eq(e->u.binary.rhs->loc.col, 13);
    ck_assert_int_eq(e->u.binary.rhs->u.binary.rhs->loc.col, 17);
    ck_assert_str_eq(e->loc.file->name, "<test>");
}
END_TEST

START_TEST(test_reserved_words) {
    ck_assert_str_eq(pp("def = 1;\n", NULL), "ERROR");
    ck_assert_str_eq(diag_text(), "1:5: error: syntax error, unexpected '=', expecting identifier\n");
    ck_assert_str_eq(pe("in"), "ERROR");
    ck_assert_str_eq(pe("return"), "ERROR");
    ck_assert_str_eq(pe("if"), "ERROR");
}
END_TEST

/* ---- REPL commands ---- */

START_TEST(test_repl_commands) {
    AstProgram p;
    const char *src =
        "set example \"abc\"\n"
        "set s-op example [1, 2]\n"
        "set selector example \"ab\";\n"
        "show example\n"
        "show s-op example;\n"
        "full seq display on\n"
        "full seq display off;\n"
        "examples on\n"
        "s-op examples off\n"
        "selector examples on;\n"
        "draw(x);\n"
        "draw(x, \"abc\");\n"
        "exit\n"
        "exit();\n"
        "quit\n"
        "quit()\n"
        "y = 1;\n";
    ck_assert_str_eq(pp(src, &p),
                     "# REPL: set example\n# REPL: set s-op example\n# REPL: set selector example\n"
                     "# REPL: show example\n# REPL: show s-op example\n# REPL: full seq display on\n"
                     "# REPL: full seq display off\n# REPL: examples on\n# REPL: s-op examples off\n"
                     "# REPL: selector examples on\n# REPL: draw\n# REPL: draw\n# REPL: exit\n"
                     "# REPL: exit()\n# REPL: quit\n# REPL: quit()\ny = 1;\n");
    ck_assert_uint_eq(diags.count, 16);
    ck_assert_uint_eq(diags.error_count, 0);
    ck_assert_int_eq(diags.items[0].severity, DIAG_WARNING);
    ck_assert_str_eq(diags.items[0].message, "REPL command ignored: set example");
    ck_assert_int_eq(diags.items[5].loc.line, 6);
    ck_assert_int_eq(diags.items[5].loc.col, 1);
    ck_assert_int_eq(p.stmts.items[0]->kind, AST_STMT_REPL);
    ck_assert_str_eq(p.stmts.items[0]->u.repl.text, "set example");
}
END_TEST

START_TEST(test_set_example_ends_at_newline) {
    AstProgram p;
    /* The expression of `set example` may span lines inside brackets, ends at a newline
     * outside them, and the next statement may start with an operator-like token. */
    ck_assert_str_eq(pp("set example [1,\n  2]\n-x;\nset example \"a\"", &p),
                     "# REPL: set example\n(-x);\n# REPL: set example\n");
    ck_assert_str_eq(pp("set    example\t\"ab\" ;  x = 1;", &p), "# REPL: set example\nx = 1;\n");
}
END_TEST

START_TEST(test_repl_words_as_names) {
    /* Outside statement-start position, or when followed by more, REPL words are names. */
    ck_assert_str_eq(pp("exit = 1; quit = exit + 1; y = exit; draw = 2; z = draw(1);\n"
                        "set = 1; example = set; show = [examples, on, off];\n"
                        "x = {exit: 1};\n",
                        NULL),
                     "exit = 1;\nquit = (exit + 1);\ny = exit;\ndraw = 2;\nz = draw(1);\n"
                     "set = 1;\nexample = set;\nshow = [examples, on, off];\nx = {exit: 1};\n");
    ck_assert_uint_eq(diags.count, 0);
    ck_assert_str_eq(pp("exit(1);\n", NULL), "exit(1);\n");
    /* A single expression never holds a REPL command. */
    ck_assert_str_eq(pe("exit"), "exit");
    ck_assert_str_eq(pe("draw(1)"), "draw(1)");
    ck_assert_str_eq(pe("quit()"), "quit()");
    ck_assert_uint_eq(diags.count, 0);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_several_errors) {
    const char *src =
        "x = 1 +;\n"
        "y = (2;\n"
        "z = 3;\n"
        "def f( { x; }\n"
        "w = ];\n"
        "ok = 1;\n";
    ck_assert_str_eq(pp(src, NULL), "ERROR");
    ck_assert_str_eq(diag_text(),
                     "1:8: error: syntax error, unexpected ';', expecting expression\n"
                     "2:7: error: syntax error, unexpected ';', expecting operator or ')'\n"
                     "4:8: error: syntax error, unexpected '{', expecting identifier or ')'\n"
                     "5:5: error: syntax error, unexpected ']', expecting expression\n");
}
END_TEST

START_TEST(test_recovery_in_blocks) {
    const char *src =
        "def f(x) {\n"
        "  y = ;\n"
        "  z = 1 +;\n"
        "  return x;\n"
        "}\n"
        "a = f(1);\n"
        "for i in l { b = ); }\n"
        "c = 2;\n"
        "d = ];\n";
    ck_assert_str_eq(pp(src, NULL), "ERROR");
    ck_assert_str_eq(diag_text(),
                     "2:7: error: syntax error, unexpected ';', expecting expression\n"
                     "3:10: error: syntax error, unexpected ';', expecting expression\n"
                     "7:18: error: syntax error, unexpected ')', expecting expression\n"
                     "9:5: error: syntax error, unexpected ']', expecting expression\n");
}
END_TEST

START_TEST(test_error_messages) {
    ck_assert_str_eq(pp("x = f(1,);\n", NULL), "ERROR");
    ck_assert_str_eq(pp("x = 1", NULL), "ERROR");
    ck_assert_str_eq(pp("for x in l { y = 1;\n", NULL), "ERROR");
    ck_assert_str_eq(pp("x = select(a, b, =);\n", NULL), "ERROR");
    ck_assert_str_eq(pp("a b;\n", NULL), "ERROR");
    ck_assert_str_eq(diag_text(),
                     "1:9: error: syntax error, unexpected ')', expecting expression\n"
                     "1:6: error: syntax error, unexpected end of file, expecting operator, ';' or ','\n"
                     "2:1: error: syntax error, unexpected end of file\n"
                     "1:18: error: syntax error, unexpected '='\n"
                     "1:3: error: syntax error, unexpected identifier, expecting operator, ';', '=' or ','\n");
}
END_TEST

START_TEST(test_lexical_errors_fail_the_parse) {
    ck_assert_str_eq(pp("x = 1 @ 2;\ny = \"abc;\nz = 99999999999999999999;\n", NULL), "ERROR");
    ck_assert_str_eq(diag_text(),
                     "1:7: error: unexpected character '@'\n"
                     "1:9: error: syntax error, unexpected integer, expecting operator, ';' or ','\n"
                     "2:5: error: unterminated string literal\n"
                     "3:1: error: syntax error, unexpected identifier, expecting operator, ';' or ','\n"
                     "3:5: error: integer literal 99999999999999999999 is too large (the maximum is 9223372036854775807)\n");
    /* A lexical error alone (the token sequence itself is fine) still fails. */
    ck_assert_str_eq(pe("18446744073709551616"), "ERROR");
}
END_TEST

START_TEST(test_deep_nesting) {
    size_t n = 20000;
    char *src = arena_alloc(&arena, 2 * n + 8);
    memset(src, '(', n);
    src[n] = '1';
    memset(src + n + 1, ')', n);
    ck_assert_str_eq(pe(src), "ERROR");
    ck_assert_int_eq(diags.error_count, 1);
    ck_assert_str_eq(diags.items[0].message, "memory exhausted (input nested too deeply)");

    /* A left-associative chain is not bounded by bison's stack: the depth limit catches it. */
    char *chain = arena_alloc(&arena, 3 * n + 8);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += (size_t)sprintf(chain + len, "1+");
    chain[len++] = '1';
    ck_assert_str_eq(pe(chain), "ERROR");
    ck_assert_int_eq(diags.error_count, 2);
    ck_assert_str_eq(diags.items[1].message, "expression nested too deeply (more than 2000 levels)");

    /* Just under the limit is fine. */
    chain[0] = 'a';
    len = 1;
    for (int i = 1; i < AST_MAX_EXPR_DEPTH - 2; i++) len += (size_t)sprintf(chain + len, "[0]");
    chain[len] = '\0';
    ck_assert_str_ne(pe(chain), "ERROR");
}
END_TEST

START_TEST(test_garbage_does_not_crash) {
    /* Random bytes and random token soup; the contract is: no crash, and failure reported. */
    static const char *const pieces[] = {"(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "==",
        "+", "-", "not", "if", "else", "in", "for", "def", "return", "x", "1", "2.5", "\"s\"",
        "select(", "aggregate(", "set example", "exit", "\n", " ", "#c\n", "draw(", "\"", "\0"};
    unsigned seed = 12345;
    for (int round = 0; round < 300; round++) {
        char buf[256];
        size_t len = 0;
        while (len < 200) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(p);
            memcpy(buf + len, p, pl);
            len += pl;
            buf[len++] = ' ';
        }
        buf[len] = '\0';
        AstProgram prog;
        AstExpr *e;
        parse_program(&arena, source_from_string(&arena, "g", buf), &prog, &diags);
        parse_expression(&arena, source_from_string(&arena, "g", buf), &e, &diags);
        for (size_t i = 0; i < 200; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(seed >> 16);
        }
        SourceFile raw = {"raw", buf, 200};
        parse_program(&arena, &raw, &prog, &diags);
    }
    ck_assert_uint_gt(diags.error_count, 300);
}
END_TEST

START_TEST(test_embedded_nul) {
    static const char text[] = "x = 1;\0y = 2;";
    SourceFile f = {"nul", text, sizeof text - 1};
    AstProgram p;
    ck_assert(!parse_program(&arena, &f, &p, &diags));
    ck_assert_str_eq(diag_text(), "1:7: error: unexpected character '\\x00'\n");
}
END_TEST

/* Every input that once crashed the fuzzer is kept in tests/fuzz_regressions/parser/. */
START_TEST(test_fuzz_regressions) {
    char dir[1024];
    const char *slash = strrchr(__FILE__, '/');
    snprintf(dir, sizeof dir, "%.*sfuzz_regressions/parser", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int files = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        const char *why = NULL;
        SourceFile *f = source_read_file(&arena, path, &why);
        ck_assert_msg(f != NULL, "%s: %s", path, why);
        AstProgram p;
        AstExpr *e;
        parse_program(&arena, f, &p, &diags);
        parse_expression(&arena, f, &e, &diags);
        files++;
    }
    closedir(d);
    ck_assert_int_gt(files, 0);
}
END_TEST

static Suite *parser_suite(void) {
    Suite *s = suite_create("parser");
    TCase *tc = tcase_create("parser");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_literals);
    tcase_add_test(tc, test_literal_values);
    tcase_add_test(tc, test_input_literals);
    tcase_add_test(tc, test_empty_expression_is_error);
    tcase_add_test(tc, test_lists_and_dicts);
    tcase_add_test(tc, test_comprehensions);
    tcase_add_test(tc, test_builtins);
    tcase_add_test(tc, test_builtin_kinds);
    tcase_add_test(tc, test_builtin_words_as_names);
    tcase_add_test(tc, test_range_arity);
    tcase_add_test(tc, test_postfix);
    tcase_add_test(tc, test_precedence_examples);
    tcase_add_test(tc, test_precedence_associativity);
    tcase_add_test(tc, test_precedence_prefix);
    tcase_add_loop_test(tc, test_precedence_pairs, 0, N_BINOPS * N_BINOPS);
    tcase_add_loop_test(tc, test_precedence_with_unary_and_cond, 0, N_BINOPS);
    tcase_add_test(tc, test_statements);
    tcase_add_test(tc, test_empty_program);
    tcase_add_test(tc, test_def);
    tcase_add_test(tc, test_def_requires_return);
    tcase_add_test(tc, test_for);
    tcase_add_test(tc, test_locations);
    tcase_add_test(tc, test_reserved_words);
    tcase_add_test(tc, test_repl_commands);
    tcase_add_test(tc, test_set_example_ends_at_newline);
    tcase_add_test(tc, test_repl_words_as_names);
    tcase_add_test(tc, test_several_errors);
    tcase_add_test(tc, test_recovery_in_blocks);
    tcase_add_test(tc, test_error_messages);
    tcase_add_test(tc, test_lexical_errors_fail_the_parse);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_garbage_does_not_crash);
    tcase_add_test(tc, test_embedded_nul);
    tcase_add_test(tc, test_fuzz_regressions);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(parser_suite());
}
