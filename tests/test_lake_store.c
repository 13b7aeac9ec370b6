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
 * in records, and does not cost the batch. Live records (TL_RUN) make and
 * update a run by its key (a higher update only), upsert its steps in
 * their first place, attribute processes whatever the order of their
 * kernel records, keep their signals; a bad one is noted and counted; a
 * new boot makes the host's running runs lost; a report with the run's
 * key takes over its live row. The host a run ran on and its user come
 * from both, and a record without them keeps what an earlier one gave.
 * Lakes of versions 1, 2, 3 and 6 are upgraded to exactly this version's
 * schema, keeping their rows; a new lake is exactly lake/schema.c's table. A process's and a sample's time in direct
 * reclaim is stored, NULL where it was not measured. Which records are new is decided without a statement
 * per record: a batch across stored seqs, a gap and new ones, a seq repeated within a batch, seqs across
 * 2^63 each count once (duplicates, conflicts); a record's note is in its row; the rows written in bulk
 * (PostgreSQL: COPY) keep their text UTF-8 (U+FFFD for other bytes and NUL), every payload byte and
 * int64's ends; a report's record is in the lake before a live record of its run in the same batch asks;
 * thousands of records of every bulk table in one batch; on PostgreSQL, a row refused where the store
 * does not wait (a queued upsert, a COPY) fails its batch and leaves nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "decode.h"
#include "schema.h"
#include "store.h"
#include "lake_fixture.h"
#include "test_ingest_helpers.h"


static int setup(void **state)
{
	return lake_fixture_setup(state, "/tmp/test_lake_store.XXXXXX");
}

#define lake_lookup_any_host lake_lookup_any_host

/* The fixture's frames as one stored batch of host; the frames reset after. */
static int store_sealed(struct lake_fixture *fx, const uint8_t *host, uint64_t batch_seq, struct store_result *res,
			uint8_t hash[BATCH_HASH_LEN])
{
	int rc = lake_store_sealed(fx, host, batch_seq, 1700000000000000000ull + batch_seq, res, hash);

	frames_reset(&fx->f);
	return rc;
}


static void add_samples(struct lake_fixture *fx, uint64_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* contents a function of the seq: the same seq sent twice is the same record */
		struct tr_sample s = encode_sample(1000 + first + i, 4242, 900, 1, 1000000 * (first + i), 1 << 20, first + i);

		assert_true(frames_add_src(&fx->f, first + i, 64 * (first + i), 3, TR_SAMPLE, &s, sizeof(s)));
	}
}

/* Every stored record's crc, recomputed from its stored fields and bytes: how many agree. */
static int64_t crcs_recomputed(struct lake_fixture *fx)
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

		if (!payload) /* an empty blob (zlib's crc32 of NULL is its start, not the crc so far) */
			payload = "";
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
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 50);
	assert_int_equal(lake_q(fx, "SELECT count(DISTINCT seq) FROM records"), 50);
	assert_int_equal(lake_q(fx, "SELECT min(seq) FROM records"), 1);
	assert_int_equal(lake_q(fx, "SELECT max(seq) FROM records"), 50);
	assert_int_equal(lake_q(fx, "SELECT sum(crc) FROM records"), (int64_t)crc_sum);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE len = %zu AND length(payload) = len",
			   sizeof(struct tr_sample)), 50);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note IS NULL AND ts_ns IS NOT NULL"), 50);
	/* the crc is recomputable from what the lake holds: the ring position is kept with the record */
	assert_int_equal(lake_q(fx, "SELECT src_pos FROM records WHERE seq = 7"), 64 * 7);
	assert_int_equal(lake_q(fx, "SELECT src_gen FROM records WHERE seq = 7"), 3);
	assert_int_equal(crcs_recomputed(fx), 50);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 50);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches WHERE records_new = 50 AND chain = 'first'"), 1);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), 50);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records r JOIN batches b ON b.hash = r.batch_hash"), 50);
	/* the derived row is the record's */
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 7"), 7000000);
}

/*
 * A path is any bytes but NUL: the lake's text is UTF-8 (PostgreSQL's can be nothing else), so a byte
 * that is not becomes U+FFFD, as the JSON the lake writes shows it; the record keeps the bytes.
 */
static void a_path_that_is_not_utf8_is_stored_with_u_fffd(void **state)
{
	struct lake_fixture *fx = *state;
	static const char *const args[] = { "tool", "caf\xe9", NULL };
	_Alignas(8) uint8_t buf[DECODE_MAX_LEN];
	struct store_result res;
	char text[512];
	size_t n;

	n = encode_exec(buf, sizeof(buf), 200, 42, 41, 99, "/data/caf\xe9/t\xc3\xa9l\xff", args);
	assert_true(frames_add(&fx->f, 1, TR_EXEC, buf, (uint32_t)n));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.undecodable, 0);
	sql_text_of(fx->db, "SELECT exe || '|' || argv FROM processes WHERE tgid = 42", text, sizeof(text));
	assert_string_equal(text, "/data/caf\xef\xbf\xbd/t\xc3\xa9l\xef\xbf\xbd|[\"tool\",\"caf\xef\xbf\xbd\"]");
	assert_int_equal(lake_q(fx, "SELECT instr(payload, CAST(X'ff' AS BLOB)) > 0 FROM records WHERE seq = 1"), 1);
}

static void exec_fork_exit_make_one_process_with_its_exit_figures(void **state)
{
	struct lake_fixture *fx = *state;
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

	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 2);
	sql_text_of(fx->db, "SELECT exe || '|' || argv || '|' || comm FROM processes WHERE tgid = 42", text, sizeof(text));
	assert_string_equal(text, "/usr/bin/samtools|[\"samtools\",\"sort\",\"-o\",\"out.bam\",\"in \\\"q\\\".bam\"]|"
				  "samtools");
	assert_int_equal(lake_q(fx, "SELECT json_array_length(argv) FROM processes WHERE tgid = 42"), 5);
	assert_int_equal(lake_q(fx, "SELECT ppid FROM processes WHERE tgid = 42"), 41);
	assert_int_equal(lake_q(fx, "SELECT parent_start_ns FROM processes WHERE tgid = 42"), 50);
	assert_int_equal(lake_q(fx, "SELECT fork_ts_ns FROM processes WHERE tgid = 42"), 100);
	assert_int_equal(lake_q(fx, "SELECT exec_ts_ns FROM processes WHERE tgid = 42"), 200);
	assert_int_equal(lake_q(fx, "SELECT exit_ts_ns FROM processes WHERE tgid = 42"), 500);
	assert_int_equal(lake_q(fx, "SELECT exit_code FROM processes WHERE tgid = 42"), 3);
	assert_int_equal(lake_q(fx, "SELECT signal FROM processes WHERE tgid = 42"), 0);
	assert_int_equal(lake_q(fx, "SELECT utime_ns FROM processes WHERE tgid = 42"), 1001);
	assert_int_equal(lake_q(fx, "SELECT stime_ns FROM processes WHERE tgid = 42"), 1002);
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM processes WHERE tgid = 42"), 1003);
	assert_int_equal(lake_q(fx, "SELECT maxrss_bytes FROM processes WHERE tgid = 42"), 1004);
	assert_int_equal(lake_q(fx, "SELECT read_bytes FROM processes WHERE tgid = 42"), 1005);
	assert_int_equal(lake_q(fx, "SELECT write_bytes FROM processes WHERE tgid = 42"), 1006);
	assert_int_equal(lake_q(fx, "SELECT rchar + wchar FROM processes WHERE tgid = 42"), 1008 + 1009);
	assert_int_equal(lake_q(fx, "SELECT nvcsw FROM processes WHERE tgid = 42"), 1012);
	assert_int_equal(lake_q(fx, "SELECT run_delay_ns FROM processes WHERE tgid = 42"), 1016);
	assert_int_equal(lake_q(fx, "SELECT net_tx_bytes + net_rx_bytes FROM processes WHERE tgid = 42"), 1020 + 1021);
	assert_int_equal(lake_q(fx, "SELECT iowait_ns FROM processes WHERE tgid = 42"), 1022);
	assert_int_equal(lake_q(fx, "SELECT start_real_ns FROM processes WHERE tgid = 42"), 1600000000000000000ll + 99);
	assert_int_equal(lake_q(fx, "SELECT end_real_ns FROM processes WHERE tgid = 42"), 1600000000000000000ll + 500);
	/* killed by SIGKILL with a core: no exit code, the signal and the core */
	assert_int_equal(lake_q(fx, "SELECT exit_code IS NULL FROM processes WHERE tgid = 43"), 1);
	assert_int_equal(lake_q(fx, "SELECT signal FROM processes WHERE tgid = 43"), 9);
	assert_int_equal(lake_q(fx, "SELECT core_dumped FROM processes WHERE tgid = 43"), 1);
	/* signals from exit statuses: the kill only (exit_records_raise_killed_for_a_real_kill_only) */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 43 AND run_id IS NULL AND "
			       "json_extract(detail, '$.signal') = 9 AND json_extract(detail, '$.core_dumped')"), 1);
}

/*
 * A record says how a process ended, not whether that failed anything:
 * exit 1 (grep -q that found nothing) and SIGPIPE (a writer whose reader
 * went away) raise nothing; SIGTERM and SIGSEGV are kills.
 */
static void exit_records_raise_killed_for_a_real_kill_only(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE kind = 'failed'"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE pid IN (42, 43, 44)"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 45 AND "
			       "json_extract(detail, '$.signal') = 15"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE kind = 'killed' AND pid = 46 AND "
			       "json_extract(detail, '$.signal') = 11 AND json_extract(detail, '$.core_dumped')"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals"), 2);
}

static void oom_kill_marks_the_victim_and_is_its_only_signal(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_fork fk = make_fork(100, 1, 10, 77, 150);
	struct tr_oom oom = make_oom(300, 77, 4096);
	struct tr_exit ex = make_exit(310, 77, 150, 1, 9, 0);
	struct store_result res;

	assert_true(frames_add(&fx->f, 1, TR_FORK, &fk, sizeof(fk)));
	assert_true(frames_add(&fx->f, 2, TR_OOM, &oom, sizeof(oom)));
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &ex, sizeof(ex)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT oom_killed FROM processes WHERE tgid = 77"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE kind = 'oom_kill' AND pid = 77 AND start_ns = 150 "
			       "AND json_extract(detail, '$.anon_rss_kb') = 4096"), 1);
}

static void samples_files_cgroups_counters_and_losses_fill_their_tables(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples WHERE tgid = 4242 AND rss_bytes = 1048576"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM files WHERE path = '/data/x.fq' AND mode = 'rw' AND tgid = 42 "
			       "AND start_ns = 99"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM cgroups WHERE cgroup_id = 7 AND path = '/system.slice/job.scope'"),
			 1);
	assert_int_equal(lake_q(fx, "SELECT kernel_drops FROM agent_counters"), 5);
	assert_int_equal(lake_q(fx, "SELECT kernel_state_drops FROM agent_counters"), 2);
	assert_int_equal(lake_q(fx, "SELECT ring_drops FROM agent_counters"), 5);
	assert_int_equal(lake_q(fx, "SELECT json_extract(kernel_drops_by_type, '$[21]') FROM agent_counters"), 3);
	assert_int_equal(lake_q(fx, "SELECT records_copied FROM agent_counters"), 1000);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM losses WHERE reason = 'evicted' AND first_seq = 100 AND "
			       "last_seq = 199 AND records = 100 AND bytes = 12345"), 1);
	/* every row a record made carries when its batch came, as the record does (the day partition) */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE received_ns > 0"), 7);
	assert_int_equal(lake_q(fx, "SELECT (SELECT count(*) FROM samples s JOIN records r USING (host_id, stream, "
			       "seq) WHERE s.received_ns = r.received_ns) + (SELECT count(*) FROM files f JOIN "
			       "records r USING (host_id, stream, seq) WHERE f.received_ns = r.received_ns) + "
			       "(SELECT count(*) FROM agent_counters a JOIN records r USING (host_id, stream, seq) "
			       "WHERE a.received_ns = r.received_ns) + (SELECT count(*) FROM losses l JOIN records r "
			       "USING (host_id, stream, seq) WHERE l.received_ns = r.received_ns)"), 3 + 1 + 1 + 1);
}

static int newest_drops(void *ctx, const struct store_host *h)
{
	int64_t *out = ctx;

	out[0] = h->kernel_drops.known ? h->kernel_drops.v : -1;
	out[1] = h->ring_drops.known ? h->ring_drops.v : -1;
	return 0;
}

/*
 * A host's drops on tracer-web are its newest counters: those received last, whatever their stream (a new
 * spool's stream counts its seqs from 1 again, below the old stream's), by seq within a batch.
 */
static void a_hosts_newest_counters_are_those_received_last_of_any_stream(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct tr_counters k;
	int64_t got[2] = { 0, 0 };

	memset(&k, 0, sizeof(k));
	k.hdr = encode_hdr(TR_COUNTERS, 1);
	k.kernel_drops[TR_EXEC] = 7;
	k.ring_drops[TR_EXEC] = 70;
	assert_true(frames_add(&fx->f, 50, TR_COUNTERS, &k, sizeof(k)));
	k.kernel_drops[TR_EXEC] = 8; /* the batch's newer row: its higher seq */
	assert_true(frames_add(&fx->f, 51, TR_COUNTERS, &k, sizeof(k)));
	assert_int_equal(lake_store_sealed(fx, fx->host, 1, 1700000000000000000ull, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(store_hosts(fx->st, newest_drops, got), STORE_OK);
	assert_int_equal(got[0], 8);
	assert_int_equal(got[1], 70);
	fx->f.stream = 0x99; /* the collector restarted with a new spool: seqs from 1, received later */
	k.kernel_drops[TR_EXEC] = 2;
	k.ring_drops[TR_EXEC] = 3;
	assert_true(frames_add(&fx->f, 1, TR_COUNTERS, &k, sizeof(k)));
	assert_int_equal(lake_store_sealed(fx, fx->host, 1, 1700000000000000000ull + 1000000000, &res, NULL),
			 STORE_OK);
	frames_reset(&fx->f);
	fx->f.stream = 0;
	assert_int_equal(store_hosts(fx->st, newest_drops, got), STORE_OK);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[1], 3);
}

/* ---- exactly once ------------------------------------------------------------ */

static void same_batch_twice_is_a_duplicate_and_stores_nothing(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;

	add_samples(fx, 1, 20);
	assert_int_equal(seal_frames(&fx->key, fx->host, 1, NULL, BATCH_COMP_NONE, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, hash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	assert_int_equal(store_batch_exists(fx->st, hash), 0);
	assert_int_equal(lake_store_raw(fx, &h, hash, raw, raw_len, s.len, 1, &res), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(store_batch_exists(fx->st, hash), 1);
	assert_int_equal(lake_store_raw(fx, &h, hash, raw, raw_len, s.len, 2, &res), STORE_OK);
	assert_true(res.duplicate);
	assert_int_equal(res.new_records, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 20);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 20);
	assert_int_equal(lake_q(fx, "SELECT batches FROM hosts"), 1);
	free(raw);
	free(s.wire);
}

static void reformed_batch_overlapping_stored_records_stores_only_the_new_ones(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 15);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 15);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches"), 2);
	assert_int_equal(lake_q(fx, "SELECT records_duplicate FROM batches ORDER BY batch_id DESC"), 5);
	/* each record names the batch that brought it first */
	assert_int_equal(lake_q(fx, "SELECT count(DISTINCT batch_hash) FROM records WHERE seq <= 10"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 0);
	/* the same seq with other bytes: kept as it was, counted as a conflict */
	{
		struct tr_sample other = encode_sample(1, 1, 1, 1, 1, 1, 1);

		assert_true(frames_add(&fx->f, 3, TR_SAMPLE, &other, sizeof(other)));
		assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
		assert_int_equal(res.dup_records, 1);
		assert_int_equal(res.conflicts, 1);
		assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 3"), 3000000);
	}
}

static void records_are_keyed_by_host_so_two_hosts_share_seqs(void **state)
{
	struct lake_fixture *fx = *state;
	uint8_t other[BATCH_HOST_ID_LEN];
	struct store_result res;

	host_id_of(other, 2);
	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, other, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 10);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM hosts"), 2);
}

/*
 * Two spools of one host (the daemons' and a tracer run's) count their seqs each from 1: the lake keys
 * records by host, stream and seq, so both are stored, each once; each stream has its own seqs, gaps and
 * chain of batches.
 */
static void two_streams_of_a_host_share_seqs_each_stored_once(void **state)
{
	struct lake_fixture *fx = *state;
	uint8_t first[BATCH_HASH_LEN], h[BATCH_HASH_LEN];
	struct store_result res;

	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	fx->f.stream = 0x1234;
	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, first), STORE_OK);
	assert_int_equal(res.new_records, 5);
	assert_int_equal(res.dup_records, 0);
	/* the same records of stream 0x1234 again, in another batch: duplicates */
	add_samples(fx, 3, 3);
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 0);
	assert_int_equal(res.dup_records, 3);
	assert_int_equal(res.conflicts, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 10);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 10);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE stream = 4660"), 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM hosts"), 1);
	assert_int_equal(lake_q(fx, "SELECT batches FROM hosts"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM streams WHERE max_seq = 5"), 2);
	assert_int_equal(lake_q(fx, "SELECT batches || records FROM streams WHERE stream = 4660"), 25);
	/* a gap is its stream's: 6..7 missing from 0x1234 only */
	add_samples(fx, 8, 1);
	assert_int_equal(lake_store_sealed(fx, fx->host, 3, 1700000000000000003ull, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(res.gaps, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps WHERE stream = 4660 AND from_seq = 6 AND to_seq = 7"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 1);
	/* the chain: a batch after 0x1234's first is linked in 0x1234, broken in stream 0 */
	add_samples(fx, 9, 1);
	assert_int_equal(lake_store_chained(fx, fx->host, 4, first, 1700000000000000004ull, &res, h), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches WHERE stream = 4660 AND batch_seq = 4 AND "
			       "chain = 'linked'"), 1);
	fx->f.stream = 0;
	add_samples(fx, 6, 1);
	assert_int_equal(lake_store_chained(fx, fx->host, 2, first, 1700000000000000005ull, &res, h), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches WHERE stream = 0 AND batch_seq = 2 AND "
			       "chain = 'broken'"), 1);
}

/* ---- gaps -------------------------------------------------------------------- */

static void gaps_between_and_within_batches_are_recorded_and_filled(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;

	add_samples(fx, 1, 5);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 0);
	/* 6..8 never arrive; within the next batch 12..13 are missing too */
	add_samples(fx, 9, 3);
	add_samples(fx, 14, 1);
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps WHERE from_seq = 6 AND to_seq = 8 AND filled = 0 "
			       "AND found_ns > 0"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps WHERE from_seq = 12 AND to_seq = 13"), 1);
	assert_int_equal(lake_q(fx, "SELECT gaps FROM batches WHERE batch_seq = 2"), 2);
	/* 7 turns up late: the gap says one of its three came */
	add_samples(fx, 7, 1);
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 0);
	assert_int_equal(lake_q(fx, "SELECT filled FROM gaps WHERE from_seq = 6"), 1);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), 14);
}

