/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the analysis is given and what it finds (issue 15, tracer tune).
 * Pure: an an_input built by the caller (the CLI reads the lake and fills
 * it, view/tune_input.c), findings out; no I/O, no clock, no SQL. Every
 * rule and its source anchor: docs/tune.md.
 *
 *   an_input: runs[] -> steps[] (tasks, one per step instance of a run)
 *                    -> files[] (ids of the files each task read/wrote)
 *                    -> timeline[] (the run's concurrent CPU and memory)
 *
 * Strings belong to the caller and outlive every call here. Times are
 * CLOCK_REALTIME nanoseconds; 0 means unknown.
 */
#ifndef TRACER_ANALYSIS_TUNE_H
#define TRACER_ANALYSIS_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rightsize.h"

/* The host a run ran on (the processor's identity of it, docs/cost.md). */
struct an_host {
	const char *host_id;
	const char *cloud;          /* aws, gcp, azure; NULL if not recognised */
	const char *instance_type;  /* m6i.xlarge, n2-standard-4; NULL if unknown */
	const char *region;         /* NULL if unknown */
	uint32_t cpus;              /* online CPUs (0 unknown) */
	uint64_t memory_bytes;      /* MemTotal (0 unknown) */
	double price_per_hour;      /* set in the host's config; < 0 when not set */
};

/* One task: a step of one run (table steps) with its processes' figures summed (table processes). */
struct an_step {
	uint32_t run;               /* index into an_input.runs */
	const char *name;           /* the step's name: the profile's key with the run's pipeline
	                             * (a Nextflow task's " (tag)" already removed by the loader) */
	const char *step_id;        /* its id within the run ("smk-123", "nf-ab/cdef12") */
	const char *tools;          /* tool names joined by ", " ("" if none) */
	bool named;                 /* name is the pipeline's own name for the step (a Snakemake rule,
	                             * TRACER_STEP), not one tracer derived from its tools: configuration
	                             * can be keyed by it */
	int64_t start_ns, end_ns;   /* end 0: still running */
	int64_t submitted_ns;       /* a cluster job's: when its sbatch started (real time); 0 for any other step */
	struct an_host job_host;    /* a cluster job's: the node it ran on (its allocation's price); else zero,
	                             * price_per_hour -1 */
	bool failed, running;
	uint32_t processes;
	uint32_t oom_kills;         /* its processes the OOM killer ended */
	uint64_t oom_limit_bytes;   /* the largest memory-cgroup limit an OOM kill of it hit; 0 none or unknown */
	/* Summed over its processes (each from its exit record, else its newest sample). */
	uint64_t cpu_ns;            /* on CPU (precise runtime) */
	uint64_t proc_ns;           /* the processes' lifetimes, summed (start to exit) */
	uint64_t run_delay_ns;      /* waiting on a run queue, every thread of each process (docs/schema.md) */
	uint64_t iowait_ns;         /* uninterruptible sleep in io_schedule() */
	uint64_t blocked_ns;        /* other uninterruptible sleep */
	uint64_t net_wait_ns;       /* inside blocking network calls */
	uint64_t reclaim_ns;        /* in direct memory reclaim; 0 where not measured */
	/* Idle: each process's life less the time its traced children covered and its threads' busy
	 * time, never below 0, summed (docs/tune.md, "The breakdown"). Not known (older lakes, a tracer
	 * run report's processes): proc_ns less the busy parts, for the step as a whole. */
	bool idle_known;
	uint64_t idle_ns;
	uint64_t peak_mem_bytes;    /* the concurrent peak: what its processes held at once (steps.peak_rss_bytes) */
	uint64_t read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
	/* CPU concurrency from its samples: cores in use at once (1.0 = one CPU busy), the median and
	 * p95 over its sample intervals; cores_known false when it had fewer than two samples (then the
	 * analysis uses cpu_ns / wall time for both). */
	bool cores_known;
	double cores_p50, cores_p95;
	/* The allocation, where known (0: unknown): the memory limit of its cgroup, the CPUs it may use. */
	uint64_t mem_limit_bytes;
	double cpu_limit;
	/* Files it read (mode r or rw) and wrote (w or rw): ids in an_input.files[first .. first+n). Equal
	 * ids are the same path on the same host. */
	uint32_t in_first, in_n, out_first, out_n;
};

/* A point of a run's timeline: what its processes used at once at t. */
struct an_point {
	int64_t t_ns;
	double cores;               /* CPU cores busy (CPU time over the interval ending at t / its length) */
	uint64_t mem_bytes;         /* resident memory, summed */
};

struct an_run {
	int64_t lake_id;            /* the number tracer report shows */
	const char *key;            /* BOOT-TGID-START; NULL for a report-only run of an older agent */
	const char *pipeline;       /* "" if none */
	const char *label;          /* what to call it: the pipeline's run id, its name, else its number */
	const char *state;          /* running, succeeded, failed, lost */
	const char *user;           /* the run's user as the host named it (uid N if not named) */
	int64_t start_ns, end_ns;   /* end 0: running */
	uint64_t cpu_ns;            /* every process of the run, engine included */
	struct an_host host;
	uint32_t step_first, step_n;     /* its tasks: steps[first .. first+n), by start time */
	uint32_t point_first, point_n;   /* its timeline: timeline[first .. first+n), by time */
};

struct an_input {
	const struct an_run *runs;  /* by start time, oldest first */
	size_t nruns;
	const struct an_step *steps;
	size_t nsteps;
	const uint32_t *files;
	size_t nfiles;
	const struct an_point *timeline;
	size_t npoints;
};

/* ---- why a step takes the time it takes ---------------------------------- */

enum an_part { AN_CPU = 0, AN_RUN_QUEUE, AN_IO_WAIT, AN_BLOCKED, AN_NET_WAIT, AN_RECLAIM, AN_IDLE, AN_PARTS };

/*
 * A task's wall time split by what its threads were doing: each part's
 * share of the summed thread-time (on a CPU, run queue, I/O wait, blocked,
 * network, reclaim, idle), scaled to the wall time. Idle leaves out the
 * time a process waited for its traced children (docs/tune.md).
 */
struct an_breakdown {
	double wall_s;
	double part_s[AN_PARTS];    /* sum = wall_s */
};

enum an_class { AN_CLASS_UNKNOWN = 0, AN_CLASS_COMPUTE, AN_CLASS_MEMORY, AN_CLASS_IO, AN_CLASS_NETWORK,
	AN_CLASS_IDLE };

const char *an_part_name(enum an_part p);   /* "cpu", "run_queue", "io_wait", "blocked", "net_wait", ... */
const char *an_class_name(enum an_class c); /* "compute", "memory", "io", "network", "idle", "unknown" */

void an_breakdown_of(const struct an_step *t, struct an_breakdown *out);
/* A task's wall time in seconds: end - start; 0 while running or when either end is unknown. */
double an_step_wall_s(const struct an_step *t);
/* The cores a task used, its p95 (p95 true) or median: from its samples when cores_known, else its
 * CPU time over its wall time (0 with no wall time). */
double an_step_cores(const struct an_step *t, bool p95);
/* bytes as "512 MiB" (under 1 GiB, whole MiB) or "2.1 GiB", into buf; returns buf. */
const char *an_bytes_str(uint64_t bytes, char *buf, size_t len);

/* The classification's thresholds (docs/tune.md, "Classifying a step"). */
#define AN_CLASS_MIN_SHARE 0.4          /* a time share below this is "mixed" */
#define AN_MEM_LIMIT_SHARE 0.8          /* a peak at this share of a known limit is memory-bound */
#define AN_RECLAIM_SHARE 0.2            /* as is this share of the wall time in direct reclaim */
#define AN_MEM_PER_CORE (4ull << 30)    /* general-purpose clouds give 4 GiB per vCPU */
#define AN_MEM_PER_CORE_MIN (1ull << 30) /* the ratio counts only for a step holding this much */
#define AN_CORES_FLOOR 0.25             /* cores below this count as this in the ratio */

/* The class of a set of tasks from their summed breakdown and peaks, the numbers as evidence in why. */
enum an_class an_classify(const struct an_step *const *tasks, size_t n, char *why, size_t whylen);

/* ---- the step profile ------------------------------------------------------ */

/* One step of a pipeline over the last runs: the tasks of the same pipeline and step name. */
struct an_profile {
	const char *pipeline, *name;
	const char *tools;          /* the tools of its newest task */
	bool named;                 /* every task's name is the pipeline's own (an_step.named) */
	uint32_t runs, tasks;
	double duration_p50_s, duration_p95_s, duration_max_s, duration_p99_s;
	double cores_p50, cores_p95;
	double cpu_s;               /* CPU time, all tasks */
	double cpu_s_per_task;      /* mean */
	uint64_t peak_mem_max_bytes, peak_mem_p95_bytes;
	uint64_t read_bytes, write_bytes, net_bytes; /* all tasks */
	uint32_t oom_kills;
	uint64_t mem_limit_bytes;   /* the allocation its newest task had, 0 unknown */
	double cpu_limit;
	double cpu_efficiency;      /* cores_p95 / cpu_limit; < 0 when the limit is unknown */
	double mem_efficiency;      /* peak_mem_max / mem_limit; < 0 when unknown */
	struct an_breakdown breakdown; /* summed over its tasks */
	enum an_class class_;
	char why[160];
	struct rs_advice advice;
};

/*
 * The profiles of every (pipeline, step name) over the last max_runs runs
 * of each pipeline that hold it (only finished tasks), sorted by pipeline
 * then by total wall time, largest first. pipeline: only that one (NULL:
 * all). *out is malloc'd (free(); NULL when none); 0 or -ENOMEM / -EINVAL
 * (max_runs 0, a task of no run).
 */
int an_profiles(const struct an_input *in, const char *pipeline, uint32_t max_runs,
		struct an_profile **out, size_t *n);

/* ---- bottlenecks of a run -------------------------------------------------- */

/*
 * A run's critical path: the chain that ends at the task that finished
 * last, each link the dependency that finished last before the task
 * started. A task depends on another when it read a file the other wrote
 * and started after the other started (docs/tune.md).
 */
struct an_path_link {
	uint32_t step;              /* index into an_input.steps */
	double duration_s;
	double wait_s;              /* from its dependency's end (or the run's start) to its own start */
	double queued_s;            /* a cluster job's: from its submission to its start, in the scheduler's queue */
};

struct an_bottlenecks {
	struct an_path_link *path;  /* malloc'd, first task first */
	size_t npath;
	double path_s;              /* the path's span: its first start to its last end */
	double wall_s;              /* the run's */
	double queued_s;            /* of it, the time a cluster job of the run waited in a queue and no task ran */
	double running_s;           /* the rest: a task, or the engine itself, at work */
	double work_s;              /* every task's duration, summed */
	double parallelism_available; /* work / the path's summed durations: what the DAG allows on average */
	double parallelism_used;    /* work / the run's wall time: tasks running at once on average */
	double cores_used;          /* the run's CPU time / its wall time */
	uint32_t dominant[5];       /* the tasks with the largest share of the wall time, largest first */
	double dominant_share[5];   /* each one's duration / the run's wall time */
	size_t ndominant;
};

/* A task's time: in a queue from submitted_ns (0: never queued) to start_ns, then running to end_ns (0: still). */
struct an_timespan {
	int64_t submitted_ns, start_ns, end_ns;
};

/*
 * The part of [from, to) in which at least one task waited in a queue and none ran, in ns (docs/tune.md,
 * "Queue time"). Tasks with no start are left out. 0, or -ENOMEM.
 */
int an_queued_only(const struct an_timespan *t, size_t n, int64_t from, int64_t to, int64_t *out_ns);

/* 0, -ENOMEM, or -EINVAL for a run, task or file range outside the input. Free with an_bottlenecks_free. */
int an_bottlenecks(const struct an_input *in, uint32_t run, struct an_bottlenecks *out);
void an_bottlenecks_free(struct an_bottlenecks *b);

/* ---- slower than usual ----------------------------------------------------- */

#define AN_SLOW_MIN_HISTORY 5      /* earlier runs of the step needed */
#define AN_SLOW_MIN_RATIO 1.3      /* and at least this much slower than the median */
#define AN_SLOW_MIN_SCORE 3.5      /* and a robust z-score of at least this */
#define AN_SLOW_MIN_EXTRA_S 1.0    /* and at least this many seconds slower */
#define AN_SLOW_MAD_SCALE 1.4826   /* MAD to a normal's standard deviation */
#define AN_SLOW_SCALE_FLOOR 0.05   /* the score's scale is at least this share of the median */
#define AN_SLOW_INPUT_CV 0.25      /* compare per input byte when the history's inputs vary more */
#define AN_SLOW_INPUT_GREW 1.3     /* cause input_grew: its input at least this times the median */

struct an_slow {
	uint32_t step;              /* the task, index into an_input.steps */
	double duration_s, median_s, ratio, score;
	bool per_input_byte;        /* compared per byte of input: its history's inputs vary */
	const char *cause;          /* run_queue, io_wait, blocked, net_wait, reclaim, cpu, input_grew, idle */
	double cause_s, cause_median_s; /* that component in this task and its history's median (input_grew:
	                                 * the part that grew most, as for any other cause) */
	uint32_t history_runs, history_tasks; /* what it was compared with */
	uint64_t input_bytes;       /* its rchar */
	double input_median_bytes;  /* its history's median rchar */
	char why[200];
};

/*
 * Every task of run `run` slower than the same step's tasks of the
 * earlier runs of its pipeline (at most max_history of them), in the
 * run's order of tasks. *out malloc'd (NULL when none); 0, -ENOMEM, or
 * -EINVAL for a run or a task range outside the input.
 */
int an_slower(const struct an_input *in, uint32_t run, uint32_t max_history, struct an_slow **out, size_t *n);

#endif /* TRACER_ANALYSIS_TUNE_H */
