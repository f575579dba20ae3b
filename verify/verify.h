/* Checking a compiled model against the reference evaluator, exactly and typed.
 *
 * A model (runtime/model.h) carries the RASP program it was compiled from. This stage
 * re-elaborates that stored program, runs inputs through both the model (runtime/forward.h
 * model_run) and the reference evaluator (ir/eval.h ir_eval), and says whether they agree.
 * raspcc uses it as a self-check before writing a model, rasprun for --check and --verify.
 *
 * Agreement is exact and typed (compare.c):
 *   - the kinds must be equal: bool, int, float and string all differ, so 1, 1.0 and True are
 *     three different answers (the tools print them differently);
 *   - bools and ints by value, strings byte for byte;
 *   - floats bit for bit: -0.0 and 0.0 differ (Python prints them differently, and the reference
 *     can produce -0.0). The one exception is NaN: every NaN equals every NaN, whatever its sign
 *     and payload bits, since no output shows them (and x86 arithmetic sets the sign of a NaN
 *     unpredictably), while a NaN never equals a number;
 *   - a model may state an error bound for real-valued outputs: with bound > 0 two floats agree
 *     when they are equal or |a - b| <= bound (so -0.0 and 0.0 then agree); kinds must still be
 *     equal. bound = 0 is exact.
 * On one input (check.c) the model and the reference either both succeed with the same atoms
 * (agree), both fail (an error agreed: the model reproduces the program's errors, their
 * messages differ), or disagree (a mismatch). Two outcomes are not disagreements either: an
 * input the model cannot tokenize (too long, a token outside its vocabulary or range) is outside
 * its domain and not compared (rasprun --check prints the model's error for it and moves on);
 * and an input the model refuses inside the margin of a comparison of real numbers (its error
 * starts with MODEL_MARGIN_ERROR, "within the margin": a margin check of runtime/model.h) is the
 * model declining to answer where its precision cannot decide the program's comparison, whatever
 * the reference did. Both are counted apart.
 *
 * For a real-valued output the comparison also measures the largest |model - reference| over
 * the numbers compared (reported beside the model's stated bound by rasprun).
 *
 * Inputs (inputs.c): the odometer enumerates every input over the vocabulary of lengths 1..L,
 * length by length, each length in lexicographic order of vocabulary ids; random inputs have a
 * uniform length in 1..max_len and uniform tokens (for real-valued tokens: uniform in the
 * model's range: see verify_random_real), from splitmix64 seeded by the caller, so a seed always
 * gives the same inputs.
 *
 * Nothing here prints unless given a FILE; nothing aborts except on out-of-memory. */
#ifndef RASPCC_VERIFY_VERIFY_H
#define RASPCC_VERIFY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"
#include "ir/value.h"
#include "runtime/forward.h"
#include "runtime/model.h"
#include "support/arena.h"

/* ---- compare.c: typed exact comparison ---- */

/* Whether two atoms are the same answer (rules above); bound >= 0, 0 = exact. */
bool verify_same_atom(Value a, Value b, double bound);
/* The same with a relative part: floats a (the model's) and b (the reference's) agree when
 * |a - b| <= bound + rel |b| (bound > 0; with bound 0, bit for bit as above). */
bool verify_same_atom_within(Value a, Value b, double bound, double rel);
/* The error bound m states for its outputs: out_error_bound for a real-valued (unbounded)
 * numerical output, else 0 (every other output is decoded to an exact atom); and its relative
 * part, out_error_rel there, else 0. */
double verify_model_bound(const Model *m);
double verify_model_rel(const Model *m);
/* Whether two outputs of n atoms agree (the model's a, the reference's b, within bound + rel
 * |b|); when not, *where (may be NULL) gets the first position that differs. */
bool verify_same_output(const Value *a, const Value *b, size_t n, double bound, double rel, size_t *where);

/* ---- inputs.c: input generation ---- */

/* The number of inputs of lengths 1..len over n_vocab tokens (n_vocab + n_vocab^2 + ...),
 * saturating at SIZE_MAX. */
size_t verify_count_inputs(size_t n_vocab, size_t len);
/* The largest L <= max_len with verify_count_inputs(n_vocab, L) <= limit (0 when not even
 * length 1 fits, or n_vocab is 0). */
size_t verify_lengths_within(size_t n_vocab, size_t max_len, size_t limit);

/* Every input of lengths 1..max_len over vocab[0..n_vocab), in the order described above. */
typedef struct VerifyOdometer {
    const Value *vocab;
    size_t n_vocab, max_len;
    size_t len;     /* length of the input last returned (0 before the first) */
    size_t *digits; /* max_len vocabulary ids */
    bool done;
} VerifyOdometer;

