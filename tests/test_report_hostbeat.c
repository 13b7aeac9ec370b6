/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host heartbeat (report/hostbeat.c), known answers: /proc/stat,
 * /proc/meminfo, /proc/net/dev and the boot id as a 6.x kernel writes
 * them, and as they must not be misread - a field missing, a text cut
 * short by the read bound (mid-line and between lines), a counter that
 * went backwards, an interface that came or went, a number past 64 bits;
 * USER_HZ ticks to ns; two readings to one beat; the beat's JSON, whose
 * "host" object is TL_RUN's (report_write_host()).
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

#include "hostbeat.h"
#include "json.h"
#include "report.h"

#define SEC 1000000000ULL

/* A 2-CPU host's /proc/stat (6.x), its "intr" line shortened. */
static const char stat_text[] =
	"cpu  753649 591 222576 1761971 9937 0 4627 1034 0 0\n"
	"cpu0 376000 300 111000 880000 5000 0 2600 500 0 0\n"
	"cpu1 377649 291 111576 881971 4937 0 2027 534 0 0\n"
	"intr 166384812 12 9 0 0 0 0 0 0 0 0 0 0 156 0 0 0 0 0 0\n"
	"ctxt 287648315\n"
	"btime 1795836285\n"
	"processes 1224806\n"
	"procs_running 2\n"
	"procs_blocked 0\n"
	"softirq 70212113 8 22036006 1 1433126 0 0 4066 25306826 0 21432080\n";

static const char meminfo_text[] =
	"MemTotal:       24684084 kB\n"
	"MemFree:        20031260 kB\n"
	"MemAvailable:   23607784 kB\n"
	"Buffers:          262548 kB\n"
	"Cached:          3385464 kB\n"
	"SwapCached:            0 kB\n"
	"HugePages_Total:       0\n"
	"Hugepagesize:       2048 kB\n";

static const char netdev_text[] =
	"Inter-|   Receive                                                |  Transmit\n"
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
	"    lo: 1054267264 1797672    0    0    0     0          0         0 1054267264 1797672    0    0    0     0       0          0\n"
	"  eth0: 160106873    3323    0    0    0     0          0         0   155667    1944    0    0    0     0       0          0\n"
	"docker0:       0       0    0    0    0     0          0         0     5000      10    0    0    0     0       0          0\n"
	"veth3f2a1b9: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n";

static const char boot_id_text[] = "380a4178-126c-4a9f-8c42-9941f692f7a3\n";

static struct hostbeat_net *new_net(void)
{
	struct hostbeat_net *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	return n;
}

static struct hostbeat_reading *new_reading(void)
{
	struct hostbeat_reading *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	return r;
}

/* ---- /proc/stat ------------------------------------------------------- */

static void stat_reads_the_cpu_line_and_counts_the_online_cpus(void **state)
{
	struct hostbeat_cpu c;

	(void)state;
	assert_int_equal(hostbeat_parse_stat(stat_text, strlen(stat_text), &c), 0);
	assert_true(c.known);
	assert_int_equal(c.user, 753649);
	assert_int_equal(c.nice, 591);
	assert_int_equal(c.system, 222576);
	assert_int_equal(c.idle, 1761971);
	assert_int_equal(c.iowait, 9937);
	assert_int_equal(c.irq, 0);
	assert_int_equal(c.softirq, 4627);
	assert_int_equal(c.steal, 1034);
	assert_int_equal(c.cpus, 2);
}

