/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fresh temporary directory for each test of a file that writes files
 * (cmocka setup and teardown): state points at a struct dir.
 *
 *   static int dir_setup(void **state) { return dir_make(state, "/tmp/test_NAME.XXXXXX"); }
 *   cmocka_unit_test_setup_teardown(a_test, dir_setup, dir_teardown)
 *
 * (or once for a group: cmocka_run_group_tests(tests, dir_setup, dir_teardown)).
 */
#ifndef TRACER_TESTS_TMPDIR_H
#define TRACER_TESTS_TMPDIR_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dir {
	char path[64];
};

/* template: a mkdtemp() template, shorter than struct dir's path. */
static inline int dir_make(void **state, const char *template_)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d || strlen(template_) >= sizeof(d->path)) {
		free(d);
		return -1;
	}
	strcpy(d->path, template_);
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	*state = d;
	return 0;
}

static inline int dir_teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd))
		return -1;
	free(d);
	return 0;
}

/*
 * The file name in d (created 0600, or truncated): len bytes of text, or with text NULL len bytes of fill (a
 * file of any size without a buffer as large). 0, or -1.
 */
static inline int dir_put(const struct dir *d, const char *name, const char *text, size_t len, char fill)
{
	char path[sizeof(d->path) + 64], chunk[4096];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", d->path, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	memset(chunk, fill, sizeof(chunk));
	for (size_t at = 0; !rc && at < len;) {
		size_t n = len - at < sizeof(chunk) ? len - at : sizeof(chunk);
		ssize_t w = write(fd, text ? text + at : chunk, n);

		if (w <= 0)
			rc = -1;
		else
			at += (size_t)w;
	}
	if (close(fd))
		rc = -1;
	return rc;
}

#endif /* TRACER_TESTS_TMPDIR_H */
