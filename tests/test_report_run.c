/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run report and the summary, from a small synthetic process table:
 * valid JSON, exactly the DESIGN.md fields in order, null for what is not
 * measured, the root's tree only, signals for kills and OOM kills (the
 * rules with steps: test_report_signals.c), every loss counted in
 * "dropped"; a summary that marks kills, collapses repeated siblings,
 * stays bounded and cannot drive a terminal.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"
#include "encode.h"
#include "json_parse.h"
#include "lake_members.h"
#include "proctab.h"
#include "report.h"
#include "schema.h"

#define ROOT 100
#define T0 1000ULL                      /* monotonic ns of the root's start */
#define REAL 1700000000000000000ULL     /* realtime offset */

static struct decoded dec;

/* ---- a tiny JSON validator (RFC 8259 grammar, UTF-8 well-formedness) ---- */

struct jp {
	const char *s;
	size_t n, i;
	int depth;
};

static bool jvalue(struct jp *p);

static void jws(struct jp *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static bool jlit(struct jp *p, const char *lit)
{
	size_t n = strlen(lit);

	if (p->n - p->i < n || memcmp(p->s + p->i, lit, n))
		return false;
	p->i += n;
	return true;
}

static bool jstring(struct jp *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return false;
	for (p->i++; p->i < p->n;) {
		unsigned char c = (unsigned char)p->s[p->i];
		int more;

		if (c == '"') {
			p->i++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (++p->i >= p->n)
				return false;
			c = (unsigned char)p->s[p->i++];
			if (c == 'u') {
				for (int k = 0; k < 4; k++, p->i++)
					if (p->i >= p->n || !strchr("0123456789abcdefABCDEF", p->s[p->i]) || !p->s[p->i])
						return false;
			} else if (!c || !strchr("\"\\/bfnrt", c)) {
				return false;
			}
			continue;
		}
		more = c < 0x80 ? 0 : c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : -1;
		if (more < 0)
			return false;
		p->i++;
		for (int k = 0; k < more; k++, p->i++)
			if (p->i >= p->n || ((unsigned char)p->s[p->i] & 0xc0) != 0x80)
				return false;
	}
	return false;
}

static size_t jdigits(struct jp *p)
{
	size_t start = p->i;

	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
		p->i++;
	return p->i - start;
}

static bool jnumber(struct jp *p)
{
	size_t start = p->i;

	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
		return false;
	if (p->s[p->i] == '0')
		p->i++;
	else
		jdigits(p);
	/* a fraction (the host's price per hour), an exponent: each with at least one digit */
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (!jdigits(p))
			return false;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (!jdigits(p))
			return false;
	}
	return p->i > start;
}

static bool jcontainer(struct jp *p, char open, char close, bool object)
{
	if (p->s[p->i] != open || ++p->depth > 64)
		return false;
	p->i++;
	jws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return true;
	}
	for (;;) {
		jws(p);
		if (object) {
			if (!jstring(p))
				return false;
			jws(p);
			if (p->i >= p->n || p->s[p->i++] != ':')
				return false;
		}
		if (!jvalue(p))
			return false;
		jws(p);
		if (p->i >= p->n)
			return false;
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i++] != close)
			return false;
		p->depth--;
		return true;
	}
}

static bool jvalue(struct jp *p)
{
	jws(p);
	if (p->i >= p->n)
		return false;
	switch (p->s[p->i]) {
	case '{': return jcontainer(p, '{', '}', true);
	case '[': return jcontainer(p, '[', ']', false);
	case '"': return jstring(p);
	case 't': return jlit(p, "true");
	case 'f': return jlit(p, "false");
	case 'n': return jlit(p, "null");
	default: return jnumber(p);
	}
}

static void assert_valid_json(const char *s, size_t n)
{
	struct jp p = { .s = s, .n = n };

	if (!jvalue(&p))
		fail_msg("invalid JSON near byte %zu: ...%.60s", p.i, s + (p.i > 20 ? p.i - 20 : 0));
	jws(&p);
	if (p.i != n)
		fail_msg("trailing bytes after the JSON value at %zu", p.i);
}

