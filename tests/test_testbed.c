/* testbed/: the true answers on hand-made instances, the generators (formats, determinism,
 * balance), every task program against the C answers through the reference evaluator, the
 * selection classes, the growth classes and the CSV. Compiling and running the models is
 * `rasptestbed --check` at small n (tests/testbed.sh, in make check). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/elaborate.h"
#include "ir/eval.h"
#include "tests/check_main.h"
#include "testbed/classify.h"
#include "testbed/growth.h"
#include "testbed/report.h"
#include "testbed/run.h"
#include "testbed/task.h"

#define PROGRAMS "rasp_examples/testbed"

/* ---- true answers ---- */

START_TEST(test_answer_bits) {
    int64_t b[] = {1, 0, 1, 1, 0};
    ck_assert_int_eq(tb_answer_bits(TB_ALL, b, 5), 0);
    ck_assert_int_eq(tb_answer_bits(TB_ALL, b + 2, 2), 1);
    ck_assert_int_eq(tb_answer_bits(TB_ANY, b + 4, 1), 0);
    ck_assert_int_eq(tb_answer_bits(TB_ANY, b, 5), 1);
    ck_assert_int_eq(tb_answer_bits(TB_MAJORITY, b, 5), 1);
    ck_assert_int_eq(tb_answer_bits(TB_MAJORITY, b, 4), 1);
    ck_assert_int_eq(tb_answer_bits(TB_MAJORITY, b + 1, 4), 0); /* a tie is 0 */
    ck_assert_int_eq(tb_answer_bits(TB_PARITY, b, 5), 1);
    ck_assert_int_eq(tb_answer_bits(TB_PARITY, b, 4), 1);
    ck_assert_int_eq(tb_answer_bits(TB_PARITY, b, 3), 0);
}
END_TEST

START_TEST(test_answer_hop) {
    /* positions: 0:0 1:1 2:2 3:0 4:3 5:1 6:2 7:3 8:3 9:1 10:0 11:2. From 11 (token 2) the latest
     * earlier 2 is at 6: hop to 7 (token 3); the latest earlier 3 is at 4: to 5 (token 1); the
     * latest earlier 1 is at 1: to 2 (token 2). */
    int64_t t[] = {0, 1, 2, 0, 3, 1, 2, 3, 3, 1, 0, 2};
    ck_assert_int_eq(tb_answer_hop(t, 12, 1), 3);
    ck_assert_int_eq(tb_answer_hop(t, 12, 2), 1);
    ck_assert_int_eq(tb_answer_hop(t, 12, 3), 2);
    int64_t fresh[] = {1, 2, 3}; /* no earlier occurrence: position 0 */
    ck_assert_int_eq(tb_answer_hop(fresh, 3, 1), 1);
}
END_TEST

START_TEST(test_answer_add) {
    int64_t a[] = {1, 1, 0, 0}, b[] = {1, 0, 1, 0}, s[5]; /* 3 + 5 = 8 */
    tb_answer_add(a, b, 4, s);
    int64_t want[] = {0, 0, 0, 1, 0};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(s[i], want[i]);
    int64_t ones[] = {1, 1, 1, 1}; /* 15 + 15 = 30 */
    tb_answer_add(ones, ones, 4, s);
    int64_t want2[] = {0, 1, 1, 1, 1};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(s[i], want2[i]);
}
END_TEST

START_TEST(test_answer_reach) {
    int64_t u[] = {0, 1, 3, 2}, v[] = {1, 2, 4, 3}; /* 0->1->2->3->4 */
    ck_assert(tb_answer_reach(u, v, 4, 5, 0, 4, true));
    ck_assert(!tb_answer_reach(u, v, 4, 5, 4, 0, true));
    ck_assert(tb_answer_reach(u, v, 4, 5, 4, 0, false));
    ck_assert(tb_answer_reach(u, v, 4, 5, 2, 2, true));
    int64_t u2[] = {0, 2}, v2[] = {1, 1}; /* 0->1<-2 */
    ck_assert(!tb_answer_reach(u2, v2, 2, 3, 0, 2, true));
    ck_assert(tb_answer_reach(u2, v2, 2, 3, 0, 2, false));
}
END_TEST

