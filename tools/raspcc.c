/* raspcc: the command-line driver. Loads and elaborates a RASP program, then either evaluates
 * an output s-op on inputs with the reference evaluator (--eval) or compiles it into a model
 * file (-o). Every decision belongs to a stage; this file only parses flags and prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "codegen/codegen.h"
#include "fut/from_model.h"
#include "fut/io.h"
#include "ir/elaborate.h"
#include "ir/eval.h"
#include "ir/input.h"
#include "parser/parser.h"
#include "runtime/forward.h"
#include "runtime/model_io.h"
#include "verify/verify.h"

#define RASPCC_VERSION "0.1"

static const char usage_text[] =
    "usage:\n"
    "  raspcc PROGRAM.rasp --eval [-D NAME=VALUE ...] [--output NAME] [--json] [--inputs FILE | INPUT ...]\n"
    "  raspcc PROGRAM.rasp -o MODEL.bin [-D NAME=VALUE ...] [--output NAME] [--vocab V] [--max-len N]\n"
    "                      [--range LO..HI] [--tol T] [--margin M] [--mlp relu|gated]\n"
    "                      [--stats [--json]] [--no-selfcheck]\n"
    "                      [--fut-target T.bin [--beta B] [--fut-embed INPUT]]\n"
    "  raspcc PROGRAM.rasp --dump-ir [-D NAME=VALUE ...] | --dump-ast\n"
    "  raspcc --help | --version\n";

static const char help_text[] =
    "\n"
    "Compiles RASP programs (Weiss et al. 2021) into transformer weights.\n"
    "\n"
    "The program is elaborated first (the prelude, then the file); errors are reported as\n"
    "FILE:LINE:COL with the source line. The output s-op is --output NAME, or by default the\n"
    "last s-op the program assigns at top level.\n"
    "\n"
    "Evaluation (reference evaluator):\n"
    "  --eval           evaluate the output on each input and print one line per input\n"
    "  --json           print each result as a JSON array, or {\"error\": \"...\"} when that input\n"
    "                   failed (the message names FILE:LINE:COL of the failing operation)\n"
    "  --inputs FILE    read inputs from FILE, one a line (empty lines skipped; - = stdin)\n"
    "  INPUT            an input on the command line: \"abc\" (characters), [1, -2, 3.5, True]\n"
    "                   (atoms), or a bare word abc (its characters)\n"
    "  Without --json, results print as the REPL does: [o, l, l, e, h], bools as T/F, floats\n"
    "  rounded to 3 places.\n"
    "\n"
    "Compilation:\n"
    "  -o MODEL.bin     write the compiled transformer\n"
    "  --vocab V        token values: \"abc\" (characters), \"a,b,c\" (comma list), \"0..9\" (int\n"
    "                   range) or a JSON list '[\"a\", \",\", \"?\"]' (strings for tokens_str,\n"
    "                   integers for tokens_int, numbers for tokens_float, true/false for\n"
    "                   tokens_bool); a V starting with '[' is always a JSON list\n"
    "  --max-len N      longest input (default 8)\n"
    "  --range LO..HI   numeric tokens lie in [LO, HI]\n"
    "  --tol T          the error bound wanted at a real-valued output (default 1e-6, with\n"
    "                   --mlp gated 1e-9): the\n"
    "                   compiler proves |model - program| <= error_bound + error_rel |value|\n"
    "                   (--stats) with error_bound + error_rel <= T where it can, choosing how\n"
    "                   finely to approximate each function of real values\n"
    "  --margin M       where a comparison of real values jumps, an input whose value lies within\n"
    "                   M of the threshold is refused (\"within the margin\") rather than guessed\n"
    "                   (default 1e-6); T and M are positive finite numbers\n"
    "  --mlp relu|gated MLPs of ReLU units (default), or gated (GLU-style) MLPs, whose products\n"
    "                   of two real values are exact\n"
    "  --max-mlp N      hidden units one layer's MLP may have (default 524288)\n"
    "  --max-bytes B    bytes the weights may take in memory, dense float64 (default 2^31);\n"
    "                   over either limit the compile stops at the s-op responsible\n"
    "  --stats          print layers, heads per layer, residual width, MLP hidden size per\n"
    "                   layer, parameter counts, compile time, the size of the file written\n"
    "                   (file_bytes), the error bound of a real-valued output (error_bound and\n"
    "                   its relative part error_rel; 0: the output is exact), the number of\n"
    "                   margin checks (margin_checks) and\n"
    "                   what the self-check checked (--json: one JSON object)\n"
    "  --no-selfcheck   write the model without checking it first (see below)\n"
    "  --fut-target T.bin  also (or, without -o, only) write the model as a raspfut-target\n"
    "                   (docs/fut.md, \"From a compiled RASP program\"): needs a program that\n"
    "                   compiles to attention layers only (exit 2 naming the layer with an MLP)\n"
    "  --beta B         inverse temperature of the exported softmax heads (default 80: keys the\n"
    "                   hard attention does not select get relative weight <= exp(-B/2))\n"
    "  --fut-embed INPUT  print the model's embedding X of INPUT (BOS row first) in the row\n"
    "                   syntax of `raspfut run`\n"
    "\n"
    "Other:\n"
    "  -D NAME=VALUE    the program's first top-level assignment to NAME (exit 2 if it has none)\n"
    "                   takes VALUE instead of what it says; later ones run as written. VALUE is\n"
    "                   a literal: 3, -2.5, \"abc\", True, [1, 2], {\"a\": 1} (quoted for the shell).\n"
    "                   Repeatable (the last of a NAME counts); also -DNAME=VALUE. A model stores\n"
    "                   the program with VALUE written in\n"
    "  --output NAME    the top-level s-op variable to evaluate or compile\n"
    "  --dump-ir        print the IR graph of the elaborated program\n"
    "  --dump-plan      with the compilation flags: print how each s-op is computed (value set\n"
    "                   size, encoding, layer); writes the model only with -o\n"
    "  --dump-ast       print the parsed program\n"
    "  --help, --version\n"
    "\n"
    "An option with a value is written --opt VALUE or --opt=VALUE.\n"
    "\n"
    "Self-check: before writing anything, raspcc runs the compiled model in memory against the\n"
    "reference evaluator on the program stored in it (as `rasprun --check` would): every input\n"
    "of the lengths 1..L whose inputs number at most 2000 in all (for at most 0.5 s), then 500\n"
    "random inputs (seed 1) of lengths up to --max-len, stopping after 1 s of wall-clock time in\n"
    "all and at the first disagreement. --stats says what it checked. Comparison is exact and typed (1, 1.0 and True differ). A disagreement is an\n"
    "internal compiler error: raspcc prints the input and both answers, writes no file and exits\n"
    "with status 3. A real-valued output agrees within the model's bound (--stats gives\n"
    "the largest error seen); an input the model refuses within the margin of a comparison of\n"
    "real values is counted (--stats: inside the margin), not a disagreement.\n"
    "\n"
    "Exit status: 0 success; 1 some input failed to evaluate (--eval); 2 bad usage, a bad program\n"
    "or a failed compilation; 3 internal compiler error (the self-check found the compiled model\n"
    "disagreeing with the program).\n";

typedef struct Options {
    const char *program;
    const char *output;
    bool eval, json, stats, dump_ir, dump_ast, dump_plan, no_selfcheck;
    const char *inputs_file;
    const char **inputs; /* positional inputs */
    size_t n_inputs;
    const char *model_path;
    const char *vocab, *max_len, *range, *max_mlp, *max_bytes;
    const char *fut_target, *beta, *fut_embed;
    const char *tol, *margin, *mlp;
    ElabOverride *defines; /* -D NAME=VALUE, in order; names malloc'ed */
    size_t n_defines;
} Options;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "raspcc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s(raspcc --help for details)\n", usage_text);
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

