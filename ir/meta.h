/* The values of the RASP meta-language, as the elaborator computes them: atoms, lists, dicts and
 * functions are compile-time data; s-ops and selectors are IR nodes. Public so that an
 * interactive session (ir/session.h) can show them; only the elaborator builds them.
 *
 * Labels: in a session, every s-op and selector value carries a label, the name the original
 * interpreter gives that object ("( indices + 4 )", "plain select", "checkfor(\"a\" , \"<\")").
 * Copies of a value share its label, and assignment renames the labelled object, as Python's
 * objects are renamed in the original (`b = a;` renames the object both names hold). Batch
 * elaboration leaves labels NULL. */
#ifndef RASPCC_IR_META_H
#define RASPCC_IR_META_H

#include "ir/ir.h"
#include "parser/ast.h"

typedef enum MvKind {
    MV_ATOM,  /* u.atom */
    MV_LIST,  /* u.list (also the tuple a function with several return values yields) */
    MV_DICT,  /* u.dict: atom keys in insertion order */
    MV_FUNC,  /* u.func: a closure */
    MV_SOP,   /* u.node, not a selector */
    MV_SEL,   /* u.node, a selector */
    MV_PRIM,  /* u.prim: a built-in name, materialised when looked up */
} MvKind;

/* The built-in names of the root environment. */
typedef enum Prim {
    PRIM_TOKENS_STR, PRIM_TOKENS_INT, PRIM_TOKENS_FLOAT, PRIM_TOKENS_BOOL,
    PRIM_INDICES, PRIM_LENGTH,
    PRIM_SELECTOR_WIDTH, /* the only native function */
    PRIM_TOKENS_ASIS,    /* sessions only: the input as it is (IR_TOKENS_ASIS) */
} Prim;

typedef struct MetaValue MetaValue;
typedef struct Closure Closure;
typedef struct Env Env;

/* The name of an s-op or selector object (see above). */
typedef struct MvLabel {
    const char *name;
} MvLabel;

struct MetaValue {
    MvKind kind;
    union {
        Value atom;
        struct { MetaValue *items; size_t count; } list;
        struct { Value *keys; MetaValue *values; size_t count; } dict;
        const Closure *func;
        IrNode *node;
        Prim prim;
    } u;
    MvLabel *label; /* MV_SOP / MV_SEL in a session; NULL otherwise */
};

/* A `def`: its AST and the environment it was defined in (lexical scoping). */
struct Closure {
    const AstStmt *def; /* AST_STMT_DEF */
    Env *env;
};

typedef struct EnvEntry {
    const char *name;
    MetaValue value;
    SrcLoc loc; /* of the last assignment */
} EnvEntry;

/* A scope. Lookups walk `parent`; assignments write this scope. A scope created by `load`
 * also writes every public name (not starting with '_') into `export_to`, as the original
 * REPL's file environments do. */
struct Env {
    Env *parent;
    Env *export_to;
    bool protect_outer; /* the program's top scope: prelude and built-in names are reserved */
    bool keeps_out;     /* sessions: `out` is bound to each expression evaluated here */
    const char *name;   /* sessions: what the original calls it ("console", a file's name) */
    EnvEntry *entries;  /* in order of first assignment */
    size_t count, cap;
};

/* The original's descriptions of values, for messages and names (its `strdesc`): an s-op by
 * its label, a string in double quotes, lists and dicts element by element; with cap > 0 a list
 * or dict longer than cap characters is "(list)" / "(dict)". Allocated in `a`. */
const char *meta_strdesc(Arena *a, MetaValue v, size_t cap);
/* Python's str() of a value: atoms as Python prints them (True, 1.5, a string bare), lists and
 * dicts with repr'd elements (['a', 3], {'1': 1}). */
const char *meta_pystr(Arena *a, MetaValue v);
/* Python's repr() of an atom ('a' quoted). */
const char *meta_atom_repr(Arena *a, Value v);
/* Python's type name of a value: 'int', 'str', 'list', 'dict', 'RASPFunction',
 * 'UnfinishedSequence', 'UnfinishedSelect'. */
const char *meta_py_type(MetaValue v);

#endif
