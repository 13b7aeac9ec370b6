/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one parser of each kind of number tracer reads as text: command-line
 * options, tracer.conf values, environment variables, HTTP headers.
 *
 *   parse_u64       "4096"                       a whole number, at most max
 *   parse_size      "16MiB", "64 M", "1048576"   bytes; B, K/KiB, M/MiB, G/GiB, T/TiB, all binary
 *   parse_duration  "2", "0.5"                   seconds, up to 9 digits after the point
 *                   with PARSE_UNITS also "250ms", "1.5 s", "0.5m", "2h"
 *
 * Strict: decimal digits only (no sign, no blank before, no 0x), nothing
 * after the number but what the kind allows, and a value past 64 bits is
 * out of range, never wrapped. What the number may then be (a key's bounds,
 * "not zero") is the caller's to check.
 *
 * Errors are enum parse_error (0: none); parse_error_name() says what each
 * is wrong with. The callers word their own messages from it.
 *
 * Header-only: common/config.c uses these, and it is built into the
 * collector by itself (COLLECTOR_SRC), without the common library.
 */
#ifndef TRACER_COMMON_PARSE_H
#define TRACER_COMMON_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PARSE_NS_PER_MS 1000000ULL
#define PARSE_NS_PER_S (1000 * PARSE_NS_PER_MS)

enum parse_error {
	PARSE_OK = 0,
	PARSE_E_SYNTAX,         /* not a number: no digit where one must be, or text after it */
	PARSE_E_RANGE,          /* above the maximum, or beyond 64 bits */
	PARSE_E_UNIT,           /* a size or duration with a unit that is not one of its units */
	PARSE_E_POINT,          /* a point with no digit after it */
	PARSE_E_FRACTION,       /* more than 9 digits after the point (finer than a nanosecond) */
	PARSE_E_SUB_NS,         /* milliseconds with a fraction that is not whole nanoseconds */
};

/* parse_duration's flags. */
#define PARSE_UNITS 0x1u /* a unit may follow the number (blanks between allowed); without: seconds only */

static inline const char *parse_error_name(enum parse_error e)
{
	switch (e) {
	case PARSE_OK: return "no error";
	case PARSE_E_SYNTAX: return "not a number";
	case PARSE_E_RANGE: return "out of range";
	case PARSE_E_UNIT: return "unknown unit";
	case PARSE_E_POINT: return "no digit after the point";
	case PARSE_E_FRACTION: return "more than 9 digits after the point";
	case PARSE_E_SUB_NS: return "finer than a nanosecond";
	}
	return "unknown error";
}

/*
 * The decimal digits at the start of s: how many in *ndigits (all of them,
 * also past an overflow), their value in *v. PARSE_OK, PARSE_E_SYNTAX (no
 * digit) or PARSE_E_RANGE (beyond 2^64 - 1; *v is then meaningless).
 */
static inline enum parse_error parse_u64_prefix(const char *s, size_t *ndigits, uint64_t *v)
{
	enum parse_error rc = PARSE_OK;
	size_t i = 0;

	*v = 0;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (*v > (UINT64_MAX - d) / 10)
			rc = PARSE_E_RANGE;
		else
			*v = *v * 10 + d;
	}
	*ndigits = i;
	return i == 0 ? PARSE_E_SYNTAX : rc;
}

/* The whole of s: digits only, at most max. *out is written only on success. */
static inline enum parse_error parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	size_t n;
	uint64_t v;
	enum parse_error rc = parse_u64_prefix(s, &n, &v);

	if (rc == PARSE_E_SYNTAX || s[n])
		return PARSE_E_SYNTAX;
	if (rc || v > max)
		return PARSE_E_RANGE;
	*out = v;
	return PARSE_OK;
}

static inline size_t parse_skip_blanks(const char *s, size_t i)
{
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	return i;
}

/* Where the unit of a size starts: past its digits and blanks (for a message that shows it). */
static inline size_t parse_size_unit_at(const char *s)
{
	return parse_skip_blanks(s, strspn(s, "0123456789"));
}

/* The whole of s: digits, optionally blanks, then a unit (none: bytes). *bytes written only on success. */
static inline enum parse_error parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		uint64_t unit;
	} units[] = { { "", 1 },           { "B", 1 },           { "K", 1ULL << 10 },  { "KiB", 1ULL << 10 },
		      { "M", 1ULL << 20 },  { "MiB", 1ULL << 20 }, { "G", 1ULL << 30 },  { "GiB", 1ULL << 30 },
		      { "T", 1ULL << 40 },  { "TiB", 1ULL << 40 } };
	size_t i, u;
	uint64_t n;
	enum parse_error rc = parse_u64_prefix(s, &i, &n);

	if (rc == PARSE_E_SYNTAX)
		return rc;
	i = parse_skip_blanks(s, i);
	for (u = 0; u < sizeof(units) / sizeof(units[0]) && strcmp(s + i, units[u].suffix); u++)
		;
	if (u == sizeof(units) / sizeof(units[0]))
		return PARSE_E_UNIT;
	if (rc || n > UINT64_MAX / units[u].unit)
		return PARSE_E_RANGE;
	*bytes = n * units[u].unit;
	return PARSE_OK;
}

/*
 * The whole of s as nanoseconds: digits, optionally a point and 1 to 9
 * digits, then (with PARSE_UNITS) optionally blanks and ms, s, m or h; no
 * unit: seconds. *ns written only on success.
 */
static inline enum parse_error parse_duration(const char *s, unsigned flags, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t unit;
	} units[] = { { "", PARSE_NS_PER_S },     { "ms", PARSE_NS_PER_MS }, { "s", PARSE_NS_PER_S },
		      { "m", 60 * PARSE_NS_PER_S }, { "h", 3600 * PARSE_NS_PER_S } };
	const uint64_t day = 86400 * PARSE_NS_PER_S;
	size_t i, u, digits = 0;
	uint64_t whole, frac9 = 0, unit; /* frac9: the fraction in units of 10^-9 */
	enum parse_error rc = parse_u64_prefix(s, &i, &whole);

	if (rc == PARSE_E_SYNTAX)
		return rc;
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++, digits++)
			if (digits < 9)
				frac9 = frac9 * 10 + (uint64_t)(s[i] - '0');
			else
				return PARSE_E_FRACTION;
		if (digits == 0)
			return PARSE_E_POINT;
		for (size_t d = digits; d < 9; d++)
			frac9 *= 10;
	}
	if (flags & PARSE_UNITS)
		i = parse_skip_blanks(s, i);
	for (u = 0; u < sizeof(units) / sizeof(units[0]) && strcmp(s + i, units[u].suffix); u++)
		;
	if (u == sizeof(units) / sizeof(units[0]) || (!(flags & PARSE_UNITS) && u != 0))
		return flags & PARSE_UNITS ? PARSE_E_UNIT : PARSE_E_SYNTAX;
	unit = units[u].unit;
	/* Every unit is a whole number of ms; a fraction of a ms must be whole ns. */
	if (unit == PARSE_NS_PER_MS && frac9 % 1000)
		return PARSE_E_SUB_NS;
	if (rc || whole > (UINT64_MAX - day) / unit) /* room for the fraction, less than one unit */
		return PARSE_E_RANGE;
	*ns = whole * unit + (unit == PARSE_NS_PER_MS ? frac9 / 1000 : frac9 * (unit / PARSE_NS_PER_S));
	return PARSE_OK;
}

#endif /* TRACER_COMMON_PARSE_H */