START_TEST(test_answer_dyck) {
    /* codes: 0 "(", 1 ")", 2 "[", 3 "]" */
    int64_t ok[] = {0, 2, 3, 1, 2, 3};
    ck_assert(tb_answer_dyck(ok, 6, 0));
    int64_t crossed[] = {0, 2, 1, 3};
    ck_assert(!tb_answer_dyck(crossed, 4, 0));
    int64_t open[] = {0, 0, 1};
    ck_assert(!tb_answer_dyck(open, 3, 0));
    int64_t early[] = {1, 0};
    ck_assert(!tb_answer_dyck(early, 2, 0));
    int64_t deep[] = {0, 0, 0, 1, 1, 1};
    ck_assert(tb_answer_dyck(deep, 6, 3));
    ck_assert(!tb_answer_dyck(deep, 6, 2));
}
END_TEST

/* ---- generators ---- */

/* The vocabulary of t at n as a range of int codes [lo, hi] (string tokens: alphabet codes). */
static void vocab_range(const TbTask *t, size_t n, int64_t *lo, int64_t *hi) {
    if (t->alphabet) {
        *lo = 0;
        *hi = 0;
        while (t->alphabet[*hi + 1]) ++*hi;
        return;
    }
    char v[32];
    tb_vocab(t, n, v, sizeof v);
    long long a, b;
    ck_assert_msg(sscanf(v, "%lld..%lld", &a, &b) == 2, "%s: vocab %s", t->name, v);
    *lo = a;
    *hi = b;
}

START_TEST(test_generators_formats) {
    size_t count;
    const TbTask *tasks = tb_tasks(&count);
    ck_assert_uint_ge(count, 23);
    for (size_t i = 0; i < count; i++) {
        const TbTask *t = &tasks[i];
        for (size_t n = 8; n <= 64; n *= 2) {
            TbParams p;
            TbDefine d[1];
            tb_params(t, n, 7, &p, d);
            int64_t lo, hi;
            vocab_range(t, n, &lo, &hi);
            TbRng rng = {tb_seed_mix(7, t->name, n)};
            size_t ones = 0;
            for (int k = 0; k < 200; k++) {
                Arena a;
                arena_init(&a);
                TbInstance in;
                t->generate(t, &p, &rng, &a, &in);
                ck_assert_msg(in.len >= 1 && in.len <= tb_max_len(t, n), "%s n=%zu len %zu", t->name, n, in.len);
                for (size_t j = 0; j < in.len; j++)
                    ck_assert_msg(in.tokens[j] >= lo && in.tokens[j] <= hi, "%s n=%zu token %lld", t->name, n,
                                  (long long)in.tokens[j]);
                ck_assert_uint_ge(in.n_checks, 1);
                for (size_t c = 0; c < in.n_checks; c++) ck_assert_uint_lt(in.check_pos[c], in.len);
                ones += in.expect[in.n_checks - 1] == 1;
                arena_free(&a);
            }
            /* decision tasks: neither answer is rare (index and k-hop answer tokens; binary_add's
             * last bit is a carry, 1 about half the time) */
            if (strncmp(t->name, "hop", 3) != 0)
                ck_assert_msg(ones >= 40 && ones <= 160, "%s n=%zu: %zu of 200 answers are 1", t->name, n, ones);
        }
    }
}
END_TEST

START_TEST(test_generators_deterministic) {
    const TbTask *t = tb_task_find("reach_undirected");
    ck_assert_ptr_nonnull(t);
    TbParams p;
    TbDefine d[1];
    tb_params(t, 16, 3, &p, d);
    TbRng r1 = {42}, r2 = {42};
    Arena a;
    arena_init(&a);
    TbInstance x, y;
    t->generate(t, &p, &r1, &a, &x);
    t->generate(t, &p, &r2, &a, &y);
    ck_assert_uint_eq(x.len, y.len);
    ck_assert(memcmp(x.tokens, y.tokens, x.len * sizeof *x.tokens) == 0);
    ck_assert_int_eq(x.expect[0], y.expect[0]);
    arena_free(&a);
}
END_TEST

