/* The RASP grammar (Weiss et al. 2021, after the ANTLR grammar of the original REPL), as a pure
 * bison parser building the AST of parser/ast.h. Each rule carries its grammar as a comment.
 *
 * One grammar serves two entry points: the scanner first emits START_PROGRAM (a whole program)
 * or START_EXPR (one expression, for input literals). Syntax errors are recorded in the
 * DiagList; recovery skips to the next `;` or `}` so that one run reports several errors.
 *
 * Expression precedence, tightest first (binary operators are left-associative):
 *   primary; postfix e[i] e(args); prefix not - +; ^; * /; %; + -; == != < > <= >=;
 *   and or; e if c else e (right-associative); in (loosest). */

%code requires {
#include "parser/ast_build.h"
}

%code {
#include <string.h>

#include "lexer.h"

static void yyerror(YYLTYPE *loc, void *scanner, ParseCtx *ctx, const char *msg);

#define LOC(l) ((SrcLoc){ctx->file, (l).first_line, (l).first_column})
#define A (ctx->arena)
#define FIN(e) ast_expr_finish(ctx, (e))

/* An expression node of `kind` at `l` with the list `v` (AST_LIST, AST_RANGE, AST_ZIP...). */
static AstExpr *list_expr(ParseCtx *ctx, AstExprKind kind, YYLTYPE l, ExprVec v) {
    AstExpr *e = ast_new_expr(ctx->arena, kind, LOC(l));
    e->u.list = exprvec_list(v);
    return e;
}

static AstStmt *repl_stmt(ParseCtx *ctx, YYLTYPE l, const char *text) {
    AstStmt *s = ast_new_stmt(ctx->arena, AST_STMT_REPL, LOC(l));
    s->u.repl.text = text;
    diag_warning(ctx->diags, s->loc, "REPL command ignored: %s", text);
    return s;
}
}

%define api.pure full
%define parse.error custom
%define parse.lac full
%locations
%lex-param {void *scanner}
%parse-param {void *scanner} {ParseCtx *ctx}
%expect 0

%union {
    int64_t ival;
    double fval;
    const char *str;
    AstBinaryOp op;
    AstExpr *expr;
    AstStmt *stmt;
    ExprVec exprs;
    NameVec names;
    StmtVec stmts;
}

%token END_OF_FILE 0 "end of file"
%token START_PROGRAM START_EXPR
%token <str> ID "identifier"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token <str> STRING "string"
%token <str> REPL_CMD "REPL command"
%token <str> SET_EXAMPLE "'set example'"
%token REPL_END "end of line"
%token DEF "'def'" FOR "'for'" IN "'in'" RETURN "'return'" LOAD "'load'"
%token IF "'if'" ELSE "'else'" AND "'and'" OR "'or'" NOT "'not'"
%token SELECT_LP "'select('" AGGREGATE_LP "'aggregate('" RANGE_LP "'range('" ZIP_LP "'zip('"
%token LEN_LP "'len('" ROUND_LP "'round('" INDICATOR_LP "'indicator('" DRAW_LP "'draw('"
%token <op> EQ "'=='" NE "'!='" LT "'<'" GT "'>'" LE "'<='" GE "'>='"

%type <stmts> stmts
%type <stmt> stmt repl
%type <names> names params
%type <exprs> exprs args pairs
%type <op> cmp_op
%type <expr> expr in_expr cond_expr logic_expr cmp_expr add_expr mod_expr mul_expr pow_expr
%type <expr> unary_expr postfix_expr primary

%%

/* top = START_PROGRAM stmts EOF | START_EXPR expr EOF */
top:
    START_PROGRAM stmts {
        ctx->program->file = ctx->file;
        ctx->program->stmts = stmtvec_list($2);
    }
  | START_EXPR expr { ctx->expr = $2; }
  ;

