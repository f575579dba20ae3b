/* Generators of the tasks over bits: Boolean (All, Any, Majority, Parity), Index, the index
 * sets (Index-All/Any/Parity) and the sparse functions. Each draws hard instances about half the
 * time: for All and Any the one answer that uniform bits almost never give (all ones, all zeros)
 * and its near misses (one bit flipped); for Majority counts next to the threshold. */
#include "testbed/task.h"

int64_t tb_answer_bits(TbOp op, const int64_t *bits, size_t n) {
    size_t ones = 0;
    for (size_t i = 0; i < n; i++) ones += bits[i] != 0;
    switch (op) {
    case TB_ALL: return ones == n;
    case TB_ANY: return ones > 0;
    case TB_MAJORITY: return 2 * ones > n;
    case TB_PARITY: return (int64_t)(ones % 2);
    case TB_INDEX: break;
    }
    return 0;
}

static void uniform_bits(TbRng *rng, int64_t *bits, size_t n) {
    for (size_t i = 0; i < n; i++) bits[i] = tb_rng_coin(rng);
}

/* Bits at the positions pos[0..k) (all positions when pos is NULL) for op: half the time the
 * rare answer of All/Any (all ones / all zeros), a quarter of those with one bit flipped;
 * otherwise (and always for Parity) uniform. */
static void draw_bits(TbOp op, TbRng *rng, int64_t *bits, const size_t *pos, size_t k) {
    bool rare = (op == TB_ALL || op == TB_ANY) && tb_rng_coin(rng);
    for (size_t j = 0; j < k; j++) {
        int64_t b = rare ? (op == TB_ALL) : tb_rng_coin(rng);
        bits[pos ? pos[j] : j] = b;
    }
    if (rare && k > 0 && tb_rng_coin(rng)) {
        size_t j = tb_rng_below(rng, k);
        bits[pos ? pos[j] : j] ^= 1;
    }
}

static void check_last(TbInstance *out, int64_t answer) {
    out->check_pos[0] = out->len - 1;
    out->expect[0] = answer;
}

void tb_gen_boolean(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n;
    tb_instance_alloc(a, out, n, 1);
    if (t->op == TB_MAJORITY) {
        /* Half uniform counts, half within two of the threshold n / 2. */
        size_t ones = tb_rng_coin(rng) ? tb_rng_range(rng, 0, n) : tb_rng_range(rng, n / 2 - 1, n / 2 + 2);
        if (ones > n) ones = n;
        size_t *perm = ARENA_ARRAY(a, size_t, n);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        tb_rng_shuffle(rng, perm, n);
        for (size_t i = 0; i < n; i++) out->tokens[perm[i]] = i < ones;
    } else {
        draw_bits((TbOp)t->op, rng, out->tokens, NULL, n);
    }
    check_last(out, tb_answer_bits((TbOp)t->op, out->tokens, n));
}

void tb_gen_index(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    (void)t;
    size_t n = p->n;
    tb_instance_alloc(a, out, n + 1, 1);
    uniform_bits(rng, out->tokens, n);
    size_t q = tb_rng_below(rng, n);
    out->tokens[n] = (int64_t)q;
    check_last(out, out->tokens[q]);
}

void tb_gen_index_set(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n, m = tb_rng_range(rng, 1, tb_index_set_max(n));
    if (m > n) m = n;
    size_t *perm = ARENA_ARRAY(a, size_t, n);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    tb_rng_shuffle(rng, perm, n); /* the queries: perm[0..m), in that order */
    tb_instance_alloc(a, out, n + 1 + m, 1);
    uniform_bits(rng, out->tokens, n);
    draw_bits((TbOp)t->op, rng, out->tokens, perm, m);
    out->tokens[n] = -1;
    int64_t *asked = ARENA_ARRAY(a, int64_t, m);
    for (size_t j = 0; j < m; j++) {
        out->tokens[n + 1 + j] = (int64_t)perm[j];
        asked[j] = out->tokens[perm[j]];
    }
    check_last(out, tb_answer_bits((TbOp)t->op, asked, m));
}

void tb_gen_sparse(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n;
    tb_instance_alloc(a, out, n, 1);
    uniform_bits(rng, out->tokens, n);
    draw_bits((TbOp)t->op, rng, out->tokens, p->sparse, TB_SPARSE_K);
    int64_t at[TB_SPARSE_K];
    for (size_t k = 0; k < TB_SPARSE_K; k++) at[k] = out->tokens[p->sparse[k]];
    check_last(out, tb_answer_bits((TbOp)t->op, at, TB_SPARSE_K));
}
