/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer report: what the lake holds about runs, of both modes (tracer
 * run's reports, the daemons' live runs), read through the lake's own
 * module (lake/store.h), read-only.
 *
 *   tracer report --db FILE [--json]       one line (object) per run: id, host, start, duration, state, exit,
 *                                          pipeline
 *   tracer report --db FILE RUN            a report run: its summary as tracer run printed it, its state, its
 *                                          signals; a live run: its header, steps and signals from the tables
 *   tracer report --db FILE RUN --json     a tracer.run.v1 report with "state": the stored one, or one rebuilt
 *                                          from the tables (docs/lake.md, "Querying")
 *   tracer report --db FILE RUN --html OUT the same report as one self-contained HTML page, in OUT
 *                                          (view/html.c, docs/html.md)
 *
 * RUN is the number in the first column, the run's key, or the pipeline's
 * run id. Everything printed came from a host: in text, control
 * characters are shown as '?', so a command line cannot drive the
 * terminal; in JSON every string goes through records/json.h's writer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_report.h"
#include "cmd_tune.h"
#include "run_json.h"
#include "run_tune.h"
#include "textout.h"
#include "cputime.h"
#include "html.h"
#include "json.h"
#include "store.h"

#define HOST_SHORT 12 /* hex digits of a host id in the list, as git shortens hashes */
#define HTML_JSON_MAX ((size_t)4 << 30) /* the report an HTML page embeds, held in memory: at most 4 GiB */


static void usage(FILE *f)
{
	fprintf(f, "usage: tracer report --db FILE [--json] [RUN [--html OUT]]\n"
		   "Lists the runs in the lake FILE (the --db of tracer-ingest), of tracer run and of the daemons;\n"
		   "with RUN (a number from the list, a run key, or the pipeline's run id), shows that run: its\n"
		   "summary, or its steps, and its signals. --json: the list, or the run's tracer.run.v1 report.\n"
		   "--html OUT: the run's report as one self-contained HTML page, written to OUT.\n");
}

static void format_seconds(char *out, size_t outlen, int64_t ns, const char *suffix)
{
	snprintf(out, outlen, "%.1fs%s", (double)ns / 1e9, suffix);
}

/*
 * How long a run or step took: end - start; without an end (running, or
 * lost), the time up to the last update, with a '+' (at least that long).
 */
static void format_span(char *out, size_t outlen, struct store_int start, struct store_int end,
			struct store_int last_update)
{
	if (start.known && end.known && end.v >= start.v)
		format_seconds(out, outlen, end.v - start.v, "");
	else if (start.known && !end.known && last_update.known && last_update.v >= start.v)
		format_seconds(out, outlen, last_update.v - start.v, "+");
	else
		snprintf(out, outlen, "-");
}

/* The exit: the status, else the signal that killed it ("sig9"), else "-". */
static void format_exit(char *out, size_t outlen, struct store_int code, struct store_int sig)
{
	if (code.known)
		snprintf(out, outlen, "%" PRId64, code.v);
	else if (sig.known && sig.v > 0)
		snprintf(out, outlen, "sig%" PRId64, sig.v);
	else
		snprintf(out, outlen, "-");
}

/* What the list calls a run: its pipeline, else its engine, else its command. */
static const char *run_label(const struct store_run *r)
{
	if (r->pipeline)
		return r->pipeline;
	return r->engine ? r->engine : r->command;
}

/* Standard output through the writer: a buffer flushed with write(). */
struct out {
	struct obuf o;
	struct json j;
	char buf[64 << 10];
};

static void out_init(struct out *w)
{
	fflush(stdout);
	obuf_init_fd(&w->o, STDOUT_FILENO, w->buf, sizeof(w->buf));
	json_init(&w->j, &w->o);
}

/* 0, or 1 with a message when stdout could not take it. */
static int out_finish(struct out *w)
{
	int err;

	obuf_putc(&w->o, '\n');
	err = obuf_flush(&w->o);
	if (err)
		fprintf(stderr, "tracer report: cannot write the output: %s\n", strerror(-err));
	return err ? 1 : 0;
}

