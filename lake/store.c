/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake in SQLite: schema, prepared statements, one transaction per
 * batch. docs/lake.md describes every table and column.
 *
 * Ids (hosts, boots, keys, batch hashes) are stored as lower-case hex
 * text, so that a person at the sqlite3 prompt can paste them. Times named
 * *_ns without "real" are the host's CLOCK_MONOTONIC (as in the records);
 * *_real_ns and the batch and report times are CLOCK_REALTIME.
 *
 * Records come from a signed batch, but the signer is a machine that may
 * be compromised: every kernel record goes through the processor's
 * validating decoder, lake records are checked for their exact size, and a
 * run report is checked to be UTF-8 JSON before SQLite's json1 functions
 * take values out of it, each with its expected type (anything else is
 * NULL). A record that fails is stored (records keeps every byte) with a
 * note saying why, counted, and nothing is derived from it.
 *
 * Which records are new is decided in memory under the stream's row lock
 * (known_seqs(), store_frame()); a new record's row and the rows keyed by
 * it go through bulk statements (stmt_bulk[]: COPY on PostgreSQL), the
 * upserts whose outcome is never read through queued ones (stmt_queued[]:
 * PostgreSQL's pipeline mode).
 */
#include "store.h"
#include "db.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include "sql.h"

#include "batch.h"
#include "decode.h"
#include "hash.h"
#include "join.h"
#include "json.h"
#include "lake.h"
#include "records.h"
#include "schema.h"

#define HEX_HOST (2 * BATCH_HOST_ID_LEN + 1)
#define HEX_KEY (2 * BATCH_KEY_ID_LEN + 1)
#define HEX_HASH (2 * BATCH_HASH_LEN + 1)

/* ---- schema: lake/schema.c's table ---- */

_Static_assert(STORE_SCHEMA_VERSION == LAKE_SCHEMA_VERSION, "store.h and schema.h: one version");

/* The host a run ran on and its user (docs/processor.md, "Host identity"; lake/schema.c's HOST_GIVEN). */
#define HOST_COLUMNS                                                                                     \
	"host_cloud, host_instance_type, host_instance_id, host_region, host_cpus, host_memory_bytes, "     \
	"host_price_per_hour, uid"

/* ---- statements ------------------------------------------------------- */

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_BATCH_EXISTS] = "SELECT 1 FROM batches WHERE hash = ?1",
	[ST_CHAIN] = "SELECT 1 FROM batches WHERE hash = ?1 AND host_id = ?2 AND stream = ?3",
	[ST_HOST_ENSURE] = "INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns) VALUES (?1, ?2, ?2) "
			   "ON CONFLICT (host_id) DO NOTHING",
	/* The stream's row, locked to the end of the transaction (batches of one stream are stored one at a time),
	 * and its highest seq. */
	[ST_STREAM_LOCK] = "INSERT INTO streams (host_id, stream, first_seen_ns, last_seen_ns) VALUES (?1, ?2, ?3, ?3) "
			   "ON CONFLICT (host_id, stream) DO UPDATE SET last_seen_ns = streams.last_seen_ns "
			   "RETURNING max_seq",
	[ST_HOST_UPDATE] = "UPDATE hosts SET last_seen_ns = ?2, batches = batches + 1, records = records + ?3, "
			   "last_batch_seq = ?4, last_batch_hash = ?5, last_key_id = ?6, last_boot_id = ?7 "
			   "WHERE host_id = ?1",
	[ST_STREAM_UPDATE] = "UPDATE streams SET last_seen_ns = ?3, max_seq = ?4, batches = batches + 1, "
			     "records = records + ?5, last_batch_seq = ?6, last_batch_hash = ?7 "
			     "WHERE host_id = ?1 AND stream = ?2",
	[ST_BATCH_INSERT] = "INSERT INTO batches (hash, host_id, key_id, boot_id, batch_seq, first_seq, last_seq, "
			    "nrecords, compression, body_len, raw_len, wire_len, created_ns, mono_to_real_ns, "
			    "prev_hash, chain, received_ns, stream) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
			    "ON CONFLICT (hash) DO NOTHING RETURNING batch_id",
	[ST_BATCH_COUNTS] = "UPDATE batches SET records_new = ?2, records_duplicate = ?3, records_conflicting = ?4, "
			    "records_unknown = ?5, records_undecodable = ?6, bad_run_reports = ?7, gaps = ?8, "
			    "bad_live_records = ?9 WHERE batch_id = ?1",
	/*
	 * A new record (bulk: store_frame() decided it is new), and the rows only a new record makes: samples,
	 * files, agent counters, losses, heartbeats (stmt_bulk[]).
	 */
	/* The crcs of the seqs the stream holds in a range (known_seqs(); its row is locked: no one adds any). */
	[ST_RECORD_SEQS] = "SELECT seq, crc FROM records WHERE host_id = ?1 AND stream = ?2 AND seq BETWEEN ?3 AND ?4",
	[ST_GAP] = "INSERT INTO gaps (host_id, stream, from_seq, to_seq, found_ns, batch_hash) VALUES (?,?,?,?,?,?) "
		   "ON CONFLICT (host_id, stream, from_seq) DO NOTHING",
	[ST_GAP_FILL] = "UPDATE gaps SET filled = filled + 1 WHERE host_id = ?1 AND stream = ?2 AND from_seq <= ?3 "
			"AND to_seq >= ?3",
	/* A death by signal is "killed" unless the OOM killer did it (then the OOM record said so); exit_signal(). */
	[ST_EXIT_SIGNAL] = "INSERT INTO signals (host_id, boot_id, seq, source, kind, pid, start_ns, ts_ns, detail, "
			   "stream) SELECT ?1, ?2, ?3, 'record', ?4, ?5, ?6, ?7, ?8, ?9 WHERE NOT EXISTS (SELECT 1 FROM processes "
			   "WHERE host_id = ?1 AND boot_id = ?2 AND tgid = ?5 AND start_ns = ?6 AND oom_killed = 1)",
	/* The OOM record names a pid only: the newest process of that pid started before the kill. */
	[ST_OOM_MARK] = "UPDATE processes SET oom_killed = 1 WHERE host_id = ?1 AND boot_id = ?2 AND tgid = ?3 AND "
			"start_ns = (SELECT max(start_ns) FROM processes WHERE host_id = ?1 AND boot_id = ?2 AND "
			"tgid = ?3 AND start_ns <= ?4)",
	[ST_OOM_SIGNAL] = "INSERT INTO signals (host_id, boot_id, seq, source, kind, pid, start_ns, ts_ns, detail, "
			  "stream) VALUES (?1, ?2, ?3, 'record', 'oom_kill', ?4, (SELECT start_ns FROM processes "
			  "WHERE host_id = ?1 AND boot_id = ?2 AND tgid = ?4 AND start_ns <= ?5 "
			  "ORDER BY start_ns DESC LIMIT 1), ?5, ?6, ?7)",
	[ST_KEY_GET] = "SELECT public_key, host_id, source FROM keys WHERE key_id = ?1",
	[ST_KEY_ROTATION] = "INSERT INTO keys (key_id, public_key, host_id, source, announced_by, batch_hash, "
			    "enrolled_ns) VALUES (?, ?, ?, 'rotation', ?, ?, ?)",
	[ST_KEY_FILE] = "INSERT INTO keys (key_id, public_key, host_id, source, enrolled_ns) "
			"VALUES (?, ?, ?, 'file', ?) ON CONFLICT (key_id) DO NOTHING",
	[ST_RUN_FIND] = "SELECT run_id, " RUN_HAS_REPORT " FROM runs WHERE host_id = ?1 AND run_key = ?2",
	/* The same for up to RUNS_KNOWN_ASK keys at once (NULL for the slots left over: they match nothing). */
	[ST_RUN_FIND_MANY] = "SELECT run_key, run_id, " RUN_HAS_REPORT " FROM runs WHERE host_id = ?1 AND run_key IN ("
			     "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
			     "?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)",
	[ST_RUN_CLEAR_STEPS] = "DELETE FROM steps WHERE run_id = ?1",
	[ST_RUN_CLEAR_PROCS] = "DELETE FROM run_processes WHERE run_id = ?1",
	[ST_RUN_CLEAR_SIGNALS] = "DELETE FROM signals WHERE run_id = ?1 AND source IN ('live', 'run_report')",
	/*
	 * A report's process that the lake knows from its kernel records: same host, the report's boot, pid,
	 * and start within 1 ms (the report and the batches turn the kernel's monotonic start into real time
	 * with offsets read at other moments: they agree to microseconds unless the clock was stepped).
	 */
	[ST_REPORT_ATTRIB] = "UPDATE processes SET run_id = ?1, step = ?2, tool = ?3 WHERE host_id = ?4 AND "
			     "boot_id = ?5 AND tgid = ?6 AND start_real_ns BETWEEN ?7 AND ?8",
	/* A host heartbeat (TL_HOST; derive_host()). */
	/* Whether a live signal is one the run has (a restarted processor may repeat what it sent after its
	 * checkpoint: once per run, kind, process). */
	[ST_LIVE_SIGNAL_SEEN] = "SELECT 1 FROM signals WHERE run_id = ?1 AND source = 'live' AND kind = ?2 AND "
				"pid IS NOT DISTINCT FROM ?3 AND start_ns IS NOT DISTINCT FROM ?4",
	[ST_LIVE_COUNTS] = "UPDATE runs SET steps = (SELECT count(*) FROM steps WHERE run_id = ?1), "
			   "signals = (SELECT count(*) FROM signals WHERE run_id = ?1) WHERE run_id = ?1",
	/* A host cannot still run what it ran in an earlier boot (docs/live.md, "lost"). Steps first. */
	[ST_LOST_STEPS] = "UPDATE steps SET state = 'lost' WHERE state = 'running' AND run_id IN (SELECT run_id "
			  "FROM runs WHERE host_id = ?1 AND state = 'running' AND boot_id <> ?2)",
	[ST_LOST_RUNS] = "UPDATE runs SET state = 'lost' WHERE host_id = ?1 AND state = 'running' AND boot_id <> ?2",
	/* Cluster jobs joined to the run that submitted them (lake/join.h, join_jobs()). */
	[ST_JOIN_JOB] = "SELECT slurm_submit_dir, slurm_submit_host, slurm_job_name, start_ns FROM runs WHERE run_id = ?1 "
			"AND joined_run_id IS NULL AND slurm_submit_dir IS NOT NULL AND start_ns IS NOT NULL",
	/* The sbatches of a traced run in the job's directory, newest first, that started before the job (give or
	 * take JOIN_SKEW_NS) in a run that had not ended then (a head waits for its jobs). */
	[ST_JOIN_CANDIDATES] = "SELECT p.run_id, p.step, p.start_real_ns, p.argv, h.host_name FROM processes p "
			       "JOIN runs h ON h.run_id = p.run_id WHERE p.comm = 'sbatch' AND p.cwd = ?1 AND "
			       "p.run_id <> ?2 AND p.start_real_ns <= ?3 AND (h.end_ns IS NULL OR h.end_ns >= ?4) "
			       "ORDER BY p.start_real_ns DESC LIMIT ?5",
	[ST_JOIN_SET] = "UPDATE runs SET joined_run_id = ?2, joined_step_id = ?3, submitted_ns = ?4 WHERE run_id = ?1 "
			"AND joined_run_id IS NULL",
	[ST_JOIN_SBATCH_CWD] = "SELECT cwd FROM processes WHERE host_id = ?1 AND boot_id = ?2 AND tgid = ?3 AND "
			       "start_ns = ?4 AND comm = 'sbatch' AND cwd IS NOT NULL",
	[ST_JOIN_WAITING] = "SELECT run_id FROM runs WHERE slurm_submit_dir = ?1 AND joined_run_id IS NULL AND "
			    "slurm_submit_dir IS NOT NULL",
	/* ---- reading: read.c's row functions read these columns in this order ---- */
	/* One row per path, its opens' modes merged, in order of first access. */
	[ST_PROC_FILES_LIST] = "SELECT path, CASE WHEN max(CASE WHEN mode IN ('r', 'rw') THEN 1 ELSE 0 END) = 1 AND "
			       "max(CASE WHEN mode IN ('w', 'rw') THEN 1 ELSE 0 END) = 1 THEN 'rw' "
			       "WHEN max(CASE WHEN mode IN ('w', 'rw') THEN 1 ELSE 0 END) = 1 THEN 'w' ELSE 'r' END "
			       "FROM files INDEXED BY files_process "
			       "WHERE host_id = ?1 AND boot_id = ?2 AND tgid = ?3 AND start_ns = ?4 "
			       "GROUP BY path ORDER BY min(seq)",
	[ST_RUN_SIGNALS_LIST] = "SELECT kind, source, pid, start_ns, step, tool, detail FROM signals WHERE run_id = ?1 "
				"OR run_id IN (SELECT j.run_id FROM runs j WHERE j.joined_run_id = ?1) "
				"ORDER BY signal_id",
	/* The report as sent (its record's payload) and the run's state: read.c sets the state on it. */
	[ST_RUN_REPORT_JSON] = "SELECT r.payload, runs.state FROM runs JOIN records r ON r.host_id = runs.host_id AND "
			       "r.stream = runs.stream AND r.seq = runs.seq AND r.type = " TL_RUN_REPORT_SQL " "
			       "WHERE runs.run_id = ?1",
};


