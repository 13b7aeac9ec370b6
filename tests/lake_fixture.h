/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A lake file for a test, with a signing key and a host: records are
 * sealed into real batches (tests/test_ingest_helpers.h), verified and
 * opened as the ingest does, then stored (store_batch). The tests of the
 * lake's write path (test_ingest_store.c) and of the sweep's reads
 * (test_lake_sweep_read.c) share it.
 *
 *   static int setup(void **state) { return lake_fixture_setup(state, "/tmp/test_NAME.XXXXXX"); }
 *   cmocka_unit_test_setup_teardown(a_test, setup, lake_fixture_teardown)
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
};

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
	*state = fx;
	return 0;
}

static inline int lake_fixture_teardown(void **state)
{
	struct lake_fixture *fx = *state;

	store_close(fx->st);
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
	rc = store_batch(fx->st, &h, vhash, raw, raw_len, s.len, received_ns, res);
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
	sql_text(path,
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
