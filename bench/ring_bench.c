/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ring benchmark (make bench-ring): throughput and wake latency of the
 * shared-memory SPSC ring between two processes, set against memcpy.
 *
 * The parent is the producer, a forked child the consumer; each is pinned
 * to its own CPU. The ring is created and handed over exactly as the
 * collector and processor do it (memfds over a Unix socket), so the
 * consumer reads through its own read-only mapping.
 *
 * Phases run one after another on the same ring. The schedule is a const
 * table both processes know, so no record carries control information;
 * after each phase the consumer sends a phase_report over the socket and
 * the producer waits for it before starting the next (a barrier: phases
 * never overlap and each starts on an empty ring).
 *
 * Results go to stdout as "<metric> <value> <unit>" lines (DESIGN.md);
 * diagnostics to stderr with syslog priority prefixes. Exit status: 0 when
 * every record arrived intact and in order, 1 when any was dropped, lost,
 * corrupt or out of order (the figures would describe a broken ring),
 * 2 on a setup or usage error. Missed performance targets only warn.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "handover.h"
#include "ring.h"

#define BENCH_TYPE RING_REC_FIRST_USER
#define BENCH_MAX_PAYLOAD 4096u
#define STALL_NS (10ULL * 1000000000ULL)   /* no progress this long: the peer is stuck or dead */
#define REPORT_TIMEOUT_MS (120 * 1000)      /* longest a phase may take, scaled runs included */
#define WAKE_SAMPLES 2000u
#define WAKE_INTERVAL_NS 1000000L           /* 1 ms between wake-latency records */

/* Performance targets from DESIGN.md. */
#define TARGET_64B_RECORDS_PER_S 20e6
#define TARGET_4K_FRACTION_OF_MEMCPY 0.5

/* One throughput phase: records of len payload bytes. */
struct phase {
	uint32_t len;
	uint64_t records;
	bool warmup; /* faults in the consumer's mapping and wakes the CPUs; not reported */
};

/* Record counts give roughly 0.5-1 s per phase on the reference machine. */
static const struct phase phases[] = {
	{ 64, 2000000, true },
	{ 64, 30000000, false },
	{ 256, 50000000, false },
	{ 1024, 15000000, false },
	{ 4096, 5000000, false },
};
#define NPHASES (sizeof(phases) / sizeof(phases[0]))

struct bench_cfg {
	unsigned notify_every;  /* producer: ring_notify after this many records */
	unsigned release_every; /* consumer: ring_release after this many records */
	unsigned spin;          /* consumer: empty polls before sleeping in ring_wait */
	double scale;           /* multiplies every phase's record count */
	int cpu_producer;       /* -1: unpinned */
	int cpu_consumer;
	int sock;               /* this process's end of the socketpair */
};

/* Sent by the consumer after each phase (same binary, same layout). */
struct phase_report {
	uint64_t records;     /* user records received */
	uint64_t seq_errors;  /* sequence number not the expected one */
	uint64_t bad_records; /* wrong type or length */
	uint64_t resets;      /* ring_next found a corrupt ring */
	uint64_t lost;        /* in-band loss markers, records */
	uint64_t waits;       /* ring found empty: ring_wait called (diagnostic) */
	uint64_t cpu_ns;      /* the consumer's own CPU time during the phase */
	uint64_t first_ns;    /* CLOCK_MONOTONIC at the first record */
	uint64_t last_ns;     /* ... and at the last one */
	uint64_t lat_p50_ns;  /* wake phase only */
	uint64_t lat_p99_ns;
	uint64_t lat_max_ns;
	int32_t status;       /* 0, or the negative errno that ended the phase */
	uint32_t pad;
};

