#include "runtime/forward32.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels32.h"

typedef struct Head32 {
    MatrixColumn32 *wq, *wk, *wv, *wo;
} Head32;

typedef struct Mlp32 {
    MatrixColumn32 *w1, *w2, *w3;
    float *b1, *b2, *b3;
} Mlp32;

typedef struct EmbedRow32 {
    size_t n;
    const uint32_t *dims;
    float *vals;
} EmbedRow32;

struct Forward32 {
    Head32 **heads;    /* heads[l][h] */
    Mlp32 *mlps;       /* mlps[l] */
    EmbedRow32 *token_rows, *pos_rows;
    float *F, *Q, *K, *V, *A, *S, *H, *Y, *qcol; /* as in Workspace, in float32 */
    MatrixColumn32 *qcols;
    Arena arena;
    float *block;
};

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }
static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* ---- the float32 copy of the weights ---- */

static float *floats(Arena *a, const double *x, size_t n) {
    float *y = ARENA_ARRAY(a, float, n ? n : 1);
    for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
    return y;
}

static MatrixColumn32 *columns32(Arena *a, const Matrix *W) {
    MatrixColumn32 *c = ARENA_ARRAY(a, MatrixColumn32, W->cols ? W->cols : 1);
    for (size_t j = 0; j < W->cols; j++) {
        MatrixColumn col = matrix_column(W, j);
        c[j] = (MatrixColumn32){col.n, col.row, floats(a, col.val, col.n)};
    }
    return c;
}

static EmbedRow32 *rows32(Arena *a, const EmbedRow *rows, size_t n) {
    EmbedRow32 *r = ARENA_ARRAY(a, EmbedRow32, n ? n : 1);
    for (size_t i = 0; i < n; i++) r[i] = (EmbedRow32){rows[i].n, rows[i].dims, floats(a, rows[i].vals, rows[i].n)};
    return r;
}

bool forward32_new(Forward32 **out, const Model *m, const Workspace *ws, char *err, size_t errsize) {
    Forward32 *f = calloc(1, sizeof *f);
    if (!f) abort();
    arena_init(&f->arena);
    Arena *a = &f->arena;
    size_t D = m->d_model, ld = ws->ld, seq = m->max_len + 1, dk = 0, dv = 0, layer_dv = 0, writes = 0;
    size_t layers = m->n_layers ? m->n_layers : 1;
    f->heads = ARENA_ARRAY(a, Head32 *, layers);
    f->mlps = ARENA_ARRAY(a, Mlp32, layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        size_t sum_dv = 0;
        f->heads[l] = ARENA_ARRAY(a, Head32, L->n_heads ? L->n_heads : 1);
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            f->heads[l][h] = (Head32){columns32(a, &H->wq), columns32(a, &H->wk), columns32(a, &H->wv),
                                      columns32(a, &H->wo)};
            dk = max_sz(dk, H->wq.cols);
            dv = max_sz(dv, H->wv.cols);
            sum_dv += H->wv.cols;
            writes = max_sz(writes, ws->writes.heads[l][h].n);
        }
        layer_dv = max_sz(layer_dv, sum_dv);
        writes = max_sz(writes, ws->writes.mlps[l].n);
        const ModelMlp *M = &L->mlp;
        f->mlps[l] = (Mlp32){columns32(a, &M->w1), columns32(a, &M->w2), M->gated ? columns32(a, &M->w3) : NULL,
                             floats(a, M->b1, M->w1.cols), floats(a, M->b2, D),
                             M->gated ? floats(a, M->b3, M->w1.cols) : NULL};
    }
    f->token_rows = rows32(a, ws->token_rows, m->token_embed.rows);
    f->pos_rows = rows32(a, ws->pos_rows, m->pos_embed.rows);
    /* the workspace's panels (its sizes were checked when it was made) */
    size_t sizes[] = {D * ld, dk * ld, dk * ld, dv * ld, layer_dv * ld, KERNEL_BLOCK * (round_up(seq, 8) + 8),
                      WORKSPACE_HIDDEN_CHUNK * KERNEL_BLOCK, writes * KERNEL_BLOCK, KERNEL_BLOCK * dk};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) total += sizes[i] ? sizes[i] : 1;
    f->block = calloc(total, sizeof(float));
    if (!f->block) {
        snprintf(err, errsize, "out of memory for the float32 workspace (%zu floats)", total);
        forward32_free(f);
        return false;
    }
    float *p = f->block, **bufs[] = {&f->F, &f->Q, &f->K, &f->V, &f->A, &f->S, &f->H, &f->Y, &f->qcol};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        *bufs[i] = p;
        p += sizes[i] ? sizes[i] : 1;
    }
    f->qcols = ARENA_ARRAY(a, MatrixColumn32, KERNEL_BLOCK);
    *out = f;
    return true;
}

