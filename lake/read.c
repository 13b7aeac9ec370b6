/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake: the calls of store.h's "reading" part, for the CLI
 * (and the analysis and web view to come). Each walks the rows of one
 * prepared statement and hands them to a callback; strings live until
 * the callback returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static void row_to_run(sqlite3_stmt *st, struct store_run *r)
{
	memset(r, 0, sizeof(*r));
	r->run_id = sqlite3_column_int64(st, 0);
	snprintf(r->host_id, sizeof(r->host_id), "%s", col_text(st, 1) ? col_text(st, 1) : "");
	r->has_start = sqlite3_column_type(st, 2) == SQLITE_INTEGER;
	r->start_ns = sqlite3_column_int64(st, 2);
	r->has_end = sqlite3_column_type(st, 3) == SQLITE_INTEGER;
	r->end_ns = sqlite3_column_int64(st, 3);
	r->has_exit = sqlite3_column_type(st, 4) == SQLITE_INTEGER;
	r->exit_code = sqlite3_column_int64(st, 4);
	r->command = col_text(st, 5) ? col_text(st, 5) : "";
	r->summary = col_text(st, 6);
}

/* Every row of a bound run query to fn; *rows counts them. */
static int each_run(struct bind *b, store_run_fn fn, void *ctx, int *rows)
{
	struct store_run r;
	int rc = lake_bind_check(b), stop = 0;

	if (rc)
		return rc;
	while (!stop && (rc = sqlite3_step(b->st)) == SQLITE_ROW) {
		row_to_run(b->st, &r);
		(*rows)++;
		stop = fn(ctx, &r);
	}
	sqlite3_reset(b->st);
	sqlite3_clear_bindings(b->st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? STORE_OK : lake_sql_fail(b->s, rc);
}

int store_runs(struct store *s, store_run_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUNS_LIST);
	int rows = 0;

	return each_run(&b, fn, ctx, &rows);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int store_run(struct store *s, const char *name, store_run_fn fn, void *ctx)
{
	struct bind b;
	int rows = 0, rc;

	if (all_digits(name) && strlen(name) < 19) {
		b = lake_bind_start(s, ST_RUN_BY_ID);
		lake_b_i64(&b, strtoll(name, NULL, 10));
		rc = each_run(&b, fn, ctx, &rows);
		if (rc || rows)
			return rc;
	}
	b = lake_bind_start(s, ST_RUN_BY_NAME);
	lake_b_str(&b, name);
	rc = each_run(&b, fn, ctx, &rows);
	return rc || rows ? rc : STORE_E_NOT_FOUND;
}

int store_run_signals(struct store *s, int64_t run_id, store_signal_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUN_SIGNALS_LIST);
	struct store_signal sig;
	int rc, stop = 0;

	lake_b_i64(&b, run_id);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	while (!stop && (rc = sqlite3_step(b.st)) == SQLITE_ROW) {
		sig = (struct store_signal){
			.kind = col_text(b.st, 0) ? col_text(b.st, 0) : "?",
			.has_pid = sqlite3_column_type(b.st, 1) == SQLITE_INTEGER,
			.pid = sqlite3_column_int64(b.st, 1),
			.step = col_text(b.st, 2),
			.tool = col_text(b.st, 3),
			.detail = col_text(b.st, 4),
		};
		stop = fn(ctx, &sig);
	}
	sqlite3_reset(b.st);
	sqlite3_clear_bindings(b.st);
	if (stop)
		return stop;
	return rc == SQLITE_DONE ? STORE_OK : lake_sql_fail(s, rc);
}
