/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sql.h over SQLite and over PostgreSQL (libpq): a connection is one or
 * the other, and each call goes to its engine. SQLite's results are mapped
 * to sql_rc (extended result codes on; only the primary code matters).
 * PostgreSQL's statements are prepared on the server under a name of their
 * own; parameters go as text (numbers printed) or binary (blobs), results
 * come back as text and are read as the column's type says. A bulk
 * statement's rows are kept in COPY's binary format and sent with COPY
 * ... FROM STDIN: one command for many rows, at sql_bulk_flush(). A
 * queued statement is sent in pipeline mode, its outcome read with the
 * others' at the next call that waits (pg_drain()). A streamed statement
 * is sent in single-row mode: one row a step (pg_stream_step()).
 */
#include "sql.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <sqlite3.h>

/* PostgreSQL type oids (pg_type.h, stable since forever) the columns are read by. */
enum { PG_BOOL = 16, PG_BYTEA = 17, PG_INT8 = 20, PG_INT2 = 21, PG_INT4 = 23, PG_TEXT = 25, PG_OID = 26,
       PG_FLOAT4 = 700, PG_FLOAT8 = 701, PG_NUMERIC = 1700 };

struct sql {
	sqlite3 *lite;
	PGconn *pg;
	unsigned next_name;  /* PostgreSQL: the next prepared statement's name */
	unsigned epoch;      /* PostgreSQL: connections made (statements prepared on an older one are again) */
	int64_t changes;     /* PostgreSQL: rows the latest command changed */
	uint64_t rng;        /* PostgreSQL: sql_random's state, seeded at open */
	char session[128];   /* PostgreSQL: the settings each connection starts with */
	char **keys, **values; /* PostgreSQL: the connection's parameters, to make it again (pg_pin()) */
	struct sql_stmt *bulk; /* PostgreSQL: the bulk statements, a list through their next_bulk */
	bool piped;          /* PostgreSQL: in pipeline mode, queued statements sent (pg_queue()) */
	int queued;          /* their outcomes not read yet */
	struct sql_stmt *stream; /* PostgreSQL: the streamed statement whose rows are being read (nothing else runs) */
	char err[256];       /* PostgreSQL: the latest failure; SQLite: a bulk statement's text refused */
};

struct sql_stmt {
	struct sql *db;
	sqlite3_stmt *lite;
	/* PostgreSQL */
	char *text;          /* as written (?N) */
	char name[16];
	char *pg_text;       /* as PostgreSQL takes it ($N) */
	unsigned epoch;      /* the connection it was prepared on */
	int nparams;
	const char **values; /* per parameter: NULL for NULL */
	int *lengths, *formats;
	enum sql_type *kinds; /* per parameter: what it was bound as */
	char (*nums)[32];    /* numbers printed (a bulk statement's: their 8 bytes as they are) */
	char **own;          /* text copied, NUL-terminated as libpq wants it */
	PGresult *res;       /* the run's rows, after the first step */
	int row, nrows;
	unsigned char *blob; /* the latest bytea read, unescaped */
	bool queued;         /* sql_prepare_queued(): sent without waiting for its outcome */
	bool streamed;       /* sql_prepare_streamed(): its rows read one at a time (single-row mode) */
	bool ended;          /* streamed: its last row was read, or it failed (SQL_DONE until a reset) */
	/* A bulk statement (sql_prepare_bulk()) */
	char *copy;          /* COPY table (columns) FROM STDIN (FORMAT binary) */
	unsigned *oids;      /* each column's type */
	unsigned char *buf;  /* the rows not sent: COPY's header, then theirs */
	size_t len, cap;
	int64_t rows;
	unsigned buf_epoch;  /* the connection they were made on (their transaction's) */
	struct sql_stmt *next_bulk;
};

static const char *pg_dialect(const char *text);
static int pg_done(struct sql *db, PGresult *res);
static int pg_drain(struct sql *db);
static int pg_streaming(struct sql *db, const struct sql_stmt *st);

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

bool sql_is_pg_uri(const char *where)
{
	return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

/* libpq's message, its trailing newline gone. */
/*
 * libpq's message, on one line: its line breaks and their indentation ("server closed the connection
 * unexpectedly\n\tThis probably means ...") become one space, so that a log line (journald's, the ingest's)
 * holds the whole message; the trailing ones go.
 */
static void pg_note(struct sql *db, const char *msg)
{
	size_t n = 0;

	if (!msg || !*msg)
		msg = "unknown PostgreSQL failure";
	for (const char *p = msg; *p && n + 1 < sizeof(db->err); p++) {
		if (*p != '\n' && *p != '\r' && *p != '\t') {
			db->err[n++] = *p;
			continue;
		}
		while (p[1] == '\n' || p[1] == '\r' || p[1] == '\t' || p[1] == ' ')
			p++;
		if (n && db->err[n - 1] != ' ')
			db->err[n++] = ' ';
	}
	while (n && db->err[n - 1] == ' ')
		n--;
	db->err[n] = 0;
}

/* libpq's notices (a NOTICE of IF NOT EXISTS) are not the lake's business: not printed. */
static void pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* A new connection's settings: how long to wait for a lock another holds; read-only. */
static int pg_session(struct sql *db)
{
	PQsetNoticeProcessor(db->pg, pg_quiet, NULL);
	return pg_done(db, PQexec(db->pg, db->session));
}

/*
 * The connection's parameters as made, to make it again after the server
 * dropped it, with what the first connection found pinned: the server's
 * address (hostaddr) when it was reached over TCP by a single host name,
 * no GSSAPI or TLS encryption where it used none (gssencmode, sslmode
 * "prefer" would try them again), the password it used (one from a
 * password file too). A reconnection then looks
 * nothing up (no resolver, no GSSAPI mechanism files, no password file), so that a sandbox
 * need only allow connecting to that address's port. 0 or -1 (no memory).
 */
static int pg_pin(struct sql *db)
{
	PQconninfoOption *opts = PQconninfo(db->pg);
	const char *host = PQhost(db->pg), *addr = PQhostaddr(db->pg);
	bool pin = host && *host != '/' && !strchr(host, ',') && addr && *addr;
	size_t n = 0, k = 0;

	if (!opts)
		return -1;
	for (PQconninfoOption *o = opts; o->keyword; o++)
		n++;
	db->keys = calloc(n + 2, sizeof(*db->keys));
	db->values = calloc(n + 2, sizeof(*db->values));
	if (!db->keys || !db->values) {
		PQconninfoFree(opts);
		return -1;
	}
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		const char *v = o->val;

		if (!strcmp(o->keyword, "gssencmode") && !PQgssEncInUse(db->pg))
			v = "disable";
		if (!strcmp(o->keyword, "sslmode") && !PQsslInUse(db->pg))
			v = "disable";
		if (!strcmp(o->keyword, "password") && PQpass(db->pg) && *PQpass(db->pg))
			v = PQpass(db->pg); /* a password file's too: it is not read again */
		if (!v || (pin && !strcmp(o->keyword, "hostaddr")))
			continue;
		db->keys[k] = strdup(o->keyword);
		db->values[k] = strdup(v);
		if (!db->keys[k] || !db->values[k++])
			break;
	}
	if (pin && k < n + 1) {
		db->keys[k] = strdup("hostaddr");
		db->values[k++] = strdup(addr);
	}
	PQconninfoFree(opts);
	for (size_t i = 0; i < k; i++)
		if (!db->keys[i] || !db->values[i])
			return -1;
	return 0;
}

