/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trust boundary with real memfds and sockets: what a consumer holding
 * the handed-over fds cannot do to the producer, and who gets the fds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/falloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "handover.h"
#include "skip.h"

#define T_A RING_REC_FIRST_USER
#define NOBODY 65534

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

/* Producer + consumer attached through a socketpair, as the real pair is. */
struct pair {
	struct ring_producer p;
	struct ring_consumer c;
	int sv[2];
};

static void pair_open(struct pair *x)
{
	assert_int_equal(ring_producer_create(&x->p, 16, 11), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x->sv), 0);
	assert_int_equal(ring_handover_send(x->sv[0], &x->p, getuid()), 0);
	assert_int_equal(ring_handover_recv(x->sv[1], &x->c, getuid(), ~0ULL, 1000), 0);
}

static void pair_close(struct pair *x)
{
	ring_consumer_detach(&x->c);
	ring_producer_destroy(&x->p);
	close(x->sv[0]);
	close(x->sv[1]);
}

static void handed_over_ring_carries_records_between_the_two_sides(void **state)
{
	struct pair x;
	struct ring_view v;

	(void)state;
	pair_open(&x);
	assert_int_equal(x.c.generation, 11);
	assert_int_equal(x.c.size, 1u << 16);
	assert_int_equal(ring_write(&x.p, T_A, "hello", 5), 0);
	assert_int_equal(ring_next(&x.c, &v), 1);
	assert_int_equal(v.len, 5);
	assert_memory_equal(v.payload, "hello", 5);
	ring_release(&x.c);
	assert_int_equal(x.p.cons->consumer_pos, x.p.pos);
	pair_close(&x);
}

static void ring_memfd_cannot_be_mapped_writable(void **state)
{
	struct ring_producer p;
	void *m;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 1), 0);
	m = mmap(NULL, RING_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p.ring_fd, 0);
	assert_ptr_equal(m, MAP_FAILED);
	assert_int_equal(errno, EPERM);
	ring_producer_destroy(&p);
}

static void read_only_mapping_cannot_be_made_writable(void **state)
{
	struct ring_producer p;
	void *m;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 1), 0);
	m = mmap(NULL, RING_PAGE_SIZE, PROT_READ, MAP_SHARED, p.ring_fd, 0);
	assert_ptr_not_equal(m, MAP_FAILED);
	assert_int_equal(mprotect(m, RING_PAGE_SIZE, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);
	munmap(m, RING_PAGE_SIZE);
	ring_producer_destroy(&p);
}

