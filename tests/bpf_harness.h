/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel programs' tests (tests/test_bpf_*.c): the real skeleton,
 * loaded and attached by the collector's own loader (collector/load.c),
 * real workloads in child processes, and the BPF ring buffer read
 * directly. Each test executable loads once (its options are load-time
 * settings) and keeps every record it read, in order, for the checks.
 */
#ifndef TRACER_TESTS_BPF_HARNESS_H
#define TRACER_TESTS_BPF_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../collector/load.h"
#include "records.h" /* the kernel records the tests decode (load.h includes only record_header.h) */

struct harness {
	struct bpf_state bpf;
	struct rules_file rules;
	struct ring_buffer *rb;
	unsigned char *recs; /* each record read: a size_t length, then its bytes (8-aligned) */
	size_t len, cap;
};

extern struct harness H;

/*
 * Why the kernel programs cannot be tested here (not root, no BTF), or
 * NULL. A test executable then returns test_skip_all("%s", why) (skip.h).
 */
const char *harness_unavailable(void);

/* Load with these settings (rules_path may be NULL) and attach; aborts the test on failure. */
void harness_start(pid_t trace_pid, unsigned sample_interval_ms, const char *rules_path);
void harness_stop(void);

/* Read everything the ring buffer holds now. */
void harness_drain(void);

/*
 * Walk the records read so far: returns the next record at or after *pos
 * (start at 0) of this type (0: any), and its size; NULL at the end.
 */
const void *harness_next(size_t *pos, unsigned type, size_t *size);

/* The first record of this type about this tgid (exec, fork child, exit, sample, file), or NULL. */
const void *harness_find(unsigned type, pid_t tgid, size_t *size);

/* Drain until such a record has arrived, for up to timeout_ms. */
const void *harness_wait_for(unsigned type, pid_t tgid, int timeout_ms, size_t *size);

/* Count the records of this type about this tgid. */
unsigned harness_count(unsigned type, pid_t tgid);

/* Does any byte sequence of any record read so far contain s? */
bool harness_bytes_contain(const char *s);

/* Run fn(arg) in a child process, exit with its return value; returns the child's pid. */
pid_t harness_spawn(int (*fn)(void *), void *arg);

/* Wait for the child, check it exited 0, then wait for its exit record. Returns that record. */
const struct tr_exit *harness_reap(pid_t pid);

/* Directory made for this test executable (mkdtemp under /var/tmp, removed by harness_stop). */
const char *harness_tmpdir(void);

/* Small things the tests share. */
unsigned long long harness_ino(const char *path);      /* st_ino, or fails the test */
const char *harness_v2_root(void);                      /* where cgroup v2 is mounted, or NULL */
bool harness_v1_memory(void);                           /* is the memory controller on a v1 hierarchy? */
void harness_write_file(const char *path, const char *text);

#endif /* TRACER_TESTS_BPF_HARNESS_H */