/* stmts = stmt* */
stmts:
    %empty { $$ = (StmtVec){0}; }
  | stmts stmt {
        $$ = $1;
        if ($2) stmtvec_push(A, &$$, $2);
    }
  ;

/* stmt = expr ";" | names "=" expr ("," expr)* ";" | "load" STRING ";"
 *      | "def" ID "(" params ")" "{" stmt* "return" expr ("," expr)* ";" "}"
 *      | "for" names "in" expr "{" stmt* "}" | repl */
stmt:
    expr ';' {
        $$ = ast_new_stmt(A, AST_STMT_EXPR, LOC(@1));
        $$->u.expr = $1;
    }
  | names '=' exprs ';' {
        $$ = ast_new_stmt(A, AST_STMT_ASSIGN, LOC(@1));
        $$->u.assign.targets = namevec_list($1);
        $$->u.assign.values = exprvec_list($3);
    }
  | LOAD STRING ';' {
        $$ = ast_new_stmt(A, AST_STMT_LOAD, LOC(@1));
        $$->u.load.path = $2;
    }
  | DEF ID '(' params ')' '{' stmts RETURN exprs ';' '}' {
        $$ = ast_new_stmt(A, AST_STMT_DEF, LOC(@1));
        $$->u.def.name = $2;
        $$->u.def.params = namevec_list($4);
        $$->u.def.body = stmtvec_list($7);
        $$->u.def.returns = exprvec_list($9);
    }
  | FOR names IN expr '{' stmts '}' {
        $$ = ast_new_stmt(A, AST_STMT_FOR, LOC(@1));
        $$->u.for_loop.names = namevec_list($2);
        $$->u.for_loop.iterable = $4;
        $$->u.for_loop.body = stmtvec_list($6);
    }
  | repl { $$ = $1; }
  | error ';' { $$ = NULL; }
  | error '}' { $$ = NULL; }
  ;

/* repl = "set" ("s-op"|"selector")? "example" expr (";" | end of line)
 *      | "show" ("s-op"|"selector")? "example" | "full seq display" ("on"|"off")
 *      | ("s-op"|"selector")? "examples" ("on"|"off") | "exit" | "exit()" | "quit" | "quit()"
 *      | "draw" "(" expr ("," expr)? ")" ";"
 * (an optional ";" after the commands without an expression) */
repl:
    SET_EXAMPLE expr ';' { $$ = repl_stmt(ctx, @1, $1); }
  | SET_EXAMPLE expr REPL_END { $$ = repl_stmt(ctx, @1, $1); }
  | REPL_CMD { $$ = repl_stmt(ctx, @1, $1); }
  | REPL_CMD ';' { $$ = repl_stmt(ctx, @1, $1); }
  | DRAW_LP expr ')' ';' { $$ = repl_stmt(ctx, @1, "draw"); }
  | DRAW_LP expr ',' expr ')' ';' { $$ = repl_stmt(ctx, @1, "draw"); }
  ;

/* params = (ID ("," ID)*)? */
params:
    %empty { $$ = (NameVec){0}; }
  | names { $$ = $1; }
  ;

/* names = ID ("," ID)* */
names:
    ID {
        $$ = (NameVec){0};
        namevec_push(A, &$$, $1, LOC(@1));
    }
  | names ',' ID {
        $$ = $1;
        namevec_push(A, &$$, $3, LOC(@3));
    }
  ;

/* exprs = expr ("," expr)* */
exprs:
    expr {
        $$ = (ExprVec){0};
        exprvec_push(A, &$$, $1);
    }
  | exprs ',' expr {
        $$ = $1;
        exprvec_push(A, &$$, $3);
    }
  ;

/* expr = in_expr */
expr: in_expr { $$ = $1; } ;

/* in_expr = cond_expr ("in" cond_expr)*      (loosest) */
in_expr:
    cond_expr { $$ = $1; }
  | in_expr IN cond_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_IN, $1, $3)); }
  ;

