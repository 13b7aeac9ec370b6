/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's PostgreSQL DDL (lake/schema.c, lake_schema_pg) on a real
 * PostgreSQL 15: a throwaway cluster (tests/pg_cluster.h) for the whole
 * file, a database of its own for each test. A new lake is exactly the
 * schema table, as test_lake_store.c checks it for SQLite, read from
 * information_schema and pg_catalog; an upgraded lake is a new one; the
 * generator refuses versions it cannot build; values come back as stored.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "json.h"
#include "pg_cluster.h"
#include "schema.h"

struct pg_test {
	struct pg_cluster pc;
	unsigned ndb; /* databases made, for their names */
	PGconn *db;   /* this test's own database */
};

static int group_setup(void **state)
{
	struct pg_test *t = calloc(1, sizeof(*t));

	if (!t || pg_cluster_start(&t->pc)) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int group_teardown(void **state)
{
	struct pg_test *t = *state;
	int rc;

	if (!t) /* its setup failed, and said why */
		return 0;
	rc = pg_cluster_stop(&t->pc);
	free(t);
	return rc;
}

/* A new database of the cluster, connected. */
static PGconn *new_db(struct pg_test *t)
{
	char name[32], uri[256];
	PGconn *db;

	snprintf(name, sizeof(name), "t%u", ++t->ndb);
	if (pg_cluster_createdb(&t->pc, name, uri, sizeof(uri)))
		return NULL;
	db = PQconnectdb(uri);
	if (PQstatus(db) != CONNECTION_OK) {
		fprintf(stderr, "%s: %s", uri, PQerrorMessage(db));
		PQfinish(db);
		return NULL;
	}
	return db;
}

static int setup(void **state)
{
	struct pg_test *t = *state;

	t->db = new_db(t);
	return t->db ? 0 : -1;
}

static int teardown(void **state)
{
	struct pg_test *t = *state;

	PQfinish(t->db);
	t->db = NULL;
	return 0;
}

/* sql run in one transaction (nothing: an upgrade with nothing to do); the test fails with PostgreSQL's message
 * if it does not commit. */
static void pg_apply(PGconn *db, const char *sql)
{
	static const char *const steps[] = { "BEGIN", NULL, "COMMIT" };

	for (unsigned i = 0; i < 3; i++) {
		PGresult *r = PQexec(db, steps[i] ? steps[i] : sql);

		if (PQresultStatus(r) != PGRES_COMMAND_OK &&
		    !(!steps[i] && (PQresultStatus(r) == PGRES_EMPTY_QUERY || PQresultStatus(r) == PGRES_TUPLES_OK)))
			fail_msg("%s: %s", steps[i] ? steps[i] : "the lake's DDL", PQerrorMessage(db));
		PQclear(r);
	}
}

/* The DDL of lake_schema_pg(from, to) applied to db. */
static void pg_schema_apply(PGconn *db, int from, int to)
{
	struct obuf o;

	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(lake_schema_pg(from, to, &o), 0);
	obuf_putc(&o, '\0');
	assert_false(o.err);
	pg_apply(db, o.buf);
	obuf_free(&o);
}

/* The first column of the first row of a query, as text into out ("" when NULL or no row). */
static void pg_vtext(PGconn *db, char *out, size_t outlen, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static void pg_vtext(PGconn *db, char *out, size_t outlen, const char *fmt, va_list ap)
{
	char sql[2048];
	PGresult *r;

	assert_true((size_t)vsnprintf(sql, sizeof(sql), fmt, ap) < sizeof(sql));
	r = PQexec(db, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(db));
	snprintf(out, outlen, "%s", PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0) : "");
	assert_true(strlen(out) < outlen - 1); /* not cut */
	PQclear(r);
}

static void pg_text(PGconn *db, char *out, size_t outlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void pg_text(PGconn *db, char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_vtext(db, out, outlen, fmt, ap);
	va_end(ap);
}

/* The same as an integer (-1: no row, or NULL). */
static int64_t pg_q(PGconn *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t pg_q(PGconn *db, const char *fmt, ...)
{
	char v[32];
	va_list ap;

	va_start(ap, fmt);
	pg_vtext(db, v, sizeof(v), fmt, ap);
	va_end(ap);
	return *v ? strtoll(v, NULL, 10) : -1;
}

/* A column of "a, b, c". */
static bool in_key(const char *key, const char *name)
{
	size_t n = strlen(name);

	for (const char *k = key; k; k = strchr(k, ',') ? strchr(k, ',') + 2 : NULL)
		if (!strncmp(k, name, n) && (k[n] == ',' || k[n] == '\0'))
			return true;
	return false;
}

/* Its primary key's columns, "a, b": the table's key (with the partition key of a partitioned table), or its
 * own key or id column; NULL: none. */
static const char *key_of(const struct lake_table *t)
{
	static char with[128];

	if (t->key && t->partitioned) {
		snprintf(with, sizeof(with), "%s, %s", t->key, LAKE_PARTITION_COLUMN);
		return with;
	}
	if (t->key)
		return t->key;
	for (unsigned j = 0; j < t->ncols; j++)
		if (!t->cols[j].until && (t->cols[j].type == LK_ID || (t->cols[j].flags & LK_KEY)))
			return t->cols[j].name;
	return NULL;
}

/* The constraint of that name and kind ('p', 'u', 'c') on table: "name (a, b)", or "". */
#define CONSTRAINT_COLUMNS                                                                                         \
	"SELECT c.conname || ' (' || string_agg(a.attname, ', ' ORDER BY k.i) || ')' FROM pg_constraint c CROSS JOIN " \
	"unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n " \
	"WHERE c.conrelid = 'public.%s'::regclass AND c.contype = '%c' AND c.conname = '%s' GROUP BY c.conname"

static void assert_constraint(PGconn *db, const struct lake_table *t, char kind, const char *name, const char *cols)
{
	char want[256], got[256];

	snprintf(want, sizeof(want), "%s (%s)", name, cols);
	pg_text(db, got, sizeof(got), CONSTRAINT_COLUMNS, t->name, kind, name);
	assert_string_equal(got, want);
}

/* One column as the schema table has it: type, NOT NULL, identity, default, in the key or not. */
static void assert_column(PGconn *db, const struct lake_table *t, const struct lake_column *c)
{
	static const char *const type[] = { [LK_INT] = "bigint", [LK_TEXT] = "text", [LK_REAL] = "double precision",
					     [LK_BLOB] = "bytea", [LK_ID] = "bigint" };
	const char *key = key_of(t);
	bool in_pk = key && in_key(key, c->name);
	char dflt[256];

	/* a key's columns are NOT NULL in PostgreSQL whatever the table says (SQLite's text keys allow NULL) */
	assert_int_equal(pg_q(db, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND "
				  "table_name = '%s' AND column_name = '%s' AND data_type = '%s' AND is_nullable = '%s' "
				  "AND is_identity = '%s'", t->name, c->name, type[c->type],
			      (c->flags & LK_NOT_NULL) || in_pk ? "NO" : "YES", c->type == LK_ID ? "YES" : "NO"),
			 1);
	assert_int_equal(pg_q(db, "SELECT count(*) FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid "
				  "AND a.attnum = ANY (c.conkey) WHERE c.conrelid = 'public.%s'::regclass AND "
				  "c.contype = 'p' AND a.attname = '%s'", t->name, c->name),
			 in_pk);
	pg_text(db, dflt, sizeof(dflt), "SELECT column_default FROM information_schema.columns WHERE table_schema = "
		"'public' AND table_name = '%s' AND column_name = '%s'", t->name, c->name);
	if (!c->dflt)
		assert_string_equal(dflt, "");
	else /* PostgreSQL keeps it in its own words (0, 'x'::text): the same value */
		assert_int_equal(pg_q(db, "SELECT ((%s) IS NOT DISTINCT FROM (%s))::int", dflt, c->dflt), 1);
	if (c->flags & LK_UNIQUE) {
		char name[128];

		snprintf(name, sizeof(name), "%s_%s_key", t->name, c->name);
		assert_constraint(db, t, 'u', name, c->name);
	}
	if (c->check)
		assert_int_equal(pg_q(db, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'public.%s'::regclass AND "
					  "contype = 'c' AND conname = '%s_%s_check'", t->name, t->name, c->name),
				 1);
	/* lz4 where the table says (Debian's server has it), the default elsewhere */
	assert_int_equal(pg_q(db, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.%s'::regclass AND "
				  "attname = '%s' AND attcompression = '%s'", t->name, c->name, c->lz4 ? "l" : ""),
			 1);
}

/*
 * A new lake holds exactly lake/schema.c's tables, each with exactly its columns (type, NOT NULL, identity,
 * default, the key), its named constraints and its indexes (columns, unique); what a version removed is not
 * there.
 */
static void a_new_pg_lake_is_exactly_the_schema_table(void **state)
{
	struct pg_test *t = *state;
	unsigned columns = 0, indexes = 0;

	pg_schema_apply(t->db, 0, LAKE_SCHEMA_VERSION);
	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *tb = &lake_tables[i];
		unsigned live = 0, uniques = 0, checks = 0, named = 0;
		char name[128];

		assert_int_equal(pg_q(t->db, "SELECT count(*) FROM information_schema.tables WHERE table_schema = "
					     "'public' AND table_name = '%s' AND table_type = 'BASE TABLE'", tb->name),
				 1);
		for (unsigned j = 0; j < tb->ncols; j++) {
			const struct lake_column *c = &tb->cols[j];

			if (c->until) { /* removed: not in a new lake */
				assert_int_equal(pg_q(t->db, "SELECT count(*) FROM information_schema.columns WHERE "
							     "table_schema = 'public' AND table_name = '%s' AND "
							     "column_name = '%s'", tb->name, c->name),
						 0);
				continue;
			}
			assert_column(t->db, tb, c);
			live++;
			uniques += !!(c->flags & LK_UNIQUE);
			checks += !!c->check;
		}
		columns += live;
		assert_int_equal(pg_q(t->db, "SELECT count(*) FROM information_schema.columns WHERE table_schema = "
					     "'public' AND table_name = '%s'", tb->name),
				 live);
		if (key_of(tb)) {
			snprintf(name, sizeof(name), "%s_pkey", tb->name);
			assert_constraint(t->db, tb, 'p', name, key_of(tb));
		}
		if (tb->unique) {
			snprintf(name, sizeof(name), "%s_unique", tb->name);
			assert_constraint(t->db, tb, 'u', name, tb->unique);
			uniques++;
		}
		assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'public.%s'::regclass",
				      tb->name),
				 !!key_of(tb) + uniques + checks);
		for (unsigned j = 0; j < tb->nidx; j++) {
			const struct lake_index *x = &tb->idx[j];
			char got[256], want[256];

			assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_indexes WHERE schemaname = 'public' AND "
						     "tablename = '%s' AND indexname = '%s'", tb->name, x->name),
					 !x->until);
			if (x->until)
				continue;
			named++;
			snprintf(want, sizeof(want), "%s%s", x->columns, x->unique ? " unique" : "");
			pg_text(t->db, got, sizeof(got),
				"SELECT string_agg(a.attname, ', ' ORDER BY k.i) || CASE WHEN x.indisunique THEN ' unique' "
				"ELSE '' END FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid CROSS JOIN "
				"unnest(x.indkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = x.indrelid "
				"AND a.attnum = k.n WHERE c.relname = '%s' AND c.relnamespace = 'public'::regnamespace "
				"GROUP BY x.indisunique", x->name);
			assert_string_equal(got, want);
		}
		/* the named indexes, and PostgreSQL's own for the key and each unique constraint */
		assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_indexes WHERE schemaname = 'public' AND "
					     "tablename = '%s'", tb->name),
				 named + !!key_of(tb) + uniques);
		indexes += named;
	}
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"),
			 lake_ntables);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace AND "
				     "relkind NOT IN ('r', 'i', 'S', 'p', 'I')"),
			 0); /* no view (S: the ids' sequences; p, I: partitioned tables and their indexes) */
	/* exactly the partitioned tables are, by day on received_ns, and none has a partition yet */
	for (unsigned i = 0; i < lake_ntables; i++) {
		assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_partitioned_table p JOIN pg_class c ON c.oid = "
					     "p.partrelid JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = "
					     "p.partattrs[0] WHERE c.relname = '%s' AND p.partstrat = 'r' AND a.attname = '%s'",
				      lake_tables[i].name, LAKE_PARTITION_COLUMN),
				 !!lake_tables[i].partitioned);
	}
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_inherits"), 0);
	/* the function the upkeep makes each day's partition with */
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_proc WHERE proname = 'lake_partition'"), 1);
	assert_int_equal(pg_q(t->db, "SELECT version FROM schema_version"), LAKE_SCHEMA_VERSION);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM schema_version"), 1);
	assert_true(columns > 300);
	assert_true(indexes >= 8);
}