static void stat_cut_inside_the_cpu_lines_knows_the_times_not_the_cpus(void **state)
{
	size_t first = strchr(stat_text, '\n') - stat_text + 1;
	const char *intr = strstr(stat_text, "intr");
	struct hostbeat_cpu c;

	(void)state;
	/* Cut in the middle of cpu1's line, and right after it (before "intr"): the count may be short. */
	assert_int_equal(hostbeat_parse_stat(stat_text, first + 60, &c), 0);
	assert_true(c.known);
	assert_int_equal(c.user, 753649);
	assert_int_equal(c.cpus, 0);
	assert_int_equal(hostbeat_parse_stat(stat_text, (size_t)(intr - stat_text), &c), 0);
	assert_int_equal(c.cpus, 0);
	/* One byte of "intr" is enough to know the cpuN lines ended... only once its line is whole. */
	assert_int_equal(hostbeat_parse_stat(stat_text, (size_t)(intr - stat_text) + 1, &c), 0);
	assert_int_equal(c.cpus, 0);
	assert_int_equal(hostbeat_parse_stat(stat_text, (size_t)(strchr(intr, '\n') - stat_text) + 1, &c), 0);
	assert_int_equal(c.cpus, 2);
	/* Cut inside the "cpu" line itself: nothing (never "75364" for 753649). */
	assert_int_equal(hostbeat_parse_stat(stat_text, 9, &c), -EINVAL);
	assert_false(c.known);
	assert_int_equal(hostbeat_parse_stat(stat_text, first - 1, &c), -EINVAL);
	assert_int_equal(hostbeat_parse_stat("", 0, &c), -EINVAL);
}

static void stat_without_a_field_or_with_a_bad_one_is_unknown(void **state)
{
	static const char *const bad[] = {
		"cpu  1 2 3 4 5 6 7\nintr 0\n",                        /* steal missing */
		"cpu  1 2 3 4 5 6 7 x\nintr 0\n",                      /* not a number */
		"cpu  1 2 3 4 5 6 7 -8\nintr 0\n",                     /* a sign */
		"cpu  1 2 3 4 5 6 7 8x 9 10\nintr 0\n",                /* glued */
		"cpu  1 2 3 4 5 6 7 18446744073709551616\nintr 0\n",   /* 2^64 */
		"cpu0 1 2 3 4 5 6 7 8\nintr 0\n",                      /* a CPU's line, not the sum */
		"intr 0\ncpu  1 2 3 4 5 6 7 8\n",                      /* not first */
		"cpux 1 2 3 4 5 6 7 8\n",
	};
	struct hostbeat_cpu c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (hostbeat_parse_stat(bad[i], strlen(bad[i]), &c) != -EINVAL || c.known)
			fail_msg("case %zu read: %s", i, bad[i]);
	/* Exactly 8 numbers (no guest columns) is enough; 2^64 - 1 is a number. */
	static const char max[] = "cpu 1 2 3 4 5 6 7 18446744073709551615\ncpu0 1\nintr\n";

	assert_int_equal(hostbeat_parse_stat(max, strlen(max), &c), 0);
	assert_int_equal(c.steal, UINT64_MAX);
	assert_int_equal(c.cpus, 1);
}

/* ---- /proc/meminfo ---------------------------------------------------- */

static void meminfo_reads_total_and_available_in_bytes(void **state)
{
	struct hostbeat_mem m;

	(void)state;
	assert_int_equal(hostbeat_parse_meminfo(meminfo_text, strlen(meminfo_text), &m), 0);
	assert_true(m.total_known && m.available_known);
	assert_int_equal(m.total_bytes, 24684084ULL * 1024);
	assert_int_equal(m.available_bytes, 23607784ULL * 1024);
}

static void meminfo_missing_or_cut_keys_are_unknown(void **state)
{
	static const char old_kernel[] = "MemTotal:        1024 kB\nMemFree:          512 kB\n"; /* before 3.14 */
	static const char no_unit[] = "MemTotal: 12\nMemAvailable: 1 MB\n";
	static const char huge[] = "MemTotal: 18446744073709551615 kB\n";
	const char *avail = strstr(meminfo_text, "MemAvailable");
	struct hostbeat_mem m;

	(void)state;
	assert_int_equal(hostbeat_parse_meminfo(old_kernel, strlen(old_kernel), &m), 0);
	assert_true(m.total_known);
	assert_false(m.available_known);
	assert_int_equal(m.total_bytes, 1024 * 1024);
	/* Cut inside MemAvailable's number: "23607" is not read as a value. */
	assert_int_equal(hostbeat_parse_meminfo(meminfo_text, (size_t)(avail - meminfo_text) + 20, &m), 0);
	assert_true(m.total_known);
	assert_false(m.available_known);
	/* Cut before its " kB": neither. */
	assert_int_equal(hostbeat_parse_meminfo(meminfo_text, 24, &m), -EINVAL);
	assert_false(m.total_known);
	assert_int_equal(hostbeat_parse_meminfo(no_unit, strlen(no_unit), &m), -EINVAL);
	assert_int_equal(hostbeat_parse_meminfo(huge, strlen(huge), &m), -EINVAL); /* x1024 overflows */
	assert_int_equal(hostbeat_parse_meminfo("", 0, &m), -EINVAL);
}

