/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer export table (cli/cmd_export_table.c, issue 28), run in-process
 * on a lake made by hand (store_open for the schema, rows INSERTed with
 * sqlite3), its stdout captured in a file:
 *
 *   - every table has its documented columns, in order (a rename or a
 *     column moved fails here: they are a contract with notebooks);
 *   - CSV is RFC 4180 whatever the hosts wrote: a field with a comma,
 *     quote, CR or LF quoted, quotes doubled, every row as many fields as
 *     the header, bytes that are not UTF-8 as U+FFFD, NULL an empty field
 *     and an empty string "";
 *   - NDJSON: every line one object that the strict parser accepts, keys
 *     in the columns' order, integers as numbers, text as strings, NULL as
 *     null; a string reads the same as from the CSV;
 *   - the values: ids that join the tables, a process's CPU split as the
 *     report splits it, a cluster job's rows under the run it is joined
 *     to and the step it replaced left out;
 *   - --since keeps the runs that started in the window with their rows,
 *     and the samples taken in it;
 *   - a write that fails (a closed pipe, a full disk) is said, exit 1;
 *     a bad command line, exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cmd_export_table.h"
#include "cputime.h"
#include "json_parse.h"
#include "store.h"

#define SEC 1000000000LL
#define END ((const char *)NULL) /* run_on's last argument */
#define OLD 1700000000000000000LL /* 2023-11-14: a run long ago */
#define HOST "0123456789abcdef0123456789abcdef"
#define HOST2 "1123456789abcdef0123456789abcdef"
#define BOOT "fedcba9876543210fedcba9876543210"

/* ---- the columns, as docs/export.md lists them: name:type (i integer, t text, r real) ---- */

static const char *const runs_cols[] = {
	"run_id:i", "run_key:t", "host_id:t", "host_name:t", "pipeline:t", "pipeline_run_id:t", "run_name:t",
	"engine:t", "detected_by:t", "state:t", "command_json:t", "start_ns:i", "end_ns:i", "last_update_ns:i",
	"exit_code:i", "signal:i", "root_pid:i", "uid:i", "processes:i", "steps:i", "signals:i", "jobs:i", "cpu_ns:i",
	"read_bytes:i", "write_bytes:i", "rchar_bytes:i", "wchar_bytes:i", "net_tx_bytes:i", "net_rx_bytes:i",
	"slurm_job_id:t", "aws_batch_job_id:t", "host_cloud:t", "host_instance_type:t", "host_instance_id:t",
	"host_region:t", "host_cpus:i", "host_memory_bytes:i", "host_price_per_hour_usd:r", NULL,
};
static const char *const steps_cols[] = {
	"run_id:i", "step_id:t", "step_idx:i", "name:t", "state:t", "engine:t", "rule:t", "workdir:t", "tools_json:t",
	"start_ns:i", "end_ns:i", "last_update_ns:i", "exit_code:i", "signal:i", "failed:i", "processes:i",
	"running:i", "failed_processes:i", "nonzero_exits:i", "oom_killed:i", "cpu_ns:i", "peak_rss_bytes:i",
	"peak_rss_partial:i", "rss_sum_of_peaks_bytes:i", "memcg_peak_bytes:i", "read_bytes:i", "write_bytes:i",
	"rchar_bytes:i", "wchar_bytes:i", "net_tx_bytes:i", "net_rx_bytes:i", "cpu_limit_millicores:i",
	"memory_limit_bytes:i", "job_id:t", "job_host:t", "job_submitted_ns:i", "job_queue_wait_ns:i", NULL,
};
static const char *const processes_cols[] = {
	"run_id:i", "step_id:t", "host_id:t", "boot_id:t", "pid:i", "start_mono_ns:i", "ppid:i", "start_ns:i",
	"end_ns:i", "exe:t", "cwd:t", "tool:t", "argv_json:t", "exit_code:i", "signal:i", "core_dumped:i",
	"oom_killed:i", "cpu_user_ns:i", "cpu_sys_ns:i", "peak_rss_bytes:i", "peak_rss_source:t", "read_bytes:i",
	"write_bytes:i", "rchar_bytes:i", "wchar_bytes:i", "net_tx_bytes:i", "net_rx_bytes:i", "cgroup:t", NULL,
};
static const char *const signals_cols[] = {
	"run_id:i", "signal_id:i", "kind:t", "source:t", "host_id:t", "boot_id:t", "pid:i", "start_mono_ns:i",
	"step_id:t", "tool:t", "detail_json:t", NULL,
};
static const char *const samples_cols[] = {
	"run_id:i", "host_id:t", "boot_id:t", "pid:i", "start_mono_ns:i", "ts_ns:i", "cpu_ns:i", "utime_ns:i",
	"stime_ns:i", "rss_bytes:i", "hiwater_rss_bytes:i", "read_bytes:i", "write_bytes:i", "rchar_bytes:i",
	"wchar_bytes:i", "net_tx_bytes:i", "net_rx_bytes:i", "iowait_ns:i", "blocked_ns:i", "run_delay_ns:i",
	"threads:i", NULL,
};

