/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Delivery benchmark's producer (make bench-delivery, bench/delivery.sh):
 * plays tracer-collector so that the record rate is not limited by how
 * fast this machine can fork. It creates the shared ring exactly as the
 * collector does (ring_producer_create, the default order), serves it on
 * a Unix socket to the processor's uid only (handover_listen with mode
 * 0666, ring_handover_send with the SO_PEERCRED check, the connection kept
 * open so that the processor sees end-of-file when we exit), then writes
 * kernel records built with records/encode.h for --seconds, flat out or
 * at --rate records/s.
 *
 * The records are those of a pipeline's processes: each simulated process
 * is forked, execs a tool (path, argv, cwd, an allowlisted environment
 * string), is sampled SAMPLES_PER_PROC times, opens FILES_PER_PROC files,
 * and exits; PROC_SLOTS of them are alive at once and advance in turn, so
 * records of different processes interleave as they do in the kernel's
 * buffer. Per process: 1 fork, 1 exec, 12 samples, 6 files, 1 exit, so
 * samples and files are 86% of the records. Cgroup records (one per
 * cgroup id) come first, TR_COUNTERS once a second, TR_END at the end,
 * as the collector writes them.
 *
 * Every record's hdr.ts_ns is CLOCK_MONOTONIC when it is written into the
 * ring (the lake keeps it: the end-to-end latency is measured from it).
 * Nothing is ever dropped: when the ring is full the producer notifies and
 * sleeps WAIT_SLEEP_NS until the processor releases room (it releases only
 * what is durable in its spool), and counts the time it waited.
 *
 * Once the end record is written it waits (up to --drain-timeout) until
 * the processor has released everything, i.e. every record is durable in
 * the spool, then prints its figures as "<metric> <value> <unit>" lines
 * (DESIGN.md) and exits; with --linger it first stays, ring and
 * connection kept, until SIGTERM: a processor whose collector leaves
 * detaches from the ring, and the benchmark wants the daemon as it runs
 * with a live collector. Exit status: 0, 1 when the processor did not
 * attach or did not drain in time, 2 on a usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"
#include "handover.h"
#include "records.h"
#include "ring.h"

#define PROC_SLOTS 256           /* simulated processes alive at once */
#define SAMPLES_PER_PROC 12
#define FILES_PER_PROC 6
#define CGROUPS 8
#define NOTIFY_EVERY 64          /* records between ring_notify calls, as a collector drain batch */
#define WAIT_SLEEP_NS 50000L     /* ring full: sleep this long before looking again */
#define RATE_TICK_NS 1000000L    /* rate-limited: write what is due every 1 ms */
#define COUNTERS_INTERVAL_NS 1000000000ULL
#define REC_BUF 8192
#define NS 1000000000ULL

struct options {
	const char *socket_path;
	uid_t consumer_uid;
	unsigned ring_order;
	double seconds;
	uint64_t rate;           /* records/s; 0: as fast as the ring takes them */
	unsigned attach_timeout; /* s */
	unsigned drain_timeout;  /* s */
	bool linger;             /* after the results, keep serving until SIGTERM */
};

/* One simulated process's life: where it is and its growing counters. */
struct sim_proc {
	uint32_t tgid;
	uint64_t start_ns;
	unsigned step;           /* 0 fork, 1 exec, then samples and files, then exit */
	unsigned tool;
	unsigned sample_no, file_no;
	uint64_t runtime_ns, rchar;
};

struct producer {
	const struct options *o;
	struct ring_producer ring;
	int listen_fd, conn_fd;
	struct sim_proc procs[PROC_SLOTS];
	unsigned cursor;
	uint32_t next_tgid;
	uint64_t next_proc_no;
	/* totals */
	uint64_t written, bytes, by_type[TR_TYPES_END];
	uint64_t wait_ns, waits;
	uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC of the first and last record */
	uint64_t first_real_ns;     /* CLOCK_REALTIME of the first record */
	unsigned char buf[REC_BUF];
};

/* The tools of a small bioinformatics pipeline: path and argv patterns (%u: the process number). */
struct tool {
	const char *path;
	const char *argv[10];
};

