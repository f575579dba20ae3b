/* Shared by the tests that compile RASP source in-process: elaborate a program given as text,
 * compile one output with codegen_compile, and compare atoms the way rasprun --check does. */
#ifndef RASPCC_TESTS_COMPILE_FIXTURE_H
#define RASPCC_TESTS_COMPILE_FIXTURE_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "verify/verify.h"

typedef struct Compiled {
    Arena arena;
    IrGraph g;
    DiagList diags;
    ElabResult r;
    IrNode *out;
    Model model;
    bool ok; /* codegen_compile succeeded */
} Compiled;

/* Elaborates `src` (which must succeed) and compiles its s-op `output` with `opt`. */
static inline Compiled *compile_with(const char *src, const char *output, CodegenOptions opt) {
    Compiled *c = calloc(1, sizeof *c);
    arena_init(&c->arena);
    ir_graph_init(&c->g, &c->arena);
    diag_init(&c->diags, &c->arena);
    model_init(&c->model);
    ck_assert_msg(rasp_load_program(&c->g, NULL, src, "t.rasp", NULL, &c->r, &c->diags), "program does not load");
    c->out = elab_find_output(&c->r, output);
    ck_assert_msg(c->out != NULL, "no output %s", output);
    opt.program_source = src;
    opt.program_name = "t.rasp";
    c->ok = codegen_compile(&c->g, c->out, output, &opt, &c->model, &c->diags);
    return c;
}

static inline Compiled *compile_src(const char *src, const char *output, const char *vocab, size_t max_len) {
    return compile_with(src, output, (CodegenOptions){.vocab_spec = vocab, .max_len = max_len});
}

static inline void compiled_free(Compiled *c) {
    model_free(&c->model);
    arena_free(&c->arena);
    free(c);
}

static inline const char *compiled_first_error(const Compiled *c) {
    for (size_t i = 0; i < c->diags.count; i++)
        if (c->diags.items[i].severity == DIAG_ERROR) return c->diags.items[i].message;
    return "";
}

/* A model's output atom against the reference's, as rasprun --check compares them: the same
 * kind and exactly the same value (within the model's stated bound for real-valued outputs). */
static inline bool compiled_same(const Compiled *c, Value got, Value want) {
    return verify_same_atom_within(got, want, verify_model_bound(&c->model), verify_model_rel(&c->model));
}

/* The model and the reference on one input (the reference must not raise): true when the model
 * answers, every position the reference's within the stated bound (asserted); false when it
 * refuses the input as within a margin, the only refusal allowed. */
static inline bool expect_agree_or_margin(Compiled *c, Workspace *ws, Arena *a, const Value *in, size_t n,
                                          const char *what, int t) {
    char err[512];
    Value *got, *want;
    IrEvalError ref_err;
    ck_assert_msg(ir_eval(&c->g, c->out, in, n, a, &want, &ref_err), "%s input %d: the reference raises", what, t);
    if (!model_run(&c->model, ws, in, n, a, &got, err, sizeof err)) {
        ck_assert_msg(strstr(err, "within the margin"), "%s input %d: %s", what, t, err);
        return false;
    }
    for (size_t j = 0; j < n; j++)
        ck_assert_msg(compiled_same(c, got[j], want[j]), "%s input %d position %zu: model %.17g, reference %.17g", what, t,
                      j, value_as_double(got[j]), value_as_double(want[j]));
    return true;
}

#endif
