/* The error flag: layers that compute the runtime's checks into a residual dim (errflag.h).
 *
 * Every failure region of a check becomes a few ReLU units over a linear functional F of the
 * residual: a ramp clamp((F - a) / eta, 0, 1) is two units, a bump that is positive exactly on
 * (lo, hi) and 1 on [lo + eta, hi - eta] four. Such sums cancel only up to rounding where the
 * checks pass, so stage A sums them into the scratch dim `err:raw` and stage B thresholds it,
 * err = 2 ReLU(raw - 1/4): exactly 0 where the checks pass, >= 1 where raw >= 1. A unit of
 * stage B that ANDs indicators (each about 0 or 1) is ReLU(sum - (k - 1/2)) for k of them, also
 * exactly 0 unless all are near 1. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/errflag.h"
#include "runtime/forward.h"
#include "runtime/precision.h"

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
} Unit;

/* A head of the flag: query, key (one score column), up to two value columns into out. */
typedef struct FlagHead {
    int stage;
    Fn q, k, v[2];
    size_t dv;
    uint32_t out[2];
} FlagHead;

typedef struct Flag {
    Model *m;
    Arena *a;           /* scratch: everything here but what goes into the model */
    size_t D0, D;       /* the residual's width before and after */
    const char **names; /* labels of the new dims D0.. */
    size_t names_cap;
    uint32_t bos, one, err;
    uint32_t raw; /* UINT32_MAX until a check sums into it (raw_dim) */
    Unit *units[N_STAGES];
    size_t n_units[N_STAGES], cap_units[N_STAGES];
    FlagHead heads[2]; /* the length head, and the head of the one one_kind check plan_flag accepts */
    size_t n_heads;
    uint32_t *len_ind; /* per-length value sets: len_ind[n - 1] is 1 at inputs of length n */
    char *msg;
    size_t msgsize;
} Flag;

static bool refuse(Flag *f, const char *fmt, const char *what) {
    snprintf(f->msg, f->msgsize, fmt, what);
    return false;
}

static uint32_t new_dim(Flag *f, const char *name) {
    size_t i = f->D - f->D0;
    if (i == f->names_cap) {
        size_t cap = f->names_cap ? 2 * f->names_cap : 16;
        f->names = arena_grow(f->a, f->names, f->names_cap, cap, sizeof *f->names);
        f->names_cap = cap;
    }
    f->names[i] = arena_strdup(f->a, name);
    return (uint32_t)f->D++;
}

/* The scratch dim the bumps of stage A sum into, made at its first use. */
static uint32_t raw_dim(Flag *f) {
    if (f->raw == UINT32_MAX) f->raw = new_dim(f, "err:raw");
    return f->raw;
}

