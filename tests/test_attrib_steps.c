/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Steps: process trees shaped like real pipeline runs (Snakemake 7 as
 * Debian runs it, Nextflow's local executor, cwltool, SLURM, TRACER_STEP,
 * plain scripts), built from records the way the kernel sends them, and
 * checked for one step per job/task/subtree, its tools, name, figures and
 * exit; then bounds and hostile inputs.
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
#include "proctab.h"
#include "steps.h"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define ENV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_ENV NULL
#define ROOT 100
#define MAXPID 70000

static struct proctab *T;
static struct steps S;
static struct decoded dec;
static uint64_t starts[MAXPID];
static uint64_t clk;

/* ---- a world of processes ------------------------------------------- */

static void world(uint32_t max_procs, uint32_t root, uint32_t max_steps)
{
	T = malloc(sizeof(*T));
	assert_non_null(T);
	assert_int_equal(proctab_init(T, max_procs, root, 42), 0);
	assert_int_equal(steps_init(&S, max_steps, 7), 0);
	memset(starts, 0, sizeof(starts));
	clk = 1000;
}

static void world_end(void)
{
	steps_free(&S);
	proctab_free(T);
	free(T);
}

static void exec_in(uint32_t pid, const char *cwd, const char *const *env, const char *path, const char *const *argv)
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

static void spawn(uint32_t parent, uint32_t child)
{
	struct tr_fork f;

	starts[child] = ++clk;
	f = encode_fork(clk, parent, starts[parent], child, starts[child]);
	assert_int_equal(proctab_fork(T, &f, clk), 0);
}

/* fork + exec: a child running path with argv in cwd. */
static void run(uint32_t parent, uint32_t child, const char *cwd, const char *const *env, const char *path,
		const char *const *argv)
{
	spawn(parent, child);
	exec_in(child, cwd, env, path, argv);
}

/* An exit whose final image peaked at image bytes, and whose rusage maxrss (all its images) is rusage. */
static void finish_mem(uint32_t pid, uint32_t raw, uint64_t runtime, uint64_t image, uint64_t rusage)
{
	struct tr_exit x = encode_exit(++clk, pid, starts[pid], 1, raw);

	x.runtime_ns = runtime;
	x.maxrss_bytes = rusage;
	x.image_peak_rss_bytes = image;
	x.net_tx_bytes = 10;
	x.net_rx_bytes = 20;
	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
}

static void finish(uint32_t pid, uint32_t raw, uint64_t runtime, uint64_t rss)
{
	finish_mem(pid, raw, runtime, rss, rss);
}

static struct proc *P(uint32_t pid)
{
	struct proc *p = proctab_lookup(T, pid, starts[pid]);

	assert_non_null(p);
	return p;
}

static void build(void)
{
	if (T->root_pid)
		proctab_mark_tree(T);
	assert_int_equal(steps_build(&S, T), 0);
}

static const struct step *step_of(uint32_t pid)
{
	return steps_of(&S, P(pid));
}

static const struct step *step_id(const char *id)
{
	for (uint32_t i = 0; i < S.n; i++)
		if (!strcmp(S.v[i].id, id))
			return &S.v[i];
	fail_msg("no step %s", id);
	return NULL;
}

static void assert_tools(const struct step *st, const char *const *want)
{
	uint32_t n = 0;

	for (; want[n]; n++) {
		if (n >= st->n_tools)
			fail_msg("step %s: %u tools, want more (%s)", st->id, st->n_tools, want[n]);
		if (strcmp(st->tools[n].name, want[n]))
			fail_msg("step %s: tool %u is \"%s\", want \"%s\"", st->id, n, st->tools[n].name, want[n]);
	}
	if (n != st->n_tools)
		fail_msg("step %s: %u tools, want %u", st->id, st->n_tools, n);
}

static void assert_same_step(uint32_t a, uint32_t b)
{
	assert_non_null(step_of(a));
	assert_ptr_equal(step_of(a), step_of(b));
}

/* ---- Snakemake ------------------------------------------------------ */

