/* The error flag: layers that compute the runtime's checks into a residual dim (errflag.h).
 *
 * Every failure region of a check becomes a few ReLU units over a linear functional F of the
 * residual: a ramp clamp((F - a) / (b - a), 0, 1) is two units, a bump four. Each ramp lies on
 * the passing side of its check's boundary and reaches 1 on the boundary, so that every failing
 * value sees the whole ramp, and where a check passes only values inside the flag's band
 * (runtime/flag_band.h) see part of it. Such sums cancel only up to rounding where the checks
 * pass, so stage A sums them into scratch dims and stage B reads those through dead zones,
 * err += 2 ReLU(raw - 1/4), 4 ReLU(a + b (+ c) - k + 1/2) for an AND of k indicators: exactly 0
 * unless the sum is far from 0. Every unit that writes err is a ReLU with a positive output
 * weight, so err is a sum of terms >= 0: it is 0.0 exactly when no unit fires, and no rounding
 * residue of one term can cancel another. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/errflag.h"
#include "runtime/flag_band.h"
#include "runtime/forward.h"
#include "runtime/precision.h"
#include "runtime/ranges.h"

enum { STAGE_A, STAGE_B, STAGE_C, N_STAGES };

/* A linear functional of the residual: sum of coefs[t] * x[dims[t]]. */
typedef struct Fn {
    size_t n;
    uint32_t *dims;
    double *coefs;
} Fn;

/* One hidden unit: ReLU(scale * in + bias), added times out_coef to dim out. */
typedef struct Unit {
    Fn in;
    double scale, bias;
    uint32_t out;
    double out_coef;
    double extent; /* |in| wherever its rounding matters (rounding_budget), for a sum that cancels */
} Unit;

/* A head of the flag (stage A): query, key (one score column), one value column into out. */
typedef struct FlagHead {
    Fn q, k, v;
    uint32_t out;
    const char *label;
} FlagHead;

typedef struct Flag {
    Model *m;
    Arena *a;           /* scratch: everything here but what goes into the model */
    size_t D0, D;       /* the residual's width before and after */
    const char **names; /* labels of the new dims D0.. */
    bool *cancels;      /* new dims whose units cancel up to rounding (their noise is budgeted) */
    double *bound;      /* |x_d| over every input, for the D0 dims and then the new ones */
    const double *bos_row; /* the model's BOS row after its layers (D0 dims) */
    size_t names_cap;
    uint32_t bos, one, err;
    uint32_t raw; /* UINT32_MAX until a check sums into it (raw_dim) */
    Unit *units[N_STAGES];
    size_t n_units[N_STAGES], cap_units[N_STAGES];
    FlagHead *heads;
    size_t n_heads, cap_heads;
    uint32_t *len_ind; /* per-length value sets: len_ind[n - 1] is 1 at inputs of length n */
    char *msg;
    size_t msgsize;
} Flag;

static bool refuse(Flag *f, const char *fmt, const char *what) {
    snprintf(f->msg, f->msgsize, fmt, what);
    return false;
}

/* A new residual dim; cancels: its units sum ramps whose rounding must stay small (budget). */
static uint32_t new_dim(Flag *f, const char *name, bool cancels, double bound) {
    size_t i = f->D - f->D0;
    if (i == f->names_cap) {
        size_t cap = f->names_cap ? 2 * f->names_cap : 16;
        f->names = arena_grow(f->a, f->names, f->names_cap, cap, sizeof *f->names);
        f->cancels = arena_grow(f->a, f->cancels, f->names_cap, cap, sizeof *f->cancels);
        f->bound = arena_grow(f->a, f->bound, f->D0 + f->names_cap, f->D0 + cap, sizeof *f->bound);
        f->names_cap = cap;
    }
    f->names[i] = arena_strdup(f->a, name);
    f->cancels[i] = cancels;
    f->bound[f->D] = bound;
    return (uint32_t)f->D++;
}

/* The scratch dim the ramps of stage A sum into, made at its first use. */
static uint32_t raw_dim(Flag *f) {
    if (f->raw == UINT32_MAX) f->raw = new_dim(f, "err:raw", true, 0);
    return f->raw;
}

static Fn fn_dim(Flag *f, uint32_t d, double coef) {
    Fn F = {1, ARENA_NEW(f->a, uint32_t), ARENA_NEW(f->a, double)};
    F.dims[0] = d;
    F.coefs[0] = coef;
    return F;
}

static Fn fn_terms(Flag *f, size_t n, const uint32_t *dims, const double *coefs) {
    Fn F = {n, ARENA_ARRAY(f->a, uint32_t, n), ARENA_ARRAY(f->a, double, n)};
    memcpy(F.dims, dims, n * sizeof *dims);
    memcpy(F.coefs, coefs, n * sizeof *coefs);
    return F;
}

/* sum of coef_i * e_{dims_i} for a block [dim, dim + count) (coef 1 where flags is NULL, else
 * only the dims whose flag equals `want`), plus extra * e_{x}. */
static Fn fn_block(Flag *f, size_t dim, size_t count, const bool *flags, bool want, uint32_t x, double extra) {
    Fn F = {0, ARENA_ARRAY(f->a, uint32_t, count + 1), ARENA_ARRAY(f->a, double, count + 1)};
    for (size_t d = 0; d < count; d++)
        if (!flags || flags[d] == want) F.dims[F.n] = (uint32_t)(dim + d), F.coefs[F.n++] = 1.0;
    if (extra != 0) F.dims[F.n] = x, F.coefs[F.n++] = extra;
    return F;
}

