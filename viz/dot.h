/* The s-op graph of a program in Graphviz dot (raspcc --dot).
 *
 * Nodes are the s-ops and selectors the output depends on, in topological order; constants are
 * written into the operation of their users, not drawn. Each node shows its name (or kind), its
 * operation and, given the compiled model, where the model computes it: the writers
 * (viz/residual.h) of the residual dims whose labels name it (its name, or KIND@LINE:COL for an
 * unnamed s-op, as the compiler labels them). An s-op with no dims of its own is "inside its
 * readers": a linear view of other dims, or a map fused into a reader's MLP. Nodes are grouped
 * in a cluster per stage (embedding, layer L) by the last layer that writes them, filled by
 * what wrote them last (attention head: blue, MLP: orange, embedding: grey). When several s-ops
 * the output depends on carry the same name their dims cannot be told apart: each shows the
 * writers of all of them and says so. Residual dims that name no s-op drawn (one, bos, helper
 * dims) are listed in a note. The output is drawn with a bold border. */
#ifndef RASPCC_VIZ_DOT_H
#define RASPCC_VIZ_DOT_H

#include <stdio.h>

#include "ir/ir.h"
#include "runtime/model.h"

/* m may be NULL: the graph without placement. */
void viz_write_dot(FILE *out, const IrGraph *g, const IrNode *output, const Model *m);

#endif
