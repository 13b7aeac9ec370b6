/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp allowlists for tracer-ingest and tracer-web: libseccomp directly
 * rather than priv_seccomp_allow_args() (common/priv.h, the collector's),
 * because these filters need SCMP_FLTATR_CTL_TSYNC (every thread,
 * libmicrohttpd's included), masked argument comparisons (no PROT_EXEC)
 * and errno answers (clone3). Default action: kill the process.
 */
#ifndef TRACER_COMMON_SCFILTER_H
#define TRACER_COMMON_SCFILTER_H

#include <stdint.h>

/* A syscall allowed (or answered err) only when argument arg satisfies (arg & mask) == value (mask 0: arg == value). */
struct sc_arg_rule {
	const char *name;
	int arg;                       /* -1: whatever the arguments */
	uint64_t mask, value;
	int err;                       /* 0: allow */
};

/*
 * One filter allowing every syscall of the NULL-terminated name lists in
 * names (a NULL-terminated array of them) and the rules of rules (each
 * list ends with a NULL name; the array ends with NULL), on every thread.
 * who names the program, what the filter, in messages. 0 or -errno (logged).
 */
int sc_install(const char *const *const *names, const struct sc_arg_rule *const *rules, const char *who,
	       const char *what);

#endif /* TRACER_COMMON_SCFILTER_H */
