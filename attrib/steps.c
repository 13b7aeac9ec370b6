/* SPDX-License-Identifier: Apache-2.0 */
#include "steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "hsort.h"
#include "parse.h"
#include "stepmem.h"
#include "tool.h"

/*
 * How a build goes:
 *
 *   1. every process in scope gets step = UNSET, every other 0;
 *   2. each UNSET process is walked up to its first decided ancestor (or
 *      the top), reversing the links on the way (each one's `step` holds
 *      the child it was reached from), then decided top-down: its step
 *      follows from its own images and its parent's decision (assign());
 *   3. one pass sums each step's processes and rewrites `step` as
 *      index + 1;
 *   4. names, main process, sort by start, and `step` remapped.
 *
 * While a build runs, a decided process's `step` packs what its children
 * need to know about it (a "memo"): its step, whether it is an engine (or
 * the traced command) whose children start steps, and whether it is inside
 * a Nextflow task's script.
 */

/* ------------------------------------------------------------------ */
/* Memo: proc->step during a build                                    */
/* ------------------------------------------------------------------ */

#define M_UNSET 0xffffffffu
#define M_LINK 0x80000000u          /* on the walk's path; low bits: index + 1 of the child below */
#define M_ENGINE_SHIFT 28           /* 3 bits: enum eng */
#define M_BODY (1u << 27)           /* inside a Nextflow task's .command.sh */
#define M_STEP_MASK ((1u << 26) - 1) /* step index + 1, or M_LOST */
#define M_LOST M_STEP_MASK          /* would have started a step: the table was full */

_Static_assert(STEPS_MAX_LIMIT < M_LOST, "step numbers fit the memo");
_Static_assert(PROCTAB_MAX_LIMIT < M_LINK - 1, "process indexes fit the memo");

/* What a process is, for its children. */
enum eng {
	E_NONE = 0,
	E_ROOT,      /* the traced command (or a fork of it): its children start generic steps */
	E_NEXTFLOW,
	E_SNAKEMAKE,
	E_CWLTOOL,
};

/* Kinds of step: which of them a descendant can leave (the docs' order of rules). */
enum kind {
	K_NONE = 0,
	K_GENERIC,
	K_TASK,     /* an engine's task or job: everything below stays in it */
	K_SLURM,
	K_EXPLICIT, /* TRACER_STEP */
	K_LOST,     /* not a step: the table was full */
};

/*
 * The traced command (run mode), or the first process of a run the
 * processor found (daemon mode, PROC_F_RUN_ROOT: runs.h): its children
 * start generic steps and it has no parent in scope.
 */
#define is_root(b, p) ((p) == (b)->root || ((p)->flags & PROC_F_RUN_ROOT))

static uint32_t memo(enum eng e, bool body, uint32_t step)
{
	return ((uint32_t)e << M_ENGINE_SHIFT) | (body ? M_BODY : 0) | step;
}

static uint32_t memo_step(uint32_t m)
{
	return m & M_STEP_MASK;
}

static enum eng memo_engine(uint32_t m)
{
	return (enum eng)((m >> M_ENGINE_SHIFT) & 7);
}

static bool real_engine(enum eng e)
{
	return e == E_NEXTFLOW || e == E_SNAKEMAKE || e == E_CWLTOOL;
}

const char *step_engine_name(enum step_engine e)
{
	switch (e) {
	case STEP_ENGINE_GENERIC:
		return "generic";
	case STEP_ENGINE_NEXTFLOW:
		return "nextflow";
	case STEP_ENGINE_SNAKEMAKE:
		return "snakemake";
	case STEP_ENGINE_CWLTOOL:
		return "cwltool";
	case STEP_ENGINE_SLURM:
		return "slurm";
	case STEP_ENGINE_ENV:
		return "env";
	}
	return "generic";
}

/* ------------------------------------------------------------------ */
/* Strings: chunks that never move, bounded by a byte budget           */
/* ------------------------------------------------------------------ */

#define CHUNK_BYTES (64u << 10)

struct steps_chunk {
	struct steps_chunk *next;
	size_t used, cap;
	char data[];
};

static void strings_reset(struct steps *s)
{
	while (s->chunks) {
		struct steps_chunk *next = s->chunks->next;

		free(s->chunks);
		s->chunks = next;
	}
	s->string_bytes = 0;
}

/*
 * A copy of p[0..n), NUL-terminated; NULL (counted) past the budget. Bytes
 * as they came (keys are compared with what processes carry): the report
 * escapes what it writes.
 */
static const char *str_keep(struct steps *s, const char *p, size_t n)
{
	struct steps_chunk *c = s->chunks;
	char *d;

	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > CHUNK_BYTES ? n + 1 : CHUNK_BYTES;

		if (s->string_bytes + sizeof(*c) + cap > s->string_budget || !(c = malloc(sizeof(*c) + cap))) {
			s->strings_dropped++;
			return NULL;
		}
		s->string_bytes += sizeof(*c) + cap;
		c->next = s->chunks;
		c->used = 0;
		c->cap = cap;
		s->chunks = c;
	}
	d = c->data + c->used;
	memcpy(d, p, n);
	d[n] = 0;
	c->used += n + 1;
	return d;
}

static size_t bounded_len(const char *p, size_t max)
{
	return strnlen(p, max);
}

/* ------------------------------------------------------------------ */
/* Hash indexes: (tag, string) -> value, open addressing               */
/* ------------------------------------------------------------------ */

struct steps_slot {
	uint64_t hash;
	const char *str;
	uint32_t tag;
	uint32_t val; /* 0: empty */
};

/* A tag's strings hash from a basis of their own. */
static uint64_t hash_str(uint64_t seed, uint32_t tag, const char *p)
{
	return hash_bytes(seed + tag, p, strlen(p));
}

static void map_clear(struct steps_map *m)
{
	if (m->slots)
		memset(m->slots, 0, (size_t)m->cap * sizeof(*m->slots));
	m->used = 0;
}

static void map_free(struct steps_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* The slot holding (tag, str), or the empty one where it would go. m->cap > 0. */
static struct steps_slot *map_slot(const struct steps_map *m, uint64_t h, uint32_t tag, const char *str)
{
	uint32_t mask = m->cap - 1;

	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		struct steps_slot *sl = &m->slots[i];

		if (!sl->val || (sl->hash == h && sl->tag == tag && !strcmp(sl->str, str)))
			return sl;
	}
}

/* Room for one more entry (load at most 1/2). */
static int map_reserve(struct steps_map *m)
{
	struct steps_slot *old = m->slots;
	uint32_t ocap = m->cap, ncap;

	if (m->cap && (m->used + 1) * 2 <= m->cap)
		return 0;
	ncap = m->cap ? m->cap * 2 : 256;
	if (ncap < m->cap)
		return -ENOMEM;
	m->slots = calloc(ncap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = ncap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].val)
			*map_slot(m, old[i].hash, old[i].tag, old[i].str) = old[i];
	free(old);
	return 0;
}

