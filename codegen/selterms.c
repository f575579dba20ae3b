/* Selector analysis: what a selector selects, before any head is planned. Which pair of s-ops
 * its comparisons read (constants aside), its truth for given values, whether it is an index
 * match (select(indices, q, ==) with q provably an index, or a positional q that may not be
 * one), and its expansion into a signed sum of and-terms by inclusion-exclusion (which widths
 * and joint selectors build on). */
#include <math.h>
#include <string.h>

#include "codegen/internal.h"

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
bool selector_total_index_match(Plan *p, const IrNode *sel, bool for_width) {
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
bool selector_single_pair(const IrNode *sel, const IrNode **keys, const IrNode **queries) {
    if (sel->kind == IR_SELECT) return merge_side(keys, sel->u.select.keys) && merge_side(queries, sel->u.select.queries);
    if (!selector_single_pair(sel->u.combine.lhs, keys, queries)) return false;
    return !sel->u.combine.rhs || selector_single_pair(sel->u.combine.rhs, keys, queries);
}
/* Truth of a single-pair selector subtree for one key and one query value (a comparison with
 * a constant side reads the constant). */
bool selector_formula(const IrNode *sel, Value k, Value q, bool *ok) {
    switch (sel->kind) {
    case IR_SELECT: {
        char msg[160];
        if (sel->u.select.keys->kind == IR_CONST) k = sel->u.select.keys->u.constant;
        if (sel->u.select.queries->kind == IR_CONST) q = sel->u.select.queries->u.constant;
        ValueResult r = ir_cmp_apply(sel->u.select.cmp, k, q, msg, sizeof msg);
        if (!r.ok) *ok = false;
        return r.ok && r.value.as.b;
    }
    case IR_SELECT_AND: return selector_formula(sel->u.combine.lhs, k, q, ok) & selector_formula(sel->u.combine.rhs, k, q, ok);
    case IR_SELECT_OR: return selector_formula(sel->u.combine.lhs, k, q, ok) | selector_formula(sel->u.combine.rhs, k, q, ok);
    case IR_SELECT_NOT: return !selector_formula(sel->u.combine.lhs, k, q, ok);
    default: return false;
    }
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
    if (selector_single_pair(s, &keys, &queries)) {
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
        selector_single_pair(t->conj[i], &ki, &qi);
        const ValueSet *K = &p->info[ki->id].vs, *Q = &p->info[qi->id].vs;
        if (K->unbounded || Q->unbounded || (double)K->n * (double)Q->n > CG_MAX_GRID) continue;
        bool any = false;
        for (size_t a = 0; a < K->n && !any; a++)
            for (size_t b = 0; b < Q->n && !any; b++) {
                bool ok = true, all = true;
                for (size_t j = 0; j < t->n_conj && all; j++) {
                    const IrNode *kj = NULL, *qj = NULL;
                    selector_single_pair(t->conj[j], &kj, &qj);
                    if (kj == ki && qj == qi) all = selector_formula(t->conj[j], K->vals[a], Q->vals[b], &ok);
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

bool selector_needs_joint(Plan *p, const IrNode *sel) {
    if (selector_index_match(p, sel, false) != IM_NONE) return false;
    SelTerm *terms;
    size_t n;
    if (!selector_terms(p, sel, &terms, &n)) return false;
    return n > 1 || (n == 1 && terms[0].coef != 1);
}

bool selector_width_needs_joint(Plan *p, const IrNode *sel) {
    SelTerm *terms;
    size_t n;
    return selector_terms(p, sel, &terms, &n) && n > CG_MAX_WIDTH_TERMS;
}

/* The distinct non-constant s-ops the comparisons of `sel` read on one side. */
void selector_side(const IrNode *sel, bool keys, Joint *j) {
    if (sel->kind != IR_SELECT) {
        selector_side(sel->u.combine.lhs, keys, j);
        if (sel->u.combine.rhs) selector_side(sel->u.combine.rhs, keys, j);
        return;
    }
    const IrNode *x = keys ? sel->u.select.keys : sel->u.select.queries;
    if (x->kind == IR_CONST) return;
    for (size_t i = 0; i < j->n_members && i < CG_MAX_JOINT; i++) /* past that, only counted */
        if (j->members[i] == x) return;
    if (j->n_members < CG_MAX_JOINT) j->members[j->n_members] = x;
    j->n_members++;
}
