/* `raspfut train` (train/cli.h): options, progress bar, summary, files. */
#include "train/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fut/io.h"
#include "train/io.h"
#include "train/model.h"
#include "train/programmed.h"
#include "train/trainer.h"

static const char *const USAGE =
    "usage: raspfut train --task dyck1|khop [OPTIONS]\n"
    "\n"
    "Trains the input embedding E and the unembedding U of a fixed backbone (or every weight of\n"
    "a transformer of the same shape, --backbone full) on fresh examples, then prints the\n"
    "accuracy on a held-out set as its last line: `accuracy <fraction>`.\n"
    "\n"
    "task:\n"
    "  --task dyck1|khop      is the bracket string balanced? / k-hop induction heads\n"
    "  --n N                  dyck1: longest string; khop: the length (default 16)\n"
    "  --k K                  khop: hops, 1..8 (default 1)\n"
    "  --alphabet S           khop: tokens 0..S-1 (default 4)\n"
    "  --p-balanced P         dyck1: share of balanced strings (default 0.5)\n"
    "  --p-equal P            dyck1: share of unbalanced strings with equal counts (default 0.5)\n"
    "model:\n"
    "  --backbone KIND        sparse, looped, random (fixed; E and U train) or full (all train);\n"
    "                         default sparse\n"
    "  --layers L --heads H --width d\n"
    "                         the target shape the backbone simulates (default L = 2 for dyck1,\n"
    "                         k + 1 for khop; H = 1; d = 8); d is also the width of queries and keys\n"
    "  --m M                  width of a random or full model (default: 1.25 N random, the sparse\n"
    "                         width full)\n"
    "  --residual --layernorm --mlp [--mlp-width W]\n"
    "                         residual connections, layer norms, fixed (random) MLP layers\n"
    "  --causal               keys after the query are masked\n"
    "  --pos absolute|none|rotary   positions (default absolute: rows of E)\n"
    "  --f64                  float64 (default float32)\n"
    "training:\n"
    "  --steps S --batch B    Adam steps (default 1000) of B fresh examples (default 32)\n"
    "  --lr LR                learning rate (default 0.01; 0.001 for full); --no-decay keeps it\n"
    "                         constant (default: cosine decay to LR/10); --clip C (default 1)\n"
    "  --test N               held-out examples (default 2000 dyck1, 500 khop)\n"
    "  --seed Z               backbone and initialisation (default 1); --data-seed Z the data\n"
    "                         (default: the same)\n"
    "  --init-scale S         standard deviation of E's initial entries (default 1)\n"
    "  --init programmed      start from E and U programmed for the task's hand-built target\n"
    "                         (docs/train.md); with --steps 0 nothing is trained\n"
    "  --load MODEL.bin       start from a saved model (its configuration and weights)\n"
    "  --eval-every K         held-out accuracy every K steps (in --curve)\n"
    "output:\n"
    "  -o MODEL.bin           the trained model (raspfut-trained format)\n"
    "  --fut-backbone UT.bin --fut-embedding E.bin\n"
    "                         the backbone and E for `raspfut run` (attention-only fixed backbones)\n"
    "  --curve FILE           step,loss,test_accuracy per step (CSV)\n"
    "  --write-target T.bin   the task's hand-built target (for `raspfut program`)\n"
    "  --print-input STRING   X of STRING for `raspfut run` (brackets, or khop digits), and exit\n"
    "  --quiet                no progress bar (it is drawn only on a terminal anyway)\n";

typedef struct Opts {
    const char *task, *backbone, *pos, *init, *out, *fut_bb, *fut_emb, *curve, *load, *print_input, *write_target;
    size_t n, k, alphabet, L, H, d, m, mlp_width, steps, batch, test, eval_every;
    double p_balanced, p_equal, lr, clip, init_scale;
    uint64_t seed, data_seed;
    bool residual, layernorm, mlp, causal, f64, no_decay, quiet;
    bool have_steps, have_lr, have_seed, have_data_seed, have_test, have_n, have_k;
} Opts;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "raspfut train: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(raspfut train --help for usage)\n");
    return 2;
}

