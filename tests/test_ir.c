/* Unit tests for ir/ir.c: hash-consing, topological ids, constant folding, names, the shared
 * map/compare semantics (ir_map_apply, ir_cmp_apply) and ir_dump. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_main.h"
#include "ir/ir.h"

#define I(x) value_int(x)
#define F(x) value_float(x)
#define B(x) value_bool(x)
#define S(x) value_str(x)

static Arena arena;
static IrGraph g;
static SourceFile src = {"prog.rasp", "", 0};
static char msg[256];

static SrcLoc at(int line, int col) { return (SrcLoc){&src, line, col}; }
static const SrcLoc L1 = {&src, 1, 1};

static void setup(void) {
    arena_init(&arena);
    ir_graph_init(&g, &arena);
}
static void teardown(void) { arena_free(&arena); }

/* Every argument of every node has a smaller id; ids are dense indices into g.nodes. */
static void check_topological(void) {
    for (size_t i = 0; i < g.count; i++) {
        const IrNode *n = g.nodes[i];
        ck_assert_uint_eq(n->id, i);
        const IrNode *deps[3] = {0};
        size_t nd = 0;
        switch (n->kind) {
        case IR_MAP:
            for (uint32_t a = 0; a < n->u.map.nargs; a++) deps[nd++] = n->u.map.args[a];
            break;
        case IR_SELECT: deps[nd++] = n->u.select.keys; deps[nd++] = n->u.select.queries; break;
        case IR_SELECT_AND: case IR_SELECT_OR:
            deps[nd++] = n->u.combine.lhs; deps[nd++] = n->u.combine.rhs; break;
        case IR_SELECT_NOT: deps[nd++] = n->u.combine.lhs; break;
        case IR_AGGREGATE: deps[nd++] = n->u.aggregate.selector; deps[nd++] = n->u.aggregate.sop; break;
        case IR_SELECTOR_WIDTH: deps[nd++] = n->u.width.selector; break;
        default: break;
        }
        for (size_t d = 0; d < nd; d++) {
            ck_assert_ptr_nonnull(deps[d]);
            ck_assert_msg(deps[d]->id < n->id, "node %u uses %u", n->id, deps[d]->id);
            ck_assert_ptr_eq(g.nodes[deps[d]->id], deps[d]);
        }
    }
}

/* ---------------------------------------------------------------- hash-consing */

START_TEST(test_hash_consing_primitives) {
    IrNode *t1 = ir_tokens(&g, IR_TOKENS_STR, at(1, 1));
    IrNode *t2 = ir_tokens(&g, IR_TOKENS_STR, at(5, 9));
    IrNode *t3 = ir_tokens(&g, IR_TOKENS_INT, at(1, 1));
    ck_assert_ptr_eq(t1, t2);
    ck_assert_ptr_ne(t1, t3);
    ck_assert_int_eq(t2->loc.line, 1); /* location of the first */
    ck_assert_int_eq(t2->loc.col, 1);
    IrNode *i1 = ir_indices(&g, L1), *i2 = ir_indices(&g, at(2, 2));
    IrNode *n1 = ir_length(&g, L1), *n2 = ir_length(&g, at(3, 3));
    ck_assert_ptr_eq(i1, i2);
    ck_assert_ptr_eq(n1, n2);
    ck_assert_ptr_ne(i1, n1);
    ck_assert_int_eq(i1->kind, IR_INDICES);
    ck_assert_int_eq(n1->kind, IR_LENGTH);
    ck_assert_uint_eq(g.count, 4);
    check_topological();
}
END_TEST