/* cond_expr = logic_expr ("if" expr "else" cond_expr)? */
cond_expr:
    logic_expr { $$ = $1; }
  | logic_expr IF expr ELSE cond_expr {
        $$ = ast_new_expr(A, AST_COND, LOC(@1));
        $$->u.cond.then_e = $1;
        $$->u.cond.cond = $3;
        $$->u.cond.else_e = $5;
        FIN($$);
    }
  ;

/* logic_expr = cmp_expr (("and" | "or") cmp_expr)* */
logic_expr:
    cmp_expr { $$ = $1; }
  | logic_expr AND cmp_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_AND, $1, $3)); }
  | logic_expr OR cmp_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_OR, $1, $3)); }
  ;

/* cmp_expr = add_expr (cmp_op add_expr)* */
cmp_expr:
    add_expr { $$ = $1; }
  | cmp_expr cmp_op add_expr { $$ = FIN(ast_new_binary(A, LOC(@1), $2, $1, $3)); }
  ;

/* cmp_op = "==" | "!=" | "<" | ">" | "<=" | ">=" */
cmp_op: EQ | NE | LT | GT | LE | GE ;

/* add_expr = mod_expr (("+" | "-") mod_expr)* */
add_expr:
    mod_expr { $$ = $1; }
  | add_expr '+' mod_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_ADD, $1, $3)); }
  | add_expr '-' mod_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_SUB, $1, $3)); }
  ;

/* mod_expr = mul_expr ("%" mul_expr)*        (looser than * and /) */
mod_expr:
    mul_expr { $$ = $1; }
  | mod_expr '%' mul_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_MOD, $1, $3)); }
  ;

/* mul_expr = pow_expr (("*" | "/") pow_expr)* */
mul_expr:
    pow_expr { $$ = $1; }
  | mul_expr '*' pow_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_MUL, $1, $3)); }
  | mul_expr '/' pow_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_DIV, $1, $3)); }
  ;

/* pow_expr = unary_expr ("^" unary_expr)*    (left-associative, as in the original) */
pow_expr:
    unary_expr { $$ = $1; }
  | pow_expr '^' unary_expr { $$ = FIN(ast_new_binary(A, LOC(@1), AST_POW, $1, $3)); }
  ;

/* unary_expr = ("not" | "-" | "+") unary_expr | postfix_expr */
unary_expr:
    postfix_expr { $$ = $1; }
  | NOT unary_expr { $$ = FIN(ast_new_unary(A, LOC(@1), AST_NOT, $2)); }
  | '-' unary_expr { $$ = FIN(ast_new_unary(A, LOC(@1), AST_NEG, $2)); }
  | '+' unary_expr { $$ = FIN(ast_new_unary(A, LOC(@1), AST_POS, $2)); }
  ;

/* postfix_expr = primary ("[" expr "]" | "(" args ")")* */
postfix_expr:
    primary { $$ = $1; }
  | postfix_expr '[' expr ']' {
        $$ = ast_new_expr(A, AST_INDEX, LOC(@1));
        $$->u.index.object = $1;
        $$->u.index.index = $3;
        FIN($$);
    }
  | postfix_expr '(' args ')' {
        $$ = ast_new_expr(A, AST_CALL, LOC(@1));
        $$->u.call.callee = $1;
        $$->u.call.args = exprvec_list($3);
        FIN($$);
    }
  ;

/* args = (expr ("," expr)*)? */
args:
    %empty { $$ = (ExprVec){0}; }
  | exprs { $$ = $1; }
  ;

/* primary = "(" expr ")" | INT | FLOAT | STRING | ID
 *         | "[" exprs? "]" | "{" pairs? "}"
 *         | "[" expr "for" names "in" expr "]" | "{" expr ":" expr "for" names "in" expr "}"
 *         | "select(" expr "," expr "," cmp_op ")" | "aggregate(" expr "," expr ("," expr)? ")"
 *         | "range(" exprs ")" | "zip(" exprs ")" | "len(" expr ")"
 *         | "round(" expr ")" | "indicator(" expr ")" */
