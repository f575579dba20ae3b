/* draw(SOP [, INPUT]); the original draws the computation of an s-op as a picture; this REPL
 * writes it as Graphviz dot (one node per s-op and selector it depends on, labelled with the
 * original's names and the values on the input) to comp_flow.dot in the working directory, then
 * prints the s-op's value on the input as the original does. */
#ifndef RASPCC_REPL_DRAW_H
#define RASPCC_REPL_DRAW_H

#include "repl/repl.h"

/* input may be NULL (the running example). On success *result is the entry to print. */
bool repl_draw(Repl *r, const AstExpr *sop, const AstExpr *input, Env *scope, ReplEntry *result, ElabFault *fault);

#endif
