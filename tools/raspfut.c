/* raspfut: fixed universal transformers (docs/fut.md). One fixed backbone, programmed through
 * its input embedding alone.
 *
 * Each command declares the options it takes (COMMANDS below); `raspfut CMD --help` prints them,
 * an option of another command is refused by name, and an option that a value of another option
 * makes meaningless (--seed for a sparse backbone) is refused rather than ignored.
 *
 * Exit status: 0 success, 1 a selftest or tasktest that did not meet its bound, 2 bad usage or
 * a bad file. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fut/fut.h"
#include "fut/io.h"
#include "fut/matrix_text.h"
#include "fut/selftest.h"
#include "fut/tasks.h"

/* ---- options ------------------------------------------------------------------------------ */

typedef enum OptId {
    OPT_KIND, OPT_LAYERS, OPT_HEADS, OPT_WIDTH, OPT_RESIDUAL, OPT_CAUSAL, OPT_SEED, OPT_M, OPT_OUT,
    OPT_BACKBONE, OPT_JSON, OPT_INPUTS_FILE, OPT_TRIALS, OPT_LEN, OPT_TASK_M, OPT_N, OPT_K, OPT_POSITIONS,
    OPT_BETA, OPT_INPUTS_COUNT, N_OPTS
} OptId;

typedef enum ArgType { ARG_FLAG, ARG_SIZE, ARG_SEED, ARG_REAL, ARG_TEXT } ArgType;

typedef struct OptSpec {
    const char *name, *metavar;
    ArgType type;
    size_t min, max; /* ARG_SIZE: the accepted range */
} OptSpec;

/* --inputs means a file for run and a count for tasktest: two entries, one name. */
static const OptSpec OPTS[N_OPTS] = {
    [OPT_KIND] = {"--kind", "K", ARG_TEXT, 0, 0},
    [OPT_LAYERS] = {"--layers", "L", ARG_SIZE, 1, FUT_MAX_LAYERS},
    [OPT_HEADS] = {"--heads", "H", ARG_SIZE, 1, 64},
    [OPT_WIDTH] = {"--width", "d", ARG_SIZE, 1, 4096},
    [OPT_RESIDUAL] = {"--residual", NULL, ARG_FLAG, 0, 0},
    [OPT_CAUSAL] = {"--causal", NULL, ARG_FLAG, 0, 0},
    [OPT_SEED] = {"--seed", "S", ARG_SEED, 0, 0},
    [OPT_M] = {"--m", "M", ARG_SIZE, 1, 25000},
    [OPT_OUT] = {"-o", "FILE", ARG_TEXT, 0, 0},
    [OPT_BACKBONE] = {"-b", "UT.bin", ARG_TEXT, 0, 0},
    [OPT_JSON] = {"--json", NULL, ARG_FLAG, 0, 0},
    [OPT_INPUTS_FILE] = {"--inputs", "FILE", ARG_TEXT, 0, 0},
    [OPT_TRIALS] = {"--trials", "N", ARG_SIZE, 1, 1000000},
    [OPT_LEN] = {"--len", "n", ARG_SIZE, 1, 4096},
    [OPT_TASK_M] = {"--M", "M", ARG_SIZE, 2, 256},
    [OPT_N] = {"--n", "N", ARG_SIZE, 1, 64},
    [OPT_K] = {"--k", "K", ARG_SIZE, 1, 64},
    [OPT_POSITIONS] = {"--positions", "i,j,..", ARG_TEXT, 0, 0},
    [OPT_BETA] = {"--beta", "B", ARG_REAL, 0, 0},
    [OPT_INPUTS_COUNT] = {"--inputs", "N", ARG_SIZE, 1, 10000000},
};

typedef struct OptValue {
    bool given;
    size_t size;
    uint64_t seed;
    double real;
    const char *text;
} OptValue;

typedef struct Opts {
    OptValue v[N_OPTS];
    const char **pos; /* positional arguments, in order */
    size_t npos;
} Opts;

static bool has(const Opts *o, OptId id) { return o->v[id].given; }
static size_t size_or(const Opts *o, OptId id, size_t dflt) { return has(o, id) ? o->v[id].size : dflt; }

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "raspfut: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(raspfut %s%s--help for usage)\n", cmd ? cmd : "", cmd ? " " : "");
    return 2;
}

/* ---- commands ----------------------------------------------------------------------------- */

typedef struct CmdOpt {
    OptId id;
    const char *help;
} CmdOpt;

typedef struct Command {
    const char *name, *synopsis, *summary, *about;
    CmdOpt opts[12];
    int (*run)(const char *cmd, const Opts *o);
} Command;

static int cmd_backbone(const char *cmd, const Opts *o);
static int cmd_program(const char *cmd, const Opts *o);
static int cmd_run(const char *cmd, const Opts *o);
static int cmd_selftest(const char *cmd, const Opts *o);
static int cmd_random_target(const char *cmd, const Opts *o);
static int cmd_task(const char *cmd, const Opts *o);
static int cmd_tasktest(const char *cmd, const Opts *o);