/* "NAME=VALUE" of -D into *d (the name malloc'ed); false when it is not one. */
static bool parse_define(const char *s, ElabOverride *d) {
    const char *eq = strchr(s, '=');
    size_t n = eq ? (size_t)(eq - s) : 0;
    if (n == 0 || !eq[1] || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return false;
    char *name = strndup(s, n);
    if (!name) return false;
    *d = (ElabOverride){name, eq + 1};
    return true;
}

/* Returns -1 when the options are complete, else the exit status to stop with. */
static int parse_args(int argc, char **argv, Options *o) {
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    o->defines = calloc((size_t)argc, sizeof *o->defines);
    if (!o->inputs || !o->defines) return 2;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == 'D') { /* -D NAME=VALUE or -DNAME=VALUE, as a C compiler takes it */
            const char *def = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL;
            if (!def) return usage_error("%s", "-D needs NAME=VALUE");
            if (!parse_define(def, &o->defines[o->n_defines]))
                return usage_error("-D needs NAME=VALUE (NAME a variable of the program), got '%s'", def);
            o->n_defines++;
            continue;
        }
        const char *inline_value = split_inline(a, name, sizeof name);
        if (inline_value) a = name;
        const char **value = NULL;
        if (strcmp(a, "--output") == 0) value = &o->output;
        else if (strcmp(a, "--inputs") == 0) value = &o->inputs_file;
        else if (strcmp(a, "-o") == 0) value = &o->model_path;
        else if (strcmp(a, "--vocab") == 0) value = &o->vocab;
        else if (strcmp(a, "--max-len") == 0) value = &o->max_len;
        else if (strcmp(a, "--range") == 0) value = &o->range;
        else if (strcmp(a, "--max-mlp") == 0) value = &o->max_mlp;
        else if (strcmp(a, "--max-bytes") == 0) value = &o->max_bytes;
        else if (strcmp(a, "--fut-target") == 0) value = &o->fut_target;
        else if (strcmp(a, "--beta") == 0) value = &o->beta;
        else if (strcmp(a, "--fut-embed") == 0) value = &o->fut_embed;
        else if (strcmp(a, "--tol") == 0) value = &o->tol;
        else if (strcmp(a, "--margin") == 0) value = &o->margin;
        else if (strcmp(a, "--mlp") == 0) value = &o->mlp;
        if (value) {
            if (inline_value) *value = inline_value;
            else if (i + 1 >= argc) return usage_error("option '%s' needs a value", a);
            else *value = argv[++i];
            continue;
        }
        if (inline_value) {
            bool known = !strcmp(a, "--help") || !strcmp(a, "--version") || !strcmp(a, "--eval") ||
                         !strcmp(a, "--json") || !strcmp(a, "--stats") || !strcmp(a, "--dump-ir") ||
                         !strcmp(a, "--dump-ast") || !strcmp(a, "--dump-plan") || !strcmp(a, "--no-selfcheck");
            return usage_error(known ? "option '%s' takes no value" : "unknown option '%s'", a);
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("%s%s", usage_text, help_text);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("raspcc %s\n", RASPCC_VERSION);
            return 0;
        } else if (strcmp(a, "--eval") == 0) o->eval = true;
        else if (strcmp(a, "--json") == 0) o->json = true;
        else if (strcmp(a, "--stats") == 0) o->stats = true;
        else if (strcmp(a, "--dump-ir") == 0) o->dump_ir = true;
        else if (strcmp(a, "--dump-ast") == 0) o->dump_ast = true;
        else if (strcmp(a, "--dump-plan") == 0) o->dump_plan = true;
        else if (strcmp(a, "--no-selfcheck") == 0) o->no_selfcheck = true;
        else if (a[0] == '-' && a[1] == '-') return usage_error("unknown option '%s'", a);
        else if (!o->program) o->program = a;
        else o->inputs[o->n_inputs++] = a;
    }
    if (!o->program) return usage_error("%s", "no program given");
    int modes = o->eval + (o->model_path || o->fut_target || o->dump_plan) + (o->dump_ir || o->dump_ast);
    if (modes == 0) return usage_error("%s", "nothing to do: give --eval, -o MODEL, --dump-ir or --dump-ast");
    if ((o->beta || o->fut_embed) && !o->fut_target) return usage_error("%s", "--beta and --fut-embed go with --fut-target");
    if (modes > 1) return usage_error("%s", "--eval, -o and --dump-* are separate modes");
    if (!o->eval && (o->inputs_file || o->n_inputs))
        return usage_error("%s", "inputs are only for --eval");
    if (o->inputs_file && o->n_inputs) return usage_error("%s", "give --inputs FILE or inputs, not both");
    if (o->eval && (o->vocab || o->max_len || o->range || o->tol || o->margin || o->mlp || o->max_mlp ||
                    o->max_bytes || o->stats || o->fut_target || o->no_selfcheck))
        return usage_error("%s", "--vocab, --max-len, --range, --tol, --margin, --mlp, --max-mlp, --max-bytes, "
                           "--stats, --no-selfcheck and --fut-target are for compilation (-o)");
    if (o->dump_ast && o->n_defines)
        return usage_error("%s", "-D goes with --eval, -o or --dump-ir (--dump-ast only parses)");
    if (o->json && !o->eval && !o->stats) return usage_error("%s", "--json goes with --eval or --stats");
    return -1;
}

