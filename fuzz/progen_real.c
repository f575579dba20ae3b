/* The real-valued program generator of fuzz_compile (progen.h, progen_generate_real): programs
 * over tokens_float with --range, built from what the simulator paper's files and U are made of.
 *
 * A program is straight-line: statements v0, v1, ... each a production over the tokens and
 * earlier statements (mostly the one just before: they chain into `out`), then `out`, the last
 * statement or a finite map of it (a threshold, a round). The productions: means and copies over the usual selectors, sums, scalings, products,
 * quotients by positive divisors, exponentials c ^ x, roots of non-negative values, ReLU as a
 * conditional, the ReLU maximum a + relu(b - a) with its copy by fresh_if, weighted means
 * (sum e v) / max(sum e, 1) and (sum e v) / (sum e), conditionals between reals, products by
 * the length or the index (gated maps). Every decision reads one byte modulo its alternatives;
 * past the end of the bytes it takes alternative 0, so any input gives a program. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/progen.h"

enum { REAL_MAX_STMTS = 8, REAL_TEXT = 8192 };

typedef struct RGen {
    const uint8_t *d;
    size_t n, pos;
    char text[REAL_TEXT];
    size_t len;
    bool full;
} RGen;

static unsigned pick(RGen *g, unsigned alternatives) {
    return g->pos < g->n ? g->d[g->pos++] % alternatives : 0;
}

static void put(RGen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(RGen *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(g->text + g->len, sizeof g->text - g->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof g->text - g->len) g->full = true;
    else g->len += (size_t)k;
}

static const struct { const char *spec; double lo, hi; } ranges[] = {
    {"-2..2", -2, 2},     {"0..1", 0, 1},       {"-1..3", -1, 3},
    {"0.5..4", 0.5, 4},   {"-50..50", -50, 50}, {"0.001..10", 0.001, 10},
};
static const char *const selectors[] = {
    "select(indices, indices, ==)", "select(indices, indices, <=)", "select(indices, indices, >=)",
    "select(indices, 0, ==)",       "select(indices, length - indices - 1, ==)", "full_s",
    "select(indices, indices - 1, ==)",
};
static const char *const scales[] = {"0.5", "2", "-1.5", "3", "0.001"};
static const char *const bases[] = {"2.718281828459045", "2.0", "0.5"};
static const char *const thresholds[] = {"0", "0.5", "1", "-1", "2.5"};
static const char *const oks[] = {"True", "indices > 0", "indices < length - 1", "indices % 2 == 0"};

/* The name of an earlier value: mostly the statement just before `i` (so that statements chain
 * into `out`), else the tokens or any statement before `i`. */
static void arg(RGen *g, size_t i, char *out, size_t size) {
    unsigned k = pick(g, 3);
    if (i == 0 || k == 1) snprintf(out, size, "x");
    else if (k == 0) snprintf(out, size, "v%zu", i - 1);
    else snprintf(out, size, "v%u", pick(g, (unsigned)i)); /* v0 .. v(i-1) */
}

/* Statement i: one production over earlier values. */
static void statement(RGen *g, size_t i) {
    char a[8], b[8], c[8];
    arg(g, i, a, sizeof a);
    arg(g, i, b, sizeof b);
    arg(g, i, c, sizeof c);
    put(g, "v%zu = ", i);
    switch (pick(g, 16)) {
    case 0: put(g, "aggregate(%s, %s, 0.0)", selectors[pick(g, 7)], a); break;
    case 1: put(g, "%s + %s", a, b); break;
    case 2: put(g, "%s - %s", a, b); break;
    case 3: put(g, "%s * %s", a, scales[pick(g, 5)]); break;
    case 4: put(g, "%s * %s", a, b); break;
    case 5: put(g, "%s / (1.0 + %s * %s)", a, b, b); break;
    case 6: put(g, "%s ^ %s", bases[pick(g, 3)], a); break;
    case 7: put(g, "(%s * %s) ^ 0.5", a, a); break;
    case 8: put(g, "0.0 if %s < 0 else %s", a, a); break;
    case 9: put(g, "%s + relu(fresh_if(%s - %s, %s))", a, b, a, oks[pick(g, 4)]); break;
    case 10: /* a weighted mean of two values with exponential weights */
        put(g, "wmean(%s ^ %s, %s ^ %s, %s, %s)", bases[pick(g, 2)], a, bases[pick(g, 2)], b, c, a);
        break;
    case 11: put(g, "wdiv(%s ^ %s, %s ^ %s, %s, %s)", bases[pick(g, 2)], a, bases[pick(g, 2)], b, c, b); break;
    case 12: put(g, "%s if %s > %s else %s", a, b, thresholds[pick(g, 5)], c); break;
    case 13: put(g, "%s * length", a); break;
    case 14: put(g, "%s + indices", a); break;
    default: put(g, "%s / (2.0 ^ %s)", a, b); break;
    }
    put(g, ";\n");
}

bool progen_generate_real(const uint8_t *data, size_t size, ProgenProgram *p) {
    RGen *g = calloc(1, sizeof *g); /* 8 KB of text: off the stack */
    if (!g) return false;
    g->d = data;
    g->n = size;
    memset(p, 0, sizeof *p);
    p->real = true;
    unsigned r = pick(g, 6);
    p->range = ranges[r].spec;
    p->range_lo = ranges[r].lo;
    p->range_hi = ranges[r].hi;
    p->max_len = 2 + pick(g, 7);
    p->gated = pick(g, 3) == 0;
    size_t n = 1 + pick(g, REAL_MAX_STMTS);
    put(g, "me = indices + 0;\n"
            "def fresh_if(v, ok) { return aggregate(select(indices, me if ok else -1, ==), v, 0.0); }\n"
            "def relu(v) { return 0.0 if v < 0 else v; }\n"
            "def wmean(e0, e1, v0, v1) { num = 0.0 + e0 * v0 + e1 * v1; den = 0.0 + e0 + e1;\n"
            "    return num * (1.0 / (den if den > 1 else 1.0)); }\n"
            "def wdiv(e0, e1, v0, v1) { return (0.0 + e0 * v0 + e1 * v1) / (0.0 + e0 + e1); }\n"
            "x = tokens_float;\n");
    for (size_t i = 0; i < n; i++) statement(g, i);
    switch (pick(g, 4)) {
    case 1: put(g, "out = 1 if v%zu > %s else 0;\n", n - 1, thresholds[pick(g, 5)]); break;
    case 2: put(g, "out = round(v%zu);\n", n - 1); break;
    default: put(g, "out = v%zu;\n", n - 1); break;
    }
    p->text = g->full ? NULL : malloc(g->len + 1);
    if (p->text) {
        memcpy(p->text, g->text, g->len + 1);
        p->length = g->len;
        p->statements = n + 1;
        p->bytes_used = g->pos;
        p->vocab = "";
    }
    free(g);
    return p->text != NULL;
}
