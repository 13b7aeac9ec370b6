/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for tracer sweep (issue 17): the hosts' heartbeats, the
 * processes alive in a window with their newest sample, and the lake's
 * newest word for "now" (store.h, "reading for the sweep"). One statement
 * each, prepared per call like read_web.c's; docs/lake.md, "Reading for
 * the sweep", says where each figure comes from and what the statements
 * cost on a large lake.
 *
 * Every value came from a host: numbers are read as integers only when
 * the database holds them as such (anything else is unknown), counters that
 * would read negative (above 2^63 on the host) are unknown, and JSON is
 * handed over only after json_parse accepted it (read_json.h). The SQL runs
 * the same on SQLite and PostgreSQL (sql.h).
 */
#include <math.h>
#include <string.h>

#include "db.h"
#include "read_json.h"

/* A counter as the sweep takes it: unknown when it would read negative (a host's value past 2^63). */
#define NONNEG(x) "(CASE WHEN (" x ") >= 0 THEN (" x ") END)"

/*
 * The heartbeats that end after ?1, by host then start (seq for a tie: a
 * host that sent two beats with one start). No index serves "ends after":
 * the table is read whole, once, and the few rows of the window sorted
 * (docs/lake.md: 2,000,000 beats in 0.2 s).
 */
static const char beats_sql[] =
	"SELECT host_id, boot_id, seq, start_ns, end_ns, beat, cpus, cpu_busy_ns, cpu_idle_ns, mem_total_bytes, "
	"mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes, host_cloud, host_instance_type, "
	"host_instance_id, host_region, host_cpus, host_memory_bytes, host_price_per_hour "
	"FROM heartbeats NOT INDEXED WHERE end_ns > ?1 ORDER BY host_id, start_ns, seq";

/*
 * A process's samples in real time: its monotonic times plus its offset,
 * as read_tune.c takes it (start_real_ns - start_ns, from the batch that
 * brought its first kernel record; else the exit's).
 */
#define REAL_OFFSET                                                                                      \
	"coalesce(" SQL_SUB("p.start_real_ns", "p.start_ns") ", " SQL_SUB("p.end_real_ns", "p.exit_ts_ns") ")"

/*
 * The processes alive after ?1, each with its newest sample (one probe of
 * samples_by_process: NEWEST_SAMPLE_JOIN_SQLITE, _PG in db.h) and whether a
 * run's key (BOOT-TGID-START, docs/live.md) names it (one seek in
 * runs_key). Its own CPU: the exit record's precise runtime
 * (else utime + stime) when it exited, else its newest sample's.
 */
#define PROCESSES_SQL(join)                                                                                     \
	"SELECT p.host_id, p.boot_id, p.tgid, p.start_ns, p.ppid, p.parent_start_ns, p.start_real_ns, "         \
	"p.end_real_ns, p.exe, p.tool, p.argv, p.run_id, "                                                      \
	"CASE WHEN EXISTS (SELECT 1 FROM runs r INDEXED BY runs_key WHERE r.host_id = p.host_id AND "           \
	"r.run_key = p.boot_id || '-' || p.tgid || '-' || p.start_ns) THEN 1 ELSE 0 END, "                      \
	SQL_ADD("ls.ts_ns", REAL_OFFSET) ", " NONNEG("ls.runtime_ns") ", " NONNEG("ls.rss_bytes") ", "          \
	"CASE WHEN p.exit_ts_ns IS NOT NULL THEN coalesce(" NONNEG("p.runtime_ns") ", "                         \
	NONNEG(SQL_ADD("p.utime_ns", "p.stime_ns")) ") ELSE coalesce(" NONNEG("ls.runtime_ns") ", "             \
	NONNEG(SQL_ADD("ls.utime_ns", "ls.stime_ns")) ") END "                                                  \
	"FROM processes p NOT INDEXED " join " "                                                                \
	"WHERE p.end_real_ns IS NULL OR p.end_real_ns > ?1 "                                                    \
	"ORDER BY p.host_id, p.boot_id, p.start_ns, p.tgid"
static const char processes_sql[] = PROCESSES_SQL(NEWEST_SAMPLE_JOIN_SQLITE("TRUE"));
static const char processes_sql_pg[] = PROCESSES_SQL(NEWEST_SAMPLE_JOIN_PG("TRUE"));
static const struct lake_read processes_sql_read = { processes_sql, processes_sql_pg };

/* The newest heartbeat end and the newest stored batch: aggregates skip the NULL of an empty table. */
static const char newest_sql[] =
	"SELECT max(v) FROM (SELECT max(end_ns) AS v FROM heartbeats UNION ALL "
	"SELECT max(last_seen_ns) FROM hosts) AS newest";

/* ---- rows ------------------------------------------------------------------ */

