#include "driver/compile.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/errflag.h"
#include "runtime/model_io.h"
#include "support/term.h"

void compile_job_init(CompileJob *j) {
    memset(j, 0, sizeof *j);
    arena_init(&j->arena);
    ir_graph_init(&j->graph, &j->arena);
    diag_init(&j->diags, &j->arena);
    model_init(&j->model);
    j->file_bytes = -1;
}

void compile_job_free(CompileJob *j) {
    verify_sample_result_free(&j->selfcheck);
    model_free(&j->model);
    arena_free(&j->arena);
}

static const char *tool_of(const CompileRequest *r) { return r->tool ? r->tool : "raspcc"; }

void compile_job_message(CompileJob *j, const CompileRequest *r, DiagSeverity sev, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = arena_alloc(&j->arena, n > 0 ? (size_t)n + 1 : 1);
    va_start(ap, fmt);
    vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
    va_end(ap);
    diag_add(&j->diags, sev, (SrcLoc){0}, "%s", msg);
    if (!r->messages || (sev != DIAG_ERROR && r->style.quiet)) return;
    fprintf(r->messages, "%s: %s%s\n", tool_of(r), sev == DIAG_WARNING ? "warning: " : sev == DIAG_NOTE ? "note: " : "",
            msg);
}

/* -v: one line a step. */
static void step(const CompileRequest *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(const CompileRequest *r, const char *fmt, ...) {
    if (!r->verbose || !r->messages) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(r->messages, "%s: ", tool_of(r));
    vfprintf(r->messages, fmt, ap);
    fputc('\n', r->messages);
    va_end(ap);
}

/* Renders the diagnostics the last stage added. */
static void render_since(CompileJob *j, const CompileRequest *r, size_t from) {
    if (r->messages) diag_render_from(r->messages, &j->diags, from, r->style);
}

static bool fail(CompileJob *j, int status) {
    j->status = status;
    return false;
}

static bool usage_fail(CompileJob *j, const CompileRequest *r, const char *fmt, const char *arg) {
    compile_job_message(j, r, DIAG_ERROR, fmt, arg);
    j->usage = true;
    return fail(j, 2);
}

static double now_ms(void) { return term_now() * 1e3; }

static const char *dir_of(Arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    return slash == path ? "/" : arena_strndup(a, path, (size_t)(slash - path));
}

bool compile_job_load(CompileJob *j, const CompileRequest *r) {
    const char *why = "";
    double t0 = now_ms();
    if (r->source) {
        j->src = source_from_string(&j->arena, r->source_name ? r->source_name : "<source>", r->source);
    } else if (r->program && strcmp(r->program, "-") == 0) {
        j->src = source_read_stream(&j->arena, stdin, "<stdin>", &why);
        if (!j->src) compile_job_message(j, r, DIAG_ERROR, "cannot read the program from standard input: %s", why);
    } else {
        j->src = source_read_file(&j->arena, r->program, &why);
        if (!j->src) compile_job_message(j, r, DIAG_ERROR, "cannot read %s: %s", r->program, why);
    }
    if (!j->src) return fail(j, 2);
    ElabOptions eo = {0};
    /* `load` looks beside the program; a program from standard input or text, in the current directory */
    eo.base_dir = r->source || strcmp(j->src->name, "<stdin>") == 0 ? "." : dir_of(&j->arena, j->src->name);
    eo.overrides = r->defines;
    eo.n_overrides = r->n_defines;
    size_t from = j->diags.count;
    bool ok = rasp_load_program(&j->graph, NULL, j->src->text, j->src->name, &eo, &j->elab, &j->diags);
    render_since(j, r, from);
    if (!ok) return fail(j, 2);
    step(r, "elaborated %s: %zu IR nodes, %zu top-level s-ops (%.1f ms)", j->src->name, j->graph.count, j->elab.count,
         now_ms() - t0);
    return true;
}

bool compile_job_output(CompileJob *j, const CompileRequest *r) {
    const ElabResult *e = &j->elab;
    const IrNode *n = r->output ? elab_find_output(e, r->output) : e->last_sop;
    j->output_name = r->output ? r->output : e->last_name;
    j->output = n;
    if (n) return true;
    const char *what = r->output ? arena_printf(&j->arena, "'%s' is not a top-level s-op of the program", r->output)
                                 : "the program defines no s-op to output";
    if (e->count == 0) {
        compile_job_message(j, r, DIAG_ERROR, "%s (it has none)", what);
    } else {
        const char *names = "";
        for (size_t i = 0; i < e->count; i++) names = arena_printf(&j->arena, "%s %s", names, e->sops[i].name);
        compile_job_message(j, r, DIAG_ERROR, "%s; available outputs:%s", what, names);
    }
    return fail(j, 2);
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
static const char *compile_flags(Arena *a, const CompileRequest *r) {
    static const char *const flag[] = {"--vocab", "--max-len", "--range", "--tol", "--margin", "--mlp"};
    const char *value[] = {r->vocab, r->max_len, r->range, r->tol, r->margin, r->mlp};
    const char *s = "";
    for (size_t k = 0; k < sizeof flag / sizeof *flag; k++)
        if (value[k]) s = arena_printf(a, "%s%s%s %s", s, *s ? " " : "", flag[k], shell_word(a, value[k]));
    if (r->error_flag) s = arena_printf(a, "%s%s--error-flag", s, *s ? " " : "");
    for (size_t k = 0; k < r->n_defines; k++) {
        const char *def = arena_printf(a, "%s=%s", r->defines[k].name, r->defines[k].value);
        s = arena_printf(a, "%s%s-D %s", s, *s ? " " : "", shell_word(a, def));
    }
    return s;
}

/* The flags into j->options; false after a usage error. */
static bool read_flags(CompileJob *j, const CompileRequest *r) {
    CodegenOptions *co = &j->options;
    co->vocab_spec = r->vocab;
    if (r->max_len) {
        char *end;
        long v = strtol(r->max_len, &end, 10);
        if (*end || end == r->max_len || v <= 0 || v > 100000)
            return usage_fail(j, r, "--max-len needs a positive integer, got '%s'", r->max_len);
        co->max_len = (size_t)v;
    }
    const char *limits[2] = {r->max_mlp, r->max_bytes};
    size_t *limit_out[2] = {&co->max_mlp, &co->max_bytes};
    for (int k = 0; k < 2; k++) {
        if (!limits[k]) continue;
        char *end;
        unsigned long long v = strtoull(limits[k], &end, 10);
        if (*end || end == limits[k] || *limits[k] == '-' || v == 0)
            return usage_fail(j, r, "%s needs a positive integer", k ? "--max-bytes" : "--max-mlp");
        *limit_out[k] = (size_t)v;
    }
    if (r->range) {
        if (!parse_range(r->range, &co->range_lo, &co->range_hi))
            return usage_fail(j, r, "--range needs LO..HI with LO <= HI, got '%s'", r->range);
        co->have_range = true;
    }
    const char *given[2] = {r->tol, r->margin};
    double *out[2] = {&co->real_tol, &co->real_margin};
    for (int k = 0; k < 2; k++) {
        if (!given[k]) continue;
        char *end;
        double v = strtod(given[k], &end);
        if (*end || end == given[k] || !isfinite(v) || v <= 0)
            return usage_fail(j, r, k ? "--margin needs a positive finite number, got '%s'"
                                      : "--tol needs a positive finite number, got '%s'", given[k]);
        *out[k] = v;
    }
    if (r->mlp && strcmp(r->mlp, "relu") != 0 && strcmp(r->mlp, "gated") != 0)
        return usage_fail(j, r, "--mlp needs relu or gated, got '%s'", r->mlp);
    co->gated_mlp = r->mlp && strcmp(r->mlp, "gated") == 0;
    co->plan_out = r->plan_out;
    co->program_source = j->elab.source;
    co->program_name = j->src->name;
    co->compile_flags = compile_flags(&j->arena, r);
    return true;
}

static void on_selfcheck_progress(void *ctx, size_t done, size_t planned) { progress_update(ctx, done, planned); }

/* Compares the compiled model with a fresh elaboration of the program stored in it (exactly as
 * rasprun --check does, `load` relative to the program's directory). */
static bool selfcheck(CompileJob *j, const CompileRequest *r) {
    const Model *m = &j->model;
    char err[1024];
    Workspace ws;
    if (!workspace_init(&ws, m, err, sizeof err)) {
        compile_job_message(j, r, DIAG_WARNING, "self-check skipped: %s", err);
        return true;
    }
    bool ok = true;
    VerifyReference ref;
    const char *base_dir = r->source || strcmp(j->src->name, "<stdin>") == 0 ? "." : dir_of(&j->arena, j->src->name);
    if (!verify_reference_load(&ref, m, base_dir, NULL, err, sizeof err)) {
        compile_job_message(j, r, DIAG_ERROR, "internal compiler error: %s", err);
        ok = false;
    } else {
        VerifyPair pair = {.model = m, .ws = &ws, .ref = &ref, .bound = verify_model_bound(m)};
        Progress bar;
        progress_start(&bar, r->messages, r->progress && !r->style.quiet, "raspcc: self-check");
        VerifySampleOptions so = {0};
        so.runs = COMPILE_SELFCHECK_RUNS;
        so.exhaustive_len = m->max_len;
        so.exhaustive_limit = COMPILE_SELFCHECK_EXHAUSTIVE;
        so.random = COMPILE_SELFCHECK_RANDOM;
        so.random_max_len = m->max_len;
        so.seed = COMPILE_SELFCHECK_SEED;
        so.max_seconds = COMPILE_SELFCHECK_SECONDS;
        so.exhaustive_seconds = COMPILE_SELFCHECK_SECONDS / 2; /* the rest for long random inputs */
        so.on_progress = on_selfcheck_progress;
        so.ctx = &bar;
        j->selfchecked = true;
        ok = verify_sample(&pair, &so, &j->selfcheck);
        progress_end(&bar);
        if (!ok)
            compile_job_message(j, r, DIAG_ERROR,
                                "internal compiler error: the compiled model disagrees with the program on %s",
                                j->selfcheck.first_mismatch ? j->selfcheck.first_mismatch
                                                            : "an input (no memory for the report)");
        else
            step(r, "self-check: %zu inputs, 0 mismatches (%.2f s)", j->selfcheck.inputs, j->selfcheck.seconds);
        verify_reference_free(&ref);
    }
    if (!ok)
        compile_job_message(j, r, DIAG_ERROR, "while compiling %s (output %s%s%s); no file written (--no-selfcheck "
                            "writes it unchecked)", m->program_name, m->output_name, *m->compile_flags ? ", " : "",
                            m->compile_flags);
    workspace_free(&ws);
    return ok;
}

/* The model to r->model_path ("-": standard output, never a terminal). */
static bool write_model(CompileJob *j, const CompileRequest *r) {
    char err[512];
    if (strcmp(r->model_path, "-") == 0) {
        if (isatty(STDOUT_FILENO)) {
            compile_job_message(j, r, DIAG_ERROR, "-o -: standard output is a terminal; redirect it to a file or a pipe");
            return fail(j, 2);
        }
        uint8_t *buf = NULL;
        size_t len = 0;
        bool ok = model_serialize(&j->model, &buf, &len, err, sizeof err);
        if (ok && (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)) {
            snprintf(err, sizeof err, "cannot write the model to standard output");
            ok = false;
        }
        free(buf);
        if (!ok) {
            compile_job_message(j, r, DIAG_ERROR, "%s", err);
            return fail(j, 2);
        }
        j->file_bytes = (long long)len;
    } else {
        if (!model_write(&j->model, r->model_path, err, sizeof err)) {
            compile_job_message(j, r, DIAG_ERROR, "%s", err);
            return fail(j, 2);
        }
        struct stat st;
        if (stat(r->model_path, &st) == 0) j->file_bytes = (long long)st.st_size;
    }
    step(r, "wrote %s (%lld bytes)", strcmp(r->model_path, "-") ? r->model_path : "the model to standard output",
         j->file_bytes);
    return true;
}

/* The error flag's layers against --max-mlp and --max-bytes, as the compiler holds its own layers
 * to them (the flag's come after the compile, which did not count them); false with a message. */
static bool flag_within_limits(const CompileJob *j, char *why, size_t whysize) {
    const Model *m = &j->model;
    size_t max_mlp = j->options.max_mlp ? j->options.max_mlp : CODEGEN_DEFAULT_MAX_MLP;
    size_t max_bytes = j->options.max_bytes ? j->options.max_bytes : CODEGEN_DEFAULT_MAX_BYTES;
    for (size_t l = 0; l < m->n_layers; l++)
        if (m->layers[l].mlp.w1.cols > max_mlp) {
            snprintf(why, whysize, "--error-flag: layer %zu would have %zu hidden units (limit %zu, --max-mlp): lower "
                     "--max-len or --vocab, or raise the limit", l, m->layers[l].mlp.w1.cols, max_mlp);
            return false;
        }
    double bytes = 8.0 * (double)model_param_count(m);
    if (bytes > (double)max_bytes) {
        snprintf(why, whysize, "--error-flag brings the model's weights to %.3g bytes (limit %zu, --max-bytes): lower "
                 "--max-len or --vocab, or raise the limit", bytes, max_bytes);
        return false;
    }
    return true;
}

bool compile_job_compile(CompileJob *j, const CompileRequest *r) {
    if (!read_flags(j, r)) return false;
    Ticker ticker;
    char *label = arena_printf(&j->arena, "%s: compiling %s", tool_of(r), j->src->name);
    ticker_start(&ticker, r->messages, r->progress && !r->style.quiet && !r->plan_out, label, 0.5);
    size_t from = j->diags.count;
    double t0 = now_ms();
    j->compiled = codegen_compile(&j->graph, j->output, j->output_name, &j->options, &j->model, &j->diags);
    j->compile_ms = now_ms() - t0;
    ticker_stop(&ticker);
    render_since(j, r, from);
    if (!j->compiled) return fail(j, 2);
    char why[512];
    if (r->error_flag && (!errflag_add(&j->model, why, sizeof why) || !flag_within_limits(j, why, sizeof why))) {
        compile_job_message(j, r, DIAG_ERROR, "%s", why);
        j->compiled = false;
        return fail(j, 2);
    }
    size_t heads = 0;
    for (size_t l = 0; l < j->model.n_layers; l++) heads += j->model.layers[l].n_heads;
    step(r, "compiled %s: %zu layers, %zu heads, residual width %zu, %zu parameters (%.1f ms)", j->output_name,
         j->model.n_layers, heads, j->model.d_model, model_param_count(&j->model), j->compile_ms);
    if (!r->no_selfcheck && !selfcheck(j, r)) return fail(j, 3);
    if (r->model_path && !write_model(j, r)) return false;
    return true;
}

int compile_job_run(CompileJob *j, const CompileRequest *r) {
    if (compile_job_load(j, r) && compile_job_output(j, r)) compile_job_compile(j, r);
    return j->status;
}
