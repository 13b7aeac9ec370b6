/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's tables and columns (schema.h), and the SQL built from them: a
 * new lake's, and each upgrade's. A column's `since` is the version that
 * added it, its `until` the version that removed it. A version's upgrade
 * creates its tables, adds its columns to the older tables, copies each
 * table whose key it changed into a new one of the version's layout, runs
 * its own updates of old rows (upgrades[]), drops the indexes and columns
 * it removed, then creates its indexes. A new lake is created at once with
 * every column, so a new lake and an upgraded one hold the same columns,
 * as tests/test_lake_store.c checks. The same table gives PostgreSQL's
 * DDL (lake_schema_pg, below; tests/test_lake_pg_schema.c): text only,
 * this file links no database library.
 */
#include "schema.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "lake.h"
#include "records.h"
#include "db.h"
#include "store.h"

/* Column shorthands: type, NOT NULL, the version that added it. */
#define COL(n, t, f, v) { .name = n, .type = t, .flags = f, .since = v }
#define INT(n) COL(n, LK_INT, 0, 1)
#define INTV(n, v) COL(n, LK_INT, 0, v)
#define INT_NN(n) COL(n, LK_INT, LK_NOT_NULL, 1)
#define ZERO(n, v) { .name = n, .type = LK_INT, .flags = LK_NOT_NULL, .since = v, .dflt = "0" } /* a count */
#define TEXT(n) COL(n, LK_TEXT, 0, 1)
#define TEXTV(n, v) COL(n, LK_TEXT, 0, v)
#define TEXT_NN(n) COL(n, LK_TEXT, LK_NOT_NULL, 1)
#define REALV(n, v) COL(n, LK_REAL, 0, v)
#define ID(n) COL(n, LK_ID, 0, 1)
/* 8: the spool a row came from (include/batch_format.h); 0 for the rows of before */
#define STREAM ZERO("stream", 8)
/* 9: when the ingest received the row's batch (a time-partitioned table's partition key); the rows of before
 * take their batch's (upgrades[]) */
#define RECEIVED ZERO(LAKE_PARTITION_COLUMN, 9)
/* 10: the same for the other rows a record makes, the agent's counters and its losses */
#define RECEIVED_10 ZERO(LAKE_PARTITION_COLUMN, 10)

/*
 * The columns of a row one record fills (lake_table.record_size): from its batch, and from the record's bytes
 * (the record's struct S, field f; enum lake_from).
 */
#define FROM_BATCH(n, t, w) { .name = n, .type = t, .flags = LK_NOT_NULL, .since = 1, .src = { .from = w } }
#define B_HOST FROM_BATCH("host_id", LK_TEXT, LF_HOST)
#define B_SEQ FROM_BATCH("seq", LK_INT, LF_SEQ)
#define B_BOOT FROM_BATCH("boot_id", LK_TEXT, LF_BOOT)
#define B_STREAM                                                                                         \
	{ .name = "stream", .type = LK_INT, .flags = LK_NOT_NULL, .since = 8, .dflt = "0",                     \
	  .src = { .from = LF_STREAM } }
#define B_RECEIVED(v)                                                                                    \
	{ .name = LAKE_PARTITION_COLUMN, .type = LK_INT, .flags = LK_NOT_NULL, .since = v, .dflt = "0",        \
	  .src = { .from = LF_RECEIVED } }
#define FIELD(S, f) .off = offsetof(S, f), .len = sizeof(((S *)0)->f)
/* Sources: an unsigned field, from record version rv on (0: all); a char array; a field store.c converts. */
#define S_UINT(S, f, rv) { .from = LF_UINT, .rec_version = rv, FIELD(S, f) }
#define S_CHARS(S, f) { .from = LF_CHARS, FIELD(S, f) }
#define S_DERIVED(S, f, d) { .from = LF_DERIVED, .derived = d, FIELD(S, f) }
/* A conversion that also reads the record's flags (LD_RECLAIM, LD_IMAGE_PEAK). */
#define S_FLAGGED(S, f, d) { .from = LF_DERIVED, .derived = d, FIELD(S, f), .flags_off = offsetof(S, flags) }
/* 1 if the field holds a bit of mask (LD_BIT). */
#define S_BIT(S, f, m) { .from = LF_DERIVED, .derived = LD_BIT, FIELD(S, f), .mask = m }
/* A column an upsert fills (struct lake_fill): merged as m (enum lake_merge), from the source that follows. */
#define FILL(c, m, ...) { .column = c, .merge = m, .src = __VA_ARGS__ }
/* The key's first columns in every upsert of a host's record: its host and boot. */
#define HOST_BOOT_KEY FILL("host_id", LM_KEY, { .from = LF_HOST }), FILL("boot_id", LM_KEY, { .from = LF_BOOT })
/* An upsert of record S into table t by its fills f, S's bytes no column holds in k. */
#define UPSERT(t, f, S, k) { .table = t, .fills = f, .nfills = N(f), ROWS_OF(S, k) }
/* Columns so made, of schema version v. */
#define R_UINT(n, fl, v, S, f, rv) { .name = n, .type = LK_INT, .flags = fl, .since = v, .src = S_UINT(S, f, rv) }
#define R_CHARS(n, v, S, f) { .name = n, .type = LK_TEXT, .since = v, .src = S_CHARS(S, f) }
#define R_DERIVED(n, t, fl, v, S, f, d) { .name = n, .type = t, .flags = fl, .since = v, .src = S_DERIVED(S, f, d) }
#define SKIP(S, f, w) { FIELD(S, f), .why = w }
/* A record header's fields no column holds. */
#define SKIP_HDR(S)                                                                                      \
	SKIP(S, hdr.type, "the record's type: its table"),                                             \
		SKIP(S, hdr.version, "which fields it has (rec_version: a field it lacks is NULL)"),            \
		SKIP(S, hdr.cpu, "the CPU the collector read it on: says nothing of the process")
#define ROWS_OF(S, s) .record_size = sizeof(S), .skip = s, .nskip = N(s)

#define IDX(n, c, u, v) { .name = n, .columns = c, .unique = u, .since = v }
#define IDX_UNTIL(n, c, u, v, w) { .name = n, .columns = c, .unique = u, .since = v, .until = w }
#define IDX_WHERE(n, c, w, v) { .name = n, .columns = c, .where = w, .since = v }

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(n, v, c, ...) { .name = n, .since = v, .cols = c, .ncols = N(c), __VA_ARGS__ }
#define INDEXES(i) .idx = i, .nidx = N(i)

static const struct lake_column schema_version_cols[] = { INT_NN("version") };

static const struct lake_column hosts_cols[] = {
	COL("host_id", LK_TEXT, LK_KEY, 1), INT_NN("first_seen_ns"), INT_NN("last_seen_ns"),
	{ .name = "max_seq", .type = LK_INT, .flags = LK_NOT_NULL, .since = 1, .until = 8, .dflt = "0" },
	ZERO("batches", 1), ZERO("records", 1), INT("last_batch_seq"), TEXT("last_batch_hash"), TEXT("last_key_id"),
	TEXT("last_boot_id"),
};

/* 8: each spool of a host: its seqs and its chain of batches */
static const struct lake_column streams_cols[] = {
	COL("host_id", LK_TEXT, LK_NOT_NULL, 8), ZERO("stream", 8), COL("first_seen_ns", LK_INT, LK_NOT_NULL, 8),
	COL("last_seen_ns", LK_INT, LK_NOT_NULL, 8), ZERO("max_seq", 8), ZERO("batches", 8), ZERO("records", 8),
	INTV("last_batch_seq", 8), TEXTV("last_batch_hash", 8),
};

static const struct lake_column keys_cols[] = {
	COL("key_id", LK_TEXT, LK_KEY, 1), TEXT_NN("public_key"), TEXT("host_id"),
	{ .name = "source", .type = LK_TEXT, .flags = LK_NOT_NULL, .since = 1, .check = "source IN ('file', 'rotation')" },
	TEXT("announced_by"), TEXT("batch_hash"), INT_NN("enrolled_ns"),
};

static const struct lake_column batches_cols[] = {
	ID("batch_id"), COL("hash", LK_TEXT, LK_NOT_NULL | LK_UNIQUE, 1), TEXT_NN("host_id"), TEXT_NN("key_id"),
	TEXT_NN("boot_id"), INT_NN("batch_seq"), INT_NN("first_seq"), INT_NN("last_seq"), INT_NN("nrecords"),
	INT_NN("compression"), INT_NN("body_len"), INT_NN("raw_len"), INT_NN("wire_len"), INT_NN("created_ns"),
	INT_NN("mono_to_real_ns"), TEXT_NN("prev_hash"), TEXT_NN("chain"), INT_NN("received_ns"),
	ZERO("records_new", 1), ZERO("records_duplicate", 1), ZERO("records_conflicting", 1),
	ZERO("records_unknown", 1), ZERO("records_undecodable", 1), ZERO("bad_run_reports", 1), ZERO("gaps", 1),
	ZERO("bad_live_records", 3), STREAM,
};
static const struct lake_index batches_idx[] = {
	IDX_UNTIL("batches_host", "host_id, batch_seq", false, 1, 8),
	IDX("batches_stream", "host_id, stream, batch_seq", false, 8),
	IDX("batches_received", "received_ns", false, 9), /* 9: retention (lake/maintain.c) */
};

static const struct lake_column gaps_cols[] = {
	TEXT_NN("host_id"), INT_NN("from_seq"), INT_NN("to_seq"), INT_NN("found_ns"), TEXT_NN("batch_hash"),
	ZERO("filled", 1), STREAM,
};

/* Every record as it came: its spool frame (struct tr_frame) and payload, its batch, what the lake made of it. */
#define FRAME(n) R_UINT(#n, LK_NOT_NULL, 1, struct tr_frame, n, 0)
static const struct lake_column records_cols[] = {
	B_HOST, FRAME(seq), FRAME(src_pos), FRAME(src_gen), FRAME(type), FRAME(flags),
	{ .name = "ts_ns", .type = LK_INT, .since = 1, .src = { .from = LF_TS } }, FRAME(len), FRAME(crc),
	/* 12: lz4 (a live record's JSON, ~19 KB: pglz was a fifth of the backend's time in make bench-live) */
	{ .name = "payload", .type = LK_BLOB, .flags = LK_NOT_NULL, .since = 1, .lz4 = 12,
	  .src = S_DERIVED(struct tr_frame, len, LD_PAYLOAD) },
	FROM_BATCH("batch_hash", LK_TEXT, LF_HASH),
	{ .name = "note", .type = LK_TEXT, .since = 1, .src = { .from = LF_NOTE } },
	B_STREAM, B_RECEIVED(9),
};


static const struct lake_column processes_cols[] = {
	TEXT_NN("host_id"), TEXT_NN("boot_id"), INT_NN("tgid"), INT_NN("start_ns"), INT("start_real_ns"),
	INT("end_real_ns"), INT("ppid"), INT("parent_start_ns"), INT("uid"), INT("gid"), TEXT("comm"), TEXT("exe"),
	TEXT("argv"), TEXT("cwd"), TEXT("env"), INT("exec_flags"), ZERO("execs", 1), INT("cgroup_id"),
	INT("cgroup_v1_id"), INT("mnt_ns"), INT("pid_ns"), INT("fork_ts_ns"), INT("exec_ts_ns"), INT("exit_ts_ns"),
	INT("exit_raw"), INT("exit_code"), INT("signal"), INT("core_dumped"), ZERO("oom_killed", 1), INT("utime_ns"),
	INT("stime_ns"), INT("runtime_ns"), INT("maxrss_bytes"), INT("read_bytes"), INT("write_bytes"),
	INT("cancelled_write_bytes"), INT("rchar"), INT("wchar"), INT("syscr"), INT("syscw"), INT("nvcsw"),
	INT("nivcsw"), INT("min_flt"), INT("maj_flt"), INT("run_delay_ns"), INT("nr_threads"), INT("exit_flags"),
	INT("net_tx_bytes"), INT("net_rx_bytes"), INT("iowait_ns"), INT("blocked_ns"), INT("net_wait_ns"),
	INT("files_dropped"), INT("state_flags"), INT("last_pid"), INTV("peak_rss_bytes", 2),
	INTV("memcg_peak_bytes", 2), INTV("run_id", 3), TEXTV("step", 3), TEXTV("tool", 3), INTV("reclaim_ns", 7),
	/* 11: the allocation it ran under at its end (records version 4: NULL in the older ones) */
	INTV("memcg_limit_bytes", 11), INTV("cpu_quota_millicores", 11), INTV("cpus_allowed", 11),
	/* 12: it ran before the processor started (a live record's attribution says so) */
	INTV("preexisting", 12),
};
static const struct lake_index processes_idx[] = {
	IDX("processes_run", "run_id", false, 3),
	/* 13: the sbatch that submitted a cluster job, by the directory the job says it was submitted from */
	IDX_WHERE("processes_sbatch", "cwd", "comm = 'sbatch'", 13),
};

