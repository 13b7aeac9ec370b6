/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's reads for tracer export table (lake/read_export.c, issue 28)
 * on both engines, and PostgreSQL's streamed statements under them
 * (lake/sql.c, sql_prepare_streamed):
 *
 *   - over the same rows (plain INSERTs into a new lake of each), every
 *     export walk gives the same rows in the same order on SQLite and on
 *     PostgreSQL 15, with and without a window;
 *   - a window keeps the runs that started in it, their steps, processes
 *     and signals (a cluster job's under the run it is joined to), and the
 *     samples taken in it;
 *   - a streamed statement holds one row at a time: stepping into 200,000
 *     rows of 200 bytes allocates next to nothing, where the same
 *     statement run whole holds them all (which the test measures too, so
 *     that it can tell the two apart); while its rows are read nothing
 *     else runs on the connection, and a reset (its run cancelled) or its
 *     end hands the connection back;
 *   - a callback that stops a walk early leaves the connection usable.
 *
 * A throwaway cluster (tests/pg_cluster.h) for the whole file.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db.h"
#include "json.h"
#include "pg_cluster.h"
#include "schema.h"
#include "sql.h"
#include "store.h"

#define DAY 86400000000000LL
#define T0 1700000000000000000LL

struct one {
	struct pg_engines *e;
	struct store *lite, *pg;
};

static int group_setup(void **state)
{
	return pg_engines_setup(state, "test_lake_export");
}

static int group_teardown(void **state)
{
	return pg_engines_teardown(state);
}

/*
 * Run 1 (day 0): steps a, b; processes 100 (exited, sampled), 101 (running); an OOM kill. Run 2 (day 10):
 * its sbatch step sb1 submitted the cluster job run 4 (joined to it); a process and a signal each. Run 3:
 * no start. A kernel record's signal (no run), a sample of a process the lake has no row of.
 */
static const char *const rows_sql[] = {
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, pipeline_run_id, engine, "
	"state, detected_by, command, start_ns, end_ns, exit_code, processes, steps, signals, cpu_ns, host_cloud, "
	"host_cpus, host_price_per_hour) VALUES "
	"(1, 'h1', 'b1', 1, 'x', 'k1', 'p,\"q\"', 'pr1', 'snakemake', 'failed', 'snakemake', '[\"snakemake\",\"-j\"]', "
	"1700000000000000000, 1700000100000000000, 1, 2, 2, 1, 5000000000, 'aws', 4, 0.192), "
	"(2, 'h1', 'b1', 2, 'x', 'k2', 'p2', 'pr2', 'snakemake', 'succeeded', 'snakemake', NULL, "
	"1700864000000000000, 1700864060000000000, 0, 1, 2, 1, NULL, NULL, NULL, NULL), "
	"(3, 'h1', 'b1', 3, 'x', 'k3', 'p3', NULL, NULL, 'lost', 'snakemake', NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL)",
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, state, start_ns, joined_run_id, "
	"joined_step_id, submitted_ns, slurm_job_id, host_name) VALUES "
	"(4, 'h2', 'b2', 4, 'x', 'k4', 'succeeded', 1700864010000000000, 2, 'sb1', 1700864004000000000, '77', 'n7')",
	"INSERT INTO steps (run_id, idx, step_id, name, tools, start_ns, end_ns, failed, processes, cpu_ns, "
	"peak_rss_bytes, state) VALUES "
	"(1, 0, 'a', 'align', '[\"bwa\",\"samtools\"]', 1700000001000000000, 1700000050000000000, 1, 2, 400, 1000, "
	"'failed'), (1, 1, 'b', 'sort', '[]', NULL, NULL, 0, 0, NULL, NULL, NULL), "
	"(2, 0, 'sb1', 'submit', '[\"sbatch\"]', 1700864000000000000, 1700864005000000000, 0, 1, 1, 2, 'succeeded'), "
	"(2, 1, 'x', 'sort', '[]', 1700864001000000000, 1700864002000000000, 0, 1, 3, 4, 'succeeded'), "
	"(4, 0, 'j', 'job', '[]', 1700864010000000000, 1700864020000000000, 0, 1, 5, 6, 'succeeded')",
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, ppid, exe, argv, cwd, "
	"exit_ts_ns, exit_code, signal, core_dumped, utime_ns, stime_ns, runtime_ns, peak_rss_bytes, read_bytes, "
	"write_bytes, rchar, wchar, run_id, step, tool, cgroup_id) VALUES "
	"('h1', 'b1', 100, 5000, 1700000001000000000, 1700000040000000000, 1, '/bin/bwa', '[\"bwa\",\"mem\"]', '/w', "
	"40000, 0, 0, 0, 3000, 1000, 4000, NULL, 10, 20, 30, 40, 1, 'a', 'bwa', 7), "
	"('h1', 'b1', 101, 6000, 1700000002000000000, NULL, 100, '/bin/samtools', '[\"samtools\"]', '/w', NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'a', 'samtools', NULL), "
	"('h1', 'b1', 200, 7000, 1700864001000000000, 1700864002000000000, 1, '/bin/sort', '[\"sort\"]', '/w', 8000, "
	"0, 0, 0, 1, 1, 2, 9, 0, 0, 0, 0, 2, 'x', 'sort', NULL), "
	"('h2', 'b2', 300, 9000, 1700864011000000000, 1700864019000000000, 1, '/bin/job', '[\"job\"]', '/w', 10000, "
	"0, 0, 0, 1, 0, 5, 6, 0, 0, 0, 0, 4, 'j', 'job', NULL)",
	"INSERT INTO cgroups (host_id, boot_id, v1, cgroup_id, path, truncated, seq) VALUES "
	"('h1', 'b1', 0, 7, '/system.slice/x', 0, 1)",
	"INSERT INTO signals (host_id, boot_id, seq, run_id, source, kind, pid, start_ns, step, tool, detail) VALUES "
	"('h1', 'b1', 10, 1, 'live', 'oom_kill', 100, 5000, 'a', 'bwa', '{\"kind\":\"oom_kill\"}'), "
	"('h1', 'b1', 11, NULL, 'record', 'killed', 100, 5000, NULL, NULL, NULL), "
	"('h1', 'b1', 12, 2, 'live', 'failed', 200, 7000, 'x', 'sort', 'not json'), "
	"('h2', 'b2', 13, 4, 'live', 'stalled', 300, 9000, 'j', 'job', NULL)",
	"INSERT INTO samples (host_id, stream, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, rss_bytes, "
	"hiwater_rss_bytes, net_tx_bytes, received_ns) VALUES "
	"('h1', 0, 20, 'b1', 100, 5000, 1005000, 1000, 2048, 4096, 1, 0), "
	"('h1', 0, 21, 'b1', 100, 5000, 2005000, 2000, 3072, 8192, 2, 0), "
	"('h1', 0, 22, 'b1', 200, 7000, 1000007000, 5, 4096, NULL, NULL, 0), "
	"('h1', 0, 23, 'b1', 999, 1, 2, 3, 4, NULL, NULL, 0)",
};

static void exec_ok(struct store *s, const char *text)
{
	if (sql_exec(s->db, text) != SQL_OK)
		fail_msg("%.300s: %s", text, sql_errmsg(s->db));
}

static void fill(struct store *s, bool pg)
{
	if (pg) /* PostgreSQL's partitioned tables: the rows here are received at 0, the first day's partition */
		exec_ok(s, "SELECT lake_partition('samples', 0)");
	for (size_t i = 0; i < sizeof(rows_sql) / sizeof(rows_sql[0]); i++)
		exec_ok(s, rows_sql[i]);
}

/* Each test: the rows in a new lake in an SQLite file and in a new PostgreSQL database. */
static int setup(void **state)
{
	struct pg_engines *e = *state;
	struct one *o = calloc(1, sizeof(*o));
	char path[96], name[16], uri[256], err[512] = "";

	if (!o)
		return -1;
	o->e = e;
	e->n++;
	snprintf(path, sizeof(path), "%s/t%u.db", e->dir, e->n);
	snprintf(name, sizeof(name), "t%u", e->n);
	if (store_open(&o->lite, path, false, err, sizeof(err)) ||
	    pg_cluster_createdb(&e->pc, name, uri, sizeof(uri)) || store_open(&o->pg, uri, false, err, sizeof(err))) {
		fprintf(stderr, "setup: %s\n", err);
		store_close(o->lite);
		free(o);
		return -1;
	}
	fill(o->lite, false);
	fill(o->pg, true);
	*state = o;
	return 0;
}

static int teardown(void **state)
{
	struct one *o = *state;

	store_close(o->lite);
	store_close(o->pg);
	*state = o->e;
	free(o);
	return 0;
}

/* ---- each walk's rows as text ---------------------------------------------------- */

static void put_int(struct obuf *o, const char *name, struct store_int v)
{
	if (v.known)
		obuf_printf(o, " %s=%lld", name, (long long)v.v);
	else
		obuf_printf(o, " %s=null", name);
}

static void put_text(struct obuf *o, const char *name, const char *s)
{
	obuf_printf(o, " %s=", name);
	if (s)
		json_put_string(o, s, strlen(s));
	else
		obuf_puts(o, "null");
}

static int run_text(void *ctx, const struct store_run *r)
{
	struct obuf *o = ctx;

	obuf_printf(o, "run %lld", (long long)r->run_id);
	put_text(o, "key", r->run_key);
	put_text(o, "pipeline", r->pipeline);
	put_text(o, "command", r->command_json);
	put_int(o, "start", r->start_ns);
	put_int(o, "jobs", r->jobs);
	put_int(o, "steps", r->steps);
	put_int(o, "cpu", r->cpu_ns);
	obuf_printf(o, " price=%s%.17g\n", r->host_price_known ? "" : "unknown:", r->host_price_per_hour);
	return 0;
}

static int step_text(void *ctx, int64_t run_id, const struct store_step *s)
{
	struct obuf *o = ctx;

	obuf_printf(o, "step %lld idx=%lld", (long long)run_id, (long long)s->idx);
	put_text(o, "id", s->id);
	put_text(o, "tools", s->tools_json);
	put_int(o, "peak", s->peak_rss_bytes);
	put_text(o, "job", s->job_id);
	put_int(o, "queued", s->queued_ns);
	obuf_putc(o, '\n');
	return 0;
}

static int process_text(void *ctx, int64_t run_id, const struct store_process *p)
{
	struct obuf *o = ctx;

	obuf_printf(o, "process %lld %s %s %lld %lld", (long long)run_id, p->host_id, p->boot_id, (long long)p->tgid,
		    (long long)p->start_ns);
	put_text(o, "step", p->step);
	put_text(o, "argv", p->argv_json);
	put_int(o, "exit", p->exit_code);
	put_int(o, "runtime", p->runtime_ns);
	put_int(o, "peak", p->peak_rss_bytes);
	put_text(o, "source", p->peak_rss_source);
	put_int(o, "read", p->read_bytes);
	put_int(o, "tx", p->net_tx_bytes);
	put_text(o, "cgroup", p->cgroup);
	obuf_putc(o, '\n');
	return 0;
}

static int signal_text(void *ctx, const struct store_export_signal *e)
{
	struct obuf *o = ctx;

	obuf_printf(o, "signal %lld #%lld %s %s", (long long)e->run_id, (long long)e->signal_id, e->host_id,
		    e->boot_id);
	put_text(o, "kind", e->sig.kind);
	put_int(o, "pid", (struct store_int){ e->sig.has_pid, e->sig.pid });
	put_int(o, "start", e->sig.start_ns);
	put_text(o, "detail", e->sig.detail);
	obuf_putc(o, '\n');
	return 0;
}

static int sample_text(void *ctx, const struct store_export_sample *s)
{
	struct obuf *o = ctx;

	put_int(o, "sample run", s->run_id);
	obuf_printf(o, " %s %s %lld %lld", s->host_id, s->boot_id, (long long)s->tgid, (long long)s->start_ns);
	put_int(o, "ts", s->real_ns);
	put_int(o, "cpu", s->runtime_ns);
	put_int(o, "rss", s->rss_bytes);
	put_int(o, "tx", s->net_tx_bytes);
	obuf_putc(o, '\n');
	return 0;
}

/* Every walk over s in the window, as text (free it). */
static char *export_text(struct store *s, struct store_export_window w)
{
	struct obuf o;

	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(store_export_runs(s, w, run_text, &o), 0);
	assert_int_equal(store_export_steps(s, w, step_text, &o), 0);
	assert_int_equal(store_export_processes(s, w, process_text, &o), 0);
	assert_int_equal(store_export_signals(s, w, signal_text, &o), 0);
	assert_int_equal(store_export_samples(s, w, sample_text, &o), 0);
	obuf_putc(&o, 0);
	assert_int_equal(o.err, 0);
	return o.buf;
}

static const char everything[] =
	"run 1 key=\"k1\" pipeline=\"p,\\\"q\\\"\" command=\"[\\\"snakemake\\\",\\\"-j\\\"]\" "
	"start=1700000000000000000 jobs=0 steps=2 cpu=5000000000 price=0.192\n"
	"run 2 key=\"k2\" pipeline=\"p2\" command=null start=1700864000000000000 jobs=1 steps=2 cpu=null "
	"price=unknown:0\n"
	"run 3 key=\"k3\" pipeline=\"p3\" command=null start=null jobs=0 steps=null cpu=null price=unknown:0\n"
	"step 1 idx=0 id=\"a\" tools=\"[\\\"bwa\\\",\\\"samtools\\\"]\" peak=1000 job=null queued=null\n"
	"step 1 idx=1 id=\"b\" tools=\"[]\" peak=null job=null queued=null\n"
	"step 2 idx=1 id=\"x\" tools=\"[]\" peak=4 job=null queued=null\n"
	"step 2 idx=0 id=\"j\" tools=\"[]\" peak=6 job=\"77\" queued=6000000000\n"
	"process 1 h1 b1 100 5000 step=\"a\" argv=\"[\\\"bwa\\\",\\\"mem\\\"]\" exit=0 runtime=4000 peak=8192 "
	"source=\"sampled\" read=10 tx=2 cgroup=\"/system.slice/x\"\n"
	"process 1 h1 b1 101 6000 step=\"a\" argv=\"[\\\"samtools\\\"]\" exit=null runtime=null peak=null "
	"source=null read=null tx=null cgroup=null\n"
	"process 2 h1 b1 200 7000 step=\"x\" argv=\"[\\\"sort\\\"]\" exit=0 runtime=2 peak=9 source=\"exit\" read=0 "
	"tx=null cgroup=null\n"
	"process 2 h2 b2 300 9000 step=\"j\" argv=\"[\\\"job\\\"]\" exit=0 runtime=5 peak=6 source=\"exit\" read=0 "
	"tx=null cgroup=null\n"
	"signal 1 #1 h1 b1 kind=\"oom_kill\" pid=100 start=5000 detail=\"{\\\"kind\\\":\\\"oom_kill\\\"}\"\n"
	"signal 2 #3 h1 b1 kind=\"failed\" pid=200 start=7000 detail=null\n"
	"signal 2 #4 h2 b2 kind=\"stalled\" pid=300 start=9000 detail=null\n"
	" sample run=1 h1 b1 100 5000 ts=1700000001001000000 cpu=1000 rss=2048 tx=1\n"
	" sample run=1 h1 b1 100 5000 ts=1700000001002000000 cpu=2000 rss=3072 tx=2\n"
	" sample run=2 h1 b1 200 7000 ts=1700864002000000000 cpu=5 rss=4096 tx=null\n"
	" sample run=null h1 b1 999 1 ts=null cpu=3 rss=4 tx=null\n";

static void every_walk_gives_the_report_rows_on_both_engines(void **state)
{
	struct one *o = *state;
	struct store_export_window all = { .all = true };
	char *lite = export_text(o->lite, all), *pg = export_text(o->pg, all);

	assert_string_equal(lite, everything);
	assert_string_equal(pg, everything);
	free(lite);
	free(pg);
}

static void a_window_keeps_its_runs_with_their_rows_and_its_samples(void **state)
{
	struct one *o = *state;
	struct store_export_window w = { .since_ns = T0 + 5 * DAY };
	static const char want[] =
		"run 2 key=\"k2\" pipeline=\"p2\" command=null start=1700864000000000000 jobs=1 steps=2 cpu=null "
		"price=unknown:0\n"
		"step 2 idx=1 id=\"x\" tools=\"[]\" peak=4 job=null queued=null\n"
		"step 2 idx=0 id=\"j\" tools=\"[]\" peak=6 job=\"77\" queued=6000000000\n"
		"process 2 h1 b1 200 7000 step=\"x\" argv=\"[\\\"sort\\\"]\" exit=0 runtime=2 peak=9 source=\"exit\" "
		"read=0 tx=null cgroup=null\n"
		"process 2 h2 b2 300 9000 step=\"j\" argv=\"[\\\"job\\\"]\" exit=0 runtime=5 peak=6 source=\"exit\" "
		"read=0 tx=null cgroup=null\n"
		"signal 2 #3 h1 b1 kind=\"failed\" pid=200 start=7000 detail=null\n"
		"signal 2 #4 h2 b2 kind=\"stalled\" pid=300 start=9000 detail=null\n"
		" sample run=2 h1 b1 200 7000 ts=1700864002000000000 cpu=5 rss=4096 tx=null\n";
	char *lite = export_text(o->lite, w), *pg = export_text(o->pg, w);

	assert_string_equal(lite, want);
	assert_string_equal(pg, want);
	free(lite);
	free(pg);
	/* a window after everything: nothing, not even the run without a start */
	w.since_ns = T0 + 100 * DAY;
	lite = export_text(o->lite, w);
	pg = export_text(o->pg, w);
	assert_string_equal(lite, "");
	assert_string_equal(pg, "");
	free(lite);
	free(pg);
}

static int stop_at_first(void *ctx, int64_t run_id, const struct store_process *p)
{
	int *n = ctx;

	(void)run_id;
	(void)p;
	(*n)++;
	return 7;
}

static void a_walk_stopped_early_hands_the_connection_back(void **state)
{
	struct one *o = *state;
	struct store_export_window all = { .all = true };
	int n = 0;
	char *pg;

	assert_int_equal(store_export_processes(o->pg, all, stop_at_first, &n), 7);
	assert_int_equal(n, 1);
	pg = export_text(o->pg, all);
	assert_string_equal(pg, everything);
	free(pg);
}

/* Bytes malloc holds now (under ASan, its allocator's: mallinfo2 knows nothing of it). */
#ifdef __SANITIZE_ADDRESS__
size_t __sanitizer_get_current_allocated_bytes(void); /* libasan's (sanitizer/allocator_interface.h) */
static size_t heap_used(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
static size_t heap_used(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}
#endif

#define BIG_SQL "SELECT i, repeat('x', 200) FROM generate_series(1, 200000) AS g(i)"

static void a_streamed_statement_holds_one_row_at_a_time(void **state)
{
	struct one *o = *state;
	struct sql *db = o->pg->db;
	struct sql_stmt *st = NULL;
	size_t before, whole, streamed;
	int64_t rows = 0, sum = 0;
	int rc;

	/* run whole: every row in memory at the first step (what the measure below must be able to see) */
	assert_int_equal(sql_prepare(db, BIG_SQL, false, &st), SQL_OK);
	before = heap_used();
	assert_int_equal(sql_step(st), SQL_ROW);
	whole = heap_used() - before;
	sql_finalize(st);
	assert_true(whole > (size_t)40 << 20);

	/* streamed: the first step holds one row */
	assert_int_equal(sql_prepare_streamed(db, BIG_SQL, &st), SQL_OK);
	before = heap_used();
	assert_int_equal(sql_step(st), SQL_ROW);
	streamed = heap_used() - before;
	print_message("first step: %zu bytes run whole, %zu streamed\n", whole, streamed);
	assert_true(streamed < (size_t)1 << 20);
	/* nothing else runs on the connection meanwhile: said, not a protocol error */
	assert_int_equal(sql_exec(db, "SELECT 1"), SQL_E);
	assert_non_null(strstr(sql_errmsg(db), "streamed"));
	/* every row, in order; the memory stays flat all the way */
	do {
		rows++;
		sum += sql_col_i64(st, 0);
		assert_int_equal(sql_col_bytes(st, 1), 200);
		if (rows % 50000 == 0)
			assert_true(heap_used() - before < (size_t)1 << 20);
	} while ((rc = sql_step(st)) == SQL_ROW);
	assert_int_equal(rc, SQL_DONE);
	assert_int_equal(sql_step(st), SQL_DONE); /* done stays done until a reset */
	assert_int_equal(rows, 200000);
	assert_int_equal(sum, (int64_t)200000 * 200001 / 2);
	/* its end handed the connection back */
	assert_int_equal(sql_exec(db, "SELECT 1"), SQL_OK);

	/* reset halfway: its run cancelled, the connection usable, the statement runs again from its start */
	sql_reset(st);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 1);
	assert_int_equal(sql_step(st), SQL_ROW);
	sql_reset(st);
	assert_int_equal(sql_exec(db, "SELECT 1"), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 1);
	sql_finalize(st); /* mid-stream too */
	assert_int_equal(sql_exec(db, "SELECT 1"), SQL_OK);
}

static void a_streamed_statement_that_fails_says_why(void **state)
{
	struct one *o = *state;
	struct sql *db = o->pg->db;
	struct sql_stmt *st = NULL;

	/* fails after rows were sent: the division by zero at row 3 */
	assert_int_equal(sql_prepare_streamed(db, "SELECT 10 / (3 - i) FROM generate_series(1, 5) AS g(i)", &st),
			 SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 5);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_step(st), SQL_E);
	assert_non_null(strstr(sql_errmsg(db), "division by zero"));
	sql_finalize(st);
	assert_int_equal(sql_exec(db, "SELECT 1"), SQL_OK);
	/* SQLite: a streamed statement is any statement */
	assert_int_equal(sql_prepare_streamed(o->lite->db, "SELECT 1", &st), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_finalize(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_walk_gives_the_report_rows_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(a_window_keeps_its_runs_with_their_rows_and_its_samples, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_walk_stopped_early_hands_the_connection_back, setup, teardown),
		cmocka_unit_test_setup_teardown(a_streamed_statement_holds_one_row_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(a_streamed_statement_that_fails_says_why, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
