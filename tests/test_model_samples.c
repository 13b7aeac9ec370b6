/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 4's records in the processor: exec context (cwd, allowlisted env),
 * cgroup paths, samples (series, peaks, stalls) and files - decoded as
 * untrusted bytes, applied to the table, bounded, and freed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "encode.h"
#include "report.h"
#include "report_steps.h"
#include "session.h"
#include "steps.h"

#define SEC 1000000000ULL

static const char *const ARGS[] = { "bash", ".command.run", NULL };

static struct session *new_session(uint64_t stall_after_ns)
{
	struct session *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(session_init(s, 1024, 0, 1), 0);
	s->tab.stall_after_ns = stall_after_ns;
	return s;
}

static void end_session(struct session *s)
{
	session_free(s);
	free(s);
}

/* Feed a record through a heap copy of exactly its size (ASan sees any overread). */
static int feed(struct session *s, unsigned type, const void *rec, size_t len)
{
	void *copy = malloc(len);
	int rc;

	assert_non_null(copy);
	memcpy(copy, rec, len);
	rc = session_record(s, type, copy, (uint32_t)len, NULL);
	free(copy);
	return rc;
}

static void exec_keeps_cwd_and_allowlisted_env(void **state)
{
	static unsigned char buf[DECODE_MAX_LEN];
	const char *env[] = { "TRACER_RUN_ID=run-7", "SLURM_JOB_ID=12345", NULL };
	struct session *s = new_session(0);
	size_t n = encode_exec_ctx(buf, sizeof(buf), 10, 100, 1, 5, "/bin/bash", ARGS, "/data/work/ab/cdef01", env);
	struct proc *p;

	(void)state;
	assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
	p = proctab_lookup(&s->tab, 100, 5);
	assert_non_null(p);
	assert_string_equal(proc_image_cwd(p->image), "/data/work/ab/cdef01");
	assert_string_equal(proc_image_env(p->image, "TRACER_RUN_ID"), "run-7");
	assert_string_equal(proc_image_env(p->image, "SLURM_JOB_ID"), "12345");
	assert_null(proc_image_env(p->image, "SLURM_JOB"));
	assert_null(proc_image_env(p->image, "HOME"));
	assert_string_equal(proc_image_tool(p->image), ".command.run");
	end_session(s);
}

static void exec_with_bad_cwd_or_env_is_refused(void **state)
{
	static unsigned char buf[DECODE_MAX_LEN];
	const char *no_eq[] = { "JUSTAKEY", NULL }, *no_key[] = { "=value", NULL };
	struct session *s = new_session(0);
	size_t n;

	(void)state;
	n = encode_exec_ctx(buf, sizeof(buf), 10, 100, 1, 5, "/bin/x", ARGS, "relative/dir", NULL);
	assert_int_equal(feed(s, TR_EXEC, buf, n), -EBADMSG);
	assert_int_equal(s->dec.error, DECODE_ERR_CWD);
	n = encode_exec_ctx(buf, sizeof(buf), 10, 100, 1, 5, "/bin/x", ARGS, "/ok", no_eq);
	assert_int_equal(feed(s, TR_EXEC, buf, n), -EBADMSG);
	assert_int_equal(s->dec.error, DECODE_ERR_ENV);
	n = encode_exec_ctx(buf, sizeof(buf), 10, 100, 1, 5, "/bin/x", ARGS, "/ok", no_key);
	assert_int_equal(feed(s, TR_EXEC, buf, n), -EBADMSG);
	/* The env area must end with its NUL: cut the last byte and shift the length. */
	n = encode_exec_ctx(buf, sizeof(buf), 10, 100, 1, 5, "/bin/x", ARGS, "/ok", (const char *[]){ "A=b", NULL });
	((struct tr_exec *)(void *)buf)->env_len--;
	assert_int_equal(feed(s, TR_EXEC, buf, n - 1), -EBADMSG);
	assert_int_equal(s->dec.error, DECODE_ERR_ENV);
	assert_int_equal(s->st.decode_errors, 4);
	end_session(s);
}

