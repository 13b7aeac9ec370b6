/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer export table: one table of the lake as plain data a notebook
 * loads directly (pandas.read_csv, pandas.read_json(lines=True), duckdb),
 * with stable columns (issue 28; docs/export.md lists them).
 *
 *   tracer export table --db LAKE {runs|steps|processes|signals|samples}
 *                       [--since DURATION] [--format csv|ndjson]
 *
 * Each row is written as the lake's read hands it over (lake/read_export.c:
 * one streamed statement per table), through one fixed buffer to stdout:
 * nothing grows with the lake. The conventions, the same in both formats:
 *
 *   - times are integers, nanoseconds since the Unix epoch (UTC), in
 *     columns named *_ns; durations are *_ns too; the processes' key
 *     start (start_mono_ns) is the host's CLOCK_MONOTONIC of its boot;
 *   - sizes are *_bytes; flags are 0 or 1; the one real number (a host's
 *     price) is printed with 15 significant digits, 17 where 15 would not
 *     read back as the same double;
 *   - unknown (NULL) is an empty CSV field, JSON null; an empty string is
 *     "" in CSV;
 *   - CSV: RFC 4180: a header row, CRLF after each row, a field holding a
 *     comma, a quote, CR or LF quoted, quotes doubled; NDJSON: one object
 *     a line, keys in the columns' order, integers as numbers;
 *   - strings came from hosts and are hostile: both formats write valid
 *     UTF-8, each byte that is not part of a well-formed sequence as
 *     U+FFFD (records/json.h's rule), so that a string reads the same from
 *     either; JSON escapes control characters, CSV keeps them inside its
 *     quoting;
 *   - the lake's JSON (a run's command, a step's tools, a process's argv,
 *     a signal's object) is one string column, *_json, holding that JSON.
 *
 * A write that fails (a closed pipe, a full disk) ends the export with a
 * message and exit 1: SIGPIPE is ignored so that the write says EPIPE.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_export_table.h"
#include "cputime.h"
#include "json.h"
#include "store.h"
#include "sweep_input.h"

#define OUT_BUF (256u << 10) /* stdout's buffer: written out each time it fills */

enum cell { CELL_INT, CELL_TEXT, CELL_REAL };

/* A column of an exported table: its name (the CSV header's, the NDJSON key) and what its values are. */
struct column {
	const char *name;
	enum cell type;
};

#define I(n) { n, CELL_INT }
#define T(n) { n, CELL_TEXT }
#define R(n) { n, CELL_REAL }

/* The columns, in order. Stable: add at the end, never rename (docs/export.md). */
static const struct column run_columns[] = {
	I("run_id"), T("run_key"), T("host_id"), T("host_name"), T("pipeline"), T("pipeline_run_id"), T("run_name"),
	T("engine"), T("detected_by"), T("state"), T("command_json"), I("start_ns"), I("end_ns"), I("last_update_ns"),
	I("exit_code"), I("signal"), I("root_pid"), I("uid"), I("processes"), I("steps"), I("signals"), I("jobs"),
	I("cpu_ns"), I("read_bytes"), I("write_bytes"), I("rchar_bytes"), I("wchar_bytes"), I("net_tx_bytes"),
	I("net_rx_bytes"), T("slurm_job_id"), T("aws_batch_job_id"), T("host_cloud"), T("host_instance_type"),
	T("host_instance_id"), T("host_region"), I("host_cpus"), I("host_memory_bytes"), R("host_price_per_hour_usd"),
};

static const struct column step_columns[] = {
	I("run_id"), T("step_id"), I("step_idx"), T("name"), T("state"), T("engine"), T("rule"), T("workdir"),
	T("tools_json"), I("start_ns"), I("end_ns"), I("last_update_ns"), I("exit_code"), I("signal"), I("failed"),
	I("processes"), I("running"), I("failed_processes"), I("nonzero_exits"), I("oom_killed"), I("cpu_ns"),
	I("peak_rss_bytes"), I("peak_rss_partial"), I("rss_sum_of_peaks_bytes"), I("memcg_peak_bytes"),
	I("read_bytes"), I("write_bytes"), I("rchar_bytes"), I("wchar_bytes"), I("net_tx_bytes"), I("net_rx_bytes"),
	I("cpu_limit_millicores"), I("memory_limit_bytes"), T("job_id"), T("job_host"), I("job_submitted_ns"),
	I("job_queue_wait_ns"),
};

static const struct column process_columns[] = {
	I("run_id"), T("step_id"), T("host_id"), T("boot_id"), I("pid"), I("start_mono_ns"), I("ppid"), I("start_ns"),
	I("end_ns"), T("exe"), T("cwd"), T("tool"), T("argv_json"), I("exit_code"), I("signal"), I("core_dumped"),
	I("oom_killed"), I("cpu_user_ns"), I("cpu_sys_ns"), I("peak_rss_bytes"), T("peak_rss_source"),
	I("read_bytes"), I("write_bytes"), I("rchar_bytes"), I("wchar_bytes"), I("net_tx_bytes"), I("net_rx_bytes"),
	T("cgroup"),
};

static const struct column signal_columns[] = {
	I("run_id"), I("signal_id"), T("kind"), T("source"), T("host_id"), T("boot_id"), I("pid"), I("start_mono_ns"),
	T("step_id"), T("tool"), T("detail_json"),
};

static const struct column sample_columns[] = {
	I("run_id"), T("host_id"), T("boot_id"), I("pid"), I("start_mono_ns"), I("ts_ns"), I("cpu_ns"),
	I("utime_ns"), I("stime_ns"), I("rss_bytes"), I("hiwater_rss_bytes"), I("read_bytes"), I("write_bytes"),
	I("rchar_bytes"), I("wchar_bytes"), I("net_tx_bytes"), I("net_rx_bytes"), I("iowait_ns"), I("blocked_ns"),
	I("run_delay_ns"), I("threads"),
};

#undef I
#undef T
#undef R

enum table { TABLE_RUNS, TABLE_STEPS, TABLE_PROCESSES, TABLE_SIGNALS, TABLE_SAMPLES, TABLE_COUNT };

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
	const char *name;
	const struct column *cols;
	unsigned ncols;
} tables[TABLE_COUNT] = {
	[TABLE_RUNS] = { "runs", run_columns, N(run_columns) },
	[TABLE_STEPS] = { "steps", step_columns, N(step_columns) },
	[TABLE_PROCESSES] = { "processes", process_columns, N(process_columns) },
	[TABLE_SIGNALS] = { "signals", signal_columns, N(signal_columns) },
	[TABLE_SAMPLES] = { "samples", sample_columns, N(sample_columns) },
};