static bool parse_size(const char *s, size_t lo, size_t hi, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || *s == '-' || v < lo || v > hi) return false;
    *out = (size_t)v;
    return true;
}

static bool parse_real(const char *s, double lo, double hi, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static int parse(int argc, char **argv, Opts *o) {
    for (int i = 0; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL, *inl = NULL;
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            a = name;
            inl = eq + 1;
        }
        const char *v = inl ? inl : i + 1 < argc ? argv[i + 1] : NULL;
#define IS(s) (strcmp(a, s) == 0)
#define VALUE()                                                          \
    do {                                                                 \
        if (!v) return usage_error("option %s needs a value", a);        \
        if (!inl) i++;                                                   \
    } while (0)
#define SIZE(flag, field, lo, hi, seen)                                                    \
    if (IS(flag)) {                                                                        \
        VALUE();                                                                           \
        if (!parse_size(v, lo, hi, &o->field)) return usage_error("bad value for " flag ": %s", v); \
        seen;                                                                              \
        continue;                                                                          \
    }
#define REAL(flag, field, lo, hi, seen)                                                    \
    if (IS(flag)) {                                                                        \
        VALUE();                                                                           \
        if (!parse_real(v, lo, hi, &o->field)) return usage_error("bad value for " flag ": %s", v); \
        seen;                                                                              \
        continue;                                                                          \
    }
#define TEXT(flag, field)  \
    if (IS(flag)) {        \
        VALUE();           \
        o->field = v;      \
        continue;          \
    }
#define FLAG(flag, field)                                                          \
    if (IS(flag)) {                                                                \
        if (inl) return usage_error("option %s takes no value", a);                \
        o->field = true;                                                           \
        continue;                                                                  \
    }
        TEXT("--task", task)
        TEXT("--backbone", backbone)
        TEXT("--pos", pos)
        TEXT("--init", init)
        TEXT("-o", out)
        TEXT("--fut-backbone", fut_bb)
        TEXT("--fut-embedding", fut_emb)
        TEXT("--curve", curve)
        TEXT("--load", load)
        TEXT("--print-input", print_input)
        TEXT("--write-target", write_target)
        SIZE("--n", n, 1, TR_MAX_LEN, o->have_n = true)
        SIZE("--k", k, 1, 8, o->have_k = true)
        SIZE("--alphabet", alphabet, 2, 64, (void)0)
        SIZE("--layers", L, 1, 16, (void)0)
        SIZE("--heads", H, 1, 16, (void)0)
        SIZE("--width", d, 1, 1024, (void)0)
        SIZE("--m", m, 1, 8192, (void)0)
        SIZE("--mlp-width", mlp_width, 1, 65536, (void)0)
        SIZE("--steps", steps, 0, 100000000, o->have_steps = true)
        SIZE("--batch", batch, 1, 4096, (void)0)
        SIZE("--test", test, 1, 10000000, o->have_test = true)
        SIZE("--eval-every", eval_every, 1, 100000000, (void)0)
        REAL("--p-balanced", p_balanced, 0, 1, (void)0)
        REAL("--p-equal", p_equal, 0, 1, (void)0)
        REAL("--lr", lr, 1e-12, 100, o->have_lr = true)
        REAL("--clip", clip, 0, 1e12, (void)0)
        REAL("--init-scale", init_scale, 1e-9, 1e6, (void)0)
        FLAG("--residual", residual)
        FLAG("--layernorm", layernorm)
        FLAG("--mlp", mlp)
        FLAG("--causal", causal)
        FLAG("--f64", f64)
        FLAG("--no-decay", no_decay)
        FLAG("--quiet", quiet)
        if (IS("--seed") || IS("--data-seed")) {
            VALUE();
            size_t s;
            if (!parse_size(v, 0, SIZE_MAX, &s)) return usage_error("bad seed: %s", v);
            if (IS("--seed")) o->seed = s, o->have_seed = true;
            else o->data_seed = s, o->have_data_seed = true;
            continue;
        }
        return usage_error(a[0] == '-' ? "unknown option %s" : "unexpected argument %s", a);
#undef IS
#undef VALUE
#undef SIZE
#undef REAL
#undef TEXT
#undef FLAG
    }
    return 0;
}

