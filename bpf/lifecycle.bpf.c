// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: exec, fork (processes only), exit (last thread only,
 * with the kernel's own totals) and OOM victims. Tracepoints only: they are
 * a stable interface, and this is what every supported kernel offers.
 * Record layouts: include/records.h. Every failed ring-buffer write is
 * counted per record type in `drop_counts`, which the collector reports.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "records.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile __u64 page_size = 4096;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by the loader */
} events SEC(".maps");

/*
 * Failed ring-buffer writes by record type. A global (.bss), so the
 * collector reads it through libbpf's memory mapping: no bpf() syscall
 * after it has dropped its privileges.
 */
__u64 drop_counts[TR_KERNEL_TYPES_END];

/*
 * Exits wait here, keyed by thread id, for the thread's final context
 * switch: only then has the scheduler charged its last slice of CPU (a
 * short process may never have been charged at all at sched_process_exit).
 * Set by the loader when the sched_switch hook could be loaded.
 */
const volatile bool exit_at_switch = false;

#define TASK_DEAD_STATE 0x80 /* TASK_DEAD in every kernel since 4.14 */

struct pending_exit {
	struct tr_exit rec;
	__u64 thread_runtime_ns; /* this thread's figures when the record was built */
	__u64 thread_utime_ns;
	__u64 thread_stime_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct pending_exit);
} pending_exits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pending_exit);
} exit_scratch SEC(".maps");

/* An exec record is too big for the BPF stack: build it per CPU, then copy out its used part. */
struct exec_buf {
	struct tr_exec e;
	/* Twice the kept sizes: offsets and lengths are masked with 2^n - 1 for the verifier. */
	char data[2 * TR_PATH_MAX + 2 * TR_ARGV_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_buf);
} exec_scratch SEC(".maps");

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

static __always_inline void fill_hdr(struct tr_hdr *h, __u16 type)
{
	h->type = type;
	h->version = RECORDS_VERSION;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = bpf_ktime_get_ns();
}

/* Start time of the process (its group leader): with the tgid, names one process lifetime. */
static __always_inline __u64 process_start(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_time);
}

SEC("tracepoint/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid(), ug = bpf_get_current_uid_gid();
	unsigned long arg_start, arg_end;
	__u32 zero = 0, true_len;
	__u64 path_len, argv_len, size;
	struct exec_buf *b;
	long n;

	b = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!b)
		return 0;
	fill_hdr(&b->e.hdr, TR_EXEC);
	b->e.pid = (__u32)id;
	b->e.tgid = id >> 32;
	b->e.ppid = BPF_CORE_READ(task, real_parent, tgid);
	b->e.uid = (__u32)ug;
	b->e.gid = ug >> 32;
	b->e.flags = 0;
	b->e.start_ns = process_start(task);
	b->e.cgroup_id = bpf_get_current_cgroup_id();
	b->e.pad = 0;
	bpf_get_current_comm(b->e.comm, sizeof(b->e.comm));

	/* The path as execve() was given it, from the tracepoint's own record. */
	n = bpf_probe_read_kernel_str(b->data, TR_PATH_MAX,
				      (void *)ctx + (ctx->__data_loc_filename & 0xFFFF));
	if (n <= 0) {
		b->data[0] = 0;
		n = 1;
	}
	if (n >= TR_PATH_MAX)
		b->e.flags |= TR_EXEC_PATH_TRUNCATED;
	path_len = n > TR_PATH_MAX ? TR_PATH_MAX : (__u32)n;

	/* argv: the new image's argument area, NUL-separated strings. */
	arg_start = BPF_CORE_READ(task, mm, arg_start);
	arg_end = BPF_CORE_READ(task, mm, arg_end);
	true_len = arg_end > arg_start ? (__u32)(arg_end - arg_start) : 0;
	argv_len = true_len > TR_ARGV_MAX ? TR_ARGV_MAX : true_len;
	if (argv_len < true_len)
		b->e.flags |= TR_EXEC_ARGV_TRUNCATED;
	/*
	 * No-op masks (the values are already in range) that the verifier can
	 * follow; the empty asm keeps the compiler from dropping them.
	 */
	asm volatile("" : "+r"(path_len), "+r"(argv_len));
	path_len &= 2 * TR_PATH_MAX - 1;
	argv_len &= 2 * TR_ARGV_MAX - 1;
	if (argv_len && bpf_probe_read_user(b->data + path_len, argv_len, (void *)arg_start)) {
		b->e.flags |= TR_EXEC_ARGV_FAULT;
		argv_len = 0;
	}
	b->e.path_len = path_len;
	b->e.argv_len = argv_len;
	b->e.argv_true_len = true_len;

	size = sizeof(b->e) + path_len + argv_len;
	if (size > sizeof(*b)) /* cannot happen; tells the verifier */
		return 0;
	if (bpf_ringbuf_output(&events, b, size, wakeup_flags()))
		count_drop(TR_EXEC);
	return 0;
}

/* raw tracepoint: the child task is an argument, so threads can be told from processes. */
SEC("raw_tp/sched_process_fork")
int handle_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct tr_fork *r;

	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0; /* a new thread, not a new process */
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count_drop(TR_FORK);
		return 0;
	}
	fill_hdr(&r->hdr, TR_FORK);
	r->parent_tgid = BPF_CORE_READ(parent, tgid);
	r->child_tgid = BPF_CORE_READ(child, tgid);
	r->parent_start_ns = process_start(parent);
	r->child_start_ns = BPF_CORE_READ(child, start_time); /* the child leads its group */
	r->uid = (__u32)bpf_get_current_uid_gid();
	r->pad = 0;
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

#define MAX_THREADS_SUMMED 256

