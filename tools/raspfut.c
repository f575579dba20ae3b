/* raspfut: fixed universal transformers (docs/fut.md). One fixed backbone, programmed through
 * its input embedding alone.
 *
 * Exit status: 0 success, 1 a selftest or tasktest that did not meet its bound, 2 bad usage or
 * a bad file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fut/fut.h"
#include "fut/io.h"
#include "fut/selftest.h"
#include "fut/tasks.h"
#include "train/cli.h"

static const char *const USAGE =
    "usage:\n"
    "  raspfut backbone --kind sparse|looped|random --layers L --heads H --width d\n"
    "                   [--residual] [--causal] [--seed S] [--m M] -o UT.bin\n"
    "  raspfut program TARGET -b UT.bin -o E.bin\n"
    "  raspfut run UT.bin E.bin [--json] INPUT...\n"
    "  raspfut selftest --kind K --layers L --heads H --width d [--residual] [--causal]\n"
    "                   [--trials N] [--seed S] [--m M] [--len n]\n"
    "  raspfut random-target --layers L --heads H --width d [--residual] [--causal] [--seed S] -o T.bin\n"
    "  raspfut task match2 --M M [--beta B] -o T.bin\n"
    "  raspfut task parity --n N --k K [--positions i,j,..] [--seed S] [--beta B] -o T.bin\n"
    "  raspfut tasktest match2|parity TASK-OPTIONS -b UT.bin [--inputs N] [--seed S]\n"
    "  raspfut train --task dyck1|khop [OPTIONS]   (raspfut train --help)\n"
    "\n"
    "TARGET is an attention-only transformer in the raspfut-target format (docs/fut.md).\n"
    "INPUT is a matrix X with one row per position: a file (one row per line) or inline text,\n"
    "rows separated by ';' and numbers by ',' or spaces, e.g. \"1,0,0;0,1,0\".\n"
    "An option with a value is written --opt VALUE or --opt=VALUE.\n"
    "selftest prints `max_abs_error <value>` last and exits 1 above 1e-9 (sparse, looped) or\n"
    "1e-6 (random). tasktest exits 1 below 100% accuracy.\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "raspfut: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(raspfut --help for usage)\n");
    return 2;
}

static bool parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || *s == '-') return false;
    *out = v;
    return true;
}

static bool parse_size(const char *s, size_t *out, size_t max) {
    uint64_t v;
    if (!parse_u64(s, &v) || v > max) return false;
    *out = (size_t)v;
    return true;
}

typedef struct Opts {
    const char *kind, *out, *backbone;
    size_t L, H, d, m, trials, len, M, n, k, inputs;
    bool residual, causal, json, have_seed;
    uint64_t seed;
    double beta;
    const char *positions;
    const char *pos[64]; /* positional arguments */
    size_t npos;
} Opts;

/* Parses options common to every command; returns 0 or an exit status. */
static int parse_opts(int argc, char **argv, Opts *o) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        /* --opt=value is --opt value */
        char name[64];
        const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        const char *inline_v = NULL;
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            a = name;
            inline_v = eq + 1;
        }
        const char *v = inline_v ? inline_v : i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                   \
    do {                                                          \
        if (!v) return usage_error("option %s needs a value", a); \
        if (!inline_v) i++;                                       \
    } while (0)
