#include "runtime/query_groups.h"

#include <string.h>

/* A multiplicative hash over a query's count, dims and value bits, a word at a time. */
static uint64_t entries_hash(const KeyEntries *q, size_t i) {
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    size_t n = q->count[i];
    uint64_t h = (uint64_t)n * k;
    for (size_t e = 0; e < n; e++) {
        uint64_t bits;
        memcpy(&bits, &q->val[i * q->stride + e], sizeof bits);
        h = (h ^ q->dim[i * q->stride + e]) * k;
        h = (h ^ bits) * k;
    }
    return h ^ (h >> 29);
}

static int same_entries(const KeyEntries *q, size_t a, size_t b) {
    size_t n = q->count[a];
    return n == q->count[b] && !memcmp(q->dim + a * q->stride, q->dim + b * q->stride, n * sizeof *q->dim) &&
           !memcmp(q->val + a * q->stride, q->val + b * q->stride, n * sizeof *q->val);
}

size_t query_groups(const KeyEntries *q, size_t rows, QueryGroups *g) {
    size_t mask = g->table_size - 1, n_groups = 0;
    memset(g->table, 0, g->table_size * sizeof *g->table);
    for (size_t i = 0; i < rows; i++) {
        size_t slot = (size_t)entries_hash(q, i) & mask;
        while (g->table[slot] && !same_entries(q, g->first[g->table[slot] - 1], i)) slot = (slot + 1) & mask;
        if (!g->table[slot]) {
            g->first[n_groups] = (uint32_t)i;
            g->table[slot] = (uint32_t)++n_groups;
        }
        g->group[i] = g->table[slot] - 1;
    }
    return n_groups;
}

size_t query_groups_by_id(const size_t *ids, size_t rows, QueryGroups *g) {
    size_t n_groups = 0;
    for (size_t i = 0; i < rows; i++) g->by_id[ids[i]] = 0;
    for (size_t i = 0; i < rows; i++) {
        uint32_t *slot = &g->by_id[ids[i]];
        if (!*slot) {
            g->first[n_groups] = (uint32_t)i;
            *slot = (uint32_t)++n_groups;
        }
        g->group[i] = *slot - 1;
    }
    return n_groups;
}

void query_groups_compact(KeyEntries *q, size_t n_groups, const QueryGroups *g) {
    for (size_t k = 0; k < n_groups; k++) { /* first[k] >= k: a later group's query is not yet overwritten */
        size_t i = g->first[k], n = q->count[i];
        if (i == k) continue;
        memmove(q->dim + k * q->stride, q->dim + i * q->stride, n * sizeof *q->dim);
        memmove(q->val + k * q->stride, q->val + i * q->stride, n * sizeof *q->val);
        q->count[k] = (uint32_t)n;
    }
}
