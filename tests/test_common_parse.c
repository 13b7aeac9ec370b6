/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one parser of each kind of number (common/parse.h): integers take
 * digits only (no sign - "+5" included -, no blank, no 0x) up to their
 * maximum, never wrapping; sizes take the binary units; durations take
 * seconds with up to 9 decimals, and ms/s/m/h only when the caller allows
 * units. tests/test_common_config.c checks the messages tracer.conf words from
 * these errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "parse.h"

#define MS PARSE_NS_PER_MS
#define SEC PARSE_NS_PER_S

static uint64_t u64_ok(const char *s, uint64_t max)
{
	uint64_t v = 0;
	enum parse_error e = parse_u64(s, max, &v);

	if (e)
		fail_msg("parse_u64('%s', %llu): %s", s, (unsigned long long)max, parse_error_name(e));
	return v;
}

static void u64_bad(const char *s, uint64_t max, enum parse_error want)
{
	uint64_t v = 12345;
	enum parse_error e = parse_u64(s, max, &v);

	if (e != want)
		fail_msg("parse_u64('%s'): %s, want %s", s, parse_error_name(e), parse_error_name(want));
	assert_int_equal(v, 12345); /* untouched */
}

static void integers_are_digits_only(void **state)
{
	(void)state;
	assert_int_equal(u64_ok("0", 10), 0);
	assert_int_equal(u64_ok("10", 10), 10);
	assert_int_equal(u64_ok("007", 10), 7);
	assert_true(u64_ok("18446744073709551615", UINT64_MAX) == UINT64_MAX);
	u64_bad("+5", 10, PARSE_E_SYNTAX);
	u64_bad("-5", 10, PARSE_E_SYNTAX);
	u64_bad(" 5", 10, PARSE_E_SYNTAX);
	u64_bad("\t5", 10, PARSE_E_SYNTAX);
	u64_bad("5 ", 10, PARSE_E_SYNTAX);
	u64_bad("5x", 10, PARSE_E_SYNTAX);
	u64_bad("0x5", 10, PARSE_E_SYNTAX);
	u64_bad("", 10, PARSE_E_SYNTAX);
	u64_bad("5.0", 10, PARSE_E_SYNTAX);
}

static void integers_above_the_maximum_or_64_bits_are_out_of_range(void **state)
{
	(void)state;
	u64_bad("11", 10, PARSE_E_RANGE);
	u64_bad("18446744073709551616", UINT64_MAX, PARSE_E_RANGE);
	u64_bad("99999999999999999999999999", UINT64_MAX, PARSE_E_RANGE);
	/* Syntax first: a long number with a letter after it is not a number. */
	u64_bad("99999999999999999999999999x", UINT64_MAX, PARSE_E_SYNTAX);
}

static void a_prefix_reports_its_digits(void **state)
{
	size_t n;
	uint64_t v;

	(void)state;
	assert_int_equal(parse_u64_prefix("8080/path", &n, &v), PARSE_OK);
	assert_int_equal(n, 4);
	assert_int_equal(v, 8080);
	assert_int_equal(parse_u64_prefix("x1", &n, &v), PARSE_E_SYNTAX);
	assert_int_equal(n, 0);
	assert_int_equal(parse_u64_prefix("123456789012345678901234 s", &n, &v), PARSE_E_RANGE);
	assert_int_equal(n, 24); /* every digit, also past the overflow */
}

static uint64_t size_ok(const char *s)
{
	uint64_t v = 0;
	enum parse_error e = parse_size(s, &v);

	if (e)
		fail_msg("parse_size('%s'): %s", s, parse_error_name(e));
	return v;
}

