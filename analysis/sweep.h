/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer sweep (issue 17): where compute is wasted - idle hosts, idle time
 * inside runs, workers stuck idle, forgotten interactive sessions, idle
 * processes holding memory - each finding with its evidence and its cost.
 * Pure: plain structs in (built from the lake by view/sweep_input.c),
 * findings out; no I/O, no clock (the caller gives "now"). Every rule, its
 * anchor and its limits: docs/sweep.md.
 */
#ifndef TRACER_ANALYSIS_SWEEP_H
#define TRACER_ANALYSIS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "tune.h"

/* ---- input ------------------------------------------------------------------ */

/*
 * One heartbeat of a host (TL_HOST, docs/live.md): what the host did over
 * [start_ns, end_ns) (CLOCK_REALTIME). A host that sent nothing for a while
 * has no beats there: that time is unknown, never idle.
 */
struct sw_beat {
	int64_t start_ns, end_ns;
	uint64_t cpu_busy_ns;        /* summed over CPUs: /proc/stat's busy time over the interval */
	uint32_t cpus;               /* online CPUs */
	uint64_t mem_total_bytes, mem_used_bytes; /* at the end: MemTotal, MemTotal - MemAvailable */
	uint64_t net_rx_bytes, net_tx_bytes;      /* over the interval, every interface but lo */
	uint32_t runs, steps, processes;          /* active at the end */
};

/* A host: its beats (by start time, not overlapping) and what it costs. */
struct sw_host {
	const char *host_id;         /* hex */
	struct an_host host;         /* identity and price, as its newest beat gave them */
	const struct sw_beat *beats;
	size_t nbeats;
};

/* A process of a host, from the lake's processes and samples. */
struct sw_process {
	uint32_t host;               /* index into sw_input.hosts */
	int64_t pid, ppid;
	int64_t parent;              /* index into sw_input.procs of its parent (same host and boot), -1 none */
	const char *exe, *tool;      /* NULL if unknown */
	const char *argv0_base;      /* the basename of argv[0] (python3 -m jupyter: "python3"), NULL unknown */
	const char *cmdline;         /* argv joined by spaces, at most 256 bytes (evidence), NULL unknown */
	int64_t start_ns, end_ns;    /* CLOCK_REALTIME; end 0: alive at the lake's newest word from its host */
	int64_t last_active_ns;      /* its newest sample (idle processes make none), else its start */
	uint64_t cpu_ns;             /* on CPU in all, as of last_active_ns */
	uint64_t rss_bytes;          /* resident at its newest sample (0 unknown) */
	int64_t run_id;              /* the lake's run number, -1 none */
	bool run_root;               /* the root process of its run (the engine, the batch worker) */
};

struct sw_input {
	const struct sw_host *hosts;
	size_t nhosts;
	const struct sw_process *procs;
	size_t nprocs;
	const struct an_input *runs; /* the runs and their steps (tune.h), for idle time inside runs */
	int64_t since_ns, now_ns;    /* the window judged; now: the lake's newest heartbeat or record */
};

/* ---- thresholds (tracer.conf's sweep_* keys; the anchors' values by default) ---------------- */

