/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fleet simulator (make bench-fleet, bench/fleet.sh; issue 26): HOSTS
 * hosts sending to the ingests of one lake as their processors would, from
 * one process: libcurl's multi interface driven by epoll (its socket
 * interface), one easy handle per host (its connection kept alive, from an
 * address of its own on 127.0.0.0/8), no thread per host.
 *
 * Each host has its own Ed25519 key, host id and boot id, derived from
 * --seed (so that --enroll prints the keys file the ingests read, each key
 * bound to its host), and a random stream id (batch header version 2). Its
 * records, as a processor in daemon mode spools them:
 *   - a Snakemake run (live_bench.c's shapes): the root, /usr/bin/snakemake
 *     as python3 runs it, and (PROCS - 1) / 3 jobs, each a job shell
 *     `bash -c 'set -euo pipefail;  bwa mem ... | samtools sort ...'` with
 *     its two tools; fork and exec records built with records/encode.h;
 *   - a TR_SAMPLE of every live process once a second, spread evenly over
 *     the second, counters growing at live_bench.c's rates;
 *   - turnover: a job lives 5-60 s (uniform), then its tools and its shell
 *     exit (one job in 100 fails: samtools and the shell exit 1) and a new
 *     job takes its place, so the live processes stay 1 + 3 x jobs;
 *   - a TL_RUN (tracer.live.v1, the members report/live.c writes) once a
 *     second: the run's figures, the steps that started or ended since the
 *     previous one, the new processes' attributions, a failed job's
 *     signal. The processor also re-sends a running step whose figures
 *     moved (at most every 2 s): not played here;
 *   - a TL_HOST (report/hostbeat.c's writer) every HEARTBEAT_S seconds,
 *     the first one interval after the host starts.
 * A host starts at a random moment of the first second, with every
 * process of its run forked and exec'd at once; hosts' seconds are out of
 * phase with each other, as a fleet's are.
 *
 * Delivery as delivery/upload.c does it (its constants are the defaults
 * of tracer.conf): a batch is sealed (common/batch.c: zlib, signed,
 * chained by prev_hash, batch_seq from 1) once batch_records (5000)
 * records wait or the oldest has waited batch_interval (1 s); with twice
 * batch_records waiting it takes up to four times as many (within 8 MiB of
 * frames). One batch in flight per host, retried with the same bytes (and
 * its hash as Idempotency-Key). A network error, 408, 425, 429 or 5xx rests
 * that URL for its backoff (full jitter under a ceiling of 500 ms doubling
 * up to retry_max, 300 s; at least Retry-After) and sends the batch at
 * once to the next URL not resting, else waits for the first whose rest
 * ends; batches keep going to the URL that took the last. Host i's list
 * of URLs starts at the (i mod M)th, so the hosts are spread over the M
 * ingests as a fleet's upload_url lists would spread them. Another 4xx
 * refuses the batch for good: counted, its records never reach the lake.
 *
 * Lag: from when a record was made (the simulator's CLOCK_MONOTONIC at the
 * look that made it) to the acknowledgement of its batch (2xx: "stored",
 * or "duplicate" when an ingest had stored it already). After SECONDS of
 * records the hosts stop making them, and the run waits, at most DRAIN_S,
 * until every host's last batch is acknowledged.
 *
 * Usage:
 *   fleet_sim --enroll --seed HEX      the keys file's lines, one a host, on stdout
 *   fleet_sim --seed HEX --url URL [--url URL]... --sent FILE [--ready-fd FD] [--dump DIR]
 * The second writes "generating\n" to FD when the first look makes
 * records, its results as "<metric> <value> <unit>" lines on stdout,
 * progress on stderr, and into FILE a line a host: its host id (hex), its
 * stream, the last seq it made, the batches acknowledged, the last seq
 * acknowledged (bench/fleet.sh compares them with the lake). HEX: 64 hex digits. Environment: HOSTS
 * (1000), PROCS (100: a root and (PROCS - 1) / 3 jobs), SECONDS (60),
 * HEARTBEAT_S (5), DRAIN_S (300). Exit 0 when every record made was
 * acknowledged; 1 when not (the drain timed out, a batch was refused for
 * good, the lake so far behind that the hosts' backlog passed 2 GiB); 2
 * on a usage or setup error. --dump DIR: each batch sealed is also written
 * to DIR/HOST-BATCHSEQ.batch (host index, batch_seq, each 6 digits), as
 * sent: real batches for a test to replay (tests/e2e/test_lake_pg.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sodium.h>

#include "batch.h"
#include "decode.h"
#include "encode.h"
#include "frame.h"
#include "hostbeat.h"
#include "hostid.h"
#include "json.h"
#include "lake.h"
#include "live.h"
#include "records.h"
#include "report.h"
#include "report_ctx.h"
#include "upload.h"

#define NS 1000000000ULL
#define MS 1000000ULL
#define BATCH_RECORDS 5000u             /* batch_records' default */
#define BATCH_INTERVAL_NS NS            /* batch_interval's default */
#define BACKLOG_FACTOR 4u               /* delivery/upload.c: with 2 x batch_records waiting, up to 4 x */
#define BATCH_FRAME_BYTES (8u << 20)    /* upload.c's read buffer: the frames of one batch at most */
#define RETRY_BASE_NS (500 * MS)        /* upload.c's first backoff ceiling */
#define RETRY_MAX_NS (300 * NS)         /* retry_max's default */
#define CONNECT_TIMEOUT_MS 10000L       /* connect_timeout's default */
#define TRANSFER_TIMEOUT_MS 60000L      /* transfer_timeout's default */
#define LOOK_NS (20 * MS)               /* every host is looked at this often: records, batches, retries due */
#define RUN_RECORD_NS NS                /* a TL_RUN per host this often */
#define JOB_LIFE_MIN_NS (5 * NS)
#define JOB_LIFE_SPAN_NS (55 * NS)      /* a job lives 5-60 s */
#define FAIL_ONE_IN 100u
#define BACKLOG_BYTES_MAX (2ULL << 30)  /* frames all hosts hold unacknowledged at most: past it the run stops */
#define LAG_BUCKET_NS MS
#define LAG_BUCKETS 600000u             /* 1 ms each up to 600 s; the last also counts everything longer */
#define RECORD_SPLIT (TL_RUN_MAX - (64u << 10)) /* report/live.c's: another TL_RUN past this many bytes */
#define REPLY_KEEP 48                   /* bytes of a reply kept: enough for its status */
#define EVENTS_MAX 256
#define FIRST_PID 1000u
#define LAUNCHER_PID 900u               /* the login shell that started the run: never seen */
#define HOST_CPUS 32u
#define HOST_MEMORY (128ULL << 30)
#define HOST_UPTIME0_NS (864000ULL * NS) /* every host booted 10 days before the run */
#define SNAKEFILE "/data/proj/workflow/Snakefile"
#define STREAM_MASK 0x7fffffffffffffffULL

enum kind { K_ROOT, K_SHELL, K_BWA, K_SAMTOOLS };
enum hstate { H_IDLE, H_SENDING, H_WAITING };

/* One simulated process: identity and counters. */
struct sp {
	uint32_t tgid, ppid;
	uint64_t start_ns, parent_start_ns, last_ts;
	uint64_t runtime_ns, read_bytes, write_bytes, rss;
	uint32_t cpu_milli, read_bps, write_bps; /* what it uses: thousandths of a core, bytes/s */
	uint8_t kind;
};

struct job {
	struct sp p[3];     /* the shell, bwa, samtools */
	uint64_t end_ns;    /* when it ends (CLOCK_MONOTONIC) */
	uint32_t sample;    /* its sample number: the file names */
	bool fail;
	bool fresh;         /* started since the host's last TL_RUN */
};

/* One of the ingests' URLs, as a host sees it (upload.c's struct target). */
struct target {
	unsigned fails;             /* in a row: the exponent of its backoff */
	uint64_t rest_until_ns;
};

struct host {
	uint32_t index;
	struct batch_secret_key key;
	struct batch_identity id;
	struct hostid hw;
	uint64_t stream;
	char boot_hex[2 * BATCH_BOOT_ID_LEN + 1];
	char run_key[2 * BATCH_BOOT_ID_LEN + 48];
	char addr[32];              /* "host!127.x.y.z": its own source address */
	uint64_t phase_ns;          /* its seconds start this much after the run's */
	bool started;
	uint64_t clk;               /* the last record's ts_ns */
	uint32_t next_pid, next_sample;
	/* the run */
	struct sp root;
	struct job *jobs;           /* njobs */
	struct job *gone;           /* jobs ended since the last TL_RUN, at most njobs */
	uint32_t ngone;
	bool root_sent;             /* the root's attribution is in the lake's hands */
	uint64_t update, beats, beat_start_real_ns;
	uint64_t next_end_ns, run_next_ns, beat_next_ns;
	uint64_t sample_next_ns, sample_cycle;
	uint32_t sample_cursor;     /* the next slot to sample: 0 the root, 1 + 3 j + q job j's process q */
	uint64_t done_processes, done_cpu_ns, done_read, done_write, done_rchar, done_wchar;
	/* its spool: records made and not acknowledged; the batch in flight is their first inflight_n */
	uint8_t *frames;
	size_t len, cap;
	uint64_t *made;             /* when each was made (CLOCK_MONOTONIC) */
	uint32_t n, made_cap;
	uint64_t next_seq;
	/* the batch in flight */
	enum hstate state;
	uint32_t inflight_n;
	size_t inflight_len;
	struct batch_build b;
	uint8_t hash[BATCH_HASH_LEN], prev_hash[BATCH_HASH_LEN];
	uint64_t batch_seq;         /* the last acknowledged */
	uint8_t *wire;
	size_t wire_len, wire_cap;
	CURL *easy;
	struct curl_slist *headers;
	struct target targets[UPLOAD_URLS_MAX];
	unsigned in_use;
	uint64_t retry_after_ns, next_attempt_ns;
	char reply[REPLY_KEEP + 1];
	size_t reply_len;
	char errbuf[CURL_ERROR_SIZE];
	uint64_t batches_acked;
	uint64_t acked_seq; /* the last seq of the last batch acknowledged: one in flight, so all below too */
};

struct fleet {
	uint32_t hosts, njobs, nprocs, seconds, heartbeat_s, drain_s;
	const char *urls[UPLOAD_URLS_MAX];
	unsigned nurls;
	uint8_t seed[32];
	struct host *h;
	CURLM *multi;
	int epfd;                   /* the sockets libcurl asks to watch (CURLMOPT_SOCKETFUNCTION) */
	uint64_t curl_due_ns;       /* when libcurl wants its timeout action (UINT64_MAX: never) */
	uint64_t rng;
	uint64_t t0, gen_end, now;  /* CLOCK_MONOTONIC */
	int64_t mono_to_real;
	struct obuf o;              /* a TL_RUN or TL_HOST being written */
	struct json j;
	const char *section;        /* the array open in it, or NULL */
	const char *dump;           /* --dump DIR, or NULL */
	unsigned char rec[DECODE_MAX_LEN];
	/* figures */
	uint32_t *lag;              /* LAG_BUCKETS */
	uint64_t made, acked, batches, dup_replies, attempts, retries, failovers;
	uint64_t http_503, http_5xx, http_other, net_errors, refused_batches, refused_records;
	uint64_t bytes_sent, last_ack_ns, late_max_ns;
	uint64_t backlog_bytes;     /* frames made and not acknowledged, all hosts */
	bool broken;
};

/* ---- clocks, settings, randomness ---------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
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

static uint64_t rnd(struct fleet *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint64_t real_of(const struct fleet *f, uint64_t mono)
{
	return (uint64_t)((int64_t)mono + f->mono_to_real);
}

/* out (n bytes) = BLAKE2b keyed by the seed, of what and the host's index: its key, host id, boot id. */
static void derive(const struct fleet *f, const char *what, uint32_t index, uint8_t *out, size_t n)
{
	uint8_t msg[64];
	size_t len = strlen(what);

	memcpy(msg, what, len);
	memcpy(msg + len, &index, sizeof(index));
	crypto_generichash(out, n, msg, len + sizeof(index), f->seed, sizeof(f->seed));
}

static void host_keys(const struct fleet *f, struct host *h, uint32_t index)
{
	uint8_t key_seed[crypto_sign_SEEDBYTES];

	h->index = index;
	derive(f, "tracer-fleet-key", index, key_seed, sizeof(key_seed));
	crypto_sign_seed_keypair(h->key.public_key, h->key.secret_key, key_seed);
	sodium_memzero(key_seed, sizeof(key_seed));
	batch_key_id(h->key.public_key, h->key.key_id);
	derive(f, "tracer-fleet-host", index, h->id.host_id, sizeof(h->id.host_id));
	derive(f, "tracer-fleet-boot", index, h->id.boot_id, sizeof(h->id.boot_id));
}

/* ---- a host's spool ----------------------------------------------------- */

/* Append one record as the spool frames it, made now; its seq is the host's next. */
static void rec_add(struct fleet *f, struct host *h, uint16_t type, uint16_t flags, const void *payload, uint32_t len)
{
	struct tr_frame fr = { .seq = h->next_seq++, .type = type, .flags = flags, .len = len };
	size_t size = TR_FRAME_SIZE(len);

	if (h->len + size > h->cap) {
		size_t cap = h->cap ? h->cap : 64u << 10;

		while (cap < h->len + size)
			cap *= 2;
		h->frames = realloc(h->frames, cap);
		if (!h->frames) {
			fprintf(stderr, "<3>out of memory\n");
			exit(2);
		}
		h->cap = cap;
	}
	if (h->n == h->made_cap) {
		h->made_cap = h->made_cap ? 2 * h->made_cap : 256;
		h->made = realloc(h->made, h->made_cap * sizeof(*h->made));
		if (!h->made) {
			fprintf(stderr, "<3>out of memory\n");
			exit(2);
		}
	}
	memset(h->frames + h->len, 0, size);
	memcpy(h->frames + h->len + TR_FRAME_HDR, payload, len);
	fr.crc = frame_crc(&fr, h->frames + h->len + TR_FRAME_HDR);
	memcpy(h->frames + h->len, &fr, sizeof(fr));
	h->len += size;
	h->made[h->n++] = f->now;
	f->made++;
	f->backlog_bytes += size;
}

/* ---- kernel records --------------------------------------------------------- */

static uint64_t tick(struct host *h, uint64_t at)
{
	h->clk = at > h->clk ? at : h->clk + 1;
	return h->clk;
}

static const char *comm_of(const struct sp *p)
{
	return p->kind == K_ROOT ? "snakemake" : p->kind == K_SHELL ? "bash" : p->kind == K_BWA ? "bwa" : "samtools";
}

static const char *tool_of(const struct sp *p)
{
	return p->kind == K_ROOT	 ? "snakemake"
	       : p->kind == K_SHELL ? "bash"
	       : p->kind == K_BWA   ? "bwa mem"
				    : "samtools sort";
}

static void fork_exec(struct fleet *f, struct host *h, struct sp *p, const char *path, const char *const *argv)
{
	struct tr_fork fk;
	size_t n;

	p->start_ns = tick(h, f->now);
	p->last_ts = p->start_ns;
	fk = encode_fork(p->start_ns, p->ppid, p->parent_start_ns, p->tgid, p->start_ns);
	rec_add(f, h, TR_FORK, 0, &fk, sizeof(fk));
	n = encode_exec_ctx(f->rec, sizeof(f->rec), tick(h, f->now + 300000), p->tgid, p->ppid, p->start_ns, path, argv,
			    "/data/proj", NULL);
	if (!n) {
		fprintf(stderr, "<3>an exec record does not fit\n");
		exit(2);
	}
	/* the processor redacts every exec's argument area before it spools it (delivery/lakeout.c) */
	rec_add(f, h, TR_EXEC, TR_FRAME_REDACTED, f->rec, (uint32_t)n);
}

/* Counters up to ts, at the process's rates. */
static void grow(struct sp *p, uint64_t ts)
{
	uint64_t dt = ts - p->last_ts;

	p->runtime_ns += dt * p->cpu_milli / 1000;
	p->read_bytes += dt * p->read_bps / NS;
	p->write_bytes += dt * p->write_bps / NS;
	p->last_ts = ts;
}

static void sample(struct fleet *f, struct host *h, struct sp *p)
{
	uint64_t ts = tick(h, f->now);
	struct tr_sample x;

	grow(p, ts);
	x = encode_sample(ts, p->tgid, p->start_ns, p->ppid, p->runtime_ns, p->rss, p->read_bytes + 4096);
	x.utime_ns = p->runtime_ns / 10 * 9;
	x.stime_ns = p->runtime_ns - x.utime_ns;
	x.read_bytes = p->read_bytes;
	x.write_bytes = p->write_bytes;
	x.wchar = p->write_bytes + 512;
	x.cgroup_id = 7;
	x.nr_threads = p->kind == K_BWA ? 4 : 1;
	encode_comm(x.comm, comm_of(p));
	rec_add(f, h, TR_SAMPLE, 0, &x, sizeof(x));
}

static void exit_of(struct fleet *f, struct host *h, struct sp *p, uint32_t raw)
{
	uint64_t ts = tick(h, f->now);
	struct tr_exit x = encode_exit(ts, p->tgid, p->start_ns, p->ppid, raw);

	grow(p, ts);
	x.runtime_ns = p->runtime_ns;
	x.utime_ns = p->runtime_ns / 10 * 9;
	x.stime_ns = p->runtime_ns - x.utime_ns;
	x.maxrss_bytes = p->rss + (p->rss >> 4);
	x.image_peak_rss_bytes = p->rss + (p->rss >> 4);
	x.read_bytes = p->read_bytes;
	x.write_bytes = p->write_bytes;
	x.rchar = p->read_bytes + 4096;
	x.wchar = p->write_bytes + 512;
	encode_comm(x.comm, comm_of(p));
	rec_add(f, h, TR_EXIT, 0, &x, sizeof(x));
	h->done_processes++;
	h->done_cpu_ns += p->runtime_ns;
	h->done_read += p->read_bytes;
	h->done_write += p->write_bytes;
	h->done_rchar += x.rchar;
	h->done_wchar += x.wchar;
}

static void start_root(struct fleet *f, struct host *h)
{
	struct sp *p = &h->root;

	*p = (struct sp){ .tgid = h->next_pid++, .ppid = LAUNCHER_PID, .parent_start_ns = NS, .kind = K_ROOT,
			  .cpu_milli = 20, .rss = 180ULL << 20, .read_bps = 4096 };
	fork_exec(f, h, p, "/usr/bin/snakemake",
		  (const char *const[]){ "/usr/bin/python3", "/usr/bin/snakemake", "-c4", "--snakefile", SNAKEFILE,
					 NULL });
	snprintf(h->run_key, sizeof(h->run_key), "%s-%u-%llu", h->boot_hex, (unsigned)p->tgid,
		 (unsigned long long)p->start_ns);
}

static void start_job(struct fleet *f, struct host *h, struct job *j)
{
	char cmd[256], r1[48], r2[48], bam[48];
	const char *const bwa_argv[] = { "bwa", "mem", "-t", "4", "ref/genome.fa", r1, r2, NULL };
	const char *const sam_argv[] = { "samtools", "sort", "-@", "2", "-o", bam, "-", NULL };
	uint32_t n = h->next_sample++;

	memset(j, 0, sizeof(*j));
	j->sample = n;
	j->fresh = true;
	j->fail = rnd(f) % FAIL_ONE_IN == 0;
	snprintf(r1, sizeof(r1), "reads/S%06u_R1.fastq.gz", n);
	snprintf(r2, sizeof(r2), "reads/S%06u_R2.fastq.gz", n);
	snprintf(bam, sizeof(bam), "mapped/S%06u.sorted.bam", n);
	snprintf(cmd, sizeof(cmd), "set -euo pipefail;  bwa mem -t 4 ref/genome.fa %s %s | samtools sort -@ 2 -o %s -",
		 r1, r2, bam);
	j->p[0] = (struct sp){ .tgid = h->next_pid++, .ppid = h->root.tgid, .parent_start_ns = h->root.start_ns,
			       .kind = K_SHELL, .cpu_milli = 1, .rss = 3600ULL << 10 };
	fork_exec(f, h, &j->p[0], "/usr/bin/bash", (const char *const[]){ "/usr/bin/bash", "-c", cmd, NULL });
	j->p[1] = (struct sp){ .tgid = h->next_pid++, .ppid = j->p[0].tgid, .parent_start_ns = j->p[0].start_ns,
			       .kind = K_BWA, .cpu_milli = 900 + (uint32_t)(rnd(f) % 200),
			       .rss = (1ULL << 30) + rnd(f) % (5ULL << 30), .read_bps = 20u << 20 };
	fork_exec(f, h, &j->p[1], "/usr/bin/bwa", bwa_argv);
	j->p[2] = (struct sp){ .tgid = h->next_pid++, .ppid = j->p[0].tgid, .parent_start_ns = j->p[0].start_ns,
			       .kind = K_SAMTOOLS, .cpu_milli = 250 + (uint32_t)(rnd(f) % 100),
			       .rss = (200ULL << 20) + rnd(f) % (600ULL << 20), .write_bps = 15u << 20 };
	fork_exec(f, h, &j->p[2], "/usr/bin/samtools", sam_argv);
	j->end_ns = f->now + JOB_LIFE_MIN_NS + rnd(f) % JOB_LIFE_SPAN_NS;
}

/* ---- live records ---------------------------------------------------------- */

static void write_figs(struct json *j, uint64_t cpu_milli, uint64_t rss, uint64_t read_bps, uint64_t write_bps)
{
	json_key(j, "live");
	json_object_begin(j);
	json_kv_u64(j, "cpu_millicores", cpu_milli);
	json_kv_u64(j, "rss_bytes", rss);
	json_kv_u64(j, "read_bytes_per_s", read_bps);
	json_kv_u64(j, "write_bytes_per_s", write_bps);
	json_kv_u64(j, "net_tx_bytes_per_s", 0);
	json_kv_u64(j, "net_rx_bytes_per_s", 0);
	json_object_end(j);
}

/* The run's header, as report/live.c's write_run_header(): everything but the three arrays. */
static void run_open(struct fleet *f, struct host *h)
{
	struct json *j = &f->j;
	uint64_t processes = 1 + 3ULL * f->njobs, cpu = h->done_cpu_ns, rd = h->done_read, wr = h->done_write;
	uint64_t rchar = h->done_rchar, wchar = h->done_wchar, milli = h->root.cpu_milli, rss = h->root.rss;
	uint64_t rbps = h->root.read_bps, wbps = 0;

	cpu += h->root.runtime_ns;
	rd += h->root.read_bytes;
	rchar += h->root.read_bytes + 4096;
	wchar += 512;
	for (uint32_t k = 0; k < f->njobs; k++)
		for (int q = 0; q < 3; q++) {
			const struct sp *p = &h->jobs[k].p[q];

			cpu += p->runtime_ns;
			rd += p->read_bytes;
			wr += p->write_bytes;
			rchar += p->read_bytes + 4096;
			wchar += p->write_bytes + 512;
			milli += p->cpu_milli;
			rss += p->rss;
			rbps += p->read_bps;
			wbps += p->write_bps;
		}
	f->o.len = 0;
	f->o.err = 0;
	f->section = NULL;
	json_init(j, &f->o);
	json_object_begin(j);
	json_kv_string(j, "schema", LIVE_SCHEMA);
	json_kv_string(j, "key", h->run_key);
	json_kv_u64(j, "update", ++h->update);
	json_kv_u64(j, "update_ns", real_of(f, f->now));
	json_kv_string(j, "state", "running");
	json_kv_string(j, "detected_by", "snakemake");
	json_kv_string(j, "engine", "snakemake");
	json_kv_string(j, "pipeline", "snakemake:" SNAKEFILE);
	json_kv_null(j, "run_id");
	json_kv_null(j, "run_name");
	json_kv_null(j, "slurm_job_id");
	json_kv_null(j, "aws_batch_job_id");
	json_key(j, "command");
	json_array_begin(j);
	json_string(j, "/usr/bin/python3");
	json_string(j, "/usr/bin/snakemake");
	json_string(j, "-c4");
	json_string(j, "--snakefile");
	json_string(j, SNAKEFILE);
	json_array_end(j);
	json_kv_u64(j, "root_pid", h->root.tgid);
	json_kv_u64(j, "root_start_mono_ns", h->root.start_ns);
	json_kv_u64(j, "uid", 1000);
	json_kv_u64(j, "start_ns", real_of(f, h->root.start_ns));
	json_kv_null(j, "end_ns");
	json_kv_null(j, "exit_code");
	json_kv_null(j, "signal");
	json_kv_bool(j, "preexisting", false);
	json_kv_u64(j, "processes", processes + h->done_processes);
	json_kv_u64(j, "running_processes", processes);
	json_key(j, "totals");
	json_object_begin(j);
	json_kv_u64(j, "cpu_ns", cpu);
	json_kv_u64(j, "read_bytes", rd);
	json_kv_u64(j, "write_bytes", wr);
	json_kv_u64(j, "rchar", rchar);
	json_kv_u64(j, "wchar", wchar);
	json_kv_u64(j, "net_tx_bytes", 0);
	json_kv_u64(j, "net_rx_bytes", 0);
	json_object_end(j);
	write_figs(j, milli, rss, rbps, wbps);
	report_write_host(j, &h->hw);
}

static void run_close(struct fleet *f, struct host *h)
{
	if (f->section)
		json_array_end(&f->j);
	json_object_end(&f->j);
	if (f->o.err) {
		fprintf(stderr, "<3>a TL_RUN of host %u does not fit in %u bytes\n", h->index, TL_RUN_MAX);
		exit(2);
	}
	rec_add(f, h, TL_RUN, 0, f->o.buf, (uint32_t)f->o.len);
}

/* Before an element of array name: open it, or a new record when this one is full (as report/live.c). */
static void run_element(struct fleet *f, struct host *h, const char *name)
{
	if (f->o.len > RECORD_SPLIT) {
		run_close(f, h);
		run_open(f, h);
	}
	if (f->section != name) {
		if (f->section)
			json_array_end(&f->j);
		json_key(&f->j, name);
		json_array_begin(&f->j);
		f->section = name;
	}
}

static void step_id(const struct job *jb, char out[24])
{
	snprintf(out, 24, "smk-%u", (unsigned)jb->p[0].tgid);
}

/* A job's step, as report/live.c's write_step(); ended: its final record. */
static void write_step(struct fleet *f, const struct job *jb, bool ended)
{
	struct json *j = &f->j;
	char id[24];
	uint64_t cpu = 0, rss = 0, rd = 0, wr = 0, milli = 0, rbps = 0, wbps = 0;

	for (int q = 0; q < 3; q++) {
		cpu += jb->p[q].runtime_ns;
		rss += jb->p[q].rss;
		rd += jb->p[q].read_bytes;
		wr += jb->p[q].write_bytes;
		milli += jb->p[q].cpu_milli;
		rbps += jb->p[q].read_bps;
		wbps += jb->p[q].write_bps;
	}
	step_id(jb, id);
	json_object_begin(j);
	json_kv_string(j, "id", id);
	json_kv_string(j, "name", "align");
	json_kv_string(j, "engine", "snakemake");
	json_kv_string(j, "rule", "align");
	json_kv_null(j, "workdir");
	json_kv_string(j, "state", !ended ? "running" : jb->fail ? "failed" : "succeeded");
	json_key(j, "tools");
	json_array_begin(j);
	json_string(j, "bwa mem");
	json_string(j, "samtools sort");
	json_array_end(j);
	json_kv_u64(j, "start_ns", real_of(f, jb->p[0].start_ns));
	json_kv_u64_or_null(j, "end_ns", ended, real_of(f, jb->p[0].last_ts));
	json_kv_u64(j, "processes", 3);
	json_kv_u64(j, "running", ended ? 0 : 3);
	json_kv_u64(j, "failed_processes", ended && jb->fail ? 2 : 0);
	json_kv_u64(j, "nonzero_exits", ended && jb->fail ? 2 : 0);
	json_kv_u64(j, "oom_killed", 0);
	json_kv_u64_or_null(j, "exit_code", ended, jb->fail ? 1 : 0);
	json_kv_u64_or_null(j, "signal", ended, 0);
	json_kv_bool(j, "failed", ended && jb->fail);
	json_kv_u64(j, "cpu_ns", cpu);
	json_kv_u64(j, "peak_rss_bytes", rss);
	json_kv_u64(j, "rss_sum_of_peaks_bytes", rss);
	json_kv_bool(j, "peak_rss_partial", false);
	json_kv_null(j, "memcg_peak_bytes");
	report_write_limits(j, 0, 0);
	json_kv_u64(j, "read_bytes", rd);
	json_kv_u64(j, "write_bytes", wr);
	json_kv_u64(j, "rchar", rd + 3 * 4096);
	json_kv_u64(j, "wchar", wr + 3 * 512);
	json_kv_u64(j, "net_tx_bytes", 0);
	json_kv_u64(j, "net_rx_bytes", 0);
	if (ended)
		write_figs(j, 0, 0, 0, 0);
	else
		write_figs(j, milli, rss, rbps, wbps);
	json_object_end(j);
}

static void write_attr(struct json *j, const struct sp *p, const char *step)
{
	json_object_begin(j);
	json_kv_u64(j, "pid", p->tgid);
	json_kv_u64(j, "start_mono_ns", p->start_ns);
	json_kv_string(j, "step", step);
	json_kv_string(j, "tool", tool_of(p));
	json_kv_bool(j, "preexisting", false);
	json_object_end(j);
}

/* The run's TL_RUN: the steps that started or ended since the last, the new processes, the failures. */
static void run_record(struct fleet *f, struct host *h)
{
	char id[24];

	run_open(f, h);
	for (uint32_t k = 0; k < f->njobs; k++)
		if (h->jobs[k].fresh) {
			run_element(f, h, "steps");
			write_step(f, &h->jobs[k], false);
		}
	for (uint32_t k = 0; k < h->ngone; k++) {
		run_element(f, h, "steps");
		write_step(f, &h->gone[k], true);
	}
	if (!h->root_sent) {
		run_element(f, h, "processes_attributed");
		write_attr(&f->j, &h->root, NULL);
		h->root_sent = true;
	}
	for (uint32_t k = 0; k < f->njobs + h->ngone; k++) {
		struct job *jb = k < f->njobs ? &h->jobs[k] : &h->gone[k - f->njobs];

		if (!jb->fresh) /* a job that ended before its first TL_RUN (a late look) is attributed in its last */
			continue;
		step_id(jb, id);
		for (int q = 0; q < 3; q++) {
			run_element(f, h, "processes_attributed");
			write_attr(&f->j, &jb->p[q], id);
		}
		jb->fresh = false;
	}
	for (uint32_t k = 0; k < h->ngone; k++) {
		const struct job *jb = &h->gone[k];

		if (!jb->fail)
			continue;
		step_id(jb, id);
		run_element(f, h, "signals");
		json_object_begin(&f->j);
		json_kv_string(&f->j, "kind", "failed");
		json_kv_u64(&f->j, "pid", jb->p[0].tgid);
		json_kv_u64(&f->j, "start_mono_ns", jb->p[0].start_ns);
		json_kv_string(&f->j, "step", id);
		json_kv_string(&f->j, "tool", tool_of(&jb->p[0]));
		json_kv_u64(&f->j, "exit_code", 1);
		json_object_end(&f->j);
	}
	h->ngone = 0;
	run_close(f, h);
}

/* The host's heartbeat over [its previous beat, now), written by report/hostbeat.c. */
static void beat_record(struct fleet *f, struct host *h)
{
	struct hostbeat b;
	uint64_t end = real_of(f, f->now), dt = end - h->beat_start_real_ns, busy = 0, used = h->root.rss;

	for (uint32_t k = 0; k < f->njobs; k++)
		for (int q = 0; q < 3; q++) {
			busy += dt * h->jobs[k].p[q].cpu_milli / 1000;
			used += h->jobs[k].p[q].rss;
		}
	busy = busy < HOST_CPUS * dt ? busy : HOST_CPUS * dt;
	memset(&b, 0, sizeof(b));
	b.beat = ++h->beats;
	memcpy(b.boot_id, h->boot_hex, sizeof(b.boot_id));
	b.start_ns = h->beat_start_real_ns;
	b.end_ns = end;
	b.uptime_known = true;
	b.uptime_ns = HOST_UPTIME0_NS + (f->now - f->t0);
	b.cpus_known = true;
	b.cpus = HOST_CPUS;
	b.cpu_known = true;
	b.cpu_busy_ns = busy;
	b.cpu_idle_ns = HOST_CPUS * dt - busy;
	b.mem_total_known = b.mem_used_known = true;
	b.mem_total_bytes = HOST_MEMORY;
	b.mem_used_bytes = used < HOST_MEMORY ? used : HOST_MEMORY;
	b.net_known = true;
	b.runs = 1;
	b.steps = f->njobs;
	b.processes = 1 + 3ULL * f->njobs;
	b.host = &h->hw;
	f->o.len = 0;
	f->o.err = 0;
	if (hostbeat_write(&f->o, &b)) {
		fprintf(stderr, "<3>a heartbeat does not fit in %u bytes\n", TL_RUN_MAX);
		exit(2);
	}
	rec_add(f, h, TL_HOST, 0, f->o.buf, (uint32_t)f->o.len);
	h->beat_start_real_ns = end;
}

/* ---- a host's records, at each look -------------------------------------- */

static void next_end(struct fleet *f, struct host *h)
{
	h->next_end_ns = UINT64_MAX;
	for (uint32_t k = 0; k < f->njobs; k++)
		if (h->jobs[k].end_ns < h->next_end_ns)
			h->next_end_ns = h->jobs[k].end_ns;
}

static struct sp *slot(struct host *h, uint32_t s)
{
	return s == 0 ? &h->root : &h->jobs[(s - 1) / 3].p[(s - 1) % 3];
}

static void host_start(struct fleet *f, struct host *h)
{
	start_root(f, h);
	for (uint32_t k = 0; k < f->njobs; k++) {
		start_job(f, h, &h->jobs[k]);
		/* the first jobs are in the middle of their lives: they end at any time within one */
		h->jobs[k].end_ns = f->now + rnd(f) % (h->jobs[k].end_ns - f->now) + 1;
	}
	next_end(f, h);
	h->started = true;
	h->sample_next_ns = f->now;
	h->run_next_ns = f->now;
	h->beat_next_ns = f->now + (uint64_t)f->heartbeat_s * NS;
	h->beat_start_real_ns = real_of(f, f->now);
}

static void host_make(struct fleet *f, struct host *h)
{
	uint64_t now = f->now;

	if (!h->started) {
		if (now < f->t0 + h->phase_ns)
			return;
		host_start(f, h);
	}
	while (h->next_end_ns <= now) {
		for (uint32_t k = 0; k < f->njobs; k++) {
			struct job *jb = &h->jobs[k];

			if (jb->end_ns > now)
				continue;
			if (h->ngone == f->njobs) /* TL_RUN overdue (a look came seconds late): write it now */
				run_record(f, h);
			exit_of(f, h, &jb->p[1], 0);
			exit_of(f, h, &jb->p[2], jb->fail ? 1u << 8 : 0);
			exit_of(f, h, &jb->p[0], jb->fail ? 1u << 8 : 0);
			h->gone[h->ngone++] = *jb;
			start_job(f, h, jb);
		}
		next_end(f, h);
	}
	/* samples: slot s of the nprocs is due at phase + s / nprocs of each second */
	while (h->sample_next_ns <= now) {
		if (now - h->sample_next_ns > f->late_max_ns)
			f->late_max_ns = now - h->sample_next_ns;
		sample(f, h, slot(h, h->sample_cursor));
		if (++h->sample_cursor == f->nprocs) {
			h->sample_cursor = 0;
			h->sample_cycle++;
		}
		h->sample_next_ns = f->t0 + h->phase_ns + h->sample_cycle * NS + h->sample_cursor * NS / f->nprocs;
	}
	if (h->run_next_ns <= now) {
		run_record(f, h);
		while (h->run_next_ns <= now)
			h->run_next_ns += RUN_RECORD_NS;
	}
	if (h->beat_next_ns <= now) {
		beat_record(f, h); /* a look that came late: one beat covers the gap, as the processor's */
		while (h->beat_next_ns <= now)
			h->beat_next_ns += (uint64_t)f->heartbeat_s * NS;
	}
}

/* ---- delivery --------------------------------------------------------------- */

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct host *h = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	char v[64];

	if (len > sizeof(name) - 1 && len - (sizeof(name) - 1) < sizeof(v) && !strncasecmp(buf, name, sizeof(name) - 1)) {
		memcpy(v, buf + sizeof(name) - 1, len - (sizeof(name) - 1));
		v[len - (sizeof(name) - 1)] = 0;
		h->retry_after_ns = upload_parse_retry_after(v, (int64_t)time(NULL));
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct host *h = arg;
	size_t len = size * n, keep = REPLY_KEEP - h->reply_len;

	keep = len < keep ? len : keep;
	memcpy(h->reply + h->reply_len, buf, keep);
	h->reply_len += keep;
	h->reply[h->reply_len] = 0;
	return len;
}

static void host_curl(struct host *h)
{
	CURL *e = curl_easy_init();
	bool bad = !e;

	/* a source address of its own, as a real host has: the ingests' per-address limit sees one connection each */
	snprintf(h->addr, sizeof(h->addr), "host!127.%u.%u.%u", 100 + (h->index >> 16), (h->index >> 8) & 0xff,
		 h->index & 0xff);
	bad = bad || curl_easy_setopt(e, CURLOPT_PRIVATE, h) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_HEADERDATA, h) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_WRITEDATA, h) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, TRANSFER_TIMEOUT_MS) != CURLE_OK;
	bad = bad || curl_easy_setopt(e, CURLOPT_INTERFACE, h->addr) != CURLE_OK;
	if (bad) {
		fprintf(stderr, "<3>libcurl refused an option\n");
		exit(2);
	}
	h->easy = e;
}

/* --dump: the batch as sealed, into its own file. */
static void dump_batch(const struct fleet *f, const struct host *h)
{
	char path[4096];
	FILE *out;

	snprintf(path, sizeof(path), "%s/%06u-%06llu.batch", f->dump, h->index, (unsigned long long)h->b.batch_seq);
	out = fopen(path, "we");
	if (!out || fwrite(h->wire, 1, h->wire_len, out) != h->wire_len || fclose(out)) {
		fprintf(stderr, "<3>--dump %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

/* Seal the first records waiting into the host's next batch, as upload.c's batch_size() and seal_into(). */
static void seal(struct fleet *f, struct host *h)
{
	uint32_t max = h->n >= 2 * BATCH_RECORDS ? BACKLOG_FACTOR * BATCH_RECORDS : BATCH_RECORDS, n = 0;
	size_t off = 0, need;
	char hex[2 * BATCH_HASH_LEN + 1];
	struct curl_slist *l;
	int rc;

	while (n < h->n && n < max) {
		struct tr_frame fr;
		size_t size;

		memcpy(&fr, h->frames + off, sizeof(fr));
		size = TR_FRAME_SIZE(fr.len);

		if (n && off + size > BATCH_FRAME_BYTES)
			break;
		off += size;
		n++;
	}
	need = batch_max_wire(off);
	if (need > h->wire_cap) {
		free(h->wire);
		h->wire = malloc(need);
		if (!h->wire) {
			fprintf(stderr, "<3>out of memory\n");
			exit(2);
		}
		h->wire_cap = need;
	}
	memset(&h->b, 0, sizeof(h->b));
	h->b.batch_seq = h->batch_seq + 1;
	h->b.first_seq = h->next_seq - h->n;
	h->b.last_seq = h->b.first_seq + n - 1;
	h->b.nrecords = n;
	h->b.created_ns = clock_ns(CLOCK_REALTIME);
	h->b.mono_to_real_ns = f->mono_to_real;
	h->b.compression = BATCH_COMP_ZLIB;
	h->b.stream = h->stream;
	memcpy(h->b.prev_hash, h->prev_hash, sizeof(h->prev_hash));
	rc = batch_seal(&h->key, &h->id, &h->b, h->frames, off, h->wire, h->wire_cap, &h->wire_len, h->hash);
	if (rc) {
		fprintf(stderr, "<3>host %u: sealing a batch: %s\n", h->index, batch_strerror(rc));
		exit(2);
	}
	h->inflight_n = n;
	h->inflight_len = off;
	if (f->dump)
		dump_batch(f, h);
	sodium_bin2hex(hex, sizeof(hex), h->hash, sizeof(h->hash));
	curl_slist_free_all(h->headers);
	h->headers = NULL;
	{
		char idem[32 + sizeof(hex)];

		snprintf(idem, sizeof(idem), "Idempotency-Key: %s", hex);
		l = curl_slist_append(NULL, "Content-Type: application/octet-stream");
		h->headers = l;
		l = l ? curl_slist_append(l, "Expect:") : NULL; /* no 100-continue round trip */
		l = l ? curl_slist_append(l, idem) : NULL;
	}
	if (!l) {
		fprintf(stderr, "<3>out of memory\n");
		exit(2);
	}
}

static void send_batch(struct fleet *f, struct host *h)
{
	h->reply_len = 0;
	h->reply[0] = 0;
	h->retry_after_ns = 0;
	h->errbuf[0] = 0;
	if (curl_easy_setopt(h->easy, CURLOPT_URL, f->urls[h->in_use]) != CURLE_OK ||
	    curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers) != CURLE_OK ||
	    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, h->wire) != CURLE_OK ||
	    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)h->wire_len) != CURLE_OK ||
	    curl_multi_add_handle(f->multi, h->easy) != CURLM_OK) {
		fprintf(stderr, "<3>host %u: libcurl cannot start a transfer\n", h->index);
		exit(2);
	}
	h->state = H_SENDING;
	f->attempts++;
}

