/* The training engine (train/): every layer's backward pass against central finite differences
 * of its forward pass, the whole model's gradients for every backbone and option, the task
 * generators against their definitions, reproducibility, and a short Dyck-1 training run. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "tests/check_main.h"
#include "fut/io.h"
#include "train/cli.h"
#include "train/io.h"
#include "train/layers.h"
#include "train/model.h"
#include "train/programmed.h"
#include "train/task.h"
#include "train/trainer.h"

/* ---- finite differences of single layers ------------------------------------------------
 * Each check defines loss(x) = sum_i w_i out_i(x) for fixed random w, runs the backward pass
 * with dOut = w, and compares each gradient entry g with (loss(x + h) - loss(x - h)) / 2h. */

#define FD_H 1e-6
#define DYCK_SHORT_N 16
#define DYCK_SHORT_STEPS 10000
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

/* ---- generators --------------------------------------------------------------------------- */

/* hop_k straight from the definition, O(n^2 k): find(i) = max { j : 1 <= j <= i, x_{j-1} = x_i }. */
static int hop_direct(const uint8_t *x, size_t i, size_t k) {
    long at = (long)i;
    for (size_t h = 0; h < k; h++) {
        long found = -1;
        for (long j = 1; j <= at; j++)
            if (x[j - 1] == x[at]) found = j;
        if (found < 0) return -1;
        at = found;
    }
    return x[at];
}

START_TEST(test_khop_definition) {
    /* worked example (alphabet 3, none = 3): x = 0 1 0 2 1 0 */
    const uint8_t x[6] = {0, 1, 0, 2, 1, 0};
    uint16_t h1[6], h2[6];
    tr_khop_answers(x, 6, 1, 3, h1);
    tr_khop_answers(x, 6, 2, 3, h2);
    const uint16_t want1[6] = {3, 3, 1, 3, 0, 2}, want2[6] = {3, 3, 3, 3, 1, 3};
    for (size_t i = 0; i < 6; i++) {
        ck_assert_uint_eq(h1[i], want1[i]);
        ck_assert_uint_eq(h2[i], want2[i]);
    }
    /* the generator against the direct definition */
    FutRng r;
    fut_rng_seed(&r, 5);
    for (size_t k = 1; k <= 3; k++) {
        TrTask t = tr_task_default(TR_KHOP, 24, k);
        for (int e = 0; e < 200; e++) {
            TrExample ex;
            tr_task_draw(&t, &r, &ex);
            ck_assert_uint_eq(ex.len, 24);
            ck_assert_uint_eq(ex.n_answers, 24);
            for (size_t i = 0; i < ex.len; i++) {
                ck_assert_uint_lt(ex.tok[i], 4);
                int want = hop_direct(ex.tok, i, k);
                ck_assert_uint_eq(ex.answers[i].pos, i);
                ck_assert_uint_eq(ex.answers[i].label, want < 0 ? 4u : (unsigned)want);
            }
        }
    }
}
END_TEST

static bool balanced_by_counting(const uint8_t *x, size_t n) {
    long depth = 0, lowest = 0;
    for (size_t i = 0; i < n; i++) {
        depth += x[i] == 0 ? 1 : -1;
        if (depth < lowest) lowest = depth;
    }
    return depth == 0 && lowest == 0;
}

