/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A run as JSON, read from the lake: one line of the list of runs, and
 * one run's tracer.run.v1 report with its analysis ("tune" and the
 * slower_than_usual signals). tracer report --json and tracer-web's API
 * write the same bytes through these. Every string goes through
 * records/json.h's writer; JSON the lake stored (argv, a run report) is
 * copied as it is, the lake having checked it is valid JSON.
 */
#ifndef TRACER_VIEW_RUN_JSON_H
#define TRACER_VIEW_RUN_JSON_H

#include "json.h"
#include "run_tune.h"
#include "store.h"
#include "tune.h"

/* One run of the list, as an object (ctx: the struct json *): a store_run_fn, returns 0. */
int run_json_list_item(void *ctx, const struct store_run *r);

/*
 * The run's tracer.run.v1 report with "state" and "tune": the report the
 * run's row holds, else one rebuilt from its processes, steps and signals
 * (docs/lake.md, "Querying"). rt: run_tune_load's analysis of the run (an
 * empty one: none). 0, a store_err, or -ENOMEM.
 */
int run_json_write(struct store *st, const struct store_run *r, const struct run_tune *rt, struct json *j);

/*
 * A run's steps' times, gathered as its steps are read, for its wall time's split into queued (a cluster
 * job waited in the scheduler's queue, no step ran) and running (docs/live.md, "Queue time").
 */
struct run_spans {
	struct an_timespan *v;
	size_t n, cap;
	bool oom;                   /* a step could not be kept: no split */
};

void run_spans_add(struct run_spans *s, const struct store_step *step);
/* true and the wall and queued ns, when the run has cluster jobs and a start and an end (or last update). */
bool run_spans_split(const struct run_spans *s, const struct store_run *r, int64_t *wall_ns, int64_t *queued_ns);
void run_spans_free(struct run_spans *s);

#endif /* TRACER_VIEW_RUN_JSON_H */
