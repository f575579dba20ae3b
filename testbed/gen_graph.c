/* Graph tasks over n vertices (labels 0..n-1) and m = n edges, listed as u v pairs, then the
 * query pair. Edges are distinct and have no self-loops (undirected: distinct as pairs).
 *
 * Reachability: half the graphs hold a random simple path of random length 1..n-1 from s to t
 * (so shortest paths as long as the programs' round bound occur) plus random edges; half are
 * random graphs with a random cut that no edge crosses from s's side (t on the other side).
 * Edges come in random order, undirected ones in random orientation.
 *
 * Functional graphs (every vertex has at most one outgoing edge, so at most n edges): half hold
 * a path of random length 1..n-1 from s to t, half ask for a t that s does not reach (when
 * there is one); the other vertices get a successor with probability 3/4. */
#include "testbed/task.h"

#include <stdlib.h>

static bool has_edge(const int64_t *u, const int64_t *v, size_t m, int64_t a, int64_t b, bool directed) {
    for (size_t e = 0; e < m; e++)
        if ((u[e] == a && v[e] == b) || (!directed && u[e] == b && v[e] == a)) return true;
    return false;
}

/* Adds (a, b) unless it is a self-loop or already there; returns whether it did. */
static bool add_edge(int64_t *u, int64_t *v, size_t *m, int64_t a, int64_t b, bool directed) {
    if (a == b || has_edge(u, v, *m, a, b, directed)) return false;
    u[*m] = a;
    v[*m] = b;
    (*m)++;
    return true;
}

static void write_instance(Arena *a, TbInstance *out, const int64_t *u, const int64_t *v, size_t m, int64_t qa,
                           int64_t qb, int64_t answer) {
    tb_instance_alloc(a, out, 2 * m + 2, 1);
    for (size_t e = 0; e < m; e++) {
        out->tokens[2 * e] = u[e];
        out->tokens[2 * e + 1] = v[e];
    }
    out->tokens[2 * m] = qa;
    out->tokens[2 * m + 1] = qb;
    out->check_pos[0] = 2 * m + 1;
    out->expect[0] = answer;
}

void tb_gen_edge_exists(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    (void)t;
    size_t n = p->n, m = 0;
    int64_t *u = ARENA_ARRAY(a, int64_t, n), *v = ARENA_ARRAY(a, int64_t, n);
    while (m < n) add_edge(u, v, &m, (int64_t)tb_rng_below(rng, n), (int64_t)tb_rng_below(rng, n), true);
    int64_t qa, qb;
    size_t e = tb_rng_below(rng, m);
    switch (tb_rng_below(rng, 4)) {
    case 0:
    case 1: qa = u[e], qb = v[e]; break;   /* an edge of the list */
    case 2: qa = v[e], qb = u[e]; break;   /* its reverse (usually absent) */
    default:                                /* a uniform pair */
        qa = (int64_t)tb_rng_below(rng, n);
        qb = (int64_t)tb_rng_below(rng, n);
    }
    write_instance(a, out, u, v, m, qa, qb, has_edge(u, v, m, qa, qb, true));
}

bool tb_answer_reach(const int64_t *u, const int64_t *v, size_t m, size_t nv, int64_t s, int64_t t, bool directed) {
    bool *seen = calloc(nv, sizeof *seen);
    size_t *queue = calloc(nv, sizeof *queue);
    if (!seen || !queue) abort();
    size_t head = 0, tail = 0;
    seen[s] = true;
    queue[tail++] = (size_t)s;
    while (head < tail) {
        size_t x = queue[head++];
        for (size_t e = 0; e < m; e++) {
            int64_t y = -1;
            if ((size_t)u[e] == x) y = v[e];
            else if (!directed && (size_t)v[e] == x) y = u[e];
            if (y >= 0 && !seen[y]) {
                seen[y] = true;
                queue[tail++] = (size_t)y;
            }
        }
    }
    bool r = seen[t];
    free(seen);
    free(queue);
    return r;
}

