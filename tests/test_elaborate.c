/* The elaborator: every rule of the meta-language, checked by evaluating the s-op `out` of a
 * small program with the reference evaluator. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_main.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "ir/input.h"
#include "ir/session.h"
#include "parser/parser.h"

typedef struct Fix {
    Arena arena;
    IrGraph g;
    DiagList diags;
    ElabResult r;
    bool ok;
} Fix;

static Fix *elab_opts(const char *src, const ElabOptions *opt) {
    Fix *f = calloc(1, sizeof *f);
    arena_init(&f->arena);
    ir_graph_init(&f->g, &f->arena);
    diag_init(&f->diags, &f->arena);
    f->ok = rasp_load_program(&f->g, NULL, src, "t.rasp", opt, &f->r, &f->diags);
    return f;
}

static Fix *elab(const char *src) { return elab_opts(src, NULL); }

static void fix_free(Fix *f) {
    arena_free(&f->arena);
    free(f);
}

/* The first error as "LINE:COL: message", or "" when there is none. */
static const char *first_error(Fix *f) {
    for (size_t i = 0; i < f->diags.count; i++) {
        const Diag *d = &f->diags.items[i];
        if (d->severity == DIAG_ERROR)
            return arena_printf(&f->arena, "%d:%d: %s", d->loc.line, d->loc.col, d->message);
    }
    return "";
}

/* Evaluates s-op `name` on `input`: its JSON, or "ERR: message". */
static const char *eval_on(Fix *f, const char *name, const char *input) {
    IrNode *n = elab_find_output(&f->r, name);
    if (!n) return "ERR: no such output";
    Value *atoms, *res;
    size_t len;
    char msg[256];
    IrEvalError err;
    if (!input_parse(&f->arena, input, &atoms, &len, msg, sizeof msg)) return "ERR: bad input";
    if (!ir_eval(&f->g, n, atoms, len, &f->arena, &res, &err))
        return arena_printf(&f->arena, "ERR: %s", err.message);
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    fputc('[', m);
    for (size_t i = 0; i < len; i++) {
        if (i) fputs(", ", m);
        value_print_json(m, res[i]);
    }
    fputc(']', m);
    fclose(m);
    const char *s = arena_strdup(&f->arena, buf);
    free(buf);
    return s;
}

/* Elaborates src (which must succeed) and evaluates `out` on input. */
#define CHECK_OUT(src, input, want)                                                 \
    do {                                                                            \
        Fix *f_ = elab(src);                                                        \
        ck_assert_msg(f_->ok, "elaboration failed: %s", first_error(f_));           \
        ck_assert_str_eq(eval_on(f_, "out", input), want);                          \
        fix_free(f_);                                                               \
    } while (0)

/* Elaborates src, which must fail with this first error. */
#define CHECK_ERR(src, want)                                                        \
    do {                                                                            \
        Fix *f_ = elab(src);                                                        \
        ck_assert(!f_->ok);                                                         \
        ck_assert_str_eq(first_error(f_), want);                                    \
        fix_free(f_);                                                               \
    } while (0)

START_TEST(test_basic_sops) {
    CHECK_OUT("out = indices + 1;", "abc", "[1, 2, 3]");
    CHECK_OUT("out = length - indices - 1;", "abcd", "[3, 2, 1, 0]");
    CHECK_OUT("out = aggregate(select(indices, length - indices - 1, ==), tokens);", "abc",
              "[\"c\", \"b\", \"a\"]");
    CHECK_OUT("tokens = tokens_int; out = tokens * 2;", "[1, -2]", "[2, -4]");
    CHECK_OUT("out = -indices;", "ab", "[0, -1]");
    CHECK_OUT("out = round(indices / 2);", "abcd", "[0, 0, 1, 2]"); /* ties to even */
    CHECK_OUT("out = indicator(tokens == \"a\");", "aba", "[1, 0, 1]");
}
END_TEST

START_TEST(test_scoping) {
    /* assignments in a function write its own scope */
    CHECK_OUT("x = 1; def f() { x = 2; return x; } y = f(); out = indices + x + 10 * y;", "ab",
              "[21, 22]");
    /* free names are looked up when the function runs (Python semantics) */
    CHECK_OUT("n = 1; def f(s) { return s + n; } n = 5; out = f(indices);", "ab", "[5, 6]");
    /* parameters shadow globals without changing them */
    CHECK_OUT("s = 100; def f(s) { return s + 1; } out = f(indices) + s;", "a", "[101]");
    /* a function may shadow a prelude name locally */
    CHECK_OUT("def f(a) { max = a + 1; return max; } out = f(indices);", "ab", "[1, 2]");
}
END_TEST

START_TEST(test_closures_and_recursion) {
    CHECK_OUT("def mk(n) { def add(s) { return s + n; } return add; } add3 = mk(3);"
              "out = add3(indices);", "ab", "[3, 4]");
    CHECK_OUT("def fact(n) { return 1 if n == 0 else n * fact(n - 1); } out = indices + fact(4);",
              "ab", "[24, 25]");
    CHECK_ERR("def f(n) {\n return f(n + 1);\n}\nx = f(0);",
              "2:9: recursion too deep in call to f (limit 200)");
    CHECK_ERR("def f(a, b) { return a; }\nx = f(1);", "2:5: wrong number of arguments for f: expected 2, got 1");
}
END_TEST

