// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: exec (with its context: working directory, cgroups,
 * namespaces, allowlisted environment), fork (processes only), exit (a
 * record at the last thread's, with the kernel's own totals and the
 * per-process state; an earlier thread's leaves its run-queue wait in that
 * state) and OOM victims. Tracepoints only: they are a stable interface,
 * and this is what every supported kernel offers. Every failed ring-buffer
 * write is counted per record type in `drop_counts`, which the collector
 * reports.
 */
#include "tracer.bpf.h"
#include "paths.bpf.h"
#include "proc.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pending_exit);
} exit_scratch SEC(".maps");

/*
 * The environment scan's bounds: the cost of an exec must not grow with a
 * huge environment. Past them the record says TR_EXEC_ENV_TRUNCATED.
 */
#define ENV_SCAN_STRINGS 256
#define ENV_SCAN_BYTES 32768

/*
 * Does the string at data[pos] of this CPU's exec buffer start with an
 * allowlisted "KEY="? A global function of its own, so that the verifier
 * checks its loops once, not once per string of the scan.
 */
__attribute__((noinline)) int env_allowed(__u32 pos)
{
	const struct tr_kernel_rules *r = active_rules();
	__u32 zero = 0;
	struct exec_buf *b = bpf_map_lookup_elem(&exec_scratch, &zero);
	const char *s;
	__u64 first;

	if (!b)
		return 0;
	s = b->data + (pos & EXEC_MASK);
	first = *(const __u64 *)s;
	for (int k = 0; k < TR_RULES_ENV_MAX; k++) {
		const struct tr_env_key *key;
		__u64 diff = 0;

		if (k >= r->n_env)
			break;
		key = &r->env[k];
		/* Most strings differ from every key in their first 8 bytes: one compare each. */
		if ((first & key->mask[0]) != key->word[0])
			continue;
		/* Masks are zero past the key: comparing every word is comparing the key. */
		for (int w = 1; w < TR_RULES_ENV_WORDS; w++)
			diff |= (*(const __u64 *)(s + 8 * w) & key->mask[w]) ^ key->word[w];
		if (!diff)
			return 1;
	}
	return 0;
}

/*
 * Copy the allowlisted "KEY=VALUE" strings of the environment [p, end) to
 * this CPU's exec buffer at data[off]. Each string is read once, into the
 * place it would have in the record: kept by advancing the length, dropped
 * by not advancing (the bytes left behind are never sent). Returns the
 * length kept. A global function: checked once by the verifier.
 */
__attribute__((noinline)) int read_env(__u32 off, __u64 p, __u64 end)
{
	const struct tr_kernel_rules *r = active_rules();
	struct exec_buf *b;
	__u64 start = p, first_bytes = 0;
	__u32 len = 0, zero = 0;
	bool cont = false;

	b = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!b || !r->n_env)
		return 0;
	/*
	 * Bit (c & 63) for the first byte c of each allowlisted key (the low
	 * byte of its first word): a string whose first byte has no bit set
	 * matches no key, and is dropped without calling env_allowed(), which
	 * compares it with every key. Most of an environment is dropped so.
	 */
	for (int k = 0; k < TR_RULES_ENV_MAX; k++) {
		if (k >= r->n_env)
			break;
		first_bytes |= 1ULL << (r->env[k].word[0] & 63);
	}
	for (int i = 0; i < ENV_SCAN_STRINGS && p < end && p - start < ENV_SCAN_BYTES; i++) {
		__u32 pos = (off + len) & EXEC_MASK;
		bool was_cont = cont;
		long n = bpf_probe_read_user_str(b->data + pos, ENV_READ_MAX, (void *)p);

		if (n <= 0) {
			b->e.flags |= TR_EXEC_ENV_TRUNCATED;
			return len;
		}
		/* A full read may have stopped inside the string: the rest is read as a continuation. */
		cont = n == ENV_READ_MAX;
		p += cont ? n - 1 : n;
		if (was_cont || !((first_bytes >> (b->data[pos] & 63)) & 1) || !env_allowed(pos))
			continue;
		if (cont || len + n > TR_ENV_MAX)
			b->e.flags |= TR_EXEC_ENV_TRUNCATED;
		else
			len += n;
	}
	if (p < end)
		b->e.flags |= TR_EXEC_ENV_TRUNCATED;
	return len;
}

