// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a whole small file into a buffer of its size (readfile.h): apart from readfile.c, since the
 * collector, which reads into fixed buffers, does not link it.
 */
#include "readfile.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

ssize_t read_file_alloc(int dirfd, const char *name, int oflags, size_t max, char **out, struct stat *st)
{
	struct stat own = { 0 }, *s = st ? st : &own;
	size_t have = 0, cap;
	char *buf = NULL;
	ssize_t rc = 0;
	int fd = read_open_checked(dirfd, name, oflags, max, s);

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