START_TEST(test_hash_consing_constants) {
    IrNode *one = ir_const(&g, I(1), L1);
    IrNode *onef = ir_const(&g, F(1.0), L1);
    IrNode *tru = ir_const(&g, B(true), L1);
    ck_assert_ptr_ne(one, onef);
    ck_assert_ptr_ne(one, tru);
    ck_assert_ptr_ne(onef, tru);
    ck_assert_ptr_eq(ir_const(&g, I(1), at(9, 9)), one);
    ck_assert_ptr_eq(ir_const(&g, F(1.0), L1), onef);
    ck_assert_ptr_eq(ir_const(&g, B(true), L1), tru);
    ck_assert_int_eq(one->u.constant.kind, VAL_INT);
    ck_assert_int_eq(onef->u.constant.kind, VAL_FLOAT);
    ck_assert_int_eq(tru->u.constant.kind, VAL_BOOL);
    ck_assert_ptr_ne(ir_const(&g, I(2), L1), one);
    ck_assert_ptr_ne(ir_const(&g, B(false), L1), tru);
    /* 0.0 and -0.0 print differently ("0.0" / "-0.0"), so they are different constants */
    IrNode *z = ir_const(&g, F(0.0), L1), *nz = ir_const(&g, F(-0.0), L1);
    ck_assert_ptr_ne(z, nz);
    ck_assert(!signbit(z->u.constant.as.f));
    ck_assert(signbit(nz->u.constant.as.f));
    ck_assert_ptr_eq(ir_const(&g, F(-0.0), L1), nz);
    /* large ints that share a double stay distinct */
    ck_assert_ptr_ne(ir_const(&g, I(INT64_MAX), L1), ir_const(&g, I(INT64_MAX - 1), L1));
}
END_TEST

START_TEST(test_const_strings_copied_and_shared) {
    char buf[8] = "abc";
    IrNode *a = ir_const(&g, S(buf), L1);
    ck_assert_ptr_ne(a->u.constant.as.s, buf); /* "string contents are copied" */
    strcpy(buf, "xyz");
    ck_assert_str_eq(a->u.constant.as.s, "abc");
    char other[8] = "abc";
    ck_assert_ptr_eq(ir_const(&g, S(other), L1), a); /* by contents, not pointer */
    ck_assert_ptr_ne(ir_const(&g, S("abd"), L1), a);
    ck_assert_ptr_ne(ir_const(&g, S(""), L1), a);
    ck_assert_ptr_ne(ir_const(&g, S("1"), L1), ir_const(&g, I(1), L1));
}
END_TEST

