/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes as command lines through the redactor,
 * with abort() on a broken invariant:
 *   - it never fails with an output buffer as large as the input, and
 *     every string comes out no longer than it went in, in the same order;
 *   - redacting the output again changes nothing (idempotent);
 *   - redact_argv and redact_area agree on the same strings;
 *   - a planted "--password SECRET" and "--password=SECRET" are always
 *     redacted, whatever surrounds them (when no rules file says keep);
 *   - a rules file that fails to load leaves the rules unchanged.
 *
 * Input:
 *   [0]   flags: bit 0 REDACT_TRUNCATED; bit 1 the first NUL-terminated
 *         string is a rules file; bit 2 plant the password pair after the
 *         first argument; bit 3 the whole rest is one redact_string() text
 *   then  NUL-separated arguments (at most MAX_ARGS)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 256
#define MAX_IN 8192
#define PLANTED "ZZplantedZZ"

static char in[MAX_IN + 64], out[MAX_IN + 64], again[MAX_IN + 64], area_out[MAX_IN + 64];

/* Split a NUL-separated output back into strings. */
static size_t split(const char *buf, size_t len, const char **argv)
{
	size_t n = 0;

	for (size_t off = 0; off < len && n < MAX_ARGS + 2; off += strlen(buf + off) + 1)
		argv[n++] = buf + off;
	return n;
}

static void check_string(const struct redact_rules *r, const char *s, size_t len, unsigned flags)
{
	size_t n1, n2;
	unsigned k;

	CHECK(redact_string(r, s, len, flags, out, len + 1, &n1, &k) == 0);
	CHECK(n1 <= len && out[n1] == 0);
	CHECK(redact_string(r, out, n1, flags, again, n1 + 1, &n2, &k) == 0);
	CHECK(n2 == n1 && !memcmp(out, again, n1));
	if (len > 0)
		CHECK(redact_string(r, s, len, flags, out, len, &n1, &k) < 0); /* one byte short */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct redact_rules rules;
	const char *argv[MAX_ARGS + 2], *argv2[MAX_ARGS + 2];
	unsigned flags = size > 0 ? data[0] : 0, rf = flags & REDACT_TRUNCATED, k1, k2;
	size_t at = 0, argc = 0, total = 0, len1, len2, len3, argc2, len = size > 0 ? size - 1 : 0;
	bool keeps = false, planted = false;

	if (size == 0 || len > MAX_IN)
		return 0;
	memcpy(in, data + 1, len);
	in[len] = 0;
	redact_rules_init(&rules);
	if (flags & 2) {
		char err[128];
		size_t n = strnlen(in, len);

		if (redact_rules_load(&rules, in, n, err, sizeof(err)) != 0)
			CHECK(rules.n == 0 && err[0] != 0);
		for (unsigned i = 0; i < rules.n; i++)
			keeps |= rules.rule[i].kind == REDACT_RULE_KEEP;
		at = n + 1;
	}
	if (flags & 8) {
		if (at <= len)
			check_string(&rules, in + at, len - at, rf);
		return 0;
	}
	/* the arguments: in[at..len) split at NULs; in[len] is a NUL */
	while (at <= len && argc < MAX_ARGS) {
		argv[argc++] = in + at;
		at += strlen(in + at) + 1;
		if (argc == 1 && (flags & 4)) {
			argv[argc++] = "--password";
			argv[argc++] = PLANTED;
			argv[argc++] = "--password=" PLANTED;
			planted = true;
		}
	}
	for (size_t i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	CHECK(total <= sizeof(out));

	CHECK(redact_argv(&rules, argv, argc, rf, out, total, &len1, &k1) == 0);
	CHECK(len1 <= total);
	argc2 = split(out, len1, argv2);
	CHECK(argc2 == argc);
	for (size_t i = 0; i < argc; i++)
		CHECK(strlen(argv2[i]) <= strlen(argv[i]));
	if (planted && !keeps) {
		CHECK(!strcmp(argv2[2], "***"));
		CHECK(!strcmp(argv2[3], "--password=***"));
	}

	/* idempotent */
	CHECK(redact_argv(&rules, argv2, argc2, rf, again, len1, &len2, &k2) == 0);
	CHECK(len2 == len1 && !memcmp(out, again, len1));

	/* the same through an argument area */
	{
		size_t off = 0;

		for (size_t i = 0; i < argc; i++) {
			size_t n = strlen(argv[i]) + 1;

			memcpy(again + off, argv[i], n);
			off += n;
		}
		CHECK(redact_area(&rules, again, off, rf, area_out, off, &len3, &k2) == 0);
		CHECK(len3 == len1 && !memcmp(area_out, out, len1) && k2 == k1);
	}

	/* too small a buffer is refused, never overrun */
	if (total > 0)
		CHECK(redact_argv(&rules, argv, argc, rf, out, total - 1, &len1, &k1) < 0);
	return 0;
}
