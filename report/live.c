/* SPDX-License-Identifier: Apache-2.0 */
#include "live.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "hash.h"
#include "json.h"
#include "lake.h"
#include "report.h"
#include "report_ctx.h"
#include "series.h"

#define RATE_FRESH_NS (3ULL * 1000000000ULL) /* a sample older than this says nothing about "now" */
#define RECORD_SPLIT (TL_RUN_MAX - (64u << 10)) /* start another record past this many bytes */

/* Now and so far: a run's or a step's figures. */
struct live_figs {
	uint64_t cpu_millicores, rss_bytes, read_bps, write_bps, tx_bps, rx_bps;
};

struct live_step {
	struct live_figs now;
	uint64_t max_ts;     /* newest record of its processes */
	uint64_t struct_ts;  /* newest fork, exec or exit of them: what changes the step itself */
};

struct live_agg {
	uint32_t first, count; /* its processes: live.members[first .. first + count) */
	uint32_t step_first, step_count; /* its steps: live.run_steps[step_first ..] (indexes into the steps) */
	uint64_t processes, running;
	uint64_t cpu_ns, read_bytes, write_bytes, rchar, wchar, net_tx_bytes, net_rx_bytes;
	struct live_figs now;
	uint64_t max_ts;
	uint64_t struct_ts;
};

void live_init(struct live *lv)
{
	memset(lv, 0, sizeof(*lv));
}

void live_free(struct live *lv)
{
	free(lv->agg);
	free(lv->step);
	free(lv->members);
	free(lv->run_steps);
	memset(lv, 0, sizeof(*lv));
}

static void add_sat(uint64_t *a, uint64_t v)
{
	*a = *a + v < *a ? UINT64_MAX : *a + v;
}

