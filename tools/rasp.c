/* rasp: the interactive RASP REPL (repl/repl.h), a drop-in for the original interpreter's. */
#include <stdio.h>
#include <string.h>

#include "repl/lineread.h"
#include "repl/repl.h"

static const char help_text[] =
    "usage: rasp\n"
    "\n"
    "The interactive RASP REPL, a drop-in for the original interpreter's (Weiss et al. 2021):\n"
    "statements are read from standard input (with line editing and history on a terminal) and\n"
    "each new value, s-op and selector is printed as the original prints it, with an example on\n"
    "the running example (\"hello\").\n"
    "\n"
    "Commands besides RASP statements:\n"
    "  set [s-op|selector] example EXPR   the running example (a string or a list)\n"
    "  show [s-op|selector] example\n"
    "  [s-op|selector] examples on|off    whether new s-ops and selectors show an example\n"
    "  full seq display on|off            s-op examples as aligned input/output lines\n"
    "  load \"FILE\";                       runs FILE.rasp (relative to the working directory)\n"
    "  draw(SOP [, INPUT]);               writes the computation of SOP on INPUT (default: the\n"
    "                                     running example) as Graphviz dot to\n"
    "                                     comp_flows/NAME(INPUT).dot, and prints SOP(INPUT)\n"
    "  compile NAME [options] -o FILE     compiles the s-op NAME of the session into a model,\n"
    "                                     as raspcc does (options: --vocab, --max-len, --range,\n"
    "                                     --tol, --margin, --mlp, --max-mlp, --max-bytes,\n"
    "                                     --no-selfcheck)\n"
    "  exit | quit                        ends the session (so does the end of the input)\n";

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(help_text, stdout);
            return 0;
        }
        fprintf(stderr, "rasp: unknown argument '%s' (rasp takes its statements on standard input)\n", argv[i]);
        return 2;
    }
    Repl r;
    repl_init(&r, stdout);
    LineSource *src = line_source_stdin(stdout);
    if (!src) return 2;
    repl_run(&r, src);
    line_source_free(src);
    repl_free(&r);
    return 0;
}
