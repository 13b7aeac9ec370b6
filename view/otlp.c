/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A run as an OTLP trace (view/otlp.h), written as the OTLP/HTTP JSON
 * encoding wants it: trace and span ids as lowercase hex, 64-bit integers
 * (times, intValue) as decimal strings, enums (kind, status code) as
 * integers, field names in lowerCamelCase.
 *
 * The processes are read once, in start order, and written as they come;
 * a request is sent whenever it holds spans_per_request spans, so that a
 * run of a million processes never has to fit in memory. The steps are
 * read first (a process's parent is its step's span, when the run has
 * that step) and written after the processes, then the root: an event
 * goes to the process it names (pid and start), else to its step, else to
 * the root, and what has not found a process is known only once they are
 * all read.
 */
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cputime.h"
#include "json_parse.h"
#include "otlp.h"
#include "run_tune.h"

#define OTLP_HOSTS_MAX 8     /* resources in one request; a ninth host's span sends the request first */
#define SPAN_KIND_INTERNAL 1 /* opentelemetry.proto.trace.v1.Span.SpanKind */
#define STATUS_CODE_ERROR 2  /* opentelemetry.proto.trace.v1.Status.StatusCode */
#define ARGV_NODES 4096      /* a command line with more words is sent without them */

/* ---- ids ----------------------------------------------------------------------------------- */

static void hash_into(uint8_t *out, size_t outlen, const char *domain, const void *a, size_t alen, const void *b,
		      size_t blen)
{
	crypto_generichash_state h;

	crypto_generichash_init(&h, NULL, 0, outlen);
	crypto_generichash_update(&h, (const unsigned char *)domain, strlen(domain) + 1);
	crypto_generichash_update(&h, a, alen);
	if (b)
		crypto_generichash_update(&h, b, blen);
	crypto_generichash_final(&h, out, outlen);
	out[outlen - 1] |= out[0] ? 0 : 1; /* an all-zero id is invalid in OTLP: the first byte alone cannot be */
}

void otlp_trace_id(const struct store_run *r, uint8_t id[OTLP_TRACE_ID_LEN])
{
	char who[512];
	int n;

	if (r->run_key && *r->run_key)
		n = snprintf(who, sizeof(who), "%s/%s", r->host_id, r->run_key);
	else /* a run known only from its report: its host, start, root and command identify it */
		n = snprintf(who, sizeof(who), "%s/%" PRId64 "/%" PRId64 "/%s", r->host_id, r->start_ns.v,
			     r->root_pid.v, r->command ? r->command : "");
	hash_into(id, OTLP_TRACE_ID_LEN, "tracer.otlp.trace", who, n < 0 ? 0 : strnlen(who, sizeof(who)), NULL, 0);
}

static void step_span_id(const uint8_t trace[OTLP_TRACE_ID_LEN], const char *step, uint8_t id[OTLP_SPAN_ID_LEN])
{
	hash_into(id, OTLP_SPAN_ID_LEN, "tracer.otlp.step", trace, OTLP_TRACE_ID_LEN, step, strlen(step));
}

static void root_span_id(const uint8_t trace[OTLP_TRACE_ID_LEN], uint8_t id[OTLP_SPAN_ID_LEN])
{
	hash_into(id, OTLP_SPAN_ID_LEN, "tracer.otlp.run", trace, OTLP_TRACE_ID_LEN, NULL, 0);
}

static void process_span_id(const uint8_t trace[OTLP_TRACE_ID_LEN], const struct store_process *p,
			    uint8_t id[OTLP_SPAN_ID_LEN])
{
	char who[160];
	int n = snprintf(who, sizeof(who), "%s/%s/%" PRId64 "/%" PRId64, p->host_id, p->boot_id, p->tgid,
			 p->start_ns);

	hash_into(id, OTLP_SPAN_ID_LEN, "tracer.otlp.process", trace, OTLP_TRACE_ID_LEN, who,
		  n < 0 ? 0 : strnlen(who, sizeof(who)));
}

