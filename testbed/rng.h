/* Seeded pseudo-random numbers for the testbed's instance generators: splitmix64, so a seed
 * always gives the same instances on every machine. */
#ifndef RASPCC_TESTBED_RNG_H
#define RASPCC_TESTBED_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct TbRng {
    uint64_t state;
} TbRng;

static inline uint64_t tb_rng_next(TbRng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) (bound >= 1), without modulo bias. */
static inline size_t tb_rng_below(TbRng *r, size_t bound) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do x = tb_rng_next(r);
    while (x >= limit);
    return (size_t)(x % bound);
}

/* Uniform in [lo, hi] (lo <= hi). */
static inline size_t tb_rng_range(TbRng *r, size_t lo, size_t hi) {
    return lo + tb_rng_below(r, hi - lo + 1);
}

static inline int tb_rng_coin(TbRng *r) {
    return (int)(tb_rng_next(r) >> 63);
}

/* A seed for one stream, mixed from a base seed, a name and a number (FNV-1a, then splitmix). */
static inline uint64_t tb_seed_mix(uint64_t seed, const char *name, uint64_t k) {
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
    TbRng r = {h ^ (k * 0x9e3779b97f4a7c15ULL)};
    return tb_rng_next(&r);
}

/* Shuffles a[0..n) (Fisher-Yates). */
static inline void tb_rng_shuffle(TbRng *r, size_t *a, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = tb_rng_below(r, i), t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

#endif