#define SAMPLE(n) R_UINT(#n, 0, 1, struct tr_sample, n, 0)
#define SAMPLE_NN(n) R_UINT(#n, LK_NOT_NULL, 1, struct tr_sample, n, 0)
/* 11: the allocation a process runs under at each sample (record version 4: NULL in the older ones) */
#define SAMPLE_11(n) R_UINT(#n, 0, 11, struct tr_sample, n, 4)
static const struct lake_column samples_cols[] = {
	B_HOST, B_SEQ, B_BOOT, SAMPLE_NN(tgid), SAMPLE_NN(start_ns),
	R_UINT("ts_ns", LK_NOT_NULL, 1, struct tr_sample, hdr.ts_ns, 0), SAMPLE(ppid), SAMPLE(runtime_ns),
	SAMPLE(utime_ns), SAMPLE(stime_ns), SAMPLE(rss_bytes), SAMPLE(hiwater_rss_bytes), SAMPLE(read_bytes),
	SAMPLE(write_bytes), SAMPLE(rchar), SAMPLE(wchar), SAMPLE(net_tx_bytes), SAMPLE(net_rx_bytes),
	SAMPLE(iowait_ns), SAMPLE(blocked_ns), SAMPLE(net_wait_ns), SAMPLE(run_delay_ns), SAMPLE(cgroup_id),
	SAMPLE(uid), SAMPLE(nr_threads), SAMPLE(state_flags), SAMPLE(flags), R_CHARS("comm", 1, struct tr_sample, comm),
	{ .name = "reclaim_ns", .type = LK_INT, .since = 7,
	  .src = S_FLAGGED(struct tr_sample, reclaim_ns, LD_RECLAIM) },
	B_STREAM, B_RECEIVED(9),
	SAMPLE_11(memcg_limit_bytes), SAMPLE_11(cpu_quota_millicores), SAMPLE_11(cpus_allowed),
};
static const struct lake_skip samples_skip[] = { SKIP_HDR(struct tr_sample) };
static const struct lake_index samples_idx[] = {
	/* 8: with ts_ns, for a process's newest sample of any stream (its table rebuilt, its indexes anew) */
	IDX_UNTIL("samples_process", "host_id, boot_id, tgid, start_ns, ts_ns", false, 1, 10),
	/* 10: the same with the table's key at the end, so that PostgreSQL finds a process's newest sample (by
	 * ts_ns, stream, seq) in one backward probe, without sorting its samples (SQLite's index already ended
	 * with the key: its entries are the same) */
	IDX("samples_by_process", "host_id, boot_id, tgid, start_ns, ts_ns, stream, seq", false, 10),
};

static const struct lake_column files_cols[] = {
	B_HOST, B_SEQ, B_BOOT, R_UINT("tgid", LK_NOT_NULL, 1, struct tr_file, tgid, 0),
	R_UINT("start_ns", LK_NOT_NULL, 1, struct tr_file, start_ns, 0),
	R_UINT("ts_ns", LK_NOT_NULL, 1, struct tr_file, hdr.ts_ns, 0),
	R_DERIVED("path", LK_TEXT, LK_NOT_NULL, 1, struct tr_file, path_len, LD_PATH),
	R_DERIVED("mode", LK_TEXT, LK_NOT_NULL, 1, struct tr_file, mode, LD_FILE_MODE),
	{ .name = "truncated", .type = LK_INT, .flags = LK_NOT_NULL, .since = 1,
	  .src = S_BIT(struct tr_file, mode, TR_FILE_TRUNCATED) }, B_STREAM,
	B_RECEIVED(9),
};
static const struct lake_skip files_skip[] = { SKIP_HDR(struct tr_file), SKIP(struct tr_file, pad, "padding, 0") };
static const struct lake_index files_idx[] = { IDX("files_process", "host_id, boot_id, tgid, start_ns", false, 1) };

static const struct lake_column cgroups_cols[] = {
	TEXT_NN("host_id"), TEXT_NN("boot_id"), INT_NN("v1"), INT_NN("cgroup_id"), TEXT_NN("path"),
	INT_NN("truncated"), INT_NN("seq"),
};

static const struct lake_column signals_cols[] = {
	ID("signal_id"), TEXT_NN("host_id"), TEXT_NN("boot_id"), INT_NN("seq"), INT("run_id"), TEXT_NN("source"),
	TEXT_NN("kind"), INT("pid"), INT("start_ns"), INT("ts_ns"), TEXT("step"), TEXT("tool"), TEXT("detail"),
	STREAM,
};
static const struct lake_index signals_idx[] = { IDX("signals_run", "run_id", false, 1) };

#define COUNTER(n) R_UINT(#n, LK_NOT_NULL, 1, struct tr_counters, n, 0)
static const struct lake_column agent_counters_cols[] = {
	B_HOST, B_SEQ, B_BOOT, R_UINT("ts_ns", LK_NOT_NULL, 1, struct tr_counters, hdr.ts_ns, 0),
	R_DERIVED("kernel_drops", LK_INT, LK_NOT_NULL, 1, struct tr_counters, kernel_drops, LD_SUM),
	R_UINT("kernel_state_drops", LK_NOT_NULL, 1, struct tr_counters, kernel_drops[TR_DROP_STATE], 0),
	R_DERIVED("ring_drops", LK_INT, LK_NOT_NULL, 1, struct tr_counters, ring_drops, LD_SUM),
	COUNTER(records_copied), COUNTER(bad_consumer_pos),
	R_DERIVED("kernel_drops_by_type", LK_TEXT, LK_NOT_NULL, 1, struct tr_counters, kernel_drops, LD_COUNTS_JSON),
	R_DERIVED("ring_drops_by_type", LK_TEXT, LK_NOT_NULL, 1, struct tr_counters, ring_drops, LD_COUNTS_JSON),
	B_STREAM, B_RECEIVED(10),
};
static const struct lake_skip agent_counters_skip[] = { SKIP_HDR(struct tr_counters) };

/*
 * A host's newest counters (tracer-web's hosts, read_web.c): 9, by seq; 10, those received last (a new spool's
 * stream counts its seqs from 1 again), then by seq.
 */
static const struct lake_index agent_counters_idx[] = {
	IDX_UNTIL("agent_counters_host_seq", "host_id, seq", false, 9, 10),
	IDX("agent_counters_newest", "host_id, received_ns, seq", false, 10),
};

#define LOSS(n) R_UINT(#n, LK_NOT_NULL, 1, struct tl_loss, n, 0)
static const struct lake_column losses_cols[] = {
	B_HOST, B_SEQ, R_DERIVED("reason", LK_TEXT, LK_NOT_NULL, 1, struct tl_loss, reason, LD_LOSS_REASON),
	LOSS(first_seq), LOSS(last_seq), LOSS(records), LOSS(bytes), B_STREAM, B_RECEIVED(10),
};
static const struct lake_skip losses_skip[] = { SKIP(struct tl_loss, rsvd, "reserved, 0") };

/* The six figures of a "live" object (docs/live.md), in runs and steps from version 3. */
#define LIVE_FIGURES                                                                                     \
	INTV("live_cpu_millicores", 3), INTV("live_rss_bytes", 3), INTV("live_read_bytes_per_s", 3),          \
		INTV("live_write_bytes_per_s", 3), INTV("live_net_tx_bytes_per_s", 3),                         \
		INTV("live_net_rx_bytes_per_s", 3)

static const struct lake_column runs_cols[] = {
	ID("run_id"), TEXT_NN("host_id"), TEXT_NN("boot_id"), INT_NN("seq"), TEXT_NN("batch_hash"), TEXT("schema"),
	TEXT("command"), INT("exit_code"), INT("start_ns"), INT("end_ns"), INT("duration_ns"), INT("dropped"),
	TEXT("pipeline"), TEXT("pipeline_run_id"), TEXT("engine"), TEXT("run_name"), TEXT("summary"),
	INT("processes"), INT("steps"), INT("signals"),
	/* 3: runs the daemons found, streamed live */
	TEXTV("run_key", 3), TEXTV("state", 3), TEXTV("detected_by", 3), INTV("last_update_ns", 3),
	INTV("update_seq", 3), INTV("signal", 3), INTV("root_pid", 3), INTV("preexisting", 3),
	TEXTV("slurm_job_id", 3), TEXTV("aws_batch_job_id", 3), INTV("running_processes", 3), INTV("cpu_ns", 3),
	INTV("read_bytes", 3), INTV("write_bytes", 3), INTV("rchar", 3), INTV("wchar", 3), INTV("net_tx_bytes", 3),
	INTV("net_rx_bytes", 3), LIVE_FIGURES,
	/* 4: the host it ran on, its user */
	TEXTV("host_cloud", 4), TEXTV("host_instance_type", 4), TEXTV("host_instance_id", 4), TEXTV("host_region", 4),
	INTV("host_cpus", 4), INTV("host_memory_bytes", 4), REALV("host_price_per_hour", 4), INTV("uid", 4),
	STREAM,
	/* 13: cluster jobs joined to the run that submitted them (docs/live.md, "Cluster jobs") */
	TEXTV("host_name", 13), TEXTV("slurm_job_name", 13), TEXTV("slurm_submit_dir", 13),
	TEXTV("slurm_submit_host", 13), INTV("joined_run_id", 13), TEXTV("joined_step_id", 13),
	INTV("submitted_ns", 13),
};
static const struct lake_index runs_idx[] = {
	IDX("runs_pipeline_run", "pipeline_run_id", false, 1),
	IDX("runs_key", "host_id, run_key", true, 3),
	IDX("runs_host_state", "host_id, state", false, 3),
	IDX("runs_run_key", "run_key", false, 9), /* 9: tracer report KEY (ST_RUN_BY_KEY) */
	/* 13: the cluster jobs a new sbatch may have submitted (ST_JOIN_WAITING) */
	IDX_WHERE("runs_unjoined", "slurm_submit_dir", "joined_run_id IS NULL AND slurm_submit_dir IS NOT NULL", 13),
	/* 13: the jobs joined to a run, read with it (ST_RUN_STEPS_LIST, ..._PROCS_, ..._SIGNALS_) */
	IDX_WHERE("runs_joined", "joined_run_id", "joined_run_id IS NOT NULL", 13),
};

static const struct lake_column steps_cols[] = {
	INT_NN("run_id"), INT_NN("idx"), TEXT("step_id"), TEXT("name"), TEXT("tools"), INT("start_ns"),
	INT("end_ns"), INT("exit_code"), INT("signal"), INT("failed"), INT("processes"), INT("failed_processes"),
	INT("oom_killed"), INT("cpu_ns"), INT("peak_rss_bytes"), INT("read_bytes"), INT("write_bytes"),
	/* 2: the concurrent peak */
	INTV("rss_sum_of_peaks_bytes", 2), INTV("peak_rss_partial", 2), INTV("memcg_peak_bytes", 2),
	/* 3: live steps */
	TEXTV("state", 3), TEXTV("engine", 3), TEXTV("rule", 3), TEXTV("workdir", 3), INTV("running", 3),
	INTV("nonzero_exits", 3), INTV("rchar", 3), INTV("wchar", 3), INTV("net_tx_bytes", 3),
	INTV("net_rx_bytes", 3), INTV("last_update_ns", 3), LIVE_FIGURES,
	/* 6: the allocation it ran under */
	INTV("cpu_limit_millicores", 6), INTV("memory_limit_bytes", 6),
};
static const struct lake_index steps_idx[] = { IDX("steps_run_step", "run_id, step_id", true, 3) };

static const struct lake_column run_processes_cols[] = {
	INT_NN("run_id"), INT_NN("idx"), INT("pid"), INT("ppid"), INT("start_ns"), INT("end_ns"), TEXT("exe"),
	TEXT("argv"), TEXT("tool"), TEXT("step"), INT("exit_code"), INT("signal"), INT("core_dumped"),
	INT("oom_killed"), INT("cpu_user_ns"), INT("cpu_sys_ns"), INT("peak_rss_bytes"), INT("read_bytes"),
	INT("write_bytes"), INT("rchar"), INT("wchar"), INT("net_tx_bytes"), INT("net_rx_bytes"), TEXT("cgroup"),
	TEXT("container_id"), INTV("maxrss_rusage_bytes", 2), TEXTV("peak_rss_source", 2),
};

/* A TL_HOST record's members (tracer.host.v1, docs/schema.md), each under its rule (enum lake_json_rule). */
#define J(n, t, m, r) { .name = n, .type = t, .since = 5, .src = { .from = LF_JSON, .json = m, .rule = r } }
#define J_COUNT(n) J(#n, LK_INT, #n, LJ_COUNT)
#define J_COUNT32(n) J(#n, LK_INT, #n, LJ_COUNT32)
static const struct lake_column heartbeats_cols[] = {
	{ .name = "host_id", .type = LK_TEXT, .flags = LK_NOT_NULL, .since = 5, .src = { .from = LF_HOST } },
	{ .name = "seq", .type = LK_INT, .flags = LK_NOT_NULL, .since = 5, .src = { .from = LF_SEQ } },
	J("boot_id", LK_TEXT, "boot_id", LJ_BOOT_ID), J_COUNT(beat),
	{ .name = "start_ns", .type = LK_INT, .flags = LK_NOT_NULL, .since = 5,
	  .src = { .from = LF_JSON, .json = "start_ns", .rule = LJ_COUNT } },
	{ .name = "end_ns", .type = LK_INT, .flags = LK_NOT_NULL, .since = 5,
	  .src = { .from = LF_JSON, .json = "end_ns", .rule = LJ_COUNT } },
	J("uptime_s", LK_REAL, "uptime_s", LJ_SECONDS), J_COUNT32(cpus), J_COUNT(cpu_busy_ns), J_COUNT(cpu_idle_ns),
	J_COUNT(mem_total_bytes), J_COUNT(mem_used_bytes), J_COUNT(net_rx_bytes), J_COUNT(net_tx_bytes),
	J_COUNT32(runs), J_COUNT32(steps), J_COUNT32(processes), J("host_cloud", LK_TEXT, "host.cloud", LJ_TEXT),
	J("host_instance_type", LK_TEXT, "host.instance_type", LJ_TEXT),
	J("host_instance_id", LK_TEXT, "host.instance_id", LJ_TEXT), J("host_region", LK_TEXT, "host.region", LJ_TEXT),
	J("host_cpus", LK_INT, "host.cpus", LJ_COUNT), J("host_memory_bytes", LK_INT, "host.memory_bytes", LJ_COUNT),
	J("host_price_per_hour", LK_REAL, "host.price_per_hour", LJ_PRICE), B_STREAM, B_RECEIVED(9),
	{ .name = "host_name", .type = LK_TEXT, .since = 13,
	  .src = { .from = LF_JSON, .json = "host.name", .rule = LJ_TEXT } },
};
static const struct lake_index heartbeats_idx[] = {
	IDX("heartbeats_host_start", "host_id, start_ns", false, 5),
	IDX("heartbeats_end", "end_ns", false, 9), /* 9: the lake's newest word (read_sweep.c, read_web.c) */
};