static const struct tool tools[] = {
	{ "/usr/bin/bwa", { "bwa", "mem", "-t", "8", "-R", "@RG\\tID:s%u\\tSM:s%u", "/data/ref/GRCh38.fa",
			    "/data/run42/sample_%u_R1.fq.gz", "/data/run42/sample_%u_R2.fq.gz", NULL } },
	{ "/usr/bin/samtools", { "samtools", "sort", "-@", "4", "-m", "2G", "-o", "/scratch/sorted_%u.bam",
				 "/scratch/aligned_%u.bam", NULL } },
	{ "/usr/bin/samtools", { "samtools", "index", "/scratch/sorted_%u.bam", NULL } },
	{ "/usr/bin/gzip", { "gzip", "-d", "-c", "/data/run42/sample_%u_R1.fq.gz", NULL } },
	{ "/usr/bin/python3", { "python3", "/opt/pipeline/bin/qc_report.py", "--sample", "s%u", "--in",
				"/scratch/sorted_%u.bam", "--out", "/results/qc/s%u.json", NULL } },
	{ "/bin/bash", { "bash", "-ue", ".command.sh", NULL } },
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static const char *const file_patterns[] = {
	"/data/run42/sample_%u_R1.fq.gz",
	"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
	"/scratch/work/5e/%u/.command.sh",
	"/scratch/sorted_%u.bam",
	"/data/ref/GRCh38.fa.bwt",
	"/tmp/samtools.%u.0042.tmp.bam",
};
#define NFILES (sizeof(file_patterns) / sizeof(file_patterns[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: delivery_bench --socket PATH --consumer-uid UID [--seconds S] [--rate N]\n"
		   "                      [--ring-order N] [--attach-timeout S] [--drain-timeout S] [--linger]\n"
		   "Plays tracer-collector for the delivery benchmark: serves a shared ring on PATH to\n"
		   "the processor running as UID, then writes pipeline-like kernel records for S seconds\n"
		   "(default 20), at N records/s (default 0: as fast as the ring takes them), never\n"
		   "dropping one, and waits until the processor has released (made durable) all of them.\n"
		   "--linger: then keep the ring and the connection, as a live collector does, until\n"
		   "SIGTERM or SIGINT. Must run as the uid the processor expects of its collector (root).\n");
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > max ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "consumer-uid", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, 'r' },
		{ "ring-order", required_argument, NULL, 'o' },
		{ "attach-timeout", required_argument, NULL, 'a' },
		{ "drain-timeout", required_argument, NULL, 'D' },
		{ "linger", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	char *end;
	int c;

	*o = (struct options){ .consumer_uid = (uid_t)-1, .ring_order = RING_DEFAULT_ORDER, .seconds = 20,
			       .attach_timeout = 30, .drain_timeout = 600 };
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->socket_path = optarg; break;
		case 'c':
			if (parse_u64(optarg, 0xfffffffe, &v))
				return -1;
			o->consumer_uid = (uid_t)v;
			break;
		case 'd':
			o->seconds = strtod(optarg, &end);
			if (*end || !(o->seconds > 0 && o->seconds <= 86400))
				return -1;
			break;
		case 'r':
			if (parse_u64(optarg, 100000000, &o->rate))
				return -1;
			break;
		case 'o':
			if (parse_u64(optarg, RING_MAX_ORDER, &v) || v < RING_MIN_ORDER)
				return -1;
			o->ring_order = (unsigned)v;
			break;
		case 'a':
			if (parse_u64(optarg, 3600, &v) || v == 0)
				return -1;
			o->attach_timeout = (unsigned)v;
			break;
		case 'D':
			if (parse_u64(optarg, 86400, &v) || v == 0)
				return -1;
			o->drain_timeout = (unsigned)v;
			break;
		case 'l': o->linger = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	return o->socket_path && o->consumer_uid != (uid_t)-1 && optind == argc ? 0 : -1;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = ns / (long)NS, .tv_nsec = ns % (long)NS };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* Records                                                            */
/* ------------------------------------------------------------------ */

static void proc_start(struct producer *pr, struct sim_proc *s)
{
	*s = (struct sim_proc){ .tgid = pr->next_tgid, .start_ns = ring_now_ns(),
				.tool = (unsigned)(pr->next_proc_no % NTOOLS) };
	pr->next_proc_no++;
	/* pids 10000..3999999, never 0, within the decoder's limit */
	pr->next_tgid = pr->next_tgid >= 3999999 ? 10000 : pr->next_tgid + 1;
}

/* pattern with every "%u" replaced by n, into out (cap bytes, truncated if need be). */
static void fill(char *out, size_t cap, const char *pattern, unsigned n)
{
	char num[16];
	size_t o = 0, nl = (size_t)snprintf(num, sizeof(num), "%u", n);

	for (const char *c = pattern; *c && o + 1 < cap; c++) {
		if (c[0] == '%' && c[1] == 'u') {
			for (size_t i = 0; i < nl && o + 1 < cap; i++)
				out[o++] = num[i];
			c++;
		} else {
			out[o++] = *c;
		}
	}
	out[o] = 0;
}

