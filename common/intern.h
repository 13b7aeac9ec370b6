/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one string interner: one copy of each distinct string, so that equal
 * strings are one pointer. The process table's file and cgroup paths (a
 * thousand processes reading the same reference genome hold one copy of its
 * path), the step table's tool names (attrib/steps.c), tracer tune's names,
 * tools, pipelines, states and hosts (view/tune_input.c).
 *
 * Bounded by a byte budget (entries and their strings): what the budget
 * turns away is NULL, counted by the caller. Hashed with common/hash.h's
 * hash_bytes() from the caller's seed, random per process, so a host cannot
 * send strings chosen to fall into one bucket. Bytes are kept as they came
 * (any byte, NUL included: the length is the caller's).
 *
 * References are counted: a user that frees strings one by one (the process
 * table) gives each back with intern_put(); one that frees them all at once
 * (a build, a tune) calls intern_clear() or intern_free() instead.
 */
#ifndef TRACER_COMMON_INTERN_H
#define TRACER_COMMON_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_entry;

struct intern {
	struct intern_entry **buckets;
	uint32_t mask;
	uint32_t count;
	uint64_t bytes;  /* allocated for entries now */
	uint64_t budget; /* bytes held at most */
	uint64_t seed;
};

int intern_init(struct intern *in, uint64_t budget, uint64_t seed);
void intern_free(struct intern *in);
/* Every string gone at once (references held become invalid); the buckets stay for reuse. */
void intern_clear(struct intern *in);

/*
 * A reference to the interned copy of s[0..len) (NUL-terminated), or NULL
 * when the budget or memory is exhausted. Every reference is given back
 * with intern_put(), or all at once by intern_clear() / intern_free(). A
 * string referenced 2^32 - 1 times stays until then.
 */
const char *intern_get(struct intern *in, const char *s, size_t len);
void intern_put(struct intern *in, const char *s);

#endif /* TRACER_COMMON_INTERN_H */