/* The generator refuses what it cannot build, writing nothing; an upgrade to the same version is empty. */
static void the_pg_generator_refuses_versions_it_cannot_build(void **state)
{
	struct obuf o;

	(void)state;
	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(lake_schema_pg(-1, LAKE_SCHEMA_VERSION, &o), -EINVAL);
	assert_int_equal(lake_schema_pg(LAKE_SCHEMA_VERSION + 1, LAKE_SCHEMA_VERSION + 1, &o), -EINVAL);
	assert_int_equal(lake_schema_pg(0, LAKE_SCHEMA_VERSION + 1, &o), -EINVAL);
	assert_int_equal(lake_schema_pg(LAKE_SCHEMA_VERSION, LAKE_SCHEMA_VERSION - 1, &o), -EINVAL);
	assert_int_equal(lake_schema_pg(0, 0, &o), -EINVAL);
	/* PostgreSQL lakes start at version 8: none older to upgrade, none older to make */
	for (int from = 1; from < LAKE_SCHEMA_PG_FIRST; from++)
		assert_int_equal(lake_schema_pg(from, LAKE_SCHEMA_VERSION, &o), -EINVAL);
	for (int to = 1; to < LAKE_SCHEMA_PG_FIRST; to++)
		assert_int_equal(lake_schema_pg(0, to, &o), -EINVAL);
	assert_int_equal(o.len, 0);
	assert_int_equal(lake_schema_pg(LAKE_SCHEMA_VERSION, LAKE_SCHEMA_VERSION, &o), 0); /* nothing to do */
	assert_int_equal(o.len, 0);
	assert_int_equal(lake_schema_pg(0, LAKE_SCHEMA_PG_FIRST, &o), 0);
	assert_true(o.len > 1000);
	obuf_free(&o);
}