#define SHAPE_OPTS(what)                                                                        \
    {OPT_LAYERS, what " layers (1..32)"}, {OPT_HEADS, what " heads per layer (1..64)"},         \
        {OPT_WIDTH, what " width d (1..4096)"}
#define LIMITS                                                                                  \
    "Limits: a sparse or looped backbone has m <= 20000 (m is fixed by L, H and d); a random\n" \
    "backbone has N <= 20000 and m <= 25000. R_V is m x m per layer and head, stored dense:\n"  \
    "m = 20000 is 3.2 GB each.\n"

static const Command COMMANDS[] = {
    {"backbone",
     "raspfut backbone --kind sparse|looped|random --layers L --heads H --width d\n"
     "                 [--residual] [--causal] [--seed S] [--m M] -o UT.bin",
     "build a fixed backbone and write it",
     "Builds the backbone that simulates every attention-only target of at most L layers (exactly L\n"
     "unless --residual), H heads and width d, and prints its width m beside the path-matching lower\n"
     "bound. " LIMITS,
     {{OPT_KIND, "sparse ({0,1}, the tree of attention paths), looped (weight-tied\n"
                 "{0,1}) or random (Gaussian N(0, 1/m) weights)"},
      SHAPE_OPTS("the target's"),
      {OPT_RESIDUAL, "residual connections (for residual targets, and to run shallower targets)"},
      {OPT_CAUSAL, "mask key j > query i"},
      {OPT_SEED, "random only: the seed of the weights (default 0)"},
      {OPT_M, "random only: the width m, at least the matching system's N\n(default ceil(1.25 N))"},
      {OPT_OUT, "the backbone file to write (required)"}},
     cmd_backbone},
    {"program",
     "raspfut program TARGET -b UT.bin -o E.bin",
     "program a backbone with a target: write the embedding E",
     "Computes the embedding E such that the backbone on X E computes the target T(X): explicit blocks\n"
     "for sparse and looped backbones, the least-squares solution of the matching system for random\n"
     "ones (then it prints N, the rank, the condition number and the residual). TARGET is a\n"
     "raspfut-target file (docs/fut.md; `raspcc --fut-target` or `raspfut task` write them).\n",
     {{OPT_BACKBONE, "the backbone (required)"}, {OPT_OUT, "the embedding file to write (required)"}},
     cmd_program},
    {"run",
     "raspfut run UT.bin E.bin [--json] INPUT...\n"
     "raspfut run UT.bin E.bin [--json] --inputs FILE",
     "run a programmed backbone on input matrices",
     "Prints UT(X, E) for each input X (n x d', d' the target's width): one row per line, a blank line\n"
     "between inputs. An INPUT is a matrix: inline text, rows separated by ';' (or newlines) and\n"
     "numbers by ',' or spaces, e.g. \"1,0,0;0,1,0\"; or a file holding one row per line; or - for\n"
     "standard input. Numbers are decimal (1, -2.5, 3e-4): hex, inf, nan, empty fields and numbers\n"
     "that overflow or underflow to 0 are refused. Every input is read before any is run.\n",
     {{OPT_JSON, "print [{\"input\":0,\"output\":[[..],..]},..] (12 significant digits)"},
      {OPT_INPUTS_FILE, "one INPUT a line in the inline syntax, blank lines skipped\n(- for standard input)"}},
     cmd_run},
    {"selftest",
     "raspfut selftest --kind K --layers L --heads H --width d [--residual] [--causal]\n"
     "                 [--trials N] [--seed S] [--m M] [--len n]",
     "program random targets into a backbone and measure the error",
     "Draws --trials random targets (N(0, 1/d) weights, d_k = d_v = d), programs the backbone with\n"
     "each, runs both on 4 random inputs of n positions, and prints m, lower_bound, for random\n"
     "backbones columns and condition_number, and last `max_abs_error <value>`. Exits 1 above 1e-9\n"
     "(sparse, looped) or 1e-6 (random).\n" LIMITS,
     {{OPT_KIND, "sparse, looped or random"},
      SHAPE_OPTS("the targets'"),
      {OPT_RESIDUAL, "residual targets and backbone"},
      {OPT_CAUSAL, "causal targets and backbone"},
      {OPT_TRIALS, "random targets drawn (1..1000000, default 10)"},
      {OPT_SEED, "the seed of the targets, the inputs and a random backbone (default 0)"},
      {OPT_M, "random only: the backbone's width m (default ceil(1.25 N))"},
      {OPT_LEN, "positions n of each input (1..4096, default 6)"}},
     cmd_selftest},
    {"random-target",
     "raspfut random-target --layers L --heads H --width d [--residual] [--causal]\n"
     "                      [--seed S] -o T.bin",
     "write a random attention-only target",
     "Writes a target with N(0, 1/d) weights W_Q, W_K, W_V, W_O (d_k = d_v = d).\n",
     {SHAPE_OPTS("the target's"),
      {OPT_RESIDUAL, "residual connections"},
      {OPT_CAUSAL, "mask key j > query i"},
      {OPT_SEED, "the seed of the weights (default 0)"},
      {OPT_OUT, "the target file to write (required)"}},
     cmd_random_target},
    {"task",
     "raspfut task match2 --M M [--beta B] -o T.bin\n"
     "raspfut task parity --n N --k K [--positions i,j,..] [--seed S] [--beta B] -o T.bin",
     "write the Match2 or k-PARITY target",
     "Writes the hand-built single-layer target of a task (docs/fut.md \"Match2 and k-PARITY\").\n",
     {{OPT_TASK_M, "match2: the modulus (2..256)"},
      {OPT_N, "parity: the number of bits (1..64)"},
      {OPT_K, "parity: how many of them are counted (1..n)"},
      {OPT_POSITIONS, "parity: the k counted positions, distinct, below n\n(default: drawn from --seed)"},
      {OPT_SEED, "parity without --positions: the seed of the drawn positions (default 0)"},
      {OPT_BETA, "the attention's inverse temperature (default 30 for match2, 40 for parity)"},
      {OPT_OUT, "the target file to write (required)"}},
     cmd_task},
    {"tasktest",
     "raspfut tasktest match2 --M M [--len n] [--beta B] -b UT.bin [--inputs N] [--seed S]\n"
     "raspfut tasktest parity --n N --k K [--positions i,j,..] [--beta B] -b UT.bin\n"
     "                 [--inputs N] [--seed S]",
     "program a task into a backbone and measure its accuracy",
     "Programs the backbone with the task's target, draws random inputs, and compares the readout of\n"
     "UT(X, E) with the combinatorial truth and with the readout of T(X). Exits 1 below 100%.\n",
     {{OPT_TASK_M, "match2: the modulus (2..256)"},
      {OPT_LEN, "match2: inputs have 1..n tokens (1..4096, default 12)"},
      {OPT_N, "parity: the number of bits (1..64)"},
      {OPT_K, "parity: how many of them are counted (1..n)"},
      {OPT_POSITIONS, "parity: the k counted positions (default: drawn from --seed)"},
      {OPT_BETA, "the attention's inverse temperature (default 30 for match2, 40 for parity)"},
      {OPT_BACKBONE, "the backbone (required)"},
      {OPT_INPUTS_COUNT, "random inputs drawn (1..10000000, default 1000)"},
      {OPT_SEED, "the seed of the inputs and, without --positions, of the positions\n(default 0)"}},
     cmd_tasktest},
};
#define N_COMMANDS (sizeof COMMANDS / sizeof *COMMANDS)

