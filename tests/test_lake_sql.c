/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lake/sql.h on both engines: every check runs on an SQLite file and on a
 * database of a throwaway PostgreSQL cluster (tests/pg_cluster.h), and
 * must come out the same: parameters as SQLite writes them (?N, ?) and
 * quoted text left alone, text bound by its length, every type bound and read back (the ends of
 * int64, a double, NULL, UTF-8 text, a blob with NUL bytes), rows one by
 * one, rows changed, transactions, failures named, SQLite's index hints
 * (dropped for PostgreSQL), and what a wrong URI
 * or an unreachable server says. Bulk statements: every type through
 * them (PostgreSQL: COPY's binary format), their rows there once flushed
 * in the transaction, dropped on a rollback, a refused row failing them
 * named, texts that are no bulk statement refused; PostgreSQL's: a value
 * not of its column's type refused, a full buffer sent as it comes, rows
 * of a connection gone not sent on the next. Queued statements: in order
 * on both engines; PostgreSQL's failures named at the next waiting call,
 * restarts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg_cluster.h"
#include "sql.h"

struct one {
	struct pg_engines *e;
	struct sql *lite, *pg;
};

static int group_setup(void **state)
{
	return pg_engines_setup(state, "test_lake_sql");
}

static int group_teardown(void **state)
{
	return pg_engines_teardown(state);
}

/* Each test: a new SQLite file and a new PostgreSQL database. */
static int setup(void **state)
{
	struct pg_engines *e = *state;
	struct one *o = calloc(1, sizeof(*o));
	char path[96], name[16], uri[256], err[256];

	if (!o)
		return -1;
	o->e = e;
	e->n++;
	snprintf(path, sizeof(path), "%s/t%u.db", e->dir, e->n);
	snprintf(name, sizeof(name), "t%u", e->n);
	if (sql_open_sqlite(&o->lite, path, false, 1000, err, sizeof(err)) ||
	    pg_cluster_createdb(&e->pc, name, uri, sizeof(uri)) || sql_open_pg(&o->pg, uri, false, 5000, err, sizeof(err))) {
		fprintf(stderr, "setup: %s\n", err);
		sql_close(o->lite);
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

static struct sql_stmt *prep(struct sql *db, const char *text)
{
	struct sql_stmt *st = NULL;

	if (sql_prepare(db, text, true, &st) != SQL_OK)
		fail_msg("prepare %s: %s", text, sql_errmsg(db));
	return st;
}

static void exec_ok(struct sql *db, const char *text)
{
	if (sql_exec(db, text) != SQL_OK)
		fail_msg("%s: %s", text, sql_errmsg(db));
}

/* Every type in and out; ?N used twice, ? numbered in order, a '?' in quotes left alone. */
static void values_round_trip(struct sql *db)
{
	static const unsigned char blob[] = { 0, 1, 0xff, 0, 'x', 0 };
	static const char text[] = "caf\xc3\xa9 \"?\" 'x'";
	struct sql_stmt *ins, *sel;
	size_t n;

	exec_ok(db, "CREATE TABLE t (id BIGINT, i BIGINT, d DOUBLE PRECISION, s TEXT, b BYTEA, z BIGINT)");
	ins = prep(db, "INSERT INTO t (id, i, d, s, b, z) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	assert_int_equal(sql_param_count(ins), 6);
	for (int64_t id = 1; id <= 3; id++) {
		int64_t v = id == 1 ? INT64_MIN : id == 2 ? INT64_MAX : -1;

		assert_int_equal(sql_bind_i64(ins, 1, id), SQL_OK);
		assert_int_equal(sql_bind_i64(ins, 2, v), SQL_OK);
		assert_int_equal(sql_bind_double(ins, 3, 0.1 * (double)id), SQL_OK);
		assert_int_equal(sql_bind_text(ins, 4, text, strlen(text)), SQL_OK);
		assert_int_equal(sql_bind_blob(ins, 5, blob, id == 3 ? 0 : sizeof(blob)), SQL_OK);
		assert_int_equal(sql_bind_null(ins, 6), SQL_OK);
		assert_int_equal(sql_step(ins), SQL_DONE);
		assert_int_equal(sql_changes(db), 1);
		sql_reset(ins);
	}
	sql_finalize(ins);
	sel = prep(db, "SELECT i, d, s, b, z, '?' || s, ?1 * 2 FROM t WHERE id >= ?1 ORDER BY id");
	assert_int_equal(sql_param_count(sel), 1);
	assert_int_equal(sql_bind_i64(sel, 1, 2), SQL_OK);
	assert_int_equal(sql_step(sel), SQL_ROW);
	assert_int_equal(sql_col_count(sel), 7);
	assert_int_equal(sql_col_type(sel, 0), SQL_INTEGER);
	assert_true(sql_col_i64(sel, 0) == INT64_MAX);
	assert_int_equal(sql_col_type(sel, 1), SQL_FLOAT);
	assert_true(sql_col_double(sel, 1) == 0.2);
	assert_int_equal(sql_col_type(sel, 2), SQL_TEXT);
	assert_string_equal(sql_col_text(sel, 2), text);
	assert_int_equal(sql_col_bytes(sel, 2), strlen(text));
	assert_int_equal(sql_col_type(sel, 3), SQL_BLOB);
	n = sql_col_bytes(sel, 3);
	assert_int_equal(n, sizeof(blob));
	assert_memory_equal(sql_col_blob(sel, 3), blob, sizeof(blob));
	assert_int_equal(sql_col_type(sel, 4), SQL_NULL);
	assert_null(sql_col_text(sel, 4));
	assert_int_equal(sql_col_i64(sel, 4), 0);
	assert_int_equal(strncmp(sql_col_text(sel, 5), "?caf", 4), 0);
	assert_int_equal(sql_col_i64(sel, 6), 4);
	assert_int_equal(sql_step(sel), SQL_ROW);
	assert_true(sql_col_i64(sel, 0) == -1);
	assert_int_equal(sql_col_bytes(sel, 3), 0);
	assert_int_equal(sql_step(sel), SQL_DONE);
	sql_reset(sel);
	/* run again after a reset, now from id 1 */
	assert_int_equal(sql_bind_i64(sel, 1, 1), SQL_OK);
	assert_int_equal(sql_step(sel), SQL_ROW);
	assert_true(sql_col_i64(sel, 0) == INT64_MIN);
	sql_reset(sel);
	sql_finalize(sel);
	/* bare ? numbered in order */
	sel = prep(db, "SELECT ?, ?");
	assert_int_equal(sql_param_count(sel), 2);
	assert_int_equal(sql_bind_text(sel, 1, "ab", 1), SQL_OK); /* its length, not its NUL */
	assert_int_equal(sql_bind_text(sel, 2, "b", 1), SQL_OK);
	assert_int_equal(sql_step(sel), SQL_ROW);
	assert_string_equal(sql_col_text(sel, 0), "a");
	assert_string_equal(sql_col_text(sel, 1), "b");
	sql_finalize(sel);
}

static void every_type_round_trips_on_both_engines(void **state)
{
	struct one *o = *state;

	values_round_trip(o->lite);
	values_round_trip(o->pg);
}

/* RETURNING, rows changed by an UPDATE, a transaction rolled back, an aggregate of integers. */
static void changes_and_transactions(struct sql *db)
{
	struct sql_stmt *st;

	exec_ok(db, "CREATE TABLE k (id BIGINT PRIMARY KEY, v BIGINT)");
	st = prep(db, "INSERT INTO k (id, v) VALUES (?, ?) RETURNING id");
	for (int i = 1; i <= 4; i++) {
		sql_bind_i64(st, 1, i * 10);
		sql_bind_i64(st, 2, i);
		assert_int_equal(sql_step(st), SQL_ROW);
		assert_int_equal(sql_col_i64(st, 0), i * 10);
		sql_reset(st);
	}
	sql_finalize(st);
	assert_false(sql_in_transaction(db));
	exec_ok(db, "BEGIN");
	assert_true(sql_in_transaction(db));
	exec_ok(db, "UPDATE k SET v = v + 1 WHERE id > 15");
	assert_int_equal(sql_changes(db), 3);
	exec_ok(db, "ROLLBACK");
	assert_false(sql_in_transaction(db));
	st = prep(db, "SELECT sum(v), count(*), max(id) FROM k");
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_col_type(st, 0), SQL_INTEGER);
	assert_int_equal(sql_col_i64(st, 0), 10);
	assert_int_equal(sql_col_i64(st, 1), 4);
	assert_int_equal(sql_col_i64(st, 2), 40);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_finalize(st);
	/* the key holds: a second id 10 fails, named, and the connection goes on */
	assert_int_equal(sql_exec(db, "INSERT INTO k (id, v) VALUES (10, 0)"), SQL_E);
	assert_non_null(strcasestr(sql_errmsg(db), "unique")); /* SQLite: UNIQUE constraint; PostgreSQL: unique */
	exec_ok(db, "INSERT INTO k (id, v) VALUES (50, 5) ON CONFLICT (id) DO NOTHING");
	assert_int_equal(sql_changes(db), 1);
	exec_ok(db, "INSERT INTO k (id, v) VALUES (50, 5) ON CONFLICT (id) DO NOTHING");
	assert_int_equal(sql_changes(db), 0);
}

static void changes_and_transactions_on_both_engines(void **state)
{
	struct one *o = *state;

	changes_and_transactions(o->lite);
	changes_and_transactions(o->pg);
}

/* Bad SQL fails at prepare, named; a parameter the statement has not is refused. */
static void failures(struct sql *db)
{
	struct sql_stmt *st = NULL;

	assert_int_equal(sql_prepare(db, "SELEKT 1", false, &st), SQL_E);
	assert_null(st);
	assert_non_null(strstr(sql_errmsg(db), "SELEKT"));
	st = prep(db, "SELECT ?1");
	assert_int_not_equal(sql_bind_i64(st, 2, 1), SQL_OK);
	sql_finalize(st);
}

static void failures_are_named_on_both_engines(void **state)
{
	struct one *o = *state;
	unsigned char a[8], b[8];

	failures(o->lite);
	failures(o->pg);
	sql_random(o->pg, a, sizeof(a));
	sql_random(o->pg, b, sizeof(b));
	assert_memory_not_equal(a, b, sizeof(a));
}

/* PostgreSQL only: text with a NUL is refused, not cut (SQLite keeps it). */
static void pg_refuses_text_with_a_nul(void **state)
{
	struct one *o = *state;
	struct sql_stmt *st = prep(o->pg, "SELECT ?1::text");
	static const char nul[] = "a\0b";

	assert_int_equal(sql_bind_text(st, 1, nul, 3), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "NUL"));
	sql_finalize(st);
}

/* ---- bulk statements ---- */

static struct sql_stmt *prep_bulk(struct sql *db, const char *text)
{
	struct sql_stmt *st = NULL;

	if (sql_prepare_bulk(db, text, &st) != SQL_OK)
		fail_msg("prepare bulk %s: %s", text, sql_errmsg(db));
	return st;
}

static int64_t count_of(struct sql *db, const char *text)
{
	struct sql_stmt *st = prep(db, text);
	int64_t n;

	assert_int_equal(sql_step(st), SQL_ROW);
	n = sql_col_i64(st, 0);
	sql_finalize(st);
	return n;
}

/*
 * Rows of every type through a bulk statement, in a transaction: there after sql_bulk_flush (PostgreSQL:
 * not before), each value as bound: int64's ends, an integer into a double column, UTF-8 text and empty
 * text, a blob of NUL and 0xff bytes and an empty one, NULL in each column.
 */
static void bulk_round_trip(struct sql *db)
{
	static const unsigned char blob[] = { 0, 0xff, 0, 'x', 0xfe, 0 };
	static const char text[] = "caf\xc3\xa9 \xe2\x82\xac\t\"'\\";
	static const int64_t ints[] = { INT64_MIN, INT64_MAX, -1, 0 };
	struct sql_stmt *ins, *sel;

	exec_ok(db, "CREATE TABLE b (id BIGINT PRIMARY KEY, i BIGINT, d DOUBLE PRECISION, s TEXT, x BYTEA)");
	ins = prep_bulk(db, "INSERT INTO b (id, i, d, s, x) VALUES (?, ?, ?, ?, ?)");
	assert_int_equal(sql_param_count(ins), 5);
	exec_ok(db, "BEGIN");
	for (int64_t id = 0; id < 4; id++) {
		assert_int_equal(sql_bind_i64(ins, 1, id), SQL_OK);
		assert_int_equal(sql_bind_i64(ins, 2, ints[id]), SQL_OK);
		if (id == 1)
			assert_int_equal(sql_bind_i64(ins, 3, -7), SQL_OK);
		else
			assert_int_equal(sql_bind_double(ins, 3, id == 2 ? -0.1 : 1e300), SQL_OK);
		assert_int_equal(sql_bind_text(ins, 4, text, id == 3 ? 0 : strlen(text)), SQL_OK);
		assert_int_equal(sql_bind_blob(ins, 5, blob, id == 3 ? 0 : sizeof(blob)), SQL_OK);
		assert_int_equal(sql_step(ins), SQL_DONE);
		sql_reset(ins);
	}
	assert_int_equal(sql_bind_i64(ins, 1, 4), SQL_OK); /* every other column NULL */
	for (int i = 2; i <= 5; i++)
		assert_int_equal(sql_bind_null(ins, i), SQL_OK);
	assert_int_equal(sql_step(ins), SQL_DONE);
	sql_reset(ins);
	assert_int_equal(count_of(db, "SELECT count(*) FROM b"), sql_is_pg(db) ? 0 : 5);
	assert_int_equal(sql_bulk_flush(db), SQL_OK);
	assert_int_equal(count_of(db, "SELECT count(*) FROM b"), 5);
	assert_int_equal(sql_bulk_flush(db), SQL_OK); /* nothing left to send */
	exec_ok(db, "COMMIT");
	sel = prep(db, "SELECT i, d, s, x FROM b ORDER BY id");
	for (int64_t id = 0; id < 4; id++) {
		assert_int_equal(sql_step(sel), SQL_ROW);
		assert_int_equal(sql_col_type(sel, 0), SQL_INTEGER);
		assert_true(sql_col_i64(sel, 0) == ints[id]);
		assert_int_equal(sql_col_type(sel, 1), SQL_FLOAT);
		assert_true(sql_col_double(sel, 1) == (id == 1 ? -7.0 : id == 2 ? -0.1 : 1e300));
		assert_int_equal(sql_col_type(sel, 2), SQL_TEXT);
		assert_string_equal(sql_col_text(sel, 2), id == 3 ? "" : text);
		assert_int_equal(sql_col_type(sel, 3), SQL_BLOB);
		assert_int_equal(sql_col_bytes(sel, 3), id == 3 ? 0 : sizeof(blob));
		if (id != 3)
			assert_memory_equal(sql_col_blob(sel, 3), blob, sizeof(blob));
	}
	assert_int_equal(sql_step(sel), SQL_ROW);
	for (int i = 0; i < 4; i++)
		assert_int_equal(sql_col_type(sel, i), SQL_NULL);
	assert_int_equal(sql_step(sel), SQL_DONE);
	sql_finalize(sel);
	sql_finalize(ins);
}

static void bulk_rows_round_trip_on_both_engines(void **state)
{
	struct one *o = *state;

	bulk_round_trip(o->lite);
	bulk_round_trip(o->pg);
}

/*
 * A bulk statement is an INSERT of parameters only, one per column, nothing after: anything else is
 * refused at prepare, named. Rows dropped (a rollback's) are never sent; a row the table refuses fails
 * the step (SQLite) or the flush (PostgreSQL, its message), and the rows with it are dropped: the next
 * transaction starts clean.
 */
static void bulk_refusals_and_failures(struct sql *db)
{
	static const char *const bad[] = {
		"INSERT INTO c (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING",
		"INSERT INTO c (a, b) VALUES (?, 1)",
		"INSERT INTO c (a, b) VALUES (?2, ?1)",
		"INSERT INTO c (a, b) VALUES (?)",
		"INSERT INTO c VALUES (?, ?)",
		"UPDATE c SET a = ?",
	};
	struct sql_stmt *st = NULL;
	int rc;

	exec_ok(db, "CREATE TABLE c (a BIGINT PRIMARY KEY, b TEXT)");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sql_prepare_bulk(db, bad[i], &st), SQL_E);
		assert_null(st);
		assert_non_null(strstr(sql_errmsg(db), "not a bulk statement"));
	}
	st = prep_bulk(db, "INSERT INTO c(a,b)VALUES(?1,?2)");
	/* dropped: never sent */
	exec_ok(db, "BEGIN");
	assert_int_equal(sql_bind_i64(st, 1, 1), SQL_OK);
	assert_int_equal(sql_bind_text(st, 2, "dropped", 7), SQL_OK);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_reset(st);
	sql_bulk_discard(db);
	exec_ok(db, "ROLLBACK");
	assert_int_equal(sql_bulk_flush(db), SQL_OK);
	assert_int_equal(count_of(db, "SELECT count(*) FROM c"), 0);
	/* a key twice: refused, named */
	exec_ok(db, "BEGIN");
	rc = SQL_DONE;
	for (int i = 0; i < 3 && rc == SQL_DONE; i++) {
		assert_int_equal(sql_bind_i64(st, 1, i ? 7 : 6), SQL_OK);
		assert_int_equal(sql_bind_text(st, 2, "k", 1), SQL_OK);
		rc = sql_step(st);
		sql_reset(st);
	}
	if (rc == SQL_DONE)
		rc = sql_bulk_flush(db);
	assert_int_equal(rc, SQL_E);
	assert_non_null(strcasestr(sql_errmsg(db), "unique"));
	sql_bulk_discard(db);
	exec_ok(db, "ROLLBACK");
	/* the next transaction: only its own rows */
	exec_ok(db, "BEGIN");
	assert_int_equal(sql_bind_i64(st, 1, 8), SQL_OK);
	assert_int_equal(sql_bind_text(st, 2, "eight", 5), SQL_OK);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_reset(st);
	assert_int_equal(sql_bulk_flush(db), SQL_OK);
	exec_ok(db, "COMMIT");
	assert_int_equal(count_of(db, "SELECT count(*) FROM c"), 1);
	assert_int_equal(count_of(db, "SELECT a FROM c"), 8);
	sql_finalize(st);
}

