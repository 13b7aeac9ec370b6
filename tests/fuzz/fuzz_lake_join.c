/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: lake/join.c, which reads an sbatch's argv as the lake
 * stores it (a JSON array that came from a host) and host and job names
 * that came from hosts too, with abort() on a broken invariant.
 *
 * Input: up to four parts separated by NUL bytes: an argv text, a job
 * name, and two host names.
 *
 * Invariants: no crash and no read past the text (ASan); join_same_host is
 * symmetric, and true of a name and itself when not empty; a name that
 * join_names_job finds is not empty and appears in the text (escapes
 * aside: only checked for texts without a backslash); join_pick gives -1
 * or a candidate of the job's host, and with one candidate named by the
 * text, that one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *part[4] = { NULL, NULL, NULL, NULL };
	size_t n = 0, at = 0;
	struct join_candidate c[2];
	int pick;

	CHECK(buf != NULL);
	memcpy(buf, data, size);
	buf[size] = 0;
	for (size_t i = 0; i <= size && n < 4; i++)
		if (buf[i] == 0) {
			part[n++] = buf + at;
			at = i + 1;
		}
	for (size_t i = n; i < 4; i++)
		part[i] = buf + size; /* "" */
	CHECK(join_same_host(part[2], part[3]) == join_same_host(part[3], part[2]));
	CHECK(join_same_host(part[2], part[2]) == (part[2][0] != 0));
	if (join_names_job(part[0], strlen(part[0]), part[1])) {
		CHECK(part[1][0] != 0);
		CHECK(strchr(part[0], '\\') || strstr(part[0], part[1]));
	}
	c[0] = (struct join_candidate){ .host_name = part[3], .argv_json = "[\"sbatch\"]", .argv_len = 10 };
	c[1] = (struct join_candidate){ .host_name = part[2], .argv_json = part[0], .argv_len = strlen(part[0]) };
	pick = join_pick(c, 2, part[2], part[1]);
	CHECK(pick == -1 || join_same_host(c[pick].host_name, part[2]));
	if (join_same_host(part[2], part[2]) && join_names_job(part[0], strlen(part[0]), part[1]))
		CHECK(pick == 1);
	free(buf);
	return 0;
}
