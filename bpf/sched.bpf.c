// SPDX-License-Identifier: GPL-2.0
/*
 * The scheduler's view of traced processes:
 *  - a dying thread's final context switch sends its process's exit record
 *    (with the CPU the scheduler charged it after sched_process_exit);
 *  - uninterruptible sleep, from the switch out to the wakeup, split by
 *    in_iowait into iowait_ns and blocked_ns (our own clock: no dependency
 *    on kernel.task_delayacct, off by default);
 *  - samples (TR_SAMPLE), at most one per interval per process, taken when
 *    one of its threads leaves a CPU, and by a per-CPU timer for threads
 *    that never do. A process that does not run sends nothing.
 * Every switch of an untraced task costs one hash lookup (plus, in daemon
 * mode, a flag read for kernel threads).
 */
#include "tracer.bpf.h"
#include "paths.bpf.h"
#include "proc.bpf.h"

/* mm->rss_stat: percpu counters from 6.2, atomics before. Both layouts, whichever this kernel has. */
struct mm_struct___pcpu {
	struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));

struct mm_rss_stat___atomic {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___atomic {
	struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));

/*
 * Resident pages now: MM_FILEPAGES (0) + MM_ANONPAGES (1) + MM_SHMEMPAGES
 * (3); 2 is swap entries (indexes stable since 4.5). The percpu counters'
 * central value, as /proc/PID/status shows it: it can lag by a batch of
 * pages per CPU.
 */
static __always_inline __u64 rss_pages(struct mm_struct *mm)
{
	struct mm_struct___pcpu *p = (void *)mm;
	struct mm_struct___atomic *a = (void *)mm;
	__s64 v = 0;

	if (!mm)
		return 0;
	if (bpf_core_field_exists(p->rss_stat))
		v = BPF_CORE_READ(p, rss_stat[0].count) + BPF_CORE_READ(p, rss_stat[1].count) +
		    BPF_CORE_READ(p, rss_stat[3].count);
	else if (bpf_core_field_exists(a->rss_stat))
		v = BPF_CORE_READ(a, rss_stat.count[0].counter) + BPF_CORE_READ(a, rss_stat.count[1].counter) +
		    BPF_CORE_READ(a, rss_stat.count[3].counter);
	return v > 0 ? (__u64)v : 0;
}

/* A TR_SAMPLE of the current process (tgid). slot: path_scratch slot for its cgroup's record. */
__attribute__((noinline)) int send_sample(__u32 tgid, __u32 slot)
{
	struct tr_pstate *st = bpf_map_lookup_elem(&pstates, &tgid);
	struct task_struct *t = current_task();
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	__u64 cg = bpf_get_current_cgroup_id(), rss, hiwater;
	struct totals tot = {};
	struct tr_sample *r;

	if (!st)
		return 0;
	send_cgroup(cg, 0, (__u64)cgroup_v2_kn(t), slot);
	sum_process(&tot, BPF_CORE_READ(t, signal));
	rss = rss_pages(mm);
	/* hiwater_rss is brought up to date only at unmap and exit: the current figure can be above it. */
	hiwater = mm ? BPF_CORE_READ(mm, hiwater_rss) : 0;
	if (hiwater < rss)
		hiwater = rss;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count_drop(TR_SAMPLE);
		return 0;
	}
	fill_hdr(&r->hdr, TR_SAMPLE);
	r->tgid = tgid;
	r->ppid = BPF_CORE_READ(t, real_parent, tgid);
	r->start_ns = st->start_ns;
	r->runtime_ns = tot.runtime;
	r->utime_ns = tot.utime;
	r->stime_ns = tot.stime;
	r->rss_bytes = rss * page_size;
	r->hiwater_rss_bytes = hiwater * page_size;
	r->read_bytes = tot.read_bytes;
	r->write_bytes = tot.write_bytes;
	r->rchar = tot.rchar;
	r->wchar = tot.wchar;
	r->net_tx_bytes = st->net_tx;
	r->net_rx_bytes = st->net_rx;
	r->iowait_ns = st->iowait_ns;
	r->blocked_ns = st->blocked_ns;
	r->net_wait_ns = st->net_wait_ns;
	r->run_delay_ns = tot.run_delay;
	r->cgroup_id = cg;
	r->uid = (__u32)bpf_get_current_uid_gid();
	r->nr_threads = tot.nr_threads;
	r->state_flags = st->flags & (TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING);
	r->flags = tot.flags;
	BPF_CORE_READ_STR_INTO(&r->comm, t, group_leader, comm);
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

