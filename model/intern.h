/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interned strings: one reference-counted copy of each distinct string
 * (file paths, cgroup paths), so that a thousand processes reading the same
 * reference genome hold one copy of its path. Bounded by a byte budget;
 * what the budget turns away is counted by the caller.
 */
#ifndef TRACER_MODEL_INTERN_H
#define TRACER_MODEL_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_entry;

struct intern {
	struct intern_entry **buckets;
	uint32_t mask;
	uint32_t count;
	uint64_t bytes;  /* allocated for strings now */
	uint64_t budget; /* bytes held at most */
	uint64_t seed;
};

int intern_init(struct intern *in, uint64_t budget, uint64_t seed);
void intern_free(struct intern *in);

/*
 * A reference to the interned copy of s[0..len) (NUL-terminated), or NULL
 * when the budget or memory is exhausted. Every reference is given back
 * with intern_put().
 */
const char *intern_get(struct intern *in, const char *s, size_t len);
void intern_put(struct intern *in, const char *s);

#endif /* TRACER_MODEL_INTERN_H */
