/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validating and decoding one kernel record (include/records.h) taken from
 * the shared-memory ring. The ring is shared memory written by another
 * process: the payload is copied once into the decoder's own buffer, and
 * every check and every field read afterwards uses that copy only, so the
 * bytes cannot change between the check and the use.
 *
 * Rules (docs/processor.md lists them all): the record must carry exactly
 * its type's size (tr_exec: sizeof + path_len + argv_len, exactly), its
 * header must repeat the ring type and RECORDS_VERSION, an exec path must
 * be NUL-terminated at path_len - 1 and no earlier, argv_len at most
 * TR_ARGV_MAX and argv_true_len, and pids must be plausible. Anything else
 * is refused with a reason; the caller counts it and skips the record.
 */
#ifndef TRACER_RECORDS_DECODE_H
#define TRACER_RECORDS_DECODE_H

#include <stdint.h>

#include "records.h"

/* Largest valid payload: an exec record with every variable part full. */
#define DECODE_MAX_LEN (sizeof(struct tr_exec) + TR_PATH_MAX + TR_ARGV_MAX + TR_CWD_MAX + TR_ENV_MAX)

/* pid_max can never exceed this (PID_MAX_LIMIT on 64-bit kernels). */
#define DECODE_PID_LIMIT (4u * 1024 * 1024)

enum decode_error {
	DECODE_OK = 0,
	DECODE_ERR_TYPE,     /* not a record type this processor decodes */
	DECODE_ERR_LENGTH,   /* wrong size for its type, or exec lengths that do not add up */
	DECODE_ERR_HDR_TYPE, /* header type differs from the ring record type */
	DECODE_ERR_VERSION,  /* not RECORDS_VERSION */
	DECODE_ERR_PATH,     /* exec path empty, too long, or not NUL-terminated exactly at its end */
	DECODE_ERR_ARGV,     /* argv_len above TR_ARGV_MAX or above argv_true_len */
	DECODE_ERR_PID,      /* a pid of 0 or above DECODE_PID_LIMIT */
	DECODE_ERR_CWD,      /* exec cwd too long, not absolute or not NUL-terminated exactly at its end */
	DECODE_ERR_ENV,      /* exec environment strings too long, not NUL-terminated, or not KEY=VALUE */
	DECODE_ERR_CGROUP,   /* cgroup path empty, too long, not absolute or not NUL-terminated at its end */
	DECODE_ERR_FILE,     /* file path or mode invalid */
	DECODE_ERR_COUNT,
};

/* An exec record: the fixed part, then views into the decoder's private copy. */
struct decoded_exec {
	struct tr_exec rec;
	const char *path;  /* NUL-terminated */
	uint32_t path_len; /* strlen(path) */
	const char *argv;  /* argv_len bytes of NUL-separated strings, followed by a NUL */
	uint32_t argv_len;
	const char *cwd;   /* NUL-terminated, "" when unknown */
	uint32_t cwd_len;  /* strlen(cwd) */
	const char *env;   /* env_len bytes of NUL-terminated KEY=VALUE strings */
	uint32_t env_len;
	char comm[TR_COMM_LEN + 1];
};

/* A cgroup or file record: the fixed part and its path (NUL-terminated, in the private copy). */
struct decoded_cgroup {
	struct tr_cgroup rec;
	const char *path;
	uint32_t path_len; /* strlen(path) */
};

struct decoded_file {
	struct tr_file rec;
	const char *path;
	uint32_t path_len; /* strlen(path) */
};

struct decoded {
	unsigned type;              /* enum tr_type, valid when decode_record returned 0 */
	enum decode_error error;    /* why the last record was refused */
	uint64_t ts_ns;
	union {
		struct decoded_exec exec;
		struct tr_fork fork;
		struct tr_exit exit;
		struct tr_oom oom;
		struct decoded_cgroup cgroup;
		struct tr_sample sample;
		struct decoded_file file;
		struct tr_counters counters;
		struct tr_end end;
	} u;
	/* The private copy of the payload, plus a NUL after it. */
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN + 1];
	/* An exec's argument area with a NUL after it (in buf, cwd follows it). */
	char argv_copy[TR_ARGV_MAX + 1];
};

/*
 * Decode the record of ring type `type` with `len` payload bytes at
 * `payload` (untrusted, possibly shared memory: read once). Returns 0, or
 * a negative errno with d->error saying why: -EPROTONOSUPPORT (type),
 * -EPROTO (version), -EBADMSG (anything else).
 */
int decode_record(struct decoded *d, unsigned type, const void *payload, uint32_t len);

/* Short name of an error, for logs and the report ("length", "version", ...). */
const char *decode_error_name(enum decode_error e);

/* Wait status helpers: the raw exit_code of struct tr_exit. */
static inline unsigned decode_exit_signal(uint32_t raw)
{
	return raw & 0x7f;
}

static inline int decode_exit_core(uint32_t raw)
{
	return (raw & 0x80) != 0;
}

static inline unsigned decode_exit_status(uint32_t raw)
{
	return (raw >> 8) & 0xff;
}

#endif /* TRACER_RECORDS_DECODE_H */