/* Prints the program's AST (parse only). */
static int dump_ast(Arena *arena, const char *path) {
    const char *why = "";
    SourceFile *file = source_read_file(arena, path, &why);
    if (!file) {
        fprintf(stderr, "raspcc: cannot read %s: %s\n", path, why);
        return 2;
    }
    DiagList diags;
    diag_init(&diags, arena);
    AstProgram prog;
    bool ok = parse_program(arena, file, &prog, &diags);
    diag_render_all(stderr, &diags);
    if (!ok) return 2;
    ast_print_program(stdout, &prog);
    return 0;
}

/* The s-op to evaluate or compile; NULL after printing why. */
static IrNode *choose_output(const ElabResult *r, const char *name, const char **chosen) {
    IrNode *n = name ? elab_find_output(r, name) : r->last_sop;
    *chosen = name ? name : r->last_name;
    if (n) return n;
    if (name) fprintf(stderr, "raspcc: '%s' is not a top-level s-op of the program", name);
    else fprintf(stderr, "raspcc: the program defines no s-op to output");
    if (r->count == 0) {
        fprintf(stderr, " (it has none)\n");
        return NULL;
    }
    fprintf(stderr, "; available outputs:");
    for (size_t i = 0; i < r->count; i++) fprintf(stderr, " %s", r->sops[i].name);
    fprintf(stderr, "\n");
    return NULL;
}

