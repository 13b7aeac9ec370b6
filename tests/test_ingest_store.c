/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake (lake/store.c) on a real SQLite file: a verified batch is
 * stored with every record exactly once and its checksum; rows derived
 * from real-layout kernel records (processes with their exit figures,
 * samples, files, cgroups, signals, agent counters, losses) are right; a
 * batch sent twice, or re-formed around records already stored, adds
 * nothing twice; gaps in a host's seqs are recorded; a key announcement
 * enrols the new key for the host; a run report fills runs, steps, run
 * processes and signals, and one that is not valid JSON is counted, kept
 * in records, and does not cost the batch.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "decode.h"
#include "store.h"
#include "test_ingest_helpers.h"

struct fixture {
	char dir[64];
	char db[96];
	struct store *st;
	struct batch_secret_key key;
	uint8_t host[BATCH_HOST_ID_LEN];
	struct frames f;
};

static int lookup_any_host(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t pk[BATCH_PUBKEY_LEN],
			   uint8_t bound[BATCH_HOST_ID_LEN])
{
	const struct batch_secret_key *k = ctx;

	if (memcmp(key_id, k->key_id, BATCH_KEY_ID_LEN))
		return -1;
	memcpy(pk, k->public_key, BATCH_PUBKEY_LEN);
	memset(bound, 0, BATCH_HOST_ID_LEN);
	return 0;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[256];

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_ingest_store.XXXXXX");
	if (batch_crypto_init() || !mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	if (store_open(&fx->st, fx->db, false, err, sizeof(err))) {
		fprintf(stderr, "store_open: %s\n", err);
		rm_tree(fx->dir);
		free(fx);
		return -1;
	}
	batch_key_generate(&fx->key);
	host_id_of(fx->host, 1);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	store_close(fx->st);
	frames_free(&fx->f);
	rm_tree(fx->dir);
	free(fx);
	return 0;
}

/* The ingest's path without HTTP: seal, verify, open, store. */
static int store_sealed(struct fixture *fx, const uint8_t *host, uint64_t batch_seq, struct store_result *res,
			uint8_t hash[BATCH_HASH_LEN])
{
	struct batch_header h;
	struct sealed s;
	uint8_t vhash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	int rc;

	assert_int_equal(seal_frames(&fx->key, host, batch_seq, NULL, BATCH_COMP_ZLIB, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lookup_any_host, &fx->key, &h, vhash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	rc = store_batch(fx->st, &h, vhash, raw, raw_len, s.len, 1700000000000000000ull + batch_seq, res);
	if (hash)
		memcpy(hash, vhash, BATCH_HASH_LEN);
	free(raw);
	free(s.wire);
	frames_reset(&fx->f);
	return rc;
}

static int64_t q(struct fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int64_t q(struct fixture *fx, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return sql_int(fx->db, sql);
}

static void add_samples(struct fixture *fx, uint64_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* contents a function of the seq: the same seq sent twice is the same record */
		struct tr_sample s = encode_sample(1000 + first + i, 4242, 900, 1, 1000000 * (first + i), 1 << 20, first + i);

		assert_true(frames_add_src(&fx->f, first + i, 64 * (first + i), 3, TR_SAMPLE, &s, sizeof(s)));
	}
}

/* Every stored record's crc, recomputed from its stored fields and bytes: how many agree. */
static int64_t crcs_recomputed(struct fixture *fx)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t good = 0;

	assert_int_equal(sqlite3_open_v2(fx->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT seq, src_pos, src_gen, type, flags, len, crc, payload "
						"FROM records", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct tr_frame f = {
			.seq = (uint64_t)sqlite3_column_int64(st, 0),
			.src_pos = (uint64_t)sqlite3_column_int64(st, 1),
			.src_gen = (uint32_t)sqlite3_column_int64(st, 2),
			.type = (uint16_t)sqlite3_column_int64(st, 3),
			.flags = (uint16_t)sqlite3_column_int64(st, 4),
			.len = (uint32_t)sqlite3_column_int64(st, 5),
		};
		const void *payload = sqlite3_column_blob(st, 7);

		good += sqlite3_column_bytes(st, 7) == (int)f.len &&
			frame_crc(&f, payload) == (uint32_t)sqlite3_column_int64(st, 6);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return good;
}

/* ---- the audit trail -------------------------------------------------------- */

static void batch_stores_every_record_once_with_its_checksum(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;
	uint64_t crc_sum = 0;
	size_t off = 0;
	const struct tr_frame *f;

	add_samples(fx, 1, 50);
	for (f = batch_next_frame(fx->f.buf, fx->f.len, &off); f; f = batch_next_frame(fx->f.buf, fx->f.len, &off))
		crc_sum += f->crc;
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(res.records, 50);
	assert_int_equal(res.new_records, 50);
	assert_int_equal(res.dup_records, 0);
	assert_int_equal(res.gaps, 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 50);
	assert_int_equal(q(fx, "SELECT count(DISTINCT seq) FROM records"), 50);
	assert_int_equal(q(fx, "SELECT min(seq) FROM records"), 1);
	assert_int_equal(q(fx, "SELECT max(seq) FROM records"), 50);
	assert_int_equal(q(fx, "SELECT sum(crc) FROM records"), (int64_t)crc_sum);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE len = %zu AND length(payload) = len",
			   sizeof(struct tr_sample)), 50);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE note IS NULL AND ts_ns IS NOT NULL"), 50);
	/* the crc is recomputable from what the lake holds: the ring position is kept with the record */
	assert_int_equal(q(fx, "SELECT src_pos FROM records WHERE seq = 7"), 64 * 7);
	assert_int_equal(q(fx, "SELECT src_gen FROM records WHERE seq = 7"), 3);
	assert_int_equal(crcs_recomputed(fx), 50);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples"), 50);
	assert_int_equal(q(fx, "SELECT count(*) FROM batches WHERE records_new = 50 AND chain = 'first'"), 1);
	assert_int_equal(q(fx, "SELECT max_seq FROM hosts"), 50);
	assert_int_equal(q(fx, "SELECT count(*) FROM records r JOIN batches b ON b.hash = r.batch_hash"), 50);
	/* the derived row is the record's */
	assert_int_equal(q(fx, "SELECT runtime_ns FROM samples WHERE seq = 7"), 7000000);
}

static void exec_fork_exit_make_one_process_with_its_exit_figures(void **state)
{
	struct fixture *fx = *state;
	static const char *const args[] = { "samtools", "sort", "-o", "out.bam", "in \"q\".bam", NULL };
	_Alignas(8) uint8_t buf[DECODE_MAX_LEN];
	struct tr_fork fk = make_fork(100, 41, 50, 42, 99);
	struct tr_exit ex = make_exit(500, 42, 99, 41, 3 << 8, 1000);
	struct tr_exit killed = make_exit(600, 43, 120, 41, 9 | 0x80, 2000);
	struct store_result res;
	char text[512];
	size_t n;

	n = encode_exec(buf, sizeof(buf), 200, 42, 41, 99, "/usr/bin/samtools", args);
	assert_true(frames_add(&fx->f, 1, TR_FORK, &fk, sizeof(fk)));
	assert_true(frames_add(&fx->f, 2, TR_EXEC, buf, (uint32_t)n));
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &ex, sizeof(ex)));
	assert_true(frames_add(&fx->f, 4, TR_EXIT, &killed, sizeof(killed)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.undecodable, 0);

	assert_int_equal(q(fx, "SELECT count(*) FROM processes"), 2);
	sql_text(fx->db, "SELECT exe || '|' || argv || '|' || comm FROM processes WHERE tgid = 42", text, sizeof(text));
	assert_string_equal(text, "/usr/bin/samtools|[\"samtools\",\"sort\",\"-o\",\"out.bam\",\"in \\\"q\\\".bam\"]|"
				  "samtools");
	assert_int_equal(q(fx, "SELECT json_array_length(argv) FROM processes WHERE tgid = 42"), 5);
	assert_int_equal(q(fx, "SELECT ppid FROM processes WHERE tgid = 42"), 41);
	assert_int_equal(q(fx, "SELECT parent_start_ns FROM processes WHERE tgid = 42"), 50);
	assert_int_equal(q(fx, "SELECT fork_ts_ns FROM processes WHERE tgid = 42"), 100);
	assert_int_equal(q(fx, "SELECT exec_ts_ns FROM processes WHERE tgid = 42"), 200);
	assert_int_equal(q(fx, "SELECT exit_ts_ns FROM processes WHERE tgid = 42"), 500);
	assert_int_equal(q(fx, "SELECT exit_code FROM processes WHERE tgid = 42"), 3);
	assert_int_equal(q(fx, "SELECT signal FROM processes WHERE tgid = 42"), 0);
	assert_int_equal(q(fx, "SELECT utime_ns FROM processes WHERE tgid = 42"), 1001);
	assert_int_equal(q(fx, "SELECT stime_ns FROM processes WHERE tgid = 42"), 1002);
	assert_int_equal(q(fx, "SELECT runtime_ns FROM processes WHERE tgid = 42"), 1003);
	assert_int_equal(q(fx, "SELECT maxrss_bytes FROM processes WHERE tgid = 42"), 1004);
	assert_int_equal(q(fx, "SELECT read_bytes FROM processes WHERE tgid = 42"), 1005);
	assert_int_equal(q(fx, "SELECT write_bytes FROM processes WHERE tgid = 42"), 1006);
	assert_int_equal(q(fx, "SELECT rchar + wchar FROM processes WHERE tgid = 42"), 1008 + 1009);
	assert_int_equal(q(fx, "SELECT nvcsw FROM processes WHERE tgid = 42"), 1012);
	assert_int_equal(q(fx, "SELECT run_delay_ns FROM processes WHERE tgid = 42"), 1016);
	assert_int_equal(q(fx, "SELECT net_tx_bytes + net_rx_bytes FROM processes WHERE tgid = 42"), 1020 + 1021);
	assert_int_equal(q(fx, "SELECT iowait_ns FROM processes WHERE tgid = 42"), 1022);
	assert_int_equal(q(fx, "SELECT start_real_ns FROM processes WHERE tgid = 42"), 1600000000000000000ll + 99);
	assert_int_equal(q(fx, "SELECT end_real_ns FROM processes WHERE tgid = 42"), 1600000000000000000ll + 500);
	/* killed by SIGKILL with a core: no exit code, the signal and the core */
	assert_int_equal(q(fx, "SELECT exit_code IS NULL FROM processes WHERE tgid = 43"), 1);
	assert_int_equal(q(fx, "SELECT signal FROM processes WHERE tgid = 43"), 9);
	assert_int_equal(q(fx, "SELECT core_dumped FROM processes WHERE tgid = 43"), 1);
	/* signals from exit statuses: the kill only (exit_records_raise_killed_for_a_real_kill_only) */
	assert_int_equal(q(fx, "SELECT count(*) FROM signals"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 43 AND run_id IS NULL AND "
			       "json_extract(detail, '$.signal') = 9 AND json_extract(detail, '$.core_dumped')"), 1);
}

/*
 * A record says how a process ended, not whether that failed anything:
 * exit 1 (grep -q that found nothing) and SIGPIPE (a writer whose reader
 * went away) raise nothing; SIGTERM and SIGSEGV are kills.
 */
static void exit_records_raise_killed_for_a_real_kill_only(void **state)
{
	struct fixture *fx = *state;
	const struct tr_exit ends[] = {
		make_exit(500, 42, 90, 41, 1 << 8, 0),   /* exit 1 */
		make_exit(510, 43, 91, 41, 255 << 8, 0), /* exit 255 */
		make_exit(520, 44, 92, 41, 13, 0),       /* SIGPIPE */
		make_exit(530, 45, 93, 41, 15, 0),       /* SIGTERM */
		make_exit(540, 46, 94, 41, 11 | 0x80, 0) /* SIGSEGV, core */
	};
	struct store_result res;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		assert_true(frames_add(&fx->f, i + 1, TR_EXIT, &ends[i], sizeof(ends[i])));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(q(fx, "SELECT count(*) FROM processes"), 5);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE kind = 'failed'"), 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE pid IN (42, 43, 44)"), 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 45 AND "
			       "json_extract(detail, '$.signal') = 15"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 46 AND "
			       "json_extract(detail, '$.signal') = 11 AND json_extract(detail, '$.core_dumped')"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals"), 2);
}

