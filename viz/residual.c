#include "viz/residual.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/forward.h"

/* An atom as value_format writes it: a number, True, False or a quoted string. */
static bool is_value(const char *s) {
    size_t n = strlen(s);
    if (n == 0) return false;
    if (!strcmp(s, "True") || !strcmp(s, "False")) return true;
    if (s[0] == '"') return n >= 2 && s[n - 1] == '"';
    if (!(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.' || s[0] == 'i' || s[0] == 'n'))
        return false;
    char *end;
    strtod(s, &end);
    return end != s && *end == '\0';
}

static bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* sop = ["1/"] ident ["@" digits ":" digits]; its length, or 0. */
static size_t sop_length(const char *s) {
    size_t i = strncmp(s, "1/", 2) == 0 ? 2 : 0, start = i;
    while (is_ident_char(s[i])) i++;
    if (i == start) return 0;
    if (s[i] == '@') {
        size_t j = i + 1, d1 = j;
        while (isdigit((unsigned char)s[j])) j++;
        if (j > d1 && s[j] == ':') {
            size_t d2 = ++j;
            while (isdigit((unsigned char)s[j])) j++;
            if (j > d2) i = j;
        }
    }
    return i;
}

size_t residual_parse_label(Arena *a, const char *label, const char **qualifier, const char **value) {
    *qualifier = "";
    *value = NULL;
    size_t n = sop_length(label);
    if (n == 0 || (label[n] != '\0' && label[n] != ':')) return 0;
    if (label[n] == '\0') return n;
    const char *rest = label + n + 1;
    if (is_value(rest)) {
        *value = rest;
        return n;
    }
    for (const char *c = strchr(rest, ':'); c; c = strchr(c + 1, ':'))
        if (c > rest && is_value(c + 1)) {
            *qualifier = arena_strndup(a, rest, (size_t)(c - rest));
            *value = c + 1;
            return n;
        }
    *qualifier = rest;
    return n;
}

bool residual_label_is(const char *label, const char *key) {
    size_t k = strlen(key);
    return strncmp(label, key, k) == 0 && (label[k] == '\0' || label[k] == ':');
}

/* The value as shown: a string without its quotes. */
static const char *display_value(Arena *a, const char *v) {
    size_t n = strlen(v);
    return v[0] == '"' ? arena_strndup(a, v + 1, n - 2) : v;
}

static void add_writer(Arena *a, ResidualLayout *L, size_t *cap, size_t d, ResidualWriter w) {
    if (L->n_writers[d] && !memcmp(&L->writers[d][L->n_writers[d] - 1], &w, sizeof w)) return;
    if (L->n_writers[d] == cap[d]) {
        size_t c = cap[d] ? 2 * cap[d] : 2;
        L->writers[d] = arena_grow(a, L->writers[d], L->n_writers[d], c, sizeof(ResidualWriter));
        cap[d] = c;
    }
    L->writers[d][L->n_writers[d]++] = w;
}

/* The columns of W (rows x D) with a non-zero entry get writer w. */
static void columns_written(Arena *a, ResidualLayout *L, size_t *cap, const Matrix *W, ResidualWriter w) {
    for (size_t c = 0; c < W->cols; c++) {
        MatrixColumn col = matrix_column(W, c);
        bool any = false;
        for (uint32_t k = 0; k < col.n && !any; k++) any = col.val[k] != 0.0;
        if (any) add_writer(a, L, cap, c, w);
    }
}

/* In model order, so each dim's list is in model order and a writer repeats only back to back. */
static void find_writers(Arena *a, const Model *m, ResidualLayout *L) {
    size_t D = m->d_model, *cap = calloc(D ? D : 1, sizeof *cap);
    if (!cap) abort();
    ResidualWriter embed = {WRITER_EMBED, 0, 0};
    columns_written(a, L, cap, &m->token_embed, embed);
    columns_written(a, L, cap, &m->pos_embed, embed);
    if (m->numeric_tokens && m->token_value_dim < D) add_writer(a, L, cap, m->token_value_dim, embed);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *ly = &m->layers[l];
        for (size_t h = 0; h < ly->n_heads; h++) columns_written(a, L, cap, &ly->heads[h].wo, (ResidualWriter){WRITER_HEAD, l, h});
        ResidualWriter mlp = {WRITER_MLP, l, 0};
        columns_written(a, L, cap, &ly->mlp.w2, mlp);
        for (size_t d = 0; d < D && ly->mlp.b2; d++)
            if (ly->mlp.b2[d] != 0.0) add_writer(a, L, cap, d, mlp);
    }
    free(cap);
}

void residual_layout(Arena *a, const Model *m, ResidualLayout *out) {
    size_t D = m->d_model;
    ResidualLayout L = {0};
    L.blocks = ARENA_ARRAY(a, ResidualBlock, D ? D : 1);
    L.block_of = ARENA_ARRAY(a, size_t, D ? D : 1);
    L.writers = ARENA_ARRAY(a, ResidualWriter *, D ? D : 1);
    L.n_writers = ARENA_ARRAY(a, size_t, D ? D : 1);
    const char *prev_name = NULL;
    for (size_t d = 0; d < D; d++) {
        const char *label = m->labels && m->labels[d] ? m->labels[d] : "";
        const char *qual, *value;
        size_t sop = residual_parse_label(a, label, &qual, &value);
        const char *name = sop == 0 ? label
                           : *qual ? arena_printf(a, "%.*s:%s", (int)sop, label, qual)
                                   : arena_strndup(a, label, sop);
        ResidualBlock *last = L.n_blocks ? &L.blocks[L.n_blocks - 1] : NULL;
        if (value && last && last->one_hot && prev_name && !strcmp(prev_name, name)) {
            last->count++;
        } else {
            last = &L.blocks[L.n_blocks++];
            *last = (ResidualBlock){name, sop ? sop : strlen(label), d, 1, value != NULL, NULL};
            if (value) last->values = ARENA_ARRAY(a, const char *, D - d);
        }
        if (value) last->values[last->count - 1] = display_value(a, value);
        prev_name = name;
        L.block_of[d] = L.n_blocks - 1;
    }
    find_writers(a, m, &L);
    *out = L;
}

void residual_block_text(const ResidualBlock *b, const double *x, char *buf, size_t size) {
    if (size == 0) return;
    if (!b->one_hot) {
        snprintf(buf, size, "%.4g", x[b->dim] == 0.0 ? 0.0 : x[b->dim]); /* no "-0" */
        return;
    }
    size_t nonzero = 0, hot = 0;
    for (size_t k = 0; k < b->count; k++)
        if (fabs(x[b->dim + k]) > MODEL_ONEHOT_TOL) nonzero++, hot = k;
    if (nonzero == 0) {
        snprintf(buf, size, ".");
        return;
    }
    if (nonzero == 1 && fabs(x[b->dim + hot] - 1.0) <= MODEL_ONEHOT_TOL) {
        snprintf(buf, size, "%s", b->values[hot]);
        return;
    }
    size_t len = (size_t)snprintf(buf, size, "{");
    for (size_t k = 0, shown = 0; k < b->count && len < size; k++) {
        if (fabs(x[b->dim + k]) <= MODEL_ONEHOT_TOL) continue;
        len += (size_t)snprintf(buf + len, size - len, "%s%s %.3g", shown++ ? ", " : "", b->values[k], x[b->dim + k]);
    }
    if (len < size) snprintf(buf + len, size - len, "}");
}

void residual_writer_text(ResidualWriter w, char *buf, size_t size) {
    if (w.kind == WRITER_EMBED) snprintf(buf, size, "embedding");
    else if (w.kind == WRITER_HEAD) snprintf(buf, size, "layer %zu head %zu", w.layer, w.head);
    else snprintf(buf, size, "layer %zu MLP", w.layer);
}
