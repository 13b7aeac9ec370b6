/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the tracer.conf parser (config_parse) and the
 * command-line override (config_set), with abort() on a broken invariant.
 *
 * Input: a config text, parsed whole; and the same bytes split at the
 * first '=' (each part cut at its first NUL) as config_set's key and value.
 *
 * Invariants: a parse returns 0, -EINVAL or -ENOMEM, a set 0 or -EINVAL;
 * a failed one leaves the config byte for byte as it was and writes a
 * message of printable ASCII
 * ("fuzz:LINE:COL: ..." or "fuzz: ..." for a parse), truncated to the
 * buffer given, with the same verdict whatever the buffer's size; a
 * successful parse passes config_check; whatever config_write writes of a
 * config that passes config_check parses back to a config that writes the
 * same text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const char *err, size_t errsize, const char *prefix)
{
	size_t n = strnlen(err, errsize), p = strlen(prefix);

	CHECK(n < errsize);
	CHECK(n > 0);
	CHECK(!strncmp(err, prefix, n < p ? n : p));
	for (size_t i = 0; i < n; i++)
		CHECK(err[i] >= 0x20 && err[i] < 0x7f);
}

static char *written(const struct tracer_config *c, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f != NULL);
	config_write(f, c);
	CHECK(fclose(f) == 0);
	return buf;
}

/* What config_write writes parses back, and writes the same again. */
static void check_round_trip(const struct tracer_config *c, struct tracer_config *scratch)
{
	char err[CONFIG_ERR_MIN + 64];
	size_t alen, blen;
	char *a, *b;
	int rc;

	if (config_check(c, NULL, 0))
		return;
	a = written(c, &alen);
	rc = config_parse(scratch, "fuzz", a, alen, err, sizeof(err));
	if (rc)
		fprintf(stderr, "config_write's text does not parse back: %s\n%s", err, a);
	CHECK(rc == 0);
	b = written(scratch, &blen);
	CHECK(alen == blen && !memcmp(a, b, alen));
	free(a);
	free(b);
}

static void fuzz_parse(const uint8_t *data, size_t size, struct tracer_config *c, struct tracer_config *before,
		       struct tracer_config *scratch)
{
	char err[CONFIG_ERR_MIN + 64], tiny[6];
	int rc, rc2;

	config_defaults(c);
	CHECK(config_set(c, "ring_order", "18", NULL, 0) == 0); /* not the defaults: a parse must replace them */
	memcpy(before, c, sizeof(*c));
	rc = config_parse(c, "fuzz", (const char *)data, size, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc) {
		check_error(err, sizeof(err), "fuzz:");
		CHECK(!memcmp(c, before, sizeof(*c)));
		memset(tiny, 'X', sizeof(tiny));
		rc2 = config_parse(c, "fuzz", (const char *)data, size, tiny, 4);
		CHECK(rc2 == rc);
		CHECK(tiny[3] == 0 && tiny[4] == 'X');
		CHECK(!memcmp(c, before, sizeof(*c)));
		return;
	}
	CHECK(config_check(c, NULL, 0) == 0);
	check_round_trip(c, scratch);
}

static void fuzz_set(const uint8_t *data, size_t size, struct tracer_config *c, struct tracer_config *before,
		     struct tracer_config *scratch)
{
	const uint8_t *eq = memchr(data, '=', size);
	size_t klen = eq ? (size_t)(eq - data) : size;
	char *key = malloc(klen + 1), *value = malloc(size - klen + 1);
	char err[CONFIG_ERR_MIN + 64];
	int rc;

	CHECK(key && value);
	memcpy(key, data, klen);
	key[klen] = 0;
	if (eq)
		memcpy(value, eq + 1, size - klen - 1);
	value[eq ? size - klen - 1 : 0] = 0;
	config_defaults(c);
	memcpy(before, c, sizeof(*c));
	rc = config_set(c, key, value, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		check_error(err, sizeof(err), "");
		CHECK(!memcmp(c, before, sizeof(*c)));
	} else {
		check_round_trip(c, scratch); /* a value set from a command line can be written into the file */
	}
	free(key);
	free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tracer_config c, before, scratch; /* large: not on the stack */

	fuzz_parse(data, size, &c, &before, &scratch);
	fuzz_set(data, size, &c, &before, &scratch);
	return 0;
}
