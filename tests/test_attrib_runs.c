/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Daemon mode's runs (attrib/runs.c) and their live records
 * (report/live.c): which process starts a run, nesting, membership, the
 * run's identity, the records a run gets as it starts, runs and ends,
 * signals, folding of evicted processes, what the table must keep, and
 * records split at TL_RUN_MAX. Process trees are built from records the
 * way the kernel sends them.
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

#include "decode.h"
#include "encode.h"
#include "json_parse.h"
#include "lake.h"
#include "lake_members.h"
#include "live.h"
#include "runs.h"
#include "runs_ckpt.h"
#include "schema.h"
#include "session.h"
#include "steps.h"
#include "toolrules.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define ENV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define MAXPID 70000
#define SEC 1000000000ULL

static struct session SS;
static struct steps S;
static struct runs R;
static struct live L;
static struct decoded dec;
static uint64_t starts[MAXPID];
static uint64_t clk;

/* What the live records said: every payload, kept. */
static char *payloads[4096];
static uint32_t payload_len[4096];
static uint16_t payload_type[4096];
static size_t npayloads;
static int emit_error;

static int emit(void *ctx, uint16_t type, const void *payload, uint32_t len)
{
	(void)ctx;
	if (emit_error)
		return emit_error;
	assert_true(npayloads < 4096);
	assert_true(type == TL_RUN || type == TL_TOOLS);
	payload_type[npayloads] = type;
	payloads[npayloads] = malloc(len + 1);
	assert_non_null(payloads[npayloads]);
	memcpy(payloads[npayloads], payload, len);
	payloads[npayloads][len] = 0;
	payload_len[npayloads++] = len;
	return 0;
}

static void forget_payloads(void)
{
	for (size_t i = 0; i < npayloads; i++)
		free(payloads[i]);
	npayloads = 0;
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(session_init(&SS, 65536, 0, 42), 0);
	assert_int_equal(steps_init(&S, 0, 7), 0);
	runs_init(&R, "b00t");
	live_init(&L);
	L.emit = emit;
	L.io_wait_after_ns = 10 * SEC;
	SS.tab.on_evict = runs_on_evict;
	SS.tab.evict_ctx = &R;
	memset(starts, 0, sizeof(starts));
	clk = 1000 * SEC;
	emit_error = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	forget_payloads();
	live_free(&L);
	runs_free(&R);
	steps_free(&S);
	session_free(&SS);
	return 0;
}

static void exec_in(uint32_t pid, const char *cwd, const char *const *env, const char *path, const char *const *argv)
{
	_Alignas(8) static unsigned char buf[DECODE_MAX_LEN];
	size_t n;

	if (!starts[pid])
		starts[pid] = (clk += 1000);
	n = encode_exec_ctx(buf, sizeof(buf), clk += 1000, pid, 1, starts[pid], path, argv, cwd, env);
	assert_true(n > 0);
	assert_int_equal(decode_record(&dec, TR_EXEC, buf, (uint32_t)n), 0);
	assert_int_equal(proctab_exec(&SS.tab, &dec.u.exec, clk, NULL), 0);
}

static void spawn(uint32_t parent, uint32_t child)
{
	struct tr_fork f;

	starts[child] = (clk += 1000);
	f = encode_fork(clk, parent, starts[parent], child, starts[child]);
	assert_int_equal(proctab_fork(&SS.tab, &f, clk), 0);
}

static void run(uint32_t parent, uint32_t child, const char *const *env, const char *path, const char *const *argv)
{
	spawn(parent, child);
	exec_in(child, "/data/wf", env, path, argv);
}

static void finish(uint32_t pid, uint32_t raw, uint64_t runtime)
{
	struct tr_exit x = encode_exit(clk += 1000, pid, starts[pid], 1, raw);

	x.runtime_ns = runtime;
	x.image_peak_rss_bytes = 1 << 20;
	assert_int_equal(proctab_exit(&SS.tab, &x, clk, NULL), 0);
}

static struct proc *P(uint32_t pid)
{
	struct proc *p = proctab_lookup(&SS.tab, pid, starts[pid]);

	assert_non_null(p);
	return p;
}

static struct run *run_of(uint32_t pid)
{
	return runs_of(&R, P(pid));
}

/* One look a second later. */
static void cycle(void)
{
	clk += SEC;
	assert_int_equal(live_cycle(&L, &SS, &S, &R, clk), 0);
}

/* Does any payload since `from` contain every needle? */
static bool said(size_t from, const char *needle)
{
	for (size_t i = from; i < npayloads; i++)
		if (strstr(payloads[i], needle))
			return true;
	return false;
}

