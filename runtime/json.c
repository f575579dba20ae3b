#include "runtime/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reader ---- */

typedef struct Parser {
    Arena *arena;
    const char *s;
    size_t len, pos;
    char *err;
    size_t errsize;
    bool failed;
} Parser;

static bool fail(Parser *p, const char *what) {
    if (!p->failed && p->err && p->errsize)
        snprintf(p->err, p->errsize, "JSON: %s at byte %zu", what, p->pos);
    p->failed = true;
    return false;
}

static void skip_ws(Parser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static bool parse_value(Parser *p, JsonValue *v, int depth);

static bool literal(Parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return fail(p, "invalid literal");
    p->pos += n;
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* number = [ "-" ] ( "0" | [1-9] digit* ) [ "." digit+ ] [ ( "e" | "E" ) [ "+" | "-" ] digit+ ] */
static bool parse_number(Parser *p, JsonValue *v) {
    size_t start = p->pos;
    bool integer = true;
    if (p->pos < p->len && p->s[p->pos] == '-') p->pos++;
    if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail(p, "invalid number");
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && is_digit(p->s[p->pos])) return fail(p, "leading zero in number");
    } else {
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integer = false;
        p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail(p, "digit expected after '.'");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integer = false;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return fail(p, "digit expected in exponent");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    v->kind = JSON_NUMBER;
    v->is_integer = integer;
    v->len = p->pos - start;
    v->text = arena_strndup(p->arena, p->s + start, v->len);
    v->number = strtod(v->text, NULL); /* the literal is valid C syntax; overflow gives inf */
    return true;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(Parser *p, uint32_t *out) {
    if (p->len - p->pos < 4) return fail(p, "truncated \\u escape");
    uint32_t u = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p->s[p->pos + i]);
        if (d < 0) return fail(p, "invalid \\u escape");
        u = u * 16 + (uint32_t)d;
    }
    p->pos += 4;
    *out = u;
    return true;
}

static size_t utf8_encode(uint32_t cp, char *o) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence starting at s (n bytes available), or 0. Rejects overlong
 * forms, surrogates and code points above U+10FFFF. */
static size_t utf8_valid(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t need;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { need = 2; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { need = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < need) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return need;
}

bool json_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t k = s[i] ? utf8_valid((const unsigned char *)s + i, n - i) : 0;
        if (k == 0) return false;
        i += k;
    }
    return true;
}

/* string = '"' ( unescaped-utf8 | "\" escape )* '"'; decoded into the arena. */
static bool parse_string(Parser *p, const char **out, size_t *outlen) {
    p->pos++; /* opening quote */
    /* The decoded string is never longer than the raw text, so size the buffer by a scan to the
     * closing quote first. */
    size_t end = p->pos;
    while (end < p->len && p->s[end] != '"') end += (p->s[end] == '\\') ? 2 : 1;
    if (end >= p->len) return fail(p, "unterminated string");
    char *buf = arena_alloc(p->arena, end - p->pos + 1);
    size_t n = 0;
    for (;;) {
        if (p->pos >= p->len) return fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') { p->pos++; break; }
        if (c < 0x20) return fail(p, "control character in string");
        if (c != '\\') {
            size_t k = utf8_valid((const unsigned char *)p->s + p->pos, p->len - p->pos);
            if (k == 0) return fail(p, "invalid UTF-8 in string");
            memcpy(buf + n, p->s + p->pos, k);
            n += k;
            p->pos += k;
            continue;
        }
        p->pos++;
        if (p->pos >= p->len) return fail(p, "unterminated escape");
        char e = p->s[p->pos++];
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!read_hex4(p, &cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(p, "lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                    return fail(p, "lone high surrogate");
                p->pos += 2;
                if (!read_hex4(p, &lo)) return false;
                if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "invalid surrogate pair");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) return fail(p, "\\u0000 in string is not supported");
            /* \uXXXX is 6 raw bytes and encodes to at most 3; a pair is 12 raw bytes for 4. */
            n += utf8_encode(cp, buf + n);
            break;
        }
        default: return fail(p, "invalid escape");
        }
    }
    buf[n] = '\0';
    *out = buf;
    *outlen = n;
    return true;
}

static bool parse_array(Parser *p, JsonValue *v, int depth) {
    p->pos++;
    v->kind = JSON_ARRAY;
    size_t cap = 0;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') { p->pos++; return true; }
    for (;;) {
        if (v->count == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            v->items = arena_grow(p->arena, v->items, cap, ncap, sizeof *v->items);
            cap = ncap;
        }
        skip_ws(p);
        if (!parse_value(p, &v->items[v->count], depth + 1)) return false;
        v->count++;
        skip_ws(p);
        if (p->pos >= p->len) return fail(p, "unterminated array");
        char c = p->s[p->pos++];
        if (c == ']') return true;
        if (c != ',') { p->pos--; return fail(p, "',' or ']' expected"); }
    }
}

