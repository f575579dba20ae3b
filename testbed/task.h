/* The theory testbed's task suite: for each task, its RASP program (rasp_examples/testbed/), how
 * an instance of size n looks, a seeded generator of random instances and the true answer,
 * computed directly in C (never through RASP). docs/testbed.md states each format in words.
 *
 * An instance is a token sequence and the positions whose outputs are compared, with the answer
 * expected there (an int: every testbed program outputs ints). Decision and retrieval tasks are
 * read at the last position; binary_add at positions 0..n (the n + 1 bits of the sum).
 *
 * Token codes: for int-token programs (tokens_int) the code is the token; for string-token
 * programs (Dyck) it indexes the task's alphabet. */
#ifndef RASPCC_TESTBED_TASK_H
#define RASPCC_TESTBED_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"
#include "testbed/rng.h"

/* The k of the sparse tasks: how many fixed positions they read. */
#define TB_SPARSE_K 3
/* The alphabet size of k-hop induction (tokens 0..TB_HOP_ALPHABET-1). */
#define TB_HOP_ALPHABET 4
/* The depth bound of bounded Dyck (the programs' DEPTH). */
#define TB_DYCK_DEPTH 4

typedef struct TbInstance {
    size_t len;
    int64_t *tokens;    /* len token codes */
    size_t n_checks;
    size_t *check_pos;  /* positions compared, ascending */
    int64_t *expect;    /* the true answer at each */
} TbInstance;

/* What one (task, n) fixes before instances are drawn: n and, for the sparse tasks, the set of
 * positions (drawn once from the seed, passed to the program with -D SPARSE=[...]). */
typedef struct TbParams {
    size_t n;
    size_t sparse[TB_SPARSE_K]; /* ascending, distinct, < n */
} TbParams;

/* One -D NAME=VALUE the program needs for n. */
typedef struct TbDefine {
    const char *name;
    char value[96];
} TbDefine;

typedef struct TbTask TbTask;
struct TbTask {
    const char *name;        /* the CSV's task column; the program is name + ".rasp" */
    const char *family;      /* boolean, retrieval, sparse, arithmetic, graph, syntax */
    const char *const *alphabet; /* string tokens by code (NULL-terminated), or NULL: int tokens */
    int op;                  /* boolean, sparse, index sets: a TbOp; k-hop: k; reachability: 1
                                directed, 0 undirected; Dyck: the number of bracket kinds */
    size_t depth;            /* Dyck: the depth bound (0: unbounded) */
    size_t max_len_mul, max_len_add; /* max-len = mul * n + add (+ n/4 for the index sets) */
    bool index_set;          /* the Index-All/Any/Parity format: max-len adds the query set */
    const char *vocab_fmt;   /* the --vocab spec; %zu (at most once) is replaced by n - 1 */
    size_t n_defines;        /* 0, or 1: the define below */
    const char *define;      /* "SPARSE" (the sparse positions), "VERTICES" (n) or "ROUNDS"
                                (ceil(log2 n)) */
    /* Draws one instance of size p->n into *out (allocated in a). */
    void (*generate)(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
};

typedef enum TbOp { TB_ALL, TB_ANY, TB_MAJORITY, TB_PARITY, TB_INDEX } TbOp;

/* The suite, in the order of docs/testbed.md; *count gets its size. */
const TbTask *tb_tasks(size_t *count);
const TbTask *tb_task_find(const char *name);

/* The longest input of size n, and the --vocab spec (written to buf). */
size_t tb_max_len(const TbTask *t, size_t n);
void tb_vocab(const TbTask *t, size_t n, char *buf, size_t size);
/* The size of Index-All/Any/Parity's largest query set for n: max(2, n / 4). */
size_t tb_index_set_max(size_t n);

/* Fixes the parameters of (t, n) from the seed; writes the program's -D values to defs (room
 * for one) and returns how many. */
size_t tb_params(const TbTask *t, size_t n, uint64_t seed, TbParams *p, TbDefine *defs);

/* Generators, one per family (gen_*.c), and the true answers they use (exposed for tests). */
void tb_gen_boolean(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_index(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_index_set(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_hop(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_sparse(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_binary_add(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_edge_exists(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_reach(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_reach_functional(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);
void tb_gen_dyck(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out);

/* The true answers. bits: 0/1 values. */
int64_t tb_answer_bits(TbOp op, const int64_t *bits, size_t n);
/* k-hop: the token reached from the last position of tok[0..n) after k hops. */
int64_t tb_answer_hop(const int64_t *tok, size_t n, int k);
/* Bit i of a + b for i in 0..n (a, b: n bits each, least significant first) into sum[0..n]. */
void tb_answer_add(const int64_t *a, const int64_t *b, size_t n, int64_t *sum);
/* Whether t is reachable from s over the m edges (u[e], v[e]) of a graph on vertices 0..nv-1;
 * undirected when directed is false. */
bool tb_answer_reach(const int64_t *u, const int64_t *v, size_t m, size_t nv, int64_t s, int64_t t, bool directed);
/* Whether the bracket string (codes: 2c = opener of kind c, 2c + 1 = its closer) is balanced
 * with every closer matching; with max_depth > 0, also no prefix deeper than max_depth. */
bool tb_answer_dyck(const int64_t *tok, size_t n, size_t max_depth);

/* An instance's storage, for generators: len tokens and n_checks checks, zeroed. */
void tb_instance_alloc(Arena *a, TbInstance *out, size_t len, size_t n_checks);

#endif
