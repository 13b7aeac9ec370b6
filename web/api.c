/* SPDX-License-Identifier: Apache-2.0 */
#include "api.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_data.h"
#include "run_json.h"
#include "run_tune.h"
#include "sweep_input.h"
#include "sweep_json.h"
#include "tune_input.h"
#include "version.h"

#define NS_PER_S 1e9

static void kv_int(struct json *j, const char *key, struct store_int v)
{
	json_key(j, key);
	if (v.known)
		json_i64(j, v.v);
	else
		json_null(j);
}

static bool final_state(const char *s)
{
	return s && (!strcmp(s, "succeeded") || !strcmp(s, "failed") || !strcmp(s, "lost"));
}

/* ---- distinct values (the filters, the pipelines) ---------------------------- */

struct distinct {
	char **v;
	size_t n;
	size_t max;
	bool full;               /* a value was turned away: the list is not complete */
	int err;
};

/* The value's index, added when new; -1 when full or out of memory (d->full / d->err). */
static long distinct_add(struct distinct *d, const char *s)
{
	char **nv;

	if (!s || !*s)
		return -1;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i], s))
			return (long)i;
	if (d->n == d->max) {
		d->full = true;
		return -1;
	}
	nv = realloc(d->v, (d->n + 1) * sizeof(*nv));
	if (!nv || !(nv[d->n] = strdup(s))) {
		if (nv)
			d->v = nv;
		d->err = -ENOMEM;
		return -1;
	}
	d->v = nv;
	return (long)d->n++;
}

static void distinct_free(struct distinct *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static void distinct_json(struct json *j, const char *key, const struct distinct *d)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < d->n; i++)
		json_string(j, d->v[i]);
	json_array_end(j);
}

/* ---- /api/runs ------------------------------------------------------------------ */

struct runs_pass {
	const struct api_runs_query *q;
	struct distinct pipelines, hosts, states;
	int64_t *ids;            /* the matching runs, oldest first */
	size_t n, cap;
	int err;
};

static bool runs_match(const struct api_runs_query *q, const struct store_run *r)
{
	if (q->pipeline && *q->pipeline && (!r->pipeline || strcmp(r->pipeline, q->pipeline)))
		return false;
	if (q->state && *q->state && (!r->state || strcmp(r->state, q->state)))
		return false;
	if (q->host && *q->host && strncmp(r->host_id, q->host, strlen(q->host)))
		return false;
	return true;
}

static int runs_collect(void *ctx, const struct store_run *r)
{
	struct runs_pass *p = ctx;

	distinct_add(&p->pipelines, r->pipeline);
	distinct_add(&p->hosts, r->host_id);
	distinct_add(&p->states, r->state);
	if (!runs_match(p->q, r))
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		int64_t *ids = realloc(p->ids, cap * sizeof(*ids));

		if (!ids) {
			p->err = -ENOMEM;
			return 1;
		}
		p->ids = ids;
		p->cap = cap;
	}
	p->ids[p->n++] = r->run_id;
	return 0;
}

struct one_run {
	int64_t id;
	struct json *j;
	bool found;
};

static int runs_item(void *ctx, const struct store_run *r)
{
	struct one_run *o = ctx;

	if (r->run_id != o->id || o->found)
		return 0;
	o->found = true;
	return run_json_list_item(o->j, r);
}

/* The run of that number: fn called once with it; API_E_NOT_FOUND when there is none. */
static int by_id(struct store *st, int64_t id, store_run_fn fn, struct one_run *o)
{
	char name[24];
	int rc;

	snprintf(name, sizeof(name), "%" PRId64, id);
	o->id = id;
	o->found = false;
	rc = store_run(st, name, fn, o);
	if (rc == STORE_E_NOT_FOUND || (!rc && !o->found))
		return API_E_NOT_FOUND;
	return rc;
}

int api_runs(struct store *st, struct json *j, const struct api_runs_query *q)
{
	struct runs_pass p = { .q = q };
	uint32_t limit = q->limit ? q->limit : API_RUNS_DEFAULT;
	int rc;

	p.pipelines.max = p.hosts.max = p.states.max = API_FILTER_VALUES;
	rc = store_runs(st, runs_collect, &p);
	if (!rc)
		rc = p.err ? p.err : p.pipelines.err ? p.pipelines.err : p.hosts.err ? p.hosts.err : p.states.err;
	if (!rc) {
		json_object_begin(j);
		json_kv_string(j, "schema", "tracer.web.runs.v1");
		json_kv_u64(j, "matching", p.n);
		json_key(j, "runs");
		json_array_begin(j);
		for (size_t k = 0; !rc && k < p.n && k < limit; k++) { /* newest first */
			struct one_run o = { .j = j };

			rc = by_id(st, p.ids[p.n - 1 - k], runs_item, &o);
			if (rc == API_E_NOT_FOUND) /* gone since the first pass (cannot happen: nothing deletes) */
				rc = 0;
		}
		json_array_end(j);
		json_key(j, "filters");
		json_object_begin(j);
		distinct_json(j, "pipelines", &p.pipelines);
		distinct_json(j, "hosts", &p.hosts);
		distinct_json(j, "states", &p.states);
		json_kv_bool(j, "complete", !p.pipelines.full && !p.hosts.full && !p.states.full);
		json_object_end(j);
		json_object_end(j);
	}
	free(p.ids);
	distinct_free(&p.pipelines);
	distinct_free(&p.hosts);
	distinct_free(&p.states);
	return rc;
}

/* ---- /api/runs/ID ---------------------------------------------------------------- */

struct run_find {
	struct one_run o;
	char *pipeline;
	int err;
};

static int run_note(void *ctx, const struct store_run *r)
{
	struct run_find *f = ctx;

	if (r->run_id != f->o.id || f->o.found)
		return 0;
	f->o.found = true;
	if (r->pipeline && !(f->pipeline = strdup(r->pipeline)))
		f->err = -ENOMEM;
	return 0;
}

