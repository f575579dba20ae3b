/* libFuzzer target for the parser: any bytes, as a program and as a single expression.
 * The contract under test (parser/parser.h): no crash, hang, leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_source.h"
#include "parser/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    SourceFile file;
    char *text = fuzz_source(data, size, &file);
    if (!text) return 0;

    Arena arena;
    arena_init(&arena);
    DiagList diags;
    diag_init(&diags, &arena);
    AstProgram prog;
    if (parse_program(&arena, &file, &prog, &diags)) {
        /* Exercise the printer on whatever parsed. */
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            ast_print_program(devnull, &prog);
            fclose(devnull);
        }
    }
    AstExpr *e;
    parse_expression(&arena, &file, &e, &diags);
    arena_free(&arena);
    free(text);
    return 0;
}
