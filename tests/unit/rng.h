/* A deterministic PRNG (xorshift64) so every test run sees the same data. */
#ifndef LATSCOPE_TEST_RNG_H
#define LATSCOPE_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static inline void rng_seed(uint64_t seed)
{
	rng_state = seed ? seed : UINT64_C(0x9e3779b97f4a7c15);
}

static inline uint64_t rng_next(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

/* Uniform in [0, bound), bound > 0. */
static inline uint64_t rng_below(uint64_t bound)
{
	return rng_next() % bound;
}

/* Uniform in (0, 1]. */
static inline double rng_unit_open0(void)
{
	return ((double)(rng_next() >> 11) + 1.0) * 0x1.0p-53;
}

#endif