/* ---- the writer ------------------------------------------------------------- */

/* A row in progress, to stdout through one buffer. */
struct table_out {
	struct obuf o;
	struct json j;
	bool csv;
	const struct column *cols;
	unsigned ncols, next; /* the next cell's column */
	uint64_t rows;
	char buf[OUT_BUF];
};

/* Stops a walk when stdout refused a write (the lake's errors are negative). */
#define EXPORT_WRITE_FAILED 1

/*
 * A CSV field of text (RFC 4180): quoted when it holds a comma, a quote, CR or LF (and when empty, so that an
 * empty string differs from NULL), quotes doubled; a byte that starts no well-formed UTF-8 sequence is U+FFFD.
 */
static void csv_text(struct obuf *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), plain = 0;
	bool quote = n == 0, ascii = true;

	for (size_t i = 0; i < n; i++) {
		quote = quote || p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
		ascii = ascii && p[i] < 0x80 && p[i] != '"';
	}
	if (quote)
		obuf_putc(o, '"');
	if (ascii) { /* the common case: nothing to double or replace */
		obuf_put(o, s, n);
	} else {
		for (size_t i = 0; i < n;) {
			size_t k = json_utf8_len(p + i, n - i);

			if (k && p[i] != '"') { /* a character as it is: written with those before it */
				plain += k;
				i += k;
				continue;
			}
			obuf_put(o, s + i - plain, plain);
			plain = 0;
			obuf_put(o, k ? "\"\"" : "\xef\xbf\xbd", k ? 2 : 3);
			i++;
		}
		obuf_put(o, s + n - plain, plain);
	}
	if (quote)
		obuf_putc(o, '"');
}

static void row_begin(struct table_out *w)
{
	w->next = 0;
	if (!w->csv) {
		json_init(&w->j, &w->o); /* a new top-level value: no comma before it */
		json_object_begin(&w->j);
	}
}

/*
 * The next cell, which must be column name of type: a row that does not follow the table's columns is a
 * bug of this file, caught by any test that exports the table.
 */