struct run_write {
	struct one_run o;
	struct store *st;
	const struct run_tune *rt;
	int rc;
};

static int run_write(void *ctx, const struct store_run *r)
{
	struct run_write *w = ctx;

	if (r->run_id != w->o.id || w->o.found)
		return 0;
	w->o.found = true;
	w->rc = run_json_write(w->st, r, w->rt, w->o.j);
	return 0;
}

int api_run(struct store *st, struct json *j, int64_t run_id)
{
	struct run_find f = { 0 };
	struct run_write w = { .o.j = j, .st = st };
	struct run_tune rt;
	char err[512];
	int rc = by_id(st, run_id, run_note, &f.o);

	if (!rc)
		rc = f.err;
	if (rc) {
		free(f.pipeline);
		return rc;
	}
	/* The analysis first, as tracer report does: its reads end before the run's own begin. */
	if (run_tune_load(st, run_id, f.pipeline, &rt, err, sizeof(err))) {
		fprintf(stderr, "<4>run %" PRId64 ": its analysis is left out: %s\n", run_id, err);
		run_tune_free(&rt);
		memset(&rt, 0, sizeof(rt));
		rt.run = -1;
	}
	w.rt = &rt;
	rc = by_id(st, run_id, run_write, &w.o);
	run_tune_free(&rt);
	free(f.pipeline);
	return rc ? rc : w.rc;
}

int api_run_page(struct store *st, struct obuf *o, int64_t run_id)
{
	struct obuf report;
	struct json j;
	char err[256];
	int rc;

	obuf_init_mem(&report, API_REPORT_MAX);
	json_init(&j, &report);
	rc = api_run(st, &j, run_id);
	if (!rc && report.err)
		rc = report.err;
	if (!rc && html_data_write(o, report.buf ? report.buf : "", report.len, err, sizeof(err))) {
		/* The lake's own report, refused by the page's reader: a bug, not the host's input. */
		fprintf(stderr, "<3>run %" PRId64 ": its page data cannot be made: %s\n", run_id, err);
		rc = -EIO;
	}
	obuf_free(&report);
	return rc;
}

/* ---- the event stream's view of a run --------------------------------------------- */

struct status_find {
	struct one_run o;
	struct api_run_status *s;
};

static int status_note(void *ctx, const struct store_run *r)
{
	struct status_find *f = ctx;

	if (r->run_id != f->o.id || f->o.found)
		return 0;
	f->o.found = true;
	f->s->run_id = r->run_id;
	snprintf(f->s->state, sizeof(f->s->state), "%s", r->state ? r->state : "");
	f->s->update_seq = r->update_seq;
	f->s->last_update_ns = r->last_update_ns;
	f->s->processes = r->processes;
	f->s->steps = r->steps;
	f->s->end_ns = r->end_ns;
	f->s->final = final_state(r->state);
	return 0;
}

int api_run_status(struct store *st, int64_t run_id, struct api_run_status *s)
{
	struct status_find f = { .s = s };

	memset(s, 0, sizeof(*s));
	return by_id(st, run_id, status_note, &f.o);
}

static bool int_same(struct store_int a, struct store_int b)
{
	return a.known == b.known && (!a.known || a.v == b.v);
}

bool api_run_status_same(const struct api_run_status *a, const struct api_run_status *b)
{
	return a->run_id == b->run_id && !strcmp(a->state, b->state) && int_same(a->update_seq, b->update_seq) &&
	       int_same(a->last_update_ns, b->last_update_ns) && int_same(a->processes, b->processes) &&
	       int_same(a->steps, b->steps) && int_same(a->end_ns, b->end_ns);
}

void api_run_status_json(struct json *j, const struct api_run_status *s)
{
	json_object_begin(j);
	json_key(j, "run_id");
	json_i64(j, s->run_id);
	json_kv_string(j, "state", s->state);
	kv_int(j, "update_seq", s->update_seq);
	kv_int(j, "last_update_ns", s->last_update_ns);
	kv_int(j, "processes", s->processes);
	kv_int(j, "steps", s->steps);
	kv_int(j, "end_ns", s->end_ns);
	json_kv_bool(j, "final", s->final);
	json_object_end(j);
}

/* ---- /api/pipelines ---------------------------------------------------------------- */

struct pipe_row {
	int64_t runs, last_run_id;
	struct store_int last_start_ns;
	char last_state[16];
};

struct pipes {
	struct distinct names;
	struct pipe_row *rows;
	int err;
};

static int pipes_collect(void *ctx, const struct store_run *r)
{
	struct pipes *p = ctx;
	long i = distinct_add(&p->names, r->pipeline);
	struct pipe_row *row;

	if (i < 0)
		return p->names.err ? 1 : 0;
	if ((size_t)i == p->names.n - 1 && !p->rows[i].runs) {
		/* new: rows grown with names, one spare kept zeroed */
	}
	row = &p->rows[i];
	row->runs++;
	if (!row->last_start_ns.known || (r->start_ns.known && r->start_ns.v >= row->last_start_ns.v)) {
		row->last_run_id = r->run_id;
		row->last_start_ns = r->start_ns;
		snprintf(row->last_state, sizeof(row->last_state), "%s", r->state ? r->state : "");
	}
	return 0;
}