START_TEST(test_tuples) {
    CHECK_OUT("def two(s) { return s + 1, s + 2; } a, b = two(indices); out = a * b;", "ab", "[2, 6]");
    CHECK_OUT("def two(s) { return s + 1, s + 2; } t = two(indices); out = t[1];", "ab", "[2, 3]");
    CHECK_OUT("a, b = 1, 2; out = indices + 10 * a + b;", "a", "[12]");
    CHECK_OUT("t = 1, 2; out = indices + len(t);", "a", "[2]");
    CHECK_ERR("a, b = 1, 2, 3;", "1:1: expected 2 values to unpack, got list [1, 2, 3]");
}
END_TEST

START_TEST(test_loops) {
    /* top-level loop variables persist, as in Python */
    CHECK_OUT("total = 0; for i in range(4) { total = total + i; } out = indices + total + i;", "ab",
              "[9, 10]");
    CHECK_OUT("s = 0; for a, b in zip([1, 2], [10, 20]) { s = s + a * b; } out = indices + s;", "a",
              "[50]");
    CHECK_OUT("s = 0; for k in {\"x\": 1, \"y\": 2} { s = s + 1; } out = indices + s;", "a", "[2]");
    CHECK_OUT("acc = indices; for i in range(3) { acc = acc + i; } out = acc;", "a", "[3]");
    CHECK_OUT("out = indices + len(range(10, 0, -3));", "a", "[4]");
    CHECK_ERR("for x in 5 { y = 1; }", "1:10: for loop needs a list or dict to iterate over, got 5");
    CHECK_ERR("x = range(1.5);", "1:11: range expects integers, got 1.5");
}
END_TEST

START_TEST(test_comprehensions) {
    CHECK_OUT("l = [x * 2 for x in range(3)]; out = indices + l[2];", "a", "[4]");
    CHECK_OUT("d = {k: k * 10 for k in range(3)}; out = indices + d[2];", "a", "[20]");
    CHECK_OUT("l = [a + b for a, b in zip([1, 2], [3, 4])]; out = indices + l[1];", "a", "[6]");
    /* comprehension names do not leak */
    CHECK_ERR("l = [q for q in [1]];\nout = indices + q;", "2:17: undefined variable 'q'");
    /* a list of s-ops */
    CHECK_OUT("parts = [indices + i for i in range(3)]; out = parts[0] + parts[2];", "ab", "[2, 4]");
}
END_TEST

START_TEST(test_indexing) {
    CHECK_OUT("d = {\"a\": 1, \"b\": 2}; out = d[tokens];", "ab", "[1, 2]");
    CHECK_OUT("l = [10, 20, 30]; out = l[indices];", "abc", "[10, 20, 30]");
    CHECK_OUT("l = [10, 20, 30]; out = indices + l[-1];", "a", "[30]");
    CHECK_OUT("s = \"xyz\"; out = tokens + s[1];", "a", "[\"ay\"]");
    CHECK_OUT("out = tokens[0];", "xyz", "[\"x\", \"x\", \"x\"]");
    CHECK_OUT("out = tokens[-1];", "xyz", "[\"z\", \"z\", \"z\"]");
    CHECK_OUT("d = {1: \"one\", 2: \"two\"}; out = tokens + d[2];", "a", "[\"atwo\"]");
    CHECK_OUT("d = {\"a\": 1, \"a\": 5}; out = indices + d[\"a\"];", "a", "[5]"); /* later value wins */
    CHECK_ERR("l = [1];\nx = l[1];", "2:7: index 1 out of range for list of length 1");
    CHECK_ERR("d = {\"a\": 1};\nx = d[\"b\"];", "2:7: key \"b\" not in dict");
    CHECK_ERR("x = indices[1.5];", "1:13: index into an s-op has to be an integer, got 1.5");
    CHECK_ERR("x = select(indices, indices, ==)[0];",
              "1:5: can only index into a list, dict, string or s-op, got selector (unnamed)");
    /* a missing key found by an s-op index fails when evaluated */
    Fix *f = elab("d = {\"a\": 1}; out = d[tokens];");
    ck_assert(f->ok);
    ck_assert(strncmp(eval_on(f, "out", "ab"), "ERR:", 4) == 0);
    fix_free(f);
}
END_TEST

START_TEST(test_in) {
    CHECK_OUT("out = tokens in [\"a\", \"b\"];", "abc", "[true, true, false]");
    CHECK_OUT("x = 2 in [1, 2]; y = 3 in [1, 2]; out = indices + 10 * x + y;", "a", "[10]");
    CHECK_OUT("out = \"a\" in tokens;", "bab", "[true, true, true]");
    CHECK_OUT("out = \"a\" in tokens;", "bbb", "[false, false, false]");
    CHECK_ERR("x = tokens in 3;", "1:5: \"s-op in X\" expects X to be a list of atoms, got 3");
}
END_TEST

