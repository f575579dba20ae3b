/* Match2 and k-PARITY as hand-built single-layer attention targets (fut/tasks.h). */
#include "fut/tasks.h"

#include <math.h>
#include <stdio.h>

bool fut_task_validate(const FutTask *t, char *err, size_t errsize) {
    if (t->kind == FUT_TASK_MATCH2) {
        if (t->M < 2 || t->M > 256 || t->max_len < 1 || t->max_len > 4096) {
            snprintf(err, errsize, "match2 needs 2 <= M <= 256 and 1 <= max length <= 4096 (got M=%zu, length %zu)",
                     t->M, t->max_len);
            return false;
        }
        return true;
    }
    if (t->n < 1 || t->n > 64 || t->k < 1 || t->k > t->n) {
        snprintf(err, errsize, "parity needs 1 <= k <= n <= 64 (got n=%zu k=%zu)", t->n, t->k);
        return false;
    }
    for (size_t i = 0; i < t->k; i++) {
        if (t->positions[i] >= t->n) {
            snprintf(err, errsize, "parity position %zu is not below n=%zu", t->positions[i], t->n);
            return false;
        }
        for (size_t j = 0; j < i; j++)
            if (t->positions[j] == t->positions[i]) {
                snprintf(err, errsize, "parity position %zu given twice", t->positions[i]);
                return false;
            }
    }
    return true;
}

static double beta_of(const FutTask *t) { return t->beta > 0 ? t->beta : (t->kind == FUT_TASK_MATCH2 ? 30.0 : 40.0); }

void fut_task_target(Arena *a, const FutTask *t, FutTarget *out) {
    size_t d = t->kind == FUT_TASK_MATCH2 ? t->M : t->n + 2;
    double beta = beta_of(t), root = sqrt((double)d); /* W_Q carries sqrt(d_k) so that A = W_Q W_K^T / sqrt(d_k) */
    *out = (FutTarget){.L = 1, .H = 1, .d = d, .residual = t->kind == FUT_TASK_MATCH2, .causal = false};
    out->heads = ARENA_ARRAY(a, FutHead, 1);
    FutHead *h = &out->heads[0];
    h->wq = fut_mat_new(a, d, d);
    h->wk = fut_mat_identity(a, d);
    h->wv = fut_mat_new(a, d, d);
    h->wo = fut_mat_identity(a, d);
    if (t->kind == FUT_TASK_MATCH2) {
        for (size_t x = 0; x < t->M; x++) {
            size_t neg = (t->M - x) % t->M;
            FUT_AT(h->wq, x, neg) = beta * root; /* score(i, j) = beta [x_j = -x_i] */
            FUT_AT(h->wv, x, neg) = 1.0;         /* value of key j: one-hot(-x_j) */
        }
    } else {
        for (size_t s = 0; s < t->k; s++) FUT_AT(h->wq, 1, 2 + t->positions[s]) = beta * root;
        FUT_AT(h->wv, 0, 0) = 1.0;
    }
}

FutMat fut_task_input(Arena *a, const FutTask *t, FutRng *rng, size_t *tokens, size_t *n_out) {
    if (t->kind == FUT_TASK_MATCH2) {
        size_t n = 1 + fut_rng_below(rng, t->max_len);
        FutMat X = fut_mat_new(a, n, t->M);
        for (size_t i = 0; i < n; i++) {
            tokens[i] = fut_rng_below(rng, t->M);
            FUT_AT(X, i, tokens[i]) = 1.0;
        }
        *n_out = n;
        return X;
    }
    FutMat X = fut_mat_new(a, t->n, t->n + 2);
    for (size_t j = 0; j < t->n; j++) {
        tokens[j] = fut_rng_below(rng, 2);
        FUT_AT(X, j, 0) = (double)tokens[j];
        FUT_AT(X, j, 1) = 1.0;
        FUT_AT(X, j, 2 + j) = 1.0;
    }
    *n_out = t->n;
    return X;
}

int fut_task_readout(const FutTask *t, FutMat Y, size_t i) {
    if (t->kind == FUT_TASK_MATCH2) {
        double mx = -INFINITY;
        for (size_t c = 0; c < Y.cols; c++)
            if (FUT_AT(Y, i, c) > mx) mx = FUT_AT(Y, i, c);
        return mx > 1.5;
    }
    double c = round((double)t->k * FUT_AT(Y, i, 0));
    if (!isfinite(c)) return -1;
    return (int)fmod(fabs(c), 2.0);
}

int fut_task_truth(const FutTask *t, const size_t *tokens, size_t n, size_t i) {
    if (t->kind == FUT_TASK_MATCH2) {
        for (size_t j = 0; j < n; j++)
            if ((tokens[i] + tokens[j]) % t->M == 0) return 1;
        return 0;
    }
    size_t c = 0;
    for (size_t s = 0; s < t->k; s++) c += tokens[t->positions[s]];
    return (int)(c & 1);
}

size_t fut_task_answers(const FutTask *t, size_t n) { return t->kind == FUT_TASK_MATCH2 ? n : 1; }

bool fut_task_check(const FutBackbone *b, const FutTask *t, size_t inputs, uint64_t seed, FutTaskResult *r,
                    char *err, size_t errsize) {
    *r = (FutTaskResult){0};
    if (!fut_task_validate(t, err, errsize)) return false;
    Arena a;
    arena_init(&a);
    FutTarget target;
    fut_task_target(&a, t, &target);
    FutMat E;
    FutSolveInfo info = {0};
    bool ok = fut_embed(&a, b, &target, &E, &info, err, errsize);
    r->cond = info.cond;
    FutRng rng;
    fut_rng_seed(&rng, seed);
    size_t cap = t->kind == FUT_TASK_MATCH2 ? t->max_len : t->n;
    size_t *tokens = ARENA_ARRAY(&a, size_t, cap);
    for (size_t k = 0; ok && k < inputs; k++) {
        Arena ia;
        arena_init(&ia);
        size_t n;
        FutMat X = fut_task_input(&ia, t, &rng, tokens, &n);
        FutMat want = fut_target_forward(&ia, &target, X);
        FutMat got = fut_backbone_forward(&ia, b, E, X);
        double e = fut_mat_max_abs_diff(want, got);
        if (!(e <= r->max_abs_error)) r->max_abs_error = e;
        for (size_t i = 0; i < fut_task_answers(t, n); i++) {
            int truth = fut_task_truth(t, tokens, n, i);
            r->answers++;
            r->ut_correct += fut_task_readout(t, got, i) == truth;
            r->target_correct += fut_task_readout(t, want, i) == truth;
        }
        r->inputs++;
        arena_free(&ia);
    }
    arena_free(&a);
    return ok;
}
