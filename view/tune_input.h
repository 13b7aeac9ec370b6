/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The analysis' input built from the lake (issue 15: tracer tune, tracer
 * cost): every run of a pipeline (or of all), its tasks, the files they
 * read and wrote, and its timeline, as analysis/tune.h's an_input. Read
 * with store.h's store_tune_* walks in one read transaction; everything
 * the an_input points to is owned here and freed by tune_input_free().
 *
 * What each figure is, and its bound:
 *
 *   runs       by start time (runs without one last), then number. label:
 *              the pipeline's run id, else the run's name, else "#N".
 *              user: "uid N" ("unknown" when the lake has no uid). host:
 *              the runs.host_* columns (price_per_hour < 0 when not set or
 *              not a finite number). end_ns 0 while running or unknown.
 *   tasks      one per steps row, each run's by start time (unknown starts
 *              last), then steps.idx. name: steps.name; of a Nextflow step
 *              (its engine or its run's "nextflow") without the trailing
 *              " (tag)" of the task, so "ALIGN (3)" and "ALIGN (7)" are
 *              one step; the step id when the lake has no name. Figures
 *              summed over its processes (store_tune_task: each from its
 *              exit record, else its newest sample; a report-only run's
 *              from its report's processes, waits 0; else the step's own
 *              columns). mem_limit_bytes and cpu_limit: the allocation
 *              it ran under (steps.memory_limit_bytes and
 *              cpu_limit_millicores); without one, the memory-cgroup limit
 *              an OOM kill of it hit; 0 unknown or none.
 *   cores      per task, from its processes' samples: each interval
 *              between consecutive samples of a process is its CPU time
 *              delta over its length (a counter that went backwards is
 *              skipped), spread over the 1-s buckets of real time it
 *              overlaps; a process's cores in a bucket is its CPU time
 *              there over the part of the bucket its intervals cover;
 *              the task's cores in a bucket is the sum over its processes.
 *              cores_p50, cores_p95: nearest rank over those buckets;
 *              cores_known only with at least 2 intervals. A sample is a
 *              point in time: a burst shorter than the sample interval is
 *              averaged into its interval (1-s samples cannot show a
 *              100-ms burst on 8 cores), and a process that lived less
 *              than one interval has no cores at all.
 *   timeline   per run, one point per 1-s bucket in which a process of the
 *              run (its engine included) was sampled or between samples:
 *              t_ns the bucket's end; cores as above over all of the run's
 *              processes; mem_bytes the sum over the processes alive in the
 *              bucket (first to last sample) of each one's newest RSS at
 *              or before the bucket's end. Memory between samples is not
 *              seen: a peak between two samples is missed (the tasks'
 *              peak_mem_bytes is the kernel's high-water mark instead).
 *   files      ids of (host, path): the same path on the same host is one
 *              id, on another host another. A task reads what any of its
 *              processes opened r or rw, writes what they opened w or rw;
 *              each id once per list, ascending. A path the kernel
 *              truncated (its leading part missing) is an id of its own
 *              text, like any other.
 *
 * Bounds: a process whose samples span more than TUNE_SPAN_MAX_S seconds
 * is left out of cores and the timeline; a task whose processes' samples
 * span more has no cores; a run whose samples span more has no timeline;
 * each counted in tune_counts.
 */
#ifndef TRACER_VIEW_TUNE_INPUT_H
#define TRACER_VIEW_TUNE_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "tune.h"

#define TUNE_BUCKET_NS 1000000000LL
#define TUNE_SPAN_MAX_S (14 * 86400) /* 1.2 M buckets: about 50 MB of scratch at most */
/* Bytes of distinct names, tools, pipelines, states and hosts (common/intern.h); past it: out of memory. */
#define TUNE_INTERN_BUDGET (256ull << 20)

/* What the loader read and what it set aside (nothing is dropped silently). */
struct tune_counts {
	uint64_t samples;            /* sample rows read */
	uint64_t samples_bad_time;   /* at or before 1970 in real time: left out */
	uint64_t samples_orphan;     /* of a run or step the walk of runs or tasks did not return */
	uint32_t processes_too_long; /* samples spanning more than TUNE_SPAN_MAX_S: not in cores or a timeline */
	uint32_t tasks_too_long;     /* tasks whose processes' samples span more: no cores (cores_known false) */
	uint32_t timelines_too_long; /* runs whose samples span more than TUNE_SPAN_MAX_S: no timeline */
	uint64_t file_rows;          /* files rows read */
	uint64_t file_rows_orphan;   /* of a task the walk of tasks did not return, or of an unknown mode */
	uint32_t tasks_orphan;       /* steps of a run the walk of runs did not return */
	uint64_t buckets_clamped;    /* a task's or run's 1-s buckets whose summed cores or memory exceeded the
	                              * host's (samples smear across a bucket edge): held to the host's */
};

struct tune_strings;
struct tune_files;

struct tune_input {
	struct an_input in;          /* the analysis' view: points into the arrays below */
	struct an_run *runs;
	struct an_step *steps;
	uint32_t *files;
	struct an_point *timeline;
	const char **file_paths;     /* by file id: the path */
	const char **file_hosts;     /* by file id: the host id */
	size_t nfile_ids;
	int64_t *step_lake_idx;      /* by task: its steps.idx (with runs[].lake_id, its key in the lake) */
	struct tune_counts counts;
	struct tune_strings *strings; /* owns every string above */
};

/*
 * Build *out from the lake (pipeline NULL: every run). 0, or a store_err
 * with err saying what failed; *out is empty (tune_input_free is safe) on
 * error.
 */
/* newest: only the newest runs of each pipeline, that many (0: every run). */
int tune_input_load(struct store *s, const char *pipeline, uint32_t newest, struct tune_input *out, char *err,
		    size_t errlen);
void tune_input_free(struct tune_input *t);

/* A step's name as a profile key: a Nextflow task's "NAME (tag)" without " (tag)"; len of what stays. */
size_t tune_step_name_len(const char *name);
/* A Nextflow task's name starts with its work directory's hash, "[ab/cdef01] ", different in every run:
 * how many bytes to skip so that tasks of the same process profile together (0 if none). */
size_t tune_step_name_skip(const char *name);

#endif /* TRACER_VIEW_TUNE_INPUT_H */
