/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text for a terminal, from strings that came from a host: control
 * characters are shown as '?', so a command line or a step name cannot
 * drive the terminal. Shared by tracer report, tune and cost.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "textout.h"

/* ---- text: everything from a host goes through here -------------------- */

unsigned char clean_char(unsigned char c, bool multiline)
{
	if ((c < 0x20 && !(multiline && (c == '\n' || c == '\t'))) || c == 0x7f)
		return '?';
	return c;
}

/* s with control characters shown as '?' (but newlines and tabs when multiline). */
void put_clean(const char *s, bool multiline)
{
	for (; s && *s; s++)
		putchar(clean_char((unsigned char)*s, multiline));
}

/* A column: s cleaned (cut at FIELD_MAX bytes, on a character's start), NULL as "-", padded to width. */
void put_field(const char *s, int width)
{
	const char *p = s ? s : "-";
	char out[FIELD_MAX + 1];
	size_t n = 0;

	size_t max = width > 0 && (size_t)width < FIELD_MAX ? (size_t)width : FIELD_MAX; /* cut to the column */

	for (; *p && n < max; p++)
		out[n++] = (char)clean_char((unsigned char)*p, false);
	/* Cut inside a UTF-8 sequence (the next byte continues it): drop the sequence's first bytes too. */
	if (((unsigned char)*p & 0xc0) == 0x80) {
		while (n > 0 && ((unsigned char)out[n - 1] & 0xc0) == 0x80)
			n--;
		if (n > 0 && (unsigned char)out[n - 1] >= 0xc0)
			n--;
	}
	out[n] = 0;
	printf("%-*s ", width, out);
}

void format_time(char *out, size_t outlen, struct store_int ns)
{
	time_t t = (time_t)(ns.v / 1000000000);
	struct tm tm;

	if (!ns.known || !gmtime_r(&t, &tm)) {
		snprintf(out, outlen, "-");
		return;
	}
	strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm);
}

void format_bytes(char *out, size_t outlen, struct store_int b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b.v;
	size_t u = 0;

	if (!b.known || b.v < 0) {
		snprintf(out, outlen, "-");
		return;
	}
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(out, outlen, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

