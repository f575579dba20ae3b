/* raspfut files (docs/fut.md "File formats"): targets, backbones and embeddings, each a
 * safetensors container (runtime/safetensors.h) of F64 matrices with string metadata.
 *
 *   target     __metadata__ format=raspfut-target version=1 layers heads width residual causal
 *              tensors layers.<l>.heads.<h>.w_q [d, dk], .w_k [d, dk], .w_v [d, dv], .w_o [dv, d]
 *              (F64 or F32; nothing else allowed)
 *   backbone   format=raspfut-backbone version=1 kind layers heads width m residual causal tied seed
 *              untied: layers.<l>.heads.<h>.r_q [m, d], .r_k [m, d], .r_v [m, m], layers.<l>.skip [m, m]
 *              tied:   shared.heads.<h>.r_q ..., shared.skip; always unembed [m, d]
 *   embedding  format=raspfut-embedding version=1, the backbone's kind layers heads width m residual
 *              causal seed, target_width; tensor embedding [d', m]
 *
 * Contract of every parser: any byte string is either accepted as a well-formed object (all
 * shapes consistent, every weight finite) or rejected with a message; never a crash. Parsed
 * objects are allocated in the arena and do not point into the buffer. */
#ifndef RASPCC_FUT_IO_H
#define RASPCC_FUT_IO_H

#include "fut/fut.h"

/* Embedding plus the identity of the backbone it programs. */
typedef struct FutEmbedding {
    FutMat E; /* d' x m */
    FutKind kind;
    size_t L, H, d, m;
    bool residual, causal;
    uint64_t seed;
} FutEmbedding;

bool fut_target_parse(Arena *a, const uint8_t *buf, size_t len, FutTarget *out, char *err, size_t errsize);
bool fut_target_serialize(const FutTarget *t, uint8_t **buf, size_t *len, char *err, size_t errsize);

bool fut_backbone_parse(Arena *a, const uint8_t *buf, size_t len, FutBackbone *out, char *err, size_t errsize);
bool fut_backbone_serialize(const FutBackbone *b, uint8_t **buf, size_t *len, char *err, size_t errsize);

bool fut_embedding_parse(Arena *a, const uint8_t *buf, size_t len, FutEmbedding *out, char *err, size_t errsize);
bool fut_embedding_serialize(const FutBackbone *b, FutMat E, uint8_t **buf, size_t *len, char *err,
                             size_t errsize);
/* Does embedding e belong to backbone b (same kind, shape, seed)? */
bool fut_embedding_matches(const FutEmbedding *e, const FutBackbone *b, char *err, size_t errsize);

/* Whole-file helpers. fut_read_file allocates the contents in the arena. */
bool fut_read_file(Arena *a, const char *path, uint8_t **buf, size_t *len, char *err, size_t errsize);
bool fut_write_file(const char *path, const uint8_t *buf, size_t len, char *err, size_t errsize);

#endif
