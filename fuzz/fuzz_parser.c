/* libFuzzer target for the parser: any bytes, as a program and as a single expression.
 * The contract under test (parser/parser.h): no crash, hang, leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_source.h"
#include "parser/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzSession s;
    if (!fuzz_begin(&s, data, size)) return 0;
    AstProgram prog;
    if (parse_program(&s.arena, &s.file, &prog, &s.diags)) {
        /* Exercise the printer on whatever parsed. */
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            ast_print_program(devnull, &prog);
            fclose(devnull);
        }
    }
    AstExpr *e;
    parse_expression(&s.arena, &s.file, &e, &s.diags);
    fuzz_end(&s);
    return 0;
}