int sql_open_pg(struct sql **out, const char *uri, bool read_only, int busy_ms, char *err, size_t errlen)
{
	/* The URI's own connect_timeout wins (a later keyword overrides an earlier one). */
	static const char *const keys[] = { "connect_timeout", "dbname", NULL };
	const char *values[] = { SQL_PG_CONNECT_TIMEOUT_S, uri, NULL };
	struct sql *db = calloc(1, sizeof(*db));

	*out = NULL;
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return SQL_E_NOMEM;
	}
	/* jit off: compiling the analysis' long statements cost 0.3-3.4 s, more than most of them run (docs/lake.md,
	 * "Indexes and the queries they serve") */
	snprintf(db->session, sizeof(db->session), "SET lock_timeout = %d; SET default_transaction_read_only = %s; "
		 "SET jit = off", busy_ms, read_only ? "on" : "off");
	db->pg = PQconnectdbParams(keys, values, 1);
	if (!db->pg || PQstatus(db->pg) != CONNECTION_OK || pg_session(db) || pg_pin(db)) {
		if (!db->pg || PQstatus(db->pg) != CONNECTION_OK)
			pg_note(db, db->pg ? PQerrorMessage(db->pg) : "out of memory");
		else if (!db->keys || !db->values)
			pg_note(db, "out of memory");
		snprintf(err, errlen, "%s", db->err);
		sql_close(db);
		return SQL_E;
	}
	if (getrandom(&db->rng, sizeof(db->rng), 0) != sizeof(db->rng) || !db->rng)
		db->rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)db;
	*out = db;
	return SQL_OK;
}

bool sql_is_pg(const struct sql *db)
{
	return db->pg != NULL;
}

int sql_pg_peer(const struct sql *db, int *family, uint16_t *port)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	int fd = db->pg ? PQsocket(db->pg) : -1;

	*family = 0;
	*port = 0;
	if (fd < 0)
		return -ENOTSOCK;
	if (getpeername(fd, (struct sockaddr *)&a, &len))
		return -errno;
	*family = a.ss_family;
	if (a.ss_family == AF_INET)
		*port = ntohs(((const struct sockaddr_in *)&a)->sin_port);
	else if (a.ss_family == AF_INET6)
		*port = ntohs(((const struct sockaddr_in6 *)&a)->sin6_port);
	return 0;
}

/*
 * PostgreSQL: a connection that went away (the server restarted) is made
 * again before the next command, outside a transaction only (the one it
 * was in is gone with it: its caller sees the failure and starts over).
 * Statements prepared on the old one are prepared again at their next run.
 */
static int pg_alive(struct sql *db)
{
	PGconn *again;

	/* one still in pipeline mode lost track of its outcomes (pg_drain()): made again too */
	if (PQstatus(db->pg) == CONNECTION_OK && PQpipelineStatus(db->pg) == PQ_PIPELINE_OFF)
		return SQL_OK;
	again = PQconnectdbParams((const char *const *)db->keys, (const char *const *)db->values, 0);
	if (!again) {
		pg_note(db, "out of memory");
		return SQL_E_BUSY;
	}
	PQfinish(db->pg); /* db->pg is never NULL: it says the engine */
	db->pg = again;
	if (PQstatus(db->pg) != CONNECTION_OK) {
		pg_note(db, PQerrorMessage(db->pg));
		return SQL_E_BUSY;
	}
	db->epoch++;
	if (pg_session(db))
		return SQL_E_BUSY;
	return SQL_OK;
}

void sql_close(struct sql *db)
{
	if (!db)
		return;
	if (db->pg)
		PQfinish(db->pg);
	else
		sqlite3_close(db->lite);
	for (size_t i = 0; db->keys && db->keys[i]; i++) {
		free(db->keys[i]);
		free(db->values[i]);
	}
	free(db->keys);
	free(db->values);
	free(db);
}

/* A failed PostgreSQL result as an sql_rc, by its SQLSTATE (errcodes.h), its message kept. */
static int pg_fail(struct sql *db, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	pg_note(db, res ? PQresultErrorMessage(res) : PQerrorMessage(db->pg));
	if (!state)
		return PQstatus(db->pg) == CONNECTION_OK ? SQL_E : SQL_E_BUSY; /* the server went away */
	if (!strcmp(state, "40001") || !strcmp(state, "40P01") || !strcmp(state, "55P03") ||
	    !strncmp(state, "08", 2) || !strncmp(state, "57P", 3))
		return SQL_E_BUSY; /* serialization, deadlock, lock timeout; connection gone; shutting down */
	if (!strcmp(state, "25006"))
		return SQL_E_READONLY;
	if (!strcmp(state, "53200"))
		return SQL_E_NOMEM;
	return SQL_E;
}

