/* SPDX-License-Identifier: Apache-2.0 */
/* The consumer's half of the ring's handover: connect, check the peer, receive and attach. */
#include "handover_consumer.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void close_fds(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* Collect every fd that arrived, so none leaks whatever the peer sent. */
static size_t take_fds(struct msghdr *msg, int *out, size_t max, int *extra)
{
	size_t got = 0;

	*extra = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (got < max)
				out[got++] = fd;
			else {
				close(fd);
				(*extra)++;
			}
		}
	}
	return got;
}

int ring_handover_recv(int conn_fd, struct ring_consumer *c, uid_t producer_uid, uint64_t known_types,
		       int timeout_ms)
{
	struct ring_handover_msg m;
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct pollfd pfd = { .fd = conn_fd, .events = POLLIN };
	int fds[2], extra, err, rc;
	size_t nfds;
	ssize_t n;

	err = handover_check_peer(conn_fd, producer_uid);
	if (err)
		return err;
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	n = recvmsg(conn_fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	nfds = take_fds(&msg, fds, 2, &extra);
	if (n == 0 && nfds == 0)
		return -ECONNRESET;
	if (n != (ssize_t)sizeof(m) || nfds != 2 || extra || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) ||
	    m.magic != RING_HANDOVER_MAGIC || m.version != RING_VERSION || m.page_size != RING_PAGE_SIZE) {
		close_fds(fds, nfds);
		return -EPROTO;
	}
	err = ring_consumer_attach(c, fds[0], fds[1], known_types);
	/* The mappings keep the memory; the fds are not needed any more. */
	close_fds(fds, nfds);
	if (err)
		return err;
	if (c->size != m.data_size || c->generation != m.generation) {
		ring_consumer_detach(c);
		return -EPROTO;
	}
	return 0;
}

int handover_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, err = handover_addr(&sa, path);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
