/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runs' checkpoint of daemon mode (state_dir/runs.ckpt, format
 * attrib/runs_ckpt.h): after each look at the runs, what the model holds
 * that a restarted processor would need, written aside, made durable and
 * renamed over; at start, read back. It says up to which ring position it
 * includes the records: the loop releases the ring only that far
 * (checkpoint_barrier), and after a restart the records before it are
 * decoded but not counted again (checkpoint_includes).
 */
#ifndef TRACER_PROCESSOR_CHECKPOINT_H
#define TRACER_PROCESSOR_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "proctab.h"
#include "runs.h"

struct checkpoint {
	const char *state_dir;
	bool valid;                 /* gen/pos say what the newest checkpoint includes */
	uint32_t gen;
	uint64_t pos;
	bool on_disk;               /* the file holds runs (an empty set must replace it) */
	bool failed;                /* writing failed: logged once; the ring is not held back for it */
	uint64_t changes;           /* the table's changes when the file was written */
	uint64_t runs;              /* runs started + ended then */
	bool skip;                  /* after a restart: records before skip_pos of skip_gen are in the model */
	uint32_t skip_gen;
	uint64_t skip_pos;
};

/* Nothing written or read yet; the file is state_dir/runs.ckpt. */
void checkpoint_init(struct checkpoint *c, const char *state_dir);

/*
 * Before the first record: the runs a previous processor was following,
 * into r and t. A file that is missing means no run; one that cannot be
 * read or used is said, and the processor starts with no run (r and t
 * empty again).
 */
void checkpoint_load(struct checkpoint *c, struct runs *r, struct proctab *t);

/*
 * After a look at the runs: what the model includes now, up to ring
 * position pos of generation gen, on disk (rewritten only when the runs or
 * the table changed). attached: a ring is mapped (none: nothing to hold).
 */
void checkpoint_save(struct checkpoint *c, struct runs *r, const struct proctab *t, bool attached, uint64_t gen,
		     uint64_t pos);

/* How far the ring of generation gen may be released: what the checkpoint includes, or released (already). */
uint64_t checkpoint_barrier(const struct checkpoint *c, uint64_t gen, uint64_t released);

/* After a restart: whether the record at pos of the ring of generation gen is in the checkpoint's model. */
bool checkpoint_includes(const struct checkpoint *c, uint64_t gen, uint64_t pos);

#endif /* TRACER_PROCESSOR_CHECKPOINT_H */
