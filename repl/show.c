/* The original REPL's printouts of values, s-ops, selectors and examples, character for
 * character (its REPL.py print_named_val, print_seq, print_select, Support.py's Sequence). The
 * original builds lines with Python's print(a, b, ...), which puts one space between arguments;
 * the comments give those calls' shapes, since the spaces they make are the format. */
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"
#include "repl/repl.h"
#include "repl/syntax.h"

/* formatstr: a string in double quotes, anything else as Python's str(). */
static const char *formatstr(Arena *a, MetaValue v) {
    if (v.kind == MV_ATOM && v.u.atom.kind == VAL_STR) return arena_printf(a, "\"%s\"", v.u.atom.as.s);
    return meta_pystr(a, v);
}

/* Python's str() of each element of an example (a string's characters, a list's items). */
static const char **example_items(Arena *a, MetaValue ex, size_t *n) {
    *n = 0;
    const char **items;
    if (ex.kind == MV_ATOM && ex.u.atom.kind == VAL_STR) {
        const char *s = ex.u.atom.as.s;
        size_t len = strlen(s);
        items = ARENA_ARRAY(a, const char *, len ? len : 1);
        for (size_t i = 0; i < len;) {
            size_t k = 1;
            while (i + k < len && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
            items[(*n)++] = arena_strndup(a, s + i, k);
            i += k;
        }
    } else if (ex.kind == MV_LIST) {
        items = ARENA_ARRAY(a, const char *, ex.u.list.count ? ex.u.list.count : 1);
        for (size_t i = 0; i < ex.u.list.count; i++) items[(*n)++] = meta_pystr(a, ex.u.list.items[i]);
    } else if (ex.kind == MV_DICT) {
        items = ARENA_ARRAY(a, const char *, ex.u.dict.count ? ex.u.dict.count : 1);
        for (size_t i = 0; i < ex.u.dict.count; i++)
            items[(*n)++] = meta_pystr(a, (MetaValue){.kind = MV_ATOM, .u.atom = ex.u.dict.keys[i]});
    } else {
        items = ARENA_ARRAY(a, const char *, 1);
    }
    return items;
}

/* Support.lazy_type_check: the first of str, bool, int, float that every value is (a bool is an
 * int), "float" for mixed numbers; strings mixed with numbers never get here (the evaluator
 * refuses them). An empty list passes as strings. */
static const char *lazy_type(const Value *v, size_t n) {
    static const ValueKind order[] = {VAL_STR, VAL_BOOL, VAL_INT, VAL_FLOAT};
    for (size_t k = 0; k < 4; k++) {
        bool all = true;
        for (size_t i = 0; i < n && all; i++)
            all = v[i].kind == order[k] || (order[k] == VAL_INT && v[i].kind == VAL_BOOL);
        if (all) return order[k] == VAL_STR ? "string" : value_kind_name(order[k]);
    }
    return "float";
}

/* Support.small_str: floats rounded to 3 places, bools T/F, the rest as str(). */
static const char *small_str(Arena *a, Value v) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return "?";
    value_print_repl(m, v);
    fclose(m);
    const char *s = arena_strdup(a, buf);
    free(buf);
    return s;
}

/* Python's set semantics: all values equal (1 == 1.0 == True). */
static bool all_equal(const Value *v, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (!value_equal(v[0], v[i])) return false;
    return true;
}

/* str(Sequence): "[1, 2, 3] (ints)", or "[5]*5 (ints)" when every value is the same. */
static const char *seq_str(Arena *a, const Value *v, size_t n) {
    const char *body;
    if (n > 1 && all_equal(v, n)) {
        body = arena_printf(a, "[%s]*%zu", small_str(a, v[0]), n);
    } else {
        body = "[";
        for (size_t i = 0; i < n; i++) body = arena_printf(a, "%s%s%s", body, i ? ", " : "", small_str(a, v[i]));
        body = arena_printf(a, "%s]", body);
    }
    return arena_printf(a, "%s (%ss)", body, lazy_type(v, n));
}

/* print_seq's cleanboolslist: a bool sequence shows only its rarer value (T or F). */
static const char **clean_values(Arena *a, const Value *v, size_t n) {
    const char **out = ARENA_ARRAY(a, const char *, n ? n : 1);
    size_t trues = 0;
    for (size_t i = 0; i < n; i++) trues += v[i].kind == VAL_BOOL && v[i].as.b;
    bool bools = n > 0 && v[0].kind == VAL_BOOL;
    for (size_t i = 0; i < n; i++) {
        if (bools) {
            bool t = v[i].kind == VAL_BOOL ? v[i].as.b : value_truthy(v[i]);
            out[i] = t ? (trues <= n - trues ? "T" : "") : (n - trues <= trues ? "F" : "");
        } else {
            out[i] = meta_pystr(a, (MetaValue){.kind = MV_ATOM, .u.atom = v[i]});
        }
    }
    return out;
}

