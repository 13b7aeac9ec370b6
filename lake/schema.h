/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's tables and columns, defined once (schema.c's table), with the
 * schema version that added each: the DDL of a new lake and every upgrade
 * from an older one are built from it, so that a column added once is in
 * both or in neither. docs/lake.md describes every table and column.
 * Private to lake/.
 */
#ifndef TRACER_LAKE_SCHEMA_H
#define TRACER_LAKE_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"

/* The lake's schema version: what schema.c's table describes (docs/lake.md, "Versions"). */
#define LAKE_SCHEMA_VERSION 13

enum lake_type {
	LK_INT,  /* a 64-bit integer */
	LK_TEXT, /* UTF-8 text (a host's, so any bytes: SQLite keeps them) */
	LK_REAL, /* a double */
	LK_BLOB, /* bytes */
	LK_ID,   /* the table's own row id: an integer the lake assigns, its primary key */
};

enum {
	LK_NOT_NULL = 1u << 0,
	LK_KEY = 1u << 1,    /* the primary key on its own (a text key: hosts, keys) */
	LK_UNIQUE = 1u << 2, /* unique on its own */
};

/*
 * Where a column of a table that one record fills a row of (lake_table.record_size) takes its value from:
 * store.c binds each such row from this table, and tests/test_lake_schema_writes.c checks that every byte
 * of the record is a column's or skipped with a reason. Other tables' columns are LF_NONE: store.c's own
 * statements write them.
 */
enum lake_from {
	LF_NONE = 0,
	LF_HOST,     /* the batch's host id, hex */
	LF_STREAM,   /* the batch's stream */
	LF_SEQ,      /* the record's seq in its stream */
	LF_RECEIVED, /* when the ingest received the batch, ns since the epoch */
	LF_BOOT,     /* the batch's boot id, hex */
	LF_UINT,     /* the record's unsigned integer at off, len bytes (2, 4 or 8); NULL in records of a version
		      * below rec_version (they lack it) */
	LF_CHARS,    /* the record's char array at off, len bytes, up to its first NUL */
	LF_DERIVED,  /* made by store.c from the record's bytes at off, len: enum lake_derived */
	LF_ONE,      /* 1: a record counted (with LM_ADD, how many such records the row has had) */
	LF_HASH,     /* the batch's hash, hex */
	LF_NOTE,     /* why the lake derived nothing from the record (NULL: it did) */
	LF_TS,       /* a kernel record's time, once the decoder vouched for it (NULL otherwise) */
	LF_JSON,     /* a member of a JSON record's object (json: "name", or "object.name"), under rule */
	LF_ROOT_JSON, /* the same of the record's root, for a row made of an element of one of its arrays */
	LF_RUN,      /* the id of the run the record is about (runs.run_id), found by its key */
	LF_NEXT_IDX, /* the row's position among its run's: after the others (bound as the run's id) */
	LF_INDEX,    /* the element's position in its array, from 0 */
	LF_CONST,    /* a text the statement's rows all have: json */
};

/* What a JSON member must be to be stored (LF_JSON); anything else is stored as NULL. */
enum lake_json_rule {
	LJ_TEXT = 0, /* a string (made UTF-8 as every host's text) */
	LJ_COUNT,    /* an integer from 0 to 2^63 - 1 */
	LJ_COUNT32,  /* an integer from 0 to 2^32 - 1 */
	LJ_SECONDS,  /* a number from 0 to 1e12 */
	LJ_PRICE,    /* a number from 0 to STORE_PRICE_MAX (lake/store.h) */
	LJ_BOOT_ID,  /* 32 lower-case hex digits */
	LJ_INT,      /* an integer in int64's range */
	LJ_BOOL,     /* true or false, stored 1 or 0 */
	LJ_STATE,    /* a run's or step's state: running, succeeded, failed or lost (docs/live.md) */
	LJ_ARRAY,    /* an array, stored as its JSON text */
	LJ_MILLICORES, /* CPUs, a number from 0 to 1e6, stored in thousandths rounded half away from zero */
	LJ_DURATION, /* the object's end_ns - start_ns, both integers, when it fits (json: NULL) */
	LJ_KEY,      /* a run's key: a string of 1 to STORE_RUN_KEY_MAX bytes (lake/store.h), no NUL */
	LJ_LENGTH,   /* an array's number of elements; 0 for a member of another type */
	LJ_EXIT_STATE, /* a run's state from its exit code: succeeded (0), failed (another), lost (none) */
	LJ_STEP_STATE, /* a reported step's state: running (its "running" above 0), else failed or succeeded as its
			* boolean "failed" says; NULL without either (json: NULL) */
	LJ_OBJECT,   /* an object, stored as its JSON text (json: NULL, the object itself) */
};

