#include "runtime/forward.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"

/* Refuse workspaces above this many doubles (32 GiB); a real model is far smaller. */
#define WORKSPACE_MAX_DOUBLES ((size_t)1 << 32)

/* ---- products ---- */

/* C (m x n) = A (m x k) B (k x n) + beta C, row-major with the given leading dimensions. */
static void matmul(double *C, size_t ldc, const double *A, size_t lda, const double *B, size_t ldb, size_t m,
                   size_t k, size_t n, double beta) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        if (beta == 0.0)
            for (size_t i = 0; i < m; i++) memset(C + i * ldc, 0, n * sizeof *C);
        return;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, A, (int)lda, B, (int)ldb, beta,
                C, (int)ldc);
}

/* out (rows x W.cols) = X W, where W (D x cols) reads the residual. */
static void project(const Model *m, Workspace *ws, const double *X, size_t rows, const Matrix *W, const SparsePlan *p,
                    double *out) {
    size_t D = m->d_model, cols = W->cols;
    if (!ws->sparse || 4 * p->n > 3 * D) { /* a plan covering most of X saves nothing over dense */
        matmul(out, cols ? cols : 1, X, D, W->data, cols ? cols : 1, rows, D, cols, 0.0);
        return;
    }
    /* Only the residual directions W reads contribute: gather them, multiply by W's packed rows. */
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < p->n; j++) ws->gathered[r * p->n + j] = X[r * D + p->dims[j]];
    matmul(out, cols ? cols : 1, ws->gathered, p->n ? p->n : 1, p->packed, cols ? cols : 1, rows, p->n, cols, 0.0);
}

/* X += Y W, where W (k x D) writes the residual and Y is rows x k with leading dimension ldy. */
static void write_back(const Model *m, Workspace *ws, double *X, size_t rows, const double *Y, size_t ldy,
                       const Matrix *W, const SparsePlan *p) {
    size_t D = m->d_model, k = W->rows;
    if (!ws->sparse || 4 * p->n > 3 * D) {
        matmul(X, D, Y, ldy, W->data, D, rows, k, D, 1.0);
        return;
    }
    /* Only the directions W writes change: compute those columns, scatter-add them. */
    if (p->n == 0) return;
    matmul(ws->T, p->n, Y, ldy, p->packed, p->n, rows, k, p->n, 0.0);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < p->n; j++) X[r * D + p->dims[j]] += ws->T[r * p->n + j];
}

/* ---- the machine ---- */

/* X = token_embed[token] + pos_embed[position]; BOS (token id n_vocab) at position 0; a
 * real-valued token also adds its value on token_value_dim. */
static void embed(const Model *m, const size_t *ids, const double *values, size_t n, double *X) {
    size_t D = m->d_model;
    for (size_t r = 0; r <= n; r++) {
        size_t tok = r == 0 ? m->n_vocab : ids[r - 1];
        const double *te = m->token_embed.data + tok * D, *pe = m->pos_embed.data + r * D;
        for (size_t j = 0; j < D; j++) X[r * D + j] = te[j] + pe[j];
        if (r > 0 && m->numeric_tokens && values) X[r * D + m->token_value_dim] += values[r - 1];
    }
}

/* Average-hard attention: out_i = mean of (X Wv)_j over the keys j whose score (X Wq)_i.(X Wk)_j
 * is at least the row's maximum minus the head's absolute tie tolerance (j <= i when causal).
 * out is rows x dv. */
