/* SPDX-License-Identifier: Apache-2.0 */
#include "report_steps.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "report.h"
#include "report_ctx.h"

void report_write_run(struct json *j, const struct steps *st, const char *key)
{
	const struct run_info *r = &st->run;

	json_key(j, "run");
	json_object_begin(j);
	json_kv_string(j, "key", key);
	json_kv_string(j, "pipeline", r->pipeline);
	json_kv_string(j, "run_id", r->run_id);
	json_kv_string(j, "engine", r->engine);
	json_kv_string(j, "run_name", r->run_name);
	json_kv_string(j, "engine_dir", r->engine_dir);
	json_kv_u64_or_null(j, "engine_pid", r->engine_proc != NULL, r->engine_proc ? r->engine_proc->tgid : 0);
	json_kv_string(j, "slurm_job_id", r->slurm_job_id);
	json_kv_string(j, "aws_batch_job_id", r->aws_batch_job_id);
	json_kv_string(j, "slurm_job_name", r->slurm_job_name);
	json_kv_string(j, "slurm_submit_dir", r->slurm_submit_dir);
	json_kv_string(j, "slurm_submit_host", r->slurm_submit_host);
	json_kv_u64(j, "steps_dropped", st->dropped);
	json_kv_u64(j, "processes_without_step_by_bound", st->unassigned);
	json_object_end(j);
}

/* Add d, spread evenly over [t0, t1), to the buckets of ss it overlaps. */
static void spread(const struct step_series *ss, uint64_t *col, uint64_t t0, uint64_t t1, uint64_t d)
{
	uint64_t end = ss->start_ns + ss->bucket_ns * STEP_SERIES_BUCKETS;

	if (d == 0)
		return;
	if (t1 <= t0) { /* an instant: all of it in its bucket */
		uint64_t b = t0 > ss->start_ns ? (t0 - ss->start_ns) / ss->bucket_ns : 0;

		col[b < STEP_SERIES_BUCKETS ? b : STEP_SERIES_BUCKETS - 1] += d;
		return;
	}
	for (uint64_t b = 0; b < STEP_SERIES_BUCKETS; b++) {
		uint64_t lo = ss->start_ns + b * ss->bucket_ns, hi = lo + ss->bucket_ns;
		uint64_t a = t0 > lo ? t0 : lo, z = t1 < hi ? t1 : hi;

		if (b == STEP_SERIES_BUCKETS - 1 && t1 > end)
			z = t1; /* past the step's end (rounding): the last bucket takes it */
		if (z > a)
			col[b] += (uint64_t)((long double)d * (long double)(z - a) / (long double)(t1 - t0));
	}
}

static uint64_t bucket_of(const struct step_series *ss, uint64_t t)
{
	uint64_t b = t > ss->start_ns ? (t - ss->start_ns) / ss->bucket_ns : 0;

	return b < STEP_SERIES_BUCKETS ? b : STEP_SERIES_BUCKETS - 1;
}

/* One process's contribution: segments between its start, its samples and its exit. */
static void add_process(struct step_series *ss, const struct proc *p)
{
	const struct proc_series *sr = p->series;
	uint64_t t = p->start_ns, cpu = 0, io = 0, cur_b = UINT64_MAX, cur_rss = 0;

	for (uint32_t i = 0; sr && i < sr->n; i++) {
		const struct series_point *pt = &sr->points[i];
		uint64_t pio = pt->read_bytes + pt->write_bytes, b = bucket_of(ss, pt->ts_ns);

		if (pt->ts_ns < t || pt->runtime_ns < cpu || pio < io)
			continue; /* untrusted: counters and times only move forward */
		spread(ss, ss->cpu_ns, t, pt->ts_ns, pt->runtime_ns - cpu);
		spread(ss, ss->io_bytes, t, pt->ts_ns, pio - io);
		if (b != cur_b && cur_b != UINT64_MAX)
			ss->rss_bytes[cur_b] += cur_rss;
		if (b != cur_b)
			cur_rss = 0;
		cur_b = b;
		if (pt->rss_bytes > cur_rss)
			cur_rss = pt->rss_bytes;
		t = pt->ts_ns;
		cpu = pt->runtime_ns;
		io = pio;
	}
	if (cur_b != UINT64_MAX)
		ss->rss_bytes[cur_b] += cur_rss;
	if (p->flags & PROC_F_EXIT) {
		uint64_t xio = p->exit.read_bytes + p->exit.write_bytes;

		if (p->exit.hdr.ts_ns >= t && p->exit.runtime_ns >= cpu)
			spread(ss, ss->cpu_ns, t, p->exit.hdr.ts_ns, p->exit.runtime_ns - cpu);
		if (p->exit.hdr.ts_ns >= t && xio >= io)
			spread(ss, ss->io_bytes, t, p->exit.hdr.ts_ns, xio - io);
	}
}