/* ---- /proc/net/dev ---------------------------------------------------- */

static void netdev_reads_every_interface_but_lo(void **state)
{
	struct hostbeat_net *n = new_net();

	(void)state;
	assert_int_equal(hostbeat_parse_netdev(netdev_text, strlen(netdev_text), n), 0);
	assert_true(n->known && n->complete);
	assert_int_equal(n->n, 3);
	assert_string_equal(n->v[0].name, "eth0");
	assert_int_equal(n->v[0].rx_bytes, 160106873);
	assert_int_equal(n->v[0].tx_bytes, 155667);
	assert_string_equal(n->v[1].name, "docker0");
	assert_int_equal(n->v[1].tx_bytes, 5000);
	assert_string_equal(n->v[2].name, "veth3f2a1b9"); /* a long name: no blank before it */
	assert_int_equal(n->v[2].rx_bytes, 1000);
	assert_int_equal(n->v[2].tx_bytes, 2000);
	free(n);
}

static void netdev_of_an_old_kernel_without_a_blank_after_the_colon(void **state)
{
	static const char old[] = "Inter-|   Receive  |  Transmit\n face |bytes |bytes\n"
				  "  eth0:4294967296 3 0 0 0 0 0 0 17 1 0 0 0 0 0 0\n";
	struct hostbeat_net *n = new_net();

	(void)state;
	assert_int_equal(hostbeat_parse_netdev(old, strlen(old), n), 0);
	assert_int_equal(n->n, 1);
	assert_int_equal(n->v[0].rx_bytes, 4294967296ULL);
	assert_int_equal(n->v[0].tx_bytes, 17);
	free(n);
}

static void netdev_cut_short_keeps_whole_lines_and_says_incomplete(void **state)
{
	const char *veth = strstr(netdev_text, "veth3f2a1b9");
	struct hostbeat_net *n = new_net();

	(void)state;
	/* Cut in veth's numbers: its "2000" could read as "20". It is left out, and the reading is incomplete. */
	assert_int_equal(hostbeat_parse_netdev(netdev_text, (size_t)(veth - netdev_text) + 35, n), 0);
	assert_true(n->known);
	assert_false(n->complete);
	assert_int_equal(n->n, 2);
	assert_string_equal(n->v[1].name, "docker0");
	/* Cut in the header: unknown. */
	assert_int_equal(hostbeat_parse_netdev(netdev_text, 40, n), -EINVAL);
	assert_false(n->known);
	free(n);
}

static void netdev_with_a_field_missing_or_a_strange_line_is_unknown(void **state)
{
	static const char *const bad[] = {
		/* tx bytes missing: "eth0: 8 numbers" */
		"I-|R|T\n f|b|b\n  eth0: 1 2 3 4 5 6 7 8\n",
		"I-|R|T\n f|b|b\n  eth0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", /* no colon */
		"I-|R|T\n f|b|b\n  : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",    /* no name */
		"I-|R|T\n f|b|b\n  eth0: 1 2 3 4 5 6 7 8 x 10 11 12 13 14 15 16\n",
		"I-|R|T\n f|b|b\n  a16bytesnameXXXX: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
		"I-|R|T\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",          /* one header line */
	};
	struct hostbeat_net *n = new_net();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (hostbeat_parse_netdev(bad[i], strlen(bad[i]), n) != -EINVAL || n->known)
			fail_msg("case %zu read: %s", i, bad[i]);
	free(n);
}

