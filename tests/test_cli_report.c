/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `tracer report --db FILE [--json] [RUN]` (the built binary) on a lake
 * the store filled from real batches, with runs of both modes: tracer
 * run's reports and the daemons' live records (one run streamed live and
 * then reported, listed once). The list shows each run's id, host,
 * start, duration (so far, with a '+', while running), state, exit code
 * and pipeline (else the command); --json gives the same as JSON. A
 * report run shows the summary tracer run printed, byte for byte, its
 * state, then its signals, and --json the stored report with its state;
 * a live run shows its header, steps and signals, and --json a report
 * rebuilt from the tables. A missing file, a file that is not a lake and
 * an unknown run are clear errors with a non-zero exit; control
 * characters from the host never reach the terminal, and every host
 * string in JSON is escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon_harness.h"
#include "decode.h"
#include "skip.h"
#include "store.h"
#include "test_ingest_helpers.h"

static char tracer_bin[PATH_MAX];

struct fixture {
	char dir[64], db[96];
	struct batch_secret_key key;
};

struct output {
	char out[65536], err[4096];
	int status;
};

/* Run tracer with args (NULL-terminated, without argv[0]); stdout, stderr and exit status into o. */
static void run_tracer(struct output *o, const char *const *args)
{
	const char *argv[16] = { tracer_bin };
	size_t n = 1;

	while (args[n - 1] && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	o->status = daemon_capture(argv, o->out, sizeof(o->out), o->err, sizeof(o->err), 20000);
}

static int lookup(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t pk[BATCH_PUBKEY_LEN],
		  uint8_t bound[BATCH_HOST_ID_LEN])
{
	const struct batch_secret_key *k = ctx;

	if (memcmp(key_id, k->key_id, BATCH_KEY_ID_LEN))
		return -1;
	memcpy(pk, k->public_key, BATCH_PUBKEY_LEN);
	memset(bound, 0, BATCH_HOST_ID_LEN);
	return 0;
}

static const char report1[] =
	"{\"report\":{\"schema\":\"tracer.run.v1\",\"command\":[\"snakemake\",\"--cores\",\"4\"],\"exit_code\":1,"
	"\"start_ns\":1700000000000000000,\"end_ns\":1700000012500000000,"
	"\"run\":{\"run_id\":\"sm-42\"},\"processes\":[],\"steps\":[],"
	"\"signals\":[{\"kind\":\"oom_kill\",\"pid\":77,\"step\":\"align\",\"tool\":\"bwa mem\",\"anon_rss_kb\":9},"
	"{\"kind\":\"failed\",\"pid\":76,\"step\":null,\"tool\":\"snakemake\",\"exit_code\":1}]},"
	"\"summary\":\"tracer: snakemake --cores 4: exit 1 after 12.5 s\\n  align  bwa mem  OOM KILLED\\n\"}";

static const char report2[] =
	"{\"report\":{\"command\":[\"evil\",\"\\u001b[2Jx\"],\"exit_code\":0,\"start_ns\":1700000100000000000,"
	"\"signals\":[]},\"summary\":\"clean\\u001b]0;pwned\\u0007 run\\n\"}";

/* The live run the daemons streamed: two processes, two steps (one running), a signal. */
static const char live_run[] =
	"{\"schema\":\"tracer.live.v1\",\"key\":\"b00t-100-5000\",\"update\":4,\"update_ns\":1700000212500000000,"
	"\"state\":\"running\",\"detected_by\":\"snakemake\",\"engine\":\"snakemake\","
	"\"pipeline\":\"snakemake:/data/wf/Snakefile\",\"run_id\":\"sm-7\",\"run_name\":null,\"slurm_job_id\":null,"
	"\"aws_batch_job_id\":null,\"command\":[\"snakemake\",\"--cores\",\"2\"],\"root_pid\":100,"
	"\"root_start_mono_ns\":5000,\"start_ns\":1700000200000000000,\"end_ns\":null,\"exit_code\":null,"
	"\"signal\":null,\"preexisting\":false,\"processes\":2,\"running_processes\":1,"
	"\"totals\":{\"cpu_ns\":2500001003,\"read_bytes\":1005,\"write_bytes\":1006,\"rchar\":1008,\"wchar\":1009,"
	"\"net_tx_bytes\":1020,\"net_rx_bytes\":1021},\"live\":{\"cpu_millicores\":1000,\"rss_bytes\":3145728,"
	"\"read_bytes_per_s\":0,\"write_bytes_per_s\":0,\"net_tx_bytes_per_s\":0,\"net_rx_bytes_per_s\":0},"
	"\"steps\":[{\"id\":\"smk-100\",\"name\":\"align\",\"engine\":\"snakemake\",\"rule\":\"align\",\"workdir\":null,"
	"\"state\":\"succeeded\",\"tools\":[\"samtools sort\"],\"start_ns\":1700000201000000000,"
	"\"end_ns\":1700000203000000000,\"processes\":1,\"running\":0,\"failed_processes\":0,\"nonzero_exits\":1,"
	"\"oom_killed\":0,\"exit_code\":1,\"signal\":null,\"failed\":false,\"cpu_ns\":1003,"
	"\"peak_rss_bytes\":8388608,\"rss_sum_of_peaks_bytes\":8388608,\"peak_rss_partial\":false,"
	"\"memcg_peak_bytes\":null,\"read_bytes\":1005,\"write_bytes\":1006,\"rchar\":1008,\"wchar\":1009,"
	"\"net_tx_bytes\":1020,\"net_rx_bytes\":1021,\"cpu_limit_cores\":2.5,\"memory_limit_bytes\":536870912},"
	"{\"id\":\"smk-101\",\"name\":\"call\",\"state\":\"running\",\"tools\":[\"bwa mem\"],"
	"\"start_ns\":1700000204000000000,\"end_ns\":null,\"processes\":1,\"running\":1,\"cpu_ns\":2500000000,"
	"\"peak_rss_bytes\":3145728,\"live\":{\"cpu_millicores\":1000,\"rss_bytes\":3145728}}],"
	"\"processes_attributed\":[{\"pid\":100,\"start_mono_ns\":5000,\"step\":\"smk-100\",\"tool\":\"samtools sort\"},"
	"{\"pid\":101,\"start_mono_ns\":6000,\"step\":\"smk-101\",\"tool\":\"bwa mem\"}],"
	"\"signals\":[{\"kind\":\"failed\",\"pid\":100,\"start_mono_ns\":5000,\"step\":\"smk-100\","
	"\"tool\":\"samtools sort\",\"exit_code\":1}]}";

/* A live run whose every string is hostile: escape sequences, quotes, a backslash, DEL, markup, U+2028. */
#define EVIL "evil\\u001b[2J\\\"q\\\"\\\\\\u007f</script>\\u2028"
#define EVIL_DECODED "evil\x1b[2J\"q\"\\\x7f</script>\xe2\x80\xa8"
static const char evil_run[] =
	"{\"schema\":\"tracer.live.v1\",\"key\":\"evil-1\",\"update\":1,\"update_ns\":1700000301000000000,"
	"\"state\":\"running\",\"pipeline\":\"" EVIL "\",\"engine\":\"" EVIL "\",\"run_id\":\"" EVIL "\","
	"\"command\":[\"rm\",\"-rf \\u001b]0;pwn\\u0007\"],\"start_ns\":1700000300000000000,"
	"\"steps\":[{\"id\":\"" EVIL "\",\"name\":\"\\u001b[31mred\",\"state\":\"running\",\"tools\":[\"" EVIL "\"]}],"
	"\"signals\":[{\"kind\":\"failed\",\"pid\":1,\"tool\":\"" EVIL "\",\"step\":\"\\u001b[2J\"}]}";

/* A run the daemons saw start, then tracer run reported (same key): one run. */
static const char merge_live[] =
	"{\"schema\":\"tracer.live.v1\",\"key\":\"merge-1\",\"update\":1,\"update_ns\":1700000401000000000,"
	"\"state\":\"running\",\"detected_by\":\"tracer_run\",\"command\":[\"make\"],\"start_ns\":1700000400000000000,"
	"\"steps\":[{\"id\":\"m1\",\"state\":\"running\"}]}";
static const char merge_report[] =
	"{\"report\":{\"schema\":\"tracer.run.v1\",\"command\":[\"make\"],\"exit_code\":0,"
	"\"start_ns\":1700000400000000000,\"end_ns\":1700000402000000000,\"run\":{\"key\":\"merge-1\"},"
	"\"processes\":[],\"steps\":[],\"signals\":[]},\"summary\":\"tracer: make: exit 0\\n\"}";

/* The kernel's records of the live run's processes: 100 ended, 101 still running (samples only). */
static bool add_kernel_records(struct frames *f, uint64_t *seq)
{
	static const char *const args[] = { "samtools", "sort", "-o", "out.bam", NULL };
	static const char *const args101[] = { "bwa", "mem", "ref.fa", NULL };
	_Alignas(8) uint8_t exec100[DECODE_MAX_LEN], exec101[DECODE_MAX_LEN], file[4][256], cg[256];
	struct tr_fork fk = make_fork(4000, 1, 10, 100, 5000);
	struct tr_exit ex = make_exit(9000, 100, 5000, 1, 1 << 8, 1000);
	struct tr_sample s1 = encode_sample(7000, 101, 6000, 100, 5, 2 << 20, 0);
	struct tr_sample s2 = encode_sample(8000, 101, 6000, 100, 6, 3 << 20, 0);
	size_t n100 = encode_exec(exec100, sizeof(exec100), 4500, 100, 1, 5000, "/usr/bin/samtools", args);
	size_t n101 = encode_exec(exec101, sizeof(exec101), 6500, 101, 100, 6000, "/usr/bin/bwa", args101);
	size_t nf[4] = {
		encode_file(file[0], sizeof(file[0]), 5100, 100, 5000, TR_FILE_READ, "/data/in.fq"),
		encode_file(file[1], sizeof(file[1]), 5200, 100, 5000, TR_FILE_WRITE, "/data/out.bam"),
		encode_file(file[2], sizeof(file[2]), 5300, 100, 5000, TR_FILE_WRITE, "/data/in.fq"),
		encode_file(file[3], sizeof(file[3]), 5400, 100, 5000, TR_FILE_READ, "/data/in.fq"),
	};
	size_t nc = encode_cgroup(cg, sizeof(cg), 4100, 7, 0, "/system.slice/job.scope");
	bool ok;

	ex.image_peak_rss_bytes = 8 << 20;
	s2.net_tx_bytes = 4242;
	s2.net_rx_bytes = 4343;
	ok = frames_add(f, (*seq)++, TR_CGROUP, cg, (uint32_t)nc) && frames_add(f, (*seq)++, TR_FORK, &fk, sizeof(fk)) &&
	     frames_add(f, (*seq)++, TR_EXEC, exec100, (uint32_t)n100) &&
	     frames_add(f, (*seq)++, TR_EXEC, exec101, (uint32_t)n101) &&
	     frames_add(f, (*seq)++, TR_SAMPLE, &s1, sizeof(s1)) && frames_add(f, (*seq)++, TR_SAMPLE, &s2, sizeof(s2));
	for (int i = 0; ok && i < 4; i++)
		ok = frames_add(f, (*seq)++, TR_FILE, file[i], (uint32_t)nf[i]);
	return ok && frames_add(f, (*seq)++, TR_EXIT, &ex, sizeof(ex));
}

static bool add_records(struct frames *f)
{
	uint64_t seq = 3;

	return frames_add(f, 1, TL_RUN_REPORT, report1, sizeof(report1) - 1) &&
	       frames_add(f, 2, TL_RUN_REPORT, report2, sizeof(report2) - 1) && add_kernel_records(f, &seq) &&
	       frames_add(f, seq++, TL_RUN, live_run, sizeof(live_run) - 1) &&
	       frames_add(f, seq++, TL_RUN, evil_run, sizeof(evil_run) - 1) &&
	       frames_add(f, seq++, TL_RUN, merge_live, sizeof(merge_live) - 1) &&
	       frames_add(f, seq++, TL_RUN_REPORT, merge_report, sizeof(merge_report) - 1);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct frames f = { 0 };
	struct store *st = NULL;
	struct store_result res;
	struct batch_header h;
	struct sealed s;
	uint8_t host[BATCH_HOST_ID_LEN], hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	char err[256];

	int rc = -1;

	if (!fx)
		return -1;
	memset(&s, 0, sizeof(s));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_cli_report.XXXXXX");
	if (batch_crypto_init() || !mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	batch_key_generate(&fx->key);
	host_id_of(host, 0xab);
	if (add_records(&f) && !seal_frames(&fx->key, host, 1, NULL, BATCH_COMP_ZLIB, &f, &s) &&
	    !batch_verify(s.wire, s.len, lookup, &fx->key, &h, hash) && !batch_open(s.wire, s.len, &h, &raw, &raw_len) &&
	    !store_open(&st, fx->db, false, err, sizeof(err)) &&
	    !store_batch(st, &h, hash, raw, raw_len, s.len, 1, &res) && res.runs == 6 && res.undecodable == 0 &&
	    res.bad_live_records == 0)
		rc = 0;
	store_close(st);
	free(raw);
	free(s.wire);
	frames_free(&f);
	if (rc) {
		rm_tree(fx->dir);
		free(fx);
		return rc;
	}
	*state = fx;
	return 0;
}

/* What SQLite's json1 says of JSON texts: expr over ?1 (and ?2); its first column as text ("" when NULL). */
static void json_eval(const char *j1, const char *j2, const char *expr, char *out, size_t outlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char sql[1024];

	snprintf(sql, sizeof(sql), "SELECT %s", expr);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, j1, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(st) > 1)
		sqlite3_bind_text(st, 2, j2, -1, SQLITE_STATIC);
	out[0] = 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* expr over the JSON text j must give want. */
static void assert_json(const char *j, const char *expr, const char *want)
{
	char got[4096];

	json_eval(j, NULL, expr, got, sizeof(got));
	if (strcmp(got, want)) {
		fprintf(stderr, "%s: got '%s', want '%s'\n", expr, got, want);
		fail();
	}
}

/* Output that is one valid JSON text, without a raw control character, DEL or escape byte anywhere. */
static void assert_clean_json(const char *out)
{
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		assert_true((*p >= 0x20 && *p != 0x7f) || *p == '\n');
	assert_json(out, "json_valid(?1)", "1");
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rm_tree(fx->dir);
	free(fx);
	return 0;
}

static void list_shows_each_run_of_both_modes_with_state_duration_exit_and_pipeline(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, NULL };
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_memory_equal(o.out, "RUN   HOST         START (UTC)           DURATION  STATE      EXIT  PIPELINE\n",
			    strlen("RUN   HOST         START (UTC)           DURATION  STATE      EXIT  PIPELINE\n"));
	assert_non_null(strstr(o.out, "\n1     aba1a2a3a4a5 2023-11-14 22:13:20      12.5s  failed        1  "
				      "snakemake --cores 4\n"));
	assert_non_null(strstr(o.out, "\n2     aba1a2a3a4a5 2023-11-14 22:15:00          -  succeeded     0  "
				      "evil ?[2Jx\n"));
	/* running: the time up to its last update, with a '+'; the pipeline rather than the command */
	assert_non_null(strstr(o.out, "\n3     aba1a2a3a4a5 2023-11-14 22:16:40     12.5s+  running       -  "
				      "snakemake:/data/wf/Snakefile\n"));
	assert_non_null(strstr(o.out, "\n4     aba1a2a3a4a5 2023-11-14 22:18:20      1.0s+  running       -  "
				      "evil?[2J\"q\"\\?</script>\xe2\x80\xa8\n"));
	/* streamed live, then reported: one run, the report's */
	assert_non_null(strstr(o.out, "\n5     aba1a2a3a4a5 2023-11-14 22:20:00       2.0s  succeeded     0  make\n"));
	assert_null(strstr(o.out, "\n6 "));
	assert_null(strchr(o.out, 0x1b));
	assert_null(strchr(o.out, 0x7f));
}

static void list_json_is_valid_json_with_every_host_string_escaped(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, "--json", NULL };
	char want[128];
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_clean_json(o.out);
	assert_json(o.out, "json_array_length(?1, '$.runs')", "5");
	assert_json(o.out, "json_extract(?1, '$.runs[0].run_id') || json_extract(?1, '$.runs[0].state')", "1failed");
	assert_json(o.out, "json_extract(?1, '$.runs[0].command')", "[\"snakemake\",\"--cores\",\"4\"]");
	assert_json(o.out, "json_extract(?1, '$.runs[0].pipeline_run_id')", "sm-42");
	assert_json(o.out, "json_extract(?1, '$.runs[0].detected_by')", "tracer_run");
	assert_json(o.out, "json_type(?1, '$.runs[1].end_ns') || json_type(?1, '$.runs[1].run_key')", "nullnull");
	assert_json(o.out, "json_extract(?1, '$.runs[0].host')", "aba1a2a3a4a5a6a7a8a9aaabacadaeaf");
	assert_json(o.out, "json_extract(?1, '$.runs[2].run_key') || '|' || json_extract(?1, '$.runs[2].engine') || "
			   "'|' || json_extract(?1, '$.runs[2].last_update_ns') || '|' || "
			   "json_extract(?1, '$.runs[2].processes') || '|' || json_extract(?1, '$.runs[2].steps')",
		    "b00t-100-5000|snakemake|1700000212500000000|2|2");
	/* the hostile strings come back exactly, and only escaped */
	snprintf(want, sizeof(want), "%s", EVIL_DECODED);
	assert_json(o.out, "json_extract(?1, '$.runs[3].pipeline')", want);
	assert_json(o.out, "json_extract(?1, '$.runs[3].pipeline_run_id')", want);
	assert_json(o.out, "json_extract(?1, '$.runs[3].command[1]')", "-rf \x1b]0;pwn\x07");
	assert_json(o.out, "json_extract(?1, '$.runs[4].run_key') || json_extract(?1, '$.runs[4].state')",
		    "merge-1succeeded");
}