/* A command's outcome: its rows changed noted, or the failure. Clears res. */
static int pg_done(struct sql *db, PGresult *res)
{
	ExecStatusType t = PQresultStatus(res);
	int rc = SQL_OK;

	if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK)
		db->changes = strtoll(PQcmdTuples(res), NULL, 10);
	else
		rc = pg_fail(db, res);
	PQclear(res);
	return rc;
}

int sql_exec(struct sql *db, const char *text)
{
	if (db->pg) {
		int rc = pg_streaming(db, NULL);

		if (!rc)
			rc = pg_drain(db);
		if (!rc)
			rc = pg_alive(db);
		return rc ? rc : pg_done(db, PQexec(db->pg, pg_dialect(text)));
	}
	db->err[0] = 0;
	return map_rc(sqlite3_exec(db->lite, text, NULL, NULL, NULL));
}

const char *sql_errmsg(const struct sql *db)
{
	return db->pg || db->err[0] ? db->err : sqlite3_errmsg(db->lite);
}

bool sql_in_transaction(const struct sql *db)
{
	if (db->pg)
		return PQtransactionStatus(db->pg) != PQTRANS_IDLE;
	return !sqlite3_get_autocommit(db->lite);
}

int64_t sql_changes(const struct sql *db)
{
	return db->pg ? db->changes : sqlite3_changes64(db->lite);
}