START_TEST(test_dyck1_generator) {
    FutRng r;
    fut_rng_seed(&r, 6);
    TrTask t = tr_task_default(TR_DYCK1, 6, 0);
    enum { N = 30000 };
    size_t balanced = 0, unbalanced = 0, equal = 0, by_len[7] = {0}, words[64] = {0}, six = 0;
    for (int e = 0; e < N; e++) {
        TrExample ex;
        tr_task_draw(&t, &r, &ex);
        ck_assert(ex.len >= 2 && ex.len <= 6 && ex.len % 2 == 0);
        ck_assert_uint_eq(ex.n_answers, 1);
        ck_assert_uint_eq(ex.answers[0].pos, ex.len - 1);
        bool bal = balanced_by_counting(ex.tok, ex.len);
        ck_assert_uint_eq(ex.answers[0].label, bal);
        ck_assert_uint_eq(tr_dyck1_balanced(ex.tok, ex.len), bal);
        by_len[ex.len]++;
        if (bal) {
            balanced++;
            if (ex.len == 6) {
                size_t code = 0;
                for (size_t i = 0; i < 6; i++) code = 2 * code + ex.tok[i];
                words[code]++;
                six++;
            }
        } else {
            unbalanced++;
            size_t opens = 0;
            for (size_t i = 0; i < ex.len; i++) opens += ex.tok[i] == 0;
            equal += 2 * opens == ex.len;
        }
    }
    /* rates: half balanced, half of the rest with equal counts; lengths uniform */
    ck_assert(fabs((double)balanced / N - 0.5) < 0.02);
    ck_assert(fabs((double)equal / (double)unbalanced - 0.5) < 0.02);
    for (size_t l = 2; l <= 6; l += 2) ck_assert(fabs((double)by_len[l] / N - 1.0 / 3) < 0.02);
    /* the 5 balanced strings of length 6 come equally often (cycle lemma) */
    size_t kinds = 0;
    for (size_t c = 0; c < 64; c++)
        if (words[c]) {
            kinds++;
            ck_assert_msg(fabs((double)words[c] / (double)six - 0.2) < 0.03, "word %zu: %zu of %zu", c, words[c], six);
        }
    ck_assert_uint_eq(kinds, 5);
}
END_TEST

/* ---- runs, files, programmed embeddings ---------------------------------------------------- */

static TrConfig dyck_config(TrKind kind, size_t n, size_t d, TrPrecision prec) {
    return (TrConfig){.kind = kind, .L = 2, .H = 1, .d = d, .causal = true, .pos = TR_POS_ABSOLUTE, .vocab = 2,
                      .max_len = n, .classes = 2, .precision = prec, .seed = 1};
}

START_TEST(test_reproducible) {
    for (int prec = 0; prec < 2; prec++) {
        double first[50];
        for (int run = 0; run < 2; run++) {
            TrModel md;
            char err[256];
            TrConfig c = dyck_config(TR_RANDOM, 8, 4, (TrPrecision)prec);
            c.residual = c.layernorm = c.mlp = true;
            ck_assert(tr_model_init(&md, &c, 16, err, sizeof err));
            TrTask task = tr_task_default(TR_DYCK1, 8, 0);
            TrTrainOptions o = tr_train_defaults();
            o.steps = 50;
            o.batch = 16;
            o.test_size = 100;
            o.data_seed = 3;
            TrTrainResult r;
            ck_assert(tr_train(&md, &task, &o, &r, err, sizeof err));
            for (size_t i = 0; i < 50; i++) {
                if (run == 0) first[i] = r.loss[i];
                else ck_assert_msg(memcmp(&first[i], &r.loss[i], sizeof(double)) == 0, "step %zu: %.17g vs %.17g", i,
                                   first[i], r.loss[i]);
            }
            ck_assert(r.loss[49] < r.loss[0]); /* and it learns something */
            tr_train_result_free(&r);
            tr_model_free(&md);
        }
    }
}
END_TEST

/* Predictions of md on a fixed set of examples. */
static void predictions(TrModel *md, const TrTask *t, uint32_t *pred, size_t *n_ans) {
    TrExample ex[8];
    FutRng r;
    fut_rng_seed(&r, 77);
    for (size_t i = 0; i < 8; i++) tr_task_draw(t, &r, &ex[i]);
    Arena a;
    arena_init(&a);
    TrBatch b;
    tr_batch_build(&a, md, ex, 8, &b);
    tr_model_forward(md, &b);
    tr_model_predictions(md, &b, pred);
    *n_ans = b.n_answers;
    arena_free(&a);
}