static void cgroup_paths_are_kept_by_hierarchy_and_id(void **state)
{
	unsigned char buf[256];
	struct session *s = new_session(0);
	size_t n;

	(void)state;
	n = encode_cgroup(buf, sizeof(buf), 1, 77, 0, "/system.slice/docker-abc.scope");
	assert_int_equal(feed(s, TR_CGROUP, buf, n), 0);
	n = encode_cgroup(buf, sizeof(buf), 1, 77, 1, "/docker/abc");
	assert_int_equal(feed(s, TR_CGROUP, buf, n), 0);
	assert_string_equal(cgtab_path(&s->cgroups, 0, 77), "/system.slice/docker-abc.scope");
	assert_string_equal(cgtab_path(&s->cgroups, 1, 77), "/docker/abc");
	assert_null(cgtab_path(&s->cgroups, 0, 78));
	/* Not absolute, unknown hierarchy: refused. */
	n = encode_cgroup(buf, sizeof(buf), 1, 79, 0, "docker/abc");
	assert_int_equal(feed(s, TR_CGROUP, buf, n), -EBADMSG);
	n = encode_cgroup(buf, sizeof(buf), 1, 79, 2, "/x");
	assert_int_equal(feed(s, TR_CGROUP, buf, n), -EBADMSG);
	assert_null(cgtab_path(&s->cgroups, 0, 79));
	end_session(s);
}

static void files_merge_modes_by_path_and_are_bounded(void **state)
{
	unsigned char buf[256];
	struct session *s = new_session(0);
	struct proc *p;
	char path[64];
	size_t n;

	(void)state;
	n = encode_file(buf, sizeof(buf), 1, 100, 5, TR_FILE_READ, "/data/in.fq");
	assert_int_equal(feed(s, TR_FILE, buf, n), 0);
	n = encode_file(buf, sizeof(buf), 2, 100, 5, TR_FILE_WRITE, "/data/out.bam");
	assert_int_equal(feed(s, TR_FILE, buf, n), 0);
	n = encode_file(buf, sizeof(buf), 3, 100, 5, TR_FILE_WRITE, "/data/in.fq");
	assert_int_equal(feed(s, TR_FILE, buf, n), 0);
	p = proctab_lookup(&s->tab, 100, 5);
	assert_non_null(p);
	assert_int_equal(p->n_files, 2);
	assert_string_equal(p->files[0].path, "/data/in.fq");
	assert_int_equal(p->files[0].mode, TR_FILE_READ | TR_FILE_WRITE);
	assert_int_equal(p->files[1].mode, TR_FILE_WRITE);
	for (unsigned i = 0; i < PROC_MAX_FILES + 10; i++) {
		snprintf(path, sizeof(path), "/tmp/f%u", i);
		n = encode_file(buf, sizeof(buf), 4 + i, 100, 5, TR_FILE_READ, path);
		feed(s, TR_FILE, buf, n);
	}
	assert_int_equal(p->n_files, PROC_MAX_FILES);
	assert_int_equal(p->files_dropped, 12);
	/* Bad modes and relative paths are refused. */
	n = encode_file(buf, sizeof(buf), 9, 100, 5, 0, "/x");
	assert_int_equal(feed(s, TR_FILE, buf, n), -EBADMSG);
	n = encode_file(buf, sizeof(buf), 9, 100, 5, 0x40 | TR_FILE_READ, "/x");
	assert_int_equal(feed(s, TR_FILE, buf, n), -EBADMSG);
	n = encode_file(buf, sizeof(buf), 9, 100, 5, TR_FILE_READ, "x");
	assert_int_equal(feed(s, TR_FILE, buf, n), -EBADMSG);
	end_session(s);
}

