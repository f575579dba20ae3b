/* libFuzzer target: the INPUT syntax of `raspfut run` (fut/matrix_text.h). The first byte picks
 * the column count (1..8), the rest is the text. Any text must be accepted as a matrix of that
 * width, every entry a finite double, or rejected with a message; a matrix printed back with
 * %.17g must parse to the same doubles. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fut/matrix_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t cols = 1 + data[0] % 8;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    Arena a;
    arena_init(&a);
    char err[512] = "";
    FutMat m;
    if (fut_matrix_from_text(&a, text, cols, &m, err, sizeof err)) {
        if (m.rows == 0 || m.cols != cols) abort();
        size_t cap = m.rows * m.cols * 26 + 1, len = 0;
        char *again = malloc(cap);
        for (size_t i = 0; i < m.rows; i++)
            for (size_t j = 0; j < m.cols; j++) {
                double v = FUT_AT(m, i, j);
                if (!isfinite(v)) abort();
                len += (size_t)snprintf(again + len, cap - len, "%.17g%s", v, j + 1 < m.cols ? "," : ";");
            }
        FutMat n;
        if (!fut_matrix_from_text(&a, again, cols, &n, err, sizeof err)) abort();
        if (n.rows != m.rows || memcmp(n.data, m.data, m.rows * m.cols * sizeof(double)) != 0) abort();
        free(again);
    } else if (!err[0]) {
        abort(); /* a rejection must say why */
    }
    arena_free(&a);
    free(text);
    return 0;
}
