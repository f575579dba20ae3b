/* runtime/panel_view.h: a view's gathers from the embedding's lists give kernel_gather_keys' entries
 * (dims, values, counts) bit for bit, and the plan lists what it should. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels.h"
#include "runtime/matrix.h"
#include "runtime/panel_view.h"
#include "support/arena.h"
#include "tests/check_main.h"

enum { V = 5, P = 70, EXTRA = 4, D = V + 1 + P + EXTRA, LD = 3 * P + 8 };

/* Random embeddings: token t (row V is BOS) holds dim t and a random one of the last EXTRA,
 * position p dim V+1+p; values with fractions, tiny ones, and the occasional -0.0 or stored zero
 * (the embedding's sum makes them +0.0: no entry). F stacks sequences of 23 rows as the runtime's
 * embedding writes them (token's + position's). */
static void embed(MatrixStore **list, Matrix *tok, Matrix *pos, double *F, size_t *ids, size_t *pos_of, size_t rows) {
    *tok = matrix_new(list, V + 1, D);
    *pos = matrix_new(list, P, D);
    for (size_t t = 0; t <= V; t++) {
        matrix_set(tok, t, t, t % 3 ? 1.0 : 0.75);
        matrix_set(tok, t, V + 1 + P + (size_t)rand() % EXTRA, rand() % 5 ? (rand() % 2 ? 1.0 / 3.0 : 1e-20) : -0.0);
    }
    for (size_t p = 0; p < P; p++) matrix_set(pos, p, V + 1 + p, p % 7 == 0 ? 0.0 : p % 5 == 0 ? 1e-20 : 1.0);
    double row[D];
    for (size_t r = 0; r < rows; r++) {
        size_t seq_row = r % 23; /* three sequences of 23 rows, then a partial one */
        ids[r] = seq_row == 0 ? V : (size_t)rand() % V;
        pos_of[r] = seq_row;
        double trow[D], prow[D];
        matrix_row_dense(tok, ids[r], trow);
        matrix_row_dense(pos, pos_of[r], prow);
        for (size_t d = 0; d < D; d++) row[d] = trow[d] + prow[d];
        for (size_t d = 0; d < D; d++) F[d * LD + r] = row[d];
    }
}

static void expect_same(const KeyEntries *a, const KeyEntries *b, size_t rows) {
    for (size_t k = 0; k < rows; k++) {
        ck_assert_uint_eq(a->count[k], b->count[k]);
        ck_assert(memcmp(a->dim + k * a->stride, b->dim + k * b->stride, a->count[k] * sizeof *a->dim) == 0);
        ck_assert(memcmp(a->val + k * a->stride, b->val + k * b->stride, a->count[k] * sizeof *a->val) == 0);
    }
}

START_TEST(test_listed_gather) {
    srand(21);
    enum { DK = P + 8, ROWS = 3 * 23 + 11 };
    static double F[D * LD], panel[DK * LD], val_a[ROWS * DK], val_b[ROWS * DK];
    static uint32_t dim_a[ROWS * DK], dim_b[ROWS * DK], count_a[ROWS], count_b[ROWS];
    size_t ids[ROWS], pos_of[ROWS];
    for (int round = 0; round < 20; round++) {
        MatrixStore *list = NULL;
        Arena arena;
        arena_init(&arena);
        Matrix tok, pos;
        embed(&list, &tok, &pos, F, ids, pos_of, ROWS);
        bool by_one[D];
        for (size_t d = 0; d < D; d++) by_one[d] = true;
        by_one[D - 1] = false; /* "a layer writes it": its copies are scanned */
        PanelEmbedding emb = {&tok, &pos, by_one};
        /* columns: copies of position dims (weights 1, -1, 0.5, and 1e-310, whose product with the
           positions holding 1e-20 underflows to zero: no entry) and of token dims, with a few
           computed columns and a copy of the written dim among them */
        Matrix W = matrix_new(&list, D, DK);
        for (size_t p = 0; p < P; p++) {
            double w = p % 4 == 0 ? 1.0 : p % 4 == 1 ? -1.0 : p % 4 == 2 ? 0.5 : 1e-310;
            matrix_set(&W, V + 1 + p, p, w);
        }
        for (size_t t = 0; t <= V && P + t < DK - 2; t++) matrix_set(&W, t, P + t, t % 2 ? -0.25 : 3.0);
        size_t computed = (size_t)rand() % P; /* a computed column in the middle */
        matrix_set(&W, 2, computed, 1.0 / 7.0);
        matrix_set(&W, V + 1 + P + (size_t)round % EXTRA, DK - 2, 0.1);
        matrix_set(&W, 0, DK - 2, 0.3);
        matrix_set(&W, D - 1, DK - 1, round % 2 ? 1.0 : 1e-310); /* scanned, some products underflow */
        PanelPlan plan;
        panel_plan(&arena, &W, &emb, &plan);
        ck_assert(plan.listed);
        ck_assert_uint_eq(plan.n_scans, 3); /* the middle one, DK - 2, and the written dim's copy */
        PanelView view;
        panel_view_init(&arena, DK, &view);
        panel_view_start(&view, &plan, &W, F, panel, LD, ROWS);
        if (round % 3 == 2) panel_view_lines(&view, &plan, &W, F, panel, LD, ROWS);
        KeyEntries a = {DK, count_a, dim_a, val_a}, b = {DK, count_b, dim_b, val_b};
        for (size_t o = 0; o < ROWS; o += 23) {
            size_t rows = ROWS - o < 23 ? ROWS - o : 23;
            panel_view_gather(&view, &plan, true, ids, pos_of, o, rows, &a);
            kernel_gather_keys(view.line, view.scale, o, rows, &b);
            expect_same(&a, &b, rows);
            panel_view_gather(&view, &plan, false, ids, pos_of, o, rows, &a); /* F not the embedding's: scanned */
            expect_same(&a, &b, rows);
        }
        matrix_free_all(&list);
        arena_free(&arena);
    }
}
END_TEST

