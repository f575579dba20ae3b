#include "runtime/forward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "runtime/flag_band.h"
#include "runtime/forward32.h"
#include "runtime/kernels.h"
#include "runtime/precision.h"

/* Refuse workspaces above this many doubles (32 GiB); a real model is far smaller. */
#define WORKSPACE_MAX_DOUBLES ((size_t)1 << 32)
#define HIDDEN_CHUNK WORKSPACE_HIDDEN_CHUNK
/* Rows a default workspace keeps in flight (more when max_len + 1 is larger). */
#define DEFAULT_ROWS 512

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }
static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* ---- products ---- */

/* F[d] += (the panel `in` (lines of in_ld) times W)[d], rows [0, len), for each dim d W (its
 * columns cols) writes; the plan's fresh dims are stored (kernels.h KERNEL_FRESH: the same bits
 * where F was zeroed) when `fresh`. */
static void write_product(const MatrixColumn *cols, const WritePlan *plan, bool fresh, const double *in, size_t in_ld,
                          size_t len, double *F, size_t ld) {
    size_t stored = fresh ? plan->n_fresh : 0;
    if (stored) kernel_columns(cols, plan->dims, stored, in, 0, in_ld, len, KERNEL_FRESH, NULL, F, ld);
    if (plan->n > stored)
        kernel_columns(cols, plan->dims + stored, plan->n - stored, in, 0, in_ld, len, KERNEL_ADD, NULL, F, ld);
}

/* ---- the machine ---- */

/* F = token_embed[token] + pos_embed[position] for rows [0, rows), entry by entry as the dense
 * sum (an entry stored in neither row stays +0.0); row r holds position pos[r] of token id
 * ids[r]; a real-valued token adds its value on token_value_dim. Rows [rows, padded) are zeroed.
 * With `fresh` (the batch runs every layer), the lines of fresh dims are left as they are: their
 * first writers store them (runtime/write_plan.h); so are the lines only the embedding writes
 * where the last batch cleared its entries (clear_embedding). */
static void embed(const Model *m, Workspace *ws, const size_t *ids, const size_t *pos, const double *values,
                  size_t rows, size_t padded, bool fresh, double *F) {
    size_t D = m->d_model, ld = ws->ld;
    if (fresh) {
        for (size_t t = 0; t < ws->writes.n_zeroed; t++) memset(F + ws->writes.zeroed[t] * ld, 0, padded * sizeof *F);
        for (size_t t = 0; t < ws->writes.n_embedding_only && !ws->embedding_lines_zero; t++)
            memset(F + ws->writes.embedding_only[t] * ld, 0, ld * sizeof *F); /* whole: zero from now on */
    } else {
        for (size_t d = 0; d < D; d++) memset(F + d * ld, 0, padded * sizeof *F);
    }
    ws->embedded = true;
    ws->fresh = fresh;
    ws->embedding_lines_zero = false;
    for (size_t r = 0; r < rows; r++) {
        const EmbedRow *te = &ws->token_rows[ids[r]], *pe = &ws->pos_rows[pos[r]];
        size_t a = 0, b = 0;
        if (ws->embed_disjoint) { /* no dim in both: each entry is x + 0.0, written without a merge */
            for (; a < te->n; a++) F[te->dims[a] * ld + r] = te->vals[a] + 0.0;
            for (; b < pe->n; b++) F[pe->dims[b] * ld + r] = pe->vals[b] + 0.0;
        }
        while (a < te->n || b < pe->n) { /* the union of the two rows' dims, ascending */
            size_t da = a < te->n ? te->dims[a] : SIZE_MAX, db = b < pe->n ? pe->dims[b] : SIZE_MAX;
            size_t d = da < db ? da : db;
            double x = da == d ? te->vals[a++] : 0.0, y = db == d ? pe->vals[b++] : 0.0;
            F[d * ld + r] = x + y;
        }
        if (pos[r] > 0 && m->numeric_tokens && values) F[m->token_value_dim * ld + r] += values[r];
    }
}

/* The entries embed wrote for rows [0, rows) (ids and pos as it had them) in the dims only the
 * embedding writes, set back to +0.0: those lines are zero again, for the next batch. */
static void clear_embedding(Workspace *ws, const size_t *ids, const size_t *pos, size_t rows) {
    const bool *only = ws->writes.is_embedding_only;
    size_t ld = ws->ld;
    for (size_t r = 0; r < rows; r++) {
        const EmbedRow *te = &ws->token_rows[ids[r]], *pe = &ws->pos_rows[pos[r]];
        for (size_t a = 0; a < te->n; a++)
            if (only[te->dims[a]]) ws->F[te->dims[a] * ld + r] = 0.0;
        for (size_t b = 0; b < pe->n; b++)
            if (only[pe->dims[b]]) ws->F[pe->dims[b] * ld + r] = 0.0;
    }
    ws->embedding_lines_zero = true;
}

/* The current head's query (side 0) or key (side 1) panel made readable line by line. */
static void panel_lines(Workspace *ws, int side) {
    if (side == 0) panel_view_lines(&ws->q_view, &ws->head_plans[0], &ws->head->wq, ws->F, ws->Q, ws->ld, ws->padded);
    else panel_view_lines(&ws->k_view, &ws->head_plans[1], &ws->head->wk, ws->F, ws->K, ws->ld, ws->padded);
}

/* The workspace's entries of the current head's queries (side 0) or keys (side 1) ... */
static KeyEntries entries(const Workspace *ws, int side) {
    size_t dk = ws->head->wq.cols;
    return side ? (KeyEntries){dk, ws->key_count, ws->key_dim, ws->key_val}
                : (KeyEntries){dk, ws->query_count, ws->query_dim, ws->query_val};
}

/* ... gathered for rows [o, o + rows) of the panel (panel_view_gather). */
static KeyEntries gather(const Workspace *ws, int side, size_t o, size_t rows) {
    KeyEntries e = entries(ws, side);
    panel_view_gather(side ? &ws->k_view : &ws->q_view, &ws->head_plans[side], ws->embedded, ws->ids, ws->pos, o,
                      rows, &e);
    return e;
}

/* Scores of queries [0, nq) (entries q, nq <= KERNEL_BLOCK) against keys [0, n_keys) of the panel
 * K (from row o), key-major into ws->S: each query's chain over its entries across 64 keys at a
 * time, then turned key-major (the numbers kernel_scores gives from the keys' side). */
