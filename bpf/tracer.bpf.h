/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tracer's kernel programs share: load-time settings, maps, globals
 * and the helpers every feature uses. The programs live in three files,
 * each readable alone:
 *
 *   lifecycle.bpf.c  exec, fork, exit, OOM: the process records
 *   sched.bpf.c      context switches and wakeups (final exit, sleep
 *                    accounting, samples) and the per-CPU sample timer
 *   activity.bpf.c   network bytes and waits, files opened
 *
 * and shared.bpf.c holds what they share: it defines (TRACER_BPF_DEFINE)
 * every map and global declared below, and the global functions (paths,
 * cgroup records, the rules). The build links the four into one object
 * (bpftool gen object), shared.bpf.c first.
 *
 * Record layouts: include/records.h. Rules and per-process state:
 * include/kernel_rules.h. Tracepoints and raw tracepoints only (with CO-RE
 * reads), plus one perf-event program: they exist on every supported
 * kernel, where kprobes, fentry or iterators may not.
 */
#ifndef TRACER_BPF_H
#define TRACER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "kernel_rules.h"
#include "records.h"

#ifdef TRACER_BPF_DEFINE
#define TR_SHARED
#define TR_INIT(...) = __VA_ARGS__
#else
#define TR_SHARED extern
#define TR_INIT(...)
#endif

/* ---- load-time settings (the collector sets them before load) ---------- */
TR_SHARED const volatile __u64 page_size TR_INIT(4096);
/* sched_switch has its prev_state argument (5.18+): exits wait for the final switch. */
TR_SHARED const volatile bool exit_at_switch TR_INIT(false);
/*
 * --trace-pid: only the process the collector seeded into `pstates` and its
 * descendants are traced; nothing is created for anything else. Otherwise
 * (daemon mode) every process is traced unless the rules exclude it.
 */
TR_SHARED const volatile bool trace_subtree TR_INIT(false);
TR_SHARED const volatile __u64 sample_interval_ns TR_INIT(1000000000ULL);
TR_SHARED const volatile __u32 max_files_per_proc TR_INIT(1024);
/*
 * Direct reclaim is timed (activity.bpf.c). The collector clears it when
 * it leaves out a vmscan program this kernel has no tracepoint for; exits
 * and samples then carry TR_EXIT_NO_RECLAIM.
 */
TR_SHARED const volatile bool reclaim_measured TR_INIT(true);

/* ---- globals the collector reads or writes through its memory mapping ---- */
/* Failed ring-buffer writes by record type; [TR_DROP_STATE]: processes the state map could not hold. */
TR_SHARED __u64 drop_counts[TR_KERNEL_TYPES_END];
/* Rules and allowlist, double-buffered: see include/kernel_rules.h. */
TR_SHARED struct tr_kernel_rules rules[2];
TR_SHARED __u32 rules_active;
/* Threads with an open entry in `blocked`: wakeups skip the lookup while it is 0. */
TR_SHARED __u64 blocked_outstanding;

/* ---- maps -------------------------------------------------------------- */
TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by the loader */
} events SEC(".maps");

/*
 * The state of each process that has one (struct tr_pstate), by tgid. A
 * plain (preallocated) hash, not an LRU: evicting a live process's state
 * would silently untrace it. When full, a process goes without state and
 * drop_counts[TR_DROP_STATE] says so. Preallocated also because the
 * perf-event program reads it (older kernels demand it there).
 */
#define PSTATE_MAX 32768
TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PSTATE_MAX);
	__type(key, __u32);
	__type(value, struct tr_pstate);
} pstates SEC(".maps");

/* A thread in uninterruptible sleep: since when, and whether it waits for I/O. */
struct blocked {
	__u64 since_ns;
	__u32 tgid;
	__u32 iowait;
};

TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* thread id */
	__type(value, struct blocked);
} blocked SEC(".maps");

/* Exits parked until the dying thread's final context switch (lifecycle.bpf.c, sched.bpf.c). */
struct pending_exit {
	struct tr_exit rec;
	__u64 thread_runtime_ns; /* this thread's figures when the record was built */
	__u64 thread_utime_ns;
	__u64 thread_stime_ns;
};

TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct pending_exit);
} pending_exits SEC(".maps");

/*
 * An exec record is too big for the BPF stack: built per CPU, then its used
 * part copied out. Its variable parts follow one another at offsets the
 * verifier can bound: each is masked with EXEC_MASK, and at most
 * ENV_READ_MAX bytes are written there, so data[] has room for both.
 */
#define EXEC_MASK 8191
#define ENV_READ_MAX 4096 /* bytes per read of one environment string; longer ones take several */
struct exec_buf {
	struct tr_exec e;
	char data[EXEC_MASK + 1 + ENV_READ_MAX];
};

