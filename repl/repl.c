/* The REPL loop (repl/repl.h): reading statements as the original does (its LineReader), running
 * them on the session and printing what the original prints (its REPL.evaluate_tree/run). */
#include "repl/repl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "repl/compile.h"
#include "repl/draw.h"
#include "repl/lineread.h"
#include "repl/syntax.h"

void repl_init(Repl *r, FILE *out) {
    memset(r, 0, sizeof *r);
    arena_init(&r->arena);
    ir_graph_init(&r->graph, &r->arena);
    diag_init(&r->diags, &r->arena);
    r->out = out;
    r->session = elab_session_new(&r->graph, &r->diags, NULL);
    r->seq_example = r->sel_example = (MetaValue){.kind = MV_ATOM, .u.atom = value_str("hello")};
    r->show_seq_examples = r->show_sel_examples = true;
}

void repl_free(Repl *r) {
    free(r->pending);
    free(r->transcript);
    arena_free(&r->arena);
}

const char *repl_last_diag(const Repl *r) {
    for (size_t i = r->diags.count; i-- > 0;)
        if (r->diags.items[i].severity == DIAG_ERROR) return r->diags.items[i].message;
    return "error";
}

void repl_note_statement(Repl *r, const char *text, size_t len) {
    if (r->transcript_len + len + 2 > r->transcript_cap) {
        r->transcript_cap = 2 * (r->transcript_len + len + 2);
        r->transcript = realloc(r->transcript, r->transcript_cap);
        if (!r->transcript) abort();
    }
    memcpy(r->transcript + r->transcript_len, text, len);
    r->transcript_len += len;
    r->transcript[r->transcript_len++] = '\n';
    r->transcript[r->transcript_len] = '\0';
}

/* ---- results ---- */

static void print_failure(Repl *r, ElabFault f) {
    if (f.kind == ELAB_FAULT_IGNORED) /* a RASPTypeError raised while printing */
        fprintf(r->out, "\t!!statement executed, but result fails on evaluation:\n\t\t %s\n", f.text);
    else
        fprintf(r->out, "something went wrong: %s\n", f.text ? f.text : repl_last_diag(r));
}

void repl_emit(Repl *r, ReplEntry e, bool store) {
    if (store) {
        if (r->n_pending == r->cap_pending) {
            r->cap_pending = r->cap_pending ? 2 * r->cap_pending : 64;
            r->pending = realloc(r->pending, r->cap_pending * sizeof *r->pending);
            if (!r->pending) abort();
        }
        r->pending[r->n_pending++] = e;
        return;
    }
    ElabFault f;
    if (!show_entry(r, &e, &f)) print_failure(r, f);
}

static ReplEntry text_entry(const char *text) {
    return (ReplEntry){.kind = ENTRY_TEXT, .print = true, .text = text};
}

/* How the original reports a failed statement. */
static void emit_fault(Repl *r, ElabFault f, bool store) {
    const char *text;
    switch (f.kind) {
    case ELAB_FAULT_IGNORED: text = arena_printf(&r->arena, "\t\t!!ignoring input:\n\t %s", f.text); break;
    case ELAB_FAULT_NOT_IMPLEMENTED: text = "not implemented this command yet! ignoring"; break;
    case ELAB_FAULT_EXCEPTION: text = arena_printf(&r->arena, "something went wrong: %s", f.text); break;
    default: text = arena_printf(&r->arena, "something went wrong: %s", repl_last_diag(r)); break;
    }
    repl_emit(r, text_entry(text), store);
}

/* The original prints what a file sets only when it is public and reaches the top. */
static bool reaches_top(Repl *r, Env *scope, const char *name) {
    if (scope == elab_session_console(r->session)) return true;
    return name[0] != '_' && strcmp(name, "out") != 0;
}

/* ---- statements ---- */

/* Parses text[span] as one expression of the project's grammar. */
static bool parse_span(Repl *r, const char *text, SynSpan span, AstExpr **out) {
    const char *src = arena_strndup(&r->arena, text + span.start, span.end - span.start);
    SourceFile *file = source_from_string(&r->arena, "<input>", src);
    return parse_expression(&r->arena, file, out, &r->diags);
}

