/* rasprun: runs a compiled model (model.bin) on inputs, optionally checking every result
 * against the reference evaluator on the program stored inside the model. It prints exactly
 * what `raspcc PROGRAM --eval` prints; --trace and --trace-png show the residual stream layer by
 * layer (viz/trace.h, viz/heatmap.h). Exit: 0 fine, 1 an input failed or mismatched (with
 * --check, an input the model refuses inside the margin of a comparison is a note, not a
 * failure), 2 bad usage or a bad model file, 3 a model's error flag disagreed with its checks. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/input.h"
#include "runtime/forward.h"
#include "runtime/kernels.h"
#include "runtime/model_io.h"
#include "runtime/parallel.h"
#include "runtime/kernels32.h"
#include "runtime/precision.h"
#include "support/parse.h"
#include "support/term.h"
#include "verify/verify.h"
#include "viz/heatmap.h"
#include "viz/trace.h"

#define RASPRUN_VERSION "0.1"
#define VERIFY_LIMIT 10000000 /* exhaustive --verify refuses more inputs than this */

static const char usage_text[] =
    "usage: rasprun MODEL.bin [--json] [--check | --flag] [--float64] [--inputs FILE | INPUT ...]\n"
    "       rasprun MODEL.bin --trace [--trace-png FILE] [--inputs FILE | INPUT ...]\n"
    "       rasprun MODEL.bin --verify [--max-len N | --random K] [--seed S] [--float64]\n"
    "       rasprun MODEL.bin --info | --bench K [--float64]\n"
    "       rasprun --help | --version\n";

static const char help_text[] =
    "\n"
    "Runs the transformer stored in MODEL.bin (written by raspcc -o) on each input and prints one\n"
    "line per input, exactly as `raspcc PROGRAM --eval` does: [o, l, l, e, h] (REPL style) or,\n"
    "with --json, a JSON array or {\"error\": \"...\"} for an input that fails.\n"
    "\n"
    "  MODEL.bin       the model file, or - to read it from standard input\n"
    "                  (raspcc P.rasp -o - ... | rasprun - INPUT)\n"
    "  --inputs FILE   one input literal a line (\"-\" for stdin): \"hello\", [1, 2, 3], hello\n"
    "  INPUT           an input on the command line; after --, an INPUT may start with '-'\n"
    "  --check         also evaluate the program stored in the model with the reference\n"
    "                  evaluator and report every disagreement on stderr (exit 1 if any)\n"
    "  --verify        compare model and reference on every input over the vocabulary of every\n"
    "                  length 1..N (--max-len N, default the model's), or on K random inputs\n"
    "                  (--random K, --seed S); prints 'verify: N inputs, M mismatches, K errors\n"
    "                  agreed' (a progress bar on stderr when it is a terminal), then ', J inside\n"
    "                  the margin' for a model with margin checks and '; largest error E (bound B)'\n"
    "                  for a real-valued output with an error bound\n"
    "  --trace         print, for each input, the residual stream after the embedding and after\n"
    "                  each layer, decoded by s-op from the model's residual labels: a row per\n"
    "                  s-op holding something (a one-hot block shows its value, '.' when empty,\n"
    "                  {v w, ...} when mixed; a number block its number), a column per position\n"
    "                  (BOS first); '+' marks the rows that layer wrote. Then the output, or the\n"
    "                  error, as rasprun prints it\n"
    "  --trace-png FILE  write the trace of the one input given as a PNG heatmap to FILE (- =\n"
    "                  stdout): a panel per stage (embedding, layer 0, ...), a row per residual\n"
    "                  dim (labelled), a column per position; red > 0, blue < 0, each row scaled\n"
    "                  by its largest |value|. With or without --trace\n"
    "  --flag          a model compiled with --error-flag: after each input's line, the error\n"
    "                  flag its weights computed, err at each position: 'flag: [0, 0, 2]' (with\n"
    "                  --json {\"flag\": [0, 0, 2]}); 'flag: none' for an input that was not run\n"
    "                  (too long, a token outside the vocabulary: no embedding row); then the\n"
    "                  band's note, if any (below): 'flag: [2] (note: ...)', {..., \"note\": \"...\"}\n"
    "  --info          print the model's configuration and parameter counts\n"
    "  --bench K       time K random inputs of the maximum length, batched and one at a time, with\n"
    "                  the floating-point operations per second beside the measured peak of a core\n"
    "  --float64       run in float64 even when float32 is shown safe (see below)\n"
    "  -q, --quiet     print only errors on stderr (no notes, summaries or progress)\n"
    "  -v, --verbose   say on stderr what was loaded and how long each step took\n"
    "\n"
    "--check and --verify compare exactly and typed: the kinds must match (1, 1.0 and True are\n"
    "different answers), strings byte for byte, floats bit for bit (-0.0 differs from 0.0; NaN\n"
    "equals NaN; a real-valued output within the error bound the model states). Both errors count\n"
    "as agreement (\"errors agreed\"); an input the model cannot take (too long, a token outside\n"
    "its vocabulary) is not compared. Mismatches print as 'rasprun: mismatch on input [...]: model\n"
    "[...], reference [...]' in typed JSON. An input the model refuses because a real number it\n"
    "compares lies within the margin of the comparison (error \"within the margin: ...\") is not a\n"
    "disagreement: --verify counts it (\"inside the margin\"), --check prints it as 'rasprun: note:\n"
    "inside the margin on input [...]: ...' and does not fail for it. With --check, a summary line\n"
    "'rasprun: check: ...' (the --verify counts) ends stderr for a model with margin checks or an\n"
    "error bound.\n"
    "\n"
    "Inputs run in float32 (twice the SIMD lanes) when the model's precision analysis shows that\n"
    "float32 rounding stays below half of every decision margin, so that every output and error\n"
    "is the one float64 gives; otherwise, and with --float64, in float64. --info says which, and\n"
    "why (its 'runs in:' line). --trace always runs in float64.\n"
    "\n"
    "An option with a value is written --opt VALUE or --opt=VALUE; -- ends the options. Progress\n"
    "shows on stderr only when it is a terminal (and not with -q).\n"
    "A model compiled with raspcc --error-flag computes the flag in its weights (residual dim\n"
    "'err', a sum of terms >= 0; docs/model-format.md, \"The error flag\"). Every run compares it\n"
    "with the checks, by this contract: an input that is refused (a check or the readout fails, not\n"
    "a non-finite number) has err > 0 at some position; one that is answered has err = 0 at every\n"
    "position, unless a checked value lies inside the flag's band, a stated distance from its\n"
    "check's boundary on the passing side: a one-hot entry within 1e-6 of 0 or 1 but farther than\n"
    "2.5e-7; a single-key variance in [1/16, 1/8); a decoded value within the margin m of its\n"
    "member but farther than m/4; an int read from a real within its error bound b but farther\n"
    "than b - 2 delta; a margin check's |v - c| in (m, m + 3 eta) (delta and eta:\n"
    "runtime/flag_band.h). There the flag may be set: the input is answered and a note says so\n"
    "('rasprun: note: the error flag is set ... inside the flag's band'; not with -q). Any other\n"
    "disagreement fails the input with 'the error flag disagrees with the checks: ...', counts as\n"
    "a mismatch in --verify and is an internal error (exit 3).\n"
    "\n"
    "Exit status: 0 fine; 1 an input failed or disagreed; 2 bad usage or a bad model file; 3 the\n"
    "error flag disagreed with the checks.\n";