static void samples_build_a_bounded_series_with_peaks(void **state)
{
	struct session *s = new_session(0);
	struct proc *p;

	(void)state;
	/* One CPU busy for 1000 s, RSS growing, then a burst of two CPUs. */
	for (uint64_t i = 0; i <= 1000; i++) {
		struct tr_sample sm = encode_sample(i * SEC, 100, 5, 1, i * SEC, (i + 1) << 20, i * 4096);

		assert_int_equal(feed(s, TR_SAMPLE, &sm, sizeof(sm)), 0);
	}
	struct tr_sample burst = encode_sample(1001 * SEC, 100, 5, 1, 1002 * SEC, 10 << 20, 1000 * 4096);

	assert_int_equal(feed(s, TR_SAMPLE, &burst, sizeof(burst)), 0);
	p = proctab_lookup(&s->tab, 100, 5);
	assert_non_null(p->series);
	assert_true(p->series->n <= SERIES_MAX_POINTS);
	assert_true(p->series->n >= SERIES_MAX_POINTS / 2);
	assert_int_equal(p->series->samples, 1002);
	assert_int_equal(p->series->points[0].ts_ns, 0);
	assert_int_equal(p->series->points[p->series->n - 1].ts_ns, 1001 * SEC);
	for (uint32_t i = 1; i < p->series->n; i++)
		assert_true(p->series->points[i].ts_ns > p->series->points[i - 1].ts_ns);
	assert_int_equal(p->series->peaks.cpu_millicores, 2000);
	assert_int_equal(p->series->peaks.rss_bytes, 1001ULL << 20);
	assert_true(s->tab.series_bytes <= series_bytes(SERIES_MAX_POINTS));
	end_session(s);
	(void)0;
}

static void series_over_budget_keep_the_newest_samples_peaks_and_count(void **state)
{
	struct session *s = new_session(0);

	(void)state;
	s->tab.series_budget = series_bytes(SERIES_FIRST_CAP); /* room for one process's first points */
	for (uint32_t pid = 100; pid < 103; pid++)
		for (uint64_t i = 0; i < 6; i++) {
			struct tr_sample sm = encode_sample(i * SEC, pid, 5, 1, i * SEC, 1 << 20, 0);

			feed(s, TR_SAMPLE, &sm, sizeof(sm));
		}
	/* Points within the budget; beyond it each process keeps a header: its newest samples and peaks. */
	assert_true(s->tab.series_bytes <= s->tab.series_budget + 2 * series_bytes(0));
	assert_true(s->tab.st.series_dropped > 0);
	for (uint32_t pid = 101; pid < 103; pid++) {
		const struct proc *p = proctab_lookup(&s->tab, pid, 5);

		assert_non_null(p);
		assert_non_null(p->series);
		assert_int_equal(p->series->n, 0);
		assert_int_equal(p->series->last.runtime_ns, 5 * SEC);
		assert_int_equal(p->series->prev.runtime_ns, 4 * SEC);
		assert_int_equal(p->series->peaks.cpu_millicores, 1000);
	}
	end_session(s);
}

static void gaps_without_progress_are_stalls(void **state)
{
	unsigned char buf[1024];
	struct session *s = new_session(3 * SEC);
	struct tr_exit x;
	struct proc *p;
	size_t n = encode_exec(buf, sizeof(buf), 1 * SEC, 100, 1, 5, "/bin/cat", (const char *[]){ "cat", "fifo", NULL });
	struct tr_sample a = encode_sample(1 * SEC + 1000, 100, 5, 1, 1000000, 1 << 20, 0);
	/* Same counters 2 s later: a sample that shows no progress does not end the gap. */
	struct tr_sample b = encode_sample(3 * SEC, 100, 5, 1, 1000000, 1 << 20, 0);
	struct tr_sample c = encode_sample(9 * SEC, 100, 5, 1, 2000000, 1 << 20, 100);

	(void)state;
	assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
	feed(s, TR_SAMPLE, &a, sizeof(a));
	feed(s, TR_SAMPLE, &b, sizeof(b));
	p = proctab_lookup(&s->tab, 100, 5);
	assert_true(proctab_stalled_now(&s->tab, p, 5 * SEC));
	assert_false(proctab_stalled_now(&s->tab, p, 3 * SEC));
	feed(s, TR_SAMPLE, &c, sizeof(c));
	assert_int_equal(p->stalls, 1);
	assert_int_equal(p->stall_start_ns, 1 * SEC + 1000);
	assert_int_equal(p->stall_ns, 8 * SEC - 1000);
	x = (struct tr_exit){ .hdr = encode_hdr(TR_EXIT, 10 * SEC), .pid = 100, .tgid = 100, .ppid = 1, .start_ns = 5 };
	assert_int_equal(feed(s, TR_EXIT, &x, sizeof(x)), 0);
	assert_int_equal(p->stalls, 1); /* 1 s from the last progress to the exit: no stall */
	assert_false(proctab_stalled_now(&s->tab, p, 100 * SEC));
	end_session(s);
}

