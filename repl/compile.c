/* compile NAME ... -o FILE (repl/compile.h): the session's statements elaborated as a program,
 * NAME compiled with the compiler (codegen/codegen.h), checked against the program as raspcc's
 * self-check does (verify/verify.h), and written (runtime/model_io.h). */
#include "repl/compile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen/codegen.h"
#include "ir/elaborate.h"
#include "runtime/model_io.h"
#include "verify/verify.h"

/* raspcc's self-check budget: every input of the short lengths, then seeded random ones. */
enum { CHECK_EXHAUSTIVE = 2000, CHECK_RANDOM = 500, CHECK_SEED = 1 };
#define CHECK_SECONDS 1.0

bool repl_is_compile_command(const char *line) {
    while (isspace((unsigned char)*line)) line++;
    if (strncmp(line, "compile", 7) != 0 || !isspace((unsigned char)line[7])) return false;
    const char *next = line + 7;
    while (isspace((unsigned char)*next)) next++;
    if (!isalpha((unsigned char)*next) && *next != '_' && *next != '-') return false;
    /* `compile = 3;` and `compile x;`-like statements stay RASP */
    return !strchr(line, ';') && (!strchr(line, '=') || strstr(line, "--"));
}

typedef struct CompileArgs {
    const char *name, *path;
    const char *vocab, *max_len, *range, *tol, *margin, *mlp, *max_mlp, *max_bytes;
    bool no_selfcheck;
} CompileArgs;

/* The words of the command: blanks separate them, quotes ('...' or "...") group them. */
static size_t split_words(Arena *a, const char *line, const char **words, size_t max) {
    size_t n = 0;
    const char *p = line;
    while (*p && n < max) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        char *w = arena_alloc(a, strlen(p) + 1), *o = w;
        while (*p && !isspace((unsigned char)*p)) {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q) *o++ = *p++;
                if (*p) p++;
            } else {
                *o++ = *p++;
            }
        }
        *o = '\0';
        words[n++] = w;
    }
    return n;
}

static const char *parse_args(Arena *a, const char *line, CompileArgs *c) {
    const char *words[64];
    size_t n = split_words(a, line, words, 64);
    memset(c, 0, sizeof *c);
    for (size_t i = 1; i < n; i++) {
        const char *w = words[i], *inline_value = NULL;
        char opt[32];
        const char *eq = strchr(w, '=');
        if (w[0] == '-' && w[1] == '-' && eq && (size_t)(eq - w) < sizeof opt) {
            memcpy(opt, w, (size_t)(eq - w));
            opt[eq - w] = '\0';
            w = opt;
            inline_value = eq + 1;
        }
        static const char *const names[] = {"-o", "--vocab", "--max-len", "--range", "--tol", "--margin", "--mlp",
                                            "--max-mlp", "--max-bytes"};
        const char **slots[] = {&c->path, &c->vocab, &c->max_len, &c->range, &c->tol, &c->margin, &c->mlp,
                                &c->max_mlp, &c->max_bytes};
        size_t k = 0;
        while (k < sizeof names / sizeof *names && strcmp(names[k], w) != 0) k++;
        if (k < sizeof names / sizeof *names) {
            if (inline_value) *slots[k] = inline_value;
            else if (i + 1 < n) *slots[k] = words[++i];
            else return arena_printf(a, "option '%s' needs a value", w);
        } else if (strcmp(w, "--no-selfcheck") == 0 && !inline_value) {
            c->no_selfcheck = true;
        } else if (w[0] == '-') {
            return arena_printf(a, "unknown option '%s'", words[i]);
        } else if (!c->name) {
            c->name = w;
        } else {
            return arena_printf(a, "one s-op at a time ('%s' and '%s')", c->name, w);
        }
    }
    if (!c->name) return "which s-op? compile NAME [options] -o FILE";
    if (!c->path) return "where to? compile NAME [options] -o FILE";
    return NULL;
}

static bool positive_number(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || errno || !isfinite(v) || v <= 0) return false;
    *out = v;
    return true;
}

static bool positive_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || end == s || errno || *s == '-' || v == 0) return false;
    *out = (size_t)v;
    return true;
}

/* A flag value as a shell takes it (rasprun --info shows the flags): bare when plain. */
static const char *shell_word(Arena *a, const char *s) {
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,_-+=") == strlen(s)) return s;
    const char *q = "'";
    for (const char *p = s; *p; p++)
        q = *p == '\'' ? arena_printf(a, "%s'\\''", q) : arena_printf(a, "%s%c", q, *p);
    return arena_printf(a, "%s'", q);
}

