/* SPDX-License-Identifier: Apache-2.0 */
#include "report.h"
#include "cgctx.h"
#include "report_ctx.h"
#include "report_steps.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cputime.h"
#include "hsort.h"

/* ------------------------------------------------------------------ */
/* Agent figures                                                      */
/* ------------------------------------------------------------------ */

void report_agent_from_session(struct report_agent *a, const struct session *s)
{
	const struct proctab *t = &s->tab;

	a->kernel_drops = s->st.kernel_drops;
	if (s->st.ring_drops > a->ring_drops)
		a->ring_drops = s->st.ring_drops;
	a->decode_errors = s->st.decode_errors;
	memcpy(a->decode_by_error, s->st.decode_by_error, sizeof(a->decode_by_error));
	a->table_full = t->st.table_full;
	a->no_memory = t->st.no_memory;
	a->records = s->st.records;
	a->records_copied = s->st.records_copied;
	a->processes_evicted = t->st.evicted;
	a->execs_dropped = t->st.execs_dropped;
	a->argv_dropped = t->st.argv_dropped;
	a->oom_unmatched = t->st.oom_unmatched;
	a->samples = t->st.samples;
	a->series_dropped = t->st.series_dropped;
	a->files_dropped = t->st.files_dropped;
	a->cgroups_dropped = s->cgroups.dropped;
	a->excluded = t->st.excluded;
	a->max_processes = t->max;
	a->end_record = s->st.end_seen;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

uint64_t report_dropped(const struct report_agent *a)
{
	uint64_t d = 0;

	d = add_sat(d, a->kernel_drops);
	d = add_sat(d, a->ring_drops);
	d = add_sat(d, a->ring_resets); /* a reset loses an unknown number of records: at least one */
	d = add_sat(d, a->decode_errors);
	d = add_sat(d, a->table_full);
	d = add_sat(d, a->no_memory);
	return d;
}

/* ------------------------------------------------------------------ */
/* The processes to report                                            */
/* ------------------------------------------------------------------ */

struct members {
	struct proc **v;
	size_t n;
};

static int by_start(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* The root's tree (everything without a root), in start order. */
static int collect(struct proctab *t, struct members *m)
{
	size_t n = 0;

	m->v = NULL;
	m->n = 0;
	if (t->root_pid)
		proctab_mark_tree(t);
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		n += !t->root_pid || p->in_tree;
	if (n == 0)
		return 0;
	m->v = malloc(n * sizeof(*m->v));
	if (!m->v)
		return -ENOMEM;
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (!t->root_pid || p->in_tree)
			m->v[m->n++] = p;
	hsort(m->v, m->n, sizeof(*m->v), by_start); /* not qsort: see hsort.h */
	return 0;
}

/* ------------------------------------------------------------------ */
/* What a process's exit says                                         */
/* ------------------------------------------------------------------ */

struct outcome {
	bool exited;
	unsigned signal;  /* 0: exited normally */
	bool core;
	unsigned status;  /* exit status, when signal == 0 */
	bool oom;
	uint64_t user_ns, sys_ns;
};

static struct outcome outcome_of(const struct proc *p)
{
	struct outcome o = { .exited = (p->flags & PROC_F_EXIT) != 0, .oom = (p->flags & PROC_F_OOM) != 0 };

	if (!o.exited)
		return o;
	o.signal = decode_exit_signal(p->exit.exit_code);
	o.core = decode_exit_core(p->exit.exit_code);
	o.status = decode_exit_status(p->exit.exit_code);
	cputime_adjust(p->exit.utime_ns, p->exit.stime_ns, p->exit.runtime_ns, &o.user_ns, &o.sys_ns);
	return o;
}

static const char *tool_of(const struct proc *p)
{
	if (p->image)
		return proc_image_tool(p->image);
	return p->comm[0] ? p->comm : NULL;
}

/* The id of p's step, or NULL. */
static const char *step_id(const struct report_input *in, const struct proc *p)
{
	const struct step *s = in->steps ? steps_of(in->steps, p) : NULL;

	return s ? s->id : NULL;
}

/*
 * How a process's end counts (docs/processor.md, "Signals: what
 * failed"). A non-zero status is a failure only where it decides
 * something: the main process of a step that failed (steps.c decides
 * which did) and the traced command itself. Anywhere else the status was
 * read by whoever ran the process and is theirs to judge: grep -q that
 * found nothing, test, a writer stopped by a closed pipe. A kill is a
 * kill wherever it lands, except SIGPIPE, the normal end of a writer
 * whose reader went away.
 */
enum end_kind {
	END_CLEAN,     /* exit 0, or no exit record */
	END_OOM,       /* the OOM killer */
	END_KILLED,    /* a signal other than SIGPIPE */
	END_FAILED,    /* non-zero (SIGPIPE included) where that is a failure */
	END_TOLERATED, /* non-zero (SIGPIPE included) where it is not */
};

static enum end_kind end_kind_of(const struct report_input *in, const struct proc *root, const struct proc *p)
{
	struct outcome o = outcome_of(p);
	const struct step *s = in->steps ? steps_of(in->steps, p) : NULL;

	if (o.oom)
		return END_OOM;
	if (!o.exited || (!o.signal && !o.status))
		return END_CLEAN;
	if (o.signal && o.signal != SIGPIPE)
		return END_KILLED;
	return p == root || (s && s->failed && s->main == p) ? END_FAILED : END_TOLERATED;
}

static uint64_t to_real(const struct report_input *in, uint64_t mono_ns)
{
	return mono_ns + in->mono_to_real_ns; /* modulo 2^64, so a negative offset works too */
}

/* ------------------------------------------------------------------ */
/* JSON                                                               */
/* ------------------------------------------------------------------ */

static void write_args(struct json *j, const struct proc_image *im)
{
	const char *a = proc_image_args(im);

	json_array_begin(j);
	for (uint32_t i = 0; i < im->argc; i++) {
		size_t len = strlen(a);

		json_string_n(j, a, len);
		a += len + 1;
	}
	json_array_end(j);
}

static const char *parent_source_name(uint8_t src)
{
	switch (src) {
	case PARENT_FROM_FORK: return "fork";
	case PARENT_FROM_EXEC: return "exec";
	case PARENT_FROM_EXIT: return "exit";
	default: return NULL;
	}
}

static void write_earlier_execs(struct json *j, const struct proc *p, const struct report_input *in)
{
	if (p->n_earlier == 0 && p->execs_dropped == 0)
		return;
	json_key(j, "execs");
	json_array_begin(j);
	for (uint32_t i = 0; i < p->n_earlier; i++) {
		const struct proc_image *im = p->earlier[i];

		json_object_begin(j);
		json_kv_string(j, "exe", proc_image_path(im));
		json_key(j, "argv");
		if (im->flags & PROC_IMAGE_ARGV_DROPPED)
			json_null(j);
		else
			write_args(j, im);
		json_kv_string(j, "tool", proc_image_tool(im));
		json_kv_u64(j, "ts_ns", to_real(in, im->ts_ns));
		json_object_end(j);
	}
	json_array_end(j);
	if (p->execs_dropped)
		json_kv_u64(j, "execs_dropped", p->execs_dropped);
}

/* The DESIGN.md fields, in their order; null where nothing was measured. */
static void write_design_fields(struct json *j, const struct proc *p, const struct outcome *o,
				const struct report_input *in)
{
	bool io = o->exited && !(p->exit.flags & TR_EXIT_NO_IO_ACCOUNTING);
	struct proc_waits w = report_waits(p);
	struct cgctx cg;
	bool cg_known = report_cgroup_context(p, in->cgroups, &cg);
	enum proc_peak_source peak_src;
	uint64_t peak = proc_peak_rss(p, &peak_src);

	json_kv_u64(j, "pid", p->tgid);
	json_kv_u64_or_null(j, "ppid", p->parent_src != PARENT_UNKNOWN, p->ppid);
	json_kv_u64(j, "start_ns", to_real(in, p->start_ns));
	json_kv_u64_or_null(j, "end_ns", o->exited, to_real(in, p->exit.hdr.ts_ns));
	json_kv_string(j, "exe", p->image ? proc_image_path(p->image) : NULL);
	json_key(j, "argv");
	if (p->image && !(p->image->flags & PROC_IMAGE_ARGV_DROPPED))
		write_args(j, p->image);
	else
		json_null(j);
	json_kv_string(j, "cwd", p->image && p->image->cwd_len ? proc_image_cwd(p->image) : NULL);
	json_kv_string(j, "tool", tool_of(p));
	json_kv_string(j, "step", step_id(in, p));
	json_kv_u64_or_null(j, "exit_code", o->exited && o->signal == 0, o->status);
	json_kv_u64_or_null(j, "signal", o->exited, o->signal);
	json_kv_bool_or_null(j, "core_dumped", o->exited, o->core);
	json_kv_bool(j, "oom_killed", o->oom);
	json_kv_u64_or_null(j, "cpu_user_ns", o->exited, o->user_ns);
	json_kv_u64_or_null(j, "cpu_sys_ns", o->exited, o->sys_ns);
	json_kv_u64_or_null(j, "peak_rss_bytes", peak_src != PEAK_NONE, peak);
	json_kv_u64_or_null(j, "read_bytes", io, p->exit.read_bytes);
	json_kv_u64_or_null(j, "write_bytes", io, p->exit.write_bytes);
	json_kv_u64_or_null(j, "rchar", io, p->exit.rchar);
	json_kv_u64_or_null(j, "wchar", io, p->exit.wchar);
	json_kv_u64_or_null(j, "net_tx_bytes", w.known, w.net_tx_bytes);
	json_kv_u64_or_null(j, "net_rx_bytes", w.known, w.net_rx_bytes);
	json_kv_string(j, "container_id", cg_known && cg.container_id[0] ? cg.container_id : NULL);
	json_kv_string(j, "cgroup", report_cgroup_path(p, in->cgroups));
	report_write_files(j, p);
	report_write_cgroup_context(j, &cg, cg_known);
}

static void write_context_fields(struct json *j, const struct proc *p, const struct report_input *in)
{
	struct proc_waits w = report_waits(p);
	const char *v1 = in->cgroups ? cgtab_path(in->cgroups, 1, p->cgroup_v1_id) : NULL;

	json_kv_string(j, "cgroup_v1_memory", v1);
	json_kv_u64_or_null(j, "mnt_ns", p->mnt_ns != 0, p->mnt_ns);
	json_kv_u64_or_null(j, "pid_ns", p->pid_ns != 0, p->pid_ns);
	json_kv_bool(j, "preexisting", (p->flags & PROC_F_PREEXISTING) != 0);
	json_kv_bool(j, "excluded", (p->flags & PROC_F_EXCLUDED) != 0);
	json_kv_u64_or_null(j, "iowait_ns", w.known, w.iowait_ns);
	json_kv_u64_or_null(j, "blocked_ns", w.known && (p->flags & PROC_F_EXIT), w.blocked_ns);
	json_kv_u64_or_null(j, "net_wait_ns", w.known && (p->flags & PROC_F_EXIT), w.net_wait_ns);
	json_kv_u64(j, "files_dropped", p->files_dropped);
	json_kv_u64_or_null(j, "longest_stall_ns", in->stall_after_ns != 0, p->stall_ns);
	report_write_series(j, p, in->mono_to_real_ns);
}

static void write_extra_fields(struct json *j, const struct proc *p, const struct outcome *o,
			       const struct report_input *in)
{
	bool io = o->exited && !(p->exit.flags & TR_EXIT_NO_IO_ACCOUNTING);
	bool sched = o->exited && !(p->exit.flags & TR_EXIT_NO_SCHED_INFO);
	/* From the per-process state: only while traced, only where the kernel has the vmscan tracepoints. */
	bool reclaim = o->exited && (p->exit.state_flags & TR_PSTATE_TRACED) && !(p->exit.flags & TR_EXIT_NO_RECLAIM);
	bool cgroup = (p->flags & (PROC_F_EXEC | PROC_F_EXIT)) != 0;
	enum proc_peak_source peak_src;

	proc_peak_rss(p, &peak_src);

	json_kv_u64_or_null(j, "cgroup_id", cgroup, p->cgroup_id);
	json_kv_u64_or_null(j, "uid", (p->flags & PROC_F_UID) != 0, p->uid);
	json_kv_u64_or_null(j, "gid", (p->flags & PROC_F_EXEC) != 0, p->gid);
	json_kv_string(j, "comm", p->comm[0] ? p->comm : NULL);
	json_kv_string(j, "ppid_source", parent_source_name(p->parent_src));
	json_kv_bool(j, "exe_inherited", (p->flags & PROC_F_INHERITED) != 0);
	json_kv_bool(j, "exe_truncated", p->image && (p->image->flags & TR_EXEC_PATH_TRUNCATED));
	json_kv_bool(j, "argv_truncated",
		     p->image && (p->image->flags & (TR_EXEC_ARGV_TRUNCATED | TR_EXEC_ARGV_FAULT | PROC_IMAGE_ARGV_DROPPED)));
	json_kv_u64_or_null(j, "cpu_ns", o->exited, p->exit.runtime_ns);
	json_kv_u64_or_null(j, "cancelled_write_bytes", io, p->exit.cancelled_write_bytes);
	json_kv_u64_or_null(j, "syscr", io, p->exit.syscr);
	json_kv_u64_or_null(j, "syscw", io, p->exit.syscw);
	json_kv_u64_or_null(j, "voluntary_ctxt_switches", o->exited, p->exit.nvcsw);
	json_kv_u64_or_null(j, "involuntary_ctxt_switches", o->exited, p->exit.nivcsw);
	json_kv_u64_or_null(j, "minor_faults", o->exited, p->exit.min_flt);
	json_kv_u64_or_null(j, "major_faults", o->exited, p->exit.maj_flt);
	json_kv_u64_or_null(j, "run_delay_ns", sched, p->exit.run_delay_ns);
	json_kv_u64_or_null(j, "reclaim_ns", reclaim, p->exit.reclaim_ns);
	json_kv_u64_or_null(j, "threads", o->exited, p->exit.nr_threads);
	json_kv_bool_or_null(j, "threads_truncated", o->exited, (p->exit.flags & TR_EXIT_THREADS_TRUNCATED) != 0);
	json_kv_string(j, "peak_rss_source", proc_peak_source_name(peak_src));
	json_kv_u64_or_null(j, "maxrss_rusage_bytes", o->exited, p->exit.maxrss_bytes);
	json_kv_u64_or_null(j, "cpus_allowed", p->alloc.cpus_allowed != 0, p->alloc.cpus_allowed);
	report_write_limits(j, step_proc_cpu_limit_millicores(&p->alloc, in->steps ? in->steps->host_cpus : 0),
			    p->alloc.memory_bytes);
	write_context_fields(j, p, in);
	write_earlier_execs(j, p, in);
}

static void write_process(struct json *j, const struct proc *p, const struct report_input *in)
{
	struct outcome o = outcome_of(p);

	json_object_begin(j);
	write_design_fields(j, p, &o, in);
	write_extra_fields(j, p, &o, in);
	json_object_end(j);
}

static void signal_begin(struct json *j, const char *kind, const struct proc *p, const struct report_input *in)
{
	json_object_begin(j);
	json_kv_string(j, "kind", kind);
	json_kv_u64(j, "pid", p->tgid);
	json_kv_string(j, "step", step_id(in, p));
	json_kv_string(j, "tool", tool_of(p));
	json_kv_string(j, "cgroup", report_cgroup_path(p, in->cgroups));
}

/*
 * A process waiting for a child is not stalled: its longest stall counts
 * only when none of its children was alive at any time during it (a
 * stalled child is reported itself). Returns, indexed by table slot, which
 * processes' stalls do not count; NULL when memory is short (then every
 * stall counts). Linear.
 */
static bool *stalls_with_live_children(struct proctab *t, const struct members *m)
{
	bool *busy = calloc(t->high_water ? t->high_water : 1, sizeof(*busy));

	for (size_t i = 0; busy && i < m->n; i++) {
		const struct proc *c = m->v[i];
		const struct proc *parent = proctab_parent(t, c);
		uint64_t c_start = c->fork_ts_ns ? c->fork_ts_ns : c->start_ns;
		uint64_t c_end = (c->flags & PROC_F_EXIT) ? c->exit.hdr.ts_ns : UINT64_MAX;

		if (parent && parent->stalls && c_start <= parent->stall_start_ns + parent->stall_ns &&
		    c_end >= parent->stall_start_ns)
			busy[parent - t->procs] = true;
	}
	return busy;
}

enum sig_kind { SIGK_OOM, SIGK_KILLED, SIGK_FAILED, SIGK_STALLED, SIGK_IO_WAIT, SIGK_NET_WAIT };

static const char *const sig_kind_names[] = { "oom_kill", "killed", "failed", "stalled", "io_wait", "net_wait" };

struct sig_entry {
	enum sig_kind kind;
	struct proc *p;
	bool run; /* failed: the traced command's own end (it may also be its step's main) */
};

struct sig_list {
	struct sig_entry *v;
	size_t n;
};

/* oom_kill, killed or failed: how the process ended, when that is a signal (end_kind_of()). */
static bool end_signal(const struct report_input *in, const struct proc *root, struct proc *p,
		       struct sig_entry *e)
{
	switch (end_kind_of(in, root, p)) {
	case END_OOM:
		*e = (struct sig_entry){ SIGK_OOM, p, false };
		return true;
	case END_KILLED:
		*e = (struct sig_entry){ SIGK_KILLED, p, false };
		return true;
	case END_FAILED:
		*e = (struct sig_entry){ SIGK_FAILED, p, p == root };
		return true;
	default:
		return false;
	}
}

/*
 * The run's signals, in process start order: at most one of oom_kill,
 * killed and failed for how a process ended (end_kind_of()), so one
 * failure is one signal even when the command is its step's main; then
 * stalled, io_wait and net_wait from the waits measured. At most 4 per
 * process.
 */
static int collect_signals(struct proctab *t, const struct members *m, const struct report_input *in,
			   struct sig_list *out)
{
	bool *busy = stalls_with_live_children(t, m);
	const struct proc *root = proctab_root(t);
	uint64_t now = t->newest_ts;

	out->n = 0;
	out->v = malloc((m->n ? m->n : 1) * 4 * sizeof(*out->v));
	if (!out->v) {
		free(busy);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct proc *p = m->v[i];
		struct proc_waits w = report_waits(p);

		/* A process still alive at the end: its current gap counts too. */
		if (proctab_stalled_now(t, p, now) && now - p->progress_ts_ns > p->stall_ns) {
			p->stall_start_ns = p->progress_ts_ns;
			p->stall_ns = now - p->progress_ts_ns;
			p->stalls++;
		}
		if (end_signal(in, root, p, &out->v[out->n]))
			out->n++;
		if (in->stall_after_ns && p->stalls && !(busy && busy[p - t->procs]))
			out->v[out->n++] = (struct sig_entry){ SIGK_STALLED, p, false };
		if (w.known && in->io_wait_after_ns && w.iowait_ns >= in->io_wait_after_ns)
			out->v[out->n++] = (struct sig_entry){ SIGK_IO_WAIT, p, false };
		if (w.known && in->net_wait_after_ns && w.net_wait_ns >= in->net_wait_after_ns)
			out->v[out->n++] = (struct sig_entry){ SIGK_NET_WAIT, p, false };
	}
	free(busy);
	return 0;
}

/* The step of a failed signal's process when it is that step's failure (its main), else NULL. */
static const struct step *failed_step(const struct sig_entry *e, const struct report_input *in)
{
	const struct step *s = in->steps ? steps_of(in->steps, e->p) : NULL;

	return s && s->failed && s->main == e->p ? s : NULL;
}

static void write_signal(struct json *j, const struct sig_entry *e, const struct report_input *in)
{
	const struct proc *p = e->p;
	struct outcome o = outcome_of(p);
	struct proc_waits w = report_waits(p);

	signal_begin(j, sig_kind_names[e->kind], p, in);
	switch (e->kind) {
	case SIGK_OOM:
		json_kv_u64(j, "anon_rss_kb", p->oom.anon_rss_kb);
		json_kv_u64(j, "total_vm_kb", p->oom.total_vm_kb);
		json_kv_u64(j, "file_rss_kb", p->oom.file_rss_kb);
		json_kv_u64(j, "shmem_rss_kb", p->oom.shmem_rss_kb);
		json_kv_string(j, "memcg", in->cgroups ? cgtab_path(in->cgroups, p->oom.memcg_v1, p->oom.memcg_id) : NULL);
		json_kv_u64_or_null(j, "memcg_limit_bytes", p->oom.memcg_limit_bytes != 0, p->oom.memcg_limit_bytes);
		json_kv_u64_or_null(j, "memcg_usage_bytes", p->oom.memcg_usage_bytes != 0, p->oom.memcg_usage_bytes);
		break;
	case SIGK_KILLED:
		json_kv_u64(j, "signal", o.signal);
		json_kv_bool(j, "core_dumped", o.core);
		break;
	case SIGK_FAILED:
		/* null when SIGPIPE ended it (the process says so); the step's first_failed_pid names the cause */
		json_kv_u64_or_null(j, "exit_code", o.signal == 0, o.status);
		break;
	case SIGK_STALLED:
		json_kv_u64(j, "start_ns", to_real(in, p->stall_start_ns));
		json_kv_u64(j, "duration_ns", p->stall_ns);
		json_kv_u64(j, "stall_after_ns", in->stall_after_ns);
		json_kv_bool(j, "still_alive", (p->flags & PROC_F_EXIT) == 0);
		json_kv_u64(j, "times", p->stalls);
		break;
	case SIGK_IO_WAIT:
		json_kv_u64(j, "iowait_ns", w.iowait_ns);
		break;
	case SIGK_NET_WAIT:
		json_kv_u64(j, "net_wait_ns", w.net_wait_ns);
		break;
	}
	json_object_end(j);
}

static void write_signals(struct json *j, const struct sig_list *sl, const struct report_input *in)
{
	json_key(j, "signals");
	json_array_begin(j);
	for (size_t i = 0; i < sl->n; i++)
		write_signal(j, &sl->v[i], in);
	json_array_end(j);
}

static void write_agent(struct json *j, const struct report_agent *a)
{
	json_key(j, "agent");
	json_object_begin(j);
	json_kv_u64(j, "dropped", report_dropped(a));
	json_kv_u64(j, "kernel_drops", a->kernel_drops);
	json_kv_u64(j, "ring_drops", a->ring_drops);
	json_kv_u64(j, "ring_resets", a->ring_resets);
	json_kv_u64(j, "ring_bytes_discarded", a->ring_bytes_discarded);
	json_kv_u64(j, "decode_errors", a->decode_errors);
	json_key(j, "decode_errors_by_reason");
	json_object_begin(j);
	for (int e = DECODE_OK + 1; e < DECODE_ERR_COUNT; e++)
		json_kv_u64(j, decode_error_name((enum decode_error)e), a->decode_by_error[e]);
	json_object_end(j);
	json_kv_u64(j, "table_full", a->table_full);
	json_kv_u64(j, "no_memory", a->no_memory);
	json_kv_u64(j, "records", a->records);
	json_kv_u64(j, "records_copied", a->records_copied);
	json_kv_u64(j, "max_processes", a->max_processes);
	json_kv_u64(j, "processes_evicted", a->processes_evicted);
	json_kv_u64(j, "execs_dropped", a->execs_dropped);
	json_kv_u64(j, "argv_dropped", a->argv_dropped);
	json_kv_u64(j, "oom_unmatched", a->oom_unmatched);
	json_kv_u64(j, "samples", a->samples);
	json_kv_u64(j, "series_dropped", a->series_dropped);
	json_kv_u64(j, "files_dropped", a->files_dropped);
	json_kv_u64(j, "cgroups_dropped", a->cgroups_dropped);
	json_kv_u64(j, "excluded", a->excluded);
	json_kv_bool(j, "end_record", a->end_record);
	json_kv_bool(j, "collector_lost", a->collector_lost);
	json_kv_bool(j, "control_end", a->control_end);
	json_kv_bool(j, "interrupted", a->interrupted);
	json_object_end(j);
}

static const char *or_null(const char *s)
{
	return s[0] ? s : NULL;
}

void report_write_host(struct json *j, const struct hostid *h)
{
	char price[HOSTID_PRICE_TEXT_MAX];

	json_key(j, "host");
	json_object_begin(j);
	json_kv_string(j, "name", or_null(h->name));
	json_kv_string(j, "cloud", or_null(h->cloud));
	json_kv_string(j, "instance_type", or_null(h->instance_type));
	json_kv_string(j, "instance_id", or_null(h->instance_id));
	json_kv_string(j, "region", or_null(h->region));
	json_kv_u64_or_null(j, "cpus", h->cpus != 0, h->cpus);
	json_kv_u64_or_null(j, "memory_bytes", h->memory_bytes != 0, h->memory_bytes);
	hostid_price_text(h, price);
	if (price[0]) {
		json_key(j, "price_per_hour");
		json_raw(j, price, strlen(price)); /* digits and a point: a JSON number as it is */
	}
	json_object_end(j);
}

void report_write_uid(struct json *j, const struct proc *root)
{
	bool known = root && (root->flags & PROC_F_UID);

	json_kv_u64_or_null(j, "uid", known, known ? root->uid : 0);
}

int report_json(struct obuf *o, struct proctab *t, const struct report_input *in)
{
	struct sig_list sl = { 0 };
	struct step_series *series;
	struct members m;
	struct json j;
	int err = collect(t, &m);

	if (err)
		return err;
	json_init(&j, o);
	json_object_begin(&j);
	json_kv_string(&j, "schema", REPORT_SCHEMA);
	json_key(&j, "command");
	json_array_begin(&j);
	for (size_t i = 0; i < in->ncommand; i++)
		json_string(&j, in->command[i]);
	json_array_end(&j);
	json_key(&j, "exit_code");
	if (in->exit_known)
		json_i64(&j, in->exit_code);
	else
		json_null(&j);
	json_kv_u64(&j, "start_ns", in->start_ns);
	json_kv_u64_or_null(&j, "end_ns", in->end_known, in->end_ns);
	report_write_uid(&j, proctab_root(t));
	if (in->host)
		report_write_host(&j, in->host);
	write_agent(&j, &in->agent);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < m.n; i++)
		write_process(&j, m.v[i], in);
	json_array_end(&j);
	series = report_step_series(in->steps, m.v, m.n);
	report_write_steps(&j, in->steps, series, in->mono_to_real_ns, in->cgroups);
	free(series);
	if (in->steps)
		report_write_run(&j, in->steps, in->run_key);
	if (collect_signals(t, &m, in, &sl) == 0)
		write_signals(&j, &sl, in);
	else
		o->err = -ENOMEM;
	free(sl.v);
	json_object_end(&j);
	obuf_putc(o, '\n');
	free(m.v);
	return o->err;
}

/* ------------------------------------------------------------------ */
/* Text helpers                                                       */
/* ------------------------------------------------------------------ */

const char *report_signal_name(unsigned sig, char *buf, size_t size)
{
	static const char *const names[] = {
		[1] = "SIGHUP", [2] = "SIGINT", [3] = "SIGQUIT", [4] = "SIGILL", [5] = "SIGTRAP", [6] = "SIGABRT",
		[7] = "SIGBUS", [8] = "SIGFPE", [9] = "SIGKILL", [10] = "SIGUSR1", [11] = "SIGSEGV",
		[12] = "SIGUSR2", [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM", [16] = "SIGSTKFLT",
		[17] = "SIGCHLD", [18] = "SIGCONT", [19] = "SIGSTOP", [20] = "SIGTSTP", [21] = "SIGTTIN",
		[22] = "SIGTTOU", [23] = "SIGURG", [24] = "SIGXCPU", [25] = "SIGXFSZ", [26] = "SIGVTALRM",
		[27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO", [30] = "SIGPWR", [31] = "SIGSYS",
	};

	if (sig < sizeof(names) / sizeof(names[0]) && names[sig])
		return names[sig];
	if (sig >= 34 && sig <= 64)
		snprintf(buf, size, "SIGRTMIN+%u", sig - 34);
	else
		snprintf(buf, size, "signal %u", sig);
	return buf;
}

void report_format_duration(uint64_t ns, char *buf, size_t size)
{
	const uint64_t ms = 1000000ULL, s = 1000 * ms;

	if (ns < ms)
		snprintf(buf, size, "%lluus", (unsigned long long)(ns / 1000));
	else if (ns < s)
		snprintf(buf, size, "%llums", (unsigned long long)(ns / ms));
	else if (ns < 60 * s)
		snprintf(buf, size, "%llu.%02llus", (unsigned long long)(ns / s),
			 (unsigned long long)(ns % s / (10 * ms)));
	else if (ns < 3600 * s)
		snprintf(buf, size, "%llum%02llus", (unsigned long long)(ns / (60 * s)),
			 (unsigned long long)(ns / s % 60));
	else
		snprintf(buf, size, "%lluh%02llum", (unsigned long long)(ns / (3600 * s)),
			 (unsigned long long)(ns / (60 * s) % 60));
}

void report_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t scale = 1024;
	unsigned u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%lluB", (unsigned long long)bytes);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	/* One decimal, computed without overflow: whole part, then tenths of the remainder. */
	snprintf(buf, size, "%llu.%llu%s", (unsigned long long)(bytes / scale),
		 (unsigned long long)(bytes % scale / (scale / 10 + 1)), units[u]);
}

/*
 * Text that came from a process (tool names, the command) goes to a
 * terminal or a log: control characters, C1 controls and broken UTF-8
 * become '?', so a hostile argv cannot drive the terminal or forge lines.
 * Length of the printable sequence at p, or 0 when it must be replaced.
 */
static size_t safe_len(const unsigned char *p)
{
	size_t n = json_utf8_len(p, strnlen((const char *)p, 4));

	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0; /* C1 control */
	if (n == 1 && (p[0] < 0x20 || p[0] == 0x7f))
		return 0;
	return n;
}

/* At most max bytes. */
static size_t put_safe_text(struct obuf *o, const char *s, size_t max)
{
	size_t out = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p && out < max;) {
		size_t n = safe_len(p);

		if (n == 0 || out + n > max) {
			obuf_putc(o, '?');
			out++;
			p++;
			continue;
		}
		obuf_put(o, (const char *)p, n);
		out += n;
		p += n;
	}
	return out;
}

void report_safe_text(char *dst, size_t size, const char *src)
{
	size_t out = 0;

	if (size == 0)
		return;
	for (const unsigned char *p = (const unsigned char *)src; *p && out + 1 < size;) {
		size_t n = safe_len(p);

		if (n == 0) {
			dst[out++] = '?';
			p++;
			continue;
		}
		if (out + n + 1 > size)
			break;
		memcpy(dst + out, p, n);
		out += n;
		p += n;
	}
	dst[out] = 0;
}

static void pad(struct obuf *o, size_t have, size_t width)
{
	for (; have < width; have++)
		obuf_putc(o, ' ');
}

/* ------------------------------------------------------------------ */
/* Summary                                                            */
/* ------------------------------------------------------------------ */

/*
 * Status text and a grouping class (exit status, 256 + signal, OOM, still
 * running; offset by how the end counts). Capitals only for what is a
 * signal (end_kind_of()): a non-zero exit nobody failed on reads "exit 1".
 */
static int status_text(const struct report_input *in, const struct proc *root, const struct proc *p, char *buf,
		       size_t size)
{
	struct outcome o = outcome_of(p);
	enum end_kind k = end_kind_of(in, root, p);
	const char *how = k == END_FAILED ? "FAILED " : "";
	char sig[24];

	if (k == END_OOM) {
		snprintf(buf, size, "OOM-KILLED");
		return 1000;
	}
	if (!o.exited) {
		snprintf(buf, size, "running");
		return 2000;
	}
	if (k == END_KILLED) {
		snprintf(buf, size, "KILLED %s%s", report_signal_name(o.signal, sig, sizeof(sig)),
			 o.core ? " (core)" : "");
		return 256 + (int)o.signal;
	}
	if (o.signal) /* SIGPIPE */
		snprintf(buf, size, "%s%s (pipe closed)", how, report_signal_name(o.signal, sig, sizeof(sig)));
	else
		snprintf(buf, size, "%sexit %u", how, o.status);
	return (k == END_FAILED ? 3000 : 0) + (o.signal ? 256 + (int)o.signal : (int)o.status);
}

struct tree {
	const struct members *m;
	long *parent, *first_child, *next_sibling;
};

/* Find each member's parent among the members, children in start order. */
static int tree_build(struct tree *tr, const struct members *m, const struct proctab *t)
{
	long *last;

	tr->m = m;
	tr->parent = calloc(m->n, sizeof(long));
	tr->first_child = calloc(m->n, sizeof(long));
	tr->next_sibling = calloc(m->n, sizeof(long));
	last = calloc(m->n, sizeof(long));
	if (!tr->parent || !tr->first_child || !tr->next_sibling || !last) {
		free(last);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct proc *pp = proctab_parent(t, m->v[i]);
		struct proc *const *hit = NULL;

		tr->first_child[i] = tr->next_sibling[i] = -1;
		tr->parent[i] = -1;
		if (pp)
			hit = bsearch(&pp, m->v, m->n, sizeof(*m->v), by_start);
		if (hit && (size_t)(hit - m->v) != i)
			tr->parent[i] = hit - m->v;
	}
	for (size_t i = 0; i < m->n; i++) {
		long p = tr->parent[i];

		if (p < 0)
			continue;
		if (tr->first_child[p] < 0)
			tr->first_child[p] = (long)i;
		else
			tr->next_sibling[last[p]] = (long)i;
		last[p] = (long)i;
	}
	free(last);
	return 0;
}

static void tree_free(struct tree *tr)
{
	free(tr->parent);
	free(tr->first_child);
	free(tr->next_sibling);
}

#define SUMMARY_MAX_INDENT 12 /* levels; deeper processes line up at this depth */

struct line {
	long idx;      /* member index */
	unsigned depth;
	size_t hidden; /* > 0: a "... N more" line for idx's group */
};

struct summary {
	struct obuf *o;
	const struct report_input *in;
	const struct proc *root; /* the traced command, NULL if not seen */
	struct tree tr;
	struct line *stack;
	size_t top, lines, shown;
};

static void print_process(struct summary *s, const struct line *l)
{
	const struct proc *p = s->tr.m->v[l->idx];
	struct outcome o = outcome_of(p);
	char st[48], a[24], b[24], c[24], d[24], e[24];
	unsigned indent = l->depth > SUMMARY_MAX_INDENT ? SUMMARY_MAX_INDENT : l->depth;
	const char *tool = tool_of(p);
	size_t w;

	obuf_printf(s->o, "%*s%-8u ", (int)(2 * indent), "", (unsigned)p->tgid);
	w = put_safe_text(s->o, tool ? tool : "?", 30 - 2 * indent);
	pad(s->o, w, 31 - 2 * indent);
	status_text(s->in, s->root, p, st, sizeof(st));
	if (!o.exited) {
		obuf_printf(s->o, "%9s %9s %10s %10s %10s  %s\n", "-", "-", "-", "-", "-", st);
		return;
	}
	report_format_duration(p->exit.hdr.ts_ns - p->start_ns, a, sizeof(a));
	report_format_duration(p->exit.runtime_ns, b, sizeof(b));
	report_format_bytes(proc_peak_rss(p, NULL), c, sizeof(c));
	report_format_bytes(p->exit.read_bytes, d, sizeof(d));
	report_format_bytes(p->exit.write_bytes, e, sizeof(e));
	if (p->exit.hdr.ts_ns < p->start_ns)
		snprintf(a, sizeof(a), "?");
	obuf_printf(s->o, "%9s %9s %10s %10s %10s  %s\n", a, b, c, d, e, st);
}

static void print_collapsed(struct summary *s, const struct line *l)
{
	const struct proc *p = s->tr.m->v[l->idx];
	const char *tool = tool_of(p);
	unsigned indent = l->depth > SUMMARY_MAX_INDENT ? SUMMARY_MAX_INDENT : l->depth;
	char st[48];

	status_text(s->in, s->root, p, st, sizeof(st));
	obuf_printf(s->o, "%*s... %zu more `", (int)(2 * indent), "", l->hidden);
	put_safe_text(s->o, tool ? tool : "?", 60);
	obuf_printf(s->o, "` (%s)\n", st);
}

#define GROUPS_MAX 64

struct group {
	const char *tool;
	int klass;
	size_t total, seen;
};

static struct group *group_of(const struct summary *s, struct group *g, size_t *ng, const struct proc *p)
{
	const char *tool = tool_of(p);
	char st[48];
	int klass = status_text(s->in, s->root, p, st, sizeof(st));

	tool = tool ? tool : "";
	for (size_t i = 0; i < *ng; i++)
		if (g[i].klass == klass && !strcmp(g[i].tool, tool))
			return &g[i];
	if (*ng == GROUPS_MAX)
		return NULL; /* too many kinds of siblings to group: show them */
	g[*ng] = (struct group){ .tool = tool, .klass = klass };
	return &g[(*ng)++];
}

/* Push the lines for node's children (reverse order: the stack pops the first first). */
static void push_children(struct summary *s, long node, unsigned depth)
{
	struct group groups[GROUPS_MAX];
	size_t ng = 0, start = s->top;
	const struct tree *tr = &s->tr;

	for (long c = tr->first_child[node]; c >= 0; c = tr->next_sibling[c]) {
		struct group *g = group_of(s, groups, &ng, tr->m->v[c]);

		if (g)
			g->total++;
	}
	for (long c = tr->first_child[node]; c >= 0; c = tr->next_sibling[c]) {
		struct group *g = group_of(s, groups, &ng, tr->m->v[c]);
		struct line l = { .idx = c, .depth = depth };

		if (g && g->total > SUMMARY_COLLAPSE_MIN && g->seen++ >= SUMMARY_COLLAPSE_SHOW) {
			if (g->seen - 1 != SUMMARY_COLLAPSE_SHOW)
				continue;
			l.hidden = g->total - SUMMARY_COLLAPSE_SHOW;
		}
		s->stack[s->top++] = l;
	}
	/* Reverse what was pushed, so the first child is on top. */
	for (size_t i = start, j = s->top; i + 1 < j; i++, j--) {
		struct line tmp = s->stack[i];

		s->stack[i] = s->stack[j - 1];
		s->stack[j - 1] = tmp;
	}
}

static void print_tree(struct summary *s)
{
	const struct members *m = s->tr.m;

	/* Roots: members whose parent is not a member, pushed last-first. */
	for (size_t i = m->n; i-- > 0;)
		if (s->tr.parent[i] < 0)
			s->stack[s->top++] = (struct line){ .idx = (long)i };
	while (s->top > 0) {
		struct line l = s->stack[--s->top];

		if (s->lines >= SUMMARY_MAX_LINES)
			break;
		s->lines++;
		if (l.hidden) {
			print_collapsed(s, &l);
			continue;
		}
		print_process(s, &l);
		s->shown++;
		push_children(s, l.idx, l.depth + 1);
	}
	if (s->shown < m->n && s->lines >= SUMMARY_MAX_LINES)
		obuf_printf(s->o, "... the summary stops here: %zu processes in all, every one is in the JSON report\n",
			    m->n);
}

struct totals {
	size_t procs, failed, killed, oom, running;
	size_t tolerated; /* non-zero ends that are not failures (end_kind_of()) */
	uint64_t user_ns, sys_ns, read, write;
	const struct proc *peak;
};

static struct totals totals_of(const struct summary *s, const struct members *m)
{
	struct totals t = { .procs = m->n };

	for (size_t i = 0; i < m->n; i++) {
		const struct proc *p = m->v[i];
		struct outcome o = outcome_of(p);

		if (o.oom)
			t.oom++;
		if (!o.exited) {
			t.running++;
			continue;
		}
		switch (end_kind_of(s->in, s->root, p)) {
		case END_KILLED:
			t.killed++;
			break;
		case END_FAILED:
			t.failed++;
			break;
		case END_TOLERATED:
			t.tolerated++;
			break;
		default:
			break;
		}
		t.user_ns = add_sat(t.user_ns, o.user_ns);
		t.sys_ns = add_sat(t.sys_ns, o.sys_ns);
		t.read = add_sat(t.read, p->exit.read_bytes);
		t.write = add_sat(t.write, p->exit.write_bytes);
		if (!t.peak || proc_peak_rss(p, NULL) > proc_peak_rss(t.peak, NULL))
			t.peak = p;
	}
	return t;
}

static void print_header(struct summary *s)
{
	const struct report_input *in = s->in;
	char dur[24];

	obuf_puts(s->o, "tracer: ");
	for (size_t i = 0, w = 0; i < in->ncommand && w < 200; i++) {
		w += put_safe_text(s->o, in->command[i], 200 - w);
		if (i + 1 < in->ncommand)
			obuf_putc(s->o, ' ');
	}
	if (in->exit_known)
		obuf_printf(s->o, " -- exit %d", in->exit_code);
	if (in->end_known && in->end_ns >= in->start_ns) {
		report_format_duration(in->end_ns - in->start_ns, dur, sizeof(dur));
		obuf_printf(s->o, " after %s", dur);
	}
	obuf_puts(s->o, "\n");
	obuf_printf(s->o, "%-8s %-30s %9s %9s %10s %10s %10s  %s\n", "PID", "TOOL", "WALL", "CPU", "PEAK RSS",
		    "READ", "WRITE", "STATUS");
}

static void print_totals(struct summary *s, const struct members *m)
{
	struct totals t = totals_of(s, m);
	const struct report_agent *a = &s->in->agent;
	char u[24], y[24], r[24], w[24], pk[24];
	uint64_t dropped = report_dropped(a);

	report_format_duration(t.user_ns, u, sizeof(u));
	report_format_duration(t.sys_ns, y, sizeof(y));
	report_format_bytes(t.read, r, sizeof(r));
	report_format_bytes(t.write, w, sizeof(w));
	obuf_printf(s->o, "totals: %zu processes (%zu failed, %zu killed, %zu OOM-killed", t.procs, t.failed,
		    t.killed, t.oom);
	if (t.tolerated) /* said, so that "0 failed" next to a tree of non-zero exits is not a surprise */
		obuf_printf(s->o, ", %zu tolerated non-zero exit%s", t.tolerated, t.tolerated > 1 ? "s" : "");
	if (t.running)
		obuf_printf(s->o, ", %zu without an exit record", t.running);
	obuf_printf(s->o, "); CPU user %s, sys %s; read %s, write %s", u, y, r, w);
	if (t.peak) {
		const char *tool = tool_of(t.peak);

		report_format_bytes(proc_peak_rss(t.peak, NULL), pk, sizeof(pk));
		obuf_printf(s->o, "; peak RSS %s (pid %u ", pk, (unsigned)t.peak->tgid);
		put_safe_text(s->o, tool ? tool : "?", 40);
		obuf_puts(s->o, ")");
	}
	obuf_puts(s->o, "\n");
	if (dropped == 0 && !a->collector_lost) {
		obuf_puts(s->o, "agent: no record lost\n");
		return;
	}
	obuf_printf(s->o, "WARNING: %llu RECORDS WERE LOST (kernel %llu, ring %llu, ring resets %llu, undecodable %llu, "
		    "table full %llu, no memory %llu): the figures above are incomplete\n",
		    (unsigned long long)dropped, (unsigned long long)a->kernel_drops, (unsigned long long)a->ring_drops,
		    (unsigned long long)a->ring_resets, (unsigned long long)a->decode_errors,
		    (unsigned long long)a->table_full, (unsigned long long)a->no_memory);
	if (a->collector_lost)
		obuf_puts(s->o, "WARNING: THE COLLECTOR STOPPED WITHOUT ITS END RECORD: the trace may be cut short\n");
}

#define SUMMARY_MAX_SIGNALS 20

/* "exit N", or the signal that ended it. */
static void put_end(struct obuf *o, const struct outcome *oc)
{
	char sig[24];

	if (oc->signal)
		obuf_printf(o, "%s", report_signal_name(oc->signal, sig, sizeof(sig)));
	else
		obuf_printf(o, "exit %u", oc->status);
}

/*
 * What failed and the likely cause: the step's first process to fail
 * (by exit time) when that is another than its main - the tool whose
 * status the step's script passed on.
 */
static void print_failure(struct summary *s, const struct sig_entry *e)
{
	const struct step *st = failed_step(e, s->in);
	const struct proc *first = st ? st->first_failed : NULL;
	struct outcome oc = outcome_of(e->p);

	obuf_puts(s->o, e->run ? (st ? ": the command and its step failed, " : ": the command failed, ")
			       : ": the step failed, ");
	put_end(s->o, &oc);
	if (!first || first == e->p)
		return;
	oc = outcome_of(first);
	obuf_printf(s->o, "; first to fail in it: pid %u ", (unsigned)first->tgid);
	put_safe_text(s->o, tool_of(first) ? tool_of(first) : "?", 40);
	obuf_puts(s->o, ", ");
	put_end(s->o, &oc);
}

/* One line per signal (the first SUMMARY_MAX_SIGNALS), after the tree. */
static void print_signals(struct summary *s, struct proctab *t, const struct members *m)
{
	struct sig_list sl;
	char d[24], sig[24];

	if (collect_signals(t, m, s->in, &sl))
		return;
	if (sl.n)
		obuf_printf(s->o, "signals: %zu\n", sl.n);
	for (size_t i = 0; i < sl.n && i < SUMMARY_MAX_SIGNALS; i++) {
		const struct proc *p = sl.v[i].p;
		struct outcome oc = outcome_of(p);
		struct proc_waits w = report_waits(p);
		const char *tool = tool_of(p);

		const char *step = step_id(s->in, p);

		obuf_printf(s->o, "  %-9s pid %u ", sig_kind_names[sl.v[i].kind], (unsigned)p->tgid);
		put_safe_text(s->o, tool ? tool : "?", 40);
		if (step) {
			obuf_puts(s->o, " (step ");
			put_safe_text(s->o, step, 60);
			obuf_puts(s->o, ")");
		}
		switch (sl.v[i].kind) {
		case SIGK_OOM:
			report_format_bytes(p->oom.memcg_limit_bytes, d, sizeof(d));
			obuf_printf(s->o, ": killed by the OOM killer%s%s", p->oom.memcg_limit_bytes ? ", memory limit " : "",
				    p->oom.memcg_limit_bytes ? d : "");
			break;
		case SIGK_KILLED:
			obuf_printf(s->o, ": killed by %s", report_signal_name(oc.signal, sig, sizeof(sig)));
			break;
		case SIGK_FAILED:
			print_failure(s, &sl.v[i]);
			break;
		case SIGK_STALLED:
			report_format_duration(p->stall_ns, d, sizeof(d));
			obuf_printf(s->o, ": no CPU or I/O progress for %s%s", d,
				    (p->flags & PROC_F_EXIT) ? "" : " (still alive)");
			break;
		case SIGK_IO_WAIT:
			report_format_duration(w.iowait_ns, d, sizeof(d));
			obuf_printf(s->o, ": waited %s for I/O", d);
			break;
		case SIGK_NET_WAIT:
			report_format_duration(w.net_wait_ns, d, sizeof(d));
			obuf_printf(s->o, ": spent %s in network calls", d);
			break;
		}
		obuf_puts(s->o, "\n");
	}
	if (sl.n > SUMMARY_MAX_SIGNALS)
		obuf_printf(s->o, "  ... %zu more in the JSON report\n", sl.n - SUMMARY_MAX_SIGNALS);
	free(sl.v);
}

int report_summary(struct obuf *o, struct proctab *t, const struct report_input *in)
{
	struct summary s = { .o = o, .in = in, .root = proctab_root(t) };
	struct members m;
	int err = collect(t, &m);

	if (err)
		return err;
	print_header(&s);
	if (m.n) {
		err = tree_build(&s.tr, &m, t);
		s.stack = err ? NULL : malloc(2 * m.n * sizeof(*s.stack));
		if (!err && s.stack)
			print_tree(&s);
		else
			err = -ENOMEM;
		free(s.stack);
		tree_free(&s.tr);
	} else {
		obuf_puts(o, "(no process of the command was seen)\n");
	}
	report_print_steps(o, in->steps, SUMMARY_MAX_STEPS);
	print_signals(&s, t, &m);
	print_totals(&s, &m);
	free(m.v);
	return err ? err : o->err;
}

int report_record(struct obuf *o, const struct obuf *report, const struct obuf *summary)
{
	obuf_puts(o, "{\"report\":");
	obuf_put(o, report->buf, report->len);
	obuf_puts(o, ",\"summary\":");
	json_put_string(o, summary->buf, summary->len);
	obuf_putc(o, '}');
	return o->err;
}