static int store_failed(struct store *st, const char *db, int rc)
{
	fprintf(stderr, "tracer report: %s: %s: %s\n", db, store_strerror(rc), store_last_error(st));
	return 1;
}

/* ---- the list ----------------------------------------------------------------- */

static int print_run_line(void *ctx, const struct store_run *r)
{
	char start[32], dur[32], exit_code[32];
	int *rows = ctx;

	if ((*rows)++ == 0)
		printf("%-5s %-*s %-19s %10s  %-9s %5s  %s\n", "RUN", HOST_SHORT, "HOST", "START (UTC)", "DURATION",
		       "STATE", "EXIT", "PIPELINE");
	format_time(start, sizeof(start), r->start_ns);
	format_span(dur, sizeof(dur), r->start_ns, r->end_ns, r->last_update_ns);
	format_exit(exit_code, sizeof(exit_code), r->exit_code, r->signal);
	printf("%-5" PRId64 " %-*.*s %-19s %10s  ", r->run_id, HOST_SHORT, HOST_SHORT, r->host_id, start, dur);
	put_field(r->state, 9);
	printf("%5s  ", exit_code);
	put_clean(run_label(r), false);
	putchar('\n');
	return 0;
}

static int list_runs(struct store *st, const char *db, bool as_json)
{
	struct out w;
	int rows = 0, rc;

	if (!as_json) {
		rc = store_runs(st, print_run_line, &rows);
		if (rc)
			return store_failed(st, db, rc);
		if (rows == 0)
			printf("no runs in %s yet\n", db);
		return 0;
	}
	out_init(&w);
	json_object_begin(&w.j);
	json_key(&w.j, "runs");
	json_array_begin(&w.j);
	rc = store_runs(st, run_json_list_item, &w.j);
	if (rc)
		return store_failed(st, db, rc);
	json_array_end(&w.j);
	json_object_end(&w.j);
	return out_finish(&w);
}

/* ---- one run as text ------------------------------------------------------------ */

static int print_signal(void *ctx, const struct store_signal *sig)
{
	int *n = ctx;

	if ((*n)++ == 0)
		printf("\nsignals:\n");
	printf("  ");
	put_clean(sig->kind, false);
	if (sig->has_pid)
		printf(" pid %" PRId64, sig->pid);
	if (sig->step) {
		printf(" step ");
		put_clean(sig->step, false);
	}
	if (sig->tool) {
		printf(" tool ");
		put_clean(sig->tool, false);
	}
	if (sig->detail) {
		printf("  ");
		put_clean(sig->detail, false);
	}
	putchar('\n');
	return 0;
}

static int print_signals(struct store *st, int64_t run_id)
{
	int n = 0, rc = store_run_signals(st, run_id, print_signal, &n);

	if (!rc && n == 0)
		printf("\nsignals: none\n");
	return rc;
}

static void print_summary(const struct store_run *r)
{
	if (r->summary) {
		put_clean(r->summary, true);
		if (r->summary[0] && r->summary[strlen(r->summary) - 1] != '\n')
			putchar('\n');
	} else {
		printf("(the report of run %" PRId64 " carried no summary)\n", r->run_id);
	}
	printf("state: ");
	put_clean(r->state ? r->state : "-", false);
	putchar('\n');
}

/* A labelled header line: "  label     value" with the value cleaned. */
static void print_header_line(const char *label, const char *value)
{
	printf("  %-10s ", label);
	put_clean(value ? value : "-", false);
	putchar('\n');
}

static void print_live_header(const struct store_run *r)
{
	char text[64], more[80];

	printf("run %" PRId64 ": ", r->run_id);
	put_clean(run_label(r), false);
	putchar('\n');
	print_header_line("engine", r->engine);
	print_header_line("state", r->state);
	print_header_line("host", r->host_id);
	format_time(text, sizeof(text), r->start_ns);
	snprintf(more, sizeof(more), "%s%s", text, r->start_ns.known ? " UTC" : "");
	print_header_line("start", more);
	format_span(text, sizeof(text), r->start_ns, r->end_ns, r->last_update_ns);
	print_header_line("duration", text);
	format_exit(text, sizeof(text), r->exit_code, r->signal);
	print_header_line("exit", text);
	if (r->processes.known) {
		snprintf(text, sizeof(text), "%" PRId64 " (%" PRId64 " running)", r->processes.v,
			 r->running_processes.known ? r->running_processes.v : 0);
		print_header_line("processes", text);
	}
	print_header_line("key", r->run_key);
	print_header_line("detected", r->detected_by);
}

