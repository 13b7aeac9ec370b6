/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A run's bottlenecks: its critical path through the tasks' file
 * dependencies, how much of the parallelism the DAG allows the run used,
 * and the tasks that dominate its wall time (docs/tune.md, "Bottlenecks
 * of a run").
 *
 * The dependencies are not stored: B depends on A when B read a file A
 * wrote and B started after A started. The writers of the run are sorted
 * by file id once, so each task finds its dependencies by binary search:
 * O(F log F) for F file records, not O(tasks^2 x files).
 */
#include "tune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"

#define NS_PER_S 1e9

struct writer {
	uint32_t file, step;
};
_Static_assert(sizeof(struct writer) <= HSORT_MAX_SIZE, "hsort moves at most HSORT_MAX_SIZE bytes");

static bool finished(const struct an_step *t)
{
	return !t->running && t->end_ns != 0;
}

static int by_file(const void *a, const void *b)
{
	const struct writer *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Every index the run's tasks hold must land inside the input: the caller's loader is trusted no further. */
static int check_run(const struct an_input *in, uint32_t run)
{
	const struct an_run *r;

	if (!in || run >= in->nruns)
		return -EINVAL;
	r = &in->runs[run];
	if ((uint64_t)r->step_first + r->step_n > in->nsteps)
		return -EINVAL;
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++) {
		const struct an_step *t = &in->steps[i];

		if ((uint64_t)t->in_first + t->in_n > in->nfiles || (uint64_t)t->out_first + t->out_n > in->nfiles)
			return -EINVAL;
	}
	return 0;
}

/* The (file, task) pairs of every file a finished task of the run wrote, by file. */
static int writers_of(const struct an_input *in, const struct an_run *r, struct writer **out, size_t *n)
{
	size_t k = 0;

	*n = 0;
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++)
		if (finished(&in->steps[i]))
			*n += in->steps[i].out_n;
	*out = malloc((*n ? *n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++) {
		const struct an_step *t = &in->steps[i];

		if (!finished(t))
			continue;
		for (uint32_t f = 0; f < t->out_n; f++)
			(*out)[k++] = (struct writer){ in->files[t->out_first + f], i };
	}
	hsort(*out, *n, sizeof(**out), by_file);
	return 0;
}

/* The first pair of file id f (n if none). */
static size_t lower_bound(const struct writer *w, size_t n, uint32_t f)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid].file < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a is the better link than b: it ended later; on a tie, started later (the nearer); then the lower index. */
static bool later(const struct an_input *in, uint32_t a, uint32_t b)
{
	const struct an_step *x = &in->steps[a], *y = &in->steps[b];

	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns;
	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns;
	return a < b;
}

/* The dependency of task t that ended last, into *dep; false when t depends on nothing. */
static bool last_dependency(const struct an_input *in, const struct writer *w, size_t nw, uint32_t t, uint32_t *dep)
{
	const struct an_step *task = &in->steps[t];
	bool found = false;

	for (uint32_t f = 0; f < task->in_n; f++) {
		uint32_t file = in->files[task->in_first + f];

		for (size_t k = lower_bound(w, nw, file); k < nw && w[k].file == file; k++) {
			uint32_t a = w[k].step;

			if (a == t || in->steps[a].start_ns >= task->start_ns)
				continue; /* a strictly earlier start: the path cannot loop */
			if (!found || later(in, a, *dep))
				*dep = a;
			found = true;
		}
	}
	return found;
}

static double span_s(int64_t from, int64_t to)
{
	return to > from ? (double)((uint64_t)to - (uint64_t)from) / NS_PER_S : 0;
}

/* Walk back from the task that finished last; then lay the path out first task first. */
static int walk_path(const struct an_input *in, const struct an_run *r, const struct writer *w, size_t nw,
		     uint32_t last, struct an_bottlenecks *out)
{
	uint32_t cur = last;
	size_t n = 1;

	out->path = malloc(r->step_n * sizeof(*out->path));
	if (!out->path)
		return -ENOMEM;
	out->path[0].step = cur;
	while (n < r->step_n && last_dependency(in, w, nw, cur, &cur))
		out->path[n++].step = cur;
	out->npath = n;
	for (size_t i = 0; i < n / 2; i++) {
		struct an_path_link tmp = out->path[i];

		out->path[i] = out->path[n - 1 - i];
		out->path[n - 1 - i] = tmp;
	}
	for (size_t i = 0; i < n; i++) {
		const struct an_step *t = &in->steps[out->path[i].step];
		int64_t from = i ? in->steps[out->path[i - 1].step].end_ns : r->start_ns;

		out->path[i].duration_s = an_step_wall_s(t);
		out->path[i].wait_s = from ? span_s(from, t->start_ns) : 0;
		out->path[i].queued_s = t->submitted_ns ? span_s(t->submitted_ns, t->start_ns) : 0;
	}
	out->path_s = span_s(in->steps[out->path[0].step].start_ns, in->steps[last].end_ns);
	return 0;
}

