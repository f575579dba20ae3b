/* The training loop (train/trainer.h). */
#include "train/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tr_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double tr_cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

TrTrainOptions tr_train_defaults(void) {
    return (TrTrainOptions){.steps = 1000, .batch = 32, .test_size = 2000,
                            .adam = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .clip = 1.0},
                            .cosine = true};
}

enum { STREAM_TEST = 11, STREAM_TRAIN = 12 };

static void data_stream(FutRng *r, uint64_t seed, uint64_t which) {
    fut_rng_seed(r, seed * 0xbf58476d1ce4e5b9ULL + which);
}

void tr_test_set(const TrTask *task, uint64_t seed, TrExample *ex, size_t n) {
    FutRng r;
    data_stream(&r, seed, STREAM_TEST);
    for (size_t i = 0; i < n; i++) tr_task_draw(task, &r, &ex[i]);
}

/* As tr_evaluate, and example_ok[e] (when given) says whether every answer of example e is right. */
static double evaluate(TrModel *md, const TrExample *ex, size_t n, size_t *answers, size_t *correct,
                       size_t *examples_correct, double *loss, bool *example_ok) {
    size_t ans = 0, ok = 0, ex_ok = 0;
    double loss_sum = 0;
    uint32_t *pred = malloc(md->batch_cap * (md->cfg.max_len + 1) * sizeof *pred);
    if (!pred) abort();
    for (size_t s = 0; s < n; s += md->batch_cap) {
        size_t k = n - s < md->batch_cap ? n - s : md->batch_cap;
        Arena a;
        arena_init(&a);
        TrBatch b;
        tr_batch_build(&a, md, ex + s, k, &b);
        loss_sum += tr_model_forward(md, &b) * (double)b.n_answers;
        tr_model_predictions(md, &b, pred);
        size_t at = 0;
        for (size_t e = 0; e < k; e++) {
            bool all = true;
            for (size_t j = 0; j < ex[s + e].n_answers; j++, at++) {
                bool right = pred[at] == b.ans_label[at];
                ok += right;
                all &= right;
            }
            ex_ok += all;
            if (example_ok) example_ok[s + e] = all;
        }
        ans += b.n_answers;
        arena_free(&a);
    }
    free(pred);
    if (answers) *answers = ans;
    if (correct) *correct = ok;
    if (examples_correct) *examples_correct = ex_ok;
    if (loss) *loss = ans ? loss_sum / (double)ans : 0;
    return ans ? (double)ok / (double)ans : 0;
}

double tr_evaluate(TrModel *md, const TrExample *ex, size_t n, size_t *answers, size_t *correct,
                   size_t *examples_correct, double *loss) {
    return evaluate(md, ex, n, answers, correct, examples_correct, loss, NULL);
}

/* The test examples sorted by the hash of their string, to find those a training draw repeats. */
typedef struct Keyed {
    uint64_t hash;
    size_t index;
} Keyed;

static int keyed_cmp(const void *x, const void *y) {
    const Keyed *a = x, *b = y;
    return a->hash < b->hash ? -1 : a->hash > b->hash ? 1 : (a->index > b->index) - (a->index < b->index);
}

/* Marks hit[j] for every test example j with the same string as ex. */
static void mark_seen(const Keyed *keys, size_t n, const TrExample *test, const TrExample *ex, bool *hit) {
    uint64_t h = tr_example_hash(ex);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].hash < h) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < n && keys[lo].hash == h; lo++) {
        const TrExample *t = &test[keys[lo].index];
        if (t->len == ex->len && memcmp(t->tok, ex->tok, t->len) == 0) hit[keys[lo].index] = true;
    }
}

bool tr_train(TrModel *md, const TrTask *task, const TrTrainOptions *o, TrTrainResult *r, char *err, size_t es) {
    memset(r, 0, sizeof *r);
    if (o->batch == 0 || o->batch > md->batch_cap) {
        snprintf(err, es, "batch %zu: must be 1..%zu", o->batch, md->batch_cap);
        return false;
    }
    if (task->max_len > md->cfg.max_len || tr_task_vocab(task) != md->cfg.vocab ||
        tr_task_classes(task) != md->cfg.classes) {
        snprintf(err, es, "the model was built for another task shape");
        return false;
    }
    size_t n_test = o->test_size;
    TrExample *test = malloc((n_test ? n_test : 1) * sizeof *test);
    TrExample *batch = malloc(o->batch * sizeof *batch);
    r->loss = malloc((o->steps ? o->steps : 1) * sizeof *r->loss);
    if (!test || !batch || !r->loss) abort();
    r->steps = o->steps;
    tr_test_set(task, o->data_seed, test, n_test);
    Keyed *keys = malloc((n_test ? n_test : 1) * sizeof *keys);
    bool *hit = calloc(n_test ? n_test : 1, sizeof *hit);
    if (!keys || !hit) abort();
    for (size_t i = 0; i < n_test; i++) keys[i] = (Keyed){tr_example_hash(&test[i]), i};
    qsort(keys, n_test, sizeof *keys, keyed_cmp);

    FutRng rng;
    data_stream(&rng, o->data_seed, STREAM_TRAIN);
    double t0 = tr_now(), c0 = tr_cpu_now(), eval_time = 0, eval_cpu = 0;
    for (size_t step = 1; step <= o->steps; step++) {
        for (size_t i = 0; i < o->batch; i++) {
            tr_task_draw(task, &rng, &batch[i]);
            mark_seen(keys, n_test, test, &batch[i], hit);
        }
        Arena a;
        arena_init(&a);
        TrBatch b;
        tr_batch_build(&a, md, batch, o->batch, &b);
        double loss = tr_model_forward(md, &b);
        tr_model_backward(md, &b, false);
        TrAdam adam = o->adam;
        if (o->cosine && o->steps > 1)
            adam.lr = o->adam.lr * (0.1 + 0.9 * 0.5 * (1 + cos(3.141592653589793 * (double)(step - 1) / (double)(o->steps - 1))));
        tr_model_adam(md, &adam);
        arena_free(&a);
        r->loss[step - 1] = loss;
        double acc = -1;
        if (o->eval_every && step % o->eval_every == 0 && step < o->steps) {
            double e0 = tr_now(), ec = tr_cpu_now();
            acc = tr_evaluate(md, test, n_test, NULL, NULL, NULL, NULL);
            eval_time += tr_now() - e0;
            eval_cpu += tr_cpu_now() - ec;
        }
        if (o->progress) o->progress(o->progress_ctx, step, o->steps, loss, acc);
    }
    r->seconds = tr_now() - t0 - eval_time;
    r->cpu_seconds = tr_cpu_now() - c0 - eval_cpu;
    bool *ok = calloc(n_test ? n_test : 1, sizeof *ok);
    if (!ok) abort();
    r->test_accuracy = evaluate(md, test, n_test, &r->test_answers, &r->test_correct, &r->test_examples_correct,
                                &r->test_loss, ok);
    r->test_examples = n_test;
    for (size_t j = 0; j < n_test; j++) {
        r->seen_in_training += hit[j];
        r->unseen_correct += !hit[j] && ok[j];
    }
    free(ok);
    free(hit);
    free(keys);
    free(batch);
    free(test);
    return true;
}

void tr_train_result_free(TrTrainResult *r) {
    free(r->loss);
    r->loss = NULL;
}