_Static_assert(TR_PATH_MAX + TR_ARGV_MAX + TR_CWD_MAX <= EXEC_MASK, "exec offsets stay under the mask");

TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_buf);
} exec_scratch SEC(".maps");

/*
 * Path building space, per CPU: slot 0 for programs in task context, slot
 * 1 for the timer, which can interrupt a raw tracepoint program on the
 * same CPU. The path is written backwards ending at PATH_END; the record
 * header goes right before it (paths.bpf.h).
 */
#define PATH_KEEP 1024 /* == TR_CWD_MAX == TR_CGROUP_PATH_MAX == TR_FILE_PATH_MAX */
#define PATH_HDR_ROOM 64
#define PATH_END (PATH_HDR_ROOM + PATH_KEEP - 1) /* index of the path's NUL */
#define PATH_MASK 2047
#define NAME_MASK 255 /* NAME_MAX */
struct path_scratch {
	char buf[4096]; /* masked offsets (<= PATH_MASK) plus a name (<= NAME_MASK) stay inside */
	char name[NAME_MASK + 1];
	__u32 pos;      /* where the path being built starts (shared.bpf.c: why it is not a local) */
	__u32 pad;
};

TR_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct path_scratch);
} path_scratch SEC(".maps");

_Static_assert(PATH_KEEP == TR_CWD_MAX && PATH_KEEP == TR_CGROUP_PATH_MAX && PATH_KEEP == TR_FILE_PATH_MAX,
	       "one path builder serves every path record");

/*
 * ---- global functions, defined in shared.bpf.c ------------------------
 * The verifier checks a global function once, on its own; a static one it
 * checks again at every call with the caller's state, which the exec
 * program (loops over paths, cgroups, rules and the environment) cannot
 * afford. Their arguments are scalars: kernel pointers travel as __u64.
 */

/* Send a TR_CGROUP for (id, v1) unless one went out already; kn: its kernfs node. */
int send_cgroup(__u64 id, __u32 v1, __u64 kn, __u32 slot);

/*
 * The current task's cgroups: sends the record of its v2 cgroup (v2_id:
 * bpf_get_current_cgroup_id()) and of its cgroup in the v1 memory
 * hierarchy where they may not have gone out yet. Returns the v1 one's id
 * (0: the memory controller is not on v1, or absent).
 */
__u64 send_task_cgroups(__u64 v2_id, __u32 slot);

/*
 * The path of dentry on vfsmount as seen from root, into path_scratch[slot].
 * Returns the path's first byte in buf (PATH_POS), | PATH_TRUNCATED.
 */
int dentry_path(__u32 slot, __u64 dentry, __u64 vfsmount, __u64 root_dentry, __u64 root_vfsmount);

/*
 * The rules applied to the current process, whose flags are `flags`; its
 * name is the base name of the path in this CPU's exec buffer when
 * from_exec, else its comm. Returns its new flags.
 */
int rules_decide(__u32 flags, __u32 from_exec);

/* ---- small helpers ------------------------------------------------------ */
/* A BPF-to-BPF function emitted once; unused in some files that include its header. */
#define SUBPROG static __attribute__((noinline, unused))

#define TASK_UNINTERRUPTIBLE_STATE 0x2
#define TASK_DEAD_STATE 0x80   /* TASK_DEAD in every kernel since 4.14 */
#define TASK_NOLOAD_STATE 0x400 /* idle waits (TASK_IDLE): not blocked on anything */
#define PF_EXITING_FLAG 0x4
#define PF_KTHREAD_FLAG 0x00200000
#define ERR_E2BIG 7 /* a full hash map refuses an insert with -E2BIG */

static __always_inline void count_drop(__u32 type)
{
	if (type < TR_KERNEL_TYPES_END)
		__sync_fetch_and_add(&drop_counts[type], 1);
}

/*
 * Waking the collector costs an interrupt (microseconds in a VM) per
 * record. It polls every COLLECTOR_POLL_MS anyway, so wake it only when the
 * buffer is filling up (a quarter full).
 */
static __always_inline __u64 wakeup_flags(void)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);

	return avail >= size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* A record header stamped with ts (bpf_ktime_get_ns()), for a program that has read the clock already. */
static __always_inline void fill_hdr_at(struct tr_hdr *h, __u16 type, __u64 ts)
{
	h->type = type;
	h->version = RECORDS_VERSION;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = ts;
}

static __always_inline void fill_hdr(struct tr_hdr *h, __u16 type)
{
	fill_hdr_at(h, type, bpf_ktime_get_ns());
}