static void validator_refuses_broken_json(void **state)
{
	const char *bad[] = { "{", "{\"a\":}", "[1,]", "\"\x01\"", "\"\xff\"", "{\"a\":1}}", "tru", "[01x]", "\"\\q\"",
			      "1.", "[.5]", "1e", "[1.2.3]", "01.5" };
	const char *good[] = { "0.192", "[1.5e3,-2E-2,0]", "{\"p\":12}" };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_valid_json(good[i], strlen(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jp p = { .s = bad[i], .n = strlen(bad[i]) };
		bool ok = jvalue(&p);

		jws(&p);
		assert_false(ok && p.i == p.n);
	}
}

/* ---- building the table ---------------------------------------------- */

static struct proctab *table(uint32_t max)
{
	struct proctab *t = malloc(sizeof(*t));

	assert_non_null(t);
	assert_int_equal(proctab_init(t, max, ROOT, 1), 0);
	return t;
}

static void table_free(struct proctab *t)
{
	proctab_free(t);
	free(t);
}

static void do_exec(struct proctab *t, uint64_t ts, uint32_t tgid, uint32_t ppid, uint64_t start, const char *path,
		    const char *const *args)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = encode_exec(buf, sizeof(buf), ts, tgid, ppid, start, path, args);

	assert_true(n > 0);
	assert_int_equal(decode_record(&dec, TR_EXEC, buf, (uint32_t)n), 0);
	assert_int_equal(proctab_exec(t, &dec.u.exec, ts, NULL), 0);
}

static void do_fork(struct proctab *t, uint64_t ts, uint32_t parent, uint64_t pstart, uint32_t child)
{
	struct tr_fork f = encode_fork(ts, parent, pstart, child, ts);

	assert_int_equal(proctab_fork(t, &f, ts), 0);
}

static void do_exit(struct proctab *t, uint64_t ts, uint32_t tgid, uint64_t start, uint32_t ppid, uint32_t raw)
{
	struct tr_exit x = encode_exit(ts, tgid, start, ppid, raw);

	assert_int_equal(proctab_exit(t, &x, ts, NULL), 0);
}

static const char *const CMD[] = { "bash", "run.sh" };

/*
 *   100 bash run.sh            exit 0
 *   ├── 101 samtools sort      exit 3
 *   │   └── 104 (fork of 101)  orphaned to a subreaper (99), exit 0
 *   ├── 102 (fork, no exec)    SIGSEGV, core
 *   ├── 103 python3 hog.py     OOM-killed
 *   ├── 105 sleep              never exits
 *   └── 106 weird argv         exit 0
 *   300 cron                   not in the tree
 */
static struct proctab *sample_table(void)
{
	static const char *const a_root[] = { "bash", "run.sh", NULL };
	static const char *const a_sort[] = { "samtools", "sort", "in.bam", NULL };
	static const char *const a_hog[] = { "python3", "hog.py", NULL };
	static const char *const a_sleep[] = { "sleep", "1000", NULL };
	static const char *const a_weird[] = { "echo", "q\"uote", "ctl\x1b[31m\x01", "bad\xff\xfe", NULL };
	struct proctab *t = table(64);
	struct tr_oom oom = encode_oom(5000, 103, 4096, 8192);

	do_exec(t, 1100, ROOT, 99, T0, "/bin/bash", a_root);
	do_fork(t, 1200, ROOT, T0, 101);
	do_exec(t, 1210, 101, ROOT, 1200, "/usr/bin/samtools", a_sort);
	do_fork(t, 1300, 101, 1200, 104);
	do_exit(t, 2000, 101, 1200, ROOT, 3 << 8);
	do_exit(t, 2500, 104, 1300, 99, 0);
	do_fork(t, 1400, ROOT, T0, 102);
	do_exit(t, 3000, 102, 1400, ROOT, 11 | 0x80);
	do_fork(t, 1500, ROOT, T0, 103);
	do_exec(t, 1510, 103, ROOT, 1500, "/usr/bin/python3", a_hog);
	assert_int_equal(proctab_oom(t, &oom, 5000), 0);
	do_exit(t, 5001, 103, 1500, ROOT, 9);
	do_fork(t, 1600, ROOT, T0, 105);
	do_exec(t, 1610, 105, ROOT, 1600, "/bin/sleep", a_sleep);
	do_fork(t, 1700, ROOT, T0, 106);
	do_exec(t, 1710, 106, ROOT, 1700, "/bin/echo", a_weird);
	do_exit(t, 1800, 106, 1700, ROOT, 0);
	do_exec(t, 1250, 300, 1, 1250, "/usr/sbin/cron", NULL);
	do_exit(t, 9000, ROOT, T0, 99, 0);
	return t;
}

static struct report_input sample_input(void)
{
	struct report_input in = {
		.command = CMD,
		.ncommand = 2,
		.exit_known = true,
		.exit_code = 0,
		.start_ns = REAL + 900,
		.end_known = true,
		.end_ns = REAL + 9500,
		.mono_to_real_ns = REAL,
	};

	in.agent.max_processes = 64;
	in.agent.end_record = true;
	in.agent.control_end = true;
	return in;
}

/* The report of t as a NUL-terminated string (caller frees), checked to be valid JSON. */
static char *json_of(struct proctab *t, const struct report_input *in)
{
	struct obuf o;

	obuf_init_mem(&o, 64 << 20);
	assert_int_equal(report_json(&o, t, in), 0);
	assert_valid_json(o.buf, o.len);
	obuf_putc(&o, 0);
	return o.buf;
}