static void ring_memfd_cannot_be_resized_written_punched_or_resealed(void **state)
{
	struct ring_producer p;
	off_t len;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 1), 0);
	len = (off_t)p.ring_map_len;
	assert_int_equal(ftruncate(p.ring_fd, len - 4096), -1); /* would SIGBUS the producer */
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(p.ring_fd, len + 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(pwrite(p.ring_fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fallocate(p.ring_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(p.ring_fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);
	/* The producer's own mapping, made before the seal, still works. */
	assert_int_equal(ring_write(&p, T_A, "ok", 2), 0);
	ring_producer_destroy(&p);
}

static void consumer_page_cannot_be_resized(void **state)
{
	struct ring_producer p;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 1), 0);
	assert_int_equal(ftruncate(p.cons_fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(p.cons_fd, 8192), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(p.cons_fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	ring_producer_destroy(&p);
}

static void consumer_refuses_unsealed_memory(void **state)
{
	struct ring_consumer c;
	int a = (int)syscall(SYS_memfd_create, "x", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int b = (int)syscall(SYS_memfd_create, "y", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	(void)state;
	assert_true(a >= 0 && b >= 0);
	assert_int_equal(ftruncate(a, RING_PAGE_SIZE + 4096), 0);
	assert_int_equal(ftruncate(b, RING_PAGE_SIZE), 0);
	assert_int_equal(ring_consumer_attach(&c, a, b, 0), -EPERM);
	/* Sealed but the wrong size for a ring. */
	assert_int_equal(fcntl(a, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL), 0);
	assert_int_equal(fcntl(b, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
	assert_int_equal(ring_consumer_attach(&c, a, b, 0), -EPROTO); /* zeroed header */
	close(a);
	close(b);
}

static void producer_sends_nothing_to_a_peer_with_another_uid(void **state)
{
	struct ring_producer p;
	struct ring_consumer c;
	int sv[2];
	char byte;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 1), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(ring_handover_send(sv[0], &p, getuid() + 1), -EPERM);
	assert_int_equal(recv(sv[1], &byte, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	/* And the consumer can insist on the producer's uid too. */
	assert_int_equal(ring_handover_recv(sv[1], &c, getuid() + 1, 0, 0), -EPERM);
	close(sv[0]);
	close(sv[1]);
	ring_producer_destroy(&p);
}

/* Send a forged handover: msg bytes and nfds copies of fd. */
static void send_forged(int sock, const void *msg, size_t len, int fd, int nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	int fds[4] = { fd, fd, fd, fd };
	struct iovec iov = { .iov_base = (void *)(uintptr_t)msg, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	memset(&u, 0, sizeof(u));
	if (nfds) {
		struct cmsghdr *cm;

		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	assert_int_equal(sendmsg(sock, &m, 0), (ssize_t)len);
}

static void forged_handover_messages_are_refused_without_leaking_fds(void **state)
{
	struct ring_producer p;
	struct ring_consumer c;
	struct ring_handover_msg good = {
		.magic = RING_HANDOVER_MAGIC, .version = RING_VERSION, .page_size = RING_PAGE_SIZE,
	};
	struct ring_handover_msg bad = good;
	int sv[2], before;

	(void)state;
	assert_int_equal(ring_producer_create(&p, 12, 5), 0);
	good.data_size = 4096;
	good.generation = 5;
	bad.magic++;
	before = count_open_fds();
	for (int variant = 0; variant < 5; variant++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		switch (variant) {
		case 0: send_forged(sv[0], &bad, sizeof(bad), p.ring_fd, 2); break;    /* bad magic */
		case 1: send_forged(sv[0], &good, sizeof(good), p.ring_fd, 1); break;  /* one fd */
		case 2: send_forged(sv[0], &good, sizeof(good), p.ring_fd, 4); break;  /* too many */
		case 3: send_forged(sv[0], &good, 8, p.ring_fd, 2); break;             /* short */
		default: send_forged(sv[0], &good, sizeof(good), p.ring_fd, 2); break; /* ring twice */
		}
		assert_int_not_equal(ring_handover_recv(sv[1], &c, getuid(), 0, 1000), 0);
		close(sv[0]);
		close(sv[1]);
		assert_int_equal(count_open_fds(), before);
	}
	ring_producer_destroy(&p);
}

static void consumer_reports_a_closed_socket(void **state)
{
	struct ring_consumer c;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[0]);
	assert_int_equal(ring_handover_recv(sv[1], &c, HANDOVER_ANY_UID, 0, 1000), -ECONNRESET);
	close(sv[1]);
}

/*
 * The real split: the consumer runs as another user (nobody, no
 * supplementary groups) in another process, connects to the producer's
 * socket, is checked by uid, and can then read but not write the ring.
 * Runs as root, which it needs to change uid; skips otherwise.
 */
static void unprivileged_consumer_reads_but_cannot_write_the_ring(void **state)
{
	char dir[] = "/tmp/tracer-test-XXXXXX", path[128];
	struct ring_producer p;
	int lfd, conn = -1, status = 0;
	pid_t child;

	(void)state;
	if (geteuid() != 0)
		TEST_SKIP("needs root to run the consumer as uid %d", NOBODY);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/ring.sock", dir);
	lfd = handover_listen(path, 0666);
	assert_true(lfd >= 0);
	assert_int_equal(ring_producer_create(&p, 12, 3), 0);
	assert_int_equal(ring_write(&p, T_A, "secret-free", 11), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct ring_consumer c;
		struct ring_view v;
		int fd, ok;
		void *m;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(10);
		fd = handover_connect(path);
		if (fd < 0 || ring_handover_recv(fd, &c, 0, ~0ULL, 5000))
			_exit(11);
		ok = ring_next(&c, &v) == 1 && v.len == 11 && !memcmp(v.payload, "secret-free", 11);
		if (!ok)
			_exit(12);
		/* Upgrading the read-only mapping must fail too. */
		m = mprotect(c.ring_map, RING_PAGE_SIZE, PROT_READ | PROT_WRITE) ? NULL : c.ring_map;
		_exit(m ? 13 : 0);
	}
	/* Producer side: accept, check uid, hand over. */
	for (int tries = 0; tries < 5000; tries++) {
		conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conn >= 0 || errno != EAGAIN || waitpid(child, &status, WNOHANG) == child)
			break;
		usleep(1000);
	}
	if (conn < 0)
		fail_msg("no connection from the consumer (child status %#x)", status);
	assert_int_equal(ring_handover_send(conn, &p, 0), -EPERM); /* it is not root */
	assert_int_equal(ring_handover_send(conn, &p, NOBODY), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(conn);
	close(lfd);
	unlink(path);
	rmdir(dir);
	ring_producer_destroy(&p);
}

/* futex wait on a read-only mapping in another process, woken by ring_notify. */
static void sleeping_consumer_in_another_process_is_woken(void **state)
{
	struct pair x;
	int status, go[2];
	pid_t child;

	(void)state;
	pair_open(&x);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct ring_view v;
		int rc = 0;

		close(go[0]);
		if (write(go[1], "r", 1) != 1)
			_exit(2);
		/* No timeout: only a wake (or data before sleeping) returns. */
		while (rc == 0)
			rc = ring_wait(&x.c, -1);
		_exit(rc == 1 && ring_next(&x.c, &v) == 1 && v.type == T_A ? 0 : 1);
	}
	close(go[1]);
	{
		char b;

		assert_int_equal(read(go[0], &b, 1), 1);
	}
	while (!__atomic_load_n(&x.p.cons->sleeping, __ATOMIC_ACQUIRE))
		usleep(100);
	assert_int_equal(ring_write(&x.p, T_A, "w", 1), 0);
	ring_notify(&x.p);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(x.p.wakeups, 1);
	close(go[0]);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(handed_over_ring_carries_records_between_the_two_sides),
		cmocka_unit_test(ring_memfd_cannot_be_mapped_writable),
		cmocka_unit_test(read_only_mapping_cannot_be_made_writable),
		cmocka_unit_test(ring_memfd_cannot_be_resized_written_punched_or_resealed),
		cmocka_unit_test(consumer_page_cannot_be_resized),
		cmocka_unit_test(consumer_refuses_unsealed_memory),
		cmocka_unit_test(producer_sends_nothing_to_a_peer_with_another_uid),
		cmocka_unit_test(forged_handover_messages_are_refused_without_leaking_fds),
		cmocka_unit_test(consumer_reports_a_closed_socket),
		cmocka_unit_test(unprivileged_consumer_reads_but_cannot_write_the_ring),
		cmocka_unit_test(sleeping_consumer_in_another_process_is_woken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