/* ---- progress bar: on a terminal only, redrawn at most ten times a second ---------------- */

typedef struct Progress {
    bool on;
    double last;
    FILE *curve;
} Progress;

static void progress(void *ctx, size_t step, size_t steps, double loss, double acc) {
    Progress *p = ctx;
    if (p->curve) {
        fprintf(p->curve, "%zu,%.6g,", step, loss);
        if (acc >= 0) fprintf(p->curve, "%.6f", acc);
        fprintf(p->curve, "\n");
    }
    if (!p->on) return;
    double now = tr_now();
    if (step < steps && now - p->last < 0.1) return;
    p->last = now;
    int width = 30, done = (int)((double)width * (double)step / (double)(steps ? steps : 1));
    fprintf(stderr, "\r  step %zu/%zu [", step, steps);
    for (int i = 0; i < width; i++) fputc(i < done ? '=' : i == done ? '>' : ' ', stderr);
    fprintf(stderr, "] loss %.4f", loss);
    if (acc >= 0) fprintf(stderr, "  test %.2f%%", 100 * acc);
    fprintf(stderr, "   ");
    if (step == steps) fprintf(stderr, "\r%*s\r", 80, "");
    fflush(stderr);
}

/* ---- files ----------------------------------------------------------------------------------- */

static int write_file(const char *path, uint8_t *buf, size_t len) {
    char err[512];
    bool ok = fut_write_file(path, buf, len, err, sizeof err);
    free(buf);
    if (!ok) fprintf(stderr, "raspfut train: %s\n", err);
    return ok ? 0 : 2;
}

static int fail(const char *err) {
    fprintf(stderr, "raspfut train: %s\n", err);
    return 2;
}

/* Tokens of a --print-input string: brackets for dyck1, digits (one per token) for khop. */
static bool parse_tokens(const TrTask *t, const char *s, uint8_t *tok, size_t *len) {
    size_t n = strlen(s);
    if (n == 0 || n > t->max_len) return false;
    for (size_t i = 0; i < n; i++) {
        if (t->kind == TR_DYCK1) {
            if (s[i] != '(' && s[i] != ')') return false;
            tok[i] = s[i] == ')';
        } else {
            if (s[i] < '0' || s[i] > '9' || (size_t)(s[i] - '0') >= t->alphabet) return false;
            tok[i] = (uint8_t)(s[i] - '0');
        }
    }
    *len = n;
    return true;
}

static void print_summary(const TrModel *md, const TrTask *task, const Opts *o, const TrTrainOptions *to) {
    const TrConfig *c = &md->cfg;
    if (task->kind == TR_DYCK1)
        printf("task dyck1 n=%zu p_balanced=%g p_equal=%g\n", task->max_len, task->p_balanced, task->p_equal);
    else
        printf("task khop k=%zu n=%zu alphabet=%zu\n", task->k, task->max_len, task->alphabet);
    printf("model %s L=%zu H=%zu d=%zu m=%zu%s%s%s%s pos=%s %s", tr_kind_name(c->kind), c->L, c->H, c->d, md->m,
           c->residual ? " residual" : "", c->layernorm ? " layernorm" : "", c->mlp ? " mlp" : "",
           c->causal ? " causal" : "", tr_pos_name(c->pos), c->precision == TR_F32 ? "float32" : "float64");
    if (c->mlp) printf(" mlp_hidden=%zu", md->hidden);
    printf("\nparameters %zu trainable of %zu\n", tr_model_trainable(md), md->params.total);
    printf("training steps=%zu batch=%zu lr=%g%s clip=%g seed=%llu data_seed=%llu%s\n", to->steps, to->batch,
           to->adam.lr, to->cosine ? " cosine" : "", to->adam.clip, (unsigned long long)c->seed,
           (unsigned long long)to->data_seed, o->init ? " init=programmed" : "");
}

