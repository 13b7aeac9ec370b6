/* SPDX-License-Identifier: Apache-2.0 */
#include "stats.h"

#include <math.h>
#include <string.h>

#include "hsort.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void stats_sort(double *v, size_t n)
{
	hsort(v, n, sizeof(*v), cmp_double);
}

double stats_quantile(const double *sorted, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0;
	if (!(q > 0))
		return sorted[0];
	rank = (size_t)ceil(q * (double)n - 1e-9); /* 0.95 * 20 is 19, not 19.000000000000004 */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static double median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void stats_median_mad(const double *v, size_t n, double *scratch, double *median, double *mad)
{
	*median = *mad = 0;
	if (n == 0)
		return;
	memcpy(scratch, v, n * sizeof(*v));
	stats_sort(scratch, n);
	*median = median_sorted(scratch, n);
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - *median);
	stats_sort(scratch, n);
	*mad = median_sorted(scratch, n);
}