/* Whether rule r reads the object itself (lake_source.json NULL), not one of its members. */
static inline bool lake_rule_of_object(uint8_t r)
{
	return r == LJ_DURATION || r == LJ_STEP_STATE || r == LJ_OBJECT;
}

enum lake_derived {
	LD_NONE = 0,
	LD_RECLAIM,         /* a reclaim_ns: NULL where the record's flags (flags_off) hold TR_EXIT_NO_RECLAIM */
	LD_PATH,            /* the path that follows the record (a struct tr_file's, tr_cgroup's: its path_len) */
	LD_FILE_MODE,       /* a struct tr_file's mode as "r", "w" or "rw" */
	LD_BIT,             /* 1 if the 32-bit field holds a bit of mask, else 0 */
	LD_SUM,             /* the sum of the 64-bit counters at off, len bytes */
	LD_COUNTS_JSON,     /* the 64-bit counters at off, len bytes as a JSON array */
	LD_LOSS_REASON,     /* a struct tl_loss's reason as its name (docs/lake.md, losses) */
	LD_REAL,            /* a CLOCK_MONOTONIC time as ns since the epoch, by the batch's clock offset */
	LD_EXIT_STATUS,     /* a raw exit code's status; NULL when a signal ended the process */
	LD_EXIT_SIGNAL,     /* a raw exit code's signal; 0: none */
	LD_EXIT_CORE,       /* 1 if a raw exit code says a core was dumped */
	LD_IMAGE_PEAK,      /* an image's peak: NULL where the record's flags (flags_off) hold TR_EXIT_NO_IMAGE_PEAK */
	LD_NONZERO,         /* an unsigned integer, NULL where 0 (unknown) */
	LD_EXEC_PATH,       /* a struct tr_exec's path: its path_len bytes after the record */
	LD_EXEC_ARGV,       /* a struct tr_exec's argv, a JSON array of strings */
	LD_EXEC_CWD,        /* a struct tr_exec's cwd; NULL when unknown (cwd_len 0) */
	LD_EXEC_ENV,        /* a struct tr_exec's allowlisted environment, a JSON array of strings */
	LD_PAYLOAD,         /* a frame's payload: its len bytes after the frame, as they came */
};

/* Where one column's value comes from when a record fills it (enum lake_from). */
struct lake_source {
	uint8_t from;        /* enum lake_from */
	uint8_t derived;     /* LF_DERIVED: enum lake_derived */
	uint8_t rec_version; /* LF_UINT: the record version that added the field; 0: every version has it */
	uint16_t off, len;   /* the record's bytes it holds or is made of */
	uint16_t flags_off;  /* LD_RECLAIM, LD_IMAGE_PEAK: the record's 32-bit flags */
	uint32_t mask;       /* LD_BIT */
	const char *json;    /* LF_JSON: the member's path */
	uint8_t rule;        /* LF_JSON: enum lake_json_rule */
};

/* Bytes of a record no column holds, and why (lake_table.skip). */
struct lake_skip {
	uint16_t off, len;
	const char *why;
};