/*
 * ---- reading the kernel's memory --------------------------------------
 * Every bpf_probe_read_kernel() (what BPF_CORE_READ does, once per pointer
 * it follows) is a helper call with a fault-tolerant copy: about 60 ns
 * each on the Firecracker guest of docs/benchmarks.md, and a process's
 * exec and exit take dozens. From 5.11 the current task is also available
 * as a BTF pointer (bpf_get_current_task_btf()): the verifier then lets the
 * program load its fields, and the fields of the pointers read from it, as
 * plain loads (each made fault-tolerant by the JIT), about 1 ns each.
 *
 * TASK_BTF is decided at load time (CO-RE: does this kernel have the
 * helper?); the verifier sees a constant and never walks the branch not
 * taken, so the programs still load on 5.8. KREAD(p, a, b, ...) reads
 * p->a->b... either way. Rules for its use, which the verifier enforces
 * from 5.11:
 *  - p is current_task() or a pointer read from it with KREAD (never a
 *    raw tracepoint's argument, a global function's argument, or a pointer
 *    read with BPF_CORE_READ: those are plain numbers to the verifier);
 *  - a pointer read with KREAD is not passed to a global function (their
 *    arguments are scalars) nor indexed with a variable: read its last
 *    hop with BPF_CORE_READ to get a plain number.
 * A number field costs the verifier nothing more; a pointer field loaded
 * from the task (or from another pointer the kernel marks as safe to
 * follow) makes it search the kernel's BTF by name, several times, each
 * time it checks that load: such hops are kept to the hot paths.
 */
#define TASK_BTF bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)
#define KREAD(src, a, ...) (TASK_BTF ? ___arrow(src, a, ##__VA_ARGS__) : BPF_CORE_READ(src, a, ##__VA_ARGS__))

static __always_inline struct task_struct *current_task(void)
{
	return TASK_BTF ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task();
}

/*
 * Start time of the process (its group leader): with the tgid, names one
 * process lifetime. t: current_task(). Nearly always asked by the leader
 * itself (an exec makes the execing thread the leader; most processes have
 * one thread): its own field then, a load. Another thread follows
 * group_leader with BPF_CORE_READ: following it with KREAD would cost the
 * verifier its BTF searches (above) in every program this is inlined into,
 * on a path most of them never take.
 */
static __always_inline __u64 process_start(struct task_struct *t)
{
	if (KREAD(t, pid) == KREAD(t, tgid))
		return KREAD(t, start_time);
	return BPF_CORE_READ(t, group_leader, start_time);
}

static __always_inline const struct tr_kernel_rules *active_rules(void)
{
	/* One read: the collector never rewrites the copy it last published. */
	__u32 i = *(volatile __u32 *)&rules_active & 1;

	return &rules[i];
}

/*
 * The state of process tgid (whose start time is `start`), or NULL. A
 * seeded entry (start_ns 0) is claimed; an entry of an earlier process with
 * the same pid (its exit was never seen) is dropped.
 */
static __always_inline struct tr_pstate *pstate_of(__u32 tgid, __u64 start)
{
	struct tr_pstate *st = bpf_map_lookup_elem(&pstates, &tgid);

	if (!st)
		return NULL;
	if (st->start_ns == 0)
		st->start_ns = start;
	else if (st->start_ns != start) {
		bpf_map_delete_elem(&pstates, &tgid);
		return NULL;
	}
	return st;
}

/*
 * The state of the current process (tgid, task t: current_task()). In
 * daemon mode a process seen for the first time - one that was running
 * before tracing started, no fork or exec of it seen - gets one now,
 * TR_PSTATE_PREEXISTING, decided by the rules on its name (comm: at most 15
 * bytes of it), uid and cgroups. NULL: no state (untraced under
 * --trace-pid, kernel thread, exiting, map full). The lookup comes first:
 * it is all an untraced process pays.
 */
static __always_inline struct tr_pstate *pstate_current(struct task_struct *t, __u32 tgid)
{
	struct tr_pstate *st = bpf_map_lookup_elem(&pstates, &tgid);
	struct tr_pstate fresh = {};

	if (st && !st->start_ns) /* seeded by the collector (--trace-pid): claimed by its first event */
		st->start_ns = process_start(t);
	if (st || trace_subtree)
		return st;
	if (KREAD(t, flags) & (PF_KTHREAD_FLAG | PF_EXITING_FLAG))
		return NULL;
	fresh.start_ns = process_start(t);
	fresh.flags = rules_decide(TR_PSTATE_PREEXISTING, 0);
	if (bpf_map_update_elem(&pstates, &tgid, &fresh, BPF_NOEXIST) == -ERR_E2BIG)
		count_drop(TR_DROP_STATE);
	return bpf_map_lookup_elem(&pstates, &tgid);
}

#endif /* TRACER_BPF_H */
