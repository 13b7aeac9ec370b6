/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The collector's rules on the real kernel: include and exclude rules by
 * executable name, uid and cgroup, applied in the kernel at exec and
 * inherited by children; the environment allowlist extended by the file;
 * rules republished while loaded (the SIGHUP path: a memory copy, no
 * bpf()); and the file's own checks (owner, mode, file:line errors),
 * including a reload inside the real collector's sandbox; and the
 * collector leaving out the programs of a tracepoint the kernel lacks
 * (without the vmscan ones, records say reclaim is not measured).
 * Needs root.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>

#include "bpf_harness.h"
#include "daemon_harness.h"
#include "skip.h"

static char dir[64];            /* this test's own root-owned directory (0755) */
static char rules_path[128];
static char incl[128], excl[128]; /* copies of /bin/sh named tracer-incl and tracer-excl */

static void make_copy(const char *from, const char *to)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	assert_int_equal(system(cmd), 0);
}

/* Publish a new rules file the way the collector does on SIGHUP. */
static void reload(const char *text)
{
	harness_write_file(rules_path, text);
	assert_int_equal(rules_read(&H.rules), 0);
	rules_publish(&H.rules, H.bpf.skel->bss->rules, &H.bpf.skel->bss->rules_active);
}

struct run {
	char exe[128];
	char script[PATH_MAX + 256];
	char env[64];
};

static int run_shell(void *arg)
{
	struct run *r = arg;
	char dash_c[] = "-c";
	char *const argv[] = { r->exe, dash_c, r->script, NULL };
	char *const envp[] = { r->env, NULL };

	execve(r->exe, argv, envp);
	return 127;
}

/* Run exe -c script, wait for it, let every record in, return its pid. */
static pid_t run(const char *exe, const char *script)
{
	static struct run r;
	pid_t pid;
	int st;

	snprintf(r.exe, sizeof(r.exe), "%s", exe);
	snprintf(r.script, sizeof(r.script), "%s", script);
	snprintf(r.env, sizeof(r.env), "MY_JOB_TAG=job-7");
	pid = harness_spawn(run_shell, &r);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	usleep(150000); /* exits leave at their final switch */
	harness_drain();
	return pid;
}

/* The exec record whose parent is ppid (the first), or NULL. */
static const struct tr_exec *exec_of_child(pid_t ppid)
{
	const struct tr_exec *e;
	size_t pos = 0;

	while ((e = harness_next(&pos, TR_EXEC, NULL)))
		if ((pid_t)e->ppid == ppid)
			return e;
	return NULL;
}

/*
 * Nothing at all of a shell that is not included, or of its child; and,
 * run the same way just after it, an included one is traced (so the
 * silence is the rule's doing, not a harness that sees nothing).
 */
static void test_not_included_process_sends_nothing(void **state)
{
	const struct tr_exec *e;
	pid_t pid, included;

	(void)state;
	pid = run("/bin/sh", "/bin/true");
	included = run(incl, "/bin/true");
	for (unsigned t = TR_EXEC; t < TR_KERNEL_TYPES_END; t++)
		assert_int_equal(harness_count(t, pid), 0);
	assert_null(exec_of_child(pid));
	e = harness_find(TR_EXEC, included, NULL);
	assert_non_null(e);
	assert_false(e->flags & TR_EXEC_EXCLUDED);
	assert_string_equal((const char *)(e + 1), incl);
	assert_non_null(harness_find(TR_EXIT, included, NULL));
	e = exec_of_child(included);
	assert_non_null(e);
	assert_string_equal((const char *)(e + 1), "/bin/true");
}