START_TEST(test_hash_consing_structure) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    IrNode *idx = ir_indices(&g, L1);
    IrNode *m1 = ir_map_binary(&g, VOP_ADD, tok, idx, at(2, 1));
    IrNode *m2 = ir_map_binary(&g, VOP_ADD, tok, idx, at(3, 1));
    ck_assert_ptr_eq(m1, m2);
    ck_assert_int_eq(m2->loc.line, 2);
    ck_assert_ptr_ne(ir_map_binary(&g, VOP_ADD, idx, tok, L1), m1); /* argument order matters */
    ck_assert_ptr_ne(ir_map_binary(&g, VOP_SUB, tok, idx, L1), m1);
    ck_assert_ptr_eq(ir_map_unary(&g, VOP_NEG, tok, L1), ir_map_unary(&g, VOP_NEG, tok, L1));
    ck_assert_ptr_ne(ir_map_unary(&g, VOP_NEG, tok, L1), ir_map_unary(&g, VOP_NOT, tok, L1));
    ck_assert_ptr_ne(ir_map_unary(&g, VOP_NEG, tok, L1), ir_map_unary(&g, VOP_NEG, idx, L1));
    IrNode *c1 = ir_map_cond(&g, tok, idx, tok, L1);
    ck_assert_ptr_eq(ir_map_cond(&g, tok, idx, tok, L1), c1);
    ck_assert_ptr_ne(ir_map_cond(&g, tok, tok, idx, L1), c1);

    /* tables: compared by contents and kinds */
    Value k1[] = {I(1), I(2)}, k2[] = {I(1), I(2)}, k3[] = {I(1), F(2.0)}, v1[] = {S("a"), S("b")},
          v2[] = {S("a"), S("c")};
    IrNode *in1 = ir_map_in(&g, tok, k1, 2, L1);
    ck_assert_ptr_eq(ir_map_in(&g, tok, k2, 2, L1), in1);
    ck_assert_ptr_ne(ir_map_in(&g, tok, k3, 2, L1), in1);
    ck_assert_ptr_ne(ir_map_in(&g, tok, k1, 1, L1), in1);
    IrNode *lk = ir_map_lookup(&g, tok, k1, v1, 2, L1);
    ck_assert_ptr_eq(ir_map_lookup(&g, tok, k2, v1, 2, L1), lk);
    ck_assert_ptr_ne(ir_map_lookup(&g, tok, k1, v2, 2, L1), lk);
    IrNode *ix = ir_map_index(&g, tok, v1, 2, L1);
    ck_assert_ptr_eq(ir_map_index(&g, tok, v1, 2, L1), ix);
    ck_assert_ptr_ne(ir_map_index(&g, tok, v2, 2, L1), ix);
    ck_assert_ptr_ne((void *)ix, (void *)lk);
    /* the node owns copies of its tables */
    ck_assert_ptr_ne(lk->u.map.table_keys, k1);
    ck_assert_ptr_ne(lk->u.map.table_values[0].as.s, v1[0].as.s);
    ck_assert_str_eq(lk->u.map.table_values[1].as.s, "b");

    /* selectors */
    IrNode *s1 = ir_select(&g, idx, tok, IR_CMP_LT, L1);
    ck_assert_ptr_eq(ir_select(&g, idx, tok, IR_CMP_LT, at(7, 7)), s1);
    ck_assert_ptr_ne(ir_select(&g, tok, idx, IR_CMP_LT, L1), s1);
    ck_assert_ptr_ne(ir_select(&g, idx, tok, IR_CMP_LE, L1), s1);
    IrNode *s2 = ir_select(&g, idx, idx, IR_CMP_EQ, L1);
    ck_assert_ptr_eq(ir_select_and(&g, s1, s2, L1), ir_select_and(&g, s1, s2, L1));
    ck_assert_ptr_ne(ir_select_and(&g, s1, s2, L1), ir_select_or(&g, s1, s2, L1));
    ck_assert_ptr_ne(ir_select_and(&g, s1, s2, L1), ir_select_and(&g, s2, s1, L1));
    ck_assert_ptr_eq(ir_select_not(&g, s1, L1), ir_select_not(&g, s1, L1));
    ck_assert_ptr_ne(ir_select_not(&g, s1, L1), ir_select_not(&g, s2, L1));
    ck_assert(ir_is_selector(s1) && ir_is_selector(ir_select_not(&g, s1, L1)));
    ck_assert(!ir_is_selector(tok));

    /* aggregates: default value is part of the identity, by kind */
    IrNode *a1 = ir_aggregate(&g, s1, tok, I(0), L1);
    ck_assert_ptr_eq(ir_aggregate(&g, s1, tok, I(0), L1), a1);
    ck_assert_ptr_ne(ir_aggregate(&g, s1, tok, F(0.0), L1), a1);
    ck_assert_ptr_ne(ir_aggregate(&g, s1, tok, B(false), L1), a1);
    ck_assert_ptr_ne(ir_aggregate(&g, s2, tok, I(0), L1), a1);
    ck_assert_ptr_ne(ir_aggregate(&g, s1, idx, I(0), L1), a1);
    char d[4] = "x";
    IrNode *a2 = ir_aggregate(&g, s1, tok, S(d), L1);
    ck_assert_ptr_ne(a2->u.aggregate.default_value.as.s, d);
    ck_assert_ptr_eq(ir_aggregate(&g, s1, tok, S("x"), L1), a2);
    IrNode *w = ir_selector_width(&g, s1, L1);
    ck_assert_ptr_eq(ir_selector_width(&g, s1, L1), w);
    ck_assert_ptr_ne(ir_selector_width(&g, s2, L1), w);
    check_topological();
}
END_TEST

/* Enough nodes to force several rehashes; every one still found. */
START_TEST(test_many_nodes) {
    IrNode *idx = ir_indices(&g, L1);
    IrNode *cur = idx;
    IrNode *chain[1000];
    for (int i = 0; i < 1000; i++) {
        cur = ir_map_binary(&g, VOP_ADD, cur, ir_const(&g, I(i), L1), L1);
        chain[i] = cur;
    }
    size_t count = g.count;
    cur = idx;
    for (int i = 0; i < 1000; i++) {
        cur = ir_map_binary(&g, VOP_ADD, cur, ir_const(&g, I(i), L1), L1);
        ck_assert_ptr_eq(cur, chain[i]);
    }
    ck_assert_uint_eq(g.count, count);
    ck_assert_uint_eq(count, 1 + 1000 + 1000);
    check_topological();
}
END_TEST

/* ---------------------------------------------------------------- constant folding */

