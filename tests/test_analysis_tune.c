/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The analysis of tracer tune (analysis/breakdown.c, profile.c,
 * critpath.c, slower.c) against answers computed by hand: a task's
 * breakdown, the classes and their evidence, step profiles and their
 * window of runs, the critical path of a diamond and of a chain with
 * gaps, and "slower than usual" with its robust score, its cause and its
 * per-byte comparison.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tune.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define NS 1000000000LL
#define T0 (1700000000LL * NS) /* a real epoch: the arithmetic must hold at its size */
#define S(x) ((int64_t)((x) * 1e9))   /* seconds from T0, as ns */
#define DNS(x) ((uint64_t)((x) * 1e9)) /* a duration of x seconds, as ns */

#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * (1 + fabs((double)(b))))

/* ---- a small lake, built run by run ------------------------------------------ */

struct lake {
	struct an_run runs[64];
	struct an_step steps[4096];
	uint32_t files[256];
	size_t nruns, nsteps, nfiles;
};

static struct lake *lake_new(void)
{
	struct lake *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	return l;
}

static struct an_input input_of(const struct lake *l)
{
	return (struct an_input){ .runs = l->runs, .nruns = l->nruns, .steps = l->steps, .nsteps = l->nsteps,
				  .files = l->files, .nfiles = l->nfiles };
}

/* A finished run from T0 + start to T0 + end seconds; its tasks are the ones added next. */
static struct an_run *add_run(struct lake *l, const char *pipeline, double start, double end)
{
	struct an_run *r = &l->runs[l->nruns++];

	*r = (struct an_run){ .lake_id = (int64_t)l->nruns, .pipeline = pipeline, .label = pipeline,
			      .state = "succeeded", .start_ns = T0 + S(start), .end_ns = end ? T0 + S(end) : 0,
			      .step_first = (uint32_t)l->nsteps };
	return r;
}

/* A finished task of the newest run, all its time asleep unless the test says otherwise. */
static struct an_step *add_step(struct lake *l, const char *name, double start, double end)
{
	struct an_step *t = &l->steps[l->nsteps++];

	l->runs[l->nruns - 1].step_n++;
	*t = (struct an_step){ .run = (uint32_t)(l->nruns - 1), .name = name, .step_id = name, .tools = "",
			       .start_ns = T0 + S(start), .end_ns = T0 + S(end), .processes = 1,
			       .proc_ns = DNS(end - start) };
	return t;
}

static void reads(struct lake *l, struct an_step *t, uint32_t file)
{
	if (t->in_n == 0)
		t->in_first = (uint32_t)l->nfiles;
	assert_int_equal(t->in_first + t->in_n, l->nfiles); /* a task's files are added together */
	l->files[l->nfiles++] = file;
	t->in_n++;
}

static void writes(struct lake *l, struct an_step *t, uint32_t file)
{
	if (t->out_n == 0)
		t->out_first = (uint32_t)l->nfiles;
	assert_int_equal(t->out_first + t->out_n, l->nfiles);
	l->files[l->nfiles++] = file;
	t->out_n++;
}

/* ---- the breakdown --------------------------------------------------------------- */

static void breakdown_splits_a_single_process_task_by_its_states(void **state)
{
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(4),
			     .run_delay_ns = DNS(1), .iowait_ns = DNS(2) };
	struct an_breakdown b;

	(void)state;
	/* 10 s of one process: cpu 4 + run queue 1 + I/O 2 = 7 measured, sleep the other 3; total 10 = wall */
	an_breakdown_of(&t, &b);
	assert_near(b.wall_s, 10);
	assert_near(b.part_s[AN_CPU], 4);
	assert_near(b.part_s[AN_RUN_QUEUE], 1);
	assert_near(b.part_s[AN_IO_WAIT], 2);
	assert_near(b.part_s[AN_BLOCKED], 0);
	assert_near(b.part_s[AN_IDLE], 3);
	assert_string_equal(an_part_name(AN_RUN_QUEUE), "run_queue");
	assert_string_equal(an_part_name(AN_IDLE), "idle");
}

/*
 * `bash -c 'burner | reader'` over 10 s: the loader's idle leaves out the
 * shell's wait for its children (idle_known), so 2 burner threads (20 s
 * of CPU, 4 s queued) and the reader's 8 s of idle split the thread-time
 * 20 : 4 : 8, scaled to the wall. Without idle_known, the shell's 10 s
 * of waiting would count as idle too (proc_ns less busy).
 */
static void breakdown_idle_leaves_out_the_wait_for_children(void **state)
{
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(30), .cpu_ns = DNS(20),
			     .run_delay_ns = DNS(4), .idle_known = true, .idle_ns = DNS(8) };
	struct an_breakdown b;

	(void)state;
	an_breakdown_of(&t, &b);
	assert_near(b.part_s[AN_CPU], 10 * 20.0 / 32);
	assert_near(b.part_s[AN_RUN_QUEUE], 10 * 4.0 / 32);
	assert_near(b.part_s[AN_IDLE], 10 * 8.0 / 32);
	t.idle_known = false; /* 30 s of lives, 24 busy: 6 idle */
	an_breakdown_of(&t, &b);
	assert_near(b.part_s[AN_IDLE], 10 * 6.0 / 30);
}