static void oom_kill_marks_the_victim_and_is_its_only_signal(void **state)
{
	struct fixture *fx = *state;
	struct tr_fork fk = make_fork(100, 1, 10, 77, 150);
	struct tr_oom oom = make_oom(300, 77, 4096);
	struct tr_exit ex = make_exit(310, 77, 150, 1, 9, 0);
	struct store_result res;

	assert_true(frames_add(&fx->f, 1, TR_FORK, &fk, sizeof(fk)));
	assert_true(frames_add(&fx->f, 2, TR_OOM, &oom, sizeof(oom)));
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &ex, sizeof(ex)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(q(fx, "SELECT oom_killed FROM processes WHERE tgid = 77"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE kind = 'oom_kill' AND pid = 77 AND start_ns = 150 "
			       "AND json_extract(detail, '$.anon_rss_kb') = 4096"), 1);
}

static void samples_files_cgroups_counters_and_losses_fill_their_tables(void **state)
{
	struct fixture *fx = *state;
	_Alignas(8) uint8_t file[256], cg[256];
	size_t nf = encode_file(file, sizeof(file), 400, 42, 99, TR_FILE_READ | TR_FILE_WRITE, "/data/x.fq");
	size_t nc = encode_cgroup(cg, sizeof(cg), 401, 7, 0, "/system.slice/job.scope");
	struct tr_counters k;
	struct tl_loss loss = { .reason = TL_LOSS_EVICTED, .first_seq = 100, .last_seq = 199, .records = 100,
				.bytes = 12345 };
	struct store_result res;

	memset(&k, 0, sizeof(k));
	k.hdr = encode_hdr(TR_COUNTERS, 402);
	k.kernel_drops[TR_SAMPLE] = 3;
	k.kernel_drops[TR_DROP_STATE] = 2;
	k.ring_drops[TR_EXEC] = 5;
	k.records_copied = 1000;
	add_samples(fx, 1, 3);
	assert_true(frames_add(&fx->f, 4, TR_FILE, file, (uint32_t)nf));
	assert_true(frames_add(&fx->f, 5, TR_CGROUP, cg, (uint32_t)nc));
	assert_true(frames_add(&fx->f, 6, TR_COUNTERS, &k, sizeof(k)));
	assert_true(frames_add(&fx->f, 7, TL_LOSS, &loss, sizeof(loss)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 7);
	assert_int_equal(res.undecodable + res.unknown, 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples WHERE tgid = 4242 AND rss_bytes = 1048576"), 3);
	assert_int_equal(q(fx, "SELECT count(*) FROM files WHERE path = '/data/x.fq' AND mode = 'rw' AND tgid = 42 "
			       "AND start_ns = 99"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM cgroups WHERE cgroup_id = 7 AND path = '/system.slice/job.scope'"),
			 1);
	assert_int_equal(q(fx, "SELECT kernel_drops FROM agent_counters"), 5);
	assert_int_equal(q(fx, "SELECT kernel_state_drops FROM agent_counters"), 2);
	assert_int_equal(q(fx, "SELECT ring_drops FROM agent_counters"), 5);
	assert_int_equal(q(fx, "SELECT json_extract(kernel_drops_by_type, '$[21]') FROM agent_counters"), 3);
	assert_int_equal(q(fx, "SELECT records_copied FROM agent_counters"), 1000);
	assert_int_equal(q(fx, "SELECT count(*) FROM losses WHERE reason = 'evicted' AND first_seq = 100 AND "
			       "last_seq = 199 AND records = 100 AND bytes = 12345"), 1);
}

/* ---- exactly once ------------------------------------------------------------ */

static void same_batch_twice_is_a_duplicate_and_stores_nothing(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;

	add_samples(fx, 1, 20);
	assert_int_equal(seal_frames(&fx->key, fx->host, 1, NULL, BATCH_COMP_NONE, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lookup_any_host, &fx->key, &h, hash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	assert_int_equal(store_batch_exists(fx->st, hash), 0);
	assert_int_equal(store_batch(fx->st, &h, hash, raw, raw_len, s.len, 1, &res), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(store_batch_exists(fx->st, hash), 1);
	assert_int_equal(store_batch(fx->st, &h, hash, raw, raw_len, s.len, 2, &res), STORE_OK);
	assert_true(res.duplicate);
	assert_int_equal(res.new_records, 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM batches"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 20);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples"), 20);
	assert_int_equal(q(fx, "SELECT batches FROM hosts"), 1);
	free(raw);
	free(s.wire);
}

static void reformed_batch_overlapping_stored_records_stores_only_the_new_ones(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;

	add_samples(fx, 1, 10);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	/* the spool lost its ledger and sends 6..15 again as another batch */
	add_samples(fx, 6, 10);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(res.records, 10);
	assert_int_equal(res.new_records, 5);
	assert_int_equal(res.dup_records, 5);
	assert_int_equal(res.conflicts, 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 15);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples"), 15);
	assert_int_equal(q(fx, "SELECT count(*) FROM batches"), 2);
	assert_int_equal(q(fx, "SELECT records_duplicate FROM batches ORDER BY batch_id DESC"), 5);
	/* each record names the batch that brought it first */
	assert_int_equal(q(fx, "SELECT count(DISTINCT batch_hash) FROM records WHERE seq <= 10"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM gaps"), 0);
	/* the same seq with other bytes: kept as it was, counted as a conflict */
	{
		struct tr_sample other = encode_sample(1, 1, 1, 1, 1, 1, 1);

		assert_true(frames_add(&fx->f, 3, TR_SAMPLE, &other, sizeof(other)));
		assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
		assert_int_equal(res.dup_records, 1);
		assert_int_equal(res.conflicts, 1);
		assert_int_equal(q(fx, "SELECT runtime_ns FROM samples WHERE seq = 3"), 3000000);
	}
}

static void records_are_keyed_by_host_so_two_hosts_share_seqs(void **state)
{
	struct fixture *fx = *state;
	uint8_t other[BATCH_HOST_ID_LEN];
	struct store_result res;

	host_id_of(other, 2);
	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, other, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 5);
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 10);
	assert_int_equal(q(fx, "SELECT count(*) FROM hosts"), 2);
}

/* ---- gaps -------------------------------------------------------------------- */

static void gaps_between_and_within_batches_are_recorded_and_filled(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;

	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 0);
	/* 6..8 never arrive; within the next batch 12..13 are missing too */
	add_samples(fx, 9, 3);
	add_samples(fx, 14, 1);
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 2);
	assert_int_equal(q(fx, "SELECT count(*) FROM gaps"), 2);
	assert_int_equal(q(fx, "SELECT count(*) FROM gaps WHERE from_seq = 6 AND to_seq = 8 AND filled = 0 "
			       "AND found_ns > 0"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM gaps WHERE from_seq = 12 AND to_seq = 13"), 1);
	assert_int_equal(q(fx, "SELECT gaps FROM batches WHERE batch_seq = 2"), 2);
	/* 7 turns up late: the gap says one of its three came */
	add_samples(fx, 7, 1);
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 0);
	assert_int_equal(q(fx, "SELECT filled FROM gaps WHERE from_seq = 6"), 1);
	assert_int_equal(q(fx, "SELECT max_seq FROM hosts"), 14);
}

/* ---- keys -------------------------------------------------------------------- */

static void key_announcement_enrols_the_new_key_for_the_same_host(void **state)
{
	struct fixture *fx = *state;
	struct batch_secret_key next, forged;
	struct tl_key_announce a, bad;
	uint8_t pk[BATCH_PUBKEY_LEN], host[BATCH_HOST_ID_LEN];
	struct store_result res;
	char text[80], expect[80];

	batch_key_generate(&next);
	batch_key_generate(&forged);
	assert_int_equal(store_rotation_key(fx->st, next.key_id, pk, host), STORE_E_NOT_FOUND);
	memset(&a, 0, sizeof(a));
	memcpy(a.new_key_id, next.key_id, sizeof(a.new_key_id));
	memcpy(a.new_public_key, next.public_key, sizeof(a.new_public_key));
	a.announced_ns = 5;
	bad = a;
	memcpy(bad.new_key_id, forged.key_id, sizeof(bad.new_key_id)); /* an id that is not this key's */
	assert_true(frames_add(&fx->f, 1, TL_KEY_ANNOUNCE, &a, sizeof(a)));
	assert_true(frames_add(&fx->f, 2, TL_KEY_ANNOUNCE, &bad, sizeof(bad)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.keys_enrolled, 1);
	assert_int_equal(res.keys_refused, 1);
	assert_int_equal(store_rotation_key(fx->st, next.key_id, pk, host), STORE_OK);
	assert_memory_equal(pk, next.public_key, sizeof(pk));
	assert_memory_equal(host, fx->host, sizeof(host));
	assert_int_equal(store_rotation_key(fx->st, forged.key_id, pk, host), STORE_E_NOT_FOUND);
	sql_text(fx->db, "SELECT announced_by FROM keys WHERE source = 'rotation'", text, sizeof(text));
	sodium_bin2hex(expect, sizeof(expect), fx->key.key_id, sizeof(fx->key.key_id));
	assert_string_equal(text, expect);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND note = 'key_id_mismatch'"), 1);
	/* announced again for another host: refused, the first enrolment stands */
	{
		uint8_t other[BATCH_HOST_ID_LEN];

		host_id_of(other, 3);
		assert_true(frames_add(&fx->f, 1, TL_KEY_ANNOUNCE, &a, sizeof(a)));
		assert_int_equal(store_sealed(fx, other, 1, &res, NULL), STORE_OK);
		assert_int_equal(res.keys_enrolled, 0);
		assert_int_equal(res.keys_refused, 1);
		assert_int_equal(store_rotation_key(fx->st, next.key_id, pk, host), STORE_OK);
		assert_memory_equal(host, fx->host, sizeof(host));
	}
}

static void a_file_key_noted_in_the_lake_is_not_a_rotation_key(void **state)
{
	struct fixture *fx = *state;
	uint8_t pk[BATCH_PUBKEY_LEN], host[BATCH_HOST_ID_LEN];

	assert_int_equal(store_note_file_key(fx->st, fx->key.key_id, fx->key.public_key, fx->host, 1), STORE_OK);
	assert_int_equal(store_note_file_key(fx->st, fx->key.key_id, fx->key.public_key, fx->host, 2), STORE_OK);
	assert_int_equal(q(fx, "SELECT count(*) FROM keys WHERE source = 'file' AND enrolled_ns = 1"), 1);
	/* removing a key from the file must revoke it: the lake's copy does not vouch for it */
	assert_int_equal(store_rotation_key(fx->st, fx->key.key_id, pk, host), STORE_E_NOT_FOUND);
}

/* ---- run reports ------------------------------------------------------------- */

static const char good_report[] =
	"{\"report\":{\"schema\":\"tracer.run.v1\",\"command\":[\"bash\",\"-c\",\"make all\"],\"exit_code\":1,"
	"\"start_ns\":1700000000000000000,\"end_ns\":1700000002500000000,\"agent\":{\"dropped\":4},"
	"\"run\":{\"run_id\":\"nf-7\",\"pipeline\":\"rnaseq\",\"engine\":\"nextflow\",\"run_name\":\"happy\"},"
	"\"processes\":[{\"pid\":10,\"ppid\":1,\"start_ns\":1,\"end_ns\":2,\"exe\":\"/usr/bin/samtools\","
	"\"argv\":[\"samtools\",\"sort\"],\"tool\":\"samtools sort\",\"step\":\"s1\",\"exit_code\":null,"
	"\"signal\":9,\"oom_killed\":true,\"cpu_user_ns\":5,\"peak_rss_bytes\":100},"
	"{\"pid\":\"eleven\",\"exe\":7}, 42],"
	"\"steps\":[{\"id\":\"s1\",\"name\":\"SORT\",\"tools\":[\"samtools sort\"],\"start_ns\":1,\"end_ns\":2,"
	"\"failed\":true,\"processes\":1}],"
	"\"signals\":[{\"kind\":\"oom_kill\",\"pid\":10,\"step\":\"s1\",\"tool\":\"samtools sort\","
	"\"anon_rss_kb\":123},{\"kind\":\"failed\",\"pid\":11,\"step\":null,\"tool\":\"bash\",\"exit_code\":1},"
	"{\"kind\":5}]},"
	"\"summary\":\"tracer: bash -c make all exited 1\\nsignals: 2\\n\"}";

static int count_runs(void *ctx, const struct store_run *r)
{
	struct store_run *last = ctx;

	*last = *r;
	last->command = NULL;
	last->summary = NULL;
	return 0;
}

static void run_report_fills_runs_steps_processes_and_signals(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;
	struct store_run last;
	char text[256];

	assert_true(frames_add(&fx->f, 1, TL_RUN_REPORT, good_report, sizeof(good_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	assert_int_equal(res.bad_reports, 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(q(fx, "SELECT exit_code FROM runs"), 1);
	assert_int_equal(q(fx, "SELECT duration_ns FROM runs"), 2500000000);
	assert_int_equal(q(fx, "SELECT dropped FROM runs"), 4);
	sql_text(fx->db, "SELECT command || '|' || pipeline_run_id || '|' || engine FROM runs", text, sizeof(text));
	assert_string_equal(text, "[\"bash\",\"-c\",\"make all\"]|nf-7|nextflow");
	sql_text(fx->db, "SELECT summary FROM runs", text, sizeof(text));
	assert_string_equal(text, "tracer: bash -c make all exited 1\nsignals: 2\n");
	/* objects only, each value only if of its type */
	assert_int_equal(q(fx, "SELECT count(*) FROM run_processes"), 2);
	assert_int_equal(q(fx, "SELECT signal FROM run_processes WHERE idx = 0"), 9);
	assert_int_equal(q(fx, "SELECT oom_killed FROM run_processes WHERE idx = 0"), 1);
	assert_int_equal(q(fx, "SELECT exit_code IS NULL FROM run_processes WHERE idx = 0"), 1);
	assert_int_equal(q(fx, "SELECT pid IS NULL AND exe IS NULL FROM run_processes WHERE idx = 1"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM steps WHERE step_id = 's1' AND name = 'SORT' AND failed = 1"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM signals WHERE run_id = 1 AND source = 'run_report'"), 2);
	assert_int_equal(q(fx, "SELECT json_extract(detail, '$.anon_rss_kb') FROM signals WHERE kind = 'oom_kill'"),
			 123);
	/* read back as tracer report does: by number and by the pipeline's run id */
	assert_int_equal(store_runs(fx->st, count_runs, &last), STORE_OK);
	assert_int_equal(last.run_id, 1);
	assert_true(last.has_exit && last.exit_code == 1);
	assert_int_equal(store_run(fx->st, "1", count_runs, &last), STORE_OK);
	assert_int_equal(store_run(fx->st, "nf-7", count_runs, &last), STORE_OK);
	assert_int_equal(last.run_id, 1);
	assert_int_equal(store_run(fx->st, "2", count_runs, &last), STORE_E_NOT_FOUND);
}

static void run_report_that_is_not_json_is_counted_and_the_batch_still_stored(void **state)
{
	struct fixture *fx = *state;
	static const char *const bad[] = {
		"{\"report\": {\"command\": [\"x\"",     /* cut short */
		"[1, 2, 3]",                             /* not an object */
		"{\"report\": [1]}",                     /* report not an object */
		"{\"summary\": \"no report\"}",
		"{\"report\": {\"command\": \"\xff\xfe\"}}", /* not UTF-8 */
		"",
	};
	static const char with_nul[] = "{\"report\": {}}\0{}";
	struct store_result res;
	uint64_t seq = 1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(frames_add(&fx->f, seq++, TL_RUN_REPORT, bad[i], (uint32_t)strlen(bad[i])));
	assert_true(frames_add(&fx->f, seq++, TL_RUN_REPORT, with_nul, sizeof(with_nul) - 1));
	add_samples(fx, seq, 2);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_reports, 7);
	assert_int_equal(res.runs, 0);
	assert_int_equal(res.new_records, 9);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE note = 'bad_run_report'"), 7);
	assert_int_equal(q(fx, "SELECT bad_run_reports FROM batches"), 7);
	assert_int_equal(q(fx, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples"), 2);
}

static void unknown_and_undecodable_records_are_kept_in_records_only(void **state)
{
	struct fixture *fx = *state;
	struct tr_exit ex = make_exit(500, 42, 99, 41, 0, 0);
	struct tr_exit zero_pid = make_exit(500, 0, 99, 41, 0, 0);
	struct store_result res;
	uint8_t junk[3] = { 1, 2, 3 };

	assert_true(frames_add(&fx->f, 1, 200, junk, sizeof(junk)));             /* a type from the future */
	assert_true(frames_add(&fx->f, 2, TR_EXIT, &ex, sizeof(ex) - 8));         /* short */
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &zero_pid, sizeof(zero_pid))); /* pid 0 */
	assert_true(frames_add(&fx->f, 4, TL_LOSS, junk, sizeof(junk)));         /* wrong size */
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 4);
	assert_int_equal(res.unknown, 1);
	assert_int_equal(res.undecodable, 3);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE note IS NOT NULL"), 4);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE seq = 1 AND note = 'unknown_type'"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND note = 'length'"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM records WHERE seq = 3 AND note = 'pid'"), 1);
	assert_int_equal(q(fx, "SELECT count(*) FROM processes"), 0);
	assert_int_equal(q(fx, "SELECT count(*) FROM losses"), 0);
	assert_int_equal(q(fx, "SELECT records_unknown + records_undecodable FROM batches"), 4);
}

/* ---- the file ------------------------------------------------------------------- */

static void lake_reopens_and_refuses_other_versions_and_other_files(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;
	struct store *ro = NULL, *again = NULL;
	char err[512], path[128];
	FILE *f;

	add_samples(fx, 1, 3);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	/* a reader while the writer has it open (WAL) */
	assert_int_equal(store_open(&ro, fx->db, true, err, sizeof(err)), STORE_OK);
	assert_int_equal(store_batch(ro, NULL, NULL, NULL, 0, 0, 0, &res), STORE_E_READONLY);
	store_close(ro);
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&again, fx->db, false, err, sizeof(err)), STORE_OK);
	fx->st = again;
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 3);
	sql_text(fx->db, "PRAGMA journal_mode", err, sizeof(err));
	assert_string_equal(err, "wal");

	/* a lake of another version */
	snprintf(path, sizeof(path), "%s/v99.db", fx->dir);
	assert_int_equal(store_open(&ro, path, false, err, sizeof(err)), STORE_OK);
	store_close(ro);
	{
		sqlite3 *db;

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	assert_int_equal(store_open(&ro, path, false, err, sizeof(err)), STORE_E_SCHEMA);
	assert_non_null(strstr(err, "version 99"));
	/* not a database; missing (read-only: never created) */
	snprintf(path, sizeof(path), "%s/text.db", fx->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("this is not a database, just some text long enough to have a header......\n", f);
	fclose(f);
	assert_true(store_open(&ro, path, false, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, path));
	snprintf(path, sizeof(path), "%s/missing.db", fx->dir);
	assert_int_equal(store_open(&ro, path, true, err, sizeof(err)), STORE_E_OPEN);
	assert_non_null(strstr(err, "missing.db"));
	assert_int_equal(access(path, F_OK), -1);
}

/*
 * An exit gives the final image's own peak (NULL when the kernel had
 * released it: TR_EXIT_NO_IMAGE_PEAK) next to rusage's, and its memory
 * cgroup's peak; a version-2 record (an old spool) is stored, peak unknown.
 */
static void exits_store_the_images_own_peak_and_old_records_say_unknown(void **state)
{
	struct fixture *fx = *state;
	struct tr_exit own = make_exit(500, 42, 99, 41, 0, 1000);
	struct tr_exit gone = make_exit(600, 43, 120, 41, 0, 2000);
	struct tr_exit old = make_exit(700, 44, 130, 41, 0, 3000);
	struct store_result res;

	own.image_peak_rss_bytes = 8 << 20;
	own.memcg_peak_bytes = 64 << 20;
	gone.flags |= TR_EXIT_NO_IMAGE_PEAK;
	old.hdr.version = 2;
	assert_true(frames_add(&fx->f, 1, TR_EXIT, &own, sizeof(own)));
	assert_true(frames_add(&fx->f, 2, TR_EXIT, &gone, sizeof(gone)));
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &old, TR_EXIT_V2_SIZE));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.undecodable, 0);
	assert_int_equal(q(fx, "SELECT peak_rss_bytes FROM processes WHERE tgid = 42"), 8 << 20);
	assert_int_equal(q(fx, "SELECT maxrss_bytes FROM processes WHERE tgid = 42"), 1004);
	assert_int_equal(q(fx, "SELECT memcg_peak_bytes FROM processes WHERE tgid = 42"), 64 << 20);
	assert_int_equal(q(fx, "SELECT peak_rss_bytes IS NULL AND memcg_peak_bytes IS NULL FROM processes "
			       "WHERE tgid = 43"), 1);
	assert_int_equal(q(fx, "SELECT peak_rss_bytes IS NULL AND maxrss_bytes = 3004 FROM processes WHERE tgid = 44"),
			 1);
}

/* A lake of schema version 1 gains version 2's columns when the ingest opens it, keeping its rows. */
static void version_1_lake_is_upgraded_in_place_and_keeps_its_rows(void **state)
{
	struct fixture *fx = *state;
	static const char *const v2_columns[][2] = {
		{ "processes", "peak_rss_bytes" },	   { "processes", "memcg_peak_bytes" },
		{ "steps", "rss_sum_of_peaks_bytes" },	   { "steps", "peak_rss_partial" },
		{ "steps", "memcg_peak_bytes" },	   { "run_processes", "maxrss_rusage_bytes" },
		{ "run_processes", "peak_rss_source" },
	};
	struct store_result res;
	struct store *ro = NULL;
	char err[512], sql[128];
	sqlite3 *db;

	add_samples(fx, 1, 3);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	store_close(fx->st);
	fx->st = NULL;
	/* back to version 1: without the columns version 2 added */
	assert_int_equal(sqlite3_open(fx->db, &db), SQLITE_OK);
	for (size_t i = 0; i < sizeof(v2_columns) / sizeof(v2_columns[0]); i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s DROP COLUMN %s", v2_columns[i][0], v2_columns[i][1]);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	assert_int_equal(sqlite3_exec(db, "UPDATE schema_version SET version = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	/* a reader cannot upgrade it: it says which version it found */
	assert_int_equal(store_open(&ro, fx->db, true, err, sizeof(err)), STORE_E_SCHEMA);
	assert_non_null(strstr(err, "version 1"));
	assert_int_equal(store_open(&fx->st, fx->db, false, err, sizeof(err)), STORE_OK);
	assert_int_equal(q(fx, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(q(fx, "SELECT count(*) FROM records"), 3);
	for (size_t i = 0; i < sizeof(v2_columns) / sizeof(v2_columns[0]); i++) {
		assert_int_equal(q(fx, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
				   v2_columns[i][0], v2_columns[i][1]), 1);
	}
}

/* ---- speed ----------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prints the figure docs/lake.md quotes; asserts only that it finishes. */
static void ten_thousand_samples_are_stored_in_one_transaction(void **state)
{
	struct fixture *fx = *state;
	struct store_result res;
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	double best = 1e9;

	for (int round = 0; round < 3; round++) {
		double t0;

		add_samples(fx, 1 + (uint64_t)round * 10000, 10000);
		assert_int_equal(seal_frames(&fx->key, fx->host, 1 + (uint64_t)round, NULL, BATCH_COMP_ZLIB, &fx->f, &s),
				 0);
		frames_reset(&fx->f);
		assert_int_equal(batch_verify(s.wire, s.len, lookup_any_host, &fx->key, &h, hash), 0);
		assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
		t0 = now_s();
		assert_int_equal(store_batch(fx->st, &h, hash, raw, raw_len, s.len, 1, &res), STORE_OK);
		if (now_s() - t0 < best)
			best = now_s() - t0;
		assert_int_equal(res.new_records, 10000);
		free(raw);
		free(s.wire);
	}
	printf("ingest.store.samples_10k.records_per_s %.0f rec/s\n", 10000 / best);
	assert_int_equal(q(fx, "SELECT count(*) FROM samples"), 30000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(batch_stores_every_record_once_with_its_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_fork_exit_make_one_process_with_its_exit_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(oom_kill_marks_the_victim_and_is_its_only_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(samples_files_cgroups_counters_and_losses_fill_their_tables, setup,
						teardown),
		cmocka_unit_test_setup_teardown(same_batch_twice_is_a_duplicate_and_stores_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(reformed_batch_overlapping_stored_records_stores_only_the_new_ones, setup,
						teardown),
		cmocka_unit_test_setup_teardown(records_are_keyed_by_host_so_two_hosts_share_seqs, setup, teardown),
		cmocka_unit_test_setup_teardown(gaps_between_and_within_batches_are_recorded_and_filled, setup, teardown),
		cmocka_unit_test_setup_teardown(key_announcement_enrols_the_new_key_for_the_same_host, setup, teardown),
		cmocka_unit_test_setup_teardown(a_file_key_noted_in_the_lake_is_not_a_rotation_key, setup, teardown),
		cmocka_unit_test_setup_teardown(exit_records_raise_killed_for_a_real_kill_only, setup, teardown),
		cmocka_unit_test_setup_teardown(run_report_fills_runs_steps_processes_and_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(run_report_that_is_not_json_is_counted_and_the_batch_still_stored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unknown_and_undecodable_records_are_kept_in_records_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lake_reopens_and_refuses_other_versions_and_other_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(exits_store_the_images_own_peak_and_old_records_say_unknown, setup,
						teardown),
		cmocka_unit_test_setup_teardown(version_1_lake_is_upgraded_in_place_and_keeps_its_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(ten_thousand_samples_are_stored_in_one_transaction, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
