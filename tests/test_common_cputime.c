/* SPDX-License-Identifier: Apache-2.0 */
/*
 * User/system split as wait4() reports it: the kernel's cputime_adjust()
 * scales the tick-sampled utime/stime to the precise runtime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cputime.h"

/*
 * The kernel's arithmetic, done independently of the code under test:
 * stime * rtime / (stime + utime) by schoolbook long division of a 128-bit
 * product held in two 64-bit halves (like mul_u64_u64_div_u64's generic
 * version), so a mistake in the __int128 path would not be repeated here.
 */
static uint64_t reference_scale(uint64_t stime, uint64_t rtime, uint64_t utime)
{
	uint64_t a_lo = stime & 0xffffffffu, a_hi = stime >> 32, b_lo = rtime & 0xffffffffu, b_hi = rtime >> 32;
	uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t lo = (ll & 0xffffffffu) | (mid << 32), hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	/* divisor may need 65 bits: d = stime + utime, carry in d_hi */
	uint64_t d_lo = stime + utime, d_hi = d_lo < stime;
	uint64_t q = 0, r_hi = 0, r_lo = 0;

	for (int bit = 127; bit >= 0; bit--) {
		uint64_t in = bit >= 64 ? (hi >> (bit - 64)) & 1 : (lo >> bit) & 1;

		/* r = 2r + in (r stays below 2^66, fits the pair) */
		r_hi = (r_hi << 1) | (r_lo >> 63);
		r_lo = (r_lo << 1) | in;
		if (r_hi > d_hi || (r_hi == d_hi && r_lo >= d_lo)) {
			uint64_t borrow = r_lo < d_lo;

			r_lo -= d_lo;
			r_hi -= d_hi + borrow;
			if (bit < 64)
				q |= 1ULL << bit;
		}
	}
	return q;
}

static void check(uint64_t utime, uint64_t stime, uint64_t rtime)
{
	uint64_t user = 1, sys = 1, want_sys;

	cputime_adjust(utime, stime, rtime, &user, &sys);
	if (stime == 0)
		want_sys = 0;
	else if (utime == 0)
		want_sys = rtime;
	else
		want_sys = reference_scale(stime, rtime, utime);
	assert_int_equal(sys, want_sys);
	assert_int_equal(user, rtime - want_sys);
}

static void no_system_ticks_gives_all_runtime_to_user(void **state)
{
	uint64_t user, sys;

	(void)state;
	cputime_adjust(5000, 0, 7777, &user, &sys);
	assert_int_equal(user, 7777);
	assert_int_equal(sys, 0);
}

static void no_user_ticks_gives_all_runtime_to_system(void **state)
{
	uint64_t user, sys;

	(void)state;
	cputime_adjust(0, 5000, 7777, &user, &sys);
	assert_int_equal(user, 0);
	assert_int_equal(sys, 7777);
}

static void no_ticks_at_all_gives_all_runtime_to_user(void **state)
{
	uint64_t user, sys;

	(void)state;
	cputime_adjust(0, 0, 123, &user, &sys);
	assert_int_equal(user, 123);
	assert_int_equal(sys, 0);
}

static void split_follows_the_tick_ratio_rounding_system_down(void **state)
{
	uint64_t user, sys;

	(void)state;
	cputime_adjust(3, 1, 100, &user, &sys);
	assert_int_equal(sys, 25);
	assert_int_equal(user, 75);
	cputime_adjust(2, 1, 100, &user, &sys); /* 33.3: the kernel truncates stime */
	assert_int_equal(sys, 33);
	assert_int_equal(user, 67);
	cputime_adjust(4000000, 4000000, 7999999, &user, &sys);
	assert_int_equal(sys, 3999999);
	assert_int_equal(user, 4000000);
}

static void huge_values_do_not_overflow(void **state)
{
	uint64_t user, sys;

	(void)state;
	/* stime + utime = 2^64: overflows 64 bits */
	cputime_adjust(1ULL << 63, 1ULL << 63, UINT64_MAX, &user, &sys);
	assert_int_equal(sys, UINT64_MAX / 2);
	assert_int_equal(user, UINT64_MAX - UINT64_MAX / 2);
	cputime_adjust(1, UINT64_MAX, UINT64_MAX, &user, &sys);
	assert_int_equal(user + sys, UINT64_MAX);
	check(UINT64_MAX, UINT64_MAX, UINT64_MAX);
	check(UINT64_MAX, 1, UINT64_MAX);
	check(1, UINT64_MAX, 12345);
	check(0xdeadbeefcafef00dULL, 0x123456789abcdefULL, 0xfedcba9876543210ULL);
}

static void matches_the_kernel_formula_over_many_values(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint64_t u, s, r;

		/* xorshift, with magnitudes from tiny to 2^64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = x >> (x & 63);
		s = (x * 0x2545f4914f6cdd1dULL) >> ((x >> 6) & 63);
		r = (x ^ 0xa5a5a5a5a5a5a5a5ULL) >> ((x >> 12) & 63);
		check(u, s, r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_system_ticks_gives_all_runtime_to_user),
		cmocka_unit_test(no_user_ticks_gives_all_runtime_to_system),
		cmocka_unit_test(no_ticks_at_all_gives_all_runtime_to_user),
		cmocka_unit_test(split_follows_the_tick_ratio_rounding_system_down),
		cmocka_unit_test(huge_values_do_not_overflow),
		cmocka_unit_test(matches_the_kernel_formula_over_many_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
