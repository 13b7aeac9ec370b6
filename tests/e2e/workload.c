/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workload: real processes for the end-to-end tests of `tracer run`.
 *
 * Each subcommand does one thing the report must describe, and the parent
 * that waits for it prints the kernel's own view (wait4() rusage, the wait
 * status, /proc/PID/io of the zombie) as `key value...` lines on stdout,
 * so tests/e2e/check.py can compare the report against the kernel rather
 * than against guesses.
 *
 *   storm N [PAR]        PAR workers (default 2) spawn N children `exit K`
 *                        (K = i % 256) as fast as they can and reap them
 *   exit CODE            exit with CODE
 *   signal SIG [COREDIR] die of SIG: without COREDIR core dumps are off
 *                        (RLIMIT_CORE 0, not dumpable); with it, allowed
 *                        into COREDIR (the cwd, for a relative core_pattern)
 *   measure SUB ARGS...  run `workload SUB ARGS...` as a child and print its
 *                        wait status, rusage and final /proc/PID/io
 *   burn MS [THREADS]    spin for MS ms of CPU time in each of THREADS threads
 *                        (default 1); the workers end before the main thread
 *   touch MIB            touch MIB MiB of anonymous memory, hold it briefly
 *   hwm MIB MS           touch MIB MiB, hold it MS ms, print `vmhwm PID KIB`:
 *                        its own VmHWM, read just before it exits
 *   write MIB FILE       write MIB MiB of non-zero bytes to FILE, fsync
 *   read FILE            drop FILE's cached pages, then read it fully
 *   hog MIB              touch memory 1 MiB at a time, up to MIB (exit 3
 *                        if nobody killed it by then)
 *   orphan DIR           parent -> child -> grandchild; the child exits
 *                        first, so the grandchild is re-parented; it exits
 *                        0.3 s later after writing DIR/orphan-done
 *
 * Exit status: the subcommand's, or 2 for a usage or setup error (with a
 * message on stderr). Output lines are flushed as they are printed, so a
 * process that then dies of a signal loses none.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_SETUP 2
#define EXIT_HOG_SURVIVED 3
#define ORPHAN_CHILD_EXIT 5
#define ORPHAN_GRANDCHILD_EXIT 7
#define MIB (1024UL * 1024UL)
#define STORM_INFLIGHT 32 /* children per worker alive at once */

extern char **environ;

