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