static void print_json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

static void print_result(const Value *v, size_t n, bool json) {
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", stdout);
        if (json) value_print_json(stdout, v[i]);
        else value_print_repl(stdout, v[i]);
    }
    puts("]");
}

static void print_failure(const char *msg, bool json) {
    if (json) {
        fputs("{\"error\": ", stdout);
        print_json_string(stdout, msg);
        puts("}");
    } else {
        printf("error: %s\n", msg);
    }
}

/* Evaluates one input line; false when it failed (the failure is printed in its place). */
static bool eval_one(const IrGraph *g, const IrNode *out, const char *text, bool json) {
    Arena scratch;
    arena_init(&scratch);
    char msg[1024];
    Value *atoms, *result;
    size_t n;
    IrEvalError err;
    bool ok = input_parse(&scratch, text, &atoms, &n, msg, sizeof msg);
    if (!ok) {
        print_failure(msg, json);
    } else if (!ir_eval(g, out, atoms, n, &scratch, &result, &err)) {
        char where[512];
        srcloc_format(err.loc, where, sizeof where);
        snprintf(msg, sizeof msg, "%s: %s", where, err.message);
        print_failure(msg, json);
        ok = false;
    } else {
        print_result(result, n, json);
    }
    arena_free(&scratch);
    fflush(stdout);
    return ok;
}

/* Runs every input from the file (or stdin for "-") or the command line. */
static int eval_mode(const IrGraph *g, const IrNode *out, const Options *o) {
    bool all_ok = true;
    if (!o->inputs_file) {
        if (o->n_inputs == 0) return usage_error("%s", "--eval needs inputs: --inputs FILE or INPUT ...");
        for (size_t i = 0; i < o->n_inputs; i++) all_ok &= eval_one(g, out, o->inputs[i], o->json);
        return all_ok ? 0 : 1;
    }
    FILE *f = strcmp(o->inputs_file, "-") == 0 ? stdin : fopen(o->inputs_file, "r");
    if (!f) {
        fprintf(stderr, "raspcc: cannot open inputs file %s\n", o->inputs_file);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strspn(line, " \t\r\n") == strlen(line)) continue;
        all_ok &= eval_one(g, out, line, o->json);
    }
    free(line);
    if (f != stdin) fclose(f);
    return all_ok ? 0 : 1;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Prints a per-layer list: "[a, b, c]". */
