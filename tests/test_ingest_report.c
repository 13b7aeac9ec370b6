/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `tracer report --db FILE [RUN]` (the built binary) on a lake the store
 * filled from real batches: the list shows each run's id, host, start,
 * duration, exit code and command; a run shows the summary tracer run
 * printed, byte for byte, then its signals; a missing file, a file that
 * is not a lake and an unknown run are clear errors with a non-zero exit;
 * control characters from the host never reach the terminal.
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
#include "skip.h"
#include "store.h"
#include "test_ingest_helpers.h"

static char tracer_bin[PATH_MAX];

struct fixture {
	char dir[64], db[96];
	struct batch_secret_key key;
};

struct output {
	char out[8192], err[4096];
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
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_ingest_report.XXXXXX");
	if (batch_crypto_init() || !mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	batch_key_generate(&fx->key);
	host_id_of(host, 0xab);
	if (frames_add(&f, 1, TL_RUN_REPORT, report1, sizeof(report1) - 1) &&
	    frames_add(&f, 2, TL_RUN_REPORT, report2, sizeof(report2) - 1) &&
	    !seal_frames(&fx->key, host, 1, NULL, BATCH_COMP_ZLIB, &f, &s) &&
	    !batch_verify(s.wire, s.len, lookup, &fx->key, &h, hash) && !batch_open(s.wire, s.len, &h, &raw, &raw_len) &&
	    !store_open(&st, fx->db, false, err, sizeof(err)) &&
	    !store_batch(st, &h, hash, raw, raw_len, s.len, 1, &res) && res.runs == 2)
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

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rm_tree(fx->dir);
	free(fx);
	return 0;
}

static void list_shows_each_run_with_host_start_duration_exit_and_command(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, NULL };
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_non_null(strstr(o.out, "RUN"));
	assert_non_null(strstr(o.out, "\n1     aba1a2a3a4a5 2023-11-14 22:13:20      12.5s     1  snakemake --cores 4\n"));
	assert_non_null(strstr(o.out, "\n2     aba1a2a3a4a5 2023-11-14 22:15:00          -     0  evil ?[2Jx\n"));
}

static void run_shows_its_summary_then_its_signals(void **state)
{
	struct fixture *fx = *state;
	const char *by_number[] = { "report", "--db", fx->db, "1", NULL };
	const char *by_run_id[] = { "report", "--db", fx->db, "sm-42", NULL };
	struct output o, o2;

	run_tracer(&o, by_number);
	assert_int_equal(o.status, 0);
	assert_memory_equal(o.out, "tracer: snakemake --cores 4: exit 1 after 12.5 s\n  align  bwa mem  OOM KILLED\n",
			    strlen("tracer: snakemake --cores 4: exit 1 after 12.5 s\n  align  bwa mem  OOM KILLED\n"));
	assert_non_null(strstr(o.out, "\nsignals:\n  oom_kill pid 77 step align tool bwa mem  {"));
	assert_non_null(strstr(o.out, "\n  failed pid 76 tool snakemake  {"));
	run_tracer(&o2, by_run_id);
	assert_int_equal(o2.status, 0);
	assert_string_equal(o.out, o2.out);
}

static void host_control_characters_never_reach_the_terminal(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "report", "--db", fx->db, "2", NULL };
	struct output o;

	run_tracer(&o, args);
	assert_int_equal(o.status, 0);
	assert_null(strchr(o.out, 0x1b));
	assert_null(strchr(o.out, 0x07));
	assert_non_null(strstr(o.out, "clean?]0;pwned? run\n"));
	assert_non_null(strstr(o.out, "signals: none"));
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
		cmocka_unit_test(list_shows_each_run_with_host_start_duration_exit_and_command),
		cmocka_unit_test(run_shows_its_summary_then_its_signals),
		cmocka_unit_test(host_control_characters_never_reach_the_terminal),
		cmocka_unit_test(unknown_run_missing_file_and_non_lake_are_clear_errors),
	};

	if (daemon_find("tracer", tracer_bin, sizeof(tracer_bin)))
		return test_skip_all("no tracer binary next to the test binaries: run 'make all' first");
	return cmocka_run_group_tests(tests, setup, teardown);
}
