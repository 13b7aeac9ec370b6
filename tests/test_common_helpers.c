/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The small shared helpers of common/: the clocks (clock.h), the hash
 * functions of the in-memory tables (hash.h) and the heapsort with a
 * context (hsort_r, which report/ and attrib/ sort with; hsort itself is
 * tested in test_attrib_stepmem.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"
#include "hash.h"
#include "hsort.h"
#include "priv.h"

static void clocks_read_ns_of_the_right_clock(void **state)
{
	uint64_t m1 = mono_ns(), r = real_ns(), m2 = mono_ns();
	uint64_t off = mono_to_real_ns();
	struct timespec ts;

	(void)state;
	assert_true(m2 >= m1);
	clock_gettime(CLOCK_REALTIME, &ts);
	assert_true(r / 1000000000ULL <= (uint64_t)ts.tv_sec && (uint64_t)ts.tv_sec - r / 1000000000ULL <= 1);
	/* The offset turns a monotonic time into the realtime of the same moment (within a second). */
	assert_true(m2 + off >= r - 1000000000ULL && m2 + off <= r + 1000000000ULL);
}

static void hashes_depend_on_seed_and_every_byte(void **state)
{
	const char a[] = "samtools sort", b[] = "samtools sorT";

	(void)state;
	assert_true(hash_bytes(1, a, sizeof(a) - 1) == hash_bytes(1, a, sizeof(a) - 1));
	assert_true(hash_bytes(1, a, sizeof(a) - 1) != hash_bytes(2, a, sizeof(a) - 1));
	assert_true(hash_bytes(1, a, sizeof(a) - 1) != hash_bytes(1, b, sizeof(b) - 1));
	assert_true(hash_bytes(1, a, sizeof(a) - 1) != hash_bytes(1, a, sizeof(a) - 2));
	assert_true(hash_bytes(0, "", 0) != hash_bytes(0, "\0", 1));
	/* The low bits (the bucket) differ for strings that differ in their last byte only. */
	assert_true((hash_bytes(7, "file1", 5) & 1023) != (hash_bytes(7, "file2", 5) & 1023));
	assert_true(hash_mix64(1) != hash_mix64(2));
	assert_true(hash_mix64(0) == 0); /* splitmix64's finaliser fixes 0: seeds are xored in before it */
}

struct item {
	uint32_t key, tag;
};

/* By the key in ctx's order: ascending (ctx 0) or descending (ctx 1). */
static int by_key(const void *a, const void *b, void *ctx)
{
	const struct item *x = a, *y = b;
	int c = x->key < y->key ? -1 : x->key > y->key;

	return *(int *)ctx ? -c : c;
}

static void hsort_r_passes_its_context_to_the_comparison(void **state)
{
	struct item v[500];
	int desc;

	(void)state;
	srand(3);
	for (int order = 0; order < 2; order++) {
		for (uint32_t i = 0; i < 500; i++)
			v[i] = (struct item){ .key = (uint32_t)rand() % 100, .tag = i };
		desc = order;
		hsort_r(v, 500, sizeof(v[0]), by_key, &desc);
		for (size_t i = 1; i < 500; i++)
			assert_true(desc ? v[i - 1].key >= v[i].key : v[i - 1].key <= v[i].key);
	}
	hsort_r(v, 0, sizeof(v[0]), by_key, &desc);
	hsort_r(v, 1, sizeof(v[0]), by_key, &desc);
}

/* A uid is digits only (common/parse.h): "+5" or " 5" is a name, and no user has it. */
static void user_lookup_takes_digits_only_as_a_uid(void **state)
{
	uid_t uid = 1;
	gid_t gid = 1;

	(void)state;
	assert_int_equal(priv_lookup_user("0", &uid, &gid), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 0);
	assert_int_equal(priv_lookup_user("65534", &uid, &gid), 0);
	assert_int_equal(uid, 65534);
	assert_int_equal(priv_lookup_user("root", &uid, &gid), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(priv_lookup_user("+5", &uid, &gid), -ENOENT);
	assert_int_equal(priv_lookup_user(" 5", &uid, &gid), -ENOENT);
	assert_int_equal(priv_lookup_user("5x", &uid, &gid), -ENOENT);
	assert_int_equal(priv_lookup_user("4294967295", &uid, &gid), -ENOENT); /* (uid_t)-1: no one's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clocks_read_ns_of_the_right_clock),
		cmocka_unit_test(hashes_depend_on_seed_and_every_byte),
		cmocka_unit_test(hsort_r_passes_its_context_to_the_comparison),
		cmocka_unit_test(user_lookup_takes_digits_only_as_a_uid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