static bool batch_due(const struct host *h, uint64_t now)
{
	return h->n >= BATCH_RECORDS || (h->n && now - h->made[0] >= BATCH_INTERVAL_NS);
}

/* The batch's records leave the spool: acknowledged, or refused for good. */
static void batch_done(struct fleet *f, struct host *h)
{
	h->batch_seq = h->b.batch_seq;
	memcpy(h->prev_hash, h->hash, sizeof(h->prev_hash));
	memmove(h->frames, h->frames + h->inflight_len, h->len - h->inflight_len);
	h->len -= h->inflight_len;
	f->backlog_bytes -= h->inflight_len;
	memmove(h->made, h->made + h->inflight_n, (h->n - h->inflight_n) * sizeof(*h->made));
	h->n -= h->inflight_n;
	h->inflight_n = 0;
	h->inflight_len = 0;
	h->state = H_IDLE;
	if (batch_due(h, f->now)) {
		seal(f, h);
		send_batch(f, h);
	}
}

static void acked(struct fleet *f, struct host *h)
{
	static const char dup[] = "{\"status\":\"duplicate\""; /* an ingest had stored it (ingest/ingest.c) */

	for (uint32_t i = 0; i < h->inflight_n; i++) {
		uint64_t b = (f->now - h->made[i]) / LAG_BUCKET_NS;

		f->lag[b < LAG_BUCKETS ? b : LAG_BUCKETS - 1]++;
	}
	if (!strncmp(h->reply, dup, sizeof(dup) - 1))
		f->dup_replies++;
	h->targets[h->in_use].fails = 0;
	h->batches_acked++;
	h->acked_seq = h->b.last_seq;
	f->batches++;
	f->acked += h->inflight_n;
	f->bytes_sent += h->wire_len;
	f->last_ack_ns = f->now;
	batch_done(f, h);
}

