/* Fixed universal transformers: constructions, solver, files, tasks (small sizes; the long
 * sweeps are bench/fut_sweep.sh). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "fut/fut.h"
#include "fut/io.h"
#include "fut/selftest.h"
#include "fut/tasks.h"
#include "runtime/safetensors.h"

static double run_selftest(FutKind kind, size_t L, size_t H, size_t d, bool res, bool causal, FutSelftestResult *r) {
    FutSelftestOptions o = {.kind = kind, .L = L, .H = H, .d = d, .residual = res, .causal = causal, .trials = 2,
                            .n = 5, .inputs = 2, .seed = 11 + L * 7 + H};
    char err[512];
    ck_assert_msg(fut_selftest(&o, r, err, sizeof err), "%s", err);
    return r->max_abs_error;
}

START_TEST(test_selftest_sweep_small) {
    for (int kind = FUT_SPARSE; kind <= FUT_RANDOM; kind++)
        for (size_t L = 1; L <= 2; L++)
            for (size_t H = 1; H <= 2; H++)
                for (int res = 0; res < 2; res++)
                    for (int causal = 0; causal < 2; causal++) {
                        FutSelftestResult r;
                        double e = run_selftest((FutKind)kind, L, H, 3, res, causal, &r);
                        double bound = kind == FUT_RANDOM ? 1e-6 : 1e-9;
                        ck_assert_msg(e <= bound, "%s L=%zu H=%zu res=%d causal=%d: error %g",
                                      fut_kind_name((FutKind)kind), L, H, res, causal, e);
                        ck_assert_uint_ge(r.m, r.lower_bound);
                    }
}
END_TEST

START_TEST(test_widths) {
    for (size_t L = 1; L <= 4; L++) ck_assert_uint_eq(fut_sparse_width(L, 1, 5, false), (2 * L + 1) * 5);
    /* H = 2, L = 2, d = 1: (H+1)(H^L-1)/(H-1) + H^L = 3*3 + 4 */
    ck_assert_uint_eq(fut_sparse_width(2, 2, 1, false), 13);
    ck_assert_uint_eq(fut_sparse_width(3, 3, 2, false), 2 * (4 * 13 + 27));
    /* residual: identity as one more branch, W = H + 1 */
    ck_assert_uint_eq(fut_sparse_width(2, 1, 1, true), 2 * 3 + 4);
    ck_assert_uint_eq(fut_random_columns(1, 1, 4, false), 12);
    ck_assert_uint_eq(fut_lower_bound(3, 2, 4, false), 32);
    ck_assert_uint_eq(fut_lower_bound(2, 1, 3, true), 3 * 3 + 1);
    ck_assert_uint_eq(fut_sparse_width(60, 64, 4096, true), 0); /* overflow reported as 0 */
}
END_TEST

/* The worked example of docs/fut.md: one layer, one head, E = [K_1 | Q_1 | O] = [I | A | B], and the
 * backbone it states: R_K, R_Q, U select the blocks, R_V is the mask diag(0, 0, 0, 0, 1, 1). */
START_TEST(test_one_layer_blocks) {
    Arena a;
    arena_init(&a);
    FutRng rng;
    fut_rng_seed(&rng, 3);
    FutTarget t;
    fut_target_random(&a, &rng, 1, 1, 2, false, false, &t);
    FutBackbone b;
    char err[256];
    ck_assert(fut_backbone_sparse(&a, 1, 1, 2, false, false, &b, err, sizeof err));
    ck_assert_uint_eq(b.m, 6);
    FutMat E;
    ck_assert(fut_embed(&a, &b, &t, &E, NULL, err, sizeof err));
    FutProgram p;
    ck_assert(fut_program_from_target(&a, &t, 1, 1, 2, false, &p, err, sizeof err));
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) ck_assert(FUT_AT(b.rv[0], i, j) == (i == j && i >= 4 ? 1.0 : 0.0));
    for (size_t i = 0; i < 6; i++)
        for (size_t c = 0; c < 2; c++) {
            ck_assert(FUT_AT(b.rk[0], i, c) == (i == c ? 1.0 : 0.0));
            ck_assert(FUT_AT(b.rq[0], i, c) == (i == 2 + c ? 1.0 : 0.0));
            ck_assert(FUT_AT(b.u, i, c) == (i == 4 + c ? 1.0 : 0.0));
        }
    /* block order of the layout: level 0 = [K | Q_0], level 1 = [O] */
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
            ck_assert(FUT_AT(E, i, j) == (i == j ? 1.0 : 0.0));
            ck_assert(FUT_AT(E, i, 2 + j) == FUT_AT(p.A[0], i, j));
            ck_assert(FUT_AT(E, i, 4 + j) == FUT_AT(p.B[0], i, j));
        }
    arena_free(&a);
}
END_TEST

