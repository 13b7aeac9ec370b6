/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Delivery: what the processor's loop does with every ring record in
 * daemon mode. It spools the lake's copy of the record (lakeout: execs
 * redacted) and remembers which ring position the spooled records reach,
 * so that the ring is released only up to records that are durable; the
 * uploader sends durable records to the ingest.
 *
 * What this guarantees (docs/spool.md): a record that reached the ring is,
 * after any crash of the processor, either in the spool or still in the
 * ring; each spool frame carries the ring position of its record, so a
 * restarted processor skips what the spool already has. Nothing is
 * spooled twice, nothing released is lost.
 */
#ifndef TRACER_DELIVERY_DELIVER_H
#define TRACER_DELIVERY_DELIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "batch.h"
#include "decode.h"
#include "redact.h"
#include "spool.h"
#include "upload.h"

struct deliver_options {
	struct spool_config spool;       /* .dir set by the caller */
	bool upload;                     /* false: spool only */
	struct upload_config up;
	const char *key_path;            /* signing key (read before the sandbox) */
	const char *next_key_path;       /* key rotation: the next key, or NULL/empty */
	struct batch_identity id;
	uint64_t seed;
};

struct deliver_stats {
	uint64_t records_spooled;        /* kernel and processor records appended since start */
	uint64_t records_skipped;        /* ring records the spool already had (after a restart) */
	uint64_t args_redacted;
	uint64_t append_waits;           /* appends that had to wait for a write buffer */
	uint64_t released_pos;           /* ring position released (durable) */
};

struct deliver;

int deliver_open(struct deliver **out, const struct deliver_options *o);
/* Everything appended made durable (and, with upload, nothing more sent). */
void deliver_close(struct deliver *d);

/*
 * Where the spool's last kernel record came from: ring generation (low 32
 * bits) and position. A consumer attached to that generation skips records
 * before *pos. false when the spool has none.
 */
bool deliver_resume_point(const struct deliver *d, uint32_t *gen, uint64_t *pos);

/*
 * A ring record the decoder accepted, at ring position pos of generation
 * gen (its header's position). 0 or -errno (the spool failed: fatal).
 */
int deliver_kernel_record(struct deliver *d, const struct redact_rules *r, const struct decoded *dec, uint32_t len,
			  uint32_t gen, uint64_t pos);

/* A record of the processor's own (include/lake.h). */
int deliver_own_record(struct deliver *d, uint16_t type, const void *payload, uint32_t len);

/* Every record before ring position pos has been delivered or skipped. */
void deliver_mark(struct deliver *d, uint64_t pos);

/* The ring position up to which records are durable: safe to release. */
uint64_t deliver_release_pos(const struct deliver *d);

/* Progress: spool writes and fsyncs, uploads. now_ns: CLOCK_MONOTONIC. 0 or -errno (fatal). */
int deliver_poll(struct deliver *d, uint64_t now_ns);

/* Make everything appended durable now, and releasable. 0 or -errno (fatal). */
int deliver_sync(struct deliver *d);

/*
 * Upload everything durable now, for at most timeout_ns: 0 when the lake
 * has it all, 1 when time ran out, -1 when the spool failed.
 */
int deliver_drain(struct deliver *d, uint64_t timeout_ns);

/* Something to wait on besides the ring: a transfer under way. */
bool deliver_busy(const struct deliver *d);
void deliver_wait(struct deliver *d, int timeout_ms);

void deliver_get_stats(const struct deliver *d, struct deliver_stats *st, struct spool_stats *ss,
		       struct upload_stats *us);

#endif /* TRACER_DELIVERY_DELIVER_H */