void sql_random(struct sql *db, void *p, size_t n)
{
	unsigned char *b = p;

	if (!db->pg) {
		sqlite3_randomness((int)n, p);
		return;
	}
	for (size_t i = 0; i < n; i++) { /* xorshift64: a hash seed, not a secret */
		db->rng ^= db->rng << 13;
		db->rng ^= db->rng >> 7;
		db->rng ^= db->rng << 17;
		b[i] = (unsigned char)db->rng;
	}
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* p starts the word w (any case), a whole word: the end of it, else NULL. */
static const char *word_at(const char *p, const char *w)
{
	size_t n = strlen(w);

	return !strncasecmp(p, w, n) && !ident_char(p[n]) ? p + n : NULL;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * SQLite's index hints at p (the start of a word): `INDEXED BY name` or `NOT INDEXED`. The end of the hint,
 * else NULL. PostgreSQL has no such clause: its planner chooses alone.
 */
static const char *index_hint(const char *p)
{
	const char *q = word_at(p, "NOT");

	if (q && (q = word_at(skip_space(q), "INDEXED")))
		return q;
	q = word_at(p, "INDEXED");
	if (!q || !(q = word_at(skip_space(q), "BY")))
		return NULL;
	q = skip_space(q);
	if (!ident_char(*q))
		return NULL;
	while (ident_char(*q))
		q++;
	return q;
}

/*
 * What SQLite says that PostgreSQL says otherwise: BEGIN IMMEDIATE (take
 * the write lock now) is BEGIN (PostgreSQL locks rows as it writes them);
 * BEGIN DEFERRED (a reader's: every statement sees one snapshot) is
 * REPEATABLE READ (READ COMMITTED, the default, takes one per statement).
 */
static const char *pg_dialect(const char *text)
{
	if (!strcmp(text, "BEGIN IMMEDIATE"))
		return "BEGIN";
	if (!strcmp(text, "BEGIN DEFERRED"))
		return "BEGIN ISOLATION LEVEL REPEATABLE READ";
	return text;
}

/*
 * SQLite's parameters (?N, or ? numbered in order) as PostgreSQL's ($N), outside quoted text and
 * identifiers, and its index hints (index_hint) dropped. Returns the new text (malloc) and the highest
 * number, or NULL.
 */
static char *pg_params(const char *text, int *nparams)
{
	size_t n = strlen(text);
	char *out = malloc(n * 2 + 1), *w = out;
	int next = 0, max = 0;
	char quote = 0;

	if (!out)
		return NULL;
	for (const char *p = text; *p; p++) {
		if (quote) {
			*w++ = *p;
			if (*p == quote)
				quote = 0; /* a doubled quote closes and opens again: the same */
			continue;
		}
		if (*p == '\'' || *p == '"') {
			quote = *p;
			*w++ = *p;
			continue;
		}
		if ((p == text || !ident_char(p[-1])) && (*p == 'N' || *p == 'n' || *p == 'I' || *p == 'i')) {
			const char *end = index_hint(p);

			if (end) {
				p = end - 1;
				continue;
			}
		}
		if (*p != '?') {
			*w++ = *p;
			continue;
		}
		if (p[1] >= '0' && p[1] <= '9') {
			char *end;
			long v = strtol(p + 1, &end, 10);

			next = (int)v;
			p = end - 1;
		} else {
			next++;
		}
		if (next > max)
			max = next;
		w += sprintf(w, "$%d", next);
	}
	*w = 0;
	*nparams = max;
	return out;
}

/* (Re)prepare st on the connection: its name, its $N text. */
static int pg_prepare_on(struct sql *db, struct sql_stmt *st)
{
	st->epoch = db->epoch;
	return pg_done(db, PQprepare(db->pg, st->name, st->pg_text, 0, NULL));
}

/* Room for st->nparams parameters. */
static int pg_params_alloc(struct sql_stmt *st)
{
	size_t n = (size_t)st->nparams;

	if (!n)
		return SQL_OK;
	st->values = calloc(n, sizeof(*st->values));
	st->lengths = calloc(n, sizeof(*st->lengths));
	st->formats = calloc(n, sizeof(*st->formats));
	st->kinds = calloc(n, sizeof(*st->kinds));
	st->nums = calloc(n, sizeof(*st->nums));
	st->own = calloc(n, sizeof(*st->own));
	if (!st->values || !st->lengths || !st->formats || !st->kinds || !st->nums || !st->own)
		return SQL_E_NOMEM;
	return SQL_OK;
}

static int pg_prepare(struct sql *db, const char *text, struct sql_stmt *st)
{
	int rc = pg_streaming(db, NULL);

	if (!rc)
		rc = pg_drain(db);

	if (!rc)
		rc = pg_alive(db);
	if (rc)
		return rc;
	st->text = strdup(text);
	st->pg_text = pg_params(pg_dialect(text), &st->nparams);
	if (!st->text || !st->pg_text)
		return SQL_E_NOMEM;
	snprintf(st->name, sizeof(st->name), "s%u", db->next_name++);
	rc = pg_prepare_on(db, st);
	return rc ? rc : pg_params_alloc(st);
}

int sql_prepare(struct sql *db, const char *text, bool persistent, struct sql_stmt **out)
{
	struct sql_stmt *st = calloc(1, sizeof(*st));
	int rc;

	*out = NULL;
	if (!st)
		return SQL_E_NOMEM;
	st->db = db;
	if (db->pg) {
		rc = pg_prepare(db, text, st);
		if (rc) {
			sql_finalize(st);
			return rc;
		}
		*out = st;
		return SQL_OK;
	}
	db->err[0] = 0;
	rc = sqlite3_prepare_v3(db->lite, text, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st->lite, NULL);
	if (rc != SQLITE_OK || !st->lite) { /* no statement in the text is a failure too */
		sqlite3_finalize(st->lite);
		free(st);
		return rc != SQLITE_OK ? map_rc(rc) : SQL_E;
	}
	*out = st;
	return SQL_OK;
}

/* ---- bulk statements ---------------------------------------------------- */

/*
 * A bulk statement's text: INSERT INTO table (column, ...) VALUES (?, ...), one parameter per column in
 * order (? or ?N numbered from 1) and nothing after. Its table's name and its columns (as written, between
 * the parentheses) out; the number of columns, or -1.
 */
static int bulk_parse(const char *text, char *table, size_t tablen, const char **cols, size_t *cols_len)
{
	const char *p = word_at(skip_space(text), "INSERT"), *q;
	int ncols = 0, nvals = 0;

	if (!p || !(p = word_at(skip_space(p), "INTO")))
		return -1;
	for (p = q = skip_space(p); ident_char(*q); q++)
		;
	if (q == p || (size_t)(q - p) >= tablen)
		return -1;
	memcpy(table, p, (size_t)(q - p));
	table[q - p] = 0;
	p = skip_space(q);
	if (*p++ != '(')
		return -1;
	for (*cols = p = skip_space(p);; p = skip_space(p + 1)) {
		for (q = p; ident_char(*q); q++)
			;
		if (q == p)
			return -1;
		ncols++;
		*cols_len = (size_t)(q - *cols);
		p = skip_space(q);
		if (*p == ')')
			break;
		if (*p != ',')
			return -1;
	}
	p = word_at(skip_space(p + 1), "VALUES");
	if (!p || *(p = skip_space(p)) != '(')
		return -1;
	for (p = skip_space(p + 1);; p = skip_space(p + 1)) {
		if (*p++ != '?')
			return -1;
		nvals++;
		if (*p >= '0' && *p <= '9') {
			char *end;

			if (strtol(p, &end, 10) != nvals)
				return -1;
			p = end;
		}
		p = skip_space(p);
		if (*p == ')')
			break;
		if (*p != ',')
			return -1;
	}
	return *skip_space(p + 1) || nvals != ncols ? -1 : ncols;
}

/* The column types a bulk statement writes, as PostgreSQL's COPY takes them in binary (lake/schema.c's). */
static bool bulk_type(unsigned oid)
{
	return oid == PG_INT8 || oid == PG_FLOAT8 || oid == PG_TEXT || oid == PG_BYTEA;
}

/* PostgreSQL: st made a bulk statement of table's columns, each column's type read from the server. */
static int pg_prepare_bulk(struct sql *db, struct sql_stmt *st, const char *table, const char *cols, size_t cols_len)
{
	size_t n = strlen(table) + cols_len + 64;
	char *probe = malloc(n);
	PGresult *res;
	int rc = probe ? pg_drain(db) : SQL_E_NOMEM;

	if (!rc)
		rc = pg_alive(db);
	st->copy = malloc(n);
	st->oids = calloc((size_t)st->nparams, sizeof(*st->oids));
	if (!rc && (!st->copy || !st->oids || pg_params_alloc(st)))
		rc = SQL_E_NOMEM;
	if (rc) {
		free(probe);
		return rc;
	}
	snprintf(st->copy, n, "COPY %s (%.*s) FROM STDIN (FORMAT binary)", table, (int)cols_len, cols);
	snprintf(probe, n, "SELECT %.*s FROM %s WHERE false", (int)cols_len, cols, table);
	res = PQexec(db->pg, probe);
	free(probe);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = pg_fail(db, res);
		PQclear(res);
		return rc;
	}
	for (int i = 0; i < st->nparams && !rc; i++) {
		st->oids[i] = PQftype(res, i);
		if (!bulk_type(st->oids[i])) {
			snprintf(db->err, sizeof(db->err), "%s.%s: a column of type %u, which bulk statements do not write",
				 table, PQfname(res, i), st->oids[i]);
			rc = SQL_E;
		}
	}
	PQclear(res);
	if (rc)
		return rc;
	st->next_bulk = db->bulk;
	db->bulk = st;
	return SQL_OK;
}

int sql_prepare_bulk(struct sql *db, const char *text, struct sql_stmt **out)
{
	char table[64];
	const char *cols = NULL;
	size_t cols_len = 0;
	int ncols = bulk_parse(text, table, sizeof(table), &cols, &cols_len);
	struct sql_stmt *st;
	int rc;

	*out = NULL;
	if (ncols < 0) {
		snprintf(db->err, sizeof(db->err),
			 "not a bulk statement (INSERT INTO table (columns) VALUES (?, ...), nothing more): %.120s", text);
		return SQL_E;
	}
	if (!db->pg)
		return sql_prepare(db, text, true, out);
	st = calloc(1, sizeof(*st));
	if (!st)
		return SQL_E_NOMEM;
	st->db = db;
	st->nparams = ncols;
	st->text = strdup(text);
	rc = st->text ? pg_prepare_bulk(db, st, table, cols, cols_len) : SQL_E_NOMEM;
	if (rc) {
		sql_finalize(st);
		return rc;
	}
	*out = st;
	return SQL_OK;
}

/* Big-endian, as COPY's binary format has its numbers. */
static unsigned char *put_be(unsigned char *w, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--)
		*w++ = (unsigned char)(v >> (8 * k));
	return w;
}

