/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for tracer export table (issue 28): the runs of a
 * window, their steps, processes and signals, and the samples taken in it
 * (store.h, "reading for tracer export table"). One statement per table
 * over the whole window, prepared per call like read_sweep.c's, and
 * streamed (sql_prepare_streamed): PostgreSQL hands over one row at a
 * time, so that the export's memory does not grow with the lake.
 *
 * The runs, steps and processes are read with the same maps of columns
 * to structs as tracer report's reads (lake/schema.c's lake_run_select,
 * lake_step_select, lake_process_select, filled by read.c's
 * lake_select_row and lake_process_row), so that an exported row says
 * what tracer report --json says of it: the same peak, I/O and network
 * rules, the same cgroup. Only the WHERE differs: a window of runs
 * instead of one run, and each row's run is the one a report shows it
 * under (a cluster job's rows are its head run's). docs/lake.md,
 * "Reading for the export", says what each statement costs.
 *
 * Every value came from a host: JSON is handed over only after
 * json_parse accepted it (read_json.h); strings are the caller's to
 * escape.
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "read_json.h"
#include "schema.h"

/*
 * The window (?1 the start, ?2 = 1: every run) over a row whose lake run is x: its head run (itself, or
 * the run a cluster job is joined to) started at ?1 or later. One seek of runs' key each.
 */
#define IN_WINDOW(x)                                                                                         \
	"EXISTS (SELECT 1 FROM runs xr JOIN runs xh ON xh.run_id = coalesce(xr.joined_run_id, xr.run_id) WHERE " \
	"xr.run_id = " x " AND (?2 = 1 OR xh.start_ns >= ?1))"
/* The run a report shows the row of lake run x under: x, or the run x (a cluster job) is joined to. */
#define HEAD_OF(x) "(SELECT coalesce(hr.joined_run_id, hr.run_id) FROM runs hr WHERE hr.run_id = " x ")"

/* The runs that are no cluster job joined to another, by start as tracer report lists them. */
static const char runs_tail[] = " WHERE joined_run_id IS NULL AND (?2 = 1 OR start_ns >= ?1) "
				"ORDER BY start_ns IS NULL, start_ns, run_id";

/* A run's own steps but those whose sbatch submitted a joined job, and the jobs' (as ST_RUN_STEPS_LIST). */
static const char steps_tail[] = " WHERE " IN_WINDOW("steps.run_id") " AND NOT EXISTS (SELECT 1 FROM runs j WHERE "
				 "j.joined_run_id = steps.run_id AND j.joined_step_id = steps.step_id) "
				 "ORDER BY steps.run_id, steps.idx";

/*
 * The processes of those runs, with their cgroups as ST_RUN_PROCS_LIST joins them. SQLite walks
 * processes_run in run order and sorts only each run's rows by start (a temporary b-tree for the right
 * part of the ORDER BY): never the whole table at once.
 */
static const char processes_tail[] =
	" LEFT JOIN cgroups c2 ON c2.host_id = p.host_id AND c2.boot_id = p.boot_id AND c2.v1 = 0 "
	"AND c2.cgroup_id = p.cgroup_id LEFT JOIN cgroups c1 ON c1.host_id = p.host_id AND "
	"c1.boot_id = p.boot_id AND c1.v1 = 1 AND c1.cgroup_id = p.cgroup_v1_id "
	"WHERE p.run_id IS NOT NULL AND " IN_WINDOW("p.run_id") " "
	"ORDER BY p.run_id, p.start_ns, p.tgid, p.host_id, p.boot_id";

static const char signals_sql[] =
	"SELECT " HEAD_OF("s.run_id") ", s.signal_id, s.host_id, s.boot_id, s.kind, s.source, s.pid, s.start_ns, "
	"s.step, s.tool, s.detail FROM signals s WHERE s.run_id IS NOT NULL AND " IN_WINDOW("s.run_id") " "
	"ORDER BY s.signal_id";

/*
 * A sample in real time: its monotonic time plus its process's offset, as read_tune.c and read_sweep.c take
 * it (start_real_ns - start_ns, from the batch that brought its first kernel record; else the exit's).
 */