int api_pipelines(struct store *st, struct json *j)
{
	struct pipes p = { .names.max = API_FILTER_VALUES };
	int rc;

	p.rows = calloc(API_FILTER_VALUES, sizeof(*p.rows));
	if (!p.rows)
		return -ENOMEM;
	rc = store_runs(st, pipes_collect, &p);
	if (!rc && p.names.err)
		rc = p.names.err;
	if (!rc) {
		json_object_begin(j);
		json_kv_string(j, "schema", "tracer.web.pipelines.v1");
		json_kv_bool(j, "complete", !p.names.full);
		json_key(j, "pipelines");
		json_array_begin(j);
		for (size_t i = 0; i < p.names.n; i++) {
			json_object_begin(j);
			json_kv_string(j, "pipeline", p.names.v[i]);
			json_kv_u64(j, "runs", (uint64_t)p.rows[i].runs);
			json_key(j, "last_run_id");
			json_i64(j, p.rows[i].last_run_id);
			kv_int(j, "last_start_ns", p.rows[i].last_start_ns);
			json_kv_string(j, "last_state", p.rows[i].last_state);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	free(p.rows);
	distinct_free(&p.names);
	return rc;
}

/* ---- /api/pipeline?name=P ------------------------------------------------------------ */

static void history_run(struct json *j, const struct tune_input *ti, size_t k)
{
	const struct an_run *r = &ti->in.runs[k];
	struct an_slow *slow = NULL;
	size_t nslow = 0;

	json_object_begin(j);
	json_key(j, "run_id");
	json_i64(j, r->lake_id);
	json_key(j, "start_ns");
	json_i64(j, r->start_ns);
	json_key(j, "end_ns");
	if (r->end_ns > 0)
		json_i64(j, r->end_ns);
	else
		json_null(j);
	json_kv_double(j, "duration_s", r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) / NS_PER_S : NAN);
	json_kv_string(j, "state", r->state);
	json_kv_string(j, "host", r->host.host_id);
	json_kv_string(j, "label", r->label);
	json_key(j, "slower");
	json_array_begin(j);
	if (r->end_ns > 0 && !an_slower(&ti->in, (uint32_t)k, RUN_TUNE_WINDOW, &slow, &nslow)) {
		for (size_t i = 0; i < nslow; i++) {
			json_object_begin(j);
			json_kv_string(j, "step", ti->in.steps[slow[i].step].name);
			json_kv_double(j, "duration_s", slow[i].duration_s);
			json_kv_double(j, "median_s", slow[i].median_s);
			json_kv_double(j, "ratio", slow[i].ratio);
			json_kv_string(j, "cause", slow[i].cause);
			json_kv_string(j, "detail", slow[i].why);
			json_object_end(j);
		}
	}
	free(slow);
	json_array_end(j);
	json_object_end(j);
}

static void recommendations(struct json *j, const struct an_profile *p, size_t n)
{
	json_key(j, "recommendations");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		bool known = p[i].advice.confidence != RS_NONE;

		json_object_begin(j);
		json_kv_string(j, "step", p[i].name);
		json_kv_u64(j, "runs", p[i].runs);
		json_kv_string(j, "class", an_class_name(p[i].class_));
		json_kv_string(j, "confidence", rs_confidence_name(p[i].advice.confidence));
		json_kv_u64_or_null(j, "cpus", known, p[i].advice.cpus);
		json_kv_u64_or_null(j, "memory_bytes", known, p[i].advice.memory_bytes);
		json_kv_double(j, "time_s", known ? p[i].advice.time_s : NAN);
		json_object_end(j);
	}
	json_array_end(j);
}

int api_pipeline(struct store *st, struct json *j, const char *name)
{
	struct tune_input ti;
	struct an_profile *prof = NULL;
	size_t nprof = 0;
	char err[512];
	int rc;

	if (!name || !*name)
		return API_E_NOT_FOUND;
	/* The newest runs and, for the oldest of them, the history they are compared with. */
	if (tune_input_load(st, name, API_HISTORY_RUNS + RUN_TUNE_WINDOW, &ti, err, sizeof(err))) {
		fprintf(stderr, "<3>pipeline history: %s\n", err);
		tune_input_free(&ti);
		return STORE_E_SQL;
	}
	if (!ti.in.nruns) {
		tune_input_free(&ti);
		return API_E_NOT_FOUND;
	}
	rc = an_profiles(&ti.in, name, RUN_TUNE_WINDOW, &prof, &nprof);
	if (!rc) {
		size_t first = ti.in.nruns > API_HISTORY_RUNS ? ti.in.nruns - API_HISTORY_RUNS : 0;

		json_object_begin(j);
		json_kv_string(j, "schema", "tracer.web.pipeline.v1");
		json_kv_string(j, "pipeline", name);
		json_kv_u64(j, "window_runs", RUN_TUNE_WINDOW);
		json_key(j, "runs");
		json_array_begin(j);
		for (size_t k = first; k < ti.in.nruns; k++)
			history_run(j, &ti, k);
		json_array_end(j);
		recommendations(j, prof, nprof);
		json_object_end(j);
	}
	free(prof);
	tune_input_free(&ti);
	return rc;
}

/* ---- /api/hosts ------------------------------------------------------------------------ */

struct hosts_out {
	struct json *j;
	int64_t now_ns;
};

static void kv_seconds(struct json *j, const char *key, struct store_int ns)
{
	json_kv_double(j, key, ns.known ? (double)ns.v / NS_PER_S : NAN);
}

static int host_json(void *ctx, const struct store_host *h)
{
	struct hosts_out *o = ctx;
	struct json *j = o->j;

	json_object_begin(j);
	json_kv_string(j, "host", h->host_id);
	kv_int(j, "first_seen_ns", h->first_seen_ns);
	kv_int(j, "last_seen_ns", h->last_seen_ns);
	kv_seconds(j, "silent_s", (struct store_int){ .known = h->last_seen_ns.known, .v = o->now_ns - h->last_seen_ns.v });
	kv_seconds(j, "lag_s", h->lag_ns);
	kv_int(j, "batches", h->batches);
	kv_int(j, "records", h->records);
	kv_int(j, "gaps", h->gaps_open);
	kv_int(j, "missing_records", h->missing_records);
	kv_int(j, "kernel_drops", h->kernel_drops);
	kv_int(j, "ring_drops", h->ring_drops);
	json_key(j, "losses");
	json_object_begin(j);
	kv_int(j, "evicted", h->lost_evicted);
	kv_int(j, "quarantined", h->lost_quarantined);
	kv_int(j, "corrupt", h->lost_corrupt);
	kv_int(j, "ring", h->lost_ring);
	json_object_end(j);
	kv_int(j, "runs", h->runs);
	kv_int(j, "running_runs", h->running_runs);
	json_kv_string(j, "cloud", h->cloud);
	json_kv_string(j, "instance_type", h->instance_type);
	json_kv_string(j, "region", h->region);
	kv_int(j, "cpus", h->cpus);
	kv_int(j, "memory_bytes", h->memory_bytes);
	json_object_end(j);
	return 0;
}

