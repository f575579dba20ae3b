/* The reference evaluator: straightforward, node by node in topological order, only over the
 * nodes the requested output depends on. */
#include "ir/eval.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool ir_convert_token(IrTokenType type, Value in, Value *out, char *errbuf, size_t errsize) {
    char v[96];
    switch (type) {
    case IR_TOKENS_STR:
        if (in.kind == VAL_STR) { *out = in; return true; }
        break;
    case IR_TOKENS_INT:
        if (in.kind == VAL_INT) { *out = in; return true; }
        if (in.kind == VAL_BOOL) { *out = value_int(in.as.b); return true; }
        break;
    case IR_TOKENS_FLOAT:
        if (in.kind != VAL_STR) { *out = value_float(value_as_double(in)); return true; }
        break;
    case IR_TOKENS_BOOL:
        if (in.kind == VAL_BOOL) { *out = in; return true; }
        break;
    }
    value_format(in, v, sizeof v);
    snprintf(errbuf, errsize, "input token %s is not valid for %s", v, ir_token_type_name(type));
    return false;
}

/* Python's int() of a string: optional blanks and sign, decimal digits with single underscores
 * between them. */
static bool python_int_literal(const char *s, int64_t *out) {
    while (isspace((unsigned char)*s)) s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s)) return false;
    __int128 v = 0;
    for (; *s; s++) {
        if (*s == '_' && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[-1])) continue;
        if (!isdigit((unsigned char)*s)) break;
        v = v * 10 + (*s - '0');
        if (v > (__int128)INT64_MAX + 1) return false;
    }
    while (isspace((unsigned char)*s)) s++;
    if (*s) return false;
    v = neg ? -v : v;
    if (v > INT64_MAX) return false;
    *out = (int64_t)v;
    return true;
}

bool ir_convert_token_python(IrTokenType type, Value in, Arena *arena, Value *out, char *errbuf,
                             size_t errsize) {
    char text[96];
    if (type == IR_TOKENS_ASIS) {
        *out = in;
        return true;
    }
    switch (type) {
    case IR_TOKENS_STR:
        if (in.kind == VAL_STR) { *out = in; return true; }
        if (in.kind == VAL_BOOL) { *out = value_str(in.as.b ? "True" : "False"); return true; }
        value_format(in, text, sizeof text); /* ints and floats print as Python's str() */
        *out = value_str(arena_strdup(arena, text));
        return true;
    case IR_TOKENS_INT:
        if (in.kind == VAL_INT) { *out = in; return true; }
        if (in.kind == VAL_BOOL) { *out = value_int(in.as.b); return true; }
        if (in.kind == VAL_FLOAT) {
            if (isnan(in.as.f)) { snprintf(errbuf, errsize, "cannot convert float NaN to integer"); return false; }
            if (isinf(in.as.f)) { snprintf(errbuf, errsize, "cannot convert float infinity to integer"); return false; }
            double t = trunc(in.as.f);
            if (t < -9.2233720368547758e18 || t >= 9.2233720368547758e18) {
                snprintf(errbuf, errsize, "integer overflow converting %g", in.as.f);
                return false;
            }
            *out = value_int((int64_t)t);
            return true;
        }
        {
            int64_t i;
            if (python_int_literal(in.as.s, &i)) { *out = value_int(i); return true; }
        }
        snprintf(errbuf, errsize, "invalid literal for int() with base 10: '%.60s'", in.as.s);
        return false;
    case IR_TOKENS_FLOAT:
        if (in.kind != VAL_STR) { *out = value_float(value_as_double(in)); return true; }
        {
            const char *s = in.as.s;
            char *end;
            errno = 0;
            double d = strtod(s, &end);
            bool hex = strchr(s, 'x') || strchr(s, 'X');
            while (end != s && isspace((unsigned char)*end)) end++;
            if (end != s && !*end && !hex) { *out = value_float(d); return true; }
        }
        snprintf(errbuf, errsize, "could not convert string to float: '%.60s'", in.as.s);
        return false;
    case IR_TOKENS_BOOL:
        *out = value_bool(value_truthy(in));
        return true;
    }
    snprintf(errbuf, errsize, "unknown token type");
    return false;
}

typedef struct EvalState {
    const IrGraph *g;
    const Value *input;
    size_t n;
    Arena *scratch;
    void **results; /* per node id: Value[n] for s-ops, bool[n*n] for selectors, NULL if unused */
    IrEvalError *err;
    bool python_tokens;
} EvalState;