primary:
    '(' expr ')' { $$ = $2; }
  | INT {
        $$ = ast_new_expr(A, AST_INT_LIT, LOC(@1));
        $$->u.int_value = $1;
    }
  | FLOAT {
        $$ = ast_new_expr(A, AST_FLOAT_LIT, LOC(@1));
        $$->u.float_value = $1;
    }
  | STRING {
        $$ = ast_new_expr(A, AST_STRING_LIT, LOC(@1));
        $$->u.string_value = $1;
    }
  | ID {
        $$ = ast_new_expr(A, AST_NAME, LOC(@1));
        $$->u.name = $1;
    }
  | '[' ']' { $$ = FIN(list_expr(ctx, AST_LIST, @1, (ExprVec){0})); }
  | '[' exprs ']' { $$ = FIN(list_expr(ctx, AST_LIST, @1, $2)); }
  | '{' '}' { $$ = FIN(list_expr(ctx, AST_DICT, @1, (ExprVec){0})); }
  | '{' pairs '}' { $$ = FIN(list_expr(ctx, AST_DICT, @1, $2)); }
  | '[' expr FOR names IN expr ']' {
        $$ = ast_new_expr(A, AST_LIST_COMP, LOC(@1));
        $$->u.comp.body = $2;
        $$->u.comp.names = namevec_list($4);
        $$->u.comp.iterable = $6;
        FIN($$);
    }
  | '{' expr ':' expr FOR names IN expr '}' {
        $$ = ast_new_expr(A, AST_DICT_COMP, LOC(@1));
        $$->u.comp.key = $2;
        $$->u.comp.body = $4;
        $$->u.comp.names = namevec_list($6);
        $$->u.comp.iterable = $8;
        FIN($$);
    }
  | SELECT_LP expr ',' expr ',' cmp_op ')' {
        $$ = ast_new_expr(A, AST_SELECT, LOC(@1));
        $$->u.select.keys = $2;
        $$->u.select.queries = $4;
        $$->u.select.cmp = $6;
        FIN($$);
    }
  | AGGREGATE_LP expr ',' expr ')' {
        $$ = ast_new_expr(A, AST_AGGREGATE, LOC(@1));
        $$->u.aggregate.selector = $2;
        $$->u.aggregate.sop = $4;
        FIN($$);
    }
  | AGGREGATE_LP expr ',' expr ',' expr ')' {
        $$ = ast_new_expr(A, AST_AGGREGATE, LOC(@1));
        $$->u.aggregate.selector = $2;
        $$->u.aggregate.sop = $4;
        $$->u.aggregate.default_value = $6;
        FIN($$);
    }
  | RANGE_LP exprs ')' {
        if ($2.count > 3)
            diag_error(ctx->diags, LOC(@1), "range() takes 1 to 3 arguments, not %zu", $2.count);
        $$ = FIN(list_expr(ctx, AST_RANGE, @1, $2));
    }
  | ZIP_LP exprs ')' { $$ = FIN(list_expr(ctx, AST_ZIP, @1, $2)); }
  | LEN_LP expr ')' {
        $$ = ast_new_expr(A, AST_LEN, LOC(@1));
        $$->u.len.arg = $2;
        FIN($$);
    }
  | ROUND_LP expr ')' { $$ = FIN(ast_new_unary(A, LOC(@1), AST_ROUND, $2)); }
  | INDICATOR_LP expr ')' { $$ = FIN(ast_new_unary(A, LOC(@1), AST_INDICATOR, $2)); }
  ;

/* pairs = expr ":" expr ("," expr ":" expr)*    (keys at even, values at odd positions) */
pairs:
    expr ':' expr {
        $$ = (ExprVec){0};
        exprvec_push(A, &$$, $1);
        exprvec_push(A, &$$, $3);
    }
  | pairs ',' expr ':' expr {
        $$ = $1;
        exprvec_push(A, &$$, $3);
        exprvec_push(A, &$$, $5);
    }
  ;

