/* k-hop induction: uniform tokens over TB_HOP_ALPHABET symbols; the answer follows the hops. */
#include "testbed/task.h"

int64_t tb_answer_hop(const int64_t *tok, size_t n, int k) {
    size_t at = n - 1;
    for (int h = 0; h < k; h++) {
        size_t next = 0; /* no earlier occurrence: position 0 */
        for (size_t j = at; j-- > 0;)
            if (tok[j] == tok[at]) {
                next = j + 1;
                break;
            }
        at = next;
    }
    return tok[at];
}

void tb_gen_hop(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n;
    tb_instance_alloc(a, out, n, 1);
    for (size_t i = 0; i < n; i++) out->tokens[i] = (int64_t)tb_rng_below(rng, TB_HOP_ALPHABET);
    out->check_pos[0] = n - 1;
    out->expect[0] = tb_answer_hop(out->tokens, n, t->op);
}