static bool fail(EvalState *st, const IrNode *node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(EvalState *st, const IrNode *node, const char *fmt, ...) {
    st->err->loc = node->loc;
    st->err->node = node;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->err->message, sizeof st->err->message, fmt, ap);
    va_end(ap);
    return false;
}

static const char *node_desc(const IrNode *n, char *buf, size_t size) {
    if (n->name) snprintf(buf, size, "'%s'", n->name);
    else snprintf(buf, size, "the %s", ir_kind_name(n->kind));
    return buf;
}

/* The original interpreter refuses a sequence that mixes strings with numbers or bools. */
static bool check_uniform(EvalState *st, const IrNode *node, const Value *v) {
    for (size_t i = 1; i < st->n; i++) {
        if ((v[i].kind == VAL_STR) != (v[0].kind == VAL_STR)) {
            char d[96];
            st->err->fault = IR_FAULT_MIXED;
            st->err->values = v;
            st->err->n = st->n;
            return fail(st, node, "%s mixes value types (%s at position 0, %s at position %zu)",
                        node_desc(node, d, sizeof d), value_kind_name(v[0].kind),
                        value_kind_name(v[i].kind), i);
        }
    }
    return true;
}

/* Mean over the selected positions, as Python's sum(...) * 1.0 / count: ints (and bools) add
 * exactly until the first float, then in floating point. */
static Value mean_of(const Value *vals, const bool *row, size_t n, size_t count) {
    bool acc_is_int = true;
    __int128 iacc = 0; /* cannot overflow: fewer than 2^64 int64 terms */
    double facc = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (!row[k]) continue;
        Value v = vals[k];
        if (acc_is_int && v.kind != VAL_FLOAT) {
            iacc += v.kind == VAL_BOOL ? v.as.b : v.as.i;
            continue;
        }
        if (acc_is_int) {
            facc = (double)iacc;
            acc_is_int = false;
        }
        facc += value_as_double(v);
    }
    double sum = acc_is_int ? (double)iacc : facc;
    return value_float(sum / (double)count);
}

static bool eval_aggregate(EvalState *st, const IrNode *node, Value *out) {
    const bool *sel = st->results[node->u.aggregate.selector->id];
    const Value *vals = st->results[node->u.aggregate.sop->id];
    size_t n = st->n;
    /* "numbers" as the original sees them: no strings, and not all bools */
    bool numeric = n > 0 && vals[0].kind != VAL_STR;
    bool all_bool = true;
    for (size_t k = 0; k < n; k++) all_bool = all_bool && vals[k].kind == VAL_BOOL;
    numeric = numeric && !all_bool;
    for (size_t q = 0; q < n; q++) {
        const bool *row = sel + q * n;
        size_t count = 0, last = 0;
        for (size_t k = 0; k < n; k++)
            if (row[k]) { count++; last = k; }
        if (count == 0) out[q] = node->u.aggregate.default_value;
        else if (count == 1) out[q] = vals[last];
        else if (!numeric) {
            char d[96];
            st->err->fault = IR_FAULT_AVERAGE;
            st->err->values = vals;
            st->err->n = n;
            return fail(st, node, "aggregate of %s averages %zu non-numeric values at position %zu",
                        node_desc(node->u.aggregate.sop, d, sizeof d), count, q);
        } else out[q] = mean_of(vals, row, n, count);
    }
    return true;
}

