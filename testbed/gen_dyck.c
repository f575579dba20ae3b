/* Dyck-1 and Dyck-2, bounded (depth <= TB_DYCK_DEPTH) and unbounded, strings of length n.
 * Half the instances are random balanced strings (a random walk that closes in time; bounded
 * tasks draw a quarter of them with one more level allowed, so depth violations occur), half
 * are such strings with one corruption: a bracket turned around, a closer of the wrong kind, or
 * two positions swapped. The answer is computed with a stack, whatever the corruption did. */
#include "testbed/task.h"

#include <stdlib.h>

bool tb_answer_dyck(const int64_t *tok, size_t n, size_t max_depth) {
    int64_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!stack) abort();
    size_t depth = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (tok[i] % 2 == 0) {
            stack[depth++] = tok[i] / 2;
            ok = max_depth == 0 || depth <= max_depth;
        } else {
            ok = depth > 0 && stack[depth - 1] == tok[i] / 2;
            depth -= ok;
        }
    }
    free(stack);
    return ok && depth == 0;
}

/* A balanced string of length n (even) with kinds 0..kinds-1, never deeper than bound (0: no
 * bound), into tok. */
static void balanced(TbRng *rng, int64_t *tok, size_t n, int kinds, size_t bound) {
    int64_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!stack) abort();
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        size_t left = n - i;
        bool open = depth == 0 || (depth + 1 < left && (bound == 0 || depth < bound) && tb_rng_coin(rng));
        if (open) {
            int64_t k = (int64_t)tb_rng_below(rng, (size_t)kinds);
            stack[depth++] = k;
            tok[i] = 2 * k;
        } else {
            tok[i] = 2 * stack[--depth] + 1;
        }
    }
    free(stack);
}

void tb_gen_dyck(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n;
    tb_instance_alloc(a, out, n, 1);
    size_t bound = t->depth;
    if (bound && tb_rng_below(rng, 4) == 0) bound++;
    balanced(rng, out->tokens, n, t->op, bound);
    if (tb_rng_coin(rng)) {
        size_t i = tb_rng_below(rng, n);
        switch (tb_rng_below(rng, t->op > 1 ? 3 : 2)) {
        case 0: out->tokens[i] ^= 1; break; /* opener <-> closer */
        case 1: {                           /* two different tokens swapped */
            size_t j = tb_rng_below(rng, n);
            for (int tries = 0; tries < 64 && out->tokens[j] == out->tokens[i]; tries++) j = tb_rng_below(rng, n);
            int64_t x = out->tokens[i];
            out->tokens[i] = out->tokens[j];
            out->tokens[j] = x;
            break;
        }
        default: out->tokens[i] = (out->tokens[i] + 2) % (2 * t->op); /* the other kind */
        }
    }
    out->check_pos[0] = n - 1;
    out->expect[0] = tb_answer_dyck(out->tokens, n, t->depth);
}
