/* SPDX-License-Identifier: Apache-2.0 */
#include "join.h"

#include <string.h>

#include "json_parse.h"
#include "records.h"

#define ARGV_NODES 1024u /* an argument area of TR_ARGV_MAX bytes has at most 2048 empty strings: past it, no match */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The first n bytes of a and b, case ignored. */
static bool same_n(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

bool join_same_host(const char *a, const char *b)
{
	size_t la, lb;

	if (!a || !b || !*a || !*b)
		return false;
	la = strlen(a);
	lb = strlen(b);
	if (la == lb)
		return same_n(a, b, la);
	if (la > lb) { /* b is the short one */
		const char *t = a;

		a = b;
		b = t;
		la = lb;
	}
	return b[la] == '.' && same_n(a, b, la);
}

static const char *last_component(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

bool join_names_job(const char *argv_json, size_t len, const char *name)
{
	static __thread struct json_node nodes[ARGV_NODES];
	char arg[TR_ARGV_MAX + 1];
	struct json_doc d;
	const struct json_node *root, *e;
	bool next_is_name = false;

	if (!argv_json || !name || !*name || len > 4 * TR_ARGV_MAX ||
	    json_parse(&d, argv_json, len, nodes, ARGV_NODES) != 0)
		return false;
	root = json_root(&d);
	if (root->type != JSON_ARRAY)
		return false;
	for (e = json_first(&d, root); e; e = json_next(&d, e)) {
		size_t n = 0;

		if (e->type != JSON_STRING || json_get_string(&d, e, arg, sizeof(arg), &n) != 0 || strlen(arg) != n)
			return false;
		if (next_is_name && !strcmp(arg, name))
			return true;
		next_is_name = !strcmp(arg, "-J") || !strcmp(arg, "--job-name");
		if ((!strncmp(arg, "--job-name=", 11) && !strcmp(arg + 11, name)) ||
		    (!strncmp(arg, "-J", 2) && arg[2] && !strcmp(arg + 2, name)) ||
		    (arg[0] != '-' && !strcmp(last_component(arg), name)))
			return true;
	}
	return false;
}

int join_pick(const struct join_candidate *c, size_t n, const char *submit_host, const char *job_name)
{
	int any = -1;

	for (size_t i = 0; i < n; i++) {
		if (!join_same_host(c[i].host_name, submit_host))
			continue;
		if (job_name && join_names_job(c[i].argv_json, c[i].argv_len, job_name))
			return (int)i;
		if (any < 0)
			any = (int)i;
	}
	return any;
}
