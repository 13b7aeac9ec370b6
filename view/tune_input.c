/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The analysis' input from the lake: tune_input.h says what each figure
 * is. Four walks (runs, tasks, samples, files), each one statement over
 * every run; the samples are reduced run by run as they arrive (a run's
 * samples and its processes' buckets in scratch reused from run to run),
 * so memory grows with the runs and tasks, not with the samples.
 */
#include "tune_input.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "intern.h"

#define NONE UINT32_MAX
/* Real times past this (year 2191) are not a clock's: refused, so bucket arithmetic cannot overflow. */
#define REAL_MAX_NS 7000000000000000000LL
#define SPAN_MAX_BUCKETS ((int64_t)TUNE_SPAN_MAX_S)

/* ---- strings: an arena, interned strings, file ids -------------------------- */

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

struct str_slot {
	uint64_t hash;
	const char *key;   /* in the arena; NULL: empty slot */
	size_t len;
	uint32_t id;
};

/* Open addressing, at most half full. */
struct str_map {
	struct str_slot *v;
	size_t cap, n;
};

struct tune_strings {
	struct arena_block *blocks;
	struct intern interned;   /* names, tools, pipelines, states, hosts */
	struct str_map files;     /* "host\0path" -> file id */
	uint64_t seed;            /* random: a host cannot choose paths that collide */
};

static char *arena_alloc(struct tune_strings *s, size_t n)
{
	struct arena_block *b = s->blocks;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > (64u << 10) ? n : (64u << 10);

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = s->blocks;
		b->used = 0;
		b->cap = cap;
		s->blocks = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

/* A copy of p[0..n) with a NUL after it. */
static const char *arena_copy(struct tune_strings *s, const char *p, size_t n)
{
	char *c = arena_alloc(s, n + 1);

	if (c) {
		memcpy(c, p, n);
		c[n] = '\0';
	}
	return c;
}

static struct str_slot *map_slot(const struct str_map *m, uint64_t h, const char *key, size_t len)
{
	size_t i = h & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct str_slot *sl = &m->v[i];

		if (!sl->key || (sl->hash == h && sl->len == len && !memcmp(sl->key, key, len)))
			return sl;
	}
}

static int map_grow(struct str_map *m)
{
	struct str_map g = { .cap = m->cap ? 2 * m->cap : 256 };

	g.v = calloc(g.cap, sizeof(*g.v));
	if (!g.v)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].key)
			*map_slot(&g, m->v[i].hash, m->v[i].key, m->v[i].len) = m->v[i];
	g.n = m->n;
	free(m->v);
	*m = g;
	return 0;
}

/*
 * The slot of key[0..len) in m: found (key set) or to fill (key NULL;
 * the caller sets key, len, hash, id and counts it). NULL: no memory.
 */
static struct str_slot *map_find(struct str_map *m, uint64_t seed, const char *key, size_t len, uint64_t *h)
{
	if (2 * (m->n + 1) > m->cap && map_grow(m))
		return NULL;
	*h = hash_bytes(seed, key, len);
	return map_slot(m, *h, key, len);
}

/* Look up only: the slot of key, NULL when absent. */
static const struct str_slot *map_get(const struct str_map *m, uint64_t seed, const char *key, size_t len)
{
	const struct str_slot *sl;

	if (!m->cap)
		return NULL;
	sl = map_slot(m, hash_bytes(seed, key, len), key, len);
	return sl->key ? sl : NULL;
}

/* The one copy of p[0..n); "" for NULL. NULL only when out of memory or past TUNE_INTERN_BUDGET. */
static const char *intern_n(struct tune_strings *s, const char *p, size_t n)
{
	return p ? intern_get(&s->interned, p, n) : "";
}

static const char *intern(struct tune_strings *s, const char *p)
{
	return intern_n(s, p, p ? strlen(p) : 0);
}

/* An interned copy, or NULL for NULL (fields the analysis reads as "unknown"); *oom on failure. */
static const char *intern_or_null(struct tune_strings *s, const char *p, bool *oom)
{
	const char *c;

	if (!p)
		return NULL;
	c = intern(s, p);
	if (!c)
		*oom = true;
	return c;
}

static void strings_free(struct tune_strings *s)
{
	if (!s)
		return;
	while (s->blocks) {
		struct arena_block *b = s->blocks;

		s->blocks = b->next;
		free(b);
	}
	intern_free(&s->interned);
	free(s->files.v);
	free(s);
}

/* ---- growable arrays ---------------------------------------------------------- */

/* Room for n + 1 elements of size in *p (capacity *cap): 0 or -ENOMEM. */
static int grow(void *p, size_t *cap, size_t n, size_t size)
{
	void **pp = p;
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	while (c <= n)
		c *= 2;
	q = realloc(*pp, c * size);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = c;
	return 0;
}

/* Exactly n zeroed elements of size in *p (capacity *cap, reused). */
static int scratch(void *p, size_t *cap, size_t n, size_t size)
{
	void **pp = p;

	if (n > *cap) {
		void *q = realloc(*pp, n * size);

		if (!q)
			return -ENOMEM;
		*pp = q;
		*cap = n;
	}
	memset(*pp, 0, n * size);
	return 0;
}