static double fn_at(Fn F, const double *x) {
    double s = 0;
    for (size_t t = 0; t < F.n; t++) s += F.coefs[t] * x[F.dims[t]];
    return s;
}

/* flag_rounding (runtime/flag_band.h) of F over the model's dims. */
static double fn_rounding(const Flag *f, Fn F, double extra) {
    size_t *dims = ARENA_ARRAY(f->a, size_t, F.n ? F.n : 1);
    for (size_t t = 0; t < F.n; t++) dims[t] = F.dims[t];
    return flag_rounding(F.n, dims, F.coefs, f->bound, extra);
}

static void unit_x(Flag *f, int stage, Fn in, double scale, double bias, uint32_t out, double coef, double extent) {
    if (f->n_units[stage] == f->cap_units[stage]) {
        size_t cap = f->cap_units[stage] ? 2 * f->cap_units[stage] : 64;
        f->units[stage] = arena_grow(f->a, f->units[stage], f->cap_units[stage], cap, sizeof(Unit));
        f->cap_units[stage] = cap;
    }
    f->units[stage][f->n_units[stage]++] = (Unit){in, scale, bias, out, coef, extent};
}

/* A unit whose input is bounded only by the values' bounds (the rounding budget reads those). */
static void unit(Flag *f, int stage, Fn in, double scale, double bias, uint32_t out, double coef) {
    double extent = 0;
    for (size_t t = 0; t < in.n; t++) extent += fabs(in.coefs[t]) * f->bound[in.dims[t]];
    unit_x(f, stage, in, scale, bias, out, coef, extent);
}

/* coef * clamp((F - a) / (b - a), 0, 1), a != b: 0 on a's side, coef from b on; |F| <= extent
 * wherever it matters. */
static void ramp(Flag *f, int st, Fn F, double a, double b, uint32_t out, double coef, double extent) {
    double s = b > a ? 1 : -1, w = fabs(b - a);
    unit_x(f, st, F, s, -s * a, out, coef / w, extent);
    unit_x(f, st, F, s, -s * b, out, -coef / w, extent);
}

/* coef * ReLU(F - a) / (b - a), one unit straight into err: 0 on a's side, coef at b, more
 * beyond (a tail of a failure region, which needs no clamp: err only adds terms >= 0). */
static void tail(Flag *f, int st, Fn F, double a, double b, double coef) {
    double s = b > a ? 1 : -1;
    unit_x(f, st, F, s, -s * a, f->err, coef / fabs(b - a), 0);
}

/* coef on [a1, b1], 0 outside (a0, b0), linear between (a0 < a1 <= b1 < b0). */
static void bump(Flag *f, int st, Fn F, double a0, double a1, double b1, double b0, uint32_t out, double coef,
                 double extent) {
    ramp(f, st, F, a0, a1, out, coef, extent);
    ramp(f, st, F, b1, b0, out, -coef, extent);
}

/* An AND of indicators (each about 0 or 1) into err: 4 ReLU(sum - (k - 1/2)), exactly 0 unless
 * every one is above 1/2 (and then >= 1 when each is within 1/8 of 1). */
static void and_into_err(Flag *f, int st, const uint32_t *dims, size_t k) {
    Fn F = {0, ARENA_ARRAY(f->a, uint32_t, k), ARENA_ARRAY(f->a, double, k)};
    for (size_t i = 0; i < k; i++) F.dims[F.n] = dims[i], F.coefs[F.n++] = 1;
    unit(f, st, F, 1, -((double)k - 0.5), f->err, 4);
}

/* The block [dim, dim + count) against model_block_one_hot: per entry e, tails straight into err
 * (1 at -t and at 1 + t, 0 within t/2 of [-t, 1 + t]'s inside) and a bump into `out` (stage A's
 * raw: 1 on [t, 1 - t], 0 within t/2 of 0 and 1), whose rounding is that of values in
 * [-t, 1 + t] (beyond, a tail fires); then, all entries within t of 0 or 1, a block sum below
 * 1/2 (no 1) or above 3/2 (several) by 4 ReLU(1/2 - sum) + 4 ReLU(sum - 3/2) into err (>= 2 -
 * 4 count t: errflag_add refuses count t above 1/8). */
static void onehot_detector(Flag *f, size_t dim, size_t count, uint32_t out) {
    double t = MODEL_ONEHOT_TOL, w = t / 2;
    for (size_t d = 0; d < count; d++) {
        Fn e = fn_dim(f, (uint32_t)(dim + d), 1);
        tail(f, STAGE_A, e, -t + w, -t, 1);
        bump(f, STAGE_A, e, t - w, t, 1 - t, 1 - t + w, out, 1, 1 + t);
        tail(f, STAGE_A, e, 1 + t - w, 1 + t, 1);
    }
    Fn sum = fn_block(f, dim, count, NULL, false, 0, 0);
    unit(f, STAGE_A, sum, -1, 0.5, f->err, 4);
    unit(f, STAGE_A, sum, 1, -1.5, f->err, 4);
}

