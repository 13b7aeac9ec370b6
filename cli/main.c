/* SPDX-License-Identifier: Apache-2.0 */
/* tracer: the command line. */
#include <stdio.h>
#include <string.h>

#include "run.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer COMMAND [ARGS]\n"
		   "commands:\n"
		   "  run [--json FILE] -- CMD [ARGS...]   trace CMD and everything it starts (needs root)\n"
		   "  help                                 this text\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "tracer: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
