#include "runtime/model.h"

#include <string.h>

void model_init(Model *m) {
    memset(m, 0, sizeof *m);
    m->tie_tolerance = 1e-6;
    arena_init(&m->arena);
}

void model_free(Model *m) {
    arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}

Matrix model_matrix(Model *m, size_t rows, size_t cols) {
    Matrix x = {rows, cols, NULL};
    /* arena_array checks rows x cols for overflow; empty matrices still get a valid pointer. */
    x.data = arena_array(&m->arena, rows ? rows : 1, (cols ? cols : 1) * sizeof(double));
    return x;
}

/* Every stored parameter block: embeddings, head and MLP weights, biases, readout. */
typedef struct Counter { size_t all, nonzero; } Counter;

static void count(Counter *c, const double *x, size_t n) {
    if (!x) return;
    c->all += n;
    for (size_t i = 0; i < n; i++) c->nonzero += x[i] != 0.0;
}

static Counter count_params(const Model *m) {
    Counter c = {0, 0};
    count(&c, m->token_embed.data, m->token_embed.rows * m->token_embed.cols);
    count(&c, m->pos_embed.data, m->pos_embed.rows * m->pos_embed.cols);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            const Matrix *w[4] = {&H->wq, &H->wk, &H->wv, &H->wo};
            for (int k = 0; k < 4; k++) count(&c, w[k]->data, w[k]->rows * w[k]->cols);
        }
        const ModelMlp *M = &L->mlp;
        count(&c, M->w1.data, M->w1.rows * M->w1.cols);
        count(&c, M->b1, M->w1.cols);
        count(&c, M->w2.data, M->w2.rows * M->w2.cols);
        count(&c, M->b2, m->d_model);
    }
    if (m->output_kind == MODEL_OUT_NUMERICAL) count(&c, m->out_readout, m->d_model);
    return c;
}

size_t model_param_count(const Model *m) { return count_params(m).all; }
size_t model_nonzero_count(const Model *m) { return count_params(m).nonzero; }
