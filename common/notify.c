/* SPDX-License-Identifier: Apache-2.0 */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "parse.h"

/* An environment variable's whole number (common/parse.h); 0, or -1 when unset or not one. */
static int env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);

	return s && parse_u64(s, UINT64_MAX, out) == PARSE_OK ? 0 : -1;
}

static void read_watchdog(struct notify *n)
{
	uint64_t usec, pid;

	/* WATCHDOG_PID, when set, names the process the watchdog is for: not a child of ours. */
	if (getenv("WATCHDOG_PID") && (env_u64("WATCHDOG_PID", &pid) || pid != (uint64_t)getpid()))
		return;
	if (env_u64("WATCHDOG_USEC", &usec) || usec == 0 || usec > UINT64_MAX / 1000)
		return;
	n->watchdog_ns = usec * 1000;
}

int notify_open(struct notify *n)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd, err;

	*n = (struct notify){ .fd = -1 };
	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		fprintf(stderr, "<4>NOTIFY_SOCKET=%s is not a socket path: systemd will not hear that we are ready\n",
			path);
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = 0; /* the abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len))) {
		err = -errno;
		fprintf(stderr, "<4>cannot reach systemd's notify socket %s: %s\n", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	n->fd = fd;
	read_watchdog(n);
	return 0;
}

void notify_send(struct notify *n, const char *msg)
{
	size_t len = strlen(msg);

	if (n->fd >= 0 && write(n->fd, msg, len) != (ssize_t)len)
		fprintf(stderr, "<4>cannot notify systemd (%s): %s\n", msg, strerror(errno));
}

void notify_watchdog(struct notify *n, uint64_t now)
{
	if (n->fd < 0 || !n->watchdog_ns || now < n->next_watchdog)
		return;
	notify_send(n, "WATCHDOG=1");
	n->next_watchdog = now + n->watchdog_ns / 2;
}
