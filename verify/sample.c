/* The sample driver: runs of one token at the maximum length, inputs exhaustive up to a length,
 * then seeded random inputs, within budgets. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/parallel.h"
#include "verify/verify.h"

/* Processor time of the whole process (its threads too): a loaded machine checks as many inputs
 * within a budget as an idle one. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Pending Pending;

typedef struct Run {
    const VerifyPair *p;
    const VerifySampleOptions *o;
    VerifySampleResult *r;
    double start;
    size_t planned;
    bool stop;
    Pending *q; /* inputs taken but not yet run */
} Run;

static size_t pending_count(const Pending *q);

/* Whether a budget forbids another input (and records which). */
static bool out_of_budget(Run *run) {
    if (run->o->max_inputs && run->r->inputs + pending_count(run->q) >= run->o->max_inputs)
        return run->r->out_of_inputs = true;
    if (run->o->max_seconds > 0 && now_s() - run->start >= run->o->max_seconds) return run->r->timed_out = true;
    return false;
}

/* Where an input comes from: a run of one token at max_len (always checked), every input up to
 * a length (those shorter than it all checked), random, or a shorter run (within the budget). */
typedef enum Phase { PHASE_RUN, PHASE_ALL, PHASE_RANDOM, PHASE_SHORT_RUN } Phase;

/* Inputs waiting for the model, run as one batch (model_run_batch) when full or at the end. */
enum { BATCH = 256, MIN_RANDOM = 16 };
struct Pending {
    Arena arena; /* the inputs' copies, the outcomes, the reference's results */
    const Value *in[BATCH];
    size_t len[BATCH];
    Phase phase[BATCH];
    size_t count;
};

static size_t pending_count(const Pending *q) { return q->count; }

static void count_outcome(Run *run, const VerifyOutcome *oc, VerifyVerdict v) {
    run->r->inputs++;
    if (v == VERIFY_BOTH_ERROR) run->r->errors_agreed++;
    if (v == VERIFY_MARGIN) run->r->margins++;
    if (oc->max_error > run->r->max_error) run->r->max_error = oc->max_error;
    /* Generated inputs come from the model's own vocabulary and lengths: one it cannot tokenize
     * is a defect of the model too. */
    if (v == VERIFY_MISMATCH || v == VERIFY_OUTSIDE) {
        run->r->mismatches++;
        if (!run->r->first_mismatch) run->r->first_mismatch = verify_format_report(oc);
        if (run->o->on_mismatch) run->o->on_mismatch(run->o->ctx, oc);
        if (!run->o->keep_going) run->stop = true;
    }
    if (run->o->on_progress) run->o->on_progress(run->o->ctx, run->r->inputs, run->planned);
}

/* An input of a phase has been checked: PHASE_ALL inputs come in order of length, so every input
 * shorter than this one was. */
static void count_phase(Run *run, Phase phase, size_t n) {
    if (phase == PHASE_RUN || phase == PHASE_SHORT_RUN) run->r->runs++;
    else if (phase == PHASE_ALL) run->r->exhaustive_len = n - 1;
    else run->r->random++;
}

/* Runs the pending inputs through the model at once, then each through the reference, in order
 * (stopping at the first mismatch without keep_going, so the counts are those of one by one). */
static void flush(Run *run, Pending *q) {
    ModelOutcome *mo = ARENA_ARRAY(&q->arena, ModelOutcome, q->count ? q->count : 1);
    if (run->p->runner) model_runner_run(run->p->runner, run->p->model, q->in, q->len, q->count, mo);
    else model_run_batch(run->p->model, run->p->ws, q->in, q->len, q->count, &q->arena, mo);
    for (size_t i = 0; i < q->count && !run->stop; i++) {
        /* a batch of long inputs can take many times the budget in the reference: the rest of
         * it is dropped, unchecked and uncounted (runs of one token and the first MIN_RANDOM
         * random inputs are always checked) */
        bool always = q->phase[i] == PHASE_RUN || (q->phase[i] == PHASE_RANDOM && run->r->random < MIN_RANDOM);
        if (!always && run->o->max_seconds > 0 && now_s() - run->start >= run->o->max_seconds) {
            run->r->timed_out = true;
            continue;
        }
        count_phase(run, q->phase[i], q->len[i]);
        VerifyOutcome oc;
        VerifyVerdict v = verify_outcome(run->p, q->in[i], q->len[i], &mo[i], &q->arena, &oc);
        count_outcome(run, &oc, v);
    }
    arena_free(&q->arena);
    arena_init(&q->arena);
    q->count = 0;
}

