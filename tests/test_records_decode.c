/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoding kernel records as untrusted bytes: good records decode to what
 * was written, and every malformed length, type, version, path, argv and
 * pid is refused with its reason - never read past what was given.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"
#include "encode.h"

static struct decoded d;

static const char *const ARGS[] = { "samtools", "sort", "-o", "out.bam", "in.bam", NULL };

/*
 * Decode from an exactly sized heap copy, so ASan catches any read past
 * the record's end.
 */
static int decode_exact(unsigned type, const void *rec, uint32_t len)
{
	void *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, rec, len);
	rc = decode_record(&d, type, copy, len);
	free(copy);
	return rc;
}

static size_t good_exec(unsigned char *buf, size_t cap)
{
	size_t n = encode_exec(buf, cap, 1000, 42, 41, 900, "/usr/bin/samtools", ARGS);

	assert_true(n > 0);
	return n;
}

static struct tr_exec *exec_hdr(unsigned char *buf)
{
	return (struct tr_exec *)(void *)buf;
}

static void expect_refused(unsigned type, const void *rec, uint32_t len, enum decode_error why)
{
	int rc = decode_exact(type, rec, len);

	assert_true(rc < 0);
	assert_int_equal(d.error, why);
	assert_int_equal(d.type, 0);
}

/* ---- good records ---------------------------------------------------- */

static void exec_record_decodes_path_argv_and_ids(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	assert_int_equal(decode_exact(TR_EXEC, buf, (uint32_t)n), 0);
	assert_int_equal(d.type, TR_EXEC);
	assert_int_equal(d.ts_ns, 1000);
	assert_int_equal(d.u.exec.rec.tgid, 42);
	assert_int_equal(d.u.exec.rec.ppid, 41);
	assert_int_equal(d.u.exec.rec.start_ns, 900);
	assert_string_equal(d.u.exec.path, "/usr/bin/samtools");
	assert_int_equal(d.u.exec.path_len, strlen("/usr/bin/samtools"));
	assert_int_equal(d.u.exec.argv_len, strlen("samtools sort -o out.bam in.bam") + 1);
	assert_memory_equal(d.u.exec.argv, "samtools\0sort\0-o\0out.bam\0in.bam\0", d.u.exec.argv_len);
	assert_string_equal(d.u.exec.comm, "samtools");
}

static void exec_record_with_empty_argv_decodes(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = encode_exec(buf, sizeof(buf), 1, 42, 41, 900, "/bin/x", NULL);

	(void)state;
	assert_int_equal(decode_exact(TR_EXEC, buf, (uint32_t)n), 0);
	assert_int_equal(d.u.exec.argv_len, 0);
	assert_string_equal(d.u.exec.path, "/bin/x");
}

static void exec_record_of_the_largest_size_decodes(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	char path[TR_PATH_MAX], arg[TR_ARGV_MAX], cwd[TR_CWD_MAX], env[TR_ENV_MAX];
	const char *args[] = { arg, NULL }, *envs[] = { env, NULL };

	(void)state;
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	memset(arg, 'a', sizeof(arg) - 1);
	arg[sizeof(arg) - 1] = 0;
	memset(cwd, 'c', sizeof(cwd) - 1);
	cwd[0] = '/';
	cwd[sizeof(cwd) - 1] = 0;
	memset(env, 'v', sizeof(env) - 1);
	memcpy(env, "TRACER_RUN_ID=", 14);
	env[sizeof(env) - 1] = 0;
	assert_int_equal(encode_exec_ctx(buf, sizeof(buf), 1, 42, 41, 900, path, args, cwd, envs), DECODE_MAX_LEN);
	assert_int_equal(decode_exact(TR_EXEC, buf, DECODE_MAX_LEN), 0);
	assert_int_equal(d.u.exec.path_len, TR_PATH_MAX - 1);
	assert_int_equal(d.u.exec.argv_len, TR_ARGV_MAX);
	assert_int_equal(d.u.exec.cwd_len, TR_CWD_MAX - 1);
	assert_int_equal(d.u.exec.env_len, TR_ENV_MAX);
}