int api_hosts(struct store *st, struct json *j, int64_t now_ns)
{
	struct hosts_out o = { j, now_ns };
	int rc;

	json_object_begin(j);
	json_kv_string(j, "schema", "tracer.web.hosts.v1");
	json_key(j, "now_ns");
	json_i64(j, now_ns);
	json_key(j, "hosts");
	json_array_begin(j);
	rc = store_hosts(st, host_json, &o);
	json_array_end(j);
	json_object_end(j);
	return rc;
}

/* ---- /api/hosts/activity ------------------------------------------------------------ */

/*
 * Consecutive beats of one host, summed: a beat alone, or a bucket of them
 * once there are more than API_ACTIVITY_BEATS. Rates are averaged over the
 * time of the beats that had the figure (a gap inside a bucket counts for
 * nothing, as a missing beat does); the figures at a beat's end (memory,
 * runs, steps, processes, CPUs) are the largest of its beats'.
 */
struct activity_bucket {
	int64_t start_ns, end_ns;
	size_t beats;
	double busy_ns, busy_span_ns;       /* CPU busy time, and the time of the beats that had it */
	double rx_bytes, rx_span_ns, tx_bytes, tx_span_ns;
	struct store_int cpus, mem_used, mem_total, runs, steps, processes;
};

struct activity {
	const char *host;
	struct activity_bucket *b;          /* API_ACTIVITY_BEATS */
	size_t n;                           /* in use */
	size_t per;                         /* beats a bucket holds: 1, 2, 4, ... */
	bool found;                         /* the host has a beat in the lake */
	uint64_t cpu_clamped, mem_clamped;  /* beats that said more than the host has, clamped to it */
};

#define ACTIVITY_DONE 1                 /* a callback's stop: past the host's beats (store_err are < 0) */
_Static_assert(API_ACTIVITY_BEATS % 2 == 0, "a full activity merges in pairs, none left over");

static struct store_int int_max(struct store_int a, struct store_int b)
{
	if (!a.known || (b.known && b.v > a.v))
		return b;
	return a;
}

static void bucket_add(struct activity_bucket *a, const struct activity_bucket *b)
{
	a->end_ns = b->end_ns > a->end_ns ? b->end_ns : a->end_ns;
	a->beats += b->beats;
	a->busy_ns += b->busy_ns;
	a->busy_span_ns += b->busy_span_ns;
	a->rx_bytes += b->rx_bytes;
	a->rx_span_ns += b->rx_span_ns;
	a->tx_bytes += b->tx_bytes;
	a->tx_span_ns += b->tx_span_ns;
	a->cpus = int_max(a->cpus, b->cpus);
	a->mem_used = int_max(a->mem_used, b->mem_used);
	a->mem_total = int_max(a->mem_total, b->mem_total);
	a->runs = int_max(a->runs, b->runs);
	a->steps = int_max(a->steps, b->steps);
	a->processes = int_max(a->processes, b->processes);
}

/*
 * One beat, within its host (docs/web.md): its busy time no more than its
 * online CPUs over its interval (the interval is timed apart from the
 * readings of /proc/stat, and the two jitter), its memory used no more
 * than its total. Each beat clamped is counted in *cpu_clamped or
 * *mem_clamped, which the chart's legend reports. A beat that does not say
 * its CPUs or its total is not clamped: there is nothing known to clamp to.
 */
static void bucket_of_beat(struct activity_bucket *a, const struct store_beat *b, uint64_t *cpu_clamped,
			   uint64_t *mem_clamped)
{
	double span = (double)(b->end_ns - b->start_ns);

	memset(a, 0, sizeof(*a));
	a->start_ns = b->start_ns;
	a->end_ns = b->end_ns;
	a->beats = 1;
	if (b->cpu_busy_ns.known) {
		a->busy_ns = (double)b->cpu_busy_ns.v;
		a->busy_span_ns = span;
		if (b->cpus.known && b->cpus.v > 0 && a->busy_ns > (double)b->cpus.v * span) {
			a->busy_ns = (double)b->cpus.v * span;
			(*cpu_clamped)++;
		}
	}
	if (b->net_rx_bytes.known) {
		a->rx_bytes = (double)b->net_rx_bytes.v;
		a->rx_span_ns = span;
	}
	if (b->net_tx_bytes.known) {
		a->tx_bytes = (double)b->net_tx_bytes.v;
		a->tx_span_ns = span;
	}
	a->cpus = b->cpus;
	a->mem_used = b->mem_used_bytes;
	a->mem_total = b->mem_total_bytes;
	if (a->mem_used.known && a->mem_total.known && a->mem_total.v > 0 && a->mem_used.v > a->mem_total.v) {
		a->mem_used.v = a->mem_total.v;
		(*mem_clamped)++;
	}
	a->runs = b->runs;
	a->steps = b->steps;
	a->processes = b->processes;
}

