#include "viz/dot.h"

#include <stdlib.h>
#include <string.h>

#include "viz/residual.h"

/* A dot string literal's contents: quotes and backslashes escaped, newlines as \n. */
static void put_escaped(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        if (*s == '\n') fputs("\\n", out);
        else fputc(*s, out);
    }
}

/* How the compiler names an s-op in its labels: "tokens" and "indices" for the inputs, else its
 * name or KIND@LINE:COL (codegen plan_node_name). */
static const char *node_key(Arena *a, const IrNode *n) {
    if (n->kind == IR_TOKENS || n->kind == IR_INDICES) return ir_kind_name(n->kind);
    return n->name ? n->name : arena_printf(a, "%s@%d:%d", ir_kind_name(n->kind), n->loc.line, n->loc.col);
}

/* An argument inside an operation: a constant's value, a name, or "_" (drawn as an edge). */
static const char *arg_text(Arena *a, const IrNode *n) {
    if (n->kind == IR_CONST) {
        char buf[96];
        value_format(n->u.constant, buf, sizeof buf);
        return arena_strdup(a, buf);
    }
    if (n->kind == IR_TOKENS || n->kind == IR_INDICES || n->kind == IR_LENGTH) return ir_kind_name(n->kind);
    return n->name ? n->name : "_";
}

static const char *table_text(Arena *a, const Value *v, size_t n) {
    const char *s = "[";
    for (size_t i = 0; i < n && i < 6; i++) {
        char buf[96];
        value_format(v[i], buf, sizeof buf);
        s = arena_printf(a, "%s%s%s", s, i ? ", " : "", buf);
    }
    return arena_printf(a, "%s%s]", s, n > 6 ? ", ..." : "");
}

static const char *dict_text(Arena *a, const Value *keys, const Value *values, size_t n) {
    const char *s = "{";
    for (size_t i = 0; i < n && i < 4; i++) {
        char k[96], v[96];
        value_format(keys[i], k, sizeof k);
        value_format(values[i], v, sizeof v);
        s = arena_printf(a, "%s%s%s: %s", s, i ? ", " : "", k, v);
    }
    return arena_printf(a, "%s%s}", s, n > 4 ? ", ..." : "");
}

static const char *op_text(Arena *a, const IrNode *n) {
    switch (n->kind) {
    case IR_TOKENS: return ir_token_type_name(n->u.token_type);
    case IR_INDICES: return "indices";
    case IR_LENGTH: return "length";
    case IR_CONST: return arg_text(a, n);
    case IR_MAP: {
        const IrNode *const *x = (const IrNode *const *)n->u.map.args;
        switch (n->u.map.kind) {
        case IR_MAP_UNARY: {
            const char *op = value_op_text(n->u.map.op);
            bool word = op[0] >= 'a' && op[0] <= 'z';
            return arena_printf(a, word && strcmp(op, "not") ? "%s(%s)" : word ? "%s %s" : "%s%s", op, arg_text(a, x[0]));
        }
        case IR_MAP_BINARY: return arena_printf(a, "%s %s %s", arg_text(a, x[0]), value_op_text(n->u.map.op), arg_text(a, x[1]));
        case IR_MAP_COND: return arena_printf(a, "%s if %s else %s", arg_text(a, x[1]), arg_text(a, x[0]), arg_text(a, x[2]));
        case IR_MAP_IN: return arena_printf(a, "%s in %s", arg_text(a, x[0]), table_text(a, n->u.map.table_keys, n->u.map.table_len));
        case IR_MAP_LOOKUP:
            return arena_printf(a, "%s[%s]", dict_text(a, n->u.map.table_keys, n->u.map.table_values, n->u.map.table_len),
                                arg_text(a, x[0]));
        case IR_MAP_INDEX:
            return arena_printf(a, "%s[%s]", table_text(a, n->u.map.table_values, n->u.map.table_len), arg_text(a, x[0]));
        }
        return "map";
    }
    case IR_SELECT:
        return arena_printf(a, "select(%s, %s, %s)", arg_text(a, n->u.select.keys), arg_text(a, n->u.select.queries),
                            ir_cmp_text(n->u.select.cmp));
    case IR_SELECT_AND: return "and";
    case IR_SELECT_OR: return "or";
    case IR_SELECT_NOT: return "not";
    case IR_AGGREGATE: {
        char buf[96];
        value_format(n->u.aggregate.default_value, buf, sizeof buf);
        return arena_printf(a, "aggregate(%s, %s, default=%s)", arg_text(a, n->u.aggregate.selector),
                            arg_text(a, n->u.aggregate.sop), buf);
    }
    case IR_SELECTOR_WIDTH: return arena_printf(a, "selector_width(%s)", arg_text(a, n->u.width.selector));
    }
    return "";
}

