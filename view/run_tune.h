/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The analysis of one run, for its report (tracer report, tracer-web):
 * its steps that were slower than usual, the advice for its steps from
 * its pipeline's history, and what it cost (view/run_tune.c).
 */
#ifndef TRACER_VIEW_RUN_TUNE_H
#define TRACER_VIEW_RUN_TUNE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "json.h"
#include "store.h"
#include "tune.h"
#include "tune_input.h"

#define RUN_TUNE_WINDOW 20 /* tracer tune's default --runs */

struct run_tune {
	struct tune_input ti;
	bool loaded;                /* ti holds the run's pipeline */
	long run;                   /* the run's index in ti.in.runs, -1: not there (no pipeline, nothing yet) */
	struct an_profile *prof;
	size_t nprof;
	struct an_slow *slow;
	size_t nslow;
	struct cost_report cost;    /* the run alone (by run); empty while it runs */
	struct price_table table;
	bool have_table;
	char prices[PATH_MAX];
	double price;               /* per hour, < 0: unknown */
	enum cost_price_source price_source;
};

/* The index in in->runs of the run with that lake id, or (lake_id < 0) of the newest finished run of the
 * pipeline (NULL: any); -1 if none. */
long tune_run_index(const struct an_input *in, int64_t lake_id, const char *pipeline);

/*
 * The analysis of run lake_id of pipeline (NULL or "": none, nothing to
 * show). 0, or 1 with err saying what failed. run_tune_free either way.
 */
int run_tune_load(struct store *st, int64_t lake_id, const char *pipeline, struct run_tune *rt, char *err,
		  size_t errlen);
void run_tune_free(struct run_tune *rt);
/* Its slower_than_usual signals, as elements of an open array; its "tune" value. */
void run_tune_json_signals(const struct run_tune *rt, struct json *j);
void run_tune_json(const struct run_tune *rt, struct json *j);
/* Both as JSON texts (malloc'd, free()) for store_run_report; NULL both without an analysis (no
 * pipeline). 0 or -ENOMEM. */
int run_tune_json_texts(const struct run_tune *rt, char **signals, char **tune);

#endif /* TRACER_VIEW_RUN_TUNE_H */