static void truncated_last_argument_is_kept_and_terminated(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	/* Drop the final NUL, as a truncated argument area has none. */
	exec_hdr(buf)->argv_len--;
	exec_hdr(buf)->flags |= TR_EXEC_ARGV_TRUNCATED;
	assert_int_equal(decode_exact(TR_EXEC, buf, (uint32_t)n - 1), 0);
	assert_int_equal(d.u.exec.argv[d.u.exec.argv_len], 0);
}

static void fixed_size_records_decode(void **state)
{
	struct tr_fork f = encode_fork(5, 10, 100, 11, 110);
	struct tr_exit x = encode_exit(6, 11, 110, 10, 3 << 8);
	struct tr_oom o = encode_oom(7, 11, 1234, 5678);
	struct tr_counters c = encode_counters(8, 2, 3);
	struct tr_end e = encode_end(9, 77);

	(void)state;
	assert_int_equal(decode_exact(TR_FORK, &f, sizeof(f)), 0);
	assert_int_equal(d.u.fork.child_tgid, 11);
	assert_int_equal(d.u.fork.parent_start_ns, 100);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), 0);
	assert_int_equal(d.u.exit.exit_code, 3 << 8);
	assert_int_equal(d.u.exit.runtime_ns, 4000000);
	assert_int_equal(decode_exact(TR_OOM, &o, sizeof(o)), 0);
	assert_int_equal(d.u.oom.anon_rss_kb, 1234);
	assert_int_equal(decode_exact(TR_COUNTERS, &c, sizeof(c)), 0);
	assert_int_equal(d.u.counters.kernel_drops[TR_EXIT], 3);
	assert_int_equal(decode_exact(TR_END, &e, sizeof(e)), 0);
	assert_int_equal(d.u.end.records_copied, 77);
	assert_int_equal(d.ts_ns, 9);
}

static void payload_is_read_once_into_a_private_copy(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	assert_int_equal(decode_record(&d, TR_EXEC, buf, (uint32_t)n), 0);
	/* The "shared memory" changes after the decode: what was decoded does not. */
	memset(buf, 0xff, n);
	assert_string_equal(d.u.exec.path, "/usr/bin/samtools");
	assert_int_equal(d.u.exec.rec.tgid, 42);
	assert_true((const unsigned char *)d.u.exec.path >= d.buf &&
		    (const unsigned char *)d.u.exec.path < d.buf + sizeof(d.buf));
}

/* ---- refused: type, version, header --------------------------------- */

static void unknown_types_are_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN] = { 0 };
	const unsigned types[] = { 0, 1, 2, 15, TR_KERNEL_TYPES_END, 24, 31, TR_TYPES_END, 63, 64, 1000 };

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_int_equal(decode_exact(types[i], buf, 64), -EPROTONOSUPPORT);
		assert_int_equal(d.error, DECODE_ERR_TYPE);
	}
}

static void wrong_version_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));
	struct tr_fork f = encode_fork(5, 10, 100, 11, 110);

	(void)state;
	exec_hdr(buf)->hdr.version = RECORDS_VERSION + 1;
	assert_int_equal(decode_exact(TR_EXEC, buf, (uint32_t)n), -EPROTO);
	assert_int_equal(d.error, DECODE_ERR_VERSION);
	f.hdr.version = 0;
	assert_int_equal(decode_exact(TR_FORK, &f, sizeof(f)), -EPROTO);
	assert_int_equal(d.error, DECODE_ERR_VERSION);
}

/*
 * A spool or lake written before version 3: version-2 records decode, and
 * a version-2 exit (shorter by the image's and the cgroup's peaks) says
 * its image peak is unknown. A length and a version that disagree are refused.
 */
