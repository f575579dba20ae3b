#include "runtime/write_plan.h"

#include <stdbool.h>
#include <stdlib.h>

/* The order of a batch's steps (runtime/forward.c): the embedding writes the residual first; then
 * layer l's heads read it at 4l + 1 and write it at 4l + 2, its MLP reads at 4l + 3 and writes at
 * 4l + 4, and the checks after the layer read at 4l + 5. */
#define NEVER SIZE_MAX
#define EMBEDDING 0
static size_t heads_read(size_t l) { return 4 * l + 1; }
static size_t heads_write(size_t l) { return 4 * l + 2; }
static size_t mlp_read(size_t l) { return 4 * l + 3; }
static size_t mlp_write(size_t l) { return 4 * l + 4; }
static size_t check_read(size_t l) { return 4 * l + 5; }

typedef struct DimTimes {
    size_t *read;      /* per dim: the first step that reads it (NEVER) */
    size_t *write;     /* per dim: the first step that writes it (NEVER) */
    bool *first_store; /* per dim: that first write stores whole lines (a product's column) */
    bool *by_layer;    /* per dim: a layer writes it */
} DimTimes;

static void note_read(DimTimes *t, size_t d, size_t at) {
    if (at < t->read[d]) t->read[d] = at;
}

static void note_write(DimTimes *t, size_t d, size_t at, bool store) {
    if (at != EMBEDDING) t->by_layer[d] = true;
    if (at < t->write[d]) t->write[d] = at, t->first_store[d] = store;
    else if (at == t->write[d]) t->first_store[d] = t->first_store[d] || store; /* W2 and b2 together */
}

/* Every dim a matrix (rows = residual dims) reads. */
static void note_matrix_reads(DimTimes *t, const Matrix *W, size_t at) {
    const MatrixColumn *cols = matrix_columns(W);
    for (size_t c = 0; cols && c < W->cols; c++)
        for (uint32_t k = 0; k < cols[c].n; k++) note_read(t, cols[c].row[k], at);
}

/* A writer's plan: the fresh dims not yet stored (unstored[d]) come first and are stored now; a
 * later writer of the same dim (another head of the layer) adds to them. */
static void plan_writer(Arena *a, const Matrix *W, bool *unstored, WritePlan *p) {
    p->dims = ARENA_ARRAY(a, uint32_t, W->cols ? W->cols : 1);
    p->n = p->n_fresh = 0;
    for (size_t c = 0; c < W->cols; c++)
        if (matrix_column(W, c).n && unstored[c]) p->dims[p->n++] = (uint32_t)c;
    p->n_fresh = p->n;
    for (size_t c = 0; c < W->cols; c++)
        if (matrix_column(W, c).n && !unstored[c]) p->dims[p->n++] = (uint32_t)c;
    for (size_t i = 0; i < p->n_fresh; i++) unstored[p->dims[i]] = false;
}

void write_plans(Arena *a, const Model *m, WritePlans *p) {
    size_t D = m->d_model, n = D ? D : 1;
    DimTimes t = {ARENA_ARRAY(a, size_t, n), ARENA_ARRAY(a, size_t, n), ARENA_ARRAY(a, bool, n),
                  ARENA_ARRAY(a, bool, n)};
    bool *fresh = ARENA_ARRAY(a, bool, n);
    for (size_t d = 0; d < D; d++) t.read[d] = t.write[d] = NEVER;
    for (size_t d = 0; d < D; d++) /* the embedding: before every step, and not a whole line */
        if (matrix_column(&m->token_embed, d).n || matrix_column(&m->pos_embed, d).n) note_write(&t, d, EMBEDDING, false);
    if (m->numeric_tokens && m->token_value_dim < D) note_write(&t, m->token_value_dim, EMBEDDING, false);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            note_matrix_reads(&t, &L->heads[h].wq, heads_read(l));
            note_matrix_reads(&t, &L->heads[h].wk, heads_read(l));
            note_matrix_reads(&t, &L->heads[h].wv, heads_read(l));
            for (size_t d = 0; d < D; d++)
                if (matrix_column(&L->heads[h].wo, d).n) note_write(&t, d, heads_write(l), true);
        }
        note_matrix_reads(&t, &L->mlp.w1, mlp_read(l));
        if (L->mlp.gated) note_matrix_reads(&t, &L->mlp.w3, mlp_read(l));
        for (size_t d = 0; d < D; d++) {
            if (matrix_column(&L->mlp.w2, d).n) note_write(&t, d, mlp_write(l), true);
            else if (L->mlp.b2[d] != 0.0) note_write(&t, d, mlp_write(l), false);
        }
    }
    for (size_t c = 0; c < m->n_checks; c++) {
        const ModelCheck *k = &m->checks[c];
        if (k->kind == MODEL_CHECK_MARGIN)
            for (size_t i = 0; i < m->margins[k->dim].n_terms; i++)
                note_read(&t, m->margins[k->dim].dims[i], check_read(k->after_layer));
        else
            for (size_t j = 0; j < k->count; j++) note_read(&t, k->dim + j, check_read(k->after_layer));
    }
    /* fresh[d], from here on: not stored yet (plan_writer) */
    p->zeroed = ARENA_ARRAY(a, uint32_t, n);
    p->embedding_only = ARENA_ARRAY(a, uint32_t, n);
    p->is_embedding_only = ARENA_ARRAY(a, bool, n);
    p->n_zeroed = p->n_embedding_only = 0;
    for (size_t d = 0; d < D; d++) {
        fresh[d] = t.write[d] != NEVER && t.first_store[d] && t.write[d] < t.read[d];
        p->is_embedding_only[d] = !t.by_layer[d] && !(m->numeric_tokens && d == m->token_value_dim);
        if (p->is_embedding_only[d]) p->embedding_only[p->n_embedding_only++] = (uint32_t)d;
        else if (!fresh[d]) p->zeroed[p->n_zeroed++] = (uint32_t)d;
    }
    size_t layers = m->n_layers ? m->n_layers : 1;
    p->heads = ARENA_ARRAY(a, WritePlan *, layers);
    p->mlps = ARENA_ARRAY(a, WritePlan, layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        p->heads[l] = ARENA_ARRAY(a, WritePlan, L->n_heads ? L->n_heads : 1);
        for (size_t h = 0; h < L->n_heads; h++) plan_writer(a, &L->heads[h].wo, fresh, &p->heads[l][h]);
        plan_writer(a, &L->mlp.w2, fresh, &p->mlps[l]);
    }
}
