// SPDX-License-Identifier: GPL-2.0-only
/* Reading a whole small file, bounded (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

ssize_t read_fd_upto(int fd, char *buf, size_t cap)
{
	size_t have = 0;
	ssize_t n;

	while (have < cap && (n = read(fd, buf + have, cap - have)) != 0) {
		if (n > 0)
			have += (size_t)n;
		else if (errno != EINTR)
			return -errno;
	}
	return (ssize_t)have;
}

ssize_t read_fd_bounded(int fd, char *buf, size_t max)
{
	ssize_t n = read_fd_upto(fd, buf, max + 1); /* one byte more: a file that grew since its fstat is caught */

	if (n < 0 || (size_t)n > max)
		return n < 0 ? n : -EFBIG;
	buf[n] = 0;
	return n;
}

int read_open_checked(int dirfd, const char *name, int oflags, size_t max, struct stat *st)
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
	int fd = read_open_checked(dirfd, name, oflags, SIZE_MAX, st ? st : &own);

	if (fd < 0)
		return fd;
	n = read_fd_bounded(fd, buf, max);
	close(fd);
	return n;
}