static void scores_from_queries(const KeyEntries *q, size_t nq, Workspace *ws, size_t o, size_t n_keys) {
    panel_lines(ws, 1);
    for (size_t k0 = 0; k0 < n_keys; k0 += KERNEL_BLOCK) {
        size_t len = n_keys - k0 < KERNEL_BLOCK ? n_keys - k0 : KERNEL_BLOCK;
        kernel_scores(q, nq, KERNEL_NOT_CAUSAL, ws->k_view.line, o + k0, len, ws->T);
        kernel_transpose(ws->T, nq, len, ws->S + k0 * KERNEL_BLOCK);
    }
}

/* A block's scores from the queries' side, where their entries are far fewer than the keys': each
 * query's non-zero entries gathered, its scores a chain over them across 64 keys at a time (the
 * same chain kernel_scores runs: a product with a zero factor skipped, so the same numbers), then
 * turned key-major for kernel_attend. */
static void scores_by_query(const ModelHead *h, Workspace *ws, size_t o, size_t i0, size_t nq, size_t n_keys) {
    KeyEntries queries = gather(ws, 0, o + i0, nq);
    scores_from_queries(&queries, nq, ws, o, n_keys);
    for (size_t q = 0; q < nq; q++) { /* 2 per entry of query q and key it sees */
        size_t seen = h->causal ? i0 + q + 1 : n_keys;
        ws->score_flops += 2.0 * (double)queries.count[q] * (double)seen;
    }
}

/* 2 per non-zero entry of each key and query that sees it (the dense scores' count, whichever
 * way the scores are found). */
static double key_score_flops(const KeyEntries *keys, size_t rows, bool causal) {
    uint64_t pairs = 0; /* in integers: exact, as the sum of doubles was below 2^53 */
    for (size_t j = 0; j < rows; j++) pairs += (uint64_t)keys->count[j] * (causal ? rows - j : rows);
    return 2.0 * (double)pairs;
}

/* A sequence's keys' and queries' entries (rows [o, o + rows) of K and Q), and whether
 * attend_sparse can take the head on them (its index then built). */
static bool sparse_ready(Workspace *ws, size_t o, size_t rows) {
    KeyEntries keys = gather(ws, 1, o, rows), queries = gather(ws, 0, o, rows);
    return attend_sparse_plan(&keys, &queries, rows, &ws->sparse);
}

/* A head that is not causal, once per group of equal queries (runtime/query_groups.h): their
 * scores from the queries' side, the means of each group, copied to its queries. False (nothing
 * written) where the groups are more than half the queries. */
static bool attention_grouped(const ModelHead *h, Workspace *ws, size_t o, size_t rows, double *A) {
    size_t dk = h->wq.cols, dv = h->wv.cols, ld = ws->ld;
    KeyEntries queries = gather(ws, 0, o, rows);
    /* queries made of the token's entries alone are grouped by token id, without comparing them */
    size_t n = ws->head_plans[0].token_only && ws->embedded ? query_groups_by_id(ws->ids + o, rows, &ws->groups)
                                                           : query_groups(&queries, rows, &ws->groups);
    if (n * 2 > rows) return false;
    for (size_t i = 0; i < rows; i++) /* 2 per entry of each query and key: every query sees every key */
        ws->score_flops += 2.0 * (double)queries.count[i] * (double)rows;
    query_groups_compact(&queries, n, &ws->groups);
    AttendKeys seen = {rows, false, 0, h->tie_tol, h->bos_extra};
    for (size_t g0 = 0; g0 < n; g0 += KERNEL_BLOCK) {
        size_t ng = n - g0 < KERNEL_BLOCK ? n - g0 : KERNEL_BLOCK;
        KeyEntries block = {dk, queries.count + g0, queries.dim + g0 * dk, queries.val + g0 * dk};
        scores_from_queries(&block, ng, ws, o, rows);
        kernel_attend(ws->S, &seen, ng, ws->V + o, ld, dv, ws->group_out, KERNEL_BLOCK, ws->key_mask, ws->selected);
        for (size_t i = 0; i < rows; i++) {
            size_t g = ws->groups.group[i];
            if (g < g0 || g >= g0 + ng) continue;
            for (size_t c = 0; c < dv; c++) A[c * ld + o + i] = ws->group_out[c * KERNEL_BLOCK + g - g0];
        }
    }
    return true;
}

/* One sequence's attention for one head: rows [o, o + rows) of the panels Q, K (dk lines) and V
 * (dv lines); out_i = mean of V_j over the keys j whose score Q_i . K_j is at least the row's
 * maximum minus the head's absolute tie tolerance (j <= i when causal), BOS weighing 1 + bos_extra,
 * written to A (dv lines).
 * With side->sparse, through an index of the keys where attend_sparse can (one-hot matches);
 * with side->grouped, once per group of equal queries where they are few (attention_grouped).
 * Otherwise the keys' non-zero entries are gathered once (one pass over K, line by line); then
 * each block of KERNEL_BLOCK queries, one query per lane, gets its scores key by key
 * (kernel_scores: a chain over the key's entries, a zero query entry skipped) and its means
 * (kernel_attend), both vectorised over the queries. With side->by_query, the scores come from
 * the queries' side instead (the same numbers: scores_by_query). */
static void attention_sequence(const ModelHead *h, Workspace *ws, size_t o, size_t rows, const HeadSide *side,
                               double *A) {
    size_t dv = h->wv.cols, ld = ws->ld;
    if (side->sparse && sparse_ready(ws, o, rows)) {
        KeyEntries keys = entries(ws, 1), queries = entries(ws, 0);
        attend_sparse(&keys, &queries, rows, h->causal, h->tie_tol, h->bos_extra, ws->V + o, ld, dv, A + o, ld,
                      &ws->sparse);
        ws->score_flops += key_score_flops(&keys, rows, h->causal);
        return;
    }
    if (side->grouped && attention_grouped(h, ws, o, rows, A)) return;
    KeyEntries keys = entries(ws, 1); /* gathered by sparse_ready where it was tried */
    if (!side->by_query) {
        if (!side->sparse) keys = gather(ws, 1, o, rows);
        ws->score_flops += key_score_flops(&keys, rows, h->causal);
        panel_lines(ws, 0);
    }
    for (size_t i0 = 0; i0 < rows; i0 += KERNEL_BLOCK) {
        size_t nq = rows - i0 < KERNEL_BLOCK ? rows - i0 : KERNEL_BLOCK;
        AttendKeys seen = {h->causal ? i0 + nq : rows, h->causal, i0, h->tie_tol, h->bos_extra};
        if (side->by_query) scores_by_query(h, ws, o, i0, nq, seen.n);
        else kernel_scores(&keys, seen.n, h->causal ? i0 : KERNEL_NOT_CAUSAL, ws->q_view.line, o + i0, nq, ws->S);
        kernel_attend(ws->S, &seen, nq, ws->V + o, ld, dv, A + o + i0, ld, ws->key_mask, ws->selected);
    }
}

