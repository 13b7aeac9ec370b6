/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake: the calls of store.h's "reading" part, for the CLI
 * (and the analysis and web view to come). Each walks the rows of one
 * prepared statement and hands them to a callback; strings live until
 * the callback returns. The row functions read their statement's
 * columns in the order store.c's stmt_sql[] lists them (a run's and a
 * step's: in the order of lake/schema.c's map, lake_select). The JSON columns
 * are looked into here, in C (read_json.h), the same on either engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "read_json.h"
#include "records.h"
#include "schema.h"

/* Columns are read in order: a cursor over the current row. */
struct row {
	struct sql_stmt *st;
	int i;
};

static const char *next_text(struct row *r)
{
	return sql_col_text(r->st, r->i++);
}

static int64_t next_i64(struct row *r)
{
	return sql_col_i64(r->st, r->i++);
}

static struct store_int next_int(struct row *r)
{
	struct store_int v = { .known = sql_col_type(r->st, r->i) == SQL_INTEGER };

	v.v = sql_col_i64(r->st, r->i++);
	return v;
}

/* A REAL column (an integer is taken too); false when NULL or of another type. */
static bool next_real(struct row *r, double *v)
{
	int type = sql_col_type(r->st, r->i);

	*v = sql_col_double(r->st, r->i++);
	return type == SQL_FLOAT || type == SQL_INTEGER;
}

/* JSON text: kept only when json_parse accepts it. */
static const char *next_json(struct row *r, struct lake_json *js)
{
	const char *t = sql_col_text(r->st, r->i);

	return lake_json_valid(js, t, sql_col_bytes(r->st, r->i++));
}

/* A JSON array's values joined with sep (lake_json_join), and the array's text in *json if valid. */
static const char *next_joined(struct row *r, struct lake_json *js, const char *sep, const char **json)
{
	const char *t = sql_col_text(r->st, r->i);
	size_t len = sql_col_bytes(r->st, r->i++);

	*json = lake_json_valid(js, t, len);
	return lake_json_join(js, t, len, sep);
}

/*
 * A row of a read made from lake/schema.c's map (struct lake_select: ST_RUNS_LIST, ST_RUN_BY_*,
 * ST_RUN_STEPS_LIST): each column into its member of dst (a struct store_run, store_step), which starts
 * zeroed. STORE_E_NOMEM when a JSON array cannot be joined.
 */
int lake_select_row(struct sql_stmt *st, int first, struct lake_json *js, const struct lake_select *sel, void *dst,
		    size_t size)
{
	struct row c = { st, first };
	char *d = dst;
	int rc = STORE_OK;

	memset(dst, 0, size);
	for (unsigned i = 0; i < sel->nfields; i++) {
		const struct lake_select_field *f = &sel->fields[i];
		const char *t, *json = NULL;
		struct store_int n;
		int64_t v;
		double x;
		bool b;

		switch (f->kind) {
		case LS_I64:
			v = next_i64(&c);
			memcpy(d + f->off, &v, sizeof(v));
			break;
		case LS_INT:
			n = next_int(&c);
			memcpy(d + f->off, &n, sizeof(n));
			break;
		case LS_TEXT:
			t = next_text(&c);
			memcpy(d + f->off, &t, sizeof(t));
			break;
		case LS_CHARS:
			t = next_text(&c);
			snprintf(d + f->off, f->len, "%s", t ? t : "");
			break;
		case LS_FLAG:
			b = next_i64(&c) != 0;
			memcpy(d + f->off, &b, sizeof(b));
			break;
		case LS_REAL:
			b = next_real(&c, &x);
			memcpy(d + f->off, &x, sizeof(x));
			memcpy(d + f->off2, &b, sizeof(b));
			break;
		case LS_JSON:
			t = next_json(&c, js);
			memcpy(d + f->off, &t, sizeof(t));
			break;
		case LS_JOINED:
			t = next_joined(&c, js, f->sep, &json);
			memcpy(d + f->off, &t, sizeof(t));
			memcpy(d + f->off2, &json, sizeof(json));
			if (!t)
				rc = STORE_E_NOMEM;
			break;
		default: /* a kind schema.c names and read.c lacks (tests/test_lake_schema_writes.c) */
			return STORE_E_SQL;
		}
	}
	return rc;
}