static uint32_t map_get(const struct steps_map *m, uint64_t seed, uint32_t tag, const char *str)
{
	return m->cap ? map_slot(m, hash_str(seed, tag, str), tag, str)->val : 0;
}

/* Insert (tag, str) -> val; str must live as long as the map's contents. */
static int map_put(struct steps_map *m, uint64_t seed, uint32_t tag, const char *str, uint32_t val)
{
	uint64_t h = hash_str(seed, tag, str);
	struct steps_slot *sl;

	if (map_reserve(m))
		return -ENOMEM;
	sl = map_slot(m, h, tag, str);
	if (!sl->val)
		m->used++;
	*sl = (struct steps_slot){ .hash = h, .str = str, .tag = tag, .val = val };
	return 0;
}

/* ------------------------------------------------------------------ */
/* Table                                                              */
/* ------------------------------------------------------------------ */

int steps_init(struct steps *s, uint32_t max, uint64_t seed)
{
	long cpus;

	memset(s, 0, sizeof(*s));
	if (max == 0)
		max = STEPS_DEFAULT_MAX;
	if (max > STEPS_MAX_LIMIT)
		return -EINVAL;
	s->argv = malloc((TR_ARGV_MAX + 1) * sizeof(*s->argv));
	if (!s->argv)
		return -ENOMEM;
	s->max = max;
	s->seed = seed;
	s->string_budget = STEPS_STRING_BUDGET;
	if (intern_init(&s->tool_names, STEPS_TOOL_BUDGET, seed + 1)) {
		free(s->argv);
		return -ENOMEM;
	}
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	s->host_cpus = cpus > 0 && cpus < UINT32_MAX ? (uint32_t)cpus : 0;
	return 0;
}

void steps_free(struct steps *s)
{
	strings_reset(s);
	map_free(&s->by_key);
	map_free(&s->by_id);
	intern_free(&s->tool_names);
	free(s->v);
	free(s->argv);
	memset(s, 0, sizeof(*s));
}

static void steps_reset(struct steps *s)
{
	strings_reset(s);
	map_clear(&s->by_key);
	map_clear(&s->by_id);
	intern_clear(&s->tool_names);
	s->n = 0;
	s->dropped = s->unassigned = s->strings_dropped = 0;
	memset(&s->run, 0, sizeof(s->run));
}

/* ------------------------------------------------------------------ */
/* What an image shows                                                */
/* ------------------------------------------------------------------ */

#define NF_RUN ".command.run"
#define NF_SH ".command.sh"

/* What a process's own images say about it. */
struct cls {
	bool own;            /* it exec'd (or nothing is known): not a copy of its parent */
	enum eng engine;     /* it runs Nextflow, Snakemake or cwltool */
	bool shell_c;        /* a shell running inline code: how Snakemake runs a job */
	bool nf_runner;      /* a shell running a Nextflow task's .command.run */
	bool nf_body;        /* a shell running a task's .command.sh */
	bool cwl_internal;   /* something cwltool runs for itself (JavaScript, container pulls) */
	const struct proc_image *nf_image;
	const char *nf_path; /* the .command.* argument as given */
	char rule[STEP_NAME_MAX]; /* Snakemake job runner: its rule(s); "" if none */
	/* Allowlisted environment (its newest image that has the key). */
	const char *explicit_step, *slurm_job, *slurm_step, *slurm_name, *nxf_workdir;
};

static size_t image_argv(struct steps *s, const struct proc_image *im)
{
	const char *a = proc_image_args(im), *end = a + im->argv_len;
	size_t n = 0;

	for (uint32_t i = 0; i < im->argc && a < end && n < TR_ARGV_MAX; i++) {
		s->argv[n++] = a;
		a += strnlen(a, (size_t)(end - a)) + 1;
	}
	s->argv[n] = NULL;
	return n;
}

static bool first_word_is(const char *name, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(name, w, n) && (name[n] == 0 || name[n] == ' ');
}

/* Is the last component of dir an all-hex name of at least min bytes? Sets *comp to it. */
static bool hex_component(const char *dir, size_t len, size_t min, const char **comp, size_t *clen)
{
	size_t i = len;

	while (i > 0 && dir[i - 1] != '/')
		i--;
	*comp = dir + i;
	*clen = len - i;
	if (*clen < min)
		return false;
	for (size_t k = i; k < len; k++)
		if (!((dir[k] >= '0' && dir[k] <= '9') || (dir[k] >= 'a' && dir[k] <= 'f') ||
		      (dir[k] >= 'A' && dir[k] <= 'F')))
			return false;
	return true;
}

/* A Nextflow task directory: .../<2+ hex>/<hex>. On success, the two components. */
static bool task_dir(const char *dir, size_t len, const char **d1, size_t *l1, const char **d2, size_t *l2)
{
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!hex_component(dir, len, 1, d2, l2) || *d2 == dir)
		return false;
	len = (size_t)(*d2 - dir) - 1; /* before the '/' */
	return hex_component(dir, len, 2, d1, l1) && *d1 > dir;
}

/* Shell options: does it run inline code (-c)? *operand: index of the first operand (argc if none). */
static bool shell_inline(const char *const *argv, size_t argc, size_t *operand)
{
	bool c = false;
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!((a[0] == '-' || a[0] == '+') && a[1]))
			break;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
				i++;
			continue;
		}
		if (a[0] == '-' && strchr(a + 1, 'c'))
			c = true;
		if (a[strlen(a) - 1] == 'o' || a[strlen(a) - 1] == 'O')
			i++; /* -o OPTION, -euo pipefail */
	}
	*operand = i;
	return c;
}

/* The values after argv[i] (an option), up to the next option, joined with ','; strip from ':' if cut. */
static void option_values(const char *const *argv, size_t argc, size_t i, bool cut, char *out, size_t size)
{
	size_t n = strlen(out);

	for (i++; i < argc && argv[i][0] != '-'; i++) {
		const char *v = argv[i];
		size_t vl = cut ? strcspn(v, ":") : strlen(v);
		int w;

		if (!vl)
			continue;
		w = snprintf(out + n, size - n, "%s%.*s", n ? "," : "", (int)vl, v);
		if (w < 0 || (size_t)w >= size - n)
			break;
		n += (size_t)w;
	}
}