START_TEST(test_constant_folding) {
    IrNode *two = ir_const(&g, I(2), L1), *three = ir_const(&g, I(3), L1);
    IrNode *sum = ir_map_binary(&g, VOP_ADD, two, three, at(4, 2));
    ck_assert_int_eq(sum->kind, IR_CONST);
    ck_assert_int_eq(sum->u.constant.kind, VAL_INT);
    ck_assert_int_eq(sum->u.constant.as.i, 5);
    ck_assert_ptr_eq(sum, ir_const(&g, I(5), L1)); /* folded constants are hash-consed too */

    IrNode *q = ir_map_binary(&g, VOP_DIV, two, ir_const(&g, I(4), L1), L1);
    ck_assert_int_eq(q->kind, IR_CONST);
    ck_assert_int_eq(q->u.constant.kind, VAL_FLOAT);
    ck_assert(q->u.constant.as.f == 0.5);

    IrNode *neg = ir_map_unary(&g, VOP_NEG, two, L1);
    ck_assert_int_eq(neg->kind, IR_CONST);
    ck_assert_int_eq(neg->u.constant.as.i, -2);

    IrNode *negz = ir_map_unary(&g, VOP_NEG, ir_const(&g, F(0.0), L1), L1);
    ck_assert_int_eq(negz->kind, IR_CONST);
    ck_assert(signbit(negz->u.constant.as.f)); /* -0.0, not the 0.0 constant */

    IrNode *cmp = ir_map_binary(&g, VOP_LT, two, three, L1);
    ck_assert_int_eq(cmp->kind, IR_CONST);
    ck_assert_int_eq(cmp->u.constant.kind, VAL_BOOL);
    ck_assert(cmp->u.constant.as.b);

    /* and/or fold to one operand */
    IrNode *orr = ir_map_binary(&g, VOP_OR, ir_const(&g, I(0), L1), ir_const(&g, S("x"), L1), L1);
    ck_assert_int_eq(orr->kind, IR_CONST);
    ck_assert_str_eq(orr->u.constant.as.s, "x");

    /* string concatenation folds, into the graph's arena */
    IrNode *cat = ir_map_binary(&g, VOP_ADD, ir_const(&g, S("ab"), L1), ir_const(&g, S("cd"), L1), L1);
    ck_assert_int_eq(cat->kind, IR_CONST);
    ck_assert_str_eq(cat->u.constant.as.s, "abcd");

    IrNode *cond = ir_map_cond(&g, ir_const(&g, B(false), L1), two, three, L1);
    ck_assert_ptr_eq(cond, three);

    Value keys[] = {I(1), I(2)}, vals[] = {S("one"), S("two")};
    IrNode *lk = ir_map_lookup(&g, ir_const(&g, I(2), L1), keys, vals, 2, L1);
    ck_assert_int_eq(lk->kind, IR_CONST);
    ck_assert_str_eq(lk->u.constant.as.s, "two");
    IrNode *in = ir_map_in(&g, ir_const(&g, F(1.0), L1), keys, 2, L1);
    ck_assert_int_eq(in->kind, IR_CONST);
    ck_assert(in->u.constant.as.b);
    IrNode *ix = ir_map_index(&g, ir_const(&g, I(-1), L1), vals, 2, L1);
    ck_assert_int_eq(ix->kind, IR_CONST);
    ck_assert_str_eq(ix->u.constant.as.s, "two");

    /* nested: (2 + 3) * 2 */
    IrNode *prod = ir_map_binary(&g, VOP_MUL, sum, two, L1);
    ck_assert_int_eq(prod->kind, IR_CONST);
    ck_assert_int_eq(prod->u.constant.as.i, 10);
    check_topological();
}
END_TEST

