/* The IR: a DAG of s-ops and selectors. It is the only thing the front end (elaborator) and the
 * back ends (reference evaluator, compiler) share.
 *
 * An s-op maps an input sequence x_1..x_n to a sequence of n atoms (ir/value.h); a selector
 * maps it to an n x n boolean matrix, row = query position, column = key position.
 *
 * Guarantees of a built graph:
 *   - nodes are created only through the builders below, which hash-cons them: building a node
 *     structurally equal to an existing one returns the existing node (common subexpressions
 *     are shared; the location and name are those of the first);
 *   - arguments are created before their users, so node ids (0..count-1) are a topological
 *     order and iterating g->nodes in order visits arguments first;
 *   - maps whose arguments are all IR_CONST are folded to IR_CONST when the operation succeeds
 *     (when it fails, the map node is kept so evaluation reports the error with its location);
 *   - every node has a source location; `name` is the first variable it was bound to, if any.
 *
 * Node kinds and their meaning on an input of length n (positions 0..n-1):
 *   IR_TOKENS         the input converted per token_type (tokens_str, tokens_int, ...)
 *   IR_INDICES        i
 *   IR_LENGTH         n                                   (primitive, not a derived s-op)
 *   IR_CONST          the same atom at every position      (an atom used where an s-op is needed)
 *   IR_MAP            an elementwise function of 1..3 s-ops (see IrMapKind)
 *   IR_SELECT         sel[q][k] = key[k] CMP query[q]
 *   IR_SELECT_AND/OR  elementwise and/or of two selectors;  IR_SELECT_NOT: negation
 *   IR_AGGREGATE      out[q] = default if no k selected; the value at k if exactly one k is;
 *                     the mean (a float) if several are and all values of the s-op are numbers
 *                     (bool sequences are not numbers here); otherwise an error
 *   IR_SELECTOR_WIDTH out[q] = number of k selected for q (primitive, lowered specially)
 */
#ifndef RASPCC_IR_IR_H
#define RASPCC_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/value.h"
#include "support/arena.h"
#include "support/diag.h"

typedef enum IrKind {
    IR_TOKENS, IR_INDICES, IR_LENGTH, IR_CONST,
    IR_MAP,
    IR_SELECT, IR_SELECT_AND, IR_SELECT_OR, IR_SELECT_NOT,
    IR_AGGREGATE, IR_SELECTOR_WIDTH,
} IrKind;

/* How the input atoms become `tokens`. */
typedef enum IrTokenType { IR_TOKENS_STR, IR_TOKENS_INT, IR_TOKENS_FLOAT, IR_TOKENS_BOOL } IrTokenType;
/* The original's tokens_asis (the input atoms unconverted), which only interactive sessions
 * (ir/session.h) bind. Outside the enum so that the compiler, which has no vocabulary for it,
 * needs no case for it: a session refuses to compile a graph that reads it. */
#define IR_TOKENS_ASIS ((IrTokenType)4)

/* The comparison of a select: selected when `key CMP query`. */
typedef enum IrCmp { IR_CMP_EQ, IR_CMP_NE, IR_CMP_LT, IR_CMP_GT, IR_CMP_LE, IR_CMP_GE } IrCmp;

typedef enum IrMapKind {
    IR_MAP_UNARY,  /* op(args[0])                 op: VOP_NOT, VOP_NEG, VOP_POS, VOP_ROUND, VOP_INDICATOR */
    IR_MAP_BINARY, /* args[0] op args[1]          op: arithmetic, comparison, VOP_AND, VOP_OR */
    IR_MAP_COND,   /* args[1] if args[0] else args[2]   (Python truthiness of args[0]) */
    IR_MAP_IN,     /* args[0] in table_keys       -> bool */
    IR_MAP_LOOKUP, /* dict lookup: table_values[j] where table_keys[j] == args[0]; missing key = error */
    IR_MAP_INDEX,  /* list indexing: table_values[args[0]]; args[0] must be an int, negative counts
                      from the end as in Python, out of range = error */
} IrMapKind;

typedef struct IrNode IrNode;