static void test_included_exe_and_its_descendants_traced_with_file_env(void **state)
{
	const struct tr_exec *e, *child;
	const char *env;
	pid_t pid;

	(void)state;
	pid = run(incl, "/bin/true; exit 0");
	e = harness_find(TR_EXEC, pid, NULL);
	assert_non_null(e);
	assert_false(e->flags & TR_EXEC_EXCLUDED);
	assert_string_equal((const char *)(e + 1), incl);
	/* env MY_JOB_TAG in the file extends the allowlist. */
	env = (const char *)(e + 1) + e->path_len + e->argv_len + e->cwd_len;
	assert_int_equal(e->env_len, sizeof("MY_JOB_TAG=job-7"));
	assert_string_equal(env, "MY_JOB_TAG=job-7");
	assert_non_null(harness_find(TR_EXIT, pid, NULL));
	child = exec_of_child(pid);
	assert_non_null(child);
	assert_string_equal((const char *)(child + 1), "/bin/true");
	assert_non_null(harness_find(TR_EXIT, (pid_t)child->tgid, NULL));
}

/* One exec record saying so (the path only), then nothing of it or its descendants. */
static void expect_excluded(const struct tr_exec *e, const char *path)
{
	assert_non_null(e);
	assert_true(e->flags & TR_EXEC_EXCLUDED);
	assert_string_equal((const char *)(e + 1), path);
	assert_int_equal(e->argv_len, 0);
	assert_int_equal(e->cwd_len, 0);
	assert_int_equal(e->env_len, 0);
	/* (its fork came before, while it was traced: that record is there) */
	for (unsigned t = TR_EXIT; t < TR_KERNEL_TYPES_END; t++)
		assert_int_equal(harness_count(t, (pid_t)e->tgid), 0);
	assert_int_equal(harness_count(TR_EXEC, (pid_t)e->tgid), 1);
	assert_null(exec_of_child((pid_t)e->tgid));
	{
		const struct tr_fork *f;
		size_t pos = 0;

		while ((f = harness_next(&pos, TR_FORK, NULL)))
			assert_int_not_equal(f->parent_tgid, e->tgid);
	}
}

static void test_excluded_exe_sends_one_exec_then_nothing(void **state)
{
	char script[512];
	pid_t pid;

	(void)state;
	snprintf(script, sizeof(script), "%s -c '/bin/true; cat /etc/hostname >/dev/null'; exit 0", excl);
	pid = run(incl, script);
	expect_excluded(exec_of_child(pid), excl);
}

static void test_excluded_uid_at_exec(void **state)
{
	const struct tr_exec *e;
	pid_t pid, setpriv;

	(void)state;
	pid = run(incl, "setpriv --reuid=54321 --regid=54321 --clear-groups /bin/true; exit 0");
	e = exec_of_child(pid); /* setpriv itself, as root: traced */
	assert_non_null(e);
	assert_false(e->flags & TR_EXEC_EXCLUDED);
	setpriv = (pid_t)e->tgid;
	{
		/* Its second exec, /bin/true as uid 54321, is the excluded one. */
		size_t pos = 0;

		while ((e = harness_next(&pos, TR_EXEC, NULL)))
			if ((pid_t)e->tgid == setpriv && (e->flags & TR_EXEC_EXCLUDED))
				break;
	}
	assert_non_null(e);
	assert_int_equal(e->uid, 54321);
	assert_string_equal((const char *)(e + 1), "/bin/true");
	assert_null(harness_find(TR_EXIT, setpriv, NULL));
}

/* Rules republished while loaded: a cgroup rule excludes a process that moved under that cgroup. */
static void test_reloaded_cgroup_rule_excludes_descendant_cgroups(void **state)
{
	const char *hier[2] = { harness_v2_root(), harness_v1_memory() ? "/sys/fs/cgroup/memory" : NULL };
	char top[PATH_MAX], inner[PATH_MAX + 16], text[PATH_MAX + 256], script[PATH_MAX + 128];

	(void)state;
	if (!hier[0] && !hier[1])
		TEST_SKIP("no cgroup v2 hierarchy and no v1 memory hierarchy to make the test cgroups in");
	for (int h = 0; h < 2; h++) {
		pid_t pid;

		if (!hier[h])
			continue;
		snprintf(top, sizeof(top), "%s/tracer-bpf-rules.%d", hier[h], (int)getpid());
		snprintf(inner, sizeof(inner), "%s/inner", top);
		assert_int_equal(mkdir(top, 0755), 0);
		assert_int_equal(mkdir(inner, 0755), 0);
		snprintf(text, sizeof(text), "include exe tracer-incl\nexclude cgroup %s\nenv MY_JOB_TAG\n", top);
		reload(text);
		/* The shell moves itself under the excluded cgroup, then execs: that exec is excluded. */
		snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs && exec /bin/true", inner);
		pid = run(incl, script);
		{
			const struct tr_exec *e;
			size_t pos = 0;
			bool excluded = false;

			while ((e = harness_next(&pos, TR_EXEC, NULL)))
				if ((pid_t)e->tgid == pid && (e->flags & TR_EXEC_EXCLUDED))
					excluded = !strcmp((const char *)(e + 1), "/bin/true");
			if (!excluded)
				fail_msg("exec under %s was not excluded", inner);
		}
		assert_null(harness_find(TR_EXIT, pid, NULL));
		assert_int_equal(rmdir(inner), 0);
		assert_int_equal(rmdir(top), 0);
	}
	reload("include exe tracer-incl\nexclude exe tracer-excl\nexclude uid 54321\nenv MY_JOB_TAG\n");
}