struct sw_config {
	/* Idle host, GCP's idle-VM recommender: under cpu_cores for cpu_share of the time, and under
	 * rx/tx bytes per second for net_share of it, observed for at least min_observed_ns. */
	double gcp_cpu_cores;        /* 0.03 vCPU */
	double gcp_cpu_share;        /* 0.97 */
	double gcp_rx_bytes_per_s;   /* 2000 */
	double gcp_tx_bytes_per_s;   /* 1000 */
	double gcp_net_share;        /* 0.95 */
	int64_t gcp_min_observed_ns; /* 1 day */
	/* Idle host, AWS Trusted Advisor: a day whose average CPU is at most aws_cpu_percent of the
	 * host's CPUs and whose network is at most aws_net_bytes is a low day; at least aws_days of them
	 * in the last aws_window_days days (a day: aws_day_ns, shortened in tests). */
	double aws_cpu_percent;      /* 10 */
	uint64_t aws_net_bytes;      /* 5 MB */
	uint32_t aws_days;           /* 4 */
	uint32_t aws_window_days;    /* 14 */
	int64_t aws_day_ns;          /* 86400 s */
	/* Idle time inside a run: a gap between steps, or the tail after the last, at least this long. */
	int64_t run_idle_min_ns;     /* 300 s */
	/* A run's root (engine, batch worker) alive with nothing under it working for this long. */
	int64_t worker_idle_ns;      /* 1 h */
	/* An interactive session (Jupyter, RStudio, a shell under sshd or tmux) that did nothing this long. */
	int64_t session_idle_ns;     /* 4 h */
	/* A process alive at least idle_proc_age_ns, idle for idle_proc_idle_ns, holding idle_proc_rss. */
	int64_t idle_proc_age_ns;    /* 24 h */
	int64_t idle_proc_idle_ns;   /* 6 h */
	uint64_t idle_proc_rss_bytes; /* 1 GiB */
	/* Reserved but unused: a step that ran at least reserved_min_ns under an allocation (a CPU or
	 * memory limit) of which it used at most reserved_cpu_share (its p95 cores) or
	 * reserved_mem_share (its peak), leaving at least reserved_min_cores or reserved_min_bytes. */
	int64_t reserved_min_ns;     /* 10 min */
	double reserved_cpu_share;   /* 0.25 */
	double reserved_mem_share;   /* 0.25 */
	double reserved_min_cores;   /* 1 */
	uint64_t reserved_min_bytes; /* 1 GiB */
};

/* The defaults above. */
void sw_config_default(struct sw_config *c);

/* ---- findings ------------------------------------------------------------------------ */

enum sw_kind {
	SW_IDLE_HOST_GCP = 0,        /* "idle_host_gcp" */
	SW_IDLE_HOST_AWS,            /* "idle_host_aws" */
	SW_RUN_IDLE,                 /* "run_idle": the run held the host, no step ran */
	SW_WORKER_IDLE,              /* "worker_idle" */
	SW_SESSION_IDLE,             /* "session_idle" */
	SW_PROCESS_IDLE_MEMORY,      /* "process_idle_memory" */
	SW_RESERVED_UNUSED,          /* "reserved_unused": a step's allocation far above its use */
	SW_KINDS,
};
const char *sw_kind_name(enum sw_kind k);

struct sw_finding {
	enum sw_kind kind;
	uint32_t host;               /* index into hosts; UINT32_MAX: a run whose host is not among them */
	int64_t start_ns, end_ns;    /* the wasted span */
	int64_t run_id;              /* -1 none */
	int64_t proc;                /* index into procs, -1 none */
	/* Its figures, as evidence (NaN or 0 where they do not apply): */
	double idle_share_cpu, idle_share_net; /* idle hosts: the share of the observed time under the limits */
	uint32_t low_days, days;     /* AWS: low days of the days observed */
	double observed_s;           /* the time the judgement rests on: GCP the beats' time, AWS the days'
	                              * observed time, the others their span */
	uint64_t rss_bytes;          /* memory held: an idle process's or worker's own, a session's
	                              * processes' alive at now, summed */
	/* reserved_unused: its step (index into runs->steps, else -1), the allocation and what it used of
	 * it (cores: NaN where it had no CPU limit; bytes: 0 where no memory limit), and which of the two
	 * was found unused. */
	int64_t step;
	double cpu_limit, cpu_used;
	uint64_t mem_limit_bytes, mem_used_bytes;
	bool cpu_unused, mem_unused;
	/* Cost of the span: the host's price per hour x hours (a process: its share of the host's memory);
	 * < 0 when the host has no price. */
	double cost_usd;
	double price_per_hour;       /* < 0 unknown */
	enum cost_price_source price_source;
	char evidence[512];          /* one sentence a person can check: which processes, which hours */
};

/*
 * Every finding over in (most costly first, unpriced last, then by start),
 * with the hosts priced from their own price (config) or the table (NULL:
 * none; cost_host_price, a run's host by cost_run_price). *out malloc'd
 * (free; NULL when none). 0, -ENOMEM, or -EINVAL: a NULL argument, since
 * after now, a process whose host or parent is out of range or whose
 * parents loop, a run's steps past the array, a threshold that cannot be
 * (a share outside [0, 1], a duration <= 0, aws_window_days 0 or above
 * 3660).
 */
int sw_sweep(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
	     struct sw_finding **out, size_t *n);

#endif /* TRACER_ANALYSIS_SWEEP_H */
