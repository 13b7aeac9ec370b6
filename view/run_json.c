/* SPDX-License-Identifier: Apache-2.0 */
/* A run as JSON, from the lake (view/run_json.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cputime.h"
#include "run_json.h"

static void kv_int(struct json *j, const char *key, struct store_int v)
{
	json_key(j, key);
	if (v.known)
		json_i64(j, v.v);
	else
		json_null(j);
}

static void kv_bool(struct json *j, const char *key, struct store_int v)
{
	json_kv_bool_or_null(j, key, v.known, v.v != 0);
}

/* JSON text the lake stored and vouches for (json_valid), or null. */
static void kv_raw(struct json *j, const char *key, const char *text)
{
	json_key(j, key);
	if (text)
		json_raw(j, text, strlen(text));
	else
		json_null(j);
}

int run_json_list_item(void *ctx, const struct store_run *r)
{
	struct json *j = ctx;

	json_object_begin(j);
	json_key(j, "run_id");
	json_i64(j, r->run_id);
	json_kv_string(j, "run_key", r->run_key);
	json_kv_string(j, "engine", r->engine);
	json_kv_string(j, "pipeline", r->pipeline);
	json_kv_string(j, "state", r->state);
	kv_int(j, "start_ns", r->start_ns);
	kv_int(j, "end_ns", r->end_ns);
	json_kv_string(j, "host", r->host_id);
	kv_int(j, "exit_code", r->exit_code);
	kv_raw(j, "command", r->command_json);
	json_kv_string(j, "run_name", r->run_name);
	json_kv_string(j, "pipeline_run_id", r->pipeline_run_id);
	json_kv_string(j, "detected_by", r->detected_by);
	kv_int(j, "last_update_ns", r->last_update_ns);
	kv_int(j, "processes", r->processes);
	kv_int(j, "steps", r->steps);
	json_object_end(j);
	return 0;
}

struct rebuild {
	struct store *st;
	struct json *j;
	int rc; /* the first failure of a nested read */
};

static void write_live(struct json *j, const struct store_live *l)
{
	json_key(j, "live");
	if (!l->cpu_millicores.known && !l->rss_bytes.known && !l->read_bytes_per_s.known &&
	    !l->write_bytes_per_s.known && !l->net_tx_bytes_per_s.known && !l->net_rx_bytes_per_s.known) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	kv_int(j, "cpu_millicores", l->cpu_millicores);
	kv_int(j, "rss_bytes", l->rss_bytes);
	kv_int(j, "read_bytes_per_s", l->read_bytes_per_s);
	kv_int(j, "write_bytes_per_s", l->write_bytes_per_s);
	kv_int(j, "net_tx_bytes_per_s", l->net_tx_bytes_per_s);
	kv_int(j, "net_rx_bytes_per_s", l->net_rx_bytes_per_s);
	json_object_end(j);
}

static int write_file(void *ctx, const struct store_file *f)
{
	struct json *j = ctx;

	json_object_begin(j);
	json_kv_string(j, "path", f->path);
	json_kv_string(j, "mode", f->mode);
	json_object_end(j);
	return 0;
}

/* Split as wait4() reports it, exactly as the report does (common/cputime.c); null before the exit. */
static void write_cpu(struct json *j, const struct store_process *p)
{
	uint64_t user = 0, sys = 0;

	if (p->runtime_ns.known)
		cputime_adjust((uint64_t)p->utime_ns.v, (uint64_t)p->stime_ns.v, (uint64_t)p->runtime_ns.v, &user,
			       &sys);
	json_kv_u64_or_null(j, "cpu_user_ns", p->runtime_ns.known, user);
	json_kv_u64_or_null(j, "cpu_sys_ns", p->runtime_ns.known, sys);
}

