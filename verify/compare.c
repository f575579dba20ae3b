/* Typed exact comparison of atoms (the rules are in verify.h). */
#include <math.h>
#include <string.h>

#include "verify/verify.h"

static bool same_float(double x, double y, double bound, double rel) {
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    if (bound > 0) return x == y || fabs(x - y) <= bound + rel * fabs(y); /* x == y: equal infinities */
    uint64_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx == by;
}

bool verify_same_atom(Value a, Value b, double bound) { return verify_same_atom_within(a, b, bound, 0); }

bool verify_same_atom_within(Value a, Value b, double bound, double rel) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_INT: return a.as.i == b.as.i;
    case VAL_FLOAT: return same_float(a.as.f, b.as.f, bound, rel);
    case VAL_STR: return strcmp(a.as.s, b.as.s) == 0;
    }
    return false;
}

bool verify_same_output(const Value *a, const Value *b, size_t n, double bound, double rel, size_t *where) {
    for (size_t i = 0; i < n; i++) {
        if (!verify_same_atom_within(a[i], b[i], bound, rel)) {
            if (where) *where = i;
            return false;
        }
    }
    return true;
}

double verify_model_bound(const Model *m) {
    bool real_valued = m->output_kind == MODEL_OUT_NUMERICAL && m->out_count == 0;
    return real_valued && m->out_error_bound > 0 ? m->out_error_bound : 0.0;
}

double verify_model_rel(const Model *m) { return verify_model_bound(m) > 0 ? m->out_error_rel : 0.0; }
