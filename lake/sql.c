/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sql.h over SQLite and over PostgreSQL (libpq): a connection is one or
 * the other, and each call goes to its engine. SQLite's results are mapped
 * to sql_rc (extended result codes on; only the primary code matters).
 * PostgreSQL's statements are prepared on the server under a name of their
 * own; parameters go as text (numbers printed) or binary (blobs), results
 * come back as text and are read as the column's type says.
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
enum { PG_BOOL = 16, PG_BYTEA = 17, PG_INT8 = 20, PG_INT2 = 21, PG_INT4 = 23, PG_OID = 26, PG_FLOAT4 = 700,
       PG_FLOAT8 = 701, PG_NUMERIC = 1700 };

struct sql {
	sqlite3 *lite;
	PGconn *pg;
	unsigned next_name;  /* PostgreSQL: the next prepared statement's name */
	unsigned epoch;      /* PostgreSQL: connections made (statements prepared on an older one are again) */
	int64_t changes;     /* PostgreSQL: rows the latest command changed */
	uint64_t rng;        /* PostgreSQL: sql_random's state, seeded at open */
	char session[96];    /* PostgreSQL: the settings each connection starts with */
	char **keys, **values; /* PostgreSQL: the connection's parameters, to make it again (pg_pin()) */
	char err[256];       /* PostgreSQL: the latest failure */
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
	char (*nums)[32];    /* numbers printed */
	char **own;          /* text copied, NUL-terminated as libpq wants it */
	PGresult *res;       /* the run's rows, after the first step */
	int row, nrows;
	unsigned char *blob; /* the latest bytea read, unescaped */
};

static const char *pg_dialect(const char *text);
static int pg_done(struct sql *db, PGresult *res);

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
static void pg_note(struct sql *db, const char *msg)
{
	size_t n;

	snprintf(db->err, sizeof(db->err), "%s", msg && *msg ? msg : "unknown PostgreSQL failure");
	n = strlen(db->err);
	while (n && (db->err[n - 1] == '\n' || db->err[n - 1] == ' '))
		db->err[--n] = 0;
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
	snprintf(db->session, sizeof(db->session), "SET lock_timeout = %d; SET default_transaction_read_only = %s",
		 busy_ms, read_only ? "on" : "off");
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

	if (PQstatus(db->pg) == CONNECTION_OK)
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
		int rc = pg_alive(db);

		return rc ? rc : pg_done(db, PQexec(db->pg, pg_dialect(text)));
	}
	return map_rc(sqlite3_exec(db->lite, text, NULL, NULL, NULL));
}

