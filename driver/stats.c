/* raspcc --stats: what a compilation produced, as text or one JSON object (driver/compile.h). */
#include <math.h>
#include <stdlib.h>

#include "driver/compile.h"

/* A double in JSON: the shortest %g form that reads back as the same double; null for what JSON
 * cannot write (a softmax beta of a head that averages exact ties only is infinite). */
static void print_json_double(FILE *out, double v) {
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
}

/* How many margin checks the model makes (one per checked comparison of real values). */
static size_t margin_checks(const Model *m) {
    size_t n = 0;
    for (size_t i = 0; i < m->n_checks; i++) n += m->checks[i].kind == MODEL_CHECK_MARGIN;
    return n;
}

/* A per-layer list: "[a, b, c]" of heads or MLP hidden units. */
static void print_layer_list(FILE *out, const Model *m, bool heads) {
    fputc('[', out);
    for (size_t l = 0; l < m->n_layers; l++)
        fprintf(out, "%s%zu", l ? ", " : "", heads ? m->layers[l].n_heads : m->layers[l].mlp.w1.cols);
    fputc(']', out);
}

/* The selfcheck line: "1234 inputs (52 of one token at lengths 4 to 16, all up to length 3, 500 random
 * up to 16), 0 mismatches,
 * 0.4 s", with ", J inside the margin" for a model with margin checks (or J > 0) and ", largest
 * error E (bound B)" for a real-valued output, as rasprun --verify says them. */
static void print_selfcheck_text(FILE *out, const CompileJob *j) {
    const Model *m = &j->model;
    const VerifySampleResult *r = &j->selfcheck;
    if (!j->selfchecked) {
        fputs("skipped\n", out);
        return;
    }
    fprintf(out, "%zu input%s (", r->inputs, r->inputs == 1 ? "" : "s");
    if (r->runs && r->runs_min_len < m->max_len)
        fprintf(out, "%zu of one token at lengths %zu to %zu, ", r->runs, r->runs_min_len, m->max_len);
    else if (r->runs) fprintf(out, "%zu of one token at length %zu, ", r->runs, m->max_len);
    if (r->exhaustive_len) fprintf(out, "all up to length %zu, ", r->exhaustive_len);
    fprintf(out, "%zu random up to %zu", r->random, r->random_max_len);
    if (r->timed_out) fprintf(out, "; stopped at the %g s budget", COMPILE_SELFCHECK_SECONDS);
    else if (r->exhaustive_cut) fprintf(out, "; all-inputs phase cut at %g s", COMPILE_SELFCHECK_SECONDS / 2);
    fprintf(out, "), %zu mismatch%s, ", r->mismatches, r->mismatches == 1 ? "" : "es");
    if (r->margins || verify_model_has_margins(m)) fprintf(out, "%zu inside the margin, ", r->margins);
    double bound = verify_model_bound(m);
    double rel = verify_model_rel(m);
    if (bound > 0 && rel > 0) fprintf(out, "largest error %.2g (bound %g + %g |value|), ", r->max_error, bound, rel);
    else if (bound > 0) fprintf(out, "largest error %.2g (bound %g), ", r->max_error, bound);
    fprintf(out, "%.2f s\n", r->seconds);
}

static void print_selfcheck_json(FILE *out, const CompileJob *j) {
    const VerifySampleResult *r = &j->selfcheck;
    if (!j->selfchecked) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"inputs\": %zu, \"runs\": %zu, \"runs_min_len\": %zu, \"exhaustive_len\": %zu, \"random\": %zu, "
            "\"random_max_len\": %zu, \"mismatches\": %zu, \"errors_agreed\": %zu, \"inside_margin\": %zu, \"max_error\": ",
            r->inputs, r->runs, r->runs ? r->runs_min_len : 0, r->exhaustive_len, r->random, r->random_max_len, r->mismatches,
            r->errors_agreed, r->margins);
    print_json_double(out, r->max_error);
    fprintf(out, ", \"exhaustive_cut\": %s, \"timed_out\": %s, \"seconds\": %.3f}", r->exhaustive_cut ? "true" : "false",
            r->timed_out ? "true" : "false", r->seconds);
}

/* error_bound is verify_model_bound: 0 for an exact output (every output but a real-valued one);
 * both formats always show it and margin_checks. */
void compile_job_print_stats(FILE *out, const CompileJob *j, bool json) {
    const Model *m = &j->model;
    struct { double within, exact; } beta; /* the softmax temperatures that reproduce the heads */
    model_softmax_beta(m, 1e-12, &beta.within, &beta.exact);
    if (json) {
        fprintf(out, "{\"layers\": %zu, \"heads\": ", m->n_layers);
        print_layer_list(out, m, true);
        fprintf(out, ", \"residual_width\": %zu, \"mlp_hidden\": ", m->d_model);
        print_layer_list(out, m, false);
        fprintf(out, ", \"params\": %zu, \"nonzero_params\": %zu, \"compile_ms\": %.3f, \"file_bytes\": ",
                model_param_count(m), model_nonzero_count(m), j->compile_ms);
        if (j->file_bytes >= 0) fprintf(out, "%lld", j->file_bytes);
        else fputs("null", out);
        fputs(", \"error_bound\": ", out);
        print_json_double(out, verify_model_bound(m));
        fputs(", \"error_rel\": ", out);
        print_json_double(out, verify_model_rel(m));
        fprintf(out, ", \"margin_checks\": %zu, \"softmax_beta\": ", margin_checks(m));
        print_json_double(out, beta.exact);
        fputs(", \"softmax_beta_within\": ", out);
        print_json_double(out, beta.within);
        fputs(", \"selfcheck\": ", out);
        print_selfcheck_json(out, j);
        fputs("}\n", out);
        return;
    }
    fprintf(out, "layers:          %zu\nheads:           ", m->n_layers);
    print_layer_list(out, m, true);
    fprintf(out, "\nresidual_width:  %zu\nmlp_hidden:      ", m->d_model);
    print_layer_list(out, m, false);
    fprintf(out, "\nparams:          %zu\nnonzero_params:  %zu\ncompile_ms:      %.3f\n", model_param_count(m),
            model_nonzero_count(m), j->compile_ms);
    if (j->file_bytes >= 0) fprintf(out, "file_bytes:      %lld\n", j->file_bytes);
    fprintf(out, "error_bound:     %g\nerror_rel:       %g\nmargin_checks:   %zu\nsoftmax_beta:    %g (within 1e-12 from %g)\n"
            "selfcheck:       ", verify_model_bound(m), verify_model_rel(m), margin_checks(m), beta.exact, beta.within);
    print_selfcheck_text(out, j);
}
