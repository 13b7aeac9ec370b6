/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for the analysis (tracer tune, tracer cost): the
 * store_tune_* calls of store.h. Each reads every run of a pipeline at
 * once, never a query per run or step (a history of 1,000 runs of 100
 * steps loads in about a second: docs/benchmarks.md), with statements
 * prepared per call (a handful per load; the cached statements of
 * store.c are the ingest's and tracer report's), its rows handed to a
 * callback. docs/lake.md, "Reading for the analysis".
 *
 *   store_tune_runs      one statement
 *   store_tune_tasks     the steps, and their live processes walked
 *                        alongside, both by run, summed per step in C
 *   store_tune_activity  samples and files: by index, or by one scan of
 *                        both tables when the runs are much of the lake
 *
 * Every value came from a host: JSON is looked into in C (read_json.h),
 * only after json_parse accepted it and only for a value of the expected
 * type; sums saturate; strings are handed over as data. The SQL runs the
 * same on SQLite and PostgreSQL (sql.h): no json1, no rowid.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "hash.h"
#include "read_json.h"
#include "records.h"
#include "schema.h"

/* ?1: the pipeline, NULL for every run. */
/* The runs walked: of the pipeline ?1 (NULL: all), the newest ?2 of each pipeline (NULL: all). */
#define SEL_RUNS                                                                                          \
	"SELECT run_id FROM (SELECT run_id, row_number() OVER (PARTITION BY pipeline ORDER BY start_ns IS NULL, " \
	"start_ns DESC, run_id DESC) AS rn FROM runs WHERE joined_run_id IS NULL AND (CAST(?1 AS TEXT) IS NULL OR " \
	"pipeline = ?1)) AS ranked WHERE CAST(?2 AS BIGINT) IS NULL OR rn <= ?2"
/*
 * The runs walked and the cluster jobs joined to them (docs/live.md, "Cluster jobs"): each run whose rows
 * are read (member) and the run they are read as (top). A job's steps, processes, samples and files are its
 * run's; the step whose sbatch submitted it is not read (the job is in its place).
 */
#define SEL_MEMBERS                                                                                      \
	"SELECT r.run_id AS member, coalesce(r.joined_run_id, r.run_id) AS top FROM runs r WHERE r.run_id IN (" \
	SEL_RUNS ") OR r.joined_run_id IN (" SEL_RUNS ")"
#define NOT_SUBMITTING(st)                                                                               \
	"NOT EXISTS (SELECT 1 FROM runs j WHERE j.joined_run_id = " st ".run_id AND j.joined_step_id = " st  \
	".step_id)"

/* The flags of records.h the statements test, for SQL. */
#define NO_IO_SQL "1"
#define TRACED_SQL "1"
_Static_assert(TR_EXIT_NO_IO_ACCOUNTING == 1, "NO_IO_SQL");
_Static_assert(TR_PSTATE_TRACED == 1, "TRACED_SQL");

/*
 * sum() in SQL, saturating: SQLite's sum() of integers fails the whole
 * statement on an overflow (PostgreSQL's is a numeric), which a host's
 * figures could cause. So summed as doubles (as SQLite's total() did:
 * exact below 2^53, a whole number always), brought back to an integer at
 * int64's ends. NULL when every one is.
 */
#define DSUM(x) "sum(CAST(" x " AS DOUBLE PRECISION))"
#define SUM(x)                                                                                           \
	"(CASE WHEN count(" x ") = 0 THEN NULL WHEN " DSUM(x) " >= 9223372036854775807 THEN "               \
	"9223372036854775807 WHEN " DSUM(x) " <= -9223372036854775807 THEN -9223372036854775807 - 1 "       \
	"ELSE CAST(" DSUM(x) " AS BIGINT) END)"

/* A runs row's host (col_host), of the table named by prefix ("" or "j."). */
#define RUN_HOST_COLUMNS(t)                                                                              \
	t "host_id, " t "host_cloud, " t "host_instance_type, " t "host_instance_id, " t "host_region, " t     \
	"host_cpus, " t "host_memory_bytes, " t "host_price_per_hour"

static const char runs_sql[] =
	"SELECT run_id, run_key, pipeline, pipeline_run_id, run_name, state, engine, start_ns, end_ns, "
	"coalesce(" RUN_WITH_JOBS("cpu_ns") ", (SELECT " SUM("p.runtime_ns") " FROM processes p WHERE p.run_id IN "
	"(SELECT j.run_id FROM runs j WHERE j.run_id = runs.run_id OR j.joined_run_id = runs.run_id)), "
	"(SELECT " SUM("CAST(rp.cpu_user_ns AS DOUBLE PRECISION) + rp.cpu_sys_ns") " FROM run_processes rp "
	"WHERE rp.run_id = runs.run_id)), "
	"uid, " RUN_HOST_COLUMNS("") " FROM runs WHERE run_id IN (" SEL_RUNS ") "
	"ORDER BY start_ns IS NULL, start_ns, run_id";

/*
 * A step's live processes, one row each, by run (PROC_ORDER, below):
 * each one's figures from its exit record, else from its newest sample.
 * Summed per step in C, run by run (load_run_steps), not with GROUP BY:
 * SQLite's sorter takes three times as long over 200,000 processes. The
 * columns in struct sums's order: count (1), measured, cpu, lifetime, run
 * delay, I/O wait, blocked, network wait, OOM kills, peak, read, write,
 * rchar, wchar, net tx, net rx, start, end (real time); then direct reclaim
 * (read by keep_process: tasks_sql has no such column).
 */
/*
 * The process in its tree, always live_sql's last TREE_NCOLS columns: its
 * tgid and start, its parent's, and its end (the exit, else its newest
 * sample), on the host's monotonic clock. From them, the time its traced
 * children covered (run_idle).
 */
#define TREE_COLUMNS "p.tgid, p.start_ns, p.ppid, p.parent_start_ns, coalesce(p.exit_ts_ns, ls.ts_ns)"
#define TREE_NCOLS 5
#define LIVE(exit_col, sample_col) "CASE WHEN p.exit_ts_ns IS NOT NULL THEN " exit_col " ELSE " sample_col " END"
#define IO(col) "CASE WHEN (p.exit_flags & " NO_IO_SQL ") <> 0 THEN NULL ELSE " col " END"
#define NET(col) "CASE WHEN (p.state_flags & " TRACED_SQL ") <> 0 THEN " col " END"
/* The order the statements walk processes in: by run, then by key (both engines have it; PostgreSQL no rowid). */
#define PROC_ORDER "m.top, p.host_id, p.boot_id, p.tgid, p.start_ns"
/* The process's lifetime, never below 0 (NULL when unknown). */
#define LIFE                                                                                             \
	"CASE WHEN p.exit_ts_ns IS NOT NULL THEN " SQL_SUB("p.exit_ts_ns", "p.start_ns") " WHEN ls.ts_ns IS NOT " \
	"NULL THEN " SQL_SUB("ls.ts_ns", "p.start_ns") " ELSE " SQL_SUB("p.end_real_ns", "p.start_real_ns") " END"
