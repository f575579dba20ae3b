/* The program generator of fuzz_compile (progen.h describes it). */
#include "fuzz/progen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_STATEMENTS = 10,
    MAX_DEPTH = 4,
    STMT_BUDGET = 10, /* inner (non-leaf) productions per statement */
    MAX_VARS = 24,
    MAX_TEXT = 16384,
};

typedef enum Ty { TY_NUM, TY_BOOL, TY_STR, TY_SEL, TY_N } Ty;

typedef struct Buf {
    char *s;
    size_t n, cap;
    bool oom;
} Buf;

static void bput(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(Buf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = true; return; }
        if (b->s && (size_t)k < room) { b->n += (size_t)k; return; }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = true; return; }
        b->s = s;
        b->cap = cap;
    }
}

typedef struct Var {
    char name[16];
    bool sop; /* an s-op (else a compile-time atom) */
} Var;

/* Helper defs a program can call (emitted once, before the statements). */
enum { DEF_BOS_WIDTH, DEF_FRAC_PREVS, DEF_STABLE_SORT, DEF_TRANSPOSE, DEF_N };
static const char *const def_text[DEF_N] = {
    "def with_bos_width(s) {\n"
    "    s = s or select(indices, 0, ==);\n"
    "    return round((1 / aggregate(s, indicator(indices == 0)))) - 1;\n"
    "}\n",
    "def frac_prevs(sop, val) {\n"
    "    prevs = select(indices, indices, <=);\n"
    "    return aggregate(prevs, indicator(sop == val));\n"
    "}\n",
    "def stable_sort(vals, keys) {\n"
    "    precedes = select(keys, keys, <) or (select(keys, keys, ==) and select(indices, indices, <));\n"
    "    target = selector_width(precedes);\n"
    "    return aggregate(select(target, indices, ==), vals);\n"
    "}\n",
    "def transpose(x) {\n"
    "    n = length ^ 0.5;\n"
    "    reflected = (indices % n) * n + (indices - indices % n) / n;\n"
    "    return aggregate(select(indices, reflected, ==), x);\n"
    "}\n",
};

typedef struct Gen {
    const uint8_t *d;
    size_t n, pos;
    Buf *o;
    bool tokens_int;
    const char *tok;         /* how the program names its tokens */
    char atoms[8][8];        /* token literals in source form ("a" or 3) */
    size_t n_atoms;
    Var vars[TY_N][MAX_VARS];
    size_t nvars[TY_N];
    int budget;
    unsigned defs;           /* bit per DEF_* used */
    uint64_t prods;
    int counter;
    Buf stmts;              /* finished statements, each after those it reads */
    size_t n_stmts, max_stmts; /* statements so far (with `out`) and the cap */
} Gen;

static unsigned pick(Gen *g, unsigned n) {
    if (n <= 1 || g->pos >= g->n) return 0;
    return g->d[g->pos++] % n;
}

/* Weighted choice among the first k alternatives of w; alternative 0 when out of bytes. */
static unsigned wpick(Gen *g, const unsigned char *w, unsigned k) {
    unsigned total = 0;
    for (unsigned i = 0; i < k; i++) total += w[i];
    unsigned r = pick(g, total);
    for (unsigned i = 0; i < k; i++) {
        if (r < w[i]) return i;
        r -= w[i];
    }
    return 0;
}

static const char *pick_str(Gen *g, const char *const *list, unsigned n) { return list[pick(g, n)]; }
#define PICK(g, arr) pick_str((g), (arr), (unsigned)(sizeof(arr) / sizeof *(arr)))

static void use(Gen *g, ProgenProd pp) { g->prods |= (uint64_t)1 << pp; }

static bool leaf_only(Gen *g, int depth) { return depth >= MAX_DEPTH || g->budget <= 0; }

/* The production of an expression: w weighs the alternatives, the first `leaves` of which are
 * leaves. A statement's top expression is mostly an inner one (`x = tokens;` says little);
 * deep ones and those past the budget are leaves. */
static unsigned production(Gen *g, const unsigned char *w, size_t k, unsigned leaves, int depth) {
    if (leaf_only(g, depth)) return wpick(g, w, leaves);
    if (depth == 0 && g->pos < g->n && pick(g, 8) != 0) return leaves + wpick(g, w + leaves, (unsigned)k - leaves);
    return wpick(g, w, (unsigned)k);
}

static bool gen(Gen *g, Ty t, int depth);
static bool gen_num(Gen *g, int depth);
static bool gen_bool(Gen *g, int depth);
static bool gen_str(Gen *g, int depth);
static void gen_sel(Gen *g, int depth);

static const char *cmp_op(Gen *g) {
    static const char *const ops[] = {"==", "<", "<=", ">", ">=", "!=", "==", "<"};
    return PICK(g, ops);
}

/* A token literal: one of the vocabulary's, sometimes one outside it. */
static void tok_atom(Gen *g) {
    unsigned i = pick(g, (unsigned)g->n_atoms + 1);
    if (i < g->n_atoms) bput(g->o, "%s", g->atoms[i]);
    else bput(g->o, "%s", g->tokens_int ? "7" : "\"z\"");
}

/* An earlier variable of type t; false when there is none. */
static void new_var(Gen *g, Ty t, char *name, size_t size) {
    static const char *const prefix[TY_N] = {"x", "b", "w", "s"};
    snprintf(name, size, "%s%d", prefix[t], ++g->counter);
}

