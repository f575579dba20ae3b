/* Selectors -> attention scores.
 *
 * A score is a sum of bilinear columns q(r_query) * k(r_key). Five lowerings, exact by
 * construction:
 *   table        a selector over one (keys, queries) pair of categorical s-ops, any boolean
 *                combination of comparisons: score = M[query value][key value] in {0, 1};
 *   sum          an `and` of such selectors over different pairs: scores add, and only keys
 *                that satisfy every conjunct reach the maximum m;
 *   index match  select(indices, q, ==) where q is an integer affine form of length and
 *                indices that provably lies in [0, length): score = 2 q i - i^2, maximal
 *                exactly at i = q, so q needs no categorical encoding (and no MLP layer).
 *   numerical    select(K, Q, ==) between numbers with many values (numeq.c): a conjunct
 *                scored 1 where K == Q and <= 0 elsewhere through the numbers themselves,
 *                2 s q k - s h(k) + 1 - s g(q), in place of a table.
 *   joint        any other combination (an `or`/`not` across different pairs): the one-hot of
 *                each side's tuple of values (joint.c), score 1 where the selector holds.
 * A selector_width is a head per term of the selector's signed sum (selterms.c), at most
 * CG_MAX_WIDTH_TERMS of them, or else one joint head. */
#include <math.h>
#include <string.h>

#include "codegen/internal.h"

static bool need_cat(Plan *p, const IrNode *sop, const IrNode *sel) {
    SopInfo *info = &p->info[sop->id];
    if (info->has_cat) return true;
    char d[128];
    vs_describe(sop, d, sizeof d);
    diag_error(p->diags, sel->loc, "internal: %s has no categorical encoding for this select", d);
    return false;
}

/* Appends the columns of one single-pair conjunct. */
static bool table_columns(Plan *p, const IrNode *conj, const IrNode *keys, const IrNode *queries,
                          ScoreColumn *cols, size_t *n, int *time) {
    if (!need_cat(p, keys, conj) || !need_cat(p, queries, conj)) return false;
    SopInfo *K = &p->info[keys->id], *Q = &p->info[queries->id];
    size_t nk = K->vs.n, nq = Q->vs.n;
    if ((double)nk * (double)nq > CG_MAX_GRID * 16.0) {
        diag_error(p->diags, conj->loc, "this select compares %zu key values with %zu query values, a table too large "
                   "to build (lower --max-len or --vocab)", nk, nq);
        return false;
    }
    bool ok = true;
    bool *M = ARENA_ARRAY(p->arena, bool, nk * nq + 1);
    for (size_t qi = 0; qi < nq; qi++)
        for (size_t ki = 0; ki < nk; ki++) M[qi * nk + ki] = selector_formula(conj, K->vs.vals[ki], Q->vs.vals[qi], &ok);
    if (!ok) {
        diag_error(p->diags, conj->loc, "select compares values that cannot be ordered (a string with a number)");
        return false;
    }
    /* one column per key value where keys have fewer values; with as many (indices against
     * indices), one per query value: each query row then has one entry, and the scores, which
     * cost 2 x keys per entry of a query row, are n^2 a sequence instead of n^3 / 2 */
    if (nk < nq) { /* one column per key value */
        for (size_t ki = 0; ki < nk; ki++) {
            LvBuild b = {0};
            for (size_t qi = 0; qi < nq; qi++)
                if (M[qi * nk + ki]) lvb_add(&b, 1, Q->cat[qi]);
            LinView q = lvb_done(p->arena, &b);
            if (q.n == 0 || K->cat[ki].n == 0) continue;
            cols[(*n)++] = (ScoreColumn){q, K->cat[ki]};
        }
    } else { /* one column per query value */
        for (size_t qi = 0; qi < nq; qi++) {
            LvBuild b = {0};
            for (size_t ki = 0; ki < nk; ki++)
                if (M[qi * nk + ki]) lvb_add(&b, 1, K->cat[ki]);
            LinView k = lvb_done(p->arena, &b);
            if (k.n == 0 || Q->cat[qi].n == 0) continue;
            cols[(*n)++] = (ScoreColumn){Q->cat[qi], k};
        }
    }
    if (K->time > *time) *time = K->time;
    if (Q->time > *time) *time = Q->time;
    return true;
}