static const struct {
	const char *name;
	const char *const *cols;
} tables[] = {
	{ "runs", runs_cols }, { "steps", steps_cols }, { "processes", processes_cols }, { "signals", signals_cols },
	{ "samples", samples_cols },
};

static unsigned ncols(const char *const *cols)
{
	unsigned n = 0;

	while (cols[n])
		n++;
	return n;
}

/* ---- the lake ---------------------------------------------------------------------- */

struct fx {
	char dir[64], db[96], out[96];
	int64_t recent; /* run 2's start: an hour ago */
	char *text;     /* the latest export's output */
	size_t len;
};

/*
 * Run 1 (2023): two steps, two processes (one with hostile strings, one not exited), a signal, samples.
 * Run 2 (an hour ago): its sbatch step sb1 submitted cluster job run 4 (joined to 2, replacing sb1); a
 * process and a signal of each. Run 3: no start. A kernel record's signal (no run) and a sample of a
 * process with no row (no run, no real time). The hostile string: a comma, quotes, LF, CR, a control
 * character, and a byte that is no UTF-8 (0xff).
 */
#define HOSTILE "CAST(X'706970652c226c696e65220a6e6578740d01ff' AS TEXT)" /* pipe,"line"\nnext\r\x01\xff */
static const char fill_sql[] =
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, pipeline_run_id, engine, "
	"state, detected_by, command, start_ns, end_ns, exit_code, processes, steps, signals, cpu_ns, host_cloud, "
	"host_cpus, host_memory_bytes, host_price_per_hour, uid, host_name) VALUES "
	"(1, '" HOST "', '" BOOT "', 1, 'h1', 'k1', " HOSTILE ", 'pr-1', 'snakemake', 'failed', 'snakemake', "
	"'[\"snakemake\",\"--cores\",\"2\"]', 1700000000000000000, 1700000100000000000, 1, 2, 2, 1, 5000000000, "
	"'aws', 4, 17179869184, 0.192, 1000, ''), "
	"(2, '" HOST "', '" BOOT "', 2, 'h2', 'k2', 'recent', 'pr-2', 'snakemake', 'succeeded', 'snakemake', NULL, "
	"?1, ?1 + 60000000000, 0, 1, 2, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
	"(3, '" HOST "', '" BOOT "', 3, 'h3', 'k3', 'nostart', NULL, NULL, 'lost', 'snakemake', NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);\n"
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, state, start_ns, joined_run_id, "
	"joined_step_id, submitted_ns, slurm_job_id, host_name) VALUES "
	"(4, '" HOST2 "', '" BOOT "', 4, 'h4', 'k4', 'succeeded', ?1 + 10000000000, 2, 'sb1', ?1 + 4000000000, "
	"'77', 'node7');\n"
	"INSERT INTO steps (run_id, idx, step_id, name, tools, start_ns, end_ns, failed, processes, cpu_ns, "
	"peak_rss_bytes, state) VALUES "
	"(1, 0, 'a', 'align', '[\"bwa\",\"samtools\"]', 1700000001000000000, 1700000050000000000, 1, 2, 4000000000, "
	"104857600, 'failed'), "
	"(1, 1, 'b', 'two' || char(10) || 'lines', '[]', NULL, NULL, 0, 0, NULL, NULL, NULL), "
	"(2, 0, 'sb1', 'submit', '[\"sbatch\"]', ?1, ?1 + 5000000000, 0, 1, 1000000, 2000000, 'succeeded'), "
	"(2, 1, 'x', 'sort', '[]', ?1 + 1000000000, ?1 + 2000000000, 0, 1, 3000000, 4000000, 'succeeded'), "
	"(4, 0, 'j', 'job', '[]', ?1 + 10000000000, ?1 + 20000000000, 0, 1, 5000000, 6000000, 'succeeded');\n"
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, ppid, exe, argv, cwd, "
	"exit_ts_ns, exit_code, signal, core_dumped, utime_ns, stime_ns, runtime_ns, peak_rss_bytes, read_bytes, "
	"write_bytes, rchar, wchar, run_id, step, tool) VALUES "
	"('" HOST "', '" BOOT "', 100, 5000, 1700000001000000000, 1700000040000000000, 1, '/bin/a,b\"c', "
	"'[\"a\",\"b,c\",\"\\u0001\"]', CAST(X'2f746d702fff' AS TEXT), 40000, 0, 0, 0, 3000, 1000, 4000000000, "
	"52428800, 10, 20, 30, 40, 1, 'a', 'bwa'), "
	"('" HOST "', '" BOOT "', 101, 6000, 1700000002000000000, NULL, 100, '/usr/bin/samtools', '[\"samtools\"]', "
	"'a' || char(13) || 'b', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'a', "
	"'samtools'), "
	"('" HOST "', '" BOOT "', 200, 7000, ?1 + 1000000000, ?1 + 2000000000, 1, '/usr/bin/sort', '[\"sort\"]', "
	"'/w', 8000, 0, 0, 0, 1, 1, 2000000, 1000000, 0, 0, 0, 0, 2, 'x', 'sort'), "
	"('" HOST2 "', '" BOOT "', 300, 9000, ?1 + 11000000000, ?1 + 19000000000, 1, '/usr/bin/job', '[\"job\"]', "
	"'/w', 10000, 0, 0, 0, 1, 0, 5000000, 6000000, 0, 0, 0, 0, 4, 'j', 'job');\n"
	"INSERT INTO signals (host_id, boot_id, seq, run_id, source, kind, pid, start_ns, step, tool, detail) VALUES "
	"('" HOST "', '" BOOT "', 10, 1, 'live', 'oom_kill', 100, 5000, 'a', 'bwa', "
	"'{\"kind\":\"oom_kill\",\"x\":\"a,b\"}'), "
	"('" HOST "', '" BOOT "', 11, NULL, 'record', 'killed', 100, 5000, NULL, NULL, NULL), "
	"('" HOST "', '" BOOT "', 12, 2, 'live', 'failed', 200, 7000, 'x', 'sort', NULL), "
	"('" HOST2 "', '" BOOT "', 13, 4, 'live', 'stalled', 300, 9000, 'j', 'job', NULL);\n"
	"INSERT INTO samples (host_id, stream, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, rss_bytes, "
	"received_ns) VALUES ('" HOST "', 0, 20, '" BOOT "', 100, 5000, 1005000, 1000, 2048, 0), "
	"('" HOST "', 0, 21, '" BOOT "', 200, 7000, 1000007000, 5, 4096, 0), "
	"('" HOST "', 0, 22, '" BOOT "', 999, 1, 2, 3, 4, 0);\n";

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

