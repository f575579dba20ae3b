/* The two tasks of the fixed-universal-transformer experiments, as seeded generators in C
 * (docs/train.md has the exact definitions and why).
 *
 * Every example is a token string x_0..x_{len-1} (ids < vocab) and a list of answers
 * (position, class). The model sees BOS (id = vocab) at row 0 and x_i at row i + 1.
 *
 * Dyck-1 (vocab 2: '(' = 0, ')' = 1; classes 0 = unbalanced, 1 = balanced). The length is an
 *   even number drawn uniformly from 2..max_len. With probability p_balanced the string is a
 *   uniformly random balanced string of that length (cycle lemma); otherwise it is unbalanced:
 *   with probability p_equal a uniformly random arrangement of len/2 of each bracket that is not
 *   balanced (some prefix closes more than it opened: the hard negatives), else a uniformly
 *   random string whose counts differ. One answer, at the last position.
 *
 * k-hop induction (Sanford, Hsu, Telgarsky 2024; vocab = alphabet, classes = alphabet + 1, the
 *   last class being "none"). The length is max_len, tokens uniform. With
 *     find(i) = max { j : 1 <= j <= i, x_{j-1} = x_i }   (none when the set is empty)
 *   (jump to just after the latest earlier occurrence of x_i), the answer at every position i is
 *     hop_k(i) = x_{find^k(i)},  or "none" when some step of find^k finds none. */
#ifndef RASPCC_TRAIN_TASK_H
#define RASPCC_TRAIN_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fut/fut.h"

#define TR_MAX_LEN 256

typedef enum TrTaskKind { TR_DYCK1, TR_KHOP } TrTaskKind;

typedef struct TrTask {
    TrTaskKind kind;
    size_t max_len;    /* Dyck-1: longest string (>= 2); k-hop: the length of every string */
    double p_balanced; /* Dyck-1: share of balanced strings */
    double p_equal;    /* Dyck-1: share of the unbalanced strings with equal counts */
    size_t k;          /* k-hop: hops, 1..8 */
    size_t alphabet;   /* k-hop: tokens 0..alphabet-1, 2..64 */
} TrTask;

/* Defaults: Dyck-1 p_balanced 0.5, p_equal 0.5; k-hop alphabet 4. */
TrTask tr_task_default(TrTaskKind kind, size_t max_len, size_t k);
bool tr_task_validate(const TrTask *t, char *err, size_t errsize);
const char *tr_task_name(TrTaskKind k);
bool tr_task_parse(const char *s, TrTaskKind *out);

size_t tr_task_vocab(const TrTask *t);   /* token ids 0..vocab-1; BOS is id vocab */
size_t tr_task_classes(const TrTask *t); /* answer classes */

typedef struct TrAnswer {
    uint16_t pos;   /* position in the string (row pos + 1 of the model's input) */
    uint16_t label; /* class */
} TrAnswer;

typedef struct TrExample {
    size_t len;
    uint8_t tok[TR_MAX_LEN];
    size_t n_answers;
    TrAnswer answers[TR_MAX_LEN];
} TrExample;

/* Draws one example. */
void tr_task_draw(const TrTask *t, FutRng *rng, TrExample *ex);

/* The definitions, computed directly (the generators' answers come from these). */
bool tr_dyck1_balanced(const uint8_t *tok, size_t len);
/* hop_k at every position: out[i] = the token, or alphabet for "none". */
void tr_khop_answers(const uint8_t *tok, size_t len, size_t k, size_t alphabet, uint16_t *out);

/* A 64-bit hash of the tokens (FNV-1a), for counting repeats between train and test sets. */
uint64_t tr_example_hash(const TrExample *ex);

#endif
