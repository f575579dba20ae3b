/* The compiler back end: IR (ir/ir.h) -> the weights of a transformer (runtime/model.h).
 *
 * Passes, in order (each in its own file under codegen/; a pass calls only earlier ones; the
 * design is docs/compiler.md, the shared data codegen/internal.h):
 *   rewrite.c     the program copied into the compiler's graph, simplified exactly (aggregates
 *                 over selectors that only select the query's own position become maps; the
 *                 RASP paper's BOS idiom becomes a width)
 *   positional.c  exact tables of the s-ops and selectors that depend only on the position and
 *                 the length (index arithmetic), from the reference evaluator at every length
 *   valueset.c    the exact finite value set of every reachable s-op (the doubles the reference
 *                 computes, kinds included), with positional tables, disjoint supports and
 *                 position-correlated arguments; unbounded where too large
 *   selterms.c    selector analysis: pairs, formulas, index matches, inclusion-exclusion terms
 *   classify.c    each map: a free view, an MLP tabulating it from chosen leaves (fusion), or a
 *                 gated product; evaluation of fused maps
 *   demand.c      which views (one-hot, number, u, kind block, index target) consumers read
 *   plan.c        views, residual directions "sop:value" in program order, ASAP time slots, the
 *                 heads and MLPs to build (with ops.c, selector.c, joint.c, kinds.c)
 *   mlp.c, emit.c the weights, layer by layer, with the BOS row tracked exactly
 *
 * Contract: codegen_compile either returns a model that computes exactly what the reference
 * evaluator computes on every input within the vocabulary and maximum length (value and kind;
 * real-valued outputs within the error bound the model states), or fails with diagnostics
 * located at the s-op concerned. It never approximates silently. raspcc also runs the model
 * against the reference before writing it (verify/). */
#ifndef RASPCC_CODEGEN_CODEGEN_H
#define RASPCC_CODEGEN_CODEGEN_H

#include "ir/ir.h"
#include "runtime/model.h"

typedef struct CodegenOptions {
    const char *vocab_spec;  /* "abc" (characters), "a,b,c" (comma list) or "0..9" (int range);
                                NULL: none given (an error if the program reads tokens) */
    size_t max_len;          /* longest input; default 8 when 0 */
    bool have_range;         /* --range LO..HI: numeric tokens lie in [range_lo, range_hi] */
    double range_lo, range_hi;
    const char *program_source; /* stored in the model for --check */
    const char *program_name;
    const char *compile_flags;
    /* The output is compared as numbers only (1, 1.0 and True alike): no kind block is built.
     * For exporting the attention computation (raspcc --fut-target); a model compiled so
     * prints a representative kind where the program's kinds collide. */
    bool numbers_only;
    /* Every head plain attention: no causal mask, no heavy BOS (a FUT target's heads; raspcc
     * --fut-target). Costs layers or units where those would save them. */
    bool plain_heads;
    /* Limits that keep a compile bounded (0: the defaults below); exceeding one is a located
     * error naming the figure. */
    size_t max_mlp;          /* hidden units of one layer's MLP (default CODEGEN_DEFAULT_MAX_MLP) */
    size_t max_bytes;        /* bytes of the model's weights, dense float64 (CODEGEN_DEFAULT_MAX_BYTES) */
    FILE *plan_out;          /* when set, the plan is printed there (raspcc --dump-plan) */
    /* Real-valued tokens: the error allowed to one approximated function of a real (0: 1e-6),
     * the margin around a jump of one where the model refuses to answer (0: 1e-6), and exact
     * products in gated MLPs (--mlp gated). */
    double real_tol, real_margin;
    bool gated_mlp;
} CodegenOptions;

#define CODEGEN_DEFAULT_MAX_MLP ((size_t)1 << 19)
#define CODEGEN_DEFAULT_MAX_BYTES ((size_t)1 << 31)

/* Compiles `output` (an s-op of g) into *model (initialised by the caller with model_init).
 * Reports problems to diags, located at the s-op they concern. */
bool codegen_compile(const IrGraph *g, const IrNode *output, const char *output_name,
                     const CodegenOptions *opt, Model *model, DiagList *diags);

/* Parses a --vocab spec for the given token type (ir/ir.h IrTokenType). Atoms allocated in
 * arena. Returns false and writes a message on a malformed spec. */
bool codegen_parse_vocab(const char *spec, IrTokenType type, Arena *arena, Value **vocab,
                         size_t *n, char *errbuf, size_t errsize);

#endif
