/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rightsizing one step from its history (issue 15): how much memory, how
 * many CPUs and how much time to ask for, by a stated rule, with a
 * confidence that grows with the history. Pure: observations in, advice
 * out; no I/O, no clock.
 *
 * The rule (docs/tune.md; the anchors in brackets):
 *   memory = the highest concurrent peak of any task x 1.15, rounded up
 *            to 64 MiB [KRR: max x 1.15]; never below what an OOM kill
 *            showed too small: after an OOM kill at limit L, at least
 *            max(L x 1.2, L + 100 MiB) [VPA's OOM bump];
 *   CPUs   = ceil(p95 of the cores each task used - 0.05), at least 1
 *            [KRR's P95 for CPU; 0.05: the samples' jitter];
 *   time   = p99 of the durations x 1.5, at least 1 minute.
 *   confidence: fewer than 3 runs: no advice; 3-9 runs: low; 10-19:
 *            medium; 20 or more: high [VPA's confidence grows with the
 *            history's length].
 */
#ifndef TRACER_ANALYSIS_RIGHTSIZE_H
#define TRACER_ANALYSIS_RIGHTSIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One task (one step instance) as the lake measured it. */
struct rs_task {
	uint64_t peak_mem_bytes;    /* the concurrent peak of its processes (steps.peak_rss_bytes) */
	double cores;               /* the cores it used: p95 of its CPU concurrency over its samples */
	double duration_s;          /* wall time */
	bool oom_killed;            /* the OOM killer ended one of its processes */
	uint64_t oom_limit_bytes;   /* the memory limit it hit (0: not known) */
};

enum rs_confidence { RS_NONE = 0, RS_LOW, RS_MEDIUM, RS_HIGH };

struct rs_advice {
	enum rs_confidence confidence; /* RS_NONE: too little history, no figures below */
	uint64_t memory_bytes;
	uint32_t cpus;
	double time_s;
	bool memory_from_oom;          /* the OOM floor, not the peak, set the memory */
	uint32_t runs, tasks;
};

#define RS_MIN_RUNS 3
#define RS_MEM_HEADROOM 1.15
#define RS_MEM_ROUND (64ull << 20)
#define RS_OOM_FACTOR 1.2
#define RS_OOM_ADD (100ull << 20)
#define RS_CPU_NOISE 0.05   /* cores over a whole CPU by less than this are sampling jitter, not a CPU more */
#define RS_TIME_FACTOR 1.5
#define RS_TIME_MIN_S 60.0

const char *rs_confidence_name(enum rs_confidence c); /* "none", "low", "medium", "high" */

/*
 * The advice for a step seen in `runs` runs as tasks[0..n). scratch holds
 * n doubles. 0, or -EINVAL for a task with a negative or non-finite
 * figure (nothing is advised on numbers that cannot be).
 */
int rightsize(const struct rs_task *tasks, size_t n, uint32_t runs, double *scratch, struct rs_advice *out);

#endif /* TRACER_ANALYSIS_RIGHTSIZE_H */