/* The general solver finds a working embedding for the sparse and looped backbones too. */
START_TEST(test_solver_on_sparse_and_looped) {
    for (int kind = FUT_SPARSE; kind <= FUT_LOOPED; kind++) {
        Arena a;
        arena_init(&a);
        FutRng rng;
        fut_rng_seed(&rng, 5);
        FutTarget t;
        fut_target_random(&a, &rng, 2, 2, 3, true, false, &t);
        FutBackbone b;
        char err[256];
        ck_assert(kind == FUT_SPARSE ? fut_backbone_sparse(&a, 2, 2, 3, true, false, &b, err, sizeof err)
                                     : fut_backbone_looped(&a, 2, 2, 3, true, false, &b, err, sizeof err));
        FutProgram p;
        ck_assert(fut_program_from_target(&a, &t, 2, 2, 3, true, &p, err, sizeof err));
        FutMat E;
        FutSolveInfo info;
        ck_assert_msg(fut_embed_solve(&a, &b, &p, false, &E, &info, err, sizeof err), "%s", err);
        FutMat X = fut_mat_new(&a, 4, 3);
        for (size_t i = 0; i < 12; i++) X.data[i] = fut_rng_gauss(&rng);
        double e = fut_mat_max_abs_diff(fut_target_forward(&a, &t, X), fut_backbone_forward(&a, &b, E, X));
        ck_assert_msg(e < 1e-9, "%s: %g", fut_kind_name((FutKind)kind), e);
        arena_free(&a);
    }
}
END_TEST

/* Smaller targets fit by padding: fewer heads, narrower, fewer layers on a residual backbone. */
START_TEST(test_padding) {
    Arena a;
    arena_init(&a);
    FutRng rng;
    fut_rng_seed(&rng, 9);
    FutTarget t;
    fut_target_random(&a, &rng, 1, 1, 2, true, true, &t);
    char err[256];
    for (int kind = FUT_SPARSE; kind <= FUT_RANDOM; kind++) {
        FutBackbone b;
        bool ok = kind == FUT_SPARSE   ? fut_backbone_sparse(&a, 2, 2, 3, true, true, &b, err, sizeof err)
                  : kind == FUT_LOOPED ? fut_backbone_looped(&a, 2, 2, 3, true, true, &b, err, sizeof err)
                                       : fut_backbone_random(&a, 2, 2, 3, true, true, 0, 4, &b, err, sizeof err);
        ck_assert(ok);
        FutMat E;
        ck_assert_msg(fut_embed(&a, &b, &t, &E, NULL, err, sizeof err), "%s", err);
        ck_assert_uint_eq(E.rows, 2);
        FutMat X = fut_mat_new(&a, 3, 2);
        for (size_t i = 0; i < 6; i++) X.data[i] = fut_rng_gauss(&rng);
        double e = fut_mat_max_abs_diff(fut_target_forward(&a, &t, X), fut_backbone_forward(&a, &b, E, X));
        ck_assert_msg(e < 1e-9, "%s: %g", fut_kind_name((FutKind)kind), e);
    }
    arena_free(&a);
}
END_TEST

