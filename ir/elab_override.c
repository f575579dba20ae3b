/* -D overrides of top-level constants (ElabOverride in ir/elaborate.h): the literal, the value
 * it replaces, and the program text with the literal written in. */
#include "ir/elab_internal.h"

#include <string.h>

#include "parser/parser.h"

static bool is_number(const AstExpr *e) {
    if (e->kind == AST_INT_LIT || e->kind == AST_FLOAT_LIT) return true;
    return e->kind == AST_UNARY && (e->u.unary.op == AST_NEG || e->u.unary.op == AST_POS) &&
           is_number(e->u.unary.operand);
}

/* literal = INT | FLOAT | STRING | "True" | "False" | ("-" | "+") number
 *         | "[" (literal ("," literal)*)? "]" | "{" (literal ":" literal ("," ...)*)? "}"
 * Returns the first subexpression that is not one, or NULL. Only literals: a value that named
 * the program's variables would mean something else where it is written in. */
static const AstExpr *non_literal(const AstExpr *e) {
    switch (e->kind) {
    case AST_INT_LIT:
    case AST_FLOAT_LIT:
    case AST_STRING_LIT: return NULL;
    case AST_NAME: return strcmp(e->u.name, "True") == 0 || strcmp(e->u.name, "False") == 0 ? NULL : e;
    case AST_UNARY: return is_number(e) ? NULL : e;
    case AST_LIST:
    case AST_DICT:
        for (size_t i = 0; i < e->u.list.count; i++) {
            const AstExpr *bad = non_literal(e->u.list.items[i]);
            if (bad) return bad;
        }
        return NULL;
    default: return e;
    }
}

/* Advances past one lexical unit of t at i: a whole string literal or comment, else one byte.
 * (Strings hold no newline and no escape; a comment runs to the end of its line.) */
static size_t next_unit(const char *t, size_t len, size_t i) {
    if (t[i] == '"') {
        size_t j = i + 1;
        while (j < len && t[j] != '"' && t[j] != '\n' && t[j] != '\r') j++;
        return j < len && t[j] == '"' ? j + 1 : j;
    }
    if (t[i] == '#') {
        while (i < len && t[i] != '\n') i++;
        return i;
    }
    return i + 1;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/* The literal's text on one line: comments dropped (they would swallow the rest of the
 * statement) and line breaks made spaces, so it can stand where the old value stood. */
static const char *one_line(Arena *a, const char *v) {
    size_t len = strlen(v), n = 0;
    char *out = arena_alloc(a, len + 1);
    for (size_t i = 0; i < len;) {
        size_t next = next_unit(v, len, i);
        if (v[i] != '#')
            for (size_t j = i; j < next; j++) out[n++] = v[j] == '\n' || v[j] == '\r' ? ' ' : v[j];
        i = next;
    }
    while (n > 0 && is_space(out[n - 1])) n--;
    size_t start = 0;
    while (start < n && is_space(out[start])) start++;
    out[n] = '\0';
    return out + start;
}

static bool resolve_one(Elab *E, const AstProgram *prog, const ElabOverride *o, ElabSite *site) {
    const char *label = arena_printf(E->arena, "-D %s", o->name);
    SourceFile *vf = source_from_string(E->arena, label, o->value ? o->value : "");
    AstExpr *value = NULL;
    size_t errors = E->diags->error_count;
    if (!parse_expression(E->arena, vf, &value, E->diags)) {
        SrcLoc start = {vf, 1, 1};
        if (E->diags->error_count == errors) diag_error(E->diags, start, "expected a literal value");
        return false;
    }
    const AstExpr *bad = non_literal(value);
    if (bad) {
        diag_error(E->diags, bad->loc, "expected a literal: a number, a string in double quotes, True, False, or a "
                   "list or dict of literals");
        return false;
    }
    for (size_t i = 0; i < prog->stmts.count; i++) {
        const AstStmt *s = prog->stmts.items[i];
        if (s->kind != AST_STMT_ASSIGN) continue;
        const AstNameList *t = &s->u.assign.targets;
        for (size_t j = 0; j < t->count; j++) {
            if (strcmp(t->names[j], o->name) != 0) continue;
            if (s->u.assign.values.count != t->count) {
                diag_error(E->diags, t->locs[j], "-D %s: the first top-level assignment of '%s' unpacks one value "
                           "into several names, so it has no value of its own to replace", o->name, o->name);
                return false;
            }
            *site = (ElabSite){s, j, value, one_line(E->arena, o->value)};
            return true;
        }
    }
    SrcLoc file = {prog->file, 0, 0}; /* the whole file: "prog.rasp: error: ..." */
    diag_error(E->diags, file, "-D %s: the program has no top-level assignment to '%s'", o->name, o->name);
    return false;
}

bool elab_overrides_resolve(Elab *E, const AstProgram *prog, const ElabOverride *ov, size_t n) {
    ElabSite *sites = ARENA_ARRAY(E->arena, ElabSite, n ? n : 1);
    size_t count = 0;
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        bool overridden = false; /* by a later override of the same name */
        for (size_t later = k + 1; later < n && !overridden; later++)
            overridden = strcmp(ov[later].name, ov[k].name) == 0;
        if (overridden) continue;
        if (resolve_one(E, prog, &ov[k], &sites[count])) count++;
        else ok = false;
    }
    E->sites = sites;
    E->n_sites = count;
    return ok;
}