/*
 * The URL in use did not take the batch: it rests for its backoff (at
 * least Retry-After), and the batch goes at once to the next URL whose
 * rest is over, in the list's order, or else waits for the one whose rest
 * ends first (delivery/upload.c's fail_over()).
 */
static void fail_over(struct fleet *f, struct host *h)
{
	struct target *t = &h->targets[h->in_use];
	uint64_t ceiling = upload_backoff_ceiling(RETRY_BASE_NS, RETRY_MAX_NS, t->fails);
	uint64_t delay = rnd(f) % (ceiling + 1); /* full jitter */
	unsigned next = h->in_use;

	if (delay < h->retry_after_ns)
		delay = h->retry_after_ns;
	t->fails++;
	t->rest_until_ns = f->now + delay;
	for (unsigned i = 1; i <= f->nurls; i++) {
		unsigned k = (h->in_use + i) % f->nurls;

		if (h->targets[k].rest_until_ns <= f->now) {
			next = k;
			break;
		}
		if (h->targets[k].rest_until_ns < h->targets[next].rest_until_ns)
			next = k;
	}
	f->failovers += next != h->in_use;
	h->in_use = next;
	f->retries++;
	h->next_attempt_ns = h->targets[next].rest_until_ns > f->now ? h->targets[next].rest_until_ns : f->now;
	h->state = H_WAITING;
}

