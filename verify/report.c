/* Mismatch reports: the input, the model's answer and the reference's, as typed JSON. */
#include <math.h>
#include <stdlib.h>

#include "verify/verify.h"

void verify_print_atom(FILE *out, Value v) {
    if (v.kind == VAL_FLOAT && !isfinite(v.as.f)) fputs(isnan(v.as.f) ? "NaN" : v.as.f > 0 ? "Infinity" : "-Infinity", out);
    else value_print_json(out, v);
}

void verify_print_atoms(FILE *out, const Value *v, size_t n) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        verify_print_atom(out, v[i]);
    }
    fputc(']', out);
}

static void print_side(FILE *out, bool ok, const Value *v, size_t n, const char *err) {
    if (ok) {
        verify_print_atoms(out, v, n);
    } else {
        fputs("{\"error\": ", out);
        value_print_json(out, value_str(err));
        fputc('}', out);
    }
}

void verify_print_report(FILE *out, const VerifyOutcome *o) {
    fputs("input ", out);
    verify_print_atoms(out, o->input, o->n);
    fputs(": model ", out);
    print_side(out, o->model_ok, o->model_out, o->n, o->model_err);
    fputs(", reference ", out);
    if (o->verdict == VERIFY_OUTSIDE) fputs("(not run: the input is outside the model's domain)", out);
    else print_side(out, o->ref_ok, o->ref_out, o->n, o->ref_err);
}

char *verify_format_report(const VerifyOutcome *o) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    verify_print_report(f, o);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

bool verify_model_has_margins(const Model *m) {
    for (size_t i = 0; i < m->n_checks; i++)
        if (m->checks[i].kind == MODEL_CHECK_MARGIN) return true;
    return false;
}

void verify_format_summary(const Model *m, double bound, const VerifyCounts *c, char *buf, size_t size) {
    int at = snprintf(buf, size, "%zu inputs, %zu mismatches, %zu errors agreed", c->inputs, c->mismatches,
                      c->errors_agreed);
    if (at >= 0 && (size_t)at < size && (c->margins || verify_model_has_margins(m)))
        at += snprintf(buf + at, size - (size_t)at, ", %zu inside the margin", c->margins);
    if (at >= 0 && (size_t)at < size && bound > 0 && verify_model_rel(m) > 0)
        snprintf(buf + at, size - (size_t)at, "; largest error %.3g (bound %g + %g |value|)", c->max_error, bound,
                 verify_model_rel(m));
    else if (at >= 0 && (size_t)at < size && bound > 0)
        snprintf(buf + at, size - (size_t)at, "; largest error %.3g (bound %g)", c->max_error, bound);
}