#define LIVE_SQL(join)                                                                                          \
	"SELECT m.top, p.step, 1, CASE WHEN p.exit_ts_ns IS NOT NULL OR ls.seq IS NOT NULL THEN 1 ELSE 0 END, " \
	LIVE("p.runtime_ns", "ls.runtime_ns") ", "                                                              \
	"CASE WHEN " LIFE " < 0 THEN 0 ELSE " LIFE " END, "                                                     \
	LIVE("p.run_delay_ns", "ls.run_delay_ns") ", " LIVE("p.iowait_ns", "ls.iowait_ns") ", "                 \
	LIVE("p.blocked_ns", "ls.blocked_ns") ", " LIVE("p.net_wait_ns", "ls.net_wait_ns") ", p.oom_killed, "   \
	LIVE("coalesce(p.peak_rss_bytes, p.maxrss_bytes)", "ls.hiwater_rss_bytes") ", "                         \
	LIVE(IO("p.read_bytes"), "ls.read_bytes") ", " LIVE(IO("p.write_bytes"), "ls.write_bytes") ", "         \
	LIVE(IO("p.rchar"), "ls.rchar") ", " LIVE(IO("p.wchar"), "ls.wchar") ", "                               \
	LIVE(NET("p.net_tx_bytes"), "ls.net_tx_bytes") ", " LIVE(NET("p.net_rx_bytes"), "ls.net_rx_bytes") ", " \
	"p.start_real_ns, p.end_real_ns, " LIVE("p.reclaim_ns", "ls.reclaim_ns") ", " TREE_COLUMNS " "          \
	"FROM (" SEL_MEMBERS ") m JOIN processes p INDEXED BY processes_run ON p.run_id = m.member " join " "     \
	"WHERE p.step IS NOT NULL ORDER BY " PROC_ORDER
static const char live_sql[] = LIVE_SQL(NEWEST_SAMPLE_JOIN_SQLITE("p.exit_ts_ns IS NULL"));
static const char live_sql_pg[] = LIVE_SQL(NEWEST_SAMPLE_JOIN_PG("p.exit_ts_ns IS NULL"));
static const struct lake_read live_sql_read = { live_sql, live_sql_pg };

/* A step's place in its run: its idx, or for a joined job's step the place of the step that submitted it. */
#define STEP_PLACE                                                                                       \
	"coalesce(CASE WHEN st.run_id = m.top THEN st.idx ELSE (SELECT h.idx FROM steps h JOIN runs j ON "     \
	"j.joined_step_id = h.step_id WHERE j.run_id = st.run_id AND h.run_id = m.top) END, 9223372036854775807)"

/*
 * The steps, with what a tracer run report's processes (run_processes: no
 * waits) add to each. Few rows: GROUP BY. The OOM kills' limits: oom_sql,
 * taken out of their JSON in C.
 */
static const char tasks_sql[] =
	"WITH sel AS (" SEL_MEMBERS "), "
	"rp AS (SELECT run_id, step, count(*) AS n, count(*) AS measured, "
	SUM("CAST(cpu_user_ns AS DOUBLE PRECISION) + cpu_sys_ns") " AS cpu, "
	SUM("CASE WHEN end_ns >= start_ns THEN CAST(end_ns AS DOUBLE PRECISION) - start_ns END") " AS life, "
	"NULL AS delay, NULL AS iowait, NULL AS blocked, NULL AS netwait, " SUM("oom_killed") " AS oom, "
	"max(peak_rss_bytes) AS peak, "
	SUM("read_bytes") " AS rd, " SUM("write_bytes") " AS wr, " SUM("rchar") " AS rc, " SUM("wchar") " AS wc, "
	SUM("net_tx_bytes") " AS tx, " SUM("net_rx_bytes") " AS rx, min(start_ns) AS first_start, "
	"CASE WHEN count(end_ns) = count(*) THEN max(end_ns) END AS last_end "
	"FROM run_processes WHERE run_id IN (SELECT member FROM sel) AND step IS NOT NULL GROUP BY run_id, step) "
	"SELECT m.top, " STEP_PLACE ", st.step_id, st.name, st.state, st.engine, st.rule, st.tools, st.start_ns, "
	"st.end_ns, st.failed, st.running, st.processes, st.oom_killed, st.cpu_ns, st.peak_rss_bytes, "
	"st.read_bytes, st.write_bytes, st.rchar, st.wchar, st.net_tx_bytes, st.net_rx_bytes, "
	"r.n, r.measured, r.cpu, r.life, r.delay, r.iowait, r.blocked, r.netwait, r.oom, r.peak, r.rd, r.wr, "
	"r.rc, r.wc, r.tx, r.rx, r.first_start, r.last_end, st.cpu_limit_millicores, st.memory_limit_bytes, "
	"j.submitted_ns, " RUN_HOST_COLUMNS("j.") " "
	"FROM sel m JOIN steps st ON st.run_id = m.member LEFT JOIN rp r ON r.run_id = st.run_id AND "
	"r.step = st.step_id LEFT JOIN runs j ON j.run_id = st.run_id AND j.joined_run_id = m.top "
	"WHERE " NOT_SUBMITTING("st") " ORDER BY m.top, 2, st.run_id, st.idx";

/*
 * The OOM kills of the runs, by step, with their detail (its memcg_limit_bytes: oom_load): a report's and
 * a live record's name the step; a kernel record's, the process.
 */
static const char oom_sql[] =
	"WITH sel AS (" SEL_MEMBERS ") "
	"SELECT m.top, g.step, g.detail FROM sel m JOIN signals g ON g.run_id = m.member "
	"WHERE g.kind = 'oom_kill' "
	"UNION ALL SELECT m.top, p.step, g.detail FROM signals g JOIN processes p ON "
	"p.host_id = g.host_id AND p.boot_id = g.boot_id AND p.tgid = g.pid AND p.start_ns = g.start_ns "
	"JOIN sel m ON m.member = p.run_id WHERE g.run_id IS NULL AND g.kind = 'oom_kill' ORDER BY 1, 2, 3";

/*
 * A process's samples in real time: its monotonic times plus its offset
 * (start_real_ns - start_ns, from the batch that brought its first kernel
 * record; else the exit's). Walked process by process, by run then by the
 * process's key (PROC_ORDER: both engines have it, PostgreSQL no rowid),
 * each process's samples by time, any stream; the process numbered in C
 * (row_to_tune_sample) as its key changes.
 */
#define REAL_OFFSET                                                                                      \
	"coalesce(" SQL_SUB("p.start_real_ns", "p.start_ns") ", " SQL_SUB("p.end_real_ns", "p.exit_ts_ns") ")"
static const char samples_sql[] =
	"SELECT m.top, p.step, p.host_id, p.boot_id, p.tgid, p.start_ns, " SQL_ADD("s.ts_ns", REAL_OFFSET) ", "
	"s.runtime_ns, s.rss_bytes FROM (" SEL_MEMBERS ") m JOIN processes p INDEXED BY processes_run ON "
	"p.run_id = m.member JOIN samples s INDEXED BY samples_by_process ON s.host_id = p.host_id AND "
	"s.boot_id = p.boot_id AND s.tgid = p.tgid AND s.start_ns = p.start_ns "
	"WHERE " REAL_OFFSET " IS NOT NULL "
	"ORDER BY " PROC_ORDER ", s.ts_ns";

static const char files_sql[] =
	"SELECT m.top, p.step, f.host_id, f.path, f.mode FROM (" SEL_MEMBERS ") m JOIN processes p INDEXED BY "
	"processes_run ON p.run_id = m.member JOIN files f INDEXED BY files_process ON f.host_id = p.host_id AND "
	"f.boot_id = p.boot_id AND f.tgid = p.tgid AND f.start_ns = p.start_ns "
	"WHERE p.step IS NOT NULL ORDER BY " PROC_ORDER ", f.stream, f.seq";

