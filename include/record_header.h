/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The part of the records (include/records.h, which includes this file)
 * that the collector needs: the version, the record types, the header
 * every record starts with, the per-process state flags it seeds, and its
 * own two records (counters, end). The collector reads a kernel record's
 * header only and copies the rest verbatim, so it includes only this.
 */
#ifndef TRACER_RECORD_HEADER_H
#define TRACER_RECORD_HEADER_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define RECORDS_VERSION 5
/*
 * The oldest version still decoded (a spool or lake written before an
 * upgrade): versions 2, 3 and 4 differ only in struct tr_exit and struct
 * tr_sample, which lack their last fields (TR_EXIT_V2_SIZE,
 * TR_EXIT_V3_SIZE, TR_EXIT_V4_SIZE, TR_SAMPLE_V3_SIZE, TR_SAMPLE_V4_SIZE).
 */
#define RECORDS_VERSION_MIN 2

/* Record types: also the shared-memory ring's record types (16..63). */
enum tr_type {
	TR_EXEC = 16,     /* struct tr_exec, variable length */
	TR_FORK = 17,     /* struct tr_fork */
	TR_EXIT = 18,     /* struct tr_exit */
	TR_OOM = 19,      /* struct tr_oom */
	TR_CGROUP = 20,   /* struct tr_cgroup, variable length: a cgroup's path, once per id */
	TR_SAMPLE = 21,   /* struct tr_sample: a live process's cumulative counters */
	TR_FILE = 22,     /* struct tr_file, variable length: a file a process opened */
	TR_KERNEL_TYPES_END = 23,
	/* Written by the collector itself. */
	TR_COUNTERS = 32, /* struct tr_counters */
	TR_END = 33,      /* struct tr_end: the collector is stopping; nothing follows */
	TR_TYPES_END = 34,
};

struct tr_hdr {
	__u16 type;    /* enum tr_type */
	__u16 version; /* RECORDS_VERSION */
	__u32 cpu;     /* CPU the event ran on */
	__u64 ts_ns;   /* CLOCK_MONOTONIC when the event happened */
};

/* Per-process state flags (tr_exit.state_flags, tr_sample.state_flags). */
#define TR_PSTATE_TRACED 0x1      /* the programs keep state for it (net, waits, files, samples) */
#define TR_PSTATE_PREEXISTING 0x2 /* already running when tracing started: no fork/exec seen */

/*
 * kernel_drops[] is indexed by record type (16..22). Index TR_DROP_STATE,
 * below every type, counts failed inserts into the programs' per-process
 * state map (it was full): records about those processes are missing
 * (forks, samples, files, exit figures), so they are losses like the
 * others. A process already running when tracing started is retried, and
 * counted, at each event of its own while the map stays full.
 */
#define TR_DROP_STATE 0

/* Loss and liveness counters, written by the collector every second. */
struct tr_counters {
	struct tr_hdr hdr;
	__u64 kernel_drops[TR_KERNEL_TYPES_END]; /* failed BPF ring-buffer writes, by type */
	__u64 ring_drops[64];                    /* shared-ring drops by type (producer's totals) */
	__u64 records_copied;                    /* BPF records copied into the shared ring */
	__u64 bad_consumer_pos;                  /* consumer positions the producer refused */
};

/* The collector's last record: what it knows was lost, then nothing more. */
struct tr_end {
	struct tr_hdr hdr;
	__u64 records_copied;
	__u32 reason; /* 0: asked to stop */
	__u32 pad;
};

_Static_assert(sizeof(struct tr_hdr) == 16, "tr_hdr layout");
_Static_assert(sizeof(struct tr_counters) == 16 + 8 * (TR_KERNEL_TYPES_END + 64 + 2), "tr_counters layout");
_Static_assert(sizeof(struct tr_end) == 32, "tr_end layout");
_Static_assert(TR_TYPES_END <= 64, "record types fit the ring's type space");

#endif /* TRACER_RECORD_HEADER_H */