/*
 * The working directory into b->data at off; its length (NUL included), 0
 * if unknown. The path's ends are read as plain pointers: dentry_path() is
 * a global function (so a BTF hop to fs would save one helper call, for
 * the verifier's BTF searches: tracer.bpf.h).
 */
static __always_inline __u32 read_cwd(struct exec_buf *b, __u32 off, struct task_struct *task)
{
	struct fs_struct *fs = BPF_CORE_READ(task, fs);
	struct path pwd = BPF_CORE_READ(fs, pwd), root = BPF_CORE_READ(fs, root);
	__u32 zero = 0, pos, len;
	struct path_scratch *ps;
	int r;

	if (!fs)
		return 0;
	r = dentry_path(0, (__u64)pwd.dentry, (__u64)pwd.mnt, (__u64)root.dentry, (__u64)root.mnt);
	pos = PATH_POS(r);
	ps = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!ps || !path_pos_valid(pos))
		return 0;
	if (r & PATH_TRUNCATED)
		b->e.flags |= TR_EXEC_CWD_TRUNCATED;
	len = path_len(pos);
	bpf_probe_read_kernel(b->data + (off & EXEC_MASK), len & PATH_MASK, ps->buf + (pos & PATH_MASK));
	return len;
}

/*
 * Inode number of the task's pid namespace (the one its pid lives in, not
 * its children's): pid->numbers[pid->level]. task: current_task(). The
 * host's processes (level 0) are read with plain loads; a variable index
 * needs bpf_probe_read_kernel.
 */
static __always_inline __u32 pid_ns_inum(struct task_struct *task)
{
	struct pid *pid = KREAD(task, thread_pid);
	unsigned int level = pid ? KREAD(pid, level) : 0;
	struct upid *up;

	if (!pid || level > 32)
		return 0;
	if (TASK_BTF && level == 0)
		return pid->numbers[0].ns->ns.inum;
	up = (struct upid *)((char *)pid + bpf_core_field_offset(struct pid, numbers) +
			     level * bpf_core_type_size(struct upid));
	return BPF_CORE_READ(up, ns, ns.inum);
}