static void finished(struct fleet *f, struct host *h, CURLcode res)
{
	long status = 0;

	curl_multi_remove_handle(f->multi, h->easy);
	if (res != CURLE_OK) {
		if (f->net_errors++ == 0)
			fprintf(stderr, "<5>first network error: host %u to %s: %s\n", h->index, f->urls[h->in_use],
				h->errbuf[0] ? h->errbuf : curl_easy_strerror(res));
		fail_over(f, h);
		return;
	}
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		acked(f, h);
		return;
	}
	if (status >= 400 && status < 500 && status != 408 && status != 425 && status != 429) {
		if (f->refused_batches++ == 0)
			fprintf(stderr, "<3>host %u: %s refused batch %llu for good: HTTP %ld: %s\n", h->index,
				f->urls[h->in_use], (unsigned long long)h->b.batch_seq, status, h->reply);
		f->refused_records += h->inflight_n;
		h->targets[h->in_use].fails = 0; /* it answered: the batch is at fault, not the URL */
		batch_done(f, h);
		return;
	}
	if (status == 503)
		f->http_503++;
	else if (status >= 500)
		f->http_5xx++;
	else
		f->http_other++; /* 1xx, 3xx, 408, 425, 429: retried as upload.c does */
	fail_over(f, h);
}

/* ---- results ------------------------------------------------------------------ */