static void netdev_past_the_table_bound_is_incomplete(void **state)
{
	size_t cap = 64 + (HOSTBEAT_IFACES_MAX + 2) * 64, len = 0;
	char *text = malloc(cap);
	struct hostbeat_net *n = new_net();

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "I-|R|T\n f|b|b\n");
	for (unsigned i = 0; i < HOSTBEAT_IFACES_MAX + 2; i++)
		len += (size_t)snprintf(text + len, cap - len, "veth%u: %u 0 0 0 0 0 0 0 %u 0 0 0 0 0 0 0\n", i, i, i);
	assert_int_equal(hostbeat_parse_netdev(text, len, n), 0);
	assert_true(n->known);
	assert_false(n->complete);
	assert_int_equal(n->n, HOSTBEAT_IFACES_MAX);
	assert_string_equal(n->v[HOSTBEAT_IFACES_MAX - 1].name, "veth511");
	free(n);
	free(text);
}

/* ---- boot id ---------------------------------------------------------- */

static void boot_id_is_32_lowercase_hex_digits(void **state)
{
	char id[HOSTBEAT_BOOT_ID_HEX + 1];

	(void)state;
	assert_int_equal(hostbeat_parse_boot_id(boot_id_text, strlen(boot_id_text), id), 0);
	assert_string_equal(id, "380a4178126c4a9f8c429941f692f7a3");
	static const char *const bad[] = {
		"380a4178-126c-4a9f-8c42-9941f692f7a\n",  /* a digit short */
		"380a4178126c-4a9f-8c42-9941f692f7a3-\n", /* a dash moved */
		"380a4178-126c-4a9f-8c42-9941f692f7g3\n", /* not hex */
		"380a4178-126c-4a9f-8c42-9941f692f7a3 \n",
	};

	assert_int_equal(hostbeat_parse_boot_id(boot_id_text, strlen(boot_id_text) - 1, id), -EINVAL); /* cut */
	assert_string_equal(id, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(id, "x");
		if (hostbeat_parse_boot_id(bad[i], strlen(bad[i]), id) != -EINVAL || id[0])
			fail_msg("case %zu read: %s", i, bad[i]);
	}
	assert_int_equal(hostbeat_parse_boot_id("380A4178-126C-4A9F-8C42-9941F692F7A3\n", 37, id), 0);
	assert_string_equal(id, "380a4178126c4a9f8c429941f692f7a3");
}

/* ---- deltas ----------------------------------------------------------- */

static void ticks_become_nanoseconds_at_any_hz(void **state)
{
	(void)state;
	assert_int_equal(hostbeat_ticks_ns(1, 100), 10000000);
	assert_int_equal(hostbeat_ticks_ns(250, 100), 2500000000ULL);
	assert_int_equal(hostbeat_ticks_ns(1, 250), 4000000);
	assert_int_equal(hostbeat_ticks_ns(1, 300), 3333333); /* not a divisor of 10^9 */
	assert_int_equal(hostbeat_ticks_ns(301, 300), 1003333333);
	assert_int_equal(hostbeat_ticks_ns(7, 0), 0);
	assert_int_equal(hostbeat_ticks_ns(UINT64_MAX, 100), UINT64_MAX); /* saturates */
	assert_int_equal(hostbeat_ticks_ns(18446744073ULL * 100, 100), 18446744073ULL * SEC);
}

static void cpu_delta_sums_busy_and_idle_and_ignores_a_counter_going_back(void **state)
{
	struct hostbeat_cpu a = { .known = true, .user = 100, .nice = 10, .system = 50, .idle = 1000, .iowait = 40,
				  .irq = 1, .softirq = 2, .steal = 3 };
	struct hostbeat_cpu b = { .known = true, .user = 150, .nice = 11, .system = 70, .idle = 1100, .iowait = 35,
				  .irq = 2, .softirq = 4, .steal = 3 };
	struct hostbeat_cpu unknown = { .known = false };
	uint64_t busy, idle;

	(void)state;
	assert_true(hostbeat_cpu_delta(&a, &b, &busy, &idle));
	assert_int_equal(busy, 50 + 1 + 20 + 1 + 2 + 0);
	assert_int_equal(idle, 100); /* iowait went back 5: it moved 0, idle's 100 is not cut */
	assert_false(hostbeat_cpu_delta(&unknown, &b, &busy, &idle));
	assert_int_equal(busy, 0);
	assert_false(hostbeat_cpu_delta(&a, &unknown, &busy, &idle));
}

