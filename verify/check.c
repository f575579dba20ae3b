/* One input through the model and the reference, classified. */
#include <math.h>
#include <string.h>

#include "ir/eval.h"
#include "verify/verify.h"

bool verify_is_margin_error(const char *model_err) {
    return strncmp(model_err, MODEL_MARGIN_ERROR, strlen(MODEL_MARGIN_ERROR)) == 0;
}

static bool is_number(Value v) { return v.kind == VAL_BOOL || v.kind == VAL_INT || v.kind == VAL_FLOAT; }

/* The largest |a_i - b_i| over the positions where both are finite numbers. */
static double max_error(const Value *a, const Value *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!is_number(a[i]) || !is_number(b[i])) continue;
        double x = value_as_double(a[i]), y = value_as_double(b[i]);
        if (isfinite(x) && isfinite(y) && fabs(x - y) > worst) worst = fabs(x - y);
    }
    return worst;
}

VerifyVerdict verify_input(const VerifyPair *p, const Value *input, size_t n, Arena *scratch, VerifyOutcome *o) {
    memset(o, 0, sizeof *o);
    o->input = input;
    o->n = n;
    /* Outside the domain (too long, a token the model does not know): the model was never meant
     * to answer it, so it is not a disagreement. model_tokenize writes token values into the
     * workspace, which model_run rewrites anyway. */
    if (!verify_in_domain(p, input, n, scratch, o->model_err, sizeof o->model_err)) return o->verdict = VERIFY_OUTSIDE;
    ModelOutcome mo;
    model_run_batch(p->model, p->ws, &input, &n, 1, scratch, &mo);
    return verify_outcome(p, input, n, &mo, scratch, o);
}

bool verify_in_domain(const VerifyPair *p, const Value *input, size_t n, Arena *scratch, char *err, size_t errsize) {
    size_t *ids = ARENA_ARRAY(scratch, size_t, n + 1);
    return model_tokenize(p->model, input, n, ids, p->ws->token_values, err, errsize);
}

VerifyVerdict verify_outcome(const VerifyPair *p, const Value *input, size_t n, const ModelOutcome *mo, Arena *scratch,
                             VerifyOutcome *o) {
    memset(o, 0, sizeof *o);
    o->input = input;
    o->n = n;
    o->model_ok = mo->ok;
    o->model_out = mo->out;
    if (!mo->ok) snprintf(o->model_err, sizeof o->model_err, "%s", mo->err);
    IrEvalError e;
    o->ref_ok = ir_eval(&p->ref->graph, p->ref->out, input, n, scratch, &o->ref_out, &e);
    if (!o->ref_ok) {
        char where[256];
        srcloc_format(e.loc, where, sizeof where);
        snprintf(o->ref_err, sizeof o->ref_err, "%s: %s", where, e.message);
    }
    if (!o->model_ok && verify_is_margin_error(o->model_err)) return o->verdict = VERIFY_MARGIN;
    /* the weights' error flag against the checks: a disagreement whatever the reference says */
    if (!o->model_ok && !strncmp(o->model_err, MODEL_FLAG_ERROR, strlen(MODEL_FLAG_ERROR))) return o->verdict = VERIFY_MISMATCH;
    if (o->model_ok && o->ref_ok) o->max_error = max_error(o->model_out, o->ref_out, n);
    if (!o->model_ok || !o->ref_ok) o->verdict = o->model_ok == o->ref_ok ? VERIFY_BOTH_ERROR : VERIFY_MISMATCH;
    else if (verify_same_output(o->model_out, o->ref_out, n, p->bound, verify_model_rel(p->model), &o->position)) o->verdict = VERIFY_AGREE;
    else o->verdict = VERIFY_MISMATCH;
    return o->verdict;
}
