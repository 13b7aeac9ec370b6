/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A lake file for a test, with a signing key and a host: records are
 * sealed into real batches (tests/test_ingest_helpers.h), verified and
 * opened as the ingest does, then stored (store_batch). The tests of the
 * lake's write path (test_lake_store.c) and of the sweep's reads
 * (test_lake_sweep_read.c) share it.
 *
 *   static int setup(void **state) { return lake_fixture_setup(state, "/tmp/test_NAME.XXXXXX"); }
 *   cmocka_unit_test_setup_teardown(a_test, setup, lake_fixture_teardown)
 *
 * Built with LAKE_FIXTURE_PG defined (tests/test_lake_store_pg.c), every
 * batch also goes into a PostgreSQL database of its own in a throwaway
 * cluster (tests/pg_cluster.h, one per test program), with the same
 * outcome; at teardown every table of both lakes must hold the same rows
 * (lake_mirror_compare): the write path gives both engines one lake.
 */
#ifndef TRACER_TESTS_LAKE_FIXTURE_H
#define TRACER_TESTS_LAKE_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <sqlite3.h>

#include "json.h"
#ifdef LAKE_FIXTURE_PG
#include "pg_cluster.h"
#include "sql.h"
#endif
#include "schema.h"
#include "store.h"
#include "test_ingest_helpers.h"

struct lake_fixture {
	char dir[64];
	char db[96];
	struct store *st;
	struct batch_secret_key key;
	uint8_t host[BATCH_HOST_ID_LEN];
	struct frames f;
#ifdef LAKE_FIXTURE_PG
	struct store *pg;   /* the mirror */
	char pg_uri[256];
	bool pg_diverged;   /* the test changed its SQLite lake by hand: nothing to compare */
#endif
};

#ifdef LAKE_FIXTURE_PG
static struct pg_cluster lake_pg_cluster;
static unsigned lake_pg_dbs;

static inline void lake_pg_stop(void)
{
	pg_cluster_stop(&lake_pg_cluster);
}

/*
 * The program's lake in its cluster (both made at the first call), emptied (TRUNCATE, ids restarted: as
 * new), and opened.
 */
static inline int lake_pg_open(struct lake_fixture *fx)
{
	static char uri[256];
	char err[512];
	struct obuf q;
	struct sql *db = NULL;
	int rc;

	if (!lake_pg_dbs++) {
		if (pg_cluster_start(&lake_pg_cluster))
			return -1;
		atexit(lake_pg_stop);
		if (pg_cluster_createdb(&lake_pg_cluster, "mirror", uri, sizeof(uri)))
			return -1;
	}
	snprintf(fx->pg_uri, sizeof(fx->pg_uri), "%s", uri);
	if (store_open(&fx->pg, fx->pg_uri, false, err, sizeof(err))) {
		fprintf(stderr, "store_open %s: %s\n", fx->pg_uri, err);
		return -1;
	}
	obuf_init_mem(&q, 1u << 16);
	obuf_puts(&q, "TRUNCATE ");
	for (unsigned i = 0, k = 0; i < lake_ntables; i++)
		if (strcmp(lake_tables[i].name, "schema_version"))
			obuf_printf(&q, "%s%s", k++ ? ", " : "", lake_tables[i].name);
	obuf_puts(&q, " RESTART IDENTITY");
	obuf_putc(&q, 0);
	rc = sql_open_pg(&db, fx->pg_uri, false, 5000, err, sizeof(err)) == SQL_OK && sql_exec(db, q.buf) == SQL_OK;
	if (!rc)
		fprintf(stderr, "emptying the mirror: %s\n", db ? sql_errmsg(db) : err);
	sql_close(db);
	obuf_free(&q);
	return rc ? 0 : -1;
}

/* A row of a table as text: each column's type and value. */
static inline char *lake_row_text(struct sql_stmt *st)
{
	struct obuf o;

	obuf_init_mem(&o, 1u << 24);
	for (int i = 0; i < sql_col_count(st); i++) {
		switch (sql_col_type(st, i)) {
		case SQL_NULL: obuf_puts(&o, "|null"); break;
		case SQL_INTEGER: obuf_printf(&o, "|i%lld", (long long)sql_col_i64(st, i)); break;
		case SQL_FLOAT: obuf_printf(&o, "|f%.17g", sql_col_double(st, i)); break;
		case SQL_TEXT:
			obuf_puts(&o, "|t");
			json_put_string(&o, sql_col_text(st, i), sql_col_bytes(st, i));
			break;
		case SQL_BLOB: {
			size_t n = sql_col_bytes(st, i);
			const unsigned char *b = sql_col_blob(st, i);

			obuf_puts(&o, "|b");
			for (size_t k = 0; k < n; k++)
				obuf_printf(&o, "%02x", b[k]);
			break;
		}
		}
	}
	obuf_putc(&o, 0);
	assert_int_equal(o.err, 0);
	return o.buf;
}