/* A head's panels for rows [0, padded): V's lines written whole; Q's and K's lines those of F
 * that their columns copy, and the others computed (runtime/panel_view.h). */
static void head_projections(const ModelHead *h, const PanelPlan plans[2], Workspace *ws, size_t padded) {
    ws->head = h, ws->head_plans = plans, ws->padded = padded;
    panel_view_start(&ws->q_view, &plans[0], &h->wq, ws->F, ws->Q, ws->ld, padded);
    panel_view_start(&ws->k_view, &plans[1], &h->wk, ws->F, ws->K, ws->ld, padded);
    panel_columns(&h->wv, NULL, h->wv.cols, ws->F, ws->V, ws->ld, padded);
}

/* H (units h0 .. h1 - 1 of a chunk) gets epilogue e of F W + bias for rows [r0, r0 + len): a chain
 * per unit, or with classes, a chain per class given to each of its units (the same numbers). */
static void hidden_units(const Matrix *W, const UnitClasses *cls, size_t chunk, size_t h0, size_t h1, KernelEpilogue e,
                         const double *bias, Workspace *ws, size_t r0, size_t len) {
    if (!cls->used) {
        kernel_columns(matrix_columns(W) + h0, NULL, h1 - h0, ws->F + r0, 0, ws->ld, len, e, bias + h0, ws->H,
                       KERNEL_BLOCK);
        return;
    }
    size_t first = cls->chunk_start[chunk], n = cls->chunk_start[chunk + 1] - first;
    kernel_columns(cls->cols + first, NULL, n, ws->F + r0, 0, ws->ld, len, KERNEL_STORE, NULL, ws->C, KERNEL_BLOCK);
    for (size_t k = 0; k < n; k++) {
        size_t a = cls->unit_start[first + k], b = cls->unit_start[first + k + 1];
        kernel_fan_out(ws->C + k * KERNEL_BLOCK, len, e, bias + h0, cls->units + a, b - a, ws->H, KERNEL_BLOCK);
    }
}

/* F += (ReLU(F W1 + b1) * G) W2 + b2 for rows [r0, r0 + len), G = F W3 + b3 when gated, a chunk
 * of hidden units at a time; each written dim's chain over W2 goes on from chunk to chunk (in Y),
 * or, when the hidden units fit one chunk, is added to F as it ends (the same arithmetic). */
static void mlp_block(const Model *m, size_t l, Workspace *ws, size_t r0, size_t len) {
    const ModelMlp *f = &m->layers[l].mlp;
    const WritePlan *plan = &ws->writes.mlps[l];
    size_t hidden = f->w1.cols, ld = ws->ld, stored = ws->fresh ? plan->n_fresh : 0;
    const ChunkSegments *cs = &ws->segments[l];
    const MatrixColumn *cols = matrix_columns(&f->w2);
    for (size_t h0 = 0, chunk = 0; h0 < hidden; h0 += HIDDEN_CHUNK, chunk++) {
        size_t h1 = hidden - h0 < HIDDEN_CHUNK ? hidden : h0 + HIDDEN_CHUNK;
        hidden_units(&f->w1, &ws->w1_classes[l], chunk, h0, h1, KERNEL_RELU, f->b1, ws, r0, len);
        if (f->gated) hidden_units(&f->w3, &ws->w3_classes[l], chunk, h0, h1, KERNEL_GATE, f->b3, ws, r0, len);
        if (hidden <= HIDDEN_CHUNK) {
            write_product(cols, plan, ws->fresh, ws->H, KERNEL_BLOCK, len, ws->F + r0, ld);
            break;
        }
        for (size_t k = cs->start[chunk]; k < cs->start[chunk + 1]; k++) {
            const Segment *g = &cs->seg[k];
            const MatrixColumn *col = &cols[plan->dims[g->j]];
            double *y = ws->Y + (size_t)g->j * KERNEL_BLOCK;
            /* a column's first segment starts its chain from +0.0 */
            kernel_chain(col->row + g->from, col->val + g->from, g->to - g->from, ws->H, h0, KERNEL_BLOCK, len,
                         g->from ? y : NULL, y);
        }
        if (h1 == hidden)
            for (size_t j = 0; j < plan->n; j++) /* X += the chain (vectorised: one rounding per element) */
                kernel_epilogue(ws->Y + j * KERNEL_BLOCK, len, j < stored ? KERNEL_FRESH : KERNEL_ADD, 0.0,
                                ws->F + plan->dims[j] * ld + r0);
    }
    for (size_t j = 0; j < ws->b2_count[l]; j++) {
        size_t d = ws->b2_dims[l][j];
        double b = f->b2[d], *x = ws->F + d * ld + r0;
        for (size_t i = 0; i < len; i++) x[i] += b;
    }
}

/* One layer on the batch: every head reads the same F (each sequence its own rows), then the
 * heads' outputs and the MLP are added. starts[s] is sequence s's first row (starts[count] is
 * the number of rows, padded up to a multiple of 8). */
static void layer(const Model *m, size_t l, Workspace *ws, const size_t *starts, size_t count, size_t padded) {
    const ModelLayer *L = &m->layers[l];
    size_t at = 0, ld = ws->ld;
    for (size_t h = 0; h < L->n_heads; h++) {
        head_projections(&L->heads[h], ws->panels[l][h], ws, padded);
        double *A = ws->A + at * ld;
        /* from the queries' side where the keys have more entries than the queries (2 more per
           row: the cost of turning the scores key-major), judged on a batch's first sequence when
           it is longer than any before */
        HeadSide *side = &ws->sides[l][h];
        size_t dk = L->heads[h].wq.cols, rows0 = starts[1] - starts[0];
        if (rows0 > side->judged_rows) {
            side->judged_rows = rows0;
            /* counted on the view's lines: a scaled copy's is F's own, with the column's non-zeros
               but where a product underflows, which a judge of cost may miss */
            side->by_query = kernel_count_nonzero(ws->k_view.line, starts[0], dk, rows0) >
                             kernel_count_nonzero(ws->q_view.line, starts[0], dk, rows0) + 2 * rows0;
            side->sparse = sparse_ready(ws, starts[0], rows0);
            side->grouped = false;
            if (!L->heads[h].causal) { /* the queries sparse_ready gathered */
                KeyEntries queries = entries(ws, 0);
                side->grouped = query_groups(&queries, rows0, &ws->groups) * 2 <= rows0;
            }
        }
        for (size_t s = 0; s < count; s++)
            attention_sequence(&L->heads[h], ws, starts[s], starts[s + 1] - starts[s], side, A);
        for (size_t c = 0; c < L->heads[h].wv.cols; c++) /* padding rows: finite, unused */
            memset(A + c * ld + starts[count], 0, (padded - starts[count]) * sizeof *A);
        at += L->heads[h].wv.cols;
    }
    at = 0;
    for (size_t h = 0; h < L->n_heads; h++) {
        write_product(matrix_columns(&L->heads[h].wo), &ws->writes.heads[l][h], ws->fresh, ws->A + at * ld, ld, padded,
                      ws->F, ld);
        at += L->heads[h].wv.cols;
    }
    for (size_t r0 = 0; r0 < padded; r0 += KERNEL_BLOCK)
        mlp_block(m, l, ws, r0, padded - r0 < KERNEL_BLOCK ? padded - r0 : KERNEL_BLOCK);
}