/* An upsert of an array's elements: its statements of 1, 2, 4, ... 2^LAKE_ROWS_LOG_MAX rows (id + k: 2^k). */
#define ROWS_OF_UPSERT(id, u)                                                                            \
	[id] = &u, [id##_2] = &u, [id##_4] = &u, [id##_8] = &u, [id##_16] = &u, [id##_32] = &u
#define ROWS_LOG(id) [id##_2] = 1, [id##_4] = 2, [id##_8] = 3, [id##_16] = 4, [id##_32] = 5
#define ROWS_QUEUED(id) [id] = true, [id##_2] = true, [id##_4] = true, [id##_8] = true, [id##_16] = true, [id##_32] = true

/*
 * The statements of the rows keyed by a record's (host_id, stream, seq) and written only for a new record:
 * bulk statements (sql.h), sent with COPY on PostgreSQL at bulk_flush(). No statement of the batch reads
 * their tables but ST_RUN_FIND (a run's report record, RUN_HAS_REPORT: run_find() sends them first).
 */
static const bool stmt_bulk[ST_COUNT] = {
	[ST_RECORD] = true, [ST_SAMPLE] = true, [ST_FILE] = true, [ST_COUNTERS] = true, [ST_LOSS] = true,
	[ST_HEARTBEAT] = true,
};

/*
 * The batch's statements whose rows and changes store.c never reads: queued statements (sql.h), sent
 * without waiting on PostgreSQL (pipeline mode); the next statement that waits for its own outcome reads
 * theirs. Not ST_STEPS (its changes count the steps stored), nor those run outside a batch (ST_KEY_FILE).
 */
static const bool stmt_queued[ST_COUNT] = {
	[ST_BEGIN] = true, [ST_HOST_ENSURE] = true, [ST_HOST_UPDATE] = true, [ST_STREAM_UPDATE] = true,
	[ST_BATCH_COUNTS] = true, [ST_GAP] = true, [ST_GAP_FILL] = true, [ST_EXEC] = true, [ST_FORK] = true,
	[ST_EXIT] = true, [ST_EXIT_SIGNAL] = true, [ST_OOM_MARK] = true, [ST_OOM_SIGNAL] = true,
	[ST_CGROUP] = true, [ST_KEY_ROTATION] = true, [ST_RUN_MERGE] = true, [ST_RUN_CLEAR_STEPS] = true,
	[ST_RUN_CLEAR_PROCS] = true, [ST_RUN_CLEAR_SIGNALS] = true, ROWS_QUEUED(ST_RUN_PROCS),
	[ST_REPORT_SIGNAL] = true, [ST_LIVE_SIGNAL] = true, [ST_REPORT_ATTRIB] = true, [ST_LIVE_UPDATE] = true,
	ROWS_QUEUED(ST_LIVE_STEP),
	ROWS_QUEUED(ST_LIVE_ATTRIB), ROWS_QUEUED(ST_TOOLS), [ST_LIVE_COUNTS] = true, [ST_LOST_STEPS] = true,
	[ST_LOST_RUNS] = true,
};

/*
 * The statements that store a row a record fills, made from the table's columns (lake_row_sql): stmt_sql[]
 * has no text for them.
 */
static const char *const stmt_row_table[ST_COUNT] = {
	[ST_RECORD] = "records", [ST_SAMPLE] = "samples", [ST_FILE] = "files", [ST_COUNTERS] = "agent_counters",
	[ST_LOSS] = "losses", [ST_HEARTBEAT] = "heartbeats",
};

/* The upserts made from lake/schema.c's maps of a record's fields to columns (lake_upsert_sql). */
static const struct lake_upsert *const stmt_upsert[ST_COUNT] = {
	[ST_EXEC] = &lake_exec_upsert, [ST_FORK] = &lake_fork_upsert, [ST_EXIT] = &lake_exit_upsert,
	[ST_CGROUP] = &lake_cgroup_upsert, [ST_LIVE_INSERT] = &lake_live_run_insert,
	[ST_LIVE_UPDATE] = &lake_live_run_update, ROWS_OF_UPSERT(ST_LIVE_STEP, lake_live_step_upsert),
	ROWS_OF_UPSERT(ST_LIVE_ATTRIB, lake_live_attrib_upsert),
	ROWS_OF_UPSERT(ST_TOOLS, lake_tools_upsert), [ST_RUN] = &lake_report_run_insert,
	[ST_RUN_MERGE] = &lake_report_run_update, ROWS_OF_UPSERT(ST_STEPS, lake_report_step_insert),
	ROWS_OF_UPSERT(ST_RUN_PROCS, lake_report_proc_insert), [ST_REPORT_SIGNAL] = &lake_report_signal_insert,
	[ST_LIVE_SIGNAL] = &lake_live_signal_insert,
};
/* How many rows an upsert's statement writes, as log2 (stmt_upsert[]: 0, one row, unless said here). */
static const uint8_t stmt_rows_log[ST_COUNT] = {
	ROWS_LOG(ST_LIVE_STEP), ROWS_LOG(ST_LIVE_ATTRIB), ROWS_LOG(ST_TOOLS), ROWS_LOG(ST_STEPS), ROWS_LOG(ST_RUN_PROCS),
};
_Static_assert(ST_LIVE_STEP_32 == ST_LIVE_STEP + LAKE_ROWS_LOG_MAX && ST_LIVE_ATTRIB_32 == ST_LIVE_ATTRIB + 5 &&
		       ST_TOOLS_32 == ST_TOOLS + 5 && ST_STEPS_32 == ST_STEPS + 5 && ST_RUN_PROCS_32 == ST_RUN_PROCS + 5,
	       "ST_LIVE_STEP_* ...: a statement per 2^k rows, k to LAKE_ROWS_LOG_MAX");

/* stmt_row_table's tables, looked up once (store_row runs for every record). */
static const struct lake_table *row_tables[ST_COUNT];
static pthread_once_t row_tables_once = PTHREAD_ONCE_INIT;

static void row_tables_find(void)
{
	for (int i = 0; i < ST_COUNT; i++)
		row_tables[i] = stmt_row_table[i] ? lake_table(stmt_row_table[i]) : NULL;
}

static const struct lake_table *row_table(enum stmt_id id)
{
	pthread_once(&row_tables_once, row_tables_find);
	return row_tables[id];
}

/* The reads made from lake/schema.c's maps of a table's columns to a C struct (lake_select_sql): the map, and
 * what follows the SELECT's FROM. */
static const struct {
	const struct lake_select *sel;
	const char *tail;
} stmt_select[ST_COUNT] = {
	/* a cluster job joined to another run is listed as that run's steps, not as a run */
	[ST_RUNS_LIST] = { &lake_run_select, " WHERE joined_run_id IS NULL ORDER BY start_ns IS NULL, start_ns, run_id" },
	[ST_RUN_BY_ID] = { &lake_run_select, " WHERE run_id = ?1" },
	[ST_RUN_BY_KEY] = { &lake_run_select, " WHERE run_key = ?1 ORDER BY run_id" },
	[ST_RUN_BY_NAME] = { &lake_run_select, " WHERE pipeline_run_id = ?1 ORDER BY run_id" },
	/* Its steps and its joined jobs' (in place of the step whose sbatch submitted each: docs/live.md) */
	[ST_RUN_STEPS_LIST] = { &lake_step_select, " WHERE (run_id = ?1 AND NOT EXISTS (SELECT 1 FROM runs j WHERE "
						   "j.joined_run_id = ?1 AND j.joined_step_id = steps.step_id)) OR run_id IN "
						   "(SELECT j.run_id FROM runs j WHERE j.joined_run_id = ?1) ORDER BY "
						   "coalesce(CASE WHEN run_id = ?1 THEN idx ELSE (SELECT h.idx FROM steps h "
						   "JOIN runs j ON j.joined_step_id = h.step_id WHERE j.run_id = steps.run_id "
						   "AND h.run_id = ?1) END, 9223372036854775807), run_id, idx" },
	[ST_RUN_PROCS_LIST] = { &lake_process_select,
				" LEFT JOIN cgroups c2 ON c2.host_id = p.host_id AND c2.boot_id = p.boot_id AND c2.v1 = 0 "
				"AND c2.cgroup_id = p.cgroup_id LEFT JOIN cgroups c1 ON c1.host_id = p.host_id AND "
				"c1.boot_id = p.boot_id AND c1.v1 = 1 AND c1.cgroup_id = p.cgroup_v1_id "
				"WHERE p.run_id = ?1 OR p.run_id IN (SELECT j.run_id FROM runs j WHERE j.joined_run_id = ?1) "
				"ORDER BY p.start_ns, p.tgid, p.host_id" },
};
static char *select_text[ST_COUNT]; /* malloc'd once; NULL where none could be made */
static pthread_once_t select_text_once = PTHREAD_ONCE_INIT;

static void select_text_build(void)
{
	for (int i = 0; i < ST_COUNT; i++) {
		struct obuf o;

		if (!stmt_select[i].sel)
			continue;
		obuf_init_mem(&o, 1u << 16);
		lake_select_sql(stmt_select[i].sel, stmt_select[i].tail, &o);
		obuf_putc(&o, 0);
		if (!o.err)
			select_text[i] = strdup(o.buf);
		obuf_free(&o);
	}
}

static const char *statement_text(enum stmt_id id)
{
	if (stmt_select[id].sel) {
		pthread_once(&select_text_once, select_text_build);
		return select_text[id];
	}
	return stmt_row_table[id] ? lake_row_sql(row_table(id))
	       : stmt_upsert[id]  ? lake_upsert_rows_sql(stmt_upsert[id], 1u << stmt_rows_log[id])
				  : stmt_sql[id];
}

const char *lake_read_text(const struct lake_read *r, const struct sql *db)
{
	return r->pg && sql_is_pg(db) ? r->pg : r->sql;
}

const char *lake_stmt_sql(enum stmt_id id)
{
	return (unsigned)id < ST_COUNT ? statement_text(id) : NULL;
}

/* One batch being stored. */
struct batch_ctx {
	struct store *s;
	const struct batch_header *hdr;
	struct store_result *res;
	char host[HEX_HOST], boot[HEX_HOST], key[HEX_KEY], hash[HEX_HASH];
	int64_t batch_id;
	int64_t stream;       /* the batch's stream (the lake's integers are signed) */
	uint64_t max_seq;     /* highest seq of this stream in the lake */
	uint64_t received_ns;
	uint64_t seq;         /* the record being stored */
	const char *note;     /* why nothing was derived from it (NULL: derived) */
	bool report_unsent;   /* a run report's record row is in a bulk buffer (PostgreSQL: not in the lake yet) */
};

const char *store_strerror(int err)
{
	switch (err) {
	case STORE_OK: return "ok";
	case STORE_E_OPEN: return "cannot open the lake";
	case STORE_E_SCHEMA: return "not a lake of this version";
	case STORE_E_SQL: return "database error";
	case STORE_E_BUSY: return "database busy";
	case STORE_E_NOMEM: return "out of memory";
	case STORE_E_NOT_FOUND: return "not found";
	case STORE_E_READONLY: return "lake opened read-only";
	default: return "unknown store error";
	}
}

const char *store_last_error(const struct store *s)
{
	return s->errmsg;
}

/* Map SQLite's result to ours, keeping its message. */
int lake_sql_fail(struct store *s, int rc)
{
	snprintf(s->errmsg, sizeof(s->errmsg), "%s", sql_errmsg(s->db));
	switch (rc) {
	case SQL_E_BUSY: return STORE_E_BUSY;
	case SQL_E_NOMEM: return STORE_E_NOMEM;
	case SQL_E_READONLY: return STORE_E_READONLY;
	default: return STORE_E_SQL;
	}
}

static struct sql_stmt *stmt(struct store *s, enum stmt_id id)
{
	const char *text;

	if (s->st[id])
		return s->st[id];
	text = statement_text(id);
	if (!text) {
		snprintf(s->errmsg, sizeof(s->errmsg), "statement %d: its text could not be made (lake_row_sql)",
			 (int)id);
		return NULL;
	}
	if ((stmt_bulk[id]     ? sql_prepare_bulk(s->db, text, &s->st[id])
	     : stmt_queued[id] ? sql_prepare_queued(s->db, text, &s->st[id])
			       : sql_prepare(s->db, text, true, &s->st[id])) != SQL_OK) {
		snprintf(s->errmsg, sizeof(s->errmsg), "preparing statement %d: %s", (int)id, sql_errmsg(s->db));
		s->st[id] = NULL;
	}
	return s->st[id];
}

/* ---- binding: parameters in order, the first failure kept --------------- */


/* The texts b_text() made UTF-8 for the previous statement: its run is over. */
static void fixed_free(struct store *s)
{
	for (size_t i = 0; i < s->nfixed; i++)
		free(s->fixed[i]);
	s->nfixed = 0;
}

struct bind lake_bind_start(struct store *s, enum stmt_id id)
{
	struct bind b = { .s = s, .st = stmt(s, id) };

	fixed_free(s);
	b.rc = b.st ? SQL_OK : SQL_E;
	return b;
}

void lake_b_i64(struct bind *b, int64_t v)
{
	if (b->rc == SQL_OK)
		b->rc = sql_bind_i64(b->st, ++b->n, v);
}

/* Counters are unsigned 64-bit; SQLite keeps signed: values above 2^63 read back negative (never in practice). */
static void b_u64(struct bind *b, uint64_t v)
{
	lake_b_i64(b, (int64_t)v);
}

static void b_null(struct bind *b)
{
	if (b->rc == SQL_OK)
		b->rc = sql_bind_null(b->st, ++b->n);
}

/* Whether t is UTF-8 without a NUL. */
static bool utf8_clean(const char *t, size_t len)
{
	const unsigned char *p = (const unsigned char *)t;

	for (size_t off = 0, k; off < len; off += k) {
		k = p[off] && p[off] < 0x80 ? 1 : p[off] ? json_utf8_len(p + off, len - off) : 0;
		if (!k)
			return false;
	}
	return true;
}

/*
 * t made UTF-8: each byte that does not start or continue a well-formed sequence, and each NUL, becomes
 * U+FFFD (as the JSON the lake writes shows them). Kept until the next statement's binding; NULL: no memory.
 */
static const char *utf8_fixed(struct store *s, const char *t, size_t len, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)t;
	char *out, **list;
	size_t n = 0;

	if (s->nfixed == s->capfixed) {
		size_t cap = s->capfixed ? 2 * s->capfixed : 8;

		list = realloc(s->fixed, cap * sizeof(*list));
		if (!list)
			return NULL;
		s->fixed = list;
		s->capfixed = cap;
	}
	out = malloc(3 * len + 1);
	if (!out)
		return NULL;
	for (size_t off = 0, k; off < len; off += k) {
		k = p[off] && p[off] < 0x80 ? 1 : p[off] ? json_utf8_len(p + off, len - off) : 0;
		if (k) {
			memcpy(out + n, p + off, k);
			n += k;
		} else {
			memcpy(out + n, "\xef\xbf\xbd", 3);
			n += 3;
			k = 1;
		}
	}
	out[n] = 0;
	s->fixed[s->nfixed++] = out;
	*out_len = n;
	return out;
}

/*
 * Text that outlives the statement's step (not copied: sql.h). NULL binds NULL. The lake's text columns
 * hold UTF-8 (PostgreSQL's can hold nothing else): a host's bytes that are not (a path, a comm) are bound
 * made so (utf8_fixed()); the record keeps them as they were (records.payload).
 */
static void b_text(struct bind *b, const char *t, size_t len)
{
	if (!t) {
		b_null(b);
		return;
	}
	if (b->rc == SQL_OK && !utf8_clean(t, len)) {
		t = utf8_fixed(b->s, t, len, &len);
		if (!t)
			b->rc = SQL_E_NOMEM;
	}
	if (b->rc == SQL_OK)
		b->rc = sql_bind_text(b->st, ++b->n, t, len);
}

void lake_b_str(struct bind *b, const char *t)
{
	b_text(b, t, t ? strlen(t) : 0);
}

static void b_blob(struct bind *b, const void *p, size_t len)
{
	if (b->rc == SQL_OK)
		b->rc = sql_bind_blob(b->st, ++b->n, p, len);
}

int lake_bind_check(struct bind *b)
{
	if (b->rc != SQL_OK) {
		if (b->st)
			sql_reset(b->st);
		return b->st ? lake_sql_fail(b->s, b->rc) : STORE_E_SQL;
	}
	if (b->n != sql_param_count(b->st)) {
		snprintf(b->s->errmsg, sizeof(b->s->errmsg), "bound %d of %d parameters: %.80s", b->n,
			 sql_param_count(b->st), sql_text(b->st));
		sql_reset(b->st);
		return STORE_E_SQL;
	}
	return STORE_OK;
}

/* Run a statement that returns no rows (or whose rows do not matter). */
static int exec_bound(struct bind *b)
{
	int rc = lake_bind_check(b);

	if (rc)
		return rc;
	while ((rc = sql_step(b->st)) == SQL_ROW)
		;
	sql_reset(b->st);
	return rc == SQL_DONE ? STORE_OK : lake_sql_fail(b->s, rc);
}

/* Run a statement for its first row's first column as an integer: STORE_OK, STORE_E_NOT_FOUND or an error. */
static int query_i64(struct bind *b, int64_t *out)
{
	int rc = lake_bind_check(b);

	if (rc)
		return rc;
	rc = sql_step(b->st);
	if (rc == SQL_ROW)
		*out = sql_col_i64(b->st, 0);
	sql_reset(b->st);
	if (rc == SQL_ROW)
		return STORE_OK;
	return rc == SQL_DONE ? STORE_E_NOT_FOUND : lake_sql_fail(b->s, rc);
}

static int exec_simple(struct store *s, enum stmt_id id)
{
	struct bind b = lake_bind_start(s, id);

	return exec_bound(&b);
}

/* ---- opening ------------------------------------------------------------ */

static int open_fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int open_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * Bring the lake from version `from` (0: an empty database) to this one, in one transaction: all or nothing.
 * PostgreSQL's is open already (open_pg_schema()).
 */
static int apply_schema(struct store *s, int64_t from)
{
	bool pg = sql_is_pg(s->db);
	struct obuf sql;
	int rc;

	obuf_init_mem(&sql, 1u << 20);
	rc = (pg ? lake_schema_pg((int)from, LAKE_SCHEMA_VERSION, &sql) :
		   lake_schema_sqlite((int)from, LAKE_SCHEMA_VERSION, &sql)) ? SQL_E : SQL_OK;
	obuf_putc(&sql, '\0');
	if (rc == SQL_OK && (sql.err || !sql.buf))
		rc = SQL_E_NOMEM;
	if (rc != SQL_OK) {
		obuf_free(&sql);
		if (rc == SQL_E)
			snprintf(s->errmsg, sizeof(s->errmsg), "no upgrade from version %lld on this engine", (long long)from);
		return rc;
	}
	if (!pg)
		rc = sql_exec(s->db, "BEGIN IMMEDIATE");
	if (rc == SQL_OK)
		rc = sql_exec(s->db, sql.buf);
	if (rc == SQL_OK && !pg)
		rc = sql_exec(s->db, "COMMIT");
	if (rc != SQL_OK)
		snprintf(s->errmsg, sizeof(s->errmsg), "%s", sql_errmsg(s->db));
	obuf_free(&sql);
	return rc;
}

static int create_schema(struct store *s, const char *path, char *err, size_t errlen)
{
	int rc = apply_schema(s, 0);

	if (rc == SQL_OK)
		return STORE_OK;
	open_fail(err, errlen, 0, "%s: cannot create the lake's tables: %s", path, s->errmsg);
	if (!sql_is_pg(s->db)) /* PostgreSQL's transaction is open_pg_schema()'s */
		sql_exec(s->db, "ROLLBACK");
	return rc == SQL_E_BUSY ? STORE_E_BUSY : rc == SQL_E_READONLY ? STORE_E_READONLY : STORE_E_SCHEMA;
}