/* Daemon mode: a process the kernel first met running (no fork, no exec seen) is marked as such. */
static void preexisting_processes_are_reported_and_marked(void **state)
{
	struct session *s = new_session(0);
	struct tr_sample sm = encode_sample(5 * SEC, 300, 1, 1, 7 * SEC, 8 << 20, 0);
	struct tr_fork f = encode_fork(6 * SEC, 300, 1, 301, 6 * SEC);
	struct proc *p, *c;

	(void)state;
	sm.state_flags |= TR_PSTATE_PREEXISTING;
	memcpy(sm.comm, "postgres", 9);
	assert_int_equal(feed(s, TR_SAMPLE, &sm, sizeof(sm)), 0);
	assert_int_equal(feed(s, TR_FORK, &f, sizeof(f)), 0);
	p = proctab_lookup(&s->tab, 300, 1);
	c = proctab_lookup(&s->tab, 301, 6 * SEC);
	assert_non_null(p);
	assert_non_null(c);
	assert_true(p->flags & PROC_F_PREEXISTING);
	assert_string_equal(p->comm, "postgres");
	assert_int_equal(p->ppid, 1);
	assert_false(c->flags & PROC_F_PREEXISTING); /* its child was seen being born */
	assert_ptr_equal(proctab_parent(&s->tab, c), p);
	end_session(s);
}

/* The report with the processor's default io_wait_after (tracer.conf's). */
static char *report_of(struct session *s, uint64_t stall_after_ns)
{
	struct report_input in = { .exit_known = true, .cgroups = &s->cgroups, .stall_after_ns = stall_after_ns };
	struct obuf o;

	assert_int_equal(config_key_number("io_wait_after", &in.io_wait_after_ns, NULL, NULL), 0);
	report_agent_from_session(&in.agent, s);
	obuf_init_mem(&o, 1 << 20);
	assert_int_equal(report_json(&o, &s->tab, &in), 0);
	obuf_putc(&o, 0);
	assert_int_equal(o.err, 0);
	return o.buf;
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing: %s\nin: %.3000s", needle, hay);
}

static void assert_hasnt(const char *hay, const char *needle)
{
	if (strstr(hay, needle))
		fail_msg("unexpected: %s", needle);
}

/*
 * bash (root) waits 8 s for cat, which is blocked on a FIFO: cat is
 * stalled, bash is not (its child was alive all along). Context fields
 * reach the report: cwd, cgroup path, files with modes, series, waits.
 */
