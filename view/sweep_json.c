/* SPDX-License-Identifier: Apache-2.0 */
/* The sweep's findings as JSON (view/sweep_json.h). */
#include "sweep_json.h"

#include <math.h>
#include <stdint.h>

#define NS_PER_S 1000000000.0

const char *sweep_finding_host(const struct sweep_input *si, const struct sw_finding *f)
{
	return f->host < si->in.nhosts ? si->in.hosts[f->host].host_id : NULL;
}

static void json_cost(struct json *j, const struct sw_finding *f)
{
	json_key(j, "cost");
	json_object_begin(j);
	json_kv_double(j, "usd", f->cost_usd >= 0 ? f->cost_usd : NAN);
	json_kv_double(j, "price_per_hour", f->price_per_hour >= 0 ? f->price_per_hour : NAN);
	json_kv_string(j, "price_source", cost_price_source_name(f->price_source));
	json_object_end(j);
}

/* A reserved_unused finding's step: its allocation, what it used, and which was found unused. */
static void json_reserved(struct json *j, const struct an_step *t, const struct sw_finding *f)
{
	json_key(j, "step");
	json_object_begin(j);
	json_kv_string(j, "id", t->step_id);
	json_kv_string(j, "name", t->name);
	json_kv_double(j, "cpu_limit_cores", f->cpu_limit);
	json_kv_double(j, "cpu_used_cores", f->cpu_used);
	json_kv_bool(j, "cpu_unused", f->cpu_unused);
	json_kv_u64_or_null(j, "memory_limit_bytes", f->mem_limit_bytes != 0, f->mem_limit_bytes);
	json_kv_u64(j, "memory_peak_bytes", f->mem_used_bytes);
	json_kv_bool(j, "memory_unused", f->mem_unused);
	json_object_end(j);
}

static void json_evidence(struct json *j, const struct sweep_input *si, const struct sw_finding *f)
{
	const struct sw_process *p = f->proc >= 0 ? &si->in.procs[f->proc] : NULL;

	json_key(j, "evidence");
	json_object_begin(j);
	json_kv_string(j, "text", f->evidence);
	json_kv_double(j, "observed_s", f->observed_s);
	if (f->kind == SW_IDLE_HOST_GCP) {
		json_kv_double(j, "cpu_idle_share", f->idle_share_cpu);
		json_kv_double(j, "net_idle_share", f->idle_share_net);
	}
	if (f->kind == SW_IDLE_HOST_AWS) {
		json_kv_u64(j, "low_days", f->low_days);
		json_kv_u64(j, "days", f->days);
	}
	if (f->rss_bytes)
		json_kv_u64(j, "rss_bytes", f->rss_bytes);
	if (f->kind == SW_RESERVED_UNUSED && f->step >= 0 && (size_t)f->step < si->in.runs->nsteps)
		json_reserved(j, &si->in.runs->steps[f->step], f);
	if (p) {
		json_key(j, "process");
		json_object_begin(j);
		json_key(j, "pid");
		json_i64(j, p->pid);
		json_kv_string(j, "exe", p->exe);
		json_kv_string(j, "tool", p->tool);
		json_kv_string(j, "command", p->cmdline);
		json_key(j, "start_ns");
		json_i64(j, p->start_ns);
		json_key(j, "last_active_ns");
		json_i64(j, p->last_active_ns);
		json_object_end(j);
	}
	json_object_end(j);
}