struct lake_column {
	const char *name;
	uint8_t type;      /* enum lake_type */
	uint8_t flags;     /* LK_NOT_NULL, LK_KEY, LK_UNIQUE */
	uint8_t since;     /* the schema version that added it */
	uint8_t until;     /* the version that removed it; 0: none did */
	const char *dflt;  /* its DEFAULT, as SQL; NULL: none */
	const char *check; /* a CHECK on it, as SQL; NULL: none */
	/* PostgreSQL: from this version on, its values are compressed with lz4 (on a server built without it, by
	 * the default, pglz); 0: by the default. SQLite does not compress. */
	uint8_t lz4;
	struct lake_source src; /* a row a record fills (lake_table.record_size): where it comes from */
};

/* Whether a record's row statement (lake_row_sql) writes the column: every column of this version. */
static inline bool lake_row_column(const struct lake_column *k)
{
	return !k->until;
}

struct lake_index {
	const char *name;
	const char *columns; /* "a, b" */
	bool unique;
	uint8_t since;
	uint8_t until;     /* the version that removed it; 0: none did */
	const char *where; /* a partial index's condition; NULL: every row */
};

struct lake_table {
	const char *name;
	uint8_t since;
	const struct lake_column *cols;
	unsigned ncols;
	const char *key;    /* PRIMARY KEY (...) of several columns; NULL: none, or a column's own */
	const char *unique; /* a UNIQUE (...) of several columns; NULL: none */
	bool without_rowid; /* SQLite: a table clustered on its key */
	uint8_t rebuilt;    /* the last version that changed its key: its upgrade copies the table into a new one */
	const char *was;    /* its key (or unique) before that version */
	const struct lake_index *idx;
	unsigned nidx;
	/* PostgreSQL: from this version on, partitioned by day on received_ns (LAKE_PARTITION_COLUMN), its key
	 * then ending with that column; 0: never. SQLite keeps one table. */
	uint8_t partitioned;
	/* A table one record fills a row of: the record's size (its struct's), and its bytes no column holds.
	 * Its columns each say where they come from (lake_column.src); its INSERT is lake_row_sql's. 0: not. */
	uint16_t record_size;
	const struct lake_skip *skip;
	unsigned nskip;
	/* A table one JSON record fills a row of: the record's "schema" (tracer.host.v1); its columns come from
	 * the batch and from the object's members (LF_JSON); its INSERT is lake_row_sql's. NULL: not. */
	const char *json_schema;
};

/* The column a time-partitioned table is partitioned on: when the ingest received the row's batch. */
#define LAKE_PARTITION_COLUMN "received_ns"
/* A partition holds one UTC day: <table>_pYYYYMMDD, [day, day + 1) in ns since the epoch. */
#define LAKE_PARTITION_NS 86400000000000LL

extern const struct lake_table lake_tables[];
extern const unsigned lake_ntables;

/* The table of that name, or NULL. */
const struct lake_table *lake_table(const char *name);

/*
 * Into o, the SQL that brings a lake of schema version `from` (0: an empty database) to version `to`
 * (LAKE_SCHEMA_VERSION; an older one only for tests, which make old lakes with it), for SQLite: tables,
 * columns, the upgrades' own updates of old rows, indexes, the version's row. Run in one transaction. 0, or
 * -EINVAL for versions this build cannot upgrade (from below 0, to below from or above LAKE_SCHEMA_VERSION).
 */
int lake_schema_sqlite(int from, int to, struct obuf *o);

/*
 * A table that one record fills a row of (record_size or json_schema): `INSERT INTO t (column, ...) VALUES
 * (?, ...)` over its columns of this version (lake_row_column), in the table's order, which is the order
 * store.c binds them in. Built once; NULL for another table.
 */
const char *lake_row_sql(const struct lake_table *t);