START_TEST(test_params) {
    const TbTask *t = tb_task_find("sparse_parity");
    ck_assert_ptr_nonnull(t);
    TbParams p, q;
    TbDefine d[1], e[1];
    ck_assert_uint_eq(tb_params(t, 64, 5, &p, d), 1);
    tb_params(t, 64, 5, &q, e);
    ck_assert_str_eq(d[0].name, "SPARSE");
    ck_assert_str_eq(d[0].value, e[0].value);
    for (int k = 0; k < TB_SPARSE_K; k++) {
        ck_assert_uint_lt(p.sparse[k], 64);
        if (k) ck_assert_uint_lt(p.sparse[k - 1], p.sparse[k]);
    }
    char want[96];
    snprintf(want, sizeof want, "[%zu, %zu, %zu]", p.sparse[0], p.sparse[1], p.sparse[2]);
    ck_assert_str_eq(d[0].value, want);
    char text[128];
    tb_defines_text(d, 1, text, sizeof text);
    ck_assert(strncmp(text, "-D 'SPARSE=[", 12) == 0);
    ck_assert_uint_eq(tb_params(tb_task_find("reach_directed"), 32, 5, &p, d), 1);
    ck_assert_str_eq(d[0].value, "32");
    ck_assert_uint_eq(tb_params(tb_task_find("parity"), 32, 5, &p, d), 0);
    ck_assert_uint_eq(tb_max_len(tb_task_find("index_all"), 64), 64 + 1 + 16);
    ck_assert_uint_eq(tb_max_len(tb_task_find("binary_add"), 64), 128);
    char v[32];
    tb_vocab(tb_task_find("index_all"), 64, v, sizeof v);
    ck_assert_str_eq(v, "-1..63");
}
END_TEST

/* ---- the programs agree with the C answers (reference evaluator, no compiling) ---- */

static IrNode *load_task(const TbTask *t, size_t n, IrGraph *g, Arena *arena, TbParams *p) {
    TbDefine defs[1];
    size_t nd = tb_params(t, n, 11, p, defs);
    ElabOverride ov[1];
    for (size_t i = 0; i < nd; i++) ov[i] = (ElabOverride){defs[i].name, defs[i].value};
    ElabOptions eo = {0};
    eo.base_dir = PROGRAMS;
    eo.overrides = ov;
    eo.n_overrides = nd;
    ir_graph_init(g, arena);
    DiagList diags;
    diag_init(&diags, arena);
    ElabResult er;
    const char *path = arena_printf(arena, "%s/%s.rasp", PROGRAMS, t->name);
    bool ok = rasp_load_program(g, path, NULL, NULL, &eo, &er, &diags);
    if (!ok) diag_render_all(stderr, &diags);
    ck_assert_msg(ok, "%s does not load", path);
    IrNode *out = elab_find_output(&er, t->name);
    ck_assert_msg(out != NULL, "%s has no s-op %s", path, t->name);
    return out;
}

START_TEST(test_programs_agree_with_answers) {
    size_t count;
    const TbTask *tasks = tb_tasks(&count);
    for (size_t i = 0; i < count; i++) {
        const TbTask *t = &tasks[i];
        for (size_t n = 8; n <= 16; n *= 2) {
            Arena arena;
            arena_init(&arena);
            IrGraph g;
            TbParams p;
            IrNode *out = load_task(t, n, &g, &arena, &p);
            TbRng rng = {tb_seed_mix(11, t->name, n)};
            for (int k = 0; k < 60; k++) {
                Arena a;
                arena_init(&a);
                TbInstance in;
                t->generate(t, &p, &rng, &a, &in);
                Value *atoms = ARENA_ARRAY(&a, Value, in.len);
                for (size_t j = 0; j < in.len; j++)
                    atoms[j] = t->alphabet ? value_str(t->alphabet[in.tokens[j]]) : value_int(in.tokens[j]);
                Value *res;
                IrEvalError e;
                ck_assert_msg(ir_eval(&g, out, atoms, in.len, &a, &res, &e), "%s n=%zu: %s", t->name, n, e.message);
                for (size_t c = 0; c < in.n_checks; c++) {
                    Value v = res[in.check_pos[c]];
                    ck_assert_msg(v.kind == VAL_INT && v.as.i == in.expect[c], "%s n=%zu instance %d position %zu",
                                  t->name, n, k, in.check_pos[c]);
                }
                arena_free(&a);
            }
            arena_free(&arena);
        }
    }
}
END_TEST

/* ---- selection classes ---- */

static TbClassification classify_text(const char *src, const char *output) {
    Arena arena;
    arena_init(&arena);
    IrGraph g;
    ir_graph_init(&g, &arena);
    DiagList diags;
    diag_init(&diags, &arena);
    ElabResult er;
    bool ok = rasp_load_program(&g, NULL, src, "test.rasp", NULL, &er, &diags);
    if (!ok) diag_render_all(stderr, &diags);
    ck_assert(ok);
    IrNode *out = elab_find_output(&er, output);
    ck_assert_ptr_nonnull(out);
    TbClassification c;
    tb_classify(&g, out, &c);
    arena_free(&arena);
    return c;
}