/* qsort, but for an empty array too (qsort's base may not be NULL). */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- the step's name -------------------------------------------------------- */

size_t tune_step_name_skip(const char *name)
{
	size_t i = 1;

	/* "[ab/cdef01] tools": the task directory's hash, different in every run. */
	if (name[0] != '[')
		return 0;
	while (name[i] && name[i] != ']' && name[i] != '[')
		i++;
	if (name[i] != ']' || name[i + 1] != ' ' || !name[i + 2])
		return 0;
	return i + 2;
}

size_t tune_step_name_len(const char *name)
{
	size_t n = strlen(name), depth = 0, i = n;

	if (n < 4 || name[n - 1] != ')')
		return n;
	/* The "(" that opens the final ")": a tag may hold parentheses of its own. */
	while (i-- > 0) {
		if (name[i] == ')') {
			depth++;
		} else if (name[i] == '(' && --depth == 0) {
			break;
		}
	}
	if (i == (size_t)-1 || i < 2 || name[i - 1] != ' ')
		return n;
	for (i--; i > 0 && name[i - 1] == ' '; i--)
		;
	return i ? i : n;
}

/* ---- the load ------------------------------------------------------------------ */

struct run_key {
	int64_t run_id;
	uint32_t run;
};


/* One sample of the run being reduced. */
struct psample {
	int64_t t, cpu, rss;
	bool has_cpu, has_rss;
};

/* One process of the run being reduced: its samples s[first .. first+n). */
struct pgroup {
	uint32_t task;      /* NONE: in no step */
	uint32_t first, n;
	int64_t b0, b1;     /* its buckets */
};

/* A file a task opened. */
struct file_ref {
	uint32_t task, id;
	unsigned mode;      /* 1 read, 2 written */
};

struct load {
	struct tune_input *t;
	struct tune_strings *str;
	int err;
	size_t cap_runs, cap_run_keys, cap_run_engine, cap_points, cap_file_paths, cap_file_hosts;

	struct run_key *run_keys;     /* by run_id */
	const char **run_engine;      /* by run */

	/* tasks, in the walk's order (run_id, idx) until placed */
	struct an_step *tmp;
	int64_t *tmp_run_id, *tmp_idx;
	size_t ntmp, cap_tmp, cap_tmp_run_id, cap_tmp_idx;
	struct str_map task_map;      /* run_id's 8 bytes and the step id -> the task's place */
	char *task_map_keys;

	/* the run being reduced */
	bool active;
	int64_t run_id, process;
	uint32_t run;
	uint32_t last_task;           /* what find_task found for last_run_id, last_step */
	int64_t last_run_id;
	const char *last_step;
	struct psample *smp;
	size_t nsmp, cap_smp;
	struct pgroup *grp;
	size_t ngrp, cap_grp;
	double *pcpu, *pcov;
	size_t cap_pcpu, cap_pcov;
	double *tcores;
	uint8_t *thas;
	size_t cap_tcores, cap_thas;
	double *rcores;
	uint64_t *rmem;
	uint8_t *rlive;
	size_t cap_rcores, cap_rmem, cap_rlive;
	double *series;
	size_t cap_series;

	struct file_ref *refs;
	size_t nrefs, cap_refs;
};

static int fail_nomem(struct load *l)
{
	l->err = STORE_E_NOMEM;
	return STORE_E_NOMEM;
}

/* ---- runs ---- */

static const char *run_label(struct load *l, const struct store_tune_run *r)
{
	char num[32];

	if (r->pipeline_run_id && *r->pipeline_run_id)
		return intern(l->str, r->pipeline_run_id);
	if (r->run_name && *r->run_name)
		return intern(l->str, r->run_name);
	snprintf(num, sizeof(num), "#%lld", (long long)r->run_id);
	return intern(l->str, num);
}

static const char *run_user(struct load *l, const struct store_tune_run *r)
{
	char u[32];

	if (!r->uid.known)
		return intern(l->str, "unknown");
	snprintf(u, sizeof(u), "uid %lld", (long long)r->uid.v);
	return intern(l->str, u);
}

static uint64_t nonneg(struct store_int v)
{
	return v.known && v.v > 0 ? (uint64_t)v.v : 0;
}

/* A host as the analysis takes it: its names interned, its figures where known (price < 0: not set). */
static void host_of(struct load *l, const struct store_tune_host *h, struct an_host *a, bool *oom)
{
	a->host_id = intern_or_null(l->str, h->host_id, oom);
	a->cloud = intern_or_null(l->str, h->cloud, oom);
	a->instance_type = intern_or_null(l->str, h->instance_type, oom);
	a->region = intern_or_null(l->str, h->region, oom);
	a->cpus = h->cpus.known && h->cpus.v > 0 && h->cpus.v <= UINT32_MAX ? (uint32_t)h->cpus.v : 0;
	a->memory_bytes = nonneg(h->memory_bytes);
	a->price_per_hour = h->price_known && h->price_per_hour >= 0 ? h->price_per_hour : -1;
}

