/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step profile: every (pipeline, step name) over the last runs of
 * its pipeline that hold it, with its order statistics, its class and
 * the rightsizing advice (docs/tune.md, "The step profile").
 */
#include "tune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"
#include "stats.h"

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static int same_key(const struct an_input *in, uint32_t a, uint32_t b)
{
	const struct an_step *x = &in->steps[a], *y = &in->steps[b];

	return strcmp(str_or_empty(in->runs[x->run].pipeline), str_or_empty(in->runs[y->run].pipeline)) == 0 &&
	       strcmp(str_or_empty(x->name), str_or_empty(y->name)) == 0;
}

static int cmp_desc_i64(int64_t a, int64_t b)
{
	return a > b ? -1 : a < b;
}

/* hsort_r's context: the input, const all the way down. */
struct key_ctx {
	const struct an_input *in;
};

/*
 * By pipeline and name, then newest run first (by start, then index),
 * then newest task first: each profile is one range of the order, its
 * window of runs at the front and its newest task first of all.
 */
static int by_key_newest(const void *a, const void *b, void *ctx)
{
	const struct an_input *in = ((const struct key_ctx *)ctx)->in;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct an_step *x = &in->steps[ia], *y = &in->steps[ib];
	const struct an_run *rx = &in->runs[x->run], *ry = &in->runs[y->run];
	int c = strcmp(str_or_empty(rx->pipeline), str_or_empty(ry->pipeline));

	if (!c)
		c = strcmp(str_or_empty(x->name), str_or_empty(y->name));
	if (!c)
		c = cmp_desc_i64(rx->start_ns, ry->start_ns);
	if (!c)
		c = cmp_desc_i64(x->run, y->run);
	if (!c)
		c = cmp_desc_i64(x->start_ns, y->start_ns);
	return c ? c : cmp_desc_i64(ia, ib);
}

/* Pipeline ascending, then the steps that take the most time (all their tasks' wall time) first. */
static int by_pipeline_then_time(const void *a, const void *b, void *ctx)
{
	const struct an_profile *p = ctx, *x = &p[*(const uint32_t *)a], *y = &p[*(const uint32_t *)b];
	int c = strcmp(x->pipeline, y->pipeline);

	if (!c && x->breakdown.wall_s != y->breakdown.wall_s)
		c = x->breakdown.wall_s > y->breakdown.wall_s ? -1 : 1;
	return c ? c : strcmp(x->name, y->name);
}

/* Work arrays of one call, each as long as the tasks considered: no allocation per profile. */
struct scratch {
	const struct an_step **tasks;
	struct rs_task *rs;
	double *a;
};

/* The nearest-rank q-quantile of v[0..n), sorting v. */
static double quantile_of(double *v, size_t n, double q)
{
	stats_sort(v, n);
	return stats_quantile(v, n, q);
}

static void fill_durations_and_cores(struct an_profile *p, const struct an_step *const *t, size_t n, double *a)
{
	for (size_t i = 0; i < n; i++)
		a[i] = an_step_wall_s(t[i]);
	stats_sort(a, n);
	p->duration_p50_s = stats_quantile(a, n, 0.50);
	p->duration_p95_s = stats_quantile(a, n, 0.95);
	p->duration_p99_s = stats_quantile(a, n, 0.99);
	p->duration_max_s = a[n - 1];
	/* the typical task's typical use, and the busy task's busy moments */
	for (size_t i = 0; i < n; i++)
		a[i] = an_step_cores(t[i], false);
	p->cores_p50 = quantile_of(a, n, 0.50);
	for (size_t i = 0; i < n; i++)
		a[i] = an_step_cores(t[i], true);
	p->cores_p95 = quantile_of(a, n, 0.95);
}

static void fill_sums(struct an_profile *p, const struct an_step *const *t, size_t n, double *a)
{
	struct an_breakdown b;

	for (size_t i = 0; i < n; i++) {
		p->cpu_s += (double)t[i]->cpu_ns / 1e9;
		if (t[i]->peak_mem_bytes > p->peak_mem_max_bytes)
			p->peak_mem_max_bytes = t[i]->peak_mem_bytes;
		a[i] = (double)t[i]->peak_mem_bytes; /* exact below 8 PiB */
		p->read_bytes += t[i]->read_bytes;
		p->write_bytes += t[i]->write_bytes;
		p->net_bytes += t[i]->net_tx_bytes + t[i]->net_rx_bytes;
		p->oom_kills += t[i]->oom_kills;
		an_breakdown_of(t[i], &b);
		p->breakdown.wall_s += b.wall_s;
		for (int k = 0; k < AN_PARTS; k++)
			p->breakdown.part_s[k] += b.part_s[k];
	}
	p->cpu_s_per_task = p->cpu_s / (double)n;
	p->peak_mem_p95_bytes = (uint64_t)quantile_of(a, n, 0.95);
}

/* The allocation is the newest task's: the one the next run will most likely get. */
static void fill_allocation(struct an_profile *p, const struct an_step *newest)
{
	p->tools = newest->tools;
	p->mem_limit_bytes = newest->mem_limit_bytes;
	p->cpu_limit = newest->cpu_limit;
	p->cpu_efficiency = p->cpu_limit > 0 ? p->cores_p95 / p->cpu_limit : -1;
	p->mem_efficiency = p->mem_limit_bytes ? (double)p->peak_mem_max_bytes / (double)p->mem_limit_bytes : -1;
}