const AstExpr *elab_override_for(const Elab *E, const AstStmt *s, size_t index) {
    for (size_t k = 0; k < E->n_sites; k++)
        if (E->sites[k].stmt == s && E->sites[k].index == index) return E->sites[k].value;
    return NULL;
}

/* The byte offset of a 1-based line and column (a column is a byte, as the lexer counts). */
static size_t offset_of(const SourceFile *f, int line, int col) {
    size_t i = 0;
    for (int l = 1; l < line && i < f->len;)
        if (f->text[i++] == '\n') l++;
    size_t at = i + (size_t)(col > 0 ? col - 1 : 0);
    return at < f->len ? at : f->len;
}

/* The text of value `index` of the assignment whose first target starts at `at`: between the
 * `=` (the first one: the targets are names and commas) and the `;`, split at commas outside
 * brackets; from its first token to the end of its last (blanks and comments around it stay). */
static bool value_span(const char *t, size_t len, size_t at, size_t index, size_t *start, size_t *end) {
    size_t i = at;
    while (i < len && t[i] != '=') i = next_unit(t, len, i);
    if (i >= len) return false;
    size_t k = 0, first = 0, last = 0; /* the value's tokens so far: [first, last), last 0 = none */
    int depth = 0;
    for (i++; i < len;) {
        char c = t[i];
        size_t next = next_unit(t, len, i);
        if (depth == 0 && (c == ',' || c == ';')) {
            if (k == index) {
                *start = first;
                *end = last;
                return last > 0;
            }
            if (c == ';') return false;
            k++;
            last = 0;
        } else if (!is_space(c) && c != '#') {
            if (c == '(' || c == '[' || c == '{') depth++;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
            if (last == 0) first = i;
            last = next;
        }
        i = next;
    }
    return false;
}

typedef struct Edit {
    size_t start, end;
    const char *text;
} Edit;

const char *elab_overrides_source(Elab *E, const SourceFile *file) {
    const char *t = file->text;
    Edit *edits = ARENA_ARRAY(E->arena, Edit, E->n_sites ? E->n_sites : 1);
    size_t n = 0;
    for (size_t k = 0; k < E->n_sites; k++) {
        const ElabSite *s = &E->sites[k];
        Edit e = {0, 0, s->text};
        size_t at = offset_of(file, s->stmt->loc.line, s->stmt->loc.col);
        if (!value_span(t, file->len, at, s->index, &e.start, &e.end)) {
            diag_error(E->diags, s->stmt->loc, "internal error: cannot find the value -D replaces in the text");
            return t;
        }
        /* Keep the lines after it where they were: the old value's line breaks follow the new. */
        size_t breaks = 0;
        for (size_t i = e.start; i < e.end; i++) breaks += t[i] == '\n';
        if (breaks) {
            char *with = arena_alloc(E->arena, strlen(s->text) + breaks + 1);
            strcpy(with, s->text);
            memset(with + strlen(s->text), '\n', breaks);
            with[strlen(s->text) + breaks] = '\0';
            e.text = with;
        }
        /* In order of position (a few edits: insertion sort). */
        size_t i = n++;
        while (i > 0 && edits[i - 1].start > e.start) {
            edits[i] = edits[i - 1];
            i--;
        }
        edits[i] = e;
    }
    size_t size = file->len + 1;
    for (size_t k = 0; k < n; k++) size += strlen(edits[k].text);
    char *out = arena_alloc(E->arena, size), *o = out;
    size_t from = 0;
    for (size_t k = 0; k < n; k++) {
        memcpy(o, t + from, edits[k].start - from);
        o += edits[k].start - from;
        o = stpcpy(o, edits[k].text);
        from = edits[k].end;
    }
    memcpy(o, t + from, file->len - from);
    o[file->len - from] = '\0';
    return out;
}
