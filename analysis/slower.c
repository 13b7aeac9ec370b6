/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Slower than usual: each task of a run against the same step's tasks of
 * the earlier runs of its pipeline, by a robust z-score (median and MAD,
 * not mean and standard deviation: one earlier outlier must not hide the
 * next), with the part of the breakdown that grew as the likely cause
 * (docs/tune.md, "Slower than usual").
 *
 * The history is gathered walking the runs back from the newest earlier
 * one, and stops once every step of the run has max_history runs of it:
 * the cost is the history, not the lake.
 */
#include "tune.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"
#include "stats.h"

/*
 * A step name of the run, how many earlier runs of it were found, and
 * the centre and spread of its history, computed once for all the run's
 * tasks of that name: of the durations [0] and, when the inputs vary, of
 * the durations per input byte [1].
 */
struct group {
	const char *name;
	uint32_t runs, last_run, first, n; /* its members: member[first .. first+n) once placed */
	bool summarised, inputs_vary;
	double median[2], mad[2];
	double min_s;               /* its shortest duration: a task not 1 s above it cannot be slower */
};

/* A task of an earlier run, in the history of group g. */
struct member {
	uint32_t g, step;
};

struct history {
	struct group *g;
	size_t ng;
	struct member *m;           /* as found (newest run first), then placed by group */
	size_t nm, cap;
};

/* Work arrays as long as the longest history. */
struct scratch {
	double *x, *tmp;
	struct an_breakdown *b;
};

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static bool finished(const struct an_step *t)
{
	return !t->running && t->end_ns != 0;
}

static bool steps_fit(const struct an_input *in, const struct an_run *r)
{
	return (uint64_t)r->step_first + r->step_n <= in->nsteps;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The run's distinct step names, sorted, each a group (the names are sorted alone: hsort moves at most
 * HSORT_MAX_SIZE bytes an element, less than a group). */
static int groups_of(const struct an_input *in, const struct an_run *r, struct history *h)
{
	const char **names = malloc((r->step_n ? r->step_n : 1) * sizeof(*names));
	size_t n = 0;

	h->g = malloc((r->step_n ? r->step_n : 1) * sizeof(*h->g));
	if (!names || !h->g) {
		free(names);
		return -ENOMEM;
	}
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++)
		if (finished(&in->steps[i]))
			names[n++] = str_or_empty(in->steps[i].name);
	hsort(names, n, sizeof(*names), by_name);
	h->ng = 0;
	for (size_t i = 0; i < n; i++)
		if (h->ng == 0 || strcmp(h->g[h->ng - 1].name, names[i]) != 0)
			h->g[h->ng++] = (struct group){ .name = names[i], .last_run = UINT32_MAX };
	free(names);
	return 0;
}

static long find_group(const struct history *h, const char *name)
{
	size_t lo = 0, hi = h->ng;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(h->g[mid].name, name);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int add_member(struct history *h, uint32_t g, uint32_t step)
{
	if (h->nm == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct member *m = realloc(h->m, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		h->m = m;
		h->cap = cap;
	}
	h->m[h->nm++] = (struct member){ g, step };
	return 0;
}

/* Take run k's tasks of the groups still short of max_history runs; *full counts the groups done. */
static int take_run(const struct an_input *in, uint32_t k, uint32_t max_history, struct history *h, size_t *full)
{
	const struct an_run *r = &in->runs[k];

	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++) {
		long g = finished(&in->steps[i]) ? find_group(h, str_or_empty(in->steps[i].name)) : -1;
		struct group *grp;

		if (g < 0)
			continue;
		grp = &h->g[g];
		if (grp->last_run != k) {
			if (grp->runs == max_history)
				continue;
			grp->runs++;
			grp->last_run = k;
			if (grp->runs == max_history)
				(*full)++;
		}
		if (add_member(h, (uint32_t)g, i))
			return -ENOMEM;
	}
	return 0;
}

/* The earlier runs of the pipeline, newest first (runs[] is by start), until every group is full. */
static int gather(const struct an_input *in, uint32_t run, uint32_t max_history, struct history *h)
{
	const struct an_run *r = &in->runs[run];
	size_t full = 0;

	for (size_t k = in->nruns; k-- > 0 && full < h->ng;) {
		const struct an_run *e = &in->runs[k];

		if (k == run || e->start_ns >= r->start_ns ||
		    strcmp(str_or_empty(e->pipeline), str_or_empty(r->pipeline)) != 0)
			continue;
		if (!steps_fit(in, e))
			return -EINVAL;
		if (take_run(in, (uint32_t)k, max_history, h, &full))
			return -ENOMEM;
	}
	return 0;
}

/* Each group's members next to each other (a counting sort: the order within a group is kept). */
static int place(const struct an_input *in, struct history *h)
{
	struct member *m = malloc((h->nm ? h->nm : 1) * sizeof(*m));
	uint32_t at = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < h->ng; i++)
		h->g[i].n = 0;
	for (size_t i = 0; i < h->nm; i++)
		h->g[h->m[i].g].n++;
	for (size_t i = 0; i < h->ng; i++) {
		h->g[i].first = at;
		at += h->g[i].n;
		h->g[i].n = 0;
	}
	for (size_t i = 0; i < h->nm; i++) {
		struct group *g = &h->g[h->m[i].g];
		double d = an_step_wall_s(&in->steps[h->m[i].step]);

		if (g->n == 0 || d < g->min_s)
			g->min_s = d;
		m[g->first + g->n++] = h->m[i];
	}
	free(h->m);
	h->m = m;
	return 0;
}