/* Reclaim runs on a CPU or blocked: taken out of those parts in proportion, not counted twice. */
static void breakdown_carves_reclaim_out_of_cpu_and_blocked(void **state)
{
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(6),
			     .blocked_ns = DNS(2), .reclaim_ns = DNS(4), .idle_known = true, .idle_ns = DNS(2) };
	struct an_breakdown b;

	(void)state;
	an_breakdown_of(&t, &b);
	assert_near(b.part_s[AN_RECLAIM], 4);
	assert_near(b.part_s[AN_CPU], 3);     /* 6 x (8 - 4) / 8 */
	assert_near(b.part_s[AN_BLOCKED], 1); /* 2 x (8 - 4) / 8 */
	assert_near(b.part_s[AN_IDLE], 2);
}

static void breakdown_scales_threads_to_the_wall_time(void **state)
{
	/* 10 s wall, 15 s CPU on 2 threads, 5 s in I/O: 20 s measured > 10 s lifetime, so no sleep;
	 * cpu 10 x 15/20 = 7.5 s, io_wait 10 x 5/20 = 2.5 s */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(15),
			     .iowait_ns = DNS(5) };
	struct an_breakdown b;

	(void)state;
	an_breakdown_of(&t, &b);
	assert_near(b.part_s[AN_CPU], 7.5);
	assert_near(b.part_s[AN_IO_WAIT], 2.5);
	assert_near(b.part_s[AN_IDLE], 0);
	/* nothing measured: the wall time is sleep */
	t = (struct an_step){ .start_ns = T0, .end_ns = T0 + S(3) };
	an_breakdown_of(&t, &b);
	assert_near(b.part_s[AN_IDLE], 3);
	/* still running: no wall time, nothing */
	t = (struct an_step){ .start_ns = T0, .running = true, .cpu_ns = DNS(5), .proc_ns = DNS(5) };
	an_breakdown_of(&t, &b);
	assert_near(b.wall_s, 0);
	assert_near(b.part_s[AN_CPU], 0);
	assert_near(an_step_wall_s(&t), 0);
}

/* ---- classes -------------------------------------------------------------------- */

static enum an_class classify_one(const struct an_step *t, char *why, size_t len)
{
	const struct an_step *p[1] = { t };

	return an_classify(p, 1, why, len);
}

static void a_step_on_cpu_is_compute(void **state)
{
	/* 10 s wall; 19 s CPU on two threads, 20 s of lifetimes: sleep 1 s; cpu 19/20 = 95%, 19/10 = 1.9 cores */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(20), .cpu_ns = DNS(19) };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_COMPUTE);
	assert_string_equal(why, "cpu 95% of wall (1.9 cores)");
	assert_string_equal(an_class_name(AN_CLASS_COMPUTE), "compute");
	/* run-queue wait counts as compute: the task wanted a CPU; cpu 5 + run queue 3 of 10 = 80% */
	t = (struct an_step){ .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(5),
			      .run_delay_ns = DNS(3) };
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_COMPUTE);
	assert_string_equal(why, "cpu 50% + run_queue 30% of wall (0.5 cores)");
}

static void a_step_in_io_wait_is_io(void **state)
{
	/* 10 s: cpu 2, I/O wait 6, blocked 1, sleep 1: io 70% */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(2),
			     .iowait_ns = DNS(6), .blocked_ns = DNS(1) };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_IO);
	assert_string_equal(why, "io_wait 60% + blocked 10% of wall");
}

static void a_step_in_network_calls_is_network_and_a_sleeper_is_idle(void **state)
{
	/* cpu 1, network 7, sleep 2 */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(1),
			     .net_wait_ns = DNS(7) };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_NETWORK);
	assert_string_equal(why, "net_wait 70% of wall");
	/* cpu 1, sleep 9 */
	t = (struct an_step){ .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(1) };
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_IDLE);
	assert_string_equal(why, "idle 90% of wall");
}

static void no_share_above_forty_percent_is_mixed(void **state)
{
	/* cpu 3, I/O wait 3, network 2, sleep 2: compute and io tie at 30%, compute (listed first) wins */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(3),
			     .iowait_ns = DNS(3), .net_wait_ns = DNS(2) };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_COMPUTE);
	assert_string_equal(why, "mixed; largest: cpu 30% of wall (0.3 cores)");
}

static void an_oom_kill_or_a_peak_near_the_limit_is_memory(void **state)
{
	/* all on CPU, but OOM-killed: memory wins over the time shares */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(10),
			     .oom_kills = 1, .oom_limit_bytes = 512 * MiB };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "OOM-killed at 512 MiB limit");
	/* 900 MiB of a 1 GiB limit: 87.9% >= 80% */
	t.oom_kills = 0;
	t.oom_limit_bytes = 0;
	t.peak_mem_bytes = 900 * MiB;
	t.mem_limit_bytes = GiB;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "peak 900 MiB is 88% of its 1.0 GiB limit");
	/* 700 MiB of 1 GiB: 68%, compute again */
	t.peak_mem_bytes = 700 * MiB;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_COMPUTE);
	/* reclaim 3 of 10 s: 30% >= 20% */
	t = (struct an_step){ .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(5),
			      .reclaim_ns = DNS(3) };
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "reclaim 30% of wall");
}

