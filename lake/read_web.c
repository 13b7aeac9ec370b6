/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for tracer-web's hosts page and /metrics: each host's
 * agent health, the lake's own counts, and the per-pipeline figures (store.h,
 * "reading for the dashboard"). One statement each, over the tables' own
 * indexes; every figure's source is in docs/web.md. The SQL runs the same on SQLite and
 * PostgreSQL (sql.h): sum() of integers is read as one from either.
 */
#include <string.h>

#include "db.h"

/* One row per host, its figures from the tables the ingest keeps (docs/lake.md). */
static const char hosts_sql[] =
	"SELECT h.host_id, h.first_seen_ns, h.last_seen_ns, h.batches, h.records,\n"
	"  (SELECT " SQL_SUB("b.received_ns", "b.created_ns") " FROM batches b WHERE b.hash = h.last_batch_hash),\n"
	"  (SELECT count(*) FROM gaps g WHERE g.host_id = h.host_id AND g.filled < g.to_seq - g.from_seq + 1),\n"
	"  (SELECT coalesce(sum(g.to_seq - g.from_seq + 1 - g.filled), 0) FROM gaps g WHERE g.host_id = h.host_id),\n"
	"  (SELECT a.kernel_drops FROM agent_counters a WHERE a.host_id = h.host_id ORDER BY a.received_ns DESC, "
	"a.seq DESC LIMIT 1),\n"
	"  (SELECT a.ring_drops FROM agent_counters a WHERE a.host_id = h.host_id ORDER BY a.received_ns DESC, "
	"a.seq DESC LIMIT 1),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'evicted'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'quarantined'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'corrupt'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'ring'),\n"
	"  (SELECT count(*) FROM runs r WHERE r.host_id = h.host_id),\n"
	"  (SELECT count(*) FROM runs r WHERE r.host_id = h.host_id AND r.state = 'running'),\n"
	"  r.host_cloud, r.host_instance_type, r.host_region, r.host_cpus, r.host_memory_bytes\n"
	"FROM hosts h LEFT JOIN runs r ON r.run_id = (SELECT max(r2.run_id) FROM runs r2 WHERE r2.host_id = h.host_id)\n"
	"ORDER BY h.host_id";

/* The lake's runs as its list has them: a cluster job joined to another run is that run's (docs/live.md). */
static const char counts_sql[] =
	"SELECT (SELECT count(*) FROM hosts), (SELECT coalesce(sum(batches), 0) FROM hosts),\n"
	"  (SELECT coalesce(sum(records), 0) FROM hosts), (SELECT count(*) FROM runs WHERE joined_run_id IS NULL),\n"
	"  (SELECT count(*) FROM runs WHERE joined_run_id IS NULL AND state = 'running'),\n"
	"  (SELECT count(*) FROM runs WHERE joined_run_id IS NULL AND state = 'succeeded'),\n"
	"  (SELECT count(*) FROM runs WHERE joined_run_id IS NULL AND state = 'failed'), (SELECT count(*) FROM processes),\n"
	"  (SELECT count(*) FROM signals)";

#define WEB_STR(x) #x
#define WEB_XSTR(x) WEB_STR(x)
#define WEB_OTHERS WEB_XSTR(STORE_WEB_PIPELINES_MAX) " + 1"
_Static_assert(STORE_WEB_BUCKETS == 9 && STORE_STEP_STATES == 5, "pipelines_sql's columns");

/*
 * /metrics' per pipeline figures (store.h, store_web_pipelines): the pipelines ranked by their runs' latest
 * start (a tie: the higher run number), those past the cap folded into one (label NULL, prank the cap + 1);
 * their runs by state; their steps (a joined job's as its run's, the step that submitted it left out) by
 * name, each group's states, and its ended steps' durations counted at or under each bucket's bound.
 * Orders that the two engines settle alike: numbers, and the states (ASCII, lower case).
 */