/* What the producer saw of one phase. */
struct phase_result {
	struct phase_report rep;
	uint64_t expected;
	uint64_t start_ns;    /* CLOCK_MONOTONIC before the first write */
	uint64_t drops;       /* p->drops_total during the phase */
	uint64_t wakeups;     /* ring_notify calls that issued FUTEX_WAKE */
	uint64_t full_waits;  /* records that had to wait for room (diagnostic) */
	uint64_t other_ns;    /* CPU time on our two CPUs that was neither process's */
	uint32_t len;
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                      */
/* ------------------------------------------------------------------ */

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Make the compiler assume the bytes at p are read: keeps copies from being elided. */
static void keep(const void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Spinning for room only makes sense with the consumer on another CPU. */
static void wait_pause(const struct bench_cfg *cfg)
{
	if (cfg->cpu_producer < 0)
		sched_yield();
	else
		cpu_relax();
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	/* Cannot fail for CLOCK_PROCESS_CPUTIME_ID of the caller; 0 keeps the check harmless. */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Busy time (user, nice, system, irq, softirq, steal) of the two pinned
 * CPUs from /proc/stat. Steal counts: a hypervisor running something else
 * on our vCPU disturbs the figures just as a neighbour process does.
 */
static int pinned_cpus_busy_ns(const struct bench_cfg *cfg, uint64_t *ns)
{
	FILE *f = fopen("/proc/stat", "re");
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks = 0;
	char line[512];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8];
		int cpu;

		/* "cpuN user nice system idle iowait irq softirq steal ..."; skip the "cpu " total. */
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9' ||
		    sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) != 9)
			continue;
		if (cpu == cfg->cpu_producer || cpu == cfg->cpu_consumer)
			ticks += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	}
	fclose(f);
	if (hz <= 0)
		return -EINVAL;
	*ns = (uint64_t)(ticks * 1000000000ULL / (unsigned long long)hz);
	return 0;
}

