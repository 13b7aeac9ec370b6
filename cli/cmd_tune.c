/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer tune: how to make a pipeline faster and cheaper, from what the
 * lake measured (docs/tune.md).
 *
 *   tracer tune --db FILE [--pipeline NAME] [--run RUN] [--runs N]
 *               [--format text|json|nextflow|snakemake|slurm]
 *
 * The profile of every step over the last N runs (default 20) of its
 * pipeline with its class and its rightsizing advice; for one run (RUN,
 * else the newest), its critical path, its parallelism and the steps
 * slower than usual. text and json (tracer.tune.v1) say everything;
 * nextflow, snakemake and slurm give the advice as configuration to
 * paste. The figures come from hosts: text goes through textout.h, JSON
 * through records/json.h, and a name that is not safe inside a
 * configuration file is left out of it with a comment saying so.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_tune.h"
#include "run_tune.h"
#include "json.h"
#include "textout.h"
#include "tune.h"
#include "tune_input.h"

#define TUNE_DEFAULT_RUNS 20
#define TUNE_MAX_RUNS 100000

enum tune_format { FMT_TEXT, FMT_JSON, FMT_NEXTFLOW, FMT_SNAKEMAKE, FMT_SLURM };

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer tune --db FILE [--pipeline NAME] [--run RUN] [--runs N]\n"
		   "                   [--format text|json|nextflow|snakemake|slurm]\n"
		   "Profiles every step of the pipelines in the lake FILE over their last N runs (default 20):\n"
		   "duration, cores, memory, where the time went, a class, and CPUs, memory and time to ask for,\n"
		   "with a confidence (docs/tune.md). For RUN (a number of tracer report, a run key or the\n"
		   "pipeline's run id; default: the newest run), its critical path and the steps slower than usual.\n"
		   "nextflow, snakemake and slurm print the advice as configuration to paste.\n");
}

static int parse_format(const char *s, enum tune_format *out)
{
	static const char *const names[] = { "text", "json", "nextflow", "snakemake", "slurm" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum tune_format)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- the run in focus ----------------------------------------------------- */

struct found_run {
	int64_t lake_id;
	char pipeline[1024];
	bool found, has_pipeline;
};

static int note_found(void *ctx, const struct store_run *r)
{
	struct found_run *f = ctx;

	/* A pipeline run id may name several runs: the newest (store_run gives them by number). */
	f->found = true;
	f->lake_id = r->run_id;
	f->has_pipeline = r->pipeline != NULL;
	snprintf(f->pipeline, sizeof(f->pipeline), "%s", r->pipeline ? r->pipeline : "");
	return 0;
}

int tune_find_run(struct store *st, const char *db, const char *name, const char *cmd, int64_t *lake_id,
		  char *pipeline, size_t pipelinelen)
{
	struct found_run f = { 0 };
	int rc = store_run(st, name, note_found, &f);

	if (rc == STORE_E_NOT_FOUND || (!rc && !f.found)) {
		fprintf(stderr, "tracer %s: no run '%s' in %s (tracer report --db %s lists them)\n", cmd, name, db, db);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "tracer %s: %s: %s\n", cmd, db, store_last_error(st));
		return 1;
	}
	*lake_id = f.lake_id;
	snprintf(pipeline, pipelinelen, "%s", f.pipeline);
	return 0;
}

/* ---- numbers ----------------------------------------------------------------- */

static void text_bytes(char *out, size_t len, uint64_t b)
{
	format_bytes(out, len, (struct store_int){ .known = true, .v = b > INT64_MAX ? INT64_MAX : (int64_t)b });
}

