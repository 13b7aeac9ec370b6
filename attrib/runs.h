/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs in daemon mode: which process starts a run, and which run every
 * process belongs to (docs/live.md). tracer run knows its run (the
 * command it started); the daemons find them:
 *
 *   TRACER_RUN_ID / TRACER_PIPELINE in its environment   -> "env"
 *   a `run` rule of the rules file                       -> "rule"
 *   the command a `tracer run` started                   -> "tracer_run"
 *   a workflow engine's invocation                       -> "nextflow", "snakemake", "cwltool",
 *                                                           "cromwell", "miniwdl", "toil"
 *   SLURM_JOB_ID / AWS_BATCH_JOB_ID in its environment   -> "slurm", "aws_batch"
 *
 * A process in a run never starts another (nesting: Snakemake inside a
 * SLURM job is the job's run, whose engine is snakemake); its children
 * are in its run. runs_assign() decides every process not decided yet
 * (new ones, and those that exec'd), parents first, in linear time; it
 * also notes what the run's processes reveal of its identity (engine,
 * workflow, environment ids), each from the earliest process that shows it.
 *
 * Memory: one struct run per run live (RUNS_MAX at most; more are counted
 * in `dropped` and their processes stay in no run), 8 bytes per process
 * (proc.run, proc.live_attr), nothing else per process.
 */
#ifndef TRACER_ATTRIB_RUNS_H
#define TRACER_ATTRIB_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proctab.h"
#include "steps.h"

#define RUNS_MAX 4096u          /* runs live at once */
#define RUN_STR_MAX 256u        /* bytes kept of an identity string, NUL included */
#define RUN_COMMAND_MAX 1024u   /* bytes kept of the root's argument area */

enum run_detect {
	RUN_BY_NONE = 0,
	RUN_BY_ENV,
	RUN_BY_RULE,
	RUN_BY_TRACER_RUN,
	RUN_BY_NEXTFLOW,
	RUN_BY_SNAKEMAKE,
	RUN_BY_CWLTOOL,
	RUN_BY_SLURM,
	RUN_BY_AWS_BATCH,
	RUN_BY_CROMWELL,   /* `cromwell run X.wdl` (java -jar cromwell.jar run ...) */
	RUN_BY_MINIWDL,    /* `miniwdl run X.wdl` */
	RUN_BY_TOIL,       /* toil-cwl-runner, toil-wdl-runner */
};

enum run_state { RUN_RUNNING = 0, RUN_SUCCEEDED, RUN_FAILED, RUN_LOST };

/* "env", "tracer_run", ...; "running", "succeeded", ... */
const char *run_detect_name(enum run_detect d);
const char *run_state_name(enum run_state s);

/* What the run's processes that left the table (evicted) contributed: their exit figures. */
struct run_fold {
	uint64_t processes;
	uint64_t cpu_ns, read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
};

enum run_env {
	RUN_ENV_PIPELINE, RUN_ENV_RUN_ID, RUN_ENV_SLURM, RUN_ENV_AWS,
	RUN_ENV_SLURM_NAME, RUN_ENV_SUBMIT_DIR, RUN_ENV_SUBMIT_HOST, /* a SLURM job's: its join (docs/live.md) */
	RUN_ENV_KEYS
};

struct run {
	bool used;
	enum run_detect detected_by;
	enum run_state state;
	char key[96];                 /* BOOT-TGID-START */
	uint32_t root_tgid;
	uint64_t root_start_ns;       /* CLOCK_MONOTONIC */
	bool root_preexisting;
	bool root_exited;
	uint32_t root_exit_raw;
	uint64_t end_ts_ns;           /* CLOCK_MONOTONIC, when ended */
	/* Identity: each part from the earliest process that shows it. */
	enum step_engine engine;      /* GENERIC: none seen */
	uint64_t engine_start_ns;
	char workflow[RUN_STR_MAX];   /* the engine's project, Snakefile or CWL file; "" unknown */
	char other_engine[16];        /* an engine the step rules do not know (cromwell, miniwdl, toil); "" none */
	char run_name[RUN_STR_MAX];
	char rule_name[RUN_STR_MAX];  /* a `run` rule's NAME (detected_by rule) */
	char env[RUN_ENV_KEYS][RUN_STR_MAX];
	uint64_t env_start_ns[RUN_ENV_KEYS];
	char command[RUN_COMMAND_MAX]; /* the root's argument area (redacted), NUL-separated */
	uint32_t command_len, command_argc;
	/* The live records (report/live.c). */
	uint64_t update;              /* records written */
	uint64_t emitted_ts_ns;       /* newest record time the last one covered */
	uint64_t emitted_at_ns;       /* the loop's clock then */
	uint64_t figures_at_ns;       /* the loop's clock when samples alone last caused a record */
	bool final_sent;
	struct run_fold folded;
};

struct runs {
	struct run *v;
	uint32_t high;                /* slots [0, high) have been used */
	uint32_t cap;
	uint32_t live;                /* used slots */
	uint64_t started, ended, dropped;
	char boot[40];                /* this boot's id, hex: the first part of every key */
	const char *argv[TR_ARGV_MAX + 1]; /* scratch: one image's argument pointers */
};

void runs_init(struct runs *r, const char *boot_hex);
void runs_free(struct runs *r);

/* The key of the run whose first process is root: BOOT-TGID-START (docs/live.md). */
void runs_key(const struct runs *r, const struct proc *root, char *out, size_t size);

/* The run a process is in, or NULL. */
static inline struct run *runs_of(const struct runs *r, const struct proc *p)
{
	return p->run && p->run <= r->high && r->v[p->run - 1].used ? &r->v[p->run - 1] : NULL;
}

/*
 * Decide every process whose run is not decided yet (parents first).
 * In run mode (t->root_pid) the traced command is the one run and
 * nothing else starts one.
 * steps gives the engine classification (steps_engine_of()). Returns how
 * many runs started.
 */
uint32_t runs_assign(struct runs *r, struct proctab *t, struct steps *steps);

/* Eviction hook (proctab.on_evict): fold an evicted member's figures into its run. */
void runs_on_evict(void *ctx, const struct proc *p);

/* After their final records: free the slots of the runs that ended; their processes are left in no run. */
void runs_release_ended(struct runs *r, struct proctab *t);

#endif /* TRACER_ATTRIB_RUNS_H */
