/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor's command line and its config: the options, parsed
 * strictly (common/parse.h), then daemon mode's tracer.conf and --set
 * overrides merged under them (an option given on the command line wins
 * over the file). Defaults are tracer.conf's (common/config.c's table).
 */
#ifndef TRACER_PROCESSOR_OPTIONS_H
#define TRACER_PROCESSOR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define OPTIONS_MAX_SETS 64 /* --set KEY=VALUE options */

struct options {
	const char *socket_path;
	uid_t producer_uid;
	const char *user;
	uint32_t root_pid;          /* 0: daemon mode */
	bool start_ns_set;
	uint64_t start_ns;
	int report_fd, summary_fd, ready_fd, control_fd;
	uint32_t max_processes;
	uint64_t stall_after_ns;
	uint64_t io_wait_after_ns;
	uint64_t net_wait_after_ns;
	const char *tool_rules_path;
	const char *redact_rules_path;
	const char *const *command;
	size_t ncommand;
	/* daemon mode with a config */
	const char *config_path;
	const char *sets[OPTIONS_MAX_SETS];
	unsigned nsets;
	unsigned explicit;          /* options given on the command line: they win over the config */
	struct tracer_config cfg;   /* the config in force: the defaults, or the file and --set with --config */
	bool delivery;              /* --config or --set: spool and upload */
};

/*
 * argv into *o, then the config merged in. 0, or -1 after saying why (the
 * usage, or the config's own message): exit 2. --help prints the usage
 * and exits 0.
 */
int options_parse(int argc, char **argv, struct options *o);

/*
 * Every descriptor given must be open now (after the sandbox nothing
 * could say why it is not), none may be stdin or stderr; the control fd
 * is made non-blocking. 0, or -1 with a message.
 */
int options_check_fds(const struct options *o);

#endif /* TRACER_PROCESSOR_OPTIONS_H */