static const struct store_int unknown_int;

/*
 * The peak as the report takes it (proc_peak_rss()): the final image's
 * own at exit, else the highest the samples saw, else rusage's at exit.
 */
static void process_peak(struct store_process *p)
{
	bool exited = p->from.exited;

	if (exited && p->from.own_peak.known) {
		p->peak_rss_bytes = p->from.own_peak;
		p->peak_rss_source = "exit";
	} else if (p->from.sampled_peak.known) {
		p->peak_rss_bytes = p->from.sampled_peak;
		p->peak_rss_source = "sampled";
	} else if (exited && p->from.maxrss.known) {
		p->peak_rss_bytes = p->from.maxrss;
		p->peak_rss_source = "rusage";
	}
}

/* I/O figures exist only where the kernel accounted them; network ones at exit if traced, else sampled. */
static void process_io(struct store_process *p)
{
	struct store_int exit_flags = p->from.exit_flags, state_flags = p->from.state_flags;
	bool traced = state_flags.known && (state_flags.v & TR_PSTATE_TRACED);
	bool io = p->from.exited && !(exit_flags.known && (exit_flags.v & TR_EXIT_NO_IO_ACCOUNTING));

	if (!io)
		p->read_bytes = p->write_bytes = p->rchar = p->wchar = unknown_int;
	if (!(p->from.exited && traced)) {
		p->net_tx_bytes = p->from.sampled_tx;
		p->net_rx_bytes = p->from.sampled_rx;
	}
	p->files_traced = p->files_traced || traced;
}

/* ST_RUN_PROCS_LIST (lake_process_select): the row, and what the report would say of its peak and I/O. */
void lake_process_row(struct sql_stmt *st, int first, struct lake_json *js, struct store_process *p)
{
	lake_select_row(st, first, js, &lake_process_select, p, sizeof(*p)); /* no JSON array to join: cannot fail */
	process_peak(p);
	process_io(p);
}

/* ST_RUN_SIGNALS_LIST */
static void row_to_signal(struct sql_stmt *st, struct lake_json *js, struct store_signal *sig)
{
	struct row c = { st, 0 };
	struct store_int pid;

	memset(sig, 0, sizeof(*sig));
	sig->kind = next_text(&c);
	if (!sig->kind)
		sig->kind = "?";
	sig->source = next_text(&c);
	pid = next_int(&c);
	sig->has_pid = pid.known;
	sig->pid = pid.v;
	sig->start_ns = next_int(&c);
	sig->step = next_text(&c);
	sig->tool = next_text(&c);
	sig->detail = next_json(&c, js);
}

/* ---- walking a query's rows (db.h) -------------------------------------- */

int lake_rows_of(struct store *s, struct sql_stmt *st, lake_row_fn visit, void *arg, int *rows)
{
	int rc, stop = STORE_OK;

	while (!stop && (rc = sql_step(st)) == SQL_ROW) {
		if (rows)
			(*rows)++;
		stop = visit(st, arg);
	}
	if (!stop && rc != SQL_DONE)
		stop = lake_sql_fail(s, rc);
	return stop;
}

int lake_prepare(struct store *s, const char *sql, bool streamed, struct sql_stmt **out)
{
	struct sql_stmt *st = NULL;
	int rc = streamed ? sql_prepare_streamed(s->db, sql, &st) : sql_prepare(s->db, sql, false, &st);

	if (rc != SQL_OK) {
		rc = lake_sql_fail(s, rc);
		sql_finalize(st);
		st = NULL;
	}
	*out = st;
	return rc;
}

