/* Signed ranges of a model's residual over every input (ranges.h): intervals through the
 * embedding, the heads and the MLPs, a group of units sharing one input functional evaluated as
 * one piecewise-linear function. */
#include "runtime/ranges.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/arena.h"

typedef struct Span {
    double lo, hi;
} Span;

/* sum_t scale w_t x[row_t] over a sparse column. */
static Span column_span(MatrixColumn c, const Span *x, double scale) {
    Span s = {0, 0};
    for (uint32_t k = 0; k < c.n; k++) {
        double w = scale * c.val[k], a = w * x[c.row[k]].lo, b = w * x[c.row[k]].hi;
        s.lo += fmin(a, b);
        s.hi += fmax(a, b);
    }
    return s;
}

static void widen_span(Span *s, double mag) {
    double pad = 0x1p-40 * (mag + fabs(s->lo) + fabs(s->hi));
    s->lo -= pad;
    s->hi += pad;
}

/* The entries of a matrix by row: rows[r] lists (column, value) of row r. */
/* A hidden unit's input as s * G: G's column normalised by its first entry (rows ascending). */
typedef struct UnitKey {
    size_t unit;
    uint64_t hash;
    double s;
    MatrixColumn g; /* rows ascending, values divided by s */
} UnitKey;

static int by_hash(const void *a, const void *b) {
    const UnitKey *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash ? 1 : (x->unit > y->unit) - (x->unit < y->unit);
}

static bool same_functional(const UnitKey *a, const UnitKey *b) {
    if (a->g.n != b->g.n) return false;
    for (uint32_t k = 0; k < a->g.n; k++)
        if (a->g.row[k] != b->g.row[k] || a->g.val[k] != b->g.val[k]) return false;
    return true;
}

static UnitKey unit_key(Arena *a, const Matrix *w1, size_t h) {
    MatrixColumn c = matrix_column(w1, h);
    UnitKey u = {h, 1469598103934665603ull, 1, {c.n, c.n, ARENA_ARRAY(a, uint32_t, c.n + 1), ARENA_ARRAY(a, double, c.n + 1)}};
    for (uint32_t k = 0; k < c.n; k++) { /* insertion sort by row: columns are short */
        uint32_t j = k;
        while (j > 0 && u.g.row[j - 1] > c.row[k]) {
            u.g.row[j] = u.g.row[j - 1];
            u.g.val[j] = u.g.val[j - 1];
            j--;
        }
        u.g.row[j] = c.row[k];
        u.g.val[j] = c.val[k];
    }
    if (c.n) u.s = u.g.val[0];
    for (uint32_t k = 0; k < c.n; k++) {
        u.g.val[k] = k ? u.g.val[k] / u.s : 1.0;
        uint64_t bits;
        memcpy(&bits, &u.g.val[k], sizeof bits);
        u.hash = (u.hash ^ u.g.row[k]) * 1099511628211ull;
        u.hash = (u.hash ^ bits) * 1099511628211ull;
    }
    return u;
}

/* One group of units sharing G: the range of each output dim's sum over G's interval, added to
 * nx. Too large to evaluate point by point: false (the caller goes unit by unit). */
static bool group_range(const UnitKey *keys, size_t n, const double *b1, const MatrixRow *out, const Span *x, Span *nx,
                        Arena *a) {
    Span G = column_span(keys[0].g, x, 1);
    size_t dims = 0;
    for (size_t i = 0; i < n; i++) dims += out[keys[i].unit].n;
    if (!isfinite(G.lo) || !isfinite(G.hi) || (double)(n + 2) * (double)n * (double)dims > 4e7) return false;
    double *pts = ARENA_ARRAY(a, double, n + 2);
    size_t np = 0;
    pts[np++] = G.lo;
    pts[np++] = G.hi;
    for (size_t i = 0; i < n; i++) {
        double at = -b1[keys[i].unit] / keys[i].s;
        if (at > G.lo && at < G.hi) pts[np++] = at;
    }
    double gmax = fmax(fabs(G.lo), fabs(G.hi));
    for (size_t i = 0; i < n; i++) {
        const MatrixRow *o = &out[keys[i].unit];
        for (size_t e = 0; e < o->n; e++) {
            uint32_t d = o->dims[e];
            bool seen = false; /* each dim once, at its first unit in the group */
            for (size_t j = 0; j < i && !seen; j++)
                for (size_t f = 0; f < out[keys[j].unit].n && !seen; f++) seen = out[keys[j].unit].dims[f] == d;
            if (seen) continue;
            Span r = {INFINITY, -INFINITY};
            double mag = 0;
            for (size_t p = 0; p < np; p++) {
                double v = 0;
                for (size_t j = 0; j < n; j++) {
                    const MatrixRow *oj = &out[keys[j].unit];
                    for (size_t f = 0; f < oj->n; f++)
                        if (oj->dims[f] == d) {
                            double pre = keys[j].s * pts[p] + b1[keys[j].unit];
                            v += oj->vals[f] * fmax(pre, 0);
                            if (p == 0) mag += fabs(oj->vals[f]) * (fabs(keys[j].s) * gmax + fabs(b1[keys[j].unit]));
                        }
                }
                r.lo = fmin(r.lo, v);
                r.hi = fmax(r.hi, v);
            }
            widen_span(&r, mag);
            nx[d].lo += r.lo;
            nx[d].hi += r.hi;
        }
    }
    return true;
}

