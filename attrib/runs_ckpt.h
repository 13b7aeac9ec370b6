/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runs' checkpoint: what a restarted processor needs to go on with the
 * runs it was following (docs/live.md, "Restarts"). Daemon mode writes it
 * to state_dir/runs.ckpt after each look at the runs; a processor that
 * starts reads it back before its first record.
 *
 *   +--------------------------------------------------------------+
 *   | struct ckpt_header (64 bytes): magic "TRCKPT01", version,     |
 *   |   sizeof(struct run), ring generation and position, counts,  |
 *   |   payload length, crc32 of the payload                       |
 *   +--------------------------------------------------------------+
 *   | nruns x { uint32 slot; struct run }                           |
 *   | nprocs x { struct ckpt_proc; path; argv area; cwd; env area } |
 *   +--------------------------------------------------------------+
 *
 * The processes are the members of the live runs, in start order, with
 * what the model needs of them: parent, image, exit, run, and what was
 * already sent (live_attr, PROC_F_LIVE_END). The ring position says which
 * records the checkpoint includes: the processor releases ring space only
 * up to it, so after a crash every record after it is still in the ring
 * and is applied again, every record before it is not (no figure counted
 * twice, none missed).
 *
 * A file is replaced whole (written aside, fsync'd, renamed): it is either
 * the old one or the new one. A file that fails any check is ignored
 * (logged): the processor starts with no runs, as on a first start.
 */
#ifndef TRACER_ATTRIB_RUNS_CKPT_H
#define TRACER_ATTRIB_RUNS_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "proctab.h"
#include "runs.h"

#define CKPT_MAGIC "TRCKPT01"
/*
 * 2: a process's exit is a records-version-4 struct tr_exit (its allocation); 3: version 5's (its time in
 * direct reclaim, 8 bytes more). A file of another version is refused.
 */
#define CKPT_VERSION 3
#define CKPT_FILE "runs.ckpt"
#define CKPT_MAX_BYTES (1ull << 32)           /* a larger file is refused */
#define CKPT_RESTART_UPDATES (1ull << 20)    /* added to each run's update count after a restart (docs/live.md) */

struct ckpt_header {
	char magic[8];
	uint32_t version;
	uint32_t run_size;     /* sizeof(struct run) of the writer: another layout is refused */
	uint64_t ring_gen;     /* the ring generation (low 32 bits) and position the model includes records up to */
	uint64_t ring_pos;
	uint64_t written_ns;   /* CLOCK_REALTIME */
	uint32_t nruns, nprocs;
	uint64_t payload_len;
	uint32_t crc;          /* zlib crc32 of the payload */
	uint32_t rsvd;
};

_Static_assert(sizeof(struct ckpt_header) == 64, "checkpoint header layout");

struct ckpt_stats {
	uint32_t runs, procs;
	uint32_t procs_skipped; /* members the table could not take back, or with nothing to rebuild them from */
};

/* Serialise the runs and their members into o (in memory). 0 or -ENOMEM / -EFBIG. */
int ckpt_write(struct obuf *o, struct runs *r, const struct proctab *t, uint32_t ring_gen, uint64_t ring_pos,
	       uint64_t now_real_ns);

/*
 * Rebuild runs and members from a checkpoint's bytes into an empty table
 * and run set. 0, or -EINVAL (err says what is wrong: the caller starts
 * afresh, after clearing both).
 */
int ckpt_read(const void *buf, size_t len, struct runs *r, struct proctab *t, uint32_t *ring_gen, uint64_t *ring_pos,
	      struct ckpt_stats *st, char *err, size_t errlen);

#endif /* TRACER_ATTRIB_RUNS_CKPT_H */
