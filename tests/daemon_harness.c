/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int daemon_find(const char *name, char *path, size_t cap)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *const up[] = { "..", "../.." }; /* BUILD/tests/, BUILD/asan/tests/ */

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (int i = 0; i < 2; i++) {
		snprintf(path, cap, "%s/%s/%s", self, up[i], name);
		if (access(path, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* In the child, between fork and exec: its descriptors as io says. No cmocka here: a failure is an exit status. */
static int child_io(const struct daemon_io *io)
{
	if (io->stderr_path) {
		int fd = open(io->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, STDERR_FILENO) != STDERR_FILENO)
			return 126;
	} else if (io->stderr_fd >= 0 && dup2(io->stderr_fd, STDERR_FILENO) != STDERR_FILENO) {
		return 126;
	}
	if (io->stdout_fd >= 0 && dup2(io->stdout_fd, STDOUT_FILENO) != STDOUT_FILENO)
		return 126;
	for (int i = 0; i < 2; i++)
		if (io->inherit[i] >= 0 && fcntl(io->inherit[i], F_SETFD, 0))
			return 126;
	return io->in_child ? io->in_child(io->arg) : 0;
}

pid_t daemon_start(const char *const *argv, const struct daemon_io *io)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = child_io(io);

		if (rc)
			_exit(rc);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return pid;
}

int daemon_wait(pid_t pid, int ms)
{
	int64_t end = now_ms() + ms;
	int status;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return status;
		if (w < 0)
			fail_msg("waitpid(%d): %s", (int)pid, strerror(errno));
		if (now_ms() >= end)
			return -1;
		usleep(5000);
	}
}

int daemon_stop(pid_t pid, int sig, int ms)
{
	int status;

	assert_int_equal(kill(pid, sig), 0);
	status = daemon_wait(pid, ms);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return status;
}

int daemon_run(const char *const *argv, const struct daemon_io *io, int ms)
{
	pid_t pid = daemon_start(argv, io);
	int status = daemon_wait(pid, ms);

	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("%s did not exit within %d ms", argv[0], ms);
	}
	return status;
}

/* Read what fd has into buf at *len (past cap - 1: read and dropped); false at end of file. */
static bool drain(int fd, char *buf, size_t cap, size_t *len)
{
	char spill[4096];
	char *to = *len < cap - 1 ? buf + *len : spill;
	size_t room = *len < cap - 1 ? cap - 1 - *len : sizeof(spill);
	ssize_t n = read(fd, to, room);

	if (n <= 0)
		return n < 0 && errno == EINTR;
	if (to != spill)
		*len += (size_t)n;
	buf[*len] = 0;
	return true;
}

int daemon_capture(const char *const *argv, char *out, size_t out_cap, char *err, size_t err_cap, int ms)
{
	struct daemon_io io = DAEMON_IO;
	int o[2], e[2], status;
	size_t out_len = 0, err_len = 0;
	struct pollfd p[2];
	int64_t end = now_ms() + ms;
	pid_t pid;

	out[0] = err[0] = 0;
	assert_int_equal(pipe2(o, O_CLOEXEC), 0);
	assert_int_equal(pipe2(e, O_CLOEXEC), 0);
	io.stdout_fd = o[1];
	io.stderr_fd = e[1];
	pid = daemon_start(argv, &io);
	close(o[1]);
	close(e[1]);
	p[0] = (struct pollfd){ .fd = o[0], .events = POLLIN };
	p[1] = (struct pollfd){ .fd = e[0], .events = POLLIN };
	/* Both at once: neither pipe can fill up while the other is read. */
	while ((p[0].fd >= 0 || p[1].fd >= 0) && now_ms() < end) {
		if (poll(p, 2, (int)(end - now_ms())) <= 0)
			continue;
		if (p[0].revents && !drain(o[0], out, out_cap, &out_len))
			p[0].fd = -1;
		if (p[1].revents && !drain(e[0], err, err_cap, &err_len))
			p[1].fd = -1;
	}
	close(o[0]);
	close(e[0]);
	status = daemon_wait(pid, (int)(end > now_ms() ? end - now_ms() : 0));
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("%s did not exit within %d ms", argv[0], ms);
	}
	return daemon_exit_code(status);
}

int daemon_exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ssize_t daemon_ready(int fd, int ms, char *buf, size_t cap)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	buf[0] = 0;
	if (poll(&p, 1, ms) != 1)
		return -1;
	n = read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

void daemon_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	while (fd >= 0 && len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	if (fd >= 0)
		close(fd);
}

char *daemon_read_fd(int fd)
{
	struct stat st;
	char *buf;
	ssize_t n;

	assert_int_equal(fstat(fd, &st), 0);
	buf = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(buf);
	n = pread(fd, buf, (size_t)st.st_size, 0);
	assert_int_equal(n, st.st_size);
	return buf;
}
