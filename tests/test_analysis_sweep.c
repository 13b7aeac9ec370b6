/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer sweep (analysis/sweep.c), against answers computed by hand: each
 * rule fed figures just above and just below its threshold - Google
 * Cloud's idle VM (97% vs 96.9% of the time under 0.03 cores, 1999 vs 2001
 * B/s received, a day observed vs a day less one beat, gaps not idle), AWS
 * Trusted Advisor's low days (4 of 14 vs 3, a day half covered vs less),
 * idle time inside runs (at the minimum and a second under), a worker with
 * a live child vs all ended, Jupyter / ssh / tmux sessions idle vs busy, an
 * idle process at the memory limit vs a byte under - and their costs
 * (config price, table price, none; memory shares).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sweep.h"

#define S 1000000000LL             /* a second in ns */
#define MIN (60 * S)
#define H (3600 * S)
#define DAY (24 * H)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
/* now: a UTC midnight (day 19676 since the epoch, 2023-11-15), so AWS's days are whole */
#define NOW (19676 * DAY)

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* ---- building the input ------------------------------------------------------ */

static struct sw_beat beats[3][2000];

/* count beats of len ns from start, back to back, each with these figures; returns the next index. */
static size_t add_beats(struct sw_beat *b, size_t at, int64_t start, int64_t len, size_t count, double cores,
			uint64_t rx, uint64_t tx)
{
	for (size_t i = 0; i < count; i++, at++) {
		memset(&b[at], 0, sizeof(b[at]));
		b[at].start_ns = start + (int64_t)i * len;
		b[at].end_ns = b[at].start_ns + len;
		b[at].cpu_busy_ns = (uint64_t)llround(cores * (double)len);
		b[at].cpus = 4;
		b[at].mem_total_bytes = 16 * GiB;
		b[at].net_rx_bytes = rx;
		b[at].net_tx_bytes = tx;
	}
	return at;
}

static struct sw_host host(const char *id, const struct sw_beat *b, size_t n, double price)
{
	struct sw_host h = { .host_id = id, .beats = b, .nbeats = n };

	h.host.host_id = id;
	h.host.cpus = 4;
	h.host.memory_bytes = 16 * GiB;
	h.host.price_per_hour = price;
	return h;
}

static struct sw_input input(const struct sw_host *hosts, size_t nhosts)
{
	return (struct sw_input){ .hosts = hosts, .nhosts = nhosts, .since_ns = NOW - 30 * DAY, .now_ns = NOW };
}

static struct sw_process proc(int64_t pid, int64_t parent, const char *exe, const char *argv0, const char *cmdline,
			      int64_t start, int64_t last_active, uint64_t rss)
{
	return (struct sw_process){ .pid = pid, .ppid = 1, .parent = parent, .exe = exe, .argv0_base = argv0,
				    .cmdline = cmdline, .start_ns = start, .last_active_ns = last_active,
				    .rss_bytes = rss, .run_id = -1 };
}

struct result {
	struct sw_finding *f;
	size_t n;
};

static struct result sweep(const struct sw_input *in, const struct price_table *table)
{
	struct sw_config c;
	struct result r;

	sw_config_default(&c);
	assert_int_equal(sw_sweep(in, &c, table, &r.f, &r.n), 0);
	return r;
}

static size_t count_kind(const struct result *r, enum sw_kind k)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->f[i].kind == k;
	return n;
}

/* The i-th finding of kind k (in the sorted order). */
static const struct sw_finding *nth(const struct result *r, enum sw_kind k, size_t i)
{
	for (size_t j = 0; j < r->n; j++)
		if (r->f[j].kind == k && i-- == 0)
			return &r->f[j];
	fail_msg("no finding %zu of kind %s", i, sw_kind_name(k));
	return NULL;
}

static bool says(const struct sw_finding *f, const char *text)
{
	if (strstr(f->evidence, text))
		return true;
	print_error("evidence '%s' lacks '%s'\n", f->evidence, text);
	return false;
}

/* ---- names and defaults -------------------------------------------------------- */

static void kinds_have_names_and_defaults_are_the_anchors(void **state)
{
	struct sw_config c;

	(void)state;
	assert_string_equal(sw_kind_name(SW_IDLE_HOST_GCP), "idle_host_gcp");
	assert_string_equal(sw_kind_name(SW_IDLE_HOST_AWS), "idle_host_aws");
	assert_string_equal(sw_kind_name(SW_RUN_IDLE), "run_idle");
	assert_string_equal(sw_kind_name(SW_WORKER_IDLE), "worker_idle");
	assert_string_equal(sw_kind_name(SW_SESSION_IDLE), "session_idle");
	assert_string_equal(sw_kind_name(SW_PROCESS_IDLE_MEMORY), "process_idle_memory");
	assert_string_equal(sw_kind_name(SW_RESERVED_UNUSED), "reserved_unused");
	assert_string_equal(sw_kind_name(SW_KINDS), "unknown");
	sw_config_default(&c);
	assert_true(c.gcp_cpu_cores == 0.03 && c.gcp_cpu_share == 0.97 && c.gcp_net_share == 0.95);
	assert_true(c.gcp_rx_bytes_per_s == 2000 && c.gcp_tx_bytes_per_s == 1000);
	assert_int_equal(c.gcp_min_observed_ns, DAY);
	assert_true(c.aws_cpu_percent == 10);
	assert_int_equal(c.aws_net_bytes, 5000000);
	assert_int_equal(c.aws_days, 4);
	assert_int_equal(c.aws_window_days, 14);
	assert_int_equal(c.aws_day_ns, DAY);
	assert_int_equal(c.run_idle_min_ns, 300 * S);
	assert_int_equal(c.worker_idle_ns, H);
	assert_int_equal(c.session_idle_ns, 4 * H);
	assert_int_equal(c.idle_proc_age_ns, 24 * H);
	assert_int_equal(c.idle_proc_idle_ns, 6 * H);
	assert_int_equal(c.idle_proc_rss_bytes, GiB);
	assert_int_equal(c.reserved_min_ns, 10 * MIN);
	assert_true(c.reserved_cpu_share == 0.25 && c.reserved_mem_share == 0.25 && c.reserved_min_cores == 1);
	assert_int_equal(c.reserved_min_bytes, GiB);
}

/* ---- 1. Google Cloud's idle VM ------------------------------------------------------- */

/*
 * 1000 beats of 86.4 s = exactly one day, network silent. idle of them at
 * 0.02 cores (1.728e9 busy ns each), at_limit at exactly 0.03 cores (not
 * "under"), the rest at 1 core.
 */
