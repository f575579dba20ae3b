/* Numbers on a command line: the one parser every tool uses for counts. */
#ifndef RASPCC_SUPPORT_PARSE_H
#define RASPCC_SUPPORT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* A decimal count: digits only (no sign, no trailing text), within range; false otherwise
 * (NULL, empty, "-1", "12x", a value past SIZE_MAX). */
bool parse_size(const char *s, size_t *out);

#endif
