// SPDX-License-Identifier: GPL-2.0-only
/* Reading a whole small file, bounded (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

ssize_t read_fd_bounded(int fd, char *buf, size_t max)
{
	size_t have = 0;

	/* One byte more than allowed: a file that grew since its fstat is caught too. */
	while (have <= max) {
		ssize_t n = read(fd, buf + have, max + 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > max)
		return -EFBIG;
	buf[have] = 0;
	return (ssize_t)have;
}

/* The open file, checked: a regular file of at most max bytes; its fstat in *st. An fd, or -errno. */
static int open_checked(int dirfd, const char *name, int oflags, size_t max, struct stat *st)
{
	int fd = openat(dirfd, name, READ_OPEN_FLAGS | oflags);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st))
		rc = -errno;
	else if (!S_ISREG(st->st_mode))
		rc = -EINVAL; /* a directory, a FIFO that could block us, a device */
	else if (st->st_size < 0 || (unsigned long long)st->st_size > max)
		rc = -EFBIG;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

ssize_t read_file_bounded(int dirfd, const char *name, int oflags, char *buf, size_t max, struct stat *st)
{
	struct stat own = { 0 };
	ssize_t n;
	/* The size is the read's to judge, not fstat's: sysfs says 4096 of every file (a DMI field among them),
	 * procfs 0; buf holds max + 1 bytes whatever st_size says. */
	int fd = open_checked(dirfd, name, oflags, SIZE_MAX, st ? st : &own);

	if (fd < 0)
		return fd;
	n = read_fd_bounded(fd, buf, max);
	close(fd);
	return n;
}

ssize_t read_file_alloc(int dirfd, const char *name, int oflags, size_t max, char **out, struct stat *st)
{
	struct stat own = { 0 }, *s = st ? st : &own;
	size_t have = 0, cap;
	char *buf = NULL;
	ssize_t rc = 0;
	int fd = open_checked(dirfd, name, oflags, max, s);

	*out = NULL;
	if (fd < 0)
		return fd;
	/* As large as fstat said, plus the NUL; grown (up to max + 1) for a file that grows while read. */
	cap = (size_t)s->st_size + 1;
	for (;;) {
		char *more = realloc(buf, cap + 1);
		ssize_t n;

		if (!more) {
			rc = -ENOMEM;
			break;
		}
		buf = more;
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		have += (size_t)n;
		if (have > max) {
			rc = -EFBIG;
			break;
		}
		if (have == cap)
			cap = cap > max / 2 ? max + 1 : cap * 2;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[have] = 0;
	*out = buf;
	return (ssize_t)have;
}