START_TEST(test_no_folding_on_error) {
    IrNode *one = ir_const(&g, I(1), L1), *zero = ir_const(&g, I(0), L1);
    IrNode *div = ir_map_binary(&g, VOP_DIV, one, zero, at(3, 5));
    ck_assert_int_eq(div->kind, IR_MAP);
    ck_assert_int_eq(div->u.map.kind, IR_MAP_BINARY);
    ck_assert_int_eq(div->u.map.op, VOP_DIV);
    ck_assert_ptr_eq(div->u.map.args[0], one);
    ck_assert_ptr_eq(div->u.map.args[1], zero);
    ck_assert_int_eq(div->loc.line, 3);
    ck_assert_int_eq(div->loc.col, 5);
    ck_assert_ptr_eq(ir_map_binary(&g, VOP_DIV, one, zero, L1), div); /* still hash-consed */

    IrNode *ovf = ir_map_binary(&g, VOP_ADD, ir_const(&g, I(INT64_MAX), L1), one, L1);
    ck_assert_int_eq(ovf->kind, IR_MAP);
    IrNode *lt = ir_map_binary(&g, VOP_LT, ir_const(&g, S("a"), L1), one, L1);
    ck_assert_int_eq(lt->kind, IR_MAP);
    Value keys[] = {I(1)}, vals[] = {I(10)};
    IrNode *missing = ir_map_lookup(&g, ir_const(&g, I(5), L1), keys, vals, 1, L1);
    ck_assert_int_eq(missing->kind, IR_MAP);
    ck_assert_int_eq(missing->u.map.kind, IR_MAP_LOOKUP);
    IrNode *oob = ir_map_index(&g, ir_const(&g, I(1), L1), vals, 1, L1);
    ck_assert_int_eq(oob->kind, IR_MAP);
    IrNode *rnd = ir_map_unary(&g, VOP_ROUND, ir_const(&g, F(NAN), L1), L1);
    ck_assert_int_eq(rnd->kind, IR_MAP);

    /* maps with a non-constant argument are never folded */
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    ck_assert_int_eq(ir_map_binary(&g, VOP_MUL, tok, zero, L1)->kind, IR_MAP);
    ck_assert_int_eq(ir_map_binary(&g, VOP_ADD, one, tok, L1)->kind, IR_MAP);
    check_topological();
}
END_TEST

/* ---------------------------------------------------------------- names */

START_TEST(test_names_first_wins) {
    IrNode *t = ir_tokens(&g, IR_TOKENS_STR, L1);
    ck_assert_ptr_null(t->name);
    char name[8] = "x";
    ir_set_name(&g, t, name);
    ck_assert_str_eq(t->name, "x");
    ck_assert_ptr_ne(t->name, name); /* copied */
    strcpy(name, "zzz");
    ck_assert_str_eq(t->name, "x");
    ir_set_name(&g, t, "y");
    ck_assert_str_eq(t->name, "x");
    ir_set_name(&g, t, NULL);
    ck_assert_str_eq(t->name, "x");
    /* the shared node keeps the first name */
    IrNode *again = ir_tokens(&g, IR_TOKENS_STR, L1);
    ir_set_name(&g, again, "z");
    ck_assert_str_eq(again->name, "x");
    IrNode *u = ir_indices(&g, L1);
    ir_set_name(&g, u, NULL);
    ck_assert_ptr_null(u->name);
    ir_set_name(&g, u, "i");
    ck_assert_str_eq(u->name, "i");
}
END_TEST

/* ---------------------------------------------------------------- ir_map_apply */

#define EXPECT_OKV(r, kind_)                                                                      \
    do {                                                                                          \
        ck_assert_msg((r).ok, "failed: %s", (r).error);                                           \
        ck_assert_int_eq((r).value.kind, (kind_));                                                \
    } while (0)

START_TEST(test_map_apply_unary_binary_cond) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1), *idx = ir_indices(&g, L1);
    IrNode *neg = ir_map_unary(&g, VOP_NEG, tok, L1);
    Value a1[] = {I(5)};
    ValueResult r = ir_map_apply(neg, a1, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, -5);
    IrNode *ind = ir_map_unary(&g, VOP_INDICATOR, tok, L1);
    Value a2[] = {S("")};
    r = ir_map_apply(ind, a2, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, 0);
    IrNode *rnd = ir_map_unary(&g, VOP_ROUND, tok, L1);
    Value a3[] = {F(2.5)};
    r = ir_map_apply(rnd, a3, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, 2);

    IrNode *sub = ir_map_binary(&g, VOP_SUB, tok, idx, L1);
    Value b1[] = {I(3), I(10)};
    r = ir_map_apply(sub, b1, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, -7);
    IrNode *add = ir_map_binary(&g, VOP_ADD, tok, idx, L1);
    Value b2[] = {S("x"), S("y")};
    r = ir_map_apply(add, b2, &arena, msg, sizeof msg); /* concatenation into the arena */
    EXPECT_OKV(r, VAL_STR);
    ck_assert_str_eq(r.value.as.s, "xy");
    Value b3[] = {I(1), I(0)};
    IrNode *mod = ir_map_binary(&g, VOP_MOD, tok, idx, L1);
    r = ir_map_apply(mod, b3, &arena, msg, sizeof msg);
    ck_assert(!r.ok);
    ck_assert_ptr_nonnull(strstr(r.error, "by zero"));

    IrNode *cond = ir_map_cond(&g, tok, idx, tok, L1);
    Value c1[] = {S("nonempty"), I(1), I(2)};
    r = ir_map_apply(cond, c1, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, 1);
    Value c2[] = {F(0.0), S("then"), S("else")};
    r = ir_map_apply(cond, c2, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_STR);
    ck_assert_str_eq(r.value.as.s, "else");
    Value c3[] = {I(-1), F(1.5), I(2)};
    r = ir_map_apply(cond, c3, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_FLOAT);
    ck_assert(r.value.as.f == 1.5);
}
END_TEST

