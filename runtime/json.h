/* A small strict JSON (RFC 8259) reader and writer, for safetensors headers and model configs.
 *
 * Reader contract: json_parse accepts exactly one JSON value surrounded by optional whitespace
 * and rejects everything else (trailing garbage, leading zeros, unescaped control characters,
 * invalid UTF-8, lone surrogates, nesting deeper than JSON_MAX_DEPTH) with a message naming the
 * byte offset. Strings containing U+0000 are rejected too, because values are handed out as C
 * strings. Duplicate object keys are kept (callers that care check them). Never crashes on any
 * bytes; all storage comes from the caller's arena. */
#ifndef RASPCC_RUNTIME_JSON_H
#define RASPCC_RUNTIME_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/arena.h"

enum { JSON_MAX_DEPTH = 64 };

typedef enum JsonKind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonKind;

typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonKind kind;
    bool boolean;       /* JSON_BOOL */
    double number;      /* JSON_NUMBER, as strtod reads it */
    bool is_integer;    /* JSON_NUMBER written without fraction or exponent */
    const char *text;   /* JSON_NUMBER: the literal as written; JSON_STRING: decoded UTF-8 */
    size_t len;         /* strlen(text) */
    size_t count;       /* JSON_ARRAY / JSON_OBJECT: number of elements / members */
    JsonValue *items;   /* elements, or member values */
    const char **keys;  /* JSON_OBJECT: member keys (decoded), parallel to items */
};

bool json_parse(Arena *arena, const char *text, size_t len, JsonValue **out, char *err, size_t errsize);

/* Member `key` of an object (the first, if duplicated), or NULL (also when v is not an object). */
const JsonValue *json_get(const JsonValue *v, const char *key);

/* Exact integer readings of a JSON_NUMBER literal: false when the literal is not an integer or
 * does not fit. */
bool json_as_u64(const JsonValue *v, uint64_t *out);
bool json_as_i64(const JsonValue *v, int64_t *out);

/* Whether s[0 .. n) is text a JSON string holds as it is: UTF-8 without NUL, overlong forms or
 * surrogates (what json_parse accepts unescaped). */
bool json_utf8(const char *s, size_t n);

/* Writer: a growable malloc'ed buffer. Allocation failure sets `failed` and drops further
 * output, so callers check once at the end. */
typedef struct JsonBuf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len, cap;
    bool failed;
} JsonBuf;

void jbuf_init(JsonBuf *b);
void jbuf_free(JsonBuf *b);
void jbuf_raw(JsonBuf *b, const char *s, size_t n);
void jbuf_puts(JsonBuf *b, const char *s);
void jbuf_printf(JsonBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal: quotes, escapes for '"', '\\' and control characters. */
void jbuf_string(JsonBuf *b, const char *s);
/* Numbers: integers exactly; doubles with 17 significant digits and always a '.' or exponent,
 * so they read back as non-integers of the same value. Non-finite doubles are written as null. */
void jbuf_u64(JsonBuf *b, uint64_t v);
void jbuf_i64(JsonBuf *b, int64_t v);
void jbuf_double(JsonBuf *b, double v);

#endif