static char *summary_of(struct proctab *t, const struct report_input *in)
{
	struct obuf o;

	obuf_init_mem(&o, 64 << 20);
	assert_int_equal(report_summary(&o, t, in), 0);
	obuf_putc(&o, 0);
	return o.buf;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing: %s", needle);
}

static void assert_lacks(const char *hay, const char *needle)
{
	if (strstr(hay, needle))
		fail_msg("unexpected: %s", needle);
}

/* ---- the JSON report ------------------------------------------------- */

static void report_is_valid_json_with_the_run_fields(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_true(!strncmp(j, "{\"schema\":\"tracer.run.v1\",\"command\":[\"bash\",\"run.sh\"],\"exit_code\":0,"
			     "\"start_ns\":1700000000000000900,\"end_ns\":1700000000000009500,\"uid\":1000,"
			     "\"agent\":{\"dropped\":0,",
			     strlen("{\"schema\":\"tracer.run.v1\",\"command\":[\"bash\",\"run.sh\"],\"exit_code\":0,"
				    "\"start_ns\":1700000000000000900,\"end_ns\":1700000000000009500,\"uid\":1000,"
				    "\"agent\":{\"dropped\":0,")));
	assert_lacks(j, "\"host\""); /* none given */
	assert_contains(j, "\"steps\":[]");
	assert_int_equal(j[strlen(j) - 1], '\n');
	free(j);
	table_free(t);
}

/* The host it ran on (docs/processor.md, "Host identity") and the command's user, for tracer cost. */
static void report_carries_the_host_and_the_commands_user(void **state)
{
	struct proctab *t = sample_table(), *empty = table(4);
	struct report_input in = sample_input();
	struct hostid h = { .name = "login1.cluster", .cloud = "aws", .instance_type = "m6i.xlarge",
			    .instance_id = "i-0123456789abcdef0", .region = "us-east-1", .cpus = 4,
			    .memory_bytes = 16ULL << 30, .price_known = true,
			    .price_micro_usd = 192000 };
	struct hostid unknown = { .cpus = 2 };
	char *j;

	(void)state;
	in.host = &h;
	j = json_of(t, &in);
	assert_contains(j, "\"end_ns\":1700000000000009500,\"uid\":1000,\"host\":{\"name\":\"login1.cluster\","
			   "\"cloud\":\"aws\","
			   "\"instance_type\":\"m6i.xlarge\",\"instance_id\":\"i-0123456789abcdef0\","
			   "\"region\":\"us-east-1\",\"cpus\":4,\"memory_bytes\":17179869184,\"price_per_hour\":0.192},"
			   "\"agent\":{");
	free(j);
	/* a whole dollar is written as an integer; still a JSON number */
	h.price_micro_usd = 3 * 1000000;
	j = json_of(t, &in);
	assert_contains(j, "\"price_per_hour\":3}");
	free(j);
	/* what is unknown is null; a price that is unknown is absent, never 0 */
	in.host = &unknown;
	j = json_of(t, &in);
	assert_contains(j, "\"host\":{\"name\":null,\"cloud\":null,\"instance_type\":null,\"instance_id\":null,"
			   "\"region\":null,"
			   "\"cpus\":2,\"memory_bytes\":null},");
	assert_lacks(j, "price_per_hour");
	free(j);
	/* the command never seen: its user unknown */
	j = json_of(empty, &in);
	assert_contains(j, "\"uid\":null,\"host\":{");
	free(j);
	table_free(empty);
	table_free(t);
}

static void report_lists_the_roots_tree_only(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	for (int pid = 100; pid <= 106; pid++) {
		char frag[32];

		snprintf(frag, sizeof(frag), "{\"pid\":%d,", pid);
		assert_contains(j, frag);
	}
	assert_lacks(j, "\"pid\":300");
	assert_lacks(j, "cron");
	free(j);
	table_free(t);
}

static void process_has_the_design_fields_in_order_then_extras(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "{\"pid\":101,\"ppid\":100,\"start_ns\":1700000000000001200,\"end_ns\":1700000000000002000,"
			   "\"exe\":\"/usr/bin/samtools\",\"argv\":[\"samtools\",\"sort\",\"in.bam\"],\"cwd\":null,"
			   "\"tool\":\"samtools sort\",\"step\":null,\"exit_code\":3,\"signal\":0,\"core_dumped\":false,"
			   "\"oom_killed\":false,\"cpu_user_ns\":3000000,\"cpu_sys_ns\":1000000,"
			   "\"peak_rss_bytes\":1048576,\"read_bytes\":4096,\"write_bytes\":8192,\"rchar\":100,"
			   "\"wchar\":200,\"net_tx_bytes\":null,\"net_rx_bytes\":null,\"container_id\":null,"
			   "\"cgroup\":null,\"files\":null,\"container_runtime\":null,\"pod_uid\":null,\"pod_qos\":null,"
			   "\"slurm_job\":null,\"slurm_step\":null,\"slurm_task\":null,\"systemd_unit\":null,\"cgroup_id\":7,");
	assert_contains(j, "\"ppid_source\":\"fork\",\"exe_inherited\":false,");
	assert_contains(j, "\"cpu_ns\":4000000,\"cancelled_write_bytes\":0,");
	assert_contains(j, "\"voluntary_ctxt_switches\":0,\"involuntary_ctxt_switches\":0,\"minor_faults\":0,"
			   "\"major_faults\":0,\"run_delay_ns\":0,\"reclaim_ns\":null,\"threads\":1,"
			   "\"threads_truncated\":false"); /* reclaim: from the state of a traced process only */
	free(j);
	table_free(t);
}

