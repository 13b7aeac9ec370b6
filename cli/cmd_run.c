/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `tracer run [--json FILE] [--html FILE] -- CMD [ARGS...]`
 *
 * Process layout while a command runs:
 *
 *   tracer (root)
 *   ├── tracer-collector   own process group; root while loading BPF, then uid 65533
 *   ├── tracer-processor   own process group; nobody, no capabilities
 *   └── reaper             child subreaper: orphans of CMD come back to it
 *       └── CMD            as the sudo user; waits for "go" before exec
 *
 * The reaper waits for CMD and every orphan it inherits, so when it
 * reports, the whole tree is gone and every exit is already in the kernel's
 * ring buffer. Then the collector is stopped (it drains and writes an end
 * record), the processor writes the report, and tracer exits with CMD's
 * status (128 + signal when it was killed). tracer's own failures exit 125.
 *
 * CMD starts in the process state tracer inherited (docs/architecture.md,
 * "Transparency"): what tracer changes for itself (signal dispositions) is
 * recorded first and put back between fork and exec; everything else that
 * exec hands down (umask, cwd, nice, oom_score_adj, environment, terminal
 * and process group, capabilities, descriptors but our O_CLOEXEC ones)
 * tracer never changes in itself or the reaper.
 */
#include "cmd_run.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "html.h"
#include "parse.h"
#include "readfile.h"

#define EXIT_TRACER 125          /* tracer itself failed */
#define READY_TIMEOUT_MS 30000
#define STOP_TIMEOUT_MS 30000 /* SIGTERM to "stopped": a drain of the kernel buffer, then the end record */
#define PROCESSOR_USER "nobody"  /* must differ from the collector's uid (65533) */

/*
 * What tracer inherited, recorded before it changes anything, for CMD.
 * exec keeps ignored signals ignored and the mask as it is, so tracer's own
 * choices would otherwise reach CMD (a SIGPIPE it ignores made `yes | head`
 * fail). Handlers need no record: exec resets them, so at our start every
 * signal is either ignored or default. rlimits: tracer changes none today;
 * restoring them keeps that true for CMD whatever a later change does.
 */
struct inherited {
	sigset_t ignored;
	sigset_t mask;
	struct rlimit limits[RLIM_NLIMITS];
};

struct run {
	const char *json_path;
	const char *html_path;     /* --html: the report as one self-contained page (docs/html.md) */
	char **cmd;
	char dir[64];            /* private runtime directory */
	char sock[128];
	char bindir[PATH_MAX];
	uid_t user_uid;          /* who CMD runs as */
	gid_t user_gid;
	const char *user_name;
	uid_t proc_uid;
	uint64_t start_ns;       /* CLOCK_REALTIME before anything of the run existed */
	pid_t reaper, cmd_pid, collector, processor;
	int collector_status_r;  /* the collector's "ready", later its "stopped CPU_NS MAXRSS_KIB" */
	int go_w;                /* write "g" to let CMD exec */
	int status_r;            /* the reaper's report: CMD's raw wait status */
	int control_w;           /* to the processor: the end line */
	int report_fd, summary_fd;
	const char *stall_after;   /* passed to the processor as given (validated here) */
	const char *io_wait_after;
	const char *net_wait_after;
	const char *max_processes;
	const char *tool_rules;
	const char *redact_rules;
	const char *config;        /* --config: also deliver the run to the lake (tracer.conf's upload_url) */
	const char *sets[16];      /* --set KEY=VALUE, for the processor */
	int nsets;
	struct inherited inherited; /* what CMD gets back */
};

