/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signals a user can act on (docs/processor.md, "Signals"): trees shaped
 * like real runs, built from records the way the kernel sends them, with
 * their steps (steps.c), then the report's signals, its steps'
 * nonzero_exits and the summary. Shell idioms that end non-zero - grep -q
 * with no match, a writer stopped by a closed pipe (SIGPIPE, or EPIPE and
 * exit 1), test - are not failures; a step whose main ended non-zero is
 * one failed signal; the command's own failure is one more, or the same
 * one when the command is its step's main; a kill is killed wherever it
 * lands, except SIGPIPE.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"
#include "encode.h"
#include "proctab.h"
#include "report.h"
#include "steps.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define ROOT 100
#define MAXPID 1024
#define EXIT(n) ((uint32_t)(n) << 8)
#define GOOD "/w/work/ab/cdef0123456789" /* Nextflow task directories */
#define BAD "/w/work/fe/dcba9876543210"

static struct proctab *T;
static struct steps S;
static struct decoded dec;
static uint64_t starts[MAXPID];
static uint64_t clk;

/* ---- a world of processes (as tests/test_attrib_steps.c builds them) ---- */

static void world(void)
{
	T = malloc(sizeof(*T));
	assert_non_null(T);
	assert_int_equal(proctab_init(T, MAXPID, ROOT, 42), 0);
	assert_int_equal(steps_init(&S, 0, 7), 0);
	memset(starts, 0, sizeof(starts));
	clk = 1000;
}

static void world_end(void)
{
	steps_free(&S);
	proctab_free(T);
	free(T);
}

static void exec_env(uint32_t pid, const char *cwd, const char *const *env, const char *path,
		     const char *const *argv)
{
	_Alignas(8) static unsigned char buf[DECODE_MAX_LEN];
	size_t n;

	if (!starts[pid])
		starts[pid] = ++clk; /* the root: started before tracing, exec seen */
	n = encode_exec_ctx(buf, sizeof(buf), ++clk, pid, 1, starts[pid], path, argv, cwd, env);
	assert_true(n > 0);
	assert_int_equal(decode_record(&dec, TR_EXEC, buf, (uint32_t)n), 0);
	assert_int_equal(proctab_exec(T, &dec.u.exec, clk, NULL), 0);
}

/* fork + exec: a child running path with argv in cwd. */
static void run(uint32_t parent, uint32_t child, const char *cwd, const char *path, const char *const *argv)
{
	struct tr_fork f;

	starts[child] = ++clk;
	f = encode_fork(clk, parent, starts[parent], child, starts[child]);
	assert_int_equal(proctab_fork(T, &f, clk), 0);
	exec_env(child, cwd, NULL, path, argv);
}

/* raw: the wait status word (EXIT(n), or a signal number). */
static void finish(uint32_t pid, uint32_t raw)
{
	struct tr_exit x = encode_exit(++clk, pid, starts[pid], 1, raw);

	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
}

static void oom_kill(uint32_t pid)
{
	struct tr_oom o = encode_oom(++clk, pid, 4096, 8192);

	assert_int_equal(proctab_oom(T, &o, clk), 0);
	finish(pid, SIGKILL);
}

static const char *const CMD[] = { "run.sh" };

static struct report_input input(void)
{
	struct report_input in = { .command = CMD, .ncommand = 1, .mono_to_real_ns = 0 };

	proctab_mark_tree(T);
	assert_int_equal(steps_build(&S, T), 0);
	in.steps = &S;
	return in;
}

static char *json(void)
{
	struct report_input in = input();
	struct obuf o;

	obuf_init_mem(&o, 1 << 20);
	assert_int_equal(report_json(&o, T, &in), 0);
	obuf_putc(&o, 0);
	return o.buf;
}

static char *summary(void)
{
	struct report_input in = input();
	struct obuf o;

	obuf_init_mem(&o, 1 << 20);
	assert_int_equal(report_summary(&o, T, &in), 0);
	obuf_putc(&o, 0);
	return o.buf;
}