static const char pipelines_sql[] =
	"WITH pipes AS (SELECT coalesce(pipeline, '') AS pipeline, row_number() OVER (ORDER BY max(start_ns) IS NULL, "
	"max(start_ns) DESC, max(run_id) DESC) AS rn FROM runs WHERE joined_run_id IS NULL GROUP BY coalesce(pipeline, "
	"'')),\n"
	"top AS (SELECT pipeline, CASE WHEN rn <= " WEB_XSTR(STORE_WEB_PIPELINES_MAX) " THEN rn ELSE " WEB_OTHERS
	" END AS prank, CASE WHEN rn <= " WEB_XSTR(STORE_WEB_PIPELINES_MAX) " THEN pipeline END AS label FROM pipes),\n"
	"st AS (SELECT t.prank, t.label, coalesce(nullif(s.name, ''), s.step_id, '') AS name, CASE WHEN "
	"coalesce(s.engine, r.engine) = 'nextflow' THEN 1 ELSE 0 END AS nf, coalesce(s.state, '') AS state,\n"
	"  CASE WHEN coalesce(s.running, 0) = 0 AND coalesce(s.state, '') <> 'running' AND s.start_ns > 0 AND "
	"s.end_ns >= s.start_ns THEN s.end_ns - s.start_ns END AS d,\n"
	"  coalesce(s.end_ns, s.start_ns, 0) AS ord, s.run_id, s.idx\n"
	"  FROM steps s JOIN runs m ON m.run_id = s.run_id JOIN runs r ON r.run_id = coalesce(m.joined_run_id, "
	"m.run_id)\n"
	"  JOIN top t ON t.pipeline = coalesce(r.pipeline, '')\n"
	"  WHERE r.joined_run_id IS NULL AND NOT EXISTS (SELECT 1 FROM runs j WHERE j.joined_run_id = s.run_id AND "
	"j.joined_step_id = s.step_id))\n"
	"SELECT 0 AS kind, t.prank, t.label, CASE WHEN r.state IN ('running', 'succeeded', 'failed', 'lost') THEN "
	"r.state ELSE 'other' END AS name, 0 AS nf, count(*) AS n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, "
	"0 AS o1, 0 AS o2, 0 AS o3\n"
	"  FROM runs r JOIN top t ON t.pipeline = coalesce(r.pipeline, '') WHERE r.joined_run_id IS NULL\n"
	"  GROUP BY t.prank, t.label, CASE WHEN r.state IN ('running', 'succeeded', 'failed', 'lost') THEN r.state "
	"ELSE 'other' END\n"
	"UNION ALL\n"
	"SELECT 1, prank, label, name, nf, count(*), sum(CASE WHEN state = 'running' THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN state = 'succeeded' THEN 1 ELSE 0 END), sum(CASE WHEN state = 'failed' THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN state = 'lost' THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN state IN ('running', 'succeeded', 'failed', 'lost') THEN 0 ELSE 1 END), count(d),\n"
	"  sum(CASE WHEN d <= 1000000000 THEN 1 ELSE 0 END), sum(CASE WHEN d <= 5000000000 THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN d <= 15000000000 THEN 1 ELSE 0 END), sum(CASE WHEN d <= 60000000000 THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN d <= 300000000000 THEN 1 ELSE 0 END), sum(CASE WHEN d <= 900000000000 THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN d <= 3600000000000 THEN 1 ELSE 0 END), sum(CASE WHEN d <= 14400000000000 THEN 1 ELSE 0 END),\n"
	"  sum(CASE WHEN d <= 86400000000000 THEN 1 ELSE 0 END), coalesce(sum(CAST(d AS DOUBLE PRECISION)), 0.0),\n"
	"  max(ord), max(run_id), max(idx)\n"
	"  FROM st GROUP BY prank, label, name, nf\n"
	"ORDER BY kind, prank, o1 DESC, o2 DESC, o3 DESC, name";

/* The caller's callback of a walk, and its context. */
struct web_cb {
	store_host_fn host;
	store_web_pipeline_fn pipeline;
	void *ctx;
};