/* Unit h alone into nx: ReLU(pre) (times the gate's span in a gated layer) through W2. */
static void unit_range(const ModelMlp *mlp, size_t h, const MatrixRow *out, const Span *x, Span *nx) {
    Span pre = column_span(matrix_column(&mlp->w1, h), x, 1);
    Span r = {fmax(pre.lo + mlp->b1[h], 0), fmax(pre.hi + mlp->b1[h], 0)};
    if (mlp->gated) {
        Span g = column_span(matrix_column(&mlp->w3, h), x, 1);
        g.lo += mlp->b3[h], g.hi += mlp->b3[h];
        double c[4] = {r.lo * g.lo, r.lo * g.hi, r.hi * g.lo, r.hi * g.hi};
        r.lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3]));
        r.hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
    }
    widen_span(&r, 0);
    for (size_t e = 0; e < out[h].n; e++) {
        double w = out[h].vals[e], a = w * r.lo, b = w * r.hi;
        nx[out[h].dims[e]].lo += fmin(a, b);
        nx[out[h].dims[e]].hi += fmax(a, b);
    }
}

void model_tighten_bounds(const Model *M, double *bound) {
    Arena a;
    arena_init(&a);
    size_t D = M->d_model;
    Span *x = ARENA_ARRAY(&a, Span, D ? D : 1), *nx = ARENA_ARRAY(&a, Span, D ? D : 1);
    for (size_t d = 0; d < D; d++) {
        MatrixColumn t = matrix_column(&M->token_embed, d), p = matrix_column(&M->pos_embed, d);
        double tlo = t.n < M->token_embed.rows ? 0 : INFINITY, thi = -tlo, plo = p.n < M->pos_embed.rows ? 0 : INFINITY,
               phi = -plo;
        for (uint32_t k = 0; k < t.n; k++) tlo = fmin(tlo, t.val[k]), thi = fmax(thi, t.val[k]);
        for (uint32_t k = 0; k < p.n; k++) plo = fmin(plo, p.val[k]), phi = fmax(phi, p.val[k]);
        x[d] = (Span){tlo + plo, thi + phi};
    }
    if (M->numeric_tokens && M->token_value_dim < D) {
        x[M->token_value_dim].lo += fmin(M->token_lo, 0);
        x[M->token_value_dim].hi += fmax(M->token_hi, 0);
    }
    for (size_t l = 0; l < M->n_layers; l++) {
        const ModelLayer *L = &M->layers[l];
        memcpy(nx, x, D * sizeof *nx);
        for (size_t h = 0; h < L->n_heads; h++) { /* a mean of selected values: within their span */
            const ModelHead *H = &L->heads[h];
            Span *v = ARENA_ARRAY(&a, Span, H->wv.cols ? H->wv.cols : 1);
            for (size_t c = 0; c < H->wv.cols; c++) v[c] = column_span(matrix_column(&H->wv, c), x, 1);
            for (size_t d = 0; d < D; d++) {
                Span s = column_span(matrix_column(&H->wo, d), v, 1);
                nx[d].lo += s.lo;
                nx[d].hi += s.hi;
            }
        }
        memcpy(x, nx, D * sizeof *x);
        const ModelMlp *mlp = &L->mlp;
        for (size_t d = 0; d < D; d++) nx[d].lo += mlp->b2[d], nx[d].hi += mlp->b2[d];
        size_t H = mlp->w1.cols;
        MatrixRow *out = matrix_rows(&a, &mlp->w2);
        UnitKey *keys = ARENA_ARRAY(&a, UnitKey, H ? H : 1);
        for (size_t h = 0; h < H; h++) keys[h] = unit_key(&a, &mlp->w1, h);
        qsort(keys, H, sizeof *keys, by_hash);
        for (size_t i = 0; i < H;) {
            size_t j = i + 1;
            while (j < H && keys[j].hash == keys[i].hash && same_functional(&keys[i], &keys[j])) j++;
            if (mlp->gated || keys[i].g.n == 0 || !group_range(keys + i, j - i, mlp->b1, out, x, nx, &a))
                for (size_t k = i; k < j; k++) unit_range(mlp, keys[k].unit, out, x, nx);
            i = j;
        }
        memcpy(x, nx, D * sizeof *x);
    }
    for (size_t d = 0; d < D; d++) {
        double b = fmax(fabs(x[d].lo), fabs(x[d].hi));
        if (b < bound[d]) bound[d] = b;
    }
    arena_free(&a);
}

