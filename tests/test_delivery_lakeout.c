/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's copy of kernel records (delivery/lakeout.c): an exec's
 * secrets are gone from every byte, what remains still decodes and keeps
 * its path, cwd, environment and ordinary arguments; other records are
 * sent as the decoder checked them, byte for byte.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "encode.h"
#include "frame.h"
#include "lakeout.h"

static struct decoded dec, again;
static uint8_t rec[DECODE_MAX_LEN], out[LAKEOUT_MAX];

static bool contains(const uint8_t *buf, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, needle, n))
			return true;
	return false;
}

static void exec_secrets_never_reach_the_lake_copy(void **state)
{
	static const char *const args[] = { "curl", "-u", "alice:hunter2", "--token", "s3cr3tT0ken",
					    "https://bob:pa55word@example.org/x", "--password=letmein", "plain.txt",
					    NULL };
	static const char *const env[] = { "TRACER_RUN_ID=run-42", NULL };
	struct redact_rules r;
	uint32_t len, outlen;
	uint16_t flags;
	unsigned n;

	(void)state;
	redact_rules_init(&r);
	len = (uint32_t)encode_exec_ctx(rec, sizeof(rec), 10, 4242, 1, 5, "/usr/bin/curl", args, "/data/work", env);
	assert_true(len > 0);
	assert_int_equal(decode_record(&dec, TR_EXEC, rec, len), 0);
	assert_int_equal(lakeout_record(&r, &dec, len, out, sizeof(out), &outlen, &flags, &n), 0);
	assert_int_equal(flags, TR_FRAME_REDACTED);
	assert_true(n >= 3);
	assert_true(outlen < len);
	assert_false(contains(out, outlen, "hunter2"));
	assert_false(contains(out, outlen, "s3cr3tT0ken"));
	assert_false(contains(out, outlen, "pa55word"));
	assert_false(contains(out, outlen, "letmein"));
	/* What is left is a valid exec record with everything else intact. */
	assert_int_equal(decode_record(&again, TR_EXEC, out, outlen), 0);
	assert_string_equal(again.u.exec.path, "/usr/bin/curl");
	assert_string_equal(again.u.exec.cwd, "/data/work");
	assert_int_equal(again.u.exec.env_len, strlen(env[0]) + 1);
	assert_memory_equal(again.u.exec.env, env[0], strlen(env[0]) + 1);
	assert_int_equal(again.u.exec.rec.tgid, 4242);
	assert_int_equal(again.u.exec.rec.argv_true_len, dec.u.exec.rec.argv_true_len);
	assert_true(contains((const uint8_t *)again.u.exec.argv, again.u.exec.argv_len, "plain.txt"));
	assert_true(contains((const uint8_t *)again.u.exec.argv, again.u.exec.argv_len, "example.org"));
	assert_true(contains((const uint8_t *)again.u.exec.argv, again.u.exec.argv_len, REDACT_MARKER));
}

static void exec_without_secrets_keeps_its_arguments(void **state)
{
	static const char *const args[] = { "samtools", "sort", "-o", "out.bam", "in.bam", NULL };
	struct redact_rules r;
	uint32_t len, outlen;
	uint16_t flags;
	unsigned n;

	(void)state;
	redact_rules_init(&r);
	len = (uint32_t)encode_exec_ctx(rec, sizeof(rec), 10, 7, 1, 5, "/usr/bin/samtools", args, NULL, NULL);
	assert_int_equal(decode_record(&dec, TR_EXEC, rec, len), 0);
	assert_int_equal(lakeout_record(&r, &dec, len, out, sizeof(out), &outlen, &flags, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(outlen, len);
	assert_memory_equal(out, rec, len);
}

static void other_records_are_sent_as_decoded(void **state)
{
	struct tr_exit ex = encode_exit(20, 7, 5, 1, 0x0100);
	struct tr_sample sa = encode_sample(30, 7, 5, 1, 1000, 4096, 10);
	struct redact_rules r;
	uint32_t outlen;
	uint16_t flags;
	unsigned n;

	(void)state;
	redact_rules_init(&r);
	assert_int_equal(decode_record(&dec, TR_EXIT, &ex, sizeof(ex)), 0);
	assert_int_equal(lakeout_record(&r, &dec, sizeof(ex), out, sizeof(out), &outlen, &flags, &n), 0);
	assert_int_equal(outlen, sizeof(ex));
	assert_int_equal(flags, 0);
	assert_memory_equal(out, &ex, sizeof(ex));
	assert_int_equal(decode_record(&dec, TR_SAMPLE, &sa, sizeof(sa)), 0);
	assert_int_equal(lakeout_record(&r, &dec, sizeof(sa), out, sizeof(out), &outlen, &flags, &n), 0);
	assert_memory_equal(out, &sa, sizeof(sa));
	/* Too small an output: refused, nothing half-written claimed. */
	assert_int_equal(lakeout_record(&r, &dec, sizeof(sa), out, 8, &outlen, &flags, &n), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_secrets_never_reach_the_lake_copy),
		cmocka_unit_test(exec_without_secrets_keeps_its_arguments),
		cmocka_unit_test(other_records_are_sent_as_decoded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
