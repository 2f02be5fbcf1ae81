/* rng.h -- the model's one random generator: splitmix64 (a 64-bit state
 * advanced by a constant and scrambled), enough for initialisation, batch
 * offsets and sampling, and identical on every platform. */
#ifndef GPT_RNG_H
#define GPT_RNG_H

#include <stdint.h>

/* The splitmix64 finaliser: a bijective scramble of z. */
static inline uint64_t rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rng_next(uint64_t * state) { return rng_mix(*state += 0x9e3779b97f4a7c15ull); }

/* Uniform in (0, 1), never 0 (safe for log). */
static inline double rng_uniform(uint64_t * state) { return ((double) (rng_next(state) >> 11) + 0.5) / 9007199254740992.0; }

#endif
