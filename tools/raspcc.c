/* raspcc: the command-line driver. Loads and elaborates a RASP program, then either evaluates
 * an output s-op on inputs with the reference evaluator (--eval), compiles it into a model file
 * (-o; driver/compile.h does the work), draws it (--dot, viz/dot.h), or compiles the programs of
 * a manifest (--batch, driver/batch.h). Every decision belongs to a stage; this file only parses
 * flags and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/batch.h"
#include "driver/compile.h"
#include "fut/from_model.h"
#include "fut/io.h"
#include "ir/eval.h"
#include "ir/input.h"
#include "parser/parser.h"
#include "support/term.h"
#include "viz/dot.h"

#define RASPCC_VERSION "0.1"

static const char usage_text[] =
    "usage:\n"
    "  raspcc PROGRAM.rasp --eval [-D NAME=VALUE ...] [--output NAME] [--json] [--inputs FILE | INPUT ...]\n"
    "  raspcc PROGRAM.rasp -o MODEL.bin [-D NAME=VALUE ...] [--output NAME] [--vocab V] [--max-len N]\n"
    "                      [--range LO..HI] [--tol T] [--margin M] [--mlp relu|gated]\n"
    "                      [--stats [--json]] [--no-selfcheck] [--error-flag] [--dot [FILE]]\n"
    "                      [--fut-target T.bin [--beta B] [--fut-embed INPUT]]\n"
    "  raspcc PROGRAM.rasp --dot [FILE] --vocab V ...     (the s-op graph, without -o: no model file)\n"
    "  raspcc --batch MANIFEST.jsonl [--vocab V] [--max-len N] [-D NAME=VALUE] ...\n"
    "  raspcc PROGRAM.rasp --dump-ir [-D NAME=VALUE ...] | --dump-ast\n"
    "  raspcc --help | --version\n";

static const char help_text[] =
    "\n"
    "Compiles RASP programs (Weiss et al. 2021) into transformer weights.\n"
    "\n"
    "The program is elaborated first (the prelude, then the file; PROGRAM - reads standard input);\n"
    "errors are reported as FILE:LINE:COL with the source line. The output s-op is --output NAME,\n"
    "or by default the last s-op the program assigns at top level.\n"
    "\n"
    "Evaluation (reference evaluator):\n"
    "  --eval           evaluate the output on each input and print one line per input\n"
    "  --json           print each result as a JSON array, or {\"error\": \"...\"} when that input\n"
    "                   failed (the message names FILE:LINE:COL of the failing operation)\n"
    "  --inputs FILE    read inputs from FILE, one a line (empty lines skipped; - = stdin)\n"
    "  INPUT            an input on the command line: \"abc\" (characters), [1, -2, 3.5, True]\n"
    "                   (atoms), or a bare word abc (its characters); after --, an INPUT may\n"
    "                   start with '-'\n"
    "  Without --json, results print as the REPL does: [o, l, l, e, h], bools as T/F, floats\n"
    "  rounded to 3 places.\n"
    "\n"
    "Compilation:\n"
    "  -o MODEL.bin     write the compiled transformer (-o - writes it to standard output, which\n"
    "                   must then be a file or a pipe: raspcc P.rasp -o - | rasprun - INPUT)\n"
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
    "                   finely to approximate each function of real values; where it cannot, it\n"
    "                   states the least bound it proves and warns\n"
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
    "                   what the self-check checked (--json: one JSON object); without -o,\n"
    "                   compile and check only\n"
    "  --no-selfcheck   write the model without checking it first (see below)\n"
    "  --error-flag     append layers whose weights compute a residual dim 'err', 0 at a position\n"
    "                   where every check of the runtime passes and > 0 (>= 1 but at a check's\n"
    "                   boundary) where one fails, so that a framework running the weights alone\n"
    "                   sees what rasprun raises (docs/model-format.md, \"The error flag\")\n"
    "  --dot [FILE]     write the program's s-op graph in Graphviz dot to FILE (standard output\n"
    "                   without FILE, or with -): each s-op with its operation and where the\n"
    "                   compiled model computes it (embedding, layer L head H, layer L MLP, or\n"
    "                   inside its readers when it has no residual dims of its own), grouped by\n"
    "                   layer; render with `dot -Tsvg`. FILE follows --dot only after PROGRAM\n"
    "                   (or write --dot=FILE)\n"
    "  --fut-target T.bin  also (or, without -o, only) write the model as a raspfut-target\n"
    "                   (docs/fut.md, \"From a compiled RASP program\"): needs a program that\n"
    "                   compiles to attention layers only (exit 2 naming the layer with an MLP)\n"
    "  --beta B         inverse temperature of the exported softmax heads (default 80: keys the\n"
    "                   hard attention does not select get relative weight <= exp(-B/2))\n"
    "  --fut-embed INPUT  print the model's embedding X of INPUT (BOS row first) in the row\n"
    "                   syntax of `raspfut run`\n"
    "  At most one output may go to standard output when one of them is binary or a graph\n"
    "  (-o -, --fut-target -, --dot to standard output).\n"
    "\n"
    "Many programs:\n"
    "  --batch MANIFEST compile every program of MANIFEST (JSON Lines, - = stdin) in one process\n"
    "                   and print one JSON result line for each, in order. A manifest line is an\n"
    "                   object whose keys are the options above without their dashes: \"program\"\n"
    "                   (a file) or \"source\" (its text, named \"name\"), \"model\" (the file to\n"
    "                   write; absent: none), \"output\", \"vocab\" (a string or a JSON list),\n"
    "                   \"max-len\", \"range\", \"tol\", \"margin\", \"mlp\", \"max-mlp\", \"max-bytes\"\n"
    "                   (strings or numbers), \"defines\" ({\"N\": 3} for -D N=3), \"no-selfcheck\", \"error-flag\"\n"
    "                   (true/false) and \"id\" (echoed). Compile flags given beside --batch are\n"
    "                   defaults for every line; paths are relative to the current directory.\n"
    "                   A result: {\"line\", \"id\", \"program\", \"output\",\n"
    "                   \"model\" (the file written or null), \"status\" (raspcc's exit status for\n"
    "                   that program alone), \"stats\" (as --stats --json, or null), \"messages\"\n"
    "                   (every diagnostic: severity, message, file, line, col)}. Exit 0 when\n"
    "                   every line compiled, 1 when some did not, 2 when the manifest cannot be\n"
    "                   read\n"
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
    "  -q, --quiet      print only errors on stderr: no warnings, notes or progress\n"
    "  -v, --verbose    say on stderr what each step did and how long it took\n"
    "  --help, --version\n"
    "\n"
    "An option with a value is written --opt VALUE or --opt=VALUE; -- ends the options.\n"
    "On a terminal, raspcc shows progress on stderr (a long compile, the self-check, --batch) and\n"
    "colours its diagnostics; in a pipe or a file it does neither, and NO_COLOR=1 turns colour off.\n"
    "\n"
    "Self-check: before writing anything, raspcc runs the compiled model in memory against the\n"
    "reference evaluator on the program stored in it (as `rasprun --check` would): for each of\n"
    "the first 16 tokens of the vocabulary, the input of --max-len copies of it; every input\n"
    "of the lengths 1..L whose inputs number at most 2000 in all (for at most 0.5 s), then 500\n"
    "random inputs (seed 1) of lengths up to --max-len, stopping after 1 s of processor time in\n"
    "all and at the first disagreement. --stats says what it checked. Comparison is exact and\n"
    "typed (1, 1.0 and True differ). A disagreement is an internal compiler error: raspcc prints\n"
    "the input and both answers, writes no file and exits with status 3. A real-valued output\n"
    "agrees within the model's bound (--stats gives the largest error seen); an input the model\n"
    "refuses within the margin of a comparison of real values is counted (--stats: inside the\n"
    "margin), not a disagreement.\n"
    "\n"
    "Exit status: 0 success; 1 some input failed to evaluate (--eval) or some program of a\n"
    "--batch failed; 2 bad usage, a bad program or a failed compilation; 3 internal compiler\n"
    "error (the self-check found the compiled model disagreeing with the program).\n";

typedef struct Options {
    const char *program;
    bool eval, json, stats, dump_ir, dump_ast, dump_plan, no_selfcheck, quiet, verbose;
    const char *inputs_file;
    const char **inputs; /* positional inputs */
    size_t n_inputs;
    const char *dot;     /* --dot: the file, "-" for standard output; NULL: not asked */
    const char *batch;   /* --batch MANIFEST */
    const char *fut_target, *beta, *fut_embed;
    CompileRequest req;  /* the program, output, model path and compile flags */
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

