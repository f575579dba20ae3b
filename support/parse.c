#include "support/parse.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

bool parse_size(const char *s, size_t *out) {
    if (!s || *s < '0' || *s > '9') return false; /* no sign, no space */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > SIZE_MAX) return false;
    *out = (size_t)v;
    return true;
}
