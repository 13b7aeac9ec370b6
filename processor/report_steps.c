/* SPDX-License-Identifier: Apache-2.0 */
#include "report_steps.h"

#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "report.h"

void report_write_run(struct json *j, const struct steps *st)
{
	const struct run_info *r = &st->run;

	json_key(j, "run");
	json_object_begin(j);
	json_kv_string(j, "pipeline", r->pipeline);
	json_kv_string(j, "run_id", r->run_id);
	json_kv_string(j, "engine", r->engine);
	json_kv_string(j, "run_name", r->run_name);
	json_kv_string(j, "engine_dir", r->engine_dir);
	json_kv_u64_or_null(j, "engine_pid", r->engine_proc != NULL, r->engine_proc ? r->engine_proc->tgid : 0);
	json_kv_string(j, "slurm_job_id", r->slurm_job_id);
	json_kv_string(j, "aws_batch_job_id", r->aws_batch_job_id);
	json_kv_u64(j, "steps_dropped", st->dropped);
	json_kv_u64(j, "processes_without_step_by_bound", st->unassigned);
	json_object_end(j);
}

static void write_step(struct json *j, const struct step *s, uint64_t off)
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
	json_kv_u64(j, "oom_killed", s->oom_killed);
	json_kv_u64(j, "cpu_ns", s->cpu_ns);
	json_kv_u64(j, "peak_rss_bytes", s->peak_rss_bytes);
	json_kv_bool(j, "peak_rss_partial", s->peak_rss_partial);
	json_kv_u64(j, "read_bytes", s->read_bytes);
	json_kv_u64(j, "write_bytes", s->write_bytes);
	json_kv_u64(j, "rchar", s->rchar);
	json_kv_u64(j, "wchar", s->wchar);
	json_kv_bool(j, "io_partial", s->io_partial);
	json_kv_u64(j, "net_tx_bytes", s->net_tx_bytes);
	json_kv_u64(j, "net_rx_bytes", s->net_rx_bytes);
	json_kv_u64(j, "tools_more", s->tools_more);
	json_object_end(j);
}

void report_write_steps(struct json *j, const struct steps *st, uint64_t mono_to_real_ns)
{
	json_key(j, "steps");
	json_array_begin(j);
	for (uint32_t i = 0; st && i < st->n; i++)
		write_step(j, &st->v[i], mono_to_real_ns);
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

void report_print_steps(struct obuf *o, const struct steps *st, unsigned max_lines)
{
	if (!st || st->n == 0)
		return;
	obuf_printf(o, "steps: %u (%s)\n", st->n, st->run.engine ? st->run.engine : step_engine_name(st->v[0].engine));
	obuf_printf(o, "  %-24s %-40s %9s %9s %10s  %s\n", "STEP", "NAME", "WALL", "CPU", "PEAK RSS", "STATUS");
	for (uint32_t i = 0; i < st->n && i < max_lines; i++) {
		const struct step *s = &st->v[i];
		char wall[24], cpu[24], rss[24], sig[24];

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
		if (s->running)
			obuf_printf(o, "running (%u)", s->running);
		else if (s->oom_killed)
			obuf_puts(o, "OOM-KILLED");
		else if (s->exited && decode_exit_signal(s->exit_raw))
			obuf_printf(o, "KILLED %s", report_signal_name(decode_exit_signal(s->exit_raw), sig, sizeof(sig)));
		else if (s->failed)
			obuf_printf(o, "FAILED exit %u", decode_exit_status(s->exit_raw));
		else
			obuf_puts(o, "ok");
		obuf_puts(o, "\n");
	}
	if (st->n > max_lines)
		obuf_printf(o, "  ... %u more steps in the JSON report\n", st->n - max_lines);
}