/* The distinct numbers of a sorted value list (kinds sharing a number count once). */
static size_t distinct_numbers(Flag *f, const Value *vals, size_t n, double **out) {
    double *u = ARENA_ARRAY(f->a, double, n ? n : 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = value_as_double(vals[i]);
        if (k == 0 || u[k - 1] != x) u[k++] = x;
    }
    *out = u;
    return k;
}

/* Into `out`: clamp-to-[0, 1] of "F is farther than margin[i] from every u[i] of u[0..k)": 1
 * wherever it is, 0 within margin[i] / 2 of some u[i], ramps between (u increasing, members
 * farther apart than the sum of their margins); |F| <= extent wherever the rounding matters. */
static void near_none(Flag *f, int st, Fn F, const double *u, const double *margin, size_t k, uint32_t out,
                      double extent) {
    if (k == 0) { /* no value at all: always fails */
        unit(f, st, fn_dim(f, f->one, 1), 1, 0, out, 1);
        return;
    }
    ramp(f, st, F, u[0] - margin[0] / 2, u[0] - margin[0], out, 1, extent);
    for (size_t i = 0; i + 1 < k; i++)
        bump(f, st, F, u[i] + margin[i] / 2, u[i] + margin[i], u[i + 1] - margin[i + 1], u[i + 1] - margin[i + 1] / 2, out, 1,
             extent);
    ramp(f, st, F, u[k - 1] + margin[k - 1] / 2, u[k - 1] + margin[k - 1], out, 1, extent);
}

/* The readout functional of a numerical output. */
static Fn readout_fn(Flag *f) {
    const Model *M = f->m;
    Fn F = {0, ARENA_ARRAY(f->a, uint32_t, f->D0), ARENA_ARRAY(f->a, double, f->D0)};
    for (size_t d = 0; d < f->D0; d++)
        if (M->out_readout[d] != 0) F.dims[F.n] = (uint32_t)d, F.coefs[F.n++] = M->out_readout[d];
    return F;
}

/* Whether the flag's value of F and the runtime's stay within 1/16 of the smallest margin (so
 * that a ramp of half a margin sees at most 1/8 of it): else refused. */
static bool rounding_fits(Flag *f, Fn F, double margin, const char *what) {
    double r = fn_rounding(f, F, 0);
    if (r <= margin / 16) return true;
    snprintf(f->msg, f->msgsize, "--error-flag: the rounding of the output %s's readout (up to %.3g over the bounds of "
             "its terms) is not small against its %s %.3g", f->m->output_name, r, what, margin);
    return false;
}

/* A real-valued output whose kind block names int or bool: where the block says that kind, v
 * must lie within b_r = error_bound + error_rel |r| of an integer r (0 or 1 for bool). The bounds
 * are tiny (1e-14), below what a ramp can resolve on v, so this test uses no ramp: |v| is bounded
 * over every input (runtime/precision.h), and per integer r of [-J, J] (J = ceil(bound) + 1)
 *   stage A: dist_r = ReLU(v - r) + ReLU(r - v), exact for the integer nearest v (v - r is
 *     exact within 1/2 of r, and one of the two terms is 0);
 *   stage B: h_r = ReLU(dist_r - 1/2), exactly 0 for the nearest integer, >= 1/2 - b_r for the
 *     others where a check passes; off = 2 ReLU(1/2 - kind), exactly 0 where the kind is hot;
 *   stage C: err += ReLU(dist_r - 4 h_r - M off - (b_r - 2 delta)), M = 2 J + 4: for the
 *     nearest integer where the kind is hot, exactly "dist_r > b_r - 2 delta"; 0 for the others
 *     and where another kind is hot.
 * delta: how far the flag's v and the runtime's can differ (0 for a readout of one dim). For bool
 * (0 and 1 only), tails v < -1/4 and v > 5/4 gated alike. */
