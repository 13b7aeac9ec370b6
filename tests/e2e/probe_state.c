/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe_state [-o FILE]: print the process state this program was started
 * with, one `key value` line per item, for tests/e2e/test_transparency.sh,
 * which runs it directly and under `tracer run` and diffs the two.
 *
 * Everything a parent can hand over through fork and exec is here: signal
 * dispositions, mask and pending set, umask, rlimits, the environment,
 * cwd and root, niceness, scheduling and I/O priority, oom_score_adj,
 * prctl attributes (no_new_privs, pdeathsig, subreaper, securebits, ...),
 * credentials and capabilities, namespaces, cgroup, LSM label, audit ids,
 * the controlling terminal and job control, and every open descriptor with
 * what it points to and its flags.
 *
 * Nothing here depends on the run: no pids, times or addresses. Values that
 * name the same kernel object in two runs (a tty, a pipe inode, a session
 * id) are the same only if the caller hands the same object to both runs,
 * which is what the test does. Keys are unique, so a diff by key names
 * exactly what changed.
 *
 * The descriptors are listed first, before this program opens anything,
 * and the report is built in memory (open_memstream: no descriptor), so
 * the list is what exec handed over. Exit status: 0, or 2 when the report
 * cannot be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#define MAX_FDS 1024
#define IOPRIO_WHO_PROCESS 1 /* linux/ioprio.h, which glibc does not wrap */

extern char **environ;

/* A value on one line: bytes outside printable ASCII (a newline in an environment value) as \xNN. */
static void put_value(FILE *out, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
}

static void kv(FILE *out, const char *key, const char *value)
{
	fprintf(out, "%s ", key);
	put_value(out, value);
	fputc('\n', out);
}

/* A small file on one line (its newlines as ';'); "none (ERRNO)" when it cannot be read. */
static void kv_file(FILE *out, const char *key, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n = 0;

	if (!f) {
		snprintf(buf, sizeof(buf), "none (%s)", strerror(errno));
	} else {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		while (n > 0 && buf[n - 1] == '\n')
			n--;
		buf[n] = 0;
		for (char *nl = strchr(buf, '\n'); nl; nl = strchr(nl, '\n'))
			*nl = ';';
	}
	kv(out, key, buf);
}

static void kv_link(FILE *out, const char *key, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n < 0)
		snprintf(target, sizeof(target), "none (%s)", strerror(errno));
	else
		target[n] = 0;
	kv(out, key, target);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Descriptor numbers from /proc/self/fd, without the directory's own; sorted. */
static int list_fds(int *fds)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < MAX_FDS)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fds[n++] = atoi(e->d_name);
	closedir(d);
	qsort(fds, (size_t)n, sizeof(*fds), cmp_int);
	return n;
}

static void print_fds(FILE *out, const int *fds, int n)
{
	char key[32], path[64], target[PATH_MAX], value[PATH_MAX + 64];

	if (n < 0) {
		kv(out, "fd.count", "unreadable /proc/self/fd");
		return;
	}
	snprintf(value, sizeof(value), "%d%s", n, n == MAX_FDS ? " (the first listed only)" : "");
	kv(out, "fd.count", value);
	for (int i = 0; i < n; i++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		target[len < 0 ? 0 : len] = 0;
		/* flags: access mode, O_APPEND, O_NONBLOCK...: shared with whoever else holds the description */
		snprintf(value, sizeof(value), "%s flags=%#o cloexec=%d", target, (unsigned)fcntl(fds[i], F_GETFL),
			 fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
		snprintf(key, sizeof(key), "fd.%d", fds[i]);
		kv(out, key, value);
	}
}

static void print_signals(FILE *out)
{
	sigset_t blocked, pending;
	char key[48], value[64];

	sigprocmask(SIG_BLOCK, NULL, &blocked);
	sigpending(&pending);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		const char *name = sigabbrev_np(sig);
		const char *disp = "unavailable"; /* glibc's own two (32, 33): it refuses to say */

		if (sigaction(sig, NULL, &sa) == 0)
			disp = sa.sa_handler == SIG_IGN ? "ignored" : sa.sa_handler == SIG_DFL ? "default" : "caught";
		snprintf(key, sizeof(key), "signal.%02d.%s", sig, name ? name : "RT");
		snprintf(value, sizeof(value), "%s%s%s", disp, sigismember(&blocked, sig) ? " blocked" : "",
			 sigismember(&pending, sig) ? " pending" : "");
		kv(out, key, value);
	}
}