static const char *const FOOTER =
    "An option with a value is written --opt VALUE or --opt=VALUE. Exit status: 0 success, 1 a\n"
    "selftest or tasktest that did not meet its bound, 2 bad usage or a bad file.\n";

static size_t n_cmd_opts(const Command *c) {
    size_t n = 0;
    while (n < sizeof c->opts / sizeof *c->opts && c->opts[n].help) n++;
    return n;
}

static void print_usage(FILE *f) {
    fprintf(f, "usage: raspfut COMMAND [OPTIONS]    (raspfut COMMAND --help for its options)\n\n"
               "Fixed universal transformers (docs/fut.md): one fixed backbone computes any attention-only\n"
               "target transformer once its input embedding E is chosen.\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-14s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(f, "\n");
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "%s\n", COMMANDS[i].synopsis);
    fprintf(f, "\n%s", FOOTER);
}

/* The help text: lines after the first of a multi-line text are indented under it. */
static void print_indented(FILE *f, const char *text, int indent) {
    for (const char *p = text; *p; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1]) fprintf(f, "%*s", indent, "");
    }
}

static void print_command_help(FILE *f, const Command *c) {
    fprintf(f, "usage: ");
    print_indented(f, c->synopsis, 7);
    fprintf(f, "\n\n%s\noptions:\n", c->about);
    for (size_t i = 0; i < n_cmd_opts(c); i++) {
        const OptSpec *s = &OPTS[c->opts[i].id];
        char lhs[40];
        snprintf(lhs, sizeof lhs, "%s%s%s", s->name, s->metavar ? " " : "", s->metavar ? s->metavar : "");
        fprintf(f, "  %-18s ", lhs);
        print_indented(f, c->opts[i].help, 21);
        fputc('\n', f);
    }
    fprintf(f, "  %-18s this help\n\n%s", "-h, --help", FOOTER);
}

/* ---- parsing ------------------------------------------------------------------------------ */

/* Digits only: no sign, no blanks, no base prefix. */
static bool parse_u64(const char *s, uint64_t *out) {
    uint64_t x = 0;
    if (!*s) return false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        unsigned dgt = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - dgt) / 10) return false;
        x = x * 10 + dgt;
    }
    *out = x;
    return true;
}