static bool integer_kinds(Flag *f, Fn F) {
    const Model *M = f->m;
    double V = 0, *tight = ARENA_ARRAY(f->a, double, f->D0 ? f->D0 : 1);
    memcpy(tight, f->bound, f->D0 * sizeof *tight);
    model_tighten_bounds(M, tight);
    for (size_t t = 0; t < F.n; t++) V += fabs(F.coefs[t]) * tight[F.dims[t]];
    double delta = fn_rounding(f, F, 0);
    for (size_t kk = 0; kk < M->out_kind_count; kk++) {
        ValueKind kind = M->out_kinds[kk];
        if (kind == VAL_FLOAT) continue;
        if (kind != VAL_BOOL && !(V <= ERRFLAG_MAX_INTEGERS)) {
            char what[400];
            snprintf(what, sizeof what, "%s is real-valued and may be read as an int: the flag checks each integer its "
                     "values can reach, and an interval analysis of the model bounds them only by %.3g, above %g", M->output_name, V, ERRFLAG_MAX_INTEGERS);
            return refuse(f, "--error-flag: the output %s", what);
        }
        long J = kind == VAL_BOOL ? 1 : (long)ceil(V) + 1, lo = kind == VAL_BOOL ? 0 : -J;
        double big = 2.0 * (double)J + 4.0 + (kind == VAL_BOOL && isfinite(V) ? 2 * V : 0);
        if (kind == VAL_BOOL && !isfinite(V))
            return refuse(f, "--error-flag: the output %s may be read as a bool, and the interval analysis of its readout "
                          "(runtime/precision.h) does not bound it", M->output_name);
        uint32_t kind_dim = (uint32_t)(M->out_kind_dim + kk);
        char name[96];
        snprintf(name, sizeof name, "err:not %s", kind == VAL_BOOL ? "bool" : "int");
        uint32_t off = new_dim(f, name, false, 1);
        unit(f, STAGE_B, fn_dim(f, kind_dim, 1), -1, 0.5, off, 2);
        for (long r = lo; r <= J; r++) {
            double b = M->out_error_bound + M->out_error_rel * fabs((double)r);
            if (!(2 * b < 0.5))
                return refuse(f, "--error-flag: the output %s is read as an integer within an error bound of a quarter "
                              "or more", M->output_name);
            if (!(4 * delta < b)) {
                snprintf(f->msg, f->msgsize, "--error-flag: the rounding of the output %s's readout (up to %.3g over the "
                         "bounds of its terms) is not small against its error bound %.3g", M->output_name, delta, b);
                return false;
            }
            snprintf(name, sizeof name, "err:distance to %ld", r);
            uint32_t dist = new_dim(f, name, false, 0);
            unit(f, STAGE_A, F, 1, -(double)r, dist, 1);
            unit(f, STAGE_A, F, -1, (double)r, dist, 1);
            snprintf(name, sizeof name, "err:not nearest %ld", r);
            uint32_t h = new_dim(f, name, false, 0);
            unit(f, STAGE_B, fn_dim(f, dist, 1), 1, -0.5, h, 1);
            const uint32_t dims[3] = {dist, h, off};
            const double coefs[3] = {1, -4, -big};
            unit(f, STAGE_C, fn_terms(f, 3, dims, coefs), 1, -(b - 2 * delta), f->err, 1);
        }
        if (kind == VAL_BOOL)
            for (int side = 0; side < 2; side++) {
                snprintf(name, sizeof name, "err:bool %s", side ? "above 5/4" : "below -1/4");
                uint32_t t = new_dim(f, name, false, 0);
                unit(f, STAGE_A, F, side ? 1 : -1, side ? -1.25 : -0.25, t, 1);
                Fn test = fn_block(f, t, 1, NULL, false, off, -big);
                unit(f, STAGE_C, test, 1, 0, f->err, 1);
            }
    }
    return true;
}

/* The kinds the members with number x have. */
static bool has_kind(const Value *vals, size_t n, double x, ValueKind k) {
    for (size_t i = 0; i < n; i++)
        if (value_as_double(vals[i]) == x && vals[i].kind == k) return true;
    return false;
}

/* A numerical output's kind of value: where F decodes to u (a plateau 1 on [u - m, u + m], 0
 * outside (u - 3m/2, u + 3m/2), into a scratch dim) and the kind block says a kind no member with
 * number u has, stage B fires (with the length indicator `len` when len_dim is set). A passing
 * value decodes to a neighbour u' more than 2m from u, so the plateau reaches 1/2 for it only
 * where it is farther than 3m/4 from u': inside the band. */
static void kind_mismatch(Flag *f, Fn F, const Value *vals, size_t n, double m, const uint32_t *len_dim,
                          const char *where, double extent) {
    const Model *M = f->m;
    double *u;
    size_t k = distinct_numbers(f, vals, n, &u);
    for (size_t i = 0; i < k; i++) {
        uint32_t near = UINT32_MAX;
        for (size_t kk = 0; kk < M->out_kind_count; kk++) {
            if (has_kind(vals, n, u[i], M->out_kinds[kk])) continue;
            if (near == UINT32_MAX) {
                char name[96];
                snprintf(name, sizeof name, "err:near%s:%.17g", where, u[i]);
                near = new_dim(f, name, true, 0);
                bump(f, STAGE_A, F, u[i] - 1.5 * m, u[i] - m, u[i] + m, u[i] + 1.5 * m, near, 1, extent);
            }
            uint32_t and[3] = {near, (uint32_t)(M->out_kind_dim + kk), len_dim ? *len_dim : 0};
            and_into_err(f, STAGE_B, and, len_dim ? 3 : 2);
        }
    }
}

static FlagHead *new_head(Flag *f, const char *label) {
    if (f->n_heads == f->cap_heads) {
        size_t cap = f->cap_heads ? 2 * f->cap_heads : 4;
        f->heads = arena_grow(f->a, f->heads, f->cap_heads, cap, sizeof *f->heads);
        f->cap_heads = cap;
    }
    FlagHead *h = &f->heads[f->n_heads++];
    memset(h, 0, sizeof *h);
    h->label = label;
    return h;
}

/* 1/(n+1) by a head of stage A averaging `bos` over every key (the BOS query sees only itself),
 * then a tent per length n in 1..max_len into len_ind[n - 1] (exactly 0 at every other length:
 * its half width is half the smallest gap between the 1/(n+1)). */
static void length_indicators(Flag *f) {
    size_t N = f->m->max_len;
    uint32_t inv = new_dim(f, "err:1/(length+1)", false, 1);
    FlagHead *h = new_head(f, "error flag: 1/(length+1)");
    h->q = fn_dim(f, f->bos, 1);
    h->k = fn_dim(f, f->bos, 1);
    h->v = fn_dim(f, f->bos, 1);
    h->out = inv;
    double w = 0.5 / ((double)N * (double)(N + 1));
    f->len_ind = ARENA_ARRAY(f->a, uint32_t, N);
    Fn x = fn_dim(f, inv, 1);
    for (size_t n = 1; n <= N; n++) {
        char name[48];
        snprintf(name, sizeof name, "err:length:%zu", n);
        f->len_ind[n - 1] = new_dim(f, name, true, 0);
        double c = 1.0 / (double)(n + 1);
        unit(f, STAGE_A, x, 1, -(c - w), f->len_ind[n - 1], 1 / w);
        unit(f, STAGE_A, x, 1, -c, f->len_ind[n - 1], -2 / w);
        unit(f, STAGE_A, x, 1, -(c + w), f->len_ind[n - 1], 1 / w);
    }
}