int lake_rows(struct store *s, const char *sql, bool streamed, const int64_t *binds, int nbinds, lake_row_fn visit,
	      void *arg)
{
	struct sql_stmt *st;
	int rc = lake_prepare(s, sql, streamed, &st);

	for (int i = 0; rc == STORE_OK && i < nbinds; i++)
		if ((rc = sql_bind_i64(st, i + 1, binds[i])) != SQL_OK)
			rc = lake_sql_fail(s, rc);
	if (rc == STORE_OK)
		rc = lake_rows_of(s, st, visit, arg, NULL);
	sql_finalize(st);
	return rc;
}

/* Every row of a bound persistent query to visit; *rows counts them. The visitor's non-zero return, or a store_err. */
static int each_row(struct bind *b, lake_row_fn visit, void *arg, int *rows)
{
	int rc = lake_bind_check(b);

	if (rc)
		return rc;
	rc = lake_rows_of(b->s, b->st, visit, arg, rows);
	sql_reset(b->st);
	return rc;
}

struct run_visit {
	store_run_fn fn;
	void *ctx;
	struct lake_json js;
};

static int visit_run(struct sql_stmt *st, void *arg)
{
	struct run_visit *v = arg;
	struct store_run r;

	return lake_select_row(st, 0, &v->js, &lake_run_select, &r, sizeof(r)) ?: v->fn(v->ctx, &r);
}

struct step_visit {
	store_step_fn fn;
	void *ctx;
	struct lake_json js;
};

static int visit_step(struct sql_stmt *st, void *arg)
{
	struct step_visit *v = arg;
	struct store_step s;

	return lake_select_row(st, 0, &v->js, &lake_step_select, &s, sizeof(s)) ?: v->fn(v->ctx, &s);
}

struct process_visit {
	store_process_fn fn;
	void *ctx;
	struct lake_json js;
};

static int visit_process(struct sql_stmt *st, void *arg)
{
	struct process_visit *v = arg;
	struct store_process p;

	lake_process_row(st, 0, &v->js, &p);
	return v->fn(v->ctx, &p);
}

struct file_visit {
	store_file_fn fn;
	void *ctx;
};

static int visit_file(struct sql_stmt *st, void *arg)
{
	struct file_visit *v = arg;
	struct store_file f = {
		.path = sql_col_text(st, 0),
		.mode = sql_col_text(st, 1),
	};

	if (!f.path)
		f.path = "";
	return v->fn(v->ctx, &f);
}

struct signal_visit {
	store_signal_fn fn;
	void *ctx;
	struct lake_json js;
};

static int visit_signal(struct sql_stmt *st, void *arg)
{
	struct signal_visit *v = arg;
	struct store_signal sig;

	row_to_signal(st, &v->js, &sig);
	return v->fn(v->ctx, &sig);
}

/* ---- the calls ------------------------------------------------------------ */

int store_runs(struct store *s, store_run_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUNS_LIST);
	struct run_visit v = { .fn = fn, .ctx = ctx };
	int rows = 0, rc = each_row(&b, visit_run, &v, &rows);

	lake_json_free(&v.js);
	return rc;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The runs one lookup finds: STORE_OK when there were some (or the walk stopped), NOT_FOUND when none. */
static int runs_by(struct store *s, enum stmt_id id, const char *name, struct run_visit *v)
{
	struct bind b = lake_bind_start(s, id);
	int rows = 0, rc;

	if (id == ST_RUN_BY_ID)
		lake_b_i64(&b, strtoll(name, NULL, 10));
	else
		lake_b_str(&b, name);
	rc = each_row(&b, visit_run, v, &rows);
	return rc || rows ? rc : STORE_E_NOT_FOUND;
}