/* The beats come by host, then start: the host's are one run of rows, and the walk stops after it. */
static int activity_beat(void *ctx, const struct store_beat *b)
{
	struct activity *a = ctx;
	struct activity_bucket one;
	int cmp = strcmp(b->host_id, a->host);

	if (cmp)
		return cmp > 0 ? ACTIVITY_DONE : 0;
	a->found = true;
	bucket_of_beat(&one, b, &a->cpu_clamped, &a->mem_clamped);
	if (a->n && a->b[a->n - 1].beats < a->per) {
		bucket_add(&a->b[a->n - 1], &one);
		return 0;
	}
	if (a->n == API_ACTIVITY_BEATS) { /* full: pairs become one, each bucket twice as many beats */
		for (size_t i = 0; i < a->n / 2; i++) {
			a->b[i] = a->b[2 * i];
			bucket_add(&a->b[i], &a->b[2 * i + 1]);
		}
		a->n /= 2;
		a->per *= 2;
	}
	a->b[a->n++] = one;
	return 0;
}

/* Whether the lake has any beat of the host (the window had none): the walk stops at the host's first. */
static int activity_exists(void *ctx, const struct store_beat *b)
{
	struct activity *a = ctx;
	int cmp = strcmp(b->host_id, a->host);

	if (!cmp)
		a->found = true;
	return cmp >= 0 ? ACTIVITY_DONE : 0;
}

static void kv_rate(struct json *j, const char *key, double amount, double span_ns)
{
	json_kv_double(j, key, span_ns > 0 ? amount / (span_ns / NS_PER_S) : NAN);
}

static void bucket_json(struct json *j, const struct activity_bucket *b)
{
	json_object_begin(j);
	json_key(j, "start_ns");
	json_i64(j, b->start_ns);
	json_key(j, "end_ns");
	json_i64(j, b->end_ns);
	json_kv_double(j, "cpu_cores", b->busy_span_ns > 0 ? b->busy_ns / b->busy_span_ns : NAN);
	kv_int(j, "cpus", b->cpus);
	kv_int(j, "mem_used_bytes", b->mem_used);
	kv_int(j, "mem_total_bytes", b->mem_total);
	kv_rate(j, "net_rx_bytes_per_s", b->rx_bytes, b->rx_span_ns);
	kv_rate(j, "net_tx_bytes_per_s", b->tx_bytes, b->tx_span_ns);
	kv_int(j, "runs", b->runs);
	kv_int(j, "steps", b->steps);
	kv_int(j, "processes", b->processes);
	json_object_end(j);
}

int api_host_activity(struct store *st, struct json *j, const char *host, int64_t window_ns)
{
	struct activity a = { .host = host, .per = 1 };
	int64_t now_ns;
	int rc;

	if (!host || !*host)
		return API_E_NOT_FOUND;
	rc = store_sweep_newest(st, &now_ns);
	if (rc)
		return rc == STORE_E_NOT_FOUND ? API_E_NOT_FOUND : rc;
	a.b = malloc(API_ACTIVITY_BEATS * sizeof(*a.b));
	if (!a.b)
		return -ENOMEM;
	rc = store_sweep_beats(st, now_ns - window_ns, activity_beat, &a);
	if (rc == ACTIVITY_DONE)
		rc = 0;
	if (!rc && !a.found) {
		rc = store_sweep_beats(st, INT64_MIN, activity_exists, &a);
		if (rc == ACTIVITY_DONE)
			rc = 0;
		if (!rc && !a.found)
			rc = API_E_NOT_FOUND;
	}
	if (!rc) {
		json_object_begin(j);
		json_kv_string(j, "schema", "tracer.web.activity.v1");
		json_kv_string(j, "host", host);
		json_key(j, "since_ns");
		json_i64(j, now_ns - window_ns);
		json_key(j, "now_ns");
		json_i64(j, now_ns);
		json_kv_bool(j, "bucketed", a.per > 1);
		json_kv_u64(j, "cpu_clamped", a.cpu_clamped);
		json_kv_u64(j, "mem_clamped", a.mem_clamped);
		json_key(j, "beats");
		json_array_begin(j);
		for (size_t i = 0; i < a.n; i++)
			bucket_json(j, &a.b[i]);
		json_array_end(j);
		json_object_end(j);
	}
	free(a.b);
	return rc;
}

/* ---- /api/sweep ------------------------------------------------------------------------- */

int api_sweep(struct store *st, struct json *j, const struct api_sweep *s, int64_t window_ns)
{
	struct sweep_input si;
	struct sw_finding *f = NULL;
	size_t n = 0;
	int64_t now_ns;
	char err[512];
	int rc = store_sweep_newest(st, &now_ns);

	if (rc)
		return rc == STORE_E_NOT_FOUND ? API_E_NOT_FOUND : rc;
	if (sweep_input_load(st, now_ns - window_ns, now_ns, &si, err, sizeof(err))) {
		fprintf(stderr, "<3>sweep: %s\n", err);
		sweep_input_free(&si);
		return STORE_E_SQL;
	}
	rc = sw_sweep(&si.in, &s->thresholds, s->table, &f, &n);
	if (rc == -EINVAL) { /* the lake's own input refused by the analysis: a bug, said once here */
		fprintf(stderr, "<3>sweep: the analysis refused its input from the lake\n");
		rc = -EIO;
	}
	if (!rc)
		sweep_json_write(j, &si, &s->thresholds, s->table ? s->prices_file : NULL, f, n);
	free(f);
	sweep_input_free(&si);
	return rc;
}

/* ---- /metrics ---------------------------------------------------------------------------- */

/*
 * Prometheus' text format 0.0.4, named after its conventions (docs/web.md, "/metrics"): base units, _total
 * on counters only, tracer_build_info. Every label's values are bounded: host ids (the fleet), states (a
 * fixed list), pipelines and step names capped (API_METRICS_*), le (the fixed buckets).
 */

#define RUN_TUNE_WINDOW_STR "20"
_Static_assert(RUN_TUNE_WINDOW == 20, "RUN_TUNE_WINDOW_STR");


struct metrics_out {
	struct obuf *o;
	int64_t now_ns;
	int pass;                /* which family this walk writes */
};