static bool eval_sop(EvalState *st, const IrNode *node, Value *out) {
    size_t n = st->n;
    char msg[200];
    switch (node->kind) {
    case IR_TOKENS:
        for (size_t i = 0; i < n; i++) {
            bool ok = st->python_tokens
                          ? ir_convert_token_python(node->u.token_type, st->input[i], st->scratch, &out[i], msg, sizeof msg)
                          : ir_convert_token(node->u.token_type, st->input[i], &out[i], msg, sizeof msg);
            if (!ok) {
                st->err->fault = IR_FAULT_TOKEN;
                st->err->args[0] = st->input[i];
                st->err->nargs = 1;
                return fail(st, node, "%s", msg);
            }
        }
        return node->u.token_type == IR_TOKENS_ASIS ? check_uniform(st, node, out) : true;
    case IR_INDICES:
        for (size_t i = 0; i < n; i++) out[i] = value_int((int64_t)i);
        return true;
    case IR_LENGTH:
        for (size_t i = 0; i < n; i++) out[i] = value_int((int64_t)n);
        return true;
    case IR_CONST:
        for (size_t i = 0; i < n; i++) out[i] = node->u.constant;
        return true;
    case IR_MAP: {
        const Value *args[3] = {0};
        for (uint32_t a = 0; a < node->u.map.nargs; a++) args[a] = st->results[node->u.map.args[a]->id];
        for (size_t i = 0; i < n; i++) {
            Value in[3];
            for (uint32_t a = 0; a < node->u.map.nargs; a++) in[a] = args[a][i];
            ValueResult r = ir_map_apply(node, in, st->scratch, msg, sizeof msg);
            if (!r.ok) {
                st->err->fault = IR_FAULT_MAP;
                memcpy(st->err->args, in, sizeof in);
                st->err->nargs = node->u.map.nargs;
                return fail(st, node, "%s (at position %zu)", r.error, i);
            }
            out[i] = r.value;
        }
        return check_uniform(st, node, out);
    }
    case IR_AGGREGATE:
        if (!eval_aggregate(st, node, out)) return false;
        return check_uniform(st, node, out);
    case IR_SELECTOR_WIDTH: {
        const bool *sel = st->results[node->u.width.selector->id];
        for (size_t q = 0; q < n; q++) {
            int64_t w = 0;
            for (size_t k = 0; k < n; k++) w += sel[q * n + k];
            out[q] = value_int(w);
        }
        return true;
    }
    default: break;
    }
    return fail(st, node, "internal error: %s is not an s-op", ir_kind_name(node->kind));
}

static bool eval_selector(EvalState *st, const IrNode *node, bool *out) {
    size_t n = st->n;
    char msg[200];
    switch (node->kind) {
    case IR_SELECT: {
        const Value *keys = st->results[node->u.select.keys->id];
        const Value *queries = st->results[node->u.select.queries->id];
        for (size_t q = 0; q < n; q++)
            for (size_t k = 0; k < n; k++) {
                ValueResult r = ir_cmp_apply(node->u.select.cmp, keys[k], queries[q], msg, sizeof msg);
                if (!r.ok) {
                    st->err->fault = IR_FAULT_SELECT;
                    st->err->args[0] = keys[k];
                    st->err->args[1] = queries[q];
                    st->err->nargs = 2;
                    return fail(st, node, "select: %s (key %zu, query %zu)", r.error, k, q);
                }
                out[q * n + k] = r.value.as.b;
            }
        return true;
    }
    case IR_SELECT_AND: case IR_SELECT_OR: {
        const bool *a = st->results[node->u.combine.lhs->id];
        const bool *b = st->results[node->u.combine.rhs->id];
        for (size_t i = 0; i < n * n; i++)
            out[i] = node->kind == IR_SELECT_AND ? (a[i] && b[i]) : (a[i] || b[i]);
        return true;
    }
    case IR_SELECT_NOT: {
        const bool *a = st->results[node->u.combine.lhs->id];
        for (size_t i = 0; i < n * n; i++) out[i] = !a[i];
        return true;
    }
    default: break;
    }
    return fail(st, node, "internal error: %s is not a selector", ir_kind_name(node->kind));
}

/* Marks the nodes `out` depends on. Arguments have smaller ids, so one descending sweep suffices
 * (no recursion: graphs from long unrolled loops can be deep). */
static void mark_needed(const IrGraph *g, const IrNode *out, bool *needed) {
    needed[out->id] = true;
    for (size_t id = out->id + 1; id-- > 0;) {
        if (!needed[id]) continue;
        const IrNode *n = g->nodes[id];
        switch (n->kind) {
        case IR_MAP:
            for (uint32_t a = 0; a < n->u.map.nargs; a++) needed[n->u.map.args[a]->id] = true;
            break;
        case IR_SELECT:
            needed[n->u.select.keys->id] = needed[n->u.select.queries->id] = true;
            break;
        case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
            needed[n->u.combine.lhs->id] = true;
            if (n->u.combine.rhs) needed[n->u.combine.rhs->id] = true;
            break;
        case IR_AGGREGATE:
            needed[n->u.aggregate.selector->id] = needed[n->u.aggregate.sop->id] = true;
            break;
        case IR_SELECTOR_WIDTH: needed[n->u.width.selector->id] = true; break;
        default: break;
        }
    }
}

