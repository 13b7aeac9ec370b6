/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What runs cost, and what a smaller instance would save (docs/cost.md).
 *
 *   price   the host's configured price, else the table's row of its
 *           type in its region (no region: the cheapest), else none: an
 *           unpriced run is counted as such and never given a price;
 *   reserved  price x the hours the run held its host, the time runs of
 *           one host overlapped split evenly among them;
 *   used    per task: half the price buys the host's vCPUs, half its
 *           memory: CPU core-hours x price/2/vcpus plus peak GiB x wall
 *           hours x price/2/GiB (a machine's price as a per-vCPU and a
 *           per-GiB rate, as GCP prices its types; the even split is our
 *           convention, for want of each provider's own);
 *   idle    reserved x the share of the run's wall time no task ran;
 *   jobs    a cluster job joined to the run: its allocation (CPUs, GiB)
 *           x its hours on its node, start to end (never its time in the
 *           queue), priced at that node's per-vCPU and per-GiB rates;
 *   fit     the cheapest type of the same cloud and region, not burstable,
 *           with ceil(p95 cores - 0.05) vCPUs and the peak memory x 1.15.
 *
 * Pure: figures in, figures out. Finished runs only (end_ns > 0).
 */
#include "cost.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"
#include "stats.h"

#define NS_PER_HOUR 3.6e12
#define NS_PER_DAY 8.64e13
#define GIB 1073741824.0

static const char *const by_names[] = { "run", "pipeline", "step", "tool", "host", "user" };

const char *cost_by_name(enum cost_by b)
{
	return (unsigned)b < sizeof(by_names) / sizeof(by_names[0]) ? by_names[b] : "unknown";
}

int cost_by_parse(const char *s, enum cost_by *out)
{
	for (size_t i = 0; s && i < sizeof(by_names) / sizeof(by_names[0]); i++) {
		if (!strcmp(s, by_names[i])) {
			*out = (enum cost_by)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *cost_price_source_name(enum cost_price_source s)
{
	switch (s) {
	case COST_PRICE_CONFIG:
		return "config";
	case COST_PRICE_TABLE:
		return "table";
	case COST_PRICE_NONE:
		break;
	}
	return "none";
}

/* The table's row of a host's type: in its region (unknown: the cheapest region), of its cloud when known. */
static const struct price_row *host_row(const struct an_host *h, const struct price_table *table)
{
	const struct price_row *row = price_lookup(table, h->instance_type, h->region);

	if (row && h->cloud && strcmp(row->cloud, h->cloud))
		return NULL;
	return row;
}

double cost_host_price(const struct an_host *h, const struct price_table *table, enum cost_price_source *src)
{
	const struct price_row *row;

	if (src)
		*src = COST_PRICE_NONE;
	if (!h)
		return -1;
	if (isfinite(h->price_per_hour) && h->price_per_hour >= 0) {
		if (src)
			*src = COST_PRICE_CONFIG;
		return h->price_per_hour;
	}
	row = host_row(h, table);
	if (!row)
		return -1;
	if (src)
		*src = COST_PRICE_TABLE;
	return row->on_demand_per_hour;
}

double cost_run_price(const struct an_run *r, const struct price_table *table, enum cost_price_source *src)
{
	return cost_host_price(r ? &r->host : NULL, table, src);
}

/* A run is costed once it has ended: its start and end both known, in order. */
static bool finished(const struct an_run *r)
{
	return r->start_ns > 0 && r->end_ns > 0 && r->end_ns >= r->start_ns;
}

static bool range_ok(uint32_t first, uint32_t n, size_t size)
{
	return first <= size && n <= size - first;
}

/* ---- each run's figures ---------------------------------------------------- */

struct run_fig {
	bool costed;                /* finished */
	bool used_known;            /* priced, with the host's vCPUs and memory known */
	double price;               /* USD per hour; < 0: unpriced */
	double rate_cpu, rate_mem;  /* USD per core-hour and per GiB-hour (when used_known) */
	double idle_share;          /* the share of its wall time no task ran */
	double held_h;              /* hours it held its host, overlaps split */
	double task_wall_h;         /* its tasks' wall hours, summed */
	double reserved, used, idle;
	double job_cpu_h, job_gib_h; /* its cluster jobs' allocations x their hours on their nodes */
	double jobs_usd;            /* of those priced */
	bool jobs_priced;           /* a job of it was priced */
};

struct span {
	int64_t s, e;
};

/*
 * A task's time within its run: from its start (unknown: no time) to its
 * end, or the run's end for a task that never reported one, clipped to
 * the run. false when that leaves nothing.
 */
static bool task_span(const struct an_run *r, const struct an_step *t, struct span *out)
{
	int64_t s = t->start_ns, e = t->end_ns > 0 ? t->end_ns : r->end_ns;

	if (s <= 0)
		return false;
	if (s < r->start_ns)
		s = r->start_ns;
	if (e > r->end_ns)
		e = r->end_ns;
	if (e <= s)
		return false;
	out->s = s;
	out->e = e;
	return true;
}

static double task_wall_h(const struct an_run *r, const struct an_step *t)
{
	struct span sp;

	return task_span(r, t, &sp) ? (double)(sp.e - sp.s) / NS_PER_HOUR : 0;
}

/* USD per core-hour and per GiB-hour of a host: half the price each (< 0 when the host's size is unknown). */
static void used_rates(const struct an_host *h, const struct price_table *table, double price, double *cpu,
		       double *mem)
{
	const struct price_row *row = host_row(h, table);
	double cpus = h->cpus ? h->cpus : row ? row->vcpus : 0;
	double bytes = h->memory_bytes ? (double)h->memory_bytes : row ? (double)row->memory_bytes : 0;

	*cpu = *mem = -1;
	if (price < 0 || cpus <= 0 || bytes <= 0)
		return;
	*cpu = price / 2 / cpus;
	*mem = price / 2 / (bytes / GIB);
}

static double task_used(const struct an_run *r, const struct an_step *t, double rate_cpu, double rate_mem)
{
	return (double)t->cpu_ns / NS_PER_HOUR * rate_cpu +
	       (double)t->peak_mem_bytes / GIB * task_wall_h(r, t) * rate_mem;
}

/* A cluster job's reservation: its allocation x its hours on its node; USD at its node's rates when known. */
struct job_fig {
	double cpu_h, gib_h, usd;
	bool priced;
};

static bool job_figure(const struct an_run *r, const struct an_step *t, const struct price_table *table,
		       struct job_fig *out)
{
	double hours, rate_cpu, rate_mem;

	memset(out, 0, sizeof(*out));
	if (!t->submitted_ns)
		return false;
	hours = task_wall_h(r, t);
	out->cpu_h = t->cpu_limit > 0 ? t->cpu_limit * hours : 0;
	out->gib_h = (double)t->mem_limit_bytes / GIB * hours;
	used_rates(&t->job_host, table, cost_host_price(&t->job_host, table, NULL), &rate_cpu, &rate_mem);
	out->priced = rate_cpu >= 0 && t->cpu_limit > 0 && t->mem_limit_bytes > 0;
	if (out->priced)
		out->usd = out->cpu_h * rate_cpu + out->gib_h * rate_mem;
	return true;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->s > y->s) - (x->s < y->s);
}

/* The length of the union of spans[0..n) (sorted here). */
static int64_t union_ns(struct span *spans, size_t n)
{
	int64_t total = 0, s, e;

	if (n == 0)
		return 0;
	hsort(spans, n, sizeof(*spans), span_cmp);
	s = spans[0].s;
	e = spans[0].e;
	for (size_t i = 1; i < n; i++) {
		if (spans[i].s > e) {
			total += e - s;
			s = spans[i].s;
			e = spans[i].e;
		} else if (spans[i].e > e) {
			e = spans[i].e;
		}
	}
	return total + (e - s);
}

/* A run's price, used cost and idle share; its held hours come later (split_overlaps). */
static void run_alone(const struct an_input *in, const struct price_table *table, uint32_t i, struct span *spans,
		      struct run_fig *f)
{
	const struct an_run *r = &in->runs[i];
	double wall = (double)(r->end_ns - r->start_ns);
	size_t nspans = 0;

	f->costed = true;
	f->price = cost_run_price(r, table, NULL);
	used_rates(&r->host, table, f->price, &f->rate_cpu, &f->rate_mem);
	f->used_known = f->rate_cpu >= 0;
	for (uint32_t j = 0; j < r->step_n; j++) {
		const struct an_step *t = &in->steps[r->step_first + j];
		struct job_fig jf;

		if (job_figure(r, t, table, &jf)) {
			f->job_cpu_h += jf.cpu_h;
			f->job_gib_h += jf.gib_h;
			f->jobs_usd += jf.usd;
			f->jobs_priced |= jf.priced;
		}
		f->task_wall_h += task_wall_h(r, t);
		if (f->used_known)
			f->used += task_used(r, t, f->rate_cpu, f->rate_mem);
		if (task_span(r, t, &spans[nspans]))
			nspans++;
	}
	f->idle_share = wall > 0 ? 1 - (double)union_ns(spans, nspans) / wall : 0;
	if (f->idle_share < 0)
		f->idle_share = 0;
}

/* Runs by host, then start: the runs of one host side by side. */
static int host_cmp(const void *a, const void *b, void *ctx)
{
	const struct an_run *runs = ctx, *x = &runs[*(const uint32_t *)a], *y = &runs[*(const uint32_t *)b];
	const char *hx = x->host.host_id ? x->host.host_id : "", *hy = y->host.host_id ? y->host.host_id : "";
	int c = strcmp(hx, hy);

	if (c)
		return c;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static bool same_host(const struct an_run *x, const struct an_run *y)
{
	return x->host.host_id && y->host.host_id && x->host.host_id[0] && !strcmp(x->host.host_id, y->host.host_id);
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static size_t find_time(const int64_t *t, size_t n, int64_t v)
{
	size_t lo = 0, hi = n;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid] <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The hours each run of a host held it: over every stretch between two
 * consecutive starts or ends of its runs, each run running then gets the
 * stretch's length over the number running. A run's share is F(end) -
 * F(start) of the running sum F, so the host's time is charged once.
 */
static void split_group(const struct an_input *in, const uint32_t *g, size_t k, int64_t *times, long *delta,
			double *acc, struct run_fig *figs)
{
	size_t m = 0, u = 0;
	long active = 0;

	for (size_t i = 0; i < k; i++) {
		times[m++] = in->runs[g[i]].start_ns;
		times[m++] = in->runs[g[i]].end_ns;
	}
	hsort(times, m, sizeof(*times), i64_cmp);
	for (size_t i = 0; i < m; i++)
		if (u == 0 || times[i] != times[u - 1])
			times[u++] = times[i];
	memset(delta, 0, u * sizeof(*delta));
	for (size_t i = 0; i < k; i++) {
		delta[find_time(times, u, in->runs[g[i]].start_ns)]++;
		delta[find_time(times, u, in->runs[g[i]].end_ns)]--;
	}
	acc[0] = 0;
	for (size_t j = 0; j + 1 < u; j++) {
		active += delta[j];
		acc[j + 1] = acc[j] + (active > 0 ? (double)(times[j + 1] - times[j]) / (double)active : 0);
	}
	for (size_t i = 0; i < k; i++) {
		const struct an_run *r = &in->runs[g[i]];
		double held = acc[find_time(times, u, r->end_ns)] - acc[find_time(times, u, r->start_ns)];

		figs[g[i]].held_h = held / NS_PER_HOUR;
	}
}

static int split_overlaps(const struct an_input *in, struct run_fig *figs)
{
	uint32_t *idx = malloc((in->nruns + 1) * sizeof(*idx));
	int64_t *times = malloc((2 * in->nruns + 1) * sizeof(*times));
	long *delta = malloc((2 * in->nruns + 1) * sizeof(*delta));
	double *acc = malloc((2 * in->nruns + 1) * sizeof(*acc));
	size_t k = 0;
	int rc = -ENOMEM;

	if (!idx || !times || !delta || !acc)
		goto out;
	for (size_t i = 0; i < in->nruns; i++)
		if (figs[i].costed)
			idx[k++] = (uint32_t)i;
	/* const dropped for hsort_r's context only: host_cmp reads the runs */
	hsort_r(idx, k, sizeof(*idx), host_cmp, (void *)(uintptr_t)in->runs);
	for (size_t g0 = 0, g1; g0 < k; g0 = g1) {
		for (g1 = g0 + 1; g1 < k && same_host(&in->runs[idx[g0]], &in->runs[idx[g1]]); g1++)
			;
		split_group(in, idx + g0, g1 - g0, times, delta, acc, figs);
	}
	rc = 0;
out:
	free(idx);
	free(times);
	free(delta);
	free(acc);
	return rc;
}

static int check_input(const struct an_input *in)
{
	if (!in || (in->nruns && !in->runs) || (in->nsteps && !in->steps) || (in->npoints && !in->timeline))
		return -EINVAL;
	if (in->nruns > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < in->nruns; i++) {
		const struct an_run *r = &in->runs[i];

		if (!range_ok(r->step_first, r->step_n, in->nsteps) ||
		    !range_ok(r->point_first, r->point_n, in->npoints))
			return -EINVAL;
	}
	return 0;
}

static int run_figures(const struct an_input *in, const struct price_table *table, struct run_fig **out)
{
	struct run_fig *figs = calloc(in->nruns + 1, sizeof(*figs));
	struct span *spans;
	uint32_t most = 0;
	int rc;

	*out = NULL;
	if (!figs)
		return -ENOMEM;
	for (size_t i = 0; i < in->nruns; i++)
		if (in->runs[i].step_n > most)
			most = in->runs[i].step_n;
	spans = malloc(((size_t)most + 1) * sizeof(*spans));
	if (!spans) {
		free(figs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->nruns; i++)
		if (finished(&in->runs[i]))
			run_alone(in, table, (uint32_t)i, spans, &figs[i]);
	free(spans);
	rc = split_overlaps(in, figs);
	if (rc) {
		free(figs);
		return rc;
	}
	for (size_t i = 0; i < in->nruns; i++) {
		struct run_fig *f = &figs[i];

		if (!f->costed || f->price < 0)
			continue;
		f->reserved = f->price * f->held_h;
		f->idle = f->reserved * f->idle_share;
	}
	*out = figs;
	return 0;
}

/* ---- grouping ---------------------------------------------------------------- */

/* One run's (or one task's) part of a line. Its key: k1[0..k1len), then " / " k2 when k2 is set. */
struct contrib {
	const char *k1, *k2;
	size_t k1len;
	uint32_t run, tasks;
	double hours, reserved, used, idle;
	double job_cpu_h, job_gib_h, jobs_usd;
	bool jobs_priced;
};

struct group_ctx {
	const struct contrib *c;
	enum cost_by by;
};

static int key_cmp(const struct contrib *x, const struct contrib *y)
{
	size_t n = x->k1len < y->k1len ? x->k1len : y->k1len;
	int c = memcmp(x->k1, y->k1, n);

	if (c)
		return c;
	if (x->k1len != y->k1len)
		return x->k1len < y->k1len ? -1 : 1;
	if (!x->k2 || !y->k2)
		return !!x->k2 - !!y->k2;
	return strcmp(x->k2, y->k2);
}

static int contrib_cmp(const void *a, const void *b, void *ctx)
{
	const struct group_ctx *g = ctx;
	const struct contrib *x = &g->c[*(const size_t *)a], *y = &g->c[*(const size_t *)b];
	int c = g->by == COST_BY_RUN ? 0 : key_cmp(x, y);

	if (c)
		return c;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

static bool same_line(enum cost_by by, const struct contrib *x, const struct contrib *y)
{
	return by == COST_BY_RUN ? x->run == y->run : key_cmp(x, y) == 0;
}

static const char *or_default(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

static void set_k1(struct contrib *c, const char *s)
{
	c->k1 = s;
	c->k1len = strlen(s);
}

/* The first tool of "bwa, samtools": what the task ran first; "(none)" when it ran none we know. */
static void set_tool(struct contrib *c, const char *tools)
{
	const char *comma = tools ? strstr(tools, ", ") : NULL;

	if (!tools || !tools[0] || comma == tools) {
		set_k1(c, "(none)");
		return;
	}
	c->k1 = tools;
	c->k1len = comma ? (size_t)(comma - tools) : strlen(tools);
}

/* Every run's (or task's) contribution to the lines of `by`, for the runs selected. */
static size_t contributions(const struct an_input *in, const struct price_table *table, const struct run_fig *figs,
			    enum cost_by by, long only, struct contrib *c)
{
	size_t n = 0;

	for (size_t i = 0; i < in->nruns; i++) {
		const struct an_run *r = &in->runs[i];
		const struct run_fig *f = &figs[i];

		if ((only >= 0 && (size_t)only != i) || !f->costed)
			continue;
		if (by == COST_BY_STEP || by == COST_BY_TOOL) {
			for (uint32_t j = 0; j < r->step_n; j++) {
				const struct an_step *t = &in->steps[r->step_first + j];
				struct contrib *x = &c[n++];
				struct job_fig jf;

				memset(x, 0, sizeof(*x));
				if (by == COST_BY_STEP) {
					set_k1(x, or_default(r->pipeline, "(none)"));
					x->k2 = or_default(t->name, "?");
				} else {
					set_tool(x, t->tools);
				}
				x->run = (uint32_t)i;
				x->tasks = 1;
				x->hours = task_wall_h(r, t);
				/* the share of the run's reserved cost its tasks' time held */
				x->reserved = f->task_wall_h > 0 ? f->reserved * x->hours / f->task_wall_h : 0;
				x->used = f->used_known ? task_used(r, t, f->rate_cpu, f->rate_mem) : 0;
				if (job_figure(r, t, table, &jf)) {
					x->job_cpu_h = jf.cpu_h;
					x->job_gib_h = jf.gib_h;
					x->jobs_usd = jf.usd;
					x->jobs_priced = jf.priced;
				}
			}
			continue;
		}
		memset(&c[n], 0, sizeof(c[n]));
		switch (by) {
		case COST_BY_RUN:
			if (r->label && r->label[0])
				set_k1(&c[n], r->label);
			break;
		case COST_BY_PIPELINE:
			set_k1(&c[n], or_default(r->pipeline, "(none)"));
			break;
		case COST_BY_HOST:
			set_k1(&c[n], or_default(r->host.host_id, "(unknown)"));
			break;
		case COST_BY_USER:
			set_k1(&c[n], or_default(r->user, "(unknown)"));
			break;
		case COST_BY_STEP:
		case COST_BY_TOOL:
			break;
		}
		c[n].run = (uint32_t)i;
		c[n].tasks = r->step_n;
		c[n].hours = f->held_h;
		c[n].reserved = f->reserved;
		c[n].used = f->used;
		c[n].idle = f->idle;
		c[n].job_cpu_h = f->job_cpu_h;
		c[n].job_gib_h = f->job_gib_h;
		c[n].jobs_usd = f->jobs_usd;
		c[n].jobs_priced = f->jobs_priced;
		n++;
	}
	return n;
}

/* The text of a line's key: its length without the NUL, written to dst when dst is set. */
static size_t key_text(const struct an_input *in, const struct contrib *c, char *dst, size_t size)
{
	if (!c->k1)
		return (size_t)snprintf(dst, size, "run %lld", (long long)in->runs[c->run].lake_id);
	if (dst) {
		memcpy(dst, c->k1, c->k1len);
		dst[c->k1len] = 0;
		if (c->k2)
			snprintf(dst + c->k1len, size - c->k1len, " / %s", c->k2);
	}
	return c->k1len + (c->k2 ? 3 + strlen(c->k2) : 0);
}

/* Sum the contributions c[order[a..b)] (one key, by run) into a line. */
static void sum_line(const struct contrib *c, const size_t *order, size_t a, size_t b, const struct run_fig *figs,
		     struct cost_line *l)
{
	bool priced = false, used = false, jobs_priced = false;

	for (size_t j = a; j < b; j++) {
		const struct contrib *x = &c[order[j]];
		const struct run_fig *f = &figs[x->run];

		if (j == a || c[order[j - 1]].run != x->run) {
			l->runs++;
			if (f->price < 0)
				l->unpriced_runs++;
			else if (!f->used_known)
				l->used_unknown_runs++;
		}
		l->tasks += x->tasks;
		l->hours += x->hours;
		l->job_cpu_hours += x->job_cpu_h;
		l->job_gib_hours += x->job_gib_h;
		if (x->jobs_priced) {
			jobs_priced = true;
			l->jobs_reserved_usd += x->jobs_usd;
		}
		if (f->price < 0)
			continue;
		priced = true;
		l->reserved_usd += x->reserved;
		l->idle_usd += x->idle;
		if (f->used_known) {
			used = true;
			l->used_usd += x->used;
		}
	}
	if (!priced)
		l->reserved_usd = l->idle_usd = -1;
	if (!used)
		l->used_usd = -1;
	if (!jobs_priced && (l->job_cpu_hours > 0 || l->job_gib_hours > 0))
		l->jobs_reserved_usd = -1;
}

/* Most expensive first (unpriced, < 0, last), then by key, then by run. */
static int line_cmp(const void *a, const void *b, void *ctx)
{
	const struct cost_line *lines = ctx, *x = &lines[*(const size_t *)a], *y = &lines[*(const size_t *)b];
	int c;

	if (x->reserved_usd != y->reserved_usd)
		return x->reserved_usd > y->reserved_usd ? -1 : 1;
	c = strcmp(x->key, y->key);
	if (c)
		return c;
	return (x->run > y->run) - (x->run < y->run);
}

static int make_lines(const struct an_input *in, const struct run_fig *figs, enum cost_by by,
		      const struct contrib *c, size_t nc, struct cost_report *out)
{
	struct group_ctx g = { .c = c, .by = by };
	size_t *order = malloc((nc + 1) * sizeof(*order)), nl = 0, keylen = 0, at = 0;
	struct cost_line *lines = NULL, *sorted = NULL;
	int rc = -ENOMEM;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < nc; i++)
		order[i] = i;
	hsort_r(order, nc, sizeof(*order), contrib_cmp, &g);
	for (size_t i = 0; i < nc; i++) {
		if (i == 0 || !same_line(by, &c[order[i - 1]], &c[order[i]])) {
			nl++;
			keylen += key_text(in, &c[order[i]], NULL, 0) + 1;
		}
	}
	lines = calloc(nl + 1, sizeof(*lines));
	out->keys = malloc(keylen + 1);
	if (!lines || !out->keys)
		goto out;
	nl = 0;
	for (size_t a = 0, b; a < nc; a = b) {
		struct cost_line *l = &lines[nl++];

		for (b = a + 1; b < nc && same_line(by, &c[order[a]], &c[order[b]]); b++)
			;
		l->key = out->keys + at;
		at += key_text(in, &c[order[a]], out->keys + at, keylen + 1 - at) + 1;
		l->run = by == COST_BY_RUN ? (long)c[order[a]].run : -1;
		sum_line(c, order, a, b, figs, l);
	}
	for (size_t i = 0; i < nl; i++)
		order[i] = i;
	hsort_r(order, nl, sizeof(*order), line_cmp, lines);
	sorted = malloc((nl + 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	for (size_t i = 0; i < nl; i++)
		sorted[i] = lines[order[i]];
	out->lines = sorted;
	out->n = nl;
	rc = 0;
out:
	free(order);
	free(lines);
	return rc;
}

static void totals(const struct an_input *in, const struct run_fig *figs, long only, struct cost_report *out)
{
	bool jobs_priced = false;

	for (size_t i = 0; i < in->nruns; i++) {
		const struct run_fig *f = &figs[i];

		if (only >= 0 && (size_t)only != i)
			continue;
		if (!f->costed) {
			out->unfinished_runs++;
			continue;
		}
		out->runs++;
		out->job_cpu_hours += f->job_cpu_h;
		out->job_gib_hours += f->job_gib_h;
		if (f->jobs_priced) {
			jobs_priced = true;
			out->jobs_reserved_usd += f->jobs_usd;
		}
		if (f->price < 0) {
			out->unpriced_runs++;
			continue;
		}
		out->reserved_usd += f->reserved;
		out->idle_usd += f->idle;
		if (f->used_known)
			out->used_usd += f->used;
		else
			out->used_unknown_runs++;
	}
	if (!jobs_priced && (out->job_cpu_hours > 0 || out->job_gib_hours > 0))
		out->jobs_reserved_usd = -1;
}

int cost_compute(const struct an_input *in, const struct price_table *table, enum cost_by by, long run,
		 struct cost_report *out)
{
	struct run_fig *figs = NULL;
	struct contrib *c = NULL;
	size_t nc;
	int rc;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->by = by;
	if ((unsigned)by > COST_BY_USER || check_input(in) || (run >= 0 && (size_t)run >= in->nruns))
		return -EINVAL;
	rc = run_figures(in, table, &figs);
	if (rc)
		return rc;
	/* at most one contribution per task (step, tool) or per run (the rest) */
	nc = by == COST_BY_STEP || by == COST_BY_TOOL ? in->nsteps : in->nruns;
	c = malloc((nc + 1) * sizeof(*c));
	if (!c) {
		free(figs);
		return -ENOMEM;
	}
	nc = contributions(in, table, figs, by, run, c);
	rc = make_lines(in, figs, by, c, nc, out);
	if (rc == 0)
		totals(in, figs, run, out);
	else
		cost_report_free(out);
	free(c);
	free(figs);
	return rc;
}

void cost_report_free(struct cost_report *r)
{
	if (!r)
		return;
	free(r->lines);
	free(r->keys);
	r->lines = NULL;
	r->keys = NULL;
	r->n = 0;
}

/* ---- instance rightsizing ------------------------------------------------ */

/* Runs of a pipeline side by side, oldest first. */
static int fit_run_cmp(const void *a, const void *b, void *ctx)
{
	const struct an_run *runs = ctx, *x = &runs[*(const uint32_t *)a], *y = &runs[*(const uint32_t *)b];
	int c = strcmp(x->pipeline, y->pipeline);

	if (c)
		return c;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static bool fits(const struct price_row *r, uint32_t cpus, uint64_t mem)
{
	return r->vcpus >= cpus && r->memory_bytes >= mem;
}

/* Cheaper on demand; ties: fewer vCPUs, then the name. */
static bool better(const struct price_row *r, const struct price_row *than)
{
	if (!than || r->on_demand_per_hour != than->on_demand_per_hour)
		return !than || r->on_demand_per_hour < than->on_demand_per_hour;
	if (r->vcpus != than->vcpus)
		return r->vcpus < than->vcpus;
	return strcmp(r->instance_type, than->instance_type) < 0;
}

static const struct price_row *best_fit(const struct price_table *t, const char *cloud, const char *region,
					uint32_t cpus, uint64_t mem)
{
	const struct price_row *best = NULL;

	for (size_t i = 0; t && cloud && region && i < t->n; i++) {
		const struct price_row *r = &t->rows[i];

		/* never onto a burstable type: what the runs used is sustained, not a burst */
		if (!strcmp(r->cloud, cloud) && !strcmp(r->region, region) && !price_burstable(r->instance_type) &&
		    fits(r, cpus, mem) && better(r, best))
			best = r;
	}
	return best;
}

/* What the runs needed at once: the p95 of their timelines' cores and their highest memory. */
static uint64_t fit_needs(const struct an_input *in, const uint32_t *g, size_t k, double *cores,
			  struct cost_fit *f)
{
	uint64_t peak = 0;
	size_t m = 0;
	double mem, cpus;

	for (size_t i = 0; i < k; i++) {
		const struct an_run *r = &in->runs[g[i]];

		for (uint32_t j = 0; j < r->point_n; j++) {
			const struct an_point *p = &in->timeline[r->point_first + j];

			if (isfinite(p->cores) && p->cores >= 0)
				cores[m++] = p->cores;
			if (p->mem_bytes > peak)
				peak = p->mem_bytes;
		}
	}
	stats_sort(cores, m);
	f->need_cores = stats_quantile(cores, m, 0.95);
	cpus = ceil(f->need_cores * COST_FIT_CPU_HEADROOM - COST_FIT_CPU_NOISE);
	f->cpus_needed = cpus < 1 ? 1 : cpus > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus;
	mem = ceil((double)peak * COST_FIT_MEM_HEADROOM);
	f->need_mem_bytes = mem >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)mem;
	return peak;
}

/* The figures behind the advice, then the advice, in at most sizeof(f->why). */
static void fit_why(const struct an_run *newest, const struct price_table *table, const char *cloud,
		    const char *region, uint64_t peak, struct cost_fit *f)
{
	const struct price_row *cur = f->current, *best = f->best;
	uint32_t have_cpus = newest->host.cpus ? newest->host.cpus : cur ? cur->vcpus : 0;
	uint64_t have_mem = newest->host.memory_bytes ? newest->host.memory_bytes : cur ? cur->memory_bytes : 0;
	char have[64] = "";
	size_t n;
	int w;

	if (have_cpus && have_mem)
		snprintf(have, sizeof(have), " of %u vCPUs and %.1f GiB", have_cpus, (double)have_mem / GIB);
	w = snprintf(f->why, sizeof(f->why), "p95 %.2f cores, peak %.2f GiB%s; needs %u vCPU%s, %.2f GiB",
		     f->need_cores, (double)peak / GIB, have, f->cpus_needed, f->cpus_needed == 1 ? "" : "s",
		     (double)f->need_mem_bytes / GIB);
	n = w < 0 ? 0 : (size_t)w;
	if (n >= sizeof(f->why))
		return;
	if (!table)
		snprintf(f->why + n, sizeof(f->why) - n, "; no price table");
	else if (!cloud || !region)
		snprintf(f->why + n, sizeof(f->why) - n, "; the host's cloud or region is unknown");
	else if (!best)
		snprintf(f->why + n, sizeof(f->why) - n, "; no %s %s type in the table fits", cloud, region);
	else if (best == cur)
		snprintf(f->why + n, sizeof(f->why) - n, "; %s is the cheapest that fits", cur->instance_type);
	else if (!cur && f->current_type)
		snprintf(f->why + n, sizeof(f->why) - n, "; %s ($%.4f/h) fits (%s is not in the table)",
			 best->instance_type, best->on_demand_per_hour, f->current_type);
	else if (!cur)
		snprintf(f->why + n, sizeof(f->why) - n, "; %s ($%.4f/h) fits (the host's type is unknown)",
			 best->instance_type, best->on_demand_per_hour);
	else if (f->current_fits)
		snprintf(f->why + n, sizeof(f->why) - n, "; %s ($%.4f/h) fits for less than %s ($%.4f/h)",
			 best->instance_type, best->on_demand_per_hour, cur->instance_type, cur->on_demand_per_hour);
	else
		snprintf(f->why + n, sizeof(f->why) - n, "; %s ($%.4f/h) is too small: %s ($%.4f/h) fits",
			 cur->instance_type, cur->on_demand_per_hour, best->instance_type, best->on_demand_per_hour);
}

/* The advice for one pipeline from its runs g[0..k), oldest first. */
static void fit_one(const struct an_input *in, const struct price_table *table, const uint32_t *g, size_t k,
		    double *cores, struct cost_fit *f)
{
	const struct an_run *newest = &in->runs[g[k - 1]];
	int64_t first = INT64_MAX, last = 0;
	double wall_h = 0, span_days;
	const char *cloud, *region;
	uint64_t peak;

	memset(f, 0, sizeof(*f));
	f->pipeline = newest->pipeline;
	f->current_type = newest->host.instance_type;
	f->runs = (uint32_t)k;
	peak = fit_needs(in, g, k, cores, f);
	for (size_t i = 0; i < k; i++) {
		const struct an_run *r = &in->runs[g[i]];

		wall_h += (double)(r->end_ns - r->start_ns) / NS_PER_HOUR;
		if (r->start_ns < first)
			first = r->start_ns;
		if (r->end_ns > last)
			last = r->end_ns;
	}
	f->mean_wall_hours = wall_h / (double)k;
	span_days = (double)(last - first) / NS_PER_DAY;
	f->runs_per_month = (double)k / (span_days < 1 ? 1 : span_days) * 30;

	f->current = table ? host_row(&newest->host, table) : NULL;
	cloud = newest->host.cloud ? newest->host.cloud : f->current ? f->current->cloud : NULL;
	region = newest->host.region ? newest->host.region : f->current ? f->current->region : NULL;
	f->best = best_fit(table, cloud, region, f->cpus_needed, f->need_mem_bytes);
	f->current_fits = f->current && fits(f->current, f->cpus_needed, f->need_mem_bytes);
	if (f->current_fits && f->best && f->best->on_demand_per_hour >= f->current->on_demand_per_hour)
		f->best = f->current; /* nothing cheaper fits: stay */
	f->best_spot_cheaper = f->best && f->best->spot_per_hour >= 0 &&
			       f->best->spot_per_hour < f->best->on_demand_per_hour;
	if (!f->current) {
		f->saving_per_run_usd = f->saving_per_month_usd = -1;
	} else if (f->best) {
		double d = (f->current->on_demand_per_hour - f->best->on_demand_per_hour) * f->mean_wall_hours;

		f->saving_per_run_usd = d > 0 ? d : 0;
		f->saving_per_month_usd = f->saving_per_run_usd * f->runs_per_month;
	}
	fit_why(newest, table, cloud, region, peak, f);
}

/* Largest saving per month first, unknown (< 0) last; then by pipeline. */
static int fit_cmp(const void *a, const void *b, void *ctx)
{
	const struct cost_fit *fits_ = ctx, *x = &fits_[*(const size_t *)a], *y = &fits_[*(const size_t *)b];

	if (x->saving_per_month_usd != y->saving_per_month_usd)
		return x->saving_per_month_usd > y->saving_per_month_usd ? -1 : 1;
	return strcmp(x->pipeline, y->pipeline);
}

static int fit_groups(const struct an_input *in, const struct price_table *table, const uint32_t *idx, size_t k,
		      size_t npoints, struct cost_fit **out, size_t *n)
{
	double *cores = malloc((npoints + 1) * sizeof(*cores));
	struct cost_fit *fits_ = calloc(k + 1, sizeof(*fits_)), *sorted = NULL;
	size_t *order = malloc((k + 1) * sizeof(*order)), nf = 0;
	int rc = -ENOMEM;

	if (!cores || !fits_ || !order)
		goto out;
	for (size_t g0 = 0, g1; g0 < k; g0 = g1) {
		for (g1 = g0 + 1; g1 < k && !strcmp(in->runs[idx[g0]].pipeline, in->runs[idx[g1]].pipeline); g1++)
			;
		fit_one(in, table, idx + g0, g1 - g0, cores, &fits_[nf++]);
	}
	for (size_t i = 0; i < nf; i++)
		order[i] = i;
	hsort_r(order, nf, sizeof(*order), fit_cmp, fits_);
	sorted = malloc((nf + 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	for (size_t i = 0; i < nf; i++)
		sorted[i] = fits_[order[i]];
	*out = sorted;
	*n = nf;
	rc = 0;
out:
	free(cores);
	free(fits_);
	free(order);
	return rc;
}

int cost_fit_instances(const struct an_input *in, const struct price_table *table, const char *pipeline,
		       struct cost_fit **out, size_t *n)
{
	uint32_t *idx;
	size_t k = 0, npoints = 0;
	int rc;

	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	if (check_input(in))
		return -EINVAL;
	idx = malloc((in->nruns + 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < in->nruns; i++) {
		const struct an_run *r = &in->runs[i];

		if (!finished(r) || !r->pipeline || !r->pipeline[0] || r->point_n == 0 ||
		    (pipeline && strcmp(r->pipeline, pipeline)))
			continue;
		idx[k++] = (uint32_t)i;
		npoints += r->point_n;
	}
	/* const dropped for hsort_r's context only: fit_run_cmp reads the runs */
	hsort_r(idx, k, sizeof(*idx), fit_run_cmp, (void *)(uintptr_t)in->runs);
	rc = fit_groups(in, table, idx, k, npoints, out, n);
	free(idx);
	return rc;
}
