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

#include "prices_file.h"
#include "run_tune.h"

long tune_run_index(const struct an_input *in, int64_t lake_id, const char *pipeline)
{
	for (size_t i = in->nruns; i-- > 0;) {
		const struct an_run *r = &in->runs[i];

		if (lake_id >= 0 ? r->lake_id == lake_id :
				   r->end_ns > 0 && (!pipeline || !strcmp(r->pipeline, pipeline)))
			return (long)i;
	}
	return -1;
}

int run_tune_load(struct store *st, int64_t lake_id, const char *pipeline, struct run_tune *rt, char *err,
		  size_t errlen)
{
	char why[512];
	int rc;

	memset(rt, 0, sizeof(*rt));
	rt->run = -1;
	if (!pipeline || !*pipeline)
		return 0; /* no pipeline: no history to compare with */
	if (tune_input_load(st, pipeline, 0, &rt->ti, why, sizeof(why))) {
		snprintf(err, errlen, "the analysis could not read the lake: %s", why);
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
		snprintf(err, errlen, "the analysis failed: %s", strerror(-rc));
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
	if (rt->cost.n && (rt->cost.lines[0].job_cpu_hours > 0 || rt->cost.lines[0].job_gib_hours > 0)) {
		/* its cluster jobs' allocations on their nodes (docs/cost.md, "Cluster jobs") */
		json_kv_double(j, "job_cpu_hours", rt->cost.lines[0].job_cpu_hours);
		json_kv_double(j, "job_gib_hours", rt->cost.lines[0].job_gib_hours);
		json_kv_double(j, "jobs_reserved_usd",
			       rt->cost.lines[0].jobs_reserved_usd >= 0 ? rt->cost.lines[0].jobs_reserved_usd : NAN);
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
