/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's io_uring rings, confined. seccomp sees only
 * io_uring_enter(), not the operations a ring carries out, so a ring that
 * could open, read, connect or send would undo the seccomp filter. A ring
 * from uring_open_restricted() is created disabled, given its fixed file
 * table, restricted, and only then enabled: from then on it can write and
 * fsync the files of that table and nothing else, and the only registration
 * it accepts is an update of the table (a new spool segment). With the
 * processor's seccomp filter allowing no io_uring_setup(), no other ring
 * can be made.
 */
#ifndef TRACER_DELIVERY_URING_H
#define TRACER_DELIVERY_URING_H

#include <liburing.h>

/*
 * Set up ring with entries slots and a fixed file table of nfds entries
 * (fds[i], or -1 for an empty slot); efd (or -1) is registered for
 * completions. Every SQE must carry IOSQE_FIXED_FILE and be a write or an
 * fsync. Returns 1 when restricted, 0 when the kernel cannot restrict rings
 * (before 5.10: the ring works, unrestricted, logged <4>), -errno on failure.
 */
int uring_open_restricted(struct io_uring *ring, unsigned entries, const int *fds, unsigned nfds, int efd);

#endif /* TRACER_DELIVERY_URING_H */