/* snakemake -c1 as Debian's 7.21 runs it: python3 /usr/bin/snakemake, each job `bash -c 'set -euo pipefail;  CMD'`. */
static void snakemake_run(void)
{
	exec_in(ROOT, "/data/proj", NO_ENV, "/bin/bash", ARGV("bash", "run.sh"));
	run(ROOT, 101, "/data/proj", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	/* job 1: a single command, which bash exec's in place of itself */
	run(101, 102, "/data/proj", NO_ENV, "/usr/bin/bash",
	    ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  bwa index ref.fa"));
	exec_in(102, "/data/proj", NO_ENV, "/usr/bin/bwa", ARGV("bwa", "index", "ref.fa"));
	finish(102, 0, 500, 4 << 20);
	/* job 2: a pipe */
	run(101, 103, "/data/proj", NO_ENV, "/usr/bin/bash",
	    ARGV("/usr/bin/bash", "-c",
		 "set -euo pipefail;  bwa mem ref.fa r1.fq r2.fq | samtools view -b -o mapped.bam -"));
	run(103, 104, "/data/proj", NO_ENV, "/usr/bin/bwa", ARGV("bwa", "mem", "ref.fa", "r1.fq", "r2.fq"));
	run(103, 105, "/data/proj", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "view", "-b", "-o", "mapped.bam", "-"));
	finish(104, 0, 3000, 90 << 20);
	finish(105, 1 << 8, 700, 8 << 20);
	finish(103, 1 << 8, 100, 3 << 20);
	/* job 3 */
	run(101, 106, "/data/proj", NO_ENV, "/usr/bin/bash",
	    ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  samtools sort -o sorted.bam mapped.bam"));
	exec_in(106, "/data/proj", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "sort", "-o", "sorted.bam", "mapped.bam"));
	finish(106, 0, 800, 20 << 20);
	finish(101, 1 << 8, 9000, 60 << 20);
	finish(ROOT, 1 << 8, 10, 1 << 20);
}

static void snakemake_jobs_are_one_step_each_with_their_tools(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	snakemake_run();
	build();
	assert_int_equal(S.n, 3);
	assert_null(step_of(ROOT));
	assert_null(step_of(101));
	assert_same_step(103, 104);
	assert_same_step(103, 105);
	assert_ptr_not_equal(step_of(102), step_of(103));
	assert_ptr_not_equal(step_of(103), step_of(106));
	assert_tools(step_of(103), ARGV("bwa mem", "samtools view"));
	assert_tools(step_of(102), ARGV("bwa index"));
	assert_tools(step_of(106), ARGV("samtools sort"));
	assert_string_equal(step_of(103)->name, "bwa mem | samtools view");
	assert_string_equal(step_of(102)->name, "bwa index");
	assert_string_equal(step_of(103)->id, "smk-103");
	assert_int_equal(step_of(103)->engine, STEP_ENGINE_SNAKEMAKE);
	assert_string_equal(step_engine_name(step_of(103)->engine), "snakemake");
	assert_null(step_of(103)->rule);
	/* in start order */
	assert_ptr_equal(&S.v[0], step_of(102));
	assert_ptr_equal(&S.v[1], step_of(103));
	assert_ptr_equal(&S.v[2], step_of(106));
	/* run identity */
	assert_string_equal(S.run.engine, "snakemake");
	assert_string_equal(S.run.engine_dir, "/data/proj");
	assert_ptr_equal(S.run.engine_proc, P(101));
	assert_null(S.run.run_id);
	world_end();
}

static void snakemake_job_that_failed_names_its_main_process_and_first_failure(void **state)
{
	const struct step *st;

	(void)state;
	world(1024, ROOT, 0);
	snakemake_run();
	build();
	st = step_of(103);
	assert_ptr_equal(st->main, P(103));
	assert_true(st->exited);
	assert_int_equal(st->exit_raw, 1 << 8);
	assert_true(st->failed);
	assert_ptr_equal(st->first_failed, P(105)); /* samtools view exited first, then the shell */
	assert_int_equal(st->failed_processes, 2);
	assert_false(step_of(102)->failed);
	assert_null(step_of(102)->first_failed);
	world_end();
}

static void step_figures_sum_its_processes(void **state)
{
	const struct step *st;

	(void)state;
	world(1024, ROOT, 0);
	snakemake_run();
	build();
	st = step_of(103);
	assert_int_equal(st->processes, 3);
	assert_int_equal(st->running, 0);
	assert_int_equal(st->cpu_ns, 100 + 3000 + 700);
	/* bwa (90 MiB), samtools (8) and their shell (3) were alive at once: a limit must hold their sum */
	assert_int_equal(st->peak_rss_bytes, (90 + 8 + 3) << 20);
	assert_int_equal(st->rss_sum_of_peaks_bytes, (90 + 8 + 3) << 20);
	assert_int_equal(st->max_process_rss_bytes, 90 << 20);
	assert_false(st->peak_rss_partial); /* every peak is the image's own, read at exit */
	assert_int_equal(st->read_bytes, 3 * 4096);
	assert_int_equal(st->write_bytes, 3 * 8192);
	assert_int_equal(st->rchar, 300);
	assert_int_equal(st->wchar, 600);
	assert_int_equal(st->net_tx_bytes, 30);
	assert_int_equal(st->net_rx_bytes, 60);
	assert_int_equal(st->start_ns, starts[103]);
	assert_int_equal(st->end_ns, P(103)->exit.hdr.ts_ns);
	assert_false(st->io_partial);
	world_end();
}

static void an_engines_child_counts_its_own_image_not_the_engines(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	/* vfork'd by a 400 MiB python: rusage carries the engine's peak across exec, the image's does not */
	run(ROOT, 101, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  samtools index x.bam"));
	exec_in(101, "/p", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "index", "x.bam"));
	finish_mem(101, 0, 10, 6 << 20, 400 << 20);
	build();
	assert_int_equal(step_of(101)->peak_rss_bytes, 6 << 20);
	assert_int_equal(step_of(101)->max_process_rss_bytes, 6 << 20);
	assert_false(step_of(101)->peak_rss_partial);
	world_end();
}

static void an_exit_without_its_image_peak_uses_samples_then_rusage_and_says_so(void **state)
{
	struct tr_sample smp;
	struct tr_exit x;

	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	run(ROOT, 101, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  samtools sort x.bam"));
	exec_in(101, "/p", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "sort", "x.bam"));
	run(ROOT, 102, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  samtools index x.bam"));
	exec_in(102, "/p", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "index", "x.bam"));
	/* a kernel that released the image before the exit was seen (before 6.16) */
	smp = encode_sample(++clk, 101, starts[101], ROOT, 50, 12 << 20, 0);
	assert_int_equal(proctab_sample(T, &smp, clk), 0);
	x = encode_exit(++clk, 101, starts[101], ROOT, 0);
	x.flags |= TR_EXIT_NO_IMAGE_PEAK;
	x.image_peak_rss_bytes = 0;
	x.maxrss_bytes = 400 << 20;
	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
	x = encode_exit(++clk, 102, starts[102], ROOT, 0);
	x.flags |= TR_EXIT_NO_IMAGE_PEAK;
	x.image_peak_rss_bytes = 0;
	x.maxrss_bytes = 300 << 20;
	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
	build();
	/* sampled: a lower bound, flagged */
	assert_int_equal(step_of(101)->peak_rss_bytes, 12 << 20);
	assert_true(step_of(101)->peak_rss_partial);
	/* nothing but rusage: an upper bound, flagged, never 0 */
	assert_int_equal(step_of(102)->peak_rss_bytes, 300 << 20);
	assert_true(step_of(102)->peak_rss_partial);
	world_end();
}

static void unfinished_step_counts_its_running_processes(void **state)
{
	const struct step *st;

	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c2"));
	run(ROOT, 101, "/p", NO_ENV, "/bin/bash", ARGV("/bin/bash", "-c", "set -euo pipefail;  a | b"));
	run(101, 102, "/p", NO_ENV, "/usr/bin/a", ARGV("a"));
	run(101, 103, "/p", NO_ENV, "/usr/bin/b", ARGV("b"));
	finish(102, 0, 10, 10);
	build();
	st = step_of(101);
	assert_int_equal(st->processes, 3);
	assert_int_equal(st->running, 2);
	assert_false(st->exited);
	assert_false(st->failed);
	assert_int_equal(st->end_ns, P(102)->exit.hdr.ts_ns);
	/* the traced command is the engine itself: it belongs to no step */
	assert_null(step_of(ROOT));
	assert_string_equal(S.run.engine, "snakemake");
	world_end();
}

static void snakemake_job_runner_names_the_step_by_its_rule(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake",
		ARGV("/usr/bin/python3", "/usr/bin/snakemake", "--cluster", "sh", "-j", "2"));
	/* the submit command runs the job script, which runs a job runner for one rule */
	run(ROOT, 101, "/p", NO_ENV, "/bin/sh", ARGV("/bin/sh", "-c", "sh /p/.snakemake/tmp.x/snakejob.map.1.sh"));
	run(101, 102, "/p", NO_ENV, "/usr/bin/python3",
	    ARGV("/usr/bin/python3", "-m", "snakemake", "--snakefile", "/p/Snakefile", "--target-jobs",
		 "map:sample=a", "--allowed-rules", "map", "--cores", "1"));
	run(102, 103, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  bwa mem r a.fq"));
	exec_in(103, "/p", NO_ENV, "/usr/bin/bwa", ARGV("bwa", "mem", "r", "a.fq"));
	/* a job runner seen without its submit shell, with --target-jobs only */
	run(ROOT, 104, "/p", NO_ENV, "/usr/bin/python3",
	    ARGV("/usr/bin/python3", "-m", "snakemake", "--target-jobs", "sort:sample=b", "--cores", "1"));
	run(104, 105, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  samtools sort b"));
	exec_in(105, "/p", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "sort", "b"));
	build();
	assert_int_equal(S.n, 2);
	assert_same_step(101, 103);
	assert_string_equal(step_of(101)->rule, "map");
	assert_string_equal(step_of(101)->name, "map"); /* the submit shell started it, the job runner named it */
	assert_tools(step_of(101), ARGV("bwa mem")); /* not the shell, not the job runner */
	assert_same_step(104, 105);
	assert_string_equal(step_of(104)->name, "sort");
	assert_string_equal(step_of(104)->rule, "sort");
	assert_string_equal(step_of(104)->id, "smk-104");
	assert_tools(step_of(104), ARGV("samtools sort")); /* the job runner itself is the engine, not a tool */
	world_end();
}

static void snakemake_child_that_is_not_a_job_belongs_to_no_step(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	/* the scheduler's ILP solver, as snakemake 7.21 runs it through PuLP (seen on a real run) */
	run(ROOT, 101, "/tmp", NO_ENV, "/usr/bin/cbc", ARGV("/usr/bin/cbc", "/tmp/x-pulp.mps", "branch", "printingOptions",
							 "all", "solution", "/tmp/x-pulp.sol"));
	run(101, 102, "/tmp", NO_ENV, "/usr/bin/true", ARGV("true"));
	run(ROOT, 103, "/p", NO_ENV, "/usr/bin/bash", ARGV("/usr/bin/bash", "-c", "set -euo pipefail;  gzip x"));
	build();
	assert_int_equal(S.n, 1);
	assert_null(step_of(101));
	assert_null(step_of(102));
	assert_non_null(step_of(103));
	world_end();
}

/* ---- Nextflow ------------------------------------------------------- */

#define WD_A "/x/work/ab/cdef0123456789abcdef0123456789"
#define WD_B "/x/work/3f/9a00112233445566778899aabbccdd"

/* One task as the local executor runs it: bash -ue .command.run in the work dir, its wrapper subshells and tee, .command.sh, the tool. */
static void nf_task(uint32_t parent, uint32_t pid, const char *wd, const char *path, const char *const *argv)
{
	char sh[256];

	snprintf(sh, sizeof(sh), "%s/.command.sh", wd);
	run(parent, pid, wd, NO_ENV, "/bin/bash", ARGV("/bin/bash", "-ue", ".command.run"));
	spawn(pid, pid + 1); /* ( nxf_launch | tee .command.out ) subshell: no exec */
	run(pid + 1, pid + 2, wd, NO_ENV, "/usr/bin/tee", ARGV("tee", ".command.out"));
	run(pid + 1, pid + 3, wd, NO_ENV, "/bin/bash", ARGV("/bin/bash", "-ue", sh));
	run(pid + 3, pid + 4, wd, NO_ENV, path, argv);
	finish(pid + 4, 0, 100, 5 << 20);
	finish(pid + 3, 0, 1, 1);
	finish(pid + 2, 0, 1, 1);
	finish(pid + 1, 0, 1, 1);
	finish(pid, 0, 1, 1);
}

static void nextflow_tasks_are_one_step_per_work_directory(void **state)
{
	const struct step *a, *b;

	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/x", NO_ENV, "/bin/bash", ARGV("bash", "/usr/local/bin/nextflow", "run", "main.nf"));
	exec_in(ROOT, "/x", NO_ENV, "/usr/lib/jvm/java-17/bin/java",
		ARGV("java", "-Xms1g", "-cp", "/root/.nextflow/framework/23.10.1/nextflow-23.10.1-one.jar",
		     "nextflow.cli.Launcher", "run", "main.nf", "-name", "happy_turing"));
	nf_task(ROOT, 200, WD_A, "/usr/bin/fastqc", ARGV("fastqc", "r1.fq"));
	nf_task(ROOT, 300, WD_B, "/usr/bin/salmon", ARGV("salmon", "quant", "-i", "idx"));
	run(ROOT, 400, "/x", NO_ENV, "/bin/ps", ARGV("ps", "-o", "pid")); /* the launcher's own helper */
	build();
	assert_int_equal(S.n, 2);
	a = step_id("nf-ab/cdef01");
	b = step_id("nf-3f/9a0011");
	for (uint32_t pid = 200; pid <= 204; pid++)
		assert_ptr_equal(step_of(pid), a);
	for (uint32_t pid = 300; pid <= 304; pid++)
		assert_ptr_equal(step_of(pid), b);
	assert_string_equal(a->workdir, WD_A);
	assert_int_equal(a->engine, STEP_ENGINE_NEXTFLOW);
	assert_tools(a, ARGV("fastqc")); /* tee is the wrapper's, not the task's */
	assert_tools(b, ARGV("salmon quant"));
	assert_string_equal(a->name, "[ab/cdef01] fastqc");
	assert_string_equal(b->name, "[3f/9a0011] salmon quant");
	assert_ptr_equal(a->main, P(200));
	assert_true(a->exited);
	assert_int_equal(a->processes, 5);
	assert_null(step_of(ROOT));
	assert_null(step_of(400));
	assert_string_equal(S.run.engine, "nextflow");
	assert_string_equal(S.run.run_name, "happy_turing");
	assert_string_equal(S.run.engine_dir, "/x");
	world_end();
}

static void nextflow_task_without_a_launcher_is_still_a_task(void **state)
{
	(void)state;
	/* The acceptance test's shape: a script makes work/xx/hash dirs and runs bash .command.run in each. */
	world(1024, ROOT, 0);
	exec_in(ROOT, "/t", NO_ENV, "/bin/bash", ARGV("bash", "fake-nextflow.sh"));
	run(ROOT, 101, "/t", NO_ENV, "/bin/mkdir", ARGV("mkdir", "-p", WD_A));
	nf_task(ROOT, 200, WD_A, "/usr/bin/wc", ARGV("wc", "-l", "x"));
	nf_task(ROOT, 300, WD_B, "/usr/bin/wc", ARGV("wc", "-l", "y"));
	build();
	assert_int_equal(S.n, 3);
	assert_string_equal(step_of(101)->name, "mkdir");
	assert_int_equal(step_of(101)->engine, STEP_ENGINE_GENERIC);
	assert_string_equal(step_of(200)->id, "nf-ab/cdef01");
	assert_string_equal(step_of(300)->id, "nf-3f/9a0011");
	assert_string_equal(S.run.engine, "nextflow"); /* from the steps: no launcher ran */
	assert_null(S.run.engine_proc);
	world_end();
}

static void nextflow_work_directory_falls_back_to_argv_then_environment(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/t", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	/* cwd unknown: the absolute path in argv */
	run(ROOT, 101, NULL, NO_ENV, "/bin/bash", ARGV("/bin/bash", "-ue", WD_A "/.command.run"));
	/* cwd not a work dir, relative argv: NXF_TASK_WORKDIR */
	run(ROOT, 102, "/tmp", ENV("NXF_TASK_WORKDIR=" WD_B), "/bin/bash", ARGV("/bin/bash", ".command.run"));
	/* a task's script run elsewhere (in a container's shell), same work dir: same step */
	run(ROOT, 103, NULL, NO_ENV, "/bin/bash", ARGV("/bin/bash", "-ue", WD_A "/.command.sh"));
	/* nothing known: a step of its own */
	run(ROOT, 104, NULL, NO_ENV, "/bin/bash", ARGV("bash", ".command.run"));
	/* a work dir that does not look like one: named by its last component */
	run(ROOT, 105, "/scratch/task-7", NO_ENV, "/bin/bash", ARGV("bash", ".command.run"));
	build();
	assert_int_equal(S.n, 4);
	assert_string_equal(step_of(101)->workdir, WD_A);
	assert_same_step(101, 103);
	assert_string_equal(step_of(102)->workdir, WD_B);
	assert_string_equal(step_of(102)->id, "nf-3f/9a0011");
	assert_string_equal(step_of(104)->id, "nf-104");
	assert_null(step_of(104)->workdir);
	assert_string_equal(step_of(105)->id, "nf-task-7");
	assert_string_equal(step_of(105)->workdir, "/scratch/task-7");
	world_end();
}

static void nextflow_short_ids_that_collide_stay_distinct(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/t", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 101, "/x/work/ab/cdef01aaaa", NO_ENV, "/bin/bash", ARGV("bash", ".command.run"));
	run(ROOT, 102, "/x/work/ab/cdef01bbbb", NO_ENV, "/bin/bash", ARGV("bash", ".command.run"));
	build();
	assert_int_equal(S.n, 2);
	assert_ptr_not_equal(step_of(101), step_of(102));
	assert_string_equal(step_of(101)->id, "nf-ab/cdef01");
	assert_string_equal(step_of(102)->id, "nf-ab/cdef01.2");
	world_end();
}

/* ---- cwltool -------------------------------------------------------- */

static void cwltool_tool_invocations_are_steps_and_its_helpers_are_not(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/w", NO_ENV, "/usr/bin/cwltool", ARGV("/usr/bin/python3", "/usr/bin/cwltool", "wf.cwl", "job.yml"));
	run(ROOT, 101, "/w", NO_ENV, "/usr/bin/nodejs", ARGV("nodejs", "--eval", "process.stdout.write('t')"));
	run(ROOT, 102, "/tmp/ghzu7va6", NO_ENV, "/usr/bin/samtools", ARGV("samtools", "faidx", "ref.fa"));
	run(ROOT, 103, "/tmp/x1", NO_ENV, "/usr/bin/wc", ARGV("wc", "-l", "/tmp/ref.fa.fai"));
	run(ROOT, 104, "/w", NO_ENV, "/usr/bin/docker", ARGV("docker", "pull", "biocontainers/samtools"));
	run(ROOT, 105, "/w", NO_ENV, "/usr/bin/docker", ARGV("docker", "run", "--rm", "img", "samtools", "sort"));
	build();
	assert_int_equal(S.n, 3);
	assert_null(step_of(101));
	assert_null(step_of(104));
	assert_string_equal(step_of(102)->name, "samtools faidx");
	assert_string_equal(step_of(102)->id, "cwl-102");
	assert_int_equal(step_of(102)->engine, STEP_ENGINE_CWLTOOL);
	assert_string_equal(step_of(103)->name, "wc");
	assert_string_equal(step_of(105)->name, "docker run");
	assert_string_equal(S.run.engine, "cwltool");
	world_end();
}

/* ---- SLURM, TRACER_STEP --------------------------------------------- */

static void slurm_job_steps_group_processes_by_job_and_step(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/home/u", ENV("SLURM_JOB_ID=77"), "/bin/bash", ARGV("/bin/bash", "/var/spool/slurm_script"));
	run(ROOT, 101, "/home/u", ENV("SLURM_JOB_ID=77", "SLURM_STEP_ID=0"), "/usr/bin/bwa", ARGV("bwa", "mem", "r"));
	run(ROOT, 102, "/home/u", ENV("SLURM_JOB_ID=77", "SLURM_STEP_ID=1"), "/bin/bash", ARGV("bash", "-c", "x | y"));
	run(102, 103, "/home/u", ENV("SLURM_JOB_ID=77", "SLURM_STEP_ID=1"), "/usr/bin/x", ARGV("x"));
	run(102, 104, "/home/u", ENV("SLURM_JOB_ID=77", "SLURM_STEP_ID=1"), "/usr/bin/y", ARGV("y"));
	run(ROOT, 105, "/home/u", ENV("SLURM_JOB_ID=77"), "/usr/bin/hostname", ARGV("hostname"));
	build();
	assert_int_equal(S.n, 3);
	assert_string_equal(step_of(ROOT)->id, "slurm-77");
	assert_same_step(ROOT, 105);
	assert_string_equal(step_of(101)->id, "slurm-77.0");
	assert_string_equal(step_of(102)->id, "slurm-77.1");
	assert_same_step(102, 104);
	assert_int_equal(step_of(102)->engine, STEP_ENGINE_SLURM);
	assert_tools(step_of(102), ARGV("x", "y"));
	assert_string_equal(S.run.slurm_job_id, "77");
	world_end();
}

static void engine_tasks_inside_a_slurm_job_are_their_own_steps(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", ENV("SLURM_JOB_ID=5"), "/bin/bash", ARGV("bash", "/var/spool/slurm_script"));
	run(ROOT, 101, "/p", ENV("SLURM_JOB_ID=5"), "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake"));
	run(101, 102, "/p", ENV("SLURM_JOB_ID=5"), "/usr/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  gzip x"));
	build();
	assert_int_equal(S.n, 2);
	assert_same_step(ROOT, 101); /* the engine stays in its job step */
	assert_int_equal(step_of(102)->engine, STEP_ENGINE_SNAKEMAKE);
	world_end();
}