typedef struct Options {
    const char *model, *inputs_file, **inputs;
    size_t n_inputs;
    bool json, check, verify, info, have_max_len, trace, quiet, verbose, float64, flag;
    const char *trace_png; /* --trace-png FILE, "-" for standard output */
    size_t max_len, random, bench;
    uint64_t seed;
} Options;

/* Everything one run needs: the model, its workspace and (for --check/--verify) the program. */
typedef struct Runner {
    Model model;
    Workspace ws;
    VerifyReference ref;
    VerifyPair pair;
    size_t mismatches;
    VerifyCounts counts; /* --check: every input compared */
    Progress bar;        /* --verify, on a terminal */
    bool write_failed;   /* --trace-png could not write its file */
    ModelRunner pool;    /* running inputs and --verify: a workspace per core */
    /* inputs waiting to run as one batch (running without --check) */
    Arena queue_arena;
    char **queue;
    size_t queued;
    bool queue_failed;   /* an input of a flushed batch failed */
    bool flag_disagreed; /* an input's error flag disagreed with the checks (exit 3) */
} Runner;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "rasprun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s(rasprun --help for details)\n", usage_text);
    return 2;
}

/* "--name=value": the name goes to buf and the value is returned; otherwise NULL. */
static const char *split_inline(const char *a, char *buf, size_t size) {
    const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
    if (!eq || (size_t)(eq - a) >= size) return NULL;
    memcpy(buf, a, (size_t)(eq - a));
    buf[eq - a] = '\0';
    return eq + 1;
}

