/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fresh temporary directory for each test of a file that writes files
 * (cmocka setup and teardown): state points at a struct dir.
 *
 *   static int dir_setup(void **state) { return dir_make(state, "/tmp/test_NAME.XXXXXX"); }
 *   cmocka_unit_test_setup_teardown(a_test, dir_setup, dir_teardown)
 */
#ifndef TRACER_TESTS_TMPDIR_H
#define TRACER_TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif /* TRACER_TESTS_TMPDIR_H */
