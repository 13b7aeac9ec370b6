/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's database behind one small interface, so that the lake's code
 * (store.c, read*.c) says nothing of the engine it runs on: open, run SQL,
 * prepare, bind in order, step through rows, read columns. SQLite is the
 * embedded lake (a file); PostgreSQL (libpq), the fleet lake (docs/lake.md).
 *
 * Parameters are written ?N or ? (numbered in order), as SQLite has them;
 * for PostgreSQL they become $N outside quoted text. SQLite's index hints
 * (`INDEXED BY name`, `NOT INDEXED`) may be written: for PostgreSQL they
 * are dropped (outside quoted text), its planner choosing alone. Text and blobs bound
 * must outlive the statement's run (they are not copied). Column values
 * are valid until the next step or reset of their statement. A
 * PostgreSQL statement runs whole at its first step (its rows are then
 * read one by one), a streamed one row by row (sql_prepare_streamed). A PostgreSQL connection the server dropped (a
 * restart) fails what it was running with SQL_E_BUSY and is made again
 * before the next statement, which is prepared again as needed. Private
 * to lake/.
 */
#ifndef TRACER_LAKE_SQL_H
#define TRACER_LAKE_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results: steps give SQL_ROW or SQL_DONE; failures are negative. */
enum sql_rc {
	SQL_OK = 0,
	SQL_ROW = 1,
	SQL_DONE = 2,
	SQL_E_BUSY = -1,     /* another writer holds the lake past the busy timeout */
	SQL_E_NOMEM = -2,
	SQL_E_READONLY = -3, /* a write on a lake opened read-only */
	SQL_E_NOTADB = -4,   /* the file is not a database */
	SQL_E = -5,          /* anything else: sql_errmsg says what */
};

/* A column's value's type in this row. */
enum sql_type { SQL_NULL, SQL_INTEGER, SQL_FLOAT, SQL_TEXT, SQL_BLOB };

struct sql;
struct sql_stmt;

/*
 * The SQLite file at path, read-only or read-write (created if missing),
 * busy_ms the wait for another writer. 0, or an sql_rc with err saying
 * what happened (its message; the caller adds what to do).
 */
int sql_open_sqlite(struct sql **out, const char *path, bool read_only, int busy_ms, char *err, size_t errlen);
/*
 * The PostgreSQL database a libpq URI (postgresql://... or postgres://...)
 * names, read-only (every transaction) or not, busy_ms the wait for a lock
 * another connection holds. 0, or an sql_rc with err holding libpq's reason.
 */
int sql_open_pg(struct sql **out, const char *uri, bool read_only, int busy_ms, char *err, size_t errlen);
/* Whether where names a PostgreSQL database rather than an SQLite file. */
bool sql_is_pg_uri(const char *where);
/* Whether db is PostgreSQL's. */
bool sql_is_pg(const struct sql *db);
/*
 * PostgreSQL: how its connection reaches the server, for a sandbox: the
 * socket's family (AF_UNIX, AF_INET, AF_INET6) and, for TCP, the port. 0,
 * or -errno (SQLite: -ENOTSOCK).
 */
int sql_pg_peer(const struct sql *db, int *family, uint16_t *port);
/*
 * Seconds a PostgreSQL connection is given to be made, unless the URI says
 * (connect_timeout=N): an unreachable server is an error, not a hang.
 */
#define SQL_PG_CONNECT_TIMEOUT_S "10"
void sql_close(struct sql *db); /* finalizes nothing: close its statements first. NULL is fine. */

/* SQL of one or more statements without parameters, rows ignored. */
int sql_exec(struct sql *db, const char *text);
/* The message of the connection's latest failure. */
const char *sql_errmsg(const struct sql *db);
/* Whether a transaction is open (a failure may have ended it). */
bool sql_in_transaction(const struct sql *db);
/* Rows the latest INSERT, UPDATE or DELETE changed. */
int64_t sql_changes(const struct sql *db);
/* n random bytes from the connection's generator (seeded at open, before any sandbox). */
void sql_random(struct sql *db, void *p, size_t n);

/* Prepare one statement; persistent: kept for the connection's life (a hint). */
int sql_prepare(struct sql *db, const char *text, bool persistent, struct sql_stmt **out);
void sql_finalize(struct sql_stmt *st); /* NULL is fine */
const char *sql_text(const struct sql_stmt *st);
int sql_param_count(const struct sql_stmt *st);