/* The option's value slot, or NULL when `a` takes no value. */
static const char **value_slot(Options *o, const char *a) {
    CompileRequest *r = &o->req;
    static const char *const names[] = {"--output", "--inputs", "-o", "--vocab", "--max-len", "--range", "--max-mlp",
                                        "--max-bytes", "--fut-target", "--beta", "--fut-embed", "--tol", "--margin",
                                        "--mlp", "--batch"};
    const char **slots[] = {&r->output, &o->inputs_file, &r->model_path, &r->vocab, &r->max_len, &r->range,
                            &r->max_mlp, &r->max_bytes, &o->fut_target, &o->beta, &o->fut_embed, &r->tol,
                            &r->margin, &r->mlp, &o->batch};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(a, names[k])) return slots[k];
    return NULL;
}

/* The flag's bool, or NULL when `a` is not a flag. */
static bool *flag_slot(Options *o, const char *a) {
    static const char *const names[] = {"--eval", "--json", "--stats", "--dump-ir", "--dump-ast", "--dump-plan",
                                        "--no-selfcheck", "--error-flag", "-q", "--quiet", "-v", "--verbose"};
    bool *slots[] = {&o->eval, &o->json, &o->stats, &o->dump_ir, &o->dump_ast, &o->dump_plan,
                     &o->req.no_selfcheck, &o->req.error_flag, &o->quiet, &o->quiet, &o->verbose, &o->verbose};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(a, names[k])) return slots[k];
    return NULL;
}

