/* draw(SOP [, INPUT]); as Graphviz dot (repl/draw.h). */
#include "repl/draw.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/meta.h"

/* dot's double-quoted strings: quotes and backslashes escaped. */
static void dot_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if (*s == '\n') fputs("\\n", f);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* What a node computes, in a word or two. */
static const char *node_label(Arena *a, const IrNode *n) {
    switch (n->kind) {
    case IR_TOKENS: return ir_token_type_name(n->u.token_type);
    case IR_INDICES: return "indices";
    case IR_LENGTH: return "length";
    case IR_CONST: return meta_pystr(a, (MetaValue){.kind = MV_ATOM, .u.atom = n->u.constant});
    case IR_MAP:
        if (n->u.map.kind == IR_MAP_BINARY || n->u.map.kind == IR_MAP_UNARY)
            return arena_printf(a, "map %s", value_op_text(n->u.map.op));
        return n->u.map.kind == IR_MAP_COND ? "map if-else" : n->u.map.kind == IR_MAP_IN ? "map in" : "map lookup";
    case IR_SELECT: return arena_printf(a, "select %s", ir_cmp_text(n->u.select.cmp));
    case IR_SELECT_AND: return "selector and";
    case IR_SELECT_OR: return "selector or";
    case IR_SELECT_NOT: return "selector not";
    case IR_AGGREGATE: return "aggregate";
    case IR_SELECTOR_WIDTH: return "selector_width";
    }
    return "?";
}

static void node_args(const IrNode *n, const IrNode *args[3]) {
    memset(args, 0, 3 * sizeof *args);
    switch (n->kind) {
    case IR_MAP: for (uint32_t i = 0; i < n->u.map.nargs; i++) args[i] = n->u.map.args[i]; break;
    case IR_SELECT: args[0] = n->u.select.keys; args[1] = n->u.select.queries; break;
    case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
        args[0] = n->u.combine.lhs; args[1] = n->u.combine.rhs; break;
    case IR_AGGREGATE: args[0] = n->u.aggregate.selector; args[1] = n->u.aggregate.sop; break;
    case IR_SELECTOR_WIDTH: args[0] = n->u.width.selector; break;
    default: break;
    }
}

/* Writes the computation of `out` on `input`: every s-op and selector it depends on, each s-op
 * with its values. */
static bool write_dot(Repl *r, FILE *f, const IrNode *out, const char *title, MetaValue input) {
    IrGraph *g = elab_session_graph(r->session);
    bool *needed = calloc(out->id + 1, sizeof *needed);
    if (!needed) return false;
    needed[out->id] = true;
    for (size_t id = out->id + 1; id-- > 0;) {
        if (!needed[id]) continue;
        const IrNode *args[3];
        node_args(g->nodes[id], args);
        for (int k = 0; k < 3; k++)
            if (args[k]) needed[args[k]->id] = true;
    }
    Arena a;
    arena_init(&a);
    fprintf(f, "digraph comp_flow {\n  label=");
    dot_string(f, title);
    fprintf(f, ";\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n");
    for (size_t id = 0; id <= out->id; id++) {
        if (!needed[id]) continue;
        const IrNode *n = g->nodes[id];
        const char *label = node_label(&a, n);
        if (n->name) label = arena_printf(&a, "%s\n%s", n->name, label);
        void *res;
        size_t len;
        ElabFault fault;
        if (!ir_is_selector(n) && elab_session_apply(r->session, n, input, &a, &res, &len, &fault)) {
            MetaValue *items = ARENA_ARRAY(&a, MetaValue, len ? len : 1);
            for (size_t i = 0; i < len; i++) items[i] = (MetaValue){.kind = MV_ATOM, .u.atom = ((Value *)res)[i]};
            label = arena_printf(&a, "%s\n%s", label, meta_pystr(&a, (MetaValue){.kind = MV_LIST, .u.list = {items, len}}));
        }
        fprintf(f, "  n%zu [shape=%s, label=", id, ir_is_selector(n) ? "ellipse" : n == out ? "doubleoctagon" : "box");
        dot_string(f, label);
        fprintf(f, "];\n");
        const IrNode *args[3];
        node_args(n, args);
        for (int k = 0; k < 3; k++)
            if (args[k]) fprintf(f, "  n%u -> n%zu;\n", args[k]->id, id);
    }
    fprintf(f, "}\n");
    arena_free(&a);
    free(needed);
    return true;
}

bool repl_draw(Repl *r, const AstExpr *sop, const AstExpr *input, Env *scope, ReplEntry *result, ElabFault *fault) {
    MetaValue example = r->seq_example, v;
    if (input && !elab_session_eval(r->session, scope, input, NULL, &example, fault)) return false;
    if (!elab_session_eval(r->session, scope, sop, &example, &v, fault)) return false;
    if (v.kind != MV_SOP) {
        fault->kind = ELAB_FAULT_IGNORED;
        fault->text = arena_printf(&r->arena, "draw expects unfinished sequence, got: %s", meta_strdesc(&r->arena, v, 0));
        return false;
    }
    const char *name = v.label && v.label->name ? v.label->name : "s-op";
    const char *ex = example.kind == MV_ATOM && example.u.atom.kind == VAL_STR
                         ? arena_printf(&r->arena, "\"%s\"", example.u.atom.as.s)
                         : meta_pystr(&r->arena, example);
    char *title = arena_printf(&r->arena, "%s(%s)", name, ex);
    char *file = arena_printf(&r->arena, "comp_flows/%s.dot", title);
    for (char *c = file + strlen("comp_flows/"); *c; c++)
        if (*c == '/' || *c == '\\') *c = '_';
    mkdir("comp_flows", 0777);
    FILE *f = fopen(file, "w");
    if (!f || !write_dot(r, f, v.u.node, title, example)) {
        if (f) fclose(f);
        fault->kind = ELAB_FAULT_EXCEPTION;
        fault->text = arena_printf(&r->arena, "cannot write %s", file);
        return false;
    }
    fclose(f);
    *result = (ReplEntry){.kind = ENTRY_APPLIED, .print = scope == elab_session_console(r->session),
                          .node = v.u.node, .value = example};
    return true;
}