START_TEST(test_classify) {
    TbClassification c = classify_text("out = aggregate(select(1, 1, ==), indicator(tokens == \"a\"));", "out");
    ck_assert_int_eq(c.cls, TB_CLASS_COUNTING);
    ck_assert_uint_eq(c.selects[TB_SEL_CONSTANT], 1);
    c = classify_text("w = selector_width(select(indices, indices, <=) and select(tokens, \"a\", ==));", "w");
    ck_assert_int_eq(c.cls, TB_CLASS_COUNTING);
    ck_assert_uint_eq(c.selects[TB_SEL_PREFIX], 1);
    ck_assert_uint_eq(c.selects[TB_SEL_TOKEN_FILTER], 1);
    ck_assert_uint_eq(c.widths, 1);
    c = classify_text("last = aggregate(select(indices, length - 1, ==), tokens);", "last");
    ck_assert_int_eq(c.cls, TB_CLASS_POSITIONAL);
    ck_assert_uint_eq(c.selects[TB_SEL_POSITIONAL], 1);
    c = classify_text("x = aggregate(select(indices, 3, ==), tokens);", "x");
    ck_assert_int_eq(c.cls, TB_CLASS_POSITIONAL);
    ck_assert_uint_eq(c.selects[TB_SEL_POSITION_FILTER], 1);
    c = classify_text("h = selector_width(select(tokens, tokens, ==));", "h");
    ck_assert_int_eq(c.cls, TB_CLASS_CONTENT);
    /* derived from tokens through an aggregate: content, though neither side is tokens itself */
    c = classify_text("tokens = tokens_int; q = aggregate(select(indices, length - 1, ==), tokens);"
                      " y = aggregate(select(indices, q, ==), tokens); z = length;",
                      "y");
    ck_assert_int_eq(c.cls, TB_CLASS_CONTENT);
    ck_assert_uint_eq(c.selects[TB_SEL_CONTENT], 1);
    ck_assert_uint_eq(c.selects[TB_SEL_POSITIONAL], 1);
    ck_assert_uint_eq(c.aggregates, 2);
    /* only what the output reaches counts */
    c = classify_text("h = selector_width(select(tokens, tokens, ==)); c = aggregate(select(1, 1, ==), tokens == \"a\");",
                      "c");
    ck_assert_int_eq(c.cls, TB_CLASS_COUNTING);
    ck_assert_uint_eq(c.selects[TB_SEL_CONTENT], 0);
}
END_TEST

START_TEST(test_classify_suite) {
    /* the classes docs/testbed.md reports */
    struct { const char *task; TbClass cls; } want[] = {
        {"majority", TB_CLASS_COUNTING}, {"parity", TB_CLASS_COUNTING}, {"dyck1", TB_CLASS_COUNTING},
        {"sparse_parity", TB_CLASS_POSITIONAL}, {"index", TB_CLASS_CONTENT}, {"hop2", TB_CLASS_CONTENT},
        {"dyck2", TB_CLASS_CONTENT}, {"reach_directed", TB_CLASS_CONTENT},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        Arena arena;
        arena_init(&arena);
        IrGraph g;
        TbParams p;
        IrNode *out = load_task(tb_task_find(want[i].task), 8, &g, &arena, &p);
        TbClassification c;
        tb_classify(&g, out, &c);
        ck_assert_msg(c.cls == want[i].cls, "%s: %s", want[i].task, tb_class_name(c.cls));
        arena_free(&arena);
    }
}
END_TEST

/* ---- growth classes ---- */

static TbGrowth growth_of(double (*f)(double)) {
    double n[] = {8, 16, 32, 64, 128, 256}, y[6];
    for (int i = 0; i < 6; i++) y[i] = f(n[i]);
    return tb_growth_fit(n, y, 6).cls;
}

static double g_const(double n) { (void)n; return 3; }
static double g_log(double n) { return 2 * log2(n) + 1; }
static double g_lin(double n) { return 3 * n + 2; }
static double g_nlogn(double n) { return n * log2(n); }
static double g_square(double n) { return n * n / 2 + n; }
static double g_cube(double n) { return n * n * n + 5 * n * n; }
static double g_steps(double n) { return n < 100 ? 4 : 5; }

