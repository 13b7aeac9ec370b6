/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The analysis' order statistics and the rightsizing rule
 * (analysis/stats.c, analysis/rightsize.c), against answers computed by
 * hand: nearest-rank quantiles, median and MAD, memory with headroom and
 * the OOM floor, CPUs from the p95 of cores used, time from the p99, and
 * the confidence from the number of runs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rightsize.h"
#include "stats.h"

#define MiB (1ull << 20)

static void quantiles_are_nearest_rank(void **state)
{
	double v[20];

	(void)state;
	for (int i = 0; i < 20; i++)
		v[i] = 20 - i; /* 20 .. 1, unsorted */
	stats_sort(v, 20);
	assert_true(v[0] == 1 && v[19] == 20);
	assert_true(stats_quantile(v, 20, 0.95) == 19); /* rank ceil(19) = 19 */
	assert_true(stats_quantile(v, 20, 0.50) == 10); /* rank 10 */
	assert_true(stats_quantile(v, 20, 0.99) == 20); /* rank ceil(19.8) = 20 */
	assert_true(stats_quantile(v, 20, 1.0) == 20);
	assert_true(stats_quantile(v, 1, 0.95) == 1);
	assert_true(stats_quantile(v, 0, 0.95) == 0);
}

static void median_and_mad_resist_an_outlier(void **state)
{
	const double v[] = { 10, 11, 9, 10, 100, 10, 12 };
	double scratch[7], median, mad;

	(void)state;
	/* sorted: 9 10 10 10 11 12 100 -> median 10; |x - 10|: 0 1 1 0 90 0 2 -> sorted 0 0 0 1 1 2 90 -> MAD 1 */
	stats_median_mad(v, 7, scratch, &median, &mad);
	assert_true(median == 10 && mad == 1);
	assert_true(v[4] == 100); /* the input is left as it was */
	stats_median_mad(v, 2, scratch, &median, &mad); /* 10, 11: median 10.5, MAD 0.5 */
	assert_true(median == 10.5 && mad == 0.5);
}

static void memory_is_the_peak_with_headroom_rounded_up(void **state)
{
	struct rs_task t[3] = {
		{ .peak_mem_bytes = 1000 * MiB, .cores = 1.2, .duration_s = 600 },
		{ .peak_mem_bytes = 1800 * MiB, .cores = 1.9, .duration_s = 900 },
		{ .peak_mem_bytes = 1200 * MiB, .cores = 0.4, .duration_s = 300 },
	};
	struct rs_advice a;
	double scratch[3];

	(void)state;
	assert_int_equal(rightsize(t, 3, 3, scratch, &a), 0);
	assert_int_equal(a.confidence, RS_LOW);
	/* 1800 MiB x 1.15 = 2070 MiB -> up to a multiple of 64 MiB: 2112 MiB */
	assert_int_equal(a.memory_bytes, 2112 * MiB);
	assert_false(a.memory_from_oom);
	/* p95 of {0.4, 1.2, 1.9} by nearest rank: rank ceil(2.85) = 3 -> 1.9 -> 2 CPUs */
	assert_int_equal(a.cpus, 2);
	/* p99 of {300, 600, 900}: 900 s x 1.5 */
	assert_true(a.time_s == 1350);
	assert_int_equal(a.runs, 3);
	assert_int_equal(a.tasks, 3);
}

static void an_oom_kill_sets_a_floor_like_vpa(void **state)
{
	struct rs_task t[3] = {
		{ .peak_mem_bytes = 900 * MiB, .cores = 1, .duration_s = 10 },
		{ .peak_mem_bytes = 950 * MiB, .cores = 1, .duration_s = 10, .oom_killed = true,
		  .oom_limit_bytes = 1024 * MiB },
		{ .peak_mem_bytes = 400 * MiB, .cores = 1, .duration_s = 10, .oom_killed = true,
		  .oom_limit_bytes = 256 * MiB },
	};
	struct rs_advice a;
	double scratch[3];

	(void)state;
	assert_int_equal(rightsize(t, 3, 12, scratch, &a), 0);
	assert_int_equal(a.confidence, RS_MEDIUM);
	/* peak 950 MiB x 1.15 = 1092.5 MiB; OOM at 1 GiB: max(1228.8, 1124) MiB = 1228.8 -> 1280 MiB */
	assert_true(a.memory_from_oom);
	assert_int_equal(a.memory_bytes, 1280 * MiB);
	/* a small limit: +100 MiB beats x1.2 (356 > 307.2), but the 1 GiB floor is higher */
	assert_int_equal(a.cpus, 1);
	assert_true(a.time_s == RS_TIME_MIN_S); /* 10 s x 1.5 is under a minute */
}