/* f's lake: the schema (store_open), then fill_sql with ?1 = run 2's start. 0 or -1. */
static int make_lake(struct fx *f)
{
	struct store *st = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	const char *tail = fill_sql;
	char err[256];
	int rc = 0;

	if (store_open(&st, f->db, false, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	store_close(st);
	if (sqlite3_open(f->db, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	while (!rc && *tail) {
		rc = sqlite3_prepare_v2(db, tail, -1, &q, &tail);
		if (!rc && q) {
			if (sqlite3_bind_parameter_count(q))
				sqlite3_bind_int64(q, 1, f->recent);
			rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
			sqlite3_finalize(q);
		}
		while (*tail == '\n')
			tail++;
	}
	if (rc)
		fprintf(stderr, "fill: %s\n", sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc ? -1 : 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_cli_export.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof(f->db), "%s/lake.db", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	f->recent = now_ns() - 3600 * SEC;
	if (make_lake(f)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	free(f->text);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* ---- running it ---------------------------------------------------------------------- */

/* tracer export table ARGS... with stdout on fd; its exit status. */
static int run_on(int fd, const char *first, ...)
{
	static char table[] = "table";
	char *argv[16] = { table };
	int argc = 1, saved, rc;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)(uintptr_t)a;
	va_end(ap);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	rc = cmd_export_table(argc, argv);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	return rc;
}

/* Export table in format (csv, ndjson), with --since since if not NULL, into f->text; asserts exit 0. */
static void export(struct fx *f, const char *table, const char *format, const char *since)
{
	int fd = open(f->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *in;
	long n;

	assert_true(fd >= 0);
	if (since)
		assert_int_equal(run_on(fd, "--db", f->db, table, "--format", format, "--since", since, END), 0);
	else
		assert_int_equal(run_on(fd, "--db", f->db, table, "--format", format, END), 0);
	close(fd);
	in = fopen(f->out, "rb");
	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	n = ftell(in);
	rewind(in);
	free(f->text);
	f->text = malloc((size_t)n + 1);
	assert_non_null(f->text);
	assert_int_equal(fread(f->text, 1, (size_t)n, in), (size_t)n);
	f->text[n] = 0;
	f->len = (size_t)n;
	fclose(in);
}

/* ---- reading CSV back (RFC 4180), strictly ------------------------------------------ */

#define MAX_FIELDS 64
#define MAX_ROWS 16

struct csv_field {
	char *v;     /* unquoted, quotes undoubled */
	bool quoted;
};

struct csv {
	struct csv_field f[MAX_ROWS][MAX_FIELDS];
	unsigned nf[MAX_ROWS];
	unsigned rows;
};

/* Every record ends with CRLF; a bare CR or LF, or a quote, only inside quotes. Fails the test otherwise. */
static void csv_parse(const char *t, size_t len, struct csv *c)
{
	size_t i = 0;

	memset(c, 0, sizeof(*c));
	while (i < len) {
		unsigned r = c->rows++;

		assert_true(r < MAX_ROWS);
		for (;;) {
			struct csv_field *fl = &c->f[r][c->nf[r]++];
			size_t cap = len + 1, n = 0;

			assert_true(c->nf[r] <= MAX_FIELDS);
			fl->v = calloc(1, cap);
			assert_non_null(fl->v);
			if (t[i] == '"') {
				fl->quoted = true;
				for (i++;; i++) {
					assert_true(i < len);
					if (t[i] == '"' && i + 1 < len && t[i + 1] == '"')
						fl->v[n++] = t[i++];
					else if (t[i] == '"')
						break;
					else
						fl->v[n++] = t[i];
				}
				i++;
			} else {
				for (; i < len && t[i] != ',' && t[i] != '\r'; i++) {
					assert_true(t[i] != '"' && t[i] != '\n');
					fl->v[n++] = t[i];
				}
			}
			assert_true(i < len);
			if (t[i] == ',') {
				i++;
				continue;
			}
			assert_true(t[i] == '\r' && i + 1 < len && t[i + 1] == '\n');
			i += 2;
			break;
		}
	}
}

static void csv_free(struct csv *c)
{
	for (unsigned r = 0; r < c->rows; r++)
		for (unsigned k = 0; k < c->nf[r]; k++)
			free(c->f[r][k].v);
}

/* The field of column name in row r (the header is row 0). */
static const struct csv_field *csv_get(const struct csv *c, unsigned r, const char *name)
{
	for (unsigned k = 0; k < c->nf[0]; k++)
		if (!strcmp(c->f[0][k].v, name))
			return &c->f[r][k];
	fail_msg("no column %s", name);
	return NULL;
}

/* The row whose column name reads value (its number), failing when none. */
static unsigned csv_row(const struct csv *c, const char *name, const char *value)
{
	for (unsigned r = 1; r < c->rows; r++)
		if (!strcmp(csv_get(c, r, name)->v, value))
			return r;
	fail_msg("no row with %s = %s", name, value);
	return 0;
}

/* ---- the tests ------------------------------------------------------------------------- */

static void every_table_has_its_documented_columns_in_order(void **state)
{
	struct fx *f = *state;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		char header[2048] = "";

		for (unsigned k = 0; tables[t].cols[k]; k++) {
			size_t n = strlen(header);

			snprintf(header + n, sizeof(header) - n, "%s%.*s", k ? "," : "",
				 (int)(strchr(tables[t].cols[k], ':') - tables[t].cols[k]), tables[t].cols[k]);
		}
		strcat(header, "\r\n");
		export(f, tables[t].name, "csv", NULL);
		assert_true(f->len >= strlen(header));
		if (memcmp(f->text, header, strlen(header)))
			fail_msg("%s: header\n%.*s\nwanted\n%s", tables[t].name, (int)strlen(header), f->text, header);
	}
}

static void csv_quotes_hostile_strings_and_every_row_has_every_field(void **state)
{
	struct fx *f = *state;
	struct csv c;
	unsigned r;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		export(f, tables[t].name, "csv", NULL);
		csv_parse(f->text, f->len, &c);
		for (unsigned k = 1; k < c.rows; k++)
			assert_int_equal(c.nf[k], ncols(tables[t].cols));
		csv_free(&c);
	}
	/* the bytes as written: quoted, quotes doubled, CR and LF kept inside, 0xff as U+FFFD */
	export(f, "runs", "csv", NULL);
	assert_non_null(strstr(f->text, ",\"pipe,\"\"line\"\"\nnext\r\x01\xef\xbf\xbd\","));
	csv_parse(f->text, f->len, &c);
	r = csv_row(&c, "run_id", "1");
	assert_string_equal(csv_get(&c, r, "pipeline")->v, "pipe,\"line\"\nnext\r\x01\xef\xbf\xbd");
	assert_string_equal(csv_get(&c, r, "command_json")->v, "[\"snakemake\",\"--cores\",\"2\"]");
	assert_true(csv_get(&c, r, "host_name")->quoted); /* an empty string: "" */
	assert_string_equal(csv_get(&c, r, "host_name")->v, "");
	assert_string_equal(csv_get(&c, r, "host_price_per_hour_usd")->v, "0.192");
	r = csv_row(&c, "run_id", "3");
	assert_false(csv_get(&c, r, "start_ns")->quoted); /* NULL: an empty field */
	assert_string_equal(csv_get(&c, r, "start_ns")->v, "");
	assert_string_equal(csv_get(&c, r, "pipeline_run_id")->v, "");
	assert_false(csv_get(&c, r, "pipeline_run_id")->quoted);
	csv_free(&c);

	export(f, "processes", "csv", NULL);
	csv_parse(f->text, f->len, &c);
	r = csv_row(&c, "pid", "100");
	assert_string_equal(csv_get(&c, r, "exe")->v, "/bin/a,b\"c");
	assert_string_equal(csv_get(&c, r, "cwd")->v, "/tmp/\xef\xbf\xbd");
	assert_string_equal(csv_get(&c, r, "argv_json")->v, "[\"a\",\"b,c\",\"\\u0001\"]");
	r = csv_row(&c, "pid", "101"); /* a CR alone: quoted too */
	assert_string_equal(csv_get(&c, r, "cwd")->v, "a\rb");
	assert_true(csv_get(&c, r, "cwd")->quoted);
	csv_free(&c);
	export(f, "steps", "csv", NULL); /* a LF alone */
	csv_parse(f->text, f->len, &c);
	r = csv_row(&c, "step_id", "b");
	assert_string_equal(csv_get(&c, r, "name")->v, "two\nlines");
	assert_true(csv_get(&c, r, "name")->quoted);
	csv_free(&c);
}

/* Each line of f->text one JSON object with exactly the columns, in order, each of its type or null. */
static void check_ndjson(const struct fx *f, const char *const *cols, unsigned *lines)
{
	static struct json_node nodes[4096];
	const char *p = f->text, *end = f->text + f->len;

	*lines = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct json_doc d;
		const struct json_node *m;
		unsigned k = 0;

		assert_non_null(nl); /* the last line ends too */
		if (json_parse(&d, p, (size_t)(nl - p), nodes, 4096))
			fail_msg("line %u: %s at %zu: %.*s", *lines + 1, json_parse_error_name(d.err), d.err_at,
				 (int)(nl - p), p);
		assert_int_equal(d.nodes[0].type, JSON_OBJECT);
		for (uint32_t i = d.nodes[0].first; i; i = d.nodes[i].next, k++) {
			const char *want = cols[k];
			size_t n = strchr(want, ':') - want;
			char type = want[n + 1];

			m = &d.nodes[i];
			assert_non_null(want);
			assert_int_equal(m->key_len, n);
			assert_memory_equal(d.text + m->key_start, want, n);
			if (m->type == JSON_NULL)
				continue;
			if (type == 't')
				assert_int_equal(m->type, JSON_STRING);
			else
				assert_int_equal(m->type, JSON_NUMBER);
			if (type == 'i')
				assert_true(m->number == JSON_NUM_U64 || m->number == JSON_NUM_NEG);
		}
		assert_int_equal(k, ncols(cols));
		(*lines)++;
		p = nl + 1;
	}
}

/* The string member name of the NDJSON line holding `key`, decoded, into buf. */
static void ndjson_string(const struct fx *f, const char *key, const char *name, char *buf, size_t cap)
{
	static struct json_node nodes[4096];
	const char *line = strstr(f->text, key), *start, *nl;
	struct json_doc d;
	size_t len;

	assert_non_null(line);
	for (start = line; start > f->text && start[-1] != '\n'; start--)
		;
	nl = strchr(line, '\n');
	assert_int_equal(json_parse(&d, start, (size_t)(nl - start), nodes, 4096), 0);
	assert_int_equal(json_get_string(&d, json_member(&d, &d.nodes[0], name), buf, cap, &len), 0);
}

static void ndjson_is_strict_json_of_the_columns_types(void **state)
{
	struct fx *f = *state;
	unsigned lines, rows[] = { 4, 4, 4, 3, 3 }; /* runs 1-3 and 4 is a joined job: 3 runs; see below */
	char s[128];

	rows[0] = 3;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		export(f, tables[t].name, "ndjson", NULL);
		check_ndjson(f, tables[t].cols, &lines);
		assert_int_equal(lines, rows[t]);
	}
	/* a string reads the same as from the CSV: U+FFFD for the byte that is no UTF-8, controls escaped */
	export(f, "runs", "ndjson", NULL);
	assert_non_null(strstr(f->text, "\"pipeline\":\"pipe,\\\"line\\\"\\u000anext\\u000d\\u0001\xef\xbf\xbd\""));
	ndjson_string(f, "\"run_id\":1,", "pipeline", s, sizeof(s));
	assert_string_equal(s, "pipe,\"line\"\nnext\r\x01\xef\xbf\xbd");
	assert_non_null(strstr(f->text, "\"run_id\":3,"));
	assert_non_null(strstr(f->text, "\"run_key\":\"k3\",\"host_id\":\"" HOST "\",\"host_name\":null"));
	assert_non_null(strstr(f->text, "\"host_price_per_hour_usd\":0.192}"));
	export(f, "processes", "ndjson", NULL);
	ndjson_string(f, "\"pid\":100,", "argv_json", s, sizeof(s));
	assert_string_equal(s, "[\"a\",\"b,c\",\"\\u0001\"]");
}

static void rows_join_by_their_ids_and_say_what_the_report_says(void **state)
{
	struct fx *f = *state;
	uint64_t user, sys;
	struct csv c;
	unsigned r;
	char num[32];

	/* steps: run 2's sbatch step sb1 is replaced by the job's step, which is run 2's */
	export(f, "steps", "csv", NULL);
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 4);
	for (unsigned k = 1; k < c.rows; k++)
		assert_string_not_equal(csv_get(&c, k, "step_id")->v, "sb1");
	r = csv_row(&c, "step_id", "j");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "2");
	assert_string_equal(csv_get(&c, r, "job_id")->v, "77");
	assert_string_equal(csv_get(&c, r, "job_host")->v, "node7");
	snprintf(num, sizeof(num), "%lld", (long long)(f->recent + 4 * SEC));
	assert_string_equal(csv_get(&c, r, "job_submitted_ns")->v, num);
	assert_string_equal(csv_get(&c, r, "job_queue_wait_ns")->v, "6000000000");
	r = csv_row(&c, "step_id", "a");
	assert_string_equal(csv_get(&c, r, "tools_json")->v, "[\"bwa\",\"samtools\"]");
	assert_string_equal(csv_get(&c, r, "failed")->v, "1");
	assert_string_equal(csv_get(&c, r, "peak_rss_bytes")->v, "104857600");
	assert_string_equal(csv_get(&c, r, "job_queue_wait_ns")->v, "");
	csv_free(&c);

	/* processes: the job's under run 2; the CPU split as the report's; a live process's figures NULL */
	export(f, "processes", "csv", NULL);
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 4);
	r = csv_row(&c, "pid", "300");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "2");
	assert_string_equal(csv_get(&c, r, "host_id")->v, HOST2);
	r = csv_row(&c, "pid", "100");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "1");
	assert_string_equal(csv_get(&c, r, "step_id")->v, "a");
	assert_string_equal(csv_get(&c, r, "boot_id")->v, BOOT);
	assert_string_equal(csv_get(&c, r, "start_mono_ns")->v, "5000");
	assert_string_equal(csv_get(&c, r, "start_ns")->v, "1700000001000000000");
	cputime_adjust(3000, 1000, 4000000000, &user, &sys);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)user);
	assert_string_equal(csv_get(&c, r, "cpu_user_ns")->v, num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)sys);
	assert_string_equal(csv_get(&c, r, "cpu_sys_ns")->v, num);
	assert_string_equal(csv_get(&c, r, "peak_rss_bytes")->v, "52428800");
	assert_string_equal(csv_get(&c, r, "peak_rss_source")->v, "exit");
	assert_string_equal(csv_get(&c, r, "rchar_bytes")->v, "30");
	r = csv_row(&c, "pid", "101");
	assert_string_equal(csv_get(&c, r, "end_ns")->v, "");
	assert_string_equal(csv_get(&c, r, "exit_code")->v, "");
	assert_string_equal(csv_get(&c, r, "cpu_user_ns")->v, "");
	assert_string_equal(csv_get(&c, r, "read_bytes")->v, ""); /* not exited: not accounted yet */
	assert_string_equal(csv_get(&c, r, "oom_killed")->v, "0");
	csv_free(&c);

	/* signals: the runs' only (not the kernel record's), the job's under run 2 */
	export(f, "signals", "csv", NULL);
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 3);
	r = csv_row(&c, "kind", "stalled");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "2");
	r = csv_row(&c, "kind", "oom_kill");
	assert_string_equal(csv_get(&c, r, "detail_json")->v, "{\"kind\":\"oom_kill\",\"x\":\"a,b\"}");
	assert_string_equal(csv_get(&c, r, "start_mono_ns")->v, "5000");
	csv_free(&c);

	/* samples: real time from the process's offset, its run; a process the lake has no row of: NULL both */
	export(f, "samples", "csv", NULL);
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 3);
	r = csv_row(&c, "pid", "100");
	assert_string_equal(csv_get(&c, r, "ts_ns")->v, "1700000001001000000");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "1");
	assert_string_equal(csv_get(&c, r, "cpu_ns")->v, "1000");
	r = csv_row(&c, "pid", "999");
	assert_string_equal(csv_get(&c, r, "ts_ns")->v, "");
	assert_string_equal(csv_get(&c, r, "run_id")->v, "");
	csv_free(&c);
}