static void version_2_records_decode_and_an_old_exit_has_no_image_peak(void **state)
{
	struct tr_exit x = encode_exit(6, 11, 110, 10, 0);
	struct tr_fork f = encode_fork(5, 10, 100, 11, 110);

	(void)state;
	x.image_peak_rss_bytes = 0x1234; /* bytes past a version-2 exit: never read */
	x.memcg_peak_bytes = 0x5678;
	x.hdr.version = 2;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V2_SIZE), 0);
	assert_int_equal(d.u.exit.tgid, 11);
	assert_int_equal(d.u.exit.maxrss_bytes, 1 << 20);
	assert_int_equal(d.u.exit.image_peak_rss_bytes, 0);
	assert_int_equal(d.u.exit.memcg_peak_bytes, 0);
	assert_true(d.u.exit.flags & TR_EXIT_NO_IMAGE_PEAK);
	f.hdr.version = 2;
	assert_int_equal(decode_exact(TR_FORK, &f, sizeof(f)), 0);
	/* a version-2 exit of version-3 length, and a version-3 exit of version-2 length */
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), -EPROTO);
	assert_int_equal(d.error, DECODE_ERR_VERSION);
	x.hdr.version = RECORDS_VERSION;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V2_SIZE), -EBADMSG);
	assert_int_equal(d.error, DECODE_ERR_LENGTH);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), 0);
	assert_int_equal(d.u.exit.image_peak_rss_bytes, 0x1234);
	assert_false(d.u.exit.flags & TR_EXIT_NO_IMAGE_PEAK);
}

/*
 * Version 3 lacks the allocation (version 4): its exit decodes with the
 * limits unknown (0), its peaks kept; a length of another version is
 * refused; a version-4 exit carries them.
 */
static void a_version_3_exit_decodes_without_its_allocation(void **state)
{
	struct tr_exit x = encode_exit(6, 11, 110, 10, 0);

	(void)state;
	x.memcg_peak_bytes = 0x5678;
	x.memcg_limit_bytes = 512 << 20; /* bytes past a version-3 exit: never read */
	x.cpu_quota_millicores = 1500;
	x.cpus_allowed = 3;
	x.hdr.version = 3;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V3_SIZE), 0);
	assert_int_equal(d.u.exit.memcg_peak_bytes, 0x5678);
	assert_int_equal(d.u.exit.memcg_limit_bytes, 0);
	assert_int_equal(d.u.exit.cpu_quota_millicores, 0);
	assert_int_equal(d.u.exit.cpus_allowed, 0);
	assert_false(d.u.exit.flags & TR_EXIT_NO_IMAGE_PEAK);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), -EPROTO);
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V2_SIZE), -EPROTO);
	x.hdr.version = RECORDS_VERSION;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V3_SIZE), -EBADMSG);
	assert_int_equal(d.error, DECODE_ERR_LENGTH);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), 0);
	assert_int_equal(d.u.exit.memcg_limit_bytes, 512 << 20);
	assert_int_equal(d.u.exit.cpu_quota_millicores, 1500);
	assert_int_equal(d.u.exit.cpus_allowed, 3);
}

/* The same for a sample: version 3's is 16 bytes shorter and decodes with its allocation unknown. */
static void a_version_3_sample_decodes_without_its_allocation(void **state)
{
	struct tr_sample x = encode_sample(7, 11, 110, 10, 5, 4096, 0);

	(void)state;
	x.memcg_limit_bytes = 1 << 30;
	x.cpu_quota_millicores = 250;
	x.cpus_allowed = 1;
	x.hdr.version = 3;
	assert_int_equal(decode_exact(TR_SAMPLE, &x, TR_SAMPLE_V3_SIZE), 0);
	assert_int_equal(d.u.sample.runtime_ns, 5);
	assert_int_equal(d.u.sample.memcg_limit_bytes, 0);
	assert_int_equal(d.u.sample.cpu_quota_millicores, 0);
	assert_int_equal(d.u.sample.cpus_allowed, 0);
	assert_int_equal(decode_exact(TR_SAMPLE, &x, sizeof(x)), -EPROTO);
	x.hdr.version = RECORDS_VERSION;
	assert_int_equal(decode_exact(TR_SAMPLE, &x, TR_SAMPLE_V3_SIZE), -EBADMSG);
	assert_int_equal(d.error, DECODE_ERR_LENGTH);
	assert_int_equal(decode_exact(TR_SAMPLE, &x, sizeof(x)), 0);
	assert_int_equal(d.u.sample.memcg_limit_bytes, 1 << 30);
	assert_int_equal(d.u.sample.cpu_quota_millicores, 250);
	assert_int_equal(d.u.sample.cpus_allowed, 1);
}

/*
 * Version 4 lacks the time in direct reclaim (version 5): its exit and its
 * sample decode, their allocation kept, with reclaim unknown (0 and
 * TR_EXIT_NO_RECLAIM); a length of another version is refused; a
 * version-5 record carries it, measured.
 */