START_TEST(test_conditional) {
    /* an atom condition evaluates only the branch taken */
    CHECK_OUT("def f(n) { return 0 if n == 0 else f(n - 1); } out = indices + f(3);", "a", "[0]");
    CHECK_OUT("out = indices if True else undefined_name;", "ab", "[0, 1]");
    CHECK_OUT("out = undefined_name if 0 else indices;", "ab", "[0, 1]");
    /* an s-op condition builds a map of both branches */
    CHECK_OUT("out = \"x\" if indices == 0 else tokens;", "ab", "[\"x\", \"b\"]");
    CHECK_ERR("x = 1 if select(indices, indices, ==) else 2;",
              "1:10: the condition of 'if' cannot be a selector");
}
END_TEST

START_TEST(test_select_aggregate) {
    CHECK_OUT("out = aggregate(select(indices, 100, ==), indices);", "ab", "[0, 0]");
    CHECK_OUT("out = aggregate(select(indices, 100, ==), tokens, \"z\");", "ab", "[\"z\", \"z\"]");
    CHECK_OUT("out = aggregate(select(indices, 0, ==), 7);", "ab", "[7, 7]");
    CHECK_OUT("out = aggregate(select(indices, indices, <=), indices);", "abc", "[0, 0.5, 1.0]");
    /* select(keys, queries, <) selects key < query */
    CHECK_OUT("out = selector_width(select(indices, indices, <));", "abc", "[0, 1, 2]");
    CHECK_OUT("out = selector_width(select(indices, indices, >=));", "abc", "[3, 2, 1]");
    CHECK_ERR("x = aggregate(tokens, indices);",
              "1:15: aggregate expects a selector first, got s-op tokens");
    CHECK_ERR("x = aggregate(select(indices, 0, ==), indices, indices);",
              "1:48: the default of aggregate must be an atom, got s-op indices");
    CHECK_ERR("x = selector_width(indices);", "1:5: selector_width expects one selector, got s-op indices");
}
END_TEST

START_TEST(test_logic) {
    CHECK_OUT("s = select(indices, 0, ==) or select(indices, 1, ==); out = selector_width(s);", "abc",
              "[2, 2, 2]");
    CHECK_OUT("out = selector_width(not select(indices, 0, ==));", "abc", "[2, 2, 2]");
    CHECK_OUT("out = selector_width(select(indices, indices, <=) and select(indices, 0, !=));",
              "abc", "[0, 1, 2]");
    CHECK_OUT("out = (indices > 0) and (indices < 2);", "abc", "[false, true, false]");
    CHECK_OUT("out = indices or 5;", "ab", "[5, 1]"); /* Python: returns an operand */
    CHECK_OUT("out = not (indices > 0);", "ab", "[true, false]");
    CHECK_OUT("x = 0 and 5; y = 0 or 5; out = indices + x + y;", "a", "[5]");
    CHECK_ERR("x = select(indices, 0, ==) and indices;",
              "1:5: cannot apply 'and' between a selector and s-op");
    CHECK_ERR("x = select(indices, 0, ==) + 1;", "1:5: cannot apply '+' to selector(s)");
    CHECK_ERR("x = indicator(3);", "1:5: cannot apply 'indicator' to 3 (indicator expects an s-op)");
}
END_TEST

START_TEST(test_errors_located_and_several) {
    Fix *f = elab("a = indices;\nb = undefined_one;\nc = indices + 1;\nd = 1 + undefined_two;\n");
    ck_assert(!f->ok);
    ck_assert_uint_eq(f->diags.error_count, 2);
    ck_assert_int_eq(f->diags.items[0].loc.line, 2);
    ck_assert_int_eq(f->diags.items[1].loc.line, 4);
    ck_assert_int_eq(f->diags.items[1].loc.col, 9);
    /* statements after an error still ran */
    ck_assert_ptr_nonnull(elab_find_output(&f->r, "c"));
    fix_free(f);
    CHECK_ERR("indices = 1;", "1:1: cannot assign to reserved name 'indices'");
    CHECK_ERR("sort = 1;", "1:1: cannot assign to reserved name 'sort'");
    CHECK_ERR("x = zip([1], [1, 2]);", "1:14: zip of lists of different lengths (1 and 2)");
    CHECK_ERR("x = len(3);", "1:9: len expects a list, got 3");
    CHECK_ERR("x = 3; y = x(1);", "1:12: 3 is not callable");
}
END_TEST

START_TEST(test_work_budget) {
    ElabOptions o = {0};
    o.max_steps = 10000;
    Fix *f = elab_opts("for i in range(1000) { for j in range(1000) { x = i; } }\ny = indices;", &o);
    ck_assert(!f->ok);
    ck_assert(strstr(first_error(f), "too much work") != NULL);
    fix_free(f);
    CHECK_ERR("x = range(2000000);", "1:5: range too large (2000000 elements, limit 1000000)");
    /* comparing lists built with shared parts is exponential: it is charged, so it stops */
    f = elab_opts("l = [1]; m = [1];\nfor i in range(60) { l = [l, l]; m = [m, m]; }\nx = l == m;", &o);
    ck_assert(!f->ok);
    ck_assert(strstr(first_error(f), "3:5: program does too much work") != NULL);
    fix_free(f);
    /* building big lists over and over is charged too */
    f = elab_opts("for i in range(100) { l = range(1000); }", &o);
    ck_assert(!f->ok);
    fix_free(f);
}
END_TEST

