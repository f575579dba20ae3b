/* xoshiro256** (Blackman and Vigna) seeded through splitmix64; Box-Muller normals. */
#include "fut/fut.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void fut_rng_seed(FutRng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t fut_rng_next(FutRng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double fut_rng_uniform(FutRng *r) { return (double)(fut_rng_next(r) >> 11) * 0x1.0p-53; }

double fut_rng_gauss(FutRng *r) {
    double u = 1.0 - fut_rng_uniform(r); /* (0, 1] */
    double v = fut_rng_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

size_t fut_rng_below(FutRng *r, size_t n) { return (size_t)(fut_rng_uniform(r) * (double)n) % n; }