START_TEST(test_file_round_trip) {
    TrModel md, back;
    char err[512];
    TrConfig c = dyck_config(TR_LOOPED, 8, 3, TR_F32);
    c.residual = c.layernorm = c.mlp = true;
    c.pos = TR_POS_ROTARY;
    c.d = 4;
    ck_assert_msg(tr_model_init(&md, &c, 8, err, sizeof err), "%s", err);
    TrTask task = tr_task_default(TR_DYCK1, 8, 0);
    TrTrainOptions o = tr_train_defaults();
    o.steps = 20;
    o.batch = 8;
    o.test_size = 10;
    TrTrainResult r;
    ck_assert(tr_train(&md, &task, &o, &r, err, sizeof err));
    tr_train_result_free(&r);
    uint8_t *buf;
    size_t len;
    TrFileInfo info = {.steps = 20, .accuracy = 0.5};
    ck_assert_msg(tr_model_serialize(&md, &task, &info, &buf, &len, err, sizeof err), "%s", err);
    TrTask task2;
    ck_assert_msg(tr_model_parse(buf, len, 8, &back, &task2, err, sizeof err), "%s", err);
    ck_assert_uint_eq(back.params.n, md.params.n);
    for (size_t t = 0; t < md.params.n; t++)
        for (size_t i = 0; i < md.params.t[t].rows * md.params.t[t].cols; i++)
            ck_assert(tr_model_param_at(&md, t, i) == tr_model_param_at(&back, t, i));
    uint32_t p1[8], p2[8];
    size_t n1, n2;
    predictions(&md, &task, p1, &n1);
    predictions(&back, &task2, p2, &n2);
    ck_assert_uint_eq(n1, n2);
    ck_assert(memcmp(p1, p2, n1 * sizeof *p1) == 0);
    tr_model_free(&back);
    /* damaged files are refused with a message */
    for (size_t cut = 0; cut < len; cut += len / 7 + 1) {
        err[0] = 0;
        ck_assert(!tr_model_parse(buf, cut, 8, &back, &task2, err, sizeof err));
        ck_assert(err[0]);
    }
    free(buf);
    /* raspfut cannot state layer norms: the export says so */
    ck_assert(!tr_model_fut_exportable(&md, err, sizeof err));
    ck_assert(strstr(err, "layer norm"));
    tr_model_free(&md);
}
END_TEST

/* The raspfut backbone and embedding written for a trained attention-only model compute its
 * logits: fut's forward pass on X from tr_print_input. */
START_TEST(test_fut_export) {
    TrModel md;
    char err[512];
    TrConfig c = dyck_config(TR_RANDOM, 6, 4, TR_F64);
    c.residual = true;
    ck_assert(tr_model_init(&md, &c, 4, err, sizeof err));
    uint8_t *bb, *emb;
    size_t bb_len, emb_len;
    ck_assert_msg(tr_model_export_fut(&md, &bb, &bb_len, &emb, &emb_len, err, sizeof err), "%s", err);
    Arena a;
    arena_init(&a);
    FutBackbone b;
    FutEmbedding e;
    ck_assert_msg(fut_backbone_parse(&a, bb, bb_len, &b, err, sizeof err), "%s", err);
    ck_assert_msg(fut_embedding_parse(&a, emb, emb_len, &e, err, sizeof err), "%s", err);
    ck_assert(fut_embedding_matches(&e, &b, err, sizeof err));
    const uint8_t tok[4] = {0, 0, 1, 1};
    char *text;
    size_t text_len;
    FILE *f = open_memstream(&text, &text_len);
    tr_print_input(f, &md, tok, 4);
    fclose(f);
    /* parse the printed rows back: numbers separated by ',' and rows by ';' */
    FutMat X = fut_mat_new(&a, 5, md.d_in);
    size_t at = 0;
    for (const char *p = text; *p; p++)
        if (*p == '0' || *p == '1') X.data[at++] = *p - '0';
    free(text);
    ck_assert_uint_eq(at, 5 * md.d_in);
    FutMat Y = fut_backbone_forward(&a, &b, e.E, X);
    TrExample ex = {.len = 4, .tok = {0, 0, 1, 1}, .n_answers = 1, .answers = {{3, 1}}};
    TrBatch batch;
    tr_batch_build(&a, &md, &ex, 1, &batch);
    tr_model_forward(&md, &batch);
    const double *logits = (const double *)md.act + md.acts.t[md.logits].offset;
    for (size_t r = 0; r < 5; r++)
        for (size_t j = 0; j < 2; j++) ck_assert(fabs(FUT_AT(Y, r, j) - logits[r * 2 + j]) < 1e-12);
    free(bb);
    free(emb);
    arena_free(&a);
    tr_model_free(&md);
}
END_TEST