struct IrNode {
    uint32_t id;      /* dense, topological */
    IrKind kind;
    SrcLoc loc;
    const char *name; /* first variable bound to this node, or NULL */
    union {
        IrTokenType token_type; /* IR_TOKENS */
        Value constant;         /* IR_CONST */
        struct {
            IrMapKind kind;
            ValueOp op;           /* IR_MAP_UNARY / IR_MAP_BINARY */
            IrNode *args[3];
            uint32_t nargs;       /* 1, 2 (binary) or 3 (cond) */
            const Value *table_keys;   /* IR_MAP_IN, IR_MAP_LOOKUP */
            const Value *table_values; /* IR_MAP_LOOKUP, IR_MAP_INDEX */
            size_t table_len;
        } map;
        struct { IrNode *keys, *queries; IrCmp cmp; } select;
        struct { IrNode *lhs, *rhs; /* rhs NULL for IR_SELECT_NOT */ } combine;
        struct { IrNode *selector, *sop; Value default_value; } aggregate;
        struct { IrNode *selector; } width;
    } u;
};

static inline bool ir_is_selector(const IrNode *n) {
    return n->kind >= IR_SELECT && n->kind <= IR_SELECT_NOT;
}

typedef struct IrGraph {
    Arena *arena;       /* owns every node, table and string of the graph */
    IrNode **nodes;     /* nodes[id] */
    size_t count, cap;
    IrNode **buckets;   /* hash-consing table (open addressing over node pointers) */
    size_t nbuckets;
} IrGraph;

void ir_graph_init(IrGraph *g, Arena *arena);

/* Builders. `loc` is where the construct appears in the source. All return non-NULL. */
IrNode *ir_tokens(IrGraph *g, IrTokenType type, SrcLoc loc);
IrNode *ir_indices(IrGraph *g, SrcLoc loc);
IrNode *ir_length(IrGraph *g, SrcLoc loc);
IrNode *ir_const(IrGraph *g, Value v, SrcLoc loc);  /* string contents are copied */
IrNode *ir_map_unary(IrGraph *g, ValueOp op, IrNode *x, SrcLoc loc);
IrNode *ir_map_binary(IrGraph *g, ValueOp op, IrNode *a, IrNode *b, SrcLoc loc);
IrNode *ir_map_cond(IrGraph *g, IrNode *cond, IrNode *then_v, IrNode *else_v, SrcLoc loc);
IrNode *ir_map_in(IrGraph *g, IrNode *x, const Value *list, size_t n, SrcLoc loc);
IrNode *ir_map_lookup(IrGraph *g, IrNode *x, const Value *keys, const Value *values, size_t n, SrcLoc loc);
IrNode *ir_map_index(IrGraph *g, IrNode *x, const Value *list, size_t n, SrcLoc loc);
IrNode *ir_select(IrGraph *g, IrNode *keys, IrNode *queries, IrCmp cmp, SrcLoc loc);
IrNode *ir_select_and(IrGraph *g, IrNode *a, IrNode *b, SrcLoc loc);
IrNode *ir_select_or(IrGraph *g, IrNode *a, IrNode *b, SrcLoc loc);
IrNode *ir_select_not(IrGraph *g, IrNode *a, SrcLoc loc);
IrNode *ir_aggregate(IrGraph *g, IrNode *selector, IrNode *sop, Value default_value, SrcLoc loc);
IrNode *ir_selector_width(IrGraph *g, IrNode *selector, SrcLoc loc);

/* Names the node if it has no name yet (the elaborator calls this on assignment). */
void ir_set_name(IrGraph *g, IrNode *n, const char *name);

/* Applies a map node's function to argument atoms (args[0..nargs-1]); strings it creates (+ of
 * strings) go in `arena`. The reference evaluator
 * and the compiler's table builder both use this, so they cannot disagree. */
ValueResult ir_map_apply(const IrNode *map, const Value *args, Arena *arena, char *msgbuf,
                         size_t msgsize);
/* key CMP query, with Python semantics (a string against a number under < is a type error). */
ValueResult ir_cmp_apply(IrCmp cmp, Value key, Value query, char *msgbuf, size_t msgsize);

const char *ir_kind_name(IrKind k);
const char *ir_cmp_text(IrCmp c);          /* "==", "<", ... */
const char *ir_token_type_name(IrTokenType t); /* "tokens_str", ... */
/* Prints the graph, one node a line: "%3 = map(-, %1, %2)  # opp @ prog.rasp:1:7". */
void ir_dump(FILE *out, const IrGraph *g);

#endif