static inline int lake_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every row of a table (its columns of this version), as sorted text. */
static inline char **lake_table_rows(struct sql *db, const struct lake_table *t, size_t *n)
{
	struct obuf q;
	struct sql_stmt *st = NULL;
	char **rows = NULL;
	size_t cap = 0;

	obuf_init_mem(&q, 1u << 16);
	obuf_puts(&q, "SELECT ");
	for (unsigned i = 0, k = 0; i < t->ncols; i++) {
		if (t->cols[i].until || (t->cols[i].type == LK_ID && strcmp(t->name, "runs")))
			continue;
		obuf_printf(&q, "%s%s", k++ ? ", " : "", t->cols[i].name);
	}
	obuf_printf(&q, " FROM %s", t->name);
	obuf_putc(&q, 0);
	if (sql_prepare(db, q.buf, false, &st) != SQL_OK)
		fail_msg("%s: %s", q.buf, sql_errmsg(db));
	*n = 0;
	for (int rc; (rc = sql_step(st)) == SQL_ROW;) {
		if (*n == cap) {
			char **more;

			cap = cap ? 2 * cap : 64;
			more = realloc(rows, cap * sizeof(*rows));
			assert_non_null(more);
			rows = more;
		}
		rows[(*n)++] = lake_row_text(st);
	}
	sql_finalize(st);
	obuf_free(&q);
	if (*n)
		qsort(rows, *n, sizeof(*rows), lake_cmp_str);
	return rows;
}

/* Both lakes hold the same rows in every table. */
static inline void lake_mirror_compare(struct lake_fixture *fx)
{
	struct sql *lite = NULL, *pg = NULL;
	char err[256];
	int differ = 0;

	/* Row ids other than a run's (which people name) only order rows: PostgreSQL's sequences do not reuse a
	 * deleted row's id as SQLite's rowid does. */

	assert_int_equal(sql_open_sqlite(&lite, fx->db, true, 5000, err, sizeof(err)), SQL_OK);
	assert_int_equal(sql_open_pg(&pg, fx->pg_uri, true, 5000, err, sizeof(err)), SQL_OK);
	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *t = &lake_tables[i];
		size_t na = 0, nb = 0;
		char **a, **b;

		if (!strcmp(t->name, "schema_version"))
			continue;
		a = lake_table_rows(lite, t, &na);
		b = lake_table_rows(pg, t, &nb);
		for (size_t k = 0; k < na || k < nb; k++) {
			const char *x = k < na ? a[k] : "(none)", *y = k < nb ? b[k] : "(none)";

			if (strcmp(x, y) && differ++ < 10)
				fprintf(stderr, "%s row %zu:\n  sqlite     %.600s\n  postgresql %.600s\n", t->name, k, x,
					y);
		}
		for (size_t k = 0; k < na; k++)
			free(a[k]);
		for (size_t k = 0; k < nb; k++)
			free(b[k]);
		free(a);
		free(b);
	}
	sql_close(lite);
	sql_close(pg);
	assert_int_equal(differ, 0);
}
#endif

/* batch_verify's key lookup: the fixture's key, for any host. */
static inline int lake_lookup_any_host(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN],
				       uint8_t pk[BATCH_PUBKEY_LEN], uint8_t bound[BATCH_HOST_ID_LEN])
{
	const struct batch_secret_key *k = ctx;

	if (memcmp(key_id, k->key_id, BATCH_KEY_ID_LEN))
		return -1;
	memcpy(pk, k->public_key, BATCH_PUBKEY_LEN);
	memset(bound, 0, BATCH_HOST_ID_LEN);
	return 0;
}