static void cell_start(struct table_out *w, const char *name, enum cell type)
{
	if (w->next >= w->ncols || strcmp(w->cols[w->next].name, name) || w->cols[w->next].type != type) {
		fprintf(stderr, "tracer export table: column %u is not %s\n", w->next, name);
		abort();
	}
	if (w->csv && w->next)
		obuf_putc(&w->o, ',');
	else if (!w->csv)
		json_key(&w->j, name);
	w->next++;
}

static void cell_int(struct table_out *w, const char *name, struct store_int v)
{
	char num[24];

	cell_start(w, name, CELL_INT);
	if (!v.known) {
		if (!w->csv)
			json_null(&w->j);
		return;
	}
	snprintf(num, sizeof(num), "%" PRId64, v.v);
	if (w->csv)
		obuf_puts(&w->o, num);
	else
		json_i64(&w->j, v.v);
}

static void cell_i64(struct table_out *w, const char *name, int64_t v)
{
	cell_int(w, name, (struct store_int){ .known = true, .v = v });
}

/* A 0/1 flag from an integer column: 1 when not 0, NULL when unknown. */
static void cell_flag(struct table_out *w, const char *name, struct store_int v)
{
	cell_int(w, name, (struct store_int){ .known = v.known, .v = v.known && v.v != 0 });
}

static void cell_text(struct table_out *w, const char *name, const char *s)
{
	cell_start(w, name, CELL_TEXT);
	if (w->csv && s)
		csv_text(&w->o, s);
	else if (!w->csv)
		json_string(&w->j, s); /* NULL: null */
}

static void cell_real(struct table_out *w, const char *name, bool known, double v)
{
	char num[40];

	cell_start(w, name, CELL_REAL);
	known = known && isfinite(v);
	if (known) { /* the shortest of 15 or 17 significant digits that reads back as v */
		snprintf(num, sizeof(num), "%.15g", v);
		if (strtod(num, NULL) != v)
			snprintf(num, sizeof(num), "%.17g", v);
	}
	if (w->csv && known)
		obuf_puts(&w->o, num);
	else if (!w->csv && known)
		json_raw(&w->j, num, strlen(num));
	else if (!w->csv)
		json_null(&w->j);
}

/* The row ended: EXPORT_WRITE_FAILED once stdout refused a write (the walk stops), else 0. */
static int row_end(struct table_out *w)
{
	if (w->next != w->ncols) {
		fprintf(stderr, "tracer export table: a row of %u cells, not %u\n", w->next, w->ncols);
		abort();
	}
	if (w->csv) {
		obuf_put(&w->o, "\r\n", 2);
	} else {
		json_object_end(&w->j);
		obuf_putc(&w->o, '\n');
	}
	w->rows++;
	return w->o.err ? EXPORT_WRITE_FAILED : 0;
}

static void write_header(struct table_out *w)
{
	if (!w->csv)
		return;
	for (unsigned i = 0; i < w->ncols; i++) {
		if (i)
			obuf_putc(&w->o, ',');
		obuf_puts(&w->o, w->cols[i].name);
	}
	obuf_put(&w->o, "\r\n", 2);
}

/* ---- the tables' rows --------------------------------------------------------- */

