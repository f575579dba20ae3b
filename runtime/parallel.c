#include "runtime/parallel.h"

#include "runtime/forward32.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inputs per thread below which one thread does the whole batch (starting threads costs more). */
#define MIN_SHARE 16

bool model_runner_init(ModelRunner *r, const Model *m, size_t threads, char *err, size_t errsize) {
    memset(r, 0, sizeof *r);
    if (threads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online > 0 ? (size_t)online : 1;
    }
    r->ws = calloc(threads, sizeof *r->ws);
    r->arenas = calloc(threads, sizeof *r->arenas);
    if (!r->ws || !r->arenas) abort();
    for (size_t t = 0; t < threads; t++) {
        arena_init(&r->arenas[t]);
        if (!workspace_init(&r->ws[t], m, err, errsize)) {
            r->threads = t;
            model_runner_free(r);
            return false;
        }
        r->threads = t + 1;
    }
    return true;
}

void model_runner_free(ModelRunner *r) {
    for (size_t t = 0; t < r->threads; t++) {
        workspace_free(&r->ws[t]);
        arena_free(&r->arenas[t]);
    }
    free(r->ws);
    free(r->arenas);
    memset(r, 0, sizeof *r);
}

bool model_runner_use_float32(ModelRunner *r, const Model *m, char *err, size_t errsize) {
    for (size_t t = 0; t < r->threads; t++)
        if (!workspace_use_float32(&r->ws[t], m, err, errsize)) {
            for (size_t u = 0; u < t; u++) { /* back to float64, all of them */
                forward32_free(r->ws[u].f32);
                r->ws[u].f32 = NULL;
            }
            return false;
        }
    return true;
}

typedef struct Share {
    const Model *m;
    Workspace *ws;
    Arena *arena;
    const Value *const *inputs;
    const size_t *lens;
    size_t count;
    ModelOutcome *outcomes;
} Share;

static void *run_share(void *arg) {
    Share *s = arg;
    model_run_batch(s->m, s->ws, s->inputs, s->lens, s->count, s->arena, s->outcomes);
    return NULL;
}

void model_runner_run(ModelRunner *r, const Model *m, const Value *const *inputs, const size_t *lens, size_t count,
                      ModelOutcome *outcomes) {
    for (size_t t = 0; t < r->threads; t++) arena_reset(&r->arenas[t]); /* the last run's outcomes */
    size_t n = r->threads;
    while (n > 1 && count / n < MIN_SHARE) n--;
    Share shares[64];
    if (n > sizeof shares / sizeof *shares) n = sizeof shares / sizeof *shares;
    pthread_t tid[64];
    bool started[64] = {false};
    for (size_t t = 0; t < n; t++) {
        size_t from = count * t / n, to = count * (t + 1) / n;
        shares[t] = (Share){m, &r->ws[t], &r->arenas[t], inputs + from, lens + from, to - from, outcomes + from};
        if (t > 0) started[t] = pthread_create(&tid[t], NULL, run_share, &shares[t]) == 0;
    }
    run_share(&shares[0]);
    for (size_t t = 1; t < n; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else run_share(&shares[t]); /* no thread to be had: run it here */
    }
}
