/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A lake opened read-only (tracer-web, the CLI) sorts in memory: its
 * connection has temp_store=MEMORY as the ingest's has, because tracer-web's
 * seccomp filter kills the process on an openat() that creates a file, and
 * SQLite spills a large sort (/metrics' grouping of every step, the
 * analysis' reads) to a temporary file otherwise (lake/store.c, configure()).
 * Read through the store's own connection: 2 is MEMORY, SQLite's default 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "db.h"
#include "tmpdir.h"

static int setup(void **state)
{
	return dir_make(state, "/tmp/test_lake_readonly.XXXXXX");
}

static int64_t temp_store_of(struct store *s)
{
	struct sql_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sql_prepare(s->db, "PRAGMA temp_store", false, &st), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	v = sql_col_i64(st, 0);
	sql_finalize(st);
	return v;
}

static void a_read_only_lake_sorts_in_memory(void **state)
{
	struct dir *d = *state;
	struct store *s = NULL;
	char path[96], err[512];

	snprintf(path, sizeof(path), "%s/lake.db", d->path);
	assert_int_equal(store_open(&s, path, false, err, sizeof(err)), STORE_OK);
	assert_int_equal(temp_store_of(s), 2);
	store_close(s);
	assert_int_equal(store_open(&s, path, true, err, sizeof(err)), STORE_OK);
	assert_int_equal(temp_store_of(s), 2);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_read_only_lake_sorts_in_memory, setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
