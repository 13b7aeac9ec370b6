/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lake records: what the processor spools and sends besides the kernel's
 * own records. A frame (frame.h) of type 16..33 carries a kernel record
 * (records.h) exactly as the processor validated it, with its argument
 * area redacted (TR_FRAME_REDACTED); the types below are the processor's.
 */
#ifndef TRACER_LAKE_H
#define TRACER_LAKE_H

#include <stdint.h>

#include "batch_format.h"

enum tl_type {
	/*
	 * A finished run: a UTF-8 JSON object
	 *   { "report": <tracer.run.v1 report>, "summary": "<the text tracer run printed>" }
	 * The ingest fills its runs, steps, processes and signals tables from it.
	 */
	TL_RUN_REPORT = 64,
	/* struct tl_key_announce: from the next batch on, this host signs with another key. */
	TL_KEY_ANNOUNCE = 65,
	/* struct tl_loss: records that will never be sent, and why. */
	TL_LOSS = 66,
	/*
	 * A run found in daemon mode, as it stands now: a UTF-8 JSON object of
	 * schema "tracer.live.v1" (docs/live.md), at most TL_RUN_MAX bytes. Its
	 * steps, processes and signals are what changed since the run's
	 * previous TL_RUN; the ingest upserts its runs, steps, processes and
	 * signals rows.
	 */
	TL_RUN = 67,
	/*
	 * The tools of processes in no run (daemon mode): a UTF-8 JSON object
	 * {"schema": "tracer.tools.v1", "processes": [{"pid", "start_mono_ns",
	 * "tool"}]}, at most TL_RUN_MAX bytes; each process once, again after
	 * an exec. The ingest sets processes.tool (docs/live.md).
	 */
	TL_TOOLS = 68,
	/*
	 * The host heartbeat (daemon mode, issue 17): every heartbeat_interval,
	 * even when nothing runs, a UTF-8 JSON object of schema
	 * "tracer.host.v1", at most TL_RUN_MAX bytes: what the host did over
	 * [start_ns, end_ns) (CLOCK_REALTIME; start: the previous beat's end, or
	 * the processor's first reading): its CPUs' busy and idle time, memory
	 * at the end, network bytes (every interface but lo), the runs, steps
	 * and processes active at the end, and the "host" object TL_RUN
	 * carries. The ingest stores one heartbeats row (docs/lake.md).
	 */
	TL_HOST = 69,
	TL_TYPES_END = 70,
};

/*
 * Key rotation. The old key signs the batch that carries this record; once
 * the ingest has stored that batch it accepts new_key_id for the same host.
 */
#define TL_RUN_MAX (1u << 20)

struct tl_key_announce {
	uint8_t new_key_id[BATCH_KEY_ID_LEN];
	uint8_t new_public_key[BATCH_PUBKEY_LEN];
	uint64_t announced_ns; /* CLOCK_REALTIME */
};

enum tl_loss_reason {
	TL_LOSS_EVICTED = 1,     /* the spool's byte quota was reached: the oldest unsent records went */
	TL_LOSS_QUARANTINED = 2, /* the ingest refused their batch for good (4xx): kept in spool/quarantine/ */
	TL_LOSS_CORRUPT = 3,     /* spool recovery found them unreadable */
	TL_LOSS_RING = 4,        /* lost before the processor saw them (kernel buffer or ring full) */
};

struct tl_loss {
	uint32_t reason;       /* enum tl_loss_reason */
	uint32_t rsvd;         /* 0 */
	uint64_t first_seq;    /* the seqs gone; 0, 0 when they had none (ring) or the processor sends counts only
				* (evicted, quarantined: the lake sees the seqs as a gap). Corrupt frames found by
				* recovery are counted in the spool's ledger and tracer status, not sent yet. */
	uint64_t last_seq;
	uint64_t records;
	uint64_t bytes;
};

_Static_assert(sizeof(struct tl_key_announce) == 48, "key announce layout");
_Static_assert(sizeof(struct tl_loss) == 40, "loss record layout");

#endif /* TRACER_LAKE_H */
