/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lake/join.c: which sbatch submitted a cluster job (docs/live.md, "Cluster
 * jobs"). The lake's side of it, with real SQL on both engines, is
 * tests/test_lake_store.c's a_cluster_job_joins_the_run_that_submitted_it_whichever_comes_first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "join.h"

static bool names(const char *argv_json, const char *name)
{
	return join_names_job(argv_json, strlen(argv_json), name);
}

static void a_short_name_and_a_full_one_name_one_host(void **state)
{
	(void)state;
	assert_true(join_same_host("login1", "login1"));
	assert_true(join_same_host("login1", "LOGIN1.cluster.example"));
	assert_true(join_same_host("login1.cluster", "Login1"));
	assert_true(join_same_host("login1.a", "login1.a"));
	assert_false(join_same_host("login1", "login10"));
	assert_false(join_same_host("login1.a", "login1.b"));
	assert_false(join_same_host("login1", "login"));
	assert_false(join_same_host("login1", ""));
	assert_false(join_same_host(NULL, "login1"));
	assert_false(join_same_host("", ""));
}

static void sbatch_names_the_job_by_its_script_or_its_option(void **state)
{
	(void)state;
	/* Snakemake: the jobscript, whose name is the job's by default */
	assert_true(names("[\"sbatch\",\"-c\",\"2\",\"--mem=1000\",\"/wf/.snakemake/tmp.q/snakejob.align.3.sh\"]",
			  "snakejob.align.3.sh"));
	assert_true(names("[\"sbatch\",\"snakejob.align.3.sh\"]", "snakejob.align.3.sh"));
	assert_false(names("[\"sbatch\",\"/wf/.snakemake/tmp.q/snakejob.align.13.sh\"]", "snakejob.align.3.sh"));
	/* -J and --job-name, joined or not */
	assert_true(names("[\"sbatch\",\"-J\",\"align\",\"x.sh\"]", "align"));
	assert_true(names("[\"sbatch\",\"-Jalign\",\"x.sh\"]", "align"));
	assert_true(names("[\"sbatch\",\"--job-name\",\"align\",\"x.sh\"]", "align"));
	assert_true(names("[\"sbatch\",\"--job-name=align\",\"x.sh\"]", "align"));
	assert_false(names("[\"sbatch\",\"--job-name=aligner\",\"x.sh\"]", "align"));
	/* an option's value that is not a name, and an option itself, name nothing */
	assert_false(names("[\"sbatch\",\"-p\",\"x.sh\"]", "-p"));
	assert_false(names("[\"sbatch\",\"--mem=align\",\"x.sh\"]", "align"));
	/* Nextflow: the name is in the script (#SBATCH -J), not on the command line */
	assert_false(names("[\"sbatch\",\".command.run\"]", "nf-ALIGN_(s1)"));
	/* escapes are decoded; text that is not an array of strings names nothing */
	assert_true(names("[\"sbatch\",\"/wf/a\\u0062c.sh\"]", "abc.sh"));
	assert_false(names("[\"sbatch\",\"a\\u0000b\"]", "a"));
	assert_false(names("{\"a\":\"x.sh\"}", "x.sh"));
	assert_false(names("[\"sbatch\",3,\"x.sh\"]", "x.sh"));
	assert_false(names("[\"sbatch\",\"x.sh\"", "x.sh"));
	assert_false(names("", "x.sh"));
	assert_false(names("[\"x.sh\"]", ""));
	assert_false(join_names_job(NULL, 0, "x.sh"));
	assert_false(names("[\"x.sh\"]", NULL));
}

static void the_newest_that_names_the_job_else_the_newest_of_its_host(void **state)
{
#define CAND(host, argv) { host, argv, sizeof(argv) - 1 }
	const struct join_candidate c[] = {
		CAND("login2", "[\"sbatch\",\"a.sh\"]"),                 /* another host */
		CAND("login1.cluster", "[\"sbatch\",\"b.sh\"]"),         /* newest of the host */
		CAND("login1.cluster", "[\"sbatch\",\"-J\",\"a\",\"a.sh\"]"), /* names a.sh, and a */
		CAND("login1", "[\"sbatch\",\"a.sh\"]"),                 /* names a.sh too, older */
	};

	(void)state;
	assert_int_equal(join_pick(c, 4, "login1", "a.sh"), 2);
	assert_int_equal(join_pick(c, 4, "login1", "a"), 2);
	assert_int_equal(join_pick(c, 4, "login1", "nf-A_(x)"), 1);
	assert_int_equal(join_pick(c, 4, "login1", NULL), 1);
	assert_int_equal(join_pick(c, 4, "login2", "a.sh"), 0);
	assert_int_equal(join_pick(c, 4, "login3", "a.sh"), -1);
	assert_int_equal(join_pick(c, 4, NULL, "a.sh"), -1);
	assert_int_equal(join_pick(c, 0, "login1", "a.sh"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_short_name_and_a_full_one_name_one_host),
		cmocka_unit_test(sbatch_names_the_job_by_its_script_or_its_option),
		cmocka_unit_test(the_newest_that_names_the_job_else_the_newest_of_its_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