static int write_process(void *ctx, const struct store_process *p)
{
	struct rebuild *b = ctx;
	struct json *j = b->j;

	json_object_begin(j);
	json_key(j, "pid");
	json_i64(j, p->tgid);
	kv_int(j, "ppid", p->ppid);
	kv_int(j, "start_ns", p->start_real_ns);
	kv_int(j, "end_ns", p->end_real_ns);
	json_kv_string(j, "exe", p->exe);
	kv_raw(j, "argv", p->argv_json);
	json_kv_string(j, "cwd", p->cwd);
	json_kv_string(j, "tool", p->tool);
	json_kv_string(j, "step", p->step);
	kv_int(j, "exit_code", p->exit_code);
	kv_int(j, "signal", p->signal);
	kv_bool(j, "core_dumped", p->core_dumped);
	json_kv_bool(j, "oom_killed", p->oom_killed.known && p->oom_killed.v);
	write_cpu(j, p);
	kv_int(j, "peak_rss_bytes", p->peak_rss_bytes);
	kv_int(j, "read_bytes", p->read_bytes);
	kv_int(j, "write_bytes", p->write_bytes);
	kv_int(j, "rchar", p->rchar);
	kv_int(j, "wchar", p->wchar);
	kv_int(j, "net_tx_bytes", p->net_tx_bytes);
	kv_int(j, "net_rx_bytes", p->net_rx_bytes);
	json_kv_null(j, "container_id");
	json_kv_string(j, "cgroup", p->cgroup);
	json_key(j, "files");
	if (p->files_traced) {
		json_array_begin(j);
		b->rc = store_process_files(b->st, p, write_file, j);
		json_array_end(j);
	} else {
		json_null(j);
	}
	json_kv_string(j, "peak_rss_source", p->peak_rss_source);
	json_object_end(j);
	return b->rc;
}

/* The steps as they are written, and their times for the run's queue split. */
struct step_walk {
	struct json *j;
	struct run_spans spans;
};

void run_spans_add(struct run_spans *s, const struct store_step *step)
{
	if (s->oom || !step->start_ns.known || step->start_ns.v <= 0)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct an_timespan *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(s->v, cap * sizeof(*v));

		if (!v) {
			s->oom = true;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct an_timespan){
		step->submitted_ns.known ? step->submitted_ns.v : 0, step->start_ns.v,
		step->end_ns.known && !(step->running.known && step->running.v) ? step->end_ns.v : 0
	};
}

bool run_spans_split(const struct run_spans *s, const struct store_run *r, int64_t *wall_ns, int64_t *queued_ns)
{
	int64_t end = r->end_ns.known && r->end_ns.v > 0 ? r->end_ns.v : r->last_update_ns.known ? r->last_update_ns.v : 0;

	if (s->oom || !r->jobs.known || r->jobs.v <= 0 || !r->start_ns.known || end <= r->start_ns.v ||
	    an_queued_only(s->v, s->n, r->start_ns.v, end, queued_ns))
		return false;
	*wall_ns = end - r->start_ns.v;
	return true;
}