/*
 * A job a workflow engine submitted (snakemake --cluster sbatch: its jobscript; Nextflow's slurm executor)
 * is that engine's task: one step, named by the rule or process, the job runner and its shells in it.
 */
static void a_cluster_job_is_one_step_named_by_its_rule(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/bin/sh",
		ARGV("/bin/sh", "/var/spool/slurmd/job00012/slurm_script"));
	run(ROOT, 101, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/usr/bin/python3",
	    ARGV("/usr/bin/python3", "-m", "snakemake", "--snakefile", "/wf/Snakefile", "--target-jobs",
		 "align:sample=a", "--allowed-rules", "align", "--cores", "all"));
	run(101, 102, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/bin/bash",
	    ARGV("/bin/bash", "-c", "set -euo pipefail;  bwa mem -t 2 r a.fq | samtools sort -o a.bam"));
	run(102, 103, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/usr/bin/bwa",
	    ARGV("bwa", "mem", "-t", "2", "r", "a.fq"));
	run(102, 104, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/usr/bin/samtools",
	    ARGV("samtools", "sort", "-o", "a.bam"));
	/* the jobscript's own: the done-file Snakemake waits for */
	run(ROOT, 105, "/wf", ENV("SLURM_JOB_ID=12", "SLURM_JOB_NAME=snakejob.align.3.sh"), "/usr/bin/touch",
	    ARGV("touch", "/wf/.snakemake/tmp.q/3.jobfinished"));
	build();
	assert_int_equal(S.n, 1);
	assert_string_equal(step_of(ROOT)->id, "slurm-12");
	assert_string_equal(step_of(ROOT)->name, "align");
	assert_string_equal(step_of(ROOT)->rule, "align");
	assert_int_equal(step_of(ROOT)->engine, STEP_ENGINE_SNAKEMAKE);
	assert_same_step(ROOT, 101);
	assert_same_step(ROOT, 103);
	assert_same_step(ROOT, 104);
	assert_same_step(ROOT, 105);
	assert_tools(step_of(ROOT), ARGV("bwa mem", "samtools sort"));
	world_end();

	/* Nextflow's: nf-NAME_(TAG) */
	world(1024, ROOT, 0);
	exec_in(ROOT, "/w/ab/cdef12", ENV("SLURM_JOB_ID=13", "SLURM_JOB_NAME=nf-ALIGN_(s1)"), "/bin/bash",
		ARGV("/bin/bash", "/var/spool/slurmd/job00013/slurm_script"));
	run(ROOT, 101, "/w/ab/cdef12", ENV("SLURM_JOB_ID=13", "SLURM_JOB_NAME=nf-ALIGN_(s1)"), "/bin/bash",
	    ARGV("/bin/bash", "-ue", "/w/ab/cdef12/.command.sh"));
	run(101, 102, "/w/ab/cdef12", ENV("SLURM_JOB_ID=13", "SLURM_JOB_NAME=nf-ALIGN_(s1)"), "/usr/bin/bwa",
	    ARGV("bwa", "mem", "r", "a.fq"));
	build();
	assert_int_equal(S.n, 1);
	assert_string_equal(step_of(102)->id, "slurm-13");
	assert_string_equal(step_of(102)->name, "ALIGN");
	assert_int_equal(step_of(102)->engine, STEP_ENGINE_NEXTFLOW);
	world_end();

	/* a job of another name is a SLURM step as before; its srun steps too */
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", ENV("SLURM_JOB_ID=14", "SLURM_JOB_NAME=handjob"), "/bin/sh", ARGV("/bin/sh", "job.sh"));
	run(ROOT, 101, "/p", ENV("SLURM_JOB_ID=14", "SLURM_JOB_NAME=snakejob.x.1.sh", "SLURM_STEP_ID=0"),
	    "/usr/bin/bwa", ARGV("bwa", "index", "r"));
	build();
	assert_int_equal(S.n, 2);
	assert_string_equal(step_of(ROOT)->name, "slurm-14");
	assert_int_equal(step_of(ROOT)->engine, STEP_ENGINE_SLURM);
	assert_string_equal(step_of(101)->name, "slurm-14.0");
	world_end();
}