static void bind(Gen *g, Ty t, const char *name, bool sop) {
    if (g->nvars[t] >= MAX_VARS) return;
    Var *v = &g->vars[t][g->nvars[t]++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->sop = sop;
}

static Ty any_type(Gen *g) {
    static const unsigned char w[] = {4, 2, 2, 3};
    static const Ty ty[] = {TY_NUM, TY_BOOL, TY_STR, TY_SEL};
    return ty[wpick(g, w, 4)];
}

/* A new variable read where it is introduced: its statement (`name = text` when text is given,
 * else a generated expression of type t; sometimes a tuple assignment binding a second
 * variable too) is appended to the statements, after any it introduces itself. */
static bool introduce(Gen *g, Ty t, const char *text) {
    Buf *saved = g->o, e = {0}, e2 = {0};
    int budget = g->budget;
    char name[16], name2[16] = "";
    g->n_stmts++;
    new_var(g, t, name, sizeof name);
    bool sop = true, sop2 = true;
    Ty t2 = TY_NUM;
    g->o = &e;
    g->budget = STMT_BUDGET;
    if (text) bput(&e, "%s", text);
    else sop = gen(g, t, 0);
    if (!text && pick(g, 8) == 7) { /* a, b = x, y; */
        use(g, PP_TUPLE);
        t2 = any_type(g);
        new_var(g, t2, name2, sizeof name2);
        g->o = &e2;
        g->budget = STMT_BUDGET / 2;
        sop2 = gen(g, t2, 0);
    }
    if (*name2) bput(&g->stmts, "%s, %s = %s, %s;\n", name, name2, e.s ? e.s : "0", e2.s ? e2.s : "0");
    else bput(&g->stmts, "%s = %s;\n", name, e.s ? e.s : "0");
    free(e.s);
    free(e2.s);
    bind(g, t, name, sop);
    if (*name2) bind(g, t2, name2, sop2);
    g->o = saved;
    g->budget = budget;
    bput(g->o, "%s", name);
    return sop;
}

/* A variable of type t: an earlier one, or a new statement while there is room for one; false
 * when neither. */
static bool var(Gen *g, Ty t, bool *sop) {
    bool room = g->n_stmts < g->max_stmts && g->stmts.n < MAX_TEXT;
    if (room && (!g->nvars[t] || pick(g, 2) == 1)) {
        use(g, PP_VAR);
        *sop = introduce(g, t, NULL);
        return true;
    }
    if (!g->nvars[t]) return false;
    const Var *v = &g->vars[t][pick(g, (unsigned)g->nvars[t])];
    bput(g->o, "%s", v->name);
    *sop = v->sop;
    use(g, PP_VAR);
    return true;
}

static void use_def(Gen *g, unsigned d) {
    g->defs |= 1u << d;
    use(g, PP_DEF);
}

/* An atom of any kind, for branches and defaults that mix kinds. */
static void mixed_atom(Gen *g) {
    static const char *const atoms[] = {"1", "True", "1.0", "\"q\"", "0", "False", "0.0", "-1", "0.5", "\"\""};
    bput(g->o, "%s", PICK(g, atoms));
}

/* Something of type t, or (sometimes) an atom of another kind. */
static bool gen_or_mixed(Gen *g, Ty t, int depth, bool *mixed) {
    if (pick(g, 5) == 4) {
        mixed_atom(g);
        *mixed = true;
        return false;
    }
    return gen(g, t, depth);
}

/* The n of index arithmetic: a shape derived from length, a constant or an earlier number. */
static bool shape(Gen *g) {
    static const char *const shapes[] = {"(length ^ 0.5)", "(length / 3)", "((length / 2) ^ 0.5)", "3", "2",
                                         "(length / 2)", "(length - 1)", "(length / (3 + 4))"};
    bool sop = true;
    unsigned c = pick(g, 11);
    if (c == 10 && var(g, TY_NUM, &sop)) return sop;
    const char *s = shapes[c % 8];
    use(g, PP_SQRT_LEN);
    bool is_sop = strchr(s, 'l') != NULL;
    if (c == 8 || c == 9) { /* n = length ^ 0.5; as its own statement */
        if (g->n_stmts < g->max_stmts) return introduce(g, TY_NUM, s), is_sop;
    }
    bput(g->o, "%s", s);
    return is_sop;
}

/* (indices % n) * n + (indices - indices % n) / n, or its rectangular form. */
static void index_template(Gen *g) {
    use(g, PP_INDEX_TEMPLATE);
    Buf *o = g->o, tmp = {0};
    g->o = &tmp;
    shape(g);
    g->o = o;
    const char *n = tmp.s ? tmp.s : "2";
    switch (pick(g, 4)) {
    case 0: bput(o, "((indices %% %s) * %s + (indices - indices %% %s) / %s)", n, n, n, n); break;
    case 1: bput(o, "((indices %% 3) * %s + (indices - indices %% 3) / 3)", n); break;
    case 2: bput(o, "((indices %% %s) * %s + %s ^ 2)", n, n, n); break;
    default: bput(o, "((indices %% %s) + %s)", n, n); break;
    }
    free(tmp.s);
}

static void aggregate_default(Gen *g, Ty t) {
    static const char *const num[] = {"0", "1", "-1", "0.5", "True", "\"z\"", "1.0", "False", "(2 ^ 53)"};
    static const char *const boo[] = {"False", "True", "0", "\"n\"", "1"};
    static const char *const str[] = {"\"-\"", "\"a\"", "0", "True", "\"\""};
    if (pick(g, 3) != 1) return;
    use(g, PP_AGG_DEFAULT);
    bput(g->o, ", %s", t == TY_NUM ? PICK(g, num) : t == TY_BOOL ? PICK(g, boo) : PICK(g, str));
}

/* select(indices, k, <) and select(c, indices, ==): the TMA programs' dot-product selector. */
static void dot_selector(Gen *g, const char *k) {
    use(g, PP_SEL_AND);
    bput(g->o, "(select(indices, %s, <) and select(%u, indices, ==))", k, pick(g, 6));
}

static void dot_product(Gen *g, int depth) {
    use(g, PP_DOT);
    static const char *const ks[] = {"(length / 3)", "(length ^ 0.5)", "2", "((length / 2) ^ 0.5)", "(length / 2)",
                                     "1"};
    const char *k = PICK(g, ks);
    unsigned terms = 1 + pick(g, 3);
    bput(g->o, "(%s * (", k);
    for (unsigned i = 0; i < terms; i++) {
        if (i) bput(g->o, " + ");
        bput(g->o, "aggregate(");
        dot_selector(g, k);
        bput(g->o, ", ");
        if (pick(g, 2)) {
            bput(g->o, "(");
            gen_num(g, depth + 1);
            bput(g->o, " * ");
            gen_num(g, depth + 1);
            bput(g->o, ")");
        } else {
            gen_num(g, depth + 1);
        }
        bput(g->o, ")");
    }
    bput(g->o, "))");
}

/* A position to read: computed index arithmetic. */
static void position(Gen *g, int depth) {
    static const char *const qs[] = {"(indices %% %s)", "((indices %% %s) * 4 + 3 * %s)", "((indices %% %s) + %s)",
                                     "(length - indices - 1)", "(indices + 1)", "(indices - 1)"};
    unsigned c = pick(g, 8);
    if (c == 6) { index_template(g); return; }
    if (c == 7) { gen_num(g, depth + 1); return; }
    static const char *const ks[] = {"(length / 7)", "2", "(length / 2)", "(length ^ 0.5)"};
    const char *k = PICK(g, ks);
    use(g, PP_SEL_COMPUTED);
    switch (c) {
    case 0: bput(g->o, "(indices %% %s)", k); break;
    case 1: bput(g->o, "((indices %% %s) * 4 + 3 * %s)", k, k); break;
    case 2: bput(g->o, "((indices %% %s) + %s)", k, k); break;
    default: bput(g->o, "%s", qs[c]); break;
    }
}

static void prefix(Gen *g) { bput(g->o, "select(indices, indices, <=)"); }

static bool gen_num(Gen *g, int depth) {
    /* leaves: indices, length, small int, variable, tokens as a number, big constant */
    static const unsigned char w[] = {4, 3, 2, 9, 3, 1, /* inner: */ 6, 1, 1, 4, 2, 2, 2, 2, 1, 1, 1, 1, 1, 2, 1, 1,
                                      1, 2, 1, 1, 1};
    enum { LEAVES = 6 };
    unsigned c = production(g, w, sizeof w, LEAVES, depth);
    if (c >= LEAVES) g->budget--;
    Buf *o = g->o;
    bool sop = true, a, b;
    switch (c) {
    case 0: bput(o, "indices"); return true;
    case 1: bput(o, "length"); return true;
    case 2: {
        static const char *const ints[] = {"0", "1", "2", "3", "-1", "4"};
        bput(o, "%s", PICK(g, ints));
        return false;
    }
    case 3:
        if (var(g, TY_NUM, &sop)) return sop;
        bput(o, "indices");
        return true;
    case 4:
        if (g->tokens_int) bput(o, "%s", g->tok);
        else {
            use(g, PP_INDICATOR);
            use(g, PP_STR_EQ);
            bput(o, "indicator(%s == ", g->tok);
            tok_atom(g);
            bput(o, ")");
        }
        return true;
    case 5: {
        static const char *const big[] = {"(2 ^ 53)", "9007199254740993", "(1000000000 + 0.25)", "0.5", "(2 ^ 62)", "10000000000000000.0",
                                          "-0.0", "0.1", "(10 ^ 18)", "1.5", "(2 ^ 63)", "(2 ^ 53 + 1)", "(10.0 ^ 300)",
                                          "True", "100", "(0 - 2 ^ 53)", "(1 / 3)", "4503599627370496.5"};
        bput(o, "%s", PICK(g, big));
        use(g, PP_BIG_CONST);
        return false;
    }
    case 6: { /* arithmetic */
        static const unsigned char ow[] = {3, 3, 3, 2, 2, 1};
        static const char *const ops[] = {"+", "-", "*", "/", "%", "^"};
        unsigned op = wpick(g, ow, 6);
        use(g, PP_ARITH);
        if (op == 3 || op == 4) use(g, PP_DIV);
        bput(o, "(");
        a = gen_num(g, depth + 1);
        bput(o, " %s ", ops[op]);
        if (op == 5) {
            use(g, PP_POW);
            static const char *const ex[] = {"", "2", "0.5", "3", "-1", "0", "(1 / 3)", "2"};
            const char *e = PICK(g, ex);
            if (*e) { bput(o, "%s)", e); return a; }
        }
        b = gen_num(g, depth + 1);
        bput(o, ")");
        return a || b;
    }
    case 7:
        use(g, PP_ROUND);
        bput(o, "round(");
        a = gen_num(g, depth + 1);
        bput(o, ")");
        return a;
    case 8:
        use(g, PP_NEG);
        bput(o, pick(g, 4) == 3 ? "(+" : "(-");
        a = gen_num(g, depth + 1);
        bput(o, ")");
        return a;
    case 9:
        use(g, PP_AGG_NUM);
        bput(o, "aggregate(");
        gen_sel(g, depth + 1);
        bput(o, ", ");
        gen_num(g, depth + 1);
        aggregate_default(g, TY_NUM);
        bput(o, ")");
        return true;
    case 10:
        use(g, PP_WIDTH);
        bput(o, "selector_width(");
        gen_sel(g, depth + 1);
        bput(o, ")");
        return true;
    case 11:
        use(g, PP_INDICATOR);
        bput(o, "indicator(");
        a = gen_bool(g, depth + 1);
        bput(o, ")");
        return a;
    case 12: { /* conditional, branches possibly of other kinds */
        bool mixed = false;
        bput(o, "(");
        a = gen_or_mixed(g, TY_NUM, depth + 1, &mixed);
        bput(o, " if ");
        bool cnd = gen_bool(g, depth + 1);
        bput(o, " else ");
        b = gen_or_mixed(g, TY_NUM, depth + 1, &mixed);
        bput(o, ")");
        use(g, mixed ? PP_COND_MIXED : PP_COND);
        return a || b || cnd;
    }
    case 13: index_template(g); return true;
    case 14: dot_product(g, depth); return true;
    case 15: /* product of two aggregates (a matrix product's entry) */
        use(g, PP_AGG_PRODUCT);
        use(g, PP_AGG_NUM);
        bput(o, "(aggregate(select(indices, ");
        position(g, depth);
        bput(o, ", ==), ");
        gen_num(g, depth + 1);
        bput(o, ") * aggregate(select(indices, ");
        position(g, depth);
        bput(o, ", ==), ");
        gen_num(g, depth + 1);
        bput(o, "))");
        return true;
    case 16: /* the BOS idiom for a width */
        use(g, PP_BOS_WIDTH);
        use(g, PP_SEL_BOS);
        switch (pick(g, 3)) {
        case 0:
            bput(o, "(round(1 / aggregate(");
            gen_sel(g, depth + 1);
            bput(o, " or select(indices, 0, ==), indicator(indices == 0))) - 1)");
            break;
        case 1:
            bput(o, "(1 / aggregate(");
            gen_sel(g, depth + 1);
            bput(o, " or select(indices, 0, ==), indicator(indices == 0)))");
            break;
        default:
            use_def(g, DEF_BOS_WIDTH);
            bput(o, "with_bos_width(");
            gen_sel(g, depth + 1);
            bput(o, ")");
            break;
        }
        return true;
    case 17: { /* dict lookup that can miss */
        static const char *const dicts[] = {"{0: 1, 1: 5, 2: 0}", "{0: 1, 1: 2, 2: 3, 3: 0, 4: 1, 5: 2, 6: 3, 7: 0}",
                                            "{1: 0.5, 2: -1, 3: True}", "{0: 2 ^ 53, 1: 0}", "{-1: 1, 0: 0, 1: -1}"};
        static const char *const sdicts[] = {"{\"a\": 1, \"b\": 2}", "{\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3}",
                                             "{\"(\": 1, \")\": -1}", "{\"a\": 1.5, \"bc\": 0}"};
        use(g, PP_DICT);
        bool on_tokens = !g->tokens_int && pick(g, 2);
        bput(o, "%s[", on_tokens ? PICK(g, sdicts) : PICK(g, dicts));
        a = on_tokens ? (bput(o, "%s", g->tok), true) : gen_num(g, depth + 1);
        bput(o, "]");
        return a;
    }
    case 18: {
        static const char *const lists[] = {"[3, 1, 2]", "[0, 1]", "[1, 2, 3, 4, 5, 6, 7, 8]", "[0.5, 2, True]"};
        use(g, PP_LIST_INDEX);
        bput(o, "%s[", PICK(g, lists));
        a = gen_num(g, depth + 1);
        bput(o, "]");
        return a;
    }
    case 19: return shape(g);
    case 20:
        use(g, PP_PREFIX_MEAN);
        use(g, PP_AGG_NUM);
        if (pick(g, 2)) {
            bput(o, "round((indices + 1) * aggregate(");
            prefix(g);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, "))");
        } else {
            bput(o, "aggregate(");
            prefix(g);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
        }
        return true;
    case 21: /* sort by a width */
        use(g, PP_SORT);
        switch (pick(g, 3)) {
        case 0:
            bput(o, "aggregate(select(selector_width(");
            gen_sel(g, depth + 1);
            bput(o, "), indices, ==), ");
            gen_num(g, depth + 1);
            bput(o, ")");
            break;
        case 1:
            use_def(g, DEF_STABLE_SORT);
            bput(o, "stable_sort(");
            gen_num(g, depth + 1);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
            break;
        default:
            use(g, PP_PRELUDE);
            bput(o, "sort(");
            gen_num(g, depth + 1);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
            break;
        }
        return true;
    case 22: /* prelude */
        use(g, PP_PRELUDE);
        switch (pick(g, 6)) {
        case 0:
            bput(o, "count(%s, ", g->tok);
            tok_atom(g);
            bput(o, ")");
            return true;
        case 1:
        case 2:
            bput(o, "%s(", pick(g, 2) ? "min" : "max");
            a = gen_num(g, depth + 1);
            bput(o, ", ");
            b = gen_num(g, depth + 1);
            bput(o, ")");
            return a || b;
        case 3:
            bput(o, "shift(");
            gen_num(g, depth + 1);
            bput(o, ", %u, ", 1 + pick(g, 2));
            mixed_atom(g);
            bput(o, ")");
            return true;
        case 4:
            bput(o, "load_from_location(");
            gen_num(g, depth + 1);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
            return true;
        default:
            bput(o, "average(");
            gen_num(g, depth + 1);
            bput(o, ")");
            return true;
        }
    case 23: /* Python and/or on numbers */
        use(g, PP_LOGIC);
        bput(o, "(");
        a = gen_num(g, depth + 1);
        bput(o, pick(g, 2) ? " or " : " and ");
        b = gen_num(g, depth + 1);
        bput(o, ")");
        return a || b;
    case 24:
        if (pick(g, 2)) {
            use_def(g, DEF_FRAC_PREVS);
            bput(o, "frac_prevs(%s, ", g->tok);
            tok_atom(g);
            bput(o, ")");
        } else {
            use_def(g, DEF_TRANSPOSE);
            bput(o, "transpose(");
            gen_num(g, depth + 1);
            bput(o, ")");
        }
        return true;
    case 25:
        use(g, PP_REVERSE);
        bput(o, "aggregate(select(indices, length - indices - 1, ==), ");
        gen_num(g, depth + 1);
        bput(o, ")");
        return true;
    default: /* 26: a selector's width through the mean of a flag */
        use(g, PP_AGG_NUM);
        bput(o, "aggregate(");
        gen_sel(g, depth + 1);
        bput(o, ", indicator(");
        gen_bool(g, depth + 1);
        bput(o, "))");
        return true;
    }
}