/* 8: the stream joined the keys of a host's seqs */
#define REBUILT_8(old) .rebuilt = 8, .was = old
#define SEQ_KEY "host_id, seq"

const struct lake_table lake_tables[] = {
	TABLE("schema_version", 1, schema_version_cols),
	TABLE("hosts", 1, hosts_cols),
	TABLE("keys", 1, keys_cols),
	TABLE("streams", 8, streams_cols, .key = "host_id, stream"),
	TABLE("batches", 1, batches_cols, INDEXES(batches_idx)),
	TABLE("gaps", 1, gaps_cols, .key = "host_id, stream, from_seq", REBUILT_8("host_id, from_seq")),
	TABLE("records", 1, records_cols, .key = "host_id, stream, seq", .without_rowid = true, REBUILT_8(SEQ_KEY),
	      .partitioned = 9, .record_size = sizeof(struct tr_frame)),
	TABLE("processes", 1, processes_cols, .key = "host_id, boot_id, tgid, start_ns", INDEXES(processes_idx)),
	TABLE("samples", 1, samples_cols, .key = "host_id, stream, seq", .without_rowid = true, REBUILT_8(SEQ_KEY),
	      INDEXES(samples_idx), .partitioned = 9, ROWS_OF(struct tr_sample, samples_skip)),
	TABLE("files", 1, files_cols, .key = "host_id, stream, seq", .without_rowid = true, REBUILT_8(SEQ_KEY),
	      INDEXES(files_idx), .partitioned = 9, ROWS_OF(struct tr_file, files_skip)),
	TABLE("cgroups", 1, cgroups_cols, .key = "host_id, boot_id, v1, cgroup_id"),
	TABLE("signals", 1, signals_cols, INDEXES(signals_idx)),
	TABLE("agent_counters", 1, agent_counters_cols, .key = "host_id, stream, seq", REBUILT_8(SEQ_KEY),
	      INDEXES(agent_counters_idx), .partitioned = 10, ROWS_OF(struct tr_counters, agent_counters_skip)),
	TABLE("losses", 1, losses_cols, .key = "host_id, stream, seq", REBUILT_8(SEQ_KEY), .partitioned = 10,
	      ROWS_OF(struct tl_loss, losses_skip)),
	TABLE("runs", 1, runs_cols, .unique = "host_id, stream, seq", REBUILT_8(SEQ_KEY), INDEXES(runs_idx)),
	TABLE("steps", 1, steps_cols, .key = "run_id, idx", INDEXES(steps_idx)),
	TABLE("run_processes", 1, run_processes_cols, .key = "run_id, idx"),
	TABLE("heartbeats", 5, heartbeats_cols, .key = "host_id, stream, seq", REBUILT_8(SEQ_KEY),
	      INDEXES(heartbeats_idx), .partitioned = 9, .json_schema = "tracer.host.v1"),
};
const unsigned lake_ntables = N(lake_tables);

/*
 * A process's exec into its processes row (store.c's ST_EXEC): what it runs, where, as whom; an exec replaces
 * what an earlier exec of the process gave (its parent too: the parent at the exec), keeps the start its fork
 * gave, and counts itself (execs).
 */
#define EXEC_NEW(c, f) FILL(c, LM_NEW, S_UINT(struct tr_exec, f, 0))
#define EXEC_TAIL(c, f, d) FILL(c, LM_NEW, S_DERIVED(struct tr_exec, f, d))
static const struct lake_fill exec_fills[] = {
	HOST_BOOT_KEY,
	FILL("tgid", LM_KEY, S_UINT(struct tr_exec, tgid, 0)),
	FILL("start_ns", LM_KEY, S_UINT(struct tr_exec, start_ns, 0)),
	FILL("start_real_ns", LM_KEEP, S_DERIVED(struct tr_exec, start_ns, LD_REAL)), EXEC_NEW("ppid", ppid),
	EXEC_NEW("uid", uid), EXEC_NEW("gid", gid), FILL("comm", LM_NEW, S_CHARS(struct tr_exec, comm)),
	EXEC_TAIL("exe", path_len, LD_EXEC_PATH), EXEC_TAIL("argv", argv_len, LD_EXEC_ARGV),
	EXEC_TAIL("cwd", cwd_len, LD_EXEC_CWD), EXEC_TAIL("env", env_len, LD_EXEC_ENV), EXEC_NEW("exec_flags", flags),
	EXEC_NEW("cgroup_id", cgroup_id), EXEC_NEW("cgroup_v1_id", cgroup_v1_id), EXEC_NEW("mnt_ns", mnt_ns),
	EXEC_NEW("pid_ns", pid_ns), EXEC_NEW("exec_ts_ns", hdr.ts_ns), EXEC_NEW("last_pid", pid),
	FILL("execs", LM_ADD, { .from = LF_ONE }),
};
static const struct lake_skip exec_skip[] = {
	SKIP_HDR(struct tr_exec),
	SKIP(struct tr_exec, argv_true_len, "the whole argument area's size: exec_flags says when argv was cut"),
	SKIP(struct tr_exec, pad, "padding, 0"),
};
const struct lake_upsert lake_exec_upsert = UPSERT("processes", exec_fills, struct tr_exec, exec_skip);

/*
 * A process's fork into its processes row (ST_FORK): its parent and start. The parent and user an exec gave,
 * if stored first, are kept.
 */
static const struct lake_fill fork_fills[] = {
	HOST_BOOT_KEY,
	FILL("tgid", LM_KEY, S_UINT(struct tr_fork, child_tgid, 0)),
	FILL("start_ns", LM_KEY, S_UINT(struct tr_fork, child_start_ns, 0)),
	FILL("start_real_ns", LM_KEEP, S_DERIVED(struct tr_fork, child_start_ns, LD_REAL)),
	FILL("ppid", LM_KEEP, S_UINT(struct tr_fork, parent_tgid, 0)),
	FILL("parent_start_ns", LM_NEW, S_UINT(struct tr_fork, parent_start_ns, 0)),
	FILL("uid", LM_KEEP, S_UINT(struct tr_fork, uid, 0)),
	FILL("fork_ts_ns", LM_NEW, S_UINT(struct tr_fork, hdr.ts_ns, 0)),
};
static const struct lake_skip fork_skip[] = { SKIP_HDR(struct tr_fork), SKIP(struct tr_fork, pad, "padding, 0") };
const struct lake_upsert lake_fork_upsert = UPSERT("processes", fork_fills, struct tr_fork, fork_skip);

/* A cgroup's path into cgroups (ST_CGROUP): the newest record of each id names it. */
static const struct lake_fill cgroup_fills[] = {
	HOST_BOOT_KEY,
	FILL("v1", LM_KEY, S_UINT(struct tr_cgroup, v1, 0)),
	FILL("cgroup_id", LM_KEY, S_UINT(struct tr_cgroup, id, 0)),
	FILL("path", LM_NEW, S_DERIVED(struct tr_cgroup, path_len, LD_PATH)),
	FILL("truncated", LM_NEW, S_BIT(struct tr_cgroup, flags, TR_CGROUP_TRUNCATED)),
	FILL("seq", LM_NEW, { .from = LF_SEQ }),
};
static const struct lake_skip cgroup_skip[] = {
	SKIP_HDR(struct tr_cgroup),
	SKIP(struct tr_cgroup, hdr.ts_ns, "when the path was seen: the row names the newest record, seq, instead"),
	SKIP(struct tr_cgroup, pad, "padding, 0"),
};
const struct lake_upsert lake_cgroup_upsert = UPSERT("cgroups", cgroup_fills, struct tr_cgroup, cgroup_skip);

/*
 * A live record (tracer.live.v1, docs/live.md, written by report/live.c) into its run's row (store.c's
 * ST_LIVE_INSERT and ST_LIVE_UPDATE, one map): the first record of a run makes the row, with the batch's ids and
 * the run's key; a later one changes it only if its update is higher (a restarted processor may repeat
 * itself). A record without the host or the user keeps what the row has. Members are stored under their rule
 * (enum lake_json_rule), NULL where they break it.
 */
#define J_SRC(m, r) { .from = LF_JSON, .json = m, .rule = r }
#define MEMBER(c, m, r) FILL(c, LM_NEW, J_SRC(m, r))
#define SAME(c, r) MEMBER(#c, #c, r)
#define GIVEN(c, m, r) FILL(c, LM_GIVEN, J_SRC(m, r))
/* The six figures of a "live" object (docs/live.md), as the live_* columns. */
#define LIVE_MEMBERS                                                                                     \
	MEMBER("live_cpu_millicores", "live.cpu_millicores", LJ_INT),                                        \
		MEMBER("live_rss_bytes", "live.rss_bytes", LJ_INT),                                          \
		MEMBER("live_read_bytes_per_s", "live.read_bytes_per_s", LJ_INT),                            \
		MEMBER("live_write_bytes_per_s", "live.write_bytes_per_s", LJ_INT),                          \
		MEMBER("live_net_tx_bytes_per_s", "live.net_tx_bytes_per_s", LJ_INT),                        \
		MEMBER("live_net_rx_bytes_per_s", "live.net_rx_bytes_per_s", LJ_INT)
/* The host a run ran on and its user (docs/processor.md, "Host identity"): a record without them keeps the row's. */
#define HOST_GIVEN                                                                                       \
	GIVEN("host_cloud", "host.cloud", LJ_TEXT), GIVEN("host_instance_type", "host.instance_type", LJ_TEXT),  \
		GIVEN("host_instance_id", "host.instance_id", LJ_TEXT), GIVEN("host_region", "host.region", LJ_TEXT), \
		GIVEN("host_cpus", "host.cpus", LJ_COUNT), GIVEN("host_memory_bytes", "host.memory_bytes", LJ_COUNT), \
		GIVEN("host_price_per_hour", "host.price_per_hour", LJ_PRICE), GIVEN("uid", "uid", LJ_COUNT), \
		GIVEN("host_name", "host.name", LJ_TEXT)
static const struct lake_fill live_run_fills[] = {
	FILL("run_id", LM_WHERE, { .from = LF_RUN }),
	FILL("host_id", LM_INSERT, { .from = LF_HOST }), FILL("boot_id", LM_INSERT, { .from = LF_BOOT }),
	FILL("seq", LM_INSERT, { .from = LF_SEQ }), FILL("stream", LM_INSERT, { .from = LF_STREAM }),
	FILL("batch_hash", LM_INSERT, { .from = LF_HASH }), FILL("run_key", LM_INSERT, J_SRC("key", LJ_KEY)),
	SAME(schema, LJ_TEXT), SAME(command, LJ_ARRAY), SAME(exit_code, LJ_INT), SAME(signal, LJ_INT),
	SAME(start_ns, LJ_INT), SAME(end_ns, LJ_INT), MEMBER("duration_ns", NULL, LJ_DURATION), SAME(pipeline, LJ_TEXT),
	MEMBER("pipeline_run_id", "run_id", LJ_TEXT), SAME(engine, LJ_TEXT), SAME(run_name, LJ_TEXT),
	SAME(state, LJ_STATE), SAME(detected_by, LJ_TEXT), MEMBER("last_update_ns", "update_ns", LJ_INT),
	FILL("update_seq", LM_NEWER, J_SRC("update", LJ_INT)), SAME(root_pid, LJ_INT), SAME(preexisting, LJ_BOOL),
	SAME(slurm_job_id, LJ_TEXT), SAME(aws_batch_job_id, LJ_TEXT), SAME(slurm_job_name, LJ_TEXT),
	SAME(slurm_submit_dir, LJ_TEXT), SAME(slurm_submit_host, LJ_TEXT), SAME(processes, LJ_INT),
	SAME(running_processes, LJ_INT), MEMBER("cpu_ns", "totals.cpu_ns", LJ_INT),
	MEMBER("read_bytes", "totals.read_bytes", LJ_INT), MEMBER("write_bytes", "totals.write_bytes", LJ_INT),
	MEMBER("rchar", "totals.rchar", LJ_INT), MEMBER("wchar", "totals.wchar", LJ_INT),
	MEMBER("net_tx_bytes", "totals.net_tx_bytes", LJ_INT), MEMBER("net_rx_bytes", "totals.net_rx_bytes", LJ_INT),
	LIVE_MEMBERS, HOST_GIVEN,
};
static const struct lake_member_skip live_run_skip[] = {
	{ "root_start_mono_ns", "the root's start on the host's monotonic clock: start_ns is it made real" },
	{ "steps", "each a steps row (lake_live_step_upsert)" },
	{ "processes_attributed", "each its processes row's run, step and tool (store.c's ST_LIVE_ATTRIB)" },
	{ "signals", "each a signals row (store.c's record_signals)" },
};
#define LIVE_RUN(w, ...)                                                                                 \
	{ .table = "runs", .fills = live_run_fills, .nfills = N(live_run_fills), .write = w,                  \
	  .json_schema = "tracer.live.v1", .jskip = live_run_skip, .njskip = N(live_run_skip), __VA_ARGS__ }
