/* --vocab: "abc" (characters), "a,b,c" (a comma list), "0..9" (an int range) or a JSON list
 * '["a", ",", "?"]' (any spec whose first non-blank character is '['). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"
#include "runtime/json.h"

static bool parse_int(const char *s, size_t len, int64_t *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

/* One comma-list item as an atom of the token type. */
static bool parse_item(const char *s, size_t len, IrTokenType type, Arena *arena, Value *out) {
    int64_t i;
    switch (type) {
    case IR_TOKENS_STR: *out = value_str(arena_strndup(arena, s, len)); return len > 0;
    case IR_TOKENS_INT:
        if (!parse_int(s, len, &i)) return false;
        *out = value_int(i);
        return true;
    case IR_TOKENS_BOOL:
        if (len == 4 && !strncmp(s, "True", 4)) { *out = value_bool(true); return true; }
        if (len == 5 && !strncmp(s, "False", 5)) { *out = value_bool(false); return true; }
        return false;
    case IR_TOKENS_FLOAT: {
        char buf[64];
        if (len == 0 || len >= sizeof buf) return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        char *end;
        double d = strtod(buf, &end);
        if (*end) return false;
        *out = value_float(d);
        return true;
    }
    }
    return false;
}

/* What a JSON item is, for messages: 'the string "a"', 'the number 1.5', 'true', 'a list'. */
static void describe_item(const JsonValue *j, char *buf, size_t size) {
    switch (j->kind) {
    case JSON_NULL: snprintf(buf, size, "null"); return;
    case JSON_BOOL: snprintf(buf, size, "%s", j->boolean ? "true" : "false"); return;
    case JSON_NUMBER: snprintf(buf, size, "the number %.40s", j->text); return;
    case JSON_STRING: snprintf(buf, size, "the string \"%.40s%s\"", j->text, j->len > 40 ? "..." : ""); return;
    case JSON_ARRAY: snprintf(buf, size, "a list"); return;
    case JSON_OBJECT: snprintf(buf, size, "an object"); return;
    }
    snprintf(buf, size, "?");
}

/* One item of a JSON list as an atom of the token type; false with a message. */
static bool json_item(const JsonValue *j, size_t index, IrTokenType type, Arena *arena, Value *out, char *errbuf,
                      size_t errsize) {
    int64_t i;
    const char *want = NULL, *why = "";
    switch (type) {
    case IR_TOKENS_STR:
        if (j->kind == JSON_STRING) { *out = value_str(arena_strdup(arena, j->text)); return true; }
        want = "strings";
        break;
    case IR_TOKENS_INT:
        if (j->kind == JSON_NUMBER && j->is_integer && json_as_i64(j, &i)) { *out = value_int(i); return true; }
        want = "integers";
        if (j->kind == JSON_NUMBER) why = j->is_integer ? " (it does not fit in 64 bits)" : " (not an integer)";
        break;
    case IR_TOKENS_FLOAT:
        if (j->kind == JSON_NUMBER && isfinite(j->number)) { *out = value_float(j->number); return true; }
        want = "numbers";
        if (j->kind == JSON_NUMBER) why = " (not a finite double)";
        break;
    case IR_TOKENS_BOOL:
        if (j->kind == JSON_BOOL) { *out = value_bool(j->boolean); return true; }
        want = "true and false";
        break;
    }
    char what[96];
    describe_item(j, what, sizeof what);
    snprintf(errbuf, errsize, "bad --vocab list: item %zu is %s%s; %s tokens are %s", index + 1, what, why,
             ir_token_type_name(type), want ? want : "?");
    return false;
}