void tb_gen_reach(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    size_t n = p->n, m = 0;
    bool directed = t->op != 0;
    int64_t *u = ARENA_ARRAY(a, int64_t, n), *v = ARENA_ARRAY(a, int64_t, n);
    size_t *perm = ARENA_ARRAY(a, size_t, n);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    tb_rng_shuffle(rng, perm, n);
    int64_t s, q;
    if (tb_rng_coin(rng)) {
        /* a path perm[0] -> ... -> perm[len] of random length, from s to t, plus random edges */
        size_t len = tb_rng_range(rng, 1, n - 1);
        for (size_t i = 0; i < len; i++) add_edge(u, v, &m, (int64_t)perm[i], (int64_t)perm[i + 1], directed);
        while (m < n) add_edge(u, v, &m, (int64_t)tb_rng_below(rng, n), (int64_t)tb_rng_below(rng, n), directed);
        s = (int64_t)perm[0];
        q = (int64_t)perm[len];
    } else {
        /* a cut: side[x] for x in perm[0..k) is s's side; no edge leads from it to the other */
        size_t k = tb_rng_range(rng, n / 4, 3 * n / 4);
        bool *near = ARENA_ARRAY(a, bool, n);
        for (size_t i = 0; i < k; i++) near[perm[i]] = true;
        while (m < n) {
            size_t x = tb_rng_below(rng, n), y = tb_rng_below(rng, n);
            if (near[x] == near[y] || (directed && !near[x])) add_edge(u, v, &m, (int64_t)x, (int64_t)y, directed);
        }
        s = (int64_t)perm[tb_rng_below(rng, k)];
        q = (int64_t)perm[k + tb_rng_below(rng, n - k)];
    }
    size_t *order = ARENA_ARRAY(a, size_t, m);
    for (size_t e = 0; e < m; e++) order[e] = e;
    tb_rng_shuffle(rng, order, m);
    int64_t *su = ARENA_ARRAY(a, int64_t, m), *sv = ARENA_ARRAY(a, int64_t, m);
    for (size_t e = 0; e < m; e++) {
        bool flip = !directed && tb_rng_coin(rng);
        su[e] = flip ? v[order[e]] : u[order[e]];
        sv[e] = flip ? u[order[e]] : v[order[e]];
    }
    write_instance(a, out, su, sv, m, s, q, tb_answer_reach(su, sv, m, n, s, q, directed));
}

void tb_gen_reach_functional(const TbTask *t, const TbParams *p, TbRng *rng, Arena *a, TbInstance *out) {
    (void)t;
    size_t n = p->n, m = 0;
    int64_t *u = ARENA_ARRAY(a, int64_t, n), *v = ARENA_ARRAY(a, int64_t, n);
    size_t *perm = ARENA_ARRAY(a, size_t, n);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    tb_rng_shuffle(rng, perm, n);
    bool with_path = tb_rng_coin(rng);
    size_t len = with_path ? tb_rng_range(rng, 1, n - 1) : 0; /* perm[0] -> ... -> perm[len] */
    for (size_t i = 0; i < len; i++) {
        u[m] = (int64_t)perm[i];
        v[m++] = (int64_t)perm[i + 1];
    }
    for (size_t i = len; i < n; i++) /* perm[len] (t) and the rest: a successor or none */
        if (tb_rng_below(rng, 4) != 0) {
            size_t w = tb_rng_below(rng, n);
            if (w == perm[i]) continue;
            u[m] = (int64_t)perm[i];
            v[m++] = (int64_t)w;
        }
    int64_t s = (int64_t)perm[0], q = (int64_t)perm[len];
    if (!with_path) { /* a target s does not reach, when there is one */
        size_t start = tb_rng_below(rng, n);
        for (size_t k = 0; k < n; k++) {
            int64_t c = (int64_t)perm[(start + k) % n];
            if (!tb_answer_reach(u, v, m, n, s, c, true)) {
                q = c;
                break;
            }
        }
    }
    size_t *order = ARENA_ARRAY(a, size_t, m ? m : 1);
    for (size_t e = 0; e < m; e++) order[e] = e;
    tb_rng_shuffle(rng, order, m);
    int64_t *su = ARENA_ARRAY(a, int64_t, m ? m : 1), *sv = ARENA_ARRAY(a, int64_t, m ? m : 1);
    for (size_t e = 0; e < m; e++) {
        su[e] = u[order[e]];
        sv[e] = v[order[e]];
    }
    write_instance(a, out, su, sv, m, s, q, tb_answer_reach(su, sv, m, n, s, q, true));
}
