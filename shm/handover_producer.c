/* SPDX-License-Identifier: Apache-2.0 */
/* The producer's half of the ring's handover: listen, check the peer, send the two memfds. */
#include "handover_producer.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int ring_handover_send(int conn_fd, const struct ring_producer *p, uid_t allowed_uid)
{
	struct ring_handover_msg m = {
		.magic = RING_HANDOVER_MAGIC,
		.version = RING_VERSION,
		.page_size = RING_PAGE_SIZE,
		.data_size = p->size,
		.generation = p->hdr->generation,
	};
	int fds[2] = { p->ring_fd, p->cons_fd };
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int err;

	/* Trust boundary: nothing is handed over before the peer is known. */
	err = handover_check_peer(conn_fd, allowed_uid);
	if (err)
		return err;
	if (p->ring_fd < 0 || p->cons_fd < 0)
		return -EBADF;
	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	/* MSG_DONTWAIT: a peer that never reads cannot block the producer. */
	n = sendmsg(conn_fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EPROTO;
}

int handover_listen(const char *path, mode_t mode)
{
	struct sockaddr_un sa;
	int fd, err = handover_addr(&sa, path);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/*
	 * bind() applies the umask to the socket file, so set the mode after it.
	 * The mode only decides who may connect; SO_PEERCRED decides who gets the ring.
	 */
	if ((unlink(path) < 0 && errno != ENOENT) || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, mode) < 0 || listen(fd, 4) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
