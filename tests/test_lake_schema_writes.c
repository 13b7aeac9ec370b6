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
 * UPDATE ... SET and of an upsert's DO UPDATE SET.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_schema_c_lacks_is_found_wherever_it_is_written),
		cmocka_unit_test(every_column_is_written_by_a_statement_and_every_written_column_exists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