#define SAMPLE_REAL                                                                                      \
	SQL_ADD("s.ts_ns", "coalesce(" SQL_SUB("p.start_real_ns", "p.start_ns") ", "                            \
			   SQL_SUB("p.end_real_ns", "p.exit_ts_ns") ")")
static const char samples_sql[] =
	"SELECT " HEAD_OF("p.run_id") ", s.host_id, s.boot_id, s.tgid, s.start_ns, " SAMPLE_REAL ", s.runtime_ns, "
	"s.utime_ns, s.stime_ns, s.rss_bytes, s.hiwater_rss_bytes, s.read_bytes, s.write_bytes, s.rchar, s.wchar, "
	"s.net_tx_bytes, s.net_rx_bytes, s.iowait_ns, s.blocked_ns, s.run_delay_ns, s.nr_threads "
	"FROM samples s LEFT JOIN processes p ON p.host_id = s.host_id AND p.boot_id = s.boot_id AND "
	"p.tgid = s.tgid AND p.start_ns = s.start_ns WHERE ?2 = 1 OR " SAMPLE_REAL " >= ?1 "
	"ORDER BY s.host_id, s.stream, s.seq";

/* ---- walking one statement -------------------------------------------------- */

struct export_cb {
	store_run_fn run;
	store_export_step_fn step;
	store_export_process_fn process;
	store_export_signal_fn signal;
	store_export_sample_fn sample;
	void *ctx;
	struct lake_json js;
};

/*
 * Every row of sql (?1 since_ns, ?2 all), streamed, to visit (a lake_row_fn over a struct export_cb); a non-zero
 * return of the callback stops the walk (the statement's run cancelled) and is returned, else a store_err.
 */
static int export_walk(struct store *s, const char *sql, struct store_export_window w, lake_row_fn visit,
		       struct export_cb *cb)
{
	const int64_t binds[] = { w.since_ns, w.all ? 1 : 0 };
	int rc = lake_rows(s, sql, true, binds, 2, visit, cb);

	lake_json_free(&cb->js);
	return rc;
}

/*
 * "SELECT first, <sel's columns> FROM <sel's table><tail>" into a new string (free it), or NULL without
 * memory: the map's columns from the second on, as lake_select_row(st, 1, ...) reads them.
 */
static char *select_after(const char *first, const struct lake_select *sel, const char *tail)
{
	struct obuf q, o;
	char *text = NULL;

	obuf_init_mem(&q, 1u << 20);
	obuf_init_mem(&o, 1u << 20);
	lake_select_sql(sel, tail, &q);
	if (!q.err && q.len > 7) { /* "SELECT " */
		obuf_puts(&o, "SELECT ");
		if (first) {
			obuf_puts(&o, first);
			obuf_puts(&o, ", ");
		}
		obuf_put(&o, q.buf + 7, q.len - 7);
		obuf_putc(&o, 0);
		if (!o.err)
			text = strdup(o.buf);
	}
	obuf_free(&q);
	obuf_free(&o);
	return text;
}

/* A statement made by select_after, walked; STORE_E_NOMEM when it could not be made. */
static int export_select(struct store *s, const char *first, const struct lake_select *sel, const char *tail,
			 struct store_export_window w, lake_row_fn visit, struct export_cb *cb)
{
	char *sql = select_after(first, sel, tail);
	int rc;

	if (!sql) {
		lake_json_free(&cb->js);
		return STORE_E_NOMEM;
	}
	rc = export_walk(s, sql, w, visit, cb);
	free(sql);
	return rc;
}

/* ---- rows ------------------------------------------------------------------ */

static int visit_run(struct sql_stmt *st, void *arg)
{
	struct export_cb *cb = arg;
	struct store_run r;

	return lake_select_row(st, 0, &cb->js, &lake_run_select, &r, sizeof(r)) ?: cb->run(cb->ctx, &r);
}

