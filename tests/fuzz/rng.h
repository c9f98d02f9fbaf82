/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Seeded random numbers for the fuzzer: xoshiro256** seeded through
 * splitmix64, one state per thread, so a seed and a thread index name a
 * whole call sequence.
 */
#ifndef FUZZ_RNG_H
#define FUZZ_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fz_rng {
	uint64_t s[4];
};

static inline uint64_t fz_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void fz_rng_seed(struct fz_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = fz_splitmix(&seed);
}

static inline uint64_t fz_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t fz_next(struct fz_rng *r)
{
	uint64_t *s = r->s, res = fz_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = fz_rotl(s[3], 45);
	return res;
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint64_t fz_below(struct fz_rng *r, uint64_t n)
{
	return n ? fz_next(r) % n : 0;
}

/* True with probability pm / 1000. */
static inline bool fz_pm(struct fz_rng *r, unsigned int pm)
{
	return fz_below(r, 1000) < pm;
}

/* Index into @n weights, chosen in proportion to them. */
static inline size_t fz_weighted(struct fz_rng *r, const unsigned int *w,
				 size_t n)
{
	uint64_t sum = 0, x;
	size_t i;

	for (i = 0; i < n; i++)
		sum += w[i];
	x = fz_below(r, sum);
	for (i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return 0;
}

#endif /* FUZZ_RNG_H */