static int parse_value(const char *cmd, OptId id, const char *v, OptValue *out) {
    const OptSpec *s = &OPTS[id];
    uint64_t x;
    char why[160];
    switch (s->type) {
    case ARG_SIZE:
        if (!parse_u64(v, &x) || x < s->min || x > s->max)
            return usage_error(cmd, "bad value for %s: '%s' (a whole number from %zu to %zu)", s->name, v, s->min,
                               s->max);
        out->size = (size_t)x;
        break;
    case ARG_SEED:
        if (!parse_u64(v, &out->seed))
            return usage_error(cmd, "bad value for %s: '%s' (a whole number from 0 to 2^64 - 1)", s->name, v);
        break;
    case ARG_REAL:
        if (!fut_number_from_text(v, &out->real, why, sizeof why))
            return usage_error(cmd, "bad value for %s: %s", s->name, why);
        if (!(out->real > 0)) return usage_error(cmd, "bad value for %s: '%s' (must be > 0)", s->name, v);
        break;
    case ARG_TEXT: out->text = v; break;
    case ARG_FLAG: break;
    }
    out->given = true;
    return 0;
}

/* The entry of command c named `name`, or -1. */
static int find_opt(const Command *c, const char *name) {
    for (size_t i = 0; i < n_cmd_opts(c); i++)
        if (strcmp(OPTS[c->opts[i].id].name, name) == 0) return (int)c->opts[i].id;
    return -1;
}

static bool known_anywhere(const char *name) {
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(OPTS[i].name, name) == 0) return true;
    return false;
}

/* Parses argv (the words after the command). Returns 0, an exit status, or -1 for --help. */
static int parse_opts(const Command *c, int argc, char **argv, Opts *o) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return -1;
        if (strcmp(a, "--") == 0) { /* everything after is an argument */
            while (++i < argc) o->pos[o->npos++] = argv[i];
            break;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0 || (a[1] >= '0' && a[1] <= '9') || a[1] == '.') {
            o->pos[o->npos++] = a; /* an argument (a negative number is an inline INPUT) */
            continue;
        }
        char name[64];
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL, *inline_v = NULL;
        if (eq) {
            if ((size_t)(eq - a) >= sizeof name) return usage_error(c->name, "unknown option %.60s", a);
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            a = name;
            inline_v = eq + 1;
        }
        int id = find_opt(c, a);
        if (id < 0) {
            if (known_anywhere(a)) return usage_error(c->name, "%s is not an option of raspfut %s", a, c->name);
            return usage_error(c->name, "unknown option %s", a);
        }
        const char *v = NULL;
        if (OPTS[id].type == ARG_FLAG) {
            if (inline_v) return usage_error(c->name, "option %s takes no value", a);
        } else if (inline_v) {
            v = inline_v;
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else {
            return usage_error(c->name, "option %s needs a value", a);
        }
        int rc = parse_value(c->name, (OptId)id, v, &o->v[id]);
        if (rc) return rc;
    }
    return 0;
}

/* An option a value of another option makes meaningless is refused, never ignored. */
static int refuse(const char *cmd, const Opts *o, OptId id, const char *why) {
    return has(o, id) ? usage_error(cmd, "%s %s", OPTS[id].name, why) : 0;
}

/* ---- the commands ------------------------------------------------------------------------- */

static int need_shape(const char *cmd, const Opts *o) {
    if (!has(o, OPT_LAYERS) || !has(o, OPT_HEADS) || !has(o, OPT_WIDTH))
        return usage_error(cmd, "--layers, --heads and --width are required");
    return 0;
}

static int need_kind(const char *cmd, const Opts *o, FutKind *kind) {
    if (!has(o, OPT_KIND)) return usage_error(cmd, "--kind is required (sparse, looped or random)");
    if (!fut_kind_parse(o->v[OPT_KIND].text, kind))
        return usage_error(cmd, "bad value for --kind: '%s' (sparse, looped or random)", o->v[OPT_KIND].text);
    return 0;
}

static int need_no_args(const char *cmd, const Opts *o) {
    return o->npos ? usage_error(cmd, "unexpected argument %s", o->pos[0]) : 0;
}

static int fail(const char *what, const char *err) {
    fprintf(stderr, "raspfut: %s%s%s\n", what ? what : "", what ? ": " : "", err);
    return 2;
}

static int write_out(const char *path, uint8_t *buf, size_t len) {
    char err[512];
    bool ok = fut_write_file(path, buf, len, err, sizeof err);
    free(buf);
    return ok ? 0 : fail(NULL, err);
}

