/* SPDX-License-Identifier: Apache-2.0 */
#include "intern.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define INTERN_MIN_BUCKETS 1024u

struct intern_entry {
	struct intern_entry *next;
	uint32_t refs;
	uint32_t len;
	uint64_t hash;
	char s[];
};

int intern_init(struct intern *in, uint64_t budget, uint64_t seed)
{
	memset(in, 0, sizeof(*in));
	in->buckets = calloc(INTERN_MIN_BUCKETS, sizeof(*in->buckets));
	if (!in->buckets)
		return -ENOMEM;
	in->mask = INTERN_MIN_BUCKETS - 1;
	in->budget = budget;
	in->seed = seed;
	return 0;
}

void intern_clear(struct intern *in)
{
	for (uint32_t b = 0; in->buckets && b <= in->mask; b++) {
		struct intern_entry *e = in->buckets[b], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
		in->buckets[b] = NULL;
	}
	in->count = 0;
	in->bytes = 0;
}

void intern_free(struct intern *in)
{
	intern_clear(in);
	free(in->buckets);
	memset(in, 0, sizeof(*in));
}

/* Double the buckets when the chains average more than one entry; a failed resize only slows lookups. */
static void maybe_grow(struct intern *in)
{
	uint32_t nb = (in->mask + 1) * 2;
	struct intern_entry **nbk;

	if (in->count <= in->mask + 1 || nb == 0)
		return;
	nbk = calloc(nb, sizeof(*nbk));
	if (!nbk)
		return;
	for (uint32_t b = 0; b <= in->mask; b++) {
		struct intern_entry *e = in->buckets[b], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = nbk[e->hash & (nb - 1)];
			nbk[e->hash & (nb - 1)] = e;
		}
	}
	free(in->buckets);
	in->buckets = nbk;
	in->mask = nb - 1;
}

const char *intern_get(struct intern *in, const char *s, size_t len)
{
	uint64_t h = hash_bytes(in->seed, s, len);
	struct intern_entry *e;
	size_t size = sizeof(*e) + len + 1;

	for (e = in->buckets[h & in->mask]; e; e = e->next) {
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
			e->refs += e->refs < UINT32_MAX; /* saturated: held until cleared */
			return e->s;
		}
	}
	if (len > UINT32_MAX - sizeof(*e) - 1 || in->bytes + size > in->budget)
		return NULL;
	e = malloc(size);
	if (!e)
		return NULL;
	e->refs = 1;
	e->len = (uint32_t)len;
	e->hash = h;
	memcpy(e->s, s, len);
	e->s[len] = 0;
	e->next = in->buckets[h & in->mask];
	in->buckets[h & in->mask] = e;
	in->bytes += size;
	in->count++;
	maybe_grow(in);
	return e->s;
}

void intern_put(struct intern *in, const char *s)
{
	struct intern_entry *e, **link;

	if (!s)
		return;
	e = (struct intern_entry *)(uintptr_t)(s - offsetof(struct intern_entry, s));
	if (e->refs == UINT32_MAX || --e->refs)
		return;
	for (link = &in->buckets[e->hash & in->mask]; *link; link = &(*link)->next) {
		if (*link == e) {
			*link = e->next;
			break;
		}
	}
	in->bytes -= sizeof(*e) + e->len + 1;
	in->count--;
	free(e);
}
