/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the SQLite lake, shared by its two halves: store.c (opening, the
 * schema, every statement's SQL, storing batches) and read.c (the read
 * calls of store.h). Not an interface: other stages see store.h only.
 */
#ifndef TRACER_LAKE_DB_H
#define TRACER_LAKE_DB_H

#include <stdbool.h>
#include <stdint.h>

#include "sql.h"

#include "decode.h"
#include "json.h"
#include "json_parse.h"
#include "store.h"

/* Every statement, prepared once on first use; their SQL is store.c's stmt_sql[]. */
enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_BATCH_EXISTS,
	ST_CHAIN,
	ST_HOST_ENSURE,
	ST_STREAM_LOCK,
	ST_HOST_UPDATE,
	ST_STREAM_UPDATE,
	ST_BATCH_INSERT,
	ST_BATCH_COUNTS,
	ST_RECORD,
	ST_RECORD_SEQS,
	ST_GAP,
	ST_GAP_FILL,
	ST_EXEC,
	ST_FORK,
	ST_EXIT,
	ST_EXIT_SIGNAL,
	ST_OOM_MARK,
	ST_OOM_SIGNAL,
	ST_SAMPLE,
	ST_FILE,
	ST_CGROUP,
	ST_COUNTERS,
	ST_LOSS,
	ST_KEY_GET,
	ST_KEY_ROTATION,
	ST_KEY_FILE,
	ST_RUN,
	ST_RUN_MERGE,
	ST_RUN_FIND,
	ST_RUN_FIND_MANY,
	ST_RUN_CLEAR_STEPS,
	ST_RUN_CLEAR_PROCS,
	ST_RUN_CLEAR_SIGNALS,
	ST_STEPS, /* then the same of 2, 4, ... 2^LAKE_ROWS_LOG_MAX steps (lake_upsert_rows_sql) */
	ST_STEPS_2,
	ST_STEPS_4,
	ST_STEPS_8,
	ST_STEPS_16,
	ST_STEPS_32,
	ST_RUN_PROCS, /* the same */
	ST_RUN_PROCS_2,
	ST_RUN_PROCS_4,
	ST_RUN_PROCS_8,
	ST_RUN_PROCS_16,
	ST_RUN_PROCS_32,
	ST_REPORT_SIGNAL,
	ST_LIVE_SIGNAL,
	ST_REPORT_ATTRIB,
	ST_LIVE_INSERT,
	ST_LIVE_UPDATE,
	ST_LIVE_STEP, /* then the same of 2, 4, ... 2^LAKE_ROWS_LOG_MAX steps (lake_upsert_rows_sql) */
	ST_LIVE_STEP_2,
	ST_LIVE_STEP_4,
	ST_LIVE_STEP_8,
	ST_LIVE_STEP_16,
	ST_LIVE_STEP_32,
	ST_LIVE_ATTRIB, /* the same: 1, 2, 4, ... rows */
	ST_LIVE_ATTRIB_2,
	ST_LIVE_ATTRIB_4,
	ST_LIVE_ATTRIB_8,
	ST_LIVE_ATTRIB_16,
	ST_LIVE_ATTRIB_32,
	ST_TOOLS, /* the same */
	ST_TOOLS_2,
	ST_TOOLS_4,
	ST_TOOLS_8,
	ST_TOOLS_16,
	ST_TOOLS_32,
	ST_HEARTBEAT,
	ST_LIVE_SIGNAL_SEEN,
	ST_LIVE_COUNTS,
	ST_LOST_STEPS,
	ST_LOST_RUNS,
	ST_JOIN_JOB,
	ST_JOIN_CANDIDATES,
	ST_JOIN_SET,
	ST_JOIN_SBATCH_CWD,
	ST_JOIN_WAITING,
	ST_RUNS_LIST,
	ST_RUN_BY_ID,
	ST_RUN_BY_KEY,
	ST_RUN_BY_NAME,
	ST_RUN_STEPS_LIST,
	ST_RUN_PROCS_LIST,
	ST_PROC_FILES_LIST,
	ST_RUN_SIGNALS_LIST,
	ST_RUN_REPORT_JSON,
	ST_COUNT,
};

