/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Why a step takes the time it takes: a task's wall time split by what
 * its processes were doing, and the class of a step from the split and
 * its memory (docs/tune.md, "The breakdown" and "Classifying a step").
 */
#include "tune.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_S 1e9
#define GIB (1024.0 * 1024 * 1024)
#define MIB (1024.0 * 1024)

static const char *const part_names[AN_PARTS] = {
	[AN_CPU] = "cpu", [AN_RUN_QUEUE] = "run_queue", [AN_IO_WAIT] = "io_wait", [AN_BLOCKED] = "blocked",
	[AN_NET_WAIT] = "net_wait", [AN_RECLAIM] = "reclaim", [AN_IDLE] = "idle",
};

const char *an_part_name(enum an_part p)
{
	return (unsigned)p < AN_PARTS ? part_names[p] : "unknown";
}

const char *an_class_name(enum an_class c)
{
	switch (c) {
	case AN_CLASS_COMPUTE:
		return "compute";
	case AN_CLASS_MEMORY:
		return "memory";
	case AN_CLASS_IO:
		return "io";
	case AN_CLASS_NETWORK:
		return "network";
	case AN_CLASS_IDLE:
		return "idle";
	case AN_CLASS_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *an_bytes_str(uint64_t bytes, char *buf, size_t len)
{
	if ((double)bytes < GIB)
		snprintf(buf, len, "%.0f MiB", (double)bytes / MIB);
	else
		snprintf(buf, len, "%.1f GiB", (double)bytes / GIB);
	return buf;
}

double an_step_wall_s(const struct an_step *t)
{
	if (t->running || t->end_ns == 0 || t->end_ns <= t->start_ns)
		return 0;
	/* end > start, so the difference fits in 64 unsigned bits even where int64 would overflow */
	return (double)((uint64_t)t->end_ns - (uint64_t)t->start_ns) / NS_PER_S;
}

double an_step_cores(const struct an_step *t, bool p95)
{
	double wall;

	if (t->cores_known)
		return p95 ? t->cores_p95 : t->cores_p50;
	wall = an_step_wall_s(t);
	return wall > 0 ? (double)t->cpu_ns / NS_PER_S / wall : 0;
}

/*
 * The step's thread-time by state (docs/tune.md, "The breakdown"), each
 * part's share of their total, scaled to the wall time. Direct reclaim
 * runs on a CPU or sleeps uninterruptibly, so it is taken out of those
 * parts (in proportion) rather than counted twice. Idle is the loader's
 * per-process figure (life less children's cover and busy time) where
 * known, else what the busy parts leave of the summed lifetimes. With
 * nothing measured at all, the wall time is taken as idle.
 */
void an_breakdown_of(const struct an_step *t, struct an_breakdown *out)
{
	double c[AN_PARTS], busy = 0, total, held, r;

	memset(out, 0, sizeof(*out));
	out->wall_s = an_step_wall_s(t);
	if (out->wall_s <= 0)
		return;
	c[AN_CPU] = (double)t->cpu_ns;
	c[AN_RUN_QUEUE] = (double)t->run_delay_ns;
	c[AN_IO_WAIT] = (double)t->iowait_ns;
	c[AN_BLOCKED] = (double)t->blocked_ns;
	c[AN_NET_WAIT] = (double)t->net_wait_ns;
	held = c[AN_CPU] + c[AN_IO_WAIT] + c[AN_BLOCKED];
	r = (double)t->reclaim_ns < held ? (double)t->reclaim_ns : held;
	c[AN_RECLAIM] = r;
	if (held > 0) {
		c[AN_CPU] *= (held - r) / held;
		c[AN_IO_WAIT] *= (held - r) / held;
		c[AN_BLOCKED] *= (held - r) / held;
	}
	for (int i = 0; i < AN_IDLE; i++)
		busy += c[i];
	if (t->idle_known)
		c[AN_IDLE] = (double)t->idle_ns;
	else
		c[AN_IDLE] = (double)t->proc_ns > busy ? (double)t->proc_ns - busy : 0;
	total = busy + c[AN_IDLE];
	if (total <= 0) {
		out->part_s[AN_IDLE] = out->wall_s;
		return;
	}
	for (int i = 0; i < AN_PARTS; i++)
		out->part_s[i] = out->wall_s * c[i] / total;
}

/* ---- classification -------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (w > 0)
		*at += (size_t)w;
}

/* An OOM kill settles it: the step did not fit what it was given. */
static bool oom_finding(const struct an_step *const *tasks, size_t n, char *why, size_t len)
{
	uint64_t kills = 0, limit = 0;
	char b[32];

	for (size_t i = 0; i < n; i++) {
		kills += tasks[i]->oom_kills;
		if (tasks[i]->oom_limit_bytes > limit)
			limit = tasks[i]->oom_limit_bytes;
	}
	if (!kills)
		return false;
	if (!limit)
		snprintf(why, len, "OOM-killed %llu time%s (limit unknown)", (unsigned long long)kills,
			 kills > 1 ? "s" : "");
	else if (kills == 1)
		snprintf(why, len, "OOM-killed at %s limit", an_bytes_str(limit, b, sizeof(b)));
	else
		snprintf(why, len, "OOM-killed %llu times (limit up to %s)", (unsigned long long)kills,
			 an_bytes_str(limit, b, sizeof(b)));
	return true;
}

/* A peak close to a known limit: one larger input away from an OOM kill. */
static bool limit_finding(const struct an_step *const *tasks, size_t n, char *why, size_t len)
{
	const struct an_step *worst = NULL;
	double worst_share = 0;
	char p[32], l[32];

	for (size_t i = 0; i < n; i++) {
		const struct an_step *t = tasks[i];
		double share = t->mem_limit_bytes ? (double)t->peak_mem_bytes / (double)t->mem_limit_bytes : 0;

		if (share >= AN_MEM_LIMIT_SHARE && share > worst_share) {
			worst = t;
			worst_share = share;
		}
	}
	if (!worst)
		return false;
	snprintf(why, len, "peak %s is %.0f%% of its %s limit", an_bytes_str(worst->peak_mem_bytes, p, sizeof(p)),
		 worst_share * 100, an_bytes_str(worst->mem_limit_bytes, l, sizeof(l)));
	return true;
}

/*
 * Memory per core used above what a general-purpose instance gives (4
 * GiB per vCPU on AWS m, GCP n2-standard, Azure D): the step needs a
 * memory-optimised shape, or it pays for idle cores. Only for a step
 * holding 1 GiB or more, and with cores floored at 0.25, so a small or
 * idle step is not flagged for the ratio alone.
 */
static bool ratio_finding(const struct an_step *const *tasks, size_t n, char *why, size_t len)
{
	const struct an_step *worst = NULL;
	double worst_ratio = 0, worst_cores = 0;
	char p[32], r[32];

	for (size_t i = 0; i < n; i++) {
		const struct an_step *t = tasks[i];
		double wall = an_step_wall_s(t), cores, ratio;

		/* On average over its life: a burst of faulting its memory in does not hide that it then holds
		 * it on an idle core. */
		if (wall <= 0)
			continue; /* no figure for its cores at all */
		cores = (double)t->cpu_ns / NS_PER_S / wall;
		ratio = (double)t->peak_mem_bytes / (cores > AN_CORES_FLOOR ? cores : AN_CORES_FLOOR);
		if (t->peak_mem_bytes >= AN_MEM_PER_CORE_MIN && ratio >= (double)AN_MEM_PER_CORE &&
		    ratio > worst_ratio) {
			worst = t;
			worst_ratio = ratio;
			worst_cores = cores;
		}
	}
	if (!worst)
		return false;
	snprintf(why, len, "%s held on %.*f cores (%s per core)", an_bytes_str(worst->peak_mem_bytes, p, sizeof(p)),
		 worst_cores < 0.1 ? 2 : 1, worst_cores, an_bytes_str((uint64_t)worst_ratio, r, sizeof(r)));
	return true;
}

/* The time classes and the parts of the breakdown each one sums, in the order ties are broken. */
static const struct {
	enum an_class c;
	enum an_part parts[2];
	int nparts;
} time_classes[] = {
	{ AN_CLASS_COMPUTE, { AN_CPU, AN_RUN_QUEUE }, 2 },
	{ AN_CLASS_IO, { AN_IO_WAIT, AN_BLOCKED }, 2 },
	{ AN_CLASS_NETWORK, { AN_NET_WAIT, AN_NET_WAIT }, 1 },
	{ AN_CLASS_IDLE, { AN_IDLE, AN_IDLE }, 1 },
};

/*
 * "io_wait 61% + blocked 12% of wall": the parts of the class that show
 * (1% or more; the last one if none does). Cores are the CPU time over
 * the wall time, not the scaled cpu part, which cannot exceed the wall.
 */
static void time_why(int k, const struct an_breakdown *b, double cpu_s, bool mixed, char *why, size_t len)
{
	size_t at = 0;
	int shown = 0;

	if (mixed)
		append(why, len, &at, "mixed; largest: ");
	for (int i = 0; i < time_classes[k].nparts; i++) {
		enum an_part p = time_classes[k].parts[i];
		double share = b->part_s[p] / b->wall_s;

		if (share < 0.01 && (shown || i + 1 < time_classes[k].nparts))
			continue;
		append(why, len, &at, "%s%s %.0f%%", shown ? " + " : "", an_part_name(p), share * 100);
		shown++;
	}
	append(why, len, &at, " of wall");
	if (time_classes[k].c == AN_CLASS_COMPUTE)
		append(why, len, &at, " (%.1f cores)", cpu_s / b->wall_s);
}

/*
 * Memory first (an OOM kill, a peak near its limit, reclaim, too much
 * memory per core): a memory-bound step often shows as idle or
 * computing, and the fix (more memory) differs. Then the largest share
 * of the wall time; under AN_CLASS_MIN_SHARE it still names the class,
 * but why says the time is mixed.
 */
enum an_class an_classify(const struct an_step *const *tasks, size_t n, char *why, size_t whylen)
{
	struct an_breakdown sum = { 0 }, b;
	double best = -1, cpu_s = 0;
	int k = 0;

	if (whylen)
		why[0] = '\0';
	if (oom_finding(tasks, n, why, whylen) || limit_finding(tasks, n, why, whylen))
		return AN_CLASS_MEMORY;
	for (size_t i = 0; i < n; i++) {
		an_breakdown_of(tasks[i], &b);
		sum.wall_s += b.wall_s;
		if (b.wall_s > 0)
			cpu_s += (double)tasks[i]->cpu_ns / NS_PER_S;
		for (int p = 0; p < AN_PARTS; p++)
			sum.part_s[p] += b.part_s[p];
	}
	if (sum.wall_s > 0 && sum.part_s[AN_RECLAIM] / sum.wall_s >= AN_RECLAIM_SHARE) {
		snprintf(why, whylen, "reclaim %.0f%% of wall", sum.part_s[AN_RECLAIM] / sum.wall_s * 100);
		return AN_CLASS_MEMORY;
	}
	if (ratio_finding(tasks, n, why, whylen))
		return AN_CLASS_MEMORY;
	if (sum.wall_s <= 0) {
		snprintf(why, whylen, "no finished task");
		return AN_CLASS_UNKNOWN;
	}
	for (int c = 0; c < (int)(sizeof(time_classes) / sizeof(time_classes[0])); c++) {
		double share = 0;

		for (int i = 0; i < time_classes[c].nparts; i++)
			share += sum.part_s[time_classes[c].parts[i]] / sum.wall_s;
		if (share > best) {
			best = share;
			k = c;
		}
	}
	time_why(k, &sum, cpu_s, best < AN_CLASS_MIN_SHARE, why, whylen);
	return time_classes[k].c;
}
