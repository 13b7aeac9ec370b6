/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the collector's reader of tracer.conf (collector/conf.c,
 * run as root) against the general parser (common/config.c), with abort()
 * on a broken invariant.
 *
 * Input: a config text; and its first line (cut at a NUL) as a --set
 * KEY=VALUE argument.
 *
 * The collector's reader skips a line "KEY = ..." whose KEY is not one of
 * its seven; the harness blanks those lines (keeping the line numbers),
 * which leaves a text in which the two readers must agree exactly:
 *   - the same verdict (0 or -EINVAL) and, on a failure, the same message,
 *     byte for byte, and the collector's config untouched;
 *   - on success, the same values of the seven keys;
 * and on the text as it came:
 *   - the collector's reader gives what it gives on the blanked text, but
 *     where a blanked line is itself bad text (control characters, bytes
 *     that are not UTF-8): then it fails on that line;
 *   - the message is printable ASCII, "fuzz:LINE:COL: ...", within the
 *     buffer, the verdict the same with a small buffer or none;
 *   - --set of one of its keys, or without '=', is the general parser's
 *     verdict and message; of any other key, accepted and ignored.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../collector/conf.h"
#include "config.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const collector_keys[] = { "runtime_dir", "collector_user", "processor_user", "rules",
					      "sample_interval", "ring_order", "kernel_buffer" };

static bool is_collector_key(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(collector_keys) / sizeof(collector_keys[0]); i++)
		if (strlen(collector_keys[i]) == n && !memcmp(collector_keys[i], s, n))
			return true;
	return false;
}

/* The line is "KEY = ..." (blanks around the key) with a KEY the collector skips: where its KEY ends, or 0. */
static size_t skipped_key(const char *s, size_t n)
{
	size_t i = 0, at;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	at = i;
	while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '=' && s[i] != '#')
		i++;
	if (i == at || is_collector_key(s + at, i - at))
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < n && s[i] == '=' ? i : 0;
}

static void same_values(const struct collector_conf *c, const struct tracer_config *g)
{
	CHECK(!strcmp(c->runtime_dir, g->runtime_dir));
	CHECK(!strcmp(c->collector_user, g->collector_user));
	CHECK(!strcmp(c->processor_user, g->processor_user));
	CHECK(!strcmp(c->rules, g->rules));
	CHECK(c->sample_interval_ns == g->sample_interval_ns);
	CHECK(c->ring_order == g->ring_order);
	CHECK(c->kernel_buffer == g->kernel_buffer);
}

static void check_message(const char *err, size_t errsize)
{
	size_t n = strnlen(err, errsize);

	CHECK(n > 0 && n < errsize);
	CHECK(!strncmp(err, "fuzz:", 5));
	for (size_t i = 0; i < n; i++)
		CHECK(err[i] >= 0x20 && err[i] < 0x7f);
}

/* The line number a message "fuzz:LINE:COL: ..." names. */
static unsigned line_of(const char *err)
{
	return (unsigned)strtoul(err + 5, NULL, 10);
}

static void check_set(const uint8_t *data, size_t size, struct collector_conf *c, struct tracer_config *g)
{
	char arg[512], err_c[512], err_g[512];
	size_t n = 0;
	const char *eq;
	int rc_c, rc_g;

	while (n < size && n < sizeof(arg) - 1 && data[n] && data[n] != '\n')
		n++;
	memcpy(arg, data, n);
	arg[n] = 0;
	eq = strchr(arg, '=');
	conf_defaults(c);
	config_defaults(g);
	rc_c = conf_set_arg(c, arg, err_c, sizeof(err_c));
	rc_g = config_set_arg(g, arg, err_g, sizeof(err_g));
	if (eq && !is_collector_key(arg, (size_t)(eq - arg))) {
		CHECK(rc_c == 0);
		return;
	}
	CHECK(rc_c == rc_g);
	CHECK(rc_c == 0 || !strcmp(err_c, err_g));
	same_values(c, g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tracer_config g;
	struct collector_conf c, before, raw;
	const char *text = (const char *)data;
	char err_c[512], err_g[512], err_raw[512], tiny[8];
	char *blanked = malloc(size + 1);
	size_t len = 0, blanked_line = 0;
	unsigned line = 0;
	int rc_c, rc_g, rc_raw;

	CHECK(blanked != NULL);
	/* The text with the lines the collector skips emptied; which lines, by number. */
	for (size_t i = 0; i < size;) {
		const char *nl = memchr(text + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : size - i;

		/* Both readers skip a byte order mark at the start of the text. */
		size_t bom = i == 0 && n >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;

		line++;
		if (skipped_key(text + i + bom, n - bom)) {
			if (!blanked_line)
				blanked_line = line;
		} else {
			memcpy(blanked + len, text + i, n);
			len += n;
		}
		if (nl)
			blanked[len++] = '\n';
		i += n + (nl ? 1 : 0);
	}

	/* Exact agreement on the blanked text. */
	conf_defaults(&c);
	c.ring_order = 17; /* not a default: a failure must leave it */
	before = c;
	config_defaults(&g);
	rc_c = conf_parse(&c, "fuzz", blanked, len, err_c, sizeof(err_c));
	rc_g = config_parse(&g, "fuzz", blanked, len, err_g, sizeof(err_g));
	CHECK(rc_c == 0 || rc_c == -EINVAL);
	CHECK(rc_c == rc_g);
	if (rc_c) {
		check_message(err_c, sizeof(err_c));
		CHECK(!strcmp(err_c, err_g));
		CHECK(!memcmp(&c, &before, sizeof(c)));
	} else {
		same_values(&c, &g);
	}

	/* The text as it came: the same, but for a bad blanked line. */
	conf_defaults(&raw);
	rc_raw = conf_parse(&raw, "fuzz", text, size, err_raw, sizeof(err_raw));
	if (rc_raw == 0) {
		CHECK(rc_c == 0);
		CHECK(!memcmp(&raw, &c, sizeof(raw)));
	} else {
		check_message(err_raw, sizeof(err_raw));
		CHECK(blanked_line || rc_c);
		CHECK((rc_c && !strcmp(err_raw, err_c)) || (blanked_line && line_of(err_raw) >= blanked_line &&
							   (!rc_c || line_of(err_raw) <= line_of(err_c))));
	}
	CHECK(conf_parse(&raw, "fuzz", text, size, NULL, 0) == rc_raw);
	memset(tiny, 'X', sizeof(tiny));
	CHECK(conf_parse(&raw, "fuzz", text, size, tiny, 5) == rc_raw);
	CHECK(tiny[5] == 'X' && (rc_raw == 0 || strlen(tiny) == 4));

	check_set(data, size, &c, &g);
	free(blanked);
	return 0;
}