/* digits are allocated in `arena`. */
void verify_odometer_init(VerifyOdometer *o, const Value *vocab, size_t n_vocab, size_t max_len, Arena *arena);
/* Writes the next input into in[0..*n) (in has room for max_len atoms); false when all were
 * returned. */
bool verify_odometer_next(VerifyOdometer *o, Value *in, size_t *n);

/* splitmix64: the next pseudo-random number of the stream `state`. */
uint64_t verify_rng_next(uint64_t *state);
/* A real token for m (numeric_tokens) in [token_lo, token_hi]: uniform at full precision (half
 * of the draws), a short decimal on a grid a thousandth of the range (a quarter: thresholds such
 * as 0.5 are hit), an end of the range or a signed zero. */
Value verify_random_real(const Model *m, uint64_t *state);
/* A random input for m written into in (room for m->max_len atoms): length uniform in
 * 1..max_len (max_len 0 or above m->max_len: m->max_len), tokens as above. Returns its length
 * (0 when the model has no vocabulary or a max_len of 0). */
size_t verify_random_input(const Model *m, size_t max_len, uint64_t *state, Value *in);

/* ---- reference.c: the program stored in the model ---- */

typedef struct VerifyReference {
    Arena arena;
    IrGraph graph;
    const IrNode *out; /* the model's output s-op in the re-elaborated program */
} VerifyReference;

/* Elaborates m->program_source (named m->program_name) afresh, as a program file would be, with
 * `load` relative to base_dir (NULL: the current directory), and finds m->output_name in it.
 * On failure writes a one-line reason to err, renders the program's diagnostics to diag_out
 * (may be NULL) and leaves *r freed. */
bool verify_reference_load(VerifyReference *r, const Model *m, const char *base_dir, FILE *diag_out, char *err,
                           size_t errsize);
void verify_reference_free(VerifyReference *r);

/* ---- check.c: one input through both ---- */

typedef struct ModelRunner ModelRunner;

typedef struct VerifyPair {
    const Model *model;
    Workspace *ws;              /* initialised for model (workspace_init) */
    ModelRunner *runner;        /* NULL, or batches of verify_sample run on every core (runtime/parallel.h) */
    const VerifyReference *ref; /* loaded from model */
    double bound;               /* error bound on float outputs, 0 = exact */
} VerifyPair;

typedef enum VerifyVerdict {
    VERIFY_AGREE,      /* both succeeded with the same atoms */
    VERIFY_BOTH_ERROR, /* both failed: an error agreed */
    VERIFY_MISMATCH,   /* one failed and the other not, or the atoms differ */
    VERIFY_OUTSIDE,    /* the model cannot tokenize the input; the reference was not run */
    VERIFY_MARGIN,     /* the model refused inside a margin check's margin (its error starts with
                          MODEL_MARGIN_ERROR); the reference's result is recorded, not compared */
} VerifyVerdict;

/* Whether a model error is a refusal inside the margin (starts with MODEL_MARGIN_ERROR). */
bool verify_is_margin_error(const char *model_err);

enum { VERIFY_MSG_SIZE = 1024 };

typedef struct VerifyOutcome {
    VerifyVerdict verdict;
    const Value *input;
    size_t n;
    bool model_ok;
    Value *model_out;                 /* n atoms when model_ok */
    char model_err[VERIFY_MSG_SIZE];  /* when !model_ok */
    bool ref_ok;
    Value *ref_out;                   /* n atoms when ref_ok */
    char ref_err[VERIFY_MSG_SIZE];    /* when !ref_ok: "FILE:LINE:COL: message" */
    size_t position;                  /* a mismatch of two outputs: the first position differing */
    /* When both succeeded: the largest |model - reference| over the positions where both atoms
     * are finite numbers (bool, int or float, as doubles), whether they agree or not; else 0. */
    double max_error;
} VerifyOutcome;

/* Runs input[0..n) through the model and the reference; outputs are allocated in scratch and
 * *o points at `input` (both must outlive the use of *o). Returns o->verdict. */
VerifyVerdict verify_input(const VerifyPair *p, const Value *input, size_t n, Arena *scratch, VerifyOutcome *o);

/* The two halves of verify_input, for callers that run the model on many inputs at once
 * (model_run_batch): whether the model can tokenize the input (else err gets why: the input is
 * VERIFY_OUTSIDE), and the verdict given the model's outcome on it (the reference is run here). */
bool verify_in_domain(const VerifyPair *p, const Value *input, size_t n, Arena *scratch, char *err, size_t errsize);
VerifyVerdict verify_outcome(const VerifyPair *p, const Value *input, size_t n, const ModelOutcome *mo, Arena *scratch,
                             VerifyOutcome *o);

/* ---- report.c: what a mismatch looks like ---- */

/* One atom as typed JSON: "a", 1, 1.0, true; non-finite floats as NaN, Infinity, -Infinity
 * (as Python's json module writes them) so that they stay distinguishable. */