static void attention_head(const Model *m, const ModelHead *h, const HeadPlan *plan, const double *X, size_t rows,
                           Workspace *ws, double *out, size_t ldo) {
    size_t dk = h->wq.cols, dv = h->wv.cols;
    double *Q = ws->Q, *K = ws->K, *V = ws->V, *S = ws->S, tol = h->tie_tol;
    project(m, ws, X, rows, &h->wq, &plan->q, Q);
    project(m, ws, X, rows, &h->wk, &plan->k, K);
    project(m, ws, X, rows, &h->wv, &plan->v, V);
    if (dk > 0)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)rows, (int)dk, 1.0, Q, (int)dk, K, (int)dk,
                    0.0, S, (int)rows);
    else
        memset(S, 0, rows * rows * sizeof *S);
    for (size_t i = 0; i < rows; i++) {
        size_t last = h->causal ? i : rows - 1;
        const double *s = S + i * rows;
        double best = s[0];
        for (size_t j = 1; j <= last; j++) if (s[j] > best) best = s[j];
        double threshold = best - tol;
        double *o = out + i * ldo;
        memset(o, 0, dv * sizeof *o);
        size_t ties = 0;
        for (size_t j = 0; j <= last; j++) {
            if (s[j] < threshold) continue;
            ties++;
            const double *v = V + j * dv;
            for (size_t c = 0; c < dv; c++) o[c] += v[c];
        }
        for (size_t c = 0; c < dv; c++) o[c] /= (double)ties; /* ties >= 1: the maximum itself */
    }
}

/* X += (ReLU(X W1 + b1) * G) W2 + b2, with G = X W3 + b3 for a gated MLP and 1 otherwise. */
static void mlp(const Model *m, const ModelMlp *f, const MlpPlan *plan, double *X, size_t rows, Workspace *ws) {
    size_t D = m->d_model, hidden = f->w1.cols;
    if (hidden > 0) {
        double *H = ws->H, *G = ws->G;
        project(m, ws, X, rows, &f->w1, &plan->w1, H);
        if (f->gated) project(m, ws, X, rows, &f->w3, &plan->w3, G);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < hidden; c++) {
                double z = H[r * hidden + c] + f->b1[c];
                z = z > 0.0 ? z : 0.0;
                H[r * hidden + c] = f->gated ? z * (G[r * hidden + c] + f->b3[c]) : z;
            }
        write_back(m, ws, X, rows, H, hidden, &f->w2, &plan->w2);
    }
    for (size_t r = 0; r < rows; r++) {
        if (ws->sparse)
            for (size_t j = 0; j < plan->b2.n; j++) X[r * D + plan->b2.dims[j]] += f->b2[plan->b2.dims[j]];
        else
            for (size_t j = 0; j < D; j++) X[r * D + j] += f->b2[j];
    }
}

/* One layer: every head reads the same X, then the heads' outputs and the MLP are added. */
static void layer(const Model *m, size_t l, double *X, size_t rows, Workspace *ws) {
    const ModelLayer *L = &m->layers[l];
    size_t width = 0;
    for (size_t h = 0; h < L->n_heads; h++) width += L->heads[h].wv.cols;
    size_t at = 0;
    for (size_t h = 0; h < L->n_heads; h++) {
        attention_head(m, &L->heads[h], &ws->heads[l][h], X, rows, ws, ws->A + at, width ? width : 1);
        at += L->heads[h].wv.cols;
    }
    at = 0;
    for (size_t h = 0; h < L->n_heads; h++) {
        write_back(m, ws, X, rows, ws->A + at, width ? width : 1, &L->heads[h].wo, &ws->heads[l][h].o);
        at += L->heads[h].wv.cols;
    }
    mlp(m, &L->mlp, &ws->mlps[l], X, rows, ws);
}

void model_forward(const Model *m, const size_t *ids, size_t n, size_t first_layer, size_t end_layer, double *X,
                   Workspace *ws) {
    if (first_layer == 0) embed(m, ids, ws->token_values, n, X);
    if (end_layer > m->n_layers) end_layer = m->n_layers;
    for (size_t l = first_layer; l < end_layer; l++) layer(m, l, X, n + 1, ws);
}

/* ---- workspace ---- */