static uint64_t per_s(uint64_t d, uint64_t dt_ns, uint64_t unit)
{
	return dt_ns ? (uint64_t)((long double)d * unit * 1e9L / dt_ns) : 0;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/* What a live process is doing now: rates between its last two samples, if recent. */
static void figs_now(const struct proc *p, uint64_t newest_ts, struct live_figs *f)
{
	const struct proc_series *s = p->series;
	uint64_t dt;

	if (!s || (p->flags & PROC_F_EXIT))
		return;
	add_sat(&f->rss_bytes, s->last.rss_bytes);
	if (!s->prev.ts_ns || s->last.ts_ns <= s->prev.ts_ns || newest_ts - s->last.ts_ns > RATE_FRESH_NS)
		return;
	dt = s->last.ts_ns - s->prev.ts_ns;
	add_sat(&f->cpu_millicores, per_s(delta(s->prev.runtime_ns, s->last.runtime_ns), dt, 1000) / 1000000000ULL);
	add_sat(&f->read_bps, per_s(delta(s->prev.read_bytes, s->last.read_bytes), dt, 1));
	add_sat(&f->write_bps, per_s(delta(s->prev.write_bytes, s->last.write_bytes), dt, 1));
	add_sat(&f->tx_bps, per_s(delta(s->prev.net_tx_bytes, s->last.net_tx_bytes), dt, 1));
	add_sat(&f->rx_bps, per_s(delta(s->prev.net_rx_bytes, s->last.net_rx_bytes), dt, 1));
}

/* A process's own figures so far: at exit, else its newest sample. */
static void add_totals(struct live_agg *a, const struct proc *p)
{
	if (p->flags & PROC_F_EXIT) {
		const struct tr_exit *x = &p->exit;

		add_sat(&a->cpu_ns, x->runtime_ns);
		add_sat(&a->read_bytes, x->read_bytes);
		add_sat(&a->write_bytes, x->write_bytes);
		add_sat(&a->rchar, x->rchar);
		add_sat(&a->wchar, x->wchar);
		add_sat(&a->net_tx_bytes, x->net_tx_bytes);
		add_sat(&a->net_rx_bytes, x->net_rx_bytes);
	} else if (p->series) {
		const struct series_point *l = &p->series->last;

		add_sat(&a->cpu_ns, l->runtime_ns);
		add_sat(&a->read_bytes, l->read_bytes);
		add_sat(&a->write_bytes, l->write_bytes);
		add_sat(&a->rchar, l->rchar);
		add_sat(&a->wchar, l->wchar);
		add_sat(&a->net_tx_bytes, l->net_tx_bytes);
		add_sat(&a->net_rx_bytes, l->net_rx_bytes);
	}
}

static int grow(void **v, uint32_t *cap, uint32_t need, size_t elem)
{
	void *nv;
	uint32_t ncap;

	if (need <= *cap)
		return 0;
	ncap = need < 64 ? 64 : need * 2;
	nv = realloc(*v, (size_t)ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Records                                                            */
/* ------------------------------------------------------------------ */

struct rec {
	struct live *lv;
	const struct runs *runs;
	struct run *run;
	const struct proc *root;   /* the run's first process, NULL once it left the table */
	const struct live_agg *agg;
	struct obuf o;
	struct json j;
	const char *section; /* the array open now, or NULL */
	int err;
};

static uint64_t real(const struct live *lv, uint64_t mono)
{
	return mono + lv->mono_to_real_ns;
}

static void write_figs(struct json *j, const char *key, const struct live_figs *f)
{
	json_key(j, key);
	json_object_begin(j);
	json_kv_u64(j, "cpu_millicores", f->cpu_millicores);
	json_kv_u64(j, "rss_bytes", f->rss_bytes);
	json_kv_u64(j, "read_bytes_per_s", f->read_bps);
	json_kv_u64(j, "write_bytes_per_s", f->write_bps);
	json_kv_u64(j, "net_tx_bytes_per_s", f->tx_bps);
	json_kv_u64(j, "net_rx_bytes_per_s", f->rx_bps);
	json_object_end(j);
}

static const char *env_or_null(const struct run *r, enum run_env k)
{
	return r->env[k][0] ? r->env[k] : NULL;
}

static void write_run_header(struct rec *w)
{
	struct json *j = &w->j;
	const struct run *r = w->run;
	const struct live_agg *a = w->agg;
	char pipeline[2 * RUN_STR_MAX + 16];
	const char *engine = r->engine != STEP_ENGINE_GENERIC ? step_engine_name(r->engine)
			     : r->other_engine[0] ? r->other_engine : NULL;
	bool ended = r->state != RUN_RUNNING;
	const char *id = env_or_null(r, RUN_ENV_RUN_ID);

	if (r->env[RUN_ENV_PIPELINE][0])
		snprintf(pipeline, sizeof(pipeline), "%s", r->env[RUN_ENV_PIPELINE]);
	else if (r->rule_name[0])
		snprintf(pipeline, sizeof(pipeline), "%s", r->rule_name);
	else if (engine)
		snprintf(pipeline, sizeof(pipeline), "%s:%s", engine, r->workflow[0] ? r->workflow : "?");
	else
		pipeline[0] = 0;
	if (!id)
		id = env_or_null(r, RUN_ENV_SLURM);
	if (!id)
		id = env_or_null(r, RUN_ENV_AWS);
	json_kv_string(j, "schema", LIVE_SCHEMA);
	json_kv_string(j, "key", r->key);
	json_kv_u64(j, "update", r->update);
	json_kv_u64(j, "update_ns", real(w->lv, w->lv->now_ns));
	json_kv_string(j, "state", run_state_name(r->state));
	json_kv_string(j, "detected_by", run_detect_name(r->detected_by));
	json_kv_string(j, "engine", engine);
	json_kv_string(j, "pipeline", pipeline[0] ? pipeline : NULL);
	json_kv_string(j, "run_id", id);
	json_kv_string(j, "run_name", r->run_name[0] ? r->run_name : NULL);
	json_kv_string(j, "slurm_job_id", env_or_null(r, RUN_ENV_SLURM));
	json_kv_string(j, "aws_batch_job_id", env_or_null(r, RUN_ENV_AWS));
	json_kv_string(j, "slurm_job_name", env_or_null(r, RUN_ENV_SLURM_NAME));
	json_kv_string(j, "slurm_submit_dir", env_or_null(r, RUN_ENV_SUBMIT_DIR));
	json_kv_string(j, "slurm_submit_host", env_or_null(r, RUN_ENV_SUBMIT_HOST));
	json_key(j, "command");
	json_array_begin(j);
	for (uint32_t i = 0, off = 0; i < r->command_argc && off < r->command_len; i++) {
		size_t n = strnlen(r->command + off, r->command_len - off);

		json_string_n(j, r->command + off, n);
		off += (uint32_t)n + 1;
	}
	json_array_end(j);
	json_kv_u64(j, "root_pid", r->root_tgid);
	json_kv_u64(j, "root_start_mono_ns", r->root_start_ns);
	report_write_uid(j, w->root); /* null once the root left the table: the lake keeps the first */
	json_kv_u64(j, "start_ns", real(w->lv, r->root_start_ns));
	json_kv_u64_or_null(j, "end_ns", ended, real(w->lv, r->end_ts_ns));
	json_kv_u64_or_null(j, "exit_code", r->root_exited && !decode_exit_signal(r->root_exit_raw),
			    decode_exit_status(r->root_exit_raw));
	json_kv_u64_or_null(j, "signal", r->root_exited, decode_exit_signal(r->root_exit_raw));
	json_kv_bool(j, "preexisting", r->root_preexisting);
	json_kv_u64(j, "processes", a->processes + r->folded.processes);
	json_kv_u64(j, "running_processes", a->running);
	json_key(j, "totals");
	json_object_begin(j);
	json_kv_u64(j, "cpu_ns", a->cpu_ns + r->folded.cpu_ns);
	json_kv_u64(j, "read_bytes", a->read_bytes + r->folded.read_bytes);
	json_kv_u64(j, "write_bytes", a->write_bytes + r->folded.write_bytes);
	json_kv_u64(j, "rchar", a->rchar + r->folded.rchar);
	json_kv_u64(j, "wchar", a->wchar + r->folded.wchar);
	json_kv_u64(j, "net_tx_bytes", a->net_tx_bytes + r->folded.net_tx_bytes);
	json_kv_u64(j, "net_rx_bytes", a->net_rx_bytes + r->folded.net_rx_bytes);
	json_object_end(j);
	write_figs(j, "live", &a->now);
	/* Constant, and small (~250 bytes): in every record, so the lake has it whichever record arrives. */
	if (w->lv->host)
		report_write_host(j, w->lv->host);
}

static void rec_open(struct rec *w)
{
	obuf_init_mem(&w->o, TL_RUN_MAX);
	json_init(&w->j, &w->o);
	json_object_begin(&w->j);
	write_run_header(w);
	w->section = NULL;
}

static int rec_close(struct rec *w)
{
	int rc;

	if (w->section)
		json_array_end(&w->j);
	json_object_end(&w->j);
	rc = w->o.err;
	if (!rc)
		rc = w->lv->emit(w->lv->emit_ctx, TL_RUN, w->o.buf, (uint32_t)w->o.len);
	if (!rc) {
		w->lv->records++;
		w->lv->bytes += w->o.len;
	}
	obuf_free(&w->o);
	return rc;
}

/* Before an element of array `name`: open the array, or a new record when this one is full. */
static void rec_element(struct rec *w, const char *name)
{
	if (w->err)
		return;
	if (w->o.len > RECORD_SPLIT) {
		w->err = rec_close(w);
		if (w->err)
			return;
		rec_open(w);
	}
	if (w->section != name) {
		if (w->section)
			json_array_end(&w->j);
		json_key(&w->j, name);
		json_array_begin(&w->j);
		w->section = name;
	}
}

static const char *step_state(const struct run *r, const struct step *st)
{
	if (st->running)
		return r->state == RUN_LOST ? "lost" : "running";
	return st->failed ? "failed" : "succeeded";
}

static void write_step(struct rec *w, const struct step *st, const struct live_figs *now)
{
	struct json *j = &w->j;
	bool ended = st->running == 0;

	json_object_begin(j);
	json_kv_string(j, "id", st->id);
	json_kv_string(j, "name", st->name);
	json_kv_string(j, "engine", step_engine_name(st->engine));
	json_kv_string(j, "rule", st->rule);
	json_kv_string(j, "workdir", st->workdir);
	json_kv_string(j, "state", step_state(w->run, st));
	json_key(j, "tools");
	json_array_begin(j);
	for (uint32_t i = 0; i < st->n_tools; i++)
		json_string(j, st->tools[i].name);
	json_array_end(j);
	json_kv_u64(j, "start_ns", real(w->lv, st->start_ns));
	json_kv_u64_or_null(j, "end_ns", ended && st->end_ns, real(w->lv, st->end_ns));
	json_kv_u64(j, "processes", st->processes);
	json_kv_u64(j, "running", st->running);
	json_kv_u64(j, "failed_processes", st->failed_processes);
	json_kv_u64(j, "nonzero_exits", step_nonzero_exits(st));
	json_kv_u64(j, "oom_killed", st->oom_killed);
	json_kv_u64_or_null(j, "exit_code", st->exited && !decode_exit_signal(st->exit_raw),
			    decode_exit_status(st->exit_raw));
	json_kv_u64_or_null(j, "signal", st->exited, decode_exit_signal(st->exit_raw));
	json_kv_bool(j, "failed", st->failed);
	json_kv_u64(j, "cpu_ns", st->cpu_ns);
	json_kv_u64(j, "peak_rss_bytes", st->peak_rss_bytes);
	json_kv_u64(j, "rss_sum_of_peaks_bytes", st->rss_sum_of_peaks_bytes);
	json_kv_bool(j, "peak_rss_partial", st->peak_rss_partial);
	json_kv_u64_or_null(j, "memcg_peak_bytes", st->memcg_peak_bytes != 0, st->memcg_peak_bytes);
	report_write_limits(j, st->cpu_limit_millicores, st->memory_limit_bytes);
	json_kv_u64(j, "read_bytes", st->read_bytes);
	json_kv_u64(j, "write_bytes", st->write_bytes);
	json_kv_u64(j, "rchar", st->rchar);
	json_kv_u64(j, "wchar", st->wchar);
	json_kv_u64(j, "net_tx_bytes", st->net_tx_bytes);
	json_kv_u64(j, "net_rx_bytes", st->net_rx_bytes);
	write_figs(j, "live", now);
	json_object_end(j);
}

static const char *tool_of(const struct proc *p)
{
	return p->image ? proc_image_tool(p->image) : p->comm[0] ? p->comm : NULL;
}

/* A fingerprint, not a table's hash: kept in the checkpoint (attrib/runs_ckpt.c), so its seed is fixed. */
static uint32_t attr_hash(const struct run *r, const struct step *st, const struct proc *p)
{
	const char *tool = tool_of(p);
	uint64_t h = hash_bytes(0x6c697665, r->key, strlen(r->key));

	h = hash_bytes(h, st ? st->id : "", st ? strlen(st->id) : 0);
	h = hash_bytes(h, tool ? tool : "", tool ? strlen(tool) : 0);
	return (uint32_t)h | 1;
}

static void write_attr(struct rec *w, const struct step *st, const struct proc *p)
{
	struct json *j = &w->j;

	json_object_begin(j);
	json_kv_u64(j, "pid", p->tgid);
	json_kv_u64(j, "start_mono_ns", p->start_ns);
	json_kv_string(j, "step", st ? st->id : NULL);
	json_kv_string(j, "tool", tool_of(p));
	json_kv_bool(j, "preexisting", (p->flags & PROC_F_PREEXISTING) != 0);
	json_object_end(j);
}

static void signal_head(struct json *j, const char *kind, const struct step *st, const struct proc *p)
{
	json_object_begin(j);
	json_kv_string(j, "kind", kind);
	json_kv_u64(j, "pid", p->tgid);
	json_kv_u64(j, "start_mono_ns", p->start_ns);
	json_kv_string(j, "step", st ? st->id : NULL);
	json_kv_string(j, "tool", tool_of(p));
}

/* Signals of an end (docs/processor.md, "Signals: what failed"): oom_kill, killed, failed; then waits. */
static void write_end_signals(struct rec *w, const struct step *st, const struct proc *p, bool root)
{
	uint32_t raw = p->exit.exit_code;
	unsigned sig = decode_exit_signal(raw), status = decode_exit_status(raw);
	struct proc_waits wt = report_waits(p);
	struct json *j = &w->j;

	if (p->flags & PROC_F_OOM) {
		rec_element(w, "signals");
		signal_head(j, "oom_kill", st, p);
		json_kv_u64(j, "anon_rss_kb", p->oom.anon_rss_kb);
		json_kv_u64(j, "total_vm_kb", p->oom.total_vm_kb);
		json_kv_u64_or_null(j, "memcg_limit_bytes", p->oom.memcg_limit_bytes != 0, p->oom.memcg_limit_bytes);
		json_object_end(j);
	} else if (sig && sig != SIGPIPE) {
		rec_element(w, "signals");
		signal_head(j, "killed", st, p);
		json_kv_u64(j, "signal", sig);
		json_kv_bool(j, "core_dumped", decode_exit_core(raw) != 0);
		json_object_end(j);
	} else if ((sig || status) && (root || (st && st->failed && st->main == p))) {
		rec_element(w, "signals");
		signal_head(j, "failed", st, p);
		json_kv_u64_or_null(j, "exit_code", !sig, status);
		json_object_end(j);
	}
	if (w->lv->io_wait_after_ns && wt.known && wt.iowait_ns >= w->lv->io_wait_after_ns) {
		rec_element(w, "signals");
		signal_head(j, "io_wait", st, p);
		json_kv_u64(j, "iowait_ns", wt.iowait_ns);
		json_object_end(j);
	}
	if (w->lv->net_wait_after_ns && wt.known && wt.net_wait_ns >= w->lv->net_wait_after_ns) {
		rec_element(w, "signals");
		signal_head(j, "net_wait", st, p);
		json_kv_u64(j, "net_wait_ns", wt.net_wait_ns);
		json_object_end(j);
	}
}

/* ------------------------------------------------------------------ */
/* The cycle                                                          */
/* ------------------------------------------------------------------ */

/* The newest record that changed what p is (fork, exec, exit), not just its counters. */
static uint64_t struct_ts(const struct proc *p)
{
	uint64_t t = p->fork_ts_ns;

	if (p->image && p->image->ts_ns > t)
		t = p->image->ts_ns;
	if ((p->flags & PROC_F_EXIT) && p->exit.hdr.ts_ns > t)
		t = p->exit.hdr.ts_ns;
	return t ? t : p->start_ns;
}

/* Each run's steps (those whose main process is in it), in step order. */
static void group_steps(struct live *lv, const struct steps *steps, const struct runs *runs)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < steps->n; i++)
		if (steps->v[i].main && runs_of(runs, steps->v[i].main))
			lv->agg[steps->v[i].main->run - 1].step_count++;
	for (uint32_t i = 0; i < runs->high; i++) {
		lv->agg[i].step_first = total;
		total += lv->agg[i].step_count;
		lv->agg[i].step_count = 0;
	}
	for (uint32_t i = 0; i < steps->n; i++)
		if (steps->v[i].main && runs_of(runs, steps->v[i].main)) {
			struct live_agg *a = &lv->agg[steps->v[i].main->run - 1];

			lv->run_steps[a->step_first + a->step_count++] = i;
		}
}

/* Per run and per step: counts, sums, now, newest record; each run's processes and steps, grouped. Linear. */
static int aggregate(struct live *lv, struct proctab *t, const struct steps *steps, const struct runs *runs)
{
	uint32_t total = 0;

	if (grow((void **)&lv->agg, &lv->agg_cap, runs->high + 1, sizeof(*lv->agg)) ||
	    grow((void **)&lv->step, &lv->step_cap, steps->n + 1, sizeof(*lv->step)) ||
	    grow((void **)&lv->members, &lv->members_cap, t->used + 1, sizeof(*lv->members)) ||
	    grow((void **)&lv->run_steps, &lv->run_steps_cap, steps->n + 1, sizeof(*lv->run_steps)))
		return -ENOMEM;
	memset(lv->agg, 0, (size_t)(runs->high + 1) * sizeof(*lv->agg));
	memset(lv->step, 0, (size_t)(steps->n + 1) * sizeof(*lv->step));
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		struct live_agg *a;

		if (!runs_of(runs, p))
			continue;
		a = &lv->agg[p->run - 1];
		a->count++;
		a->processes++;
		if (!(p->flags & PROC_F_EXIT))
			a->running++;
		add_totals(a, p);
		figs_now(p, t->newest_ts, &a->now);
		if (p->last_ts_ns > a->max_ts)
			a->max_ts = p->last_ts_ns;
		if (struct_ts(p) > a->struct_ts)
			a->struct_ts = struct_ts(p);
		if (p->step && p->step <= steps->n) {
			struct live_step *ls = &lv->step[p->step - 1];

			figs_now(p, t->newest_ts, &ls->now);
			if (p->last_ts_ns > ls->max_ts)
				ls->max_ts = p->last_ts_ns;
			if (struct_ts(p) > ls->struct_ts)
				ls->struct_ts = struct_ts(p);
		}
	}
	group_steps(lv, steps, runs);
	for (uint32_t i = 0; i < runs->high; i++) {
		lv->agg[i].first = total;
		total += lv->agg[i].count;
		lv->agg[i].count = 0;
	}
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (runs_of(runs, p)) {
			struct live_agg *a = &lv->agg[p->run - 1];

			lv->members[a->first + a->count++] = p;
		}
	return 0;
}

