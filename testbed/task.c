/* The task table and what it derives for one n: max-len, vocabulary, the program's -D values. */
#include "testbed/task.h"

#include <stdio.h>
#include <string.h>

static const char *const dyck1_alphabet[] = {"(", ")", NULL};
static const char *const dyck2_alphabet[] = {"(", ")", "[", "]", NULL};

/* name, family, alphabet, op, depth, max-len = mul * n + add, index_set, vocab, defines, define,
 * generator */
static const TbTask tasks[] = {
    {"all", "boolean", NULL, TB_ALL, 0, 1, 0, false, "0..1", 0, NULL, tb_gen_boolean},
    {"any", "boolean", NULL, TB_ANY, 0, 1, 0, false, "0..1", 0, NULL, tb_gen_boolean},
    {"majority", "boolean", NULL, TB_MAJORITY, 0, 1, 0, false, "0..1", 0, NULL, tb_gen_boolean},
    {"parity", "boolean", NULL, TB_PARITY, 0, 1, 0, false, "0..1", 0, NULL, tb_gen_boolean},
    {"index", "retrieval", NULL, TB_INDEX, 0, 1, 1, false, "0..%zu", 0, NULL, tb_gen_index},
    {"index_all", "retrieval", NULL, TB_ALL, 0, 1, 1, true, "-1..%zu", 0, NULL, tb_gen_index_set},
    {"index_any", "retrieval", NULL, TB_ANY, 0, 1, 1, true, "-1..%zu", 0, NULL, tb_gen_index_set},
    {"index_parity", "retrieval", NULL, TB_PARITY, 0, 1, 1, true, "-1..%zu", 0, NULL, tb_gen_index_set},
    {"hop1", "retrieval", NULL, 1, 0, 1, 0, false, "0..3", 0, NULL, tb_gen_hop},
    {"hop2", "retrieval", NULL, 2, 0, 1, 0, false, "0..3", 0, NULL, tb_gen_hop},
    {"hop3", "retrieval", NULL, 3, 0, 1, 0, false, "0..3", 0, NULL, tb_gen_hop},
    {"sparse_all", "sparse", NULL, TB_ALL, 0, 1, 0, false, "0..1", 1, "SPARSE", tb_gen_sparse},
    {"sparse_any", "sparse", NULL, TB_ANY, 0, 1, 0, false, "0..1", 1, "SPARSE", tb_gen_sparse},
    {"sparse_parity", "sparse", NULL, TB_PARITY, 0, 1, 0, false, "0..1", 1, "SPARSE", tb_gen_sparse},
    {"binary_add", "arithmetic", NULL, 0, 0, 2, 0, false, "0..1", 0, NULL, tb_gen_binary_add},
    {"edge_exists", "graph", NULL, 0, 0, 2, 2, false, "0..%zu", 0, NULL, tb_gen_edge_exists},
    {"reach_directed", "graph", NULL, 1, 0, 2, 2, false, "0..%zu", 1, "VERTICES", tb_gen_reach},
    {"reach_undirected", "graph", NULL, 0, 0, 2, 2, false, "0..%zu", 1, "VERTICES", tb_gen_reach},
    {"reach_functional", "graph", NULL, 1, 0, 2, 2, false, "0..%zu", 1, "ROUNDS", tb_gen_reach_functional},
    {"dyck1", "syntax", dyck1_alphabet, 1, 0, 1, 0, false, "()", 0, NULL, tb_gen_dyck},
    {"dyck1_bounded", "syntax", dyck1_alphabet, 1, TB_DYCK_DEPTH, 1, 0, false, "()", 0, NULL, tb_gen_dyck},
    {"dyck2", "syntax", dyck2_alphabet, 2, 0, 1, 0, false, "()[]", 0, NULL, tb_gen_dyck},
    {"dyck2_bounded", "syntax", dyck2_alphabet, 2, TB_DYCK_DEPTH, 1, 0, false, "()[]", 0, NULL, tb_gen_dyck},
};

const TbTask *tb_tasks(size_t *count) {
    *count = sizeof tasks / sizeof *tasks;
    return tasks;
}

const TbTask *tb_task_find(const char *name) {
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++)
        if (strcmp(tasks[i].name, name) == 0) return &tasks[i];
    return NULL;
}

size_t tb_index_set_max(size_t n) {
    return n / 4 > 2 ? n / 4 : 2;
}

size_t tb_max_len(const TbTask *t, size_t n) {
    return t->max_len_mul * n + t->max_len_add + (t->index_set ? tb_index_set_max(n) : 0);
}

void tb_vocab(const TbTask *t, size_t n, char *buf, size_t size) {
    const char *hole = strstr(t->vocab_fmt, "%zu");
    if (!hole) {
        snprintf(buf, size, "%s", t->vocab_fmt);
        return;
    }
    snprintf(buf, size, "%.*s%zu%s", (int)(hole - t->vocab_fmt), t->vocab_fmt, n - 1, hole + 3);
}

size_t tb_params(const TbTask *t, size_t n, uint64_t seed, TbParams *p, TbDefine *defs) {
    memset(p, 0, sizeof *p);
    p->n = n;
    /* TB_SPARSE_K distinct positions of [0, n), ascending (n >= TB_SPARSE_K). */
    TbRng r = {tb_seed_mix(seed, "sparse", n)};
    for (size_t k = 0; k < TB_SPARSE_K && k < n; k++) {
        size_t pos;
        bool fresh;
        do {
            pos = tb_rng_below(&r, n);
            fresh = true;
            for (size_t j = 0; j < k; j++) fresh &= p->sparse[j] != pos;
        } while (!fresh);
        size_t j = k;
        for (; j > 0 && p->sparse[j - 1] > pos; j--) p->sparse[j] = p->sparse[j - 1];
        p->sparse[j] = pos;
    }
    if (t->n_defines == 0) return 0;
    defs[0].name = t->define;
    char *v = defs[0].value;
    size_t size = sizeof defs[0].value, used = 0;
    if (strcmp(t->define, "SPARSE") == 0) {
        for (size_t k = 0; k < TB_SPARSE_K; k++)
            used += (size_t)snprintf(v + used, size - used, "%s%zu", k ? ", " : "[", p->sparse[k]);
        snprintf(v + used, size - used, "]");
    } else if (strcmp(t->define, "ROUNDS") == 0) {
        size_t rounds = 0; /* ceil(log2 n): 2^rounds >= n */
        while (((size_t)1 << rounds) < n) rounds++;
        snprintf(v, size, "%zu", rounds);
    } else {
        snprintf(v, size, "%zu", n);
    }
    return 1;
}

void tb_instance_alloc(Arena *a, TbInstance *out, size_t len, size_t n_checks) {
    out->len = len;
    out->tokens = ARENA_ARRAY(a, int64_t, len ? len : 1);
    out->n_checks = n_checks;
    out->check_pos = ARENA_ARRAY(a, size_t, n_checks ? n_checks : 1);
    out->expect = ARENA_ARRAY(a, int64_t, n_checks ? n_checks : 1);
}