/* rules_read's verdict on a file, and what it said on stderr. */
static int read_rules(const char *text, mode_t mode, uid_t owner, char *said, size_t len)
{
	char log[128];
	int saved = dup(2), fd, rc;
	ssize_t n;
	struct rules_file *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(log, sizeof(log), "%s/stderr", dir);
	harness_write_file(rules_path, text);
	assert_int_equal(chmod(rules_path, mode), 0);
	assert_int_equal(chown(rules_path, owner, 0), 0);
	fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 2);
	rc = rules_init(f, rules_path);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, said, len - 1, 0);
	said[n > 0 ? n : 0] = 0;
	close(fd);
	assert_int_equal(chown(rules_path, 0, 0), 0);
	assert_int_equal(chmod(rules_path, 0644), 0);
	free(f);
	return rc;
}

static void expect_refused(const char *text, mode_t mode, uid_t owner, const char *want)
{
	char said[2048];

	if (read_rules(text, mode, owner, said, sizeof(said)) != -1)
		fail_msg("accepted: '%s'", text);
	if (!strstr(said, want))
		fail_msg("for '%s' the message was '%s', expected it to contain '%s'", text, said, want);
}

static void test_rules_file_refused_with_file_line_and_remedy(void **state)
{
	char where[256], said[2048];

	(void)state;
	snprintf(where, sizeof(where), "%s:3: ", rules_path);
	expect_refused("# a comment\n\nfrobnicate exe x\n", 0644, 0, where);
	expect_refused("exclude exe ok\n\nexclude exe a/b\n", 0644, 0, "without '/'");
	expect_refused("exclude uid -1\n", 0644, 0, "uid takes a number");
	/* Digits only (found by fuzz_collector_rules: strtoul took a sign after white space). */
	expect_refused("exclude uid +5\n", 0644, 0, "uid takes a number");
	expect_refused("include uid \v-0\n", 0644, 0, "uid takes a number");
	expect_refused("exclude cgroup /tmp\n", 0644, 0, "not a cgroup directory");
	expect_refused("env 1BAD\n", 0644, 0, "letters, digits and _");
	expect_refused("include\n", 0644, 0, "expected 'exclude|include");
	expect_refused("exclude comm x\n", 0644, 0, "unknown kind 'comm'");
	expect_refused("exclude uid 1 2\n", 0644, 0, "expected");
	/* Only root may be able to change what is hidden. */
	expect_refused("exclude uid 1\n", 0664, 0, "chmod go-w");
	expect_refused("exclude uid 1\n", 0644, 1000, "chown root");
	assert_int_equal(chmod(dir, 0777), 0);
	expect_refused("exclude uid 1\n", 0644, 0, dir);
	assert_int_equal(chmod(dir, 0755), 0);
	/* What is accepted. */
	assert_int_equal(read_rules("  # indented comment\nexclude uid 7\t\ninclude exe a-b.c_d\nenv X_1\n", 0644, 0,
				    said, sizeof(said)), 0);
}