/* Has the run ended, and how? */
static void run_judge(struct run *r, const struct live_agg *a, const struct proctab *t)
{
	const struct proc *root = proctab_lookup(t, r->root_tgid, r->root_start_ns);

	if (root && (root->flags & PROC_F_EXIT) && !r->root_exited) {
		r->root_exited = true;
		r->root_exit_raw = root->exit.exit_code;
	}
	if (r->state != RUN_RUNNING || a->running > 0)
		return;
	r->end_ts_ns = a->max_ts > r->emitted_ts_ns ? a->max_ts : t->newest_ts;
	if (!r->root_exited)
		r->state = RUN_LOST; /* every process we know of exited, its first one's end never seen */
	else
		r->state = r->root_exit_raw ? RUN_FAILED : RUN_SUCCEEDED;
}

/* The steps that changed: a process came or went (always), or only counters moved (when figures are due). */
static void write_steps(struct rec *w, const struct steps *steps, bool final, bool figures)
{
	const struct live *lv = w->lv;
	uint64_t since = w->run->emitted_ts_ns;

	for (uint32_t k = 0; k < w->agg->step_count && !w->err; k++) {
		uint32_t i = lv->run_steps[w->agg->step_first + k];
		const struct step *st = &steps->v[i];

		if (!final && lv->step[i].struct_ts <= since && !(figures && lv->step[i].max_ts > since))
			continue;
		rec_element(w, "steps");
		write_step(w, st, &lv->step[i].now);
	}
}

