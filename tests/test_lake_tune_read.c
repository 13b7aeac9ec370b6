/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the lake for the analysis (lake/read_tune.c through
 * view/tune_input.c): a lake made by hand (store_open for the schema, then
 * rows INSERTed with sqlite3) and the an_input built from it checked field
 * by field against values computed by hand in the comments: each task's
 * summed figures from its processes (exit records; a running process's
 * newest sample), a report-only run's from its report's processes and
 * from the step's own columns; cores p50/p95 from samples; the run's
 * timeline per 1-s bucket (engine included, memory carried between
 * samples); files as ids (the same path on the same host one id, on
 * another host another) with in/out lists; the order of runs and tasks;
 * Nextflow's " (tag)" removed; the pipeline filter; OOM limits from every
 * kind of oom_kill signal, hostile details ignored; host strings kept as
 * data; sums at the limits of an integer saturating; and the same input
 * whether samples and files are read by one scan or by index.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store.h"
#include "tune_input.h"

#define NS 1000000000LL
#define MB 1000000ULL
#define T0 1700000000000000000LL /* the runs' real-time origin: a whole second */
#define B(s) ((T0 + (s) * NS) / NS) /* the bucket of T0 + s seconds */

/* SQL text for T0 + x seconds and for x seconds. */
#define T "1700000000000000000"
#define SEC "*1000000000"
#define AT(x) "(" T "+" #x SEC ")"
#define SECS(x) "(" #x SEC ")"
#define H1 "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'"
#define H2 "'cccccccccccccccccccccccccccccccc'"
#define BOOT1 "'b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1'"
#define BOOT2 "'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2'"

/*
 * Run 1 (nf-core/rnaseq, live, on H1): processes' real time = their
 * monotonic time + T0 + 5 s. Steps in idx order MERGE, ALIGN (3), ALIGN
 * (7), QC; by start ALIGN (3) (T0+10), ALIGN (7) (T0+12), MERGE (T0+20),
 * QC (T0+30, running). P0 is the engine (no step).
 * Run 2 (nf-core/rnaseq, a tracer run report only, older): two steps, one
 * with its report's processes, one with nothing but its own columns.
 * Run 3 (another pipeline, on H2, newest).
 */
