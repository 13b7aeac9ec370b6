/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer cost: what runs cost, and which instance type would have run
 * them for less (docs/cost.md).
 *
 *   tracer cost --db FILE [--run RUN] [--pipeline NAME]
 *               [--by pipeline|run|step|tool|host|user] [--prices FILE] [--json]
 *
 * A run is priced by its host's configured price_per_hour, else by the
 * price table's row for the instance type and region its host reported;
 * otherwise it is unpriced, and said so with how to set a price: never an
 * invented one. The price table: --prices FILE, else the one installed
 * with tracer (<prefix>/share/tracer/prices.csv, found next to this
 * binary), else the source tree's data/prices.csv when run from build/.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_cost.h"
#include "cmd_tune.h"
#include "prices_file.h"
#include "run_tune.h"
#include "cost.h"
#include "json.h"
#include "textout.h"
#include "tune_input.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer cost --db FILE [--run RUN] [--pipeline NAME]\n"
		   "                   [--by pipeline|run|step|tool|host|user] [--prices FILE] [--json]\n"
		   "What the runs in the lake FILE cost: reserved (the instance-hours each run held) and used\n"
		   "(the share of CPU and memory its steps used), by run (default) or as --by says; and, from\n"
		   "the runs' measured CPU and memory, the cheapest instance type of the price table that fits\n"
		   "them (docs/cost.md). --prices: a price table (default: the one installed with tracer).\n");
}

/* ---- output ------------------------------------------------------------------- */

static void kv_usd(struct json *j, const char *key, double v)
{
	json_kv_double(j, key, v < 0 ? NAN : v);
}

static void text_usd(char *out, size_t len, double v)
{
	if (!isfinite(v) || v < 0)
		snprintf(out, len, "-");
	else if (v < 0.01 && v > 0)
		snprintf(out, len, "$%.4f", v);
	else
		snprintf(out, len, "$%.2f", v);
}

static void json_row(struct json *j, const char *key, const struct price_row *r)
{
	json_key(j, key);
	if (!r) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_kv_string(j, "cloud", r->cloud);
	json_kv_string(j, "instance_type", r->instance_type);
	json_kv_string(j, "region", r->region);
	json_kv_u64(j, "vcpus", r->vcpus);
	json_kv_u64(j, "memory_bytes", r->memory_bytes);
	kv_usd(j, "on_demand_usd_per_hour", r->on_demand_per_hour);
	kv_usd(j, "spot_usd_per_hour", r->spot_per_hour);
	json_object_end(j);
}

/* A line's (or the totals') cluster jobs: their allocations x their hours on their nodes (docs/cost.md). */
static void json_jobs(struct json *j, double cpu_h, double gib_h, double usd)
{
	json_kv_double(j, "job_cpu_hours", cpu_h);
	json_kv_double(j, "job_gib_hours", gib_h);
	kv_usd(j, "jobs_reserved_usd", cpu_h > 0 || gib_h > 0 ? usd : -1);
}