/* A Snakemake run as Debian's snakemake 7 runs it: the engine, a job shell, the job's tools. */
static void snakemake_run(uint32_t root, const char *const *env)
{
	exec_in(root, "/data/wf", env, "/usr/bin/python3", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c2"));
	run(root, root + 1, env, "/bin/bash", ARGV("/bin/bash", "-c", "set -euo pipefail; bwa mem ref.fa r.fq | samtools view -b"));
	run(root + 1, root + 2, env, "/usr/bin/bwa", ARGV("bwa", "mem", "ref.fa", "r.fq"));
	run(root + 1, root + 3, env, "/usr/bin/samtools", ARGV("samtools", "view", "-b"));
}

/* ---- which process starts a run ---------------------------------------- */

static void test_engine_invocation_starts_a_run_its_children_join(void **state)
{
	(void)state;
	snakemake_run(100, NULL);
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 1);
	assert_non_null(run_of(100));
	assert_ptr_equal(run_of(103), run_of(100));
	assert_int_equal(run_of(100)->detected_by, RUN_BY_SNAKEMAKE);
	assert_int_equal(run_of(100)->engine, STEP_ENGINE_SNAKEMAKE);
	assert_string_equal(run_of(100)->workflow, "/data/wf/Snakefile");
	assert_string_equal(run_of(100)->key, "b00t-100-1000000001000");
}

static void test_plain_processes_start_no_run(void **state)
{
	(void)state;
	exec_in(10, "/root", NULL, "/bin/bash", ARGV("-bash"));
	run(10, 11, NULL, "/bin/ls", ARGV("ls", "-l"));
	run(10, 12, NULL, "/usr/bin/python3", ARGV("python3", "backup.py"));
	run(12, 13, ENV("HOME=/root"), "/usr/bin/rsync", ARGV("rsync", "-a", "x", "y"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 0);
	assert_int_equal(R.live, 0);
	cycle();
	/* No run: only their tools, once each, in one TL_TOOLS record. */
	assert_int_equal(npayloads, 1);
	assert_int_equal(payload_type[0], TL_TOOLS);
	assert_non_null(strstr(payloads[0], "{\"schema\":\"tracer.tools.v1\",\"processes\":[{\"pid\":10,"));
	assert_true(said(0, "{\"pid\":11,\"start_mono_ns\":1000000003000,\"tool\":\"ls\"}"));
	assert_true(said(0, "\"tool\":\"backup.py\"}"));
	assert_true(said(0, "\"tool\":\"rsync\"}"));
	cycle();
	assert_int_equal(npayloads, 1);
	exec_in(12, "/root", NULL, "/usr/bin/gzip", ARGV("gzip", "x")); /* a new image: its tool again */
	cycle();
	assert_int_equal(npayloads, 2);
	assert_non_null(strstr(payloads[1], "\"processes\":[{\"pid\":12,"));
	assert_non_null(strstr(payloads[1], "\"tool\":\"gzip\"}]}"));
}

static void test_snakemake_inside_a_slurm_job_is_one_run(void **state)
{
	const char *const *env = ENV("SLURM_JOB_ID=4242", "SLURM_STEP_ID=batch");

	(void)state;
	exec_in(50, "/home/u", env, "/bin/bash", ARGV("/bin/bash", "/var/spool/slurmd/job04242/slurm_script"));
	spawn(50, 100);
	snakemake_run(100, env);
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 1);
	assert_ptr_equal(run_of(100), run_of(50));
	assert_ptr_equal(run_of(103), run_of(50));
	assert_int_equal(run_of(50)->detected_by, RUN_BY_SLURM);
	assert_int_equal(run_of(50)->engine, STEP_ENGINE_SNAKEMAKE);
	assert_string_equal(run_of(50)->env[RUN_ENV_SLURM], "4242");
	cycle();
	assert_true(said(0, "\"detected_by\":\"slurm\""));
	assert_true(said(0, "\"engine\":\"snakemake\""));
	assert_true(said(0, "\"run_id\":\"4242\""));
}