static void test_too_many_rules_refused(void **state)
{
	char text[4096] = "", line[64];

	(void)state;
	for (int i = 0; i <= TR_RULES_PER_KIND; i++) {
		snprintf(line, sizeof(line), "exclude uid %d\n", i);
		strcat(text, line);
	}
	expect_refused(text, 0644, 0, "at most 16");
	text[0] = 0;
	for (int i = 0; i < TR_RULES_ENV_MAX; i++) {
		snprintf(line, sizeof(line), "env K%d\n", i);
		strcat(text, line);
	}
	expect_refused(text, 0644, 0, "environment keys");
}

/* rules_read of a file and rules_parse of its text (what fuzz_collector_rules calls) agree, verdict and rules. */
static void test_rules_read_is_rules_parse_of_the_file_text(void **state)
{
	const char *v2 = harness_v2_root();
	char good[1024], bad[1024], text[1024];
	const char *texts[2] = { good, bad };

	(void)state;
	snprintf(good, sizeof(good), "# both verbs, every kind\nexclude exe sshd\r\n\tinclude uid 0\n%s%s%s"
		 "env MY_JOB_TAG\nenv SLURM_JOB_ID\n", v2 ? "exclude cgroup " : "", v2 ? v2 : "", v2 ? "\n" : "");
	snprintf(bad, sizeof(bad), "include exe a\nenv K_1\nexclude uid 12x\nexclude exe b\n");
	for (int i = 0; i < 2; i++) {
		struct rules_file *from_file = calloc(1, sizeof(*from_file)), *from_text = calloc(1, sizeof(*from_text));
		int rc_file, rc_text;

		assert_non_null(from_file);
		assert_non_null(from_text);
		harness_write_file(rules_path, texts[i]);
		rc_file = rules_init(from_file, rules_path);
		assert_int_equal(rules_init(from_text, NULL), 0);
		from_text->path = rules_path;
		snprintf(text, sizeof(text), "%s", texts[i]);
		rc_text = rules_parse(from_text, text);
		assert_int_equal(rc_file, i ? -1 : 0);
		assert_int_equal(rc_text, rc_file);
		assert_memory_equal(&from_file->next, &from_text->next, sizeof(from_file->next));
		if (!i)
			assert_int_equal(from_text->next.exclude.n_cgroup, v2 ? 1 : 0);
		free(from_file);
		free(from_text);
	}
}

/* The real collector of this build (BUILD/tracer-collector), or NULL when it is not built. */
static const char *collector_bin(void)
{
	static char bin[PATH_MAX];

	return daemon_find("tracer-collector", bin, sizeof(bin)) ? NULL : bin;
}

/* In the child: the sock and vmscan tracepoints hidden under empty tmpfs, in a mount namespace of its own. */
static int hide_sock_tracepoints(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/sys/kernel/tracing/events/sock", "tmpfs", 0, "size=4k") ||
	    mount("tmpfs", "/sys/kernel/tracing/events/vmscan", "tmpfs", 0, "size=4k"))
		return 126;
	return 0;
}

/*
 * Start the real collector (with the rules file, tracing only pid 1, its
 * stderr into dir/collector.log) and wait until it is ready: loaded,
 * sandboxed, serving. hide_sock: in a mount namespace of its own where the
 * sock tracepoints are hidden under an empty tmpfs, as on a kernel before 6.3.
 */
static pid_t start_collector(const char *bin, bool hide_sock)
{
	char sock[128], log[128], fdnum[16], said[16];
	struct daemon_io io = DAEMON_IO;
	int ready[2];
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/c.sock", dir);
	snprintf(log, sizeof(log), "%s/collector.log", dir);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	snprintf(fdnum, sizeof(fdnum), "%d", ready[1]);
	{
		const char *argv[] = { bin, "--socket", sock, "--consumer-uid", "65534", "--rules", rules_path,
				       "--ready-fd", fdnum, "--trace-pid", "1", NULL };

		io.stderr_path = log;
		io.inherit[0] = ready[1];
		io.in_child = hide_sock ? hide_sock_tracepoints : NULL;
		pid = daemon_start(argv, &io);
	}
	close(ready[1]);
	assert_true(daemon_ready(ready[0], 60000, said, sizeof(said)) >= 1);
	close(ready[0]);
	return pid;
}