/* One sample: name{host="..."} value. Host ids are hex (the lake checks): no label escaping is needed. */
static void sample(struct obuf *o, const char *name, const char *host, double v)
{
	char line[256];
	int n;

	if (host)
		n = snprintf(line, sizeof(line), "%s{host=\"%s\"} %.17g\n", name, host, v);
	else
		n = snprintf(line, sizeof(line), "%s %.17g\n", name, v);
	if (n > 0 && (size_t)n < sizeof(line))
		obuf_put(o, line, (size_t)n);
}

static bool hex_id(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static const struct {
	const char *name, *help, *type;
} host_families[] = {
	{ "tracer_host_last_seen_seconds", "When the host's latest batch was stored (Unix time).", "gauge" },
	{ "tracer_host_silent_seconds", "Seconds since the host's latest batch was stored.", "gauge" },
	{ "tracer_host_lag_seconds", "The latest batch: stored minus signed (two clocks).", "gauge" },
	{ "tracer_host_batches_total", "Batches stored.", "counter" },
	{ "tracer_host_records_total", "Records stored.", "counter" },
	{ "tracer_host_missing_records", "Records in seq gaps not delivered (yet).", "gauge" },
	{ "tracer_host_kernel_drops_total", "Kernel-side drops since the host's collector started (resets with it).",
	  "counter" },
	{ "tracer_host_ring_drops_total", "Ring drops since the host's collector started (resets with it).",
	  "counter" },
	{ "tracer_host_lost_records_total", "Records the processor reported lost (evicted, quarantined, corrupt, "
	  "ring), summed.", "counter" },
	{ "tracer_host_running_runs", "Runs in state running.", "gauge" },
};

static double host_value(const struct store_host *h, int f, int64_t now_ns)
{
	switch (f) {
	case 0: return (double)h->last_seen_ns.v / NS_PER_S;
	case 1: return (double)(now_ns - h->last_seen_ns.v) / NS_PER_S;
	case 2: return h->lag_ns.known ? (double)h->lag_ns.v / NS_PER_S : NAN;
	case 3: return (double)h->batches.v;
	case 4: return (double)h->records.v;
	case 5: return (double)h->missing_records.v;
	case 6: return h->kernel_drops.known ? (double)h->kernel_drops.v : NAN;
	case 7: return h->ring_drops.known ? (double)h->ring_drops.v : NAN;
	case 8: return (double)(h->lost_evicted.v + h->lost_quarantined.v + h->lost_corrupt.v + h->lost_ring.v);
	default: return (double)h->running_runs.v;
	}
}

static int host_metric(void *ctx, const struct store_host *h)
{
	struct metrics_out *m = ctx;
	double v = host_value(h, m->pass, m->now_ns);

	if (hex_id(h->host_id) && !isnan(v))
		sample(m->o, host_families[m->pass].name, h->host_id, v);
	return 0;
}

static void family(struct obuf *o, const char *name, const char *help, const char *type)
{
	char line[320];
	int n = snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);

	if (n > 0 && (size_t)n < sizeof(line))
		obuf_put(o, line, (size_t)n);
}

/* ---- label values from hosts ---- */

/* The bytes of a valid UTF-8 sequence at s (at most n), 0 if none starts there. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		     (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp;

	if (!len || len > n)
		return 0;
	cp = len == 1 ? s[0] : s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, past Unicode, a surrogate */
	return len;
}

/* Not a table's hash (common/hash.h's are seeded per process): it names a series, the same on every scrape. */
static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/*
 * A label's value from a host (s, n bytes), as the text format wants it: backslash, double quote and newline
 * escaped, a byte that is not UTF-8 as U+FFFD. Longer than API_METRICS_LABEL_MAX bytes, or "other" (the
 * folded series' name): cut at a character's end and "~" and 8 hex digits of the whole name's hash added, so
 * that two names stay two series.
 */
static void label_value(struct obuf *o, const char *s, size_t n)
{
	bool mark = n > API_METRICS_LABEL_MAX || (n == 5 && !memcmp(s, "other", 5));
	size_t keep = n > API_METRICS_LABEL_MAX ? API_METRICS_LABEL_MAX : n;

	for (size_t i = 0; i < keep;) {
		size_t len = utf8_seq((const unsigned char *)s + i, n - i);

		if (len && i + len > keep)
			break;
		if (!len) {
			obuf_puts(o, "\xef\xbf\xbd");
			i++;
		} else if (s[i] == '\\') {
			obuf_puts(o, "\\\\");
		} else if (s[i] == '"') {
			obuf_puts(o, "\\\"");
		} else if (s[i] == '\n') {
			obuf_puts(o, "\\n");
		} else {
			obuf_put(o, s + i, len);
		}
		i += len ? len : 0;
	}
	if (mark)
		obuf_printf(o, "~%08" PRIx32, fnv1a(s, n));
}

/* pipeline="..." (NULL: the pipelines past the cap, "other") */
static void pipeline_label(struct obuf *o, const char *pipeline)
{
	obuf_puts(o, "pipeline=\"");
	if (pipeline)
		label_value(o, pipeline, strlen(pipeline));
	else
		obuf_puts(o, "other");
	obuf_putc(o, '"');
}

/* ---- per pipeline ---- */

struct step_series {
	char *name;              /* the step's name (a Nextflow task's without its hash and tag); NULL: "other" */
	size_t len;
	int64_t ended, le[STORE_WEB_BUCKETS];
	double sum_ns;
};

struct pipe_series {
	char *pipeline;          /* NULL: the others, or not seen */
	bool seen;
	int64_t steps_by_state[STORE_STEP_STATES];
	bool classed;            /* classes below from tracer tune's profiles of its newest runs */
	uint64_t classes[AN_CLASS_IDLE + 1];
	struct step_series *steps; /* API_METRICS_STEPS_MAX named, then one "other" */
	size_t nsteps;
	struct step_series other;
};

struct pipes_out {
	struct obuf *o;
	struct pipe_series p[STORE_WEB_PIPELINES_MAX + 1];
	int err;
};

