/* SPDX-License-Identifier: Apache-2.0 */
#include "web_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <stdbool.h>

#include "landlock.h"
#include "readfile.h"
#include "scfilter.h"

/*
 * Found by running tracer-web under `strace -f` through tests/test_web_*.c
 * and tests/e2e/test_web.sh and keeping what it calls after start-up;
 * docs/web.md lists the reasons.
 */
static const char *const web_syscalls[] = {
	/* libmicrohttpd: the listening thread (poll, accept) and one thread per connection */
	"poll", "ppoll", "accept4", "recvfrom", "sendto", "sendmsg", "setsockopt", "getsockopt", "getsockname",
	"shutdown", "close",
	/* SQLite on the lake's descriptors, read-only: pages, locks, the -shm map's size */
	"pread64", "fcntl", "newfstatat", "fstat", "lseek",
	/* stderr, the --ready-fd line, the price table; the default table's place (/proc/self/exe) */
	"read", "write", "readlink", "faccessat2", "faccessat", "access",
	/* memory: thread stacks and their guard pages (no PROT_EXEC below), locks */
	"brk", "munmap", "mremap", "madvise", "futex", "set_robust_list", "rseq",
	/* time: the vDSO's fallbacks, the event streams' waits */
	"clock_gettime", "gettimeofday", "clock_nanosleep", "nanosleep",
	/* the main thread's signals, threads ending, the end */
	"rt_sigtimedwait", "rt_sigprocmask", "rt_sigreturn", "restart_syscall", "exit", "exit_group",
	"getpid", "gettid", "sched_yield",
	/* the analysis' hash tables' seeds (view/tune_input.c) */
	"getrandom",
	/* glibc's qsort() sizes its buffer by the machine's memory */
	"sysinfo",
	/* glibc installs its handler for set*id across threads at the first pthread_create */
	"rt_sigaction",
	NULL,
};

/* glibc's pthread_create (2.34+): clone with exactly these flags, after clone3 said ENOSYS. */
#define THREAD_CLONE_FLAGS                                                                           \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SETTLS | \
	 CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

/*
 * Opens read-only (the price table, with common/readfile.h's flags;
 * /proc/sys/vm/overcommit_memory for malloc), and Landlock decides where; no PROT_EXEC mapping; threads only:
 * clone3's flags are in memory seccomp cannot read, so it is answered
 * ENOSYS and glibc falls back to clone.
 */
static const struct sc_arg_rule web_rules[] = {
	{ "openat", 2, 0, O_RDONLY | O_CLOEXEC, 0 },
	{ "openat", 2, 0, READ_OPEN_FLAGS, 0 }, /* the price table, reread per run page (common/readfile.h) */
	{ "mmap", 2, PROT_EXEC, 0, 0 },
	{ "mprotect", 2, PROT_EXEC, 0, 0 },
	{ "prctl", 0, 0, PR_SET_NAME, 0 },
	{ "clone3", -1, 0, 0, ENOSYS },
	{ "clone", 0, 0, THREAD_CLONE_FLAGS, 0 },
	{ NULL, 0, 0, 0, 0 },
};

/* A PostgreSQL lake's connection, made again after the server dropped it (lake/sql.c; docs/lake.md). */
static const char *const lake_net_syscalls[] = { "connect", NULL };

int web_sandbox(const char *lake, const char *prices, int lake_family, uint16_t lake_port)
{
	const struct sc_arg_rule lake_net_rules[] = {
		{ "socket", 0, 0, (uint64_t)lake_family, 0 }, /* a socket of the lake's family only */
		{ NULL, 0, 0, 0, 0 },
	};
	const char *const *names[] = { web_syscalls, lake_family ? lake_net_syscalls : NULL, NULL };
	const struct sc_arg_rule *rules[] = { web_rules, lake_family ? lake_net_rules : NULL, NULL };
	struct landlock_spec spec = { 0 };
	int rc;

	if (lake_family)
		landlock_add_port(&spec, lake_port); /* TCP: its server's port (a Unix socket: no TCP at all) */
	else
		landlock_add_ro(&spec, lake, true);
	if (prices)
		landlock_add_ro(&spec, prices, true);
	rc = landlock_apply(&spec, "tracer-web");
	if (rc < 0)
		return rc;
	return sc_install(names, rules, SC_TSYNC | SC_NNP_SET, "tracer-web", "serving");
}

/* Whether path is the lake's database, or its -wal or -journal file (real: the lake's real path). */
static bool lake_data_file(const char *path, const char *real)
{
	static const char *const suffixes[] = { "", "-wal", "-journal" };
	size_t n = strlen(real);

	if (strncmp(path, real, n))
		return false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(path + n, suffixes[i]))
			return true;
	return false;
}

int web_lake_fds_readonly(const char *lake)
{
	char real[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int rc = 0, self;

	if (!realpath(lake, real)) {
		rc = -errno;
		fprintf(stderr, "<3>%s: %s\n", lake, strerror(errno));
		return rc;
	}
	d = opendir("/proc/self/fd");
	if (!d) {
		rc = -errno;
		fprintf(stderr, "<3>cannot list this process's descriptors (/proc/self/fd): %s\n", strerror(errno));
		return rc;
	}
	self = dirfd(d);
	while (!rc && (e = readdir(d))) {
		char link[64], target[PATH_MAX];
		int fd = atoi(e->d_name), flags, ro;
		ssize_t n;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == self)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY || !lake_data_file(target, real))
			continue;
		ro = open(target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (ro < 0 || dup3(ro, fd, O_CLOEXEC) < 0) {
			rc = -errno;
			fprintf(stderr, "<3>cannot make the descriptor of %s read-only: %s\n", target, strerror(errno));
		}
		if (ro >= 0)
			close(ro);
	}
	closedir(d);
	return rc;
}