/* Per-thread counters, summed over the process like the kernel's thread_group_cputime(). */
static __always_inline void add_thread(struct tr_exit *r, struct task_struct *t, bool io)
{
	r->utime_ns += BPF_CORE_READ(t, utime);
	r->stime_ns += BPF_CORE_READ(t, stime);
	r->runtime_ns += BPF_CORE_READ(t, se.sum_exec_runtime);
	r->nvcsw += BPF_CORE_READ(t, nvcsw);
	r->nivcsw += BPF_CORE_READ(t, nivcsw);
	r->min_flt += BPF_CORE_READ(t, min_flt);
	r->maj_flt += BPF_CORE_READ(t, maj_flt);
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
 * Totals of the process: what threads already released left in
 * signal_struct, plus every thread still on the group's list (this one, a
 * zombie leader, threads still on their way out).
 */
static __always_inline void sum_process(struct tr_exit *r, struct signal_struct *sig)
{
	bool io = bpf_core_field_exists(sig->ioac);
	struct list_head *head = &sig->thread_head, *node;
	unsigned long off = bpf_core_field_offset(struct task_struct, thread_node);

	r->utime_ns = BPF_CORE_READ(sig, utime);
	r->stime_ns = BPF_CORE_READ(sig, stime);
	r->runtime_ns = BPF_CORE_READ(sig, sum_sched_runtime);
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
	node = BPF_CORE_READ(sig, thread_head.next);
	for (int i = 0; i < MAX_THREADS_SUMMED; i++) {
		if (!node || node == head)
			return;
		add_thread(r, (struct task_struct *)((char *)node - off), io);
		r->nr_threads++;
		node = BPF_CORE_READ(node, next);
	}
	r->flags |= TR_EXIT_THREADS_TRUNCATED;
}

/* Did this thread's exit end the process? The tracepoint says so itself from 6.16. */
static __always_inline bool group_dead(struct trace_event_raw_sched_process_exit *ctx, struct signal_struct *sig)
{
	if (bpf_core_field_exists(ctx->group_dead))
		return BPF_CORE_READ(ctx, group_dead);
	/*
	 * Older kernels: do_exit() has decremented signal->live before this
	 * point. Two threads racing out can both see 0; the processor keeps one
	 * exit per (tgid, start_ns).
	 */
	return BPF_CORE_READ(sig, live.counter) == 0;
}

SEC("tracepoint/sched/sched_process_exit")
int handle_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct signal_struct *sig = BPF_CORE_READ(task, signal);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tid = (__u32)id;
	struct pending_exit *pe;
	struct tr_exit *r;

	if (!group_dead(ctx, sig))
		return 0;
	pe = bpf_map_lookup_elem(&exit_scratch, &zero);
	if (!pe)
		return 0;
	r = &pe->rec;
	__builtin_memset(pe, 0, sizeof(*pe));
	fill_hdr(&r->hdr, TR_EXIT);
	r->pid = tid;
	r->tgid = id >> 32;
	r->ppid = BPF_CORE_READ(task, real_parent, tgid);
	r->exit_code = BPF_CORE_READ(task, exit_code);
	r->start_ns = process_start(task);
	r->cgroup_id = bpf_get_current_cgroup_id();
	sum_process(r, sig);
	/* do_exit() has folded the final mm's high-water mark into signal->maxrss. */
	r->maxrss_bytes = BPF_CORE_READ(sig, maxrss) * page_size;
	if (bpf_core_field_exists(task->sched_info))
		r->run_delay_ns = BPF_CORE_READ(task, sched_info.run_delay);
	else
		r->flags |= TR_EXIT_NO_SCHED_INFO;
	BPF_CORE_READ_STR_INTO(&r->comm, task, group_leader, comm);
	pe->thread_runtime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	pe->thread_utime_ns = BPF_CORE_READ(task, utime);
	pe->thread_stime_ns = BPF_CORE_READ(task, stime);
	if (exit_at_switch && !bpf_map_update_elem(&pending_exits, &tid, pe, BPF_ANY))
		return 0;
	if (bpf_ringbuf_output(&events, r, sizeof(*r), wakeup_flags()))
		count_drop(TR_EXIT);
	return 0;
}

/*
 * The dying thread's last context switch: add what the scheduler charged
 * it since sched_process_exit, then send the exit. Every other switch
 * returns after one comparison.
 */
SEC("raw_tp/sched_switch")
int handle_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct pending_exit *pe;
	__u32 tid;

	if ((unsigned int)ctx->args[3] != TASK_DEAD_STATE)
		return 0;
	tid = BPF_CORE_READ(prev, pid);
	pe = bpf_map_lookup_elem(&pending_exits, &tid);
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

SEC("tracepoint/oom/mark_victim")
int handle_oom(struct trace_event_raw_mark_victim *ctx)
{
	struct tr_oom *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count_drop(TR_OOM);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	fill_hdr(&r->hdr, TR_OOM);
	r->pid = ctx->pid; /* the victim: not the current task */
	/* The memory figures joined the tracepoint in 5.x/6.x; older kernels give the pid only. */
	if (bpf_core_field_exists(ctx->total_vm)) {
		r->total_vm_kb = BPF_CORE_READ(ctx, total_vm);
		r->anon_rss_kb = BPF_CORE_READ(ctx, anon_rss);
		r->file_rss_kb = BPF_CORE_READ(ctx, file_rss);
		r->shmem_rss_kb = BPF_CORE_READ(ctx, shmem_rss);
		r->pgtables_kb = BPF_CORE_READ(ctx, pgtables);
		r->oom_score_adj = BPF_CORE_READ(ctx, oom_score_adj);
	}
	if (bpf_core_field_exists(ctx->uid))
		r->uid = BPF_CORE_READ(ctx, uid);
	r->trigger_cgroup_id = bpf_get_current_cgroup_id();
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}