static const char lake_sql[] =
	"BEGIN;"
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, pipeline_run_id, run_name, "
	"engine, state, start_ns, end_ns, cpu_ns, uid, host_cloud, host_instance_type, host_instance_id, host_region, "
	"host_cpus, host_memory_bytes, host_price_per_hour) VALUES "
	"(1, " H1 ", " BOOT1 ", 1, 'x', 'B1-100-1000', 'nf-core/rnaseq', 'happy_turing', 'happy_turing', 'nextflow', "
	"'succeeded', " AT(5) ", " AT(40) ", 99, 1000, 'aws', 'm6i.xlarge', 'i-0123', 'us-east-1', 4, 17179869184, 0.192),"
	"(2, " H1 ", " BOOT1 ", 2, 'x', NULL, 'nf-core/rnaseq', NULL, 'sad %s%n euler', 'nextflow', 'failed', "
	AT(-1000) ", " AT(-990) ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
	"(3, " H2 ", " BOOT2 ", 1, 'x', 'B2-1-1', 'snakemake:/data/wf', NULL, NULL, 'snakemake', 'running', "
	AT(100) ", NULL, 5, 0, NULL, NULL, NULL, NULL, NULL, NULL, -1.0);"
	/* run 1's steps */
	"INSERT INTO steps (run_id, idx, step_id, name, engine, tools, state, start_ns, end_ns, failed, processes, "
	"oom_killed, cpu_ns, peak_rss_bytes, rchar, cpu_limit_millicores, memory_limit_bytes) VALUES "
	"(1, 0, 'nf-ef/012345', 'MERGE (a (b))', 'nextflow', '[]', 'failed', " AT(20) ", " AT(25) ", 1, 1, 1, NULL, "
	"NULL, NULL, NULL, NULL),"
	"(1, 1, 'nf-ab/cdef12', 'ALIGN (3)', 'nextflow', '[\"bwa\",\"samtools\"]', 'succeeded', " AT(10) ", " AT(20)
	", 0, 2, 0, 1, 450000000, NULL, 2500, 1073741824),"
	"(1, 2, 'nf-cd/ef3456', 'ALIGN (7)', 'nextflow', NULL, 'succeeded', " AT(12) ", " AT(18) ", 0, 1, 0, NULL, "
	"NULL, 555, NULL, NULL),"
	"(1, 3, 'nf-11/223344', 'QC (s1)', 'nextflow', NULL, 'running', " AT(30) ", NULL, NULL, 1, 0, NULL, NULL, "
	"NULL, NULL, NULL);"
	/* run 1's processes: P0 the engine, P1 P2 ALIGN (3), P3 ALIGN (7) (no I/O accounting), P4 MERGE, P5 QC */
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, exit_ts_ns, run_id, step, "
	"runtime_ns, run_delay_ns, iowait_ns, blocked_ns, net_wait_ns, rchar, wchar, read_bytes, write_bytes, "
	"net_tx_bytes, net_rx_bytes, exit_flags, state_flags, oom_killed, peak_rss_bytes) VALUES "
	"(" H1 ", " BOOT1 ", 100, " SECS(1) ", " AT(6) ", " AT(40) ", " SECS(35) ", 1, NULL, " SECS(1)
	", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, NULL),"
	"(" H1 ", " BOOT1 ", 101, " SECS(5) ", " AT(10) ", " AT(20) ", " SECS(15) ", 1, 'nf-ab/cdef12', " SECS(8)
	", " SECS(1) ", 500000000, 250000000, 125000000, 1000, 2000, 300, 400, 10, 20, 0, 1, 0, 400000000),"
	"(" H1 ", " BOOT1 ", 102, " SECS(6) ", " AT(11) ", " AT(19) ", " SECS(14) ", 1, 'nf-ab/cdef12', " SECS(4)
	", " SECS(2) ", " SECS(1) ", 500000000, 0, 10, 20, 3, 4, 1, 2, 0, 1, 0, 60000000),"
	"(" H1 ", " BOOT1 ", 103, " SECS(7) ", " AT(12) ", " AT(18) ", " SECS(13) ", 1, 'nf-cd/ef3456', " SECS(2)
	", 0, " SECS(3) ", 0, 0, 9, 9, 9, 9, NULL, NULL, 1, 0, 0, NULL),"
	"(" H1 ", " BOOT1 ", 104, " SECS(15) ", " AT(20) ", " AT(25) ", " SECS(20) ", 1, 'nf-ef/012345', " SECS(1)
	", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, NULL);"
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, run_id, step) VALUES "
	"(" H1 ", " BOOT1 ", 105, " SECS(25) ", " AT(30) ", 1, 'nf-11/223344');"
	/* samples (monotonic ts): P0 at 6, 8 s; P1 and P2 at 6..9 s; P5 at 26, 27 s */
	"INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, rss_bytes, hiwater_rss_bytes, "
	"iowait_ns, run_delay_ns, blocked_ns, net_wait_ns, rchar) VALUES "
	"(" H1 ", 1, " BOOT1 ", 100, " SECS(1) ", " SECS(6) ", 0, 10000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 2, " BOOT1 ", 100, " SECS(1) ", " SECS(8) ", 200000000, 10000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 3, " BOOT1 ", 101, " SECS(5) ", " SECS(6) ", 0, 100000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 4, " BOOT1 ", 101, " SECS(5) ", " SECS(7) ", " SECS(1) ", 200000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 5, " BOOT1 ", 101, " SECS(5) ", " SECS(8) ", " SECS(2) ", 300000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 6, " BOOT1 ", 101, " SECS(5) ", " SECS(9) ", " SECS(3) ", 300000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 7, " BOOT1 ", 102, " SECS(6) ", " SECS(6) ", 0, 50000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 8, " BOOT1 ", 102, " SECS(6) ", " SECS(7) ", 500000000, 50000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 9, " BOOT1 ", 102, " SECS(6) ", " SECS(8) ", 1500000000, 50000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 10, " BOOT1 ", 102, " SECS(6) ", " SECS(9) ", " SECS(2) ", 50000000, 0, 0, 0, 0, 0, 0),"
	"(" H1 ", 11, " BOOT1 ", 105, " SECS(25) ", " SECS(26) ", 500000000, 20000000, 21000000, 100000000, 0, 0, 0, "
	"7),"
	"(" H1 ", 12, " BOOT1 ", 105, " SECS(25) ", " SECS(27) ", 1500000000, 30000000, 31000000, 300000000, "
	"100000000, 0, 0, 77);"
	/* files: the engine's samplesheet belongs to no task */
	"INSERT INTO files (host_id, seq, boot_id, tgid, start_ns, ts_ns, path, mode, truncated) VALUES "
	"(" H1 ", 1, " BOOT1 ", 101, " SECS(5) ", 0, '/data/ref.fa', 'r', 0),"
	"(" H1 ", 2, " BOOT1 ", 101, " SECS(5) ", 0, '/work/ab/cdef12/out.bam', 'w', 0),"
	"(" H1 ", 3, " BOOT1 ", 102, " SECS(6) ", 0, '/data/ref.fa', 'r', 0),"
	"(" H1 ", 4, " BOOT1 ", 102, " SECS(6) ", 0, '/work/ab/cdef12/out.bam', 'rw', 0),"
	"(" H1 ", 5, " BOOT1 ", 103, " SECS(7) ", 0, '/data/ref.fa', 'r', 0),"
	"(" H1 ", 6, " BOOT1 ", 104, " SECS(15) ", 0, '/work/ab/cdef12/out.bam', 'r', 0),"
	"(" H1 ", 7, " BOOT1 ", 104, " SECS(15) ", 0, '/work/ef/012345/merged.bam', 'w', 0),"
	"(" H1 ", 8, " BOOT1 ", 100, " SECS(1) ", 0, '/data/samplesheet.csv', 'r', 0);"
	/* OOM kills of MERGE's P4: the kernel's record (1 GiB), the live record's (2 GiB), two hostile ones */
	"INSERT INTO signals (host_id, boot_id, seq, run_id, source, kind, pid, start_ns, step, detail) VALUES "
	"(" H1 ", " BOOT1 ", 1000, NULL, 'record', 'oom_kill', 104, " SECS(15) ", NULL, "
	"json_object('memcg_limit_bytes', 1073741824, 'uid', 0)),"
	"(" H1 ", " BOOT1 ", 1001, 1, 'live', 'oom_kill', 104, " SECS(15) ", 'nf-ef/012345', "
	"'{\"kind\":\"oom_kill\",\"pid\":104,\"memcg_limit_bytes\":2147483648}'),"
	"(" H1 ", " BOOT1 ", 1002, 1, 'live', 'oom_kill', 104, " SECS(15) ", 'nf-ef/012345', 'not json {'),"
	"(" H1 ", " BOOT1 ", 1003, 1, 'live', 'oom_kill', 104, " SECS(15) ", 'nf-ef/012345', "
	"'{\"memcg_limit_bytes\":\"99999999999999\"}'),"
	"(" H1 ", " BOOT1 ", 1004, 1, 'live', 'killed', 104, " SECS(15) ", 'nf-ef/012345', "
	"'{\"memcg_limit_bytes\":99999999999999}');"
	/* run 2: a report's steps and processes only */
	"INSERT INTO steps (run_id, idx, step_id, name, engine, tools, state, start_ns, end_ns, failed, processes, "
	"cpu_ns, peak_rss_bytes, rchar) VALUES "
	"(2, 0, 'nf-aa/bbbbbb', 'ALIGN (1)', NULL, '[\"bwa\"]', 'succeeded', " AT(-999) ", " AT(-995) ", 0, 2, "
	SECS(5) ", 1000000000, 4242),"
	"(2, 1, 'nf-bb/cccccc', 'SORT', NULL, NULL, 'failed', " AT(-995) ", " AT(-990) ", 1, 3, " SECS(7) ", NULL, "
	"NULL);"
	"INSERT INTO run_processes (run_id, idx, pid, start_ns, end_ns, step, cpu_user_ns, cpu_sys_ns, rchar) VALUES "
	"(2, 0, 200, " AT(-999) ", " AT(-995) ", 'nf-aa/bbbbbb', " SECS(1) ", 500000000, 100),"
	"(2, 1, 201, " AT(-998) ", " AT(-996) ", 'nf-aa/bbbbbb', " SECS(2) ", 0, 200);"
	/* run 3: another pipeline on another host, reading a path of the same name */
	"INSERT INTO steps (run_id, idx, step_id, name, engine, state, start_ns, end_ns, processes) VALUES "
	"(3, 0, 'smk-300', 'bwa_map (x)', 'snakemake', 'succeeded', " AT(101) ", " AT(102) ", 1);"
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, exit_ts_ns, run_id, step, "
	"runtime_ns) VALUES (" H2 ", " BOOT2 ", 300, " SECS(50) ", " AT(101) ", " AT(102) ", " SECS(51)
	", 3, 'smk-300', 500000000);"
	"INSERT INTO files (host_id, seq, boot_id, tgid, start_ns, ts_ns, path, mode, truncated) VALUES "
	"(" H2 ", 1, " BOOT2 ", 300, " SECS(50) ", 0, '/data/ref.fa', 'r', 0);"
	"COMMIT;";