/* The first column of a query without parameters as an integer, or INT64_MIN when it failed. */
static int64_t query_simple(struct store *s, const char *text, int64_t none)
{
	struct sql_stmt *st = NULL;
	int64_t v = none;
	int rc = sql_prepare(s->db, text, false, &st);

	if (rc == SQL_OK) {
		rc = sql_step(st);
		if (rc == SQL_ROW)
			v = sql_col_i64(st, 0);
		else if (rc != SQL_DONE)
			v = INT64_MIN;
	} else {
		v = INT64_MIN;
	}
	if (v == INT64_MIN)
		lake_sql_fail(s, rc);
	sql_finalize(st);
	return v;
}

/* -1: no schema_version table (a new database); else the version, or a store_err below -1. */
static int64_t schema_version(struct store *s)
{
	int64_t v;

	if (sql_is_pg(s->db)) {
		v = query_simple(s, "SELECT CASE WHEN to_regclass('schema_version') IS NULL THEN -1 ELSE 0 END", -1);
		if (v < 0)
			return v == -1 ? -1 : -2;
	} else {
		struct sql_stmt *st = NULL;
		int rc = sql_prepare(s->db, "SELECT 1 FROM schema_version", false, &st);

		sql_finalize(st);
		/* "no such table" is a new database; anything else (not a database at all) is an error. */
		if (rc != SQL_OK && strstr(sql_errmsg(s->db), "no such table"))
			return -1;
	}
	v = query_simple(s, "SELECT version FROM schema_version", 0);
	return v == INT64_MIN ? -2 : v;
}

/*
 * An older lake gains each later version's tables, columns and indexes in turn (lake/schema.c), in one
 * transaction: all or nothing.
 */
static int migrate_schema(struct store *s, int64_t from, const char *path, char *err, size_t errlen)
{
	if (apply_schema(s, from) == SQL_OK)
		return STORE_OK;
	open_fail(err, errlen, STORE_E_SCHEMA, "%s: cannot upgrade the lake from schema version %lld: %s", path,
		  (long long)from, s->errmsg);
	if (!sql_is_pg(s->db))
		sql_exec(s->db, "ROLLBACK");
	return STORE_E_SCHEMA;
}

/* An empty database gets the schema; an older lake is upgraded; otherwise a lake must be of our version. */
static int check_schema(struct store *s, const char *path, char *err, size_t errlen)
{
	int64_t v = schema_version(s);
	bool pg = sql_is_pg(s->db);

	if (v == -2)
		return open_fail(err, errlen, STORE_E_SCHEMA, "%s: %s (%s)", path,
				 pg ? "cannot read the lake's schema version" : "not an SQLite database or unreadable",
				 s->errmsg);
	if (v == -1 && s->read_only)
		return open_fail(err, errlen, STORE_E_SCHEMA, "%s: not a tracer lake (no schema_version table); "
				 "give the --db %s tracer-ingest writes", path, pg ? "database" : "file");
	if (v == -1)
		return create_schema(s, path, err, errlen);
	if (v >= 1 && v < STORE_SCHEMA_VERSION && !s->read_only)
		return migrate_schema(s, v, path, err, errlen);
	if (v >= 1 && v < STORE_SCHEMA_VERSION)
		return open_fail(err, errlen, STORE_E_SCHEMA, "%s: lake schema version %lld: start tracer-ingest "
				 "on it once to upgrade it to version %d", path, (long long)v, STORE_SCHEMA_VERSION);
	if (v != STORE_SCHEMA_VERSION)
		return open_fail(err, errlen, STORE_E_SCHEMA, "%s: lake schema version %lld, this build knows %d: "
				 "use a tracer of the same version", path, (long long)v, STORE_SCHEMA_VERSION);
	return STORE_OK;
}

/*
 * PostgreSQL: several ingests may start on one new database at once. The
 * first creates or upgrades the schema under a transaction-scoped
 * advisory lock; the others wait for it, then find it done.
 */
static int open_pg_schema(struct store *s, const char *path, char *err, size_t errlen)
{
	int rc;

	if (s->read_only)
		return check_schema(s, path, err, errlen);
	rc = sql_exec(s->db, "BEGIN; SELECT pg_advisory_xact_lock(" STORE_PG_SCHEMA_LOCK ")");
	if (rc != SQL_OK)
		return open_fail(err, errlen, lake_sql_fail(s, rc), "%s: cannot lock the schema: %s", path,
				 s->errmsg);
	rc = check_schema(s, path, err, errlen);
	if (!rc) {
		int c = sql_exec(s->db, "COMMIT");

		if (c != SQL_OK)
			rc = open_fail(err, errlen, lake_sql_fail(s, c), "%s: cannot create the lake's tables: %s",
				       path, s->errmsg);
	}
	if (rc)
		sql_exec(s->db, "ROLLBACK");
	return rc;
}

/*
 * WAL: readers (tracer report, a sqlite3 shell) never block the ingest.
 * synchronous=FULL: a batch the ingest acknowledged is on disk before the
 * reply goes out, because the processor deletes its spool on that reply.
 * temp_store=MEMORY: statement journals and sorts never become temporary
 * files, which the ingest's sandbox could not create (docs/lake.md); a
 * read-only connection sets that alone: tracer-web's seccomp filter kills
 * it on an openat() that creates a file, which a large sort (the analysis'
 * reads, /metrics' grouping of every step) would otherwise make.
 * (PostgreSQL: its server's settings; sql_open_pg() sets the session's.)
 */
static int configure(struct store *s, const char *path, char *err, size_t errlen)
{
	static const char pragmas[] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF; "
				      "PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=16384; "
				      "PRAGMA temp_store=MEMORY;";
	int rc;

	if (sql_is_pg(s->db))
		return STORE_OK;
	rc = sql_exec(s->db, s->read_only ? "PRAGMA temp_store=MEMORY;" : pragmas);
	if (rc != SQL_OK)
		return open_fail(err, errlen, lake_sql_fail(s, rc), "%s: cannot set up the database: %s", path,
				 sql_errmsg(s->db));
	return STORE_OK;
}

static int alloc_buffers(struct store *s)
{
	s->dec = malloc(sizeof(*s->dec));
	if (!s->dec)
		return STORE_E_NOMEM;
	obuf_init_mem(&s->argv_json, STORE_ARGV_JSON_MAX);
	obuf_init_mem(&s->env_json, STORE_ARGV_JSON_MAX);
	obuf_init_mem(&s->drops_json, STORE_ARGV_JSON_MAX);
	return STORE_OK;
}

int store_remote(const struct store *s, int *family, uint16_t *port)
{
	*family = 0;
	*port = 0;
	return sql_is_pg(s->db) ? sql_pg_peer(s->db, family, port) : 0;
}

bool store_is_uri(const char *path)
{
	return sql_is_pg_uri(path);
}

/* Replace the n bytes at p (inside buf, of size cap) by "***". */
static void star(char *buf, size_t cap, char *p, size_t n)
{
	size_t tail = strlen(p + n);

	if ((size_t)(p - buf) + 3 + tail < cap) {
		memmove(p + 3, p + n, tail + 1);
		memcpy(p, "***", 3);
	}
}

/* A PostgreSQL URI as messages show it: its password (user:PASSWORD@host, password=) starred. */
void store_display_name(const char *where, char *out, size_t n)
{
	char *auth, *at, *colon, *pw;

	snprintf(out, n, "%s", where);
	if (!sql_is_pg_uri(out))
		return;
	auth = strstr(out, "://") + 3;
	at = strchr(auth, '@');
	if (at && at < auth + strcspn(auth, "/?")) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		if (colon && at > colon + 1)
			star(out, n, colon + 1, (size_t)(at - colon - 1));
	}
	pw = strstr(out, "password=");
	if (pw)
		star(out, n, pw + 9, strcspn(pw + 9, "&"));
}

static int open_db(struct store *s, const char *path, const char *name, bool read_only, char *err, size_t errlen)
{
	char why[256];
	int rc;

	if (sql_is_pg_uri(path)) {
		rc = sql_open_pg(&s->db, path, read_only, STORE_BUSY_TIMEOUT_MS, why, sizeof(why));
		if (rc != SQL_OK)
			return open_fail(err, errlen, STORE_E_OPEN, "%s: cannot connect: %s (check the URI's host, "
					 "port, database name, user and password, and that the server runs)", name, why);
		return STORE_OK;
	}
	if (read_only && access(path, F_OK) < 0)
		return open_fail(err, errlen, STORE_E_OPEN, "%s: %s (give the --db file tracer-ingest writes)", path,
				 strerror(errno));
	rc = sql_open_sqlite(&s->db, path, read_only, STORE_BUSY_TIMEOUT_MS, why, sizeof(why));
	if (rc != SQL_OK)
		return open_fail(err, errlen, STORE_E_OPEN, "%s: cannot open: %s (%s)", path, why,
				 read_only ? "is it the --db file tracer-ingest writes?" :
					     "check that its directory exists and is writable");
	return STORE_OK;
}

int store_open(struct store **out, const char *path, bool read_only, char *err, size_t errlen)
{
	struct store *s = calloc(1, sizeof(*s));
	char name[512];
	int rc;

	store_display_name(path, name, sizeof(name));
	if (!s || alloc_buffers(s)) {
		store_close(s);
		return open_fail(err, errlen, STORE_E_NOMEM, "%s: out of memory", name);
	}
	s->read_only = read_only;
	s->retained_day = INT64_MIN;
	rc = open_db(s, path, name, read_only, err, errlen);
	if (!rc)
		rc = configure(s, name, err, errlen);
	if (!rc)
		rc = sql_is_pg(s->db) ? open_pg_schema(s, name, err, errlen) : check_schema(s, name, err, errlen);
	if (rc) {
		store_close(s);
		return rc;
	}
	*out = s;
	return STORE_OK;
}

static void join_reset(struct store *s);

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sql_finalize(s->st[i]);
	sql_close(s->db);
	obuf_free(&s->argv_json);
	obuf_free(&s->env_json);
	obuf_free(&s->drops_json);
	free(s->dec);
	free(s->jnodes);
	free(s->jarena);
	fixed_free(s);
	free(s->fixed);
	free(s->seqs);
	free(s->old_seqs);
	free(s->known);
	free(s->known_slot);
	join_reset(s);
	free(s->join_runs);
	free(s->join_procs);
	free(s->join_dirs);
	free(s);
}

/* ---- helpers ------------------------------------------------------------ */

static void hex(char *out, size_t outlen, const uint8_t *bin, size_t n)
{
	sodium_bin2hex(out, outlen, bin, n);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * The bulk statements' rows sent (PostgreSQL; SQLite ran them at once): before COMMIT, and before a
 * statement reads their tables.
 */
static int bulk_flush(struct batch_ctx *c)
{
	int rc = sql_bulk_flush(c->s->db);

	if (rc)
		return lake_sql_fail(c->s, rc);
	c->report_unsent = false;
	return STORE_OK;
}

/* Wrapping, not overflowing: the times come from the host, which may send anything. */
static int64_t to_real(const struct batch_ctx *c, uint64_t mono_ns)
{
	return (int64_t)(mono_ns + (uint64_t)c->hdr->mono_to_real_ns);
}

static void json_reset(struct obuf *o, struct json *j)
{
	o->len = 0;
	o->err = 0;
	json_init(j, o);
}

/* NUL-separated strings (the last one may lack its NUL) as a JSON array in o; NULL if it does not fit. */
static const char *strings_json(struct obuf *o, const char *area, size_t len)
{
	struct json j;
	size_t off = 0;

	json_reset(o, &j);
	json_array_begin(&j);
	while (off < len) {
		const char *nul = memchr(area + off, 0, len - off);
		size_t n = nul ? (size_t)(nul - (area + off)) : len - off;

		json_string_n(&j, area + off, n);
		off += n + 1;
	}
	json_array_end(&j);
	return o->err ? NULL : o->buf;
}

/* ---- derived rows, one function per record type ---------------------------- */

/*
 * The killed signal an exit status gives, if any. A record says how one
 * process ended, not whether that failed anything: a non-zero exit is a
 * failure only as the end of a step or of a run (docs/processor.md,
 * "Signals"), which raw records do not show - grep -q that found nothing
 * exits 1 - so none is raised here; the run report's own signals carry
 * those. SIGPIPE is the normal end of a writer whose reader went away.
 */
static int exit_signal(struct batch_ctx *c, const struct tr_exit *x)
{
	unsigned sig = decode_exit_signal(x->exit_code);
	char detail[80];
	struct bind b;

	if (!sig || sig == SIGPIPE)
		return STORE_OK;
	snprintf(detail, sizeof(detail), "{\"signal\":%u,\"core_dumped\":%s}", sig,
		 decode_exit_core(x->exit_code) ? "true" : "false");
	b = lake_bind_start(c->s, ST_EXIT_SIGNAL);
	lake_b_str(&b, c->host);
	lake_b_str(&b, c->boot);
	b_u64(&b, c->seq);
	lake_b_str(&b, "killed");
	b_u64(&b, x->tgid);
	b_u64(&b, x->start_ns);
	b_u64(&b, x->hdr.ts_ns);
	lake_b_str(&b, detail);
	lake_b_i64(&b, c->stream);
	return exec_bound(&b);
}

/* Time in direct reclaim: unknown (NULL) where the kernel could not measure it or the record predates it. */
static void bind_reclaim(struct bind *b, uint32_t flags, uint64_t reclaim_ns)
{
	if (flags & TR_EXIT_NO_RECLAIM)
		b_null(b);
	else
		b_u64(b, reclaim_ns);
}

static int derive_oom(struct batch_ctx *c, const struct tr_oom *o)
{
	struct bind b = lake_bind_start(c->s, ST_OOM_MARK);
	int rc;

	lake_b_str(&b, c->host);
	lake_b_str(&b, c->boot);
	b_u64(&b, o->pid);
	b_u64(&b, o->hdr.ts_ns);
	rc = exec_bound(&b);
	if (rc)
		return rc;
	/* The kill's figures as its signal's detail (signed, as the lake keeps integers). */
	{
		const char *k[] = { "uid", "total_vm_kb", "anon_rss_kb", "file_rss_kb", "shmem_rss_kb", "pgtables_kb",
				    "oom_score_adj", "trigger_cgroup_id", "memcg_id", "memcg_v1", "memcg_limit_bytes",
				    "memcg_usage_bytes" };
		const int64_t v[] = { (int64_t)o->uid, (int64_t)o->total_vm_kb, (int64_t)o->anon_rss_kb,
				      (int64_t)o->file_rss_kb, (int64_t)o->shmem_rss_kb, (int64_t)o->pgtables_kb,
				      o->oom_score_adj, (int64_t)o->trigger_cgroup_id, (int64_t)o->memcg_id,
				      (int64_t)o->memcg_v1, (int64_t)o->memcg_limit_bytes,
				      (int64_t)o->memcg_usage_bytes };
		struct obuf *out = &c->s->drops_json;
		struct json j;

		json_reset(out, &j);
		json_object_begin(&j);
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			json_key(&j, k[i]);
			json_i64(&j, v[i]);
		}
		json_object_end(&j);
		if (out->err)
			return STORE_E_NOMEM;
		b = lake_bind_start(c->s, ST_OOM_SIGNAL);
		lake_b_str(&b, c->host);
		lake_b_str(&b, c->boot);
		b_u64(&b, c->seq);
		b_u64(&b, o->pid);
		b_u64(&b, o->hdr.ts_ns);
		b_text(&b, out->buf, out->len);
		lake_b_i64(&b, c->stream);
	}
	return exec_bound(&b);
}

static const char *file_mode(uint32_t mode)
{
	switch (mode & (TR_FILE_READ | TR_FILE_WRITE)) {
	case TR_FILE_READ: return "r";
	case TR_FILE_WRITE: return "w";
	default: return "rw";
	}
}

static const char *loss_reason(uint32_t r)
{
	switch (r) {
	case TL_LOSS_EVICTED: return "evicted";
	case TL_LOSS_QUARANTINED: return "quarantined";
	case TL_LOSS_CORRUPT: return "corrupt";
	case TL_LOSS_RING: return "ring";
	default: return NULL;
	}
}

/*
 * The record a row is made of (store_row, store_upsert): its struct's bytes, its version, the bytes that
 * follow it (a file's path), or an exec's strings as the decoder found them.
 */
struct row_src {
	const void *rec;
	unsigned version;
	const char *tail;
	size_t tail_len;
	const struct decoded_exec *exec;
	bool has_ts; /* a frame: the decoder vouched for its record's time, ts_ns */
	uint64_t ts_ns;
	const struct json_node *json; /* a JSON record's object (LF_JSON), parsed in the store's document */
	const struct json_node *root; /* the record's root, where json is an element of one of its arrays */
	int64_t run_id;               /* LF_RUN, LF_NEXT_IDX: the run the record is about */
	int64_t index;                /* LF_INDEX: json's place in its array */
};

static void bind_json(struct store *s, struct bind *b, const struct json_node *root, const struct lake_source *k);

