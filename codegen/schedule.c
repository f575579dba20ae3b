/* A check of the plan before any weight is written: every head and MLP reads only residual
 * directions that the embedding or an earlier slot writes, and writes its own directions once.
 * The planning passes place each op after what it reads; this makes a slip there an internal
 * compiler error at the s-op instead of a model that reads zeros. */
#include "codegen/internal.h"

/* The first slot at which a direction holds its value: 0 for the embedding's, else the slot of
 * the op that writes it (INT_MAX while none does). */
typedef struct Written {
    int *slot;
    size_t n;
} Written;

static bool reads_ok(Plan *p, const Written *w, LinView v, int at, const IrNode *who, const char *what) {
    for (size_t t = 0; t < v.n; t++) {
        uint32_t d = v.terms[t].dim;
        if (d < w->n && w->slot[d] < at) continue;
        char name[128];
        vs_describe(who, name, sizeof name);
        diag_error(p->diags, who->loc, "internal compiler error: the %s of %s reads residual direction '%s' before it is "
                   "computed (slot %d, written at %d)", what, name, d < p->n_dims ? p->labels[d] : "?", at,
                   d < w->n ? w->slot[d] : -1);
        return false;
    }
    return true;
}

/* `adds`: a later level of squares by depth adds its part to a dim an earlier slot wrote, which
 * then holds its value from this slot on. */
static bool write(Plan *p, Written *w, uint32_t d, int at, const IrNode *who, bool adds) {
    if (d < w->n && (w->slot[d] == __INT_MAX__ || w->slot[d] == at || (adds && w->slot[d] < at))) {
        w->slot[d] = at;
        return true;
    }
    char name[128];
    vs_describe(who, name, sizeof name);
    diag_error(p->diags, who->loc, "internal compiler error: %s writes residual direction '%s' that slot %d already wrote",
               name, d < p->n_dims ? p->labels[d] : "?", d < w->n ? w->slot[d] : -1);
    return false;
}

int schedule_layers(const Plan *p) {
    int layers = 0;
    for (size_t i = 0; i < p->n_heads; i++) if (p->heads[i].layer + 1 > layers) layers = p->heads[i].layer + 1;
    for (size_t i = 0; i < p->n_mlps; i++) if (p->mlps[i].layer + 1 > layers) layers = p->mlps[i].layer + 1;
    return layers;
}

bool schedule_check(Plan *p) {
    Written w = {ARENA_ARRAY(p->arena, int, p->n_dims ? p->n_dims : 1), p->n_dims};
    for (size_t d = 0; d < w.n; d++) w.slot[d] = __INT_MAX__;
    /* the embedding: one, bos, tokens, indices (allocated first, in that order) */
    uint32_t embedded = p->pos_dim + (uint32_t)p->max_len;
    for (uint32_t d = 0; d < embedded && d < w.n; d++) w.slot[d] = 0;
    for (size_t h = 0; h < p->n_heads; h++) { /* writes first: heads of one slot may not read each other */
        const HeadOp *op = &p->heads[h];
        for (size_t j = 0; j < op->n_vals; j++)
            if (!write(p, &w, op->out_dims[j], 2 * op->layer + 1, op->node, false)) return false;
    }
    for (size_t i = 0; i < p->n_mlps; i++) {
        const MlpOp *op = &p->mlps[i];
        size_t count = mlp_out_count(op);
        for (size_t k = 0; k < count; k++)
            if (!write(p, &w, op->out_dim + (uint32_t)k, 2 * op->layer + 2, op->node, op->fn == MLP_FN_SQUARE_LEVEL))
                return false;
        if (op->beside && !write(p, &w, op->beside_dim, 2 * op->layer + 2, op->node, false)) return false;
        for (int s = 0; s < 2 && op->split; s++)
            if (!write(p, &w, op->split_dim[s], 2 * op->layer + 2, op->node, false)) return false;
        for (int s = 0; s < 2 && op->sq && op->level + 1 < op->sq->depth; s++)
            if (op->sq_next[s] != UINT32_MAX && !write(p, &w, op->sq_next[s], 2 * op->layer + 2, op->node, false))
                return false;
    }
    for (size_t h = 0; h < p->n_heads; h++) {
        const HeadOp *op = &p->heads[h];
        int at = 2 * op->layer + 1;
        for (size_t c = 0; c < op->n_cols; c++)
            if (!reads_ok(p, &w, op->cols[c].q, at, op->node, "query") || !reads_ok(p, &w, op->cols[c].k, at, op->node, "key"))
                return false;
        if (!reads_ok(p, &w, op->bos_q, at, op->node, "query")) return false;
        for (size_t j = 0; j < op->n_vals; j++)
            if (!reads_ok(p, &w, op->vals[j], at, op->node, "value")) return false;
    }
    for (size_t i = 0; i < p->n_mlps; i++) {
        const MlpOp *op = &p->mlps[i];
        int at = 2 * op->layer + 2;
        for (size_t j = 0; j < op->n_grid; j++) {
            if (!reads_ok(p, &w, op->grid[j].view, at, op->node, "MLP")) return false;
            for (size_t k = 0; op->grid[j].onehot && k < op->grid[j].n; k++)
                if (!reads_ok(p, &w, op->grid[j].onehot[k], at, op->node, "MLP gate")) return false;
        }
        bool two = op->fn == MLP_FN_PRODUCT || op->fn == MLP_FN_PWL_PRODUCT || op->fn == MLP_FN_SQUARE_LEVEL;
        if ((op->fn == MLP_FN_PWL || two) && !reads_ok(p, &w, op->x_view, at, op->node, "MLP")) return false;
        if (two && !reads_ok(p, &w, op->y_view, at, op->node, "MLP")) return false;
        if (op->fn == MLP_FN_SWITCH) {
            size_t n_views = op->sw->n_gates ? op->sw->gate_base[op->sw->n_gates - 1] : 0;
            if (op->sw->n_gates) n_views += op->sw->gate_by_num[op->sw->n_gates - 1] ? 2 : p->info[op->sw->gates[op->sw->n_gates - 1]->id].vs.n;
            for (size_t v = 0; v < n_views; v++)
                if (!reads_ok(p, &w, op->gate_views[v], at, op->node, "MLP gate")) return false;
            for (uint32_t j = 0; j < op->sw->n_xs; j++)
                if (!reads_ok(p, &w, op->x_views[j], at, op->node, "MLP")) return false;
        }
        if (op->fn == MLP_FN_GATED) {
            if (!reads_ok(p, &w, op->y_view, at, op->node, "MLP")) return false;
            if (op->gated->y2 && !reads_ok(p, &w, op->y2_view, at, op->node, "MLP")) return false;
            for (size_t v = 0; v < op->gated->n; v++)
                if (!reads_ok(p, &w, op->gate_views[v], at, op->node, "MLP gate")) return false;
        }
    }
    return true;
}
