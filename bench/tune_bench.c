/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer tune over a long history (make bench-tune; issue 15): how long
 * reading the lake into the analysis' input (view/tune_input.c, through
 * lake/read_tune.c) and the analysis itself take for RUNS runs of one
 * pipeline with STEPS steps each (default 1,000 x 100 = 100,000 tasks).
 *
 *   1. Untimed: a lake made in a new directory under LAKE_DIR (default
 *      /var/tmp): store_open creates the schema, then rows go in with
 *      sqlite3 directly, in one transaction, as the ingest would have
 *      derived them from live records and kernel records. Each run is an
 *      nf-core/rnaseq-like pipeline: STEPS / 10 samples, each through ten
 *      stages in a chain ("NFCORE_RNASEQ:RNASEQ:FASTQC (S01)" ... each
 *      stage reading the file the one before wrote, the alignment also the
 *      reference: a DAG of files), the samples in parallel. A task has
 *      1-3 processes with exit records (CPU, waits, I/O), each sampled 3-6
 *      times over its life; the engine is one more process of the run,
 *      sampled every 30 s. Every 50th run has an OOM kill. The newest
 *      run's SALMON_QUANT tasks are twice as slow, waiting on I/O, so that
 *      "slower than usual" has something to find. Figures vary by a fixed
 *      pseudo-random sequence: the same lake every time.
 *   2. Timed (CLOCK_MONOTONIC), on the lake opened read-only as tracer
 *      tune opens it: tune_input_load() over every run (load); then
 *      an_profiles() over every run of the pipeline, an_bottlenecks() and
 *      an_slower() (against every earlier run) on the newest (analysis).
 *
 * Results as "<metric> <value> <unit>" lines on stdout; progress on
 * stderr. Environment: RUNS, STEPS (a multiple of 10), LAKE_DIR, KEEP (1:
 * keep the directory); LAKE_OUT=PATH: only make the lake, at PATH (a file
 * that must not exist yet), and keep it, for another benchmark (make
 * bench-export: RUNS=5000 makes about 1,000,000 processes). Exit 0; 1 when
 * a call failed; 2 on a usage or setup error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "tune.h"
#include "tune_input.h"

#define NS ((int64_t)1000000000)
#define T0 ((int64_t)1700000000000000000)     /* the first run's start (real time) */
#define MONO_OFFSET (T0 - 1000 * NS)  /* real = monotonic + this */
#define RUN_EVERY_S 3600              /* a run an hour */
#define STAGES 10
#define HOST "0123456789abcdef0123456789abcdef"
#define BOOT "fedcba9876543210fedcba9876543210"

struct stage {
	const char *name, *tool;
	double seconds;      /* typical duration */
	double cores;        /* CPU use of its main process */
	double iowait;       /* share of its lifetime in I/O wait */
	uint64_t rss;        /* its main process's resident memory */
};

static const struct stage stages[STAGES] = {
	{ "FASTQC", "fastqc", 40, 1.0, 0.10, 300u << 20 },
	{ "TRIMGALORE", "trim_galore", 60, 1.5, 0.15, 500u << 20 },
	{ "STAR_ALIGN", "STAR", 120, 3.5, 0.05, 2u << 30 },
	{ "SAMTOOLS_SORT", "samtools", 50, 2.0, 0.20, 800u << 20 },
	{ "SAMTOOLS_INDEX", "samtools", 15, 1.0, 0.25, 100u << 20 },
	{ "PICARD_MARKDUPLICATES", "picard", 80, 1.2, 0.15, 3u << 30 },
	{ "SALMON_QUANT", "salmon", 70, 3.0, 0.05, 1u << 30 },
	{ "QUALIMAP_RNASEQ", "qualimap", 90, 1.0, 0.10, 2u << 30 },
	{ "STRINGTIE", "stringtie", 45, 1.8, 0.05, 600u << 20 },
	{ "DESEQ2_QC", "Rscript", 30, 1.0, 0.02, 900u << 20 },
};

/* ---- a fixed pseudo-random sequence (xorshift64*) ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [lo, hi). */
static double rnd_in(double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static unsigned env_uint(const char *name, unsigned def, unsigned min, unsigned max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < min || n > max) {
		fprintf(stderr, "<3>%s=%s: want an integer in %u..%u\n", name, v, min, max);
		exit(2);
	}
	return (unsigned)n;
}

/* ---- making the lake ---- */

enum { Q_RUN, Q_STEP, Q_PROC, Q_SAMPLE, Q_FILE, Q_SIGNAL, Q_COUNT };

