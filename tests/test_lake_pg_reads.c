/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's reads on both engines: every reading statement (store.c's
 * from "---- reading" on, and those of read_tune.c, read_sweep.c and
 * read_web.c) prepares on PostgreSQL 15 and SQLite, and over the same rows
 * (plain INSERTs into a new lake of each, lake/schema.c's DDL) gives the
 * same rows in the same order, each column of the same type and value as
 * sql_col_* read it. The JSON the reads now take apart in C
 * (lake/read_json.c) gives what SQLite's json1 gave: the joined command
 * and tools, and the stored report with its state, signals and tune set.
 * A throwaway cluster (tests/pg_cluster.h) for the whole file.
 */
#include <errno.h>
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
#include "read_json.h"
#include "schema.h"
#include "sql.h"

struct one {
	struct pg_engines *e;
	struct sql *lite, *pg;
};

static int group_setup(void **state)
{
	return pg_engines_setup(state, "test_lake_pg_reads");
}

static int group_teardown(void **state)
{
	return pg_engines_teardown(state);
}

static void exec_ok(struct sql *db, const char *text)
{
	if (sql_exec(db, text) != SQL_OK)
		fail_msg("%.300s: %s", text, sql_errmsg(db));
}

/* A new lake of this version on db: lake/schema.c's DDL for its engine. */
static int make_lake(struct sql *db, bool pg)
{
	struct obuf o;
	int rc;

	obuf_init_mem(&o, 1u << 20);
	rc = pg ? lake_schema_pg(0, LAKE_SCHEMA_VERSION, &o) : lake_schema_sqlite(0, LAKE_SCHEMA_VERSION, &o);
	/* PostgreSQL's partitioned tables: the rows here are received at 0, the first day's partition */
	for (unsigned i = 0; pg && i < lake_ntables; i++)
		if (lake_tables[i].partitioned)
			obuf_printf(&o, "SELECT lake_partition('%s', 0);\n", lake_tables[i].name);
	obuf_putc(&o, '\0');
	if (!rc && !o.err && sql_exec(db, "BEGIN") == SQL_OK && sql_exec(db, o.buf) == SQL_OK &&
	    sql_exec(db, "COMMIT") == SQL_OK)
		rc = 0;
	else
		rc = -1;
	if (rc)
		fprintf(stderr, "the lake's DDL: %s\n", sql_errmsg(db));
	obuf_free(&o);
	return rc;
}

/* Each test: a new lake in an SQLite file and one in a new PostgreSQL database. */
static int setup(void **state)
{
	struct pg_engines *e = *state;
	struct one *o = calloc(1, sizeof(*o));
	char path[96], name[16], uri[256], err[256] = "";

	if (!o)
		return -1;
	o->e = e;
	e->n++;
	snprintf(path, sizeof(path), "%s/t%u.db", e->dir, e->n);
	snprintf(name, sizeof(name), "t%u", e->n);
	if (sql_open_sqlite(&o->lite, path, false, 1000, err, sizeof(err)) ||
	    pg_cluster_createdb(&e->pc, name, uri, sizeof(uri)) ||
	    sql_open_pg(&o->pg, uri, false, 5000, err, sizeof(err)) ||
	    make_lake(o->lite, false) || make_lake(o->pg, true)) {
		fprintf(stderr, "setup: %s\n", err);
		sql_close(o->lite);
		sql_close(o->pg);
		free(o);
		return -1;
	}
	*state = o;
	return 0;
}

static int teardown(void **state)
{
	struct one *o = *state;

	sql_close(o->lite);
	sql_close(o->pg);
	*state = o->e;
	free(o);
	return 0;
}

/* The reading statements of store.c. */
static const enum stmt_id reads[] = {
	ST_RUNS_LIST, ST_RUN_BY_ID, ST_RUN_BY_KEY, ST_RUN_BY_NAME, ST_RUN_STEPS_LIST, ST_RUN_PROCS_LIST,
	ST_PROC_FILES_LIST, ST_RUN_SIGNALS_LIST, ST_RUN_REPORT_JSON,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void prepares(struct sql *db, const char *sql)
{
	struct sql_stmt *st = NULL;

	if (sql_prepare(db, sql, false, &st) != SQL_OK)
		fail_msg("%s: %s\n%s", db == NULL ? "?" : "prepare", sql_errmsg(db), sql);
	sql_finalize(st);
}

static void every_read_prepares_on_both_engines(void **state)
{
	struct one *o = *state;
	const struct lake_read *lists[] = { lake_tune_sql, lake_sweep_sql, lake_web_sql };
	unsigned n = 0, own = 0;

	for (size_t i = 0; i < N(reads); i++) {
		prepares(o->lite, lake_stmt_sql(reads[i]));
		prepares(o->pg, lake_stmt_sql(reads[i]));
		n++;
	}
	for (size_t l = 0; l < N(lists); l++)
		for (const struct lake_read *r = lists[l]; r->sql; r++, n++) {
			prepares(o->lite, lake_read_text(r, o->lite));
			prepares(o->pg, lake_read_text(r, o->pg));
			own += r->pg != NULL;
		}
	assert_int_equal(n, N(reads) + 10 + 3 + 3);
	assert_int_equal(own, 2); /* live_sql's and processes_sql's newest sample: a LATERAL join on PostgreSQL */
}

/* ---- the same rows in both lakes -------------------------------------------------------------------- */

/* A run report's record: the payload is bound (a blob is written differently in each engine's SQL). */
static const char report_payload[] =
	"{\"schema\": \"tracer.run.v1\", \"report\": {\"schema\": \"tracer.run.v1\", \"state\": \"running\", "
	"\"command\": [\"snakemake\", \"-j\", 4], \"note\": \"caf\\u00e9 \\\"q\\\"\", \"n\": 1.50E+2, "
	"\"signals\": [{\"kind\": \"oom_kill\", \"pid\": 101}], \"tune\": {\"old\": true}, \"end\": [ 1 , 2 ]}}";

static const char *const rows_sql[] = {
	"INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns, batches, records, last_batch_hash) VALUES "
	"('h1', 100, 9000, 3, 40, 'bh1'), ('h2', 200, 8000, 1, 5, NULL)",
	"INSERT INTO batches (hash, host_id, key_id, boot_id, batch_seq, first_seq, last_seq, nrecords, compression, "
	"body_len, raw_len, wire_len, created_ns, mono_to_real_ns, prev_hash, chain, received_ns) VALUES "
	"('bh1', 'h1', 'k', 'bt1', 1, 1, 40, 40, 0, 1, 1, 1, 1000, 0, '', 'c', 1250)",
	"INSERT INTO gaps (host_id, from_seq, to_seq, found_ns, batch_hash, filled) VALUES "
	"('h1', 5, 9, 1, 'bh1', 2), ('h1', 20, 20, 1, 'bh1', 1)",
	"INSERT INTO agent_counters (host_id, seq, boot_id, ts_ns, kernel_drops, kernel_state_drops, ring_drops, "
	"records_copied, bad_consumer_pos, kernel_drops_by_type, ring_drops_by_type) VALUES "
	"('h1', 1, 'bt1', 1, 5, 0, 6, 0, 0, '[]', '[]'), ('h1', 2, 'bt1', 2, 7, 0, 8, 0, 0, '[]', '[]')",
	/* h1's newest counters: of a new stream, a lower seq, received later */
	"INSERT INTO agent_counters (host_id, stream, seq, received_ns, boot_id, ts_ns, kernel_drops, "
	"kernel_state_drops, ring_drops, records_copied, bad_consumer_pos, kernel_drops_by_type, ring_drops_by_type) "
	"VALUES ('h1', 9, 1, 5, 'bt1', 3, 1, 0, 2, 0, 0, '[]', '[]')",
	"INSERT INTO losses (host_id, seq, reason, first_seq, last_seq, records, bytes) VALUES "
	"('h1', 3, 'evicted', 1, 3, 3, 100), ('h1', 4, 'ring', 1, 4, 4, 100), ('h1', 5, 'evicted', 1, 2, 2, 10)",
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, command, exit_code, start_ns, end_ns, pipeline, "
	"pipeline_run_id, engine, run_name, summary, processes, steps, signals, run_key, state, detected_by, cpu_ns, "
	"host_cloud, host_cpus, host_price_per_hour, uid) VALUES "
	"(1, 'h1', 'bt1', 10, 'bh1', '[\"snakemake\", \"-j\", 4, 1.5E2, true, false, null, [\"x\", 1], \"a\\\"b\", "
	"{\"k\": \"v\"}]', 0, 1000, 5000, 'p', 'pr1', 'snakemake', 'r1', 'sum', 3, 2, 2, 'bt1-100-1000', 'succeeded', "
	"'tracer_run', NULL, 'aws', 8, 0.5, 1000), "
	"(2, 'h1', 'bt1', 11, 'bh1', 'not json', NULL, NULL, NULL, 'p', 'pr2', NULL, NULL, NULL, NULL, NULL, NULL, "
	"'bt1-300-3000', 'running', 'process_tree', 77, NULL, NULL, NULL, NULL), "
	"(3, 'h2', 'bt2', 12, 'bh1', NULL, 1, 2000, 3000, 'q', 'pr1', 'nextflow', NULL, NULL, 2, 1, 0, NULL, "
	"'failed', 'tracer_run', NULL, 'gcp', 4, 2, 0)",
	"INSERT INTO steps (run_id, idx, step_id, name, tools, start_ns, end_ns, failed, processes, cpu_ns, "
	"peak_rss_bytes, state, running, cpu_limit_millicores, memory_limit_bytes) VALUES "
	"(1, 0, 's1', 'align', '[\"bwa\", \"samtools\"]', 1000, 3000, 0, 2, 500, 1000, 'succeeded', 0, 2000, NULL), "
	"(1, 1, 's2', 'sort', '{\"a\": \"x\", \"b\": 2}', 3000, NULL, NULL, NULL, NULL, NULL, 'running', 1, NULL, 4096), "
	"(2, 0, 's1', 'align', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'running', 1, NULL, NULL), "
	"(3, 0, 't1', 'x', 'not json', 2000, 3000, 1, 2, NULL, NULL, 'failed', 0, NULL, NULL)",
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, ppid, parent_start_ns, "
	"exe, argv, cwd, exit_ts_ns, exit_code, signal, oom_killed, utime_ns, stime_ns, runtime_ns, maxrss_bytes, "
	"peak_rss_bytes, read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes, exit_flags, state_flags, "
	"run_id, step, tool, cgroup_id, cgroup_v1_id, run_delay_ns, iowait_ns, blocked_ns, net_wait_ns, reclaim_ns) "
	"VALUES "
	"('h1', 'bt1', 100, 1000, 1000001000, 1000005000, 1, 0, '/bin/snakemake', '[\"snakemake\", \"-j\"]', '/w', "
	"5000, 0, NULL, 0, 10, 20, 40, 900, 800, 1, 2, 3, 4, 5, 6, 0, 1, 1, NULL, 'snakemake', 11, 12, 1, 2, 3, 4, 5), "
	"('h1', 'bt1', 101, 1100, 1000001100, 1000002900, 100, 1000, '/bin/bwa', '[\"bwa\",\"mem\"]', '/w', 2900, 0, "
	"NULL, 1, 300, 200, 600, 700, NULL, 1, 2, 3, 4, 5, 6, 1, 0, 1, 's1', 'bwa', 13, NULL, 7, 8, 9, 10, 11), "
	"('h1', 'bt1', 102, 1200, 1000001200, NULL, 100, 1000, '/bin/samtools', 'bad json', '/w', NULL, NULL, NULL, "
	"0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 1, 's1', 'samtools', 13, 12, "
	"NULL, NULL, NULL, NULL, NULL), "
	"('h1', 'bt1', 103, 3100, 1000003100, NULL, 100, 1000, '/bin/sort', NULL, '/w', NULL, NULL, NULL, 0, NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 's2', NULL, 99, NULL, NULL, NULL, "
	"NULL, NULL, NULL), "
	"('h1', 'bt1', 104, 3200, NULL, NULL, 1, 0, '/bin/cron', '[]', '/', NULL, NULL, NULL, 0, NULL, NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL), "
	"('h2', 'bt2', 200, 2000, 2000, 3000, 1, 0, '/bin/x', '[\"x\"]', '/', 3000, 1, NULL, 0, 5, 5, 10, 100, 90, "
	"1, 1, 1, 1, 1, 1, 0, 0, 3, 't1', 'x', NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
	"INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, utime_ns, stime_ns, rss_bytes, "
	"hiwater_rss_bytes, net_tx_bytes, net_rx_bytes, read_bytes, write_bytes, rchar, wchar, run_delay_ns, "
	"iowait_ns, blocked_ns, net_wait_ns, reclaim_ns) VALUES "
	"('h1', 20, 'bt1', 102, 1200, 1500, 100, 50, 40, 300, 350, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9), "
	"('h1', 21, 'bt1', 102, 1200, 1800, 200, 90, 80, 320, 400, 9, 10, 2, 3, 4, 5, 6, 7, 8, 9, 10), "
	"('h1', 22, 'bt1', 103, 3100, 3500, 50, 20, 20, 100, 120, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL), "
	"('h1', 23, 'bt1', 101, 1100, 1500, 30, 10, 10, 200, 250, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), "
	"('h1', 25, 'bt1', 101, 1100, 1400, 20, 5, 5, 150, 0, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1), "
	"('h2', 24, 'bt2', 200, 2000, 2500, 5, 2, 2, 50, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)",
	/* 102's newest sample: at the same ts_ns as seq 21, of a higher stream */
	"INSERT INTO samples (host_id, seq, stream, boot_id, tgid, start_ns, ts_ns, runtime_ns, utime_ns, stime_ns, "
	"rss_bytes, hiwater_rss_bytes, net_tx_bytes, net_rx_bytes, read_bytes, write_bytes, rchar, wchar, "
	"run_delay_ns, iowait_ns, blocked_ns, net_wait_ns, reclaim_ns) VALUES "
	"('h1', 5, 1, 'bt1', 102, 1200, 1800, 210, 95, 85, 330, 410, 11, 12, 3, 4, 5, 6, 7, 8, 9, 10, 11)",
	"INSERT INTO files (host_id, seq, boot_id, tgid, start_ns, ts_ns, path, mode, truncated) VALUES "
	"('h1', 30, 'bt1', 101, 1100, 1200, '/in.fq', 'r', 0), ('h1', 31, 'bt1', 101, 1100, 1300, '/out.bam', 'w', 0), "
	"('h1', 32, 'bt1', 101, 1100, 1400, '/in.fq', 'w', 0), ('h1', 33, 'bt1', 102, 1200, 1500, '/x', 'rw', 0), "
	"('h1', 34, 'bt1', 101, 1100, 1500, '/ref.fa', 'r', 0)",
	"INSERT INTO cgroups (host_id, boot_id, v1, cgroup_id, path, truncated, seq) VALUES "
	"('h1', 'bt1', 0, 11, '/', 0, 1), ('h1', 'bt1', 1, 12, '/mem/a', 0, 2), ('h1', 'bt1', 0, 13, '/sys/a.scope', 0, 3)",
	"INSERT INTO signals (signal_id, host_id, boot_id, seq, run_id, source, kind, pid, start_ns, ts_ns, step, tool, "
	"detail) VALUES "
	"(1, 'h1', 'bt1', 40, 1, 'live', 'oom_kill', 101, 1100, NULL, 's1', 'bwa', "
	"'{\"memcg_limit_bytes\": 1000, \"x\": [1, 2]}'), "
	"(2, 'h1', 'bt1', 41, 1, 'live', 'oom_kill', 102, 1200, NULL, 's1', NULL, '{\"memcg_limit_bytes\": 4000}'), "
	"(3, 'h1', 'bt1', 42, NULL, 'kernel', 'oom_kill', 103, 3100, 3600, NULL, NULL, '{\"memcg_limit_bytes\":2500}'), "
	"(4, 'h1', 'bt1', 43, 1, 'live', 'oom_kill', NULL, NULL, NULL, 's1', NULL, 'nope'), "
	"(5, 'h1', 'bt1', 44, 1, 'live', 'slow', NULL, NULL, NULL, 's2', NULL, '{\"a\": 1.0}'), "
	"(6, 'h1', 'bt1', 45, 1, 'live', 'oom_kill', NULL, NULL, NULL, 's2', NULL, '{\"memcg_limit_bytes\": -5}')",
	"INSERT INTO run_processes (run_id, idx, pid, ppid, start_ns, end_ns, step, cpu_user_ns, cpu_sys_ns, oom_killed, "
	"peak_rss_bytes, read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes) VALUES "
	"(3, 0, 200, 1, 2000, 3000, 't1', 10, 20, 0, 100, 1, 2, 3, 4, 5, 6), "
	"(3, 1, 201, 200, 2100, NULL, 't1', 5, NULL, 1, 300, NULL, 1, 1, 1, 1, 1), "
	"(3, 2, 202, 200, 2100, 2500, 't1', 9223372036854775807, 10, 0, 1, 1, 1, 1, 1, 1, 1)",
	"INSERT INTO heartbeats (host_id, seq, boot_id, beat, start_ns, end_ns, uptime_s, cpus, cpu_busy_ns, "
	"cpu_idle_ns, mem_total_bytes, mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes, host_cloud, "
	"host_price_per_hour) VALUES "
	"('h1', 1, 'bt1', 1, 0, 1000, 1.5, 8, 10, 20, 1000, 500, 1, 2, 1, 2, 3, 'aws', NULL), "
	"('h1', 2, 'bt1', 2, 1000, 2000, 2.5, 8, 11, 21, 1000, 600, 3, 4, 1, 2, 3, 'aws', 0.25), "
	"('h2', 1, 'bt2', 1, 500, 1800, NULL, 4, -1, 5, 10, 5, 0, 0, 0, 0, 0, NULL, NULL)",
};

static void fill(struct sql *db)
{
	static const char rec[] = "INSERT INTO records (host_id, seq, src_pos, src_gen, type, flags, len, crc, payload, "
				  "batch_hash) VALUES ('h1', ?1, 0, 0, ?2, 0, ?3, 0, ?4, 'bh1')";
	struct sql_stmt *st = NULL;

	for (size_t i = 0; i < N(rows_sql); i++)
		exec_ok(db, rows_sql[i]);
	assert_int_equal(sql_prepare(db, rec, false, &st), SQL_OK);
	for (int64_t seq = 10; seq <= 11; seq++) {
		assert_int_equal(sql_bind_i64(st, 1, seq), SQL_OK);
		assert_int_equal(sql_bind_i64(st, 2, seq == 10 ? 64 : 65), SQL_OK);
		assert_int_equal(sql_bind_i64(st, 3, (int64_t)strlen(report_payload)), SQL_OK);
		assert_int_equal(sql_bind_blob(st, 4, report_payload, strlen(report_payload)), SQL_OK);
		if (sql_step(st) != SQL_DONE)
			fail_msg("records: %s", sql_errmsg(db));
		sql_reset(st);
	}
	sql_finalize(st);
}

/* One parameter: an integer, text, or NULL. */
struct param {
	enum { P_NULL, P_INT, P_TEXT } kind;
	int64_t i;
	const char *t;
};

#define PI(v) { .kind = P_INT, .i = (v) }
#define PT(v) { .kind = P_TEXT, .t = (v) }
#define PN { .kind = P_NULL }

/*
 * Every row and column of r on both engines (each its own text), bound to p (as many as it has), the same;
 * the rows it gave.
 */
static int same_rows_of(struct one *o, const struct lake_read *r, const struct param *p)
{
	const char *sql = r->sql;
	struct sql_stmt *a = NULL, *b = NULL;
	int rows = 0, ra, rb;

	if (sql_prepare(o->lite, lake_read_text(r, o->lite), false, &a) != SQL_OK)
		fail_msg("SQLite: %s\n%s", sql_errmsg(o->lite), sql);
	if (sql_prepare(o->pg, lake_read_text(r, o->pg), false, &b) != SQL_OK)
		fail_msg("PostgreSQL: %s\n%s", sql_errmsg(o->pg), lake_read_text(r, o->pg));
	assert_int_equal(sql_param_count(a), sql_param_count(b));
	for (int i = 0; i < sql_param_count(a); i++) {
		struct sql_stmt *both[] = { a, b };

		for (int k = 0; k < 2; k++) {
			struct sql_stmt *st = both[k];

			if (p[i].kind == P_INT)
				assert_int_equal(sql_bind_i64(st, i + 1, p[i].i), SQL_OK);
			else if (p[i].kind == P_TEXT)
				assert_int_equal(sql_bind_text(st, i + 1, p[i].t, strlen(p[i].t)), SQL_OK);
			else
				assert_int_equal(sql_bind_null(st, i + 1), SQL_OK);
		}
	}
	for (;;) {
		ra = sql_step(a);
		rb = sql_step(b);
		if (rb < 0)
			fail_msg("PostgreSQL: %s\n%s", sql_errmsg(o->pg), sql);
		if (ra < 0)
			fail_msg("SQLite: %s\n%s", sql_errmsg(o->lite), sql);
		if (ra != rb)
			fail_msg("row %d: %s on SQLite, %s on PostgreSQL\n%s", rows, ra == SQL_ROW ? "a row" : "done",
				 rb == SQL_ROW ? "a row" : "done", sql);
		if (ra != SQL_ROW)
			break;
		assert_int_equal(sql_col_count(a), sql_col_count(b));
		for (int c = 0; c < sql_col_count(a); c++) {
			enum sql_type ta = sql_col_type(a, c), tb = sql_col_type(b, c);

			if (ta != tb)
				fail_msg("row %d column %d: type %d on SQLite (%s), %d on PostgreSQL (%s)\n%s", rows, c, ta,
					 sql_col_text(a, c), tb, sql_col_text(b, c), sql);
			if (ta == SQL_INTEGER && sql_col_i64(a, c) != sql_col_i64(b, c))
				fail_msg("row %d column %d: %lld on SQLite, %lld on PostgreSQL\n%s", rows, c,
					 (long long)sql_col_i64(a, c), (long long)sql_col_i64(b, c), sql);
			if (ta == SQL_FLOAT && sql_col_double(a, c) != sql_col_double(b, c))
				fail_msg("row %d column %d: %.17g on SQLite, %.17g on PostgreSQL\n%s", rows, c,
					 sql_col_double(a, c), sql_col_double(b, c), sql);
			if (ta == SQL_TEXT && strcmp(sql_col_text(a, c), sql_col_text(b, c)))
				fail_msg("row %d column %d: '%s' on SQLite, '%s' on PostgreSQL\n%s", rows, c,
					 sql_col_text(a, c), sql_col_text(b, c), sql);
			if (ta == SQL_BLOB) {
				size_t la = sql_col_bytes(a, c), lb = sql_col_bytes(b, c);

				assert_int_equal(la, lb);
				assert_memory_equal(sql_col_blob(a, c), sql_col_blob(b, c), la);
			}
		}
		rows++;
	}
	sql_finalize(a);
	sql_finalize(b);
	return rows;
}

/* The same for a statement both engines run as it is. */
static int same_rows(struct one *o, const char *sql, const struct param *p)
{
	const struct lake_read r = { sql, NULL };

	return same_rows_of(o, &r, p);
}

static void store_reads_give_the_same_rows_on_both_engines(void **state)
{
	struct one *o = *state;
	static const struct {
		enum stmt_id id;
		struct param p[4];
		int rows;
	} cases[] = {
		{ ST_RUNS_LIST, { PN }, 3 },
		{ ST_RUN_BY_ID, { PI(1) }, 1 },
		{ ST_RUN_BY_ID, { PI(9) }, 0 },
		{ ST_RUN_BY_KEY, { PT("bt1-300-3000") }, 1 },
		{ ST_RUN_BY_NAME, { PT("pr1") }, 2 },
		{ ST_RUN_STEPS_LIST, { PI(1) }, 2 },
		{ ST_RUN_STEPS_LIST, { PI(3) }, 1 },
		{ ST_RUN_PROCS_LIST, { PI(1) }, 4 },
		{ ST_RUN_PROCS_LIST, { PI(3) }, 1 },
		{ ST_PROC_FILES_LIST, { PT("h1"), PT("bt1"), PI(101), PI(1100) }, 3 },
		{ ST_RUN_SIGNALS_LIST, { PI(1) }, 5 },
		{ ST_RUN_REPORT_JSON, { PI(1) }, 1 },
		{ ST_RUN_REPORT_JSON, { PI(2) }, 0 },
	};

	fill(o->lite);
	fill(o->pg);
	for (size_t i = 0; i < N(cases); i++) {
		int rows = same_rows(o, lake_stmt_sql(cases[i].id), cases[i].p);

		if (rows != cases[i].rows)
			fail_msg("case %zu: %d rows, not %d", i, rows, cases[i].rows);
	}
}

static void analysis_sweep_and_web_reads_give_the_same_rows_on_both_engines(void **state)
{
	struct one *o = *state;
	/* tune: (pipeline, newest) as store_tune_* bind them; sweep: since */
	static const struct param tune[][2] = { { PN, PN }, { PT("p"), PN }, { PN, PI(1) }, { PT("q"), PI(1) } };
	static const struct param sweep[][1] = { { PI(0) }, { PI(1500) }, { PI(1000002000) } };
	int rows = 0;

	fill(o->lite);
	fill(o->pg);
	for (const struct lake_read *r = lake_tune_sql; r->sql; r++)
		for (size_t i = 0; i < N(tune); i++)
			rows += same_rows_of(o, r, tune[i]);
	for (const struct lake_read *r = lake_sweep_sql; r->sql; r++)
		for (size_t i = 0; i < N(sweep); i++)
			rows += same_rows_of(o, r, sweep[i]);
	for (const struct lake_read *r = lake_web_sql; r->sql; r++)
		rows += same_rows_of(o, r, NULL);
	assert_true(rows > 50);
}

/* ---- the JSON taken apart in C: what SQLite's json1 gave ---------------------------------------------------- */

static const char *const join_texts[] = {
	"[\"snakemake\", \"-j\", 4]",
	"[\"a\\tb\", \"caf\\u00e9\", \"\\\"q\\\"\", \"\\/\"]",
	"[1.50E+2, -0, 1e2, 0.1, 1e15, 1e100, 1.5e-7, -2.5, 12345678901234567890, -9223372036854775808]",
	"[true, false, null, null, \"x\"]",
	"[null]",
	"[]",
	"[[1, 2], {\"x\" : [ \"y\" ]}, \"z\"]",
	"{\"a\": \"x\", \"b\": 2}",
	"\"abc\"",
	"42",
	"null",
};

/* lake_json_join as SQLite's group_concat(value, sep) over json_each(text), for texts both take as JSON. */
static void joined_json_is_what_group_concat_gave(void **state)
{
	struct one *o = *state;
	struct lake_json js = { 0 };
	struct sql_stmt *st = NULL;
	static const char *const seps[] = { " ", ", " };

	assert_int_equal(sql_prepare(o->lite, "SELECT coalesce((SELECT group_concat(value, ?2) FROM json_each(?1) "
					      "WHERE json_valid(?1)), '')", false, &st), SQL_OK);
	for (size_t i = 0; i < N(join_texts); i++)
		for (size_t k = 0; k < N(seps); k++) {
			const char *got = lake_json_join(&js, join_texts[i], strlen(join_texts[i]), seps[k]);

			assert_int_equal(sql_bind_text(st, 1, join_texts[i], strlen(join_texts[i])), SQL_OK);
			assert_int_equal(sql_bind_text(st, 2, seps[k], strlen(seps[k])), SQL_OK);
			assert_int_equal(sql_step(st), SQL_ROW);
			assert_non_null(got);
			if (strcmp(got, sql_col_text(st, 0)))
				fail_msg("%s: '%s', SQLite '%s'", join_texts[i], got, sql_col_text(st, 0));
			sql_reset(st);
		}
	/* not JSON, or none: "" (coalesce of before) */
	assert_string_equal(lake_json_join(&js, "[1,", 3, " "), "");
	assert_string_equal(lake_json_join(&js, NULL, 0, " "), "");
	assert_null(lake_json_valid(&js, "{\"a\":1,\"a\":2}", 13)); /* strict: a name twice */
	assert_non_null(lake_json_valid(&js, "[1, {\"a\": \"b\"}]", 15));
	sql_finalize(st);
	lake_json_free(&js);
}

/* The stored report as the SQL of before made it with json_set (SQLite), for payload, state, signals, tune. */
#define REPORT_JSON_SET                                                                                          \
	"SELECT CASE WHEN ?3 IS NULL THEN x.rep ELSE json_set(x.rep, '$.tune', json(?3)) END FROM "                 \
	"(SELECT json_set(y.rep, '$.state', y.state, '$.signals', json((SELECT "                                   \
	"json_group_array(json(value)) FROM (SELECT value FROM json_each(y.rep, '$.signals') "                      \
	"WHERE json_type(y.rep, '$.signals') = 'array' UNION ALL SELECT value FROM "                               \
	"json_each(coalesce(?2, '[]')))))) AS rep FROM "                                                          \
	"(SELECT json_extract(?1, '$.report') AS rep, ?4 AS state) y) x"

static void stored_report_is_what_json_set_gave(void **state)
{
	struct one *o = *state;
	static const char *const payloads[] = {
		report_payload,
		"{\"report\": {}}",
		"{\"report\": {\"a\": 1, \"signals\": 7, \"tune\" : null}, \"x\": 2}",
		"{\"x\": 1, \"report\": {\"state\": {\"deep\": [1, 2]}, \"b\": \"\\u0041\\n\", \"signals\": [ ]}}",
		"{\"report\": {\"signals\": [{\"kind\": \"a\"}, {\"kind\": \"b\", \"n\": [ 1 ]}], \"z\": false}}",
	};
	static const char *const states[] = { "succeeded", NULL };
	static const char *const signals[] = { NULL, "[]", "[{\"kind\":\"slower_than_usual\",\"x\":1.5}]",
					       "[{\"kind\": \"a\"}, {\"kind\": \"b\"}]" };
	static const char *const tunes[] = { NULL, "{\"steps\":[],\"n\":1}", "{ \"a\" : [ ] }" };
	struct sql_stmt *st = NULL;
	unsigned n = 0;

	assert_int_equal(sql_prepare(o->lite, REPORT_JSON_SET, false, &st), SQL_OK);
	for (size_t p = 0; p < N(payloads); p++)
		for (size_t s = 0; s < N(states); s++)
			for (size_t g = 0; g < N(signals); g++)
				for (size_t t = 0; t < N(tunes); t++, n++) {
					const char *args[] = { payloads[p], signals[g], tunes[t], states[s] };
					struct obuf out;

					for (int i = 0; i < 4; i++)
						assert_int_equal(args[i] ? sql_bind_text(st, i + 1, args[i], strlen(args[i]))
									 : sql_bind_null(st, i + 1),
								 SQL_OK);
					assert_int_equal(sql_step(st), SQL_ROW);
					obuf_init_mem(&out, 1u << 20);
					assert_int_equal(lake_json_report(&out, payloads[p], strlen(payloads[p]), states[s],
									  signals[g], tunes[t]),
							 0);
					obuf_putc(&out, '\0');
					if (strcmp(out.buf, sql_col_text(st, 0)))
						fail_msg("payload %zu state %zu signals %zu tune %zu:\n C      %s\n SQLite %s",
							 p, s, g, t, out.buf, sql_col_text(st, 0));
					obuf_free(&out);
					sql_reset(st);
				}
	sql_finalize(st);
	assert_int_equal(n, N(payloads) * N(states) * N(signals) * N(tunes));
}

/* A payload with no report object is not found (the SQL of before gave NULL); signals not JSON are refused. */
static void a_payload_without_a_report_is_not_found(void **state)
{
	struct obuf out;

	(void)state;
	obuf_init_mem(&out, 1u << 20);
	assert_int_equal(lake_json_report(&out, "{\"x\": 1}", 8, "lost", NULL, NULL), -ENOENT);
	assert_int_equal(lake_json_report(&out, "{\"report\": [1]}", 15, "lost", NULL, NULL), -ENOENT);
	assert_int_equal(lake_json_report(&out, "{\"report\": ", 11, "lost", NULL, NULL), -ENOENT);
	assert_int_equal(lake_json_report(&out, "{\"report\": {}}", 14, "lost", "[1,", NULL), -EINVAL);
	obuf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_read_prepares_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(store_reads_give_the_same_rows_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(analysis_sweep_and_web_reads_give_the_same_rows_on_both_engines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(joined_json_is_what_group_concat_gave, setup, teardown),
		cmocka_unit_test_setup_teardown(stored_report_is_what_json_set_gave, setup, teardown),
		cmocka_unit_test(a_payload_without_a_report_is_not_found),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