static int cmd_backbone(const char *cmd, const Opts *o) {
    FutKind kind;
    int rc = need_no_args(cmd, o);
    if (!rc) rc = need_kind(cmd, o, &kind);
    if (!rc) rc = need_shape(cmd, o);
    if (!rc && !has(o, OPT_OUT)) rc = usage_error(cmd, "-o UT.bin is required");
    if (!rc && kind != FUT_RANDOM) {
        rc = refuse(cmd, o, OPT_SEED, "applies to random backbones only: sparse and looped backbones have no random weights");
        if (!rc)
            rc = refuse(cmd, o, OPT_M, "applies to random backbones only: the width of a sparse or looped backbone is "
                                       "fixed by L, H and d");
    }
    if (rc) return rc;
    size_t L = o->v[OPT_LAYERS].size, H = o->v[OPT_HEADS].size, d = o->v[OPT_WIDTH].size;
    bool residual = has(o, OPT_RESIDUAL), causal = has(o, OPT_CAUSAL);
    size_t N = fut_random_columns(L, H, d, residual), m = size_or(o, OPT_M, 0);
    if (kind == FUT_RANDOM && m && m < N) {
        fprintf(stderr,
                "raspfut: m=%zu is too small for L=%zu H=%zu d=%zu%s: the matching system has N=%zu columns, so m "
                "must be at least %zu\n",
                m, L, H, d, residual ? " (residual)" : "", N, N);
        return 2;
    }
    Arena a;
    arena_init(&a);
    FutBackbone b;
    char err[512];
    uint8_t *buf;
    size_t len;
    bool ok = kind == FUT_SPARSE   ? fut_backbone_sparse(&a, L, H, d, residual, causal, &b, err, sizeof err)
              : kind == FUT_LOOPED ? fut_backbone_looped(&a, L, H, d, residual, causal, &b, err, sizeof err)
                                   : fut_backbone_random(&a, L, H, d, residual, causal, m,
                                                         has(o, OPT_SEED) ? o->v[OPT_SEED].seed : 0, &b, err, sizeof err);
    if (!ok || !fut_backbone_serialize(&b, &buf, &len, err, sizeof err)) {
        arena_free(&a);
        return fail("backbone", err);
    }
    printf("%s backbone: L=%zu H=%zu d=%zu%s%s m=%zu (path-matching lower bound %zu)", fut_kind_name(kind), b.L,
           b.H, b.d, b.residual ? " residual" : "", b.causal ? " causal" : "", b.m,
           fut_lower_bound(b.L, b.H, b.d, b.residual));
    if (kind == FUT_RANDOM) printf(" N=%zu seed=%llu", N, (unsigned long long)b.seed);
    printf("\n");
    arena_free(&a);
    return write_out(o->v[OPT_OUT].text, buf, len);
}

static bool load_backbone(Arena *a, const char *path, FutBackbone *b, char *err, size_t es) {
    uint8_t *buf;
    size_t len;
    if (!fut_read_file(a, path, &buf, &len, err, es)) return false;
    if (!fut_backbone_parse(a, buf, len, b, err, es)) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s: %s", path, err);
        snprintf(err, es, "%s", tmp);
        return false;
    }
    return true;
}