/* Seconds for a message: "300", "2.5". */
static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void usage(FILE *f)
{
	uint64_t stall = 0, io = 0, net = 0, procs = 0;

	/* The processor's defaults are tracer.conf's (common/config.c): said here as it will apply them. */
	config_key_number("stall_after", &stall, NULL, NULL);
	config_key_number("io_wait_after", &io, NULL, NULL);
	config_key_number("net_wait_after", &net, NULL, NULL);
	config_key_number("max_processes", &procs, NULL, NULL);
	fprintf(f, "usage: tracer run [--json FILE] [--html FILE] [--stall-after S] [--io-wait-after S]\n"
		   "                  [--net-wait-after S] -- CMD [ARGS...]\n"
		   "Runs CMD (as the sudo user when started through sudo), traces it and every\n"
		   "process it starts, prints a summary and exits with CMD's status.\n"
		   "  --json FILE          write the run report (schema tracer.run.v1) to FILE\n"
		   "  --html FILE          write the run report as one self-contained HTML page to FILE\n"
		   "  --stall-after S      a live process with no CPU and no I/O progress for S seconds\n"
		   "                       is reported stalled (default %.9g)\n"
		   "  --io-wait-after S    report processes that waited S seconds or more for I/O (default %.9g)\n"
		   "  --net-wait-after S   ... or spent S seconds or more in network calls (default %.9g)\n"
		   "  --max-processes N    processes the report can hold (default %llu; more are counted\n"
		   "                       in agent.table_full); about 600 bytes each\n"
		   "  --tool-rules FILE    name tools with these rules too (docs/processor.md, \"Tool rules\")\n"
		   "  --redact-rules FILE  redact these options too (docs/processor.md, \"Redaction\");\n"
		   "                       both files must be readable by the user 'nobody'\n"
		   "  --config FILE        also send the run to the lake: its records and its report are\n"
		   "                       spooled in state_dir and uploaded to upload_url (docs/config.md)\n"
		   "  --set KEY=VALUE      override one key of that config (repeatable)\n",
		   seconds(stall), seconds(io), seconds(net), (unsigned long long)procs);
}

/*
 * Seconds as the processor takes them (common/parse.h: digits, optionally
 * a point and up to 9 more), within the bounds of tracer.conf's key for
 * the same setting. Checked here, passed on as given.
 */
static const char *seconds_arg(const char *opt, const char *key, const char *v, bool zero_ok)
{
	uint64_t ns = 0, max = 0;
	bool ok = config_key_number(key, NULL, NULL, &max) == 0 && parse_duration(v, 0, &ns) == PARSE_OK &&
		  ns <= max && (zero_ok || ns > 0);

	if (!ok)
		fprintf(stderr, "tracer run: %s wants a number of seconds such as 60 or 2.5%s, not '%s'\n", opt,
			zero_ok ? " (0 turns it off)" : "", v);
	return ok ? v : NULL;
}

/* tracer.conf's max_processes bounds: what the processor's table takes. 0, or -1 with a message. */
static int max_processes_arg(const char *v)
{
	uint64_t n = 0, min = 0, max = 0;

	if (config_key_number("max_processes", NULL, &min, &max) == 0 && parse_u64(v, max, &n) == PARSE_OK && n >= min)
		return 0;
	fprintf(stderr, "tracer run: --max-processes wants a number from %llu to %llu, not '%s'\n",
		(unsigned long long)min, (unsigned long long)max, v);
	return -1;
}

static int parse_args(int argc, char **argv, struct run *r)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "stall-after", required_argument, NULL, 's' },
		{ "io-wait-after", required_argument, NULL, 'i' },
		{ "net-wait-after", required_argument, NULL, 'n' },
		{ "max-processes", required_argument, NULL, 'm' },
		{ "tool-rules", required_argument, NULL, 'T' },
		{ "redact-rules", required_argument, NULL, 'X' },
		{ "config", required_argument, NULL, 'C' },
		{ "set", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': r->json_path = optarg; break;
		case 'H': r->html_path = optarg; break;
		case 's':
			if (!(r->stall_after = seconds_arg("--stall-after", "stall_after", optarg, false)))
				return -1;
			break;
		case 'i':
			if (!(r->io_wait_after = seconds_arg("--io-wait-after", "io_wait_after", optarg, true)))
				return -1;
			break;
		case 'n':
			if (!(r->net_wait_after = seconds_arg("--net-wait-after", "net_wait_after", optarg, true)))
				return -1;
			break;
		case 'm':
			if (max_processes_arg(optarg))
				return -1;
			r->max_processes = optarg;
			break;
		case 'T': r->tool_rules = optarg; break;
		case 'X': r->redact_rules = optarg; break;
		case 'C': r->config = optarg; break;
		case 'E':
			if (r->nsets == (int)(sizeof(r->sets) / sizeof(r->sets[0])) || !strchr(optarg, '=')) {
				fprintf(stderr, "tracer run: --set wants KEY=VALUE (at most 16 of them)\n");
				return -1;
			}
			r->sets[r->nsets++] = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tracer run: no command given\n");
		usage(stderr);
		return -1;
	}
	r->cmd = argv + optind;
	return 0;
}