/* Returns -1 to proceed, otherwise the exit code. */
static int parse_args(int argc, char **argv, Options *o) {
    memset(o, 0, sizeof *o);
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') { /* "-" alone: standard input */
            if (!o->model) o->model = a;
            else o->inputs[o->n_inputs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            options_done = true;
            continue;
        }
        const char *value = split_inline(a, name, sizeof name);
        if (value) a = name;
        bool takes_value = strcmp(a, "--inputs") == 0 || strcmp(a, "--max-len") == 0 || strcmp(a, "--random") == 0 ||
                           strcmp(a, "--seed") == 0 || strcmp(a, "--bench") == 0 || strcmp(a, "--trace-png") == 0;
        if (value && !takes_value) {
            bool known = !strcmp(a, "--json") || !strcmp(a, "--check") || !strcmp(a, "--verify") || !strcmp(a, "--info") ||
                         !strcmp(a, "--trace") || !strcmp(a, "--quiet") || !strcmp(a, "--float64") || !strcmp(a, "--flag") ||
                         !strcmp(a, "--verbose") || !strcmp(a, "--help") || !strcmp(a, "--version");
            return usage_error(known ? "option '%s' takes no value" : "unknown option '%s'", a);
        }
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error("option '%s' needs a value", a);
            value = argv[++i];
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { printf("%s%s", usage_text, help_text); return 0; }
        if (strcmp(a, "--version") == 0) { printf("rasprun %s (model format %s)\n", RASPRUN_VERSION, MODEL_FORMAT_VERSION); return 0; }
        if (strcmp(a, "--json") == 0) o->json = true;
        else if (strcmp(a, "--check") == 0) o->check = true;
        else if (strcmp(a, "--verify") == 0) o->verify = true;
        else if (strcmp(a, "--info") == 0) o->info = true;
        else if (strcmp(a, "--trace") == 0) o->trace = true;
        else if (strcmp(a, "--float64") == 0) o->float64 = true;
        else if (strcmp(a, "--flag") == 0) o->flag = true;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) o->quiet = true;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) o->verbose = true;
        else if (strcmp(a, "--inputs") == 0) o->inputs_file = value;
        else if (strcmp(a, "--trace-png") == 0) o->trace_png = value;
        else if (takes_value) {
            size_t v = 0;
            if (!parse_size(value, &v)) return usage_error("option %s needs a non-negative integer", a);
            if (strcmp(a, "--max-len") == 0) { o->max_len = v; o->have_max_len = true; }
            else if (strcmp(a, "--random") == 0) o->random = v;
            else if (strcmp(a, "--bench") == 0) o->bench = v;
            else o->seed = v;
        } else {
            return usage_error("unknown option '%s' (an input starting with '-' goes after --)", a);
        }
    }
    if (!o->model) return usage_error("%s", "no model given");
    if (o->quiet && o->verbose) return usage_error("%s", "-q and -v contradict each other");
    bool tracing = o->trace || o->trace_png;
    int modes = o->verify + o->info + (o->bench > 0) + tracing;
    if (modes > 1) return usage_error("%s", "--verify, --info, --bench and --trace are separate modes");
    if ((modes && !tracing) && (o->inputs_file || o->n_inputs || o->check || o->json))
        return usage_error("%s", "inputs, --check and --json go with running inputs, not --verify/--info/--bench");
    if (tracing && (o->check || o->json)) return usage_error("%s", "--check and --json do not go with --trace");
    if (o->flag && (modes || o->check)) return usage_error("%s", "--flag goes with running inputs, without --check");
    if (!o->verify && (o->have_max_len || o->random)) return usage_error("%s", "--max-len and --random go with --verify");
    if (o->have_max_len && o->random) return usage_error("%s", "give --max-len N or --random K, not both");
    if ((!modes || tracing) && !o->inputs_file && !o->n_inputs)
        return usage_error("%s", "no inputs: give --inputs FILE or INPUT ...");
    if (o->inputs_file && o->n_inputs) return usage_error("%s", "give --inputs FILE or inputs, not both");
    if (o->trace_png && (o->inputs_file || o->n_inputs != 1))
        return usage_error("%s", "--trace-png draws one input: give exactly one INPUT");
    if (o->trace_png && o->trace && !strcmp(o->trace_png, "-"))
        return usage_error("%s", "--trace prints to standard output: give --trace-png a file");
    if (!strcmp(o->model, "-") && o->inputs_file && !strcmp(o->inputs_file, "-"))
        return usage_error("%s", "the model and --inputs cannot both be standard input");
    return -1;
}

static void print_atoms(FILE *out, const Value *v, size_t n, bool json) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        if (json) value_print_json(out, v[i]);
        else value_print_repl(out, v[i]);
    }
    fputc(']', out);
}

static void report_mismatch(const VerifyOutcome *oc) {
    fputs("rasprun: mismatch on ", stderr);
    verify_print_report(stderr, oc);
    fputc('\n', stderr);
}

static void report_margin(const VerifyOutcome *oc) {
    fputs("rasprun: note: inside the margin on ", stderr);
    verify_print_report(stderr, oc);
    fputc('\n', stderr);
}

/* The program stored in the model, elaborated afresh (`load` relative to the current
 * directory), and the pair --check and --verify compare: exactly, but for the error bound the
 * model states on a real-valued output. */
static bool load_reference(Runner *r) {
    char err[256];
    if (!verify_reference_load(&r->ref, &r->model, NULL, stderr, err, sizeof err)) {
        fprintf(stderr, "rasprun: %s\n", err);
        return false;
    }
    r->pair = (VerifyPair){.model = &r->model, .ws = &r->ws, .ref = &r->ref, .bound = verify_model_bound(&r->model),
                           .runner = &r->pool};
    return true;
}

/* ---- running inputs ---- */