static void report_run_shows_its_summary_state_then_its_signals(void **state)
{
	struct fixture *fx = *state;
	const char *by_number[] = { "report", "--db", fx->db, "1", NULL };
	const char *by_run_id[] = { "report", "--db", fx->db, "sm-42", NULL };
	static const char summary[] = "tracer: snakemake --cores 4: exit 1 after 12.5 s\n  align  bwa mem  OOM KILLED\n"
				      "state: failed\n";
	struct output o, o2;

	run_tracer(&o, by_number);
	assert_int_equal(o.status, 0);
	assert_memory_equal(o.out, summary, strlen(summary));
	assert_non_null(strstr(o.out, "\nsignals:\n  oom_kill pid 77 step align tool bwa mem  {"));
	assert_non_null(strstr(o.out, "\n  failed pid 76 tool snakemake  {"));
	run_tracer(&o2, by_run_id);
	assert_int_equal(o2.status, 0);
	assert_string_equal(o.out, o2.out);
}

static void report_run_json_is_the_stored_report_with_its_state(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, "1", "--json", NULL };
	const char *merged[] = { "report", "--db", fx->db, "merge-1", "--json", NULL };
	char same[8];
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_clean_json(o.out);
	json_eval(o.out, report1, "json(?1) = json_set(json_extract(?2, '$.report'), '$.state', 'failed')", same,
		  sizeof(same));
	assert_string_equal(same, "1");
	run_tracer(&o, merged);
	assert_int_equal(o.status, 0);
	json_eval(o.out, merge_report, "json(?1) = json_set(json_extract(?2, '$.report'), '$.state', 'succeeded')",
		  same, sizeof(same));
	assert_string_equal(same, "1");
}