static void bulk_refusals_and_failures_on_both_engines(void **state)
{
	struct one *o = *state;

	bulk_refusals_and_failures(o->lite);
	bulk_refusals_and_failures(o->pg);
}

/*
 * PostgreSQL: a value that is not of its column's type fails the step, named (COPY's binary format would
 * have the server read its bytes as another type); a column of a type bulk statements do not write is
 * refused at prepare; text with a NUL is refused at its bind, as any statement's.
 */
static void pg_bulk_values_must_fit_their_columns(void **state)
{
	struct one *o = *state;
	struct sql_stmt *st = NULL;

	exec_ok(o->pg, "CREATE TABLE m (i BIGINT, s TEXT, x BYTEA, n INTEGER)");
	assert_int_equal(sql_prepare_bulk(o->pg, "INSERT INTO m (i, n) VALUES (?, ?)", &st), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "m.n"));
	assert_int_equal(sql_prepare_bulk(o->pg, "INSERT INTO no_such (i) VALUES (?)", &st), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "no_such"));
	st = prep_bulk(o->pg, "INSERT INTO m (i, s, x) VALUES (?, ?, ?)");
	exec_ok(o->pg, "BEGIN");
	assert_int_equal(sql_bind_text(st, 1, "1", 1), SQL_OK);
	assert_int_equal(sql_bind_null(st, 2), SQL_OK);
	assert_int_equal(sql_bind_null(st, 3), SQL_OK);
	assert_int_equal(sql_step(st), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "parameter 1"));
	sql_reset(st);
	assert_int_equal(sql_bind_null(st, 1), SQL_OK);
	assert_int_equal(sql_bind_blob(st, 2, "ab", 2), SQL_OK);
	assert_int_equal(sql_bind_null(st, 3), SQL_OK);
	assert_int_equal(sql_step(st), SQL_E);
	sql_reset(st);
	assert_int_equal(sql_bind_double(st, 1, 1.5), SQL_OK);
	assert_int_equal(sql_step(st), SQL_E);
	sql_reset(st);
	assert_int_equal(sql_bind_text(st, 2, "a\0b", 3), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "NUL"));
	sql_reset(st);
	assert_int_equal(sql_bulk_flush(o->pg), SQL_OK); /* no row was taken */
	exec_ok(o->pg, "COMMIT");
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM m"), 0);
	sql_finalize(st);
}

