/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's upkeep (docs/lake.md, "Partitions and retention"): on
 * PostgreSQL, each time-partitioned table (schema.c's `partitioned`) gets
 * its partition of every day from yesterday to STORE_PARTITION_AHEAD_DAYS
 * ahead, and loses whole partitions past lake_retention (DROP TABLE, never
 * a DELETE of their rows); on SQLite, whose tables are not partitioned, the
 * same rows go by DELETE, once a day. On both, the batches ledger and the
 * gaps follow lake_retention, and runs (with their steps, processes and
 * signals) and processes their own, longer lake_retention_runs.
 *
 * The ingest runs it when it opens the lake, and store_batch() again
 * every STORE_UPKEEP_EVERY_NS, or at once when a batch's day has no
 * partition yet. Several ingests on one PostgreSQL take turns: one
 * transaction under an advisory lock, which the others skip.
 */
#include "db.h"
#include "schema.h"
#include "sql.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY_NS ((uint64_t)LAKE_PARTITION_NS)

void store_set_retention(struct store *s, uint64_t series_ns, uint64_t runs_ns)
{
	s->retention_ns = series_ns;
	s->runs_retention_ns = runs_ns;
}

/* head, a number (the lake's own: a day, a time), tail: one statement run whole; the rows it deleted
 * counted when count. */
static int exec_num(struct store *s, const char *head, int64_t v, const char *tail, bool count)
{
	char text[512];
	int rc;

	snprintf(text, sizeof(text), "%s%" PRId64 "%s", head, v, tail);
	rc = sql_exec(s->db, text);
	if (rc != SQL_OK)
		return lake_sql_fail(s, rc);
	if (count)
		s->upkeep.rows_deleted += (uint64_t)sql_changes(s->db);
	return STORE_OK;
}

/* "<table>_pYYYYMMDD" of table: its day (days since the epoch), or -1 for another name. */
static int64_t partition_day(const char *name, const char *table)
{
	size_t n = strlen(table);
	struct tm tm = { 0 };
	char *end;

	if (strncmp(name, table, n) || strncmp(name + n, "_p", 2) || strlen(name + n + 2) != 8)
		return -1;
	for (int i = 0; i < 8; i++)
		if (name[n + 2 + i] < '0' || name[n + 2 + i] > '9')
			return -1;
	long ymd = strtol(name + n + 2, &end, 10);

	tm.tm_year = (int)(ymd / 10000) - 1900;
	tm.tm_mon = (int)(ymd / 100 % 100) - 1;
	tm.tm_mday = (int)(ymd % 100);
	time_t t = timegm(&tm);

	return t < 0 ? -1 : (int64_t)(t / 86400);
}

/* A partitioned table's partitions of days before `before` (days since the epoch), dropped. */
static int drop_partitions(struct store *s, const char *table, int64_t before)
{
	static const char list[] = "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
				   "WHERE i.inhparent = CAST(?1 AS regclass) ORDER BY 1";
	char (*old)[64] = NULL;
	size_t n = 0, cap = 0;
	struct sql_stmt *st = NULL;
	int rc = sql_prepare(s->db, list, false, &st);

	if (rc == SQL_OK)
		rc = sql_bind_text(st, 1, table, strlen(table));
	while (rc == SQL_OK && (rc = sql_step(st)) == SQL_ROW) {
		const char *name = sql_col_text(st, 0);
		int64_t day = name ? partition_day(name, table) : -1;

		rc = SQL_OK;
		if (day < 0 || day >= before || strlen(name) >= sizeof(old[0]))
			continue; /* a partition of a day kept, or one this code did not name: left alone */
		if (n == cap) {
			void *p = realloc(old, (cap = cap ? cap * 2 : 16) * sizeof(old[0]));

			if (!p) {
				rc = SQL_E_NOMEM;
				break;
			}
			old = p;
		}
		snprintf(old[n++], sizeof(old[0]), "%s", name);
	}
	if (rc == SQL_DONE)
		rc = SQL_OK;
	rc = rc == SQL_OK ? STORE_OK : lake_sql_fail(s, rc);
	sql_finalize(st);
	for (size_t i = 0; i < n && rc == STORE_OK; i++) {
		char text[96];
		int e;

		snprintf(text, sizeof(text), "DROP TABLE %s", old[i]);
		e = sql_exec(s->db, text);
		if (e != SQL_OK)
			rc = lake_sql_fail(s, e);
		else
			s->upkeep.partitions_dropped++;
	}
	free(old);
	return rc;
}

/* Runs past lake_retention_runs, with their rows; processes that ended (or started) before it. */
static int retain_runs(struct store *s, int64_t cutoff)
{
#define OLD_RUNS "SELECT run_id FROM runs WHERE coalesce(last_update_ns, end_ns, start_ns) < "
	static const char *const sql[][2] = {
		{ "DELETE FROM steps WHERE run_id IN (" OLD_RUNS, ")" },
		{ "DELETE FROM run_processes WHERE run_id IN (" OLD_RUNS, ")" },
		{ "DELETE FROM signals WHERE run_id IN (" OLD_RUNS, ")" },
		{ "DELETE FROM runs WHERE coalesce(last_update_ns, end_ns, start_ns) < ", "" },
		{ "DELETE FROM processes WHERE coalesce(end_real_ns, start_real_ns) < ", "" },
	};
#undef OLD_RUNS
	int rc = STORE_OK;

	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]) && rc == STORE_OK; i++)
		rc = exec_num(s, sql[i][0], cutoff, sql[i][1], true);
	return rc;
}