/* A Snakemake job runner's rule(s): --allowed-rules R..., else the rule part of --target-jobs R:wc.... */
static void snakemake_rule(const char *const *argv, size_t argc, char *out, size_t size)
{
	static const char *const opts[] = { "--allowed-rules", "--target-jobs" };

	out[0] = 0;
	for (size_t o = 0; o < 2 && !out[0]; o++) {
		size_t ol = strlen(opts[o]);

		for (size_t i = 1; i < argc; i++) {
			if (!strcmp(argv[i], opts[o])) {
				option_values(argv, argc, i, o == 1, out, size);
			} else if (!strncmp(argv[i], opts[o], ol) && argv[i][ol] == '=') {
				const char *const one[] = { argv[i], argv[i] + ol + 1 };

				option_values(one, 2, 0, o == 1, out, size);
			}
		}
	}
}

static bool any_arg_contains(const char *const *argv, size_t argc, const char *needle)
{
	for (size_t i = 1; i < argc; i++)
		if (strstr(argv[i], needle))
			return true;
	return false;
}

/* cwltool's own helpers: JavaScript expressions, container pulls and inspections. */
static bool cwl_internal(const char *tool)
{
	static const char *const containers[] = { "docker", "podman", "singularity", "apptainer", "udocker", NULL };
	static const char *const runs[] = { "run", "exec", "start", NULL };

	if (first_word_is(tool, "node") || first_word_is(tool, "nodejs"))
		return true;
	for (const char *const *c = containers; *c; c++) {
		const char *sub = tool + strlen(*c);

		if (!first_word_is(tool, *c))
			continue;
		if (*sub == ' ')
			for (const char *const *r = runs; *r; r++)
				if (!strcmp(sub + 1, *r))
					return false; /* the tool itself, in a container */
		return true;
	}
	return false;
}

static void classify_image(struct steps *s, const struct proc_image *im, struct cls *c)
{
	size_t argc = image_argv(s, im), operand;
	const char *const *argv = s->argv;
	const char *exe = proc_image_path(im);
	const char *a0 = argc ? tool_basename(argv[0]) : "";
	const char *self = *exe ? tool_basename(exe) : a0;
	char tool[TOOL_NAME_MAX];

	if (tool_is_shell(a0) || tool_is_shell(self)) {
		if (shell_inline(argv, argc, &operand))
			c->shell_c = true;
		for (size_t i = 1; i < argc; i++) {
			const char *b = tool_basename(argv[i]);

			if (!strcmp(b, NF_RUN) || !strcmp(b, NF_SH)) {
				*(strcmp(b, NF_RUN) ? &c->nf_body : &c->nf_runner) = true;
				if (!c->nf_path || c->nf_path[0] != '/') {
					c->nf_path = argv[i];
					c->nf_image = im;
				}
			}
		}
	}
	/* The built-in naming, not the rules: a renamed engine is still the engine. */
	tool_name(exe, argv, argc, tool, sizeof(tool));
	if (first_word_is(tool, "snakemake")) {
		c->engine = E_SNAKEMAKE;
		if (!c->rule[0])
			snakemake_rule(argv, argc, c->rule, sizeof(c->rule));
	} else if (first_word_is(tool, "nextflow") || !strncmp(tool, "nextflow.", 9) ||
		   ((!strcmp(a0, "java") || !strcmp(self, "java")) && any_arg_contains(argv, argc, "nextflow"))) {
		c->engine = E_NEXTFLOW;
	} else if (first_word_is(tool, "cwltool") || first_word_is(tool, "cwl-runner")) {
		c->engine = E_CWLTOOL;
	}
	if (cwl_internal(tool))
		c->cwl_internal = true;
}

static const char *nonempty(const char *v)
{
	return v && *v ? v : NULL;
}

static void classify(struct steps *s, const struct proc *p, struct cls *c)
{
	const struct proc_image *newest_first[PROC_MAX_EARLIER_EXECS + 1];
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	c->own = !p->image || !(p->flags & PROC_F_INHERITED);
	if (p->image)
		newest_first[n++] = p->image;
	for (uint32_t i = p->n_earlier; i > 0 && i <= PROC_MAX_EARLIER_EXECS; i--)
		newest_first[n++] = p->earlier[i - 1];
	for (size_t i = 0; i < n; i++) {
		const struct proc_image *im = newest_first[i];

		if (!c->explicit_step)
			c->explicit_step = nonempty(proc_image_env(im, "TRACER_STEP"));
		if (!c->slurm_job) {
			c->slurm_job = nonempty(proc_image_env(im, "SLURM_JOB_ID"));
			c->slurm_step = c->slurm_job ? nonempty(proc_image_env(im, "SLURM_STEP_ID")) : NULL;
			c->slurm_name = c->slurm_job ? nonempty(proc_image_env(im, "SLURM_JOB_NAME")) : NULL;
		}
		if (!c->nxf_workdir)
			c->nxf_workdir = nonempty(proc_image_env(im, "NXF_TASK_WORKDIR"));
	}
	if (!c->own)
		return;
	/* Oldest first: a job's shell that exec'd its only command shows as the shell first. */
	for (size_t i = n; i > 0; i--)
		classify_image(s, newest_first[i - 1], c);
}

enum step_engine steps_engine_of(struct steps *s, const struct proc *p)
{
	struct cls c;

	classify(s, p, &c);
	if (!c.own || !p->image)
		return STEP_ENGINE_GENERIC;
	switch (c.engine) {
	case E_NEXTFLOW:
		return STEP_ENGINE_NEXTFLOW;
	case E_SNAKEMAKE:
		return STEP_ENGINE_SNAKEMAKE;
	case E_CWLTOOL:
		return STEP_ENGINE_CWLTOOL;
	default:
		return STEP_ENGINE_GENERIC;
	}
}

/* ------------------------------------------------------------------ */
/* Steps                                                              */
/* ------------------------------------------------------------------ */

struct build {
	struct proctab *t;
	struct proc *root;
	bool run_mode;
	int rc;
};

static uint32_t index_of(const struct build *b, const struct proc *p)
{
	return (uint32_t)(p - b->t->procs);
}

/* A new entry at the end of the table, or NULL (bound reached, counted; or no memory). */
static struct step *step_new(struct steps *s, struct build *b)
{
	if (s->n >= s->max) {
		s->dropped++;
		return NULL;
	}
	if (s->n == s->cap) {
		uint32_t ncap = s->cap ? s->cap * 2 : 64;
		struct step *nv;

		if (ncap > s->max)
			ncap = s->max;
		nv = realloc(s->v, (size_t)ncap * sizeof(*nv));
		if (!nv) {
			b->rc = -ENOMEM;
			return NULL;
		}
		s->v = nv;
		s->cap = ncap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	return &s->v[s->n];
}

/* base, or base.2, base.3 ...: an id no step has yet, kept in the table's strings. */
static const char *unique_id(struct steps *s, const char *base)
{
	char id[STEP_NAME_MAX + 16];
	size_t n = bounded_len(base, STEP_NAME_MAX - 1);

	snprintf(id, sizeof(id), "%.*s", (int)n, base);
	for (unsigned k = 2; map_get(&s->by_id, s->seed, 0, id); k++) {
		if (k > 1000)
			return NULL;
		snprintf(id, sizeof(id), "%.*s.%u", (int)n, base, k);
	}
	return str_keep(s, id, strlen(id));
}

/*
 * Start (or, with a key, join) a step for p. Returns its number (index +
 * 1), or M_LOST when the bound turned it away.
 */
/*
 * The tag a keyed step is found by: its kind and, in daemon mode, its
 * process's run. Two runs on a host may name a step alike (TRACER_STEP=align
 * in both, the same task directory re-run): each run has its own step.
 */
static uint32_t key_tag(enum kind kind, const struct proc *p)
{
	return (uint32_t)kind | p->run << 8;
}

static uint32_t step_start(struct steps *s, struct build *b, const struct proc *p, enum kind kind,
			   enum step_engine engine, const char *key, const char *id_base, const char *name)
{
	uint32_t num = key ? map_get(&s->by_key, s->seed, key_tag(kind, p), key) : 0;
	struct step *st;