const char *otlp_result(const char *state)
{
	if (!state || !strcmp(state, "running"))
		return NULL;
	if (!strcmp(state, "succeeded"))
		return "success";
	if (!strcmp(state, "failed"))
		return "failure";
	return "error"; /* lost: it ended, how is not known */
}

/* ---- attribute writers ----------------------------------------------------------------------- */

static void kv_hex(struct json *j, const char *key, const uint8_t *id, size_t n)
{
	char hex[2 * OTLP_TRACE_ID_LEN + 1];

	sodium_bin2hex(hex, sizeof(hex), id, n);
	json_kv_string(j, key, hex);
}

static void kv_time(struct json *j, const char *key, int64_t ns)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, ns > 0 ? ns : 0);
	json_kv_string(j, key, s);
}

static void attr_begin(struct json *j, const char *key)
{
	json_object_begin(j);
	json_kv_string(j, "key", key);
	json_key(j, "value");
	json_object_begin(j);
}

static void attr_end(struct json *j)
{
	json_object_end(j);
	json_object_end(j);
}

static void attr_str(struct json *j, const char *key, const char *v)
{
	if (!v)
		return;
	attr_begin(j, key);
	json_kv_string(j, "stringValue", v);
	attr_end(j);
}

static void attr_i64(struct json *j, const char *key, int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, v);
	attr_begin(j, key);
	json_kv_string(j, "intValue", s);
	attr_end(j);
}

static void attr_int(struct json *j, const char *key, struct store_int v)
{
	if (v.known)
		attr_i64(j, key, v.v);
}

static void attr_bool(struct json *j, const char *key, bool v)
{
	attr_begin(j, key);
	json_kv_bool(j, "boolValue", v);
	attr_end(j);
}

static void attr_double(struct json *j, const char *key, double v)
{
	attr_begin(j, key);
	json_kv_double(j, "doubleValue", v);
	attr_end(j);
}