static void every_process_carries_every_design_field(void **state)
{
	static const char *const keys[] = { "pid", "ppid", "start_ns", "end_ns", "exe", "argv", "cwd", "tool",
					    "step", "exit_code", "signal", "core_dumped", "oom_killed",
					    "cpu_user_ns", "cpu_sys_ns", "peak_rss_bytes", "read_bytes",
					    "write_bytes", "rchar", "wchar", "net_tx_bytes", "net_rx_bytes",
					    "container_id", "cgroup", "files" };
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in), *procs = strstr(j, "\"processes\":["), *end = strstr(j, "\"steps\":");
	int seen = 0;

	(void)state;
	for (char *p = strstr(procs, "{\"pid\":"); p && p < end; p = strstr(p + 1, "{\"pid\":")) {
		char *next = strstr(p + 1, "{\"pid\":"), *at = p;

		if (!next || next > end)
			next = end;
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			char quoted[40], *hit;

			snprintf(quoted, sizeof(quoted), "\"%s\":", keys[k]);
			hit = strstr(at, quoted);
			if (!hit || hit > next)
				fail_msg("process #%d: %s missing or out of order", seen, keys[k]);
			else
				at = hit;
		}
		seen++;
	}
	assert_int_equal(seen, 7);
	free(j);
	table_free(t);
}

static void unmeasured_fields_are_null_never_zero(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	/* 105 never exited: nothing of its exit is known */
	assert_contains(j, "{\"pid\":105,\"ppid\":100,\"start_ns\":1700000000000001600,\"end_ns\":null,"
			   "\"exe\":\"/bin/sleep\",\"argv\":[\"sleep\",\"1000\"],\"cwd\":null,\"tool\":\"sleep\","
			   "\"step\":null,\"exit_code\":null,\"signal\":null,\"core_dumped\":null,\"oom_killed\":false,"
			   "\"cpu_user_ns\":null,\"cpu_sys_ns\":null,\"peak_rss_bytes\":null,\"read_bytes\":null,"
			   "\"write_bytes\":null,\"rchar\":null,\"wchar\":null,");
	assert_lacks(j, "\"net_tx_bytes\":0");
	assert_lacks(j, "\"files\":[");
	assert_lacks(j, "\"cwd\":\"");
	free(j);
	table_free(t);
}

/*
 * Time in direct reclaim comes from the per-process state: a traced
 * process's exit says it, next to its run-queue wait; null where the
 * kernel could not measure it (TR_EXIT_NO_RECLAIM: no vmscan tracepoints,
 * or a record before version 5).
 */
static void reclaim_ns_is_the_exits_where_measured_and_null_where_not(void **state)
{
	struct proctab *t = table(8);
	struct report_input in = sample_input();
	struct tr_exit x = encode_exit(2000, ROOT, T0, 1, 0);
	char *j;

	(void)state;
	x.state_flags = TR_PSTATE_TRACED;
	x.run_delay_ns = 5000;
	x.reclaim_ns = 7000;
	assert_int_equal(proctab_exit(t, &x, 2000, NULL), 0);
	j = json_of(t, &in);
	assert_contains(j, "\"run_delay_ns\":5000,\"reclaim_ns\":7000,");
	free(j);
	table_free(t);

	t = table(8);
	x.flags |= TR_EXIT_NO_RECLAIM;
	x.reclaim_ns = 0;
	assert_int_equal(proctab_exit(t, &x, 2000, NULL), 0);
	j = json_of(t, &in);
	assert_contains(j, "\"run_delay_ns\":5000,\"reclaim_ns\":null,");
	free(j);
	table_free(t);
}

