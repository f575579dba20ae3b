/* compile NAME [--vocab V] [--max-len N] [--range LO..HI] [--tol T] [--margin M] [--mlp relu|gated]
 *         [--max-mlp N] [--max-bytes N] [--no-selfcheck] -o FILE
 * The REPL's own command (not in the original): compiles the s-op NAME of the session into a
 * model file, as raspcc would compile the session's statements as a program. The model stores
 * those statements (every console statement that ran without error, loads included), so that
 * rasprun --check can re-elaborate them; they are elaborated as a batch program first, and NAME
 * compiled from that elaboration, so the stored program and the weights agree by construction. */
#ifndef RASPCC_REPL_COMPILE_H
#define RASPCC_REPL_COMPILE_H

#include "repl/repl.h"

/* True when `line` is a compile command (the word compile, then an option or a name, and no
 * `=` or `;`: `compile = 3;` stays an assignment). */
bool repl_is_compile_command(const char *line);
/* Runs it, printing what it did or why not. */
void repl_compile_command(Repl *r, const char *line, Env *scope);

#endif