static int write_run(void *ctx, const struct store_run *r)
{
	struct table_out *w = ctx;

	row_begin(w);
	cell_i64(w, "run_id", r->run_id);
	cell_text(w, "run_key", r->run_key);
	cell_text(w, "host_id", r->host_id);
	cell_text(w, "host_name", r->host_name);
	cell_text(w, "pipeline", r->pipeline);
	cell_text(w, "pipeline_run_id", r->pipeline_run_id);
	cell_text(w, "run_name", r->run_name);
	cell_text(w, "engine", r->engine);
	cell_text(w, "detected_by", r->detected_by);
	cell_text(w, "state", r->state);
	cell_text(w, "command_json", r->command_json);
	cell_int(w, "start_ns", r->start_ns);
	cell_int(w, "end_ns", r->end_ns);
	cell_int(w, "last_update_ns", r->last_update_ns);
	cell_int(w, "exit_code", r->exit_code);
	cell_int(w, "signal", r->signal);
	cell_int(w, "root_pid", r->root_pid);
	cell_int(w, "uid", r->uid);
	cell_int(w, "processes", r->processes);
	cell_int(w, "steps", r->steps);
	cell_int(w, "signals", r->signals);
	cell_int(w, "jobs", r->jobs);
	cell_int(w, "cpu_ns", r->cpu_ns);
	cell_int(w, "read_bytes", r->read_bytes);
	cell_int(w, "write_bytes", r->write_bytes);
	cell_int(w, "rchar_bytes", r->rchar);
	cell_int(w, "wchar_bytes", r->wchar);
	cell_int(w, "net_tx_bytes", r->net_tx_bytes);
	cell_int(w, "net_rx_bytes", r->net_rx_bytes);
	cell_text(w, "slurm_job_id", r->slurm_job_id);
	cell_text(w, "aws_batch_job_id", r->aws_batch_job_id);
	cell_text(w, "host_cloud", r->host_cloud);
	cell_text(w, "host_instance_type", r->host_instance_type);
	cell_text(w, "host_instance_id", r->host_instance_id);
	cell_text(w, "host_region", r->host_region);
	cell_int(w, "host_cpus", r->host_cpus);
	cell_int(w, "host_memory_bytes", r->host_memory_bytes);
	cell_real(w, "host_price_per_hour_usd", r->host_price_known, r->host_price_per_hour);
	return row_end(w);
}

static int write_step(void *ctx, int64_t run_id, const struct store_step *s)
{
	struct table_out *w = ctx;

	row_begin(w);
	cell_i64(w, "run_id", run_id);
	cell_text(w, "step_id", s->id);
	cell_i64(w, "step_idx", s->idx);
	cell_text(w, "name", s->name);
	cell_text(w, "state", s->state);
	cell_text(w, "engine", s->engine);
	cell_text(w, "rule", s->rule);
	cell_text(w, "workdir", s->workdir);
	cell_text(w, "tools_json", s->tools_json);
	cell_int(w, "start_ns", s->start_ns);
	cell_int(w, "end_ns", s->end_ns);
	cell_int(w, "last_update_ns", s->last_update_ns);
	cell_int(w, "exit_code", s->exit_code);
	cell_int(w, "signal", s->signal);
	cell_flag(w, "failed", s->failed);
	cell_int(w, "processes", s->processes);
	cell_int(w, "running", s->running);
	cell_int(w, "failed_processes", s->failed_processes);
	cell_int(w, "nonzero_exits", s->nonzero_exits);
	cell_int(w, "oom_killed", s->oom_killed);
	cell_int(w, "cpu_ns", s->cpu_ns);
	cell_int(w, "peak_rss_bytes", s->peak_rss_bytes);
	cell_flag(w, "peak_rss_partial", s->peak_rss_partial);
	cell_int(w, "rss_sum_of_peaks_bytes", s->rss_sum_of_peaks_bytes);
	cell_int(w, "memcg_peak_bytes", s->memcg_peak_bytes);
	cell_int(w, "read_bytes", s->read_bytes);
	cell_int(w, "write_bytes", s->write_bytes);
	cell_int(w, "rchar_bytes", s->rchar);
	cell_int(w, "wchar_bytes", s->wchar);
	cell_int(w, "net_tx_bytes", s->net_tx_bytes);
	cell_int(w, "net_rx_bytes", s->net_rx_bytes);
	cell_int(w, "cpu_limit_millicores", s->cpu_limit_millicores);
	cell_int(w, "memory_limit_bytes", s->memory_limit_bytes);
	cell_text(w, "job_id", s->job_id);
	cell_text(w, "job_host", s->job_host);
	cell_int(w, "job_submitted_ns", s->submitted_ns);
	cell_int(w, "job_queue_wait_ns", s->submitted_ns.known ? s->queued_ns : (struct store_int){ 0 });
	return row_end(w);
}