#define SIZEOPT(flag, field, max)                                                          \
    if (strcmp(a, flag) == 0) {                                                           \
        NEEDV();                                                                          \
        if (!parse_size(v, &o->field, max)) return usage_error("bad value for " flag ": %s", v); \
        continue;                                                                         \
    }
        SIZEOPT("--layers", L, FUT_MAX_LAYERS)
        SIZEOPT("--heads", H, 64)
        SIZEOPT("--width", d, 4096)
        SIZEOPT("--m", m, 25000)
        SIZEOPT("--trials", trials, 1000000)
        SIZEOPT("--len", len, 4096)
        SIZEOPT("--M", M, 256)
        SIZEOPT("--n", n, 64)
        SIZEOPT("--k", k, 64)
        SIZEOPT("--inputs", inputs, 10000000)
        if (strcmp(a, "--kind") == 0) { NEEDV(); o->kind = v; continue; }
        if (strcmp(a, "-o") == 0) { NEEDV(); o->out = v; continue; }
        if (strcmp(a, "-b") == 0) { NEEDV(); o->backbone = v; continue; }
        if (strcmp(a, "--positions") == 0) { NEEDV(); o->positions = v; continue; }
        if (strcmp(a, "--seed") == 0) {
            NEEDV();
            if (!parse_u64(v, &o->seed)) return usage_error("bad value for --seed: %s", v);
            o->have_seed = true;
            continue;
        }
        if (strcmp(a, "--beta") == 0) {
            NEEDV();
            char *end;
            o->beta = strtod(v, &end);
            if (*end || !(o->beta > 0) || !isfinite(o->beta)) return usage_error("bad value for --beta: %s", v);
            continue;
        }
        if (inline_v && (!strcmp(a, "--residual") || !strcmp(a, "--causal") || !strcmp(a, "--json")))
            return usage_error("option %s takes no value", a);
        if (strcmp(a, "--residual") == 0) { o->residual = true; continue; }
        if (strcmp(a, "--causal") == 0) { o->causal = true; continue; }
        if (strcmp(a, "--json") == 0) { o->json = true; continue; }
        if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) return usage_error("unknown option %s", a);
        if (o->npos == sizeof o->pos / sizeof *o->pos) return usage_error("too many arguments (%s)", a);
        o->pos[o->npos++] = a;
#undef SIZEOPT
#undef NEEDV
    }
    return 0;
}

static int need_shape(const Opts *o) {
    if (!o->L || !o->H || !o->d) return usage_error("%s", "--layers, --heads and --width are required (each >= 1)");
    return 0;
}

static bool build_backbone(Arena *a, const Opts *o, FutKind kind, FutBackbone *b, char *err, size_t es) {
    switch (kind) {
    case FUT_SPARSE: return fut_backbone_sparse(a, o->L, o->H, o->d, o->residual, o->causal, b, err, es);
    case FUT_LOOPED: return fut_backbone_looped(a, o->L, o->H, o->d, o->residual, o->causal, b, err, es);
    case FUT_RANDOM: return fut_backbone_random(a, o->L, o->H, o->d, o->residual, o->causal, o->m, o->seed, b, err, es);
    }
    return false;
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

static int cmd_backbone(const Opts *o) {
    int rc = need_shape(o);
    if (rc) return rc;
    FutKind kind;
    if (!o->kind || !fut_kind_parse(o->kind, &kind)) return usage_error("--kind must be sparse, looped or random%s", "");
    if (!o->out) return usage_error("%s", "-o UT.bin is required");
    if (o->m && kind != FUT_RANDOM) return usage_error("%s", "--m applies to random backbones only");
    size_t N = fut_random_columns(o->L, o->H, o->d, o->residual);
    if (kind == FUT_RANDOM && o->m && o->m < N) {
        fprintf(stderr,
                "raspfut: m=%zu is too small for L=%zu H=%zu d=%zu%s: the matching system has N=%zu columns, so m "
                "must be at least %zu\n",
                o->m, o->L, o->H, o->d, o->residual ? " (residual)" : "", N, N);
        return 2;
    }
    Arena a;
    arena_init(&a);
    FutBackbone b;
    char err[512];
    uint8_t *buf;
    size_t len;
    if (!build_backbone(&a, o, kind, &b, err, sizeof err) || !fut_backbone_serialize(&b, &buf, &len, err, sizeof err)) {
        arena_free(&a);
        return fail("backbone", err);
    }
    printf("%s backbone: L=%zu H=%zu d=%zu%s%s m=%zu (path-matching lower bound %zu)", fut_kind_name(kind), b.L,
           b.H, b.d, b.residual ? " residual" : "", b.causal ? " causal" : "", b.m,
           fut_lower_bound(b.L, b.H, b.d, b.residual));
    if (kind == FUT_RANDOM) printf(" N=%zu seed=%llu", N, (unsigned long long)b.seed);
    printf("\n");
    arena_free(&a);
    return write_out(o->out, buf, len);
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

static int cmd_program(const Opts *o) {
    if (o->npos != 1) return usage_error("%s", "program takes exactly one TARGET file");
    if (!o->backbone || !o->out) return usage_error("%s", "program needs -b UT.bin and -o E.bin");
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
    if (!load_backbone(&a, o->backbone, &b, err, sizeof err)) rc = fail(NULL, err);
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
        rc = write_out(o->out, buf, len);
    }
    arena_free(&a);
    return rc;
}

/* Parses an INPUT matrix: inline "a,b;c,d" or a file with one row per line. */
static bool parse_matrix(Arena *a, const char *arg, size_t cols, FutMat *out, char *err, size_t es) {
    const char *text = arg;
    FILE *fp = strchr(arg, ';') || strchr(arg, ',') ? NULL : fopen(arg, "rb");
    if (fp) {
        fclose(fp);
        uint8_t *buf;
        size_t len;
        if (!fut_read_file(a, arg, &buf, &len, err, es)) return false;
        char *t = arena_strndup(a, (const char *)buf, len);
        for (char *p = t; *p; p++)
            if (*p == '\n') *p = ';';
        text = t;
    }
    size_t cap = 64, n = 0, rows = 0, in_row = 0;
    double *vals = ARENA_ARRAY(a, double, cap);
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r') p++;
        if (*p == ';' || *p == '\0') {
            if (in_row) {
                if (in_row != cols) {
                    snprintf(err, es, "input row %zu has %zu numbers, the embedding expects %zu", rows + 1, in_row, cols);
                    return false;
                }
                rows++;
                in_row = 0;
            }
            if (*p == '\0') break;
            p++;
            continue;
        }
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v)) {
            snprintf(err, es, "input: not a number at \"%.20s\"", p);
            return false;
        }
        if (n == cap) {
            vals = arena_grow(a, vals, cap, cap * 2, sizeof(double));
            cap *= 2;
        }
        vals[n++] = v;
        in_row++;
        p = end;
    }
    if (rows == 0) {
        snprintf(err, es, "input is empty");
        return false;
    }
    *out = (FutMat){rows, cols, vals};
    return true;
}

