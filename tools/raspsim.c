/* raspsim: the universal simulator U (rasp_examples/simulator/attention.rasp, compiled by
 * raspcc) simulating single-layer attentions that solve Match2 and k-PARITY, and the simulator
 * programs checked against the mathematics computed directly.
 *
 * Exit status: 0 fine; 1 an answer wrong or an error beyond the model's bound; 2 bad usage, a
 * bad model file or a model that cannot take the inputs asked for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/model_io.h"
#include "sim/sim.h"
#include "support/parse.h"
#include "support/term.h"

#define RASPSIM_VERSION "0.1"

static const char usage_text[] =
    "usage: raspsim task U.bin TASK... [--inputs K] [--seed S] [--json] [-q]\n"
    "       raspsim check MODEL.bin PROGRAM [--inputs K] [--seed S] [--json] [-q]\n";

static const char help_text[] =
    "\n"
    "task: U.bin is rasp_examples/simulator/attention.rasp compiled by raspcc (--range covering\n"
    "  -2..2; its d, nmax and floor_gap are read from the program the model stores). For each\n"
    "  TASK raspsim builds the single-layer attention T = softmax(X A X^T) X V that solves it and\n"
    "  its readout, draws K seeded random inputs, encodes [X | A | V] as U's input, runs U, and\n"
    "  compares U's output with T(X) computed directly in float64 (within the model's stated\n"
    "  bound plus the program's clamp of its exponents) and U's readout with the true answers.\n"
    "  One table row per TASK:\n"
    "    match2:M=5,n=6         Match2 modulus M on n tokens (any d >= 2; X rows on a circle)\n"
    "    parity:n=4,k=2         k-PARITY of n bits, d = n + 1; the k positions drawn from the\n"
    "                           seed, or given: parity:n=4,S=0/3 (k = how many)\n"
    "check: MODEL.bin is one of rasp_examples/simulator/PROGRAM.rasp compiled by raspcc;\n"
    "  PROGRAM is transpose, matmul, softmax, relu, maxmin, inverse, match2, parity or attention.\n"
    "  K seeded random inputs (real tokens uniform in the model's range with all 53 bits, ints\n"
    "  from its vocabulary) against the mathematics computed directly (LAPACKE for the inverse).\n"
    "\n"
    "Options: --inputs K (default 1000), --seed S (default 1), --json (one JSON object per row),\n"
    "-q (no progress bar; it is drawn on a terminal's stderr only anyway); -- ends the options.\n"
    "Exit status: 0 fine; 1 an answer wrong or an error beyond the model's bound; 2 bad usage, a\n"
    "bad model file or a model that cannot take the inputs.\n";

typedef struct Options {
    const char *mode, *model;
    const char **specs;
    size_t n_specs;
    size_t inputs;
    uint64_t seed;
    bool json, quiet;
} Options;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "raspsim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s(raspsim --help for details)\n", usage_text);
    return 2;
}

/* Returns -1 to proceed, otherwise the exit code. */
static int parse_args(int argc, char **argv, Options *o) {
    memset(o, 0, sizeof *o);
    o->inputs = 1000;
    o->seed = 1;
    o->specs = calloc((size_t)argc, sizeof *o->specs);
    if (!o->specs) return 2;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        if (options_done || (a[0] != '-' || a[1] == '\0')) { /* an operand ("-" is one too) */
            if (!o->mode) o->mode = a;
            else if (!o->model) o->model = a;
            else o->specs[o->n_specs++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        char name[32];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            value = eq + 1;
            a = name;
        }
        bool takes_value = strcmp(a, "--inputs") == 0 || strcmp(a, "--seed") == 0;
        if (value && !takes_value) return usage_error("option '%s' takes no value", a);
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error("option '%s' needs a value", a);
            value = argv[++i];
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("%s%s", usage_text, help_text);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf("raspsim %s\n", RASPSIM_VERSION);
            return 0;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "-q") == 0) {
            o->quiet = true;
        } else if (takes_value) {
            size_t v;
            if (!parse_size(value, &v)) return usage_error("option %s needs a non-negative integer", a);
            if (strcmp(a, "--inputs") == 0) o->inputs = v;
            else o->seed = v;
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (!o->mode) return usage_error("%s", "no mode: give task or check");
    if (strcmp(o->mode, "task") != 0 && strcmp(o->mode, "check") != 0)
        return usage_error("unknown mode '%s' (task or check)", o->mode);
    if (!o->model) return usage_error("%s", "no model given");
    if (!o->n_specs) return usage_error("%s", strcmp(o->mode, "task") == 0 ? "no TASK given" : "no PROGRAM given");
    if (strcmp(o->mode, "check") == 0 && o->n_specs > 1) return usage_error("%s", "check takes one PROGRAM");
    if (o->inputs == 0) return usage_error("%s", "--inputs must be at least 1");
    return -1;
}