/*
 * PostgreSQL: rows past SQL_BULK_SEND_BYTES are sent as they come (one batch's rows need not all be held),
 * in the transaction: a rollback takes them back too.
 */
static void pg_bulk_rows_past_the_buffer_are_sent_in_the_transaction(void **state)
{
	struct one *o = *state;
	size_t big = 1u << 20;
	unsigned char *blob = malloc(big);
	int64_t rows = SQL_BULK_SEND_BYTES / big + 2;
	struct sql_stmt *st;

	assert_non_null(blob);
	memset(blob, 0xab, big);
	exec_ok(o->pg, "CREATE TABLE big (id BIGINT, x BYTEA)");
	st = prep_bulk(o->pg, "INSERT INTO big (id, x) VALUES (?, ?)");
	for (int pass = 0; pass < 2; pass++) {
		exec_ok(o->pg, "BEGIN");
		for (int64_t id = 0; id < rows; id++) {
			assert_int_equal(sql_bind_i64(st, 1, id), SQL_OK);
			assert_int_equal(sql_bind_blob(st, 2, blob, big), SQL_OK);
			assert_int_equal(sql_step(st), SQL_DONE);
			sql_reset(st);
		}
		assert_true(count_of(o->pg, "SELECT count(*) FROM big") >= (int64_t)(SQL_BULK_SEND_BYTES / big) - 1);
		assert_true(count_of(o->pg, "SELECT count(*) FROM big") < rows);
		if (pass == 0) {
			sql_bulk_discard(o->pg);
			exec_ok(o->pg, "ROLLBACK");
			assert_int_equal(count_of(o->pg, "SELECT count(*) FROM big"), 0);
			continue;
		}
		assert_int_equal(sql_bulk_flush(o->pg), SQL_OK);
		exec_ok(o->pg, "COMMIT");
	}
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM big"), rows);
	assert_int_equal(count_of(o->pg, "SELECT sum(length(x)) FROM big"), rows * (int64_t)big);
	sql_finalize(st);
	free(blob);
}