/* One profile from its tasks idx[0..n) (newest first) of `runs` runs. */
static void fill_profile(const struct an_input *in, const uint32_t *idx, size_t n, uint32_t runs, struct scratch *s,
			 struct an_profile *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < n; i++)
		s->tasks[i] = &in->steps[idx[i]];
	p->pipeline = str_or_empty(in->runs[s->tasks[0]->run].pipeline);
	p->name = str_or_empty(s->tasks[0]->name);
	p->named = true;
	for (size_t i = 0; i < n; i++)
		p->named &= s->tasks[i]->named;
	p->runs = runs;
	p->tasks = (uint32_t)n;
	fill_durations_and_cores(p, s->tasks, n, s->a);
	fill_sums(p, s->tasks, n, s->a);
	fill_allocation(p, s->tasks[0]);
	p->class_ = an_classify(s->tasks, n, p->why, sizeof(p->why));
	for (size_t i = 0; i < n; i++) {
		const struct an_step *t = s->tasks[i];

		s->rs[i] = (struct rs_task){ .peak_mem_bytes = t->peak_mem_bytes, .cores = an_step_cores(t, true),
					     .duration_s = an_step_wall_s(t), .oom_killed = t->oom_kills > 0,
					     .oom_limit_bytes = t->oom_limit_bytes };
	}
	/* -EINVAL (a loader's NaN cores) leaves the advice at RS_NONE: nothing advised on it */
	(void)rightsize(s->rs, n, runs, s->a, &p->advice);
}

/* The finished tasks, of `pipeline` if given; -EINVAL for a task of no run. */
static int collect(const struct an_input *in, const char *pipeline, uint32_t *idx, size_t *m)
{
	*m = 0;
	for (size_t i = 0; i < in->nsteps; i++) {
		const struct an_step *t = &in->steps[i];

		if (t->run >= in->nruns)
			return -EINVAL;
		if (t->running || t->end_ns == 0)
			continue;
		if (pipeline && strcmp(str_or_empty(in->runs[t->run].pipeline), pipeline) != 0)
			continue;
		idx[(*m)++] = (uint32_t)i;
	}
	return 0;
}

/*
 * The end of the profile starting at idx[i], and through *w the end of
 * its window: the tasks of its newest max_runs runs (a run's tasks are
 * next to each other in the order).
 */
static size_t group_end(const struct an_input *in, const uint32_t *idx, size_t m, size_t i, uint32_t max_runs,
			size_t *w, uint32_t *runs)
{
	size_t end;

	*runs = 1;
	*w = 0;
	for (end = i + 1; end < m && same_key(in, idx[i], idx[end]); end++) {
		if (*w || in->steps[idx[end]].run == in->steps[idx[end - 1]].run)
			continue;
		if (*runs == max_runs)
			*w = end;
		else
			(*runs)++;
	}
	if (!*w)
		*w = end;
	return end;
}

static size_t build(const struct an_input *in, const uint32_t *idx, size_t m, uint32_t max_runs, struct scratch *s,
		    struct an_profile *prof)
{
	size_t np = 0;

	for (size_t i = 0, end, w; i < m; i = end) {
		uint32_t runs;

		end = group_end(in, idx, m, i, max_runs, &w, &runs);
		fill_profile(in, idx + i, w - i, runs, s, &prof[np++]);
	}
	return np;
}

static int sort_into(struct an_profile *prof, size_t np, struct an_profile **out)
{
	uint32_t *order = malloc(np * sizeof(*order));

	*out = malloc(np * sizeof(**out));
	if (!order || !*out) {
		free(order);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++)
		order[i] = (uint32_t)i;
	hsort_r(order, np, sizeof(*order), by_pipeline_then_time, prof);
	for (size_t i = 0; i < np; i++)
		(*out)[i] = prof[order[i]];
	free(order);
	return 0;
}

int an_profiles(const struct an_input *in, const char *pipeline, uint32_t max_runs, struct an_profile **out,
		size_t *n)
{
	struct scratch s = { 0 };
	struct an_profile *prof = NULL;
	uint32_t *idx = NULL;
	size_t m = 0, np = 0;
	int rc = -ENOMEM;

	*out = NULL;
	*n = 0;
	if (!in || max_runs == 0 || in->nsteps > UINT32_MAX || (in->nsteps && (!in->steps || !in->runs)))
		return -EINVAL;
	if (in->nsteps == 0)
		return 0;
	idx = malloc(in->nsteps * sizeof(*idx));
	s.tasks = malloc(in->nsteps * sizeof(*s.tasks));
	s.rs = malloc(in->nsteps * sizeof(*s.rs));
	s.a = malloc(in->nsteps * sizeof(*s.a));
	if (!idx || !s.tasks || !s.rs || !s.a)
		goto out;
	rc = collect(in, pipeline, idx, &m);
	if (rc || m == 0)
		goto out;
	hsort_r(idx, m, sizeof(*idx), by_key_newest, &(struct key_ctx){ in });
	rc = -ENOMEM;
	prof = malloc(m * sizeof(*prof)); /* at most one profile per task */
	if (!prof)
		goto out;
	np = build(in, idx, m, max_runs, &s, prof);
	rc = sort_into(prof, np, out);
	if (!rc)
		*n = np;
out:
	free(prof);
	free(idx);
	free(s.tasks);
	free(s.rs);
	free(s.a);
	return rc;
}