/* The arguments of n, with the edge label each gets ("" for none); returns their count. */
static size_t args_of(const IrNode *n, const IrNode *args[3], const char *labels[3]) {
    static const char *const none = "";
    switch (n->kind) {
    case IR_MAP:
        for (uint32_t i = 0; i < n->u.map.nargs; i++) args[i] = n->u.map.args[i], labels[i] = none;
        if (n->u.map.kind == IR_MAP_COND) labels[0] = "if";
        return n->u.map.nargs;
    case IR_SELECT:
        args[0] = n->u.select.keys, labels[0] = "keys";
        args[1] = n->u.select.queries, labels[1] = "queries";
        return 2;
    case IR_SELECT_AND: case IR_SELECT_OR:
        args[0] = n->u.combine.lhs, args[1] = n->u.combine.rhs, labels[0] = labels[1] = none;
        return 2;
    case IR_SELECT_NOT: args[0] = n->u.combine.lhs, labels[0] = none; return 1;
    case IR_AGGREGATE:
        args[0] = n->u.aggregate.selector, args[1] = n->u.aggregate.sop, labels[0] = labels[1] = none;
        return 2;
    case IR_SELECTOR_WIDTH: args[0] = n->u.width.selector, labels[0] = none; return 1;
    default: return 0;
    }
}

/* Where one s-op (or one block) is computed: the writers of its dims, in model order. */
typedef struct Placement {
    size_t dims;
    ResidualWriter *w; /* room for every writer the model has */
    size_t n;
} Placement;

static int writer_rank(const ResidualWriter *w) {
    return w->kind == WRITER_EMBED ? 0 : 1 + 2 * (int)w->layer + (w->kind == WRITER_MLP);
}

static int cmp_writer(const void *x, const void *y) {
    const ResidualWriter *a = x, *b = y;
    int d = writer_rank(a) - writer_rank(b);
    return d ? d : (a->head > b->head) - (a->head < b->head);
}

/* Adds the writers of block B to p. */
static void place_block(Placement *p, const ResidualLayout *L, const ResidualBlock *B) {
    p->dims += B->count;
    for (size_t d = B->dim; d < B->dim + B->count; d++)
        for (size_t k = 0; k < L->n_writers[d]; k++) {
            ResidualWriter w = L->writers[d][k];
            bool have = false;
            for (size_t i = 0; i < p->n && !have; i++) have = !memcmp(&p->w[i], &w, sizeof w);
            if (!have) p->w[p->n++] = w;
        }
    qsort(p->w, p->n, sizeof *p->w, cmp_writer);
}

