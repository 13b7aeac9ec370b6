/* SPDX-License-Identifier: Apache-2.0 */
#include "report_ctx.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "cgctx.h"

struct proc_waits report_waits(const struct proc *p)
{
	struct proc_waits w = { 0 };

	if ((p->flags & PROC_F_EXIT) && (p->exit.state_flags & TR_PSTATE_TRACED)) {
		w = (struct proc_waits){
			.known = true,
			.net_tx_bytes = p->exit.net_tx_bytes,
			.net_rx_bytes = p->exit.net_rx_bytes,
			.iowait_ns = p->exit.iowait_ns,
			.blocked_ns = p->exit.blocked_ns,
			.net_wait_ns = p->exit.net_wait_ns,
		};
	} else if (p->series && p->series->samples) {
		/* Still running (or its exit was lost): the newest sample is the best known. */
		w.known = true;
		w.net_tx_bytes = p->series->last.net_tx_bytes;
		w.net_rx_bytes = p->series->last.net_rx_bytes;
		w.iowait_ns = p->series->last.iowait_ns;
	}
	return w;
}

const char *report_cgroup_path(const struct proc *p, const struct cgtab *cg)
{
	const char *v2 = cg ? cgtab_path(cg, 0, p->cgroup_id) : NULL;
	const char *v1 = cg ? cgtab_path(cg, 1, p->cgroup_v1_id) : NULL;

	/* On a hybrid host the v2 tree often holds only systemd's view; containers live in v1 then. */
	if (v2 && strcmp(v2, "/") != 0)
		return v2;
	return v1 ? v1 : v2;
}

bool report_cgroup_context(const struct proc *p, const struct cgtab *cg, struct cgctx *out)
{
	const char *v2 = cg ? cgtab_path(cg, 0, p->cgroup_id) : NULL;
	const char *v1 = cg ? cgtab_path(cg, 1, p->cgroup_v1_id) : NULL;

	memset(out, 0, sizeof(*out));
	if (v2 && cgctx_parse(v2, strlen(v2), 0, out) == 0 && (out->container_id[0] || out->slurm_job[0]))
		return true;
	if (v1 && cgctx_parse(v1, strlen(v1), 0, out) == 0 && (out->container_id[0] || out->slurm_job[0]))
		return true;
	/* Neither names a container or a job: the unit and slice of the v2 path, if any. */
	if (v2 && cgctx_parse(v2, strlen(v2), 0, out) == 0)
		return true;
	return v1 != NULL;
}

static void kv_nonempty(struct json *j, const char *key, const char *v, bool known)
{
	json_kv_string(j, key, known && v[0] ? v : NULL);
}

void report_write_cgroup_context(struct json *j, const struct cgctx *c, bool known)
{
	json_kv_string(j, "container_runtime",
		       known && c->runtime != CGCTX_RT_NONE && c->container_id[0] ? cgctx_runtime_name(c->runtime) : NULL);
	kv_nonempty(j, "pod_uid", c->pod_uid, known);
	json_kv_string(j, "pod_qos", known && c->qos != CGCTX_QOS_NONE ? cgctx_qos_name(c->qos) : NULL);
	kv_nonempty(j, "slurm_job", c->slurm_job, known);
	kv_nonempty(j, "slurm_step", c->slurm_step, known);
	kv_nonempty(j, "slurm_task", c->slurm_task, known);
	kv_nonempty(j, "systemd_unit", c->unit, known);
}

static const char *mode_name(uint32_t mode)
{
	switch (mode & (TR_FILE_READ | TR_FILE_WRITE)) {
	case TR_FILE_READ: return "r";
	case TR_FILE_WRITE: return "w";
	default: return "rw";
	}
}

void report_write_files(struct json *j, const struct proc *p)
{
	bool traced = (p->state_flags & TR_PSTATE_TRACED) || p->n_files;

	json_key(j, "files");
	if (!traced) {
		json_null(j);
		return;
	}
	json_array_begin(j);
	for (uint32_t i = 0; i < p->n_files; i++) {
		json_object_begin(j);
		json_kv_string(j, "path", p->files[i].path);
		json_kv_string(j, "mode", mode_name(p->files[i].mode));
		json_object_end(j);
	}
	json_array_end(j);
}

#define SERIES_COLUMN(j, name, s, field)                       \
	do {                                                   \
		json_key(j, name);                             \
		json_array_begin(j);                           \
		for (uint32_t i_ = 0; i_ < (s)->n; i_++)       \
			json_u64(j, (s)->points[i_].field);    \
		json_array_end(j);                             \
	} while (0)

void report_write_series(struct json *j, const struct proc *p, uint64_t mono_to_real_ns)
{
	const struct proc_series *s = p->series;
	uint64_t peak = proc_peak_rss(p, NULL);

	json_key(j, "series");
	if (!s || s->n == 0) {
		json_null(j);
	} else {
		json_object_begin(j);
		json_kv_u64(j, "samples", s->samples);
		json_key(j, "t_ns");
		json_array_begin(j);
		for (uint32_t i = 0; i < s->n; i++)
			json_u64(j, s->points[i].ts_ns + mono_to_real_ns);
		json_array_end(j);
		SERIES_COLUMN(j, "cpu_ns", s, runtime_ns);
		SERIES_COLUMN(j, "rss_bytes", s, rss_bytes);
		SERIES_COLUMN(j, "read_bytes", s, read_bytes);
		SERIES_COLUMN(j, "write_bytes", s, write_bytes);
		SERIES_COLUMN(j, "rchar", s, rchar);
		SERIES_COLUMN(j, "wchar", s, wchar);
		SERIES_COLUMN(j, "net_tx_bytes", s, net_tx_bytes);
		SERIES_COLUMN(j, "net_rx_bytes", s, net_rx_bytes);
		SERIES_COLUMN(j, "iowait_ns", s, iowait_ns);
		SERIES_COLUMN(j, "reclaim_ns", s, reclaim_ns);
		json_object_end(j);
	}
	json_key(j, "peaks");
	if (!s || s->samples == 0) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_kv_u64(j, "rss_bytes", s->peaks.rss_bytes > peak ? s->peaks.rss_bytes : peak);
	json_kv_u64(j, "cpu_millicores", s->peaks.cpu_millicores);
	json_kv_u64(j, "read_bytes_per_s", s->peaks.read_bps);
	json_kv_u64(j, "write_bytes_per_s", s->peaks.write_bps);
	json_kv_u64(j, "net_tx_bytes_per_s", s->peaks.net_tx_bps);
	json_kv_u64(j, "net_rx_bytes_per_s", s->peaks.net_rx_bps);
	json_object_end(j);
}

void report_write_limits(struct json *j, uint64_t cpu_millicores, uint64_t memory_bytes)
{
	json_kv_double(j, "cpu_limit_cores", cpu_millicores ? (double)cpu_millicores / 1000.0 : NAN);
	json_kv_u64_or_null(j, "memory_limit_bytes", memory_bytes != 0, memory_bytes);
}
