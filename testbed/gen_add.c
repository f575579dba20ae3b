/* BinaryAdd: two uniform n-bit numbers, least significant bit first; the n + 1 bits of the sum
 * are read at positions 0..n. */
#include "testbed/task.h"

void tb_answer_add(const int64_t *a, const int64_t *b, size_t n, int64_t *sum) {
    int64_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s = a[i] + b[i] + carry;
        sum[i] = s & 1;
        carry = s >> 1;
    }
    sum[n] = carry;
}

void tb_gen_binary_add(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    (void)t;
    size_t n = p->n;
    tb_instance_alloc(a, out, 2 * n, n + 1);
    for (size_t i = 0; i < 2 * n; i++) out->tokens[i] = tb_rng_coin(rng);
    for (size_t i = 0; i <= n; i++) out->check_pos[i] = i;
    tb_answer_add(out->tokens, out->tokens + n, n, out->expect);
}