void forward32_free(Forward32 *f) {
    if (!f) return;
    free(f->block);
    arena_free(&f->arena);
    free(f);
}

/* ---- the machine in float32 (runtime/forward.c's functions of the same names) ---- */

void forward32_embed(const Model *m, Workspace *ws, size_t rows, size_t padded) {
    const Forward32 *f = ws->f32;
    size_t D = m->d_model, ld = ws->ld;
    float *F = f->F;
    for (size_t d = 0; d < D; d++) memset(F + d * ld, 0, padded * sizeof *F);
    for (size_t r = 0; r < rows; r++) {
        const EmbedRow32 *te = &f->token_rows[ws->ids[r]], *pe = &f->pos_rows[ws->pos[r]];
        size_t a = 0, b = 0;
        while (a < te->n || b < pe->n) { /* the union of the two rows' dims, ascending */
            size_t da = a < te->n ? te->dims[a] : SIZE_MAX, db = b < pe->n ? pe->dims[b] : SIZE_MAX;
            size_t d = da < db ? da : db;
            float x = da == d ? te->vals[a++] : 0.0f, y = db == d ? pe->vals[b++] : 0.0f;
            F[d * ld + r] = x + y;
        }
        if (ws->pos[r] > 0 && m->numeric_tokens) F[m->token_value_dim * ld + r] += (float)ws->row_values[r];
    }
}

static void attention_sequence(const ModelHead *h, Workspace *ws, size_t o, size_t rows, float *A) {
    Forward32 *f = ws->f32;
    size_t dk = h->wq.cols, dv = h->wv.cols, ld = ws->ld, span = round_up(rows, 8);
    for (size_t i0 = 0; i0 < rows; i0 += KERNEL_BLOCK) {
        size_t nq = rows - i0 < KERNEL_BLOCK ? rows - i0 : KERNEL_BLOCK;
        uint32_t used[KERNEL_BLOCK] = {0}; /* zero query entries skipped; the panel read line by line */
        for (size_t c = 0; c < dk; c++) {
            const float *line = f->Q + c * ld + o + i0;
            for (size_t q = 0; q < nq; q++) {
                float x = line[q];
                if (x == 0.0f) continue;
                f->qcol[q * dk + used[q]] = x;
                ws->qrow[q * dk + used[q]++] = (uint32_t)c;
            }
        }
        for (size_t q = 0; q < nq; q++) {
            f->qcols[q] = (MatrixColumn32){used[q], ws->qrow + q * dk, f->qcol + q * dk};
            ws->score_flops += 2.0 * (double)used[q] * (double)rows;
        }
        kernel32_columns(f->qcols, NULL, nq, f->K + o, 0, ld, span, KERNEL_STORE, NULL, NULL, 0, f->S, span);
        for (size_t q = 0; q < nq; q++) {
            size_t i = i0 + q, last = h->causal ? i : rows - 1;
            size_t ties = kernel32_select(f->S + q * span, last + 1, h->tie_tol, ws->selected);
            float extra = ties && ws->selected[0] == 0 ? (float)h->bos_extra : 0.0f; /* BOS is key 0 */
            for (size_t c = 0; c < dv; c++) {
                const float *v = f->V + c * ld + o;
                float sum = extra * v[0];
                for (size_t t = 0; t < ties; t++) sum += v[ws->selected[t]];
                A[c * ld + o + i] = sum / ((float)ties + extra);
            }
        }
    }
}

