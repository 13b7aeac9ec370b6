/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the collector writes into the BPF programs' memory: the per-process
 * state it seeds for --trace-pid, and the filter rules and environment
 * allowlist as the programs read them. The rules are a global of the programs (.bss), which the collector
 * writes through libbpf's memory mapping, so that SIGHUP reloads them with
 * no bpf() syscall and without detaching anything.
 *
 * Two copies, double-buffered: the collector fills the copy the programs
 * are not reading (rules[!rules_active]), then publishes it by storing its
 * index in rules_active (release). A program reads rules_active once and
 * uses that copy for the whole run. The collector leaves at least
 * RULES_REUSE_DELAY_MS between publishing a copy and rewriting the other
 * one: far longer than any program runs, so no program ever reads a copy
 * while it is being written (a torn allowlist could let an unlisted
 * variable out).
 *
 * The file format and its semantics: docs/security.md ("Collector rules").
 */
#ifndef TRACER_KERNEL_RULES_H
#define TRACER_KERNEL_RULES_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TR_RULES_ENV_MAX 32      /* allowlisted environment keys, defaults included */
#define TR_RULES_ENV_WORDS 8     /* "KEY=" kept as 8-byte words: keys up to 63 bytes */
#define TR_RULES_PER_KIND 16     /* exe names, uids or cgroups, per rule set */
#define TR_RULES_EXE_LEN 64      /* bytes of an exe name, NUL-padded: names up to 63 bytes */
#define RULES_REUSE_DELAY_MS 50

/*
 * An allowlisted key as the programs compare it: "KEY=" in little-endian
 * 8-byte words, with a mask of the bytes that belong to it (the last word
 * is partial). An environment string matches when each of its first
 * nwords words, masked, equals the key's.
 */
struct tr_env_key {
	__u64 word[TR_RULES_ENV_WORDS];
	__u64 mask[TR_RULES_ENV_WORDS];
	__u32 nwords;
	__u32 pad;
};

/*
 * A cgroup by its id (st_ino of its directory) in one hierarchy, and its
 * depth there: a process matches when its own cgroup's ancestor at that
 * depth is this one (one comparison per rule, no walk up the tree).
 */
struct tr_cgroup_rule {
	__u64 id;
	__u32 v1;    /* 0: the v2 hierarchy; 1: the v1 memory hierarchy */
	__u32 level; /* 0: the hierarchy's root */
};

struct tr_rule_set {
	__u32 n_exe, n_uid, n_cgroup, pad;
	char exe[TR_RULES_PER_KIND][TR_RULES_EXE_LEN]; /* base name of the executed path */
	__u32 uid[TR_RULES_PER_KIND];
	struct tr_cgroup_rule cgroup[TR_RULES_PER_KIND]; /* the cgroup or any descendant */
};

struct tr_kernel_rules {
	struct tr_rule_set exclude;
	struct tr_rule_set include; /* empty: every process is a candidate */
	__u32 n_env;
	__u32 pad;
	struct tr_env_key env[TR_RULES_ENV_MAX];
};

/* Internal process states, beside TR_PSTATE_TRACED and TR_PSTATE_PREEXISTING (records.h). */
#define PS_EXCLUDED 0x100     /* matched an exclude rule (or descends from one): nothing more is sent */
#define PS_NOT_INCLUDED 0x200 /* include rules exist and it matched none yet */

/* What the programs keep per process (the pstates map, keyed by tgid) while it lives. */
struct tr_pstate {
	__u64 start_ns;       /* with the tgid, names the process; 0: seeded, claimed by its first event */
	__u64 last_sample_ns; /* samples are rate-limited per process */
	__u64 net_tx, net_rx;
	__u64 iowait_ns, blocked_ns, net_wait_ns;
	__u32 files, files_dropped;
	__u32 flags;          /* TR_PSTATE_*, PS_* */
	__u32 pad;
	/*
	 * The run-queue wait (sched_info.run_delay) of its threads that exited
	 * while the rest of the process lives on: the kernel keeps no
	 * per-process sum, and a released thread's is gone.
	 */
	__u64 exited_run_delay_ns;
	__u64 reclaim_ns;     /* time its threads spent in direct reclaim */
};

/* The collector seeds it, the programs index a hash with it: 8-byte fields, no tail padding. */
_Static_assert(sizeof(struct tr_pstate) == 88 && sizeof(struct tr_pstate) % 8 == 0, "tr_pstate layout");

#endif /* TRACER_KERNEL_RULES_H */