const struct lake_upsert lake_live_run_insert = LIVE_RUN(LW_INSERT, .returning = "run_id");
const struct lake_upsert lake_live_run_update = LIVE_RUN(LW_UPDATE);

/*
 * A live record's step (an element of its "steps") into steps (store.c's ST_LIVE_STEP), by its run and its
 * id: steps are deltas, the newest wins whole; a new one goes after the run's others (idx).
 */
/* A step's members, as a live record and a run report have them (docs/live.md, docs/schema.md). */
#define STEP_MEMBERS                                                                                     \
	SAME(name, LJ_TEXT), SAME(engine, LJ_TEXT), SAME(rule, LJ_TEXT), SAME(workdir, LJ_TEXT), SAME(tools, LJ_ARRAY), \
		SAME(start_ns, LJ_INT), SAME(end_ns, LJ_INT), SAME(processes, LJ_INT), SAME(running, LJ_INT),   \
		SAME(failed_processes, LJ_INT), SAME(nonzero_exits, LJ_INT), SAME(oom_killed, LJ_INT),          \
		SAME(exit_code, LJ_INT), SAME(signal, LJ_INT), SAME(failed, LJ_BOOL), SAME(cpu_ns, LJ_INT),      \
		SAME(peak_rss_bytes, LJ_INT), SAME(rss_sum_of_peaks_bytes, LJ_INT), SAME(peak_rss_partial, LJ_BOOL), \
		SAME(memcg_peak_bytes, LJ_INT), SAME(read_bytes, LJ_INT), SAME(write_bytes, LJ_INT),            \
		SAME(rchar, LJ_INT), SAME(wchar, LJ_INT), SAME(net_tx_bytes, LJ_INT), SAME(net_rx_bytes, LJ_INT), \
		MEMBER("cpu_limit_millicores", "cpu_limit_cores", LJ_MILLICORES), SAME(memory_limit_bytes, LJ_COUNT)
static const struct lake_fill live_step_fills[] = {
	FILL("run_id", LM_KEY, { .from = LF_RUN }), FILL("idx", LM_INSERT, { .from = LF_NEXT_IDX }),
	FILL("step_id", LM_KEY, J_SRC("id", LJ_TEXT)), SAME(state, LJ_STATE), STEP_MEMBERS,
	FILL("last_update_ns", LM_NEW, { .from = LF_ROOT_JSON, .json = "update_ns", .rule = LJ_INT }), LIVE_MEMBERS,
};
const struct lake_upsert lake_live_step_upsert = { .table = "steps", .fills = live_step_fills,
						   .nfills = N(live_step_fills), .json_schema = "tracer.live.v1",
						   .element = "steps" };

/*
 * A live record's attribution of a process (an element of its "processes_attributed") into the process's row
 * (store.c's ST_LIVE_ATTRIB), which its kernel records fill (or filled) otherwise: its run, step and tool.
 */
#define PROCESS_KEY                                                                                      \
	HOST_BOOT_KEY, FILL("tgid", LM_KEY, J_SRC("pid", LJ_INT)), FILL("start_ns", LM_KEY, J_SRC("start_mono_ns", LJ_INT))
static const struct lake_fill live_attrib_fills[] = {
	PROCESS_KEY, FILL("run_id", LM_NEW, { .from = LF_RUN }), SAME(step, LJ_TEXT), SAME(tool, LJ_TEXT),
	SAME(preexisting, LJ_BOOL),
};
const struct lake_upsert lake_live_attrib_upsert = { .table = "processes", .fills = live_attrib_fills,
						     .nfills = N(live_attrib_fills), .json_schema = "tracer.live.v1",
						     .element = "processes_attributed" };

/* A TL_TOOLS record's process in no run (an element of its "processes") into its row: its tool (ST_TOOLS). */
static const struct lake_fill tools_fills[] = { PROCESS_KEY, SAME(tool, LJ_TEXT) };
const struct lake_upsert lake_tools_upsert = { .table = "processes", .fills = tools_fills, .nfills = N(tools_fills),
					       .json_schema = "tracer.tools.v1", .element = "processes" };

/*
 * A run report (TL_RUN_REPORT: {"report": a tracer.run.v1 report, "summary": the text tracer run printed},
 * docs/schema.md) into its run's row (store.c's ST_RUN, ST_RUN_MERGE; one map): a new run's row, or the row of
 * a run streamed live or reported before, which the report takes over with its record. The members the report
 * has not (the live figures, the root's pid and signal) keep what live records gave; the host and the user
 * too where the report has none. Its members that no column holds are in its record, which reads of a
 * reported run return whole (records.payload: ST_RUN_REPORT_JSON).
 */
#define IN_REPORT(m) { m, "in the report's record, which reads of the run return whole (records.payload)" }
static const struct lake_fill report_run_fills[] = {
	FILL("run_id", LM_WHERE, { .from = LF_RUN }),
	FILL("host_id", LM_NEW, { .from = LF_HOST }), FILL("boot_id", LM_NEW, { .from = LF_BOOT }),
	FILL("seq", LM_NEW, { .from = LF_SEQ }), FILL("stream", LM_NEW, { .from = LF_STREAM }),
	FILL("batch_hash", LM_NEW, { .from = LF_HASH }), SAME(schema, LJ_TEXT), SAME(command, LJ_ARRAY),
	SAME(exit_code, LJ_INT), MEMBER("state", "exit_code", LJ_EXIT_STATE), SAME(start_ns, LJ_INT),
	SAME(end_ns, LJ_INT), MEMBER("duration_ns", NULL, LJ_DURATION), MEMBER("last_update_ns", "end_ns", LJ_INT),
	MEMBER("dropped", "agent.dropped", LJ_INT), MEMBER("pipeline", "run.pipeline", LJ_TEXT),
	MEMBER("pipeline_run_id", "run.run_id", LJ_TEXT), MEMBER("engine", "run.engine", LJ_TEXT),
	MEMBER("run_name", "run.run_name", LJ_TEXT), MEMBER("run_key", "run.key", LJ_KEY),
	MEMBER("slurm_job_id", "run.slurm_job_id", LJ_TEXT), MEMBER("aws_batch_job_id", "run.aws_batch_job_id", LJ_TEXT),
	MEMBER("slurm_job_name", "run.slurm_job_name", LJ_TEXT),
	MEMBER("slurm_submit_dir", "run.slurm_submit_dir", LJ_TEXT),
	MEMBER("slurm_submit_host", "run.slurm_submit_host", LJ_TEXT),
	FILL("summary", LM_NEW, { .from = LF_ROOT_JSON, .json = "summary", .rule = LJ_TEXT }),
	FILL("detected_by", LM_NEW, { .from = LF_CONST, .json = "tracer_run" }), MEMBER("processes", "processes", LJ_LENGTH),
	MEMBER("steps", "steps", LJ_LENGTH), MEMBER("signals", "signals", LJ_LENGTH), HOST_GIVEN,
};
static const struct lake_member_skip report_run_skip[] = {
	IN_REPORT("run.engine_dir"), IN_REPORT("run.engine_pid"), IN_REPORT("run.processes_without_step_by_bound"),
	IN_REPORT("run.steps_dropped"), IN_REPORT("agent.argv_dropped"), IN_REPORT("agent.cgroups_dropped"),
	IN_REPORT("agent.collector_lost"), IN_REPORT("agent.control_end"), IN_REPORT("agent.decode_errors"),
	IN_REPORT("agent.decode_errors_by_reason"), IN_REPORT("agent.end_record"), IN_REPORT("agent.excluded"),
	IN_REPORT("agent.execs_dropped"), IN_REPORT("agent.files_dropped"), IN_REPORT("agent.interrupted"),
	IN_REPORT("agent.kernel_drops"), IN_REPORT("agent.max_processes"), IN_REPORT("agent.no_memory"),
	IN_REPORT("agent.oom_unmatched"), IN_REPORT("agent.processes_evicted"), IN_REPORT("agent.records"),
	IN_REPORT("agent.records_copied"), IN_REPORT("agent.ring_bytes_discarded"), IN_REPORT("agent.ring_drops"),
	IN_REPORT("agent.ring_resets"), IN_REPORT("agent.samples"), IN_REPORT("agent.series_dropped"),
	IN_REPORT("agent.table_full"),
};
#define REPORT_RUN(w, ...)                                                                               \
	{ .table = "runs", .fills = report_run_fills, .nfills = N(report_run_fills), .write = w,              \
	  .json_schema = "tracer.run.v1", .object = "report", .jskip = report_run_skip, .njskip = N(report_run_skip), \
	  __VA_ARGS__ }
const struct lake_upsert lake_report_run_insert = REPORT_RUN(LW_INSERT, .returning = "run_id");
const struct lake_upsert lake_report_run_update = REPORT_RUN(LW_UPDATE);

/*
 * A report's step (an element of its "steps") into steps (store.c's ST_STEPS), at its place in the report;
 * one whose id an earlier step of the report has is not stored (the unique index steps_run_step).
 */
static const struct lake_fill report_step_fills[] = {
	FILL("run_id", LM_NEW, { .from = LF_RUN }), FILL("idx", LM_NEW, { .from = LF_INDEX }),
	MEMBER("step_id", "id", LJ_TEXT), MEMBER("state", NULL, LJ_STEP_STATE), STEP_MEMBERS,
	FILL("last_update_ns", LM_NEW, { .from = LF_ROOT_JSON, .json = "report.end_ns", .rule = LJ_INT }),
};
static const struct lake_member_skip report_step_skip[] = {
	IN_REPORT("pid"), IN_REPORT("first_failed_pid"), IN_REPORT("max_process_rss_bytes"), IN_REPORT("memcg"),
	IN_REPORT("io_partial"), IN_REPORT("tools_more"), IN_REPORT("series"), IN_REPORT("peaks"),
};
const struct lake_upsert lake_report_step_insert = {
	.table = "steps", .fills = report_step_fills, .nfills = N(report_step_fills), .write = LW_INSERT_NEW,
	.json_schema = "tracer.run.v1", .object = "report", .element = "steps", .jskip = report_step_skip,
	.njskip = N(report_step_skip)
};

/*
 * A report's process (an element of its "processes") into run_processes (store.c's ST_RUN_PROCS), at its place
 * in the report. The lake's own row of the process (processes) has what its kernel records said.
 */
static const struct lake_fill report_proc_fills[] = {
	FILL("run_id", LM_NEW, { .from = LF_RUN }), FILL("idx", LM_NEW, { .from = LF_INDEX }), SAME(pid, LJ_INT),
	SAME(ppid, LJ_INT), SAME(start_ns, LJ_INT), SAME(end_ns, LJ_INT), SAME(exe, LJ_TEXT), SAME(argv, LJ_ARRAY),
	SAME(tool, LJ_TEXT), SAME(step, LJ_TEXT), SAME(exit_code, LJ_INT), SAME(signal, LJ_INT),
	SAME(core_dumped, LJ_BOOL), SAME(oom_killed, LJ_BOOL), SAME(cpu_user_ns, LJ_INT), SAME(cpu_sys_ns, LJ_INT),
	SAME(peak_rss_bytes, LJ_INT), SAME(read_bytes, LJ_INT), SAME(write_bytes, LJ_INT), SAME(rchar, LJ_INT),
	SAME(wchar, LJ_INT), SAME(net_tx_bytes, LJ_INT), SAME(net_rx_bytes, LJ_INT), SAME(cgroup, LJ_TEXT),
	SAME(container_id, LJ_TEXT), SAME(maxrss_rusage_bytes, LJ_INT), SAME(peak_rss_source, LJ_TEXT),
};
static const struct lake_member_skip report_proc_skip[] = {
	IN_REPORT("argv_truncated"), IN_REPORT("blocked_ns"), IN_REPORT("cancelled_write_bytes"), IN_REPORT("cgroup_id"),
	IN_REPORT("cgroup_v1_memory"), IN_REPORT("comm"), IN_REPORT("container_runtime"), IN_REPORT("cpu_limit_cores"),
	IN_REPORT("cpu_ns"), IN_REPORT("cpus_allowed"), IN_REPORT("cwd"), IN_REPORT("excluded"),
	IN_REPORT("exe_inherited"), IN_REPORT("exe_truncated"), IN_REPORT("files"), IN_REPORT("files_dropped"),
	IN_REPORT("gid"), IN_REPORT("involuntary_ctxt_switches"), IN_REPORT("iowait_ns"), IN_REPORT("longest_stall_ns"),
	IN_REPORT("major_faults"), IN_REPORT("memory_limit_bytes"), IN_REPORT("minor_faults"), IN_REPORT("mnt_ns"),
	IN_REPORT("net_wait_ns"), IN_REPORT("peaks"), IN_REPORT("pid_ns"), IN_REPORT("pod_qos"), IN_REPORT("pod_uid"),
	IN_REPORT("ppid_source"), IN_REPORT("preexisting"), IN_REPORT("reclaim_ns"), IN_REPORT("run_delay_ns"),
	IN_REPORT("series"), IN_REPORT("slurm_job"), IN_REPORT("slurm_step"), IN_REPORT("slurm_task"),
	IN_REPORT("syscr"), IN_REPORT("syscw"), IN_REPORT("systemd_unit"), IN_REPORT("threads"),
	IN_REPORT("threads_truncated"), IN_REPORT("uid"), IN_REPORT("voluntary_ctxt_switches"),
};
const struct lake_upsert lake_report_proc_insert = {
	.table = "run_processes", .fills = report_proc_fills, .nfills = N(report_proc_fills), .write = LW_INSERT,
	.json_schema = "tracer.run.v1", .object = "report", .element = "processes", .jskip = report_proc_skip,
	.njskip = N(report_proc_skip)
};

