#include "driver/batch.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/json.h"
#include "support/term.h"

/* A parsed JSON value written back (for "id", and a "vocab" list as the --vocab JSON text). */
static void write_json(JsonBuf *b, const JsonValue *v) {
    switch (v->kind) {
    case JSON_NULL: jbuf_puts(b, "null"); return;
    case JSON_BOOL: jbuf_puts(b, v->boolean ? "true" : "false"); return;
    case JSON_NUMBER: jbuf_puts(b, v->text); return;
    case JSON_STRING: jbuf_string(b, v->text); return;
    case JSON_ARRAY:
    case JSON_OBJECT:
        jbuf_puts(b, v->kind == JSON_ARRAY ? "[" : "{");
        for (size_t i = 0; i < v->count; i++) {
            if (i) jbuf_puts(b, ", ");
            if (v->kind == JSON_OBJECT) {
                jbuf_string(b, v->keys[i]);
                jbuf_puts(b, ": ");
            }
            write_json(b, &v->items[i]);
        }
        jbuf_puts(b, v->kind == JSON_ARRAY ? "]" : "}");
        return;
    }
}

static const char *json_text(Arena *a, const JsonValue *v) {
    JsonBuf b;
    jbuf_init(&b);
    write_json(&b, v);
    const char *s = b.failed ? NULL : arena_strdup(a, b.data ? b.data : "");
    jbuf_free(&b);
    if (!s) abort();
    return s;
}

/* A string, or a number's literal: the text of a flag's value. */
static bool flag_text(const JsonValue *v, const char **out) {
    if (v->kind != JSON_STRING && v->kind != JSON_NUMBER) return false;
    *out = v->text;
    return true;
}

bool batch_parse_line(Arena *arena, const char *line, size_t len, size_t line_no, const CompileRequest *defaults,
                      CompileRequest *req, const JsonValue **id, char *err, size_t errsize) {
    *req = *defaults;
    req->program = req->source = req->source_name = req->model_path = NULL;
    req->messages = NULL;
    req->plan_out = NULL;
    *id = NULL;
    JsonValue *v;
    char why[256];
    if (!json_parse(arena, line, len, &v, why, sizeof why)) {
        snprintf(err, errsize, "manifest line %zu is not JSON: %s", line_no, why);
        return false;
    }
    if (v->kind != JSON_OBJECT) {
        snprintf(err, errsize, "manifest line %zu is not a JSON object", line_no);
        return false;
    }
    static const char *const flag_keys[] = {"output", "max-len", "range", "tol", "margin", "mlp", "max-mlp", "max-bytes"};
    const char **flag_out[] = {&req->output, &req->max_len, &req->range, &req->tol, &req->margin, &req->mlp,
                               &req->max_mlp, &req->max_bytes};
    for (size_t i = 0; i < v->count; i++) {
        const char *k = v->keys[i];
        const JsonValue *x = &v->items[i];
        bool known = false, fine = true;
        for (size_t f = 0; f < sizeof flag_keys / sizeof *flag_keys; f++)
            if (!strcmp(k, flag_keys[f])) known = true, fine = flag_text(x, flag_out[f]);
        if (known) {
        } else if (!strcmp(k, "program") || !strcmp(k, "source") || !strcmp(k, "name") || !strcmp(k, "model")) {
            known = true;
            fine = x->kind == JSON_STRING;
            const char **to = k[0] == 'p' ? &req->program : k[0] == 's' ? &req->source : k[0] == 'n' ? &req->source_name
                                                                                                      : &req->model_path;
            if (fine) *to = x->text;
        } else if (!strcmp(k, "vocab")) {
            known = true;
            if (x->kind == JSON_ARRAY) req->vocab = json_text(arena, x);
            else fine = flag_text(x, &req->vocab);
        } else if (!strcmp(k, "no-selfcheck")) {
            known = true;
            fine = x->kind == JSON_BOOL;
            if (fine) req->no_selfcheck = x->boolean;
        } else if (!strcmp(k, "error-flag")) {
            known = true;
            fine = x->kind == JSON_BOOL;
            if (fine) req->error_flag = x->boolean;
        } else if (!strcmp(k, "id")) {
            known = true;
            *id = x;
        } else if (!strcmp(k, "defines") && x->kind != JSON_OBJECT) {
            known = true;
            fine = false;
        } else if (!strcmp(k, "defines")) {
            known = true;
            ElabOverride *d = ARENA_ARRAY(arena, ElabOverride, defaults->n_defines + x->count + 1);
            if (defaults->n_defines) memcpy(d, defaults->defines, defaults->n_defines * sizeof *d);
            size_t n = defaults->n_defines;
            for (size_t e = 0; e < x->count && fine; e++) {
                const JsonValue *val = &x->items[e];
                const char *text = val->kind == JSON_BOOL ? (val->boolean ? "True" : "False") : NULL;
                fine = text || flag_text(val, &text);
                if (fine) d[n++] = (ElabOverride){x->keys[e], text}; /* later ones win (elaborate.h) */
                else snprintf(err, errsize, "manifest line %zu: \"defines\": the value of %s must be a string holding "
                              "a RASP literal, a number, true or false", line_no, x->keys[e]);
            }
            if (!fine) return false;
            req->defines = d;
            req->n_defines = n;
        }
        if (!known) {
            snprintf(err, errsize, "manifest line %zu: unknown key \"%s\"", line_no, k);
            return false;
        }
        if (!fine) {
            snprintf(err, errsize, "manifest line %zu: \"%s\" has the wrong type", line_no, k);
            return false;
        }
    }
    if (!req->program == !req->source) {
        snprintf(err, errsize, "manifest line %zu: give \"program\" (a file) or \"source\" (its text), one of them",
                 line_no);
        return false;
    }
    if ((req->program && !strcmp(req->program, "-")) || (req->model_path && !strcmp(req->model_path, "-"))) {
        snprintf(err, errsize, "manifest line %zu: \"-\" (standard input or output) is not a file here", line_no);
        return false;
    }
    if (req->source && !req->source_name) req->source_name = arena_printf(arena, "<line %zu>", line_no);
    return true;
}