static void step_add(struct step_series *s, const struct store_web_pipeline *w)
{
	s->ended += w->ended;
	for (int i = 0; i < STORE_WEB_BUCKETS; i++)
		s->le[i] += w->le[i];
	s->sum_ns += w->duration_sum_ns;
}

/* The series a step's row counts in: its name's, a new one while under the cap, else the pipeline's other. */
static struct step_series *step_of(struct pipes_out *po, struct pipe_series *p, const struct store_web_pipeline *w)
{
	const char *name = w->name ? w->name : "";
	size_t len;

	if (p == &po->p[STORE_WEB_PIPELINES_MAX])
		return &p->other; /* the pipelines past the cap: their steps as one */
	if (w->nextflow)
		name += tune_step_name_skip(name);
	len = w->nextflow ? tune_step_name_len(name) : strlen(name);
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].len == len && !memcmp(p->steps[i].name, name, len))
			return &p->steps[i];
	if (p->nsteps == API_METRICS_STEPS_MAX)
		return &p->other;
	if (!p->steps && !(p->steps = calloc(API_METRICS_STEPS_MAX, sizeof(*p->steps))))
		return NULL;
	if (!(p->steps[p->nsteps].name = strndup(name, len)))
		return NULL;
	p->steps[p->nsteps].len = len;
	return &p->steps[p->nsteps++];
}

static int pipeline_metric(void *ctx, const struct store_web_pipeline *w)
{
	struct pipes_out *po = ctx;
	struct pipe_series *p;
	struct step_series *s;

	if (w->rank < 1 || w->rank > STORE_WEB_PIPELINES_MAX + 1)
		return 0; /* the lake's SQL says not: never */
	p = &po->p[w->rank - 1];
	if (!p->seen) {
		p->seen = true;
		if (w->pipeline && !(p->pipeline = strdup(w->pipeline)))
			return po->err = -ENOMEM;
	}
	if (w->kind == STORE_WEB_RUNS) {
		obuf_puts(po->o, "tracer_pipeline_runs{");
		pipeline_label(po->o, p->pipeline);
		obuf_printf(po->o, ",state=\"%s\"} %" PRId64 "\n", w->state ? w->state : "other", w->runs);
		return 0;
	}
	for (int i = 0; i < STORE_STEP_STATES; i++)
		p->steps_by_state[i] += w->by_state[i];
	if (!w->ended)
		return 0;
	if (!(s = step_of(po, p, w)))
		return po->err = -ENOMEM;
	step_add(s, w);
	return 0;
}

static void duration_series(struct obuf *o, const struct pipe_series *p, const struct step_series *s)
{
	static const int bounds[STORE_WEB_BUCKETS] = STORE_WEB_BUCKET_BOUNDS;
	static const char *const suffix[] = { "_sum", "_count" };

	if (!s->ended)
		return;
	for (int i = 0; i <= STORE_WEB_BUCKETS + 2; i++) {
		if (i <= STORE_WEB_BUCKETS)
			obuf_puts(o, "tracer_step_duration_seconds_bucket{");
		else
			obuf_printf(o, "tracer_step_duration_seconds%s{", suffix[i - STORE_WEB_BUCKETS - 1]);
		pipeline_label(o, p->pipeline);
		obuf_puts(o, ",step=\"");
		if (s->name)
			label_value(o, s->name, s->len);
		else
			obuf_puts(o, "other");
		if (i < STORE_WEB_BUCKETS)
			obuf_printf(o, "\",le=\"%d\"} %" PRId64 "\n", bounds[i], s->le[i]);
		else if (i == STORE_WEB_BUCKETS)
			obuf_printf(o, "\",le=\"+Inf\"} %" PRId64 "\n", s->ended);
		else if (i == STORE_WEB_BUCKETS + 1)
			obuf_printf(o, "\"} %.17g\n", s->sum_ns / NS_PER_S);
		else
			obuf_printf(o, "\"} %" PRId64 "\n", s->ended);
	}
}

/*
 * A pipeline's ended steps of its newest RUN_TUNE_WINDOW runs by their step's class: the profiles tracer tune
 * and the pipeline page make (analysis/profile.c), each one's tasks in its class. One read of the pipeline's
 * runs, as /api/pipeline's; not for the pipelines past the cap, nor runs without a pipeline.
 */
static int pipe_classes(struct store *st, struct pipe_series *p)
{
	struct tune_input ti;
	struct an_profile *prof = NULL;
	size_t nprof = 0;
	char err[512];
	int rc;

	if (!p->pipeline || !*p->pipeline)
		return 0;
	if (tune_input_load(st, p->pipeline, RUN_TUNE_WINDOW, &ti, err, sizeof(err))) {
		fprintf(stderr, "<3>metrics: %s\n", err);
		tune_input_free(&ti);
		return STORE_E_SQL;
	}
	rc = an_profiles(&ti.in, p->pipeline, RUN_TUNE_WINDOW, &prof, &nprof);
	if (rc == -EINVAL) { /* the lake's own input refused by the analysis: a bug, said once here */
		fprintf(stderr, "<3>metrics: the analysis refused its input from the lake\n");
		rc = -EIO;
	}
	for (size_t i = 0; !rc && i < nprof; i++)
		if (prof[i].class_ <= AN_CLASS_IDLE)
			p->classes[prof[i].class_] += prof[i].tasks;
	p->classed = !rc;
	free(prof);
	tune_input_free(&ti);
	return rc;
}