	if (!num) {
		st = step_new(s, b);
		if (!st)
			return M_LOST;
		st->id = unique_id(s, id_base);
		st->key = key ? str_keep(s, key, bounded_len(key, TR_CWD_MAX)) : NULL;
		if (!st->id || (key && !st->key)) {
			s->dropped++;
			return M_LOST;
		}
		st->kind = (uint8_t)kind;
		st->engine = engine;
		st->name = name ? str_keep(s, name, bounded_len(name, STEP_NAME_MAX - 1)) : NULL;
		num = s->n + 1;
		if (map_put(&s->by_id, s->seed, 0, st->id, num) ||
		    (st->key && map_put(&s->by_key, s->seed, key_tag(kind, p), st->key, num))) {
			b->rc = -ENOMEM;
			return M_LOST;
		}
		s->n++;
	}
	st = &s->v[num - 1];
	/* The main process: the earliest to start (or join) it. */
	if (!st->main || p->start_ns < st->main_start_ns) {
		st->main = p;
		st->main_start_ns = p->start_ns;
	}
	return num;
}

static uint32_t start_new(struct steps *s, struct build *b, const struct proc *p, enum step_engine engine,
			  enum kind kind, const char *prefix, const char *name)
{
	char id[64];

	snprintf(id, sizeof(id), "%s%u", prefix, p->tgid);
	return step_start(s, b, p, kind, engine, NULL, id, name);
}

static uint32_t start_explicit(struct steps *s, struct build *b, const struct proc *p, const char *value)
{
	return step_start(s, b, p, K_EXPLICIT, STEP_ENGINE_ENV, value, value, value);
}

size_t step_job_task(const char *job_name, char *task, size_t size, enum step_engine *engine)
{
	size_t n = job_name ? strlen(job_name) : 0, first = 0, end = n;

	if (!size)
		return 0;
	task[0] = 0;
	if (n > 12 && !strncmp(job_name, "snakejob.", 9) && !strcmp(job_name + n - 3, ".sh")) {
		/* snakejob.RULE.N.sh: RULE (the N a number) */
		first = 9;
		end = n - 3;
		while (end > first && job_name[end - 1] >= '0' && job_name[end - 1] <= '9')
			end--;
		if (end == n - 3 || end <= first + 1 || job_name[end - 1] != '.')
			return 0;
		end--;
		*engine = STEP_ENGINE_SNAKEMAKE;
	} else if (n > 3 && !strncmp(job_name, "nf-", 3)) {
		/* nf-NAME_(TAG): NAME (Nextflow's task name with its blanks made _, less the tag) */
		const char *tag = job_name[n - 1] == ')' ? strstr(job_name + 3, "_(") : NULL;

		while (tag && strstr(tag + 1, "_("))
			tag = strstr(tag + 1, "_(");
		first = 3;
		end = tag && tag > job_name + 3 ? (size_t)(tag - job_name) : n;
		*engine = STEP_ENGINE_NEXTFLOW;
	} else {
		return 0;
	}
	if (end - first >= size)
		return 0;
	memcpy(task, job_name + first, end - first);
	task[end - first] = 0;
	return end - first;
}

/*
 * A SLURM job step: "slurm-J" (the batch script), "slurm-J.S" (an srun step). A batch job that a workflow
 * engine submitted (its name says so: step_job_task) is that engine's task: everything below it stays in it
 * (rule 2), and it is named by its rule or process.
 */
static uint32_t start_slurm(struct steps *s, struct build *b, const struct proc *p, const struct cls *c)
{
	char key[160], id[176], task[STEP_NAME_MAX];
	enum step_engine engine = STEP_ENGINE_SLURM;
	uint32_t st;

	snprintf(key, sizeof(key), "%.64s%s%.64s", c->slurm_job, c->slurm_step ? "." : "",
		 c->slurm_step ? c->slurm_step : "");
	snprintf(id, sizeof(id), "slurm-%s", key);
	if (c->slurm_step || !step_job_task(c->slurm_name, task, sizeof(task), &engine))
		return step_start(s, b, p, K_SLURM, STEP_ENGINE_SLURM, key, id, id);
	st = step_start(s, b, p, K_TASK, engine, key, id, task);
	if (st != M_LOST) {
		s->v[st - 1].job_task = true;
		if (!s->v[st - 1].rule)
			s->v[st - 1].rule = s->v[st - 1].name;
	}
	return st;
}

/* A Nextflow task: keyed by its work directory (docs: which one is used), or unique when unknown. */
static uint32_t start_task(struct steps *s, struct build *b, const struct proc *p, const struct cls *c)
{
	const struct proc_image *im = c->nf_image ? c->nf_image : p->image;
	const char *cwd = im ? proc_image_cwd(im) : "";
	char dir[TR_CWD_MAX + 1], id[64];
	const char *d1, *d2;
	size_t l1, l2, n = 0;
	uint32_t num;

	if (*cwd && task_dir(cwd, strlen(cwd), &d1, &l1, &d2, &l2)) {
		n = (size_t)snprintf(dir, sizeof(dir), "%s", cwd);
	} else if (c->nf_path && c->nf_path[0] == '/') {
		n = (size_t)(tool_basename(c->nf_path) - c->nf_path - 1);
		n = (size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(n ? n : 1), c->nf_path);
	} else if (c->nxf_workdir) {
		n = (size_t)snprintf(dir, sizeof(dir), "%s", c->nxf_workdir);
	} else if (*cwd) {
		n = (size_t)snprintf(dir, sizeof(dir), "%s", cwd);
	}
	if (n >= sizeof(dir))
		n = sizeof(dir) - 1;
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = 0;
	if (!n)
		return start_new(s, b, p, STEP_ENGINE_NEXTFLOW, K_TASK, "nf-", NULL);
	if (task_dir(dir, n, &d1, &l1, &d2, &l2))
		snprintf(id, sizeof(id), "nf-%.*s/%.*s", (int)(l1 < 8 ? l1 : 8), d1, (int)(l2 < 6 ? l2 : 6), d2);
	else
		snprintf(id, sizeof(id), "nf-%.24s", tool_basename(dir));
	num = step_start(s, b, p, K_TASK, STEP_ENGINE_NEXTFLOW, dir, id, NULL);
	if (num != M_LOST && !s->v[num - 1].workdir)
		s->v[num - 1].workdir = s->v[num - 1].key;
	return num;
}

/*
 * The step of p, from what it shows and its parent's memo (par NULL: no
 * parent in scope; lost_root: its parent is the traced command, whose
 * records were lost). The rules, in this order, are the docs' list.
 */
static uint32_t assign(struct steps *s, struct build *b, const struct proc *p, const struct proc *par, bool lost_root)
{
	uint32_t pm = par ? par->step : 0, pstep = memo_step(pm), st;
	enum eng pengine = par ? memo_engine(pm) : lost_root ? E_ROOT : E_NONE;
	bool pbody = par && (pm & M_BODY);
	enum kind pkind = pstep == M_LOST ? K_LOST : pstep ? (enum kind)s->v[pstep - 1].kind : K_NONE;
	enum eng self;
	struct cls c;

	classify(s, p, &c);
	self = c.own ? c.engine : pengine;
	if (is_root(b, p) && self == E_NONE)
		self = E_ROOT;

	/* 1. TRACER_STEP names the step, whatever else holds. */
	if (c.explicit_step)
		return memo(self, false, start_explicit(s, b, p, c.explicit_step));
	/* 2. Below a named step or a task, everything stays in it. */
	if (pkind == K_EXPLICIT || pkind == K_TASK || pkind == K_LOST) {
		struct step *ps = pkind == K_LOST ? NULL : &s->v[pstep - 1];
		bool body = ps && ps->engine == STEP_ENGINE_NEXTFLOW && (pbody || (c.own && c.nf_body));

		if (body)
			ps->has_body = true;
		if (ps && ps->engine == STEP_ENGINE_SNAKEMAKE && c.own && c.engine == E_SNAKEMAKE && c.rule[0] &&
		    !ps->rule)
			ps->rule = str_keep(s, c.rule, strlen(c.rule)); /* the job's submit shell ran the job runner */
		return memo(self, body, pstep);
	}
	/* 3. A fork that did not exec is its parent. */
	if (!c.own)
		return memo(self, pbody, pstep);
	/* 4. A Nextflow task. */
	if (c.nf_runner || c.nf_body || c.nxf_workdir) {
		st = start_task(s, b, p, &c);
		if (st != M_LOST && c.nf_body)
			s->v[st - 1].has_body = true;
		return memo(self, c.nf_body && st != M_LOST, st);
	}
	/* 5. A Snakemake job: a job runner (--allowed-rules / --target-jobs), or a shell Snakemake started. */
	if (c.engine == E_SNAKEMAKE && c.rule[0]) {
		st = start_new(s, b, p, STEP_ENGINE_SNAKEMAKE, K_TASK, "smk-", c.rule);
		if (st != M_LOST)
			s->v[st - 1].rule = s->v[st - 1].name;
		return memo(self, false, st);
	}
	if (pengine == E_SNAKEMAKE && c.shell_c && c.engine == E_NONE)
		return memo(self, false, start_new(s, b, p, STEP_ENGINE_SNAKEMAKE, K_TASK, "smk-", NULL));
	/* 6. A tool cwltool ran. */
	if (pengine == E_CWLTOOL && !c.cwl_internal && c.engine == E_NONE)
		return memo(self, false, start_new(s, b, p, STEP_ENGINE_CWLTOOL, K_TASK, "cwl-", NULL));
	/* 7. An engine belongs to no step (but to its SLURM job step, if any). */
	if (c.engine != E_NONE) {
		st = c.slurm_job ? start_slurm(s, b, p, &c) : pkind == K_SLURM ? pstep : 0;
		return memo(self, false, st);
	}
	/* 8. An engine's other children (Snakemake's solver, cwltool's JavaScript) are its own work. */
	if (real_engine(pengine))
		return memo(E_NONE, false, pkind == K_SLURM ? pstep : 0);
	/* 9. A SLURM job step. */
	if (c.slurm_job)
		return memo(self, false, start_slurm(s, b, p, &c));
	/* 10. Inside a step: stay. */
	if (pstep)
		return memo(self, false, pstep);
	/* 11. Generic: a child subtree of the traced command. */
	if (pengine == E_ROOT)
		return memo(self, false, start_new(s, b, p, STEP_ENGINE_GENERIC, K_GENERIC, "proc-", NULL));
	return memo(self, false, 0);
}

static bool in_scope(const struct build *b, const struct proc *p)
{
	return !b->run_mode || p->in_tree;
}

static struct proc *scope_parent(const struct build *b, const struct proc *p)
{
	struct proc *par;

