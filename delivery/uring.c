/* SPDX-License-Identifier: Apache-2.0 */
#include "uring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the spool needs: writes and fsyncs, on fixed files only; updates of the file table. */
static const struct io_uring_restriction spool_restrictions[] = {
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITE },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_FSYNC },
	{ .opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED, .sqe_flags = IOSQE_FIXED_FILE },
	{ .opcode = IORING_RESTRICTION_REGISTER_OP, .register_op = IORING_REGISTER_FILES_UPDATE },
};

/*
 * io_uring_register(2) itself: Debian 12's liburing 2.3 declares
 * io_uring_register_restrictions() and io_uring_enable_rings() but does not
 * export them from the shared library.
 */
static int ring_register(struct io_uring *ring, unsigned op, const void *arg, unsigned n)
{
	return syscall(__NR_io_uring_register, ring->ring_fd, op, arg, n) < 0 ? -errno : 0;
}

static int fail(struct io_uring *ring, int rc, const char *what)
{
	fprintf(stderr, "<3>io_uring: cannot %s: %s\n", what, strerror(-rc));
	io_uring_queue_exit(ring);
	return rc;
}

int uring_open_restricted(struct io_uring *ring, unsigned entries, const int *fds, unsigned nfds, int efd)
{
	int restricted = 1;
	int rc = io_uring_queue_init(entries, ring, IORING_SETUP_R_DISABLED);

	if (rc == -EINVAL) {
		/* Before 5.10 there is neither IORING_SETUP_R_DISABLED nor restrictions. */
		fprintf(stderr, "<4>io_uring: this kernel cannot restrict a ring (Linux 5.10+): the spool's ring "
				"is not confined\n");
		restricted = 0;
		rc = io_uring_queue_init(entries, ring, 0);
	}
	if (rc < 0) {
		fprintf(stderr, "<3>io_uring: cannot set up a ring: %s (kernel.io_uring_disabled must be 0, and a "
				"seccomp filter must allow io_uring_setup, io_uring_enter and io_uring_register)\n",
			strerror(-rc));
		return rc;
	}
	/* Registrations first: once the restrictions are in force only a file table update is accepted. */
	if (efd >= 0 && (rc = io_uring_register_eventfd(ring, efd)) < 0)
		return fail(ring, rc, "register an eventfd");
	if ((rc = io_uring_register_files(ring, fds, nfds)) < 0)
		return fail(ring, rc, "register its files");
	if (!restricted)
		return 0;
	rc = ring_register(ring, IORING_REGISTER_RESTRICTIONS, spool_restrictions,
			   sizeof(spool_restrictions) / sizeof(spool_restrictions[0]));
	if (rc < 0)
		return fail(ring, rc, "restrict the ring");
	rc = ring_register(ring, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (rc < 0)
		return fail(ring, rc, "enable the ring");
	return 1;
}