struct step_series *report_step_series(const struct steps *st, struct proc *const *procs, size_t n)
{
	uint32_t ns = st && st->n < STEP_SERIES_MAX_STEPS ? st->n : STEP_SERIES_MAX_STEPS;
	struct step_series *v;

	if (!st || st->n == 0)
		return NULL;
	v = calloc(ns, sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < ns; i++) {
		const struct step *s = &st->v[i];
		uint64_t end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns + 1;

		v[i].start_ns = s->start_ns;
		v[i].bucket_ns = (end - s->start_ns + STEP_SERIES_BUCKETS - 1) / STEP_SERIES_BUCKETS;
		if (v[i].bucket_ns == 0)
			v[i].bucket_ns = 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = procs[i];

		if (p->step && p->step <= ns)
			add_process(&v[p->step - 1], p);
	}
	return v;
}

static void write_u64_array(struct json *j, const char *key, const uint64_t *v, unsigned n)
{
	json_key(j, key);
	json_array_begin(j);
	for (unsigned i = 0; i < n; i++)
		json_u64(j, v[i]);
	json_array_end(j);
}

/* "series" and "peaks" of a step; null when it has none (beyond STEP_SERIES_MAX_STEPS). */
static void write_step_series(struct json *j, const struct step_series *ss, uint64_t off)
{
	uint64_t t[STEP_SERIES_BUCKETS], peak_cpu = 0, peak_rss = 0, peak_io = 0;

	json_key(j, "series");
	if (!ss) {
		json_null(j);
		json_kv_null(j, "peaks");
		return;
	}
	for (unsigned b = 0; b < STEP_SERIES_BUCKETS; b++) {
		uint64_t cpu = (uint64_t)((long double)ss->cpu_ns[b] * 1000 / ss->bucket_ns);
		uint64_t io = (uint64_t)((long double)ss->io_bytes[b] * 1e9L / ss->bucket_ns);

		t[b] = ss->start_ns + b * ss->bucket_ns + off;
		peak_cpu = cpu > peak_cpu ? cpu : peak_cpu;
		peak_io = io > peak_io ? io : peak_io;
		peak_rss = ss->rss_bytes[b] > peak_rss ? ss->rss_bytes[b] : peak_rss;
	}
	json_object_begin(j);
	json_kv_u64(j, "bucket_ns", ss->bucket_ns);
	write_u64_array(j, "t_ns", t, STEP_SERIES_BUCKETS);
	write_u64_array(j, "cpu_ns", ss->cpu_ns, STEP_SERIES_BUCKETS);
	write_u64_array(j, "io_bytes", ss->io_bytes, STEP_SERIES_BUCKETS);
	write_u64_array(j, "rss_bytes", ss->rss_bytes, STEP_SERIES_BUCKETS);
	json_object_end(j);
	json_key(j, "peaks");
	json_object_begin(j);
	json_kv_u64(j, "cpu_millicores", peak_cpu);
	json_kv_u64(j, "io_bytes_per_s", peak_io);
	json_kv_u64(j, "rss_bytes_sum", peak_rss);
	json_object_end(j);
}

static void write_step(struct json *j, const struct step *s, const struct step_series *ss, uint64_t off,
		       const struct cgtab *cgroups)
{
	uint32_t raw = s->exit_raw;
	unsigned sig = decode_exit_signal(raw);

	json_object_begin(j);
	json_kv_string(j, "id", s->id);
	json_kv_string(j, "name", s->name);
	json_key(j, "tools");
	json_array_begin(j);
	for (uint32_t i = 0; i < s->n_tools; i++)
		json_string(j, s->tools[i].name);
	json_array_end(j);
	json_kv_u64(j, "start_ns", s->start_ns + off);
	json_kv_u64_or_null(j, "end_ns", s->end_ns != 0 && s->running == 0, s->end_ns + off);
	json_kv_string(j, "engine", step_engine_name(s->engine));
	json_kv_string(j, "workdir", s->workdir);
	json_kv_string(j, "rule", s->rule);
	json_kv_u64_or_null(j, "pid", s->main != NULL, s->main ? s->main->tgid : 0);
	json_kv_u64_or_null(j, "exit_code", s->exited && sig == 0, decode_exit_status(raw));
	json_kv_u64_or_null(j, "signal", s->exited, sig);
	json_kv_bool(j, "failed", s->failed);
	json_kv_u64_or_null(j, "first_failed_pid", s->first_failed != NULL, s->first_failed ? s->first_failed->tgid : 0);
	json_kv_u64(j, "processes", s->processes);
	json_kv_u64(j, "running", s->running);
	json_kv_u64(j, "failed_processes", s->failed_processes);
	json_kv_u64(j, "nonzero_exits", step_nonzero_exits(s));
	json_kv_u64(j, "oom_killed", s->oom_killed);
	json_kv_u64(j, "cpu_ns", s->cpu_ns);
	json_kv_u64(j, "peak_rss_bytes", s->peak_rss_bytes);
	json_kv_bool(j, "peak_rss_partial", s->peak_rss_partial);
	json_kv_u64(j, "rss_sum_of_peaks_bytes", s->rss_sum_of_peaks_bytes);
	json_kv_u64(j, "max_process_rss_bytes", s->max_process_rss_bytes);
	json_kv_string(j, "memcg", s->memcg_own && cgroups ? cgtab_path(cgroups, s->memcg_v1, s->memcg_id) : NULL);
	json_kv_u64_or_null(j, "memcg_peak_bytes", s->memcg_own && s->memcg_peak_bytes, s->memcg_peak_bytes);
	report_write_limits(j, s->cpu_limit_millicores, s->memory_limit_bytes);
	json_kv_u64(j, "read_bytes", s->read_bytes);
	json_kv_u64(j, "write_bytes", s->write_bytes);
	json_kv_u64(j, "rchar", s->rchar);
	json_kv_u64(j, "wchar", s->wchar);
	json_kv_bool(j, "io_partial", s->io_partial);
	json_kv_u64(j, "net_tx_bytes", s->net_tx_bytes);
	json_kv_u64(j, "net_rx_bytes", s->net_rx_bytes);
	json_kv_u64(j, "tools_more", s->tools_more);
	write_step_series(j, ss, off);
	json_object_end(j);
}

