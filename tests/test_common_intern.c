/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one string interner (common/intern.c), as the process table, the step table and tracer tune use it:
 * equal strings are one pointer and are released with their last reference; the byte budget refuses what
 * does not fit and holds nothing for it; strings that share a bucket under a fixed seed stay distinct and
 * each is found (and unlinked) alone; the seed decides the buckets; any byte (NUL, 0xff, a prefix) counts;
 * clearing drops every string at once and the table goes on.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hash.h"
#include "intern.h"

static void equal_strings_are_one_copy_released_with_the_last_reference(void **state)
{
	struct intern in;
	const char *a, *b, *c;

	(void)state;
	assert_int_equal(intern_init(&in, 1 << 20, 3), 0);
	a = intern_get(&in, "/ref/genome.fa", 14);
	b = intern_get(&in, "/ref/genome.fa.extra", 14);
	c = intern_get(&in, "/ref/other.fa", 13);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_string_equal(a, "/ref/genome.fa"); /* a copy, NUL-terminated at len */
	assert_int_equal(in.count, 2);
	intern_put(&in, a);
	assert_int_equal(in.count, 2);
	intern_put(&in, b);
	intern_put(&in, c);
	assert_int_equal(in.count, 0);
	assert_int_equal(in.bytes, 0);
	intern_put(&in, NULL); /* nothing to give back */
	intern_free(&in);
}

static void the_budget_refuses_what_does_not_fit_and_holds_nothing_for_it(void **state)
{
	struct intern in;
	const char *a;
	uint64_t one;

	(void)state;
	assert_int_equal(intern_init(&in, 8, 3), 0);
	assert_null(intern_get(&in, "/a/long/path", 12));
	assert_int_equal(in.count, 0);
	assert_int_equal(in.bytes, 0);
	/* Room for exactly one entry: the first is kept, the second refused, the first still shared. */
	in.budget = 1 << 20;
	a = intern_get(&in, "x", 1);
	assert_non_null(a);
	one = in.bytes;
	assert_true(one > 2);
	intern_put(&in, a);
	in.budget = one;
	a = intern_get(&in, "x", 1);
	assert_non_null(a);
	assert_null(intern_get(&in, "y", 1));
	assert_ptr_equal(intern_get(&in, "x", 1), a); /* a string held is found at the budget */
	assert_int_equal(in.bytes, one);
	assert_int_equal(in.count, 1);
	intern_free(&in);
}

/* n distinct strings "c<i>" whose hash under seed falls in bucket 0 of the first 1024 buckets. */
static unsigned colliding(uint64_t seed, char (*out)[16], unsigned n)
{
	unsigned found = 0;

	for (unsigned i = 0; found < n && i < 10000000; i++) {
		int len = snprintf(out[found], sizeof(out[found]), "c%u", i);

		if ((hash_bytes(seed, out[found], (size_t)len) & 1023) == 0)
			found++;
	}
	return found;
}

static void strings_of_one_bucket_stay_distinct_and_each_is_found_and_unlinked_alone(void **state)
{
	enum { N = 40 };
	char s[N][16];
	const char *p[N];
	struct intern in;

	(void)state;
	assert_int_equal(colliding(7, s, N), N);
	assert_int_equal(intern_init(&in, 1 << 20, 7), 0);
	for (unsigned i = 0; i < N; i++)
		p[i] = intern_get(&in, s[i], strlen(s[i]));
	assert_int_equal(in.count, N);
	assert_non_null(in.buckets[0]);
	for (unsigned i = 1; i < 1024; i++)
		assert_null(in.buckets[i]); /* all in one chain: the test is of the chain */
	for (unsigned i = 0; i < N; i++) {
		assert_string_equal(p[i], s[i]);
		for (unsigned j = 0; j < i; j++)
			assert_ptr_not_equal(p[i], p[j]);
	}
	/* Out of the chain's middle, its head and its tail: the others are still found, as themselves. */
	intern_put(&in, p[N / 2]);
	intern_put(&in, p[0]);
	intern_put(&in, p[N - 1]);
	assert_int_equal(in.count, N - 3);
	for (unsigned i = 1; i < N - 1; i++) {
		const char *again;

		if (i == N / 2)
			continue;
		again = intern_get(&in, s[i], strlen(s[i]));
		assert_ptr_equal(again, p[i]);
		intern_put(&in, again);
	}
	intern_free(&in);
}

