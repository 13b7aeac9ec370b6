/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer status (cli/cmd_status.c), the real binary, on a state directory made by hand: the status file a
 * processor writes (status_format) is shown; a missing one, a FIFO (at once, not waited on), a directory and
 * one a byte over READ_MAX_STATUS are refused naming the file and what is wrong, exit 1, while a file at the
 * bound is read (and refused for what it holds).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon_harness.h"
#include "readfile.h"
#include "status.h"
#include "tmpdir.h"

static char tracer[512], dir[64], path[128], out[8192], err[1024];

static int setup(void **state)
{
	if (daemon_find("tracer", tracer, sizeof(tracer)) || dir_make(state, "/tmp/test_cli_status.XXXXXX"))
		return -1;
	snprintf(dir, sizeof(dir), "%s", ((struct dir *)*state)->path);
	snprintf(path, sizeof(path), "%s/" STATUS_FILE, dir);
	return 0;
}

static int status(void)
{
	const char *const argv[] = { tracer, "status", "--state-dir", dir, NULL };

	return daemon_capture(argv, out, sizeof(out), err, sizeof(err), 10000);
}

static void a_status_file_is_shown(void **state)
{
	static struct status st;
	static char text[STATUS_FILE_MAX + 1];
	size_t len;

	memset(&st, 0, sizeof(st));
	assert_int_equal(status_format(&st, text, STATUS_FILE_MAX, &len), 0);
	assert_int_equal(dir_put(*state, STATUS_FILE, text, len, 0), 0);
	assert_int_equal(status(), 0);
	assert_string_equal(err, "");
	assert_true(strlen(out) > 0);
	unlink(path);
}

static void a_missing_file_a_fifo_and_a_directory_are_refused(void **state)
{
	(void)state;
	unlink(path);
	assert_int_equal(status(), 1);
	assert_non_null(strstr(err, "cannot read"));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "has tracer-processor run"));
	assert_int_equal(mkfifo(path, 0600), 0); /* no writer: a blocking open would hang tracer status */
	assert_int_equal(status(), 1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(status(), 1);
	assert_non_null(strstr(err, "not a regular file"));
	rmdir(path);
}

static void a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read(void **state)
{
	assert_int_equal(dir_put(*state, STATUS_FILE, NULL, READ_MAX_STATUS, ' '), 0);
	assert_int_equal(status(), 1);
	assert_null(strstr(err, "not a regular file")); /* read, then refused for what it holds */
	assert_non_null(strstr(err, path));
	assert_int_equal(dir_put(*state, STATUS_FILE, NULL, READ_MAX_STATUS + 1, ' '), 0);
	assert_int_equal(status(), 1);
	assert_non_null(strstr(err, "not a regular file of at most"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_status_file_is_shown),
		cmocka_unit_test(a_missing_file_a_fifo_and_a_directory_are_refused),
		cmocka_unit_test(a_file_one_byte_over_the_bound_is_refused_and_one_at_it_read),
	};

	return cmocka_run_group_tests(tests, setup, dir_teardown);
}