static int visit_step(struct sql_stmt *st, void *arg)
{
	struct export_cb *cb = arg;
	struct store_step step;
	int64_t run_id = sql_col_i64(st, 0);

	return lake_select_row(st, 1, &cb->js, &lake_step_select, &step, sizeof(step)) ?:
		       cb->step(cb->ctx, run_id, &step);
}

static int visit_process(struct sql_stmt *st, void *arg)
{
	struct export_cb *cb = arg;
	struct store_process p;
	int64_t run_id = sql_col_i64(st, 0);

	lake_process_row(st, 1, &cb->js, &p);
	return cb->process(cb->ctx, run_id, &p);
}

static int visit_signal(struct sql_stmt *st, void *arg)
{
	struct export_cb *cb = arg;
	struct col c = { st, 0 };
	struct store_export_signal e = { 0 };
	struct store_int pid;

	e.run_id = col_i64(&c);
	e.signal_id = col_i64(&c);
	e.host_id = col_text(&c);
	e.boot_id = col_text(&c);
	e.sig.kind = col_text(&c);
	if (!e.sig.kind)
		e.sig.kind = "?";
	e.sig.source = col_text(&c);
	pid = col_int(&c);
	e.sig.has_pid = pid.known;
	e.sig.pid = pid.v;
	e.sig.start_ns = col_int(&c);
	e.sig.step = col_text(&c);
	e.sig.tool = col_text(&c);
	e.sig.detail = lake_json_valid(&cb->js, sql_col_text(st, c.i), sql_col_bytes(st, c.i));
	return cb->signal(cb->ctx, &e);
}

static int visit_sample(struct sql_stmt *st, void *arg)
{
	struct export_cb *cb = arg;
	struct col c = { st, 0 };
	struct store_export_sample e = { 0 };

	e.run_id = col_int(&c);
	e.host_id = col_text(&c);
	e.boot_id = col_text(&c);
	e.tgid = col_i64(&c);
	e.start_ns = col_i64(&c);
	e.real_ns = col_int(&c);
	e.runtime_ns = col_int(&c);
	e.utime_ns = col_int(&c);
	e.stime_ns = col_int(&c);
	e.rss_bytes = col_int(&c);
	e.hiwater_rss_bytes = col_int(&c);
	e.read_bytes = col_int(&c);
	e.write_bytes = col_int(&c);
	e.rchar = col_int(&c);
	e.wchar = col_int(&c);
	e.net_tx_bytes = col_int(&c);
	e.net_rx_bytes = col_int(&c);
	e.iowait_ns = col_int(&c);
	e.blocked_ns = col_int(&c);
	e.run_delay_ns = col_int(&c);
	e.nr_threads = col_int(&c);
	return cb->sample(cb->ctx, &e);
}

/* ---- the calls ------------------------------------------------------------ */

int store_export_runs(struct store *s, struct store_export_window w, store_run_fn fn, void *ctx)
{
	struct export_cb cb = { .run = fn, .ctx = ctx };

	return export_select(s, NULL, &lake_run_select, runs_tail, w, visit_run, &cb);
}

int store_export_steps(struct store *s, struct store_export_window w, store_export_step_fn fn, void *ctx)
{
	struct export_cb cb = { .step = fn, .ctx = ctx };

	return export_select(s, HEAD_OF("steps.run_id"), &lake_step_select, steps_tail, w, visit_step, &cb);
}

int store_export_processes(struct store *s, struct store_export_window w, store_export_process_fn fn, void *ctx)
{
	struct export_cb cb = { .process = fn, .ctx = ctx };

	return export_select(s, HEAD_OF("p.run_id"), &lake_process_select, processes_tail, w, visit_process, &cb);
}

int store_export_signals(struct store *s, struct store_export_window w, store_export_signal_fn fn, void *ctx)
{
	struct export_cb cb = { .signal = fn, .ctx = ctx };

	return export_walk(s, signals_sql, w, visit_signal, &cb);
}

int store_export_samples(struct store *s, struct store_export_window w, store_export_sample_fn fn, void *ctx)
{
	struct export_cb cb = { .sample = fn, .ctx = ctx };

	return export_walk(s, samples_sql, w, visit_sample, &cb);
}