/* Row-major X ((rows) x D) <-> rows [o, o + rows) of the panel F. */
static void panel_to_rows(const Workspace *ws, size_t D, size_t o, size_t rows, double *X) {
    for (size_t d = 0; d < D; d++)
        for (size_t r = 0; r < rows; r++) X[r * D + d] = ws->F[d * ws->ld + o + r];
}

static void rows_to_panel(Workspace *ws, size_t D, size_t rows, const double *X) {
    size_t padded = round_up(rows, 8);
    for (size_t d = 0; d < D; d++) {
        for (size_t r = 0; r < rows; r++) ws->F[d * ws->ld + r] = X[r * D + d];
        for (size_t r = rows; r < padded; r++) ws->F[d * ws->ld + r] = 0.0;
    }
}

void model_forward(const Model *m, const size_t *ids, size_t n, size_t first_layer, size_t end_layer, double *X,
                   Workspace *ws) {
    size_t rows = n + 1, padded = round_up(rows, 8), starts[2] = {0, rows}, D = m->d_model;
    if (first_layer == 0) {
        for (size_t r = 0; r < rows; r++) {
            ws->ids[r] = r == 0 ? m->n_vocab : ids[r - 1];
            ws->row_values[r] = r == 0 ? 0.0 : ws->token_values[r - 1];
        }
        for (size_t r = 0; r < rows; r++) ws->pos[r] = r;
        embed(m, ws, ws->ids, ws->pos, ws->row_values, rows, padded, false, ws->F);
    } else {
        rows_to_panel(ws, D, rows, X);
        ws->embedded = ws->fresh = ws->embedding_lines_zero = false;
    }
    if (end_layer > m->n_layers) end_layer = m->n_layers;
    for (size_t l = first_layer; l < end_layer; l++) layer(m, l, ws, starts, 1, padded);
    panel_to_rows(ws, D, 0, rows, X);
}

double model_forward_flops(const Model *m, size_t n) {
    double rows = (double)(n + 1), f = 0.0;
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            double nz = (double)(matrix_nonzero(&H->wq) + matrix_nonzero(&H->wk) + matrix_nonzero(&H->wv) +
                                 matrix_nonzero(&H->wo));
            f += 2 * nz * rows + rows * (double)H->wv.cols;
        }
        const ModelMlp *M = &L->mlp;
        double nz = (double)(matrix_nonzero(&M->w1) + matrix_nonzero(&M->w2) + (M->gated ? matrix_nonzero(&M->w3) : 0));
        f += 2 * nz * rows + rows * (double)M->w1.cols * (M->gated ? 3 : 1);
    }
    return f;
}

/* ---- workspace ---- */

/* W2's entries cut at the hidden chunks: per chunk, for each written dim (plan order) that has
 * entries in it, the range of that column's entries. */
static void plan_segments(Arena *a, const Matrix *W2, const WritePlan *plan, ChunkSegments *cs) {
    size_t chunks = (W2->rows + HIDDEN_CHUNK - 1) / HIDDEN_CHUNK;
    cs->start = ARENA_ARRAY(a, size_t, chunks + 2);
    for (int pass = 0; pass < 2; pass++) {
        size_t *fill = pass ? ARENA_ARRAY(a, size_t, chunks + 1) : NULL;
        if (pass) {
            for (size_t c = 0; c < chunks; c++) cs->start[c + 1] += cs->start[c];
            cs->seg = ARENA_ARRAY(a, Segment, cs->start[chunks] ? cs->start[chunks] : 1);
            memcpy(fill, cs->start, chunks * sizeof *fill);
        }
        for (size_t j = 0; j < plan->n; j++) {
            MatrixColumn col = matrix_column(W2, plan->dims[j]);
            for (uint32_t from = 0; from < col.n;) {
                size_t chunk = col.row[from] / HIDDEN_CHUNK;
                uint32_t to = from;
                while (to < col.n && col.row[to] / HIDDEN_CHUNK == chunk) to++;
                if (pass) cs->seg[fill[chunk]++] = (Segment){(uint32_t)j, from, to};
                else cs->start[chunk + 1]++;
                from = to;
            }
        }
    }
}

static bool same_column(MatrixColumn a, MatrixColumn b) {
    return a.n == b.n && (a.n == 0 || (!memcmp(a.row, b.row, a.n * sizeof *a.row) &&
                                       !memcmp(a.val, b.val, a.n * sizeof *a.val))); /* an empty column has no arrays */
}

/* A hash of a column's entries (rows and value bits). */
static uint64_t column_hash(MatrixColumn col) {
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t h = col.n * k;
    for (uint32_t e = 0; e < col.n; e++) {
        uint64_t bits;
        memcpy(&bits, &col.val[e], sizeof bits);
        h = ((h ^ col.row[e]) * k ^ bits) * k;
    }
    return h ^ (h >> 29);
}

/* W's columns (hidden units) by equal column within each chunk, in order of first appearance
 * (found through a hash table of 2 x HIDDEN_CHUNK slots, cleared per chunk). The workspace keeps
 * the classes only where they are used. False when out of memory. */