static void positional(Options *o, const char *a) {
    if (!o->program && !o->batch) o->program = a;
    else o->inputs[o->n_inputs++] = a;
}

/* Returns -1 when the options are complete, else the exit status to stop with. */
static int parse_args(int argc, char **argv, Options *o) {
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    o->defines = calloc((size_t)argc, sizeof *o->defines);
    if (!o->inputs || !o->defines) return 2;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') { /* "-" alone: standard input */
            positional(o, a);
            continue;
        }
        if (!strcmp(a, "--")) {
            options_done = true;
            continue;
        }
        if (a[1] == 'D') { /* -D NAME=VALUE or -DNAME=VALUE, as a C compiler takes it */
            const char *def = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL;
            if (!def) return usage_error("%s", "-D needs NAME=VALUE");
            if (!parse_define(def, &o->defines[o->n_defines]))
                return usage_error("-D needs NAME=VALUE (NAME a variable of the program), got '%s'", def);
            o->n_defines++;
            continue;
        }
        if (a[1] == 'o' && a[2]) { /* -oFILE */
            o->req.model_path = a + 2;
            continue;
        }
        const char *inline_value = split_inline(a, name, sizeof name);
        if (inline_value) a = name;
        const char **value = value_slot(o, a);
        if (value) {
            if (inline_value) *value = inline_value;
            else if (i + 1 >= argc) return usage_error("option '%s' needs a value", a);
            else *value = argv[++i];
            continue;
        }
        if (!strcmp(a, "--dot")) { /* an optional FILE: --dot=FILE, or after the program --dot FILE */
            o->dot = inline_value ? inline_value : "-";
            if (!inline_value && i + 1 < argc && o->program &&
                (!strcmp(argv[i + 1], "-") || (argv[i + 1][0] != '-' && !o->eval)))
                o->dot = argv[++i];
            continue;
        }
        bool *flag = flag_slot(o, a);
        if (inline_value) {
            bool known = flag || !strcmp(a, "--help") || !strcmp(a, "--version");
            return usage_error(known ? "option '%s' takes no value" : "unknown option '%s'", a);
        }
        if (flag) {
            *flag = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s%s", usage_text, help_text);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("raspcc %s\n", RASPCC_VERSION);
            return 0;
        } else {
            return usage_error("unknown option '%s' (an input starting with '-' goes after --)", a);
        }
    }
    CompileRequest *r = &o->req;
    r->program = o->program;
    r->defines = o->defines;
    r->n_defines = o->n_defines;
    if (o->quiet && o->verbose) return usage_error("%s", "-q and -v contradict each other");
    if (o->batch) {
        if (o->program || o->n_inputs) return usage_error("%s", "--batch takes its programs from the manifest, not the command line");
        if (o->eval || o->dump_ir || o->dump_ast || o->dump_plan || o->dot || r->model_path || o->fut_target ||
            o->stats || o->json || o->inputs_file)
            return usage_error("%s", "--batch goes with compile flags only (--vocab, --max-len, --range, --tol, "
                               "--margin, --mlp, --max-mlp, --max-bytes, --output, -D, --no-selfcheck, --error-flag, -q, -v)");
        return -1;
    }
    if (!o->program) return usage_error("%s", "no program given");
    bool compile = r->model_path || o->fut_target || o->dump_plan || o->dot || o->stats;
    int modes = o->eval + compile + (o->dump_ir || o->dump_ast);
    if (modes == 0) return usage_error("%s", "nothing to do: give --eval, -o MODEL, --dot, --stats, --dump-ir or --dump-ast");
    if ((o->beta || o->fut_embed) && !o->fut_target) return usage_error("%s", "--beta and --fut-embed go with --fut-target");
    if (modes > 1) return usage_error("%s", "--eval, compilation (-o, --dot, --stats) and --dump-* are separate modes");
    if (!o->eval && (o->inputs_file || o->n_inputs))
        return usage_error("%s", "inputs are only for --eval");
    if (o->inputs_file && o->n_inputs) return usage_error("%s", "give --inputs FILE or inputs, not both");
    if (o->eval && (r->vocab || r->max_len || r->range || r->tol || r->margin || r->mlp || r->max_mlp ||
                    r->max_bytes || r->no_selfcheck || r->error_flag))
        return usage_error("%s", "--vocab, --max-len, --range, --tol, --margin, --mlp, --max-mlp, --max-bytes, "
                           "--stats, --no-selfcheck, --error-flag and --fut-target are for compilation (-o)");
    if (o->dump_ast && o->n_defines)
        return usage_error("%s", "-D goes with --eval, -o or --dump-ir (--dump-ast only parses)");
    if (o->json && !o->eval && !o->stats) return usage_error("%s", "--json goes with --eval or --stats");
    if (!strcmp(o->program, "-") && o->inputs_file && !strcmp(o->inputs_file, "-"))
        return usage_error("%s", "the program and --inputs cannot both be standard input");
    /* standard output: one binary or graph output alone */
    bool model_out = r->model_path && !strcmp(r->model_path, "-"), fut_out = o->fut_target && !strcmp(o->fut_target, "-");
    bool dot_out = o->dot && !strcmp(o->dot, "-");
    int to_stdout = model_out + fut_out + dot_out + o->stats + o->dump_plan + (o->fut_embed != NULL);
    if ((model_out || fut_out || dot_out) && to_stdout > 1)
        return usage_error("%s", "only one output can go to standard output when it is a model or a graph (-o -, "
                           "--fut-target -, --dot): write the others to files");
    return -1;
}