static struct result gcp_cpu(size_t idle, size_t at_limit)
{
	static struct sw_host h[1];
	const int64_t len = 86400 * S / 1000;
	size_t n = 0;
	struct sw_input in;

	n = add_beats(beats[0], n, NOW - DAY, len, idle, 0.02, 0, 0);
	n = add_beats(beats[0], n, NOW - DAY + (int64_t)n * len, len, at_limit, 0.03, 0, 0);
	n = add_beats(beats[0], n, NOW - DAY + (int64_t)n * len, len, 1000 - n, 1.0, 0, 0);
	h[0] = host("h1", beats[0], n, 0.5);
	in = input(h, 1);
	return sweep(&in, NULL);
}

static void gcp_cpu_under_the_limit_97_percent_of_the_time_is_idle(void **state)
{
	struct result r = gcp_cpu(970, 0);
	const struct sw_finding *f;

	(void)state;
	/* 970 x 86.4 s of 86400 s = 97.0% >= 97%; network 100% >= 95%; observed 24 h >= 1 day */
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 1);
	f = nth(&r, SW_IDLE_HOST_GCP, 0);
	assert_int_equal(f->host, 0);
	assert_true(near(f->idle_share_cpu, 0.97));
	assert_true(near(f->idle_share_net, 1.0));
	assert_true(near(f->observed_s, 86400));
	assert_int_equal(f->start_ns, NOW - DAY);
	assert_int_equal(f->end_ns, NOW);
	assert_int_equal(f->run_id, -1);
	assert_int_equal(f->proc, -1);
	/* $0.50/h (config) x 24 h observed = $12.00 */
	assert_int_equal(f->price_source, COST_PRICE_CONFIG);
	assert_true(near(f->price_per_hour, 0.5));
	assert_true(near(f->cost_usd, 12.0));
	assert_true(says(f, "cpu under 0.03 cores 97.0% of 24.0 h observed (97.0% needed)"));
	assert_true(says(f, "1000 B/s out 100.0% (95.0% needed)"));
	free(r.f);
}

static void gcp_cpu_under_the_limit_96_9_percent_of_the_time_is_not(void **state)
{
	struct result r = gcp_cpu(969, 0);

	(void)state;
	/* 969 of 1000 beats: 96.9% < 97% */
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
	/* 969 at 0.02 and one at exactly 0.03 cores: 0.03 is not under 0.03, still 96.9% */
	r = gcp_cpu(969, 1);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
}

/*
 * 100 beats of 864 s (one day), CPU idle. quiet of them receive 1999 B/s
 * (1,727,136 B) and send 999 B/s (863,136 B); the rest receive 2000 B/s,
 * which is not under 2000. Then one quiet beat changed to rx (or tx).
 */
static struct result gcp_net(size_t quiet, uint64_t rx0, uint64_t tx0)
{
	static struct sw_host h[1];
	const int64_t len = 864 * S;
	size_t n = 0;
	struct sw_input in;

	n = add_beats(beats[0], n, NOW - DAY, len, quiet, 0, 1999 * 864, 999 * 864);
	n = add_beats(beats[0], n, NOW - DAY + (int64_t)n * len, len, 100 - n, 0, 2000 * 864, 0);
	beats[0][0].net_rx_bytes = rx0;
	beats[0][0].net_tx_bytes = tx0;
	h[0] = host("h1", beats[0], n, 0.5);
	in = input(h, 1);
	return sweep(&in, NULL);
}

static void gcp_network_under_2000_and_1000_bytes_per_second_95_percent_is_idle(void **state)
{
	struct result r = gcp_net(95, 1999 * 864, 999 * 864);

	(void)state;
	/* 95 of 100 beats under both rates: 95.0% >= 95% */
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 1);
	assert_true(near(nth(&r, SW_IDLE_HOST_GCP, 0)->idle_share_net, 0.95));
	assert_true(near(nth(&r, SW_IDLE_HOST_GCP, 0)->idle_share_cpu, 1.0));
	free(r.f);
	/* one of the 95 received 2001 B/s (1,728,864 B): 94% < 95% */
	r = gcp_net(95, 2001 * 864, 999 * 864);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
	/* one of the 95 sent exactly 1000 B/s: not under, 94% */
	r = gcp_net(95, 1999 * 864, 1000 * 864);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
}

/* count idle beats of 864 s, one every `every` ns from NOW - 2 days. */
static struct result gcp_observed(size_t count, int64_t every, const struct price_table *t, struct sw_host *h)
{
	struct sw_input in;

	for (size_t i = 0; i < count; i++)
		add_beats(beats[0], i, NOW - 2 * DAY + (int64_t)i * every, 864 * S, 1, 0.01, 0, 0);
	*h = host("h1", beats[0], count, 0.5);
	in = input(h, 1);
	return sweep(&in, t);
}

static void gcp_needs_a_whole_day_observed_and_gaps_are_not_idle(void **state)
{
	static struct sw_host h[1];
	struct result r;
	const struct sw_finding *f;

	(void)state;
	/* 99 beats back to back: 85,536 s, a day less one beat: not enough */
	r = gcp_observed(99, 864 * S, NULL, h);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
	/* 100: 86,400 s, exactly a day */
	r = gcp_observed(100, 864 * S, NULL, h);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 1);
	free(r.f);
	/*
	 * 100 beats with a gap of 864 s after each: over 47.76 h (99 x 1728 s +
	 * 864 s = 171,936 s) only 24 h observed. The gaps are unknown, not idle:
	 * the cost is $0.50 x 24 h = $12.00, not x 47.76 h; the span is the
	 * first beat's start to the last one's end.
	 */
	r = gcp_observed(100, 1728 * S, NULL, h);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 1);
	f = nth(&r, SW_IDLE_HOST_GCP, 0);
	assert_true(near(f->observed_s, 86400));
	assert_true(near(f->cost_usd, 12.0));
	assert_int_equal(f->start_ns, NOW - 2 * DAY);
	assert_int_equal(f->end_ns, NOW - 2 * DAY + 171936 * S);
	assert_true(says(f, "of 24.0 h observed"));
	assert_true(says(f, "from beats spanning 47.8 h"));
	free(r.f);
	/* 99 such beats: 23.76 h observed over two days: not enough, however long the span */
	r = gcp_observed(99, 1728 * S, NULL, h);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0);
	free(r.f);
}

/* ---- prices ------------------------------------------------------------------------ */

static const char table_csv[] =
	"# source: a test table, invented prices\n# date: 2024-06-01\n"
	"cloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour\n"
	"aws,m6i.xlarge,us-east-1,4,16,0.192,\n"
	"aws,m6i.xlarge,eu-west-1,4,16,0.214,\n";