static bool plan_classes(Arena *a, const Matrix *W, UnitClasses *cls) {
    size_t hidden = W->cols, chunks = (hidden + HIDDEN_CHUNK - 1) / HIDDEN_CHUNK, n = 0, slots = 2 * HIDDEN_CHUNK;
    uint32_t *class_of = malloc((hidden + 1) * sizeof *class_of), *table = malloc(slots * sizeof *table);
    size_t *count = calloc(hidden + 1, sizeof *count), *chunk_start = malloc((chunks + 1) * sizeof *chunk_start);
    MatrixColumn *cols = malloc((hidden + 1) * sizeof *cols);
    bool ok = class_of && table && count && chunk_start && cols;
    for (size_t c = 0; ok && c < chunks; c++) {
        size_t h0 = c * HIDDEN_CHUNK, h1 = hidden - h0 < HIDDEN_CHUNK ? hidden : h0 + HIDDEN_CHUNK;
        chunk_start[c] = n;
        memset(table, 0, slots * sizeof *table); /* slot: class + 1, or 0 */
        for (size_t u = h0; u < h1; u++) {
            MatrixColumn col = matrix_column(W, u);
            size_t slot = (size_t)column_hash(col) % slots;
            while (table[slot] && !same_column(cols[table[slot] - 1], col)) slot = (slot + 1) % slots;
            if (!table[slot]) {
                cols[n] = col;
                table[slot] = (uint32_t)++n;
            }
            class_of[u] = table[slot] - 1;
            count[table[slot] - 1]++;
        }
    }
    cls->used = ok && n * 4 <= hidden;
    if (cls->used) {
        chunk_start[chunks] = n;
        cls->chunk_start = ARENA_ARRAY(a, size_t, chunks + 1);
        memcpy(cls->chunk_start, chunk_start, (chunks + 1) * sizeof *chunk_start);
        cls->cols = ARENA_ARRAY(a, MatrixColumn, n + 1);
        memcpy(cls->cols, cols, n * sizeof *cols);
        cls->unit_start = ARENA_ARRAY(a, size_t, n + 1);
        for (size_t k = 0; k < n; k++) cls->unit_start[k + 1] = cls->unit_start[k] + count[k];
        cls->units = ARENA_ARRAY(a, uint32_t, hidden + 1);
        memset(count, 0, (n + 1) * sizeof *count);
        for (size_t u = 0; u < hidden; u++) {
            size_t k = class_of[u];
            cls->units[cls->unit_start[k] + count[k]++] = (uint32_t)(u % HIDDEN_CHUNK);
        }
    }
    free(class_of), free(table), free(count), free(chunk_start), free(cols);
    return ok;
}

/* The most classes a chunk of cls has (0 when cls is not used). */
static size_t most_classes(const UnitClasses *cls, size_t hidden) {
    size_t most = 0, chunks = (hidden + HIDDEN_CHUNK - 1) / HIDDEN_CHUNK;
    for (size_t c = 0; cls->used && c < chunks; c++) most = max_sz(most, cls->chunk_start[c + 1] - cls->chunk_start[c]);
    return most;
}

static void plan_int_ids(Workspace *ws, const Model *m);

/* The dims the checks, the readout and the error flag read (runtime/model.h), ascending. */
static void plan_reads(Workspace *ws, const Model *m) {
    size_t D = m->d_model;
    bool *read = ARENA_ARRAY(&ws->arena, bool, D ? D : 1);
    if (m->output_kind == MODEL_OUT_NUMERICAL)
        for (size_t d = 0; d < D; d++) read[d] = true;
    for (size_t j = 0; j < m->out_count && m->output_kind == MODEL_OUT_CATEGORICAL; j++) read[m->out_dim + j] = true;
    for (size_t c = 0; c < m->n_checks; c++) {
        const ModelCheck *k = &m->checks[c];
        if (k->kind == MODEL_CHECK_MARGIN)
            for (size_t t = 0; t < m->margins[k->dim].n_terms; t++) read[m->margins[k->dim].dims[t]] = true;
        else
            for (size_t j = 0; j < k->count; j++) read[k->dim + j] = true;
    }
    if (m->has_error_flag) read[m->error_flag_dim] = true;
    ws->read_dims = ARENA_ARRAY(&ws->arena, uint32_t, D ? D : 1);
    for (size_t d = 0; d < D; d++)
        if (read[d]) ws->read_dims[ws->n_read++] = (uint32_t)d;
}

/* Per dim: whether only the embedding writes it, and from the token alone or from the position
 * alone (runtime/panel_view.h's lists). */
static const bool *embedding_dims(Arena *a, const Model *m, const WritePlans *writes) {
    size_t D = m->d_model;
    bool *by_one = ARENA_ARRAY(a, bool, D ? D : 1);
    for (size_t d = 0; d < D; d++)
        by_one[d] = writes->is_embedding_only[d] &&
                    !(matrix_column(&m->token_embed, d).n && matrix_column(&m->pos_embed, d).n);
    return by_one;
}

bool workspace_init(Workspace *ws, const Model *m, char *err, size_t errsize) {
    return workspace_init_rows(ws, m, 0, err, errsize);
}