static void net_delta_counts_each_interface_and_backwards_is_zero(void **state)
{
	struct hostbeat_net *a = new_net(), *b = new_net();
	uint64_t rx, tx;

	(void)state;
	*a = (struct hostbeat_net){ .known = true, .complete = true, .n = 3 };
	a->v[0] = (struct hostbeat_iface){ "eth0", 1000, 500 };
	a->v[1] = (struct hostbeat_iface){ "veth1", 9000, 9000 };  /* re-created: its counters start again */
	a->v[2] = (struct hostbeat_iface){ "veth2", 100, 100 };    /* gone by b */
	*b = (struct hostbeat_net){ .known = true, .complete = true, .n = 3 };
	b->v[0] = (struct hostbeat_iface){ "veth1", 10, 8000 };    /* another order: found by name */
	b->v[1] = (struct hostbeat_iface){ "eth0", 1600, 700 };
	b->v[2] = (struct hostbeat_iface){ "veth3", 40, 30 };      /* came up during the interval */
	assert_true(hostbeat_net_delta(a, b, &rx, &tx));
	assert_int_equal(rx, 600 + 0 + 40);
	assert_int_equal(tx, 200 + 0 + 30);
	/* The previous reading was cut: veth3 may have been there, past the cut. It moves 0. */
	a->complete = false;
	assert_true(hostbeat_net_delta(a, b, &rx, &tx));
	assert_int_equal(rx, 600);
	assert_int_equal(tx, 200);
	a->known = false;
	assert_false(hostbeat_net_delta(a, b, &rx, &tx));
	assert_int_equal(rx, 0);
	free(a);
	free(b);
}

/* ---- beats ------------------------------------------------------------ */

/* Two looks at a host, 60 s apart, as the processor takes them. */
static void readings(struct hostbeat_reading *r0, struct hostbeat_reading *r1)
{
	static const char stat1[] = "cpu  759649 591 224576 1773971 9935 0 4727 1034 0 0\n"
				    "cpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\nintr 1\n";
	static const char net1[] = "Inter-|   Receive  |  Transmit\n face |bytes |bytes\n"
				   "    lo: 2054267264 0 0 0 0 0 0 0 2054267264 0 0 0 0 0 0 0\n"
				   "  eth0: 160206873 0 0 0 0 0 0 0 165667 0 0 0 0 0 0 0\n"
				   "docker0: 0 0 0 0 0 0 0 0 4000 0 0 0 0 0 0 0\n"
				   "veth3f2a1b9: 1500 0 0 0 0 0 0 0 2500 0 0 0 0 0 0 0\n";
	static const char mem1[] = "MemTotal:       24684084 kB\nMemFree:         1 kB\nMemAvailable:   22607784 kB\n";

	r0->real_ns = 1800000000ULL * SEC;
	r0->uptime_known = true;
	r0->uptime_ns = 1174500000000ULL;
	assert_int_equal(hostbeat_parse_boot_id(boot_id_text, strlen(boot_id_text), r0->boot_id), 0);
	assert_int_equal(hostbeat_parse_stat(stat_text, strlen(stat_text), &r0->cpu), 0);
	assert_int_equal(hostbeat_parse_meminfo(meminfo_text, strlen(meminfo_text), &r0->mem), 0);
	assert_int_equal(hostbeat_parse_netdev(netdev_text, strlen(netdev_text), &r0->net), 0);
	*r1 = *r0;
	r1->real_ns = r0->real_ns + 60 * SEC + 250;
	r1->uptime_ns = 1234500000000ULL;
	assert_int_equal(hostbeat_parse_stat(stat1, strlen(stat1), &r1->cpu), 0);
	assert_int_equal(hostbeat_parse_meminfo(mem1, strlen(mem1), &r1->mem), 0);
	assert_int_equal(hostbeat_parse_netdev(net1, strlen(net1), &r1->net), 0);
}

static const struct hostid aws_host = {
	.name = "node-7", .cloud = "aws", .instance_type = "m6i.xlarge", .instance_id = "i-0123456789abcdef0",
	.region = "us-east-1",
	.cpus = 4, .memory_bytes = 16106127360ULL, .price_known = true, .price_micro_usd = 192000,
};

