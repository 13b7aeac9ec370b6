/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Steps: which unit of a pipeline each process belongs to, recognised from
 * what runs - no plugin in the pipeline - and what each step cost.
 *
 *   TRACER_STEP=x in its environment      -> step "x"                (engine "env", wins over all)
 *   bash .command.run in work/ab/cdef12... -> step "nf-ab/cdef12"     (one per Nextflow task directory)
 *   snakemake's child bash -c '...'        -> step "smk-PID"          (one per Snakemake job, named by rule
 *   python -m snakemake --allowed-rules R  ->                          where argv says it)
 *   a child of cwltool                     -> step "cwl-PID"          (one per tool invocation)
 *   SLURM_JOB_ID=J SLURM_STEP_ID=S         -> step "slurm-J.S"
 *   SLURM_JOB_ID=J SLURM_JOB_NAME=snakejob.RULE.N.sh or nf-NAME_(TAG)
 *                                          -> step "slurm-J"           (the task: named RULE or NAME)
 *   any other child of the traced command
 *   or of an engine                        -> step "proc-PID"         (generic: one per child subtree)
 *
 * A process that does not start a step belongs to its parent's; the traced
 * command itself and engine processes belong to none. docs/processor.md,
 * "Steps", has the rules in full and their order.
 *
 * steps_build() runs over the process table after proctab_mark_tree(): in
 * run mode the root's tree, in daemon mode (no root pid) every process. It
 * sets each process's `step` (index + 1 into the table, 0 for none) and
 * fills the table, in start order. Linear time: each process is classified
 * once, the walk up its parents is memoised in `proc->step` itself. Memory:
 * the table (bounded by `max`), its strings (bounded by a byte budget) and
 * two hash indexes and the tool names interned, reused from one build to the next; nothing per
 * process.
 *
 * The table refers to processes of the process table (main, first_failed,
 * run.engine_proc): valid until that table changes (the next record or
 * sweep). Strings belong to the step table and live until the next build.
 */
#ifndef TRACER_ATTRIB_STEPS_H
#define TRACER_ATTRIB_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "proctab.h"

#define STEPS_DEFAULT_MAX 65536u
#define STEPS_MAX_LIMIT (1u << 22)          /* a larger bound is refused */
#define STEPS_STRING_BUDGET (16u << 20)     /* bytes of ids, names and work directories */
#define STEPS_TOOL_BUDGET (1u << 20)        /* bytes of tool names (common/intern.h's entries) */
#define STEP_MAX_TOOLS 16u                  /* distinct tools listed per step */
#define STEP_NAME_MAX 256u                  /* bytes of a name or id kept, NUL included */
#define STEP_NAME_TOOLS 3u                  /* tools a derived name lists ("bwa mem | samtools view") */

enum step_engine {
	STEP_ENGINE_GENERIC = 0,
	STEP_ENGINE_NEXTFLOW,
	STEP_ENGINE_SNAKEMAKE,
	STEP_ENGINE_CWLTOOL,
	STEP_ENGINE_SLURM,
	STEP_ENGINE_ENV,
};

/* "generic", "nextflow", "snakemake", "cwltool", "slurm", "env". */
const char *step_engine_name(enum step_engine e);

/* One tool of a step: its name and how many of the step's processes ran it. */
struct step_tool {
	const char *name;
	uint32_t processes;
	uint64_t first_start_ns; /* start of the first of them: tools are listed in this order */
};