/* The buckets the strings "s0" .. "s63" take under seed, as a bitmap of the first 1024. */
static void buckets_of(uint64_t seed, unsigned char used[128])
{
	struct intern in;

	memset(used, 0, 128);
	assert_int_equal(intern_init(&in, 1 << 20, seed), 0);
	for (unsigned i = 0; i < 64; i++) {
		char s[8];
		int len = snprintf(s, sizeof(s), "s%u", i);

		assert_non_null(intern_get(&in, s, (size_t)len));
	}
	for (unsigned b = 0; b < 1024; b++)
		if (in.buckets[b])
			used[b / 8] |= (unsigned char)(1u << (b % 8));
	intern_free(&in);
}

static void the_seed_decides_the_buckets(void **state)
{
	unsigned char a[128], b[128], c[128];

	(void)state;
	buckets_of(1, a);
	buckets_of(1, b);
	buckets_of(2, c);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
}

static void any_byte_counts_nul_and_0xff_included(void **state)
{
	static const char with_nul[] = { 'a', '\0', 'b' };
	static const char high[] = { '\xff', '\xfe', '\x80', '\0' };
	struct intern in;
	const char *ab, *a, *a_nul, *h, *empty;

	(void)state;
	assert_int_equal(intern_init(&in, 1 << 20, 0), 0);
	ab = intern_get(&in, with_nul, 3);
	a = intern_get(&in, with_nul, 1);
	a_nul = intern_get(&in, with_nul, 2);
	h = intern_get(&in, high, 4);
	empty = intern_get(&in, "", 0);
	assert_non_null(ab);
	assert_non_null(a);
	assert_non_null(a_nul);
	assert_non_null(h);
	assert_non_null(empty);
	/* Prefixes of one another, and strings equal up to a NUL, are distinct entries. */
	assert_ptr_not_equal(ab, a);
	assert_ptr_not_equal(a, a_nul);
	assert_ptr_not_equal(ab, a_nul);
	assert_memory_equal(ab, with_nul, 3);
	assert_int_equal(ab[3], 0);
	assert_memory_equal(h, high, 4);
	assert_int_equal(empty[0], 0);
	assert_ptr_equal(intern_get(&in, with_nul, 3), ab);
	assert_ptr_equal(intern_get(&in, high, 4), h);
	assert_ptr_equal(intern_get(&in, "", 0), empty);
	assert_int_equal(in.count, 5);
	intern_free(&in);
}

static void clearing_drops_every_string_and_the_table_goes_on_growing(void **state)
{
	struct intern in;

	(void)state;
	assert_int_equal(intern_init(&in, 1 << 24, 5), 0);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < 5000; i++) {
			char s[32];
			int len = snprintf(s, sizeof(s), "/p/%u", i);

			assert_non_null(intern_get(&in, s, (size_t)len));
		}
		assert_true(in.mask + 1 >= 4096); /* grown, and kept grown by a clear */
		assert_int_equal(in.count, 5000);
		for (unsigned i = 0; i < 5000; i += 499) {
			char s[32];
			int len = snprintf(s, sizeof(s), "/p/%u", i);
			const char *p = intern_get(&in, s, (size_t)len);

			assert_non_null(p);
			assert_string_equal(p, s);
		}
		assert_int_equal(in.count, 5000);
		intern_clear(&in);
		assert_int_equal(in.count, 0);
		assert_int_equal(in.bytes, 0);
	}
	intern_free(&in);
	intern_free(&in); /* freed twice, or never initialised: nothing to do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_are_one_copy_released_with_the_last_reference),
		cmocka_unit_test(the_budget_refuses_what_does_not_fit_and_holds_nothing_for_it),
		cmocka_unit_test(strings_of_one_bucket_stay_distinct_and_each_is_found_and_unlinked_alone),
		cmocka_unit_test(the_seed_decides_the_buckets),
		cmocka_unit_test(any_byte_counts_nul_and_0xff_included),
		cmocka_unit_test(clearing_drops_every_string_and_the_table_goes_on_growing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
