/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A step's memory as a limit for it must hold it (docs/processor.md, "Step
 * memory"):
 *
 *  - the concurrent peak: the largest sum of the resident sets of the
 *    step's processes alive at one instant, estimated from each process's
 *    samples and its exact peak at exit;
 *  - the sum of overlapping peaks: the largest sum of whole-life peaks of
 *    processes whose lifetimes overlap, the upper bound Nextflow's trace
 *    and SLURM's seff report;
 *  - its memory cgroup's own peak, when the step has a memory cgroup to
 *    itself.
 *
 * The sweep is pure: spans in, peak out.
 */
#ifndef TRACER_ATTRIB_STEPMEM_H
#define TRACER_ATTRIB_STEPMEM_H

#include <stddef.h>
#include <stdint.h>

#include "proctab.h"
#include "steps.h"

/* bytes held over [t0, t1). */
struct mem_span {
	uint64_t t0, t1;
	uint64_t bytes;
};

/*
 * The largest total of bytes held at one instant. A span that ends at t is
 * released before one that starts at t is counted (a tool that follows
 * another does not overlap it). Sorts spans' ends into ev, which has room
 * for 2 * n entries. O(n log n).
 */
struct mem_event {
	uint64_t t;
	int64_t delta;
};
uint64_t mem_spans_peak(const struct mem_span *spans, size_t n, struct mem_event *ev);

/*
 * The spans a process held memory in, from when its current image began
 * to its exit (or now_ns while it runs), appended to out (room for
 * mem_proc_spans_max(p)); returns how many:
 *  - before its first sample, the VmHWM that sample showed (reached then);
 *  - between two samples, the larger of their resident sets, or the second
 *    one's VmHWM if it rose in between (the new peak happened there);
 *  - after its last sample, the last resident set, or its peak at exit if
 *    that is above the last VmHWM;
 *  - without samples (most processes: they live less than an interval),
 *    its peak over its whole life.
 */
size_t mem_proc_spans(const struct proc *p, uint64_t now_ns, struct mem_span *out);
size_t mem_proc_spans_max(const struct proc *p);

/*
 * Fill every step's memory fields (steps.h) from its processes (p->step
 * numbers them). -ENOMEM leaves them as they were.
 */
int steps_memory(struct steps *s, const struct proctab *t);

#endif /* TRACER_ATTRIB_STEPMEM_H */