/* ---- keys -------------------------------------------------------------------- */

static void key_announcement_enrols_the_new_key_for_the_same_host(void **state)
{
	struct lake_fixture *fx = *state;
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
	sql_text_of(fx->db, "SELECT announced_by FROM keys WHERE source = 'rotation'", text, sizeof(text));
	sodium_bin2hex(expect, sizeof(expect), fx->key.key_id, sizeof(fx->key.key_id));
	assert_string_equal(text, expect);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND note = 'key_id_mismatch'"), 1);
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
	struct lake_fixture *fx = *state;
	uint8_t pk[BATCH_PUBKEY_LEN], host[BATCH_HOST_ID_LEN];

	assert_int_equal(lake_note_file_key(fx, 1), STORE_OK);
	assert_int_equal(lake_note_file_key(fx, 2), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM keys WHERE source = 'file' AND enrolled_ns = 1"), 1);
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

	memset(last, 0, sizeof(*last));
	last->run_id = r->run_id;
	last->exit_code = r->exit_code;
	last->has_stored_report = r->has_stored_report;
	return 0;
}

static void run_report_fills_runs_steps_processes_and_signals(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct store_run last = { 0 };
	char text[256];

	assert_true(frames_add(&fx->f, 1, TL_RUN_REPORT, good_report, sizeof(good_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	assert_int_equal(res.bad_reports, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT exit_code FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT duration_ns FROM runs"), 2500000000);
	assert_int_equal(lake_q(fx, "SELECT dropped FROM runs"), 4);
	sql_text_of(fx->db, "SELECT command || '|' || pipeline_run_id || '|' || engine FROM runs", text, sizeof(text));
	assert_string_equal(text, "[\"bash\",\"-c\",\"make all\"]|nf-7|nextflow");
	sql_text_of(fx->db, "SELECT summary FROM runs", text, sizeof(text));
	assert_string_equal(text, "tracer: bash -c make all exited 1\nsignals: 2\n");
	/* objects only, each value only if of its type */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM run_processes"), 2);
	assert_int_equal(lake_q(fx, "SELECT signal FROM run_processes WHERE idx = 0"), 9);
	assert_int_equal(lake_q(fx, "SELECT oom_killed FROM run_processes WHERE idx = 0"), 1);
	assert_int_equal(lake_q(fx, "SELECT exit_code IS NULL FROM run_processes WHERE idx = 0"), 1);
	assert_int_equal(lake_q(fx, "SELECT pid IS NULL AND exe IS NULL FROM run_processes WHERE idx = 1"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE step_id = 's1' AND name = 'SORT' AND failed = 1"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE run_id = 1 AND source = 'run_report'"), 2);
	assert_int_equal(lake_q(fx, "SELECT json_extract(detail, '$.anon_rss_kb') FROM signals WHERE kind = 'oom_kill'"),
			 123);
	/* read back as tracer report does: by number and by the pipeline's run id */
	assert_int_equal(store_runs(fx->st, count_runs, &last), STORE_OK);
	assert_int_equal(last.run_id, 1);
	assert_true(last.exit_code.known && last.exit_code.v == 1);
	assert_true(last.has_stored_report);
	assert_int_equal(store_run(fx->st, "1", count_runs, &last), STORE_OK);
	assert_int_equal(store_run(fx->st, "nf-7", count_runs, &last), STORE_OK);
	assert_int_equal(last.run_id, 1);
	assert_int_equal(store_run(fx->st, "2", count_runs, &last), STORE_E_NOT_FOUND);
}

static void run_report_that_is_not_json_is_counted_and_the_batch_still_stored(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note = 'bad_run_report'"), 7);
	assert_int_equal(lake_q(fx, "SELECT bad_run_reports FROM batches"), 7);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 2);
}

static void unknown_and_undecodable_records_are_kept_in_records_only(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note IS NOT NULL"), 4);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 1 AND note = 'unknown_type'"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND note = 'length'"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 3 AND note = 'pid'"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM losses"), 0);
	assert_int_equal(lake_q(fx, "SELECT records_unknown + records_undecodable FROM batches"), 4);
}

/* ---- live runs (TL_RUN) ------------------------------------------------------- */

#define T0 1700000000000000000ll /* a run's start, CLOCK_REALTIME */
#define SEC 1000000000ll

/* A TL_RUN record: the fields a test varies; every other field as the processor writes it. */
struct live {
	const char *key;
	int update;
	const char *state;
	const char *end_ns;    /* JSON: "null" while running */
	const char *exit_code; /* JSON */
	const char *steps, *attributed, *signals; /* JSON arrays; NULL: [] */
	const char *host;      /* JSON members after the header's (",\"uid\":0,\"host\":{...}"); NULL: none */
};

static void add_live(struct lake_fixture *fx, uint64_t seq, const struct live *l)
{
	char json[16384];
	int n = snprintf(json, sizeof(json),
			 "{\"schema\":\"tracer.live.v1\",\"key\":\"%s\",\"update\":%d,\"update_ns\":%lld,"
			 "\"state\":\"%s\",\"detected_by\":\"snakemake\",\"engine\":\"snakemake\","
			 "\"pipeline\":\"snakemake:/data/wf/Snakefile\",\"run_id\":null,\"run_name\":null,"
			 "\"slurm_job_id\":\"77\",\"aws_batch_job_id\":null,\"command\":[\"snakemake\",\"--cores\",\"2\"],"
			 "\"root_pid\":4242,\"root_start_mono_ns\":1000,\"start_ns\":%lld,\"end_ns\":%s,"
			 "\"exit_code\":%s,\"signal\":null,\"preexisting\":false,\"processes\":%d,\"running_processes\":1,"
			 "\"totals\":{\"cpu_ns\":%d,\"read_bytes\":2,\"write_bytes\":3,\"rchar\":4,\"wchar\":5,"
			 "\"net_tx_bytes\":6,\"net_rx_bytes\":7},"
			 "\"live\":{\"cpu_millicores\":1500,\"rss_bytes\":1048576,\"read_bytes_per_s\":10,"
			 "\"write_bytes_per_s\":11,\"net_tx_bytes_per_s\":12,\"net_rx_bytes_per_s\":13},"
			 "\"steps\":%s,\"processes_attributed\":%s,\"signals\":%s%s}",
			 l->key, l->update, T0 + l->update * SEC, l->state ? l->state : "running", T0,
			 l->end_ns ? l->end_ns : "null", l->exit_code ? l->exit_code : "null", l->update, 1000 * l->update,
			 l->steps ? l->steps : "[]", l->attributed ? l->attributed : "[]", l->signals ? l->signals : "[]",
			 l->host ? l->host : "");

	assert_true(n > 0 && (size_t)n < sizeof(json));
	assert_true(frames_add(&fx->f, seq, TL_RUN, json, (uint32_t)n));
}

static int store_sealed_boot(struct lake_fixture *fx, const uint8_t boot[BATCH_BOOT_ID_LEN], uint64_t batch_seq,
			     struct store_result *res)
{
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	int rc;

	assert_int_equal(seal_frames_boot(&fx->key, fx->host, boot, batch_seq, NULL, BATCH_COMP_ZLIB, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, hash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	rc = lake_store_raw(fx, &h, hash, raw, raw_len, s.len, 1700000000000000000ull + batch_seq, res);
	free(raw);
	free(s.wire);
	frames_reset(&fx->f);
	return rc;
}

static int keep_run(void *ctx, const struct store_run *r)
{
	struct store_run *out = ctx;

	*out = *r;
	/* the strings live only as long as the callback: the tests read the numbers */
	out->command = out->command_json = out->summary = out->state = out->run_key = NULL;
	out->engine = out->pipeline = out->pipeline_run_id = out->run_name = out->detected_by = NULL;
	out->slurm_job_id = out->aws_batch_job_id = NULL;
	out->host_cloud = out->host_instance_type = out->host_instance_id = out->host_region = NULL;
	out->host_name = out->slurm_job_name = out->slurm_submit_dir = out->slurm_submit_host = NULL;
	out->joined_step_id = NULL;
	return 0;
}

static void text_of(struct lake_fixture *fx, const char *sql, char *out, size_t outlen)
{
	sql_text_of(fx->db, sql, out, outlen);
}

static void live_record_creates_its_run_and_only_a_higher_update_changes_it(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct store_run r = { 0 };
	char text[256];

	add_live(fx, 1, &(struct live){ .key = "b00t-4242-1000", .update = 1 });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	assert_int_equal(res.bad_live_records, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note IS NULL AND type = %d", TL_RUN), 1);
	text_of(fx, "SELECT run_key || '|' || schema || '|' || state || '|' || detected_by || '|' || engine || '|' || "
		    "pipeline || '|' || command || '|' || slurm_job_id FROM runs", text, sizeof(text));
	assert_string_equal(text, "b00t-4242-1000|tracer.live.v1|running|snakemake|snakemake|"
				  "snakemake:/data/wf/Snakefile|[\"snakemake\",\"--cores\",\"2\"]|77");
	assert_int_equal(lake_q(fx, "SELECT update_seq FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT last_update_ns FROM runs"), T0 + SEC);
	assert_int_equal(lake_q(fx, "SELECT start_ns FROM runs"), T0);
	assert_int_equal(lake_q(fx, "SELECT end_ns IS NULL AND duration_ns IS NULL AND exit_code IS NULL FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT root_pid FROM runs"), 4242);
	assert_int_equal(lake_q(fx, "SELECT preexisting FROM runs"), 0);
	assert_int_equal(lake_q(fx, "SELECT running_processes FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT cpu_ns + read_bytes + write_bytes + rchar + wchar + net_tx_bytes + net_rx_bytes "
			       "FROM runs"), 1000 + 2 + 3 + 4 + 5 + 6 + 7);
	assert_int_equal(lake_q(fx, "SELECT live_cpu_millicores + live_read_bytes_per_s + live_write_bytes_per_s + "
			       "live_net_tx_bytes_per_s + live_net_rx_bytes_per_s FROM runs"), 1500 + 10 + 11 + 12 + 13);
	assert_int_equal(lake_q(fx, "SELECT live_rss_bytes FROM runs"), 1048576);
	assert_int_equal(lake_q(fx, "SELECT seq FROM runs"), 1);

	/* a newer record: the header follows it; the row keeps the record that made it */
	add_live(fx, 2, &(struct live){ .key = "b00t-4242-1000", .update = 3, .state = "succeeded",
					 .end_ns = "1700000005000000000", .exit_code = "0" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	text_of(fx, "SELECT state FROM runs", text, sizeof(text));
	assert_string_equal(text, "succeeded");
	assert_int_equal(lake_q(fx, "SELECT update_seq FROM runs"), 3);
	assert_int_equal(lake_q(fx, "SELECT exit_code FROM runs"), 0);
	assert_int_equal(lake_q(fx, "SELECT duration_ns FROM runs"), 5 * SEC);
	assert_int_equal(lake_q(fx, "SELECT processes FROM runs"), 3);
	assert_int_equal(lake_q(fx, "SELECT seq FROM runs"), 1);

	/* an older one (a restarted processor repeating itself), and the same update again: no change */
	add_live(fx, 3, &(struct live){ .key = "b00t-4242-1000", .update = 2, .state = "running" });
	add_live(fx, 4, &(struct live){ .key = "b00t-4242-1000", .update = 3, .state = "failed" });
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	text_of(fx, "SELECT state FROM runs", text, sizeof(text));
	assert_string_equal(text, "succeeded");
	assert_int_equal(lake_q(fx, "SELECT update_seq FROM runs"), 3);
	assert_int_equal(lake_q(fx, "SELECT processes FROM runs"), 3);

	/* read back by its key */
	assert_int_equal(store_run(fx->st, "b00t-4242-1000", keep_run, &r), STORE_OK);
	assert_int_equal(r.run_id, 1);
	assert_false(r.has_stored_report);
	assert_true(r.exit_code.known && r.exit_code.v == 0);
	assert_true(r.last_update_ns.known && r.last_update_ns.v == T0 + 3 * SEC);
}

static void live_steps_are_upserted_by_id_and_keep_their_first_position(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char text[256];

	add_live(fx, 1, &(struct live){ .key = "k", .update = 1,
					 .steps = "[{\"id\":\"a\",\"name\":\"align\",\"state\":\"running\",\"tools\":[\"bwa mem\"],"
						  "\"start_ns\":1,\"running\":2,\"engine\":\"snakemake\",\"rule\":\"align\","
						  "\"live\":{\"cpu_millicores\":900}},"
						  "{\"id\":\"b\",\"name\":\"sort\",\"state\":\"running\"},"
						  "{\"name\":\"no id\"}, 5, {\"id\":7}]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 2);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 'a'"), 0);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 'b'"), 1);
	assert_int_equal(lake_q(fx, "SELECT live_cpu_millicores FROM steps WHERE step_id = 'a'"), 900);
	assert_int_equal(lake_q(fx, "SELECT last_update_ns FROM steps WHERE step_id = 'a'"), T0 + SEC);
	assert_int_equal(lake_q(fx, "SELECT steps FROM runs"), 2);

	/* a new step goes after the others; a changed one is replaced whole, in its place */
	add_live(fx, 2, &(struct live){ .key = "k", .update = 2,
					 .steps = "[{\"id\":\"c\",\"name\":\"call\",\"state\":\"running\"},"
						  "{\"id\":\"a\",\"name\":\"align\",\"state\":\"succeeded\",\"tools\":[\"bwa mem\","
						  "\"samtools sort\"],\"start_ns\":1,\"end_ns\":9,\"running\":0,\"failed\":false,"
						  "\"cpu_ns\":123,\"peak_rss_bytes\":4096,\"nonzero_exits\":1,\"rchar\":5,"
						  "\"net_tx_bytes\":6,\"state_unknown\":1}]" });
	/* an older record's steps still apply (steps are deltas, in arrival order); states outside the four: NULL */
	add_live(fx, 3, &(struct live){ .key = "k", .update = 1,
					 .steps = "[{\"id\":\"b\",\"name\":\"sort\",\"state\":\"failed\",\"failed\":true},"
						  "{\"id\":\"c\",\"name\":\"call\",\"state\":\"pwned\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 3);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 'a'"), 0);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 'b'"), 1);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 'c'"), 2);
	text_of(fx, "SELECT state || '|' || tools || '|' || end_ns || '|' || cpu_ns || '|' || peak_rss_bytes || '|' || "
		    "failed || '|' || nonzero_exits || '|' || rchar || '|' || net_tx_bytes FROM steps WHERE step_id = 'a'",
		text, sizeof(text));
	assert_string_equal(text, "succeeded|[\"bwa mem\",\"samtools sort\"]|9|123|4096|0|1|5|6");
	/* replaced whole: what the newer element does not have is NULL now */
	assert_int_equal(lake_q(fx, "SELECT engine IS NULL AND live_cpu_millicores IS NULL FROM steps WHERE step_id = 'a'"),
			 1);
	assert_int_equal(lake_q(fx, "SELECT last_update_ns FROM steps WHERE step_id = 'a'"), T0 + 2 * SEC);
	text_of(fx, "SELECT state FROM steps WHERE step_id = 'b'", text, sizeof(text));
	assert_string_equal(text, "failed");
	assert_int_equal(lake_q(fx, "SELECT state IS NULL FROM steps WHERE step_id = 'c'"), 1);
	assert_int_equal(lake_q(fx, "SELECT steps FROM runs"), 3);
}

/*
 * A record of many steps (they go in statements of several rows: lake_upsert_rows_sql): every one stored, each
 * new one after those before it; a step repeated in one record, by the same bytes or by an escape of them, is
 * stored once and the later element wins (PostgreSQL refuses a statement that changes a row twice).
 */
static void a_records_many_steps_are_each_stored_once_in_order_the_later_of_a_repeated_id_winning(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char steps[8192], text[64];
	size_t n = 0;

	n += (size_t)snprintf(steps + n, sizeof(steps) - n, "[");
	for (int i = 0; i < 45; i++) {
		n += (size_t)snprintf(steps + n, sizeof(steps) - n, "%s{\"id\":\"s%02d\",\"name\":\"n%d\","
				      "\"state\":\"running\",\"cpu_ns\":%d}", i ? "," : "", i, i, i);
		if (i == 2) /* in the same statement's rows: s01 again by escapes, s02 again */
			n += (size_t)snprintf(steps + n, sizeof(steps) - n,
					      ",{\"id\":\"\\u0073\\u0030\\u0031\",\"name\":\"escaped\"},"
					      "{\"id\":\"s02\",\"name\":\"again\",\"state\":\"failed\"}");
	}
	/* s05 again, then s07 twice in a row */
	n += (size_t)snprintf(steps + n, sizeof(steps) - n,
			      ",{\"id\":\"s05\",\"name\":\"again\",\"state\":\"failed\"},"
			      "{\"id\":\"s07\",\"name\":\"x\"},{\"id\":\"s07\",\"name\":\"y\"}]");
	assert_true(n < sizeof(steps));
	add_live(fx, 1, &(struct live){ .key = "k", .update = 1, .steps = steps });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 45);
	assert_int_equal(lake_q(fx, "SELECT count(DISTINCT idx) FROM steps"), 45);
	/* first appearance is the order: s00 < s01 < ... by idx */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps a JOIN steps b ON a.step_id < b.step_id AND "
				    "a.idx >= b.idx"), 0);
	assert_int_equal(lake_q(fx, "SELECT cpu_ns FROM steps WHERE step_id = 's44'"), 44);
	text_of(fx, "SELECT name || '|' || state FROM steps WHERE step_id = 's05'", text, sizeof(text));
	assert_string_equal(text, "again|failed");
	text_of(fx, "SELECT name FROM steps WHERE step_id = 's01'", text, sizeof(text));
	assert_string_equal(text, "escaped");
	text_of(fx, "SELECT name || '|' || state FROM steps WHERE step_id = 's02'", text, sizeof(text));
	assert_string_equal(text, "again|failed");
	text_of(fx, "SELECT name FROM steps WHERE step_id = 's07'", text, sizeof(text));
	assert_string_equal(text, "y");
	assert_int_equal(lake_q(fx, "SELECT steps FROM runs"), 45);

	/* the next record: known steps stay where they are, new ones go after every one */
	add_live(fx, 2, &(struct live){ .key = "k", .update = 2,
					 .steps = "[{\"id\":\"s00\",\"name\":\"first\"},{\"id\":\"t1\"},"
						  "{\"id\":\"s30\"},{\"id\":\"t2\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 47);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE idx < (SELECT idx FROM steps WHERE step_id = "
				    "'t1') AND step_id LIKE 's%%'"), 45);
	assert_int_equal(lake_q(fx, "SELECT (SELECT idx FROM steps WHERE step_id = 't1') < (SELECT idx FROM steps "
				    "WHERE step_id = 't2')"), 1);
	assert_int_equal(lake_q(fx, "SELECT idx FROM steps WHERE step_id = 's00'"), 0);
	assert_int_equal(lake_q(fx, "SELECT steps FROM runs"), 47);
}

/*
 * A process's run, step and tool may reach the lake before or after its
 * kernel records: either way one row, complete, with the attribution kept.
 */
static void attribution_before_and_after_kernel_records_completes_the_process_and_keeps_its_run(void **state)
{
	struct lake_fixture *fx = *state;
	static const char *const args[] = { "samtools", "sort", NULL };
	_Alignas(8) uint8_t exec42[DECODE_MAX_LEN], exec43[DECODE_MAX_LEN];
	struct tr_fork fk42 = make_fork(100, 41, 50, 42, 99), fk43 = make_fork(110, 41, 50, 43, 120);
	struct tr_exit ex42 = make_exit(500, 42, 99, 41, 0, 1000), ex43 = make_exit(510, 43, 120, 41, 1 << 8, 2000);
	size_t n42 = encode_exec(exec42, sizeof(exec42), 200, 42, 41, 99, "/usr/bin/samtools", args);
	size_t n43 = encode_exec(exec43, sizeof(exec43), 210, 43, 41, 120, "/usr/bin/samtools", args);
	struct store_result res;
	char text[256];

	/* 42: attributed first; 43: its fork and exec first */
	add_live(fx, 1, &(struct live){ .key = "k", .update = 1,
					 .attributed = "[{\"pid\":42,\"start_mono_ns\":99,\"step\":\"s1\",\"tool\":\"samtools sort\"},"
						       "{\"pid\":\"x\",\"start_mono_ns\":1}, {\"pid\":44}, 3]" });
	assert_true(frames_add(&fx->f, 2, TR_FORK, &fk43, sizeof(fk43)));
	assert_true(frames_add(&fx->f, 3, TR_EXEC, exec43, (uint32_t)n43));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 2);
	assert_int_equal(lake_q(fx, "SELECT run_id FROM processes WHERE tgid = 42"), 1);
	assert_int_equal(lake_q(fx, "SELECT execs = 0 AND exe IS NULL AND start_real_ns IS NULL FROM processes WHERE tgid = 42"),
			 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes WHERE preexisting IS NULL"), 2); /* not said */

	assert_true(frames_add(&fx->f, 4, TR_FORK, &fk42, sizeof(fk42)));
	assert_true(frames_add(&fx->f, 5, TR_EXEC, exec42, (uint32_t)n42));
	assert_true(frames_add(&fx->f, 6, TR_EXIT, &ex42, sizeof(ex42)));
	add_live(fx, 7, &(struct live){ .key = "k", .update = 2,
					 .attributed = "[{\"pid\":43,\"start_mono_ns\":120,\"step\":\"s2\",\"tool\":null,"
						       "\"preexisting\":true}]" });
	assert_true(frames_add(&fx->f, 8, TR_EXIT, &ex43, sizeof(ex43)));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 2);
	/* 42: the kernel's records completed the row the attribution made */
	text_of(fx, "SELECT run_id || '|' || step || '|' || tool || '|' || exe || '|' || argv || '|' || ppid || '|' || "
		    "execs || '|' || exit_code || '|' || runtime_ns || '|' || start_real_ns || '|' || end_real_ns "
		    "FROM processes WHERE tgid = 42", text, sizeof(text));
	assert_string_equal(text, "1|s1|samtools sort|/usr/bin/samtools|[\"samtools\",\"sort\"]|41|1|0|1003|"
				  "1600000000000000099|1600000000000000500");
	/* a process the processor found running when it started: its figures before that are not in them */
	assert_int_equal(lake_q(fx, "SELECT preexisting FROM processes WHERE tgid = 43"), 1);
	/* 43: attributed after its exec, and its exit kept the attribution */
	text_of(fx, "SELECT run_id || '|' || step || '|' || coalesce(tool, 'NULL') || '|' || exit_code || '|' || exe "
		    "FROM processes WHERE tgid = 43", text, sizeof(text));
	assert_string_equal(text, "1|s2|NULL|1|/usr/bin/samtools");

	/* attributed again (the step changed): only run, step and tool change */
	add_live(fx, 9, &(struct live){ .key = "k", .update = 3,
					 .attributed = "[{\"pid\":42,\"start_mono_ns\":99,\"step\":\"s3\",\"tool\":\"samtools\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	text_of(fx, "SELECT step || '|' || tool || '|' || exe || '|' || runtime_ns FROM processes WHERE tgid = 42", text,
		sizeof(text));
	assert_string_equal(text, "s3|samtools|/usr/bin/samtools|1003");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes WHERE run_id = 1"), 2);
}

static void live_signals_are_kept_whole_with_their_run(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char text[256];

	add_live(fx, 1, &(struct live){ .key = "k", .update = 1,
					 .signals = "[{\"kind\":\"failed\",\"pid\":4251,\"start_mono_ns\":77,\"step\":\"s1\","
						    "\"tool\":\"bwa mem\",\"exit_code\":1},{\"kind\":5},7]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals"), 1);
	text_of(fx, "SELECT run_id || '|' || source || '|' || kind || '|' || pid || '|' || start_ns || '|' || step || "
		    "'|' || tool || '|' || seq FROM signals WHERE ts_ns IS NULL", text, sizeof(text));
	assert_string_equal(text, "1|live|failed|4251|77|s1|bwa mem|1");
	assert_int_equal(lake_q(fx, "SELECT json_extract(detail, '$.exit_code') FROM signals"), 1);
	assert_int_equal(lake_q(fx, "SELECT signals FROM runs"), 1);
	add_live(fx, 2, &(struct live){ .key = "k", .update = 2,
					 .signals = "[{\"kind\":\"oom_kill\",\"pid\":4252,\"start_mono_ns\":78}]" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT signals FROM runs"), 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE run_id = 1 AND source = 'live'"), 2);
}

/* TL_TOOLS: processes in no run get their tool; their kernel records' rows keep everything else. */
static void tools_records_name_processes_in_no_run(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	static const char tools[] = "{\"schema\":\"tracer.tools.v1\",\"processes\":[{\"pid\":77,\"start_mono_ns\":5,"
				    "\"tool\":\"rsync\"},{\"pid\":78,\"start_mono_ns\":6,\"tool\":\"ls\"},{\"pid\":\"x\"},3]}";
	static const char again[] = "{\"schema\":\"tracer.tools.v1\",\"processes\":[{\"pid\":77,\"start_mono_ns\":5,"
				    "\"tool\":\"gzip\"}]}";
	static const char wrong[] = "{\"schema\":\"tracer.live.v1\",\"processes\":[]}";
	char text[128];

	assert_true(frames_add(&fx->f, 1, TL_TOOLS, tools, sizeof(tools) - 1));
	assert_true(frames_add(&fx->f, 2, TL_TOOLS, wrong, sizeof(wrong) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_live_records, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 2);
	text_of(fx, "SELECT group_concat(tgid || ':' || tool || ':' || ifnull(run_id, '-'), ' ') FROM processes", text,
		sizeof(text));
	assert_string_equal(text, "77:rsync:- 78:ls:-");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note = 'bad_live_record'"), 1);
	assert_true(frames_add(&fx->f, 3, TL_TOOLS, again, sizeof(again) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	text_of(fx, "SELECT tool FROM processes WHERE tgid = 77", text, sizeof(text));
	assert_string_equal(text, "gzip");
}

/* A restarted processor repeats what it sent after its checkpoint (docs/live.md, "Restarts"). */
static void a_live_signal_sent_again_is_stored_once(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	const char *sig = "[{\"kind\":\"killed\",\"pid\":4251,\"start_mono_ns\":77,\"signal\":9}]";

	add_live(fx, 1, &(struct live){ .key = "k", .update = 1, .signals = sig });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	add_live(fx, 2, &(struct live){ .key = "k", .update = 1048578, .signals = sig });
	add_live(fx, 3, &(struct live){ .key = "k", .update = 1048579,
					 .signals = "[{\"kind\":\"killed\",\"pid\":4251,\"start_mono_ns\":78}]" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE source = 'live'"), 2); /* 78: another process */
	assert_int_equal(lake_q(fx, "SELECT signals FROM runs"), 2);
}

static void bad_live_records_are_noted_counted_and_the_batch_still_stored(void **state)
{
	struct lake_fixture *fx = *state;
	static const char *const bad[] = {
		"{\"schema\":\"tracer.live.v1\",\"key\":\"k\"",                  /* cut short */
		"[{\"schema\":\"tracer.live.v1\",\"key\":\"k\"}]",                 /* not an object */
		"{\"schema\":\"tracer.live.v2\",\"key\":\"k\"}",                    /* another schema */
		"{\"key\":\"k\"}",                                                  /* no schema */
		"{\"schema\":\"tracer.live.v1\"}",                                  /* no key */
		"{\"schema\":\"tracer.live.v1\",\"key\":42}",                       /* a key that is not a string */
		"{\"schema\":\"tracer.live.v1\",\"key\":\"\"}",                     /* an empty key */
		"{\"schema\":\"tracer.live.v1\",\"key\":\"k\\u0000x\"}",           /* a key C would cut to "k" */
		"{\"schema\":\"tracer.live.v1\",\"key\":\"\xff\xfe\"}",             /* not UTF-8 */
		"",
	};
	static const char with_nul[] = "{\"schema\":\"tracer.live.v1\",\"key\":\"k\"}\0{}";
	char long_key[512], *huge;
	struct store_result res;
	uint64_t seq = 1;
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(frames_add(&fx->f, seq++, TL_RUN, bad[i], (uint32_t)strlen(bad[i])));
	assert_true(frames_add(&fx->f, seq++, TL_RUN, with_nul, sizeof(with_nul) - 1));
	n = (size_t)snprintf(long_key, sizeof(long_key), "{\"schema\":\"tracer.live.v1\",\"key\":\"%0*d\"}",
			     STORE_RUN_KEY_MAX + 1, 0);
	assert_true(frames_add(&fx->f, seq++, TL_RUN, long_key, (uint32_t)n));
	/* over TL_RUN_MAX: the processor never writes one */
	huge = malloc(TL_RUN_MAX + 64);
	assert_non_null(huge);
	n = (size_t)snprintf(huge, 64, "{\"schema\":\"tracer.live.v1\",\"key\":\"k\",\"pad\":\"");
	memset(huge + n, 'x', TL_RUN_MAX);
	memcpy(huge + n + TL_RUN_MAX, "\"}", 2);
	assert_true(frames_add(&fx->f, seq++, TL_RUN, huge, (uint32_t)(n + TL_RUN_MAX + 2)));
	free(huge);
	add_samples(fx, seq, 2);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_live_records, 13);
	assert_int_equal(res.bad_reports + res.unknown + res.undecodable, 0);
	assert_int_equal(res.runs, 0);
	assert_int_equal(res.new_records, 15);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note = 'bad_live_record'"), 13);
	assert_int_equal(lake_q(fx, "SELECT bad_live_records FROM batches"), 13);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 2);
}

/* A record's array of n elements "{}" inside head ... tail, as a frame. */
static void add_array_record(struct lake_fixture *fx, uint64_t seq, uint16_t type, const char *head, const char *tail,
			     size_t n)
{
	size_t hl = strlen(head), tl = strlen(tail), len = hl + 3 * n + tl;
	char *json = malloc(len);

	assert_non_null(json);
	memcpy(json, head, hl);
	for (size_t i = 0; i < n; i++)
		memcpy(json + hl + 3 * i, i ? ",{}" : " {}", 3);
	memcpy(json + hl + 3 * n, tail, tl);
	assert_true(frames_add(&fx->f, seq, type, json, (uint32_t)len));
	free(json);
}

/* At most STORE_RUN_ROWS_MAX elements of a record's array become rows; the rest are counted. */
static void arrays_beyond_the_bound_are_counted_not_stored(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;

	/* a live record's: counted (1 MiB holds no 100,000 elements with a key: none would be stored) */
	add_array_record(fx, 1, TL_RUN, "{\"schema\":\"tracer.live.v1\",\"key\":\"k\",\"signals\":[", "]}",
			 STORE_RUN_ROWS_MAX + 5);
	/* a report's processes: a row for each of the first STORE_RUN_ROWS_MAX */
	add_array_record(fx, 2, TL_RUN_REPORT, "{\"report\":{\"processes\":[", "]}}", STORE_RUN_ROWS_MAX + 7);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_live_records + res.bad_reports, 0);
	assert_int_equal(res.run_rows_dropped, 5 + 7);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM run_processes WHERE run_id = 2"), STORE_RUN_ROWS_MAX);
}

/* A host cannot still run a run of an earlier boot: a batch of a new boot makes them (and their steps) lost. */
static void a_batch_of_a_new_boot_makes_the_hosts_running_runs_lost(void **state)
{
	struct lake_fixture *fx = *state;
	uint8_t boot_a[BATCH_BOOT_ID_LEN], boot_b[BATCH_BOOT_ID_LEN];
	static const char running_step[] = "[{\"id\":\"s\",\"state\":\"running\"},{\"id\":\"t\",\"state\":\"succeeded\"}]";
	struct store_result res;
	char text[64];

	default_boot_of(fx->host, boot_a);
	memcpy(boot_b, boot_a, sizeof(boot_b));
	boot_b[1] ^= 0x55;
	add_live(fx, 1, &(struct live){ .key = "a-1", .update = 1, .steps = running_step });
	add_live(fx, 2, &(struct live){ .key = "a-2", .update = 1, .state = "succeeded", .end_ns = "1700000009000000000",
					 .exit_code = "0", .steps = "[{\"id\":\"s\",\"state\":\"succeeded\"}]" });
	assert_int_equal(store_sealed_boot(fx, boot_a, 1, &res), STORE_OK);
	add_samples(fx, 3, 1);
	assert_int_equal(store_sealed_boot(fx, boot_a, 2, &res), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE state = 'running'"), 1);

	/* the next boot: its own run stays running; the earlier boot's is lost, with its running step */
	add_live(fx, 4, &(struct live){ .key = "b-1", .update = 1, .steps = running_step });
	assert_int_equal(store_sealed_boot(fx, boot_b, 3, &res), STORE_OK);
	text_of(fx, "SELECT group_concat(run_key || ':' || state, ',') FROM (SELECT * FROM runs ORDER BY run_id)", text,
		sizeof(text));
	assert_string_equal(text, "a-1:lost,a-2:succeeded,b-1:running");
	text_of(fx, "SELECT group_concat(run_id || step_id || ':' || state, ',') FROM (SELECT * FROM steps "
		    "ORDER BY run_id, idx)", text, sizeof(text));
	assert_string_equal(text, "1s:lost,1t:succeeded,2s:succeeded,3s:running,3t:succeeded");

	/* a late record of the earlier boot's run saying "running" does not bring it back */
	add_live(fx, 5, &(struct live){ .key = "a-1", .update = 2, .steps = running_step });
	assert_int_equal(store_sealed_boot(fx, boot_b, 4, &res), STORE_OK);
	text_of(fx, "SELECT state FROM runs WHERE run_key = 'a-1'", text, sizeof(text));
	assert_string_equal(text, "lost");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE run_id = 1 AND state = 'running'"), 0);
}

/* tracer run's report of a run the daemons streamed live: the report takes over the live row. */
static const char keyed_report[] =
	"{\"report\":{\"schema\":\"tracer.run.v1\",\"command\":[\"snakemake\",\"--cores\",\"2\"],\"exit_code\":1,"
	"\"start_ns\":1700000000000000000,\"end_ns\":1700000004000000000,\"agent\":{\"dropped\":0},"
	"\"run\":{\"key\":\"b00t-4242-1000\",\"run_id\":\"sm-9\",\"pipeline\":\"snakemake:/data/wf/Snakefile\","
	"\"engine\":\"snakemake\",\"run_name\":null,\"slurm_job_id\":\"77\"},"
	"\"processes\":[{\"pid\":42,\"start_ns\":1600000000000000099,\"step\":\"s1\",\"tool\":\"samtools sort\"},"
	"{\"pid\":43,\"start_ns\":1600000000000500120,\"step\":\"s2\",\"tool\":\"cat\"}],"
	"\"steps\":[{\"id\":\"s1\",\"name\":\"align\",\"failed\":true,\"running\":0,\"nonzero_exits\":1,\"rchar\":8,"
	"\"engine\":\"snakemake\",\"rule\":\"align\"},{\"id\":\"s2\",\"name\":\"sort\",\"failed\":false,\"running\":1},"
	"{\"id\":\"s1\",\"name\":\"again\"},{\"id\":\"s4\",\"name\":\"index\",\"failed\":false}],"
	"\"signals\":[{\"kind\":\"failed\",\"pid\":42,\"step\":\"s1\",\"tool\":\"samtools sort\",\"exit_code\":1}]},"
	"\"summary\":\"tracer: snakemake --cores 2: exit 1\\n\"}";

static void report_with_the_live_key_merges_into_the_live_row_and_the_run_appears_once(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_fork fk42 = make_fork(100, 41, 50, 42, 99), fk43 = make_fork(110, 41, 50, 43, 120);
	struct store_result res;
	struct store_run r = { 0 };
	char text[256];

	assert_true(frames_add(&fx->f, 1, TR_FORK, &fk42, sizeof(fk42)));
	assert_true(frames_add(&fx->f, 2, TR_FORK, &fk43, sizeof(fk43)));
	add_live(fx, 3, &(struct live){ .key = "b00t-4242-1000", .update = 1,
					 .steps = "[{\"id\":\"s1\",\"state\":\"running\"},{\"id\":\"s9\",\"state\":\"running\"}]",
					 .signals = "[{\"kind\":\"stalled\",\"pid\":42}]",
					 .attributed = "[{\"pid\":42,\"start_mono_ns\":99,\"step\":\"s1\",\"tool\":\"x\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);

	assert_true(frames_add(&fx->f, 4, TL_RUN_REPORT, keyed_report, sizeof(keyed_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	assert_int_equal(res.bad_reports, 0);
	/* the repeated step id s1: not stored, counted */
	assert_int_equal(res.run_rows_dropped, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	text_of(fx, "SELECT run_id || '|' || seq || '|' || state || '|' || detected_by || '|' || schema || '|' || "
		    "exit_code || '|' || last_update_ns || '|' || pipeline_run_id || '|' || summary FROM runs", text,
		sizeof(text));
	assert_string_equal(text, "1|4|failed|tracer_run|tracer.run.v1|1|1700000004000000000|sm-9|"
				  "tracer: snakemake --cores 2: exit 1\n");
	/* what only the live records had stays */
	assert_int_equal(lake_q(fx, "SELECT root_pid FROM runs"), 4242);
	/* the report's steps and signals replaced the live ones */
	text_of(fx, "SELECT group_concat(step_id || ':' || state || ':' || idx, ',') FROM (SELECT * FROM steps "
		    "ORDER BY idx)", text, sizeof(text));
	assert_string_equal(text, "s1:failed:0,s2:running:1,s4:succeeded:3"); /* the four in one statement */
	text_of(fx, "SELECT nonzero_exits || '|' || rchar || '|' || engine || '|' || rule || '|' || last_update_ns "
		    "FROM steps WHERE step_id = 's1'", text, sizeof(text));
	assert_string_equal(text, "1|8|snakemake|align|1700000004000000000");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE source = 'live'"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE source = 'run_report' AND run_id = 1"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM run_processes WHERE run_id = 1"), 2);
	/* the report's processes found by pid and start (43's within 1 ms: another processor's clock offset) */
	text_of(fx, "SELECT group_concat(tgid || ':' || run_id || ':' || step || ':' || tool, ',') FROM "
		    "(SELECT * FROM processes ORDER BY tgid)", text, sizeof(text));
	assert_string_equal(text, "42:1:s1:samtools sort,43:1:s2:cat");
	assert_int_equal(store_run(fx->st, "b00t-4242-1000", keep_run, &r), STORE_OK);
	assert_true(r.has_stored_report);
	assert_int_equal(r.run_id, 1);

	/* the report is final: a later live record changes nothing of the run but its processes' attribution */
	add_live(fx, 5, &(struct live){ .key = "b00t-4242-1000", .update = 9, .state = "lost",
					 .steps = "[{\"id\":\"s3\",\"state\":\"running\"}]",
					 .signals = "[{\"kind\":\"stalled\",\"pid\":43}]",
					 .attributed = "[{\"pid\":43,\"start_mono_ns\":120,\"step\":\"s2\",\"tool\":\"tac\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	text_of(fx, "SELECT state || '|' || seq || '|' || steps || '|' || signals FROM runs", text, sizeof(text));
	assert_string_equal(text, "failed|4|4|1");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals"), 1);
	text_of(fx, "SELECT tool FROM processes WHERE tgid = 43", text, sizeof(text));
	assert_string_equal(text, "tac");
}

/* A report without a key, or whose key no live run has, is a run of its own, its state from its exit. */
static void report_runs_get_their_state_from_the_exit_code(void **state)
{
	struct lake_fixture *fx = *state;
	static const char ok[] = "{\"report\":{\"exit_code\":0,\"run\":{\"key\":\"other\"}}}";
	static const char lost[] = "{\"report\":{\"exit_code\":null}}";
	/* a key with an escaped NUL is no key: it does not take over "other" */
	static const char nul_key[] = "{\"report\":{\"exit_code\":3,\"run\":{\"key\":\"other\\u0000x\"}}}";
	struct store_result res;
	char text[160];

	assert_true(frames_add(&fx->f, 1, TL_RUN_REPORT, ok, sizeof(ok) - 1));
	assert_true(frames_add(&fx->f, 2, TL_RUN_REPORT, lost, sizeof(lost) - 1));
	assert_true(frames_add(&fx->f, 3, TL_RUN_REPORT, good_report, sizeof(good_report) - 1));
	assert_true(frames_add(&fx->f, 4, TL_RUN_REPORT, nul_key, sizeof(nul_key) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 4);
	text_of(fx, "SELECT group_concat(coalesce(run_key, '-') || ':' || state || ':' || detected_by, ',') FROM "
		    "(SELECT * FROM runs ORDER BY run_id)", text, sizeof(text));
	assert_string_equal(text, "other:succeeded:tracer_run,-:lost:tracer_run,-:failed:tracer_run,"
				  "-:failed:tracer_run");
}

/* ---- upkeep: retention (docs/lake.md, "Partitions and retention") ---- */

#define DAY_NS (86400ull * 1000000000)
#define DAY0 19700ull /* 2023-12-09 */

/*
 * lake_retention removes the time series of the days past it, whole days (PostgreSQL drops their
 * partitions: a row a day past the cutoff but in its day stays, on SQLite too, which deletes by row: the
 * same rows on both, as the mirror checks), with their ledger rows and gaps; a later day's rows stay.
 * lake_retention_runs removes runs (with their steps, processes and signals) and processes; 0 keeps all.
 */
static void retention_removes_the_days_past_it_and_keeps_the_rest(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_upkeep up;
	struct store_result res;
	struct tr_counters k;
	struct tl_loss loss = { .reason = TL_LOSS_RING, .first_seq = 1, .last_seq = 2, .records = 2, .bytes = 9 };

	memset(&k, 0, sizeof(k));
	k.hdr = encode_hdr(TR_COUNTERS, 4);
	add_samples(fx, 1, 3);
	assert_true(frames_add(&fx->f, 4, TR_COUNTERS, &k, sizeof(k)));
	assert_true(frames_add(&fx->f, 5, TL_LOSS, &loss, sizeof(loss)));
	assert_true(frames_add(&fx->f, 6, TL_RUN_REPORT, good_report, sizeof(good_report) - 1));
	assert_int_equal(lake_store_sealed(fx, fx->host, 1, DAY0 * DAY_NS + 7, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	add_samples(fx, 9, 2); /* a gap: 7..8 */
	assert_int_equal(lake_store_sealed(fx, fx->host, 2, (DAY0 + 1) * DAY_NS + 5, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	add_samples(fx, 11, 3);
	assert_int_equal(lake_store_sealed(fx, fx->host, 3, (DAY0 + 100) * DAY_NS, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 8);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM agent_counters") + lake_q(fx, "SELECT count(*) FROM losses"),
			 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 1);

	/* nothing is past 0 (for ever), nor past 200 days */
	assert_int_equal(lake_maintain(fx, 0, 0, (DAY0 + 100) * DAY_NS + 1, &up), STORE_OK);
	assert_int_equal(up.rows_deleted, 0);
	assert_int_equal(lake_maintain(fx, 200 * DAY_NS, 0, (DAY0 + 101) * DAY_NS, &up), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 11);
	/* 90 days: the cutoff falls in DAY0 + 1 (its first hour): DAY0 goes, DAY0 + 1 stays whole */
	assert_int_equal(lake_maintain(fx, 90 * DAY_NS, 0, (DAY0 + 91) * DAY_NS + 3600000000000ull, &up), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM agent_counters") + lake_q(fx, "SELECT count(*) FROM losses"),
			 0);
	assert_int_equal(lake_q(fx, "SELECT min(seq) FROM records"), 9);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches"), 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 1); /* found on DAY0 + 1 */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1); /* runs have their own retention */
	/* the same day again: retention ran today already */
	assert_int_equal(lake_maintain(fx, 1, 0, (DAY0 + 91) * DAY_NS + 7200000000000ull, &up), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 5);
	/* the next day, with runs kept a year: the report's run (it ended 2023-11-14) and its rows go */
	assert_int_equal(lake_maintain(fx, 90 * DAY_NS, 365 * DAY_NS, (DAY0 + 101) * DAY_NS + 1, &up), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(lake_maintain(fx, 90 * DAY_NS, 30 * DAY_NS, (DAY0 + 102) * DAY_NS + 1, &up), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM run_processes"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE run_id IS NOT NULL"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 3); /* DAY0 + 100's */
	assert_true(up.rows_deleted > 0);
	/* a batch of a day kept is stored as before */
	add_samples(fx, 14, 1);
	assert_int_equal(lake_store_sealed(fx, fx->host, 4, (DAY0 + 102) * DAY_NS + 9, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 4);
}

/* ---- the host a run ran on, and its user (docs/processor.md, "Host identity") ---- */

#define EC2_HOST                                                                                          \
	",\"uid\":1000,\"host\":{\"cloud\":\"aws\",\"instance_type\":\"m6i.xlarge\","                           \
	"\"instance_id\":\"i-0123456789abcdef0\",\"region\":\"us-east-1\",\"cpus\":4,"                        \
	"\"memory_bytes\":16106127360,\"price_per_hour\":0.192}"

/* The host's columns of the only run, as text ("-" for NULL). */
static void host_of(struct lake_fixture *fx, char *text, size_t len)
{
	text_of(fx, "SELECT coalesce(host_cloud, '-') || '|' || coalesce(host_instance_type, '-') || '|' || "
		    "coalesce(host_instance_id, '-') || '|' || coalesce(host_region, '-') || '|' || "
		    "coalesce(host_cpus, '-') || '|' || coalesce(host_memory_bytes, '-') || '|' || "
		    "coalesce(printf('%.6f', host_price_per_hour), '-') || '|' || coalesce(uid, '-') FROM runs",
		text, len);
}

static void live_records_store_the_host_and_a_later_one_without_it_keeps_it(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct store_run r = { 0 };
	char text[256];

	add_live(fx, 1, &(struct live){ .key = "k", .update = 1, .host = EC2_HOST });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "aws|m6i.xlarge|i-0123456789abcdef0|us-east-1|4|16106127360|0.192000|1000");
	assert_int_equal(lake_q(fx, "SELECT typeof(host_price_per_hour) = 'real' FROM runs"), 1);
	/* read back as tracer cost will */
	assert_int_equal(store_run(fx->st, "k", keep_run, &r), STORE_OK);
	assert_true(r.host_cpus.known && r.host_cpus.v == 4);
	assert_true(r.host_memory_bytes.known && r.host_memory_bytes.v == 16106127360);
	assert_true(r.uid.known && r.uid.v == 1000);
	assert_true(r.host_price_known);
	assert_true(r.host_price_per_hour > 0.19199 && r.host_price_per_hour < 0.19201);

	/* a newer record without them (the root left the table: no uid), and one with nulls: nothing erased */
	add_live(fx, 2, &(struct live){ .key = "k", .update = 2 });
	add_live(fx, 3, &(struct live){ .key = "k", .update = 3,
					 .host = ",\"uid\":null,\"host\":{\"cloud\":null,\"instance_type\":null,"
						 "\"instance_id\":null,\"region\":null,\"cpus\":null,\"memory_bytes\":null}" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT update_seq FROM runs"), 3);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "aws|m6i.xlarge|i-0123456789abcdef0|us-east-1|4|16106127360|0.192000|1000");

	/* a newer one that says otherwise wins; an integer price is a price */
	add_live(fx, 4, &(struct live){ .key = "k", .update = 4,
					 .host = ",\"uid\":0,\"host\":{\"cloud\":\"aws\",\"instance_type\":\"m6i.2xlarge\","
						 "\"cpus\":8,\"price_per_hour\":1}" });
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "aws|m6i.2xlarge|i-0123456789abcdef0|us-east-1|8|16106127360|1.000000|0");
	assert_int_equal(lake_q(fx, "SELECT typeof(host_price_per_hour) = 'real' FROM runs"), 1);
	/* an older one changes nothing */
	add_live(fx, 5, &(struct live){ .key = "k", .update = 2, .host = EC2_HOST });
	assert_int_equal(store_sealed(fx, fx->host, 4, &res, NULL), STORE_OK);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "aws|m6i.2xlarge|i-0123456789abcdef0|us-east-1|8|16106127360|1.000000|0");
}

/* Each value only if of its type; a price not negative and finite; counts and uids not negative. */
static void host_values_of_the_wrong_type_or_range_are_null(void **state)
{
	static const char *const hostile[] = {
		",\"uid\":-1,\"host\":{\"cloud\":7,\"instance_type\":[\"m6i\"],\"instance_id\":{},\"region\":true,"
		"\"cpus\":-4,\"memory_bytes\":\"16G\",\"price_per_hour\":-0.5}",
		",\"uid\":\"root\",\"host\":{\"cpus\":4.5,\"price_per_hour\":1e999}",
		",\"uid\":1.5,\"host\":{\"price_per_hour\":\"0.192\"}",
		",\"host\":{\"price_per_hour\":1e10}",
		",\"host\":\"aws\"",
		",\"host\":[1,2]",
	};
	struct lake_fixture *fx = *state;
	struct store_result res;
	char key[16], text[256];

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		add_live(fx, i + 1, &(struct live){ .key = key, .update = 1, .host = hostile[i] });
	}
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_live_records, 0);
	assert_int_equal(res.runs, sizeof(hostile) / sizeof(hostile[0]));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE coalesce(host_cloud, host_instance_type, "
			       "host_instance_id, host_region, host_cpus, host_memory_bytes, host_price_per_hour, "
			       "uid) IS NULL"), sizeof(hostile) / sizeof(hostile[0]));
	/* 0 is a price */
	add_live(fx, 10, &(struct live){ .key = "free", .update = 1, .host = ",\"host\":{\"price_per_hour\":0}" });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	text_of(fx, "SELECT typeof(host_price_per_hour) || ':' || host_price_per_hour FROM runs WHERE run_key = 'free'",
		text, sizeof(text));
	assert_string_equal(text, "real:0.0");
}

static const char host_report[] =
	"{\"report\":{\"schema\":\"tracer.run.v1\",\"command\":[\"make\"],\"exit_code\":0,"
	"\"start_ns\":1700000000000000000,\"end_ns\":1700000001000000000,\"uid\":1001,"
	"\"host\":{\"cloud\":\"gcp\",\"instance_type\":null,\"instance_id\":null,\"region\":\"europe-west4\","
	"\"cpus\":2,\"memory_bytes\":8589934592,\"price_per_hour\":0.0475},"
	"\"agent\":{\"dropped\":0},\"run\":{\"key\":\"b00t-4242-1000\"},\"processes\":[],\"steps\":[],"
	"\"signals\":[]},\"summary\":\"tracer: make: exit 0\\n\"}";

static void a_report_stores_the_host_and_over_a_live_row_keeps_what_it_lacks(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char text[256];

	/* a report alone */
	assert_true(frames_add(&fx->f, 1, TL_RUN_REPORT, host_report, sizeof(host_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "gcp|-|-|europe-west4|2|8589934592|0.047500|1001");
	/* a report without a host keeps nothing it never had: a run of its own, NULL */
	assert_true(frames_add(&fx->f, 2, TL_RUN_REPORT, good_report, sizeof(good_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE run_id = 2 AND host_cloud IS NULL AND uid IS NULL "
			       "AND host_price_per_hour IS NULL"), 1);
}

/* ---- cluster jobs (docs/live.md, "Cluster jobs") ---- */

/* A SLURM job's word on where it came from, as the members add_live appends (and its node's name). */
#define JOB_FROM(dir, host, name)                                                                        \
	",\"slurm_submit_dir\":\"" dir "\",\"slurm_submit_host\":\"" host "\",\"slurm_job_name\":\"" name "\"," \
	"\"uid\":0,\"host\":{\"name\":\"node1\"}"

/* An sbatch exec (pid, at monotonic ts) in cwd with the script and options given. */
static void add_sbatch(struct lake_fixture *fx, uint64_t seq, uint32_t pid, uint64_t ts, const char *cwd,
		       const char *const *args)
{
	_Alignas(8) uint8_t rec[DECODE_MAX_LEN];
	size_t n = encode_exec_ctx(rec, sizeof(rec), ts, pid, 40, ts, "/usr/bin/sbatch", args, cwd, NULL);

	assert_true(n > 0);
	assert_true(frames_add(&fx->f, seq, TR_EXEC, rec, (uint32_t)n));
}

/*
 * Jobs (runs of another host that say where they were submitted from) join the run whose sbatch submitted
 * them, whichever the lake holds first: by host (short name against the head's full one), directory and job
 * name (the script's, or -J); Nextflow's name is in its script, so the one sbatch of its task directory. Not
 * joined: a job from a directory no traced sbatch ran in, one from another host, one whose head had ended
 * before it started.
 */
static void a_cluster_job_joins_the_run_that_submitted_it_whichever_comes_first(void **state)
{
	struct lake_fixture *fx = *state;
	static const char *const align[] = { "sbatch", "-c", "2", "--mem=1000", "/wf/.snakemake/tmp.q/snakejob.align.3.sh",
					     NULL };
	static const char *const sort[] = { "sbatch", "-J", "sort-4", "/wf/.snakemake/tmp.q/snakejob.sort.4.sh", NULL };
	static const char *const nf[] = { "sbatch", ".command.run", NULL };
	static const char *const old[] = { "sbatch", "x.sh", NULL };
	uint8_t node[BATCH_HOST_ID_LEN];
	struct store_result res;
	char text[512];

	host_id_of(node, 2);
	/* the align job and three that stay alone arrive first, from the compute node */
	add_live(fx, 1, &(struct live){ .key = "job-1-1", .update = 1,
					 .host = JOB_FROM("/wf", "login1", "snakejob.align.3.sh") });
	add_live(fx, 2, &(struct live){ .key = "job-2-1", .update = 1, .host = JOB_FROM("/home/u", "login1", "x.sh") });
	add_live(fx, 3, &(struct live){ .key = "job-3-1", .update = 1, .host = JOB_FROM("/old", "login1", "x.sh") });
	add_live(fx, 4, &(struct live){ .key = "job-4-1", .update = 1,
					 .host = JOB_FROM("/wf", "login2", "snakejob.align.3.sh") });
	assert_int_equal(store_sealed(fx, node, 1, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE joined_run_id IS NOT NULL"), 0);
	/* the head: a Snakemake run on login1 whose sbatches ran in /wf, and a Nextflow task's in its directory;
	 * a run that ended before the jobs started, whose sbatch ran in /old */
	add_sbatch(fx, 1, 50, 500, "/wf", align);
	add_sbatch(fx, 2, 51, 600, "/wf", sort);
	add_sbatch(fx, 3, 52, 700, "/wf/work/ab/cdef12", nf);
	add_sbatch(fx, 4, 53, 100, "/old", old);
	add_live(fx, 5, &(struct live){ .key = "head-1-1", .update = 1, .host = ",\"uid\":0,\"host\":{\"name\":\"Login1.cluster\"}",
					 .attributed = "[{\"pid\":50,\"start_mono_ns\":500,\"step\":\"smk-50\",\"tool\":\"sbatch\"},"
						       "{\"pid\":51,\"start_mono_ns\":600,\"step\":\"smk-51\",\"tool\":\"sbatch\"},"
						       "{\"pid\":52,\"start_mono_ns\":700,\"step\":\"nf-ab/cdef12\",\"tool\":\"sbatch\"}]" });
	add_live(fx, 6, &(struct live){ .key = "head-2-1", .update = 1, .state = "succeeded",
					 .end_ns = "1699999990000000000", .exit_code = "0",
					 .host = ",\"uid\":0,\"host\":{\"name\":\"login1\"}",
					 .attributed = "[{\"pid\":53,\"start_mono_ns\":100,\"step\":\"s\",\"tool\":\"sbatch\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	/* then the sort job and the Nextflow task */
	add_live(fx, 7, &(struct live){ .key = "job-5-1", .update = 1,
					 .host = JOB_FROM("/wf", "login1", "sort-4") });
	add_live(fx, 8, &(struct live){ .key = "job-6-1", .update = 1,
					 .host = JOB_FROM("/wf/work/ab/cdef12", "login1", "nf-ALIGN_(s1)") });
	assert_int_equal(store_sealed(fx, node, 2, &res, NULL), STORE_OK);
	text_of(fx, "SELECT group_concat(run_key || '>' || coalesce(joined_run_id, '-') || ':' || "
		    "coalesce(joined_step_id, '-') || ':' || coalesce(submitted_ns, '-'), ' ') FROM "
		    "(SELECT * FROM runs ORDER BY run_key) r", text, sizeof(text));
	assert_string_equal(text, "head-1-1>-:-:- head-2-1>-:-:- job-1-1>5:smk-50:1600000000000000500 job-2-1>-:-:- "
				  "job-3-1>-:-:- job-4-1>-:-:- job-5-1>5:smk-51:1600000000000000600 "
				  "job-6-1>5:nf-ab/cdef12:1600000000000000700");
	/* a record of a joined job again: it stays joined where it is */
	add_live(fx, 9, &(struct live){ .key = "job-1-1", .update = 2,
					 .host = JOB_FROM("/wf", "login1", "snakejob.align.3.sh") });
	assert_int_equal(store_sealed(fx, node, 3, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT joined_run_id FROM runs WHERE run_key = 'job-1-1'"), 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE joined_run_id IS NOT NULL"), 3);
}

static void a_report_merged_into_a_live_row_keeps_the_live_host_where_it_has_none(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char text[256];

	add_live(fx, 1, &(struct live){ .key = "b00t-4242-1000", .update = 1, .host = EC2_HOST });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	/* keyed_report has no host: the live row's stays */
	assert_true(frames_add(&fx->f, 2, TL_RUN_REPORT, keyed_report, sizeof(keyed_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "aws|m6i.xlarge|i-0123456789abcdef0|us-east-1|4|16106127360|0.192000|1000");
	/* a report with a host: its values win, its nulls keep the row's */
	assert_true(frames_add(&fx->f, 3, TL_RUN_REPORT, host_report, sizeof(host_report) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 1);
	host_of(fx, text, sizeof(text));
	assert_string_equal(text, "gcp|m6i.xlarge|i-0123456789abcdef0|europe-west4|2|8589934592|0.047500|1001");
}

/* ---- the file ------------------------------------------------------------------- */

static void lake_reopens_and_refuses_other_versions_and_other_files(void **state)
{
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 3);
	sql_text_of(fx->db, "PRAGMA journal_mode", err, sizeof(err));
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
	struct lake_fixture *fx = *state;
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
	assert_int_equal(lake_q(fx, "SELECT peak_rss_bytes FROM processes WHERE tgid = 42"), 8 << 20);
	assert_int_equal(lake_q(fx, "SELECT maxrss_bytes FROM processes WHERE tgid = 42"), 1004);
	assert_int_equal(lake_q(fx, "SELECT memcg_peak_bytes FROM processes WHERE tgid = 42"), 64 << 20);
	assert_int_equal(lake_q(fx, "SELECT peak_rss_bytes IS NULL AND memcg_peak_bytes IS NULL FROM processes "
			       "WHERE tgid = 43"), 1);
	assert_int_equal(lake_q(fx, "SELECT peak_rss_bytes IS NULL AND maxrss_bytes = 3004 FROM processes WHERE tgid = 44"),
			 1);
}

/*
 * Version 5 records carry the time in direct reclaim: stored with the exit
 * and the sample; NULL (unknown) where the kernel could not measure it
 * (TR_EXIT_NO_RECLAIM) and in version-4 records (an old spool), which
 * still store everything else.
 */
static void exits_and_samples_store_reclaim_time_and_unmeasured_or_old_records_say_unknown(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_exit measured = make_exit(500, 42, 99, 41, 0, 1000);
	struct tr_exit unmeasured = make_exit(600, 43, 120, 41, 0, 2000);
	struct tr_exit old = make_exit(700, 44, 130, 41, 0, 3000);
	struct tr_sample s[3];
	struct store_result res;

	measured.reclaim_ns = 5000000;
	unmeasured.flags |= TR_EXIT_NO_RECLAIM;
	old.reclaim_ns = 77; /* past a version-4 exit: never read */
	old.hdr.version = 4;
	for (int i = 0; i < 3; i++)
		s[i] = encode_sample(400 + i, 42, 99, 41, 1000000, 1 << 20, 0);
	s[0].reclaim_ns = 3000000;
	s[1].flags |= TR_EXIT_NO_RECLAIM;
	s[2].hdr.version = 4;
	assert_true(frames_add(&fx->f, 1, TR_SAMPLE, &s[0], sizeof(s[0])));
	assert_true(frames_add(&fx->f, 2, TR_SAMPLE, &s[1], sizeof(s[1])));
	assert_true(frames_add(&fx->f, 3, TR_SAMPLE, &s[2], TR_SAMPLE_V4_SIZE));
	assert_true(frames_add(&fx->f, 4, TR_EXIT, &measured, sizeof(measured)));
	assert_true(frames_add(&fx->f, 5, TR_EXIT, &unmeasured, sizeof(unmeasured)));
	assert_true(frames_add(&fx->f, 6, TR_EXIT, &old, TR_EXIT_V4_SIZE));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.undecodable, 0);
	assert_int_equal(lake_q(fx, "SELECT reclaim_ns FROM processes WHERE tgid = 42"), 5000000);
	assert_int_equal(lake_q(fx, "SELECT reclaim_ns IS NULL AND runtime_ns = 2003 FROM processes WHERE tgid = 43"), 1);
	assert_int_equal(lake_q(fx, "SELECT reclaim_ns IS NULL AND runtime_ns = 3003 FROM processes WHERE tgid = 44"), 1);
	assert_int_equal(lake_q(fx, "SELECT reclaim_ns FROM samples WHERE seq = 1"), 3000000);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples WHERE seq IN (2, 3) AND reclaim_ns IS NULL AND "
			       "runtime_ns = 1000000"), 2);
}

/*
 * Samples and exits of records version 4 on carry the allocation the process runs (ran) under: its memory
 * cgroup's limit, its CPU quota, the CPUs it may run on. Stored as they came, 0 meaning "none" as in the
 * record; an older record lacks them, and the lake says unknown (NULL), not "no limit".
 */
static void samples_and_exits_store_the_allocation_and_older_records_say_unknown(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_sample s[3];
	struct tr_exit x[2] = { make_exit(500, 42, 99, 41, 0, 1000), make_exit(600, 43, 120, 41, 0, 2000) };
	struct store_result res;

	for (int i = 0; i < 3; i++) {
		s[i] = encode_sample(400 + i, 42, 99, 41, 1000000, 1 << 20, 0);
		s[i].memcg_limit_bytes = (uint64_t)(512 + i) << 20;
		s[i].cpu_quota_millicores = 1500;
		s[i].cpus_allowed = 2;
	}
	s[1].memcg_limit_bytes = 0; /* no memory limit */
	s[1].cpu_quota_millicores = 0;
	s[1].hdr.version = 4;
	s[2].hdr.version = 3; /* its allocation is past its bytes: never read */
	for (int i = 0; i < 2; i++) {
		x[i].memcg_limit_bytes = 256 << 20;
		x[i].cpu_quota_millicores = 250;
		x[i].cpus_allowed = 1;
	}
	x[1].hdr.version = 3;
	assert_true(frames_add(&fx->f, 1, TR_SAMPLE, &s[0], sizeof(s[0])));
	assert_true(frames_add(&fx->f, 2, TR_SAMPLE, &s[1], TR_SAMPLE_V4_SIZE));
	assert_true(frames_add(&fx->f, 3, TR_SAMPLE, &s[2], TR_SAMPLE_V3_SIZE));
	assert_true(frames_add(&fx->f, 4, TR_EXIT, &x[0], sizeof(x[0])));
	assert_true(frames_add(&fx->f, 5, TR_EXIT, &x[1], TR_EXIT_V3_SIZE));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.undecodable, 0);
	assert_int_equal(lake_q(fx, "SELECT memcg_limit_bytes FROM samples WHERE seq = 1"), 512 << 20);
	assert_int_equal(lake_q(fx, "SELECT cpu_quota_millicores * 10 + cpus_allowed FROM samples WHERE seq = 1"),
			 15002);
	assert_int_equal(lake_q(fx, "SELECT memcg_limit_bytes = 0 AND cpu_quota_millicores = 0 AND cpus_allowed = 2 "
			       "FROM samples WHERE seq = 2"), 1);
	assert_int_equal(lake_q(fx, "SELECT memcg_limit_bytes IS NULL AND cpu_quota_millicores IS NULL AND "
			       "cpus_allowed IS NULL AND runtime_ns = 1000000 AND reclaim_ns IS NULL FROM samples "
			       "WHERE seq = 3"), 1);
	assert_int_equal(lake_q(fx, "SELECT memcg_limit_bytes = 268435456 AND cpu_quota_millicores = 250 AND "
			       "cpus_allowed = 1 FROM processes WHERE tgid = 42"), 1);
	assert_int_equal(lake_q(fx, "SELECT memcg_limit_bytes IS NULL AND cpu_quota_millicores IS NULL AND "
			       "cpus_allowed IS NULL AND runtime_ns = 2003 FROM processes WHERE tgid = 43"), 1);
}

/* The schema of version 2, as store.c created it: lakes written before version 3 look like this. */
static const char schema_v2_sql[] =
	"CREATE TABLE schema_version (version INTEGER NOT NULL);\n"
	"CREATE TABLE hosts (\n"
	"  host_id TEXT PRIMARY KEY,\n"
	"  first_seen_ns INTEGER NOT NULL, last_seen_ns INTEGER NOT NULL,\n"
	"  max_seq INTEGER NOT NULL DEFAULT 0,\n"
	"  batches INTEGER NOT NULL DEFAULT 0, records INTEGER NOT NULL DEFAULT 0,\n"
	"  last_batch_seq INTEGER, last_batch_hash TEXT, last_key_id TEXT, last_boot_id TEXT);\n"
	"CREATE TABLE keys (\n"
	"  key_id TEXT PRIMARY KEY, public_key TEXT NOT NULL, host_id TEXT,\n"
	"  source TEXT NOT NULL CHECK (source IN ('file', 'rotation')),\n"
	"  announced_by TEXT, batch_hash TEXT, enrolled_ns INTEGER NOT NULL);\n"
	"CREATE TABLE batches (\n"
	"  batch_id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE,\n"
	"  host_id TEXT NOT NULL, key_id TEXT NOT NULL, boot_id TEXT NOT NULL,\n"
	"  batch_seq INTEGER NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,\n"
	"  nrecords INTEGER NOT NULL, compression INTEGER NOT NULL,\n"
	"  body_len INTEGER NOT NULL, raw_len INTEGER NOT NULL, wire_len INTEGER NOT NULL,\n"
	"  created_ns INTEGER NOT NULL, mono_to_real_ns INTEGER NOT NULL,\n"
	"  prev_hash TEXT NOT NULL, chain TEXT NOT NULL, received_ns INTEGER NOT NULL,\n"
	"  records_new INTEGER NOT NULL DEFAULT 0, records_duplicate INTEGER NOT NULL DEFAULT 0,\n"
	"  records_conflicting INTEGER NOT NULL DEFAULT 0, records_unknown INTEGER NOT NULL DEFAULT 0,\n"
	"  records_undecodable INTEGER NOT NULL DEFAULT 0, bad_run_reports INTEGER NOT NULL DEFAULT 0,\n"
	"  gaps INTEGER NOT NULL DEFAULT 0);\n"
	"CREATE INDEX batches_host ON batches (host_id, batch_seq);\n"
	"CREATE TABLE gaps (\n"
	"  host_id TEXT NOT NULL, from_seq INTEGER NOT NULL, to_seq INTEGER NOT NULL,\n"
	"  found_ns INTEGER NOT NULL, batch_hash TEXT NOT NULL, filled INTEGER NOT NULL DEFAULT 0,\n"
	"  PRIMARY KEY (host_id, from_seq));\n"
	"CREATE TABLE records (\n"
	"  host_id TEXT NOT NULL, seq INTEGER NOT NULL, src_pos INTEGER NOT NULL, src_gen INTEGER NOT NULL,\n"
	"  type INTEGER NOT NULL, flags INTEGER NOT NULL,\n"
	"  ts_ns INTEGER, len INTEGER NOT NULL, crc INTEGER NOT NULL, payload BLOB NOT NULL,\n"
	"  batch_hash TEXT NOT NULL, note TEXT,\n"
	"  PRIMARY KEY (host_id, seq)) WITHOUT ROWID;\n"
	"CREATE TABLE processes (\n"
	"  host_id TEXT NOT NULL, boot_id TEXT NOT NULL, tgid INTEGER NOT NULL, start_ns INTEGER NOT NULL,\n"
	"  start_real_ns INTEGER, end_real_ns INTEGER,\n"
	"  ppid INTEGER, parent_start_ns INTEGER, uid INTEGER, gid INTEGER, comm TEXT,\n"
	"  exe TEXT, argv TEXT, cwd TEXT, env TEXT, exec_flags INTEGER, execs INTEGER NOT NULL DEFAULT 0,\n"
	"  cgroup_id INTEGER, cgroup_v1_id INTEGER, mnt_ns INTEGER, pid_ns INTEGER,\n"
	"  fork_ts_ns INTEGER, exec_ts_ns INTEGER, exit_ts_ns INTEGER,\n"
	"  exit_raw INTEGER, exit_code INTEGER, signal INTEGER, core_dumped INTEGER,\n"
	"  oom_killed INTEGER NOT NULL DEFAULT 0,\n"
	"  utime_ns INTEGER, stime_ns INTEGER, runtime_ns INTEGER, maxrss_bytes INTEGER,\n"
	"  read_bytes INTEGER, write_bytes INTEGER, cancelled_write_bytes INTEGER,\n"
	"  rchar INTEGER, wchar INTEGER, syscr INTEGER, syscw INTEGER,\n"
	"  nvcsw INTEGER, nivcsw INTEGER, min_flt INTEGER, maj_flt INTEGER, run_delay_ns INTEGER,\n"
	"  nr_threads INTEGER, exit_flags INTEGER, net_tx_bytes INTEGER, net_rx_bytes INTEGER,\n"
	"  iowait_ns INTEGER, blocked_ns INTEGER, net_wait_ns INTEGER, files_dropped INTEGER,\n"
	"  state_flags INTEGER, last_pid INTEGER,\n"
	"  peak_rss_bytes INTEGER, memcg_peak_bytes INTEGER,\n"
	"  PRIMARY KEY (host_id, boot_id, tgid, start_ns));\n"
	"CREATE TABLE samples (\n"
	"  host_id TEXT NOT NULL, seq INTEGER NOT NULL, boot_id TEXT NOT NULL,\n"
	"  tgid INTEGER NOT NULL, start_ns INTEGER NOT NULL, ts_ns INTEGER NOT NULL, ppid INTEGER,\n"
	"  runtime_ns INTEGER, utime_ns INTEGER, stime_ns INTEGER, rss_bytes INTEGER, hiwater_rss_bytes INTEGER,\n"
	"  read_bytes INTEGER, write_bytes INTEGER, rchar INTEGER, wchar INTEGER,\n"
	"  net_tx_bytes INTEGER, net_rx_bytes INTEGER, iowait_ns INTEGER, blocked_ns INTEGER,\n"
	"  net_wait_ns INTEGER, run_delay_ns INTEGER, cgroup_id INTEGER, uid INTEGER, nr_threads INTEGER,\n"
	"  state_flags INTEGER, flags INTEGER, comm TEXT,\n"
	"  PRIMARY KEY (host_id, seq)) WITHOUT ROWID;\n"
	"CREATE INDEX samples_process ON samples (host_id, boot_id, tgid, start_ns);\n"
	"CREATE TABLE files (\n"
	"  host_id TEXT NOT NULL, seq INTEGER NOT NULL, boot_id TEXT NOT NULL,\n"
	"  tgid INTEGER NOT NULL, start_ns INTEGER NOT NULL, ts_ns INTEGER NOT NULL,\n"
	"  path TEXT NOT NULL, mode TEXT NOT NULL, truncated INTEGER NOT NULL,\n"
	"  PRIMARY KEY (host_id, seq)) WITHOUT ROWID;\n"
	"CREATE INDEX files_process ON files (host_id, boot_id, tgid, start_ns);\n"
	"CREATE TABLE cgroups (\n"
	"  host_id TEXT NOT NULL, boot_id TEXT NOT NULL, v1 INTEGER NOT NULL, cgroup_id INTEGER NOT NULL,\n"
	"  path TEXT NOT NULL, truncated INTEGER NOT NULL, seq INTEGER NOT NULL,\n"
	"  PRIMARY KEY (host_id, boot_id, v1, cgroup_id));\n"
	"CREATE TABLE signals (\n"
	"  signal_id INTEGER PRIMARY KEY, host_id TEXT NOT NULL, boot_id TEXT NOT NULL, seq INTEGER NOT NULL,\n"
	"  run_id INTEGER, source TEXT NOT NULL, kind TEXT NOT NULL, pid INTEGER, start_ns INTEGER,\n"
	"  ts_ns INTEGER, step TEXT, tool TEXT, detail TEXT);\n"
	"CREATE INDEX signals_run ON signals (run_id);\n"
	"CREATE TABLE agent_counters (\n"
	"  host_id TEXT NOT NULL, seq INTEGER NOT NULL, boot_id TEXT NOT NULL, ts_ns INTEGER NOT NULL,\n"
	"  kernel_drops INTEGER NOT NULL, kernel_state_drops INTEGER NOT NULL, ring_drops INTEGER NOT NULL,\n"
	"  records_copied INTEGER NOT NULL, bad_consumer_pos INTEGER NOT NULL,\n"
	"  kernel_drops_by_type TEXT NOT NULL, ring_drops_by_type TEXT NOT NULL,\n"
	"  PRIMARY KEY (host_id, seq));\n"
	"CREATE TABLE losses (\n"
	"  host_id TEXT NOT NULL, seq INTEGER NOT NULL, reason TEXT NOT NULL,\n"
	"  first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, records INTEGER NOT NULL,\n"
	"  bytes INTEGER NOT NULL, PRIMARY KEY (host_id, seq));\n"
	"CREATE TABLE runs (\n"
	"  run_id INTEGER PRIMARY KEY, host_id TEXT NOT NULL, boot_id TEXT NOT NULL, seq INTEGER NOT NULL,\n"
	"  batch_hash TEXT NOT NULL, schema TEXT, command TEXT, exit_code INTEGER,\n"
	"  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, dropped INTEGER,\n"
	"  pipeline TEXT, pipeline_run_id TEXT, engine TEXT, run_name TEXT, summary TEXT,\n"
	"  processes INTEGER, steps INTEGER, signals INTEGER,\n"
	"  UNIQUE (host_id, seq));\n"
	"CREATE INDEX runs_pipeline_run ON runs (pipeline_run_id);\n"
	"CREATE TABLE steps (\n"
	"  run_id INTEGER NOT NULL, idx INTEGER NOT NULL, step_id TEXT, name TEXT, tools TEXT,\n"
	"  start_ns INTEGER, end_ns INTEGER, exit_code INTEGER, signal INTEGER, failed INTEGER,\n"
	"  processes INTEGER, failed_processes INTEGER, oom_killed INTEGER, cpu_ns INTEGER,\n"
	"  peak_rss_bytes INTEGER, read_bytes INTEGER, write_bytes INTEGER,\n"
	"  rss_sum_of_peaks_bytes INTEGER, peak_rss_partial INTEGER, memcg_peak_bytes INTEGER,\n"
	"  PRIMARY KEY (run_id, idx));\n"
	"CREATE TABLE run_processes (\n"
	"  run_id INTEGER NOT NULL, idx INTEGER NOT NULL, pid INTEGER, ppid INTEGER,\n"
	"  start_ns INTEGER, end_ns INTEGER, exe TEXT, argv TEXT, tool TEXT, step TEXT,\n"
	"  exit_code INTEGER, signal INTEGER, core_dumped INTEGER, oom_killed INTEGER,\n"
	"  cpu_user_ns INTEGER, cpu_sys_ns INTEGER, peak_rss_bytes INTEGER,\n"
	"  read_bytes INTEGER, write_bytes INTEGER, rchar INTEGER, wchar INTEGER,\n"
	"  net_tx_bytes INTEGER, net_rx_bytes INTEGER, cgroup TEXT, container_id TEXT,\n"
	"  maxrss_rusage_bytes INTEGER, peak_rss_source TEXT,\n"
	"  PRIMARY KEY (run_id, idx));\n";

/* A lake of an older version, made by hand: the version-2 schema (less version 2's columns for 1), some rows. */
static void make_old_lake(const char *path, int version)
{
	static const char *const v2_columns[][2] = {
		{ "processes", "peak_rss_bytes" },	   { "processes", "memcg_peak_bytes" },
		{ "steps", "rss_sum_of_peaks_bytes" },	   { "steps", "peak_rss_partial" },
		{ "steps", "memcg_peak_bytes" },	   { "run_processes", "maxrss_rusage_bytes" },
		{ "run_processes", "peak_rss_source" },
	};
	static const char rows[] =
		"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, command, exit_code, start_ns, end_ns) "
		"VALUES (1, 'h', 'b', 1, 'x', '[\"make\"]', 2, 10, 20), (2, 'h', 'b', 2, 'x', '[\"true\"]', 0, 30, 40);"
		"INSERT INTO steps (run_id, idx, step_id, name, failed) VALUES (1, 0, 's', 'a', 1), (1, 1, 's', 'b', 0), "
		"(1, 2, 't', 'c', 0), (2, 0, 's', 'd', 0);"
		"INSERT INTO processes (host_id, boot_id, tgid, start_ns, exe) VALUES ('h', 'b', 7, 70, '/bin/true');";
	char sql[160];
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, schema_v2_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	for (size_t i = 0; version < 2 && i < sizeof(v2_columns) / sizeof(v2_columns[0]); i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s DROP COLUMN %s", v2_columns[i][0], v2_columns[i][1]);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", version);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* An older lake (versions 1 and 2) becomes exactly a lake of this version when the ingest opens it. */
static void upgraded(struct lake_fixture *fx, int version)
{
	char path[128], err[512];

	snprintf(path, sizeof(path), "%s/v%d.db", fx->dir, version);
	make_old_lake(path, version);
	lake_assert_upgraded(fx, path, version);
	/* the rows are kept; the report runs and steps have the states a report stored now would give */
	sql_text_of(path, "SELECT group_concat(run_id || ':' || state || ':' || detected_by || ':' || last_update_ns, ',') "
		       "FROM runs", err, sizeof(err));
	assert_string_equal(err, "1:failed:tracer_run:20,2:succeeded:tracer_run:40");
	/* two steps of run 1 had the id s (a host may send that): the later one lost it, for the unique index */
	sql_text_of(path, "SELECT group_concat(run_id || ':' || coalesce(step_id, '-') || ':' || name || ':' || state, ',') "
		       "FROM (SELECT * FROM steps ORDER BY run_id, idx)", err, sizeof(err));
	assert_string_equal(err, "1:s:a:failed,1:-:b:succeeded,1:t:c:succeeded,2:s:d:succeeded");
	assert_int_equal(sql_int(path, "SELECT count(*) FROM processes WHERE exe = '/bin/true' AND run_id IS NULL"), 1);
}

static void version_1_and_2_lakes_are_upgraded_in_place_and_keep_their_rows(void **state)
{
	upgraded(*state, 1);
	upgraded(*state, 2);
}

/*
 * A lake of version 3, as the tracer before issue 15 left it: an old lake upgraded to this version with a
 * live run stored, then made a lake of version 3 again (without the host a run ran on, version 4's).
 */
static void make_v3_lake(struct lake_fixture *fx, const char *path)
{
	struct store *st = NULL, *keep = fx->st;
	struct store_result res;
	char err[256];

	make_old_lake(path, 2);
	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	fx->st = st;
	add_live(fx, 1, &(struct live){ .key = "b00t-7-70", .update = 4, .state = "running" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	fx->st = keep;
	store_close(st);
	lake_downgrade(path, 3);
}

/* A lake of version 8 (before received_ns) upgraded: each row takes its batch's time again, as stored. */
static void a_version_8_lake_gets_each_rows_received_ns_from_its_batch(void **state)
{
	struct lake_fixture *fx = *state;
	struct store *st = NULL, *keep = fx->st;
	struct store_result res;
	char path[128], err[256];
	uint8_t boot[BATCH_BOOT_ID_LEN] = { 8 };
	struct tr_counters k;
	struct tl_loss loss = { .reason = TL_LOSS_RING, .first_seq = 1, .last_seq = 2, .records = 2, .bytes = 9 };

	lake_mirror_off(fx); /* an old lake made by hand */
	snprintf(path, sizeof(path), "%s/v8.db", fx->dir);
	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	fx->st = st;
	add_samples(fx, 1, 3);
	assert_int_equal(lake_store_sealed(fx, fx->host, 1, 1700000000000000111ull, &res, NULL), STORE_OK);
	frames_reset(&fx->f);
	add_samples(fx, 4, 2);
	memset(&k, 0, sizeof(k));
	k.hdr = encode_hdr(TR_COUNTERS, 6);
	assert_true(frames_add(&fx->f, 6, TR_COUNTERS, &k, sizeof(k)));
	assert_true(frames_add(&fx->f, 7, TL_LOSS, &loss, sizeof(loss)));
	assert_int_equal(store_sealed_boot(fx, boot, 2, &res), STORE_OK);
	frames_reset(&fx->f);
	fx->st = keep;
	store_close(st);
	lake_downgrade(path, 8);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('samples') WHERE name = 'received_ns'"),
			 0);
	lake_assert_upgraded(fx, path, 8);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM records r JOIN batches b ON b.hash = r.batch_hash AND "
				       "b.received_ns = r.received_ns"), 7);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM records WHERE received_ns = 1700000000000000111"), 3);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM samples s JOIN records r USING (host_id, stream, seq) "
				       "WHERE s.received_ns = r.received_ns AND r.received_ns > 0"), 5);
	/* version 10's: the agent's counters and losses the same way */
	assert_int_equal(sql_int(path, "SELECT count(*) FROM agent_counters a JOIN records r USING (host_id, stream, "
				       "seq) WHERE a.received_ns = r.received_ns AND r.received_ns > 0"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM losses l JOIN records r USING (host_id, stream, seq) "
				       "WHERE l.received_ns = r.received_ns AND r.received_ns > 0"), 1);
}

static void a_version_3_lake_is_upgraded_keeping_its_rows_with_the_host_unknown(void **state)
{
	struct lake_fixture *fx = *state;
	char path[128], err[512];
	struct store_result res;

	lake_mirror_off(fx); /* an old lake made by hand */

	snprintf(path, sizeof(path), "%s/v3.db", fx->dir);
	make_v3_lake(fx, path);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'uid'"), 0);
	lake_assert_upgraded(fx, path, 3);
	/* every row kept, as it was; the new columns NULL: unknown */
	sql_text_of(path, "SELECT group_concat(run_id || ':' || coalesce(run_key, '-') || ':' || state || ':' || "
		       "coalesce(update_seq, '-'), ',') FROM runs", err, sizeof(err));
	assert_string_equal(err, "1:-:failed:-,2:-:succeeded:-,3:b00t-7-70:running:4");
	assert_int_equal(sql_int(path, "SELECT count(*) FROM runs WHERE coalesce(host_cloud, host_instance_type, "
				       "host_instance_id, host_region, host_cpus, host_memory_bytes, host_price_per_hour, "
				       "uid) IS NULL"), 3);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM steps"), 4);
	/* and the upgraded lake takes the host of the run's next record */
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&fx->st, path, false, err, sizeof(err)), STORE_OK);
	add_live(fx, 2, &(struct live){ .key = "b00t-7-70", .update = 5, .host = EC2_HOST });
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM runs WHERE run_key = 'b00t-7-70' AND "
				       "host_instance_type = 'm6i.xlarge' AND uid = 1000"), 1);
}

/*
 * A lake of version 6, as the tracer before issue 25 left it: a lake of this version with a process and
 * its samples stored, then version 7's columns taken away again.
 */
static void make_v6_lake(struct lake_fixture *fx, const char *path)
{
	struct store *st = NULL, *keep = fx->st;
	struct tr_exit ex = make_exit(500, 42, 99, 41, 0, 1000);
	struct store_result res;
	char err[256];

	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	fx->st = st;
	add_samples(fx, 1, 2);
	assert_true(frames_add(&fx->f, 3, TR_EXIT, &ex, sizeof(ex)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 3);
	frames_reset(&fx->f);
	fx->st = keep;
	store_close(st);
	lake_downgrade(path, 6);
}

static void a_version_6_lake_is_upgraded_keeping_its_rows_with_reclaim_unknown(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_exit ex = make_exit(900, 43, 120, 41, 0, 2000);
	char path[128], err[512];
	struct store_result res;

	lake_mirror_off(fx); /* an old lake made by hand */

	snprintf(path, sizeof(path), "%s/v6.db", fx->dir);
	make_v6_lake(fx, path);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('processes') WHERE name = 'reclaim_ns'"),
			 0);
	lake_assert_upgraded(fx, path, 6);
	/* every row kept, as it was; the new columns NULL: unknown */
	assert_int_equal(sql_int(path, "SELECT count(*) FROM processes WHERE tgid = 42 AND runtime_ns = 1003 AND "
				       "reclaim_ns IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM samples WHERE tgid = 4242 AND reclaim_ns IS NULL"), 2);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM records"), 3);
	/* and the upgraded lake stores the next exit's reclaim time */
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&fx->st, path, false, err, sizeof(err)), STORE_OK);
	ex.reclaim_ns = 1234;
	assert_true(frames_add(&fx->f, 4, TR_EXIT, &ex, sizeof(ex)));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(sql_int(path, "SELECT reclaim_ns FROM processes WHERE tgid = 43"), 1234);
}

/*
 * A lake of version 7 (before streams): its rows are its hosts' stream 0, which a spool of before keeps
 * sending; what it knew of each host's seqs (hosts.max_seq) is the stream's, so a repeat is a duplicate
 * and a seq after the last no gap. Another stream of the host starts its own seqs.
 */
static void a_version_7_lake_is_upgraded_its_seqs_stream_0(void **state)
{
	struct lake_fixture *fx = *state;
	struct store *st = NULL, *keep = fx->st;
	struct store_result res;
	char path[128], err[512];

	lake_mirror_off(fx); /* an old lake made by hand */

	snprintf(path, sizeof(path), "%s/v7.db", fx->dir);
	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	fx->st = st;
	add_samples(fx, 1, 4);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	fx->st = keep;
	store_close(st);
	lake_downgrade(path, 7);
	/* as the ingest of version 7 kept it */
	assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'stream'"), 0);
	{
		sqlite3 *db;

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db, "UPDATE hosts SET max_seq = 4", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db);
	}
	lake_assert_upgraded(fx, path, 7);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM records WHERE stream = 0"), 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM samples WHERE stream = 0"), 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM streams WHERE stream = 0 AND max_seq = 4 AND batches = 1 "
				       "AND records = 4 AND last_batch_seq = 1"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM batches WHERE stream = 0"), 1);
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&fx->st, path, false, err, sizeof(err)), STORE_OK);
	add_samples(fx, 3, 3); /* 3, 4 again; 5 next */
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.dup_records, 2);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(res.gaps, 0);
	fx->f.stream = 77;
	add_samples(fx, 1, 2);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 2);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM samples"), 7);
}

/*
 * A new lake holds exactly lake/schema.c's tables, each with exactly its columns (name, type, NOT NULL, the
 * key) and its indexes: the one table is what the lake is. An upgrade from a version this build does not
 * know is refused.
 */
static bool in_key(const char *key, const char *name) /* a column of "a, b, c" */
{
	size_t n = strlen(name);

	for (const char *k = key; k; k = strchr(k, ',') ? strchr(k, ',') + 2 : NULL)
		if (!strncmp(k, name, n) && (k[n] == ',' || k[n] == '\0'))
			return true;
	return false;
}

static void a_new_lake_is_exactly_the_schema_table(void **state)
{
	static const char *const type[] = { [LK_INT] = "INTEGER", [LK_TEXT] = "TEXT", [LK_REAL] = "REAL",
					     [LK_BLOB] = "BLOB", [LK_ID] = "INTEGER" };
	struct lake_fixture *fx = *state;
	unsigned columns = 0, indexes = 0;
	struct obuf o;

	for (unsigned i = 0; i < lake_ntables; i++) {
		const struct lake_table *t = &lake_tables[i];

		unsigned live = 0;

		assert_ptr_equal(lake_table(t->name), t);
		for (unsigned j = 0; j < t->ncols; j++) {
			const struct lake_column *c = &t->cols[j];

			assert_true(c->since >= t->since && c->since <= LAKE_SCHEMA_VERSION);
			if (c->until) { /* removed: not in a new lake */
				assert_true(c->until > c->since && c->until <= LAKE_SCHEMA_VERSION);
				assert_int_equal(lake_q(fx, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
							t->name, c->name), 0);
				continue;
			}
			live++;
			assert_int_equal(lake_q(fx, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s' AND "
						    "type = '%s' AND \"notnull\" = %d AND (pk > 0) = %d", t->name, c->name,
						type[c->type], !!(c->flags & LK_NOT_NULL),
						c->type == LK_ID || (c->flags & LK_KEY) ||
							(t->key && in_key(t->key, c->name))),
					 1);
			columns++;
		}
		assert_int_equal(lake_q(fx, "SELECT count(*) FROM pragma_table_info('%s')", t->name), live);
		for (unsigned j = 0; j < t->nidx; j++) {
			assert_int_equal(lake_q(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
						    "name = '%s' AND tbl_name = '%s'", t->idx[j].name, t->name),
					 !t->idx[j].until);
			indexes += !t->idx[j].until;
		}
		/* a key changed by a version: the table had one before it */
		assert_true(!t->rebuilt == !t->was && (!t->rebuilt || (t->rebuilt > t->since && (t->key || t->unique))));
	}
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), lake_ntables);
	/* the named indexes, and SQLite's own for each UNIQUE column or constraint and text or composite key */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"),
			 indexes);
	assert_true(columns > 300);
	assert_null(lake_table("no_such_table"));
	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(lake_schema_sqlite(-1, LAKE_SCHEMA_VERSION, &o), -EINVAL);
	assert_int_equal(lake_schema_sqlite(LAKE_SCHEMA_VERSION + 1, LAKE_SCHEMA_VERSION + 1, &o), -EINVAL);
	assert_int_equal(lake_schema_sqlite(3, 2, &o), -EINVAL);
	assert_int_equal(lake_schema_sqlite(0, 0, &o), -EINVAL);
	assert_int_equal(o.len, 0);
	assert_int_equal(lake_schema_sqlite(LAKE_SCHEMA_VERSION, LAKE_SCHEMA_VERSION, &o), 0); /* nothing to do */
	assert_int_equal(o.len, 0);
	obuf_free(&o);
}

/* An upgraded lake takes live records like a new one. */
static void upgraded_lake_takes_live_records(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char err[256];

	lake_mirror_off(fx); /* an old lake made by hand */

	store_close(fx->st);
	fx->st = NULL;
	unlink(fx->db);
	make_old_lake(fx->db, 2);
	assert_int_equal(store_open(&fx->st, fx->db, false, err, sizeof(err)), STORE_OK);
	add_live(fx, 1, &(struct live){ .key = "k", .update = 1, .steps = "[{\"id\":\"s\",\"state\":\"running\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE run_id = 3 AND state = 'running'"), 1);
}

/* ---- speed ----------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- new or not, decided in memory; rows written in bulk --------------------------------------------- */

/*
 * A re-formed batch across stored seqs, a filled gap and new seqs: the seqs the stream holds are
 * duplicates (one with other bytes: a conflict, kept as it was), those of the gap and above are new.
 */
static void a_batch_across_stored_seqs_and_a_gap_counts_each_seq_once(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_sample other = encode_sample(1, 1, 1, 1, 1, 1, 1);
	struct store_result res;

	add_samples(fx, 1, 10);
	add_samples(fx, 20, 6);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.gaps, 1); /* 11..19 */
	add_samples(fx, 5, 5);         /* held, the same */
	assert_true(frames_add(&fx->f, 10, TR_SAMPLE, &other, sizeof(other))); /* held, other bytes */
	add_samples(fx, 11, 12);       /* 11..19 new, in the gap; 20..22 held */
	add_samples(fx, 26, 2);        /* new, above */
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.records, 20);
	assert_int_equal(res.new_records, 11);
	assert_int_equal(res.dup_records, 9);
	assert_int_equal(res.conflicts, 1);
	assert_int_equal(res.gaps, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches WHERE batch_seq = 2 AND records_new = 11 AND "
			       "records_duplicate = 9 AND records_conflicting = 1"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 27);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 27);
	assert_int_equal(crcs_recomputed(fx), 27);
	assert_int_equal(lake_q(fx, "SELECT filled FROM gaps WHERE from_seq = 11 AND to_seq = 19"), 9);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), 27);
	/* the conflicting seq keeps what was stored first, its record and its sample */
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 10"), 10000000);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records r JOIN batches b ON b.hash = r.batch_hash "
			       "WHERE b.batch_seq = 1"), 16);
	assert_int_equal(lake_q(fx, "SELECT sum(seq) FROM records r JOIN batches b ON b.hash = r.batch_hash "
			       "WHERE b.batch_seq = 2"), 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 26 + 27);
}