/* A one-thread tool measured at 1.03 cores (the samples' interval jitter) needs 1 CPU; at 1.06, 2. */
static void cores_just_over_a_cpu_are_sampling_jitter(void **state)
{
	struct rs_task t[3] = {
		{ .peak_mem_bytes = MiB, .cores = 0.98, .duration_s = 10 },
		{ .peak_mem_bytes = MiB, .cores = 1.01, .duration_s = 10 },
		{ .peak_mem_bytes = MiB, .cores = 1.03, .duration_s = 10 },
	};
	struct rs_advice a;
	double scratch[3];

	(void)state;
	assert_int_equal(rightsize(t, 3, 3, scratch, &a), 0);
	assert_int_equal(a.cpus, 1); /* p95 1.03: ceil(1.03 - 0.05) = 1 */
	t[2].cores = 1.06;
	assert_int_equal(rightsize(t, 3, 3, scratch, &a), 0);
	assert_int_equal(a.cpus, 2); /* ceil(1.06 - 0.05) = 2 */
	t[2].cores = 2.04;
	assert_int_equal(rightsize(t, 3, 3, scratch, &a), 0);
	assert_int_equal(a.cpus, 2);
}

static void too_little_history_gives_no_advice(void **state)
{
	struct rs_task t[5] = {
		{ .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 }, { .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 },
		{ .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 }, { .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 },
		{ .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 },
	};
	struct rs_advice a;
	double scratch[5];

	(void)state;
	/* five tasks, but of two runs: confidence comes from runs */
	assert_int_equal(rightsize(t, 5, 2, scratch, &a), 0);
	assert_int_equal(a.confidence, RS_NONE);
	assert_int_equal(a.memory_bytes, 0);
	assert_string_equal(rs_confidence_name(a.confidence), "none");
	assert_int_equal(rightsize(t, 5, 25, scratch, &a), 0);
	assert_int_equal(a.confidence, RS_HIGH);
	assert_int_equal(a.memory_bytes, 64 * MiB); /* 1.15 MiB rounds up to the 64 MiB step */
	assert_int_equal(rightsize(t, 0, 25, scratch, &a), 0);
	assert_int_equal(a.confidence, RS_NONE);
}

static void impossible_figures_are_refused(void **state)
{
	struct rs_task t[3] = {
		{ .peak_mem_bytes = MiB, .cores = 1, .duration_s = 1 },
		{ .peak_mem_bytes = MiB, .cores = NAN, .duration_s = 1 },
		{ .peak_mem_bytes = MiB, .cores = 1, .duration_s = -4 },
	};
	struct rs_advice a;
	double scratch[3];

	(void)state;
	assert_int_equal(rightsize(t, 2, 5, scratch, &a), -EINVAL);
	assert_int_equal(a.confidence, RS_NONE);
	t[1].cores = 1;
	assert_int_equal(rightsize(t, 3, 5, scratch, &a), -EINVAL);
	assert_int_equal(rightsize(t, 2, 5, scratch, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantiles_are_nearest_rank),
		cmocka_unit_test(median_and_mad_resist_an_outlier),
		cmocka_unit_test(memory_is_the_peak_with_headroom_rounded_up),
		cmocka_unit_test(an_oom_kill_sets_a_floor_like_vpa),
		cmocka_unit_test(cores_just_over_a_cpu_are_sampling_jitter),
		cmocka_unit_test(too_little_history_gives_no_advice),
		cmocka_unit_test(impossible_figures_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
