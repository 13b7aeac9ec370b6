/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the libFuzzer targets share: CHECK(cond) stops the target with the
 * broken invariant named (tests/run-fuzz.sh shows that line of the report),
 * and the count of open file descriptors, to catch leaks. Messages go to fd
 * 2 directly, since some targets capture stdio's stderr as the code's log.
 */
#ifndef TRACER_TESTS_FUZZ_CHECK_H
#define TRACER_TESTS_FUZZ_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			dprintf(2, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
			abort();                                                             \
		}                                                                            \
	} while (0)

/* Open file descriptors of this process (the directory's own entries included: compare counts). */
static inline int fuzz_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#endif /* TRACER_TESTS_FUZZ_CHECK_H */