static void a_job_name_gives_its_task_when_an_engine_made_it(void **state)
{
	static const struct {
		const char *job, *task;
		enum step_engine engine;
	} cases[] = {
		{ "snakejob.align.3.sh", "align", STEP_ENGINE_SNAKEMAKE },
		{ "snakejob.call_variants.117.sh", "call_variants", STEP_ENGINE_SNAKEMAKE },
		{ "snakejob.a.b.12.sh", "a.b", STEP_ENGINE_SNAKEMAKE },
		{ "nf-ALIGN_(s1)", "ALIGN", STEP_ENGINE_NEXTFLOW },
		{ "nf-WF_ALIGN_(s_(1))", "WF_ALIGN_(s", STEP_ENGINE_NEXTFLOW },
		{ "nf-MULTIQC", "MULTIQC", STEP_ENGINE_NEXTFLOW },
		{ "snakejob.align.sh", "", STEP_ENGINE_GENERIC },
		{ "snakejob..3.sh", "", STEP_ENGINE_GENERIC },
		{ "snakejob.3.sh", "", STEP_ENGINE_GENERIC },
		{ "nf-", "", STEP_ENGINE_GENERIC },
		{ "align", "", STEP_ENGINE_GENERIC },
		{ "", "", STEP_ENGINE_GENERIC },
	};
	char task[STEP_NAME_MAX], small[4];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum step_engine e = STEP_ENGINE_GENERIC;
		size_t n = step_job_task(cases[i].job, task, sizeof(task), &e);

		assert_string_equal(task, cases[i].task);
		assert_int_equal(n, strlen(cases[i].task));
		assert_int_equal(e, cases[i].engine);
	}
	assert_int_equal(step_job_task(NULL, task, sizeof(task), &(enum step_engine){ 0 }), 0);
	assert_int_equal(step_job_task("snakejob.align.3.sh", small, sizeof(small), &(enum step_engine){ 0 }), 0);
	assert_string_equal(small, "");
}