/* A JSON list of tokens. */
static bool parse_json_list(const char *spec, IrTokenType type, Arena *arena, Value **vocab, size_t *n,
                            char *errbuf, size_t errsize) {
    JsonValue *list;
    char err[200];
    if (!json_parse(arena, spec, strlen(spec), &list, err, sizeof err)) {
        snprintf(errbuf, errsize, "bad --vocab list (a --vocab starting with '[' is a JSON list): %s", err);
        return false;
    }
    if (list->kind != JSON_ARRAY) {
        snprintf(errbuf, errsize, "bad --vocab list: not a JSON list");
        return false;
    }
    Value *v = ARENA_ARRAY(arena, Value, list->count ? list->count : 1);
    for (size_t i = 0; i < list->count; i++)
        if (!json_item(&list->items[i], i, type, arena, &v[i], errbuf, errsize)) return false;
    *vocab = v;
    *n = list->count;
    return true;
}

static int cmp_values(const void *a, const void *b) { return atom_order(*(const Value *)a, *(const Value *)b); }

bool codegen_parse_vocab(const char *spec, IrTokenType type, Arena *arena, Value **vocab,
                         size_t *n, char *errbuf, size_t errsize) {
    size_t len = strlen(spec);
    const char *dots = strstr(spec, "..");
    Value *v = NULL;
    size_t count = 0;
    if (spec[strspn(spec, " \t\r\n")] == '[') {
        if (!parse_json_list(spec, type, arena, &v, &count, errbuf, errsize)) return false;
    } else if (dots && type != IR_TOKENS_STR) {
        int64_t lo, hi;
        if (type != IR_TOKENS_INT || !parse_int(spec, (size_t)(dots - spec), &lo) ||
            !parse_int(dots + 2, strlen(dots + 2), &hi) || hi < lo || hi - lo >= CG_MAX_VALUES) {
            snprintf(errbuf, errsize, "bad --vocab range '%s' (expected LO..HI with ints, at most %d values)",
                     spec, CG_MAX_VALUES);
            return false;
        }
        count = (size_t)(hi - lo + 1);
        v = ARENA_ARRAY(arena, Value, count);
        for (size_t i = 0; i < count; i++) v[i] = value_int(lo + (int64_t)i);
    } else if (strchr(spec, ',') || type != IR_TOKENS_STR) {
        v = ARENA_ARRAY(arena, Value, len + 1);
        const char *s = spec;
        for (;;) {
            const char *comma = strchr(s, ',');
            size_t item = comma ? (size_t)(comma - s) : strlen(s);
            if (!parse_item(s, item, type, arena, &v[count])) {
                snprintf(errbuf, errsize, "bad --vocab item '%.*s' for %s", (int)item, s,
                         ir_token_type_name(type));
                return false;
            }
            count++;
            if (!comma) break;
            s = comma + 1;
        }
    } else {
        v = ARENA_ARRAY(arena, Value, len + 1);
        for (size_t i = 0; i < len; i++) v[count++] = value_str(arena_strndup(arena, spec + i, 1));
    }
    if (count == 0) {
        snprintf(errbuf, errsize, "--vocab is empty");
        return false;
    }
    for (size_t i = 0; i < count; i++) /* a model file holds its vocabulary as UTF-8 text */
        if (v[i].kind == VAL_STR && !json_utf8(v[i].as.s, strlen(v[i].as.s))) {
            char bytes[64] = "";
            for (const unsigned char *c = (const unsigned char *)v[i].as.s; *c && strlen(bytes) + 5 < sizeof bytes; c++)
                snprintf(bytes + strlen(bytes), sizeof bytes - strlen(bytes), *c < 0x80 ? "%c" : "\\x%02X", *c);
            snprintf(errbuf, errsize,
                     "--vocab: the atom '%s' is not UTF-8 text (a --vocab word is split into bytes, as a string input "
                     "is; give characters of several bytes as a comma list or a JSON list, and inputs as lists of them)",
                     bytes);
            return false;
        }
    qsort(v, count, sizeof *v, cmp_values);
    size_t u = 0;
    for (size_t i = 0; i < count; i++)
        if (u == 0 || atom_order(v[u - 1], v[i]) != 0) v[u++] = v[i]; /* -0.0 and 0.0 are two tokens */
    *vocab = v;
    *n = u;
    return true;
}