/* ---- rows ------------------------------------------------------------------ */

/* The host columns of a runs row: host_id, host_cloud, host_instance_type, host_instance_id, host_region,
 * host_cpus, host_memory_bytes, host_price_per_hour (RUN_HOST_COLUMNS). */
static void col_host(struct col *c, struct store_tune_host *h)
{
	int type;

	h->host_id = col_text(c);
	h->cloud = col_text(c);
	h->instance_type = col_text(c);
	h->instance_id = col_text(c);
	h->region = col_text(c);
	h->cpus = col_int(c);
	h->memory_bytes = col_int(c);
	type = sql_col_type(c->st, c->i);
	if (type == SQL_FLOAT || type == SQL_INTEGER) {
		h->price_per_hour = sql_col_double(c->st, c->i);
		h->price_known = isfinite(h->price_per_hour);
	}
	c->i++;
}

static void row_to_tune_run(struct sql_stmt *st, struct store_tune_run *r)
{
	struct col c = { st, 0 };

	memset(r, 0, sizeof(*r));
	r->run_id = col_i64(&c);
	r->run_key = col_text(&c);
	r->pipeline = col_text(&c);
	r->pipeline_run_id = col_text(&c);
	r->run_name = col_text(&c);
	r->state = col_text(&c);
	r->engine = col_text(&c);
	r->start_ns = col_int(&c);
	r->end_ns = col_int(&c);
	r->cpu_ns = col_int(&c);
	r->uid = col_int(&c);
	col_host(&c, &r->host);
}

/* One set of summed figures (a process of live_sql, or tasks_sql's rp), in their column order. */
struct sums {
	struct store_int n, measured, cpu, life, delay, iowait, blocked, netwait, oom, peak;
	struct store_int rd, wr, rc, wc, tx, rx, first_start, last_end;
	struct store_int reclaim; /* live_sql's column after last_end (keep_process); unknown in tasks_sql's */
	struct store_int idle; /* not a column: run_idle() (live_sql's processes only) */
};

static void row_sums(struct col *c, struct sums *s)
{
	s->n = col_int(c);
	s->measured = col_int(c);
	s->cpu = col_int(c);
	s->life = col_int(c);
	s->delay = col_int(c);
	s->iowait = col_int(c);
	s->blocked = col_int(c);
	s->netwait = col_int(c);
	s->oom = col_int(c);
	s->peak = col_int(c);
	s->rd = col_int(c);
	s->wr = col_int(c);
	s->rc = col_int(c);
	s->wc = col_int(c);
	s->tx = col_int(c);
	s->rx = col_int(c);
	s->first_start = col_int(c);
	s->last_end = col_int(c);
	s->reclaim = (struct store_int){ 0 };
	s->idle = (struct store_int){ 0 }; /* run_idle()'s, for live_sql's processes */
}

static struct store_int or_else(struct store_int a, struct store_int b)
{
	return a.known ? a : b;
}

static struct store_int larger(struct store_int a, struct store_int b)
{
	if (!a.known)
		return b;
	return b.known && b.v > a.v ? b : a;
}

static bool text_is(const char *t, const char *want)
{
	return t && !strcmp(t, want);
}

/* The step's own columns, in tasks_sql's order from st.processes. */
struct step_own {
	struct store_int processes, oom, cpu, peak, rd, wr, rc, wc, tx, rx;
};

/*
 * The figures of a task from the best source it has: its measured processes,
 * else a report's processes, else the step's own columns.
 */
static void task_figures(struct store_tune_task *t, const struct step_own *own, const struct sums *live,
			 const struct sums *report)
{
	const struct sums *from = NULL;

	t->source = STORE_TASK_STEP;
	if (live->measured.known && live->measured.v > 0) {
		t->source = STORE_TASK_PROCESSES;
		from = live;
	} else if (report->n.known && report->n.v > 0) {
		t->source = STORE_TASK_REPORT;
		from = report;
	}
	t->processes = own->processes;
	t->cpu_ns = own->cpu;
	t->oom_kills = own->oom;
	t->peak_rss_bytes = own->peak;
	t->read_bytes = own->rd;
	t->write_bytes = own->wr;
	t->rchar = own->rc;
	t->wchar = own->wc;
	t->net_tx_bytes = own->tx;
	t->net_rx_bytes = own->rx;
	if (!from)
		return;
	t->processes = from->n;
	t->cpu_ns = or_else(from->cpu, own->cpu);
	t->proc_ns = from->life;
	t->run_delay_ns = from->delay;
	t->iowait_ns = from->iowait;
	t->blocked_ns = from->blocked;
	t->net_wait_ns = from->netwait;
	t->reclaim_ns = from->reclaim;
	t->idle_ns = from->idle;
	t->oom_kills = larger(from->oom, own->oom);
	t->peak_rss_bytes = or_else(own->peak, from->peak);
	t->read_bytes = or_else(from->rd, own->rd);
	t->write_bytes = or_else(from->wr, own->wr);
	t->rchar = or_else(from->rc, own->rc);
	t->wchar = or_else(from->wc, own->wc);
	t->net_tx_bytes = or_else(from->tx, own->tx);
	t->net_rx_bytes = or_else(from->rx, own->rx);
	t->start_ns = or_else(t->start_ns, from->first_start);
	if (!t->running)
		t->end_ns = or_else(t->end_ns, from->last_end);
}

/* A step's row of tasks_sql, its tools joined in js; STORE_E_NOMEM when they cannot be. */
static int row_to_tune_task(struct sql_stmt *st, const struct sums *live, struct lake_json *js,
			    struct store_tune_task *t)
{
	struct col c = { st, 0 };
	struct store_int failed, running;
	struct step_own own;
	struct sums report;

	memset(t, 0, sizeof(*t));
	t->run_id = col_i64(&c);
	t->idx = col_i64(&c);
	t->step_id = col_text(&c);
	t->name = col_text(&c);
	t->state = col_text(&c);
	t->engine = col_text(&c);
	t->rule = col_text(&c);
	t->tools = lake_json_join(js, sql_col_text(st, c.i), sql_col_bytes(st, c.i), ", ");
	c.i++;
	if (!t->tools)
		return STORE_E_NOMEM;
	t->start_ns = col_int(&c);
	t->end_ns = col_int(&c);
	failed = col_int(&c);
	running = col_int(&c);
	t->failed = text_is(t->state, "failed") || (failed.known && failed.v != 0);
	t->running = text_is(t->state, "running") || (!t->state && running.known && running.v > 0);
	if (t->running)
		t->end_ns = (struct store_int){ 0 };
	own.processes = col_int(&c);
	own.oom = col_int(&c);
	own.cpu = col_int(&c);
	own.peak = col_int(&c);
	own.rd = col_int(&c);
	own.wr = col_int(&c);
	own.rc = col_int(&c);
	own.wc = col_int(&c);
	own.tx = col_int(&c);
	own.rx = col_int(&c);
	row_sums(&c, &report);
	t->cpu_limit_millicores = col_int(&c);
	t->memory_limit_bytes = col_int(&c);
	t->submitted_ns = col_int(&c);
	col_host(&c, &t->job_host);
	task_figures(t, &own, live, &report);
	return STORE_OK;
}

/* ---- a run's live processes, summed per step ------------------------------------ */

