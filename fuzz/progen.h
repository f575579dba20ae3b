/* A generator of RASP programs driven by fuzzer bytes, for fuzz_compile (and progen_print).
 *
 * The bytes are read front to back as a sequence of choices: each decision reads one byte and
 * takes it modulo its number of alternatives (a constant from a table may read two); when the
 * bytes run out every decision takes alternative 0, which is always the smallest one (a leaf),
 * so any byte string, even an empty one, gives a well-formed program. The first bytes choose
 * the compile flags (token type and vocabulary, maximum length), the next one the most
 * statements (1..10), then the expression tree of `out`.
 *
 * Programs are typed while generated: numerical, boolean and string s-ops and selectors, each
 * drawn from productions modelled on what RASP users write (the paper's programs, the TMA
 * matrix programs, the prelude's library): index arithmetic with indices, length and constants,
 * selects on computed indices, means and their maps, products and sums of aggregates, the BOS
 * idiom, widths, conditionals mixing kinds, dict lookups and list indexing that can miss, large
 * constants, divisions that can be by zero, fractional powers of negative numbers.
 *
 * The program is generated from its output down: a variable production either reads an earlier
 * variable (sharing) or introduces a new statement that the expression reads, whose own
 * expression is generated then (so every statement feeds `out`, except the second variable of
 * a tuple assignment `a, b = x, y;`). Statements are printed after those they read; the last
 * binds `out`, always an s-op.
 *
 * Work is capped: at most 10 statements, expression depth 4 and a node budget per program,
 * vocabularies of at most 5 tokens, max-len 1..8. */
#ifndef RASPCC_FUZZ_PROGEN_H
#define RASPCC_FUZZ_PROGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Productions whose use is recorded (for seeds and coverage reports). */
typedef enum ProgenProd {
    PP_INDEX_TEMPLATE, /* (indices % n) * n + (indices - indices % n) / n */
    PP_SQRT_LEN,       /* length ^ 0.5, length / 3, ... */
    PP_ARITH,          /* + - * / % ^ on s-ops */
    PP_DIV,            /* / or % (can be by zero) */
    PP_POW,            /* ^ */
    PP_ROUND,
    PP_NEG,
    PP_AGG_NUM,        /* numeric aggregate */
    PP_AGG_BOOL,
    PP_AGG_STR,
    PP_AGG_DEFAULT,    /* aggregate with an explicit default */
    PP_WIDTH,          /* selector_width */
    PP_INDICATOR,
    PP_COND_MIXED,     /* a if c else b with branches of different kinds */
    PP_COND,
    PP_DOT,            /* k * (aggregate(select(indices,k,<) and select(c,indices,==), x*y) + ...) */
    PP_AGG_PRODUCT,    /* aggregate(..) * aggregate(..) */
    PP_BOS_WIDTH,      /* round(1/aggregate(s or select(indices,0,==), indicator(indices==0))) - 1 */
    PP_DICT,           /* {k: v}[x] */
    PP_LIST_INDEX,     /* [a, b][x] */
    PP_IN,             /* x in [..] */
    PP_PREFIX_MEAN,    /* aggregate(select(indices, indices, <=), x) */
    PP_SORT,           /* aggregate(select(width, indices, ==), x) */
    PP_PRELUDE,        /* a call of a prelude function */
    PP_DEF,            /* a helper def of the program */
    PP_BIG_CONST,      /* 2^53, 1e9 + 0.25, ... */
    PP_CMP,            /* comparison s-op */
    PP_LOGIC,          /* and / or / not on values */
    PP_STR_EQ,         /* x == "a" */
    PP_CONCAT,         /* string + */
    PP_SEL_AND,
    PP_SEL_OR,
    PP_SEL_NOT,
    PP_SEL_BOS,        /* s or select(indices, 0, ==) */
    PP_SEL_COMPUTED,   /* select(indices, q, ==) / select(q, indices, <) on a computed q */
    PP_SEL_STABLE,     /* select(k,k,<) or (select(k,k,==) and select(indices,indices,<)) */
    PP_SEL_BOOL,       /* select(b, True, ==) */
    PP_TUPLE,          /* a, b = x, y; */
    PP_REVERSE,        /* aggregate(select(indices, length - indices - 1, ==), x) */
    PP_VAR,            /* reuse of an earlier variable */
    PP_SWITCH,         /* thresholds of means chosen by token tests (a mux, an or): codegen's switches */
    PP_COUNT
} ProgenProd;

typedef struct ProgenProgram {
    char *text;         /* the program (malloc'ed, NUL-terminated), without header comments */
    size_t length;
    bool tokens_int;    /* tokens_int (else tokens_str) */
    const char *vocab;  /* the --vocab spec (a static string) */
    size_t max_len;     /* --max-len */
    size_t statements;
    size_t bytes_used;  /* bytes consumed by the generator */
    uint64_t prods;     /* bit PP_* set when that production was used */
    /* progen_generate_real: tokens_float over --range range_lo..range_hi, --mlp gated or not */
    bool real, gated;
    const char *range;  /* "LO..HI" (a static string) */
    double range_lo, range_hi;
} ProgenProgram;

/* Generates the program of data[0..size). Returns false only when memory runs out. */
bool progen_generate(const uint8_t *data, size_t size, ProgenProgram *p);
/* The same for a real-valued program (fuzz/progen_real.c; fuzz_compile with FUZZ_COMPILE_REALS):
 * straight-line statements over tokens_float of means, sums, products, quotients, exponentials,
 * roots, ReLU, maxima and weighted means, then `out`. */
bool progen_generate_real(const uint8_t *data, size_t size, ProgenProgram *p);
void progen_free(ProgenProgram *p);
/* The name of a production (for reports). */
const char *progen_prod_name(ProgenProd pp);
/* "# output: out  vocab: V  max-len: N  tokens: str|int\n", or for a real-valued program
 * "# output: out  range: LO..HI  max-len: N  mlp: relu|gated\n" */
void progen_print_header(FILE *out, const ProgenProgram *p);

#endif