/* The upper edge of the bucket holding the nearest-rank q-quantile of the lags, in seconds. */
static double lag_quantile(const struct fleet *f, double q)
{
	uint64_t total = 0, rank, seen = 0;

	for (uint32_t b = 0; b < LAG_BUCKETS; b++)
		total += f->lag[b];
	if (!total)
		return 0;
	rank = (uint64_t)(q * (double)total);
	rank = rank < 1 ? 1 : rank > total ? total : rank;
	if ((double)rank < q * (double)total)
		rank++;
	for (uint32_t b = 0; b < LAG_BUCKETS; b++) {
		seen += f->lag[b];
		if (seen >= rank)
			return (double)((b + 1) * LAG_BUCKET_NS) / 1e9;
	}
	return (double)LAG_BUCKETS * LAG_BUCKET_NS / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static void write_sent(const struct fleet *f, const char *path)
{
	FILE *out = fopen(path, "w");
	char hex[2 * BATCH_HOST_ID_LEN + 1];

	if (!out) {
		fprintf(stderr, "<3>%s: %s\n", path, strerror(errno));
		exit(2);
	}
	for (uint32_t i = 0; i < f->hosts; i++) {
		const struct host *h = &f->h[i];

		sodium_bin2hex(hex, sizeof(hex), h->id.host_id, sizeof(h->id.host_id));
		fprintf(out, "%s %llu %llu %llu %llu\n", hex, (unsigned long long)h->stream,
			(unsigned long long)(h->next_seq - 1), (unsigned long long)h->batches_acked,
			(unsigned long long)h->acked_seq);
	}
	if (fclose(out)) {
		fprintf(stderr, "<3>%s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static void print_results(const struct fleet *f, uint64_t undelivered, double cpu)
{
	uint64_t end = f->last_ack_ns > f->t0 ? f->last_ack_ns : f->t0 + 1;
	double window = (double)(end - f->t0) / 1e9;
	double drain = f->last_ack_ns > f->gen_end ? (double)(f->last_ack_ns - f->gen_end) / 1e9 : 0;

	printf("fleet.hosts %u hosts\n", f->hosts);
	printf("fleet.records_per_s %.0f rec/s\n", (double)f->acked / window);
	printf("fleet.lag_p99_s %.3f s\n", lag_quantile(f, 0.99));
	printf("fleet.lag_p50_s %.3f s\n", lag_quantile(f, 0.50));
	printf("fleet.lag_max_s %.3f s\n", lag_quantile(f, 1.0));
	printf("fleet.procs_per_host %u procs\n", f->nprocs);
	printf("fleet.live_processes %llu procs\n", (unsigned long long)f->hosts * f->nprocs);
	printf("fleet.seconds %u s\n", f->seconds);
	printf("fleet.ingests %u ingests\n", f->nurls);
	printf("fleet.records %llu rec\n", (unsigned long long)f->made);
	printf("fleet.offered_records_per_s %.0f rec/s\n", (double)f->made / f->seconds);
	printf("fleet.records_acked %llu rec\n", (unsigned long long)f->acked);
	printf("fleet.undelivered %llu rec\n", (unsigned long long)undelivered);
	printf("fleet.batches %llu batches\n", (unsigned long long)f->batches);
	printf("fleet.records_per_batch %.0f rec\n", f->batches ? (double)f->acked / (double)f->batches : 0.0);
	printf("fleet.bytes_per_record %.1f B\n", f->acked ? (double)f->bytes_sent / (double)f->acked : 0.0);
	printf("fleet.duplicate_replies %llu batches\n", (unsigned long long)f->dup_replies);
	printf("fleet.attempts %llu requests\n", (unsigned long long)f->attempts);
	printf("fleet.retries %llu requests\n", (unsigned long long)f->retries);
	printf("fleet.failovers %llu requests\n", (unsigned long long)f->failovers);
	printf("fleet.http_503 %llu replies\n", (unsigned long long)f->http_503);
	printf("fleet.http_5xx_other %llu replies\n", (unsigned long long)f->http_5xx);
	printf("fleet.http_retried_other %llu replies\n", (unsigned long long)f->http_other);
	printf("fleet.net_errors %llu requests\n", (unsigned long long)f->net_errors);
	printf("fleet.refused_batches %llu batches\n", (unsigned long long)f->refused_batches);
	printf("fleet.drain_s %.3f s\n", drain);
	printf("fleet.sim_cpu_cores %.3f cores\n", cpu / window);
	printf("fleet.sim_late_max_s %.3f s\n", (double)f->late_max_ns / 1e9);
	fflush(stdout);
}

/* ---- main ---------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: fleet_sim --enroll --seed HEX\n"
			"       fleet_sim --seed HEX --url URL [--url URL]... --sent FILE [--ready-fd FD] [--dump DIR]\n"
			"environment: HOSTS (1000), PROCS (100), SECONDS (60), HEARTBEAT_S (5), DRAIN_S (300)\n");
	exit(2);
}

static void host_init(struct fleet *f, struct host *h, uint32_t index)
{
	host_keys(f, h, index);
	sodium_bin2hex(h->boot_hex, sizeof(h->boot_hex), h->id.boot_id, sizeof(h->id.boot_id));
	if (getrandom(&h->stream, sizeof(h->stream), 0) != sizeof(h->stream)) {
		fprintf(stderr, "<3>getrandom: %s\n", strerror(errno));
		exit(2);
	}
	h->stream &= STREAM_MASK;
	h->stream += h->stream == 0;
	snprintf(h->hw.cloud, sizeof(h->hw.cloud), "aws");
	snprintf(h->hw.instance_type, sizeof(h->hw.instance_type), "m6i.8xlarge");
	snprintf(h->hw.instance_id, sizeof(h->hw.instance_id), "i-%02x%02x%02x%02x%02x%02x%02x%02x%x", h->id.host_id[0],
		 h->id.host_id[1], h->id.host_id[2], h->id.host_id[3], h->id.host_id[4], h->id.host_id[5],
		 h->id.host_id[6], h->id.host_id[7], h->id.host_id[8] & 0xf);
	snprintf(h->hw.region, sizeof(h->hw.region), "us-east-1");
	h->hw.cloud_from = h->hw.instance_type_from = HOSTID_FROM_DMI;
	h->hw.cpus = HOST_CPUS;
	h->hw.memory_bytes = HOST_MEMORY;
	h->hw.price_known = true;
	h->hw.price_micro_usd = 1536000; /* m6i.8xlarge on demand, us-east-1 */
	h->phase_ns = rnd(f) % NS;
	h->in_use = index % f->nurls; /* its upload_url list starts there: the hosts are spread over the ingests */
	h->next_pid = FIRST_PID;
	h->next_seq = 1;
	h->jobs = calloc(f->njobs, sizeof(*h->jobs));
	h->gone = calloc(f->njobs, sizeof(*h->gone));
	if (!h->jobs || !h->gone) {
		fprintf(stderr, "<3>out of memory\n");
		exit(2);
	}
	host_curl(h);
}

static void host_free(struct host *h)
{
	curl_easy_cleanup(h->easy);
	curl_slist_free_all(h->headers);
	free(h->jobs);
	free(h->gone);
	free(h->frames);
	free(h->made);
	free(h->wire);
	sodium_memzero(&h->key, sizeof(h->key));
}

/*
 * libcurl's socket interface: it says which sockets to watch, epoll says which are ready, and each
 * event costs one call, whatever the number of transfers in flight (curl_multi_poll() walks them all,
 * which at a thousand hosts waiting for a busy lake took most of the simulator's CPU).
 */
static int on_socket(CURL *e, curl_socket_t s, int what, void *arg, void *socketp)
{
	struct fleet *f = arg;
	struct epoll_event ev = { .data.fd = s };

	(void)e;
	(void)socketp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(f->epfd, EPOLL_CTL_DEL, s, NULL); /* fails only when libcurl closed it: gone from epoll then */
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (epoll_ctl(f->epfd, EPOLL_CTL_MOD, s, &ev) && (errno != ENOENT || epoll_ctl(f->epfd, EPOLL_CTL_ADD, s, &ev))) {
		fprintf(stderr, "<3>epoll_ctl: %s\n", strerror(errno));
		exit(2);
	}
	return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct fleet *f = arg;

	(void)m;
	f->curl_due_ns = timeout_ms < 0 ? UINT64_MAX : clock_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * MS;
	return 0;
}

/* Every transfer libcurl has finished. */
static void transfers_done(struct fleet *f)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(f->multi, &left))) {
		char *priv = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
		f->now = clock_ns(CLOCK_MONOTONIC);
		finished(f, (struct host *)(void *)priv, m->data.result);
	}
}

