/* SPDX-License-Identifier: Apache-2.0 */
/* The price table from a file, and where the default one is (view/prices_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prices_file.h"
#include "readfile.h"

/* The table's path when --prices is not given: next to the binary, installed or in the source tree. */
static bool default_prices(char *out, size_t outlen)
{
	static const char *const rel[] = { "../share/tracer/prices.csv", "../data/prices.csv" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char dir[PATH_MAX];

		char path[PATH_MAX + 64];

		snprintf(dir, sizeof(dir), "%s", exe);
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), rel[i]);
		if (outlen >= PATH_MAX && realpath(path, out) && !access(out, R_OK))
			return true;
	}
	return false;
}

int price_table_load(const char *path, struct price_table *t)
{
	char err[512];
	char *text;
	ssize_t n = read_file_alloc(AT_FDCWD, path, 0, READ_MAX_PRICES, &text, NULL);

	if (n == -EINVAL || n == -EFBIG) {
		fprintf(stderr, "tracer: %s: not a regular file of at most %u bytes (give a price table, CSV)\n", path,
			READ_MAX_PRICES);
		return 1;
	}
	if (n < 0) {
		fprintf(stderr, "tracer: cannot open the price table %s: %s\n", path, strerror((int)-n));
		return 1;
	}
	if (price_table_parse(text, (size_t)n, t, err, sizeof(err))) {
		fprintf(stderr, "tracer: %s: %s\n", path, err);
		free(text);
		return 1;
	}
	free(text);
	return 0;
}

int cost_default_table(struct price_table *t, char *path, size_t pathlen)
{
	if (!default_prices(path, pathlen))
		return 0;
	return price_table_load(path, t) ? -1 : 1;
}

int price_table_choose(const char *path_opt, struct price_table *t, char *path, size_t pathlen, bool *have)
{
	int found;

	*have = false;
	if (path_opt) {
		snprintf(path, pathlen, "%s", path_opt);
		if (price_table_load(path, t))
			return 1;
		*have = true;
		return 0;
	}
	found = cost_default_table(t, path, pathlen);
	if (found < 0)
		return 1;
	*have = found == 1;
	return 0;
}
