/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hash functions of the in-memory tables (never stored, never sent:
 * a table's seed is random per process, so no input can be chosen to
 * collide in it).
 *
 *   hash_bytes(seed, p, n)  strings: FNV-1a from a seeded basis, finished
 *                           by a multiply-xorshift so the low bits (the
 *                           bucket) depend on every byte (common/intern.c,
 *                           attrib/steps.c, view/tune_input.c,
 *                           view/html_data.c, lake/store.c)
 *   hash_mix64(x)           integers: splitmix64's finaliser, every input
 *                           bit reaches every output bit (model/proctab.c)
 *   hash_seed_random()      a table's seed: getrandom(), or the clock and
 *                           an address when it has no entropy yet
 *
 * Not for what is stored or sent (ids, lake keys, a label's suffix): those
 * must be the same on every host and every run, and use hashes of their own.
 *
 * Header-only: they run for every record (intern) and every lookup.
 */
#ifndef TRACER_COMMON_HASH_H
#define TRACER_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

#define HASH_FNV_BASIS 0xcbf29ce484222325ULL
#define HASH_FNV_PRIME 0x100000001b3ULL

static inline uint64_t hash_bytes(uint64_t seed, const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = HASH_FNV_BASIS ^ seed;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * HASH_FNV_PRIME;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t hash_seed_random(void)
{
	uint64_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return hash_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&seed);
}

#endif /* TRACER_COMMON_HASH_H */
