/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor's options: what each takes (parsed with common/parse.h,
 * within the bounds of tracer.conf's key for the same setting), the usage
 * text, the merge of daemon mode's config under them, and the check of
 * the descriptors handed over.
 */
#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "parse.h"
#include "version.h"

#define RUN_MODE_USER "nobody" /* without --user or a config (tracer run passes --user nobody itself) */

enum { OPT_SOCKET = 1, OPT_USER = 2, OPT_MAX_PROCS = 4, OPT_STALL = 8, OPT_IO_WAIT = 16, OPT_NET_WAIT = 32,
       OPT_TOOL_RULES = 64, OPT_REDACT_RULES = 128 };

static void usage(FILE *f)
{
	uint64_t stall = 0, io = 0, net = 0;

	config_key_number("stall_after", &stall, NULL, NULL);
	config_key_number("io_wait_after", &io, NULL, NULL);
	config_key_number("net_wait_after", &net, NULL, NULL);
	fprintf(f,
		"usage: tracer-processor --socket PATH [--producer-uid UID] [--user NAME|UID]\n"
		"                        [--root-pid PID --report-fd FD [--summary-fd FD] [--start-ns NS]]\n"
		"                        [--ready-fd FD] [--control-fd FD] [--max-processes N]\n"
		"                        [--stall-after S] [--io-wait-after S] [--net-wait-after S]\n"
		"                        [--tool-rules FILE] [--redact-rules FILE] [-- CMD ARGS...]\n"
		"       tracer-processor --config FILE [--set KEY=VALUE]... [options above]\n"
		"Attaches to tracer-collector's ring on PATH (the collector must run as UID, default 0),\n"
		"drops to NAME (default " RUN_MODE_USER ") and decodes every record. With --root-pid, reports on\n"
		"that process and its descendants when the run ends (control line \"end STATUS NS\").\n"
		"A live process with no CPU and no I/O progress for S seconds (default %.9g) is stalled;\n"
		"--io-wait-after (default %.9g) and --net-wait-after (default %.9g) flag long waits.\n"
		"--config: daemon mode as tracer.conf says (docs/config.md): records are spooled in\n"
		"state_dir and uploaded to upload_url; --set overrides one key of the file.\n"
		"--help: this text; --version: the version and commit.\n",
		(double)stall / 1e9, (double)io / 1e9, (double)net / 1e9);
}

/* Seconds ("2", "0.5"), at most what tracer.conf's key allows; zero_ok: 0 turns it off. */
static int parse_seconds(const char *s, const char *key, bool zero_ok, uint64_t *ns)
{
	uint64_t v, max;

	if (config_key_number(key, NULL, NULL, &max) || parse_duration(s, 0, &v) || v > max || (!zero_ok && v == 0))
		return -1;
	*ns = v;
	return 0;
}

static int parse_fd(const char *s, int *fd)
{
	uint64_t v;

	if (parse_u64(s, 65535, &v))
		return -1;
	*fd = (int)v;
	return 0;
}

