/* A compiled model's residual stream read by s-op: its dims grouped into blocks by their labels,
 * which part of the model writes each dim, and what a block holds at one position.
 *
 * Labels (Model.labels, written by codegen's plan) name one s-op per dim:
 *   label  = sop [":" rest]
 *   sop    = ["1/"] ident ["@" digits ":" digits]      e.g. sorted, map@10:29, 1/y, joint@6:16
 *   rest   = value | qualifier [":" value] | anything else
 *   value  = a number (1, -2.5, inf, nan), True, False or a "quoted string", as value_format
 *            writes atoms
 * A block is a run of consecutive dims whose labels share the sop and qualifier and each end in
 * a value: a one-hot block, one dim per value ("tokens:a", "tokens:b"; "x:kind:1"). Every other
 * dim is a block of its own holding a number ("aggregate@8:11", "x:mean(i)"). The blocks cover
 * the dims 0..D-1 in order.
 *
 * Writers come from the weights alone: a dim is written by the embedding when a row of
 * token_embed or pos_embed (or the real-valued token dim) is non-zero there, by head h of layer l
 * when column d of its Wo is non-zero, by layer l's MLP when column d of W2 or b2[d] is. */
#ifndef RASPCC_VIZ_RESIDUAL_H
#define RASPCC_VIZ_RESIDUAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/model.h"
#include "support/arena.h"

typedef struct ResidualBlock {
    const char *name;    /* sop, or "sop:qualifier" ("x:kind", "target: 1/(width+1) term 1") */
    size_t sop_len;      /* the sop part: name[0..sop_len) */
    size_t dim, count;   /* dims [dim, dim + count) */
    bool one_hot;        /* each dim is "name:value" (count >= 1); else count == 1, a number */
    const char **values; /* one_hot: each dim's value text ("a" for a string, unquoted) */
} ResidualBlock;

typedef enum ResidualWriterKind { WRITER_EMBED, WRITER_HEAD, WRITER_MLP } ResidualWriterKind;

typedef struct ResidualWriter {
    ResidualWriterKind kind;
    size_t layer, head; /* layer: WRITER_HEAD and WRITER_MLP; head: WRITER_HEAD */
} ResidualWriter;

typedef struct ResidualLayout {
    ResidualBlock *blocks;
    size_t n_blocks;
    size_t *block_of;          /* D: the block of each dim */
    ResidualWriter **writers;  /* D: the writers of each dim, in model order */
    size_t *n_writers;         /* D */
} ResidualLayout;

/* Everything in `a`. */
void residual_layout(Arena *a, const Model *m, ResidualLayout *out);

/* Parses one label: the length of its sop part (0 when it does not start with one), the
 * qualifier (may be empty) and the value text (NULL when the label does not end in a value).
 * Exposed for tests. */
size_t residual_parse_label(Arena *a, const char *label, const char **qualifier, const char **value);

/* Whether the label's sop part is `key` exactly (the label is key, or key followed by ':'). */
bool residual_label_is(const char *label, const char *key);

/* What block b holds in residual row x, as text: a one-hot block's value ("3", "a", "True") when
 * exactly one entry is 1 and the rest 0 (within MODEL_ONEHOT_TOL); "." when every entry is 0; else
 * the non-zero entries as "{a 0.5, b 0.5}". A number block: %.4g of the entry. Into buf. */
void residual_block_text(const ResidualBlock *b, const double *x, char *buf, size_t size);

/* "embedding", "layer 1 head 0", "layer 0 MLP". */
void residual_writer_text(ResidualWriter w, char *buf, size_t size);

#endif