/* One input's outcome as rasprun prints it: its atoms, or its error (JSON with --json). */
static void print_outcome(const Options *o, bool ok, const Value *out, size_t n, const char *msg) {
    if (ok) {
        print_atoms(stdout, out, n, o->json);
        fputc('\n', stdout);
    } else if (o->json) {
        fputs("{\"error\": ", stdout);
        value_print_json(stdout, value_str(msg));
        fputs("}\n", stdout);
    } else {
        printf("error: %s\n", msg);
    }
}

/* --flag: the error flag of one input (err at each position), or that it was not run; and the
 * note of an answered input whose flag is set inside the flag's band. */
static void print_flag(const Options *o, const double *flag, size_t n, const char *note) {
    printf(o->json ? "{\"flag\": " : "flag: ");
    if (!flag) {
        printf(o->json ? "null}\n" : "none\n");
        return;
    }
    fputc('[', stdout);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", stdout);
        if (o->json) value_print_json(stdout, value_float(flag[i]));
        else printf("%g", flag[i]);
    }
    fputc(']', stdout);
    if (note && o->json) {
        fputs(", \"note\": ", stdout);
        value_print_json(stdout, value_str(note));
    } else if (note) {
        printf(" (note: %s)", note);
    }
    printf(o->json ? "}\n" : "\n");
}

/* An internal error: the weights' error flag and the runtime's checks disagree. */
static void note_flag(Runner *r, bool ok, const char *msg) {
    if (ok || strncmp(msg, MODEL_FLAG_ERROR, strlen(MODEL_FLAG_ERROR))) return;
    r->flag_disagreed = true;
    fprintf(stderr, "rasprun: internal error: %s\n", msg);
}

static bool run_one(Runner *r, const Options *o, const char *text) {
    Arena scratch;
    arena_init(&scratch);
    char msg[VERIFY_MSG_SIZE];
    Value *in, *out = NULL;
    size_t n;
    bool ok = input_parse(&scratch, text, &in, &n, msg, sizeof msg), agree = true, margin = false;
    if (ok && o->check) {
        /* An input outside the model's domain (too long, unknown token) is not a disagreement:
         * the model was never meant to answer it, and its failure is printed below. */
        VerifyOutcome oc;
        VerifyVerdict v = verify_input(&r->pair, in, n, &scratch, &oc);
        ok = oc.model_ok;
        out = oc.model_out;
        if (!ok) snprintf(msg, sizeof msg, "%s", oc.model_err);
        if (v != VERIFY_OUTSIDE) r->counts.inputs++;
        if (oc.max_error > r->counts.max_error) r->counts.max_error = oc.max_error;
        if (v == VERIFY_BOTH_ERROR) r->counts.errors_agreed++;
        if (v == VERIFY_MISMATCH) {
            agree = false;
            r->mismatches++;
            report_mismatch(&oc);
        }
        if (v == VERIFY_MARGIN) { /* the model declined to answer: a note, not a failure */
            r->counts.margins++;
            if (!o->quiet) report_margin(&oc);
            margin = true;
        }
    } else if (ok) {
        ok = model_run(&r->model, &r->ws, in, n, &scratch, &out, msg, sizeof msg);
    }
    note_flag(r, ok, msg);
    print_outcome(o, ok, out, n, msg);
    fflush(stdout);
    arena_free(&scratch);
    return (ok || margin) && agree;
}

enum { QUEUE = 1024 }; /* inputs run as one batch */

/* The queued inputs: parsed, run on every core at once (model_runner_run), printed in order. */
static void flush_queue(Runner *r, const Options *o) {
    if (!r->queued) return;
    Arena *a = &r->queue_arena;
    const Value **in = ARENA_ARRAY(a, const Value *, r->queued);
    size_t *len = ARENA_ARRAY(a, size_t, r->queued), *slot = ARENA_ARRAY(a, size_t, r->queued), parsed = 0;
    char **why = ARENA_ARRAY(a, char *, r->queued);
    for (size_t i = 0; i < r->queued; i++) {
        char msg[VERIFY_MSG_SIZE];
        Value *v;
        if (input_parse(a, r->queue[i], &v, &len[parsed], msg, sizeof msg)) {
            in[parsed] = v;
            slot[i] = parsed++;
        } else {
            why[i] = arena_strdup(a, msg);
            slot[i] = SIZE_MAX;
        }
    }
    ModelOutcome *res = ARENA_ARRAY(a, ModelOutcome, parsed ? parsed : 1);
    model_runner_run(&r->pool, &r->model, in, len, parsed, res);
    for (size_t i = 0; i < r->queued; i++) {
        bool ok = slot[i] != SIZE_MAX && res[slot[i]].ok;
        if (slot[i] == SIZE_MAX) print_outcome(o, false, NULL, 0, why[i]);
        else print_outcome(o, ok, res[slot[i]].out, len[slot[i]], res[slot[i]].err);
        const ModelOutcome *oc = slot[i] != SIZE_MAX ? &res[slot[i]] : NULL;
        if (oc) note_flag(r, ok, oc->err);
        if (oc && oc->note && !o->flag && !o->quiet) fprintf(stderr, "rasprun: note: %s\n", oc->note);
        if (o->flag) print_flag(o, oc ? oc->flag : NULL, oc ? len[slot[i]] : 0, oc ? oc->note : NULL);
        r->queue_failed |= !ok;
    }
    fflush(stdout);
    arena_reset(a);
    r->queue = NULL;
    r->queued = 0;
}

