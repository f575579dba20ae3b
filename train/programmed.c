/* Hand-built softmax targets for Dyck-1 and k-hop induction, and their programmed embeddings
 * (train/programmed.h; docs/train.md "Programmed embeddings" derives every constant).
 *
 * Rows: BOS at position 0, the token x_i at position i + 1. Both targets are residual and
 * causal, one head per layer; scores are x_q A x_k^T, stored as W_Q = sqrt(d) A, W_K = I so
 * that the format's 1/sqrt(d_k) gives A back; values are x_k B (W_V = B, W_O = I). */
#include "train/programmed.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Sharpness: every softmax below separates the key it wants from the others by a score gap of
 * at least GAP, so each other key keeps a weight below e^-GAP (4e-18) relative to it. */
#define GAP 40.0

typedef struct Builder {
    Arena *a;
    FutTarget *t;
    size_t d;
} Builder;

static void add_layer(Builder *b, size_t l, FutMat A, FutMat B) {
    FutHead *h = &b->t->heads[l];
    h->wq = fut_mat_new(b->a, b->d, b->d);
    for (size_t i = 0; i < b->d * b->d; i++) h->wq.data[i] = A.data[i] * sqrt((double)b->d);
    h->wk = fut_mat_identity(b->a, b->d);
    h->wv = B;
    h->wo = fut_mat_identity(b->a, b->d);
}

/* Dyck-1, d = 7: dims t (token), bos, v (+1 for '(', -1 for ')'), p (position), bal, neg, fail.
 *  layer 1: uniform causal average of v:        bal_i = b_i / (i + 1), b_i the prefix balance
 *  layer 2: a gate between the query's own row and BOS (score GAMMA p_j on every key, and GAMMA
 *           p_i on BOS, so both tie above the rest by GAMMA; plus -BETA (bal_i - theta) on token
 *           keys, theta = -1 / (2(n + 1))); value t:  neg_i = [b_i < 0]
 *  layer 3: uniform causal average of neg:      fail_i > 0 iff some prefix went negative
 *  readout at the last row: unbalanced - balanced = K ((2(n+1)) fail + bal - 1/(2(n+1))). */
static void dyck1_target(Arena *a, const TrTask *task, TrProgrammed *out) {
    enum { T, BOS, V, P, BAL, NEG, FAIL, D };
    double n1 = (double)task->max_len + 1, theta = -1.0 / (2 * n1);
    double beta = 2 * n1 * GAP, gamma = 2 * beta;
    FutTarget *t = &out->target;
    *t = (FutTarget){.L = 3, .H = 1, .d = D, .residual = true, .causal = true};
    t->heads = ARENA_ARRAY(a, FutHead, 3);
    Builder b = {a, t, D};
    FutMat A1 = fut_mat_new(a, D, D), B1 = fut_mat_new(a, D, D);
    FUT_AT(B1, V, BAL) = 1;
    add_layer(&b, 0, A1, B1);
    FutMat A2 = fut_mat_new(a, D, D), B2 = fut_mat_new(a, D, D);
    FUT_AT(A2, T, P) = FUT_AT(A2, BOS, P) = gamma; /* every query: GAMMA p_j */
    FUT_AT(A2, P, BOS) = gamma;                    /* BOS key: GAMMA p_i */
    FUT_AT(A2, BAL, T) = -beta;                    /* token keys: -BETA bal_i ... */
    FUT_AT(A2, T, T) = beta * theta;               /* ... + BETA theta */
    FUT_AT(B2, T, NEG) = 1;
    add_layer(&b, 1, A2, B2);
    FutMat A3 = fut_mat_new(a, D, D), B3 = fut_mat_new(a, D, D);
    FUT_AT(B3, NEG, FAIL) = 1;
    add_layer(&b, 2, A3, B3);

    size_t rows = 2 + 1 + task->max_len + 1;
    out->input = fut_mat_new(a, rows, D);
    FUT_AT(out->input, 0, T) = 1, FUT_AT(out->input, 0, V) = 1;  /* '(' */
    FUT_AT(out->input, 1, T) = 1, FUT_AT(out->input, 1, V) = -1; /* ')' */
    FUT_AT(out->input, 2, BOS) = 1;
    for (size_t p = 0; p <= task->max_len; p++) FUT_AT(out->input, 3 + p, P) = (double)p;
    double K = 40 * n1; /* logits +-20 */
    out->readout = fut_mat_new(a, D, 2);
    FUT_AT(out->readout, FAIL, 0) = K * 2 * n1;
    FUT_AT(out->readout, BAL, 0) = K;
    FUT_AT(out->readout, T, 0) = -K / (2 * n1);
}

/* k-hop, alphabet s: dims t, bos, x (s, one-hot token), p, p2 (= p^2), prev (s), then per hop h
 * = 1..k: tok (s), none, pos.
 *  layer 1 (previous token): index match of p_j with p_i - 1, scores GAP (2 (p_i - 1) p_j - p_j^2)
 *  layer 2 (find): BETA [prev_j = x_i] + EPS p_j on token keys, BETA on BOS: the latest key whose
 *           previous token is x_i, or BOS when none; value: that key's token, [BOS], position
 *  layer h + 1 (h = 2..k): index match of p_j with hop_{h-1}.pos; value: that row's hop 1
 *  readout: hop_k.tok -> classes 0..s-1, hop_k.none -> class s. */