/*
 * The fixture's frames sealed and stored as they are, without batch_open's checks (seqs increasing): the
 * store does not rely on them to count each seq once. The frames reset after.
 */
static int store_frames_unchecked(struct lake_fixture *fx, uint64_t batch_seq, struct store_result *res)
{
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN];
	int rc;

	assert_int_equal(seal_frames(&fx->key, fx->host, batch_seq, NULL, BATCH_COMP_NONE, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, hash), 0);
	rc = lake_store_raw(fx, &h, hash, fx->f.buf, fx->f.len, s.len, 1700000000000000000ull + batch_seq, res);
	free(s.wire);
	frames_reset(&fx->f);
	return rc;
}

/* A seq twice in one batch (the ingest refuses such a batch; the store counts it right all the same). */
static void a_seq_repeated_within_a_batch_is_stored_once_and_counted(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_sample a = encode_sample(1000, 4242, 900, 1, 111, 1 << 20, 1);
	struct tr_sample b = encode_sample(1000, 4242, 900, 1, 222, 1 << 20, 1);
	struct store_result res;

	add_samples(fx, 1, 3);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	add_samples(fx, 2, 1);                                              /* held, the same */
	assert_true(frames_add(&fx->f, 4, TR_SAMPLE, &a, sizeof(a)));       /* new */
	assert_true(frames_add(&fx->f, 4, TR_SAMPLE, &b, sizeof(b)));       /* this batch's, other bytes */
	assert_true(frames_add(&fx->f, 2, TR_SAMPLE, &b, sizeof(b)));       /* held, other bytes */
	assert_true(frames_add(&fx->f, 5, TR_SAMPLE, &b, sizeof(b)));       /* new */
	assert_true(frames_add(&fx->f, 4, TR_SAMPLE, &a, sizeof(a)));       /* this batch's, the same */
	assert_true(frames_add(&fx->f, 5, TR_SAMPLE, &b, sizeof(b)));       /* this batch's, the same */
	assert_int_equal(store_frames_unchecked(fx, 2, &res), STORE_OK);
	assert_int_equal(res.records, 7);
	assert_int_equal(res.new_records, 2);
	assert_int_equal(res.dup_records, 5);
	assert_int_equal(res.conflicts, 2);
	assert_int_equal(res.gaps, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 5);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 5);
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 4"), 111);
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 5"), 222);
	assert_int_equal(lake_q(fx, "SELECT runtime_ns FROM samples WHERE seq = 2"), 2000000);
	assert_int_equal(crcs_recomputed(fx), 5);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), 5);
}

