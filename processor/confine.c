/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-processor's sandbox: the user it becomes, the Landlock rules of
 * each mode and the seccomp allowlists of each mode. What the loop may
 * do after start-up is written here, once.
 */
#include "confine.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <termios.h>

#include "landlock.h"
#include "priv.h"
#include "scfilter.h"

/*
 * What the loop may do after start-up, and nothing more: no open, no
 * socket, no connect, no exec, no kill. read: ring handover socket (EOF),
 * control fd, signalfd; write: report, summary, stderr; mmap family and
 * brk: malloc; futex: ring_wait; fstat: stdio's first write to stderr.
 */
static const char *const processor_syscalls[] = {
	"read", "write", "writev", "close",
	"poll", "ppoll",
	"futex",
	"munmap", "mremap", "brk", "madvise",
	"clock_gettime", "clock_nanosleep",
	"fstat", "newfstatat", "lseek",
	"getpid",
	"rt_sigreturn", "rt_sigprocmask", "restart_syscall",
	"exit", "exit_group",
	NULL,
};

/* Memory may be mapped, never executable: no code can be brought in (MemoryDenyWriteExecute, in the code). */
#define NO_EXEC_MAPPINGS(name)                                           \
	{ name, 2, PROT_EXEC, 0, 0 }, /* allowed without PROT_EXEC */       \
	{ name, 2, PROT_EXEC, PROT_EXEC, EPERM } /* refused, not killed */
static const struct sc_arg_rule processor_arg_syscalls[] = {
	{ "openat", 2, 0, CONFINE_RULES_OPEN_FLAGS, 0 },
	NO_EXEC_MAPPINGS("mmap"),
	{ NULL, 0, 0, 0, 0 },
};

/*
 * Daemon mode with delivery adds: the spool (io_uring, its files: create,
 * fsync, rename, unlink), the upload (sockets to the ingest; libcurl's
 * resolver thread), reconnecting to a new collector (an AF_UNIX socket).
 * Still no exec, no kill, no ptrace, no bpf, no mount.
 */
static const char *const delivery_syscalls[] = {
	"read", "write", "writev", "readv", "pread64", "pwrite64", "close",
	"poll", "ppoll", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"futex", "munmap", "mremap", "brk", "madvise",
	"clock_gettime", "clock_nanosleep", "nanosleep", "gettimeofday",
	"fstat", "newfstatat", "statx", "lseek", "fcntl", "getpid", "gettid", "getuid", "geteuid", "getgid",
	"getegid", "uname", "getrandom", "sysinfo",
	"rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "restart_syscall", "exit", "exit_group",
	/* spool */
	/* io_uring_setup is not here: the spool's ring was made, restricted, before (uring.c) */
	"io_uring_enter", "io_uring_register", "eventfd2",
	"fsync", "fdatasync", "ftruncate", "renameat", "renameat2", "rename", "unlinkat", "unlink", "mkdirat",
	"mkdir", "getdents64",
	/* upload and the collector's socket */
	"connect", "getsockopt", "setsockopt", "getsockname", "getpeername", "sendto", "recvfrom",
	"sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "pipe2", "socketpair",
	/* libcurl's threaded resolver: threads, below */
	"set_robust_list", "rseq", "sched_getaffinity", "sched_yield",
	/* which files: Landlock decides (sandbox_files()); seccomp cannot see paths */
	"openat",
	NULL,
};

static const struct sc_arg_rule delivery_arg_syscalls[] = {
	/* Sockets of three families: the collector's and systemd's (unix), the ingest's (IPv4, IPv6). */
	{ "socket", 0, 0, AF_UNIX, 0 },
	{ "socket", 0, 0, AF_INET, 0 },
	{ "socket", 0, 0, AF_INET6, 0 },
	/* Threads, never processes: clone only with CLONE_THREAD; clone3 hides its flags, so glibc is told
	 * it does not exist and falls back to clone. */
	{ "clone", 0, CLONE_THREAD, CLONE_THREAD, 0 },
	{ "clone3", SC_ANY_ARG, 0, 0, ENOSYS },
	NO_EXEC_MAPPINGS("mmap"),
	NO_EXEC_MAPPINGS("mprotect"),
	/* Non-blocking sockets and bytes waiting; isatty() is told no. */
	{ "ioctl", 1, 0, FIONBIO, 0 },
	{ "ioctl", 1, 0, FIONREAD, 0 },
	{ "ioctl", 1, 0, TCGETS, ENOTTY },
	{ NULL, 0, 0, 0, 0 },
};

