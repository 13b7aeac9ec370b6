/* SPDX-License-Identifier: Apache-2.0 */
/* tracer: the command line. */
#include <stdio.h>
#include <string.h>

#include "cmd_cost.h"
#include "cmd_keygen.h"
#include "cmd_report.h"
#include "cmd_run.h"
#include "cmd_status.h"
#include "cmd_sweep.h"
#include "cmd_tune.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer COMMAND [ARGS]\n"
		   "commands:\n"
		   "  run [--json FILE] -- CMD [ARGS...]   trace CMD and everything it starts (needs root)\n"
		   "  keygen [--out FILE]                  a new signing key for uploads; prints its public key line\n"
		   "  status [--config FILE] [--json]      the processor's spool and upload\n"
		   "  report --db FILE [RUN]               runs in a lake (tracer-ingest's), or one run's summary\n"
		   "  tune --db FILE [--pipeline P] [--run RUN] [--format F]\n"
		   "                                       each step's profile, bottlenecks and rightsizing advice\n"
		   "  cost --db FILE [--run RUN] [--by B]  what runs cost, and the instance type that fits them\n"
		   "  sweep --db FILE [--since 14d]        idle hosts, idle time in runs, stuck workers, forgotten\n"
		   "                                       sessions, idle processes holding memory, steps reserving\n"
		   "                                       far more than they use, with their cost\n"
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
	if (!strcmp(argv[1], "keygen"))
		return cmd_keygen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return cmd_status(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tune"))
		return cmd_tune(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cost"))
		return cmd_cost(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sweep"))
		return cmd_sweep(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "tracer: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
