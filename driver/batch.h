/* raspcc --batch MANIFEST: many compilations in one process (for building datasets of compiled
 * models), one JSON result line for each manifest line.
 *
 * The manifest is JSON Lines: one object a line, blank lines skipped. Its keys are raspcc's
 * options, named as on the command line without the dashes:
 *   "program"   the program file (a path, relative to the current directory), or
 *   "source"    the program's text, with "name" its name in messages (default "<line N>")
 *   "model"     where to write the model (absent: compile and check, write nothing)
 *   "output"    the s-op to compile
 *   "vocab"     a --vocab string, or a JSON list of tokens ("vocab": ["a", ",", "?"])
 *   "max-len", "range", "tol", "margin", "mlp", "max-mlp", "max-bytes"
 *               strings as typed after the option, or JSON numbers
 *   "defines"   {"NAME": VALUE, ...} for -D NAME=VALUE: VALUE a string holding the RASP literal
 *               ("\"abc\"" for a string), a number, or true/false
 *   "no-selfcheck"  true to skip the self-check
 *   "id"        any JSON value, echoed in the result
 * A key not listed is an error of that line. Flags given beside --batch are defaults that a line
 * overrides; "defines" add to -D given beside --batch (a line's value of a name wins).
 *
 * Each result is one JSON object on one line, in manifest order, flushed as it is written:
 *   {"line": N, "id": ID, "program": P, "output": S, "model": M, "status": 0, "stats": {...},
 *    "messages": [...]}
 * line: the manifest line (1-based); id: as given (absent when not given); program: the file or
 * name; output: the s-op compiled (null when none was chosen); model: the file written (null when
 * none); status: raspcc's exit status for that program alone (0; 2 a bad line, program, flag
 * value or failed compile; 3 the self-check found the model disagreeing with the program);
 * stats: what --stats --json prints (null unless the program compiled); messages: every
 * diagnostic and driver message, {"severity": "error"|"warning"|"note", "message": ..., and
 * "file", "line", "col" when it has a location}. */
#ifndef RASPCC_DRIVER_BATCH_H
#define RASPCC_DRIVER_BATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "driver/compile.h"
#include "runtime/json.h"

typedef struct BatchSummary {
    size_t programs, failed; /* lines run; lines whose status is not 0 */
} BatchSummary;

/* Runs every line of `manifest`, writing results to `out`. `defaults` holds the flags given
 * beside --batch (its program, source, model_path, messages and plan_out are ignored). With
 * progress_to set (a terminal), a progress bar there when the manifest is a file that can be
 * read twice (counted first). */
void batch_run(FILE *manifest, FILE *out, const CompileRequest *defaults, FILE *progress_to, BatchSummary *sum);

/* One line into a request (exposed for tests): false with the reason in err. Strings live in
 * `arena`; *id is the line's "id" or NULL. */
bool batch_parse_line(Arena *arena, const char *line, size_t len, size_t line_no, const CompileRequest *defaults,
                      CompileRequest *req, const JsonValue **id, char *err, size_t errsize);

#endif