static bool parse_object(Parser *p, JsonValue *v, int depth) {
    p->pos++;
    v->kind = JSON_OBJECT;
    size_t cap = 0;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') { p->pos++; return true; }
    for (;;) {
        if (v->count == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            v->items = arena_grow(p->arena, v->items, cap, ncap, sizeof *v->items);
            v->keys = arena_grow(p->arena, (void *)v->keys, cap, ncap, sizeof *v->keys);
            cap = ncap;
        }
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"') return fail(p, "object key expected");
        size_t klen;
        if (!parse_string(p, &v->keys[v->count], &klen)) return false;
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') return fail(p, "':' expected");
        p->pos++;
        skip_ws(p);
        if (!parse_value(p, &v->items[v->count], depth + 1)) return false;
        v->count++;
        skip_ws(p);
        if (p->pos >= p->len) return fail(p, "unterminated object");
        char c = p->s[p->pos++];
        if (c == '}') return true;
        if (c != ',') { p->pos--; return fail(p, "',' or '}' expected"); }
    }
}

static bool parse_value(Parser *p, JsonValue *v, int depth) {
    if (depth > JSON_MAX_DEPTH) return fail(p, "nesting too deep");
    if (p->pos >= p->len) return fail(p, "value expected");
    switch (p->s[p->pos]) {
    case '{': return parse_object(p, v, depth);
    case '[': return parse_array(p, v, depth);
    case '"': v->kind = JSON_STRING; return parse_string(p, &v->text, &v->len);
    case 't': v->kind = JSON_BOOL; v->boolean = true; return literal(p, "true");
    case 'f': v->kind = JSON_BOOL; v->boolean = false; return literal(p, "false");
    case 'n': v->kind = JSON_NULL; return literal(p, "null");
    default: return parse_number(p, v);
    }
}

bool json_parse(Arena *arena, const char *text, size_t len, JsonValue **out, char *err, size_t errsize) {
    Parser p = {arena, text, len, 0, err, errsize, false};
    JsonValue *v = ARENA_NEW(arena, JsonValue);
    skip_ws(&p);
    if (!parse_value(&p, v, 1)) return false;
    skip_ws(&p);
    if (p.pos != len) return fail(&p, "trailing characters after the value");
    *out = v;
    return true;
}

const JsonValue *json_get(const JsonValue *v, const char *key) {
    if (!v || v->kind != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0) return &v->items[i];
    return NULL;
}

bool json_as_u64(const JsonValue *v, uint64_t *out) {
    if (!v || v->kind != JSON_NUMBER || !v->is_integer || v->text[0] == '-') return false;
    uint64_t x = 0;
    for (const char *c = v->text; *c; c++) {
        uint64_t d = (uint64_t)(*c - '0');
        if (x > (UINT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    *out = x;
    return true;
}

bool json_as_i64(const JsonValue *v, int64_t *out) {
    if (!v || v->kind != JSON_NUMBER || !v->is_integer) return false;
    bool neg = v->text[0] == '-';
    uint64_t x = 0;
    for (const char *c = v->text + neg; *c; c++) {
        uint64_t d = (uint64_t)(*c - '0');
        if (x > (UINT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    if (neg) {
        if (x > (uint64_t)INT64_MAX + 1) return false;
        *out = x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
    } else {
        if (x > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)x;
    }
    return true;
}

/* ---- writer ---- */

void jbuf_init(JsonBuf *b) { b->data = NULL; b->len = b->cap = 0; b->failed = false; }

void jbuf_free(JsonBuf *b) { free(b->data); jbuf_init(b); }

void jbuf_raw(JsonBuf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n + 1) {
            if (cap > SIZE_MAX / 2) { b->failed = true; return; }
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d) { b->failed = true; return; }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void jbuf_puts(JsonBuf *b, const char *s) { jbuf_raw(b, s, strlen(s)); }

void jbuf_printf(JsonBuf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) { b->failed = true; return; }
    if ((size_t)n < sizeof small) { jbuf_raw(b, small, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    if (!big) { b->failed = true; return; }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    jbuf_raw(b, big, (size_t)n);
    free(big);
}

void jbuf_string(JsonBuf *b, const char *s) {
    jbuf_raw(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        jbuf_raw(b, run, (size_t)(s - run));
        switch (c) {
        case '"': jbuf_puts(b, "\\\""); break;
        case '\\': jbuf_puts(b, "\\\\"); break;
        case '\n': jbuf_puts(b, "\\n"); break;
        case '\t': jbuf_puts(b, "\\t"); break;
        case '\r': jbuf_puts(b, "\\r"); break;
        default: jbuf_printf(b, "\\u%04x", c); break;
        }
        run = s + 1;
    }
    jbuf_raw(b, run, (size_t)(s - run));
    jbuf_raw(b, "\"", 1);
}

void jbuf_u64(JsonBuf *b, uint64_t v) { jbuf_printf(b, "%" PRIu64, v); }
void jbuf_i64(JsonBuf *b, int64_t v) { jbuf_printf(b, "%" PRId64, v); }

void jbuf_double(JsonBuf *b, double v) {
    if (!isfinite(v)) { jbuf_puts(b, "null"); return; }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.17g", v);
    if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0"); /* keep it a non-integer literal */
    jbuf_puts(b, tmp);
}