%%

/* True when the symbol's name is one of the NULL-terminated `names`. */
static bool name_in(yysymbol_kind_t k, const char *const *names) {
    const char *n = yysymbol_name(k);
    for (; *names; names++)
        if (strcmp(n, *names) == 0) return true;
    return false;
}

/* True for the tokens that can begin an expression. */
static bool starts_expr(yysymbol_kind_t k) {
    static const char *const names[] = {"identifier", "integer", "number", "string", "'not'",
        "'select('", "'aggregate('", "'range('", "'zip('", "'len('", "'round('", "'indicator('",
        "'('", "'['", "'{'", "'-'", "'+'", NULL};
    return name_in(k, names);
}

/* True for the tokens that can continue a complete expression. */
static bool continues_expr(yysymbol_kind_t k) {
    static const char *const names[] = {"'in'", "'if'", "'and'", "'or'", "'=='", "'!='", "'<'",
        "'>'", "'<='", "'>='", "'+'", "'-'", "'%'", "'*'", "'/'", "'^'", "'['", "'('", NULL};
    return name_in(k, names);
}

/* A symbol's name for a message: bison quotes the aliases; strip one level of "...". */
static const char *symbol_text(ParseCtx *ctx, yysymbol_kind_t k) {
    const char *n = yysymbol_name(k);
    size_t len = strlen(n);
    if (len >= 2 && n[0] == '"' && n[len - 1] == '"') return arena_strndup(ctx->arena, n + 1, len - 2);
    return n;
}

/* "syntax error, unexpected X[, expecting A, B or C]": when a whole expression may come, the
 * tokens that begin one are summarised as "expression"; when an expression may go on, the
 * operators are summarised as "operator"; longer lists of alternatives are left out. */
static int yyreport_syntax_error(const yypcontext_t *yyctx, void *scanner, ParseCtx *ctx) {
    (void)scanner;
    enum { MAX_LISTED = 5 };
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(yyctx, expected, YYNTOKENS);
    const char *names[YYNTOKENS + 2];
    int count = 0;
    bool want_expr = false, want_op = false;
    for (int i = 0; i < n; i++) {
        want_expr |= expected[i] == YYSYMBOL_INT;
        want_op |= expected[i] == YYSYMBOL_IN;
    }
    if (want_expr) names[count++] = "expression";
    if (want_op) names[count++] = "operator";
    for (int i = 0; i < n; i++) {
        if ((want_expr && starts_expr(expected[i])) || (want_op && continues_expr(expected[i])))
            continue;
        names[count++] = symbol_text(ctx, expected[i]);
    }
    char msg[512];
    int len = snprintf(msg, sizeof msg, "syntax error");
    yysymbol_kind_t tok = yypcontext_token(yyctx);
    if (tok != YYSYMBOL_YYEMPTY)
        len += snprintf(msg + len, sizeof msg - (size_t)len, ", unexpected %s", symbol_text(ctx, tok));
    if (count > 0 && count <= MAX_LISTED) {
        len += snprintf(msg + len, sizeof msg - (size_t)len, ", expecting ");
        for (int i = 0; i < count && len < (int)sizeof msg; i++) {
            const char *sep = i == 0 ? "" : i == count - 1 ? " or " : ", ";
            len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s", sep, names[i]);
        }
    }
    const YYLTYPE *loc = yypcontext_location(yyctx);
    diag_error(ctx->diags, LOC(*loc), "%s", msg);
    return 0;
}

/* Called by bison only for "memory exhausted" (stack overflow on deeply nested input). */
static void yyerror(YYLTYPE *loc, void *scanner, ParseCtx *ctx, const char *msg) {
    (void)scanner;
    diag_error(ctx->diags, LOC(*loc), "%s (input nested too deeply)", msg);
}
