/* Line sources (repl/lineread.h). */
#include "repl/lineread.h"

#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct LineSource {
    FILE *in;
    FILE *prompt_out; /* NULL: no prompts (a file) */
    bool editing;     /* libedit on a terminal */
};

LineSource *line_source_stdin(FILE *prompt_out) {
    LineSource *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->in = stdin;
    s->prompt_out = prompt_out;
    s->editing = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    return s;
}

LineSource *line_source_file(FILE *f) {
    LineSource *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->in = f;
    return s;
}

void line_source_free(LineSource *s) { free(s); }

bool line_source_interactive(const LineSource *s) { return s->prompt_out != NULL; }

char *line_source_read(LineSource *s, const char *prompt) {
    if (s->editing) {
        char *line = readline(prompt);
        if (line && line[0]) add_history(line);
        return line;
    }
    if (s->prompt_out) {
        fputs(prompt, s->prompt_out);
        fflush(s->prompt_out);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, s->in);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (s->prompt_out && n > 0 && line[n - 1] == '\n') line[n - 1] = '\0'; /* input() strips it */
    return line;
}