static void tracer_step_names_a_step_and_wins_over_everything(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	run(ROOT, 101, "/p", NO_ENV, "/usr/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  run-qc"));
	/* inside a Snakemake job and a SLURM step: TRACER_STEP still decides */
	run(101, 102, "/p", ENV("TRACER_STEP=qc", "SLURM_JOB_ID=9"), "/usr/bin/fastqc", ARGV("fastqc", "a.fq"));
	/* two separate subtrees with one name: one step */
	run(ROOT, 103, "/p", ENV("TRACER_STEP=align"), "/bin/bash", ARGV("bash", "align.sh"));
	run(103, 104, "/p", ENV("TRACER_STEP=align"), "/usr/bin/bwa", ARGV("bwa", "mem", "r"));
	run(ROOT, 105, "/p", ENV("TRACER_STEP=align"), "/usr/bin/samtools", ARGV("samtools", "index", "x"));
	/* a different value below starts another step */
	run(103, 106, "/p", ENV("TRACER_STEP=align/index"), "/usr/bin/bwa", ARGV("bwa", "index", "r"));
	build();
	assert_int_equal(S.n, 4);
	assert_string_equal(step_of(102)->id, "qc");
	assert_string_equal(step_of(102)->name, "qc");
	assert_int_equal(step_of(102)->engine, STEP_ENGINE_ENV);
	assert_string_equal(step_engine_name(STEP_ENGINE_ENV), "env");
	assert_same_step(103, 104);
	assert_same_step(103, 105);
	assert_ptr_equal(step_of(103)->main, P(103));
	assert_tools(step_of(103), ARGV("align.sh", "bwa mem", "samtools index"));
	assert_string_equal(step_of(106)->id, "align/index");
	assert_ptr_not_equal(step_of(101), step_of(102));
	world_end();
}

/* An exit under an allocation: a CPU bandwidth limit (thousandths), an affinity, a memory limit. */
static void finish_limited(uint32_t pid, uint32_t quota, uint32_t cpus, uint64_t mem)
{
	struct tr_exit x = encode_exit(++clk, pid, starts[pid], 1, 0);

	x.cpu_quota_millicores = quota;
	x.cpus_allowed = cpus;
	x.memcg_limit_bytes = mem;
	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
}

/* A sample of a running process under an allocation, as finish_limited's. */
static void sample_limited(uint32_t pid, uint32_t quota, uint32_t cpus, uint64_t mem)
{
	struct tr_sample x = encode_sample(++clk, pid, starts[pid], 1, 0, 0, 0);

	x.cpu_quota_millicores = quota;
	x.cpus_allowed = cpus;
	x.memcg_limit_bytes = mem;
	assert_int_equal(proctab_sample(T, &x, clk), 0);
}

/*
 * A step's allocation is the largest limit any of its processes ended
 * under, or runs under as its newest sample says: the tighter of a process's CPU quota and its affinity, an
 * affinity as wide as the host being no limit; a process without one
 * (the docker client beside its container) does not hide it.
 */