/*
 * COPY's binary format (PostgreSQL's manual, COPY, "Binary Format"): this header (signature, flags 0, no
 * extension), then each row: a 16-bit count of fields, each field a 32-bit length (-1: NULL) and its bytes
 * (BIGINT and DOUBLE PRECISION 8 bytes big-endian, TEXT and BYTEA as they are); a count of -1 ends.
 */
static const unsigned char copy_header[19] = { 'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0 };
#define COPY_END 2

/* Parameter i's bytes in the row: its length, or -1 when the value does not fit its column (err says). */
static int64_t bulk_field_len(struct sql_stmt *st, int i)
{
	enum sql_type k = st->kinds[i];
	unsigned oid = st->oids[i];

	if (!st->values[i])
		return 0;
	if ((oid == PG_INT8 && k == SQL_INTEGER) || (oid == PG_FLOAT8 && (k == SQL_INTEGER || k == SQL_FLOAT)))
		return 8;
	if ((oid == PG_TEXT && k == SQL_TEXT) || (oid == PG_BYTEA && k == SQL_BLOB))
		return st->lengths[i];
	snprintf(st->db->err, sizeof(st->db->err), "%.60s: parameter %d: a value of type %d for a column of type %u",
		 st->copy, i + 1, (int)k, oid);
	return -1;
}

static unsigned char *bulk_field(struct sql_stmt *st, int i, unsigned char *w)
{
	uint64_t bits;

	if (!st->values[i])
		return put_be(w, UINT32_MAX, 4);
	if (st->oids[i] == PG_INT8 || st->oids[i] == PG_FLOAT8) {
		memcpy(&bits, st->nums[i], 8);
		if (st->oids[i] == PG_FLOAT8 && st->kinds[i] == SQL_INTEGER) {
			double d = (double)(int64_t)bits;

			memcpy(&bits, &d, 8);
		}
		return put_be(put_be(w, 8, 4), bits, 8);
	}
	w = put_be(w, (uint32_t)st->lengths[i], 4);
	memcpy(w, st->values[i], (size_t)st->lengths[i]);
	return w + st->lengths[i];
}

/* A bulk statement's buffer emptied; a big one given back (one batch's rows need not stay). */
static void bulk_clear(struct sql_stmt *st)
{
	st->len = 0;
	st->rows = 0;
	if (st->cap > SQL_BULK_SEND_BYTES / 16) {
		free(st->buf);
		st->buf = NULL;
		st->cap = 0;
	}
}

/*
 * PostgreSQL: st's rows sent, one COPY, in the transaction they were made in. Those of a connection gone
 * since are not (SQL_E_BUSY): their transaction went with it. Emptied either way.
 */
static int pg_copy(struct sql *db, struct sql_stmt *st)
{
	int64_t rows = st->rows;
	PGresult *res;
	bool sent = true;
	int rc = pg_drain(db);

	if (rc) {
		bulk_clear(st);
		return rc;
	}
	if (st->buf_epoch != db->epoch) {
		snprintf(db->err, sizeof(db->err), "%.60s: the connection its rows were made on is gone", st->copy);
		bulk_clear(st);
		return SQL_E_BUSY;
	}
	st->len = (size_t)(put_be(st->buf + st->len, UINT16_MAX, COPY_END) - st->buf); /* room kept by each row */
	res = PQexec(db->pg, st->copy);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		bulk_clear(st);
		rc = pg_fail(db, res);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	for (size_t off = 0, n; sent && off < st->len; off += n) {
		n = st->len - off < (1u << 20) ? st->len - off : (1u << 20);
		sent = PQputCopyData(db->pg, (const char *)st->buf + off, (int)n) == 1;
	}
	bulk_clear(st);
	if (PQputCopyEnd(db->pg, sent ? NULL : "the rows could not all be sent") != 1 || !sent) {
		pg_note(db, PQerrorMessage(db->pg));
		rc = PQstatus(db->pg) == CONNECTION_OK ? SQL_E : SQL_E_BUSY;
	}
	/* Every result read, whatever happened: the connection is then ready for the next command. */
	while ((res = PQgetResult(db->pg)) != NULL) {
		ExecStatusType t = PQresultStatus(res);

		if (t == PGRES_COPY_IN || t == PGRES_COPY_OUT || t == PGRES_COPY_BOTH) {
			PQclear(res);
			if (!rc)
				pg_note(db, "COPY did not end");
			return rc ? rc : SQL_E_BUSY;
		}
		if (rc) {
			PQclear(res);
			continue;
		}
		rc = pg_done(db, res);
		if (!rc && db->changes != rows) {
			snprintf(db->err, sizeof(db->err), "%.60s: %" PRId64 " rows of %" PRId64 " stored", st->copy,
				 db->changes, rows);
			rc = SQL_E;
		}
	}
	return rc;
}

/* PostgreSQL: a bulk statement's step: its row added to the buffer (sent when that holds enough). */
static int pg_bulk_row(struct sql_stmt *st)
{
	struct sql *db = st->db;
	size_t need = 2 + COPY_END;
	unsigned char *w;

	if (st->rows && st->buf_epoch != db->epoch) {
		snprintf(db->err, sizeof(db->err), "%.60s: the connection its earlier rows were made on is gone", st->copy);
		bulk_clear(st);
		return SQL_E_BUSY;
	}
	for (int i = 0; i < st->nparams; i++) {
		int64_t n = bulk_field_len(st, i);

		if (n < 0)
			return SQL_E;
		need += 4 + (size_t)n;
	}
	if (!st->len)
		need += sizeof(copy_header);
	if (st->len + need > st->cap) {
		size_t cap = st->cap ? st->cap : 1u << 16;
		unsigned char *more;

		while (cap < st->len + need)
			cap *= 2;
		more = realloc(st->buf, cap);
		if (!more)
			return SQL_E_NOMEM;
		st->buf = more;
		st->cap = cap;
	}
	if (!st->len) {
		memcpy(st->buf, copy_header, sizeof(copy_header));
		st->len = sizeof(copy_header);
		st->buf_epoch = db->epoch;
	}
	w = put_be(st->buf + st->len, (uint16_t)st->nparams, 2);
	for (int i = 0; i < st->nparams; i++)
		w = bulk_field(st, i, w);
	st->len = (size_t)(w - st->buf);
	st->rows++;
	if (st->len >= SQL_BULK_SEND_BYTES) {
		int rc = pg_copy(db, st);

		if (rc) {
			sql_bulk_discard(db);
			return rc;
		}
	}
	return SQL_DONE;
}

int sql_bulk_flush(struct sql *db)
{
	int rc = SQL_OK;

	for (struct sql_stmt *st = db->bulk; st && !rc; st = st->next_bulk)
		if (st->rows)
			rc = pg_copy(db, st);
	if (rc)
		sql_bulk_discard(db);
	return rc;
}

void sql_bulk_discard(struct sql *db)
{
	for (struct sql_stmt *st = db->bulk; st; st = st->next_bulk)
		bulk_clear(st);
}

static void pg_stream_stop(struct sql_stmt *st);

static void pg_clear(struct sql_stmt *st)
{
	pg_stream_stop(st);
	st->ended = false;
	PQclear(st->res);
	st->res = NULL;
	PQfreemem(st->blob);
	st->blob = NULL;
	st->row = st->nrows = 0;
}

void sql_finalize(struct sql_stmt *st)
{
	if (!st)
		return;
	if (st->db->pg) {
		char drop[40];

		pg_clear(st);
		if (st->name[0] && st->epoch == st->db->epoch && PQstatus(st->db->pg) == CONNECTION_OK &&
		    !pg_drain(st->db)) {
			snprintf(drop, sizeof(drop), "DEALLOCATE %s", st->name);
			PQclear(PQexec(st->db->pg, drop));
		}
		for (struct sql_stmt **p = &st->db->bulk; st->copy && *p; p = &(*p)->next_bulk)
			if (*p == st) {
				*p = st->next_bulk;
				break;
			}
		free(st->copy);
		free(st->oids);
		free(st->buf);
		free(st->text);
		free(st->pg_text);
		free(st->values);
		free(st->lengths);
		free(st->formats);
		free(st->kinds);
		free(st->nums);
		for (int i = 0; st->own && i < st->nparams; i++)
			free(st->own[i]);
		free(st->own);
	} else {
		sqlite3_finalize(st->lite);
	}
	free(st);
}

const char *sql_text(const struct sql_stmt *st)
{
	return st->db->pg ? st->text : sqlite3_sql(st->lite);
}

int sql_param_count(const struct sql_stmt *st)
{
	return st->db->pg ? st->nparams : sqlite3_bind_parameter_count(st->lite);
}

/*
 * PostgreSQL: parameter i set, as kind (a blob binary, the rest text; a bulk statement's numbers are their
 * 8 bytes); SQL_E for a number it does not have.
 */
static int pg_bind(struct sql_stmt *st, int i, const char *v, size_t len, enum sql_type kind)
{
	if (i < 1 || i > st->nparams || len > INT32_MAX) {
		snprintf(st->db->err, sizeof(st->db->err), "no parameter %d of %d", i, st->nparams);
		return SQL_E;
	}
	st->values[i - 1] = v;
	st->lengths[i - 1] = (int)len;
	st->formats[i - 1] = kind == SQL_BLOB;
	st->kinds[i - 1] = kind;
	return SQL_OK;
}

/* PostgreSQL: a number as a parameter, v its 8 bytes: printed as text (printf's fmt), kept as it is (bulk). */
static int pg_bind_number(struct sql_stmt *st, int i, const void *v, enum sql_type kind)
{
	char *num;

	if (i < 1 || i > st->nparams)
		return pg_bind(st, i, NULL, 0, SQL_NULL);
	num = st->nums[i - 1];
	if (st->copy) {
		memcpy(num, v, 8);
		return pg_bind(st, i, num, 8, kind);
	}
	if (kind == SQL_INTEGER)
		snprintf(num, sizeof(st->nums[0]), "%" PRId64, *(const int64_t *)v);
	else
		snprintf(num, sizeof(st->nums[0]), "%.17g", *(const double *)v);
	return pg_bind(st, i, num, strlen(num), kind);
}

int sql_bind_i64(struct sql_stmt *st, int i, int64_t v)
{
	if (st->db->pg)
		return pg_bind_number(st, i, &v, SQL_INTEGER);
	return map_rc(sqlite3_bind_int64(st->lite, i, v));
}

int sql_bind_double(struct sql_stmt *st, int i, double v)
{
	if (st->db->pg)
		return pg_bind_number(st, i, &v, SQL_FLOAT);
	return map_rc(sqlite3_bind_double(st->lite, i, v));
}

int sql_bind_null(struct sql_stmt *st, int i)
{
	if (st->db->pg)
		return pg_bind(st, i, NULL, 0, SQL_NULL);
	return map_rc(sqlite3_bind_null(st->lite, i));
}

/*
 * PostgreSQL takes text parameters NUL-terminated (copied so): text with a NUL in it is refused, not cut.
 * A bulk statement's is copied at its step, as it is (COPY's binary text has a length, no NUL).
 */
int sql_bind_text(struct sql_stmt *st, int i, const char *p, size_t len)
{
	if (st->db->pg) {
		if (i < 1 || i > st->nparams)
			return pg_bind(st, i, NULL, 0, SQL_NULL);
		if (memchr(p, 0, len)) {
			snprintf(st->db->err, sizeof(st->db->err), "parameter %d: text with a NUL byte", i);
			return SQL_E;
		}
		if (st->copy)
			return pg_bind(st, i, p, len, SQL_TEXT);
		free(st->own[i - 1]);
		st->own[i - 1] = strndup(p, len);
		if (!st->own[i - 1])
			return SQL_E_NOMEM;
		return pg_bind(st, i, st->own[i - 1], len, SQL_TEXT);
	}
	return map_rc(sqlite3_bind_text64(st->lite, i, p, len, SQLITE_STATIC, SQLITE_UTF8));
}

int sql_bind_blob(struct sql_stmt *st, int i, const void *p, size_t len)
{
	if (st->db->pg)
		return pg_bind(st, i, len ? p : "", len, SQL_BLOB);
	return map_rc(sqlite3_bind_blob64(st->lite, i, len ? p : "", len, SQLITE_STATIC));
}

/* ---- queued statements (PostgreSQL's pipeline mode) ------------------------- */

int sql_prepare_queued(struct sql *db, const char *text, struct sql_stmt **out)
{
	int rc = sql_prepare(db, text, true, out);

	if (!rc && db->pg)
		(*out)->queued = true;
	return rc;
}

/*
 * PostgreSQL: the queued statements' outcomes read, in order, and pipeline mode left: SQL_OK, or the first
 * failure with its message (the statements after it in the pipeline did not run). Before anything that
 * waits for its own outcome.
 */
static int pg_drain(struct sql *db)
{
	int rc = SQL_OK;
	bool synced;

	if (!db->piped)
		return SQL_OK;
	db->piped = false;
	db->queued = 0;
	synced = PQpipelineSync(db->pg) == 1;
	if (!synced) { /* no sync to wait for: pg_alive() makes the connection again */
		pg_note(db, PQerrorMessage(db->pg));
		rc = SQL_E_BUSY;
	}
	while (synced) {
		PGresult *res = PQgetResult(db->pg);
		ExecStatusType t;

		if (!res) {
			if (PQstatus(db->pg) != CONNECTION_OK)
				break; /* the sync never comes */
			continue;  /* the end of one statement's results */
		}
		t = PQresultStatus(res);
		if (t == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK && t != PGRES_PIPELINE_ABORTED && !rc)
			rc = pg_fail(db, res);
		PQclear(res);
	}
	if (PQexitPipelineMode(db->pg) != 1 && !rc) { /* pg_alive() makes such a connection again */
		pg_note(db, PQerrorMessage(db->pg));
		rc = SQL_E_BUSY;
	}
	return rc;
}

/*
 * PostgreSQL: a queued statement's step: sent in pipeline mode, its outcome read by the next pg_drain()
 * (at most SQL_QUEUE_MAX outcomes wait: the server's replies stay within what a socket holds).
 */
static int pg_queue(struct sql_stmt *st)
{
	struct sql *db = st->db;
	int rc = SQL_OK;

	if (db->piped && (db->queued >= SQL_QUEUE_MAX || st->epoch != db->epoch))
		rc = pg_drain(db);
	if (!rc && !db->piped) {
		rc = pg_alive(db);
		if (!rc && st->epoch != db->epoch)
			rc = pg_prepare_on(db, st);
		if (!rc && PQenterPipelineMode(db->pg) != 1) {
			pg_note(db, PQerrorMessage(db->pg));
			rc = SQL_E_BUSY;
		}
		db->piped = !rc;
	}
	if (rc)
		return rc;
	db->queued++;
	if (PQsendQueryPrepared(db->pg, st->name, st->nparams, st->values, st->lengths, st->formats, 0) != 1) {
		pg_note(db, PQerrorMessage(db->pg));
		rc = pg_drain(db);
		return rc ? rc : SQL_E_BUSY;
	}
	return SQL_DONE;
}

/* ---- streamed statements (PostgreSQL's single-row mode) ------------------------ */

int sql_prepare_streamed(struct sql *db, const char *text, struct sql_stmt **out)
{
	int rc = sql_prepare(db, text, false, out);

	if (!rc && db->pg)
		(*out)->streamed = true;
	return rc;
}

/* PostgreSQL: SQL_E while a streamed statement other than st has rows unread (the connection is its). */
static int pg_streaming(struct sql *db, const struct sql_stmt *st)
{
	if (!db->stream || db->stream == st)
		return SQL_OK;
	snprintf(db->err, sizeof(db->err), "a streamed statement's rows are being read: %.120s", db->stream->text);
	return SQL_E;
}

/* The rest of a streamed run's results read and dropped: the connection is ready for the next command. */
static void pg_stream_finish(struct sql_stmt *st)
{
	PGresult *res;

	while ((res = PQgetResult(st->db->pg)) != NULL)
		PQclear(res);
	st->db->stream = NULL;
}

/* A streamed run left before its end (a reset, a finalize): cancelled on the server, its results dropped. */
static void pg_stream_stop(struct sql_stmt *st)
{
	PGcancel *c;
	char why[256];

	if (st->db->stream != st)
		return;
	c = PQgetCancel(st->db->pg);
	if (c) {
		PQcancel(c, why, sizeof(why)); /* if it fails, the rows are read to the end instead */
		PQfreeCancel(c);
	}
	pg_stream_finish(st);
}

/* Before a statement runs: no other statement streaming, nothing pending, the connection alive (or
 * reconnected), the statement prepared on this connection. */
static int pg_before_run(struct sql *db, struct sql_stmt *st)
{
	int rc = pg_streaming(db, st);

	if (!rc)
		rc = pg_drain(db);
	if (!rc)
		rc = pg_alive(db);
	if (!rc && st->epoch != db->epoch)
		rc = pg_prepare_on(db, st);
	return rc;
}

/*
 * PostgreSQL: a streamed statement's step. The first sends it (PQsendQueryPrepared) in single-row mode;
 * each then reads one result: a row (PGRES_SINGLE_TUPLE, held until the next step), or the end (the
 * zero-row PGRES_TUPLES_OK), or a failure. Only one row is ever in memory.
 */
static int pg_stream_step(struct sql_stmt *st)
{
	struct sql *db = st->db;
	PGresult *res;
	ExecStatusType t;
	int rc;

	PQclear(st->res);
	st->res = NULL;
	PQfreemem(st->blob);
	st->blob = NULL;
	st->row = st->nrows = 0;
	if (st->ended)
		return SQL_DONE;
	if (db->stream != st) {
		rc = pg_before_run(db, st);
		if (rc)
			return rc;
		if (PQsendQueryPrepared(db->pg, st->name, st->nparams, st->values, st->lengths, st->formats, 0) != 1) {
			pg_note(db, PQerrorMessage(db->pg));
			return PQstatus(db->pg) == CONNECTION_OK ? SQL_E : SQL_E_BUSY;
		}
		db->stream = st;
		if (PQsetSingleRowMode(db->pg) != 1) { /* only refused right after a send: never here */
			pg_note(db, "single-row mode refused");
			pg_stream_stop(st);
			return SQL_E;
		}
	}
	res = PQgetResult(db->pg);
	t = PQresultStatus(res);
	if (t == PGRES_SINGLE_TUPLE) {
		st->res = res;
		st->nrows = 1;
		return SQL_ROW;
	}
	st->ended = true;
	rc = t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK ? SQL_DONE : pg_fail(db, res);
	PQclear(res);
	pg_stream_finish(st);
	return rc;
}

int sql_drain(struct sql *db)
{
	return db->pg ? pg_drain(db) : SQL_OK;
}

int sql_step(struct sql_stmt *st)
{
	struct sql *db = st->db;

	if (!db->pg) {
		int rc = map_rc(sqlite3_step(st->lite));

		if (rc < 0)
			db->err[0] = 0; /* sql_errmsg: SQLite's */
		return rc;
	}
	if (st->copy)
		return pg_bulk_row(st);
	if (st->queued)
		return pg_queue(st);
	if (st->streamed)
		return pg_stream_step(st);
	if (!st->res) {
		PGresult *res;
		int rc = pg_before_run(db, st);

		if (rc)
			return rc;
		res = PQexecPrepared(db->pg, st->name, st->nparams, st->values, st->lengths, st->formats, 0);
		ExecStatusType t = PQresultStatus(res);

		if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK) {
			rc = pg_fail(db, res);
			PQclear(res);
			return rc;
		}
		db->changes = strtoll(PQcmdTuples(res), NULL, 10);
		st->res = res;
		st->nrows = PQntuples(res);
		st->row = -1;
	}
	PQfreemem(st->blob);
	st->blob = NULL;
	if (st->row + 1 >= st->nrows) {
		st->row = st->nrows;
		return SQL_DONE;
	}
	st->row++;
	return SQL_ROW;
}