struct store {
	struct sql *db;
	bool read_only;
	struct sql_stmt *st[ST_COUNT];
	char errmsg[256];
	struct decoded *dec;     /* the decoder's private copy of one record */
	struct obuf argv_json;   /* an exec's argv as a JSON array (reused) */
	struct obuf env_json;    /* its environment strings */
	struct obuf drops_json;  /* a counters record's arrays */
	uint32_t tune_newest;    /* store_tune_begin: the newest runs of each pipeline the walks see (0: all) */
	/* A live record parsed in C (records/json_parse.h): its nodes, and room for its strings decoded. */
	struct json_doc jdoc;
	struct json_node *jnodes;
	uint32_t jcap;
	char *jarena;            /* strings decoded for one statement's binds (not copied: sql.h, until its step) */
	/* The object member bind_json looked up last for a dotted path ("live" of "live.rss_bytes"): the
	 * next columns name the same one. jhead_obj NULL: none (each document parsed forgets it). */
	const struct json_node *jhead_obj, *jhead_node;
	const char *jhead_name; /* the path it was looked up for (schema.c's, static) and its head's length */
	size_t jhead_len;
	size_t jarena_cap, jarena_used;
	char **fixed;            /* texts made UTF-8 for the statement being bound (b_text()) */
	size_t nfixed, capfixed;
	/* the upkeep (maintain.c): retention, 0 for ever; when it is due again; the partitions made up to */
	uint64_t retention_ns, runs_retention_ns;
	uint64_t upkeep_next_ns, parts_until_ns;
	int64_t retained_day;    /* the day (since the epoch) retention last ran; INT64_MIN: not yet */
	struct store_upkeep upkeep;
	/* The batch being stored: its seqs, those the lake holds and those it stored (store.c, seq_find()). */
	struct seq_slot *seqs;   /* open addressing: seqs_cap slots (a power of two) of seqs_alloc */
	size_t seqs_cap, seqs_alloc;
	int64_t *old_seqs;       /* its seqs its stream may hold already, sorted */
	size_t old_cap;
	/* PostgreSQL: the runs the batch's run records name, looked up before its records (store.c, runs_known()) */
	struct run_known *known; /* known_cap entries, nknown used */
	uint32_t *known_slot;    /* open addressing: 2 * known_cap slots, entry index + 1 (0: empty) */
	uint32_t nknown, known_cap;
	uint64_t known_seed;     /* the slots' hash (common/hash.h), random: a host cannot choose keys that collide */
	/* The batch's cluster jobs and sbatches, joined once its records are in (store.c, join_jobs()). */
	int64_t *join_runs;      /* runs with a SLURM submit directory that its records wrote */
	uint32_t njoin_runs, join_runs_cap;
	int64_t (*join_procs)[2]; /* sbatches its live records attributed: pid, start (its boot's monotonic ns) */
	uint32_t njoin_procs, join_procs_cap;
	char **join_dirs;        /* directories sbatches its run reports attributed ran in */
	uint32_t njoin_dirs, join_dirs_cap;
};

/* Before a batch received at now_ns: store_maintain() when due (maintain.c). */
int lake_upkeep_due(struct store *s, uint64_t now_ns);

struct bind {
	struct store *s;
	struct sql_stmt *st;
	int n;  /* parameters bound */
	int rc; /* SQLite's first failure */
};

/*
 * a - b and a + b of a host's integers in the reads' SQL, NULL when the result would be past int64's range
 * (give or take 2^53: checked in doubles): SQLite would make a REAL of it, PostgreSQL fail the statement.
 * NULL on both, as col_int() took SQLite's REAL: unknown.
 */
#define SQL_SUB(a, b) "(CASE WHEN abs(CAST(" a " AS DOUBLE PRECISION) - (" b ")) < 9.2e18 THEN " a " - (" b ") END)"
#define SQL_ADD(a, b) "(CASE WHEN abs(CAST(" a " AS DOUBLE PRECISION) + (" b ")) < 9.2e18 THEN " a " + (" b ") END)"

/*
 * The newest sample of the process p (by ts_ns, then stream, then seq: a tie, which two streams could make,
 * settled by the key): NEWEST_SAMPLE_OF_P as a subquery's condition, or joined as ls where `when` holds (SQL,
 * or TRUE). SQLite finds its key with one seek in samples_by_process, then the row by the table's key.
 * PostgreSQL cannot use a correlated subquery as an index condition (it would read every sample of the
 * host and run the subquery on each): there a LATERAL subquery, one backward probe of samples_by_process
 * (in each day partition) a process. docs/lake.md, "Indexes and the queries they serve".
 */
#define NEWEST_SAMPLE_OF_P                                                                                     \
	"s.host_id = p.host_id AND s.boot_id = p.boot_id AND s.tgid = p.tgid AND s.start_ns = p.start_ns ORDER BY " \
	"s.ts_ns DESC, s.stream DESC, s.seq DESC LIMIT 1"
