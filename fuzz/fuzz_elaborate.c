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
    FuzzSession s;
    if (!fuzz_begin(&s, data, size)) return 0;
    IrGraph g;
    ElabResult r;
    if (fuzz_elaborate(&s, &g, &r)) {
        const Value str_in[] = {value_str("a"), value_str("b"), value_str("a")};
        const Value int_in[] = {value_int(2), value_int(-1), value_int(0), value_int(7)};
        for (size_t i = 0; i < r.count && i < 16; i++) {
            Value *out;
            IrEvalError err;
            ir_eval(&g, r.sops[i].node, str_in, 3, &s.arena, &out, &err);
            ir_eval(&g, r.sops[i].node, int_in, 4, &s.arena, &out, &err);
        }
    }
    fuzz_end(&s);
    return 0;
}
