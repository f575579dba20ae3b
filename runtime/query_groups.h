/* Queries grouped by their non-zero entries. Two queries with the same entries (the same dims with
 * the same bits) score every key alike, so a head that is not causal (every query sees every key)
 * gives them the same output bit for bit: it is computed once per group and copied. Compiled
 * heads often ask only a few distinct questions (select(tokens, tokens, <) asks one per token),
 * whatever the length. */
#ifndef RASPCC_RUNTIME_QUERY_GROUPS_H
#define RASPCC_RUNTIME_QUERY_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"

/* Scratch of query_groups for up to `rows` queries. */
typedef struct QueryGroups {
    uint32_t *group; /* rows: query i's group */
    uint32_t *first; /* rows: group g's first query (ascending in g) */
    uint32_t *table; /* 2 x rows (a power of two >= 2 rows): hash slots, group + 1 or 0 */
    size_t table_size;
    uint32_t *by_id; /* n_ids: query_groups_by_id's group + 1 of each id, or 0 */
    size_t n_ids;
} QueryGroups;

/* Groups queries [0, rows) of q by their entries into g->group and g->first; returns the number
 * of groups. */
size_t query_groups(const KeyEntries *q, size_t rows, QueryGroups *g);

/* The same from a number each query's entries depend on alone (e.g. its token id, ids[i] < n_ids):
 * queries with equal ids have equal entries, so they share a group (two ids with equal entries
 * get two groups, which changes no output). Groups are numbered in order of first appearance, as
 * query_groups numbers them. */
size_t query_groups_by_id(const size_t *ids, size_t rows, QueryGroups *g);

/* Moves each group's first query's entries to position g of q (groups in order), so that q's
 * first n_groups queries are one per group. */
void query_groups_compact(KeyEntries *q, size_t n_groups, const QueryGroups *g);

#endif
