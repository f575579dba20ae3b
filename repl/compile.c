/* compile NAME ... -o FILE (repl/compile.h). */
#include "repl/compile.h"

#include <ctype.h>
#include <string.h>

bool repl_is_compile_command(const char *line) {
    while (isspace((unsigned char)*line)) line++;
    if (strncmp(line, "compile", 7) != 0 || !isspace((unsigned char)line[7])) return false;
    return !strchr(line, '=') && !strchr(line, ';');
}

void repl_compile_command(Repl *r, const char *line, Env *scope) {
    (void)scope;
    fprintf(r->out, "compile: not yet: %s\n", line);
}