static void write_processes(struct rec *w, const struct steps *steps, struct proc *const *m, uint32_t n, bool final)
{
	for (uint32_t i = 0; i < n && !w->err; i++) {
		struct proc *p = m[i];
		const struct step *st = steps_of(steps, p);
		uint32_t h = attr_hash(w->run, st, p);

		if (h != p->live_attr) {
			rec_element(w, "processes_attributed");
			write_attr(w, st, p);
			p->live_attr = h;
		}
		p->flags |= PROC_F_TOOL_SENT;
	}
	for (uint32_t i = 0; i < n && !w->err; i++) {
		struct proc *p = m[i];
		const struct step *st = steps_of(steps, p);

		if (!(p->flags & PROC_F_EXIT))
			continue;
		if (!(p->flags & PROC_F_LIVE_END)) {
			write_end_signals(w, st, p, (p->flags & PROC_F_RUN_ROOT) != 0);
			p->flags |= PROC_F_LIVE_END;
		} else if (final && st && st->failed && st->engine == STEP_ENGINE_GENERIC && st->main == p) {
			/* judged failed only now, when its script failed on it */
			rec_element(w, "signals");
			signal_head(&w->j, "failed", st, p);
			json_kv_u64_or_null(&w->j, "exit_code", !decode_exit_signal(p->exit.exit_code),
					    decode_exit_status(p->exit.exit_code));
			json_object_end(&w->j);
		}
	}
}

