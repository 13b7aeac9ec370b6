/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What tracer report shows of tune and cost for one run: the steps of it
 * that were slower than usual (also as slower_than_usual signals), the
 * advice for its steps from its pipeline's history, and what it cost.
 * The same analysis as tracer tune and tracer cost (docs/tune.md,
 * docs/cost.md), over the run's pipeline only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_cost.h"
#include "run_tune.h"
#include "textout.h"

#define RUN_TUNE_WINDOW 20 /* tracer tune's default --runs */

int run_tune_load(struct store *st, int64_t lake_id, const char *pipeline, struct run_tune *rt)
{
	char err[512];
	int rc;

	memset(rt, 0, sizeof(*rt));
	rt->run = -1;
	if (!pipeline || !*pipeline)
		return 0; /* no pipeline: no history to compare with */
	if (tune_input_load(st, pipeline, 0, &rt->ti, err, sizeof(err))) {
		fprintf(stderr, "tracer report: the analysis could not read the lake: %s\n", err);
		return 1;
	}
	rt->loaded = true;
	rt->run = tune_run_index(&rt->ti.in, lake_id, NULL);
	if (rt->run < 0)
		return 0;
	rt->have_table = cost_default_table(&rt->table, rt->prices, sizeof(rt->prices)) == 1;
	rc = an_profiles(&rt->ti.in, pipeline, RUN_TUNE_WINDOW, &rt->prof, &rt->nprof);
	if (!rc && rt->ti.in.runs[rt->run].end_ns > 0)
		rc = an_slower(&rt->ti.in, (uint32_t)rt->run, RUN_TUNE_WINDOW, &rt->slow, &rt->nslow);
	if (!rc && rt->ti.in.runs[rt->run].end_ns > 0)
		rc = cost_compute(&rt->ti.in, rt->have_table ? &rt->table : NULL, COST_BY_RUN, rt->run, &rt->cost);
	rt->price = cost_run_price(&rt->ti.in.runs[rt->run], rt->have_table ? &rt->table : NULL, &rt->price_source);
	if (rc) {
		fprintf(stderr, "tracer report: the analysis failed: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}

void run_tune_free(struct run_tune *rt)
{
	free(rt->prof);
	free(rt->slow);
	cost_report_free(&rt->cost);
	price_table_free(&rt->table);
	if (rt->loaded)
		tune_input_free(&rt->ti);
	memset(rt, 0, sizeof(*rt));
}

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

static void text_cost(const struct run_tune *rt)
{
	if (!rt->cost.n) {
		printf("  cost: not known until the run ends\n");
		return;
	}
	if (rt->price < 0) {
		printf("  cost: not priced: its host's instance type is unknown or not in the price table (set\n"
		       "  instance_type and region, or price_per_hour, in that host's tracer.conf: docs/cost.md)\n");
		return;
	}
	printf("  cost: reserved $%.4f (%.4f h at $%.4f/h, %s), used $%.4f, held while no step ran $%.4f\n",
	       rt->cost.lines[0].reserved_usd, rt->cost.lines[0].hours, rt->price,
	       rt->price_source == COST_PRICE_CONFIG ? "the host's price_per_hour" : "the price table",
	       rt->cost.lines[0].used_usd < 0 ? 0 : rt->cost.lines[0].used_usd, rt->cost.lines[0].idle_usd);
}

void run_tune_text(const struct run_tune *rt, const char *db)
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

void run_tune_json_signals(const struct run_tune *rt, struct json *j)
{
	for (size_t i = 0; rt->loaded && i < rt->nslow; i++) {
		const struct an_slow *s = &rt->slow[i];
		const struct an_step *t = &rt->ti.in.steps[s->step];

		json_object_begin(j);
		json_kv_string(j, "kind", "slower_than_usual");
		json_kv_string(j, "source", "analysis");
		json_kv_null(j, "pid");
		json_kv_string(j, "step", t->step_id);
		json_kv_string(j, "name", t->name);
		json_kv_null(j, "tool");
		json_kv_double(j, "duration_s", s->duration_s);
		json_kv_double(j, "median_s", s->median_s);
		json_kv_double(j, "ratio", s->ratio);
		json_kv_string(j, "cause", s->cause);
		json_kv_string(j, "detail", s->why);
		json_object_end(j);
	}
}

void run_tune_json(const struct run_tune *rt, struct json *j)
{
	const struct an_run *r;

	if (!rt->loaded || rt->run < 0) {
		json_null(j);
		return;
	}
	r = &rt->ti.in.runs[rt->run];
	json_object_begin(j);
	json_kv_u64(j, "window_runs", RUN_TUNE_WINDOW);
	json_key(j, "recommendations");
	json_array_begin(j);
	for (size_t i = 0; i < rt->nprof; i++) {
		const struct an_profile *p = &rt->prof[i];
		bool in_run = false;

		for (uint32_t k = 0; k < r->step_n && !in_run; k++)
			in_run = !strcmp(rt->ti.in.steps[r->step_first + k].name, p->name);
		if (!in_run)
			continue;
		json_object_begin(j);
		json_kv_string(j, "step", p->name);
		json_kv_u64(j, "runs", p->runs);
		json_kv_string(j, "class", an_class_name(p->class_));
		json_kv_string(j, "confidence", rs_confidence_name(p->advice.confidence));
		json_kv_u64_or_null(j, "cpus", p->advice.confidence != RS_NONE, p->advice.cpus);
		json_kv_u64_or_null(j, "memory_bytes", p->advice.confidence != RS_NONE, p->advice.memory_bytes);
		json_kv_double(j, "time_s", p->advice.confidence != RS_NONE ? p->advice.time_s : NAN);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "cost");
	json_object_begin(j);
	json_kv_double(j, "price_per_hour", rt->price >= 0 ? rt->price : NAN);
	json_kv_string(j, "price_source", cost_price_source_name(rt->price_source));
	json_kv_string(j, "prices_file", rt->have_table ? rt->prices : NULL);
	if (rt->cost.n && rt->price >= 0) {
		json_kv_double(j, "reserved_usd", rt->cost.lines[0].reserved_usd);
		json_kv_double(j, "used_usd", rt->cost.lines[0].used_usd >= 0 ? rt->cost.lines[0].used_usd : NAN);
		json_kv_double(j, "idle_usd", rt->cost.lines[0].idle_usd);
	} else {
		json_kv_null(j, "reserved_usd");
		json_kv_null(j, "used_usd");
		json_kv_null(j, "idle_usd");
	}
	json_object_end(j);
	json_object_end(j);
}

/* The two JSON texts store_run_report takes for a stored report: the signals to add and the tune object. */
int run_tune_json_texts(const struct run_tune *rt, char **signals, char **tune)
{
	struct obuf a, b;
	struct json j;

	*signals = *tune = NULL;
	if (!rt->loaded || rt->run < 0)
		return 0; /* no analysis: the stored report as it is */

	obuf_init_mem(&a, 16u << 20);
	json_init(&j, &a);
	json_array_begin(&j);
	run_tune_json_signals(rt, &j);
	json_array_end(&j);
	obuf_putc(&a, 0);
	obuf_init_mem(&b, 16u << 20);
	json_init(&j, &b);
	run_tune_json(rt, &j);
	obuf_putc(&b, 0);
	if (a.err || b.err) {
		obuf_free(&a);
		obuf_free(&b);
		return -ENOMEM;
	}
	*signals = a.buf;
	*tune = b.buf;
	return 0;
}
