/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one seccomp filter builder (libseccomp), for every program that
 * confines itself: tracer-collector and tracer-processor (collector/sandbox.c,
 * processor/confine.c), tracer-ingest and tracer-web (ingest/ingest_sandbox.c,
 * web/web_sandbox.c). Allowlists of system call names, rules on one argument
 * (equal, or equal under a mask: no PROT_EXEC), errno answers instead of a
 * kill (clone3: ENOSYS), optionally on every thread (TSYNC). Default action:
 * kill the process. A name this architecture or libseccomp does not know is
 * skipped.
 */
#ifndef TRACER_COMMON_SCFILTER_H
#define TRACER_COMMON_SCFILTER_H

#include <stdint.h>

/* A syscall allowed (or answered err) only when argument arg satisfies (arg & mask) == value (mask 0: arg == value). */
#define SC_ANY_ARG (-1)
struct sc_arg_rule {
	const char *name;
	int arg;                       /* SC_ANY_ARG: whatever the arguments */
	uint64_t mask, value;
	int err;                       /* 0: allow */
};

#define SC_TSYNC 0x1   /* on every thread of the process (libmicrohttpd's included) */
/* no_new_privs is already set (priv_drop()): libseccomp must not prctl it (an earlier filter may refuse that). */
#define SC_NNP_SET 0x2

/*
 * One filter allowing every syscall of the NULL-terminated name lists in
 * names (a NULL-terminated array of them) and the rules of rules (each
 * list ends with a NULL name; the array ends with NULL; may be NULL);
 * flags: SC_*. who names the program, what the filter, in messages.
 * 0 or -errno (logged).
 */
int sc_install(const char *const *const *names, const struct sc_arg_rule *const *rules, unsigned flags,
	       const char *who, const char *what);

#endif /* TRACER_COMMON_SCFILTER_H */