static bool gen_bool(Gen *g, int depth) {
    /* leaves: tokens == atom, variable, a comparison of indices */
    static const unsigned char w[] = {3, 7, 2, /* inner: */ 5, 2, 3, 2, 2, 2, 2, 2, 2, 2, 1};
    enum { LEAVES = 3 };
    unsigned c = production(g, w, sizeof w, LEAVES, depth);
    if (c >= LEAVES) g->budget--;
    Buf *o = g->o;
    bool sop = true, a, b;
    switch (c) {
    case 0:
        use(g, PP_STR_EQ);
        bput(o, "(%s == ", g->tok);
        tok_atom(g);
        bput(o, ")");
        return true;
    case 1:
        if (var(g, TY_BOOL, &sop)) return sop;
        /* fall through */
    case 2: {
        static const char *const ics[] = {"(indices == 0)", "(indices < 2)", "(indices == length - 1)",
                                          "(indices > length / 2)", "(indices % 2 == 0)"};
        bput(o, "%s", PICK(g, ics));
        return true;
    }
    case 3:
        use(g, PP_CMP);
        bput(o, "(");
        a = gen_num(g, depth + 1);
        bput(o, " %s ", cmp_op(g));
        b = gen_num(g, depth + 1);
        bput(o, ")");
        return a || b;
    case 4: {
        static const char *const ops[] = {"==", "!=", "<", "==", ">="};
        use(g, PP_STR_EQ);
        bput(o, "(");
        a = gen_str(g, depth + 1);
        bput(o, " %s ", PICK(g, ops));
        b = gen_str(g, depth + 1);
        bput(o, ")");
        return a || b;
    }
    case 5:
        use(g, PP_LOGIC);
        bput(o, "(");
        a = gen_bool(g, depth + 1);
        bput(o, pick(g, 2) ? " or " : " and ");
        b = gen_bool(g, depth + 1);
        bput(o, ")");
        return a || b;
    case 6:
        use(g, PP_LOGIC);
        bput(o, "(not ");
        a = gen_bool(g, depth + 1);
        bput(o, ")");
        return a;
    case 7:
        use(g, PP_AGG_BOOL);
        bput(o, "aggregate(");
        gen_sel(g, depth + 1);
        bput(o, ", ");
        gen_bool(g, depth + 1);
        aggregate_default(g, TY_BOOL);
        bput(o, ")");
        return true;
    case 8:
        use(g, PP_IN);
        if (pick(g, 2)) {
            bput(o, "(%s in [", g->tok);
            tok_atom(g);
            bput(o, ", ");
            tok_atom(g);
            bput(o, "])");
            return true;
        }
        bput(o, "(");
        a = gen_num(g, depth + 1);
        bput(o, " in [0, 2, 0.5])");
        return a;
    case 9: {
        bool mixed = false;
        bput(o, "(");
        a = gen_or_mixed(g, TY_BOOL, depth + 1, &mixed);
        bput(o, " if ");
        bool cnd = gen_bool(g, depth + 1);
        bput(o, " else ");
        b = gen_or_mixed(g, TY_BOOL, depth + 1, &mixed);
        bput(o, ")");
        use(g, mixed ? PP_COND_MIXED : PP_COND);
        return a || b || cnd;
    }
    case 10:
        use(g, PP_PREFIX_MEAN);
        bput(o, "(aggregate(");
        prefix(g);
        bput(o, ", indicator(");
        gen_bool(g, depth + 1);
        bput(o, ")) > 0)");
        return true;
    case 11:
        use(g, PP_PRELUDE);
        switch (pick(g, 4)) {
        case 0:
            bput(o, "has_focus(");
            gen_sel(g, depth + 1);
            bput(o, ")");
            break;
        case 1:
            bput(o, "contains(%s, ", g->tok);
            tok_atom(g);
            bput(o, ")");
            break;
        default:
            bput(o, "%s(%s, ", pick(g, 2) ? "mark_last_instance" : "mark_first_instance", g->tok);
            tok_atom(g);
            bput(o, ")");
            break;
        }
        return true;
    case 12: { /* thresholds of means chosen by token tests (rover's muxes and ors: switches) */
        static const char *const th[] = {"0", "0.25", "1 / 3", "0.5", "2 / 7"};
        static const char *const cmp[] = {">", ">=", "<", "=="};
        use(g, PP_SWITCH);
        bool mux = pick(g, 2);
        for (int side = 0; side < 2; side++) {
            const char *op = PICK(g, cmp), *t = PICK(g, th);
            bput(o, side ? (mux ? " else (aggregate(" : " or (aggregate(") : "((aggregate(");
            if (side == 0) prefix(g);
            else if (mux) bput(o, "select(%s, %s, ==)", g->tok, g->tok);
            else gen_sel(g, depth + 1);
            bput(o, ", indicator(");
            gen_bool(g, depth + 1);
            bput(o, ")) %s %s", op, t);
            if (mux && side == 0) {
                bput(o, ") if (%s == ", g->tok);
                tok_atom(g);
                bput(o, ")");
            } else if (!mux) {
                bput(o, " and %s == ", g->tok);
                tok_atom(g);
                bput(o, ")");
            }
        }
        bput(o, mux ? "))" : ")");
        return true;
    }
    default:
        use(g, PP_DICT);
        bput(o, "{");
        tok_atom(g);
        bput(o, ": True, ");
        tok_atom(g);
        bput(o, ": False}[%s]", g->tok);
        return true;
    }
}