static const char *const insert_sql[Q_COUNT] = {
	[Q_RUN] = "INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, pipeline_run_id, "
		  "run_name, engine, state, detected_by, start_ns, end_ns, cpu_ns, uid, host_cloud, host_instance_type, "
		  "host_region, host_cpus, host_memory_bytes, host_price_per_hour, steps, processes) "
		  "VALUES (?1, '" HOST "', '" BOOT "', ?1, 'bench', ?2, 'nf-core/rnaseq', ?3, ?4, 'nextflow', "
		  "'succeeded', 'nextflow', ?5, ?6, ?7, 1000, 'aws', 'm6i.4xlarge', 'eu-west-1', 16, 68719476736, "
		  "0.856, ?8, ?9)",
	[Q_STEP] = "INSERT INTO steps (run_id, idx, step_id, name, engine, tools, state, start_ns, end_ns, failed, "
		   "processes, oom_killed, cpu_ns, peak_rss_bytes, read_bytes, write_bytes, rchar, wchar, last_update_ns) "
		   "VALUES (?1, ?2, ?3, ?4, 'nextflow', json_array(?5), 'succeeded', ?6, ?7, 0, ?8, ?9, ?10, ?11, ?12, "
		   "?13, ?14, ?15, ?7)",
	[Q_PROC] = "INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, exit_ts_ns, "
		   "ppid, uid, comm, exe, exit_code, signal, oom_killed, runtime_ns, run_delay_ns, iowait_ns, "
		   "blocked_ns, net_wait_ns, rchar, wchar, read_bytes, write_bytes, net_tx_bytes, net_rx_bytes, "
		   "exit_flags, state_flags, peak_rss_bytes, run_id, step, tool) VALUES ('" HOST "', '" BOOT "', ?1, ?2, "
		   "?3, ?4, ?5, 1, 1000, ?6, ?7, 0, 0, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, 0, 0, 0, 1, ?18, "
		   "?19, ?20, ?6)",
	[Q_SAMPLE] = "INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, rss_bytes, "
		     "hiwater_rss_bytes, iowait_ns, run_delay_ns, rchar, wchar) "
		     "VALUES ('" HOST "', ?1, '" BOOT "', ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10)",
	[Q_FILE] = "INSERT INTO files (host_id, seq, boot_id, tgid, start_ns, ts_ns, path, mode, truncated) "
		   "VALUES ('" HOST "', ?1, '" BOOT "', ?2, ?3, ?4, ?5, ?6, 0)",
	[Q_SIGNAL] = "INSERT INTO signals (host_id, boot_id, seq, run_id, source, kind, pid, start_ns, ts_ns, detail) "
		     "VALUES ('" HOST "', '" BOOT "', ?1, NULL, 'record', 'oom_kill', ?2, ?3, ?4, "
		     "json_object('memcg_limit_bytes', ?5))",
};

struct gen {
	sqlite3 *db;
	sqlite3_stmt *q[Q_COUNT];
	unsigned runs, steps, samples_per_run;
	int64_t tgid, sample_seq, file_seq, signal_seq;
	uint64_t processes, samples, files;
	bool failed;
};

/* Bind ?1.. as 64-bit integers or text: 'i' an int64_t, 's' a string (NULL: NULL). */
static void run_q(struct gen *g, int id, const char *types, ...)
{
	sqlite3_stmt *st = g->q[id];
	va_list ap;
	int i = 1, rc = SQLITE_OK;

	va_start(ap, types);
	for (const char *t = types; *t && rc == SQLITE_OK; t++, i++) {
		if (*t == 'i') {
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		} else {
			const char *s = va_arg(ap, const char *);

			rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
		}
	}
	va_end(ap);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && !g->failed) {
		fprintf(stderr, "<3>insert %d: %s\n", id, sqlite3_errmsg(g->db));
		g->failed = true;
	}
	sqlite3_reset(st);
}

/* One process of a task: its exit record, 3-6 samples over its life, the files it opened. */
struct proc_spec {
	int64_t run_id;
	const char *step, *tool;
	int64_t start, end;  /* real time */
	double cores, iowait;
	uint64_t rss, rchar, wchar;
	bool oom;
	const char *in[2], *out;
};

