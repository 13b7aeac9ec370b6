/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's status file, STATE_DIR/status.json, schema
 * tracer.status.v1 (docs/status.md has every key): how the ring, the spool
 * and the upload stand. The processor writes it (status_write), once a
 * second and when it stops; `tracer status` reads it (status_parse). One
 * table in status.c says which key holds which figure, for both.
 *
 * The file is one line, a JSON object and '\n', rewritten in place: a
 * reader takes the first line and ignores what follows it (the tail of a
 * longer earlier version, for the moment between the write and the
 * truncate). A line without its '\n' is being written.
 *
 * The reader treats the file as less trusted than itself (the processor
 * runs unprivileged): a strict JSON parse (json_parse.h) of at most
 * STATUS_FILE_MAX bytes, then every key of the schema must be there with
 * its type (but those added to it later, which an older processor's file
 * lacks, and a section whose keys were all added later); keys it does not know are ignored, so a later processor may add
 * some without a new schema.
 */
#ifndef TRACER_STATUS_STATUS_H
#define TRACER_STATUS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "readfile.h"

#define STATUS_SCHEMA "tracer.status.v1"
#define STATUS_FILE "status.json"      /* in state_dir */
#define STATUS_FILE_MAX READ_MAX_STATUS /* bytes of a status file read or written, at most (readfile.h) */
#define STATUS_URL_MAX CONFIG_URL_MAX  /* upload.url and its NUL */
#define STATUS_ERROR_MAX 256u          /* upload.last_error and its NUL */

struct status {
	uint64_t time_ns;                  /* CLOCK_REALTIME when written */
	uint64_t pid;                      /* the processor's */
	struct {
		bool attached;                 /* a collector's ring is mapped */
		uint64_t attaches;             /* rings attached since start */
		uint64_t generation;           /* the ring's (0: none attached) */
		uint64_t records;              /* records decoded since start */
		uint64_t lost;                 /* records the collector could not put in the ring (0: none attached) */
		uint64_t released_pos;         /* ring position released: everything before it is durable */
	} ring;
	struct {
		uint64_t next_seq, durable_seq, acked_seq;
		uint64_t segments, bytes_on_disk;
		uint64_t records_appended, fsyncs;
		uint64_t records_skipped_after_restart;
		uint64_t evicted_records, evicted_bytes;
		uint64_t corrupt_frames, torn_bytes, ledger_resets;
		uint64_t quarantined_batches, quarantined_records;
		uint64_t recovery_ns;
	} spool;
	struct {
		bool enabled;                  /* upload_url is set */
		char url[STATUS_URL_MAX];      /* upload_url: one URL or several */
		char url_in_use[STATUS_URL_MAX]; /* the one batches go to */
		uint64_t batches_acked, records_acked, bytes_sent;
		uint64_t attempts, retries, http_4xx, http_5xx, net_errors;
		uint64_t failovers;            /* batches sent on to another URL after a failure */
		char failed_url[STATUS_URL_MAX]; /* the last URL that failed (empty: none since start) */
		uint64_t last_http_status;     /* 0: none yet, or a network error */
		char last_error[STATUS_ERROR_MAX]; /* empty: none */
		uint64_t pending_records;      /* durable, not yet acknowledged */
	} upload;
	struct {
		uint64_t beats;                /* host heartbeats (TL_HOST) put in the spool since start */
	} heartbeat;
};

enum status_error {
	STATUS_OK = 0,
	STATUS_E_INCOMPLETE, /* no end of line: empty, or being written */
	STATUS_E_JSON,       /* the line is not JSON (a damaged file, or a read that raced the writer) */
	STATUS_E_SCHEMA,     /* not an object, no "schema", or a schema other than STATUS_SCHEMA */
	STATUS_E_MISSING,    /* a key of the schema is not there */
	STATUS_E_TYPE,       /* a key of the schema holds a value of another type */
	STATUS_E_VALUE,      /* ... of its type, but one it cannot hold (too large, too long, a NUL) */
};

const char *status_error_name(enum status_error e);

/*
 * The file's text into buf (cap bytes): one line, '\n' included, no NUL
 * after it; its length in *len. 0, or -ENOSPC (it does not fit).
 */
int status_format(const struct status *s, char *buf, size_t cap, size_t *len);

/* Rewrite the whole file open on fd: at offset 0, then truncated to the new length. 0 or -errno. */
int status_write(int fd, const struct status *s);

/*
 * A status file's text (len bytes, need not be NUL-terminated) into *s,
 * which is written only on success. On error, err says what is wrong,
 * naming the key ("spool.acked_seq") when one is at fault.
 */
enum status_error status_parse(const char *text, size_t len, struct status *s, char *err, size_t errlen);

/*
 * A string of the file as it is written in it, without its quotes (JSON's
 * escapes: \" \\ \u001b), cut to fit out: no byte of it can control a
 * terminal. For `tracer status`, which shows them so.
 */
void status_shown(const char *s, char *out, size_t cap);

#endif /* TRACER_STATUS_STATUS_H */