START_TEST(test_cse) {
    Fix *f = elab("a = indices + 1;\nb = indices + 1;\nc = select(tokens, tokens, ==);\n"
                  "d = selector_width(select(tokens, tokens, ==));\ne = selector_width(c);");
    ck_assert(f->ok);
    ck_assert_ptr_eq(elab_find_output(&f->r, "a"), elab_find_output(&f->r, "b"));
    ck_assert_ptr_eq(elab_find_output(&f->r, "d"), elab_find_output(&f->r, "e"));
    ck_assert_str_eq(elab_find_output(&f->r, "a")->name, "a"); /* first name wins */
    fix_free(f);
}
END_TEST

START_TEST(test_prelude) {
    CHECK_OUT("out = count(tokens, \"a\");", "aba", "[2, 2, 2]");
    CHECK_OUT("out = contains(tokens, \"c\");", "aba", "[false, false, false]");
    CHECK_OUT("out = max(indices, 1);", "abc", "[1, 1, 2]");
    CHECK_OUT("out = min(indices, 1);", "abc", "[0, 1, 1]");
    CHECK_OUT("out = average(indices);", "abc", "[1.0, 1.0, 1.0]");
    CHECK_OUT("out = load_from_location(tokens, 1);", "xyz", "[\"y\", \"y\", \"y\"]");
    CHECK_OUT("out = shift(tokens, 1, \"_\");", "xyz", "[\"_\", \"x\", \"y\"]");
    CHECK_OUT("out = mark_first_instance(tokens, \"a\");", "baba", "[false, true, false, false]");
    CHECK_OUT("out = mark_last_instance(tokens, \"a\");", "baba", "[false, false, false, true]");
    CHECK_OUT("out = aggregate(select_from_first(tokens, \"a\"), indices);", "baba", "[1, 1, 1, 1]");
    CHECK_OUT("out = aggregate(select_from_last(tokens, \"a\"), indices);", "baba", "[3, 3, 3, 3]");
    CHECK_OUT("out = has_focus(select(tokens, \"a\", ==));", "bb", "[false, false]");
    CHECK_OUT("out = sort(tokens, tokens);", "cabca", "[\"a\", \"a\", \"b\", \"c\", \"c\"]");
    CHECK_OUT("out = aggregate(select_next_identical(tokens), indices, -1);", "abab", "[2, 3, -1, -1]");
    CHECK_OUT("out = full_s and select(indices, 0, ==); out = selector_width(out);", "ab", "[1, 1]");
    /* without the prelude its functions are not defined */
    ElabOptions o = {0};
    o.no_prelude = true;
    Fix *f = elab_opts("x = count(tokens, \"a\");", &o);
    ck_assert_str_eq(first_error(f), "1:5: undefined variable 'count'");
    fix_free(f);
}
END_TEST

START_TEST(test_result_bindings) {
    Fix *f = elab("x = indices;\nl = [1];\ny = x + 1;\nx = x * 2;\ns = select(x, y, ==);\nn = 3;");
    ck_assert(f->ok);
    ck_assert_uint_eq(f->r.count, 2); /* prelude names, lists, selectors and atoms are not outputs */
    ck_assert_str_eq(f->r.sops[0].name, "x");
    ck_assert_int_eq(f->r.sops[0].loc.line, 4);
    ck_assert_str_eq(f->r.sops[1].name, "y");
    ck_assert_str_eq(f->r.last_name, "x");
    ck_assert_ptr_eq(f->r.last_sop, elab_find_output(&f->r, "x"));
    ck_assert_ptr_null(elab_find_output(&f->r, "s"));
    fix_free(f);
}
END_TEST

START_TEST(test_application) {
    CHECK_OUT("r = aggregate(select(indices, length - indices - 1, ==), tokens); l = r(\"abc\");"
              "out = indices + len(l) + (100 if l[0] == \"c\" else 0);", "ab", "[103, 104]");
    CHECK_OUT("m = select(indices, indices, <)([1, 2]); out = indices + (1 if m[1][0] else 0);",
              "a", "[1]");
    CHECK_ERR("r = indices + 1;\nx = r([]);",
              "2:7: applying an s-op or selector expects a non-empty string or list of atoms (at most 1024), "
              "got list []");
}
END_TEST