/* Prints the program's AST (parse only). */
static int dump_ast(Arena *arena, const char *path, DiagStyle style) {
    const char *why = "";
    bool in = !strcmp(path, "-");
    SourceFile *file = in ? source_read_stream(arena, stdin, "<stdin>", &why) : source_read_file(arena, path, &why);
    if (!file) {
        fprintf(stderr, "raspcc: cannot read %s: %s\n", in ? "the program from standard input" : path, why);
        return 2;
    }
    DiagList diags;
    diag_init(&diags, arena);
    AstProgram prog;
    bool ok = parse_program(arena, file, &prog, &diags);
    diag_render_from(stderr, &diags, 0, style);
    if (!ok) return 2;
    ast_print_program(stdout, &prog);
    return 0;
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

/* A serialized file to `path`, or standard output for "-". */
static bool write_bytes(const char *path, const uint8_t *buf, size_t len, char *err, size_t errsize) {
    if (strcmp(path, "-") != 0) return fut_write_file(path, buf, len, err, errsize);
    if (isatty(STDOUT_FILENO)) {
        snprintf(err, errsize, "standard output is a terminal; redirect it to a file or a pipe");
        return false;
    }
    if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
        snprintf(err, errsize, "cannot write to standard output");
        return false;
    }
    return true;
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
              fut_target_serialize(&t, &buf, &len, err, sizeof err) && write_bytes(o->fut_target, buf, len, err, sizeof err);
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

/* --dot: the s-op graph with the compiled model's placement. */
static bool write_dot(const CompileJob *j, const char *path) {
    bool out = !strcmp(path, "-");
    FILE *f = out ? stdout : fopen(path, "w");
    if (!f) {
        perror(path);
        return false;
    }
    viz_write_dot(f, &j->graph, j->output, &j->model);
    bool ok = fflush(f) == 0 && !ferror(f);
    if (!out) ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "raspcc: cannot write %s\n", out ? "the graph to standard output" : path);
    return ok;
}