static void plan_reads(Arena *a, const Matrix *W, SparsePlan *p) {
    p->dims = ARENA_ARRAY(a, size_t, W->rows ? W->rows : 1);
    for (size_t r = 0; r < W->rows; r++) {
        bool any = false;
        for (size_t c = 0; c < W->cols && !any; c++) any = W->data[r * W->cols + c] != 0.0;
        if (any) p->dims[p->n++] = r;
    }
    p->packed = ARENA_ARRAY(a, double, p->n * W->cols + 1);
    for (size_t j = 0; j < p->n; j++)
        memcpy(p->packed + j * W->cols, W->data + p->dims[j] * W->cols, W->cols * sizeof(double));
}

static void plan_writes(Arena *a, const Matrix *W, SparsePlan *p) {
    p->dims = ARENA_ARRAY(a, size_t, W->cols ? W->cols : 1);
    for (size_t c = 0; c < W->cols; c++) {
        bool any = false;
        for (size_t r = 0; r < W->rows && !any; r++) any = W->data[r * W->cols + c] != 0.0;
        if (any) p->dims[p->n++] = c;
    }
    p->packed = ARENA_ARRAY(a, double, W->rows * p->n + 1);
    for (size_t r = 0; r < W->rows; r++)
        for (size_t j = 0; j < p->n; j++) p->packed[r * p->n + j] = W->data[r * W->cols + p->dims[j]];
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

bool workspace_init(Workspace *ws, const Model *m, char *err, size_t errsize) {
    memset(ws, 0, sizeof *ws);
    arena_init(&ws->arena);
    ws->sparse = true;
    size_t D = m->d_model, rows = m->max_len + 1;
    size_t dk = 0, dv = 0, layer_dv = 0, hidden = 0, gated_hidden = 0, reads = 0, writes = 0;
    ws->heads = ARENA_ARRAY(&ws->arena, HeadPlan *, m->n_layers ? m->n_layers : 1);
    ws->mlps = ARENA_ARRAY(&ws->arena, MlpPlan, m->n_layers ? m->n_layers : 1);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        size_t sum_dv = 0;
        ws->heads[l] = ARENA_ARRAY(&ws->arena, HeadPlan, L->n_heads ? L->n_heads : 1);
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            HeadPlan *p = &ws->heads[l][h];
            plan_reads(&ws->arena, &H->wq, &p->q);
            plan_reads(&ws->arena, &H->wk, &p->k);
            plan_reads(&ws->arena, &H->wv, &p->v);
            plan_writes(&ws->arena, &H->wo, &p->o);
            dk = max_sz(dk, H->wq.cols);
            dv = max_sz(dv, H->wv.cols);
            sum_dv += H->wv.cols;
            reads = max_sz(reads, max_sz(p->q.n, max_sz(p->k.n, p->v.n)));
            writes = max_sz(writes, p->o.n);
        }
        layer_dv = max_sz(layer_dv, sum_dv);
        MlpPlan *p = &ws->mlps[l];
        plan_reads(&ws->arena, &L->mlp.w1, &p->w1);
        plan_writes(&ws->arena, &L->mlp.w2, &p->w2);
        p->b2.dims = ARENA_ARRAY(&ws->arena, size_t, D ? D : 1);
        for (size_t j = 0; j < D; j++)
            if (L->mlp.b2[j] != 0.0) p->b2.dims[p->b2.n++] = j;
        if (L->mlp.gated) {
            plan_reads(&ws->arena, &L->mlp.w3, &p->w3);
            gated_hidden = max_sz(gated_hidden, L->mlp.w1.cols);
            reads = max_sz(reads, p->w3.n);
        }
        hidden = max_sz(hidden, L->mlp.w1.cols);
        reads = max_sz(reads, p->w1.n);
        writes = max_sz(writes, p->w2.n);
    }
    size_t widths[] = {D, reads, dk, dk, dv, layer_dv, rows, hidden, gated_hidden, writes};
    size_t total = 0;
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
        size_t w = widths[i] ? widths[i] : 1;
        if (w > WORKSPACE_MAX_DOUBLES / rows || total > WORKSPACE_MAX_DOUBLES - w * rows) {
            arena_free(&ws->arena);
            snprintf(err, errsize, "workspace for max length %zu would be too large", m->max_len);
            return false;
        }
        total += w * rows;
    }
    ws->block = calloc(total, sizeof(double));
    if (!ws->block) {
        arena_free(&ws->arena);
        snprintf(err, errsize, "out of memory for the workspace (%zu doubles)", total);
        return false;
    }
    double *p = ws->block;
    double **bufs[] = {&ws->X, &ws->gathered, &ws->Q, &ws->K, &ws->V, &ws->A, &ws->S, &ws->H, &ws->G, &ws->T};
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
        *bufs[i] = p;
        p += (widths[i] ? widths[i] : 1) * rows;
    }
    ws->rows = rows;
    ws->token_values = ARENA_ARRAY(&ws->arena, double, rows);
    return true;
}