/* How an upsert's column takes a record's value when the row is there already. */
enum lake_merge {
	LM_NEW = 0, /* the record's: c = excluded.c */
	LM_KEEP,    /* the row's, if it has one: c = coalesce(t.c, excluded.c) */
	LM_KEY,     /* a column of the conflict's key */
	LM_ADD,     /* the row's plus the record's: c = t.c + excluded.c */
	LM_GIVEN,   /* the record's where it has one, else the row's: c = coalesce(excluded.c, t.c) */
	LM_INSERT,  /* written when the row is made, never changed after */
	LM_WHERE,   /* an UPDATE's: the row it changes is the one with this value (not written) */
	LM_NEWER,   /* the record's, and only a record with a higher value than the row's changes the row */
};

/* The statement a struct lake_upsert makes (lake_upsert_sql). */
enum lake_write {
	LW_UPSERT = 0, /* INSERT ... ON CONFLICT (its LM_KEY columns) DO UPDATE SET ... */
	LW_INSERT,     /* INSERT of every fill but LM_WHERE's */
	LW_UPDATE,     /* UPDATE ... SET ... WHERE (its LM_WHERE and LM_NEWER fills): every fill but LM_INSERT's */
	LW_INSERT_NEW, /* LW_INSERT's, storing nothing where a unique key of the table is taken (ON CONFLICT DO
			* NOTHING) */
};

/* A member of a JSON record's object that no column holds, and why (struct lake_upsert.jskip). */
struct lake_member_skip {
	const char *member; /* "name", or "object.name" */
	const char *why;
};

/* A column an upsert of a record fills (struct lake_upsert). */
struct lake_fill {
	const char *column;
	struct lake_source src;
	uint8_t merge; /* enum lake_merge */
};

/*
 * An upsert of one record into a table that several records fill parts of (processes: exec, fork, exit): the
 * columns it fills and how, and, as lake_table's, the record's size and its bytes no column holds. Or, for a
 * JSON record (a live run, a step of one), the members of its object no fill holds and why; and which
 * statement it is (enum lake_write), with what it returns.
 */
struct lake_upsert {
	const char *table;
	const struct lake_fill *fills;
	unsigned nfills;
	uint16_t record_size;
	const struct lake_skip *skip;
	unsigned nskip;
	uint8_t write;             /* enum lake_write */
	const char *returning;     /* a column the statement returns (RETURNING), or NULL */
	const char *json_schema;   /* a JSON record's "schema" whose object (or array element) it is made of */
	const char *object;        /* that object: the root's member of this name; NULL: the root */
	const char *element;       /* the elements of that object's array of this name; NULL: the object */
	const struct lake_member_skip *jskip;
	unsigned njskip;
};

/* Whether the upsert's statement binds fill f (an INSERT binds no LM_WHERE, LW_UPDATE no LM_INSERT). */
static inline bool lake_fill_bound(const struct lake_upsert *u, const struct lake_fill *f)
{
	bool insert = u->write == LW_INSERT || u->write == LW_INSERT_NEW;

	return !(insert && f->merge == LM_WHERE) && !(u->write == LW_UPDATE && f->merge == LM_INSERT);
}

/* A process's exec (struct tr_exec), fork (struct tr_fork) and exit (struct tr_exit) into processes. */
extern const struct lake_upsert lake_exec_upsert, lake_fork_upsert, lake_exit_upsert;
/* A cgroup's path (struct tr_cgroup) into cgroups. */
extern const struct lake_upsert lake_cgroup_upsert;
/* A live record (tracer.live.v1): its run's row made, or changed by a newer record; each of its steps. */
extern const struct lake_upsert lake_live_run_insert, lake_live_run_update, lake_live_step_upsert;
/* A live record's attribution of a process; a TL_TOOLS record's process in no run. */
extern const struct lake_upsert lake_live_attrib_upsert, lake_tools_upsert;
/*
 * A run report (TL_RUN_REPORT, {"report": tracer.run.v1, "summary": text}): its run's row made, or taken over
 * (a run streamed live, or reported before); each of its steps, processes and signals; a live record's signal.
 */
extern const struct lake_upsert lake_report_run_insert, lake_report_run_update, lake_report_step_insert,
	lake_report_proc_insert, lake_report_signal_insert, lake_live_signal_insert;