/* Stop it (SIGTERM), check it exited 0, and return what it said. */
static const char *stop_collector(pid_t pid)
{
	static char said[8192];
	char log[128];
	int st;

	st = daemon_stop(pid, SIGTERM, 60000);
	snprintf(log, sizeof(log), "%s/collector.log", dir);
	daemon_read_file(log, said, sizeof(said));
	if (st == -1)
		fail_msg("the collector did not stop within 60 s of SIGTERM; it said:\n%s", said);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the collector ended with status %#x; it said:\n%s", st, said);
	return said;
}

/* How many times the collector's log (dir/collector.log) says what, now. */
static int log_count(const char *what)
{
	static char said[65536];
	char log[128];
	int n = 0;

	snprintf(log, sizeof(log), "%s/collector.log", dir);
	daemon_read_file(log, said, sizeof(said));
	for (const char *p = said; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/*
 * Wait (at most 10 s) until the collector's log says what for the nth time:
 * each SIGHUP is sent only once the one before it was handled, so that two
 * cannot merge into one reload.
 */
static void wait_for_log(const char *what, int n)
{
	for (int waited_ms = 0; log_count(what) < n; waited_ms += 10) {
		if (waited_ms >= 10000)
			fail_msg("the collector did not say \"%s\" %d times within 10 s", what, n);
		usleep(10000);
	}
}

/*
 * The collector's own copy of the programs' .bss map (where its rules land):
 * among the BPF maps the process holds (/proc/PID/fdinfo says their ids), the
 * one with the kernel name of this harness's .bss map. An fd of the test's own.
 */
static int collector_bss_map(pid_t pid)
{
	struct bpf_map_info ours = { 0 }, info;
	__u32 len = sizeof(ours);
	char path[128], line[256];
	int found = -1;

	assert_int_equal(bpf_obj_get_info_by_fd(bpf_map__fd(H.bpf.skel->maps.bss), &ours, &len), 0);
	for (int fd = 0; fd < 1024 && found < 0; fd++) {
		unsigned id = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "map_id: %u", &id) == 1)
				break;
		fclose(f);
		if (!id || id == ours.id)
			continue;
		found = bpf_map_get_fd_by_id(id);
		assert_true(found >= 0);
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		assert_int_equal(bpf_obj_get_info_by_fd(found, &info, &len), 0);
		if (strcmp(info.name, ours.name) || info.value_size != sizeof(struct tracer_bpf__bss)) {
			close(found);
			found = -1;
		}
	}
	if (found < 0)
		fail_msg("no map named %s among the BPF maps of the collector (pid %d)", ours.name, (int)pid);
	return found;
}

/*
 * The rules the kernel programs read now (the .bss map, read with bpf(), not
 * through the collector's memory) are the rules text says: the copy that
 * rules_active names equals rules_parse of the text. Returns rules_active.
 */
static __u32 expect_kernel_rules(int map_fd, const char *text)
{
	struct tracer_bpf__bss *bss = calloc(1, sizeof(*bss));
	struct rules_file *want = calloc(1, sizeof(*want));
	char copy[1024];
	__u32 key = 0, active;

	assert_non_null(bss);
	assert_non_null(want);
	assert_int_equal(bpf_map_lookup_elem(map_fd, &key, bss), 0);
	assert_int_equal(rules_init(want, NULL), 0);
	want->path = rules_path;
	snprintf(copy, sizeof(copy), "%s", text);
	assert_int_equal(rules_parse(want, copy), 0);
	active = bss->rules_active;
	assert_in_range(active, 0, 1);
	if (memcmp(&bss->rules[active], &want->next, sizeof(want->next)))
		fail_msg("the kernel's rules (copy %u of the collector's .bss map) are not those of \"%s\"", active,
			 text);
	free(want);
	free(bss);
	return active;
}

/* The collector of the test below while it runs: its teardown stops it (a check failed) and restores the rules. */
static pid_t reloading;

