/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report of a large run (make bench-html; issue 16): how large the
 * page of a 100,000-process run is, against the tracer.run.v1 report it is
 * made from, and what making it costs.
 *
 *   1. Untimed: a report of PROCESSES processes (default 100,000) in STEPS
 *      steps (default 100), written with the processor's JSON writer
 *      (records/json.h), every member the processor writes, in its order
 *      (docs/processor.md): an nf-core/rnaseq-like Nextflow run, ten
 *      stages over STEPS / 10 samples, eight tasks at a time; each task a
 *      .command.run, its .command.sh and its tools (samtools, STAR, salmon,
 *      gzip, awk, sort, ...) with real-looking command lines, working
 *      directories, cgroups and 2-12 files each (inputs in the work
 *      directory, the reference, locale files, outputs); processes of more
 *      than a second with 1-s samples (at most 64, as the processor keeps).
 *      About 0.5 % of the tools end non-zero (tolerated), a task fails,
 *      one process is OOM-killed, three are killed, one stalls. Figures
 *      vary by a fixed pseudo-random sequence: the same report every time.
 *      It is written to OUT/report.json.
 *   2. Timed (CLOCK_MONOTONIC): html_data_write over it, three times (the
 *      median); its peak resident memory above what the process held
 *      before (VmHWM after resetting it through /proc/self/clear_refs,
 *      less VmRSS then); then html_write_file, the page as tracer run
 *      --html writes it, to OUT/report.html.
 *
 * Results as "<metric> <value> <unit>" lines on stdout (bench/html.sh adds
 * the time to open the page in headless Chromium); a missed target as a
 * <4> line on stderr. Environment: PROCESSES, STEPS (a multiple of 10).
 * Exit 0; 1 when a call failed; 2 on a usage or setup error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "html.h"
#include "html_data.h"
#include "json.h"

#define NS ((uint64_t)1000000000)
#define MS ((uint64_t)1000000)
#define T0 ((uint64_t)1795843800000000000) /* the run's start (real time) */
#define SLOTS 8                              /* tasks at a time */
#define STAGES 10
#define MAX_POINTS 64                        /* points of a process's series, as the processor keeps */
#define BUCKETS 24                           /* a step's series */
#define WRAPPER_RSS (3584u << 10)
#define TARGET_BYTES (10u * 1000 * 1000)

struct stage {
	const char *name;
	const char *tools[4];
	uint64_t rss; /* a tool's typical peak */
	double cores;
};

static const struct stage stages[STAGES] = {
	{ "FASTQC", { "fastqc", "java", "gzip", "cat" }, 300u << 20, 1.0 },
	{ "TRIMGALORE", { "trim_galore", "cutadapt", "pigz", "gzip" }, 200u << 20, 1.5 },
	{ "STAR_ALIGN", { "STAR", "samtools", "gzip", "awk" }, 1u << 30, 3.5 },
	{ "SAMTOOLS_SORT", { "samtools", "samtools", "sort", "awk" }, 800u << 20, 2.0 },
	{ "SAMTOOLS_INDEX", { "samtools", "cat", "awk", "grep" }, 100u << 20, 1.0 },
	{ "PICARD_MARKDUPLICATES", { "picard", "java", "samtools", "grep" }, 900u << 20, 1.2 },
	{ "SALMON_QUANT", { "salmon", "gzip", "awk", "sort" }, 700u << 20, 3.0 },
	{ "QUALIMAP_RNASEQ", { "qualimap", "java", "Rscript", "cat" }, 600u << 20, 1.0 },
	{ "STRINGTIE", { "stringtie", "awk", "sort", "gzip" }, 300u << 20, 1.8 },
	{ "DESEQ2_QC", { "Rscript", "R", "cat", "grep" }, 500u << 20, 1.0 },
};

static const char *const common_files[] = { "/usr/lib/locale/C.utf8/LC_CTYPE", "/etc/nsswitch.conf",
					    "/data/ref/GRCh38/GRCh38.primary_assembly.genome.fa" };