/* An exec of s's tool, its number in the arguments, into pr->buf; returns its length. */
static size_t build_exec(struct producer *pr, const struct sim_proc *s, uint64_t ts)
{
	const struct tool *t = &tools[s->tool];
	char strings[10][160], cwd[96];
	const char *args[11];
	const char *env[] = { "SLURM_JOB_ID=4821377", NULL };
	unsigned n = 0;

	for (; t->argv[n]; n++) {
		fill(strings[n], sizeof(strings[n]), t->argv[n], s->tgid);
		args[n] = strings[n];
	}
	args[n] = NULL;
	fill(cwd, sizeof(cwd), "/scratch/work/5e/%u", s->tgid);
	return encode_exec_ctx(pr->buf, sizeof(pr->buf), ts, s->tgid, 4242, s->start_ns, t->path, args, cwd, env);
}

static size_t build_file(struct producer *pr, struct sim_proc *s, uint64_t ts)
{
	char path[160];
	unsigned k = (s->file_no + s->tool) % NFILES;

	fill(path, sizeof(path), file_patterns[k], s->tgid);
	s->file_no++;
	return encode_file(pr->buf, sizeof(pr->buf), ts, s->tgid, s->start_ns,
			   k == 3 || k == 5 ? TR_FILE_READ | TR_FILE_WRITE : TR_FILE_READ, path);
}

static size_t build_sample(struct producer *pr, struct sim_proc *s, uint64_t ts)
{
	struct tr_sample x;

	s->sample_no++;
	s->runtime_ns += 970000000ULL;
	s->rchar += 48ULL << 20;
	x = encode_sample(ts, s->tgid, s->start_ns, 4242, s->runtime_ns, (512ULL + 64 * s->sample_no) << 20, s->rchar);
	x.utime_ns = s->runtime_ns - s->runtime_ns / 10;
	x.stime_ns = s->runtime_ns / 10;
	x.read_bytes = s->rchar / 2;
	x.cgroup_id = 100 + s->tgid % CGROUPS;
	memcpy(x.comm, tools[s->tool].argv[0], strnlen(tools[s->tool].argv[0], TR_COMM_LEN - 1));
	memcpy(pr->buf, &x, sizeof(x));
	return sizeof(x);
}

/*
 * The next record of the slot under the cursor, into pr->buf: its type and
 * length. Samples and files alternate two to one between exec and exit.
 */
static size_t next_record(struct producer *pr, uint64_t ts, unsigned *type)
{
	struct sim_proc *s = &pr->procs[pr->cursor];
	unsigned body = SAMPLES_PER_PROC + FILES_PER_PROC;
	size_t len;

	pr->cursor = (pr->cursor + 1) % PROC_SLOTS;
	if (s->step == 0) {
		struct tr_fork f = encode_fork(ts, 4242, 1000, s->tgid, s->start_ns);

		memcpy(pr->buf, &f, sizeof(f));
		*type = TR_FORK;
		len = sizeof(f);
	} else if (s->step == 1) {
		*type = TR_EXEC;
		len = build_exec(pr, s, ts);
	} else if (s->step < 2 + body) {
		bool file = (s->step - 2) % 3 == 2;

		*type = file ? TR_FILE : TR_SAMPLE;
		len = file ? build_file(pr, s, ts) : build_sample(pr, s, ts);
	} else {
		struct tr_exit x = encode_exit(ts, s->tgid, s->start_ns, 4242, s->tgid % 50 ? 0 : 1 << 8);

		x.runtime_ns = s->runtime_ns;
		x.rchar = s->rchar;
		memcpy(pr->buf, &x, sizeof(x));
		*type = TR_EXIT;
		len = sizeof(x);
		proc_start(pr, s);
		return len;
	}
	s->step++;
	return len;
}

/* Wait for room, never drop. Returns 0, or -ETIMEDOUT when the consumer made no room for drain_timeout. */
static int wait_room(struct producer *pr, uint32_t len)
{
	uint64_t t0, now;

	if (ring_has_room(&pr->ring, len))
		return 0;
	t0 = ring_now_ns();
	pr->waits++;
	do {
		ring_notify(&pr->ring);
		sleep_ns(WAIT_SLEEP_NS);
		now = ring_now_ns();
		if (now - t0 > (uint64_t)pr->o->drain_timeout * NS)
			return -ETIMEDOUT;
	} while (!ring_has_room(&pr->ring, len));
	pr->wait_ns += now - t0;
	return 0;
}