static void row_to_host(struct sql_stmt *st, struct store_host *h)
{
	struct col c = { st, 0 };

	h->host_id = col_text(&c);
	h->first_seen_ns = col_int(&c);
	h->last_seen_ns = col_int(&c);
	h->batches = col_int(&c);
	h->records = col_int(&c);
	h->lag_ns = col_int(&c);
	h->gaps_open = col_int(&c);
	h->missing_records = col_int(&c);
	h->kernel_drops = col_int(&c);
	h->ring_drops = col_int(&c);
	h->lost_evicted = col_int(&c);
	h->lost_quarantined = col_int(&c);
	h->lost_corrupt = col_int(&c);
	h->lost_ring = col_int(&c);
	h->runs = col_int(&c);
	h->running_runs = col_int(&c);
	h->cloud = col_text(&c);
	h->instance_type = col_text(&c);
	h->region = col_text(&c);
	h->cpus = col_int(&c);
	h->memory_bytes = col_int(&c);
}

static int visit_host(struct sql_stmt *st, void *arg)
{
	const struct web_cb *cb = arg;
	struct store_host h;

	row_to_host(st, &h);
	return cb->host(cb->ctx, &h);
}

int store_hosts(struct store *s, store_host_fn fn, void *ctx)
{
	struct web_cb cb = { .host = fn, .ctx = ctx };

	return lake_rows(s, hosts_sql, false, NULL, 0, visit_host, &cb);
}

int store_counts(struct store *s, struct store_counts *c)
{
	struct sql_stmt *st = NULL;
	int rc = lake_prepare(s, counts_sql, false, &st);

	if (rc)
		return rc;
	rc = sql_step(st);
	if (rc == SQL_ROW) {
		struct col k = { st, 0 };

		c->hosts = col_i64(&k);
		c->batches = col_i64(&k);
		c->records = col_i64(&k);
		c->runs = col_i64(&k);
		c->runs_running = col_i64(&k);
		c->runs_succeeded = col_i64(&k);
		c->runs_failed = col_i64(&k);
		c->processes = col_i64(&k);
		c->signals = col_i64(&k);
		rc = STORE_OK;
	} else {
		rc = lake_sql_fail(s, rc == SQL_DONE ? SQL_E : rc);
	}
	sql_finalize(st);
	return rc;
}

/* A row of pipelines_sql to the caller: a pipeline's runs by state, or one of its steps' figures. */
static int visit_pipeline(struct sql_stmt *st, void *arg)
{
	const struct web_cb *cb = arg;
	struct store_web_pipeline pl = { 0 }, *p = &pl;
	struct col c = { st, 0 };

	p->kind = col_i64(&c) ? STORE_WEB_STEPS : STORE_WEB_RUNS;
	p->rank = col_i64(&c);
	p->pipeline = col_text(&c);
	if (p->kind == STORE_WEB_RUNS) {
		p->state = col_text(&c);
		c.i++;
		p->runs = col_i64(&c);
		return cb->pipeline(cb->ctx, p);
	}
	p->name = col_text(&c);
	p->nextflow = col_i64(&c) != 0;
	p->steps = col_i64(&c);
	for (int i = 0; i < STORE_STEP_STATES; i++)
		p->by_state[i] = col_i64(&c);
	p->ended = col_i64(&c);
	for (int i = 0; i < STORE_WEB_BUCKETS; i++)
		p->le[i] = col_i64(&c);
	p->duration_sum_ns = sql_col_double(st, c.i);
	return cb->pipeline(cb->ctx, p);
}

int store_web_pipelines(struct store *s, store_web_pipeline_fn fn, void *ctx)
{
	struct web_cb cb = { .pipeline = fn, .ctx = ctx };

	return lake_rows(s, pipelines_sql, false, NULL, 0, visit_pipeline, &cb);
}

const struct lake_read lake_web_sql[] = {
	{ hosts_sql, NULL }, { counts_sql, NULL }, { pipelines_sql, NULL }, { NULL, NULL },
};