/* Running without --check: the input joins the queue (its outcome is printed when it runs). */
static bool queue_one(Runner *r, const Options *o, const char *text) {
    if (!r->queue) r->queue = ARENA_ARRAY(&r->queue_arena, char *, QUEUE);
    r->queue[r->queued++] = arena_strdup(&r->queue_arena, text);
    if (r->queued == QUEUE) flush_queue(r, o);
    return true;
}

/* Calls each(r, o, text) on every input (the command line's, or the file's non-blank lines);
 * true when every call did; false with *status 2 when the file cannot be opened. */
static bool for_each_input(Runner *r, const Options *o, bool (*each)(Runner *, const Options *, const char *),
                           int *status) {
    bool all_ok = true;
    if (!o->inputs_file) {
        for (size_t i = 0; i < o->n_inputs; i++) all_ok &= each(r, o, o->inputs[i]);
        return all_ok;
    }
    FILE *f = strcmp(o->inputs_file, "-") == 0 ? stdin : fopen(o->inputs_file, "r");
    if (!f) {
        fprintf(stderr, "rasprun: cannot open inputs file %s\n", o->inputs_file);
        *status = 2;
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strspn(line, " \t\r\n") == strlen(line)) continue;
        all_ok &= each(r, o, line);
    }
    free(line);
    if (f != stdin) fclose(f);
    return all_ok;
}

static int run_inputs(Runner *r, const Options *o) {
    int status = 1;
    bool all_ok = for_each_input(r, o, o->check ? run_one : queue_one, &status);
    flush_queue(r, o);
    all_ok &= !r->queue_failed;
    if (status == 2) return 2;
    if (o->flag && !r->model.has_error_flag)
        fprintf(stderr, "rasprun: warning: --flag: this model has no error flag (compile it with raspcc --error-flag)\n");
    if (o->check && r->mismatches)
        fprintf(stderr, "rasprun: %zu mismatch%s with the reference evaluator\n", r->mismatches,
                r->mismatches == 1 ? "" : "es");
    if (o->check && !o->quiet && (r->pair.bound > 0 || r->counts.margins || verify_model_has_margins(&r->model))) {
        char line[256];
        r->counts.mismatches = r->mismatches;
        verify_format_summary(&r->model, r->pair.bound, &r->counts, line, sizeof line);
        fprintf(stderr, "rasprun: check: %s\n", line);
    }
    if (r->flag_disagreed) return 3;
    return all_ok ? 0 : 1;
}

/* ---- --trace, --trace-png ---- */

/* One input's trace: printed (--trace) and drawn (--trace-png). False when the model could not
 * take the input or did not answer. */
static bool trace_one(Runner *r, const Options *o, const char *text) {
    Arena a;
    arena_init(&a);
    char err[VERIFY_MSG_SIZE];
    Value *in;
    size_t n;
    VizTrace t = {0};
    ResidualLayout L;
    residual_layout(&a, &r->model, &L);
    bool ok = input_parse(&a, text, &in, &n, err, sizeof err) && viz_trace_run(&r->model, &r->ws, in, n, &a, &t, err, sizeof err);
    if (!ok) {
        if (o->trace) printf("error: %s\n", err);
        else fprintf(stderr, "rasprun: %s\n", err);
    } else {
        if (o->trace) viz_trace_print(stdout, &r->model, &L, &t, in);
        ok = t.ok;
        if (o->trace_png) {
            bool to_stdout = !strcmp(o->trace_png, "-");
            FILE *f = to_stdout ? stdout : fopen(o->trace_png, "wb");
            bool drawn = f && viz_heatmap_write(f, &r->model, &L, &t, in, err, sizeof err);
            if (f && !to_stdout && fclose(f) != 0 && drawn) {
                snprintf(err, sizeof err, "write error");
                drawn = false;
            }
            if (!f) snprintf(err, sizeof err, "cannot open it");
            if (!drawn) {
                fprintf(stderr, "rasprun: --trace-png %s: %s\n", o->trace_png, err);
                r->write_failed = true;
            } else if (o->verbose) {
                fprintf(stderr, "rasprun: wrote %s\n", to_stdout ? "the picture to standard output" : o->trace_png);
            }
        }
    }
    fflush(stdout);
    viz_trace_free(&t);
    arena_free(&a);
    return ok;
}

static int trace_inputs(Runner *r, const Options *o) {
    int status = 1;
    bool all_ok = for_each_input(r, o, trace_one, &status);
    if (status == 2 || r->write_failed) return 2;
    return all_ok ? 0 : 1;
}

