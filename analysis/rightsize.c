/* SPDX-License-Identifier: Apache-2.0 */
#include "rightsize.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats.h"

const char *rs_confidence_name(enum rs_confidence c)
{
	switch (c) {
	case RS_LOW:
		return "low";
	case RS_MEDIUM:
		return "medium";
	case RS_HIGH:
		return "high";
	case RS_NONE:
		break;
	}
	return "none";
}

static enum rs_confidence confidence_of(uint32_t runs)
{
	return runs < RS_MIN_RUNS ? RS_NONE : runs < 10 ? RS_LOW : runs < 20 ? RS_MEDIUM : RS_HIGH;
}

static uint64_t round_up(uint64_t v, uint64_t step)
{
	return v % step ? v - v % step + step : v;
}

static bool usable(const struct rs_task *t)
{
	return isfinite(t->cores) && t->cores >= 0 && isfinite(t->duration_s) && t->duration_s >= 0;
}

/* Memory: the peak with headroom, never below the OOM floor. */
static void advise_memory(const struct rs_task *tasks, size_t n, struct rs_advice *out)
{
	uint64_t peak = 0, floor = 0, want;

	for (size_t i = 0; i < n; i++) {
		const struct rs_task *t = &tasks[i];

		if (t->peak_mem_bytes > peak)
			peak = t->peak_mem_bytes;
		if (t->oom_killed && t->oom_limit_bytes) {
			uint64_t bump = (uint64_t)ceil((double)t->oom_limit_bytes * RS_OOM_FACTOR);
			uint64_t add = t->oom_limit_bytes + RS_OOM_ADD;
			uint64_t f = bump > add ? bump : add;

			if (f > floor)
				floor = f;
		}
	}
	want = (uint64_t)ceil((double)peak * RS_MEM_HEADROOM);
	out->memory_from_oom = floor > want;
	out->memory_bytes = round_up(out->memory_from_oom ? floor : want, RS_MEM_ROUND);
	if (out->memory_bytes == 0)
		out->memory_bytes = RS_MEM_ROUND;
}

int rightsize(const struct rs_task *tasks, size_t n, uint32_t runs, double *scratch, struct rs_advice *out)
{
	double cores_p95, time_p99;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (!usable(&tasks[i]))
			return -EINVAL;
	out->runs = runs;
	out->tasks = (uint32_t)n;
	out->confidence = n ? confidence_of(runs) : RS_NONE;
	if (out->confidence == RS_NONE)
		return 0;
	advise_memory(tasks, n, out);
	for (size_t i = 0; i < n; i++)
		scratch[i] = tasks[i].cores;
	stats_sort(scratch, n);
	cores_p95 = stats_quantile(scratch, n, 0.95);
	/* Cores measured over sample intervals carry the intervals' jitter: 1.02 of a one-thread tool is 1. */
	out->cpus = cores_p95 - RS_CPU_NOISE < 1 ? 1 : (uint32_t)ceil(cores_p95 - RS_CPU_NOISE);
	for (size_t i = 0; i < n; i++)
		scratch[i] = tasks[i].duration_s;
	stats_sort(scratch, n);
	time_p99 = stats_quantile(scratch, n, 0.99);
	out->time_s = time_p99 * RS_TIME_FACTOR < RS_TIME_MIN_S ? RS_TIME_MIN_S : time_p99 * RS_TIME_FACTOR;
	return 0;
}