/*
 * Everything a lake's schema is, as one text (sorted: an upgraded table's columns are in another order):
 * tables, columns (type, NULL, default, identity), constraints as PostgreSQL writes them, indexes.
 */
static void pg_schema_text(PGconn *db, char *out, size_t outlen)
{
	pg_text(db, out, outlen,
		"SELECT string_agg(item, E'\\n' ORDER BY item) FROM ("
		"SELECT 'table ' || table_name || ' ' || table_type AS item FROM information_schema.tables "
		"WHERE table_schema = 'public' UNION ALL "
		"SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' "
		"|| coalesce(column_default, '-') || ' ' || is_identity FROM information_schema.columns "
		"WHERE table_schema = 'public' UNION ALL "
		"SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) "
		"FROM pg_constraint WHERE connamespace = 'public'::regnamespace UNION ALL "
		"SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' UNION ALL "
		"SELECT 'compression ' || a.attrelid::regclass || '.' || a.attname || ' ' || a.attcompression::text FROM "
		"pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = 'public'::regnamespace "
		"AND a.attcompression <> '') s");
}

/*
 * A lake made at version 8, the first PostgreSQL lake, then upgraded to this version is exactly a new one
 * (the upgrades of versions 9 and 10 included).
 */
static void a_version_8_pg_lake_upgraded_is_exactly_a_new_one(void **state)
{
	struct pg_test *t = *state;
	PGconn *fresh = new_db(t);
	static char a[1 << 17], b[1 << 17];

	assert_non_null(fresh);
	pg_schema_apply(fresh, 0, LAKE_SCHEMA_VERSION);
	pg_schema_apply(t->db, 0, LAKE_SCHEMA_PG_FIRST);
	assert_int_equal(pg_q(t->db, "SELECT version FROM schema_version"), LAKE_SCHEMA_PG_FIRST);
	pg_schema_apply(t->db, LAKE_SCHEMA_PG_FIRST, LAKE_SCHEMA_VERSION);
	assert_int_equal(pg_q(t->db, "SELECT version FROM schema_version"), LAKE_SCHEMA_VERSION);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM schema_version"), 1);
	pg_schema_text(fresh, a, sizeof(a));
	pg_schema_text(t->db, b, sizeof(b));
	assert_true(strlen(a) > 10000);
	assert_string_equal(b, a);
	PQfinish(fresh);
}

