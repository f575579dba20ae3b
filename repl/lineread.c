/* Line sources (repl/lineread.h). */
#include "repl/lineread.h"

#include <editline/readline.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct LineSource {
    FILE *in;
    FILE *prompt_out; /* NULL: no prompts (a file) */
    bool editing;     /* libedit on a terminal */
    struct sigaction previous;
};

/* Set by SIGINT: a signal handler can only leave a flag. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

LineSource *line_source_stdin(FILE *prompt_out) {
    LineSource *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->in = stdin;
    s->prompt_out = prompt_out;
    s->editing = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: the read returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->previous);
    return s;
}

LineSource *line_source_file(FILE *f) {
    LineSource *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->in = f;
    return s;
}

void line_source_free(LineSource *s) {
    if (s && s->prompt_out) sigaction(SIGINT, &s->previous, NULL);
    free(s);
}

bool line_source_interactive(const LineSource *s) { return s->prompt_out != NULL; }

LineStatus line_source_read(LineSource *s, const char *prompt, char **line) {
    *line = NULL;
    if (s->prompt_out) interrupted = 0;
    if (s->editing) {
        *line = readline(prompt);
        if (interrupted) {
            free(*line);
            *line = NULL;
            return LINE_INTERRUPTED;
        }
        if (!*line) return LINE_END;
        if ((*line)[0]) add_history(*line);
        return LINE_OK;
    }
    if (s->prompt_out) {
        fputs(prompt, s->prompt_out);
        fflush(s->prompt_out);
    }
    size_t cap = 0;
    errno = 0;
    ssize_t n = getline(line, &cap, s->in);
    if (n < 0) {
        free(*line);
        *line = NULL;
        if (s->prompt_out && interrupted) {
            clearerr(s->in);
            return LINE_INTERRUPTED;
        }
        return LINE_END;
    }
    if (s->prompt_out && n > 0 && (*line)[n - 1] == '\n') (*line)[n - 1] = '\0'; /* input() strips it */
    return LINE_OK;
}