static const struct step *step_of(uint32_t pid)
{
	const struct proc *p = proctab_lookup(T, pid, starts[pid]);

	assert_non_null(p);
	return steps_of(&S, p);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing: %s\nin: %s", needle, hay);
}

/* The signals array of a report, NUL-terminated in place (it is the last key). */
static const char *signals_of(char *j)
{
	char *s = strstr(j, "\"signals\":[");

	assert_non_null(s);
	return s;
}

/* ---- worlds -------------------------------------------------------------- */

/*
 * A Nextflow-shaped run whose launcher ignores a failed task:
 *   100 bash run.sh
 *   ├── 101 bash .command.run (GOOD)                  exit 0
 *   │   └── 102 bash .command.sh                      exit 0
 *   │       ├── 103 grep -q NO-SUCH-LINE in.txt       exit 1 (no match)
 *   │       ├── 104 seq 1000000 | 105 head -1         seq: SIGPIPE
 *   │       ├── 106 yes | 107 head -1                 yes: EPIPE, exit 1 (SIGPIPE ignored)
 *   │       └── 108 test -f missing.txt               exit 1
 *   ├── 201 bash .command.run (BAD)                   exit 2
 *   │   └── 202 bash .command.sh                      exit 2
 *   │       ├── 203 cat in.txt                        exit 0
 *   │       └── 204 ls /nonexistent                   exit 2
 * The callers end the root.
 */
static void tasks(void)
{
	world();
	exec_env(ROOT, "/w", NULL, "/bin/bash", ARGV("bash", "run.sh"));
	run(ROOT, 101, GOOD, "/bin/bash", ARGV("bash", ".command.run"));
	run(101, 102, GOOD, "/bin/bash", ARGV("bash", ".command.sh"));
	run(102, 103, GOOD, "/bin/grep", ARGV("grep", "-q", "NO-SUCH-LINE", "in.txt"));
	finish(103, EXIT(1));
	run(102, 104, GOOD, "/usr/bin/seq", ARGV("seq", "1000000"));
	run(102, 105, GOOD, "/usr/bin/head", ARGV("head", "-1"));
	finish(105, 0);
	finish(104, SIGPIPE);
	run(102, 106, GOOD, "/usr/bin/yes", ARGV("yes"));
	run(102, 107, GOOD, "/usr/bin/head", ARGV("head", "-1"));
	finish(107, 0);
	finish(106, EXIT(1));
	run(102, 108, GOOD, "/usr/bin/test", ARGV("test", "-f", "missing.txt"));
	finish(108, EXIT(1));
	finish(102, 0);
	finish(101, 0);
	run(ROOT, 201, BAD, "/bin/bash", ARGV("bash", ".command.run"));
	run(201, 202, BAD, "/bin/bash", ARGV("bash", ".command.sh"));
	run(202, 203, BAD, "/bin/cat", ARGV("cat", "in.txt"));
	finish(203, 0);
	run(202, 204, BAD, "/bin/ls", ARGV("ls", "/nonexistent"));
	finish(204, EXIT(2));
	finish(202, EXIT(2));
	finish(201, EXIT(2));
}

/* A plain script: 101 grep -q (exit 1), 102 sort | 103 head (sort: SIGPIPE), then 104 ls (exit 2). */
static void script(uint32_t ls_raw, uint32_t root_raw)
{
	world();
	exec_env(ROOT, "/w", NULL, "/bin/sh", ARGV("sh", "run.sh"));
	run(ROOT, 101, "/w", "/bin/grep", ARGV("grep", "-q", "NNNN", "reads.fa"));
	finish(101, EXIT(1));
	run(ROOT, 102, "/w", "/usr/bin/sort", ARGV("sort", "-r", "reads.fa"));
	run(ROOT, 103, "/w", "/usr/bin/head", ARGV("head", "-n", "1000"));
	finish(103, 0);
	finish(102, SIGPIPE);
	run(ROOT, 104, "/w", "/bin/ls", ARGV("ls", "/nonexistent"));
	finish(104, ls_raw);
	run(ROOT, 105, "/w", "/bin/rm", ARGV("rm", "-rf", "/tmp/work")); /* an EXIT trap: after the failure */
	finish(105, 0);
	finish(ROOT, root_raw);
}