/*
 * A record nothing was derived from carries its note in its own row (written once, with it): a kernel
 * record the decoder refused (its time unknown), a lake record of the wrong shape, a type the lake does
 * not know; a good record has no note and its time. Sent again: duplicates, nothing changed.
 */
static void a_records_note_is_written_with_its_row(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_exit zero_pid = make_exit(500, 0, 99, 41, 0, 0);
	struct tr_exit good = make_exit(600, 42, 99, 41, 0, 0);
	static const char bad_live[] = "{\"schema\":\"tracer.live.v1\"}";
	static const char bad_host[] = "{\"schema\":\"tracer.host.v1\",\"start_ns\":2,\"end_ns\":1}";
	struct store_result res;
	char text[256];

	for (int round = 0; round < 2; round++) {
		assert_true(frames_add(&fx->f, 1, TR_EXIT, &zero_pid, sizeof(zero_pid)));
		assert_true(frames_add(&fx->f, 2, TL_RUN, bad_live, sizeof(bad_live) - 1));
		assert_true(frames_add(&fx->f, 3, TL_HOST, bad_host, sizeof(bad_host) - 1));
		assert_true(frames_add(&fx->f, 4, 300, "x", 1));
		assert_true(frames_add(&fx->f, 5, TR_EXIT, &good, sizeof(good)));
		assert_int_equal(store_sealed(fx, fx->host, 1 + (uint64_t)round, &res, NULL), STORE_OK);
		assert_int_equal(res.new_records, round ? 0 : 5);
		assert_int_equal(res.dup_records, round ? 5 : 0);
		assert_int_equal(res.conflicts, 0);
	}
	sql_text_of(fx->db, "SELECT group_concat(seq || ':' || coalesce(note, '-') || ':' || coalesce(ts_ns, -1), ',') "
			 "FROM (SELECT * FROM records ORDER BY seq)", text, sizeof(text));
	assert_string_equal(text, "1:pid:-1,2:bad_live_record:-1,3:bad_host_record:-1,4:unknown_type:-1,5:-:600");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM processes"), 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM batches WHERE records_undecodable = 1 AND "
			       "records_unknown = 1 AND bad_live_records = 2"), 1);
}

