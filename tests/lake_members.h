/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the lake stores of a JSON record, checked member by member against lake/schema.c's maps (struct
 * lake_upsert): each member of a record the processor writes is a fill's, or skipped with a reason; each
 * member a fill reads is one the records have. For cmocka tests (tests/test_attrib_runs.c, test_report_run.c).
 */
#ifndef TRACER_TESTS_LAKE_MEMBERS_H
#define TRACER_TESTS_LAKE_MEMBERS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json_parse.h"
#include "schema.h"

/* Does upsert u hold member path (fills', or skipped with a reason)? Counted in seen[fill] of each. */
static inline bool lake_holds(const struct lake_upsert *u, const char *path, bool *seen)
{
	bool held = false;

	for (unsigned i = 0; i < u->nfills; i++)
		if (u->fills[i].src.from == LF_JSON && u->fills[i].src.json && !strcmp(u->fills[i].src.json, path))
			held = seen[i] = true;
	if (held)
		return true;
	for (unsigned i = 0; i < u->njskip; i++)
		if (!strcmp(u->jskip[i].member, path))
			return u->jskip[i].why && *u->jskip[i].why;
	return false;
}

/*
 * Each member of object obj held by u: an object member's own members ("object.name"), unless u holds the
 * object whole.
 */
static inline void members_held(const struct json_doc *d, const struct json_node *nodes, uint32_t obj,
				const struct lake_upsert *u, bool *seen)
{
	for (uint32_t i = nodes[obj].first; i; i = nodes[i].next) {
		const struct json_node *n = &nodes[i];
		char path[96];

		snprintf(path, sizeof(path), "%.*s", (int)n->key_len, d->text + n->key_start);
		if (lake_holds(u, path, seen))
			continue;
		if (n->type != JSON_OBJECT)
			fail_msg("member %s of a %s: the lake stores it nowhere", path, u->table);
		for (uint32_t k = n->first; k; k = nodes[k].next) {
			snprintf(path, sizeof(path), "%.*s.%.*s", (int)n->key_len, d->text + n->key_start,
				 (int)nodes[k].key_len, d->text + nodes[k].key_start);
			if (!lake_holds(u, path, seen))
				fail_msg("member %s of a %s: the lake stores it nowhere", path, u->table);
		}
	}
}

/* The node of object obj's member name, or 0 (the root's node: no member) if it has none. */
static inline uint32_t member_node(const struct json_doc *d, const struct json_node *nodes, uint32_t obj,
				   const char *name)
{
	size_t len = strlen(name);

	for (uint32_t i = nodes[obj].first; i; i = nodes[i].next)
		if (nodes[i].key_len == len && !memcmp(d->text + nodes[i].key_start, name, len))
			return i;
	return 0;
}

/* Each element of the array u->element (of the root, or of its object u->object) held by u: how many. */
static inline unsigned elements_held(const struct json_doc *d, const struct json_node *nodes,
				     const struct lake_upsert *u, bool *seen)
{
	uint32_t obj = u->object ? member_node(d, nodes, 0, u->object) : 0, list;
	unsigned n = 0;

	if (u->object && !obj)
		return 0;
	list = member_node(d, nodes, obj, u->element);
	for (uint32_t e = list ? nodes[list].first : 0; e; e = nodes[e].next, n++)
		members_held(d, nodes, e, u, seen);
	return n;
}

/* Every member fill of u was found in a record (no column waits for a member the processor does not write). */
static inline void every_fill_seen(const struct lake_upsert *u, const bool *seen)
{
	for (unsigned i = 0; i < u->nfills; i++)
		if (u->fills[i].src.from == LF_JSON && u->fills[i].src.json && !seen[i])
			fail_msg("%s.%s holds member %s, which no record had", u->table, u->fills[i].column,
				 u->fills[i].src.json);
}

#endif /* TRACER_TESTS_LAKE_MEMBERS_H */
