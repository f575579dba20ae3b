/* sim/: the mathematics on hand-worked cases, the Match2 and k-PARITY attentions solving their
 * tasks when computed directly, the program constants, and U itself (attention.rasp compiled
 * in-process at a small size) against softmax(X A X^T) X V. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "tests/compile_fixture.h"
#include "sim/sim.h"

#define E 2.718281828459045

static void assert_near(const double *got, const double *want, size_t n, double tol) {
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - want[i]) <= tol, "entry %zu: got %.17g, want %.17g", i, got[i], want[i]);
}

START_TEST(test_reference_small_cases) {
    double m[6] = {1, 2, 3, 4, 5, 6}, t[6], want_t[6] = {1, 4, 2, 5, 3, 6};
    sim_transpose(m, 2, 3, t);
    assert_near(t, want_t, 6, 0);

    double b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 2}, p[6], want_p[6] = {1, 2, 6, 4, 5, 12};
    sim_matmul(m, b, 2, 3, 3, p);
    assert_near(p, want_p, 6, 0);

    /* rows of 2 and a last row of 1: [0, ln 3] -> [1/4, 3/4]; [5] -> [1] */
    double x[3] = {0, log(3.0), 5}, s[3], want_s[3] = {0.25, 0.75, 1};
    sim_softmax_rows(x, 3, 2, s);
    assert_near(s, want_s, 3, 1e-15);

    double r[3], want_r[3] = {0, 0.5, 0};
    double xr[3] = {-1, 0.5, -0.0};
    sim_relu(xr, 3, r);
    assert_near(r, want_r, 3, 0);

    /* pairs in decreasing order, negative numbers included; the unpaired last stays */
    double mm[5] = {-1, -3, 2, 5, -7}, out[5], want_mm[5] = {-1, -3, 5, 2, -7};
    sim_maxmin_pairs(mm, 5, out);
    assert_near(out, want_mm, 5, 0);
}
END_TEST

START_TEST(test_reference_inverse) {
    double m[9] = {2, 0, 0, 0, 1, 0, 1, 0, 1}, inv[9], want[9] = {0.5, 0, 0, 0, 1, 0, -0.5, 0, 1};
    ck_assert(sim_inverse(m, 3, inv));
    assert_near(inv, want, 9, 1e-15);
    double paper[9] = {7, 8, 12, 10, 11, 9, 2, 4, 21}, pinv[9], id[9], eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    ck_assert(sim_inverse(paper, 3, pinv));
    sim_matmul(paper, pinv, 3, 3, 3, id);
    assert_near(id, eye, 9, 1e-13);
    double singular[9] = {1, 2, 3, 2, 4, 6, 0, 1, 1};
    ck_assert(!sim_inverse(singular, 3, inv));
}
END_TEST

/* X = [e1; e2], A = I, V = [1 2 3; 4 5 6; 7 8 9]: scores I, so row 0 weighs (e, 1) / (e + 1) */
START_TEST(test_reference_attention) {
    double X[6] = {1, 0, 0, 0, 1, 0}, A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, V[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    double out[6], p = E / (E + 1), q = 1 / (E + 1);
    double want[6] = {p * 1 + q * 4, p * 2 + q * 5, p * 3 + q * 6, q * 1 + p * 4, q * 2 + p * 5, q * 3 + p * 6};
    sim_attention(X, 2, 3, A, V, out);
    assert_near(out, want, 6, 1e-15);
    /* scores of 300 must not overflow: the row maximum is subtracted */
    double X2[4] = {10, 0, -10, 0}, A2[4] = {3, 0, 0, 0}, V2[4] = {1, 0, 0, 1}, o2[4];
    sim_attention(X2, 2, 2, A2, V2, o2);
    ck_assert(fabs(o2[0] - 10) < 1e-12 && fabs(o2[2] + 10) < 1e-12);
}
END_TEST

START_TEST(test_reference_tasks) {
    int x[6] = {1, 4, 2, 5, 0, 7}, out[6], want[6] = {1, 1, 0, 1, 1, 0};
    sim_match2(x, 6, 5, out);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], want[i]);
    int bits[5] = {1, 0, 1, 1, 0};
    size_t pos[3] = {0, 2, 3}, pos2[2] = {1, 9};
    ck_assert_int_eq(sim_parity(bits, 5, pos, 3), 1);
    ck_assert_int_eq(sim_parity(bits, 5, pos2, 2), 0); /* a position past the end counts 0 */
}
END_TEST

