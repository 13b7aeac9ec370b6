/* SPDX-License-Identifier: Apache-2.0 */
#include "cgtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cgtab_init(struct cgtab *c, uint32_t max, struct intern *strings)
{
	uint32_t n = 16;

	memset(c, 0, sizeof(*c));
	if (max == 0 || max > (1u << 24))
		return -EINVAL;
	while (n < 2 * max)
		n <<= 1;
	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots)
		return -ENOMEM;
	c->mask = n - 1;
	c->max = max;
	c->strings = strings;
	return 0;
}

void cgtab_free(struct cgtab *c)
{
	for (uint32_t i = 0; c->slots && i <= c->mask; i++)
		if (c->slots[i].id)
			intern_put(c->strings, c->slots[i].path);
	free(c->slots);
	c->slots = NULL;
}

static uint32_t slot_of(const struct cgtab *c, uint32_t v1, uint64_t id)
{
	uint64_t h = (id ^ ((uint64_t)v1 << 63)) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32) & c->mask;
}

static struct cgtab_entry *find(const struct cgtab *c, uint32_t v1, uint64_t id)
{
	/* At most half full: a probe always ends at an empty slot. */
	for (uint32_t i = slot_of(c, v1, id);; i = (i + 1) & c->mask) {
		struct cgtab_entry *e = &c->slots[i];

		if (!e->id || (e->id == id && e->v1 == v1))
			return e;
	}
}

int cgtab_add(struct cgtab *c, uint32_t v1, uint64_t id, const char *path, uint32_t len)
{
	struct cgtab_entry *e;
	const char *s;

	if (id == 0)
		return -EINVAL;
	e = find(c, v1, id);
	if (!e->id && c->used >= c->max) {
		c->dropped++;
		return -ENOSPC;
	}
	s = intern_get(c->strings, path, len);
	if (!s) {
		c->dropped++;
		return -ENOMEM;
	}
	if (e->id) {
		intern_put(c->strings, e->path);
	} else {
		e->id = id;
		e->v1 = v1;
		c->used++;
	}
	e->path = s;
	return 0;
}

const char *cgtab_path(const struct cgtab *c, uint32_t v1, uint64_t id)
{
	const struct cgtab_entry *e;

	if (id == 0)
		return NULL;
	e = find(c, v1, id);
	return e->id ? e->path : NULL;
}
