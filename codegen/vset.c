/* Value sets as data: the order and identity of atoms (-0.0 before 0.0, kinds apart), building
 * a set, looking a value up, and what a set allows a numerical encoding to tell apart. No
 * analysis here: valueset.c computes each s-op's set, every later pass reads sets through these. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"

/* value_order, with -0.0 before 0.0: the reference prints them differently, so a set of exact
 * atoms keeps both (where the kind of a number matters; kinds_collapse merges them elsewhere). */
int atom_order(Value a, Value b) {
    int c = value_order(a, b);
    if (c || a.kind != VAL_FLOAT || b.kind != VAL_FLOAT || a.as.f != 0) return c;
    return (int)!signbit(a.as.f) - (int)!signbit(b.as.f);
}

/* atom_order; two floats, neither NaN (the means of a long window: 10^4 or more, sorted once
 * per length), compared directly: their numbers' order, -0.0 before 0.0. */
static int cmp_values(const void *pa, const void *pb) {
    const Value *a = pa, *b = pb;
    if (a->kind != VAL_FLOAT || b->kind != VAL_FLOAT || isnan(a->as.f) || isnan(b->as.f)) return atom_order(*a, *b);
    double x = a->as.f, y = b->as.f;
    return x != y ? (x > y) - (x < y) : (int)!signbit(x) - (int)!signbit(y);
}

/* Two floats that differ only by rounding: the same rational reached along different paths
 * (3/7 - 2/7 vs 1/7). Only approximate sets (ValueSet.approx) identify them. */
bool scalar_twins(double a, double b) {
    return fabs(a - b) <= 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static bool float_twins(Value a, Value b) {
    return a.kind == VAL_FLOAT && b.kind == VAL_FLOAT && scalar_twins(a.as.f, b.as.f);
}

/* Sorts vals[0..n) by cmp_values; a long sorted run followed by a few more (the means of a
 * window in order, then the source values and the default) costs one merge, not a sort. */
static void sort_values(Value *vals, size_t n) {
    size_t m = 1;
    while (m < n && cmp_values(&vals[m - 1], &vals[m]) <= 0) m++;
    if (m >= n) return;
    Value *tmp = n - m <= 64 && m >= 1024 ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        qsort(vals, n, sizeof *vals, cmp_values);
        return;
    }
    qsort(vals + m, n - m, sizeof *vals, cmp_values);
    size_t i = 0, j = m, o = 0;
    while (i < m || j < n) tmp[o++] = j == n || (i < m && cmp_values(&vals[i], &vals[j]) <= 0) ? vals[i++] : vals[j++];
    memcpy(vals, tmp, n * sizeof *vals);
    free(tmp);
}

/* Sorts and deduplicates vals[0..n) in place and fills in the flags. Distinct doubles stay
 * distinct, however close: the program can tell them apart (==), so the compiler must too. */
static ValueSet vs_make(Value *vals, size_t n) {
    sort_values(vals, n);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || atom_order(vals[u - 1], vals[i]) != 0) vals[u++] = vals[i];
    ValueSet vs = {vals, u, false, true, true, false, false, false};
    for (size_t i = 0; i < u; i++) {
        vs.numeric = vs.numeric && value_is_number(vals[i]);
        vs.all_int = vs.all_int && (vals[i].kind == VAL_INT || vals[i].kind == VAL_BOOL);
    }
    return vs;
}

ValueSet vs_from_values(Value *vals, size_t n) { return vs_make(vals, n); }


/* value_order, or for a set collapsed by number (see kinds_collapse) the order of the numbers */
int vs_member_order(const ValueSet *vs, Value a, Value b) {
    if (vs->by_number && value_is_number(a) && value_is_number(b)) {
        int c = value_number_order(a, b);
        /* -0.0 first; an int 0 or False is +0, as 0.0 is */
        return c == 0 && vs->zero_signs ? (int)!vs_negative_zero(a) - (int)!vs_negative_zero(b) : c;
    }
    return atom_order(a, b);
}

bool vs_negative_zero(Value v) { return v.kind == VAL_FLOAT && v.as.f == 0 && signbit(v.as.f); }

/* Whether v is no integer, or one that float64 holds exactly (|v| <= 2^53). */
static bool int_fits_double(Value v) {
    return v.kind != VAL_INT || (v.as.i <= (INT64_C(1) << 53) && v.as.i >= -(INT64_C(1) << 53));
}

double vs_single_gap(double mag) { return fmax(1, 1e-6 * mag); }

bool vs_decodable(const ValueSet *vs, bool with_kinds, double *gap) {
    if (vs->unbounded || !vs->numeric || vs->n == 0 || vs->approx) return false;
    double g = INFINITY, mag = 0;
    for (size_t i = 0; i < vs->n; i++) {
        double x = value_as_double(vs->vals[i]);
        if (!isfinite(x) || !int_fits_double(vs->vals[i])) return false; /* 2^53 + 1: no number holds it */
        mag = fmax(mag, fabs(x));
        if (i == 0) continue;
        double d = x - value_as_double(vs->vals[i - 1]);
        /* 1 and 1.0: a kind the number cannot carry (a kind block can); -0.0 and 0.0: a sign */
        if (d == 0 && (!with_kinds || vs->vals[i].kind == vs->vals[i - 1].kind)) return false;
        if (d > 0) g = fmin(g, d);
    }
    if (g < 1e-9 * fmax(1, mag)) return false;
    if (gap) *gap = isfinite(g) ? g : vs_single_gap(mag);
    return true;
}

