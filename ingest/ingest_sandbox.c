/* SPDX-License-Identifier: Apache-2.0 */
#include "ingest_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "keys.h"
#include "landlock.h"
#include "readfile.h"
#include "scfilter.h"

/*
 * The set was found by running the real ingest under `strace -f` through
 * tests/test_ingest_main.c, tests/test_ingest_http.c, the delivery
 * end-to-end tests (tests/e2e/test_delivery_*.sh, test_ingest_tls.sh) and
 * bench/delivery.sh, and keeping what it calls after start-up;
 * docs/lake.md lists it with the reason for each. Marked "(kept)": not
 * called here, but by this code on other builds or in rarer states, where
 * a kill would be an outage. Everything the lake needs works on
 * descriptors opened before the sandbox (the database, its -wal and -shm
 * files, the listening socket); TLS works on the PEM text read before it.
 */
static const char *const serving_syscalls[] = {
	/* libmicrohttpd's thread: the connections (epoll, accept, receive, reply, close) */
	"epoll_wait", "epoll_ctl", "accept4", "recvfrom", "sendto", "sendmsg", "setsockopt", "shutdown",
	/* SQLite on the lake's descriptors: pages, durable commits, locks, the WAL trimmed and,
	 * at a clean stop, the -wal and -shm files removed; fsync (kept): SQLite without fdatasync;
	 * fstat (kept): glibc before 2.33 */
	"pread64", "pwrite64", "fdatasync", "fsync", "ftruncate", "fcntl", "newfstatat", "fstat", "unlink",
	/* the keys file on SIGHUP, stderr, the --ready-fd line, systemd's notify socket (connected before) */
	"read", "write", "close",
	/* memory (mmap and mprotect below), locks */
	"brk", "munmap", "mremap", "madvise", "futex",
	/* TLS (--tls-cert): GnuTLS's random generator, seeded and reseeded from the kernel (keys, nonces) */
	"getrandom",
	/* glibc's qsort() sizes its buffer by the machine's memory: a batch's seqs the stream may hold, sorted
	 * (lake/store.c, known_seqs; more than 128 of them) */
	"sysinfo",
	/* time: the vDSO's fallbacks (kept), SQLite's busy wait; nanosleep (kept): glibc's older usleep */
	"clock_gettime", "gettimeofday", "clock_nanosleep", "nanosleep",
	/* the main thread's signals, and the end; rt_sigreturn and restart_syscall (kept): a handler of
	 * glibc's, a sleep resumed after SIGSTOP */
	"rt_sigtimedwait", "rt_sigprocmask", "rt_sigreturn", "restart_syscall", "exit", "exit_group",
	/* libmicrohttpd's thread's own first calls (its name: prctl below), which it may still be making
	 * when the serving filter arrives: nothing tells when it is done */
	"set_robust_list", "rseq",
	NULL,
};

/* Starting libmicrohttpd's one thread (MHD_start_daemon): its epoll set and socket checks, the thread itself. */
static const char *const startup_syscalls[] = {
	"epoll_create1", "getsockopt", "getsockname",
	"rt_sigaction",                /* glibc's handler for set*id across threads, at the first pthread_create */
	"seccomp",                     /* installing the serving filter (a filter can only take away) */
	NULL,
};

/*
 * Read-only opens only: the keys file (common/readfile.h's flags exactly), and
 * O_RDONLY | O_CLOEXEC, which SQLite uses to fsync the lake's directory
 * after it creates a -wal file, and glibc's malloc to read
 * /proc/sys/vm/overcommit_memory once. Nothing can be created, truncated
 * or written through openat; which files can be read is up to the user
 * the ingest runs as. No PROT_EXEC mappings: nothing is loaded after
 * start-up.
 */
static const struct sc_arg_rule serving_rules[] = {
	{ "openat", 2, 0, READ_OPEN_FLAGS, 0 }, /* the keys file, reread on SIGHUP */
	{ "openat", 2, 0, O_RDONLY | O_CLOEXEC, 0 },
	{ "mmap", 2, PROT_EXEC, 0, 0 },
	{ "mprotect", 2, PROT_EXEC, 0, 0 },
	{ "prctl", 0, 0, PR_SET_NAME, 0 }, /* libmicrohttpd names its thread, as it starts */
	{ NULL, 0, 0, 0, 0 },
};

/* glibc's pthread_create (2.34+): clone with exactly these flags, after clone3 said ENOSYS. */
#define THREAD_CLONE_FLAGS                                                                           \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SETTLS | \
	 CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

/*
 * clone3 takes its flags in memory, which seccomp cannot read: it is
 * answered ENOSYS, and glibc falls back to clone, whose flags it can.
 * Only a thread, then: no process, no namespace.
 */
static const struct sc_arg_rule startup_rules[] = {
	{ "clone3", -1, 0, 0, ENOSYS },
	{ "clone", 0, 0, THREAD_CLONE_FLAGS, 0 },
	{ NULL, 0, 0, 0, 0 },
};

/*
 * A PostgreSQL lake's connection, made again after the server dropped it
 * (lake/sql.c): libpq's socket, its non-blocking connect and the checks
 * after it, its waits (poll). Sending and receiving are serving's.
 */
static const char *const lake_net_syscalls[] = {
	"connect", "poll", "getsockopt", "getsockname",
	NULL,
};

/* One filter: kill the process on anything not listed; on every thread of the process (TSYNC). */
static int install(bool startup, const struct ingest_lake_net *net)
{
	/* libpq's socket: a stream socket of the lake's family (its type's flags as it sets them) */
	const struct sc_arg_rule lake_net_rules[] = {
		{ "socket", 0, 0, (uint64_t)net->family, 0 },
		{ NULL, 0, 0, 0, 0 },
	};
	const char *const *names[4] = { serving_syscalls };
	const struct sc_arg_rule *rules[4] = { serving_rules };
	unsigned n = 1;

	if (net->family) {
		names[n] = lake_net_syscalls;
		rules[n++] = lake_net_rules;
	}
	if (startup) {
		names[n] = startup_syscalls;
		rules[n] = startup_rules;
	}
	return sc_install(names, rules, SC_TSYNC | SC_NNP_SET, "tracer-ingest", startup ? "start-up" : "serving");
}

/* TCP: connect() to the lake's port only, bind() nothing (its listening socket is bound already). */
static int confine_tcp(const struct ingest_lake_net *net)
{
	struct landlock_spec spec = { .net_only = true };
	int abi;

	if ((net->family == AF_INET || net->family == AF_INET6) && !landlock_add_port(&spec, net->port))
		return -EINVAL;
	abi = landlock_apply(&spec, "tracer-ingest");
	if (abi == 0)
		fprintf(stderr, "<4>tracer-ingest: this kernel's Landlock cannot confine TCP (ABI 4, Linux 6.7): "
				"connections are confined by seccomp alone\n");
	return abi < 0 ? -EPERM : 0;
}

int sandbox_ingest_startup(const struct ingest_lake_net *net)
{
	int rc = confine_tcp(net);

	return rc ? rc : install(true, net);
}

int sandbox_ingest_serving(const struct ingest_lake_net *net)
{
	return install(false, net);
}