static void print_layer_list(const Model *m, bool heads) {
    putchar('[');
    for (size_t l = 0; l < m->n_layers; l++)
        printf("%s%zu", l ? ", " : "", heads ? m->layers[l].n_heads : m->layers[l].mlp.w1.cols);
    putchar(']');
}

/* The self-check before a model is written (verify/verify.h): every input of the lengths whose
 * inputs number at most SELFCHECK_EXHAUSTIVE in all (within the first half of the time budget),
 * then SELFCHECK_RANDOM seeded random inputs up to the maximum length, within SELFCHECK_SECONDS of
 * wall-clock time in all, stopping at the first mismatch. --help states these numbers. */
enum { SELFCHECK_EXHAUSTIVE = 2000, SELFCHECK_RANDOM = 500, SELFCHECK_SEED = 1 };
#define SELFCHECK_SECONDS 1.0

typedef struct Selfcheck {
    bool ran;
    VerifySampleResult res;
} Selfcheck;

/* A double in JSON: the shortest %g form that reads back as the same double. */
static void print_json_double(double v) {
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, stdout);
}

/* How many margin checks the model makes (one per checked comparison of real values). */
static size_t margin_checks(const Model *m) {
    size_t n = 0;
    for (size_t i = 0; i < m->n_checks; i++) n += m->checks[i].kind == MODEL_CHECK_MARGIN;
    return n;
}

/* The selfcheck line of --stats: "1234 inputs (all up to length 3, 500 random up to 16), 0
 * mismatches, 0.4 s", with ", J inside the margin" for a model with margin checks (or J > 0) and
 * ", largest error E (bound B)" for a real-valued output, as rasprun --verify says them. */
static void print_selfcheck_text(const Model *m, const Selfcheck *sc) {
    const VerifySampleResult *r = &sc->res;
    if (!sc->ran) {
        puts("skipped");
        return;
    }
    printf("%zu input%s (", r->inputs, r->inputs == 1 ? "" : "s");
    if (r->exhaustive_len) printf("all up to length %zu, ", r->exhaustive_len);
    printf("%zu random up to %zu", r->random, r->random_max_len);
    if (r->timed_out) printf("; stopped at the %g s budget", SELFCHECK_SECONDS);
    else if (r->exhaustive_cut) printf("; all-inputs phase cut at %g s", SELFCHECK_SECONDS / 2);
    printf("), %zu mismatch%s, ", r->mismatches, r->mismatches == 1 ? "" : "es");
    if (r->margins || verify_model_has_margins(m)) printf("%zu inside the margin, ", r->margins);
    double bound = verify_model_bound(m);
    if (bound > 0) printf("largest error %.2g (bound %g), ", r->max_error, bound);
    printf("%.2f s\n", r->seconds);
}

static void print_selfcheck_json(const Selfcheck *sc) {
    const VerifySampleResult *r = &sc->res;
    if (!sc->ran) {
        fputs("null", stdout);
        return;
    }
    printf("{\"inputs\": %zu, \"exhaustive_len\": %zu, \"random\": %zu, \"random_max_len\": %zu, \"mismatches\": %zu, "
           "\"errors_agreed\": %zu, \"inside_margin\": %zu, \"max_error\": ",
           r->inputs, r->exhaustive_len, r->random, r->random_max_len, r->mismatches, r->errors_agreed, r->margins);
    print_json_double(r->max_error);
    printf(", \"exhaustive_cut\": %s, \"timed_out\": %s, \"seconds\": %.3f}", r->exhaustive_cut ? "true" : "false",
           r->timed_out ? "true" : "false", r->seconds);
}

/* file_bytes < 0: no model file was written. error_bound is verify_model_bound: 0 for an exact
 * output (every output but a real-valued one); both formats always show it and margin_checks. */