/* "match2:M=5,n=6" / "parity:n=4,k=2" / "parity:n=4,S=0/3" into t (d set by the caller). */
static bool parse_task(const char *spec, SimTask *t, SimRng *rng, char *err, size_t errsize) {
    memset(t, 0, sizeof *t);
    const char *colon = strchr(spec, ':');
    size_t kind_len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (kind_len == 6 && strncmp(spec, "match2", 6) == 0) t->kind = SIM_MATCH2;
    else if (kind_len == 6 && strncmp(spec, "parity", 6) == 0) t->kind = SIM_PARITY;
    else {
        snprintf(err, errsize, "unknown task in '%s' (match2:M=..,n=.. or parity:n=..,k=..)", spec);
        return false;
    }
    bool have_positions = false;
    for (const char *p = colon ? colon + 1 : ""; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char field[64];
        if (len >= sizeof field || len < 3 || p[1] != '=') {
            snprintf(err, errsize, "bad field '%.*s' in '%s'", (int)len, p, spec);
            return false;
        }
        memcpy(field, p, len);
        field[len] = '\0';
        char key = field[0];
        const char *val = field + 2;
        if (key == 'S') {
            have_positions = true;
            for (const char *q = val; *q;) {
                char *stop;
                unsigned long v = strtoul(q, &stop, 10);
                if (stop == q || t->k >= SIM_MAX_N || (*stop && *stop != '/')) {
                    snprintf(err, errsize, "bad positions '%s' (write S=0/2/3)", val);
                    return false;
                }
                t->positions[t->k++] = v;
                q = *stop ? stop + 1 : stop;
            }
        } else {
            size_t v;
            if (!parse_size(val, &v) || (key != 'M' && key != 'n' && key != 'k')) {
                snprintf(err, errsize, "bad field '%s' in '%s'", field, spec);
                return false;
            }
            if (key == 'M') t->M = v > 1000 ? 1000 : (int)v;
            else if (key == 'n') t->n = v;
            else t->k = v;
        }
        p += len + (end ? 1 : 0);
    }
    if (t->kind == SIM_PARITY && !have_positions && t->k <= t->n && t->n <= SIM_MAX_N) {
        /* k distinct positions drawn from the seed: a partial Fisher-Yates shuffle */
        size_t all[SIM_MAX_N];
        for (size_t i = 0; i < t->n; i++) all[i] = i;
        for (size_t i = 0; i < t->k; i++) {
            size_t j = i + sim_rng_below(rng, t->n - i), tmp = all[i];
            all[i] = all[j];
            all[j] = tmp;
            t->positions[i] = all[i];
        }
    }
    return true;
}

static void on_progress(void *ctx, size_t done, size_t total) { progress_update(ctx, done, total); }

static const char *task_size(const SimTask *t, char *buf, size_t size) {
    if (t->kind == SIM_MATCH2) {
        snprintf(buf, size, "M = %d, n = %zu", t->M, t->n);
    } else {
        int len = snprintf(buf, size, "n = %zu, k = %zu, S = {", t->n, t->k);
        for (size_t i = 0; i < t->k && len > 0 && (size_t)len < size; i++)
            len += snprintf(buf + len, size - (size_t)len, "%s%zu", i ? " " : "", t->positions[i]);
        if (len > 0 && (size_t)len < size) snprintf(buf + len, size - (size_t)len, "}");
    }
    return buf;
}