/* A JSON array of strings the lake holds (json_valid), as an arrayValue of stringValues; nothing if it is not. */
static void attr_string_array(struct json *j, const char *key, const char *text)
{
	static struct json_node nodes[ARGV_NODES];
	struct json_doc d;
	const struct json_node *root, *e;

	if (!text || json_parse(&d, text, strlen(text), nodes, ARGV_NODES) || !(root = json_root(&d)) ||
	    root->type != JSON_ARRAY)
		return;
	for (e = json_first(&d, root); e; e = json_next(&d, e))
		if (e->type != JSON_STRING)
			return;
	attr_begin(j, key);
	json_key(j, "arrayValue");
	json_object_begin(j);
	json_key(j, "values");
	json_array_begin(j);
	for (e = json_first(&d, root); e; e = json_next(&d, e)) {
		json_object_begin(j);
		json_key(j, "stringValue");
		json_raw(j, text + e->start - 1, (size_t)e->len + 2); /* the string as written, quotes included */
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
	attr_end(j);
}

/* ---- requests ---------------------------------------------------------------------------------- */

struct bucket {
	char host_id[2 * BATCH_HOST_ID_LEN + 1];
	char *host_name;            /* malloc'd; NULL: unknown */
	struct obuf spans;          /* span objects, comma-separated */
	size_t n;
};

/* A row kept beyond its callback: the row, its strings pointing into own[]. */
#define OWN_MAX 8

struct kept_step {
	struct store_step s;
	char *own[OWN_MAX];
};

struct kept_signal {
	struct store_signal s;
	char *own[OWN_MAX];
};

struct export {
	const struct store_run *r;
	const struct otlp_options *o;
	otlp_request_fn fn;
	void *ctx;
	uint8_t trace[OTLP_TRACE_ID_LEN], root[OTLP_SPAN_ID_LEN];
	struct bucket b[OTLP_HOSTS_MAX];
	size_t nb, spans;
	int rc;                     /* the first failure */
	/* The steps (read first) and the signals, with which of them found their span. */
	struct kept_step *steps;
	size_t nsteps;
	struct kept_signal *sigs;
	bool *sig_used;
	size_t nsigs;
	struct run_tune rt;
	bool have_rt;
};

static void write_resource(struct obuf *o, const struct export *x, const struct bucket *b)
{
	struct json j;
	const struct store_run *r = x->r;
	bool own = !strcmp(b->host_id, r->host_id);

	json_init(&j, o);
	json_object_begin(&j);
	json_key(&j, "attributes");
	json_array_begin(&j);
	attr_str(&j, "service.name", "tracer");
	attr_str(&j, "host.id", b->host_id);
	attr_str(&j, "host.name", own ? r->host_name : b->host_name);
	if (own) {
		attr_str(&j, "host.type", r->host_instance_type);
		attr_str(&j, "cloud.provider", r->host_cloud);
		attr_str(&j, "cloud.region", r->host_region);
		attr_str(&j, "cloud.resource_id", r->host_instance_id);
		if (r->host_cpus.known && r->host_cpus.v > 0)
			attr_i64(&j, "tracer.host.cpus", r->host_cpus.v);
		if (r->host_memory_bytes.known && r->host_memory_bytes.v > 0)
			attr_i64(&j, "tracer.host.memory_bytes", r->host_memory_bytes.v);
	}
	json_array_end(&j);
	json_object_end(&j);
}

/* Send what the buckets hold as one ExportTraceServiceRequest, and empty them. */
static int flush(struct export *x)
{
	struct obuf o;
	struct json j;

	if (x->rc || !x->spans)
		return x->rc;
	obuf_init_mem(&o, SIZE_MAX / 2);
	json_init(&j, &o);
	obuf_puts(&o, "{\"resourceSpans\":[");
	for (size_t i = 0; i < x->nb; i++) {
		struct bucket *b = &x->b[i];

		if (!b->n)
			continue;
		obuf_puts(&o, i ? ",{\"resource\":" : "{\"resource\":");
		write_resource(&o, x, b);
		obuf_puts(&o, ",\"scopeSpans\":[{\"scope\":{\"name\":\"tracer\",\"version\":");
		json_put_string(&o, x->o->version ? x->o->version : "", strlen(x->o->version ? x->o->version : ""));
		obuf_puts(&o, "},\"spans\":[");
		obuf_put(&o, b->spans.buf, b->spans.len);
		obuf_puts(&o, "]}]}");
	}
	obuf_puts(&o, "]}");
	x->rc = o.err ? o.err : x->fn(x->ctx, o.buf, o.len, x->spans);
	obuf_free(&o);
	for (size_t i = 0; i < x->nb; i++) {
		obuf_free(&x->b[i].spans);
		free(x->b[i].host_name);
	}
	x->nb = 0;
	x->spans = 0;
	return x->rc;
}

/* The bucket of a host (a new one, after sending the request if all are taken). */
static struct bucket *bucket_of(struct export *x, const char *host_id, const char *host_name)
{
	size_t i;

	for (i = 0; i < x->nb; i++)
		if (!strcmp(x->b[i].host_id, host_id))
			return &x->b[i];
	if (x->nb == OTLP_HOSTS_MAX && flush(x))
		return NULL;
	i = x->nb++;
	memset(&x->b[i], 0, sizeof(x->b[i]));
	snprintf(x->b[i].host_id, sizeof(x->b[i].host_id), "%s", host_id);
	x->b[i].host_name = host_name ? strdup(host_name) : NULL;
	obuf_init_mem(&x->b[i].spans, SIZE_MAX / 2);
	return &x->b[i];
}

/* A span begins: its bucket's writer, after a comma when it is not the first. */
static struct bucket *span_begin(struct export *x, struct json *j, const char *host_id, const char *host_name)
{
	struct bucket *b;

	if (x->rc || !(b = bucket_of(x, host_id, host_name)))
		return NULL;
	if (b->n)
		obuf_putc(&b->spans, ',');
	json_init(j, &b->spans);
	json_object_begin(j);
	kv_hex(j, "traceId", x->trace, OTLP_TRACE_ID_LEN);
	return b;
}

static int span_end(struct export *x, struct json *j, struct bucket *b)
{
	json_object_end(j);
	if (b->spans.err)
		return x->rc = b->spans.err;
	b->n++;
	if (++x->spans >= (x->o->spans_per_request ? x->o->spans_per_request : OTLP_SPANS_PER_REQUEST))
		return flush(x);
	return 0;
}

static void span_times(struct json *j, int64_t start, int64_t end)
{
	kv_time(j, "startTimeUnixNano", start);
	kv_time(j, "endTimeUnixNano", end < start ? start : end);
}

static void span_error(struct json *j, const char *message)
{
	json_key(j, "status");
	json_object_begin(j);
	json_key(j, "code");
	json_i64(j, STATUS_CODE_ERROR);
	json_kv_string(j, "message", message);
	json_object_end(j);
}

/* ---- events ------------------------------------------------------------------------------------ */

/* A signal as a span event at time ns: its kind the name, its evidence (the lake's JSON object) an attribute. */
static void write_event(struct json *j, const struct store_signal *s, int64_t ns)
{
	json_object_begin(j);
	kv_time(j, "timeUnixNano", ns);
	json_kv_string(j, "name", s->kind ? s->kind : "signal");
	json_key(j, "attributes");
	json_array_begin(j);
	attr_str(j, "tracer.signal.source", s->source);
	attr_str(j, "tracer.signal.step", s->step);
	attr_str(j, "tracer.signal.tool", s->tool);
	if (s->has_pid)
		attr_i64(j, "process.pid", s->pid);
	attr_str(j, "tracer.signal.evidence", s->detail);
	json_array_end(j);
	json_object_end(j);
}

static void write_slow_events(struct json *j, struct export *x, const char *step_id, int64_t ns)
{
	for (size_t i = 0; x->have_rt && i < x->rt.nslow; i++) {
		const struct an_slow *s = &x->rt.slow[i];
		const struct an_step *t = &x->rt.ti.in.steps[s->step];

		if (step_id ? !t->step_id || strcmp(t->step_id, step_id) : true)
			continue;
		json_object_begin(j);
		kv_time(j, "timeUnixNano", ns);
		json_kv_string(j, "name", "slower_than_usual");
		json_key(j, "attributes");
		json_array_begin(j);
		attr_str(j, "tracer.signal.source", "analysis");
		attr_double(j, "tracer.slower.duration_s", s->duration_s);
		attr_double(j, "tracer.slower.median_s", s->median_s);
		attr_double(j, "tracer.slower.ratio", s->ratio);
		attr_str(j, "tracer.slower.cause", s->cause);
		attr_str(j, "tracer.signal.evidence", s->why);
		json_array_end(j);
		json_object_end(j);
	}
}

static bool has_slow(const struct export *x, const char *step_id)
{
	for (size_t i = 0; x->have_rt && i < x->rt.nslow; i++) {
		const struct an_step *t = &x->rt.ti.in.steps[x->rt.slow[i].step];

		if (t->step_id && step_id && !strcmp(t->step_id, step_id))
			return true;
	}
	return false;
}

/* ---- spans ------------------------------------------------------------------------------------- */

static const struct store_step *step_of(const struct export *x, const char *id)
{
	for (size_t i = 0; id && i < x->nsteps; i++)
		if (x->steps[i].s.id && !strcmp(x->steps[i].s.id, id))
			return &x->steps[i].s;
	return NULL;
}

static int64_t run_end(const struct store_run *r)
{
	if (r->end_ns.known && r->end_ns.v > 0)
		return r->end_ns.v;
	return r->last_update_ns.known ? r->last_update_ns.v : r->start_ns.v;
}

static bool signal_of_process(const struct store_signal *s, const struct store_process *p)
{
	return s->has_pid && s->pid == p->tgid && (!s->start_ns.known || s->start_ns.v == p->start_ns);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static void process_attributes(struct json *j, const struct export *x, const struct store_process *p)
{
	uint64_t user = 0, sys = 0;

	attr_i64(j, "process.pid", p->tgid);
	attr_int(j, "process.parent_pid", p->ppid);
	attr_str(j, "process.executable.name", base_name(p->exe));
	attr_str(j, "process.executable.path", p->exe);
	attr_int(j, "process.exit.code", p->exit_code);
	attr_str(j, "process.working_directory", p->cwd);
	if (x->o->with_argv)
		attr_string_array(j, "process.command_args", p->argv_json);
	attr_str(j, "tracer.tool", p->tool);
	attr_str(j, "tracer.step.id", p->step);
	attr_int(j, "tracer.process.signal", p->signal);
	if (p->oom_killed.known)
		attr_bool(j, "tracer.process.oom_killed", p->oom_killed.v != 0);
	if (p->runtime_ns.known) { /* split as wait4() reports it, like tracer report (common/cputime.c) */
		cputime_adjust((uint64_t)p->utime_ns.v, (uint64_t)p->stime_ns.v, (uint64_t)p->runtime_ns.v, &user,
			       &sys);
		attr_i64(j, "tracer.process.cpu.user_ns", (int64_t)user);
		attr_i64(j, "tracer.process.cpu.system_ns", (int64_t)sys);
	}
	attr_int(j, "tracer.process.memory.peak_bytes", p->peak_rss_bytes);
	attr_str(j, "tracer.process.memory.peak_source", p->peak_rss_source);
	attr_int(j, "tracer.process.io.read_bytes", p->read_bytes);
	attr_int(j, "tracer.process.io.write_bytes", p->write_bytes);
	attr_int(j, "tracer.process.io.rchar", p->rchar);
	attr_int(j, "tracer.process.io.wchar", p->wchar);
	attr_int(j, "tracer.process.network.tx_bytes", p->net_tx_bytes);
	attr_int(j, "tracer.process.network.rx_bytes", p->net_rx_bytes);
}

static int process_span(void *ctx, const struct store_process *p)
{
	struct export *x = ctx;
	const struct store_step *st = step_of(x, p->step);
	int64_t start = p->start_real_ns.known ? p->start_real_ns.v : x->r->start_ns.v;
	int64_t end = p->end_real_ns.known ? p->end_real_ns.v :
		      st && st->end_ns.known ? st->end_ns.v : run_end(x->r);
	uint8_t id[OTLP_SPAN_ID_LEN], parent[OTLP_SPAN_ID_LEN];
	bool events = false;
	struct bucket *b;
	struct json j;
	char why[96];

	if (!(b = span_begin(x, &j, p->host_id, st ? st->job_host : NULL)))
		return x->rc;
	process_span_id(x->trace, p, id);
	if (st)
		step_span_id(x->trace, st->id, parent);
	else
		memcpy(parent, x->root, sizeof(parent));
	kv_hex(&j, "spanId", id, sizeof(id));
	kv_hex(&j, "parentSpanId", parent, sizeof(parent));
	json_kv_string(&j, "name", p->tool ? p->tool : base_name(p->exe) ? base_name(p->exe) : "process");
	json_key(&j, "kind");
	json_i64(&j, SPAN_KIND_INTERNAL);
	span_times(&j, start, end);
	json_key(&j, "attributes");
	json_array_begin(&j);
	process_attributes(&j, x, p);
	json_array_end(&j);
	for (size_t i = 0; i < x->nsigs; i++) {
		if (x->sig_used[i] || !signal_of_process(&x->sigs[i].s, p))
			continue;
		if (!events) {
			json_key(&j, "events");
			json_array_begin(&j);
			events = true;
		}
		write_event(&j, &x->sigs[i].s, end);
		x->sig_used[i] = true;
	}
	if (events)
		json_array_end(&j);
	why[0] = 0;
	if (p->oom_killed.known && p->oom_killed.v)
		snprintf(why, sizeof(why), "killed by the OOM killer");
	else if (p->signal.known && p->signal.v)
		snprintf(why, sizeof(why), "killed by signal %" PRId64, p->signal.v);
	else if (p->exit_code.known && p->exit_code.v)
		snprintf(why, sizeof(why), "exit code %" PRId64, p->exit_code.v);
	if (why[0])
		span_error(&j, why);
	return span_end(x, &j, b);
}

static void step_attributes(struct json *j, const struct store_step *s)
{
	attr_str(j, "cicd.pipeline.task.name", s->name ? s->name : s->id);
	attr_str(j, "cicd.pipeline.task.run.id", s->id);
	attr_str(j, "cicd.pipeline.task.run.result", otlp_result(s->state));
	attr_str(j, "tracer.step.state", s->state);
	attr_str(j, "tracer.step.rule", s->rule);
	attr_str(j, "tracer.step.engine", s->engine);
	attr_str(j, "tracer.step.tools", s->tools);
	attr_int(j, "tracer.step.exit_code", s->exit_code);
	attr_int(j, "tracer.step.signal", s->signal);
	attr_int(j, "tracer.step.processes", s->processes);
	attr_int(j, "tracer.step.oom_killed", s->oom_killed);
	attr_int(j, "tracer.step.cpu_ns", s->cpu_ns);
	attr_int(j, "tracer.step.memory.peak_bytes", s->peak_rss_bytes);
	attr_int(j, "tracer.step.memory.cgroup_peak_bytes", s->memcg_peak_bytes);
	attr_int(j, "tracer.step.io.read_bytes", s->read_bytes);
	attr_int(j, "tracer.step.io.write_bytes", s->write_bytes);
	attr_int(j, "tracer.step.network.tx_bytes", s->net_tx_bytes);
	attr_int(j, "tracer.step.network.rx_bytes", s->net_rx_bytes);
	attr_int(j, "tracer.step.cpu_limit_millicores", s->cpu_limit_millicores);
	attr_int(j, "tracer.step.memory_limit_bytes", s->memory_limit_bytes);
	attr_str(j, "tracer.job.id", s->job_id);
	attr_str(j, "tracer.job.host", s->job_host);
	attr_int(j, "tracer.job.queue_wait_ns", s->queued_ns);
}

/* Events for a step's or the root's span: signals of no process seen, matched by match(). */
static bool write_left_events(struct json *j, struct export *x, const char *step, int64_t ns, bool opened)
{
	for (size_t i = 0; i < x->nsigs; i++) {
		const struct store_signal *s = &x->sigs[i].s;

		if (x->sig_used[i] || (step ? !s->step || strcmp(s->step, step) : false))
			continue;
		if (!opened) {
			json_key(j, "events");
			json_array_begin(j);
			opened = true;
		}
		write_event(j, s, ns);
		x->sig_used[i] = true;
	}
	return opened;
}

static int step_span(struct export *x, const struct store_step *s)
{
	int64_t start = s->start_ns.known ? s->start_ns.v : x->r->start_ns.v;
	int64_t end = s->end_ns.known ? s->end_ns.v : run_end(x->r);
	uint8_t id[OTLP_SPAN_ID_LEN];
	bool events = false;
	struct bucket *b;
	struct json j;

	if (!(b = span_begin(x, &j, x->r->host_id, x->r->host_name)))
		return x->rc;
	step_span_id(x->trace, s->id, id);
	kv_hex(&j, "spanId", id, sizeof(id));
	kv_hex(&j, "parentSpanId", x->root, sizeof(x->root));
	json_kv_string(&j, "name", s->name ? s->name : s->id);
	json_key(&j, "kind");
	json_i64(&j, SPAN_KIND_INTERNAL);
	span_times(&j, start, end);
	json_key(&j, "attributes");
	json_array_begin(&j);
	step_attributes(&j, s);
	json_array_end(&j);
	if (has_slow(x, s->id)) {
		json_key(&j, "events");
		json_array_begin(&j);
		events = true;
		write_slow_events(&j, x, s->id, end);
	}
	if (write_left_events(&j, x, s->id, end, events) || events)
		json_array_end(&j);
	if (s->state && !strcmp(s->state, "failed"))
		span_error(&j, s->exit_code.known ? "the step failed (exit code in tracer.step.exit_code)" :
						    "the step failed");
	return span_end(x, &j, b);
}

static void run_attributes(struct json *j, const struct export *x)
{
	const struct store_run *r = x->r;

	attr_str(j, "cicd.pipeline.name", r->pipeline ? r->pipeline : r->run_name ? r->run_name : r->command);
	attr_str(j, "cicd.pipeline.run.id", r->pipeline_run_id ? r->pipeline_run_id : r->run_key);
	attr_str(j, "cicd.pipeline.result", otlp_result(r->state));
	attr_i64(j, "tracer.run.id", r->run_id);
	attr_str(j, "tracer.run.key", r->run_key);
	attr_str(j, "tracer.run.state", r->state);
	attr_str(j, "tracer.run.name", r->run_name);
	attr_str(j, "tracer.run.engine", r->engine);
	attr_str(j, "tracer.run.detected_by", r->detected_by);
	if (x->o->with_argv)
		attr_string_array(j, "tracer.run.command_args", r->command_json);
	attr_int(j, "tracer.run.exit_code", r->exit_code);
	attr_int(j, "tracer.run.signal", r->signal);
	attr_int(j, "tracer.run.root_pid", r->root_pid);
	attr_int(j, "tracer.run.processes", r->processes);
	attr_int(j, "tracer.run.steps", r->steps);
	attr_int(j, "tracer.run.cpu_ns", r->cpu_ns);
	attr_int(j, "tracer.run.io.read_bytes", r->read_bytes);
	attr_int(j, "tracer.run.io.write_bytes", r->write_bytes);
	attr_int(j, "tracer.run.network.tx_bytes", r->net_tx_bytes);
	attr_int(j, "tracer.run.network.rx_bytes", r->net_rx_bytes);
	attr_str(j, "tracer.slurm.job_id", r->slurm_job_id);
	attr_int(j, "tracer.run.cluster_jobs", r->jobs);
}

static int root_span(struct export *x)
{
	const struct store_run *r = x->r;
	const char *name = r->pipeline ? r->pipeline : r->run_name ? r->run_name : r->command;
	struct bucket *b;
	struct json j;
	char why[96];

	if (!(b = span_begin(x, &j, r->host_id, r->host_name)))
		return x->rc;
	kv_hex(&j, "spanId", x->root, sizeof(x->root));
	json_kv_string(&j, "name", name && *name ? name : "run");
	json_key(&j, "kind");
	json_i64(&j, SPAN_KIND_INTERNAL);
	span_times(&j, r->start_ns.v, run_end(r));
	json_key(&j, "attributes");
	json_array_begin(&j);
	run_attributes(&j, x);
	json_array_end(&j);
	if (write_left_events(&j, x, NULL, run_end(r), false))
		json_array_end(&j);
	if (r->state && strcmp(r->state, "succeeded") && strcmp(r->state, "running")) {
		if (r->exit_code.known && r->exit_code.v)
			snprintf(why, sizeof(why), "the run %s: exit code %" PRId64, r->state, r->exit_code.v);
		else
			snprintf(why, sizeof(why), "the run %s", r->state);
		span_error(&j, why);
	}
	return span_end(x, &j, b);
}

/* ---- reading ----------------------------------------------------------------------------------- */

/* A copy of s in own[*n] (NULL stays NULL); false when memory is short. */
static bool keep_str(const char **s, char **own, size_t *n)
{
	if (!*s)
		return true;
	if (!(own[*n] = strdup(*s)))
		return false;
	*s = own[(*n)++];
	return true;
}

static int keep_step(void *ctx, const struct store_step *s)
{
	struct export *x = ctx;
	struct kept_step *v = realloc(x->steps, (x->nsteps + 1) * sizeof(*v));
	size_t n = 0;
	bool ok;

	if (!v)
		return -ENOMEM;
	x->steps = v;
	v = &x->steps[x->nsteps++];
	memset(v, 0, sizeof(*v));
	v->s = *s;
	v->s.workdir = v->s.tools_json = NULL;
	if (!v->s.id)
		v->s.id = "";
	ok = keep_str(&v->s.id, v->own, &n) && keep_str(&v->s.name, v->own, &n) && keep_str(&v->s.state, v->own, &n) &&
	     keep_str(&v->s.engine, v->own, &n) && keep_str(&v->s.rule, v->own, &n) &&
	     keep_str(&v->s.tools, v->own, &n) && keep_str(&v->s.job_id, v->own, &n) &&
	     keep_str(&v->s.job_host, v->own, &n);
	return ok ? 0 : -ENOMEM;
}

static int keep_signal(void *ctx, const struct store_signal *s)
{
	struct export *x = ctx;
	struct kept_signal *v = realloc(x->sigs, (x->nsigs + 1) * sizeof(*v));
	size_t n = 0;
	bool ok;

	if (!v)
		return -ENOMEM;
	x->sigs = v;
	v = &x->sigs[x->nsigs++];
	memset(v, 0, sizeof(*v));
	v->s = *s;
	ok = keep_str(&v->s.kind, v->own, &n) && keep_str(&v->s.source, v->own, &n) &&
	     keep_str(&v->s.step, v->own, &n) && keep_str(&v->s.tool, v->own, &n) &&
	     keep_str(&v->s.detail, v->own, &n);
	return ok ? 0 : -ENOMEM;
}

static void export_free(struct export *x)
{
	for (size_t i = 0; i < x->nsteps; i++)
		for (size_t k = 0; k < OWN_MAX; k++)
			free(x->steps[i].own[k]);
	for (size_t i = 0; i < x->nsigs; i++)
		for (size_t k = 0; k < OWN_MAX; k++)
			free(x->sigs[i].own[k]);
	free(x->steps);
	free(x->sigs);
	free(x->sig_used);
	for (size_t i = 0; i < x->nb; i++) {
		obuf_free(&x->b[i].spans);
		free(x->b[i].host_name);
	}
	if (x->have_rt)
		run_tune_free(&x->rt);
}

int otlp_run(struct store *st, const struct store_run *r, const struct otlp_options *o, otlp_request_fn fn,
	     void *ctx, char *err, size_t errlen)
{
	struct export x = { .r = r, .o = o, .fn = fn, .ctx = ctx };
	char why[256];
	int rc;

	*err = 0;
	otlp_trace_id(r, x.trace);
	root_span_id(x.trace, x.root);
	rc = store_run_steps(st, r->run_id, keep_step, &x);
	if (!rc)
		rc = store_run_signals(st, r->run_id, keep_signal, &x);
	if (!rc && x.nsigs && !(x.sig_used = calloc(x.nsigs, sizeof(*x.sig_used))))
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, errlen, "run %" PRId64 ": reading its steps and signals failed (%d)", r->run_id, rc);
		export_free(&x);
		return rc;
	}
	/* Slower than usual: the same analysis tracer report runs (view/run_tune.c), over the run's pipeline. */
	if (r->pipeline && *r->pipeline && r->end_ns.known) {
		x.have_rt = true;
		if (run_tune_load(st, r->run_id, r->pipeline, &x.rt, why, sizeof(why))) {
			snprintf(err, errlen, "run %" PRId64 ": %s", r->run_id, why);
			export_free(&x);
			return -EIO;
		}
	}
	rc = store_run_processes(st, r->run_id, process_span, &x);
	if (!rc)
		rc = x.rc;
	for (size_t i = 0; !rc && i < x.nsteps; i++)
		rc = step_span(&x, &x.steps[i].s);
	if (!rc)
		rc = root_span(&x);
	if (!rc)
		rc = flush(&x);
	if (rc && !*err)
		snprintf(err, errlen, "run %" PRId64 ": %s", r->run_id,
			 rc == x.rc && x.rc ? "sending it failed" : "reading its processes failed");
	export_free(&x);
	return rc;
}