static int on_run(void *ctx, const struct store_tune_run *r)
{
	struct load *l = ctx;
	struct tune_input *t = l->t;
	struct an_run *a;
	bool oom = false;
	size_t n = t->in.nruns;

	if (grow(&t->runs, &l->cap_runs, n, sizeof(*t->runs)) ||
	    grow(&l->run_keys, &l->cap_run_keys, n, sizeof(*l->run_keys)) ||
	    grow(&l->run_engine, &l->cap_run_engine, n, sizeof(*l->run_engine)))
		return fail_nomem(l);
	a = &t->runs[n];
	memset(a, 0, sizeof(*a));
	a->lake_id = r->run_id;
	a->key = r->run_key ? arena_copy(l->str, r->run_key, strlen(r->run_key)) : NULL;
	oom |= r->run_key && !a->key;
	a->pipeline = intern(l->str, r->pipeline ? r->pipeline : "");
	a->label = run_label(l, r);
	a->state = intern(l->str, r->state ? r->state : "unknown");
	a->user = run_user(l, r);
	a->start_ns = r->start_ns.known && r->start_ns.v > 0 ? r->start_ns.v : 0;
	a->end_ns = r->end_ns.known && r->end_ns.v > 0 && !(r->state && !strcmp(r->state, "running")) ? r->end_ns.v : 0;
	a->cpu_ns = nonneg(r->cpu_ns);
	host_of(l, &r->host, &a->host, &oom);
	l->run_engine[n] = intern_or_null(l->str, r->engine, &oom);
	if (oom || !a->pipeline || !a->label || !a->state || !a->user)
		return fail_nomem(l);
	l->run_keys[n] = (struct run_key){ r->run_id, (uint32_t)n };
	t->in.nruns = n + 1;
	return 0;
}

static int cmp_run_key(const void *a, const void *b)
{
	const struct run_key *x = a, *y = b;

	return x->run_id < y->run_id ? -1 : x->run_id > y->run_id;
}

static uint32_t find_run(const struct load *l, int64_t run_id)
{
	struct run_key k = { run_id, 0 };
	const struct run_key *f = l->t->in.nruns ? bsearch(&k, l->run_keys, l->t->in.nruns, sizeof(k), cmp_run_key)
						   : NULL;

	return f ? f->run : NONE;
}

/* ---- tasks ---- */

static bool is_nextflow(const char *engine)
{
	return engine && !strcmp(engine, "nextflow");
}

static int on_task(void *ctx, const struct store_tune_task *tk)
{
	struct load *l = ctx;
	uint32_t run = find_run(l, tk->run_id);
	const char *name = tk->name && *tk->name ? tk->name : tk->step_id;
	bool oom = false;
	struct an_step *a;
	size_t n = l->ntmp;

	if (run == NONE) {
		l->t->counts.tasks_orphan++;
		return 0;
	}
	if (grow(&l->tmp, &l->cap_tmp, n, sizeof(*l->tmp)) ||
	    grow(&l->tmp_run_id, &l->cap_tmp_run_id, n, sizeof(*l->tmp_run_id)) ||
	    grow(&l->tmp_idx, &l->cap_tmp_idx, n, sizeof(*l->tmp_idx)))
		return fail_nomem(l);
	a = &l->tmp[n];
	memset(a, 0, sizeof(*a));
	a->run = run;
	if (!name)
		name = "";
	if (is_nextflow(tk->engine) || (!tk->engine && is_nextflow(l->run_engine[run]))) {
		name += tune_step_name_skip(name);
		a->name = intern_n(l->str, name, tune_step_name_len(name));
	} else {
		a->name = intern(l->str, name);
	}
	/* The pipeline's own name for the step: a Snakemake rule, or TRACER_STEP's value. */
	a->named = (tk->rule && *tk->rule && !strcmp(tk->rule, name)) || (tk->engine && !strcmp(tk->engine, "env"));
	a->step_id = tk->step_id ? arena_copy(l->str, tk->step_id, strlen(tk->step_id)) : intern(l->str, "");
	a->tools = intern(l->str, tk->tools);
	oom = !a->name || !a->step_id || !a->tools;
	if (oom)
		return fail_nomem(l);
	a->start_ns = tk->start_ns.known && tk->start_ns.v > 0 ? tk->start_ns.v : 0;
	a->end_ns = !tk->running && tk->end_ns.known && tk->end_ns.v > 0 ? tk->end_ns.v : 0;
	a->submitted_ns = tk->submitted_ns.known && tk->submitted_ns.v > 0 ? tk->submitted_ns.v : 0;
	if (a->submitted_ns) {
		host_of(l, &tk->job_host, &a->job_host, &oom);
		if (oom)
			return fail_nomem(l);
	} else {
		a->job_host.price_per_hour = -1;
	}
	a->failed = tk->failed;
	a->running = tk->running;
	a->processes = tk->processes.known && tk->processes.v > 0 && tk->processes.v <= UINT32_MAX
			       ? (uint32_t)tk->processes.v
			       : 0;
	a->oom_kills = tk->oom_kills.known && tk->oom_kills.v > 0 && tk->oom_kills.v <= UINT32_MAX
			       ? (uint32_t)tk->oom_kills.v
			       : 0;
	a->oom_limit_bytes = nonneg(tk->oom_limit_bytes);
	/* The limit it ran under; an OOM kill's limit where the step's record has none (an older agent). */
	a->mem_limit_bytes = nonneg(tk->memory_limit_bytes) ? nonneg(tk->memory_limit_bytes) : a->oom_limit_bytes;
	a->cpu_limit = (double)nonneg(tk->cpu_limit_millicores) / 1000.0;
	a->cpu_ns = nonneg(tk->cpu_ns);
	a->proc_ns = nonneg(tk->proc_ns);
	a->run_delay_ns = nonneg(tk->run_delay_ns);
	a->iowait_ns = nonneg(tk->iowait_ns);
	a->blocked_ns = nonneg(tk->blocked_ns);
	a->net_wait_ns = nonneg(tk->net_wait_ns);
	a->reclaim_ns = nonneg(tk->reclaim_ns);
	a->idle_known = tk->idle_ns.known;
	a->idle_ns = nonneg(tk->idle_ns);
	a->peak_mem_bytes = nonneg(tk->peak_rss_bytes);
	a->read_bytes = nonneg(tk->read_bytes);
	a->write_bytes = nonneg(tk->write_bytes);
	a->rchar = nonneg(tk->rchar);
	a->wchar = nonneg(tk->wchar);
	a->net_tx_bytes = nonneg(tk->net_tx_bytes);
	a->net_rx_bytes = nonneg(tk->net_rx_bytes);
	l->tmp_run_id[n] = tk->run_id;
	l->tmp_idx[n] = tk->idx;
	l->ntmp = n + 1;
	return 0;
}

