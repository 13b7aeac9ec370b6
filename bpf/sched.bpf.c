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

/* A TR_SAMPLE of the current process (tgid). slot: path_scratch slot for its cgroup's record. */
__attribute__((noinline)) int send_sample(__u32 tgid, __u32 slot)
{
	struct tr_pstate *st = bpf_map_lookup_elem(&pstates, &tgid);
	struct task_struct *t = current_task();
	struct mm_struct *mm = KREAD(t, mm);
	__u64 cg = bpf_get_current_cgroup_id(), rss, hiwater;
	struct totals tot = {};
	struct tr_sample *r;

	if (!st)
		return 0;
	send_cgroup(cg, 0, (__u64)cgroup_v2_kn(t), slot);
	sum_process(&tot, BPF_CORE_READ(t, signal));
	rss = rss_pages(mm);
	hiwater = image_peak_pages(mm, rss);
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
	r->run_delay_ns = tot.run_delay + st->exited_run_delay_ns; /* listed threads, then those gone */
	r->cgroup_id = cg;
	r->uid = (__u32)bpf_get_current_uid_gid();
	r->nr_threads = tot.nr_threads;
	r->state_flags = st->flags & (TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING);
	r->flags = tot.flags | (reclaim_measured ? 0 : TR_EXIT_NO_RECLAIM);
	r->reclaim_ns = st->reclaim_ns;
	BPF_CORE_READ_STR_INTO(&r->comm, t, group_leader, comm);
	r->memcg_limit_bytes = memcg_limit_bytes(memory_css(t));
	r->cpu_quota_millicores = cpu_quota_millicores(t);
	r->cpus_allowed = (__u32)KREAD(t, nr_cpus_allowed);
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

/*
 * The time as of this CPU's current scheduler tick, for the sample check
 * at every context switch of a traced thread: there a clock read
 * (bpf_ktime_get_ns(), ~140 ns on the Firecracker guest of
 * docs/benchmarks.md) would be most of the program, and switches come
 * thousands of times per tick. The clock is read at the first switch of
 * each tick (bpf_jiffies64() changed) and kept per CPU: the value lags
 * by less than a tick (4 ms at HZ=250), so a switch-driven sample can
 * come that much late, never early, and the next interval is counted from
 * the earlier time. (bpf_ktime_get_coarse_ns() would do the same, but
 * tracing programs may not call it.) Only sched_switch uses it, and it
 * does not nest with itself on a CPU; the timer reads the clock.
 */
struct tick_time {
	__u64 jiffies;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tick_time);
} tick_times SEC(".maps");

static __always_inline __u64 tick_time_ns(void)
{
	__u32 zero = 0;
	struct tick_time *t;
	__u64 j;

	/*
	 * Tracing programs reach bpf_jiffies64() through the base helpers they
	 * fall back to, there by 5.15 at the latest: bpf_task_pt_regs() (5.15)
	 * stands as the test. Before, the clock at every switch.
	 */
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return bpf_ktime_get_ns();
	t = bpf_map_lookup_elem(&tick_times, &zero);
	if (!t)
		return bpf_ktime_get_ns();
	j = bpf_jiffies64();
	if (t->jiffies != j) {
		t->jiffies = j;
		t->ns = bpf_ktime_get_ns();
	}
	return t->ns;
}

/*
 * Sample the current process if its interval has passed (now: the time,
 * on bpf_ktime_get_ns()'s clock). The 1/16 slack keeps a timer that fires
 * once per interval from missing every other tick through jitter. Two
 * CPUs racing can both send one: rare, and the processor keeps
 * consecutive samples apart by their times.
 */
static __always_inline void maybe_sample(struct tr_pstate *st, __u32 tgid, __u32 slot, __u64 now)
{
	if (now < st->last_sample_ns + sample_interval_ns - sample_interval_ns / 16)
		return;
	st->last_sample_ns = now;
	if (pstate_of(tgid, process_start(current_task())))
		send_sample(tgid, slot);
}

/*
 * The dying thread's last switch: add what the scheduler charged it since
 * sched_process_exit, send. prev: current_task() (the dying thread, tid).
 */
static __always_inline int final_switch(struct task_struct *prev, __u32 tid)
{
	struct pending_exit *pe = bpf_map_lookup_elem(&pending_exits, &tid);

	if (!pe)
		return 0;
	pe->rec.runtime_ns += KREAD(prev, se.sum_exec_runtime) - pe->thread_runtime_ns;
	pe->rec.utime_ns += KREAD(prev, utime) - pe->thread_utime_ns;
	pe->rec.stime_ns += KREAD(prev, stime) - pe->thread_stime_ns;
	if (bpf_ringbuf_output(&events, &pe->rec, sizeof(pe->rec), wakeup_flags()))
		count_drop(TR_EXIT);
	bpf_map_delete_elem(&pending_exits, &tid);
	return 0;
}

/*
 * prev (current_task()) goes to sleep uninterruptibly: note when, and
 * whether it waits for I/O (io_schedule()).
 */
static __always_inline void sleep_starts(struct task_struct *prev, __u32 tid, __u32 tgid)
{
	struct blocked b = {
		.since_ns = bpf_ktime_get_ns(),
		.tgid = tgid,
		.iowait = TASK_BTF ? BPF_CORE_READ_BITFIELD(prev, in_iowait) : BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait),
	};

	if (!bpf_map_update_elem(&blocked, &tid, &b, BPF_NOEXIST))
		__sync_fetch_and_add(&blocked_outstanding, 1);
	else /* an entry whose wakeup was never seen */
		bpf_map_update_elem(&blocked, &tid, &b, BPF_ANY);
}

/*
 * Called in prev's context (current == prev) before the switch: prev is
 * read as current_task(), not through args[1], which the verifier knows
 * only as a number. args: preempt, prev, next, prev_state (the last from
 * 5.18: before, the program does not load and the collector falls back,
 * docs/schema.md).
 */
SEC("raw_tp/sched_switch")
int handle_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = current_task();
	unsigned int state = (unsigned int)ctx->args[3];
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct tr_pstate *st;

	if (state == TASK_DEAD_STATE)
		return final_switch(prev, (__u32)id);
	if (!tgid) /* the idle task */
		return 0;
	st = pstate_current(prev, tgid);
	if (!st || !(st->flags & TR_PSTATE_TRACED))
		return 0;
	if ((state & TASK_UNINTERRUPTIBLE_STATE) && !(state & TASK_NOLOAD_STATE))
		sleep_starts(prev, (__u32)id, tgid);
	maybe_sample(st, tgid, 0, tick_time_ns());
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
	if (st && (st->flags & TR_PSTATE_TRACED)) /* once per interval per CPU: the precise clock */
		maybe_sample(st, tgid, 1, bpf_ktime_get_ns());
	return 0;
}