static int cmd_program(const char *cmd, const Opts *o) {
    if (o->npos != 1) return usage_error(cmd, "program takes exactly one TARGET file");
    if (!has(o, OPT_BACKBONE) || !has(o, OPT_OUT)) return usage_error(cmd, "program needs -b UT.bin and -o E.bin");
    Arena a;
    arena_init(&a);
    char err[1024];
    FutBackbone b;
    FutTarget t;
    FutMat E;
    FutSolveInfo info;
    uint8_t *buf;
    size_t len;
    int rc = 0;
    if (!load_backbone(&a, o->v[OPT_BACKBONE].text, &b, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_read_file(&a, o->pos[0], &buf, &len, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_target_parse(&a, buf, len, &t, err, sizeof err)) rc = fail(o->pos[0], err);
    else if (!fut_embed(&a, &b, &t, &E, &info, err, sizeof err)) rc = fail("program", err);
    else if (!fut_embedding_serialize(&b, E, &buf, &len, err, sizeof err)) rc = fail("program", err);
    else {
        printf("embedding %zu x %zu for a %s backbone (L=%zu H=%zu d=%zu)", E.rows, E.cols, fut_kind_name(b.kind),
               b.L, b.H, b.d);
        if (b.kind == FUT_RANDOM)
            printf("; matching system N=%zu rank=%zu cond=%.3e residual=%.2e", info.columns, info.rank, info.cond,
                   info.residual);
        printf("\n");
        rc = write_out(o->v[OPT_OUT].text, buf, len);
    }
    arena_free(&a);
    return rc;
}

/* Reads a whole stream into the arena as a NUL-terminated string. */
static char *read_stream(Arena *a, FILE *f) {
    size_t cap = 4096, n = 0;
    char *s = arena_alloc(a, cap);
    for (size_t got; (got = fread(s + n, 1, cap - 1 - n, f)) > 0;) {
        n += got;
        if (n == cap - 1) {
            s = arena_grow(a, s, cap, cap * 2, 1);
            cap *= 2;
        }
    }
    return ferror(f) ? NULL : s;
}

/* An INPUT argument: "-" (standard input), a file holding the matrix, or inline text. */
static bool input_from_arg(Arena *a, const char *arg, size_t cols, FutMat *X, char *err, size_t es) {
    char why[512];
    if (strcmp(arg, "-") == 0) {
        const char *text = read_stream(a, stdin);
        if (!text) {
            snprintf(err, es, "standard input: cannot read");
            return false;
        }
        if (fut_matrix_from_text(a, text, cols, X, why, sizeof why)) return true;
        snprintf(err, es, "standard input: %s", why);
        return false;
    }
    bool inline_only = strchr(arg, ';') || strchr(arg, ',');
    FILE *f = inline_only ? NULL : fopen(arg, "rb");
    if (f) {
        const char *text = read_stream(a, f);
        fclose(f);
        if (!text) {
            snprintf(err, es, "%s: cannot read", arg);
            return false;
        }
        if (fut_matrix_from_text(a, text, cols, X, why, sizeof why)) return true;
        snprintf(err, es, "%s: %s", arg, why);
        return false;
    }
    int open_errno = errno;
    if (fut_matrix_from_text(a, arg, cols, X, why, sizeof why)) return true;
    if (inline_only) snprintf(err, es, "input \"%.40s\": %s", arg, why);
    else snprintf(err, es, "input \"%.40s\" is neither a file (%s) nor a matrix (%s)", arg, strerror(open_errno), why);
    return false;
}

/* Every input of --inputs FILE: one inline matrix a line, blank lines skipped. */
static bool inputs_from_file(Arena *a, const char *path, size_t cols, FutMat **X, size_t *n, char *err, size_t es) {
    bool from_stdin = strcmp(path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(path, "r");
    if (!f) {
        snprintf(err, es, "%s: %s", path, strerror(errno));
        return false;
    }
    const char *name = from_stdin ? "standard input" : path;
    size_t cap = 16, lineno = 0;
    *X = ARENA_ARRAY(a, FutMat, cap);
    *n = 0;
    char *line = NULL, why[512];
    size_t line_cap = 0;
    bool ok = true;
    while (ok && getline(&line, &line_cap, f) > 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == strlen(line)) continue;
        if (*n == cap) {
            *X = arena_grow(a, *X, cap, cap * 2, sizeof **X);
            cap *= 2;
        }
        ok = fut_matrix_from_text(a, line, cols, &(*X)[(*n)++], why, sizeof why);
        if (!ok) snprintf(err, es, "%s:%zu: %s", name, lineno, why);
    }
    if (ok && ferror(f)) {
        snprintf(err, es, "%s: cannot read", name);
        ok = false;
    }
    if (ok && *n == 0) {
        snprintf(err, es, "%s: no inputs", name);
        ok = false;
    }
    free(line);
    if (!from_stdin) fclose(f);
    return ok;
}

static void print_output(FutMat Y, size_t index, bool json) {
    if (json) printf("%s{\"input\":%zu,\"output\":[", index ? "," : "", index);
    else if (index) printf("\n");
    for (size_t i = 0; i < Y.rows; i++) {
        if (json) printf("%s[", i ? "," : "");
        for (size_t j = 0; j < Y.cols; j++) {
            double v = FUT_AT(Y, i, j);
            if (fabs(v) < 5e-13) v = 0.0; /* print rounding noise as 0 */
            printf(json ? "%s%.12g" : "%s%.10g", j ? (json ? "," : " ") : "", v);
        }
        printf(json ? "]" : "\n");
    }
    if (json) printf("]}");
}

static int cmd_run(const char *cmd, const Opts *o) {
    bool from_file = has(o, OPT_INPUTS_FILE);
    if (o->npos < 2) return usage_error(cmd, "run needs UT.bin, E.bin and the inputs");
    if (from_file && o->npos > 2) return usage_error(cmd, "give --inputs FILE or INPUT..., not both");
    if (!from_file && o->npos == 2) return usage_error(cmd, "no inputs: give INPUT... or --inputs FILE");
    size_t stdin_uses = from_file && strcmp(o->v[OPT_INPUTS_FILE].text, "-") == 0;
    for (size_t k = 2; k < o->npos; k++) stdin_uses += strcmp(o->pos[k], "-") == 0;
    if (stdin_uses > 1) return usage_error(cmd, "standard input (-) can be read only once");
    Arena a;
    arena_init(&a);
    char err[1024];
    FutBackbone b;
    FutEmbedding e;
    uint8_t *buf;
    size_t len, n = 0;
    FutMat *X = NULL;
    int rc = 0;
    if (!load_backbone(&a, o->pos[0], &b, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_read_file(&a, o->pos[1], &buf, &len, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_embedding_parse(&a, buf, len, &e, err, sizeof err)) rc = fail(o->pos[1], err);
    else if (!fut_embedding_matches(&e, &b, err, sizeof err)) rc = fail(o->pos[1], err);
    else if (from_file) {
        if (!inputs_from_file(&a, o->v[OPT_INPUTS_FILE].text, e.E.rows, &X, &n, err, sizeof err)) rc = fail(NULL, err);
    } else {
        X = ARENA_ARRAY(&a, FutMat, o->npos - 2);
        for (size_t k = 2; !rc && k < o->npos; k++)
            if (!input_from_arg(&a, o->pos[k], e.E.rows, &X[n++], err, sizeof err)) rc = fail(NULL, err);
    }
    bool json = has(o, OPT_JSON);
    if (!rc && json) printf("[");
    for (size_t k = 0; !rc && k < n; k++) print_output(fut_backbone_forward(&a, &b, e.E, X[k]), k, json);
    if (!rc && json) printf("]\n");
    arena_free(&a);
    return rc;
}

static int cmd_selftest(const char *cmd, const Opts *o) {
    FutSelftestOptions so = {0};
    int rc = need_no_args(cmd, o);
    if (!rc) rc = need_kind(cmd, o, &so.kind);
    if (!rc) rc = need_shape(cmd, o);
    if (!rc && so.kind != FUT_RANDOM)
        rc = refuse(cmd, o, OPT_M, "applies to random backbones only: the width of a sparse or looped backbone is "
                                   "fixed by L, H and d");
    if (rc) return rc;
    so.L = o->v[OPT_LAYERS].size;
    so.H = o->v[OPT_HEADS].size;
    so.d = o->v[OPT_WIDTH].size;
    so.residual = has(o, OPT_RESIDUAL);
    so.causal = has(o, OPT_CAUSAL);
    so.trials = size_or(o, OPT_TRIALS, 10);
    so.n = size_or(o, OPT_LEN, 6);
    so.m = size_or(o, OPT_M, 0);
    so.seed = has(o, OPT_SEED) ? o->v[OPT_SEED].seed : 0;
    FutSelftestResult r;
    char err[1024];
    if (!fut_selftest(&so, &r, err, sizeof err)) return fail("selftest", err);
    double bound = so.kind == FUT_RANDOM ? 1e-6 : 1e-9;
    printf("selftest %s L=%zu H=%zu d=%zu%s%s trials=%zu seed=%llu\n", fut_kind_name(so.kind), so.L, so.H, so.d,
           so.residual ? " residual" : "", so.causal ? " causal" : "", so.trials, (unsigned long long)so.seed);
    printf("m %zu\nlower_bound %zu\n", r.m, r.lower_bound);
    if (so.kind == FUT_RANDOM) printf("columns %zu\ncondition_number %.3e (min %.3e)\n", r.columns, r.max_cond, r.min_cond);
    printf("max_abs_output %.3e\n", r.max_output);
    printf("max_abs_error %.3e\n", r.max_abs_error);
    return r.max_abs_error <= bound ? 0 : 1;
}

static int cmd_random_target(const char *cmd, const Opts *o) {
    int rc = need_no_args(cmd, o);
    if (!rc) rc = need_shape(cmd, o);
    if (!rc && !has(o, OPT_OUT)) rc = usage_error(cmd, "-o T.bin is required");
    if (rc) return rc;
    Arena a;
    arena_init(&a);
    FutRng rng;
    fut_rng_seed(&rng, has(o, OPT_SEED) ? o->v[OPT_SEED].seed : 0);
    FutTarget t;
    fut_target_random(&a, &rng, o->v[OPT_LAYERS].size, o->v[OPT_HEADS].size, o->v[OPT_WIDTH].size,
                      has(o, OPT_RESIDUAL), has(o, OPT_CAUSAL), &t);
    uint8_t *buf;
    size_t len;
    char err[512];
    rc = fut_target_serialize(&t, &buf, &len, err, sizeof err) ? write_out(o->v[OPT_OUT].text, buf, len)
                                                                : fail("random-target", err);
    arena_free(&a);
    return rc;
}

/* --positions i,j,..: distinct decimal positions (fut_task_validate checks them against n). */
static int parse_positions(const char *cmd, const char *s, FutTask *t, size_t *count) {
    *count = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char word[24];
        uint64_t v;
        if (len == 0 || len >= sizeof word || *count == 64) return usage_error(cmd, "bad value for --positions: '%s'", s);
        memcpy(word, p, len);
        word[len] = '\0';
        if (!parse_u64(word, &v)) return usage_error(cmd, "bad value for --positions: '%s'", s);
        t->positions[(*count)++] = (size_t)v;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* The task of `task` and `tasktest` (tasktest: inputs are drawn, so --len and --seed mean more). */
static int task_from_opts(const char *cmd, const Opts *o, bool drawing_inputs, FutTask *t) {
    *t = (FutTask){.beta = has(o, OPT_BETA) ? o->v[OPT_BETA].real : 0};
    if (o->npos != 1) return usage_error(cmd, "which task: match2 or parity?");
    int rc = 0;
    if (strcmp(o->pos[0], "match2") == 0) {
        t->kind = FUT_TASK_MATCH2;
        if (!has(o, OPT_TASK_M)) return usage_error(cmd, "match2 needs --M");
        t->M = o->v[OPT_TASK_M].size;
        t->max_len = size_or(o, OPT_LEN, 12);
        const char *why = "applies to parity only";
        rc = refuse(cmd, o, OPT_N, why);
        if (!rc) rc = refuse(cmd, o, OPT_K, why);
        if (!rc) rc = refuse(cmd, o, OPT_POSITIONS, why);
        if (!rc && !drawing_inputs) rc = refuse(cmd, o, OPT_SEED, "has nothing to draw: the match2 target has no random part");
    } else if (strcmp(o->pos[0], "parity") == 0) {
        t->kind = FUT_TASK_PARITY;
        rc = refuse(cmd, o, OPT_TASK_M, "applies to match2 only");
        if (!rc) rc = refuse(cmd, o, OPT_LEN, "applies to match2 only (parity inputs have n positions)");
        if (!rc && (!has(o, OPT_N) || !has(o, OPT_K))) rc = usage_error(cmd, "parity needs --n and --k");
        if (rc) return rc;
        t->n = o->v[OPT_N].size;
        t->k = o->v[OPT_K].size;
        if (has(o, OPT_POSITIONS)) {
            size_t count;
            rc = parse_positions(cmd, o->v[OPT_POSITIONS].text, t, &count);
            if (!rc && count != t->k)
                rc = usage_error(cmd, "--positions lists %zu positions, --k is %zu", count, t->k);
            if (!rc && !drawing_inputs)
                rc = refuse(cmd, o, OPT_SEED, "has nothing to draw: --positions gives the positions");
        } else if (t->k <= t->n) { /* k distinct positions drawn from the seed */
            FutRng rng;
            fut_rng_seed(&rng, has(o, OPT_SEED) ? o->v[OPT_SEED].seed : 0);
            size_t perm[64];
            for (size_t i = 0; i < t->n; i++) perm[i] = i;
            for (size_t i = 0; i < t->k; i++) {
                size_t j = i + fut_rng_below(&rng, t->n - i), tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
                t->positions[i] = perm[i];
            }
        }
    } else {
        return usage_error(cmd, "unknown task %s (match2 or parity)", o->pos[0]);
    }
    if (rc) return rc;
    char err[256];
    return fut_task_validate(t, err, sizeof err) ? 0 : fail("task", err);
}

static int cmd_task(const char *cmd, const Opts *o) {
    FutTask t;
    int rc = task_from_opts(cmd, o, false, &t);
    if (rc) return rc;
    if (!has(o, OPT_OUT)) return usage_error(cmd, "-o T.bin is required");
    Arena a;
    arena_init(&a);
    FutTarget target;
    fut_task_target(&a, &t, &target);
    uint8_t *buf;
    size_t len;
    char err[512];
    if (t.kind == FUT_TASK_PARITY) {
        printf("parity of positions");
        for (size_t i = 0; i < t.k; i++) printf(" %zu", t.positions[i]);
        printf(" of %zu bits; width %zu\n", t.n, target.d);
    } else {
        printf("match2 mod %zu; width %zu, residual\n", t.M, target.d);
    }
    rc = fut_target_serialize(&target, &buf, &len, err, sizeof err) ? write_out(o->v[OPT_OUT].text, buf, len)
                                                                     : fail("task", err);
    arena_free(&a);
    return rc;
}

static int cmd_tasktest(const char *cmd, const Opts *o) {
    FutTask t;
    int rc = task_from_opts(cmd, o, true, &t);
    if (rc) return rc;
    if (!has(o, OPT_BACKBONE)) return usage_error(cmd, "tasktest needs -b UT.bin");
    Arena a;
    arena_init(&a);
    char err[1024];
    FutBackbone b;
    FutTaskResult r;
    size_t inputs = size_or(o, OPT_INPUTS_COUNT, 1000);
    uint64_t seed = has(o, OPT_SEED) ? o->v[OPT_SEED].seed : 0;
    if (!load_backbone(&a, o->v[OPT_BACKBONE].text, &b, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_task_check(&b, &t, inputs, seed, &r, err, sizeof err)) rc = fail("tasktest", err);
    else {
        printf("%s on a %s backbone (m=%zu): %zu inputs, %zu answers\n", o->pos[0], fut_kind_name(b.kind), b.m,
               r.inputs, r.answers);
        if (b.kind == FUT_RANDOM) printf("condition_number %.3e\n", r.cond);
        printf("target accuracy %zu/%zu\nbackbone accuracy %zu/%zu (%.2f%%)\nmax_abs_error %.3e\n", r.target_correct,
               r.answers, r.ut_correct, r.answers, 100.0 * (double)r.ut_correct / (double)(r.answers ? r.answers : 1),
               r.max_abs_error);
        rc = (r.ut_correct == r.answers && r.target_correct == r.answers) ? 0 : 1;
    }
    arena_free(&a);
    return rc;
}

/* ---- main --------------------------------------------------------------------------------- */

static const Command *find_command(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        const Command *c = argc > 2 ? find_command(argv[2]) : NULL;
        if (argc > 2 && !c) return usage_error(NULL, "unknown command %s", argv[2]);
        if (c) print_command_help(stdout, c);
        else print_usage(stdout);
        return 0;
    }
    const Command *c = find_command(name);
    if (!c) return usage_error(NULL, "unknown command %s", name);
    Opts o = {.pos = calloc((size_t)argc, sizeof(char *))};
    if (!o.pos) return fail(NULL, "out of memory");
    int rc = parse_opts(c, argc - 2, argv + 2, &o);
    if (rc < 0) {
        print_command_help(stdout, c);
        rc = 0;
    } else if (rc == 0) {
        rc = c->run(c->name, &o);
    }
    free(o.pos);
    return rc;
}
