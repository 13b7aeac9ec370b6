/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Live runs at scale (make bench-live; issue 14): what daemon mode's live
 * records cost the processor, and the lake's writer, with RUNS concurrent
 * runs of PROCS_PER_RUN live processes each (default 1,000 x 100 =
 * 100,000 live processes) for SECONDS simulated seconds (default 30).
 *
 * One process, the real code paths, nothing of them mocked:
 *
 *   1. The processor's side, wired as processor/main.c wires it in daemon
 *      mode: session_init (MAX_PROCESSES entries), steps_init, runs_init,
 *      live_init with an emit callback, session.tab.on_evict =
 *      runs_on_evict. Kernel records built with records/encode.h go
 *      through session_record() exactly as the ring's bytes would; once
 *      per simulated second live_cycle(), the runs' checkpoint, then
 *      proctab_sweep(), as housekeeping() does. The simulated clock is the records' clock
 *      (CLOCK_MONOTONIC ns from 1000 s on); live_cycle's now_ns is the end
 *      of each simulated second.
 *      Each run: a Snakemake root (fork from a login shell the processor
 *      never saw, exec of /usr/bin/snakemake as python3 runs it, a cwd),
 *      and (PROCS_PER_RUN - 1) / 3 jobs, each a job shell `bash -c 'set
 *      -euo pipefail;  bwa mem ... | samtools sort ...'` forked by the root
 *      with its two tools forked by the shell (fork + exec each). Every
 *      live process is sampled (TR_SAMPLE) once a simulated second, its
 *      counters growing (bwa one core and 20 MB/s read, samtools 0.3 core
 *      and 15 MB/s written, ...). Churn: each second CHURN_PERCENT (2) % of
 *      the jobs end (both tools exit, then the shell; one in 100 fails with
 *      samtools exiting 1) and as many new jobs start in their place, so
 *      the live population stays constant. Second 0 starts everything
 *      (RUNS x PROCS_PER_RUN forks and execs): it is reported apart.
 *      Records of a second are generated into a 4 MiB buffer (untimed),
 *      then fed to session_record() (timed, thread CPU time), as the
 *      processor drains its ring.
 *      After each look, the runs' checkpoint is written as processor/main.c's
 *      ckpt_save() does (ckpt_write() into memory, then written aside,
 *      fdatasync'd and renamed over DIR/runs.ckpt; CKPT=0 leaves it out).
 *      The emit callback writes each TL_RUN payload to a spill file (the
 *      processor's real emit appends it to the spool): the payloads are
 *      not kept in memory, so that they do not count as the processor's.
 *   2. The lake's writer: the processor's structures are freed
 *      (malloc_trim), then a real SQLite lake (store_open in a new
 *      directory under LAKE_DIR, default /var/tmp) stores every TL_RUN
 *      payload through store_batch(), one simulated second's records at
 *      a time, in batches as the uploader forms them (at most 5,000
 *      records or 8 MiB of frames), each sealed, verified and opened with
 *      common/batch.c as the ingest does (only store_batch is timed).
 *
 * Results as "<metric> <value> <unit>" lines on stdout (DESIGN.md);
 * progress and diagnostics on stderr. Environment: RUNS, PROCS_PER_RUN,
 * SECONDS, CHURN_PERCENT, MAX_PROCESSES, CKPT (0: no checkpoint), LAKE (0:
 * skip the lake), LAKE_DIR, LAKE_DB (a PostgreSQL URI: the lake there, an
 * empty database; `make bench-live DB=postgresql` starts a throwaway
 * cluster for it, bench/with_pg.sh; store_cpu_share is then this process's
 * CPU only, the server's is not in it), KEEP (1: keep the directory). Exit 0; 1 when what was measured was broken
 * (records refused, the table full, runs not found, a store failed);
 * 2 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "encode.h"
#include "frame.h"
#include "json.h"
#include "lake.h"
#include "live.h"
#include "proctab.h"
#include "records.h"
#include "runs.h"
#include "runs_ckpt.h"
#include "session.h"
#include "steps.h"
#include "store.h"

#define NS 1000000000ULL
#define MS 1000000ULL
#define CLOCK0 (1000ULL * NS)            /* the simulated CLOCK_MONOTONIC at the start */
#define MONO_TO_REAL 1700000000000000000ULL
#define CHUNK_BYTES (4u << 20)           /* records generated, then fed, at a time */
#define BATCH_RECORDS 5000u              /* the uploader's default batch_records */
#define BATCH_FRAME_BYTES (8u << 20)     /* and its read buffer (delivery/upload.c READ_BUF_MIN) */
#define LAUNCHER_PID 2000u               /* the login shells that start the runs: never seen */
#define FIRST_PID 10000u

enum kind { K_ROOT, K_SHELL, K_BWA, K_SAMTOOLS };

/* One simulated process: identity and counters. */
struct sp {
	uint32_t tgid, ppid;
	uint64_t start_ns, parent_start_ns;
	uint64_t runtime_ns, read_bytes, write_bytes, rchar, wchar, rss;
	uint64_t last_ts;
	uint32_t cpu_milli;   /* CPU it uses, in thousandths of a core */
	uint32_t read_bps, write_bps;
	uint8_t kind;
	bool live;
};

struct job {
	struct sp p[3]; /* shell, bwa, samtools */
	uint32_t sample;
	uint32_t started_s;
};

struct sim {
	uint32_t runs, jobs_per_run, seconds, churn_percent;
	struct sp *roots;
	struct job *jobs;
	uint32_t next_pid, next_sample;
	uint64_t rng;
	uint64_t clk;      /* last record time */
	/* the chunk of records */
	unsigned char *chunk;
	size_t len;
	/* figures of the second */
	uint64_t records_cpu_ns, records_fed, jobs_ended, jobs_failed;
};

static struct session ss;
static struct steps steps;
static struct runs runs;
static struct live lv;

/* ---- clocks, /proc ------------------------------------------------------ */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* A "VmRSS:"-style line of /proc/self/status, in bytes; 0 if not found. */
static uint64_t status_bytes(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

static uint32_t env_u32(const char *name, uint32_t def, uint32_t min, uint32_t max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < min || x > max) {
		fprintf(stderr, "<3>%s=%s: want an integer in %u..%u\n", name, v, min, max);
		exit(2);
	}
	return (uint32_t)x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank median of v[0..n) (sorted in place). */
static uint64_t median(uint64_t *v, uint32_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2];
}

static uint64_t max_of(const uint64_t *v, uint32_t n)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

static uint64_t rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

/* ---- records into the chunk, the chunk into the session ------------------- */

static void feed(struct sim *s)
{
	size_t off = 0;
	uint64_t t0 = cpu_ns();

	while (off < s->len) {
		uint32_t type, len;

		memcpy(&type, s->chunk + off, 4);
		memcpy(&len, s->chunk + off + 4, 4);
		session_record(&ss, type, s->chunk + off + 8, len, NULL);
		off += 8 + ((len + 7u) & ~7u);
		s->records_fed++;
	}
	s->records_cpu_ns += cpu_ns() - t0;
	s->len = 0;
}

/* Room for a record of up to len bytes: its payload's place in the chunk. */
static unsigned char *rec_begin(struct sim *s, size_t len)
{
	if (s->len + 8 + len + 8 > CHUNK_BYTES)
		feed(s);
	return s->chunk + s->len + 8;
}

static void rec_end(struct sim *s, uint32_t type, uint32_t len)
{
	memcpy(s->chunk + s->len, &type, 4);
	memcpy(s->chunk + s->len + 4, &len, 4);
	s->len += 8 + ((len + 7u) & ~7u);
}

static void put(struct sim *s, uint32_t type, const void *rec, uint32_t len)
{
	memcpy(rec_begin(s, len), rec, len);
	rec_end(s, type, len);
}

static uint64_t tick(struct sim *s, uint64_t at)
{
	s->clk = at > s->clk ? at : s->clk + 1;
	return s->clk;
}

static void fork_exec(struct sim *s, struct sp *p, uint64_t at, const char *cwd, const char *path,
		      const char *const *argv)
{
	struct tr_fork f;
	unsigned char *b;
	size_t n;

	p->start_ns = tick(s, at);
	p->last_ts = p->start_ns;
	f = encode_fork(p->start_ns, p->ppid, p->parent_start_ns, p->tgid, p->start_ns);
	put(s, TR_FORK, &f, sizeof(f));
	b = rec_begin(s, DECODE_MAX_LEN);
	n = encode_exec_ctx(b, DECODE_MAX_LEN, tick(s, at + 300000), p->tgid, p->ppid, p->start_ns, path, argv, cwd,
			    NULL);
	if (!n) {
		fprintf(stderr, "<3>an exec record does not fit\n");
		exit(2);
	}
	rec_end(s, TR_EXEC, (uint32_t)n);
	p->live = true;
}

static void sample(struct sim *s, struct sp *p, uint64_t at)
{
	uint64_t ts = tick(s, at), dt = ts - p->last_ts;
	struct tr_sample x;

	p->runtime_ns += dt * p->cpu_milli / 1000;
	p->read_bytes += dt * p->read_bps / NS;
	p->write_bytes += dt * p->write_bps / NS;
	p->rchar = p->read_bytes + 4096;
	p->wchar = p->write_bytes + 512;
	p->last_ts = ts;
	x = encode_sample(ts, p->tgid, p->start_ns, p->ppid, p->runtime_ns, p->rss, p->rchar);
	x.utime_ns = p->runtime_ns / 10 * 9;
	x.stime_ns = p->runtime_ns - x.utime_ns;
	x.read_bytes = p->read_bytes;
	x.write_bytes = p->write_bytes;
	x.wchar = p->wchar;
	x.cgroup_id = 7;
	x.nr_threads = p->kind == K_BWA ? 4 : 1;
	encode_comm(x.comm, p->kind == K_ROOT ? "snakemake" : p->kind == K_SHELL ? "bash" : p->kind == K_BWA ? "bwa"
													     : "samtools");
	put(s, TR_SAMPLE, &x, sizeof(x));
}

static void exit_of(struct sim *s, struct sp *p, uint64_t at, uint32_t raw)
{
	uint64_t ts = tick(s, at);
	struct tr_exit x = encode_exit(ts, p->tgid, p->start_ns, p->ppid, raw);

	p->runtime_ns += (ts - p->last_ts) * p->cpu_milli / 1000;
	x.runtime_ns = p->runtime_ns;
	x.utime_ns = p->runtime_ns / 10 * 9;
	x.stime_ns = p->runtime_ns - x.utime_ns;
	x.maxrss_bytes = p->rss + (p->rss >> 4);
	x.image_peak_rss_bytes = p->rss + (p->rss >> 4);
	x.read_bytes = p->read_bytes;
	x.write_bytes = p->write_bytes;
	x.rchar = p->rchar;
	x.wchar = p->wchar;
	encode_comm(x.comm, p->kind == K_SHELL ? "bash" : p->kind == K_BWA ? "bwa" : "samtools");
	put(s, TR_EXIT, &x, sizeof(x));
	p->live = false;
}

static void start_root(struct sim *s, uint32_t r, uint64_t at)
{
	struct sp *p = &s->roots[r];
	char cwd[64], snakefile[80];

	memset(p, 0, sizeof(*p));
	snprintf(cwd, sizeof(cwd), "/data/proj%04u", r);
	snprintf(snakefile, sizeof(snakefile), "/data/proj%04u/workflow/Snakefile", r);
	p->tgid = s->next_pid++;
	p->ppid = LAUNCHER_PID + r % 1000;
	p->parent_start_ns = NS + r;
	p->kind = K_ROOT;
	p->cpu_milli = 20;
	p->rss = 180ULL << 20;
	p->read_bps = 4096;
	fork_exec(s, p, at, cwd, "/usr/bin/snakemake",
		  (const char *const[]){ "/usr/bin/python3", "/usr/bin/snakemake", "-c4", "--snakefile", snakefile,
					 NULL });
}

static void start_job(struct sim *s, uint32_t r, struct job *j, uint64_t at, uint32_t second)
{
	const struct sp *root = &s->roots[r];
	char cwd[64], cmd[256], r1[48], r2[48], bam[48];
	const char *const bwa_argv[] = { "bwa", "mem", "-t", "4", "ref/genome.fa", r1, r2, NULL };
	const char *const sam_argv[] = { "samtools", "sort", "-@", "2", "-o", bam, "-", NULL };
	uint32_t n = s->next_sample++;

	memset(j, 0, sizeof(*j));
	j->sample = n;
	j->started_s = second;
	snprintf(cwd, sizeof(cwd), "/data/proj%04u", r);
	snprintf(r1, sizeof(r1), "reads/S%06u_R1.fastq.gz", n);
	snprintf(r2, sizeof(r2), "reads/S%06u_R2.fastq.gz", n);
	snprintf(bam, sizeof(bam), "mapped/S%06u.sorted.bam", n);
	snprintf(cmd, sizeof(cmd), "set -euo pipefail;  bwa mem -t 4 ref/genome.fa %s %s | samtools sort -@ 2 -o %s -",
		 r1, r2, bam);
	/* the job shell, forked by snakemake */
	j->p[0] = (struct sp){ .tgid = s->next_pid++, .ppid = root->tgid, .parent_start_ns = root->start_ns,
			       .kind = K_SHELL, .cpu_milli = 1, .rss = 3600ULL << 10 };
	fork_exec(s, &j->p[0], at, cwd, "/usr/bin/bash",
		  (const char *const[]){ "/usr/bin/bash", "-c", cmd, NULL });
	/* its two tools */
	j->p[1] = (struct sp){ .tgid = s->next_pid++, .ppid = j->p[0].tgid, .parent_start_ns = j->p[0].start_ns,
			       .kind = K_BWA, .cpu_milli = 900 + (uint32_t)(rnd(s) % 200),
			       .rss = (1ULL << 30) + (rnd(s) % (5ULL << 30)), .read_bps = 20u << 20 };
	fork_exec(s, &j->p[1], at + MS, cwd, "/usr/bin/bwa", bwa_argv);
	j->p[2] = (struct sp){ .tgid = s->next_pid++, .ppid = j->p[0].tgid, .parent_start_ns = j->p[0].start_ns,
			       .kind = K_SAMTOOLS, .cpu_milli = 250 + (uint32_t)(rnd(s) % 100),
			       .rss = (200ULL << 20) + (rnd(s) % (600ULL << 20)), .write_bps = 15u << 20 };
	fork_exec(s, &j->p[2], at + 2 * MS, cwd, "/usr/bin/samtools", sam_argv);
}

static void end_job(struct sim *s, struct job *j, uint64_t at, bool fail)
{
	exit_of(s, &j->p[1], at, 0);
	exit_of(s, &j->p[2], at + MS, fail ? 1u << 8 : 0);
	exit_of(s, &j->p[0], at + 2 * MS, fail ? 1u << 8 : 0);
	s->jobs_ended++;
	s->jobs_failed += fail;
}

/* One simulated second's records: starts (second 0) or churn, then a sample of every live process. */
static void second_records(struct sim *s, uint32_t second)
{
	uint64_t t = CLOCK0 + (uint64_t)second * NS;
	uint64_t njobs = (uint64_t)s->runs * s->jobs_per_run, nprocs = (uint64_t)s->runs * (1 + 3 * s->jobs_per_run);
	uint64_t i = 0;

	if (second == 0) {
		for (uint32_t r = 0; r < s->runs; r++) {
			uint64_t at = t + (uint64_t)r * (400 * MS) / s->runs;

			start_root(s, r, at);
			for (uint32_t k = 0; k < s->jobs_per_run; k++)
				start_job(s, r, &s->jobs[(uint64_t)r * s->jobs_per_run + k], at + 10 * MS + k * 10000,
					  second);
		}
	} else {
		uint64_t n = njobs * s->churn_percent / 100;

		for (uint64_t c = 0; c < n; c++) {
			uint64_t at = t + 10 * MS + c * (300 * MS) / (n ? n : 1), idx;
			struct job *j;

			for (int tries = 0;; tries++) {
				idx = rnd(s) % njobs;
				j = &s->jobs[idx];
				if (j->started_s != second || tries > 64)
					break;
			}
			end_job(s, j, at, rnd(s) % 100 == 0);
			start_job(s, (uint32_t)(idx / s->jobs_per_run), j, at + 5 * MS, second);
		}
	}
	/* samples: every live process, spread over the second's last half */
	for (uint32_t r = 0; r < s->runs; r++) {
		sample(s, &s->roots[r], t + 500 * MS + i++ * (450 * MS) / nprocs);
		for (uint32_t k = 0; k < s->jobs_per_run; k++) {
			struct job *j = &s->jobs[(uint64_t)r * s->jobs_per_run + k];

			for (int q = 0; q < 3; q++)
				sample(s, &j->p[q], t + 500 * MS + i++ * (450 * MS) / nprocs);
		}
	}
	feed(s);
}

/* ---- the emitted records: a spill file ------------------------------------- */

struct spill {
	FILE *f;
	uint64_t records, bytes, max_len;
	uint64_t other; /* records of another type than TL_RUN */
	int err;
};

static int emit(void *ctx, uint16_t type, const void *payload, uint32_t len)
{
	struct spill *sp = ctx;

	if (type != TL_RUN) { /* every process here is in a run: no TL_TOOLS expected; counted, not stored */
		sp->other++;
		return 0;
	}
	if (fwrite(&len, sizeof(len), 1, sp->f) != 1 || fwrite(payload, 1, len, sp->f) != len) {
		sp->err = EIO;
		return -EIO;
	}
	sp->records++;
	sp->bytes += len;
	if (len > sp->max_len)
		sp->max_len = len;
	return 0;
}

/* ---- the lake ----------------------------------------------------------------- */

struct lake {
	struct store *st;
	struct batch_secret_key key;
	struct batch_identity id;
	uint8_t prev_hash[BATCH_HASH_LEN];
	bool have_prev;
	uint64_t batch_seq, seq;
	/* the batch being formed */
	uint8_t *frames;
	size_t len;
	uint32_t n;
	uint64_t first, last;
	uint8_t *wire;
	size_t wire_cap;
	/* figures */
	uint64_t store_wall_ns, store_cpu_ns, batches;
	uint64_t unknown, bad_live, new_runs, new_records, rss_peak;
	int err;
};

static int lookup_key(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t pk[BATCH_PUBKEY_LEN],
		      uint8_t bound[BATCH_HOST_ID_LEN])
{
	const struct batch_secret_key *k = ctx;

	if (memcmp(key_id, k->key_id, BATCH_KEY_ID_LEN))
		return -1;
	memcpy(pk, k->public_key, BATCH_PUBKEY_LEN);
	memset(bound, 0, BATCH_HOST_ID_LEN);
	return 0;
}

/* Seal, verify, open (the ingest's path, untimed), then store_batch (timed). */
static void lake_flush(struct lake *lk)
{
	struct batch_build b;
	struct batch_header h;
	struct store_result res;
	uint8_t hash[BATCH_HASH_LEN], vhash[BATCH_HASH_LEN], *raw = NULL;
	size_t wire_len = 0, raw_len = 0;
	uint64_t w0, c0;
	int rc;

	if (!lk->n || lk->err)
		return;
	memset(&b, 0, sizeof(b));
	b.batch_seq = ++lk->batch_seq;
	b.first_seq = lk->first;
	b.last_seq = lk->last;
	b.nrecords = lk->n;
	b.created_ns = MONO_TO_REAL + CLOCK0;
	b.mono_to_real_ns = (int64_t)MONO_TO_REAL;
	b.compression = BATCH_COMP_ZLIB;
	if (lk->have_prev)
		memcpy(b.prev_hash, lk->prev_hash, sizeof(b.prev_hash));
	rc = batch_seal(&lk->key, &lk->id, &b, lk->frames, lk->len, lk->wire, lk->wire_cap, &wire_len, hash);
	if (!rc)
		rc = batch_verify(lk->wire, wire_len, lookup_key, &lk->key, &h, vhash);
	if (!rc)
		rc = batch_open(lk->wire, wire_len, &h, &raw, &raw_len);
	if (rc) {
		fprintf(stderr, "<3>batch %llu: %s\n", (unsigned long long)b.batch_seq, batch_strerror(rc));
		lk->err = 1;
		return;
	}
	w0 = mono_ns();
	c0 = cpu_ns();
	rc = store_batch(lk->st, &h, vhash, raw, raw_len, wire_len, MONO_TO_REAL + CLOCK0 + lk->batch_seq, &res);
	lk->store_cpu_ns += cpu_ns() - c0;
	lk->store_wall_ns += mono_ns() - w0;
	free(raw);
	if (rc) {
		fprintf(stderr, "<3>store_batch: %s (%s)\n", store_strerror(rc), store_last_error(lk->st));
		lk->err = 1;
		return;
	}
	memcpy(lk->prev_hash, hash, sizeof(hash));
	lk->have_prev = true;
	lk->batches++;
	lk->unknown += res.unknown;
	lk->bad_live += res.bad_live_records;
	lk->new_runs += res.runs;
	lk->new_records += res.new_records;
	{
		uint64_t rss = status_bytes("VmRSS");

		if (rss > lk->rss_peak)
			lk->rss_peak = rss;
	}
	lk->len = 0;
	lk->n = 0;
}

static void lake_add(struct lake *lk, const void *payload, uint32_t len)
{
	struct tr_frame h = { .type = TL_RUN, .len = len };
	size_t size = TR_FRAME_SIZE(len);

	if (lk->n && (lk->n == BATCH_RECORDS || lk->len + size > BATCH_FRAME_BYTES))
		lake_flush(lk);
	h.seq = ++lk->seq;
	memset(lk->frames + lk->len, 0, size);
	memcpy(lk->frames + lk->len + TR_FRAME_HDR, payload, len);
	h.crc = frame_crc(&h, lk->frames + lk->len + TR_FRAME_HDR);
	memcpy(lk->frames + lk->len, &h, sizeof(h));
	lk->len += size;
	if (lk->n++ == 0)
		lk->first = h.seq;
	lk->last = h.seq;
}

static void hex(char *out, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", v[i]);
}

static void rm_lake(const char *dir, const char *db)
{
	char p[600];

	snprintf(p, sizeof(p), "%s-wal", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db);
	unlink(p);
	unlink(db);
	snprintf(p, sizeof(p), "%s/spill", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/" CKPT_FILE, dir);
	unlink(p);
	rmdir(dir);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* ---- the runs' checkpoint, as processor/main.c's ckpt_save() and ckpt_store() ------ */

static int ckpt_save(const char *dir, uint64_t ring_pos, uint64_t *bytes)
{
	char path[600], tmp[610];
	struct obuf o;
	size_t off = 0;
	int fd, rc;

	obuf_init_mem(&o, CKPT_MAX_BYTES);
	rc = ckpt_write(&o, &runs, &ss.tab, 1, ring_pos, MONO_TO_REAL + ss.tab.newest_ts);
	*bytes = o.len;
	snprintf(path, sizeof(path), "%s/" CKPT_FILE, dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (!rc && fd < 0)
		rc = -errno;
	while (!rc && off < o.len) {
		ssize_t n = write(fd, o.buf + off, o.len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	obuf_free(&o);
	return rc;
}

/* ---- main ------------------------------------------------------------------------ */

int main(void)
{
	struct sim s = { 0 };
	struct spill sp = { 0 };
	struct lake lk;
	const char *lake_base = getenv("LAKE_DIR"), *lake_db;
	char dir[512], db[560], spill_path[560], boot_hex[2 * BATCH_BOOT_ID_LEN + 1];
	uint32_t max_procs, nsec, do_lake, do_ckpt;
	uint64_t nprocs, rss_base, rss_end, hwm_end, rss_lake_base, t_all0;
	uint64_t *cyc_cpu, *cyc_wall, *rec_cpu, *sweep_cpu, *emitted, *emitted_bytes, *store_ms, *per_sec_records;
	uint64_t *ck_cpu, *ck_wall, ck_bytes = 0, tot_ck_cpu = 0;
	uint64_t tot_records_cpu = 0, tot_cycle_cpu = 0, tot_sweep_cpu = 0, steady_cpu = 0, steady_recs = 0,
		 steady_bytes = 0, live_no_series = 0, live_in_run = 0, rss_true = 0, rss_seen = 0;
	uint64_t proc_table_used, image_bytes, series_bytes, steps_n, series_dropped, table_full, decode_errors,
		 runs_live, runs_dropped, builds, evicted;
	bool broken = false;

	s.runs = env_u32("RUNS", 1000, 1, RUNS_MAX);
	{
		uint32_t ppr = env_u32("PROCS_PER_RUN", 100, 4, 30001);

		s.jobs_per_run = (ppr - 1) / 3;
	}
	s.seconds = nsec = env_u32("SECONDS", 30, 2, 3600);
	s.churn_percent = env_u32("CHURN_PERCENT", 2, 0, 100);
	max_procs = env_u32("MAX_PROCESSES", 262144, 1024, PROCTAB_MAX_LIMIT);
	do_lake = env_u32("LAKE", 1, 0, 1);
	do_ckpt = env_u32("CKPT", 1, 0, 1);
	nprocs = (uint64_t)s.runs * (1 + 3 * s.jobs_per_run);
	s.rng = 0x9e3779b97f4a7c15ULL;
	s.next_pid = FIRST_PID;
	s.clk = CLOCK0;

	if (batch_crypto_init()) {
		fprintf(stderr, "<3>libsodium failed to initialise\n");
		exit(2);
	}
	snprintf(dir, sizeof(dir), "%s/tracer-live-bench.XXXXXX", lake_base && *lake_base ? lake_base : "/var/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "<3>mkdtemp %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	snprintf(db, sizeof(db), "%s/lake.db", dir);
	lake_db = getenv("LAKE_DB") && *getenv("LAKE_DB") ? getenv("LAKE_DB") : db;
	snprintf(spill_path, sizeof(spill_path), "%s/spill", dir);
	sp.f = fopen(spill_path, "w+");
	if (!sp.f) {
		fprintf(stderr, "<3>%s: %s\n", spill_path, strerror(errno));
		exit(2);
	}

	/* The simulation's own memory, allocated and touched before the baseline. */
	s.roots = calloc(s.runs, sizeof(*s.roots));
	s.jobs = calloc((size_t)s.runs * s.jobs_per_run, sizeof(*s.jobs));
	s.chunk = malloc(CHUNK_BYTES);
	cyc_cpu = calloc(nsec, sizeof(uint64_t));
	cyc_wall = calloc(nsec, sizeof(uint64_t));
	rec_cpu = calloc(nsec, sizeof(uint64_t));
	sweep_cpu = calloc(nsec, sizeof(uint64_t));
	emitted = calloc(nsec, sizeof(uint64_t));
	emitted_bytes = calloc(nsec, sizeof(uint64_t));
	store_ms = calloc(nsec, sizeof(uint64_t));
	per_sec_records = calloc(nsec, sizeof(uint64_t));
	ck_cpu = calloc(nsec, sizeof(uint64_t));
	ck_wall = calloc(nsec, sizeof(uint64_t));
	if (!ck_cpu || !ck_wall || !s.roots || !s.jobs || !s.chunk || !cyc_cpu || !cyc_wall || !rec_cpu || !sweep_cpu || !emitted ||
	    !emitted_bytes || !store_ms || !per_sec_records) {
		fprintf(stderr, "<3>out of memory\n");
		exit(2);
	}
	memset(s.roots, 0, s.runs * sizeof(*s.roots));
	memset(s.jobs, 0, (size_t)s.runs * s.jobs_per_run * sizeof(*s.jobs));
	memset(s.chunk, 0, CHUNK_BYTES);
	rss_base = status_bytes("VmRSS");

	/* The processor, as processor/main.c sets it up in daemon mode with delivery. */
	memset(&lk, 0, sizeof(lk));
	batch_key_generate(&lk.key);
	for (unsigned i = 0; i < BATCH_HOST_ID_LEN; i++)
		lk.id.host_id[i] = (uint8_t)(0xa0 + i);
	memcpy(lk.id.boot_id, lk.id.host_id, sizeof(lk.id.boot_id));
	lk.id.boot_id[0] ^= 0xff;
	hex(boot_hex, lk.id.boot_id, BATCH_BOOT_ID_LEN);
	if (session_init(&ss, max_procs, 0, 42) || steps_init(&steps, 0, 42)) {
		fprintf(stderr, "<3>cannot allocate a table of %u processes\n", max_procs);
		exit(2);
	}
	runs_init(&runs, boot_hex);
	live_init(&lv);
	lv.mono_to_real_ns = MONO_TO_REAL;
	lv.emit = emit;
	lv.emit_ctx = &sp;
	ss.tab.on_evict = runs_on_evict;
	ss.tab.evict_ctx = &runs;

	fprintf(stderr, "<7>live_bench: %u runs x %u processes = %llu live processes, %u s, churn %u%%/s, "
			"table %u, checkpoint %s, lake %s\n",
		s.runs, 1 + 3 * s.jobs_per_run, (unsigned long long)nprocs, nsec, s.churn_percent, max_procs,
		do_ckpt ? "on" : "off", do_lake ? dir : "off");
	t_all0 = mono_ns();
	for (uint32_t sec = 0; sec < nsec; sec++) {
		uint64_t now = CLOCK0 + (uint64_t)(sec + 1) * NS, c0, w0, r0 = sp.records, b0 = sp.bytes;
		int rc;

		s.records_cpu_ns = 0;
		second_records(&s, sec);
		rec_cpu[sec] = s.records_cpu_ns;
		/* housekeeping(): live first (it says which exited processes runs still need), then the sweep */
		c0 = cpu_ns();
		w0 = mono_ns();
		rc = live_cycle(&lv, &ss, &steps, &runs, now);
		cyc_wall[sec] = mono_ns() - w0;
		cyc_cpu[sec] = cpu_ns() - c0;
		if (rc) {
			fprintf(stderr, "<3>live_cycle: %s\n", strerror(-rc));
			exit(1);
		}
		if (do_ckpt) {
			c0 = cpu_ns();
			w0 = mono_ns();
			rc = ckpt_save(dir, s.records_fed, &ck_bytes);
			ck_wall[sec] = mono_ns() - w0;
			ck_cpu[sec] = cpu_ns() - c0;
			tot_ck_cpu += ck_cpu[sec];
			if (rc) {
				fprintf(stderr, "<3>the checkpoint: %s\n", strerror(-rc));
				exit(2);
			}
		}
		c0 = cpu_ns();
		evicted = proctab_sweep(&ss.tab);
		sweep_cpu[sec] = cpu_ns() - c0;
		emitted[sec] = sp.records - r0;
		emitted_bytes[sec] = sp.bytes - b0;
		per_sec_records[sec] = emitted[sec];
		tot_records_cpu += rec_cpu[sec];
		tot_cycle_cpu += cyc_cpu[sec];
		tot_sweep_cpu += sweep_cpu[sec];
		if (sec > 0) {
			steady_cpu += rec_cpu[sec] + cyc_cpu[sec] + sweep_cpu[sec] + ck_cpu[sec];
			steady_recs += emitted[sec];
			steady_bytes += emitted_bytes[sec];
		}
		fprintf(stderr,
			"<7>second %2u: records %6.1f ms cpu, live_cycle %8.1f ms cpu (%8.1f wall), checkpoint %6.1f ms "
			"cpu (%6.1f wall), sweep %5.1f ms (%llu evicted), %llu TL_RUN %.1f MiB, table %u, steps %u, "
			"rss %llu MiB\n",
			sec, rec_cpu[sec] / 1e6, cyc_cpu[sec] / 1e6, cyc_wall[sec] / 1e6, ck_cpu[sec] / 1e6,
			ck_wall[sec] / 1e6, sweep_cpu[sec] / 1e6,
			(unsigned long long)evicted, (unsigned long long)emitted[sec], emitted_bytes[sec] / 1048576.0,
			ss.tab.used, steps.n, (unsigned long long)(status_bytes("VmRSS") >> 20));
	}
	fflush(sp.f);
	if (sp.err) {
		fprintf(stderr, "<3>the spill file failed\n");
		exit(2);
	}
	rss_end = status_bytes("VmRSS");
	hwm_end = status_bytes("VmHWM");
	for (struct proc *p = proctab_next(&ss.tab, NULL); p; p = proctab_next(&ss.tab, p))
		if (!(p->flags & PROC_F_EXIT) && runs_of(&runs, p)) {
			live_in_run++;
			live_no_series += p->series == NULL;
		}
	/* What the live figures can see of the resident sets: the newest sample of each live process, if kept. */
	for (uint64_t k = 0; k < (uint64_t)s.runs * (1 + 3 * s.jobs_per_run); k++) {
		uint64_t r = k / (1 + 3 * s.jobs_per_run), q = k % (1 + 3 * s.jobs_per_run);
		const struct sp *x = q == 0 ? &s.roots[r] : &s.jobs[r * s.jobs_per_run + (q - 1) / 3].p[(q - 1) % 3];
		const struct proc *p = proctab_lookup(&ss.tab, x->tgid, x->start_ns);

		rss_true += x->rss;
		if (p && p->series)
			rss_seen += p->series->last.rss_bytes;
	}
	proc_table_used = ss.tab.used;
	image_bytes = ss.tab.image_bytes;
	series_bytes = ss.tab.series_bytes;
	series_dropped = ss.tab.st.series_dropped;
	table_full = ss.tab.st.table_full;
	decode_errors = ss.st.decode_errors;
	steps_n = steps.n;
	runs_live = runs.live;
	runs_dropped = runs.dropped;
	builds = lv.builds;

	/* ---- the processor's figures ---- */
	{
		uint64_t *c = calloc(nsec, sizeof(uint64_t)), *w = calloc(nsec, sizeof(uint64_t));
		uint32_t m = nsec - 1;
		uint64_t mem = hwm_end > rss_base ? hwm_end - rss_base : 0;
		double steady_s = (double)(nsec - 1);

		if (!c || !w) {
			fprintf(stderr, "<3>out of memory\n");
			exit(2);
		}
		memcpy(c, cyc_cpu + 1, m * sizeof(uint64_t));
		memcpy(w, cyc_wall + 1, m * sizeof(uint64_t));
		printf("live.runs %u runs\n", s.runs);
		printf("live.processes %llu procs\n", (unsigned long long)nprocs);
		printf("live.procs_per_run %u procs\n", 1 + 3 * s.jobs_per_run);
		printf("live.seconds %u s\n", nsec);
		printf("live.churn_percent_per_s %u %%\n", s.churn_percent);
		printf("live.jobs_ended %llu jobs\n", (unsigned long long)s.jobs_ended);
		printf("live.kernel_records %llu rec\n", (unsigned long long)s.records_fed);
		printf("processor.live.cycle_ms.first %.1f ms\n", cyc_cpu[0] / 1e6);
		printf("processor.live.cycle_ms.median %.1f ms\n", median(c, m) / 1e6);
		printf("processor.live.cycle_ms.max %.1f ms\n", max_of(c, m) / 1e6);
		printf("processor.live.cycle_wall_ms.median %.1f ms\n", median(w, m) / 1e6);
		printf("processor.live.cycle_wall_ms.max %.1f ms\n", max_of(w, m) / 1e6);
		printf("processor.records.cpu_ms_per_s %.1f ms\n",
		       (tot_records_cpu - rec_cpu[0]) / 1e6 / steady_s);
		printf("processor.sweep.cpu_ms_per_s %.1f ms\n", (tot_sweep_cpu - sweep_cpu[0]) / 1e6 / steady_s);
		if (do_ckpt) {
			memcpy(c, ck_cpu + 1, m * sizeof(uint64_t));
			memcpy(w, ck_wall + 1, m * sizeof(uint64_t));
			printf("processor.ckpt.bytes %llu B\n", (unsigned long long)ck_bytes);
			printf("processor.ckpt.cpu_ms.median %.1f ms\n", median(c, m) / 1e6);
			printf("processor.ckpt.cpu_ms.max %.1f ms\n", max_of(c, m) / 1e6);
			printf("processor.ckpt.wall_ms.median %.1f ms\n", median(w, m) / 1e6);
			printf("processor.ckpt.wall_ms.max %.1f ms\n", max_of(w, m) / 1e6);
		}
		printf("processor.first_second.cpu_ms %.1f ms\n",
		       (rec_cpu[0] + cyc_cpu[0] + sweep_cpu[0] + ck_cpu[0]) / 1e6);
		printf("processor.live.cpu_per_s_percent %.1f %%\n", steady_cpu / 1e7 / steady_s);
		printf("processor.all.cpu_per_s_percent %.1f %%\n",
		       (tot_records_cpu + tot_cycle_cpu + tot_sweep_cpu + tot_ck_cpu) / 1e7 / nsec);
		printf("processor.rss_bytes %llu B\n", (unsigned long long)(rss_end > rss_base ? rss_end - rss_base : 0));
		printf("processor.hwm_bytes %llu B\n", (unsigned long long)mem);
		printf("processor.bytes_per_live_process %.0f B\n", (double)mem / (double)nprocs);
		printf("processor.bytes_per_run %.0f B\n", (double)mem / s.runs);
		printf("processor.proctab.entries %llu procs\n", (unsigned long long)proc_table_used);
		printf("processor.proctab.entry_bytes %zu B\n", proctab_entry_bytes());
		printf("processor.proctab.image_bytes %llu B\n", (unsigned long long)image_bytes);
		printf("processor.proctab.series_bytes %llu B\n", (unsigned long long)series_bytes);
		printf("processor.proctab.series_dropped %llu samples\n", (unsigned long long)series_dropped);
		printf("processor.live.procs_without_series %llu procs\n", (unsigned long long)live_no_series);
		printf("processor.live.rss_seen_percent %.1f %%\n", rss_true ? 100.0 * rss_seen / rss_true : 0.0);
		printf("processor.run_bytes %zu B\n", sizeof(struct run));
		printf("processor.steps %llu steps\n", (unsigned long long)steps_n);
		printf("processor.live.step_builds %llu builds\n", (unsigned long long)builds);
		printf("processor.live.records_per_s %.0f rec/s\n", steady_recs / steady_s);
		printf("processor.live.bytes_per_s %.0f B/s\n", steady_bytes / steady_s);
		printf("processor.live.first_second_records %llu rec\n", (unsigned long long)emitted[0]);
		printf("processor.live.first_second_bytes %llu B\n", (unsigned long long)emitted_bytes[0]);
		printf("processor.live.record_max_bytes %llu B\n", (unsigned long long)sp.max_len);
		fflush(stdout);
		free(c);
		free(w);
	}
	fprintf(stderr, "<7>processor phase: %.1f s wall\n", (mono_ns() - t_all0) / 1e9);
	if (decode_errors || table_full || runs_live != s.runs || runs_dropped || live_in_run != nprocs) {
		fprintf(stderr,
			"<3>BROKEN: decode errors %llu, table full %llu, runs live %llu of %u (dropped %llu), "
			"live processes in a run %llu of %llu\n",
			(unsigned long long)decode_errors, (unsigned long long)table_full,
			(unsigned long long)runs_live, s.runs, (unsigned long long)runs_dropped,
			(unsigned long long)live_in_run, (unsigned long long)nprocs);
		broken = true;
	}
	if (live_no_series)
		fprintf(stderr, "<4>%llu live processes have no sample series (the series budget is spent): "
				"their rss and rates are missing from the live figures\n",
			(unsigned long long)live_no_series);

	/* ---- the lake's writer ---- */
	live_free(&lv);
	runs_free(&runs);
	steps_free(&steps);
	session_free(&ss);
	free(s.jobs);
	free(s.roots);
	malloc_trim(0);
	if (do_lake) {
		char err[256], wal[600];
		uint64_t t0 = mono_ns(), total_store_wall = 0, payload_cap = TL_RUN_MAX;
		uint8_t *payload = malloc(payload_cap);
		uint64_t *per = calloc(nsec, sizeof(uint64_t));

		lk.frames = malloc(BATCH_FRAME_BYTES + TR_FRAME_SIZE(TL_RUN_MAX));
		lk.wire_cap = batch_max_wire(BATCH_FRAME_BYTES + TR_FRAME_SIZE(TL_RUN_MAX));
		lk.wire = malloc(lk.wire_cap);
		if (!payload || !lk.frames || !lk.wire || !per) {
			fprintf(stderr, "<3>out of memory\n");
			exit(2);
		}
		memset(lk.frames, 0, BATCH_FRAME_BYTES + TR_FRAME_SIZE(TL_RUN_MAX));
		memset(lk.wire, 0, lk.wire_cap);
		rss_lake_base = status_bytes("VmRSS");
		lk.rss_peak = rss_lake_base;
		if (store_open(&lk.st, lake_db, false, err, sizeof(err))) {
			fprintf(stderr, "<3>store_open: %s\n", err);
			exit(2);
		}
		rewind(sp.f);
		for (uint32_t sec = 0; sec < nsec && !lk.err; sec++) {
			uint64_t w0 = lk.store_wall_ns;

			for (uint64_t i = 0; i < per_sec_records[sec]; i++) {
				uint32_t len;

				if (fread(&len, sizeof(len), 1, sp.f) != 1 || len > payload_cap ||
				    fread(payload, 1, len, sp.f) != len) {
					fprintf(stderr, "<3>the spill file is short\n");
					exit(2);
				}
				lake_add(&lk, payload, len);
			}
			lake_flush(&lk);
			store_ms[sec] = lk.store_wall_ns - w0;
			fprintf(stderr, "<7>lake second %2u: %llu TL_RUN stored in %.1f ms\n", sec,
				(unsigned long long)per_sec_records[sec], store_ms[sec] / 1e6);
		}
		total_store_wall = lk.store_wall_ns;
		store_close(lk.st);
		snprintf(wal, sizeof(wal), "%s-wal", db);
		if (lk.err) {
			fprintf(stderr, "<3>BROKEN: storing failed\n");
			broken = true;
		} else {
			uint32_t m = nsec - 1;

			memcpy(per, store_ms + 1, m * sizeof(uint64_t));
			printf("lake.live.records %llu rec\n", (unsigned long long)sp.records);
			printf("lake.live.batches %llu batches\n", (unsigned long long)lk.batches);
			printf("lake.live.records_per_s %.0f rec/s\n",
			       total_store_wall ? sp.records * 1e9 / total_store_wall : 0.0);
			printf("lake.live.store_ms_per_cycle.first %.1f ms\n", store_ms[0] / 1e6);
			printf("lake.live.store_ms_per_cycle.median %.1f ms\n", median(per, m) / 1e6);
			printf("lake.live.store_ms_per_cycle.max %.1f ms\n", max_of(per, m) / 1e6);
			printf("lake.live.store_cpu_share %.3f cores\n",
			       total_store_wall ? (double)lk.store_cpu_ns / total_store_wall : 0.0);
			printf("lake.live.cpu_per_s_percent %.1f %%\n", lk.store_cpu_ns / 1e7 / nsec);
			printf("lake.live.unknown_records %llu rec\n", (unsigned long long)lk.unknown);
			printf("lake.live.bad_live_records %llu rec\n", (unsigned long long)lk.bad_live);
			printf("lake.live.runs_seen %llu runs\n", (unsigned long long)lk.new_runs);
			printf("lake.live.derived %d bool\n", lk.unknown == 0 && lk.new_runs > 0);
			printf("lake.postgresql %d bool\n", lake_db != db);
			if (lake_db == db) { /* PostgreSQL's: its server's */
				printf("lake.file_bytes %llu B\n", (unsigned long long)file_size(db));
				printf("lake.wal_bytes %llu B\n", (unsigned long long)file_size(wal));
			}
			printf("lake.rss_bytes %llu B\n",
			       (unsigned long long)(lk.rss_peak > rss_lake_base ? lk.rss_peak - rss_lake_base : 0));
			if (lk.unknown)
				fprintf(stderr, "<4>the lake derived nothing from %llu TL_RUN records (stored as records "
						"only): these figures are raw record storage\n",
					(unsigned long long)lk.unknown);
		}
		fprintf(stderr, "<7>lake phase: %.1f s wall\n", (mono_ns() - t0) / 1e9);
		free(per);
		free(payload);
		free(lk.frames);
		free(lk.wire);
	}
	fclose(sp.f);
	if (getenv("KEEP") && !strcmp(getenv("KEEP"), "1"))
		fprintf(stderr, "<7>kept %s\n", dir);
	else
		rm_lake(dir, db);
	free(s.chunk);
	free(cyc_cpu);
	free(cyc_wall);
	free(rec_cpu);
	free(sweep_cpu);
	free(emitted);
	free(emitted_bytes);
	free(store_ms);
	free(per_sec_records);
	free(ck_cpu);
	free(ck_wall);
	return broken ? 1 : 0;
}
