/* prng.c — the test generators of prng.h. */
#include "prng.h"

uint64_t prng_next(prng *rng)
{
    uint64_t x = rng->state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng->state = x;
    return x;
}

uint64_t prng_below(prng *rng, uint64_t bound)
{
    return prng_next(rng) % bound;
}

uint64_t xorshift64_star_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717u;
}

uint64_t lcg_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}