/* template: a mkdtemp() template shorter than 64 bytes. */
static inline int lake_fixture_setup(void **state, const char *template_)
{
	struct lake_fixture *fx = calloc(1, sizeof(*fx));
	char err[256];

	if (!fx || strlen(template_) >= sizeof(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->dir, sizeof(fx->dir), "%s", template_);
	if (batch_crypto_init() || !mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	if (store_open(&fx->st, fx->db, false, err, sizeof(err))) {
		fprintf(stderr, "store_open: %s\n", err);
		rm_tree(fx->dir);
		free(fx);
		return -1;
	}
	batch_key_generate(&fx->key);
	host_id_of(fx->host, 1);
#ifdef LAKE_FIXTURE_PG
	if (lake_pg_open(fx)) {
		store_close(fx->st);
		rm_tree(fx->dir);
		free(fx);
		return -1;
	}
#endif
	*state = fx;
	return 0;
}

static inline int lake_fixture_teardown(void **state)
{
	struct lake_fixture *fx = *state;

	store_close(fx->st);
#ifdef LAKE_FIXTURE_PG
	store_close(fx->pg);
	if (!fx->pg_diverged)
		lake_mirror_compare(fx);
#endif
	frames_free(&fx->f);
	rm_tree(fx->dir);
	free(fx);
	return 0;
}

/*
 * fx->f's frames sealed as batch batch_seq of host, verified, opened and
 * stored as received at received_ns; the frames stay (seal them again for
 * a duplicate). The store's return; the batch's hash in hash (NULL: not
 * wanted).
 */
static inline int lake_store_chained(struct lake_fixture *fx, const uint8_t *host, uint64_t batch_seq,
				     const uint8_t *prev_hash, uint64_t received_ns, struct store_result *res,
				     uint8_t hash[BATCH_HASH_LEN]);
static inline int lake_store_sealed(struct lake_fixture *fx, const uint8_t *host, uint64_t batch_seq,
				    uint64_t received_ns, struct store_result *res, uint8_t hash[BATCH_HASH_LEN])
{
	return lake_store_chained(fx, host, batch_seq, NULL, received_ns, res, hash);
}

/* The test makes its SQLite lake by hand (an old schema's): its mirror stops here. */
static inline void lake_mirror_off(struct lake_fixture *fx)
{
#ifdef LAKE_FIXTURE_PG
	fx->pg_diverged = true;
#else
	(void)fx;
#endif
}

/* store_note_file_key on the fixture's lake and its mirror. */
static inline int lake_note_file_key(struct lake_fixture *fx, uint64_t now_ns)
{
	int rc = store_note_file_key(fx->st, fx->key.key_id, fx->key.public_key, fx->host, now_ns);
#ifdef LAKE_FIXTURE_PG
	assert_int_equal(store_note_file_key(fx->pg, fx->key.key_id, fx->key.public_key, fx->host, now_ns), rc);
#endif
	return rc;
}

/* store_batch into the fixture's lake (and its mirror, with the same outcome). */
static inline int lake_store_raw(struct lake_fixture *fx, const struct batch_header *h,
				 const uint8_t hash[BATCH_HASH_LEN], const uint8_t *raw, size_t raw_len, size_t wire_len,
				 uint64_t received_ns, struct store_result *res)
{
	int rc = store_batch(fx->st, h, hash, raw, raw_len, wire_len, received_ns, res);
#ifdef LAKE_FIXTURE_PG
	struct store_result mirror;
	int mrc;

	if (fx->pg_diverged)
		return rc;
	mrc = store_batch(fx->pg, h, hash, raw, raw_len, wire_len, received_ns, &mirror);
	if (mrc != rc)
		fail_msg("PostgreSQL stored with %d (%s), SQLite with %d", mrc, store_last_error(fx->pg), rc);
	assert_memory_equal(&mirror, res, sizeof(mirror));
#endif
	return rc;
}

/* store_maintain on the fixture's lake (and its mirror, with the same outcome; what each did is its own). */
static inline int lake_maintain(struct lake_fixture *fx, uint64_t series_ns, uint64_t runs_ns, uint64_t now_ns,
				struct store_upkeep *up)
{
	int rc;

	store_set_retention(fx->st, series_ns, runs_ns);
	rc = store_maintain(fx->st, now_ns, up);
#ifdef LAKE_FIXTURE_PG
	if (!fx->pg_diverged) {
		store_set_retention(fx->pg, series_ns, runs_ns);
		int mrc = store_maintain(fx->pg, now_ns, NULL);

		if (mrc != rc)
			fail_msg("PostgreSQL's upkeep: %d (%s), SQLite's %d", mrc, store_last_error(fx->pg), rc);
	}
#endif
	return rc;
}

/* The same, after the batch whose hash is prev_hash (NULL: zeros, a stream's first). */
static inline int lake_store_chained(struct lake_fixture *fx, const uint8_t *host, uint64_t batch_seq,
				     const uint8_t *prev_hash, uint64_t received_ns, struct store_result *res,
				     uint8_t hash[BATCH_HASH_LEN])
{
	struct batch_header h;
	struct sealed s;
	uint8_t vhash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	int rc;

	assert_int_equal(seal_frames(&fx->key, host, batch_seq, prev_hash, BATCH_COMP_ZLIB, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, vhash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	rc = lake_store_raw(fx, &h, vhash, raw, raw_len, s.len, received_ns, res);
	if (hash)
		memcpy(hash, vhash, BATCH_HASH_LEN);
	free(raw);
	free(s.wire);
	return rc;
}

/* The first column of the first row of a query over the fixture's lake (-1: no row). */
static inline int64_t lake_q(struct lake_fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int64_t lake_q(struct lake_fixture *fx, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return sql_int(fx->db, sql);
}

/*
 * A lake's schema as text: each table's columns (name, type, not null,
 * default, key), sorted, and each index's SQL: two lakes with equal texts
 * have the same schema, however each got it (created, or upgraded by
 * ALTER TABLE).
 */
static inline void lake_schema_text(const char *path, char *out, size_t outlen)
{
	sql_text_of(path,
		 "SELECT group_concat(item, ';') FROM (SELECT m.name || '(' || (SELECT group_concat(c, ',') FROM "
		 "(SELECT name || ' ' || type || ' ' || \"notnull\" || ' ' || coalesce(dflt_value, '') || ' ' || pk AS c "
		 "FROM pragma_table_info(m.name) ORDER BY name)) || ')' AS item FROM sqlite_master m "
		 "WHERE m.type = 'table' UNION ALL SELECT 'index ' || name || ' ' || coalesce(sql, tbl_name) FROM "
		 "sqlite_master WHERE type = 'index' ORDER BY 1)",
		 out, outlen);
}

/*
 * The lake at path, of an older schema version: a reader refuses it and
 * names its version; the ingest's open upgrades it to this version, with
 * exactly the schema of the fixture's lake (created fresh).
 */
static inline void lake_assert_upgraded(struct lake_fixture *fx, const char *path, int version)
{
	char err[512], want[32], fresh[16384], old[16384];
	struct store *st = NULL;

	assert_int_equal(store_open(&st, path, true, err, sizeof(err)), STORE_E_SCHEMA);
	snprintf(want, sizeof(want), "version %d", version);
	assert_non_null(strstr(err, want));
	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	store_close(st);
	assert_int_equal(sql_int(path, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
	lake_schema_text(fx->db, fresh, sizeof(fresh));
	lake_schema_text(path, old, sizeof(old));
	assert_true(strlen(fresh) > 1000 && strlen(fresh) < sizeof(fresh) - 1);
	assert_string_equal(old, fresh);
}

/*
 * The lake at path (closed) made a lake of an older version holding the same rows: a new file of that
 * version's schema (lake/schema.c), the columns it has copied from each of its tables, put in path's place.
 * What later versions added is gone, as it was never there.
 */
static inline void lake_downgrade(const char *path, int version)
{
	char old[160], wal[176];
	struct obuf o;
	sqlite3 *db;

	snprintf(old, sizeof(old), "%s.new", path);
	assert_int_equal(rename(path, old), 0);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	assert_true(access(wal, F_OK) != 0); /* closed: nothing left in a WAL */
	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(lake_schema_sqlite(0, version, &o), 0);
	obuf_printf(&o, "ATTACH '%s' AS up;\n", old);
	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *t = &lake_tables[i];

		if (t->since > version || !strcmp(t->name, "schema_version"))
			continue;
		for (int pass = 0; pass < 2; pass++) {
			const char *sep = "";

			obuf_printf(&o, pass ? ") SELECT " : "INSERT INTO main.%s (", t->name);
			for (unsigned j = 0; j < t->ncols; j++) {
				const struct lake_column *c = &t->cols[j];

				if (c->since <= version && !c->until) {
					obuf_printf(&o, "%s%s", sep, c->name);
					sep = ", ";
				}
			}
		}
		obuf_printf(&o, " FROM up.%s;\n", t->name);
	}
	obuf_puts(&o, "DETACH up;\n");
	obuf_putc(&o, '\0');
	assert_false(o.err);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, o.buf, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("lake_downgrade: %s", sqlite3_errmsg(db));
	sqlite3_close(db);
	obuf_free(&o);
	assert_int_equal(unlink(old), 0);
}

#endif /* TRACER_TESTS_LAKE_FIXTURE_H */
