/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --trace-pid on the real kernel: the programs are loaded to trace one
 * process that is waiting before they start (as `tracer run`'s command
 * is), and then only it and its descendants - orphans included - produce
 * records; nothing at all is emitted about any other process. Needs root.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf_harness.h"
#include "skip.h"

static pid_t root_pid;
static int go_fd = -1;
static int report_fd = -1; /* the traced root writes its orphan's pid here */

static int exec_true(void)
{
	static char a0[] = "/bin/true";
	char *const argv[] = { a0, NULL };
	char *const envp[] = { NULL };

	execve(a0, argv, envp);
	return 127;
}

static int open_passwd(void)
{
	int fd = open("/etc/passwd", O_RDONLY);

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

/* The traced root: waits for go, then forks a child that execs, opens a file, leaves an orphan. */
static int traced_root(void *arg)
{
	int fds[2], st;
	char c;
	pid_t child, orphan_parent, orphan;

	memcpy(fds, arg, sizeof(fds));
	if (read(fds[0], &c, 1) != 1)
		return 1;
	child = fork();
	if (child == 0)
		_exit(exec_true());
	if (child < 0 || waitpid(child, &st, 0) != child || open_passwd())
		return 2;
	/* An intermediate that exits at once: its child is re-parented, and still traced. */
	orphan_parent = fork();
	if (orphan_parent == 0) {
		orphan = fork();
		if (orphan == 0) {
			usleep(200000);
			_exit(open_passwd());
		}
		_exit(write(fds[1], &orphan, sizeof(orphan)) == sizeof(orphan) ? 0 : 1);
	}
	return orphan_parent > 0 && waitpid(orphan_parent, &st, 0) == orphan_parent ? 0 : 3;
}

static int untraced(void *arg)
{
	(void)arg;
	if (open_passwd())
		return 1;
	return exec_true();
}

static void test_only_the_seeded_process_and_its_descendants_are_traced(void **state)
{
	const struct tr_fork *f;
	const struct tr_exec *e;
	const struct tr_file *file;
	const struct tr_exit *x;
	uint64_t root_start = 0;
	size_t pos = 0;
	pid_t other, child = 0, orphan;
	unsigned forks = 0;

	(void)state;
	other = harness_spawn(untraced, NULL);
	assert_int_equal(write(go_fd, "g", 1), 1);
	harness_reap(root_pid);
	assert_int_equal(read(report_fd, &orphan, sizeof(orphan)), sizeof(orphan));
	assert_non_null(harness_wait_for(TR_EXIT, orphan, 3000, NULL));
	assert_int_equal(waitpid(other, NULL, 0), other);
	usleep(100000);
	harness_drain();

	/* The root's fork of the child, the child's exec of /bin/true, both exits. */
	while ((f = harness_next(&pos, TR_FORK, NULL))) {
		assert_true((pid_t)f->parent_tgid != getpid() && (pid_t)f->parent_tgid != other);
		if ((pid_t)f->parent_tgid == root_pid && !child) {
			child = (pid_t)f->child_tgid;
			root_start = f->parent_start_ns;
		}
		forks++;
	}
	assert_int_equal(forks, 3); /* child, orphan's parent, orphan */
	e = harness_find(TR_EXEC, child, NULL);
	assert_non_null(e);
	assert_string_equal((const char *)(e + 1), "/bin/true");
	assert_non_null(harness_find(TR_EXIT, child, NULL));
	/* The root's state was seeded without a start time: its first event (the fork) claimed it. */
	file = harness_find(TR_FILE, root_pid, NULL);
	x = harness_find(TR_EXIT, root_pid, NULL);
	assert_non_null(file);
	assert_non_null(x);
	assert_true(x->start_ns != 0);
	assert_int_equal(file->start_ns, x->start_ns);
	assert_int_equal(root_start, x->start_ns);
	assert_int_equal(x->state_flags, TR_PSTATE_TRACED);
	assert_non_null(harness_find(TR_FILE, orphan, NULL));
	/* Nothing about any other process: not the unrelated one, not this test itself. */
	for (unsigned t = TR_EXEC; t < TR_KERNEL_TYPES_END; t++) {
		assert_int_equal(harness_count(t, other), 0);
		assert_int_equal(harness_count(t, getpid()), 0);
	}
	pos = 0;
	while ((e = harness_next(&pos, TR_EXEC, NULL)))
		assert_true((pid_t)e->tgid == child);
}

static int setup(void **state)
{
	static int fds[2];
	int go[2], rep[2];

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(rep), 0);
	fds[0] = go[0];
	fds[1] = rep[1];
	root_pid = harness_spawn(traced_root, fds);
	close(go[0]);
	close(rep[1]);
	go_fd = go[1];
	report_fd = rep[0];
	harness_start(root_pid, 200, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_seeded_process_and_its_descendants_are_traced),
	};
	const char *why = harness_unavailable();

	if (why)
		return test_skip_all("%s", why);
	return cmocka_run_group_tests(tests, setup, teardown);
}