/* ---- one task against its history ------------------------------------------ */

static const char *const part_reading[AN_PARTS][2] = {
	[AN_CPU] = { "CPU time", "more computation" },
	[AN_RUN_QUEUE] = { "run-queue wait", "CPU oversubscription" },
	[AN_IO_WAIT] = { "I/O wait", "disk contention" },
	[AN_BLOCKED] = { "blocked time", "uninterruptible waits other than disk I/O (locks, NFS)" },
	[AN_NET_WAIT] = { "network wait", "a slower network or remote service" },
	[AN_RECLAIM] = { "direct reclaim", "memory pressure" },
	[AN_IDLE] = { "idle time", "waiting on input, timers or other processes" },
};

/*
 * Inputs vary when every task read something and their coefficient of
 * variation (population standard deviation / mean) exceeds
 * AN_SLOW_INPUT_CV: then a longer time may only mean a larger input.
 */
static bool inputs_vary(const struct an_input *in, const struct member *m, size_t n)
{
	double sum = 0, mean, ss = 0;

	for (size_t i = 0; i < n; i++) {
		if (in->steps[m[i].step].rchar == 0)
			return false;
		sum += (double)in->steps[m[i].step].rchar;
	}
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = (double)in->steps[m[i].step].rchar - mean;

		ss += d * d;
	}
	return sqrt(ss / (double)n) / mean > AN_SLOW_INPUT_CV;
}

static double median_of(const double *v, size_t n, double *scratch)
{
	double median, mad;

	stats_median_mad(v, n, scratch, &median, &mad);
	return median;
}

/* The part of the breakdown that grew the most over its history's median: the likely cause. */
static enum an_part find_cause(const struct an_step *t, size_t n, struct scratch *s, struct an_slow *out)
{
	struct an_breakdown b;
	double best = -INFINITY;
	enum an_part cause = AN_CPU;

	an_breakdown_of(t, &b);
	for (int p = 0; p < AN_PARTS; p++) {
		double med;

		for (size_t i = 0; i < n; i++)
			s->x[i] = s->b[i].part_s[p];
		med = median_of(s->x, n, s->tmp);
		if (b.part_s[p] - med > best) {
			best = b.part_s[p] - med;
			cause = (enum an_part)p;
			out->cause_s = b.part_s[p];
			out->cause_median_s = med;
		}
	}
	out->cause = an_part_name(cause);
	return cause;
}

static void explain(const struct an_slow *o, enum an_part p, bool input_grew, char *why, size_t len)
{
	char lead[128], a[32], b[32];

	if (o->per_input_byte)
		snprintf(lead, sizeof(lead), "%.1fx its median time per input byte over %u runs (%.1f s; median %.1f s)",
			 o->ratio, o->history_runs, o->duration_s, o->median_s);
	else
		snprintf(lead, sizeof(lead), "%.1fx its median of %.1f s over %u runs", o->ratio, o->median_s,
			 o->history_runs);
	if (input_grew) {
		snprintf(why, len, "%s; its input grew %.1fx (%s; median %s)", lead,
			 (double)o->input_bytes / o->input_median_bytes, an_bytes_str(o->input_bytes, a, sizeof(a)),
			 an_bytes_str((uint64_t)o->input_median_bytes, b, sizeof(b)));
		return;
	}
	snprintf(why, len, "%s; %s grew from %.1f s to %.1f s: %s", lead, part_reading[p][0], o->cause_median_s,
		 o->cause_s, part_reading[p][1]);
}

/* The measure compared: the duration, or the duration per input byte when the inputs vary. */
static double measure(const struct an_step *t, bool per_byte)
{
	return an_step_wall_s(t) / (per_byte ? (double)t->rchar : 1);
}