static void mlp_block(const Model *m, size_t l, Workspace *ws, size_t r0, size_t len) {
    Forward32 *f = ws->f32;
    const ModelMlp *M = &m->layers[l].mlp;
    const Mlp32 *M32 = &f->mlps[l];
    const WritePlan *plan = &ws->writes.mlps[l];
    const ChunkSegments *cs = &ws->segments[l];
    size_t hidden = M->w1.cols, ld = ws->ld;
    for (size_t j = 0; j < plan->n; j++) memset(f->Y + j * KERNEL_BLOCK, 0, len * sizeof(float));
    for (size_t h0 = 0, chunk = 0; h0 < hidden; h0 += WORKSPACE_HIDDEN_CHUNK, chunk++) {
        size_t h1 = hidden - h0 < WORKSPACE_HIDDEN_CHUNK ? hidden : h0 + WORKSPACE_HIDDEN_CHUNK;
        kernel32_columns(M32->w1 + h0, NULL, h1 - h0, f->F + r0, 0, ld, len, KERNEL_RELU, M32->b1 + h0, NULL, 0, f->H,
                         KERNEL_BLOCK);
        if (M->gated)
            kernel32_columns(M32->w3 + h0, NULL, h1 - h0, f->F + r0, 0, ld, len, KERNEL_GATE, M32->b3 + h0, NULL, 0,
                             f->H, KERNEL_BLOCK);
        for (size_t k = cs->start[chunk]; k < cs->start[chunk + 1]; k++) { /* each chain goes on */
            const Segment *g = &cs->seg[k];
            const MatrixColumn32 *col = &M32->w2[plan->dims[g->j]];
            MatrixColumn32 part = {g->to - g->from, col->row + g->from, col->val + g->from};
            float *y = f->Y + (size_t)g->j * KERNEL_BLOCK;
            kernel32_columns(&part, NULL, 1, f->H, h0, KERNEL_BLOCK, len, KERNEL_STORE, NULL, y, 0, y, 0);
        }
    }
    for (size_t j = 0; j < plan->n; j++) kernel32_add(f->Y + j * KERNEL_BLOCK, len, f->F + plan->dims[j] * ld + r0);
    for (size_t j = 0; j < ws->b2_count[l]; j++) {
        size_t d = ws->b2_dims[l][j];
        float b = M32->b2[d], *x = f->F + d * ld + r0;
        for (size_t i = 0; i < len; i++) x[i] += b;
    }
}

void forward32_layer(const Model *m, size_t l, Workspace *ws, const size_t *starts, size_t count, size_t padded) {
    Forward32 *f = ws->f32;
    const ModelLayer *L = &m->layers[l];
    size_t at = 0, ld = ws->ld;
    for (size_t h = 0; h < L->n_heads; h++) {
        const ModelHead *H = &L->heads[h];
        const Head32 *H32 = &f->heads[l][h];
        for (size_t r0 = 0; r0 < padded; r0 += KERNEL_BLOCK) {
            size_t len = padded - r0 < KERNEL_BLOCK ? padded - r0 : KERNEL_BLOCK;
            kernel32_columns(H32->wq, NULL, H->wq.cols, f->F + r0, 0, ld, len, KERNEL_STORE, NULL, NULL, 0, f->Q + r0, ld);
            kernel32_columns(H32->wk, NULL, H->wk.cols, f->F + r0, 0, ld, len, KERNEL_STORE, NULL, NULL, 0, f->K + r0, ld);
            kernel32_columns(H32->wv, NULL, H->wv.cols, f->F + r0, 0, ld, len, KERNEL_STORE, NULL, NULL, 0, f->V + r0, ld);
        }
        float *A = f->A + at * ld;
        for (size_t s = 0; s < count; s++) attention_sequence(H, ws, starts[s], starts[s + 1] - starts[s], A);
        for (size_t c = 0; c < H->wv.cols; c++) /* padding rows: finite, unused */
            memset(A + c * ld + starts[count], 0, (padded - starts[count]) * sizeof *A);
        at += H->wv.cols;
    }
    at = 0;
    for (size_t h = 0; h < L->n_heads; h++) {
        const WritePlan *plan = &ws->writes.heads[l][h];
        for (size_t r0 = 0; r0 < padded && plan->n; r0 += KERNEL_BLOCK) {
            size_t len = padded - r0 < KERNEL_BLOCK ? padded - r0 : KERNEL_BLOCK;
            kernel32_columns(f->heads[l][h].wo, plan->dims, plan->n, f->A + at * ld + r0, 0, ld, len, KERNEL_ADD, NULL,
                             NULL, 0, f->F + r0, ld);
        }
        at += L->heads[h].wv.cols;
    }
    for (size_t r0 = 0; r0 < padded; r0 += KERNEL_BLOCK)
        mlp_block(m, l, ws, r0, padded - r0 < KERNEL_BLOCK ? padded - r0 : KERNEL_BLOCK);
}

void forward32_rows(const Workspace *ws, size_t D, size_t o, size_t rows, double *X) {
    for (size_t t = 0; t < ws->n_read; t++) {
        size_t d = ws->read_dims[t];
        for (size_t r = 0; r < rows; r++) X[r * D + d] = (double)ws->f32->F[d * ws->ld + o + r];
    }
}
