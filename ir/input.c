/* Input sequences: "abc" (its characters), [1, -2.5, "a", True] (atoms), or a bare word. */
#include "ir/input.h"

#include <string.h>

#include "parser/parser.h"

/* One list element: a literal, a signed number, True or False. */
static bool literal_atom(const AstExpr *e, Value *out) {
    switch (e->kind) {
    case AST_INT_LIT: *out = value_int(e->u.int_value); return true;
    case AST_FLOAT_LIT: *out = value_float(e->u.float_value); return true;
    case AST_STRING_LIT: *out = value_str(e->u.string_value); return true;
    case AST_NAME:
        if (strcmp(e->u.name, "True") == 0) *out = value_bool(true);
        else if (strcmp(e->u.name, "False") == 0) *out = value_bool(false);
        else return false;
        return true;
    case AST_UNARY: {
        const AstExpr *x = e->u.unary.operand;
        bool neg = e->u.unary.op == AST_NEG;
        if (!neg && e->u.unary.op != AST_POS) return false;
        if (x->kind == AST_INT_LIT) *out = value_int(neg ? -x->u.int_value : x->u.int_value);
        else if (x->kind == AST_FLOAT_LIT) *out = value_float(neg ? -x->u.float_value : x->u.float_value);
        else return false;
        return true;
    }
    default: return false;
    }
}

/* The characters of s, one string atom each. */
static void characters(Arena *arena, const char *s, size_t len, Value **atoms, size_t *n) {
    *n = len;
    *atoms = ARENA_ARRAY(arena, Value, len ? len : 1);
    for (size_t i = 0; i < len; i++) (*atoms)[i] = value_str(arena_strndup(arena, s + i, 1));
}

bool input_parse(Arena *arena, const char *text, Value **atoms, size_t *n, char *errbuf, size_t errsize) {
    while (*text == ' ' || *text == '\t') text++;
    size_t len = strlen(text);
    while (len && strchr(" \t\r\n", text[len - 1])) len--;
    if (len == 0) {
        snprintf(errbuf, errsize, "empty input (write \"\" for the empty sequence)");
        return false;
    }
    /* Anything that does not start like a string or list literal is a bare word. */
    if (text[0] != '"' && text[0] != '[') {
        characters(arena, text, len, atoms, n);
        return true;
    }
    Arena scratch;
    arena_init(&scratch);
    DiagList diags;
    diag_init(&diags, &scratch);
    SourceFile *file = source_from_string(&scratch, "<input>", arena_strndup(&scratch, text, len));
    AstExpr *e = NULL;
    bool ok = parse_expression(&scratch, file, &e, &diags);
    if (!ok) {
        const char *why = "not a valid literal";
        for (size_t i = 0; i < diags.count; i++)
            if (diags.items[i].severity == DIAG_ERROR) { why = diags.items[i].message; break; }
        snprintf(errbuf, errsize, "bad input %.*s: %s", (int)(len > 60 ? 60 : len), text, why);
    } else if (e->kind == AST_STRING_LIT) {
        characters(arena, e->u.string_value, strlen(e->u.string_value), atoms, n);
    } else if (e->kind == AST_LIST) {
        *n = e->u.list.count;
        *atoms = ARENA_ARRAY(arena, Value, *n ? *n : 1);
        for (size_t i = 0; ok && i < *n; i++) {
            Value v;
            ok = literal_atom(e->u.list.items[i], &v);
            if (!ok)
                snprintf(errbuf, errsize, "bad input: element %zu of the list is not an atom literal "
                         "(a number, a string, True or False)", i + 1);
            else
                (*atoms)[i] = v.kind == VAL_STR ? value_str(arena_strdup(arena, v.as.s)) : v;
        }
    } else {
        ok = false;
        snprintf(errbuf, errsize, "bad input: expected a string \"...\" or a list [...] of atoms");
    }
    arena_free(&scratch);
    return ok;
}