SEC("tracepoint/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = current_task();
	__u64 id = bpf_get_current_pid_tgid(), ug = bpf_get_current_uid_gid();
	unsigned long arg_start, arg_end;
	struct mm_struct *mm;
	__u32 zero = 0, tgid = id >> 32, true_len, flags;
	__u64 path_len, argv_len, cwd_len, env_len, size, start = process_start(task);
	struct tr_pstate *st, fresh = {};
	struct exec_buf *b;
	long n;

	st = pstate_of(tgid, start);
	if (!st) {
		if (trace_subtree)
			return 0;
		/* Daemon mode: a process new to us (its fork was not seen). */
		fresh.start_ns = start;
		fresh.last_sample_ns = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&pstates, &tgid, &fresh, BPF_ANY))
			count_drop(TR_DROP_STATE);
		st = bpf_map_lookup_elem(&pstates, &tgid);
		if (!st)
			st = &fresh;
	}
	if (st->flags & PS_EXCLUDED)
		return 0;
	b = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!b)
		return 0;
	__builtin_memset(&b->e, 0, sizeof(b->e));
	fill_hdr(&b->e.hdr, TR_EXEC);
	b->e.pid = (__u32)id;
	b->e.tgid = tgid;
	b->e.ppid = KREAD(task, real_parent, tgid);
	b->e.uid = (__u32)ug;
	b->e.gid = ug >> 32;
	b->e.start_ns = start;
	bpf_get_current_comm(b->e.comm, sizeof(b->e.comm));

	/* The path as execve() was given it, from the tracepoint's own record. */
	n = bpf_probe_read_kernel_str(b->data, TR_PATH_MAX, (void *)ctx + (ctx->__data_loc_filename & 0xFFFF));
	if (n <= 0) {
		b->data[0] = 0;
		n = 1;
	}
	if (n >= TR_PATH_MAX)
		b->e.flags |= TR_EXEC_PATH_TRUNCATED;
	path_len = n > TR_PATH_MAX ? TR_PATH_MAX : (__u32)n;
	b->e.path_len = path_len;

	flags = rules_decide(st->flags, 1);
	st->flags = flags;
	if (flags & PS_EXCLUDED) {
		/* The path says what was excluded; nothing else of it (or its descendants) is sent. */
		b->e.flags |= TR_EXEC_EXCLUDED;
		if (bpf_ringbuf_output(&events, b, (sizeof(b->e) + path_len) & 1023, wakeup_flags()))
			count_drop(TR_EXEC);
		return 0;
	}
	if (!(flags & TR_PSTATE_TRACED))
		return 0;

	b->e.cgroup_id = bpf_get_current_cgroup_id();
	/* Paths of its cgroups go first, so the processor can resolve the ids when the exec arrives. */
	b->e.cgroup_v1_id = send_task_cgroups(b->e.cgroup_id, 0);
	b->e.mnt_ns = KREAD(task, nsproxy, mnt_ns, ns.inum);
	b->e.pid_ns = pid_ns_inum(task);

	/* argv: the new image's argument area, NUL-separated strings. */
	mm = KREAD(task, mm);
	arg_start = KREAD(mm, arg_start);
	arg_end = KREAD(mm, arg_end);
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
	b->e.argv_len = argv_len;
	b->e.argv_true_len = true_len;

	cwd_len = read_cwd(b, path_len + argv_len, task);
	b->e.cwd_len = cwd_len;
	env_len = read_env(path_len + argv_len + cwd_len, KREAD(mm, env_start), KREAD(mm, env_end));
	b->e.env_len = env_len;

	size = sizeof(b->e) + path_len + argv_len + cwd_len + env_len;
	if (size > sizeof(*b)) /* cannot happen; tells the verifier */
		return 0;
	if (bpf_ringbuf_output(&events, b, size, wakeup_flags()))
		count_drop(TR_EXEC);
	return 0;
}

/*
 * raw tracepoint: the child task is an argument, so threads can be told
 * from processes. Runs before the child does: its state (inherited from the
 * parent) is in place before any event of its own. The parent is the
 * current task (args[0]), read through current_task(); the child only
 * through bpf_probe_read_kernel (a raw tracepoint's argument is a plain
 * number to the verifier): its pid and tgid, adjacent, in one read.
 */
SEC("raw_tp/sched_process_fork")
int handle_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct task_struct *parent = current_task();
	__u32 ptgid = bpf_get_current_pid_tgid() >> 32, ids[2] = {};
	struct tr_pstate *pst, cst = {};
	struct tr_fork *r;
	__u64 now;

	pst = pstate_current(parent, ptgid);
	if (!pst)
		return 0;
	if (bpf_core_field_offset(struct task_struct, tgid) == bpf_core_field_offset(struct task_struct, pid) + 4) {
		bpf_probe_read_kernel(ids, sizeof(ids), (char *)child + bpf_core_field_offset(struct task_struct, pid));
	} else {
		ids[0] = BPF_CORE_READ(child, pid);
		ids[1] = BPF_CORE_READ(child, tgid);
	}
	if (ids[0] != ids[1])
		return 0; /* a new thread, not a new process */
	now = bpf_ktime_get_ns(); /* one clock read: the record's time and the child's first sample's */
	cst.start_ns = BPF_CORE_READ(child, start_time); /* the child leads its group */
	cst.last_sample_ns = now;                        /* first sample one interval after birth */
	cst.flags = pst->flags & (TR_PSTATE_TRACED | PS_EXCLUDED | PS_NOT_INCLUDED);
	if (bpf_map_update_elem(&pstates, &ids[1], &cst, BPF_ANY))
		count_drop(TR_DROP_STATE);
	if (!(pst->flags & TR_PSTATE_TRACED))
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count_drop(TR_FORK);
		return 0;
	}
	fill_hdr_at(&r->hdr, TR_FORK, now);
	r->parent_tgid = ptgid;
	r->child_tgid = ids[1];
	r->parent_start_ns = process_start(parent);
	r->child_start_ns = cst.start_ns;
	r->uid = (__u32)bpf_get_current_uid_gid();
	r->pad = 0;
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
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

