/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process's counters over time, from its TR_SAMPLE records: the newest
 * sample, peaks of the rates between samples, and a bounded series of
 * points. The series keeps at most SERIES_MAX_POINTS points; when full,
 * every other point is dropped and the spacing doubles, so a process that
 * ran for a week costs what one that ran for a minute does.
 */
#ifndef TRACER_MODEL_SERIES_H
#define TRACER_MODEL_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "records.h"

#define SERIES_MAX_POINTS 64
#define SERIES_FIRST_CAP 4

/* Cumulative counters of a process at one time (CLOCK_MONOTONIC). */
struct series_point {
	uint64_t ts_ns;
	uint64_t runtime_ns;
	uint64_t rss_bytes;   /* resident now, not cumulative */
	uint64_t hwm_bytes;   /* the image's peak resident set so far (VmHWM): only grows within an image */
	uint64_t read_bytes, write_bytes;
	uint64_t rchar, wchar;
	uint64_t net_tx_bytes, net_rx_bytes;
	uint64_t iowait_ns;
	uint64_t reclaim_ns;  /* in direct reclaim; 0 where the sample says it was not measured */
};

/* Highest rates between two consecutive samples (per second of wall time). */
struct series_peaks {
	uint64_t rss_bytes;
	uint64_t cpu_millicores;  /* 1000 = one CPU busy */
	uint64_t read_bps, write_bps;
	uint64_t net_tx_bps, net_rx_bps;
};

struct proc_series {
	struct series_point last;  /* the newest sample */
	struct series_point prev;  /* the one before it (all zero until the second): rates now */
	struct series_peaks peaks;
	uint64_t min_step_ns;      /* points are at least this far apart (0 until the first downsampling) */
	uint64_t samples;          /* samples received */
	uint32_t n, cap;
	struct series_point points[];
};

/* Size in bytes of a series with room for cap points. */
static inline uint64_t series_bytes(uint32_t cap)
{
	return sizeof(struct proc_series) + (uint64_t)cap * sizeof(struct series_point);
}

void series_point_from_sample(struct series_point *pt, const struct tr_sample *s);

/* Did anything the process does move between a and b (CPU, I/O, network)? */
bool series_progressed(const struct series_point *a, const struct series_point *b);

/*
 * Add a sample to *sp (allocated on first use, grown as needed). *bytes is
 * the running total of series memory, budget its bound: over it the point
 * is not kept (last and peaks still are) and false is returned. Returns
 * true when the sample was fully recorded. *sp stays valid on failure.
 */
bool series_add(struct proc_series **sp, const struct series_point *pt, uint64_t *bytes, uint64_t budget);

void series_free(struct proc_series *s, uint64_t *bytes);

#endif /* TRACER_MODEL_SERIES_H */
