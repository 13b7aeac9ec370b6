/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The spool's io_uring ring is confined (delivery/uring.c): on the real
 * kernel, a ring from uring_open_restricted() writes and fsyncs the files of
 * its fixed table, and refuses everything else - writes to other file
 * descriptors, reads, opens, sockets, and every registration but a file
 * table update. seccomp cannot see these operations, so this is what stops
 * a compromised processor from using the ring to reach other files.
 *
 * Skips (77) when the kernel refuses io_uring or cannot restrict rings.
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
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include "skip.h"
#include "uring.h"

struct fix {
	char dir[64];
	int dirfd, fd_in, fd_out; /* fd_in: in the table (slot 1); fd_out: not */
	struct io_uring ring;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	char path[128];
	int fds[4];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/tracer-uring-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/in", f->dir);
	f->fd_in = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	snprintf(path, sizeof(path), "%s/out", f->dir);
	f->fd_out = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(f->dirfd >= 0 && f->fd_in >= 0 && f->fd_out >= 0);
	fds[0] = f->dirfd;
	fds[1] = f->fd_in;
	fds[2] = fds[3] = -1;
	*state = f;
	return uring_open_restricted(&f->ring, 8, fds, 4, -1) == 1 ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	char path[128];

	io_uring_queue_exit(&f->ring);
	close(f->fd_in);
	close(f->fd_out);
	close(f->dirfd);
	snprintf(path, sizeof(path), "%s/in", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/out", f->dir);
	unlink(path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Submit the one prepared SQE and return its completion's result. */
static int complete_one(struct fix *f)
{
	struct io_uring_cqe *cqe;
	int res;

	assert_int_equal(io_uring_submit(&f->ring), 1);
	assert_int_equal(io_uring_wait_cqe(&f->ring, &cqe), 0);
	res = cqe->res;
	io_uring_cqe_seen(&f->ring, cqe);
	return res;
}

static struct io_uring_sqe *sqe_of(struct fix *f)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);

	assert_non_null(sqe);
	return sqe;
}

static void test_write_and_fsync_of_a_fixed_file_work(void **state)
{
	struct fix *f = *state;
	static const char text[] = "durable";
	char back[sizeof(text)] = { 0 };
	struct io_uring_sqe *sqe = sqe_of(f);

	io_uring_prep_write(sqe, 1, text, sizeof(text), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), (int)sizeof(text));
	sqe = sqe_of(f);
	io_uring_prep_fsync(sqe, 1, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), 0);
	sqe = sqe_of(f);
	io_uring_prep_fsync(sqe, 0, 0); /* the directory, slot 0 */
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), 0);
	assert_int_equal(pread(f->fd_in, back, sizeof(back), 0), (ssize_t)sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
}

static void test_write_to_a_file_outside_the_table_is_refused(void **state)
{
	struct fix *f = *state;
	struct io_uring_sqe *sqe = sqe_of(f);
	struct stat st;

	io_uring_prep_write(sqe, f->fd_out, "x", 1, 0); /* a plain fd: no IOSQE_FIXED_FILE */
	assert_int_equal(complete_one(f), -EACCES);
	assert_int_equal(fstat(f->fd_out, &st), 0);
	assert_int_equal(st.st_size, 0);
}

static void test_read_open_and_socket_operations_are_refused(void **state)
{
	struct fix *f = *state;
	char buf[8];
	struct io_uring_sqe *sqe = sqe_of(f);

	io_uring_prep_read(sqe, 1, buf, sizeof(buf), 0); /* a fixed file, but reading is not allowed */
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), -EACCES);

	sqe = sqe_of(f);
	io_uring_prep_openat(sqe, AT_FDCWD, "/etc/passwd", O_RDONLY, 0);
	assert_int_equal(complete_one(f), -EACCES);

	sqe = sqe_of(f);
	io_uring_prep_openat(sqe, 0, "passwd", O_RDONLY, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), -EACCES);

	sqe = sqe_of(f);
	io_uring_prep_socket(sqe, AF_INET, SOCK_STREAM, 0, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	assert_int_equal(complete_one(f), -EACCES);

	sqe = sqe_of(f);
	io_uring_prep_write(sqe, 1, "x", 1, 0); /* an allowed op with a flag beyond the required one */
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE | IOSQE_IO_DRAIN);
	assert_int_equal(complete_one(f), -EACCES);
}

static void test_only_file_table_updates_can_be_registered(void **state)
{
	struct fix *f = *state;
	int efd = eventfd(0, EFD_CLOEXEC);
	int fd = f->fd_out, none = -1;
	struct iovec iov = { .iov_base = &fd, .iov_len = sizeof(fd) };

	assert_true(efd >= 0);
	assert_int_equal(io_uring_register_eventfd(&f->ring, efd), -EACCES);
	assert_int_equal(io_uring_register_buffers(&f->ring, &iov, 1), -EACCES);
	assert_int_equal(io_uring_unregister_files(&f->ring), -EACCES);
	assert_int_equal(io_uring_register_files(&f->ring, &fd, 1), -EACCES);
	/* What the spool does when it opens and closes a segment: allowed. */
	assert_int_equal(io_uring_register_files_update(&f->ring, 2, &fd, 1), 1);
	assert_int_equal(io_uring_register_files_update(&f->ring, 2, &none, 1), 1);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_write_and_fsync_of_a_fixed_file_work),
		T(test_write_to_a_file_outside_the_table_is_refused),
		T(test_read_open_and_socket_operations_are_refused),
		T(test_only_file_table_updates_can_be_registered),
#undef T
	};
	struct io_uring probe;
	int fds[1] = { -1 };
	int rc = uring_open_restricted(&probe, 4, fds, 1, -1);

	if (rc != 1) {
		if (rc == 0)
			io_uring_queue_exit(&probe);
		return test_skip_all("%s", rc < 0 ? "the kernel refuses io_uring" : "the kernel cannot restrict rings");
	}
	io_uring_queue_exit(&probe);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
