/* The abstract syntax tree of a RASP program: what the parser produces and the elaborator
 * consumes. Nothing here is evaluated; names are not resolved.
 *
 * Every node carries the location of its first token. All nodes, arrays and strings live in the
 * Arena passed to the parser. Lists of children are (pointer, count) pairs. */
#ifndef RASPCC_PARSER_AST_H
#define RASPCC_PARSER_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"
#include "support/diag.h"

typedef enum AstUnaryOp {
    AST_NOT,       /* not e */
    AST_NEG,       /* -e */
    AST_POS,       /* +e */
    AST_ROUND,     /* round(e) */
    AST_INDICATOR, /* indicator(e) */
} AstUnaryOp;

/* Binary operators; also the comparison operators of select(). */
typedef enum AstBinaryOp {
    AST_ADD, AST_SUB, AST_MUL, AST_DIV, AST_MOD, AST_POW,
    AST_EQ, AST_NE, AST_LT, AST_GT, AST_LE, AST_GE,
    AST_AND, AST_OR,
    AST_IN, /* a in b */
} AstBinaryOp;

typedef enum AstExprKind {
    AST_INT_LIT,    /* 42            (non-negative; negatives are AST_NEG of a literal) */
    AST_FLOAT_LIT,  /* 1.5 */
    AST_STRING_LIT, /* "abc"         (no escapes, as in the original grammar) */
    AST_NAME,       /* x, True, False, tokens ... (resolved by the elaborator) */
    AST_LIST,       /* [e, ...] */
    AST_DICT,       /* {k: v, ...}   keys in items[2i], values in items[2i+1] */
    AST_LIST_COMP,  /* [body for names in iterable] */
    AST_DICT_COMP,  /* {key: body for names in iterable} */
    AST_UNARY,      /* op operand */
    AST_BINARY,     /* lhs op rhs */
    AST_COND,       /* then_e if cond else else_e */
    AST_SELECT,     /* select(keys, queries, cmp) */
    AST_AGGREGATE,  /* aggregate(selector, sop [, default]) */
    AST_RANGE,      /* range(args...)  1..3 args */
    AST_ZIP,        /* zip(args...) */
    AST_LEN,        /* len(arg) */
    AST_INDEX,      /* obj[index] */
    AST_CALL,       /* callee(args...)  function call or application of an s-op to an input */
} AstExprKind;

typedef struct AstExpr AstExpr;

typedef struct AstExprList {
    AstExpr **items;
    size_t count;
} AstExprList;

typedef struct AstNameList {
    const char **names;
    SrcLoc *locs;
    size_t count;
} AstNameList;

struct AstExpr {
    AstExprKind kind;
    SrcLoc loc;
    union {
        int64_t int_value;          /* AST_INT_LIT (saturates? no: the lexer rejects overflow) */
        double float_value;         /* AST_FLOAT_LIT */
        const char *string_value;   /* AST_STRING_LIT: contents without the quotes */
        const char *name;           /* AST_NAME */
        AstExprList list;           /* AST_LIST, AST_DICT, AST_RANGE, AST_ZIP */
        struct { AstUnaryOp op; AstExpr *operand; } unary;
        struct { AstBinaryOp op; AstExpr *lhs, *rhs; } binary;
        struct { AstExpr *then_e, *cond, *else_e; } cond;
        struct { AstExpr *keys, *queries; AstBinaryOp cmp; /* AST_EQ..AST_GE */ } select;
        struct { AstExpr *selector, *sop, *default_value; /* NULL when absent */ } aggregate;
        struct { AstExpr *arg; } len;
        struct { AstExpr *object, *index; } index;
        struct { AstExpr *callee; AstExprList args; } call;
        /* AST_LIST_COMP: key is NULL. AST_DICT_COMP: key is the key expression. */
        struct { AstExpr *key, *body; AstNameList names; AstExpr *iterable; } comp;
    } u;
};

typedef enum AstStmtKind {
    AST_STMT_EXPR,   /* e; */
    AST_STMT_ASSIGN, /* a, b = e1, e2;  (or a, b = f(x); with a multi-value result) */
    AST_STMT_DEF,    /* def f(a, b) { stmts... return e1, e2; } */
    AST_STMT_FOR,    /* for a, b in e { stmts... } */
    AST_STMT_LOAD,   /* load "file"; */
    AST_STMT_REPL,   /* a REPL command (set example, draw(...), ...): accepted, ignored */
} AstStmtKind;

typedef struct AstStmt AstStmt;

typedef struct AstStmtList {
    AstStmt **items;
    size_t count;
} AstStmtList;

struct AstStmt {
    AstStmtKind kind;
    SrcLoc loc;
    union {
        AstExpr *expr; /* AST_STMT_EXPR */
        struct { AstNameList targets; AstExprList values; } assign;
        struct {
            const char *name;
            AstNameList params;
            AstStmtList body;    /* statements before the return */
            AstExprList returns; /* the expressions of the final `return` */
        } def;
        struct { AstNameList names; AstExpr *iterable; AstStmtList body; } for_loop;
        struct { const char *path; } load;
        struct { const char *text; /* the command as written, for the warning */ } repl;
    } u;
};

typedef struct AstProgram {
    const SourceFile *file;
    AstStmtList stmts;
} AstProgram;

/* Human-readable names, for diagnostics and the AST printer. */
const char *ast_binary_op_text(AstBinaryOp op);  /* "+", "==", "and", "in", ... */
const char *ast_unary_op_text(AstUnaryOp op);    /* "not", "-", "round", ... */

/* Prints an expression fully parenthesised, e.g. "((a + b) * c)": used by tests of precedence. */
void ast_print_expr(FILE *out, const AstExpr *e);
void ast_print_program(FILE *out, const AstProgram *p);

#endif