static uint64_t phase_records(const struct bench_cfg *cfg, const struct phase *ph)
{
	uint64_t n = (uint64_t)((double)ph->records * cfg->scale);

	return n ? n : 1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const unsigned char *b = buf;

	while (len) {
		ssize_t n = write(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes, waiting at most timeout_ms for each chunk. */
static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	unsigned char *b = buf;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (len) {
		int rc = poll(&pfd, 1, timeout_ms);
		ssize_t n;

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		n = read(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	return 0;
}

/* The first two CPUs we may run on; unpinned (-1) when there is only one. */
static int pick_cpus(struct bench_cfg *cfg)
{
	cpu_set_t set;
	int found = 0;

	cfg->cpu_producer = cfg->cpu_consumer = -1;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (found++ == 0)
			cfg->cpu_producer = cpu;
		else
			cfg->cpu_consumer = cpu;
	}
	if (found < 2) {
		fprintf(stderr, "<4>ring_bench: only 1 CPU available: producer and consumer run unpinned "
				"on it; throughput figures say little about the ring\n");
		cfg->cpu_producer = cfg->cpu_consumer = -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* memcpy baseline                                                    */
/* ------------------------------------------------------------------ */

/*
 * Bytes per second of memcpy in block-sized pieces, walking source and
 * destination buffers of ring-data size in step (wrapping at the end), for
 * total bytes. One pass first so that page faults and cold caches do not
 * count. len is passed at run time, as in the ring loops, so both call
 * the same library memcpy rather than an inlined fixed-size copy.
 */
static double memcpy_bandwidth(unsigned char *dst, const unsigned char *src, size_t buf_len,
			       size_t block, uint64_t total)
{
	size_t len = block;
	uint64_t t0, t1, copied;
	size_t off = 0;

	/* Hide the constant from the optimiser: no inlined fixed-size copy. */
	__asm__("" : "+r"(len));
	for (size_t o = 0; o + len <= buf_len; o += len) {
		memcpy(dst + o, src + o, len);
		keep(dst + o);
	}
	t0 = ring_now_ns();
	for (copied = 0; copied < total; copied += len) {
		memcpy(dst + off, src + off, len);
		keep(dst + off);
		off += len;
		if (off + len > buf_len)
			off = 0;
	}
	t1 = ring_now_ns();
	return (double)copied * 1e9 / (double)(t1 - t0);
}

struct baseline {
	double bw_64;
	double bw_4096;
};

static int run_memcpy_baseline(const struct bench_cfg *cfg, size_t buf_len, struct baseline *b)
{
	unsigned char *src = malloc(buf_len), *dst = malloc(buf_len);
	uint64_t bytes_64 = 0, bytes_4096 = 0;

	if (!src || !dst) {
		free(src);
		free(dst);
		fprintf(stderr, "<3>ring_bench: memcpy baseline: cannot allocate 2 x %zu bytes\n", buf_len);
		return -ENOMEM;
	}
	memset(src, 0x5a, buf_len);
	memset(dst, 0, buf_len);
	/* Same total bytes as the ring phase of that size. */
	for (size_t i = 0; i < NPHASES; i++) {
		uint64_t bytes = phase_records(cfg, &phases[i]) * phases[i].len;

		if (phases[i].warmup)
			continue;
		if (phases[i].len == 64)
			bytes_64 = bytes;
		if (phases[i].len == 4096)
			bytes_4096 = bytes;
	}
	b->bw_64 = memcpy_bandwidth(dst, src, buf_len, 64, bytes_64);
	b->bw_4096 = memcpy_bandwidth(dst, src, buf_len, 4096, bytes_4096);
	free(src);
	free(dst);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Consumer (child process)                                           */
/* ------------------------------------------------------------------ */

/* Copy one record out and check its type, length and sequence number. */
static void consumer_take(const struct ring_view *v, uint32_t len, unsigned char *local, uint64_t *expect,
			  struct phase_report *rep)
{
	uint64_t seq;

	if (v->type != BENCH_TYPE || v->len != len) {
		rep->bad_records++;
		++*expect; /* it took a sequence number's place */
		return;
	}
	/* What a real consumer does: copy the untrusted bytes out, then decode. */
	memcpy(local, v->payload, len);
	keep(local);
	memcpy(&seq, local, sizeof(seq));
	if (seq != *expect)
		rep->seq_errors++;
	*expect = seq + 1; /* resynchronise, so one gap or swap is not counted forever */
}

/*
 * The ring is empty: hand back the space, optionally poll a little (the
 * --spin experiment), then sleep until the producer notifies. Returns 0,
 * or -ETIMEDOUT after STALL_NS without any data.
 */
static int consumer_idle(struct ring_consumer *c, unsigned spin, uint64_t *idle_since,
			 struct phase_report *rep)
{
	int rc;

	ring_release(c);
	for (unsigned i = 0; i < spin; i++) {
		if (ring_consumer_producer_pos(c) != c->pos)
			return 0;
		cpu_relax();
	}
	rep->waits++;
	rc = ring_wait(c, 100);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		*idle_since = 0;
		return 0;
	}
	/* Timeout or spurious wake: the only place the clock is read while idle. */
	if (!*idle_since)
		*idle_since = ring_now_ns();
	else if (ring_now_ns() - *idle_since > STALL_NS)
		return -ETIMEDOUT;
	return 0;
}

/* Handle a non-user return of ring_next: loss markers and resets. */
static void consumer_count_anomaly(int rc, const struct ring_view *v, struct phase_report *rep)
{
	if (rc < 0)
		rep->resets++;
	else if (v->type == RING_REC_LOST)
		rep->lost += v->lost.count;
}

static int consumer_run_phase(struct ring_consumer *c, const struct bench_cfg *cfg, const struct phase *ph,
			      struct phase_report *rep)
{
	_Alignas(64) unsigned char local[BENCH_MAX_PAYLOAD];
	const uint64_t n = phase_records(cfg, ph);
	uint64_t expect = 0, idle_since = 0;
	unsigned since_release = 0;
	struct ring_view v;

	/* Records the producer dropped arrive as loss markers: count them, or wait forever. */
	while (rep->records + rep->lost < n) {
		int rc = ring_next(c, &v);

		if (rc == 0) {
			rc = consumer_idle(c, cfg->spin, &idle_since, rep);
			if (rc < 0)
				return rc;
			since_release = 0;
			continue;
		}
		if (rc < 0 || v.type == RING_REC_LOST) {
			consumer_count_anomaly(rc, &v, rep);
			continue;
		}
		consumer_take(&v, ph->len, local, &expect, rep);
		if (rep->records++ == 0)
			rep->first_ns = ring_now_ns();
		if (++since_release >= cfg->release_every) {
			ring_release(c);
			since_release = 0;
		}
	}
	rep->last_ns = ring_now_ns();
	ring_release(c);
	return 0;
}

/* Wake-latency record: written every WAKE_INTERVAL_NS into an idle ring. */
struct wake_rec {
	uint64_t seq;
	uint64_t sent_ns; /* CLOCK_MONOTONIC, the same clock in both processes */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentiles over the sorted samples. */
static void latency_summary(uint64_t *lat, size_t n, struct phase_report *rep)
{
	if (!n)
		return;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	rep->lat_p50_ns = lat[(n - 1) * 50 / 100];
	rep->lat_p99_ns = lat[(n - 1) * 99 / 100];
	rep->lat_max_ns = lat[n - 1];
}

static int consumer_run_wake(struct ring_consumer *c, struct phase_report *rep)
{
	uint64_t lat[WAKE_SAMPLES], expect = 0, idle_since = 0;
	struct ring_view v;
	struct wake_rec w;

	while (rep->records + rep->lost < WAKE_SAMPLES) {
		int rc = ring_next(c, &v);
		uint64_t now = ring_now_ns();

		if (rc == 0) {
			rc = consumer_idle(c, 0, &idle_since, rep);
			if (rc < 0)
				return rc;
			continue;
		}
		if (rc < 0 || v.type == RING_REC_LOST) {
			consumer_count_anomaly(rc, &v, rep);
			continue;
		}
		if (v.type != BENCH_TYPE || v.len != sizeof(w)) {
			rep->bad_records++;
			continue;
		}
		memcpy(&w, v.payload, sizeof(w));
		rep->seq_errors += w.seq != expect;
		expect = w.seq + 1;
		if (rep->records == 0)
			rep->first_ns = now;
		rep->last_ns = now;
		lat[rep->records++] = now > w.sent_ns ? now - w.sent_ns : 0;
	}
	ring_release(c);
	latency_summary(lat, rep->records, rep);
	return 0;
}

static int consumer_main(const struct bench_cfg *cfg)
{
	struct ring_consumer c;
	int err = pin_to_cpu(cfg->cpu_consumer);

	if (err) {
		fprintf(stderr, "<3>ring_bench: consumer: cannot pin to CPU %d: %s\n", cfg->cpu_consumer,
			strerror(-err));
		return 2;
	}
	err = ring_handover_recv(cfg->sock, &c, getuid(), 1ULL << BENCH_TYPE, 5000);
	if (err) {
		fprintf(stderr, "<3>ring_bench: consumer: ring handover failed: %s\n", strerror(-err));
		return 2;
	}
	for (size_t i = 0; i <= NPHASES && !err; i++) {
		struct phase_report rep = { 0 };
		uint64_t cpu0 = process_cpu_ns();

		/* Index NPHASES is the wake-latency phase. */
		rep.status = i < NPHASES ? consumer_run_phase(&c, cfg, &phases[i], &rep)
					 : consumer_run_wake(&c, &rep);
		rep.cpu_ns = process_cpu_ns() - cpu0;
		err = write_full(cfg->sock, &rep, sizeof(rep));
		if (!err)
			err = rep.status;
	}
	ring_consumer_detach(&c);
	if (err)
		fprintf(stderr, "<3>ring_bench: consumer: stopped: %s\n", strerror(-err));
	return err ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Producer (parent process)                                          */
/* ------------------------------------------------------------------ */

/*
 * Lossless: spin (waking the consumer) until the record fits. Returns 1
 * when it had to wait, 0 when there was room, or -ETIMEDOUT.
 */
static int producer_wait_room(struct ring_producer *p, const struct bench_cfg *cfg, uint32_t len)
{
	uint64_t since = 0;
	unsigned spins = 0;

	if (ring_has_room(p, len))
		return 0;
	do {
		ring_notify(p);
		wait_pause(cfg);
		/* The clock only every 64Ki spins: waiting must stay cheap. */
		if ((++spins & 0xffff) == 0) {
			uint64_t now = ring_now_ns();

			if (!since)
				since = now;
			else if (now - since > STALL_NS)
				return -ETIMEDOUT;
		}
	} while (!ring_has_room(p, len));
	return 1;
}

/*
 * Write the phase's records: payload copied from src (walked like the
 * memcpy baseline's source), the sequence number in its first 8 bytes.
 */
static int producer_run_phase(struct ring_producer *p, const struct bench_cfg *cfg, const struct phase *ph,
			      const unsigned char *src, size_t src_len, uint64_t *full_waits)
{
	const uint64_t n = phase_records(cfg, ph);
	const uint32_t len = ph->len;
	unsigned since_notify = 0;
	size_t off = 0;

	for (uint64_t seq = 0; seq < n; seq++) {
		int err = producer_wait_room(p, cfg, len);
		unsigned char *dst;

		if (err < 0)
			return err;
		*full_waits += (unsigned)err;
		dst = ring_reserve(p, BENCH_TYPE, len);
		if (!dst) /* counted in drops_total, which the caller checks */
			continue;
		memcpy(dst, src + off, len);
		memcpy(dst, &seq, sizeof(seq));
		ring_commit(p);
		off += len;
		if (off + len > src_len)
			off = 0;
		if (++since_notify >= cfg->notify_every) {
			ring_notify(p);
			since_notify = 0;
		}
	}
	ring_notify(p);
	return 0;
}

static int sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };
	int rc;

	while ((rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts)) == EINTR)
		;
	return -rc;
}

/* One timestamped record per interval into an idle ring, notified at once. */
static int producer_run_wake(struct ring_producer *p, const struct bench_cfg *cfg)
{
	for (uint64_t seq = 0; seq < WAKE_SAMPLES; seq++) {
		struct wake_rec w = { .seq = seq };
		int err = sleep_ns(WAKE_INTERVAL_NS);

		if (!err)
			err = producer_wait_room(p, cfg, sizeof(w));
		if (err < 0)
			return err;
		w.sent_ns = ring_now_ns();
		err = ring_write(p, BENCH_TYPE, &w, sizeof(w));
		if (err && err != -ENOSPC) /* ENOSPC is a drop, counted and checked by the caller */
			return err;
		ring_notify(p);
	}
	return 0;
}

/*
 * Run one phase (index NPHASES: wake latency) and collect the consumer's
 * report of it.
 */
static int producer_phase(struct ring_producer *p, const struct bench_cfg *cfg, size_t i,
			  const unsigned char *src, size_t src_len, struct phase_result *r)
{
	uint64_t drops0 = p->drops_total, wakeups0 = p->wakeups, busy0 = 0, busy1 = 0, cpu0;
	bool busy_known;
	int err;

	memset(r, 0, sizeof(*r));
	busy_known = cfg->cpu_producer >= 0 && pinned_cpus_busy_ns(cfg, &busy0) == 0;
	cpu0 = process_cpu_ns();
	r->len = i < NPHASES ? phases[i].len : (uint32_t)sizeof(struct wake_rec);
	r->expected = i < NPHASES ? phase_records(cfg, &phases[i]) : WAKE_SAMPLES;
	r->start_ns = ring_now_ns();
	err = i < NPHASES ? producer_run_phase(p, cfg, &phases[i], src, src_len, &r->full_waits)
			  : producer_run_wake(p, cfg);
	r->drops = p->drops_total - drops0;
	r->wakeups = p->wakeups - wakeups0;
	if (err) {
		fprintf(stderr, "<3>ring_bench: producer: phase %zu (%u B): %s\n", i, r->len,
			err == -ETIMEDOUT ? "no room in the ring for 10 s: the consumer stopped releasing"
					  : strerror(-err));
		return err;
	}
	err = read_full(cfg->sock, &r->rep, sizeof(r->rep), REPORT_TIMEOUT_MS);
	if (err) {
		fprintf(stderr, "<3>ring_bench: producer: no report from the consumer for phase %zu: %s\n", i,
			strerror(-err));
		return err;
	}
	if (busy_known && pinned_cpus_busy_ns(cfg, &busy1) == 0) {
		uint64_t ours = process_cpu_ns() - cpu0 + r->rep.cpu_ns;

		r->other_ns = busy1 - busy0 > ours ? busy1 - busy0 - ours : 0;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Verification and output                                            */
/* ------------------------------------------------------------------ */

/* true when every record of the phase arrived once, intact and in order. */
static bool phase_verified(const char *name, const struct phase_result *r)
{
	const struct phase_report *q = &r->rep;
	bool ok = r->drops == 0 && q->records == r->expected && q->seq_errors == 0 && q->bad_records == 0 &&
		  q->resets == 0 && q->lost == 0 && q->status == 0;

	if (!ok)
		fprintf(stderr,
			"<3>ring_bench: %s: BROKEN RING: expected %llu records, got %llu; drops %llu, "
			"sequence errors %llu, bad records %llu, resets %llu, lost %llu, status %d\n",
			name, (unsigned long long)r->expected, (unsigned long long)q->records,
			(unsigned long long)r->drops, (unsigned long long)q->seq_errors,
			(unsigned long long)q->bad_records, (unsigned long long)q->resets,
			(unsigned long long)q->lost, q->status);
	return ok;
}

/* Producer start to the consumer's last record: both CLOCK_MONOTONIC. */
static double phase_seconds(const struct phase_result *r)
{
	return (double)(r->rep.last_ns - r->start_ns) / 1e9;
}

/* Returns payload bytes per second, 0 when the phase did not finish (no rate is printed then). */
static double print_throughput(const struct phase_result *r)
{
	double s = phase_seconds(r);
	double rps = (double)r->rep.records / s;
	double bps = rps * r->len;

	if (!r->rep.status) {
		printf("ring.%uB.records_per_s %.0f rec/s\n", r->len, rps);
		printf("ring.%uB.bytes_per_s %.2f GB/s\n", r->len, bps / 1e9);
	}
	printf("ring.%uB.drops %llu records\n", r->len, (unsigned long long)r->drops);
	printf("ring.%uB.seq_errors %llu records\n", r->len, (unsigned long long)r->rep.seq_errors);
	if (r->rep.status)
		return 0;
	fprintf(stderr, "<7>ring_bench: %uB: %llu records in %.3f s (consumer first-to-last %.3f s); "
			"producer waited for room %llu times, consumer found the ring empty %llu times, "
			"%llu futex wakes\n",
		r->len, (unsigned long long)r->rep.records, s,
		(double)(r->rep.last_ns - r->rep.first_ns) / 1e9, (unsigned long long)r->full_waits,
		(unsigned long long)r->rep.waits, (unsigned long long)r->wakeups);
	return bps;
}

static void print_wake(const struct phase_result *r)
{
	printf("ring.wake_drops %llu records\n", (unsigned long long)r->drops);
	if (r->rep.status)
		return;
	printf("ring.wake_latency_p50 %.1f us\n", (double)r->rep.lat_p50_ns / 1e3);
	printf("ring.wake_latency_p99 %.1f us\n", (double)r->rep.lat_p99_ns / 1e3);
	printf("ring.wake_latency_max %.1f us\n", (double)r->rep.lat_max_ns / 1e3);
	printf("ring.wake_samples %llu samples\n", (unsigned long long)r->rep.records);
	printf("ring.wake_futex_wakes %llu wakes\n", (unsigned long long)r->wakeups);
}

/*
 * The figures describe the ring only if nothing else ran on our two CPUs.
 * Returns true when something did: more than 5% of the phase's time and
 * more than /proc/stat's resolution (a tick, 10 ms, per CPU and sample).
 */
static bool phase_disturbed(const char *name, const struct phase_result *r, const struct bench_cfg *cfg)
{
	double wall = (double)(r->rep.last_ns - r->start_ns) / 1e9;
	double other = (double)r->other_ns / 1e9;
	bool disturbed = other > 0.05 * wall && other > 0.05;

	if (cfg->cpu_producer < 0 || r->rep.status)
		return false;
	fprintf(stderr, "<%d>ring_bench: %s: other work used %.2f CPU-s of CPUs %d and %d in %.2f s%s\n",
		disturbed ? 4 : 7, name, other, cfg->cpu_producer, cfg->cpu_consumer, wall,
		disturbed ? ": figures are pessimistic, rerun on an idle machine" : "");
	return disturbed;
}

static void report_target(const char *what, double value, double target, const char *unit)
{
	fprintf(stderr, "<%d>ring_bench: target %s >= %g %s: %s (%g)\n", value >= target ? 6 : 4, what,
		target, unit, value >= target ? "met" : "NOT met", value);
}

/* ------------------------------------------------------------------ */
/* Driver                                                             */
/* ------------------------------------------------------------------ */

struct totals {
	double rps_64;
	double bps_4096;
	bool broken;    /* a record was dropped, lost, corrupted or reordered */
	bool disturbed; /* other work ran on our CPUs during some phase */
};

/* Check, print and account one finished phase (index NPHASES: wake latency). */
static void record_phase(size_t i, const struct phase_result *r, const struct bench_cfg *cfg, struct totals *t)
{
	bool wake = i == NPHASES, warmup = !wake && phases[i].warmup;
	char name[32];

	if (wake)
		snprintf(name, sizeof(name), "wake phase");
	else
		snprintf(name, sizeof(name), "%uB%s phase", r->len, warmup ? " warm-up" : "");
	t->broken |= !phase_verified(name, r);
	if (wake) {
		print_wake(r);
	} else if (!warmup) {
		double bps = print_throughput(r);

		if (r->len == 64)
			t->rps_64 = (double)r->rep.records / phase_seconds(r);
		if (r->len == 4096)
			t->bps_4096 = bps;
	}
	t->disturbed |= phase_disturbed(name, r, cfg);
	fflush(stdout);
}

static int run_producer_phases(struct ring_producer *p, const struct bench_cfg *cfg, struct totals *t)
{
	size_t src_len = (size_t)p->size;
	unsigned char *src = malloc(src_len);
	int err = 0;

	if (!src) {
		fprintf(stderr, "<3>ring_bench: cannot allocate the %zu-byte source buffer\n", src_len);
		return -ENOMEM;
	}
	memset(src, 0xa5, src_len);
	for (size_t i = 0; i <= NPHASES && !err; i++) {
		struct phase_result r;

		err = producer_phase(p, cfg, i, src, src_len, &r);
		if (!err) {
			record_phase(i, &r, cfg, t);
			err = r.rep.status; /* the consumer gave up on this phase and has exited */
		}
	}
	/* A phase that cannot finish (stall, dead consumer) is a ring failure too. */
	t->broken |= err != 0;
	free(src);
	return err;
}

/* Create, hand over, run every phase, reap the consumer. */
static int run_ring(struct bench_cfg *cfg, struct totals *t)
{
	struct ring_producer p;
	int sv[2], status = 0, err;
	pid_t child;

	err = ring_producer_create(&p, RING_DEFAULT_ORDER, (uint64_t)getpid());
	if (err) {
		fprintf(stderr, "<3>ring_bench: ring_producer_create: %s\n", strerror(-err));
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		err = -errno;
		fprintf(stderr, "<3>ring_bench: socketpair: %s\n", strerror(-err));
		ring_producer_destroy(&p);
		return err;
	}
	child = fork();
	if (child < 0) {
		err = -errno;
		fprintf(stderr, "<3>ring_bench: fork: %s\n", strerror(-err));
		goto out;
	}
	if (child == 0) {
		/* The consumer must not keep the producer's side of anything. */
		close(sv[0]);
		ring_producer_destroy(&p);
		cfg->sock = sv[1];
		_exit(consumer_main(cfg));
	}
	close(sv[1]);
	sv[1] = -1;
	cfg->sock = sv[0];
	err = ring_handover_send(sv[0], &p, getuid());
	if (err)
		fprintf(stderr, "<3>ring_bench: ring_handover_send: %s\n", strerror(-err));
	else
		err = run_producer_phases(&p, cfg, t);
	/* ESRCH: it has exited already, which waitpid below reports. */
	if (err && kill(child, SIGKILL) < 0 && errno != ESRCH)
		fprintf(stderr, "<3>ring_bench: cannot stop the consumer (pid %d): %s\n", (int)child,
			strerror(errno));
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "<3>ring_bench: waitpid: %s\n", strerror(errno));
			break;
		}
	}
	if (!err && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "<3>ring_bench: consumer process failed (status 0x%x)\n", status);
		t->broken = true;
	}
out:
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	ring_producer_destroy(&p);
	return err;
}

static void usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"usage: %s [--notify-every N] [--release-every N] [--spin N] [--scale F]\n"
		"  --notify-every N   producer calls ring_notify every N records (default 64)\n"
		"  --release-every N  consumer calls ring_release every N records (default 64)\n"
		"  --spin N           consumer polls N times before ring_wait when empty (default 0)\n"
		"  --scale F          multiply every phase's record count by F (default 1)\n",
		argv0);
}

