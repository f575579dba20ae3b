/* Inputs to check a model on: all of them up to a length (the odometer), or seeded random ones. */
#include <math.h>

#include "verify/verify.h"

size_t verify_count_inputs(size_t n_vocab, size_t len) {
    size_t total = 0, power = 1;
    for (size_t l = 1; l <= len; l++) {
        if (n_vocab && power > SIZE_MAX / n_vocab) return SIZE_MAX;
        power *= n_vocab;
        if (total > SIZE_MAX - power) return SIZE_MAX;
        total += power;
    }
    return total;
}

size_t verify_lengths_within(size_t n_vocab, size_t max_len, size_t limit) {
    if (n_vocab == 0) return 0;
    size_t L = 0;
    while (L < max_len && verify_count_inputs(n_vocab, L + 1) <= limit) L++;
    return L;
}

void verify_odometer_init(VerifyOdometer *o, const Value *vocab, size_t n_vocab, size_t max_len, Arena *arena) {
    o->vocab = vocab;
    o->n_vocab = n_vocab;
    o->max_len = max_len;
    o->len = 0;
    o->digits = ARENA_ARRAY(arena, size_t, max_len ? max_len : 1);
    o->done = n_vocab == 0 || max_len == 0;
}

bool verify_odometer_next(VerifyOdometer *o, Value *in, size_t *n) {
    if (o->done) return false;
    if (o->len == 0) {
        o->len = 1; /* digits are all 0: the first input of length 1 */
    } else {
        size_t i = o->len;
        while (i > 0 && ++o->digits[i - 1] == o->n_vocab) o->digits[--i] = 0;
        if (i == 0 && ++o->len > o->max_len) { /* the last input of this length was returned */
            o->done = true;
            return false;
        }
    }
    for (size_t i = 0; i < o->len; i++) in[i] = o->vocab[o->digits[i]];
    *n = o->len;
    return true;
}

uint64_t verify_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

Value verify_random_real(const Model *m, uint64_t *state) {
    double lo = m->token_lo, hi = m->token_hi;
    double u = (double)(verify_rng_next(state) >> 11) / 9007199254740992.0; /* [0, 1) in 2^-53 steps */
    double v = lo + u * (hi - lo);
    switch (verify_rng_next(state) % 8) {
    case 0: v = verify_rng_next(state) % 2 ? lo : hi; break;           /* an end of the range */
    case 1: if (lo <= 0 && hi >= 0) v = verify_rng_next(state) % 2 ? 0.0 : -0.0; break;
    case 2: case 3: { /* a short decimal, as a user types it: thresholds like 0.5 and 1 are hit */
        double step = pow(10, floor(log10((hi - lo) / 1000)));
        if (step > 0 && isfinite(step)) v = round(v / step) * step;
        break;
    }
    default: break; /* full precision */
    }
    return value_float(fmin(fmax(v, lo), hi));
}

size_t verify_random_input(const Model *m, size_t max_len, uint64_t *state, Value *in) {
    if (max_len == 0 || max_len > m->max_len) max_len = m->max_len;
    if (max_len == 0 || m->n_vocab == 0) return 0;
    size_t n = 1 + (size_t)(verify_rng_next(state) % max_len);
    for (size_t i = 0; i < n; i++)
        in[i] = m->numeric_tokens ? verify_random_real(m, state) : m->vocab[verify_rng_next(state) % m->n_vocab];
    return n;
}