START_TEST(test_errors) {
    Arena a;
    arena_init(&a);
    FutRng rng;
    fut_rng_seed(&rng, 1);
    char err[512];
    FutBackbone b;
    FutMat E;
    ck_assert(fut_backbone_sparse(&a, 1, 1, 3, false, false, &b, err, sizeof err));
    FutTarget big, deep, res, causal;
    fut_target_random(&a, &rng, 1, 1, 4, false, false, &big);
    ck_assert(!fut_embed(&a, &b, &big, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "too large") && strstr(err, "width"), "%s", err);
    fut_target_random(&a, &rng, 2, 1, 3, false, false, &deep);
    ck_assert(!fut_embed(&a, &b, &deep, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "too large") && strstr(err, "layers"), "%s", err);
    fut_target_random(&a, &rng, 1, 1, 3, true, false, &res);
    ck_assert(!fut_embed(&a, &b, &res, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "residual"), "%s", err);
    fut_target_random(&a, &rng, 1, 1, 3, false, true, &causal);
    ck_assert(!fut_embed(&a, &b, &causal, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "causal"), "%s", err);
    /* non-residual backbone cannot skip a layer */
    FutBackbone b2;
    ck_assert(fut_backbone_looped(&a, 2, 1, 3, false, false, &b2, err, sizeof err));
    ck_assert(!fut_embed(&a, &b2, &res, &E, NULL, err, sizeof err));
    FutTarget one;
    fut_target_random(&a, &rng, 1, 1, 3, false, false, &one);
    ck_assert(!fut_embed(&a, &b2, &one, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "exactly 2"), "%s", err);

    /* random backbone: m too small, then rank deficient */
    FutBackbone r;
    ck_assert(fut_backbone_random(&a, 2, 1, 2, false, false, 8, 1, &r, err, sizeof err));
    FutTarget t2;
    fut_target_random(&a, &rng, 2, 1, 2, false, false, &t2);
    ck_assert(!fut_embed(&a, &r, &t2, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "must be at least 10"), "%s", err);
    ck_assert(fut_backbone_random(&a, 2, 1, 2, false, false, 12, 1, &r, err, sizeof err));
    memset(r.rv[0].data, 0, r.m * r.m * sizeof(double)); /* every path through layer 1 collapses */
    ck_assert(!fut_embed(&a, &r, &t2, &E, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "rank-deficient"), "%s", err);
    arena_free(&a);
}
END_TEST

static void roundtrip_backbone(FutBackbone *b) {
    uint8_t *buf;
    size_t len;
    char err[512];
    ck_assert_msg(fut_backbone_serialize(b, &buf, &len, err, sizeof err), "%s", err);
    Arena a;
    arena_init(&a);
    FutBackbone c;
    ck_assert_msg(fut_backbone_parse(&a, buf, len, &c, err, sizeof err), "%s", err);
    ck_assert_int_eq(c.kind, b->kind);
    ck_assert_uint_eq(c.m, b->m);
    ck_assert_int_eq(c.tied, b->tied);
    ck_assert_int_eq(!!c.skip, !!b->skip);
    for (size_t i = 0; i < b->L * b->H; i++) {
        ck_assert(fut_mat_max_abs_diff(c.rv[i], b->rv[i]) == 0);
        ck_assert(fut_mat_max_abs_diff(c.rq[i], b->rq[i]) == 0);
    }
    ck_assert(fut_mat_max_abs_diff(c.u, b->u) == 0);
    /* truncations are rejected, never crash */
    for (size_t cut = 0; cut < len; cut += 1 + len / 50) ck_assert(!fut_backbone_parse(&a, buf, cut, &c, err, sizeof err));
    arena_free(&a);
    free(buf);
}