/*
 * The bulk tables' text is UTF-8: a host's bytes that are not, and NUL (a JSON \u0000), each become U+FFFD
 * (PostgreSQL's COPY takes nothing else); UTF-8 of every length is kept; the record keeps the bytes.
 */
static void bulk_rows_store_text_as_utf8_with_u_fffd(void **state)
{
	struct lake_fixture *fx = *state;
	_Alignas(8) uint8_t file[256];
	struct tr_sample sm = encode_sample(1000, 4242, 900, 1, 1, 1, 1);
	static const char beat[] =
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":1,\"end_ns\":2,\"uptime_s\":0.5,"
		"\"host\":{\"cloud\":\"a\\u0000b\",\"instance_type\":\"caf\\u00e9 \\u20ac \\ud83d\\ude00\","
		"\"region\":\"tab\\there\",\"price_per_hour\":0.25}}";
	size_t nf = encode_file(file, sizeof(file), 400, 42, 99, TR_FILE_READ, "/data/\xc3\xa9t\xe9\xff\xc0\x80/x");
	struct store_result res;
	char text[256];

	memcpy(sm.comm, "py\xffthon\xe2\x82", 9);
	assert_true(frames_add(&fx->f, 1, TR_SAMPLE, &sm, sizeof(sm)));
	assert_true(frames_add(&fx->f, 2, TR_FILE, file, (uint32_t)nf));
	assert_true(frames_add(&fx->f, 3, TL_HOST, beat, sizeof(beat) - 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 3);
	assert_int_equal(res.undecodable + res.bad_live_records, 0);
	sql_text_of(fx->db, "SELECT comm FROM samples", text, sizeof(text));
	assert_string_equal(text, "py\xef\xbf\xbdthon\xef\xbf\xbd\xef\xbf\xbd");
	sql_text_of(fx->db, "SELECT path FROM files", text, sizeof(text));
	assert_string_equal(text, "/data/\xc3\xa9t\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd/x");
	sql_text_of(fx->db, "SELECT host_cloud || '|' || host_instance_type || '|' || host_region || '|' || "
			 "host_price_per_hour || '|' || uptime_s FROM heartbeats", text, sizeof(text));
	assert_string_equal(text, "a\xef\xbf\xbd" "b|caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80|tab\there|0.25|0.5");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND "
			       "instr(payload, CAST(X'c3a974e9ffc080' AS BLOB)) > 0"), 1);
}