/* tokens (as strings) or a short string constant. */
static bool str_atom(Gen *g) {
    static const char *const strs[] = {"\"a\"", "\"-\"", "\"b\""};
    if (!g->tokens_int && pick(g, 2)) {
        bput(g->o, "%s", g->tok);
        return true;
    }
    bput(g->o, "%s", PICK(g, strs));
    return false;
}

static bool gen_str(Gen *g, int depth) {
    /* leaves: tokens (or a string of them), variable, string constant */
    static const unsigned char w[] = {4, 7, 2, /* inner: */ 4, 2, 2, 1, 1, 1, 2};
    enum { LEAVES = 3 };
    unsigned c = production(g, w, sizeof w, LEAVES, depth);
    if (c >= LEAVES) g->budget--;
    Buf *o = g->o;
    bool sop = true, a, b;
    switch (c) {
    case 0:
        if (g->tokens_int) bput(o, "(\"p\" if %s > 0 else \"n\")", g->tok);
        else bput(o, "%s", g->tok);
        return true;
    case 1:
        if (var(g, TY_STR, &sop)) return sop;
        bput(o, "%s", g->tokens_int ? "\"a\"" : g->tok);
        return !g->tokens_int;
    case 2: {
        static const char *const strs[] = {"\"a\"", "\"q\"", "\"\"", "\"ab\"", "\"-\"", "\"b\""};
        bput(o, "%s", PICK(g, strs));
        return false;
    }
    case 3:
        use(g, PP_AGG_STR);
        bput(o, "aggregate(");
        gen_sel(g, depth + 1);
        bput(o, ", ");
        gen_str(g, depth + 1);
        aggregate_default(g, TY_STR);
        bput(o, ")");
        return true;
    case 4: {
        bool mixed = false;
        bput(o, "(");
        a = gen_or_mixed(g, TY_STR, depth + 1, &mixed);
        bput(o, " if ");
        bool cnd = gen_bool(g, depth + 1);
        bput(o, " else ");
        b = gen_or_mixed(g, TY_STR, depth + 1, &mixed);
        bput(o, ")");
        use(g, mixed ? PP_COND_MIXED : PP_COND);
        return a || b || cnd;
    }
    case 5:
        use(g, PP_DICT);
        if (!g->tokens_int && pick(g, 2)) {
            bput(o, "{\"a\": \"b\", \"b\": \"a\", \"(\": \")\"}[");
            a = gen_str(g, depth + 1);
        } else {
            bput(o, "{0: \"x\", 1: \"y\", 2: \"x\"}[");
            a = gen_num(g, depth + 1);
        }
        bput(o, "]");
        return a;
    case 6: /* one side a leaf without variables, so strings grow by a little per statement, never
             * doubling (w2 = w1 + w1 ten times makes strings the compiler spends seconds on) */
        use(g, PP_CONCAT);
        bput(o, "(");
        if (pick(g, 2)) {
            a = gen_str(g, MAX_DEPTH);
            bput(o, " + ");
            b = str_atom(g);
        } else {
            a = str_atom(g);
            bput(o, " + ");
            b = gen_str(g, MAX_DEPTH);
        }
        bput(o, ")");
        return a || b;
    case 7:
        use(g, PP_LIST_INDEX);
        bput(o, "[\"x\", \"y\", \"z\"][");
        a = gen_num(g, depth + 1);
        bput(o, "]");
        return a;
    case 8:
        use(g, PP_REVERSE);
        bput(o, "aggregate(select(indices, length - indices - 1, ==), ");
        gen_str(g, depth + 1);
        bput(o, ")");
        return true;
    default:
        use(g, PP_PRELUDE);
        switch (pick(g, 4)) {
        case 0:
            bput(o, "shift(");
            gen_str(g, depth + 1);
            bput(o, ", 1, \"_\")");
            break;
        case 1:
            bput(o, "load_from_location(");
            gen_str(g, depth + 1);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
            break;
        case 2:
            use(g, PP_SORT);
            bput(o, "sort(");
            gen_str(g, depth + 1);
            bput(o, ", ");
            gen_num(g, depth + 1);
            bput(o, ")");
            break;
        default:
            use_def(g, DEF_TRANSPOSE);
            bput(o, "transpose(");
            gen_str(g, depth + 1);
            bput(o, ")");
            break;
        }
        return true;
    }
}

