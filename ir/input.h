/* Input sequences as users write them on the command line or in --inputs files.
 *
 * An input is a RASP literal: a string "hello" (a sequence of its characters), a list
 * [1, 2.5, "a", True] of atoms (negative numbers allowed), or a bare word hello (a string).
 * Empty lines are not inputs. */
#ifndef RASPCC_IR_INPUT_H
#define RASPCC_IR_INPUT_H

#include "ir/value.h"
#include "support/arena.h"

/* Parses one input. Atoms and strings are allocated in `arena`. On failure writes a message. */
bool input_parse(Arena *arena, const char *text, Value **atoms, size_t *n, char *errbuf, size_t errsize);

#endif