static void hosts_are_priced_from_config_then_table_and_unpriced_come_last(void **state)
{
	static struct sw_host h[3];
	struct price_table t;
	struct sw_input in;
	struct result r;
	char err[256];

	(void)state;
	assert_int_equal(price_table_parse(table_csv, strlen(table_csv), &t, err, sizeof(err)), 0);
	/* three idle hosts, the same day of 100 idle beats of 864 s */
	add_beats(beats[0], 0, NOW - DAY, 864 * S, 100, 0.01, 0, 0);
	h[0] = host("a-unknown", beats[0], 100, -1);   /* no config, no type: no price */
	h[1] = host("b-table", beats[0], 100, -1);
	h[1].host.cloud = "aws";
	h[1].host.instance_type = "m6i.xlarge";
	h[1].host.region = "us-east-1";
	h[2] = host("c-config", beats[0], 100, 0.5);
	in = input(h, 3);
	r = sweep(&in, &t);
	assert_int_equal(r.n, 3);
	/* c: $0.50 x 24 h = $12.00; b: the table's $0.192 x 24 h = $4.608; a: unknown, last */
	assert_int_equal(r.f[0].host, 2);
	assert_int_equal(r.f[0].price_source, COST_PRICE_CONFIG);
	assert_true(near(r.f[0].cost_usd, 12.0));
	assert_int_equal(r.f[1].host, 1);
	assert_int_equal(r.f[1].price_source, COST_PRICE_TABLE);
	assert_true(near(r.f[1].price_per_hour, 0.192));
	assert_true(near(r.f[1].cost_usd, 4.608));
	assert_int_equal(r.f[2].host, 0);
	assert_int_equal(r.f[2].price_source, COST_PRICE_NONE);
	assert_true(r.f[2].price_per_hour < 0 && r.f[2].cost_usd < 0);
	free(r.f);
	/* without a table, only the configured price remains */
	r = sweep(&in, NULL);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.f[0].host, 2);
	assert_true(r.f[1].cost_usd < 0 && r.f[2].cost_usd < 0);
	assert_int_equal(r.f[1].host, 0); /* the unpriced by start (the same), then host */
	free(r.f);
	/* cost_host_price is cost_run_price's rule */
	{
		enum cost_price_source src;
		struct an_run run = { .host = h[1].host };

		assert_true(near(cost_host_price(&h[1].host, &t, &src), 0.192) && src == COST_PRICE_TABLE);
		assert_true(near(cost_run_price(&run, &t, &src), 0.192) && src == COST_PRICE_TABLE);
		assert_true(cost_host_price(NULL, &t, &src) < 0 && src == COST_PRICE_NONE);
	}
	price_table_free(&t);
}

/* ---- 2. AWS Trusted Advisor's low utilisation ------------------------------------------------ */

/*
 * Beats of an hour, 4 CPUs. Window: the 14 days before NOW, day j (0..13)
 * from NOW - (14 - j) days. A low day: 0.2 cores (5% of 4) and 100,000 B
 * received an hour (2.4 MB a day). A high day: 2 cores (50%).
 */
#define LOW_CORES 0.2
#define LOW_RX 100000
static size_t aws_day(size_t at, int j, size_t hours, double cores, uint64_t rx)
{
	return add_beats(beats[0], at, NOW - (14 - j) * DAY, H, hours, cores, rx, 0);
}

/* A day at both limits: 0.4 cores (exactly 10% of 4) and 23 x 200,000 + 400,000 = exactly 5,000,000 B. */
static size_t aws_limit_day(size_t at, int j, uint64_t last_rx, uint64_t extra_busy)
{
	at = aws_day(at, j, 24, 0.4, 200000);
	beats[0][at - 1].net_rx_bytes = last_rx;
	beats[0][at - 1].cpu_busy_ns += extra_busy;
	return at;
}

static struct result aws(size_t n)
{
	static struct sw_host h[1];
	struct sw_input in;

	h[0] = host("h1", beats[0], n, 0.5);
	in = input(h, 1);
	return sweep(&in, NULL);
}

static void aws_four_low_days_of_fourteen_are_idle_three_are_not(void **state)
{
	const struct sw_finding *f;
	struct result r;
	size_t n = 0;

	(void)state;
	/* days 0-9 high, 10-12 low, 13 at both limits (10% is "10% or less", 5 MB "5 MB or less") */
	for (int j = 0; j < 10; j++)
		n = aws_day(n, j, 24, 2.0, LOW_RX);
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_limit_day(n, 13, 400000, 0);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_GCP), 0); /* 0.2 cores is not under 0.03 */
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 1);
	f = nth(&r, SW_IDLE_HOST_AWS, 0);
	assert_int_equal(f->low_days, 4);
	assert_int_equal(f->days, 14);
	assert_true(isnan(f->idle_share_cpu) && isnan(f->idle_share_net));
	assert_true(near(f->observed_s, 14 * 86400));
	/* from day 10's start to day 13's end; $0.50 x 4 x 24 h = $48.00 */
	assert_int_equal(f->start_ns, NOW - 4 * DAY);
	assert_int_equal(f->end_ns, NOW);
	assert_true(near(f->cost_usd, 48.0));
	assert_true(says(f, "4 of the 14 days observed in the last 14 were low"));
	assert_true(says(f, "the busiest of them 10.0% and 5.00 MB"));
	assert_true(says(f, "96.0 h of them observed"));
	free(r.f);

	/* the same, day 13 received one byte more: 5,000,001 B > 5 MB, 3 low days */
	n = 0;
	for (int j = 0; j < 10; j++)
		n = aws_day(n, j, 24, 2.0, LOW_RX);
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_limit_day(n, 13, 400001, 0);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 0);
	free(r.f);

	/* day 13 busy one ns more than 10% (3.456e13 + 1 of 3.456e14 CPU-ns): 3 low days */
	n = 0;
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_limit_day(n, 13, 400000, 1);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 0);
	free(r.f);

	/* a fourth low day 15 days back is outside the window: still 3 */
	n = add_beats(beats[0], 0, NOW - 15 * DAY, H, 24, LOW_CORES, LOW_RX, 0);
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 0);
	free(r.f);
}