static int write_run(struct live *lv, struct proctab *t, const struct steps *steps, struct runs *runs,
		     struct run *run, const struct live_agg *a, bool figures)
{
	struct rec w = { .lv = lv, .runs = runs, .run = run, .agg = a,
			 .root = proctab_lookup(t, run->root_tgid, run->root_start_ns) };
	bool final = run->state != RUN_RUNNING;

	run->update++;
	rec_open(&w);
	write_steps(&w, steps, final, figures);
	write_processes(&w, steps, lv->members + a->first, a->count, final);
	if (w.err) {
		obuf_free(&w.o);
		return w.err;
	}
	run->emitted_ts_ns = t->newest_ts;
	return rec_close(&w);
}

/* Close a TL_TOOLS record and hand it over. */
static int tools_close(struct live *lv, struct obuf *o, struct json *j)
{
	int rc;

	json_array_end(j);
	json_object_end(j);
	rc = o->err ? o->err : lv->emit(lv->emit_ctx, TL_TOOLS, o->buf, (uint32_t)o->len);
	obuf_free(o);
	return rc;
}

/* The tools of processes in no run that have not been sent: TL_TOOLS records, split like TL_RUN's. */
static int write_tools(struct live *lv, struct proctab *t, const struct runs *runs)
{
	struct obuf o;
	struct json j;
	bool open = false;
	int rc = 0;

	for (struct proc *p = proctab_next(t, NULL); p && !rc; p = proctab_next(t, p)) {
		if ((p->flags & PROC_F_TOOL_SENT) || runs_of(runs, p) || !tool_of(p))
			continue;
		if (!open) {
			obuf_init_mem(&o, TL_RUN_MAX);
			json_init(&j, &o);
			json_object_begin(&j);
			json_kv_string(&j, "schema", TOOLS_SCHEMA);
			json_key(&j, "processes");
			json_array_begin(&j);
			open = true;
		}
		json_object_begin(&j);
		json_kv_u64(&j, "pid", p->tgid);
		json_kv_u64(&j, "start_mono_ns", p->start_ns);
		json_kv_string(&j, "tool", tool_of(p));
		json_object_end(&j);
		p->flags |= PROC_F_TOOL_SENT;
		if (o.len > RECORD_SPLIT) {
			rc = tools_close(lv, &o, &j);
			open = false;
		}
	}
	if (open)
		rc = tools_close(lv, &o, &j);
	return rc;
}