START_TEST(test_files) {
    Arena a;
    arena_init(&a);
    char err[512];
    FutBackbone b;
    ck_assert(fut_backbone_sparse(&a, 2, 2, 2, false, false, &b, err, sizeof err));
    roundtrip_backbone(&b);
    ck_assert(fut_backbone_looped(&a, 2, 2, 2, true, false, &b, err, sizeof err));
    roundtrip_backbone(&b);
    ck_assert(fut_backbone_random(&a, 1, 1, 2, true, true, 0, 42, &b, err, sizeof err));
    roundtrip_backbone(&b);

    FutRng rng;
    fut_rng_seed(&rng, 2);
    FutTarget t;
    fut_target_random(&a, &rng, 2, 2, 3, true, true, &t);
    uint8_t *buf;
    size_t len;
    ck_assert(fut_target_serialize(&t, &buf, &len, err, sizeof err));
    FutTarget u;
    ck_assert_msg(fut_target_parse(&a, buf, len, &u, err, sizeof err), "%s", err);
    ck_assert_uint_eq(u.L, 2);
    ck_assert(u.residual && u.causal);
    ck_assert(fut_mat_max_abs_diff(u.heads[3].wo, t.heads[3].wo) == 0);
    for (size_t cut = 0; cut < len; cut += 7) ck_assert(!fut_target_parse(&a, buf, cut, &u, err, sizeof err));
    /* a NaN weight */
    uint8_t *bad = malloc(len);
    memcpy(bad, buf, len);
    double nan = NAN;
    memcpy(bad + len - 8, &nan, 8);
    ck_assert(!fut_target_parse(&a, bad, len, &u, err, sizeof err));
    ck_assert_msg(strstr(err, "non-finite"), "%s", err);
    free(bad);
    free(buf);
    /* a backbone file is not a target file */
    ck_assert(fut_backbone_serialize(&b, &buf, &len, err, sizeof err));
    ck_assert(!fut_target_parse(&a, buf, len, &u, err, sizeof err));
    ck_assert_msg(strstr(err, "not a raspfut-target"), "%s", err);
    free(buf);

    /* embedding: roundtrip and backbone identity */
    FutTarget small;
    fut_target_random(&a, &rng, 1, 1, 2, true, true, &small);
    FutMat E;
    ck_assert_msg(fut_embed(&a, &b, &small, &E, NULL, err, sizeof err), "%s", err);
    ck_assert(fut_embedding_serialize(&b, E, &buf, &len, err, sizeof err));
    FutEmbedding e;
    ck_assert(fut_embedding_parse(&a, buf, len, &e, err, sizeof err));
    ck_assert(fut_embedding_matches(&e, &b, err, sizeof err));
    FutBackbone other;
    ck_assert(fut_backbone_random(&a, 1, 1, 2, true, true, 0, 43, &other, err, sizeof err));
    ck_assert(!fut_embedding_matches(&e, &other, err, sizeof err));
    free(buf);
    arena_free(&a);
}
END_TEST

/* A one-head target file whose w_q/w_k (or w_v/w_o) have an inner extent of 0: refused with a
 * message that says so, not a shape "mismatch" between two equal shapes. */
static void check_empty_head(bool empty_dk, const char *want) {
    Arena a;
    arena_init(&a);
    double w[9] = {0};
    size_t dk = empty_dk ? 0 : 3, dv = empty_dk ? 3 : 0;
    StTensor t[4] = {
        {.name = "layers.0.heads.0.w_q", .dtype = ST_F64, .ndim = 2, .shape = {3, dk}, .data = w, .nbytes = 24 * dk},
        {.name = "layers.0.heads.0.w_k", .dtype = ST_F64, .ndim = 2, .shape = {3, dk}, .data = w, .nbytes = 24 * dk},
        {.name = "layers.0.heads.0.w_v", .dtype = ST_F64, .ndim = 2, .shape = {3, dv}, .data = w, .nbytes = 24 * dv},
        {.name = "layers.0.heads.0.w_o", .dtype = ST_F64, .ndim = 2, .shape = {dv, 3}, .data = w, .nbytes = 24 * dv},
    };
    StMeta meta[] = {{"format", "raspfut-target"}, {"version", "1"}, {"layers", "1"}, {"heads", "1"},
                     {"width", "3"}, {"residual", "false"}, {"causal", "false"}};
    StFile f = {t, 4, meta, sizeof meta / sizeof *meta};
    uint8_t *buf;
    size_t len;
    char err[512];
    ck_assert_msg(st_serialize(&f, &buf, &len, err, sizeof err), "%s", err);
    FutTarget u;
    ck_assert(!fut_target_parse(&a, buf, len, &u, err, sizeof err));
    ck_assert_msg(strcmp(err, want) == 0, "got '%s'", err);
    free(buf);
    arena_free(&a);
}