/*
 * The process's state (st, from pstate_of(); NULL: none) goes into its exit
 * record and is deleted. Returns its state flags, or 0 when no exit record
 * is to be sent.
 */
static __always_inline __u32 take_state(struct tr_exit *r, struct tr_pstate *st, __u32 tgid)
{
	__u32 flags;

	if (!st) {
		/* Daemon mode: a process that was running before tracing started and never seen since. */
		flags = rules_decide(TR_PSTATE_PREEXISTING, 0);
		return flags & TR_PSTATE_TRACED ? flags & (TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING) : 0;
	}
	flags = st->flags;
	r->net_tx_bytes = st->net_tx;
	r->net_rx_bytes = st->net_rx;
	r->iowait_ns = st->iowait_ns;
	r->blocked_ns = st->blocked_ns;
	r->net_wait_ns = st->net_wait_ns;
	r->files_dropped = st->files_dropped;
	r->run_delay_ns = st->exited_run_delay_ns; /* the last thread's own is added by the caller */
	r->reclaim_ns = st->reclaim_ns;
	bpf_map_delete_elem(&pstates, &tgid);
	return flags & TR_PSTATE_TRACED ? flags & (TR_PSTATE_TRACED | TR_PSTATE_PREEXISTING) : 0;
}

/*
 * The task's memory cgroup state (memory_css()), through BTF where the
 * kernel allows it: a few loads instead of two helper calls.
 */
static __always_inline struct cgroup_subsys_state *exit_memory_css(struct task_struct *task)
{
	int idx = memory_subsys();
	struct css_set *cs;

	if (!TASK_BTF)
		return memory_css(task);
	cs = task->cgroups;
	if (idx < 0 || !cs)
		return NULL;
	return cs->subsys[idx];
}

/*
 * The high-water mark of the memory cgroup whose state is css (the page
 * counter's watermark: memory.peak on v2, memory.max_usage_in_bytes on
 * v1), in bytes; 0 without a memory controller. The processor decides
 * whether that cgroup belongs to one step alone.
 */
static __always_inline __u64 memcg_peak_bytes(struct cgroup_subsys_state *css)
{
	__u64 pages = 0;

	if (!css)
		return 0;
	bpf_probe_read_kernel(&pages, sizeof(pages),
			      (char *)css - bpf_core_field_offset(struct mem_cgroup, css) +
				      bpf_core_field_offset(struct mem_cgroup, memory.watermark));
	return pages * page_size;
}

/*
 * The process's totals: the exiting task's own fields when it is the only
 * thread and the kernel has BTF pointers (nearly every short process), the
 * thread walk otherwise.
 */
static __always_inline void exit_totals(struct totals *tot, struct task_struct *task, struct signal_struct *sig)
{
	if (TASK_BTF && KREAD(sig, nr_threads) == 1)
		sum_one_thread(tot, task, sig);
	else
		sum_process(tot, BPF_CORE_READ(task, signal));
}

/*
 * A thread whose exit does not end its process: its run-queue wait is kept
 * in the process's state, traced processes only (one lookup for any other),
 * because the kernel folds no thread's run_delay into signal_struct and the
 * thread's own is gone once it is released. The exit record adds the sum.
 */
static __always_inline void thread_exit(struct task_struct *task, __u32 tgid)
{
	struct tr_pstate *st = bpf_map_lookup_elem(&pstates, &tgid);

	if (!st || !(st->flags & TR_PSTATE_TRACED) || !bpf_core_field_exists(task->sched_info))
		return;
	/* An earlier process's state under a reused pid (start 0: seeded, not yet claimed, is this one). */
	if (st->start_ns && st->start_ns != process_start(task))
		return;
	__sync_fetch_and_add(&st->exited_run_delay_ns, KREAD(task, sched_info.run_delay));
}

