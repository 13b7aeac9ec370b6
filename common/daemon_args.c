/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_args.h"
#include "parse.h"
#include "version.h"

enum { OPT_LISTEN = 256, OPT_DB, OPT_USER, OPT_CONFIG, OPT_SET, OPT_READY_FD, OPT_VERSION };

static const struct option shared_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN }, { "db", required_argument, NULL, OPT_DB },
	{ "user", required_argument, NULL, OPT_USER }, { "config", required_argument, NULL, OPT_CONFIG },
	{ "set", required_argument, NULL, OPT_SET }, { "ready-fd", required_argument, NULL, OPT_READY_FD },
	{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, OPT_VERSION },
};
#define NSHARED (sizeof(shared_opts) / sizeof(shared_opts[0]))

int daemon_parse_number(const char *prog, const char *opt, const char *s, unsigned long long min,
			unsigned long long max, unsigned long long *out)
{
	uint64_t v = 0;

	if (parse_u64(s, max, &v) || v < min) {
		fprintf(stderr, "%s: %s %s: want a whole number from %llu to %llu\n", prog, opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_shared(const struct daemon_cli *cli, struct daemon_args *a, int opt, const char *arg)
{
	unsigned long long v = 0;

	switch (opt) {
	case OPT_LISTEN: a->listen = arg; return 0;
	case OPT_DB: a->db = arg; return 0;
	case OPT_USER: a->user = arg; return 0;
	case OPT_CONFIG: a->config = arg; return 0;
	case OPT_SET:
		if (a->nsets == DAEMON_MAX_SETS) {
			fprintf(stderr, "%s: more than %u --set options\n", cli->prog, DAEMON_MAX_SETS);
			return -1;
		}
		a->sets[a->nsets++] = arg;
		return 0;
	case OPT_READY_FD:
		if (daemon_parse_number(cli->prog, "--ready-fd", arg, 0, 1 << 20, &v))
			return -1;
		a->ready_fd = (int)v;
		return 0;
	case 'h': cli->usage(stdout); exit(0);
	case OPT_VERSION: version_print(cli->prog); exit(0);
	default: return opt >= DAEMON_OPT_OWN ? cli->parse_own(cli->ctx, opt, arg) : -1;
	}
}

int daemon_args_parse(const struct daemon_cli *cli, int argc, char **argv, struct daemon_args *a)
{
	struct option all[NSHARED + DAEMON_MAX_OWN + 1];
	size_t n = NSHARED;
	int opt;

	memcpy(all, shared_opts, sizeof(shared_opts));
	for (const struct option *o = cli->own; o && o->name; o++) {
		if (n == NSHARED + DAEMON_MAX_OWN || o->val < DAEMON_OPT_OWN)
			abort(); /* a programming error, found by any run */
		all[n++] = *o;
	}
	memset(&all[n], 0, sizeof(all[n]));
	memset(a, 0, sizeof(*a));
	a->ready_fd = -1;
	while ((opt = getopt_long(argc, argv, "h", all, NULL)) != -1) {
		if (opt == '?' || parse_shared(cli, a, opt, optarg)) {
			cli->usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", cli->prog, argv[optind]);
		cli->usage(stderr);
		return -1;
	}
	return 0;
}

int daemon_require(const struct daemon_cli *cli, bool ok, const char *what)
{
	if (ok)
		return 0;
	fprintf(stderr, "%s: %s\n", cli->prog, what);
	cli->usage(stderr);
	return -1;
}