void workspace_free(Workspace *ws) {
    free(ws->block);
    arena_free(&ws->arena);
    memset(ws, 0, sizeof *ws);
}

/* ---- running one input ---- */

bool model_tokenize(const Model *m, const Value *input, size_t n, size_t *ids, double *values, char *err,
                    size_t errsize) {
    if (n > m->max_len) {
        snprintf(err, errsize, "input has length %zu > max length %zu", n, m->max_len);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        Value tok;
        char why[200];
        if (!ir_convert_token((IrTokenType)m->token_type, input[i], &tok, why, sizeof why)) {
            snprintf(err, errsize, "%s", why);
            return false;
        }
        if (m->numeric_tokens) {
            double v = value_as_double(tok);
            if (!(v >= m->token_lo && v <= m->token_hi)) {
                snprintf(err, errsize, "token %g at position %zu is outside the range %g..%g the model was compiled for",
                         v, i, m->token_lo, m->token_hi);
                return false;
            }
            ids[i] = 0;
            if (values) values[i] = v;
            continue;
        }
        size_t id = m->n_vocab;
        for (size_t v = 0; v < m->n_vocab && id == m->n_vocab; v++)
            if (value_equal(tok, m->vocab[v])) id = v;
        if (id == m->n_vocab) {
            char text[120];
            value_format(input[i], text, sizeof text);
            snprintf(err, errsize, "token %s at position %zu is not in the vocabulary", text, i);
            return false;
        }
        ids[i] = id;
    }
    return true;
}

bool model_block_one_hot(const double *x, size_t dim, size_t count, size_t *hot) {
    size_t ones = 0;
    for (size_t j = 0; j < count; j++) {
        double v = x[dim + j];
        if (fabs(v - 1.0) <= MODEL_ONEHOT_TOL) { ones++; *hot = j; }
        else if (fabs(v) > MODEL_ONEHOT_TOL) return false;
    }
    return ones == 1;
}

/* A numerical output: x = row . readout, decoded against the value set of the input's length
 * (runtime/model.h). */