/* The output's readout and decoding. The tails below and above every member (of the union of
 * the per-length lists) go straight into err; within them |F| <= extent, which bounds the
 * rounding of every ramp that cancels. */
static bool output_checks(Flag *f) {
    const Model *M = f->m;
    if (M->output_kind == MODEL_OUT_CATEGORICAL) {
        onehot_detector(f, M->out_dim, M->out_count, raw_dim(f));
        return true;
    }
    Fn F = readout_fn(f);
    if (M->out_kind_count) onehot_detector(f, M->out_kind_dim, M->out_kind_count, raw_dim(f));
    if (M->out_count == 0) return integer_kinds(f, F); /* unbounded: a float, or the integer nearest a real */
    double m = M->out_margin, first = value_as_double(M->out_values[0]), last = value_as_double(M->out_values[M->out_count - 1]);
    if (!(m > 0)) return refuse(f, "--error-flag: the output %s decodes with margin 0 (no ramp fits)", M->output_name);
    if (!rounding_fits(f, F, m, "decoding margin")) return false;
    double extent = fmax(fabs(first), fabs(last)) + m;
    tail(f, STAGE_A, F, first - m / 2, first - m, 1);
    tail(f, STAGE_A, F, last + m / 2, last + m, 1);
    size_t lengths = M->out_len_count ? M->max_len : 1;
    if (M->out_len_count) length_indicators(f);
    for (size_t n = 1; n <= lengths; n++) {
        size_t count = M->out_count;
        const Value *set = M->out_len_count ? model_output_values(M, n, &count) : M->out_values;
        double *u, *margin = ARENA_ARRAY(f->a, double, count ? count : 1);
        size_t k = distinct_numbers(f, set, count, &u);
        for (size_t i = 0; i < k; i++) margin[i] = m;
        uint32_t *len = M->out_len_count ? &f->len_ind[n - 1] : NULL;
        char where[32] = "";
        if (len) {
            snprintf(where, sizeof where, "@%zu", n);
            char name[48];
            snprintf(name, sizeof name, "err:decode:%zu", n);
            uint32_t fail = new_dim(f, name, true, 0);
            near_none(f, STAGE_A, F, u, margin, k, fail, extent);
            uint32_t and[2] = {fail, *len};
            and_into_err(f, STAGE_B, and, 2);
        } else {
            /* the tails above are this list's own */
            for (size_t i = 0; i + 1 < k; i++)
                bump(f, STAGE_A, F, u[i] + m / 2, u[i] + m, u[i + 1] - m, u[i + 1] - m / 2, raw_dim(f), 1, extent);
        }
        if (M->out_kind_count) kind_mismatch(f, F, set, count, m, len, where, extent);
    }
    return true;
}

/* single_key: var' = x1 - q(x0), q the chords of x^2 between knots a quarter apart on
 * [0, max_len] (0 <= q - x^2 <= 1/64, so var - 1/64 <= var' <= var, and var' is computed within
 * 1/64: rounding_budget), then stage B adds 64 ReLU(var' - 5/64): >= 1 where the runtime fails
 * (var >= 1/8, var' >= 6/64 as computed), 0 where var' <= 5/64, so set on a passing input only
 * for a variance in [1/16, 1/8) (the band). */
static void single_key(Flag *f, const ModelCheck *c) {
    char name[160];
    snprintf(name, sizeof name, "err:variance %s", c->what);
    uint32_t var = new_dim(f, name, true, 0);
    Fn x0 = fn_dim(f, (uint32_t)c->dim, 1), x1 = fn_dim(f, (uint32_t)(c->dim + 1), 1);
    unit(f, STAGE_A, x1, 1, 0, var, 1);
    unit(f, STAGE_A, x1, -1, 0, var, -1);
    double h = 0.25;
    for (size_t j = 0; j <= 4 * f->m->max_len; j++) unit(f, STAGE_A, x0, 1, -h * (double)j, var, j ? -2 * h : -h);
    unit(f, STAGE_B, fn_dim(f, var, 1), 1, -5.0 / 64, f->err, 64);
}

/* one_kind: two heads of stage A, over the non-BOS keys, score each position by the sum S of its
 * block's string entries (numbers: the other entries) and average S over the best-scoring keys:
 * about 1 when some position holds a string, about 0 (the mean of S) when none does. A block
 * that is not one-hot fails another check (docs/model-format.md), so where the checks pass every
 * S is within count t of 0 or 1; stage A's MLP then adds 4 ReLU(E_strings + E_numbers - 3/2)
 * to err: >= 1 where both kinds occur, 0 where one does (count t <= 1/8). */