struct edge {
	int64_t at;
	int dq, dr; /* tasks queued, tasks running: +1 from here, -1 from here */
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* Adds [from, to) clipped to [lo, hi) as two edges, if anything of it is left. */
static size_t add_span(struct edge *e, size_t n, int64_t from, int64_t to, int64_t lo, int64_t hi, bool queue)
{
	from = from < lo ? lo : from;
	to = to > hi ? hi : to;
	if (from >= to)
		return n;
	e[n++] = (struct edge){ from, queue, !queue };
	e[n++] = (struct edge){ to, -(int)queue, -(int)!queue };
	return n;
}

int an_queued_only(const struct an_timespan *t, size_t n, int64_t from, int64_t to, int64_t *out_ns)
{
	struct edge *e;
	size_t ne = 0;
	int q = 0, r = 0;

	*out_ns = 0;
	if (!n || to <= from)
		return 0;
	if (n > SIZE_MAX / (4 * sizeof(*e)))
		return -ENOMEM;
	e = malloc(4 * n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (t[i].start_ns <= 0)
			continue;
		if (t[i].submitted_ns > 0)
			ne = add_span(e, ne, t[i].submitted_ns, t[i].start_ns, from, to, true);
		ne = add_span(e, ne, t[i].start_ns, t[i].end_ns > 0 ? t[i].end_ns : to, from, to, false);
	}
	qsort(e, ne, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < ne; i++) {
		if (i && q > 0 && r == 0)
			*out_ns += e[i].at - e[i - 1].at;
		q += e[i].dq;
		r += e[i].dr;
	}
	free(e);
	return 0;
}

/* The run's wall time split: queued (a job waited, no task ran) and running. */
static int queue_split(const struct an_input *in, const struct an_run *r, uint32_t last, struct an_bottlenecks *out)
{
	int64_t end = r->end_ns ? r->end_ns : last != UINT32_MAX ? in->steps[last].end_ns : 0, q = 0;
	struct an_timespan *t;
	int rc;

	out->running_s = out->wall_s;
	if (!r->start_ns || !r->step_n)
		return 0;
	t = malloc(r->step_n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->step_n; i++) {
		const struct an_step *s = &in->steps[r->step_first + i];

		t[i] = (struct an_timespan){ s->submitted_ns, s->start_ns, s->end_ns };
	}
	rc = an_queued_only(t, r->step_n, r->start_ns, end, &q);
	free(t);
	out->queued_s = (double)q / NS_PER_S;
	out->running_s = out->wall_s > out->queued_s ? out->wall_s - out->queued_s : 0;
	return rc;
}

/* Keep the five longest tasks, longest first (ties: the earlier task). */
static void consider_dominant(struct an_bottlenecks *out, uint32_t step, double d)
{
	size_t k = out->ndominant < 5 ? out->ndominant++ : 5;

	while (k > 0 && d > out->dominant_share[k - 1]) {
		if (k < 5) {
			out->dominant[k] = out->dominant[k - 1];
			out->dominant_share[k] = out->dominant_share[k - 1];
		}
		k--;
	}
	if (k < 5) {
		out->dominant[k] = step;
		out->dominant_share[k] = d; /* a duration until the end: then divided by the wall time */
	}
}

/* The work, the dominant tasks and the task that finished last (UINT32_MAX if none did). */
static uint32_t survey(const struct an_input *in, const struct an_run *r, struct an_bottlenecks *out)
{
	uint32_t last = UINT32_MAX;

	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++) {
		const struct an_step *t = &in->steps[i];
		double d = an_step_wall_s(t);

		if (!finished(t))
			continue;
		out->work_s += d;
		consider_dominant(out, i, d);
		if (last == UINT32_MAX || t->end_ns > in->steps[last].end_ns)
			last = i;
	}
	return last;
}

/* A running run's wall time so far ends at its last finished task. */
static double run_wall_s(const struct an_input *in, const struct an_run *r, uint32_t last)
{
	int64_t end = r->end_ns ? r->end_ns : last != UINT32_MAX ? in->steps[last].end_ns : 0;

	return r->start_ns ? span_s(r->start_ns, end) : 0;
}

int an_bottlenecks(const struct an_input *in, uint32_t run, struct an_bottlenecks *out)
{
	const struct an_run *r;
	struct writer *w = NULL;
	double path_work = 0;
	uint32_t last;
	size_t nw;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_run(in, run);
	if (rc)
		return rc;
	r = &in->runs[run];
	last = survey(in, r, out);
	out->wall_s = run_wall_s(in, r, last);
	for (size_t i = 0; i < out->ndominant; i++)
		out->dominant_share[i] = out->wall_s > 0 ? out->dominant_share[i] / out->wall_s : 0;
	out->parallelism_used = out->wall_s > 0 ? out->work_s / out->wall_s : 0;
	out->cores_used = out->wall_s > 0 ? (double)r->cpu_ns / NS_PER_S / out->wall_s : 0;
	rc = queue_split(in, r, last, out);
	if (rc || last == UINT32_MAX)
		return rc;
	rc = writers_of(in, r, &w, &nw);
	if (!rc)
		rc = walk_path(in, r, w, nw, last, out);
	free(w);
	if (rc) {
		an_bottlenecks_free(out);
		return rc;
	}
	for (size_t i = 0; i < out->npath; i++)
		path_work += out->path[i].duration_s;
	out->parallelism_available = path_work > 0 ? out->work_s / path_work : 0;
	return 0;
}

void an_bottlenecks_free(struct an_bottlenecks *b)
{
	free(b->path);
	b->path = NULL;
	b->npath = 0;
}