static char self_exe[PATH_MAX];

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("workload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static long parse_long(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		die("%s: '%s' is not a number in [%ld, %ld]", what, s, min, max);
	return v;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + (uint64_t)tv->tv_usec * 1000ULL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts_ns(&ts);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- storm ------------------------------------------------------------ */

struct storm_child {
	pid_t pid;
	pid_t parent;
	int status;  /* raw wait status */
	int expect;  /* the exit code it was told to use */
};

/* `self exit K` with posix_spawn (clone(CLONE_VM|CLONE_VFORK) + execve): the fastest fork+exec. */
static pid_t storm_spawn(int code)
{
	char a_exit[] = "exit", a_code[16];
	char *argv[] = { self_exe, a_exit, a_code, NULL };
	pid_t pid;
	int err;

	snprintf(a_code, sizeof(a_code), "%d", code);
	err = posix_spawn(&pid, self_exe, NULL, NULL, argv, environ);
	if (err)
		die("storm: posix_spawn: %s", strerror(err));
	return pid;
}

/* One worker: spawn children first..last-1 (STORM_INFLIGHT at a time), reap each, record it. */
static void storm_worker(struct storm_child *tab, long first, long last)
{
	long next = first, done = 0, total = last - first;
	long inflight = 0;
	pid_t me = getpid();

	while (done < total) {
		int st;
		pid_t w;

		while (inflight < STORM_INFLIGHT && next < last) {
			tab[next].expect = (int)(next % 256);
			tab[next].parent = me;
			tab[next].pid = storm_spawn(tab[next].expect);
			next++;
			inflight++;
		}
		w = waitpid(-1, &st, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("storm: waitpid: %s", strerror(errno));
		}
		for (long i = first; i < next; i++)
			if (tab[i].pid == w && tab[i].status == -1) {
				tab[i].status = st;
				break;
			}
		inflight--;
		done++;
	}
	_exit(0);
}

static int cmd_storm(int argc, char **argv)
{
	long n, par;
	struct storm_child *tab;
	size_t size;
	int bad = 0;
	pid_t *workers;

	if (argc < 1)
		die("usage: storm N [PAR]");
	n = parse_long(argv[0], 1, 1000000, "storm N");
	par = argc > 1 ? parse_long(argv[1], 1, 64, "storm PAR") : 2;
	size = (size_t)n * sizeof(*tab);
	/* Shared with the workers, so the top prints every line once, unmixed. */
	tab = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	workers = calloc((size_t)par, sizeof(*workers));
	if (tab == MAP_FAILED || !workers)
		die("storm: out of memory");
	for (long i = 0; i < n; i++)
		tab[i].status = -1;
	out("storm_top %d\n", (int)getpid());
	for (long w = 0; w < par; w++) {
		workers[w] = fork();
		if (workers[w] < 0)
			die("storm: fork: %s", strerror(errno));
		if (workers[w] == 0)
			storm_worker(tab, n * w / par, n * (w + 1) / par);
	}
	for (long w = 0; w < par; w++) {
		int st;

		if (waitpid(workers[w], &st, 0) != workers[w] || !WIFEXITED(st) || WEXITSTATUS(st))
			die("storm: worker %d failed (status %#x)", (int)workers[w], st);
		out("storm_parent %d\n", (int)workers[w]);
	}
	for (long i = 0; i < n; i++) {
		const struct storm_child *c = &tab[i];

		if (c->status == -1 || !WIFEXITED(c->status) || WEXITSTATUS(c->status) != c->expect) {
			fprintf(stderr, "workload: storm child %d: wait status %#x, expected exit %d\n", (int)c->pid,
				c->status, c->expect);
			bad = 1;
		}
		printf("child %d %d %d\n", (int)c->pid, (int)c->parent, WEXITSTATUS(c->status));
	}
	out("children %ld\n", n);
	return bad ? EXIT_SETUP : 0;
}

/* ---- exit and signal ------------------------------------------------- */

static int cmd_exit(int argc, char **argv)
{
	if (argc < 1)
		die("usage: exit CODE");
	return (int)parse_long(argv[0], 0, 255, "exit CODE");
}

static int cmd_signal(int argc, char **argv)
{
	struct rlimit rl = { 0, 0 };
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t set;
	int sig;

	if (argc < 1)
		die("usage: signal SIG [COREDIR]");
	sig = (int)parse_long(argv[0], 1, SIGRTMAX, "signal SIG");
	if (argc > 1) {
		/* Cores allowed: into COREDIR, the cwd a relative core_pattern resolves against. */
		if (chdir(argv[1]))
			die("signal: chdir %s: %s", argv[1], strerror(errno));
		rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
		if (setrlimit(RLIMIT_CORE, &rl)) {
			getrlimit(RLIMIT_CORE, &rl);
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_CORE, &rl);
		}
		prctl(PR_SET_DUMPABLE, 1);
	} else {
		/*
		 * No core: RLIMIT_CORE 0 is not enough when core_pattern is a pipe
		 * (the helper still runs); a non-dumpable process dumps nothing.
		 */
		if (setrlimit(RLIMIT_CORE, &rl) || prctl(PR_SET_DUMPABLE, 0))
			die("signal: cannot disable core dumps: %s", strerror(errno));
	}
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	die("signal: still alive after raising signal %d", sig);
}

/* ---- measure ----------------------------------------------------------- */

/* Print the zombie's /proc/PID/io as io_<key> lines: the kernel's final I/O totals for it. */
static void print_zombie_io(pid_t pid)
{
	char path[64], key[64];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "workload: measure: %s: %s (no I/O view)\n", path, strerror(errno));
		return;
	}
	while (fscanf(f, "%63[^:]: %llu\n", key, &v) == 2)
		out("io_%s %llu\n", key, v);
	fclose(f);
}