static int write_process(void *ctx, int64_t run_id, const struct store_process *p)
{
	struct table_out *w = ctx;
	uint64_t user = 0, sys = 0;
	bool cpu = p->runtime_ns.known;

	/* Split as wait4() reports it, exactly as tracer report does (view/run_json.c, common/cputime.c). */
	if (cpu)
		cputime_adjust((uint64_t)p->utime_ns.v, (uint64_t)p->stime_ns.v, (uint64_t)p->runtime_ns.v, &user,
			       &sys);
	row_begin(w);
	cell_i64(w, "run_id", run_id);
	cell_text(w, "step_id", p->step);
	cell_text(w, "host_id", p->host_id);
	cell_text(w, "boot_id", p->boot_id);
	cell_i64(w, "pid", p->tgid);
	cell_i64(w, "start_mono_ns", p->start_ns);
	cell_int(w, "ppid", p->ppid);
	cell_int(w, "start_ns", p->start_real_ns);
	cell_int(w, "end_ns", p->end_real_ns);
	cell_text(w, "exe", p->exe);
	cell_text(w, "cwd", p->cwd);
	cell_text(w, "tool", p->tool);
	cell_text(w, "argv_json", p->argv_json);
	cell_int(w, "exit_code", p->exit_code);
	cell_int(w, "signal", p->signal);
	cell_flag(w, "core_dumped", p->core_dumped);
	cell_i64(w, "oom_killed", p->oom_killed.known && p->oom_killed.v); /* as the report: never unknown */
	cell_int(w, "cpu_user_ns", (struct store_int){ .known = cpu && user <= INT64_MAX, .v = (int64_t)user });
	cell_int(w, "cpu_sys_ns", (struct store_int){ .known = cpu && sys <= INT64_MAX, .v = (int64_t)sys });
	cell_int(w, "peak_rss_bytes", p->peak_rss_bytes);
	cell_text(w, "peak_rss_source", p->peak_rss_source);
	cell_int(w, "read_bytes", p->read_bytes);
	cell_int(w, "write_bytes", p->write_bytes);
	cell_int(w, "rchar_bytes", p->rchar);
	cell_int(w, "wchar_bytes", p->wchar);
	cell_int(w, "net_tx_bytes", p->net_tx_bytes);
	cell_int(w, "net_rx_bytes", p->net_rx_bytes);
	cell_text(w, "cgroup", p->cgroup);
	return row_end(w);
}

static int write_signal(void *ctx, const struct store_export_signal *e)
{
	struct table_out *w = ctx;

	row_begin(w);
	cell_i64(w, "run_id", e->run_id);
	cell_i64(w, "signal_id", e->signal_id);
	cell_text(w, "kind", e->sig.kind);
	cell_text(w, "source", e->sig.source);
	cell_text(w, "host_id", e->host_id);
	cell_text(w, "boot_id", e->boot_id);
	cell_int(w, "pid", (struct store_int){ .known = e->sig.has_pid, .v = e->sig.pid });
	cell_int(w, "start_mono_ns", e->sig.start_ns);
	cell_text(w, "step_id", e->sig.step);
	cell_text(w, "tool", e->sig.tool);
	cell_text(w, "detail_json", e->sig.detail);
	return row_end(w);
}

static int write_sample(void *ctx, const struct store_export_sample *s)
{
	struct table_out *w = ctx;

	row_begin(w);
	cell_int(w, "run_id", s->run_id);
	cell_text(w, "host_id", s->host_id);
	cell_text(w, "boot_id", s->boot_id);
	cell_i64(w, "pid", s->tgid);
	cell_i64(w, "start_mono_ns", s->start_ns);
	cell_int(w, "ts_ns", s->real_ns);
	cell_int(w, "cpu_ns", s->runtime_ns);
	cell_int(w, "utime_ns", s->utime_ns);
	cell_int(w, "stime_ns", s->stime_ns);
	cell_int(w, "rss_bytes", s->rss_bytes);
	cell_int(w, "hiwater_rss_bytes", s->hiwater_rss_bytes);
	cell_int(w, "read_bytes", s->read_bytes);
	cell_int(w, "write_bytes", s->write_bytes);
	cell_int(w, "rchar_bytes", s->rchar);
	cell_int(w, "wchar_bytes", s->wchar);
	cell_int(w, "net_tx_bytes", s->net_tx_bytes);
	cell_int(w, "net_rx_bytes", s->net_rx_bytes);
	cell_int(w, "iowait_ns", s->iowait_ns);
	cell_int(w, "blocked_ns", s->blocked_ns);
	cell_int(w, "run_delay_ns", s->run_delay_ns);
	cell_int(w, "threads", s->nr_threads);
	return row_end(w);
}