/* Each run's tasks by start time (unknown last), then steps.idx; the runs in their order. */
static int cmp_task_order(const void *a, const void *b, void *ctx)
{
	const struct load *l = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct an_step *x = &l->tmp[i], *y = &l->tmp[j];
	int64_t sx = x->start_ns ? x->start_ns : INT64_MAX, sy = y->start_ns ? y->start_ns : INT64_MAX;

	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (l->tmp_idx[i] != l->tmp_idx[j])
		return l->tmp_idx[i] < l->tmp_idx[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The key of a step in task_map: its run's number, then its id. */
static size_t task_key(char *key, int64_t run_id, const char *step, size_t len)
{
	memcpy(key, &run_id, sizeof(run_id));
	memcpy(key + sizeof(run_id), step, len);
	return sizeof(run_id) + len;
}

/* (run_id, step id) -> the task's place. A step without an id (NULL or "") is no process's. */
static int map_tasks(struct load *l)
{
	const struct tune_input *t = l->t;
	size_t total = 0, off = 0;

	for (size_t k = 0; k < t->in.nsteps; k++)
		total += sizeof(int64_t) + strlen(t->steps[k].step_id);
	l->task_map_keys = malloc(total ? total : 1);
	if (!l->task_map_keys)
		return fail_nomem(l);
	for (size_t k = 0; k < t->in.nsteps; k++) {
		const struct an_step *st = &t->steps[k];
		size_t len = strlen(st->step_id), klen;
		char *key = l->task_map_keys + off;
		struct str_slot *sl;
		uint64_t h;

		if (!len)
			continue;
		klen = task_key(key, t->runs[st->run].lake_id, st->step_id, len);
		off += klen;
		sl = map_find(&l->task_map, l->str->seed, key, klen, &h);
		if (!sl)
			return fail_nomem(l);
		if (!sl->key) { /* steps_run_step: a step id once per run */
			*sl = (struct str_slot){ .hash = h, .key = key, .len = klen, .id = (uint32_t)k };
			l->task_map.n++;
		}
	}
	return 0;
}

/* The final order of the tasks, each run's range. */
static int place_tasks(struct load *l)
{
	struct tune_input *t = l->t;
	size_t n = l->ntmp;
	uint32_t *perm = malloc((n ? n : 1) * sizeof(*perm));

	t->steps = malloc((n ? n : 1) * sizeof(*t->steps));
	t->step_lake_idx = malloc((n ? n : 1) * sizeof(*t->step_lake_idx));
	if (!perm || !t->steps || !t->step_lake_idx) {
		free(perm);
		return fail_nomem(l);
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	qsort_r(perm, n, sizeof(*perm), cmp_task_order, l);
	for (size_t k = 0; k < n; k++) {
		uint32_t i = perm[k];

		t->steps[k] = l->tmp[i];
		t->step_lake_idx[k] = l->tmp_idx[i];
	}
	free(perm);
	t->in.nsteps = n;
	for (size_t r = 0, k = 0; r < t->in.nruns; r++) {
		t->runs[r].step_first = (uint32_t)k;
		while (k < n && t->steps[k].run == r)
			k++;
		t->runs[r].step_n = (uint32_t)k - t->runs[r].step_first;
	}
	return map_tasks(l);
}

/* The task of a process of run_id in step (its id), NONE if no such step was read. */
static uint32_t find_task(struct load *l, int64_t run_id, const char *step)
{
	size_t len, klen;
	char stack[512], *key;
	const struct str_slot *sl;

	if (!step || !*step)
		return NONE;
	if (l->last_step && l->last_run_id == run_id && !strcmp(l->last_step, step))
		return l->last_task;
	len = strlen(step);
	key = sizeof(int64_t) + len <= sizeof(stack) ? stack : malloc(sizeof(int64_t) + len);
	if (!key)
		return NONE;
	klen = task_key(key, run_id, step, len);
	sl = map_get(&l->task_map, l->str->seed, key, klen);
	if (key != stack)
		free(key);
	if (!sl)
		return NONE;
	l->last_run_id = run_id;
	l->last_step = l->t->steps[sl->id].step_id;
	return l->last_task = sl->id;
}

/* ---- samples: cores and the timeline ---- */

static int cmp_psample(const void *a, const void *b)
{
	const struct psample *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_pgroup(const void *a, const void *b)
{
	const struct pgroup *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The 0-based place of the nearest-rank q-quantile among n > 0 values (as analysis/stats.c's). */
static size_t nearest_rank(size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n - 1e-9);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank - 1;
}

/*
 * Put the k-th smallest of v[0..n) at v[k], the smaller ones before it
 * (Hoare's selection: linear on average; sorting every task's series was
 * 6 % of the load). The values are finite.
 */
static void select_kth(double *v, ptrdiff_t n, ptrdiff_t k)
{
	ptrdiff_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		ptrdiff_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double x = v[i];

				v[i++] = v[j];
				v[j--] = x;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/*
 * One process's CPU time per bucket b0..b1 into pcpu[], the part of each
 * bucket its intervals cover into pcov[]. Returns its intervals.
 */
static uint32_t process_buckets(struct load *l, const struct pgroup *g)
{
	const struct psample *s = l->smp + g->first;
	uint32_t intervals = 0;

	for (uint32_t i = 1; i < g->n; i++) {
		const struct psample *a = &s[i - 1], *c = &s[i];
		double rate;

		if (!a->has_cpu || !c->has_cpu || c->t <= a->t || a->cpu < 0 || c->cpu < a->cpu)
			continue;
		intervals++;
		rate = (double)(c->cpu - a->cpu) / (double)(c->t - a->t);
		for (int64_t b = a->t / TUNE_BUCKET_NS; b <= (c->t - 1) / TUNE_BUCKET_NS; b++) {
			int64_t lo = b * TUNE_BUCKET_NS > a->t ? b * TUNE_BUCKET_NS : a->t;
			int64_t hi = (b + 1) * TUNE_BUCKET_NS < c->t ? (b + 1) * TUNE_BUCKET_NS : c->t;

			l->pcpu[b - g->b0] += rate * (double)(hi - lo);
			l->pcov[b - g->b0] += (double)(hi - lo);
		}
	}
	return intervals;
}

/* A process's newest RSS at each bucket's end, added to the run's memory. */
static void process_memory(struct load *l, const struct pgroup *g, int64_t rb0)
{
	const struct psample *s = l->smp + g->first;
	uint64_t last = 0;
	uint32_t j = 0;

	for (int64_t b = g->b0; b <= g->b1; b++) {
		for (; j < g->n && s[j].t < (b + 1) * TUNE_BUCKET_NS; j++)
			if (s[j].has_rss)
				last = (uint64_t)s[j].rss;
		l->rmem[b - rb0] += last;
		l->rlive[b - rb0] = 1;
	}
}

/*
 * v held to the host's capacity cap (0: unknown, nothing held): cores or
 * memory summed over processes whose samples straddle a bucket's edges
 * can exceed what the host has (docs/tune.md, "Order statistics").
 */
static double held_to_host(struct load *l, double v, double cap)
{
	if (cap <= 0 || !(v > cap))
		return v;
	l->t->counts.buckets_clamped++;
	return cap;
}

/* The task's cores over its buckets: p50 and p95 by nearest rank. */
static int task_cores(struct load *l, uint32_t task, int64_t tb0, int64_t tb1, uint32_t intervals)
{
	struct an_step *st = &l->t->steps[task];
	size_t n = 0, nb = (size_t)(tb1 - tb0 + 1), k50, k95;

	if (intervals < 2)
		return 0;
	if (grow(&l->series, &l->cap_series, nb, sizeof(*l->series)))
		return fail_nomem(l);
	for (size_t b = 0; b < nb; b++)
		if (l->thas[b])
			l->series[n++] = held_to_host(l, l->tcores[b], l->t->runs[l->run].host.cpus);
	if (!n)
		return 0;
	k95 = nearest_rank(n, 0.95);
	k50 = nearest_rank(n, 0.50);
	select_kth(l->series, (ptrdiff_t)n, (ptrdiff_t)k95);
	select_kth(l->series, (ptrdiff_t)k95 + 1, (ptrdiff_t)k50); /* v[0..k95] hold the k95 + 1 smallest */
	st->cores_known = true;
	st->cores_p50 = l->series[k50];
	st->cores_p95 = l->series[k95];
	return 0;
}

/*
 * The processes grp[from .. to) of one task (or of none): each one's
 * cores into the task's buckets and the run's, its memory into the run's.
 */
static int reduce_task(struct load *l, size_t from, size_t to, int64_t rb0, bool timeline)
{
	uint32_t task = l->grp[from].task, intervals = 0;
	int64_t tb0 = INT64_MAX, tb1 = INT64_MIN;
	bool per_task;

	for (size_t i = from; i < to; i++) {
		tb0 = l->grp[i].b0 < tb0 ? l->grp[i].b0 : tb0;
		tb1 = l->grp[i].b1 > tb1 ? l->grp[i].b1 : tb1;
	}
	per_task = task != NONE && tb1 - tb0 < SPAN_MAX_BUCKETS;
	if (task != NONE && !per_task)
		l->t->counts.tasks_too_long++;
	if (per_task && (scratch(&l->tcores, &l->cap_tcores, (size_t)(tb1 - tb0 + 1), sizeof(*l->tcores)) ||
			 scratch(&l->thas, &l->cap_thas, (size_t)(tb1 - tb0 + 1), sizeof(*l->thas))))
		return fail_nomem(l);
	for (size_t i = from; i < to; i++) {
		const struct pgroup *g = &l->grp[i];
		size_t nb = (size_t)(g->b1 - g->b0 + 1);

		if (scratch(&l->pcpu, &l->cap_pcpu, nb, sizeof(*l->pcpu)) ||
		    scratch(&l->pcov, &l->cap_pcov, nb, sizeof(*l->pcov)))
			return fail_nomem(l);
		intervals += process_buckets(l, g);
		for (size_t b = 0; b < nb; b++) {
			double rate;

			if (!(l->pcov[b] > 0))
				continue;
			rate = l->pcpu[b] / l->pcov[b];
			if (per_task) {
				l->tcores[(size_t)(g->b0 - tb0) + b] += rate;
				l->thas[(size_t)(g->b0 - tb0) + b] = 1;
			}
			if (timeline)
				l->rcores[(size_t)(g->b0 - rb0) + b] += rate;
		}
		if (timeline)
			process_memory(l, g, rb0);
	}
	return per_task ? task_cores(l, task, tb0, tb1, intervals) : 0;
}

static int timeline_points(struct load *l, int64_t rb0, int64_t rb1)
{
	struct tune_input *t = l->t;
	struct an_run *r = &t->runs[l->run];

	r->point_first = (uint32_t)t->in.npoints;
	for (int64_t b = rb0; b <= rb1; b++) {
		size_t i = (size_t)(b - rb0);

		if (!l->rlive[i])
			continue;
		if (grow(&t->timeline, &l->cap_points, t->in.npoints, sizeof(*t->timeline)))
			return fail_nomem(l);
		t->timeline[t->in.npoints++] = (struct an_point){
			.t_ns = (b + 1) * TUNE_BUCKET_NS,
			.cores = held_to_host(l, l->rcores[i], r->host.cpus),
			.mem_bytes = held_to_host(l, l->rmem[i], (double)r->host.memory_bytes),
		};
	}
	r->point_n = (uint32_t)(t->in.npoints - r->point_first);
	return 0;
}

/* The run whose samples were gathered: its tasks' cores and its timeline. */
static int flush_run(struct load *l)
{
	int64_t rb0 = INT64_MAX, rb1 = INT64_MIN;
	bool timeline;
	size_t kept = 0;
	int rc = 0;

	if (!l->active || !l->ngrp)
		goto out;
	for (size_t i = 0; i < l->ngrp; i++) {
		struct pgroup *g = &l->grp[i];
		struct psample *s = l->smp + g->first;
		bool sorted = true;

		for (uint32_t j = 1; j < g->n && sorted; j++)
			sorted = s[j - 1].t <= s[j].t;
		if (!sorted)
			sort(s, g->n, sizeof(*s), cmp_psample);
		g->b0 = s[0].t / TUNE_BUCKET_NS;
		g->b1 = s[g->n - 1].t / TUNE_BUCKET_NS;
		if (g->b1 - g->b0 >= SPAN_MAX_BUCKETS) {
			l->t->counts.processes_too_long++;
			continue;
		}
		rb0 = g->b0 < rb0 ? g->b0 : rb0;
		rb1 = g->b1 > rb1 ? g->b1 : rb1;
		l->grp[kept++] = *g;
	}
	l->ngrp = kept;
	if (!kept)
		goto out;
	timeline = rb1 - rb0 < SPAN_MAX_BUCKETS && l->t->runs[l->run].point_n == 0;
	if (!timeline)
		l->t->counts.timelines_too_long++;
	if (timeline && (scratch(&l->rcores, &l->cap_rcores, (size_t)(rb1 - rb0 + 1), sizeof(*l->rcores)) ||
			 scratch(&l->rmem, &l->cap_rmem, (size_t)(rb1 - rb0 + 1), sizeof(*l->rmem)) ||
			 scratch(&l->rlive, &l->cap_rlive, (size_t)(rb1 - rb0 + 1), sizeof(*l->rlive)))) {
		rc = fail_nomem(l);
		goto out;
	}
	sort(l->grp, l->ngrp, sizeof(*l->grp), cmp_pgroup);
	for (size_t from = 0, to; from < l->ngrp && !rc; from = to) {
		for (to = from + 1; to < l->ngrp && l->grp[to].task == l->grp[from].task; to++)
			;
		rc = reduce_task(l, from, to, rb0, timeline);
	}
	if (!rc && timeline)
		rc = timeline_points(l, rb0, rb1);
out:
	l->active = false;
	l->nsmp = l->ngrp = 0;
	return rc;
}

static int on_sample(void *ctx, const struct store_tune_sample *s)
{
	struct load *l = ctx;
	struct tune_input *t = l->t;
	uint32_t task = NONE;
	int rc;

	t->counts.samples++;
	if (!l->active || s->run_id != l->run_id) {
		if ((rc = flush_run(l)))
			return rc;
		l->run_id = s->run_id;
		l->run = find_run(l, s->run_id);
		l->active = l->run != NONE;
		l->process = INT64_MIN;
		if (!l->active) {
			l->run_id = s->run_id;
			t->counts.samples_orphan++;
			return 0;
		}
	}
	if (s->real_ns <= 0 || s->real_ns > REAL_MAX_NS) {
		t->counts.samples_bad_time++;
		return 0;
	}
	if (s->process != l->process || !l->ngrp) {
		task = find_task(l, s->run_id, s->step);
		if (grow(&l->grp, &l->cap_grp, l->ngrp, sizeof(*l->grp)))
			return fail_nomem(l);
		l->grp[l->ngrp++] = (struct pgroup){ .task = task, .first = (uint32_t)l->nsmp };
		l->process = s->process;
	}
	if (l->nsmp >= UINT32_MAX || grow(&l->smp, &l->cap_smp, l->nsmp, sizeof(*l->smp)))
		return fail_nomem(l);
	l->smp[l->nsmp++] = (struct psample){
		.t = s->real_ns,
		.cpu = s->runtime_ns.v,
		.rss = s->rss_bytes.v,
		.has_cpu = s->runtime_ns.known,
		.has_rss = s->rss_bytes.known && s->rss_bytes.v >= 0,
	};
	l->grp[l->ngrp - 1].n++;
	return 0;
}

/* ---- files ---- */

static unsigned mode_bits(const char *mode)
{
	if (!strcmp(mode, "r"))
		return 1;
	if (!strcmp(mode, "w"))
		return 2;
	if (!strcmp(mode, "rw"))
		return 3;
	return 0;
}

/* The id of (host, path): the same path on the same host is one file. NONE when out of memory. */
static uint32_t file_id(struct load *l, const char *host, const char *path)
{
	struct tune_strings *s = l->str;
	struct tune_input *t = l->t;
	size_t hl = strlen(host), pl = strlen(path), len = hl + 1 + pl;
	char stack[512], *key = len <= sizeof(stack) ? stack : malloc(len);
	struct str_slot *sl;
	uint32_t id = NONE;
	uint64_t h;

	if (!key)
		return NONE;
	memcpy(key, host, hl);
	key[hl] = '\0';
	memcpy(key + hl + 1, path, pl);
	sl = map_find(&s->files, s->seed, key, len, &h);
	if (sl && sl->key) {
		id = sl->id;
	} else if (sl && t->nfile_ids < UINT32_MAX) {
		const char *c = arena_copy(s, key, len);

		if (c && !grow(&t->file_paths, &l->cap_file_paths, t->nfile_ids, sizeof(*t->file_paths)) &&
		    !grow(&t->file_hosts, &l->cap_file_hosts, t->nfile_ids, sizeof(*t->file_hosts))) {
			id = (uint32_t)t->nfile_ids++;
			*sl = (struct str_slot){ .hash = h, .key = c, .len = len, .id = id };
			s->files.n++;
			t->file_hosts[id] = c;
			t->file_paths[id] = c + hl + 1;
		}
	}
	if (key != stack)
		free(key);
	return id;
}

static int on_file(void *ctx, const struct store_tune_file *f)
{
	struct load *l = ctx;
	uint32_t task = find_task(l, f->run_id, f->step), id;
	unsigned mode = mode_bits(f->mode);
	int rc;

	if (l->active && (rc = flush_run(l))) /* the samples are all in: the last run's */
		return rc;
	l->t->counts.file_rows++;
	if (task == NONE || !mode) {
		l->t->counts.file_rows_orphan++;
		return 0;
	}
	id = file_id(l, f->host_id ? f->host_id : "", f->path);
	if (id == NONE || grow(&l->refs, &l->cap_refs, l->nrefs, sizeof(*l->refs)))
		return fail_nomem(l);
	l->refs[l->nrefs++] = (struct file_ref){ task, id, mode };
	return 0;
}

static int cmp_file_ref(const void *a, const void *b)
{
	const struct file_ref *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Each task's inputs, then its outputs, in files[]: each id once per list, ascending. */
static int place_files(struct load *l)
{
	struct tune_input *t = l->t;
	size_t n = 0;

	sort(l->refs, l->nrefs, sizeof(*l->refs), cmp_file_ref);
	/* merge the modes of one (task, id) */
	for (size_t i = 0; i < l->nrefs; i++) {
		if (n && l->refs[n - 1].task == l->refs[i].task && l->refs[n - 1].id == l->refs[i].id)
			l->refs[n - 1].mode |= l->refs[i].mode;
		else
			l->refs[n++] = l->refs[i];
	}
	t->files = malloc((n ? 2 * n : 1) * sizeof(*t->files));
	if (!t->files)
		return fail_nomem(l);
	for (size_t from = 0, to; from < n; from = to) {
		struct an_step *st = &t->steps[l->refs[from].task];

		for (to = from; to < n && l->refs[to].task == l->refs[from].task; to++)
			;
		st->in_first = (uint32_t)t->in.nfiles;
		for (size_t i = from; i < to; i++)
			if (l->refs[i].mode & 1)
				t->files[t->in.nfiles++] = l->refs[i].id;
		st->in_n = (uint32_t)t->in.nfiles - st->in_first;
		st->out_first = (uint32_t)t->in.nfiles;
		for (size_t i = from; i < to; i++)
			if (l->refs[i].mode & 2)
				t->files[t->in.nfiles++] = l->refs[i].id;
		st->out_n = (uint32_t)t->in.nfiles - st->out_first;
	}
	return 0;
}

/* ---- the whole load ---- */

static void load_free(struct load *l)
{
	free(l->run_keys);
	free(l->run_engine);
	free(l->tmp);
	free(l->tmp_run_id);
	free(l->tmp_idx);
	free(l->task_map.v);
	free(l->task_map_keys);
	free(l->smp);
	free(l->grp);
	free(l->pcpu);
	free(l->pcov);
	free(l->tcores);
	free(l->thas);
	free(l->rcores);
	free(l->rmem);
	free(l->rlive);
	free(l->series);
	free(l->refs);
}

/* The store's error, or the loader's own (out of memory), with what failed. */
static int walk_result(struct load *l, struct store *s, int rc, const char *what, char *err, size_t errlen)
{
	if (!rc && l->err)
		rc = l->err;
	if (rc && err && errlen)
		snprintf(err, errlen, "reading %s from the lake: %s%s%s", what, store_strerror(rc),
			 rc == STORE_E_NOMEM || !*store_last_error(s) ? "" : ": ",
			 rc == STORE_E_NOMEM ? "" : store_last_error(s));
	return rc;
}

static int load_all(struct load *l, struct store *s, const char *pipeline, char *err, size_t errlen)
{
	int rc;

	rc = walk_result(l, s, store_tune_runs(s, pipeline, on_run, l), "runs", err, errlen);
	if (rc)
		return rc;
	sort(l->run_keys, l->t->in.nruns, sizeof(*l->run_keys), cmp_run_key);
	rc = walk_result(l, s, store_tune_tasks(s, pipeline, on_task, l), "steps", err, errlen);
	if (!rc)
		rc = walk_result(l, s, place_tasks(l), "steps", err, errlen);
	if (rc)
		return rc;
	rc = store_tune_activity(s, pipeline, on_sample, on_file, l);
	if (!rc)
		rc = flush_run(l);
	rc = walk_result(l, s, rc, "samples and files", err, errlen);
	if (!rc)
		rc = walk_result(l, s, place_files(l), "files", err, errlen);
	return rc;
}

int tune_input_load(struct store *s, const char *pipeline, uint32_t newest, struct tune_input *out, char *err,
		    size_t errlen)
{
	struct load l = { .t = out };
	int rc;

	memset(out, 0, sizeof(*out));
	out->strings = l.str = calloc(1, sizeof(*l.str));
	if (!l.str) {
		if (err && errlen)
			snprintf(err, errlen, "reading the lake: out of memory");
		return STORE_E_NOMEM;
	}
	l.str->seed = hash_seed_random();
	if (intern_init(&l.str->interned, TUNE_INTERN_BUDGET, l.str->seed + 1)) {
		free(l.str);
		out->strings = NULL;
		if (err && errlen)
			snprintf(err, errlen, "reading the lake: out of memory");
		return STORE_E_NOMEM;
	}
	rc = walk_result(&l, s, store_tune_begin(s, newest), "the lake", err, errlen);
	if (!rc) {
		rc = load_all(&l, s, pipeline, err, errlen);
		store_tune_end(s);
	}
	load_free(&l);
	if (rc) {
		tune_input_free(out);
		return rc;
	}
	out->in = (struct an_input){
		.runs = out->runs,
		.nruns = out->in.nruns,
		.steps = out->steps,
		.nsteps = out->in.nsteps,
		.files = out->files,
		.nfiles = out->in.nfiles,
		.timeline = out->timeline,
		.npoints = out->in.npoints,
	};
	return 0;
}

void tune_input_free(struct tune_input *t)
{
	if (!t)
		return;
	free(t->runs);
	free(t->steps);
	free(t->files);
	free(t->timeline);
	free(t->file_paths);
	free(t->file_hosts);
	free(t->step_lake_idx);
	strings_free(t->strings);
	memset(t, 0, sizeof(*t));
}