/*
 * Version 9 partitioned records, samples, files and heartbeats by day on received_ns (version 10 the agent's
 * counters and losses): a version 8 lake's rows take their batch's received_ns (a record names its batch, the
 * other rows share its seq), each lands in its day's partition, and nothing is lost; a row whose batch is
 * gone gets 0 (1970-01-01's partition).
 */
static void a_version_8_pg_lakes_rows_move_into_their_days_partitions(void **state)
{
#define DAY_NS "86400000000000"
	struct pg_test *t = *state;

	pg_schema_apply(t->db, 0, LAKE_SCHEMA_PG_FIRST);
	pg_apply(t->db,
		 "INSERT INTO batches (hash, host_id, key_id, boot_id, batch_seq, first_seq, last_seq, nrecords, "
		 "compression, body_len, raw_len, wire_len, created_ns, mono_to_real_ns, prev_hash, chain, received_ns) "
		 "VALUES ('b1', 'h', 'k', 'o', 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, '', 'first', 20000 * " DAY_NS " + 5), "
		 "('b2', 'h', 'k', 'o', 2, 3, 3, 1, 0, 0, 0, 0, 0, 0, 'b1', 'linked', 20001 * " DAY_NS " + 7);\n"
		 "INSERT INTO records (host_id, seq, src_pos, src_gen, type, flags, len, crc, payload, batch_hash) VALUES "
		 "('h', 1, 0, 0, 1, 0, 1, 0, '\\x01', 'b1'), ('h', 2, 0, 0, 1, 0, 1, 0, '\\x02', 'b1'), "
		 "('h', 3, 0, 0, 1, 0, 1, 0, '\\x03', 'b2'), ('h', 4, 0, 0, 1, 0, 1, 0, '\\x04', 'gone');\n"
		 "INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns) VALUES ('h', 2, 'o', 1, 1, 1), "
		 "('h', 3, 'o', 1, 1, 2);\n"
		 "INSERT INTO files (host_id, seq, boot_id, tgid, start_ns, ts_ns, path, mode, truncated) VALUES "
		 "('h', 1, 'o', 1, 1, 1, '/x', 'r', 0);\n"
		 "INSERT INTO heartbeats (host_id, seq, start_ns, end_ns) VALUES ('h', 3, 1, 2);\n"
		 "INSERT INTO agent_counters (host_id, seq, boot_id, ts_ns, kernel_drops, kernel_state_drops, ring_drops, "
		 "records_copied, bad_consumer_pos, kernel_drops_by_type, ring_drops_by_type) VALUES "
		 "('h', 2, 'o', 1, 0, 0, 0, 0, 0, '[]', '[]');\n"
		 "INSERT INTO losses (host_id, seq, reason, first_seq, last_seq, records, bytes) VALUES "
		 "('h', 3, 'ring', 1, 1, 1, 1)");
	pg_schema_apply(t->db, LAKE_SCHEMA_PG_FIRST, LAKE_SCHEMA_VERSION);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records"), 4);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records WHERE seq = 1 AND received_ns = 20000 * " DAY_NS
				     " + 5 AND payload = '\\x01'"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records WHERE seq = 3 AND received_ns = 20001 * " DAY_NS
				     " + 7"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records WHERE seq = 4 AND received_ns = 0"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM samples WHERE (seq = 2 AND received_ns = 20000 * " DAY_NS
				     " + 5) OR (seq = 3 AND received_ns = 20001 * " DAY_NS " + 7)"), 2);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM files WHERE received_ns = 20000 * " DAY_NS " + 5"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM heartbeats WHERE received_ns = 20001 * " DAY_NS " + 7"), 1);
	/* version 10: the counters and losses too */
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM agent_counters_p20241004 WHERE received_ns = 20000 * " DAY_NS
				     " + 5"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM losses_p20241005 WHERE received_ns = 20001 * " DAY_NS
				     " + 7"), 1);
	/* day 20000 is 2024-10-04: each row in its day's partition, each table with the days it has rows of */
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records_p20241004"), 2);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records_p20241005"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM records_p19700101"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM samples_p20241004"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM samples_p20241005"), 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent "
				     "WHERE c.relname = 'samples'"), 2);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE "
				     "c.relkind = 'r'"), 3 + 2 + 1 + 1 + 1 + 1);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_class WHERE relname = 'lake_old'"), 0);
	/* version 12: records' payloads in lz4, in the partitions of before too */
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_attribute a JOIN pg_inherits i ON i.inhrelid = a.attrelid "
				     "WHERE i.inhparent = 'records'::regclass AND a.attname = 'payload' AND "
				     "a.attcompression = 'l'"), 3);
	assert_int_equal(pg_q(t->db, "SELECT count(*) FROM pg_attribute WHERE attcompression = 'l'"), 4);