static uint64_t rec_uint(const struct row_src *r, const struct lake_source *k)
{
	const char *p = (const char *)r->rec + k->off;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (k->len == sizeof(v16)) {
		memcpy(&v16, p, sizeof(v16));
		return v16;
	}
	if (k->len == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

/* The 64-bit counters at the column's bytes: their sum, and into o (if not NULL) as a JSON array. */
static uint64_t rec_counts(const struct row_src *r, const struct lake_source *k, struct obuf *o)
{
	uint64_t sum = 0, v;
	struct json j;

	if (o) {
		json_init(&j, o);
		json_array_begin(&j);
	}
	for (size_t i = 0; i + sizeof(v) <= k->len; i += sizeof(v)) {
		memcpy(&v, (const char *)r->rec + k->off + i, sizeof(v));
		sum += v;
		if (o)
			json_u64(&j, v);
	}
	if (o)
		json_array_end(&j);
	return sum;
}

/*
 * A column store.c makes from the record's bytes (LF_DERIVED). *json: the next of the row's JSON texts, which
 * store_row made before binding any (a bound text must stay where it is until the statement runs).
 */
static void bind_derived(const struct batch_ctx *c, struct bind *b, const struct row_src *r,
			 const struct lake_source *k, const char **json)
{
	const struct decoded_exec *e = r->exec;
	uint64_t v = rec_uint(r, k);
	uint32_t u32 = (uint32_t)v, flags;
	const char *t;
	size_t n;

	memcpy(&flags, (const char *)r->rec + k->flags_off, sizeof(flags));
	switch (k->derived) {
	case LD_RECLAIM: bind_reclaim(b, flags, v); return;
	case LD_IMAGE_PEAK:
		/* unknown where the kernel released the final image before the exit was seen */
		if (flags & TR_EXIT_NO_IMAGE_PEAK)
			b_null(b);
		else
			b_u64(b, v);
		return;
	case LD_NONZERO:
		if (v)
			b_u64(b, v);
		else
			b_null(b);
		return;
	case LD_REAL: lake_b_i64(b, to_real(c, v)); return;
	case LD_EXIT_STATUS:
		if (decode_exit_signal(u32))
			b_null(b);
		else
			b_u64(b, decode_exit_status(u32));
		return;
	case LD_EXIT_SIGNAL: b_u64(b, decode_exit_signal(u32)); return;
	case LD_EXIT_CORE: lake_b_i64(b, decode_exit_core(u32)); return;
	case LD_EXEC_PATH: b_text(b, e->path, e->path_len); return;
	case LD_EXEC_ARGV:
		t = strings_json(&c->s->argv_json, e->argv, e->argv_len);
		b_text(b, t, t ? c->s->argv_json.len : 0);
		return;
	case LD_EXEC_CWD: b_text(b, e->cwd_len ? e->cwd : NULL, e->cwd_len); return;
	case LD_EXEC_ENV:
		t = strings_json(&c->s->env_json, e->env, e->env_len);
		b_text(b, t, t ? c->s->env_json.len : 0);
		return;
	case LD_PATH: b_text(b, r->tail, r->tail_len); return;
	case LD_PAYLOAD: b_blob(b, r->tail, r->tail_len); return;
	case LD_FILE_MODE: lake_b_str(b, file_mode(u32)); return;
	case LD_BIT: lake_b_i64(b, (u32 & k->mask) != 0); return;
	case LD_SUM: b_u64(b, rec_counts(r, k, NULL)); return;
	case LD_COUNTS_JSON:
		n = strlen(*json);
		b_text(b, *json, n);
		*json += n + 1;
		return;
	case LD_LOSS_REASON: lake_b_str(b, loss_reason(u32)); return;
	default: /* a converter schema.c names and store.c lacks (test_lake_schema_writes) */
		if (b->rc == SQL_OK)
			b->rc = SQL_E;
	}
}

/* The row's LD_COUNTS_JSON texts, each ending in a NUL, in the store's buffer: where they start. */
static const char *row_json(struct batch_ctx *c, const struct lake_table *t, const struct row_src *r)
{
	struct obuf *o = &c->s->drops_json;
	unsigned n = 0;

	o->len = 0;
	o->err = 0;
	for (unsigned i = 0; i < t->ncols; i++)
		if (lake_row_column(&t->cols[i]) && t->cols[i].src.from == LF_DERIVED &&
		    t->cols[i].src.derived == LD_COUNTS_JSON) {
			rec_counts(r, &t->cols[i].src, o);
			obuf_putc(o, 0);
			n++;
		}
	if (!n)
		return "";
	if (!o->err)
		return o->buf;
	/* No memory for them: each an empty array (the sums stay exact). */
	o->len = 0;
	o->err = 0;
	while (n--)
		obuf_put(o, "[]", 3);
	return o->err ? NULL : o->buf;
}

/* One column's value, made from the record as its source says; json as bind_derived's. */
static void bind_source(const struct batch_ctx *c, struct bind *b, const struct row_src *r,
			const struct lake_source *k, const char **json)
{
	switch (k->from) {
	case LF_HOST: lake_b_str(b, c->host); break;
	case LF_STREAM: lake_b_i64(b, c->stream); break;
	case LF_SEQ: b_u64(b, c->seq); break;
	case LF_RECEIVED: b_u64(b, c->received_ns); break;
	case LF_BOOT: lake_b_str(b, c->boot); break;
	case LF_UINT:
		if (r->version < k->rec_version)
			b_null(b);
		else
			b_u64(b, rec_uint(r, k));
		break;
	case LF_CHARS: b_text(b, (const char *)r->rec + k->off, strnlen((const char *)r->rec + k->off, k->len)); break;
	case LF_DERIVED:
		if (*json)
			bind_derived(c, b, r, k, json);
		break;
	case LF_ONE: lake_b_i64(b, 1); break;
	case LF_HASH: lake_b_str(b, c->hash); break;
	case LF_NOTE: lake_b_str(b, c->note); break;
	case LF_TS:
		if (r->has_ts)
			b_u64(b, r->ts_ns);
		else
			b_null(b);
		break;
	case LF_JSON: bind_json(c->s, b, r->json, k); break;
	case LF_ROOT_JSON: bind_json(c->s, b, r->root, k); break;
	case LF_RUN:
	case LF_NEXT_IDX: lake_b_i64(b, r->run_id); break;
	case LF_INDEX: lake_b_i64(b, r->index); break;
	case LF_CONST: lake_b_str(b, k->json); break;
	default: /* a source schema.c names and store.c lacks (test_lake_schema_writes) */
		if (b->rc == SQL_OK)
			b->rc = SQL_E;
	}
}

/*
 * The row a record fills (a table with record_size: samples, files, agent_counters, losses), each column bound
 * as lake/schema.c says it is made (enum lake_from), in the order of lake_row_sql's statement.
 */
static int store_row(struct batch_ctx *c, enum stmt_id id, const struct row_src *r)
{
	const struct lake_table *t = row_table(id);
	const char *json = row_json(c, t, r);
	struct bind b = lake_bind_start(c->s, id);

	if (!json && b.rc == SQL_OK)
		b.rc = SQL_E_NOMEM;
	for (unsigned i = 0; i < t->ncols; i++)
		if (lake_row_column(&t->cols[i]))
			bind_source(c, &b, r, &t->cols[i].src, &json);
	return exec_bound(&b);
}

/* One row of an upsert's statement: its fills bound in the order of lake_upsert_sql's. */
static void bind_fills(struct batch_ctx *c, struct bind *b, const struct lake_upsert *u, const struct row_src *r)
{
	const char *json = ""; /* an upsert makes no JSON of counters */

	for (unsigned i = 0; i < u->nfills; i++)
		if (lake_fill_bound(u, &u->fills[i]))
			bind_source(c, b, r, &u->fills[i].src, &json);
}

/* A record's upsert (stmt_upsert[]), one row. */
static struct bind bind_upsert(struct batch_ctx *c, enum stmt_id id, const struct row_src *r)
{
	struct bind b = lake_bind_start(c->s, id);

	bind_fills(c, &b, stmt_upsert[id], r);
	return b;
}

static int store_upsert(struct batch_ctx *c, enum stmt_id id, const struct row_src *r)
{
	struct bind b = bind_upsert(c, id, r);

	return exec_bound(&b);
}

static int derive_cgroup(struct batch_ctx *c, const struct decoded_cgroup *g)
{
	const struct row_src r = {
		.rec = &g->rec, .version = g->rec.hdr.version, .tail = g->path, .tail_len = g->path_len
	};

	return store_upsert(c, ST_CGROUP, &r);
}

static int derive_exec(struct batch_ctx *c, const struct decoded_exec *e)
{
	const struct row_src r = { .rec = &e->rec, .version = e->rec.hdr.version, .exec = e };

	return store_upsert(c, ST_EXEC, &r);
}

static int derive_fork(struct batch_ctx *c, const struct tr_fork *f)
{
	const struct row_src r = { .rec = f, .version = f->hdr.version };

	return store_upsert(c, ST_FORK, &r);
}

static int derive_exit(struct batch_ctx *c, const struct tr_exit *x)
{
	const struct row_src r = { .rec = x, .version = x->hdr.version };
	int rc = store_upsert(c, ST_EXIT, &r);

	return rc ? rc : exit_signal(c, x);
}

static int derive_file(struct batch_ctx *c, const struct decoded_file *f)
{
	const struct row_src r = {
		.rec = &f->rec, .version = f->rec.hdr.version, .tail = f->path, .tail_len = f->path_len
	};

	return store_row(c, ST_FILE, &r);
}

/* The row of a fixed-size kernel record that begins with its header h. */
static int record_row(struct batch_ctx *c, enum stmt_id id, const struct tr_hdr *h)
{
	const struct row_src r = { .rec = h, .version = h->version };

	return store_row(c, id, &r);
}

/* A kernel record the decoder accepted (store_frame decoded it): its table. */
static int derive_decoded(struct batch_ctx *c)
{
	const struct decoded *d = c->s->dec;

	switch (d->type) {
	case TR_EXEC: return derive_exec(c, &d->u.exec);
	case TR_FORK: return derive_fork(c, &d->u.fork);
	case TR_EXIT: return derive_exit(c, &d->u.exit);
	case TR_OOM: return derive_oom(c, &d->u.oom);
	case TR_SAMPLE: return record_row(c, ST_SAMPLE, &d->u.sample.hdr);
	case TR_FILE: return derive_file(c, &d->u.file);
	case TR_CGROUP: return derive_cgroup(c, &d->u.cgroup);
	case TR_COUNTERS: return record_row(c, ST_COUNTERS, &d->u.counters.hdr);
	default: return STORE_OK; /* TR_END: nothing beyond the record itself */
	}
}

static int derive_loss(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	struct tl_loss l;

	if (f->len != sizeof(l)) {
		c->note = "length";
		c->res->undecodable++;
		return STORE_OK;
	}
	memcpy(&l, payload, sizeof(l));
	if (!loss_reason(l.reason)) {
		c->note = "loss_reason";
		c->res->undecodable++;
		return STORE_OK;
	}
	return store_row(c, ST_LOSS, &(const struct row_src){ .rec = &l });
}

/* ---- key rotation ------------------------------------------------------- */

/* The keys row of key_id: STORE_OK with its public key and host (hex, "" if unbound), NOT_FOUND, or an error. */
static int key_row(struct store *s, const char *key_hex, uint8_t pk[BATCH_PUBKEY_LEN], char host[HEX_HOST],
		   bool *rotation)
{
	struct bind b = lake_bind_start(s, ST_KEY_GET);
	const char *b64, *h, *src;
	size_t n = 0;
	int rc;

	lake_b_str(&b, key_hex);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	rc = sql_step(b.st);
	if (rc == SQL_ROW) {
		b64 = sql_col_text(b.st, 0);
		h = sql_col_text(b.st, 1);
		src = sql_col_text(b.st, 2);
		if (!b64 || sodium_base642bin(pk, BATCH_PUBKEY_LEN, b64, strlen(b64), NULL, &n, NULL,
					      sodium_base64_VARIANT_ORIGINAL) || n != BATCH_PUBKEY_LEN)
			rc = SQL_E; /* not the key the lake wrote */
		snprintf(host, HEX_HOST, "%s", h ? h : "");
		*rotation = src && !strcmp(src, "rotation");
	}
	sql_reset(b.st);
	if (rc == SQL_ROW)
		return STORE_OK;
	if (rc == SQL_E) {
		snprintf(s->errmsg, sizeof(s->errmsg), "keys row %s: public key is not base64 of 32 bytes", key_hex);
		return STORE_E_SQL;
	}
	return rc == SQL_DONE ? STORE_E_NOT_FOUND : lake_sql_fail(s, rc);
}

/*
 * The batch's signer announces its successor. Enrolled for the same host
 * unless the id is not the key's, or the id is already enrolled for another
 * key or host (an announcement of a key already enrolled as it is: nothing to do).
 */
static int derive_key_announce(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	char key_hex[HEX_KEY], host[HEX_HOST], b64[sodium_base64_ENCODED_LEN(BATCH_PUBKEY_LEN,
									       sodium_base64_VARIANT_ORIGINAL)];
	uint8_t id[BATCH_KEY_ID_LEN], pk[BATCH_PUBKEY_LEN];
	struct tl_key_announce a;
	struct bind b;
	bool rotation = false;
	int rc;

	if (f->len != sizeof(a)) {
		c->note = "length";
		c->res->undecodable++;
		return STORE_OK;
	}
	memcpy(&a, payload, sizeof(a));
	batch_key_id(a.new_public_key, id);
	if (memcmp(id, a.new_key_id, sizeof(id))) {
		c->note = "key_id_mismatch";
		c->res->keys_refused++;
		return STORE_OK;
	}
	hex(key_hex, sizeof(key_hex), a.new_key_id, sizeof(a.new_key_id));
	rc = key_row(c->s, key_hex, pk, host, &rotation);
	if (rc == STORE_OK) {
		if (memcmp(pk, a.new_public_key, sizeof(pk)) || (host[0] && strcmp(host, c->host)) || !rotation) {
			c->note = "key_conflict";
			c->res->keys_refused++;
		}
		return STORE_OK;
	}
	if (rc != STORE_E_NOT_FOUND)
		return rc;
	sodium_bin2base64(b64, sizeof(b64), a.new_public_key, sizeof(a.new_public_key), sodium_base64_VARIANT_ORIGINAL);
	b = lake_bind_start(c->s, ST_KEY_ROTATION);
	lake_b_str(&b, key_hex);
	lake_b_str(&b, b64);
	lake_b_str(&b, c->host);
	lake_b_str(&b, c->key);
	lake_b_str(&b, c->hash);
	b_u64(&b, c->received_ns);
	rc = exec_bound(&b);
	if (!rc)
		c->res->keys_enrolled++;
	return rc;
}

int store_rotation_key(struct store *s, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t public_key[BATCH_PUBKEY_LEN],
		       uint8_t host_id[BATCH_HOST_ID_LEN])
{
	char key_hex[HEX_KEY], host[HEX_HOST];
	bool rotation = false;
	size_t n = 0;
	int rc;

	hex(key_hex, sizeof(key_hex), key_id, BATCH_KEY_ID_LEN);
	rc = key_row(s, key_hex, public_key, host, &rotation);
	if (rc)
		return rc;
	/* A key of the file is the file's to decide: it may have been removed from it since. */
	if (!rotation)
		return STORE_E_NOT_FOUND;
	if (sodium_hex2bin(host_id, BATCH_HOST_ID_LEN, host, strlen(host), NULL, &n, NULL) || n != BATCH_HOST_ID_LEN) {
		snprintf(s->errmsg, sizeof(s->errmsg), "keys row %s: host id is not 32 hex digits", key_hex);
		return STORE_E_SQL;
	}
	return STORE_OK;
}

int store_note_file_key(struct store *s, const uint8_t key_id[BATCH_KEY_ID_LEN],
			const uint8_t public_key[BATCH_PUBKEY_LEN], const uint8_t *host_id, uint64_t now_ns)
{
	char key_hex[HEX_KEY], host[HEX_HOST];
	char b64[sodium_base64_ENCODED_LEN(BATCH_PUBKEY_LEN, sodium_base64_VARIANT_ORIGINAL)];
	struct bind b = lake_bind_start(s, ST_KEY_FILE);

	hex(key_hex, sizeof(key_hex), key_id, BATCH_KEY_ID_LEN);
	sodium_bin2base64(b64, sizeof(b64), public_key, BATCH_PUBKEY_LEN, sodium_base64_VARIANT_ORIGINAL);
	if (host_id)
		hex(host, sizeof(host), host_id, BATCH_HOST_ID_LEN);
	lake_b_str(&b, key_hex);
	lake_b_str(&b, b64);
	lake_b_str(&b, host_id ? host : NULL);
	b_u64(&b, now_ns);
	return exec_bound(&b);
}

/* ---- run reports and live runs ------------------------------------------ */

/* Step a bound statement to its first row, readable until query_end(): STORE_OK, NOT_FOUND or an error. */
static int query_first(struct bind *b)
{
	int rc = lake_bind_check(b);

	if (rc)
		return rc;
	rc = sql_step(b->st);
	if (rc == SQL_ROW)
		return STORE_OK;
	rc = rc == SQL_DONE ? STORE_E_NOT_FOUND : lake_sql_fail(b->s, rc);
	sql_reset(b->st);
	return rc;
}

static void query_end(struct bind *b)
{
	sql_reset(b->st);
}

/* An integer, or NULL when unknown. */
static void b_opt(struct bind *b, bool known, int64_t v)
{
	if (known)
		lake_b_i64(b, v);
	else
		b_null(b);
}

/*
 * The run a host's key names: STORE_OK with its number and whether its row holds a report, or NOT_FOUND.
 * Whether it does is in records: a report's record of this batch is sent first.
 */
/*
 * What the lake holds of a run key, looked up before the batch's records (PostgreSQL: runs_known()), and kept
 * as the batch's records make or take over runs: a live record's or report's run is then found without waiting
 * for an answer, which would empty libpq's pipeline once a record (the ingest and its backend taking turns).
 */
struct run_known {
	char key[STORE_RUN_KEY_MAX + 1];
	int64_t run_id;
	bool found;      /* the lake has a run of this key: run_id */
	bool has_report; /* its row holds its tracer run report */
};

#define RUNS_KNOWN_MAX 8192 /* keys a batch looks up before its records; the rest, one at a time */
#define RUNS_KNOWN_ASK 32   /* keys a ST_RUN_FIND_MANY asks for */

/* key's entry, or NULL; *slot: where it is, or the empty slot it would take. */
static struct run_known *known_find(struct store *s, const char *key, uint32_t *slot)
{
	uint32_t mask = 2 * s->known_cap - 1;

	if (!s->known_cap)
		return NULL;
	for (uint32_t i = (uint32_t)hash_bytes(s->known_seed, key, strlen(key)) & mask;; i = (i + 1) & mask) {
		*slot = i;
		if (!s->known_slot[i])
			return NULL;
		if (!strcmp(s->known[s->known_slot[i] - 1].key, key))
			return &s->known[s->known_slot[i] - 1];
	}
}

/* key's entry, made (not found) if new; NULL when the table is full or cannot be had. */
static struct run_known *known_add(struct store *s, const char *key)
{
	struct run_known *k;
	uint32_t slot = 0;

	if (!s->known_cap) {
		s->known = calloc(RUNS_KNOWN_MAX, sizeof(*s->known));
		s->known_slot = calloc(2 * RUNS_KNOWN_MAX, sizeof(*s->known_slot));
		if (!s->known || !s->known_slot) {
			free(s->known);
			free(s->known_slot);
			s->known = NULL;
			s->known_slot = NULL;
			return NULL;
		}
		s->known_cap = RUNS_KNOWN_MAX;
		s->known_seed = hash_seed_random();
	}
	k = known_find(s, key, &slot);
	if (k || s->nknown == s->known_cap)
		return k;
	k = &s->known[s->nknown];
	*k = (struct run_known){ .found = false }; /* asked, not yet answered: not in the lake */
	snprintf(k->key, sizeof(k->key), "%s", key);
	s->known_slot[slot] = ++s->nknown;
	return k;
}

/* The batch's keys forgotten (the next batch looks its own up). */
static void known_reset(struct store *s)
{
	if (s->nknown)
		memset(s->known_slot, 0, 2 * s->known_cap * sizeof(*s->known_slot));
	s->nknown = 0;
}

/* What the batch made or took over: key's run is run_id (its report in it, or not). */
static void known_set(struct store *s, const char *key, int64_t run_id, bool has_report)
{
	uint32_t slot;
	struct run_known *k = known_find(s, key, &slot);

	if (k) {
		k->run_id = run_id;
		k->found = true;
		k->has_report = has_report;
	}
}

/* Keys first .. n - 1 of the table asked for at once; each found one filled in. */
static int known_ask(struct batch_ctx *c, uint32_t first, uint32_t n)
{
	struct store *s = c->s;
	struct bind b = lake_bind_start(s, ST_RUN_FIND_MANY);
	int rc;

	lake_b_str(&b, c->host);
	for (uint32_t i = 0; i < RUNS_KNOWN_ASK; i++)
		lake_b_str(&b, first + i < n ? s->known[first + i].key : NULL);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	while ((rc = sql_step(b.st)) == SQL_ROW) {
		const char *key = sql_col_text(b.st, 0);
		uint32_t slot;
		struct run_known *k = key ? known_find(s, key, &slot) : NULL;

		if (k) {
			k->found = true;
			k->run_id = sql_col_i64(b.st, 1);
			k->has_report = sql_col_i64(b.st, 2) != 0;
		}
	}
	sql_reset(b.st);
	return rc == SQL_DONE ? STORE_OK : lake_sql_fail(s, rc);
}

static int run_find(struct batch_ctx *c, const char *key, int64_t *run_id, bool *has_report)
{
	struct bind b;
	uint32_t slot;
	const struct run_known *k = known_find(c->s, key, &slot);
	int rc;

	if (k) {
		*run_id = k->run_id;
		*has_report = k->has_report;
		return k->found ? STORE_OK : STORE_E_NOT_FOUND;
	}
	rc = c->report_unsent ? bulk_flush(c) : STORE_OK;
	if (rc)
		return rc;
	b = lake_bind_start(c->s, ST_RUN_FIND);
	lake_b_str(&b, c->host);
	lake_b_str(&b, key);
	rc = query_first(&b);
	if (rc)
		return rc;
	*run_id = sql_col_i64(b.st, 0);
	*has_report = sql_col_i64(b.st, 1) != 0;
	query_end(&b);
	return STORE_OK;
}

/*
 * ---- a lake record's values, read in C (records/json_parse.h) -----------
 *
 * A run report, a live record, a tools or a host record is JSON a host
 * wrote: parsed strictly (a record that is not strict JSON, or names a
 * member twice, is no record of its kind), and each value taken only if
 * of its column's type (else NULL), then bound: both engines store the
 * same values.
 */

/* Parse the record into the store's nodes (grown as needed). 0, or -EINVAL (not strict JSON), -ENOMEM. */
static int jdoc_parse(struct store *s, const char *json, size_t len)
{
	uint32_t cap = (uint32_t)(len / 2 + 2); /* a value takes a byte, and a separator between two */

	if (cap > s->jcap) {
		struct json_node *n = realloc(s->jnodes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->jnodes = n;
		s->jcap = cap;
	}
	if (len + 1 > s->jarena_cap) {
		char *a = realloc(s->jarena, len + 1);

		if (!a)
			return -ENOMEM;
		s->jarena = a;
		s->jarena_cap = len + 1;
	}
	s->jhead_obj = NULL; /* its nodes are the new document's */
	return json_parse(&s->jdoc, json, len, s->jnodes, s->jcap);
}

/* The record parsed, as an object (NULL: it is not one), or STORE_E_NOMEM in *rc. */
static const struct json_node *jdoc_object(struct store *s, const char *json, size_t len, int *rc)
{
	int e = jdoc_parse(s, json, len);
	const struct json_node *root;

	*rc = e == -ENOMEM ? STORE_E_NOMEM : STORE_OK;
	if (e)
		return NULL;
	root = json_root(&s->jdoc);
	return root->type == JSON_OBJECT ? root : NULL;
}

static const struct json_node *jget(struct store *s, const struct json_node *obj, const char *name)
{
	return json_member(&s->jdoc, obj, name);
}

/* Whether n is the string want. */
static bool jis(struct store *s, const struct json_node *n, const char *want)
{
	char v[32];

	return n && n->type == JSON_STRING && json_get_string(&s->jdoc, n, v, sizeof(v), NULL) == 0 &&
	       !strcmp(v, want);
}

/* An array's elements (0 when n is not an array). */
static int64_t jcount(const struct json_node *n)
{
	return n && n->type == JSON_ARRAY ? n->count : 0;
}

/*
 * A run key: a string of 1..STORE_RUN_KEY_MAX bytes without a NUL ("a\u0000b", which C would cut into
 * another key of the host), into out.
 */
static bool jkey(struct store *s, const struct json_node *n, char out[STORE_RUN_KEY_MAX + 1])
{
	size_t len = 0;

	out[0] = 0;
	return n && n->type == JSON_STRING && json_get_string(&s->jdoc, n, out, STORE_RUN_KEY_MAX + 1, &len) == 0 &&
	       len > 0 && !memchr(out, 0, len);
}

/* An integer: a whole number in int64's range; else NULL. */
static void jb_int(struct bind *b, const struct json_node *n)
{
	int64_t v = 0;
	bool ok = n && json_get_i64(n, &v) == 0;

	b_opt(b, ok, v);
}

/* A count: a whole number from 0 to max; else NULL. */
static void jb_count(struct bind *b, const struct json_node *n, uint64_t max)
{
	uint64_t v = 0;
	bool ok = n && json_get_u64(n, &v) == 0 && v <= max && v <= INT64_MAX;

	b_opt(b, ok, (int64_t)v);
}

/* A boolean: true 1, false 0; else NULL. */
static void jb_bool(struct bind *b, const struct json_node *n)
{
	bool v = false;
	bool ok = n && json_get_bool(n, &v) == 0;

	b_opt(b, ok, v);
}

/* A string, decoded; else NULL. Its bytes live in the arena (reset per statement). */
static void jb_text(struct bind *b, struct store *s, const struct json_node *n)
{
	size_t len = 0;
	char *out = s->jarena + s->jarena_used;

	if (!n || n->type != JSON_STRING ||
	    json_get_string(&s->jdoc, n, out, s->jarena_cap - s->jarena_used, &len)) {
		b_null(b);
		return;
	}
	s->jarena_used += len + 1;
	b_text(b, out, len);
}

/* A run's or step's state: one of the four (docs/live.md); else NULL. */
static void jb_state(struct bind *b, struct store *s, const struct json_node *n)
{
	static const char *const states[] = { "running", "succeeded", "failed", "lost" };

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (jis(s, n, states[i])) {
			lake_b_str(b, states[i]);
			return;
		}
	b_null(b);
}

/* A JSON value of type t, as its text (the record's own bytes); else NULL. */
static void jb_json(struct bind *b, struct store *s, const struct json_node *n, enum json_type t)
{
	if (n && n->type == t)
		b_text(b, s->jdoc.text + n->start, n->len);
	else
		b_null(b);
}

static void jb_array(struct bind *b, struct store *s, const struct json_node *n)
{
	jb_json(b, s, n, JSON_ARRAY);
}

/* An array's length: NULL when missing, 0 when not an array. */
static void jb_length(struct bind *b, const struct json_node *n)
{
	b_opt(b, n != NULL, jcount(n));
}

/* A run's key (jkey's); else NULL. */
static void jb_key(struct bind *b, struct store *s, const struct json_node *n)
{
	char key[STORE_RUN_KEY_MAX + 1];

	if (jkey(s, n, key))
		jb_text(b, s, n);
	else
		b_null(b);
}

/* A run's state from its exit code: succeeded (0), failed (another), lost (none: its end was not seen). */
static void jb_exit_state(struct bind *b, const struct json_node *n)
{
	int64_t code = 0;

	lake_b_str(b, json_get_i64(n, &code) ? "lost" : code == 0 ? "succeeded" : "failed");
}

/* A reported step's state: running while "running" is above 0, else as "failed" says; else NULL. */
static void jb_step_state(struct bind *b, struct store *s, const struct json_node *e)
{
	int64_t running = 0;
	bool failed = false;

	if (json_get_i64(jget(s, e, "running"), &running) == 0 && running > 0)
		lake_b_str(b, "running");
	else if (json_get_bool(jget(s, e, "failed"), &failed) == 0)
		lake_b_str(b, failed ? "failed" : "succeeded");
	else
		b_null(b);
}

/* CPUs, a number from 0 to 1e6, in thousandths rounded half away from zero; else NULL. */
static void jb_millicores(struct bind *b, struct store *s, const struct json_node *n)
{
	double v = 0;
	bool ok = n && json_get_double(&s->jdoc, n, &v) == 0 && v >= 0 && v <= 1e6;

	b_opt(b, ok, ok ? (int64_t)(1000 * v + 0.5) : 0);
}

static void b_real(struct bind *b, double v)
{
	if (b->rc == SQL_OK)
		b->rc = sql_bind_double(b->st, ++b->n, v);
}

/* end - start, both integers, when it fits; else NULL. */
static void jb_duration(struct bind *b, const struct json_node *start, const struct json_node *end)
{
	int64_t s = 0, e = 0, d = 0;
	bool known = start && end && json_get_i64(start, &s) == 0 && json_get_i64(end, &e) == 0 &&
		     !__builtin_sub_overflow(e, s, &d);

	b_opt(b, known, d);
}

/*
 * The array an upsert of elements reads (lake_upsert.element): a member of the record's root, or of the root's
 * object lake_upsert.object. NULL when the record has none.
 */
static const struct json_node *upsert_array(struct store *s, const struct lake_upsert *u)
{
	const struct json_node *root = json_root(&s->jdoc);

	return jget(s, u->object ? jget(s, root, u->object) : root, u->element);
}

/* ---- run reports ---- */

/* What a run report's record is: its report object, its run key. */
struct report_head {
	const struct json_node *root, *report; /* report: NULL when the record is not a report */
	bool has_key; /* report.run.key: a string of 1..STORE_RUN_KEY_MAX bytes, no NUL */
	char key[STORE_RUN_KEY_MAX + 1];
};

static int report_head(struct batch_ctx *c, const char *json, size_t len, struct report_head *h)
{
	struct store *s = c->s;
	int rc;

	memset(h, 0, sizeof(*h));
	h->root = jdoc_object(s, json, len, &rc);
	h->report = jget(s, h->root, lake_report_run_insert.object);
	if (!h->report || h->report->type != JSON_OBJECT)
		h->report = NULL;
	else
		h->has_key = jkey(s, jget(s, jget(s, h->report, "run"), "key"), h->key);
	return rc;
}

/* ST_RUN (run_id 0) or ST_RUN_MERGE (the run's row): lake/schema.c's map of the report to the run's row. */
static struct bind bind_report_run(struct batch_ctx *c, enum stmt_id id, const struct report_head *h,
				   int64_t run_id)
{
	const struct row_src r = { .json = h->report, .root = h->root, .run_id = run_id };

	c->s->jarena_used = 0;
	return bind_upsert(c, id, &r);
}

/*
 * The run was seen before under the report's key (streamed live, or an
 * earlier report): the report takes over that row, and its steps, run
 * processes and signals replace the row's, so that the run appears once.
 */
static int report_merge(struct batch_ctx *c, const struct report_head *h, int64_t run_id)
{
	static const enum stmt_id clear[] = { ST_RUN_CLEAR_STEPS, ST_RUN_CLEAR_PROCS, ST_RUN_CLEAR_SIGNALS };
	struct bind b = bind_report_run(c, ST_RUN_MERGE, h, run_id);
	int rc = exec_bound(&b);

	for (size_t i = 0; !rc && i < sizeof(clear) / sizeof(clear[0]); i++) {
		b = lake_bind_start(c->s, clear[i]);
		lake_b_i64(&b, run_id);
		rc = exec_bound(&b);
	}
	return rc;
}

/* Rows from one of a record's arrays: at most STORE_RUN_ROWS_MAX of them, the rest counted as dropped. */
static void rows_dropped(struct batch_ctx *c, int64_t listed, int64_t stored_max)
{
	if (listed > stored_max)
		c->res->run_rows_dropped += (uint32_t)(listed - stored_max);
}

static int rows_of_array(struct batch_ctx *c, enum stmt_id first, int64_t run_id, int64_t *objects,
			 int64_t *changes);

/*
 * The report's steps (objects; each at its index in the array). One whose id an earlier step of the report
 * has is not stored (the unique index): counted as dropped.
 */
static int report_steps(struct batch_ctx *c, int64_t run_id)
{
	int64_t tried = 0, stored = 0;
	int rc = rows_of_array(c, ST_STEPS, run_id, &tried, &stored);

	if (!rc)
		rows_dropped(c, tried, stored);
	return rc;
}

/* Whether the run has this live signal already (the same kind, of the same process). */
static int live_signal_seen(struct batch_ctx *c, int64_t run_id, const struct json_node *e, bool *seen)
{
	struct store *s = c->s;
	struct bind b = lake_bind_start(s, ST_LIVE_SIGNAL_SEEN);
	int64_t one = 0;
	int rc;

	s->jarena_used = 0;
	lake_b_i64(&b, run_id);
	jb_text(&b, s, jget(s, e, "kind"));
	jb_int(&b, jget(s, e, "pid"));
	jb_int(&b, jget(s, e, "start_mono_ns"));
	rc = query_i64(&b, &one);
	*seen = rc == STORE_OK;
	return rc == STORE_E_NOT_FOUND ? STORE_OK : rc;
}

/*
 * A record's signals (objects with a text "kind"): a report's (ST_REPORT_SIGNAL) or a live record's
 * (ST_LIVE_SIGNAL), each kept whole as its detail and naming the record it came from. A live one the run has
 * (by kind and process) is not stored again: a restarted processor may repeat what it sent after its
 * checkpoint.
 */
static int record_signals(struct batch_ctx *c, enum stmt_id id, int64_t run_id)
{
	struct store *s = c->s;
	const struct json_node *list = upsert_array(s, stmt_upsert[id]);
	int64_t n = 0;
	int rc = STORE_OK;

	for (const struct json_node *e = jcount(list) ? json_first(&s->jdoc, list) : NULL; e && !rc;
	     e = json_next(&s->jdoc, e)) {
		const struct json_node *kind = jget(s, e, "kind");
		const struct row_src r = { .json = e, .root = json_root(&s->jdoc), .run_id = run_id };
		bool seen = false;
		struct bind b;

		if (e->type != JSON_OBJECT || !kind || kind->type != JSON_STRING)
			continue;
		if (id == ST_LIVE_SIGNAL && (rc = live_signal_seen(c, run_id, e, &seen)) != STORE_OK)
			break;
		if (seen)
			continue;
		if (n++ == STORE_RUN_ROWS_MAX)
			break;
		s->jarena_used = 0;
		b = bind_upsert(c, id, &r);
		rc = exec_bound(&b);
	}
	if (!rc)
		rows_dropped(c, jcount(list), STORE_RUN_ROWS_MAX);
	return rc;
}

/* ---- cluster jobs joined to the run that submitted them (docs/live.md, "Cluster jobs"; lake/join.h) ---- */

/* One more of a growing array of items of size each: 0, or STORE_E_NOMEM. */
static int join_grow(void **v, uint32_t *n, uint32_t *cap, size_t size)
{
	void *nv;
	uint32_t ncap;

	if (*n < *cap)
		return STORE_OK;
	ncap = *cap ? *cap * 2 : 16;
	nv = ncap > *cap ? realloc(*v, (size_t)ncap * size) : NULL;
	if (!nv)
		return STORE_E_NOMEM;
	*v = nv;
	*cap = ncap;
	return STORE_OK;
}

/* A run the batch wrote that may be a job to join: one with a SLURM submit directory (the record's member). */
static int join_note_run(struct store *s, const struct json_node *dir, int64_t run_id)
{
	int rc;

	if (!dir || dir->type != JSON_STRING || !dir->len)
		return STORE_OK;
	rc = join_grow((void **)&s->join_runs, &s->njoin_runs, &s->join_runs_cap, sizeof(*s->join_runs));
	if (!rc)
		s->join_runs[s->njoin_runs++] = run_id;
	return rc;
}

/* The elements of a live record's processes_attributed that are sbatches: jobs may wait for them. */
static int join_note_attributed(struct store *s)
{
	const struct json_node *list = jget(s, json_root(&s->jdoc), "processes_attributed");
	int rc = STORE_OK;

	for (const struct json_node *e = jcount(list) ? json_first(&s->jdoc, list) : NULL; e && !rc;
	     e = json_next(&s->jdoc, e)) {
		int64_t pid, start;

		if (e->type != JSON_OBJECT || !jis(s, jget(s, e, "tool"), "sbatch") ||
		    json_get_i64(jget(s, e, "pid"), &pid) || json_get_i64(jget(s, e, "start_mono_ns"), &start))
			continue;
		rc = join_grow((void **)&s->join_procs, &s->njoin_procs, &s->join_procs_cap, sizeof(*s->join_procs));
		if (!rc) {
			s->join_procs[s->njoin_procs][0] = pid;
			s->join_procs[s->njoin_procs++][1] = start;
		}
	}
	return rc;
}

static int join_note_dir(struct store *s, const char *dir)
{
	char *copy;
	int rc;

	if (!dir || !*dir)
		return STORE_OK;
	rc = join_grow((void **)&s->join_dirs, &s->njoin_dirs, &s->join_dirs_cap, sizeof(*s->join_dirs));
	if (rc)
		return rc;
	copy = strdup(dir);
	if (!copy)
		return STORE_E_NOMEM;
	s->join_dirs[s->njoin_dirs++] = copy;
	return STORE_OK;
}

/* A run report's sbatches (its processes with the tool): the directories they ran in. */
static int join_note_report(struct store *s, const struct json_node *report)
{
	const struct json_node *procs = jget(s, report, "processes");
	char cwd[TR_CWD_MAX + 1];
	int rc = STORE_OK;

	for (const struct json_node *e = jcount(procs) ? json_first(&s->jdoc, procs) : NULL; e && !rc;
	     e = json_next(&s->jdoc, e)) {
		size_t n = 0;

		if (e->type == JSON_OBJECT && jis(s, jget(s, e, "tool"), "sbatch") && jget(s, e, "cwd") &&
		    !json_get_string(&s->jdoc, jget(s, e, "cwd"), cwd, sizeof(cwd), &n) && strlen(cwd) == n)
			rc = join_note_dir(s, cwd);
	}
	return rc;
}

static void join_reset(struct store *s)
{
	for (uint32_t i = 0; i < s->njoin_dirs; i++)
		free(s->join_dirs[i]);
	s->njoin_runs = s->njoin_procs = s->njoin_dirs = 0;
}

/* The jobs waiting in dir for their sbatch: onto the list of runs to join. */
static int join_waiting(struct store *s, const char *dir)
{
	struct bind b = lake_bind_start(s, ST_JOIN_WAITING);
	int rc, step;

	lake_b_str(&b, dir);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	while ((step = sql_step(b.st)) == SQL_ROW && !rc) {
		rc = join_grow((void **)&s->join_runs, &s->njoin_runs, &s->join_runs_cap, sizeof(*s->join_runs));
		if (!rc)
			s->join_runs[s->njoin_runs++] = sql_col_i64(b.st, 0);
	}
	sql_reset(b.st);
	return rc ? rc : step == SQL_ROW || step == SQL_DONE ? STORE_OK : lake_sql_fail(s, step);
}

/* The directory an attributed sbatch ran in (its exec's cwd), onto join_dirs. */
static int join_proc_dir(struct batch_ctx *c, int64_t pid, int64_t start)
{
	struct store *s = c->s;
	struct bind b = lake_bind_start(s, ST_JOIN_SBATCH_CWD);
	int rc, step;

	lake_b_str(&b, c->host);
	lake_b_str(&b, c->boot);
	lake_b_i64(&b, pid);
	lake_b_i64(&b, start);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	step = sql_step(b.st);
	if (step == SQL_ROW)
		rc = join_note_dir(s, sql_col_text(b.st, 0));
	sql_reset(b.st);
	return rc ? rc : step == SQL_ROW || step == SQL_DONE ? STORE_OK : lake_sql_fail(s, step);
}

/* Text of a result column, copied (the next step reuses it); NULL for NULL, or with *rc STORE_E_NOMEM. */
static char *col_dup(struct sql_stmt *st, int i, int *rc)
{
	const char *v = sql_col_text(st, i);
	char *d = v ? strdup(v) : NULL;

	if (v && !d)
		*rc = STORE_E_NOMEM;
	return d;
}

/* What join_job reads: the job's word on where it came from, and the sbatches that may have submitted it. */
struct join_read {
	char *dir, *host, *name;
	int64_t start;
	size_t n;
	struct join_candidate cand[JOIN_CANDIDATES_MAX];
	int64_t head[JOIN_CANDIDATES_MAX], submitted[JOIN_CANDIDATES_MAX];
	char *step[JOIN_CANDIDATES_MAX], *argv[JOIN_CANDIDATES_MAX], *host_name[JOIN_CANDIDATES_MAX];
};

static void join_read_free(struct join_read *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->step[i]);
		free(r->argv[i]);
		free(r->host_name[i]);
	}
	free(r->dir);
	free(r->host);
	free(r->name);
}

/* The job's row, if it is a job not joined yet (else r->dir stays NULL). */
static int join_read_job(struct store *s, int64_t run_id, struct join_read *r)
{
	struct bind b = lake_bind_start(s, ST_JOIN_JOB);
	int rc, step;

	lake_b_i64(&b, run_id);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	step = sql_step(b.st);
	if (step == SQL_ROW) {
		r->dir = col_dup(b.st, 0, &rc);
		r->host = col_dup(b.st, 1, &rc);
		r->name = col_dup(b.st, 2, &rc);
		r->start = sql_col_i64(b.st, 3);
	}
	sql_reset(b.st);
	return rc ? rc : step == SQL_ROW || step == SQL_DONE ? STORE_OK : lake_sql_fail(s, step);
}

static int join_read_candidates(struct store *s, int64_t run_id, struct join_read *r)
{
	struct bind b = lake_bind_start(s, ST_JOIN_CANDIDATES);
	int rc, step;

	lake_b_str(&b, r->dir);
	lake_b_i64(&b, run_id);
	lake_b_i64(&b, r->start > INT64_MAX - JOIN_SKEW_NS ? INT64_MAX : r->start + JOIN_SKEW_NS);
	lake_b_i64(&b, r->start < INT64_MIN + JOIN_SKEW_NS ? INT64_MIN : r->start - JOIN_SKEW_NS);
	lake_b_i64(&b, JOIN_CANDIDATES_MAX);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	while (!rc && r->n < JOIN_CANDIDATES_MAX && (step = sql_step(b.st)) == SQL_ROW) {
		size_t i = r->n++;

		r->head[i] = sql_col_i64(b.st, 0);
		r->step[i] = col_dup(b.st, 1, &rc); /* the submitting step's id */
		r->submitted[i] = sql_col_i64(b.st, 2);
		r->argv[i] = col_dup(b.st, 3, &rc);
		r->host_name[i] = col_dup(b.st, 4, &rc);
		r->cand[i] = (struct join_candidate){ .host_name = r->host_name[i], .argv_json = r->argv[i],
						      .argv_len = r->argv[i] ? strlen(r->argv[i]) : 0 };
	}
	sql_reset(b.st);
	if (rc || r->n == JOIN_CANDIDATES_MAX)
		return rc;
	return step == SQL_DONE ? STORE_OK : lake_sql_fail(s, step);
}

/* Job run_id and the sbatch that submitted it, if the lake holds both and it is not joined yet. */
static int join_job(struct store *s, int64_t run_id)
{
	struct join_read r = { 0 };
	int rc = join_read_job(s, run_id, &r), pick = -1;
	struct bind b;

	if (!rc && r.dir)
		rc = join_read_candidates(s, run_id, &r);
	if (!rc && r.dir)
		pick = join_pick(r.cand, r.n, r.host, r.name);
	if (pick >= 0) {
		b = lake_bind_start(s, ST_JOIN_SET);
		lake_b_i64(&b, run_id);
		lake_b_i64(&b, r.head[pick]);
		lake_b_str(&b, r.step[pick]);
		lake_b_i64(&b, r.submitted[pick]);
		rc = exec_bound(&b);
	}
	join_read_free(&r);
	return rc;
}

/*
 * After the batch's records: every job it wrote, and every job waiting in a directory where one of its
 * sbatches ran, joined to the run that submitted it when the lake now holds both (either may come first,
 * from any host). A job already joined is left as it is.
 */
static int join_jobs(struct batch_ctx *c)
{
	struct store *s = c->s;
	int rc = STORE_OK;

	if (!s->njoin_runs && !s->njoin_procs && !s->njoin_dirs)
		return STORE_OK;
	rc = bulk_flush(c); /* the batch's processes rows (PostgreSQL) before they are read */
	for (uint32_t i = 0; i < s->njoin_procs && !rc; i++)
		rc = join_proc_dir(c, s->join_procs[i][0], s->join_procs[i][1]);
	for (uint32_t i = 0; i < s->njoin_dirs && !rc; i++)
		rc = join_waiting(s, s->join_dirs[i]);
	for (uint32_t i = 0; i < s->njoin_runs && !rc; i++)
		rc = join_job(s, s->join_runs[i]);
	join_reset(s);
	return rc;
}

/*
 * The report's processes that the lake knows from their kernel records (ST_REPORT_ATTRIB): each takes the
 * run, its step and tool.
 */
static int report_attrib(struct batch_ctx *c, const struct report_head *h, int64_t run_id)
{
	struct store *s = c->s;
	const struct json_node *procs = jget(s, h->report, "processes");
	int64_t objects = 0;
	int rc = STORE_OK;

	for (const struct json_node *e = jcount(procs) ? json_first(&s->jdoc, procs) : NULL; e && !rc;
	     e = json_next(&s->jdoc, e)) {
		int64_t pid, start, lo, hi;
		struct bind b;

		if (e->type != JSON_OBJECT)
			continue;
		if (objects++ == STORE_RUN_ROWS_MAX)
			break;
		if (json_get_i64(jget(s, e, "pid"), &pid) || json_get_i64(jget(s, e, "start_ns"), &start))
			continue;
		lo = start < INT64_MIN + 1000000 ? INT64_MIN : start - 1000000;
		hi = start > INT64_MAX - 1000000 ? INT64_MAX : start + 1000000;
		s->jarena_used = 0;
		b = lake_bind_start(s, ST_REPORT_ATTRIB);
		lake_b_i64(&b, run_id);
		jb_text(&b, s, jget(s, e, "step"));
		jb_text(&b, s, jget(s, e, "tool"));
		lake_b_str(&b, c->host);
		lake_b_str(&b, c->boot);
		lake_b_i64(&b, pid);
		lake_b_i64(&b, lo);
		lake_b_i64(&b, hi);
		rc = exec_bound(&b);
	}
	return rc;
}

static int derive_run_report(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	struct report_head h;
	int64_t run_id = 0;
	bool merge = false, has_report = false;
	struct bind b;
	int rc = report_head(c, payload, f->len, &h);

	if (rc)
		return rc;
	if (!h.report) {
		c->note = "bad_run_report";
		c->res->bad_reports++;
		return STORE_OK;
	}
	if (h.has_key) {
		rc = run_find(c, h.key, &run_id, &has_report);
		merge = rc == STORE_OK;
		if (rc && rc != STORE_E_NOT_FOUND)
			return rc;
	}
	if (merge) {
		rc = report_merge(c, &h, run_id);
	} else {
		b = bind_report_run(c, ST_RUN, &h, 0);
		rc = query_i64(&b, &run_id);
	}
	if (!rc && h.has_key) /* the row holds the report now: later live records of it only attribute */
		known_set(c->s, h.key, run_id, true);
	if (!rc)
		rc = rows_of_array(c, ST_RUN_PROCS, run_id, NULL, NULL);
	if (!rc)
		rc = report_steps(c, run_id);
	if (!rc)
		rc = record_signals(c, ST_REPORT_SIGNAL, run_id);
	if (!rc) /* the processes' rows: dropped ones were counted with the run processes */
		rc = report_attrib(c, &h, run_id);
	if (!rc)
		rc = join_note_run(c->s, jget(c->s, jget(c->s, h.report, "run"), "slurm_submit_dir"), run_id);
	if (!rc)
		rc = join_note_report(c->s, h.report);
	if (!rc)
		c->res->runs++;
	return rc;
}

/* ---- live records ---- */

/* What a live record is: whether it is one, its key, its update_ns. */
struct live_head {
	bool ok; /* a tracer.live.v1 object with a key of 1..STORE_RUN_KEY_MAX bytes, no NUL */
	char key[STORE_RUN_KEY_MAX + 1];
	bool has_update_ns;
	int64_t update_ns;
};

static int live_head(struct batch_ctx *c, const char *json, size_t len, struct live_head *h)
{
	struct store *s = c->s;
	const struct json_node *root;
	int rc = STORE_OK;

	memset(h, 0, sizeof(*h));
	/* The processor never writes more (lake.h); a record that does is not one of its own. */
	if (len > TL_RUN_MAX)
		return STORE_OK;
	root = jdoc_object(s, json, len, &rc);
	if (!root || !jis(s, jget(s, root, "schema"), "tracer.live.v1"))
		return rc;
	h->ok = jkey(s, jget(s, root, "key"), h->key);
	h->has_update_ns = json_get_i64(jget(s, root, "update_ns"), &h->update_ns) == 0;
	return STORE_OK;
}

/*
 * A live record's run row or step (an element of its "steps": json), as lake/schema.c's map of the record to
 * the table says (lake_live_run_insert, _update, lake_live_step_upsert). Into *row_id (if not NULL) what the
 * statement returns.
 */
static int live_write(struct batch_ctx *c, enum stmt_id id, const struct json_node *json, int64_t run_id,
		      int64_t *row_id)
{
	const struct row_src r = { .json = json, .root = json_root(&c->s->jdoc), .run_id = run_id };
	struct bind b;

	c->s->jarena_used = 0;
	b = bind_upsert(c, id, &r);
	return row_id ? query_i64(&b, row_id) : exec_bound(&b);
}

/* First sight of a run: its row, with this record's seq, batch and boot. */
static int live_insert(struct batch_ctx *c, int64_t *run_id)
{
	int rc = live_write(c, ST_LIVE_INSERT, json_root(&c->s->jdoc), 0, run_id);

	if (!rc)
		c->res->runs++;
	return rc;
}

/*
 * The elements of one of a live record's arrays, each a row of an upsert of its elements (lake_upsert.element),
 * gathered to be written by as few statements as they fill: first + k writes 2^k rows (ST_LIVE_STEP_*).
 */
#define ROWS_KEYS 4 /* the most members an element's key has (a process's: pid, start_mono_ns) */
struct rows {
	struct batch_ctx *c;
	enum stmt_id first;
	int64_t run_id;
	const struct json_node *e[1u << LAKE_ROWS_LOG_MAX];
	int64_t idx[1u << LAKE_ROWS_LOG_MAX];                            /* e[i]'s place in its array */
	const struct json_node *key[1u << LAKE_ROWS_LOG_MAX][ROWS_KEYS]; /* e[i]'s key members (rows_key) */
	unsigned n;
	bool count;      /* the statements' changes are read (a statement not queued) */
	int64_t changes; /* then: the rows they wrote */
};

/* Elements off .. off + count of the gathered into statement id, which writes that many rows. */
static int rows_write(struct rows *w, enum stmt_id id, unsigned off, unsigned count)
{
	struct store *s = w->c->s;
	struct bind b;
	int rc;

	s->jarena_used = 0;
	b = lake_bind_start(s, id);
	for (unsigned i = 0; i < count; i++) {
		const struct row_src r = {
			.json = w->e[off + i], .root = json_root(&s->jdoc), .run_id = w->run_id, .index = w->idx[off + i]
		};

		bind_fills(w->c, &b, stmt_upsert[id], &r);
	}
	rc = exec_bound(&b);
	if (!rc && w->count)
		w->changes += sql_changes(s->db);
	return rc;
}

/* Every element gathered, in order: 2^k at a time, the largest k first. */
static int rows_flush(struct rows *w)
{
	unsigned off = 0, k = LAKE_ROWS_LOG_MAX;
	int rc = STORE_OK;

	while (off < w->n && !rc) {
		while ((1u << k) > w->n - off)
			k--;
		rc = rows_write(w, w->first + k, off, 1u << k);
		off += 1u << k;
	}
	w->n = 0;
	return rc;
}

/*
 * An element's key members (the upsert's LM_KEY fills of a member, at most ROWS_KEYS) into k, as the record has
 * them. false when one is missing or not as its rule needs (text: a string; else an integer): the element is
 * not stored. *plain: none has an escape (two keys are then the same exactly when their bytes are).
 */
static bool rows_key(struct store *s, const struct lake_upsert *u, const struct json_node *e,
		     const struct json_node **k, bool *plain)
{
	unsigned n = 0;
	int64_t v;

	*plain = true;
	for (unsigned i = 0; i < u->nfills; i++) {
		const struct lake_source *src = &u->fills[i].src;
		const struct json_node *m;

		if (u->fills[i].merge != LM_KEY || src->from != LF_JSON)
			continue;
		m = jget(s, e, src->json);
		if (n == ROWS_KEYS || !m || (src->rule == LJ_TEXT ? m->type != JSON_STRING : json_get_i64(m, &v) != 0))
			return false;
		*plain &= !memchr(s->jdoc.text + m->start, '\\', m->len);
		k[n++] = m;
	}
	for (; n < ROWS_KEYS; n++)
		k[n] = NULL;
	return true;
}

/* Whether two elements' keys (rows_key's, both plain) are the same. */
static bool rows_same(const struct store *s, const struct json_node *const *a, const struct json_node *const *b)
{
	for (unsigned i = 0; i < ROWS_KEYS && a[i]; i++)
		if (a[i]->len != b[i]->len || memcmp(s->jdoc.text + a[i]->start, s->jdoc.text + b[i]->start, a[i]->len))
			return false;
	return true;
}

/*
 * One more element: written with those gathered when there are 2^LAKE_ROWS_LOG_MAX. An element whose key the
 * record lacks (or has of another type) is not stored. One statement writes a key once (PostgreSQL refuses an
 * upsert that changes a row twice): an element whose key one gathered has, or whose key has an escape (its
 * bytes say nothing then), is written after those gathered, so the later one still wins.
 */
static int rows_add(struct rows *w, const struct json_node *e, int64_t idx)
{
	const struct json_node **k = w->key[w->n];
	bool plain, again = false;
	int rc = STORE_OK;

	if (!rows_key(w->c->s, stmt_upsert[w->first], e, k, &plain))
		return STORE_OK;
	for (unsigned i = 0; i < w->n && !again && plain && k[0]; i++) /* an INSERT's rows have no key */
		again = rows_same(w->c->s, w->key[i], k);
	if (again || !plain) {
		const struct json_node *keep[ROWS_KEYS];

		memcpy(keep, k, sizeof(keep)); /* rows_flush starts the gathering again at 0 */
		rc = rows_flush(w);
		memcpy(w->key[0], keep, sizeof(keep));
	}
	if (rc)
		return rc;
	w->idx[w->n] = idx;
	w->e[w->n++] = e;
	return w->n == (1u << LAKE_ROWS_LOG_MAX) || !plain ? rows_flush(w) : STORE_OK;
}

/*
 * The objects of the array an upsert of elements reads (stmt_upsert[first]: its object's array `element`),
 * each a row at its place in the array, in as few statements as they fill; at most STORE_RUN_ROWS_MAX, the
 * rest counted as dropped. Into *objects (if not NULL) how many were tried; into *changes (if not NULL: first
 * is not queued) how many rows the statements wrote.
 */
static int rows_of_array(struct batch_ctx *c, enum stmt_id first, int64_t run_id, int64_t *objects,
			 int64_t *changes)
{
	struct store *s = c->s;
	const struct json_node *list = upsert_array(s, stmt_upsert[first]);
	struct rows w = { .c = c, .first = first, .run_id = run_id, .count = changes != NULL };
	int64_t idx = 0, n = 0;
	int rc = STORE_OK;

	for (const struct json_node *e = jcount(list) ? json_first(&s->jdoc, list) : NULL; e && !rc;
	     e = json_next(&s->jdoc, e), idx++) {
		if (e->type != JSON_OBJECT)
			continue;
		if (n == STORE_RUN_ROWS_MAX)
			break;
		n++;
		rc = rows_add(&w, e, idx);
	}
	if (!rc)
		rc = rows_flush(&w);
	if (!rc)
		rows_dropped(c, jcount(list), STORE_RUN_ROWS_MAX);
	if (objects)
		*objects = n;
	if (changes)
		*changes = w.changes;
	return rc;
}

/* A run row's header (higher update only), steps, signals and their counts. */
static int live_apply(struct batch_ctx *c, int64_t run_id)
{
	struct store *s = c->s;
	const struct json_node *root = json_root(&s->jdoc);
	struct bind b;
	int rc = live_write(c, ST_LIVE_UPDATE, root, run_id, NULL);

	if (!rc) /* a step's position: lake_live_step_upsert's idx (LF_NEXT_IDX), not its place in the record */
		rc = rows_of_array(c, ST_LIVE_STEP, run_id, NULL, NULL);
	if (!rc)
		rc = record_signals(c, ST_LIVE_SIGNAL, run_id);
	if (rc)
		return rc;
	b = lake_bind_start(s, ST_LIVE_COUNTS);
	lake_b_i64(&b, run_id);
	return exec_bound(&b);
}

/*
 * A live record (TL_RUN): the run's row by its key, its steps, its
 * processes' attribution, its signals. A run whose row holds its tracer
 * run report is final: later live records only attribute processes.
 */
static int derive_live_run(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	struct live_head h;
	int64_t run_id = 0;
	bool has_report = false;
	int rc = live_head(c, payload, f->len, &h);

	if (rc)
		return rc;
	if (!h.ok) {
		c->note = "bad_live_record";
		c->res->bad_live_records++;
		return STORE_OK;
	}
	rc = run_find(c, h.key, &run_id, &has_report);
	if (rc == STORE_E_NOT_FOUND) {
		rc = live_insert(c, &run_id);
		if (!rc)
			known_set(c->s, h.key, run_id, false);
	}
	if (!rc && !has_report)
		rc = live_apply(c, run_id);
	if (!rc) /* the processes it names (objects with integer "pid" and "start_mono_ns"): their rows */
		rc = rows_of_array(c, ST_LIVE_ATTRIB, run_id, NULL, NULL);
	if (!rc)
		rc = join_note_run(c->s, jget(c->s, json_root(&c->s->jdoc), "slurm_submit_dir"), run_id);
	if (!rc)
		rc = join_note_attributed(c->s);
	return rc;
}

/*
 * TL_TOOLS: the tools of processes in no run (objects with integer "pid" and "start_mono_ns"). A record of
 * another shape is noted, as a bad live record.
 */
static int derive_tools(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	struct store *s = c->s;
	const struct json_node *root = NULL, *list = NULL;
	int rc = STORE_OK;

	if (f->len <= TL_RUN_MAX)
		root = jdoc_object(s, payload, f->len, &rc);
	if (rc)
		return rc;
	if (root && jis(s, jget(s, root, "schema"), "tracer.tools.v1"))
		list = jget(s, root, "processes");
	if (!list || list->type != JSON_ARRAY) {
		c->note = "bad_live_record";
		c->res->bad_live_records++;
		return STORE_OK;
	}
	return rows_of_array(c, ST_TOOLS, 0, NULL, NULL);
}

/* A boot id as the records carry one: 32 lower-case hex digits; else NULL. */
static void jb_boot_id(struct bind *b, struct store *s, const struct json_node *n)
{
	char v[40];
	size_t len = 0;

	if (n && n->type == JSON_STRING && json_get_string(&s->jdoc, n, v, sizeof(v), &len) == 0 && len == 32 &&
	    strspn(v, "0123456789abcdef") == 32)
		b_text(b, memcpy(s->jarena + s->jarena_used, v, 33), 32), s->jarena_used += 33;
	else
		b_null(b);
}

/* A JSON record's member as its column's source says (LF_JSON: its path, its rule); NULL if it breaks it. */
static void bind_json(struct store *s, struct bind *b, const struct json_node *root, const struct lake_source *k)
{
	const char *dot = k->json ? strchr(k->json, '.') : NULL;
	const struct json_node *n = root;
	char head[32];
	double v = 0;

	if (!k->json) { /* a rule of the object itself (lake_rule_of_object) */
		if (k->rule == LJ_DURATION)
			jb_duration(b, jget(s, root, "start_ns"), jget(s, root, "end_ns"));
		else if (k->rule == LJ_STEP_STATE)
			jb_step_state(b, s, root);
		else if (k->rule == LJ_OBJECT)
			jb_json(b, s, root, JSON_OBJECT);
		else
			b_null(b);
		return;
	}
	if (dot && (size_t)(dot - k->json) < sizeof(head)) {
		size_t len = (size_t)(dot - k->json);

		if (s->jhead_obj != root || s->jhead_len != len || memcmp(s->jhead_name, k->json, len)) {
			memcpy(head, k->json, len);
			head[len] = 0;
			s->jhead_node = jget(s, root, head);
			s->jhead_obj = root;
			s->jhead_name = k->json;
			s->jhead_len = len;
		}
		n = s->jhead_node;
	}
	n = jget(s, n, dot ? dot + 1 : k->json);
	switch (k->rule) {
	case LJ_TEXT: jb_text(b, s, n); return;
	case LJ_COUNT: jb_count(b, n, INT64_MAX); return;
	case LJ_COUNT32: jb_count(b, n, UINT32_MAX); return;
	case LJ_BOOT_ID: jb_boot_id(b, s, n); return;
	case LJ_INT: jb_int(b, n); return;
	case LJ_BOOL: jb_bool(b, n); return;
	case LJ_STATE: jb_state(b, s, n); return;
	case LJ_ARRAY: jb_array(b, s, n); return;
	case LJ_MILLICORES: jb_millicores(b, s, n); return;
	case LJ_KEY: jb_key(b, s, n); return;
	case LJ_LENGTH: jb_length(b, n); return;
	case LJ_EXIT_STATE: jb_exit_state(b, n); return;
	case LJ_SECONDS:
	case LJ_PRICE:
		if (n && json_get_double(&s->jdoc, n, &v) == 0 && v >= 0 &&
		    v <= (k->rule == LJ_SECONDS ? 1e12 : STORE_PRICE_MAX))
			b_real(b, v);
		else
			b_null(b);
		return;
	default: /* a rule schema.c names and store.c lacks (test_lake_schema_writes) */
		if (b->rc == SQL_OK)
			b->rc = SQL_E;
	}
}

/*
 * TL_HOST: the host's heartbeat, one heartbeats row. A record that is not
 * a tracer.host.v1 object with integer times, start before end, is noted
 * and counted with the bad live records; a member of the wrong type or
 * range in a good one is NULL, by its column's rule in lake/schema.c:
 * counts are whole numbers from 0 (CPUs, runs, steps and processes to
 * 2^32 - 1), the uptime a number from 0 to 1e12 s; the host identity as a
 * live record's, without the uid.
 */
static int derive_host(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	struct store *s = c->s;
	const struct json_node *root = NULL;
	uint64_t start = 0, end = 0;
	int rc = STORE_OK;

	if (f->len <= TL_RUN_MAX)
		root = jdoc_object(s, payload, f->len, &rc);
	if (rc)
		return rc;
	if (!root || !jis(s, jget(s, root, "schema"), row_table(ST_HEARTBEAT)->json_schema) ||
	    json_get_u64(jget(s, root, "start_ns"), &start) || json_get_u64(jget(s, root, "end_ns"), &end) ||
	    start > INT64_MAX || end > INT64_MAX || start >= end) {
		c->note = "bad_host_record";
		c->res->bad_live_records++;
		return STORE_OK;
	}
	s->jarena_used = 0;
	return store_row(c, ST_HEARTBEAT, &(const struct row_src){ .json = root });
}

/* A batch of a boot the host's running runs did not start in: they ended unseen (docs/live.md, "lost"). */
static int mark_lost(struct batch_ctx *c)
{
	static const enum stmt_id order[] = { ST_LOST_STEPS, ST_LOST_RUNS };
	int rc = STORE_OK;

	for (size_t i = 0; !rc && i < sizeof(order) / sizeof(order[0]); i++) {
		struct bind b = lake_bind_start(c->s, order[i]);

		lake_b_str(&b, c->host);
		lake_b_str(&b, c->boot);
		rc = exec_bound(&b);
	}
	return rc;
}

/*
 * ---- which records are new ----
 *
 * The stream's row is locked (stream_max_seq()): no one else stores
 * records of the stream until this batch ends, and none it holds has a seq
 * above max_seq. So a frame above max_seq is new unless this batch had its
 * seq before; for the others (a batch re-formed around stored records, one
 * filling a gap) the crcs the stream holds of their seqs are read first:
 * one range query for a run of them (known_seqs()). Each frame is then
 * looked up in memory: no statement per record, and no unique key needed
 * to say (PostgreSQL's records are partitioned by time: a key there must
 * hold the time too).
 */
enum seq_state {
	SEQ_FREE,
	SEQ_ASKED,  /* the stream may hold it: asked, it does not */
	SEQ_HELD,   /* the stream holds it, with crc */
	SEQ_STORED, /* this batch stored it, with crc */
};

struct seq_slot {
	uint64_t seq;
	uint32_t crc;
	uint8_t state; /* enum seq_state */
};

/*
 * A run of a batch's old seqs is read by one range query while they are at least half of its seqs, give or
 * take this many: the rows read stay within a few times the batch's (a host cannot make one batch read its
 * whole stream), and a re-formed batch or a filled gap takes one query.
 */
#define SEQ_RANGE_SLACK 64

/* seq's slot in the batch's set: its own, or the free one it would take. */
static struct seq_slot *seq_find(struct store *s, uint64_t seq)
{
	size_t mask = s->seqs_cap - 1, i = (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 29) & mask;

	while (s->seqs[i].state != SEQ_FREE && s->seqs[i].seq != seq)
		i = (i + 1) & mask;
	return &s->seqs[i];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Room for a batch of n frames, k of them old: the set at most half full, emptied; the old seqs' list. A set
 * grown for a big batch is given back at a small one.
 */
static int seqs_room(struct store *s, size_t n, size_t k)
{
	size_t cap = 64;

	while (cap < 2 * n)
		cap *= 2;
	if (cap > s->seqs_alloc || (s->seqs_alloc > 16 * cap && s->seqs_alloc > (1u << 16))) {
		struct seq_slot *p = realloc(s->seqs, cap * sizeof(*p));

		if (!p)
			return STORE_E_NOMEM;
		s->seqs = p;
		s->seqs_alloc = cap;
	}
	s->seqs_cap = cap;
	memset(s->seqs, 0, cap * sizeof(*s->seqs));
	if (k > s->old_cap) {
		int64_t *p = realloc(s->old_seqs, k * sizeof(*p));

		if (!p)
			return STORE_E_NOMEM;
		s->old_seqs = p;
		s->old_cap = k;
	}
	return STORE_OK;
}

/* The crcs the stream holds in [lo, hi] (the lake's signed integers) noted in the slots of the seqs asked. */
static int held_seqs(struct batch_ctx *c, int64_t lo, int64_t hi)
{
	struct bind b = lake_bind_start(c->s, ST_RECORD_SEQS);
	int rc;

	lake_b_str(&b, c->host);
	lake_b_i64(&b, c->stream);
	lake_b_i64(&b, lo);
	lake_b_i64(&b, hi);
	rc = lake_bind_check(&b);
	if (rc)
		return rc;
	while ((rc = sql_step(b.st)) == SQL_ROW) {
		struct seq_slot *slot = seq_find(c->s, (uint64_t)sql_col_i64(b.st, 0));

		if (slot->state == SEQ_ASKED) {
			slot->state = SEQ_HELD;
			slot->crc = (uint32_t)sql_col_i64(b.st, 1);
		}
	}
	sql_reset(b.st);
	return rc == SQL_DONE ? STORE_OK : lake_sql_fail(c->s, rc);
}

/*
 * The batch's seqs in the set, before any frame is stored: those at or below the stream's max_seq (it may
 * hold them) with what the stream holds of them, read by runs (SEQ_RANGE_SLACK) in the order of the lake's
 * signed integers. A batch of new records only (the usual) costs no statement.
 */
static int known_seqs(struct batch_ctx *c, const uint8_t *frames, size_t raw_len)
{
	struct store *s = c->s;
	const struct tr_frame *f;
	size_t n = 0, k = 0, off = 0, first = 0;
	int rc;

	while ((f = batch_next_frame(frames, raw_len, &off)) != NULL) {
		n++;
		k += f->seq <= c->max_seq;
	}
	rc = seqs_room(s, n, k);
	if (rc || !k)
		return rc;
	k = 0;
	off = 0;
	while ((f = batch_next_frame(frames, raw_len, &off)) != NULL) {
		struct seq_slot *slot = seq_find(s, f->seq);

		if (f->seq > c->max_seq || slot->state != SEQ_FREE)
			continue;
		*slot = (struct seq_slot){ .seq = f->seq, .state = SEQ_ASKED };
		s->old_seqs[k++] = (int64_t)f->seq;
	}
	qsort(s->old_seqs, k, sizeof(*s->old_seqs), cmp_i64);
	for (size_t i = 1; i <= k && !rc; i++) {
		uint64_t span = i < k ? (uint64_t)s->old_seqs[i] - (uint64_t)s->old_seqs[first] : UINT64_MAX;

		if (span < 2 * (i - first + 1) + SEQ_RANGE_SLACK)
			continue;
		rc = held_seqs(c, s->old_seqs[first], s->old_seqs[i - 1]);
		first = i;
	}
	return rc;
}

/* ---- records ------------------------------------------------------------ */

static bool kernel_type(unsigned t)
{
	return (t >= TR_EXEC && t < TR_KERNEL_TYPES_END) || t == TR_COUNTERS || t == TR_END;
}

/* A lake record (lake.h): its table. */
static int derive_lake(struct batch_ctx *c, const struct tr_frame *f, const void *payload)
{
	switch (f->type) {
	case TL_RUN_REPORT: return derive_run_report(c, f, payload);
	case TL_KEY_ANNOUNCE: return derive_key_announce(c, f, payload);
	case TL_LOSS: return derive_loss(c, f, payload);
	case TL_RUN: return derive_live_run(c, f, payload);
	case TL_TOOLS: return derive_tools(c, f, payload);
	case TL_HOST: return derive_host(c, f, payload);
	default:
		c->note = "unknown_type";
		c->res->unknown++;
		return STORE_OK;
	}
}

/* Seqs missing before this one are a gap; a record inside an older gap fills it by one. */
static int track_gaps(struct batch_ctx *c, uint64_t seq)
{
	struct bind b;
	int rc = STORE_OK;

	if (seq > c->max_seq + 1) {
		b = lake_bind_start(c->s, ST_GAP);
		lake_b_str(&b, c->host);
		lake_b_i64(&b, c->stream);
		b_u64(&b, c->max_seq + 1);
		b_u64(&b, seq - 1);
		b_u64(&b, c->received_ns);
		lake_b_str(&b, c->hash);
		rc = exec_bound(&b);
		c->res->gaps++;
	} else if (seq <= c->max_seq) {
		b = lake_bind_start(c->s, ST_GAP_FILL);
		lake_b_str(&b, c->host);
		lake_b_i64(&b, c->stream);
		b_u64(&b, seq);
		rc = exec_bound(&b);
	}
	if (seq > c->max_seq)
		c->max_seq = seq;
	return rc;
}

/*
 * The record's row, with its note (why nothing was derived from it) and a kernel record's time once the
 * decoder vouched for it. After its derived rows: the note is known then.
 */
static int insert_record(struct batch_ctx *c, const struct tr_frame *f, const void *payload, bool decoded)
{
	const struct row_src r = {
		.rec = f, .tail = payload, .tail_len = f->len, .has_ts = decoded,
		.ts_ns = decoded ? c->s->dec->ts_ns : 0
	};

	if (f->type == TL_RUN_REPORT)
		c->report_unsent = true;
	return store_row(c, ST_RECORD, &r);
}

/*
 * One frame: a seq the stream holds, or this batch stored, is a duplicate
 * (a conflicting one when its crc differs), and nothing is written;
 * otherwise its gaps, its derived rows (kernel records decoded first), then
 * its own row.
 */
static int store_frame(struct batch_ctx *c, const struct tr_frame *f)
{
	const uint8_t *payload = (const uint8_t *)f + TR_FRAME_HDR;
	struct seq_slot *slot = seq_find(c->s, f->seq);
	struct decoded *d = c->s->dec;
	bool decoded = false;
	int rc;

	c->seq = f->seq;
	c->note = NULL;
	if (slot->state == SEQ_HELD || slot->state == SEQ_STORED) {
		c->res->dup_records++;
		if (slot->crc != f->crc)
			c->res->conflicts++;
		return STORE_OK;
	}
	*slot = (struct seq_slot){ .seq = f->seq, .crc = f->crc, .state = SEQ_STORED };
	c->res->new_records++;
	rc = track_gaps(c, f->seq);
	if (rc)
		return rc;
	if (!kernel_type(f->type)) {
		rc = derive_lake(c, f, payload);
	} else if (decode_record(d, f->type, payload, f->len) == 0) {
		decoded = true;
		rc = derive_decoded(c);
	} else {
		c->note = decode_error_name(d->error);
		c->res->undecodable++;
	}
	return rc ? rc : insert_record(c, f, payload, decoded);
}

/* ---- batches ------------------------------------------------------------ */

int store_batch_exists(struct store *s, const uint8_t hash[BATCH_HASH_LEN])
{
	char h[HEX_HASH];
	struct bind b = lake_bind_start(s, ST_BATCH_EXISTS);
	int64_t one = 0;
	int rc;

	hex(h, sizeof(h), hash, BATCH_HASH_LEN);
	lake_b_str(&b, h);
	rc = query_i64(&b, &one);
	if (rc == STORE_E_NOT_FOUND)
		return 0;
	return rc ? rc : 1;
}

/* first: the stream's first batch (or its spool lost the ledger); linked: prev_hash is a stored batch of
 * the stream; broken: it is not (a batch lost, refused, or never sent). */
static int chain_state(struct batch_ctx *c, const char **state)
{
	char prev[HEX_HASH];
	struct bind b;
	int64_t one = 0;
	int rc;

	if (all_zero(c->hdr->prev_hash, BATCH_HASH_LEN)) {
		*state = "first";
		return STORE_OK;
	}
	hex(prev, sizeof(prev), c->hdr->prev_hash, BATCH_HASH_LEN);
	b = lake_bind_start(c->s, ST_CHAIN);
	lake_b_str(&b, prev);
	lake_b_str(&b, c->host);
	lake_b_i64(&b, c->stream);
	rc = query_i64(&b, &one);
	*state = rc == STORE_OK ? "linked" : "broken";
	return rc == STORE_E_NOT_FOUND ? STORE_OK : rc;
}

/* The host and the stream known from now on, and the stream's highest seq so far. */
static int stream_max_seq(struct batch_ctx *c)
{
	struct bind b = lake_bind_start(c->s, ST_HOST_ENSURE);
	int64_t max = 0;
	int rc;

	lake_b_str(&b, c->host);
	b_u64(&b, c->received_ns);
	rc = exec_bound(&b);
	if (rc)
		return rc;
	b = lake_bind_start(c->s, ST_STREAM_LOCK);
	lake_b_str(&b, c->host);
	lake_b_i64(&b, c->stream);
	b_u64(&b, c->received_ns);
	rc = query_i64(&b, &max);
	c->max_seq = (uint64_t)max;
	return rc;
}

static int insert_batch(struct batch_ctx *c, size_t wire_len)
{
	const struct batch_header *h = c->hdr;
	char prev[HEX_HASH];
	const char *chain = NULL;
	struct bind b;
	int rc = chain_state(c, &chain);

	if (rc)
		return rc;
	hex(prev, sizeof(prev), h->prev_hash, BATCH_HASH_LEN);
	b = lake_bind_start(c->s, ST_BATCH_INSERT);
	lake_b_str(&b, c->hash);
	lake_b_str(&b, c->host);
	lake_b_str(&b, c->key);
	lake_b_str(&b, c->boot);
	b_u64(&b, h->batch_seq);
	b_u64(&b, h->first_seq);
	b_u64(&b, h->last_seq);
	b_u64(&b, h->nrecords);
	b_u64(&b, h->compression);
	b_u64(&b, h->body_len);
	b_u64(&b, h->raw_len);
	b_u64(&b, wire_len);
	b_u64(&b, h->created_ns);
	lake_b_i64(&b, h->mono_to_real_ns);
	lake_b_str(&b, prev);
	lake_b_str(&b, chain);
	b_u64(&b, c->received_ns);
	lake_b_i64(&b, c->stream);
	rc = query_i64(&b, &c->batch_id);
	return rc;
}

static int finish_batch(struct batch_ctx *c)
{
	const struct store_result *r = c->res;
	struct bind b = lake_bind_start(c->s, ST_BATCH_COUNTS);
	int rc;

	lake_b_i64(&b, c->batch_id);
	b_u64(&b, r->new_records);
	b_u64(&b, r->dup_records);
	b_u64(&b, r->conflicts);
	b_u64(&b, r->unknown);
	b_u64(&b, r->undecodable);
	b_u64(&b, r->bad_reports);
	b_u64(&b, r->gaps);
	b_u64(&b, r->bad_live_records);
	rc = exec_bound(&b);
	if (rc)
		return rc;
	b = lake_bind_start(c->s, ST_STREAM_UPDATE);
	lake_b_str(&b, c->host);
	lake_b_i64(&b, c->stream);
	b_u64(&b, c->received_ns);
	b_u64(&b, c->max_seq);
	b_u64(&b, r->new_records);
	b_u64(&b, c->hdr->batch_seq);
	lake_b_str(&b, c->hash);
	rc = exec_bound(&b);
	if (rc)
		return rc;
	b = lake_bind_start(c->s, ST_HOST_UPDATE);
	lake_b_str(&b, c->host);
	b_u64(&b, c->received_ns);
	b_u64(&b, r->new_records);
	b_u64(&b, c->hdr->batch_seq);
	lake_b_str(&b, c->hash);
	lake_b_str(&b, c->key);
	lake_b_str(&b, c->boot);
	return exec_bound(&b);
}

/*
 * PostgreSQL: the run keys the batch's live records and run reports name, looked up RUNS_KNOWN_ASK at a time
 * before its records are stored (in the batch's transaction, its stream locked: what it finds stays so but for
 * what the batch itself does, which known_set() follows). SQLite answers in the ingest's own process: none.
 */
static int runs_known(struct batch_ctx *c, const uint8_t *frames, size_t raw_len)
{
	struct store *s = c->s;
	const struct tr_frame *f;
	size_t off = 0;
	int rc = STORE_OK;

	known_reset(s);
	if (!sql_is_pg(s->db))
		return STORE_OK;
	while (!rc && (f = batch_next_frame(frames, raw_len, &off)) != NULL) {
		const char *payload = (const char *)(f + 1);
		struct live_head lh;
		struct report_head rh;

		if (f->type == TL_RUN) {
			rc = live_head(c, payload, f->len, &lh);
			if (!rc && lh.ok)
				known_add(s, lh.key);
		} else if (f->type == TL_RUN_REPORT) {
			rc = report_head(c, payload, f->len, &rh);
			if (!rc && rh.report && rh.has_key)
				known_add(s, rh.key);
		}
	}
	for (uint32_t i = 0; i < s->nknown && !rc; i += RUNS_KNOWN_ASK)
		rc = known_ask(c, i, s->nknown);
	if (rc)
		known_reset(s);
	return rc;
}

static int store_frames(struct batch_ctx *c, const uint8_t *frames, size_t raw_len)
{
	const struct tr_frame *f;
	size_t off = 0;
	int rc = known_seqs(c, frames, raw_len);

	if (!rc)
		rc = runs_known(c, frames, raw_len);
	while (!rc && (f = batch_next_frame(frames, raw_len, &off)) != NULL) {
		c->res->records++;
		rc = store_frame(c, f);
	}
	return rc;
}

int store_batch(struct store *s, const struct batch_header *hdr, const uint8_t hash[BATCH_HASH_LEN],
		const uint8_t *frames, size_t raw_len, size_t wire_len, uint64_t received_ns, struct store_result *res)
{
	struct batch_ctx c = { .s = s, .hdr = hdr, .res = res, .received_ns = received_ns };
	int rc;

	memset(res, 0, sizeof(*res));
	if (s->read_only)
		return STORE_E_READONLY;
	c.stream = (int64_t)hdr->stream;
	hex(c.host, sizeof(c.host), hdr->host_id, sizeof(hdr->host_id));
	hex(c.boot, sizeof(c.boot), hdr->boot_id, sizeof(hdr->boot_id));
	hex(c.key, sizeof(c.key), hdr->key_id, sizeof(hdr->key_id));
	hex(c.hash, sizeof(c.hash), hash, BATCH_HASH_LEN);
	rc = lake_upkeep_due(s, received_ns); /* its own transaction: the partition of the batch's day first */
	if (rc)
		return rc;
	rc = exec_simple(s, ST_BEGIN);
	if (rc)
		return rc;
	/*
	 * The ledger decides, in this transaction: the batch's row goes in unless its hash is there. Another
	 * ingest storing the same batch at this moment (PostgreSQL) holds that key until it ends: this waits,
	 * then finds it stored (a duplicate), or goes on if that one rolled back.
	 */
	rc = insert_batch(&c, wire_len);
	if (rc == STORE_E_NOT_FOUND) {
		res->duplicate = true;
		return exec_simple(s, ST_ROLLBACK);
	}
	if (!rc)
		rc = stream_max_seq(&c);
	if (!rc)
		rc = store_frames(&c, frames, raw_len);
	if (!rc) /* after the frames: a record of this batch may have said "running" about an earlier boot's run */
		rc = mark_lost(&c);
	if (!rc)
		rc = join_jobs(&c);
	if (!rc)
		rc = finish_batch(&c);
	if (!rc)
		rc = bulk_flush(&c);
	if (!rc)
		rc = exec_simple(s, ST_COMMIT);
	join_reset(s);
	if (rc) {
		char keep[sizeof(s->errmsg)];

		sql_bulk_discard(s->db);
		sql_drain(s->db); /* the queued statements' outcomes: the batch failed whatever they say */
		memcpy(keep, s->errmsg, sizeof(keep));
		if (sql_in_transaction(s->db))
			exec_simple(s, ST_ROLLBACK);
		memcpy(s->errmsg, keep, sizeof(keep));
		memset(res, 0, sizeof(*res));
	}
	return rc;
}