static void live_run_shows_its_header_steps_and_signals(void **state)
{
	struct fixture *fx = *state;
	const char *by_key[] = { "report", "--db", fx->db, "b00t-100-5000", NULL };
	const char *by_number[] = { "report", "--db", fx->db, "3", NULL };
	struct output o, o2;

	run_tracer(&o, by_key);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.out, "run 3: snakemake:/data/wf/Snakefile\n"));
	assert_non_null(strstr(o.out, "\n  state      running\n"));
	assert_non_null(strstr(o.out, "\n  host       aba1a2a3a4a5a6a7a8a9aaabacadaeaf\n"));
	assert_non_null(strstr(o.out, "\n  start      2023-11-14 22:16:40 UTC\n"));
	assert_non_null(strstr(o.out, "\n  duration   12.5s+\n"));
	assert_non_null(strstr(o.out, "\n  exit       -\n"));
	assert_non_null(strstr(o.out, "\n  processes  2 (1 running)\n"));
	assert_non_null(strstr(o.out, "\n  ID               NAME                     STATE     WALL       CPU        PEAK RSS   "
				      "TOOLS\n"));
	assert_non_null(strstr(o.out, "\n  smk-100          align                    succeeded 2.0s       0.0s       8.0 MiB    "
				      "samtools sort\n"));
	assert_non_null(strstr(o.out, "\n  smk-101          call                     running   8.5s+      2.5s       3.0 MiB    "
				      "bwa mem\n"));
	assert_non_null(strstr(o.out, "\nsignals:\n  failed pid 100 step smk-100 tool samtools sort  {"));
	run_tracer(&o2, by_number);
	assert_int_equal(o2.status, 0);
	assert_string_equal(o.out, o2.out);
}

