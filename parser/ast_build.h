/* Private to the front end (lexer/lexer.l, parser/parser.y, parser/parse.c, parser/ast.c):
 * the state shared by the reentrant scanner and parser, and the AST node constructors the
 * grammar actions call. Nothing here is part of the parser's public contract (parser/parser.h). */
#ifndef RASPCC_PARSER_AST_BUILD_H
#define RASPCC_PARSER_AST_BUILD_H

#include "parser/ast.h"

/* Everything one parse needs; passed to both the scanner (as its `extra`) and the parser. */
typedef struct ParseCtx {
    Arena *arena;
    const SourceFile *file;
    DiagList *diags;
    void *scanner;      /* the flex scanner (yyscan_t) */
    AstProgram *program; /* result of START_PROGRAM */
    AstExpr *expr;       /* result of START_EXPR */

    /* Scanner state. */
    int start_token;     /* emitted once before anything else, then 0 */
    int line, col;       /* position of the next character (1-based) */
    size_t offset;       /* byte offset of the next character */
    bool at_stmt_start;  /* REPL words are recognised only where a statement may begin */
    bool prev_ends_expr; /* last token can end an expression (so `{` opens a block, not a dict) */
    int depth;           /* bracket nesting, for ending `set example EXPR` at a newline */
    bool in_set_example; /* inside `set example EXPR` */
    bool set_example_has_tokens;
    bool reported_depth; /* "nested too deeply" already reported */
} ParseCtx;

/* Growable vectors used while a list is being parsed. */
typedef struct ExprVec { AstExpr **items; size_t count, cap; } ExprVec;
typedef struct NameVec { const char **names; SrcLoc *locs; size_t count, cap; } NameVec;
typedef struct StmtVec { AstStmt **items; size_t count, cap; } StmtVec;

void exprvec_push(Arena *a, ExprVec *v, AstExpr *e);
void namevec_push(Arena *a, NameVec *v, const char *name, SrcLoc loc);
void stmtvec_push(Arena *a, StmtVec *v, AstStmt *s);
AstExprList exprvec_list(ExprVec v);
AstNameList namevec_list(NameVec v);
AstStmtList stmtvec_list(StmtVec v);

/* Expressions nested deeper than this are rejected, so that every stage may walk the AST
 * recursively without overflowing the stack. Left-recursive chains (`a + b + c ...`, `f()()...`)
 * are not bounded by bison's stack, hence the explicit limit. */
enum { AST_MAX_EXPR_DEPTH = 2000 };

/* Every expression is allocated by ast_new_expr, which records its nesting depth beside it.
 * ast_expr_finish computes the depth of a node whose children are set (children first, so
 * this is one level of work), reporting once per parse when it exceeds AST_MAX_EXPR_DEPTH. */
AstExpr *ast_new_expr(Arena *a, AstExprKind kind, SrcLoc loc);
AstExpr *ast_expr_finish(ParseCtx *ctx, AstExpr *e);
int ast_expr_depth(const AstExpr *e);
AstExpr *ast_new_unary(Arena *a, SrcLoc loc, AstUnaryOp op, AstExpr *operand);
AstExpr *ast_new_binary(Arena *a, SrcLoc loc, AstBinaryOp op, AstExpr *lhs, AstExpr *rhs);
AstStmt *ast_new_stmt(Arena *a, AstStmtKind kind, SrcLoc loc);

#endif
