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

bool selector_at_most_one(Plan *p, const IrNode *sel) {
    const PosTable *t = p->info[sel->id].pos;
    if (t && t->at_most_one) return true;
    switch (sel->kind) {
    case IR_SELECT: return sel->u.select.cmp == IR_CMP_EQ && sel->u.select.keys->kind == IR_INDICES;
    case IR_SELECT_AND:
        return selector_at_most_one(p, sel->u.combine.lhs) || selector_at_most_one(p, sel->u.combine.rhs);
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

/* Truth of a selector on the diagonal (key position = query position), in three values:
 * 0 false, 1 true, 2 unknown. A comparison of an s-op with itself is known there. */
static int on_diagonal(const IrNode *sel) {
    switch (sel->kind) {
    case IR_SELECT:
        if (sel->u.select.keys != sel->u.select.queries) return 2;
        return sel->u.select.cmp == IR_CMP_EQ || sel->u.select.cmp == IR_CMP_LE || sel->u.select.cmp == IR_CMP_GE;
    case IR_SELECT_NOT: {
        int a = on_diagonal(sel->u.combine.lhs);
        return a == 2 ? 2 : !a;
    }
    case IR_SELECT_AND: case IR_SELECT_OR: {
        int a = on_diagonal(sel->u.combine.lhs), b = on_diagonal(sel->u.combine.rhs);
        if (sel->kind == IR_SELECT_AND) return (a == 0 || b == 0) ? 0 : (a == 1 && b == 1) ? 1 : 2;
        return (a == 1 || b == 1) ? 1 : (a == 0 && b == 0) ? 0 : 2;
    }
    default: return 2;
    }
}

/* Whether s-op q is an integer in [0, length) on every input: an index, a total affine form of
 * length and indices, or the width of a selector that never selects the query's own position
 * (the stable sort's target position). */
static bool index_valued(Plan *p, const IrNode *q) {
    if (affine_total(p->info[q->id].affine, p->max_len)) return true;
    const PosTable *t = p->info[q->id].pos;
    if (t && t->val && !t->any_fail) { /* its table says so */
        for (size_t n = 1; n <= p->max_len; n++)
            for (size_t i = 0; i < n; i++) {
                Value v = t->val[pos_at(n, i)];
                if (!value_is_number(v)) return false;
                double x = value_as_double(v);
                if (x != floor(x) || x < 0 || x >= (double)n) return false;
            }
        return true;
    }
    return q->kind == IR_SELECTOR_WIDTH && on_diagonal(q->u.width.selector) == 0;
}

IndexMatch selector_index_match(Plan *p, const IrNode *sel, bool for_width) {
    if (for_width || sel->kind != IR_SELECT || sel->u.select.cmp != IR_CMP_EQ || sel->u.select.keys->kind != IR_INDICES)
        return IM_NONE;
    const IrNode *q = sel->u.select.queries;
    if (index_valued(p, q)) return IM_TOTAL;
    const PosTable *t = p->info[q->id].pos;
    return t && t->val && !t->any_fail ? IM_POSITIONAL : IM_NONE;
}

static bool is_index_match(Plan *p, const IrNode *sel, bool for_width) {
    return selector_index_match(p, sel, for_width) == IM_TOTAL;
}

/* Merges one side of a comparison into the side of a subtree: the same s-op, or a constant
 * (which reads nothing) on either. */
static bool merge_side(const IrNode **side, const IrNode *x) {
    if (!*side || ((*side)->kind == IR_CONST && x->kind != IR_CONST)) {
        *side = x;
        return true;
    }
    return *side == x || x->kind == IR_CONST;
}

/* The (keys, queries) pair of s-ops every comparison in a subtree reads, constants aside
 * (select(r, 2, ==) or select(r, 6, ==) reads only r: a key-only table), or false if mixed.
 * A side that reads only constants is one of them (its value is taken per comparison). */
static bool single_pair(const IrNode *sel, const IrNode **keys, const IrNode **queries) {
    if (sel->kind == IR_SELECT) return merge_side(keys, sel->u.select.keys) && merge_side(queries, sel->u.select.queries);
    if (!single_pair(sel->u.combine.lhs, keys, queries)) return false;
    return !sel->u.combine.rhs || single_pair(sel->u.combine.rhs, keys, queries);
}


void selector_want(Plan *p, const IrNode *sel, bool for_width) {
    if (is_index_match(p, sel, for_width)) { /* the query is read numerically */
        p->info[sel->u.select.queries->id].want_num = true;
        return;
    }
    if (selector_index_match(p, sel, for_width) == IM_POSITIONAL) { /* the target's features */
        p->info[sel->u.select.queries->id].want_target = true;
        p->info[p->indices->id].needed = p->info[p->indices->id].want_cat = true;
        p->info[p->length->id].needed = true;
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

/* Truth of a single-pair selector subtree for one key and one query value (a comparison with
 * a constant side reads the constant). */
static bool eval_formula(const IrNode *sel, Value k, Value q, bool *ok) {
    switch (sel->kind) {
    case IR_SELECT: {
        char msg[160];
        if (sel->u.select.keys->kind == IR_CONST) k = sel->u.select.keys->u.constant;
        if (sel->u.select.queries->kind == IR_CONST) q = sel->u.select.queries->u.constant;
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
    if ((double)nk * (double)nq > CG_MAX_GRID * 16.0) {
        diag_error(p->diags, conj->loc, "this select compares %zu key values with %zu query values, a table too large "
                   "to build (lower --max-len or --vocab)", nk, nq);
        return false;
    }
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

/* ---- terms: inclusion-exclusion over `or` and `not` ---- */

typedef struct TermList {
    SelTerm *items;
    size_t n, cap;
    bool overflow; /* the expansion grew past MAX_RAW_TERMS */
} TermList;

enum { MAX_RAW_TERMS = 256 };

static void push_term(Plan *p, TermList *l, double coef, const IrNode **conj, size_t n_conj) {
    if (l->n >= MAX_RAW_TERMS) {
        l->overflow = true;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        l->items = arena_grow(p->arena, l->items, l->n, cap, sizeof(SelTerm));
        l->cap = cap;
    }
    const IrNode **c = ARENA_ARRAY(p->arena, const IrNode *, n_conj ? n_conj : 1);
    size_t k = 0;
    for (size_t i = 0; i < n_conj; i++) { /* a set: sorted by id, no repeats */
        size_t j = k;
        while (j > 0 && c[j - 1]->id > conj[i]->id) j--;
        if (j > 0 && c[j - 1] == conj[i]) continue;
        memmove(c + j + 1, c + j, (k - j) * sizeof *c);
        c[j] = conj[i];
        k++;
    }
    l->items[l->n++] = (SelTerm){coef, c, k};
}

static void product(Plan *p, const TermList *a, const TermList *b, double sign, TermList *out) {
    out->overflow |= a->overflow || b->overflow;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) {
            size_t n = a->items[i].n_conj + b->items[j].n_conj;
            const IrNode **c = ARENA_ARRAY(p->arena, const IrNode *, n ? n : 1);
            memcpy(c, a->items[i].conj, a->items[i].n_conj * sizeof *c);
            memcpy(c + a->items[i].n_conj, b->items[j].conj, b->items[j].n_conj * sizeof *c);
            push_term(p, out, sign * a->items[i].coef * b->items[j].coef, c, n);
        }
}

/* Expands a selector into a signed sum of terms, by 1[X or Y] = 1[X] + 1[Y] - 1[X]1[Y],
 * 1[not X] = 1 - 1[X] and 1[X and Y] = 1[X]1[Y]. */
static void expand(Plan *p, const IrNode *s, TermList *out) {
    const IrNode *keys = NULL, *queries = NULL;
    if (single_pair(s, &keys, &queries)) {
        push_term(p, out, 1, &s, 1);
        return;
    }
    TermList a = {0}, b = {0};
    expand(p, s->u.combine.lhs, &a);
    if (s->kind == IR_SELECT_NOT) {
        push_term(p, out, 1, NULL, 0);
        for (size_t i = 0; i < a.n; i++) push_term(p, out, -a.items[i].coef, a.items[i].conj, a.items[i].n_conj);
        out->overflow |= a.overflow;
        return;
    }
    expand(p, s->u.combine.rhs, &b);
    if (s->kind == IR_SELECT_AND) {
        product(p, &a, &b, 1, out);
        return;
    }
    for (size_t i = 0; i < a.n; i++) push_term(p, out, a.items[i].coef, a.items[i].conj, a.items[i].n_conj);
    for (size_t i = 0; i < b.n; i++) push_term(p, out, b.items[i].coef, b.items[i].conj, b.items[i].n_conj);
    product(p, &a, &b, -1, out);
}

/* Whether no (key, query) pair satisfies every conjunct of a term that shares their pair. */
static bool term_empty(Plan *p, const SelTerm *t) {
    for (size_t i = 0; i < t->n_conj; i++) {
        const IrNode *ki = NULL, *qi = NULL;
        single_pair(t->conj[i], &ki, &qi);
        const ValueSet *K = &p->info[ki->id].vs, *Q = &p->info[qi->id].vs;
        if (K->unbounded || Q->unbounded || (double)K->n * (double)Q->n > CG_MAX_GRID) continue;
        bool any = false;
        for (size_t a = 0; a < K->n && !any; a++)
            for (size_t b = 0; b < Q->n && !any; b++) {
                bool ok = true, all = true;
                for (size_t j = 0; j < t->n_conj && all; j++) {
                    const IrNode *kj = NULL, *qj = NULL;
                    single_pair(t->conj[j], &kj, &qj);
                    if (kj == ki && qj == qi) all = eval_formula(t->conj[j], K->vals[a], Q->vals[b], &ok);
                }
                any = all || !ok; /* an incomparable pair is not "never selected": lowering reports it */
            }
        if (!any) return true;
    }
    return false;
}

bool selector_terms(Plan *p, const IrNode *sel, SelTerm **terms, size_t *n) {
    TermList raw = {0}, out = {0};
    expand(p, sel, &raw);
    if (raw.overflow) {
        diag_error(p->diags, sel->loc, "this selector expands into more than %d terms", MAX_RAW_TERMS);
        return false;
    }
    for (size_t i = 0; i < raw.n; i++) { /* merge equal terms */
        SelTerm *t = &raw.items[i];
        bool merged = false;
        for (size_t j = 0; j < out.n && !merged; j++) {
            SelTerm *u = &out.items[j];
            if (u->n_conj != t->n_conj || memcmp(u->conj, t->conj, t->n_conj * sizeof *t->conj)) continue;
            u->coef += t->coef;
            merged = true;
        }
        if (!merged) push_term(p, &out, t->coef, t->conj, t->n_conj);
    }
    size_t k = 0;
    for (size_t i = 0; i < out.n; i++)
        if (out.items[i].coef != 0 && !term_empty(p, &out.items[i])) out.items[k++] = out.items[i];
    *terms = out.items;
    *n = k;
    return true;
}

bool selector_lower_term(Plan *p, const SelTerm *t, bool for_width, ScoreColumn **cols_out, size_t *n_out,
                         double *bos_level, int *time) {
    *time = 0;
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
        single_pair(t->conj[c], &keys, &queries);
        size_t nk = p->info[keys->id].vs.n, nq = p->info[queries->id].vs.n;
        cap += nk < nq ? nk : nq;
    }
    ScoreColumn *cols = ARENA_ARRAY(p->arena, ScoreColumn, cap ? cap : 1);
    size_t n = 0;
    for (size_t c = 0; c < t->n_conj; c++) {
        const IrNode *keys = NULL, *queries = NULL;
        single_pair(t->conj[c], &keys, &queries);
        if (!table_columns(p, t->conj[c], keys, queries, cols, &n, time)) return false;
    }
    double m = (double)t->n_conj;
    *cols_out = cols;
    *n_out = n;
    *bos_level = for_width ? m : m - 0.5;
    return true;
}

bool selector_lower(Plan *p, const IrNode *sel, ScoreColumn **cols_out, size_t *n_out, double *bos_level, LinView *bos_q,
                    int *time) {
    *time = 0;
    *bos_q = lv_empty();
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
    if (is_index_match(p, sel, false) && !(p->info[sel->u.select.queries->id].has_cat)) {
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
    if (n == 1 && terms[0].coef == 1) return selector_lower_term(p, &terms[0], false, cols_out, n_out, bos_level, time);
    if (n == 0) { /* provably never selects: every query gets the default */
        *cols_out = NULL;
        *n_out = 0;
        *bos_level = 0.5;
        return true;
    }
    return joint_columns(p, sel, cols_out, n_out, bos_level, time);
}

bool selector_needs_joint(Plan *p, const IrNode *sel) {
    if (selector_index_match(p, sel, false) != IM_NONE) return false;
    SelTerm *terms;
    size_t n;
    if (!selector_terms(p, sel, &terms, &n)) return false;
    return n > 1 || (n == 1 && terms[0].coef != 1);
}
