/* Running batches on several cores: one workspace per thread, each thread takes a contiguous
 * share of the inputs (model_run_batch on it). The model is only read. Each input's outcome is
 * the one model_run gives it, bit for bit (runtime/forward.h: a row's arithmetic does not
 * depend on its batch). */
#ifndef RASPCC_RUNTIME_PARALLEL_H
#define RASPCC_RUNTIME_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/forward.h"

typedef struct ModelRunner {
    size_t threads;
    Workspace *ws;  /* threads workspaces; ws[0] also serves single-threaded callers */
    Arena *arenas;  /* threads arenas holding the last run's outcomes */
} ModelRunner;

/* threads 0: the processors online. Fails like workspace_init. */
bool model_runner_init(ModelRunner *r, const Model *m, size_t threads, char *err, size_t errsize);
void model_runner_free(ModelRunner *r);
/* workspace_use_float32 on every workspace: false (and all stay in float64) when the model is
 * not shown safe in float32. */
bool model_runner_use_float32(ModelRunner *r, const Model *m, char *err, size_t errsize);

/* model_run_batch over the threads (small batches run in the calling thread). The outcomes'
 * atoms and messages live in the runner until its next run or its free. */
void model_runner_run(ModelRunner *r, const Model *m, const Value *const *inputs, const size_t *lens, size_t count,
                      ModelOutcome *outcomes);

#endif