/* lake_retention's rows, of the days before cutoff_day (cutoff its first ns): whole partitions (PostgreSQL)
 * or a DELETE (SQLite); the ledger's and the gaps'. */
static int retain_series(struct store *s, int64_t cutoff, int64_t cutoff_day, bool pg)
{
	char head[128];
	int rc = STORE_OK;

	for (unsigned i = 0; i < lake_ntables && rc == STORE_OK; i++) {
		const struct lake_table *t = &lake_tables[i];

		if (!t->partitioned)
			continue;
		snprintf(head, sizeof(head), "DELETE FROM %s WHERE " LAKE_PARTITION_COLUMN " < ", t->name);
		rc = pg ? drop_partitions(s, t->name, cutoff_day) : exec_num(s, head, cutoff, "", true);
	}
	if (rc == STORE_OK)
		rc = exec_num(s, "DELETE FROM batches WHERE received_ns < ", cutoff, "", true);
	if (rc == STORE_OK)
		rc = exec_num(s, "DELETE FROM gaps WHERE found_ns < ", cutoff, "", true);
	return rc;
}

static int make_partition(struct store *s, const char *table, int64_t day)
{
	char head[96];

	snprintf(head, sizeof(head), "SELECT lake_partition('%s', ", table);
	return exec_num(s, head, day, ")", false);
}

static int upkeep(struct store *s, uint64_t now_ns, bool pg)
{
	int64_t today = (int64_t)(now_ns / DAY_NS);
	int rc = STORE_OK;

	for (unsigned i = 0; pg && i < lake_ntables && rc == STORE_OK; i++)
		for (int64_t d = today - 1; lake_tables[i].partitioned && d <= today + STORE_PARTITION_AHEAD_DAYS &&
					    rc == STORE_OK; d++)
			rc = make_partition(s, lake_tables[i].name, d);
	/* retention once a day: the DELETEs read whole tables (SQLite's series, runs, processes) */
	if (rc != STORE_OK || today == s->retained_day)
		return rc;
	if (s->retention_ns && now_ns > s->retention_ns) { /* whole days, on both engines: the same rows go */
		int64_t day = (int64_t)((now_ns - s->retention_ns) / DAY_NS);

		rc = retain_series(s, day * (int64_t)DAY_NS, day, pg);
	}
	if (rc == STORE_OK && s->runs_retention_ns && now_ns > s->runs_retention_ns)
		rc = retain_runs(s, (int64_t)(now_ns - s->runs_retention_ns));
	if (rc == STORE_OK)
		s->retained_day = today;
	return rc;
}

int store_maintain(struct store *s, uint64_t now_ns, struct store_upkeep *out)
{
	bool pg = sql_is_pg(s->db);
	int rc;

	memset(&s->upkeep, 0, sizeof(s->upkeep));
	if (s->read_only)
		return STORE_E_READONLY;
	rc = sql_exec(s->db, pg ? "BEGIN" : "BEGIN IMMEDIATE");
	if (rc != SQL_OK)
		return lake_sql_fail(s, rc);
	if (pg) { /* one ingest at a time; the others find it taken and skip */
		int64_t mine = 0;
		struct sql_stmt *st = NULL;

		rc = sql_prepare(s->db, "SELECT CASE WHEN pg_try_advisory_xact_lock(" STORE_PG_UPKEEP_LOCK ") THEN 1 "
				 "ELSE 0 END", false, &st);
		if (rc == SQL_OK && (rc = sql_step(st)) == SQL_ROW) {
			mine = sql_col_i64(st, 0);
			rc = SQL_OK;
		}
		sql_finalize(st);
		rc = rc == SQL_OK ? STORE_OK : lake_sql_fail(s, rc);
		if (rc == STORE_OK && !mine)
			s->upkeep.skipped = true;
	}
	if (rc == STORE_OK && !s->upkeep.skipped)
		rc = upkeep(s, now_ns, pg);
	if (rc == STORE_OK) {
		int c = sql_exec(s->db, "COMMIT");

		rc = c == SQL_OK ? STORE_OK : lake_sql_fail(s, c);
	}
	if (rc != STORE_OK) {
		char keep[sizeof(s->errmsg)];

		memcpy(keep, s->errmsg, sizeof(keep));
		if (sql_in_transaction(s->db))
			sql_exec(s->db, "ROLLBACK");
		memcpy(s->errmsg, keep, sizeof(keep));
		s->upkeep_next_ns = now_ns + STORE_UPKEEP_RETRY_NS;
		return rc;
	}
	if (!pg)
		s->parts_until_ns = UINT64_MAX; /* no partitions to wait for */
	else if (!s->upkeep.skipped)
		s->parts_until_ns = ((uint64_t)(now_ns / DAY_NS) + STORE_PARTITION_AHEAD_DAYS + 1) * DAY_NS;
	s->upkeep_next_ns = now_ns + (s->upkeep.skipped ? STORE_UPKEEP_RETRY_NS : STORE_UPKEEP_EVERY_NS);
	if (out)
		*out = s->upkeep;
	return STORE_OK;
}

/* Before a batch received at now_ns: the upkeep when it is due; a failure matters only if the batch's day
 * may have no partition (its rows could not go in). */
int lake_upkeep_due(struct store *s, uint64_t now_ns)
{
	int rc;

	if (now_ns < s->upkeep_next_ns && now_ns < s->parts_until_ns)
		return STORE_OK;
	/* skipped: another ingest has the turn and makes the partitions; if this batch's day has none yet, its
	 * rows fail to go in, the batch is answered 503 and sent again */
	rc = store_maintain(s, now_ns, NULL);
	return rc != STORE_OK && now_ns < s->parts_until_ns ? STORE_OK : rc;
}