struct step_table {
	int rows;
	struct store_int run_last_update; /* a step without its own last update: the run's */
	struct run_spans spans;           /* the steps' times, for the queue split (docs/live.md, "Queue time") */
};

static int print_step(void *ctx, const struct store_step *s)
{
	struct step_table *t = ctx;
	char wall[32], cpu[32], rss[32];

	if (t->rows++ == 0)
		printf("\n  %-16s %-24s %-9s %-10s %-10s %-10s %s\n", "ID", "NAME", "STATE", "WALL", "CPU", "PEAK RSS",
		       "TOOLS");
	format_span(wall, sizeof(wall), s->start_ns, s->end_ns,
		    s->last_update_ns.known ? s->last_update_ns : t->run_last_update);
	if (s->cpu_ns.known)
		format_seconds(cpu, sizeof(cpu), s->cpu_ns.v, "");
	else
		snprintf(cpu, sizeof(cpu), "-");
	format_bytes(rss, sizeof(rss), s->peak_rss_bytes);
	printf("  ");
	put_field(s->id, 16);
	put_field(s->name, 24);
	put_field(s->state, 9);
	printf("%-10s %-10s %-10s ", wall, cpu, rss);
	put_clean(s->tools, false);
	if (s->submitted_ns.known) { /* a cluster job's step */
		printf("  [job ");
		put_clean(s->job_id ? s->job_id : "?", false);
		printf(" on ");
		put_clean(s->job_host ? s->job_host : "?", false);
		format_seconds(wall, sizeof(wall), s->queued_ns.known ? s->queued_ns.v : 0, "");
		printf(", queued %s]", wall);
	}
	putchar('\n');
	run_spans_add(&t->spans, s);
	return 0;
}

/* A run with cluster jobs: how much of its wall time a job waited in the queue while no step ran. */
static void print_queue(const struct store_run *r, const struct step_table *t)
{
	char q[32], run[32];
	int64_t wall, queued;

	printf("\n%" PRId64 " cluster job%s", r->jobs.v, r->jobs.v == 1 ? "" : "s");
	if (!run_spans_split(&t->spans, r, &wall, &queued)) {
		printf("\n");
		return;
	}
	format_seconds(q, sizeof(q), queued, "");
	format_seconds(run, sizeof(run), wall - queued, "");
	printf(": queued %s of the wall time (a job waited in the scheduler's queue, no step ran), running %s\n", q,
	       run);
}

static int print_live_run(struct store *st, const struct store_run *r)
{
	struct step_table t = { .run_last_update = r->last_update_ns };
	int rc;

	print_live_header(r);
	rc = store_run_steps(st, r->run_id, print_step, &t);
	if (!rc && t.rows == 0)
		printf("\nsteps: none\n");
	if (!rc && r->jobs.known && r->jobs.v > 0)
		print_queue(r, &t);
	run_spans_free(&t.spans);
	return rc;
}

/* ---- one run: its analysis as text -------------------------------------------- */

/* The profile of a step of the run: the same pipeline and name. */
static const struct an_profile *profile_of(const struct run_tune *rt, const struct an_step *t)
{
	for (size_t i = 0; i < rt->nprof; i++)
		if (!strcmp(rt->prof[i].name, t->name))
			return &rt->prof[i];
	return NULL;
}

static void text_bytes(char *out, size_t len, uint64_t b)
{
	format_bytes(out, len, (struct store_int){ .known = true, .v = b > INT64_MAX ? INT64_MAX : (int64_t)b });
}

