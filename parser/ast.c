/* AST helpers: operator names, node constructors (parser/ast_build.h) and the printers. */
#include "parser/ast.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "parser/ast_build.h"

const char *ast_binary_op_text(AstBinaryOp op) {
    switch (op) {
    case AST_ADD: return "+";
    case AST_SUB: return "-";
    case AST_MUL: return "*";
    case AST_DIV: return "/";
    case AST_MOD: return "%";
    case AST_POW: return "^";
    case AST_EQ: return "==";
    case AST_NE: return "!=";
    case AST_LT: return "<";
    case AST_GT: return ">";
    case AST_LE: return "<=";
    case AST_GE: return ">=";
    case AST_AND: return "and";
    case AST_OR: return "or";
    case AST_IN: return "in";
    }
    return "?";
}

const char *ast_unary_op_text(AstUnaryOp op) {
    switch (op) {
    case AST_NOT: return "not";
    case AST_NEG: return "-";
    case AST_POS: return "+";
    case AST_ROUND: return "round";
    case AST_INDICATOR: return "indicator";
    }
    return "?";
}

/* ---- vectors and constructors ---- */

void exprvec_push(Arena *a, ExprVec *v, AstExpr *e) {
    if (v->count == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        v->items = arena_grow(a, v->items, v->count, cap, sizeof *v->items);
        v->cap = cap;
    }
    v->items[v->count++] = e;
}

void namevec_push(Arena *a, NameVec *v, const char *name, SrcLoc loc) {
    if (v->count == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        v->names = arena_grow(a, v->names, v->count, cap, sizeof *v->names);
        v->locs = arena_grow(a, v->locs, v->count, cap, sizeof *v->locs);
        v->cap = cap;
    }
    v->names[v->count] = name;
    v->locs[v->count++] = loc;
}

void stmtvec_push(Arena *a, StmtVec *v, AstStmt *s) {
    if (v->count == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        v->items = arena_grow(a, v->items, v->count, cap, sizeof *v->items);
        v->cap = cap;
    }
    v->items[v->count++] = s;
}

AstExprList exprvec_list(ExprVec v) { return (AstExprList){v.items, v.count}; }
AstNameList namevec_list(NameVec v) { return (AstNameList){v.names, v.locs, v.count}; }
AstStmtList stmtvec_list(StmtVec v) { return (AstStmtList){v.items, v.count}; }

/* An expression with its nesting depth; `e` first, so a node pointer is a box pointer. */
typedef struct ExprBox {
    AstExpr e;
    int depth;
} ExprBox;

AstExpr *ast_new_expr(Arena *a, AstExprKind kind, SrcLoc loc) {
    ExprBox *b = ARENA_NEW(a, ExprBox);
    b->e.kind = kind;
    b->e.loc = loc;
    b->depth = 1;
    return &b->e;
}

int ast_expr_depth(const AstExpr *e) { return e ? ((const ExprBox *)(const void *)e)->depth : 0; }

static int max_depth(int d, const AstExpr *e) {
    int c = ast_expr_depth(e);
    return c > d ? c : d;
}

static int max_depth_list(int d, const AstExprList *l) {
    for (size_t i = 0; i < l->count; i++) d = max_depth(d, l->items[i]);
    return d;
}

AstExpr *ast_expr_finish(ParseCtx *ctx, AstExpr *e) {
    int d = 0;
    switch (e->kind) {
    case AST_INT_LIT: case AST_FLOAT_LIT: case AST_STRING_LIT: case AST_NAME: break;
    case AST_LIST: case AST_DICT: case AST_RANGE: case AST_ZIP: d = max_depth_list(d, &e->u.list); break;
    case AST_LIST_COMP: case AST_DICT_COMP:
        d = max_depth(max_depth(max_depth(d, e->u.comp.key), e->u.comp.body), e->u.comp.iterable);
        break;
    case AST_UNARY: d = max_depth(d, e->u.unary.operand); break;
    case AST_BINARY: d = max_depth(max_depth(d, e->u.binary.lhs), e->u.binary.rhs); break;
    case AST_COND:
        d = max_depth(max_depth(max_depth(d, e->u.cond.then_e), e->u.cond.cond), e->u.cond.else_e);
        break;
    case AST_SELECT: d = max_depth(max_depth(d, e->u.select.keys), e->u.select.queries); break;
    case AST_AGGREGATE:
        d = max_depth(max_depth(max_depth(d, e->u.aggregate.selector), e->u.aggregate.sop),
                      e->u.aggregate.default_value);
        break;
    case AST_LEN: d = max_depth(d, e->u.len.arg); break;
    case AST_INDEX: d = max_depth(max_depth(d, e->u.index.object), e->u.index.index); break;
    case AST_CALL: d = max_depth_list(max_depth(d, e->u.call.callee), &e->u.call.args); break;
    }
    ((ExprBox *)(void *)e)->depth = d + 1;
    if (d + 1 > AST_MAX_EXPR_DEPTH && !ctx->reported_depth) {
        ctx->reported_depth = true;
        diag_error(ctx->diags, e->loc, "expression nested too deeply (more than %d levels)",
                   AST_MAX_EXPR_DEPTH);
    }
    return e;
}