static char *beat_json(const struct hostbeat *b)
{
	struct obuf o;
	char *s;

	obuf_init_mem(&o, 1 << 20);
	assert_int_equal(hostbeat_write(&o, b), 0);
	s = strndup(o.buf, o.len);
	assert_non_null(s);
	obuf_free(&o);
	return s;
}

static void a_beat_is_the_difference_of_two_readings(void **state)
{
	struct hostbeat_reading *r0 = new_reading(), *r1 = new_reading();
	struct hostbeat_state *s = calloc(1, sizeof(*s));
	struct hostbeat b;
	char *json;

	(void)state;
	assert_non_null(s);
	readings(r0, r1);
	hostbeat_start(s, 100, r0);
	hostbeat_next(s, r1, &b);
	b.runs = 2;
	b.steps = 5;
	b.processes = 37;
	b.host = &aws_host;
	json = beat_json(&b);
	/*
	 * busy: user +6000, system +2000, softirq +100 ticks at 100 Hz = 81 s; idle: +12000, iowait -2 (0) = 120 s.
	 * used: (24684084 - 22607784) KiB. net: eth0 +100000/+10000, docker0 tx back (0), veth +500/+500.
	 */
	assert_string_equal(json,
		"{\"schema\":\"tracer.host.v1\",\"beat\":1,\"boot_id\":\"380a4178126c4a9f8c429941f692f7a3\","
		"\"start_ns\":1800000000000000000,\"end_ns\":1800000060000000250,\"uptime_s\":1234.5,\"cpus\":2,"
		"\"cpu_busy_ns\":81000000000,\"cpu_idle_ns\":120000000000,\"mem_total_bytes\":25276502016,"
		"\"mem_used_bytes\":2126131200,\"net_rx_bytes\":100500,\"net_tx_bytes\":10500,"
		"\"runs\":2,\"steps\":5,\"processes\":37,"
		"\"host\":{\"name\":\"node-7\",\"cloud\":\"aws\",\"instance_type\":\"m6i.xlarge\","
		"\"instance_id\":\"i-0123456789abcdef0\",\"region\":\"us-east-1\",\"cpus\":4,\"memory_bytes\":16106127360,"
		"\"price_per_hour\":0.192}}");
	free(json);
	free(r0);
	free(r1);
	free(s);
}

static void beats_are_numbered_and_cover_time_without_gaps(void **state)
{
	struct hostbeat_reading *r0 = new_reading(), *r1 = new_reading(), *r2;
	struct hostbeat_state *s = calloc(1, sizeof(*s));
	struct hostbeat b1, b2;

	(void)state;
	assert_non_null(s);
	readings(r0, r1);
	r2 = new_reading();
	*r2 = *r1;
	r2->real_ns += 60 * SEC;
	hostbeat_start(s, 100, r0);
	hostbeat_next(s, r1, &b1);
	hostbeat_next(s, r2, &b2);
	assert_int_equal(b1.beat, 1);
	assert_int_equal(b2.beat, 2);
	assert_int_equal(b2.start_ns, b1.end_ns);
	assert_int_equal(b2.end_ns, b1.end_ns + 60 * SEC);
	/* Nothing moved between r1 and r2: zeros, not nulls. */
	assert_true(b2.cpu_known && b2.net_known);
	assert_int_equal(b2.cpu_busy_ns, 0);
	assert_int_equal(b2.net_rx_bytes, 0);
	free(r0);
	free(r1);
	free(r2);
	free(s);
}