static int cmd_measure(int argc, char **argv)
{
	struct rusage ru;
	siginfo_t si;
	char **args;
	pid_t pid;
	int st;

	if (argc < 1)
		die("usage: measure SUBCMD [ARGS...]");
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		die("measure: out of memory");
	args[0] = self_exe;
	for (int i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	out("measure_parent %d\n", (int)getpid());
	pid = fork();
	if (pid < 0)
		die("measure: fork: %s", strerror(errno));
	if (pid == 0) {
		execv(self_exe, args);
		fprintf(stderr, "workload: measure: exec %s: %s\n", self_exe, strerror(errno));
		_exit(127);
	}
	out("child %d\n", (int)pid);
	/* Wait without reaping: the zombie's /proc/PID/io holds its final counters. */
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT))
		if (errno != EINTR)
			die("measure: waitid: %s", strerror(errno));
	print_zombie_io(pid);
	while (wait4(pid, &st, 0, &ru) != pid)
		if (errno != EINTR)
			die("measure: wait4: %s", strerror(errno));
	out("status %d\n", st);
	if (WIFEXITED(st))
		out("exit_code %d\nsignal 0\n", WEXITSTATUS(st));
	else
		out("exit_code null\nsignal %d\n", WTERMSIG(st));
	out("core_dumped %d\n", WIFSIGNALED(st) && WCOREDUMP(st) ? 1 : 0);
	out("utime_ns %llu\nstime_ns %llu\nmaxrss_kb %ld\n", (unsigned long long)tv_ns(&ru.ru_utime),
	    (unsigned long long)tv_ns(&ru.ru_stime), ru.ru_maxrss);
	free(args);
	return 0;
}

/* ---- resource users --------------------------------------------------- */

/* This thread's run-queue wait so far: the 2nd field of /proc/thread-self/schedstat (the kernel's own). */
static uint64_t thread_run_delay_ns(void)
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &delay) != 2)
			delay = 0;
		fclose(f);
	}
	return delay;
}

struct burner {
	uint64_t want_ns;
	uint64_t run_delay_ns; /* its schedstat run delay, read just before it ends */
};

/* Spin until this thread has used want ns of CPU time (its own clock, not the process's). */
static void *burn_thread(void *arg)
{
	struct burner *b = arg;
	struct timespec ts;
	uint64_t start, now;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = ts_ns(&ts);
	do {
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts_ns(&ts);
	} while (now - start < b->want_ns);
	b->run_delay_ns = thread_run_delay_ns();
	return NULL;
}

/*
 * burn MS [THREADS]: every thread spins MS ms of its own CPU time; the
 * THREADS - 1 workers are joined (they end before the main thread, as a
 * multi-threaded tool's workers do), then the main thread burns its share.
 * Prints burn_run_delay_ns: every thread's run-queue wait as the kernel
 * counted it (schedstat), each read by the thread just before it ended.
 */
static int cmd_burn(int argc, char **argv)
{
	struct burner b[64];
	pthread_t tids[64];
	uint64_t start = cpu_ns(), want, delay = 0;
	long threads = 1;

	if (argc < 1)
		die("usage: burn MS [THREADS]");
	want = (uint64_t)parse_long(argv[0], 1, 3600000, "burn MS") * 1000000ULL;
	if (argc > 1)
		threads = parse_long(argv[1], 1, 64, "burn THREADS");
	for (long i = 0; i < threads; i++)
		b[i] = (struct burner){ .want_ns = want };
	for (long i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, burn_thread, &b[i]))
			die("burn: pthread_create failed");
	for (long i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	burn_thread(&b[0]);
	for (long i = 0; i < threads; i++)
		delay += b[i].run_delay_ns;
	out("burn_cpu_ns %llu\nburn_run_delay_ns %llu\n", (unsigned long long)(cpu_ns() - start),
	    (unsigned long long)delay);
	return 0;
}

/* Map and touch size bytes; they stay mapped (and resident) until the process exits. */
static void map_touched(size_t size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", size, strerror(errno));
	memset(p, 0x5a, size);
}

static int cmd_touch(int argc, char **argv)
{
	size_t size;

	if (argc < 1)
		die("usage: touch MIB");
	size = (size_t)parse_long(argv[0], 1, 1 << 20, "touch MIB") * MIB;
	map_touched(size);
	out("touched_bytes %zu\n", size);
	sleep_ms(100);
	return 0;
}

/* This image's peak resident set as the kernel shows it (VmHWM), in KiB; -1 if unreadable. */
static long own_vmhwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int cmd_hwm(int argc, char **argv)
{
	size_t size;
	long ms;

	if (argc < 2)
		die("usage: hwm MIB MS");
	size = (size_t)parse_long(argv[0], 0, 1 << 20, "hwm MIB") * MIB;
	ms = parse_long(argv[1], 0, 3600000, "hwm MS");
	if (size)
		map_touched(size);
	sleep_ms(ms);
	out("vmhwm %d %ld\n", (int)getpid(), own_vmhwm_kib());
	return 0;
}

