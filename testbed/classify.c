/* Classification of a program's selections (classify.h states the kinds). One pass in node-id
 * order (a topological order) computes which nodes derive from tokens; a second marks what the
 * output reaches and classifies its atomic selects. */
#include "testbed/classify.h"

#include <stdlib.h>

static const IrNode **args_of(const IrNode *x, const IrNode **buf, size_t *n) {
    *n = 0;
    switch (x->kind) {
    case IR_MAP:
        for (uint32_t i = 0; i < x->u.map.nargs; i++) buf[(*n)++] = x->u.map.args[i];
        break;
    case IR_SELECT:
        buf[(*n)++] = x->u.select.keys;
        buf[(*n)++] = x->u.select.queries;
        break;
    case IR_SELECT_AND:
    case IR_SELECT_OR:
    case IR_SELECT_NOT:
        buf[(*n)++] = x->u.combine.lhs;
        if (x->u.combine.rhs) buf[(*n)++] = x->u.combine.rhs;
        break;
    case IR_AGGREGATE:
        buf[(*n)++] = x->u.aggregate.selector;
        buf[(*n)++] = x->u.aggregate.sop;
        break;
    case IR_SELECTOR_WIDTH:
        buf[(*n)++] = x->u.width.selector;
        break;
    default: break;
    }
    return buf;
}

static bool is_cmp_order(IrCmp c) {
    return c == IR_CMP_LT || c == IR_CMP_LE || c == IR_CMP_GT || c == IR_CMP_GE;
}

static TbSelectKind select_kind(const IrNode *s, const bool *from_tokens) {
    const IrNode *k = s->u.select.keys, *q = s->u.select.queries;
    bool kc = k->kind == IR_CONST, qc = q->kind == IR_CONST;
    if (kc && qc) return TB_SEL_CONSTANT;
    if (kc || qc) {
        const IrNode *side = kc ? q : k;
        return from_tokens[side->id] ? TB_SEL_TOKEN_FILTER : TB_SEL_POSITION_FILTER;
    }
    if (from_tokens[k->id] || from_tokens[q->id]) return TB_SEL_CONTENT;
    if (k->kind == IR_INDICES && q->kind == IR_INDICES && is_cmp_order(s->u.select.cmp)) return TB_SEL_PREFIX;
    return TB_SEL_POSITIONAL;
}

void tb_classify(const IrGraph *g, const IrNode *output, TbClassification *out) {
    *out = (TbClassification){0};
    bool *from_tokens = calloc(g->count ? g->count : 1, sizeof *from_tokens);
    bool *reached = calloc(g->count ? g->count : 1, sizeof *reached);
    if (!from_tokens || !reached) abort();
    const IrNode *buf[3];
    size_t n;
    for (size_t i = 0; i < g->count; i++) {
        const IrNode *x = g->nodes[i];
        from_tokens[i] = x->kind == IR_TOKENS;
        args_of(x, buf, &n);
        for (size_t j = 0; j < n; j++) from_tokens[i] |= from_tokens[buf[j]->id];
    }
    reached[output->id] = true;
    for (size_t i = g->count; i-- > 0;) { /* users come after their arguments */
        if (!reached[i]) continue;
        const IrNode *x = g->nodes[i];
        args_of(x, buf, &n);
        for (size_t j = 0; j < n; j++) reached[buf[j]->id] = true;
        if (x->kind == IR_SELECT) out->selects[select_kind(x, from_tokens)]++;
        out->aggregates += x->kind == IR_AGGREGATE;
        out->widths += x->kind == IR_SELECTOR_WIDTH;
    }
    out->cls = out->selects[TB_SEL_CONTENT] ? TB_CLASS_CONTENT
               : out->selects[TB_SEL_POSITIONAL] || out->selects[TB_SEL_POSITION_FILTER] ? TB_CLASS_POSITIONAL
                                                                                          : TB_CLASS_COUNTING;
    free(from_tokens);
    free(reached);
}

const char *tb_class_name(TbClass c) {
    switch (c) {
    case TB_CLASS_COUNTING: return "counting";
    case TB_CLASS_POSITIONAL: return "positional";
    case TB_CLASS_CONTENT: return "content-dependent";
    }
    return "?";
}

const char *tb_select_kind_name(TbSelectKind k) {
    static const char *const names[TB_SEL_KINDS] = {"constant", "prefix", "token filter", "position filter",
                                                    "positional", "content"};
    return k < TB_SEL_KINDS ? names[k] : "?";
}