static int stop_reloading_collector(void **state)
{
	(void)state;
	if (reloading > 0 && daemon_stop(reloading, SIGKILL, 60000) == -1)
		return -1;
	reloading = 0;
	harness_write_file(rules_path, "include exe tracer-incl\nexclude exe tracer-excl\nexclude uid 54321\n"
				       "env MY_JOB_TAG\n");
	return 0;
}

/*
 * The real collector, sandboxed (uid 65533, no capabilities, seccomp):
 * SIGHUP rereads the rules inside the sandbox (a forbidden syscall would
 * kill it) and the programs' rules change to the file's, read back from the
 * kernel's map after each reload; a bad file is refused and the kernel keeps
 * the old rules; SIGTERM stops it. Each SIGHUP waits for the one before.
 */
static void test_collector_reloads_rules_in_its_sandbox(void **state)
{
	static const char *const texts[] = { "exclude uid 4\n", "exclude uid 5\nenv ANOTHER_KEY\n",
					     "exclude uid 5\nnonsense here\n", "include uid 6\nexclude exe sshd\n" };
	const char *bin = collector_bin(), *said;
	__u32 active;
	pid_t pid;
	int map;

	(void)state;
	if (!bin)
		TEST_SKIP("no tracer-collector next to the test binaries: run 'make all' first");
	harness_write_file(rules_path, texts[0]);
	pid = reloading = start_collector(bin, false);
	map = collector_bss_map(pid);
	active = expect_kernel_rules(map, texts[0]);

	harness_write_file(rules_path, texts[1]);
	assert_int_equal(kill(pid, SIGHUP), 0);
	wait_for_log("<6>rules reloaded from", 1);
	assert_int_equal(expect_kernel_rules(map, texts[1]), !active); /* the other copy, published */
	active = !active;

	harness_write_file(rules_path, texts[2]);
	assert_int_equal(kill(pid, SIGHUP), 0);
	wait_for_log("the previous rules stay in force", 1);
	assert_int_equal(expect_kernel_rules(map, texts[1]), active); /* unchanged */

	harness_write_file(rules_path, texts[3]);
	assert_int_equal(kill(pid, SIGHUP), 0);
	wait_for_log("<6>rules reloaded from", 2);
	assert_int_equal(expect_kernel_rules(map, texts[3]), !active);

	close(map);
	reloading = 0;
	said = stop_collector(pid);
	assert_non_null(strstr(said, ":2: expected"));
}

/*
 * A kernel without the sock tracepoints (before 6.3), or without the vmscan
 * ones: their programs are left out, with a warning each, and the collector
 * starts (its records then say reclaim was not measured: TR_EXIT_NO_RECLAIM).
 */
static void test_collector_leaves_out_programs_of_missing_tracepoints(void **state)
{
	const char *bin = collector_bin(), *said;

	(void)state;
	if (!bin)
		TEST_SKIP("no tracer-collector next to the test binaries: run 'make all' first");
	if (access("/sys/kernel/tracing/events/sock", F_OK) || access("/sys/kernel/tracing/events/vmscan", F_OK))
		TEST_SKIP("no /sys/kernel/tracing/events/sock or vmscan to hide (tracefs not mounted there?)");
	said = stop_collector(start_collector(bin, true));
	assert_non_null(strstr(said, "<4>this kernel has no tracepoint sock/sock_send_length: handle_net_tx is left out"));
	assert_non_null(strstr(said, "<4>this kernel has no tracepoint sock/sock_recv_length: handle_net_rx is left out"));
	assert_non_null(strstr(said, "<4>this kernel has no tracepoint vmscan/mm_vmscan_direct_reclaim_begin: "
				     "rcl_direct_beg is left out"));
	assert_non_null(strstr(said, "<4>this kernel has no tracepoint vmscan/mm_vmscan_memcg_reclaim_end: "
				     "rcl_memcg_end is left out"));
	assert_non_null(strstr(said, "<6>collecting"));
}

/* The exit record of want (a pid), from the ring buffer of the loader below: its flags, | 1 << 31 when found. */
static int find_exit(void *ctx, void *data, size_t size)
{
	const struct tr_exit *x = data;
	uint32_t *want = ctx;

	if (size == sizeof(*x) && x->hdr.type == TR_EXIT && x->tgid == want[0])
		want[1] = x->flags | 1u << 31;
	return 0;
}

