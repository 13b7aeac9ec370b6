/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake: where verified batches are stored. The only module that
 * speaks SQL; the HTTP side and the CLI see these functions only, so a
 * server database can take SQLite's place behind the same calls.
 *
 * One batch is one transaction: its row in batches, each of its records
 * that the lake does not hold yet (records are keyed by host and seq, so
 * a batch sent again, or re-formed with other boundaries, adds nothing
 * twice), the gaps in the host's seqs, and the rows derived from the
 * records (processes, samples, files, cgroups, signals, agent counters,
 * losses, runs, steps, run processes, keys). Either all of it is stored
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

#define STORE_SCHEMA_VERSION 2
#define STORE_BUSY_TIMEOUT_MS 5000  /* wait this long for another writer (a sqlite3 shell) before giving up */
#define STORE_RUN_ROWS_MAX 100000   /* processes, steps or signals materialised from one run report, each */
#define STORE_ARGV_JSON_MAX (64u << 10) /* bytes of an exec's argv or env as JSON (an argument area is 4 KiB) */

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
 * Open (create if missing, with the schema) the lake at path; ":memory:"
 * for a private in-memory lake. read_only: never create or write (the
 * CLI). On error, err says what failed and what to do.
 */
int store_open(struct store **out, const char *path, bool read_only, char *err, size_t errlen);
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
	uint32_t runs;           /* runs materialised */
	uint32_t keys_enrolled;  /* new keys announced (TL_KEY_ANNOUNCE) */
	uint32_t keys_refused;   /* announcements refused: id not the key's, or the id taken by another key or host */
	uint32_t run_rows_dropped; /* processes, steps or signals of a run beyond STORE_RUN_ROWS_MAX */
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

struct store_run {
	int64_t run_id;
	char host_id[2 * BATCH_HOST_ID_LEN + 1];
	bool has_start, has_end, has_exit;
	int64_t start_ns, end_ns; /* CLOCK_REALTIME */
	int64_t exit_code;
	const char *command;      /* the command, words joined by spaces ("" if unknown) */
	const char *summary;      /* the text tracer run printed (NULL if the report had none) */
};

struct store_signal {
	const char *kind;         /* oom_kill, killed, failed, stalled, io_wait, net_wait, ... */
	bool has_pid;
	int64_t pid;
	const char *step, *tool;  /* NULL if none */
	const char *detail;       /* the signal as the report gave it (JSON) */
};

/* Called once per row; a non-zero return stops the walk and is returned. Strings live until it returns. */
typedef int (*store_run_fn)(void *ctx, const struct store_run *r);
typedef int (*store_signal_fn)(void *ctx, const struct store_signal *sig);

/* Every run, oldest first. */
int store_runs(struct store *s, store_run_fn fn, void *ctx);
/* The run named by its number, or by the pipeline's run id (report.run.run_id). STORE_E_NOT_FOUND if none. */
int store_run(struct store *s, const char *name, store_run_fn fn, void *ctx);
/* A run's signals, in report order. */
int store_run_signals(struct store *s, int64_t run_id, store_signal_fn fn, void *ctx);

#endif /* TRACER_LAKE_STORE_H */
