/* Where the lines of a head's query and key panels are. A compiled head's W_Q and W_K are mostly
 * columns with one entry (a copy of one residual dim, a token's or a position's one-hot code,
 * with a weight: 1.0, or -1.0 where a score subtracts). Such a panel line is the residual's own
 * line times that weight, so it is not computed:
 *   - gathering a query's or key's entries (kernel_gather_keys) reads the residual's line and
 *     multiplies each non-zero by the weight: w * x is the product fma(w, x, +0.0) wherever that
 *     is not zero;
 *   - reading the panel line by line (kernel_scores' dense side, kernel_count_nonzero) takes the
 *     residual's line where the weight is 1.0 (x and fma(1.0, x, +0.0) differ only in the sign
 *     of a zero, which those readers skip), and the other copies are computed first, once per
 *     batch, only when a batch reads that panel so (panel_view_lines).
 * Columns with more than one entry (or none) are computed for every batch.
 *
 * A copy of a dim that only the embedding writes, from the token alone or from the position alone
 * (a token's or a position's one-hot code), holds in row r a number known from r's token id or
 * position. The plan lists such a column's entries per token id and per position, and a gather of
 * a panel made mostly of them (panel_view_gather) takes each row's entries from its two lists and
 * scans only the few other lines, instead of scanning every line. */
#ifndef RASPCC_RUNTIME_PANEL_VIEW_H
#define RASPCC_RUNTIME_PANEL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/kernels.h"
#include "runtime/matrix.h"
#include "support/arena.h"

#define PANEL_COMPUTED UINT32_MAX

/* Entries (column, value) listed by token id or by position: those of `at` are [start[at],
 * start[at + 1]) of col and val, ascending by column. */
typedef struct ListedEntries {
    uint32_t *start, *col;
    double *val;
} ListedEntries;

/* What the lists are made from: the model's embeddings (token id n_vocab is BOS; (n_vocab + 1) x D
 * and (max_len + 1) x D) and, per residual dim, whether only the embedding writes it and from one
 * of the two (no layer writes it, it is not the real-valued tokens' dim, and it is not stored in
 * both embeddings). */
typedef struct PanelEmbedding {
    const Matrix *token, *pos;
    const bool *by_one;
} PanelEmbedding;

/* At most this many scanned lines beside listed ones: each is scanned one key at a time. */
#define PANEL_LISTED_SCANS 8

/* Made once per matrix. */
typedef struct PanelPlan {
    uint32_t *copy_of;  /* per column: the residual dim its one entry reads, or PANEL_COMPUTED */
    double *weight;     /* per column: that entry's weight */
    uint32_t *computed; /* the columns computed for every batch, ascending */
    size_t n_computed;
    uint32_t *scaled;   /* the copies whose weight is not 1.0, ascending */
    size_t n_scaled;
    bool listed;        /* the listed columns' entries come from by_token and by_pos, and the
                           other columns (at most PANEL_LISTED_SCANS: scans) from their lines */
    ListedEntries by_token, by_pos;
    uint32_t *scans;
    size_t n_scans;
    bool token_only;    /* listed, no scans and no entry by position: a row's entries are its
                           token id's list */
} PanelPlan;

/* A batch's panel: line c times scale[c] is the panel's column c (rows from 0). */
typedef struct PanelView {
    const double **line; /* per column */
    double *scale;       /* per column: 1.0, or a scaled copy's weight */
    bool lines;          /* every scale is 1.0: the lines are the panel's, to read line by line */
} PanelView;

/* emb may be NULL (no lists). */
void panel_plan(Arena *a, const Matrix *W, const PanelEmbedding *emb, PanelPlan *p);

/* Columns which[0 .. n) of the panel F W (which NULL: columns 0 .. n-1), rows [0, padded) (a
 * multiple of 8), into their lines of `panel` (line c at panel + c * ld; F has lines of ld
 * doubles). */
void panel_columns(const Matrix *W, const uint32_t *which, size_t n, const double *F, double *panel, size_t ld,
                   size_t padded);

/* A view with room for `cols` columns. */
void panel_view_init(Arena *a, size_t cols, PanelView *v);

/* A new batch: the computed columns of the panel F W for rows [0, padded) (a multiple of 8) into
 * their lines of `panel` (line c at panel + c * ld; F has lines of ld doubles), and the view. */
void panel_view_start(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded);

/* The entries of rows [o, o + rows) of the view's panel, as kernel_gather_keys gives them from its
 * lines; from the plan's lists where it has them and `embedded` (the batch's F holds what the
 * embedding wrote in the dims only it writes), row r of the batch having token id ids[r] and
 * position pos[r]. */
void panel_view_gather(const PanelView *v, const PanelPlan *p, bool embedded, const size_t *ids, const size_t *pos,
                       size_t o, size_t rows, const KeyEntries *e);

/* Makes every line of the view the panel's column itself (scale 1.0): the scaled copies computed
 * into the panel, rows [0, padded), if not yet for this batch. */
void panel_view_lines(PanelView *v, const PanelPlan *p, const Matrix *W, const double *F, double *panel, size_t ld,
                      size_t padded);

#endif
