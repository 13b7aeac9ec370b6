/* SPDX-License-Identifier: Apache-2.0 */
/* Test builds only: see testtrigger.h. */
#include "testtrigger.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noreturn)) static void done(const char *who, const char *what, long rc)
{
	fprintf(stderr, "<7>%s: test trigger: %s = %ld\n", who, what, rc);
	_exit(0);
}

static void do_syscall(const char *who, const char *spec)
{
	char name[64];
	long a[3] = { 0, 0, 0 };
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	int nr;

	if (len >= sizeof(name))
		done(who, spec, -EINVAL);
	memcpy(name, spec, len);
	name[len] = 0;
	for (int i = 0; i < 3 && colon; i++) {
		a[i] = strtol(colon + 1, NULL, 0);
		colon = strchr(colon + 1, ':');
	}
	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		done(who, name, -ENOSYS);
	fprintf(stderr, "<7>%s: test trigger: calling %s\n", who, name);
	errno = 0;
	long rc = syscall(nr, a[0], a[1], a[2], 0, 0, 0);
	fprintf(stderr, "<7>%s: test trigger: %s = %ld (%s): it came back\n", who, name, rc < 0 ? -errno : rc,
		strerror(errno));
	_exit(3);
}

static void do_connect(const char *who, const char *spec)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64];
	const char *colon = strrchr(spec, ':');
	int fd;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		done(who, spec, -EINVAL);
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		done(who, spec, -EINVAL);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		done(who, "socket", -errno);
	done(who, "connect", connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0);
}

void test_trigger(const char *who, int read_flags)
{
	const char *t = getenv("TRACER_TEST_TRIGGER");

	if (!t || !*t)
		return;
	if (!strncmp(t, "syscall:", 8))
		do_syscall(who, t + 8);
	if (!strncmp(t, "open:", 5))
		done(who, "open", open(t + 5, read_flags) < 0 ? -errno : 0);
	if (!strncmp(t, "create:", 7))
		done(who, "create", open(t + 7, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) < 0 ? -errno : 0);
	if (!strncmp(t, "connect:", 8))
		do_connect(who, t + 8);
	done(who, t, -EINVAL);
}
