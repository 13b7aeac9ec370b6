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

/* One run of the list, as an object (ctx: the struct json *): a store_run_fn, returns 0. */
int run_json_list_item(void *ctx, const struct store_run *r);

/*
 * The run's tracer.run.v1 report with "state" and "tune": the report the
 * run's row holds, else one rebuilt from its processes, steps and signals
 * (docs/lake.md, "Querying"). rt: run_tune_load's analysis of the run (an
 * empty one: none). 0, a store_err, or -ENOMEM.
 */
int run_json_write(struct store *st, const struct store_run *r, const struct run_tune *rt, struct json *j);

#endif /* TRACER_VIEW_RUN_JSON_H */
