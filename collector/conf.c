/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.conf for the collector (conf.h), read as root before the sandbox.
 * The lines and the file are read by the layer both readers share
 * (common/conf_lines.c); the checks of the collector's seven keys and their
 * messages are those of the general parser (common/config.c), which the
 * collector does not link; a line that sets another component's key is
 * skipped once it has the form "key = ...", since that component checks it.
 */
#include "conf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_lines.h"
#include "parse.h"

#define MS PARSE_NS_PER_MS
#define SEC PARSE_NS_PER_S
#define MIB (1024ULL * 1024)
#define GIB (1024 * MIB)

_Static_assert(PATH_MAX == 4096, "the messages say 4095 bytes");

enum key_type { PATH, USER, UINT, BYTES, DURATION };

struct conf_key {
	const char *name;
	enum key_type type;
	size_t offset, size;  /* of the field in struct collector_conf */
	uint64_t min, max;    /* integer, size (bytes, a power of two), duration (ns) */
	bool empty_ok;        /* path: empty means none */
	const char *expected; /* the parenthesis of a message, as common/config.c words it */
};

#define FIELD(f) offsetof(struct collector_conf, f), sizeof(((struct collector_conf *)0)->f)
#define USER_EXPECTED "a user name (letters, digits, '.', '_', '-'; at most 32 bytes) or uid, not root"