/* 0, 1 for --help, or -EINVAL. */
static int parse_args(int argc, char **argv, struct bench_cfg *cfg)
{
	static const struct option opts[] = {
		{ "notify-every", required_argument, NULL, 'n' },
		{ "release-every", required_argument, NULL, 'r' },
		{ "spin", required_argument, NULL, 'p' },
		{ "scale", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	cfg->notify_every = 64;
	cfg->release_every = 64;
	cfg->scale = 1.0;
	while ((o = getopt_long(argc, argv, "n:r:p:s:h", opts, NULL)) != -1) {
		char *end = NULL;

		errno = 0;
		if (o == 'n')
			cfg->notify_every = (unsigned)strtoul(optarg, &end, 10);
		else if (o == 'r')
			cfg->release_every = (unsigned)strtoul(optarg, &end, 10);
		else if (o == 'p')
			cfg->spin = (unsigned)strtoul(optarg, &end, 10);
		else if (o == 's')
			cfg->scale = strtod(optarg, &end);
		if (o == 'h')
			return 1;
		if (o == '?' || (end && (*end || errno)))
			return -EINVAL;
	}
	if (optind != argc || !cfg->notify_every || !cfg->release_every || !(cfg->scale > 0))
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_cfg cfg = { .sock = -1 };
	struct totals t = { 0 };
	struct baseline b;
	int err;

	err = parse_args(argc, argv, &cfg);
	if (err) {
		usage(err > 0 ? stdout : stderr, argv[0]);
		return err > 0 ? 0 : 2;
	}
	err = pick_cpus(&cfg);
	if (!err)
		err = pin_to_cpu(cfg.cpu_producer);
	if (err) {
		fprintf(stderr, "<3>ring_bench: CPU affinity: %s\n", strerror(-err));
		return 2;
	}
	fprintf(stderr, "<6>ring_bench: producer on CPU %d, consumer on CPU %d, ring data %u KiB, "
			"notify every %u, release every %u, spin %u\n",
		cfg.cpu_producer, cfg.cpu_consumer, (1u << RING_DEFAULT_ORDER) / 1024, cfg.notify_every,
		cfg.release_every, cfg.spin);
	if (run_memcpy_baseline(&cfg, (size_t)1 << RING_DEFAULT_ORDER, &b))
		return 2;
	printf("memcpy.64B.bytes_per_s %.2f GB/s\n", b.bw_64 / 1e9);
	printf("memcpy.4096B.bytes_per_s %.2f GB/s\n", b.bw_4096 / 1e9);
	fflush(stdout);
	err = run_ring(&cfg, &t);
	if (err && !t.broken)
		return 2; /* could not set the ring up: nothing was measured */
	if (!err) {
		printf("ring.4096B.fraction_of_memcpy %.2f ratio\n", t.bps_4096 / b.bw_4096);
		report_target("ring.64B.records_per_s", t.rps_64, TARGET_64B_RECORDS_PER_S, "rec/s");
		report_target("ring.4096B.fraction_of_memcpy", t.bps_4096 / b.bw_4096,
			      TARGET_4K_FRACTION_OF_MEMCPY, "ratio");
	}
	if (t.disturbed)
		fprintf(stderr, "<4>ring_bench: other processes competed for the benchmark's CPUs (see above): "
				"the throughput and latency figures understate the ring\n");
	if (t.broken) {
		fprintf(stderr, "<3>ring_bench: records were dropped, lost, corrupted or never arrived: "
				"the ring is broken and the figures are invalid\n");
		return 1;
	}
	return 0;
}