/* CMD runs as the user who called sudo, else as whoever we are. */
static int resolve_users(struct run *r)
{
	const char *sudo_uid = getenv("SUDO_UID"), *sudo_gid = getenv("SUDO_GID");
	struct passwd *pw;

	r->user_uid = getuid();
	r->user_gid = getgid();
	if (sudo_uid && sudo_gid) {
		r->user_uid = (uid_t)strtoul(sudo_uid, NULL, 10);
		r->user_gid = (gid_t)strtoul(sudo_gid, NULL, 10);
	}
	pw = getpwuid(r->user_uid);
	r->user_name = pw ? strdup(pw->pw_name) : NULL;
	pw = getpwnam(PROCESSOR_USER);
	if (!pw) {
		fprintf(stderr, "tracer: no user '%s' to run the processor as: create it\n", PROCESSOR_USER);
		return -1;
	}
	r->proc_uid = pw->pw_uid;
	return 0;
}

static int find_binaries(struct run *r)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	snprintf(r->bindir, sizeof(r->bindir), "%s", self);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->bindir, i ? "tracer-processor" : "tracer-collector");
		if (access(path, X_OK)) {
			fprintf(stderr, "tracer: cannot find %s (%s): build it with 'make', or install tracer\n", path,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* An unlinked file in the runtime directory for the processor to write into. */
static int scratch_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		fprintf(stderr, "tracer: cannot create a temporary file in %s: %s\n", dir, strerror(errno));
	return fd;
}

static int setup_dir(struct run *r)
{
	snprintf(r->dir, sizeof(r->dir), "%s", "/tmp/tracer-run.XXXXXX");
	if (!mkdtemp(r->dir) || chmod(r->dir, 0711)) { /* the processor must reach the socket */
		fprintf(stderr, "tracer: cannot create a runtime directory in /tmp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(r->sock, sizeof(r->sock), "%s/collector.sock", r->dir);
	r->report_fd = scratch_file(r->dir);
	r->summary_fd = scratch_file(r->dir);
	return r->report_fd < 0 || r->summary_fd < 0 ? -1 : 0;
}

/*
 * Every signal 1..NSIG-1 but glibc's own two (32 and 33: it refuses to
 * show or change them, with EINVAL) and SIGKILL/SIGSTOP (never ignored).
 */
static void record_inherited(struct inherited *in)
{
	sigemptyset(&in->ignored);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(&in->ignored, sig);
	}
	sigprocmask(SIG_SETMASK, NULL, &in->mask);
	for (int i = 0; i < RLIM_NLIMITS; i++)
		getrlimit(i, &in->limits[i]);
}

/* In CMD, before it becomes the user: raising a hard limit back up needs CAP_SYS_RESOURCE. */
static int restore_inherited(const struct inherited *in)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa = { .sa_handler = sigismember(&in->ignored, sig) == 1 ? SIG_IGN : SIG_DFL };

		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, &sa, NULL) && errno != EINVAL) {
			fprintf(stderr, "tracer: cannot restore the handling of signal %d: %s\n", sig, strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (setrlimit(i, &in->limits[i])) {
			fprintf(stderr, "tracer: cannot restore resource limit %d: %s\n", i, strerror(errno));
			return -1;
		}
	/* Last: a signal blocked until now is delivered as it would be right after exec. */
	return sigprocmask(SIG_SETMASK, &in->mask, NULL);
}

static void keep_fd(int fd)
{
	fcntl(fd, F_SETFD, 0); /* inherited by the exec that follows */
}

/* The command: wait for "go", become the user, exec. Never returns. */
static void exec_command(struct run *r, int go_r)
{
	char g;

	if (read(go_r, &g, 1) != 1)
		_exit(EXIT_TRACER); /* tracer gave up before starting us */
	close(go_r);
	if (restore_inherited(&r->inherited))
		_exit(EXIT_TRACER);
	if (r->user_uid != geteuid() || r->user_gid != getegid()) {
		if ((r->user_name ? initgroups(r->user_name, r->user_gid) : setgroups(0, NULL)) ||
		    setresgid(r->user_gid, r->user_gid, r->user_gid) ||
		    setresuid(r->user_uid, r->user_uid, r->user_uid)) {
			fprintf(stderr, "tracer: cannot switch to uid %u: %s\n", (unsigned)r->user_uid, strerror(errno));
			_exit(EXIT_TRACER);
		}
	}
	execvp(r->cmd[0], r->cmd);
	fprintf(stderr, "tracer: cannot run %s: %s\n", r->cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/*
 * The reaper: a child subreaper that starts CMD, then reaps every process
 * that comes back to it until none is left, and reports CMD's status.
 */
static int start_reaper(struct run *r)
{
	int go[2], pidp[2], status[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(pidp, O_CLOEXEC) || pipe2(status, O_CLOEXEC))
		return -1;
	r->reaper = fork();
	if (r->reaper < 0)
		return -1;
	if (r->reaper == 0) {
		int st = 0, cmd_status = 0;
		pid_t cmd, w;

		close(go[1]); /* so CMD sees end-of-file, not a hang, if tracer dies first */
		close(pidp[0]);
		close(status[0]);
		/* The reaper's alone: fork clears both in CMD (prctl(2)). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		cmd = fork();
		if (cmd == 0)
			exec_command(r, go[0]);
		if (cmd < 0 || write(pidp[1], &cmd, sizeof(cmd)) != sizeof(cmd))
			_exit(EXIT_TRACER);
		while ((w = waitpid(-1, &st, 0)) > 0 || errno == EINTR)
			if (w == cmd)
				cmd_status = st;
		_exit(write(status[1], &cmd_status, sizeof(cmd_status)) == sizeof(cmd_status) ? 0 : EXIT_TRACER);
	}
	close(go[0]);
	close(pidp[1]);
	close(status[1]);
	r->go_w = go[1];
	r->status_r = status[0];
	pid = 0;
	if (read(pidp[0], &pid, sizeof(pid)) != sizeof(pid) || pid <= 0) {
		close(pidp[0]);
		return -1;
	}
	close(pidp[0]);
	r->cmd_pid = pid;
	return 0;
}

/* Wait for "ready\n" on fd from a helper that reports its own errors on stderr. */
static int wait_ready(int fd, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[8];
	ssize_t n;

	if (poll(&p, 1, READY_TIMEOUT_MS) != 1) {
		fprintf(stderr, "tracer: the %s did not start within %d s\n", what, READY_TIMEOUT_MS / 1000);
		return -1;
	}
	n = read(fd, buf, 6); /* no more: the collector says "stopped ..." on the same pipe later */
	if (n != 6 || memcmp(buf, "ready\n", 6)) {
		fprintf(stderr, "tracer: the %s failed to start (its messages are above)\n", what);
		return -1;
	}
	return 0;
}

static pid_t spawn(const char *const *argv, const int *keep, int nkeep)
{
	pid_t pid = fork();

	if (pid == 0) {
		size_t n = 0;
		char **copy;

		setpgid(0, 0); /* out of the terminal's process group: Ctrl-C is for CMD */
		for (int i = 0; i < nkeep; i++)
			keep_fd(keep[i]);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		while (argv[n])
			n++;
		copy = calloc(n + 1, sizeof(*copy)); /* execv wants char *const[]; ours are literals */
		for (size_t i = 0; copy && i < n; i++)
			copy[i] = strdup(argv[i]);
		if (copy)
			execv(copy[0], copy);
		fprintf(stderr, "tracer: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(EXIT_TRACER);
	}
	return pid;
}

static int start_collector(struct run *r)
{
	char bin[PATH_MAX + 32], uid[16], fdnum[16], pid[16];
	/*
	 * --trace-pid: the command exists (waiting for "go") before the
	 * collector starts, so the kernel traces exactly it and what it starts;
	 * the rest of the machine costs a map lookup per event and sends nothing.
	 */
	const char *const argv[] = { bin, "--socket", r->sock, "--consumer-uid", uid, "--ready-fd", fdnum,
				     "--trace-pid", pid, NULL };
	int ready[2], err;

	if (pipe2(ready, O_CLOEXEC))
		return -1;
	snprintf(bin, sizeof(bin), "%s/tracer-collector", r->bindir);
	snprintf(uid, sizeof(uid), "%u", (unsigned)r->proc_uid);
	snprintf(fdnum, sizeof(fdnum), "%d", ready[1]);
	snprintf(pid, sizeof(pid), "%d", (int)r->cmd_pid);
	r->collector = spawn(argv, &ready[1], 1);
	close(ready[1]);
	err = r->collector < 0 ? -1 : wait_ready(ready[0], "collector");
	r->collector_status_r = ready[0];
	return err;
}

static int start_processor(struct run *r)
{
	char bin[PATH_MAX + 32], root[16], start[24], rep[16], sum[16], rdy[16], ctl[16];
	const char *fixed[] = { bin, "--socket", r->sock, "--producer-uid", "0", "--user", PROCESSOR_USER,
			  "--root-pid", root, "--start-ns", start, "--report-fd", rep, "--summary-fd", sum,
			  "--ready-fd", rdy, "--control-fd", ctl };
	const char *const optional[][2] = { { "--stall-after", r->stall_after },
					    { "--io-wait-after", r->io_wait_after },
					    { "--net-wait-after", r->net_wait_after },
					    { "--max-processes", r->max_processes },
					    { "--tool-rules", r->tool_rules },
					    { "--redact-rules", r->redact_rules } };
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), ncmd = 0;
	int ready[2], control[2], keep[4], err;
	const char **argv;

	while (r->cmd[ncmd])
		ncmd++;
	argv = calloc(nfixed + 2 * 6 + 2 + 2 * 16 + 1 + ncmd + 1, sizeof(*argv));
	if (!argv || pipe2(ready, O_CLOEXEC) || pipe2(control, O_CLOEXEC))
		return -1;
	snprintf(bin, sizeof(bin), "%s/tracer-processor", r->bindir);
	snprintf(root, sizeof(root), "%d", (int)r->cmd_pid);
	snprintf(start, sizeof(start), "%llu", (unsigned long long)r->start_ns);
	snprintf(rep, sizeof(rep), "%d", r->report_fd);
	snprintf(sum, sizeof(sum), "%d", r->summary_fd);
	snprintf(rdy, sizeof(rdy), "%d", ready[1]);
	snprintf(ctl, sizeof(ctl), "%d", control[0]);
	memcpy(argv, fixed, sizeof(fixed));
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
		if (optional[i][1]) {
			argv[nfixed++] = optional[i][0];
			argv[nfixed++] = optional[i][1];
		}
	if (r->config) {
		argv[nfixed++] = "--config";
		argv[nfixed++] = r->config;
	}
	for (int i = 0; i < r->nsets; i++) {
		argv[nfixed++] = "--set";
		argv[nfixed++] = r->sets[i];
	}
	argv[nfixed++] = "--";
	for (size_t i = 0; i < ncmd; i++)
		argv[nfixed + i] = r->cmd[i];
	keep[0] = r->report_fd;
	keep[1] = r->summary_fd;
	keep[2] = ready[1];
	keep[3] = control[0];
	r->processor = spawn(argv, keep, 4);
	free((void *)argv);
	close(ready[1]);
	close(control[0]);
	r->control_w = control[1];
	err = r->processor < 0 ? -1 : wait_ready(ready[0], "processor");
	close(ready[0]);
	return err;
}

static int exit_status_of(int raw)
{
	if (WIFEXITED(raw))
		return WEXITSTATUS(raw);
	if (WIFSIGNALED(raw))
		return 128 + WTERMSIG(raw);
	return EXIT_TRACER;
}

/* Copy an unlinked scratch file to fd (or a new file owned by the user). */
static int copy_out(int from, int to)
{
	char buf[65536];
	ssize_t n;

	if (lseek(from, 0, SEEK_SET) < 0)
		return -1;
	while ((n = read(from, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));

			if (w <= 0)
				return -1;
			off += w;
		}
	return n < 0 ? -1 : 0;
}

static int write_json(struct run *r)
{
	int fd = open(r->json_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err;

	if (fd < 0) {
		fprintf(stderr, "tracer: cannot write the report to %s: %s\n", r->json_path, strerror(errno));
		return -1;
	}
	err = copy_out(r->report_fd, fd);
	if (fchown(fd, r->user_uid, r->user_gid) && geteuid() == 0)
		err = -1;
	if (close(fd) || err) {
		fprintf(stderr, "tracer: writing the report to %s failed: %s\n", r->json_path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The HTML page of the same report (view/html.c): the scratch file read
 * whole (the page embeds it once), then written like the JSON, owned by
 * the user. The title names no argument: the report's own argv are the
 * redacted ones, the page shows those.
 */
static int write_html(struct run *r)
{
	struct stat st;
	char *json = NULL;
	ssize_t n = -ENOMEM;
	int rc = -1;

	/* The scratch file is ours (nobody else writes it): its size bounds the read. */
	if (fstat(r->report_fd, &st) || lseek(r->report_fd, 0, SEEK_SET) < 0) {
		fprintf(stderr, "tracer: cannot read the report for %s: %s\n", r->html_path, strerror(errno));
		return -1;
	}
	json = malloc((size_t)st.st_size + 1);
	if (json)
		n = read_fd_bounded(r->report_fd, json, (size_t)st.st_size);
	if (n >= 0)
		rc = html_write_file(r->html_path, json, (size_t)n, "tracer run", (int)r->user_uid, (int)r->user_gid,
				     "tracer");
	else
		fprintf(stderr, "tracer: cannot read the report for %s: %s\n", r->html_path, strerror((int)-n));
	free(json);
	return rc;
}

/* After CMD's tree is gone: stop the collector (it drains), let the processor write the report. */
static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000ULL;
}

/*
 * tracer's own cost, from the kernel's accounting of its two helpers (BPF
 * program time is charged to the traced tasks, not here: see
 * docs/benchmarks.md for how it is measured).
 */
static void print_agent_cost(uint64_t collector_cpu_ns, long collector_maxrss, const struct rusage *p)
{
	fprintf(stderr, "tracer: own cost: collector cpu %.3f s, peak rss %ld KiB; processor cpu %.3f s, peak rss %ld KiB\n",
		(double)collector_cpu_ns / 1e9, collector_maxrss,
		(double)(tv_ns(p->ru_utime) + tv_ns(p->ru_stime)) / 1e9, p->ru_maxrss);
}

/*
 * The collector's "stopped CPU_NS MAXRSS_KIB" line: everything is in the
 * ring. Its exit can then take the kernel a second or more (detaching the
 * programs waits for RCU grace periods), which nobody needs to wait for.
 * 0, or -1 when it died or hung instead (then it is reaped, or killed).
 */
static int collector_stopped(struct run *r, uint64_t *cpu_ns, long *maxrss)
{
	struct pollfd p = { .fd = r->collector_status_r, .events = POLLIN };
	char buf[80];
	unsigned long long cpu;
	ssize_t n = 0;
	int st = 0;

	if (poll(&p, 1, STOP_TIMEOUT_MS) == 1)
		n = read(r->collector_status_r, buf, sizeof(buf) - 1);
	close(r->collector_status_r);
	if (n > 0) {
		buf[n] = 0;
		if (sscanf(buf, "stopped %llu %ld", &cpu, maxrss) == 2) {
			*cpu_ns = cpu;
			waitpid(r->collector, &st, WNOHANG); /* reaped now if it is already gone; else init will */
			return 0;
		}
	}
	if (waitpid(r->collector, &st, WNOHANG) == 0) { /* no line and still there: hung */
		fprintf(stderr, "tracer: the collector did not stop within %d s: killing it\n", STOP_TIMEOUT_MS / 1000);
		kill(r->collector, SIGKILL);
		waitpid(r->collector, &st, 0);
	}
	fprintf(stderr, "tracer: the collector did not stop cleanly (status %#x)\n", st);
	return -1;
}

static int finish(struct run *r, int status)
{
	struct rusage pru;
	uint64_t collector_cpu_ns = 0;
	long collector_maxrss = 0;
	char line[64];
	int st, len, err = 0;

	len = snprintf(line, sizeof(line), "end %d %llu\n", status, (unsigned long long)real_ns());
	if (write(r->control_w, line, (size_t)len) != len)
		err = -1;
	close(r->control_w);
	kill(r->collector, SIGTERM);
	if (collector_stopped(r, &collector_cpu_ns, &collector_maxrss))
		err = -1;
	if (wait4(r->processor, &st, 0, &pru) != r->processor) {
		fprintf(stderr, "tracer: cannot wait for the processor: %s: no report\n", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "tracer: the processor failed (status %#x): no report\n", st);
		return -1;
	}
	if (copy_out(r->summary_fd, STDERR_FILENO))
		err = -1;
	if (!err)
		print_agent_cost(collector_cpu_ns, collector_maxrss, &pru);
	if (r->json_path && write_json(r))
		err = -1;
	if (r->html_path && write_html(r))
		err = -1;
	return err;
}

static void cleanup(struct run *r)
{
	if (r->sock[0])
		unlink(r->sock);
	if (r->dir[0])
		rmdir(r->dir);
}

int cmd_run(int argc, char **argv)
{
	struct run r = { .report_fd = -1, .summary_fd = -1, .control_w = -1, .collector_status_r = -1 };
	int raw = 0, status;

	r.start_ns = real_ns();
	record_inherited(&r.inherited); /* before any change below */
	if (parse_args(argc, argv, &r))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "tracer run needs root: it loads BPF programs into the kernel. "
				"Run it with sudo: sudo tracer run -- %s\n", r.cmd[0]);
		return EXIT_TRACER;
	}
	/* Like time(1): the terminal's Ctrl-C is for the command; we stay to write the report. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Inherited SIG_IGN would have the kernel reap our children: no status for the reaper, nor for us. */
	signal(SIGCHLD, SIG_DFL);
	if (resolve_users(&r) || find_binaries(&r) || setup_dir(&r) || start_reaper(&r) ||
	    start_collector(&r) || start_processor(&r)) {
		if (r.reaper > 0)
			kill(r.reaper, SIGKILL);
		if (r.collector > 0)
			kill(r.collector, SIGKILL);
		if (r.processor > 0)
			kill(r.processor, SIGKILL);
		cleanup(&r);
		return EXIT_TRACER;
	}
	if (write(r.go_w, "g", 1) != 1) {
		fprintf(stderr, "tracer: cannot start the command: %s\n", strerror(errno));
		cleanup(&r);
		return EXIT_TRACER;
	}
	close(r.go_w);
	if (read(r.status_r, &raw, sizeof(raw)) != sizeof(raw))
		fprintf(stderr, "tracer: lost track of the command's status\n");
	waitpid(r.reaper, NULL, 0);
	status = exit_status_of(raw);
	if (finish(&r, status))
		fprintf(stderr, "tracer: the trace is incomplete (see above); the command's status is %d\n", status);
	cleanup(&r);
	return status;
}