static void a_version_4_exit_and_sample_decode_with_reclaim_unknown(void **state)
{
	struct tr_exit x = encode_exit(6, 11, 110, 10, 0);
	struct tr_sample s = encode_sample(7, 11, 110, 10, 5, 4096, 0);

	(void)state;
	x.memcg_limit_bytes = 512 << 20;
	x.cpus_allowed = 3;
	x.run_delay_ns = 777;
	x.reclaim_ns = 0x4242; /* bytes past a version-4 exit: never read */
	x.hdr.version = 4;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V4_SIZE), 0);
	assert_int_equal(d.u.exit.memcg_limit_bytes, 512 << 20);
	assert_int_equal(d.u.exit.cpus_allowed, 3);
	assert_int_equal(d.u.exit.run_delay_ns, 777);
	assert_int_equal(d.u.exit.reclaim_ns, 0);
	assert_true(d.u.exit.flags & TR_EXIT_NO_RECLAIM);
	assert_false(d.u.exit.flags & TR_EXIT_NO_IMAGE_PEAK);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), -EPROTO);
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V3_SIZE), -EPROTO);
	x.hdr.version = RECORDS_VERSION;
	assert_int_equal(decode_exact(TR_EXIT, &x, TR_EXIT_V4_SIZE), -EBADMSG);
	assert_int_equal(d.error, DECODE_ERR_LENGTH);
	assert_int_equal(decode_exact(TR_EXIT, &x, sizeof(x)), 0);
	assert_int_equal(d.u.exit.reclaim_ns, 0x4242);
	assert_false(d.u.exit.flags & TR_EXIT_NO_RECLAIM);

	s.memcg_limit_bytes = 1 << 30;
	s.reclaim_ns = 0x4343;
	s.hdr.version = 4;
	assert_int_equal(decode_exact(TR_SAMPLE, &s, TR_SAMPLE_V4_SIZE), 0);
	assert_int_equal(d.u.sample.runtime_ns, 5);
	assert_int_equal(d.u.sample.memcg_limit_bytes, 1 << 30);
	assert_int_equal(d.u.sample.reclaim_ns, 0);
	assert_true(d.u.sample.flags & TR_EXIT_NO_RECLAIM);
	assert_int_equal(decode_exact(TR_SAMPLE, &s, sizeof(s)), -EPROTO);
	assert_int_equal(decode_exact(TR_SAMPLE, &s, TR_SAMPLE_V3_SIZE), -EPROTO);
	s.hdr.version = 3; /* versions 2 and 3: reclaim unknown too */
	assert_int_equal(decode_exact(TR_SAMPLE, &s, TR_SAMPLE_V3_SIZE), 0);
	assert_true(d.u.sample.flags & TR_EXIT_NO_RECLAIM);
	s.hdr.version = RECORDS_VERSION;
	assert_int_equal(decode_exact(TR_SAMPLE, &s, TR_SAMPLE_V4_SIZE), -EBADMSG);
	assert_int_equal(d.error, DECODE_ERR_LENGTH);
	assert_int_equal(decode_exact(TR_SAMPLE, &s, sizeof(s)), 0);
	assert_int_equal(d.u.sample.reclaim_ns, 0x4343);
	assert_false(d.u.sample.flags & TR_EXIT_NO_RECLAIM);
}

static void header_type_differing_from_ring_type_is_refused(void **state)
{
	struct tr_exit x = encode_exit(6, 11, 110, 10, 0);
	struct tr_fork f = encode_fork(5, 10, 100, 11, 110);

	(void)state;
	x.hdr.type = TR_FORK;
	expect_refused(TR_EXIT, &x, sizeof(x), DECODE_ERR_HDR_TYPE);
	/* A fork record filed under the exit type is refused on length before anything else. */
	expect_refused(TR_EXIT, &f, sizeof(f), DECODE_ERR_LENGTH);
}

/* ---- refused: lengths ------------------------------------------------ */