static void one_kind(Flag *f, const ModelCheck *c) {
    uint32_t e[2];
    for (int want = 1; want >= 0; want--) {
        char name[160];
        snprintf(name, sizeof name, "err:some %s %s", want ? "string" : "number", c->what);
        uint32_t out = new_dim(f, name, false, 0);
        Fn S = fn_block(f, c->dim, c->count, c->is_string, want, 0, 0);
        FlagHead *h = new_head(f, want ? "error flag: some position holds a string" : "error flag: some position holds a number");
        h->q = fn_block(f, f->one, 1, NULL, false, f->bos, -2); /* 1 at non-BOS queries, -1 at BOS */
        double reach = 0; /* |S| at any row: the BOS key scores at least 2 below every other */
        for (size_t t = 0; t < S.n; t++) reach += f->bound[S.dims[t]];
        h->k = fn_block(f, c->dim, c->count, c->is_string, want, f->bos, -(fn_at(S, f->bos_row) + 2 * reach + 2));
        h->v = S;
        h->out = out;
        e[want] = out;
    }
    unit(f, STAGE_A, fn_block(f, e[1], 1, NULL, false, e[0], 1), 1, -1.5, f->err, 4);
}

/* A margin check: per threshold c, |v - c| = ReLU(v - c) + ReLU(c - v) into a scratch dim (one
 * of the two terms is 0, so the sum is exact), then stage B adds ReLU(m + 2 eta - |v - c|) / eta
 * (eta = flag_margin_eta: FLAG_MARGIN_REL m plus how far the flag's v and the runtime's can
 * differ): >= 1 where the runtime fails (|v - c| <= m), 0 beyond m + 2 eta, so set on a passing
 * input only within m + 3 eta of c by the runtime's v (the band). */
static void margin_check(Flag *f, const ModelCheck *c) {
    const ModelMargin *g = &f->m->margins[c->dim];
    Fn F = {g->n_terms, ARENA_ARRAY(f->a, uint32_t, g->n_terms), g->coefs};
    for (size_t t = 0; t < g->n_terms; t++) F.dims[t] = (uint32_t)g->dims[t];
    double eta = flag_margin_eta(g, f->bound);
    for (size_t j = 0; j < g->n_thresholds; j++) {
        char name[200];
        snprintf(name, sizeof name, "err:distance %s:%.17g", c->what, g->thresholds[j]);
        uint32_t dist = new_dim(f, name, false, 0);
        unit(f, STAGE_A, F, 1, -g->thresholds[j], dist, 1);
        unit(f, STAGE_A, F, -1, g->thresholds[j], dist, 1);
        unit(f, STAGE_B, fn_dim(f, dist, 1), -1, g->m + 2 * eta, f->err, 1 / eta);
    }
}

/* The dims a check reads. */
static void check_dims(const Model *M, const ModelCheck *c, size_t *n, const size_t **dims, size_t *lo, size_t *count) {
    if (c->kind == MODEL_CHECK_MARGIN) {
        *n = M->margins[c->dim].n_terms;
        *dims = M->margins[c->dim].dims;
        *count = 0;
    } else {
        *n = 0;
        *lo = c->dim;
        *count = c->count;
    }
}

/* Each check is read after the last layer: refused when a later layer writes its dims again. */
static bool checks_stay_put(Flag *f) {
    const Model *M = f->m;
    size_t *last = ARENA_ARRAY(f->a, size_t, f->D0), none = SIZE_MAX;
    for (size_t d = 0; d < f->D0; d++) last[d] = none;
    for (size_t l = 0; l < M->n_layers; l++) {
        const ModelLayer *L = &M->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const MatrixColumn *cols = matrix_columns(&L->heads[h].wo);
            for (size_t d = 0; cols && d < f->D0; d++)
                if (cols[d].n) last[d] = l;
        }
        const MatrixColumn *cols = matrix_columns(&L->mlp.w2);
        for (size_t d = 0; d < f->D0; d++)
            if ((cols && cols[d].n) || L->mlp.b2[d] != 0) last[d] = l;
    }
    for (size_t i = 0; i < M->n_checks; i++) {
        const ModelCheck *c = &M->checks[i];
        size_t n, lo = 0, count;
        const size_t *dims = NULL;
        check_dims(M, c, &n, &dims, &lo, &count);
        for (size_t t = 0; t < n + count; t++) {
            size_t d = t < n ? dims[t] : lo + (t - n);
            if (last[d] != none && last[d] > c->after_layer) {
                snprintf(f->msg, f->msgsize, "--error-flag: the check on %s after layer %zu reads residual dim %zu (%s), "
                         "which layer %zu writes again", c->what, c->after_layer, d, M->labels[d], last[d]);
                return false;
            }
        }
    }
    return true;
}

/* Blocks the flag reads as one-hot: count t must stay below 1/8 (onehot_detector, one_kind). */
static bool blocks_fit(Flag *f) {
    const Model *M = f->m;
    size_t most = M->output_kind == MODEL_OUT_CATEGORICAL ? M->out_count : M->out_kind_count;
    for (size_t i = 0; i < M->n_checks; i++)
        if (M->checks[i].kind == MODEL_CHECK_ONE_HOT || M->checks[i].kind == MODEL_CHECK_ONE_KIND)
            most = M->checks[i].count > most ? M->checks[i].count : most;
    if ((double)most * MODEL_ONEHOT_TOL <= 0.125) return true;
    snprintf(f->msg, f->msgsize, "--error-flag: a checked block has %zu values (the flag reads blocks of at most %.0f)", most,
             0.125 / MODEL_ONEHOT_TOL);
    return false;
}