static void gen_sel(Gen *g, int depth) {
    /* leaves: select(indices, indices, cmp), variable, select(tokens, tokens, cmp) */
    static const unsigned char w[] = {3, 8, 2, /* inner: */ 3, 2, 2, 3, 3, 1, 2, 3, 2, 1, 1, 1};
    enum { LEAVES = 3 };
    unsigned c = production(g, w, sizeof w, LEAVES, depth);
    if (c >= LEAVES) g->budget--;
    Buf *o = g->o;
    bool sop;
    switch (c) {
    case 0: bput(o, "select(indices, indices, %s)", cmp_op(g)); return;
    case 1:
        if (var(g, TY_SEL, &sop)) return;
        /* fall through */
    case 2: bput(o, "select(%s, %s, %s)", g->tok, g->tok, cmp_op(g)); return;
    case 3:
        bput(o, "select(");
        gen_num(g, depth + 1);
        bput(o, ", ");
        gen_num(g, depth + 1);
        bput(o, ", %s)", cmp_op(g));
        return;
    case 4:
        bput(o, "select(");
        gen_str(g, depth + 1);
        bput(o, ", ");
        gen_str(g, depth + 1);
        bput(o, ", %s)", cmp_op(g));
        return;
    case 5: {
        use(g, PP_SEL_BOOL);
        static const char *const q[] = {"True", "False", ""};
        const char *s = PICK(g, q);
        bput(o, "select(");
        gen_bool(g, depth + 1);
        bput(o, ", ");
        if (*s) bput(o, "%s", s);
        else gen_bool(g, depth + 1);
        bput(o, ", ==)");
        return;
    }
    case 6:
    case 7:
        use(g, c == 6 ? PP_SEL_AND : PP_SEL_OR);
        bput(o, "(");
        gen_sel(g, depth + 1);
        bput(o, c == 6 ? " and " : " or ");
        gen_sel(g, depth + 1);
        bput(o, ")");
        return;
    case 8:
        use(g, PP_SEL_NOT);
        bput(o, "(not ");
        gen_sel(g, depth + 1);
        bput(o, ")");
        return;
    case 9:
        use(g, PP_SEL_BOS);
        use(g, PP_SEL_OR);
        bput(o, "(");
        gen_sel(g, depth + 1);
        bput(o, " or select(indices, 0, ==))");
        return;
    case 10:
        use(g, PP_SEL_COMPUTED);
        if (pick(g, 2)) {
            bput(o, "select(indices, ");
            position(g, depth);
            bput(o, ", %s)", cmp_op(g));
        } else {
            bput(o, "select(");
            position(g, depth);
            bput(o, ", indices, %s)", cmp_op(g));
        }
        return;
    case 11: {
        static const char *const ks[] = {"(length / 3)", "(length ^ 0.5)", "2", "(length / 2)"};
        dot_selector(g, PICK(g, ks));
        return;
    }
    case 12: {
        use(g, PP_SEL_STABLE);
        Buf *outer = g->o, k = {0};
        g->o = &k;
        if (pick(g, 2)) gen_num(g, depth + 1);
        else bput(&k, "%s", g->tok);
        g->o = outer;
        const char *ks = k.s ? k.s : "indices";
        bput(o, "(select(%s, %s, <) or (select(%s, %s, ==) and select(indices, indices, <)))", ks, ks, ks, ks);
        free(k.s);
        return;
    }
    case 13:
        use(g, PP_PRELUDE);
        switch (pick(g, 3)) {
        case 0: bput(o, "select_next_identical(%s)", g->tok); return;
        default:
            bput(o, "%s(%s, ", pick(g, 2) ? "select_from_last" : "select_from_first", g->tok);
            tok_atom(g);
            bput(o, ")");
            return;
        }
    default:
        use(g, PP_SEL_NOT);
        bput(o, "(not select(indices, indices, %s) and select(%s, %s, %s))", cmp_op(g), g->tok, g->tok,
             cmp_op(g));
        return;
    }
}