/* pg_ctl as the cluster's owner: restart (stop -m fast, then start), or stop. */
static void pg_ctl(const struct pg_cluster *pc, const char *what)
{
	char prog[176], data[80], opts[192];
	const char *restart[] = { prog, what, "-D", data, "-m", "fast", "-w", "-t", "60", "-s", "-o", opts, NULL };
	const char *start[] = { prog, what, "-D", data, "-w", "-t", "60", "-s", "-o", opts, "-l", NULL, NULL };
	char log[96];

	snprintf(prog, sizeof(prog), "%s/pg_ctl", pc->bin);
	snprintf(data, sizeof(data), "%s/data", pc->dir);
	snprintf(log, sizeof(log), "%s/server.log", pc->dir);
	snprintf(opts, sizeof(opts), "-k %s -c listen_addresses='' -p %s -c fsync=off", pc->dir, PG_CLUSTER_PORT);
	start[11] = log;
	assert_int_equal(pg_cluster_run(pc, true, strcmp(what, "start") ? restart : start), 0);
}

/*
 * The server goes away under a connection (a restart): the statement then
 * running fails as busy (the caller retries), the connection is made again
 * before the next, and a statement prepared before runs on it; while the
 * server is down, each attempt fails as busy, at once.
 */
static void a_restarted_server_is_reconnected_to(void **state)
{
	struct one *o = *state;
	struct sql_stmt *st = prep(o->pg, "SELECT ?1 + 1");
	int rc;

	assert_int_equal(sql_bind_i64(st, 1, 41), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 42);
	sql_reset(st);
	pg_ctl(&o->e->pc, "stop");
	assert_int_equal(sql_bind_i64(st, 1, 1), SQL_OK);
	assert_int_equal(sql_step(st), SQL_E_BUSY);
	/* libpq's message on one line, for the ingest's log line ("server closed the connection unexpectedly",
	 * then its indented explanation, on lines of their own in libpq's text) */
	assert_non_null(strstr(sql_errmsg(o->pg), "connection"));
	assert_null(strpbrk(sql_errmsg(o->pg), "\n\r\t"));
	sql_reset(st);
	assert_int_equal(sql_bind_i64(st, 1, 1), SQL_OK);
	assert_int_equal(sql_step(st), SQL_E_BUSY); /* down: no connection to be made */
	sql_reset(st);
	pg_ctl(&o->e->pc, "start");
	assert_int_equal(sql_bind_i64(st, 1, 1), SQL_OK);
	rc = sql_step(st);
	assert_int_equal(rc, SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 2);
	sql_reset(st);
	pg_ctl(&o->e->pc, "restart");
	assert_int_equal(sql_bind_i64(st, 1, 2), SQL_OK);
	rc = sql_step(st);
	if (rc == SQL_E_BUSY) { /* the restart was seen by this statement: the next one reconnects */
		sql_reset(st);
		assert_int_equal(sql_bind_i64(st, 1, 2), SQL_OK);
		rc = sql_step(st);
	}
	assert_int_equal(rc, SQL_ROW);
	assert_int_equal(sql_col_i64(st, 0), 3);
	sql_finalize(st);
}

