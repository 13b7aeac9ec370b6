/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer export otlp's --state file (cli/cmd_export_otlp.c), the real binary: a file of "TRACEID sent" lines
 * (its last line cut short) is read and the export goes on to the lake; a directory, a file larger than
 * READ_MAX_EXPORT_STATE (sparse) and a line of another form are refused naming the file, exit 1.
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
#include "tmpdir.h"

static char tracer[512], path[128], out[4096], err[2048];

static int setup(void **state)
{
	if (daemon_find("tracer", tracer, sizeof(tracer)) || dir_make(state, "/tmp/test_cli_export_state.XXXXXX"))
		return -1;
	snprintf(path, sizeof(path), "%s/state", ((struct dir *)*state)->path);
	return 0;
}

/* The export, on a lake that is not there: the state file is read first. */
static int export(void)
{
	const char *const argv[] = { tracer, "export", "otlp", "--db", "/nonexistent/lake.db", "--endpoint",
				     "http://127.0.0.1:9/v1/traces", "--state", path, NULL };

	return daemon_capture(argv, out, sizeof(out), err, sizeof(err), 10000);
}

static void put(void **state, const char *text)
{
	assert_int_equal(dir_put(*state, "state", text, strlen(text), 0), 0);
}

static void a_state_file_is_read_and_the_export_goes_on(void **state)
{
	put(state, "0123456789abcdef0123456789abcdef sent\n0123456789abcdef0123456789abcdee refused\n0123");
	assert_int_equal(export(), 1);
	assert_non_null(strstr(err, "a last line cut short was dropped")); /* read, all of it */
	assert_non_null(strstr(err, "/nonexistent/lake.db")); /* what failed is the lake */
	unlink(path);
}

static void a_directory_a_file_too_large_and_a_bad_line_are_refused(void **state)
{
	int fd;

	unlink(path); /* left by a test that failed */
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(export(), 1);
	assert_non_null(strstr(err, path));
	assert_null(strstr(err, "lake.db"));
	rmdir(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)READ_MAX_EXPORT_STATE + 1), 0); /* sparse: no disk spent */
	close(fd);
	assert_int_equal(export(), 1);
	assert_non_null(strstr(err, "not a regular file of at most"));
	assert_non_null(strstr(err, path));
	put(state, "0123456789abcdef0123456789abcdef sent\nnot a trace id\n");
	assert_int_equal(export(), 1);
	assert_non_null(strstr(err, "line 2 is not"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_state_file_is_read_and_the_export_goes_on),
		cmocka_unit_test(a_directory_a_file_too_large_and_a_bad_line_are_refused),
	};

	return cmocka_run_group_tests(tests, setup, dir_teardown);
}
