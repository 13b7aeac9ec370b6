/* SPDX-License-Identifier: Apache-2.0 */
#include "stepmem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"
#include "series.h"

/* By time; at the same time, releases before acquisitions. */
static int event_cmp(const void *pa, const void *pb)
{
	const struct mem_event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->delta > b->delta) - (a->delta < b->delta);
}

uint64_t mem_spans_peak(const struct mem_span *spans, size_t n, struct mem_event *ev)
{
	size_t m = 0;
	int64_t sum = 0, best = 0;

	for (size_t i = 0; i < n; i++) {
		/* Clamped so that the running sum cannot overflow for any real figure (2^62 bytes). */
		int64_t b = spans[i].bytes > (UINT64_C(1) << 50) ? INT64_C(1) << 50 : (int64_t)spans[i].bytes;

		if (!b || spans[i].t1 <= spans[i].t0)
			continue;
		ev[m++] = (struct mem_event){ spans[i].t0, b };
		ev[m++] = (struct mem_event){ spans[i].t1, -b };
	}
	hsort(ev, m, sizeof(*ev), event_cmp);
	for (size_t i = 0; i < m; i++) {
		sum += ev[i].delta;
		if (sum > best)
			best = sum;
	}
	return (uint64_t)best;
}

size_t mem_proc_spans_max(const struct proc *p)
{
	return (p->series ? p->series->n : 0) + 2;
}

static uint64_t max2(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* When the process's current image began, and when it ended (or now). */
static void image_life(const struct proc *p, uint64_t now_ns, uint64_t *t0, uint64_t *t1)
{
	*t0 = p->image_ts_ns ? p->image_ts_ns : p->fork_ts_ns ? p->fork_ts_ns : p->start_ns;
	*t1 = (p->flags & PROC_F_EXIT) ? p->exit.hdr.ts_ns : now_ns;
	/* An exit at the very instant of the start still held its memory: one nanosecond of it. */
	if (*t1 <= *t0)
		*t1 = *t0 + 1;
}

size_t mem_proc_spans(const struct proc *p, uint64_t now_ns, struct mem_span *out)
{
	const struct proc_series *s = p->series;
	uint64_t t0, t1, peak = proc_peak_rss(p, NULL), at;
	const struct series_point *prev = NULL;
	size_t n = 0;

	image_life(p, now_ns, &t0, &t1);
	at = t0;
	for (uint32_t i = 0; s && i < s->n; i++) {
		const struct series_point *pt = &s->points[i];
		uint64_t v;

		if (pt->ts_ns < t0 || pt->ts_ns > t1)
			continue; /* an earlier image's sample */
		if (!prev)
			v = pt->hwm_bytes; /* its peak so far was reached before this first sample */
		else if (pt->hwm_bytes > prev->hwm_bytes)
			v = pt->hwm_bytes; /* a new peak, reached since the sample before */
		else
			v = max2(prev->rss_bytes, pt->rss_bytes);
		out[n++] = (struct mem_span){ at, pt->ts_ns, max2(v, pt->rss_bytes) };
		at = pt->ts_ns;
		prev = pt;
	}
	if (!prev) {
		out[n++] = (struct mem_span){ t0, t1, peak };
		return n;
	}
	/* After the last sample: a peak above every VmHWM sampled was reached in this last stretch. */
	out[n++] = (struct mem_span){ at, t1, peak > prev->hwm_bytes ? peak : prev->rss_bytes };
	return n;
}

/* ------------------------------------------------------------------ */
/* Steps                                                              */
/* ------------------------------------------------------------------ */

/* A process's memory cgroup, as (hierarchy, id): where it exited, else where it last exec'd. */
struct memcg_key {
	uint64_t id;
	uint32_t v1;
	uint32_t step; /* the process's step number, 0 for none */
};

static struct memcg_key memcg_of(const struct proc *p)
{
	bool ex = (p->flags & PROC_F_EXIT) != 0;
	uint64_t v1 = ex ? p->exit.cgroup_v1_id : p->cgroup_v1_id;

	/* Without a v1 memory hierarchy, the memory controller (if any) is on v2. */
	return (struct memcg_key){ .id = v1 ? v1 : ex ? p->exit.cgroup_id : p->cgroup_id, .v1 = v1 != 0,
				   .step = p->step };
}

static int key_cmp(const void *pa, const void *pb)
{
	const struct memcg_key *a = pa, *b = pb;

	if (a->v1 != b->v1)
		return a->v1 < b->v1 ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return (a->step > b->step) - (a->step < b->step);
}

/*
 * A step owns a memory cgroup when every one of its processes is in it and
 * no other process of the table is: keys sorted, a group of one key whose
 * members are all of one step, and as many as that step has.
 */
static void find_own_memcgs(struct steps *s, struct memcg_key *k, size_t n, const uint32_t *count)
{
	hsort(k, n, sizeof(*k), key_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && k[j].v1 == k[i].v1 && k[j].id == k[i].id; j++)
			;
		/* Sorted by step within the group: one step iff the first and last agree. */
		if (!k[i].id || !k[i].step || k[j - 1].step != k[i].step || j - i != count[k[i].step - 1])
			continue;
		s->v[k[i].step - 1].memcg_own = true;
		s->v[k[i].step - 1].memcg_v1 = k[i].v1;
		s->v[k[i].step - 1].memcg_id = k[i].id;
	}
}