static void live_run_json_is_rebuilt_from_the_tables(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, "3", "--json", NULL };
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_clean_json(o.out);
	assert_json(o.out, "json_extract(?1, '$.schema') || '|' || json_extract(?1, '$.state') || '|' || "
			   "json_extract(?1, '$.start_ns') || '|' || json_type(?1, '$.end_ns') || '|' || "
			   "json_type(?1, '$.exit_code') || '|' || json_extract(?1, '$.command')",
		    "tracer.run.v1|running|1700000200000000000|null|null|[\"snakemake\",\"--cores\",\"2\"]");
	assert_json(o.out, "json_extract(?1, '$.run')",
		    "{\"key\":\"b00t-100-5000\",\"pipeline\":\"snakemake:/data/wf/Snakefile\",\"run_id\":\"sm-7\","
		    "\"engine\":\"snakemake\",\"run_name\":null,\"slurm_job_id\":null,\"aws_batch_job_id\":null,"
		    "\"slurm_job_name\":null,\"slurm_submit_dir\":null,\"slurm_submit_host\":null,"
		    "\"detected_by\":\"snakemake\",\"joined_to_run\":null,\"jobs\":0}");
	assert_json(o.out, "json_extract(?1, '$.agent')", "{\"dropped\":null,\"rebuilt_from_lake\":true}");
	/* the ended process, as the report would give it (cpu split as the kernel's cputime_adjust) */
	assert_json(o.out, "json_array_length(?1, '$.processes')", "2");
	assert_json(o.out, "json_extract(?1, '$.processes[0]')",
		    "{\"pid\":100,\"ppid\":1,\"start_ns\":1600000000000005000,\"end_ns\":1600000000000009000,"
		    "\"exe\":\"/usr/bin/samtools\",\"argv\":[\"samtools\",\"sort\",\"-o\",\"out.bam\"],\"cwd\":null,"
		    "\"tool\":\"samtools sort\",\"step\":\"smk-100\",\"exit_code\":1,\"signal\":0,\"core_dumped\":false,"
		    "\"oom_killed\":false,\"cpu_user_ns\":502,\"cpu_sys_ns\":501,\"peak_rss_bytes\":8388608,"
		    "\"read_bytes\":1005,\"write_bytes\":1006,\"rchar\":1008,\"wchar\":1009,\"net_tx_bytes\":1020,"
		    "\"net_rx_bytes\":1021,\"container_id\":null,\"cgroup\":\"/system.slice/job.scope\","
		    "\"files\":[{\"path\":\"/data/in.fq\",\"mode\":\"rw\"},{\"path\":\"/data/out.bam\",\"mode\":\"w\"}],"
		    "\"peak_rss_source\":\"exit\"}");
	/* the running one: what the samples say; nothing of an exit */
	assert_json(o.out, "json_extract(?1, '$.processes[1]')",
		    "{\"pid\":101,\"ppid\":100,\"start_ns\":1600000000000006000,\"end_ns\":null,"
		    "\"exe\":\"/usr/bin/bwa\",\"argv\":[\"bwa\",\"mem\",\"ref.fa\"],\"cwd\":null,\"tool\":\"bwa mem\","
		    "\"step\":\"smk-101\",\"exit_code\":null,\"signal\":null,\"core_dumped\":null,\"oom_killed\":false,"
		    "\"cpu_user_ns\":null,\"cpu_sys_ns\":null,\"peak_rss_bytes\":3145728,\"read_bytes\":null,"
		    "\"write_bytes\":null,\"rchar\":null,\"wchar\":null,\"net_tx_bytes\":4242,\"net_rx_bytes\":4343,"
		    "\"container_id\":null,\"cgroup\":\"/system.slice/job.scope\",\"files\":null,"
		    "\"peak_rss_source\":\"sampled\"}");
	assert_json(o.out, "json_array_length(?1, '$.steps')", "2");
	assert_json(o.out, "json_extract(?1, '$.steps[0].id') || '|' || json_extract(?1, '$.steps[0].tools') || '|' || "
			   "json_extract(?1, '$.steps[0].state') || '|' || json_extract(?1, '$.steps[0].end_ns') || '|' || "
			   "json_extract(?1, '$.steps[0].peak_rss_bytes') || '|' || json_extract(?1, '$.steps[0].rule') || "
			   "'|' || json_extract(?1, '$.steps[0].nonzero_exits') || '|' || json_type(?1, '$.steps[0].live')",
		    "smk-100|[\"samtools sort\"]|succeeded|1700000203000000000|8388608|align|1|null");
	assert_json(o.out, "json_extract(?1, '$.steps[1].state') || '|' || json_type(?1, '$.steps[1].end_ns') || '|' || "
			   "json_extract(?1, '$.steps[1].live.cpu_millicores')",
		    "running|null|1000");
	/* the allocation: a step's limits as its record gave them; none for the running one (null) */
	assert_json(o.out, "json_extract(?1, '$.steps[0].cpu_limit_cores') || '|' || "
			   "json_extract(?1, '$.steps[0].memory_limit_bytes') || '|' || "
			   "json_type(?1, '$.steps[1].cpu_limit_cores') || '|' || json_type(?1, '$.steps[1].memory_limit_bytes')",
		    "2.5|536870912|null|null");
	assert_json(o.out, "json_extract(?1, '$.signals')",
		    "[{\"kind\":\"failed\",\"pid\":100,\"start_mono_ns\":5000,\"step\":\"smk-100\","
		    "\"tool\":\"samtools sort\",\"exit_code\":1}]");
}

