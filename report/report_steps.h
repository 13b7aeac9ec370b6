/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The report's "run" and "steps" (steps.c finds them) and the summary's
 * steps table.
 */
#ifndef TRACER_REPORT_REPORT_STEPS_H
#define TRACER_REPORT_REPORT_STEPS_H

#include <stdint.h>

#include "json.h"
#include "cgtab.h"
#include "steps.h"

#define STEP_SERIES_BUCKETS 24    /* points of a step's series: its lifetime cut in equal parts */
#define STEP_SERIES_MAX_STEPS 20000 /* steps that get a series (memory: 576 bytes each while writing) */

/*
 * A step's activity over its lifetime, summed over its processes: CPU and
 * storage I/O spread over the buckets each process's samples (and its
 * start and exit) span, and the sum of the processes' largest RSS in each
 * bucket.
 */
struct step_series {
	uint64_t start_ns, bucket_ns;
	uint64_t cpu_ns[STEP_SERIES_BUCKETS];
	uint64_t io_bytes[STEP_SERIES_BUCKETS];
	uint64_t rss_bytes[STEP_SERIES_BUCKETS];
};

/* Series for the first STEP_SERIES_MAX_STEPS steps of st, from the processes procs[0..n). NULL: no memory. */
struct step_series *report_step_series(const struct steps *st, struct proc *const *procs, size_t n);

void report_write_run(struct json *j, const struct steps *st, const char *key);
/* series may be NULL (no series written). */
void report_write_steps(struct json *j, const struct steps *st, const struct step_series *series,
			uint64_t mono_to_real_ns, const struct cgtab *cgroups);

/* One line per step (at most max_lines, then a count), for the human summary. */
void report_print_steps(struct obuf *o, const struct steps *st, unsigned max_lines);

#endif /* TRACER_REPORT_REPORT_STEPS_H */