static void a_step_keeps_the_largest_limit_its_processes_ran_under(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	S.host_cpus = 8;
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "go.sh"));
	run(ROOT, 101, "/p", ENV("TRACER_STEP=quota"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(101, 102, "/p", ENV("TRACER_STEP=quota"), "/usr/bin/samtools", ARGV("samtools", "sort"));
	run(ROOT, 103, "/p", ENV("TRACER_STEP=pinned"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 104, "/p", ENV("TRACER_STEP=free"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 105, "/p", ENV("TRACER_STEP=mixed"), "/usr/bin/docker", ARGV("docker", "run"));
	run(ROOT, 106, "/p", ENV("TRACER_STEP=mixed"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 107, "/p", ENV("TRACER_STEP=running"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	sample_limited(107, 3000, 8, 2ULL << 30); /* still running: its newest sample's */
	sample_limited(107, 1000, 8, 1ULL << 30);
	finish_limited(102, 1500, 8, 1ULL << 30); /* 1.5 CPUs of 8 */
	finish_limited(101, 4000, 2, 4ULL << 30); /* 4 CPUs of quota, pinned to 2: 2 */
	finish_limited(103, 0, 3, 0);             /* a cpuset of 3 */
	finish_limited(104, 16000, 8, 0);         /* a quota above the host's 8 CPUs: no limit */
	finish_limited(105, 0, 8, 0);             /* no limit at all */
	finish_limited(106, 500, 8, 256ULL << 20);
	build();
	assert_int_equal(step_id("quota")->cpu_limit_millicores, 2000);
	assert_int_equal(step_id("quota")->memory_limit_bytes, 4ULL << 30);
	assert_int_equal(step_id("pinned")->cpu_limit_millicores, 3000);
	assert_int_equal(step_id("pinned")->memory_limit_bytes, 0);
	assert_int_equal(step_id("free")->cpu_limit_millicores, 0);
	assert_int_equal(step_id("mixed")->cpu_limit_millicores, 500);
	assert_int_equal(step_id("mixed")->memory_limit_bytes, 256ULL << 20);
	assert_int_equal(step_id("running")->cpu_limit_millicores, 1000);
	assert_int_equal(step_id("running")->memory_limit_bytes, 1ULL << 30);
	/* once it has exited, its exit's stands: a later sample (records from other CPUs trail) does not move it */
	finish_limited(107, 2000, 8, 0);
	sample_limited(107, 500, 8, 512ULL << 20);
	build();
	assert_int_equal(step_id("running")->cpu_limit_millicores, 2000);
	assert_int_equal(step_id("running")->memory_limit_bytes, 0);
	assert_int_equal(step_id("free")->memory_limit_bytes, 0);
	/* the affinity is judged only against a known host; the quota always */
	assert_int_equal(step_proc_cpu_limit_millicores(&P(103)->alloc, 0), 0);
	assert_int_equal(step_proc_cpu_limit_millicores(&P(101)->alloc, 0), 4000);
	assert_int_equal(step_proc_cpu_limit_millicores(&P(101)->alloc, 2), 0);
	world_end();
}

/*
 * Without a limit the kernel enforced, a step's allocation is its SLURM
 * job's on this node, from its processes' environment: the CPUs, and the
 * memory per node or per CPU x the CPUs; a kernel limit wins where there is
 * one, dimension by dimension. A running process counts (the environment
 * is known at exec). Values that are not whole numbers in range count as
 * unset.
 */
static void a_step_without_a_kernel_limit_takes_its_slurm_allocation(void **state)
{
	uint64_t mc, bytes;

	(void)state;
	world(1024, ROOT, 0);
	S.host_cpus = 8;
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "go.sh"));
	run(ROOT, 101, "/p", ENV("TRACER_STEP=per_cpu", "SLURM_CPUS_ON_NODE=4", "SLURM_MEM_PER_CPU=2048"),
	    "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 102, "/p", ENV("TRACER_STEP=per_node", "SLURM_CPUS_ON_NODE=8", "SLURM_MEM_PER_NODE=1000",
				 "SLURM_MEM_PER_CPU=2048"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 103, "/p", ENV("TRACER_STEP=both", "SLURM_CPUS_ON_NODE=4", "SLURM_MEM_PER_NODE=16384"),
	    "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 104, "/p", ENV("TRACER_STEP=junk", "SLURM_CPUS_ON_NODE=4x", "SLURM_MEM_PER_NODE=-1"),
	    "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 105, "/p", ENV("TRACER_STEP=huge", "SLURM_CPUS_ON_NODE=1000001",
				 "SLURM_MEM_PER_NODE=99999999999999999999"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	finish(102, 0, 1, 1);
	finish_limited(103, 2000, 8, 0); /* the kernel's CPU limit wins; SLURM's memory stays */
	build();
	assert_int_equal(step_id("per_cpu")->cpu_limit_millicores, 4000); /* still running */
	assert_int_equal(step_id("per_cpu")->memory_limit_bytes, 8ULL << 30);
	assert_int_equal(step_id("per_node")->cpu_limit_millicores, 8000); /* the whole node is a reservation */
	assert_int_equal(step_id("per_node")->memory_limit_bytes, 1000ULL << 20);
	assert_int_equal(step_id("both")->cpu_limit_millicores, 2000);
	assert_int_equal(step_id("both")->memory_limit_bytes, 16ULL << 30);
	assert_int_equal(step_id("junk")->cpu_limit_millicores, 0);
	assert_int_equal(step_id("junk")->memory_limit_bytes, 0);
	assert_int_equal(step_id("huge")->cpu_limit_millicores, 0);
	assert_int_equal(step_id("huge")->memory_limit_bytes, 0);
	step_slurm_allocation(NULL, &mc, &bytes);
	assert_true(mc == 0 && bytes == 0);
	world_end();
}

/*
 * Snakemake puts a job's `threads:` in OMP_NUM_THREADS (snakemake/shell.py):
 * the step's CPUs where neither the kernel nor SLURM gave any; SLURM's and
 * the kernel's win where they did; junk counts as unset.
 */
static void a_step_without_any_other_allocation_takes_its_requested_threads(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	S.host_cpus = 8;
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "go.sh"));
	run(ROOT, 101, "/p", ENV("TRACER_STEP=threads", "OMP_NUM_THREADS=2"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 102, "/p", ENV("TRACER_STEP=slurm", "OMP_NUM_THREADS=2", "SLURM_CPUS_ON_NODE=4"), "/usr/bin/bwa",
	    ARGV("bwa", "mem"));
	run(ROOT, 103, "/p", ENV("TRACER_STEP=kernel", "OMP_NUM_THREADS=6"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	run(ROOT, 104, "/p", ENV("TRACER_STEP=junk", "OMP_NUM_THREADS=two"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	finish_limited(103, 1500, 8, 0);
	build();
	assert_int_equal(step_id("threads")->cpu_limit_millicores, 2000);
	assert_int_equal(step_id("threads")->memory_limit_bytes, 0);
	assert_int_equal(step_id("slurm")->cpu_limit_millicores, 4000);
	assert_int_equal(step_id("kernel")->cpu_limit_millicores, 1500);
	assert_int_equal(step_id("junk")->cpu_limit_millicores, 0);
	assert_int_equal(step_requested_millicores(NULL), 0);
	world_end();
}

static void run_identity_comes_from_the_earliest_process_with_each_key(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", ENV("TRACER_PIPELINE=rnaseq", "TRACER_RUN_ID=run-42"), "/bin/bash", ARGV("bash", "go.sh"));
	run(ROOT, 101, "/p", ENV("TRACER_RUN_ID=other", "AWS_BATCH_JOB_ID=abc-1"), "/bin/true", ARGV("true"));
	build();
	assert_string_equal(S.run.pipeline, "rnaseq");
	assert_string_equal(S.run.run_id, "run-42");
	assert_string_equal(S.run.aws_batch_job_id, "abc-1");
	assert_null(S.run.slurm_job_id);
	assert_null(S.run.engine);
	world_end();
}

/* ---- generic ---------------------------------------------------------- */

static void children_of_the_traced_command_are_generic_steps_named_by_their_tool(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "pipeline.sh"));
	run(ROOT, 101, "/p", NO_ENV, "/usr/bin/python3", ARGV("python3", "align.py", "--in", "x"));
	run(101, 102, "/p", NO_ENV, "/usr/bin/bwa", ARGV("bwa", "mem", "ref", "x"));
	run(ROOT, 103, "/p", NO_ENV, "/usr/bin/sort", ARGV("sort", "-k1", "x"));
	run(ROOT, 104, "/p", NO_ENV, "/bin/bash", ARGV("bash", "-c", "gzip a; gzip b"));
	run(104, 105, "/p", NO_ENV, "/bin/gzip", ARGV("gzip", "a"));
	run(104, 106, "/p", NO_ENV, "/bin/gzip", ARGV("gzip", "b"));
	/* a subshell of the traced command (fork, no exec) is the command: its children are steps */
	spawn(ROOT, 107);
	run(107, 108, "/p", NO_ENV, "/usr/bin/md5sum", ARGV("md5sum", "x"));
	build();
	assert_int_equal(S.n, 4);
	assert_null(step_of(ROOT));
	assert_null(step_of(107));
	assert_same_step(101, 102);
	assert_string_equal(step_of(101)->name, "align.py");
	assert_string_equal(step_of(101)->id, "proc-101");
	assert_int_equal(step_of(101)->engine, STEP_ENGINE_GENERIC);
	assert_tools(step_of(101), ARGV("align.py", "bwa mem"));
	assert_string_equal(step_of(103)->name, "sort");
	assert_string_equal(step_of(104)->name, "gzip"); /* an inline shell is named by what it ran */
	assert_tools(step_of(104), ARGV("gzip"));
	assert_int_equal(step_of(104)->tools[0].processes, 2);
	assert_string_equal(step_of(108)->name, "md5sum");
	world_end();
}

static void nested_engines_each_start_their_steps(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/x", NO_ENV, "/bin/bash", ARGV("bash", "main.sh"));
	/* a generic wrapper that runs Nextflow */
	run(ROOT, 101, "/x", NO_ENV, "/bin/bash", ARGV("bash", "wrapper.sh"));
	run(101, 102, "/x", NO_ENV, "/usr/bin/java", ARGV("java", "-jar", "/opt/nextflow-24.04.0-all.jar", "run", "m.nf"));
	/* a task whose script runs Snakemake: all of it is the task */
	nf_task(102, 200, WD_A, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	run(204, 210, WD_A, NO_ENV, "/usr/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  bwa index r"));
	exec_in(210, WD_A, NO_ENV, "/usr/bin/bwa", ARGV("bwa", "index", "r"));
	/* Snakemake beside it, directly under the traced command */
	run(ROOT, 300, "/y", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	run(300, 301, "/y", NO_ENV, "/usr/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  samtools faidx r"));
	run(300, 302, "/y", NO_ENV, "/usr/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  samtools dict r"));
	build();
	assert_int_equal(S.n, 4);
	assert_string_equal(step_of(101)->name, "wrapper.sh");
	assert_tools(step_of(101), ARGV("wrapper.sh"));
	assert_null(step_of(102)); /* the engine leaves the wrapper's step */
	assert_same_step(200, 204);
	assert_same_step(200, 210);
	assert_tools(step_of(200), ARGV("bwa index")); /* the inner snakemake is an engine: not a tool */
	assert_null(step_of(300));
	assert_int_equal(step_of(301)->engine, STEP_ENGINE_SNAKEMAKE);
	assert_ptr_not_equal(step_of(301), step_of(302));
	assert_ptr_equal(S.run.engine_proc, P(102)); /* the outermost (earliest) engine */
	assert_string_equal(S.run.engine, "nextflow");
	world_end();
}

static void daemon_mode_makes_steps_only_where_something_says_so(void **state)
{
	(void)state;
	world(1024, 0, 0);
	exec_in(500, "/", NO_ENV, "/usr/sbin/cron", ARGV("cron"));
	run(500, 501, "/", NO_ENV, "/bin/sh", ARGV("sh", "-c", "backup"));
	exec_in(600, "/p", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake", "-c1"));
	run(600, 601, "/p", NO_ENV, "/bin/bash", ARGV("bash", "-c", "set -euo pipefail;  gzip x"));
	exec_in(700, "/q", ENV("SLURM_JOB_ID=8", "SLURM_STEP_ID=2"), "/usr/bin/bwa", ARGV("bwa", "mem"));
	build();
	assert_int_equal(S.n, 2);
	assert_null(step_of(500));
	assert_null(step_of(501));
	assert_non_null(step_of(601));
	assert_string_equal(step_of(700)->id, "slurm-8.2");
	world_end();
}

/* ---- bounds ----------------------------------------------------------- */

static void steps_beyond_the_bound_are_counted_and_their_processes_unassigned(void **state)
{
	(void)state;
	world(1024, ROOT, 4);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "many.sh"));
	for (uint32_t i = 0; i < 10; i++) {
		run(ROOT, 200 + 2 * i, "/p", NO_ENV, "/bin/bash", ARGV("bash", "part.sh"));
		run(200 + 2 * i, 201 + 2 * i, "/p", NO_ENV, "/bin/true", ARGV("true"));
	}
	build();
	assert_int_equal(S.n, 4);
	assert_int_equal(S.dropped, 6);
	assert_int_equal(S.unassigned, 12); /* 6 subtrees of 2 */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(S.v[i].processes, 2);
	assert_int_equal(steps_init(&(struct steps){ 0 }, STEPS_MAX_LIMIT + 1, 0), -EINVAL);
	world_end();
}

static void tool_list_is_bounded_and_counts_the_rest(void **state)
{
	const struct step *st;
	char path[64], name[32];

	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 101, "/p", NO_ENV, "/bin/bash", ARGV("bash", "many-tools.sh"));
	for (uint32_t i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "/usr/bin/tool%02u", i);
		snprintf(name, sizeof(name), "tool%02u", i);
		run(101, 200 + i, "/p", NO_ENV, path, ARGV(name));
	}
	build();
	st = step_of(101);
	assert_int_equal(st->n_tools, STEP_MAX_TOOLS);
	assert_string_equal(st->tools[0].name, "many-tools.sh");
	assert_string_equal(st->tools[1].name, "tool00");
	assert_string_equal(st->tools[STEP_MAX_TOOLS - 1].name, "tool14");
	assert_int_equal(st->tools_more, 40 - (STEP_MAX_TOOLS - 1));
	world_end();
}

static void tool_list_keeps_the_first_started_whatever_the_table_order(void **state)
{
	const struct step *st;
	char path[64], name[32];

	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 101, "/p", NO_ENV, "/bin/bash", ARGV("bash", "-c", "..."));
	/* Exec records first (table order), fork records with earlier start times later. */
	for (uint32_t i = 0; i < 30; i++) {
		uint32_t pid = 200 + i;

		starts[pid] = 100000 - i * 10; /* later pids started earlier */
		snprintf(path, sizeof(path), "/usr/bin/t%02u", i);
		snprintf(name, sizeof(name), "t%02u", i);
		exec_in(pid, "/p", NO_ENV, path, ARGV(name));
		P(pid)->ppid = 101;
		P(pid)->parent_start_ns = starts[101];
		P(pid)->parent_start_known = true;
		P(pid)->parent_src = PARENT_FROM_FORK;
	}
	build();
	st = step_of(101);
	assert_int_equal(st->n_tools, STEP_MAX_TOOLS);
	assert_string_equal(st->tools[0].name, "t29");
	assert_string_equal(st->tools[STEP_MAX_TOOLS - 1].name, "t14");
	assert_int_equal(st->tools_more, 30 - STEP_MAX_TOOLS);
	world_end();
}

/* ---- hostile inputs ------------------------------------------------- */

static void long_cwd_and_argv_and_missing_images_are_handled(void **state)
{
	static char cwd[TR_CWD_MAX], arg[2000], step[900];
	struct tr_exit x;

	(void)state;
	world(1024, ROOT, 0);
	/* a work dir at the end of a 1023-byte cwd */
	memset(cwd, 'a', sizeof(cwd) - 1);
	cwd[0] = '/';
	memcpy(cwd + sizeof(cwd) - 1 - 34, "/ab/cdef0123456789abcdef0123456789", 34);
	memset(arg, 'z', sizeof(arg) - 1);
	memset(step, 's', sizeof(step) - 1);
	memcpy(step, "TRACER_STEP=", 12);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 101, cwd, NO_ENV, "/bin/bash", ARGV("bash", "-ue", ".command.run", arg));
	run(ROOT, 102, "/p", ENV(step), "/usr/bin/x", ARGV("x", arg, arg));
	/* a name with control characters: kept as it came (the report escapes), still one step */
	run(ROOT, 104, "/p", ENV("TRACER_STEP=a\tb\x1b[31m"), "/usr/bin/x", ARGV("x"));
	run(ROOT, 105, "/p", ENV("TRACER_STEP=a\tb\x1b[31m"), "/usr/bin/y", ARGV("y"));
	/* a process known only from its exit record (its exec was lost), a child of the root */
	x = encode_exit(++clk, 103, 5000, ROOT, 0);
	starts[103] = 5000;
	assert_int_equal(proctab_exit(T, &x, clk, NULL), 0);
	build();
	assert_string_equal(step_of(101)->id, "nf-ab/cdef01");
	assert_int_equal(strlen(step_of(101)->workdir), sizeof(cwd) - 1);
	assert_int_equal(strlen(step_of(102)->id), STEP_NAME_MAX - 1);
	assert_non_null(step_of(103));
	assert_string_equal(step_of(103)->name, "proc"); /* its comm */
	assert_same_step(104, 105);
	assert_string_equal(step_of(104)->id, "a\tb\x1b[31m");
	world_end();
}