START_TEST(test_map_apply_in) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    Value list[] = {I(1), S("a"), F(2.5)};
    IrNode *in = ir_map_in(&g, tok, list, 3, L1);
    struct { Value x; bool want; } cases[] = {
        {I(1), true}, {F(1.0), true}, {B(true), true}, /* 1.0 in [1], True in [1] */
        {S("a"), true}, {S("b"), false}, {S("1"), false}, {F(2.5), true}, {I(2), false},
        {B(false), false}, {I(0), false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ValueResult r = ir_map_apply(in, &cases[i].x, &arena, msg, sizeof msg);
        EXPECT_OKV(r, VAL_BOOL);
        ck_assert_msg(r.value.as.b == cases[i].want, "case %zu", i);
    }
    IrNode *empty = ir_map_in(&g, tok, list, 0, L1);
    Value x = I(1);
    ValueResult r = ir_map_apply(empty, &x, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_BOOL);
    ck_assert(!r.value.as.b);
}
END_TEST

START_TEST(test_map_apply_lookup) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_STR, L1);
    Value keys[] = {S("a"), I(1), F(2.5)}, vals[] = {I(10), S("one"), B(true)};
    IrNode *lk = ir_map_lookup(&g, tok, keys, vals, 3, L1);
    Value x = S("a");
    ValueResult r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_INT);
    ck_assert_int_eq(r.value.as.i, 10);
    x = B(true); /* {1: 'one'}[True] -> 'one' */
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_STR);
    ck_assert_str_eq(r.value.as.s, "one");
    x = F(1.0);
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_STR);
    x = F(2.5);
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    EXPECT_OKV(r, VAL_BOOL);
    ck_assert(r.value.as.b);
    /* missing key: an error that names the key */
    x = S("zz");
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    ck_assert(!r.ok);
    ck_assert_ptr_nonnull(r.error);
    ck_assert_msg(strstr(r.error, "\"zz\"") != NULL, "message: %s", r.error);
    ck_assert_msg(strstr(r.error, "not in the dict") != NULL, "message: %s", r.error);
    x = I(2);
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    ck_assert(!r.ok);
    ck_assert_msg(strstr(r.error, "2") != NULL, "message: %s", r.error);
    x = S("1"); /* "1" is not the key 1 */
    r = ir_map_apply(lk, &x, &arena, msg, sizeof msg);
    ck_assert(!r.ok);
}
END_TEST

START_TEST(test_map_apply_index) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, L1);
    Value list[] = {S("a"), S("b"), S("c")};
    IrNode *ix = ir_map_index(&g, tok, list, 3, L1);
    struct { Value i; const char *want; } ok[] = {
        {I(0), "a"}, {I(2), "c"}, {I(-1), "c"}, {I(-3), "a"}, {B(true), "b"}, {B(false), "a"},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        ValueResult r = ir_map_apply(ix, &ok[k].i, &arena, msg, sizeof msg);
        EXPECT_OKV(r, VAL_STR);
        ck_assert_str_eq(r.value.as.s, ok[k].want);
    }
    Value bad[] = {I(3), I(-4), I(INT64_MAX), I(INT64_MIN)};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ValueResult r = ir_map_apply(ix, &bad[k], &arena, msg, sizeof msg);
        ck_assert_msg(!r.ok, "index %zu should fail", k);
        ck_assert_msg(strstr(r.error, "out of range") != NULL, "message: %s", r.error);
    }
    Value notint[] = {F(1.0), S("1"), F(0.0)};
    for (size_t k = 0; k < sizeof notint / sizeof notint[0]; k++) {
        ValueResult r = ir_map_apply(ix, &notint[k], &arena, msg, sizeof msg);
        ck_assert_msg(!r.ok, "index %zu should fail", k);
        ck_assert_msg(strstr(r.error, "must be an int") != NULL, "message: %s", r.error);
    }
    IrNode *empty = ir_map_index(&g, tok, list, 0, L1);
    Value z = I(0);
    ck_assert(!ir_map_apply(empty, &z, &arena, msg, sizeof msg).ok);
}
END_TEST