/* One record into the ring, stamped now. */
static int put(struct producer *pr, unsigned type, size_t len)
{
	struct tr_hdr *h = (struct tr_hdr *)pr->buf;
	int rc;

	if (len == 0 || len > REC_BUF)
		return -EINVAL; /* a pattern too long for a record: a bug here */
	rc = wait_room(pr, (uint32_t)len);
	if (rc)
		return rc;
	h->ts_ns = ring_now_ns();
	if (pr->written == 0) {
		pr->first_ns = h->ts_ns;
		pr->first_real_ns = realtime_ns();
	}
	pr->last_ns = h->ts_ns;
	rc = ring_write(&pr->ring, type, pr->buf, (uint32_t)len);
	if (rc)
		return rc; /* has_room said yes: cannot happen */
	pr->written++;
	pr->bytes += len;
	pr->by_type[type]++;
	if (pr->written % NOTIFY_EVERY == 0)
		ring_notify(&pr->ring);
	return 0;
}

static int put_counters(struct producer *pr)
{
	struct tr_counters c = encode_counters(0, 0, 0);

	c.records_copied = pr->written;
	memcpy(c.ring_drops, pr->ring.drops, sizeof(c.ring_drops));
	memcpy(pr->buf, &c, sizeof(c));
	return put(pr, TR_COUNTERS, sizeof(c));
}

