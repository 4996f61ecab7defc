/*
 * prng.h — the pseudo-random generators tests draw their data from.
 *
 * Deterministic and independent of the C library, so a failure reproduces
 * on every machine. Three generators, because each test's seeds and
 * tolerances were chosen against the sequence of the generator it was
 * written with: moving a test to another generator would silently change
 * the inputs it was checked on.
 */
#ifndef KILN_TESTS_PRNG_H
#define KILN_TESTS_PRNG_H

#include <stdint.h>

/* xorshift64 (shifts 13, 7, 17). The state must not be zero. */
typedef struct prng {
    uint64_t state;
} prng;

uint64_t prng_next(prng *rng);

/* prng_next modulo `bound` (> 0); the slight bias does not matter for test data. */
uint64_t prng_below(prng *rng, uint64_t bound);

/* xorshift64* (shifts 12, 25, 27, then a multiply): better low bits than
 * xorshift64. `*state` must not be zero. */
uint64_t xorshift64_star_next(uint64_t *state);

/* Knuth's MMIX linear congruential generator; @return the high 31 bits of
 * the new state (the low bits of an LCG have short periods). */
uint64_t lcg_next(uint64_t *state);

#endif
