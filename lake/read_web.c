/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for tracer-web's hosts page and /metrics: each host's
 * agent health, and the lake's own counts (store.h, "reading for the
 * dashboard"). One statement each, over the tables' own indexes; every
 * figure's source is in docs/web.md.
 */
#include "db.h"

/* One row per host, its figures from the tables the ingest keeps (docs/lake.md). */
static const char hosts_sql[] =
	"SELECT h.host_id, h.first_seen_ns, h.last_seen_ns, h.batches, h.records,\n"
	"  (SELECT b.received_ns - b.created_ns FROM batches b WHERE b.host_id = h.host_id\n"
	"     ORDER BY b.batch_seq DESC LIMIT 1),\n"
	"  (SELECT count(*) FROM gaps g WHERE g.host_id = h.host_id AND g.filled < g.to_seq - g.from_seq + 1),\n"
	"  (SELECT coalesce(sum(g.to_seq - g.from_seq + 1 - g.filled), 0) FROM gaps g WHERE g.host_id = h.host_id),\n"
	"  (SELECT a.kernel_drops FROM agent_counters a WHERE a.host_id = h.host_id ORDER BY a.seq DESC LIMIT 1),\n"
	"  (SELECT a.ring_drops FROM agent_counters a WHERE a.host_id = h.host_id ORDER BY a.seq DESC LIMIT 1),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'evicted'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'quarantined'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'corrupt'),\n"
	"  (SELECT coalesce(sum(l.records), 0) FROM losses l WHERE l.host_id = h.host_id AND l.reason = 'ring'),\n"
	"  (SELECT count(*) FROM runs r WHERE r.host_id = h.host_id),\n"
	"  (SELECT count(*) FROM runs r WHERE r.host_id = h.host_id AND r.state = 'running'),\n"
	"  r.host_cloud, r.host_instance_type, r.host_region, r.host_cpus, r.host_memory_bytes\n"
	"FROM hosts h LEFT JOIN runs r ON r.run_id = (SELECT max(r2.run_id) FROM runs r2 WHERE r2.host_id = h.host_id)\n"
	"ORDER BY h.host_id";

static const char counts_sql[] =
	"SELECT (SELECT count(*) FROM hosts), (SELECT coalesce(sum(batches), 0) FROM hosts),\n"
	"  (SELECT coalesce(sum(records), 0) FROM hosts), (SELECT count(*) FROM runs),\n"
	"  (SELECT count(*) FROM runs WHERE state = 'running'), (SELECT count(*) FROM runs WHERE state = 'succeeded'),\n"
	"  (SELECT count(*) FROM runs WHERE state = 'failed'), (SELECT count(*) FROM processes),\n"
	"  (SELECT count(*) FROM signals)";

static struct store_int col_int(sqlite3_stmt *st, int i)
{
	struct store_int v = { .known = sqlite3_column_type(st, i) == SQLITE_INTEGER };

	v.v = sqlite3_column_int64(st, i);
	return v;
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	if (rc != SQLITE_OK) {
		rc = lake_sql_fail(s, rc);
		sqlite3_finalize(*st);
		*st = NULL;
	}
	return rc;
}

static void row_to_host(sqlite3_stmt *st, struct store_host *h)
{
	int i = 0;

	h->host_id = (const char *)sqlite3_column_text(st, i++);
	h->first_seen_ns = col_int(st, i++);
	h->last_seen_ns = col_int(st, i++);
	h->batches = col_int(st, i++);
	h->records = col_int(st, i++);
	h->lag_ns = col_int(st, i++);
	h->gaps_open = col_int(st, i++);
	h->missing_records = col_int(st, i++);
	h->kernel_drops = col_int(st, i++);
	h->ring_drops = col_int(st, i++);
	h->lost_evicted = col_int(st, i++);
	h->lost_quarantined = col_int(st, i++);
	h->lost_corrupt = col_int(st, i++);
	h->lost_ring = col_int(st, i++);
	h->runs = col_int(st, i++);
	h->running_runs = col_int(st, i++);
	h->cloud = (const char *)sqlite3_column_text(st, i++);
	h->instance_type = (const char *)sqlite3_column_text(st, i++);
	h->region = (const char *)sqlite3_column_text(st, i++);
	h->cpus = col_int(st, i++);
	h->memory_bytes = col_int(st, i++);
}

int store_hosts(struct store *s, store_host_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, stop = prepare(s, hosts_sql, &st);

	if (stop)
		return stop;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_host h;

		row_to_host(st, &h);
		stop = fn(ctx, &h);
	}
	if (!stop && rc != SQLITE_DONE)
		stop = lake_sql_fail(s, rc);
	sqlite3_finalize(st);
	return stop;
}

int store_counts(struct store *s, struct store_counts *c)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(s, counts_sql, &st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int i = 0;

		c->hosts = sqlite3_column_int64(st, i++);
		c->batches = sqlite3_column_int64(st, i++);
		c->records = sqlite3_column_int64(st, i++);
		c->runs = sqlite3_column_int64(st, i++);
		c->runs_running = sqlite3_column_int64(st, i++);
		c->runs_succeeded = sqlite3_column_int64(st, i++);
		c->runs_failed = sqlite3_column_int64(st, i++);
		c->processes = sqlite3_column_int64(st, i++);
		c->signals = sqlite3_column_int64(st, i++);
		rc = STORE_OK;
	} else {
		rc = lake_sql_fail(s, rc == SQLITE_DONE ? SQLITE_ERROR : rc);
	}
	sqlite3_finalize(st);
	return rc;
}