static int cmd_run(const Opts *o) {
    if (o->npos < 3) return usage_error("%s", "run needs UT.bin E.bin and at least one INPUT");
    Arena a;
    arena_init(&a);
    char err[1024];
    FutBackbone b;
    FutEmbedding e;
    uint8_t *buf;
    size_t len;
    int rc = 0;
    if (!load_backbone(&a, o->pos[0], &b, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_read_file(&a, o->pos[1], &buf, &len, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_embedding_parse(&a, buf, len, &e, err, sizeof err)) rc = fail(o->pos[1], err);
    else if (!fut_embedding_matches(&e, &b, err, sizeof err)) rc = fail(o->pos[1], err);
    if (o->json && !rc) printf("[");
    for (size_t k = 2; !rc && k < o->npos; k++) {
        FutMat X;
        if (!parse_matrix(&a, o->pos[k], e.E.rows, &X, err, sizeof err)) {
            rc = fail(o->pos[k], err);
            break;
        }
        FutMat Y = fut_backbone_forward(&a, &b, e.E, X);
        if (o->json) printf("%s{\"input\":%zu,\"output\":[", k > 2 ? "," : "", k - 2);
        for (size_t i = 0; i < Y.rows; i++) {
            if (o->json) printf("%s[", i ? "," : "");
            for (size_t j = 0; j < Y.cols; j++) {
                double v = FUT_AT(Y, i, j);
                if (fabs(v) < 5e-13) v = 0.0; /* print rounding noise as 0 */
                printf(o->json ? "%s%.12g" : "%s%.10g", j ? (o->json ? "," : " ") : "", v);
            }
            printf(o->json ? "]" : "\n");
        }
        if (o->json) printf("]}");
        else if (k + 1 < o->npos) printf("\n");
    }
    if (o->json && !rc) printf("]\n");
    arena_free(&a);
    return rc;
}

static int cmd_selftest(const Opts *o) {
    int rc = need_shape(o);
    if (rc) return rc;
    FutSelftestOptions so = {.L = o->L, .H = o->H, .d = o->d, .residual = o->residual, .causal = o->causal,
                             .trials = o->trials ? o->trials : 10, .n = o->len, .m = o->m, .seed = o->seed};
    if (!o->kind || !fut_kind_parse(o->kind, &so.kind)) return usage_error("--kind must be sparse, looped or random%s", "");
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

static int cmd_random_target(const Opts *o) {
    int rc = need_shape(o);
    if (rc) return rc;
    if (!o->out) return usage_error("%s", "-o T.bin is required");
    Arena a;
    arena_init(&a);
    FutRng rng;
    fut_rng_seed(&rng, o->seed);
    FutTarget t;
    fut_target_random(&a, &rng, o->L, o->H, o->d, o->residual, o->causal, &t);
    uint8_t *buf;
    size_t len;
    char err[512];
    rc = fut_target_serialize(&t, &buf, &len, err, sizeof err) ? write_out(o->out, buf, len) : fail("random-target", err);
    arena_free(&a);
    return rc;
}

static int task_from_opts(const Opts *o, FutTask *t) {
    *t = (FutTask){.beta = o->beta};
    if (o->npos < 1) return usage_error("%s", "which task: match2 or parity?");
    if (strcmp(o->pos[0], "match2") == 0) {
        t->kind = FUT_TASK_MATCH2;
        t->M = o->M;
        t->max_len = o->len ? o->len : 12;
        if (!o->M) return usage_error("%s", "match2 needs --M");
    } else if (strcmp(o->pos[0], "parity") == 0) {
        t->kind = FUT_TASK_PARITY;
        t->n = o->n;
        t->k = o->k;
        if (!o->n || !o->k) return usage_error("%s", "parity needs --n and --k");
        if (o->positions) {
            size_t cnt = 0;
            const char *p = o->positions;
            while (*p) {
                char *end;
                errno = 0;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || errno || cnt == 64) return usage_error("bad --positions: %s", o->positions);
                t->positions[cnt++] = v;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') return usage_error("bad --positions: %s", o->positions);
            }
            if (cnt != o->k) return usage_error("--positions must list exactly --k positions (%s)", o->positions);
        } else if (o->k <= o->n) { /* k distinct positions drawn from the seed */
            FutRng rng;
            fut_rng_seed(&rng, o->seed);
            size_t perm[64];
            for (size_t i = 0; i < o->n; i++) perm[i] = i;
            for (size_t i = 0; i < o->k; i++) {
                size_t j = i + fut_rng_below(&rng, o->n - i), tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
                t->positions[i] = perm[i];
            }
        }
    } else {
        return usage_error("unknown task %s (match2 or parity)", o->pos[0]);
    }
    char err[256];
    if (!fut_task_validate(t, err, sizeof err)) return fail("task", err);
    return 0;
}

static int cmd_task(const Opts *o) {
    FutTask t;
    int rc = task_from_opts(o, &t);
    if (rc) return rc;
    if (!o->out) return usage_error("%s", "-o T.bin is required");
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
    rc = fut_target_serialize(&target, &buf, &len, err, sizeof err) ? write_out(o->out, buf, len) : fail("task", err);
    arena_free(&a);
    return rc;
}

static int cmd_tasktest(const Opts *o) {
    FutTask t;
    int rc = task_from_opts(o, &t);
    if (rc) return rc;
    if (!o->backbone) return usage_error("%s", "tasktest needs -b UT.bin");
    Arena a;
    arena_init(&a);
    char err[1024];
    FutBackbone b;
    FutTaskResult r;
    size_t inputs = o->inputs ? o->inputs : 1000;
    if (!load_backbone(&a, o->backbone, &b, err, sizeof err)) rc = fail(NULL, err);
    else if (!fut_task_check(&b, &t, inputs, o->seed, &r, err, sizeof err)) rc = fail("tasktest", err);
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

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "train") == 0) return tr_cli_main(argc - 2, argv + 2);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(USAGE, stdout);
        return 0;
    }
    Opts o = {0};
    int rc = parse_opts(argc - 2, argv + 2, &o);
    if (rc) return rc;
    if (strcmp(cmd, "backbone") == 0) return o.npos ? usage_error("unexpected argument %s", o.pos[0]) : cmd_backbone(&o);
    if (strcmp(cmd, "program") == 0) return cmd_program(&o);
    if (strcmp(cmd, "run") == 0) return cmd_run(&o);
    if (strcmp(cmd, "selftest") == 0) return o.npos ? usage_error("unexpected argument %s", o.pos[0]) : cmd_selftest(&o);
    if (strcmp(cmd, "random-target") == 0) return cmd_random_target(&o);
    if (strcmp(cmd, "task") == 0) return cmd_task(&o);
    if (strcmp(cmd, "tasktest") == 0) return cmd_tasktest(&o);
    return usage_error("unknown command %s", cmd);
}
