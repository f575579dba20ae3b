/* The training engine (train/): every layer's backward pass against central finite differences
 * of its forward pass, the whole model's gradients for every backbone and option, the task
 * generators against their definitions, reproducibility, and a short Dyck-1 training run. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "train/layers.h"
#include "train/model.h"
#include "train/task.h"

/* ---- finite differences of single layers ------------------------------------------------
 * Each check defines loss(x) = sum_i w_i out_i(x) for fixed random w, runs the backward pass
 * with dOut = w, and compares each gradient entry g with (loss(x + h) - loss(x - h)) / 2h. */

#define FD_H 1e-6
#define FD_TOL 1e-6 /* on |g - fd| / max(1, |g|, |fd|) */

static void fill(FutRng *r, double *x, size_t n, double sd) {
    for (size_t i = 0; i < n; i++) x[i] = sd * fut_rng_gauss(r);
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void assert_close(const char *what, size_t i, double g, double fd) {
    double scale = fmax(1.0, fmax(fabs(g), fabs(fd)));
    ck_assert_msg(fabs(g - fd) <= FD_TOL * scale, "%s[%zu]: backward %.10g, finite difference %.10g", what, i, g, fd);
}

/* A layer under test: forward(ctx, out) reads the inputs registered in ctx. */
typedef void (*ForwardFn)(void *ctx, double *out);

/* Checks the analytic gradient g (n entries) of loss w.r.t. the input x. */
static void check_input(const char *what, ForwardFn f, void *ctx, double *x, size_t n, const double *g,
                        const double *w, size_t n_out) {
    double *out = malloc(n_out * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        double keep = x[i];
        x[i] = keep + FD_H;
        f(ctx, out);
        double up = dot(w, out, n_out);
        x[i] = keep - FD_H;
        f(ctx, out);
        double down = dot(w, out, n_out);
        x[i] = keep;
        assert_close(what, i, g[i], (up - down) / (2 * FD_H));
    }
    free(out);
}

/* matmul + bias */
typedef struct MatmulCtx {
    double *X, *W, *b;
    size_t R, Cin, Cout;
} MatmulCtx;

static void matmul_fwd(void *p, double *out) {
    MatmulCtx *c = p;
    matmul_forward_f64(out, c->X, c->W, c->R, c->Cin, c->Cout, 0);
    bias_forward_f64(out, c->b, c->R, c->Cout);
}

START_TEST(test_fd_matmul_bias) {
    FutRng r;
    fut_rng_seed(&r, 1);
    MatmulCtx c = {.R = 4, .Cin = 3, .Cout = 5};
    double X[12], W[15], b[5], w[20], dX[12] = {0}, dW[15] = {0}, db[5] = {0};
    fill(&r, X, 12, 1);
    fill(&r, W, 15, 1);
    fill(&r, b, 5, 1);
    fill(&r, w, 20, 1);
    c.X = X, c.W = W, c.b = b;
    matmul_backward_f64(dX, dW, w, X, W, c.R, c.Cin, c.Cout);
    bias_backward_f64(db, w, c.R, c.Cout);
    check_input("matmul dX", matmul_fwd, &c, X, 12, dX, w, 20);
    check_input("matmul dW", matmul_fwd, &c, W, 15, dW, w, 20);
    check_input("bias db", matmul_fwd, &c, b, 5, db, w, 20);
}
END_TEST

typedef struct LnCtx {
    double *X, *g, *b;
    size_t R, C;
} LnCtx;

static void ln_fwd(void *p, double *out) {
    LnCtx *c = p;
    double mean[8], rstd[8];
    layernorm_forward_f64(out, mean, rstd, c->X, c->g, c->b, c->R, c->C);
}

START_TEST(test_fd_layernorm) {
    FutRng r;
    fut_rng_seed(&r, 2);
    LnCtx c = {.R = 3, .C = 6};
    double X[18], g[6], b[6], w[18], out[18], mean[3], rstd[3], dX[18] = {0}, dg[6] = {0}, db[6] = {0};
    fill(&r, X, 18, 2);
    fill(&r, g, 6, 1);
    fill(&r, b, 6, 1);
    fill(&r, w, 18, 1);
    c.X = X, c.g = g, c.b = b;
    layernorm_forward_f64(out, mean, rstd, X, g, b, c.R, c.C);
    layernorm_backward_f64(dX, dg, db, w, X, g, mean, rstd, c.R, c.C);
    check_input("layernorm dX", ln_fwd, &c, X, 18, dX, w, 18);
    check_input("layernorm dg", ln_fwd, &c, g, 6, dg, w, 18);
    check_input("layernorm db", ln_fwd, &c, b, 6, db, w, 18);
}
END_TEST

typedef struct ReluCtx {
    double *X;
    size_t n;
} ReluCtx;

static void relu_fwd(void *p, double *out) {
    ReluCtx *c = p;
    relu_forward_f64(out, c->X, c->n);
}

START_TEST(test_fd_relu) {
    FutRng r;
    fut_rng_seed(&r, 3);
    double X[16], w[16], dX[16] = {0};
    fill(&r, X, 16, 1);
    for (size_t i = 0; i < 16; i++)
        if (fabs(X[i]) < 0.01) X[i] = 0.5; /* away from the kink */
    fill(&r, w, 16, 1);
    ReluCtx c = {X, 16};
    relu_backward_f64(dX, w, X, 16);
    check_input("relu dX", relu_fwd, &c, X, 16, dX, w, 16);
}
END_TEST

typedef struct RotCtx {
    double *X;
    const uint32_t *pos;
    size_t R, d;
} RotCtx;

static void rot_fwd(void *p, double *out) {
    RotCtx *c = p;
    memcpy(out, c->X, c->R * c->d * sizeof *out);
    rotary_forward_f64(out, c->pos, c->R, c->d);
}

START_TEST(test_fd_rotary) {
    FutRng r;
    fut_rng_seed(&r, 4);
    const uint32_t pos[3] = {0, 3, 7};
    double X[15], w[15], dX[15];
    fill(&r, X, 15, 1);
    fill(&r, w, 15, 1);
    memcpy(dX, w, sizeof dX);
    rotary_backward_f64(dX, pos, 3, 5); /* d = 5: an odd coordinate stays */
    RotCtx c = {X, pos, 3, 5};
    check_input("rotary dX", rot_fwd, &c, X, 15, dX, w, 15);
    /* the rotation keeps norms, and position 0 is the identity */
    double out[15];
    rot_fwd(&c, out);
    for (size_t i = 0; i < 5; i++) ck_assert(out[i] == X[i]);
    ck_assert(fabs(dot(out, out, 15) - dot(X, X, 15)) < 1e-12);
}
END_TEST

typedef struct AttCtx {
    double *Q, *K, *V, *P;
    size_t n_seg, seg_row[2], seg_len[2], seg_p[2], d, m, R;
    bool causal;
} AttCtx;

static void att_fwd(void *p, double *out) {
    AttCtx *c = p;
    memset(out, 0, c->R * c->m * sizeof *out);
    attention_forward_f64(out, c->P, c->Q, c->K, c->V, c->n_seg, c->seg_row, c->seg_len, c->seg_p, c->d, c->m,
                          c->causal);
}

START_TEST(test_fd_attention) {
    for (int causal = 0; causal < 2; causal++) {
        FutRng r;
        fut_rng_seed(&r, 5 + (uint64_t)causal);
        /* two segments of 3 and 4 rows: attention must not cross them */
        AttCtx c = {.n_seg = 2, .seg_row = {0, 3}, .seg_len = {3, 4}, .seg_p = {0, 9}, .d = 2, .m = 3, .R = 7,
                    .causal = causal};
        double Q[14], K[14], V[21], P[25], w[21], out[21], dQ[14] = {0}, dK[14] = {0}, dV[21] = {0}, scratch[16];
        fill(&r, Q, 14, 1);
        fill(&r, K, 14, 1);
        fill(&r, V, 21, 1);
        fill(&r, w, 21, 1);
        c.Q = Q, c.K = K, c.V = V, c.P = P;
        att_fwd(&c, out);
        attention_backward_f64(dQ, dK, dV, scratch, w, P, Q, K, V, c.n_seg, c.seg_row, c.seg_len, c.seg_p, c.d, c.m);
        check_input("attention dQ", att_fwd, &c, Q, 14, dQ, w, 21);
        check_input("attention dK", att_fwd, &c, K, 14, dK, w, 21);
        check_input("attention dV", att_fwd, &c, V, 21, dV, w, 21);
        /* the weights of a row sum to 1, and causal rows put none on later keys */
        att_fwd(&c, out);
        for (size_t s = 0; s < 2; s++)
            for (size_t i = 0; i < c.seg_len[s]; i++) {
                double sum = 0;
                for (size_t j = 0; j < c.seg_len[s]; j++) {
                    double pij = P[c.seg_p[s] + i * c.seg_len[s] + j];
                    sum += pij;
                    if (causal && j > i) ck_assert(pij == 0);
                }
                ck_assert(fabs(sum - 1) < 1e-12);
            }
    }
}
END_TEST

typedef struct CeCtx {
    double *Z;
    size_t rows[3];
    uint32_t labels[3];
} CeCtx;

static void ce_fwd(void *p, double *out) {
    CeCtx *c = p;
    double probs[20];
    out[0] = crossentropy_forward_f64(probs, c->Z, c->rows, c->labels, 3, 4);
}

START_TEST(test_fd_crossentropy) {
    FutRng r;
    fut_rng_seed(&r, 7);
    CeCtx c = {.rows = {0, 2, 4}, .labels = {1, 3, 0}};
    double Z[20], probs[20], dZ[20] = {0}, w[1] = {1};
    fill(&r, Z, 20, 2);
    c.Z = Z;
    crossentropy_forward_f64(probs, Z, c.rows, c.labels, 3, 4);
    crossentropy_backward_f64(dZ, probs, c.rows, c.labels, 3, 4);
    check_input("crossentropy dZ", ce_fwd, &c, Z, 20, dZ, w, 1);
    for (size_t i = 4; i < 8; i++) ck_assert(dZ[i] == 0); /* row 1 has no answer */
}
END_TEST

typedef struct EmbCtx {
    double *E;
    const uint32_t *ids, *pos;
} EmbCtx;

static void emb_fwd(void *p, double *out) {
    EmbCtx *c = p;
    embedding_forward_f64(out, c->E, c->ids, c->pos, 4, 3, 3);
}

START_TEST(test_fd_embedding) {
    FutRng r;
    fut_rng_seed(&r, 8);
    const uint32_t ids[4] = {2, 0, 1, 0}, pos[4] = {0, 1, 2, 3};
    double E[21], w[12], dE[21] = {0}; /* 3 token rows + 4 position rows, width 3 */
    fill(&r, E, 21, 1);
    fill(&r, w, 12, 1);
    embedding_backward_f64(dE, w, ids, pos, 4, 3, 3);
    EmbCtx c = {E, ids, pos};
    check_input("embedding dE", emb_fwd, &c, E, 21, dE, w, 12);
}
END_TEST

/* ---- the whole model --------------------------------------------------------------------- */

static TrConfig small_config(TrKind kind, bool residual, bool ln, bool mlp, bool causal, TrPos pos) {
    return (TrConfig){.kind = kind, .L = 2, .H = 2, .d = 2, .residual = residual, .layernorm = ln, .mlp = mlp,
                      .causal = causal, .mlp_hidden = 5, .pos = pos, .vocab = 3, .max_len = 5, .classes = 4,
                      .precision = TR_F64, .seed = 3, .init_embed = 0.7};
}

static void draw_examples(TrExample *ex, size_t n, uint64_t seed) {
    FutRng r;
    fut_rng_seed(&r, seed);
    TrTask t = tr_task_default(TR_KHOP, 4, 1);
    t.alphabet = 3;
    for (size_t i = 0; i < n; i++) {
        tr_task_draw(&t, &r, &ex[i]);
        ex[i].len = 2 + i % 3; /* segments of different lengths */
        ex[i].n_answers = ex[i].len;
    }
}

/* Every parameter's gradient (all tensors, trainable or not) against finite differences of
 * the loss, for a model on a batch of three examples. */
static void check_model(const TrConfig *cfg, const char *what) {
    TrModel md;
    char err[256];
    ck_assert_msg(tr_model_init(&md, cfg, 3, err, sizeof err), "%s: %s", what, err);
    TrExample ex[3];
    draw_examples(ex, 3, 42);
    Arena a;
    arena_init(&a);
    TrBatch b;
    tr_batch_build(&a, &md, ex, 3, &b);
    tr_model_forward(&md, &b);
    tr_model_backward(&md, &b, true);
    size_t checked = 0;
    for (size_t t = 0; t < md.params.n; t++) {
        const TrTensor *T = &md.params.t[t];
        size_t n = T->rows * T->cols, step = n > 40 ? n / 23 : 1;
        for (size_t i = 0; i < n; i += step) {
            double g = tr_model_grad_at(&md, t, i), keep = tr_model_param_at(&md, t, i);
            tr_model_param_put(&md, t, i, keep + FD_H);
            double up = tr_model_forward(&md, &b);
            tr_model_param_put(&md, t, i, keep - FD_H);
            double down = tr_model_forward(&md, &b);
            tr_model_param_put(&md, t, i, keep);
            double fd = (up - down) / (2 * FD_H);
            double scale = fmax(1.0, fmax(fabs(g), fabs(fd)));
            ck_assert_msg(fabs(g - fd) <= 1e-5 * scale, "%s: %s[%zu]: backward %.10g, finite difference %.10g", what,
                          T->name, i, g, fd);
            checked++;
        }
    }
    ck_assert_uint_gt(checked, 20);
    arena_free(&a);
    tr_model_free(&md);
}

START_TEST(test_model_gradients) {
    static const TrKind kinds[] = {TR_SPARSE, TR_LOOPED, TR_RANDOM, TR_FULL};
    char what[128];
    for (size_t k = 0; k < 4; k++)
        for (int res = 0; res < 2; res++)
            for (int ln = 0; ln < 2; ln++)
                for (int mlp = 0; mlp < 2; mlp++) {
                    TrConfig c = small_config(kinds[k], res, ln, mlp, (ln + mlp) % 2, (TrPos)((res + ln + mlp) % 3));
                    snprintf(what, sizeof what, "%s residual=%d layernorm=%d mlp=%d causal=%d pos=%s",
                             tr_kind_name(c.kind), res, ln, mlp, c.causal, tr_pos_name(c.pos));
                    check_model(&c, what);
                }
}
END_TEST

/* The engine's forward pass equals fut's reference forward pass of the same backbone, when the
 * configuration is one fut computes (attention only, plain or skip residual). */
START_TEST(test_forward_matches_fut) {
    static const TrKind kinds[] = {TR_SPARSE, TR_LOOPED, TR_RANDOM};
    for (size_t k = 0; k < 3; k++)
        for (int res = 0; res < 2; res++) {
            TrConfig c = small_config(kinds[k], res, false, false, res == 0, TR_POS_ABSOLUTE);
            c.classes = 2;
            TrModel md;
            char err[256];
            ck_assert_msg(tr_model_init(&md, &c, 1, err, sizeof err), "%s", err);
            TrExample ex[1];
            draw_examples(ex, 1, 9);
            Arena a;
            arena_init(&a);
            TrBatch b;
            tr_batch_build(&a, &md, ex, 1, &b);
            tr_model_forward(&md, &b);
            /* fut: X one-hot [token | position], E as trained, U = the unembedding */
            size_t n = ex[0].len + 1;
            FutMat X = fut_mat_new(&a, n, md.d_in), E = fut_mat_new(&a, md.d_in, md.m);
            for (size_t r = 0; r < n; r++) {
                FUT_AT(X, r, b.ids[r]) = 1;
                FUT_AT(X, r, c.vocab + 1 + b.pos[r]) = 1;
            }
            tr_model_get(&md, md.embed, E.data);
            FutBackbone bb = md.backbone;
            bb.u = fut_mat_new(&a, md.m, c.d); /* fut reads d columns of Y U: put U in the first ones */
            double *U = malloc(md.m * c.classes * sizeof *U);
            tr_model_get(&md, md.unembed, U);
            for (size_t i = 0; i < md.m; i++)
                for (size_t j = 0; j < c.classes; j++) FUT_AT(bb.u, i, j) = U[i * c.classes + j];
            free(U);
            FutMat Y = fut_backbone_forward(&a, &bb, E, X);
            for (size_t r = 0; r < n; r++)
                for (size_t j = 0; j < c.classes; j++) {
                    double mine = ((double *)md.act)[md.acts.t[md.logits].offset + r * c.classes + j];
                    ck_assert_msg(fabs(mine - FUT_AT(Y, r, j)) < 1e-12, "%s residual=%d: row %zu col %zu: %g vs %g",
                                  tr_kind_name(c.kind), res, r, j, mine, FUT_AT(Y, r, j));
                }
            arena_free(&a);
            tr_model_free(&md);
        }
}
END_TEST

Suite *train_suite(void) {
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("layers");
    tcase_add_test(tc, test_fd_matmul_bias);
    tcase_add_test(tc, test_fd_layernorm);
    tcase_add_test(tc, test_fd_relu);
    tcase_add_test(tc, test_fd_rotary);
    tcase_add_test(tc, test_fd_attention);
    tcase_add_test(tc, test_fd_crossentropy);
    tcase_add_test(tc, test_fd_embedding);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("model");
    tcase_set_timeout(tm, 60);
    tcase_add_test(tm, test_model_gradients);
    tcase_add_test(tm, test_forward_matches_fut);
    suite_add_tcase(s, tm);
    return s;
}

int main(void) { return run_suite(train_suite()); }