static void fixed_size_records_of_any_other_size_are_refused(void **state)
{
	static _Alignas(8) unsigned char big[1024];
	const struct {
		unsigned type;
		size_t size;
	} t[] = {
		{ TR_FORK, sizeof(struct tr_fork) }, { TR_EXIT, sizeof(struct tr_exit) },
		{ TR_OOM, sizeof(struct tr_oom) },   { TR_COUNTERS, sizeof(struct tr_counters) },
		{ TR_END, sizeof(struct tr_end) },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct tr_hdr h = encode_hdr(t[i].type, 1);

		memset(big, 0, sizeof(big));
		memcpy(big, &h, sizeof(h));
		expect_refused(t[i].type, big, (uint32_t)t[i].size - 1, DECODE_ERR_LENGTH);
		expect_refused(t[i].type, big, (uint32_t)t[i].size + 1, DECODE_ERR_LENGTH);
		expect_refused(t[i].type, big, (uint32_t)t[i].size + 8, DECODE_ERR_LENGTH);
		expect_refused(t[i].type, big, 0, DECODE_ERR_LENGTH);
		expect_refused(t[i].type, big, sizeof(struct tr_hdr), DECODE_ERR_LENGTH);
	}
}

static void exec_shorter_than_its_fixed_part_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];

	(void)state;
	good_exec(buf, sizeof(buf));
	expect_refused(TR_EXEC, buf, sizeof(struct tr_exec) - 1, DECODE_ERR_LENGTH);
	expect_refused(TR_EXEC, buf, 0, DECODE_ERR_LENGTH);
}

static void exec_longer_than_any_valid_exec_is_refused(void **state)
{
	static _Alignas(8) unsigned char buf[DECODE_MAX_LEN + 64];

	(void)state;
	good_exec(buf, sizeof(buf));
	expect_refused(TR_EXEC, buf, DECODE_MAX_LEN + 1, DECODE_ERR_LENGTH);
	expect_refused(TR_EXEC, buf, DECODE_MAX_LEN + 64, DECODE_ERR_LENGTH);
}

static void exec_lengths_that_do_not_add_up_are_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	expect_refused(TR_EXEC, buf, (uint32_t)n - 1, DECODE_ERR_LENGTH); /* record shorter than its lengths */
	expect_refused(TR_EXEC, buf, (uint32_t)n + 1, DECODE_ERR_LENGTH); /* trailing garbage */
	exec_hdr(buf)->argv_len += 1;
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_LENGTH);
	exec_hdr(buf)->argv_len -= 1;
	exec_hdr(buf)->path_len = 0xffffffffu; /* a sum that would wrap in 32 bits */
	exec_hdr(buf)->argv_len = 0xffffffffu;
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_LENGTH);
}

static void exec_path_without_its_nul_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));
	size_t plen = exec_hdr(buf)->path_len;

	(void)state;
	buf[sizeof(struct tr_exec) + plen - 1] = 'x';
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_PATH);
}

static void exec_path_with_an_early_nul_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	buf[sizeof(struct tr_exec) + 4] = 0;
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_PATH);
}

static void exec_path_of_zero_or_too_many_bytes_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	struct tr_exec *e = exec_hdr(buf);
	size_t n = encode_exec(buf, sizeof(buf), 1, 42, 41, 900, "/b", NULL);

	(void)state;
	/* path_len 0: the three path bytes become argv bytes, lengths still add up. */
	e->path_len = 0;
	e->argv_len = e->argv_true_len = 3;
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_PATH);
	/* TR_PATH_MAX + 1 bytes of path, NUL-terminated, and no argv. */
	memset(buf + sizeof(*e), 'p', TR_PATH_MAX);
	buf[sizeof(*e) + TR_PATH_MAX] = 0;
	e->path_len = TR_PATH_MAX + 1;
	e->argv_len = e->argv_true_len = 0;
	expect_refused(TR_EXEC, buf, sizeof(*e) + TR_PATH_MAX + 1, DECODE_ERR_PATH);
}

static void exec_argv_beyond_its_limits_is_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	struct tr_exec *e = exec_hdr(buf);
	size_t n = good_exec(buf, sizeof(buf));

	(void)state;
	e->argv_true_len = e->argv_len - 1; /* more kept than there was */
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_ARGV);
	/* TR_ARGV_MAX + 1 argv bytes after a 2-byte path: lengths add up, argv does not fit the rule. */
	n = encode_exec(buf, sizeof(buf), 1, 42, 41, 900, "/", NULL);
	memset(buf + n, 'a', TR_ARGV_MAX + 1);
	e->argv_len = e->argv_true_len = TR_ARGV_MAX + 1;
	expect_refused(TR_EXEC, buf, (uint32_t)(n + TR_ARGV_MAX + 1), DECODE_ERR_ARGV);
}