AstExpr *ast_new_unary(Arena *a, SrcLoc loc, AstUnaryOp op, AstExpr *operand) {
    AstExpr *e = ast_new_expr(a, AST_UNARY, loc);
    e->u.unary.op = op;
    e->u.unary.operand = operand;
    return e;
}

AstExpr *ast_new_binary(Arena *a, SrcLoc loc, AstBinaryOp op, AstExpr *lhs, AstExpr *rhs) {
    AstExpr *e = ast_new_expr(a, AST_BINARY, loc);
    e->u.binary.op = op;
    e->u.binary.lhs = lhs;
    e->u.binary.rhs = rhs;
    return e;
}

AstStmt *ast_new_stmt(Arena *a, AstStmtKind kind, SrcLoc loc) {
    AstStmt *s = ARENA_NEW(a, AstStmt);
    s->kind = kind;
    s->loc = loc;
    return s;
}

/* ---- printing ---- */

/* Shortest decimal form that reads back as the same double, always with a '.' or exponent. */
static void print_float(FILE *out, double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0"); /* 'n': inf and nan */
    fputs(buf, out);
}

static void print_list(FILE *out, const AstExprList *l) {
    for (size_t i = 0; i < l->count; i++) {
        if (i) fputs(", ", out);
        ast_print_expr(out, l->items[i]);
    }
}

static void print_names(FILE *out, const AstNameList *l) {
    for (size_t i = 0; i < l->count; i++) fprintf(out, "%s%s", i ? ", " : "", l->names[i]);
}