/*
 * A report's or a live record's signal (an element of its "signals": an object with a text "kind") into
 * signals (store.c's record_signals), kept whole as its detail, naming the record it came from.
 */
#define SIGNAL_FILLS(source)                                                                             \
	FILL("host_id", LM_NEW, { .from = LF_HOST }), FILL("boot_id", LM_NEW, { .from = LF_BOOT }),            \
		FILL("seq", LM_NEW, { .from = LF_SEQ }), FILL("stream", LM_NEW, { .from = LF_STREAM }),         \
		FILL("run_id", LM_NEW, { .from = LF_RUN }), FILL("source", LM_NEW, { .from = LF_CONST, .json = source }), \
		SAME(kind, LJ_TEXT), SAME(pid, LJ_INT), SAME(step, LJ_TEXT), SAME(tool, LJ_TEXT),               \
		MEMBER("detail", NULL, LJ_OBJECT)
static const struct lake_fill report_signal_fills[] = { SIGNAL_FILLS("run_report") };
const struct lake_upsert lake_report_signal_insert = {
	.table = "signals", .fills = report_signal_fills, .nfills = N(report_signal_fills), .write = LW_INSERT,
	.json_schema = "tracer.run.v1", .object = "report", .element = "signals"
};
/* A live one names its process by its start on the host's monotonic clock, as the processes table does. */
static const struct lake_fill live_signal_fills[] = { SIGNAL_FILLS("live"), MEMBER("start_ns", "start_mono_ns", LJ_INT) };
const struct lake_upsert lake_live_signal_insert = {
	.table = "signals", .fills = live_signal_fills, .nfills = N(live_signal_fills), .write = LW_INSERT,
	.json_schema = "tracer.live.v1", .element = "signals"
};

/*
 * A process's exit into its processes row (store.c's ST_EXIT): its end, how it ended and every figure of the
 * exit record. What the fork or the exec gave first is kept (LM_KEEP: its start, its parent, its cgroups);
 * the rest is the exit's.
 */
#define EXIT_U(c, f) FILL(c, LM_NEW, S_UINT(struct tr_exit, f, 0))
#define EXIT_FIGURE(f) EXIT_U(#f, f)
static const struct lake_fill exit_fills[] = {
	HOST_BOOT_KEY,
	FILL("tgid", LM_KEY, S_UINT(struct tr_exit, tgid, 0)),
	FILL("start_ns", LM_KEY, S_UINT(struct tr_exit, start_ns, 0)),
	FILL("start_real_ns", LM_KEEP, S_DERIVED(struct tr_exit, start_ns, LD_REAL)),
	FILL("end_real_ns", LM_NEW, S_DERIVED(struct tr_exit, hdr.ts_ns, LD_REAL)),
	FILL("ppid", LM_KEEP, S_UINT(struct tr_exit, ppid, 0)), FILL("comm", LM_NEW, S_CHARS(struct tr_exit, comm)),
	FILL("cgroup_id", LM_KEEP, S_UINT(struct tr_exit, cgroup_id, 0)),
	FILL("cgroup_v1_id", LM_KEEP, S_UINT(struct tr_exit, cgroup_v1_id, 0)), EXIT_U("exit_ts_ns", hdr.ts_ns),
	EXIT_U("exit_raw", exit_code), FILL("exit_code", LM_NEW, S_DERIVED(struct tr_exit, exit_code, LD_EXIT_STATUS)),
	FILL("signal", LM_NEW, S_DERIVED(struct tr_exit, exit_code, LD_EXIT_SIGNAL)),
	FILL("core_dumped", LM_NEW, S_DERIVED(struct tr_exit, exit_code, LD_EXIT_CORE)), EXIT_FIGURE(utime_ns),
	EXIT_FIGURE(stime_ns), EXIT_FIGURE(runtime_ns), EXIT_FIGURE(maxrss_bytes), EXIT_FIGURE(read_bytes),
	EXIT_FIGURE(write_bytes), EXIT_FIGURE(cancelled_write_bytes), EXIT_FIGURE(rchar), EXIT_FIGURE(wchar),
	EXIT_FIGURE(syscr), EXIT_FIGURE(syscw), EXIT_FIGURE(nvcsw), EXIT_FIGURE(nivcsw), EXIT_FIGURE(min_flt),
	EXIT_FIGURE(maj_flt), EXIT_FIGURE(run_delay_ns), EXIT_FIGURE(nr_threads), EXIT_U("exit_flags", flags),
	EXIT_FIGURE(net_tx_bytes), EXIT_FIGURE(net_rx_bytes), EXIT_FIGURE(iowait_ns), EXIT_FIGURE(blocked_ns),
	EXIT_FIGURE(net_wait_ns), EXIT_FIGURE(files_dropped), EXIT_FIGURE(state_flags), EXIT_U("last_pid", pid),
	FILL("peak_rss_bytes", LM_NEW, S_FLAGGED(struct tr_exit, image_peak_rss_bytes, LD_IMAGE_PEAK)),
	FILL("memcg_peak_bytes", LM_NEW, S_DERIVED(struct tr_exit, memcg_peak_bytes, LD_NONZERO)),
	FILL("reclaim_ns", LM_NEW, S_FLAGGED(struct tr_exit, reclaim_ns, LD_RECLAIM)),
	FILL("memcg_limit_bytes", LM_NEW, S_UINT(struct tr_exit, memcg_limit_bytes, 4)),
	FILL("cpu_quota_millicores", LM_NEW, S_UINT(struct tr_exit, cpu_quota_millicores, 4)),
	FILL("cpus_allowed", LM_NEW, S_UINT(struct tr_exit, cpus_allowed, 4)),
};
static const struct lake_skip exit_skip[] = { SKIP_HDR(struct tr_exit) };
const struct lake_upsert lake_exit_upsert = UPSERT("processes", exit_fills, struct tr_exit, exit_skip);

_Static_assert(TL_RUN_REPORT == 64, "TL_RUN_REPORT_SQL");

/*
 * The reads of a run's and a step's rows (lake_select): each column into its member of lake/store.h's
 * struct store_run and store_step, in the order they are selected. tests/test_lake_schema_writes.c checks
 * that every column of runs and steps is read or skipped here with the reason, and that no member is filled
 * twice.
 */
#define SEL(c, k, S, m) { .column = c, .kind = k, .off = offsetof(S, m), .len = sizeof(((S *)0)->m) }
#define SEL_INT(S, m) SEL(#m, LS_INT, S, m)
#define SEL_TEXT(S, m) SEL(#m, LS_TEXT, S, m)
#define SEL_LIVE(S)                                                                                      \
	SEL("live_cpu_millicores", LS_INT, S, live.cpu_millicores), SEL("live_rss_bytes", LS_INT, S, live.rss_bytes), \
		SEL("live_read_bytes_per_s", LS_INT, S, live.read_bytes_per_s),                              \
		SEL("live_write_bytes_per_s", LS_INT, S, live.write_bytes_per_s),                            \
		SEL("live_net_tx_bytes_per_s", LS_INT, S, live.net_tx_bytes_per_s),                          \
		SEL("live_net_rx_bytes_per_s", LS_INT, S, live.net_rx_bytes_per_s)
#define SEL_JOINED(c, S, m, m2, s)                                                                       \
	{ .column = c, .kind = LS_JOINED, .off = offsetof(S, m), .off2 = offsetof(S, m2), .sep = s }
/* A run's total with its joined cluster jobs' (RUN_WITH_JOBS). */
#define SEL_TOTAL_AS(S, c, m) { .column = RUN_WITH_JOBS(c), .expr = true, .of = c, .kind = LS_INT, .off = offsetof(S, m) }
#define SEL_TOTAL(S, m) SEL_TOTAL_AS(S, #m, m)
#define SEL_TOTAL_LIVE(S)                                                                                \
	SEL_TOTAL_AS(S, "live_cpu_millicores", live.cpu_millicores), SEL_TOTAL_AS(S, "live_rss_bytes", live.rss_bytes), \
		SEL_TOTAL_AS(S, "live_read_bytes_per_s", live.read_bytes_per_s),                             \
		SEL_TOTAL_AS(S, "live_write_bytes_per_s", live.write_bytes_per_s),                           \
		SEL_TOTAL_AS(S, "live_net_tx_bytes_per_s", live.net_tx_bytes_per_s),                         \
		SEL_TOTAL_AS(S, "live_net_rx_bytes_per_s", live.net_rx_bytes_per_s)
#define R struct store_run
static const struct lake_select_field run_fields[] = {
	SEL("run_id", LS_I64, R, run_id), SEL("host_id", LS_CHARS, R, host_id), SEL_INT(R, start_ns),
	SEL_INT(R, end_ns), SEL_INT(R, exit_code), SEL_INT(R, signal), SEL_INT(R, last_update_ns),
	SEL_INT(R, update_seq), SEL_TOTAL(R, processes), SEL_TOTAL(R, running_processes),
	{ .column = RUN_STEPS_WITH_JOBS, .expr = true, .of = "steps", .kind = LS_INT, .off = offsetof(R, steps) },
	SEL_TOTAL(R, signals), SEL_INT(R, root_pid), SEL_INT(R, preexisting), SEL_TOTAL(R, cpu_ns),
	SEL_TOTAL(R, read_bytes), SEL_TOTAL(R, write_bytes), SEL_TOTAL(R, rchar), SEL_TOTAL(R, wchar),
	SEL_TOTAL(R, net_tx_bytes), SEL_TOTAL(R, net_rx_bytes), SEL_TOTAL_LIVE(R), SEL_JOINED("command", R, command, command_json, " "),
	SEL_TEXT(R, summary), SEL_TEXT(R, state), SEL_TEXT(R, run_key), SEL_TEXT(R, engine), SEL_TEXT(R, pipeline),
	SEL_TEXT(R, pipeline_run_id), SEL_TEXT(R, run_name), SEL_TEXT(R, detected_by), SEL_TEXT(R, slurm_job_id),
	SEL_TEXT(R, aws_batch_job_id),
	{ .column = RUN_HAS_REPORT, .expr = true, .kind = LS_FLAG, .off = offsetof(R, has_stored_report), .len = 1 },
	SEL_TEXT(R, host_cloud), SEL_TEXT(R, host_instance_type), SEL_TEXT(R, host_instance_id), SEL_TEXT(R, host_region),
	SEL_INT(R, host_cpus), SEL_INT(R, host_memory_bytes),
	{ .column = "host_price_per_hour", .kind = LS_REAL, .off = offsetof(R, host_price_per_hour),
	  .off2 = offsetof(R, host_price_known) },
	SEL_INT(R, uid), SEL_TEXT(R, host_name), SEL_TEXT(R, slurm_job_name), SEL_TEXT(R, slurm_submit_dir),
	SEL_TEXT(R, slurm_submit_host), SEL_INT(R, joined_run_id), SEL_TEXT(R, joined_step_id), SEL_INT(R, submitted_ns),
	{ .column = RUN_JOBS, .expr = true, .kind = LS_INT, .off = offsetof(R, jobs) },
};
#undef R
static const struct lake_member_skip run_unread[] = {
	{ "boot_id", "the boot of the record that made the row or took it over: a reader asks for runs, not boots" },
	{ "seq", "with host_id and stream, the row's record: ST_RUN_REPORT_JSON joins it by them" },
	{ "stream", "with host_id and seq, the row's record: ST_RUN_REPORT_JSON joins it by them" },
	{ "batch_hash", "the batch that brought the row's record: the ledger's (batches), for tracer-ingest" },
	{ "schema", "the record's schema (tracer.run.v1, tracer.live.v1): a rebuilt report says its own" },
	{ "duration_ns", "end_ns - start_ns, which the readers have" },
	{ "dropped", "a report's count of lost records: in its record, which a reported run's reads return whole" },
};
const struct lake_select lake_run_select = { .table = "runs", .fields = run_fields, .nfields = N(run_fields),
					     .skip = run_unread, .nskip = N(run_unread) };