/* ---- refused: pids --------------------------------------------------- */

static void zero_or_impossible_pids_are_refused(void **state)
{
	_Alignas(8) unsigned char buf[DECODE_MAX_LEN];
	size_t n = good_exec(buf, sizeof(buf));
	struct tr_fork f = encode_fork(5, 10, 100, 0, 110);
	struct tr_exit x = encode_exit(6, DECODE_PID_LIMIT + 1, 110, 10, 0);
	struct tr_oom o = encode_oom(7, 0, 1, 1);

	(void)state;
	exec_hdr(buf)->tgid = 0;
	expect_refused(TR_EXEC, buf, (uint32_t)n, DECODE_ERR_PID);
	expect_refused(TR_FORK, &f, sizeof(f), DECODE_ERR_PID);
	f = encode_fork(5, 0, 100, 11, 110);
	expect_refused(TR_FORK, &f, sizeof(f), DECODE_ERR_PID);
	expect_refused(TR_EXIT, &x, sizeof(x), DECODE_ERR_PID);
	expect_refused(TR_OOM, &o, sizeof(o), DECODE_ERR_PID);
}

static void every_error_has_a_name(void **state)
{
	(void)state;
	for (int e = 0; e < DECODE_ERR_COUNT; e++)
		assert_non_null(decode_error_name((enum decode_error)e));
	assert_string_equal(decode_error_name(DECODE_ERR_LENGTH), "length");
	assert_string_equal(decode_error_name(DECODE_ERR_COUNT), "unknown");
}

/* ---- wait status ----------------------------------------------------- */

static void wait_status_decodes_exit_code_signal_and_core(void **state)
{
	(void)state;
	assert_int_equal(decode_exit_status(3 << 8), 3);
	assert_int_equal(decode_exit_signal(3 << 8), 0);
	assert_int_equal(decode_exit_signal(11 | 0x80), 11);
	assert_true(decode_exit_core(11 | 0x80));
	assert_false(decode_exit_core(9));
	assert_int_equal(decode_exit_status(0xffff00), 0xff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_record_decodes_path_argv_and_ids),
		cmocka_unit_test(exec_record_with_empty_argv_decodes),
		cmocka_unit_test(exec_record_of_the_largest_size_decodes),
		cmocka_unit_test(truncated_last_argument_is_kept_and_terminated),
		cmocka_unit_test(fixed_size_records_decode),
		cmocka_unit_test(payload_is_read_once_into_a_private_copy),
		cmocka_unit_test(unknown_types_are_refused),
		cmocka_unit_test(wrong_version_is_refused),
		cmocka_unit_test(version_2_records_decode_and_an_old_exit_has_no_image_peak),
		cmocka_unit_test(a_version_3_exit_decodes_without_its_allocation),
		cmocka_unit_test(a_version_3_sample_decodes_without_its_allocation),
		cmocka_unit_test(a_version_4_exit_and_sample_decode_with_reclaim_unknown),
		cmocka_unit_test(header_type_differing_from_ring_type_is_refused),
		cmocka_unit_test(fixed_size_records_of_any_other_size_are_refused),
		cmocka_unit_test(exec_shorter_than_its_fixed_part_is_refused),
		cmocka_unit_test(exec_longer_than_any_valid_exec_is_refused),
		cmocka_unit_test(exec_lengths_that_do_not_add_up_are_refused),
		cmocka_unit_test(exec_path_without_its_nul_is_refused),
		cmocka_unit_test(exec_path_with_an_early_nul_is_refused),
		cmocka_unit_test(exec_path_of_zero_or_too_many_bytes_is_refused),
		cmocka_unit_test(exec_argv_beyond_its_limits_is_refused),
		cmocka_unit_test(zero_or_impossible_pids_are_refused),
		cmocka_unit_test(every_error_has_a_name),
		cmocka_unit_test(wait_status_decodes_exit_code_signal_and_core),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
