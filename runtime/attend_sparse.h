/* Hard attention of one sequence found through an index of its keys, for heads that match one-hot
 * codes (select(target, indices, ==) and the like): when every key has at most one non-zero entry,
 * query i can only score non-zero against the keys whose entry is in one of its own non-zero dims,
 * so it visits those few keys instead of all of them.
 *
 * The outputs are those of kernel_scores + kernel_attend bit for bit (kernels.h): a visited key's
 * score is the chain fma(key value, query value, +0.0); every other key the query sees scores +0.0
 * exactly (its one product has a zero factor and is skipped); the maximum, threshold, selection
 * and mean follow kernel_attend's definition, the selected keys summed in ascending order. A query
 * whose answer needs more than its visited keys (keys scoring +0.0 are selected, or a NaN score)
 * goes through every key it sees. */
#ifndef RASPCC_RUNTIME_ATTEND_SPARSE_H
#define RASPCC_RUNTIME_ATTEND_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"

/* Scratch of attend_sparse for sequences up to `rows` keys and `dk` dims. */
typedef struct SparseScratch {
    uint32_t *start; /* dk + 1: where each dim's keys start in `keys` */
    uint32_t *keys;  /* rows: the keys with one entry, by dim, ascending within a dim */
    uint32_t *visit; /* rows: the keys one query visits (then selects), ascending ... */
    double *score;   /* rows: ... and their scores */
} SparseScratch;

/* Whether the index pays for these entries: every key at most one entry, every query at least one
 * (a query with none selects every key), and the keys the queries visit (their dims' keys) at most
 * rows^2 / 16 in all, a fraction of the rows^2 pairs the dense path scores. Builds the index in s. */
bool attend_sparse_plan(const KeyEntries *keys, const KeyEntries *queries, size_t rows, const SparseScratch *s);

/* Attention of queries [0, rows) over keys [0, rows) (query i sees keys <= i when causal; key 0
 * is BOS, weighing 1 + bos_extra when selected) with tie tolerance tol, from the index that
 * attend_sparse_plan built: out[c * out_ld + i] for c < dv, V[c * v_ld + j] key j's value c. A
 * query whose keys scoring +0.0 are selected (or with a NaN score) takes them all, one by one. */
void attend_sparse(const KeyEntries *keys, const KeyEntries *queries, size_t rows, bool causal, double tol,
                   double bos_extra, const double *V, size_t v_ld, size_t dv, double *out, size_t out_ld,
                   const SparseScratch *s);

#endif