#define S struct store_step
static const struct lake_select_field step_fields[] = {
	SEL("idx", LS_I64, S, idx), SEL("step_id", LS_TEXT, S, id), SEL_TEXT(S, name), SEL_TEXT(S, state),
	SEL_TEXT(S, engine), SEL_TEXT(S, rule), SEL_TEXT(S, workdir), SEL_JOINED("tools", S, tools, tools_json, ", "),
	SEL_INT(S, start_ns), SEL_INT(S, end_ns), SEL_INT(S, last_update_ns), SEL_INT(S, exit_code), SEL_INT(S, signal),
	SEL_INT(S, failed), SEL_INT(S, processes), SEL_INT(S, running), SEL_INT(S, failed_processes),
	SEL_INT(S, nonzero_exits), SEL_INT(S, oom_killed), SEL_INT(S, cpu_ns), SEL_INT(S, peak_rss_bytes),
	SEL_INT(S, peak_rss_partial), SEL_INT(S, rss_sum_of_peaks_bytes), SEL_INT(S, memcg_peak_bytes),
	SEL_INT(S, read_bytes), SEL_INT(S, write_bytes), SEL_INT(S, rchar), SEL_INT(S, wchar), SEL_INT(S, net_tx_bytes),
	SEL_INT(S, net_rx_bytes), SEL_LIVE(S), SEL_INT(S, cpu_limit_millicores), SEL_INT(S, memory_limit_bytes),
	{ .column = STEP_JOB_ID, .expr = true, .kind = LS_TEXT, .off = offsetof(S, job_id) },
	{ .column = STEP_JOB_HOST, .expr = true, .kind = LS_TEXT, .off = offsetof(S, job_host) },
	{ .column = STEP_JOB_SUBMITTED, .expr = true, .kind = LS_INT, .off = offsetof(S, submitted_ns) },
	{ .column = STEP_JOB_QUEUED, .expr = true, .kind = LS_INT, .off = offsetof(S, queued_ns) },
};
#undef S
static const struct lake_member_skip step_unread[] = {
	{ "run_id", "the run whose steps are read: the statement's WHERE" },
};
const struct lake_select lake_step_select = { .table = "steps", .fields = step_fields, .nfields = N(step_fields),
					      .skip = step_unread, .nskip = N(step_unread) };

/*
 * A run's processes with what the report would say of them (the rest of the row: docs/lake.md, "One run",
 * says which fields a rebuilt report has): the cgroup v2 path unless it is the root (then the v1 memory
 * hierarchy's, as report_cgroup_path()), the samples' highest RSS and newest network figures (a process
 * without its exit record), whether any file access was recorded.
 */
#define P struct store_process
#define SEL_EXPR(e, k, m) { .column = e, .expr = true, .kind = k, .off = offsetof(P, m), .len = sizeof(((P *)0)->m) }
#define OF_P "s.host_id = p.host_id AND s.boot_id = p.boot_id AND s.tgid = p.tgid AND s.start_ns = p.start_ns"
static const struct lake_select_field process_fields[] = {
	SEL("host_id", LS_CHARS, P, host_id), SEL("boot_id", LS_CHARS, P, boot_id), SEL("tgid", LS_I64, P, tgid),
	SEL("start_ns", LS_I64, P, start_ns), SEL_INT(P, ppid), SEL_INT(P, start_real_ns), SEL_INT(P, end_real_ns),
	SEL_EXPR("CASE WHEN p.exit_ts_ns IS NOT NULL THEN 1 ELSE 0 END", LS_FLAG, from.exited), SEL_INT(P, exit_code),
	SEL_INT(P, signal), SEL_INT(P, core_dumped), SEL_INT(P, oom_killed), SEL_INT(P, utime_ns), SEL_INT(P, stime_ns),
	SEL_INT(P, runtime_ns), SEL("peak_rss_bytes", LS_INT, P, from.own_peak), SEL("maxrss_bytes", LS_INT, P, from.maxrss),
	/* INDEXED BY: without it SQLite may read every sample of the host (its key starts with host_id) */
	SEL_EXPR("(SELECT nullif(max(s.hiwater_rss_bytes), 0) FROM samples s INDEXED BY samples_by_process "
		 "WHERE " OF_P ")", LS_INT, from.sampled_peak),
	SEL_INT(P, read_bytes), SEL_INT(P, write_bytes), SEL_INT(P, rchar), SEL_INT(P, wchar), SEL_INT(P, net_tx_bytes),
	SEL_INT(P, net_rx_bytes), SEL("exit_flags", LS_INT, P, from.exit_flags),
	SEL("state_flags", LS_INT, P, from.state_flags),
	SEL_EXPR("(SELECT s.net_tx_bytes FROM samples s WHERE " NEWEST_SAMPLE_OF_P ")", LS_INT, from.sampled_tx),
	SEL_EXPR("(SELECT s.net_rx_bytes FROM samples s WHERE " NEWEST_SAMPLE_OF_P ")", LS_INT, from.sampled_rx),
	SEL_EXPR("CASE WHEN EXISTS (SELECT 1 FROM files f WHERE f.host_id = p.host_id AND f.boot_id = p.boot_id AND "
		 "f.tgid = p.tgid AND f.start_ns = p.start_ns) THEN 1 ELSE 0 END", LS_FLAG, files_traced),
	SEL_TEXT(P, exe), SEL_TEXT(P, cwd), SEL_TEXT(P, tool), SEL_TEXT(P, step), SEL("argv", LS_JSON, P, argv_json),
	SEL_EXPR("coalesce(CASE WHEN c2.path <> '/' THEN c2.path END, c1.path, c2.path)", LS_TEXT, cgroup),
};
#undef P
/* What a rebuilt report leaves out (docs/lake.md, "One run": the DESIGN.md fields and peak_rss_source). */
#define NOT_REBUILT(c) { c, "not in a rebuilt report's process (docs/lake.md, \"One run\", says which fields are)" }
static const struct lake_member_skip process_unread[] = {
	NOT_REBUILT("parent_start_ns"), NOT_REBUILT("uid"), NOT_REBUILT("gid"), NOT_REBUILT("comm"),
	NOT_REBUILT("env"), NOT_REBUILT("exec_flags"), NOT_REBUILT("execs"), NOT_REBUILT("mnt_ns"),
	NOT_REBUILT("pid_ns"), NOT_REBUILT("cancelled_write_bytes"), NOT_REBUILT("syscr"), NOT_REBUILT("syscw"),
	NOT_REBUILT("nvcsw"), NOT_REBUILT("nivcsw"), NOT_REBUILT("min_flt"), NOT_REBUILT("maj_flt"),
	NOT_REBUILT("run_delay_ns"), NOT_REBUILT("nr_threads"), NOT_REBUILT("iowait_ns"), NOT_REBUILT("blocked_ns"),
	NOT_REBUILT("net_wait_ns"), NOT_REBUILT("files_dropped"), NOT_REBUILT("memcg_peak_bytes"),
	NOT_REBUILT("reclaim_ns"), NOT_REBUILT("memcg_limit_bytes"), NOT_REBUILT("cpu_quota_millicores"),
	NOT_REBUILT("cpus_allowed"), NOT_REBUILT("preexisting"),
	{ "cgroup_id", "joined to its path (cgroups c2): the cgroup the row gives" },
	{ "cgroup_v1_id", "joined to its path (cgroups c1): the cgroup the row gives where the v2 one is the root" },
	{ "fork_ts_ns", "when its fork was seen: start_ns is its start" },
	{ "exec_ts_ns", "when its last exec was seen: a rebuilt report names the exec, not when" },
	{ "exit_ts_ns", "when its exit was seen (monotonic): read as whether it exited; end_real_ns is the end" },
	{ "exit_raw", "the wait status as the kernel gave it: exit_code, signal and core_dumped are made of it" },
	{ "last_pid", "the thread whose exit ended the process: tgid names the process" },
	{ "run_id", "the run whose processes are read: the statement's WHERE" },
};
const struct lake_select lake_process_select = { .table = "processes", .alias = "p", .fields = process_fields,
						 .nfields = N(process_fields), .skip = process_unread,
						 .nskip = N(process_unread) };

int lake_select_sql(const struct lake_select *sel, const char *tail, struct obuf *o)
{
	obuf_puts(o, "SELECT "); /* obuf_puts: an expression or a tail may be longer than obuf_printf keeps */
	for (unsigned i = 0; i < sel->nfields; i++) {
		obuf_puts(o, i ? ", " : "");
		if (sel->alias && !sel->fields[i].expr) {
			obuf_puts(o, sel->alias);
			obuf_puts(o, ".");
		}
		obuf_puts(o, sel->fields[i].column);
	}
	obuf_puts(o, " FROM ");
	obuf_puts(o, sel->table);
	if (sel->alias) {
		obuf_puts(o, " ");
		obuf_puts(o, sel->alias);
	}
	obuf_puts(o, tail);
	return o->err;
}

/* A row's received_ns from its record's (the same host, stream and seq), on both engines. */
#define RECEIVED_FROM_RECORDS(t)                                                                         \
	"UPDATE " t " SET received_ns = coalesce((SELECT r.received_ns FROM records r WHERE r.host_id = " t \
	".host_id AND r.stream = " t ".stream AND r.seq = " t ".seq), 0);\n"

#define PG_RECEIVED_FROM_RECORDS(t)                                                                       \
	"UPDATE " t " t SET received_ns = r.received_ns FROM records r WHERE r.host_id = t.host_id AND "        \
	"r.stream = t.stream AND r.seq = t.seq;\n"

/*
 * What an upgrade does to old rows, after its columns are added and before its indexes are created (a
 * unique index needs the rows apart first). Only versions that change rows are here. Each in SQLite's SQL
 * and in PostgreSQL's: pg is NULL only for the versions before PostgreSQL lakes (LAKE_SCHEMA_PG_FIRST and
 * older; no PostgreSQL lake is ever upgraded to those); a later version writes both.
 */
static const struct {
	uint8_t version;
	const char *sqlite;
	const char *pg;
} upgrades[] = {
	/*
	 * 3: the rows of version 2 are all tracer run reports' runs: their state follows from the exit code,
	 * their steps' from failed, as a report stored now would have them. A host may have sent a report
	 * repeating a step id: the later ones lose their id (the report itself stays whole in records).
	 */
	{ .version = 3, .pg = NULL,
	  .sqlite = "UPDATE runs SET detected_by = 'tracer_run', last_update_ns = end_ns, state = CASE WHEN "
		    "exit_code = 0 THEN 'succeeded' WHEN exit_code IS NOT NULL THEN 'failed' ELSE 'lost' END;\n"
		    "UPDATE steps SET state = CASE failed WHEN 1 THEN 'failed' WHEN 0 THEN 'succeeded' END;\n"
		    "UPDATE steps SET step_id = NULL WHERE step_id IS NOT NULL AND rowid NOT IN "
		    "(SELECT min(rowid) FROM steps WHERE step_id IS NOT NULL GROUP BY run_id, step_id);\n" },
	/* 8: what the lake knew of each host's seqs and chain is its stream 0's */
	{ .version = 8, .pg = NULL,
	  .sqlite = "INSERT INTO streams (host_id, stream, first_seen_ns, last_seen_ns, max_seq, batches, records, "
		    "last_batch_seq, last_batch_hash) SELECT host_id, 0, first_seen_ns, last_seen_ns, max_seq, "
		    "batches, records, last_batch_seq, last_batch_hash FROM hosts;\n" },
	/* 9: a row of before was received with its batch (a record names it; the other rows share its seq) */
	{ .version = 9,
	  .sqlite = "UPDATE records SET received_ns = coalesce((SELECT b.received_ns FROM batches b WHERE "
		    "b.hash = records.batch_hash), 0);\n" RECEIVED_FROM_RECORDS("samples") RECEIVED_FROM_RECORDS("files")
			    RECEIVED_FROM_RECORDS("heartbeats"),
	  .pg = "UPDATE records r SET received_ns = b.received_ns FROM batches b WHERE b.hash = r.batch_hash;\n"
		PG_RECEIVED_FROM_RECORDS("samples") PG_RECEIVED_FROM_RECORDS("files")
			PG_RECEIVED_FROM_RECORDS("heartbeats") },
	/* 10: the same for the agent's counters and losses (a row per record: a second of each host's) */
	{ .version = 10,
	  .sqlite = RECEIVED_FROM_RECORDS("agent_counters") RECEIVED_FROM_RECORDS("losses"),
	  .pg = PG_RECEIVED_FROM_RECORDS("agent_counters") PG_RECEIVED_FROM_RECORDS("losses") },
};

const struct lake_table *lake_table(const char *name)
{
	for (unsigned i = 0; i < lake_ntables; i++)
		if (!strcmp(lake_tables[i].name, name))
			return &lake_tables[i];
	return NULL;
}

/* The row statements of the tables a record fills a row of (lake_row_sql), built once. */
#define ROW_SQL_MAX 1024
static char row_sql[N(lake_tables)][ROW_SQL_MAX];
static pthread_once_t row_sql_once = PTHREAD_ONCE_INIT;

static void row_sql_build(void)
{
	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *t = &lake_tables[i];
		struct obuf o;
		unsigned n = 0;

		if (!t->record_size && !t->json_schema)
			continue;
		obuf_init_mem(&o, ROW_SQL_MAX);
		obuf_printf(&o, "INSERT INTO %s (", t->name);
		for (unsigned j = 0; j < t->ncols; j++)
			if (lake_row_column(&t->cols[j]))
				obuf_printf(&o, "%s%s", n++ ? ", " : "", t->cols[j].name);
		obuf_puts(&o, ") VALUES (");
		for (unsigned j = 0; j < n; j++)
			obuf_puts(&o, j ? ",?" : "?");
		obuf_putc(&o, ')');
		obuf_putc(&o, 0);
		/* Too long for its buffer, or no memory: left empty, which lake_row_sql answers NULL for. */
		if (!o.err && o.len <= ROW_SQL_MAX)
			memcpy(row_sql[i], o.buf, o.len);
		obuf_free(&o);
	}
}