START_TEST(test_load) {
    char dir[] = "/tmp/raspcc_test_loadXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/lib.rasp", dir);
    FILE *fp = fopen(path, "w");
    fputs("_hidden = 5;\ndef plus(s) { return s + _hidden; }\nshown = 7;\n", fp);
    fclose(fp);
    ElabOptions o = {0};
    o.base_dir = dir;
    Fix *f = elab_opts("load \"lib\";\nout = plus(indices) + shown;", &o);
    ck_assert_msg(f->ok, "%s", first_error(f));
    ck_assert_str_eq(eval_on(f, "out", "ab"), "[12, 13]");
    fix_free(f);
    f = elab_opts("load \"lib.rasp\";\nout = indices + _hidden;", &o);
    ck_assert_str_eq(first_error(f), "2:17: undefined variable '_hidden'");
    fix_free(f);
    f = elab_opts("load \"missing\";", &o);
    ck_assert(strncmp(first_error(f), "1:1: cannot load \"missing\"", 26) == 0);
    fix_free(f);
    /* a file that loads itself */
    snprintf(path, sizeof path, "%s/self.rasp", dir);
    fp = fopen(path, "w");
    fputs("load \"self\";\n", fp);
    fclose(fp);
    f = elab_opts("load \"self\";", &o);
    ck_assert_str_eq(first_error(f), "1:1: load cycle: \"self\" is already being loaded");
    fix_free(f);
    unlink(path);
    snprintf(path, sizeof path, "%s/lib.rasp", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* Elaborates src with the overrides NAME=VALUE given as {name, value, name, value, ..., NULL}. */
static Fix *elab_defs(const char *src, const char *const *defs) {
    ElabOverride ov[8];
    ElabOptions o = {0};
    while (defs[2 * o.n_overrides]) {
        ov[o.n_overrides] = (ElabOverride){defs[2 * o.n_overrides], defs[2 * o.n_overrides + 1]};
        o.n_overrides++;
    }
    o.overrides = ov;
    return elab_opts(src, &o);
}

/* The first error as "FILE:LINE:COL: message" (as raspcc prints it), or "". */
static const char *first_error_in(Fix *f) {
    for (size_t i = 0; i < f->diags.count; i++) {
        const Diag *d = &f->diags.items[i];
        char where[256];
        srcloc_format(d->loc, where, sizeof where);
        if (d->severity == DIAG_ERROR) return arena_printf(&f->arena, "%s: %s", where, d->message);
    }
    return "";
}

/* Elaborates src with overrides; out on input must be `want`, and the rewritten text `text`
 * (NULL: not checked) must elaborate, without overrides, to the same answer. */
static void check_defs(const char *src, const char *const *defs, const char *input, const char *want,
                       const char *text) {
    Fix *f = elab_defs(src, defs);
    ck_assert_msg(f->ok, "elaboration failed: %s", first_error_in(f));
    ck_assert_str_eq(eval_on(f, "out", input), want);
    if (text) ck_assert_str_eq(f->r.source, text);
    Fix *g = elab(f->r.source);
    ck_assert_msg(g->ok, "the rewritten program fails: %s", first_error_in(g));
    ck_assert_str_eq(eval_on(g, "out", input), want);
    fix_free(g);
    fix_free(f);
}

#define DEFS(...) ((const char *const[]){__VA_ARGS__, NULL})

START_TEST(test_overrides) {
    const char *prog = "N = 2;\nout = tokens_int + N;\n";
    check_defs(prog, DEFS("N", "5"), "[1, 2]", "[6, 7]", "N = 5;\nout = tokens_int + N;\n");
    /* no overrides: the text is the file's */
    Fix *f = elab(prog);
    ck_assert_str_eq(f->r.source, prog);
    fix_free(f);
    /* -DNAME=VALUE as a C compiler takes it: every kind of literal */
    check_defs("N = 2; out = tokens_int * 0 + N;", DEFS("N", "-3"), "[1]", "[-3]", NULL);
    check_defs("N = 2; out = tokens_int * 0 + N;", DEFS("N", "+2.5"), "[1]", "[2.5]", NULL);
    check_defs("S = \"x\"; out = tokens_str == S;", DEFS("S", "\"b\""), "ab", "[false, true]", NULL);
    check_defs("B = True; out = tokens_int * (1 if B else -1);", DEFS("B", "False"), "[1]", "[-1]", NULL);
    check_defs("L = [1]; out = tokens_int * 0 + len(L) + L[0];", DEFS("L", "[10, -1, [2], {}]"), "[1]", "[14]",
               NULL);
    check_defs("D = {\"a\": 1}; out = tokens_int * 0 + D[\"b\"];", DEFS("D", "{\"b\": 7, 2: [True]}"), "[1]",
               "[7]", NULL);
    /* only the first top-level assignment: later ones run as written */
    check_defs("N = 4;\nN = N + 1;\nout = tokens_int * 0 + N;", DEFS("N", "10"), "[0]", "[11]",
               "N = 10;\nN = N + 1;\nout = tokens_int * 0 + N;");
    /* the replaced expression is not evaluated */
    check_defs("N = undefined_name;\nout = indices + N;", DEFS("N", "1"), "ab", "[1, 2]", NULL);
    /* one value of several; strings and brackets hold commas and semicolons */
    check_defs("a, b, c = [\"x,y;\", 1], [1, 2], 3;\nout = tokens_int * 0 + len(a) + b[1] * 10 + c * 100;",
               DEFS("b", "[0, 7]"), "[1]", "[372]",
               "a, b, c = [\"x,y;\", 1], [0, 7], 3;\nout = tokens_int * 0 + len(a) + b[1] * 10 + c * 100;");
    check_defs("a, b = 1, 2; out = tokens_int * 0 + a * 10 + b;", DEFS("b", "5", "a", "3"), "[1]", "[35]",
               "a, b = 3, 5; out = tokens_int * 0 + a * 10 + b;");
    /* of two overrides of a name the later counts */
    check_defs("N = 1; out = indices + N;", DEFS("N", "2", "N", "3"), "a", "[3]", "N = 3; out = indices + N;");
    /* the lines after the value keep their numbers; a comment in the literal cannot swallow the ';' */
    check_defs("N = [1,  # one\n  2] # two\n;\nout = indices + len(N);\n", DEFS("N", "[5, # five\n 6, 7]"), "a",
               "[3]", "N = [5,   6, 7]\n # two\n;\nout = indices + len(N);\n");
    check_defs("N = # the size\n  3;\nout = indices + N;", DEFS("N", "4"), "a", "[4]",
               "N = # the size\n  4;\nout = indices + N;");
    check_defs("# c = 2;\nc = 1;\nout = tokens_str == c;", DEFS("c", "\"a#b;\""), "a", "[false]",
               "# c = 2;\nc = \"a#b;\";\nout = tokens_str == c;");
}
END_TEST

START_TEST(test_override_errors) {
    const char *prog = "x = 1;\nfor i in [1] { y = i; }\ndef f() { z = 1; return z; }\nload_me = 2;\n"
                       "p, q = [1, 2];\nout = indices;\n";
    const char *const *cases[] = {DEFS("w", "1"), DEFS("y", "1"), DEFS("z", "1"), DEFS("f", "1"),
                                  DEFS("q", "1"), DEFS("x", "out"), DEFS("x", "1 + 2"), DEFS("x", "[1, -x]"),
                                  DEFS("x", "[1"), DEFS("x", ""), DEFS("x", "-True")};
    const char *want[] = {
        "t.rasp: -D w: the program has no top-level assignment to 'w'",
        "t.rasp: -D y: the program has no top-level assignment to 'y'", /* only in a loop body */
        "t.rasp: -D z: the program has no top-level assignment to 'z'", /* only in a function */
        "t.rasp: -D f: the program has no top-level assignment to 'f'", /* a def */
        "t.rasp:5:4: -D q: the first top-level assignment of 'q' unpacks one value into several names, so it "
        "has no value of its own to replace",
        "-D x:1:1: expected a literal: a number, a string in double quotes, True, False, or a list or dict of "
        "literals",
        "-D x:1:1: expected a literal: a number, a string in double quotes, True, False, or a list or dict of "
        "literals",
        "-D x:1:5: expected a literal: a number, a string in double quotes, True, False, or a list or dict of "
        "literals",
        "-D x:1:3: syntax error, unexpected end of file, expecting operator, 'for', ',' or ']'",
        "-D x:1:1: syntax error, unexpected end of file, expecting expression",
        "-D x:1:1: expected a literal: a number, a string in double quotes, True, False, or a list or dict of "
        "literals",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        Fix *f = elab_defs(prog, cases[i]);
        ck_assert(!f->ok);
        ck_assert_str_eq(first_error_in(f), want[i]);
        /* the program did not run */
        ck_assert_ptr_null(elab_find_output(&f->r, "out"));
        fix_free(f);
    }
    /* every bad override is reported */
    Fix *f = elab_defs(prog, DEFS("w", "1", "x", "x", "y", "2"));
    ck_assert_uint_eq(f->diags.error_count, 3);
    fix_free(f);
    /* a name that only a loaded file assigns is not the program's to override */
    char dir[] = "/tmp/raspcc_test_defXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/lib.rasp", dir);
    FILE *fp = fopen(path, "w");
    fputs("shown = 7;\n", fp);
    fclose(fp);
    ElabOverride ov = {"shown", "1"};
    ElabOptions o = {0};
    o.base_dir = dir;
    o.overrides = &ov;
    o.n_overrides = 1;
    f = elab_opts("load \"lib\";\nout = indices + shown;", &o);
    ck_assert_str_eq(first_error_in(f), "t.rasp: -D shown: the program has no top-level assignment to 'shown'");
    fix_free(f);
    unlink(path);
    rmdir(dir);
}
END_TEST


