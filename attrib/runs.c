/* SPDX-License-Identifier: Apache-2.0 */
#include "runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "tool.h"
#include "toolrules.h"

static const char *const run_env_keys[RUN_ENV_KEYS] = { "TRACER_PIPELINE",  "TRACER_RUN_ID",   "SLURM_JOB_ID",
							 "AWS_BATCH_JOB_ID", "SLURM_JOB_NAME",  "SLURM_SUBMIT_DIR",
							 "SLURM_SUBMIT_HOST" };

const char *run_detect_name(enum run_detect d)
{
	switch (d) {
	case RUN_BY_ENV:
		return "env";
	case RUN_BY_RULE:
		return "rule";
	case RUN_BY_TRACER_RUN:
		return "tracer_run";
	case RUN_BY_NEXTFLOW:
		return "nextflow";
	case RUN_BY_SNAKEMAKE:
		return "snakemake";
	case RUN_BY_CWLTOOL:
		return "cwltool";
	case RUN_BY_SLURM:
		return "slurm";
	case RUN_BY_AWS_BATCH:
		return "aws_batch";
	case RUN_BY_CROMWELL:
		return "cromwell";
	case RUN_BY_MINIWDL:
		return "miniwdl";
	case RUN_BY_TOIL:
		return "toil";
	case RUN_BY_NONE:
		break;
	}
	return "none";
}

const char *run_state_name(enum run_state s)
{
	switch (s) {
	case RUN_RUNNING:
		return "running";
	case RUN_SUCCEEDED:
		return "succeeded";
	case RUN_FAILED:
		return "failed";
	case RUN_LOST:
		return "lost";
	}
	return "lost";
}

void runs_init(struct runs *r, const char *boot_hex)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->boot, sizeof(r->boot), "%s", boot_hex && *boot_hex ? boot_hex : "0");
}

void runs_key(const struct runs *r, const struct proc *root, char *out, size_t size)
{
	snprintf(out, size, "%s-%u-%llu", r->boot, (unsigned)root->tgid, (unsigned long long)root->start_ns);
}

void runs_free(struct runs *r)
{
	free(r->v);
	r->v = NULL;
	r->high = r->cap = r->live = 0;
}

static const char *nonempty(const char *v)
{
	return v && *v ? v : NULL;
}

/* The i-th argument of an image, or NULL. */
static const char *image_arg(const struct proc_image *im, uint32_t i)
{
	const char *a = proc_image_args(im), *end = a + im->argv_len;

	for (uint32_t k = 0; k < im->argc && a < end; k++) {
		if (k == i)
			return a;
		a += strnlen(a, (size_t)(end - a)) + 1;
	}
	return NULL;
}

