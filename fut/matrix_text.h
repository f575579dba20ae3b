/* Matrices written as text: the INPUT of `raspfut run` (docs/fut.md "Command line").
 *
 *   matrix = row { rowsep row } { rowsep | blank }   rowsep = ';' | newline
 *   row    = number { sep number }                   sep = blanks | [blanks] ',' [blanks]
 *   number = [+-] (digits [. [digits]] | . digits) [(e|E) [+-] digits]
 *
 * Blanks are spaces, tabs and carriage returns. Only decimal numbers: no hex (0x10), no inf or
 * nan, no empty field (1,,0), and no number whose double would be infinite or an underflow to 0
 * (1e400, 1e-400): each is refused with the row, the number's place and the text, since reading
 * it as something else would run the backbone on an input nobody wrote. */
#ifndef RASPCC_FUT_MATRIX_TEXT_H
#define RASPCC_FUT_MATRIX_TEXT_H

#include "fut/fut.h"

/* Parses text (NUL-terminated) into a matrix of `cols` columns and at least one row, allocated
 * in the arena. On failure returns false with a message ("row 2, number 3: ...") in err. */
bool fut_matrix_from_text(Arena *a, const char *text, size_t cols, FutMat *out, char *err, size_t errsize);

/* One number of the grammar above, the whole string (no blanks around it). */
bool fut_number_from_text(const char *s, double *out, char *err, size_t errsize);

#endif
