/* Dyck-1 and k-hop induction generators (train/task.h). */
#include "train/task.h"

#include <stdio.h>
#include <string.h>

TrTask tr_task_default(TrTaskKind kind, size_t max_len, size_t k) {
    return (TrTask){.kind = kind, .max_len = max_len, .p_balanced = 0.5, .p_equal = 0.5, .k = k, .alphabet = 4};
}

const char *tr_task_name(TrTaskKind k) { return k == TR_DYCK1 ? "dyck1" : "khop"; }

bool tr_task_parse(const char *s, TrTaskKind *out) {
    if (strcmp(s, "dyck1") == 0) *out = TR_DYCK1;
    else if (strcmp(s, "khop") == 0) *out = TR_KHOP;
    else return false;
    return true;
}

bool tr_task_validate(const TrTask *t, char *err, size_t errsize) {
    if (t->kind == TR_DYCK1) {
        if (t->max_len < 2 || t->max_len > TR_MAX_LEN) {
            snprintf(err, errsize, "dyck1 needs a maximum length n in 2..%d (got %zu)", TR_MAX_LEN, t->max_len);
            return false;
        }
        if (!(t->p_balanced >= 0 && t->p_balanced <= 1 && t->p_equal >= 0 && t->p_equal <= 1)) {
            snprintf(err, errsize, "dyck1 rates must lie in [0, 1]");
            return false;
        }
        return true;
    }
    if (t->max_len < 1 || t->max_len > TR_MAX_LEN || t->k < 1 || t->k > 8 || t->alphabet < 2 || t->alphabet > 64) {
        snprintf(err, errsize, "khop needs n in 1..%d, k in 1..8 and an alphabet of 2..64 (got n=%zu k=%zu alphabet=%zu)",
                 TR_MAX_LEN, t->max_len, t->k, t->alphabet);
        return false;
    }
    return true;
}

size_t tr_task_vocab(const TrTask *t) { return t->kind == TR_DYCK1 ? 2 : t->alphabet; }
size_t tr_task_classes(const TrTask *t) { return t->kind == TR_DYCK1 ? 2 : t->alphabet + 1; }

bool tr_dyck1_balanced(const uint8_t *tok, size_t len) {
    long depth = 0;
    for (size_t i = 0; i < len; i++) {
        depth += tok[i] == 0 ? 1 : -1;
        if (depth < 0) return false;
    }
    return depth == 0;
}

static void shuffle(FutRng *rng, uint8_t *x, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = fut_rng_below(rng, i);
        uint8_t t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}

/* A uniformly random balanced string of length len (even) by the cycle lemma: of the cyclic
 * shifts of a random arrangement of len/2 openers and len/2 + 1 closers (sum -1), exactly one
 * keeps every proper prefix sum >= 0, the one starting just after the first minimum of the
 * prefix sums; dropping its final closer leaves a balanced string, each with equal chance. */
static void draw_balanced(FutRng *rng, uint8_t *out, size_t len) {
    uint8_t seq[TR_MAX_LEN + 1];
    size_t n = len + 1;
    for (size_t i = 0; i < n; i++) seq[i] = i < len / 2 ? 0 : 1;
    shuffle(rng, seq, n);
    long sum = 0, best = 1;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        sum += seq[i] == 0 ? 1 : -1;
        if (sum < best) {
            best = sum;
            start = (i + 1) % n;
        }
    }
    for (size_t i = 0; i < len; i++) out[i] = seq[(start + i) % n];
}

static void draw_dyck1(const TrTask *t, FutRng *rng, TrExample *ex) {
    size_t len = 2 * (1 + fut_rng_below(rng, t->max_len / 2));
    ex->len = len;
    if (fut_rng_uniform(rng) < t->p_balanced) {
        draw_balanced(rng, ex->tok, len);
    } else if (fut_rng_uniform(rng) < t->p_equal) {
        do { /* at least 1 in 2 arrangements is unbalanced (len >= 2), so this ends quickly */
            for (size_t i = 0; i < len; i++) ex->tok[i] = i < len / 2 ? 0 : 1;
            shuffle(rng, ex->tok, len);
        } while (tr_dyck1_balanced(ex->tok, len));
    } else {
        size_t opens;
        do {
            opens = 0;
            for (size_t i = 0; i < len; i++) opens += (ex->tok[i] = (uint8_t)fut_rng_below(rng, 2)) == 0;
        } while (2 * opens == len);
    }
    ex->n_answers = 1;
    ex->answers[0] = (TrAnswer){.pos = (uint16_t)(len - 1), .label = tr_dyck1_balanced(ex->tok, len)};
}

void tr_khop_answers(const uint8_t *tok, size_t len, size_t k, size_t alphabet, uint16_t *out) {
    enum { NONE = -1 };
    int find[TR_MAX_LEN];
    int last[64]; /* latest position holding each token, among those before i */
    for (size_t c = 0; c < alphabet; c++) last[c] = NONE;
    for (size_t i = 0; i < len; i++) {
        find[i] = last[tok[i]] == NONE ? NONE : last[tok[i]] + 1;
        last[tok[i]] = (int)i;
    }
    for (size_t i = 0; i < len; i++) {
        int at = (int)i;
        for (size_t h = 0; h < k && at != NONE; h++) at = find[at];
        out[i] = at == NONE ? (uint16_t)alphabet : tok[at];
    }
}

static void draw_khop(const TrTask *t, FutRng *rng, TrExample *ex) {
    ex->len = t->max_len;
    for (size_t i = 0; i < ex->len; i++) ex->tok[i] = (uint8_t)fut_rng_below(rng, t->alphabet);
    uint16_t ans[TR_MAX_LEN];
    tr_khop_answers(ex->tok, ex->len, t->k, t->alphabet, ans);
    ex->n_answers = ex->len;
    for (size_t i = 0; i < ex->len; i++) ex->answers[i] = (TrAnswer){.pos = (uint16_t)i, .label = ans[i]};
}

void tr_task_draw(const TrTask *t, FutRng *rng, TrExample *ex) {
    if (t->kind == TR_DYCK1) draw_dyck1(t, rng, ex);
    else draw_khop(t, rng, ex);
}

uint64_t tr_example_hash(const TrExample *ex) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < ex->len; i++) h = (h ^ (uint64_t)(ex->tok[i] + 1)) * 0x100000001b3ULL;
    return (h ^ ex->len) * 0x100000001b3ULL;
}