static const char *codegen_options(Arena *a, const CompileArgs *c, CodegenOptions *co) {
    memset(co, 0, sizeof *co);
    co->vocab_spec = c->vocab;
    if (c->max_len && (!positive_size(c->max_len, &co->max_len) || co->max_len > 100000))
        return arena_printf(a, "--max-len needs a positive integer, got '%s'", c->max_len);
    if (c->max_mlp && !positive_size(c->max_mlp, &co->max_mlp)) return "--max-mlp needs a positive integer";
    if (c->max_bytes && !positive_size(c->max_bytes, &co->max_bytes)) return "--max-bytes needs a positive integer";
    if (c->range) {
        const char *dots = strstr(c->range, "..");
        char *end;
        co->range_lo = dots ? strtod(c->range, &end) : NAN;
        co->range_hi = dots ? strtod(dots + 2, &end) : NAN;
        if (!dots || *end || !(co->range_lo <= co->range_hi))
            return arena_printf(a, "--range needs LO..HI with LO <= HI, got '%s'", c->range);
        co->have_range = true;
    }
    if (c->tol && !positive_number(c->tol, &co->real_tol))
        return arena_printf(a, "--tol needs a positive finite number, got '%s'", c->tol);
    if (c->margin && !positive_number(c->margin, &co->real_margin))
        return arena_printf(a, "--margin needs a positive finite number, got '%s'", c->margin);
    if (c->mlp && strcmp(c->mlp, "relu") != 0 && strcmp(c->mlp, "gated") != 0)
        return arena_printf(a, "--mlp needs relu or gated, got '%s'", c->mlp);
    co->gated_mlp = c->mlp && strcmp(c->mlp, "gated") == 0;
    const char *flags = "";
    const char *flag[] = {"--vocab", "--max-len", "--range", "--tol", "--margin", "--mlp"};
    const char *value[] = {c->vocab, c->max_len, c->range, c->tol, c->margin, c->mlp};
    for (size_t k = 0; k < sizeof flag / sizeof *flag; k++)
        if (value[k]) flags = arena_printf(a, "%s%s%s %s", flags, *flags ? " " : "", flag[k], shell_word(a, value[k]));
    co->compile_flags = flags;
    return NULL;
}

/* raspcc's self-check: the model against a fresh elaboration of the program it stores. */
static bool selfcheck(const Model *m, FILE *out) {
    char err[1024];
    Workspace ws;
    if (!workspace_init(&ws, m, err, sizeof err)) {
        fprintf(out, "compile: warning: self-check skipped: %s\n", err);
        return true;
    }
    bool ok = true;
    VerifyReference ref;
    if (!verify_reference_load(&ref, m, ".", out, err, sizeof err)) {
        fprintf(out, "compile: the stored program does not elaborate: %s\n", err);
        ok = false;
    } else {
        VerifyPair pair = {.model = m, .ws = &ws, .ref = &ref, .bound = verify_model_bound(m)};
        VerifySampleOptions so = {0};
        so.exhaustive_len = m->max_len;
        so.exhaustive_limit = CHECK_EXHAUSTIVE;
        so.random = CHECK_RANDOM;
        so.random_max_len = m->max_len;
        so.seed = CHECK_SEED;
        so.max_seconds = CHECK_SECONDS;
        so.exhaustive_seconds = CHECK_SECONDS / 2;
        VerifySampleResult res = {0};
        if (!verify_sample(&pair, &so, &res)) {
            fprintf(out, "compile: internal compiler error: the compiled model disagrees with the program on %s\n",
                    res.first_mismatch ? res.first_mismatch : "an input");
            ok = false;
        }
        verify_sample_result_free(&res);
        verify_reference_free(&ref);
    }
    workspace_free(&ws);
    return ok;
}

static void compile_session(Repl *r, Arena *a, const CompileArgs *c, Env *scope) {
    FILE *out = r->out;
    const MetaValue *v = elab_session_lookup(scope, c->name);
    if (!v || v->kind != MV_SOP) {
        fprintf(out, "compile: %s is not an s-op of the session\n", c->name);
        return;
    }
    CodegenOptions co;
    const char *bad = codegen_options(a, c, &co);
    if (bad) {
        fprintf(out, "compile: %s\n", bad);
        return;
    }
    /* The session's statements as a program: what the model stores and rasprun --check reruns. */
    const char *program = r->transcript ? r->transcript : "";
    IrGraph g;
    ir_graph_init(&g, a);
    DiagList diags;
    diag_init(&diags, a);
    ElabOptions eo = {0};
    eo.base_dir = ".";
    ElabResult er;
    if (!rasp_load_program(&g, NULL, program, "<rasp session>", &eo, &er, &diags)) {
        fprintf(out, "compile: the session's statements do not elaborate as a program:\n");
        diag_render_all(out, &diags);
        return;
    }
    IrNode *node = elab_find_output(&er, c->name);
    if (!node) {
        fprintf(out, "compile: %s is not an s-op of the session's program (the statements that made it "
                "need the REPL)\n", c->name);
        return;
    }
    co.program_source = er.source;
    co.program_name = "<rasp session>";
    Model m;
    model_init(&m);
    bool ok = codegen_compile(&g, node, c->name, &co, &m, &diags);
    diag_render_all(out, &diags);
    if (ok && !c->no_selfcheck) ok = selfcheck(&m, out);
    char err[512];
    if (ok && !model_write(&m, c->path, err, sizeof err)) {
        fprintf(out, "compile: %s\n", err);
        ok = false;
    }
    if (ok) {
        struct stat st;
        long long bytes = stat(c->path, &st) == 0 ? (long long)st.st_size : -1;
        fprintf(out, "\tcompiled %s: %zu layer%s, %lld bytes, written to %s\n", c->name, m.n_layers,
                m.n_layers == 1 ? "" : "s", bytes, c->path);
    } else {
        fprintf(out, "compile: %s not compiled; no file written\n", c->name);
    }
    model_free(&m);
}

void repl_compile_command(Repl *r, const char *line, Env *scope) {
    Arena a;
    arena_init(&a);
    CompileArgs c;
    const char *bad = parse_args(&a, line, &c);
    if (bad) fprintf(r->out, "compile: %s\n", bad);
    else compile_session(r, &a, &c, scope);
    fflush(r->out);
    arena_free(&a);
}