const char *lake_row_sql(const struct lake_table *t)
{
	size_t i = (size_t)(t - lake_tables);

	if (i >= lake_ntables || (!t->record_size && !t->json_schema))
		return NULL;
	pthread_once(&row_sql_once, row_sql_build);
	return row_sql[i][0] ? row_sql[i] : NULL;
}

/* The upserts' statements (lake_upsert_sql), built once. */
const struct lake_upsert *const lake_upserts[] = {
	&lake_exec_upsert,	 &lake_fork_upsert,	    &lake_exit_upsert,	       &lake_cgroup_upsert,
	&lake_live_run_insert,	 &lake_live_run_update,	    &lake_live_step_upsert,   &lake_live_attrib_upsert,
	&lake_tools_upsert,	 &lake_report_run_insert,   &lake_report_run_update,  &lake_report_step_insert,
	&lake_report_proc_insert, &lake_report_signal_insert, &lake_live_signal_insert,
};
const unsigned lake_nupserts = N(lake_upserts);
/* [upsert][log2 of its rows]: malloc'd once; NULL where none could be made, or it has one row only. */
static char *upsert_sql[N(lake_upserts)][LAKE_ROWS_LOG_MAX + 1];
static pthread_once_t upsert_sql_once = PTHREAD_ONCE_INIT;

/*
 * Fill f's value in row `row` of the statement, parameter ?n: its own, or (LF_NEXT_IDX) the position after its
 * run's rows, plus the row's (the rows of one statement each their own: the subquery sees the rows before the
 * statement on PostgreSQL, perhaps the statement's own on SQLite; either way a later row's value is higher).
 */
static void upsert_value(struct obuf *o, const struct lake_upsert *u, const struct lake_fill *f, unsigned n,
			 unsigned row)
{
	if (f->src.from != LF_NEXT_IDX)
		obuf_printf(o, "?%u", n);
	else if (!row)
		obuf_printf(o, "(SELECT coalesce(max(%s) + 1, 0) FROM %s WHERE run_id = ?%u)", f->column, u->table, n);
	else
		obuf_printf(o, "(SELECT coalesce(max(%s) + 1, 0) FROM %s WHERE run_id = ?%u) + %u", f->column, u->table,
			    n, row);
}

/* The oldest a row's LM_NEWER column can be: the smallest int64, which SQL cannot write as one literal. */
#define OLDEST "-9223372036854775807 - 1"

/*
 * An UPDATE's SET, or an upsert's DO UPDATE SET: each fill's merge, its value ?n (LW_UPDATE) or excluded.c.
 * The fills that choose the row (LM_WHERE, LM_NEWER) into where.
 */
static void upsert_set(struct obuf *o, struct obuf *where, const struct lake_upsert *u)
{
	bool update = u->write == LW_UPDATE;
	const char *t = update ? NULL : u->table;
	unsigned n = 0, set = 0, w = 0;

	for (unsigned j = 0; j < u->nfills; j++) {
		const struct lake_fill *f = &u->fills[j];
		const char *c = f->column, *sep = set ? ", " : "";
		char v[96];

		if (!lake_fill_bound(u, f))
			continue;
		n++;
		if (update)
			snprintf(v, sizeof(v), "?%u", n);
		else
			snprintf(v, sizeof(v), "excluded.%s", c);
		switch (f->merge) {
		case LM_NEW: obuf_printf(o, "%s%s = %s", sep, c, v); break;
		case LM_KEEP: obuf_printf(o, "%s%s = coalesce(%s%s%s, %s)", sep, c, t ? t : "", t ? "." : "", c, v); break;
		case LM_GIVEN: obuf_printf(o, "%s%s = coalesce(%s, %s%s%s)", sep, c, v, t ? t : "", t ? "." : "", c); break;
		case LM_ADD: obuf_printf(o, "%s%s = %s%s%s + %s", sep, c, t ? t : "", t ? "." : "", c, v); break;
		case LM_NEWER:
			obuf_printf(o, "%s%s = %s", sep, c, v);
			obuf_printf(where, "%s%s > coalesce(%s%s%s, " OLDEST ")", w++ ? " AND " : "", v, t ? t : "",
				    t ? "." : "", c);
			break;
		case LM_WHERE: obuf_printf(where, "%s%s = %s", w++ ? " AND " : "", c, v); continue;
		default: continue; /* LM_KEY, LM_INSERT: the row's */
		}
		set++;
	}
}

static void upsert_sql_one(struct obuf *o, const struct lake_upsert *u, unsigned rows)
{
	struct obuf where;
	unsigned n = 0;

	obuf_init_mem(&where, 1024);
	if (u->write == LW_UPDATE) {
		obuf_printf(o, "UPDATE %s SET ", u->table);
		upsert_set(o, &where, u);
	} else {
		obuf_printf(o, "INSERT INTO %s (", u->table);
		for (unsigned j = 0; j < u->nfills; j++)
			if (lake_fill_bound(u, &u->fills[j]))
				obuf_printf(o, "%s%s", n++ ? ", " : "", u->fills[j].column);
		obuf_puts(o, ") VALUES ");
		n = 0;
		for (unsigned r = 0; r < rows; r++) {
			const char *sep = r ? ", (" : "(";

			for (unsigned j = 0; j < u->nfills; j++)
				if (lake_fill_bound(u, &u->fills[j])) {
					obuf_puts(o, sep);
					upsert_value(o, u, &u->fills[j], ++n, r);
					sep = ", ";
				}
			obuf_putc(o, ')');
		}
	}
	if (u->write == LW_UPSERT) {
		n = 0;
		obuf_puts(o, " ON CONFLICT (");
		for (unsigned j = 0; j < u->nfills; j++)
			if (u->fills[j].merge == LM_KEY)
				obuf_printf(o, "%s%s", n++ ? ", " : "", u->fills[j].column);
		obuf_puts(o, ") DO UPDATE SET ");
		upsert_set(o, &where, u);
	} else if (u->write == LW_INSERT_NEW) {
		obuf_puts(o, " ON CONFLICT DO NOTHING");
	}
	if (where.len) {
		obuf_puts(o, " WHERE ");
		obuf_put(o, where.buf, where.len);
	}
	if (where.err)
		o->err = where.err;
	if (u->returning)
		obuf_printf(o, " RETURNING %s", u->returning);
	obuf_putc(o, 0);
	obuf_free(&where);
}

static void upsert_sql_build(void)
{
	for (size_t i = 0; i < N(lake_upserts); i++)
		for (unsigned k = 0; k <= LAKE_ROWS_LOG_MAX; k++) {
			struct obuf o;

			/* several rows: an INSERT or upsert of an array's elements only (a row's merge sees no other) */
			if (k && (!lake_upserts[i]->element || lake_upserts[i]->write == LW_UPDATE))
				break;
			obuf_init_mem(&o, 1u << 20);
			upsert_sql_one(&o, lake_upserts[i], 1u << k);
			if (!o.err)
				upsert_sql[i][k] = strdup(o.buf);
			obuf_free(&o);
		}
}

const char *lake_upsert_rows_sql(const struct lake_upsert *u, unsigned rows)
{
	unsigned k = 0;

	while (k < LAKE_ROWS_LOG_MAX && (1u << k) < rows)
		k++;
	if ((1u << k) != rows)
		return NULL;
	pthread_once(&upsert_sql_once, upsert_sql_build);
	for (size_t i = 0; i < N(lake_upserts); i++)
		if (lake_upserts[i] == u)
			return upsert_sql[i][k];
	return NULL;
}

const char *lake_upsert_sql(const struct lake_upsert *u)
{
	return lake_upsert_rows_sql(u, 1);
}

static const char *const sqlite_type[] = {
	[LK_INT] = "INTEGER", [LK_TEXT] = "TEXT", [LK_REAL] = "REAL", [LK_BLOB] = "BLOB", [LK_ID] = "INTEGER",
};

static void sqlite_column(struct obuf *o, const struct lake_column *c)
{
	obuf_printf(o, "%s %s", c->name, sqlite_type[c->type]);
	if (c->type == LK_ID || (c->flags & LK_KEY))
		obuf_puts(o, " PRIMARY KEY");
	if (c->flags & LK_NOT_NULL)
		obuf_puts(o, " NOT NULL");
	if (c->flags & LK_UNIQUE)
		obuf_puts(o, " UNIQUE");
	if (c->dflt)
		obuf_printf(o, " DEFAULT %s", c->dflt);
	if (c->check)
		obuf_printf(o, " CHECK (%s)", c->check);
}

/* A column or index of version v: added by then and not removed. */
#define LIVE_AT(x, v) ((x)->since <= (v) && (!(x)->until || (x)->until > (v)))

/* CREATE TABLE name with the columns of version v. */
static void sqlite_create(struct obuf *o, const struct lake_table *t, const char *name, int v)
{
	const char *sep = "";

	obuf_printf(o, "CREATE TABLE %s (", name);
	for (unsigned i = 0; i < t->ncols; i++) {
		if (!LIVE_AT(&t->cols[i], v))
			continue;
		obuf_puts(o, sep);
		sqlite_column(o, &t->cols[i]);
		sep = ", ";
	}
	bool before = t->rebuilt > v; /* its key of before */

	if (t->key)
		obuf_printf(o, ", PRIMARY KEY (%s)", before ? t->was : t->key);
	if (t->unique)
		obuf_printf(o, ", UNIQUE (%s)", before ? t->was : t->unique);
	obuf_printf(o, ")%s;\n", t->without_rowid ? " WITHOUT ROWID" : "");
}

/* CREATE INDEX, the same on both backends (a partial one's WHERE too). */
static void index_ddl(struct obuf *o, const struct lake_table *t, const struct lake_index *x)
{
	obuf_printf(o, "CREATE %sINDEX %s ON %s (%s)%s%s;\n", x->unique ? "UNIQUE " : "", x->name, t->name,
		    x->columns, x->where ? " WHERE " : "", x->where ? x->where : "");
}

/* Version v changed t's key: a new table of v's layout takes the rows (its new columns their defaults). */
static void sqlite_rebuild(struct obuf *o, const struct lake_table *t, int v)
{
	sqlite_create(o, t, "lake_rebuilt", v);
	for (int pass = 0; pass < 2; pass++) { /* the columns it had and keeps: INSERT (...) SELECT ... */
		const char *sep = "";

		obuf_puts(o, pass ? ") SELECT " : "INSERT INTO lake_rebuilt (");
		for (unsigned i = 0; i < t->ncols; i++)
			if (LIVE_AT(&t->cols[i], v - 1) && LIVE_AT(&t->cols[i], v)) {
				obuf_printf(o, "%s%s", sep, t->cols[i].name);
				sep = ", ";
			}
	}
	obuf_printf(o, " FROM %s;\n", t->name);
	obuf_printf(o, "DROP TABLE %s;\nALTER TABLE lake_rebuilt RENAME TO %s;\n", t->name, t->name);
	for (unsigned j = 0; j < t->nidx; j++)
		if (LIVE_AT(&t->idx[j], v))
			index_ddl(o, t, &t->idx[j]);
}

/* Version v's changes to the tables of before it, but for those it rebuilds. */
static void sqlite_alter(struct obuf *o, const struct lake_table *t, int v, bool add)
{
	for (unsigned j = 0; j < t->ncols; j++) {
		if (add && t->cols[j].since == v) {
			obuf_printf(o, "ALTER TABLE %s ADD COLUMN ", t->name);
			sqlite_column(o, &t->cols[j]);
			obuf_puts(o, ";\n");
		} else if (!add && t->cols[j].until == v) {
			obuf_printf(o, "ALTER TABLE %s DROP COLUMN %s;\n", t->name, t->cols[j].name);
		}
	}
}

int lake_schema_sqlite(int from, int to, struct obuf *o)
{
	if (from < 0 || to < from || to < 1 || to > LAKE_SCHEMA_VERSION)
		return -EINVAL;
	if (from == 0) { /* a new lake: every table whole, then every index */
		for (unsigned i = 0; i < lake_ntables; i++)
			if (lake_tables[i].since <= to)
				sqlite_create(o, &lake_tables[i], lake_tables[i].name, to);
		for (unsigned i = 0; i < lake_ntables; i++)
			for (unsigned j = 0; j < lake_tables[i].nidx && lake_tables[i].since <= to; j++)
				if (LIVE_AT(&lake_tables[i].idx[j], to))
					index_ddl(o, &lake_tables[i], &lake_tables[i].idx[j]);
		obuf_printf(o, "INSERT INTO schema_version VALUES (%d);\n", to);
		return 0;
	}
	for (int v = from + 1; v <= to; v++) {
		for (unsigned i = 0; i < lake_ntables; i++) {
			const struct lake_table *t = &lake_tables[i];

			if (t->since == v)
				sqlite_create(o, t, t->name, v);
			else if (t->since < v && t->rebuilt == v)
				sqlite_rebuild(o, t, v);
			else if (t->since < v)
				sqlite_alter(o, t, v, true);
		}
		for (unsigned i = 0; i < N(upgrades); i++)
			if (upgrades[i].version == v)
				obuf_puts(o, upgrades[i].sqlite);
		for (unsigned i = 0; i < lake_ntables; i++) {
			const struct lake_table *t = &lake_tables[i];

			if (t->since >= v || t->rebuilt == v)
				continue; /* its indexes are made with it */
			for (unsigned j = 0; j < t->nidx; j++)
				if (t->idx[j].until == v)
					obuf_printf(o, "DROP INDEX %s;\n", t->idx[j].name);
			sqlite_alter(o, t, v, false);
		}
		for (unsigned i = 0; i < lake_ntables; i++) {
			const struct lake_table *t = &lake_tables[i];

			for (unsigned j = 0; j < t->nidx; j++)
				if (t->idx[j].since == v && (t->since == v || t->rebuilt != v))
					index_ddl(o, t, &t->idx[j]);
		}
		obuf_printf(o, "UPDATE schema_version SET version = %d;\n", v);
	}
	return 0;
}