bool vs_inexact_as_numbers(const ValueSet *vs) {
    for (size_t i = 0; i < vs->n; i++)
        if (!int_fits_double(vs->vals[i])) return true;
    for (size_t i = 1; i < vs->n; i++)
        if (value_is_number(vs->vals[i - 1]) && value_is_number(vs->vals[i])) {
            double a = value_as_double(vs->vals[i - 1]), b = value_as_double(vs->vals[i]);
            if (!vs->approx && a != b && scalar_twins(a, b)) return true;
            if (a == 0 && b == 0 && vs->vals[i].kind == VAL_FLOAT && vs->vals[i - 1].kind == VAL_FLOAT) return true; /* -0.0, 0.0 */
        }
    return false;
}


bool vs_contains(const ValueSet *vs, Value v, size_t *index) {
    size_t lo = 0, hi = vs->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = vs_member_order(vs, vs->vals[mid], v);
        if (c == 0) {
            if (index) *index = mid;
            return true;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    /* in an approximate set, a rounding twin of v stands for it */
    for (size_t i = lo > 0 ? lo - 1 : 0; vs->approx && i < vs->n && i <= lo; i++)
        if (float_twins(vs->vals[i], v)) {
            if (index) *index = i;
            return true;
        }
    return false;
}

void vs_describe(const IrNode *n, char *buf, size_t size) {
    if (n->name) snprintf(buf, size, "'%s'", n->name);
    else snprintf(buf, size, "this %s", ir_kind_name(n->kind));
}

/* Whether a value set mixes strings with numbers or bools (the reference refuses an s-op that
 * does so across positions, so such an s-op is materialised and checked). */
bool vs_mixed_kinds(const ValueSet *vs) {
    bool str = false, other = false;
    for (size_t i = 0; i < vs->n; i++) {
        if (vs->vals[i].kind == VAL_STR) str = true;
        else other = true;
    }
    return str && other;
}

/* Whether two members are equal numbers of different kinds (1 and 1.0, True and 1). */
bool vs_kind_collisions(const ValueSet *vs) {
    if (vs->unbounded || vs->by_number) return false;
    for (size_t i = 1; i < vs->n; i++)
        if (value_is_number(vs->vals[i]) && value_is_number(vs->vals[i - 1]) &&
            value_as_double(vs->vals[i]) == value_as_double(vs->vals[i - 1]) && vs->vals[i].kind != vs->vals[i - 1].kind)
            return true; /* (-0.0 and 0.0 are one kind: a sign, which the one-hot tells) */
    return false;
}

double vs_resolved_gap(const ValueSet *vs, bool twins_are_one, double *mag) {
    double gap = INFINITY, m = 0;
    for (size_t i = 0; vs && i < vs->n; i++) {
        double b = value_as_double(vs->vals[i]);
        m = fmax(m, fabs(b));
        if (!i) continue;
        double a = value_as_double(vs->vals[i - 1]);
        if (b > a && !(twins_are_one && scalar_twins(a, b))) gap = fmin(gap, b - a);
    }
    if (mag) *mag = m;
    return fmax(gap, 1e-9 * m);
}

double vs_len_sets_gap(const ValueSet *sets, size_t count, bool twins_are_one, double *mag) {
    double gap = INFINITY, mag_all = 0;
    for (size_t n = 0; n < count; n++) {
        double m, g = vs_resolved_gap(&sets[n], twins_are_one, &m);
        mag_all = fmax(mag_all, m);
        if (sets[n].n > 1) gap = fmin(gap, g); /* one value: any margin tells it */
    }
    if (mag) *mag = mag_all;
    return isfinite(gap) ? gap : vs_single_gap(mag_all);
}

ValueResult map_value_via(Plan *p, const IrNode *n, const IrNode *x, Value v, char *msg, size_t msgsize) {
    if (n == x) return (ValueResult){.ok = true, .value = v};
    if (n->kind == IR_CONST) return (ValueResult){.ok = true, .value = n->u.constant};
    if (n->kind != IR_MAP) {
        snprintf(msg, msgsize, "reads a %s besides the one s-op it is computed from", ir_kind_name(n->kind));
        return (ValueResult){.ok = false, .error = msg};
    }
    Value in[3];
    for (uint32_t j = 0; j < n->u.map.nargs; j++) {
        ValueResult r = map_value_via(p, n->u.map.args[j], x, v, msg, msgsize);
        if (!r.ok) return r;
        in[j] = r.value;
    }
    return ir_map_apply(n, in, p->arena, msg, msgsize);
}