/*
 * The end of a process (its last thread's exit). Decided first: the state
 * lookup is all an untraced process pays, after the group check. Then the
 * record, read through BTF where the kernel allows it.
 */
SEC("tracepoint/sched/sched_process_exit")
int handle_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	struct task_struct *task = current_task();
	struct signal_struct *sig = KREAD(task, signal);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tid = (__u32)id, tgid = id >> 32;
	struct cgroup_subsys_state *css;
	struct pending_exit *pe;
	struct mm_struct *mm;
	struct totals tot = {};
	struct tr_pstate *st;
	__u64 maxrss, image, start;
	struct tr_exit *r;

	if (!group_dead(ctx, sig)) {
		thread_exit(task, tgid);
		return 0;
	}
	start = process_start(task);
	st = pstate_of(tgid, start);
	if (!st && trace_subtree)
		return 0;
	pe = bpf_map_lookup_elem(&exit_scratch, &zero);
	if (!pe)
		return 0;
	r = &pe->rec;
	__builtin_memset(pe, 0, sizeof(*pe));
	r->start_ns = start;
	r->state_flags = take_state(r, st, tgid);
	if (!r->state_flags)
		return 0;
	fill_hdr(&r->hdr, TR_EXIT);
	r->pid = tid;
	r->tgid = tgid;
	r->ppid = KREAD(task, real_parent, tgid);
	r->exit_code = KREAD(task, exit_code);
	r->cgroup_id = bpf_get_current_cgroup_id();
	r->cgroup_v1_id = send_task_cgroups(r->cgroup_id, 0);
	exit_totals(&tot, task, sig);
	r->utime_ns = tot.utime;
	r->stime_ns = tot.stime;
	r->runtime_ns = tot.runtime;
	r->read_bytes = tot.read_bytes;
	r->write_bytes = tot.write_bytes;
	r->cancelled_write_bytes = tot.cancelled_write_bytes;
	r->rchar = tot.rchar;
	r->wchar = tot.wchar;
	r->syscr = tot.syscr;
	r->syscw = tot.syscw;
	r->nvcsw = tot.nvcsw;
	r->nivcsw = tot.nivcsw;
	r->min_flt = tot.min_flt;
	r->maj_flt = tot.maj_flt;
	r->nr_threads = tot.nr_threads;
	/*
	 * signal->maxrss holds the high-water marks of the process's earlier
	 * images (each exec folds the old one in, and a forked child's first
	 * image is a copy of its parent's): the rusage figure. The final image
	 * is still attached here from 6.16, where sched_process_exit runs
	 * before exit_mm(): its own peak is VmHWM's. Before 6.16 mm is NULL.
	 */
	mm = KREAD(task, mm);
	maxrss = KREAD(sig, maxrss);
	if (mm) {
		image = image_peak_pages(mm, rss_pages(mm));
		r->image_peak_rss_bytes = image * page_size;
		/* exit_mm() may fold it into signal->maxrss only after this point. */
		if (image > maxrss)
			maxrss = image;
	} else {
		tot.flags |= TR_EXIT_NO_IMAGE_PEAK;
	}
	r->maxrss_bytes = maxrss * page_size;
	r->flags = tot.flags | (reclaim_measured ? 0 : TR_EXIT_NO_RECLAIM);
	css = exit_memory_css(task);
	r->memcg_peak_bytes = memcg_peak_bytes(css);
	r->memcg_limit_bytes = memcg_limit_bytes(css);
	r->cpu_quota_millicores = cpu_quota_millicores(task);
	r->cpus_allowed = (__u32)KREAD(task, nr_cpus_allowed);
	/* Its threads that exited before (take_state), and the last one's own. */
	if (!(tot.flags & TR_EXIT_NO_SCHED_INFO))
		r->run_delay_ns += KREAD(task, sched_info.run_delay);
	if (tid == tgid) /* the leader: its comm is the current task's */
		bpf_get_current_comm(&r->comm, sizeof(r->comm));
	else
		BPF_CORE_READ_STR_INTO(&r->comm, task, group_leader, comm);
	pe->thread_runtime_ns = KREAD(task, se.sum_exec_runtime);
	pe->thread_utime_ns = KREAD(task, utime);
	pe->thread_stime_ns = KREAD(task, stime);
	if (exit_at_switch && !bpf_map_update_elem(&pending_exits, &tid, pe, BPF_ANY))
		return 0;
	if (bpf_ringbuf_output(&events, r, sizeof(*r), wakeup_flags()))
		count_drop(TR_EXIT);
	return 0;
}