static void host_control_characters_never_reach_the_terminal(void **state)
{
	struct fixture *fx = *state;
	const char *report[] = { "report", "--db", fx->db, "2", NULL };
	const char *live[] = { "report", "--db", fx->db, "evil-1", NULL };
	const char *live_json[] = { "report", "--db", fx->db, "evil-1", "--json", NULL };
	struct output o;

	run_tracer(&o, report);
	assert_int_equal(o.status, 0);
	assert_null(strchr(o.out, 0x1b));
	assert_null(strchr(o.out, 0x07));
	assert_non_null(strstr(o.out, "clean?]0;pwned? run\n"));
	assert_non_null(strstr(o.out, "signals: none"));
	run_tracer(&o, live);
	assert_int_equal(o.status, 0);
	assert_null(strchr(o.out, 0x1b));
	assert_null(strchr(o.out, 0x7f));
	assert_non_null(strstr(o.out, "run 4: evil?[2J\"q\"\\?</script>"));
	assert_non_null(strstr(o.out, "?[31mred"));
	assert_non_null(strstr(o.out, "\n  failed pid 1 step ?[2J tool evil?[2J"));
	run_tracer(&o, live_json);
	assert_int_equal(o.status, 0);
	assert_clean_json(o.out);
	assert_json(o.out, "json_extract(?1, '$.steps[0].name')", "\x1b[31mred");
	assert_json(o.out, "json_extract(?1, '$.signals[0].tool')", EVIL_DECODED);
	assert_json(o.out, "json_extract(?1, '$.steps[0].tools[0]')", EVIL_DECODED);
}