/* -o, --dot, --stats, --fut-target: one compile job, then what it is for. */
static int compile_mode(CompileJob *j, const Options *o, CompileRequest *r) {
    r->plan_out = o->dump_plan ? stdout : NULL;
    if (!compile_job_compile(j, r)) {
        if (j->usage) fprintf(stderr, "%s(raspcc --help for details)\n", usage_text);
        return j->status;
    }
    if (o->fut_target) { /* the attention computation, numbers only (no kind block) */
        Model f;
        model_init(&f);
        CodegenOptions co = j->options;
        co.numbers_only = true;
        co.plain_heads = true; /* a FUT target's heads have no causal mask or heavy BOS */
        co.plan_out = NULL;
        DiagList fd;
        diag_init(&fd, &j->arena);
        bool fok = codegen_compile(&j->graph, j->output, j->output_name, &co, &f, &fd);
        diag_render_from(stderr, &fd, 0, r->style);
        bool exported = fok && export_fut(&f, o);
        model_free(&f);
        if (!exported) return 2;
    }
    if (o->dot && !write_dot(j, o->dot)) return 2;
    if (o->stats) compile_job_print_stats(stdout, j, o->json);
    return 0;
}

static int run(Options *o) {
    CompileRequest *r = &o->req;
    r->messages = stderr;
    r->style = (DiagStyle){term_use_color(stderr), o->quiet};
    r->tool = "raspcc";
    r->verbose = o->verbose;
    r->progress = term_is_tty(stderr) && !o->quiet;
    if (o->batch) {
        bool in = !strcmp(o->batch, "-");
        FILE *manifest = in ? stdin : fopen(o->batch, "r");
        if (!manifest) {
            fprintf(stderr, "raspcc: cannot open the manifest %s\n", o->batch);
            return 2;
        }
        BatchSummary sum;
        double t0 = term_now();
        batch_run(manifest, stdout, r, r->progress ? stderr : NULL, &sum);
        if (!in) fclose(manifest);
        if (o->verbose)
            fprintf(stderr, "raspcc: batch: %zu program%s, %zu failed (%.2f s)\n", sum.programs,
                    sum.programs == 1 ? "" : "s", sum.failed, term_now() - t0);
        return sum.failed ? 1 : 0;
    }
    if (o->dump_ast) {
        Arena arena;
        arena_init(&arena);
        int rc = dump_ast(&arena, o->program, r->style);
        arena_free(&arena);
        return rc;
    }
    CompileJob j;
    compile_job_init(&j);
    int rc = 2;
    if (!compile_job_load(&j, r)) rc = j.status;
    else if (o->dump_ir) rc = (ir_dump(stdout, &j.graph), 0);
    else if (!compile_job_output(&j, r)) rc = j.status;
    else if (o->eval) rc = eval_mode(&j.graph, j.output, o);
    else rc = compile_mode(&j, o, r);
    compile_job_free(&j);
    return rc;
}

int main(int argc, char **argv) {
    Options o = {0};
    int status = parse_args(argc, argv, &o);
    if (status < 0) status = run(&o);
    free(o.inputs);
    for (size_t i = 0; i < o.n_defines; i++) free((char *)o.defines[i].name);
    free(o.defines);
    return status;
}