static void print_stats(const Model *m, double compile_ms, long long file_bytes, const Selfcheck *sc, bool json) {
    if (json) {
        printf("{\"layers\": %zu, \"heads\": ", m->n_layers);
        print_layer_list(m, true);
        printf(", \"residual_width\": %zu, \"mlp_hidden\": ", m->d_model);
        print_layer_list(m, false);
        printf(", \"params\": %zu, \"nonzero_params\": %zu, \"compile_ms\": %.3f, \"file_bytes\": ",
               model_param_count(m), model_nonzero_count(m), compile_ms);
        if (file_bytes >= 0) printf("%lld", file_bytes);
        else fputs("null", stdout);
        fputs(", \"error_bound\": ", stdout);
        print_json_double(verify_model_bound(m));
        fputs(", \"error_rel\": ", stdout);
        print_json_double(verify_model_rel(m));
        printf(", \"margin_checks\": %zu, \"selfcheck\": ", margin_checks(m));
        print_selfcheck_json(sc);
        puts("}");
        return;
    }
    printf("layers:          %zu\nheads:           ", m->n_layers);
    print_layer_list(m, true);
    printf("\nresidual_width:  %zu\nmlp_hidden:      ", m->d_model);
    print_layer_list(m, false);
    printf("\nparams:          %zu\nnonzero_params:  %zu\ncompile_ms:      %.3f\n",
           model_param_count(m), model_nonzero_count(m), compile_ms);
    if (file_bytes >= 0) printf("file_bytes:      %lld\n", file_bytes);
    printf("error_bound:     %g\nerror_rel:       %g\nmargin_checks:   %zu\nselfcheck:       ", verify_model_bound(m),
           verify_model_rel(m), margin_checks(m));
    print_selfcheck_text(m, sc);
}

