/* Selectors -> attention scores.
 *
 * A score is a sum of bilinear columns q(r_query) * k(r_key). Three lowerings, exact by
 * construction:
 *   table        a selector over one (keys, queries) pair of categorical s-ops, any boolean
 *                combination of comparisons: score = M[query value][key value] in {0, 1};
 *   sum          an `and` of such selectors over different pairs: scores add, and only keys
 *                that satisfy every conjunct reach the maximum m;
 *   index match  select(indices, q, ==) where q is an integer affine form of length and
 *                indices that provably lies in [0, length): score = 2 q i - i^2, maximal
 *                exactly at i = q, so q needs no categorical encoding (and no MLP layer).
 * Any other combination (an `or`/`not` across different pairs) is reported as unsupported. */
#include <math.h>
#include <string.h>

#include "codegen/internal.h"

bool selector_at_most_one(const IrNode *sel) {
    switch (sel->kind) {
    case IR_SELECT: return sel->u.select.cmp == IR_CMP_EQ && sel->u.select.keys->kind == IR_INDICES;
    case IR_SELECT_AND:
        return selector_at_most_one(sel->u.combine.lhs) || selector_at_most_one(sel->u.combine.rhs);
    default: return false;
    }
}

/* Whether affine form x lies in [0, n-1] with integer values for every 1 <= n <= N, 0 <= i < n.
 * A linear form on that triangle takes its extremes at the vertices. */
static bool affine_total(Affine x, size_t max_len) {
    if (!x.valid || x.a != floor(x.a) || x.b != floor(x.b) || x.c != floor(x.c)) return false;
    double N = (double)max_len;
    const double vn[3] = {1, N, N}, vi[3] = {0, 0, N - 1};
    for (int v = 0; v < 3; v++) {
        double val = x.a * vn[v] + x.b * vi[v] + x.c;
        if (val < 0 || val > vn[v] - 1) return false;
    }
    return true;
}

static bool is_index_match(Plan *p, const IrNode *sel, bool for_width) {
    return !for_width && sel->kind == IR_SELECT && sel->u.select.cmp == IR_CMP_EQ &&
           sel->u.select.keys->kind == IR_INDICES &&
           affine_total(p->info[sel->u.select.queries->id].affine, p->max_len);
}

/* The (keys, queries) pair shared by every comparison in a subtree, or false if mixed. */
static bool single_pair(const IrNode *sel, const IrNode **keys, const IrNode **queries) {
    if (sel->kind == IR_SELECT) {
        if (*keys && (*keys != sel->u.select.keys || *queries != sel->u.select.queries)) return false;
        *keys = sel->u.select.keys;
        *queries = sel->u.select.queries;
        return true;
    }
    if (!single_pair(sel->u.combine.lhs, keys, queries)) return false;
    return !sel->u.combine.rhs || single_pair(sel->u.combine.rhs, keys, queries);
}

/* Splits a tree of `and`s into conjuncts. */
static size_t conjuncts(const IrNode *sel, const IrNode **out, size_t cap, size_t n) {
    if (sel->kind == IR_SELECT_AND) {
        n = conjuncts(sel->u.combine.lhs, out, cap, n);
        return conjuncts(sel->u.combine.rhs, out, cap, n);
    }
    if (n < cap) out[n] = sel;
    return n + 1;
}

enum { MAX_CONJUNCTS = 32 };

void selector_want(Plan *p, const IrNode *sel, bool for_width) {
    if (is_index_match(p, sel, for_width)) { /* the query is read numerically */
        p->info[sel->u.select.queries->id].want_num = true;
        return;
    }
    if (sel->kind == IR_SELECT) {
        p->info[sel->u.select.keys->id].want_cat = true;
        p->info[sel->u.select.queries->id].want_cat = true;
        return;
    }
    selector_want(p, sel->u.combine.lhs, for_width);
    if (sel->u.combine.rhs) selector_want(p, sel->u.combine.rhs, for_width);
}

