/* SPDX-License-Identifier: Apache-2.0 */
/* What tracer report shows of tune and cost for one run (cli/run_tune.c). */
#ifndef TRACER_CLI_RUN_TUNE_H
#define TRACER_CLI_RUN_TUNE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd_tune.h"
#include "cost.h"
#include "json.h"
#include "store.h"
#include "tune.h"
#include "tune_input.h"

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

/* The analysis of run lake_id of pipeline (NULL or "": none, nothing to show). 0, or 1 said on stderr. */
int run_tune_load(struct store *st, int64_t lake_id, const char *pipeline, struct run_tune *rt);
void run_tune_free(struct run_tune *rt);
/* The "tune" section of tracer report RUN. */
void run_tune_text(const struct run_tune *rt, const char *db);
/* Its slower_than_usual signals, as elements of an open array; its "tune" value. */
void run_tune_json_signals(const struct run_tune *rt, struct json *j);
void run_tune_json(const struct run_tune *rt, struct json *j);
/* Both as JSON texts (malloc'd, free()) for store_run_report; NULL both without an analysis (no
 * pipeline). 0 or -ENOMEM. */
int run_tune_json_texts(const struct run_tune *rt, char **signals, char **tune);

#endif /* TRACER_CLI_RUN_TUNE_H */