static void io_fields_are_null_when_the_kernel_has_no_io_accounting(void **state)
{
	struct proctab *t = table(8);
	struct report_input in = sample_input();
	struct tr_exit x = encode_exit(2000, ROOT, T0, 1, 0);
	char *j;

	(void)state;
	x.flags = TR_EXIT_NO_IO_ACCOUNTING | TR_EXIT_NO_SCHED_INFO | TR_EXIT_THREADS_TRUNCATED;
	assert_int_equal(proctab_exit(t, &x, 2000, NULL), 0);
	j = json_of(t, &in);
	assert_contains(j, "\"read_bytes\":null,\"write_bytes\":null,\"rchar\":null,\"wchar\":null,");
	assert_contains(j, "\"run_delay_ns\":null");
	assert_contains(j, "\"threads_truncated\":true"); /* more than 256 threads: the sums are partial */
	assert_contains(j, "\"peak_rss_bytes\":1048576,"); /* the rest is still measured */
	free(j);
	table_free(t);
}

static void argv_dropped_by_the_image_budget_is_null_and_flagged(void **state)
{
	static const char *const a[] = { "samtools", "sort", "in.bam", NULL };
	struct proctab *t = table(8);
	struct report_input in = sample_input();
	char *j;

	(void)state;
	t->image_budget = 0;
	do_exec(t, 1100, ROOT, 99, T0, "/usr/bin/samtools", a);
	in.agent.argv_dropped = t->st.argv_dropped;
	j = json_of(t, &in);
	assert_contains(j, "\"exe\":\"/usr/bin/samtools\",\"argv\":null,\"cwd\":null,\"tool\":\"samtools sort\",");
	assert_contains(j, "\"argv_truncated\":true");
	assert_contains(j, "\"argv_dropped\":1");
	free(j);
	table_free(t);
}

static void killed_process_has_no_exit_code_but_its_signal(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "\"exit_code\":null,\"signal\":11,\"core_dumped\":true,\"oom_killed\":false,");
	assert_contains(j, "\"exit_code\":null,\"signal\":9,\"core_dumped\":false,\"oom_killed\":true,");
	free(j);
	table_free(t);
}

static void forked_child_without_exec_reports_its_parents_image_as_inherited(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "{\"pid\":102,\"ppid\":100,\"start_ns\":1700000000000001400,\"end_ns\":1700000000000003000,"
			   "\"exe\":\"/bin/bash\",\"argv\":[\"bash\",\"run.sh\"],\"cwd\":null,\"tool\":\"run.sh\",");
	assert_contains(j, "\"ppid_source\":\"fork\",\"exe_inherited\":true,");
	free(j);
	table_free(t);
}

static void orphan_is_reported_under_its_original_parent(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "{\"pid\":104,\"ppid\":101,");
	free(j);
	table_free(t);
}

static void hostile_argv_bytes_are_escaped_in_the_report(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "\"argv\":[\"echo\",\"q\\\"uote\",\"ctl\\u001b[31m\\u0001\",\"bad\xef\xbf\xbd\xef\xbf\xbd\"]");
	free(j);
	table_free(t);
}

/* samtools sort's exit 3 is in no step and not the command's: bash run.sh read it and exited 0. */
static void signals_list_kills_and_oom_kills_not_a_tolerated_exit(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j = json_of(t, &in);

	(void)state;
	assert_contains(j, "\"signals\":[{\"kind\":\"killed\",\"pid\":102,\"step\":null,"
			   "\"tool\":\"run.sh\",\"cgroup\":null,\"signal\":11,\"core_dumped\":true},"
			   "{\"kind\":\"oom_kill\",\"pid\":103,\"step\":null,\"tool\":\"hog.py\",\"cgroup\":null,"
			   "\"anon_rss_kb\":4096,\"total_vm_kb\":8192,\"file_rss_kb\":0,\"shmem_rss_kb\":0,"
			   "\"memcg\":null,\"memcg_limit_bytes\":null,\"memcg_usage_bytes\":null}]}");
	free(j);
	table_free(t);
}

static void run_without_an_end_line_has_null_exit_code_and_end(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j;

	(void)state;
	in.exit_known = in.end_known = false;
	in.agent.interrupted = true;
	j = json_of(t, &in);
	assert_contains(j, "\"exit_code\":null,\"start_ns\":1700000000000000900,\"end_ns\":null,");
	assert_contains(j, "\"interrupted\":true");
	free(j);
	table_free(t);
}

static void empty_table_gives_an_empty_valid_report(void **state)
{
	struct proctab *t = table(4);
	struct report_input in = sample_input();
	char *j = json_of(t, &in), *s;

	(void)state;
	assert_contains(j, "\"processes\":[],\"steps\":[],\"signals\":[]}");
	s = summary_of(t, &in);
	assert_contains(s, "no process of the command was seen");
	free(s);
	free(j);
	table_free(t);
}

/* ---- losses ------------------------------------------------------------ */

static void dropped_counts_every_cause(void **state)
{
	struct report_agent a = { .kernel_drops = 1, .ring_drops = 20, .ring_resets = 300, .decode_errors = 4000,
				  .table_full = 50000, .no_memory = 600000 };

	(void)state;
	assert_int_equal(report_dropped(&a), 654321);
	a.kernel_drops = UINT64_MAX - 5;
	assert_int_equal(report_dropped(&a), UINT64_MAX); /* saturates, never wraps to a small number */
}