static void lost_root_records_leave_its_children_generic_steps(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	/* nothing of the root itself, only children whose parent pid is the root's */
	{
		_Alignas(8) static unsigned char buf[DECODE_MAX_LEN];
		size_t n;

		starts[101] = ++clk;
		n = encode_exec_ctx(buf, sizeof(buf), ++clk, 101, ROOT, starts[101], "/usr/bin/gzip", ARGV("gzip", "x"),
				    "/p", NULL);
		assert_int_equal(decode_record(&dec, TR_EXEC, buf, (uint32_t)n), 0);
		assert_int_equal(proctab_exec(T, &dec.u.exec, clk, NULL), 0);
	}
	build();
	assert_true(P(101)->in_tree);
	assert_string_equal(step_of(101)->name, "gzip");
	world_end();
}

static void parent_cycles_in_daemon_mode_end_the_walk(void **state)
{
	struct proc *a, *b, *c;

	(void)state;
	world(1024, 0, 0);
	exec_in(10, "/", NO_ENV, "/usr/bin/snakemake", ARGV("/usr/bin/python3", "/usr/bin/snakemake"));
	exec_in(11, "/", NO_ENV, "/bin/bash", ARGV("bash", "-c", "x"));
	exec_in(12, "/", NO_ENV, "/bin/bash", ARGV("bash", "-c", "y"));
	a = P(10);
	b = P(11);
	c = P(12);
	/* 10 -> 11 -> 12 -> 10, and 12 -> itself would be the same */
	a->ppid = 12, a->parent_start_ns = starts[12];
	b->ppid = 10, b->parent_start_ns = starts[10];
	c->ppid = 11, c->parent_start_ns = starts[11];
	a->parent_start_known = b->parent_start_known = c->parent_start_known = true;
	a->parent_src = b->parent_src = c->parent_src = PARENT_FROM_FORK;
	build();
	assert_true(S.n <= 3);
	for (struct proc *p = proctab_next(T, NULL); p; p = proctab_next(T, p))
		assert_true(p->step <= S.n);
	/* a self-parent */
	a->ppid = 10, a->parent_start_ns = starts[10];
	build();
	assert_true(S.n <= 3);
	world_end();
}

