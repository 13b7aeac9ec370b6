/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What runs cost (issue 15, tracer cost): a dated price table, the cost
 * of every run, step, tool, pipeline, host and user in two forms
 * (reserved: the instance-hours the run held; used: the share of CPU and
 * memory its steps used), and instance rightsizing replayed from the
 * runs' measured timelines. Pure: the table's bytes and an an_input in,
 * figures out; no I/O. Rules and limits: docs/cost.md.
 */
#ifndef TRACER_ANALYSIS_COST_H
#define TRACER_ANALYSIS_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "readfile.h"
#include "tune.h"

/* One instance type in one region. */
struct price_row {
	const char *cloud;          /* aws, gcp, azure */
	const char *instance_type;
	const char *region;
	uint32_t vcpus;
	uint32_t line;              /* its line in the CSV, for messages */
	uint64_t memory_bytes;
	double on_demand_per_hour;  /* USD */
	double spot_per_hour;       /* USD; < 0 when the table has none */
};

/*
 * A price table (docs/cost.md, the CSV): comment lines "# source: ..." and
 * "# date: YYYY-MM-DD" are required, then a header line
 * cloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour
 * then one row per type and region (spot may be empty).
 */
struct price_table {
	struct price_row *rows;
	size_t n;
	char source[256];
	char date[16];
	char *strings;              /* owns every string of rows */
};
/* rows are sorted by instance type, then region; a type and region appear once. */

#define PRICE_TABLE_MAX_ROWS 100000
#define PRICE_TABLE_MAX_BYTES READ_MAX_PRICES /* the file's bound is the text's too */

/*
 * Parse the CSV text (not NUL-terminated). 0, or -EINVAL with err saying
 * which line and what to fix, or -ENOMEM; on error *out is left empty
 * (price_table_free is still safe).
 */
int price_table_parse(const char *text, size_t len, struct price_table *out, char *err, size_t errlen);
void price_table_free(struct price_table *t);
/* The row of a type in a region (region NULL: the cheapest region that has it); NULL if none. */
const struct price_row *price_lookup(const struct price_table *t, const char *instance_type, const char *region);
/*
 * Whether a type is burstable (CPU credits: a low baseline, full speed
 * only in bursts), by its name: AWS t1/t2/t3/t3a/t4g, Azure B-series, GCP
 * shared-core e2-micro/small/medium, f1-micro, g1-small. Rightsizing
 * never moves a workload onto one (docs/cost.md).
 */
bool price_burstable(const char *instance_type);

/* ---- cost ------------------------------------------------------------------ */

enum cost_by { COST_BY_RUN = 0, COST_BY_PIPELINE, COST_BY_STEP, COST_BY_TOOL, COST_BY_HOST, COST_BY_USER };

const char *cost_by_name(enum cost_by b);  /* "run", "pipeline", ... */
int cost_by_parse(const char *s, enum cost_by *out); /* 0, or -EINVAL for a name that is none of them */

/* How a run was priced. */
enum cost_price_source { COST_PRICE_NONE = 0, COST_PRICE_CONFIG, COST_PRICE_TABLE };

const char *cost_price_source_name(enum cost_price_source s); /* "none", "config", "table" */

struct cost_line {
	const char *key;            /* the run's label, the pipeline, "pipeline / step", the tool, the host, the user */
	uint32_t runs, tasks;
	double hours;               /* wall hours held (reserved) or of its tasks (step, tool) */
	double reserved_usd;        /* over its priced runs; < 0: none of it is priced (see unpriced_runs) */
	double used_usd;            /* over its priced runs whose used cost is known; < 0: none */
	double idle_usd;            /* reserved time while no step of the run ran (runs, pipelines, hosts, users) */
	uint32_t unpriced_runs;     /* runs in this line without a price */
	uint32_t used_unknown_runs; /* priced runs without a CPU count or memory size: not in used_usd */
	/* Cluster jobs joined to its runs: their allocations (CPUs, GiB) x their hours on their nodes, start to
	 * end, never their time in the queue; in USD at their nodes' rates (< 0: none could be priced). */
	double job_cpu_hours, job_gib_hours, jobs_reserved_usd;
	long run;                   /* COST_BY_RUN: the run's index in in->runs; else -1 */
};

