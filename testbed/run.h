/* One (task, n) of the testbed: compile the task's program for that n through the compiler's C
 * API (as tools/raspcc.c does, without its self-check), run the compiled model on seeded random
 * instances and compare its outputs with the true answers (task.h), and measure the model.
 *
 * A failed instance is attributed by running the reference evaluator on it (for the first
 * TB_ATTRIBUTE_MAX failures): "program wrong" when the program itself gives a wrong answer,
 * "compiler wrong" when the program is right and the model is not.
 *
 * TbResult is plain data (fixed-size strings, no pointers) so that a child process can send it
 * whole through a pipe. */
#ifndef RASPCC_TESTBED_RUN_H
#define RASPCC_TESTBED_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "testbed/classify.h"
#include "testbed/task.h"

#define TB_ATTRIBUTE_MAX 10

typedef struct TbRunOptions {
    const char *programs_dir; /* where NAME.rasp live (rasp_examples/testbed) */
    size_t instances;
    uint64_t seed;
    size_t max_mlp, max_bytes; /* compiler limits; 0: its defaults */
    /* Called now and then while instances run (may be NULL). */
    void (*progress)(void *ctx, const char *task, size_t n, size_t done, size_t total);
    void *progress_ctx;
} TbRunOptions;

typedef enum TbStage { TB_STAGE_DONE, TB_STAGE_LOAD, TB_STAGE_COMPILE, TB_STAGE_RUN, TB_STAGE_LIMIT } TbStage;

typedef struct TbResult {
    char task[32];
    size_t n, max_len;
    char vocab[32];
    char defines[128];          /* "-D SPARSE=[1, 4, 6]" or "" */
    TbStage stage;              /* DONE, or the stage that stopped it */
    char stop[512];             /* why it stopped (the compiler's first error line, a limit) */
    TbClassification classification;
    size_t layers, heads, residual_width, mlp_hidden, params, nonzero_params;
    double compile_ms, run_ms;  /* the compiler's own time; all instances' forward passes */
    size_t instances, correct;
    size_t model_errors;        /* instances the model raised on */
    size_t program_wrong, compiler_wrong; /* attributions of failures (see above) */
    char first_failure[512];
} TbResult;

void tb_run(const TbTask *t, size_t n, const TbRunOptions *o, TbResult *r);

/* "-D NAME=VALUE ..." of a task at n, as a shell would take it. */
void tb_defines_text(const TbDefine *defs, size_t count, char *buf, size_t size);

#endif