/* Parses "LO..HI" into two numbers (either may be negative: "-3..3"). */
static bool parse_range(const char *s, double *lo, double *hi) {
    const char *dots = strstr(s + (*s == '-'), "..");
    if (!dots || dots == s) return false;
    char buf[64], *end;
    size_t n = (size_t)(dots - s);
    if (n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *lo = strtod(buf, &end);
    if (*end) return false;
    const char *h = dots + 2;
    *hi = strtod(h, &end);
    return end != h && *end == '\0' && *lo <= *hi;
}

/* --fut-target: the compiled model as a raspfut-target file, and --fut-embed's rows. */
static bool export_fut(const Model *m, const Options *o) {
    double beta = FUT_FROM_MODEL_BETA;
    char *end, err[512];
    if (o->beta) {
        beta = strtod(o->beta, &end);
        if (*end || end == o->beta) {
            fprintf(stderr, "raspcc: --beta needs a number, got '%s'\n", o->beta);
            return false;
        }
    }
    Arena a;
    arena_init(&a);
    FutTarget t;
    uint8_t *buf = NULL;
    size_t len = 0;
    bool ok = fut_target_from_model(&a, m, beta, &t, err, sizeof err) &&
              fut_target_serialize(&t, &buf, &len, err, sizeof err) && fut_write_file(o->fut_target, buf, len, err, sizeof err);
    free(buf);
    if (!ok) fprintf(stderr, "raspcc: cannot export %s as a FUT target: %s\n", o->fut_target, err);
    if (ok && o->fut_embed) {
        Value *atoms;
        size_t n;
        ok = input_parse(&a, o->fut_embed, &atoms, &n, err, sizeof err);
        size_t *ids = ok ? ARENA_ARRAY(&a, size_t, n ? n : 1) : NULL;
        ok = ok && fut_model_token_ids(m, atoms, n, ids, err, sizeof err);
        if (ok) fut_print_rows(stdout, fut_model_embedding(&a, m, ids, n));
        else fprintf(stderr, "raspcc: --fut-embed: %s\n", err);
    }
    arena_free(&a);
    return ok;
}

static const char *dir_of(Arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    return slash == path ? "/" : arena_strndup(a, path, (size_t)(slash - path));
}

/* Compares the in-memory model with a fresh elaboration of the program stored in it (exactly as
 * rasprun --check does, `load` relative to the program's directory). Returns 0 when they agree
 * (or the model cannot be run here: a warning), 3 after reporting an internal compiler error. */
static int selfcheck(const Model *m, const char *base_dir, Selfcheck *sc) {
    char err[1024];
    Workspace ws;
    if (!workspace_init(&ws, m, err, sizeof err)) {
        fprintf(stderr, "raspcc: warning: self-check skipped: %s\n", err);
        return 0;
    }
    int rc = 0;
    VerifyReference ref;
    if (!verify_reference_load(&ref, m, base_dir, stderr, err, sizeof err)) {
        fprintf(stderr, "raspcc: internal compiler error: %s\n", err);
        rc = 3;
    } else {
        VerifyPair pair = {.model = m, .ws = &ws, .ref = &ref, .bound = verify_model_bound(m)};
        VerifySampleOptions so = {0};
        so.exhaustive_len = m->max_len;
        so.exhaustive_limit = SELFCHECK_EXHAUSTIVE;
        so.random = SELFCHECK_RANDOM;
        so.random_max_len = m->max_len;
        so.seed = SELFCHECK_SEED;
        so.max_seconds = SELFCHECK_SECONDS;
        so.exhaustive_seconds = SELFCHECK_SECONDS / 2; /* the rest for long random inputs */
        sc->ran = true;
        if (!verify_sample(&pair, &so, &sc->res)) {
            fprintf(stderr, "raspcc: internal compiler error: the compiled model disagrees with the program on %s\n",
                    sc->res.first_mismatch ? sc->res.first_mismatch : "an input (no memory for the report)");
            rc = 3;
        }
        verify_reference_free(&ref);
    }
    if (rc)
        fprintf(stderr, "raspcc: while compiling %s (output %s%s%s); no file written (--no-selfcheck writes "
                "it unchecked)\n", m->program_name, m->output_name, *m->compile_flags ? ", " : "", m->compile_flags);
    workspace_free(&ws);
    return rc;
}

/* A flag value as it would be typed in a shell: bare when it is plain, else single-quoted. */
static const char *shell_word(Arena *a, const char *s) {
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,_-+=") == strlen(s)) return s;
    size_t n = 2;
    for (const char *c = s; *c; c++) n += *c == '\'' ? 4 : 1;
    char *out = arena_alloc(a, n + 1), *o = out;
    *o++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') { memcpy(o, "'\\''", 4); o += 4; }
        else *o++ = *c;
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

/* The flags that shaped the model, as a shell would take them (Model.compile_flags, shown by
 * rasprun --info): "--vocab abc --max-len 8 -D N=3". */
static const char *compile_flags(Arena *a, const Options *o) {
    static const char *const flag[] = {"--vocab", "--max-len", "--range", "--tol", "--margin", "--mlp"};
    const char *value[] = {o->vocab, o->max_len, o->range, o->tol, o->margin, o->mlp};
    const char *s = "";
    for (size_t k = 0; k < sizeof flag / sizeof *flag; k++)
        if (value[k]) s = arena_printf(a, "%s%s%s %s", s, *s ? " " : "", flag[k], shell_word(a, value[k]));
    for (size_t k = 0; k < o->n_defines; k++) {
        const char *def = arena_printf(a, "%s=%s", o->defines[k].name, o->defines[k].value);
        s = arena_printf(a, "%s%s-D %s", s, *s ? " " : "", shell_word(a, def));
    }
    return s;
}

/* --tol, --margin and --mlp into co; the exit status of a usage error, or -1. */
static int real_options(const Options *o, CodegenOptions *co) {
    const char *given[2] = {o->tol, o->margin};
    double *out[2] = {&co->real_tol, &co->real_margin};
    for (int k = 0; k < 2; k++) {
        if (!given[k]) continue;
        char *end;
        double v = strtod(given[k], &end);
        if (*end || end == given[k] || !isfinite(v) || v <= 0)
            return usage_error(k ? "--margin needs a positive finite number, got '%s'"
                                 : "--tol needs a positive finite number, got '%s'", given[k]);
        *out[k] = v;
    }
    if (o->mlp && strcmp(o->mlp, "relu") != 0 && strcmp(o->mlp, "gated") != 0)
        return usage_error("--mlp needs relu or gated, got '%s'", o->mlp);
    co->gated_mlp = o->mlp && strcmp(o->mlp, "gated") == 0;
    return -1;
}

/* program_text: the program as the model stores it (ElabResult.source: -D values written in). */
static int compile_mode(const IrGraph *g, const IrNode *out, const char *out_name, const SourceFile *src,
                        const char *program_text, const Options *o, Arena *arena) {
    CodegenOptions co = {0};
    co.vocab_spec = o->vocab;
    if (o->max_len) {
        char *end;
        long v = strtol(o->max_len, &end, 10);
        if (*end || end == o->max_len || v <= 0 || v > 100000)
            return usage_error("--max-len needs a positive integer, got '%s'", o->max_len);
        co.max_len = (size_t)v;
    }
    const char *limits[2] = {o->max_mlp, o->max_bytes};
    size_t *limit_out[2] = {&co.max_mlp, &co.max_bytes};
    for (int k = 0; k < 2; k++) {
        if (!limits[k]) continue;
        char *end;
        unsigned long long v = strtoull(limits[k], &end, 10);
        if (*end || end == limits[k] || *limits[k] == '-' || v == 0)
            return usage_error("%s needs a positive integer", k ? "--max-bytes" : "--max-mlp");
        *limit_out[k] = (size_t)v;
    }
    if (o->range) {
        if (!parse_range(o->range, &co.range_lo, &co.range_hi))
            return usage_error("--range needs LO..HI with LO <= HI, got '%s'", o->range);
        co.have_range = true;
    }
    int bad = real_options(o, &co);
    if (bad >= 0) return bad;
    if (o->dump_plan) co.plan_out = stdout;
    co.program_source = program_text;
    co.program_name = src->name;
    co.compile_flags = compile_flags(arena, o);
    DiagList diags;
    diag_init(&diags, arena);
    Model m;
    model_init(&m);
    double t0 = now_ms();
    bool ok = codegen_compile(g, out, out_name, &co, &m, &diags);
    double ms = now_ms() - t0;
    diag_render_all(stderr, &diags);
    int rc = ok ? 0 : 2;
    Selfcheck sc = {0};
    if (rc == 0 && !o->no_selfcheck) rc = selfcheck(&m, dir_of(arena, src->name), &sc);
    char err[512];
    long long file_bytes = -1;
    if (rc == 0 && o->model_path) {
        struct stat st;
        if (!model_write(&m, o->model_path, err, sizeof err)) {
            fprintf(stderr, "raspcc: %s\n", err);
            rc = 2;
        } else if (stat(o->model_path, &st) == 0) {
            file_bytes = (long long)st.st_size;
        }
    }
    if (rc == 0 && o->fut_target) { /* the attention computation, numbers only (no kind block) */
        Model f;
        model_init(&f);
        co.numbers_only = true;
        DiagList fd;
        diag_init(&fd, arena);
        bool fok = codegen_compile(g, out, out_name, &co, &f, &fd);
        diag_render_all(stderr, &fd);
        if (!fok || !export_fut(&f, o)) rc = 2;
        model_free(&f);
    }
    if (rc == 0 && o->stats) print_stats(&m, ms, file_bytes, &sc, o->json);
    verify_sample_result_free(&sc.res);
    model_free(&m);
    return rc;
}

static int run(const Options *o, Arena *arena) {
    if (o->dump_ast) return dump_ast(arena, o->program);
    const char *why = "";
    SourceFile *src = source_read_file(arena, o->program, &why);
    if (!src) {
        fprintf(stderr, "raspcc: cannot read %s: %s\n", o->program, why);
        return 2;
    }
    IrGraph g;
    ir_graph_init(&g, arena);
    DiagList diags;
    diag_init(&diags, arena);
    ElabOptions eo = {0};
    eo.base_dir = dir_of(arena, o->program);
    eo.overrides = o->defines;
    eo.n_overrides = o->n_defines;
    ElabResult r;
    bool ok = rasp_load_program(&g, NULL, src->text, src->name, &eo, &r, &diags);
    diag_render_all(stderr, &diags);
    if (!ok) return 2;
    if (o->dump_ir) {
        ir_dump(stdout, &g);
        return 0;
    }
    const char *name;
    IrNode *out = choose_output(&r, o->output, &name);
    if (!out) return 2;
    return o->eval ? eval_mode(&g, out, o) : compile_mode(&g, out, name, src, r.source, o, arena);
}

int main(int argc, char **argv) {
    Options o = {0};
    int status = parse_args(argc, argv, &o);
    if (status < 0) {
        Arena arena;
        arena_init(&arena);
        status = run(&o, &arena);
        arena_free(&arena);
    }
    free(o.inputs);
    for (size_t i = 0; i < o.n_defines; i++) free((char *)o.defines[i].name);
    free(o.defines);
    return status;
}