void run_spans_free(struct run_spans *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A run with cluster jobs: its wall time, queued and running. */
static void write_queue(struct json *j, const struct store_run *r, const struct run_spans *s)
{
	int64_t wall, q;

	if (!run_spans_split(s, r, &wall, &q))
		return;
	json_key(j, "queue");
	json_object_begin(j);
	json_key(j, "wall_ns");
	json_i64(j, wall);
	json_key(j, "queued_ns");
	json_i64(j, q);
	json_key(j, "running_ns");
	json_i64(j, wall - q);
	json_object_end(j);
}

static int write_step(void *ctx, const struct store_step *s)
{
	struct step_walk *w = ctx;
	struct json *j = w->j;

	run_spans_add(&w->spans, s);

	json_object_begin(j);
	json_kv_string(j, "id", s->id);
	json_kv_string(j, "name", s->name);
	kv_raw(j, "tools", s->tools_json);
	kv_int(j, "start_ns", s->start_ns);
	kv_int(j, "end_ns", s->end_ns);
	json_kv_string(j, "state", s->state);
	json_kv_string(j, "engine", s->engine);
	json_kv_string(j, "workdir", s->workdir);
	json_kv_string(j, "rule", s->rule);
	kv_int(j, "exit_code", s->exit_code);
	kv_int(j, "signal", s->signal);
	kv_bool(j, "failed", s->failed);
	kv_int(j, "processes", s->processes);
	kv_int(j, "running", s->running);
	kv_int(j, "failed_processes", s->failed_processes);
	kv_int(j, "nonzero_exits", s->nonzero_exits);
	kv_int(j, "oom_killed", s->oom_killed);
	kv_int(j, "cpu_ns", s->cpu_ns);
	kv_int(j, "peak_rss_bytes", s->peak_rss_bytes);
	kv_bool(j, "peak_rss_partial", s->peak_rss_partial);
	kv_int(j, "rss_sum_of_peaks_bytes", s->rss_sum_of_peaks_bytes);
	kv_int(j, "memcg_peak_bytes", s->memcg_peak_bytes);
	kv_int(j, "read_bytes", s->read_bytes);
	kv_int(j, "write_bytes", s->write_bytes);
	kv_int(j, "rchar", s->rchar);
	kv_int(j, "wchar", s->wchar);
	kv_int(j, "net_tx_bytes", s->net_tx_bytes);
	kv_int(j, "net_rx_bytes", s->net_rx_bytes);
	json_kv_double(j, "cpu_limit_cores",
		       s->cpu_limit_millicores.known ? (double)s->cpu_limit_millicores.v / 1000.0 : NAN);
	kv_int(j, "memory_limit_bytes", s->memory_limit_bytes);
	kv_int(j, "last_update_ns", s->last_update_ns);
	write_live(j, &s->live);
	if (s->submitted_ns.known) { /* a cluster job joined to the run (docs/live.md, "Cluster jobs") */
		json_key(j, "job");
		json_object_begin(j);
		json_kv_string(j, "slurm_job_id", s->job_id);
		json_kv_string(j, "host", s->job_host);
		kv_int(j, "submitted_ns", s->submitted_ns);
		kv_int(j, "queue_wait_ns", s->queued_ns);
		json_object_end(j);
	} else {
		json_kv_null(j, "job");
	}
	json_object_end(j);
	return 0;
}

/* A signal as its record gave it (live and report signals keep their whole object). */
static int write_signal(void *ctx, const struct store_signal *sig)
{
	struct json *j = ctx;

	if (sig->detail) {
		json_raw(j, sig->detail, strlen(sig->detail));
		return 0;
	}
	json_object_begin(j);
	json_kv_string(j, "kind", sig->kind);
	json_kv_u64_or_null(j, "pid", sig->has_pid, (uint64_t)sig->pid);
	json_kv_string(j, "step", sig->step);
	json_kv_string(j, "tool", sig->tool);
	json_object_end(j);
	return 0;
}

/*
 * The host the run ran on, as its processor identified it and the run's row keeps it (docs/processor.md,
 * "Host identity"): the same object a report has, so that the page knows the host's CPUs and memory and
 * keeps every figure within them (docs/html.md). Nothing when the row knows nothing of it (a lake from
 * before the host columns): the page then clamps nothing. Its strings came from a host: escaped by the writer.
 */
static void write_host(struct json *j, const struct store_run *r)
{
	if (!r->host_cloud && !r->host_instance_type && !r->host_instance_id && !r->host_region &&
	    !r->host_cpus.known && !r->host_memory_bytes.known && !r->host_price_known)
		return;
	json_key(j, "host");
	json_object_begin(j);
	json_kv_string(j, "name", r->host_name);
	json_kv_string(j, "cloud", r->host_cloud);
	json_kv_string(j, "instance_type", r->host_instance_type);
	json_kv_string(j, "instance_id", r->host_instance_id);
	json_kv_string(j, "region", r->host_region);
	json_kv_u64_or_null(j, "cpus", r->host_cpus.known && r->host_cpus.v > 0, (uint64_t)r->host_cpus.v);
	json_kv_u64_or_null(j, "memory_bytes", r->host_memory_bytes.known && r->host_memory_bytes.v > 0,
			    (uint64_t)r->host_memory_bytes.v);
	if (r->host_price_known)
		json_kv_double(j, "price_per_hour", r->host_price_per_hour);
	json_object_end(j);
}

static void write_run_fields(struct json *j, const struct store_run *r)
{
	json_kv_string(j, "schema", "tracer.run.v1");
	kv_raw(j, "command", r->command_json);
	kv_int(j, "exit_code", r->exit_code);
	kv_int(j, "signal", r->signal);
	kv_int(j, "start_ns", r->start_ns);
	kv_int(j, "end_ns", r->end_ns);
	write_host(j, r);
	json_kv_string(j, "state", r->state);
	json_key(j, "run");
	json_object_begin(j);
	json_kv_string(j, "key", r->run_key);
	json_kv_string(j, "pipeline", r->pipeline);
	json_kv_string(j, "run_id", r->pipeline_run_id);
	json_kv_string(j, "engine", r->engine);
	json_kv_string(j, "run_name", r->run_name);
	json_kv_string(j, "slurm_job_id", r->slurm_job_id);
	json_kv_string(j, "aws_batch_job_id", r->aws_batch_job_id);
	json_kv_string(j, "slurm_job_name", r->slurm_job_name);
	json_kv_string(j, "slurm_submit_dir", r->slurm_submit_dir);
	json_kv_string(j, "slurm_submit_host", r->slurm_submit_host);
	json_kv_string(j, "detected_by", r->detected_by);
	kv_int(j, "joined_to_run", r->joined_run_id);
	kv_int(j, "jobs", r->jobs);
	json_object_end(j);
	json_key(j, "agent");
	json_object_begin(j);
	json_kv_null(j, "dropped");
	json_kv_bool(j, "rebuilt_from_lake", true);
	json_object_end(j);
	kv_int(j, "last_update_ns", r->last_update_ns);
}

/* A live run as a tracer.run.v1 report, from its rows (docs/lake.md says what differs from tracer run's). */
static int write_rebuilt(struct store *st, struct json *j, const struct store_run *r, const struct run_tune *rt)
{
	struct rebuild b = { .st = st, .j = j };
	struct step_walk w = { .j = j };
	int rc;

	json_object_begin(j);
	write_run_fields(j, r);
	json_key(j, "processes");
	json_array_begin(j);
	rc = store_run_processes(st, r->run_id, write_process, &b);
	json_array_end(j);
	if (!rc) {
		json_key(j, "steps");
		json_array_begin(j);
		rc = store_run_steps(st, r->run_id, write_step, &w);
		json_array_end(j);
		if (!rc)
			write_queue(j, r, &w.spans);
		run_spans_free(&w.spans);
	}
	if (!rc) {
		json_key(j, "signals");
		json_array_begin(j);
		rc = store_run_signals(st, r->run_id, write_signal, j);
		run_tune_json_signals(rt, j); /* slower_than_usual, from the analysis */
		json_array_end(j);
	}
	json_key(j, "tune");
	run_tune_json(rt, j);
	json_object_end(j);
	return rc;
}

static int write_stored(void *ctx, const char *text, size_t len)
{
	json_raw(ctx, text, len);
	return 0;
}

int run_json_write(struct store *st, const struct store_run *r, const struct run_tune *rt, struct json *j)
{
	char *signals = NULL, *tune = NULL;
	int rc;

	if (r->has_stored_report && run_tune_json_texts(rt, &signals, &tune))
		return -ENOMEM;
	rc = r->has_stored_report ? store_run_report(st, r->run_id, signals, tune, write_stored, j) :
				    write_rebuilt(st, j, r, rt);
	free(signals);
	free(tune);
	return rc;
}