/* ---- --verify ---- */

enum { MAX_REPORTS = 20 }; /* mismatches printed in full by --verify */

static void on_mismatch(void *ctx, const VerifyOutcome *oc) {
    Runner *r = ctx;
    if (r->mismatches++ < MAX_REPORTS) report_mismatch(oc);
}

static void on_progress(void *ctx, size_t done, size_t total) {
    Runner *r = ctx;
    progress_update(&r->bar, done, total);
}

static int verify(Runner *r, const Options *o) {
    const Model *m = &r->model;
    VerifySampleOptions so = {0};
    so.keep_going = true;
    so.bound = r->pair.bound;
    so.on_mismatch = on_mismatch;
    progress_start(&r->bar, stderr, term_is_tty(stderr) && !o->quiet, "");
    so.on_progress = on_progress;
    so.ctx = r;
    if (o->random) {
        so.random = o->random;
        so.seed = o->seed;
    } else if (m->numeric_tokens) {
        fprintf(stderr, "rasprun: the model reads real-valued tokens (%g..%g): use --verify --random K\n", m->token_lo,
                m->token_hi);
        return 2;
    } else {
        size_t N = o->have_max_len ? o->max_len : m->max_len;
        if (N > m->max_len) {
            fprintf(stderr, "rasprun: --max-len %zu exceeds the model's max length %zu\n", N, m->max_len);
            return 2;
        }
        size_t count = verify_count_inputs(m->n_vocab, N);
        if (count > VERIFY_LIMIT) {
            fprintf(stderr, "rasprun: --verify would run %.3g inputs (vocabulary %zu, lengths 1..%zu); "
                    "use --max-len N with a smaller N or --random K\n",
                    count == SIZE_MAX ? HUGE_VAL : (double)count, m->n_vocab, N);
            return 2;
        }
        so.exhaustive_len = N;
    }
    VerifySampleResult res;
    verify_sample(&r->pair, &so, &res);
    progress_end(&r->bar);
    if (o->verbose)
        fprintf(stderr, "rasprun: verify: %zu inputs in %.2f s (%.0f inputs/s)\n", res.inputs, res.seconds,
                res.seconds > 0 ? (double)res.inputs / res.seconds : 0.0);
    VerifyCounts c = {res.inputs, res.mismatches, res.errors_agreed, res.margins, res.max_error};
    char line[256];
    verify_format_summary(m, r->pair.bound, &c, line, sizeof line);
    printf("verify: %s\n", line);
    verify_sample_result_free(&res);
    return res.mismatches ? 1 : 0;
}

/* ---- --info, --bench ---- */

