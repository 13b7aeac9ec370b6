/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Daemon mode's live records (docs/live.md): once a second the runs the
 * processor found (attrib/runs.h) are looked at; each that changed, or
 * that has not been written for LIVE_REFRESH_NS while it runs, gets a
 * TL_RUN record: the run as it stands, the steps that changed, the
 * processes whose run, step or tool is new, and the signals found since.
 *
 * It also decides which exited processes the table must keep
 * (PROC_F_HELD), step by step, never a part of one: every member of a
 * step still running (its figures need them all), of a generic step that
 * may yet be judged failed when its script ends, and of a step that ended
 * less than the table's grace ago (so that all its members go in the same
 * sweep, and no later record describes it by what is left of it).
 * Everything else of a run is folded into the run when evicted
 * (runs_on_evict()).
 *
 * Processes in no run get their tool in TL_TOOLS records: each once, and
 * again after an exec (PROC_F_TOOL_SENT).
 */
#ifndef TRACER_REPORT_LIVE_H
#define TRACER_REPORT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "hostid.h"
#include "runs.h"
#include "session.h"
#include "steps.h"

#define LIVE_SCHEMA "tracer.live.v1"
#define TOOLS_SCHEMA "tracer.tools.v1"
#define LIVE_REFRESH_NS (5ULL * 1000000000ULL) /* a running run is written at least this often */
#define LIVE_FIGURES_NS (2ULL * 1000000000ULL) /* new samples alone cause a record at most this often */

/* Hands one TL_RUN or TL_TOOLS payload to the spool: 0, or -errno (fatal). */
typedef int (*live_emit_fn)(void *ctx, uint16_t type, const void *payload, uint32_t len);

struct live_agg;  /* live.c */
struct live_step; /* live.c */

struct live {
	uint64_t mono_to_real_ns;
	uint64_t io_wait_after_ns, net_wait_after_ns; /* signal thresholds (0: off) */
	const struct hostid *host;    /* the host, in every record's header ("host"); NULL: none */
	live_emit_fn emit;
	void *emit_ctx;
	/* Scratch, grown as needed. */
	struct live_agg *agg;         /* per run slot */
	uint32_t agg_cap;
	struct live_step *step;       /* per step of the build */
	uint32_t step_cap;
	struct proc **members;        /* every run's processes, run by run (agg[i].first, .count) */
	uint32_t members_cap;
	uint32_t *run_steps;          /* every run's steps, run by run (agg[i].step_first, .step_count) */
	uint32_t run_steps_cap;
	/* Figures. */
	uint64_t records;      /* TL_RUN records written */
	uint64_t bytes;
	uint64_t builds;       /* step builds */
	uint64_t built_changes; /* the table's changes at the last build */
	uint64_t built_newest_ts; /* the table's newest record then */
	uint64_t built_at_ns;
	uint64_t now_ns;       /* the loop's clock in this cycle */
};

void live_init(struct live *lv);
void live_free(struct live *lv);

/*
 * One look at every run: decide new processes' runs, rebuild the steps
 * when records arrived, write what changed. now_ns: the loop's
 * CLOCK_MONOTONIC. 0, or the emitter's error.
 */
int live_cycle(struct live *lv, struct session *ss, struct steps *steps, struct runs *runs, uint64_t now_ns);

#endif /* TRACER_REPORT_LIVE_H */