/* Truth of a single-pair selector subtree for one key and one query value. */
static bool eval_formula(const IrNode *sel, Value k, Value q, bool *ok) {
    switch (sel->kind) {
    case IR_SELECT: {
        char msg[160];
        ValueResult r = ir_cmp_apply(sel->u.select.cmp, k, q, msg, sizeof msg);
        if (!r.ok) *ok = false;
        return r.ok && r.value.as.b;
    }
    case IR_SELECT_AND: return eval_formula(sel->u.combine.lhs, k, q, ok) & eval_formula(sel->u.combine.rhs, k, q, ok);
    case IR_SELECT_OR: return eval_formula(sel->u.combine.lhs, k, q, ok) | eval_formula(sel->u.combine.rhs, k, q, ok);
    case IR_SELECT_NOT: return !eval_formula(sel->u.combine.lhs, k, q, ok);
    default: return false;
    }
}

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
    bool ok = true;
    bool *M = ARENA_ARRAY(p->arena, bool, nk * nq + 1);
    for (size_t qi = 0; qi < nq; qi++)
        for (size_t ki = 0; ki < nk; ki++) M[qi * nk + ki] = eval_formula(conj, K->vs.vals[ki], Q->vs.vals[qi], &ok);
    if (!ok) {
        diag_error(p->diags, conj->loc, "select compares values that cannot be ordered (a string with a number)");
        return false;
    }
    if (nk <= nq) { /* one column per key value */
        for (size_t ki = 0; ki < nk; ki++) {
            LinView q = lv_empty();
            for (size_t qi = 0; qi < nq; qi++)
                if (M[qi * nk + ki]) q = lv_combine(p->arena, 1, q, 1, Q->cat[qi]);
            if (q.n == 0 || K->cat[ki].n == 0) continue;
            cols[(*n)++] = (ScoreColumn){q, K->cat[ki]};
        }
    } else { /* one column per query value */
        for (size_t qi = 0; qi < nq; qi++) {
            LinView k = lv_empty();
            for (size_t ki = 0; ki < nk; ki++)
                if (M[qi * nk + ki]) k = lv_combine(p->arena, 1, k, 1, K->cat[ki]);
            if (k.n == 0 || Q->cat[qi].n == 0) continue;
            cols[(*n)++] = (ScoreColumn){Q->cat[qi], k};
        }
    }
    if (K->time > *time) *time = K->time;
    if (Q->time > *time) *time = Q->time;
    return true;
}

bool selector_lower(Plan *p, const IrNode *sel, bool for_width, ScoreColumn **cols_out, size_t *n_out,
                    double *selected_level, double *bos_level, int *time) {
    *time = 0;
    if (is_index_match(p, sel, for_width) && !(p->info[sel->u.select.queries->id].has_cat)) {
        SopInfo *Q = &p->info[sel->u.select.queries->id];
        ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, 2);
        LinView idx = lv_empty(), idx2 = lv_empty();
        for (size_t i = 0; i < p->max_len; i++) {
            idx = lv_combine(p->arena, 1, idx, (double)i, lv_unit(p->arena, p->pos_dim + (uint32_t)i, 1));
            idx2 = lv_combine(p->arena, 1, idx2, (double)(i * i), lv_unit(p->arena, p->pos_dim + (uint32_t)i, 1));
        }
        cols[0] = (ScoreColumn){lv_combine(p->arena, 2, Q->num, 0, lv_empty()), idx};
        cols[1] = (ScoreColumn){lv_unit(p->arena, DIM_ONE, -1), idx2};
        *cols_out = cols;
        *n_out = 2;
        *selected_level = NAN; /* the maximum depends on the query; BOS is always below it */
        *bos_level = -1;
        *time = Q->time;
        return true;
    }
    const IrNode *conj[MAX_CONJUNCTS];
    size_t m = conjuncts(sel, conj, MAX_CONJUNCTS, 0);
    if (m > MAX_CONJUNCTS) {
        diag_error(p->diags, sel->loc, "selector has more than %d conjuncts", MAX_CONJUNCTS);
        return false;
    }
    size_t cap = 0;
    for (size_t c = 0; c < m; c++) {
        const IrNode *keys = NULL, *queries = NULL;
        if (!single_pair(conj[c], &keys, &queries)) {
            diag_error(p->diags, conj[c]->loc,
                       "this selector combines comparisons of different s-ops with or/not; "
                       "the compiler supports and-combinations across s-ops and any combination "
                       "over one (keys, queries) pair");
            return false;
        }
        cap += p->info[keys->id].vs.n < p->info[queries->id].vs.n ? p->info[keys->id].vs.n
                                                                   : p->info[queries->id].vs.n;
    }
    ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, cap ? cap : 1);
    size_t n = 0;
    for (size_t c = 0; c < m; c++) {
        const IrNode *keys = NULL, *queries = NULL;
        single_pair(conj[c], &keys, &queries);
        if (!table_columns(p, conj[c], keys, queries, cols, &n, time)) return false;
    }
    *cols_out = cols;
    *n_out = n;
    *selected_level = (double)m;
    *bos_level = for_width ? (double)m : (double)m - 0.5;
    return true;
}