/* ---- sessions (ir/session.h) ---- */

typedef struct Sess {
    Arena arena;
    IrGraph g;
    DiagList diags;
    ElabSession *s;
    ElabOutcome o;
} Sess;

static Sess *sess_new(void) {
    Sess *t = calloc(1, sizeof *t);
    arena_init(&t->arena);
    ir_graph_init(&t->g, &t->arena);
    diag_init(&t->diags, &t->arena);
    t->s = elab_session_new(&t->g, &t->diags, NULL);
    return t;
}

static void sess_free(Sess *t) {
    arena_free(&t->arena);
    free(t);
}

/* Runs one statement in `scope` (the console when NULL); its outcome in t->o. */
static bool run_in(Sess *t, Env *scope, const char *src) {
    AstProgram prog;
    SourceFile *file = source_from_string(&t->arena, "<stmt>", src);
    ck_assert(parse_program(&t->arena, file, &prog, &t->diags));
    ck_assert_uint_eq(prog.stmts.count, 1);
    elab_session_run(t->s, scope ? scope : elab_session_console(t->s), prog.stmts.items[0], &t->o);
    return t->o.ok;
}

static bool run(Sess *t, const char *src) { return run_in(t, NULL, src); }

/* The label of the only value the last statement named. */
static const char *named_label(Sess *t) {
    ck_assert_uint_eq(t->o.n_named, 1);
    MetaValue v = t->o.named[0].value;
    ck_assert(v.kind == MV_SOP || v.kind == MV_SEL);
    ck_assert_ptr_nonnull(v.label);
    return v.label->name;
}