static int put_cgroups(struct producer *pr)
{
	char path[128];
	int rc = 0;

	for (unsigned i = 0; i < CGROUPS && !rc; i++) {
		snprintf(path, sizeof(path), "/system.slice/slurmstepd.scope/job_4821377/step_%u/user/task_0", i);
		rc = put(pr, TR_CGROUP, encode_cgroup(pr->buf, sizeof(pr->buf), 0, 100 + i, 0, path));
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* The handover, as collector/main.c does it                          */
/* ------------------------------------------------------------------ */

/* Serve the ring to a (re)connecting processor: only consumer_uid gets it. */
static void accept_processor(struct producer *pr)
{
	int fd, err;

	while ((fd = accept4(pr->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		err = ring_handover_send(fd, &pr->ring, pr->o->consumer_uid);
		if (err) {
			fprintf(stderr, "<4>refused ring to a peer: %s\n", strerror(-err));
			close(fd);
			continue;
		}
		if (pr->conn_fd >= 0)
			close(pr->conn_fd);
		pr->conn_fd = fd;
		fprintf(stderr, "<7>processor attached\n");
	}
}

static int wait_attach(struct producer *pr)
{
	uint64_t deadline = ring_now_ns() + (uint64_t)pr->o->attach_timeout * NS;
	struct pollfd p = { .fd = pr->listen_fd, .events = POLLIN };

	while (pr->conn_fd < 0) {
		if (ring_now_ns() > deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, 100) > 0)
			accept_processor(pr);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The run                                                            */
/* ------------------------------------------------------------------ */

static int run(struct producer *pr)
{
	const uint64_t t0 = ring_now_ns();
	const uint64_t end = t0 + (uint64_t)(pr->o->seconds * 1e9);
	uint64_t next_counters = t0, now = t0;
	unsigned type;
	int rc;

	for (unsigned i = 0; i < PROC_SLOTS; i++)
		proc_start(pr, &pr->procs[i]);
	rc = put_cgroups(pr);
	while (!rc && now < end) {
		/* Flat out: batches of 256; at a rate: what is due by now. */
		uint64_t due = pr->o->rate ? (uint64_t)((double)(now - t0) * (double)pr->o->rate / 1e9) + 1
					   : pr->written + 256;

		while (!rc && pr->written < due) {
			size_t len = next_record(pr, 0, &type);

			rc = put(pr, type, len);
		}
		now = ring_now_ns();
		if (!rc && now >= next_counters) {
			rc = put_counters(pr);
			ring_producer_heartbeat(&pr->ring, now);
			next_counters = now + COUNTERS_INTERVAL_NS;
			accept_processor(pr); /* a restarted processor gets the same ring back */
		}
		ring_notify(&pr->ring);
		if (pr->o->rate)
			sleep_ns(RATE_TICK_NS);
		now = ring_now_ns();
	}
	if (!rc)
		rc = put_counters(pr);
	if (!rc) {
		struct tr_end e = encode_end(0, pr->written);

		memcpy(pr->buf, &e, sizeof(e));
		rc = put(pr, TR_END, sizeof(e));
	}
	ring_notify(&pr->ring);
	return rc;
}

/* Until the processor has released everything (it releases only what is durable). */
static int wait_drained(struct producer *pr, uint64_t *at)
{
	uint64_t deadline = ring_now_ns() + (uint64_t)pr->o->drain_timeout * NS;

	/* Pairs with the consumer's store-release of consumer_pos (C2 in docs/ring.md); compared only. */
	while (__atomic_load_n(&pr->ring.cons->consumer_pos, __ATOMIC_ACQUIRE) != pr->ring.pos) {
		if (ring_now_ns() > deadline)
			return -ETIMEDOUT;
		ring_notify(&pr->ring);
		sleep_ns(1000000L);
	}
	*at = ring_now_ns();
	return 0;
}

/* Until SIGTERM or SIGINT, the ring and the connection kept. */
static void linger(void)
{
	sigset_t mask;
	int sig;

	fflush(stdout);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == 0)
		sigwait(&mask, &sig);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static void print_results(const struct producer *pr, uint64_t drained_at)
{
	double write_s = (double)(pr->last_ns - pr->first_ns) / 1e9;
	double durable_s = (double)(drained_at - pr->first_ns) / 1e9;

	printf("delivery.producer.records %llu records\n", (unsigned long long)pr->written);
	printf("delivery.producer.bytes_per_record %.1f bytes\n", (double)pr->bytes / (double)pr->written);
	printf("delivery.producer.write_s %.3f s\n", write_s);
	printf("delivery.producer.ring_records_per_s %.0f rec/s\n", (double)pr->written / write_s);
	printf("delivery.producer.durable_records_per_s %.0f rec/s\n", (double)pr->written / durable_s);
	printf("delivery.producer.durable_s %.3f s\n", durable_s);
	printf("delivery.producer.ring_full_share %.3f ratio\n", (double)pr->wait_ns / 1e9 / write_s);
	printf("delivery.producer.cpu_s %.3f s\n", cpu_seconds());
	printf("delivery.producer.first_real_ns %llu ns\n", (unsigned long long)pr->first_real_ns);
	printf("delivery.producer.first_mono_ns %llu ns\n", (unsigned long long)pr->first_ns);
	printf("delivery.producer.drops %llu records\n", (unsigned long long)pr->ring.drops_total);
	fprintf(stderr, "<7>records by type: fork %llu exec %llu exit %llu sample %llu file %llu cgroup %llu "
			"counters %llu end %llu; ring full %llu times\n",
		(unsigned long long)pr->by_type[TR_FORK], (unsigned long long)pr->by_type[TR_EXEC],
		(unsigned long long)pr->by_type[TR_EXIT], (unsigned long long)pr->by_type[TR_SAMPLE],
		(unsigned long long)pr->by_type[TR_FILE], (unsigned long long)pr->by_type[TR_CGROUP],
		(unsigned long long)pr->by_type[TR_COUNTERS], (unsigned long long)pr->by_type[TR_END],
		(unsigned long long)pr->waits);
}

int main(int argc, char **argv)
{
	static struct producer pr;
	struct options o;
	uint64_t generation, drained_at = 0;
	int rc;

	if (parse_options(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	pr = (struct producer){ .o = &o, .listen_fd = -1, .conn_fd = -1, .next_tgid = 10000 };
	if (getrandom(&generation, sizeof(generation), 0) != sizeof(generation))
		generation = ring_now_ns();
	rc = ring_producer_create(&pr.ring, o.ring_order, generation);
	if (rc) {
		fprintf(stderr, "<3>cannot create the ring: %s\n", strerror(-rc));
		return 2;
	}
	/* Anyone may connect; only consumer_uid gets the ring (SO_PEERCRED in ring_handover_send). */
	pr.listen_fd = handover_listen(o.socket_path, 0666);
	if (pr.listen_fd < 0) {
		fprintf(stderr, "<3>cannot listen on %s: %s\n", o.socket_path, strerror(-pr.listen_fd));
		return 2;
	}
	fprintf(stderr, "<7>serving a %llu KiB ring on %s to uid %u\n", (unsigned long long)(pr.ring.size >> 10),
		o.socket_path, (unsigned)o.consumer_uid);
	if (wait_attach(&pr)) {
		fprintf(stderr, "<3>no processor attached within %u s\n", o.attach_timeout);
		return 1;
	}
	rc = run(&pr);
	if (!rc)
		rc = wait_drained(&pr, &drained_at);
	if (rc) {
		fprintf(stderr, "<3>the processor made no room for %u s (%s) after %llu records\n", o.drain_timeout,
			strerror(-rc), (unsigned long long)pr.written);
		return 1;
	}
	print_results(&pr, drained_at);
	if (o.linger)
		linger();
	return 0;
}