static void json_thresholds(struct json *j, const struct sw_config *c)
{
	json_key(j, "thresholds");
	json_object_begin(j);
	json_kv_double(j, "gcp_cpu_cores", c->gcp_cpu_cores);
	json_kv_double(j, "gcp_cpu_share", c->gcp_cpu_share);
	json_kv_double(j, "gcp_rx_bytes_per_s", c->gcp_rx_bytes_per_s);
	json_kv_double(j, "gcp_tx_bytes_per_s", c->gcp_tx_bytes_per_s);
	json_kv_double(j, "gcp_net_share", c->gcp_net_share);
	json_kv_double(j, "gcp_min_observed_s", (double)c->gcp_min_observed_ns / NS_PER_S);
	json_kv_double(j, "aws_cpu_percent", c->aws_cpu_percent);
	json_kv_u64(j, "aws_net_bytes", c->aws_net_bytes);
	json_kv_u64(j, "aws_days", c->aws_days);
	json_kv_u64(j, "aws_window_days", c->aws_window_days);
	json_kv_double(j, "aws_day_s", (double)c->aws_day_ns / NS_PER_S);
	json_kv_double(j, "run_idle_min_s", (double)c->run_idle_min_ns / NS_PER_S);
	json_kv_double(j, "worker_idle_s", (double)c->worker_idle_ns / NS_PER_S);
	json_kv_double(j, "session_idle_s", (double)c->session_idle_ns / NS_PER_S);
	json_kv_double(j, "idle_process_age_s", (double)c->idle_proc_age_ns / NS_PER_S);
	json_kv_double(j, "idle_process_idle_s", (double)c->idle_proc_idle_ns / NS_PER_S);
	json_kv_u64(j, "idle_process_rss_bytes", c->idle_proc_rss_bytes);
	json_kv_double(j, "reserved_min_s", (double)c->reserved_min_ns / NS_PER_S);
	json_kv_double(j, "reserved_cpu_share", c->reserved_cpu_share);
	json_kv_double(j, "reserved_memory_share", c->reserved_mem_share);
	json_kv_double(j, "reserved_min_cpus", c->reserved_min_cores);
	json_kv_u64(j, "reserved_min_memory_bytes", c->reserved_min_bytes);
	json_object_end(j);
}

static void json_hosts(struct json *j, const struct sweep_input *si)
{
	json_key(j, "hosts");
	json_array_begin(j);
	for (size_t h = 0; h < si->in.nhosts; h++) {
		const struct sw_host *sh = &si->in.hosts[h];
		double observed = 0;

		for (size_t b = 0; b < sh->nbeats; b++)
			observed += (double)(sh->beats[b].end_ns - sh->beats[b].start_ns) / NS_PER_S;
		json_object_begin(j);
		json_kv_string(j, "host", sh->host_id);
		json_kv_u64(j, "beats", sh->nbeats);
		json_kv_double(j, "observed_s", observed);
		json_kv_string(j, "instance_type", sh->host.instance_type);
		json_kv_string(j, "region", sh->host.region);
		json_object_end(j);
	}
	json_array_end(j);
}

void sweep_json_write(struct json *j, const struct sweep_input *si, const struct sw_config *c, const char *prices,
		      const struct sw_finding *f, size_t n)
{
	double total = 0;

	json_object_begin(j);
	json_kv_string(j, "schema", "tracer.sweep.v1");
	json_key(j, "since_ns");
	json_i64(j, si->in.since_ns);
	json_key(j, "now_ns");
	json_i64(j, si->in.now_ns);
	json_kv_string(j, "prices_file", prices);
	json_thresholds(j, c);
	json_hosts(j, si);
	json_key(j, "findings");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "kind", sw_kind_name(f[i].kind));
		json_kv_string(j, "host", sweep_finding_host(si, &f[i]));
		json_key(j, "start_ns");
		json_i64(j, f[i].start_ns);
		json_key(j, "end_ns");
		json_i64(j, f[i].end_ns);
		json_kv_double(j, "duration_s", (double)(f[i].end_ns - f[i].start_ns) / NS_PER_S);
		json_key(j, "run_id");
		if (f[i].run_id >= 0)
			json_i64(j, f[i].run_id);
		else
			json_null(j);
		json_evidence(j, si, &f[i]);
		json_cost(j, &f[i]);
		json_object_end(j);
		if (f[i].cost_usd > 0)
			total += f[i].cost_usd;
	}
	json_array_end(j);
	json_kv_double(j, "total_cost_usd", total);
	json_object_end(j);
}
