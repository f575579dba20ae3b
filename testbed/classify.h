/* Static classification of a RASP program by the selections it makes (on the IR, before the
 * compiler rewrites anything).
 *
 * Every atomic select(keys, queries, cmp) reachable from the output is one of:
 *   constant       both sides constant (select(1, 1, ==): every key);
 *   prefix         indices against indices with <, <=, >, >= (causal or anti-causal windows);
 *   token filter   one side constant, the other derived from tokens (select(tokens, 1, ==)): a
 *                  predicate on the key, i.e. what is counted;
 *   position filter one side constant, the other positional, not constant (select(indices, 3, ==));
 *   positional     both sides non-constant, neither derived from tokens (select(indices,
 *                  length - 1, ==), select(indices, indices - 1, ==));
 *   content        both sides non-constant, at least one derived from tokens
 *                  (select(tokens, tokens, ==), select(indices, q, ==) with q read from tokens).
 * "Derived from tokens" follows every argument: maps, aggregates (their value and their
 * selector) and selector widths.
 *
 * The program's class is the strongest kind it uses:
 *   content-dependent  some content select: where a query looks depends on the input;
 *   positional         no content select, but some positional select or position filter;
 *   counting           only constant, prefix and token-filter selects: every aggregate is a
 *                      count or a mean of token predicates over all keys or a prefix (the C-RASP
 *                      fragment, with averaging). */
#ifndef RASPCC_TESTBED_CLASSIFY_H
#define RASPCC_TESTBED_CLASSIFY_H

#include <stddef.h>

#include "ir/ir.h"

typedef enum TbSelectKind {
    TB_SEL_CONSTANT, TB_SEL_PREFIX, TB_SEL_TOKEN_FILTER, TB_SEL_POSITION_FILTER, TB_SEL_POSITIONAL,
    TB_SEL_CONTENT, TB_SEL_KINDS
} TbSelectKind;

typedef enum TbClass { TB_CLASS_COUNTING, TB_CLASS_POSITIONAL, TB_CLASS_CONTENT } TbClass;

typedef struct TbClassification {
    TbClass cls;
    size_t selects[TB_SEL_KINDS]; /* atomic selects of each kind reachable from the output */
    size_t aggregates, widths;    /* reachable aggregates and selector widths */
} TbClassification;

void tb_classify(const IrGraph *g, const IrNode *output, TbClassification *out);

const char *tb_class_name(TbClass c);          /* "counting", "positional", "content-dependent" */
const char *tb_select_kind_name(TbSelectKind k); /* "constant", "prefix", ... */

#endif