static void print_rlimits(FILE *out)
{
	static const struct { int res; const char *name; } limits[] = {
		{ RLIMIT_CPU, "CPU" }, { RLIMIT_FSIZE, "FSIZE" }, { RLIMIT_DATA, "DATA" },
		{ RLIMIT_STACK, "STACK" }, { RLIMIT_CORE, "CORE" }, { RLIMIT_RSS, "RSS" },
		{ RLIMIT_NPROC, "NPROC" }, { RLIMIT_NOFILE, "NOFILE" }, { RLIMIT_MEMLOCK, "MEMLOCK" },
		{ RLIMIT_AS, "AS" }, { RLIMIT_LOCKS, "LOCKS" }, { RLIMIT_SIGPENDING, "SIGPENDING" },
		{ RLIMIT_MSGQUEUE, "MSGQUEUE" }, { RLIMIT_NICE, "NICE" }, { RLIMIT_RTPRIO, "RTPRIO" },
		{ RLIMIT_RTTIME, "RTTIME" },
	};
	_Static_assert(sizeof(limits) / sizeof(limits[0]) == RLIM_NLIMITS, "a new rlimit: name it here");
	char key[32], value[64], soft[24], hard[24];

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct rlimit rl;

		snprintf(key, sizeof(key), "rlimit.%s", limits[i].name);
		if (getrlimit(limits[i].res, &rl)) {
			kv(out, key, strerror(errno));
			continue;
		}
		snprintf(soft, sizeof(soft), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "%llu",
			 (unsigned long long)rl.rlim_cur);
		snprintf(hard, sizeof(hard), rl.rlim_max == RLIM_INFINITY ? "unlimited" : "%llu",
			 (unsigned long long)rl.rlim_max);
		snprintf(value, sizeof(value), "%s %s", soft, hard);
		kv(out, key, value);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per variable, sorted: a difference names the variable. */
static void print_environ(FILE *out)
{
	size_t n = 0;
	char **sorted, key[256];

	while (environ[n])
		n++;
	sorted = calloc(n + 1, sizeof(*sorted));
	if (!sorted) {
		kv(out, "env", "out of memory");
		return;
	}
	memcpy(sorted, environ, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	snprintf(key, sizeof(key), "%zu", n);
	kv(out, "env.count", key);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(sorted[i], '=');
		int len = eq ? (int)(eq - sorted[i]) : (int)strlen(sorted[i]);

		snprintf(key, sizeof(key), "env.%.*s", len > 200 ? 200 : len, sorted[i]);
		kv(out, key, eq ? eq + 1 : "(no =)");
	}
	free(sorted);
}

/* The lines of /proc/self/status that a parent hands down (not the ones about memory use or pids). */
static void print_status(FILE *out)
{
	static const char *const keep[] = { "Umask", "Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp",
					    "Seccomp_filters", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt",
					    "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Speculation_Store_Bypass",
					    "SpeculationIndirectBranch", "Cpus_allowed_list", "Mems_allowed_list" };
	char line[1024], key[64];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		kv(out, "status", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v;

		if (!colon)
			continue;
		*colon = 0;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = 0;
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
			if (!strcmp(line, keep[i])) {
				snprintf(key, sizeof(key), "status.%.48s", keep[i]);
				kv(out, key, v);
			}
	}
	fclose(f);
}

static void kv_long(FILE *out, const char *key, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	kv(out, key, buf);
}

static void print_prctl(FILE *out)
{
	int pdeathsig = -1, subreaper = -1;

	kv_long(out, "prctl.no_new_privs", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	prctl(PR_GET_PDEATHSIG, &pdeathsig, 0, 0, 0);
	kv_long(out, "prctl.pdeathsig", pdeathsig);
	prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0);
	kv_long(out, "prctl.child_subreaper", subreaper);
	kv_long(out, "prctl.dumpable", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	kv_long(out, "prctl.keepcaps", prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
	kv_long(out, "prctl.securebits", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
	kv_long(out, "prctl.timerslack_ns", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	kv_long(out, "prctl.thp_disable", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	kv_long(out, "prctl.speculation_store_bypass",
		prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0));
	kv_long(out, "personality", personality(0xffffffff));
}

static void print_sched(FILE *out)
{
	int prio;

	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	kv_long(out, "nice", errno ? -1000 - errno : prio);
	kv_long(out, "sched.policy", sched_getscheduler(0));
	kv_long(out, "ioprio", syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0));
	kv_file(out, "oom_score_adj", "/proc/self/oom_score_adj");
}

/*
 * Job control: a controlling terminal, this session's, and this process
 * in its foreground process group (so it may read the terminal and ^Z
 * stops it). The session id is the same in two runs from one session.
 */
static void print_terminal(FILE *out)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	struct termios t;
	char buf[128];
	pid_t fg;

	kv(out, "tty.controlling", tty >= 0 ? "yes" : strerror(errno));
	if (tty >= 0) {
		fg = tcgetpgrp(tty);
		kv(out, "tty.foreground", fg == getpgrp() ? "yes" : "no");
		kv_long(out, "tty.session_is_ours", tcgetsid(tty) == getsid(0));
		if (tcgetattr(tty, &t) == 0) {
			snprintf(buf, sizeof(buf), "iflag=%#x oflag=%#x cflag=%#x lflag=%#x", (unsigned)t.c_iflag,
				 (unsigned)t.c_oflag, (unsigned)t.c_cflag, (unsigned)t.c_lflag);
			kv(out, "tty.termios", buf);
		}
		close(tty);
	}
	kv_long(out, "session", (long)getsid(0));
	kv(out, "stdin.ttyname", ttyname(0) ? ttyname(0) : "none");
}

static void print_places(FILE *out)
{
	static const char *const ns[] = { "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time",
					  "time_for_children", "user", "uts" };
	char cwd[PATH_MAX], key[64], path[64];

	kv(out, "cwd", getcwd(cwd, sizeof(cwd)) ? cwd : strerror(errno));
	kv_link(out, "root", "/proc/self/root");
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		snprintf(key, sizeof(key), "ns.%s", ns[i]);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		kv_link(out, key, path);
	}
	kv_file(out, "cgroup", "/proc/self/cgroup");
	kv_file(out, "loginuid", "/proc/self/loginuid");
	kv_file(out, "audit_sessionid", "/proc/self/sessionid");
	kv_file(out, "lsm.label", "/proc/self/attr/current");
}

static int write_report(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "we") : stdout;
	bool ok = f && fwrite(text, 1, len, f) == len;

	if (f && f != stdout)
		ok = fclose(f) == 0 && ok;
	else if (f)
		ok = fflush(f) == 0 && ok;
	if (!ok) {
		fprintf(stderr, "probe_state: cannot write %s: %s\n", path ? path : "to stdout", strerror(errno));
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fds[MAX_FDS], nfds = list_fds(fds); /* first: before we open anything */
	const char *path = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "-o")) {
		path = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: probe_state [-o FILE]\n");
		return 2;
	}
	out = open_memstream(&text, &len);
	if (!out) {
		perror("probe_state: open_memstream");
		return 2;
	}
	print_fds(out, fds, nfds);
	print_signals(out);
	print_rlimits(out);
	print_environ(out);
	print_status(out);
	print_prctl(out);
	print_sched(out);
	print_terminal(out);
	print_places(out);
	if (fclose(out)) {
		perror("probe_state: building the report");
		return 2;
	}
	rc = write_report(path, text, len);
	free(text);
	return rc;
}
