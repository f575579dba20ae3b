/* Programmed embeddings (no gradient): a hand-built softmax target for each task, whose
 * readout is linear, programmed into a backbone with fut_embed (docs/train.md derives both).
 *
 * The target's input is a fixed linear image of the engine's one-hot input (token, BOS,
 * position), so the programmed model is an (E, U) pair of the very engine that trains them:
 *   E = T0 E_fut   (T0: one-hot row -> the target's input features; E_fut from fut_embed)
 *   U = U_fut R     (U_fut: the backbone's unembedding; R: the target's linear readout, d x classes)
 * and the engine's forward pass computes the target's logits X_L R, to rounding. */
#ifndef RASPCC_TRAIN_PROGRAMMED_H
#define RASPCC_TRAIN_PROGRAMMED_H

#include "fut/fut.h"
#include "train/model.h"
#include "train/task.h"

typedef struct TrProgrammed {
    FutTarget target; /* residual, causal, L layers of H heads, width d */
    FutMat input;     /* T0: (vocab + 1 + max_len + 1) x d, rows token ids, BOS, positions 0..max_len */
    FutMat readout;   /* R: d x classes */
} TrProgrammed;

bool tr_programmed_target(Arena *a, const TrTask *task, TrProgrammed *out, char *err, size_t errsize);
/* Sets E and U of md (built for the target's L, H, d, residual, causal) to the programmed ones. */
bool tr_programmed_init(TrModel *md, const TrTask *task, char *err, size_t errsize);

#endif
