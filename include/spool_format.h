/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's spool on disk: the one definition of its bytes.
 *
 * STATE_DIR/spool/
 *   0000000000000001.seg   segments, named by the first record seq they hold (16 hex digits)
 *   000000000004a2c1.seg
 *   ledger                 what the lake has acknowledged; replaced atomically
 *   ledger.tmp             a ledger being written (ignored and removed by recovery)
 *   stream                 the spool's stream id: 16 hex digits and a newline, written once
 *   quarantine/            batches the ingest refused for good (4xx), kept for a human
 *
 * A segment:
 *   +---------------------------+----------+----------+-----+
 *   | struct spool_seg_header   | frame    | frame    | ... |   frames: include/frame.h
 *   +---------------------------+----------+----------+-----+
 * Frames are appended in seq order, seq strictly +1 from the header's
 * first_seq. A segment is never modified except by appending; a crash can
 * leave a torn tail (a partial frame, or a frame whose crc does not match
 * at the end), which recovery truncates. A bad frame with good frames after
 * it is corrupt: recovery counts it and resynchronises on the next header
 * whose crc matches and whose seq follows.
 *
 * The ledger: struct spool_ledger, written as ledger.tmp, fsync, rename to
 * ledger, fsync of the directory. Segments whose every record is acked are
 * deleted only after the ledger that says so is durable. A missing or bad
 * ledger means acked_seq = 0: everything still on disk is sent again, and
 * the ingest drops what it already has (it keys records by host, stream and
 * seq).
 *
 * The stream id names this spool's seqs in the lake (include/batch_format.h):
 * random (1..2^63-1) for a new spool, kept in the file stream and in the
 * ledger, so that either alone brings it back. A spool of before (a ledger
 * without one, no file) keeps stream 0, the stream of its batches of before.
 */
#ifndef TRACER_SPOOL_FORMAT_H
#define TRACER_SPOOL_FORMAT_H

#include <stdint.h>

#include "frame.h"

#define SPOOL_SEG_MAGIC "TRSPSEG1"    /* 8 bytes, no NUL */
#define SPOOL_LEDGER_MAGIC "TRSPLDG1" /* 8 bytes, no NUL */
#define SPOOL_FORMAT_VERSION 1

struct spool_seg_header {
	uint8_t magic[8];       /* SPOOL_SEG_MAGIC */
	uint32_t version;       /* SPOOL_FORMAT_VERSION */
	uint32_t header_len;    /* sizeof(struct spool_seg_header) */
	uint64_t first_seq;     /* seq of the first frame (the file's name) */
	uint64_t created_ns;    /* CLOCK_REALTIME */
	uint8_t host_id[16];
	uint32_t rsvd;          /* 0 */
	uint32_t crc;           /* zlib crc32 of the bytes before it */
};

struct spool_ledger {
	uint8_t magic[8];               /* SPOOL_LEDGER_MAGIC */
	uint32_t version;               /* SPOOL_FORMAT_VERSION */
	uint32_t len;                   /* sizeof(struct spool_ledger) */
	uint64_t acked_seq;             /* every record <= this is in the lake (or evicted/quarantined, counted) */
	uint64_t batch_seq;             /* number of the last batch the lake acknowledged (0: none) */
	uint8_t prev_hash[32];          /* its hash: the next batch's prev_hash */
	/* Cumulative counters, so that `tracer status` can show them across restarts. */
	uint64_t evicted_records;       /* dropped unsent because the quota was reached */
	uint64_t evicted_bytes;
	uint64_t corrupt_frames;        /* found by recovery and skipped */
	uint64_t torn_bytes;            /* truncated from segment tails by recovery */
	uint64_t quarantined_batches;   /* refused for good by the ingest (4xx) */
	uint64_t quarantined_records;
	uint64_t ledger_resets;         /* times recovery found no valid ledger */
	uint64_t stream;                /* the spool's stream id (also the file stream); 0 in a ledger of before */
	uint64_t rsvd[3];               /* 0 */
	uint32_t pad;                   /* 0 */
	uint32_t crc;                   /* zlib crc32 of the bytes before it */
};

_Static_assert(sizeof(struct spool_seg_header) == 56, "segment header layout");
_Static_assert(sizeof(struct spool_ledger) == 160, "ledger layout");

#endif /* TRACER_SPOOL_FORMAT_H */