static void a_missing_file_makes_its_fields_null_and_the_beat_still_goes(void **state)
{
	struct hostbeat_reading *r0 = new_reading(), *r1 = new_reading();
	struct hostbeat_state *s = calloc(1, sizeof(*s));
	struct hostbeat b;
	char *json;

	(void)state;
	assert_non_null(s);
	readings(r0, r1);
	/* No /proc/stat now, no /proc/net/dev before, no MemAvailable, no boot id, no uptime. */
	assert_int_equal(hostbeat_parse_stat("", 0, &r1->cpu), -EINVAL);
	assert_int_equal(hostbeat_parse_netdev("", 0, &r0->net), -EINVAL);
	r1->mem.available_known = false;
	r1->boot_id[0] = 0;
	r1->uptime_known = false;
	hostbeat_start(s, 100, r0);
	hostbeat_next(s, r1, &b);
	json = beat_json(&b);
	assert_string_equal(json,
		"{\"schema\":\"tracer.host.v1\",\"beat\":1,\"boot_id\":null,"
		"\"start_ns\":1800000000000000000,\"end_ns\":1800000060000000250,\"uptime_s\":null,\"cpus\":null,"
		"\"cpu_busy_ns\":null,\"cpu_idle_ns\":null,\"mem_total_bytes\":25276502016,"
		"\"mem_used_bytes\":null,\"net_rx_bytes\":null,\"net_tx_bytes\":null,"
		"\"runs\":0,\"steps\":0,\"processes\":0,\"host\":null}");
	free(json);
	/* An unknown clock tick: CPU times unknown, the rest as always. */
	readings(r0, r1);
	hostbeat_start(s, 0, r0);
	hostbeat_next(s, r1, &b);
	assert_false(b.cpu_known);
	assert_true(b.cpus_known && b.net_known && b.mem_used_known);
	free(r0);
	free(r1);
	free(s);
}

static void the_host_object_is_the_one_tl_run_carries(void **state)
{
	struct hostbeat_reading *r0 = new_reading(), *r1 = new_reading();
	struct hostbeat_state *s = calloc(1, sizeof(*s));
	struct hostid unknown = { .cpus = 2 };
	struct hostbeat b;
	struct obuf o;
	struct json j;
	char *json;

	(void)state;
	assert_non_null(s);
	readings(r0, r1);
	hostbeat_start(s, 100, r0);
	hostbeat_next(s, r1, &b);
	b.host = &unknown;
	json = beat_json(&b);
	obuf_init_mem(&o, 4096);
	json_init(&j, &o);
	json_object_begin(&j);
	report_write_host(&j, &unknown);
	json_object_end(&j);
	assert_int_equal(o.err, 0);
	o.buf[o.len - 1] = 0; /* without the closing brace */
	assert_non_null(strstr(json, o.buf + 1)); /* "host":{...} byte for byte; no price: absent, as in TL_RUN */
	assert_non_null(strstr(json, ",\"host\":{\"name\":null,\"cloud\":null,"));
	assert_null(strstr(json, "price_per_hour"));
	obuf_free(&o);
	free(json);
	free(r0);
	free(r1);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat_reads_the_cpu_line_and_counts_the_online_cpus),
		cmocka_unit_test(stat_cut_inside_the_cpu_lines_knows_the_times_not_the_cpus),
		cmocka_unit_test(stat_without_a_field_or_with_a_bad_one_is_unknown),
		cmocka_unit_test(meminfo_reads_total_and_available_in_bytes),
		cmocka_unit_test(meminfo_missing_or_cut_keys_are_unknown),
		cmocka_unit_test(netdev_reads_every_interface_but_lo),
		cmocka_unit_test(netdev_of_an_old_kernel_without_a_blank_after_the_colon),
		cmocka_unit_test(netdev_cut_short_keeps_whole_lines_and_says_incomplete),
		cmocka_unit_test(netdev_with_a_field_missing_or_a_strange_line_is_unknown),
		cmocka_unit_test(netdev_past_the_table_bound_is_incomplete),
		cmocka_unit_test(boot_id_is_32_lowercase_hex_digits),
		cmocka_unit_test(ticks_become_nanoseconds_at_any_hz),
		cmocka_unit_test(cpu_delta_sums_busy_and_idle_and_ignores_a_counter_going_back),
		cmocka_unit_test(net_delta_counts_each_interface_and_backwards_is_zero),
		cmocka_unit_test(a_beat_is_the_difference_of_two_readings),
		cmocka_unit_test(beats_are_numbered_and_cover_time_without_gaps),
		cmocka_unit_test(a_missing_file_makes_its_fields_null_and_the_beat_still_goes),
		cmocka_unit_test(the_host_object_is_the_one_tl_run_carries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