	if (is_root(b, p))
		return NULL;
	par = proctab_parent(b->t, p);
	return par && in_scope(b, par) ? par : NULL;
}

/*
 * Decide p and its undecided ancestors, top-down, without a stack: the
 * walk up leaves in each ancestor's `step` the index of the child it came
 * from (M_LINK), the walk down follows them. An ancestor already on the
 * path is a cycle in hostile parent links: the walk stops below it.
 */
static void walk(struct steps *s, struct build *b, struct proc *p)
{
	struct proc *cur = p, *par;
	uint32_t child = 0;
	bool lost_root;

	for (;;) {
		cur->step = M_LINK | child;
		par = scope_parent(b, cur);
		if (!par || par->step != M_UNSET)
			break;
		child = index_of(b, cur) + 1;
		cur = par;
	}
	if (par && (par->step & M_LINK))
		par = NULL; /* a cycle */
	lost_root = b->run_mode && !par && !is_root(b, cur);
	for (;;) {
		uint32_t next = cur->step & ~M_LINK;

		cur->step = assign(s, b, cur, par, lost_root);
		lost_root = false;
		if (!next)
			break;
		par = cur;
		cur = &b->t->procs[next - 1];
	}
}

/* ------------------------------------------------------------------ */
/* Sums                                                               */
/* ------------------------------------------------------------------ */

static void add_sat(uint64_t *a, uint64_t v)
{
	*a = *a + v < *a ? UINT64_MAX : *a + v;
}

static bool proc_failed(const struct proc *p)
{
	return (p->flags & PROC_F_OOM) ||
	       ((p->flags & PROC_F_EXIT) && (decode_exit_signal(p->exit.exit_code) || decode_exit_status(p->exit.exit_code)));
}

static const char *proc_tool(const struct proc *p)
{
	return p->image ? proc_image_tool(p->image) : p->comm;
}

/* Tools that say nothing about the work: a shell running inline code, a task's wrapper scripts. */
static bool plumbing_tool(const char *tool)
{
	return !*tool || tool_is_shell(tool) || !strncmp(tool, ".command.", 9);
}

/* Tools before: by first start, then by name. */
static bool tool_before(const struct step_tool *a, const struct step_tool *b)
{
	return a->first_start_ns != b->first_start_ns ? a->first_start_ns < b->first_start_ns
						       : strcmp(a->name, b->name) < 0;
}

/* Move tools[i] up to its place (its first start got earlier, or it is new at the end). */
static void tool_settle(struct step *st, uint32_t i)
{
	if (i >= STEP_MAX_TOOLS)
		return;
	for (; i > 0 && tool_before(&st->tools[i], &st->tools[i - 1]); i--) {
		struct step_tool tmp = st->tools[i];

		st->tools[i] = st->tools[i - 1];
		st->tools[i - 1] = tmp;
	}
}

/* The table's one copy of a tool name (so that the list compares pointers), or NULL (counted) past the budget. */
static const char *tool_interned(struct steps *s, const char *tool)
{
	const char *copy = intern_get(&s->tool_names, tool, bounded_len(tool, TOOL_NAME_MAX - 1));

	if (!copy)
		s->strings_dropped++;
	return copy;
}

static void add_tool(struct steps *s, struct step *st, const char *tool, uint64_t start)
{
	const char *name = tool_interned(s, tool);
	struct step_tool *last;

	if (!name) {
		st->tools_more++;
		return;
	}
	for (uint32_t i = 0; i < st->n_tools; i++) {
		if (st->tools[i].name != name)
			continue;
		st->tools[i].processes++;
		if (start < st->tools[i].first_start_ns) {
			st->tools[i].first_start_ns = start;
			tool_settle(st, i);
		}
		return;
	}
	if (st->n_tools < STEP_MAX_TOOLS) {
		uint32_t i = st->n_tools++;

		st->tools[i] = (struct step_tool){ .name = name, .processes = 1, .first_start_ns = start };
		tool_settle(st, i);
		return;
	}
	/* Full: keep the first-started ones. */
	last = &st->tools[STEP_MAX_TOOLS - 1];
	if (start < last->first_start_ns) {
		st->tools_more += last->processes;
		*last = (struct step_tool){ .name = name, .processes = 1, .first_start_ns = start };
		tool_settle(st, STEP_MAX_TOOLS - 1);
	} else {
		st->tools_more++;
	}
}

uint64_t step_proc_cpu_limit_millicores(const struct proc_alloc *a, uint32_t host_cpus)
{
	uint64_t lim = a->cpu_quota_millicores ? a->cpu_quota_millicores : UINT64_MAX;

	if (host_cpus && a->cpus_allowed && 1000ULL * a->cpus_allowed < lim)
		lim = 1000ULL * a->cpus_allowed;
	if (lim == UINT64_MAX || (host_cpus && lim >= 1000ULL * host_cpus))
		return 0;
	return lim;
}

#define SLURM_CPUS_MAX 1000000u          /* CPUs of one node: beyond, not an allocation */
#define SLURM_MEM_MIB_MAX (1ULL << 30)   /* 1 PiB in MiB: beyond, not an allocation */

void step_slurm_allocation(const struct proc_image *im, uint64_t *millicores, uint64_t *bytes)
{
	const char *cpus = im ? proc_image_env(im, "SLURM_CPUS_ON_NODE") : NULL;
	const char *node = im ? proc_image_env(im, "SLURM_MEM_PER_NODE") : NULL;
	const char *per_cpu = im ? proc_image_env(im, "SLURM_MEM_PER_CPU") : NULL;
	uint64_t n = 0, mib = 0;

	*millicores = *bytes = 0;
	if (cpus && parse_u64(cpus, SLURM_CPUS_MAX, &n) == PARSE_OK)
		*millicores = 1000 * n;
	if (node && parse_u64(node, SLURM_MEM_MIB_MAX, &mib) == PARSE_OK)
		*bytes = mib << 20;
	else if (per_cpu && n && parse_u64(per_cpu, SLURM_MEM_MIB_MAX / n, &mib) == PARSE_OK)
		*bytes = (mib * n) << 20;
}

uint64_t step_requested_millicores(const struct proc_image *im)
{
	const char *v = im ? proc_image_env(im, "OMP_NUM_THREADS") : NULL;
	uint64_t n = 0;

	return v && parse_u64(v, SLURM_CPUS_MAX, &n) == PARSE_OK ? 1000 * n : 0;
}

/* The allocation a process runs or ran under: the step keeps the largest (docs/processor.md). */
static void add_limits(const struct steps *s, struct step *st, const struct proc_alloc *a)
{
	uint64_t cpu = step_proc_cpu_limit_millicores(a, s->host_cpus);

	if (cpu > st->cpu_limit_millicores)
		st->cpu_limit_millicores = cpu;
	if (a->memory_bytes > st->memory_limit_bytes)
		st->memory_limit_bytes = a->memory_bytes;
}

static void add_proc(struct steps *s, struct build *b, struct step *st, const struct proc *p, uint32_t m)
{
	const char *tool = proc_tool(p);
	bool body = (m & M_BODY) != 0;

	if (!st->processes || p->start_ns < st->start_ns)
		st->start_ns = p->start_ns;
	if (st->processes < UINT32_MAX)
		st->processes++;
	if (p->flags & PROC_F_OOM)
		st->oom_killed++;
	if (proc_failed(p)) {
		st->failed_processes++;
		if (!st->first_failed || ((p->flags & PROC_F_EXIT) &&
					  (!(st->first_failed->flags & PROC_F_EXIT) ||
					   p->exit.hdr.ts_ns < st->first_failed->exit.hdr.ts_ns)))
			st->first_failed = p;
	}
	add_limits(s, st, &p->alloc);
	if (p->image) {
		uint64_t mc, bytes;

		step_slurm_allocation(p->image, &mc, &bytes);
		st->slurm_millicores = mc > st->slurm_millicores ? mc : st->slurm_millicores;
		st->slurm_memory_bytes = bytes > st->slurm_memory_bytes ? bytes : st->slurm_memory_bytes;
		mc = step_requested_millicores(p->image);
		st->requested_millicores = mc > st->requested_millicores ? mc : st->requested_millicores;
	}
	if (p->flags & PROC_F_EXIT) {
		const struct tr_exit *x = &p->exit;

		if (x->hdr.ts_ns > st->end_ns)
			st->end_ns = x->hdr.ts_ns;
		add_sat(&st->cpu_ns, x->runtime_ns);
		if (x->flags & TR_EXIT_NO_IO_ACCOUNTING)
			st->io_partial = true;
		add_sat(&st->read_bytes, x->read_bytes);
		add_sat(&st->write_bytes, x->write_bytes);
		add_sat(&st->rchar, x->rchar);
		add_sat(&st->wchar, x->wchar);
		add_sat(&st->net_tx_bytes, x->net_tx_bytes);
		add_sat(&st->net_rx_bytes, x->net_rx_bytes);
	} else {
		st->running++;
	}
	/* Tools: the work, not the plumbing (docs). */
	if (plumbing_tool(tool) || real_engine(memo_engine(m)) || (st->has_body && !body) ||
	    (st->job_task && (p == st->main || proctab_parent(b->t, p) == st->main)))
		return;
	add_tool(s, st, tool, p->start_ns);
}

/* ------------------------------------------------------------------ */
/* Run identity                                                       */
/* ------------------------------------------------------------------ */

enum { RUN_PIPELINE, RUN_ID, RUN_SLURM, RUN_AWS, RUN_SLURM_NAME, RUN_SUBMIT_DIR, RUN_SUBMIT_HOST, RUN_KEYS };

static const char *const run_keys[RUN_KEYS] = { "TRACER_PIPELINE",  "TRACER_RUN_ID",    "SLURM_JOB_ID",
						  "AWS_BATCH_JOB_ID", "SLURM_JOB_NAME",   "SLURM_SUBMIT_DIR",
						  "SLURM_SUBMIT_HOST" };

struct run_scan {
	const char *value[RUN_KEYS];
	uint64_t start[RUN_KEYS];
	const struct proc *engine;
};

/* Each key from the earliest-started process that has it; the earliest engine that exec'd. */
static void run_note(struct run_scan *r, const struct proc *p, uint32_t m)
{
	if (p->image)
		for (int k = 0; k < RUN_KEYS; k++) {
			const char *v;

			if ((r->value[k] && p->start_ns >= r->start[k]) || !(v = nonempty(proc_image_env(p->image, run_keys[k]))))
				continue;
			r->value[k] = v;
			r->start[k] = p->start_ns;
		}
	if (real_engine(memo_engine(m)) && p->image && !(p->flags & PROC_F_INHERITED) &&
	    (!r->engine || p->start_ns < r->engine->start_ns))
		r->engine = p;
}

static const char *keep_str(struct steps *s, const char *v, size_t max)
{
	return v ? str_keep(s, v, bounded_len(v, max)) : NULL;
}

/* The value of option opt (`opt V` or `opt=V`) in argv, or NULL. */
static const char *option_value(const char *const *argv, size_t argc, const char *opt)
{
	size_t n = strlen(opt);

	for (size_t i = 1; i < argc; i++) {
		if (!strcmp(argv[i], opt))
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (!strncmp(argv[i], opt, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return NULL;
}

static void run_engine(struct steps *s, const struct proc *p)
{
	const struct proc_image *im = p->image;
	size_t argc = image_argv(s, im);
	const char *const *argv = s->argv;
	char tool[TOOL_NAME_MAX], dir[TR_CWD_MAX + 1];
	const char *v, *cwd = proc_image_cwd(im);

	tool_name(proc_image_path(im), argv, argc, tool, sizeof(tool));
	s->run.engine_proc = p;
	s->run.engine = first_word_is(tool, "snakemake") ? "snakemake"
			: (first_word_is(tool, "cwltool") || first_word_is(tool, "cwl-runner")) ? "cwltool"
												   : "nextflow";
	s->run.engine_dir = *cwd ? keep_str(s, cwd, TR_CWD_MAX) : NULL;
	if (!strcmp(s->run.engine, "nextflow")) {
		s->run.run_name = keep_str(s, nonempty(option_value(argv, argc, "-name")), STEP_NAME_MAX - 1);
	} else if (!strcmp(s->run.engine, "snakemake")) {
		/* The Snakefile's directory: --directory, else an absolute --snakefile's, else the cwd. */
		if ((v = option_value(argv, argc, "--directory")) || (v = option_value(argv, argc, "-d"))) {
			if (v[0] == '/')
				s->run.engine_dir = keep_str(s, v, TR_CWD_MAX);
		} else if (((v = option_value(argv, argc, "--snakefile")) || (v = option_value(argv, argc, "-s"))) &&
			   v[0] == '/') {
			size_t n = (size_t)(tool_basename(v) - v);

			snprintf(dir, sizeof(dir), "%.*s", (int)(n > 1 ? n - 1 : n), v);
			s->run.engine_dir = keep_str(s, dir, TR_CWD_MAX);
		}
	}
}

static void run_finish(struct steps *s, const struct run_scan *r)
{
	s->run.pipeline = keep_str(s, r->value[RUN_PIPELINE], STEP_NAME_MAX - 1);
	s->run.run_id = keep_str(s, r->value[RUN_ID], STEP_NAME_MAX - 1);
	s->run.slurm_job_id = keep_str(s, r->value[RUN_SLURM], STEP_NAME_MAX - 1);
	s->run.aws_batch_job_id = keep_str(s, r->value[RUN_AWS], STEP_NAME_MAX - 1);
	s->run.slurm_job_name = keep_str(s, r->value[RUN_SLURM_NAME], STEP_NAME_MAX - 1);
	s->run.slurm_submit_dir = keep_str(s, r->value[RUN_SUBMIT_DIR], TR_CWD_MAX);
	s->run.slurm_submit_host = keep_str(s, r->value[RUN_SUBMIT_HOST], STEP_NAME_MAX - 1);
	if (r->engine) {
		run_engine(s, r->engine);
		return;
	}
	/* No engine process seen (a Nextflow task run elsewhere, records lost): the first engine step's. */
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].engine == STEP_ENGINE_NEXTFLOW || s->v[i].engine == STEP_ENGINE_SNAKEMAKE ||
		    s->v[i].engine == STEP_ENGINE_CWLTOOL) {
			s->run.engine = step_engine_name(s->v[i].engine);
			return;
		}
}

/* ------------------------------------------------------------------ */
/* Names, order                                                       */
/* ------------------------------------------------------------------ */

/* "a | b | c", then " | ..." when there are more. */
static size_t join_tools(const struct step *st, char *out, size_t size, size_t n)
{
	size_t k = 0;

	for (uint32_t i = 0; i < st->n_tools && i < STEP_NAME_TOOLS; i++) {
		int w = snprintf(out + n, size - n, "%s%s", k++ ? " | " : "", st->tools[i].name);

		if (w < 0 || (size_t)w >= size - n)
			return size - 1;
		n += (size_t)w;
	}
	if ((st->n_tools > STEP_NAME_TOOLS || st->tools_more) && n + 7 < size)
		n += (size_t)snprintf(out + n, size - n, " | ...");
	return n;
}

static void step_finish(struct steps *s, struct step *st)
{
	char name[STEP_NAME_MAX];
	const char *main_tool = st->main ? proc_tool(st->main) : "";
	size_t n = 0;

	if (st->main && (st->main->flags & PROC_F_EXIT)) {
		st->exited = true;
		st->exit_raw = st->main->exit.exit_code;
	}
	/* A generic step's status is its script's to judge: judge_generic_steps(). */
	st->failed = st->main && proc_failed(st->main) && st->engine != STEP_ENGINE_GENERIC;
	/* What the kernel enforced, else what SLURM allocated, else the threads the engine asked for
	 * (docs/processor.md, "Allocation"). */
	if (!st->cpu_limit_millicores)
		st->cpu_limit_millicores = st->slurm_millicores;
	if (!st->cpu_limit_millicores)
		st->cpu_limit_millicores = st->requested_millicores;
	if (!st->memory_limit_bytes)
		st->memory_limit_bytes = st->slurm_memory_bytes;
	if (!st->name)
		st->name = st->rule; /* a job runner inside the job's submit shell named the rule */
	if (st->name)
		return; /* TRACER_STEP's value, the SLURM step, the rule */
	name[0] = 0;
	if (st->engine == STEP_ENGINE_NEXTFLOW) {
		const char *slash = strchr(st->id, '/');

		/* "[ab/cdef12] tools", as Nextflow shows a task */
		n = (size_t)snprintf(name, sizeof(name), "[%s]%s", slash ? st->id + 3 : st->id, st->n_tools ? " " : "");
		join_tools(st, name, sizeof(name), n);
	} else if ((st->engine == STEP_ENGINE_GENERIC || st->engine == STEP_ENGINE_CWLTOOL) &&
		   !plumbing_tool(main_tool)) {
		snprintf(name, sizeof(name), "%s", main_tool); /* what the subtree's top ran */
	} else if (st->n_tools) {
		join_tools(st, name, sizeof(name), 0);
	} else {
		snprintf(name, sizeof(name), "%s", *main_tool ? main_tool : st->id);
	}
	st->name = str_keep(s, name, strlen(name));
	if (!st->name)
		st->name = st->id;
}

/*
 * A generic step is one command of the traced script, and the script
 * judges its status: `if grep -q`, `test -f x || ...`, a writer stopped by
 * a closed pipe are not failures. So a generic step failed only when the
 * script exited non-zero, and then only the last one to end non-zero
 * before the script did: where `set -e` stopped it, and what a script that
 * ends on a failing command returns. While the script runs, when its end
 * was not seen, or when a signal ended it (a kill is not its commands'
 * doing), none failed.
 */
static void judge_generic_steps(struct steps *s, const struct proc *root)
{
	struct step *last = NULL;

	if (!root || !(root->flags & PROC_F_EXIT) || decode_exit_signal(root->exit.exit_code) ||
	    !decode_exit_status(root->exit.exit_code))
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		struct step *st = &s->v[i];
		const struct proc *m = st->main;

		if (st->engine != STEP_ENGINE_GENERIC || !m || !(m->flags & PROC_F_EXIT) || !proc_failed(m) ||
		    m->exit.hdr.ts_ns > root->exit.hdr.ts_ns || m->run != root->run)
			continue;
		if (!last || m->exit.hdr.ts_ns > last->main->exit.hdr.ts_ns)
			last = st;
	}
	if (last)
		last->failed = true;
}

/* Daemon mode: each run's script judges its own generic steps. */
static void judge_run_roots(struct steps *s, struct proctab *t)
{
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if ((p->flags & (PROC_F_RUN_ROOT | PROC_F_EXIT)) == (PROC_F_RUN_ROOT | PROC_F_EXIT) &&
		    decode_exit_status(p->exit.exit_code))
			judge_generic_steps(s, p);
}

static bool step_before(const struct step *a, const struct step *b)
{
	return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : strcmp(a->id, b->id) < 0;
}

/* Step indexes by their steps' start, then id; hsort_r's comparison (not qsort: see hsort.h). */
static int step_index_cmp(const void *a, const void *b, void *ctx)
{
	const struct steps *s = ctx;
	const struct step *x = &s->v[*(const uint32_t *)a], *y = &s->v[*(const uint32_t *)b];

	return step_before(x, y) ? -1 : step_before(y, x) ? 1 : 0;
}

/* Put the steps in start order and renumber the processes' `step`. */
static int steps_sort(struct steps *s, struct build *b)
{
	uint32_t *ix, *rank;
	struct step *nv;

	if (s->n < 2)
		return 0;
	ix = malloc((size_t)s->n * sizeof(*ix));
	rank = malloc((size_t)s->n * sizeof(*rank));
	nv = malloc((size_t)s->cap * sizeof(*nv));
	if (!ix || !rank || !nv) {
		free(ix);
		free(rank);
		free(nv);
		return -ENOMEM; /* unsorted but consistent */
	}
	for (uint32_t i = 0; i < s->n; i++)
		ix[i] = i;
	hsort_r(ix, s->n, sizeof(*ix), step_index_cmp, s);
	for (uint32_t i = 0; i < s->n; i++) {
		nv[i] = s->v[ix[i]];
		rank[ix[i]] = i;
	}
	free(s->v);
	s->v = nv;
	for (struct proc *p = proctab_next(b->t, NULL); p; p = proctab_next(b->t, p))
		if (p->step && in_scope(b, p))
			p->step = rank[p->step - 1] + 1;
	/* The indexes held old numbers; they are only used while building. */
	map_clear(&s->by_key);
	map_clear(&s->by_id);
	free(ix);
	free(rank);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Build                                                              */
/* ------------------------------------------------------------------ */

int steps_build(struct steps *s, struct proctab *t)
{
	struct build b = { .t = t, .root = proctab_root(t), .run_mode = t->root_pid != 0 };
	struct run_scan r;
	int rc, mrc;

	steps_reset(s);
	memset(&r, 0, sizeof(r));
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		p->step = in_scope(&b, p) ? M_UNSET : 0;
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p))
		if (p->step == M_UNSET)
			walk(s, &b, p);
	for (struct proc *p = proctab_next(t, NULL); p; p = proctab_next(t, p)) {
		uint32_t m = p->step, num;

		if (!in_scope(&b, p))
			continue;
		num = memo_step(m);
		p->step = num == M_LOST ? 0 : num;
		if (num == M_LOST)
			s->unassigned++;
		run_note(&r, p, m);
		if (p->step)
			add_proc(s, &b, &s->v[p->step - 1], p, m);
	}
	for (uint32_t i = 0; i < s->n; i++)
		step_finish(s, &s->v[i]);
	if (b.run_mode)
		judge_generic_steps(s, b.root);
	else
		judge_run_roots(s, t);
	rc = steps_sort(s, &b);
	mrc = steps_memory(s, t);
	run_finish(s, &r);
	return b.rc ? b.rc : rc ? rc : mrc;
}