/*
 * Become --user before connecting: the collector checks who we are with
 * SO_PEERCRED, which the kernel fixes at connect() time, so a processor
 * that connected as root and dropped afterwards would be refused.
 */
int confine_user(const struct options *o)
{
	uid_t uid;
	gid_t gid;
	int err = priv_lookup_user(o->user, &uid, &gid);

	if (err) {
		fprintf(stderr, "<3>unknown user '%s' for the processor to run as: %s\n", o->user, strerror(-err));
		return -1;
	}
	return priv_drop(uid, gid) ? -1 : 0;
}

/*
 * Landlock: which files the processor may open from now on, and where TCP
 * may go. Delivery: its state directory (read, write, create, remove), the
 * directories of the rules files and TLS files it names (read), the CA
 * store and the resolver's files (read); TCP only to the ports of
 * upload_url's URLs (and an environment proxy's). Run mode: the rules
 * files' directories, no TCP.
 */
static int sandbox_files(const struct options *o)
{
	static const char *const proxy_vars[] = { "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY",
						  "all_proxy", "ALL_PROXY", NULL };
	static const char *const system_reads[] = {
		"/etc/ssl", "/etc/pki", "/usr/share/ca-certificates", "/usr/local/share/ca-certificates", /* CAs */
		"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
		"/etc/services", NULL,
	};
	static char resolv[PATH_MAX];
	struct landlock_spec s = { .nrw = 0 };
	bool ok = landlock_add_ro(&s, o->tool_rules_path, true) && landlock_add_ro(&s, o->redact_rules_path, true);
	int rc;

	if (o->delivery) {
		const struct tracer_config *c = &o->cfg;
		char urls[CONFIG_URL_MAX];
		const char *url[CONFIG_URLS_MAX];
		unsigned nurls = config_url_split(c->upload_url, urls, url);
		uint16_t port;

		ok = ok && landlock_add_rw(&s, c->state_dir) && landlock_add_ro(&s, c->ca_file, true) &&
		     landlock_add_ro(&s, c->client_cert, true) && landlock_add_ro(&s, c->client_key, true);
		for (unsigned i = 0; ok && system_reads[i]; i++)
			ok = landlock_add_ro(&s, system_reads[i], false);
		/* resolv.conf is often a link (systemd-resolved): its target's directory too. */
		if (ok && realpath("/etc/resolv.conf", resolv) && strncmp(resolv, "/etc/", 5) != 0)
			ok = landlock_add_ro(&s, resolv, true);
		for (unsigned i = 0; ok && i < nurls; i++)
			if ((port = config_url_port(url[i], 0)) != 0)
				ok = landlock_add_port(&s, port);
		for (unsigned i = 0; ok && nurls && proxy_vars[i]; i++)
			if (getenv(proxy_vars[i]) && (port = config_url_port(getenv(proxy_vars[i]), 1080)) != 0)
				ok = landlock_add_port(&s, port);
	}
	if (!ok) {
		fprintf(stderr, "<3>too many paths or ports for the Landlock ruleset\n");
		return -1;
	}
	rc = landlock_apply(&s, "tracer-processor");
	return rc < 0 ? -1 : 0;
}

int confine(const struct options *o)
{
	if (sandbox_files(o))
		return -1;
	if (o->delivery)
		return sc_install((const char *const *const[]){ delivery_syscalls, NULL },
				  (const struct sc_arg_rule *const[]){ delivery_arg_syscalls, NULL }, 0, "tracer-processor",
				  "delivery");
	return sc_install((const char *const *const[]){ processor_syscalls, NULL },
			  (const struct sc_arg_rule *const[]){ processor_arg_syscalls, NULL }, 0, "tracer-processor",
			  "processor");
}