/* Concurrent peak, sum of overlapping peaks and largest process of one step; members: its processes. */
static void step_peaks(struct step *st, const struct proc *const *members, size_t n, uint64_t now_ns,
		       struct mem_span *spans, struct mem_event *ev)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		m += mem_proc_spans(members[i], now_ns, spans + m);
	st->peak_rss_bytes = mem_spans_peak(spans, m, ev);
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = members[i];
		enum proc_peak_source src;
		uint64_t peak = proc_peak_rss(p, &src);

		/* Its final image's whole life, at its peak: over any instant, no less than it held. */
		image_life(p, now_ns, &spans[i].t0, &spans[i].t1);
		spans[i].bytes = peak;
		if (peak > st->max_process_rss_bytes)
			st->max_process_rss_bytes = peak;
		if ((p->flags & PROC_F_EXIT) && src != PEAK_EXIT)
			st->peak_rss_partial = true;
		if (st->memcg_own && (p->flags & PROC_F_EXIT) && p->exit.memcg_peak_bytes > st->memcg_peak_bytes)
			st->memcg_peak_bytes = p->exit.memcg_peak_bytes;
	}
	st->rss_sum_of_peaks_bytes = mem_spans_peak(spans, n, ev);
	/* Each process's own peak is exact: the estimate never falls below the largest of them. */
	if (st->peak_rss_bytes < st->max_process_rss_bytes)
		st->peak_rss_bytes = st->max_process_rss_bytes;
	if (st->peak_rss_bytes > st->rss_sum_of_peaks_bytes)
		st->peak_rss_bytes = st->rss_sum_of_peaks_bytes;
}

struct step_members {
	const struct proc **v; /* every step's processes, step by step */
	size_t *first;         /* v[first[i] .. first[i + 1]) are step i's */
	uint32_t *count;
	struct memcg_key *keys;
	size_t n_keys, max_spans;
};

static int group_members(struct step_members *g, const struct steps *s, const struct proctab *t)
{
	size_t total = 0, *need;

	g->first = calloc((size_t)s->n + 1, sizeof(*g->first));
	g->count = calloc(s->n ? s->n : 1, sizeof(*g->count));
	need = calloc(s->n ? s->n : 1, sizeof(*need));
	g->keys = malloc((t->used ? t->used : 1) * sizeof(*g->keys));
	if (!g->first || !g->count || !need || !g->keys) {
		free(need);
		return -ENOMEM;
	}
	for (const struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		if (g->n_keys < t->used)
			g->keys[g->n_keys++] = memcg_of(p);
		if (!p->step || p->step > s->n)
			continue;
		g->count[p->step - 1]++;
		need[p->step - 1] += mem_proc_spans_max(p);
		total++;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		g->first[i + 1] = g->first[i] + g->count[i];
		if (need[i] > g->max_spans)
			g->max_spans = need[i];
	}
	free(need);
	g->v = malloc((total ? total : 1) * sizeof(*g->v));
	if (!g->v)
		return -ENOMEM;
	memset(g->count, 0, (s->n ? s->n : 1) * sizeof(*g->count));
	for (const struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (p->step && p->step <= s->n)
			g->v[g->first[p->step - 1] + g->count[p->step - 1]++] = p;
	return 0;
}

int steps_memory(struct steps *s, const struct proctab *t)
{
	struct step_members g = { 0 };
	struct mem_span *spans = NULL;
	struct mem_event *ev = NULL;
	int rc = group_members(&g, s, t);

	if (!rc) {
		spans = malloc((g.max_spans ? g.max_spans : 1) * sizeof(*spans));
		ev = malloc((g.max_spans ? g.max_spans : 1) * 2 * sizeof(*ev));
		rc = spans && ev ? 0 : -ENOMEM;
	}
	if (!rc) {
		find_own_memcgs(s, g.keys, g.n_keys, g.count);
		for (uint32_t i = 0; i < s->n; i++)
			step_peaks(&s->v[i], g.v + g.first[i], g.count[i], t->newest_ts, spans, ev);
	}
	free(spans);
	free(ev);
	free(g.v);
	free(g.first);
	free(g.count);
	free(g.keys);
	return rc;
}

_Static_assert(sizeof(struct mem_event) <= HSORT_MAX_SIZE && sizeof(struct memcg_key) <= HSORT_MAX_SIZE,
	       "sorted in place by hsort");