/* The rounding of the sums that cancel (stage A into a scratch dim that stage B reads through a
 * dead zone): at most 1/64 per dim wherever it matters, else refused. A unit's output is within
 * (n + 3) u |out_coef| (|scale| extent + |bias|) of exact (u = 2^-53, n its input's terms). */
static bool rounding_budget(Flag *f) {
    double *noise = ARENA_ARRAY(f->a, double, f->D);
    for (size_t h = 0; h < f->n_units[STAGE_A]; h++) {
        const Unit *u = &f->units[STAGE_A][h];
        if (u->out < f->D0 || !f->cancels[u->out - f->D0]) continue;
        double pre = fabs(u->scale) * u->extent + fabs(u->bias);
        noise[u->out] += ((double)u->in.n + 3) * 0x1p-53 * fabs(u->out_coef) * pre;
    }
    for (size_t d = f->D0; d < f->D; d++)
        if (!(noise[d] <= 1.0 / 64)) {
            snprintf(f->msg, f->msgsize, "--error-flag: the rounding of the flag's sum %s could reach %.3g (limit 1/64): "
                     "too many values, or values too large against their margins", f->names[d - f->D0], noise[d]);
            return false;
        }
    return true;
}

/* Every unit and head of the flag, from the model's checks and output. */
static bool plan_flag(Flag *f) {
    const Model *M = f->m;
    if (!checks_stay_put(f) || !blocks_fit(f)) return false;
    f->err = new_dim(f, "err", false, 0);
    f->raw = UINT32_MAX;
    if (!output_checks(f)) return false;
    for (size_t i = 0; i < M->n_checks; i++) {
        const ModelCheck *c = &M->checks[i];
        switch (c->kind) {
        case MODEL_CHECK_ONE_HOT:
            onehot_detector(f, c->dim, c->count, raw_dim(f));
            break;
        case MODEL_CHECK_SINGLE_KEY: single_key(f, c); break;
        case MODEL_CHECK_ONE_KIND: one_kind(f, c); break;
        case MODEL_CHECK_MARGIN: margin_check(f, c); break;
        }
    }
    if (M->numeric_tokens) { /* a real token outside [lo, hi]: tails, exactly 0 inside, straight into err */
        double eta = ERRFLAG_RANGE_RAMP * (1 + M->token_hi - M->token_lo);
        Fn x = fn_dim(f, (uint32_t)M->token_value_dim, 1);
        unit(f, STAGE_A, x, -1, M->token_lo, f->err, 1 / eta);
        unit(f, STAGE_A, x, 1, -M->token_hi, f->err, 1 / eta);
    }
    if (f->raw != UINT32_MAX) unit(f, STAGE_B, fn_dim(f, f->raw, 1), 1, -0.25, f->err, 2);
    size_t most = 0;
    for (int st = 0; st < N_STAGES; st++) most = f->n_units[st] > most ? f->n_units[st] : most;
    if (f->D - f->D0 > ERRFLAG_MAX_DIMS || most > ERRFLAG_MAX_UNITS) {
        snprintf(f->msg, f->msgsize, "--error-flag: the flag would add %zu residual dims and %zu hidden units to one layer "
                 "(limits %zu and %zu): the output or the checks have too many values or thresholds", f->D - f->D0, most,
                 ERRFLAG_MAX_DIMS, ERRFLAG_MAX_UNITS);
        return false;
    }
    return rounding_budget(f);
}

/* ---- writing it into the model ---- */

/* w with `cols` columns (more than it has): a copy in a new store of the model. */
static Matrix widen(Model *m, const Matrix *w, size_t cols) {
    Matrix x = model_matrix(m, w->rows, cols);
    const MatrixColumn *c = matrix_columns(w);
    for (size_t j = 0; c && j < w->cols; j++)
        for (uint32_t e = 0; e < c[j].n; e++) matrix_set(&x, c[j].row[e], j, c[j].val[e]);
    return x;
}

static double *widen_vector(Model *m, const double *v, size_t n, size_t to) {
    double *x = ARENA_ARRAY(&m->arena, double, to);
    if (v) memcpy(x, v, n * sizeof *x);
    return x;
}

/* The residual grows from D0 to D dims (the new ones zero everywhere in the old weights). */
static void widen_model(Flag *f) {
    Model *m = f->m;
    size_t D = f->D, D0 = f->D0;
    char **labels = ARENA_ARRAY(&m->arena, char *, D);
    for (size_t d = 0; d < D; d++) labels[d] = d < D0 ? m->labels[d] : arena_strdup(&m->arena, f->names[d - D0]);
    m->labels = labels;
    m->token_embed = widen(m, &m->token_embed, D);
    m->pos_embed = widen(m, &m->pos_embed, D);
    for (size_t l = 0; l < m->n_layers; l++) {
        ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            ModelHead *H = &L->heads[h];
            H->wq.rows = H->wk.rows = H->wv.rows = D; /* rows are indices only: no entry moves */
            H->wo = widen(m, &H->wo, D);
        }
        L->mlp.w1.rows = D;
        if (L->mlp.gated) L->mlp.w3.rows = D;
        L->mlp.w2 = widen(m, &L->mlp.w2, D);
        L->mlp.b2 = widen_vector(m, L->mlp.b2, D0, D);
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) m->out_readout = widen_vector(m, m->out_readout, D0, D);
    m->d_model = D;
}