void ast_print_expr(FILE *out, const AstExpr *e) {
    if (!e) {
        fputs("<null>", out);
        return;
    }
    switch (e->kind) {
    case AST_INT_LIT: fprintf(out, "%" PRId64, e->u.int_value); break;
    case AST_FLOAT_LIT: print_float(out, e->u.float_value); break;
    case AST_STRING_LIT: fprintf(out, "\"%s\"", e->u.string_value); break;
    case AST_NAME: fputs(e->u.name, out); break;
    case AST_LIST:
        fputc('[', out);
        print_list(out, &e->u.list);
        fputc(']', out);
        break;
    case AST_DICT:
        fputc('{', out);
        for (size_t i = 0; i + 1 < e->u.list.count; i += 2) {
            if (i) fputs(", ", out);
            ast_print_expr(out, e->u.list.items[i]);
            fputs(": ", out);
            ast_print_expr(out, e->u.list.items[i + 1]);
        }
        fputc('}', out);
        break;
    case AST_LIST_COMP:
    case AST_DICT_COMP:
        fputc(e->kind == AST_LIST_COMP ? '[' : '{', out);
        if (e->u.comp.key) {
            ast_print_expr(out, e->u.comp.key);
            fputs(": ", out);
        }
        ast_print_expr(out, e->u.comp.body);
        fputs(" for ", out);
        print_names(out, &e->u.comp.names);
        fputs(" in ", out);
        ast_print_expr(out, e->u.comp.iterable);
        fputc(e->kind == AST_LIST_COMP ? ']' : '}', out);
        break;
    case AST_UNARY:
        if (e->u.unary.op == AST_ROUND || e->u.unary.op == AST_INDICATOR) {
            fprintf(out, "%s(", ast_unary_op_text(e->u.unary.op));
            ast_print_expr(out, e->u.unary.operand);
            fputc(')', out);
        } else {
            fprintf(out, "(%s%s", ast_unary_op_text(e->u.unary.op), e->u.unary.op == AST_NOT ? " " : "");
            ast_print_expr(out, e->u.unary.operand);
            fputc(')', out);
        }
        break;
    case AST_BINARY:
        fputc('(', out);
        ast_print_expr(out, e->u.binary.lhs);
        fprintf(out, " %s ", ast_binary_op_text(e->u.binary.op));
        ast_print_expr(out, e->u.binary.rhs);
        fputc(')', out);
        break;
    case AST_COND:
        fputc('(', out);
        ast_print_expr(out, e->u.cond.then_e);
        fputs(" if ", out);
        ast_print_expr(out, e->u.cond.cond);
        fputs(" else ", out);
        ast_print_expr(out, e->u.cond.else_e);
        fputc(')', out);
        break;
    case AST_SELECT:
        fputs("select(", out);
        ast_print_expr(out, e->u.select.keys);
        fputs(", ", out);
        ast_print_expr(out, e->u.select.queries);
        fprintf(out, ", %s)", ast_binary_op_text(e->u.select.cmp));
        break;
    case AST_AGGREGATE:
        fputs("aggregate(", out);
        ast_print_expr(out, e->u.aggregate.selector);
        fputs(", ", out);
        ast_print_expr(out, e->u.aggregate.sop);
        if (e->u.aggregate.default_value) {
            fputs(", ", out);
            ast_print_expr(out, e->u.aggregate.default_value);
        }
        fputc(')', out);
        break;
    case AST_RANGE:
    case AST_ZIP:
        fputs(e->kind == AST_RANGE ? "range(" : "zip(", out);
        print_list(out, &e->u.list);
        fputc(')', out);
        break;
    case AST_LEN:
        fputs("len(", out);
        ast_print_expr(out, e->u.len.arg);
        fputc(')', out);
        break;
    case AST_INDEX:
        ast_print_expr(out, e->u.index.object);
        fputc('[', out);
        ast_print_expr(out, e->u.index.index);
        fputc(']', out);
        break;
    case AST_CALL:
        ast_print_expr(out, e->u.call.callee);
        fputc('(', out);
        print_list(out, &e->u.call.args);
        fputc(')', out);
        break;
    }
}

static void print_stmts(FILE *out, const AstStmtList *l, int indent);

static void print_stmt(FILE *out, const AstStmt *s, int indent) {
    fprintf(out, "%*s", indent * 4, "");
    switch (s->kind) {
    case AST_STMT_EXPR:
        ast_print_expr(out, s->u.expr);
        fputs(";\n", out);
        break;
    case AST_STMT_ASSIGN:
        print_names(out, &s->u.assign.targets);
        fputs(" = ", out);
        print_list(out, &s->u.assign.values);
        fputs(";\n", out);
        break;
    case AST_STMT_DEF:
        fprintf(out, "def %s(", s->u.def.name);
        print_names(out, &s->u.def.params);
        fputs(") {\n", out);
        print_stmts(out, &s->u.def.body, indent + 1);
        fprintf(out, "%*sreturn ", (indent + 1) * 4, "");
        print_list(out, &s->u.def.returns);
        fprintf(out, ";\n%*s}\n", indent * 4, "");
        break;
    case AST_STMT_FOR:
        fputs("for ", out);
        print_names(out, &s->u.for_loop.names);
        fputs(" in ", out);
        ast_print_expr(out, s->u.for_loop.iterable);
        fputs(" {\n", out);
        print_stmts(out, &s->u.for_loop.body, indent + 1);
        fprintf(out, "%*s}\n", indent * 4, "");
        break;
    case AST_STMT_LOAD:
        fprintf(out, "load \"%s\";\n", s->u.load.path);
        break;
    case AST_STMT_REPL:
        fprintf(out, "# REPL: %s\n", s->u.repl.text);
        break;
    }
}

static void print_stmts(FILE *out, const AstStmtList *l, int indent) {
    for (size_t i = 0; i < l->count; i++) print_stmt(out, l->items[i], indent);
}

void ast_print_program(FILE *out, const AstProgram *p) { print_stmts(out, &p->stmts, 0); }
