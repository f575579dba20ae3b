/* One input through the model and the reference, classified. */
#include <string.h>

#include "ir/eval.h"
#include "verify/verify.h"

VerifyVerdict verify_input(const VerifyPair *p, const Value *input, size_t n, Arena *scratch, VerifyOutcome *o) {
    memset(o, 0, sizeof *o);
    o->input = input;
    o->n = n;
    /* Outside the domain (too long, a token the model does not know): the model was never meant
     * to answer it, so it is not a disagreement. model_tokenize writes token values into the
     * workspace, which model_run rewrites anyway. */
    size_t *ids = ARENA_ARRAY(scratch, size_t, n + 1);
    if (!model_tokenize(p->model, input, n, ids, p->ws->token_values, o->model_err, sizeof o->model_err))
        return o->verdict = VERIFY_OUTSIDE;
    o->model_ok = model_run(p->model, p->ws, input, n, scratch, &o->model_out, o->model_err, sizeof o->model_err);
    IrEvalError e;
    o->ref_ok = ir_eval(&p->ref->graph, p->ref->out, input, n, scratch, &o->ref_out, &e);
    if (!o->ref_ok) {
        char where[256];
        srcloc_format(e.loc, where, sizeof where);
        snprintf(o->ref_err, sizeof o->ref_err, "%s: %s", where, e.message);
    }
    if (!o->model_ok || !o->ref_ok) o->verdict = o->model_ok == o->ref_ok ? VERIFY_BOTH_ERROR : VERIFY_MISMATCH;
    else if (verify_same_output(o->model_out, o->ref_out, n, p->bound, &o->position)) o->verdict = VERIFY_AGREE;
    else o->verdict = VERIFY_MISMATCH;
    return o->verdict;
}