static Fn fn_dim(Flag *f, uint32_t d, double coef) {
    Fn F = {1, ARENA_NEW(f->a, uint32_t), ARENA_NEW(f->a, double)};
    F.dims[0] = d;
    F.coefs[0] = coef;
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

static void unit(Flag *f, int stage, Fn in, double scale, double bias, uint32_t out, double coef) {
    if (f->n_units[stage] == f->cap_units[stage]) {
        size_t cap = f->cap_units[stage] ? 2 * f->cap_units[stage] : 64;
        f->units[stage] = arena_grow(f->a, f->units[stage], f->cap_units[stage], cap, sizeof(Unit));
        f->cap_units[stage] = cap;
    }
    f->units[stage][f->n_units[stage]++] = (Unit){in, scale, bias, out, coef};
}

/* coef * clamp((F - at) / eta, 0, 1) */
static void ramp_up(Flag *f, int st, Fn F, double at, double eta, uint32_t out, double coef) {
    unit(f, st, F, 1, -at, out, coef / eta);
    unit(f, st, F, 1, -(at + eta), out, -coef / eta);
}

/* coef * clamp((at - F) / eta, 0, 1) */
static void ramp_down(Flag *f, int st, Fn F, double at, double eta, uint32_t out, double coef) {
    unit(f, st, F, -1, at, out, coef / eta);
    unit(f, st, F, -1, at - eta, out, -coef / eta);
}

/* coef times a bump positive exactly on (lo, hi), 1 on [lo + eta, hi - eta] (eta shrinks to half
 * the interval when it is narrower). */
static void bump(Flag *f, int st, Fn F, double lo, double hi, double eta, uint32_t out, double coef) {
    if (hi - lo < 2 * eta) eta = (hi - lo) / 2;
    ramp_up(f, st, F, lo, eta, out, coef);
    ramp_up(f, st, F, hi - eta, eta, out, -coef);
}

/* coef on [a, b], 0 outside (a - eta, b + eta). */
static void plateau(Flag *f, int st, Fn F, double a, double b, double eta, uint32_t out, double coef) {
    ramp_up(f, st, F, a - eta, eta, out, coef);
    ramp_up(f, st, F, b, eta, out, -coef);
}

/* Into `out` (stage A): about 0 when the block [dim, dim + count) is one-hot within
 * MODEL_ONEHOT_TOL as model_block_one_hot tests it, > 0 when not, >= 1 beyond the ramp: per entry
 * b, below -t, a bump on (t, 1 - t), above 1 + t; then, the entries being near 0 or 1, a sum
 * below 1/2 (no 1) or above 3/2 (several). */
static void onehot_detector(Flag *f, size_t dim, size_t count, uint32_t out) {
    double t = MODEL_ONEHOT_TOL, eta = t * ERRFLAG_ONEHOT_RAMP;
    for (size_t d = 0; d < count; d++) {
        Fn b = fn_dim(f, (uint32_t)(dim + d), 1);
        unit(f, STAGE_A, b, -1, -t, out, 1 / eta);
        bump(f, STAGE_A, b, t, 1 - t, eta, out, 1);
        unit(f, STAGE_A, b, 1, -(1 + t), out, 1 / eta);
    }
    Fn sum = fn_block(f, dim, count, NULL, false, 0, 0);
    unit(f, STAGE_A, sum, -1, 0.5, out, 2);
    unit(f, STAGE_A, sum, 1, -1.5, out, 2);
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

/* Into `out`: clamp-to-[0, 1] of "F is not within margin[i] of any u[i] of u[0..k)": ramps of
 * width eta into the two tails, bumps on the gaps between members (each ramp at most half its
 * gap). */
static void near_none(Flag *f, int st, Fn F, const double *u, const double *margin, size_t k, double eta, uint32_t out) {
    if (k == 0) { /* no value at all: always fails */
        unit(f, st, fn_dim(f, f->one, 1), 1, 0, out, 1);
        return;
    }
    ramp_down(f, st, F, u[0] - margin[0], eta, out, 1);
    for (size_t i = 0; i + 1 < k; i++) bump(f, st, F, u[i] + margin[i], u[i + 1] - margin[i + 1], eta, out, 1);
    ramp_up(f, st, F, u[k - 1] + margin[k - 1], eta, out, 1);
}

/* near_none for the output's decoding: margin m at every member, ramps m wide. */
static void decode_failure(Flag *f, int st, Fn F, const double *u, size_t k, double m, uint32_t out) {
    double *margin = ARENA_ARRAY(f->a, double, k ? k : 1);
    for (size_t i = 0; i < k; i++) margin[i] = m;
    near_none(f, st, F, u, margin, k, m * ERRFLAG_DECODE_RAMP, out);
}

/* A real-valued output whose kind block names int or bool: where the block says that kind, v
 * must lie within error_bound + error_rel |r| of an integer r (0 or 1 for bool). |v| is bounded
 * over every input (runtime/precision.h), so the integers are finitely many: a scratch dim per
 * kind holds near_none over them, and stage B ANDs it with the kind's dim. */
static bool integer_kinds(Flag *f, Fn F) {
    const Model *M = f->m;
    double *bound = ARENA_ARRAY(f->a, double, f->D0), V = 0;
    model_value_bounds(M, bound);
    for (size_t t = 0; t < F.n; t++) V += fabs(F.coefs[t]) * bound[F.dims[t]];
    for (size_t kk = 0; kk < M->out_kind_count; kk++) {
        ValueKind kind = M->out_kinds[kk];
        if (kind == VAL_FLOAT) continue;
        if (!(V <= ERRFLAG_MAX_INTEGERS))
            return refuse(f, "--error-flag: the output %s is real-valued, may be read as an int, and its values are not "
                          "bounded by a few thousand (the flag checks the integers one by one)", M->output_name);
        long J = kind == VAL_BOOL ? 1 : (long)ceil(V) + 1, lo = kind == VAL_BOOL ? 0 : -J;
        size_t k = (size_t)(J - lo + 1);
        double *u = ARENA_ARRAY(f->a, double, k), *margin = ARENA_ARRAY(f->a, double, k);
        for (size_t i = 0; i < k; i++) {
            u[i] = (double)(lo + (long)i);
            margin[i] = M->out_error_bound + M->out_error_rel * fabs(u[i]);
            if (!(2 * margin[i] < 0.5))
                return refuse(f, "--error-flag: the output %s is read as an integer within an error bound of a quarter "
                              "or more", M->output_name);
        }
        char name[64];
        snprintf(name, sizeof name, "err:not an integer:%s", kind == VAL_BOOL ? "bool" : "int");
        uint32_t fail = new_dim(f, name);
        near_none(f, STAGE_A, F, u, margin, k, ERRFLAG_INTEGER_RAMP, fail);
        Fn and = fn_block(f, fail, 1, NULL, false, (uint32_t)(M->out_kind_dim + kk), 1);
        unit(f, STAGE_B, and, 1, -1.5, f->err, 2);
    }
    return true;
}

/* The kinds the members with number x have. */
static bool has_kind(const Value *vals, size_t n, double x, ValueKind k) {
    for (size_t i = 0; i < n; i++)
        if (value_as_double(vals[i]) == x && vals[i].kind == k) return true;
    return false;
}

/* A numerical output's kind of value: where F decodes to u (a plateau on [u - m, u + m] into a
 * scratch dim) and the kind block says a kind no member with number u has, stage B fires (with
 * the length indicator `len` when len_dim is set). */
static void kind_mismatch(Flag *f, Fn F, const Value *vals, size_t n, double m, const uint32_t *len_dim,
                          const char *where) {
    const Model *M = f->m;
    double *u;
    size_t k = distinct_numbers(f, vals, n, &u);
    for (size_t i = 0; i < k; i++) {
        double left = i ? u[i] - u[i - 1] - 2 * m : INFINITY, right = i + 1 < k ? u[i + 1] - u[i] - 2 * m : INFINITY;
        double eta = fmin(m * ERRFLAG_DECODE_RAMP, fmin(left, right) / 2);
        uint32_t near = UINT32_MAX;
        for (size_t kk = 0; kk < M->out_kind_count; kk++) {
            if (has_kind(vals, n, u[i], M->out_kinds[kk])) continue;
            if (near == UINT32_MAX) {
                char name[96];
                snprintf(name, sizeof name, "err:near%s:%.17g", where, u[i]);
                near = new_dim(f, name);
                plateau(f, STAGE_A, F, u[i] - m, u[i] + m, eta, near, 1);
            }
            Fn and = {0, ARENA_ARRAY(f->a, uint32_t, 3), ARENA_ARRAY(f->a, double, 3)};
            and.dims[and.n] = near, and.coefs[and.n++] = 1;
            and.dims[and.n] = (uint32_t)(M->out_kind_dim + kk), and.coefs[and.n++] = 1;
            if (len_dim) and.dims[and.n] = *len_dim, and.coefs[and.n++] = 1;
            unit(f, STAGE_B, and, 1, -((double)and.n - 0.5), f->err, 2);
        }
    }
}

/* 1/(n+1) by a head of stage A averaging `bos` over every key (the BOS query sees only itself),
 * then a tent per length n in 1..max_len into len_ind[n - 1]. */
static void length_indicators(Flag *f) {
    size_t N = f->m->max_len;
    uint32_t inv = new_dim(f, "err:1/(length+1)");
    FlagHead *h = &f->heads[f->n_heads++];
    h->stage = STAGE_A;
    h->q = fn_dim(f, f->bos, 1);
    h->k = fn_dim(f, f->bos, 1);
    h->v[0] = fn_dim(f, f->bos, 1);
    h->dv = 1;
    h->out[0] = inv;
    double w = 0.5 / ((double)N * (double)(N + 1)); /* half the smallest gap between 1/(n+1) */
    f->len_ind = ARENA_ARRAY(f->a, uint32_t, N);
    Fn x = fn_dim(f, inv, 1);
    for (size_t n = 1; n <= N; n++) {
        char name[48];
        snprintf(name, sizeof name, "err:length:%zu", n);
        f->len_ind[n - 1] = new_dim(f, name);
        double c = 1.0 / (double)(n + 1);
        unit(f, STAGE_A, x, 1, -(c - w), f->len_ind[n - 1], 1 / w);
        unit(f, STAGE_A, x, 1, -c, f->len_ind[n - 1], -2 / w);
        unit(f, STAGE_A, x, 1, -(c + w), f->len_ind[n - 1], 1 / w);
    }
}

/* The output's readout and decoding. */
static bool output_checks(Flag *f) {
    const Model *M = f->m;
    if (M->output_kind == MODEL_OUT_CATEGORICAL) {
        onehot_detector(f, M->out_dim, M->out_count, raw_dim(f));
        return true;
    }
    Fn F = {0, ARENA_ARRAY(f->a, uint32_t, f->D0), ARENA_ARRAY(f->a, double, f->D0)};
    for (size_t d = 0; d < f->D0; d++)
        if (M->out_readout[d] != 0) F.dims[F.n] = (uint32_t)d, F.coefs[F.n++] = M->out_readout[d];
    if (M->out_kind_count) {
        onehot_detector(f, M->out_kind_dim, M->out_kind_count, raw_dim(f));
    }
    if (M->out_count == 0) return integer_kinds(f, F); /* unbounded: a float, or the integer nearest a real */
    if (!(M->out_margin > 0))
        return refuse(f, "--error-flag: the output %s decodes with margin 0 (no ramp fits)", M->output_name);
    if (!M->out_len_count) {
        double *u;
        size_t k = distinct_numbers(f, M->out_values, M->out_count, &u);
        decode_failure(f, STAGE_A, F, u, k, M->out_margin, raw_dim(f));
        if (M->out_kind_count) kind_mismatch(f, F, M->out_values, M->out_count, M->out_margin, NULL, "");
        return true;
    }
    length_indicators(f);
    for (size_t n = 1; n <= M->max_len; n++) {
        size_t count;
        const Value *set = model_output_values(M, n, &count);
        double *u;
        size_t k = distinct_numbers(f, set, count, &u);
        char name[48];
        snprintf(name, sizeof name, "err:decode:%zu", n);
        uint32_t fail = new_dim(f, name);
        decode_failure(f, STAGE_A, F, u, k, M->out_margin, fail);
        Fn and = fn_block(f, fail, 1, NULL, false, f->len_ind[n - 1], 1);
        unit(f, STAGE_B, and, 1, -1.5, f->err, 2);
        if (M->out_kind_count) {
            char where[32];
            snprintf(where, sizeof where, "@%zu", n);
            kind_mismatch(f, F, set, count, M->out_margin, &f->len_ind[n - 1], where);
        }
    }
    return true;
}

/* single_key: var = x1 - q(x0), q the chords of x^2 between knots a quarter apart on
 * [0, max_len] (q - x^2 <= 1/64, q = x^2 at the integer means a single key gives), then
 * stage B fires where 8 var - 1 > 0 (the runtime's test: var >= 1/8; two or more keys give
 * var >= 1/4). */
static void single_key(Flag *f, const ModelCheck *c) {
    char name[160];
    snprintf(name, sizeof name, "err:variance %s", c->what);
    uint32_t var = new_dim(f, name);
    Fn x0 = fn_dim(f, (uint32_t)c->dim, 1), x1 = fn_dim(f, (uint32_t)(c->dim + 1), 1);
    unit(f, STAGE_A, x1, 1, 0, var, 1);
    unit(f, STAGE_A, x1, -1, 0, var, -1);
    double h = 0.25;
    for (size_t j = 0; j <= 4 * f->m->max_len; j++) unit(f, STAGE_A, x0, 1, -h * (double)j, var, j ? -2 * h : -h);
    unit(f, STAGE_B, fn_dim(f, var, 1), 8, -1, f->err, 2);
}

/* one_kind: per position, whether its block is one-hot (w, stage A) and then holds a string or a
 * number (s, n: stage B, 0 where w says not one-hot); stage C averages s and n over the non-BOS
 * positions and fires where both means are positive: 2 max_len min(a, b) >= 2 then. */
static void one_kind(Flag *f, const ModelCheck *c) {
    char name[160];
    snprintf(name, sizeof name, "err:not one-hot %s", c->what);
    uint32_t w = new_dim(f, name);
    onehot_detector(f, c->dim, c->count, w);
    snprintf(name, sizeof name, "err:string %s", c->what);
    uint32_t s = new_dim(f, name);
    snprintf(name, sizeof name, "err:number %s", c->what);
    uint32_t n = new_dim(f, name);
    unit(f, STAGE_B, fn_block(f, c->dim, c->count, c->is_string, true, w, -2), 1, -0.5, s, 2);
    unit(f, STAGE_B, fn_block(f, c->dim, c->count, c->is_string, false, w, -2), 1, -0.5, n, 2);
    snprintf(name, sizeof name, "err:strings %s", c->what);
    uint32_t a = new_dim(f, name);
    snprintf(name, sizeof name, "err:numbers %s", c->what);
    uint32_t b = new_dim(f, name);
    FlagHead *hd = &f->heads[f->n_heads++];
    hd->stage = STAGE_C;
    hd->q = fn_block(f, f->one, 1, NULL, false, f->bos, -2); /* 1 at non-BOS queries, -1 at BOS */
    hd->k = fn_dim(f, f->bos, -1);                            /* the BOS key scores below the others */
    hd->v[0] = fn_dim(f, s, 1);
    hd->v[1] = fn_dim(f, n, 1);
    hd->dv = 2;
    hd->out[0] = a;
    hd->out[1] = b;
    double big = 2.0 * (double)f->m->max_len;
    unit(f, STAGE_C, fn_dim(f, a, 1), 1, 0, f->err, big);
    unit(f, STAGE_C, fn_block(f, a, 1, NULL, false, b, -1), 1, 0, f->err, -big);
}

/* A margin check: per threshold c, |v - c| = ReLU(v - c) + ReLU(c - v) into a scratch dim (one
 * of the two terms is 0, so the sum is exact), then stage B fires by ReLU(m' - |v - c|) / eta
 * with m' = m (1 + 2^-40): err > 0 exactly where |v - c| <= m (up to the rounding of v, which
 * the runtime sums in its own order), >= 1 where |v - c| <= m' - eta. Values compared with
 * thresholds are real numbers that land anywhere, so this boundary is exact, not a ramp. */
static void margin_check(Flag *f, const ModelCheck *c) {
    const ModelMargin *g = &f->m->margins[c->dim];
    Fn F = {g->n_terms, ARENA_ARRAY(f->a, uint32_t, g->n_terms), g->coefs};
    for (size_t t = 0; t < g->n_terms; t++) F.dims[t] = (uint32_t)g->dims[t];
    double m = g->m * (1 + 0x1p-40), eta = g->m * ERRFLAG_MARGIN_RAMP;
    for (size_t j = 0; j < g->n_thresholds; j++) {
        char name[200];
        snprintf(name, sizeof name, "err:distance %s:%.17g", c->what, g->thresholds[j]);
        uint32_t dist = new_dim(f, name);
        unit(f, STAGE_A, F, 1, -g->thresholds[j], dist, 1);
        unit(f, STAGE_A, F, -1, g->thresholds[j], dist, 1);
        unit(f, STAGE_B, fn_dim(f, dist, 1), -1, m, f->err, 1 / eta);
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

/* Every unit and head of the flag, from the model's checks and output. */
static bool plan_flag(Flag *f) {
    const Model *M = f->m;
    size_t kinds = 0;
    for (size_t i = 0; i < M->n_checks; i++) kinds += M->checks[i].kind == MODEL_CHECK_ONE_KIND;
    if (kinds > 1) return refuse(f, "--error-flag: %s", "the model has more than one one_kind check (one head each is not built yet)");
    if (!checks_stay_put(f)) return false;
    f->err = new_dim(f, "err");
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
    return true;
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

static double fn_at(Fn F, const double *x) {
    double s = 0;
    for (size_t t = 0; t < F.n; t++) s += F.coefs[t] * x[F.dims[t]];
    return s;
}

/* One layer of the flag: its heads and its units, each unit switched off at the BOS row (known:
 * bos_row, kept up to date) by -(its BOS pre-activation + 1) on the bos dim. */
static void emit_stage(Flag *f, int st, ModelLayer *L, double *bos_row) {
    Model *m = f->m;
    size_t D = f->D;
    for (size_t i = 0; i < f->n_heads; i++) L->n_heads += f->heads[i].stage == st;
    L->heads = ARENA_ARRAY(&m->arena, ModelHead, L->n_heads ? L->n_heads : 1);
    size_t k = 0;
    double *add = calloc(D, sizeof *add);
    for (size_t i = 0; i < f->n_heads; i++) {
        const FlagHead *fh = &f->heads[i];
        if (fh->stage != st) continue;
        ModelHead *H = &L->heads[k++];
        H->wq = model_matrix(m, D, 1);
        H->wk = model_matrix(m, D, 1);
        H->wv = model_matrix(m, D, fh->dv);
        H->wo = model_matrix(m, fh->dv, D);
        put_fn(&H->wq, fh->q, 0, 1);
        put_fn(&H->wk, fh->k, 0, 1);
        /* scores take two values, 1 apart, and the keys averaged tie exactly */
        H->tie_tol = 0.5;
        H->causal = false;
        H->label = arena_strdup(&m->arena, st == STAGE_A ? "error flag: 1/(length+1)" : "error flag: kinds over positions");
        for (size_t j = 0; j < fh->dv; j++) {
            put_fn(&H->wv, fh->v[j], j, 1);
            matrix_set(&H->wo, j, fh->out[j], 1);
            add[fh->out[j]] += fn_at(fh->v[j], bos_row); /* the BOS query sees only the BOS key */
        }
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
    ok = ok && plan_flag(&f);
    /* the BOS row after the model's own layers: the runtime's, on the empty input */
    double *bos_row = NULL;
    if (ok) {
        Workspace ws;
        ok = workspace_init(&ws, m, err, errsize);
        if (ok) {
            double *X = calloc(m->d_model, sizeof *X);
            model_forward(m, NULL, 0, 0, m->n_layers, X, &ws);
            workspace_free(&ws);
            bos_row = calloc(f.D, sizeof *bos_row);
            memcpy(bos_row, X, m->d_model * sizeof *X);
            free(X);
        }
    }
    if (ok) {
        widen_model(&f);
        size_t stages = 0;
        bool used[N_STAGES];
        for (int st = 0; st < N_STAGES; st++) {
            used[st] = f.n_units[st] > 0;
            for (size_t i = 0; i < f.n_heads; i++) used[st] = used[st] || f.heads[i].stage == st;
            stages += used[st];
        }
        ModelLayer *layers = ARENA_ARRAY(&m->arena, ModelLayer, m->n_layers + stages);
        if (m->n_layers) memcpy(layers, m->layers, m->n_layers * sizeof *layers);
        m->layers = layers;
        for (int st = 0; st < N_STAGES; st++)
            if (used[st]) emit_stage(&f, st, &m->layers[m->n_layers++], bos_row);
        m->has_error_flag = true;
        m->error_flag_dim = f.err;
    }
    free(bos_row);
    arena_free(&a);
    return ok;
}
