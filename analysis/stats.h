/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Order statistics for the analysis: quantiles by nearest rank, the
 * median and the median absolute deviation (MAD). Pure: numbers in,
 * numbers out; the caller owns every array (no allocation here).
 */
#ifndef TRACER_ANALYSIS_STATS_H
#define TRACER_ANALYSIS_STATS_H

#include <stddef.h>

/* Sort v[0..n) ascending, in place (heapsort: no allocation, no sysinfo(); NaNs are refused by the callers). */
void stats_sort(double *v, size_t n);

/*
 * The q-quantile (0 < q <= 1) of sorted[0..n) by nearest rank: the value
 * at rank ceil(q * n) (1-based), as SLURM's and most textbooks' p95 is.
 * 0 when n is 0.
 */
double stats_quantile(const double *sorted, size_t n, double q);

/*
 * The median of v[0..n) and its median absolute deviation, the robust
 * centre and spread of "slower than usual". scratch holds n values; v is
 * left unchanged. The median of an even count is the mean of the middle
 * two. Both 0 when n is 0.
 */
void stats_median_mad(const double *v, size_t n, double *scratch, double *median, double *mad);

#endif /* TRACER_ANALYSIS_STATS_H */