/* Programmed embeddings: every held-out answer right, sparse and random, no gradient. */
START_TEST(test_programmed) {
    for (int kind = 0; kind < 2; kind++)
        for (size_t k = 0; k <= 2; k++) {
            TrTask task = k == 0 ? tr_task_default(TR_DYCK1, 10, 0) : tr_task_default(TR_KHOP, 10, k);
            Arena a;
            arena_init(&a);
            TrProgrammed pg;
            char err[512];
            ck_assert(tr_programmed_target(&a, &task, &pg, err, sizeof err));
            TrConfig c = {.kind = kind ? TR_RANDOM : TR_SPARSE, .L = pg.target.L, .H = 1, .d = pg.target.d,
                          .residual = true, .causal = true, .pos = TR_POS_ABSOLUTE, .vocab = tr_task_vocab(&task),
                          .max_len = task.max_len, .classes = tr_task_classes(&task), .precision = TR_F64, .seed = 4};
            arena_free(&a);
            TrModel md;
            ck_assert_msg(tr_model_init(&md, &c, 16, err, sizeof err), "%s", err);
            ck_assert_msg(tr_programmed_init(&md, &task, err, sizeof err), "%s", err);
            TrExample ex[300];
            tr_test_set(&task, 9, ex, 300);
            size_t answers, correct;
            double loss;
            double acc = tr_evaluate(&md, ex, 300, &answers, &correct, NULL, &loss);
            ck_assert_msg(acc == 1.0, "%s k=%zu on %s: %zu of %zu", tr_task_name(task.kind), k,
                          tr_kind_name(c.kind), correct, answers);
            ck_assert(loss < 1e-6); /* logit margins of 20 */
            tr_model_free(&md);
        }
}
END_TEST

/* The short version of the Dyck-1 run of docs/experiments.md: the sparse backbone, E and U
 * trained, held-out accuracy at least 99%. */
START_TEST(test_dyck1_short_run) {
    TrModel md;
    char err[256];
    TrConfig c = dyck_config(TR_SPARSE, DYCK_SHORT_N, 4, TR_F32);
    ck_assert(tr_model_init(&md, &c, 32, err, sizeof err));
    TrTask task = tr_task_default(TR_DYCK1, DYCK_SHORT_N, 0);
    TrTrainOptions o = tr_train_defaults();
    o.steps = DYCK_SHORT_STEPS;
    o.data_seed = 1;
    TrTrainResult r;
    ck_assert(tr_train(&md, &task, &o, &r, err, sizeof err));
    ck_assert_msg(r.test_accuracy >= 0.99, "held-out accuracy %.4f", r.test_accuracy);
    tr_train_result_free(&r);
    tr_model_free(&md);
}
END_TEST

/* ---- the command line ---------------------------------------------------------------------- */

/* Runs `raspfut train ARGS` in-process with stdout in a file; returns the exit status and the
 * output's last line. */
static int cli(char *last, size_t lastsize, const char *const *args, int n) {
    char path[] = "/tmp/test_train_cli_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    fflush(stdout);
    fflush(stderr);
    int saved = dup(1), saved_err = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(null, 2); /* usage messages are not this test's output */
    char *argv[32];
    for (int i = 0; i < n; i++) argv[i] = (char *)args[i];
    int rc = tr_cli_main(n, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, 1);
    dup2(saved_err, 2);
    close(saved);
    close(saved_err);
    close(null);
    FILE *f = fopen(path, "r");
    char line[4096];
    last[0] = 0;
    while (fgets(line, sizeof line, f)) snprintf(last, lastsize, "%s", line);
    fclose(f);
    close(fd);
    unlink(path);
    return rc;
}