static const struct conf_key keys[] = {
	{ "runtime_dir", PATH, FIELD(runtime_dir), 0, 0, false, "an absolute path of at most 4095 bytes" },
	{ "collector_user", USER, FIELD(collector_user), 0, 0, false, USER_EXPECTED },
	{ "processor_user", USER, FIELD(processor_user), 0, 0, false, USER_EXPECTED },
	{ "rules", PATH, FIELD(rules), 0, 0, true, "an absolute path of at most 4095 bytes, or empty for none" },
	{ "sample_interval", DURATION, FIELD(sample_interval_ns), 100 * MS, 60 * SEC, false,
	  "a duration from 100ms to 60s: a number with ms, s, m or h; no unit: seconds" },
	{ "ring_order", UINT, FIELD(ring_order), 16, 30, false, "an integer from 16 to 30" },
	{ "kernel_buffer", BYTES, FIELD(kernel_buffer), MIB, GIB, false,
	  "a size from 1MiB to 1GiB, a power of two: an integer and B, K/KiB, M/MiB, G/GiB or T/TiB, all binary" },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

void conf_defaults(struct collector_conf *c)
{
	*c = (struct collector_conf){ .runtime_dir = "/run/tracer", .collector_user = "65533",
				      .processor_user = "tracer", .sample_interval_ns = SEC, .ring_order = 22,
				      .kernel_buffer = 16 * MIB };
}

/* The collector's key named by s[0..len), or NULL: another component's, or none at all. */
static const struct conf_key *find_key(const char *s, size_t len)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len && !memcmp(keys[i].name, s, len))
			return &keys[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Values                                                             */
/* ------------------------------------------------------------------ */

static int not_valid(const struct conf_key *k, const char *v, const char *what, char *w, size_t wlen)
{
	char b[48];

	return conf_report(w, wlen, -EINVAL, "'%s' %s (%s)", conf_shown(v, strlen(v), b), what, k->expected);
}

/* A path, or a user name as useradd takes it (or a uid) that is not root: the daemons run as it to give root up. */
static int check_string(const struct conf_key *k, const char *v, char *w, size_t wlen)
{
	size_t len = strlen(v), n, digits;
	uint64_t uid;

	if (len >= k->size)
		return conf_report(w, wlen, -EINVAL, "value of %zu bytes is too long (%s)", len, k->expected);
	if (len == 0)
		return k->empty_ok ? 0 : conf_report(w, wlen, -EINVAL, "empty value (%s)", k->expected);
	if (k->type == PATH)
		return v[0] == '/' ? 0 : not_valid(k, v, "is not an absolute path", w, wlen);
	n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	digits = strspn(v, "0123456789");
	if (v[n] || v[0] == '-')
		return not_valid(k, v, "is not a user name or uid", w, wlen);
	if (!strcmp(v, "root") || (digits == n && strspn(v, "0") == n))
		return not_valid(k, v, "is root: the daemons run as this user to give root up", w, wlen);
	if (digits == n && (n > 10 || parse_u64(v, 0xfffffffeULL, &uid)))
		return not_valid(k, v, "is not a valid uid", w, wlen);
	return 0;
}

/* Set key k from v (decoded, UTF-8 without control characters). The field is written only if v is valid. */
static int set_value(const struct conf_key *k, struct collector_conf *c, const char *v, char *w, size_t wlen)
{
	char *field = (char *)c + k->offset;
	uint64_t u64 = 0;
	uint32_t u32;
	int rc;

	if (k->type == PATH || k->type == USER) {
		rc = check_string(k, v, w, wlen);
		if (!rc)
			strcpy(field, v); /* fits: checked above */
		return rc;
	}
	/* The numbers: the general parser's checks and messages (common/conf_lines.c); kernel_buffer, the one size
	 * here, is a power of two. */
	rc = conf_number(k->type == UINT ? CONF_UINT : k->type == BYTES ? CONF_BYTES_POW2 : CONF_DURATION, v, k->min,
			 k->max, k->expected, &u64, w, wlen);
	u32 = (uint32_t)u64; /* an integer's max is within uint32_t */
	if (!rc)
		memcpy(field, k->type == UINT ? (void *)&u32 : (void *)&u64, k->size);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Lines (common/conf_lines.c)                                        */
/* ------------------------------------------------------------------ */

static int find_line_key(void *ctx, const char *s, size_t len, const char **name, size_t *max, char *w, size_t wlen)
{
	const struct conf_key *k = find_key(s, len);

	(void)ctx, (void)w, (void)wlen;
	if (!k)
		return -ENOENT; /* another component's key (or none's): the programs that read it check it */
	*name = k->name;
	*max = (k->type == PATH || k->type == USER ? k->size : PATH_MAX + 1) - 1;
	return (int)(k - keys);
}

static int set_line_key(void *ctx, int key, const char *value, char *w, size_t wlen)
{
	return set_value(&keys[key], ctx, value, w, wlen);
}

int conf_parse(struct collector_conf *c, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	struct collector_conf next;
	unsigned lines[NKEYS] = { 0 };
	struct conf_lines cl = { .name = name, .err = err, .errlen = errlen, .ctx = &next, .find = find_line_key,
				 .set = set_line_key, .lines = lines };
	int rc;

	conf_defaults(&next);
	rc = conf_lines_parse(&cl, text, len);
	if (!rc)
		*c = next;
	return rc;
}

int conf_set_arg(struct collector_conf *c, const char *key_value, char *err, size_t errlen)
{
	const char *eq = strchr(key_value, '=');
	const struct conf_key *k = eq ? find_key(key_value, (size_t)(eq - key_value)) : NULL;
	char w[CONF_WHY_MAX], b[48];
	size_t at;

	if (!eq)
		return conf_report(err, errlen, -EINVAL, "'%s' has no '=' (key=value)", conf_shown(key_value, strlen(key_value), b));
	if (k && (conf_check_text(eq + 1, strlen(eq + 1), &at, w, sizeof(w)) || set_value(k, c, eq + 1, w, sizeof(w))))
		return conf_report(err, errlen, -EINVAL, "key '%s': %s", k->name, w);
	return 0; /* set, or another component's key */
}

static int parse_file(void *c, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	return conf_parse(c, name, text, len, err, errlen);
}

int conf_load(struct collector_conf *c, const char *path, char *err, size_t errlen)
{
	return conf_lines_load(path, true, parse_file, c, err, errlen);
}

int conf_from_options(struct collector_conf *c, const char *path, const char *const *sets, unsigned nsets)
{
	char err[PATH_MAX + 256];
	int rc;

	conf_defaults(c);
	err[0] = 0;
	if (path && (rc = conf_load(c, path, err, sizeof(err))) != 0) {
		fprintf(stderr, "<3>%s\n", err[0] ? err : strerror(-rc));
		return -1;
	}
	for (unsigned i = 0; i < nsets; i++)
		if (conf_set_arg(c, sets[i], err, sizeof(err))) {
			fprintf(stderr, "<3>--set %s: %s\n", sets[i], err);
			return -1;
		}
	return 0;
}