static void text_duration(char *out, size_t len, double s)
{
	if (!isfinite(s) || s < 0)
		snprintf(out, len, "-");
	else if (s < 60)
		snprintf(out, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(out, len, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
	else
		snprintf(out, len, "%.0fh%02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_tools(struct json *j, const char *tools)
{
	json_key(j, "tools");
	json_array_begin(j);
	for (const char *p = tools; p && *p;) {
		const char *sep = strstr(p, ", ");
		size_t n = sep ? (size_t)(sep - p) : strlen(p);

		if (n)
			json_string_n(j, p, n);
		p = sep ? sep + 2 : p + n;
	}
	json_array_end(j);
}

static void json_breakdown(struct json *j, const char *key, const struct an_breakdown *b)
{
	char name[48];

	json_key(j, key);
	json_object_begin(j);
	json_kv_double(j, "wall_s", b->wall_s);
	for (int p = 0; p < AN_PARTS; p++) {
		snprintf(name, sizeof(name), "%s_s", an_part_name((enum an_part)p));
		json_kv_double(j, name, b->part_s[p]);
	}
	json_object_end(j);
}

static void json_profile(struct json *j, const struct an_profile *p)
{
	json_object_begin(j);
	json_kv_string(j, "pipeline", p->pipeline);
	json_kv_string(j, "step", p->name);
	json_tools(j, p->tools);
	json_kv_u64(j, "runs", p->runs);
	json_kv_u64(j, "tasks", p->tasks);
	json_key(j, "duration_s");
	json_object_begin(j);
	json_kv_double(j, "p50", p->duration_p50_s);
	json_kv_double(j, "p95", p->duration_p95_s);
	json_kv_double(j, "p99", p->duration_p99_s);
	json_kv_double(j, "max", p->duration_max_s);
	json_object_end(j);
	json_key(j, "cpu_cores");
	json_object_begin(j);
	json_kv_double(j, "p50", p->cores_p50);
	json_kv_double(j, "p95", p->cores_p95);
	json_object_end(j);
	json_kv_double(j, "cpu_time_s", p->cpu_s);
	json_key(j, "peak_memory_bytes");
	json_object_begin(j);
	json_kv_u64(j, "max", p->peak_mem_max_bytes);
	json_kv_u64(j, "p95", p->peak_mem_p95_bytes);
	json_object_end(j);
	json_kv_u64(j, "read_bytes", p->read_bytes);
	json_kv_u64(j, "write_bytes", p->write_bytes);
	json_kv_u64(j, "net_bytes", p->net_bytes);
	json_kv_u64(j, "oom_kills", p->oom_kills);
	json_key(j, "allocation");
	json_object_begin(j);
	if (p->cpu_limit > 0)
		json_kv_double(j, "cpus", p->cpu_limit);
	else
		json_kv_null(j, "cpus");
	json_kv_u64_or_null(j, "memory_bytes", p->mem_limit_bytes > 0, p->mem_limit_bytes);
	json_kv_double(j, "cpu_efficiency", p->cpu_efficiency >= 0 ? p->cpu_efficiency : NAN);
	json_kv_double(j, "memory_efficiency", p->mem_efficiency >= 0 ? p->mem_efficiency : NAN);
	json_object_end(j);
	json_kv_string(j, "class", an_class_name(p->class_));
	json_kv_string(j, "class_evidence", p->why);
	json_breakdown(j, "wall_breakdown", &p->breakdown);
	json_key(j, "recommendation");
	json_object_begin(j);
	json_kv_string(j, "confidence", rs_confidence_name(p->advice.confidence));
	if (p->advice.confidence == RS_NONE) {
		json_kv_null(j, "cpus");
		json_kv_null(j, "memory_bytes");
		json_kv_null(j, "time_s");
	} else {
		json_kv_u64(j, "cpus", p->advice.cpus);
		json_kv_u64(j, "memory_bytes", p->advice.memory_bytes);
		json_kv_double(j, "time_s", p->advice.time_s);
	}
	json_kv_bool(j, "memory_from_oom", p->advice.memory_from_oom);
	json_object_end(j);
	json_object_end(j);
}

static void json_run(struct json *j, const struct an_input *in, long run, const struct an_bottlenecks *b,
		     const struct an_slow *slow, size_t nslow)
{
	const struct an_run *r = run >= 0 ? &in->runs[run] : NULL;

	json_key(j, "run");
	if (!r) {
		json_null(j);
	} else {
		json_object_begin(j);
		json_kv_u64(j, "run_id", (uint64_t)r->lake_id);
		json_kv_string(j, "label", r->label);
		json_kv_string(j, "pipeline", r->pipeline);
		json_kv_string(j, "state", r->state);
		json_kv_double(j, "wall_s", b->wall_s);
		json_kv_double(j, "queued_s", b->queued_s);
		json_kv_double(j, "running_s", b->running_s);
		json_kv_double(j, "work_s", b->work_s);
		json_kv_double(j, "critical_path_s", b->path_s);
		json_kv_double(j, "parallelism_available", b->parallelism_available);
		json_kv_double(j, "parallelism_used", b->parallelism_used);
		json_kv_double(j, "cores_used", b->cores_used);
		json_key(j, "dominant");
		json_array_begin(j);
		for (size_t i = 0; i < b->ndominant; i++) {
			json_object_begin(j);
			json_kv_string(j, "step", in->steps[b->dominant[i]].name);
			json_kv_string(j, "step_id", in->steps[b->dominant[i]].step_id);
			json_kv_double(j, "share", b->dominant_share[i]);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	json_key(j, "critical_path");
	json_array_begin(j);
	for (size_t i = 0; r && i < b->npath; i++) {
		const struct an_step *t = &in->steps[b->path[i].step];

		json_object_begin(j);
		json_kv_string(j, "step", t->name);
		json_kv_string(j, "step_id", t->step_id);
		json_kv_double(j, "start_s", (double)(t->start_ns - r->start_ns) / 1e9);
		json_kv_double(j, "duration_s", b->path[i].duration_s);
		json_kv_double(j, "wait_s", b->path[i].wait_s);
		json_kv_double(j, "queued_s", b->path[i].queued_s);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "slower_than_usual");
	json_array_begin(j);
	for (size_t i = 0; r && i < nslow; i++) {
		const struct an_slow *s = &slow[i];
		const struct an_step *t = &in->steps[s->step];

		json_object_begin(j);
		json_kv_u64(j, "run_id", (uint64_t)r->lake_id);
		json_kv_string(j, "step", t->name);
		json_kv_string(j, "step_id", t->step_id);
		json_kv_double(j, "duration_s", s->duration_s);
		json_kv_double(j, "median_s", s->median_s);
		json_kv_double(j, "ratio", s->ratio);
		json_kv_double(j, "score", s->score);
		json_kv_bool(j, "per_input_byte", s->per_input_byte);
		json_kv_string(j, "cause", s->cause);
		json_kv_double(j, "cause_s", s->cause_s);
		json_kv_double(j, "cause_median_s", s->cause_median_s);
		json_kv_string(j, "why", s->why);
		json_object_end(j);
	}
	json_array_end(j);
}

/* ---- text ------------------------------------------------------------------------ */

static void text_advice(char *out, size_t len, const struct an_profile *p)
{
	char mem[32], t[32];

	if (p->advice.confidence == RS_NONE) {
		snprintf(out, len, "none: %u run%s, %d needed", p->runs, p->runs == 1 ? "" : "s", RS_MIN_RUNS);
		return;
	}
	text_bytes(mem, sizeof(mem), p->advice.memory_bytes);
	text_duration(t, sizeof(t), p->advice.time_s);
	snprintf(out, len, "%u CPU%s, %s%s, %s (%s)", p->advice.cpus, p->advice.cpus == 1 ? "" : "s", mem,
		 p->advice.memory_from_oom ? " (after OOM)" : "", t, rs_confidence_name(p->advice.confidence));
}

static void text_profiles(const struct an_profile *p, size_t n, uint32_t window)
{
	const char *pipeline = NULL;

	for (size_t i = 0; i < n; i++) {
		char d50[16], d95[16], cores[32], mem[32], advice[128];

		if (!pipeline || strcmp(pipeline, p[i].pipeline)) {
			pipeline = p[i].pipeline;
			printf("\npipeline ");
			put_clean(*pipeline ? pipeline : "(none)", false);
			printf(" (the last %u runs at most)\n", window);
			printf("%-24s %4s %5s %9s %9s %11s %10s %-8s %s\n", "STEP", "RUNS", "TASKS", "TIME p50",
			       "p95", "CORES p95", "PEAK MEM", "CLASS", "ADVICE");
		}
		text_duration(d50, sizeof(d50), p[i].duration_p50_s);
		text_duration(d95, sizeof(d95), p[i].duration_p95_s);
		snprintf(cores, sizeof(cores), "%.2f", p[i].cores_p95);
		text_bytes(mem, sizeof(mem), p[i].peak_mem_max_bytes);
		text_advice(advice, sizeof(advice), &p[i]);
		put_field(p[i].name, 24);
		printf("%4u %5u %9s %9s %11s %10s %-8s %s\n", p[i].runs, p[i].tasks, d50, d95, cores, mem,
		       an_class_name(p[i].class_), advice);
	}
	/* Then the evidence: where each step's time went and why its class. */
	for (size_t i = 0; i < n; i++) {
		const struct an_breakdown *b = &p[i].breakdown;

		printf("  ");
		put_clean(p[i].name, false);
		printf(": %s: ", an_class_name(p[i].class_));
		put_clean(p[i].why, false);
		printf("; time:");
		for (int k = 0; k < AN_PARTS; k++)
			if (b->wall_s > 0 && b->part_s[k] >= 0.005 * b->wall_s)
				printf(" %s %.0f%%", an_part_name((enum an_part)k), 100 * b->part_s[k] / b->wall_s);
		if (p[i].oom_kills)
			printf("; %u OOM kill%s", p[i].oom_kills, p[i].oom_kills == 1 ? "" : "s");
		if (p[i].cpu_limit > 0)
			printf("; allocated %.2f CPUs, %.0f%% of them used (p95)", p[i].cpu_limit,
			       100 * p[i].cpu_efficiency);
		if (p[i].mem_limit_bytes) {
			char lim[32];

			text_bytes(lim, sizeof(lim), p[i].mem_limit_bytes);
			printf("; memory limit %s, %.0f%% of it used (peak)", lim, 100 * p[i].mem_efficiency);
		}
		printf("\n");
	}
}

void tune_text_run(const struct an_input *in, long run, const struct an_bottlenecks *b, const struct an_slow *slow,
		   size_t nslow)
{
	const struct an_run *r = &in->runs[run];
	char wall[16], d[16];

	text_duration(wall, sizeof(wall), b->wall_s);
	printf("\nrun #%" PRId64, r->lake_id);
	if (r->label && r->label[0] != '#') {
		printf(" (");
		put_clean(r->label, false);
		printf(")");
	}
	printf(" of ");
	put_clean(*r->pipeline ? r->pipeline : "no pipeline", false);
	printf(", %s, %s wall, %.1fs of step time\n", r->state ? r->state : "-", wall, b->work_s);
	if (b->queued_s >= 0.05)
		printf("  queued %.1fs (a job waited in the scheduler's queue, no step ran), running %.1fs\n", b->queued_s,
		       b->running_s);
	if (b->npath) {
		printf("  critical path (%.1fs):", b->path_s);
		for (size_t i = 0; i < b->npath; i++) {
			text_duration(d, sizeof(d), b->path[i].duration_s);
			printf("%s ", i ? " ->" : "");
			put_clean(in->steps[b->path[i].step].name, false);
			printf(" %s", d);
			if (b->path[i].wait_s >= 0.05 && b->path[i].queued_s >= 0.05)
				printf(" (after %.1fs waiting; %.1fs in the queue)", b->path[i].wait_s, b->path[i].queued_s);
			else if (b->path[i].queued_s >= 0.05)
				printf(" (after %.1fs in the queue)", b->path[i].queued_s);
			else if (b->path[i].wait_s >= 0.05)
				printf(" (after %.1fs waiting)", b->path[i].wait_s);
		}
		printf("\n");
	}
	printf("  parallelism: %.2f available, %.2f used; %.2f cores busy on average\n", b->parallelism_available,
	       b->parallelism_used, b->cores_used);
	if (b->ndominant) {
		printf("  largest steps:");
		for (size_t i = 0; i < b->ndominant; i++) {
			printf("%s ", i ? "," : "");
			put_clean(in->steps[b->dominant[i]].name, false);
			printf(" %.0f%% of the wall time", 100 * b->dominant_share[i]);
		}
		printf("\n");
	}
	if (!nslow)
		printf("  slower than usual: none\n");
	for (size_t i = 0; i < nslow; i++) {
		printf("  slower than usual: ");
		put_clean(in->steps[slow[i].step].name, false);
		printf(": ");
		put_clean(slow[i].why, false);
		printf("\n");
	}
}

/* ---- configuration to paste --------------------------------------------------------- */

/* A name that can go inside a configuration file as it is: no quoting, no escaping needed. */
static bool safe_name(const char *s)
{
	if (!s || !*s || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-' || *s == '.' || *s == ':'))
			return false;
	return true;
}

static uint64_t mem_mib(const struct an_profile *p)
{
	return (p->advice.memory_bytes + (1u << 20) - 1) >> 20;
}

static uint64_t time_min(const struct an_profile *p)
{
	return (uint64_t)ceil(p->advice.time_s / 60);
}

/* A step that goes into the configuration: advice, and a name the pipeline itself gave that is safe there. */
static bool pasteable(const struct an_profile *p)
{
	return safe_name(p->name) && p->named && p->advice.confidence != RS_NONE;
}

/* Why a step is not in the configuration, as a comment line; false when it is. */
static bool config_skip(const struct an_profile *p, const char *comment)
{
	if (!safe_name(p->name)) {
		printf("%s a step whose name is not safe to paste here was left out (tracer tune --format text shows it)\n",
		       comment);
		return true;
	}
	if (p->advice.confidence == RS_NONE) {
		printf("%s %s: no advice yet: %u run%s, %d needed\n", comment, p->name, p->runs, p->runs == 1 ? "" : "s",
		       RS_MIN_RUNS);
		return true;
	}
	if (!p->named) {
		/* Named by tracer from its tools: the pipeline would not know the name. Say what to set, on what. */
		printf("%s %s: %u CPU%s, %" PRIu64 " MiB, %" PRIu64 " min: tracer named this step from its tools; the\n"
		       "%s pipeline did not say which rule or process ran it: set these on the one that runs it\n",
		       comment, p->name, p->advice.cpus, p->advice.cpus == 1 ? "" : "s", mem_mib(p), time_min(p), comment);
		return true;
	}
	return false;
}

static void config_header(const char *comment, const struct an_profile *p, size_t n)
{
	printf("%s tracer tune: CPUs = ceil(p95 of cores used - 0.05), memory = highest concurrent peak x 1.15\n"
	       "%s (at least x 1.2 or +100 MiB after an OOM kill), time = p99 duration x 1.5 (docs/tune.md)\n",
	       comment, comment);
	for (size_t i = 0; i < n; i++)
		if (pasteable(&p[i]))
			printf("%s %s: %u runs, %u tasks, confidence %s\n", comment, p[i].name, p[i].runs, p[i].tasks,
			       rs_confidence_name(p[i].advice.confidence));
}

static void config_nextflow(const struct an_profile *p, size_t n)
{
	config_header("//", p, n);
	printf("process {\n");
	for (size_t i = 0; i < n; i++) {
		if (config_skip(&p[i], "    //"))
			continue;
		printf("    withName: '%s' {\n        cpus = %u\n        memory = '%" PRIu64 " MB'\n"
		       "        time = '%" PRIu64 "m'\n    }\n",
		       p[i].name, p[i].advice.cpus, mem_mib(&p[i]), time_min(&p[i]));
	}
	printf("}\n");
}

/* A Snakemake profile's config.yaml: lists of RULE=N and RULE:RESOURCE=VALUE, as the options take them. */
static void config_snakemake(const struct an_profile *p, size_t n)
{
	bool any = false;

	config_header("#", p, n);
	for (size_t i = 0; i < n; i++)
		any |= !config_skip(&p[i], "#");
	if (!any) {
		printf("{}\n"); /* still a profile snakemake takes: an empty mapping */
		return;
	}
	printf("set-threads:\n");
	for (size_t i = 0; i < n; i++)
		if (pasteable(&p[i]))
			printf("  - %s=%u\n", p[i].name, p[i].advice.cpus);
	printf("set-resources:\n");
	for (size_t i = 0; i < n; i++)
		if (pasteable(&p[i]))
			printf("  - %s:mem_mb=%" PRIu64 "\n  - %s:runtime=%" PRIu64 "\n", p[i].name, mem_mib(&p[i]),
			       p[i].name, time_min(&p[i]));
}

static void config_slurm(const struct an_profile *p, size_t n)
{
	config_header("#", p, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t m = time_min(&p[i]);

		if (config_skip(&p[i], "#"))
			continue;
		printf("# %s\nsbatch --cpus-per-task=%u --mem=%" PRIu64 "M --time=%" PRIu64 ":%02" PRIu64 ":00\n",
		       p[i].name, p[i].advice.cpus, mem_mib(&p[i]), m / 60, m % 60);
	}
}

/* ---- the command ---------------------------------------------------------------------- */

struct tune_opts {
	const char *db, *pipeline, *run;
	uint32_t window;
	enum tune_format format;
};

static int parse_opts(int argc, char **argv, struct tune_opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },       { "pipeline", required_argument, NULL, 'p' },
		{ "run", required_argument, NULL, 'r' },      { "runs", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },   { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->db = optarg; break;
		case 'p': o->pipeline = optarg; break;
		case 'r': o->run = optarg; break;
		case 'j': o->format = FMT_JSON; break;
		case 'n':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > TUNE_MAX_RUNS) {
				fprintf(stderr, "tracer tune: --runs takes a number of runs from 1 to %d, not '%s'\n",
					TUNE_MAX_RUNS, optarg);
				return 2;
			}
			o->window = (uint32_t)v;
			break;
		case 'f':
			if (parse_format(optarg, &o->format)) {
				fprintf(stderr, "tracer tune: --format is text, json, nextflow, snakemake or slurm, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (!o->db || optind < argc) {
		fprintf(stderr, "tracer tune: %s\n", o->db ? "unexpected argument" : "--db FILE is required");
		usage(stderr);
		return 2;
	}
	return 0;
}

static int emit(const struct tune_opts *o, const struct an_input *in, const struct an_profile *p, size_t n,
		long run, const struct an_bottlenecks *b, const struct an_slow *slow, size_t nslow)
{
	struct obuf ob;
	struct json j;
	char storage[1 << 16];

	switch (o->format) {
	case FMT_NEXTFLOW: config_nextflow(p, n); return 0;
	case FMT_SNAKEMAKE: config_snakemake(p, n); return 0;
	case FMT_SLURM: config_slurm(p, n); return 0;
	case FMT_TEXT:
		printf("tracer tune: %zu step%s in %s", n, n == 1 ? "" : "s", o->db);
		if (!n && o->pipeline) {
			printf(": no finished step of pipeline '");
			put_clean(o->pipeline, false);
			printf("' (tracer report --db %s lists the runs)", o->db);
		} else if (!n) {
			printf(": no finished step yet");
		}
		printf("\n");
		text_profiles(p, n, o->window);
		if (run >= 0)
			tune_text_run(in, run, b, slow, nslow);
		return 0;
	case FMT_JSON: break;
	}
	obuf_init_fd(&ob, STDOUT_FILENO, storage, sizeof(storage));
	json_init(&j, &ob);
	json_object_begin(&j);
	json_kv_string(&j, "schema", "tracer.tune.v1");
	json_kv_u64(&j, "window_runs", o->window);
	json_key(&j, "steps");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++)
		json_profile(&j, &p[i]);
	json_array_end(&j);
	json_run(&j, in, run, b, slow, nslow);
	json_object_end(&j);
	obuf_putc(&ob, '\n');
	return obuf_flush(&ob) ? 1 : 0;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_opts o = { .window = TUNE_DEFAULT_RUNS, .format = FMT_TEXT };
	struct tune_input ti;
	struct an_profile *prof = NULL;
	struct an_bottlenecks b = { 0 };
	struct an_slow *slow = NULL;
	size_t nprof = 0, nslow = 0;
	struct store *st = NULL;
	char err[1024], pipeline[1024], shown[512];
	int64_t lake_id = -1;
	long run = -1;
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (store_open(&st, o.db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer tune: %s\n", err);
		return 1;
	}
	/* from here on, messages name the lake as store_display_name() shows it: a URI's password starred */
	store_display_name(o.db, shown, sizeof(shown));
	o.db = shown;
	if (o.run) {
		rc = tune_find_run(st, o.db, o.run, "tune", &lake_id, pipeline, sizeof(pipeline));
		if (rc) {
			store_close(st);
			return rc;
		}
		if (!o.pipeline)
			o.pipeline = pipeline; /* the run's history is its pipeline's */
	}
	/*
	 * Without --run: the newest runs of each pipeline are all it looks at (the newest finished run, each
	 * step's last N and the history before that run), with room for N runs still running. With --run,
	 * an older run's history may be anywhere: every run of its pipeline.
	 */
	rc = tune_input_load(st, o.pipeline, o.run ? 0 : 2 * o.window + 1, &ti, err, sizeof(err));
	store_close(st);
	if (rc) {
		fprintf(stderr, "tracer tune: %s: %s\n", o.db, err);
		return 1;
	}
	run = tune_run_index(&ti.in, lake_id, o.pipeline);
	rc = an_profiles(&ti.in, o.pipeline, o.window, &prof, &nprof);
	if (!rc && run >= 0)
		rc = an_bottlenecks(&ti.in, (uint32_t)run, &b);
	if (!rc && run >= 0)
		rc = an_slower(&ti.in, (uint32_t)run, o.window, &slow, &nslow);
	if (rc)
		fprintf(stderr, "tracer tune: %s\n", strerror(-rc));
	else
		rc = emit(&o, &ti.in, prof, nprof, run, &b, slow, nslow);
	free(prof);
	free(slow);
	an_bottlenecks_free(&b);
	tune_input_free(&ti);
	return rc ? 1 : 0;
}
