/* U's input: the attention T = (A, V) and its input X as one sequence (sim/sim.h). */
#include <string.h>

#include "sim/sim.h"

size_t sim_u_input(const double *X, size_t n, size_t d, const double *A, const double *V, double *out) {
    memcpy(out, X, n * d * sizeof *out);
    memcpy(out + n * d, A, d * d * sizeof *out);
    memcpy(out + n * d + d * d, V, d * d * sizeof *out);
    return sim_u_length(n, d);
}
