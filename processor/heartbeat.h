/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host heartbeat (TL_HOST, docs/live.md): daemon mode with delivery
 * sends one record every heartbeat_interval of the loop's clock, collector
 * or not, runs or not, and one more at the stop. Its /proc files are
 * opened once before the sandbox (heartbeat_open) and read again at each
 * beat with lseek and read, which the sandbox allows. The record's format
 * is report/hostbeat.h's; this file owns the files, the timer and the
 * count of beats sent (the status file shows it).
 */
#ifndef TRACER_PROCESSOR_HEARTBEAT_H
#define TRACER_PROCESSOR_HEARTBEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "deliver.h"
#include "hostbeat.h"
#include "hostid.h"

enum { HEARTBEAT_STAT, HEARTBEAT_MEMINFO, HEARTBEAT_NETDEV, HEARTBEAT_BOOT_ID, HEARTBEAT_FILES };

struct heartbeat {
	bool on;                    /* heartbeat_open() was called: daemon mode with delivery */
	uint64_t every;             /* heartbeat_interval, ns */
	uint64_t next;              /* CLOCK_MONOTONIC of the next beat */
	uint64_t read_at;           /* CLOCK_MONOTONIC of the reading the next beat starts from */
	uint64_t mono_to_real;      /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the beats' times */
	uint64_t sent;              /* beats in the spool (the status file's heartbeat.beats) */
	uint32_t warned;            /* files whose read or parse failed: logged once each (bit per file) */
	int fd[HEARTBEAT_FILES];    /* -1: missing */
	struct hostbeat_state state; /* the beats so far, and the reading the next starts from */
	struct hostbeat_reading now;
	char text[HOSTBEAT_READ_MAX];
};

/* What the processor follows, at the time of a beat. */
struct heartbeat_figures {
	uint64_t runs;              /* runs running */
	uint64_t steps;             /* steps of running runs with a process running */
	uint64_t processes;         /* processes tracked that have not exited */
	const struct hostid *host;
};

/* Off, with no file open: heartbeat_due() and heartbeat_last_due() say no. */
void heartbeat_init(struct heartbeat *h);

/*
 * Before the sandbox: open the files once (a missing one: its fields are
 * null in every beat, said once here), take the reading beat 1 starts
 * from, and the first beat's time, every_ns from now.
 */
void heartbeat_open(struct heartbeat *h, uint64_t every_ns, uint64_t mono_to_real, uint64_t now);

/* Whether a beat is due at now; if so the next is set, on the interval's grid (from now after a long stall). */
bool heartbeat_due(struct heartbeat *h, uint64_t now);

/*
 * At a stop: whether the interval so far is worth a beat of its own (so
 * that the lake knows the host up to the stop, not only up to the last
 * whole interval).
 */
bool heartbeat_last_due(const struct heartbeat *h, uint64_t now);

/*
 * One TL_HOST record to the spool: the host from the previous reading to
 * now. 0 (a beat that could not be formatted is logged and skipped), or
 * the spool's negative errno, which stops the processor.
 */
int heartbeat_send(struct heartbeat *h, uint64_t now, const struct heartbeat_figures *f, struct deliver *dlv);

#endif /* TRACER_PROCESSOR_HEARTBEAT_H */
