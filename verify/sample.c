/* The sample driver: exhaustive up to a length, then seeded random inputs, within budgets. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verify/verify.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Run {
    const VerifyPair *p;
    const VerifySampleOptions *o;
    VerifySampleResult *r;
    double start;
    size_t planned;
    bool stop;
} Run;

/* Whether a budget forbids another input (and records which). */
static bool out_of_budget(Run *run) {
    if (run->o->max_inputs && run->r->inputs >= run->o->max_inputs) return run->r->out_of_inputs = true;
    if (run->o->max_seconds > 0 && now_s() - run->start >= run->o->max_seconds) return run->r->timed_out = true;
    return false;
}

static void check_one(Run *run, const Value *in, size_t n) {
    Arena scratch;
    arena_init(&scratch);
    VerifyOutcome oc;
    VerifyVerdict v = verify_input(run->p, in, n, &scratch, &oc);
    run->r->inputs++;
    if (v == VERIFY_BOTH_ERROR) run->r->errors_agreed++;
    if (v == VERIFY_MARGIN) run->r->margins++;
    if (oc.max_error > run->r->max_error) run->r->max_error = oc.max_error;
    /* Generated inputs come from the model's own vocabulary and lengths: one it cannot tokenize
     * is a defect of the model too. */
    if (v == VERIFY_MISMATCH || v == VERIFY_OUTSIDE) {
        run->r->mismatches++;
        if (!run->r->first_mismatch) run->r->first_mismatch = verify_format_report(&oc);
        if (run->o->on_mismatch) run->o->on_mismatch(run->o->ctx, &oc);
        if (!run->o->keep_going) run->stop = true;
    }
    if (run->o->on_progress) run->o->on_progress(run->o->ctx, run->r->inputs, run->planned);
    arena_free(&scratch);
}

bool verify_sample(const VerifyPair *p, const VerifySampleOptions *o, VerifySampleResult *r) {
    memset(r, 0, sizeof *r);
    const Model *m = p->model;
    Run run = {p, o, r, now_s(), 0, false};
    size_t L = o->exhaustive_len < m->max_len ? o->exhaustive_len : m->max_len;
    if (m->numeric_tokens) L = 0;
    if (o->exhaustive_limit) L = verify_lengths_within(m->n_vocab, L, o->exhaustive_limit);
    r->random_max_len = o->random_max_len && o->random_max_len <= m->max_len ? o->random_max_len : m->max_len;
    size_t random = m->n_vocab && r->random_max_len ? o->random : 0;
    size_t exhaustive = verify_count_inputs(m->n_vocab, L);
    run.planned = exhaustive > SIZE_MAX - random ? SIZE_MAX : exhaustive + random;
    if (o->max_inputs && run.planned > o->max_inputs) run.planned = o->max_inputs;

    Arena a;
    arena_init(&a);
    Value *in = ARENA_ARRAY(&a, Value, m->max_len + 1);
    VerifyOdometer odo;
    verify_odometer_init(&odo, m->vocab, m->n_vocab, L, &a);
    size_t n;
    while (!run.stop && verify_odometer_next(&odo, in, &n)) {
        r->exhaustive_len = n - 1; /* every input shorter than this one has been checked */
        if (out_of_budget(&run)) break;
        if (o->exhaustive_seconds > 0 && now_s() - run.start >= o->exhaustive_seconds) {
            r->exhaustive_cut = true;
            break;
        }
        check_one(&run, in, n);
    }
    if (odo.done) r->exhaustive_len = L;
    uint64_t state = o->seed;
    for (size_t k = 0; k < random && !run.stop; k++) {
        if (out_of_budget(&run)) break;
        n = verify_random_input(m, r->random_max_len, &state, in);
        check_one(&run, in, n);
        r->random++;
    }
    arena_free(&a);
    r->seconds = now_s() - run.start;
    return r->mismatches == 0;
}

void verify_sample_result_free(VerifySampleResult *r) {
    free(r->first_mismatch);
    r->first_mismatch = NULL;
}