START_TEST(test_empty_head) {
    check_empty_head(true, "tensor 'layers.0.heads.0.w_q' has shape [3, 0]: an empty matrix (every extent must be at "
                           "least 1: a head needs d_k >= 1)");
    check_empty_head(false, "tensor 'layers.0.heads.0.w_v' has shape [3, 0]: an empty matrix (every extent must be at "
                            "least 1: a head needs d_v >= 1)");
}
END_TEST

static void check_task(const FutTask *task, FutKind kind, size_t d, bool residual) {
    Arena a;
    arena_init(&a);
    char err[512];
    FutBackbone b;
    bool ok = kind == FUT_SPARSE ? fut_backbone_sparse(&a, 1, 1, d, residual, false, &b, err, sizeof err)
                                 : fut_backbone_random(&a, 1, 1, d, residual, false, 0, 77, &b, err, sizeof err);
    ck_assert_msg(ok, "%s", err);
    FutTaskResult r;
    ck_assert_msg(fut_task_check(&b, task, 200, 5, &r, err, sizeof err), "%s", err);
    ck_assert_uint_eq(r.inputs, 200);
    ck_assert_uint_eq(r.target_correct, r.answers);
    ck_assert_uint_eq(r.ut_correct, r.answers);
    arena_free(&a);
}

START_TEST(test_match2) {
    FutTask t = {.kind = FUT_TASK_MATCH2, .M = 5, .max_len = 8};
    check_task(&t, FUT_SPARSE, 5, true);
    check_task(&t, FUT_RANDOM, 5, true);
    /* hand check: tokens 1 2 3 mod 5: 2+3 = 5 so positions 1, 2 answer yes, position 0 (1+1, 1+2, 1+3) no */
    Arena a;
    arena_init(&a);
    FutTarget target;
    fut_task_target(&a, &t, &target);
    FutMat X = fut_mat_new(&a, 3, 5);
    size_t tok[3] = {1, 2, 3};
    for (size_t i = 0; i < 3; i++) FUT_AT(X, i, tok[i]) = 1;
    FutMat Y = fut_target_forward(&a, &target, X);
    ck_assert_int_eq(fut_task_readout(&t, Y, 0), 0);
    ck_assert_int_eq(fut_task_readout(&t, Y, 1), 1);
    ck_assert_int_eq(fut_task_readout(&t, Y, 2), 1);
    for (size_t i = 0; i < 3; i++) ck_assert_int_eq(fut_task_truth(&t, tok, 3, i), i != 0);
    arena_free(&a);
}
END_TEST

START_TEST(test_parity) {
    FutTask t = {.kind = FUT_TASK_PARITY, .n = 6, .k = 3, .positions = {0, 2, 5}};
    check_task(&t, FUT_SPARSE, 8, false);
    check_task(&t, FUT_RANDOM, 8, false);
    FutTask bad = {.kind = FUT_TASK_PARITY, .n = 4, .k = 2, .positions = {1, 1}};
    char err[256];
    ck_assert(!fut_task_validate(&bad, err, sizeof err));
}
END_TEST

int main(void) {
    Suite *s = suite_create("fut");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_selftest_sweep_small);
    tcase_add_test(tc, test_widths);
    tcase_add_test(tc, test_one_layer_blocks);
    tcase_add_test(tc, test_solver_on_sparse_and_looped);
    tcase_add_test(tc, test_padding);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_files);
    tcase_add_test(tc, test_empty_head);
    tcase_add_test(tc, test_match2);
    tcase_add_test(tc, test_parity);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