/* Whether conjunct `conj` compares positions, key before query (select(indices, indices, <)
 * or <=): a causal head's mask (keys after the query never score) reads it, and the scores only
 * need the diagonal (*strict) instead of a triangle of the index one-hots. */
static bool causal_conjunct(const Plan *p, const IrNode *conj, bool *strict) {
    if (p->plain_heads || conj->kind != IR_SELECT || conj->u.select.keys != p->indices || conj->u.select.queries != p->indices) return false;
    *strict = conj->u.select.cmp == IR_CMP_LT;
    return conj->u.select.cmp == IR_CMP_LT || conj->u.select.cmp == IR_CMP_LE;
}

/* The columns of a causal conjunct: 1 for every key the mask allows, 0 at the query's own
 * position when strict (-1 there: one column per position). */
static void causal_columns(Plan *p, bool strict, ScoreColumn *cols, size_t *n) {
    cols[(*n)++] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, 1), lv_unit(p->arena, DIM_ONE, 1)};
    const SopInfo *ix = &p->info[p->indices->id];
    for (size_t i = 0; strict && i < p->max_len; i++)
        cols[(*n)++] = (ScoreColumn){ix->cat[i], lv_combine(p->arena, -1, ix->cat[i], 0, lv_empty())};
}

bool selector_lower_term(Plan *p, const SelTerm *t, bool for_width, ScoreColumn **cols_out, size_t *n_out,
                         double *bos_level, int *time, bool *causal) {
    *time = 0;
    *causal = false;
    if (t->n_conj == 0) { /* the full selector: every key scores 1 */
        ScoreColumn *c = ARENA_NEW(p->arena, ScoreColumn);
        c->q = lv_unit(p->arena, DIM_ONE, 1);
        c->k = lv_unit(p->arena, DIM_ONE, 1);
        *cols_out = c;
        *n_out = 1;
        *bos_level = for_width ? 1 : 0.5;
        return true;
    }
    size_t cap = 0;
    for (size_t c = 0; c < t->n_conj; c++) {
        const IrNode *keys = NULL, *queries = NULL;
        selector_single_pair(t->conj[c], &keys, &queries);
        size_t nk = p->info[keys->id].vs.n, nq = p->info[queries->id].vs.n;
        cap += numeq_of(p, t->conj[c]) ? NUMEQ_MAX_COLUMNS : (nk < nq ? nk : nq) + 1;
    }
    ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, cap ? cap : 1);
    size_t n = 0;
    for (size_t c = 0; c < t->n_conj; c++) {
        const IrNode *keys = NULL, *queries = NULL;
        selector_single_pair(t->conj[c], &keys, &queries);
        bool strict;
        if (causal_conjunct(p, t->conj[c], &strict)) {
            causal_columns(p, strict, cols, &n);
            *causal = true;
            continue;
        }
        bool ok = numeq_of(p, t->conj[c]) ? numeq_columns(p, t->conj[c], cols, &n, time)
                                          : table_columns(p, t->conj[c], keys, queries, cols, &n, time);
        if (!ok) return false;
    }
    double m = (double)t->n_conj;
    *cols_out = cols;
    *n_out = n;
    *bos_level = for_width ? m : m - 0.5;
    return true;
}

