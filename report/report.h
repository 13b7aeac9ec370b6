/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run report (schema tracer.run.v1, DESIGN.md and docs/processor.md)
 * and the human summary, both written from the process table.
 *
 * Only what was measured is written as a number: anything not measured
 * (yet) is null, never a made-up zero.
 */
#ifndef TRACER_REPORT_REPORT_H
#define TRACER_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtab.h"
#include "decode.h"
#include "hostid.h"
#include "json.h"
#include "proctab.h"
#include "session.h"
#include "steps.h"

#define REPORT_SCHEMA "tracer.run.v1"
#define SUMMARY_MAX_LINES 400   /* process lines in the summary, then "... N more" */
#define SUMMARY_COLLAPSE_MIN 5  /* siblings with one tool and status: more than this collapse */
#define SUMMARY_COLLAPSE_SHOW 2 /* ... of which this many are shown */
#define SUMMARY_MAX_STEPS 50    /* step lines in the summary, then "... N more" */

/* Everything known about losses and the agent's own state. */
struct report_agent {
	uint64_t kernel_drops;         /* BPF ring-buffer writes that failed */
	uint64_t ring_drops;           /* records the shared ring dropped */
	uint64_t ring_resets;          /* corrupt ring positions skipped (each loses at least one record) */
	uint64_t ring_bytes_discarded;
	uint64_t decode_errors;        /* records refused by the decoder */
	uint64_t decode_by_error[DECODE_ERR_COUNT];
	uint64_t table_full;           /* records turned away by the process table's bound */
	uint64_t no_memory;            /* exec images lost to a failed allocation */
	uint64_t records;              /* user records received */
	uint64_t records_copied;       /* as the collector counted them */
	uint64_t processes_evicted;
	uint64_t execs_dropped;        /* earlier images not kept (per-process limit, image budget) */
	uint64_t argv_dropped;         /* argument areas not kept (image budget) */
	uint64_t oom_unmatched;
	uint64_t samples;              /* sample records applied */
	uint64_t series_dropped;       /* samples whose point was not kept (series budget) */
	uint64_t files_dropped;        /* file records not kept (bounds, budget) */
	uint64_t cgroups_dropped;      /* cgroup paths not kept (bounds, budget) */
	uint64_t excluded;             /* processes the kernel's exclude rules stopped reporting */
	uint32_t max_processes;
	bool collector_lost;           /* the collector went away without an end record */
	bool end_record;               /* the collector's end record arrived */
	bool control_end;              /* tracer run said how the command ended */
	bool interrupted;              /* stopped by SIGTERM/SIGINT */
};

struct report_input {
	const char *const *command;    /* CMD ARGS, as given after -- */
	size_t ncommand;
	bool exit_known;
	int exit_code;                 /* the command's status as tracer reports it */
	uint64_t start_ns;             /* CLOCK_REALTIME */
	bool end_known;
	uint64_t end_ns;               /* CLOCK_REALTIME */
	uint64_t mono_to_real_ns;      /* add to CLOCK_MONOTONIC (mod 2^64) for CLOCK_REALTIME */
	const struct cgtab *cgroups;   /* cgroup paths by id; NULL: none known */
	const struct steps *steps;     /* steps_build() of the same table; NULL: no steps */
	const char *run_key;           /* the run's key in the lake (docs/live.md); NULL: not known */
	const struct hostid *host;     /* the host it ran on ("host"); NULL: no "host" object */
	uint64_t stall_after_ns;       /* signals: no progress this long is "stalled" (0: off) */
	uint64_t io_wait_after_ns;     /* signals: this much I/O wait in one process is "io_wait" (0: off) */
	uint64_t net_wait_after_ns;    /* signals: this much time in network calls is "net_wait" (0: off) */
	struct report_agent agent;
};

/* Fill the parts of the agent figures the session knows. */
void report_agent_from_session(struct report_agent *a, const struct session *s);

/* Every lost record, whatever the cause (saturating sum). */
uint64_t report_dropped(const struct report_agent *a);

/*
 * Write the JSON report / the text summary of the root's tree (every
 * process in the table when there is no root). 0 or a negative errno.
 */
int report_json(struct obuf *o, struct proctab *t, const struct report_input *in);
int report_summary(struct obuf *o, struct proctab *t, const struct report_input *in);

/*
 * The run's TL_RUN_REPORT record for the lake (include/lake.h), into o: {"report": report_json's text,
 * "summary": report_summary's}. 0, or o's error (the record did not fit).
 */
int report_record(struct obuf *o, const struct obuf *report, const struct obuf *summary);

/*
 * "host": the host a run ran on (docs/processor.md, "Host identity"), in
 * a report and in every live record: cloud, instance_type, instance_id,
 * region (null when unknown), cpus, memory_bytes (null when unknown),
 * price_per_hour (a number; absent when unknown).
 */
void report_write_host(struct json *j, const struct hostid *h);

/* "uid": the run's first process's user, null when not known. */
void report_write_uid(struct json *j, const struct proc *root);

/* src made safe for a terminal or a log line (see report.c), NUL-terminated in size bytes. */
void report_safe_text(char *dst, size_t size, const char *src);

/* Helpers, exposed for tests. */
const char *report_signal_name(unsigned sig, char *buf, size_t size);
void report_format_duration(uint64_t ns, char *buf, size_t size);
void report_format_bytes(uint64_t bytes, char *buf, size_t size);

#endif /* TRACER_REPORT_REPORT_H */