static void info(const Model *m, const Workspace *ws, const char *why_float64) {
    printf("program:       %s\n", m->program_name && *m->program_name ? m->program_name : "(unnamed)");
    printf("compile flags: %s\n", m->compile_flags ? m->compile_flags : "");
    printf("output:        %s (%s", m->output_name,
           m->output_kind == MODEL_OUT_CATEGORICAL ? "categorical" : "numerical");
    if (m->output_kind == MODEL_OUT_CATEGORICAL) {
        printf(", dims %zu..%zu", m->out_dim, m->out_dim + m->out_count - 1);
    } else if (m->out_count) {
        printf(", %zu value%s", m->out_count, m->out_count == 1 ? "" : "s");
        if (m->out_len_count) { /* per input length: the fewest and most values of one length */
            size_t lo = SIZE_MAX, hi = 0, count;
            for (size_t n = 1; n <= m->out_len_count; n++) {
                model_output_values(m, n, &count);
                lo = count < lo ? count : lo;
                hi = count > hi ? count : hi;
            }
            if (lo == hi) printf(", decoded per input length (%zu each)", lo);
            else printf(", decoded per input length (%zu to %zu each)", lo, hi);
        }
        printf(" within %g", m->out_margin);
        if (m->out_kind_count) printf(", kind dims %zu..%zu", m->out_kind_dim, m->out_kind_dim + m->out_kind_count - 1);
    } else {
        printf(", real-valued, error bound %g", m->out_error_bound);
        if (m->out_error_rel > 0) printf(" + %g |value|", m->out_error_rel);
    }
    printf(")\n");
    static const char *const tt[] = {"tokens_str", "tokens_int", "tokens_float", "tokens_bool"};
    printf("tokens:        %s, vocabulary of %zu: ", m->token_type >= 0 && m->token_type < 4 ? tt[m->token_type] : "?",
           m->n_vocab);
    print_atoms(stdout, m->vocab, m->n_vocab, true);
    printf("\nmax length:    %zu\nresidual D:    %zu\nlayers:        %zu\n", m->max_len, m->d_model, m->n_layers);
    for (size_t l = 0; l < m->n_layers; l++) {
        const ModelLayer *L = &m->layers[l];
        printf("  layer %zu: %zu head%s, MLP hidden %zu%s\n", l, L->n_heads, L->n_heads == 1 ? "" : "s", L->mlp.w1.cols,
               L->mlp.gated ? ", gated" : "");
        for (size_t h = 0; h < L->n_heads; h++) {
            char bos[64] = "";
            if (L->heads[h].bos_extra > 0) snprintf(bos, sizeof bos, ", BOS weight %.17g", 1 + L->heads[h].bos_extra);
            printf("    head %zu: dk %zu, dv %zu, tie tolerance %g%s%s  %s\n", h, L->heads[h].wq.cols,
                   L->heads[h].wv.cols, L->heads[h].tie_tol, bos, L->heads[h].causal ? ", causal" : "",
                   L->heads[h].label);
        }
    }
    size_t margins = 0;
    for (size_t i = 0; i < m->n_checks; i++) margins += m->checks[i].kind == MODEL_CHECK_MARGIN;
    if (m->has_error_flag)
        printf("error flag:    residual dim %zu (%s): 0 where every check passes, > 0 where one fails "
               "(docs/model-format.md)\n", m->error_flag_dim, m->labels[m->error_flag_dim]);
    printf("checks:        %zu", m->n_checks);
    if (margins) printf(" (%zu margin check%s)", margins, margins == 1 ? "" : "s");
    printf("\n");
    for (size_t i = 0; i < m->n_checks; i++) {
        const ModelCheck *c = &m->checks[i];
        if (c->kind != MODEL_CHECK_MARGIN) continue;
        const ModelMargin *g = &m->margins[c->dim];
        printf("  margin after layer %zu: %s, %zu term%s, %zu threshold%s (%g..%g), margin %g\n", c->after_layer,
               c->what, g->n_terms, g->n_terms == 1 ? "" : "s", g->n_thresholds, g->n_thresholds == 1 ? "" : "s",
               g->thresholds[0], g->thresholds[g->n_thresholds - 1], g->m);
    }
    double within, exact;
    model_softmax_beta(m, 1e-12, &within, &exact);
    if (m->n_layers && (within > 0 || exact > 0))
        printf("softmax beta:  >= %.4g (off-tie keys weigh <= 1e-12), %.4g (their weights 0.0); "
               "docs/model-format.md\n", within, exact);
    size_t all = model_param_count(m), nz = model_nonzero_count(m);
    printf("parameters:    %zu (%zu non-zero, %.2f%%)\n", all, nz, all ? 100.0 * (double)nz / (double)all : 0.0);
    /* runtime/precision.h: whether rounding stays far below every decision margin */
    static const char *const formats[2] = {"float64", "float32"};
    for (int f = 0; f < 2; f++) {
        ModelPrecision p;
        model_precision(m, f ? PRECISION_U32 : PRECISION_U64, f == 1, &p);
        printf("%-15s%s: %s (largest error bound / margin %.2g, %s)%s%s\n", f ? "" : "precision:", formats[f],
               p.safe ? "safe" : "not shown safe", p.worst, p.worst_what[0] ? p.worst_what : "no decision",
               p.uncovered[0] ? "; not covered: " : "", p.uncovered);
    }
    if (ws->f32) printf("runs in:       float32 (float32 shown safe; --float64 to run in float64)\n");
    else printf("runs in:       float64 (%s)\n", why_float64);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* K random inputs of the maximum length: the batched run (tokenize, forward, checks, readout,
 * as --inputs runs them) and the same one input per call; the floating-point operations they
 * need (model_forward_flops) per second, beside the measured peak of one core in the format the
 * workspace runs in (float32 or float64). */
/* The CPU time of this thread: on a shared machine, the time the bench actually ran. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(Runner *r, size_t k) {
    const Model *m = &r->model;
    size_t n = m->max_len;
    Arena a;
    arena_init(&a);
    const Value **inputs = ARENA_ARRAY(&a, const Value *, k ? k : 1);
    size_t *lens = ARENA_ARRAY(&a, size_t, k ? k : 1);
    uint64_t seed = 1;
    for (size_t i = 0; i < k; i++) {
        Value *in = ARENA_ARRAY(&a, Value, n ? n : 1);
        for (size_t j = 0; j < n; j++)
            in[j] = m->numeric_tokens ? verify_random_real(m, &seed) : m->vocab[verify_rng_next(&seed) % m->n_vocab];
        inputs[i] = in;
        lens[i] = n;
    }
    ModelOutcome *res = ARENA_ARRAY(&a, ModelOutcome, k ? k : 1);
    Arena out;
    arena_init(&out);
    model_run_batch(m, &r->ws, inputs, lens, k ? 1 : 0, &out, res); /* warm-up */
    r->ws.score_flops = 0.0;
    double t0 = cpu_s();
    for (size_t i = 0; i < k; i += QUEUE) { /* as --inputs runs them: QUEUE at a time, then printed */
        arena_reset(&out);
        model_run_batch(m, &r->ws, inputs + i, lens + i, k - i < QUEUE ? k - i : QUEUE, &out, res + i);
    }
    double batched = cpu_s() - t0, scores = r->ws.score_flops / (double)(k ? k : 1);
    arena_free(&out);
    Arena one; /* one input per call: the same work as the batch, nothing shared */
    arena_init(&one);
    t0 = cpu_s();
    for (size_t i = 0; i < k; i++) model_run_batch(m, &r->ws, &inputs[i], &lens[i], 1, &one, &res[i]);
    double single = cpu_s() - t0;
    arena_free(&one);
    double check, flops = model_forward_flops(m, n) + scores;
    ModelOutcome *pres = ARENA_ARRAY(&a, ModelOutcome, k ? k : 1);
    t0 = now_s(); /* every core: wall-clock time */
    model_runner_run(&r->pool, m, inputs, lens, k, pres);
    double parallel = now_s() - t0;
    double peak = r->ws.f32 ? kernel32_peak_flops(cpu_s, 0.05, &check) : kernel_peak_flops(cpu_s, 0.05, &check);
    double per = batched / (double)(k ? k : 1);
    printf("forward at length %zu (D = %zu, %zu layers, %s, %s), %zu runs: batched %.2f us/seq, one at a time "
           "%.2f us/seq (CPU time); on %zu threads %.2f us/seq (wall); %.4g MFLOP/seq, %.2f GFLOP/s batched; peak %.1f "
           "GFLOP/s (one core, measured)\n",
           n, m->d_model, m->n_layers, r->ws.f32 ? "float32" : "float64", kernel_isa_name(kernel_isa()), k, 1e6 * per, 1e6 * single / (double)(k ? k : 1),
           r->pool.threads, 1e6 * parallel / (double)(k ? k : 1), flops * 1e-6, per > 0 ? flops / per * 1e-9 : 0.0, peak * 1e-9);
    (void)check;
    arena_free(&a);
    return 0;
}

