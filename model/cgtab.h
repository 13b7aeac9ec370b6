/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cgroup paths by id, as the kernel sent them (TR_CGROUP): the kernel
 * sends each path once, when a record first names the id, so the table
 * keeps them for the whole session (bounded; what the bound turns away is
 * counted). Paths are interned.
 */
#ifndef TRACER_MODEL_CGTAB_H
#define TRACER_MODEL_CGTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "intern.h"

#define CGTAB_DEFAULT_MAX 16384u

struct cgtab_entry {
	uint64_t id;      /* 0: empty slot */
	uint32_t v1;
	const char *path; /* interned */
};

struct cgtab {
	struct cgtab_entry *slots; /* open addressing, power of two, at most half full */
	uint32_t mask, used, max;
	uint64_t dropped;          /* paths not kept: table or string budget full */
	struct intern *strings;
};

int cgtab_init(struct cgtab *c, uint32_t max, struct intern *strings);
void cgtab_free(struct cgtab *c);

/* Remember the path of cgroup (v1, id). A second path for the same id replaces the first (ids are not reused while the cgroup lives). */
int cgtab_add(struct cgtab *c, uint32_t v1, uint64_t id, const char *path, uint32_t len);

/* The path of cgroup (v1, id), or NULL if the kernel never sent it. */
const char *cgtab_path(const struct cgtab *c, uint32_t v1, uint64_t id);

#endif /* TRACER_MODEL_CGTAB_H */
