/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Giving up privilege, shared by every daemon: the order of demotion is
 * written once, here. The seccomp filter that follows: common/scfilter.h.
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

/* true if the calling process has no capability in any set. */
bool priv_no_capabilities(void);

#endif /* TRACER_COMMON_PRIV_H */