#define NEWEST_SAMPLE_JOIN_SQLITE(when)                                                                        \
	"LEFT JOIN samples ls ON ls.host_id = p.host_id AND " when " AND (ls.stream, ls.seq) = (SELECT s.stream, " \
	"s.seq FROM samples s INDEXED BY samples_by_process WHERE " NEWEST_SAMPLE_OF_P ")"
#define NEWEST_SAMPLE_JOIN_PG(when) "LEFT JOIN LATERAL (SELECT s.* FROM samples s WHERE " NEWEST_SAMPLE_OF_P ") ls ON " when

/* A reading statement's text, and PostgreSQL's where it differs (else NULL). */
struct lake_read {
	const char *sql, *pg;
};

/* r's text for db's engine. */
const char *lake_read_text(const struct lake_read *r, const struct sql *db);

/* A statement's SQL (stmt_sql[]), NULL for no such statement: for tests, which run each on both engines. */
const char *lake_stmt_sql(enum stmt_id id);
/* The statements of read_tune.c, read_sweep.c and read_web.c, each list ending with { NULL }: the same. */
extern const struct lake_read lake_tune_sql[], lake_sweep_sql[], lake_web_sql[];

/* Map SQLite's result to a store_err, keeping its message in s->errmsg. */
int lake_sql_fail(struct store *s, int rc);

/*
 * One walk over a statement's rows, for every read on either engine: each row of st (prepared and bound) to
 * visit(st, arg) until it returns non-zero; *rows (when not NULL) counts the rows handed over. Returns the
 * visitor's non-zero value (the walk stopped: on PostgreSQL a streamed statement's run is cancelled when it is
 * finalized), a store_err when a step failed (its message in s->errmsg), else STORE_OK. st is left as it is:
 * the caller resets (a persistent statement) or finalizes it.
 */
typedef int (*lake_row_fn)(struct sql_stmt *st, void *arg);
/*
 * sql prepared for one use (streamed: row by row, sql_prepare_streamed; else sql_prepare, not persistent) into
 * *out: STORE_OK, or a store_err (*out NULL).
 */
int lake_prepare(struct store *s, const char *sql, bool streamed, struct sql_stmt **out);
int lake_rows_of(struct store *s, struct sql_stmt *st, lake_row_fn visit, void *arg, int *rows);
/* sql prepared by lake_prepare, ?1 .. ?nbinds bound to the integers binds[], its rows walked by lake_rows_of, finalized. */
int lake_rows(struct store *s, const char *sql, bool streamed, const int64_t *binds, int nbinds, lake_row_fn visit,
	      void *arg);

/* Bind a statement's parameters in order; the first failure is kept and reported by lake_bind_check(). */
struct bind lake_bind_start(struct store *s, enum stmt_id id);
void lake_b_i64(struct bind *b, int64_t v);
void lake_b_str(struct bind *b, const char *t); /* NULL binds NULL */
/* STORE_OK when every parameter was bound, else the error (the bindings cleared). */
int lake_bind_check(struct bind *b);

struct lake_json;
struct lake_select;
/*
 * read.c's row of a read made from lake/schema.c's map (sel), its columns from first on, into dst (a struct
 * store_run, store_step, ...); 0, or STORE_E_NOMEM when a JSON array cannot be joined. A process's
 * (lake_process_select) with what the report makes of its peak and I/O: lake_process_row. For read_export.c.
 */
int lake_select_row(struct sql_stmt *st, int first, struct lake_json *js, const struct lake_select *sel, void *dst,
		    size_t size);
void lake_process_row(struct sql_stmt *st, int first, struct lake_json *js, struct store_process *p);

/* The reads' cursor over a row: its columns taken in order (read_tune.c, read_sweep.c). */
struct col {
	struct sql_stmt *st;
	int i;
};

static inline const char *col_text(struct col *c)
{
	return sql_col_text(c->st, c->i++);
}

static inline int64_t col_i64(struct col *c)
{
	return sql_col_i64(c->st, c->i++);
}

/* An integer, or unknown: NULL, or a value of another type (a host's, or a REAL from an overflowed sum). */
static inline struct store_int col_int(struct col *c)
{
	struct store_int v = { .known = sql_col_type(c->st, c->i) == SQL_INTEGER };

	v.v = v.known ? sql_col_i64(c->st, c->i) : 0;
	c->i++;
	return v;
}

#endif /* TRACER_LAKE_DB_H */