struct step {
	const char *id;        /* unique in the table */
	const char *name;      /* the rule, TRACER_STEP's value, or derived from its tools (docs) */
	const char *workdir;   /* Nextflow: the task's work directory; NULL otherwise */
	const char *rule;      /* Snakemake: the rule, where argv reveals it; NULL otherwise */
	enum step_engine engine;
	uint32_t processes;
	uint32_t running;      /* processes without an exit record */
	uint32_t failed_processes; /* ended non-zero: an exit status, a signal (SIGPIPE too) or the OOM killer */
	uint32_t oom_killed;
	uint64_t start_ns;     /* earliest process start, CLOCK_MONOTONIC */
	uint64_t end_ns;       /* latest exit, CLOCK_MONOTONIC; 0 if none exited (see running) */
	/* Sums over the processes that exited (the kernel's figures at exit, saturating). */
	uint64_t cpu_ns;
	/* Memory (stepmem.h): what a memory limit for the step must hold. */
	uint64_t peak_rss_bytes;          /* the concurrent peak: its processes' resident sets at one instant */
	uint64_t rss_sum_of_peaks_bytes;  /* the largest sum of peaks of processes whose lives overlapped */
	uint64_t max_process_rss_bytes;   /* the largest single process's peak */
	bool peak_rss_partial;            /* an exited process's own peak is a bound, not exact (docs) */
	bool memcg_own;                   /* its processes had a memory cgroup to themselves */
	bool memcg_v1;                    /* that cgroup is in the v1 memory hierarchy */
	uint64_t memcg_id;
	uint64_t memcg_peak_bytes;        /* that cgroup's own high-water mark (0: not known) */
	uint64_t read_bytes, write_bytes, rchar, wchar;
	uint64_t net_tx_bytes, net_rx_bytes;
	/*
	 * Its allocation, each of the two: the largest limit any of its
	 * processes ran under (step_proc_cpu_limit_millicores, memory_bytes of
	 * proc.alloc: at its exit, or its newest sample while it runs), else the largest SLURM job allocation on this
	 * node in its processes' environment (step_slurm_allocation), else
	 * (CPUs only) the threads its engine asked for
	 * (step_requested_millicores); 0 when none.
	 */
	uint64_t cpu_limit_millicores;
	uint64_t memory_limit_bytes;
	bool io_partial;       /* an exited process had no I/O accounting: the I/O sums are partial */
	/* Tools: distinct names in order of first start; the list is bounded. */
	uint32_t n_tools;
	uint32_t tools_more;   /* processes whose tool is not listed (the list was full) */
	struct step_tool tools[STEP_MAX_TOOLS];
	/* The main process (the one that started the step; the earliest if several did) and its end. */
	const struct proc *main;
	bool exited;           /* main has an exit record */
	uint32_t exit_raw;     /* main's raw wait status (tr_exit.exit_code) when exited */
	bool failed;           /* main ended non-zero; a generic step only when the script failed on it (docs) */
	const struct proc *first_failed; /* the step's first process (by exit time) that failed, or NULL */
	/* Private to steps.c. */
	uint8_t kind;
	bool has_body;
	bool job_task;         /* a SLURM batch job a workflow engine submitted: its script and what the
				* script runs itself (the engine's `touch` of a done-file) are plumbing */
	const char *key;
	uint64_t main_start_ns;
	uint64_t slurm_millicores, slurm_memory_bytes;
	uint64_t requested_millicores;
};

/* Who ran: from allowlisted environment values and the engine's command line. NULL: not known. */
struct run_info {
	const char *pipeline;          /* TRACER_PIPELINE */
	const char *run_id;            /* TRACER_RUN_ID */
	const char *slurm_job_id;      /* SLURM_JOB_ID */
	const char *aws_batch_job_id;  /* AWS_BATCH_JOB_ID */
	const char *slurm_job_name;    /* SLURM_JOB_NAME */
	const char *slurm_submit_dir;  /* SLURM_SUBMIT_DIR */
	const char *slurm_submit_host; /* SLURM_SUBMIT_HOST */
	const char *engine;            /* "nextflow", "snakemake", "cwltool" */
	const char *run_name;          /* Nextflow: -name NAME */
	const char *engine_dir;        /* the engine's launch directory (Snakemake: the Snakefile's, see docs) */
	const struct proc *engine_proc; /* the outermost engine process, if one ran */
};

struct steps_map {
	struct steps_slot *slots;
	uint32_t cap, used;
};

struct steps_chunk;