/* ---- steps ---------------------------------------------------------------- */

static void idioms_inside_a_step_that_succeeded_raise_no_signal_and_are_counted(void **state)
{
	char *j;

	(void)state;
	tasks();
	finish(ROOT, 0);
	j = json();
	assert_false(step_of(101)->failed);
	assert_int_equal(step_nonzero_exits(step_of(101)), 4); /* grep, seq, yes, test */
	assert_int_equal(count(signals_of(j), "\"kind\""), 1);  /* the bad task's, below */
	assert_int_equal(count(signals_of(j), "\"pid\":10"), 0);
	/* the idioms keep their status on the process */
	assert_contains(j, "\"tool\":\"grep\",\"step\":\"nf-ab/cdef01\",\"exit_code\":1,\"signal\":0,");
	assert_contains(j, "\"tool\":\"seq\",\"step\":\"nf-ab/cdef01\",\"exit_code\":null,\"signal\":13,");
	assert_contains(j, "\"id\":\"nf-ab/cdef01\",");
	assert_contains(j, "\"failed\":false,\"first_failed_pid\":103,\"processes\":8,\"running\":0,"
			   "\"failed_processes\":4,\"nonzero_exits\":4,");
	free(j);
	world_end();
}

static void a_step_that_failed_is_one_failed_signal_at_its_main_naming_the_first_failure(void **state)
{
	char *j;

	(void)state;
	tasks();
	finish(ROOT, 0); /* the launcher ignored the failed task */
	j = json();
	assert_true(step_of(201)->failed);
	assert_int_equal(step_nonzero_exits(step_of(201)), 2); /* .command.sh and ls; the main is the failure */
	assert_contains(j, "\"failed\":true,\"first_failed_pid\":204,\"processes\":4,\"running\":0,"
			   "\"failed_processes\":3,\"nonzero_exits\":2,");
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"failed\",\"pid\":201,\"step\":\"nf-fe/dcba98\","
				       "\"tool\":\".command.run\",\"cgroup\":null,\"exit_code\":2}]");
	free(j);
	world_end();
}

static void a_kill_is_killed_wherever_it_lands_but_sigpipe_is_not(void **state)
{
	char *j;

	(void)state;
	tasks();
	run(101, 109, GOOD, "/bin/sleep", ARGV("sleep", "30"));
	finish(109, SIGTERM);
	finish(ROOT, 0);
	j = json();
	assert_false(step_of(109)->failed); /* its main exited 0: the step did not fail */
	assert_int_equal(count(signals_of(j), "\"kind\":\"killed\""), 1);
	assert_contains(signals_of(j), "{\"kind\":\"killed\",\"pid\":109,\"step\":\"nf-ab/cdef01\",\"tool\":\"sleep\","
				       "\"cgroup\":null,\"signal\":15,\"core_dumped\":false}");
	assert_int_equal(count(signals_of(j), "\"pid\":104"), 0); /* seq's SIGPIPE */
	free(j);
	world_end();
}

static void an_oom_kill_in_a_step_is_oom_kill_and_the_step_fails_on_its_main(void **state)
{
	char *j;

	(void)state;
	world();
	exec_env(ROOT, "/w", NULL, "/bin/bash", ARGV("bash", "run.sh"));
	run(ROOT, 101, GOOD, "/bin/bash", ARGV("bash", ".command.run"));
	run(101, 102, GOOD, "/usr/bin/python3", ARGV("python3", "hog.py"));
	oom_kill(102);
	finish(101, EXIT(137));
	finish(ROOT, 0);
	j = json();
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"failed\",\"pid\":101,");
	assert_contains(signals_of(j), "\"exit_code\":137},{\"kind\":\"oom_kill\",\"pid\":102,");
	assert_ptr_equal(step_of(101)->first_failed, proctab_lookup(T, 102, starts[102])); /* the summary names it */
	assert_int_equal(count(signals_of(j), "\"kind\""), 2);
	free(j);
	world_end();
}