static void agent_breaks_dropped_down_by_cause(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *j;

	(void)state;
	in.agent.kernel_drops = 2;
	in.agent.ring_drops = 3;
	in.agent.decode_errors = 1;
	in.agent.decode_by_error[DECODE_ERR_LENGTH] = 1;
	j = json_of(t, &in);
	assert_contains(j, "\"agent\":{\"dropped\":6,\"kernel_drops\":2,\"ring_drops\":3,\"ring_resets\":0,"
			   "\"ring_bytes_discarded\":0,\"decode_errors\":1,\"decode_errors_by_reason\":{\"type\":0,"
			   "\"length\":1,");
	free(j);
	table_free(t);
}

/* ---- the summary ---------------------------------------------------- */

static void summary_marks_kills_and_oom_not_a_tolerated_exit(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *s = summary_of(t, &in);

	(void)state;
	assert_contains(s, "tracer: bash run.sh -- exit 0 after");
	assert_contains(s, "  exit 3\n");
	assert_lacks(s, "FAILED");
	assert_contains(s, "KILLED SIGSEGV (core)");
	assert_contains(s, "OOM-KILLED");
	assert_contains(s, "running");
	assert_contains(s, "\n100      run.sh");
	assert_contains(s, "\n  101      samtools sort");
	assert_contains(s, "\n    104      samtools sort"); /* grandchild, inherited image */
	assert_contains(s, "totals: 7 processes (0 failed, 1 killed, 1 OOM-killed, 1 tolerated non-zero exit, "
			   "1 without an exit record)");
	assert_contains(s, "agent: no record lost");
	assert_lacks(s, "cron");
	free(s);
	table_free(t);
}

static void summary_warns_loudly_about_lost_records(void **state)
{
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	char *s;

	(void)state;
	in.agent.kernel_drops = 5;
	in.agent.collector_lost = true;
	s = summary_of(t, &in);
	assert_contains(s, "WARNING: 5 RECORDS WERE LOST (kernel 5,");
	assert_contains(s, "WARNING: THE COLLECTOR STOPPED WITHOUT ITS END RECORD");
	free(s);
	table_free(t);
}

static void summary_cannot_drive_the_terminal(void **state)
{
	struct proctab *t = table(8);
	struct report_input in = sample_input();
	static const char *const evil[] = { "\x1b]0;pwned\x07", NULL };
	static const char *const cmd[] = { "x\x1b[2J", "\xc2\x9b" "31m" };
	char *s;

	(void)state;
	do_exec(t, 1100, ROOT, 99, T0, "/bin/\x1b[31mevil", evil);
	in.command = cmd;
	s = summary_of(t, &in);
	assert_lacks(s, "\x1b");
	assert_lacks(s, "\x07");
	assert_lacks(s, "\xc2\x9b"); /* C1 CSI */
	assert_contains(s, "x?[2J");
	free(s);
	table_free(t);
}

static void summary_collapses_repeated_siblings(void **state)
{
	static const char *const a_true[] = { "true", NULL };
	static const char *const a_false[] = { "false", NULL };
	struct proctab *t = table(256);
	struct report_input in = sample_input();
	char *s;
	uint32_t pid = 200;

	(void)state;
	do_exec(t, 1100, ROOT, 99, T0, "/bin/sh", NULL);
	for (int i = 0; i < 100; i++, pid++) {
		do_fork(t, 2000 + pid, ROOT, T0, pid);
		do_exec(t, 2000 + pid, pid, ROOT, 2000 + pid, "/bin/true", a_true);
		do_exit(t, 3000 + pid, pid, 2000 + pid, ROOT, 0);
	}
	for (int i = 0; i < 3; i++, pid++) {
		do_fork(t, 2000 + pid, ROOT, T0, pid);
		do_exec(t, 2000 + pid, pid, ROOT, 2000 + pid, "/bin/false", a_false);
		do_exit(t, 3000 + pid, pid, 2000 + pid, ROOT, 1 << 8);
	}
	s = summary_of(t, &in);
	assert_contains(s, "\n  200      true");
	assert_contains(s, "\n  201      true");
	assert_lacks(s, "\n  202      true");
	assert_contains(s, "\n  ... 98 more `true` (exit 0)\n");
	/* Three failures of one kind are few enough to show each. */
	assert_contains(s, "\n  300      false");
	assert_contains(s, "\n  302      false");
	free(s);
	table_free(t);
}

