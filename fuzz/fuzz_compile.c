/* libFuzzer target for the compiler: any bytes as a program; what parses and elaborates (with a
 * small work budget) is compiled at a small vocabulary and length, and the model is run on a few
 * inputs and compared with the reference evaluator. The contract under test (codegen/codegen.h):
 * a compile error or a model that agrees with the reference, never a crash, a hang, a leak or a
 * silent disagreement (which aborts, so libFuzzer keeps the input). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_source.h"
#include "codegen/codegen.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "parser/parser.h"
#include "runtime/forward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool agree(Value a, Value b) {
    if (value_is_number(a) && value_is_number(b) && a.kind != VAL_BOOL && b.kind != VAL_BOOL)
        return fabs(value_as_double(a) - value_as_double(b)) <= 1e-6 * fmax(1.0, fabs(value_as_double(b)));
    return a.kind == b.kind && value_equal(a, b);
}

/* Runs model and reference on one input; aborts on a disagreement. */
static void differential(const IrGraph *g, const IrNode *out, const Model *m, Workspace *ws, const Value *in,
                         size_t n, Arena *arena) {
    Value *got, *want;
    char err[256];
    IrEvalError ref_err;
    bool model_ok = model_run(m, ws, in, n, arena, &got, err, sizeof err);
    bool ref_ok = ir_eval(g, out, in, n, arena, &want, &ref_err);
    bool same = model_ok == ref_ok;
    for (size_t i = 0; same && model_ok && i < n; i++) same = agree(got[i], want[i]);
    if (!same) {
        fprintf(stderr, "fuzz_compile: model and reference disagree (model: %s, reference: %s)\n",
                model_ok ? "ok" : err, ref_ok ? "ok" : ref_err.message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 2048) return 0;
    FuzzSession s;
    if (!fuzz_begin(&s, data, size)) return 0;
    IrGraph g;
    ElabResult r;
    if (fuzz_elaborate(&s, &g, &r) && r.last_sop) {
        Model m;
        model_init(&m);
        CodegenOptions co = {.vocab_spec = "ab", .max_len = 3};
        if (codegen_compile(&g, r.last_sop, "out", &co, &m, &s.diags)) {
            Workspace ws;
            char err[128];
            if (workspace_init(&ws, &m, err, sizeof err)) {
                const Value a = value_str("a"), b = value_str("b");
                const Value inputs[][3] = {{a, b, a}, {b, b, b}, {a, a, b}};
                for (size_t i = 0; i < 3; i++) differential(&g, r.last_sop, &m, &ws, inputs[i], 3, &s.arena);
                differential(&g, r.last_sop, &m, &ws, inputs[0], 1, &s.arena);
                workspace_free(&ws);
            }
        }
        model_free(&m);
    }
    fuzz_end(&s);
    return 0;
}