static void unknown_run_missing_file_and_non_lake_are_clear_errors(void **state)
{
	struct fixture *fx = *state;
	char missing[128], text[128];
	const char *unknown[] = { "report", "--db", fx->db, "99", NULL };
	const char *gone[] = { "report", "--db", missing, NULL };
	const char *not_lake[] = { "report", "--db", text, NULL };
	const char *no_db[] = { "report", NULL };
	struct output o;
	FILE *f;

	run_tracer(&o, unknown);
	assert_int_equal(o.status, 1);
	assert_non_null(strstr(o.err, "no run '99'"));
	snprintf(missing, sizeof(missing), "%s/nothing.db", fx->dir);
	run_tracer(&o, gone);
	assert_int_equal(o.status, 1);
	assert_non_null(strstr(o.err, "nothing.db"));
	assert_int_equal(access(missing, F_OK), -1); /* read-only: never created */
	snprintf(text, sizeof(text), "%s/empty.db", fx->dir);
	f = fopen(text, "w");
	assert_non_null(f);
	fclose(f);
	run_tracer(&o, not_lake);
	assert_int_equal(o.status, 1);
	assert_non_null(strstr(o.err, "not a tracer lake"));
	run_tracer(&o, no_db);
	assert_int_equal(o.status, 2);
	assert_non_null(strstr(o.err, "--db FILE is required"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_shows_each_run_of_both_modes_with_state_duration_exit_and_pipeline),
		cmocka_unit_test(list_json_is_valid_json_with_every_host_string_escaped),
		cmocka_unit_test(report_run_shows_its_summary_state_then_its_signals),
		cmocka_unit_test(report_run_json_is_the_stored_report_with_its_state),
		cmocka_unit_test(live_run_shows_its_header_steps_and_signals),
		cmocka_unit_test(live_run_json_is_rebuilt_from_the_tables),
		cmocka_unit_test(host_control_characters_never_reach_the_terminal),
		cmocka_unit_test(unknown_run_missing_file_and_non_lake_are_clear_errors),
	};

	if (daemon_find("tracer", tracer_bin, sizeof(tracer_bin)))
		return test_skip_all("no tracer binary next to the test binaries: run 'make all' first");
	return cmocka_run_group_tests(tests, setup, teardown);
}
