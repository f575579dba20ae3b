/* libFuzzer target: the raspfut target-file parser (fut/io.h). Any bytes must be accepted as a
 * valid target or rejected with a message; an accepted target must serialise, parse back to
 * the same weights, and fit its own shape as a program. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fut/fut.h"
#include "fut/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena a;
    arena_init(&a);
    char err[512];
    FutTarget t;
    if (fut_target_parse(&a, data, size, &t, err, sizeof err)) {
        uint8_t *buf;
        size_t len;
        if (!fut_target_serialize(&t, &buf, &len, err, sizeof err)) abort();
        FutTarget u;
        if (!fut_target_parse(&a, buf, len, &u, err, sizeof err)) abort();
        if (u.L != t.L || u.H != t.H || u.d != t.d || u.residual != t.residual || u.causal != t.causal) abort();
        for (size_t i = 0; i < t.L * t.H; i++)
            if (fut_mat_max_abs_diff(u.heads[i].wq, t.heads[i].wq) != 0 ||
                fut_mat_max_abs_diff(u.heads[i].wo, t.heads[i].wo) != 0)
                abort();
        free(buf);
        if (t.d <= 16 && t.L * t.H <= 16) {
            FutProgram p;
            if (!fut_program_from_target(&a, &t, t.L, t.H, t.d, t.residual, &p, err, sizeof err)) abort();
        }
    } else if (!err[0]) {
        abort(); /* a rejection must say why */
    }
    arena_free(&a);
    return 0;
}