static bool run(const IrGraph *g, const IrNode *out, const Value *input, size_t n, Arena *scratch,
                const IrEvalOptions *opt, IrEvalError *err, void ***results) {
    EvalState st = {g, input, n, scratch, NULL, err, opt && opt->python_tokens};
    memset(err, 0, sizeof *err);
    size_t count = (size_t)out->id + 1;
    bool *needed = ARENA_ARRAY(scratch, bool, count);
    st.results = ARENA_ARRAY(scratch, void *, count);
    mark_needed(g, out, needed);
    for (size_t id = 0; id < count; id++) {
        if (!needed[id]) continue;
        const IrNode *node = g->nodes[id];
        if (ir_is_selector(node)) {
            bool *m = ARENA_ARRAY(scratch, bool, n > 0 ? n * n : 1);
            if (!eval_selector(&st, node, m)) return false;
            st.results[id] = m;
        } else {
            Value *v = ARENA_ARRAY(scratch, Value, n ? n : 1);
            if (!eval_sop(&st, node, v)) return false;
            st.results[id] = v;
        }
    }
    *results = st.results;
    return true;
}

bool ir_eval_nodes(const IrGraph *g, const bool *wanted, size_t count, const Value *input, size_t n, Arena *scratch,
                   void **results, bool *failed) {
    EvalState st = {g, input, n, scratch, results, NULL, false};
    IrEvalError err;
    st.err = &err;
    for (size_t id = 0; id < count; id++) {
        results[id] = NULL;
        failed[id] = false;
        if (!wanted[id]) continue;
        const IrNode *node = g->nodes[id];
        /* a node whose argument failed fails too; it is not evaluated */
        const IrNode *deps[3] = {0};
        switch (node->kind) {
        case IR_MAP: for (uint32_t a = 0; a < node->u.map.nargs; a++) deps[a] = node->u.map.args[a]; break;
        case IR_SELECT: deps[0] = node->u.select.keys; deps[1] = node->u.select.queries; break;
        case IR_SELECT_AND: case IR_SELECT_OR: case IR_SELECT_NOT:
            deps[0] = node->u.combine.lhs; deps[1] = node->u.combine.rhs; break;
        case IR_AGGREGATE: deps[0] = node->u.aggregate.selector; deps[1] = node->u.aggregate.sop; break;
        case IR_SELECTOR_WIDTH: deps[0] = node->u.width.selector; break;
        default: break;
        }
        for (int j = 0; j < 3; j++)
            if (deps[j] && (failed[deps[j]->id] || !results[deps[j]->id])) failed[id] = true;
        if (failed[id]) continue;
        if (ir_is_selector(node)) {
            bool *m = ARENA_ARRAY(scratch, bool, n > 0 ? n * n : 1);
            failed[id] = !eval_selector(&st, node, m);
            results[id] = failed[id] ? NULL : m;
        } else {
            Value *v = ARENA_ARRAY(scratch, Value, n ? n : 1);
            failed[id] = !eval_sop(&st, node, v);
            results[id] = failed[id] ? NULL : v;
        }
    }
    return true;
}

bool ir_eval(const IrGraph *g, const IrNode *out, const Value *input, size_t n, Arena *scratch,
             Value **result, IrEvalError *err) {
    void **results;
    if (ir_is_selector(out)) {
        memset(err, 0, sizeof *err);
        err->loc = out->loc;
        snprintf(err->message, sizeof err->message, "expected an s-op, got a selector");
        return false;
    }
    if (!run(g, out, input, n, scratch, NULL, err, &results)) return false;
    *result = results[out->id];
    return true;
}

bool ir_eval_selector(const IrGraph *g, const IrNode *sel, const Value *input, size_t n,
                      Arena *scratch, bool **matrix, IrEvalError *err) {
    void **results;
    if (!ir_is_selector(sel)) {
        memset(err, 0, sizeof *err);
        err->loc = sel->loc;
        snprintf(err->message, sizeof err->message, "expected a selector, got an s-op");
        return false;
    }
    if (!run(g, sel, input, n, scratch, NULL, err, &results)) return false;
    *matrix = results[sel->id];
    return true;
}

bool ir_eval_with(const IrGraph *g, const IrNode *out, const Value *input, size_t n, Arena *scratch,
                  const IrEvalOptions *opt, void **result, IrEvalError *err) {
    void **results;
    if (!run(g, out, input, n, scratch, opt, err, &results)) return false;
    *result = results[out->id];
    return true;
}