static bool eval_span(Repl *r, const char *text, SynSpan span, MetaValue *v, bool store) {
    AstExpr *e;
    ElabFault f = {0};
    if (!parse_span(r, text, span, &e)) {
        emit_fault(r, f, store);
        return false;
    }
    if (!elab_session_eval(r->session, elab_session_console(r->session), e, NULL, v, &f)) {
        emit_fault(r, f, store);
        return false;
    }
    return true;
}

/* set [s-op|selector] example EXPR (evaluated in the console's scope, even in a file) */
static void set_example(Repl *r, const char *text, const SynResult *syn, bool store) {
    MetaValue ex;
    if (!eval_span(r, text, syn->expr[0], &ex, store)) return;
    bool iterable = (ex.kind == MV_ATOM && ex.u.atom.kind == VAL_STR) || ex.kind == MV_LIST || ex.kind == MV_DICT;
    if (!iterable) {
        emit_fault(r, (ElabFault){ELAB_FAULT_IGNORED,
                                  arena_printf(&r->arena, "example not iterable: %s", meta_pystr(&r->arena, ex))},
                   store);
        return;
    }
    if (syn->subset != SYN_SELECTOR) {
        r->seq_example = ex;
        elab_session_set_example(r->session, ex);
    }
    if (syn->subset != SYN_SOP) r->sel_example = ex;
}

/* An expression, assignment, def, for loop or load. */
static void rasp_statement(Repl *r, const char *text, const SynResult *syn, Env *scope, bool store) {
    bool console = scope == elab_session_console(r->session);
    if (syn->load_path) {
        const char *err;
        if (!repl_load(r, syn->load_path, scope, &err))
            emit_fault(r, (ElabFault){ELAB_FAULT_IGNORED, err}, store);
        else if (console)
            repl_note_statement(r, text + syn->stmt.start, syn->stmt.end - syn->stmt.start);
        return;
    }
    const char *src = arena_strndup(&r->arena, text + syn->stmt.start, syn->stmt.end - syn->stmt.start);
    SourceFile *file = source_from_string(&r->arena, "<input>", src);
    AstProgram prog;
    size_t warnings = r->diags.count;
    if (!parse_program(&r->arena, file, &prog, &r->diags) || prog.stmts.count != 1) {
        emit_fault(r, (ElabFault){0}, store);
        return;
    }
    r->diags.count = warnings; /* the parser's notes about REPL commands are not for the REPL */
    ElabOutcome o;
    elab_session_run(r->session, scope, prog.stmts.items[0], &o);
    if (!o.ok) {
        emit_fault(r, o.fault, store);
        return;
    }
    /* what compile stores: the statements that bind names (expressions bind only `out`) */
    if (console && prog.stmts.items[0]->kind != AST_STMT_EXPR) repl_note_statement(r, src, strlen(src));
    if (o.applied) {
        repl_emit(r, (ReplEntry){.kind = ENTRY_APPLIED, .print = !store, .node = o.applied_node,
                                 .value = o.applied_input},
                  store);
        return;
    }
    for (size_t i = 0; i < o.n_named; i++)
        repl_emit(r, (ReplEntry){.kind = ENTRY_NAMED, .print = reaches_top(r, scope, o.named[i].name),
                                 .name = o.named[i].name, .value = o.named[i].value},
                  store);
}

/* Runs one statement; false when it was exit. */
static bool run_statement(Repl *r, const char *text, const SynResult *syn, Env *scope, bool store) {
    switch (syn->kind) {
    case SYN_EXIT: return false;
    case SYN_COMMENT: break;
    case SYN_SET_EXAMPLE: set_example(r, text, syn, store); break;
    case SYN_SHOW_EXAMPLE:
        repl_emit(r, (ReplEntry){.kind = ENTRY_EXAMPLE, .print = true, .subset = (int)syn->subset}, store);
        break;
    case SYN_TOGGLE_EXAMPLES:
        if (syn->subset != SYN_SELECTOR) r->show_seq_examples = syn->on;
        if (syn->subset != SYN_SOP) r->show_sel_examples = syn->on;
        break;
    case SYN_TOGGLE_VERBOSE: r->verbose = syn->on; break;
    case SYN_DRAW: {
        AstExpr *exprs[2] = {NULL, NULL};
        for (size_t i = 0; i < syn->n_exprs; i++)
            if (!parse_span(r, text, syn->expr[i], &exprs[i])) {
                emit_fault(r, (ElabFault){0}, store);
                return true;
            }
        ElabFault f = {0};
        ReplEntry e;
        if (!repl_draw(r, exprs[0], exprs[1], scope, &e, &f)) emit_fault(r, f, store);
        else repl_emit(r, e, store);
        break;
    }
    case SYN_RASP: rasp_statement(r, text, syn, scope, store); break;
    }
    return true;
}