static void summary_of_a_huge_tree_stays_bounded(void **state)
{
	struct proctab *t = table(6000);
	struct report_input in = sample_input();
	char *s, *j;
	size_t lines = 0;

	(void)state;
	do_exec(t, 1100, ROOT, 99, T0, "/bin/sh", NULL);
	/* A chain 5000 deep: no collapsing possible, every level differs. */
	for (uint32_t i = 0; i < 5000; i++)
		do_fork(t, 2000 + i, i ? 1000 + i - 1 : ROOT, i ? 2000 + i - 1 : T0, 1000 + i);
	s = summary_of(t, &in);
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_true(lines <= SUMMARY_MAX_LINES + 6);
	assert_contains(s, "the summary stops here: 5001 processes in all");
	j = json_of(t, &in);
	assert_contains(j, "{\"pid\":5999,");
	free(j);
	free(s);
	table_free(t);
}

/* ---- formatting helpers ------------------------------------------------ */

static void durations_bytes_and_signals_read_naturally(void **state)
{
	char b[32];

	(void)state;
	report_format_duration(999, b, sizeof(b));
	assert_string_equal(b, "0us");
	report_format_duration(1500000, b, sizeof(b));
	assert_string_equal(b, "1ms");
	report_format_duration(3210000000ULL, b, sizeof(b));
	assert_string_equal(b, "3.21s");
	report_format_duration(62 * 1000000000ULL, b, sizeof(b));
	assert_string_equal(b, "1m02s");
	report_format_duration(7322 * 1000000000ULL, b, sizeof(b));
	assert_string_equal(b, "2h02m");
	report_format_bytes(512, b, sizeof(b));
	assert_string_equal(b, "512B");
	report_format_bytes(1536, b, sizeof(b));
	assert_string_equal(b, "1.4KiB"); /* tenths truncated */
	report_format_bytes(3ULL << 30, b, sizeof(b));
	assert_string_equal(b, "3.0GiB");
	report_format_bytes(UINT64_MAX, b, sizeof(b));
	assert_string_equal(b, "15.9EiB");
	assert_string_equal(report_signal_name(11, b, sizeof(b)), "SIGSEGV");
	assert_string_equal(report_signal_name(9, b, sizeof(b)), "SIGKILL");
	assert_string_equal(report_signal_name(35, b, sizeof(b)), "SIGRTMIN+1");
	assert_string_equal(report_signal_name(0, b, sizeof(b)), "signal 0");
	assert_string_equal(report_signal_name(127, b, sizeof(b)), "signal 127");
}

static void safe_text_replaces_what_a_terminal_would_obey(void **state)
{
	char b[16];

	(void)state;
	report_safe_text(b, sizeof(b), "a\nb\x1b" "c\xc3\xa9");
	assert_string_equal(b, "a?b?c\xc3\xa9");
	report_safe_text(b, 4, "abcdef");
	assert_string_equal(b, "abc");
	report_safe_text(b, 3, "a\xc3\xa9");
	assert_string_equal(b, "a"); /* a character is never cut in half */
}

/* ---- what the lake stores of a run report ----------------------------- */

/*
 * A run's report record as tracer run sends it (report_record: a report with steps, processes that failed,
 * were killed and OOM-killed, signals, a host with a price, a run key): each member of the report, of its run,
 * host and agent objects, of each step and each process is stored by the lake (lake/schema.c's maps:
 * lake_report_run_insert, lake_report_step_insert, lake_report_proc_insert) or skipped there with the reason;
 * each signal is kept whole; and each member those maps read is one the report has. A member added to the
 * report fails here until the lake stores it or says why not.
 */
