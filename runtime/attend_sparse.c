#include "runtime/attend_sparse.h"

#include <math.h>

bool attend_sparse_plan(const KeyEntries *keys, const KeyEntries *queries, size_t rows, const SparseScratch *s) {
    size_t dk = keys->stride;
    for (size_t d = 0; d <= dk; d++) s->start[d] = 0;
    for (size_t j = 0; j < rows; j++) {
        if (keys->count[j] > 1 || queries->count[j] == 0) return false;
        if (keys->count[j]) s->start[keys->dim[j * dk] + 1]++;
    }
    for (size_t d = 0; d < dk; d++) s->start[d + 1] += s->start[d];
    double visits = 0; /* at most: a causal query visits only the keys up to itself */
    for (size_t i = 0; i < rows; i++)
        for (size_t e = 0; e < queries->count[i]; e++) {
            uint32_t d = queries->dim[i * queries->stride + e];
            visits += s->start[d + 1] - s->start[d];
        }
    if (visits * 16 > (double)rows * (double)rows) return false;
    /* the keys by dim, ascending within each: start[d] moves to the end of dim d while filling,
       then back */
    for (size_t j = 0; j < rows; j++)
        if (keys->count[j]) s->keys[s->start[keys->dim[j * dk]]++] = (uint32_t)j;
    for (size_t d = dk; d > 0; d--) s->start[d] = s->start[d - 1];
    s->start[0] = 0;
    return true;
}

/* fma(x, w, +0.0) without a call to the library's fma (no FMA instruction is assumed here): the
 * rounded product x * w is it wherever that is not zero (adding an exact zero to the exact product
 * changes nothing); a zero product may be an exact zero, which the fma turns +0.0, or an underflow
 * it keeps, so only there is the fma called. */
static double product_plus_zero(double x, double w) {
    double p = x * w;
    return p != 0.0 ? p : fma(x, w, 0.0);
}

/* The keys query i visits (those of its dims' keys it sees, ascending) and their scores, into
 * s->visit and s->score; returns how many. */
static size_t visit_keys(const KeyEntries *keys, const KeyEntries *queries, size_t i, size_t last,
                         const SparseScratch *s) {
    size_t n = 0;
    for (size_t e = 0; e < queries->count[i]; e++) {
        uint32_t d = queries->dim[i * queries->stride + e];
        double w = queries->val[i * queries->stride + e];
        for (uint32_t t = s->start[d]; t < s->start[d + 1] && s->keys[t] <= last; t++, n++) {
            /* the key's one entry is in dim d, where the query has w: its chain is one step */
            s->visit[n] = s->keys[t];
            s->score[n] = product_plus_zero(keys->val[(size_t)s->keys[t] * keys->stride], w);
        }
    }
    for (size_t t = 1; t < n && queries->count[i] > 1; t++) /* merge the dims' runs: key order */
        for (size_t u = t; u > 0 && s->visit[u - 1] > s->visit[u]; u--) {
            uint32_t j = s->visit[u];
            double x = s->score[u];
            s->visit[u] = s->visit[u - 1], s->score[u] = s->score[u - 1];
            s->visit[u - 1] = j, s->score[u - 1] = x;
        }
    return n;
}

/* Key j's score in key order: the next visited key's, else +0.0 (*t: the visited keys passed). */
static double score_in_order(const SparseScratch *s, size_t n_visit, size_t *t, size_t j) {
    return *t < n_visit && s->visit[*t] == j ? s->score[(*t)++] : 0.0;
}

/* Query i's means from every key it sees, kernel_attend's definition step by step (the visited
 * keys' scores merged with +0.0 for the others): where +0.0 keys are selected or a score is NaN. */
static void attend_all(size_t i, size_t last, size_t n_visit, double tol, double bos_extra, const double *V, size_t v_ld,
                       size_t dv, double *out, size_t out_ld, const SparseScratch *s) {
    size_t t = 0;
    double bos = score_in_order(s, n_visit, &t, 0), best = bos;
    for (size_t j = 1; j <= last; j++) {
        double x = score_in_order(s, n_visit, &t, j);
        if (x > best) best = x;
    }
    double threshold = best - tol, extra = !(bos < threshold) ? bos_extra : 0.0;
    for (size_t c = 0; c < dv; c++) {
        const double *v = V + c * v_ld;
        double sum = extra * v[0];
        size_t ties = 0;
        t = 0;
        for (size_t j = 0; j <= last; j++)
            if (!(score_in_order(s, n_visit, &t, j) < threshold)) sum += v[j], ties++;
        out[c * out_ld + i] = sum / ((double)ties + extra);
    }
}

void attend_sparse(const KeyEntries *keys, const KeyEntries *queries, size_t rows, bool causal, double tol,
                   double bos_extra, const double *V, size_t v_ld, size_t dv, double *out, size_t out_ld,
                   const SparseScratch *s) {
    for (size_t i = 0; i < rows; i++) {
        size_t last = causal ? i : rows - 1, n_visit = visit_keys(keys, queries, i, last, s);
        size_t zeros = last + 1 - n_visit; /* the keys seen and not visited score +0.0 */
        /* the greatest score (with no NaN, kernel_attend's fold in key order gives it whatever
           the order; only the sign of a zero maximum may differ, which no comparison sees) */
        double best = zeros ? 0.0 : -INFINITY;
        bool nan = false;
        for (size_t t = 0; t < n_visit; t++) {
            nan |= isnan(s->score[t]);
            if (s->score[t] > best) best = s->score[t];
        }
        double threshold = best - tol;
        if (nan || (zeros && !(0.0 < threshold))) { /* a NaN, or the +0.0 keys selected */
            attend_all(i, last, n_visit, tol, bos_extra, V, v_ld, dv, out, out_ld, s);
            continue;
        }
        size_t ties = 0;
        for (size_t t = 0; t < n_visit; t++)
            if (!(s->score[t] < threshold)) s->visit[ties++] = s->visit[t]; /* selected, in key order */
        /* BOS (key 0) comes first where visited; unvisited, it scores +0.0 and is not selected */
        double extra = ties && s->visit[0] == 0 ? bos_extra : 0.0, denominator = (double)ties + extra;
        if (ties == 1) { /* one key (a one-hot match): the same operations without the inner loop */
            size_t j = s->visit[0];
            for (size_t c = 0; c < dv; c++) { /* BOS not selected: x / 1.0 is x, the division can go */
                double sum = extra * V[c * v_ld] + V[c * v_ld + j];
                out[c * out_ld + i] = denominator == 1.0 ? sum : sum / denominator;
            }
            continue;
        }
        for (size_t c = 0; c < dv; c++) {
            const double *v = V + c * v_ld;
            double sum = extra * v[0];
            for (size_t t = 0; t < ties; t++) sum += v[s->visit[t]];
            out[c * out_ld + i] = sum / denominator;
        }
    }
}