static uint64_t gen_process(struct gen *g, const struct proc_spec *p)
{
	int64_t tgid = ++g->tgid, mono = p->start - MONO_OFFSET, life = p->end - p->start;
	int64_t cpu = (int64_t)((double)life * p->cores * rnd_in(0.85, 1.0));
	int64_t iowait = (int64_t)((double)life * p->iowait), delay = life / 20, blocked = life / 50;
	unsigned k = 3 + (unsigned)(rnd() % 4);
	char exe[64];

	snprintf(exe, sizeof(exe), "/usr/local/bin/%s", p->tool);
	run_q(g, Q_PROC, "iiiiissiiiiiiiiiiiis", tgid, mono, p->start, p->end, mono + life, p->tool, exe,
	      (int64_t)p->oom, cpu, delay, iowait, blocked, (int64_t)(life / 100), (int64_t)p->rchar,
	      (int64_t)p->wchar, (int64_t)p->rchar, (int64_t)p->wchar, (int64_t)p->rss, p->run_id, p->step);
	for (unsigned i = 1; i <= k; i++) {
		int64_t t = mono + life * (int64_t)i / (int64_t)k;
		double f = (double)i / k;

		run_q(g, Q_SAMPLE, "iiiiiiiiii", ++g->sample_seq, tgid, mono, t, (int64_t)((double)cpu * f),
		      (int64_t)((double)p->rss * (0.5 + 0.5 * f)), (int64_t)((double)iowait * f),
		      (int64_t)((double)delay * f), (int64_t)((double)p->rchar * f), (int64_t)((double)p->wchar * f));
	}
	g->samples += k;
	for (int i = 0; i < 2 && p->in[i]; i++, g->files++)
		run_q(g, Q_FILE, "iiiiss", ++g->file_seq, tgid, mono, mono + NS / 10, p->in[i], "r");
	if (p->out) {
		run_q(g, Q_FILE, "iiiiss", ++g->file_seq, tgid, mono, mono + life - NS / 10, p->out, "w");
		g->files++;
	}
	if (p->oom)
		run_q(g, Q_SIGNAL, "iiiii", ++g->signal_seq, tgid, mono, mono + life, (int64_t)p->rss);
	g->processes++;
	return (uint64_t)cpu;
}

/* One run: samples_per_run chains of the ten stages, in parallel; the engine around them. */
static void gen_run(struct gen *g, unsigned r, bool newest)
{
	int64_t run_id = r + 1, start = T0 + (int64_t)r * RUN_EVERY_S * NS, end = start;
	char key[64], name[96], step_id[32], prev[96], out[96], label[32], tools[32];
	uint64_t run_cpu = 0, procs_before = g->processes;
	unsigned idx = 0;

	for (unsigned smp = 0; smp < g->samples_per_run; smp++) {
		int64_t t = start + (2 + (int64_t)smp * 3) * NS;

		snprintf(prev, sizeof(prev), "/data/reads/S%02u_R1.fastq.gz", smp + 1);
		for (unsigned k = 0; k < STAGES; k++, idx++) {
			const struct stage *s = &stages[k];
			bool slow = newest && k == 6;
			int64_t dur = (int64_t)(s->seconds * rnd_in(0.8, 1.2) * (slow ? 2.0 : 1.0) * NS);
			unsigned nproc = 1 + (unsigned)(rnd() % 3);
			bool oom = r % 50 == 7 && k == 2 && smp == 0;
			uint64_t cpu = 0, rchar = (uint64_t)(rnd_in(0.5, 1.5) * (1u << 30)), wchar = rchar / 2;
			struct proc_spec p = {
				.run_id = run_id, .step = step_id, .tool = s->tool, .start = t, .end = t + dur,
				.cores = s->cores, .iowait = slow ? 0.5 : s->iowait, .rss = s->rss, .rchar = rchar,
				.wchar = wchar, .oom = oom, .in = { prev, k == 2 ? "/ref/GRCh38/genome.fa" : NULL },
				.out = out,
			};

			snprintf(step_id, sizeof(step_id), "nf-%02x/%06x", (idx * 7 + r) & 0xff, (r * 131u + idx) & 0xffffff);
			snprintf(name, sizeof(name), "NFCORE_RNASEQ:RNASEQ:%s (S%02u)", s->name, smp + 1);
			snprintf(out, sizeof(out), "/work/run%04u/%s/S%02u.out", r, s->name, smp + 1);
			snprintf(tools, sizeof(tools), "%s", s->tool);
			cpu += gen_process(g, &p);
			/* helpers: shorter, lighter, inside the task's span */
			for (unsigned h = 1; h < nproc; h++) {
				struct proc_spec q = p;

				q.start = t + dur / 10;
				q.end = t + dur - dur / 10;
				q.cores = 0.3;
				q.rss = s->rss / 8;
				q.oom = false;
				q.in[0] = q.in[1] = NULL;
				q.out = NULL;
				q.rchar /= 10;
				q.wchar /= 10;
				cpu += gen_process(g, &q);
			}
			run_q(g, Q_STEP, "iisssiiiiiiiiii", run_id, (int64_t)idx, step_id, name, tools, t, t + dur,
			      (int64_t)nproc, (int64_t)oom, (int64_t)cpu, (int64_t)(s->rss + (nproc - 1) * (s->rss / 8)),
			      (int64_t)rchar, (int64_t)wchar, (int64_t)rchar, (int64_t)wchar);
			run_cpu += cpu;
			snprintf(prev, sizeof(prev), "%s", out);
			t += dur + NS;
			end = t > end ? t : end;
		}
	}
	/* the engine: the run's whole span, sampled every 30 s */
	{
		int64_t tgid = ++g->tgid, mono = start - MONO_OFFSET, life = end - start + NS;
		int64_t cpu = life / 20;

		run_q(g, Q_PROC, "iiiiissiiiiiiiiiiiis", tgid, mono, start, start + life, mono + life, "java",
		      "/usr/bin/java", (int64_t)0, cpu, (int64_t)0, (int64_t)0, (int64_t)0, (int64_t)0, (int64_t)0,
		      (int64_t)0, (int64_t)0, (int64_t)0, (int64_t)(1u << 30), run_id, (const char *)NULL);
		for (int64_t t = 30 * NS; t < life; t += 30 * NS)
			run_q(g, Q_SAMPLE, "iiiiiiiiii", ++g->sample_seq, tgid, mono, mono + t, (int64_t)((double)cpu * (double)t / (double)life),
			      (int64_t)(1u << 30), (int64_t)0, (int64_t)0, (int64_t)0, (int64_t)0);
		run_cpu += (uint64_t)cpu;
		g->processes++;
	}
	snprintf(key, sizeof(key), BOOT "-%" PRId64 "-%" PRId64, 100000 + run_id, start - MONO_OFFSET);
	snprintf(label, sizeof(label), "run-%04u", r + 1);
	run_q(g, Q_RUN, "isssiiiii", run_id, key, label, label, start, end + NS, (int64_t)run_cpu, (int64_t)idx,
	      (int64_t)(g->processes - procs_before));
}