#define MEMCG_DEPTH_MAX 8

/*
 * The memory cgroup whose limit was hit: the current task (the one that
 * hit it) is in it or below it, so the nearest ancestor-or-self with a
 * limit. memory.max on v2 and memory.limit_in_bytes on v1 are both
 * memcg->memory.max.
 */
static __always_inline void oom_memcg(struct tr_oom *r, struct task_struct *task)
{
	struct cgroup_subsys_state *css = memory_css(task), *own = css;
	__u64 unlimited = 0x7fffffffffffffffULL / page_size; /* PAGE_COUNTER_MAX on 64-bit: no limit */
	struct mem_cgroup *memcg;
	bool limited = false;

	for (int i = 0; i < MEMCG_DEPTH_MAX && css && !limited; i++) {
		memcg = (struct mem_cgroup *)((char *)css - bpf_core_field_offset(struct mem_cgroup, css));
		limited = BPF_CORE_READ(memcg, memory.max) < unlimited;
		if (!limited)
			css = BPF_CORE_READ(css, parent);
	}
	if (!limited) /* no limit anywhere: a global OOM; name the task's own memory cgroup, limit 0 */
		css = own;
	if (!css)
		return;
	memcg = (struct mem_cgroup *)((char *)css - bpf_core_field_offset(struct mem_cgroup, css));
	if (BPF_CORE_READ(memcg, memory.max) < unlimited)
		r->memcg_limit_bytes = BPF_CORE_READ(memcg, memory.max) * page_size;
	r->memcg_usage_bytes = BPF_CORE_READ(memcg, memory.usage.counter) * page_size;
	r->memcg_v1 = css_on_v1(css);
	r->memcg_id = BPF_CORE_READ(css, cgroup, kn, id);
	send_cgroup(r->memcg_id, r->memcg_v1, (__u64)BPF_CORE_READ(css, cgroup, kn), 0);
}

SEC("tracepoint/oom/mark_victim")
int handle_oom(struct trace_event_raw_mark_victim *ctx)
{
	struct task_struct *task = current_task();
	struct tr_oom h = {}, *r;

	fill_hdr(&h.hdr, TR_OOM);
	h.pid = ctx->pid; /* the victim: not the current task */
	/* The memory figures joined the tracepoint in 5.x/6.x; older kernels give the pid only. */
	if (bpf_core_field_exists(ctx->total_vm)) {
		h.total_vm_kb = BPF_CORE_READ(ctx, total_vm);
		h.anon_rss_kb = BPF_CORE_READ(ctx, anon_rss);
		h.file_rss_kb = BPF_CORE_READ(ctx, file_rss);
		h.shmem_rss_kb = BPF_CORE_READ(ctx, shmem_rss);
		h.pgtables_kb = BPF_CORE_READ(ctx, pgtables);
		h.oom_score_adj = BPF_CORE_READ(ctx, oom_score_adj);
	}
	if (bpf_core_field_exists(ctx->uid))
		h.uid = BPF_CORE_READ(ctx, uid);
	h.trigger_cgroup_id = bpf_get_current_cgroup_id();
	send_cgroup(h.trigger_cgroup_id, 0, (__u64)cgroup_v2_kn(task), 0);
	oom_memcg(&h, task);
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count_drop(TR_OOM);
		return 0;
	}
	__builtin_memcpy(r, &h, sizeof(h));
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}