static void deep_chain_is_walked_without_recursion(void **state)
{
	const uint32_t depth = 20000;

	(void)state;
	world(32768, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 1000, "/p", NO_ENV, "/bin/bash", ARGV("bash", "chain.sh"));
	for (uint32_t i = 1; i < depth; i++) /* forks without exec, each of the one before */
		spawn(1000 + i - 1, 1000 + i);
	exec_in(1000 + depth - 1, "/p", NO_ENV, "/usr/bin/leaf", ARGV("leaf"));
	build();
	assert_int_equal(S.n, 1);
	assert_int_equal(S.v[0].processes, depth);
	assert_same_step(1000, 1000 + depth - 1);
	assert_tools(&S.v[0], ARGV("chain.sh", "leaf"));
	assert_int_equal(S.v[0].tools[0].processes, depth - 1);
	world_end();
}

static void rebuilding_gives_the_same_steps(void **state)
{
	char first[16][STEP_NAME_MAX];
	uint32_t n;

	(void)state;
	world(1024, ROOT, 0);
	snakemake_run();
	build();
	n = S.n;
	for (uint32_t i = 0; i < n; i++)
		snprintf(first[i], sizeof(first[i]), "%s %s %u", S.v[i].id, S.v[i].name, S.v[i].processes);
	build();
	assert_int_equal(S.n, n);
	for (uint32_t i = 0; i < n; i++) {
		char again[STEP_NAME_MAX];

		snprintf(again, sizeof(again), "%s %s %u", S.v[i].id, S.v[i].name, S.v[i].processes);
		assert_string_equal(again, first[i]);
	}
	world_end();
}

static void processes_outside_the_tree_are_left_alone(void **state)
{
	(void)state;
	world(1024, ROOT, 0);
	exec_in(ROOT, "/p", NO_ENV, "/bin/bash", ARGV("bash", "x.sh"));
	run(ROOT, 101, "/p", NO_ENV, "/bin/true", ARGV("true"));
	exec_in(900, "/", ENV("TRACER_STEP=elsewhere"), "/usr/sbin/sshd", ARGV("sshd"));
	build();
	assert_int_equal(S.n, 1);
	assert_int_equal(P(900)->step, 0);
	world_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snakemake_jobs_are_one_step_each_with_their_tools),
		cmocka_unit_test(snakemake_job_that_failed_names_its_main_process_and_first_failure),
		cmocka_unit_test(step_figures_sum_its_processes),
		cmocka_unit_test(unfinished_step_counts_its_running_processes),
		cmocka_unit_test(snakemake_job_runner_names_the_step_by_its_rule),
		cmocka_unit_test(snakemake_child_that_is_not_a_job_belongs_to_no_step),
		cmocka_unit_test(an_engines_child_counts_its_own_image_not_the_engines),
		cmocka_unit_test(an_exit_without_its_image_peak_uses_samples_then_rusage_and_says_so),
		cmocka_unit_test(nextflow_tasks_are_one_step_per_work_directory),
		cmocka_unit_test(nextflow_task_without_a_launcher_is_still_a_task),
		cmocka_unit_test(nextflow_work_directory_falls_back_to_argv_then_environment),
		cmocka_unit_test(nextflow_short_ids_that_collide_stay_distinct),
		cmocka_unit_test(cwltool_tool_invocations_are_steps_and_its_helpers_are_not),
		cmocka_unit_test(slurm_job_steps_group_processes_by_job_and_step),
		cmocka_unit_test(engine_tasks_inside_a_slurm_job_are_their_own_steps),
		cmocka_unit_test(a_cluster_job_is_one_step_named_by_its_rule),
		cmocka_unit_test(a_job_name_gives_its_task_when_an_engine_made_it),
		cmocka_unit_test(tracer_step_names_a_step_and_wins_over_everything),
		cmocka_unit_test(a_step_keeps_the_largest_limit_its_processes_ran_under),
		cmocka_unit_test(a_step_without_a_kernel_limit_takes_its_slurm_allocation),
		cmocka_unit_test(a_step_without_any_other_allocation_takes_its_requested_threads),
		cmocka_unit_test(run_identity_comes_from_the_earliest_process_with_each_key),
		cmocka_unit_test(children_of_the_traced_command_are_generic_steps_named_by_their_tool),
		cmocka_unit_test(nested_engines_each_start_their_steps),
		cmocka_unit_test(daemon_mode_makes_steps_only_where_something_says_so),
		cmocka_unit_test(steps_beyond_the_bound_are_counted_and_their_processes_unassigned),
		cmocka_unit_test(tool_list_is_bounded_and_counts_the_rest),
		cmocka_unit_test(tool_list_keeps_the_first_started_whatever_the_table_order),
		cmocka_unit_test(long_cwd_and_argv_and_missing_images_are_handled),
		cmocka_unit_test(lost_root_records_leave_its_children_generic_steps),
		cmocka_unit_test(parent_cycles_in_daemon_mode_end_the_walk),
		cmocka_unit_test(deep_chain_is_walked_without_recursion),
		cmocka_unit_test(rebuilding_gives_the_same_steps),
		cmocka_unit_test(processes_outside_the_tree_are_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