static void sizes_take_binary_units(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(size_ok("4096"), 4096);
	assert_int_equal(size_ok("4096B"), 4096);
	assert_int_equal(size_ok("4K"), 4096);
	assert_int_equal(size_ok("4KiB"), 4096);
	assert_int_equal(size_ok("16M"), 16ULL << 20);
	assert_int_equal(size_ok("16 MiB"), 16ULL << 20);
	assert_int_equal(size_ok("1\tGiB"), 1ULL << 30);
	assert_int_equal(size_ok("2T"), 2ULL << 40);
	assert_int_equal(parse_size("16MB", &v), PARSE_E_UNIT);
	assert_int_equal(parse_size("16mib", &v), PARSE_E_UNIT);
	assert_int_equal(parse_size("1.5M", &v), PARSE_E_UNIT);
	assert_int_equal(parse_size("16M ", &v), PARSE_E_UNIT);
	assert_int_equal(parse_size("+16M", &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_size("M", &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_size("16777216T", &v), PARSE_E_RANGE); /* 2^64 */
	assert_int_equal(parse_size("99999999999999999999", &v), PARSE_E_RANGE);
	assert_int_equal(v, 7);
	assert_int_equal(parse_size_unit_at("1.5MiB"), 1);
	assert_int_equal(parse_size_unit_at("16  MB"), 4);
}

static uint64_t duration_ok(const char *s, unsigned flags)
{
	uint64_t v = 0;
	enum parse_error e = parse_duration(s, flags, &v);

	if (e)
		fail_msg("parse_duration('%s', %u): %s", s, flags, parse_error_name(e));
	return v;
}

static void durations_are_seconds_with_up_to_nine_decimals(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(duration_ok("2", 0), 2 * SEC);
	assert_int_equal(duration_ok("0", 0), 0);
	assert_int_equal(duration_ok("0.5", 0), 500 * MS);
	assert_int_equal(duration_ok("2.000000001", 0), 2 * SEC + 1);
	assert_int_equal(duration_ok("1.500000000", 0), 1500 * MS);
	assert_int_equal(parse_duration("1.0000000001", 0, &v), PARSE_E_FRACTION);
	assert_int_equal(parse_duration("1.5000000000", 0, &v), PARSE_E_FRACTION); /* a 10th digit, even a 0 */
	assert_int_equal(parse_duration("1.", 0, &v), PARSE_E_POINT);
	assert_int_equal(parse_duration(".5", 0, &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_duration("+1", 0, &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_duration("", 0, &v), PARSE_E_SYNTAX);
	/* Without PARSE_UNITS: seconds only, nothing after the number. */
	assert_int_equal(parse_duration("2s", 0, &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_duration("250ms", 0, &v), PARSE_E_SYNTAX);
	assert_int_equal(parse_duration("2 ", 0, &v), PARSE_E_SYNTAX);
	assert_int_equal(v, 7);
}

static void durations_with_units_take_ms_s_m_h(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(duration_ok("90", PARSE_UNITS), 90 * SEC);
	assert_int_equal(duration_ok("250ms", PARSE_UNITS), 250 * MS);
	assert_int_equal(duration_ok("1.5 s", PARSE_UNITS), 1500 * MS);
	assert_int_equal(duration_ok("0.5m", PARSE_UNITS), 30 * SEC);
	assert_int_equal(duration_ok("2h", PARSE_UNITS), 7200 * SEC);
	assert_int_equal(duration_ok("1.000001ms", PARSE_UNITS), 1000001);
	assert_int_equal(parse_duration("1.0000001ms", PARSE_UNITS, &v), PARSE_E_SUB_NS);
	assert_int_equal(parse_duration("5ns", PARSE_UNITS, &v), PARSE_E_UNIT);
	assert_int_equal(parse_duration("5S", PARSE_UNITS, &v), PARSE_E_UNIT);
	assert_int_equal(parse_duration("1e3", PARSE_UNITS, &v), PARSE_E_UNIT);
	assert_int_equal(parse_duration("18446744073709551615h", PARSE_UNITS, &v), PARSE_E_RANGE);
	assert_int_equal(parse_duration("99999999999999999999", PARSE_UNITS, &v), PARSE_E_RANGE);
	assert_int_equal(v, 7);
}

static void every_error_has_a_name(void **state)
{
	(void)state;
	for (int e = PARSE_OK; e <= PARSE_E_SUB_NS; e++)
		assert_string_not_equal(parse_error_name((enum parse_error)e), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(integers_are_digits_only),
		cmocka_unit_test(integers_above_the_maximum_or_64_bits_are_out_of_range),
		cmocka_unit_test(a_prefix_reports_its_digits),
		cmocka_unit_test(sizes_take_binary_units),
		cmocka_unit_test(durations_are_seconds_with_up_to_nine_decimals),
		cmocka_unit_test(durations_with_units_take_ms_s_m_h),
		cmocka_unit_test(every_error_has_a_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