/* A run's cluster jobs: what their allocations held on their nodes (docs/cost.md, "Cluster jobs"). */
static void text_jobs_cost(const struct cost_line *l)
{
	if (l->job_cpu_hours <= 0 && l->job_gib_hours <= 0)
		return;
	printf("  cluster jobs: %.4f CPU-hours and %.4f GiB-hours reserved on their nodes (allocation x time on the "
	       "node)", l->job_cpu_hours, l->job_gib_hours);
	if (l->jobs_reserved_usd >= 0)
		printf(", $%.4f", l->jobs_reserved_usd);
	printf("\n");
}

static void text_cost(const struct run_tune *rt)
{
	if (!rt->cost.n) {
		printf("  cost: not known until the run ends\n");
		return;
	}
	if (rt->price < 0)
		printf("  cost: not priced: its host's instance type is unknown or not in the price table (set\n"
		       "  instance_type and region, or price_per_hour, in that host's tracer.conf: docs/cost.md)\n");
	else
		printf("  cost: reserved $%.4f (%.4f h at $%.4f/h, %s), used $%.4f, held while no step ran $%.4f\n",
		       rt->cost.lines[0].reserved_usd, rt->cost.lines[0].hours, rt->price,
		       rt->price_source == COST_PRICE_CONFIG ? "the host's price_per_hour" : "the price table",
		       rt->cost.lines[0].used_usd < 0 ? 0 : rt->cost.lines[0].used_usd, rt->cost.lines[0].idle_usd);
	text_jobs_cost(&rt->cost.lines[0]);
}

static void run_tune_text(const struct run_tune *rt, const char *db)
{
	const struct an_run *r;
	char mem[32];

	if (!rt->loaded || rt->run < 0)
		return;
	r = &rt->ti.in.runs[rt->run];
	printf("\ntune (its pipeline's last %d runs at most; tracer tune --db %s --run %" PRId64 " says more):\n",
	       RUN_TUNE_WINDOW, db, r->lake_id);
	for (size_t i = 0; i < rt->nslow; i++) {
		printf("  slower than usual: ");
		put_clean(rt->ti.in.steps[rt->slow[i].step].name, false);
		printf(": ");
		put_clean(rt->slow[i].why, false);
		printf("\n");
	}
	for (uint32_t k = 0; k < r->step_n; k++) {
		const struct an_step *t = &rt->ti.in.steps[r->step_first + k];
		const struct an_profile *p = profile_of(rt, t);
		bool seen = false;

		for (uint32_t m = 0; m < k && !seen; m++) /* one line a step name */
			seen = !strcmp(rt->ti.in.steps[r->step_first + m].name, t->name);
		if (!p || seen)
			continue;
		printf("  advice: ");
		put_clean(p->name, false);
		if (p->advice.confidence == RS_NONE) {
			printf(": none yet (%u run%s of %d needed)\n", p->runs, p->runs == 1 ? "" : "s", RS_MIN_RUNS);
			continue;
		}
		text_bytes(mem, sizeof(mem), p->advice.memory_bytes);
		printf(": %u CPU%s, %s, %.0f s (%s, %u runs; %s)\n", p->advice.cpus, p->advice.cpus == 1 ? "" : "s", mem,
		       p->advice.time_s, rs_confidence_name(p->advice.confidence), p->runs, an_class_name(p->class_));
	}
	text_cost(rt);
}

/* ---- one run ------------------------------------------------------------------------- */

struct one_run {
	struct store *st;
	const char *db;
	const struct run_tune *rt;
	const char *html_path; /* --html OUT */
	int64_t lake_id;
	bool as_json;
	bool found;
	int rc;  /* the store's failure, once found */
	int out; /* the command's exit status */
};

/* The run's report into j: 0, or the store's failure; out of memory: said, o->out 1. */
static int write_run_json(struct one_run *o, const struct store_run *r, struct json *j)
{
	int rc = run_json_write(o->st, r, o->rt, j);

	if (rc == -ENOMEM) {
		fprintf(stderr, "tracer report: out of memory\n");
		o->out = 1;
		return 0;
	}
	return rc;
}