static int run_tasks(const Options *o, const Model *m, Workspace *ws) {
    char err[512];
    SimUProgram u;
    if (!sim_u_program(m, &u, err, sizeof err)) {
        fprintf(stderr, "raspsim: %s: %s\n", o->model, err);
        return 2;
    }
    SimRng pick; /* draws k-PARITY's positions when none are given */
    sim_rng_seed(&pick, o->seed ^ 0x5bd1e995u);
    SimTask *tasks = calloc(o->n_specs, sizeof *tasks);
    if (!tasks) return 2;
    for (size_t s = 0; s < o->n_specs; s++) { /* every task built before anything runs */
        SimTask *t = &tasks[s];
        if (!parse_task(o->specs[s], t, &pick, err, sizeof err)) {
            free(tasks);
            return usage_error("%s", err);
        }
        t->d = t->kind == SIM_MATCH2 ? u.d : t->n + 1;
        if (t->kind == SIM_PARITY && t->d != u.d) {
            fprintf(stderr, "raspsim: %s: k-PARITY on n = %zu bits needs U with d = n + 1 = %zu; %s has d = %zu\n",
                    o->specs[s], t->n, t->d, o->model, u.d);
            free(tasks);
            return 2;
        }
        if (!sim_task_build(t, err, sizeof err)) {
            fprintf(stderr, "raspsim: %s: %s\n", o->specs[s], err);
            free(tasks);
            return 2;
        }
    }
    if (!o->json) {
        printf("U: %s (d = %zu, nmax = %zu, max length %zu, %zu layers, error bound %g + %g |value|)\n\n", o->model,
               u.d, u.nmax, m->max_len, m->n_layers, m->out_error_bound, m->out_error_rel);
        printf("| task | size | inputs | answers | U accuracy | T accuracy | max \\|U - T\\| | largest allowed | "
               "over bound | readout slack | ms/input |\n");
        printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    }
    int status = 0;
    for (size_t s = 0; s < o->n_specs; s++) {
        SimTask t = tasks[s];
        Progress bar;
        progress_start(&bar, stderr, term_is_tty(stderr) && !o->quiet, o->specs[s]);
        SimProgress progress = {on_progress, &bar};
        SimTaskResult r;
        bool ran = sim_check_task(m, ws, &u, &t, o->inputs, o->seed, &progress, &r, err, sizeof err);
        progress_end(&bar);
        if (!ran) {
            fprintf(stderr, "raspsim: %s: %s\n", o->specs[s], err);
            free(tasks);
            return 2;
        }
        char size[160];
        double acc = 100.0 * (double)r.correct / (double)r.answers;
        double tacc = 100.0 * (double)r.target_correct / (double)r.answers;
        double ms = 1e3 * r.u.seconds / (double)r.u.runs;
        const char *name = t.kind == SIM_MATCH2 ? "Match2" : "k-PARITY";
        if (o->json)
            printf("{\"task\": \"%s\", \"size\": \"%s\", \"d\": %zu, \"inputs\": %zu, \"answers\": %zu, \"correct\": %zu, "
                   "\"target_correct\": %zu, \"max_error\": %.6g, \"max_allowed\": %.6g, \"over_bound\": %zu, "
                   "\"readout_slack\": %.6g, \"ms_per_input\": %.4g}\n",
                   name, task_size(&t, size, sizeof size), t.d, r.inputs, r.answers, r.correct, r.target_correct,
                   r.u.max_error, r.u.max_allowed, r.u.over_bound, r.u.min_slack, ms);
        else
            printf("| %s | %s | %zu | %zu | %.2f%% | %.2f%% | %.2g | %.2g | %zu | %.3g | %.3g |\n", name,
                   task_size(&t, size, sizeof size), r.inputs, r.answers, acc, tacc, r.u.max_error, r.u.max_allowed,
                   r.u.over_bound, r.u.min_slack, ms);
        if (r.u.over_bound) fprintf(stderr, "raspsim: %s: over the bound: %s\n", o->specs[s], r.u.first_failure);
        if (r.correct != r.answers || r.u.over_bound) status = 1;
    }
    free(tasks);
    return status;
}

static int run_check(const Options *o, const Model *m, Workspace *ws) {
    char err[512];
    SimProgram p;
    if (!sim_program_parse(o->specs[0], &p)) return usage_error("unknown PROGRAM '%s'", o->specs[0]);
    Progress bar;
    progress_start(&bar, stderr, term_is_tty(stderr) && !o->quiet, o->specs[0]);
    SimProgress progress = {on_progress, &bar};
    SimCheck r;
    bool ran = sim_check_program(m, ws, p, o->inputs, o->seed, &progress, &r, err, sizeof err);
    progress_end(&bar);
    if (!ran) {
        fprintf(stderr, "raspsim: %s: %s\n", o->model, err);
        return 2;
    }
    double ms = 1e3 * r.seconds / (double)r.runs;
    if (o->json)
        printf("{\"program\": \"%s\", \"inputs\": %zu, \"raised\": %zu, \"max_error\": %.6g, \"max_allowed\": %.6g, "
               "\"over_bound\": %zu, \"ms_per_input\": %.4g}\n",
               o->specs[0], r.runs, r.raised, r.max_error, r.max_allowed, r.over_bound, ms);
    else
        printf("%s: %zu inputs (%zu raised as the mathematics does), max |model - mathematics| %.3g, largest "
               "allowed %.3g, %zu over, %.3g ms/input\n",
               o->specs[0], r.runs, r.raised, r.max_error, r.max_allowed, r.over_bound, ms);
    if (r.over_bound) fprintf(stderr, "raspsim: %s: %s\n", o->specs[0], r.first_failure);
    return r.over_bound ? 1 : 0;
}

int main(int argc, char **argv) {
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.specs);
        return rc;
    }
    Model m;
    char err[512];
    if (!model_read(o.model, &m, err, sizeof err)) {
        fprintf(stderr, "raspsim: %s: %s\n", o.model, err);
        free(o.specs);
        return 2;
    }
    Workspace ws;
    if (!workspace_init(&ws, &m, err, sizeof err)) {
        fprintf(stderr, "raspsim: %s: %s\n", o.model, err);
        model_free(&m);
        free(o.specs);
        return 2;
    }
    rc = strcmp(o.mode, "task") == 0 ? run_tasks(&o, &m, &ws) : run_check(&o, &m, &ws);
    workspace_free(&ws);
    model_free(&m);
    free(o.specs);
    return rc;
}