static void since_keeps_the_runs_of_the_window_with_their_rows(void **state)
{
	struct fx *f = *state;
	struct csv c;
	unsigned r;
	char num[32];

	export(f, "runs", "csv", "1d");
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 1); /* run 2: not run 1 (2023), nor run 3 (no start), nor job 4 (joined) */
	assert_string_equal(csv_get(&c, 1, "run_id")->v, "2");
	assert_string_equal(csv_get(&c, 1, "jobs")->v, "1");
	csv_free(&c);
	export(f, "runs", "csv", "30m"); /* run 2 started an hour ago */
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1);
	csv_free(&c);

	export(f, "steps", "csv", "2h");
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 2); /* x, and the job's j */
	for (unsigned k = 1; k < c.rows; k++)
		assert_string_equal(csv_get(&c, k, "run_id")->v, "2");
	csv_free(&c);

	export(f, "processes", "ndjson", "2h");
	assert_null(strstr(f->text, "\"run_id\":1,"));
	assert_non_null(strstr(f->text, "\"pid\":200,"));
	assert_non_null(strstr(f->text, "\"pid\":300,"));

	export(f, "signals", "csv", "2h");
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 2);
	csv_free(&c);

	export(f, "samples", "csv", "2h"); /* taken in the window: process 200's only */
	csv_parse(f->text, f->len, &c);
	assert_int_equal(c.rows, 1 + 1);
	r = csv_row(&c, "pid", "200");
	snprintf(num, sizeof(num), "%lld", (long long)(f->recent + 1000000000 + 1000000000 - 7000 + 7000));
	assert_string_equal(csv_get(&c, r, "ts_ns")->v, num);
	csv_free(&c);
}