static int walk_table(struct store *st, enum table t, struct store_export_window win, struct table_out *w)
{
	switch (t) {
	case TABLE_RUNS: return store_export_runs(st, win, write_run, w);
	case TABLE_STEPS: return store_export_steps(st, win, write_step, w);
	case TABLE_PROCESSES: return store_export_processes(st, win, write_process, w);
	case TABLE_SIGNALS: return store_export_signals(st, win, write_signal, w);
	case TABLE_SAMPLES: return store_export_samples(st, win, write_sample, w);
	case TABLE_COUNT: break;
	}
	return STORE_E_NOT_FOUND;
}

/* ---- the command ----------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer export table --db LAKE {runs|steps|processes|signals|samples} [--since DURATION]\n"
		   "                          [--format csv|ndjson]\n"
		   "Writes one table of the lake LAKE (an SQLite file or a postgresql:// URI) to stdout, a row at\n"
		   "a time: CSV with a header row (the default), or NDJSON (one JSON object a line). --since 14d\n"
		   "(or 36h, 90m): only the runs that started in that window before now, with their steps,\n"
		   "processes and signals (samples: those taken in it); default: everything. Times are nanoseconds\n"
		   "since the epoch (*_ns), sizes bytes (*_bytes), unknown values empty (CSV) or null (NDJSON).\n"
		   "docs/export.md lists the columns.\n");
}

struct export_opts {
	const char *db;
	enum table table;
	bool csv;
	struct store_export_window win;
};

/* 0, 2 on a bad command line (said), -1 after --help. */
static int parse_opts(int argc, char **argv, struct export_opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "since", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *table = NULL;
	struct timespec now;
	uint64_t window;
	int opt;

	*o = (struct export_opts){ .table = TABLE_COUNT, .csv = true, .win = { .all = true } };
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->db = optarg; break;
		case 's':
			if (sweep_parse_window(optarg, &window)) {
				fprintf(stderr, "tracer export table: --since %s: want a duration such as 14d, 36h, "
					"90m\n", optarg);
				return 2;
			}
			clock_gettime(CLOCK_REALTIME, &now);
			o->win = (struct store_export_window){
				.since_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - (int64_t)window,
			};
			break;
		case 'f':
			if (strcmp(optarg, "csv") && strcmp(optarg, "ndjson")) {
				fprintf(stderr, "tracer export table: --format %s: want csv or ndjson\n", optarg);
				return 2;
			}
			o->csv = !strcmp(optarg, "csv");
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		table = argv[optind++];
	for (int t = 0; table && t < TABLE_COUNT; t++)
		if (!strcmp(table, tables[t].name))
			o->table = (enum table)t;
	if (!o->db || !table || o->table == TABLE_COUNT || optind < argc) {
		fprintf(stderr, "tracer export table: %s\n", !o->db ? "--db LAKE is required" :
			!table ? "which table? runs, steps, processes, signals or samples" :
			o->table == TABLE_COUNT ? "no such table (runs, steps, processes, signals, samples)" :
			"one table at a time");
		usage(stderr);
		return 2;
	}
	return 0;
}

int cmd_export_table(int argc, char **argv)
{
	struct export_opts o;
	struct table_out *w;
	struct store *st = NULL;
	char err[1024], shown[512];
	int rc = parse_opts(argc, argv, &o), werr;

	if (rc)
		return rc < 0 ? 0 : rc;
	if (store_open(&st, o.db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer export table: %s\n", err);
		return 1;
	}
	store_display_name(o.db, shown, sizeof(shown)); /* a URI's password starred */
	w = calloc(1, sizeof(*w));
	if (!w) {
		fprintf(stderr, "tracer export table: out of memory\n");
		store_close(st);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN); /* a reader gone: the write says EPIPE, said below, not a silent death */
	fflush(stdout);
	obuf_init_fd(&w->o, STDOUT_FILENO, w->buf, sizeof(w->buf));
	w->csv = o.csv;
	w->cols = tables[o.table].cols;
	w->ncols = tables[o.table].ncols;
	write_header(w);
	rc = walk_table(st, o.table, o.win, w);
	werr = obuf_flush(&w->o);
	if (werr) {
		fprintf(stderr, "tracer export table: cannot write the %s to stdout after %" PRIu64 " rows: %s\n",
			tables[o.table].name, w->rows, strerror(-werr));
		rc = 1;
	} else if (rc) {
		fprintf(stderr, "tracer export table: %s: %s: %s\n", shown, store_strerror(rc), store_last_error(st));
		rc = 1;
	}
	free(w);
	store_close(st);
	return rc;
}