/* T computed directly solves its task on random inputs, with entries in [-2, 2] and a margin. */
static void check_task_directly(SimTask *t, size_t inputs) {
    char err[256];
    ck_assert_msg(sim_task_build(t, err, sizeof err), "%s", err);
    ck_assert(t->margin > 0);
    for (size_t i = 0; i < t->d * t->d; i++) ck_assert(fabs(t->A[i]) <= 2 && fabs(t->V[i]) <= 2);
    SimRng rng;
    sim_rng_seed(&rng, 7);
    int tokens[SIM_MAX_N], truth[SIM_MAX_N], got[SIM_MAX_N];
    double X[SIM_MAX_N * SIM_MAX_D], TX[SIM_MAX_N * SIM_MAX_D];
    size_t ones = 0;
    for (size_t in = 0; in < inputs; in++) {
        sim_task_tokens(t, &rng, tokens);
        sim_task_encode(t, tokens, X);
        for (size_t i = 0; i < t->n * t->d; i++) ck_assert(fabs(X[i]) <= 2);
        sim_attention(X, t->n, t->d, t->A, t->V, TX);
        sim_task_truth(t, tokens, truth);
        double slack;
        sim_task_readout(t, X, TX, got, &slack);
        ck_assert_msg(slack > 0.05, "slack %g", slack);
        for (size_t i = 0; i < t->n; i++) {
            ck_assert_int_eq(got[i], truth[i]);
            ones += truth[i] == 1;
        }
    }
    ck_assert(ones > 0 && ones < inputs * t->n); /* both answers occur */
}

START_TEST(test_tasks_solved_by_t) {
    SimTask m1 = {.kind = SIM_MATCH2, .M = 5, .n = 6, .d = 3};
    check_task_directly(&m1, 500);
    SimTask m2 = {.kind = SIM_MATCH2, .M = 7, .n = 8, .d = 2};
    check_task_directly(&m2, 500);
    SimTask p1 = {.kind = SIM_PARITY, .n = 4, .d = 5, .k = 2, .positions = {3, 1}};
    check_task_directly(&p1, 500);
    SimTask p2 = {.kind = SIM_PARITY, .n = 6, .d = 7, .k = 3, .positions = {0, 2, 5}};
    check_task_directly(&p2, 500);
}
END_TEST

START_TEST(test_tasks_refused) {
    char err[256];
    SimTask big = {.kind = SIM_MATCH2, .M = 40, .n = 16, .d = 3}; /* cos(2 pi / 40) is too close to 1 */
    ck_assert(!sim_task_build(&big, err, sizeof err));
    ck_assert(strstr(err, "cannot tell") != NULL);
    SimTask narrow = {.kind = SIM_PARITY, .n = 4, .d = 4, .k = 2, .positions = {0, 1}};
    ck_assert(!sim_task_build(&narrow, err, sizeof err));
    SimTask twice = {.kind = SIM_PARITY, .n = 4, .d = 5, .k = 2, .positions = {1, 1}};
    ck_assert(!sim_task_build(&twice, err, sizeof err));
    SimTask one_d = {.kind = SIM_MATCH2, .M = 5, .n = 3, .d = 1};
    ck_assert(!sim_task_build(&one_d, err, sizeof err));
}
END_TEST

START_TEST(test_u_input_and_constants) {
    double X[2] = {1, 2}, A[1] = {3}, V[1] = {4}, out[4], want[4] = {1, 2, 3, 4};
    ck_assert_uint_eq(sim_u_input(X, 2, 1, A, V, out), 4);
    assert_near(out, want, 4, 0);
    ck_assert_uint_eq(sim_u_length(8, 3), 42);
    const char *src = "# d = 9;\nd = 3;\nnmax = 8;\nd = 4;\nfloor_gap = 30.0;\npositions = [0, 2, 13];\nx == 2;\n";
    double v;
    ck_assert(sim_program_number(src, "d", &v) && v == 3);
    ck_assert(sim_program_number(src, "floor_gap", &v) && v == 30);
    ck_assert(!sim_program_number(src, "x", &v));
    ck_assert(!sim_program_number(src, "nm", &v));
    size_t pos[4];
    ck_assert_uint_eq(sim_program_list(src, "positions", pos, 4), 3);
    ck_assert(pos[0] == 0 && pos[1] == 2 && pos[2] == 13);
}
END_TEST

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s (run from the repository root)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* U (d = 2, nmax = 3, gated) compiled in-process: within its stated bound of the mathematics on
 * random inputs, and simulating Match2 with every answer right. */