static void pipes_write(struct pipes_out *po)
{
	static const char *const states[STORE_STEP_STATES] = { "running", "succeeded", "failed", "lost", "other" };

	family(po->o, "tracer_pipeline_steps", "Steps of the pipeline's runs by state.", "gauge");
	for (size_t k = 0; k <= STORE_WEB_PIPELINES_MAX; k++) {
		if (!po->p[k].seen)
			continue;
		for (int i = 0; i < STORE_STEP_STATES; i++) {
			obuf_puts(po->o, "tracer_pipeline_steps{");
			pipeline_label(po->o, po->p[k].pipeline);
			obuf_printf(po->o, ",state=\"%s\"} %" PRId64 "\n", states[i], po->p[k].steps_by_state[i]);
		}
	}
	family(po->o, "tracer_pipeline_class_steps", "Ended steps of the pipeline's newest " RUN_TUNE_WINDOW_STR
	       " runs by their step's class (tracer tune's).", "gauge");
	for (size_t k = 0; k < STORE_WEB_PIPELINES_MAX; k++) {
		if (!po->p[k].classed)
			continue;
		for (int c = 0; c <= AN_CLASS_IDLE; c++) {
			obuf_puts(po->o, "tracer_pipeline_class_steps{");
			pipeline_label(po->o, po->p[k].pipeline);
			obuf_printf(po->o, ",class=\"%s\"} %" PRIu64 "\n", an_class_name((enum an_class)c),
				    po->p[k].classes[c]);
		}
	}
	family(po->o, "tracer_step_duration_seconds", "Ended steps' durations (end minus start) by pipeline and "
	       "step name.", "histogram");
	for (size_t k = 0; k <= STORE_WEB_PIPELINES_MAX; k++) {
		for (size_t i = 0; i < po->p[k].nsteps; i++)
			duration_series(po->o, &po->p[k], &po->p[k].steps[i]);
		duration_series(po->o, &po->p[k], &po->p[k].other);
	}
}

static void pipes_free(struct pipes_out *po)
{
	for (size_t k = 0; k <= STORE_WEB_PIPELINES_MAX; k++) {
		for (size_t i = 0; i < po->p[k].nsteps; i++)
			free(po->p[k].steps[i].name);
		free(po->p[k].steps);
		free(po->p[k].pipeline);
	}
}

static int pipeline_metrics(struct store *st, struct obuf *o)
{
	struct pipes_out po = { .o = o };
	int rc;

	family(o, "tracer_pipeline_runs", "Runs of the pipeline by state.", "gauge");
	rc = store_web_pipelines(st, pipeline_metric, &po);
	if (!rc)
		rc = po.err;
	for (size_t k = 0; !rc && k < STORE_WEB_PIPELINES_MAX; k++)
		if (po.p[k].seen)
			rc = pipe_classes(st, &po.p[k]);
	if (!rc)
		pipes_write(&po);
	pipes_free(&po);
	return rc;
}

static void build_info(struct obuf *o)
{
	family(o, "tracer_build_info", "tracer-web's version and commit; always 1.", "gauge");
	obuf_puts(o, "tracer_build_info{version=\"");
	label_value(o, tracer_version, strlen(tracer_version));
	obuf_puts(o, "\",commit=\"");
	label_value(o, tracer_commit, strlen(tracer_commit));
	obuf_puts(o, "\"} 1\n");
}

int api_metrics(struct store *st, struct obuf *o, const struct api_web_stats *w, int64_t now_ns)
{
	struct metrics_out m = { o, now_ns, 0 };
	struct store_counts c;
	int rc = store_counts(st, &c);

	if (rc)
		return rc;
	build_info(o);
	for (m.pass = 0; !rc && m.pass < (int)(sizeof(host_families) / sizeof(host_families[0])); m.pass++) {
		family(o, host_families[m.pass].name, host_families[m.pass].help, host_families[m.pass].type);
		rc = store_hosts(st, host_metric, &m);
	}
	if (!rc)
		rc = pipeline_metrics(st, o);
	if (rc)
		return rc;
	family(o, "tracer_lake_hosts", "Hosts that sent a stored batch.", "gauge");
	sample(o, "tracer_lake_hosts", NULL, (double)c.hosts);
	family(o, "tracer_lake_batches_total", "Batches stored.", "counter");
	sample(o, "tracer_lake_batches_total", NULL, (double)c.batches);
	family(o, "tracer_lake_records_total", "Records stored.", "counter");
	sample(o, "tracer_lake_records_total", NULL, (double)c.records);
	family(o, "tracer_lake_runs", "Runs by state.", "gauge");
	obuf_printf(o, "tracer_lake_runs{state=\"running\"} %" PRId64 "\n", c.runs_running);
	obuf_printf(o, "tracer_lake_runs{state=\"succeeded\"} %" PRId64 "\n", c.runs_succeeded);
	obuf_printf(o, "tracer_lake_runs{state=\"failed\"} %" PRId64 "\n", c.runs_failed);
	obuf_printf(o, "tracer_lake_runs{state=\"other\"} %" PRId64 "\n",
		    c.runs - c.runs_running - c.runs_succeeded - c.runs_failed);
	family(o, "tracer_lake_processes", "Processes stored.", "gauge");
	sample(o, "tracer_lake_processes", NULL, (double)c.processes);
	family(o, "tracer_lake_signals", "Signals stored.", "gauge");
	sample(o, "tracer_lake_signals", NULL, (double)c.signals);
	family(o, "tracer_web_requests_total", "Requests served, any answer.", "counter");
	sample(o, "tracer_web_requests_total", NULL, (double)w->requests);
	family(o, "tracer_web_refused_total", "Requests refused: no token (401) or a wrong one (403).", "counter");
	obuf_printf(o, "tracer_web_refused_total{code=\"401\"} %" PRIu64 "\n", w->unauthorized);
	obuf_printf(o, "tracer_web_refused_total{code=\"403\"} %" PRIu64 "\n", w->forbidden);
	family(o, "tracer_web_errors_total", "Requests answered 500 (the lake failed).", "counter");
	sample(o, "tracer_web_errors_total", NULL, (double)w->errors);
	family(o, "tracer_web_streams", "Event streams open.", "gauge");
	sample(o, "tracer_web_streams", NULL, (double)w->streams_open);
	return 0;
}
