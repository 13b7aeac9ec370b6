/* SPDX-License-Identifier: Apache-2.0 */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The build's kernel headers (Debian 12: Linux 6.1) know ABI 2; the running
 * kernel may know more. What later ABIs added, from the kernel's uapi.
 */
#define LL_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_RULE_NET_PORT 2             /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */

/* struct landlock_ruleset_attr as of ABI 6; older kernels are given a prefix of it. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#define LL_FS_ABI1 ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_READ_DIR (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FS_RW_DIR                                                                                           \
	(LL_FS_READ_DIR | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                     \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |          \
	 LANDLOCK_ACCESS_FS_REFER | LL_FS_TRUNCATE)

static bool add_path(const char **v, unsigned *n, const char *path)
{
	if (!path || !*path)
		return true;
	if (*n == LANDLOCK_MAX_PATHS)
		return false;
	v[(*n)++] = path;
	return true;
}

bool landlock_add_ro(struct landlock_spec *s, const char *path, bool dir_of)
{
	static char dirs[LANDLOCK_MAX_PATHS][4096]; /* start-up only, single-threaded */
	static unsigned ndirs;
	const char *slash = path ? strrchr(path, '/') : NULL;
	size_t len;

	if (!dir_of || !slash)
		return add_path(s->ro_paths, &s->nro, path);
	len = slash == path ? 1 : (size_t)(slash - path); /* "/f" lives in "/" */
	if (ndirs == LANDLOCK_MAX_PATHS || len >= sizeof(dirs[0]))
		return false;
	memcpy(dirs[ndirs], path, len);
	dirs[ndirs][len] = 0;
	return add_path(s->ro_paths, &s->nro, dirs[ndirs++]);
}

bool landlock_add_rw(struct landlock_spec *s, const char *dir)
{
	return add_path(s->rw_dirs, &s->nrw, dir);
}

bool landlock_add_port(struct landlock_spec *s, uint16_t port)
{
	for (unsigned i = 0; i < s->nports; i++)
		if (s->connect_ports[i] == port)
			return true;
	if (s->nports == LANDLOCK_MAX_PORTS)
		return false;
	s->connect_ports[s->nports++] = port;
	return true;
}

static uint64_t fs_rights(int abi)
{
	uint64_t r = LL_FS_ABI1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/*
 * A path rule. A missing path is no error (an optional file of the resolver,
 * say), nor one this user cannot reach (a rules file read as root at start):
 * without a rule it stays out of reach, which is what the user's own
 * permissions say anyway.
 */
static int add_path_rule(int ruleset, const char *path, uint64_t want, uint64_t handled, const char *who)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	pb.parent_fd = fd;
	pb.allowed_access = want & handled;
	/* A rule on a file may only grant what applies to files. */
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		pb.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				     LANDLOCK_ACCESS_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
		err = -errno;
	if (err)
		fprintf(stderr, "<3>%s: cannot allow %s in the Landlock ruleset: %s\n", who, path, strerror(-err));
	close(fd);
	return err;
}

static int add_rules(int ruleset, const struct landlock_spec *s, int abi, uint64_t handled, const char *who)
{
	int err = 0;

	for (unsigned i = 0; !err && i < s->nrw; i++)
		err = add_path_rule(ruleset, s->rw_dirs[i], LL_FS_RW_DIR, handled, who);
	for (unsigned i = 0; !err && i < s->nro; i++)
		err = add_path_rule(ruleset, s->ro_paths[i], LL_FS_READ_DIR, handled, who);
	for (unsigned i = 0; !err && abi >= 4 && i < s->nports; i++) {
		struct ll_net_port_attr np = { .allowed_access = LL_NET_CONNECT_TCP, .port = s->connect_ports[i] };

		if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0)) {
			err = -errno;
			fprintf(stderr, "<3>%s: cannot allow TCP port %u in the Landlock ruleset: %s\n", who,
				(unsigned)s->connect_ports[i], strerror(-err));
		}
	}
	return err;
}

int landlock_apply(const struct landlock_spec *s, const char *who)
{
	struct ll_ruleset_attr attr = { 0 };
	size_t attr_size = sizeof(attr.handled_access_fs);
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int ruleset, err;

	if (abi < 1 && (errno == ENOSYS || errno == EOPNOTSUPP)) {
		fprintf(stderr, "<4>%s: this kernel has no Landlock (%s): files are confined by the service's "
				"ProtectSystem= alone\n", who, strerror(errno));
		return 0;
	}
	if (abi < 1) {
		/* Landlock is there but we may not use it: a service manager's filter, most likely. Fail closed. */
		err = -errno;
		fprintf(stderr, "<3>%s: Landlock refused (%s): where a service manager's filter refuses the "
				"landlock_* system calls, allow them (SystemCallFilter=landlock_create_ruleset "
				"landlock_add_rule landlock_restrict_self); not running unconfined\n", who, strerror(-err));
		return err;
	}
	if (s->net_only && abi < 4) /* no TCP rules before ABI 4: nothing to confine (the caller says so) */
		return 0;
	attr.handled_access_fs = s->net_only ? 0 : fs_rights(abi);
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0) {
		err = -errno;
		fprintf(stderr, "<3>%s: cannot create a Landlock ruleset: %s\n", who, strerror(-err));
		return err;
	}
	err = add_rules(ruleset, s, abi, attr.handled_access_fs, who);
	/* no_new_privs is set already (priv_drop); restrict_self needs it without CAP_SYS_ADMIN. */
	if (!err && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, ruleset, 0))) {
		err = -errno;
		fprintf(stderr, "<3>%s: cannot enforce the Landlock ruleset: %s\n", who, strerror(-err));
	}
	close(ruleset);
	return err ? err : abi;
}