static bool gen(Gen *g, Ty t, int depth) {
    switch (t) {
    case TY_NUM: return gen_num(g, depth);
    case TY_BOOL: return gen_bool(g, depth);
    case TY_STR: return gen_str(g, depth);
    default: gen_sel(g, depth); return false;
    }
}

static const char *const str_vocabs[] = {"ab", "abc", "a", "abcd", "()", "a,bc", "(){}", "xy,y"};
static const char *const int_vocabs[] = {"0..3", "-2..2", "0..1", "1..4", "0..2", "-1,5,7", "0..4", "-3..1"};
enum { N_STR_VOCABS = 8, N_INT_VOCABS = 8 };

static void set_atoms(Gen *g, const char *spec) {
    g->n_atoms = 0;
    if (g->tokens_int) {
        const char *dots = strstr(spec, "..");
        if (dots) {
            long lo = strtol(spec, NULL, 10), hi = strtol(dots + 2, NULL, 10);
            for (long v = lo; v <= hi && g->n_atoms < 8; v++) snprintf(g->atoms[g->n_atoms++], 8, "%ld", v);
        } else {
            for (const char *s = spec; *s && g->n_atoms < 8;) {
                size_t k = strcspn(s, ",");
                snprintf(g->atoms[g->n_atoms++], 8, "%.*s", (int)k, s);
                s += k + (s[k] == ',');
            }
        }
        return;
    }
    if (strchr(spec, ',')) {
        for (const char *s = spec; *s && g->n_atoms < 8;) {
            size_t k = strcspn(s, ",");
            snprintf(g->atoms[g->n_atoms++], 8, "\"%.*s\"", (int)k, s);
            s += k + (s[k] == ',');
        }
    } else {
        for (const char *s = spec; *s && g->n_atoms < 8; s++) snprintf(g->atoms[g->n_atoms++], 8, "\"%c\"", *s);
    }
}