/* SQLite's index hints: PostgreSQL runs the statement without them; quoted text that looks like one is kept. */
static void index_hints(struct sql *db)
{
	struct sql_stmt *st;

	exec_ok(db, "CREATE TABLE h (a BIGINT, b TEXT)");
	exec_ok(db, "CREATE INDEX h_a ON h (a)");
	exec_ok(db, "INSERT INTO h (a, b) VALUES (1, 'x'), (2, 'y')");
	st = prep(db, "SELECT x.b, 'INDEXED BY h_a', (SELECT count(*) FROM h not   indexed) FROM h AS x INDEXED BY h_a "
		      "WHERE x.a = ?1");
	assert_int_equal(sql_param_count(st), 1);
	assert_int_equal(sql_bind_i64(st, 1, 2), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	assert_string_equal(sql_col_text(st, 0), "y");
	assert_string_equal(sql_col_text(st, 1), "INDEXED BY h_a");
	assert_int_equal(sql_col_i64(st, 2), 2);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_finalize(st);
}

static void index_hints_prepare_on_both_engines(void **state)
{
	struct one *o = *state;

	index_hints(o->lite);
	index_hints(o->pg);
}

/* A URI: the checks, and what a wrong database or an unreachable server says. */
static void uris_and_what_a_bad_one_says(void **state)
{
	struct one *o = *state;
	struct sql *db = NULL;
	char err[256], uri[300];

	assert_true(sql_is_pg_uri("postgresql://h/db"));
	assert_true(sql_is_pg_uri("postgres:///db?host=/tmp"));
	assert_false(sql_is_pg_uri("/var/lib/lake.db"));
	assert_false(sql_is_pg_uri("postgresql:"));
	snprintf(uri, sizeof(uri), "%s", o->e->pc.uri);
	*strstr(uri, "/lake?") = 0;
	strcat(uri, "/no_such_db?");
	strcat(uri, strchr(o->e->pc.uri, '?') + 1);
	assert_int_equal(sql_open_pg(&db, uri, false, 5000, err, sizeof(err)), SQL_E);
	assert_null(db);
	assert_non_null(strstr(err, "no_such_db"));
	assert_int_equal(sql_open_pg(&db, "postgresql://127.0.0.1:1/lake?connect_timeout=2", false, 5000, err, sizeof(err)), SQL_E);
	assert_non_null(strstr(err, "127.0.0.1"));
}

/*
 * PostgreSQL: rows of a transaction whose connection went away (a restart) are not sent on the connection
 * made again (their transaction is gone): the flush fails as busy, and the next transaction is clean.
 */
static void pg_bulk_rows_of_a_dropped_connection_are_not_sent(void **state)
{
	struct one *o = *state;
	struct sql_stmt *st;

	exec_ok(o->pg, "CREATE TABLE r (a BIGINT)");
	st = prep_bulk(o->pg, "INSERT INTO r (a) VALUES (?)");
	exec_ok(o->pg, "BEGIN");
	assert_int_equal(sql_bind_i64(st, 1, 1), SQL_OK);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_reset(st);
	pg_ctl(&o->e->pc, "restart");
	assert_int_equal(sql_bulk_flush(o->pg), SQL_E_BUSY);
	/* the same, with the connection made again (by another statement) before the flush */
	assert_int_equal(sql_bind_i64(st, 1, 2), SQL_OK);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_reset(st);
	pg_ctl(&o->e->pc, "restart");
	if (sql_exec(o->pg, "SELECT 1") == SQL_E_BUSY) /* the restart seen: the next statement reconnects */
		exec_ok(o->pg, "SELECT 1");
	assert_int_equal(sql_bulk_flush(o->pg), SQL_E_BUSY);
	assert_non_null(strstr(sql_errmsg(o->pg), "gone"));
	exec_ok(o->pg, "BEGIN");
	assert_int_equal(sql_bind_i64(st, 1, 3), SQL_OK);
	assert_int_equal(sql_step(st), SQL_DONE);
	sql_reset(st);
	assert_int_equal(sql_bulk_flush(o->pg), SQL_OK);
	exec_ok(o->pg, "COMMIT");
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM r"), 1);
	assert_int_equal(count_of(o->pg, "SELECT a FROM r"), 3);
	sql_finalize(st);
}


/* ---- queued statements ---- */

static struct sql_stmt *prep_queued(struct sql *db, const char *text)
{
	struct sql_stmt *st = NULL;

	if (sql_prepare_queued(db, text, &st) != SQL_OK)
		fail_msg("prepare queued %s: %s", text, sql_errmsg(db));
	return st;
}

/*
 * Queued statements run in their order, each seeing the ones before (an upsert that reads what the one
 * before wrote), and the next statement that waits sees them all; more than SQL_QUEUE_MAX at once.
 */
static void queued_in_order(struct sql *db)
{
	struct sql_stmt *up, *sel;
	int64_t n = 3 * SQL_QUEUE_MAX + 7;

	exec_ok(db, "CREATE TABLE q (k BIGINT PRIMARY KEY, v BIGINT, pos BIGINT)");
	up = prep_queued(db, "INSERT INTO q (k, v, pos) VALUES (?1, ?2, (SELECT count(*) FROM q)) "
			     "ON CONFLICT (k) DO UPDATE SET v = (q.v * 31 + excluded.v) % 1000003");
	exec_ok(db, "BEGIN");
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(sql_bind_i64(up, 1, i % 5), SQL_OK);
		assert_int_equal(sql_bind_i64(up, 2, i / 5 % 10), SQL_OK);
		assert_int_equal(sql_step(up), SQL_DONE);
		sql_reset(up);
	}
	sel = prep(db, "SELECT count(*), sum(pos), max(v) FROM q");
	assert_int_equal(sql_step(sel), SQL_ROW);
	assert_int_equal(sql_col_i64(sel, 0), 5);
	assert_int_equal(sql_col_i64(sel, 1), 0 + 1 + 2 + 3 + 4); /* each key's place: those before it */
	sql_reset(sel);
	assert_int_equal(sql_drain(db), SQL_OK);
	exec_ok(db, "COMMIT");
	sql_finalize(sel);
	/* key 0's updates in order: v folded over i / 5 % 10 for i = 0, 5, 10, ... */
	sel = prep(db, "SELECT v FROM q WHERE k = 0");
	assert_int_equal(sql_step(sel), SQL_ROW);
	{
		int64_t want = 0;

		for (int64_t i = 0; i < n; i += 5)
			want = (want * 31 + i / 5 % 10) % 1000003;
		assert_true(sql_col_i64(sel, 0) == want);
	}
	sql_finalize(sel);
	sql_finalize(up);
}

