/* Matrices written as text (fut/matrix_text.h): a scanner for the number grammar, then strtod on
 * exactly the scanned characters, so strtod's extensions (hex, inf, nan) never get a say. */
#include "fut/matrix_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static bool is_row_sep(char c) { return c == ';' || c == '\n'; }
/* What may follow a number: a separator or the end. */
static bool ends_number(char c) { return c == '\0' || c == ',' || is_blank(c) || is_row_sep(c); }

/* number = [+-] (digits [. [digits]] | . digits) [(e|E) [+-] digits]: the length of the number at
 * s, or 0 when s does not start with one. *nonzero says whether a mantissa digit is not 0. */
static size_t scan_number(const char *s, bool *nonzero) {
    size_t i = 0, digits = 0;
    *nonzero = false;
    if (s[i] == '+' || s[i] == '-') i++;
    for (; is_digit(s[i]); i++, digits++) *nonzero |= s[i] != '0';
    if (s[i] == '.')
        for (i++; is_digit(s[i]); i++, digits++) *nonzero |= s[i] != '0';
    if (digits == 0) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-') j++;
        if (!is_digit(s[j])) return 0;
        while (is_digit(s[j])) j++;
        i = j;
    }
    return i;
}

/* The number at s, which must end at a separator or the end of the text; *len its length. */
static bool number_at(const char *s, double *out, size_t *len, char *err, size_t errsize) {
    bool nonzero;
    size_t n = scan_number(s, &nonzero);
    if (n == 0 || !ends_number(s[n])) {
        size_t word = 0;
        while (!ends_number(s[word]) && word < 40) word++;
        snprintf(err, errsize, "\"%.*s%s\" is not a decimal number", (int)word, s, ends_number(s[word]) ? "" : "...");
        return false;
    }
    char *end;
    double v = strtod(s, &end);
    if (end != s + n) { /* cannot happen for the grammar above; refuse rather than guess */
        snprintf(err, errsize, "\"%.*s\" is not a decimal number", (int)(n < 40 ? n : 40), s);
        return false;
    }
    if (isinf(v)) {
        snprintf(err, errsize, "%.*s is too large for a double (largest 1.8e308)", (int)(n < 40 ? n : 40), s);
        return false;
    }
    if (v == 0 && nonzero) {
        snprintf(err, errsize, "%.*s is too small for a double: it would read as 0 (smallest 4.9e-324)",
                 (int)(n < 40 ? n : 40), s);
        return false;
    }
    *out = v;
    *len = n;
    return true;
}

bool fut_number_from_text(const char *s, double *out, char *err, size_t errsize) {
    size_t n;
    if (!number_at(s, out, &n, err, errsize)) return false;
    if (s[n] != '\0') {
        snprintf(err, errsize, "\"%.40s\" is not one decimal number", s);
        return false;
    }
    return true;
}

bool fut_matrix_from_text(Arena *a, const char *text, size_t cols, FutMat *out, char *err, size_t errsize) {
    size_t n = strlen(text);
    while (n > 0 && (is_blank(text[n - 1]) || is_row_sep(text[n - 1]))) n--; /* trailing separators end the last row */
    if (n == 0) {
        snprintf(err, errsize, "the input is empty");
        return false;
    }
    size_t cap = cols ? cols : 1, count = 0, rows = 0, i = 0;
    double *vals = ARENA_ARRAY(a, double, cap);
    char why[160];
    for (;;) { /* one row */
        size_t in_row = 0;
        bool after_comma = false;
        for (;;) {
            while (i < n && is_blank(text[i])) i++;
            if (i == n || is_row_sep(text[i])) {
                if (after_comma) {
                    snprintf(err, errsize, "row %zu ends with a comma", rows + 1);
                    return false;
                }
                if (in_row == 0) {
                    snprintf(err, errsize, "row %zu is empty", rows + 1);
                    return false;
                }
                break;
            }
            if (text[i] == ',') {
                if (after_comma || in_row == 0) {
                    snprintf(err, errsize, "row %zu, number %zu: empty (%s)", rows + 1, in_row + 1,
                             in_row == 0 ? "a comma starts the row" : "two commas in a row");
                    return false;
                }
                after_comma = true;
                i++;
                continue;
            }
            double v;
            size_t len;
            /* text[n] may be a separator we trimmed: number_at stops there all the same */
            if (!number_at(text + i, &v, &len, why, sizeof why)) {
                snprintf(err, errsize, "row %zu, number %zu: %s", rows + 1, in_row + 1, why);
                return false;
            }
            if (count == cap) {
                vals = arena_grow(a, vals, cap, cap * 2, sizeof(double));
                cap *= 2;
            }
            vals[count++] = v;
            in_row++;
            after_comma = false;
            i += len;
        }
        if (in_row != cols) {
            snprintf(err, errsize, "row %zu has %zu number%s, expected %zu", rows + 1, in_row, in_row == 1 ? "" : "s",
                     cols);
            return false;
        }
        rows++;
        if (i == n) break;
        i++; /* the row separator */
    }
    *out = (FutMat){rows, cols, vals};
    return true;
}
