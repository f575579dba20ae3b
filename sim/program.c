/* The constants a simulator program was compiled with, read from the program a model stores
 * (raspcc writes each -D NAME=VALUE into the text in place of the first top-level assignment, so
 * `NAME = VALUE;` at the start of a line is what the model computes). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

/* The text after "NAME =" on the first line that starts with NAME, or NULL. */
static const char *assignment(const char *source, const char *name) {
    size_t len = strlen(name);
    for (const char *line = source; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, name, len) != 0) continue;
        const char *p = line + len;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '=' || p[1] == '=') continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        return p;
    }
    return NULL;
}

bool sim_program_number(const char *source, const char *name, double *value) {
    const char *p = source ? assignment(source, name) : NULL;
    if (!p) return false;
    char *end;
    double v = strtod(p, &end);
    while (end != p && (*end == ' ' || *end == '\t')) end++;
    if (end == p || *end != ';') return false;
    *value = v;
    return true;
}

size_t sim_program_list(const char *source, const char *name, size_t *out, size_t max) {
    const char *p = source ? assignment(source, name) : NULL;
    if (!p || *p != '[') return 0;
    size_t n = 0;
    for (p++; *p && *p != ']' && n < max;) {
        while (*p == ' ' || *p == ',') p++;
        if (!isdigit((unsigned char)*p)) break;
        char *end;
        out[n++] = (size_t)strtoul(p, &end, 10);
        p = end;
    }
    return n;
}