static void test_tracer_run_command_is_a_run_not_its_daemons(void **state)
{
	(void)state;
	exec_in(20, "/home/u", NULL, "/usr/bin/tracer", ARGV("tracer", "run", "--", "make", "all"));
	run(20, 21, NULL, "/usr/libexec/tracer/tracer-collector", ARGV("tracer-collector", "--socket", "/run/x"));
	spawn(20, 22); /* the command, before its exec: decided again once it execs */
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 0);
	exec_in(22, "/home/u", NULL, "/usr/bin/make", ARGV("make", "all"));
	run(22, 23, NULL, "/usr/bin/cc", ARGV("cc", "-c", "x.c"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 1);
	assert_null(run_of(21));
	assert_null(run_of(20));
	assert_int_equal(run_of(22)->detected_by, RUN_BY_TRACER_RUN);
	assert_ptr_equal(run_of(23), run_of(22));
	/* tracer run's helper fork that never execs, starting the command itself: the command is the run */
	spawn(20, 30);
	run(30, 31, NULL, "/bin/sh", ARGV("sh", "-c", "make"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 1);
	assert_null(run_of(30));
	assert_int_equal(run_of(31)->detected_by, RUN_BY_TRACER_RUN);
}

static void test_environment_ids_start_a_run_and_name_it(void **state)
{
	(void)state;
	exec_in(30, "/w", ENV("TRACER_RUN_ID=nightly-7", "TRACER_PIPELINE=rnaseq"), "/bin/sh", ARGV("sh", "run.sh"));
	run(30, 31, ENV("TRACER_RUN_ID=nightly-7", "TRACER_PIPELINE=rnaseq"), "/usr/bin/salmon",
	    ARGV("salmon", "quant", "-i", "idx"));
	exec_in(40, "/w", ENV("AWS_BATCH_JOB_ID=a1b2"), "/bin/sh", ARGV("sh", "job.sh"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 2);
	assert_int_equal(run_of(30)->detected_by, RUN_BY_ENV);
	assert_int_equal(run_of(40)->detected_by, RUN_BY_AWS_BATCH);
	cycle();
	assert_true(said(0, "\"pipeline\":\"rnaseq\""));
	assert_true(said(0, "\"run_id\":\"nightly-7\""));
	assert_true(said(0, "\"aws_batch_job_id\":\"a1b2\""));
}

/* Two runs naming a step alike (TRACER_STEP=grow in each): each run has its own step, with its own row. */
static void test_runs_naming_a_step_alike_each_have_their_own(void **state)
{
	const struct step *a, *b;

	(void)state;
	exec_in(30, "/w", ENV("TRACER_PIPELINE=p"), "/bin/sh", ARGV("sh", "a.sh"));
	run(30, 31, ENV("TRACER_PIPELINE=p", "TRACER_STEP=grow"), "/usr/bin/gzip", ARGV("gzip", "x"));
	exec_in(40, "/w", ENV("TRACER_PIPELINE=p"), "/bin/sh", ARGV("sh", "b.sh"));
	run(40, 41, ENV("TRACER_PIPELINE=p", "TRACER_STEP=grow"), "/usr/bin/gzip", ARGV("gzip", "y"));
	cycle();
	assert_true(run_of(31) != run_of(41));
	assert_true(P(31)->step && P(41)->step && P(31)->step != P(41)->step);
	a = &S.v[P(31)->step - 1];
	b = &S.v[P(41)->step - 1];
	assert_string_equal(a->name, "grow");
	assert_string_equal(b->name, "grow");
	assert_string_not_equal(a->id, b->id);
}

static void test_run_rule_starts_an_in_house_launcher_run(void **state)
{
	static struct toolrules tr;
	const char rules[] = "run \"lab-wgs\" when exe=/opt/lab/bin/launch-*\n";
	char err[256];

	(void)state;
	toolrules_init(&tr);
	assert_int_equal(toolrules_load(&tr, rules, strlen(rules), err, sizeof(err)), 0);
	SS.tab.tool_rules = &tr;
	exec_in(60, "/w", NULL, "/opt/lab/bin/launch-wgs", ARGV("launch-wgs", "sample1"));
	exec_in(61, "/w", NULL, "/opt/lab/bin/other", ARGV("other"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 1);
	assert_int_equal(run_of(60)->detected_by, RUN_BY_RULE);
	assert_null(run_of(61));
	cycle();
	assert_true(said(0, "\"pipeline\":\"lab-wgs\""));
	assert_true(said(0, "\"detected_by\":\"rule\""));
	SS.tab.tool_rules = NULL;
	toolrules_free(&tr);
}

static void test_a_bad_run_rule_is_an_error_naming_its_place(void **state)
{
	struct toolrules tr;
	const char rules[] = "run lab\n";
	char err[256];

	(void)state;
	toolrules_init(&tr);
	assert_int_equal(toolrules_load(&tr, rules, strlen(rules), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "run: expected 'when'"));
	toolrules_free(&tr);
}

static void test_wdl_and_toil_engines_start_runs_named_by_their_workflow(void **state)
{
	(void)state;
	exec_in(70, "/data/wdl", NULL, "/usr/bin/python3",
		ARGV("/usr/bin/python3", "/usr/local/bin/miniwdl", "run", "align.wdl", "-i", "in.json"));
	run(70, 71, NULL, "/bin/bash", ARGV("bash", "-c", "bwa mem ref.fa r.fq > out.sam"));
	exec_in(80, "/data/crom", NULL, "/usr/bin/java", ARGV("java", "-jar", "/opt/cromwell-86.jar", "run", "wf.wdl"));
	exec_in(90, "/data/toil", NULL, "/usr/bin/python3", ARGV("/usr/bin/python3", "/usr/bin/toil-cwl-runner", "wf.cwl"));
	exec_in(95, "/data", NULL, "/usr/bin/java", ARGV("java", "-jar", "/opt/cromwell-86.jar", "server"));
	assert_int_equal(runs_assign(&R, &SS.tab, &S), 3);
	assert_int_equal(run_of(70)->detected_by, RUN_BY_MINIWDL);
	assert_ptr_equal(run_of(71), run_of(70));
	assert_int_equal(run_of(80)->detected_by, RUN_BY_CROMWELL);
	assert_int_equal(run_of(90)->detected_by, RUN_BY_TOIL);
	assert_null(run_of(95)); /* a cromwell server is not a run */
	cycle();
	assert_true(said(0, "\"engine\":\"miniwdl\",\"pipeline\":\"miniwdl:/data/wdl/align.wdl\""));
	assert_true(said(0, "\"engine\":\"cromwell\",\"pipeline\":\"cromwell:/data/crom/wf.wdl\""));
	assert_true(said(0, "\"engine\":\"toil\",\"pipeline\":\"toil:/data/toil/wf.cwl\""));
	assert_true(said(0, "\"id\":\"proc-71\",")); /* the engine's child: a generic step */
}

/* ---- live records ------------------------------------------------------ */

static void test_a_run_is_written_as_it_starts_runs_and_ends(void **state)
{
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	cycle();
	assert_int_equal(npayloads, 1);
	assert_true(said(0, "\"schema\":\"tracer.live.v1\""));
	assert_true(said(0, "\"state\":\"running\""));
	assert_true(said(0, "\"update\":1"));
	assert_true(said(0, "\"processes_attributed\":["));
	assert_true(said(0, "\"tool\":\"bwa mem\""));
	assert_true(said(0, "\"name\":\"bwa mem | samtools view\""));
	/* Nothing new: nothing written, until the refresh. */
	mark = npayloads;
	cycle();
	assert_int_equal(npayloads, mark);
	clk += LIVE_REFRESH_NS;
	cycle();
	assert_int_equal(npayloads, mark + 1);
	assert_false(said(mark, "processes_attributed")); /* attribution is not repeated */
	/* The end. */
	mark = npayloads;
	finish(102, 0, 5 * SEC);
	finish(103, 0, SEC);
	finish(101, 0, 1000);
	finish(100, 0, 2 * SEC);
	cycle();
	assert_true(said(mark, "\"state\":\"succeeded\""));
	assert_true(said(mark, "\"exit_code\":0"));
	assert_true(said(mark, "\"cpu_ns\":8000001000"));
	assert_false(said(mark, "\"kind\":"));
	assert_int_equal(R.live, 0);
	assert_int_equal(R.ended, 1);
}

/* Every record carries the host (constant) and the run's user: the lake keeps them from any one. */
static void test_every_record_carries_the_host_and_the_runs_user(void **state)
{
	static const struct hostid host = { .name = "compute-3", .cloud = "aws", .instance_type = "m6i.xlarge",
					    .instance_id = "i-0123456789abcdef0", .region = "us-east-1", .cpus = 4,
					    .memory_bytes = 16ULL << 30, .price_known = true, .price_micro_usd = 192000 };
	static const char want[] = "\"host\":{\"name\":\"compute-3\",\"cloud\":\"aws\",\"instance_type\":\"m6i.xlarge\","
				   "\"instance_id\":\"i-0123456789abcdef0\",\"region\":\"us-east-1\",\"cpus\":4,"
				   "\"memory_bytes\":17179869184,\"price_per_hour\":0.192}";
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	cycle();
	assert_int_equal(npayloads, 1);
	assert_false(said(0, "\"host\"")); /* none given: none written */
	assert_true(said(0, "\"root_start_mono_ns\":1000000001000,\"uid\":1000,"));
	L.host = &host;
	mark = npayloads;
	clk += LIVE_REFRESH_NS;
	cycle();
	assert_int_equal(npayloads, mark + 1);
	assert_true(said(mark, want));
	/* the end, and the record after the root left the table: the host still, the user unknown */
	mark = npayloads;
	finish(102, 0, SEC);
	finish(103, 0, SEC);
	finish(101, 0, 1000);
	finish(100, 0, SEC);
	cycle();
	assert_true(said(mark, want));
	assert_true(said(mark, "\"uid\":1000,"));
	assert_true(said(mark, "\"state\":\"succeeded\""));
}

static void test_a_run_whose_root_left_the_table_says_its_user_is_unknown(void **state)
{
	struct hostid unknown = { .cpus = 2, .memory_bytes = 1 << 30 };

	(void)state;
	L.host = &unknown;
	exec_in(30, "/w", ENV("TRACER_PIPELINE=p"), "/bin/sh", ARGV("sh", "run.sh"));
	run(30, 31, ENV("TRACER_PIPELINE=p"), "/bin/sleep", ARGV("sleep", "100"));
	cycle();
	assert_true(said(0, "\"uid\":1000,"));
	assert_true(said(0, "\"host\":{\"name\":null,\"cloud\":null,\"instance_type\":null,\"instance_id\":null,"
			    "\"region\":null,\"cpus\":2,\"memory_bytes\":1073741824}"));
	assert_false(said(0, "price_per_hour"));
	/* the script exits while its child runs on; once swept, a record cannot name the run's user */
	finish(30, 0, SEC);
	cycle();
	clk += 3 * SEC;
	exec_in(31, "/w", ENV("TRACER_PIPELINE=p"), "/bin/sleep", ARGV("sleep", "100")); /* moves the table's clock */
	proctab_sweep(&SS.tab);
	if (proctab_lookup(&SS.tab, 30, starts[30]))
		fail_msg("the root stayed in the table");
	forget_payloads();
	clk += LIVE_REFRESH_NS;
	cycle();
	assert_true(said(0, "\"uid\":null,"));
}

static void test_a_failed_job_is_a_failed_signal_and_a_failed_run(void **state)
{
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	cycle();
	mark = npayloads;
	finish(102, 1 << 8, SEC);
	finish(103, 13, SEC); /* SIGPIPE: the writer whose reader went away */
	finish(101, 1 << 8, 1000);
	finish(100, 1 << 8, SEC);
	cycle();
	assert_true(said(mark, "\"state\":\"failed\""));
	assert_true(said(mark, "{\"kind\":\"failed\",\"pid\":101,"));
	assert_true(said(mark, "{\"kind\":\"failed\",\"pid\":100,"));
	assert_false(said(mark, "\"pid\":102,\"start_mono_ns\":1000000005000,\"step\":\"smk-101\",\"tool\":\"bwa mem\",\"exit"));
	assert_false(said(mark, "\"kind\":\"killed\""));
}

static void test_a_killed_process_is_a_killed_signal_once(void **state)
{
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	finish(102, 9, SEC);
	cycle();
	assert_true(said(0, "{\"kind\":\"killed\",\"pid\":102,"));
	mark = npayloads;
	clk += LIVE_REFRESH_NS;
	cycle();
	assert_false(said(mark, "\"kind\":\"killed\""));
}

static void test_evicted_processes_stay_in_the_run_totals(void **state)
{
	size_t mark;

	(void)state;
	exec_in(30, "/w", ENV("TRACER_PIPELINE=p"), "/bin/sh", ARGV("sh", "run.sh"));
	for (uint32_t i = 0; i < 50; i++) {
		run(30, 31 + i, ENV("TRACER_PIPELINE=p"), "/usr/bin/gzip", ARGV("gzip", "x"));
		finish(31 + i, 0, SEC);
	}
	cycle();
	/* Their steps ended and were written: the sweep may evict them. */
	clk += 3 * SEC;
	run(30, 90, ENV("TRACER_PIPELINE=p"), "/bin/sleep", ARGV("sleep", "1")); /* moves the table's clock */
	cycle(); /* the look before every sweep: past the grace, the steps are let go */
	assert_true(proctab_sweep(&SS.tab) >= 50);
	assert_int_equal(R.v[0].folded.processes, 50);
	mark = npayloads;
	finish(90, 0, 0);
	finish(30, 0, 0);
	cycle();
	assert_true(said(mark, "\"processes\":52"));
	assert_true(said(mark, "\"cpu_ns\":50000000000"));
	assert_true(said(mark, "\"state\":\"succeeded\""));
}

static void test_a_running_step_keeps_its_exited_processes(void **state)
{
	(void)state;
	snakemake_run(100, NULL);
	finish(102, 0, SEC); /* bwa done, samtools still running */
	cycle();
	assert_true(P(102)->flags & PROC_F_HELD);
	clk += 5 * SEC;
	exec_in(103, "/data/wf", NULL, "/usr/bin/samtools", ARGV("samtools", "view", "-b")); /* moves the clock */
	proctab_sweep(&SS.tab);
	assert_non_null(proctab_lookup(&SS.tab, 102, starts[102]));
}

/*
 * bwa ends seconds before samtools (as on real data), the step ends, and the
 * run's final record (the engine's exit) comes after bwa alone would have
 * been swept: the step keeps bwa, its CPU and its tool, and its name.
 */
static void test_a_member_that_ended_first_stays_in_its_steps_last_record(void **state)
{
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	cycle();
	finish(102, 0, 4 * SEC); /* bwa, two threads' worth */
	cycle();
	clk += 3 * SEC;          /* samtools sorts on */
	finish(103, 0, SEC);
	finish(101, 0, 1000);
	cycle();                 /* the step ended: written final */
	exec_in(104, "/data/wf", NULL, "/bin/true", ARGV("true")); /* moves the table's clock past bwa's grace */
	proctab_sweep(&SS.tab);
	assert_non_null(proctab_lookup(&SS.tab, 102, starts[102]));
	mark = npayloads;
	finish(100, 0, SEC);
	cycle();                 /* the run's final record rewrites its steps */
	assert_true(said(mark, "\"state\":\"succeeded\""));
	assert_true(said(mark, "\"id\":\"smk-101\",\"name\":\"bwa mem | samtools view\""));
	assert_true(said(mark, "\"processes\":3,"));
	assert_true(said(mark, "\"cpu_ns\":5000001000,"));
	/* Once the whole step is past the grace, it goes in one sweep. */
	clk += 3 * SEC;
	exec_in(105, "/data/wf", NULL, "/bin/true", ARGV("true"));
	cycle();
	proctab_sweep(&SS.tab);
	assert_null(proctab_lookup(&SS.tab, 101, starts[101]));
	assert_null(proctab_lookup(&SS.tab, 102, starts[102]));
	assert_null(proctab_lookup(&SS.tab, 103, starts[103]));
}

static void test_a_large_run_is_split_into_whole_records(void **state)
{
	const char *pad = "/data/a-long-path-to-make-each-attribution-record-longer-than-usual/input.fastq.gz";

	(void)state;
	exec_in(30, "/w", ENV("TRACER_PIPELINE=big"), "/bin/sh", ARGV("sh", "run.sh"));
	for (uint32_t i = 0; i < 12000; i++)
		run(30, 100 + i, ENV("TRACER_PIPELINE=big"), "/usr/bin/a-tool-with-a-fairly-long-name-to-fill-records",
		    ARGV("tool", pad));
	cycle();
	assert_true(npayloads >= 2);
	for (size_t i = 0; i < npayloads; i++) {
		assert_true(payload_len[i] <= TL_RUN_MAX);
		assert_int_equal(payload_type[i], TL_RUN);
		assert_memory_equal(payloads[i], "{\"schema\":\"tracer.live.v1\",\"key\":\"b00t-30-", 42);
		assert_int_equal(payloads[i][payload_len[i] - 1], '}');
	}
}

static void test_a_spool_failure_is_returned(void **state)
{
	(void)state;
	snakemake_run(100, NULL);
	emit_error = -EIO;
	clk += SEC;
	assert_int_equal(live_cycle(&L, &SS, &S, &R, clk), -EIO);
}

static void test_a_process_running_before_tracing_joins_its_parents_run_marked(void **state)
{
	struct tr_sample smp;

	(void)state;
	snakemake_run(100, NULL);
	/* pid 120 started before the collector did (its samples say so): only its samples arrive */
	starts[120] = starts[101] + 500;
	smp = encode_sample(clk += 1000, 120, starts[120], 101, 3 * SEC, 1 << 20, 0);
	smp.state_flags |= TR_PSTATE_PREEXISTING;
	assert_int_equal(proctab_sample(&SS.tab, &smp, clk), 0);
	cycle();
	assert_ptr_equal(run_of(120), run_of(100));
	assert_true(said(0, "{\"pid\":120,\"start_mono_ns\":1000000003500,\"step\":\"smk-101\",\"tool\":"));
	assert_true(said(0, "\"preexisting\":true}"));
	assert_true(said(0, "{\"pid\":102,\"start_mono_ns\":1000000005000,\"step\":\"smk-101\",\"tool\":\"bwa mem\",\"preexisting\":false}"));
}

static void sample(uint32_t pid, uint64_t runtime)
{
	struct tr_sample smp = encode_sample(clk += 1000, pid, starts[pid], 1, runtime, 1 << 20, 0);

	assert_int_equal(proctab_sample(&SS.tab, &smp, clk), 0);
}

static void test_counters_alone_are_written_every_two_seconds_a_new_process_at_once(void **state)
{
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	cycle(); /* t: the run's first record (its figures too) */
	mark = npayloads;
	sample(102, SEC); /* t+1: only 1 s since: nothing */
	cycle();
	assert_int_equal(npayloads, mark);
	sample(102, 2 * SEC); /* t+2: 2 s since: written */
	cycle();
	assert_int_equal(npayloads, mark + 1);
	assert_true(said(mark, "\"cpu_millicores\":999")); /* 1 s of CPU in 1 s + 1 us */
	sample(102, 3 * SEC); /* t+3: nothing */
	cycle();
	assert_int_equal(npayloads, mark + 1);
	run(101, 104, NULL, "/usr/bin/samtools", ARGV("samtools", "index", "x.bam")); /* a new process: at once */
	cycle();
	assert_int_equal(npayloads, mark + 2);
	assert_true(said(mark + 1, "\"tool\":\"samtools index\""));
}

/* ---- the checkpoint ---------------------------------------------------- */

/* The state now as a checkpoint, then a fresh processor (the pids' start times kept) that reads it. */
static int restart_from_checkpoint(struct obuf *o, struct ckpt_stats *st, char *err, size_t errlen)
{
	static uint64_t saved[MAXPID];
	uint64_t saved_clk = clk;
	uint32_t gen = 0;
	uint64_t pos = 0;
	int rc;

	memcpy(saved, starts, sizeof(saved));
	teardown(NULL);
	setup(NULL);
	memcpy(starts, saved, sizeof(saved));
	clk = saved_clk;
	rc = ckpt_read(o->buf, o->len, &R, &SS.tab, &gen, &pos, st, err, errlen);
	if (rc == 0) {
		assert_int_equal(gen, 7);
		assert_int_equal(pos, 12345);
	}
	return rc;
}

static void test_a_checkpoint_brings_back_runs_and_their_processes(void **state)
{
	struct ckpt_stats st;
	struct obuf o;
	char err[256];
	uint64_t update;
	size_t mark;

	(void)state;
	snakemake_run(100, NULL);
	finish(102, 9, SEC); /* killed: its signal goes out before the checkpoint */
	cycle();
	assert_true(said(0, "{\"kind\":\"killed\",\"pid\":102,"));
	update = R.v[0].update;
	obuf_init_mem(&o, CKPT_MAX_BYTES);
	assert_int_equal(ckpt_write(&o, &R, &SS.tab, 7, 12345, 1), 0);
	assert_int_equal(restart_from_checkpoint(&o, &st, err, sizeof(err)), 0);
	obuf_free(&o);
	assert_int_equal(st.runs, 1);
	assert_int_equal(st.procs, 4);
	assert_int_equal(st.procs_skipped, 0);
	assert_int_equal(R.live, 1);
	assert_int_equal(R.v[0].update, update + CKPT_RESTART_UPDATES);
	assert_string_equal(R.v[0].key, "b00t-100-1000000001000");
	assert_ptr_equal(run_of(103), run_of(100));
	assert_true(P(100)->flags & PROC_F_RUN_ROOT);
	assert_non_null(P(103)->image);
	assert_string_equal(proc_image_tool(P(103)->image), "samtools view");
	/* A new job of the same run after the restart joins it; what was sent is not sent again. */
	mark = npayloads;
	run(100, 110, NULL, "/bin/bash", ARGV("/bin/bash", "-c", "samtools sort x"));
	cycle();
	assert_ptr_equal(run_of(110), run_of(100));
	assert_true(said(mark, "\"pid\":110,"));
	assert_false(said(mark, "\"kind\":\"killed\""));
	assert_false(said(mark, "\"pid\":103,\"start_mono_ns\""));
	assert_true(said(mark, "\"update\":1048578"));
}

static void test_a_damaged_checkpoint_is_refused_with_the_reason(void **state)
{
	struct ckpt_stats st;
	struct obuf o;
	char err[256];

	(void)state;
	snakemake_run(100, NULL);
	cycle();
	obuf_init_mem(&o, CKPT_MAX_BYTES);
	assert_int_equal(ckpt_write(&o, &R, &SS.tab, 7, 12345, 1), 0);
	o.buf[o.len - 3] ^= 0x40;
	assert_int_equal(restart_from_checkpoint(&o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "checksum"));
	o.buf[o.len - 3] ^= 0x40;
	o.len -= 10;
	assert_int_equal(restart_from_checkpoint(&o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "after the header"));
	o.len += 10;
	o.buf[0] = 'X';
	assert_int_equal(restart_from_checkpoint(&o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a checkpoint"));
	o.len = 20;
	assert_int_equal(restart_from_checkpoint(&o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "shorter than its header"));
	obuf_free(&o);
}

/* ---- what the lake stores of a live record ---------------------------- */

/*
 * Live records as the processor writes them (a running run and its end, a host with a price): each member of
 * the record and of its steps is stored by the lake (lake/schema.c's maps: lake_live_run_insert and
 * lake_live_step_upsert) or skipped there with the reason; and each member those maps read is one the records
 * have. A member added here fails until the lake stores it.
 */
static void test_every_member_of_a_live_record_is_stored_by_the_lake(void **state)
{
	static const struct hostid host = { .name = "compute-3", .cloud = "aws", .instance_type = "m6i.xlarge",
					    .instance_id = "i-0abc", .region = "us-east-1", .cpus = 4,
					    .memory_bytes = 16ULL << 30,
					    .price_known = true, .price_micro_usd = 192000 };
	const struct lake_upsert *run = &lake_live_run_insert, *step = &lake_live_step_upsert,
				 *attrib = &lake_live_attrib_upsert, *tools = &lake_tools_upsert;
	bool run_seen[128] = { false }, step_seen[128] = { false }, attrib_seen[128] = { false },
	     tools_seen[128] = { false };
	static struct json_node nodes[4096];
	unsigned steps = 0, attributed = 0, in_no_run = 0;

	(void)state;
	assert_true(run->nfills <= 128 && step->nfills <= 128);
	assert_string_equal(run->json_schema, LIVE_SCHEMA);
	assert_ptr_equal(lake_live_run_update.fills, run->fills);
	L.host = &host;
	exec_in(10, "/root", NULL, "/bin/bash", ARGV("-bash")); /* in no run: a TL_TOOLS record names its tool */
	snakemake_run(100, NULL);
	cycle();
	finish(102, 0, SEC);
	finish(103, 0, SEC);
	finish(101, 0, 1000);
	finish(100, 0, SEC);
	cycle();
	for (size_t r = 0; r < npayloads; r++) {
		struct json_doc d;

		assert_int_equal(json_parse(&d, payloads[r], payload_len[r], nodes, 4096), 0);
		if (payload_type[r] == TL_TOOLS) {
			assert_string_equal(tools->json_schema, TOOLS_SCHEMA);
			in_no_run += elements_held(&d, nodes, tools, tools_seen);
			continue;
		}
		members_held(&d, nodes, 0, run, run_seen);
		steps += elements_held(&d, nodes, step, step_seen);
		attributed += elements_held(&d, nodes, attrib, attrib_seen);
	}
	assert_true(steps >= 2 && attributed >= 4 && in_no_run >= 1);
	every_fill_seen(run, run_seen);
	every_fill_seen(step, step_seen);
	every_fill_seen(attrib, attrib_seen);
	every_fill_seen(tools, tools_seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_engine_invocation_starts_a_run_its_children_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_processes_start_no_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snakemake_inside_a_slurm_job_is_one_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tracer_run_command_is_a_run_not_its_daemons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment_ids_start_a_run_and_name_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_naming_a_step_alike_each_have_their_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_rule_starts_an_in_house_launcher_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wdl_and_toil_engines_start_runs_named_by_their_workflow, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_bad_run_rule_is_an_error_naming_its_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_run_is_written_as_it_starts_runs_and_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_record_carries_the_host_and_the_runs_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_run_whose_root_left_the_table_says_its_user_is_unknown, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_failed_job_is_a_failed_signal_and_a_failed_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_killed_process_is_a_killed_signal_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evicted_processes_stay_in_the_run_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_member_that_ended_first_stays_in_its_steps_last_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_running_step_keeps_its_exited_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_large_run_is_split_into_whole_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_spool_failure_is_returned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_alone_are_written_every_two_seconds_a_new_process_at_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_process_running_before_tracing_joins_its_parents_run_marked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_checkpoint_brings_back_runs_and_their_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_damaged_checkpoint_is_refused_with_the_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_member_of_a_live_record_is_stored_by_the_lake, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