START_TEST(test_u_compiled) {
    char *src = read_text("rasp_examples/simulator/attention.rasp");
    ElabOverride defs[2] = {{"d", "2"}, {"nmax", "3"}};
    ElabOptions eo = {.overrides = defs, .n_overrides = 2};
    Compiled *c = calloc(1, sizeof *c);
    arena_init(&c->arena);
    ir_graph_init(&c->g, &c->arena);
    diag_init(&c->diags, &c->arena);
    model_init(&c->model);
    ck_assert(rasp_load_program(&c->g, NULL, src, "attention.rasp", &eo, &c->r, &c->diags));
    c->out = elab_find_output(&c->r, "attention");
    ck_assert(c->out != NULL);
    CodegenOptions opt = {.max_len = sim_u_length(3, 2), .have_range = true, .range_lo = -2, .range_hi = 2,
                          .gated_mlp = true, .program_source = c->r.source, .program_name = "attention.rasp"};
    ck_assert_msg(codegen_compile(&c->g, c->out, "attention", &opt, &c->model, &c->diags), "%s",
                  compiled_first_error(c));
    ck_assert(c->model.out_error_bound > 0 && c->model.out_error_bound + 2 * c->model.out_error_rel < 1e-5);

    char err[512];
    Workspace ws;
    ck_assert_msg(workspace_init(&ws, &c->model, err, sizeof err), "%s", err);
    SimUProgram u;
    ck_assert_msg(sim_u_program(&c->model, &u, err, sizeof err), "%s", err);
    ck_assert(u.d == 2 && u.nmax == 3 && u.floor_gap == 30);
    ck_assert_uint_eq(sim_u_rows(&c->model, &u), 3);

    SimCheck r;
    ck_assert_msg(sim_check_u_random(&c->model, &ws, &u, 40, 5, NULL, &r, err, sizeof err), "%s", err);
    ck_assert_msg(r.over_bound == 0, "%s", r.first_failure);
    ck_assert(r.runs == 40 && r.max_error > 0 && r.max_error <= r.max_allowed);

    SimTask t = {.kind = SIM_MATCH2, .M = 4, .n = 3, .d = 2};
    ck_assert_msg(sim_task_build(&t, err, sizeof err), "%s", err);
    SimTaskResult tr;
    ck_assert_msg(sim_check_task(&c->model, &ws, &u, &t, 40, 3, NULL, &tr, err, sizeof err), "%s", err);
    ck_assert_uint_eq(tr.answers, 120);
    ck_assert_uint_eq(tr.correct, 120);
    ck_assert_uint_eq(tr.u.over_bound, 0);

    /* a length that is not [X | A | V] raises; too many rows are refused before running */
    double bad[9] = {0};
    double out[9];
    Arena scratch;
    arena_init(&scratch);
    ck_assert(!sim_run(&c->model, &ws, bad, 9, false, out, &scratch, err, sizeof err));
    arena_free(&scratch);
    SimTask wide = {.kind = SIM_MATCH2, .M = 4, .n = 4, .d = 2};
    ck_assert(sim_task_build(&wide, err, sizeof err));
    ck_assert(!sim_check_task(&c->model, &ws, &u, &wide, 1, 3, NULL, &tr, err, sizeof err));

    workspace_free(&ws);
    compiled_free(c);
    free(src);
}
END_TEST

int main(void) {
    Suite *s = suite_create("simulator");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_reference_small_cases);
    tcase_add_test(tc, test_reference_inverse);
    tcase_add_test(tc, test_reference_attention);
    tcase_add_test(tc, test_reference_tasks);
    tcase_add_test(tc, test_tasks_solved_by_t);
    tcase_add_test(tc, test_tasks_refused);
    tcase_add_test(tc, test_u_input_and_constants);
    tcase_add_test(tc, test_u_compiled);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