static void aws_a_day_counts_when_beats_cover_half_of_it(void **state)
{
	const struct sw_finding *f;
	struct result r;
	size_t n = 0;

	(void)state;
	/* days 10-12 low and whole, day 13 low with 12 h of beats: half covered, counted */
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_day(n, 13, 12, LOW_CORES, LOW_RX);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 1);
	f = nth(&r, SW_IDLE_HOST_AWS, 0);
	assert_int_equal(f->low_days, 4);
	assert_int_equal(f->days, 4); /* the other ten have no beats */
	/* $0.50 x (3 x 24 + 12) h observed = $42.00; its bytes as observed, 1.2 MB, not scaled to a day */
	assert_true(near(f->cost_usd, 42.0));
	assert_true(near(f->observed_s, 84 * 3600));
	free(r.f);
	/* 11 h of day 13: less than half, not a day observed; 3 low days */
	n = 0;
	for (int j = 10; j < 13; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_day(n, 13, 11, LOW_CORES, LOW_RX);
	r = aws(n);
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 0);
	free(r.f);
	/* a beat across midnight is split between its days by time: 30 min of day 12 and 30 min of day 13 */
	n = 0;
	for (int j = 10; j < 12; j++)
		n = aws_day(n, j, 24, LOW_CORES, LOW_RX);
	n = aws_day(n, 12, 23, LOW_CORES, LOW_RX);                                 /* day 12: 00:00-23:00 */
	n = add_beats(beats[0], n, NOW - DAY - H / 2, H, 1, LOW_CORES, LOW_RX, 0);      /* 23:30-00:30 */
	n = add_beats(beats[0], n, NOW - DAY + H / 2, H, 11, LOW_CORES, LOW_RX, 0);     /* 00:30-11:30 */
	n = add_beats(beats[0], n, NOW - DAY + 23 * H / 2, H / 2, 1, LOW_CORES, LOW_RX, 0); /* 11:30-12:00 */
	r = aws(n);
	/*
	 * day 12: 23 h + 0.5 h; day 13: 0.5 h + 11 h + 0.5 h = 12 h, half the day
	 * only with the crossing beat's half: counted. 4 low days, $0.50 x (24 +
	 * 24 + 23.5 + 12) h = $41.75
	 */
	assert_int_equal(count_kind(&r, SW_IDLE_HOST_AWS), 1);
	assert_int_equal(nth(&r, SW_IDLE_HOST_AWS, 0)->days, 4);
	assert_true(near(nth(&r, SW_IDLE_HOST_AWS, 0)->cost_usd, 41.75));
	free(r.f);
}

/* ---- 3. idle time inside a run --------------------------------------------------------------- */

static void run_gaps_and_tails_count_from_the_minimum(void **state)
{
	static struct sw_host h[1];
	const int64_t r0 = NOW - 10 * H, r1 = NOW - 5 * H;
	/*
	 * Run #7 [r0, r0 + 3600 s): A [300, 900), B [1200, 1800), B2 [1500, 2000)
	 * (overlaps B), C [2299, 3300): head 300 s (reported), A-B 300 s
	 * (reported), B2-C 299 s (not), tail 300 s (reported).
	 * Run #8 [r1, r1 + 3600 s): D [299, 1000), E [1000, 3301): head 299 s,
	 * tail 299 s: nothing.
	 * Run #9, running since NOW - 2 h on another host: F [0, 1 h) then
	 * nothing: its tail runs to now, 1 h.
	 * Run #10, running since NOW - 2 h: G [0, 30 min), H still running
	 * since 30 min: no gap, no tail.
	 */
	const struct an_step steps[] = {
		{ .run = 0, .name = "A", .start_ns = r0 + 300 * S, .end_ns = r0 + 900 * S },
		{ .run = 0, .name = "B", .start_ns = r0 + 1200 * S, .end_ns = r0 + 1800 * S },
		{ .run = 0, .name = "B2", .start_ns = r0 + 1500 * S, .end_ns = r0 + 2000 * S },
		{ .run = 0, .name = "C", .start_ns = r0 + 2299 * S, .end_ns = r0 + 3300 * S },
		{ .run = 1, .name = "D", .start_ns = r1 + 299 * S, .end_ns = r1 + 1000 * S },
		{ .run = 1, .name = "E", .start_ns = r1 + 1000 * S, .end_ns = r1 + 3301 * S },
		{ .run = 2, .name = "F", .start_ns = NOW - 2 * H, .end_ns = NOW - H },
		{ .run = 3, .name = "G", .start_ns = NOW - 2 * H, .end_ns = NOW - 90 * MIN },
		{ .run = 3, .name = "H", .start_ns = NOW - 90 * MIN, .end_ns = 0, .running = true },
	};
	struct an_run runs[4] = {
		{ .lake_id = 7, .label = "wf-a", .start_ns = r0, .end_ns = r0 + H, .step_first = 0, .step_n = 4 },
		{ .lake_id = 8, .label = "wf-b", .start_ns = r1, .end_ns = r1 + H, .step_first = 4, .step_n = 2 },
		{ .lake_id = 9, .label = "wf-c", .start_ns = NOW - 2 * H, .step_first = 6, .step_n = 1 },
		{ .lake_id = 10, .label = "wf-d", .start_ns = NOW - 2 * H, .step_first = 7, .step_n = 2 },
	};
	struct an_input a = { .runs = runs, .nruns = 4, .steps = steps, .nsteps = 9 };
	const struct sw_finding *f;
	struct sw_input in;
	struct result r;

	(void)state;
	for (int i = 0; i < 4; i++) {
		runs[i].host.host_id = i == 2 ? "elsewhere" : "h1";
		runs[i].host.price_per_hour = 0.36;
	}
	h[0] = host("h1", NULL, 0, 1.0); /* the run's own host price counts: $0.36/h */
	in = input(h, 1);
	in.runs = &a;
	r = sweep(&in, NULL);
	assert_int_equal(r.n, 4);
	assert_int_equal(count_kind(&r, SW_RUN_IDLE), 4);
	/* most costly first: run #9's tail, 1 h x $0.36 = $0.36, on a host not among hosts */
	f = &r.f[0];
	assert_int_equal(f->run_id, 9);
	assert_int_equal(f->host, UINT32_MAX);
	assert_int_equal(f->start_ns, NOW - H);
	assert_int_equal(f->end_ns, NOW);
	assert_true(near(f->cost_usd, 0.36));
	assert_true(says(f, "after its last step 'F' ended, until now (it is still running)"));
	/* then run #7's three, 300 s x $0.36/h = $0.03 each, by start */
	f = &r.f[1];
	assert_int_equal(f->run_id, 7);
	assert_int_equal(f->host, 0);
	assert_int_equal(f->price_source, COST_PRICE_CONFIG);
	assert_int_equal(f->start_ns, r0);
	assert_int_equal(f->end_ns, r0 + 300 * S);
	assert_true(near(f->cost_usd, 0.03));
	assert_true(near(f->observed_s, 300));
	assert_true(says(f, "run #7 (wf-a) held its host for 5.0 min from its start before its first step 'A'"));
	f = &r.f[2];
	assert_int_equal(f->start_ns, r0 + 900 * S);
	assert_int_equal(f->end_ns, r0 + 1200 * S);
	assert_true(says(f, "no step running for 5.0 min, from the end of step 'A' to the start of step 'B'"));
	f = &r.f[3];
	assert_int_equal(f->start_ns, r0 + 3300 * S);
	assert_int_equal(f->end_ns, r0 + 3600 * S);
	assert_true(near(f->cost_usd, 0.03));
	assert_true(says(f, "after its last step 'C' ended, until the run ended"));
	free(r.f);

	/* a window starting inside run #7's tail: only the part inside counts, 200 s < 300 s */
	in.since_ns = r0 + 3400 * S;
	r = sweep(&in, NULL);
	for (size_t i = 0; i < r.n; i++)
		assert_int_not_equal(r.f[i].run_id, 7);
	free(r.f);
}

