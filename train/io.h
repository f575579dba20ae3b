/* Trained models on disk (docs/train.md, "Files").
 *
 *   raspfut-trained  a safetensors container: metadata format=raspfut-trained, version=1, the
 *                    task (task, n, k, alphabet, p_balanced, p_equal) and the model's
 *                    configuration (kind, layers, heads, width, m, residual, layernorm, mlp,
 *                    mlp_hidden, causal, pos, vocab, max_len, classes, precision, seed), plus
 *                    informational keys (steps, accuracy); one tensor per parameter, named as in
 *                    the model's table (embed, layers.<l>.heads.<h>.r_q, ..., unembed), F32 or
 *                    F64 as trained. The loader rebuilds the model from the metadata and then
 *                    takes every tensor from the file: exactly that set of names and shapes,
 *                    finite values, or a message.
 *   raspfut backbone + embedding (fut/io.h): for a fixed attention-only backbone with absolute or
 *                    no positions (no layer norm, MLP or rotary encoding, which those formats
 *                    cannot state), the backbone with U in the first `classes` columns of its
 *                    unembedding and the trained E, so that `raspfut run UT.bin E.bin X` prints
 *                    the logits in its first columns for X = one-hot rows [token or BOS |
 *                    position] (tr_print_input writes such an X). */
#ifndef RASPCC_TRAIN_IO_H
#define RASPCC_TRAIN_IO_H

#include <stdio.h>

#include "train/model.h"
#include "train/task.h"

/* Informational metadata written beside the configuration. */
typedef struct TrFileInfo {
    size_t steps;
    double accuracy; /* < 0: not stated */
} TrFileInfo;

bool tr_model_serialize(const TrModel *md, const TrTask *task, const TrFileInfo *info, uint8_t **buf, size_t *len,
                        char *err, size_t errsize);
/* Builds *md (batch_cap sequences per batch) and *task from a raspfut-trained file. */
bool tr_model_parse(const uint8_t *buf, size_t len, size_t batch_cap, TrModel *md, TrTask *task, char *err,
                    size_t errsize);

/* Can the model be written as a raspfut backbone and embedding? If not, err says why. */
bool tr_model_fut_exportable(const TrModel *md, char *err, size_t errsize);
bool tr_model_export_fut(const TrModel *md, uint8_t **backbone, size_t *backbone_len, uint8_t **embedding,
                         size_t *embedding_len, char *err, size_t errsize);

/* X of a token string for `raspfut run`: rows BOS, x_0, ...; each row one-hot over
 * [vocab + 1 token ids | max_len + 1 positions] (no position block with --pos none). */
void tr_print_input(FILE *f, const TrModel *md, const uint8_t *tok, size_t len);

#endif
