/* Which residual dims each writer of a model writes (a head's Wo, an MLP's W2), and which of those
 * writes are a dim's first: where a batch need not zero the dim at all.
 *
 * The forward pass keeps the residual of a batch feature-major (runtime/forward.h), one line per
 * dim, and every writer adds to its lines (X += a product), so a batch has zeroed every line
 * before the embedding writes. A dim is *fresh* when the embedding does not write it, its first
 * writer stores the whole line (a head's Wo or an MLP's W2 column with entries, not an MLP bias
 * alone), and nothing reads it before: not the heads of that writer's layer or an earlier one (Wq,
 * Wk, Wv), not the MLPs before the writer (W1, W3; an MLP reads the residual before its W2 writes
 * it), not the checks after earlier layers. A batch that starts from the embedding and runs every
 * layer in order leaves fresh lines as they were, and their first writer stores chain + 0.0
 * (KERNEL_FRESH: what X += chain gives on X = +0.0) instead of adding: the same bits, without the
 * zeroing and without reading the line.
 *
 * A dim no layer writes (not the real-valued tokens' dim) holds nothing but the entries the
 * embedding wrote, in the rows it wrote them: a batch that clears those entries when it ends
 * leaves the line zero for the next one, which need not zero it either (runtime/forward.c). */
#ifndef RASPCC_RUNTIME_WRITE_PLAN_H
#define RASPCC_RUNTIME_WRITE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/model.h"
#include "support/arena.h"

/* The residual dims a writing matrix (Wo, W2: rows x D) has entries in: dims[0 .. n_fresh) are
 * the fresh dims it writes first, then the others; each part ascending. */
typedef struct WritePlan {
    size_t n, n_fresh;
    uint32_t *dims;
} WritePlan;

typedef struct WritePlans {
    WritePlan **heads; /* heads[l][h]: the dims head h of layer l writes */
    WritePlan *mlps;   /* mlps[l]: the dims layer l's W2 writes */
    uint32_t *zeroed;  /* the dims neither fresh nor the embedding's alone, ascending: the lines a
                          batch zeroes */
    size_t n_zeroed;
    uint32_t *embedding_only; /* the dims no layer writes (the embedding or nothing does), but the
                                 real-valued tokens' dim, ascending */
    size_t n_embedding_only;
    bool *is_embedding_only;  /* per dim */
} WritePlans;

/* The plans of every writer of m, allocated in a. */
void write_plans(Arena *a, const Model *m, WritePlans *p);

#endif