int tr_cli_main(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(USAGE, stdout);
            return 0;
        }
    Opts o = {.seed = 1, .p_balanced = 0.5, .p_equal = 0.5, .alphabet = 4, .clip = 1.0, .batch = 32};
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    tr_blas_single_thread();
    char err[1024];
    TrTask task;
    TrModel md;
    if (o.load) {
        Arena a;
        arena_init(&a);
        uint8_t *buf;
        size_t len;
        if (!fut_read_file(&a, o.load, &buf, &len, err, sizeof err)) {
            arena_free(&a);
            return fail(err);
        }
        bool ok = tr_model_parse(buf, len, o.batch, &md, &task, err, sizeof err);
        arena_free(&a);
        if (!ok) {
            fprintf(stderr, "raspfut train: %s: %s\n", o.load, err);
            return 2;
        }
        if (o.task || o.backbone || o.init) {
            tr_model_free(&md);
            return usage_error("%s", "--load takes the task and the model from the file (no --task, --backbone, --init)");
        }
    } else {
        TrTaskKind tk;
        if (!o.task || !tr_task_parse(o.task, &tk)) return usage_error("%s", "--task must be dyck1 or khop");
        task = tr_task_default(tk, o.have_n ? o.n : 16, o.have_k ? o.k : 1);
        task.alphabet = o.alphabet;
        task.p_balanced = o.p_balanced;
        task.p_equal = o.p_equal;
        if (tk == TR_DYCK1 && (o.have_k || o.alphabet != 4)) return usage_error("%s", "--k and --alphabet are khop options");
        if (!tr_task_validate(&task, err, sizeof err)) return fail(err);
        TrConfig c = {.kind = TR_SPARSE, .L = o.L ? o.L : (tk == TR_DYCK1 ? 2 : task.k + 1), .H = o.H ? o.H : 1,
                      .d = o.d ? o.d : 8, .m = o.m, .residual = o.residual, .layernorm = o.layernorm, .mlp = o.mlp,
                      .causal = o.causal, .mlp_hidden = o.mlp_width, .pos = TR_POS_ABSOLUTE,
                      .vocab = tr_task_vocab(&task), .max_len = task.max_len, .classes = tr_task_classes(&task),
                      .precision = o.f64 ? TR_F64 : TR_F32, .seed = o.seed, .init_embed = o.init_scale};
        if (o.backbone && !tr_kind_parse(o.backbone, &c.kind))
            return usage_error("--backbone must be sparse, looped, random or full (got %s)", o.backbone);
        if (o.pos && !tr_pos_parse(o.pos, &c.pos)) return usage_error("--pos must be absolute, none or rotary (got %s)", o.pos);
        if (o.mlp_width && !o.mlp) return usage_error("%s", "--mlp-width needs --mlp");
        if (o.init && strcmp(o.init, "programmed") != 0) return usage_error("--init must be programmed (got %s)", o.init);
        if (o.init || o.write_target) {
            /* the hand-built target fixes the shape */
            TrProgrammed pg;
            Arena a;
            arena_init(&a);
            if (!tr_programmed_target(&a, &task, &pg, err, sizeof err)) {
                arena_free(&a);
                return fail(err);
            }
            if (o.write_target) {
                uint8_t *buf;
                size_t len;
                if (!fut_target_serialize(&pg.target, &buf, &len, err, sizeof err)) {
                    arena_free(&a);
                    return fail(err);
                }
                rc = write_file(o.write_target, buf, len);
                printf("target %s: L=%zu H=%zu d=%zu residual%s\n", o.write_target, pg.target.L, pg.target.H,
                       pg.target.d, pg.target.causal ? " causal" : "");
                if (rc || !o.init) {
                    arena_free(&a);
                    return rc;
                }
            }
            if ((o.L && o.L != pg.target.L) || (o.H && o.H != pg.target.H) || (o.d && o.d != pg.target.d)) {
                arena_free(&a);
                return usage_error("%s", "--init programmed: the target fixes --layers, --heads and --width");
            }
            c.L = pg.target.L;
            c.H = pg.target.H;
            c.d = pg.target.d;
            c.residual = true;
            c.causal = pg.target.causal;
            c.precision = TR_F64; /* scores reach 1e4: float32 would blur the gates */
            arena_free(&a);
        }
        if (!tr_model_init(&md, &c, o.batch, err, sizeof err)) return fail(err);
        if (o.init && !tr_programmed_init(&md, &task, err, sizeof err)) {
            tr_model_free(&md);
            return fail(err);
        }
    }
    if (o.print_input) {
        uint8_t tok[TR_MAX_LEN];
        size_t len;
        if (!parse_tokens(&task, o.print_input, tok, &len)) {
            tr_model_free(&md);
            return usage_error("--print-input: not a string of this task: %s", o.print_input);
        }
        tr_print_input(stdout, &md, tok, len);
        tr_model_free(&md);
        return 0;
    }

    TrTrainOptions to = tr_train_defaults();
    to.steps = o.have_steps ? o.steps : (o.init ? 0 : 1000);
    to.batch = o.batch;
    to.test_size = o.have_test ? o.test : (task.kind == TR_DYCK1 ? 2000 : 500);
    to.adam.lr = o.have_lr ? o.lr : (md.cfg.kind == TR_FULL ? 1e-3 : 1e-2);
    to.adam.clip = o.clip;
    to.cosine = !o.no_decay;
    to.data_seed = o.have_data_seed ? o.data_seed : md.cfg.seed;
    to.eval_every = o.eval_every;
    Progress pr = {.on = !o.quiet && isatty(STDERR_FILENO)};
    if (o.curve) {
        pr.curve = fopen(o.curve, "w");
        if (!pr.curve) {
            tr_model_free(&md);
            fprintf(stderr, "raspfut train: cannot write %s: %s\n", o.curve, strerror(errno));
            return 2;
        }
        fprintf(pr.curve, "step,loss,test_accuracy\n");
    }
    to.progress = progress;
    to.progress_ctx = &pr;
    print_summary(&md, &task, &o, &to);
    fflush(stdout);
    TrTrainResult r;
    bool ok = tr_train(&md, &task, &to, &r, err, sizeof err);
    if (pr.curve) fclose(pr.curve);
    if (!ok) {
        tr_model_free(&md);
        return fail(err);
    }
    rc = 0;
    if (o.out) {
        uint8_t *buf;
        size_t len;
        TrFileInfo info = {.steps = to.steps, .accuracy = r.test_accuracy};
        rc = tr_model_serialize(&md, &task, &info, &buf, &len, err, sizeof err) ? write_file(o.out, buf, len) : fail(err);
    }
    if (!rc && (o.fut_bb || o.fut_emb)) {
        uint8_t *bb, *emb;
        size_t bb_len, emb_len;
        if (!o.fut_bb || !o.fut_emb) rc = usage_error("%s", "--fut-backbone and --fut-embedding go together");
        else if (!tr_model_export_fut(&md, &bb, &bb_len, &emb, &emb_len, err, sizeof err)) rc = fail(err);
        else if ((rc = write_file(o.fut_bb, bb, bb_len)) != 0) free(emb);
        else rc = write_file(o.fut_emb, emb, emb_len);
    }
    if (to.steps) printf("final_train_loss %.6g\n", r.loss[to.steps - 1]);
    printf("train_seconds %.2f (cpu %.2f)\n", r.seconds, r.cpu_seconds);
    printf("test_loss %.6g\n", r.test_loss);
    printf("test_examples %zu (%zu also drawn for training)\n", r.test_examples, r.seen_in_training);
    if (r.seen_in_training)
        printf("unseen_examples_correct %zu of %zu\n", r.unseen_correct, r.test_examples - r.seen_in_training);
    printf("test_examples_correct %zu\n", r.test_examples_correct);
    printf("test_answers %zu correct %zu\n", r.test_answers, r.test_correct);
    printf("accuracy %.6f\n", r.test_accuracy);
    tr_train_result_free(&r);
    tr_model_free(&md);
    return rc;
}
