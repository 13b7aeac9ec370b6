/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for tracer-web's hosts page and /metrics: each host's
 * agent health, and the lake's own counts (store.h, "reading for the
 * dashboard"). One statement each, over the tables' own indexes; every
 * figure's source is in docs/web.md. The SQL runs the same on SQLite and
 * PostgreSQL (sql.h): sum() of integers is read as one from either.
 */
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

static int prepare(struct store *s, const char *sql, struct sql_stmt **st)
{
	int rc = sql_prepare(s->db, sql, false, st);

	if (rc != SQL_OK) {
		rc = lake_sql_fail(s, rc);
		sql_finalize(*st);
		*st = NULL;
	}
	return rc;
}

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

int store_hosts(struct store *s, store_host_fn fn, void *ctx)
{
	struct sql_stmt *st = NULL;
	int rc, stop = prepare(s, hosts_sql, &st);

	if (stop)
		return stop;
	while (!stop && (rc = sql_step(st)) == SQL_ROW) {
		struct store_host h;

		row_to_host(st, &h);
		stop = fn(ctx, &h);
	}
	if (!stop && rc != SQL_DONE)
		stop = lake_sql_fail(s, rc);
	sql_finalize(st);
	return stop;
}

int store_counts(struct store *s, struct store_counts *c)
{
	struct sql_stmt *st = NULL;
	int rc = prepare(s, counts_sql, &st);

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

const struct lake_read lake_web_sql[] = { { hosts_sql, NULL }, { counts_sql, NULL }, { NULL, NULL } };