/* ---- reading ---- */

static bool is_comment(const char *line) {
    while (isspace((unsigned char)*line)) line++;
    return *line == '#';
}

/* How many whitespace-separated words of `text` are exactly "def" (the prompt's indentation). */
static size_t count_defs(const char *text) {
    size_t n = 0;
    for (const char *p = text; *p;) {
        while (*p && isspace((unsigned char)*p)) p++;
        const char *w = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        n += p - w == 3 && strncmp(w, "def", 3) == 0;
    }
    return n;
}

typedef enum ReadResult { READ_STATEMENT, READ_SKIP, READ_END } ReadResult;

/* Reads lines until they make a statement (LineReader.get_input_tree). Syntax errors are printed
 * at once, as the original prints them (even inside a file). */
static ReadResult read_statement(Repl *r, LineSource *src, Env *scope, bool store, char **text, SynResult *syn) {
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (!buf) abort();
    buf[0] = '\0';
    bool more = false;
    for (;;) {
        size_t defs = count_defs(buf);
        char *prompt = malloc(4 + 2 * defs + 1);
        if (!prompt) abort();
        strcpy(prompt, more ? ".. " : ">> ");
        for (size_t i = 0; i < defs; i++) strcat(prompt, "  ");
        char *line;
        LineStatus st = line_source_read(src, prompt, &line);
        free(prompt);
        if (st != LINE_OK) {
            free(buf);
            if (st == LINE_END) return READ_END;
            fputc('\n', r->out); /* KeyboardInterrupt: a new line, and the statement is dropped */
            return READ_SKIP;
        }
        if (!more && repl_is_compile_command(line)) { /* the REPL's own command */
            repl_compile_command(r, line, scope);
            free(line);
            free(buf);
            return READ_SKIP;
        }
        const char *add = is_comment(line) ? "" : line;
        size_t n = strlen(add);
        if (len + n + 2 > cap) {
            cap = 2 * (len + n + 2);
            buf = realloc(buf, cap);
            if (!buf) abort();
        }
        memcpy(buf + len, add, n + 1);
        len += n;
        free(line);
        Arena scratch;
        arena_init(&scratch);
        SynResult res = syn_check(&scratch, buf);
        if (res.status == SYN_INCOMPLETE) {
            arena_free(&scratch);
            more = true;
            buf[len++] = ' ';
            buf[len] = '\0';
            continue;
        }
        if (res.status == SYN_ERROR) {
            fprintf(r->out, "\t!! antlr exception: %s \t-- ignoring input\n", res.message);
            arena_free(&scratch);
            free(buf);
            return READ_SKIP;
        }
        if (res.n_statements != 1) { /* the original asserts one statement per input */
            arena_free(&scratch);
            free(buf);
            repl_emit(r, text_entry("something went wrong: "), store);
            return READ_SKIP;
        }
        *syn = res;
        if (res.load_path) syn->load_path = arena_strdup(&r->arena, res.load_path);
        arena_free(&scratch);
        *text = buf;
        return READ_STATEMENT;
    }
}

void repl_run_lines(Repl *r, LineSource *src, Env *scope, bool store) {
    for (;;) {
        char *text = NULL;
        SynResult syn;
        ReadResult rr = read_statement(r, src, scope, store, &text, &syn);
        if (rr == READ_END) {
            if (line_source_interactive(src)) fputc('\n', r->out); /* input() hit the end */
            return;
        }
        if (rr == READ_SKIP) continue;
        bool go_on = run_statement(r, text, &syn, scope, store);
        free(text);
        fflush(r->out);
        if (!go_on) return;
    }
}

void repl_run(Repl *r, LineSource *src) {
    fprintf(r->out, "RASP 0.1\nrunning example is: hello\n");
    repl_run_lines(r, src, elab_session_console(r->session), false);
    fflush(r->out);
}