static void queued_statements_run_in_order_on_both_engines(void **state)
{
	struct one *o = *state;

	queued_in_order(o->lite);
	queued_in_order(o->pg);
}

/*
 * PostgreSQL: a queued statement's failure is the next waiting call's, with its message; those queued
 * after it did not run; the transaction rolls back and the connection goes on. A queued statement sent
 * after a restart is prepared again on the new connection.
 */
static void pg_a_queued_failure_fails_the_next_waiting_call(void **state)
{
	struct one *o = *state;
	struct sql_stmt *ins = NULL;

	exec_ok(o->pg, "CREATE TABLE f (k BIGINT PRIMARY KEY)");
	ins = prep_queued(o->pg, "INSERT INTO f (k) VALUES (?1)");
	exec_ok(o->pg, "BEGIN");
	for (int64_t k = 1; k <= 4; k++) {
		assert_int_equal(sql_bind_i64(ins, 1, k == 3 ? 1 : k), SQL_OK); /* 3: key 1 again */
		assert_int_equal(sql_step(ins), SQL_DONE);
		sql_reset(ins);
	}
	assert_true(sql_in_transaction(o->pg));
	assert_int_equal(sql_exec(o->pg, "SELECT 1"), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "duplicate key"));
	assert_true(sql_in_transaction(o->pg));
	exec_ok(o->pg, "ROLLBACK");
	assert_false(sql_in_transaction(o->pg));
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM f"), 0);
	/*
	 * Outside a transaction the statements between two drains are one (the pipeline's implicit transaction):
	 * 3 refused, 1 and 2 taken back with it, 4 not run.
	 */
	for (int64_t k = 1; k <= 4; k++) {
		assert_int_equal(sql_bind_i64(ins, 1, k == 3 ? 1 : k), SQL_OK);
		assert_int_equal(sql_step(ins), SQL_DONE);
		sql_reset(ins);
	}
	assert_int_equal(sql_drain(o->pg), SQL_E);
	assert_non_null(strstr(sql_errmsg(o->pg), "duplicate key"));
	assert_int_equal(sql_drain(o->pg), SQL_OK);
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM f"), 0);
	/* a restart: the queued statement is prepared again on the new connection */
	pg_ctl(&o->e->pc, "restart");
	if (sql_exec(o->pg, "SELECT 1") == SQL_E_BUSY)
		exec_ok(o->pg, "SELECT 1");
	assert_int_equal(sql_bind_i64(ins, 1, 9), SQL_OK);
	assert_int_equal(sql_step(ins), SQL_DONE);
	sql_reset(ins);
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM f WHERE k = 9"), 1);
	/* the server gone with statements queued: busy (they are gone with it), then the connection made again */
	assert_int_equal(sql_bind_i64(ins, 1, 10), SQL_OK);
	assert_int_equal(sql_step(ins), SQL_DONE);
	sql_reset(ins);
	pg_ctl(&o->e->pc, "restart");
	assert_int_equal(sql_bind_i64(ins, 1, 11), SQL_OK);
	assert_int_equal(sql_step(ins), SQL_DONE); /* sent into a connection the server closed: seen at the drain */
	sql_reset(ins);
	assert_int_equal(sql_drain(o->pg), SQL_E_BUSY); /* 10 and 11 with the connection: not stored */
	assert_int_equal(count_of(o->pg, "SELECT count(*) FROM f WHERE k >= 9"), 1);
	sql_finalize(ins);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_type_round_trips_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(changes_and_transactions_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(failures_are_named_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(index_hints_prepare_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(pg_refuses_text_with_a_nul, setup, teardown),
		cmocka_unit_test_setup_teardown(uris_and_what_a_bad_one_says, setup, teardown),
		cmocka_unit_test_setup_teardown(a_restarted_server_is_reconnected_to, setup, teardown),
		cmocka_unit_test_setup_teardown(bulk_rows_round_trip_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(bulk_refusals_and_failures_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(pg_bulk_values_must_fit_their_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(pg_bulk_rows_past_the_buffer_are_sent_in_the_transaction, setup, teardown),
		cmocka_unit_test_setup_teardown(pg_bulk_rows_of_a_dropped_connection_are_not_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(queued_statements_run_in_order_on_both_engines, setup, teardown),
		cmocka_unit_test_setup_teardown(pg_a_queued_failure_fails_the_next_waiting_call, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