/* Parameters by number, from 1. */
int sql_bind_i64(struct sql_stmt *st, int i, int64_t v);
int sql_bind_double(struct sql_stmt *st, int i, double v);
int sql_bind_null(struct sql_stmt *st, int i);
int sql_bind_text(struct sql_stmt *st, int i, const char *p, size_t len); /* UTF-8 */
int sql_bind_blob(struct sql_stmt *st, int i, const void *p, size_t len);

/*
 * A bulk statement: `INSERT INTO table (column, ...) VALUES (?, ...)`, one
 * parameter per column in their order and nothing else (no ON CONFLICT:
 * its caller knows each row is new), bound as any statement, one row per
 * step (SQL_DONE). SQLite runs it at each step. PostgreSQL adds the row
 * to the statement's buffer, in COPY's binary format, each value as its
 * column's type (BIGINT, DOUBLE PRECISION, TEXT or BYTEA; an integer
 * makes a DOUBLE PRECISION's double, any other mismatch fails the step),
 * and sends nothing until sql_bulk_flush(), or until the buffer holds
 * SQL_BULK_SEND_BYTES. Its rows are then the open transaction's; they are
 * not there for the transaction's statements before that.
 */
int sql_prepare_bulk(struct sql *db, const char *text, struct sql_stmt **out);
#define SQL_BULK_SEND_BYTES (16u << 20)
/*
 * PostgreSQL: every bulk statement's rows sent, one COPY ... FROM STDIN
 * (FORMAT binary) per statement that has some: before COMMIT, and before
 * a statement that reads their tables. A failure (PostgreSQL's message in
 * sql_errmsg) drops every bulk statement's rows: their transaction fails
 * with it. Rows made on a connection that is gone since (and their
 * transaction with it) are not sent: SQL_E_BUSY. SQLite: nothing to send.
 */
int sql_bulk_flush(struct sql *db);
/* The bulk statements' rows not sent dropped: their transaction rolled back (or failed). */
void sql_bulk_discard(struct sql *db);

/*
 * A queued statement: one whose rows and changes its caller never reads
 * (an upsert whose place in the order matters, nothing else). SQLite runs
 * it at each step. PostgreSQL sends it at each step without waiting
 * (libpq's pipeline mode: the server runs them in order) and reads the
 * outcomes when a statement that waits for its own runs, or sql_exec, a
 * prepare, a bulk flush, sql_drain(), or when SQL_QUEUE_MAX wait: a
 * queued statement's failure then fails that call, with its message
 * (those queued after it did not run). A step gives SQL_DONE. Meant for
 * a transaction's statements: outside one, PostgreSQL runs those between
 * two reads of outcomes as one transaction (the pipeline's implicit one).
 */
int sql_prepare_queued(struct sql *db, const char *text, struct sql_stmt **out);
#define SQL_QUEUE_MAX 256
/* PostgreSQL: the queued statements' outcomes read: SQL_OK, or the first failure. SQLite: SQL_OK. */
int sql_drain(struct sql *db);

/*
 * A streamed statement: a read whose rows may be more than memory holds (tracer export table). SQLite
 * steps through its rows as any statement's. PostgreSQL sends it at its first step in single-row mode
 * and reads one row a step, so that only the current row is held; until its last row was read (SQL_DONE,
 * or a failure) or it is reset (its run cancelled), the connection runs nothing else: another
 * statement's step, sql_exec, a prepare fail with SQL_E. Meant for one read at a time, not nested.
 */
int sql_prepare_streamed(struct sql *db, const char *text, struct sql_stmt **out);

/* The next row (SQL_ROW), the end (SQL_DONE), or a failure. */
int sql_step(struct sql_stmt *st);
/* Ready to run again, every parameter cleared. */
void sql_reset(struct sql_stmt *st);

int sql_col_count(const struct sql_stmt *st);
enum sql_type sql_col_type(const struct sql_stmt *st, int i);
int64_t sql_col_i64(const struct sql_stmt *st, int i);     /* 0 for NULL */
double sql_col_double(const struct sql_stmt *st, int i);
const char *sql_col_text(const struct sql_stmt *st, int i); /* NUL-terminated; NULL for NULL */
size_t sql_col_bytes(const struct sql_stmt *st, int i);     /* of the text or blob */
const void *sql_col_blob(const struct sql_stmt *st, int i);

#endif /* TRACER_LAKE_SQL_H */
