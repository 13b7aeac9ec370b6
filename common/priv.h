/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Giving up privilege, shared by tracer-collector and tracer-processor:
 * the order of demotion is written once, here.
 */
#ifndef TRACER_COMMON_PRIV_H
#define TRACER_COMMON_PRIV_H

#include <stdbool.h>
#include <sys/types.h>

/* Resolve a user name or number. 0 or -errno (-ENOENT: no such user). */
int priv_lookup_user(const char *name_or_uid, uid_t *uid, gid_t *gid);

/*
 * Drop everything: capability bounding set and ambient set, supplementary
 * groups, gid, uid (to uid/gid, which must not be 0), no_new_privs, not
 * dumpable; then check that no capability is left and root cannot be
 * regained. Only root (or a process with CAP_SETUID/CAP_SETGID/CAP_SETPCAP)
 * can change uid; an unprivileged caller already at uid keeps it.
 */
int priv_drop(uid_t uid, gid_t gid);

/*
 * Install a seccomp filter that allows exactly the named syscalls (any
 * name unknown to this kernel/libseccomp is skipped) and kills the process
 * on anything else. names ends with NULL.
 */
int priv_seccomp_allow(const char *const *names);

/*
 * A syscall allowed only when an argument matches: argument number arg
 * (0-based) equals value, or, with a mask, (argument & mask) == value.
 * With err set, a match fails with that errno instead of being allowed (a
 * library that probes for a feature gets an answer, not a kill). arg
 * PRIV_ANY_ARG matches every call of the syscall.
 */
#define PRIV_ANY_ARG 0xffffffffu
struct priv_arg_rule {
	const char *name;
	unsigned arg;
	unsigned long long value;
	unsigned long long mask; /* 0: the whole argument */
	int err;                 /* 0: allow */
};

/* priv_seccomp_allow, plus the argument-restricted rules (ending with a NULL name; may be NULL). */
int priv_seccomp_allow_args(const char *const *names, const struct priv_arg_rule *rules);

/* true if the calling process has no capability in any set. */
bool priv_no_capabilities(void);

#endif /* TRACER_COMMON_PRIV_H */