const char *sql_errmsg(const struct sql *db)
{
	return db->pg ? db->err : sqlite3_errmsg(db->lite);
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

static int pg_prepare(struct sql *db, const char *text, struct sql_stmt *st)
{
	int rc = pg_alive(db);

	if (rc)
		return rc;
	st->text = strdup(text);
	st->pg_text = pg_params(pg_dialect(text), &st->nparams);
	if (!st->text || !st->pg_text)
		return SQL_E_NOMEM;
	snprintf(st->name, sizeof(st->name), "s%u", db->next_name++);
	rc = pg_prepare_on(db, st);
	if (rc)
		return rc;
	if (st->nparams) {
		st->values = calloc((size_t)st->nparams, sizeof(*st->values));
		st->lengths = calloc((size_t)st->nparams, sizeof(*st->lengths));
		st->formats = calloc((size_t)st->nparams, sizeof(*st->formats));
		st->nums = calloc((size_t)st->nparams, sizeof(*st->nums));
		st->own = calloc((size_t)st->nparams, sizeof(*st->own));
		if (!st->values || !st->lengths || !st->formats || !st->nums || !st->own)
			return SQL_E_NOMEM;
	}
	return SQL_OK;
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
	rc = sqlite3_prepare_v3(db->lite, text, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st->lite, NULL);
	if (rc != SQLITE_OK || !st->lite) { /* no statement in the text is a failure too */
		sqlite3_finalize(st->lite);
		free(st);
		return rc != SQLITE_OK ? map_rc(rc) : SQL_E;
	}
	*out = st;
	return SQL_OK;
}

static void pg_clear(struct sql_stmt *st)
{
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
		if (st->name[0] && st->epoch == st->db->epoch && PQstatus(st->db->pg) == CONNECTION_OK) {
			snprintf(drop, sizeof(drop), "DEALLOCATE %s", st->name);
			PQclear(PQexec(st->db->pg, drop));
		}
		free(st->text);
		free(st->pg_text);
		free(st->values);
		free(st->lengths);
		free(st->formats);
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

/* PostgreSQL: parameter i set (text, or binary for a blob); SQL_E for a number it does not have. */
static int pg_bind(struct sql_stmt *st, int i, const char *v, size_t len, int format)
{
	if (i < 1 || i > st->nparams || len > INT32_MAX) {
		snprintf(st->db->err, sizeof(st->db->err), "no parameter %d of %d", i, st->nparams);
		return SQL_E;
	}
	st->values[i - 1] = v;
	st->lengths[i - 1] = (int)len;
	st->formats[i - 1] = format;
	return SQL_OK;
}

int sql_bind_i64(struct sql_stmt *st, int i, int64_t v)
{
	if (st->db->pg) {
		if (i < 1 || i > st->nparams)
			return pg_bind(st, i, NULL, 0, 0);
		snprintf(st->nums[i - 1], sizeof(st->nums[0]), "%" PRId64, v);
		return pg_bind(st, i, st->nums[i - 1], strlen(st->nums[i - 1]), 0);
	}
	return map_rc(sqlite3_bind_int64(st->lite, i, v));
}

int sql_bind_double(struct sql_stmt *st, int i, double v)
{
	if (st->db->pg) {
		if (i < 1 || i > st->nparams)
			return pg_bind(st, i, NULL, 0, 0);
		snprintf(st->nums[i - 1], sizeof(st->nums[0]), "%.17g", v);
		return pg_bind(st, i, st->nums[i - 1], strlen(st->nums[i - 1]), 0);
	}
	return map_rc(sqlite3_bind_double(st->lite, i, v));
}

int sql_bind_null(struct sql_stmt *st, int i)
{
	if (st->db->pg)
		return pg_bind(st, i, NULL, 0, 0);
	return map_rc(sqlite3_bind_null(st->lite, i));
}

/* PostgreSQL takes text parameters NUL-terminated (copied so): text with a NUL in it is refused, not cut. */
int sql_bind_text(struct sql_stmt *st, int i, const char *p, size_t len)
{
	if (st->db->pg) {
		if (i < 1 || i > st->nparams)
			return pg_bind(st, i, NULL, 0, 0);
		if (memchr(p, 0, len)) {
			snprintf(st->db->err, sizeof(st->db->err), "parameter %d: text with a NUL byte", i);
			return SQL_E;
		}
		free(st->own[i - 1]);
		st->own[i - 1] = strndup(p, len);
		if (!st->own[i - 1])
			return SQL_E_NOMEM;
		return pg_bind(st, i, st->own[i - 1], len, 0);
	}
	return map_rc(sqlite3_bind_text64(st->lite, i, p, len, SQLITE_STATIC, SQLITE_UTF8));
}

int sql_bind_blob(struct sql_stmt *st, int i, const void *p, size_t len)
{
	if (st->db->pg)
		return pg_bind(st, i, len ? p : "", len, 1);
	return map_rc(sqlite3_bind_blob64(st->lite, i, len ? p : "", len, SQLITE_STATIC));
}

int sql_step(struct sql_stmt *st)
{
	struct sql *db = st->db;

	if (!db->pg)
		return map_rc(sqlite3_step(st->lite));
	if (!st->res) {
		PGresult *res;
		int rc = pg_alive(db);

		if (!rc && st->epoch != db->epoch)
			rc = pg_prepare_on(db, st);
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
