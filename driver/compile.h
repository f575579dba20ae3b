/* One compilation as raspcc drives it, the same for the command line and for --batch: a program
 * (a file, standard input or text), the compile flags as the user wrote them (validated here),
 * elaboration, the compiler (codegen/), the self-check of the model against the reference
 * evaluator (verify/), and the model file.
 *
 * Every message becomes a diagnostic in CompileJob.diags: the program's and the compiler's with
 * their locations, the driver's own ("cannot read", a bad flag value, the self-check) without
 * one. When the request names a stream, each is also rendered there as it happens, a located
 * one as FILE:LINE:COL: error: ... with the source line, the driver's as "raspcc: ..." ("raspcc:
 * warning: ..." for a warning). Nothing else is printed, except the plan (plan_out) and, on a
 * terminal, progress.
 *
 * The self-check: for each of the first COMPILE_SELFCHECK_RUNS tokens of the vocabulary, the
 * input of max-len copies of it (the longest inputs first, whatever the budget), then every
 * input of the lengths 1..L whose inputs number at most COMPILE_SELFCHECK_EXHAUSTIVE in all (for at most half the time budget), then
 * COMPILE_SELFCHECK_RANDOM random inputs (seed COMPILE_SELFCHECK_SEED) up to the maximum length,
 * within COMPILE_SELFCHECK_SECONDS of processor time in all (load does not shorten it), stopping at the first
 * disagreement; a disagreement is an internal compiler error (status 3) and no file is written.
 * raspcc --help states these numbers. */
#ifndef RASPCC_DRIVER_COMPILE_H
#define RASPCC_DRIVER_COMPILE_H

#include <stdbool.h>
#include <stdio.h>

#include "codegen/codegen.h"
#include "ir/elaborate.h"
#include "support/diag.h"
#include "verify/verify.h"

enum { COMPILE_SELFCHECK_RUNS = 16, COMPILE_SELFCHECK_EXHAUSTIVE = 2000, COMPILE_SELFCHECK_RANDOM = 500, COMPILE_SELFCHECK_SEED = 1 };
#define COMPILE_SELFCHECK_SECONDS 1.0

typedef struct CompileRequest {
    const char *program;     /* a path, or "-" for standard input; NULL when `source` is given */
    const char *source;      /* the program's text instead of a file, named source_name */
    const char *source_name;
    const char *output;      /* the s-op to compile (a top-level variable); NULL: the last assigned */
    const char *model_path;  /* where to write the model: a path, "-" for standard output, or NULL */
    /* Compile flags exactly as given (NULL: not given): --vocab, --max-len, --range, --tol,
     * --margin, --mlp, --max-mlp, --max-bytes. */
    const char *vocab, *max_len, *range, *tol, *margin, *mlp, *max_mlp, *max_bytes;
    const ElabOverride *defines; /* -D NAME=VALUE, in order */
    size_t n_defines;
    bool no_selfcheck;
    bool error_flag;         /* --error-flag: the weights also compute the error flag (codegen/errflag.h) */
    FILE *plan_out;          /* --dump-plan: the plan is printed there */
    /* Messages: rendered to `messages` as they happen when it is set (NULL: only kept), in
     * `style` (colour, -q), with `tool` ("raspcc") before the driver's own. */
    FILE *messages;
    DiagStyle style;
    const char *tool;
    bool verbose;            /* -v: a line to `messages` for each step, with its time */
    bool progress;           /* draw progress on `messages` (the caller checks it is a terminal) */
} CompileRequest;

typedef struct CompileJob {
    Arena arena;             /* everything below but the model */
    IrGraph graph;
    DiagList diags;          /* every message, in order */
    const SourceFile *src;
    ElabResult elab;
    const IrNode *output;
    const char *output_name;
    CodegenOptions options;  /* what the flags became (raspcc recompiles with them for --fut-target) */
    Model model;
    bool compiled;           /* model holds the compiled model */
    bool selfchecked;        /* selfcheck holds what the self-check ran */
    VerifySampleResult selfcheck;
    double compile_ms;
    long long file_bytes;    /* the model file's size; -1 when none was written */
    int status;              /* 0 fine; 2 a bad program, flag value, compile failure or file; 3 the
                                self-check found the model disagreeing with the program */
    bool usage;              /* the failure is a flag's value (raspcc then prints its usage) */
} CompileJob;

/* The steps, each false (with status set and the reason in diags) on failure. compile_job_load
 * reads and elaborates the program (compile_job_init first); compile_job_output chooses the
 * output; compile_job_compile runs the compiler, the self-check, and writes the model. */
void compile_job_init(CompileJob *j);
bool compile_job_load(CompileJob *j, const CompileRequest *r);
bool compile_job_output(CompileJob *j, const CompileRequest *r);
bool compile_job_compile(CompileJob *j, const CompileRequest *r);
/* All three; returns j->status. */
int compile_job_run(CompileJob *j, const CompileRequest *r);
void compile_job_free(CompileJob *j);

/* A driver message: kept in j->diags and rendered as "TOOL: [warning: ]MESSAGE" when the request
 * has a stream (a warning only without -q). */
void compile_job_message(CompileJob *j, const CompileRequest *r, DiagSeverity sev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* --stats: layers, heads per layer, residual width, MLP hidden size per layer, parameter counts,
 * compile time, file_bytes, error_bound, error_rel, margin_checks and what the self-check
 * checked; as aligned text lines or (json) one JSON object on one line. */
void compile_job_print_stats(FILE *out, const CompileJob *j, bool json);

#endif