/* The image's argument pointers in r->argv; their count. */
static size_t image_argv(struct runs *r, const struct proc_image *im)
{
	const char *a = proc_image_args(im), *end = a + im->argv_len;
	size_t n = 0;

	for (uint32_t i = 0; i < im->argc && a < end && n < TR_ARGV_MAX; i++) {
		r->argv[n++] = a;
		a += strnlen(a, (size_t)(end - a)) + 1;
	}
	r->argv[n] = NULL;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* out = path, made absolute against dir when relative (and dir is known). */
static void absolute(char *out, size_t size, const char *dir, const char *path)
{
	if (path[0] == '/' || !dir || !*dir)
		snprintf(out, size, "%s", path);
	else
		snprintf(out, size, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", path);
}

/* The value of option opt (`opt V` or `opt=V`) in the image's arguments, or NULL. */
static const char *image_option(const struct proc_image *im, const char *opt)
{
	size_t n = strlen(opt);
	const char *a;

	for (uint32_t i = 1; (a = image_arg(im, i)) != NULL; i++) {
		if (!strcmp(a, opt))
			return image_arg(im, i + 1);
		if (!strncmp(a, opt, n) && a[n] == '=')
			return a + n + 1;
	}
	return NULL;
}

/*
 * The workflow an engine runs (docs/live.md, "A run's identity"):
 * `nextflow run PROJECT`, Snakemake's Snakefile, cwltool's .cwl file.
 */
static void engine_workflow(struct run *run, const struct proc_image *im, enum step_engine e)
{
	const char *cwd = proc_image_cwd(im), *a, *v;
	char dir[RUN_STR_MAX];

	run->workflow[0] = 0;
	if (e == STEP_ENGINE_NEXTFLOW) {
		bool after_run = false;

		for (uint32_t i = 1; (a = image_arg(im, i)) != NULL; i++) {
			if (!after_run) {
				after_run = !strcmp(a, "run");
				continue;
			}
			if (a[0] == '-')
				continue;
			if (ends_with(a, ".nf") || a[0] == '/' || a[0] == '.')
				absolute(run->workflow, sizeof(run->workflow), cwd, a);
			else
				snprintf(run->workflow, sizeof(run->workflow), "%s", a); /* a project: nf-core/rnaseq */
			break;
		}
		v = image_option(im, "-name");
		if (v)
			snprintf(run->run_name, sizeof(run->run_name), "%s", v);
	} else if (e == STEP_ENGINE_SNAKEMAKE) {
		const char *d = image_option(im, "--directory");

		if (!d)
			d = image_option(im, "-d");
		absolute(dir, sizeof(dir), cwd, d ? d : "");
		if ((v = image_option(im, "--snakefile")) || (v = image_option(im, "-s")))
			absolute(run->workflow, sizeof(run->workflow), dir, v);
		else
			absolute(run->workflow, sizeof(run->workflow), dir, "Snakefile");
	} else if (e == STEP_ENGINE_CWLTOOL) {
		for (uint32_t i = 1; (a = image_arg(im, i)) != NULL; i++)
			if (a[0] != '-' && (ends_with(a, ".cwl") || strstr(a, ".cwl#"))) {
				absolute(run->workflow, sizeof(run->workflow), cwd, a);
				break;
			}
	}
}

/* What p shows of its run's identity: the environment's ids, the engine. */
static void note_identity(struct runs *r, struct steps *steps, struct run *run, const struct proc *p)
{
	enum step_engine e;

	(void)r;
	if (!p->image || (p->flags & PROC_F_INHERITED))
		return;
	for (int k = 0; k < RUN_ENV_KEYS; k++) {
		const char *v = nonempty(proc_image_env(p->image, run_env_keys[k]));

		if (v && (!run->env[k][0] || p->start_ns < run->env_start_ns[k])) {
			snprintf(run->env[k], sizeof(run->env[k]), "%s", v);
			run->env_start_ns[k] = p->start_ns;
		}
	}
	e = steps_engine_of(steps, p);
	if (e != STEP_ENGINE_GENERIC && (run->engine == STEP_ENGINE_GENERIC || p->start_ns < run->engine_start_ns)) {
		run->engine = e;
		run->engine_start_ns = p->start_ns;
		engine_workflow(run, p->image, e);
	}
}

/* `tracer run ...`: the process whose child is the traced command. */
static bool is_tracer_run(const struct proc *p)
{
	const char *a1;

	if (!p || !p->image || strcmp(tool_basename(proc_image_path(p->image)), "tracer"))
		return false;
	a1 = image_arg(p->image, 1);
	return a1 && !strcmp(a1, "run");
}

static bool tracer_daemon(const struct proc *p)
{
	const char *b = tool_basename(proc_image_path(p->image));

	return !strcmp(b, "tracer-collector") || !strcmp(b, "tracer-processor");
}

/* The rules file's `run` rule p's image matches: its name, or NULL. */
static const char *run_rule(struct runs *r, const struct proctab *t, const struct proc_image *im)
{
	size_t n;

	if (!t->tool_rules)
		return NULL;
	n = image_argv(r, im);
	return toolrules_run(t->tool_rules, proc_image_path(im), r->argv, n);
}

/* Workflow engines the step rules do not know, by the tool they run as: their runs have generic steps. */
static enum run_detect other_engine(struct runs *r, const struct proc_image *im)
{
	char tool[TOOL_NAME_MAX];
	size_t argc = image_argv(r, im);

	tool_name(proc_image_path(im), r->argv, argc, tool, sizeof(tool));
	if (!strcmp(tool, "cromwell run"))
		return RUN_BY_CROMWELL;
	if (!strcmp(tool, "miniwdl run"))
		return RUN_BY_MINIWDL;
	if (!strcmp(tool, "toil-cwl-runner") || !strcmp(tool, "toil-wdl-runner"))
		return RUN_BY_TOIL;
	return RUN_BY_NONE;
}

/* The first argument ending in suffix, made absolute: the workflow of a cromwell, miniwdl or toil run. */
static void workflow_file(struct run *run, const struct proc_image *im)
{
	static const char *const suffixes[] = { ".wdl", ".cwl", NULL };
	const char *a;

	for (uint32_t i = 1; (a = image_arg(im, i)) != NULL; i++)
		for (unsigned k = 0; suffixes[k]; k++)
			if (a[0] != '-' && ends_with(a, suffixes[k])) {
				absolute(run->workflow, sizeof(run->workflow), proc_image_cwd(im), a);
				return;
			}
}

/* Does p (in no run) start one? The order is docs/live.md's. rule: a `run` rule's name, when that. */
static enum run_detect start_kind(struct runs *r, const struct proctab *t, struct steps *steps, const struct proc *p,
				  const struct proc *par, const char **rule)
{
	const struct proc_image *im = p->image;
	enum run_detect kind;

	if (!im || (p->flags & PROC_F_INHERITED))
		return RUN_BY_NONE;
	if (nonempty(proc_image_env(im, "TRACER_RUN_ID")) || nonempty(proc_image_env(im, "TRACER_PIPELINE")))
		return RUN_BY_ENV;
	if ((*rule = run_rule(r, t, im)) != NULL)
		return RUN_BY_RULE;
	if (is_tracer_run(par) && !tracer_daemon(p))
		return RUN_BY_TRACER_RUN;
	if ((kind = other_engine(r, im)) != RUN_BY_NONE)
		return kind;
	switch (steps_engine_of(steps, p)) {
	case STEP_ENGINE_NEXTFLOW:
		return image_arg(im, 1) ? RUN_BY_NEXTFLOW : RUN_BY_NONE;
	case STEP_ENGINE_SNAKEMAKE:
		return RUN_BY_SNAKEMAKE;
	case STEP_ENGINE_CWLTOOL:
		return RUN_BY_CWLTOOL;
	default:
		break;
	}
	if (nonempty(proc_image_env(im, "SLURM_JOB_ID")))
		return RUN_BY_SLURM;
	if (nonempty(proc_image_env(im, "AWS_BATCH_JOB_ID")))
		return RUN_BY_AWS_BATCH;
	return RUN_BY_NONE;
}

static struct run *run_slot(struct runs *r)
{
	for (uint32_t i = 0; i < r->high; i++)
		if (!r->v[i].used)
			return &r->v[i];
	if (r->high == RUNS_MAX)
		return NULL;
	if (r->high == r->cap) {
		uint32_t ncap = r->cap ? r->cap * 2 : 16;
		struct run *nv = realloc(r->v, (size_t)ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		r->v = nv;
		r->cap = ncap;
	}
	return &r->v[r->high++];
}

static void run_start(struct runs *r, struct steps *steps, struct proc *p, enum run_detect kind, const char *rule)
{
	struct run *run = run_slot(r);
	const struct proc_image *im = p->image;

	if (!run) {
		r->dropped++;
		return;
	}
	memset(run, 0, sizeof(*run));
	run->used = true;
	run->detected_by = kind;
	run->root_tgid = p->tgid;
	run->root_start_ns = p->start_ns;
	run->root_preexisting = (p->flags & PROC_F_PREEXISTING) != 0;
	if (rule)
		snprintf(run->rule_name, sizeof(run->rule_name), "%s", rule);
	if (kind == RUN_BY_CROMWELL || kind == RUN_BY_MINIWDL || kind == RUN_BY_TOIL) {
		snprintf(run->other_engine, sizeof(run->other_engine), "%s", run_detect_name(kind));
		workflow_file(run, im);
	}
	runs_key(r, p, run->key, sizeof(run->key));
	run->command_len = im->argv_len < RUN_COMMAND_MAX ? im->argv_len : RUN_COMMAND_MAX;
	memcpy(run->command, proc_image_args(im), run->command_len);
	if (run->command_len == RUN_COMMAND_MAX)
		run->command[RUN_COMMAND_MAX - 1] = 0; /* truncated: the last string is cut */
	for (uint32_t i = 0, off = 0; i < im->argc && off < run->command_len; i++) {
		off += (uint32_t)strnlen(run->command + off, run->command_len - off) + 1;
		run->command_argc++;
	}
	p->run = (uint32_t)(run - r->v) + 1;
	p->flags |= PROC_F_RUN_ROOT;
	r->live++;
	r->started++;
	note_identity(r, steps, run, p);
}

/* Decide p, whose parent (par, or none) is decided. */
static void decide(struct runs *r, const struct proctab *t, struct steps *steps, struct proc *p, struct proc *par,
		   const struct proc *root)
{
	struct run *run = runs_of(r, p);
	const char *rule = NULL;
	enum run_detect kind;

	if (!run && !p->run && par && (run = runs_of(r, par)) != NULL && !run->final_sent)
		p->run = par->run;
	/*
	 * A fork that has not exec'd starts nothing (start_kind()) and is decided
	 * again when it execs; meanwhile it runs a copy of its parent's image, so
	 * a child of tracer run's fork still sees `tracer run` as its parent.
	 */
	p->flags |= PROC_F_RUN_DECIDED;
	if (run) {
		note_identity(r, steps, run, p);
		return;
	}
	if (p->run)
		return; /* its run ended: it stays in none */
	if (t->root_pid)
		kind = p == root ? RUN_BY_TRACER_RUN : RUN_BY_NONE; /* tracer run: its command is the one run */
	else
		kind = start_kind(r, t, steps, p, par, &rule);
	if (kind != RUN_BY_NONE)
		run_start(r, steps, p, kind, rule);
}

#define DECIDE_DEPTH 512 /* ancestors decided on the way up; a deeper chain starts from the middle */

uint32_t runs_assign(struct runs *r, struct proctab *t, struct steps *steps)
{
	struct proc *chain[DECIDE_DEPTH];
	uint64_t before = r->started;
	const struct proc *root = t->root_pid ? proctab_root(t) : NULL;

	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		size_t n = 0;
		struct proc *q = p, *par;

		if (p->flags & PROC_F_RUN_DECIDED)
			continue;
		/* Up to the first decided ancestor (or none): a cycle of hostile links ends at the bound. */
		while (q && !(q->flags & PROC_F_RUN_DECIDED) && n < DECIDE_DEPTH) {
			chain[n++] = q;
			q = (q->flags & PROC_F_RUN_ROOT) ? NULL : proctab_parent(t, q);
		}
		while (n > 0) {
			struct proc *c = chain[--n];

			par = (c->flags & PROC_F_RUN_ROOT) ? NULL : proctab_parent(t, c);
			if (par && !(par->flags & PROC_F_RUN_DECIDED) && par != c)
				par = NULL; /* beyond the bound */
			decide(r, t, steps, c, par == c ? NULL : par, root);
		}
	}
	return (uint32_t)(r->started - before);
}

static void add_sat(uint64_t *a, uint64_t v)
{
	*a = *a + v < *a ? UINT64_MAX : *a + v;
}

void runs_on_evict(void *ctx, const struct proc *p)
{
	struct runs *r = ctx;
	struct run *run = runs_of(r, p);
	const struct tr_exit *x = &p->exit;

	if (!run)
		return;
	run->folded.processes++;
	if (!(p->flags & PROC_F_EXIT))
		return;
	add_sat(&run->folded.cpu_ns, x->runtime_ns);
	add_sat(&run->folded.read_bytes, x->read_bytes);
	add_sat(&run->folded.write_bytes, x->write_bytes);
	add_sat(&run->folded.rchar, x->rchar);
	add_sat(&run->folded.wchar, x->wchar);
	add_sat(&run->folded.net_tx_bytes, x->net_tx_bytes);
	add_sat(&run->folded.net_rx_bytes, x->net_rx_bytes);
}

void runs_release_ended(struct runs *r, struct proctab *t)
{
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (p->run && p->run <= r->high && r->v[p->run - 1].final_sent) {
			p->run = 0;
			p->flags &= ~(uint32_t)PROC_F_HELD;
			p->flags |= PROC_F_RUN_DECIDED; /* it stays in no run, even if it execs again */
		}
	for (uint32_t i = 0; i < r->high; i++)
		if (r->v[i].used && r->v[i].final_sent) {
			r->v[i].used = false;
			r->live--;
			r->ended++;
		}
}