static void put_message(JsonBuf *b, const Diag *d) {
    static const char *const sev[] = {"error", "warning", "note"};
    jbuf_printf(b, "{\"severity\": \"%s\", \"message\": ", sev[d->severity]);
    jbuf_string(b, d->message);
    if (d->loc.file) {
        jbuf_puts(b, ", \"file\": ");
        jbuf_string(b, d->loc.file->name);
        if (d->loc.line > 0) jbuf_printf(b, ", \"line\": %d, \"col\": %d", d->loc.line, d->loc.col);
    }
    jbuf_puts(b, "}");
}

/* One result line (j NULL: the line itself was refused, for `why`). */
static void put_result(FILE *out, size_t line_no, const JsonValue *id, const CompileRequest *r, const CompileJob *j,
                       const char *why) {
    JsonBuf b;
    jbuf_init(&b);
    jbuf_printf(&b, "{\"line\": %zu", line_no);
    if (id) {
        jbuf_puts(&b, ", \"id\": ");
        write_json(&b, id);
    }
    jbuf_puts(&b, ", \"program\": ");
    const char *program = j ? (r->program ? r->program : r->source_name) : NULL;
    if (program) jbuf_string(&b, program);
    else jbuf_puts(&b, "null");
    jbuf_puts(&b, ", \"output\": ");
    if (j && j->output) jbuf_string(&b, j->output_name);
    else jbuf_puts(&b, "null");
    jbuf_puts(&b, ", \"model\": ");
    if (j && j->file_bytes >= 0) jbuf_string(&b, r->model_path);
    else jbuf_puts(&b, "null");
    jbuf_printf(&b, ", \"status\": %d, \"stats\": ", j ? j->status : 2);
    if (j && j->compiled) {
        char *stats = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&stats, &len);
        if (!mem) abort();
        compile_job_print_stats(mem, j, true);
        fclose(mem);
        while (len && stats[len - 1] == '\n') len--;
        jbuf_raw(&b, stats, len);
        free(stats);
    } else {
        jbuf_puts(&b, "null");
    }
    jbuf_puts(&b, ", \"messages\": [");
    if (!j) {
        Diag d = {DIAG_ERROR, {0}, why};
        put_message(&b, &d);
    }
    for (size_t i = 0; j && i < j->diags.count; i++) {
        if (i) jbuf_puts(&b, ", ");
        put_message(&b, &j->diags.items[i]);
    }
    jbuf_puts(&b, "]}\n");
    if (b.failed) abort();
    fputs(b.data, out);
    fflush(out);
    jbuf_free(&b);
}

static bool blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", s[i])) return false;
    return true;
}

/* The non-blank lines of a seekable manifest (then rewound); 0 when it cannot be read twice. */
static size_t count_lines(FILE *f) {
    long start = ftell(f);
    if (start < 0) return 0;
    char *line = NULL;
    size_t cap = 0, n = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) n += !blank(line, (size_t)len);
    free(line);
    clearerr(f);
    return fseek(f, start, SEEK_SET) == 0 ? n : 0;
}

void batch_run(FILE *manifest, FILE *out, const CompileRequest *defaults, FILE *progress_to, BatchSummary *sum) {
    *sum = (BatchSummary){0};
    size_t total = progress_to ? count_lines(manifest) : 0;
    Progress bar;
    progress_start(&bar, progress_to, total > 0, "raspcc: batch");
    char *line = NULL;
    size_t cap = 0, line_no = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, manifest)) > 0) {
        line_no++;
        if (blank(line, (size_t)len)) continue;
        Arena a;
        arena_init(&a);
        CompileRequest r;
        const JsonValue *id;
        char why[512];
        sum->programs++;
        if (!batch_parse_line(&a, line, (size_t)len, line_no, defaults, &r, &id, why, sizeof why)) {
            progress_end(&bar);
            put_result(out, line_no, id, &r, NULL, why);
            sum->failed++;
        } else {
            CompileJob j;
            compile_job_init(&j);
            compile_job_run(&j, &r);
            progress_end(&bar);
            put_result(out, line_no, id, &r, &j, NULL);
            sum->failed += j.status != 0;
            compile_job_free(&j);
        }
        progress_update(&bar, sum->programs, total);
        arena_free(&a);
    }
    progress_end(&bar);
    free(line);
}