bool workspace_init_rows(Workspace *ws, const Model *m, size_t want_rows, char *err, size_t errsize) {
    memset(ws, 0, sizeof *ws);
    arena_init(&ws->arena);
    size_t D = m->d_model, seq = m->max_len + 1;
    size_t cap = max_sz(want_rows ? want_rows : DEFAULT_ROWS, seq);
    if (seq > WORKSPACE_MAX_DOUBLES / 2 || cap > WORKSPACE_MAX_DOUBLES / 2) {
        arena_free(&ws->arena);
        snprintf(err, errsize, "workspace for max length %zu would be too large", m->max_len);
        return false;
    }
    size_t ld = round_up(cap, KERNEL_BLOCK) + 8; /* slack: a sequence's last score block may read past it */
    size_t dk = 0, dv = 0, layer_dv = 0, writes = 0, chains = 0;
    write_plans(&ws->arena, m, &ws->writes);
    ws->sides = ARENA_ARRAY(&ws->arena, HeadSide *, m->n_layers ? m->n_layers : 1);
    ws->panels = ARENA_ARRAY(&ws->arena, PanelPlan **, m->n_layers ? m->n_layers : 1);
    PanelEmbedding emb = {&m->token_embed, &m->pos_embed, embedding_dims(&ws->arena, m, &ws->writes)};
    ws->segments = ARENA_ARRAY(&ws->arena, ChunkSegments, m->n_layers ? m->n_layers : 1);
    ws->w1_classes = ARENA_ARRAY(&ws->arena, UnitClasses, m->n_layers ? m->n_layers : 1);
    ws->w3_classes = ARENA_ARRAY(&ws->arena, UnitClasses, m->n_layers ? m->n_layers : 1);
    ws->b2_dims = ARENA_ARRAY(&ws->arena, uint32_t *, m->n_layers ? m->n_layers : 1);
    ws->b2_count = ARENA_ARRAY(&ws->arena, size_t, m->n_layers ? m->n_layers : 1);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        size_t sum_dv = 0;
        ws->sides[l] = ARENA_ARRAY(&ws->arena, HeadSide, L->n_heads ? L->n_heads : 1);
        ws->panels[l] = ARENA_ARRAY(&ws->arena, PanelPlan *, L->n_heads ? L->n_heads : 1);
        for (size_t h = 0; h < L->n_heads; h++) {
            const ModelHead *H = &L->heads[h];
            ws->panels[l][h] = ARENA_ARRAY(&ws->arena, PanelPlan, 2);
            panel_plan(&ws->arena, &H->wq, &emb, &ws->panels[l][h][0]);
            panel_plan(&ws->arena, &H->wk, &emb, &ws->panels[l][h][1]);
            dk = max_sz(dk, H->wq.cols);
            dv = max_sz(dv, H->wv.cols);
            sum_dv += H->wv.cols;
            writes = max_sz(writes, ws->writes.heads[l][h].n);
        }
        layer_dv = max_sz(layer_dv, sum_dv);
        plan_segments(&ws->arena, &L->mlp.w2, &ws->writes.mlps[l], &ws->segments[l]);
        if (!plan_classes(&ws->arena, &L->mlp.w1, &ws->w1_classes[l]) ||
            (L->mlp.gated && !plan_classes(&ws->arena, &L->mlp.w3, &ws->w3_classes[l]))) {
            arena_free(&ws->arena);
            snprintf(err, errsize, "out of memory for the workspace's plans");
            return false;
        }
        chains = max_sz(chains, most_classes(&ws->w1_classes[l], L->mlp.w1.cols));
        if (L->mlp.gated) chains = max_sz(chains, most_classes(&ws->w3_classes[l], L->mlp.w3.cols));
        writes = max_sz(writes, ws->writes.mlps[l].n);
        ws->b2_dims[l] = ARENA_ARRAY(&ws->arena, uint32_t, D ? D : 1);
        for (size_t j = 0; j < D; j++)
            if (L->mlp.b2[j] != 0.0) ws->b2_dims[l][ws->b2_count[l]++] = (uint32_t)j;
    }
    /* panels of ld doubles per line, blocks of KERNEL_BLOCK, and rows of D */
    size_t sizes[] = {D * ld, dk * ld, dk * ld, dv * ld, layer_dv * ld, KERNEL_BLOCK * (round_up(seq, 8) + 8),
                      HIDDEN_CHUNK * KERNEL_BLOCK, writes * KERNEL_BLOCK, seq * D, seq, ld, seq * dk,
                      seq * dk, KERNEL_BLOCK * KERNEL_BLOCK, chains * KERNEL_BLOCK};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t w = sizes[i] ? sizes[i] : 1;
        if (w > WORKSPACE_MAX_DOUBLES || total > WORKSPACE_MAX_DOUBLES - w) {
            arena_free(&ws->arena);
            snprintf(err, errsize, "workspace for max length %zu would be too large", m->max_len);
            return false;
        }
        total += w;
    }
    ws->block = calloc(total, sizeof(double));
    ws->embedding_lines_zero = true; /* F, like every buffer, starts zeroed */
    if (!ws->block) {
        arena_free(&ws->arena);
        snprintf(err, errsize, "out of memory for the workspace (%zu doubles)", total);
        return false;
    }
    double *p = ws->block;
    double **bufs[] = {&ws->F, &ws->Q, &ws->K, &ws->V, &ws->A, &ws->S, &ws->H, &ws->Y, &ws->X,
                       &ws->token_values, &ws->row_values, &ws->key_val, &ws->query_val, &ws->T, &ws->C};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        *bufs[i] = p;
        p += sizes[i] ? sizes[i] : 1;
    }
    ws->cap_rows = cap;
    ws->ld = ld;
    ws->ids = ARENA_ARRAY(&ws->arena, size_t, ld);
    ws->pos = ARENA_ARRAY(&ws->arena, size_t, ld);
    ws->seq_start = ARENA_ARRAY(&ws->arena, size_t, cap + 1);
    ws->seq_input = ARENA_ARRAY(&ws->arena, size_t, cap + 1);
    ws->selected = ARENA_ARRAY(&ws->arena, uint32_t, KERNEL_BLOCK / 8 * seq);
    ws->key_dim = ARENA_ARRAY(&ws->arena, uint32_t, seq * (dk ? dk : 1));
    ws->key_count = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->hot = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->query_dim = ARENA_ARRAY(&ws->arena, uint32_t, seq * (dk ? dk : 1));
    ws->query_count = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->sparse.start = ARENA_ARRAY(&ws->arena, uint32_t, dk + 1);
    ws->sparse.keys = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->groups.group = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->groups.first = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    for (ws->groups.table_size = 2; ws->groups.table_size < 2 * seq; ws->groups.table_size *= 2) {}
    ws->groups.table = ARENA_ARRAY(&ws->arena, uint32_t, ws->groups.table_size);
    ws->groups.n_ids = m->n_vocab + 1;
    ws->groups.by_id = ARENA_ARRAY(&ws->arena, uint32_t, ws->groups.n_ids);
    ws->group_out = ARENA_ARRAY(&ws->arena, double, KERNEL_BLOCK * (dv ? dv : 1));
    ws->sparse.visit = ARENA_ARRAY(&ws->arena, uint32_t, seq);
    ws->sparse.score = ARENA_ARRAY(&ws->arena, double, seq);
    ws->key_mask = ARENA_ARRAY(&ws->arena, uint8_t, KERNEL_BLOCK / 8 * seq);
    ws->qrow = ARENA_ARRAY(&ws->arena, uint32_t, KERNEL_BLOCK * (dk ? dk : 1));
    panel_view_init(&ws->arena, dk, &ws->q_view);
    panel_view_init(&ws->arena, dk, &ws->k_view);
    plan_int_ids(ws, m);
    ws->token_rows = matrix_rows(&ws->arena, &m->token_embed);
    ws->pos_rows = matrix_rows(&ws->arena, &m->pos_embed);
    ws->embed_disjoint = true;
    for (size_t d = 0; d < D && ws->embed_disjoint; d++)
        ws->embed_disjoint = !(matrix_column(&m->token_embed, d).n && matrix_column(&m->pos_embed, d).n);
    plan_reads(ws, m);
    return true;
}

bool workspace_use_float32(Workspace *ws, const Model *m, char *err, size_t errsize) {
    if (ws->f32) return true;
    ModelPrecision p;
    model_precision(m, PRECISION_U32, true, &p);
    if (!p.safe) {
        snprintf(err, errsize, "float32 is not shown safe for this model: largest error bound / margin %.2g (%s)%s%s",
                 p.worst, p.worst_what[0] ? p.worst_what : "no decision", p.uncovered[0] ? "; not covered: " : "",
                 p.uncovered);
        return false;
    }
    return forward32_new(&ws->f32, m, ws, err, errsize);
}

/* Python's == on a token and a vocabulary atom (1 == 1.0), but -0.0 is not 0.0: the program
 * can print the sign, so a model embeds them as two tokens. */
static bool same_token(Value a, Value b) {
    if (a.kind == VAL_INT && b.kind == VAL_INT) return a.as.i == b.as.i; /* the common case, without value_equal's dispatch */
    if (a.kind == VAL_FLOAT && b.kind == VAL_FLOAT && a.as.f == 0 && b.as.f == 0) return signbit(a.as.f) == signbit(b.as.f);
    return value_equal(a, b);
}