static void a_write_that_fails_is_said_and_exits_1(void **state)
{
	struct fx *f = *state;
	int p[2], full = open("/dev/full", O_WRONLY | O_CLOEXEC);

	/* a reader gone: EPIPE, not a silent death by SIGPIPE */
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(run_on(p[1], "--db", f->db, "runs", END), 1);
	close(p[1]);
	/* a full disk */
	assert_true(full >= 0);
	assert_int_equal(run_on(full, "--db", f->db, "processes", "--format", "ndjson", END), 1);
	close(full);
	signal(SIGPIPE, SIG_DFL);
}

static void a_bad_command_line_exits_2(void **state)
{
	struct fx *f = *state;
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	assert_true(null >= 0);
	assert_int_equal(run_on(null, "runs", END), 2);                                        /* no --db */
	assert_int_equal(run_on(null, "--db", f->db, END), 2);                                 /* no table */
	assert_int_equal(run_on(null, "--db", f->db, "files", END), 2);                        /* no such table */
	assert_int_equal(run_on(null, "--db", f->db, "runs", "steps", END), 2);                /* two */
	assert_int_equal(run_on(null, "--db", f->db, "runs", "--format", "xlsx", END), 2);
	assert_int_equal(run_on(null, "--db", f->db, "runs", "--since", "yesterday", END), 2);
	assert_int_equal(run_on(null, "--db", f->db, "runs", "--since", "0d", END), 2);
	/* and a lake that is not there: exit 1 */
	assert_int_equal(run_on(null, "--db", "/nonexistent/lake.db", "runs", END), 1);
	close(null);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_table_has_its_documented_columns_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(csv_quotes_hostile_strings_and_every_row_has_every_field, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ndjson_is_strict_json_of_the_columns_types, setup, teardown),
		cmocka_unit_test_setup_teardown(rows_join_by_their_ids_and_say_what_the_report_says, setup, teardown),
		cmocka_unit_test_setup_teardown(since_keeps_the_runs_of_the_window_with_their_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(a_write_that_fails_is_said_and_exits_1, setup, teardown),
		cmocka_unit_test_setup_teardown(a_bad_command_line_exits_2, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