/* The model file, or standard input for "-". */
static bool read_model(const char *path, Model *m, char *err, size_t errsize) {
    if (strcmp(path, "-") != 0) return model_read(path, m, err, errsize);
    size_t len = 0, cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    if (!buf) abort();
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) abort();
            buf = nb;
        }
    }
    bool ok = !ferror(stdin);
    if (!ok) snprintf(err, errsize, "cannot read the model from standard input");
    else ok = model_read_buffer(buf, len, m, err, errsize);
    free(buf);
    return ok;
}

int main(int argc, char **argv) {
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.inputs);
        return rc;
    }
    Runner r;
    memset(&r, 0, sizeof r);
    char err[1024];
    double t0 = term_now();
    if (!read_model(o.model, &r.model, err, sizeof err)) {
        fprintf(stderr, "rasprun: %s\n", err);
        free(o.inputs);
        return 2;
    }
    if (o.verbose)
        fprintf(stderr, "rasprun: loaded %s: output %s, residual width %zu, %zu layers, %zu parameters (%.1f ms)\n",
                strcmp(o.model, "-") ? o.model : "the model from standard input", r.model.output_name,
                r.model.d_model, r.model.n_layers, model_param_count(&r.model), (term_now() - t0) * 1e3);
    rc = 2;
    if (!workspace_init(&r.ws, &r.model, err, sizeof err)) {
        fprintf(stderr, "rasprun: %s\n", err);
        model_free(&r.model);
        free(o.inputs);
        return 2;
    }
    arena_init(&r.queue_arena);
    bool need_pool = o.verify || o.bench || !(o.info || o.trace || o.trace_png);
    if (need_pool && !model_runner_init(&r.pool, &r.model, 0, err, sizeof err)) {
        fprintf(stderr, "rasprun: %s\n", err);
        workspace_free(&r.ws);
        model_free(&r.model);
        free(o.inputs);
        return 2;
    }
    /* float32 where it is shown safe (runtime/forward.h), for the workspace and every core's */
    char why_float64[512] = "--float64";
    bool float32 = !o.float64 && workspace_use_float32(&r.ws, &r.model, why_float64, sizeof why_float64);
    bool need_ref = o.check || o.verify;
    if (float32 && need_pool && !model_runner_use_float32(&r.pool, &r.model, err, sizeof err)) {
        fprintf(stderr, "rasprun: %s\n", err); /* out of memory: the analysis is the same */
        rc = 2;
        need_ref = false;
    } else if (o.info) rc = (info(&r.model, &r.ws, why_float64), 0);
    else if (o.bench) rc = bench(&r, o.bench);
    else if (need_ref && !load_reference(&r)) rc = 2;
    else if (o.verify) rc = verify(&r, &o);
    else if (o.trace || o.trace_png) rc = trace_inputs(&r, &o);
    else rc = run_inputs(&r, &o);
    if (need_ref) verify_reference_free(&r.ref);
    if (need_pool) model_runner_free(&r.pool);
    arena_free(&r.queue_arena);
    workspace_free(&r.ws);
    model_free(&r.model);
    free(o.inputs);
    return rc;
}