START_TEST(test_growth) {
    ck_assert_int_eq(growth_of(g_const), TB_GROWTH_CONST);
    ck_assert_int_eq(growth_of(g_log), TB_GROWTH_LOG);
    ck_assert_int_eq(growth_of(g_lin), TB_GROWTH_LINEAR);
    ck_assert_int_eq(growth_of(g_nlogn), TB_GROWTH_NLOGN);
    ck_assert_int_eq(growth_of(g_square), TB_GROWTH_SQUARE);
    ck_assert_int_eq(growth_of(g_cube), TB_GROWTH_CUBE);
    double n[] = {8, 16, 32, 64, 128, 256}, y[6];
    for (int i = 0; i < 6; i++) y[i] = g_steps(n[i]);
    TbGrowthFit f = tb_growth_fit(n, y, 6);
    ck_assert(f.cls != TB_GROWTH_CONST); /* 4 -> 5 is 20% of the largest: not constant */
    ck_assert_int_eq(tb_growth_fit(n, y, 2).cls, TB_GROWTH_TOO_FEW);
    double jump[] = {2, 2, 2, 2, 2, 3}; /* one point carries no growth: ~constant, not n^3 */
    f = tb_growth_fit(n, jump, 6);
    ck_assert_int_eq(f.cls, TB_GROWTH_CONST);
    ck_assert(!f.fits);
    double dec[] = {9, 8, 7}; /* decreasing: the constant fit, flagged as not fitting */
    f = tb_growth_fit(n, dec, 3);
    ck_assert_int_eq(f.cls, TB_GROWTH_CONST);
    ck_assert(!f.fits);
}
END_TEST

/* ---- reports ---- */

START_TEST(test_csv) {
    TbResult r[2];
    memset(r, 0, sizeof r);
    snprintf(r[0].task, sizeof r[0].task, "parity");
    r[0].n = 16;
    r[0].instances = 1000;
    r[0].correct = 999;
    r[0].layers = 1;
    r[0].heads = 1;
    r[0].residual_width = 38;
    r[0].mlp_hidden = 32;
    r[0].params = 3528;
    r[0].nonzero_params = 197;
    r[0].compile_ms = 0.25;
    snprintf(r[1].task, sizeof r[1].task, "parity");
    r[1].n = 32;
    r[1].stage = TB_STAGE_COMPILE;
    snprintf(r[1].stop, sizeof r[1].stop, "x.rasp:1:1: error: \"too\" big");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tb_write_csv(f, r, 2);
    fclose(f);
    ck_assert_str_eq(buf, "task,n,instances,accuracy,layers,heads,residual_width,mlp_hidden,params,nonzero_params,"
                          "compile_ms\nparity,16,1000,0.9990,1,1,38,32,3528,197,0.2\n");
    free(buf);
    f = open_memstream(&buf, &len);
    tb_write_stops_csv(f, r, 2);
    fclose(f);
    ck_assert_str_eq(buf, "task,n,stage,reason\nparity,32,compile,\"x.rasp:1:1: error: \"\"too\"\" big\"\n");
    free(buf);
    /* a child killed at a limit classified nothing: the summary shows the finished one's class */
    r[0].classification.cls = TB_CLASS_CONTENT;
    r[1].stage = TB_STAGE_LIMIT;
    f = open_memstream(&buf, &len);
    tb_write_summary(f, r, 2);
    fclose(f);
    ck_assert_msg(strstr(buf, "content-dependent") && !strstr(buf, "counting"), "%s", buf);
    free(buf);
}
END_TEST

static Suite *testbed_suite(void) {
    Suite *s = suite_create("testbed");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_answer_bits);
    tcase_add_test(tc, test_answer_hop);
    tcase_add_test(tc, test_answer_add);
    tcase_add_test(tc, test_answer_reach);
    tcase_add_test(tc, test_answer_dyck);
    tcase_add_test(tc, test_generators_formats);
    tcase_add_test(tc, test_generators_deterministic);
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_programs_agree_with_answers);
    tcase_add_test(tc, test_classify);
    tcase_add_test(tc, test_classify_suite);
    tcase_add_test(tc, test_growth);
    tcase_add_test(tc, test_csv);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(testbed_suite());
}
