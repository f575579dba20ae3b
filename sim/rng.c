/* Seeded random numbers: splitmix64 (Steele, Lea and Flood 2014), small and the same on every
 * machine, so a seed always names the same inputs. */
#include "sim/sim.h"

void sim_rng_seed(SimRng *r, uint64_t seed) { r->state = seed; }

uint64_t sim_rng_next(SimRng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

double sim_rng_uniform(SimRng *r, double lo, double hi) {
    double u = (double)(sim_rng_next(r) >> 11) * 0x1.0p-53; /* [0, 1), 53 random bits */
    return lo + u * (hi - lo);
}

size_t sim_rng_below(SimRng *r, size_t n) { return (size_t)(sim_rng_next(r) % n); }