START_TEST(test_cli) {
    char dir[] = "/tmp/test_train_dir_XXXXXX";
    ck_assert(mkdtemp(dir));
    char model[64], ut[64], emb[64], curve[64], last[4096], again[4096];
    snprintf(model, sizeof model, "%s/m.bin", dir);
    snprintf(ut, sizeof ut, "%s/ut.bin", dir);
    snprintf(emb, sizeof emb, "%s/e.bin", dir);
    snprintf(curve, sizeof curve, "%s/c.csv", dir);
    const char *train[] = {"--task", "dyck1", "--n", "8", "--width", "4", "--causal", "--steps", "200", "--test",
                           "100", "-o", model, "--fut-backbone", ut, "--fut-embedding", emb, "--curve", curve};
    ck_assert_int_eq(cli(last, sizeof last, train, 19), 0);
    ck_assert_msg(strncmp(last, "accuracy 0.", 11) == 0 || strncmp(last, "accuracy 1.", 11) == 0, "%s", last);
    /* the curve has a header and one line per step */
    FILE *f = fopen(curve, "r");
    int lines = 0;
    for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
    fclose(f);
    ck_assert_int_eq(lines, 201);
    /* the saved model gives the same held-out accuracy */
    const char *load[] = {"--load", model, "--steps", "0", "--test", "100"};
    ck_assert_int_eq(cli(again, sizeof again, load, 6), 0);
    ck_assert_str_eq(again, last);
    /* the raspfut files parse and belong together */
    Arena a;
    arena_init(&a);
    uint8_t *buf;
    size_t len;
    char err[512];
    FutBackbone b;
    FutEmbedding e;
    ck_assert(fut_read_file(&a, ut, &buf, &len, err, sizeof err) && fut_backbone_parse(&a, buf, len, &b, err, sizeof err));
    ck_assert(fut_read_file(&a, emb, &buf, &len, err, sizeof err) && fut_embedding_parse(&a, buf, len, &e, err, sizeof err));
    ck_assert(fut_embedding_matches(&e, &b, err, sizeof err));
    arena_free(&a);
    /* X of a string: BOS then the brackets, one-hot over 3 ids and 9 positions */
    const char *input[] = {"--task", "dyck1", "--n", "8", "--print-input", "()"};
    ck_assert_int_eq(cli(last, sizeof last, input, 6), 0);
    ck_assert_str_eq(last, "0,0,1,1,0,0,0,0,0,0,0,0;1,0,0,0,1,0,0,0,0,0,0,0;0,1,0,0,0,1,0,0,0,0,0,0\n");
    /* programmed: every answer right, no step */
    const char *prog[] = {"--task", "khop", "--k", "2", "--n", "8", "--init", "programmed", "--test", "50"};
    ck_assert_int_eq(cli(last, sizeof last, prog, 10), 0);
    ck_assert_str_eq(last, "accuracy 1.000000\n");
    /* usage errors exit 2 */
    const char *bad1[] = {"--task", "dyck2"};
    const char *bad2[] = {"--task", "dyck1", "--k", "2"};
    const char *bad3[] = {"--task", "khop", "--bogus"};
    const char *bad4[] = {"--task", "khop", "--init", "programmed", "--layers", "5"};
    const char *bad5[] = {"--task", "khop", "--n", "0"};
    ck_assert_int_eq(cli(last, sizeof last, bad1, 2), 2);
    ck_assert_int_eq(cli(last, sizeof last, bad2, 4), 2);
    ck_assert_int_eq(cli(last, sizeof last, bad3, 3), 2);
    ck_assert_int_eq(cli(last, sizeof last, bad4, 6), 2);
    ck_assert_int_eq(cli(last, sizeof last, bad5, 4), 2);
    unlink(model);
    unlink(ut);
    unlink(emb);
    unlink(curve);
    rmdir(dir);
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
    tcase_add_test(tm, test_reproducible);
    tcase_add_test(tm, test_file_round_trip);
    tcase_add_test(tm, test_fut_export);
    tcase_add_test(tm, test_programmed);
    tcase_add_test(tm, test_dyck1_short_run);
    tcase_add_test(tm, test_cli);
    suite_add_tcase(s, tm);
    TCase *tg = tcase_create("tasks");
    tcase_add_test(tg, test_khop_definition);
    tcase_add_test(tg, test_dyck1_generator);
    suite_add_tcase(s, tg);
    return s;
}

int main(void) { return run_suite(train_suite()); }
