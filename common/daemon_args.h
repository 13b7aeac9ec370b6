/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command line the two HTTP daemons (tracer-ingest, tracer-web) share:
 * --listen, --db, --user, --config, --set, --ready-fd, --help and
 * --version, the getopt loop around the daemon's own options, and the
 * messages for a bad number, an unexpected argument and a missing
 * required option. Not linked into the collector.
 */
#ifndef TRACER_COMMON_DAEMON_ARGS_H
#define TRACER_COMMON_DAEMON_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#define DAEMON_MAX_SETS 64u   /* --set KEY=VALUE options */
#define DAEMON_MAX_OWN 16u    /* a daemon's own options */
#define DAEMON_OPT_OWN 512    /* the first value a daemon's own option may take (struct option's val) */

/* What the shared options gave; NULL or -1 where not given. */
struct daemon_args {
	const char *listen, *db, *user, *config;
	const char *sets[DAEMON_MAX_SETS];
	unsigned nsets;
	int ready_fd;
};

struct daemon_cli {
	const char *prog;                /* "tracer-ingest": prefixes every message */
	const struct option *own;        /* the daemon's own options, ending in a zero entry; val >= DAEMON_OPT_OWN */
	void (*usage)(FILE *f);          /* the whole usage text */
	/* One of own's options: 0, or -1 having said why (daemon_parse_number does). */
	int (*parse_own)(void *ctx, int opt, const char *arg);
	void *ctx;
};

/*
 * Parse argv: --help prints the usage on standard output and --version the
 * version (common/version.h), each exiting 0. 0, or -1 having printed the
 * reason and the usage on stderr (a daemon then exits 2).
 */
int daemon_args_parse(const struct daemon_cli *cli, int argc, char **argv, struct daemon_args *a);
/* A whole number in [min, max], digits only (common/parse.h); 0, or -1 with "PROG: OPT S: want a ...". */
int daemon_parse_number(const char *prog, const char *opt, const char *s, unsigned long long min,
			unsigned long long max, unsigned long long *out);
/* ok: 0. Else "PROG: WHAT" and the usage on stderr, and -1. */
int daemon_require(const struct daemon_cli *cli, bool ok, const char *what);

#endif /* TRACER_COMMON_DAEMON_ARGS_H */