void workspace_free(Workspace *ws) {
    forward32_free(ws->f32);
    free(ws->block);
    arena_free(&ws->arena);
    memset(ws, 0, sizeof *ws);
}

/* ---- running one input ---- */

/* The reference's first checks of an input, in its order: every token converted to the program's
 * token type (the first failure's message), then the model's length limit. */
static bool convertible(const Model *m, const Value *input, size_t n, char *err, size_t errsize) {
    for (size_t i = 0; i < n; i++) {
        Value tok;
        if (!ir_convert_token((IrTokenType)m->token_type, input[i], &tok, err, errsize)) return false;
    }
    if (n > m->max_len) {
        snprintf(err, errsize, "input has length %zu > max length %zu", n, m->max_len);
        return false;
    }
    return true;
}

bool model_tokenize(const Model *m, const Value *input, size_t n, size_t *ids, double *values, char *err,
                    size_t errsize) {
    if (n > m->max_len) return convertible(m, input, n, err, errsize); /* false: its first error */
    size_t bad = SIZE_MAX; /* the first token outside the vocabulary or range: reported unless a
                              later token does not convert (the reference converts them all first) */
    for (size_t i = 0; i < n; i++) {
        Value tok;
        if (!ir_convert_token((IrTokenType)m->token_type, input[i], &tok, err, errsize)) return false;
        if (bad != SIZE_MAX) continue;
        if (m->numeric_tokens) {
            double v = value_as_double(tok);
            if (!(v >= m->token_lo && v <= m->token_hi)) {
                char text[120]; /* the input's atom as the vocabulary's message prints it: 3.0, not 3 */
                value_format(input[i], text, sizeof text);
                snprintf(err, errsize, "token %s at position %zu is outside the range %g..%g the model was compiled for",
                         text, i, m->token_lo, m->token_hi);
                bad = i;
                continue;
            }
            ids[i] = 0;
            if (values) values[i] = v;
            continue;
        }
        size_t id = m->n_vocab;
        for (size_t v = 0; v < m->n_vocab && id == m->n_vocab; v++)
            if (same_token(tok, m->vocab[v])) id = v;
        if (id == m->n_vocab) {
            char text[120];
            value_format(input[i], text, sizeof text);
            snprintf(err, errsize, "token %s at position %zu is not in the vocabulary", text, i);
            bad = i;
            continue;
        }
        ids[i] = id;
    }
    return bad == SIZE_MAX;
}

/* The ids of the integers [int_lo, int_lo + int_n) as model_tokenize finds them (the first
 * vocabulary atom equal to each, n_vocab for none), for a model with integer tokens whose
 * vocabulary's integral atoms span at most WORKSPACE_INT_TABLE integers; none (int_n 0)
 * otherwise. */
static void plan_int_ids(Workspace *ws, const Model *m) {
    ws->int_n = 0;
    if (m->numeric_tokens || m->token_type != IR_TOKENS_INT) return;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t v = 0; v < m->n_vocab; v++) { /* the integers an atom may equal: 1 == 1.0 == True */
        Value a = m->vocab[v];
        double f = a.kind == VAL_FLOAT ? a.as.f : 0.0;
        if (a.kind == VAL_FLOAT && !(fabs(f) <= 9007199254740992.0 && f == floor(f))) continue;
        if (a.kind != VAL_INT && a.kind != VAL_BOOL && a.kind != VAL_FLOAT) continue;
        int64_t x = a.kind == VAL_INT ? a.as.i : a.kind == VAL_BOOL ? (int64_t)a.as.b : (int64_t)f;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    if (lo > hi || (uint64_t)hi - (uint64_t)lo >= WORKSPACE_INT_TABLE) return;
    ws->int_lo = lo;
    ws->int_n = (size_t)((uint64_t)hi - (uint64_t)lo) + 1;
    ws->int_id = ARENA_ARRAY(&ws->arena, uint32_t, ws->int_n);
    for (size_t k = 0; k < ws->int_n; k++) {
        Value x = value_int(lo + (int64_t)k);
        size_t id = m->n_vocab;
        for (size_t v = 0; v < m->n_vocab && id == m->n_vocab; v++)
            if (same_token(x, m->vocab[v])) id = v;
        ws->int_id[k] = (uint32_t)id;
    }
}

/* model_tokenize, integers looked up in the workspace's table (the same ids); anything else, and
 * every error, by model_tokenize. */
static bool tokenize(const Model *m, const Workspace *ws, const Value *input, size_t n, size_t *ids, double *values,
                     char *err, size_t errsize) {
    size_t i = 0;
    for (; ws->int_n && n <= m->max_len && i < n; i++) {
        if (input[i].kind != VAL_INT || (uint64_t)input[i].as.i - (uint64_t)ws->int_lo >= ws->int_n) break;
        uint32_t id = ws->int_id[(uint64_t)input[i].as.i - (uint64_t)ws->int_lo];
        if (id == m->n_vocab) break;
        ids[i] = id;
    }
    return i == n || model_tokenize(m, input, n, ids, values, err, errsize);
}