static void summarise(const struct an_input *in, const struct member *m, struct scratch *s, struct group *g)
{
	g->inputs_vary = inputs_vary(in, m, g->n);
	for (int per_byte = 0; per_byte <= (int)g->inputs_vary; per_byte++) {
		for (size_t i = 0; i < g->n; i++)
			s->x[i] = measure(&in->steps[m[i].step], per_byte);
		stats_median_mad(s->x, g->n, s->tmp, &g->median[per_byte], &g->mad[per_byte]);
	}
	g->summarised = true;
}

/*
 * Whether task `step` is slower than the history of its group g; fills
 * *o if so. The score's scale is never below AN_SLOW_SCALE_FLOOR of the
 * median, so a history of near-equal times does not flag noise.
 */
static bool judge(const struct an_input *in, uint32_t step, const struct group *g, const struct member *m,
		  struct scratch *s, struct an_slow *o)
{
	const struct an_step *t = &in->steps[step];
	bool per_byte = g->inputs_vary && t->rchar > 0, grew;
	double x = measure(t, per_byte), median = g->median[per_byte];
	double scale = fmax(AN_SLOW_MAD_SCALE * g->mad[per_byte], AN_SLOW_SCALE_FLOOR * median);
	size_t n = g->n;
	enum an_part cause;

	memset(o, 0, sizeof(*o));
	if (!(median > 0) || !(scale > 0))
		return false;
	o->per_input_byte = per_byte;
	o->duration_s = measure(t, false);
	o->median_s = g->median[0];
	o->ratio = x / median;
	o->score = (x - median) / scale;
	if (o->ratio < AN_SLOW_MIN_RATIO || o->score < AN_SLOW_MIN_SCORE ||
	    o->duration_s - o->median_s < AN_SLOW_MIN_EXTRA_S)
		return false;
	o->step = step;
	o->history_runs = g->runs;
	o->history_tasks = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		s->x[i] = (double)in->steps[m[i].step].rchar;
		an_breakdown_of(&in->steps[m[i].step], &s->b[i]);
	}
	o->input_bytes = t->rchar;
	o->input_median_bytes = median_of(s->x, n, s->tmp);
	cause = find_cause(t, n, s, o);
	/* a larger input explains a longer time, unless the time was already taken per byte */
	grew = !o->per_input_byte && o->input_median_bytes > 0 &&
	       (double)t->rchar >= AN_SLOW_INPUT_GREW * o->input_median_bytes;
	explain(o, cause, grew, o->why, sizeof(o->why));
	if (grew)
		o->cause = "input_grew";
	return true;
}

static int judge_all(const struct an_input *in, const struct an_run *r, struct history *h, struct an_slow *out,
		     size_t *n)
{
	struct scratch s = { 0 };
	size_t longest = 1;

	for (size_t i = 0; i < h->ng; i++)
		if (h->g[i].n > longest)
			longest = h->g[i].n;
	s.x = malloc(longest * sizeof(*s.x));
	s.tmp = malloc(longest * sizeof(*s.tmp));
	s.b = malloc(longest * sizeof(*s.b));
	if (!s.x || !s.tmp || !s.b) {
		free(s.x);
		free(s.tmp);
		free(s.b);
		return -ENOMEM;
	}
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++) {
		struct group *g;

		if (!finished(&in->steps[i]))
			continue;
		g = &h->g[find_group(h, str_or_empty(in->steps[i].name))];
		/* the median is never below the minimum: most tasks are let go without sorting anything */
		if (g->runs < AN_SLOW_MIN_HISTORY || an_step_wall_s(&in->steps[i]) < g->min_s + AN_SLOW_MIN_EXTRA_S)
			continue;
		if (!g->summarised)
			summarise(in, h->m + g->first, &s, g);
		if (judge(in, i, g, h->m + g->first, &s, &out[*n]))
			(*n)++;
	}
	free(s.x);
	free(s.tmp);
	free(s.b);
	return 0;
}

int an_slower(const struct an_input *in, uint32_t run, uint32_t max_history, struct an_slow **out, size_t *n)
{
	struct history h = { 0 };
	const struct an_run *r;
	int rc;

	*out = NULL;
	*n = 0;
	if (!in || run >= in->nruns || !steps_fit(in, &in->runs[run]))
		return -EINVAL;
	r = &in->runs[run];
	if (max_history < AN_SLOW_MIN_HISTORY || r->step_n == 0)
		return 0; /* it could never have enough history */
	rc = groups_of(in, r, &h);
	if (!rc)
		rc = gather(in, run, max_history, &h);
	if (!rc)
		rc = place(in, &h);
	if (!rc) {
		*out = malloc(r->step_n * sizeof(**out));
		rc = *out ? judge_all(in, r, &h, *out, n) : -ENOMEM;
	}
	if (rc || *n == 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	free(h.g);
	free(h.m);
	return rc;
}
