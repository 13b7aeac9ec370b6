/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake: where verified batches are stored. The only module that
 * speaks SQL; the HTTP side and the CLI see these functions only, so a
 * server database can take SQLite's place behind the same calls.
 *
 * One batch is one transaction: its row in batches, each of its records
 * that the lake does not hold yet (records are keyed by host, stream and
 * seq, and a batch's seqs are looked up with its stream's row locked, so
 * a batch sent again, or re-formed with other boundaries, adds nothing
 * twice), the gaps in the host's seqs, and the rows derived from the
 * records (processes, samples, files, cgroups, signals, agent counters,
 * losses, runs, steps, run processes, keys; live runs and their steps,
 * attributions and signals; the hosts' heartbeats). Either all of it is stored
 * or none. The schema is in docs/lake.md.
 *
 * A store is used by one thread at a time.
 */
#ifndef TRACER_LAKE_STORE_H
#define TRACER_LAKE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch_format.h"

#define STORE_SCHEMA_VERSION 13
#define STORE_BUSY_TIMEOUT_MS 5000  /* wait this long for another writer (a sqlite3 shell) before giving up */
/* PostgreSQL: the advisory lock under which one ingest creates or upgrades the schema ("trace" 1). */
#define STORE_PG_SCHEMA_LOCK "8390876135276281857"
#define STORE_RUN_ROWS_MAX 100000   /* processes, steps or signals materialised from one run record, each */
#define STORE_RUN_KEY_MAX 256       /* bytes of a run key (BOOT-TGID-START is about 60) */
#define STORE_ARGV_JSON_MAX (64u << 10) /* bytes of an exec's argv or env as JSON (an argument area is 4 KiB) */
#define STORE_PRICE_MAX 1e9        /* a host's price per hour above this (US dollars) is no price: NULL */

enum store_err {
	STORE_OK = 0,
	STORE_E_OPEN = -1,      /* the database file cannot be opened or created */
	STORE_E_SCHEMA = -2,    /* not a lake, or a schema version this build does not know */
	STORE_E_SQL = -3,       /* SQLite failed: disk full, I/O error, damaged file */
	STORE_E_BUSY = -4,      /* another connection held the write lock past the busy timeout */
	STORE_E_NOMEM = -5,
	STORE_E_NOT_FOUND = -6, /* no such key, run or batch */
	STORE_E_READONLY = -7,  /* opened read-only */
};

const char *store_strerror(int err);

struct store;

/*
 * Open (create if missing, with the schema) the lake at path: an SQLite
 * file, ":memory:" for a private in-memory lake, or a PostgreSQL database
 * named by a libpq URI (postgresql://...; docs/lake.md). read_only: never
 * create or write (the CLI). On error, err says what failed and what to do.
 */
int store_open(struct store **out, const char *path, bool read_only, char *err, size_t errlen);
/*
 * A PostgreSQL lake's connection, for a sandbox: its socket's family (AF_UNIX, AF_INET, AF_INET6) and TCP
 * port. An SQLite lake: family 0. 0 or -errno.
 */
int store_remote(const struct store *s, int *family, uint16_t *port);
/* Whether path names a PostgreSQL database (a libpq URI) rather than an SQLite file. */
bool store_is_uri(const char *path);
/* path (a file, or a PostgreSQL URI) as a message may show it: a URI's password starred. */
void store_display_name(const char *path, char *out, size_t n);
void store_close(struct store *s);

/* SQLite's message for the last failure, for logs. */
const char *store_last_error(const struct store *s);

/* ---- batches -------------------------------------------------------- */

/* What storing one batch did; the ingest's reply reports it. */
struct store_result {
	bool duplicate;          /* a batch with this hash was stored before: nothing was done */
	uint32_t records;        /* frames in the batch */
	uint32_t new_records;    /* of which stored now */
	uint32_t dup_records;    /* of which the lake already held (same host and seq) */
	uint32_t conflicts;      /* of the duplicates, how many differ from what is stored (crc) */
	uint32_t gaps;           /* new gaps in the host's seqs */
	uint32_t unknown;        /* records of a type the lake derives nothing from: in records only */
	uint32_t undecodable;    /* records the decoder refused: in records only */
	uint32_t bad_reports;    /* run reports that are not a JSON object with a "report" object */
	uint32_t bad_live_records; /* TL_RUN records that are not a tracer.live.v1 object with a key; TL_TOOLS
				    * and TL_HOST records of another shape (docs/lake.md) */
	uint32_t runs;           /* run reports stored, and live runs seen for the first time */
	uint32_t keys_enrolled;  /* new keys announced (TL_KEY_ANNOUNCE) */
	uint32_t keys_refused;   /* announcements refused: id not the key's, or the id taken by another key or host */
	uint32_t run_rows_dropped; /* a record's processes, steps or signals beyond STORE_RUN_ROWS_MAX; a report's
				    * steps whose id an earlier step of the report has */
};

/* 1 if a batch with this hash is stored, 0 if not, or a store_err. */
int store_batch_exists(struct store *s, const uint8_t hash[BATCH_HASH_LEN]);

/*
 * Store a verified, opened batch: hdr and hash from batch_verify, frames
 * from batch_open (already checked: lengths, crc, seqs). received_ns:
 * CLOCK_REALTIME. STORE_OK with *res filled (res->duplicate when the batch
 * was stored before), or a store_err with nothing stored.
 */
int store_batch(struct store *s, const struct batch_header *hdr, const uint8_t hash[BATCH_HASH_LEN],
		const uint8_t *frames, size_t raw_len, size_t wire_len, uint64_t received_ns, struct store_result *res);

/* ---- upkeep: partitions and retention (maintain.c) -------------------- */

/* PostgreSQL: the advisory lock under which one ingest at a time does the upkeep ("trace" 2). */
#define STORE_PG_UPKEEP_LOCK "8390876135276281858"
/* lake_retention and lake_retention_runs by default (tracer.conf): 90 and 366 days */
#define STORE_RETENTION_NS (90ull * 86400 * 1000000000)
#define STORE_RUNS_RETENTION_NS (366ull * 86400 * 1000000000)
/* PostgreSQL: partitions are made for yesterday to this many days ahead */
#define STORE_PARTITION_AHEAD_DAYS 7
/* How often store_batch() runs the upkeep, and how soon again after a failure or another ingest's turn. */
#define STORE_UPKEEP_EVERY_NS (3600ull * 1000000000)
#define STORE_UPKEEP_RETRY_NS (60ull * 1000000000)

/* What one upkeep did. */
struct store_upkeep {
	bool skipped;                /* PostgreSQL: another ingest was doing it */
	uint64_t partitions_dropped; /* PostgreSQL: whole days past lake_retention */
	uint64_t rows_deleted;       /* SQLite's past lake_retention; runs and processes past lake_retention_runs;
				      * ledger rows and gaps */
};

/*
 * Keep the time series (records, samples, files, heartbeats, agent_counters, losses, the batches ledger,
 * gaps) series_ns, runs
 * with their steps, processes and signals runs_ns; 0: for ever (the default of a store opened).
 */
void store_set_retention(struct store *s, uint64_t series_ns, uint64_t runs_ns);

/*
 * The upkeep at real time now_ns, in one transaction: PostgreSQL's partitions from yesterday to
 * STORE_PARTITION_AHEAD_DAYS ahead made; then, once a day, what is past retention removed: PostgreSQL's
 * partitions whose whole day is (DROP TABLE), SQLite's rows (DELETE), on both the ledger's and gaps' rows,
 * runs and processes past theirs. STORE_OK with *out (may be NULL) filled, or a store_err.
 */
int store_maintain(struct store *s, uint64_t now_ns, struct store_upkeep *out);

/* ---- keys ----------------------------------------------------------- */

/*
 * A key enrolled by rotation (a stored TL_KEY_ANNOUNCE): STORE_OK with
 * its public key and the host it signs for, STORE_E_NOT_FOUND, or an error.
 */
int store_rotation_key(struct store *s, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t public_key[BATCH_PUBKEY_LEN],
		       uint8_t host_id[BATCH_HOST_ID_LEN]);

/* Note a key of the keys file in the keys table (source 'file'), for the audit trail. Idempotent. */
int store_note_file_key(struct store *s, const uint8_t key_id[BATCH_KEY_ID_LEN],
			const uint8_t public_key[BATCH_PUBKEY_LEN], const uint8_t *host_id, uint64_t now_ns);

/* ---- reading (tracer report) ---------------------------------------- */

/* An INTEGER column that may be NULL (unknown). */
struct store_int {
	bool known;
	int64_t v;
};

/* What a run or a step is doing now: rates over the last sample interval of its newest live record. */
struct store_live {
	struct store_int cpu_millicores, rss_bytes, read_bytes_per_s, write_bytes_per_s, net_tx_bytes_per_s,
		net_rx_bytes_per_s;
};

/*
 * A run (table runs, docs/lake.md): from a tracer run report, from the
 * daemons' live records, or both (a report merged into its live row).
 * Strings are NULL when unknown; every string came from a host.
 */
struct store_run {
	int64_t run_id;             /* the number tracer report shows */
	char host_id[2 * BATCH_HOST_ID_LEN + 1];
	struct store_int start_ns, end_ns; /* CLOCK_REALTIME */
	struct store_int exit_code, signal; /* the root's (a report: tracer run's exit status, no signal) */
	struct store_int last_update_ns;    /* CLOCK_REALTIME: the newest live record's update_ns, or a report's end */
	struct store_int update_seq;        /* the newest live record's update counter */
	struct store_int processes, running_processes, steps, signals;
	struct store_int root_pid, preexisting;
	struct store_int cpu_ns, read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes; /* totals */
	struct store_live live;
	const char *command;        /* the command, words joined by spaces ("" if unknown) */
	const char *command_json;   /* the command as stored: a valid JSON array, NULL if unknown */
	const char *summary;        /* the text tracer run printed (NULL if none) */
	const char *state;          /* running, succeeded, failed, lost */
	const char *run_key, *engine, *pipeline, *pipeline_run_id, *run_name, *detected_by;
	const char *slurm_job_id, *aws_batch_job_id;
	bool has_stored_report;     /* the row holds a tracer run report (store_run_report gives it) */
	/* The host it ran on, as its processor identified it (docs/processor.md, "Host identity"); its user. */
	const char *host_cloud, *host_instance_type, *host_instance_id, *host_region;
	struct store_int host_cpus, host_memory_bytes, uid;
	double host_price_per_hour; /* US dollars, when host_price_known */
	bool host_price_known;
	const char *host_name;      /* its nodename (NULL: unknown) */
	/* A SLURM job's: its name and where it was submitted from; the run and step that submitted it, and when,
	 * once the lake joined them (docs/live.md, "Cluster jobs"). */
	const char *slurm_job_name, *slurm_submit_dir, *slurm_submit_host, *joined_step_id;
	struct store_int joined_run_id, submitted_ns;
	struct store_int jobs;      /* cluster jobs joined to it: their steps, processes and signals are its */
};

/* A step of a run (table steps). */
struct store_step {
	int64_t idx;                /* position of first appearance */
	const char *id, *name, *state, *engine, *rule, *workdir;
	const char *tools;          /* tool names joined by ", " ("" if none) */
	const char *tools_json;     /* as stored: a valid JSON array, NULL if unknown */
	struct store_int start_ns, end_ns, last_update_ns; /* CLOCK_REALTIME */
	struct store_int exit_code, signal, failed, processes, running, failed_processes, nonzero_exits, oom_killed;
	struct store_int cpu_ns, peak_rss_bytes, peak_rss_partial, rss_sum_of_peaks_bytes, memcg_peak_bytes;
	struct store_int read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
	struct store_live live;
	struct store_int cpu_limit_millicores, memory_limit_bytes; /* its allocation; NULL: none or unknown */
	/* A step of a cluster job joined to the run (docs/live.md, "Cluster jobs"): the job's id and host, when
	 * its sbatch started (real time) and how long the job waited in the queue; NULL for the run's own. */
	const char *job_id, *job_host;
	struct store_int submitted_ns, queued_ns;
};

/* A process attributed to a run (table processes), with what the lake knows of it. */
struct store_process {
	char host_id[2 * BATCH_HOST_ID_LEN + 1], boot_id[2 * BATCH_HOST_ID_LEN + 1];
	int64_t tgid, start_ns;     /* CLOCK_MONOTONIC of its boot: with host and boot, the process's key */
	struct store_int ppid, start_real_ns, end_real_ns; /* end: NULL until its exit record */
	struct store_int exit_code; /* NULL when killed or not exited */
	struct store_int signal, core_dumped; /* NULL until its exit record */
	struct store_int oom_killed;
	struct store_int utime_ns, stime_ns, runtime_ns; /* the exit record's */
	struct store_int peak_rss_bytes; /* the image's own peak, else the samples' highest, else rusage's */
	struct store_int read_bytes, write_bytes, rchar, wchar; /* NULL when the kernel did not account its I/O */
	struct store_int net_tx_bytes, net_rx_bytes;
	const char *exe, *cwd, *tool, *step;
	const char *argv_json;      /* a valid JSON array of strings, NULL if no exec was seen */
	const char *cgroup;         /* its cgroup v2 path, NULL if unknown */
	const char *peak_rss_source; /* exit, sampled, rusage; NULL with no peak */
	bool files_traced;          /* its file accesses were traced: store_process_files lists them */
	/* What the row says that the peak, its source and the I/O and network figures above are made of. */
	struct {
		bool exited;        /* its exit record arrived */
		struct store_int own_peak, maxrss, sampled_peak; /* the image's at exit, rusage's, the samples' */
		struct store_int exit_flags, state_flags;        /* the exit record's TR_EXIT_*, TR_PSTATE_* */
		struct store_int sampled_tx, sampled_rx;         /* the newest sample's network bytes */
	} from;
};

/* A file a process opened, the modes of all its opens of that path merged. */
struct store_file {
	const char *path;
	const char *mode;           /* r, w or rw */
};

struct store_signal {
	const char *kind;           /* oom_kill, killed, failed, stalled, io_wait, net_wait, ... */
	const char *source;         /* record, run_report, live */
	bool has_pid;
	int64_t pid;
	struct store_int start_ns;  /* the process's start (CLOCK_MONOTONIC); NULL for report signals */
	const char *step, *tool;    /* NULL if none */
	const char *detail;         /* the signal's JSON object (valid JSON), NULL if none */
};

/* Called once per row; a non-zero return stops the walk and is returned. Strings live until it returns. */
typedef int (*store_run_fn)(void *ctx, const struct store_run *r);
typedef int (*store_step_fn)(void *ctx, const struct store_step *st);
typedef int (*store_process_fn)(void *ctx, const struct store_process *p);
typedef int (*store_file_fn)(void *ctx, const struct store_file *f);
typedef int (*store_signal_fn)(void *ctx, const struct store_signal *sig);
typedef int (*store_text_fn)(void *ctx, const char *text, size_t len);

/* Every run, by start time (runs without one last), then number. */
int store_runs(struct store *s, store_run_fn fn, void *ctx);
/*
 * The runs named by name: its number; else its run key (the live key,
 * BOOT-TGID-START); else the pipeline's run id (several runs may share
 * one: each, by number). STORE_E_NOT_FOUND if none.
 */
int store_run(struct store *s, const char *name, store_run_fn fn, void *ctx);
/* A run's steps, by position of first appearance. */
int store_run_steps(struct store *s, int64_t run_id, store_step_fn fn, void *ctx);
/* The processes attributed to a run (processes.run_id), in start order. */
int store_run_processes(struct store *s, int64_t run_id, store_process_fn fn, void *ctx);
/* The files a process opened, one per path, in order of first access. */
int store_process_files(struct store *s, const struct store_process *p, store_file_fn fn, void *ctx);
/* A run's signals, in arrival order. */
int store_run_signals(struct store *s, int64_t run_id, store_signal_fn fn, void *ctx);
/*
 * The tracer.run.v1 report a run's row holds (has_stored_report), as
 * sent, with "state" set to the run's state, signals_json's elements (a
 * JSON array made by the caller: the analysis' slower_than_usual; NULL:
 * none) added to its "signals", and tune_json (a JSON object, NULL: none)
 * as its "tune": one call of fn with the JSON text. STORE_E_NOT_FOUND
 * when the run holds no report.
 */
int store_run_report(struct store *s, int64_t run_id, const char *signals_json, const char *tune_json,
		     store_text_fn fn, void *ctx);

/* ---- reading for the analysis (tracer tune, tracer cost: read_tune.c) ---- */

/*
 * Walks over the runs of one pipeline (pipeline NULL: every run), each
 * over all of them at once (never a query per run or step), for
 * view/tune_input.c to build the analysis' input from. docs/lake.md,
 * "Reading for the analysis", says where each figure comes from. Strings
 * are NULL when unknown, live until the callback returns, and every one
 * came from a host.
 */

/* A run (table runs) with the host it ran on. */
/* A run's host, as its runs row gives it (columns host_id .. host_price_per_hour). */
struct store_tune_host {
	const char *host_id;                /* hex */
	const char *cloud, *instance_type, *instance_id, *region;
	struct store_int cpus, memory_bytes;
	bool price_known;                   /* price_per_hour was a finite number */
	double price_per_hour;
};

struct store_tune_run {
	int64_t run_id;
	const char *run_key, *pipeline, *pipeline_run_id, *run_name, *state, *engine;
	struct store_int start_ns, end_ns; /* CLOCK_REALTIME */
	struct store_int cpu_ns;            /* runs.cpu_ns, else its processes' (or report processes') summed */
	struct store_int uid;
	struct store_tune_host host;
};

/* Where a task's summed figures come from. */
enum store_task_source {
	STORE_TASK_PROCESSES = 0, /* its processes rows (the kernel's records): every figure, waits included */
	STORE_TASK_REPORT,        /* no measured processes row: a tracer run report's processes (no waits) */
	STORE_TASK_STEP,          /* neither: the step's own columns (no waits, no lifetimes) */
};

/*
 * A task: a steps row with its processes' figures summed (processes.run_id
 * = steps.run_id and processes.step = steps.step_id), each process's from
 * its exit record, else from its newest sample. NULL (known false): nothing
 * to sum. The bytes figures fall back to the step's own columns when its
 * processes have none.
 */
struct store_tune_task {
	int64_t run_id, idx;                /* the step's key: steps.idx within the run */
	const char *step_id, *name, *state, *engine;
	const char *rule;                   /* Snakemake: the rule, where the job's command line said it */
	const char *tools;                  /* tool names joined by ", " ("" if none) */
	struct store_int start_ns, end_ns;  /* the step's, else its processes' first start and last end */
	bool failed, running;
	enum store_task_source source;
	struct store_int processes;
	struct store_int cpu_ns;            /* on CPU */
	struct store_int proc_ns;           /* lifetimes summed: exit (or newest sample) minus start */
	struct store_int run_delay_ns, iowait_ns, blocked_ns, net_wait_ns; /* unknown unless from processes */
	struct store_int idle_ns;           /* each process's life less its children's and its busy time, summed
	                                     * (docs/tune.md, "The breakdown"); unknown unless from processes */
	struct store_int reclaim_ns;        /* in direct reclaim: unknown unless from processes that measured it */
	struct store_int oom_kills;         /* processes the OOM killer ended (the larger of processes and the step) */
	struct store_int oom_limit_bytes;   /* the largest memcg_limit_bytes of its oom_kill signals */
	struct store_int cpu_limit_millicores, memory_limit_bytes; /* its allocation (steps); NULL: none */
	/* A joined cluster job's step (docs/live.md, "Cluster jobs"): when its sbatch started (NULL: not a
	 * job's step) and the host the job ran on, whose allocation it held. */
	struct store_int submitted_ns;
	struct store_tune_host job_host;
	struct store_int peak_rss_bytes;    /* steps.peak_rss_bytes (concurrent), else the largest process peak */
	struct store_int read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
};

/*
 * One sample of a process of a selected run, in real time: rows of one
 * process are consecutive, in record order (their time order on a host).
 */
struct store_tune_sample {
	int64_t run_id;
	const char *step;                   /* the process's step id (processes.step); NULL: none (the engine) */
	int64_t process;                    /* the process's number in the lake (stable within the walk) */
	int64_t real_ns;                    /* ts_ns + the process's start_real_ns - start_ns */
	struct store_int runtime_ns, rss_bytes;
};

/* A file a task's process opened: one row per files row (not merged). */
struct store_tune_file {
	int64_t run_id;
	const char *step;                   /* the process's step id */
	const char *host_id, *path;
	const char *mode;                   /* r, w or rw */
};

typedef int (*store_tune_run_fn)(void *ctx, const struct store_tune_run *r);
typedef int (*store_tune_task_fn)(void *ctx, const struct store_tune_task *t);
typedef int (*store_tune_sample_fn)(void *ctx, const struct store_tune_sample *s);
typedef int (*store_tune_file_fn)(void *ctx, const struct store_tune_file *f);

/*
 * One read transaction around the walks, so that they see one state of the
 * lake while tracer-ingest writes (WAL: the writer is not held up). end
 * after begin succeeded, whatever happened in between. newest: the walks
 * see only the newest runs of each pipeline, that many (0: every run).
 */
int store_tune_begin(struct store *s, uint32_t newest);
void store_tune_end(struct store *s);
/* The runs, by start time (runs without one last), then number. */
int store_tune_runs(struct store *s, const char *pipeline, store_tune_run_fn fn, void *ctx);
/* Every step of those runs, by run number then steps.idx. */
int store_tune_tasks(struct store *s, const char *pipeline, store_tune_task_fn fn, void *ctx);
/*
 * Every sample of their processes whose real-time offset is known (rows of
 * one process consecutive, by run number then process, each process's in
 * table order), then every file opened by a process of theirs that is in a
 * step (in no order).
 */
int store_tune_activity(struct store *s, const char *pipeline, store_tune_sample_fn on_sample,
			store_tune_file_fn on_file, void *ctx);

/* ---- reading for the dashboard (tracer-web: read_web.c) -------------------- */

/*
 * A host's agent health, from what its batches brought (docs/web.md,
 * "Hosts"). NULL (not known): nothing of that kind arrived yet.
 */
struct store_host {
	const char *host_id;                 /* hex */
	struct store_int first_seen_ns, last_seen_ns; /* its first and latest stored batch (the lake's clock) */
	struct store_int batches, records;
	struct store_int lag_ns;             /* its latest batch: stored minus signed (the two hosts' clocks) */
	struct store_int gaps_open;          /* ranges of seqs not delivered (yet) */
	struct store_int missing_records;    /* records in them */
	struct store_int kernel_drops, ring_drops; /* its newest TR_COUNTERS: since that collector started */
	struct store_int lost_evicted, lost_quarantined, lost_corrupt, lost_ring; /* TL_LOSS records, summed */
	struct store_int runs, running_runs;
	const char *cloud, *instance_type, *region; /* of its newest run */
	struct store_int cpus, memory_bytes;
};
typedef int (*store_host_fn)(void *ctx, const struct store_host *h);
/* Every host that sent a stored batch, by id. */
int store_hosts(struct store *s, store_host_fn fn, void *ctx);

/* What the lake holds, for /metrics. */
struct store_counts {
	int64_t hosts, batches, records, runs, runs_running, runs_succeeded, runs_failed, processes, signals;
};
int store_counts(struct store *s, struct store_counts *c);

/*
 * Per-pipeline figures for /metrics (docs/web.md, "/metrics"), aggregated in SQL, the pipelines capped: the
 * STORE_WEB_PIPELINES_MAX pipelines with the newest runs (their runs' latest start) each by name, every
 * other one folded into one row with pipeline NULL. Runs as the lake lists them (a cluster job joined to
 * a run is not one: its steps are that run's, in place of the step that submitted it).
 */
#define STORE_WEB_PIPELINES_MAX 20
/* The step durations' buckets' upper bounds, seconds (a histogram's le; +Inf is the ended count). */
#define STORE_WEB_BUCKETS 9
#define STORE_WEB_BUCKET_BOUNDS { 1, 5, 15, 60, 300, 900, 3600, 14400, 86400 }

enum store_web_kind { STORE_WEB_RUNS = 0, STORE_WEB_STEPS = 1 };
enum store_web_step_state { STORE_STEP_RUNNING, STORE_STEP_SUCCEEDED, STORE_STEP_FAILED, STORE_STEP_LOST,
	STORE_STEP_OTHER, STORE_STEP_STATES };

/*
 * One row: the runs of a pipeline in one state (kind STORE_WEB_RUNS: state is running, succeeded, failed,
 * lost or other, runs the count), or its steps of one name as the lake has it (STORE_WEB_STEPS: name; the
 * step's name, else its id, else ""; nextflow: a Nextflow task's, whose name carries a tag to take off).
 * Rows come by kind, then rank; a pipeline's steps by their newest end (else start), newest first.
 */
struct store_web_pipeline {
	enum store_web_kind kind;
	int64_t rank;                        /* 1 .. STORE_WEB_PIPELINES_MAX; STORE_WEB_PIPELINES_MAX + 1: others */
	const char *pipeline;                /* NULL: the others; "" a run without one; came from a host */
	const char *state;                   /* STORE_WEB_RUNS */
	int64_t runs;
	const char *name;                    /* STORE_WEB_STEPS: came from a host */
	bool nextflow;
	int64_t steps;                       /* all of them */
	int64_t by_state[STORE_STEP_STATES]; /* of them, by steps.state (NULL or another: other) */
	/* The ended ones (not running, start and end known, end at or after start): how many, how many took at
	 * most each bound of STORE_WEB_BUCKET_BOUNDS (cumulative), and their durations summed, ns. */
	int64_t ended, le[STORE_WEB_BUCKETS];
	double duration_sum_ns;
};
typedef int (*store_web_pipeline_fn)(void *ctx, const struct store_web_pipeline *p);
int store_web_pipelines(struct store *s, store_web_pipeline_fn fn, void *ctx);

/* ---- reading for the sweep (tracer sweep: read_sweep.c) -------------------- */

/*
 * What view/sweep_input.c builds the sweep's input from (docs/lake.md,
 * "Reading for the sweep"): the hosts' heartbeats and the processes alive
 * in a window, each walk one statement. Strings are NULL when unknown,
 * live until the callback returns, and every one came from a host.
 */

/* A host's heartbeat (table heartbeats, one TL_HOST record): what it did over [start_ns, end_ns). */
struct store_beat {
	const char *host_id;                /* hex */
	const char *boot_id;                /* hex; NULL when the record's was not 32 hex digits */
	int64_t seq;                        /* the record's */
	int64_t start_ns, end_ns;           /* CLOCK_REALTIME, the host's clock; start < end */
	struct store_int beat;              /* 1, 2, ... since its processor started */
	struct store_int cpus;              /* online CPUs */
	struct store_int cpu_busy_ns, cpu_idle_ns; /* over the interval, summed over CPUs */
	struct store_int mem_total_bytes, mem_used_bytes; /* at end_ns */
	struct store_int net_rx_bytes, net_tx_bytes;      /* over the interval, every interface but lo */
	struct store_int runs, steps, processes;          /* active at end_ns */
	/* The host, as its processor identified it (docs/processor.md, "Host identity"). */
	const char *cloud, *instance_type, *instance_id, *region;
	struct store_int host_cpus, host_memory_bytes;
	bool price_known;                   /* price_per_hour was a finite number from 0 to 1e9 */
	double price_per_hour;              /* US dollars */
};

/* A process (table processes) alive at some time after the window's start, with its newest sample. */
struct store_sweep_process {
	const char *host_id, *boot_id;      /* hex */
	int64_t tgid, start_ns;             /* CLOCK_MONOTONIC of its boot: with host and boot, the process's key */
	struct store_int ppid, parent_start_ns; /* its parent's pid, and start (from its fork record) */
	struct store_int start_real_ns, end_real_ns; /* CLOCK_REALTIME; end NULL: no exit record (alive) */
	const char *exe, *tool;
	const char *argv_json;              /* a valid JSON array of strings, NULL if no exec was seen */
	struct store_int run_id;            /* processes.run_id: NULL, in no run */
	bool run_root;                      /* the root of a run: a run's key (BOOT-TGID-START) names it */
	struct store_int last_sample_ns;    /* CLOCK_REALTIME of its newest sample; NULL: none, or no offset known */
	struct store_int sample_runtime_ns, sample_rss_bytes; /* at that sample; NULL: no sample */
	struct store_int cpu_ns;            /* its own CPU time: at exit if it exited, else at its newest sample */
	/* (Every count above is NULL, too, where the host's value would read negative: above 2^63.) */
};

typedef int (*store_beat_fn)(void *ctx, const struct store_beat *b);
typedef int (*store_sweep_process_fn)(void *ctx, const struct store_sweep_process *p);

/* Every heartbeat that ends after since_ns (end_ns > since_ns), by host then start. */
int store_sweep_beats(struct store *s, int64_t since_ns, store_beat_fn fn, void *ctx);
/*
 * Every process alive at some time after since_ns (end_real_ns NULL or
 * after it), by host, boot, then start (tgid for a tie).
 */
int store_sweep_processes(struct store *s, int64_t since_ns, store_sweep_process_fn fn, void *ctx);
/*
 * The lake's newest word from any host, for "now": the latest heartbeat
 * end and stored batch (hosts.last_seen_ns), whichever is later.
 * STORE_E_NOT_FOUND when the lake has neither.
 */
int store_sweep_newest(struct store *s, int64_t *now_ns);

/* ---- reading for tracer export table (read_export.c) ------------------------ */

/*
 * One table of the lake a row at a time, each walk one statement over the whole window (never one per run),
 * read as it streams: on PostgreSQL one row is held at a time (sql.h, sql_prepare_streamed), so a month of a
 * fleet's processes never has to fit in memory. Because of that, a callback may not read the lake itself
 * (no nested walk). docs/lake.md, "Reading for the export", says what each gives. The window: the runs
 * that started at since_ns or later (the samples: taken then or later); all: every run (or sample), those
 * without a start (or a real time) too. run_id is the run a report shows the row under: a cluster job's
 * rows are those of the run it is joined to (docs/live.md, "Cluster jobs"). Strings are NULL when unknown,
 * live until the callback returns, and every one came from a host.
 */
struct store_export_window {
	int64_t since_ns; /* CLOCK_REALTIME */
	bool all;
};

/* A signal of a run (table signals, run_id set), with the record it came from. */
struct store_export_signal {
	int64_t run_id, signal_id;          /* signal_id: arrival order in the lake */
	const char *host_id, *boot_id;      /* the record's host and boot (hex) */
	struct store_signal sig;            /* start_ns: the process's start, CLOCK_MONOTONIC of boot_id */
};

/* A sample of a process (table samples): its process's key and run, and the figures at that moment. */
struct store_export_sample {
	struct store_int run_id;            /* NULL: its process is in no run */
	const char *host_id, *boot_id;      /* hex */
	int64_t tgid, start_ns;             /* the process's key: start_ns its CLOCK_MONOTONIC start */
	struct store_int real_ns;           /* when it was taken, CLOCK_REALTIME (NULL: its process's offset unknown) */
	struct store_int runtime_ns, utime_ns, stime_ns, rss_bytes, hiwater_rss_bytes;
	struct store_int read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
	struct store_int iowait_ns, blocked_ns, run_delay_ns, nr_threads;
};

typedef int (*store_export_step_fn)(void *ctx, int64_t run_id, const struct store_step *st);
typedef int (*store_export_process_fn)(void *ctx, int64_t run_id, const struct store_process *p);
typedef int (*store_export_signal_fn)(void *ctx, const struct store_export_signal *sig);
typedef int (*store_export_sample_fn)(void *ctx, const struct store_export_sample *s);

/* The runs (as store_runs: cluster jobs joined to a run are its), by start time (none last), then number. */
int store_export_runs(struct store *s, struct store_export_window w, store_run_fn fn, void *ctx);
/* Their steps (as store_run_steps: a job's in place of the step that submitted it), by lake run, then idx. */
int store_export_steps(struct store *s, struct store_export_window w, store_export_step_fn fn, void *ctx);
/* Their processes (as store_run_processes), by lake run, then start (tgid, host, boot for a tie). */
int store_export_processes(struct store *s, struct store_export_window w, store_export_process_fn fn, void *ctx);
/* Their signals (as store_run_signals), in arrival order. */
int store_export_signals(struct store *s, struct store_export_window w, store_export_signal_fn fn, void *ctx);
/* Every sample of any process (in a run or not) taken in the window, by host, stream, seq (the table's key). */
int store_export_samples(struct store *s, struct store_export_window w, store_export_sample_fn fn, void *ctx);

#endif /* TRACER_LAKE_STORE_H */