struct steps {
	struct step *v;            /* v[0 .. n), in start order */
	uint32_t n, cap, max;
	uint64_t dropped;          /* step starts turned away: the table held `max` steps */
	uint64_t unassigned;       /* processes left without a step because of that */
	uint64_t strings_dropped;  /* names and tools not kept: the string budget was spent */
	struct run_info run;
	uint32_t host_cpus;        /* CPUs online (steps_init): an affinity this wide is no limit; 0 unknown */
	/* Private to steps.c. */
	uint64_t seed;
	uint64_t string_budget;
	uint64_t string_bytes;
	struct steps_chunk *chunks;
	struct steps_map by_key, by_id;
	struct intern tool_names;  /* one copy of each tool name, so that a step's list compares pointers */
	const char **argv;         /* scratch: one image's argument pointers */
};

/*
 * The CPUs a process could use at most when it ended, in thousandths: the
 * tighter of its CPU cgroups' bandwidth limit and its affinity (a cpuset or
 * taskset); 0 when neither held it below host_cpus (0: affinity unjudged).
 */
uint64_t step_proc_cpu_limit_millicores(const struct proc_alloc *a, uint32_t host_cpus);

/*
 * The SLURM job's allocation on this node, as SLURM puts it in the
 * environment of every process of the job: SLURM_CPUS_ON_NODE CPUs (in
 * thousandths); SLURM_MEM_PER_NODE MiB, else SLURM_MEM_PER_CPU MiB x
 * those CPUs (in bytes). 0 where not set or not a whole number in range.
 */
void step_slurm_allocation(const struct proc_image *im, uint64_t *millicores, uint64_t *bytes);

/*
 * The task a SLURM job's name says a workflow engine submitted it for, into
 * task (size bytes): Snakemake's jobscript `snakejob.RULE.N.sh` gives RULE
 * (*engine STEP_ENGINE_SNAKEMAKE), Nextflow's `nf-NAME_(TAG)` or `nf-NAME`
 * gives NAME (STEP_ENGINE_NEXTFLOW). Its length, or 0 (task "") for any
 * other name, or one that does not fit.
 */
size_t step_job_task(const char *job_name, char *task, size_t size, enum step_engine *engine);

/*
 * The CPUs a workflow engine asked for the process, in thousandths: its
 * OMP_NUM_THREADS, which Snakemake sets to a job's `threads:` (with the
 * other BLAS thread counts: snakemake/shell.py); 0 where not set or not a
 * whole number in range. A step's allocation where neither the kernel
 * nor SLURM gave one.
 */
uint64_t step_requested_millicores(const struct proc_image *im);

/* max steps (1 .. STEPS_MAX_LIMIT; 0 for STEPS_DEFAULT_MAX); seed randomises the hash indexes. */
int steps_init(struct steps *s, uint32_t max, uint64_t seed);
void steps_free(struct steps *s);

/*
 * Assign every process in scope to a step and fill the table (replacing
 * what a previous build made). Call after proctab_mark_tree() in run
 * mode. Returns 0, or -ENOMEM (what was built so far stays consistent:
 * processes not reached have step 0).
 */
int steps_build(struct steps *s, struct proctab *t);

/*
 * The step's processes that ended non-zero (failed_processes) other than
 * the main process whose end is the step's failure: in a step that
 * succeeded, every status its script tested or tolerated - grep -q that
 * found nothing, a writer stopped by a closed pipe, test - none of them a
 * failure. `failed` implies main ended non-zero, so main is among them.
 */
static inline uint32_t step_nonzero_exits(const struct step *s)
{
	return s->failed_processes - (s->failed && s->failed_processes > 0);
}

/*
 * The workflow engine p's own images run (NEXTFLOW, SNAKEMAKE, CWLTOOL),
 * as the step rules recognise it; GENERIC for none or a fork that did not
 * exec. Uses s's scratch: not during a build.
 */
enum step_engine steps_engine_of(struct steps *s, const struct proc *p);

/* The step of a process, or NULL. */
static inline const struct step *steps_of(const struct steps *s, const struct proc *p)
{
	return p->step && p->step <= s->n ? &s->v[p->step - 1] : NULL;
}

#endif /* TRACER_ATTRIB_STEPS_H */