void report_write_steps(struct json *j, const struct steps *st, const struct step_series *series,
			uint64_t mono_to_real_ns, const struct cgtab *cgroups)
{
	json_key(j, "steps");
	json_array_begin(j);
	for (uint32_t i = 0; st && i < st->n; i++)
		write_step(j, &st->v[i], series && i < STEP_SERIES_MAX_STEPS ? &series[i] : NULL, mono_to_real_ns,
			   cgroups);
	json_array_end(j);
}

/* Text from processes, made safe for a terminal and cut to width (report_safe_text). */
static void put_cell(struct obuf *o, const char *s, size_t width)
{
	char buf[STEP_NAME_MAX];

	report_safe_text(buf, sizeof(buf), s ? s : "-");
	if (strlen(buf) > width)
		buf[width] = 0;
	obuf_printf(o, "%-*s", (int)width, buf);
}

/*
 * FAILED, KILLED, OOM-KILLED only for a step that failed (its main's end);
 * a step that succeeded is ok, with the non-zero exits it tolerated.
 */
static void print_step_status(struct obuf *o, const struct step *s)
{
	unsigned sig = s->exited ? decode_exit_signal(s->exit_raw) : 0;
	uint32_t others = step_nonzero_exits(s);
	char name[24];

	if (s->running)
		obuf_printf(o, "running (%u)", s->running);
	else if (s->failed && s->main && (s->main->flags & PROC_F_OOM))
		obuf_puts(o, "OOM-KILLED");
	else if (s->failed && sig)
		obuf_printf(o, "%s %s", sig == SIGPIPE ? "FAILED" : "KILLED", report_signal_name(sig, name, sizeof(name)));
	else if (s->failed)
		obuf_printf(o, "FAILED exit %u", decode_exit_status(s->exit_raw));
	else
		obuf_puts(o, "ok");
	if (others && !s->running)
		obuf_printf(o, " (%u %s non-zero)", others, s->failed ? "more ended" : "ended");
}

void report_print_steps(struct obuf *o, const struct steps *st, unsigned max_lines)
{
	if (!st || st->n == 0)
		return;
	obuf_printf(o, "steps: %u (%s)\n", st->n, st->run.engine ? st->run.engine : step_engine_name(st->v[0].engine));
	obuf_printf(o, "  %-24s %-40s %9s %9s %10s  %s\n", "STEP", "NAME", "WALL", "CPU", "PEAK RSS", "STATUS");
	for (uint32_t i = 0; i < st->n && i < max_lines; i++) {
		const struct step *s = &st->v[i];
		char wall[24], cpu[24], rss[24];

		if (s->end_ns >= s->start_ns && s->end_ns)
			report_format_duration(s->end_ns - s->start_ns, wall, sizeof(wall));
		else
			snprintf(wall, sizeof(wall), "?");
		report_format_duration(s->cpu_ns, cpu, sizeof(cpu));
		report_format_bytes(s->peak_rss_bytes, rss, sizeof(rss));
		obuf_puts(o, "  ");
		put_cell(o, s->id, 24);
		obuf_putc(o, ' ');
		put_cell(o, s->name, 40);
		obuf_printf(o, " %9s %9s %10s  ", wall, cpu, rss);
		print_step_status(o, s);
		obuf_puts(o, "\n");
	}
	if (st->n > max_lines)
		obuf_printf(o, "  ... %u more steps in the JSON report\n", st->n - max_lines);
}
