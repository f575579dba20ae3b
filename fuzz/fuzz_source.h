/* Shared by the fuzz targets that read programs: the fuzzer's bytes as a NUL-terminated source
 * file (embedded NULs stay part of it). The caller frees the returned text. */
#ifndef RASPCC_FUZZ_FUZZ_SOURCE_H
#define RASPCC_FUZZ_FUZZ_SOURCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/diag.h"

static inline char *fuzz_source(const uint8_t *data, size_t size, SourceFile *file) {
    char *text = malloc(size + 1);
    if (!text) return NULL;
    memcpy(text, data, size);
    text[size] = '\0';
    *file = (SourceFile){"<fuzz>", text, size};
    return text;
}

#endif