/* --html OUT: the same JSON, in memory, then the page around it; with --json also on stdout. */
static void show_html(struct one_run *o, const struct store_run *r)
{
	struct obuf mem;
	struct json j;
	struct out w;
	char title[64];

	obuf_init_mem(&mem, HTML_JSON_MAX);
	json_init(&j, &mem);
	o->rc = write_run_json(o, r, &j);
	if (o->rc || o->out) {
		o->out = 1;
		obuf_free(&mem);
		return;
	}
	if (mem.err) {
		fprintf(stderr, "tracer report: cannot hold the report of run %" PRId64 ": %s\n", r->run_id,
			strerror(-mem.err));
		o->out = 1;
		obuf_free(&mem);
		return;
	}
	snprintf(title, sizeof(title), "tracer report: run %" PRId64, r->run_id);
	o->out = html_write_file(o->html_path, mem.buf ? mem.buf : "", mem.len, title, -1, -1, "tracer report") ? 1 : 0;
	if (!o->out && o->as_json) {
		out_init(&w);
		obuf_put(&w.o, mem.buf, mem.len);
		o->out = out_finish(&w);
	}
	obuf_free(&mem);
}

static int show_found(void *ctx, const struct store_run *r)
{
	struct one_run *o = ctx;
	struct out w;

	if (o->found || r->run_id != o->lake_id)
		return 0; /* a pipeline run id named several runs: the one the analysis took (the newest) */
	o->found = true;
	if (o->html_path) {
		show_html(o, r);
		return 0;
	}
	if (o->as_json) {
		out_init(&w);
		o->rc = write_run_json(o, r, &w.j);
		if (!o->out) /* else out of memory, said: nothing was written */
			o->out = o->rc ? 1 : out_finish(&w);
		return 0;
	}
	if (r->has_stored_report)
		print_summary(r);
	else
		o->rc = print_live_run(o->st, r);
	if (!o->rc)
		o->rc = print_signals(o->st, r->run_id);
	if (!o->rc)
		run_tune_text(o->rt, o->db);
	return 0;
}

static int show_run(struct store *st, const char *db, const char *name, bool as_json, const char *html_path)
{
	struct run_tune rt;
	struct one_run o = { .st = st, .db = db, .rt = &rt, .as_json = as_json, .html_path = html_path };
	char pipeline[1024], err[1024];
	int64_t lake_id;
	int rc = tune_find_run(st, db, name, "report", &lake_id, pipeline, sizeof(pipeline));

	if (rc)
		return rc;
	/* The analysis first: its reads are done before the run's own are walked. */
	if (run_tune_load(st, lake_id, pipeline, &rt, err, sizeof(err))) {
		fprintf(stderr, "tracer report: %s\n", err);
		run_tune_free(&rt);
		return 1;
	}
	o.lake_id = lake_id;
	rc = store_run(st, name, show_found, &o);
	run_tune_free(&rt);

	if (rc == STORE_E_NOT_FOUND) {
		fprintf(stderr, "tracer report: no run '%s' in %s (tracer report --db %s lists them)\n", name, db, db);
		return 1;
	}
	if (rc || o.rc)
		return store_failed(st, db, rc ? rc : o.rc);
	return o.out;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db = NULL, *run = NULL, *html_path = NULL;
	struct store *st = NULL;
	bool as_json = false;
	char err[1024], shown[512];
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'd') {
			db = optarg;
		} else if (opt == 'j') {
			as_json = true;
		} else if (opt == 'H') {
			html_path = optarg;
		} else if (opt == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		run = argv[optind++];
	if (!db || optind < argc || (html_path && !run)) {
		fprintf(stderr, "tracer report: %s\n", !db ? "--db FILE is required" :
			optind < argc ? "one RUN at most" : "--html OUT wants a RUN");
		usage(stderr);
		return 2;
	}
	if (store_open(&st, db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer report: %s\n", err);
		return 1;
	}
	/* from here on, messages name the lake as store_display_name() shows it: a URI's password starred */
	store_display_name(db, shown, sizeof(shown));
	db = shown;
	rc = run ? show_run(st, db, run, as_json, html_path) : list_runs(st, db, as_json);
	store_close(st);
	return rc;
}