static int cmd_write(int argc, char **argv)
{
	size_t chunk = MIB, total;
	char *buf;
	int fd;

	if (argc < 2)
		die("usage: write MIB FILE");
	total = (size_t)parse_long(argv[0], 1, 1 << 20, "write MIB") * MIB;
	buf = malloc(chunk);
	if (!buf)
		die("write: out of memory");
	memset(buf, 0xa5, chunk);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("write: open %s: %s", argv[1], strerror(errno));
	for (size_t done = 0; done < total;) {
		ssize_t n = write(fd, buf, chunk);

		if (n <= 0)
			die("write: %s: %s", argv[1], n ? strerror(errno) : "short write");
		done += (size_t)n;
	}
	if (fsync(fd))
		die("write: fsync %s: %s", argv[1], strerror(errno));
	/* Clean now: drop the cached pages, so a later read goes to the disk. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	free(buf);
	out("written_bytes %zu\n", total);
	return 0;
}

static int cmd_read(int argc, char **argv)
{
	size_t total = 0;
	char *buf;
	ssize_t n;
	int fd;

	if (argc < 1)
		die("usage: read FILE");
	buf = malloc(MIB);
	if (!buf)
		die("read: out of memory");
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("read: open %s: %s", argv[0], strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* so the storage read is real, if the pages are clean */
	while ((n = read(fd, buf, MIB)) > 0)
		total += (size_t)n;
	if (n < 0)
		die("read: %s: %s", argv[0], strerror(errno));
	close(fd);
	free(buf);
	out("read_total %zu\n", total);
	return 0;
}

static int cmd_hog(int argc, char **argv)
{
	long max;

	if (argc < 1)
		die("usage: hog MIB");
	max = parse_long(argv[0], 1, 1 << 20, "hog MIB");
	out("hog_pid %d\n", (int)getpid());
	for (long i = 1; i <= max; i++)
		map_touched(MIB);
	fprintf(stderr, "workload: hog: touched %ld MiB and nobody killed it\n", max);
	return EXIT_HOG_SURVIVED;
}

/* ---- orphan ------------------------------------------------------------ */

/* The grandchild: outlive the child, be re-parented, leave a mark, exit. */
static void orphan_grandchild(pid_t child, const char *dir)
{
	char path[PATH_MAX];
	FILE *f;
	int waited = 0;

	while (getppid() == child && waited++ < 10000)
		sleep_ms(1);
	sleep_ms(300);
	snprintf(path, sizeof(path), "%s/orphan-done", dir);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "grandchild %d reparented_to %d\n", (int)getpid(), (int)getppid());
		fclose(f);
	}
	_exit(ORPHAN_GRANDCHILD_EXIT);
}

static int cmd_orphan(int argc, char **argv)
{
	pid_t child, grandchild = 0;
	int p[2], st;

	if (argc < 1)
		die("usage: orphan DIR");
	if (pipe(p))
		die("orphan: pipe: %s", strerror(errno));
	out("orphan_parent %d\n", (int)getpid());
	child = fork();
	if (child < 0)
		die("orphan: fork: %s", strerror(errno));
	if (child == 0) {
		pid_t me = getpid(), g;

		close(p[0]);
		g = fork();
		if (g < 0)
			_exit(EXIT_SETUP);
		if (g == 0) {
			close(p[1]);
			orphan_grandchild(me, argv[0]);
		}
		if (write(p[1], &g, sizeof(g)) != sizeof(g))
			_exit(EXIT_SETUP);
		_exit(ORPHAN_CHILD_EXIT);
	}
	close(p[1]);
	if (read(p[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		die("orphan: the child did not report its child");
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != ORPHAN_CHILD_EXIT)
		die("orphan: child %d: status %#x", (int)child, st);
	out("orphan_child %d %d\norphan_grandchild %d %d\n", (int)child, ORPHAN_CHILD_EXIT, (int)grandchild,
	    ORPHAN_GRANDCHILD_EXIT);
	return 0; /* without waiting for the grandchild: that is tracer's job */
}

/* ---- main -------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "storm", cmd_storm },   { "exit", cmd_exit },   { "signal", cmd_signal }, { "measure", cmd_measure },
	{ "burn", cmd_burn },     { "touch", cmd_touch }, { "write", cmd_write },   { "read", cmd_read },
	{ "hog", cmd_hog },       { "orphan", cmd_orphan }, { "hwm", cmd_hwm },
};

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	if (n <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self_exe[n] = 0;
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "usage: workload storm|exit|signal|measure|burn|touch|write|read|hog|orphan|hwm ARGS...\n"
			"(see the comment at the top of tests/e2e/workload.c)\n");
	return EXIT_SETUP;
}