static void a_step_whose_main_was_killed_is_one_killed_signal(void **state)
{
	char *j;

	(void)state;
	world();
	exec_env(ROOT, "/w", NULL, "/bin/bash", ARGV("bash", "run.sh"));
	run(ROOT, 101, GOOD, "/bin/bash", ARGV("bash", ".command.run"));
	finish(101, SIGKILL);
	finish(ROOT, 0);
	j = json();
	assert_true(step_of(101)->failed);
	assert_int_equal(count(signals_of(j), "\"kind\""), 1); /* the kill is the failure: not two signals */
	assert_contains(signals_of(j), "[{\"kind\":\"killed\",\"pid\":101,\"step\":\"nf-ab/cdef01\",");
	free(j);
	world_end();
}

/* ---- the command and its generic steps ------------------------------------ */

static void a_script_that_succeeded_fails_none_of_its_commands(void **state)
{
	char *j;

	(void)state;
	script(EXIT(2), 0); /* it tested ls's status too */
	j = json();
	for (uint32_t pid = 101; pid <= 104; pid++) {
		assert_false(step_of(pid)->failed);
		assert_int_equal(step_nonzero_exits(step_of(pid)), pid == 103 ? 0 : 1);
	}
	assert_contains(j, "\"signals\":[]}");
	free(j);
	world_end();
}

static void a_failed_script_fails_the_command_it_stopped_at_and_itself(void **state)
{
	char *j;

	(void)state;
	script(EXIT(2), EXIT(2)); /* set -e stopped at ls; the trap's rm ran after */
	j = json();
	assert_false(step_of(101)->failed); /* grep -q: tolerated before */
	assert_false(step_of(102)->failed); /* sort: SIGPIPE, its pipe's normal end */
	assert_true(step_of(104)->failed);
	assert_int_equal(step_nonzero_exits(step_of(104)), 0);
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"failed\",\"pid\":100,\"step\":null,\"tool\":\"run.sh\","
				       "\"cgroup\":null,\"exit_code\":2},"
				       "{\"kind\":\"failed\",\"pid\":104,\"step\":\"proc-104\",\"tool\":\"ls\",");
	assert_int_equal(count(signals_of(j), "\"kind\""), 2);
	free(j);
	world_end();
}

static void a_command_killed_by_a_signal_fails_none_of_its_commands(void **state)
{
	char *j;

	(void)state;
	script(EXIT(2), SIGTERM); /* stopped from outside: not ls's doing */
	j = json();
	assert_false(step_of(104)->failed);
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"killed\",\"pid\":100,\"step\":null,");
	assert_int_equal(count(signals_of(j), "\"kind\""), 1);
	free(j);
	world_end();
}

static void a_command_ended_by_sigpipe_failed(void **state)
{
	char *j;

	(void)state;
	world();
	exec_env(ROOT, "/w", NULL, "/usr/bin/yes", ARGV("yes"));
	finish(ROOT, SIGPIPE); /* tracer run -- yes | head: the command's own status is 141 */
	j = json();
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"failed\",\"pid\":100,\"step\":null,\"tool\":\"yes\","
				       "\"cgroup\":null,\"exit_code\":null}]");
	free(j);
	world_end();
}

static void a_command_that_is_its_steps_main_fails_once(void **state)
{
	char *j, *s;

	(void)state;
	world();
	exec_env(ROOT, "/w", (const char *const[]){ "TRACER_STEP=align", NULL }, "/bin/bash", ARGV("bash", "align.sh"));
	run(ROOT, 101, "/w", "/usr/bin/bwa", ARGV("bwa", "mem", "ref.fa", "r.fq"));
	finish(101, EXIT(1));
	finish(ROOT, EXIT(1));
	j = json();
	assert_true(step_of(ROOT)->failed);
	assert_contains(signals_of(j), "\"signals\":[{\"kind\":\"failed\",\"pid\":100,\"step\":\"align\",\"tool\":"
				       "\"align.sh\",\"cgroup\":null,\"exit_code\":1}]");
	s = summary();
	assert_contains(s, "signals: 1\n  failed    pid 100 align.sh (step align): the command and its step failed, "
			   "exit 1; first to fail in it: pid 101 bwa mem, exit 1\n");
	free(s);
	free(j);
	world_end();
}