/*
 * Which exited processes the table must keep (live.h). A step is kept or
 * let go whole: while it runs, while its generic main's failure waits for
 * its run's end, and for the table's grace after its newest record, so
 * that its members go in one sweep. A record written after some of them
 * went (the run's final one rewrites every step it still holds) would
 * otherwise describe the step by what is left of it.
 */
static void hold(const struct live *lv, struct proctab *t, const struct steps *steps, const struct runs *runs)
{
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		const struct run *r = runs_of(runs, p);
		const struct step *st = r ? steps_of(steps, p) : NULL;
		bool keep = st && (st->running > 0 ||
				   (st->engine == STEP_ENGINE_GENERIC && st->main && (st->main->flags & PROC_F_EXIT) &&
				    st->main->exit.exit_code) ||
				   t->newest_ts - lv->step[p->step - 1].max_ts < t->grace_ns);

		if (keep)
			p->flags |= PROC_F_HELD;
		else
			p->flags &= ~(uint32_t)PROC_F_HELD;
	}
}

int live_cycle(struct live *lv, struct session *ss, struct steps *steps, struct runs *runs, uint64_t now_ns)
{
	struct proctab *t = &ss->tab;
	bool figures;
	uint32_t ended = 0;
	int rc;

	lv->now_ns = now_ns;
	runs_assign(runs, t, steps);
	if (!runs->live)
		return write_tools(lv, t, runs);
	/*
	 * Rebuild the steps when a process came, went, exec'd or exited (the
	 * table's `changes`: the steps' pointers into it are stale then), and
	 * for new samples alone no more often than figures are written.
	 */
	if (t->changes != lv->built_changes ||
	    (t->newest_ts != lv->built_newest_ts && now_ns - lv->built_at_ns >= LIVE_FIGURES_NS)) {
		if (t->root_pid)
			proctab_mark_tree(t);
		if (steps_build(steps, t) == -ENOMEM)
			return 0; /* try again next time: what was sent stays true */
		lv->builds++;
		lv->built_changes = t->changes;
		lv->built_newest_ts = t->newest_ts;
		lv->built_at_ns = now_ns;
	}
	if (aggregate(lv, t, steps, runs))
		return 0;
	for (uint32_t i = 0; i < runs->high; i++) {
		struct run *r = &runs->v[i];
		const struct live_agg *a = &lv->agg[i];
		enum run_state before = r->state;

		if (!r->used)
			continue;
		run_judge(r, a, t);
		/* A process came or went: now. Only counters moved: at most every LIVE_FIGURES_NS. */
		figures = a->max_ts > r->emitted_ts_ns && now_ns - r->figures_at_ns >= LIVE_FIGURES_NS;
		if (a->struct_ts > r->emitted_ts_ns || figures || r->state != before || !r->update ||
		    now_ns - r->emitted_at_ns >= LIVE_REFRESH_NS) {
			rc = write_run(lv, t, steps, runs, r, a, figures || now_ns - r->emitted_at_ns >= LIVE_REFRESH_NS);
			if (rc)
				return rc;
			r->emitted_at_ns = now_ns;
			if (figures)
				r->figures_at_ns = now_ns;
		}
		if (r->state != RUN_RUNNING) {
			r->final_sent = true;
			ended++;
		}
	}
	if (ended)
		runs_release_ended(runs, t); /* one pass over the table for every run that ended */
	hold(lv, t, steps, runs);
	return write_tools(lv, t, runs);
}