/* An s-op's values on an input, Python-style (tokens converted as the original does). */
static const char *apply_text(Sess *t, MetaValue sop, MetaValue input) {
    void *res;
    size_t n;
    ElabFault f;
    if (!elab_session_apply(t->s, sop.u.node, input, &t->arena, &res, &n, &f))
        return arena_printf(&t->arena, "ERR %d: %s", (int)f.kind, f.text);
    MetaValue *items = ARENA_ARRAY(&t->arena, MetaValue, n);
    for (size_t i = 0; i < n; i++) items[i] = (MetaValue){.kind = MV_ATOM, .u.atom = ((Value *)res)[i]};
    return meta_pystr(&t->arena, (MetaValue){.kind = MV_LIST, .u.list = {items, n}});
}

START_TEST(test_session_keeps_scope) {
    Sess *t = sess_new();
    ck_assert(run(t, "a = indices + 4;"));
    ck_assert_str_eq(t->o.named[0].name, "a");
    ck_assert(run(t, "b = a * 2;"));
    ck_assert_str_eq(named_label(t), "b");
    const MetaValue *b = elab_session_lookup(elab_session_console(t->s), "b");
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(apply_text(t, *b, (MetaValue){.kind = MV_ATOM, .u.atom = value_str("abc")}), "[8, 10, 12]");
    /* a failed statement binds nothing, and the session goes on */
    ck_assert(!run(t, "c = g;"));
    ck_assert_int_eq(t->o.fault.kind, ELAB_FAULT_IGNORED);
    ck_assert_str_eq(t->o.fault.text, "Error: Undefined variable: g");
    ck_assert_ptr_null(elab_session_lookup(elab_session_console(t->s), "c"));
    ck_assert(run(t, "c = b;"));
    sess_free(t);
}
END_TEST

START_TEST(test_session_labels) {
    Sess *t = sess_new();
    ck_assert(run(t, "indices + 4;"));
    ck_assert_str_eq(t->o.named[0].name, "out");
    ck_assert_str_eq(named_label(t), "( indices + 4 )");
    ck_assert(run(t, "select(tokens, tokens, ==);"));
    ck_assert_str_eq(named_label(t), "plain select");
    ck_assert(run(t, "def f(s, c) { return s == c; }"));
    ck_assert_int_eq(t->o.named[0].value.kind, MV_FUNC);
    ck_assert(run(t, "f(tokens, \"a\");"));
    ck_assert_str_eq(named_label(t), "f(tokens , \"a\")");
    /* names longer than 30 characters become the original's placeholder */
    ck_assert(run(t, "(indices + indices) * (indices + indices);"));
    ck_assert_str_eq(named_label(t), "s-op");
    /* assignment renames the object, whichever name holds it */
    ck_assert(run(t, "x = indices - 1;"));
    ck_assert(run(t, "l = [x];"));
    ck_assert(run(t, "y = x;"));
    ck_assert(run(t, "l;"));
    ck_assert_str_eq(t->o.named[0].value.u.list.items[0].label->name, "y");
    sess_free(t);
}
END_TEST

START_TEST(test_session_out_and_reserved) {
    Sess *t = sess_new();
    ck_assert(run(t, "3 + 4;"));
    ck_assert(run(t, "out;"));
    ck_assert_str_eq(t->o.named[0].name, "out");
    ck_assert_int_eq(t->o.named[0].value.u.atom.as.i, 7);
    const char *reserved[] = {"out = 1;", "range = 1;", "length = 1;", "tokens_asis = 1;", "sort = 1;"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        ck_assert(!run(t, reserved[i]));
        ck_assert_int_eq(t->o.fault.kind, ELAB_FAULT_IGNORED);
        ck_assert(strncmp(t->o.fault.text, "Error: Cannot set reserved name: ", 33) == 0);
    }
    ck_assert(!run(t, "tokens = tokens_int;")); /* int("h") fails on the example "hello" */
    ck_assert_str_eq(t->o.fault.text, "invalid literal for int() with base 10: 'h'");
    elab_session_set_example(t->s, (MetaValue){.kind = MV_ATOM, .u.atom = value_str("12")});
    ck_assert(run(t, "tokens = tokens_int;")); /* tokens may be rebound */
    sess_free(t);
}
END_TEST