bool model_block_one_hot(const double *x, size_t dim, size_t count, size_t *hot) {
    size_t ones = 0;
    for (size_t j = 0; j < count; j++) {
        double v = x[dim + j];
        if (v == 0.0) continue; /* the common case: neither a one nor off (the tolerance is below 1) */
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

/* The checks tested after layer l (runtime/model.h), in their order, on one sequence's rows X
 * ((n+1) x D, row-major); false with the first failure's message. */
static bool run_checks(const Model *m, size_t l, const double *X, size_t n, char *err, size_t errsize) {
    size_t D = m->d_model;
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
    return true;
}

static void fail_outcome(ModelOutcome *o, Arena *a, const char *err) {
    o->ok = false;
    o->out = NULL;
    o->err = arena_strdup(a, err);
}

/* The error flag of one sequence's rows X against its outcome (MODEL_FLAG_ERROR). A non-finite
 * number is outside the flag (errflag.h); a set flag on an answered input inside the flag's band
 * (runtime/flag_band.h) is a note. */
static void compare_flag(const Model *m, const double *X, size_t n, ModelOutcome *o, Arena *a) {
    size_t D = m->d_model, first_set = n;
    o->flag = ARENA_ARRAY(a, double, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        o->flag[i] = X[(i + 1) * D + m->error_flag_dim];
        if (o->flag[i] != 0 && first_set == n) first_set = i; /* NaN counts as set */
    }
    char err[1200], band[600];
    if (o->ok && first_set < n && flag_in_band(m, X, n, band, sizeof band)) {
        snprintf(err, sizeof err, "the error flag is set (%.17g at position %zu) though every check passes: %s, inside "
                 "the flag's band", o->flag[first_set], first_set, band);
        o->note = arena_strdup(a, err);
        return;
    }
    if (o->ok && first_set < n)
        snprintf(err, sizeof err, MODEL_FLAG_ERROR ": every check passes, but err is %.17g at position %zu", o->flag[first_set],
                 first_set);
    else if (!o->ok && first_set == n && !strstr(o->err, "not a finite number"))
        snprintf(err, sizeof err, MODEL_FLAG_ERROR ": err is 0 at every position, but the input fails: %s", o->err);
    else
        return;
    double *flag = o->flag;
    fail_outcome(o, a, err);
    o->flag = flag;
}

/* Rows [o, o + rows) of the batch's residual, in float64, into X (row-major): the dims the checks
 * and the readout read. */
static void batch_rows(const Workspace *ws, size_t D, size_t o, size_t rows, double *X) {
    if (ws->f32) {
        forward32_rows(ws, D, o, rows, X);
        return;
    }
    for (size_t t = 0; t < ws->n_read; t++) {
        size_t d = ws->read_dims[t];
        for (size_t r = 0; r < rows; r++) X[r * D + d] = ws->F[d * ws->ld + o + r];
    }
}

/* A categorical output read from the batch's lines (rows [o + 1, o + 1 + n)) at once; at the first
 * position that is not one-hot, the input fails with model_read_output's own message. */
static void read_one_hot(const Model *m, Workspace *ws, size_t o, size_t n, ModelOutcome *oc, Arena *out_arena) {
    size_t D = m->d_model;
    char err[1024];
    kernel_one_hot(ws->F + m->out_dim * ws->ld + o + 1, ws->ld, m->out_count, n, MODEL_ONEHOT_TOL, ws->hot);
    oc->out = ARENA_ARRAY(out_arena, Value, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        if (ws->hot[i] != KERNEL_NOT_ONE_HOT) {
            oc->out[i] = m->out_values[ws->hot[i]];
            continue;
        }
        batch_rows(ws, D, o, n + 1, ws->X);
        if (!model_read_output(m, ws->X + (i + 1) * D, i, n, &oc->out[i], err, sizeof err)) {
            fail_outcome(oc, out_arena, err);
            return;
        }
    }
}

/* Runs the sequences already tokenized into the workspace (rows [starts[s], starts[s+1]) hold
 * inputs idx[s]), checks included, and reads their outputs. */
static void run_rows(const Model *m, Workspace *ws, const size_t *starts, const size_t *idx, size_t count,
                     Arena *out_arena, ModelOutcome *outcomes) {
    size_t D = m->d_model, padded = round_up(starts[count], 8);
    char err[1024];
    if (ws->f32) forward32_embed(m, ws, starts[count], padded);
    else embed(m, ws, ws->ids, ws->pos, ws->row_values, starts[count], padded, true, ws->F);
    for (size_t l = 0; l < m->n_layers; l++) {
        if (ws->f32) forward32_layer(m, l, ws, starts, count, padded);
        else layer(m, l, ws, starts, count, padded);
        bool checked = false;
        for (size_t c = 0; c < m->n_checks && !checked; c++) checked = m->checks[c].after_layer == l;
        for (size_t s = 0; checked && s < count; s++) {
            ModelOutcome *o = &outcomes[idx[s]];
            if (!o->ok) continue; /* failed after an earlier layer: its first failure stands */
            size_t rows = starts[s + 1] - starts[s];
            batch_rows(ws, D, starts[s], rows, ws->X);
            if (!run_checks(m, l, ws->X, rows - 1, err, sizeof err)) fail_outcome(o, out_arena, err);
        }
    }
    for (size_t s = 0; s < count; s++) {
        ModelOutcome *o = &outcomes[idx[s]];
        if (!o->ok && !m->has_error_flag) continue;
        size_t n = starts[s + 1] - starts[s] - 1;
        if (!ws->f32 && m->output_kind == MODEL_OUT_CATEGORICAL && !m->has_error_flag) {
            read_one_hot(m, ws, starts[s], n, o, out_arena);
            continue;
        }
        batch_rows(ws, D, starts[s], n + 1, ws->X);
        if (o->ok) {
            o->out = ARENA_ARRAY(out_arena, Value, n ? n : 1);
            for (size_t i = 0; i < n && o->ok; i++)
                if (!model_read_output(m, ws->X + (i + 1) * D, i, n, &o->out[i], err, sizeof err))
                    fail_outcome(o, out_arena, err);
        }
        if (m->has_error_flag) compare_flag(m, ws->X, n, o, out_arena);
    }
    if (!ws->f32) clear_embedding(ws, ws->ids, ws->pos, starts[count]);
}

void model_run_batch(const Model *m, Workspace *ws, const Value *const *inputs, const size_t *lens, size_t count,
                     Arena *out_arena, ModelOutcome *outcomes) {
    size_t cap = ws->cap_rows, *seq_start = ws->seq_start, *idx = ws->seq_input;
    char err[1024];
    size_t i = 0;
    while (i < count) {
        size_t used = 0, k = 0;
        for (; i < count; i++) {
            size_t n = lens[i];
            ModelOutcome *o = &outcomes[i];
            o->ok = true;
            o->out = NULL;
            o->err = NULL;
            o->flag = NULL;
            o->note = NULL;
            if (n > m->max_len) { /* not tokenized (it would not fit): its first error */
                convertible(m, inputs[i], n, err, sizeof err);
                fail_outcome(o, out_arena, err);
                continue;
            }
            if (used + n + 1 > cap) break; /* the next batch starts with it */
            if (!tokenize(m, ws, inputs[i], n, ws->ids + used + 1, ws->row_values + used + 1, err, sizeof err)) {
                fail_outcome(o, out_arena, err);
                continue;
            }
            ws->ids[used] = m->n_vocab;
            ws->row_values[used] = 0.0;
            for (size_t p = 0; p <= n; p++) ws->pos[used + p] = p;
            seq_start[k] = used;
            idx[k++] = i;
            used += n + 1;
        }
        seq_start[k] = used;
        if (k) run_rows(m, ws, seq_start, idx, k, out_arena, outcomes);
    }
}

bool model_run(const Model *m, Workspace *ws, const Value *input, size_t n, Arena *out_arena, Value **out, char *err,
               size_t errsize) {
    ModelOutcome o;
    model_run_batch(m, ws, &input, &n, 1, out_arena, &o);
    if (!o.ok) {
        snprintf(err, errsize, "%s", o.err);
        return false;
    }
    *out = o.out;
    return true;
}