/* A plan lists only where few lines are left to scan: not a matrix of computed columns, nor one
 * whose copies read dims a layer writes. */
START_TEST(test_listed_when) {
    MatrixStore *list = NULL;
    Arena arena;
    arena_init(&arena);
    Matrix tok = matrix_new(&list, V + 1, D), pos = matrix_new(&list, P, D);
    bool by_one[D];
    for (size_t d = 0; d < D; d++) by_one[d] = d < V + 1 + P;
    PanelEmbedding emb = {&tok, &pos, by_one};
    Matrix few = matrix_new(&list, D, 3), written = matrix_new(&list, D, 8);
    matrix_set(&few, 0, 0, 1.0), matrix_set(&few, 1, 1, 1.0), matrix_set(&few, 2, 1, 1.0);
    for (size_t c = 0; c < 8; c++) matrix_set(&written, V + 1 + P + c % EXTRA, c, 1.0);
    PanelPlan a, b, c;
    panel_plan(&arena, &few, &emb, &a);
    panel_plan(&arena, &written, &emb, &b);
    panel_plan(&arena, &few, NULL, &c);
    ck_assert(!a.listed && !b.listed && !c.listed);
    matrix_free_all(&list);
    arena_free(&arena);
}
END_TEST

/* A plan is token_only where every column copies a dim the token embedding alone holds (its
 * entries: the token id's list, whatever the position), and not where one column copies a
 * position's dim or is scanned. */
START_TEST(test_token_only) {
    srand(22);
    MatrixStore *list = NULL;
    Arena arena;
    arena_init(&arena);
    static double F[D * LD];
    size_t ids[LD], pos_of[LD];
    Matrix tok, pos;
    embed(&list, &tok, &pos, F, ids, pos_of, 3 * 23);
    bool by_one[D];
    for (size_t d = 0; d < D; d++) by_one[d] = d < V + 1 + P;
    PanelEmbedding emb = {&tok, &pos, by_one};
    Matrix tokens = matrix_new(&list, D, V + 1), with_pos = matrix_new(&list, D, V + 2),
           with_scan = matrix_new(&list, D, 2 * (V + 1) + 1);
    for (size_t t = 0; t <= V; t++) {
        matrix_set(&tokens, t, t, t % 2 ? 1.0 : -2.0);
        matrix_set(&with_pos, t, t, 1.0);
        matrix_set(&with_scan, t, t, 1.0), matrix_set(&with_scan, t, V + 1 + t, 0.5); /* enough to list */
    }
    matrix_set(&with_pos, V + 1 + 3, V + 1, 1.0);
    matrix_set(&with_scan, D - 1, 2 * (V + 1), 1.0); /* a dim a layer writes */
    PanelPlan a, b, c;
    panel_plan(&arena, &tokens, &emb, &a);
    panel_plan(&arena, &with_pos, &emb, &b);
    panel_plan(&arena, &with_scan, &emb, &c);
    ck_assert(a.listed && a.token_only);
    ck_assert(b.listed && !b.token_only);
    ck_assert(c.listed && !c.token_only);
    matrix_free_all(&list);
    arena_free(&arena);
}
END_TEST

int main(void) {
    Suite *s = suite_create("panel_view");
    TCase *tc = tcase_create("panel_view");
    tcase_add_test(tc, test_listed_gather);
    tcase_add_test(tc, test_listed_when);
    tcase_add_test(tc, test_token_only);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