/*
 * Sample the current process if its interval has passed. The 1/16 slack
 * keeps a timer that fires once per interval from missing every other
 * tick through jitter. Two CPUs racing can both send one: rare, and the
 * processor keeps consecutive samples apart by their times.
 */
static __always_inline void maybe_sample(struct tr_pstate *st, __u32 tgid, __u32 slot)
{
	__u64 now = bpf_ktime_get_ns();

	if (now < st->last_sample_ns + sample_interval_ns - sample_interval_ns / 16)
		return;
	st->last_sample_ns = now;
	if (pstate_of(tgid, process_start(current_task())))
		send_sample(tgid, slot);
}

/* The dying thread's last switch: add what the scheduler charged it since sched_process_exit, send. */
static __always_inline int final_switch(struct task_struct *prev)
{
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct pending_exit *pe = bpf_map_lookup_elem(&pending_exits, &tid);

	if (!pe)
		return 0;
	pe->rec.runtime_ns += BPF_CORE_READ(prev, se.sum_exec_runtime) - pe->thread_runtime_ns;
	pe->rec.utime_ns += BPF_CORE_READ(prev, utime) - pe->thread_utime_ns;
	pe->rec.stime_ns += BPF_CORE_READ(prev, stime) - pe->thread_stime_ns;
	if (bpf_ringbuf_output(&events, &pe->rec, sizeof(pe->rec), wakeup_flags()))
		count_drop(TR_EXIT);
	bpf_map_delete_elem(&pending_exits, &tid);
	return 0;
}

/* prev goes to sleep uninterruptibly: note when, and whether it waits for I/O (io_schedule()). */
static __always_inline void sleep_starts(struct task_struct *prev, __u32 tid, __u32 tgid)
{
	struct blocked b = {
		.since_ns = bpf_ktime_get_ns(),
		.tgid = tgid,
		.iowait = BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait),
	};

	if (!bpf_map_update_elem(&blocked, &tid, &b, BPF_NOEXIST))
		__sync_fetch_and_add(&blocked_outstanding, 1);
	else /* an entry whose wakeup was never seen */
		bpf_map_update_elem(&blocked, &tid, &b, BPF_ANY);
}

/*
 * Called in prev's context (current == prev) before the switch.
 * args: preempt, prev, next, prev_state (the last from 5.18: before, the
 * program does not load and the collector falls back, docs/schema.md).
 */
SEC("raw_tp/sched_switch")
int handle_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	unsigned int state = (unsigned int)ctx->args[3];
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct tr_pstate *st;

	if (state == TASK_DEAD_STATE)
		return final_switch(prev);
	if (!tgid) /* the idle task */
		return 0;
	st = pstate_current(prev, tgid);
	if (!st || !(st->flags & TR_PSTATE_TRACED))
		return 0;
	if ((state & TASK_UNINTERRUPTIBLE_STATE) && !(state & TASK_NOLOAD_STATE))
		sleep_starts(prev, (__u32)id, tgid);
	maybe_sample(st, tgid, 0);
	return 0;
}

/*
 * The end of an uninterruptible sleep. A wakeup of a task still on its
 * CPU (it never slept) finds no entry: the run-queue lock orders the switch
 * out before any wakeup that has to put the task back on a CPU.
 */
SEC("raw_tp/sched_wakeup")
int handle_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	struct blocked *b;
	struct tr_pstate *st;
	__u32 tid;
	__u64 d;

	if (!*(volatile __u64 *)&blocked_outstanding)
		return 0;
	tid = BPF_CORE_READ(p, pid);
	b = bpf_map_lookup_elem(&blocked, &tid);
	if (!b)
		return 0;
	d = bpf_ktime_get_ns() - b->since_ns;
	st = bpf_map_lookup_elem(&pstates, &b->tgid);
	if (st)
		__sync_fetch_and_add(b->iowait ? &st->iowait_ns : &st->blocked_ns, d);
	if (!bpf_map_delete_elem(&blocked, &tid))
		__sync_fetch_and_add(&blocked_outstanding, -1);
	return 0;
}

/*
 * A per-CPU software timer (PERF_COUNT_SW_CPU_CLOCK, one period per sample
 * interval, opened by the collector): samples whatever runs on the CPU if
 * it is due. Only a thread that has held the CPU for a whole interval
 * needs it; the others are sampled at their switches.
 */
SEC("perf_event")
int handle_timer(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tr_pstate *st;

	if (!tgid)
		return 0;
	st = pstate_current(current_task(), tgid);
	if (st && (st->flags & TR_PSTATE_TRACED))
		maybe_sample(st, tgid, 1);
	return 0;
}