static int emit_json(const char *prices, const struct price_table *t, const struct cost_report *rep,
		     const struct cost_fit *fit, size_t nfit)
{
	char storage[1 << 16];
	struct obuf ob;
	struct json j;
	bool none;

	obuf_init_fd(&ob, STDOUT_FILENO, storage, sizeof(storage));
	json_init(&j, &ob);
	json_object_begin(&j);
	json_kv_string(&j, "schema", "tracer.cost.v1");
	json_kv_string(&j, "by", cost_by_name(rep->by));
	json_key(&j, "prices");
	if (t) {
		json_object_begin(&j);
		json_kv_string(&j, "file", prices);
		json_kv_string(&j, "source", t->source);
		json_kv_string(&j, "date", t->date);
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_key(&j, "totals");
	json_object_begin(&j);
	json_kv_u64(&j, "runs", rep->runs);
	json_kv_u64(&j, "unpriced_runs", rep->unpriced_runs);
	none = rep->runs && rep->unpriced_runs == rep->runs; /* no price at all: null, not $0 */
	kv_usd(&j, "reserved_usd", none ? -1 : rep->reserved_usd);
	kv_usd(&j, "used_usd", none ? -1 : rep->used_usd);
	kv_usd(&j, "idle_usd", none ? -1 : rep->idle_usd);
	json_jobs(&j, rep->job_cpu_hours, rep->job_gib_hours, rep->jobs_reserved_usd);
	json_object_end(&j);
	json_key(&j, "lines");
	json_array_begin(&j);
	for (size_t i = 0; i < rep->n; i++) {
		const struct cost_line *l = &rep->lines[i];

		json_object_begin(&j);
		json_kv_string(&j, "key", l->key);
		json_kv_u64(&j, "runs", l->runs);
		json_kv_u64(&j, "tasks", l->tasks);
		json_kv_double(&j, "hours", l->hours);
		kv_usd(&j, "reserved_usd", l->reserved_usd);
		kv_usd(&j, "used_usd", l->used_usd);
		kv_usd(&j, "idle_usd", l->idle_usd);
		json_kv_u64(&j, "unpriced_runs", l->unpriced_runs);
		json_jobs(&j, l->job_cpu_hours, l->job_gib_hours, l->jobs_reserved_usd);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "instance_fit");
	json_array_begin(&j);
	for (size_t i = 0; i < nfit; i++) {
		const struct cost_fit *f = &fit[i];

		json_object_begin(&j);
		json_kv_string(&j, "pipeline", f->pipeline);
		json_kv_string(&j, "current_type", f->current_type);
		json_kv_u64(&j, "runs", f->runs);
		json_kv_double(&j, "need_cores", f->need_cores);
		json_kv_u64(&j, "need_memory_bytes", f->need_mem_bytes);
		json_row(&j, "current", f->current);
		json_row(&j, "best", f->best);
		json_kv_bool(&j, "best_spot_cheaper", f->best_spot_cheaper);
		kv_usd(&j, "saving_per_run_usd", f->saving_per_run_usd);
		json_kv_double(&j, "runs_per_month", f->runs_per_month);
		kv_usd(&j, "saving_per_month_usd", f->saving_per_month_usd);
		json_kv_string(&j, "why", f->why);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	obuf_putc(&ob, '\n');
	return obuf_flush(&ob) ? 1 : 0;
}

static void text_fit(const struct cost_fit *f)
{
	char a[32], b[32];

	printf("  ");
	put_clean(*f->pipeline ? f->pipeline : "(no pipeline)", false);
	printf(": ");
	put_clean(f->why, false);
	if (f->best && f->current && f->best != f->current && f->saving_per_run_usd > 0) {
		text_usd(a, sizeof(a), f->saving_per_run_usd);
		text_usd(b, sizeof(b), f->saving_per_month_usd);
		printf("; saves %s per run, %s a month at %.1f runs a month", a, b, f->runs_per_month);
	}
	if (f->best && f->best_spot_cheaper) {
		text_usd(a, sizeof(a), f->best->spot_per_hour);
		printf("; as spot %s/h", a);
	}
	printf("\n");
}

static void emit_text(const char *db, const char *prices, const struct price_table *t,
		      const struct cost_report *rep, const struct cost_fit *fit, size_t nfit)
{
	char r[32], u[32], i[32];

	printf("tracer cost: %u run%s in %s, by %s; ", rep->runs, rep->runs == 1 ? "" : "s", db,
	       cost_by_name(rep->by));
	if (t) {
		printf("prices: %s (", prices);
		put_clean(t->source, false);
		printf(", %s)\n", t->date);
	} else {
		printf("no price table: only hosts with price_per_hour set are priced\n");
	}
	printf("%5s %6s %8s %10s %10s %10s  %s\n", "RUNS", "TASKS", "HOURS", "RESERVED", "USED", "IDLE",
	       cost_by_name(rep->by));
	for (size_t k = 0; k < rep->n; k++) {
		const struct cost_line *l = &rep->lines[k];

		text_usd(r, sizeof(r), l->reserved_usd);
		text_usd(u, sizeof(u), l->used_usd);
		text_usd(i, sizeof(i), l->idle_usd);
		printf("%5u %6u %8.3f %10s %10s %10s  ", l->runs, l->tasks, l->hours, r, u, i);
		put_clean(l->key, false);
		if (l->unpriced_runs)
			printf(" (%u unpriced run%s left out)", l->unpriced_runs, l->unpriced_runs == 1 ? "" : "s");
		printf("\n");
	}
	if (rep->runs && rep->unpriced_runs == rep->runs) {
		printf("total: no run could be priced\n");
	} else {
		text_usd(r, sizeof(r), rep->reserved_usd);
		text_usd(u, sizeof(u), rep->used_usd);
		text_usd(i, sizeof(i), rep->idle_usd);
		printf("total: reserved %s, used %s", r, u);
		if (rep->reserved_usd > 0)
			printf(" (%.0f%%)", 100 * rep->used_usd / rep->reserved_usd);
		printf(", held while no step ran %s\n", i);
	}
	if (rep->job_cpu_hours > 0 || rep->job_gib_hours > 0) {
		text_usd(r, sizeof(r), rep->jobs_reserved_usd);
		printf("cluster jobs: %.4f CPU-hours and %.4f GiB-hours reserved on their nodes (allocation x time "
		       "on the node, not in the queue), %s\n", rep->job_cpu_hours, rep->job_gib_hours,
		       rep->jobs_reserved_usd >= 0 ? r : "unpriced");
	}
	if (rep->unpriced_runs)
		printf("%u run%s could not be priced: the host's instance type is unknown (not a recognised cloud\n"
		       "instance) or not in the price table. Set instance_type and region, or price_per_hour, in that\n"
		       "host's tracer.conf, or pass --prices with a table that has its type (docs/cost.md).\n",
		       rep->unpriced_runs, rep->unpriced_runs == 1 ? "" : "s");
	if (nfit) {
		printf("\ninstance types, from the runs' measured CPU and memory (finished runs):\n");
		for (size_t k = 0; k < nfit; k++)
			text_fit(&fit[k]);
	}
}

/* ---- the command ---------------------------------------------------------------------- */

struct cost_opts {
	const char *db, *run, *pipeline, *prices;
	enum cost_by by;
	bool json;
};

static int parse_opts(int argc, char **argv, struct cost_opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },     { "run", required_argument, NULL, 'r' },
		{ "pipeline", required_argument, NULL, 'p' }, { "by", required_argument, NULL, 'b' },
		{ "prices", required_argument, NULL, 'P' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->db = optarg; break;
		case 'r': o->run = optarg; break;
		case 'p': o->pipeline = optarg; break;
		case 'P': o->prices = optarg; break;
		case 'j': o->json = true; break;
		case 'b':
			if (cost_by_parse(optarg, &o->by)) {
				fprintf(stderr, "tracer cost: --by is pipeline, run, step, tool, host or user, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (!o->db || optind < argc) {
		fprintf(stderr, "tracer cost: %s\n", o->db ? "unexpected argument" : "--db FILE is required");
		usage(stderr);
		return 2;
	}
	return 0;
}

int cmd_cost(int argc, char **argv)
{
	struct cost_opts o = { .by = COST_BY_RUN };
	struct price_table table = { 0 };
	struct cost_report rep = { 0 };
	struct cost_fit *fit = NULL;
	struct tune_input ti;
	struct store *st = NULL;
	char err[1024], pipeline[1024], prices[PATH_MAX], shown[512];
	bool have_table = false;
	int64_t lake_id = -1;
	size_t nfit = 0;
	long run = -1;
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (price_table_choose(o.prices, &table, prices, sizeof(prices), &have_table))
		return 1;
	if (store_open(&st, o.db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer cost: %s\n", err);
		price_table_free(&table);
		return 1;
	}
	/* from here on, messages name the lake as store_display_name() shows it: a URI's password starred */
	store_display_name(o.db, shown, sizeof(shown));
	o.db = shown;
	rc = o.run ? tune_find_run(st, o.db, o.run, "cost", &lake_id, pipeline, sizeof(pipeline)) : 0;
	if (!rc && o.run && !o.pipeline)
		o.pipeline = pipeline;
	if (!rc && tune_input_load(st, o.pipeline, 0, &ti, err, sizeof(err))) {
		fprintf(stderr, "tracer cost: %s: %s\n", o.db, err);
		rc = 1;
	}
	store_close(st);
	if (rc) {
		price_table_free(&table);
		return rc;
	}
	if (o.run) {
		run = tune_run_index(&ti.in, lake_id, NULL);
		if (run < 0) {
			fprintf(stderr, "tracer cost: run '%s' has nothing to price yet\n", o.run);
			rc = 1;
		}
	}
	if (!rc)
		rc = cost_compute(&ti.in, have_table ? &table : NULL, o.by, run, &rep);
	if (!rc && have_table)
		rc = cost_fit_instances(&ti.in, &table, o.pipeline, &fit, &nfit);
	if (rc < 0)
		fprintf(stderr, "tracer cost: %s\n", strerror(-rc));
	else if (!rc && o.json)
		rc = emit_json(have_table ? prices : NULL, have_table ? &table : NULL, &rep, fit, nfit);
	else if (!rc)
		emit_text(o.db, prices, have_table ? &table : NULL, &rep, fit, nfit);
	free(fit);
	cost_report_free(&rep);
	tune_input_free(&ti);
	price_table_free(&table);
	return rc ? 1 : 0;
}