static int cmp_key(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* The placement as text: "embedding", "layer 0: heads 0, 1, MLP; layer 1: MLP". */
static const char *placement_text(Arena *a, const Placement *p) {
    if (p->dims == 0) return "inside its readers (no dims of its own)";
    if (p->n == 0) return arena_printf(a, "never written (%zu dim%s)", p->dims, p->dims == 1 ? "" : "s");
    const char *s = "";
    for (size_t i = 0; i < p->n; i++) {
        const ResidualWriter *w = &p->w[i];
        bool same_layer = i > 0 && p->w[i - 1].kind != WRITER_EMBED && w->kind != WRITER_EMBED && p->w[i - 1].layer == w->layer;
        if (w->kind == WRITER_EMBED) {
            s = arena_printf(a, "%s%sembedding", s, *s ? "; " : "");
            continue;
        }
        if (!same_layer) s = arena_printf(a, "%s%slayer %zu: ", s, *s ? "; " : "", w->layer);
        else s = arena_printf(a, "%s, ", s);
        if (w->kind == WRITER_MLP) {
            s = arena_printf(a, "%sMLP", s);
        } else {
            bool more = i + 1 < p->n && p->w[i + 1].kind == WRITER_HEAD && p->w[i + 1].layer == w->layer;
            bool after_head = same_layer && p->w[i - 1].kind == WRITER_HEAD;
            s = arena_printf(a, "%s%s%zu", s, after_head ? "" : more ? "heads " : "head ", w->head);
        }
    }
    return arena_printf(a, "%s (%zu dim%s)", s, p->dims, p->dims == 1 ? "" : "s");
}

static void mark_reachable(const IrNode *n, bool *seen) {
    if (seen[n->id]) return;
    seen[n->id] = true;
    const IrNode *args[3];
    const char *labels[3];
    for (size_t i = 0, k = args_of(n, args, labels); i < k; i++) mark_reachable(args[i], seen);
}

void viz_write_dot(FILE *out, const IrGraph *g, const IrNode *output, const Model *m) {
    Arena a;
    arena_init(&a);
    size_t N = g->count;
    bool *seen = ARENA_ARRAY(&a, bool, N ? N : 1);
    mark_reachable(output, seen);
    ResidualLayout L = {0};
    size_t writers = 1; /* every writer the model has: the embedding, each head, each MLP */
    if (m) {
        residual_layout(&a, m, &L);
        for (size_t l = 0; l < m->n_layers; l++) writers += m->layers[l].n_heads + 1;
    }
    /* the drawn s-ops (not selectors, not constants), their keys, and how many share each key */
    const char **key = ARENA_ARRAY(&a, const char *, N ? N : 1), **sorted = ARENA_ARRAY(&a, const char *, N ? N : 1);
    size_t n_sops = 0;
    for (size_t i = 0; i < N; i++) {
        const IrNode *n = g->nodes[i];
        if (!seen[i] || n->kind == IR_CONST || ir_is_selector(n)) continue;
        key[i] = node_key(&a, n);
        sorted[n_sops++] = key[i];
    }
    qsort(sorted, n_sops, sizeof *sorted, cmp_key);
    size_t *shared = ARENA_ARRAY(&a, size_t, N ? N : 1);
    for (size_t i = 0; i < N; i++) {
        if (!key[i]) continue;
        const char **hit = bsearch(&key[i], sorted, n_sops, sizeof *sorted, cmp_key);
        while (hit > sorted && !strcmp(hit[-1], key[i])) hit--;
        for (; hit < sorted + n_sops && !strcmp(*hit, key[i]); hit++) shared[i]++;
        shared[i]--;
    }
    /* each s-op's blocks: its key, or 1/key (a reciprocal the compiler keeps of it) */
    bool *claimed = ARENA_ARRAY(&a, bool, L.n_blocks ? L.n_blocks : 1);
    Placement *place = ARENA_ARRAY(&a, Placement, N ? N : 1);
    for (size_t i = 0; i < N && m; i++) {
        if (!key[i]) continue;
        place[i].w = ARENA_ARRAY(&a, ResidualWriter, writers);
        size_t klen = strlen(key[i]);
        for (size_t b = 0; b < L.n_blocks; b++) {
            const ResidualBlock *B = &L.blocks[b];
            bool mine = (B->sop_len == klen && !strncmp(B->name, key[i], klen)) ||
                        (B->sop_len == klen + 2 && !strncmp(B->name, "1/", 2) && !strncmp(B->name + 2, key[i], klen));
            if (!mine) continue;
            claimed[b] = true;
            place_block(&place[i], &L, B);
        }
    }

    fputs("digraph rasp {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n"
          "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n", out);
    /* clusters: -1 embedding, L for layer L (by the last writer), none for the rest */
    size_t n_stages = m ? m->n_layers + 1 : 0;
    for (size_t stage = 0; stage <= n_stages; stage++) {
        bool open = false;
        for (size_t i = 0; i < N; i++) {
            const IrNode *n = g->nodes[i];
            if (!seen[i] || n->kind == IR_CONST) continue;
            const Placement *p = &place[i];
            bool selector = ir_is_selector(n);
            size_t node_stage = n_stages; /* stage n_stages: outside every cluster */
            if (!selector && p->n) {
                const ResidualWriter *last = &p->w[p->n - 1];
                node_stage = last->kind == WRITER_EMBED ? 0 : last->layer + 1;
            }
            if (node_stage != stage) continue;
            if (!open && stage < n_stages) {
                fprintf(out, "  subgraph cluster_%zu {\n    label=\"%s", stage, stage ? "layer " : "embedding");
                if (stage) fprintf(out, "%zu", stage - 1);
                fputs("\";\n    style=rounded; color=\"#999999\"; fontname=\"Helvetica\";\n", out);
                open = true;
            }
            fprintf(out, "    n%u [label=\"", n->id);
            if (n->name && strcmp(n->name, op_text(&a, n))) { /* an unnamed node is its operation */
                put_escaped(out, n->name);
                fputs("\\n", out);
            }
            put_escaped(out, op_text(&a, n));
            if (m && !selector) {
                fputs("\\n", out);
                put_escaped(out, placement_text(&a, p));
                if (shared[i])
                    fprintf(out, "\\n(with %zu other s-op%s named ", shared[i], shared[i] == 1 ? "" : "s");
                if (shared[i]) {
                    put_escaped(out, key[i]);
                    fputs(")", out);
                }
            }
            char where[256];
            srcloc_format(n->loc, where, sizeof where);
            fputs("\", tooltip=\"", out);
            put_escaped(out, where);
            fputc('"', out);
            if (selector) {
                fputs(", shape=ellipse", out);
            } else {
                fputs(", shape=box, style=\"rounded", out);
                const char *fill = NULL;
                if (p->n) {
                    ResidualWriterKind k = p->w[p->n - 1].kind;
                    fill = k == WRITER_EMBED ? "#eeeeee" : k == WRITER_HEAD ? "#cfe2f3" : "#fce5cd";
                }
                if (fill) fprintf(out, ",filled\", fillcolor=\"%s\"", fill);
                else fputs(m ? ",dashed\"" : "\"", out);
            }
            if (n == output) fputs(", penwidth=2.5", out);
            fputs("];\n", out);
        }
        if (open) fputs("  }\n", out);
    }
    for (size_t i = 0; i < N; i++) {
        const IrNode *n = g->nodes[i];
        if (!seen[i]) continue;
        const IrNode *args[3];
        const char *labels[3];
        for (size_t k = 0, c = args_of(n, args, labels); k < c; k++) {
            if (args[k]->kind == IR_CONST) continue;
            fprintf(out, "  n%u -> n%u", args[k]->id, n->id);
            bool dashed = ir_is_selector(args[k]) && !ir_is_selector(n);
            if (*labels[k] || dashed) {
                fputs(" [", out);
                if (*labels[k]) fprintf(out, "label=\"%s\"", labels[k]);
                if (dashed) fprintf(out, "%sstyle=dashed", *labels[k] ? ", " : "");
                fputc(']', out);
            }
            fputs(";\n", out);
        }
    }
    /* residual dims that name no s-op drawn */
    size_t others = 0;
    for (size_t b = 0; b < L.n_blocks; b++) others += !claimed[b];
    if (others) {
        fputs("  other_dims [shape=note, fontsize=9, label=\"residual dims of no s-op above:\\l", out);
        size_t shown = 0;
        for (size_t b = 0; b < L.n_blocks; b++) {
            if (claimed[b]) continue;
            if (shown++ == 24) {
                fprintf(out, "... and %zu more\\l", others - 24);
                break;
            }
            Placement p = {0, ARENA_ARRAY(&a, ResidualWriter, writers), 0};
            place_block(&p, &L, &L.blocks[b]);
            put_escaped(out, L.blocks[b].name);
            fputs(": ", out);
            put_escaped(out, p.n ? placement_text(&a, &p) : "not written");
            fputs("\\l", out);
        }
        fputs("\"];\n", out);
    }
    fputs("}\n", out);
    arena_free(&a);
}