/* Every upsert above. */
extern const struct lake_upsert *const lake_upserts[];
extern const unsigned lake_nupserts;

/*
 * Its statement: `INSERT INTO t (column, ...) VALUES (?1, ...) ON CONFLICT (key) DO UPDATE SET ...`, a plain
 * INSERT, or an `UPDATE t SET c = ?1, ... WHERE ...` (enum lake_write), over the fills it binds
 * (lake_fill_bound) numbered in order, which is the order store.c binds them in. Built once; NULL if it could
 * not be.
 */
const char *lake_upsert_sql(const struct lake_upsert *u);

/* The most rows one statement of an upsert of an array's elements writes: 2^LAKE_ROWS_LOG_MAX. */
#define LAKE_ROWS_LOG_MAX 5
/*
 * An upsert of an array's elements (element set; not LW_UPDATE) in one statement of `rows` rows, 1, 2, 4, ... up to
 * 2^LAKE_ROWS_LOG_MAX, each row's fills numbered after the row before's. NULL for other counts, other upserts,
 * or if it could not be made. rows 1: lake_upsert_sql's.
 */
const char *lake_upsert_rows_sql(const struct lake_upsert *u, unsigned rows);

/* ---- reads ---- */

/* The type of TL_RUN_REPORT, for SQL. */
#define TL_RUN_REPORT_SQL "64"
/* The run's row holds a tracer run report: its record is a TL_RUN_REPORT (a report merged into a live row
 * takes over the row's record). An expression over a runs row. */
/*
 * A step's run when that run is a cluster job joined to another (docs/live.md, "Cluster jobs"): the job's
 * id, host and queue wait (its start less its sbatch's, never below 0), as expressions of the steps row.
 */
#define STEP_JOB(col) "(SELECT " col " FROM runs j WHERE j.run_id = steps.run_id AND j.joined_run_id IS NOT NULL)"
#define STEP_JOB_ID STEP_JOB("j.slurm_job_id")
#define STEP_JOB_HOST STEP_JOB("j.host_name")
#define STEP_JOB_SUBMITTED STEP_JOB("j.submitted_ns")
#define STEP_JOB_QUEUED                                                                                  \
	STEP_JOB("CASE WHEN j.start_ns > j.submitted_ns AND j.start_ns - j.submitted_ns < 9200000000000000000 " \
		 "THEN j.start_ns - j.submitted_ns ELSE 0 END")
/* How many cluster jobs are joined to a run (a runs row). */
#define RUN_JOBS "(SELECT count(*) FROM runs j WHERE j.joined_run_id = runs.run_id)"
#define RUN_HAS_JOBS "EXISTS (SELECT 1 FROM runs j WHERE j.joined_run_id = runs.run_id)"
/*
 * A run's total with its joined jobs' (their sum in doubles, the result at most 9.2e18): the column as it is
 * for a run without jobs, NULL while the run's own is.
 */
#define RUN_WITH_JOBS(c)                                                                                 \
	"CASE WHEN " c " IS NULL OR NOT " RUN_HAS_JOBS " THEN " c " ELSE CAST(CASE WHEN " c " + (SELECT "       \
	"coalesce(sum(CAST(j." c " AS DOUBLE PRECISION)), 0) FROM runs j WHERE j.joined_run_id = runs.run_id) " \
	">= 9.2e18 THEN 9.2e18 ELSE " c " + (SELECT coalesce(sum(CAST(j." c " AS DOUBLE PRECISION)), 0) FROM "  \
	"runs j WHERE j.joined_run_id = runs.run_id) END AS BIGINT) END"
/* Its steps as read (ST_RUN_STEPS_LIST): its own but those whose sbatch submitted a joined job, and the jobs'. */
#define RUN_STEPS_WITH_JOBS                                                                              \
	"CASE WHEN steps IS NULL OR NOT " RUN_HAS_JOBS " THEN steps ELSE (SELECT count(*) FROM steps s WHERE " \
	"(s.run_id = runs.run_id AND NOT EXISTS (SELECT 1 FROM runs j WHERE j.joined_run_id = runs.run_id AND " \
	"j.joined_step_id = s.step_id)) OR s.run_id IN (SELECT j.run_id FROM runs j WHERE j.joined_run_id = " \
	"runs.run_id)) END"