/*
 * PostgreSQL (docs/lake.md, "PostgreSQL"): the same tables, columns and indexes, each statement built by one
 * function; a time-partitioned table (`partitioned`) ends its CREATE TABLE with PARTITION BY RANGE, its key
 * then holding the partition key. Every key, unique and check constraint is
 * named, so that a later upgrade finds it by name: <table>_pkey (the primary key: the table's key, or its
 * own key or id column), <table>_unique (the table's UNIQUE of several columns), <table>_<column>_key (a
 * column's UNIQUE), <table>_<column>_check. Index names share their namespace with these: none ends so.
 * WITHOUT ROWID is SQLite's: PostgreSQL's tables are heaps whatever their key.
 */
static const char *const pg_type[] = {
	[LK_INT] = "BIGINT", [LK_TEXT] = "TEXT", [LK_REAL] = "DOUBLE PRECISION", [LK_BLOB] = "BYTEA",
	[LK_ID] = "BIGINT GENERATED BY DEFAULT AS IDENTITY",
};

#define PARTITIONED_AT(t, v) ((t)->partitioned && (t)->partitioned <= (v))

/*
 * 9: lake_partition(table, day) makes the table's partition of that UTC day (days since the epoch) unless
 * it is there: <table>_pYYYYMMDD, FOR VALUES FROM (day's first ns) TO (the next day's). The ingests' upkeep
 * (lake/maintain.c) and the upgrade to version 9 make partitions with it, and drop them by that name.
 */
#define PG_PARTITION_FUNCTION_SINCE 9
static const char pg_partition_function[] =
	"CREATE OR REPLACE FUNCTION lake_partition(tbl text, day bigint) RETURNS void LANGUAGE plpgsql AS $f$\n"
	"BEGIN\n"
	"  EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)', tbl || '_p' "
	"|| to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'), tbl, day * 86400000000000, "
	"(day + 1) * 86400000000000);\n"
	"END\n"
	"$f$;\n";

/* Its key's columns at version v, "a, b": before the version that changed it, the key it had then. */
static const char *pg_key_of(const struct lake_table *t, const char *now, int v)
{
	return now && t->rebuilt > v ? t->was : now;
}

static void pg_column(struct obuf *o, const struct lake_table *t, const struct lake_column *c)
{
	obuf_printf(o, "%s %s", c->name, pg_type[c->type]);
	if (c->type == LK_ID || (c->flags & LK_KEY))
		obuf_printf(o, " CONSTRAINT %s_pkey PRIMARY KEY", t->name);
	if (c->flags & LK_NOT_NULL)
		obuf_puts(o, " NOT NULL");
	if (c->dflt)
		obuf_printf(o, " DEFAULT %s", c->dflt);
	if (c->flags & LK_UNIQUE)
		obuf_printf(o, " CONSTRAINT %s_%s_key UNIQUE", t->name, c->name);
	if (c->check)
		obuf_printf(o, " CONSTRAINT %s_%s_check CHECK (%s)", t->name, c->name, c->check);
}

/* CREATE TABLE with the columns and keys of version v (its indexes: index_ddl). */
static void pg_create(struct obuf *o, const struct lake_table *t, int v)
{
	const char *sep = "";

	obuf_printf(o, "CREATE TABLE %s (", t->name);
	for (unsigned i = 0; i < t->ncols; i++) {
		if (!LIVE_AT(&t->cols[i], v))
			continue;
		obuf_puts(o, sep);
		pg_column(o, t, &t->cols[i]);
		sep = ", ";
	}
	bool parts = PARTITIONED_AT(t, v);

	/* a partitioned table's key holds its partition key (PostgreSQL's rule) */
	if (t->key)
		obuf_printf(o, ", CONSTRAINT %s_pkey PRIMARY KEY (%s%s)", t->name, pg_key_of(t, t->key, v),
			    parts ? ", " LAKE_PARTITION_COLUMN : "");
	if (t->unique)
		obuf_printf(o, ", CONSTRAINT %s_unique UNIQUE (%s)", t->name, pg_key_of(t, t->unique, v));
	obuf_printf(o, ")%s;\n", parts ? " PARTITION BY RANGE (" LAKE_PARTITION_COLUMN ")" : "");
}


/* The columns version v added to a table of before it. */
static void pg_add_columns(struct obuf *o, const struct lake_table *t, int v)
{
	for (unsigned j = 0; j < t->ncols; j++) {
		if (t->cols[j].since != v)
			continue;
		obuf_printf(o, "ALTER TABLE %s ADD COLUMN ", t->name);
		pg_column(o, t, &t->cols[j]);
		obuf_puts(o, ";\n");
	}
}

/* Version v changed its key: in place, by name (the rows stay where they are, the key's index is made anew). */
static void pg_rekey(struct obuf *o, const struct lake_table *t, int v)
{
	if (t->rebuilt != v)
		return;
	if (t->key)
		obuf_printf(o, "ALTER TABLE %s DROP CONSTRAINT %s_pkey, ADD CONSTRAINT %s_pkey PRIMARY KEY (%s);\n",
			    t->name, t->name, t->name, t->key);
	if (t->unique)
		obuf_printf(o, "ALTER TABLE %s DROP CONSTRAINT %s_unique, ADD CONSTRAINT %s_unique UNIQUE (%s);\n",
			    t->name, t->name, t->name, t->unique);
}

/* The indexes and columns version v removed from a table of before it. */
static void pg_drop(struct obuf *o, const struct lake_table *t, int v)
{
	for (unsigned j = 0; j < t->nidx; j++)
		if (t->idx[j].until == v)
			obuf_printf(o, "DROP INDEX %s;\n", t->idx[j].name);
	for (unsigned j = 0; j < t->ncols; j++)
		if (t->cols[j].until == v)
			obuf_printf(o, "ALTER TABLE %s DROP COLUMN %s;\n", t->name, t->cols[j].name);
}

/*
 * Column c of t compressed with lz4: the table and its partitions (a partition made later takes its parent's
 * method). A server built without lz4 refuses the method (feature_not_supported): it keeps its default.
 */
static void pg_lz4(struct obuf *o, const struct lake_table *t, const struct lake_column *c)
{
	obuf_printf(o, "DO $$ DECLARE r regclass; BEGIN FOR r IN SELECT '%s'::regclass UNION ALL SELECT "
		    "inhrelid::regclass FROM pg_inherits WHERE inhparent = '%s'::regclass LOOP EXECUTE "
		    "format('ALTER TABLE %%s ALTER COLUMN %s SET COMPRESSION lz4', r); END LOOP; "
		    "EXCEPTION WHEN feature_not_supported THEN NULL; END $$;\n",
		    t->name, t->name, c->name);
}

/* The columns of tables of version v compressed with lz4 from version from + 1 to v. */
static void pg_lz4_since(struct obuf *o, int from, int v)
{
	for (unsigned i = 0; i < lake_ntables; i++)
		for (unsigned j = 0; j < lake_tables[i].ncols && lake_tables[i].since <= v; j++)
			if (lake_tables[i].cols[j].lz4 > from && lake_tables[i].cols[j].lz4 <= v &&
			    LIVE_AT(&lake_tables[i].cols[j], v))
				pg_lz4(o, &lake_tables[i], &lake_tables[i].cols[j]);
}

/* A new lake of version to: every table whole, then every index, then its version's row. */
static void pg_new_lake(struct obuf *o, int to)
{
	if (to >= PG_PARTITION_FUNCTION_SINCE)
		obuf_puts(o, pg_partition_function);
	for (unsigned i = 0; i < lake_ntables; i++)
		if (lake_tables[i].since <= to)
			pg_create(o, &lake_tables[i], to);
	for (unsigned i = 0; i < lake_ntables; i++)
		for (unsigned j = 0; j < lake_tables[i].nidx && lake_tables[i].since <= to; j++)
			if (LIVE_AT(&lake_tables[i].idx[j], to))
				index_ddl(o, &lake_tables[i], &lake_tables[i].idx[j]);
	pg_lz4_since(o, 0, to);
	obuf_printf(o, "INSERT INTO schema_version VALUES (%d);\n", to);
}

/*
 * Version v made t a partitioned table: the rows move into a new one (its columns of v, each row in its
 * day's partition), and its indexes are made on it. The old table's key and indexes go first, so that their
 * names are free.
 */
static void pg_repartition(struct obuf *o, const struct lake_table *t, int v)
{
	const char *sep = "";

	if (t->key)
		obuf_printf(o, "ALTER TABLE %s DROP CONSTRAINT %s_pkey;\n", t->name, t->name);
	for (unsigned j = 0; j < t->nidx; j++)
		if (LIVE_AT(&t->idx[j], v - 1) && LIVE_AT(&t->idx[j], v)) /* pg_drop() dropped those v removed */
			obuf_printf(o, "DROP INDEX %s;\n", t->idx[j].name);
	obuf_printf(o, "ALTER TABLE %s RENAME TO lake_old;\n", t->name);
	pg_create(o, t, v);
	obuf_printf(o, "SELECT lake_partition('%s', d) FROM (SELECT DISTINCT " LAKE_PARTITION_COLUMN " / %lld AS d "
		    "FROM lake_old) days;\nINSERT INTO %s (", t->name, LAKE_PARTITION_NS, t->name);
	for (unsigned i = 0; i < t->ncols; i++)
		if (LIVE_AT(&t->cols[i], v)) {
			obuf_printf(o, "%s%s", sep, t->cols[i].name);
			sep = ", ";
		}
	obuf_printf(o, ") SELECT ");
	sep = "";
	for (unsigned i = 0; i < t->ncols; i++)
		if (LIVE_AT(&t->cols[i], v)) {
			obuf_printf(o, "%s%s", sep, t->cols[i].name);
			sep = ", ";
		}
	obuf_puts(o, " FROM lake_old;\nDROP TABLE lake_old;\n");
	for (unsigned j = 0; j < t->nidx; j++)
		if (LIVE_AT(&t->idx[j], v))
			index_ddl(o, t, &t->idx[j]);
}

/*
 * The upgrade of a lake of version v - 1 to v: its new tables; the columns it added; its updates of old rows;
 * its key changes (after the updates, which can make the rows fit the new key, as for a unique index); the
 * indexes and columns it removed; the tables it partitioned, moved into partitions (with their indexes);
 * its new indexes (those of its new tables too); its version.
 */
static void pg_upgrade(struct obuf *o, int v)
{
	for (unsigned i = 0; i < lake_ntables; i++) {
		if (lake_tables[i].since == v)
			pg_create(o, &lake_tables[i], v);
		else if (lake_tables[i].since < v)
			pg_add_columns(o, &lake_tables[i], v);
	}
	for (unsigned i = 0; i < N(upgrades); i++)
		if (upgrades[i].version == v)
			obuf_puts(o, upgrades[i].pg);
	for (unsigned i = 0; i < lake_ntables; i++)
		if (lake_tables[i].since < v)
			pg_rekey(o, &lake_tables[i], v);
	for (unsigned i = 0; i < lake_ntables; i++)
		if (lake_tables[i].since < v)
			pg_drop(o, &lake_tables[i], v);
	if (v == PG_PARTITION_FUNCTION_SINCE)
		obuf_puts(o, pg_partition_function);
	for (unsigned i = 0; i < lake_ntables; i++)
		if (lake_tables[i].since < v && lake_tables[i].partitioned == v)
			pg_repartition(o, &lake_tables[i], v);
	for (unsigned i = 0; i < lake_ntables; i++)
		for (unsigned j = 0; j < lake_tables[i].nidx; j++)
			if (lake_tables[i].idx[j].since == v &&
			    !(lake_tables[i].since < v && lake_tables[i].partitioned == v))
				index_ddl(o, &lake_tables[i], &lake_tables[i].idx[j]);
	pg_lz4_since(o, v - 1, v);
	obuf_printf(o, "UPDATE schema_version SET version = %d;\n", v);
}

int lake_schema_pg(int from, int to, struct obuf *o)
{
	if (from < 0 || (from > 0 && from < LAKE_SCHEMA_PG_FIRST) || to < from || to < LAKE_SCHEMA_PG_FIRST ||
	    to > LAKE_SCHEMA_VERSION)
		return -EINVAL;
	/* an update written for SQLite only: this build cannot upgrade a PostgreSQL lake across it */
	for (unsigned i = 0; i < N(upgrades); i++)
		if (upgrades[i].version > from && upgrades[i].version > LAKE_SCHEMA_PG_FIRST &&
		    upgrades[i].version <= to && !upgrades[i].pg)
			return -EINVAL;
	if (from == 0) {
		pg_new_lake(o, to);
		return 0;
	}
	for (int v = from + 1; v <= to; v++)
		pg_upgrade(o, v);
	return 0;
}