int store_run(struct store *s, const char *name, store_run_fn fn, void *ctx)
{
	struct run_visit v = { .fn = fn, .ctx = ctx };
	int rc = STORE_E_NOT_FOUND;

	/* A run key (BOOT-TGID-START) and a number never look alike; a pipeline's run id may be a number. */
	if (all_digits(name) && strlen(name) < 19)
		rc = runs_by(s, ST_RUN_BY_ID, name, &v);
	if (rc == STORE_E_NOT_FOUND)
		rc = runs_by(s, ST_RUN_BY_KEY, name, &v);
	if (rc == STORE_E_NOT_FOUND)
		rc = runs_by(s, ST_RUN_BY_NAME, name, &v);
	lake_json_free(&v.js);
	return rc;
}

int store_run_steps(struct store *s, int64_t run_id, store_step_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUN_STEPS_LIST);
	struct step_visit v = { .fn = fn, .ctx = ctx };
	int rows = 0, rc;

	lake_b_i64(&b, run_id);
	rc = each_row(&b, visit_step, &v, &rows);
	lake_json_free(&v.js);
	return rc;
}

int store_run_processes(struct store *s, int64_t run_id, store_process_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUN_PROCS_LIST);
	struct process_visit v = { .fn = fn, .ctx = ctx };
	int rows = 0, rc;

	lake_b_i64(&b, run_id);
	rc = each_row(&b, visit_process, &v, &rows);
	lake_json_free(&v.js);
	return rc;
}

int store_process_files(struct store *s, const struct store_process *p, store_file_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_PROC_FILES_LIST);
	struct file_visit v = { fn, ctx };
	int rows = 0;

	lake_b_str(&b, p->host_id);
	lake_b_str(&b, p->boot_id);
	lake_b_i64(&b, p->tgid);
	lake_b_i64(&b, p->start_ns);
	return each_row(&b, visit_file, &v, &rows);
}

int store_run_signals(struct store *s, int64_t run_id, store_signal_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUN_SIGNALS_LIST);
	struct signal_visit v = { .fn = fn, .ctx = ctx };
	int rows = 0, rc;

	lake_b_i64(&b, run_id);
	rc = each_row(&b, visit_signal, &v, &rows);
	lake_json_free(&v.js);
	return rc;
}

/* The report's payload and the run's state, composed with the caller's additions (lake_json_report). */
struct report_visit {
	store_text_fn fn;
	void *ctx;
	const char *signals, *tune;
	bool bad_additions;         /* signals or tune not JSON */
};

static int visit_report(struct sql_stmt *st, void *arg)
{
	struct report_visit *v = arg;
	size_t len = sql_col_bytes(st, 0); /* before the bytes: PostgreSQL's are unescaped anew at each call */
	const char *payload = sql_col_blob(st, 0);
	struct obuf o;
	int rc;

	obuf_init_mem(&o, 2 * len + (v->signals ? strlen(v->signals) : 0) + (v->tune ? strlen(v->tune) : 0) + 4096);
	rc = lake_json_report(&o, payload ? payload : "", payload ? len : 0, sql_col_text(st, 1), v->signals, v->tune);
	/* No report object: the lake was changed by hand; signals or tune not JSON: the caller's mistake. */
	if (!rc)
		rc = v->fn(v->ctx, o.buf, o.len);
	else if ((v->bad_additions = rc == -EINVAL))
		rc = STORE_E_SQL;
	else
		rc = rc == -ENOENT ? STORE_E_NOT_FOUND : STORE_E_NOMEM;
	obuf_free(&o);
	return rc;
}

int store_run_report(struct store *s, int64_t run_id, const char *signals_json, const char *tune_json,
		     store_text_fn fn, void *ctx)
{
	struct bind b = lake_bind_start(s, ST_RUN_REPORT_JSON);
	struct report_visit v = { .fn = fn, .ctx = ctx, .signals = signals_json, .tune = tune_json };
	int rows = 0, rc;

	lake_b_i64(&b, run_id);
	rc = each_row(&b, visit_report, &v, &rows);
	if (v.bad_additions)
		snprintf(s->errmsg, sizeof(s->errmsg), "the signals or tune to add to run %lld's report are not JSON",
			 (long long)run_id);
	return rc || rows ? rc : STORE_E_NOT_FOUND;
}