#define RUN_HAS_REPORT                                                                                   \
	"CASE WHEN EXISTS (SELECT 1 FROM records r WHERE r.host_id = runs.host_id AND "                     \
	"r.stream = runs.stream AND r.seq = runs.seq AND r.type = " TL_RUN_REPORT_SQL ") THEN 1 ELSE 0 END"

/* What a read makes of a column, into a member of a reader's C struct (struct lake_select_field). */
enum lake_select_kind {
	LS_I64 = 0, /* int64_t */
	LS_INT,     /* struct store_int: known when the column is an integer */
	LS_TEXT,    /* const char *: the column's text, NULL when NULL (it lives until the row is left) */
	LS_CHARS,   /* char[len]: the text copied, "" when NULL */
	LS_FLAG,    /* bool: the integer is not 0 */
	LS_REAL,    /* double; at off2 a bool, whether the column is a number */
	LS_JOINED,  /* const char *: a JSON array's values joined by sep (lake_json_join); at off2 the array's
		     * text if it is valid JSON, else NULL */
	LS_JSON,    /* const char *: the column's JSON text if it is valid JSON (lake_json_valid), else NULL */
};

/* One column a read selects, and where it goes. */
struct lake_select_field {
	const char *column; /* a column of the table, or an SQL expression over its row (expr) */
	bool expr;
	const char *of;     /* an expression's: the column of the table it is made of, if one */
	uint8_t kind;       /* enum lake_select_kind */
	uint16_t off, off2, len;
	const char *sep;    /* LS_JOINED */
};

/*
 * A read of a table's rows into a C struct (lake/store.h's struct store_run, store_step): the columns it
 * selects, in order, each into its member; and the table's columns it does not read, and why. Its SELECT is
 * lake_select_sql's; read.c fills the struct from it (lake_select_row).
 */
struct lake_select {
	const char *table;
	const char *alias; /* the table's name in the statement (its columns then written alias.column); NULL: none */
	const struct lake_select_field *fields;
	unsigned nfields;
	const struct lake_member_skip *skip; /* member: a column's name */
	unsigned nskip;
};

/*
 * A run's row (store_run: ST_RUNS_LIST, ST_RUN_BY_*); a step's (store_step: ST_RUN_STEPS_LIST); a run's
 * process (store_process: ST_RUN_PROCS_LIST, the table as "p", its cgroups joined as c2 and c1).
 */
extern const struct lake_select lake_run_select, lake_step_select, lake_process_select;

/* `SELECT column, ... FROM table [alias]` and then tail (" WHERE ..."), built into o. 0, or o's error. */
int lake_select_sql(const struct lake_select *sel, const char *tail, struct obuf *o);

/* The first schema version a PostgreSQL lake can have: none was made before version 8. */
#define LAKE_SCHEMA_PG_FIRST 8

/*
 * The same for PostgreSQL (15): into o, the SQL that brings a lake of version `from` (0: an empty database) to
 * version `to`; run in one transaction. Text only: lake/ links no PostgreSQL library for it. PostgreSQL lakes
 * start at version 8 (LAKE_SCHEMA_PG_FIRST): 0, or -EINVAL, o unchanged, for from in 1..7 or below 0, to
 * below 8, below from or above LAKE_SCHEMA_VERSION, or an upgrade across a version whose updates of old rows
 * exist for SQLite only. Types: BIGINT, TEXT, DOUBLE PRECISION, BYTEA, an id BIGINT GENERATED BY DEFAULT AS
 * IDENTITY; constraints named <table>_pkey, <table>_unique, <table>_<column>_key and _check (docs/lake.md).
 */
int lake_schema_pg(int from, int to, struct obuf *o);

#endif /* TRACER_LAKE_SCHEMA_H */