struct gen {
	struct json *j;
	uint64_t rng;  /* the details of each process as it is written */
	uint64_t pid;
	unsigned nsteps;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12; /* xorshift64* */
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

/* A uniform integer in [lo, hi]. */
static uint64_t between(uint64_t *x, uint64_t lo, uint64_t hi)
{
	return lo + rnd(x) % (hi - lo + 1);
}

/* How a process ended: an exit code, or a signal (exit_code -1). */
struct ending {
	int exit_code;
	int sig;
	bool oom;
};

/* A step's task: where it ran, what it is called, what its processes added up to. */
struct task {
	unsigned step, stage, sample, nprocs;
	uint64_t seed; /* its processes' times and figures: the same in both passes */
	char id[48], name[96], workdir[96], cgroup[96];
	const char *tools[4];
	unsigned ntools;
	uint64_t start, dur, end;
	uint64_t run_pid, sh_pid, first_failed, first_failed_end, oom_pid, killed_pid, stall_pid;
	uint64_t cpu, max_rss, rd, wr;
	unsigned failed_procs, oom;
	bool failed;
	double b_cpu[BUCKETS], b_io[BUCKETS], b_rss[BUCKETS];
};

/* Which tasks go wrong: one fails, one has an OOM kill, one a stall; three have a process killed. */
static bool is_failed(const struct gen *g, unsigned s) { return s == g->nsteps * 37 / 100; }
static bool is_oom(const struct gen *g, unsigned s) { return s == g->nsteps * 52 / 100; }
static bool is_stall(const struct gen *g, unsigned s) { return s == g->nsteps * 71 / 100; }
static bool is_killed(const struct gen *g, unsigned s)
{
	return s == g->nsteps / 5 || s == g->nsteps / 3 || s == g->nsteps - 2;
}

/* One tool process of a task, before it is placed in time. */
struct pgen {
	uint64_t dur, gap, cpu, rss, rd, wr;
	const char *tool;
	struct ending e;
	bool stalls;
};

static void proc_gen(const struct gen *g, uint64_t *r, const struct task *t, unsigned k, struct pgen *p)
{
	const struct stage *st = &stages[t->stage];

	p->dur = between(r, 2, 400) * MS;
	if (k % 50 == 7)
		p->dur = between(r, 1, 40) * NS; /* now and then a long one */
	p->gap = between(r, 100000, 3000000);
	p->tool = st->tools[between(r, 0, 3)];
	p->cpu = (uint64_t)((double)p->dur * st->cores * (double)between(r, 50, 100) / 100);
	p->rss = st->rss / 100 * between(r, 20, 100);
	p->rd = between(r, 0, 64u << 20);
	p->wr = between(r, 0, 16u << 20);
	p->e = (struct ending){ .exit_code = 0 };
	p->stalls = false;
	if (k % 200 == 13)
		p->e.exit_code = 1; /* grep -q without a match, a test: tolerated */
	if (is_failed(g, t->step) && k + 1 == t->nprocs)
		p->e.exit_code = 1;
	if (is_oom(g, t->step) && k == t->nprocs / 2)
		p->e = (struct ending){ .exit_code = -1, .sig = 9, .oom = true };
	if (is_killed(g, t->step) && k == t->nprocs / 3)
		p->e = (struct ending){ .exit_code = -1, .sig = 15 };
	if (is_stall(g, t->step) && k == 10) {
		p->dur = 300 * NS; /* waits on a lock, no progress */
		p->cpu = 2 * NS;
		p->stalls = true;
	}
}

static void task_of(struct gen *g, unsigned s, unsigned nprocs, struct task *t)
{
	unsigned h = (unsigned)rnd(&g->rng);
	uint64_t r;
	struct pgen p;

	*t = (struct task){ .step = s, .stage = s % STAGES, .sample = s / STAGES + 1, .nprocs = nprocs };
	t->seed = rnd(&g->rng) | 1;
	snprintf(t->workdir, sizeof(t->workdir), "/data/work/%02x/%06x%08x%08x%08x", h & 0xff, h >> 8,
		 (unsigned)rnd(&g->rng), (unsigned)rnd(&g->rng), (unsigned)rnd(&g->rng));
	snprintf(t->id, sizeof(t->id), "nf-%.2s/%.6s", t->workdir + 11, t->workdir + 14);
	snprintf(t->name, sizeof(t->name), "[%.2s/%.6s] NFCORE_RNASEQ:RNASEQ:%s (S%02u)", t->workdir + 11,
		 t->workdir + 14, stages[t->stage].name, t->sample);
	snprintf(t->cgroup, sizeof(t->cgroup), "/system.slice/nextflow.service/task-%u", s);
	/* Its length: the wrappers' 8 ms, the tools one after another, 20 ms for the wrappers to end. */
	r = t->seed;
	t->dur = 8 * MS;
	for (unsigned k = 0; k < nprocs; k++) {
		proc_gen(g, &r, t, k, &p);
		t->dur += p.dur + p.gap;
		for (unsigned i = 0; i <= t->ntools; i++) {
			if (i == t->ntools) {
				t->tools[t->ntools++] = p.tool;
				break;
			}
			if (!strcmp(t->tools[i], p.tool))
				break;
		}
	}
	t->dur += 20 * MS;
}

static void put_argv(struct json *j, char a[][160], unsigned n)
{
	json_key(j, "argv");
	json_array_begin(j);
	for (unsigned i = 0; i < n; i++)
		json_string(j, a[i]);
	json_array_end(j);
}

/* A tool's executable and command line, as the stage would run it. */
static void write_command(struct json *j, const struct task *t, const char *tool, unsigned k)
{
	char a[10][160], exe[160];
	unsigned n = 0;

	snprintf(exe, sizeof(exe), "/usr/local/bin/%s", tool);
#define ARG(...) snprintf(a[n++], sizeof(a[0]), __VA_ARGS__)
	if (!strcmp(tool, "samtools")) {
		static const char *const sub[] = { "view", "sort", "index", "flagstat" };

		ARG("samtools");
		ARG("%s", sub[k % 4]);
		ARG("-@");
		ARG("4");
		ARG("-o");
		ARG("%s/S%02u.chunk%04u.bam", t->workdir, t->sample, k);
		ARG("%s/S%02u.Aligned.out.bam", t->workdir, t->sample);
		ARG("chr%u:%u-%u", 1 + k % 22, k * 100000, (k + 1) * 100000);
	} else if (!strcmp(tool, "STAR") || !strcmp(tool, "salmon") || !strcmp(tool, "stringtie")) {
		ARG("%s", tool);
		ARG("--runThreadN");
		ARG("8");
		ARG("--genomeDir");
		ARG("/data/ref/GRCh38/star_index");
		ARG("--readFilesIn");
		ARG("%s/S%02u_R1.trimmed.fq.gz", t->workdir, t->sample);
		ARG("%s/S%02u_R2.trimmed.fq.gz", t->workdir, t->sample);
		ARG("--outFileNamePrefix");
		ARG("S%02u.", t->sample);
	} else if (!strcmp(tool, "awk")) {
		snprintf(exe, sizeof(exe), "/usr/bin/awk");
		ARG("awk");
		ARG("-F\t");
		ARG("$3 == \"exon\" { n[$1]++ } END { for (c in n) print c, n[c] }");
		ARG("%s/S%02u.part%04u.gtf", t->workdir, t->sample, k);
	} else if (!strcmp(tool, "java") || !strcmp(tool, "picard") || !strcmp(tool, "fastqc") ||
		   !strcmp(tool, "qualimap")) {
		snprintf(exe, sizeof(exe), "/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
		ARG("java");
		ARG("-Xmx4g");
		ARG("-jar");
		ARG("/usr/local/share/%s/%s.jar", tool, tool);
		ARG("--input");
		ARG("%s/S%02u.chunk%04u.bam", t->workdir, t->sample, k);
	} else if (!strcmp(tool, "Rscript") || !strcmp(tool, "R")) {
		snprintf(exe, sizeof(exe), "/usr/bin/Rscript");
		ARG("Rscript");
		ARG("--vanilla");
		ARG("/data/pipelines/nf-core-rnaseq/bin/deseq2_qc.r");
		ARG("--count_file");
		ARG("%s/salmon.merged.gene_counts.tsv", t->workdir);
	} else {
		snprintf(exe, sizeof(exe), "/usr/bin/%s", tool);
		ARG("%s", tool);
		ARG(k % 3 ? "-c" : "-k");
		ARG("%s/S%02u.part%04u.txt", t->workdir, t->sample, k);
	}
#undef ARG
	json_kv_string(j, "exe", exe);
	put_argv(j, a, n);
}

static void write_files(struct gen *g, const struct task *t, unsigned k)
{
	struct json *j = g->j;
	unsigned n = (unsigned)between(&g->rng, 2, 12);
	char path[200];

	json_key(j, "files");
	json_array_begin(j);
	for (unsigned i = 0; i < n; i++) {
		const char *mode = "r";

		if (i < 3)
			snprintf(path, sizeof(path), "%s", common_files[i]);
		else if (i + 1 == n) {
			snprintf(path, sizeof(path), "%s/S%02u.part%04u.out", t->workdir, t->sample, k);
			mode = "w";
		} else
			snprintf(path, sizeof(path), "%s/S%02u.chunk%04u.in%u", t->workdir, t->sample, k, i);
		json_object_begin(j);
		json_kv_string(j, "path", path);
		json_kv_string(j, "mode", mode);
		json_object_end(j);
	}
	json_array_end(j);
}

/* 1-s samples of a process of more than a second, at most MAX_POINTS (every other one dropped as it fills). */
static void write_series(struct json *j, uint64_t start, uint64_t end, uint64_t cpu, uint64_t rss, uint64_t rd,
			 uint64_t wr)
{
	static const char *const cols[] = { "t_ns", "cpu_ns", "rss_bytes", "read_bytes", "write_bytes", "rchar",
					     "wchar", "net_tx_bytes", "net_rx_bytes", "iowait_ns" };
	uint64_t n = (end - start) / NS, step = 1;

	if (n == 0) {
		json_kv_null(j, "series");
		json_kv_null(j, "peaks");
		return;
	}
	while (n / step > MAX_POINTS)
		step *= 2;
	json_key(j, "series");
	json_object_begin(j);
	for (unsigned c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		json_key(j, cols[c]);
		json_array_begin(j);
		for (uint64_t i = step; i <= n; i += step) {
			uint64_t share = i * 1000 / (n + 1);

			switch (c) {
			case 0: json_u64(j, start + i * NS); break;
			case 1: json_u64(j, cpu / 1000 * share); break;
			case 2: json_u64(j, rss / 2 + rss / 2000 * share); break;
			case 3: case 5: json_u64(j, rd / 1000 * share); break;
			case 4: case 6: json_u64(j, wr / 1000 * share); break;
			default: json_u64(j, 0); break;
			}
		}
		json_array_end(j);
	}
	json_kv_u64(j, "samples", n);
	json_object_end(j);
	json_key(j, "peaks");
	json_object_begin(j);
	json_kv_u64(j, "rss_bytes", rss);
	json_kv_u64(j, "cpu_millicores", cpu / ((end - start) / MS + 1));
	json_kv_u64(j, "read_bytes_per_s", rd / (n + 1));
	json_kv_u64(j, "write_bytes_per_s", wr / (n + 1));
	json_kv_u64(j, "net_tx_bytes_per_s", 0);
	json_kv_u64(j, "net_rx_bytes_per_s", 0);
	json_object_end(j);
}

/* What write_process needs to know of one process. */
struct proc {
	const struct task *t; /* NULL: the engine */
	uint64_t pid, ppid, start, end, cpu, rss, rd, wr;
	const char *tool;
	unsigned k;           /* its number in its task (names its files) */
	int wrapper;          /* 0: a tool; 1: .command.run; 2: .command.sh */
	struct ending e;
};

static void write_engine_command(struct json *j)
{
	char a[10][160];
	unsigned n = 0;
	static const char *const words[] = { "java", "-Xmx2g", "-cp", "/opt/nextflow/nextflow-24.04.4-one.jar",
					     "nextflow.cli.Launcher", "run", "nf-core/rnaseq", "-profile", "docker",
					     "--input" };

	for (; n < sizeof(words) / sizeof(words[0]); n++)
		snprintf(a[n], sizeof(a[0]), "%s", words[n]);
	json_kv_string(j, "exe", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
	put_argv(j, a, n);
}

/* One process, every member the processor writes, in its order (docs/processor.md). */
static void write_process(struct gen *g, const struct proc *p)
{
	struct json *j = g->j;
	const struct task *t = p->t;
	char comm[16];

	json_object_begin(j);
	json_kv_u64(j, "pid", p->pid);
	json_kv_u64(j, "ppid", p->ppid);
	json_kv_u64(j, "start_ns", p->start);
	json_kv_u64(j, "end_ns", p->end);
	if (!t) {
		write_engine_command(j);
	} else if (p->wrapper) {
		char a[2][160] = { "bash" };

		snprintf(a[1], sizeof(a[1]), "%s", p->wrapper == 1 ? ".command.run" : ".command.sh");
		json_kv_string(j, "exe", "/usr/bin/bash");
		put_argv(j, a, 2);
	} else {
		write_command(j, t, p->tool, p->k);
	}
	json_kv_string(j, "cwd", t ? t->workdir : "/data");
	json_kv_string(j, "tool", p->tool);
	json_kv_string(j, "step", t ? t->id : NULL);
	json_kv_u64_or_null(j, "exit_code", p->e.exit_code >= 0, (uint64_t)p->e.exit_code);
	json_kv_u64(j, "signal", (uint64_t)p->e.sig);
	json_kv_bool(j, "core_dumped", false);
	json_kv_bool(j, "oom_killed", p->e.oom);
	json_kv_u64(j, "cpu_user_ns", p->cpu - p->cpu / 8);
	json_kv_u64(j, "cpu_sys_ns", p->cpu / 8);
	json_kv_u64(j, "peak_rss_bytes", p->rss);
	json_kv_u64(j, "read_bytes", p->rd);
	json_kv_u64(j, "write_bytes", p->wr);
	json_kv_u64(j, "rchar", p->rd + 4096);
	json_kv_u64(j, "wchar", p->wr + 512);
	json_kv_u64(j, "net_tx_bytes", 0);
	json_kv_u64(j, "net_rx_bytes", 0);
	json_kv_null(j, "container_id");
	json_kv_string(j, "cgroup", t ? t->cgroup : "/system.slice/nextflow.service");
	if (t) {
		write_files(g, t, p->k);
	} else {
		json_key(j, "files");
		json_array_begin(j);
		json_object_begin(j);
		json_kv_string(j, "path", "/data/.nextflow.log");
		json_kv_string(j, "mode", "w");
		json_object_end(j);
		json_array_end(j);
	}
	json_kv_null(j, "container_runtime");
	json_kv_null(j, "pod_uid");
	json_kv_null(j, "pod_qos");
	json_kv_null(j, "slurm_job");
	json_kv_null(j, "slurm_step");
	json_kv_null(j, "slurm_task");
	json_kv_string(j, "systemd_unit", "nextflow.service");
	json_kv_u64(j, "cgroup_id", 4000 + (t ? t->step : 0));
	json_kv_u64(j, "uid", 1000);
	json_kv_u64(j, "gid", 1000);
	snprintf(comm, sizeof(comm), "%s", p->wrapper ? "bash" : p->tool);
	json_kv_string(j, "comm", comm);
	json_kv_string(j, "ppid_source", "fork");
	json_kv_bool(j, "exe_inherited", false);
	json_kv_bool(j, "exe_truncated", false);
	json_kv_bool(j, "argv_truncated", false);
	json_kv_u64(j, "cpu_ns", p->cpu);
	json_kv_u64(j, "cancelled_write_bytes", 0);
	json_kv_u64(j, "syscr", p->rd / 65536 + 12);
	json_kv_u64(j, "syscw", p->wr / 65536 + 3);
	json_kv_u64(j, "voluntary_ctxt_switches", between(&g->rng, 0, 400));
	json_kv_u64(j, "involuntary_ctxt_switches", between(&g->rng, 0, 80));
	json_kv_u64(j, "minor_faults", p->rss / 4096 + between(&g->rng, 50, 500));
	json_kv_u64(j, "major_faults", between(&g->rng, 0, 3));
	json_kv_u64(j, "run_delay_ns", between(&g->rng, 1000, 2000000));
	json_kv_u64(j, "threads", p->wrapper ? 1 : between(&g->rng, 1, 8));
	json_kv_bool(j, "threads_truncated", false);
	json_kv_string(j, "peak_rss_source", "exit");
	json_kv_u64(j, "maxrss_rusage_bytes", p->rss);
	json_kv_string(j, "cgroup_v1_memory", t ? t->cgroup : "/system.slice/nextflow.service");
	json_kv_u64(j, "mnt_ns", 4026531841ull);
	json_kv_u64(j, "pid_ns", 4026531836ull);
	json_kv_bool(j, "preexisting", false);
	json_kv_bool(j, "excluded", false);
	json_kv_u64(j, "iowait_ns", between(&g->rng, 0, (p->end - p->start) / 10 + 1));
	json_kv_u64(j, "blocked_ns", between(&g->rng, 0, 1000000));
	json_kv_u64(j, "net_wait_ns", 0);
	json_kv_u64(j, "files_dropped", 0);
	json_kv_u64(j, "longest_stall_ns", 0);
	write_series(j, p->start, p->end, p->cpu, p->rss, p->rd, p->wr);
	json_object_end(j);
}

/* Add v over [a, e] to a task's buckets, evenly; or hold it (the largest) when max. */
static void bucket_add(const struct task *t, double *b, uint64_t a, uint64_t e, double v, bool max)
{
	double w = (double)(t->end - t->start) / BUCKETS;
	int ka = (int)((double)(a - t->start) / w), kb = (int)((double)(e - t->start) / w);

	ka = ka < BUCKETS ? ka : BUCKETS - 1;
	kb = kb < BUCKETS ? kb : BUCKETS - 1;
	for (int k = ka; k <= kb; k++) {
		if (!max)
			b[k] += v / (kb - ka + 1);
		else if (v > b[k])
			b[k] = v;
	}
}

/* A task's processes: the two wrappers, then its tools one after another; its figures summed. */
static void write_task(struct gen *g, struct task *t, uint64_t engine_pid)
{
	uint64_t r = t->seed, at = t->start + 8 * MS;
	struct proc w = { .t = t, .tool = "bash", .rss = WRAPPER_RSS, .cpu = 4 * MS, .rd = 40960, .wr = 2048 };
	struct pgen p;

	t->run_pid = g->pid;
	t->sh_pid = g->pid + 1;
	g->pid += 2;
	w.e.exit_code = is_failed(g, t->step) ? 1 : 0;
	w.pid = t->run_pid;
	w.ppid = engine_pid;
	w.start = t->start;
	w.end = t->end;
	w.wrapper = 1;
	write_process(g, &w);
	w.pid = t->sh_pid;
	w.ppid = t->run_pid;
	w.start = t->start + 3 * MS;
	w.end = t->end - 10 * MS;
	w.wrapper = 2;
	write_process(g, &w);
	t->cpu = 2 * w.cpu;
	t->rd = 2 * w.rd;
	t->wr = 2 * w.wr;
	t->max_rss = WRAPPER_RSS;
	if (is_failed(g, t->step)) {
		t->failed = true;
		t->failed_procs = 2;
	}
	for (unsigned k = 0; k < t->nprocs; k++) {
		struct proc q = { .t = t, .pid = g->pid++, .ppid = t->sh_pid, .k = k };

		proc_gen(g, &r, t, k, &p);
		q.start = at;
		q.end = at + p.dur;
		q.cpu = p.cpu;
		q.rss = p.rss;
		q.rd = p.rd;
		q.wr = p.wr;
		q.tool = p.tool;
		q.e = p.e;
		at = q.end + p.gap;
		write_process(g, &q);
		t->cpu += q.cpu;
		t->rd += q.rd;
		t->wr += q.wr;
		if (q.rss > t->max_rss)
			t->max_rss = q.rss;
		bucket_add(t, t->b_cpu, q.start, q.end, (double)q.cpu, false);
		bucket_add(t, t->b_io, q.start, q.end, (double)(q.rd + q.wr), false);
		bucket_add(t, t->b_rss, q.start, q.end, (double)(q.rss + 2 * WRAPPER_RSS), true);
		if (q.e.exit_code || q.e.sig) {
			t->failed_procs++;
			if (!t->first_failed || q.end < t->first_failed_end) {
				t->first_failed = q.pid;
				t->first_failed_end = q.end;
			}
		}
		t->oom += q.e.oom;
		if (q.e.oom)
			t->oom_pid = q.pid;
		else if (q.e.sig)
			t->killed_pid = q.pid;
		if (p.stalls)
			t->stall_pid = q.pid;
	}
}

static void write_step(struct json *j, const struct task *t, uint64_t engine_pid)
{
	double w = (double)(t->end - t->start) / BUCKETS, top_cpu = 0, top_io = 0, top_rss = 0;
	static const char *const cols[] = { "cpu_ns", "io_bytes", "rss_bytes" };
	const double *b[] = { t->b_cpu, t->b_io, t->b_rss };

	(void)engine_pid;
	json_object_begin(j);
	json_kv_string(j, "id", t->id);
	json_kv_string(j, "name", t->name);
	json_key(j, "tools");
	json_array_begin(j);
	for (unsigned i = 0; i < t->ntools; i++)
		json_string(j, t->tools[i]);
	json_array_end(j);
	json_kv_u64(j, "start_ns", t->start);
	json_kv_u64(j, "end_ns", t->end);
	json_kv_string(j, "engine", "nextflow");
	json_kv_string(j, "workdir", t->workdir);
	json_kv_null(j, "rule");
	json_kv_u64(j, "pid", t->run_pid);
	json_kv_u64(j, "exit_code", t->failed ? 1 : 0);
	json_kv_u64(j, "signal", 0);
	json_kv_bool(j, "failed", t->failed);
	json_kv_u64_or_null(j, "first_failed_pid", t->first_failed != 0, t->first_failed);
	json_kv_u64(j, "processes", t->nprocs + 2);
	json_kv_u64(j, "running", 0);
	json_kv_u64(j, "failed_processes", t->failed_procs);
	json_kv_u64(j, "nonzero_exits", t->failed_procs - (t->failed ? 1 : 0));
	json_kv_u64(j, "oom_killed", t->oom);
	json_kv_u64(j, "cpu_ns", t->cpu);
	for (int k = 0; k < BUCKETS; k++) {
		top_cpu = t->b_cpu[k] > top_cpu ? t->b_cpu[k] : top_cpu;
		top_io = t->b_io[k] > top_io ? t->b_io[k] : top_io;
		top_rss = t->b_rss[k] > top_rss ? t->b_rss[k] : top_rss;
	}
	json_kv_u64(j, "peak_rss_bytes", (uint64_t)top_rss);
	json_kv_bool(j, "peak_rss_partial", false);
	json_kv_u64(j, "rss_sum_of_peaks_bytes", (uint64_t)top_rss);
	json_kv_u64(j, "max_process_rss_bytes", t->max_rss);
	json_kv_string(j, "memcg", t->cgroup);
	json_kv_u64(j, "memcg_peak_bytes", (uint64_t)top_rss + (8u << 20));
	json_kv_u64(j, "read_bytes", t->rd);
	json_kv_u64(j, "write_bytes", t->wr);
	json_kv_u64(j, "rchar", t->rd + 4096ull * (t->nprocs + 2));
	json_kv_u64(j, "wchar", t->wr + 512ull * (t->nprocs + 2));
	json_kv_bool(j, "io_partial", false);
	json_kv_u64(j, "net_tx_bytes", 0);
	json_kv_u64(j, "net_rx_bytes", 0);
	json_kv_u64(j, "tools_more", 0);
	json_key(j, "series");
	json_object_begin(j);
	json_kv_u64(j, "bucket_ns", (uint64_t)w);
	json_key(j, "t_ns");
	json_array_begin(j);
	for (int k = 0; k < BUCKETS; k++)
		json_u64(j, t->start + (uint64_t)(k * w));
	json_array_end(j);
	for (int c = 0; c < 3; c++) {
		json_key(j, cols[c]);
		json_array_begin(j);
		for (int k = 0; k < BUCKETS; k++)
			json_u64(j, (uint64_t)b[c][k]);
		json_array_end(j);
	}
	json_object_end(j);
	json_key(j, "peaks");
	json_object_begin(j);
	json_kv_u64(j, "cpu_millicores", (uint64_t)(top_cpu / w * 1000));
	json_kv_u64(j, "io_bytes_per_s", (uint64_t)(top_io / w * 1e9));
	json_kv_u64(j, "rss_bytes_sum", (uint64_t)top_rss);
	json_object_end(j);
	json_object_end(j);
}

static void signal_head(struct json *j, const char *kind, uint64_t pid, const struct task *t, const char *tool)
{
	json_object_begin(j);
	json_kv_string(j, "kind", kind);
	json_kv_u64(j, "pid", pid);
	json_kv_string(j, "step", t ? t->id : NULL);
	json_kv_string(j, "tool", tool);
	json_kv_string(j, "cgroup", t ? t->cgroup : "/system.slice/nextflow.service");
}

static void write_signals(struct json *j, const struct task *tasks, unsigned n, uint64_t engine_pid,
			  uint64_t run_start)
{
	json_key(j, "signals");
	json_array_begin(j);
	signal_head(j, "failed", engine_pid, NULL, "nextflow");
	json_kv_u64(j, "exit_code", 1);
	json_object_end(j);
	for (unsigned s = 0; s < n; s++) {
		const struct task *t = &tasks[s];

		if (t->failed) {
			signal_head(j, "failed", t->run_pid, t, "bash");
			json_kv_u64(j, "exit_code", 1);
			json_object_end(j);
		}
		if (t->stall_pid) {
			signal_head(j, "stalled", t->stall_pid, t, stages[t->stage].tools[0]);
			json_kv_u64(j, "start_ns", run_start + (t->start - run_start) + 60 * NS);
			json_kv_u64(j, "duration_ns", 240 * NS);
			json_kv_u64(j, "stall_after_ns", 120 * NS);
			json_kv_bool(j, "still_alive", false);
			json_kv_u64(j, "times", 1);
			json_object_end(j);
		}
		if (t->oom_pid) {
			signal_head(j, "oom_kill", t->oom_pid, t, stages[t->stage].tools[0]);
			json_kv_u64(j, "anon_rss_kb", 7340032);
			json_kv_u64(j, "total_vm_kb", 9437184);
			json_kv_u64(j, "file_rss_kb", 2048);
			json_kv_u64(j, "shmem_rss_kb", 0);
			json_kv_string(j, "memcg", t->cgroup);
			json_kv_u64(j, "memcg_limit_bytes", 8ull << 30);
			json_kv_u64(j, "memcg_usage_bytes", (8ull << 30) - 4096);
			json_object_end(j);
		}
		if (t->killed_pid) {
			signal_head(j, "killed", t->killed_pid, t, stages[t->stage].tools[1]);
			json_kv_u64(j, "signal", 15);
			json_kv_bool(j, "core_dumped", false);
			json_object_end(j);
		}
	}
	json_array_end(j);
}

static void write_agent(struct json *j, uint64_t nprocs)
{
	static const char *const reasons[] = { "type", "length", "header_type", "version", "path", "argv",
					       "pid", "cwd", "env", "cgroup", "file" };
	static const char *const zero[] = { "dropped", "kernel_drops", "ring_drops", "ring_resets",
					    "ring_bytes_discarded", "decode_errors" };
	static const char *const zero2[] = { "table_full", "no_memory" };
	static const char *const zero3[] = { "processes_evicted", "execs_dropped", "argv_dropped", "oom_unmatched" };

	json_key(j, "agent");
	json_object_begin(j);
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		json_kv_u64(j, zero[i], 0);
	json_key(j, "decode_errors_by_reason");
	json_object_begin(j);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		json_kv_u64(j, reasons[i], 0);
	json_object_end(j);
	for (size_t i = 0; i < sizeof(zero2) / sizeof(zero2[0]); i++)
		json_kv_u64(j, zero2[i], 0);
	json_kv_u64(j, "records", nprocs * 14);
	json_kv_u64(j, "records_copied", nprocs * 14);
	json_kv_u64(j, "max_processes", 262144);
	for (size_t i = 0; i < sizeof(zero3) / sizeof(zero3[0]); i++)
		json_kv_u64(j, zero3[i], 0);
	json_kv_u64(j, "samples", nprocs / 2);
	json_kv_u64(j, "series_dropped", 0);
	json_kv_u64(j, "files_dropped", 0);
	json_kv_u64(j, "cgroups_dropped", 0);
	json_kv_u64(j, "excluded", 0);
	json_kv_bool(j, "end_record", true);
	json_kv_bool(j, "collector_lost", false);
	json_kv_bool(j, "control_end", true);
	json_kv_bool(j, "interrupted", false);
	json_object_end(j);
}

/* The whole report: the engine, the tasks eight at a time, their steps, the run, the signals. */
static int generate(struct obuf *o, unsigned nprocs, unsigned nsteps)
{
	struct gen g = { .rng = 0x9e3779b97f4a7c15ull, .pid = 31000, .nsteps = nsteps };
	struct task *tasks = calloc(nsteps, sizeof(*tasks));
	uint64_t slot[SLOTS], engine_pid = 30999, engine_start = T0 + 5 * MS, end = 0;
	unsigned tools = nprocs - 1 - 2 * nsteps;
	struct json j;
	struct proc engine = { .pid = engine_pid, .ppid = 30990, .start = engine_start, .tool = "nextflow",
			       .rss = 1200u << 20, .rd = 50u << 20, .wr = 8u << 20, .e = { .exit_code = 1 } };

	if (!tasks)
		return -ENOMEM;
	g.j = &j;
	json_init(&j, o);
	for (unsigned s = 0; s < SLOTS; s++)
		slot[s] = engine_start + 4 * NS;
	for (unsigned s = 0; s < nsteps; s++) {
		unsigned k = 0;

		task_of(&g, s, tools / nsteps + (s < tools % nsteps), &tasks[s]);
		for (unsigned i = 1; i < SLOTS; i++)
			k = slot[i] < slot[k] ? i : k;
		tasks[s].start = slot[k] + between(&g.rng, 50, 900) * MS;
		tasks[s].end = tasks[s].start + tasks[s].dur;
		slot[k] = tasks[s].end;
		end = tasks[s].end > end ? tasks[s].end : end;
	}
	engine.end = end + 2 * NS;
	engine.cpu = (engine.end - engine.start) / 20;

	json_object_begin(&j);
	json_kv_string(&j, "schema", "tracer.run.v1");
	json_key(&j, "command");
	json_array_begin(&j);
	json_string(&j, "nextflow");
	json_string(&j, "run");
	json_string(&j, "nf-core/rnaseq");
	json_string(&j, "-profile");
	json_string(&j, "docker");
	json_string(&j, "--input");
	json_string(&j, "samplesheet.csv");
	json_array_end(&j);
	json_kv_u64(&j, "exit_code", 1);
	json_kv_u64(&j, "start_ns", T0);
	json_kv_u64(&j, "end_ns", engine.end + 10 * MS);
	json_kv_u64(&j, "uid", 1000);
	json_key(&j, "host");
	json_object_begin(&j);
	json_kv_string(&j, "cloud", "aws");
	json_kv_string(&j, "instance_type", "m6i.4xlarge");
	json_kv_string(&j, "instance_id", "i-0123456789abcdef0");
	json_kv_null(&j, "region");
	json_kv_u64(&j, "cpus", 16);
	json_kv_u64(&j, "memory_bytes", 66571993088ull);
	json_object_end(&j);
	write_agent(&j, nprocs);
	json_key(&j, "processes");
	json_array_begin(&j);
	write_process(&g, &engine);
	for (unsigned s = 0; s < nsteps; s++)
		write_task(&g, &tasks[s], engine_pid);
	json_array_end(&j);
	json_key(&j, "steps");
	json_array_begin(&j);
	for (unsigned s = 0; s < nsteps; s++)
		write_step(&j, &tasks[s], engine_pid);
	json_array_end(&j);
	json_key(&j, "run");
	json_object_begin(&j);
	json_kv_string(&j, "key", "5f0c6a2e9b7d4f1e8a3c2b1d0e9f8a7b-30999-1795843800");
	json_kv_string(&j, "pipeline", "nf-core/rnaseq");
	json_kv_string(&j, "run_id", "3c9d2e7a-51f4-4b8e-9a6d-0f1e2d3c4b5a");
	json_kv_string(&j, "engine", "nextflow");
	json_kv_string(&j, "run_name", "sleepy_turing");
	json_kv_string(&j, "engine_dir", "/data");
	json_kv_u64(&j, "engine_pid", engine_pid);
	json_kv_null(&j, "slurm_job_id");
	json_kv_null(&j, "aws_batch_job_id");
	json_kv_u64(&j, "steps_dropped", 0);
	json_kv_u64(&j, "processes_without_step_by_bound", 0);
	json_object_end(&j);
	write_signals(&j, tasks, nsteps, engine_pid, T0);
	json_object_end(&j);
	free(tasks);
	return o->err;
}

/* ---- measuring ----------------------------------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A line "Name:   N kB" of /proc/self/status, in bytes; 0 if not found. */
static uint64_t status_bytes(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(name);
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

/* Reset VmHWM to VmRSS (Linux 4.0+): what a step costs is then VmHWM after it less VmRSS now. */
static bool reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok = f && fputs("5", f) >= 0;

	if (f && fclose(f))
		ok = false;
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned env_unsigned(const char *name, unsigned def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)strtoul(v, NULL, 10) : def;
}

static int write_whole(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

int main(int argc, char **argv)
{
	unsigned nprocs = env_unsigned("PROCESSES", 100000), nsteps = env_unsigned("STEPS", 100);
	char label[32], json_path[4096], html_path[4096], err[160];
	double ms[3], t;
	uint64_t base, peak = 0, html_bytes;
	bool peak_known;
	struct obuf report, data;
	int rc = 0;

	if (argc != 2 || nsteps < 10 || nsteps % 10 || nprocs < 1 + 3 * nsteps) {
		fprintf(stderr, "usage: PROCESSES=N STEPS=S %s OUTDIR (S a multiple of 10, N at least 3 S + 1)\n",
			argv[0]);
		return 2;
	}
	if (nprocs % 1000 == 0)
		snprintf(label, sizeof(label), "%uk", nprocs / 1000);
	else
		snprintf(label, sizeof(label), "%u", nprocs);
	snprintf(json_path, sizeof(json_path), "%s/report.json", argv[1]);
	snprintf(html_path, sizeof(html_path), "%s/report.html", argv[1]);

	fprintf(stderr, "<7>html: generating a report of %u processes in %u steps\n", nprocs, nsteps);
	obuf_init_mem(&report, (size_t)8 << 30);
	if (generate(&report, nprocs, nsteps) || write_whole(json_path, report.buf, report.len)) {
		fprintf(stderr, "<3>html: cannot make the report in %s\n", json_path);
		return 2;
	}

	/* The transform: three times, the median; its peak memory on the first. */
	for (int i = 0; i < 3; i++) {
		obuf_init_mem(&data, (size_t)4 << 30);
		peak_known = i > 0 || reset_peak();
		base = status_bytes("VmRSS");
		t = now_ms();
		rc = html_data_write(&data, report.buf, report.len, err, sizeof(err));
		ms[i] = now_ms() - t;
		if (i == 0 && peak_known)
			peak = status_bytes("VmHWM") - base;
		if (rc) {
			fprintf(stderr, "<3>html: html_data_write: %s\n", err);
			return 1;
		}
		if (i == 0)
			printf("html.%s.data_bytes %zu bytes\n", label, data.len);
		obuf_free(&data);
	}
	qsort(ms, 3, sizeof(ms[0]), cmp_double);

	t = now_ms();
	if (html_write_file(html_path, report.buf, report.len, "tracer run", -1, -1, "html_bench"))
		return 1;
	t = now_ms() - t;
	html_bytes = file_size(html_path);

	printf("html.%s.processes %u processes\n", label, nprocs);
	printf("html.%s.steps %u steps\n", label, nsteps);
	printf("html.%s.raw_json_bytes %zu bytes\n", label, report.len);
	printf("html.%s.bytes %" PRIu64 " bytes\n", label, html_bytes);
	printf("html.%s.ratio %.4f x\n", label, (double)html_bytes / (double)report.len);
	printf("html.%s.transform_ms %.0f ms\n", label, ms[1]);
	if (peak_known)
		printf("html.%s.transform_peak_rss_bytes %" PRIu64 " bytes\n", label, peak);
	else
		fprintf(stderr, "<4>html: /proc/self/clear_refs refused: the transform's peak memory is not measured\n");
	printf("html.%s.write_ms %.0f ms\n", label, t);
	if (html_bytes >= TARGET_BYTES)
		fprintf(stderr, "<4>html: the page of %u processes is %" PRIu64 " bytes (target: under %u)\n", nprocs,
			html_bytes, TARGET_BYTES);
	fprintf(stderr, "<7>html: %s and %s\n", json_path, html_path);
	obuf_free(&report);
	return 0;
}
