/* SPDX-License-Identifier: Apache-2.0 */
#include "priv.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "parse.h"

int priv_lookup_user(const char *name_or_uid, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;
	uint64_t v;

	/* Digits only (common/parse.h): "+5" or " 5" is a name, which no user has. */
	if (parse_u64(name_or_uid, 0xfffffffeULL, &v) == PARSE_OK) {
		/* A bare number need not exist in passwd: a uid nobody else uses is fine. */
		pw = getpwuid((uid_t)v);
		*uid = (uid_t)v;
		*gid = pw ? pw->pw_gid : (gid_t)v;
		return 0;
	}
	pw = getpwnam(name_or_uid);
	if (!pw)
		return errno ? -errno : -ENOENT;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int capget_sets(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	return (int)syscall(SYS_capget, &hdr, data);
}

static int clear_capability_sets(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct none[2] = { { 0 }, { 0 } };

	return (int)syscall(SYS_capset, &hdr, none);
}

bool priv_no_capabilities(void)
{
	struct __user_cap_data_struct d[2];

	if (capget_sets(d))
		return false;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return false;
	return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_SYS_ADMIN, 0, 0) == 0;
}

/*
 * The order matters, as in OpenSSH's privsep:
 *  1. bounding and ambient sets first: dropping from the bounding set needs
 *     CAP_SETPCAP, which the uid change below takes away;
 *  2. groups, then gid, then uid: once the uid is not 0 we could no longer
 *     change groups; setresuid from 0 to non-0 clears the permitted and
 *     effective capability sets (no SECBIT_KEEP_CAPS);
 *  3. not dumpable: a process of the same uid cannot ptrace us or read our memory;
 *  4. no_new_privs: no exec can ever give privileges back (and seccomp needs it);
 *  5. verify, rather than trust, that all of this took.
 */
int priv_drop(uid_t uid, gid_t gid)
{
	if (uid == 0 || gid == 0) {
		fprintf(stderr, "<3>refusing to run as uid/gid 0 after start-up\n");
		return -EINVAL;
	}
	if (geteuid() == 0) {
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
				goto fail;
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			goto fail;
	} else if (getuid() != uid) {
		fprintf(stderr, "<3>cannot switch to uid %u without root\n", (unsigned)uid);
		return -EPERM;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		goto fail;
	/* Started without root but with capabilities (ambient or file capabilities): give them up too. */
	if (!priv_no_capabilities() && clear_capability_sets())
		goto fail;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		goto fail;
	if (!priv_no_capabilities() || setuid(0) == 0 || geteuid() != uid) {
		fprintf(stderr, "<3>privileges are still held after dropping them: refusing to run\n");
		return -EPERM;
	}
	return 0;
fail:
	fprintf(stderr, "<3>dropping privileges failed: %s\n", strerror(errno));
	return -errno;
}
