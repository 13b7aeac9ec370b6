/* SPDX-License-Identifier: Apache-2.0 */
/* tracer: the command line. */
#include <stdio.h>
#include <string.h>

#include "cmd_cost.h"
#include "cmd_export_otlp.h"
#include "cmd_export_table.h"
#include "cmd_keygen.h"
#include "cmd_report.h"
#include "cmd_run.h"
#include "cmd_status.h"
#include "cmd_sweep.h"
#include "cmd_tune.h"
#include "version.h"

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
		   "  export table --db FILE {runs|steps|processes|signals|samples} [--since D] [--format csv|ndjson]\n"
		   "                                       the lake's rows as CSV or NDJSON, for notebooks\n"
		   "  export otlp --db FILE --endpoint URL [--since D] [--follow --state FILE] [--header K=V]...\n"
		   "                                       runs as OpenTelemetry traces (OTLP/HTTP JSON)\n"
		   "  help, --help                         this text, on standard output\n"
		   "  --version                            the version and commit\n"
		   "Each command's --help gives all its options.\n");
}

static void export_usage(FILE *f)
{
	fprintf(f, "usage: tracer export table --db FILE {runs|steps|processes|signals|samples} [--since D]\n"
		   "                          [--format csv|ndjson]\n"
		   "       tracer export otlp --db FILE --endpoint URL [--since D] [--follow --state FILE]\n"
		   "                          [--header K=V]... [--with-argv]\n"
		   "(tracer export table --help, tracer export otlp --help: all their options)\n");
}

static int cmd_export(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "table"))
		return cmd_export_table(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "otlp"))
		return cmd_export_otlp(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		export_usage(stdout);
		return 0;
	}
	if (argc >= 2)
		fprintf(stderr, "tracer export: unknown kind '%s'\n", argv[1]);
	export_usage(stderr);
	return 2;
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
	if (!strcmp(argv[1], "export"))
		return cmd_export(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sweep"))
		return cmd_sweep(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		version_print("tracer");
		return 0;
	}
	fprintf(stderr, "tracer: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
