/* The parser: source text to AST (parser/ast.h), built with flex (lexer/lexer.l) and bison
 * (parser/parser.y), both reentrant with no global state.
 *
 * Contract: parse_program never crashes, hangs or leaks on any input bytes. On syntax errors it
 * records one diagnostic per error (recovering at the next `;` or `}` to report several), and
 * returns false; *out is then unspecified. REPL commands produce warnings and AST_STMT_REPL. */
#ifndef RASPCC_PARSER_PARSER_H
#define RASPCC_PARSER_PARSER_H

#include "parser/ast.h"

bool parse_program(Arena *arena, const SourceFile *file, AstProgram *out, DiagList *diags);

/* Parses a single expression (an input literal such as "abc" or [1, 2.5]); used for inputs. */
bool parse_expression(Arena *arena, const SourceFile *file, AstExpr **out, DiagList *diags);

#endif
