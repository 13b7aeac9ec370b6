/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's totals, summed like the kernel's thread_group_cputime(): what
 * released threads folded into signal_struct, plus every thread still on
 * signal->thread_head; and the allocation it runs under. Used by the exit
 * record and by samples.
 */
#ifndef TRACER_PROC_BPF_H
#define TRACER_PROC_BPF_H

#include "tracer.bpf.h"

#define MAX_THREADS_SUMMED 256

struct totals {
	__u64 utime, stime, runtime;
	__u64 nvcsw, nivcsw, min_flt, maj_flt;
	__u64 read_bytes, write_bytes, cancelled_write_bytes, rchar, wchar, syscr, syscw;
	__u64 run_delay; /* summed over the listed threads not exiting (the exited ones: tr_pstate) */
	__u32 nr_threads;
	__u32 flags;     /* TR_EXIT_* */
};

static __always_inline void add_thread(struct totals *r, struct task_struct *t, bool io, bool si)
{
	r->utime += BPF_CORE_READ(t, utime);
	r->stime += BPF_CORE_READ(t, stime);
	r->runtime += BPF_CORE_READ(t, se.sum_exec_runtime);
	r->nvcsw += BPF_CORE_READ(t, nvcsw);
	r->nivcsw += BPF_CORE_READ(t, nivcsw);
	r->min_flt += BPF_CORE_READ(t, min_flt);
	r->maj_flt += BPF_CORE_READ(t, maj_flt);
	/*
	 * A thread past PF_EXITING has reached, or is about to reach, its exit
	 * tracepoint, which adds its run delay to the process's state
	 * (tr_pstate.exited_run_delay_ns): a zombie leader stays listed until
	 * the whole process ends, and would count twice.
	 */
	if (si && !(BPF_CORE_READ(t, flags) & PF_EXITING_FLAG))
		r->run_delay += BPF_CORE_READ(t, sched_info.run_delay);
	if (!io)
		return;
	r->read_bytes += BPF_CORE_READ(t, ioac.read_bytes);
	r->write_bytes += BPF_CORE_READ(t, ioac.write_bytes);
	r->cancelled_write_bytes += BPF_CORE_READ(t, ioac.cancelled_write_bytes);
	r->rchar += BPF_CORE_READ(t, ioac.rchar);
	r->wchar += BPF_CORE_READ(t, ioac.wchar);
	r->syscr += BPF_CORE_READ(t, ioac.syscr);
	r->syscw += BPF_CORE_READ(t, ioac.syscw);
}

/*
 * The process's totals when the current task t is its only thread, read
 * through BTF (TASK_BTF): released threads' figures, which signal_struct
 * keeps, plus t's own; the same sums as sum_process(), in loads instead of
 * some thirty helper calls. What most exiting processes take.
 */
static __always_inline void sum_one_thread(struct totals *r, struct task_struct *t, struct signal_struct *sig)
{
	r->utime = KREAD(sig, utime) + KREAD(t, utime);
	r->stime = KREAD(sig, stime) + KREAD(t, stime);
	r->runtime = KREAD(sig, sum_sched_runtime) + KREAD(t, se.sum_exec_runtime);
	r->nvcsw = KREAD(sig, nvcsw) + KREAD(t, nvcsw);
	r->nivcsw = KREAD(sig, nivcsw) + KREAD(t, nivcsw);
	r->min_flt = KREAD(sig, min_flt) + KREAD(t, min_flt);
	r->maj_flt = KREAD(sig, maj_flt) + KREAD(t, maj_flt);
	if (bpf_core_field_exists(sig->ioac)) {
		r->read_bytes = KREAD(sig, ioac.read_bytes) + KREAD(t, ioac.read_bytes);
		r->write_bytes = KREAD(sig, ioac.write_bytes) + KREAD(t, ioac.write_bytes);
		r->cancelled_write_bytes = KREAD(sig, ioac.cancelled_write_bytes) + KREAD(t, ioac.cancelled_write_bytes);
		r->rchar = KREAD(sig, ioac.rchar) + KREAD(t, ioac.rchar);
		r->wchar = KREAD(sig, ioac.wchar) + KREAD(t, ioac.wchar);
		r->syscr = KREAD(sig, ioac.syscr) + KREAD(t, ioac.syscr);
		r->syscw = KREAD(sig, ioac.syscw) + KREAD(t, ioac.syscw);
	} else {
		r->flags |= TR_EXIT_NO_IO_ACCOUNTING;
	}
	if (!bpf_core_field_exists(t->sched_info))
		r->flags |= TR_EXIT_NO_SCHED_INFO;
	r->nr_threads = 1; /* run_delay: the caller reads t's own */
}

/*
 * Read without the kernel's lock: a thread released in the very instant
 * of the read can be counted twice or missed (docs/schema.md).
 */