/* A host's figures may be anything: sums saturate rather than overflow. */
static void add_int(struct store_int *a, struct store_int b)
{
	if (!b.known)
		return;
	if (!a->known)
		*a = b;
	else if (b.v > 0 && a->v > INT64_MAX - b.v)
		a->v = INT64_MAX;
	else if (b.v < 0 && a->v < INT64_MIN - b.v)
		a->v = INT64_MIN;
	else
		a->v += b.v;
}

static void max_int(struct store_int *a, struct store_int b)
{
	if (b.known && (!a->known || b.v > a->v))
		*a = b;
}

/* b's processes added to a's, as SQL's sum(), max(), min() would (an end only when every one has one). */
static void add_sums(struct sums *a, const struct sums *b)
{
	bool ends = a->last_end.known && b->last_end.known;

	add_int(&a->n, b->n);
	add_int(&a->measured, b->measured);
	add_int(&a->cpu, b->cpu);
	add_int(&a->life, b->life);
	add_int(&a->delay, b->delay);
	add_int(&a->iowait, b->iowait);
	add_int(&a->blocked, b->blocked);
	add_int(&a->netwait, b->netwait);
	add_int(&a->reclaim, b->reclaim);
	add_int(&a->oom, b->oom);
	max_int(&a->peak, b->peak);
	add_int(&a->rd, b->rd);
	add_int(&a->wr, b->wr);
	add_int(&a->rc, b->rc);
	add_int(&a->wc, b->wc);
	add_int(&a->tx, b->tx);
	add_int(&a->rx, b->rx);
	if (b->first_start.known && (!a->first_start.known || b->first_start.v < a->first_start.v))
		a->first_start = b->first_start;
	max_int(&a->last_end, b->last_end);
	a->last_end.known = ends;
	add_int(&a->idle, b->idle);
}

struct step_sums {
	size_t off;                 /* the step id: run_steps.text + off */
	const char *step;
	struct sums s;
	struct store_int tgid, start, ppid, pstart, end; /* TREE_COLUMNS */
	int64_t covered;            /* run_idle(): ns its children covered */
};

/* live_sql walked along the steps: the processes of the run the steps are at, summed per step. */
struct run_steps {
	struct sql_stmt *live;
	int rc;                     /* live's last sql_step() */
	int64_t run_id;             /* whose steps v holds */
	struct step_sums *v;
	size_t n, cap;
	char *text;
	size_t len, text_cap;
};

static int cmp_step_sums(const void *a, const void *b)
{
	return strcmp(((const struct step_sums *)a)->step, ((const struct step_sums *)b)->step);
}

static int keep_process(struct run_steps *r)
{
	struct col c = { r->live, 1 };
	const char *step = col_text(&c);
	size_t len = (size_t)sql_col_bytes(r->live, 1) + 1;
	struct step_sums *e;

	if (!step)
		return STORE_OK;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		void *v = realloc(r->v, cap * sizeof(*r->v));

		if (!v)
			return STORE_E_NOMEM;
		r->v = v;
		r->cap = cap;
	}
	if (r->len + len > r->text_cap) {
		size_t cap = r->text_cap ? 2 * r->text_cap : 4096;
		char *t;

		while (cap < r->len + len)
			cap *= 2;
		t = realloc(r->text, cap);
		if (!t)
			return STORE_E_NOMEM;
		r->text = t;
		r->text_cap = cap;
	}
	e = &r->v[r->n++];
	e->off = r->len;
	memcpy(r->text + r->len, step, len); /* a step id with a NUL in it ends there: compared as C strings */
	r->len += len;
	row_sums(&c, &e->s);
	e->s.reclaim = col_int(&c);
	c.i = sql_col_count(r->live) - TREE_NCOLS;
	e->tgid = col_int(&c);
	e->start = col_int(&c);
	e->ppid = col_int(&c);
	e->pstart = col_int(&c);
	e->end = col_int(&c);
	return STORE_OK;
}

/* ---- the time a process waited for its children (docs/tune.md, "The breakdown") ---- */

struct kid {
	size_t parent;              /* index into run_steps.v */
	int64_t from, to;           /* a child's life, clipped to its parent's */
};

static int cmp_by_process(const void *a, const void *b, void *arg)
{
	const struct run_steps *r = arg;
	const struct step_sums *x = &r->v[*(const size_t *)a], *y = &r->v[*(const size_t *)b];

	if (x->tgid.v != y->tgid.v)
		return x->tgid.v < y->tgid.v ? -1 : 1;
	return (x->start.v > y->start.v) - (x->start.v < y->start.v);
}

static int cmp_kids(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return (x->from > y->from) - (x->from < y->from);
}

static bool tree_known(const struct step_sums *e)
{
	return e->tgid.known && e->start.known && e->end.known && e->start.v >= 0 && e->end.v >= e->start.v;
}

/* a - b for b >= 0 (a hostile negative b counts as 0), never below 0: no overflow either way. */
static int64_t less(int64_t a, struct store_int b)
{
	if (!b.known || b.v <= 0)
		return a;
	return a > b.v ? a - b.v : 0;
}