static void print_neat(FILE *out, const char **items, size_t n, size_t width) {
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(items[i]);
        fprintf(out, "%s%*s%s", i ? " " : "", (int)(width > len ? width - len : 0), "", items[i]);
    }
}

/* print_seq: one line when every value is the same, else the input and output aligned:
 *   print(extra_pref, "\t\tinput:  ", neatline(example), "\t", "(strings)") */
static void print_seq(Repl *r, Arena *a, MetaValue example, const Value *v, size_t n, bool still_on_prev_line,
                      const char *extra_pref, const char *lastpref) {
    FILE *out = r->out;
    if (n > 0 && all_equal(v, n)) {
        /* print(extra_pref if not still_on_prev_line else "", lastpref, str(seq), end=" ") */
        fprintf(out, "%s %s %s [skipped full display: identical values]\n", still_on_prev_line ? "" : extra_pref,
                lastpref, seq_str(a, v, n));
        return;
    }
    if (still_on_prev_line) fputc('\n', out);
    size_t ne;
    const char **ex = example_items(a, example, &ne);
    const char **vals = clean_values(a, v, n);
    size_t width = 0;
    for (size_t i = 0; i < ne; i++) width = strlen(ex[i]) > width ? strlen(ex[i]) : width;
    for (size_t i = 0; i < n; i++) width = strlen(vals[i]) > width ? strlen(vals[i]) : width;
    fprintf(out, "%s \t\tinput:   ", extra_pref);
    print_neat(out, ex, ne, width);
    fprintf(out, " \t (strings)\n%s \t\toutput:  ", extra_pref);
    print_neat(out, vals, n, width);
    fprintf(out, " \t (%ss)\n", lazy_type(v, n));
}

/* print_select:
 *   print(extra_pref, "\t\t\t    ", " ".join(example))
 *   print(extra_pref, "\t\t\t", v, "|", " ".join("1" or " " per key))   for each query */
static void print_select(Repl *r, Arena *a, MetaValue example, const bool *m, size_t n, const char *extra_pref) {
    size_t ne;
    const char **ex = example_items(a, example, &ne);
    fprintf(r->out, "%s \t\t\t     ", extra_pref);
    for (size_t i = 0; i < ne; i++) fprintf(r->out, "%s%s", i ? " " : "", ex[i]);
    fputc('\n', r->out);
    for (size_t q = 0; q < n && q < ne; q++) {
        fprintf(r->out, "%s \t\t\t %s | ", extra_pref, ex[q]);
        for (size_t k = 0; k < n; k++) fprintf(r->out, "%s%s", k ? " " : "", m[q * n + k] ? "1" : " ");
        fputc('\n', r->out);
    }
}

static const char *label_of(MetaValue v) {
    if (v.label && v.label->name) return v.label->name;
    return v.kind == MV_SEL ? "plain select" : "s-op";
}

/* True for the values print_named_val shows element by element. */
static bool nested(MetaValue v) {
    return v.kind == MV_LIST || v.kind == MV_DICT || v.kind == MV_SOP || v.kind == MV_SEL;
}

/* str(RASPFunction): "console function: foo(a, b)". */
static const char *function_str(Arena *a, MetaValue v) {
    if (v.kind == MV_PRIM) return "RASP_support/rasplib function: selector_width(sel)";
    const AstStmt *def = v.u.func->def;
    const char *params = "";
    for (size_t i = 0; i < def->u.def.params.count; i++)
        params = arena_printf(a, "%s%s%s", params, i ? ", " : "", def->u.def.params.names[i]);
    const char *creator = v.u.func->env->name ? v.u.func->env->name : "console";
    return arena_printf(a, "%s function: %s(%s)", creator, def->u.def.name, params);
}