SUBPROG int sum_process(struct totals *r, struct signal_struct *sig)
{
	bool io = bpf_core_field_exists(sig->ioac);
	bool si = bpf_core_field_exists(((struct task_struct *)0)->sched_info);
	struct list_head *head = &sig->thread_head, *node;
	unsigned long off = bpf_core_field_offset(struct task_struct, thread_node);

	r->utime = BPF_CORE_READ(sig, utime);
	r->stime = BPF_CORE_READ(sig, stime);
	r->runtime = BPF_CORE_READ(sig, sum_sched_runtime);
	r->nvcsw = BPF_CORE_READ(sig, nvcsw);
	r->nivcsw = BPF_CORE_READ(sig, nivcsw);
	r->min_flt = BPF_CORE_READ(sig, min_flt);
	r->maj_flt = BPF_CORE_READ(sig, maj_flt);
	if (io) {
		r->read_bytes = BPF_CORE_READ(sig, ioac.read_bytes);
		r->write_bytes = BPF_CORE_READ(sig, ioac.write_bytes);
		r->cancelled_write_bytes = BPF_CORE_READ(sig, ioac.cancelled_write_bytes);
		r->rchar = BPF_CORE_READ(sig, ioac.rchar);
		r->wchar = BPF_CORE_READ(sig, ioac.wchar);
		r->syscr = BPF_CORE_READ(sig, ioac.syscr);
		r->syscw = BPF_CORE_READ(sig, ioac.syscw);
	} else {
		r->flags |= TR_EXIT_NO_IO_ACCOUNTING;
	}
	if (!si)
		r->flags |= TR_EXIT_NO_SCHED_INFO;
	node = BPF_CORE_READ(sig, thread_head.next);
	for (int i = 0; i < MAX_THREADS_SUMMED; i++) {
		if (!node || node == head)
			return 0;
		add_thread(r, (struct task_struct *)((char *)node - off), io, si);
		r->nr_threads++;
		node = BPF_CORE_READ(node, next);
	}
	r->flags |= TR_EXIT_THREADS_TRUNCATED;
	return 0;
}

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
 * pages per CPU. mm: read from current_task() with KREAD.
 */
static __always_inline __u64 rss_pages(struct mm_struct *mm)
{
	struct mm_struct___pcpu *p = (void *)mm;
	struct mm_struct___atomic *a = (void *)mm;
	__s64 v = 0;

	if (!mm)
		return 0;
	if (bpf_core_field_exists(p->rss_stat))
		v = KREAD(p, rss_stat[0].count) + KREAD(p, rss_stat[1].count) + KREAD(p, rss_stat[3].count);
	else if (bpf_core_field_exists(a->rss_stat))
		v = KREAD(a, rss_stat.count[0].counter) + KREAD(a, rss_stat.count[1].counter) +
		    KREAD(a, rss_stat.count[3].counter);
	return v > 0 ? (__u64)v : 0;
}

/*
 * The peak resident set of the image mm, in pages: what VmHWM in
 * /proc/PID/status shows. hiwater_rss is brought up to date only when
 * RSS is about to fall (unmap, exit): the current figure, rss (from
 * rss_pages), can be above it. mm: as rss_pages().
 */
static __always_inline __u64 image_peak_pages(struct mm_struct *mm, __u64 rss)
{
	__u64 hiwater = mm ? KREAD(mm, hiwater_rss) : 0;

	return hiwater > rss ? hiwater : rss;
}

/* ---- the allocation a process runs under (exit records and samples, docs/schema.md) ---- */

#define LIMIT_DEPTH_MAX 8

/*
 * The tightest memory limit over the memory cgroup whose state is css and
 * its ancestors, in bytes; 0 when none is set. A limit's page counter
 * chains to its parent's, so the walk reads counters only. memory.max on
 * v2 and memory.limit_in_bytes on v1 are both the counter's max.
 */
static __always_inline __u64 memcg_limit_bytes(struct cgroup_subsys_state *css)
{
	__u64 unlimited = 0x7fffffffffffffffULL / page_size; /* PAGE_COUNTER_MAX on 64-bit */
	struct page_counter *pc;
	__u64 best = unlimited;

	if (!css)
		return 0;
	pc = (struct page_counter *)((char *)css - bpf_core_field_offset(struct mem_cgroup, css) +
				      bpf_core_field_offset(struct mem_cgroup, memory));
	for (int i = 0; i < LIMIT_DEPTH_MAX && pc; i++) {
		__u64 max = BPF_CORE_READ(pc, max);

		if (max < best)
			best = max;
		pc = BPF_CORE_READ(pc, parent);
	}
	return best < unlimited ? best * page_size : 0;
}

/*
 * The tightest CFS bandwidth limit over the task's CPU cgroup and its
 * ancestors (cpu.max on v2; cpu.cfs_quota_us over cpu.cfs_period_us on
 * v1), in thousandths of a CPU; 0 when none is set, or the kernel was
 * built without group scheduling or bandwidth control.
 */
static __always_inline __u32 cpu_quota_millicores(struct task_struct *task)
{
	__u64 best = 0xffffffffULL;
	struct task_group *tg;

	if (!bpf_core_field_exists(task->sched_task_group) || !bpf_core_field_exists(struct task_group, cfs_bandwidth))
		return 0;
	tg = KREAD(task, sched_task_group);
	for (int i = 0; i < LIMIT_DEPTH_MAX && tg; i++) {
		__u64 quota = KREAD(tg, cfs_bandwidth.quota);
		__u64 period = (__u64)KREAD(tg, cfs_bandwidth.period);

		/* RUNTIME_INF (no limit) is all ones; a quota is at most ~2^44 ns. */
		if (quota < (1ULL << 50) && period > 0 && quota * 1000 / period < best)
			best = quota * 1000 / period;
		tg = KREAD(tg, parent);
	}
	return best < 0xffffffffULL ? (best ? (__u32)best : 1) : 0;
}

#endif /* TRACER_PROC_BPF_H */