static void report_shows_context_files_series_and_the_stalled_leaf(void **state)
{
	static unsigned char buf[DECODE_MAX_LEN];
	const char *const dir = "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";
	struct session *s = calloc(1, sizeof(*s));
	struct tr_fork f = encode_fork(1 * SEC + 10, 100, 5, 101, 6);
	struct tr_sample a = encode_sample(1 * SEC + 20, 101, 6, 100, 500000, 2 << 20, 10);
	struct tr_sample b = encode_sample(9 * SEC, 101, 6, 100, 900000, 3 << 20, 4096);
	struct tr_exit x1 = { .hdr = encode_hdr(TR_EXIT, 9 * SEC + 100), .pid = 101, .tgid = 101, .ppid = 100,
			      .start_ns = 6, .cgroup_id = 77, .state_flags = TR_PSTATE_TRACED, .net_tx_bytes = 5,
			      .net_rx_bytes = 7, .iowait_ns = 11 * SEC };
	struct tr_exit x0 = { .hdr = encode_hdr(TR_EXIT, 9 * SEC + 200), .pid = 100, .tgid = 100, .ppid = 1,
			      .start_ns = 5, .cgroup_id = 77, .state_flags = TR_PSTATE_TRACED };
	char *j;
	size_t n;

	(void)state;
	assert_non_null(s);
	assert_int_equal(session_init(s, 64, 100, 1), 0);
	s->tab.stall_after_ns = 3 * SEC;
	n = encode_cgroup(buf, sizeof(buf), 1 * SEC, 77, 0, dir);
	assert_int_equal(feed(s, TR_CGROUP, buf, n), 0);
	n = encode_exec_ctx(buf, sizeof(buf), 1 * SEC, 100, 1, 5, "/bin/bash", (const char *[]){ "bash", "run.sh", NULL },
			    "/w", NULL);
	assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
	assert_int_equal(feed(s, TR_FORK, &f, sizeof(f)), 0);
	n = encode_exec_ctx(buf, sizeof(buf), 1 * SEC + 15, 101, 100, 6, "/bin/cat", (const char *[]){ "cat", "fifo", NULL },
			    "/w", NULL);
	assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
	n = encode_file(buf, sizeof(buf), 1 * SEC + 16, 101, 6, TR_FILE_READ, "/w/fifo.txt");
	assert_int_equal(feed(s, TR_FILE, buf, n), 0);
	n = encode_file(buf, sizeof(buf), 1 * SEC + 17, 101, 6, TR_FILE_WRITE, "/w/out");
	assert_int_equal(feed(s, TR_FILE, buf, n), 0);
	assert_int_equal(feed(s, TR_SAMPLE, &a, sizeof(a)), 0);
	assert_int_equal(feed(s, TR_SAMPLE, &b, sizeof(b)), 0);
	assert_int_equal(feed(s, TR_EXIT, &x1, sizeof(x1)), 0);
	assert_int_equal(feed(s, TR_EXIT, &x0, sizeof(x0)), 0);
	j = report_of(s, 3 * SEC);
	assert_has(j, "\"cwd\":\"/w\"");
	assert_has(j, "\"net_tx_bytes\":5,\"net_rx_bytes\":7,\"container_id\":");
	assert_has(j, dir);
	assert_has(j, "\"container_id\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"");
	assert_has(j, "\"container_runtime\":\"docker\"");
	assert_has(j, "\"files\":[{\"path\":\"/w/fifo.txt\",\"mode\":\"r\"},{\"path\":\"/w/out\",\"mode\":\"w\"}]");
	assert_has(j, "\"series\":{\"samples\":2,");
	assert_has(j, "\"rss_bytes\":[2097152,3145728]");
	assert_has(j, "{\"kind\":\"stalled\",\"pid\":101,");
	assert_hasnt(j, "{\"kind\":\"stalled\",\"pid\":100,");
	assert_has(j, "{\"kind\":\"io_wait\",\"pid\":101,");
	free(j);
	/* Without a stall threshold there is no stall. */
	j = report_of(s, 0);
	assert_hasnt(j, "\"kind\":\"stalled\"");
	free(j);
	end_session(s);
}

/*
 * A step's series sums its processes: all of the CPU and I/O they had at
 * exit is spread over its buckets (nothing lost, nothing counted twice),
 * and its RSS column sums the processes running side by side.
 */
static void step_series_sum_the_step_processes(void **state)
{
	static unsigned char buf[DECODE_MAX_LEN];
	struct session *s = calloc(1, sizeof(*s));
	struct steps st;
	struct step_series *ss;
	struct proc *v[3];
	uint64_t cpu = 0, io = 0, rss_peak = 0;
	size_t n;

	(void)state;
	assert_non_null(s);
	assert_int_equal(session_init(s, 64, 100, 1), 0);
	n = encode_exec(buf, sizeof(buf), 1 * SEC, 100, 1, 5, "/bin/bash", (const char *[]){ "bash", "run.sh", NULL });
	assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
	/* Two children of the root, each a step: 102 runs beside 101. */
	for (uint32_t c = 101; c <= 102; c++) {
		struct tr_fork f = encode_fork(1 * SEC + c, 100, 5, c, 1 * SEC + c);
		struct tr_exit x = { .hdr = encode_hdr(TR_EXIT, 9 * SEC), .pid = c, .tgid = c, .ppid = 100,
				     .start_ns = 1 * SEC + c, .runtime_ns = 7 * SEC + c, .read_bytes = 1000 * c,
				     .write_bytes = 5, .maxrss_bytes = 9 << 20 };

		assert_int_equal(feed(s, TR_FORK, &f, sizeof(f)), 0);
		n = encode_exec(buf, sizeof(buf), 1 * SEC + c + 1, c, 100, 1 * SEC + c, "/usr/bin/bwa",
				(const char *[]){ "bwa", "mem", "ref.fa", NULL });
		assert_int_equal(feed(s, TR_EXEC, buf, n), 0);
		for (uint64_t t = 2; t <= 8; t++) {
			struct tr_sample sm = encode_sample(t * SEC, c, 1 * SEC + c, 100, (t - 1) * SEC, (c - 100) << 20, 0);

			sm.read_bytes = 100 * t;
			assert_int_equal(feed(s, TR_SAMPLE, &sm, sizeof(sm)), 0);
		}
		assert_int_equal(feed(s, TR_EXIT, &x, sizeof(x)), 0);
	}
	proctab_mark_tree(&s->tab);
	assert_int_equal(steps_init(&st, 0, 1), 0);
	assert_int_equal(steps_build(&st, &s->tab), 0);
	assert_int_equal(st.n, 2);
	v[0] = proctab_lookup(&s->tab, 100, 5);
	v[1] = proctab_lookup(&s->tab, 101, 1 * SEC + 101);
	v[2] = proctab_lookup(&s->tab, 102, 1 * SEC + 102);
	ss = report_step_series(&st, v, 3);
	assert_non_null(ss);
	for (uint32_t i = 0; i < st.n; i++) {
		const struct proc *p = st.v[i].main;

		cpu = io = rss_peak = 0;
		for (unsigned b = 0; b < STEP_SERIES_BUCKETS; b++) {
			cpu += ss[i].cpu_ns[b];
			io += ss[i].io_bytes[b];
			rss_peak = ss[i].rss_bytes[b] > rss_peak ? ss[i].rss_bytes[b] : rss_peak;
		}
		/* Spreading rounds down: within a nanosecond per bucket and segment. */
		assert_true(cpu <= p->exit.runtime_ns && cpu + 8 * STEP_SERIES_BUCKETS >= p->exit.runtime_ns);
		assert_true(io <= p->exit.read_bytes + 5 && io + 8 * STEP_SERIES_BUCKETS >= p->exit.read_bytes + 5);
		assert_int_equal(rss_peak, (uint64_t)(p->tgid - 100) << 20);
	}
	free(ss);
	steps_free(&st);
	end_session(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_keeps_cwd_and_allowlisted_env),
		cmocka_unit_test(exec_with_bad_cwd_or_env_is_refused),
		cmocka_unit_test(cgroup_paths_are_kept_by_hierarchy_and_id),
		cmocka_unit_test(files_merge_modes_by_path_and_are_bounded),
		cmocka_unit_test(samples_build_a_bounded_series_with_peaks),
		cmocka_unit_test(series_over_budget_keep_the_newest_samples_peaks_and_count),
		cmocka_unit_test(gaps_without_progress_are_stalls),
		cmocka_unit_test(preexisting_processes_are_reported_and_marked),
		cmocka_unit_test(step_series_sum_the_step_processes),
		cmocka_unit_test(report_shows_context_files_series_and_the_stalled_leaf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