static void put_fn(Matrix *w, Fn F, size_t col, double scale) {
    for (size_t t = 0; t < F.n; t++) matrix_add(w, F.dims[t], col, scale * F.coefs[t]);
}

/* One layer of the flag: its heads (stage A has them all) and its units, each unit switched off
 * at the BOS row (known: bos_row, kept up to date) by -(its BOS pre-activation + 1) on the bos
 * dim. */
static void emit_stage(Flag *f, int st, ModelLayer *L, double *bos_row) {
    Model *m = f->m;
    size_t D = f->D;
    L->n_heads = st == STAGE_A ? f->n_heads : 0;
    L->heads = ARENA_ARRAY(&m->arena, ModelHead, L->n_heads ? L->n_heads : 1);
    double *add = calloc(D, sizeof *add);
    if (!add) abort();
    for (size_t i = 0; i < L->n_heads; i++) {
        const FlagHead *fh = &f->heads[i];
        ModelHead *H = &L->heads[i];
        H->wq = model_matrix(m, D, 1);
        H->wk = model_matrix(m, D, 1);
        H->wv = model_matrix(m, D, 1);
        H->wo = model_matrix(m, 1, D);
        put_fn(&H->wq, fh->q, 0, 1);
        put_fn(&H->wk, fh->k, 0, 1);
        put_fn(&H->wv, fh->v, 0, 1);
        matrix_set(&H->wo, 0, fh->out, 1);
        /* the keys it averages score alike up to count t, the others at least 1/2 below */
        H->tie_tol = 0.5;
        H->causal = false;
        H->label = arena_strdup(&m->arena, fh->label);
        add[fh->out] += fn_at(fh->v, bos_row); /* the BOS query sees only the BOS key */
    }
    for (size_t d = 0; d < D; d++) bos_row[d] += add[d];
    free(add);
    size_t H = f->n_units[st];
    ModelMlp *mlp = &L->mlp;
    mlp->w1 = model_matrix(m, D, H);
    mlp->w2 = model_matrix(m, H, D);
    mlp->b1 = ARENA_ARRAY(&m->arena, double, H ? H : 1);
    mlp->b2 = ARENA_ARRAY(&m->arena, double, D);
    for (size_t h = 0; h < H; h++) {
        const Unit *u = &f->units[st][h];
        put_fn(&mlp->w1, u->in, h, u->scale);
        mlp->b1[h] = u->bias;
        double pre = u->scale * fn_at(u->in, bos_row) + u->bias;
        matrix_add(&mlp->w1, f->bos, h, -(fmax(pre, 0) + 1));
        matrix_add(&mlp->w2, h, u->out, u->out_coef);
    }
}

/* The model's BOS row after its own layers (the runtime's, on the empty input), D0 dims. */
static double *bos_row_of(Model *m, char *err, size_t errsize) {
    Workspace ws;
    if (!workspace_init(&ws, m, err, errsize)) return NULL;
    double *X = calloc(m->d_model ? m->d_model : 1, sizeof *X);
    if (!X) abort();
    model_forward(m, NULL, 0, 0, m->n_layers, X, &ws);
    workspace_free(&ws);
    return X;
}

bool errflag_add(Model *m, char *err, size_t errsize) {
    if (m->has_error_flag) {
        snprintf(err, errsize, "--error-flag: the model already has an error flag");
        return false;
    }
    Arena a;
    arena_init(&a);
    Flag f = {.m = m, .a = &a, .D0 = m->d_model, .D = m->d_model, .msg = err, .msgsize = errsize};
    f.bos = f.one = UINT32_MAX;
    for (size_t d = 0; d < m->d_model; d++) {
        if (!strcmp(m->labels[d], "bos")) f.bos = (uint32_t)d;
        if (!strcmp(m->labels[d], "one")) f.one = (uint32_t)d;
    }
    bool ok = f.bos != UINT32_MAX && f.one != UINT32_MAX;
    if (!ok) snprintf(err, errsize, "--error-flag: the model has no 'one' or 'bos' dim");
    double *bos_row = ok ? bos_row_of(m, err, errsize) : NULL;
    ok = ok && bos_row;
    if (ok) {
        f.bound = ARENA_ARRAY(&a, double, f.D0 ? f.D0 : 1);
        model_value_bounds(m, f.bound);
        f.bos_row = bos_row;
        ok = plan_flag(&f);
    }
    if (ok) {
        double *row = calloc(f.D, sizeof *row);
        if (!row) abort();
        memcpy(row, bos_row, f.D0 * sizeof *row);
        widen_model(&f);
        size_t stages = 0;
        bool used[N_STAGES];
        for (int st = 0; st < N_STAGES; st++) {
            used[st] = f.n_units[st] > 0 || (st == STAGE_A && f.n_heads > 0);
            stages += used[st];
        }
        ModelLayer *layers = ARENA_ARRAY(&m->arena, ModelLayer, m->n_layers + stages);
        if (m->n_layers) memcpy(layers, m->layers, m->n_layers * sizeof *layers);
        m->layers = layers;
        for (int st = 0; st < N_STAGES; st++)
            if (used[st]) emit_stage(&f, st, &m->layers[m->n_layers++], row);
        m->has_error_flag = true;
        m->error_flag_dim = f.err;
        free(row);
    }
    free(bos_row);
    arena_free(&a);
    return ok;
}