/* ---- the summary ---------------------------------------------------------- */

/* The line of s that starts (after indentation) with the pid. */
static const char *line_of(const char *s, uint32_t pid)
{
	char key[16];
	const char *p;

	snprintf(key, sizeof(key), "%u ", pid);
	for (p = strstr(s, key); p; p = strstr(p + 1, key)) {
		const char *bol = p;

		while (bol > s && bol[-1] == ' ')
			bol--;
		if (bol == s || bol[-1] == '\n')
			return p; /* only indentation before it: a process line, not "pid N" in a sentence */
	}
	fail_msg("no line for pid %u in:\n%s", pid, s);
	return NULL;
}

static void assert_line_ends(const char *s, uint32_t pid, const char *status)
{
	const char *l = line_of(s, pid), *eol = strchr(l, '\n');
	size_t n = strlen(status);

	if (!eol || (size_t)(eol - l) < n || memcmp(eol - n, status, n))
		fail_msg("pid %u: line does not end with \"%s\": %.*s", pid, status, (int)(eol ? eol - l : 80), l);
}

static void summary_says_failed_only_of_a_failure_and_explains_it(void **state)
{
	char *s;

	(void)state;
	tasks();
	finish(ROOT, 0);
	s = summary();
	assert_line_ends(s, 103, "  exit 1");
	assert_line_ends(s, 104, "  SIGPIPE (pipe closed)");
	assert_line_ends(s, 106, "  exit 1");
	assert_line_ends(s, 204, "  exit 2");
	assert_line_ends(s, 201, "  FAILED exit 2");
	assert_contains(s, "  ok (4 ended non-zero)\n");
	assert_contains(s, "  FAILED exit 2 (2 more ended non-zero)\n");
	assert_contains(s, "signals: 1\n  failed    pid 201 .command.run (step nf-fe/dcba98): the step failed, exit 2; "
			   "first to fail in it: pid 204 ls, exit 2\n");
	assert_contains(s, "totals: 13 processes (1 failed, 0 killed, 0 OOM-killed, 6 tolerated non-zero exits)");
	assert_int_equal(count(s, "FAILED"), 2); /* the task's main process and its step */
	assert_int_equal(count(s, "KILLED"), 0);
	free(s);
	world_end();
}

static void summary_explains_the_commands_failure(void **state)
{
	char *s;

	(void)state;
	script(EXIT(2), EXIT(2));
	s = summary();
	assert_line_ends(s, ROOT, "  FAILED exit 2");
	assert_line_ends(s, 101, "  exit 1");
	assert_line_ends(s, 104, "  FAILED exit 2");
	assert_contains(s, "  failed    pid 100 run.sh: the command failed, exit 2\n");
	assert_contains(s, "  failed    pid 104 ls (step proc-104): the step failed, exit 2\n");
	free(s);
	world_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idioms_inside_a_step_that_succeeded_raise_no_signal_and_are_counted),
		cmocka_unit_test(a_step_that_failed_is_one_failed_signal_at_its_main_naming_the_first_failure),
		cmocka_unit_test(a_kill_is_killed_wherever_it_lands_but_sigpipe_is_not),
		cmocka_unit_test(an_oom_kill_in_a_step_is_oom_kill_and_the_step_fails_on_its_main),
		cmocka_unit_test(a_step_whose_main_was_killed_is_one_killed_signal),
		cmocka_unit_test(a_script_that_succeeded_fails_none_of_its_commands),
		cmocka_unit_test(a_failed_script_fails_the_command_it_stopped_at_and_itself),
		cmocka_unit_test(a_command_killed_by_a_signal_fails_none_of_its_commands),
		cmocka_unit_test(a_command_ended_by_sigpipe_failed),
		cmocka_unit_test(a_command_that_is_its_steps_main_fails_once),
		cmocka_unit_test(summary_says_failed_only_of_a_failure_and_explains_it),
		cmocka_unit_test(summary_explains_the_commands_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