/* Wait for sockets until deadline (or libcurl's timeout), and hand libcurl what happened. */
static void transfers_wait(struct fleet *f, uint64_t deadline)
{
	struct epoll_event ev[EVENTS_MAX];
	int running, n;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), until = deadline < f->curl_due_ns ? deadline : f->curl_due_ns;

	n = epoll_wait(f->epfd, ev, EVENTS_MAX, until > now ? (int)((until - now + MS - 1) / MS) : 0);
	for (int i = 0; i < n; i++) {
		int flags = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			    (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);

		curl_multi_socket_action(f->multi, ev[i].data.fd, flags, &running);
	}
	if (clock_ns(CLOCK_MONOTONIC) >= f->curl_due_ns) {
		f->curl_due_ns = UINT64_MAX;
		curl_multi_socket_action(f->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	transfers_done(f);
}

/* One look at every host: records due, batches due, retries due. */
static void look(struct fleet *f, bool generate)
{
	for (uint32_t i = 0; i < f->hosts; i++) {
		struct host *h = &f->h[i];

		if (generate)
			host_make(f, h);
		if (h->state == H_IDLE && batch_due(h, f->now)) {
			seal(f, h);
			send_batch(f, h);
		} else if (h->state == H_WAITING && h->next_attempt_ns <= f->now) {
			send_batch(f, h);
		}
	}
}

static bool all_acked(const struct fleet *f, uint64_t *undelivered)
{
	*undelivered = 0;
	for (uint32_t i = 0; i < f->hosts; i++)
		*undelivered += f->h[i].n;
	return *undelivered == 0;
}

static void enroll(struct fleet *f)
{
	char line[256];

	for (uint32_t i = 0; i < f->hosts; i++) {
		struct host h;

		memset(&h, 0, sizeof(h));
		host_keys(f, &h, i);
		if (batch_public_line(&h.key, h.id.host_id, line, sizeof(line))) {
			fprintf(stderr, "<3>a public key line does not fit\n");
			exit(2);
		}
		printf("%s\n", line);
		sodium_memzero(&h.key, sizeof(h.key));
	}
	if (fflush(stdout)) {
		fprintf(stderr, "<3>stdout: %s\n", strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "enroll", no_argument, NULL, 'e' },
					      { "seed", required_argument, NULL, 's' },
					      { "url", required_argument, NULL, 'u' },
					      { "sent", required_argument, NULL, 'o' },
					      { "ready-fd", required_argument, NULL, 'r' },
					      { "dump", required_argument, NULL, 'd' },
					      { NULL, 0, NULL, 0 } };
	struct fleet f;
	const char *sent = NULL, *seed = NULL;
	bool do_enroll = false;
	int ready_fd = -1, c;
	uint64_t undelivered = 0, next_look;
	double cpu0;

	memset(&f, 0, sizeof(f));
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e': do_enroll = true; break;
		case 's': seed = optarg; break;
		case 'u':
			if (f.nurls == UPLOAD_URLS_MAX)
				usage();
			f.urls[f.nurls++] = optarg;
			break;
		case 'o': sent = optarg; break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'd': f.dump = optarg; break;
		default: usage();
		}
	}
	if (optind != argc || !seed || (!do_enroll && (!f.nurls || !sent)))
		usage();
	if (batch_crypto_init() || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "<3>libsodium or libcurl failed to initialise\n");
		exit(2);
	}
	if (strlen(seed) != 2 * sizeof(f.seed) ||
	    sodium_hex2bin(f.seed, sizeof(f.seed), seed, strlen(seed), NULL, NULL, NULL) != 0) {
		fprintf(stderr, "<3>--seed %s: want %zu hex digits\n", seed, 2 * sizeof(f.seed));
		exit(2);
	}
	f.hosts = env_u32("HOSTS", 1000, 1, 65536);
	f.njobs = (env_u32("PROCS", 100, 4, 30001) - 1) / 3;
	f.nprocs = 1 + 3 * f.njobs;
	f.seconds = env_u32("SECONDS", 60, 1, 3600);
	f.heartbeat_s = env_u32("HEARTBEAT_S", 5, 1, 3600);
	f.drain_s = env_u32("DRAIN_S", 300, 1, 3600);
	if (do_enroll) {
		enroll(&f);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	/*
	 * batch_seal's compress2() allocates zlib's state (~270 KB) and frees it, a thousand times a second
	 * here: without these glibc gives the top of the heap back each time (brk, a TLB flush on every CPU),
	 * which took a third of the simulator's CPU.
	 */
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	memcpy(&f.rng, f.seed, sizeof(f.rng));
	f.rng |= 1;
	f.lag = calloc(LAG_BUCKETS, sizeof(*f.lag));
	f.h = calloc(f.hosts, sizeof(*f.h));
	f.multi = curl_multi_init();
	if (!f.lag || !f.h || !f.multi) {
		fprintf(stderr, "<3>out of memory\n");
		exit(2);
	}
	f.epfd = epoll_create1(EPOLL_CLOEXEC);
	f.curl_due_ns = UINT64_MAX;
	if (f.epfd < 0 || curl_multi_setopt(f.multi, CURLMOPT_SOCKETFUNCTION, on_socket) != CURLM_OK ||
	    curl_multi_setopt(f.multi, CURLMOPT_SOCKETDATA, &f) != CURLM_OK ||
	    curl_multi_setopt(f.multi, CURLMOPT_TIMERFUNCTION, on_timer) != CURLM_OK ||
	    curl_multi_setopt(f.multi, CURLMOPT_TIMERDATA, &f) != CURLM_OK ||
	    /* every host's connection to every ingest stays open between its batches */
	    curl_multi_setopt(f.multi, CURLMOPT_MAXCONNECTS, (long)f.hosts * f.nurls) != CURLM_OK) {
		fprintf(stderr, "<3>epoll or libcurl's multi interface cannot be set up\n");
		exit(2);
	}
	obuf_init_mem(&f.o, TL_RUN_MAX);
	for (uint32_t i = 0; i < f.hosts; i++)
		host_init(&f, &f.h[i], i);
	f.mono_to_real = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
	fprintf(stderr, "<7>fleet_sim: %u hosts x %u processes, %u s, %u ingests, heartbeat %u s\n", f.hosts,
		f.nprocs, f.seconds, f.nurls, f.heartbeat_s);
	cpu0 = cpu_s();
	f.t0 = f.now = clock_ns(CLOCK_MONOTONIC);
	f.gen_end = f.t0 + (uint64_t)f.seconds * NS;
	if (ready_fd >= 0) {
		if (write(ready_fd, "generating\n", 11) != 11)
			fprintf(stderr, "<4>--ready-fd %d: %s\n", ready_fd, strerror(errno));
		close(ready_fd);
	}
	next_look = f.now;
	for (;;) {
		f.now = clock_ns(CLOCK_MONOTONIC);
		if (f.now >= next_look) {
			bool generate = f.now < f.gen_end;

			if (!generate && all_acked(&f, &undelivered))
				break;
			if (!generate && f.now >= f.gen_end + (uint64_t)f.drain_s * NS) {
				fprintf(stderr, "<3>not delivered within DRAIN_S=%u s: %llu records\n", f.drain_s,
					(unsigned long long)undelivered);
				f.broken = true;
				break;
			}
			look(&f, generate);
			if (f.backlog_bytes > BACKLOG_BYTES_MAX) {
				all_acked(&f, &undelivered);
				fprintf(stderr, "<3>the lake is %llu records (%llu MiB of frames) behind: stopping\n",
					(unsigned long long)undelivered, (unsigned long long)(f.backlog_bytes >> 20));
				f.broken = true;
				break;
			}
			next_look += LOOK_NS;
			if (next_look < f.now)
				next_look = f.now + LOOK_NS;
		}
		transfers_wait(&f, next_look);
	}
	print_results(&f, undelivered, cpu_s() - cpu0);
	if (f.refused_batches) {
		fprintf(stderr, "<3>%llu batches (%llu records) refused for good: the lake does not have them\n",
			(unsigned long long)f.refused_batches, (unsigned long long)f.refused_records);
		f.broken = true;
	}
	write_sent(&f, sent);
	for (uint32_t i = 0; i < f.hosts; i++) {
		if (f.h[i].state == H_SENDING)
			curl_multi_remove_handle(f.multi, f.h[i].easy);
		host_free(&f.h[i]);
	}
	curl_multi_cleanup(f.multi);
	close(f.epfd);
	curl_global_cleanup();
	obuf_free(&f.o);
	free(f.h);
	free(f.lag);
	return f.broken ? 1 : 0;
}