/* A record's payload is kept byte for byte: NUL, 0xff, every byte value, and nothing at all. */
static void payloads_keep_every_byte(void **state)
{
	struct lake_fixture *fx = *state;
	uint8_t bytes[512];
	struct store_result res;
	char text[1100], want[1100];

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 0xff : i);
	assert_true(frames_add(&fx->f, 1, 250, bytes, sizeof(bytes)));
	assert_true(frames_add(&fx->f, 2, 250, bytes, 0));
	assert_true(frames_add(&fx->f, 3, 250, "\0", 1));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.unknown, 3);
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(want + 2 * i, 3, "%02X", bytes[i]);
	sql_text_of(fx->db, "SELECT hex(payload) FROM records WHERE seq = 1", text, sizeof(text));
	assert_string_equal(text, want);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE seq = 2 AND typeof(payload) = 'blob' AND "
			       "length(payload) = 0 AND len = 0"), 1);
	sql_text_of(fx->db, "SELECT hex(payload) FROM records WHERE seq = 3", text, sizeof(text));
	assert_string_equal(text, "00");
	assert_int_equal(crcs_recomputed(fx), 3);
}

/*
 * A host's unsigned 64-bit values are stored as the lake's signed integers, wrapping: 2^64 - 1 as -1, 2^63
 * as INT64_MIN, 2^63 - 1 as INT64_MAX, in every bulk table; seqs too, and a stream whose seqs cross 2^63
 * has its duplicates found across the wrap.
 */