static bool read_number(const Model *m, const double *x, size_t pos, size_t n_input, Value *out, char *err,
                        size_t errsize) {
    double v = 0.0;
    for (size_t j = 0; j < m->d_model; j++) v += x[j] * m->out_readout[j];
    if (!isfinite(v)) {
        snprintf(err, errsize, "output at position %zu: model value %g is not a finite number", pos, v);
        return false;
    }
    if (m->out_count == 0) { /* unbounded: the number itself, of the kind the kind block names */
        if (m->out_kind_count == 0) {
            *out = value_float(v);
            return true;
        }
        size_t hot;
        if (!model_block_one_hot(x, m->out_kind_dim, m->out_kind_count, &hot)) {
            snprintf(err, errsize, "output at position %zu: the kind block of the output is not one-hot", pos);
            return false;
        }
        ValueKind k = m->out_kinds[hot];
        double r = round(v);
        if (k != VAL_FLOAT && (!(fabs(v - r) <= m->out_error_bound + m->out_error_rel * fabs(r)) || fabs(r) > 9007199254740992.0 ||
                               (k == VAL_BOOL && r != 0 && r != 1))) {
            snprintf(err, errsize, "output at position %zu: model value %.17g is not within %g of a %s", pos, v,
                     m->out_error_bound, value_kind_name(k));
            return false;
        }
        *out = k == VAL_FLOAT ? value_float(v) : k == VAL_INT ? value_int((int64_t)r) : value_bool(r != 0);
        return true;
    }
    size_t count;
    const Value *set = model_output_values(m, n_input, &count);
    char length[64] = "";
    if (m->out_len_count) snprintf(length, sizeof length, " for an input of length %zu", n_input);
    if (count == 0) {
        snprintf(err, errsize,
                 "output at position %zu: model value %.17g is not within the decoding margin of any value the program "
                 "can produce%s", pos, v, length);
        return false;
    }
    /* the first member not below v, and its predecessor: the nearest value is one of them */
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (value_as_double(set[mid]) < v) lo = mid + 1;
        else hi = mid;
    }
    size_t at = lo < count ? lo : count - 1;
    if (lo > 0 && (lo == count || v - value_as_double(set[lo - 1]) <= value_as_double(set[lo]) - v)) at = lo - 1;
    double near = value_as_double(set[at]);
    if (!(fabs(v - near) <= m->out_margin)) {
        snprintf(err, errsize,
                 "output at position %zu: model value %.17g is not within the decoding margin of any value the program "
                 "can produce%s", pos, v, length);
        return false;
    }
    /* the members with that numeric value are adjacent (sorted) */
    size_t first = at, last = at;
    while (first > 0 && value_as_double(set[first - 1]) == near) first--;
    while (last + 1 < count && value_as_double(set[last + 1]) == near) last++;
    if (m->out_kind_count == 0) {
        *out = set[first];
        return true;
    }
    size_t hot;
    if (!model_block_one_hot(x, m->out_kind_dim, m->out_kind_count, &hot)) {
        snprintf(err, errsize, "output at position %zu: the kind block of the output is not one-hot", pos);
        return false;
    }
    ValueKind kind = m->out_kinds[hot];
    for (size_t i = first; i <= last; i++)
        if (set[i].kind == kind) {
            *out = set[i];
            return true;
        }
    char text[64];
    value_format(set[first], text, sizeof text);
    snprintf(err, errsize, "output at position %zu: model value %.17g decodes to %s, but no value of kind %s has it%s",
             pos, v, text, value_kind_name(kind), length);
    return false;
}

bool model_read_output(const Model *m, const double *x, size_t pos, size_t n_input, Value *out, char *err,
                       size_t errsize) {
    if (m->output_kind == MODEL_OUT_NUMERICAL) return read_number(m, x, pos, n_input, out, err, errsize);
    size_t hot;
    if (!model_block_one_hot(x, m->out_dim, m->out_count, &hot)) {
        snprintf(err, errsize, "output s-op %s is not one-hot at position %zu (several values were averaged)",
                 m->output_name, pos);
        return false;
    }
    *out = m->out_values[hot];
    return true;
}

/* All positions of a block hold values of one kind (strings, or numbers and bools). A position
 * whose block is not one-hot is left to the other checks and the readout. */
static bool check_one_kind(const ModelCheck *k, const double *X, size_t D, size_t n, char *err, size_t errsize) {
    int kind = -1;
    for (size_t i = 0; i < n; i++) {
        size_t hot;
        if (!model_block_one_hot(X + (i + 1) * D, k->dim, k->count, &hot)) continue;
        int here = k->is_string[hot];
        if (kind >= 0 && here != kind) {
            snprintf(err, errsize, "s-op %s mixes value types (strings and numbers) across positions", k->what);
            return false;
        }
        kind = here;
    }
    return true;
}