/* print_named_val(name, val, ntabs, extra_first_pref). */
static bool print_named(Repl *r, Arena *a, const char *name, MetaValue v, int ntabs, const char *extra,
                        ElabFault *fault) {
    FILE *out = r->out;
    char pref[64];
    int t = ntabs < 60 ? ntabs : 60;
    memset(pref, '\t', (size_t)t);
    pref[t] = '\0';
    if (!name && (v.kind == MV_SOP || v.kind == MV_SEL)) name = label_of(v);
    void *res;
    size_t n;
    switch (v.kind) {
    case MV_SOP:
        fprintf(out, "%s %s    s-op: %s\n", pref, extra, name); /* print(pref, extra, "   s-op:", name) */
        if (!r->show_seq_examples) return true;
        if (r->verbose) {
            fprintf(out, "%s \t Example:", pref);
            if (!elab_session_apply(r->session, v.u.node, r->seq_example, a, &res, &n, fault)) return false;
            const char *desc = arena_printf(a, "%s(%s) =", name, formatstr(a, r->seq_example));
            print_seq(r, a, r->sel_example, res, n, true, pref, desc);
            return true;
        }
        if (!elab_session_apply(r->session, v.u.node, r->seq_example, a, &res, &n, fault)) return false;
        fprintf(out, "%s \t Example: %s(%s) = %s\n", pref, name, formatstr(a, r->seq_example), seq_str(a, res, n));
        return true;
    case MV_SEL:
        fprintf(out, "%s %s    selector: %s\n", pref, extra, name);
        if (!r->show_sel_examples) return true;
        fprintf(out, "%s \t Example:\n", pref);
        if (!elab_session_apply(r->session, v.u.node, r->sel_example, a, &res, &n, fault)) return false;
        print_select(r, a, r->sel_example, res, n, pref);
        return true;
    case MV_FUNC:
    case MV_PRIM:
        fprintf(out, "%s %s    %s\n", pref, extra, function_str(a, v));
        return true;
    case MV_LIST:
    case MV_DICT: {
        bool is_list = v.kind == MV_LIST;
        const char *named = arena_printf(a, "   %s: %s", is_list ? "list" : "dict",
                                         name ? arena_printf(a, "%s = ", name) : "");
        fprintf(out, "%s %s %s", pref, extra, named);
        size_t count = is_list ? v.u.list.count : v.u.dict.count;
        bool flat = true;
        for (size_t i = 0; i < count; i++) flat = flat && !nested(is_list ? v.u.list.items[i] : v.u.dict.values[i]);
        if (flat) {
            fprintf(out, "%s\n", meta_pystr(a, v));
            return true;
        }
        fprintf(out, "%s %s\n", pref, is_list ? "[" : "{");
        for (size_t i = 0; i < count; i++) {
            bool ok = is_list ? print_named(r, a, NULL, v.u.list.items[i], ntabs + 2, "", fault)
                              : print_named(r, a, NULL, v.u.dict.values[i], ntabs + 3,
                                            arena_printf(a, "%s : ", formatstr(a, (MetaValue){.kind = MV_ATOM,
                                                                                   .u.atom = v.u.dict.keys[i]})),
                                            fault);
            if (!ok) return false;
        }
        fprintf(out, "%s%*s%s\n", pref, (int)strlen(named) + 2, "", is_list ? "]" : "}");
        return true;
    }
    case MV_ATOM:
        /* print(f"{pref}    value: {namestr}", formatstr(val)) */
        fprintf(out, "%s    value: %s %s\n", pref, name ? arena_printf(a, "%s = ", name) : "", formatstr(a, v));
        return true;
    }
    return true;
}

/* print_just_val: the result of applying an s-op or selector to an input. */
static bool print_applied(Repl *r, Arena *a, IrNode *node, MetaValue input, ElabFault *fault) {
    void *res;
    size_t n;
    if (!elab_session_apply(r->session, node, input, a, &res, &n, fault)) return false;
    if (ir_is_selector(node)) {
        fprintf(r->out, "\t = \n");
        print_select(r, a, input, res, n, "");
    } else if (r->verbose) {
        fprintf(r->out, "\t = ");
        print_seq(r, a, input, res, n, true, "", "");
    } else {
        fprintf(r->out, "\t =  %s\n", seq_str(a, res, n));
    }
    return true;
}

bool show_entry(Repl *r, const ReplEntry *e, ElabFault *fault) {
    if (!e->print) return true;
    Arena a;
    arena_init(&a);
    bool ok = true;
    switch (e->kind) {
    case ENTRY_NAMED: ok = print_named(r, &a, e->name, e->value, 0, "", fault); break;
    case ENTRY_APPLIED: ok = print_applied(r, &a, e->node, e->value, fault); break;
    case ENTRY_EXAMPLE:
        if (e->subset != SYN_SELECTOR) fprintf(r->out, "\ts-op example: %s\n", formatstr(&a, r->seq_example));
        if (e->subset != SYN_SOP) fprintf(r->out, "\tselector example: %s\n", formatstr(&a, r->sel_example));
        break;
    case ENTRY_TEXT: fprintf(r->out, "%s\n", e->text); break;
    }
    arena_free(&a);
    return ok;
}
