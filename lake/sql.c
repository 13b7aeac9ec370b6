/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sql.h over SQLite: a statement is SQLite's own, the results mapped to
 * sql_rc. Extended result codes are on; only the primary code matters here.
 */
#include "sql.h"

#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

struct sql {
	sqlite3 *lite;
};

struct sql_stmt {
	struct sql *db;
	sqlite3_stmt *lite;
};

static int map_rc(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK: return SQL_OK;
	case SQLITE_ROW: return SQL_ROW;
	case SQLITE_DONE: return SQL_DONE;
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return SQL_E_BUSY;
	case SQLITE_NOMEM: return SQL_E_NOMEM;
	case SQLITE_READONLY: return SQL_E_READONLY;
	case SQLITE_NOTADB: return SQL_E_NOTADB;
	default: return SQL_E;
	}
}

int sql_open_sqlite(struct sql **out, const char *path, bool read_only, int busy_ms, char *err, size_t errlen)
{
	int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
		    SQLITE_OPEN_NOMUTEX;
	struct sql *db = calloc(1, sizeof(*db));
	unsigned char seed;
	int rc;

	*out = NULL;
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return SQL_E_NOMEM;
	}
	rc = sqlite3_open_v2(path, &db->lite, flags, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s", db->lite ? sqlite3_errmsg(db->lite) : "out of memory");
		sql_close(db);
		return map_rc(rc);
	}
	sqlite3_busy_timeout(db->lite, busy_ms);
	sqlite3_extended_result_codes(db->lite, 1);
	/* SQLite seeds its generator (WAL salts, sql_random) from /dev/urandom at first use: now, not in a sandbox. */
	sqlite3_randomness(1, &seed);
	*out = db;
	return SQL_OK;
}

void sql_close(struct sql *db)
{
	if (!db)
		return;
	sqlite3_close(db->lite);
	free(db);
}

int sql_exec(struct sql *db, const char *text)
{
	return map_rc(sqlite3_exec(db->lite, text, NULL, NULL, NULL));
}

const char *sql_errmsg(const struct sql *db)
{
	return sqlite3_errmsg(db->lite);
}

bool sql_in_transaction(const struct sql *db)
{
	return !sqlite3_get_autocommit(db->lite);
}

int64_t sql_changes(const struct sql *db)
{
	return sqlite3_changes64(db->lite);
}

void sql_random(struct sql *db, void *p, size_t n)
{
	(void)db;
	sqlite3_randomness((int)n, p);
}

int sql_prepare(struct sql *db, const char *text, bool persistent, struct sql_stmt **out)
{
	struct sql_stmt *st = calloc(1, sizeof(*st));
	int rc;

	*out = NULL;
	if (!st)
		return SQL_E_NOMEM;
	st->db = db;
	rc = sqlite3_prepare_v3(db->lite, text, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st->lite, NULL);
	if (rc != SQLITE_OK || !st->lite) { /* no statement in the text is a failure too */
		sqlite3_finalize(st->lite);
		free(st);
		return rc != SQLITE_OK ? map_rc(rc) : SQL_E;
	}
	*out = st;
	return SQL_OK;
}

void sql_finalize(struct sql_stmt *st)
{
	if (!st)
		return;
	sqlite3_finalize(st->lite);
	free(st);
}

const char *sql_text(const struct sql_stmt *st)
{
	return sqlite3_sql(st->lite);
}

int sql_param_count(const struct sql_stmt *st)
{
	return sqlite3_bind_parameter_count(st->lite);
}

int sql_bind_i64(struct sql_stmt *st, int i, int64_t v)
{
	return map_rc(sqlite3_bind_int64(st->lite, i, v));
}

int sql_bind_double(struct sql_stmt *st, int i, double v)
{
	return map_rc(sqlite3_bind_double(st->lite, i, v));
}

int sql_bind_null(struct sql_stmt *st, int i)
{
	return map_rc(sqlite3_bind_null(st->lite, i));
}

int sql_bind_text(struct sql_stmt *st, int i, const char *p, size_t len)
{
	return map_rc(sqlite3_bind_text64(st->lite, i, p, len, SQLITE_STATIC, SQLITE_UTF8));
}

int sql_bind_blob(struct sql_stmt *st, int i, const void *p, size_t len)
{
	return map_rc(sqlite3_bind_blob64(st->lite, i, len ? p : "", len, SQLITE_STATIC));
}

int sql_step(struct sql_stmt *st)
{
	return map_rc(sqlite3_step(st->lite));
}

void sql_reset(struct sql_stmt *st)
{
	sqlite3_reset(st->lite);
	sqlite3_clear_bindings(st->lite);
}

int sql_col_count(const struct sql_stmt *st)
{
	return sqlite3_column_count(st->lite);
}

enum sql_type sql_col_type(const struct sql_stmt *st, int i)
{
	switch (sqlite3_column_type(st->lite, i)) {
	case SQLITE_INTEGER: return SQL_INTEGER;
	case SQLITE_FLOAT: return SQL_FLOAT;
	case SQLITE_TEXT: return SQL_TEXT;
	case SQLITE_BLOB: return SQL_BLOB;
	default: return SQL_NULL;
	}
}

int64_t sql_col_i64(const struct sql_stmt *st, int i)
{
	return sqlite3_column_int64(st->lite, i);
}

double sql_col_double(const struct sql_stmt *st, int i)
{
	return sqlite3_column_double(st->lite, i);
}

const char *sql_col_text(const struct sql_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st->lite, i);
}

size_t sql_col_bytes(const struct sql_stmt *st, int i)
{
	return (size_t)sqlite3_column_bytes(st->lite, i);
}

const void *sql_col_blob(const struct sql_stmt *st, int i)
{
	return sqlite3_column_blob(st->lite, i);
}
