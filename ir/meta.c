/* Descriptions of meta-values the original interpreter's way (ir/meta.h). */
#include "ir/meta.h"

#include <string.h>

/* A growing string in an arena. */
typedef struct Str {
    Arena *a;
    char *buf;
    size_t len, cap;
} Str;

static void str_add(Str *s, const char *t) {
    size_t n = strlen(t);
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->len + n + 1) * 2;
        char *nb = arena_alloc(s->a, cap);
        if (s->len) memcpy(nb, s->buf, s->len);
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, t, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

static const char *str_done(Str *s) {
    if (!s->buf) str_add(s, "");
    return s->buf;
}

/* Python's str() of an atom. */
static const char *atom_str(Arena *a, Value v) {
    char buf[64];
    switch (v.kind) {
    case VAL_STR: return v.as.s;
    case VAL_BOOL: return v.as.b ? "True" : "False";
    default: value_format(v, buf, sizeof buf); return arena_strdup(a, buf);
    }
}

const char *meta_atom_repr(Arena *a, Value v) {
    if (v.kind != VAL_STR) return atom_str(a, v);
    const char *s = v.as.s;
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    Str out = {a, NULL, 0, 0};
    char one[8] = {q, 0};
    str_add(&out, one);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        if (*c == '\\') strcpy(esc, "\\\\");
        else if (*c == (unsigned char)q) snprintf(esc, sizeof esc, "\\%c", q);
        else if (*c == '\n') strcpy(esc, "\\n");
        else if (*c == '\t') strcpy(esc, "\\t");
        else if (*c == '\r') strcpy(esc, "\\r");
        else if (*c < 0x20 || *c == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", *c);
        else { esc[0] = (char)*c; esc[1] = 0; }
        str_add(&out, esc);
    }
    str_add(&out, one);
    return str_done(&out);
}

static const char *label_name(MetaValue v) {
    if (v.label && v.label->name) return v.label->name;
    if (v.u.node && v.u.node->name) return v.u.node->name;
    return v.kind == MV_SEL ? "plain select" : "s-op";
}

static void strdesc_into(Str *s, MetaValue v, size_t cap);

/* A list or dict, "(list)" / "(dict)" when its description is longer than cap. */
static void container_desc(Str *s, MetaValue v, size_t cap) {
    Str inner = {s->a, NULL, 0, 0};
    bool is_list = v.kind == MV_LIST;
    str_add(&inner, is_list ? "[" : "{");
    size_t n = is_list ? v.u.list.count : v.u.dict.count;
    for (size_t i = 0; i < n; i++) {
        if (i) str_add(&inner, ", ");
        if (is_list) {
            strdesc_into(&inner, v.u.list.items[i], 0);
        } else {
            strdesc_into(&inner, (MetaValue){.kind = MV_ATOM, .u.atom = v.u.dict.keys[i]}, 0);
            str_add(&inner, ": ");
            strdesc_into(&inner, v.u.dict.values[i], 0);
        }
    }
    str_add(&inner, is_list ? "]" : "}");
    if (cap && inner.len > cap) str_add(s, is_list ? "(list)" : "(dict)");
    else str_add(s, str_done(&inner));
}

static void strdesc_into(Str *s, MetaValue v, size_t cap) {
    switch (v.kind) {
    case MV_ATOM:
        if (v.u.atom.kind == VAL_STR) {
            str_add(s, "\"");
            str_add(s, v.u.atom.as.s);
            str_add(s, "\"");
        } else {
            str_add(s, atom_str(s->a, v.u.atom));
        }
        return;
    case MV_SOP: case MV_SEL: str_add(s, label_name(v)); return;
    case MV_LIST: case MV_DICT: container_desc(s, v, cap); return;
    case MV_FUNC: str_add(s, v.u.func->def->u.def.name); return;
    case MV_PRIM: str_add(s, "selector_width"); return;
    }
}

const char *meta_strdesc(Arena *a, MetaValue v, size_t cap) {
    Str s = {a, NULL, 0, 0};
    strdesc_into(&s, v, cap);
    return str_done(&s);
}

static void repr_into(Str *s, MetaValue v) {
    switch (v.kind) {
    case MV_ATOM: str_add(s, meta_atom_repr(s->a, v.u.atom)); return;
    case MV_LIST:
        str_add(s, "[");
        for (size_t i = 0; i < v.u.list.count; i++) {
            if (i) str_add(s, ", ");
            repr_into(s, v.u.list.items[i]);
        }
        str_add(s, "]");
        return;
    case MV_DICT:
        str_add(s, "{");
        for (size_t i = 0; i < v.u.dict.count; i++) {
            if (i) str_add(s, ", ");
            str_add(s, meta_atom_repr(s->a, v.u.dict.keys[i]));
            str_add(s, ": ");
            repr_into(s, v.u.dict.values[i]);
        }
        str_add(s, "}");
        return;
    case MV_SOP:
        str_add(s, "<UnfinishedSequence ");
        str_add(s, label_name(v));
        str_add(s, ">");
        return;
    case MV_SEL:
        str_add(s, "<UnfinishedSelect ");
        str_add(s, label_name(v));
        str_add(s, ">");
        return;
    case MV_FUNC: case MV_PRIM:
        str_add(s, "<RASPFunction>");
        return;
    }
}

const char *meta_pystr(Arena *a, MetaValue v) {
    if (v.kind == MV_ATOM) return atom_str(a, v.u.atom);
    Str s = {a, NULL, 0, 0};
    repr_into(&s, v);
    return str_done(&s);
}

const char *meta_py_type(MetaValue v) {
    static const char *const atoms[] = {"bool", "int", "float", "str"};
    switch (v.kind) {
    case MV_ATOM: return atoms[v.u.atom.kind];
    case MV_LIST: return "list";
    case MV_DICT: return "dict";
    case MV_FUNC: case MV_PRIM: return "RASPFunction";
    case MV_SOP: return "UnfinishedSequence";
    case MV_SEL: return "UnfinishedSelect";
    }
    return "object";
}