/* A margin check: v = sum of the terms at every non-BOS position must lie farther than the margin
 * from every threshold (sorted: the nearest is one of the two around v). */
static bool check_margin(const ModelCheck *k, const ModelMargin *g, const double *X, size_t D, size_t n, char *err,
                         size_t errsize) {
    for (size_t i = 0; i < n; i++) {
        const double *x = X + (i + 1) * D;
        double v = 0.0;
        for (size_t t = 0; t < g->n_terms; t++) v += g->coefs[t] * x[g->dims[t]];
        if (!isfinite(v)) {
            snprintf(err, errsize, "s-op %s is %g at position %zu, not a finite number", k->what, v, i);
            return false;
        }
        size_t lo = 0, hi = g->n_thresholds; /* the first threshold not below v */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->thresholds[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        size_t near = lo < g->n_thresholds ? lo : lo - 1;
        if (lo > 0 && lo < g->n_thresholds && v - g->thresholds[lo - 1] < g->thresholds[lo] - v) near = lo - 1;
        double c = g->thresholds[near];
        if (!(fabs(v - c) > g->m)) {
            char vs[40], cs[40];
            value_format(value_float(v), vs, sizeof vs);
            value_format(value_float(c), cs, sizeof cs);
            snprintf(err, errsize, MODEL_MARGIN_ERROR ": s-op %s is %s at position %zu, within %g of the threshold %s it "
                     "is compared with; the model cannot decide the comparison exactly", k->what, vs, i, g->m, cs);
            return false;
        }
    }
    return true;
}

bool model_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *out_arena, Value **out, char *err,
               size_t errsize) {
    size_t ids_small[64];
    size_t *ids = n <= 64 ? ids_small : NULL;
    if (!ids) {
        if (n > m->max_len) {
            snprintf(err, errsize, "input has length %zu > max length %zu", n, m->max_len);
            return false;
        }
        ids = ARENA_ARRAY(out_arena, size_t, n); /* only for long inputs; n <= max_len */
    }
    if (!model_tokenize(m, input, n, ids, ws->token_values, err, errsize)) return false;
    size_t D = m->d_model;
    double *X = ws->X;
    /* Layer by layer, so each check sees the residual right after its layer. */
    if (m->n_layers == 0) model_forward(m, ids, n, 0, 0, X, ws);
    for (size_t l = 0; l < m->n_layers; l++) {
        model_forward(m, ids, n, l, l + 1, X, ws);
        for (size_t c = 0; c < m->n_checks; c++) {
            const ModelCheck *k = &m->checks[c];
            if (k->after_layer != l) continue;
            if (k->kind == MODEL_CHECK_ONE_KIND) {
                if (!check_one_kind(k, X, D, n, err, errsize)) return false;
                continue;
            }
            if (k->kind == MODEL_CHECK_MARGIN) {
                if (!check_margin(k, &m->margins[k->dim], X, D, n, err, errsize)) return false;
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                size_t hot;
                const double *x = X + (i + 1) * D;
                /* variance of the selected indices: 0 for one key, >= 1/4 for two or more */
                bool fine = k->kind == MODEL_CHECK_SINGLE_KEY ? x[k->dim + 1] - x[k->dim] * x[k->dim] < 0.125
                                                              : model_block_one_hot(x, k->dim, k->count, &hot);
                if (!fine) {
                    if (k->kind == MODEL_CHECK_SINGLE_KEY)
                        snprintf(err, errsize, "s-op %s averages several non-numeric values at position %zu", k->what, i);
                    else
                        snprintf(err, errsize, "s-op %s has no value at position %zu: the program raises there", k->what, i);
                    return false;
                }
            }
        }
    }
    Value *res = ARENA_ARRAY(out_arena, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        if (!model_read_output(m, X + (i + 1) * D, i, n, &res[i], err, errsize)) return false;
    *out = res;
    return true;
}
