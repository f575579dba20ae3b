/* A compiled model on numeric tokens, outputs as doubles (sim/sim.h). */
#include <math.h>
#include <stdio.h>

#include "sim/sim.h"

bool sim_run(const Model *m, Workspace *ws, const double *tokens, size_t len, bool ints, double *out, Arena *scratch,
             char *err, size_t errsize) {
    Value *in = arena_array(scratch, len ? len : 1, sizeof *in);
    for (size_t i = 0; i < len; i++) in[i] = ints ? value_int((int64_t)tokens[i]) : value_float(tokens[i]);
    Value *got = NULL;
    bool ok = model_run(m, ws, in, len, scratch, &got, err, errsize);
    for (size_t i = 0; ok && i < len; i++) {
        if (!value_is_number(got[i])) {
            snprintf(err, errsize, "the model's output at position %zu is not a number", i);
            ok = false;
        } else {
            out[i] = value_as_double(got[i]);
        }
    }
    arena_free(scratch);
    arena_init(scratch);
    return ok;
}

double sim_model_bound(const Model *m, double v) {
    bool real_valued = m->output_kind == MODEL_OUT_NUMERICAL && m->out_count == 0;
    if (!real_valued || m->out_error_bound <= 0) return 0; /* decoded to exact atoms */
    return m->out_error_bound + m->out_error_rel * fabs(v);
}