/* ---- 3b. reserved but unused ------------------------------------------------------------------- */

/*
 * Run #20 on h1 (4 CPUs, 16 GiB, $1/h), its steps back to back, each
 * 20 min unless said: found at exactly a quarter used, not a hair above;
 * not when less than a CPU or a GiB is left unused, nor under 10 min, nor
 * without an allocation. Cost: the unused share of the host (the larger of
 * CPUs and memory) x $1/h x the step's hours.
 */
static void a_step_using_a_quarter_of_its_allocation_is_found_a_hair_more_is_not(void **state)
{
	static struct sw_host h[1];
	struct step_case {
		const char *name;
		double cpu_limit, p95;   /* p95 < 0: no samples, 0.2 cores on average */
		uint64_t mem_limit, peak;
		int64_t len;
	} cases[] = {
		{ "cpu_at_share", 4, 1.0, 0, 0, 20 * MIN },
		{ "cpu_over_share", 4, 1.001, 0, 0, 20 * MIN },
		{ "cpu_small_unused", 1, 0.1, 0, 0, 20 * MIN },
		{ "mem_at_share", 0, 0, 8 * GiB, 2 * GiB, 20 * MIN },
		{ "mem_over_share", 0, 0, 8 * GiB, 2 * GiB + 1, 20 * MIN },
		{ "mem_small_unused", 0, 0, GiB, 100 * MiB, 20 * MIN },
		{ "both_average", 2, -1, 4 * GiB, 512 * MiB, 20 * MIN },
		{ "short", 4, 0, 8 * GiB, 0, 10 * MIN - S },
		{ "no_allocation", 0, 0, 0, 0, 20 * MIN },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct an_step steps[N];
	const int64_t r0 = NOW - 5 * H;
	int64_t t = r0;
	struct an_run run = { .lake_id = 20, .label = "wf-r", .start_ns = r0, .step_first = 0, .step_n = N };
	struct an_input a = { .runs = &run, .nruns = 1, .steps = steps, .nsteps = N };
	const struct sw_finding *f;
	struct sw_input in;
	struct result r;

	(void)state;
	memset(steps, 0, sizeof(steps));
	for (int i = 0; i < N; i++) {
		steps[i].name = cases[i].name;
		steps[i].step_id = cases[i].name;
		steps[i].start_ns = t;
		steps[i].end_ns = t += cases[i].len;
		steps[i].cpu_limit = cases[i].cpu_limit;
		steps[i].cores_known = cases[i].p95 >= 0;
		steps[i].cores_p95 = steps[i].cores_p50 = cases[i].p95 >= 0 ? cases[i].p95 : 0;
		steps[i].cpu_ns = (uint64_t)(0.2 * (double)cases[i].len);
		steps[i].mem_limit_bytes = cases[i].mem_limit;
		steps[i].peak_mem_bytes = cases[i].peak;
	}
	run.end_ns = t;
	run.host = (struct an_host){ .host_id = "h1", .cpus = 4, .memory_bytes = 16 * GiB, .price_per_hour = 1.0 };
	h[0] = host("h1", NULL, 0, 1.0);
	in = input(h, 1);
	in.runs = &a;
	r = sweep(&in, NULL);
	assert_int_equal(count_kind(&r, SW_RUN_IDLE), 0);
	assert_int_equal(r.n, 3);
	/* cpu_at_share: 3 of 4 CPUs unused, 0.75 x $1/h x 1/3 h */
	f = nth(&r, SW_RESERVED_UNUSED, 0);
	assert_string_equal(steps[f->step].name, "cpu_at_share");
	assert_int_equal(f->run_id, 20);
	assert_int_equal(f->host, 0);
	assert_int_equal(f->start_ns, r0);
	assert_int_equal(f->end_ns, r0 + 20 * MIN);
	assert_true(f->cpu_unused && !f->mem_unused);
	assert_true(near(f->cpu_limit, 4) && near(f->cpu_used, 1));
	assert_true(near(f->cost_usd, 0.25));
	assert_true(says(f, "step 'cpu_at_share' of run #20 (wf-r) used at most 1.00 of its 4.00 CPUs (p95 of its "
			    "samples) over 20.0 min"));
	/* both_average: CPU 1.8 of 4 (0.45) beats memory 3.5 of 16 GiB (0.21875): $0.15 */
	f = nth(&r, SW_RESERVED_UNUSED, 1);
	assert_string_equal(steps[f->step].name, "both_average");
	assert_true(f->cpu_unused && f->mem_unused);
	assert_true(near(f->cpu_used, 0.2));
	assert_int_equal(f->mem_limit_bytes, 4 * GiB);
	assert_int_equal(f->mem_used_bytes, 512 * MiB);
	assert_true(near(f->cost_usd, 0.15));
	assert_true(says(f, "0.20 of its 2.00 CPUs (its average) and 512 MiB of its 4.0 GiB memory limit"));
	/* mem_at_share: 6 of 16 GiB unused, 0.375 x 1/3 h */
	f = nth(&r, SW_RESERVED_UNUSED, 2);
	assert_string_equal(steps[f->step].name, "mem_at_share");
	assert_true(!f->cpu_unused && f->mem_unused);
	assert_true(isnan(f->cpu_limit));
	assert_true(near(f->cost_usd, 0.125));
	free(r.f);

	/* a window leaving 9 min 59 s of the first step: not long enough; a host without a price: unpriced;
	 * a run labelled by its number alone is not named twice */
	in.since_ns = r0 + 10 * MIN + S;
	run.host.price_per_hour = -1;
	run.label = "#20";
	r = sweep(&in, NULL);
	assert_int_equal(count_kind(&r, SW_RESERVED_UNUSED), 2);
	assert_true(says(nth(&r, SW_RESERVED_UNUSED, 0), "of run #20 used at most"));
	for (size_t i = 0; i < r.n; i++) {
		assert_string_not_equal(steps[r.f[i].step].name, "cpu_at_share");
		assert_true(r.f[i].cost_usd < 0);
	}
	free(r.f);
}

/* ---- 4. a worker stuck idle ------------------------------------------------------------------ */

static struct result workers(struct sw_process *p, size_t n)
{
	static struct sw_host h[1];
	struct sw_input in;

	h[0] = host("h1", NULL, 0, 1.0);
	in = input(h, 1);
	in.procs = p;
	in.nprocs = n;
	return sweep(&in, NULL);
}

static void a_worker_whose_children_all_ended_an_hour_ago_is_stuck(void **state)
{
	struct sw_process p[2];
	const struct sw_finding *f;
	struct result r;

	(void)state;
	/* snakemake, the run's root, last active 3 h ago; its child bwa ended 2 h ago */
	p[0] = proc(100, -1, "/usr/bin/python3", "snakemake", NULL, NOW - 5 * H, NOW - 3 * H, 100 * MiB);
	p[0].run_root = true;
	p[0].run_id = 7;
	p[0].tool = "snakemake";
	p[1] = proc(101, 0, "/usr/bin/bwa", "bwa", NULL, NOW - 4 * H, NOW - 2 * H - 10 * S, 2 * GiB);
	p[1].end_ns = NOW - 2 * H;
	r = workers(p, 2);
	assert_int_equal(r.n, 1);
	f = &r.f[0];
	assert_int_equal(f->kind, SW_WORKER_IDLE);
	assert_int_equal(f->proc, 0);
	assert_int_equal(f->run_id, 7);
	/* from bwa's end to now: 2 h x $1.00/h = $2.00 (the whole host) */
	assert_int_equal(f->start_ns, NOW - 2 * H);
	assert_int_equal(f->end_ns, NOW);
	assert_true(near(f->cost_usd, 2.0));
	assert_true(says(f, "snakemake (pid 100), the root of run #7, is alive and idle for 2.0 h: the 1 process "
			    "under it ended, the newest activity was bwa's (pid 101)"));
	free(r.f);

	/* the child ended exactly an hour ago: idle for the hour, reported ($1.00) */
	p[0].last_active_ns = NOW - 3 * H;
	p[1].end_ns = NOW - H;
	r = workers(p, 2);
	assert_int_equal(count_kind(&r, SW_WORKER_IDLE), 1);
	assert_true(near(r.f[0].cost_usd, 1.0));
	free(r.f);
	/* ended a second less than an hour ago: not yet */
	p[1].end_ns = NOW - H + S;
	r = workers(p, 2);
	assert_int_equal(r.n, 0);
	free(r.f);
}

static void a_worker_with_a_live_busy_child_is_not_stuck(void **state)
{
	struct sw_process p[2];
	struct result r;

	(void)state;
	p[0] = proc(100, -1, "/usr/bin/python3", "snakemake", NULL, NOW - 5 * H, NOW - 3 * H, 100 * MiB);
	p[0].run_root = true;
	p[0].run_id = 7;
	p[1] = proc(101, 0, "/usr/bin/bwa", "bwa", NULL, NOW - 4 * H, NOW - 10 * S, 2 * GiB);
	r = workers(p, 2);
	assert_int_equal(r.n, 0);
	free(r.f);
	/* the child alive but asleep for 2 h: not every process under the root has ended, not stuck */
	p[1].last_active_ns = NOW - 2 * H;
	r = workers(p, 2);
	assert_int_equal(r.n, 0);
	free(r.f);
	/* alone, with no child at all: stuck since its own last activity */
	r = workers(p, 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.f[0].kind, SW_WORKER_IDLE);
	assert_true(near(r.f[0].cost_usd, 3.0)); /* last active 3 h ago: 3 h x $1.00 */
	assert_true(says(&r.f[0], "is alive with no process under it and has been idle for 3.0 h"));
	free(r.f);
	/*
	 * a worker alive 2 days, idle 7 h, holding 2 GiB would also be an idle
	 * process holding memory: it is reported once, as the worker (7 h x $1.00)
	 */
	p[0].start_ns = NOW - 2 * DAY;
	p[0].last_active_ns = NOW - 7 * H;
	p[0].rss_bytes = 2 * GiB;
	r = workers(p, 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.f[0].kind, SW_WORKER_IDLE);
	assert_true(near(r.f[0].cost_usd, 7.0));
	free(r.f);
	/* a worker that has ended is no waste now */
	p[0].end_ns = NOW - H;
	r = workers(p, 1);
	assert_int_equal(r.n, 0);
	free(r.f);
}

/* ---- 5. forgotten interactive sessions ------------------------------------------------------- */

static void idle_jupyter_and_ssh_sessions_are_found_busy_ones_are_not(void **state)
{
	static struct sw_host h[1];
	struct sw_process p[18];
	struct sw_input in;
	struct result r;
	const struct sw_finding *f;

	(void)state;
	/* an ssh login: sshd, its session process, a login shell idle 5 h with vim idle 5.5 h (8 + 56 MiB) */
	p[0] = proc(10, -1, "/usr/sbin/sshd", "sshd", "/usr/sbin/sshd -D", NOW - 30 * DAY, NOW - MIN, 6 * MiB);
	p[1] = proc(300, 0, "/usr/sbin/sshd", "sshd: alice@pts/0", NULL, NOW - 6 * H, NOW - 5 * H, 4 * MiB);
	p[2] = proc(301, 1, "/usr/bin/bash", "-bash", "-bash", NOW - 6 * H, NOW - 5 * H, 8 * MiB);
	p[3] = proc(302, 2, "/usr/bin/vim", "vim", "vim notes.txt", NOW - 6 * H, NOW - 5 * H - 30 * MIN, 56 * MiB);
	/* Jupyter: the server and its kernel, idle 8 h; the kernel holds 1 GiB, alive 2 days */
	p[4] = proc(400, -1, "/usr/bin/python3.11", "jupyter-lab",
		    "/usr/bin/python3.11 /usr/local/bin/jupyter-lab --no-browser", NOW - 3 * DAY, NOW - 8 * H,
		    256 * MiB);
	p[5] = proc(401, 4, "/usr/bin/python3.11", "python3",
		    "python3 -m ipykernel_launcher -f /run/user/1000/jupyter/kernel-1.json", NOW - 2 * DAY,
		    NOW - 8 * H, GiB);
	/* tmux with a shell idle 6 h whose make ran a minute ago: busy */
	p[6] = proc(500, -1, "/usr/bin/tmux", "tmux: server", NULL, NOW - 2 * DAY, NOW - 6 * H, 4 * MiB);
	p[7] = proc(501, 6, "/usr/bin/zsh", "zsh", "zsh", NOW - 2 * DAY, NOW - 6 * H, 8 * MiB);
	p[8] = proc(502, 7, "/usr/bin/make", "make", "make -j8", NOW - 3 * H, NOW - MIN, 30 * MiB);
	/* a kernel on its own (an editor's), idle exactly 4 h, 512 MiB */
	p[9] = proc(600, -1, "/usr/bin/python3", "python3", "python3 -m ipykernel_launcher --f=x.json",
		    NOW - DAY, NOW - 4 * H, 512 * MiB);
	/* a shell under no sshd, tmux or screen: a script's, not a session */
	p[10] = proc(700, -1, "/bin/bash", "bash", "bash /opt/nightly.sh", NOW - 12 * H, NOW - 10 * H, 4 * MiB);
	/* a Python script whose name starts with jupyter_: not Jupyter */
	p[11] = proc(800, -1, "/usr/bin/python3", "python3", "python3 /home/a/jupyter_stats.py --in x",
		     NOW - 12 * H, NOW - 10 * H, 64 * MiB);
	/* RStudio's session, idle 5 h, 1 GiB */
	p[12] = proc(900, -1, "/usr/lib/rstudio-server/bin/rsession", "rsession", NULL, NOW - 2 * DAY,
		     NOW - 5 * H, GiB);
	/* a kernel idle 3 h 59 min 59 s: not yet */
	p[13] = proc(601, -1, "/usr/bin/python3", "python3", "python3 -m ipykernel_launcher", NOW - DAY,
		     NOW - 4 * H + S, 512 * MiB);
	/* an ended child of the ssh shell: its 1 GiB is no longer held, its end (6 h ago) is older */
	p[14] = proc(303, 2, "/usr/bin/less", "less", NULL, NOW - 6 * H, NOW - 6 * H, GiB);
	p[14].end_ns = NOW - 6 * H;
	/* screen (its executable screen-4.9.0, argv[0] "SCREEN"), su, then a root shell idle 4.5 h two below it */
	p[15] = proc(950, -1, "/usr/bin/screen-4.9.0", "SCREEN", NULL, NOW - 3 * DAY, NOW - 9 * H, 4 * MiB);
	p[16] = proc(951, 15, "/usr/bin/su", "su", "su -", NOW - 3 * DAY, NOW - 9 * H, 4 * MiB);
	p[17] = proc(952, 16, "/usr/bin/bash", "-bash", NULL, NOW - 3 * DAY, NOW - 4 * H - 30 * MIN, 8 * MiB);
	h[0] = host("h1", NULL, 0, 0.8);
	in = input(h, 1);
	in.procs = p;
	in.nprocs = 18;
	r = sweep(&in, NULL);
	assert_int_equal(count_kind(&r, SW_SESSION_IDLE), 5);
	/* nothing else: the kernel (1 GiB, 2 days, idle 8 h) is inside the Jupyter session */
	assert_int_equal(r.n, 5);
	/*
	 * Costs, $0.80/h x idle hours x the subtree's memory / 16 GiB:
	 *   jupyter-lab  8 h x (256 MiB + 1 GiB = 1.25 GiB) / 16 = 0.8 x 8 x 0.078125 = $0.50
	 *   rsession     5 h x 1 GiB / 16                       = 0.8 x 5 x 0.0625   = $0.25
	 *   kernel       4 h x 512 MiB / 16 GiB                 = 0.8 x 4 x 0.03125  = $0.10
	 *   -bash (ssh)  5 h x 64 MiB / 16 GiB                  = 0.8 x 5 / 256      = $0.015625
	 *   -bash (su)   4.5 h x 8 MiB / 16 GiB                 = 0.8 x 4.5 / 2048   = $0.00175781
	 */
	f = &r.f[0];
	assert_int_equal(f->proc, 4);
	assert_int_equal(f->rss_bytes, 1280 * MiB);
	assert_int_equal(f->start_ns, NOW - 8 * H);
	assert_true(near(f->cost_usd, 0.5));
	assert_true(says(f, "Jupyter server jupyter-lab (pid 400) ('/usr/bin/python3.11 /usr/local/bin/jupyter-lab "
			    "--no-browser') has been idle for 8.0 h, the 1 process under it at least as long, holding 1.2 GiB of "
			    "the host's 16.0 GiB memory"));
	f = &r.f[1];
	assert_int_equal(f->proc, 12);
	assert_true(near(f->cost_usd, 0.25));
	assert_true(says(f, "RStudio session rsession (pid 900) has been idle for 5.0 h"));
	f = &r.f[2];
	assert_int_equal(f->proc, 9);
	assert_true(near(f->cost_usd, 0.1));
	assert_true(says(f, "Jupyter kernel python3 (pid 600)"));
	f = &r.f[3];
	assert_int_equal(f->proc, 2);
	assert_int_equal(f->rss_bytes, 64 * MiB);
	assert_int_equal(f->start_ns, NOW - 5 * H);
	assert_true(near(f->cost_usd, 0.015625));
	assert_true(says(f, "shell -bash (pid 301) under sshd ('-bash') has been idle for 5.0 h"));
	assert_true(says(f, "idle for 5.0 h, the 2 processes under it at least as long, holding 64 MiB of"));
	f = &r.f[4];
	assert_int_equal(f->proc, 17);
	assert_true(near(f->cost_usd, 0.8 * 4.5 / 2048));
	assert_true(says(f, "shell -bash (pid 952) under screen has been idle for 4.5 h, holding 8 MiB of the host's "
			    "16.0 GiB memory"));
	free(r.f);

	/* vim typed into a minute ago: the ssh session is busy, and nothing else changes */
	p[3].last_active_ns = NOW - MIN;
	r = sweep(&in, NULL);
	assert_int_equal(count_kind(&r, SW_SESSION_IDLE), 4);
	for (size_t i = 0; i < r.n; i++)
		assert_int_not_equal(r.f[i].proc, 2);
	free(r.f);
}

/* ---- 6. idle processes holding memory ----------------------------------------------------------- */

static void an_idle_process_holding_a_gib_is_found_a_byte_less_is_not(void **state)
{
	static struct sw_host h[2];
	struct sw_process p[7];
	struct sw_input in;
	struct result r;
	const struct sw_finding *f;

	(void)state;
	/* started 25 h ago, idle 7 h, 1 GiB: $1.00 x 7 h x 1/16 = $0.4375 */
	p[0] = proc(10, -1, "/usr/bin/java", "java", "java -Xmx4g -jar cache.jar", NOW - 25 * H, NOW - 7 * H, GiB);
	p[1] = proc(11, -1, "/usr/bin/java", "java", NULL, NOW - 25 * H, NOW - 7 * H, GiB - 1);   /* a byte under */
	p[2] = proc(12, -1, "/usr/bin/java", "java", NULL, NOW - 23 * H, NOW - 7 * H, 2 * GiB);   /* too young */
	p[3] = proc(13, -1, "/usr/bin/java", "java", NULL, NOW - 25 * H, NOW - 5 * H, 2 * GiB);   /* idle 5 h */
	/* a parent idle 10 h waiting on a child that worked a minute ago: part of the work */
	p[4] = proc(14, -1, "/usr/bin/python3", "python3", NULL, NOW - 2 * DAY, NOW - 10 * H, 2 * GiB);
	p[5] = proc(15, 4, "/usr/bin/sort", "sort", NULL, NOW - 11 * H, NOW - MIN, 100 * MiB);
	/* on a host whose memory is unknown: priced, but its share, hence its cost, unknown */
	p[6] = proc(16, -1, "/usr/bin/java", "java", NULL, NOW - 2 * DAY, NOW - 7 * H, 2 * GiB);
	p[6].host = 1;
	h[0] = host("h1", NULL, 0, 1.0);
	h[1] = host("h2", NULL, 0, 1.0);
	h[1].host.memory_bytes = 0;
	in = input(h, 2);
	in.procs = p;
	in.nprocs = 7;
	r = sweep(&in, NULL);
	assert_int_equal(r.n, 2);
	f = &r.f[0];
	assert_int_equal(f->kind, SW_PROCESS_IDLE_MEMORY);
	assert_int_equal(f->proc, 0);
	assert_int_equal(f->rss_bytes, GiB);
	assert_int_equal(f->start_ns, NOW - 7 * H);
	assert_int_equal(f->end_ns, NOW);
	assert_true(near(f->observed_s, 7 * 3600));
	assert_true(near(f->cost_usd, 0.4375));
	assert_true(says(f, "java (pid 10) ('java -Xmx4g -jar cache.jar') holds 1.0 GiB of the host's 16.0 GiB "
			    "memory, alive for 25.0 h and idle for 7.0 h"));
	f = &r.f[1];
	assert_int_equal(f->proc, 6);
	assert_int_equal(f->host, 1);
	assert_true(near(f->price_per_hour, 1.0));
	assert_true(f->cost_usd < 0);
	assert_true(says(f, "of the host's unknown memory"));
	free(r.f);
	/* the memory taken from the host's newest beat when its identity has none: 32 GiB */
	{
		struct sw_beat b[1];

		add_beats(b, 0, NOW - MIN, MIN, 1, 1.0, 0, 0);
		b[0].mem_total_bytes = 32 * GiB;
		h[1].beats = b;
		h[1].nbeats = 1;
		r = sweep(&in, NULL);
		assert_int_equal(r.n, 2);
		/* 2 GiB / 32 GiB x 7 h x $1.00 = $0.4375: the same as p[0]'s, sorted by start then kind, host */
		assert_true(near(r.f[0].cost_usd, 0.4375) && near(r.f[1].cost_usd, 0.4375));
		assert_int_equal(r.f[0].host, 0);
		assert_int_equal(r.f[1].host, 1);
		free(r.f);
	}
}

/* ---- refusals ------------------------------------------------------------------------- */

static void inconsistent_input_is_refused(void **state)
{
	static struct sw_host h[1];
	struct sw_process p[2];
	static struct sw_finding dummy;
	struct sw_finding *out = &dummy;
	struct sw_config c;
	struct sw_input in;
	size_t n = 7;

	(void)state;
	sw_config_default(&c);
	h[0] = host("h1", NULL, 0, 1.0);
	p[0] = proc(1, 1, "/bin/a", "a", NULL, NOW - H, NOW - H, 0);
	p[1] = proc(2, 0, "/bin/b", "b", NULL, NOW - H, NOW - H, 0);
	in = input(h, 1);
	in.procs = p;
	in.nprocs = 2;
	/* parents that loop */
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	assert_null(out);
	assert_int_equal(n, 0);
	/* a host out of range */
	p[0].parent = -1;
	p[1].host = 1;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	p[1].host = 0;
	/* a parent out of range, or itself */
	p[1].parent = 2;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	p[1].parent = 1;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	p[1].parent = 0;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), 0);
	assert_null(out); /* nothing found */
	assert_int_equal(n, 0);
	/* a window that ends before it starts */
	in.since_ns = NOW + 1;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	in.since_ns = NOW - DAY;
	/* thresholds that cannot be */
	c.aws_window_days = 0;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.gcp_cpu_share = 1.5;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.run_idle_min_ns = 0;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.gcp_cpu_cores = NAN;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.reserved_mem_share = -0.1;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.reserved_min_cores = INFINITY;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	c.reserved_min_ns = 0;
	assert_int_equal(sw_sweep(&in, &c, NULL, &out, &n), -EINVAL);
	sw_config_default(&c);
	assert_int_equal(sw_sweep(NULL, &c, NULL, &out, &n), -EINVAL);
	assert_int_equal(sw_sweep(&in, NULL, NULL, &out, &n), -EINVAL);
	assert_int_equal(sw_sweep(&in, &c, NULL, NULL, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kinds_have_names_and_defaults_are_the_anchors),
		cmocka_unit_test(gcp_cpu_under_the_limit_97_percent_of_the_time_is_idle),
		cmocka_unit_test(gcp_cpu_under_the_limit_96_9_percent_of_the_time_is_not),
		cmocka_unit_test(gcp_network_under_2000_and_1000_bytes_per_second_95_percent_is_idle),
		cmocka_unit_test(gcp_needs_a_whole_day_observed_and_gaps_are_not_idle),
		cmocka_unit_test(hosts_are_priced_from_config_then_table_and_unpriced_come_last),
		cmocka_unit_test(aws_four_low_days_of_fourteen_are_idle_three_are_not),
		cmocka_unit_test(aws_a_day_counts_when_beats_cover_half_of_it),
		cmocka_unit_test(run_gaps_and_tails_count_from_the_minimum),
		cmocka_unit_test(a_step_using_a_quarter_of_its_allocation_is_found_a_hair_more_is_not),
		cmocka_unit_test(a_worker_whose_children_all_ended_an_hour_ago_is_stuck),
		cmocka_unit_test(a_worker_with_a_live_busy_child_is_not_stuck),
		cmocka_unit_test(idle_jupyter_and_ssh_sessions_are_found_busy_ones_are_not),
		cmocka_unit_test(an_idle_process_holding_a_gib_is_found_a_byte_less_is_not),
		cmocka_unit_test(inconsistent_input_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