struct cost_report {
	enum cost_by by;
	struct cost_line *lines;    /* malloc'd, most expensive first */
	size_t n;
	double reserved_usd, used_usd, idle_usd; /* totals over priced runs */
	uint32_t runs, unpriced_runs;
	uint32_t used_unknown_runs; /* priced runs whose used cost is unknown */
	uint32_t unfinished_runs;   /* selected but still running (or without a start or end): not costed */
	double job_cpu_hours, job_gib_hours, jobs_reserved_usd; /* the cluster jobs', over every costed run */
	char *keys;                 /* owns the lines' keys */
};

/*
 * The cost of runs (run >= 0: that run only, an index into in->runs),
 * grouped by `by`. table may be NULL (then only hosts with a configured
 * price are priced). Only finished runs are costed. 0, -ENOMEM, or
 * -EINVAL (run out of range, an unknown by, a step or timeline range past
 * the arrays).
 */
int cost_compute(const struct an_input *in, const struct price_table *table, enum cost_by by, long run,
		 struct cost_report *out);
void cost_report_free(struct cost_report *r);

/*
 * The price per hour of a host and where it came from: its configured
 * price_per_hour, else the table's row of its type in its region (table
 * NULL: none); < 0 and COST_PRICE_NONE if unknown (docs/cost.md, "Pricing
 * a run"). tracer sweep prices hosts with it (docs/sweep.md).
 */
double cost_host_price(const struct an_host *h, const struct price_table *table, enum cost_price_source *src);
/* The price per hour of a run's host: cost_host_price(&r->host, ...). */
double cost_run_price(const struct an_run *r, const struct price_table *table, enum cost_price_source *src);

/* ---- instance rightsizing ------------------------------------------------ */

#define COST_FIT_CPU_HEADROOM 1.0   /* cores: ceil(p95 of the timeline's cores) - see docs/cost.md */
#define COST_FIT_CPU_NOISE 0.05     /* ... less this much first: a p95 of 2.03 cores needs 2 CPUs, not 3 */
#define COST_FIT_MEM_HEADROOM 1.15  /* memory: the timeline's peak x 1.15 */

struct cost_fit {
	const char *pipeline;
	const char *current_type;   /* the instance type the runs ran on (the newest run's) */
	uint32_t runs;
	double need_cores;          /* what the runs used at once, p95 over their timelines */
	uint32_t cpus_needed;       /* ceil(need_cores - COST_FIT_CPU_NOISE), at least 1 */
	uint64_t need_mem_bytes;    /* the highest memory held at once, x 1.15 */
	const struct price_row *current, *best; /* best NULL: nothing in the table fits */
	bool current_fits;          /* the current type has the CPUs and memory needed */
	bool best_spot_cheaper;     /* the best type's spot price is below its on-demand price */
	double mean_wall_hours;     /* of the runs */
	double saving_per_run_usd;  /* on demand, at the runs' mean wall time; 0 none; < 0 unknown (no current) */
	double runs_per_month;      /* the observed rate: runs / their span (at least a day), x 30 days */
	double saving_per_month_usd; /* < 0 unknown */
	char why[200];              /* e.g. "peaked at 2.0 cores and 3.0 GiB of 16 and 64" */
};

/*
 * Instance rightsizing for each pipeline's finished runs (pipeline NULL:
 * every pipeline), from their timelines, onto the table's types of the
 * same cloud and region as the runs' host (the newest run's). Runs
 * without a pipeline or a timeline are left out. Sorted by saving per
 * month, largest first (unknown last), then pipeline. *out malloc'd
 * (free()); 0, -ENOMEM, or -EINVAL (a timeline range past the array).
 */
int cost_fit_instances(const struct an_input *in, const struct price_table *table, const char *pipeline,
		       struct cost_fit **out, size_t *n);

#endif /* TRACER_ANALYSIS_COST_H */