/* The entry of the process (tgid, start) among the run's (by: indexes sorted by process), or SIZE_MAX. */
static size_t find_process(const struct run_steps *r, const size_t *by, size_t n, int64_t tgid, int64_t start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct step_sums *e = &r->v[by[mid]];

		if (e->tgid.v < tgid || (e->tgid.v == tgid && e->start.v < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && r->v[by[lo]].tgid.v == tgid && r->v[by[lo]].start.v == start ? by[lo] : SIZE_MAX;
}

/*
 * Each process's idle time: its life less the time at least one of its
 * traced children was alive (the union of their lives, within its own:
 * the children's own time covers it, a shell's wait or a `$(...)` read
 * alike) less the time its threads were measured busy (on a CPU, queued,
 * in uninterruptible sleep, in network calls), never below 0. A process
 * whose tree or figures are unknown keeps idle unknown. O(n log n).
 */
static int run_idle(struct run_steps *r)
{
	size_t *by = malloc((r->n + 1) * sizeof(*by)), nb = 0, nk = 0;
	struct kid *kids = malloc((r->n + 1) * sizeof(*kids));

	if (!by || !kids) {
		free(by);
		free(kids);
		return STORE_E_NOMEM;
	}
	for (size_t i = 0; i < r->n; i++) {
		r->v[i].covered = 0;
		if (tree_known(&r->v[i]))
			by[nb++] = i;
	}
	qsort_r(by, nb, sizeof(*by), cmp_by_process, r);
	for (size_t k = 0; k < nb; k++) {
		const struct step_sums *c = &r->v[by[k]];
		size_t p;

		if (!c->ppid.known || !c->pstart.known)
			continue;
		p = find_process(r, by, nb, c->ppid.v, c->pstart.v);
		if (p == SIZE_MAX)
			continue;
		kids[nk] = (struct kid){ .parent = p,
					 .from = c->start.v > r->v[p].start.v ? c->start.v : r->v[p].start.v,
					 .to = c->end.v < r->v[p].end.v ? c->end.v : r->v[p].end.v };
		if (kids[nk].to > kids[nk].from)
			nk++;
	}
	qsort(kids, nk, sizeof(*kids), cmp_kids);
	for (size_t k = 0; k < nk;) {
		size_t p = kids[k].parent;
		int64_t from = kids[k].from, to = kids[k].to, covered = 0;

		for (; k < nk && kids[k].parent == p; k++) {
			if (kids[k].from > to) { /* a gap: the interval so far is whole */
				covered += to - from;
				from = kids[k].from;
			}
			if (kids[k].to > to)
				to = kids[k].to;
		}
		r->v[p].covered = covered + (to - from);
	}
	for (size_t i = 0; i < r->n; i++) {
		struct sums *s = &r->v[i].s;
		int64_t idle;

		s->idle = (struct store_int){ 0 };
		if (!tree_known(&r->v[i]) || !s->life.known || !s->cpu.known)
			continue;
		idle = less(s->life.v > 0 ? s->life.v : 0, (struct store_int){ .known = true, .v = r->v[i].covered });
		idle = less(idle, s->cpu);
		idle = less(idle, s->delay);
		idle = less(idle, s->iowait);
		idle = less(idle, s->blocked);
		idle = less(idle, s->netwait);
		s->idle = (struct store_int){ .known = true, .v = idle > 0 ? idle : 0 };
	}
	free(by);
	free(kids);
	return STORE_OK;
}

/* Gather the processes of run_id (live_sql is ordered by run), one entry per step. */
static int load_run_steps(struct store *s, struct run_steps *r, int64_t run_id)
{
	size_t n = 0;
	int rc;

	r->n = r->len = 0;
	r->run_id = run_id;
	for (; r->rc == SQL_ROW; r->rc = sql_step(r->live)) {
		int64_t id = sql_col_i64(r->live, 0);

		if (id > run_id)
			break;
		if (id == run_id && (rc = keep_process(r)))
			return rc;
	}
	if (r->rc != SQL_ROW && r->rc != SQL_DONE)
		return lake_sql_fail(s, r->rc);
	if ((rc = run_idle(r)))
		return rc;
	for (size_t i = 0; i < r->n; i++)
		r->v[i].step = r->text + r->v[i].off;
	if (r->n > 1)
		qsort(r->v, r->n, sizeof(*r->v), cmp_step_sums);
	for (size_t i = 0; i < r->n; i++) {
		if (n && !strcmp(r->v[n - 1].step, r->v[i].step))
			add_sums(&r->v[n - 1].s, &r->v[i].s);
		else
			r->v[n++] = r->v[i];
	}
	r->n = n;
	return STORE_OK;
}

static const struct sums no_sums;

static const struct sums *step_sums_of(const struct run_steps *r, const char *step_id)
{
	struct step_sums k = { .step = step_id };
	const struct step_sums *f;

	if (!step_id || !r->n)
		return &no_sums;
	f = bsearch(&k, r->v, r->n, sizeof(k), cmp_step_sums);
	return f ? &f->s : &no_sums;
}

/* samples_sql's process so far: its key, and its number (counted as the key changes, row by row). */
struct sample_proc {
	char *key;                  /* "host\0boot\0" */
	size_t cap;
	int64_t tgid, start_ns, number;
};

/* The number of the row's process (columns 2 to 5): the last one's, or the next when the key changed. */
static int sample_process(struct sql_stmt *st, struct sample_proc *k, int64_t *number)
{
	const char *host = sql_col_text(st, 2), *boot = sql_col_text(st, 3);
	size_t hl = host ? strlen(host) : 0, bl = boot ? strlen(boot) : 0;
	int64_t tgid = sql_col_i64(st, 4), start = sql_col_i64(st, 5);

	if (!k->key || tgid != k->tgid || start != k->start_ns || strcmp(k->key, host ? host : "") ||
	    strcmp(k->key + strlen(k->key) + 1, boot ? boot : "")) {
		if (hl + bl + 2 > k->cap) {
			char *n = realloc(k->key, hl + bl + 2);

			if (!n)
				return STORE_E_NOMEM;
			k->key = n;
			k->cap = hl + bl + 2;
		}
		memcpy(k->key, host ? host : "", hl + 1);
		memcpy(k->key + hl + 1, boot ? boot : "", bl + 1);
		k->tgid = tgid;
		k->start_ns = start;
		k->number++;
	}
	*number = k->number;
	return STORE_OK;
}

static int row_to_tune_sample(struct sql_stmt *st, struct sample_proc *k, struct store_tune_sample *s)
{
	struct col c = { st, 0 };

	s->run_id = col_i64(&c);
	s->step = col_text(&c);
	if (sample_process(st, k, &s->process))
		return STORE_E_NOMEM;
	c.i = 6;
	s->real_ns = col_i64(&c);
	s->runtime_ns = col_int(&c);
	s->rss_bytes = col_int(&c);
	return STORE_OK;
}

/* ---- walking one statement -------------------------------------------------- */

/* Prepare sql with ?1, if it has one, bound to the pipeline (NULL: every run), ?2 to the newest runs kept. */
static int tune_prepare(struct store *s, const char *sql, const char *pipeline, struct sql_stmt **out)
{
	struct sql_stmt *st;
	int rc = lake_prepare(s, sql, false, &st);

	if (rc)
		return rc;
	if (sql_param_count(st) > 0)
		rc = pipeline ? sql_bind_text(st, 1, pipeline, strlen(pipeline)) : sql_bind_null(st, 1);
	if (rc == SQL_OK && sql_param_count(st) > 1)
		rc = s->tune_newest ? sql_bind_i64(st, 2, s->tune_newest) : sql_bind_null(st, 2);
	if (rc != SQL_OK) {
		rc = lake_sql_fail(s, rc);
		sql_finalize(st);
		return rc;
	}
	*out = st;
	return STORE_OK;
}

/* Hand each row of sql (?1 the pipeline) to visit. */
static int tune_walk(struct store *s, const char *sql, const char *pipeline, lake_row_fn visit, void *arg)
{
	struct sql_stmt *st = NULL;
	int rc = tune_prepare(s, sql, pipeline, &st);

	if (rc)
		return rc;
	rc = lake_rows_of(s, st, visit, arg, NULL);
	sql_finalize(st);
	return rc;
}

/* ---- the OOM kills' limits, by step ----------------------------------------------- */

/* The largest memcg_limit_bytes above 0 of each step's OOM kills (oom_sql), sorted by run and step. */
struct oom_limit {
	int64_t run_id;
	size_t off;                 /* the step id: oom_limits.text + off */
	struct store_int lim;
	bool huge;                  /* a limit past int64's: the largest, unknown (SQL's was a REAL) */
};

struct oom_limits {
	struct oom_limit *v;
	size_t n, cap;
	char *text;
	size_t len, text_cap;
	struct lake_json js; /* while loading: the detail being read */
};

/* A detail's memcg_limit_bytes if an integer above 0 there: 1, or 2 past int64 (*huge); 0 if none. */
static int oom_detail_limit(struct lake_json *js, const char *detail, size_t len, int64_t *lim)
{
	const struct json_node *root, *m;

	if (!detail || lake_json_parse(js, detail, len))
		return 0;
	root = json_root(&js->doc);
	m = json_member(&js->doc, root, "memcg_limit_bytes");
	if (!m || m->type != JSON_NUMBER || m->number == JSON_NUM_OTHER)
		return 0;
	if (json_get_i64(m, lim))
		return m->number == JSON_NUM_NEG ? 0 : 2;
	return *lim > 0;
}

static int oom_keep(struct sql_stmt *st, void *arg)
{
	struct oom_limits *o = arg;
	const char *step = sql_col_text(st, 1);
	size_t len = step ? strlen(step) + 1 : 0;
	int64_t lim = 0;
	int found = oom_detail_limit(&o->js, sql_col_text(st, 2), sql_col_bytes(st, 2), &lim);
	struct oom_limit *e;

	if (!step || !found) /* a step NULL joins no step */
		return STORE_OK;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		void *v = realloc(o->v, cap * sizeof(*o->v));

		if (!v)
			return STORE_E_NOMEM;
		o->v = v;
		o->cap = cap;
	}
	if (o->len + len > o->text_cap) {
		size_t cap = o->text_cap ? 2 * o->text_cap : 1024;
		char *t;

		while (cap < o->len + len)
			cap *= 2;
		t = realloc(o->text, cap);
		if (!t)
			return STORE_E_NOMEM;
		o->text = t;
		o->text_cap = cap;
	}
	e = &o->v[o->n++];
	e->run_id = sql_col_i64(st, 0);
	e->off = o->len;
	memcpy(o->text + o->len, step, len);
	o->len += len;
	e->huge = found == 2;
	e->lim = (struct store_int){ .known = found == 1, .v = lim };
	return STORE_OK;
}

static int cmp_oom(const void *a, const void *b, void *text)
{
	const struct oom_limit *x = a, *y = b;

	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	return strcmp((const char *)text + x->off, (const char *)text + y->off);
}

/* The runs' OOM kills, one entry per step: the largest limit (unknown if one was past int64's). */
static int oom_load(struct store *s, const char *pipeline, struct oom_limits *o)
{
	int rc = tune_walk(s, oom_sql, pipeline, oom_keep, o);
	size_t n = 0;

	lake_json_free(&o->js);
	if (rc)
		return rc;
	if (o->n > 1)
		qsort_r(o->v, o->n, sizeof(*o->v), cmp_oom, o->text);
	for (size_t i = 0; i < o->n; i++) {
		struct oom_limit *e = &o->v[i];

		if (n && !cmp_oom(&o->v[n - 1], e, o->text)) {
			o->v[n - 1].huge |= e->huge;
			if (e->lim.known && (!o->v[n - 1].lim.known || e->lim.v > o->v[n - 1].lim.v))
				o->v[n - 1].lim = e->lim;
		} else {
			o->v[n++] = *e;
		}
	}
	o->n = n;
	return STORE_OK;
}

static const struct store_int unknown_limit;

static struct store_int oom_limit_of(const struct oom_limits *o, int64_t run_id, const char *step)
{
	size_t lo = 0, hi = o->n;

	if (!step)
		return unknown_limit;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct oom_limit *e = &o->v[mid];
		int c = e->run_id != run_id ? (e->run_id < run_id ? -1 : 1) : strcmp(o->text + e->off, step);

		if (!c)
			return e->huge ? unknown_limit : e->lim;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return unknown_limit;
}

struct tune_visit {
	union {
		store_tune_run_fn run;
		store_tune_task_fn task;
		store_tune_sample_fn sample;
		store_tune_file_fn file;
	} fn;
	void *ctx;
	struct store *s;
	struct run_steps *runs;     /* store_tune_tasks' */
	struct oom_limits *oom;     /* ... */
	struct lake_json js;        /* ...: the tools joined */
	struct sample_proc proc;    /* samples_sql's */
};

static int visit_tune_run(struct sql_stmt *st, void *arg)
{
	struct tune_visit *v = arg;
	struct store_tune_run r;

	row_to_tune_run(st, &r);
	return v->fn.run(v->ctx, &r);
}

static int visit_tune_task(struct sql_stmt *st, void *arg)
{
	struct tune_visit *v = arg;
	struct run_steps *r = v->runs;
	int64_t run_id = sql_col_i64(st, 0);
	struct store_tune_task t;
	int rc;

	if (run_id != r->run_id && (rc = load_run_steps(v->s, r, run_id)))
		return rc;
	if ((rc = row_to_tune_task(st, step_sums_of(r, sql_col_text(st, 2)), &v->js, &t)))
		return rc;
	t.oom_limit_bytes = oom_limit_of(v->oom, t.run_id, t.step_id);
	return v->fn.task(v->ctx, &t);
}

static int visit_tune_sample(struct sql_stmt *st, void *arg)
{
	struct tune_visit *v = arg;
	struct store_tune_sample s;

	return row_to_tune_sample(st, &v->proc, &s) ?: v->fn.sample(v->ctx, &s);
}

static int visit_tune_file(struct sql_stmt *st, void *arg)
{
	struct tune_visit *v = arg;
	struct col c = { st, 0 };
	struct store_tune_file f;

	f.run_id = col_i64(&c);
	f.step = col_text(&c);
	f.host_id = col_text(&c);
	f.path = col_text(&c);
	f.mode = col_text(&c);
	if (!f.path || !f.mode)
		return 0; /* NOT NULL columns: only a lake changed by hand has them NULL */
	return v->fn.file(v->ctx, &f);
}

/* ---- the calls ------------------------------------------------------------ */

int store_tune_runs(struct store *s, const char *pipeline, store_tune_run_fn fn, void *ctx)
{
	struct tune_visit v = { .fn.run = fn, .ctx = ctx };

	return tune_walk(s, runs_sql, pipeline, visit_tune_run, &v);
}

/* Two statements: the steps, and their runs' live processes walked alongside (both by run). */
int store_tune_tasks(struct store *s, const char *pipeline, store_tune_task_fn fn, void *ctx)
{
	struct tune_visit v = { .fn.task = fn, .ctx = ctx, .s = s };
	struct run_steps r = { .run_id = -1 };
	struct oom_limits oom = { 0 };
	int rc;

	rc = oom_load(s, pipeline, &oom);
	if (rc)
		goto out;
	rc = tune_prepare(s, lake_read_text(&live_sql_read, s->db), pipeline, &r.live);
	if (rc)
		goto out;
	r.rc = sql_step(r.live);
	v.runs = &r;
	v.oom = &oom;
	rc = tune_walk(s, tasks_sql, pipeline, visit_tune_task, &v);
	sql_finalize(r.live);
out:
	free(r.v);
	free(r.text);
	free(oom.v);
	free(oom.text);
	lake_json_free(&v.js);
	return rc;
}

/* ---- the samples and files of the runs' processes: by index, or by one scan ------------ */

/*
 * Two ways to the same rows. By index (samples_sql, files_sql): process by
 * process through samples_by_process and files_process, each row then looked
 * up in its table by key: a cost per row, but only the runs' rows are
 * read. By one scan: the runs' processes in a hash table, then every row
 * of samples and of files in table order, each looked up there (over the
 * bench's 900,000 samples, five times less work per row), the samples held
 * and grouped by process before they are handed over. The scan is taken
 * when the runs hold at least 1/TUNE_SCAN_SHARE of the lake's processes,
 * and given up for the index when it would hold more than
 * TUNE_SCAN_MAX_SAMPLES samples (32 bytes each).
 */
#define TUNE_SCAN_SHARE 4
#define TUNE_SCAN_MAX_SAMPLES (8u << 20)
#define NO_PROC UINT32_MAX

/* The runs' processes and all of the lake's. */
static const char share_sql[] =
	"SELECT (SELECT count(*) FROM processes INDEXED BY processes_run WHERE run_id IN (SELECT member FROM ("
	SEL_MEMBERS ") m)), "
	"(SELECT count(*) FROM processes)";
/* The runs' processes, in samples_sql's order (each numbered by its place in it). */
static const char procs_sql[] =
	"SELECT p.host_id, p.boot_id, p.tgid, p.start_ns, m.top, p.step, " REAL_OFFSET " "
	"FROM (" SEL_MEMBERS ") m JOIN processes p INDEXED BY processes_run ON p.run_id = m.member ORDER BY " PROC_ORDER;
/* Every sample and file in the table's order: its key's, which SQLite reads without sorting (WITHOUT ROWID). */
static const char scan_samples_sql[] =
	"SELECT host_id, boot_id, tgid, start_ns, ts_ns, runtime_ns, rss_bytes FROM samples ORDER BY host_id, stream, seq";
static const char scan_files_sql[] =
	"SELECT host_id, boot_id, tgid, start_ns, path, mode FROM files ORDER BY host_id, stream, seq";

struct tproc {
	uint32_t boot;              /* its (host, boot) pair: scan.boots */
	int64_t tgid, start_ns;
	int64_t run_id, process;
	size_t step;                /* its step id: scan.text + step - 1; 0: none */
	struct store_int offset;
};

struct tsample {
	uint32_t proc;
	bool has_cpu, has_rss;
	int64_t ts, cpu, rss;
};

struct scan {
	struct tproc *procs;
	size_t nprocs, cap_procs;
	uint32_t *slots;            /* open addressing: an index into procs, or NO_PROC */
	size_t nslots;
	uint64_t seed;
	char **boots;               /* "host\0boot" of the runs' processes */
	size_t nboots, cap_boots;
	char *last;                 /* the pair last looked up, and what it was */
	size_t last_cap;
	uint32_t last_boot;
	char *text;                 /* the processes' step ids */
	size_t len, text_cap;
	struct tsample *v;
	size_t n, cap;
};

/* The pair's index, NO_PROC if none (add: make it). Rows come grouped by host and boot: one compare. */
static uint32_t scan_boot(struct scan *sc, const char *host, const char *boot, bool add, int *err)
{
	size_t hl = strlen(host), bl = strlen(boot);

	if (sc->last && !strcmp(sc->last, host) && !strcmp(sc->last + strlen(sc->last) + 1, boot) &&
	    (sc->last_boot != NO_PROC || !add))
		return sc->last_boot;
	if (hl + bl + 2 > sc->last_cap) {
		char *l = realloc(sc->last, hl + bl + 2);

		if (!l) {
			*err = STORE_E_NOMEM;
			return NO_PROC;
		}
		sc->last = l;
		sc->last_cap = hl + bl + 2;
	}
	memcpy(sc->last, host, hl + 1);
	memcpy(sc->last + hl + 1, boot, bl + 1);
	sc->last_boot = NO_PROC;
	for (size_t i = 0; i < sc->nboots; i++)
		if (!strcmp(sc->boots[i], host) && !strcmp(sc->boots[i] + hl + 1, boot))
			return sc->last_boot = (uint32_t)i;
	if (!add)
		return NO_PROC;
	if (sc->nboots == sc->cap_boots) {
		size_t cap = sc->cap_boots ? 2 * sc->cap_boots : 16;
		char **b = realloc(sc->boots, cap * sizeof(*b));

		if (!b) {
			*err = STORE_E_NOMEM;
			return NO_PROC;
		}
		sc->boots = b;
		sc->cap_boots = cap;
	}
	sc->boots[sc->nboots] = malloc(hl + bl + 2);
	if (!sc->boots[sc->nboots]) {
		*err = STORE_E_NOMEM;
		return NO_PROC;
	}
	memcpy(sc->boots[sc->nboots], sc->last, hl + bl + 2);
	return sc->last_boot = (uint32_t)sc->nboots++;
}

static size_t scan_hash(const struct scan *sc, uint32_t boot, int64_t tgid, int64_t start_ns)
{
	uint64_t h = hash_mix64(sc->seed ^ ((uint64_t)boot << 40) ^ (uint64_t)tgid);

	return (size_t)(hash_mix64(h ^ (uint64_t)start_ns) & (sc->nslots - 1));
}

static uint32_t scan_find(const struct scan *sc, uint32_t boot, int64_t tgid, int64_t start_ns)
{
	for (size_t i = scan_hash(sc, boot, tgid, start_ns);; i = (i + 1) & (sc->nslots - 1)) {
		uint32_t k = sc->slots[i];

		if (k == NO_PROC || (sc->procs[k].boot == boot && sc->procs[k].tgid == tgid &&
				     sc->procs[k].start_ns == start_ns))
			return k;
	}
}

static int scan_add_proc(struct sql_stmt *st, void *arg)
{
	struct scan *sc = arg;
	struct col c = { st, 0 };
	const char *host = col_text(&c), *boot = col_text(&c), *step;
	int err = 0;
	struct tproc *p;

	if (sc->nprocs == sc->cap_procs) {
		size_t cap = sc->cap_procs ? 2 * sc->cap_procs : 1024;
		void *v = realloc(sc->procs, cap * sizeof(*sc->procs));

		if (!v)
			return STORE_E_NOMEM;
		sc->procs = v;
		sc->cap_procs = cap;
	}
	p = &sc->procs[sc->nprocs];
	p->boot = scan_boot(sc, host ? host : "", boot ? boot : "", true, &err);
	if (err)
		return err;
	p->tgid = col_i64(&c);
	p->start_ns = col_i64(&c);
	p->run_id = col_i64(&c);
	step = col_text(&c);
	p->step = 0;
	if (step) {
		size_t len = strlen(step) + 1;

		if (sc->len + len > sc->text_cap) {
			size_t cap = sc->text_cap ? 2 * sc->text_cap : 65536;
			char *t;

			while (cap < sc->len + len)
				cap *= 2;
			t = realloc(sc->text, cap);
			if (!t)
				return STORE_E_NOMEM;
			sc->text = t;
			sc->text_cap = cap;
		}
		memcpy(sc->text + sc->len, step, len);
		p->step = sc->len + 1;
		sc->len += len;
	}
	p->process = (int64_t)sc->nprocs;
	p->offset = col_int(&c);
	sc->nprocs++;
	return STORE_OK;
}

/* The runs' processes, and the hash table over them. */
static int scan_load(struct store *s, const char *pipeline, struct scan *sc)
{
	int rc = tune_walk(s, procs_sql, pipeline, scan_add_proc, sc);

	if (rc)
		return rc;
	for (sc->nslots = 1024; sc->nslots < 2 * sc->nprocs; sc->nslots *= 2)
		;
	sc->slots = malloc(sc->nslots * sizeof(*sc->slots));
	if (!sc->slots)
		return STORE_E_NOMEM;
	memset(sc->slots, 0xff, sc->nslots * sizeof(*sc->slots));
	sql_random(s->db, &sc->seed, sizeof(sc->seed));
	for (size_t i = 0; i < sc->nprocs; i++) {
		const struct tproc *p = &sc->procs[i];
		size_t j = scan_hash(sc, p->boot, p->tgid, p->start_ns);

		while (sc->slots[j] != NO_PROC)
			j = (j + 1) & (sc->nslots - 1);
		sc->slots[j] = (uint32_t)i; /* a key twice cannot be: it is the processes' primary key */
	}
	return STORE_OK;
}

/* The process of a samples or files row (its first four columns), NO_PROC if not one of the runs'. */
static uint32_t scan_row_proc(struct scan *sc, struct sql_stmt *st, int *err)
{
	struct col c = { st, 0 };
	const char *host = col_text(&c), *boot = col_text(&c);
	uint32_t b = scan_boot(sc, host ? host : "", boot ? boot : "", false, err);
	int64_t tgid = col_i64(&c), start_ns = col_i64(&c);

	return b == NO_PROC ? NO_PROC : scan_find(sc, b, tgid, start_ns);
}

/* Hold the runs' samples; STORE_E_NOT_FOUND when there are more than a scan holds. */
static int scan_samples(struct store *s, struct scan *sc)
{
	struct sql_stmt *st;
	int rc = tune_prepare(s, scan_samples_sql, NULL, &st), stop = 0;

	if (rc)
		return rc;
	while (!stop && (rc = sql_step(st)) == SQL_ROW) {
		uint32_t k = scan_row_proc(sc, st, &stop);
		struct col c = { st, 4 };
		struct store_int cpu, rss;
		int64_t ts;

		if (stop || k == NO_PROC || !sc->procs[k].offset.known)
			continue;
		if (sc->n == sc->cap) {
			size_t cap = sc->cap ? 2 * sc->cap : 65536;
			void *v = cap <= TUNE_SCAN_MAX_SAMPLES ? realloc(sc->v, cap * sizeof(*sc->v)) : NULL;

			if (!v) {
				stop = cap <= TUNE_SCAN_MAX_SAMPLES ? STORE_E_NOMEM : STORE_E_NOT_FOUND;
				break;
			}
			sc->v = v;
			sc->cap = cap;
		}
		ts = col_i64(&c);
		cpu = col_int(&c);
		rss = col_int(&c);
		sc->v[sc->n++] = (struct tsample){ k, cpu.known, rss.known, ts, cpu.v, rss.v };
	}
	if (!stop && rc != SQL_DONE)
		stop = lake_sql_fail(s, rc);
	sql_finalize(st);
	return stop;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* The samples held, process by process in procs' order (a counting sort: each process's in table order). */
static int scan_hand_samples(struct scan *sc, store_tune_sample_fn fn, void *ctx)
{
	uint32_t *first = calloc(sc->nprocs + 1, sizeof(*first)), *order = malloc((sc->n ? sc->n : 1) * sizeof(*order));
	int stop = 0;

	if (!first || !order) {
		free(first);
		free(order);
		return STORE_E_NOMEM;
	}
	for (size_t i = 0; i < sc->n; i++)
		first[sc->v[i].proc + 1]++;
	for (size_t k = 0; k < sc->nprocs; k++)
		first[k + 1] += first[k];
	for (size_t i = 0; i < sc->n; i++)
		order[first[sc->v[i].proc]++] = (uint32_t)i;
	/* first[k] is now the end of process k's range, its start the end of k - 1's */
	for (size_t i = 0; i < sc->n && !stop; i++) {
		const struct tsample *x = &sc->v[order[i]];
		const struct tproc *p = &sc->procs[x->proc];
		struct store_tune_sample out = {
			.run_id = p->run_id,
			.step = p->step ? sc->text + p->step - 1 : NULL,
			.process = p->process,
			.real_ns = add_sat(x->ts, p->offset.v),
			.runtime_ns = { x->has_cpu, x->cpu },
			.rss_bytes = { x->has_rss, x->rss },
		};

		stop = fn(ctx, &out);
	}
	free(first);
	free(order);
	return stop;
}

static int scan_files(struct store *s, struct scan *sc, store_tune_file_fn fn, void *ctx)
{
	struct sql_stmt *st;
	int rc = tune_prepare(s, scan_files_sql, NULL, &st), stop = 0;

	if (rc)
		return rc;
	while (!stop && (rc = sql_step(st)) == SQL_ROW) {
		uint32_t k = scan_row_proc(sc, st, &stop);
		struct col c = { st, 4 };
		struct store_tune_file f;

		if (stop || k == NO_PROC || !sc->procs[k].step)
			continue;
		f.run_id = sc->procs[k].run_id;
		f.step = sc->text + sc->procs[k].step - 1;
		f.host_id = sql_col_text(st, 0);
		f.path = col_text(&c);
		f.mode = col_text(&c);
		if (f.path && f.mode)
			stop = fn(ctx, &f);
	}
	if (!stop && rc != SQL_DONE)
		stop = lake_sql_fail(s, rc);
	sql_finalize(st);
	return stop;
}

static void scan_free(struct scan *sc)
{
	for (size_t i = 0; i < sc->nboots; i++)
		free(sc->boots[i]);
	free(sc->boots);
	free(sc->procs);
	free(sc->slots);
	free(sc->last);
	free(sc->text);
	free(sc->v);
}

/* 1: scan, 0: by index, or a store_err. */
static int scan_or_index(struct store *s, const char *pipeline)
{
	struct sql_stmt *st;
	int rc = tune_prepare(s, share_sql, pipeline, &st), scan = 0;

	if (rc)
		return rc;
	rc = sql_step(st);
	if (rc == SQL_ROW)
		scan = sql_col_i64(st, 0) > 0 &&
		       sql_col_i64(st, 0) * TUNE_SCAN_SHARE >= sql_col_i64(st, 1);
	else
		scan = lake_sql_fail(s, rc);
	sql_finalize(st);
	return scan;
}

int store_tune_activity(struct store *s, const char *pipeline, store_tune_sample_fn on_sample,
			store_tune_file_fn on_file, void *ctx)
{
	struct tune_visit vs = { .fn.sample = on_sample, .ctx = ctx }, vf = { .fn.file = on_file, .ctx = ctx };
	struct scan sc = { .last_boot = NO_PROC };
	int rc = scan_or_index(s, pipeline);

	if (rc < 0)
		return rc;
	if (rc == 0) {
		rc = tune_walk(s, samples_sql, pipeline, visit_tune_sample, &vs);
		free(vs.proc.key);
		return rc ? rc : tune_walk(s, files_sql, pipeline, visit_tune_file, &vf);
	}
	rc = scan_load(s, pipeline, &sc);
	if (!rc)
		rc = scan_samples(s, &sc);
	if (rc == STORE_E_NOT_FOUND) { /* too many to hold: by index, streamed */
		free(sc.v);
		sc.v = NULL;
		sc.n = sc.cap = 0;
		rc = tune_walk(s, samples_sql, pipeline, visit_tune_sample, &vs);
	} else if (!rc) {
		rc = scan_hand_samples(&sc, on_sample, ctx);
	}
	if (!rc)
		rc = scan_files(s, &sc, on_file, ctx);
	scan_free(&sc);
	free(vs.proc.key);
	return rc;
}

int store_tune_begin(struct store *s, uint32_t newest)
{
	int rc = sql_exec(s->db, "BEGIN DEFERRED");

	s->tune_newest = newest;
	return rc == SQL_OK ? STORE_OK : lake_sql_fail(s, rc);
}

void store_tune_end(struct store *s)
{
	/* Nothing was written: ending the read transaction cannot lose anything. */
	sql_exec(s->db, "COMMIT");
	s->tune_newest = 0;
}

const struct lake_read lake_tune_sql[] = {
	{ runs_sql, NULL }, { live_sql, live_sql_pg }, { tasks_sql, NULL }, { oom_sql, NULL }, { samples_sql, NULL },
	{ files_sql, NULL }, { share_sql, NULL }, { procs_sql, NULL }, { scan_samples_sql, NULL },
	{ scan_files_sql, NULL }, { NULL, NULL },
};