#undef DAY_NS
}

/* A record's payload with NUL bytes, and the seqs and times at both ends of BIGINT, come back exactly. */
static void a_record_keeps_its_bytes_and_the_ends_of_bigint(void **state)
{
	static const char sql[] = "INSERT INTO records (host_id, seq, src_pos, src_gen, type, flags, ts_ns, len, "
				  "crc, payload, batch_hash) VALUES ($1, $2, $3, 0, 1, 0, $4, $5, 0, $6, 'b')";
	static const Oid types[] = { 25, 20, 20, 20, 20, 17 }; /* text, int8, bytea */
	static const int formats[] = { 0, 1, 1, 1, 1, 1 };     /* text, then binary */
	struct pg_test *t = *state;
	uint8_t payload[300];
	uint64_t min_be = htobe64((uint64_t)INT64_MIN), max_be = htobe64((uint64_t)INT64_MAX), minus1_be, len_be;
	int lengths[6];
	const char *values[6];
	PGresult *r;
	char text[128];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7); /* every byte value, NUL among them (at 0 and 256) */
	payload[1] = 0;
	minus1_be = htobe64((uint64_t)-1);
	len_be = htobe64(sizeof(payload));
	values[0] = "host\xc3\xa9";
	values[1] = (const char *)&min_be;
	values[2] = (const char *)&minus1_be;
	values[3] = (const char *)&max_be;
	values[4] = (const char *)&len_be;
	values[5] = (const char *)payload;
	lengths[0] = 0;
	for (int i = 1; i < 5; i++)
		lengths[i] = 8;
	lengths[5] = sizeof(payload);
	pg_schema_apply(t->db, 0, LAKE_SCHEMA_VERSION);
	pg_apply(t->db, "SELECT lake_partition('records', 0)"); /* received_ns 0: the first day's */
	r = PQexecParams(t->db, sql, 6, types, values, lengths, formats, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fail_msg("insert: %s", PQerrorMessage(t->db));
	PQclear(r);

	r = PQexecParams(t->db, "SELECT payload, seq, src_pos, ts_ns, len, stream FROM records", 0, NULL, NULL, NULL,
			 NULL, 1);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_int_equal(PQntuples(r), 1);
	assert_int_equal(PQgetlength(r, 0, 0), sizeof(payload));
	assert_memory_equal(PQgetvalue(r, 0, 0), payload, sizeof(payload));
	assert_int_equal(PQgetlength(r, 0, 1), 8);
	assert_memory_equal(PQgetvalue(r, 0, 1), &min_be, 8);
	assert_memory_equal(PQgetvalue(r, 0, 2), &minus1_be, 8);
	assert_memory_equal(PQgetvalue(r, 0, 3), &max_be, 8);
	assert_memory_equal(PQgetvalue(r, 0, 4), &len_be, 8);
	assert_memory_equal(PQgetvalue(r, 0, 5), &(uint64_t){ 0 }, 8); /* the default */
	PQclear(r);
	pg_text(t->db, text, sizeof(text), "SELECT host_id || ' ' || seq || ' ' || ts_ns || ' ' || length(payload) || "
					   "' ' || get_byte(payload, 1) FROM records");
	assert_string_equal(text, "host\xc3\xa9 -9223372036854775808 9223372036854775807 300 0");
	/* the key holds within a day's partition: the same (host, stream, seq, received_ns) again is refused (by
	 * the partition's copy of records_pkey; across days the store's stream lock keeps a seq once) */
	r = PQexecParams(t->db, sql, 6, types, values, lengths, formats, 0);
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	assert_string_equal(PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME), "records_p19700101_pkey");
	PQclear(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_new_pg_lake_is_exactly_the_schema_table, setup, teardown),
		cmocka_unit_test(the_pg_generator_refuses_versions_it_cannot_build),
		cmocka_unit_test_setup_teardown(a_version_8_pg_lake_upgraded_is_exactly_a_new_one, setup, teardown),
		cmocka_unit_test_setup_teardown(a_version_8_pg_lakes_rows_move_into_their_days_partitions, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_record_keeps_its_bytes_and_the_ends_of_bigint, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
