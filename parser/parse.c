/* The parser's entry points (parser/parser.h): set up a reentrant scanner over the source
 * bytes, run the bison parser with the start token for a program or a single expression, and
 * free the scanner. All AST memory is in the caller's arena. */
#include "parser/parser.h"

#include <limits.h>

#include "parser/ast_build.h"
#include "parser.h"
#include "lexer.h"

/* The location "the whole file", for problems that are not at any token. */
static SrcLoc file_loc(const ParseCtx *ctx) {
    SrcLoc loc = {ctx->file, 0, 0};
    return loc;
}

/* Runs one parse; the result lands in ctx->program or ctx->expr. */
static bool run_parser(ParseCtx *ctx, int start_token) {
    size_t errors_before = ctx->diags->error_count;
    ctx->start_token = start_token;
    ctx->line = 1;
    ctx->col = 1;
    ctx->at_stmt_start = start_token == START_PROGRAM; /* no REPL commands in an expression */
    if (ctx->file->len > INT_MAX) {
        diag_error(ctx->diags, file_loc(ctx), "source file too large");
        return false;
    }
    yyscan_t scanner;
    if (yylex_init_extra(ctx, &scanner) != 0) {
        diag_error(ctx->diags, file_loc(ctx), "out of memory starting the scanner");
        return false;
    }
    ctx->scanner = scanner;
    YY_BUFFER_STATE buf = yy_scan_bytes(ctx->file->text, (int)ctx->file->len, scanner);
    int rc = yyparse(scanner, ctx);
    yy_delete_buffer(buf, scanner);
    yylex_destroy(scanner);
    ctx->scanner = NULL;
    return rc == 0 && ctx->diags->error_count == errors_before;
}

bool parse_program(Arena *arena, const SourceFile *file, AstProgram *out, DiagList *diags) {
    *out = (AstProgram){.file = file};
    ParseCtx ctx = {.arena = arena, .file = file, .diags = diags, .program = out};
    return run_parser(&ctx, START_PROGRAM);
}

bool parse_expression(Arena *arena, const SourceFile *file, AstExpr **out, DiagList *diags) {
    ParseCtx ctx = {.arena = arena, .file = file, .diags = diags};
    bool ok = run_parser(&ctx, START_EXPR);
    *out = ok ? ctx.expr : NULL;
    return ok && *out != NULL;
}