void verify_print_atom(FILE *out, Value v);
/* n atoms as a JSON array. */
void verify_print_atoms(FILE *out, const Value *v, size_t n);
/* "input [...]: model X, reference Y" where X and Y are JSON arrays of typed atoms or
 * {"error": "..."}; no newline. */
void verify_print_report(FILE *out, const VerifyOutcome *o);
/* The same text, malloc'ed (NULL only if memory ran out). */
char *verify_format_report(const VerifyOutcome *o);

/* ---- sample.c: many inputs within budgets ---- */

typedef struct VerifySampleOptions {
    /* Phase 0: for each of the first `runs` tokens of the vocabulary, the input of max_len copies
     * of it (long runs of one token reach the largest counts and means; skipped for real-valued
     * tokens), then of every shorter length above phase 1's, within a quarter of max_seconds.
     * Before phase 1, so that a time budget cannot leave the longest inputs out. */
    size_t runs;
    /* Phase 1, exhaustive: every input of lengths 1..exhaustive_len (clipped to the model's
     * max_len; skipped for real-valued tokens). With exhaustive_limit > 0, only as many lengths
     * as keep the number of inputs <= exhaustive_limit (verify_lengths_within). */
    size_t exhaustive_len, exhaustive_limit;
    /* Phase 1 also ends (phase 2 goes on) once this much wall-clock time has passed since the
     * start; 0 = no limit of its own. Keeps time for long random inputs on large models. */
    double exhaustive_seconds;
    /* Phase 2: `random` random inputs of lengths 1..random_max_len (0 or above the model's
     * max_len: the model's max_len), from `seed`. */
    size_t random, random_max_len;
    uint64_t seed;
    size_t max_inputs;  /* stop after this many inputs in all; 0 = no limit */
    double max_seconds; /* stop once the process has used this much processor time; 0 = no limit */
    bool keep_going;    /* go on after a mismatch (count them all) instead of stopping */
    double bound;       /* passed to verify_same_atom */
    /* Called (when set) on every mismatch, and after every input with (done, planned). */
    void (*on_mismatch)(void *ctx, const VerifyOutcome *o);
    void (*on_progress)(void *ctx, size_t done, size_t planned);
    void *ctx;
} VerifySampleOptions;

typedef struct VerifySampleResult {
    size_t inputs;         /* inputs run through both */
    size_t exhaustive_len; /* every input of lengths 1..exhaustive_len was checked */
    size_t runs;           /* phase 0 inputs checked (one token repeated) */
    size_t runs_min_len;   /* their shortest length (max_len when only those were checked) */
    size_t random;         /* random inputs checked */
    size_t random_max_len; /* their lengths were drawn from 1..random_max_len */
    size_t mismatches, errors_agreed;
    size_t margins;        /* inputs the model refused inside the margin (VERIFY_MARGIN) */
    double max_error;      /* the largest VerifyOutcome.max_error over the inputs */
    bool exhaustive_cut;   /* phase 1 ended early, by exhaustive_seconds */
    bool timed_out;        /* stopped by max_seconds */
    bool out_of_inputs;    /* stopped by max_inputs */
    double seconds;
    char *first_mismatch;  /* verify_format_report of the first mismatch (malloc'ed), or NULL */
} VerifySampleResult;

/* Runs the phases in order until done, a budget runs out, or (without keep_going) the first
 * mismatch. The inputs come from the model's own vocabulary and lengths, so one it cannot
 * tokenize (VERIFY_OUTSIDE) counts as a mismatch here; a refusal inside the margin
 * (VERIFY_MARGIN) is counted in `margins` and is not a mismatch. Fills *r (free it with
 * verify_sample_result_free). Returns true when no mismatch was found. */
bool verify_sample(const VerifyPair *p, const VerifySampleOptions *o, VerifySampleResult *r);
void verify_sample_result_free(VerifySampleResult *r);

/* Counts of inputs compared, as rasprun --verify and --check summarise them. */
typedef struct VerifyCounts {
    size_t inputs, mismatches, errors_agreed, margins;
    double max_error; /* the largest |model - reference| seen */
} VerifyCounts;

/* Whether m has a margin check (a summary then always shows the margin count). */
bool verify_model_has_margins(const Model *m);
/* The summary of counts c for model m with error bound `bound` (verify_model_bound), into buf:
 * "N inputs, M mismatches, K errors agreed", then ", J inside the margin" when m has margin
 * checks or J > 0, then "; largest error E (bound B)" when bound > 0 (E with 2 significant
 * digits, B as %g). rasprun --verify prints "verify: " and this. */
void verify_format_summary(const Model *m, double bound, const VerifyCounts *c, char *buf, size_t size);

#endif
