/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF programs (bpf/, one skeleton) loaded with this run's settings
 * (load.c), and the rules file the collector writes into their memory
 * (rules.c; format and checks: docs/security.md, "Collector rules").
 */
#ifndef TRACER_COLLECTOR_LOAD_H
#define TRACER_COLLECTOR_LOAD_H

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "readfile.h"
#include "kernel_rules.h" /* before the skeleton: its globals use these types */
#include "record_header.h"
#include "tracer.skel.h"

#define SAMPLE_INTERVAL_MIN_MS 100
#define SAMPLE_INTERVAL_MAX_MS 60000
#define LOAD_MAX_CPUS 1024
#define CGROUP_LEVEL_MAX 64
/* The only flags the sandbox lets the collector open anything with (sandbox.c). */
#define RULES_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)

struct load_options {
	unsigned kernel_buffer_mib;  /* the BPF ring buffer; a power of two */
	unsigned sample_interval_ms; /* SAMPLE_INTERVAL_MIN_MS..SAMPLE_INTERVAL_MAX_MS */
	pid_t trace_pid;             /* > 0: trace only this process and its descendants */
};

struct rules_file {
	const char *path;            /* as given; NULL: no file, the built-in allowlist only */
	char file[PATH_MAX];         /* its real path, and its directory: both must be root's alone */
	char dir[PATH_MAX];
	dev_t v2_dev, v1_memory_dev; /* the cgroup hierarchies rules may name (0: not mounted) */
	uint64_t published_ns;       /* CLOCK_MONOTONIC of the last publication */
	struct tr_kernel_rules next; /* what was read, not yet published */
	char buf[READ_MAX_RULES + 1]; /* common/readfile.h */
	char up[PATH_MAX + 3 * CGROUP_LEVEL_MAX]; /* a cgroup path and its ".." steps */
};

struct bpf_state {
	struct tracer_bpf *skel;
	struct bpf_link *timers[LOAD_MAX_CPUS]; /* the per-CPU sample timers */
	int n_timers;
};

/* As root: load, publish r->next, seed the traced process, attach, start the timers. 0 or -1 (logged). */
int bpf_start(struct bpf_state *b, const struct load_options *o, struct rules_file *r);

/* As root, before the sandbox: resolve the file (path may be NULL), find the cgroup hierarchies, read. */
int rules_init(struct rules_file *f, const char *path);

/* Read the file into f->next: the built-in allowlist plus its rules. 0, or -1 logged as FILE:LINE. */
int rules_read(struct rules_file *f);

/*
 * The parsing half of rules_read, on text already read and checked (no
 * NUL byte, at most READ_MAX_RULES bytes; NULL: no rules): f->next
 * becomes the built-in allowlist plus the rules in text, which is cut
 * into words in place. Cgroup rules stat their directories. Messages name
 * f->path. 0, or -1 logged as FILE:LINE.
 */
int rules_parse(struct rules_file *f, char *text);

/* Make f->next the programs' rules: written into the copy they are not reading, then switched to. */
void rules_publish(struct rules_file *f, struct tr_kernel_rules copies[2], __u32 *active);

#endif /* TRACER_COLLECTOR_LOAD_H */
