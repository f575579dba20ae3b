/* runtime/write_plan.h: which dims are fresh (a batch does not zero them; their first writer
 * stores them) on a model built to hold each case, and each writer's plan lists them first. */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/write_plan.h"
#include "tests/check_main.h"
#include "tests/runtime_fixtures.h"

/* Residual: 0,1 tokens | 2 BOS | 3..6 positions 0..3 | 7..14 written by the layers:
 *   layer 0 head 0 writes 7, 8; head 1 reads 9 and writes 8 (after head 0), 10;
 *   layer 0 MLP reads 7 and 11, writes 11 and 12, and only its bias b2 writes 13;
 *   a check after layer 0 reads 12 and 14;
 *   layer 1 head 0 writes 9 and 14; layer 1 MLP writes 6 (an embedding dim) and 13.
 * Fresh: 7, 8, 10 (heads of layer 0), 12 (its MLP, before the check reads it). The embedding's
 * alone: 0..5. Zeroed: 6 (the embedding's and layer 1's), 9 (read before layer 1 writes it), 11
 * (the MLP reads it before it writes it), 13 (first written by a bias alone), 14 (a check reads it
 * before layer 1 writes it). */
static void fx_writers(Model *m) {
    m->d_model = 15;
    m->max_len = 3;
    m->n_vocab = 2;
    m->token_embed = model_matrix(m, 3, 15);
    AT(m->token_embed, 0, 0) = 1;
    AT(m->token_embed, 1, 1) = 1;
    AT(m->token_embed, 2, 2) = 1;
    m->pos_embed = model_matrix(m, 4, 15);
    for (size_t p = 0; p < 4; p++) AT(m->pos_embed, p, 3 + p) = 1;
    size_t heads[2] = {2, 1}, hidden[2] = {2, 1};
    fx_layers(m, 2, heads, hidden);
    ModelHead *h0 = &m->layers[0].heads[0], *h1 = &m->layers[0].heads[1], *h2 = &m->layers[1].heads[0];
    fx_head(m, h0, 1, 1, false, "h0");
    fx_head(m, h1, 1, 1, false, "h1");
    fx_head(m, h2, 1, 1, false, "h2");
    AT(h0->wq, 3, 0) = 1, AT(h0->wk, 2, 0) = 1, AT(h0->wv, 0, 0) = 1;
    AT(h0->wo, 0, 7) = 1, AT(h0->wo, 0, 8) = 1;
    AT(h1->wq, 9, 0) = 1, AT(h1->wk, 2, 0) = 1, AT(h1->wv, 1, 0) = 1;
    AT(h1->wo, 0, 8) = 1, AT(h1->wo, 0, 10) = 1;
    ModelMlp *f0 = &m->layers[0].mlp, *f1 = &m->layers[1].mlp;
    AT(f0->w1, 7, 0) = 1, AT(f0->w1, 11, 1) = 1;
    AT(f0->w2, 0, 11) = 1, AT(f0->w2, 1, 12) = 1;
    f0->b2[13] = 1;
    size_t dims[2] = {12, 14};
    double coefs[2] = {1, 1}, thr[1] = {0.5};
    fx_margin(m, 0, "check", 2, dims, coefs, 1, thr, 0.1);
    AT(h2->wq, 10, 0) = 1, AT(h2->wk, 2, 0) = 1, AT(h2->wv, 12, 0) = 1;
    AT(h2->wo, 0, 9) = 1, AT(h2->wo, 0, 14) = 1;
    AT(f1->w1, 12, 0) = 1;
    AT(f1->w2, 0, 6) = 1, AT(f1->w2, 0, 13) = 1;
}

static void expect_plan(const WritePlan *p, size_t n_fresh, size_t n, const uint32_t *dims) {
    ck_assert_uint_eq(p->n_fresh, n_fresh);
    ck_assert_uint_eq(p->n, n);
    for (size_t i = 0; i < n; i++) ck_assert_uint_eq(p->dims[i], dims[i]);
}

START_TEST(test_fresh_dims) {
    Model m;
    model_init(&m);
    fx_writers(&m);
    Arena a;
    arena_init(&a);
    WritePlans p;
    write_plans(&a, &m, &p);
    const uint32_t zeroed[] = {6, 9, 11, 13, 14};
    ck_assert_uint_eq(p.n_zeroed, sizeof zeroed / sizeof *zeroed);
    for (size_t i = 0; i < p.n_zeroed; i++) ck_assert_uint_eq(p.zeroed[i], zeroed[i]);
    ck_assert_uint_eq(p.n_embedding_only, 6);
    for (size_t d = 0; d < 15; d++) {
        ck_assert(p.is_embedding_only[d] == (d < 6));
        if (d < 6) ck_assert_uint_eq(p.embedding_only[d], d);
    }
    expect_plan(&p.heads[0][0], 2, 2, (const uint32_t[]){7, 8});
    expect_plan(&p.heads[0][1], 1, 2, (const uint32_t[]){10, 8}); /* 8: stored by head 0, added to here */
    expect_plan(&p.mlps[0], 1, 2, (const uint32_t[]){12, 11});
    expect_plan(&p.heads[1][0], 0, 2, (const uint32_t[]){9, 14});
    expect_plan(&p.mlps[1], 0, 2, (const uint32_t[]){6, 13});
    arena_free(&a);
    model_free(&m);
}
END_TEST

/* A numeric token's value dim is the embedding's, though no embedding row stores it, and zeroed by
 * every batch (its entries are values, not rows of the embedding). */
START_TEST(test_numeric_token_dim) {
    Model m;
    model_init(&m);
    fx_product(&m);
    Arena a;
    arena_init(&a);
    WritePlans p;
    write_plans(&a, &m, &p);
    ck_assert_uint_eq(p.zeroed[0], 0); /* x */
    bool zeroed[16] = {false};
    for (size_t i = 0; i < p.n_zeroed; i++) zeroed[p.zeroed[i]] = true;
    ck_assert(zeroed[0] && !zeroed[1] && p.is_embedding_only[1] && !p.is_embedding_only[0]);
    ck_assert(!zeroed[2]);            /* y: the head writes it first, the MLP reads it after */
    ck_assert(!zeroed[3]);            /* r: the MLP's */
    ck_assert_uint_eq(p.mlps[0].n_fresh, 1);
    arena_free(&a);
    model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("write_plan");
    TCase *tc = tcase_create("write_plan");
    tcase_add_test(tc, test_fresh_dims);
    tcase_add_test(tc, test_numeric_token_dim);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
