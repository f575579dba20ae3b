/* Sparse linear functionals of a residual row (see internal.h). */
#include <math.h>
#include <stdlib.h>

#include "codegen/internal.h"

LinView lv_empty(void) { return (LinView){NULL, 0}; }

LinView lv_unit(Arena *a, uint32_t dim, double coef) {
    if (coef == 0.0) return lv_empty();
    Term *t = ARENA_NEW(a, Term);
    t->dim = dim;
    t->coef = coef;
    return (LinView){t, 1};
}

static int term_cmp(const void *x, const void *y) {
    const Term *a = x, *b = y;
    return (a->dim > b->dim) - (a->dim < b->dim);
}

LinView lv_combine(Arena *a, double alpha, LinView x, double beta, LinView y) {
    size_t n = x.n + y.n;
    Term *t = ARENA_ARRAY(a, Term, n ? n : 1);
    size_t k = 0;
    for (size_t i = 0; i < x.n; i++) t[k++] = (Term){x.terms[i].dim, alpha * x.terms[i].coef};
    for (size_t i = 0; i < y.n; i++) t[k++] = (Term){y.terms[i].dim, beta * y.terms[i].coef};
    qsort(t, k, sizeof *t, term_cmp);
    size_t out = 0;
    for (size_t i = 0; i < k;) {
        Term s = t[i++];
        while (i < k && t[i].dim == s.dim) s.coef += t[i++].coef;
        if (s.coef != 0.0) t[out++] = s;
    }
    return (LinView){t, out};
}

void lvb_add(LvBuild *b, double coef, LinView v) {
    if (coef == 0.0 || v.n == 0) return;
    if (b->n + v.n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        while (cap < b->n + v.n) cap *= 2;
        Term *t = realloc(b->t, cap * sizeof *t);
        if (!t) abort(); /* out of memory: nothing sensible to do in a compiler pass */
        b->t = t;
        b->cap = cap;
    }
    for (size_t i = 0; i < v.n; i++) b->t[b->n++] = (Term){v.terms[i].dim, coef * v.terms[i].coef};
}

LinView lvb_done(Arena *a, LvBuild *b) {
    LinView v = lv_combine(a, 1, (LinView){b->t, b->n}, 0, lv_empty());
    free(b->t);
    *b = (LvBuild){NULL, 0, 0};
    return v;
}

double lv_eval(LinView v, const double *row) {
    double s = 0.0;
    for (size_t i = 0; i < v.n; i++) s += v.terms[i].coef * row[v.terms[i].dim];
    return s;
}