void sql_reset(struct sql_stmt *st)
{
	if (st->db->pg) {
		pg_clear(st);
		for (int i = 0; i < st->nparams; i++)
			st->values[i] = NULL;
		return;
	}
	sqlite3_reset(st->lite);
	sqlite3_clear_bindings(st->lite);
}

/* PostgreSQL: the current row's column i, or NULL (NULL, no such row or column). */
static const char *pg_value(const struct sql_stmt *st, int i)
{
	if (!st->res || st->row < 0 || st->row >= st->nrows || i < 0 || i >= PQnfields(st->res) ||
	    PQgetisnull(st->res, st->row, i))
		return NULL;
	return PQgetvalue(st->res, st->row, i);
}

int sql_col_count(const struct sql_stmt *st)
{
	if (st->db->pg)
		return st->res ? PQnfields(st->res) : 0;
	return sqlite3_column_count(st->lite);
}

enum sql_type sql_col_type(const struct sql_stmt *st, int i)
{
	if (st->db->pg) {
		const char *v = pg_value(st, i);

		if (!v)
			return SQL_NULL;
		switch (PQftype(st->res, i)) {
		case PG_BOOL:
		case PG_INT2:
		case PG_INT4:
		case PG_INT8:
		case PG_OID: return SQL_INTEGER;
		case PG_NUMERIC: return strpbrk(v, ".eEN") ? SQL_FLOAT : SQL_INTEGER; /* a sum of integers is one */
		case PG_FLOAT4:
		case PG_FLOAT8: return SQL_FLOAT;
		case PG_BYTEA: return SQL_BLOB;
		default: return SQL_TEXT;
		}
	}
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
	if (st->db->pg) {
		const char *v = pg_value(st, i);

		if (!v)
			return 0;
		if (PQftype(st->res, i) == PG_BOOL)
			return *v == 't';
		return strtoll(v, NULL, 10);
	}
	return sqlite3_column_int64(st->lite, i);
}

