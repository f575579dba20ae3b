/* libFuzzer target: a raspcc --batch manifest line (driver/batch.h) into a compile request. Any
 * bytes are refused with a message or give a request with exactly one of program and source;
 * nothing is compiled here (fuzz_compile covers the compiler). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver/batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena a;
    arena_init(&a);
    ElabOverride defs[] = {{"N", "1"}};
    CompileRequest defaults = {.vocab = "abc", .defines = defs, .n_defines = 1};
    CompileRequest r;
    const JsonValue *id;
    char err[512];
    if (batch_parse_line(&a, (const char *)data, size, 1, &defaults, &r, &id, err, sizeof err)) {
        if (!r.program == !r.source) abort();
        if (r.n_defines < 1 || strcmp(r.defines[0].name, "N") != 0) abort(); /* the defaults stay first */
    } else if (!err[0]) {
        abort();
    }
    arena_free(&a);
    return 0;
}
