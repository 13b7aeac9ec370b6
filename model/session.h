/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the processor knows: the process table plus what the records said
 * about losses. session_record() takes one user record from the ring (type,
 * payload, untrusted), decodes it, counts it if it is bad, and applies it.
 */
#ifndef TRACER_MODEL_SESSION_H
#define TRACER_MODEL_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "cgtab.h"
#include "decode.h"
#include "proctab.h"

struct session_stats {
	uint64_t records;                           /* user records received */
	uint64_t decode_errors;                     /* records refused by the decoder */
	uint64_t decode_by_error[DECODE_ERR_COUNT];
	uint64_t kernel_drops;                      /* latest TR_COUNTERS: failed BPF ring-buffer writes */
	uint64_t ring_drops;                        /* latest TR_COUNTERS: the shared ring's drops (producer totals) */
	uint64_t records_copied;                    /* latest TR_COUNTERS / TR_END: records the collector copied */
	uint64_t counters_seen;
	uint64_t oom_records;
	uint64_t cgroup_records;
	bool end_seen;                              /* TR_END read: nothing follows */
	uint32_t end_reason;
};

struct session {
	struct proctab tab;
	struct cgtab cgroups;
	struct session_stats st;
	struct decoded dec; /* scratch: the current record's private copy */
};

int session_init(struct session *s, uint32_t max_procs, uint32_t root_pid, uint64_t seed);
void session_free(struct session *s);

/*
 * One record of ring type `type`. Returns 0 when it was applied, or a
 * negative errno when it was refused (counted) or turned away (counted in
 * the table). *exited, when not NULL, is set to the process an exit record
 * completed (else NULL).
 */
int session_record(struct session *s, unsigned type, const void *payload, uint32_t len, struct proc **exited);

#endif /* TRACER_MODEL_SESSION_H */
