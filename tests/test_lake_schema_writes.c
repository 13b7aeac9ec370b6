/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's tables (lake/schema.c) and the statements that write them
 * (store.c's stmt_sql[], through lake_stmt_sql) agree, on both engines
 * alike (the statements are the same on both): every column a statement
 * writes exists in its table at this version, and every column of every
 * table is written by some statement, unless it is listed below as filled
 * otherwise (its default, the lake's identity, the schema's own upgrade).
 * A column added to schema.c that no statement writes, or a statement
 * naming a column schema.c lacks, fails here: the schema is defined once
 * and the write path follows it. What counts as written: the column list
 * of an INSERT (and of an INSERT ... SELECT), and the assignments of an
 * UPDATE ... SET and of an upsert's DO UPDATE SET. The rows one record
 * fills (samples, files, agent_counters, losses) are written by statements
 * made from the table (lake_row_sql), each column bound as schema.c says it
 * is made; every byte of their record must be a column's, or skipped there
 * with a reason.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "db.h"
#include "hostbeat.h"
#include "hostid.h"
#include "json.h"
#include "json_parse.h"
#include "schema.h"

/* Filled without a write statement naming them; each says how. */
static const struct {
	const char *table, *column, *why;
} not_written[] = {
	{ "schema_version", "version", "the DDL's INSERT and each upgrade's UPDATE (lake/schema.c)" },
	{ "batches", "batch_id", "the lake's identity (LK_ID)" },
	{ "signals", "signal_id", "the lake's identity (LK_ID)" },
	{ "runs", "run_id", "the lake's identity (LK_ID)" },
};

#define MAX_COLS 128
static bool written[64][MAX_COLS]; /* [table][column] */
static char problem[512];          /* the first thing wrong, "" while none */

static void found(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void found(const char *fmt, ...)
{
	va_list ap;

	if (*problem)
		return;
	va_start(ap, fmt);
	vsnprintf(problem, sizeof(problem), fmt, ap);
	va_end(ap);
}

static const struct lake_table *table_at(const char **p, unsigned *ti)
{
	char name[64];
	size_t n = 0;

	while (**p == ' ')
		(*p)++;
	while ((isalnum((unsigned char)**p) || **p == '_') && n + 1 < sizeof(name))
		name[n++] = *(*p)++;
	name[n] = 0;
	for (unsigned i = 0; i < lake_ntables; i++)
		if (!strcmp(lake_tables[i].name, name)) {
			*ti = i;
			return &lake_tables[i];
		}
	found("a statement writes table '%s', which lake/schema.c does not have", name);
	return NULL;
}

/* A column of t, as the statement names it: marked written; a column t lacks (at this version) fails. */
static void mark(const struct lake_table *t, unsigned ti, const char *name, size_t n, const char *sql)
{
	for (unsigned j = 0; j < t->ncols; j++)
		if (strlen(t->cols[j].name) == n && !strncmp(t->cols[j].name, name, n)) {
			if (t->cols[j].until)
				found("%s.%.*s, which version %u removed, is written by: %s", t->name, (int)n, name,
				      t->cols[j].until, sql);
			written[ti][j] = true;
			return;
		}
	found("%s has no column '%.*s', which this statement writes: %s", t->name, (int)n, name, sql);
}

static const char *ident(const char *p, size_t *n)
{
	while (*p == ' ' || *p == '\n')
		p++;
	*n = 0;
	while (isalnum((unsigned char)p[*n]) || p[*n] == '_')
		(*n)++;
	return p;
}

/* "(a, b, c)": each marked. */
static void column_list(const struct lake_table *t, unsigned ti, const char *p, const char *sql)
{
	while (*p == ' ')
		p++;
	if (*p != '(') {
		found("no column list in: %s", sql);
		return;
	}
	p++;
	for (;;) {
		size_t n;
		const char *name = ident(p, &n);

		if (!n) {
			found("cannot read the column list of: %s", sql);
			return;
		}
		mark(t, ti, name, n, sql);
		p = name + n;
		while (*p == ' ')
			p++;
		if (*p == ')')
			return;
		if (*p != ',') {
			found("cannot read the column list of: %s", sql);
			return;
		}
		p++;
	}
}

/* "a = expr, b = expr ... [WHERE|RETURNING|end]", or "(a, b) = (...)": each assigned column marked (commas inside parentheses and
 * quotes are the expressions'). */
static void assignments(const struct lake_table *t, unsigned ti, const char *p, const char *sql)
{
	while (*p == ' ')
		p++;
	if (*p == '(') { /* SET (a, b) = (...) */
		column_list(t, ti, p, sql);
		return;
	}
	for (;;) {
		size_t n;
		const char *name = ident(p, &n);
		int depth = 0;
		bool quoted = false;

		if (!n) {
			found("cannot read the assignments of: %s", sql);
			return;
		}
		mark(t, ti, name, n, sql);
		p = name + n;
		for (; *p; p++) {
			if (*p == '\'')
				quoted = !quoted;
			else if (quoted)
				continue;
			else if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			else if (depth == 0 && (*p == ',' || !strncmp(p, " WHERE ", 7) || !strncmp(p, " RETURNING ", 11)))
				break;
		}
		if (*p != ',')
			return;
		p++;
	}
}

static void statement(const char *sql)
{
	const char *p = sql, *set;
	const struct lake_table *t;
	unsigned ti = 0;

	while (*p == ' ')
		p++;
	if (!strncmp(p, "INSERT INTO ", 12)) {
		p += 12;
		t = table_at(&p, &ti);
		if (!t)
			return;
		column_list(t, ti, p, sql);
		set = strstr(p, " DO UPDATE SET ");
		if (set)
			assignments(t, ti, set + 15, sql);
	} else if (!strncmp(p, "UPDATE ", 7)) {
		p += 7;
		t = table_at(&p, &ti);
		if (!t)
			return;
		set = strstr(p, " SET ");
		if (!set) {
			found("an UPDATE without SET: %s", sql);
			return;
		}
		assignments(t, ti, set + 5, sql);
	}
}

static void every_column_is_written_by_a_statement_and_every_written_column_exists(void **state)
{
	unsigned statements = 0, columns = 0;

	(void)state;
	assert_true(lake_ntables <= 64);
	for (int id = 0; lake_stmt_sql(id); id++) {
		statement(lake_stmt_sql(id));
		if (*problem)
			fail_msg("%s", problem);
		statements++;
	}
	assert_true(statements > 40);
	for (size_t k = 0; k < sizeof(not_written) / sizeof(not_written[0]); k++) {
		const struct lake_table *t = lake_table(not_written[k].table);
		bool found = false;

		assert_non_null(t);
		for (unsigned j = 0; j < t->ncols; j++)
			if (!strcmp(t->cols[j].name, not_written[k].column)) {
				if (written[t - lake_tables][j])
					fail_msg("%s.%s is listed as not written (%s), but a statement writes it",
						 t->name, t->cols[j].name, not_written[k].why);
				written[t - lake_tables][j] = found = true;
			}
		assert_true(found);
	}
	for (unsigned i = 0; i < lake_ntables; i++) {
		assert_true(lake_tables[i].ncols <= MAX_COLS);
		for (unsigned j = 0; j < lake_tables[i].ncols; j++) {
			if (lake_tables[i].cols[j].until)
				continue;
			columns++;
			if (!written[i][j])
				fail_msg("%s.%s: no statement writes it (store.c's stmt_sql[]); write it, or list it in "
					 "not_written[] with how it is filled", lake_tables[i].name,
					 lake_tables[i].cols[j].name);
		}
	}
	assert_true(columns > 300);
}

/* The parser sees what it should: a column or a table schema.c lacks, a removed column, in each place a
 * statement writes; an expression's commas are not columns. */
static void what_schema_c_lacks_is_found_wherever_it_is_written(void **state)
{
	static const struct {
		const char *sql, *want;
	} cases[] = {
		{ "INSERT INTO hosts (host_id, no_such) VALUES (?, ?)", "hosts has no column 'no_such'" },
		{ "INSERT INTO no_table (a) VALUES (?)", "table 'no_table'" },
		{ "UPDATE runs SET state = 'x', nope = coalesce(a, b) WHERE run_id = ?", "runs has no column 'nope'" },
		{ "INSERT INTO steps (run_id, idx) VALUES (?, ?) ON CONFLICT (run_id, idx) DO UPDATE SET state = "
		  "coalesce(steps.state, ','), oops = 1", "steps has no column 'oops'" },
		{ "INSERT INTO hosts (host_id, max_seq) VALUES (?, ?)", "hosts.max_seq, which version 8 removed" },
		{ "UPDATE runs SET (state, nothing_here) = (?, ?) WHERE run_id = ?", "runs has no column 'nothing_here'" },
		{ "UPDATE runs SET state = coalesce(state, 'a, b'), exit_code = max(exit_code, 1) WHERE run_id = 1", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		*problem = 0;
		statement(cases[i].sql);
		if (!*cases[i].want)
			assert_string_equal(problem, "");
		else if (!strstr(problem, cases[i].want))
			fail_msg("%s: got '%s', want '%s'", cases[i].sql, problem, cases[i].want);
	}
	*problem = 0;
	memset(written, 0, sizeof(written));
}

/*
 * A record's bytes and what a table (or an upsert) makes of them: marks in cover[] the bytes one column's
 * source holds, or says into why what is wrong with it.
 */
static void source_covers(const char *table, const char *column, const struct lake_source *k, unsigned size,
			  uint8_t *cover, char *why, size_t len)
{
	if (k->from == LF_NONE) {
		snprintf(why, len, "%s.%s: says nowhere where its value comes from (lake_source.from)", table, column);
		return;
	}
	if (k->from < LF_UINT || k->from > LF_DERIVED)
		return; /* from the batch, a constant, or what the lake made of the record */
	if ((unsigned)k->off + k->len > size || !k->len ||
	    (k->from == LF_UINT && k->len != 2 && k->len != 4 && k->len != 8) ||
	    (k->from == LF_DERIVED && k->derived == LD_NONE) ||
	    ((k->derived == LD_RECLAIM || k->derived == LD_IMAGE_PEAK) && k->flags_off + 4u > size)) {
		snprintf(why, len, "%s.%s: bytes %u+%u of a %u-byte record, source %u/%u", table, column, k->off,
			 k->len, size, k->from, k->derived);
		return;
	}
	memset(cover + k->off, 1, k->len);
}

/* Then the record's skipped bytes, each with a reason; then every byte must be marked. */
static void skips_cover(const char *table, const struct lake_skip *skip, unsigned nskip, unsigned size,
			uint8_t *cover, char *why, size_t len)
{
	for (unsigned j = 0; j < nskip && !*why; j++) {
		const struct lake_skip *k = &skip[j];

		if (!k->why || !*k->why || k->off + k->len > size) {
			snprintf(why, len, "%s: skipped bytes %u+%u without a reason or past the record", table, k->off,
				 k->len);
			return;
		}
		memset(cover + k->off, 1, k->len);
	}
	for (unsigned b = 0; b < size && !*why; b++)
		if (!cover[b])
			snprintf(why, len, "%s: byte %u of its record is no column's and not skipped: map the field in "
				 "lake/schema.c, or skip it there saying why", table, b);
}

/*
 * A table one record fills a row of (record_size): the first thing wrong with how its columns say they are
 * made, into why (empty if nothing). Every column of this version has a source; every byte of the record is
 * a column's (held or made from) or skipped with a reason, so that a field added to the record's struct and
 * not to the lake fails here.
 */
static void record_covered(const struct lake_table *t, char *why, size_t len)
{
	uint8_t cover[4096] = { 0 };

	*why = 0;
	if (t->record_size > sizeof(cover)) {
		snprintf(why, len, "%s: a record of %u bytes, more than this test looks at", t->name, t->record_size);
		return;
	}
	for (unsigned j = 0; j < t->ncols && !*why; j++)
		if (lake_row_column(&t->cols[j]))
			source_covers(t->name, t->cols[j].name, &t->cols[j].src, t->record_size, cover, why, len);
	if (!*why)
		skips_cover(t->name, t->skip, t->nskip, t->record_size, cover, why, len);
}

/*
 * Whether the "a, b" columns the statement picks its row by are the table's key, its unique, or a unique
 * index's (an upsert's ON CONFLICT needs one of them; an UPDATE's WHERE, the row's id or one of them).
 */
static bool is_unique(const struct lake_table *t, const char *cols)
{
	if ((t->key && !strcmp(t->key, cols)) || (t->unique && !strcmp(t->unique, cols)))
		return true;
	for (unsigned i = 0; i < t->nidx; i++)
		if (t->idx[i].unique && !t->idx[i].until && !strcmp(t->idx[i].columns, cols))
			return true;
	for (unsigned i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, cols) && !t->cols[i].until &&
		    (t->cols[i].type == LK_ID || (t->cols[i].flags & (LK_KEY | LK_UNIQUE))))
			return true;
	return false;
}

/*
 * The same for an upsert, whose columns must also be its table's, of this version, the columns it picks its
 * row by a key of the table. A JSON record's (no record_size): every fill from the batch, the run, or a member
 * under a rule; the members themselves are the processor's tests' (test_attrib_runs).
 */
static void upsert_covered(const struct lake_upsert *u, char *why, size_t len)
{
	const struct lake_table *t = lake_table(u->table);
	uint8_t cover[4096] = { 0 };
	char keys[256] = "";
	size_t kn = 0;

	*why = 0;
	if (!t || u->record_size > sizeof(cover)) {
		snprintf(why, len, "%s: no such table, or a record of %u bytes", u->table, u->record_size);
		return;
	}
	for (unsigned j = 0; j < u->nfills && !*why; j++) {
		const struct lake_fill *f = &u->fills[j];
		bool found = false, json = f->src.from == LF_JSON || f->src.from == LF_ROOT_JSON;

		for (unsigned i = 0; i < t->ncols; i++)
			found |= !strcmp(t->cols[i].name, f->column) && !t->cols[i].until;
		if (!found)
			snprintf(why, len, "%s has no column '%s' (an upsert fills it)", u->table, f->column);
		else if (f->merge == (u->write == LW_UPSERT ? LM_KEY : LM_WHERE))
			kn += (size_t)snprintf(keys + kn, sizeof(keys) - kn, "%s%s", kn ? ", " : "", f->column);
		if (!u->record_size && !json && f->src.from > LF_BOOT && f->src.from != LF_HASH &&
		    f->src.from != LF_RUN && f->src.from != LF_NEXT_IDX && f->src.from != LF_INDEX &&
		    f->src.from != LF_CONST)
			snprintf(why, len, "%s.%s: a JSON record's fill from its bytes (source %u)", u->table, f->column,
				 f->src.from);
		else if (json && !f->src.json != lake_rule_of_object(f->src.rule))
			snprintf(why, len, "%s.%s: a member fill without its path, or a rule of the object with one",
				 u->table, f->column);
		else if ((f->src.from == LF_CONST) != !!f->src.json && !json)
			snprintf(why, len, "%s.%s: a constant without its text", u->table, f->column);
		else if (f->src.from == LF_INDEX && !u->element)
			snprintf(why, len, "%s.%s: an element's place, in an upsert of no array", u->table, f->column);
		if (u->record_size && !*why)
			source_covers(u->table, f->column, &f->src, u->record_size, cover, why, len);
	}
	if (!*why && u->write != LW_INSERT && u->write != LW_INSERT_NEW && !is_unique(t, keys))
		snprintf(why, len, "%s: an upsert without its key's columns (it picks rows by '%s')", u->table, keys);
	if (!*why && u->record_size)
		skips_cover(u->table, u->skip, u->nskip, u->record_size, cover, why, len);
	if (!*why && !u->record_size && !u->json_schema)
		snprintf(why, len, "%s: an upsert of neither a record nor a JSON object", u->table);
	for (unsigned j = 0; j < u->njskip && !*why; j++)
		if (!u->jskip[j].why || !*u->jskip[j].why)
			snprintf(why, len, "%s: member %s skipped without a reason", u->table, u->jskip[j].member);
}

static void every_byte_of_a_record_is_a_columns_or_skipped_with_why(void **state)
{
	static const char *const rows_of_records[] = { "records", "samples", "files", "agent_counters", "losses" };
	char why[256];
	unsigned tables = 0;

	(void)state;
	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *t = &lake_tables[i];

		if (t->json_schema) { /* every column from the batch or a member (the members: the next test) */
			for (unsigned j = 0; j < t->ncols; j++)
				if (lake_row_column(&t->cols[j]) &&
				    (t->cols[j].src.from == LF_NONE ||
				     (t->cols[j].src.from == LF_JSON) != !!t->cols[j].src.json))
					fail_msg("%s.%s: no source, or a member without its path", t->name,
						 t->cols[j].name);
			assert_non_null(lake_row_sql(t));
			continue;
		}
		if (!t->record_size) {
			assert_null(lake_row_sql(t));
			continue;
		}
		tables++;
		record_covered(t, why, sizeof(why));
		if (*why)
			fail_msg("%s", why);
		assert_non_null(lake_row_sql(t));
	}
	assert_int_equal(tables, sizeof(rows_of_records) / sizeof(rows_of_records[0]));
	for (size_t i = 0; i < sizeof(rows_of_records) / sizeof(rows_of_records[0]); i++)
		assert_true(lake_table(rows_of_records[i])->record_size > 0);
	assert_int_equal(lake_nupserts, 15);
	for (unsigned i = 0; i < lake_nupserts; i++) {
		upsert_covered(lake_upserts[i], why, sizeof(why));
		if (*why)
			fail_msg("%s", why);
		assert_non_null(lake_upsert_sql(lake_upserts[i]));
	}
	assert_non_null(strstr(lake_upsert_sql(&lake_exec_upsert), ", execs = processes.execs + excluded.execs"));
	assert_non_null(strstr(lake_upsert_sql(&lake_exit_upsert),
			       " ON CONFLICT (host_id, boot_id, tgid, start_ns) DO UPDATE SET start_real_ns = "
			       "coalesce(processes.start_real_ns, excluded.start_real_ns), end_real_ns = "
			       "excluded.end_real_ns, "));
	/* a new step after the run's others; a run's header changed only by a newer record, the host kept */
	assert_non_null(strstr(lake_upsert_sql(&lake_live_step_upsert),
			       "VALUES (?1, (SELECT coalesce(max(idx) + 1, 0) FROM steps WHERE run_id = ?2), ?3, "));
	assert_non_null(strstr(lake_upsert_sql(&lake_live_step_upsert), " ON CONFLICT (run_id, step_id) DO UPDATE SET "
									 "state = excluded.state, name = excluded.name, "));
	assert_null(strstr(lake_upsert_sql(&lake_live_step_upsert), "idx = "));
	assert_non_null(strstr(lake_upsert_sql(&lake_live_run_update),
			       " WHERE run_id = ?1 AND ?16 > coalesce(update_seq, -9223372036854775807 - 1)"));
	assert_non_null(strstr(lake_upsert_sql(&lake_live_run_update), "host_cloud = coalesce(?39, host_cloud)"));
	assert_null(strstr(lake_upsert_sql(&lake_live_run_update), "run_key"));
	assert_non_null(strstr(lake_upsert_sql(&lake_live_run_insert), ") RETURNING run_id"));
	/* an array's elements, several rows a statement, each new step after the row before it */
	assert_non_null(strstr(lake_upsert_rows_sql(&lake_live_step_upsert, 32),
			       "), (?40, (SELECT coalesce(max(idx) + 1, 0) FROM steps WHERE run_id = ?41) + 1, ?42, "));
	assert_non_null(strstr(lake_upsert_rows_sql(&lake_live_step_upsert, 32), "WHERE run_id = ?1211) + 31, ?1212, "));
	assert_non_null(strstr(lake_upsert_rows_sql(&lake_tools_upsert, 4), "VALUES (?1, ?2, ?3, ?4, ?5), (?6, "));
	assert_null(lake_upsert_rows_sql(&lake_live_step_upsert, 3));
	assert_null(lake_upsert_rows_sql(&lake_live_step_upsert, 64));
	assert_null(lake_upsert_rows_sql(&lake_exec_upsert, 2)); /* a record's own row: one a statement */
	assert_null(lake_upsert_rows_sql(&lake_live_run_update, 2));
	/* a report's: its run taken over where the report has no host; its steps at their places, stored once */
	assert_non_null(strstr(lake_upsert_sql(&lake_report_run_update), "UPDATE runs SET host_id = ?2, "));
	assert_non_null(strstr(lake_upsert_sql(&lake_report_run_update),
			       ", uid = coalesce(?38, uid), host_name = coalesce(?39, host_name) WHERE run_id = ?1"));
	assert_non_null(strstr(lake_upsert_rows_sql(&lake_report_step_insert, 2),
			       "INSERT INTO steps (run_id, idx, step_id, state, name, "));
	assert_non_null(strstr(lake_upsert_rows_sql(&lake_report_step_insert, 2), "), (?34, ?35, ?36, "));
	assert_non_null(strstr(lake_upsert_sql(&lake_report_step_insert), ", ?33) ON CONFLICT DO NOTHING"));
	assert_null(strstr(lake_upsert_sql(&lake_report_signal_insert), "ON CONFLICT"));
	assert_string_equal(lake_row_sql(lake_table("losses")),
			    "INSERT INTO losses (host_id, seq, reason, first_seq, last_seq, records, bytes, stream, "
			    "received_ns) VALUES (?,?,?,?,?,?,?,?,?)");
}

/* The heartbeats column whose source is the member at path, or NULL. */
static const struct lake_column *member_column(const char *path)
{
	const struct lake_table *t = lake_table("heartbeats");

	for (unsigned j = 0; j < t->ncols; j++)
		if (lake_row_column(&t->cols[j]) && t->cols[j].src.from == LF_JSON &&
		    !strcmp(t->cols[j].src.json, path))
			return &t->cols[j];
	return NULL;
}

/*
 * A heartbeat as the processor writes it (report/hostbeat.c, every figure known, a host with a price): each
 * of its members (and of its "host" object's) is a heartbeats column's source, but its schema (the table's
 * json_schema); and each heartbeats member column is one the record has. A member the processor adds
 * fails here until the lake stores it.
 */
static void every_member_of_a_host_record_is_a_heartbeats_column(void **state)
{
	struct hostid h = { .cloud = "aws", .instance_type = "m5.large", .instance_id = "i-0abc", .region = "eu-west-1",
			    .cpus = 2, .memory_bytes = 8ull << 30, .price_known = true, .price_micro_usd = 96000 };
	struct hostbeat b = { .beat = 3, .boot_id = "0123456789abcdef0123456789abcdef", .start_ns = 1, .end_ns = 2,
			      .uptime_known = true, .uptime_ns = 5, .cpus_known = true, .cpus = 2, .cpu_known = true,
			      .mem_total_known = true, .mem_used_known = true, .net_known = true, .runs = 1,
			      .host = &h };
	struct json_node nodes[128];
	struct json_doc d;
	struct obuf o;
	unsigned members = 0, columns = 0;

	(void)state;
	obuf_init_mem(&o, 1 << 16);
	assert_int_equal(hostbeat_write(&o, &b), 0);
	assert_int_equal(json_parse(&d, o.buf, o.len, nodes, 128), 0);
	assert_string_equal(lake_table("heartbeats")->json_schema, HOSTBEAT_SCHEMA);
	for (uint32_t i = nodes[0].first; i; i = nodes[i].next) {
		char path[96];
		const struct json_node *n = &nodes[i];

		snprintf(path, sizeof(path), "%.*s", (int)n->key_len, d.text + n->key_start);
		if (!strcmp(path, "schema"))
			continue;
		if (n->type == JSON_OBJECT) {
			for (uint32_t k = n->first; k; k = nodes[k].next) {
				snprintf(path, sizeof(path), "%.*s.%.*s", (int)n->key_len, d.text + n->key_start,
					 (int)nodes[k].key_len, d.text + nodes[k].key_start);
				if (!member_column(path))
					fail_msg("member %s of %s: no heartbeats column holds it", path,
						 HOSTBEAT_SCHEMA);
				members++;
			}
			continue;
		}
		if (!member_column(path))
			fail_msg("member %s of %s: no heartbeats column holds it", path, HOSTBEAT_SCHEMA);
		members++;
	}
	for (unsigned j = 0; j < lake_table("heartbeats")->ncols; j++)
		columns += lake_table("heartbeats")->cols[j].src.from == LF_JSON;
	assert_int_equal(members, columns); /* and no column for a member the record lacks */
	assert_int_equal(members, 23);
	obuf_free(&o);
}

/* The check finds a field left out, a column without a source, and a skip without a reason. */
static void a_field_left_out_of_the_lake_is_found(void **state)
{
	static const struct lake_column cols[] = {
		{ .name = "host_id", .type = LK_TEXT, .since = 1, .src = { .from = LF_HOST } },
		{ .name = "a", .type = LK_INT, .since = 1, .src = { .from = LF_UINT, .off = 0, .len = 8 } },
		{ .name = "b", .type = LK_INT, .since = 1, .src = { .from = LF_UINT, .off = 8, .len = 4 } },
	};
	static const struct lake_column unsourced[] = { { .name = "c", .type = LK_INT, .since = 1 } };
	static const struct lake_skip pad[] = { { .off = 12, .len = 4, .why = "padding" } };
	static const struct lake_skip mute[] = { { .off = 12, .len = 4, .why = "" } };
	struct lake_table t = { .name = "t", .since = 1, .cols = cols, .ncols = 3, .record_size = 16 };
	char why[256];

	(void)state;
	record_covered(&t, why, sizeof(why));
	assert_non_null(strstr(why, "byte 12 of its record is no column's"));
	t.skip = pad;
	t.nskip = 1;
	record_covered(&t, why, sizeof(why));
	assert_string_equal(why, "");
	t.skip = mute;
	record_covered(&t, why, sizeof(why));
	assert_non_null(strstr(why, "without a reason"));
	t.cols = unsourced;
	t.ncols = 1;
	record_covered(&t, why, sizeof(why));
	assert_non_null(strstr(why, "t.c: says nowhere"));
}

/* An upsert's check finds a column its table lacks, a missing key, and a byte of its record left out. */
static void an_upsert_filling_what_the_table_lacks_or_leaving_a_field_out_is_found(void **state)
{
	static const struct lake_fill nope[] = {
		{ .column = "tgid", .merge = LM_KEY, .src = { .from = LF_UINT, .off = 0, .len = 4 } },
		{ .column = "nope", .src = { .from = LF_UINT, .off = 4, .len = 4 } },
	};
	static const struct lake_fill keyless[] = {
		{ .column = "tgid", .src = { .from = LF_UINT, .off = 0, .len = 4 } },
		{ .column = "ppid", .src = { .from = LF_UINT, .off = 4, .len = 4 } },
	};
	static const struct lake_fill short_of_one[] = {
		{ .column = "host_id", .merge = LM_KEY, .src = { .from = LF_HOST } },
		{ .column = "boot_id", .merge = LM_KEY, .src = { .from = LF_BOOT } },
		{ .column = "tgid", .merge = LM_KEY, .src = { .from = LF_UINT, .off = 0, .len = 4 } },
		{ .column = "start_ns", .merge = LM_KEY, .src = { .from = LF_UINT, .off = 4, .len = 4 } },
	};
	struct lake_upsert u = { .table = "processes", .fills = nope, .nfills = 2, .record_size = 8 };
	char why[256];

	(void)state;
	upsert_covered(&u, why, sizeof(why));
	assert_non_null(strstr(why, "processes has no column 'nope'"));
	u.fills = keyless;
	upsert_covered(&u, why, sizeof(why));
	assert_non_null(strstr(why, "without its key"));
	u.fills = short_of_one; /* (tgid) alone is no key of processes */
	u.nfills = 3;
	upsert_covered(&u, why, sizeof(why));
	assert_non_null(strstr(why, "picks rows by 'host_id, boot_id, tgid'"));
	u.nfills = 4;
	upsert_covered(&u, why, sizeof(why));
	assert_string_equal(why, "");
	u.record_size = 12;
	upsert_covered(&u, why, sizeof(why));
	assert_non_null(strstr(why, "byte 8 of its record is no column's"));
}

/*
 * Why a read made from lake/schema.c (struct lake_select) misses a column of its table, selects one the table
 * lacks, skips one it selects or without a reason, or fills a member of its struct (size bytes) twice; "" when
 * none.
 */
static void select_covered(const struct lake_select *sel, size_t size, char *why, size_t len)
{
	const struct lake_table *t = lake_table(sel->table);
	uint8_t filled[1024] = { 0 };

	*why = 0;
	if (!t || size > sizeof(filled)) {
		snprintf(why, len, "%s: no such table, or a struct of %zu bytes", sel->table, size);
		return;
	}
	for (unsigned j = 0; j < sel->nfields && !*why; j++) {
		const struct lake_select_field *f = &sel->fields[j];
		size_t n[] = { [LS_I64] = sizeof(int64_t), [LS_INT] = sizeof(struct store_int),
			       [LS_TEXT] = sizeof(char *), [LS_CHARS] = f->len, [LS_FLAG] = sizeof(bool),
			       [LS_REAL] = sizeof(double), [LS_JOINED] = sizeof(char *), [LS_JSON] = sizeof(char *) };
		size_t n2 = f->kind == LS_REAL ? sizeof(bool) : f->kind == LS_JOINED ? sizeof(char *) : 0;
		bool known = false;

		for (unsigned i = 0; i < t->ncols; i++)
			known |= !t->cols[i].until && !strcmp(t->cols[i].name, f->column);
		if (!f->expr && !known)
			snprintf(why, len, "%s: no column %s (a read selects it)", t->name, f->column);
		else if (f->kind > LS_JSON || !n[f->kind] || f->off + n[f->kind] > size || f->off2 + n2 > size)
			snprintf(why, len, "%s: %s into no member of the struct", t->name, f->column);
		for (size_t b = f->off; !*why && b < f->off + n[f->kind]; b++)
			if (filled[b]++)
				snprintf(why, len, "%s: %s into a member another column fills", t->name, f->column);
		for (size_t b = f->off2; !*why && b < f->off2 + n2; b++)
			if (filled[b]++)
				snprintf(why, len, "%s: %s into a member another column fills", t->name, f->column);
	}
	for (unsigned i = 0; i < t->ncols && !*why; i++) {
		const struct lake_column *k = &t->cols[i];
		unsigned found = 0;

		if (k->until)
			continue;
		for (unsigned j = 0; j < sel->nfields; j++)
			found += (!sel->fields[j].expr && !strcmp(sel->fields[j].column, k->name)) ||
				 (sel->fields[j].of && !strcmp(sel->fields[j].of, k->name));
		for (unsigned j = 0; j < sel->nskip; j++)
			if (!strcmp(sel->skip[j].member, k->name))
				found += sel->skip[j].why && *sel->skip[j].why ? 1 : 2;
		if (found != 1)
			snprintf(why, len, "%s.%s: read %u times (a select or a skip with its reason, once)", t->name,
				 k->name, found);
	}
}

/*
 * A run's, a step's and a process's reads (lake_run_select, lake_step_select, lake_process_select): every
 * column of runs, steps and processes is read into store_run, store_step and store_process or skipped with the
 * reason, no member filled twice; and a column left out, one the
 * table lacks, a skip without a reason and a member filled twice are each found.
 */
static void every_column_of_runs_steps_and_processes_is_read_or_skipped_with_why(void **state)
{
	static const struct lake_select_field twice[] = {
		{ .column = "run_id", .kind = LS_I64, .off = offsetof(struct store_step, idx) },
		{ .column = "idx", .kind = LS_I64, .off = offsetof(struct store_step, idx) },
	};
	static const struct lake_member_skip no_reason[] = { { "run_id", "" } };
	struct lake_select bad = lake_step_select;
	char why[256];

	(void)state;
	select_covered(&lake_run_select, sizeof(struct store_run), why, sizeof(why));
	if (*why)
		fail_msg("%s", why);
	select_covered(&lake_step_select, sizeof(struct store_step), why, sizeof(why));
	if (*why)
		fail_msg("%s", why);
	select_covered(&lake_process_select, sizeof(struct store_process), why, sizeof(why));
	if (*why)
		fail_msg("%s", why);
	bad.nfields -= 5; /* memory_limit_bytes left out (and the four expressions of a joined job's after it) */
	select_covered(&bad, sizeof(struct store_step), why, sizeof(why));
	assert_string_equal(why, "steps.memory_limit_bytes: read 0 times (a select or a skip with its reason, once)");
	bad = lake_run_select; /* a run's read of the steps: columns steps lacks */
	bad.table = "steps";
	select_covered(&bad, sizeof(struct store_run), why, sizeof(why));
	assert_string_equal(why, "steps: no column host_id (a read selects it)");
	bad = (struct lake_select){ .table = "steps", .fields = twice, .nfields = 2 };
	select_covered(&bad, sizeof(struct store_step), why, sizeof(why));
	assert_string_equal(why, "steps: idx into a member another column fills");
	bad.nfields = 1;
	bad.skip = no_reason;
	bad.nskip = 1;
	select_covered(&bad, sizeof(struct store_step), why, sizeof(why));
	assert_string_equal(why, "steps.run_id: read 3 times (a select or a skip with its reason, once)");
	bad.fields = lake_step_select.fields;
	bad.nfields = lake_step_select.nfields;
	select_covered(&bad, sizeof(struct store_step), why, sizeof(why));
	assert_string_equal(why, "steps.run_id: read 2 times (a select or a skip with its reason, once)");
	assert_non_null(strstr(lake_stmt_sql(ST_RUN_BY_ID), ", submitted_ns, " RUN_JOBS " FROM runs WHERE run_id = ?1"));
	assert_non_null(strstr(lake_stmt_sql(ST_RUN_STEPS_LIST), "SELECT idx, step_id, name, "));
	assert_non_null(strstr(lake_stmt_sql(ST_RUN_PROCS_LIST), "SELECT p.host_id, p.boot_id, p.tgid, "));
	assert_non_null(strstr(lake_stmt_sql(ST_RUN_PROCS_LIST), " FROM processes p LEFT JOIN cgroups c2 ON "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_schema_c_lacks_is_found_wherever_it_is_written),
		cmocka_unit_test(every_column_is_written_by_a_statement_and_every_written_column_exists),
		cmocka_unit_test(every_byte_of_a_record_is_a_columns_or_skipped_with_why),
		cmocka_unit_test(a_field_left_out_of_the_lake_is_found),
		cmocka_unit_test(every_member_of_a_host_record_is_a_heartbeats_column),
		cmocka_unit_test(an_upsert_filling_what_the_table_lacks_or_leaving_a_field_out_is_found),
		cmocka_unit_test(every_column_of_runs_steps_and_processes_is_read_or_skipped_with_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