static void host_u64_values_wrap_to_int64s_ends(void **state)
{
	struct lake_fixture *fx = *state;
	const uint64_t top = (uint64_t)INT64_MAX;
	struct tr_sample sm = encode_sample(UINT64_MAX, 4242, top + 1, 1, UINT64_MAX, top + 1, top);
	struct tr_counters k;
	struct tl_loss loss = { .reason = TL_LOSS_RING, .first_seq = UINT64_MAX, .last_seq = top + 1,
				.records = top, .bytes = 0 };
	struct store_result res;
	char text[512];

	memset(&k, 0, sizeof(k));
	k.hdr = encode_hdr(TR_COUNTERS, top + 1);
	k.records_copied = UINT64_MAX;
	k.bad_consumer_pos = top;
	sm.utime_ns = top + 1;
	sm.cgroup_id = UINT64_MAX;
	assert_true(frames_add_src(&fx->f, top, UINT64_MAX, UINT32_MAX, TR_SAMPLE, &sm, sizeof(sm)));
	assert_true(frames_add(&fx->f, top + 1, TR_COUNTERS, &k, sizeof(k)));
	assert_true(frames_add(&fx->f, top + 2, TL_LOSS, &loss, sizeof(loss)));
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 3);
	assert_int_equal(res.undecodable, 0);
	sql_text_of(fx->db, "SELECT group_concat(seq || ':' || src_pos || ':' || src_gen || ':' || coalesce(ts_ns, 'n'), ',') "
			 "FROM (SELECT * FROM records ORDER BY seq)", text, sizeof(text));
	assert_string_equal(text, "-9223372036854775808:0:0:-9223372036854775808,"
				  "-9223372036854775807:0:0:n,"
				  "9223372036854775807:-1:4294967295:-1");
	sql_text_of(fx->db, "SELECT ts_ns || ':' || start_ns || ':' || runtime_ns || ':' || utime_ns || ':' || "
			 "rss_bytes || ':' || rchar || ':' || cgroup_id FROM samples", text, sizeof(text));
	assert_string_equal(text, "-1:-9223372036854775808:-1:-9223372036854775808:-9223372036854775808:"
				  "9223372036854775807:-1");
	sql_text_of(fx->db, "SELECT ts_ns || ':' || records_copied || ':' || bad_consumer_pos FROM agent_counters",
		    text, sizeof(text));
	assert_string_equal(text, "-9223372036854775808:-1:9223372036854775807");
	sql_text_of(fx->db, "SELECT first_seq || ':' || last_seq || ':' || records FROM losses", text, sizeof(text));
	assert_string_equal(text, "-1:-9223372036854775808:9223372036854775807");
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), INT64_MIN + 1);
	/* sent again with the next seq: the two below the wrap and the one above it are held */
	add_samples(fx, top, 1);
	assert_true(frames_add(&fx->f, top + 1, TR_COUNTERS, &k, sizeof(k)));
	assert_true(frames_add(&fx->f, top + 2, TL_LOSS, &loss, sizeof(loss)));
	assert_true(frames_add(&fx->f, top + 3, TL_LOSS, &loss, sizeof(loss)));
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(res.dup_records, 3);
	assert_int_equal(res.conflicts, 1); /* top: another sample */
	assert_int_equal(res.gaps, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), 4);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM losses"), 2);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), INT64_MIN + 2);
}

/*
 * A run report and live records of its run in one batch end as in three: the report's record is in the
 * lake (PostgreSQL: sent from its buffer) before the next live record asks whether the run holds one.
 */
