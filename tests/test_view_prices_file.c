/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A price table from a file (view/prices_file.c), as read: a table loads; a missing file, a FIFO (at once,
 * not waited on), a directory and a file one byte over READ_MAX_PRICES are refused with a message naming the
 * file and what is wrong, while a file at the bound is read (and refused for what it holds).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cost.h"
#include "prices_file.h"
#include "readfile.h"
#include "tmpdir.h"

static char dir[64], path[128], said[128];

static int setup(void **state)
{
	if (dir_make(state, "/tmp/test_view_prices_file.XXXXXX"))
		return -1;
	snprintf(dir, sizeof(dir), "%s", ((struct dir *)*state)->path);
	snprintf(path, sizeof(path), "%s/prices.csv", dir);
	snprintf(said, sizeof(said), "%s/stderr", dir);
	return 0;
}

/* price_table_load(file) with its stderr in out: its return. */
static int load(const char *file, struct price_table *t, char *out, size_t outlen)
{
	int saved = dup(2), fd = open(said, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;
	ssize_t n;

	assert_true(saved >= 0 && fd >= 0);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	rc = price_table_load(file, t);
	fflush(stderr);
	assert_true(dup2(saved, 2) == 2);
	close(saved);
	n = pread(fd, out, outlen - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = 0;
	return rc;
}

static void a_table_loads(void **state)
{
	static const char csv[] = "# source: a test\n# date: 2024-06-01\ncloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,"
				  "spot_usd_per_hour\naws,c6i.large,us-east-1,2,4,0.085,\n";
	struct price_table t = { 0 };
	char out[512];

	assert_int_equal(dir_put(*state, "prices.csv", csv, sizeof(csv) - 1, 0), 0);
	assert_int_equal(load(path, &t, out, sizeof(out)), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(out, "");
	price_table_free(&t);
}

static void a_missing_file_a_fifo_and_a_directory_are_refused(void **state)
{
	struct price_table t = { 0 };
	char out[512], missing[80];

	(void)state;
	snprintf(missing, sizeof(missing), "%s/none.csv", dir);
	assert_int_equal(load(missing, &t, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "cannot open the price table"));
	assert_non_null(strstr(out, missing));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0); /* no writer: a blocking open would hang here */
	assert_int_equal(load(path, &t, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "not a regular file"));
	assert_non_null(strstr(out, path));
	unlink(path);
	assert_int_equal(load(dir, &t, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "not a regular file"));
}

static void a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read(void **state)
{
	struct price_table t = { 0 };
	char out[512];

	assert_int_equal(dir_put(*state, "prices.csv", NULL, READ_MAX_PRICES, 'x'), 0);
	assert_int_equal(load(path, &t, out, sizeof(out)), 1);
	assert_null(strstr(out, "not a regular file")); /* read, then refused for what it holds */
	assert_non_null(strstr(out, path));
	price_table_free(&t);
	assert_int_equal(dir_put(*state, "prices.csv", NULL, READ_MAX_PRICES + 1, 'x'), 0);
	assert_int_equal(load(path, &t, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "not a regular file of at most"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_table_loads),
		cmocka_unit_test(a_missing_file_a_fifo_and_a_directory_are_refused),
		cmocka_unit_test(a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read),
	};

	return cmocka_run_group_tests(tests, setup, dir_teardown);
}
