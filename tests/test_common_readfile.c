/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one bounded file reader (common/readfile.c): whole files read, a file at its limit accepted and one
 * byte past it refused (by fstat and by the read itself), anything but a regular file refused without
 * blocking (a FIFO with no writer, a directory, a symlink under O_NOFOLLOW), a sysfs file whose st_size says
 * 4096 read for what it holds, the allocating variant.
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

#include "readfile.h"

static char dir[] = "/tmp/tracer-readfile-XXXXXX";

static void put(const char *name, const char *text, size_t len)
{
	int fd = openat(AT_FDCWD, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void reads_a_whole_file_and_ends_it_with_a_nul(void **state)
{
	char buf[16];
	struct stat st;

	(void)state;
	put("a", "hello\n", 6);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(read_file_bounded(AT_FDCWD, "a", 0, buf, sizeof(buf) - 1, &st), 6);
	assert_string_equal(buf, "hello\n");
	assert_int_equal(st.st_size, 6);
	assert_int_equal(st.st_mode & 0777, 0600);
	put("empty", "", 0);
	assert_int_equal(read_file_bounded(AT_FDCWD, "empty", 0, buf, 4, NULL), 0);
	assert_string_equal(buf, "");
	assert_int_equal(read_file_bounded(AT_FDCWD, "missing", 0, buf, 4, NULL), -ENOENT);
}

static void a_file_at_its_limit_is_read_and_one_byte_more_is_refused(void **state)
{
	char buf[8];
	struct stat st;
	int fd;

	(void)state;
	put("seven", "1234567", 7);
	assert_int_equal(read_file_bounded(AT_FDCWD, "seven", 0, buf, 7, NULL), 7);
	assert_string_equal(buf, "1234567");
	assert_int_equal(read_file_bounded(AT_FDCWD, "seven", 0, buf, 6, &st), -EFBIG);
	assert_int_equal(st.st_size, 7); /* the caller can say how large it was */
	/* Past fstat's check (a file that grew after it): the read itself stops one byte past the limit. */
	fd = open("seven", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read_fd_bounded(fd, buf, 6), -EFBIG);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(read_fd_bounded(fd, buf, 7), 7);
	/* A prefix (a /proc file's first bytes): cut at cap, or the whole when shorter; from where the file stands. */
	assert_int_equal(lseek(fd, 2, SEEK_SET), 2);
	assert_int_equal(read_fd_upto(fd, buf, 3), 3);
	assert_memory_equal(buf, "345", 3);
	assert_int_equal(read_fd_upto(fd, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "67", 2);
	close(fd);
}

static void only_regular_files_are_read_and_a_fifo_does_not_block(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(mkfifo("fifo", 0600), 0); /* no writer: a blocking open would hang here */
	assert_int_equal(read_file_bounded(AT_FDCWD, "fifo", 0, buf, 7, NULL), -EINVAL);
	assert_int_equal(mkdir("sub", 0700), 0);
	assert_int_equal(read_file_bounded(AT_FDCWD, "sub", 0, buf, 7, NULL), -EINVAL);
	put("target", "t", 1);
	assert_int_equal(symlink("target", "link"), 0);
	assert_int_equal(read_file_bounded(AT_FDCWD, "link", O_NOFOLLOW, buf, 7, NULL), -ELOOP);
	assert_int_equal(read_file_bounded(AT_FDCWD, "link", 0, buf, 7, NULL), 1);
}

static void relative_to_a_directory_fd(void **state)
{
	char buf[8];
	int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	put("rel", "r", 1);
	assert_true(dfd >= 0);
	assert_true(chdir("/") == 0);
	assert_int_equal(read_file_bounded(dfd, "rel", 0, buf, 7, NULL), 1);
	assert_true(fchdir(dfd) == 0);
	close(dfd);
}

/* sysfs gives st_size 4096 for every file (a DMI field is a few bytes): the read decides, not the fstat. */
static void a_sysfs_file_is_judged_by_what_it_holds_not_its_st_size(void **state)
{
	static const char online[] = "/sys/devices/system/cpu/online";
	char buf[READ_MAX_DMI + 1];
	struct stat st;
	ssize_t n;

	(void)state;
	if (stat(online, &st) || st.st_size <= READ_MAX_DMI)
		skip(); /* no sysfs here, or one that tells the size */
	n = read_file_bounded(AT_FDCWD, online, O_NOFOLLOW, buf, READ_MAX_DMI, NULL);
	assert_true(n > 0 && n < 64);
	assert_true(buf[0] >= '0' && buf[0] <= '9'); /* "0-1\n", "0\n" */
}

static void the_allocating_reader_sizes_its_buffer_to_the_file(void **state)
{
	static char big[100000];
	struct stat st;
	char *out = (char *)1;

	(void)state;
	memset(big, 'b', sizeof(big));
	put("big", big, sizeof(big));
	assert_int_equal(read_file_alloc(AT_FDCWD, "big", 0, sizeof(big), &out, &st), (ssize_t)sizeof(big));
	assert_non_null(out);
	assert_int_equal(out[sizeof(big)], 0);
	assert_memory_equal(out, big, sizeof(big));
	free(out);
	assert_int_equal(read_file_alloc(AT_FDCWD, "big", 0, sizeof(big) - 1, &out, NULL), -EFBIG);
	assert_null(out);
	put("empty", "", 0);
	assert_int_equal(read_file_alloc(AT_FDCWD, "empty", 0, 10, &out, NULL), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(read_file_alloc(AT_FDCWD, "sub", 0, 10, &out, NULL), -EINVAL);
	assert_null(out);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir) || chdir(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	if (chdir("/"))
		return -1;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_a_whole_file_and_ends_it_with_a_nul),
		cmocka_unit_test(a_file_at_its_limit_is_read_and_one_byte_more_is_refused),
		cmocka_unit_test(only_regular_files_are_read_and_a_fifo_does_not_block),
		cmocka_unit_test(relative_to_a_directory_fd),
		cmocka_unit_test(a_sysfs_file_is_judged_by_what_it_holds_not_its_st_size),
		cmocka_unit_test(the_allocating_reader_sizes_its_buffer_to_the_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