static void a_report_between_live_records_of_its_run_in_one_batch_is_final(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_fork fk42 = make_fork(100, 41, 50, 42, 99), fk43 = make_fork(110, 41, 50, 43, 120);
	struct store_result res;
	char text[256];

	assert_true(frames_add(&fx->f, 1, TR_FORK, &fk42, sizeof(fk42)));
	assert_true(frames_add(&fx->f, 2, TR_FORK, &fk43, sizeof(fk43)));
	add_live(fx, 3, &(struct live){ .key = "b00t-4242-1000", .update = 1,
					 .steps = "[{\"id\":\"s1\",\"state\":\"running\"}]",
					 .attributed = "[{\"pid\":42,\"start_mono_ns\":99,\"step\":\"s1\",\"tool\":\"x\"}]" });
	assert_true(frames_add(&fx->f, 4, TL_RUN_REPORT, keyed_report, sizeof(keyed_report) - 1));
	add_live(fx, 5, &(struct live){ .key = "b00t-4242-1000", .update = 9, .state = "lost",
					 .steps = "[{\"id\":\"s3\",\"state\":\"running\"}]",
					 .signals = "[{\"kind\":\"stalled\",\"pid\":43}]",
					 .attributed = "[{\"pid\":43,\"start_mono_ns\":120,\"step\":\"s2\",\"tool\":\"tac\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.bad_reports + res.bad_live_records, 0);
	text_of(fx, "SELECT state || '|' || seq || '|' || steps || '|' || signals FROM runs", text, sizeof(text));
	assert_string_equal(text, "failed|4|4|1");
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps"), 3);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE step_id = 's3'"), 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM signals WHERE source = 'live'"), 0);
	text_of(fx, "SELECT tool FROM processes WHERE tgid = 43", text, sizeof(text));
	assert_string_equal(text, "tac");
}

/*
 * Runs found by their keys across batches (PostgreSQL looks up a batch's run keys before its records, 32 at a
 * time: runs_known): 40 runs made by one batch; the next names 45, 40 of them known, 5 new, and a report of
 * one known run between two of its live records: each run once, every header the newest, the reported run final.
 */
static void a_batchs_runs_are_found_by_key_whether_made_before_in_it_or_reported_in_it(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	char key[32], text[64];
	uint64_t seq = 1;

	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "b00t-%d-1000", 5000 + i);
		add_live(fx, seq++, &(struct live){ .key = key, .update = 1, .steps = "[{\"id\":\"a\"}]" });
	}
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 40);
	for (int i = 0; i < 45; i++) {
		snprintf(key, sizeof(key), "b00t-%d-1000", 5000 + i);
		if (i == 7) /* keyed_report's run: made by a live record first */
			add_live(fx, seq++, &(struct live){ .key = "b00t-4242-1000", .update = 1 });
		add_live(fx, seq++, &(struct live){ .key = key, .update = 2, .state = "succeeded",
						     .steps = "[{\"id\":\"a\"},{\"id\":\"b\"}]" });
	}
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 6);
	assert_true(frames_add(&fx->f, seq++, TL_RUN_REPORT, keyed_report, sizeof(keyed_report) - 1));
	add_live(fx, seq++, &(struct live){ .key = "b00t-4242-1000", .update = 9, .state = "lost",
					     .steps = "[{\"id\":\"late\"}]" });
	assert_int_equal(store_sealed(fx, fx->host, 3, &res, NULL), STORE_OK);
	assert_int_equal(res.runs, 1); /* the report */
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs"), 46);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM runs WHERE run_key LIKE 'b00t-5%%' AND update_seq = 2 AND "
				    "state = 'succeeded' AND steps = 2"), 45);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM steps WHERE step_id = 'late'"), 0);
	text_of(fx, "SELECT state FROM runs WHERE run_key = 'b00t-4242-1000'", text, sizeof(text));
	assert_string_equal(text, "failed");
}

/* A heartbeat of host seq n (TL_HOST): its figures a function of n. */
static void add_beat_of(struct lake_fixture *fx, uint64_t n)
{
	char json[512];
	int len = snprintf(json, sizeof(json),
			   "{\"schema\":\"tracer.host.v1\",\"start_ns\":%llu,\"end_ns\":%llu,\"beat\":%llu,"
			   "\"uptime_s\":%llu.25,\"cpus\":2,\"host\":{\"cloud\":\"aws\",\"price_per_hour\":0.5}}",
			   (unsigned long long)n, (unsigned long long)n + 5, (unsigned long long)n, (unsigned long long)n);

	assert_true(frames_add(&fx->f, n, TL_HOST, json, (uint32_t)len));
}

/* Seqs first..last, each of a bulk table by seq % 6 (or none: a type the lake does not know, 3 KiB). */
static void add_mixed(struct lake_fixture *fx, uint64_t first, uint64_t last)
{
	_Alignas(8) uint8_t file[256];
	uint8_t junk[3072];

	for (uint64_t n = first; n <= last; n++) {
		char path[64];
		struct tr_counters k;
		struct tl_loss loss = { .reason = TL_LOSS_EVICTED, .first_seq = 1, .last_seq = 2, .records = n, .bytes = 1 };
		size_t nf;

		switch (n % 6) {
		case 0: add_samples(fx, n, 1); break;
		case 1:
			snprintf(path, sizeof(path), "/data/f%llu", (unsigned long long)n);
			nf = encode_file(file, sizeof(file), 400 + n, 42, 99, TR_FILE_WRITE, path);
			assert_true(frames_add(&fx->f, n, TR_FILE, file, (uint32_t)nf));
			break;
		case 2:
			memset(&k, 0, sizeof(k));
			k.hdr = encode_hdr(TR_COUNTERS, n);
			k.records_copied = n;
			assert_true(frames_add(&fx->f, n, TR_COUNTERS, &k, sizeof(k)));
			break;
		case 3: assert_true(frames_add(&fx->f, n, TL_LOSS, &loss, sizeof(loss))); break;
		case 4: add_beat_of(fx, n); break;
		default:
			for (size_t i = 0; i < sizeof(junk); i++)
				junk[i] = (uint8_t)(n + i);
			assert_true(frames_add(&fx->f, n, 250, junk, sizeof(junk)));
		}
	}
}

/* Sums over seqs 1..last of those with seq % 6 == kind. */
static int64_t sum_of_kind(uint64_t last, unsigned kind, bool count)
{
	int64_t v = 0;

	for (uint64_t n = 1; n <= last; n++)
		if (n % 6 == kind)
			v += count ? 1 : (int64_t)n;
	return v;
}

/* Thousands of records of every bulk table in one batch, then a re-formed batch half across them. */
static void thousands_of_records_of_every_bulk_table_in_one_batch(void **state)
{
	struct lake_fixture *fx = *state;
	const uint64_t n = 6000, last = 9000;
	struct store_result res;

	add_mixed(fx, 1, n);
	assert_int_equal(store_sealed(fx, fx->host, 1, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, n);
	add_mixed(fx, n / 2 + 1, last);
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.records, last - n / 2);
	assert_int_equal(res.new_records, last - n);
	assert_int_equal(res.dup_records, n / 2);
	assert_int_equal(res.conflicts, 0);
	assert_int_equal(res.undecodable + res.bad_live_records, 0);
	assert_int_equal(res.unknown, sum_of_kind(last, 5, true) - sum_of_kind(n, 5, true));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), last);
	assert_int_equal(crcs_recomputed(fx), last);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), sum_of_kind(last, 0, true));
	assert_int_equal(lake_q(fx, "SELECT sum(runtime_ns) / 1000000 FROM samples"), sum_of_kind(last, 0, false));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM files WHERE path = '/data/f' || seq AND mode = 'w' AND "
			       "ts_ns = 400 + seq"), sum_of_kind(last, 1, true));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM files"), sum_of_kind(last, 1, true));
	assert_int_equal(lake_q(fx, "SELECT sum(records_copied) FROM agent_counters WHERE ts_ns = seq"),
			 sum_of_kind(last, 2, false));
	assert_int_equal(lake_q(fx, "SELECT sum(records) FROM losses WHERE reason = 'evicted'"), sum_of_kind(last, 3, false));
	assert_int_equal(lake_q(fx, "SELECT sum(beat) FROM heartbeats WHERE end_ns = start_ns + 5 AND uptime_s = "
			       "beat + 0.25 AND host_price_per_hour = 0.5 AND host_cloud = 'aws'"),
			 sum_of_kind(last, 4, false));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats"), sum_of_kind(last, 4, true));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note = 'unknown_type' AND length(payload) = 3072 "
			       "AND hex(substr(payload, 1, 2)) = printf('%%02X%%02X', seq %% 256, (seq + 1) %% 256)"),
			 sum_of_kind(last, 5, true));
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM gaps"), 0);
	assert_int_equal(lake_q(fx, "SELECT max_seq FROM streams"), last);
}

#ifdef LAKE_FIXTURE_PG
/* The fixture's frames sealed as batch batch_seq and stored into the PostgreSQL lake only; the frames reset. */
static int store_pg_only(struct lake_fixture *fx, uint64_t batch_seq, struct store_result *res)
{
	struct batch_header h;
	struct sealed s;
	uint8_t hash[BATCH_HASH_LEN], *raw = NULL;
	size_t raw_len = 0;
	int rc;

	assert_int_equal(seal_frames(&fx->key, fx->host, batch_seq, NULL, BATCH_COMP_NONE, &fx->f, &s), 0);
	assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, hash), 0);
	assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
	rc = store_batch(fx->pg, &h, hash, raw, raw_len, s.len, 1700000000000000000ull + batch_seq, res);
	free(raw);
	free(s.wire);
	frames_reset(&fx->f);
	return rc;
}

static int64_t pg_count(struct sql *db, const char *text)
{
	struct sql_stmt *st = NULL;
	int64_t n;

	assert_int_equal(sql_prepare(db, text, false, &st), SQL_OK);
	assert_int_equal(sql_step(st), SQL_ROW);
	n = sql_col_i64(st, 0);
	sql_finalize(st);
	return n;
}

/*
 * PostgreSQL: a row refused where the store does not wait for it, a queued upsert (a process) or a bulk
 * row (a sample, sent by COPY), fails the batch with PostgreSQL's message and leaves nothing of it; the
 * next batch is stored (the connection went on).
 */
static void pg_a_row_refused_unawaited_fails_its_batch_and_leaves_nothing(void **state)
{
	struct lake_fixture *fx = *state;
	struct tr_fork fk = make_fork(100, 41, 50, 666, 99);
	struct tr_sample sm = encode_sample(1000, 666, 99, 41, 1, 1, 1);
	struct store_result res;
	struct sql *db = NULL;
	char err[256];

	assert_int_equal(sql_open_pg(&db, fx->pg_uri, false, 5000, err, sizeof(err)), SQL_OK);
	assert_int_equal(sql_exec(db, "CREATE FUNCTION refuse_666() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
				      "IF NEW.tgid = 666 THEN RAISE EXCEPTION 'tgid 666 refused'; END IF; RETURN NEW; "
				      "END $$; CREATE TRIGGER refuse_666 BEFORE INSERT ON processes FOR EACH ROW "
				      "EXECUTE FUNCTION refuse_666(); CREATE TRIGGER refuse_666 BEFORE INSERT ON samples "
				      "FOR EACH ROW EXECUTE FUNCTION refuse_666()"), SQL_OK);
	for (int round = 0; round < 2; round++) {
		add_samples(fx, 1, 5);
		if (round == 0)
			assert_true(frames_add(&fx->f, 6, TR_FORK, &fk, sizeof(fk)));
		else
			assert_true(frames_add(&fx->f, 6, TR_SAMPLE, &sm, sizeof(sm)));
		add_samples(fx, 7, 3);
		assert_int_equal(store_pg_only(fx, 1, &res), STORE_E_SQL);
		assert_non_null(strstr(store_last_error(fx->pg), "tgid 666 refused"));
		assert_int_equal(res.new_records, 0);
		assert_int_equal(pg_count(db, "SELECT count(*) FROM batches"), 0);
		assert_int_equal(pg_count(db, "SELECT count(*) FROM records"), 0);
		assert_int_equal(pg_count(db, "SELECT count(*) FROM samples"), 0);
		assert_int_equal(pg_count(db, "SELECT count(*) FROM processes"), 0);
		assert_int_equal(pg_count(db, "SELECT count(*) FROM hosts"), 0);
	}
	/* the next batch, into both lakes */
	add_samples(fx, 1, 9);
	assert_int_equal(store_sealed(fx, fx->host, 2, &res, NULL), STORE_OK);
	assert_int_equal(res.new_records, 9);
	assert_int_equal(pg_count(db, "SELECT count(*) FROM samples"), 9);
	assert_int_equal(sql_exec(db, "DROP TRIGGER refuse_666 ON processes; DROP TRIGGER refuse_666 ON samples; "
				      "DROP FUNCTION refuse_666()"), SQL_OK);
	sql_close(db);
}
#endif

/* Prints the figure docs/lake.md quotes; asserts only that it finishes. */
static void ten_thousand_samples_are_stored_in_one_transaction(void **state)
{
	struct lake_fixture *fx = *state;
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
		assert_int_equal(batch_verify(s.wire, s.len, lake_lookup_any_host, &fx->key, &h, hash), 0);
		assert_int_equal(batch_open(s.wire, s.len, &h, &raw, &raw_len), 0);
		t0 = now_s();
		assert_int_equal(lake_store_raw(fx, &h, hash, raw, raw_len, s.len, 1, &res), STORE_OK);
		if (now_s() - t0 < best)
			best = now_s() - t0;
		assert_int_equal(res.new_records, 10000);
		free(raw);
		free(s.wire);
	}
	printf("ingest.store.samples_10k.records_per_s %.0f rec/s\n", 10000 / best);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM samples"), 30000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(batch_stores_every_record_once_with_its_checksum, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(exec_fork_exit_make_one_process_with_its_exit_figures, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_path_that_is_not_utf8_is_stored_with_u_fffd, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(oom_kill_marks_the_victim_and_is_its_only_signal, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(samples_files_cgroups_counters_and_losses_fill_their_tables, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(same_batch_twice_is_a_duplicate_and_stores_nothing, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(reformed_batch_overlapping_stored_records_stores_only_the_new_ones, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(records_are_keyed_by_host_so_two_hosts_share_seqs, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_hosts_newest_counters_are_those_received_last_of_any_stream, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(two_streams_of_a_host_share_seqs_each_stored_once, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(gaps_between_and_within_batches_are_recorded_and_filled, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(key_announcement_enrols_the_new_key_for_the_same_host, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_file_key_noted_in_the_lake_is_not_a_rotation_key, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(exit_records_raise_killed_for_a_real_kill_only, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(run_report_fills_runs_steps_processes_and_signals, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(run_report_that_is_not_json_is_counted_and_the_batch_still_stored, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(unknown_and_undecodable_records_are_kept_in_records_only, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(lake_reopens_and_refuses_other_versions_and_other_files, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(exits_store_the_images_own_peak_and_old_records_say_unknown, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(version_1_and_2_lakes_are_upgraded_in_place_and_keep_their_rows, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(upgraded_lake_takes_live_records, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_new_lake_is_exactly_the_schema_table, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_8_lake_gets_each_rows_received_ns_from_its_batch, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_3_lake_is_upgraded_keeping_its_rows_with_the_host_unknown, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_7_lake_is_upgraded_its_seqs_stream_0, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_6_lake_is_upgraded_keeping_its_rows_with_reclaim_unknown, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			exits_and_samples_store_reclaim_time_and_unmeasured_or_old_records_say_unknown, setup,
			lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(samples_and_exits_store_the_allocation_and_older_records_say_unknown,
						setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(live_records_store_the_host_and_a_later_one_without_it_keeps_it, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(host_values_of_the_wrong_type_or_range_are_null, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_report_stores_the_host_and_over_a_live_row_keeps_what_it_lacks, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_report_merged_into_a_live_row_keeps_the_live_host_where_it_has_none,
						setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_cluster_job_joins_the_run_that_submitted_it_whichever_comes_first, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(live_record_creates_its_run_and_only_a_higher_update_changes_it, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(live_steps_are_upserted_by_id_and_keep_their_first_position, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			a_records_many_steps_are_each_stored_once_in_order_the_later_of_a_repeated_id_winning, setup,
			lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			attribution_before_and_after_kernel_records_completes_the_process_and_keeps_its_run, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(live_signals_are_kept_whole_with_their_run, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_live_signal_sent_again_is_stored_once, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(tools_records_name_processes_in_no_run, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(bad_live_records_are_noted_counted_and_the_batch_still_stored, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(arrays_beyond_the_bound_are_counted_not_stored, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_batch_of_a_new_boot_makes_the_hosts_running_runs_lost, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			report_with_the_live_key_merges_into_the_live_row_and_the_run_appears_once, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(report_runs_get_their_state_from_the_exit_code, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(retention_removes_the_days_past_it_and_keeps_the_rest, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_batch_across_stored_seqs_and_a_gap_counts_each_seq_once, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_seq_repeated_within_a_batch_is_stored_once_and_counted, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_records_note_is_written_with_its_row, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(bulk_rows_store_text_as_utf8_with_u_fffd, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(payloads_keep_every_byte, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(host_u64_values_wrap_to_int64s_ends, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_report_between_live_records_of_its_run_in_one_batch_is_final, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			a_batchs_runs_are_found_by_key_whether_made_before_in_it_or_reported_in_it, setup,
			lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(thousands_of_records_of_every_bulk_table_in_one_batch, setup,
						lake_fixture_teardown),
#ifdef LAKE_FIXTURE_PG
		cmocka_unit_test_setup_teardown(pg_a_row_refused_unawaited_fails_its_batch_and_leaves_nothing, setup,
						lake_fixture_teardown),
#endif
		cmocka_unit_test_setup_teardown(ten_thousand_samples_are_stored_in_one_transaction, setup, lake_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