static void row_to_beat(struct sql_stmt *st, struct store_beat *b)
{
	struct col c = { st, 0 };
	int type;

	memset(b, 0, sizeof(*b));
	b->host_id = col_text(&c);
	b->boot_id = col_text(&c);
	b->seq = col_i64(&c);
	b->start_ns = col_i64(&c);
	b->end_ns = col_i64(&c);
	b->beat = col_int(&c);
	b->cpus = col_int(&c);
	b->cpu_busy_ns = col_int(&c);
	b->cpu_idle_ns = col_int(&c);
	b->mem_total_bytes = col_int(&c);
	b->mem_used_bytes = col_int(&c);
	b->net_rx_bytes = col_int(&c);
	b->net_tx_bytes = col_int(&c);
	b->runs = col_int(&c);
	b->steps = col_int(&c);
	b->processes = col_int(&c);
	b->cloud = col_text(&c);
	b->instance_type = col_text(&c);
	b->instance_id = col_text(&c);
	b->region = col_text(&c);
	b->host_cpus = col_int(&c);
	b->host_memory_bytes = col_int(&c);
	type = sql_col_type(st, c.i);
	if (type == SQL_FLOAT || type == SQL_INTEGER) {
		b->price_per_hour = sql_col_double(st, c.i);
		b->price_known = isfinite(b->price_per_hour);
	}
}

static void row_to_process(struct sql_stmt *st, struct lake_json *js, struct store_sweep_process *p)
{
	struct col c = { st, 0 };

	memset(p, 0, sizeof(*p));
	p->host_id = col_text(&c);
	p->boot_id = col_text(&c);
	p->tgid = col_i64(&c);
	p->start_ns = col_i64(&c);
	p->ppid = col_int(&c);
	p->parent_start_ns = col_int(&c);
	p->start_real_ns = col_int(&c);
	p->end_real_ns = col_int(&c);
	p->exe = col_text(&c);
	p->tool = col_text(&c);
	p->argv_json = lake_json_valid(js, sql_col_text(st, c.i), sql_col_bytes(st, c.i));
	c.i++;
	p->run_id = col_int(&c);
	p->run_root = col_i64(&c) != 0;
	p->last_sample_ns = col_int(&c);
	p->sample_runtime_ns = col_int(&c);
	p->sample_rss_bytes = col_int(&c);
	p->cpu_ns = col_int(&c);
}

/* ---- walking one statement -------------------------------------------------- */

/* The caller's callback, whichever walk it is. */
struct sweep_cb {
	store_beat_fn beat;
	store_sweep_process_fn process;
	void *ctx;
	struct lake_json js;        /* the processes' argv */
};

/* Every row of sql with ?1 = since_ns to visit; a non-zero return of the callback stops the walk and is returned. */
static int sweep_walk(struct store *s, const char *sql, int64_t since_ns, lake_row_fn visit, struct sweep_cb *cb)
{
	return lake_rows(s, sql, false, &since_ns, 1, visit, cb);
}

static int visit_beat(struct sql_stmt *st, void *arg)
{
	struct sweep_cb *cb = arg;
	struct store_beat b;

	row_to_beat(st, &b);
	return cb->beat(cb->ctx, &b);
}

static int visit_process(struct sql_stmt *st, void *arg)
{
	struct sweep_cb *cb = arg;
	struct store_sweep_process p;

	row_to_process(st, &cb->js, &p);
	return cb->process(cb->ctx, &p);
}

int store_sweep_beats(struct store *s, int64_t since_ns, store_beat_fn fn, void *ctx)
{
	struct sweep_cb cb = { .beat = fn, .ctx = ctx };

	return sweep_walk(s, beats_sql, since_ns, visit_beat, &cb);
}

int store_sweep_processes(struct store *s, int64_t since_ns, store_sweep_process_fn fn, void *ctx)
{
	struct sweep_cb cb = { .process = fn, .ctx = ctx };
	int rc = sweep_walk(s, lake_read_text(&processes_sql_read, s->db), since_ns, visit_process, &cb);

	lake_json_free(&cb.js);
	return rc;
}

int store_sweep_newest(struct store *s, int64_t *now_ns)
{
	struct sql_stmt *st = NULL;
	int rc = lake_prepare(s, newest_sql, false, &st);

	if (rc)
		return rc;
	rc = sql_step(st);
	if (rc == SQL_ROW && sql_col_type(st, 0) == SQL_INTEGER) {
		*now_ns = sql_col_i64(st, 0);
		rc = STORE_OK;
	} else if (rc == SQL_ROW) {
		rc = STORE_E_NOT_FOUND;
	} else {
		rc = lake_sql_fail(s, rc == SQL_DONE ? SQL_E : rc);
	}
	sql_finalize(st);
	return rc;
}

const struct lake_read lake_sweep_sql[] = {
	{ beats_sql, NULL }, { processes_sql, processes_sql_pg }, { newest_sql, NULL }, { NULL, NULL },
};