static void many_gib_on_few_cores_is_memory(void **state)
{
	/* 2 GiB held 10 s on 3 s of CPU: 0.3 cores on average, 6.67 GiB per core >= 4, and >= 1 GiB held.
	 * Its samples' p95 (1 core: the burst that faulted the memory in) does not count. */
	struct an_step t = { .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(3),
			     .peak_mem_bytes = 2 * GiB, .cores_known = true, .cores_p50 = 0.1, .cores_p95 = 1.0 };
	char why[160];

	(void)state;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "2.0 GiB held on 0.3 cores (6.7 GiB per core)");
	/* 1.5 GiB on 0.5 s of CPU in 10 s, 0.05 cores: the floor of 0.25 cores makes it 6 GiB per core */
	t.peak_mem_bytes = 1536 * MiB;
	t.cpu_ns = DNS(0.5);
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "1.5 GiB held on 0.05 cores (6.0 GiB per core)");
	/* 900 MiB on 0.05 cores: over 4 GiB per core by the floor, but under 1 GiB held: not memory */
	t.peak_mem_bytes = 900 * MiB;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_IDLE); /* cpu 0.5 of 10 s, sleep 9.5 */
	/* 3 GiB on 1 core, from CPU time over wall time (no samples): 3 GiB per core, not memory */
	t = (struct an_step){ .start_ns = T0, .end_ns = T0 + S(10), .proc_ns = DNS(10), .cpu_ns = DNS(10),
			      .peak_mem_bytes = 3 * GiB };
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_COMPUTE);
	/* 5 GiB on that core: memory */
	t.peak_mem_bytes = 5 * GiB;
	assert_int_equal(classify_one(&t, why, sizeof(why)), AN_CLASS_MEMORY);
	assert_string_equal(why, "5.0 GiB held on 1.0 cores (5.0 GiB per core)");
}

/* ---- the step profile ------------------------------------------------------------- */

/*
 * Pipeline "p": 20 runs, run i (0-19) starting at 1000 i s. Each has an
 * "align" task of d = (7 i mod 20) + 1 s (every value 1..20 once, out of
 * order) with cores p50 0.1 d, p95 0.2 d, CPU d s, peak 100 d MiB, and a
 * "sort" task of 1 s. Pipeline "a": one run, one step. One running task.
 */
static struct lake *profile_lake(void)
{
	struct lake *l = lake_new();

	for (int i = 0; i < 20; i++) {
		double d = (7 * i) % 20 + 1, at = 1000.0 * i;
		struct an_step *t;

		add_run(l, "p", at, at + 100);
		t = add_step(l, "align", at, at + d);
		t->cores_known = true;
		t->cores_p50 = 0.1 * d;
		t->cores_p95 = 0.2 * d;
		t->cpu_ns = DNS(d);
		t->peak_mem_bytes = (uint64_t)d * 100 * MiB;
		t->read_bytes = 1000;
		t->net_rx_bytes = 10;
		t->net_tx_bytes = 5;
		t->tools = i == 19 ? "bwa, samtools" : "bwa";
		t->mem_limit_bytes = i == 19 ? 4 * GiB : 8 * GiB;
		t->cpu_limit = i == 19 ? 4 : 2;
		add_step(l, "sort", at + 50, at + 51);
		if (i == 19) {
			t = add_step(l, "align", at + 60, at + 61);
			t->running = true;
			t->end_ns = 0;
		}
	}
	add_run(l, "a", 30000, 30100);
	add_step(l, "index", 30000, 30002);
	return l;
}

static void a_profile_has_nearest_rank_percentiles_and_advice(void **state)
{
	struct lake *l = profile_lake();
	struct an_input in = input_of(l);
	struct an_profile *p;
	size_t n;

	(void)state;
	assert_int_equal(an_profiles(&in, NULL, 50, &p, &n), 0);
	assert_int_equal(n, 3);
	/* pipeline "a" first; then "p": align (210 s of tasks) before sort (20 s) */
	assert_string_equal(p[0].pipeline, "a");
	assert_string_equal(p[1].name, "align");
	assert_string_equal(p[2].name, "sort");
	assert_int_equal(p[1].runs, 20);
	assert_int_equal(p[1].tasks, 20); /* the running task is left out */
	/* durations 1..20: p50 rank 10, p95 rank 19, p99 rank ceil(19.8) = 20 */
	assert_near(p[1].duration_p50_s, 10);
	assert_near(p[1].duration_p95_s, 19);
	assert_near(p[1].duration_p99_s, 20);
	assert_near(p[1].duration_max_s, 20);
	/* the 10th of the task medians 0.1..2.0 is 1.0; the 19th of the p95s 0.2..4.0 is 3.8 */
	assert_near(p[1].cores_p50, 1.0);
	assert_near(p[1].cores_p95, 3.8);
	assert_near(p[1].cpu_s, 210); /* 1 + .. + 20 */
	assert_near(p[1].cpu_s_per_task, 10.5);
	assert_int_equal(p[1].peak_mem_max_bytes, 2000 * MiB);
	assert_int_equal(p[1].peak_mem_p95_bytes, 1900 * MiB);
	assert_int_equal(p[1].read_bytes, 20000);
	assert_int_equal(p[1].net_bytes, 300);
	assert_near(p[1].breakdown.wall_s, 210);
	/* the allocation of the newest task (run 19): 4 GiB and 4 CPUs */
	assert_string_equal(p[1].tools, "bwa, samtools");
	assert_int_equal(p[1].mem_limit_bytes, 4 * GiB);
	assert_near(p[1].cpu_efficiency, 3.8 / 4);
	assert_near(p[1].mem_efficiency, 2000.0 / 4096);
	assert_int_equal(p[2].cpu_efficiency < 0, true); /* sort's limit is unknown */
	/* advice: 2000 MiB x 1.15 = 2300 -> 2304 MiB; ceil(3.8) = 4 CPUs; p99 20 s x 1.5 = 30 s -> 1 minute */
	assert_int_equal(p[1].advice.confidence, RS_HIGH);
	assert_int_equal(p[1].advice.memory_bytes, 2304 * MiB);
	assert_int_equal(p[1].advice.cpus, 4);
	assert_near(p[1].advice.time_s, 60);
	/* cpu d s over d s: compute, 1.0 core */
	assert_int_equal(p[1].class_, AN_CLASS_COMPUTE);
	assert_string_equal(p[1].why, "cpu 100% of wall (1.0 cores)");
	assert_int_equal(p[0].advice.confidence, RS_NONE); /* one run */
	free(p);
	free(l);
}