static int make_lake(const char *path, unsigned runs, unsigned steps)
{
	struct gen g = { .runs = runs, .steps = steps, .samples_per_run = steps / STAGES };
	struct store *s;
	char err[512];
	int rc = 0;

	if (store_open(&s, path, false, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 2;
	}
	store_close(s);
	if (sqlite3_open(path, &g.db) != SQLITE_OK ||
	    sqlite3_exec(g.db, "PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "<3>%s: %s\n", path, sqlite3_errmsg(g.db));
		sqlite3_close(g.db);
		return 2;
	}
	for (int i = 0; i < Q_COUNT && !rc; i++)
		if (sqlite3_prepare_v2(g.db, insert_sql[i], -1, &g.q[i], NULL) != SQLITE_OK) {
			fprintf(stderr, "<3>preparing insert %d: %s\n", i, sqlite3_errmsg(g.db));
			rc = 2;
		}
	for (unsigned r = 0; r < runs && !rc && !g.failed; r++)
		gen_run(&g, r, r == runs - 1);
	if (!rc && !g.failed && sqlite3_exec(g.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "<3>commit: %s\n", sqlite3_errmsg(g.db));
		rc = 2;
	}
	for (int i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(g.q[i]);
	sqlite3_close(g.db);
	if (g.failed)
		rc = 2;
	fprintf(stderr, "<7>tune_bench: lake of %u runs x %u steps: %" PRIu64 " processes, %" PRIu64 " samples, %" PRIu64
		" files rows\n", runs, steps, g.processes, g.samples, g.files);
	return rc;
}

static void remove_lake(const char *dir, const char *db)
{
	char p[600];

	unlink(db);
	snprintf(p, sizeof(p), "%s-wal", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db);
	unlink(p);
	rmdir(dir);
}

/* ---- the timed part ---- */

struct timing {
	double load_ms, analysis_ms;
	size_t profiles, path, slow;
};

static int analyse(const struct tune_input *in, struct timing *tm)
{
	struct an_profile *prof = NULL;
	struct an_bottlenecks b;
	struct an_slow *slow = NULL;
	uint32_t newest = (uint32_t)in->in.nruns - 1;
	int64_t t0 = now_ns();
	int rc;

	rc = an_profiles(&in->in, NULL, (uint32_t)in->in.nruns, &prof, &tm->profiles);
	if (rc) {
		fprintf(stderr, "<3>an_profiles: %s\n", strerror(-rc));
		return 1;
	}
	rc = an_bottlenecks(&in->in, newest, &b);
	if (rc) {
		fprintf(stderr, "<3>an_bottlenecks: %s\n", strerror(-rc));
		free(prof);
		return 1;
	}
	rc = an_slower(&in->in, newest, (uint32_t)in->in.nruns, &slow, &tm->slow);
	tm->analysis_ms = (double)(now_ns() - t0) / 1e6;
	tm->path = b.npath;
	an_bottlenecks_free(&b);
	free(prof);
	free(slow);
	if (rc) {
		fprintf(stderr, "<3>an_slower: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}

/*
 * The command itself, as a user runs it: `tracer tune --db LAKE --format json [ARGS]`, its output to
 * /dev/null; wall milliseconds from fork to its exit, or -1 if it failed.
 */
static double time_cli(const char *tracer, const char *db, const char *extra)
{
	int64_t t0 = now_ns();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (extra)
			execl(tracer, tracer, "tune", "--db", db, "--format", "json", "--runs", extra, (char *)NULL);
		else
			execl(tracer, tracer, "tune", "--db", db, "--format", "json", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "<3>%s tune --db %s failed\n", tracer, db);
		return -1;
	}
	return (double)(now_ns() - t0) / 1e6;
}

static int measure(const char *db, unsigned runs, unsigned steps)
{
	struct tune_input in;
	struct timing tm = { 0 };
	struct store *s;
	char err[512];
	int64_t t0;
	int rc;

	if (store_open(&s, db, true, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 2;
	}
	t0 = now_ns();
	rc = tune_input_load(s, NULL, 0, &in, err, sizeof(err));
	tm.load_ms = (double)(now_ns() - t0) / 1e6;
	store_close(s);
	if (rc) {
		fprintf(stderr, "<3>tune_input_load: %s\n", err);
		return 1;
	}
	if (in.in.nruns != runs || in.in.nsteps != (size_t)runs * steps) {
		fprintf(stderr, "<3>loaded %zu runs and %zu tasks, not %u and %u\n", in.in.nruns, in.in.nsteps, runs,
			runs * steps);
		tune_input_free(&in);
		return 1;
	}
	rc = analyse(&in, &tm);
	fprintf(stderr, "<7>tune_bench: %zu timeline points, %zu file ids, %zu file refs; %zu profiles, a critical "
		"path of %zu tasks, %zu slower than usual\n", in.in.npoints, in.nfile_ids, in.in.nfiles, tm.profiles,
		tm.path, tm.slow);
	tune_input_free(&in);
	if (rc)
		return rc;
	printf("tune.runs %u runs\n", runs);
	printf("tune.steps %u steps\n", runs * steps);
	printf("tune.load_ms %.0f ms\n", tm.load_ms);
	printf("tune.analysis_ms %.0f ms\n", tm.analysis_ms);
	printf("tune.total_ms %.0f ms\n", tm.load_ms + tm.analysis_ms);
	/* And the command as users run it (TRACER: the tracer binary; make bench-tune sets it). */
	if (getenv("TRACER")) {
		char all[16];
		double def = time_cli(getenv("TRACER"), db, NULL), every;

		snprintf(all, sizeof(all), "%u", runs);
		every = time_cli(getenv("TRACER"), db, all);
		if (def < 0 || every < 0)
			return 1;
		printf("tune.cli_ms %.0f ms\n", def);
		printf("tune.cli_all_runs_ms %.0f ms\n", every);
	}
	return 0;
}

int main(void)
{
	unsigned runs = env_uint("RUNS", 1000, 1, 100000), steps = env_uint("STEPS", 100, 10, 10000);
	const char *base = getenv("LAKE_DIR"), *out = getenv("LAKE_OUT");
	char dir[256], db[512];
	int rc;

	if (steps % STAGES) {
		fprintf(stderr, "<3>STEPS=%u: want a multiple of %d\n", steps, STAGES);
		return 2;
	}
	if (out && *out) { /* the lake only, for another benchmark */
		if (access(out, F_OK) == 0) {
			fprintf(stderr, "<3>LAKE_OUT=%s: exists already\n", out);
			return 2;
		}
		return make_lake(out, runs, steps);
	}
	snprintf(dir, sizeof(dir), "%s/tracer-tune-bench.XXXXXX", base && *base ? base : "/var/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "<3>mkdtemp %s: %s\n", dir, strerror(errno));
		return 2;
	}
	snprintf(db, sizeof(db), "%s/lake.db", dir);
	rc = make_lake(db, runs, steps);
	if (!rc)
		rc = measure(db, runs, steps);
	if (getenv("KEEP") && !strcmp(getenv("KEEP"), "1"))
		fprintf(stderr, "<6>tune_bench: kept %s\n", db);
	else
		remove_lake(dir, db);
	return rc;
}