double sql_col_double(const struct sql_stmt *st, int i)
{
	if (st->db->pg) {
		const char *v = pg_value(st, i);

		return v ? strtod(v, NULL) : 0;
	}
	return sqlite3_column_double(st->lite, i);
}

/* PostgreSQL: a bytea column's bytes (its text is hex), unescaped into the statement's buffer. */
static const unsigned char *pg_bytea(const struct sql_stmt *cst, int i, size_t *len)
{
	struct sql_stmt *st = (struct sql_stmt *)(uintptr_t)cst; /* the buffer is the statement's own */
	const char *v = pg_value(st, i);

	*len = 0;
	if (!v)
		return NULL;
	PQfreemem(st->blob);
	st->blob = PQunescapeBytea((const unsigned char *)v, len);
	return st->blob;
}

const char *sql_col_text(const struct sql_stmt *st, int i)
{
	if (st->db->pg)
		return pg_value(st, i);
	return (const char *)sqlite3_column_text(st->lite, i);
}

size_t sql_col_bytes(const struct sql_stmt *st, int i)
{
	if (st->db->pg) {
		size_t n = 0;

		if (PQftype(st->res, i) == PG_BYTEA)
			pg_bytea(st, i, &n);
		else if (pg_value(st, i))
			n = (size_t)PQgetlength(st->res, st->row, i);
		return n;
	}
	return (size_t)sqlite3_column_bytes(st->lite, i);
}

const void *sql_col_blob(const struct sql_stmt *st, int i)
{
	if (st->db->pg) {
		size_t n;

		if (PQftype(st->res, i) != PG_BYTEA)
			return pg_value(st, i);
		return pg_bytea(st, i, &n);
	}
	return sqlite3_column_blob(st->lite, i);
}
