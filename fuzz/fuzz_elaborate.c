/* libFuzzer target for the elaborator: any bytes as a program; whatever parses is elaborated
 * with a small work budget, and every top-level s-op is evaluated on two short inputs.
 * The contract under test (ir/elaborate.h, ir/eval.h): errors are values, never crashes, hangs,
 * leaks or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_source.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "parser/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    SourceFile file;
    char *text = fuzz_source(data, size, &file);
    if (!text) return 0;

    Arena arena;
    arena_init(&arena);
    DiagList diags;
    diag_init(&diags, &arena);
    AstProgram prog;
    if (parse_program(&arena, &file, &prog, &diags)) {
        IrGraph g;
        ir_graph_init(&g, &arena);
        ElabOptions opt = {0};
        opt.base_dir = "/nonexistent"; /* loads fail instead of reading the disk */
        opt.max_steps = 20000;
        ElabResult r;
        elaborate_program(&g, &prog, &opt, &r, &diags);
        const Value str_in[] = {value_str("a"), value_str("b"), value_str("a")};
        const Value int_in[] = {value_int(2), value_int(-1), value_int(0), value_int(7)};
        for (size_t i = 0; i < r.count && i < 16; i++) {
            Value *out;
            IrEvalError err;
            ir_eval(&g, r.sops[i].node, str_in, 3, &arena, &out, &err);
            ir_eval(&g, r.sops[i].node, int_in, 4, &arena, &out, &err);
        }
    }
    arena_free(&arena);
    free(text);
    return 0;
}