static void check_one(Run *run, Pending *q, const Value *in, size_t n, Phase phase) {
    char err[VERIFY_MSG_SIZE];
    if (!verify_in_domain(run->p, in, n, &q->arena, err, sizeof err)) { /* in order: the batch before it first */
        flush(run, q);
        if (run->stop) return;
        count_phase(run, phase, n);
        VerifyOutcome oc;
        VerifyVerdict v = verify_input(run->p, in, n, &q->arena, &oc);
        count_outcome(run, &oc, v);
        return;
    }
    Value *copy = ARENA_ARRAY(&q->arena, Value, n ? n : 1);
    memcpy(copy, in, n * sizeof *in);
    q->in[q->count] = copy;
    q->phase[q->count] = phase;
    q->len[q->count++] = n;
    if (q->count == BATCH) flush(run, q);
}

bool verify_sample(const VerifyPair *p, const VerifySampleOptions *o, VerifySampleResult *r) {
    memset(r, 0, sizeof *r);
    const Model *m = p->model;
    Pending *q = calloc(1, sizeof *q);
    if (!q) abort();
    arena_init(&q->arena);
    Run run = {p, o, r, now_s(), 0, false, q};
    size_t L = o->exhaustive_len < m->max_len ? o->exhaustive_len : m->max_len;
    if (m->numeric_tokens) L = 0;
    if (o->exhaustive_limit) L = verify_lengths_within(m->n_vocab, L, o->exhaustive_limit);
    r->random_max_len = o->random_max_len && o->random_max_len <= m->max_len ? o->random_max_len : m->max_len;
    size_t random = m->n_vocab && r->random_max_len ? o->random : 0;
    size_t exhaustive = verify_count_inputs(m->n_vocab, L);
    run.planned = exhaustive > SIZE_MAX - random - o->runs ? SIZE_MAX : exhaustive + random + o->runs;
    if (o->max_inputs && run.planned > o->max_inputs) run.planned = o->max_inputs;

    Arena a;
    arena_init(&a);
    Value *in = ARENA_ARRAY(&a, Value, m->max_len + 1);
    /* runs of one token at max_len, then at every shorter length not left to PHASE_ALL (a count
     * that matters at exactly 11 of a token), a length at a time within a quarter of a budget */
    size_t runs = m->numeric_tokens || !m->max_len ? 0 : o->runs < m->n_vocab ? o->runs : m->n_vocab;
    r->runs_min_len = m->max_len;
    for (size_t n = m->max_len; runs && n > 0 && !run.stop; n--) {
        bool longest = n == m->max_len;
        if (!longest && (n <= L || (o->max_seconds > 0 && now_s() - run.start >= o->max_seconds / 4))) break;
        for (size_t t = 0; t < runs && !run.stop && !(longest && out_of_budget(&run)); t++) {
            for (size_t i = 0; i < n; i++) in[i] = m->vocab[t];
            check_one(&run, q, in, n, longest ? PHASE_RUN : PHASE_SHORT_RUN);
        }
        size_t before = r->runs;
        flush(&run, q); /* the time check above sees what was run */
        if (!longest && r->runs - before == runs) r->runs_min_len = n;
    }
    VerifyOdometer odo;
    verify_odometer_init(&odo, m->vocab, m->n_vocab, L, &a);
    size_t n;
    while (!run.stop && verify_odometer_next(&odo, in, &n)) {
        bool cut = o->exhaustive_seconds > 0 && now_s() - run.start >= o->exhaustive_seconds;
        if (out_of_budget(&run) || cut) {
            r->exhaustive_cut = cut && !r->out_of_inputs && !r->timed_out;
            flush(&run, q);
            if (!run.stop) r->exhaustive_len = n - 1; /* every input shorter than this one was checked */
            break;
        }
        check_one(&run, q, in, n, PHASE_ALL);
    }
    flush(&run, q);
    if (odo.done && !run.stop) r->exhaustive_len = L;
    uint64_t state = o->seed;
    for (size_t k = 0; k < random && !run.stop; k++) {
        /* a few random inputs whatever the time budget: on a slow model the phases before can
         * use all of it, and random inputs reach what runs of one token and short inputs miss */
        if (out_of_budget(&run) && (k >= MIN_RANDOM || r->out_of_inputs)) break;
        n = verify_random_input(m, r->random_max_len, &state, in);
        check_one(&run, q, in, n, PHASE_RANDOM);
    }
    flush(&run, q);
    arena_free(&q->arena);
    free(q);
    arena_free(&a);
    r->seconds = now_s() - run.start;
    return r->mismatches == 0;
}

void verify_sample_result_free(VerifySampleResult *r) {
    free(r->first_mismatch);
    r->first_mismatch = NULL;
}