static void a_profile_keeps_only_the_last_runs_and_one_pipeline(void **state)
{
	struct lake *l = profile_lake();
	struct an_input in = input_of(l);
	struct an_profile *p;
	size_t n;

	(void)state;
	/* the 5 newest runs (15..19): d = 6, 13, 20, 7, 14 -> sorted 6 7 13 14 20: p50 rank 3 = 13, p95 rank 5 = 20 */
	assert_int_equal(an_profiles(&in, "p", 5, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].name, "align");
	assert_int_equal(p[0].runs, 5);
	assert_int_equal(p[0].tasks, 5);
	assert_near(p[0].duration_p50_s, 13);
	assert_near(p[0].duration_p95_s, 20);
	assert_near(p[0].cpu_s, 60);
	assert_int_equal(p[0].advice.confidence, RS_LOW);
	free(p);
	assert_int_equal(an_profiles(&in, "nope", 5, &p, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(an_profiles(&in, NULL, 0, &p, &n), -EINVAL);
	free(l);
}

static void an_oom_kill_flows_into_the_profile_advice(void **state)
{
	struct lake *l = lake_new();
	struct an_input in;
	struct an_profile *p;
	size_t n;

	(void)state;
	/* "scatter": 3 runs of 2 tasks; one OOM-killed at a 1 GiB limit, peaks up to 900 MiB */
	for (int i = 0; i < 3; i++) {
		add_run(l, "p", 100.0 * i, 100.0 * i + 50);
		add_step(l, "scatter", 100.0 * i, 100.0 * i + 10)->peak_mem_bytes = 800 * MiB;
		add_step(l, "scatter", 100.0 * i + 1, 100.0 * i + 11)->peak_mem_bytes = 900 * MiB;
	}
	l->steps[3].oom_kills = 1;
	l->steps[3].oom_limit_bytes = GiB;
	in = input_of(l);
	assert_int_equal(an_profiles(&in, NULL, 10, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].runs, 3);
	assert_int_equal(p[0].tasks, 6);
	assert_int_equal(p[0].oom_kills, 1);
	assert_int_equal(p[0].class_, AN_CLASS_MEMORY);
	assert_string_equal(p[0].why, "OOM-killed at 1.0 GiB limit");
	/* 900 MiB x 1.15 = 1035 MiB; the OOM floor max(1228.8, 1124) MiB is higher -> 1280 MiB */
	assert_true(p[0].advice.memory_from_oom);
	assert_int_equal(p[0].advice.memory_bytes, 1280 * MiB);
	assert_true(p[0].advice.memory_bytes >= GiB + GiB / 5);
	free(p);
	free(l);
}

/* ---- bottlenecks ------------------------------------------------------------------ */

/*
 * The run: 0-60 s, 90 s of CPU. A 2-12 writes 1; B 12-42 and C 12-22 read
 * 1, write 2 and 3; D 44-54 reads 2 and 3, and 9, which E (45-46, started
 * after D) wrote: not a dependency. F never ended.
 */
static struct lake *diamond_lake(void)
{
	struct lake *l = lake_new();
	struct an_step *a, *b, *c, *d, *e, *f;

	add_run(l, "p", 0, 60)->cpu_ns = DNS(90);
	a = add_step(l, "A", 2, 12);
	writes(l, a, 1);
	b = add_step(l, "B", 12, 42);
	reads(l, b, 1);
	writes(l, b, 2);
	c = add_step(l, "C", 12, 22);
	reads(l, c, 1);
	writes(l, c, 3);
	d = add_step(l, "D", 44, 54);
	reads(l, d, 2);
	reads(l, d, 3);
	reads(l, d, 9);
	e = add_step(l, "E", 45, 46);
	writes(l, e, 9);
	f = add_step(l, "F", 50, 51);
	f->end_ns = 0;
	f->running = true;
	writes(l, f, 1);
	return l;
}

static void the_critical_path_of_a_diamond_takes_the_longer_branch(void **state)
{
	struct lake *l = diamond_lake();
	struct an_input in = input_of(l);
	struct an_bottlenecks b;

	(void)state;
	assert_int_equal(an_bottlenecks(&in, 0, &b), 0);
	/* D ends last (54 s); its dependencies B (ends 42) and C (22): B; B's is A */
	assert_int_equal(b.npath, 3);
	assert_int_equal(b.path[0].step, 0);
	assert_int_equal(b.path[1].step, 1);
	assert_int_equal(b.path[2].step, 3);
	/* waits: A 2 s after the run's start, B 0 s after A, D 2 s after B */
	assert_near(b.path[0].wait_s, 2);
	assert_near(b.path[1].wait_s, 0);
	assert_near(b.path[2].wait_s, 2);
	assert_near(b.path[1].duration_s, 30);
	assert_near(b.path_s, 52); /* 2 .. 54 */
	assert_near(b.wall_s, 60);
	/* work: A 10 + B 30 + C 10 + D 10 + E 1 = 61 s; the path's durations 50 s */
	assert_near(b.work_s, 61);
	assert_near(b.parallelism_available, 61.0 / 50);
	assert_near(b.parallelism_used, 61.0 / 60);
	assert_near(b.cores_used, 1.5); /* 90 s of CPU over 60 s */
	/* dominant: B 30/60, then the 10 s ones in their order, then E */
	assert_int_equal(b.ndominant, 5);
	assert_int_equal(b.dominant[0], 1);
	assert_near(b.dominant_share[0], 0.5);
	assert_int_equal(b.dominant[1], 0);
	assert_int_equal(b.dominant[2], 2);
	assert_int_equal(b.dominant[3], 3);
	assert_int_equal(b.dominant[4], 4);
	assert_near(b.dominant_share[4], 1.0 / 60);
	an_bottlenecks_free(&b);
	assert_null(b.path);
	free(l);
}

static void a_chain_with_gaps_shows_each_wait(void **state)
{
	struct lake *l = lake_new();
	struct an_input in;
	struct an_bottlenecks b;
	struct an_step *x, *y, *z;

	(void)state;
	/* X 1-5 writes 10 (and reads it back: no dependency on itself); Y 7-10 reads 10, writes 11;
	 * Z 13-20 reads 11 */
	add_run(l, "p", 0, 20)->cpu_ns = DNS(10);
	x = add_step(l, "X", 1, 5);
	reads(l, x, 10);
	writes(l, x, 10);
	y = add_step(l, "Y", 7, 10);
	reads(l, y, 10);
	writes(l, y, 11);
	z = add_step(l, "Z", 13, 20);
	reads(l, z, 11);
	in = input_of(l);
	assert_int_equal(an_bottlenecks(&in, 0, &b), 0);
	assert_int_equal(b.npath, 3);
	assert_near(b.path[0].wait_s, 1); /* from the run's start */
	assert_near(b.path[1].wait_s, 2); /* 5 -> 7 */
	assert_near(b.path[2].wait_s, 3); /* 10 -> 13 */
	assert_near(b.path_s, 19);
	/* work 4 + 3 + 7 = 14 s, all on the path: nothing to run at once */
	assert_near(b.parallelism_available, 1);
	assert_near(b.parallelism_used, 14.0 / 20);
	an_bottlenecks_free(&b);
	assert_int_equal(an_bottlenecks(&in, 1, &b), -EINVAL);
	free(l);
}

/*
 * A run of cluster jobs, 0-30 s: L 0-2 on the head; job A submitted at 2, ran 5-10, writes 1; job B
 * submitted at 3, waited for A's CPUs, ran 12-20; job C, reading 1, submitted at 10, ran 11-25.
 * Queued and nothing running: 2-5 (A and B queued) and 10-11 (B and C queued): 4 s of the 30.
 */
static void the_wall_time_splits_into_queued_and_running(void **state)
{
	struct lake *l = lake_new();
	struct an_input in;
	struct an_bottlenecks b;
	struct an_step *a, *bb, *c;

	(void)state;
	add_run(l, "p", 0, 30);
	add_step(l, "L", 0, 2);
	a = add_step(l, "A", 5, 10);
	a->submitted_ns = T0 + S(2);
	writes(l, a, 1);
	bb = add_step(l, "B", 12, 20);
	bb->submitted_ns = T0 + S(3);
	c = add_step(l, "C", 11, 25);
	c->submitted_ns = T0 + S(10);
	reads(l, c, 1);
	in = input_of(l);
	assert_int_equal(an_bottlenecks(&in, 0, &b), 0);
	assert_near(b.wall_s, 30);
	assert_near(b.queued_s, 4);
	assert_near(b.running_s, 26);
	/* the path: A then C; each link says how long its job sat in the queue */
	assert_int_equal(b.npath, 2);
	assert_int_equal(b.path[0].step, 1);
	assert_near(b.path[0].wait_s, 5);
	assert_near(b.path[0].queued_s, 3);
	assert_int_equal(b.path[1].step, 3);
	assert_near(b.path[1].wait_s, 1);
	assert_near(b.path[1].queued_s, 1);
	an_bottlenecks_free(&b);
	/* no job: nothing queued, all of it running */
	l->steps[1].submitted_ns = l->steps[2].submitted_ns = l->steps[3].submitted_ns = 0;
	assert_int_equal(an_bottlenecks(&in, 0, &b), 0);
	assert_near(b.queued_s, 0);
	assert_near(b.running_s, 30);
	assert_near(b.path[0].queued_s, 0);
	an_bottlenecks_free(&b);
	free(l);
}

static void queued_only_clips_to_the_window_and_counts_a_running_task_to_its_end(void **state)
{
	/* queued 0-10 (clipped to 2-10), a task running from 6 and not ended (to the window's end),
	 * one queued 20-25 and never started (left out), one submitted after it started (no queue) */
	const struct an_timespan t[] = { { 1, 10, 15 }, { 3, 6, 0 }, { 20, 0, 0 }, { 9, 8, 9 } };
	int64_t q = -1;

	(void)state;
	assert_int_equal(an_queued_only(t, 4, 2, 30, &q), 0);
	assert_int_equal(q, 4); /* 2-6: queued, nothing running; from 6 the second task runs to 30 */
	assert_int_equal(an_queued_only(t, 4, 30, 2, &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(an_queued_only(NULL, 0, 0, 10, &q), 0);
	assert_int_equal(q, 0);
}

/* ---- slower than usual --------------------------------------------------------- */

/*
 * Six earlier runs of pipeline "p" whose task "call" took 10, 11, 9, 10,
 * 12, 10 s: 8 s on CPU, 0.1 s on the run queue, the rest asleep; 1 GiB
 * read. Sorted 9 10 10 10 11 12: median 10; deviations 0 1 1 0 2 0 ->
 * 0 0 0 1 1 2: MAD 0.5; scale max(1.4826 x 0.5, 5% of 10) = 0.7413.
 */
static const double history_s[6] = { 10, 11, 9, 10, 12, 10 };

static struct an_step *add_call(struct lake *l, double start, double d)
{
	struct an_step *t = add_step(l, "call", start, start + d);

	t->cpu_ns = DNS(8);
	t->run_delay_ns = DNS(0.1);
	t->rchar = GiB;
	return t;
}

static struct lake *slow_lake(int history)
{
	struct lake *l = lake_new();

	for (int i = 0; i < history; i++) {
		add_run(l, "p", 100.0 * i, 100.0 * i + 50);
		add_call(l, 100.0 * i, history_s[i]);
		if (i == 2) { /* another pipeline between them: not history */
			add_run(l, "q", 100.0 * i + 1, 100.0 * i + 50);
			add_call(l, 100.0 * i + 1, 100);
		}
	}
	return l;
}

static void a_task_on_a_crowded_cpu_is_slower_with_cause_run_queue(void **state)
{
	struct lake *l = slow_lake(6);
	struct an_input in;
	struct an_slow *s;
	struct an_step *t;
	size_t n;

	(void)state;
	/* 24 s: 8 on CPU, 15 on the run queue, 1 asleep. ratio 2.4, score (24 - 10) / 0.7413 = 18.89 */
	add_run(l, "p", 1000, 1050);
	t = add_call(l, 1000, 24);
	t->run_delay_ns = DNS(15);
	add_run(l, "p", 2000, 2100); /* a later run: not history */
	add_call(l, 2000, 1);
	in = input_of(l);
	assert_int_equal(an_slower(&in, 7, 20, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 7);
	assert_false(s[0].per_input_byte);
	assert_near(s[0].duration_s, 24);
	assert_near(s[0].median_s, 10);
	assert_near(s[0].ratio, 2.4);
	assert_near(s[0].score, 14 / (1.4826 * 0.5));
	assert_int_equal(s[0].history_runs, 6);
	assert_int_equal(s[0].history_tasks, 6);
	/* the run queue grew 0.1 -> 15 s; cpu 8 -> 8, sleep 1.9 (median) -> 1 */
	assert_string_equal(s[0].cause, "run_queue");
	assert_near(s[0].cause_s, 15);
	assert_near(s[0].cause_median_s, 0.1);
	assert_string_equal(s[0].why, "2.4x its median of 10.0 s over 6 runs; run-queue wait grew from 0.1 s to 15.0 s: "
				      "CPU oversubscription");
	free(s);
	/* at most 5 runs of history: the newest five, 11 9 10 12 10 -> median 10, MAD 1 -> score 14/1.4826 */
	assert_int_equal(an_slower(&in, 7, 5, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].history_runs, 5);
	assert_near(s[0].score, 14 / 1.4826);
	free(s);
	free(l);
}

static void a_task_under_the_minimum_ratio_is_not_flagged(void **state)
{
	struct lake *l = slow_lake(6);
	struct an_input in;
	struct an_slow *s;
	size_t n;

	(void)state;
	/* 12.9 s: score 2.9 / 0.7413 = 3.9 and 2.9 s more, but only 1.29x */
	add_run(l, "p", 1000, 1050);
	add_call(l, 1000, 12.9);
	/* 13.1 s in a second task of the run: 1.31x, score 4.2, 3.1 s more: flagged */
	add_call(l, 1000, 13.1);
	in = input_of(l);
	assert_int_equal(an_slower(&in, 7, 20, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 8);
	assert_string_equal(s[0].cause, "idle"); /* the extra 3.1 s went to idle time: 1.9 -> 5.0 s */
	free(s);
	free(l);
}

static void a_constant_history_does_not_flag_noise(void **state)
{
	struct lake *l = lake_new();
	struct an_input in;
	struct an_slow *s;
	size_t n;

	(void)state;
	/* six runs of exactly 10 s: MAD 0, the scale is 5% of the median, 0.5 s */
	for (int i = 0; i < 6; i++) {
		add_run(l, "p", 100.0 * i, 100.0 * i + 50);
		add_call(l, 100.0 * i, 10);
	}
	add_run(l, "p", 1000, 1050);
	add_call(l, 1000, 10.4); /* 1.04x: noise */
	add_call(l, 1000, 13.5); /* 1.35x, score 3.5 / 0.5 = 7 */
	in = input_of(l);
	assert_int_equal(an_slower(&in, 6, 20, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 7);
	assert_near(s[0].score, 7);
	free(s);
	free(l);
}

static void varying_inputs_are_compared_per_byte(void **state)
{
	struct lake *l = lake_new();
	struct an_input in;
	struct an_slow *s;
	struct an_step *t;
	size_t n;

	(void)state;
	/* inputs 1..6 GiB taking 2 s per GiB, all on CPU: the inputs' CV is 1.708 / 3.5 = 0.49 > 0.25 */
	for (int i = 0; i < 6; i++) {
		add_run(l, "p", 100.0 * i, 100.0 * i + 50);
		t = add_step(l, "call", 100.0 * i, 100.0 * i + 2 * (i + 1));
		t->rchar = (uint64_t)(i + 1) * GiB;
		t->cpu_ns = t->proc_ns;
	}
	add_run(l, "p", 1000, 1100);
	/* 10 GiB in 20 s: 2 s per GiB as always, although 20 s is 2.9x the median duration of 7 s */
	t = add_step(l, "call", 1000, 1020);
	t->rchar = 10 * GiB;
	t->cpu_ns = t->proc_ns;
	/* 3 GiB in 30 s, 24 s of it in I/O wait: 10 s per GiB, 5x; scale 5% of 2 s/GiB; score (10-2)/0.1 = 80 */
	t = add_step(l, "call", 1000, 1030);
	t->rchar = 3 * GiB;
	t->cpu_ns = DNS(6);
	t->iowait_ns = DNS(24);
	in = input_of(l);
	assert_int_equal(an_slower(&in, 6, 20, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 7);
	assert_true(s[0].per_input_byte);
	assert_near(s[0].ratio, 5);
	assert_near(s[0].score, 80);
	assert_near(s[0].median_s, 7); /* (6 + 8) / 2 */
	assert_string_equal(s[0].cause, "io_wait");
	assert_near(s[0].cause_s, 24);
	assert_near(s[0].cause_median_s, 0);
	free(s);
	free(l);
}

static void a_larger_input_is_named_as_the_cause(void **state)
{
	struct lake *l = slow_lake(6);
	struct an_input in;
	struct an_slow *s;
	struct an_step *t;
	size_t n;

	(void)state;
	/* the history read 1 GiB each time (CV 0: compared by duration); this task read 2 GiB in 24 s */
	add_run(l, "p", 1000, 1050);
	t = add_call(l, 1000, 24);
	t->rchar = 2 * GiB;
	t->cpu_ns = DNS(20);
	in = input_of(l);
	assert_int_equal(an_slower(&in, 7, 20, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].cause, "input_grew");
	assert_int_equal(s[0].input_bytes, 2 * GiB);
	assert_near(s[0].input_median_bytes, (double)GiB);
	assert_near(s[0].cause_s, 20); /* the part that grew most: cpu, 8 -> 20 s */
	assert_string_equal(s[0].why, "2.4x its median of 10.0 s over 6 runs; its input grew 2.0x (2.0 GiB; median 1.0 GiB)");
	free(s);
	free(l);
}

static void fewer_than_five_earlier_runs_flag_nothing(void **state)
{
	struct lake *l = slow_lake(4);
	struct an_input in;
	struct an_slow *s;
	size_t n;

	(void)state;
	/* four runs of "p" (the "q" run between them does not count) */
	add_run(l, "p", 1000, 1050);
	add_call(l, 1000, 100);
	in = input_of(l);
	assert_int_equal(an_slower(&in, 5, 20, &s, &n), 0);
	assert_int_equal(n, 0);
	assert_null(s);
	assert_int_equal(an_slower(&in, 6, 20, &s, &n), -EINVAL);
	free(l);
}

static void each_step_of_a_run_is_matched_with_its_own_history(void **state)
{
	static const char *const names[5] = { "z", "y", "x", "w", "v" }; /* not in sorted order */
	struct lake *l = lake_new();
	struct an_input in;
	struct an_slow *s;
	size_t n;

	(void)state;
	/* five runs, each step 10 + its place s; then a run where v (30 s) and z (40 s) are slow */
	for (int i = 0; i <= 5; i++) {
		add_run(l, "p", 100.0 * i, 100.0 * i + 90);
		for (int k = 0; k < 5; k++) {
			double d = i == 5 && k == 4 ? 30 : i == 5 && k == 0 ? 40 : 10 + k;

			add_step(l, names[k], 100.0 * i + k, 100.0 * i + k + d);
		}
	}
	in = input_of(l);
	assert_int_equal(an_slower(&in, 5, 20, &s, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].step, 25); /* z: 40 s against 10 s */
	assert_near(s[0].median_s, 10);
	assert_int_equal(s[1].step, 29); /* v: 30 s against 14 s */
	assert_near(s[1].median_s, 14);
	assert_int_equal(s[1].history_runs, 5);
	assert_string_equal(s[1].cause, "idle");
	free(s);
	free(l);
}

/* ---- at scale ----------------------------------------------------------------------- */

/*
 * 1,000 runs of 100 tasks each, each task reading its predecessor's file:
 * every analysis runs over all of it (the benchmark's shape; its time is
 * measured outside the tests), and the chain is the critical path.
 */
static void a_thousand_runs_of_a_hundred_steps_are_analysed(void **state)
{
	enum { RUNS = 1000, STEPS = 100 };
	static const char *const names[STEPS] = { "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9" };
	struct an_run *runs = calloc(RUNS, sizeof(*runs));
	struct an_step *steps = calloc(RUNS * STEPS, sizeof(*steps));
	uint32_t *files = calloc(RUNS * STEPS * 2, sizeof(*files));
	struct an_input in = { runs, RUNS, steps, RUNS * STEPS, files, RUNS * STEPS * 2, NULL, 0 };
	struct an_profile *p;
	struct an_slow *slow;
	size_t n, flagged = 0;

	(void)state;
	assert_true(runs && steps && files);
	for (uint32_t r = 0; r < RUNS; r++) {
		runs[r] = (struct an_run){ .pipeline = "p", .start_ns = T0 + S(1000.0 * r),
					   .end_ns = T0 + S(1000.0 * r + 200), .step_first = r * STEPS, .step_n = STEPS };
		for (uint32_t i = 0; i < STEPS; i++) {
			struct an_step *t = &steps[r * STEPS + i];
			uint32_t k = r * STEPS + i;
			double d = 1 + (k % 7) * 0.1;

			*t = (struct an_step){ .run = r, .name = names[i % 10], .start_ns = T0 + S(1000.0 * r + i),
					       .end_ns = T0 + S(1000.0 * r + i + d), .cpu_ns = DNS(d), .proc_ns = DNS(d),
					       .in_first = 2 * k, .in_n = i ? 1 : 0, .out_first = 2 * k + 1, .out_n = 1 };
			files[2 * k] = k - 1;
			files[2 * k + 1] = k;
		}
	}
	steps[(RUNS - 1) * STEPS + 3].end_ns = steps[(RUNS - 1) * STEPS + 3].start_ns + S(10); /* s3 of the last run */
	assert_int_equal(an_profiles(&in, NULL, 50, &p, &n), 0);
	assert_int_equal(n, 10);
	free(p);
	for (uint32_t r = 0; r < RUNS; r++) {
		struct an_bottlenecks b;
		struct an_slow *s;

		assert_int_equal(an_bottlenecks(&in, r, &b), 0);
		assert_int_equal(b.npath, STEPS);
		an_bottlenecks_free(&b);
		assert_int_equal(an_slower(&in, r, 20, &s, &n), 0);
		flagged += n;
		free(s);
	}
	/* durations within 1.0-1.6 s are never 1 s slower: only the last run's 10 s s3, against the s3
	 * tasks (10 a run, names out of order) of its 20 previous runs */
	assert_int_equal(flagged, 1);
	assert_int_equal(an_slower(&in, RUNS - 1, 20, &slow, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(slow[0].step, (RUNS - 1) * STEPS + 3);
	assert_int_equal(slow[0].history_runs, 20);
	assert_int_equal(slow[0].history_tasks, 200);
	free(slow);
	free(runs);
	free(steps);
	free(files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(breakdown_splits_a_single_process_task_by_its_states),
		cmocka_unit_test(breakdown_scales_threads_to_the_wall_time),
		cmocka_unit_test(a_step_on_cpu_is_compute),
		cmocka_unit_test(a_step_in_io_wait_is_io),
		cmocka_unit_test(breakdown_idle_leaves_out_the_wait_for_children),
		cmocka_unit_test(breakdown_carves_reclaim_out_of_cpu_and_blocked),
		cmocka_unit_test(a_step_in_network_calls_is_network_and_a_sleeper_is_idle),
		cmocka_unit_test(no_share_above_forty_percent_is_mixed),
		cmocka_unit_test(an_oom_kill_or_a_peak_near_the_limit_is_memory),
		cmocka_unit_test(many_gib_on_few_cores_is_memory),
		cmocka_unit_test(a_profile_has_nearest_rank_percentiles_and_advice),
		cmocka_unit_test(a_profile_keeps_only_the_last_runs_and_one_pipeline),
		cmocka_unit_test(an_oom_kill_flows_into_the_profile_advice),
		cmocka_unit_test(the_critical_path_of_a_diamond_takes_the_longer_branch),
		cmocka_unit_test(a_chain_with_gaps_shows_each_wait),
		cmocka_unit_test(the_wall_time_splits_into_queued_and_running),
		cmocka_unit_test(queued_only_clips_to_the_window_and_counts_a_running_task_to_its_end),
		cmocka_unit_test(a_task_on_a_crowded_cpu_is_slower_with_cause_run_queue),
		cmocka_unit_test(a_task_under_the_minimum_ratio_is_not_flagged),
		cmocka_unit_test(a_constant_history_does_not_flag_noise),
		cmocka_unit_test(varying_inputs_are_compared_per_byte),
		cmocka_unit_test(a_larger_input_is_named_as_the_cause),
		cmocka_unit_test(fewer_than_five_earlier_runs_flag_nothing),
		cmocka_unit_test(each_step_of_a_run_is_matched_with_its_own_history),
		cmocka_unit_test(a_thousand_runs_of_a_hundred_steps_are_analysed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
