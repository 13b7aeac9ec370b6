/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts of a process's report entry that issue 4 added: where it ran
 * (cwd, cgroup, namespaces), what it touched (files, network), how its
 * counters moved (series and peaks) and how long it waited (I/O, other
 * uninterruptible sleep, network). Written by report.c into each process.
 */
#ifndef TRACER_REPORT_REPORT_CTX_H
#define TRACER_REPORT_REPORT_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "cgtab.h"
#include "json.h"
#include "proctab.h"

/* Network bytes and wait times, from the exit record or else the newest sample. */
struct proc_waits {
	bool known;
	uint64_t net_tx_bytes, net_rx_bytes;
	uint64_t iowait_ns, blocked_ns, net_wait_ns;
};

struct proc_waits report_waits(const struct proc *p);

/*
 * The cgroup path to report for p: its v2 path when the kernel sent one
 * other than the root, else its v1 memory path; NULL when unknown.
 */
const char *report_cgroup_path(const struct proc *p, const struct cgtab *cg);

void report_write_files(struct json *j, const struct proc *p);

/*
 * What its cgroups say about p (cgctx.c): the v2 path first, then the v1
 * memory path when the v2 one names no container and no SLURM job. False
 * when neither path is known.
 */
struct cgctx;
bool report_cgroup_context(const struct proc *p, const struct cgtab *cg, struct cgctx *out);

/* container_runtime, pod_uid, qos, slurm_job, slurm_step, slurm_task, systemd_unit: null when not known. */
void report_write_cgroup_context(struct json *j, const struct cgctx *c, bool known);

/* "series" (columnar, CLOCK_REALTIME times) and "peaks"; null when it sent no samples. */
void report_write_series(struct json *j, const struct proc *p, uint64_t mono_to_real_ns);

/*
 * "cpu_limit_cores" and "memory_limit_bytes": the allocation a process or
 * step ran under (steps.h), null when none held it.
 */
void report_write_limits(struct json *j, uint64_t cpu_millicores, uint64_t memory_bytes);

#endif /* TRACER_REPORT_REPORT_CTX_H */