static int parse_max_processes(const char *s, uint32_t *out)
{
	uint64_t v, min, max;

	if (config_key_number("max_processes", NULL, &min, &max) || parse_u64(s, max, &v) || v < min)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_option(int c, struct options *o)
{
	uint64_t v;

	switch (c) {
	case 's': o->socket_path = optarg; o->explicit |= OPT_SOCKET; return 0;
	case 'u': o->user = optarg; o->explicit |= OPT_USER; return 0;
	case 'C': o->config_path = optarg; return 0;
	case 'E':
		if (o->nsets == OPTIONS_MAX_SETS)
			return -1;
		o->sets[o->nsets++] = optarg;
		return 0;
	case 'P':
		if (parse_u64(optarg, 0xfffffffe, &v))
			return -1;
		o->producer_uid = (uid_t)v;
		return 0;
	case 'r':
		if (parse_u64(optarg, DECODE_PID_LIMIT, &v) || v == 0)
			return -1;
		o->root_pid = (uint32_t)v;
		return 0;
	case 't':
		o->start_ns_set = true;
		return parse_u64(optarg, UINT64_MAX, &o->start_ns) ? -1 : 0;
	case 'm': o->explicit |= OPT_MAX_PROCS; return parse_max_processes(optarg, &o->max_processes);
	case 'A': o->explicit |= OPT_STALL; return parse_seconds(optarg, "stall_after", false, &o->stall_after_ns);
	case 'I': o->explicit |= OPT_IO_WAIT; return parse_seconds(optarg, "io_wait_after", true, &o->io_wait_after_ns);
	case 'N':
		o->explicit |= OPT_NET_WAIT;
		return parse_seconds(optarg, "net_wait_after", true, &o->net_wait_after_ns);
	case 'T': o->tool_rules_path = optarg; o->explicit |= OPT_TOOL_RULES; return 0;
	case 'X': o->redact_rules_path = optarg; o->explicit |= OPT_REDACT_RULES; return 0;
	case 'R': return parse_fd(optarg, &o->report_fd);
	case 'S': return parse_fd(optarg, &o->summary_fd);
	case 'f': return parse_fd(optarg, &o->ready_fd);
	case 'c': return parse_fd(optarg, &o->control_fd);
	case 'h': usage(stdout); exit(0);
	case 'V': version_print("tracer-processor"); exit(0);
	default: return -1;
	}
}

/*
 * Daemon mode's config: the file, then --set overrides, then the whole
 * checked; options given on the command line win over it. A bad file
 * names its line and key; nothing starts.
 */
static int apply_config(struct options *o)
{
	static char socket_path[PATH_MAX + 32];
	struct tracer_config *c = &o->cfg;

	if (!o->config_path && !o->nsets)
		return 0;
	if (config_from_options(c, o->config_path, false, o->sets, o->nsets))
		return -1;
	o->delivery = true;
	if (!(o->explicit & OPT_SOCKET)) {
		snprintf(socket_path, sizeof(socket_path), "%s/collector.sock", c->runtime_dir);
		o->socket_path = socket_path;
	}
	if (!(o->explicit & OPT_USER))
		o->user = c->processor_user;
	if (!(o->explicit & OPT_MAX_PROCS))
		o->max_processes = c->max_processes;
	if (!(o->explicit & OPT_STALL))
		o->stall_after_ns = c->stall_after_ns;
	if (!(o->explicit & OPT_IO_WAIT))
		o->io_wait_after_ns = c->io_wait_after_ns;
	if (!(o->explicit & OPT_NET_WAIT))
		o->net_wait_after_ns = c->net_wait_after_ns;
	if (!(o->explicit & OPT_TOOL_RULES) && c->tool_rules[0])
		o->tool_rules_path = c->tool_rules;
	if (!(o->explicit & OPT_REDACT_RULES) && c->redact_rules[0])
		o->redact_rules_path = c->redact_rules;
	return 0;
}

/* Before any option: tracer.conf's defaults, as the processor's. */
static void set_defaults(struct options *o)
{
	memset(o, 0, offsetof(struct options, cfg));
	config_defaults(&o->cfg);
	o->delivery = false;
	o->user = RUN_MODE_USER;
	o->report_fd = o->summary_fd = o->ready_fd = o->control_fd = -1;
	o->max_processes = o->cfg.max_processes;
	o->stall_after_ns = o->cfg.stall_after_ns;
	o->io_wait_after_ns = o->cfg.io_wait_after_ns;
	o->net_wait_after_ns = o->cfg.net_wait_after_ns;
}

int options_parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "producer-uid", required_argument, NULL, 'P' },
		{ "user", required_argument, NULL, 'u' },
		{ "root-pid", required_argument, NULL, 'r' },
		{ "start-ns", required_argument, NULL, 't' },
		{ "report-fd", required_argument, NULL, 'R' },
		{ "summary-fd", required_argument, NULL, 'S' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "control-fd", required_argument, NULL, 'c' },
		{ "max-processes", required_argument, NULL, 'm' },
		{ "stall-after", required_argument, NULL, 'A' },
		{ "io-wait-after", required_argument, NULL, 'I' },
		{ "net-wait-after", required_argument, NULL, 'N' },
		{ "tool-rules", required_argument, NULL, 'T' },
		{ "redact-rules", required_argument, NULL, 'X' },
		{ "config", required_argument, NULL, 'C' },
		{ "set", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	set_defaults(o);
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1)
		if (parse_option(c, o))
			goto bad;
	o->command = (const char *const *)argv + optind;
	o->ncommand = (size_t)(argc - optind);
	if (apply_config(o))
		return -1;
	if (!o->socket_path || (o->root_pid && o->report_fd < 0) || (!o->root_pid && o->report_fd >= 0))
		goto bad;
	return 0;
bad:
	usage(stderr);
	return -1;
}

int options_check_fds(const struct options *o)
{
	const int fds[] = { o->report_fd, o->summary_fd, o->ready_fd, o->control_fd };
	const char *const names[] = { "--report-fd", "--summary-fd", "--ready-fd", "--control-fd" };
	struct stat st;

	for (int i = 0; i < 4; i++) {
		if (fds[i] >= 0 && fstat(fds[i], &st) < 0) {
			fprintf(stderr, "<3>%s %d is not an open file descriptor: %s\n", names[i], fds[i],
				strerror(errno));
			return -1;
		}
		if (fds[i] >= 0 && fds[i] <= 2 && fds[i] != STDOUT_FILENO) {
			fprintf(stderr, "<3>%s %d: use a descriptor other than stdin and stderr\n", names[i], fds[i]);
			return -1;
		}
	}
	/* Non-blocking: a partial control line must not stall the loop. */
	if (o->control_fd >= 0 && fcntl(o->control_fd, F_SETFL, fcntl(o->control_fd, F_GETFL) | O_NONBLOCK) < 0) {
		fprintf(stderr, "<3>--control-fd %d: %s\n", o->control_fd, strerror(errno));
		return -1;
	}
	return 0;
}