START_TEST(test_cmp_apply) {
    /* key CMP query */
    struct { IrCmp c; Value k, q; bool want; } cases[] = {
        {IR_CMP_EQ, I(1), F(1.0), true},  {IR_CMP_NE, I(1), F(1.0), false},
        {IR_CMP_LT, I(1), I(2), true},    {IR_CMP_LT, I(2), I(1), false},
        {IR_CMP_GT, I(2), I(1), true},    {IR_CMP_GT, I(1), I(2), false},
        {IR_CMP_LE, I(2), I(2), true},    {IR_CMP_LE, I(3), I(2), false},
        {IR_CMP_GE, I(2), I(2), true},    {IR_CMP_GE, I(1), I(2), false},
        {IR_CMP_LT, S("a"), S("b"), true}, {IR_CMP_EQ, S("a"), I(1), false},
        {IR_CMP_NE, S("a"), I(1), true},  {IR_CMP_EQ, B(true), I(1), true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ValueResult r = ir_cmp_apply(cases[i].c, cases[i].k, cases[i].q, msg, sizeof msg);
        EXPECT_OKV(r, VAL_BOOL);
        ck_assert_msg(r.value.as.b == cases[i].want, "case %zu", i);
    }
    ValueResult r = ir_cmp_apply(IR_CMP_LT, S("a"), I(1), msg, sizeof msg);
    ck_assert(!r.ok);
    r = ir_cmp_apply(IR_CMP_GE, I(1), S("a"), msg, sizeof msg);
    ck_assert(!r.ok);
}
END_TEST

START_TEST(test_names_of_enums) {
    ck_assert_str_eq(ir_cmp_text(IR_CMP_EQ), "==");
    ck_assert_str_eq(ir_cmp_text(IR_CMP_NE), "!=");
    ck_assert_str_eq(ir_cmp_text(IR_CMP_LT), "<");
    ck_assert_str_eq(ir_cmp_text(IR_CMP_GT), ">");
    ck_assert_str_eq(ir_cmp_text(IR_CMP_LE), "<=");
    ck_assert_str_eq(ir_cmp_text(IR_CMP_GE), ">=");
    ck_assert_str_eq(ir_token_type_name(IR_TOKENS_STR), "tokens_str");
    ck_assert_str_eq(ir_token_type_name(IR_TOKENS_INT), "tokens_int");
    ck_assert_str_eq(ir_token_type_name(IR_TOKENS_FLOAT), "tokens_float");
    ck_assert_str_eq(ir_token_type_name(IR_TOKENS_BOOL), "tokens_bool");
    ck_assert_str_eq(ir_kind_name(IR_TOKENS), "tokens");
    ck_assert_str_eq(ir_kind_name(IR_AGGREGATE), "aggregate");
    ck_assert_str_eq(ir_kind_name(IR_SELECTOR_WIDTH), "selector_width");
}
END_TEST

/* ---------------------------------------------------------------- ir_dump */

static char *dump(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ir_dump(f, &g);
    fclose(f);
    return buf;
}

#define EXPECT_LINE(text, line)                                                                   \
    ck_assert_msg(strstr((text), line "\n") != NULL, "dump lacks line '%s':\n%s", line, (text))

START_TEST(test_dump) {
    IrNode *tok = ir_tokens(&g, IR_TOKENS_INT, at(1, 1));      /* %0 */
    IrNode *idx = ir_indices(&g, at(1, 3));                    /* %1 */
    IrNode *opp = ir_map_binary(&g, VOP_SUB, tok, idx, at(1, 7)); /* %2 */
    ir_set_name(&g, opp, "opp");
    IrNode *len = ir_length(&g, at(2, 1));                     /* %3 */
    IrNode *sel = ir_select(&g, idx, opp, IR_CMP_LE, at(3, 5));  /* %4 */
    ir_aggregate(&g, sel, tok, I(0), at(4, 2));               /* %5 */
    ir_selector_width(&g, ir_select_not(&g, sel, at(5, 1)), at(5, 3)); /* %6, %7 */
    ir_map_unary(&g, VOP_NOT, len, at(6, 1));                 /* %8 */
    Value keys[] = {S("a"), I(1)}, vals[] = {F(0.5), B(true)};
    ir_map_lookup(&g, tok, keys, vals, 2, at(7, 1));          /* %9 */
    ir_const(&g, S("hi"), (SrcLoc){NULL, 0, 0});               /* %10 */
    ir_select_and(&g, sel, sel, at(8, 1));                    /* %11 */

    char *text = dump();
    EXPECT_LINE(text, "%0 = tokens(tokens_int)  # @ prog.rasp:1:1");
    EXPECT_LINE(text, "%1 = indices  # @ prog.rasp:1:3");
    /* the contract's own example, ir.h: "%3 = map(-, %1, %2)  # opp @ prog.rasp:1:7" */
    EXPECT_LINE(text, "%2 = map(-, %0, %1)  # opp @ prog.rasp:1:7");
    EXPECT_LINE(text, "%3 = length  # @ prog.rasp:2:1");
    EXPECT_LINE(text, "%4 = select(keys=%1, queries=%2, <=)  # @ prog.rasp:3:5");
    EXPECT_LINE(text, "%5 = aggregate(%4, %0, default=0)  # @ prog.rasp:4:2");
    EXPECT_LINE(text, "%6 = select_not(%4)  # @ prog.rasp:5:1");
    EXPECT_LINE(text, "%7 = selector_width(%6)  # @ prog.rasp:5:3");
    EXPECT_LINE(text, "%8 = map(not, %3)  # @ prog.rasp:6:1");
    EXPECT_LINE(text, "%9 = map(lookup, %0, keys=[\"a\", 1], values=[0.5, True])  # @ prog.rasp:7:1");
    EXPECT_LINE(text, "%10 = const(\"hi\")  # @ <unknown>");
    EXPECT_LINE(text, "%11 = select_and(%4, %4)  # @ prog.rasp:8:1");
    /* one line per node */
    size_t lines = 0;
    for (const char *c = text; *c; c++) lines += *c == '\n';
    ck_assert_uint_eq(lines, g.count);
    free(text);
}
END_TEST

START_TEST(test_dump_empty_graph) {
    char *text = dump();
    ck_assert_str_eq(text, "");
    free(text);
}
END_TEST

static Suite *ir_suite(void) {
    Suite *s = suite_create("ir");
    TCase *tc = tcase_create("build");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_hash_consing_primitives);
    tcase_add_test(tc, test_hash_consing_constants);
    tcase_add_test(tc, test_const_strings_copied_and_shared);
    tcase_add_test(tc, test_hash_consing_structure);
    tcase_add_test(tc, test_many_nodes);
    tcase_add_test(tc, test_constant_folding);
    tcase_add_test(tc, test_no_folding_on_error);
    tcase_add_test(tc, test_names_first_wins);
    suite_add_tcase(s, tc);
    TCase *ap = tcase_create("apply");
    tcase_add_checked_fixture(ap, setup, teardown);
    tcase_add_test(ap, test_map_apply_unary_binary_cond);
    tcase_add_test(ap, test_map_apply_in);
    tcase_add_test(ap, test_map_apply_lookup);
    tcase_add_test(ap, test_map_apply_index);
    tcase_add_test(ap, test_cmp_apply);
    tcase_add_test(ap, test_names_of_enums);
    suite_add_tcase(s, ap);
    TCase *dp = tcase_create("dump");
    tcase_add_checked_fixture(dp, setup, teardown);
    tcase_add_test(dp, test_dump);
    tcase_add_test(dp, test_dump_empty_graph);
    suite_add_tcase(s, dp);
    return s;
}

int main(void) {
    return run_suite(ir_suite());
}