START_TEST(test_session_tests_on_example) {
    Sess *t = sess_new();
    /* the original builds the s-op, tests it on "hello", and fails the statement */
    ck_assert(!run(t, "x = 1 / tokens;"));
    ck_assert_int_eq(t->o.fault.kind, ELAB_FAULT_EXCEPTION);
    ck_assert_str_eq(t->o.fault.text, "unsupported operand type(s) for /: 'int' and 'str'");
    ck_assert(!run(t, "aggregate(select(1, 1, ==), tokens);"));
    ck_assert_str_eq(t->o.fault.text,
                     "asked to average multiple values, but they are non-numbers: ['h', 'e', 'l', 'l', 'o']");
    /* a one-argument call tests its callee on the argument instead */
    ck_assert(run(t, "(tokens_int + 1)([1, 2]);"));
    ck_assert(t->o.applied);
    ck_assert(!run(t, "tokens_asis([\"a\", 3]);"));
    ck_assert_int_eq(t->o.fault.kind, ELAB_FAULT_IGNORED);
    ck_assert_str_eq(t->o.fault.text, "attempted to create sequence with vals of different types:\n\t\t ['a', 3]");
    elab_session_set_example(t->s, (MetaValue){.kind = MV_ATOM, .u.atom = value_str("12")});
    ck_assert(run(t, "y = 1 / tokens_int;"));
    sess_free(t);
}
END_TEST

START_TEST(test_session_python_tokens) {
    Sess *t = sess_new();
    MetaValue items[3];
    for (int i = 0; i < 3; i++) items[i] = (MetaValue){.kind = MV_ATOM, .u.atom = value_int(i)};
    MetaValue ex = {.kind = MV_LIST, .u.list = {items, 3}};
    elab_session_set_example(t->s, ex);
    const char *names[] = {"tokens_str", "tokens_bool", "tokens_float", "tokens_asis", "indices"};
    const char *want[] = {"['0', '1', '2']", "[False, True, True]", "[0.0, 1.0, 2.0]", "[0, 1, 2]", "[0, 1, 2]"};
    for (int i = 0; i < 5; i++) {
        ck_assert(run(t, arena_printf(&t->arena, "%s;", names[i])));
        ck_assert_str_eq(apply_text(t, t->o.named[0].value, ex), want[i]);
    }
    ck_assert(run(t, "tokens_int;"));
    ck_assert_str_eq(apply_text(t, t->o.named[0].value, (MetaValue){.kind = MV_ATOM, .u.atom = value_str("1h")}),
                     "ERR 2: invalid literal for int() with base 10: 'h'");
    sess_free(t);
}
END_TEST

START_TEST(test_session_file_scope) {
    Sess *t = sess_new();
    ck_assert(run(t, "f = 10;"));
    Env *file = elab_session_file_scope(t->s, elab_session_console(t->s), "lib");
    ck_assert(!run_in(t, file, "a = f;")); /* a file starts from the base, not the console */
    ck_assert_str_eq(t->o.fault.text, "Error: Undefined variable: f");
    ck_assert(run_in(t, file, "a = length;"));
    ck_assert(run_in(t, file, "_b = 3;"));
    ck_assert(run_in(t, file, "def g(x) { return x; }"));
    Env *console = elab_session_console(t->s);
    ck_assert_ptr_nonnull(elab_session_lookup(console, "a"));
    ck_assert_ptr_nonnull(elab_session_lookup(console, "g"));
    ck_assert_ptr_null(elab_session_lookup(console, "_b"));
    ck_assert_str_eq(elab_session_lookup(console, "g")->u.func->env->name, "lib");
    sess_free(t);
}
END_TEST

int main(void) {
    Suite *s = suite_create("elaborate");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_basic_sops);
    tcase_add_test(tc, test_scoping);
    tcase_add_test(tc, test_closures_and_recursion);
    tcase_add_test(tc, test_tuples);
    tcase_add_test(tc, test_loops);
    tcase_add_test(tc, test_comprehensions);
    tcase_add_test(tc, test_indexing);
    tcase_add_test(tc, test_in);
    tcase_add_test(tc, test_conditional);
    tcase_add_test(tc, test_select_aggregate);
    tcase_add_test(tc, test_logic);
    tcase_add_test(tc, test_errors_located_and_several);
    tcase_add_test(tc, test_work_budget);
    tcase_add_test(tc, test_cse);
    tcase_add_test(tc, test_prelude);
    tcase_add_test(tc, test_result_bindings);
    tcase_add_test(tc, test_application);
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_override_errors);
    tcase_add_test(tc, test_session_keeps_scope);
    tcase_add_test(tc, test_session_labels);
    tcase_add_test(tc, test_session_out_and_reserved);
    tcase_add_test(tc, test_session_tests_on_example);
    tcase_add_test(tc, test_session_python_tokens);
    tcase_add_test(tc, test_session_file_scope);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
