/* Lines for the REPL: from a terminal with line editing and history (libedit), or from a stream
 * (a pipe, a loaded file) read plainly. The original prints its prompt before every line it
 * reads from its standard input, a terminal or not, and none for a loaded file; so do these. */
#ifndef RASPCC_REPL_LINEREAD_H
#define RASPCC_REPL_LINEREAD_H

#include <stdbool.h>
#include <stdio.h>

typedef struct LineSource LineSource;

/* Standard input: libedit when it and standard output are terminals, else plain reading with
 * the prompt written to `prompt_out`. Ctrl-C interrupts the line being read (SIGINT is caught
 * for the life of the source). */
LineSource *line_source_stdin(FILE *prompt_out);
/* A file being loaded: no prompts; lines keep their newline, as Python's readline() does. */
LineSource *line_source_file(FILE *f);
void line_source_free(LineSource *s);

typedef enum LineStatus {
    LINE_OK,          /* *line: malloc'd, without its newline for standard input */
    LINE_END,         /* the end of the input */
    LINE_INTERRUPTED, /* Ctrl-C while reading standard input: the original drops the statement */
} LineStatus;

/* The next line. */
LineStatus line_source_read(LineSource *s, const char *prompt, char **line);
/* True for the REPL's own input (prompts, end of input prints a newline); false for files. */
bool line_source_interactive(const LineSource *s);

#endif