static void khop_target(Arena *a, const TrTask *task, TrProgrammed *out) {
    size_t s = task->alphabet, k = task->k;
    size_t T = 0, BOS = 1, X = 2, P = 2 + s, P2 = 3 + s, PREV = 4 + s, HOP = 4 + 2 * s, D = HOP + k * (s + 2);
#define TOK(h, c) (HOP + ((h)-1) * (s + 2) + (c))
#define NONE(h) (HOP + ((h)-1) * (s + 2) + s)
#define POS(h) (HOP + ((h)-1) * (s + 2) + s + 1)
    double n1 = (double)task->max_len + 1, eps = GAP, beta = eps * (n1 + 1) + GAP;
    FutTarget *t = &out->target;
    *t = (FutTarget){.L = k + 1, .H = 1, .d = D, .residual = true, .causal = true};
    t->heads = ARENA_ARRAY(a, FutHead, k + 1);
    Builder b = {a, t, D};
    FutMat A = fut_mat_new(a, D, D), B = fut_mat_new(a, D, D);
    FUT_AT(A, P, P) = 2 * GAP; /* GAP (2 p_i p_j - 2 p_j - p_j^2) */
    FUT_AT(A, T, P) = FUT_AT(A, BOS, P) = -2 * GAP;
    FUT_AT(A, T, P2) = FUT_AT(A, BOS, P2) = -GAP;
    for (size_t c = 0; c < s; c++) FUT_AT(B, X + c, PREV + c) = 1;
    add_layer(&b, 0, A, B);
    A = fut_mat_new(a, D, D), B = fut_mat_new(a, D, D);
    for (size_t c = 0; c < s; c++) FUT_AT(A, X + c, PREV + c) = beta;
    FUT_AT(A, T, BOS) = FUT_AT(A, BOS, BOS) = beta;
    FUT_AT(A, T, P) = FUT_AT(A, BOS, P) = eps;
    for (size_t c = 0; c < s; c++) FUT_AT(B, X + c, TOK(1, c)) = 1;
    FUT_AT(B, BOS, NONE(1)) = 1;
    FUT_AT(B, P, POS(1)) = 1;
    add_layer(&b, 1, A, B);
    for (size_t h = 2; h <= k; h++) {
        A = fut_mat_new(a, D, D), B = fut_mat_new(a, D, D);
        FUT_AT(A, POS(h - 1), P) = 2 * GAP; /* GAP (2 q p_j - p_j^2), q = hop_{h-1}.pos */
        FUT_AT(A, T, P2) = FUT_AT(A, BOS, P2) = -GAP;
        for (size_t c = 0; c < s; c++) FUT_AT(B, TOK(1, c), TOK(h, c)) = 1;
        FUT_AT(B, NONE(1), NONE(h)) = 1;
        FUT_AT(B, POS(1), POS(h)) = 1;
        add_layer(&b, h, A, B);
    }
    size_t rows = s + 1 + task->max_len + 1;
    out->input = fut_mat_new(a, rows, D);
    for (size_t c = 0; c < s; c++) FUT_AT(out->input, c, T) = 1, FUT_AT(out->input, c, X + c) = 1;
    FUT_AT(out->input, s, BOS) = 1;
    for (size_t p = 0; p <= task->max_len; p++) {
        FUT_AT(out->input, s + 1 + p, P) = (double)p;
        FUT_AT(out->input, s + 1 + p, P2) = (double)(p * p);
    }
    out->readout = fut_mat_new(a, D, s + 1);
    for (size_t c = 0; c < s; c++) FUT_AT(out->readout, TOK(k, c), c) = 20; /* logit margin 20 */
    FUT_AT(out->readout, NONE(k), s) = 20;
#undef TOK
#undef NONE
#undef POS
}

bool tr_programmed_target(Arena *a, const TrTask *task, TrProgrammed *out, char *err, size_t es) {
    if (!tr_task_validate(task, err, es)) return false;
    if (task->kind == TR_DYCK1) dyck1_target(a, task, out);
    else khop_target(a, task, out);
    return true;
}

bool tr_programmed_init(TrModel *md, const TrTask *task, char *err, size_t es) {
    const TrConfig *c = &md->cfg;
    if (c->kind == TR_FULL || c->layernorm || c->mlp || c->pos != TR_POS_ABSOLUTE || !c->residual || !c->causal) {
        snprintf(err, es, "a programmed embedding needs a fixed residual causal attention-only backbone with "
                          "absolute positions (no --layernorm, --mlp, --pos, and not full)");
        return false;
    }
    Arena a;
    arena_init(&a);
    TrProgrammed pg;
    bool ok = tr_programmed_target(&a, task, &pg, err, es);
    FutMat Efut;
    FutSolveInfo info;
    if (ok && (pg.target.L != c->L || pg.target.H != c->H || pg.target.d != c->d)) {
        snprintf(err, es, "the backbone (L=%zu H=%zu d=%zu) is not the target's shape (L=%zu H=%zu d=%zu)", c->L, c->H,
                 c->d, pg.target.L, pg.target.H, pg.target.d);
        ok = false;
    }
    if (ok) ok = fut_embed(&a, &md->backbone, &pg.target, &Efut, &info, err, es);
    if (ok) {
        FutMat E = fut_mat_mul(&a, pg.input, false, Efut, false);
        FutMat U = fut_mat_mul(&a, md->backbone.u, false, pg.readout, false);
        tr_model_set(md, md->embed, E.data);
        tr_model_set(md, md->unembed, U.data);
    }
    arena_free(&a);
    return ok;
}
