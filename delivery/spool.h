/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor's durable spool: lake records appended with io_uring to
 * segment files (include/spool_format.h), fsynced in groups, read back in
 * batches for upload, deleted once the lake has acknowledged them.
 *
 * One thread uses a spool (the processor's loop); nothing here blocks for
 * long except spool_open (recovery) and spool_sync.
 *
 *   spool_open        recover what is on disk (torn tails, corrupt frames,
 *                     missing ledger), ready to append after the last good seq
 *   spool_append      copy a record into the current write buffer: a seq
 *   spool_poll        submit full buffers, fsync when the group-commit
 *                     interval is due, reap completions, rotate segments by
 *                     size and age, enforce the quota
 *   spool_durable_seq every record <= this is on disk and fsynced
 *   spool_read        frames after a seq, as stored, for a batch
 *   spool_ack         the lake has everything <= seq: ledger first, then
 *                     delete whole segments
 */
#ifndef TRACER_DELIVERY_SPOOL_H
#define TRACER_DELIVERY_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool_format.h"

#define SPOOL_WRITE_BUFFERS 4
#define SPOOL_WRITE_BUFFER_BYTES (1u << 20)

struct spool_config {
	const char *dir;             /* STATE_DIR/spool: created (0700) if missing; its parent must exist */
	uint8_t host_id[16];         /* written into segment headers */
	/* 0: tracer.conf's default (segment_size, segment_age, fsync_interval, spool_quota) */
	uint64_t segment_bytes;      /* rotate at this size */
	uint64_t segment_age_ns;     /* ... or age */
	uint64_t fsync_interval_ns;  /* group commit interval (at most 1 s) */
	uint64_t quota_bytes;        /* all segments together; oldest unacked evicted beyond it */
};

/* What recovery found and what has happened since; cumulative where the ledger keeps it. */
struct spool_stats {
	uint64_t next_seq;           /* seq the next append gets */
	uint64_t durable_seq;
	uint64_t acked_seq;
	uint64_t segments;           /* on disk now */
	uint64_t bytes_on_disk;
	uint64_t records_appended;   /* since open */
	uint64_t bytes_appended;     /* frame bytes, since open */
	uint64_t fsyncs;             /* since open */
	uint64_t writes;             /* io_uring write operations, since open */
	uint64_t append_busy;        /* appends refused with -EAGAIN (every buffer in flight), since open */
	uint64_t quarantine_not_kept; /* refused batches acked and counted but not kept: quarantine/ full */
	/* recovery, at open */
	uint64_t recovered_segments;
	uint64_t recovered_records;  /* good frames found, acked or not */
	uint64_t recovered_unacked;  /* of which not yet acked: they will be sent */
	uint64_t recovery_ns;        /* time spool_open took */
	uint64_t corrupt_segments;   /* set aside as .corrupt (bad or truncated header) */
	bool ledger_missing;         /* no valid ledger at open */
	/* cumulative (kept in the ledger) */
	struct spool_ledger ledger;
};

/* Frames read back for a batch: buf holds them exactly as in the segment. */
struct spool_span {
	uint64_t first_seq;          /* first frame returned (> from_seq when records were evicted) */
	uint64_t last_seq;
	uint32_t nrecords;
	size_t bytes;                /* of buf used */
};

struct spool; /* opaque: spool.c */

/* 0, or -errno with a message on stderr naming the path and what to do. */
int spool_open(struct spool **out, const struct spool_config *c);
void spool_close(struct spool *s); /* waits for writes in flight, fsyncs; NULL is fine */

/*
 * Append one record (src_gen, src_pos: where it came from, include/frame.h;
 * 0, 0 for the processor's own). Returns 0 and its seq, -EAGAIN when every write
 * buffer is in flight (call spool_poll, then retry: the caller stops
 * draining its source meanwhile), -EMSGSIZE for len > TR_FRAME_MAX_PAYLOAD.
 */
int spool_append(struct spool *s, uint16_t type, uint16_t flags, uint32_t src_gen, uint64_t src_pos,
		 const void *payload, uint32_t len, uint64_t *seq);

/*
 * The source (frame src_gen, src_pos) of the newest record that has one
 * (a kernel record), looking back from the last record at most
 * SPOOL_SOURCE_LOOKBACK records. 1 and the source, 0 when none, -errno.
 */
#define SPOOL_SOURCE_LOOKBACK 65536u
int spool_last_source(struct spool *s, uint32_t *src_gen, uint64_t *src_pos);

/* Progress without blocking: see above. now_ns: CLOCK_MONOTONIC. 0 or -errno (I/O error: fatal). */
int spool_poll(struct spool *s, uint64_t now_ns);

/* Submit everything, fsync and wait for it: every appended record is durable on return. */
int spool_sync(struct spool *s);

/* An fd that becomes readable when io_uring completions are waiting (for poll()). */
int spool_event_fd(const struct spool *s);

uint64_t spool_durable_seq(const struct spool *s);

/*
 * Durable frames with seq > from_seq, at most max_records of them and
 * their bytes at most bufsize (at least one frame if there is one and it
 * fits). Returns 1 with *span filled, 0 when there is nothing durable
 * after from_seq, -ENOBUFS when the next frame alone is larger than
 * bufsize, -errno on I/O error. Frames are checked (crc, seq) as read.
 */
int spool_read(struct spool *s, uint64_t from_seq, uint32_t max_records, void *buf, size_t bufsize,
	       struct spool_span *span);

/*
 * The lake has every record <= upto_seq (from batch number batch_seq,
 * whose hash is hash). The ledger is made durable, then segments holding
 * only acked records are deleted.
 */
int spool_ack(struct spool *s, uint64_t upto_seq, uint64_t batch_seq, const uint8_t hash[32]);

/*
 * The ingest refused a batch for good: keep its bytes in
 * spool/quarantine/<batch_seq>-<first>-<last>.batch, count it, and ack
 * its records so that they no longer hold up the rest.
 */
int spool_quarantine(struct spool *s, const void *batch, size_t len, uint64_t batch_seq, uint64_t first_seq,
		     uint64_t last_seq, uint32_t nrecords);

void spool_get_stats(const struct spool *s, struct spool_stats *st);

/* The spool's stream id (include/spool_format.h): what its batches carry. */
uint64_t spool_stream(const struct spool *s);

#endif /* TRACER_DELIVERY_SPOOL_H */