/*
 * In a child, in a mount namespace of its own where the vmscan tracepoints
 * are hidden: the collector's own loader (daemon mode) leaves their
 * programs out, loads the rest, and the exit record of a process says
 * reclaim was not measured. Returns 0, or which step failed.
 */
static int load_without_vmscan(void *arg)
{
	static struct rules_file r;
	struct load_options o = { .kernel_buffer_mib = 8, .sample_interval_ms = 1000 };
	struct bpf_state b = { 0 };
	struct ring_buffer *rb;
	uint32_t want[2] = { 0, 0 };
	pid_t pid;

	(void)arg;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/sys/kernel/tracing/events/vmscan", "tmpfs", 0, "size=4k"))
		return 10;
	if (rules_init(&r, NULL) || bpf_start(&b, &o, &r))
		return 11;
	if (b.skel->rodata->reclaim_measured || bpf_program__autoload(b.skel->progs.rcl_direct_beg))
		return 12;
	rb = ring_buffer__new(bpf_map__fd(b.skel->maps.events), find_exit, want, NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (!rb || pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 13;
	want[0] = (uint32_t)pid;
	for (int i = 0; i < 50 && !want[1]; i++)
		ring_buffer__poll(rb, 100);
	if (!want[1])
		return 14;
	return want[1] & TR_EXIT_NO_RECLAIM ? 0 : 15;
}

/* Without the vmscan tracepoints the programs still load, and the records say reclaim is not measured. */
static void test_without_vmscan_tracepoints_records_say_reclaim_not_measured(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if (access("/sys/kernel/tracing/events/vmscan", F_OK))
		TEST_SKIP("no /sys/kernel/tracing/events/vmscan to hide (tracefs not mounted there?)");
	/* Here they are there: reclaim is measured. */
	assert_true(H.bpf.skel->rodata->reclaim_measured);
	pid = harness_spawn(load_without_vmscan, NULL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("loading without the vmscan tracepoints: status %#x (10 hide, 11 load, 12 measured, 13 fork, "
			 "14 no exit, 15 no TR_EXIT_NO_RECLAIM)", st);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/var/tmp/tracer-bpf-rules.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(rules_path, sizeof(rules_path), "%s/rules", dir);
	snprintf(incl, sizeof(incl), "%s/tracer-incl", dir);
	snprintf(excl, sizeof(excl), "%s/tracer-excl", dir);
	make_copy("/bin/sh", incl);
	make_copy("/bin/sh", excl);
	harness_write_file(rules_path, "# tests/test_bpf_rules.c\n"
				       "include exe tracer-incl\nexclude exe tracer-excl\nexclude uid 54321\n"
				       "env MY_JOB_TAG\n");
	/* This test process is seen first after load, with include rules in force: not included. */
	harness_start(0, 1000, rules_path);
	usleep(100000);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	harness_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_included_process_sends_nothing),
		cmocka_unit_test(test_included_exe_and_its_descendants_traced_with_file_env),
		cmocka_unit_test(test_excluded_exe_sends_one_exec_then_nothing),
		cmocka_unit_test(test_excluded_uid_at_exec),
		cmocka_unit_test(test_reloaded_cgroup_rule_excludes_descendant_cgroups),
		cmocka_unit_test(test_rules_file_refused_with_file_line_and_remedy),
		cmocka_unit_test(test_too_many_rules_refused),
		cmocka_unit_test(test_rules_read_is_rules_parse_of_the_file_text),
		cmocka_unit_test_teardown(test_collector_reloads_rules_in_its_sandbox, stop_reloading_collector),
		cmocka_unit_test(test_collector_leaves_out_programs_of_missing_tracepoints),
		cmocka_unit_test(test_without_vmscan_tracepoints_records_say_reclaim_not_measured),
	};
	const char *why = harness_unavailable();

	if (why)
		return test_skip_all("%s", why);
	return cmocka_run_group_tests(tests, setup, teardown);
}
