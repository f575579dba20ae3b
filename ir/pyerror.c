/* Python's exception texts (ir/pyerror.h). */
#include "ir/pyerror.h"

#include <math.h>
#include <string.h>

const char *py_atom_type(Value v) {
    static const char *const names[] = {"bool", "int", "float", "str"};
    return names[v.kind];
}

static bool is_intlike(Value v) { return v.kind == VAL_INT || v.kind == VAL_BOOL; }

/* Python spells ^ (pow) as ** in its messages. */
static const char *py_op_text(ValueOp op) {
    return op == VOP_POW ? "** or pow()" : value_op_text(op);
}

const char *py_type_error(Arena *a, ValueOp op, const char *tx, const char *ty) {
    switch (op) {
    case VOP_LT: case VOP_GT: case VOP_LE: case VOP_GE:
        return arena_printf(a, "'%s' not supported between instances of '%s' and '%s'",
                            value_op_text(op), tx, ty);
    case VOP_ADD:
        if (strcmp(tx, "str") == 0 || strcmp(tx, "list") == 0)
            return arena_printf(a, "can only concatenate %s (not \"%s\") to %s", tx, ty, tx);
        break;
    case VOP_MUL:
        if ((strcmp(tx, "str") == 0 || strcmp(tx, "list") == 0) && strcmp(ty, "int") != 0)
            return arena_printf(a, "can't multiply sequence by non-int of type '%s'", ty);
        if ((strcmp(ty, "str") == 0 || strcmp(ty, "list") == 0) && strcmp(tx, "int") != 0)
            return arena_printf(a, "can't multiply sequence by non-int of type '%s'", tx);
        break;
    case VOP_MOD:
        if (strcmp(tx, "str") == 0) return "not all arguments converted during string formatting";
        break;
    default: break;
    }
    return arena_printf(a, "unsupported operand type(s) for %s: '%s' and '%s'", py_op_text(op), tx, ty);
}

const char *py_binary_error(Arena *a, ValueOp op, Value x, Value y) {
    bool strs = x.kind == VAL_STR || y.kind == VAL_STR;
    if (strs) return py_type_error(a, op, py_atom_type(x), py_atom_type(y));
    switch (op) {
    case VOP_DIV:
        if (value_as_double(y) == 0.0)
            return is_intlike(x) && is_intlike(y) ? "division by zero" : "float division by zero";
        break;
    case VOP_MOD:
        if (value_as_double(y) == 0.0)
            return is_intlike(x) && is_intlike(y) ? "integer modulo by zero" : "float modulo";
        break;
    case VOP_POW:
        if (value_as_double(x) == 0.0 && value_as_double(y) < 0)
            return "0.0 cannot be raised to a negative power";
        return "(34, 'Numerical result out of range')";
    default: break;
    }
    char msg[256];
    ValueResult r = value_binary(op, x, y, a, msg, sizeof msg);
    return r.ok ? "error" : arena_strdup(a, r.error);
}

const char *py_unary_error(Arena *a, ValueOp op, Value x) {
    if (op == VOP_ROUND) {
        if (x.kind == VAL_STR) return "type str doesn't define __round__ method";
        if (x.kind == VAL_FLOAT && isnan(x.as.f)) return "cannot convert float NaN to integer";
        return "cannot convert float infinity to integer";
    }
    if (x.kind == VAL_STR) return arena_printf(a, "bad operand type for unary %s: 'str'", value_op_text(op));
    char msg[256];
    ValueResult r = value_unary(op, x, msg, sizeof msg);
    return r.ok ? "error" : arena_strdup(a, r.error);
}

/* Python's repr() of a list of atoms. */
static const char *repr_values(Arena *a, const Value *v, size_t n) {
    size_t cap = 64, len = 0;
    char *buf = arena_alloc(a, cap);
    buf[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        const char *r = meta_atom_repr(a, v[i]);
        size_t need = len + strlen(r) + 4;
        if (need > cap) {
            size_t ncap = need * 2;
            char *nb = arena_alloc(a, ncap);
            memcpy(nb, buf, len);
            buf = nb;
            cap = ncap;
        }
        if (i) { buf[len++] = ','; buf[len++] = ' '; }
        memcpy(buf + len, r, strlen(r));
        len += strlen(r);
    }
    buf[len++] = ']';
    buf[len] = '\0';
    return buf;
}

/* The comparison select(keys, queries, cmp) makes: Python evaluates `query OP key`. */
static ValueOp select_python_op(IrCmp c) {
    switch (c) {
    case IR_CMP_LT: return VOP_GT;
    case IR_CMP_GT: return VOP_LT;
    case IR_CMP_LE: return VOP_GE;
    case IR_CMP_GE: return VOP_LE;
    case IR_CMP_EQ: return VOP_EQ;
    case IR_CMP_NE: return VOP_NE;
    }
    return VOP_EQ;
}

ElabFault py_eval_fault(Arena *a, const IrEvalError *err) {
    ElabFault f = {ELAB_FAULT_EXCEPTION, arena_strdup(a, err->message)};
    const IrNode *n = err->node;
    switch (err->fault) {
    case IR_FAULT_TOKEN:
        break; /* ir_convert_token_python words it as Python does */
    case IR_FAULT_AVERAGE:
        f.text = arena_printf(a, "asked to average multiple values, but they are non-numbers: %s",
                              repr_values(a, err->values, err->n));
        break;
    case IR_FAULT_MIXED:
        f.kind = ELAB_FAULT_IGNORED;
        f.text = arena_printf(a, "attempted to create sequence with vals of different types:\n\t\t %s",
                              repr_values(a, err->values, err->n));
        break;
    case IR_FAULT_SELECT:
        f.text = py_type_error(a, select_python_op(n->u.select.cmp), py_atom_type(err->args[1]),
                               py_atom_type(err->args[0]));
        break;
    case IR_FAULT_MAP:
        switch (n->u.map.kind) {
        case IR_MAP_BINARY: f.text = py_binary_error(a, n->u.map.op, err->args[0], err->args[1]); break;
        case IR_MAP_UNARY: f.text = py_unary_error(a, n->u.map.op, err->args[0]); break;
        case IR_MAP_LOOKUP:
            f.kind = ELAB_FAULT_IGNORED;
            f.text = arena_printf(a, "index [ %s ] not in dict.",
                                  meta_strdesc(a, (MetaValue){.kind = MV_ATOM, .u.atom = err->args[0]}, 0));
            break;
        case IR_MAP_INDEX:
            f.kind = ELAB_FAULT_IGNORED;
            if (!is_intlike(err->args[0]))
                f.text = arena_printf(a, "index into list has to be integer, got: %s",
                                      meta_strdesc(a, (MetaValue){.kind = MV_ATOM, .u.atom = err->args[0]}, 0));
            else
                f.text = arena_printf(a, "index %lld out of range for list of length %zu",
                                      (long long)(err->args[0].kind == VAL_BOOL ? err->args[0].as.b : err->args[0].as.i),
                                      n->u.map.table_len);
            break;
        default: break;
        }
        break;
    case IR_FAULT_OTHER: break;
    }
    return f;
}