static void every_member_of_a_run_report_is_stored_by_the_lake(void **state)
{
	static struct json_node nodes[8192];
	const struct lake_upsert *run = &lake_report_run_insert, *step = &lake_report_step_insert,
				 *proc = &lake_report_proc_insert, *sig = &lake_report_signal_insert;
	struct hostid h = { .cloud = "aws", .instance_type = "m6i.xlarge", .instance_id = "i-0abc", .region = "eu-west-1",
			    .cpus = 4, .memory_bytes = 16ULL << 30, .price_known = true, .price_micro_usd = 192000 };
	bool run_seen[128] = { false }, step_seen[128] = { false }, proc_seen[128] = { false },
	     sig_seen[128] = { false }, summary = false, detail = false;
	struct proctab *t = sample_table();
	struct report_input in = sample_input();
	struct obuf rep, sum, rec;
	struct steps steps;
	struct json_doc d;
	uint32_t signals;
	unsigned nsignals = 0;

	(void)state;
	assert_true(run->nfills <= 128 && step->nfills <= 128 && proc->nfills <= 128 && sig->nfills <= 128);
	assert_ptr_equal(lake_report_run_update.fills, run->fills);
	proctab_mark_tree(t);
	assert_int_equal(steps_init(&steps, 0, 1), 0);
	assert_int_equal(steps_build(&steps, t), 0);
	in.steps = &steps;
	in.host = &h;
	in.run_key = "0123456789abcdef";
	obuf_init_mem(&rep, 64 << 20);
	obuf_init_mem(&sum, 64 << 20);
	obuf_init_mem(&rec, 64 << 20);
	assert_int_equal(report_json(&rep, t, &in), 0);
	assert_int_equal(report_summary(&sum, t, &in), 0);
	assert_int_equal(report_record(&rec, &rep, &sum), 0);
	assert_int_equal(json_parse(&d, rec.buf, rec.len, nodes, 8192), 0);
	for (uint32_t i = nodes[0].first; i; i = nodes[i].next) { /* the record's root: the report and its summary */
		bool held = nodes[i].key_len == strlen(run->object) &&
			    !memcmp(d.text + nodes[i].key_start, run->object, nodes[i].key_len);

		for (unsigned k = 0; k < run->nfills; k++)
			if (run->fills[k].src.from == LF_ROOT_JSON && nodes[i].key_len == strlen(run->fills[k].src.json) &&
			    !memcmp(d.text + nodes[i].key_start, run->fills[k].src.json, nodes[i].key_len))
				held = summary = true;
		if (!held)
			fail_msg("member %.*s of a run report record: the lake stores it nowhere", (int)nodes[i].key_len,
				 d.text + nodes[i].key_start);
	}
	members_held(&d, nodes, member_node(&d, nodes, 0, run->object), run, run_seen);
	assert_true(elements_held(&d, nodes, step, step_seen) >= 3);
	assert_true(elements_held(&d, nodes, proc, proc_seen) >= 6);
	/* a signal is kept whole, as its detail; the members its columns hold are each in some signal */
	signals = member_node(&d, nodes, member_node(&d, nodes, 0, sig->object), sig->element);
	for (uint32_t e = signals ? nodes[signals].first : 0; e; e = nodes[e].next, nsignals++)
		for (uint32_t m = nodes[e].first; m; m = nodes[m].next) {
			char path[64];

			snprintf(path, sizeof(path), "%.*s", (int)nodes[m].key_len, d.text + nodes[m].key_start);
			lake_holds(sig, path, sig_seen);
		}
	for (unsigned k = 0; k < sig->nfills; k++)
		detail |= sig->fills[k].src.rule == LJ_OBJECT && !sig->fills[k].src.json;
	assert_true(summary && detail && nsignals >= 2);
	every_fill_seen(run, run_seen);
	every_fill_seen(step, step_seen);
	every_fill_seen(proc, proc_seen);
	every_fill_seen(sig, sig_seen);
	obuf_free(&rep);
	obuf_free(&sum);
	obuf_free(&rec);
	steps_free(&steps);
	table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(validator_refuses_broken_json),
		cmocka_unit_test(report_is_valid_json_with_the_run_fields),
		cmocka_unit_test(report_carries_the_host_and_the_commands_user),
		cmocka_unit_test(report_lists_the_roots_tree_only),
		cmocka_unit_test(process_has_the_design_fields_in_order_then_extras),
		cmocka_unit_test(every_process_carries_every_design_field),
		cmocka_unit_test(unmeasured_fields_are_null_never_zero),
		cmocka_unit_test(io_fields_are_null_when_the_kernel_has_no_io_accounting),
		cmocka_unit_test(reclaim_ns_is_the_exits_where_measured_and_null_where_not),
		cmocka_unit_test(argv_dropped_by_the_image_budget_is_null_and_flagged),
		cmocka_unit_test(killed_process_has_no_exit_code_but_its_signal),
		cmocka_unit_test(forked_child_without_exec_reports_its_parents_image_as_inherited),
		cmocka_unit_test(orphan_is_reported_under_its_original_parent),
		cmocka_unit_test(hostile_argv_bytes_are_escaped_in_the_report),
		cmocka_unit_test(signals_list_kills_and_oom_kills_not_a_tolerated_exit),
		cmocka_unit_test(run_without_an_end_line_has_null_exit_code_and_end),
		cmocka_unit_test(empty_table_gives_an_empty_valid_report),
		cmocka_unit_test(dropped_counts_every_cause),
		cmocka_unit_test(agent_breaks_dropped_down_by_cause),
		cmocka_unit_test(summary_marks_kills_and_oom_not_a_tolerated_exit),
		cmocka_unit_test(summary_warns_loudly_about_lost_records),
		cmocka_unit_test(summary_cannot_drive_the_terminal),
		cmocka_unit_test(summary_collapses_repeated_siblings),
		cmocka_unit_test(summary_of_a_huge_tree_stays_bounded),
		cmocka_unit_test(durations_bytes_and_signals_read_naturally),
		cmocka_unit_test(safe_text_replaces_what_a_terminal_would_obey),
		cmocka_unit_test(every_member_of_a_run_report_is_stored_by_the_lake),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