struct fixture {
	char dir[64], db[96];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct store *s;
	sqlite3 *db = NULL;
	char err[256] = "mkdtemp failed";
	char *msg = NULL;

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_lake_tune.XXXXXX");
	if (!mkdtemp(fx->dir) ||
	    (snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir), store_open(&s, fx->db, false, err, sizeof(err)))) {
		fprintf(stderr, "the lake: %s\n", err);
		free(fx);
		return -1;
	}
	store_close(s);
	if (sqlite3_open(fx->db, &db) != SQLITE_OK || sqlite3_exec(db, lake_sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "the lake: %s\n", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		free(fx);
		return -1;
	}
	sqlite3_close(db);
	/* Read as tracer tune will: read-only. */
	if (store_open(&fx->s, fx->db, true, err, sizeof(err))) {
		fprintf(stderr, "store_open: %s\n", err);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char p[128];

	store_close(fx->s);
	unlink(fx->db);
	snprintf(p, sizeof(p), "%s-wal", fx->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", fx->db);
	unlink(p);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void load_newest(void **state, const char *pipeline, uint32_t newest, struct tune_input *in)
{
	struct fixture *fx = *state;
	char err[256] = "";
	int rc = tune_input_load(fx->s, pipeline, newest, in, err, sizeof(err));

	if (rc)
		fail_msg("tune_input_load: %d %s", rc, err);
}

static void load(void **state, const char *pipeline, struct tune_input *in)
{
	load_newest(state, pipeline, 0, in);
}

#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

/* The task of run r named by its step id. */
static const struct an_step *task(const struct tune_input *in, uint32_t r, const char *step_id)
{
	const struct an_run *run = &in->in.runs[r];

	for (uint32_t i = run->step_first; i < run->step_first + run->step_n; i++)
		if (!strcmp(in->in.steps[i].step_id, step_id))
			return &in->in.steps[i];
	fail_msg("no task %s in run %u", step_id, r);
	return NULL;
}

static void runs_are_by_start_with_their_hosts_and_labels(void **state)
{
	struct tune_input in;
	const struct an_run *r;

	load(state, NULL, &in);
	assert_int_equal(in.in.nruns, 3);
	/* by start: run 2 (T0-1000), run 1 (T0+5), run 3 (T0+100) */
	assert_int_equal(in.in.runs[0].lake_id, 2);
	assert_int_equal(in.in.runs[1].lake_id, 1);
	assert_int_equal(in.in.runs[2].lake_id, 3);

	r = &in.in.runs[1];
	assert_string_equal(r->key, "B1-100-1000");
	assert_string_equal(r->pipeline, "nf-core/rnaseq");
	assert_string_equal(r->label, "happy_turing");
	assert_string_equal(r->state, "succeeded");
	assert_string_equal(r->user, "uid 1000");
	assert_true(r->start_ns == T0 + 5 * NS && r->end_ns == T0 + 40 * NS);
	assert_int_equal(r->cpu_ns, 99);
	assert_string_equal(r->host.host_id, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_string_equal(r->host.cloud, "aws");
	assert_string_equal(r->host.instance_type, "m6i.xlarge");
	assert_string_equal(r->host.region, "us-east-1");
	assert_int_equal(r->host.cpus, 4);
	assert_int_equal(r->host.memory_bytes, 17179869184ULL);
	assert_near(r->host.price_per_hour, 0.192);

	/* the report-only run: its name as the label, a hostile one kept as data; nothing known of the host */
	r = &in.in.runs[0];
	assert_null(r->key);
	assert_string_equal(r->label, "sad %s%n euler");
	assert_string_equal(r->state, "failed");
	assert_string_equal(r->user, "unknown");
	assert_null(r->host.cloud);
	assert_null(r->host.instance_type);
	assert_int_equal(r->host.cpus, 0);
	assert_true(r->host.price_per_hour < 0);
	assert_int_equal(r->cpu_ns, 3500000000LL); /* no runs.cpu_ns: its report's processes, 1.5 s + 2 s */
	assert_int_equal(r->point_n, 0);            /* no samples: no timeline */

	/* no run id, no name: its number; running: no end; a negative price is no price; uid 0 is root's */
	r = &in.in.runs[2];
	assert_string_equal(r->label, "#3");
	assert_string_equal(r->pipeline, "snakemake:/data/wf");
	assert_int_equal(r->end_ns, 0);
	assert_true(r->host.price_per_hour < 0);
	assert_string_equal(r->user, "uid 0");
	tune_input_free(&in);
}

static void tasks_sum_their_processes_and_are_by_start(void **state)
{
	struct tune_input in;
	const struct an_run *r;
	const struct an_step *t;

	load(state, NULL, &in);
	assert_int_equal(in.in.nsteps, 7);
	r = &in.in.runs[1];
	assert_int_equal(r->step_n, 4);
	/* by start, not by idx (MERGE is idx 0) */
	assert_string_equal(in.in.steps[r->step_first + 0].step_id, "nf-ab/cdef12");
	assert_string_equal(in.in.steps[r->step_first + 1].step_id, "nf-cd/ef3456");
	assert_string_equal(in.in.steps[r->step_first + 2].step_id, "nf-ef/012345");
	assert_string_equal(in.in.steps[r->step_first + 3].step_id, "nf-11/223344");
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++)
		assert_int_equal(in.in.steps[i].run, 1);

	/* ALIGN (3): P1 + P2 from their exit records */
	t = task(&in, 1, "nf-ab/cdef12");
	assert_string_equal(t->name, "ALIGN");
	assert_string_equal(t->tools, "bwa, samtools");
	assert_true(t->start_ns == T0 + 10 * NS && t->end_ns == T0 + 20 * NS);
	assert_false(t->failed);
	assert_false(t->running);
	assert_int_equal(t->processes, 2);
	assert_int_equal(t->cpu_ns, 12 * NS);            /* 8 + 4 s */
	assert_int_equal(t->proc_ns, 18 * NS);           /* (15 - 5) + (14 - 6) s */
	assert_int_equal(t->run_delay_ns, 3 * NS);       /* 1 + 2 s */
	assert_int_equal(t->iowait_ns, 1500000000LL);    /* 0.5 + 1 s */
	assert_int_equal(t->blocked_ns, 750000000LL);    /* 0.25 + 0.5 s */
	assert_int_equal(t->net_wait_ns, 125000000LL);   /* 0.125 + 0 s */
	assert_int_equal(t->rchar, 1010);
	assert_int_equal(t->wchar, 2020);
	assert_int_equal(t->read_bytes, 303);
	assert_int_equal(t->write_bytes, 404);
	assert_int_equal(t->net_tx_bytes, 11);
	assert_int_equal(t->net_rx_bytes, 22);
	assert_int_equal(t->peak_mem_bytes, 450000000);  /* the step's concurrent peak, not a process's */
	assert_int_equal(t->oom_kills, 0);
	assert_int_equal(t->oom_limit_bytes, 0);
	assert_true(t->cpu_limit == 2.5);                /* the allocation it ran under (steps) */
	assert_int_equal(t->mem_limit_bytes, 1073741824);

	/* ALIGN (7): no I/O accounting in its exit record: the step's own rchar */
	t = task(&in, 1, "nf-cd/ef3456");
	assert_string_equal(t->name, "ALIGN");
	assert_ptr_equal(t->name, task(&in, 1, "nf-ab/cdef12")->name); /* one interned key */
	assert_string_equal(t->tools, "");
	assert_int_equal(t->cpu_ns, 2 * NS);
	assert_int_equal(t->proc_ns, 6 * NS);
	assert_int_equal(t->iowait_ns, 3 * NS);
	assert_int_equal(t->rchar, 555);
	assert_int_equal(t->read_bytes, 0);
	assert_true(t->cpu_limit == 0);                  /* none recorded */
	assert_int_equal(t->mem_limit_bytes, 0);

	/* MERGE (a (b)): failed, OOM-killed; the largest limit of its well-formed oom_kill signals */
	t = task(&in, 1, "nf-ef/012345");
	assert_string_equal(t->name, "MERGE");
	assert_true(t->failed);
	assert_int_equal(t->oom_kills, 1);
	assert_int_equal(t->oom_limit_bytes, 2147483648ULL);
	assert_int_equal(t->mem_limit_bytes, 2147483648ULL);
	assert_int_equal(t->proc_ns, 5 * NS);

	/* QC (s1): running, no exit record: its newest sample's figures */
	t = task(&in, 1, "nf-11/223344");
	assert_string_equal(t->name, "QC");
	assert_true(t->running);
	assert_int_equal(t->end_ns, 0);
	assert_int_equal(t->processes, 1);
	assert_int_equal(t->cpu_ns, 1500000000LL);
	assert_int_equal(t->proc_ns, 2 * NS);            /* newest sample 27 s - start 25 s */
	assert_int_equal(t->iowait_ns, 300000000LL);
	assert_int_equal(t->run_delay_ns, 100000000LL);
	assert_int_equal(t->rchar, 77);
	assert_int_equal(t->peak_mem_bytes, 31000000);   /* no step peak: the sample's high-water mark */

	/* another engine's name keeps its parentheses */
	t = task(&in, 2, "smk-300");
	assert_string_equal(t->name, "bwa_map (x)");
	assert_int_equal(t->cpu_ns, 500000000LL);
	tune_input_free(&in);
}

static void a_report_only_run_falls_back_to_its_report_and_steps(void **state)
{
	struct tune_input in;
	const struct an_step *t;

	load(state, NULL, &in);
	assert_int_equal(in.in.runs[0].step_n, 2);
	/* its report's processes: cpu 1.5 + 2 s, lifetimes 4 + 2 s, no waits; the step's peak */
	t = task(&in, 0, "nf-aa/bbbbbb");
	assert_ptr_equal(t, &in.in.steps[in.in.runs[0].step_first]);
	assert_string_equal(t->name, "ALIGN");      /* no step engine: the run's is nextflow */
	assert_string_equal(t->tools, "bwa");
	assert_int_equal(t->processes, 2);
	assert_int_equal(t->cpu_ns, 3500000000LL);
	assert_int_equal(t->proc_ns, 6 * NS);
	assert_int_equal(t->run_delay_ns + t->iowait_ns + t->blocked_ns + t->net_wait_ns, 0);
	assert_int_equal(t->rchar, 300);
	assert_int_equal(t->peak_mem_bytes, 1000000000);
	assert_false(t->cores_known);
	assert_int_equal(t->in_n + t->out_n, 0);
	/* nothing but the step's own columns */
	t = task(&in, 0, "nf-bb/cccccc");
	assert_string_equal(t->name, "SORT");
	assert_true(t->failed);
	assert_int_equal(t->processes, 3);
	assert_int_equal(t->cpu_ns, 7 * NS);
	assert_int_equal(t->proc_ns, 0);
	tune_input_free(&in);
}

/* What store_tune_tasks handed over: each task's step id and source. */
struct seen_tasks {
	int n;
	enum store_task_source src[8];
	char id[8][16];
};

static int note_task(void *ctx, const struct store_tune_task *t)
{
	struct seen_tasks *seen = ctx;

	if (seen->n < 8) {
		seen->src[seen->n] = t->source;
		snprintf(seen->id[seen->n], sizeof(seen->id[0]), "%s", t->step_id ? t->step_id : "");
		seen->n++;
	}
	return 0;
}

static void the_store_says_where_a_tasks_figures_came_from(void **state)
{
	struct fixture *fx = *state;
	struct seen_tasks seen = { 0 };

	assert_int_equal(store_tune_tasks(fx->s, "nf-core/rnaseq", note_task, &seen), 0);
	/* by run number then idx: run 1's four, then run 2's two */
	assert_int_equal(seen.n, 6);
	assert_string_equal(seen.id[0], "nf-ef/012345");
	assert_int_equal(seen.src[0], STORE_TASK_PROCESSES);
	assert_int_equal(seen.src[3], STORE_TASK_PROCESSES); /* running: its newest sample */
	assert_string_equal(seen.id[4], "nf-aa/bbbbbb");
	assert_int_equal(seen.src[4], STORE_TASK_REPORT);
	assert_int_equal(seen.src[5], STORE_TASK_STEP);
}

static void cores_are_quantiles_of_the_summed_buckets(void **state)
{
	struct tune_input in;
	const struct an_step *t;

	load(state, NULL, &in);
	/*
	 * ALIGN (3), buckets T0+11..13: P1 1.0 1.0 1.0, P2 0.5 1.0 0.5 -> 1.5 2.0 1.5; sorted 1.5 1.5 2.0:
	 * p50 rank ceil(1.5) = 2 -> 1.5; p95 rank ceil(2.85) = 3 -> 2.0. Six intervals.
	 */
	t = task(&in, 1, "nf-ab/cdef12");
	assert_true(t->cores_known);
	assert_near(t->cores_p50, 1.5);
	assert_near(t->cores_p95, 2.0);
	/* ALIGN (7): no samples; QC: one interval only */
	assert_false(task(&in, 1, "nf-cd/ef3456")->cores_known);
	assert_false(task(&in, 1, "nf-11/223344")->cores_known);
	assert_near(task(&in, 1, "nf-11/223344")->cores_p95, 0);
	assert_int_equal(in.counts.samples, 12);
	tune_input_free(&in);
}

static void the_timeline_sums_every_process_per_second(void **state)
{
	struct tune_input in;
	const struct an_run *r;
	const struct an_point *p;
	/*
	 * Buckets (by second after T0; each point at the bucket's end):
	 *   11: P0 0.1 + P1 1.0 + P2 0.5 = 1.6 cores; 10 + 100 + 50 MB
	 *   12: 0.1 + 1.0 + 1.0 = 2.1;                10 (carried) + 200 + 50
	 *   13: 1.0 + 0.5 = 1.5;                      10 + 300 + 50
	 *   14: no interval reaches into it: 0;        300 + 50 (P0's last sample was at 13)
	 *   31: P5 1.0;                                20
	 *   32: 0;                                     30
	 */
	const struct {
		int s;
		double cores;
		uint64_t mem;
	} want[] = {
		{ 11, 1.6, 160 * MB }, { 12, 2.1, 260 * MB }, { 13, 1.5, 360 * MB },
		{ 14, 0.0, 350 * MB }, { 31, 1.0, 20 * MB },  { 32, 0.0, 30 * MB },
	};

	load(state, NULL, &in);
	r = &in.in.runs[1];
	assert_int_equal(r->point_n, 6);
	for (size_t i = 0; i < 6; i++) {
		p = &in.in.timeline[r->point_first + i];
		assert_true(p->t_ns == (B(want[i].s) + 1) * NS);
		assert_near(p->cores, want[i].cores);
		assert_int_equal(p->mem_bytes, want[i].mem);
	}
	assert_int_equal(in.in.runs[2].point_n, 0); /* run 3: no samples */
	tune_input_free(&in);
}

/*
 * On a 2-CPU host with 300 MB, the same samples: second 12's 2.1 cores
 * (samples smeared across its edges) are held to 2, the memory of 13 and
 * 14 to 300 MB, and counted; a task's cores never say more than the host.
 */
static void the_timeline_and_cores_are_held_to_the_host(void **state)
{
	struct fixture *fx = *state;
	struct tune_input in;
	const struct an_run *r;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE runs SET host_cpus = 2, host_memory_bytes = 300000000 WHERE run_id = 1",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	load(state, NULL, &in);
	r = &in.in.runs[1];
	assert_int_equal(r->point_n, 6);
	assert_near(in.in.timeline[r->point_first + 0].cores, 1.6);
	assert_near(in.in.timeline[r->point_first + 1].cores, 2.0);
	assert_int_equal(in.in.timeline[r->point_first + 2].mem_bytes, 300 * MB);
	assert_int_equal(in.in.timeline[r->point_first + 3].mem_bytes, 300 * MB);
	assert_int_equal(in.in.timeline[r->point_first + 4].mem_bytes, 20 * MB);
	for (uint32_t i = r->step_first; i < r->step_first + r->step_n; i++)
		assert_true(in.in.steps[i].cores_p95 <= 2.0);
	assert_true(in.counts.buckets_clamped >= 3);
	tune_input_free(&in);
}

static bool has(const struct tune_input *in, uint32_t first, uint32_t n, uint32_t id)
{
	for (uint32_t i = first; i < first + n; i++)
		if (in->in.files[i] == id)
			return true;
	return false;
}

static uint32_t id_of(const struct tune_input *in, const char *host, const char *path)
{
	for (uint32_t i = 0; i < in->nfile_ids; i++)
		if (!strcmp(in->file_paths[i], path) && !strcmp(in->file_hosts[i], host))
			return i;
	fail_msg("no file %s on %s", path, host);
	return 0;
}

static void files_are_ids_per_host_with_in_and_out_lists(void **state)
{
	struct tune_input in;
	const struct an_step *t;
	uint32_t ref, out, merged, ref2;

	load(state, NULL, &in);
	/* four paths on H1 a task opened (not the engine's samplesheet), one on H2 */
	assert_int_equal(in.nfile_ids, 4);
	ref = id_of(&in, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "/data/ref.fa");
	out = id_of(&in, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "/work/ab/cdef12/out.bam");
	merged = id_of(&in, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "/work/ef/012345/merged.bam");
	ref2 = id_of(&in, "cccccccccccccccccccccccccccccccc", "/data/ref.fa");
	assert_true(ref != ref2);

	/* ALIGN (3): P1 read ref, wrote out; P2 read ref, opened out rw: in {ref, out}, out {out} */
	t = task(&in, 1, "nf-ab/cdef12");
	assert_int_equal(t->in_n, 2);
	assert_true(has(&in, t->in_first, t->in_n, ref) && has(&in, t->in_first, t->in_n, out));
	assert_int_equal(t->out_n, 1);
	assert_true(has(&in, t->out_first, t->out_n, out));
	/* each list ascending */
	assert_true(in.in.files[t->in_first] < in.in.files[t->in_first + 1]);
	/* ALIGN (7) reads the same ref */
	t = task(&in, 1, "nf-cd/ef3456");
	assert_int_equal(t->in_n, 1);
	assert_int_equal(t->out_n, 0);
	assert_true(has(&in, t->in_first, t->in_n, ref));
	/* MERGE: out in, merged out: the edge ALIGN (3) -> MERGE */
	t = task(&in, 1, "nf-ef/012345");
	assert_true(t->in_n == 1 && has(&in, t->in_first, 1, out));
	assert_true(t->out_n == 1 && has(&in, t->out_first, 1, merged));
	t = task(&in, 1, "nf-11/223344");
	assert_int_equal(t->in_n + t->out_n, 0);
	t = task(&in, 2, "smk-300");
	assert_true(t->in_n == 1 && has(&in, t->in_first, 1, ref2));
	assert_int_equal(in.counts.file_rows, 8); /* the samplesheet is the engine's: not among the rows */
	assert_true(in.in.nfiles == 7);           /* 2 + 1 + 1 + 1 + 1 + 1 */
	tune_input_free(&in);
}

static void the_pipeline_filter_keeps_its_runs_only(void **state)
{
	struct tune_input in;

	load(state, "nf-core/rnaseq", &in);
	assert_int_equal(in.in.nruns, 2);
	assert_int_equal(in.in.runs[0].lake_id, 2);
	assert_int_equal(in.in.runs[1].lake_id, 1);
	assert_int_equal(in.in.nsteps, 6);
	assert_int_equal(in.nfile_ids, 3); /* H2's ref.fa is another pipeline's */
	assert_int_equal(in.in.npoints, 6);
	for (size_t i = 0; i < in.in.nsteps; i++)
		assert_string_equal(in.in.runs[in.in.steps[i].run].pipeline, "nf-core/rnaseq");
	tune_input_free(&in);

	load(state, "no such pipeline", &in);
	assert_int_equal(in.in.nruns, 0);
	assert_int_equal(in.in.nsteps, 0);
	assert_int_equal(in.in.nfiles, 0);
	tune_input_free(&in);
}

/* Only the newest runs of each pipeline (tracer tune without --run): run 1 started after run 2. */
static void only_the_newest_runs_of_each_pipeline_when_asked(void **state)
{
	struct tune_input in;

	load_newest(state, "nf-core/rnaseq", 1, &in);
	assert_int_equal(in.in.nruns, 1);
	assert_int_equal(in.in.runs[0].lake_id, 1);
	for (size_t i = 0; i < in.in.nsteps; i++)
		assert_int_equal(in.in.steps[i].run, 0); /* the steps of run 1 only */
	assert_true(in.in.nsteps > 0);
	tune_input_free(&in);

	load_newest(state, NULL, 1, &in); /* every pipeline, one run each */
	for (size_t i = 0; i < in.in.nruns; i++)
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(in.in.runs[i].pipeline, in.in.runs[k].pipeline);
	assert_true(in.in.nruns >= 2);
	tune_input_free(&in);

	load_newest(state, "nf-core/rnaseq", 2, &in);
	assert_int_equal(in.in.nruns, 2);
	tune_input_free(&in);
}

/* Each of a task's file lists as paths, sorted, joined: comparable across loads whatever the ids. */
static void list_paths(const struct tune_input *in, uint32_t first, uint32_t n, char *out, size_t len)
{
	const char *p[16];
	size_t k = 0;

	assert_true(n <= 16);
	for (uint32_t i = 0; i < n; i++)
		p[i] = in->file_paths[in->in.files[first + i]];
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && strcmp(p[j - 1], p[j]) > 0; j--) {
			const char *x = p[j];

			p[j] = p[j - 1];
			p[j - 1] = x;
		}
	out[0] = '\0';
	for (uint32_t i = 0; i < n; i++)
		k += (size_t)snprintf(out + k, len - k, "%s;", p[i]);
}

/*
 * With the runs' processes a small share of the lake's (here 7 of 47),
 * samples and files are read by index, process by process, instead of by
 * one scan of the tables: the same input either way.
 */
static void the_index_and_the_scan_give_the_same_input(void **state)
{
	struct fixture *fx = *state;
	struct tune_input scan, index;
	sqlite3 *db;
	char a[512], b[512];

	load(state, NULL, &scan);
	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) "
				      "INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns) "
				      "SELECT " H1 ", " BOOT1 ", 5000 + i, i, " T " FROM n", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	load(state, NULL, &index);

	assert_int_equal(index.in.nruns, scan.in.nruns);
	assert_int_equal(index.in.nsteps, scan.in.nsteps);
	assert_int_equal(index.in.npoints, scan.in.npoints);
	assert_int_equal(index.in.nfiles, scan.in.nfiles);
	assert_int_equal(index.nfile_ids, scan.nfile_ids);
	assert_int_equal(index.counts.samples, scan.counts.samples);
	assert_memory_equal(index.in.timeline, scan.in.timeline, scan.in.npoints * sizeof(*scan.in.timeline));
	for (size_t r = 0; r < scan.in.nruns; r++) {
		assert_int_equal(index.in.runs[r].point_first, scan.in.runs[r].point_first);
		assert_int_equal(index.in.runs[r].point_n, scan.in.runs[r].point_n);
	}
	for (size_t i = 0; i < scan.in.nsteps; i++) {
		const struct an_step *x = &scan.in.steps[i], *y = &index.in.steps[i];

		assert_string_equal(x->step_id, y->step_id);
		assert_true(x->cores_known == y->cores_known && x->cores_p50 == y->cores_p50 &&
			    x->cores_p95 == y->cores_p95);
		assert_true(x->cpu_ns == y->cpu_ns && x->proc_ns == y->proc_ns && x->iowait_ns == y->iowait_ns);
		assert_true(x->in_n == y->in_n && x->out_n == y->out_n);
		list_paths(&scan, x->in_first, x->in_n, a, sizeof(a));
		list_paths(&index, y->in_first, y->in_n, b, sizeof(b));
		assert_string_equal(a, b);
		list_paths(&scan, x->out_first, x->out_n, a, sizeof(a));
		list_paths(&index, y->out_first, y->out_n, b, sizeof(b));
		assert_string_equal(a, b);
	}
	tune_input_free(&scan);
	tune_input_free(&index);
}

/* A host's figures at the limits of an integer: sums saturate, impossible times are counted, nothing fails. */
/*
 * `bash -c 'burner | reader'`: the shell (10 s) waits for its children,
 * who cover 60.5 .. 70 s of its life; the 2-thread burner is busy longer
 * than it lives; the reader reads 1 s of its 9.5 s. Idle: the shell's
 * 10 - 9.5 - 0.01 + the burner's 0 + the reader's 9.5 - 1 = 8.99 s.
 */
static void idle_leaves_out_what_children_covered(void **state)
{
	struct fixture *fx = *state;
	struct tune_input in;
	const struct an_step *t;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO steps (run_id, idx, step_id, name, engine, state, start_ns, end_ns, "
				      "processes) VALUES (3, 1, 'smk-310', 'burn', 'snakemake', 'succeeded', " AT(110)
				      ", " AT(120) ", 3);"
				      "INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, "
				      "exit_ts_ns, ppid, parent_start_ns, run_id, step, runtime_ns, run_delay_ns) VALUES "
				      "(" H2 ", " BOOT2 ", 310, " SECS(60) ", " AT(110) ", " AT(120) ", " SECS(70) ", 1, "
				      "1, 3, 'smk-310', 10000000, 0),"
				      "(" H2 ", " BOOT2 ", 311, 60500000000, " AT(110) ", " AT(118) ", " SECS(68) ", 310, "
				      SECS(60) ", 3, 'smk-310', " SECS(12) ", " SECS(2) "),"
				      "(" H2 ", " BOOT2 ", 312, 60500000000, " AT(110) ", " AT(120) ", " SECS(70) ", 310, "
				      SECS(60) ", 3, 'smk-310', " SECS(1) ", 0);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	load(state, NULL, &in);
	t = task(&in, 2, "smk-310");
	assert_int_equal(t->proc_ns, 27 * NS);
	assert_true(t->idle_known);
	assert_int_equal(t->idle_ns, 8990000000LL);
	tune_input_free(&in);
}

/*
 * Time in direct reclaim (lake schema 7): summed per task like the waits,
 * each process's from its exit, a running one's from its newest sample;
 * a process that did not measure it (NULL) adds nothing.
 */
static void reclaim_is_summed_per_task_from_exits_and_newest_samples(void **state)
{
	struct fixture *fx = *state;
	struct tune_input in;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "UPDATE processes SET reclaim_ns = " SECS(2) " WHERE tgid = 101;"
				      "UPDATE processes SET reclaim_ns = 1500000000 WHERE tgid = 102;"
				      "UPDATE samples SET reclaim_ns = 100000000 WHERE seq = 11;"
				      "UPDATE samples SET reclaim_ns = 400000000 WHERE seq = 12;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	load(state, NULL, &in);
	assert_int_equal(task(&in, 1, "nf-ab/cdef12")->reclaim_ns, 3500000000LL); /* P1 2 s + P2 1.5 s */
	assert_int_equal(task(&in, 1, "nf-cd/ef3456")->reclaim_ns, 0);            /* P3: not measured */
	assert_int_equal(task(&in, 1, "nf-11/223344")->reclaim_ns, 400000000LL);  /* P5's newest sample */
	tune_input_free(&in);
}

static void hostile_figures_saturate_and_are_counted(void **state)
{
	struct fixture *fx = *state;
	struct tune_input in;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO run_processes (run_id, idx, pid, start_ns, end_ns, step, cpu_user_ns, "
				      "cpu_sys_ns) VALUES (2, 2, 202, 0, 9223372036854775807, 'nf-aa/bbbbbb', "
				      "9000000000000000000, 0), (2, 3, 203, 0, 1, 'nf-aa/bbbbbb', 9000000000000000000, 0);"
				      "INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, exit_ts_ns, "
				      "run_id, step, runtime_ns) VALUES "
				      "(" H1 ", " BOOT1 ", 110, 1, " T ", 2, 1, 'nf-ef/012345', 9223372036854775807),"
				      "(" H1 ", " BOOT1 ", 111, 1, " T ", 2, 1, 'nf-ef/012345', 9223372036854775807);"
				      "INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns) VALUES "
				      "(" H1 ", 100, " BOOT1 ", 110, 1, 9223372036854775000, 5),"
				      "(" H1 ", 101, " BOOT1 ", 111, 1, -9223372036854775000, 5);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	load(state, NULL, &in);
	assert_int_equal(task(&in, 1, "nf-ef/012345")->cpu_ns, INT64_MAX);
	assert_int_equal(task(&in, 0, "nf-aa/bbbbbb")->cpu_ns, INT64_MAX);
	assert_int_equal(in.in.runs[0].cpu_ns, INT64_MAX); /* no runs.cpu_ns: its report's processes' */
	assert_int_equal(in.counts.samples_bad_time, 2);
	tune_input_free(&in);
}

static void a_nextflow_tag_is_removed_balanced(void **state)
{
	(void)state;
	assert_int_equal(tune_step_name_len("ALIGN (3)"), 5);
	assert_int_equal(tune_step_name_len("NFCORE:RNASEQ:FASTQC (sample 1)"), 20);
	assert_int_equal(tune_step_name_len("MERGE (a (b))"), 5);
	assert_int_equal(tune_step_name_len("TRIM  (x)"), 4);
	assert_int_equal(tune_step_name_len("ALIGN"), 5);
	assert_int_equal(tune_step_name_len("(3)"), 3);       /* nothing before the tag: kept */
	assert_int_equal(tune_step_name_len("f(x)"), 4);      /* no space before it: not a tag */
	assert_int_equal(tune_step_name_len("a b)"), 4);      /* unbalanced */
	assert_int_equal(tune_step_name_len("a (b) c"), 7);   /* not at the end */
	assert_int_equal(tune_step_name_len(""), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runs_are_by_start_with_their_hosts_and_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(tasks_sum_their_processes_and_are_by_start, setup, teardown),
		cmocka_unit_test_setup_teardown(a_report_only_run_falls_back_to_its_report_and_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(the_store_says_where_a_tasks_figures_came_from, setup, teardown),
		cmocka_unit_test_setup_teardown(cores_are_quantiles_of_the_summed_buckets, setup, teardown),
		cmocka_unit_test_setup_teardown(the_timeline_sums_every_process_per_second, setup, teardown),
		cmocka_unit_test_setup_teardown(files_are_ids_per_host_with_in_and_out_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(the_pipeline_filter_keeps_its_runs_only, setup, teardown),
		cmocka_unit_test_setup_teardown(only_the_newest_runs_of_each_pipeline_when_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(the_index_and_the_scan_give_the_same_input, setup, teardown),
		cmocka_unit_test_setup_teardown(the_timeline_and_cores_are_held_to_the_host, setup, teardown),
		cmocka_unit_test_setup_teardown(idle_leaves_out_what_children_covered, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_figures_saturate_and_are_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(reclaim_is_summed_per_task_from_exits_and_newest_samples, setup, teardown),
		cmocka_unit_test(a_nextflow_tag_is_removed_balanced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