bool progen_generate(const uint8_t *data, size_t size, ProgenProgram *p) {
    memset(p, 0, sizeof *p);
    Gen *g = calloc(1, sizeof *g);
    if (!g) return false;
    g->d = data;
    g->n = size;
    unsigned v = pick(g, N_STR_VOCABS + N_INT_VOCABS);
    g->tokens_int = v >= N_STR_VOCABS;
    p->vocab = g->tokens_int ? int_vocabs[v - N_STR_VOCABS] : str_vocabs[v];
    static const size_t lens[] = {3, 2, 4, 5, 6, 8, 1, 7};
    p->max_len = lens[pick(g, 8)];
    size_t statements = 1 + pick(g, MAX_STATEMENTS);
    set_atoms(g, p->vocab);

    Buf body = {0};
    g->o = &body;
    Buf pre = {0};
    if (g->tokens_int) {
        if (pick(g, 3) == 2) g->tok = "tokens_int";
        else {
            g->tok = "tokens";
            bput(&pre, "tokens = tokens_int;\n");
        }
    } else {
        g->tok = pick(g, 4) == 3 ? "tokens_str" : "tokens";
    }
    /* out = EXPR; the statements it introduces come first */
    g->max_stmts = statements;
    g->n_stmts = 1;
    g->budget = STMT_BUDGET;
    static const unsigned char ow[] = {4, 2, 2};
    static const Ty oty[] = {TY_NUM, TY_BOOL, TY_STR};
    bput(&body, "out = ");
    size_t at = body.n;
    if (!gen(g, oty[wpick(g, ow, 3)], 0)) { /* the output must be an s-op: copy the atom to every position */
        char *e = body.s ? strndup(body.s + at, body.n - at) : NULL;
        body.n = at;
        bput(&body, "aggregate(select(indices, indices, ==), %s)", e ? e : "0");
        free(e);
    }
    bput(&body, ";\n");
    statements = g->n_stmts;

    Buf all = {0};
    bput(&all, "%s", pre.s ? pre.s : "");
    for (unsigned d = 0; d < DEF_N; d++)
        if (g->defs & (1u << d)) bput(&all, "%s", def_text[d]);
    bput(&all, "%s%s", g->stmts.s ? g->stmts.s : "", body.s ? body.s : "");
    bool ok = !all.oom && !body.oom && !pre.oom && !g->stmts.oom && all.s;
    free(body.s);
    free(pre.s);
    free(g->stmts.s);
    if (!ok) {
        free(all.s);
        free(g);
        return false;
    }
    p->text = all.s;
    p->length = all.n;
    p->tokens_int = g->tokens_int;
    p->statements = statements;

    p->bytes_used = g->pos;
    p->prods = g->prods;
    free(g);
    return true;
}

void progen_free(ProgenProgram *p) {
    free(p->text);
    p->text = NULL;
}

const char *progen_prod_name(ProgenProd pp) {
    static const char *const names[PP_COUNT] = {
        "index_template", "shape", "arith", "div_mod", "pow", "round", "neg", "agg_num", "agg_bool", "agg_str",
        "agg_default", "width", "indicator", "cond_mixed", "cond", "dot", "agg_product", "bos_width", "dict",
        "list_index", "in", "prefix_mean", "sort", "prelude", "def", "big_const", "cmp", "logic", "str_eq",
        "concat", "sel_and", "sel_or", "sel_not", "sel_bos", "sel_computed", "sel_stable", "sel_bool", "tuple",
        "reverse", "var", "switch",
    };
    return pp < PP_COUNT ? names[pp] : "?";
}

void progen_print_header(FILE *out, const ProgenProgram *p) {
    if (p->real)
        fprintf(out, "# output: out  range: %s  max-len: %zu  mlp: %s\n", p->range, p->max_len, p->gated ? "gated" : "relu");
    else
        fprintf(out, "# output: out  vocab: %s  max-len: %zu  tokens: %s\n", p->vocab, p->max_len,
                p->tokens_int ? "int" : "str");
}