bool selector_lower(Plan *p, const IrNode *sel, ScoreColumn **cols_out, size_t *n_out, double *bos_level, LinView *bos_q,
                    int *time, bool *causal) {
    *time = 0;
    *bos_q = lv_empty();
    *causal = false;
    if (selector_index_match(p, sel, false) == IM_POSITIONAL) {
        /* keys score 2 t j - j^2 (t^2 at j = t, at most t^2 - 1 elsewhere); BOS scores
         * t^2 - 1/2 where t is a valid index and 1/2 (above every key's -j^2, t = 0) where not */
        SopInfo *Q = &p->info[sel->u.select.queries->id];
        if (!Q->has_target) return plan_error(p, Q->node, "has no index-target features (internal compiler error)");
        ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, 2);
        cols[0] = (ScoreColumn){lv_combine(p->arena, 2, Q->target, 0, lv_empty()), plan_index_power(p, 1)};
        cols[1] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, -1), plan_index_power(p, 2)};
        *cols_out = cols;
        *n_out = 2;
        *bos_level = 0;
        *bos_q = Q->target_bos;
        *time = Q->target_time;
        return true;
    }
    if (selector_total_index_match(p, sel, false) && !(p->info[sel->u.select.queries->id].has_cat)) {
        SopInfo *Q = &p->info[sel->u.select.queries->id];
        ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, 2);
        cols[0] = (ScoreColumn){lv_combine(p->arena, 2, Q->num, 0, lv_empty()), plan_index_power(p, 1)};
        cols[1] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, -1), plan_index_power(p, 2)};
        *cols_out = cols;
        *n_out = 2;
        *bos_level = -1; /* the maximum, q^2, is >= 0 at the selected key; BOS stays below */
        *time = Q->time;
        return true;
    }
    SelTerm *terms;
    size_t n;
    if (!selector_terms(p, sel, &terms, &n)) return false;
    if (n == 1 && terms[0].coef == 1)
        return selector_lower_term(p, &terms[0], false, cols_out, n_out, bos_level, time, causal);
    if (n == 0) { /* provably never selects: every query gets the default */
        *cols_out = NULL;
        *n_out = 0;
        *bos_level = 0.5;
        return true;
    }
    return joint_columns(p, sel, cols_out, n_out, bos_level, time);
}

/* The heads of a width (internal.h, WidthHeads). */
bool plan_width_heads(Plan *p, const IrNode *node, const IrNode *selector, WidthHeads *w) {
    SelTerm full = {1, NULL, 0}, *terms = &full;
    size_t n_terms = 1;
    if (selector && !selector_terms(p, selector, &terms, &n_terms)) return false;
    int slot = 1;
    ScoreColumn *cols[CG_MAX_WIDTH_TERMS];
    size_t n_cols[CG_MAX_WIDTH_TERMS];
    double bos_level[CG_MAX_WIDTH_TERMS];
    bool causal[CG_MAX_WIDTH_TERMS] = {false};
    if (n_terms > CG_MAX_WIDTH_TERMS) { /* one head: selected keys score 1 through the joint one-hots, as BOS does */
        int t_sel;
        if (!joint_columns(p, selector, &cols[0], &n_cols[0], &bos_level[0], &t_sel)) return false;
        bos_level[0] = 1;
        if (next_slot(t_sel, true) > slot) slot = next_slot(t_sel, true);
        terms = &full;
        n_terms = 1;
    } else {
        for (size_t t = 0; t < n_terms; t++) {
            int t_sel;
            if (!selector_lower_term(p, &terms[t], true, &cols[t], &n_cols[t], &bos_level[t], &t_sel, &causal[t]))
                return false;
            if (next_slot(t_sel, true) > slot) slot = next_slot(t_sel, true);
        }
    }
    w->n_u = (uint32_t)n_terms;
    w->time = slot;
    w->u_lambda = selector ? width_bos_weight(p, node) : 1;
    for (size_t t = 0; t < n_terms; t++) {
        HeadOp *h = plan_new_head(p);
        h->tie_tol = 0.5; /* selected keys and BOS score m, the others at most m - 1 */
        h->cols = cols[t];
        h->n_cols = n_cols[t];
        h->bos_level = bos_level[t];
        h->bos_extra = w->u_lambda - 1;
        h->causal = causal[t];
        h->layer = slot_layer(slot);
        h->node = node;
        const char *of = node->kind == IR_AGGREGATE ? "keys" : "width";
        h->label = arena_printf(p->arena, "%s: %s%s", plan_node_name(p, node),
                                w->u_lambda > 1 ? arena_printf(p->arena, "%.0f/(%.0f+%s)", w->u_lambda, w->u_lambda, of)
                                                : arena_printf(p->arena, "1/(%s+1)", of),
                                n_terms > 1 ? arena_printf(p->arena, " term %zu", t + 1) : "");
        uint32_t u = plan_alloc_dims(p, 1, h->label, NULL);
        h->n_vals = 1;
        h->vals = ARENA_NEW(p->arena, LinView);
        h->vals[0] = lv_unit(p->arena, DIM_BOS, 1);
        h->bos_value = ARENA_NEW(p->arena, double);
        h->bos_value[0] = 1;
        h->out_dims = ARENA_NEW(p->arena, uint32_t);
        h->out_dims[0] = u;
        w->u_dims[t] = u;
        w->u_coef[t] = terms[t].coef;
    }
    return true;
}
