/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lake's side of tracer sweep (issue 17).
 *
 * Storing heartbeats (lake/store.c): real TL_HOST records (written by the
 * processor's report/hostbeat.c), in batches sealed, verified and opened
 * as the ingest does, make one heartbeats row each with every figure, and
 * what the processor did not know is NULL; a record that is not a tracer.host.v1 object
 * with integer times, start before end, is noted, counted with the bad
 * live records and stores nothing, and its batch is stored all the same;
 * numbers of the wrong type or range are NULL; a heartbeat sent again is
 * stored once; a lake of version 4 is upgraded to exactly a new lake's
 * schema, keeping its rows, and takes heartbeats.
 *
 * Reading for the sweep (lake/read_sweep.c), on a lake made by hand
 * (store_open for the schema, rows INSERTed with sqlite3, read-only): the
 * beats that end after the window's start, by host then start; the
 * processes alive after it, by host, boot, start and pid, each with its
 * newest sample in real time (either offset), its CPU at exit or at that
 * sample, whether a run's key names it; NULL wherever the lake does not
 * know or a host's counter would read negative; the lake's newest word;
 * a callback's non-zero return stopping a walk. Values computed by hand in
 * the comments.
 */
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

#include "hostbeat.h"
#include "hostid.h"
#include "json.h"
#include "store.h"
#include "lake_fixture.h"
#include "test_ingest_helpers.h"

#define SEC 1000000000LL
#define T0 1700000000000000000LL
#define MB 1000000LL

/* ---- storing: a lake file written through store_batch ----------------------------- */


static int setup(void **state)
{
	return lake_fixture_setup(state, "/tmp/test_lake_sweep.XXXXXX");
}


static int store_sealed(struct lake_fixture *fx, uint64_t batch_seq, struct store_result *res)
{
	return lake_store_sealed(fx, fx->host, batch_seq, (uint64_t)T0 + batch_seq, res, NULL);
}


#define BOOT_HEX "0123456789abcdef0123456789abcdef"

/* The host every beat of the tests names, as the processor identified it (common/hostid.h). */
static const struct hostid ec2 = {
	.cloud = "aws", .instance_type = "m6i.xlarge", .instance_id = "i-0123456789abcdef0", .region = "us-east-1",
	.cpus = 4, .memory_bytes = 16106127360ULL, .price_known = true, .price_micro_usd = 192000,
};

/* A TL_HOST record written by the processor's own writer (report/hostbeat.c): the beat as it is. */
static void add_hostbeat(struct lake_fixture *fx, uint64_t seq, const struct hostbeat *hb)
{
	struct obuf o;

	obuf_init_mem(&o, TL_RUN_MAX);
	assert_int_equal(hostbeat_write(&o, hb), 0);
	assert_true(frames_add(&fx->f, seq, TL_HOST, o.buf, (uint32_t)o.len));
	obuf_free(&o);
}

/* Beat n over [T0 + from s, T0 + to s), with figures that are functions of n. */
static void add_beat(struct lake_fixture *fx, uint64_t seq, int n, int from, int to)
{
	struct hostbeat hb = {
		.beat = (uint64_t)n, .boot_id = BOOT_HEX,
		.start_ns = (uint64_t)(T0 + from * SEC), .end_ns = (uint64_t)(T0 + to * SEC),
		.uptime_known = true, .uptime_ns = 1234500000000ULL,
		.cpus_known = true, .cpus = 2,
		.cpu_known = true, .cpu_busy_ns = (uint64_t)(n * SEC), .cpu_idle_ns = (uint64_t)((to - from) * 2 * SEC - n * SEC),
		.mem_total_known = true, .mem_used_known = true,
		.mem_total_bytes = 8000000000ULL, .mem_used_bytes = (uint64_t)(n * 1000 * MB),
		.net_known = true, .net_rx_bytes = 1000u * (uint64_t)n, .net_tx_bytes = 500u * (uint64_t)n,
		.runs = (uint64_t)n, .steps = 2u * (uint64_t)n, .processes = 7u * (uint64_t)n,
		.host = &ec2,
	};

	add_hostbeat(fx, seq, &hb);
}

static void add_json(struct lake_fixture *fx, uint64_t seq, const char *json)
{
	assert_true(frames_add(&fx->f, seq, TL_HOST, json, (uint32_t)strlen(json)));
}

/* Beats read back, whole, with copies of their strings. */
struct beats {
	size_t n;
	struct store_beat v[16];
	char host[16][33], boot[16][33], cloud[16][16];
};

static void keep_text(char *out, size_t len, const char *t)
{
	snprintf(out, len, "%s", t ? t : "(null)");
}

static int keep_beat(void *ctx, const struct store_beat *b)
{
	struct beats *o = ctx;

	assert_true(o->n < 16);
	o->v[o->n] = *b;
	keep_text(o->host[o->n], sizeof(o->host[0]), b->host_id);
	keep_text(o->boot[o->n], sizeof(o->boot[0]), b->boot_id);
	keep_text(o->cloud[o->n], sizeof(o->cloud[0]), b->cloud);
	o->v[o->n].host_id = o->v[o->n].boot_id = o->v[o->n].cloud = NULL;
	o->v[o->n].instance_type = o->v[o->n].instance_id = o->v[o->n].region = NULL;
	o->n++;
	return 0;
}

#define assert_known(x, want)                        \
	do {                                         \
		assert_true((x).known);              \
		assert_int_equal((x).v, (want));     \
	} while (0)
#define assert_unknown(x) assert_false((x).known)

static void heartbeats_are_stored_with_every_figure(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct beats b = { 0 };
	char text[256];

	add_beat(fx, 1, 1, 0, 60);
	add_beat(fx, 2, 2, 60, 120);
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.new_records, 2);
	assert_int_equal(res.bad_live_records + res.unknown + res.undecodable, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE type = 69 AND note IS NULL"), 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats"), 2);
	/* the columns no read hands out */
	sql_text_of(fx->db, "SELECT group_concat(seq || ':' || beat || ':' || uptime_s || ':' || cpu_idle_ns, ',') "
			 "FROM (SELECT * FROM heartbeats ORDER BY seq)", text, sizeof(text));
	assert_string_equal(text, "1:1:1234.5:119000000000,2:2:1234.5:118000000000");

	assert_int_equal(store_sweep_beats(fx->st, 0, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 2);
	for (int i = 0; i < 2; i++) {
		const struct store_beat *x = &b.v[i];
		int64_t n = i + 1;

		assert_string_equal(b.host[i], "01a1a2a3a4a5a6a7a8a9aaabacadaeaf");
		assert_string_equal(b.boot[i], BOOT_HEX);
		assert_int_equal(x->seq, n);
		assert_known(x->beat, n);
		assert_int_equal(x->start_ns, T0 + (n - 1) * 60 * SEC);
		assert_int_equal(x->end_ns, T0 + n * 60 * SEC);
		assert_known(x->cpus, 2);
		assert_known(x->cpu_busy_ns, n * SEC);
		assert_known(x->cpu_idle_ns, 120 * SEC - n * SEC);
		assert_known(x->mem_total_bytes, 8000000000);
		assert_known(x->mem_used_bytes, n * 1000 * MB);
		assert_known(x->net_rx_bytes, 1000 * n);
		assert_known(x->net_tx_bytes, 500 * n);
		assert_known(x->runs, n);
		assert_known(x->steps, 2 * n);
		assert_known(x->processes, 7 * n);
		assert_string_equal(b.cloud[i], "aws");
		assert_known(x->host_cpus, 4);
		assert_known(x->host_memory_bytes, 16106127360);
		assert_true(x->price_known);
		assert_true(x->price_per_hour > 0.19199 && x->price_per_hour < 0.19201);
	}
	sql_text_of(fx->db, "SELECT host_instance_type || '|' || host_instance_id || '|' || host_region FROM heartbeats "
			 "WHERE seq = 2", text, sizeof(text));
	assert_string_equal(text, "m6i.xlarge|i-0123456789abcdef0|us-east-1");
}

static void a_bad_host_record_is_noted_counted_and_stores_nothing(void **state)
{
	static const char *const bad[] = {
		"not json {",
		"[1,2]",
		"\"tracer.host.v1\"",
		"{\"schema\":\"tracer.live.v1\",\"start_ns\":1,\"end_ns\":2}",
		"{\"start_ns\":1,\"end_ns\":2}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":5,\"end_ns\":5}",  /* not start before end */
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":6,\"end_ns\":5}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":1.5,\"end_ns\":5}", /* not integers */
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":\"1\",\"end_ns\":5}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":-5,\"end_ns\":5}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":1,\"end_ns\":9223372036854775808}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":1}",
		"{\"schema\":\"tracer.host.v1\",\"start_ns\":1,\"end_ns\":2,\"x\":\"\xff\"}", /* not UTF-8 */
	};
	/* a NUL in the text: C would cut it, JSON may not have one */
	static const char with_nul[] = "{\"schema\":\"tracer.host.v1\",\"start_ns\":1,\"end_ns\":2}\0 ";
	struct lake_fixture *fx = *state;
	struct store_result res;
	uint64_t seq = 1;
	size_t n = sizeof(bad) / sizeof(bad[0]);
	char *huge = malloc(TL_RUN_MAX + 2);
	int len;

	assert_non_null(huge);
	for (size_t i = 0; i < n; i++)
		add_json(fx, seq++, bad[i]);
	assert_true(frames_add(&fx->f, seq++, TL_HOST, with_nul, sizeof(with_nul) - 1));
	/* a good record, but longer than the processor ever writes */
	len = snprintf(huge, TL_RUN_MAX + 2, "{\"schema\":\"tracer.host.v1\",\"start_ns\":1,\"end_ns\":2,\"pad\":\"");
	memset(huge + len, 'x', TL_RUN_MAX + 1 - (size_t)len - 2);
	memcpy(huge + TL_RUN_MAX - 1, "\"}", 2);
	assert_true(frames_add(&fx->f, seq++, TL_HOST, huge, TL_RUN_MAX + 1));
	free(huge);
	add_beat(fx, seq++, 1, 0, 60); /* and a good one, in the same batch */
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.new_records, n + 3);
	assert_int_equal(res.bad_live_records, n + 2);
	assert_int_equal(res.unknown + res.undecodable + res.bad_reports, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note = 'bad_host_record'"), (int64_t)n + 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records"), (int64_t)n + 3);
	assert_int_equal(lake_q(fx, "SELECT bad_live_records FROM batches"), (int64_t)n + 2);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats"), 1);
	assert_int_equal(lake_q(fx, "SELECT seq FROM heartbeats"), (int64_t)seq - 1);
}

static void numbers_of_the_wrong_type_or_range_are_null(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct beats b = { 0 };
	char text[512];

	/* every figure out of range or of another type; the largest values that fit are kept */
	add_json(fx, 1,
		 "{\"schema\":\"tracer.host.v1\",\"beat\":-1,\"boot_id\":\"0123456789ABCDEF0123456789ABCDEF\","
		 "\"start_ns\":0,\"end_ns\":9223372036854775807,\"uptime_s\":-3,\"cpus\":4294967296,"
		 "\"cpu_busy_ns\":1.5,\"cpu_idle_ns\":\"7\",\"mem_total_bytes\":9223372036854775808,"
		 "\"mem_used_bytes\":null,\"net_rx_bytes\":true,\"net_tx_bytes\":9223372036854775807,"
		 "\"runs\":4294967295,\"steps\":{},\"processes\":[],"
		 "\"host\":{\"cloud\":5,\"instance_type\":\"t3.micro\",\"cpus\":-2,\"memory_bytes\":1e3,"
		 "\"price_per_hour\":-1}}");
	/* a boot id with a NUL hidden in it, an infinite uptime, a price too high */
	add_json(fx, 2,
		 "{\"schema\":\"tracer.host.v1\",\"boot_id\":\"0123456789abcdef0123456789abcde\\u0000\","
		 "\"start_ns\":10,\"end_ns\":20,\"uptime_s\":1e999,\"host\":{\"price_per_hour\":1e10}}");
	/* the boot id too short, a price of another type, no host at all */
	add_json(fx, 3,
		 "{\"schema\":\"tracer.host.v1\",\"boot_id\":\"0123\",\"start_ns\":20,\"end_ns\":30,\"uptime_s\":7,"
		 "\"host\":{\"price_per_hour\":\"0.1\"}}");
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.bad_live_records, 0);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM records WHERE note IS NOT NULL"), 0);
	assert_int_equal(store_sweep_beats(fx->st, -1, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 3);
	/* seq 1 */
	assert_string_equal(b.boot[0], "(null)");
	assert_int_equal(b.v[0].start_ns, 0);
	assert_int_equal(b.v[0].end_ns, INT64_MAX);
	assert_unknown(b.v[0].beat);
	assert_unknown(b.v[0].cpus);
	assert_unknown(b.v[0].cpu_busy_ns);
	assert_unknown(b.v[0].cpu_idle_ns);
	assert_unknown(b.v[0].mem_total_bytes);
	assert_unknown(b.v[0].mem_used_bytes);
	assert_unknown(b.v[0].net_rx_bytes);
	assert_known(b.v[0].net_tx_bytes, INT64_MAX);
	assert_known(b.v[0].runs, 4294967295LL);
	assert_unknown(b.v[0].steps);
	assert_unknown(b.v[0].processes);
	assert_string_equal(b.cloud[0], "(null)");
	assert_unknown(b.v[0].host_cpus);
	assert_unknown(b.v[0].host_memory_bytes);
	assert_false(b.v[0].price_known);
	/* seq 2, 3 */
	assert_string_equal(b.boot[1], "(null)");
	assert_false(b.v[1].price_known);
	assert_string_equal(b.boot[2], "(null)");
	assert_false(b.v[2].price_known);
	sql_text_of(fx->db, "SELECT group_concat(seq || ':' || coalesce(uptime_s, '-') || ':' || "
			 "coalesce(host_instance_type, '-'), ',') FROM (SELECT * FROM heartbeats ORDER BY seq)",
		 text, sizeof(text));
	assert_string_equal(text, "1:-:t3.micro,2:-:-,3:7.0:-");
}

/* What the processor could not read it writes null (and a counter past 2^63 cannot be stored): NULL. */
static void what_the_processor_did_not_know_is_null(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	struct beats b = { 0 };
	struct hostbeat hb = {
		.beat = 3, .start_ns = (uint64_t)T0, .end_ns = (uint64_t)(T0 + 60 * SEC),
		.cpu_known = true, .cpu_busy_ns = UINT64_MAX, .cpu_idle_ns = (uint64_t)INT64_MAX + 1,
		.runs = 0, .steps = 0, .processes = 0,
	};

	add_hostbeat(fx, 1, &hb);
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.bad_live_records, 0);
	assert_int_equal(store_sweep_beats(fx->st, 0, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 1);
	assert_string_equal(b.boot[0], "(null)");
	assert_known(b.v[0].beat, 3);
	assert_unknown(b.v[0].cpus);
	assert_unknown(b.v[0].cpu_busy_ns);
	assert_unknown(b.v[0].cpu_idle_ns);
	assert_unknown(b.v[0].mem_total_bytes);
	assert_unknown(b.v[0].mem_used_bytes);
	assert_unknown(b.v[0].net_rx_bytes);
	assert_unknown(b.v[0].net_tx_bytes);
	assert_known(b.v[0].runs, 0);
	assert_known(b.v[0].steps, 0);
	assert_known(b.v[0].processes, 0);
	assert_string_equal(b.cloud[0], "(null)");
	assert_unknown(b.v[0].host_cpus);
	assert_unknown(b.v[0].host_memory_bytes);
	assert_false(b.v[0].price_known);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats WHERE uptime_s IS NULL AND host_instance_id IS NULL"), 1);
}

static void a_heartbeat_sent_again_is_stored_once(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;

	add_beat(fx, 1, 1, 0, 60);
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.new_records, 1);
	/* the same batch again: a duplicate, nothing done */
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_true(res.duplicate);
	/* re-formed: seq 1 again (another interval: a host reusing a seq) and a new seq 2 */
	frames_reset(&fx->f);
	add_beat(fx, 1, 1, 0, 90);
	add_beat(fx, 2, 2, 60, 120);
	assert_int_equal(store_sealed(fx, 2, &res), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(res.dup_records, 1);
	assert_int_equal(res.conflicts, 1);
	assert_int_equal(lake_q(fx, "SELECT count(*) FROM heartbeats"), 2);
	assert_int_equal(lake_q(fx, "SELECT end_ns FROM heartbeats WHERE seq = 1"), T0 + 60 * SEC);
}

/*
 * A lake of an older version: version 4, as the tracer before issue 17 left it, or 5 (heartbeats, no
 * step allocation): a lake of this version with a live run stored, then made a lake of that version.
 */
static void make_old_lake(struct lake_fixture *fx, const char *path, int version)
{
	static const char live[] = "{\"schema\":\"tracer.live.v1\",\"key\":\"b00t-7-70\",\"update\":1,"
				   "\"state\":\"running\",\"start_ns\":1700000000000000000,"
				   "\"steps\":[{\"id\":\"s1\",\"state\":\"running\"}]}";
	struct store *st = NULL, *keep = fx->st;
	struct store_result res;
	char err[256];

	assert_int_equal(store_open(&st, path, false, err, sizeof(err)), STORE_OK);
	fx->st = st;
	assert_true(frames_add(&fx->f, 1, TL_RUN, live, sizeof(live) - 1));
	assert_int_equal(store_sealed(fx, 1, &res), STORE_OK);
	assert_int_equal(res.runs, 1);
	frames_reset(&fx->f);
	fx->st = keep;
	store_close(st);
	lake_downgrade(path, version);
}

static void a_version_4_lake_is_upgraded_keeping_its_rows_and_takes_heartbeats(void **state)
{
	struct lake_fixture *fx = *state;
	char path[128], err[512];
	struct store_result res;

	snprintf(path, sizeof(path), "%s/v4.db", fx->dir);
	make_old_lake(fx, path, 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'heartbeats'"), 0);
	lake_assert_upgraded(fx, path, 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
				       "name = 'heartbeats_host_start'"), 1);
	/* its rows kept */
	sql_text_of(path, "SELECT run_id || ':' || run_key || ':' || state FROM runs", err, sizeof(err));
	assert_string_equal(err, "1:b00t-7-70:running");
	assert_int_equal(sql_int(path, "SELECT count(*) FROM records"), 1);
	/* and heartbeats stored in it */
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&fx->st, path, false, err, sizeof(err)), STORE_OK);
	add_beat(fx, 2, 1, 0, 60);
	assert_int_equal(store_sealed(fx, 2, &res), STORE_OK);
	assert_int_equal(res.new_records, 1);
	assert_int_equal(res.bad_live_records, 0);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM heartbeats WHERE seq = 2 AND beat = 1"), 1);
}

/*
 * Version 5 -> 6: the steps' allocation columns, NULL (unknown) on the rows kept; a step's next live
 * update fills them, bounded: cores in thousandths, rounded; a figure out of range or of the wrong
 * type stays NULL.
 */
static void a_version_5_lake_is_upgraded_and_takes_step_allocations(void **state)
{
	static const char update[] = "{\"schema\":\"tracer.live.v1\",\"key\":\"b00t-7-70\",\"update\":2,"
				     "\"state\":\"running\",\"start_ns\":1700000000000000000,\"steps\":["
				     "{\"id\":\"s1\",\"state\":\"running\",\"cpu_limit_cores\":1.2345,"
				     "\"memory_limit_bytes\":536870912},"
				     "{\"id\":\"s2\",\"state\":\"running\",\"cpu_limit_cores\":-1,"
				     "\"memory_limit_bytes\":\"1G\"},"
				     "{\"id\":\"s3\",\"state\":\"running\",\"cpu_limit_cores\":2e9,"
				     "\"memory_limit_bytes\":1.5}]}";
	struct lake_fixture *fx = *state;
	char path[128], err[512];
	struct store_result res;

	snprintf(path, sizeof(path), "%s/v5.db", fx->dir);
	make_old_lake(fx, path, 5);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM pragma_table_info('steps') WHERE name LIKE '%limit%'"), 0);
	lake_assert_upgraded(fx, path, 5);
	sql_text_of(path, "SELECT step_id || ':' || typeof(cpu_limit_millicores) || ':' || typeof(memory_limit_bytes) "
		       "FROM steps", err, sizeof(err));
	assert_string_equal(err, "s1:null:null");
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(&fx->st, path, false, err, sizeof(err)), STORE_OK);
	assert_true(frames_add(&fx->f, 2, TL_RUN, update, sizeof(update) - 1));
	assert_int_equal(store_sealed(fx, 2, &res), STORE_OK);
	assert_int_equal(res.bad_live_records, 0);
	sql_text_of(path, "SELECT group_concat(step_id || ':' || coalesce(cpu_limit_millicores, '-') || ':' || "
		       "coalesce(memory_limit_bytes, '-'), ' ') FROM (SELECT * FROM steps ORDER BY idx)", err, sizeof(err));
	assert_string_equal(err, "s1:1235:536870912 s2:-:- s3:-:-");
}

/* The newest word: none in an empty lake; a batch's arrival; a heartbeat's end when that is later. */
static void the_newest_word_is_the_latest_beat_end_or_batch(void **state)
{
	struct lake_fixture *fx = *state;
	struct store_result res;
	int64_t now = 0;
	uint8_t junk[3] = { 1, 2, 3 };

	assert_int_equal(store_sweep_newest(fx->st, &now), STORE_E_NOT_FOUND);
	assert_true(frames_add(&fx->f, 1, 200, junk, sizeof(junk)));
	assert_int_equal(store_sealed(fx, 7, &res), STORE_OK);
	assert_int_equal(store_sweep_newest(fx->st, &now), STORE_OK);
	assert_int_equal(now, T0 + 7); /* the batch's received_ns */
	frames_reset(&fx->f);
	add_beat(fx, 2, 1, 0, 60);
	assert_int_equal(store_sealed(fx, 8, &res), STORE_OK);
	assert_int_equal(store_sweep_newest(fx->st, &now), STORE_OK);
	assert_int_equal(now, T0 + 60 * SEC);
}

/* ---- reading: a lake made by hand ---------------------------------------------------- */

#define H1 "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'"
#define H2 "'cccccccccccccccccccccccccccccccc'"
#define B1 "'b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1'"
#define B2 "'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2'"
#define B3 "'b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3'"
#define T "1700000000000000000"
#define S "*1000000000"
#define AT(x) "(" T "+" #x S ")"
#define SECS(x) "(" #x S ")"
#define SINCE (T0 + 100 * SEC) /* the window's start in every read below */

/*
 * Heartbeats: H1's seq 5 ends at SINCE (out), 6, 8 and 9 after it (8 and 9 start together; 8 has no
 * figures), 7 starts last though its seq is lower; H2's seq 10 straddles SINCE.
 *
 * Processes (real time = monotonic + T0 on boot B1, + T0 + 499 s on B2):
 *   B1 P2 tgid 101 start 5 s, exited at T0+150: run 1, exit runtime 3 s; newest sample at 60 s
 *   B1 P1 tgid 100 start 10 s, alive: run 1's root (its key B1-100-10000000000); samples at 20 s and
 *         200 s (seq 3, the newest: runtime 7 s, 120 MB), inserted newest first
 *   B1 P3 tgid 102 start 20 s, exited at T0+90: before SINCE
 *   B1 P4 tgid 103 start 30 s, exited at T0+100: at SINCE, not after
 *   B1 P5 tgid 104 start 40 s, alive, no sample, argv not JSON, in no run
 *   B1 P6 tgid 105 start 50 s, exited at T0+300 with exit_ts 290 s and no start_real_ns (offset from the
 *         exit: T0 + 10 s); its runtime would read negative: CPU utime + stime = 3 s; sample at 100 s
 *   B1 P11 tgid 99 start 60 s, alive (same start as P7: the lower pid first)
 *   B1 P7 tgid 106 start 60 s, no real time at all (an attribution made its row); sample at 70 s,
 *         runtime 1 s, RSS reading negative
 *   B2 P8 tgid 100 start 1 s, alive: run 2's root; sample at 10 s with utime 1 s + stime 2 s only
 *   B2 P9 tgid 200 start 2 s, alive: run 3's key names pid 200 with another start: not its root
 *   H2 B3 P10 tgid 100 start 1 s, alive: run 4's key names it, but run 4 is H1's
 */
static const char lake_sql[] =
	"BEGIN;"
	"INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns) VALUES (" H1 ", " T ", " AT(250) "), "
	"(" H2 ", " T ", " AT(100) ");"
	"INSERT INTO heartbeats (host_id, seq, boot_id, beat, start_ns, end_ns, cpus, cpu_busy_ns, cpu_idle_ns, "
	"mem_total_bytes, mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes, host_cloud, "
	"host_instance_type, host_instance_id, host_region, host_cpus, host_memory_bytes, host_price_per_hour) VALUES "
	"(" H1 ", 5, " B1 ", 1, " AT(0) ", " AT(100) ", 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 'aws', 't3', 'i-1', 'eu', 2, 8, 1),"
	"(" H1 ", 6, " B1 ", 2, " AT(100) ", " AT(160) ", 2, " SECS(3) ", " SECS(117) ", 8000000000, 2000000000, 1000, "
	"500, 1, 2, 3, 'aws', 't3', 'i-1', 'eu', 2, 8000000000, 0.25),"
	"(" H1 ", 9, " B1 ", 4, " AT(160) ", " AT(200) ", 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL),"
	"(" H1 ", 8, NULL, NULL, " AT(160) ", " AT(220) ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
	"(" H1 ", 7, " B1 ", 5, " AT(220) ", " AT(280) ", 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'aws', 't3', 'i-1', 'eu', 2, 8, 1),"
	"(" H2 ", 10, " B3 ", 1, " AT(50) ", " AT(110) ", 64, 5, 6, 7, 8, 9, 10, 11, 12, 13, 'gcp', 'n2', 'vm-2', "
	"'us', 64, 9, 3);"
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, exit_ts_ns, ppid, "
	"parent_start_ns, exe, argv, tool, run_id, runtime_ns, utime_ns, stime_ns) VALUES "
	"(" H1 ", " B1 ", 100, " SECS(10) ", " AT(10) ", NULL, NULL, 1, 0, '/usr/bin/nextflow', "
	"'[\"nextflow\",\"run\",\"x\"]', 'nextflow', 1, NULL, NULL, NULL),"
	"(" H1 ", " B1 ", 101, " SECS(5) ", " AT(5) ", " AT(150) ", " SECS(150) ", 100, " SECS(10) ", '/bin/bwa', "
	"'[\"bwa\"]', 'bwa', 1, " SECS(3) ", 1, 1),"
	"(" H1 ", " B1 ", 102, " SECS(20) ", " AT(20) ", " AT(90) ", " SECS(90) ", 100, " SECS(10) ", '/bin/a', "
	"'[\"a\"]', NULL, 1, 1, 1, 1),"
	"(" H1 ", " B1 ", 103, " SECS(30) ", " AT(30) ", " AT(100) ", " SECS(100) ", 100, " SECS(10) ", '/bin/b', "
	"'[\"b\"]', NULL, 1, 1, 1, 1),"
	"(" H1 ", " B1 ", 104, " SECS(40) ", " AT(40) ", NULL, NULL, NULL, NULL, '/usr/bin/python3', 'not json [', "
	"'jupyter', NULL, NULL, NULL, NULL),"
	"(" H1 ", " B1 ", 105, " SECS(50) ", NULL, " AT(300) ", " SECS(290) ", 1, NULL, '/bin/sort', '[]', NULL, "
	"NULL, -5, " SECS(2) ", " SECS(1) "),"
	"(" H1 ", " B1 ", 99, " SECS(60) ", " AT(60) ", NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
	"(" H1 ", " B1 ", 106, " SECS(60) ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'samtools', 1, NULL, NULL, NULL),"
	"(" H1 ", " B2 ", 100, " SECS(1) ", " AT(500) ", NULL, NULL, 1, NULL, '/bin/sh', '[\"sh\"]', NULL, 2, NULL, "
	"NULL, NULL),"
	"(" H1 ", " B2 ", 200, " SECS(2) ", " AT(501) ", NULL, NULL, 100, " SECS(1) ", '/bin/sleep', '[\"sleep\"]', NULL, "
	"3, NULL, NULL, NULL),"
	"(" H2 ", " B3 ", 100, " SECS(1) ", " AT(1) ", NULL, NULL, 1, NULL, '/bin/sh', '[\"sh\"]', NULL, NULL, NULL, "
	"NULL, NULL);"
	"INSERT INTO samples (host_id, seq, boot_id, tgid, start_ns, ts_ns, runtime_ns, utime_ns, stime_ns, rss_bytes) "
	"VALUES "
	"(" H1 ", 3, " B1 ", 100, " SECS(10) ", " SECS(200) ", " SECS(7) ", 1, 1, 120000000),"
	"(" H1 ", 1, " B1 ", 100, " SECS(10) ", " SECS(20) ", " SECS(5) ", 1, 1, 100000000),"
	"(" H1 ", 2, " B1 ", 101, " SECS(5) ", " SECS(60) ", " SECS(1) ", 1, 1, 10000000),"
	"(" H1 ", 5, " B1 ", 105, " SECS(50) ", " SECS(100) ", " SECS(2) ", 1, 1, 20000000),"
	"(" H1 ", 4, " B1 ", 106, " SECS(60) ", " SECS(70) ", " SECS(1) ", 1, 1, -1),"
	"(" H1 ", 6, " B2 ", 100, " SECS(1) ", " SECS(10) ", NULL, " SECS(1) ", " SECS(2) ", 5000000);"
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, root_pid) VALUES "
	"(1, " H1 ", " B1 ", 1, 'x', 'b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1-100-10000000000', 100),"
	"(2, " H1 ", " B2 ", 2, 'x', 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2-100-1000000000', 100),"
	"(3, " H1 ", " B2 ", 3, 'x', 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2-200-999', 200),"
	"(4, " H1 ", " B3 ", 4, 'x', 'b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3-100-1000000000', 100);"
	"COMMIT;";

struct lake {
	char dir[64], db[96];
	struct store *s;
};

static int setup_lake(void **state)
{
	struct lake *lk = calloc(1, sizeof(*lk));
	struct store *s;
	sqlite3 *db = NULL;
	char err[256] = "mkdtemp failed";
	char *msg = NULL;

	if (!lk)
		return -1;
	snprintf(lk->dir, sizeof(lk->dir), "/tmp/test_lake_sweep.XXXXXX");
	if (!mkdtemp(lk->dir) ||
	    (snprintf(lk->db, sizeof(lk->db), "%s/lake.db", lk->dir), store_open(&s, lk->db, false, err, sizeof(err)))) {
		fprintf(stderr, "the lake: %s\n", err);
		free(lk);
		return -1;
	}
	store_close(s);
	if (sqlite3_open(lk->db, &db) != SQLITE_OK || sqlite3_exec(db, lake_sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "the lake: %s\n", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		rm_tree(lk->dir);
		free(lk);
		return -1;
	}
	sqlite3_close(db);
	/* read as tracer sweep will: read-only */
	if (store_open(&lk->s, lk->db, true, err, sizeof(err))) {
		fprintf(stderr, "store_open: %s\n", err);
		rm_tree(lk->dir);
		free(lk);
		return -1;
	}
	*state = lk;
	return 0;
}

static int teardown_lake(void **state)
{
	struct lake *lk = *state;

	store_close(lk->s);
	rm_tree(lk->dir);
	free(lk);
	return 0;
}

static void the_beats_ending_after_the_start_are_read_by_host_then_start(void **state)
{
	struct lake *lk = *state;
	struct beats b = { 0 };
	static const int64_t seqs[] = { 6, 8, 9, 7, 10 };

	assert_int_equal(store_sweep_beats(lk->s, SINCE, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(b.v[i].seq, seqs[i]);
	assert_string_equal(b.host[0], "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_string_equal(b.host[4], "cccccccccccccccccccccccccccccccc");
	/* seq 6: every figure */
	assert_string_equal(b.boot[0], "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1");
	assert_int_equal(b.v[0].start_ns, SINCE);
	assert_int_equal(b.v[0].end_ns, T0 + 160 * SEC);
	assert_known(b.v[0].beat, 2);
	assert_known(b.v[0].cpus, 2);
	assert_known(b.v[0].cpu_busy_ns, 3 * SEC);
	assert_known(b.v[0].cpu_idle_ns, 117 * SEC);
	assert_known(b.v[0].mem_total_bytes, 8000000000);
	assert_known(b.v[0].mem_used_bytes, 2000000000);
	assert_known(b.v[0].net_rx_bytes, 1000);
	assert_known(b.v[0].net_tx_bytes, 500);
	assert_known(b.v[0].runs, 1);
	assert_known(b.v[0].steps, 2);
	assert_known(b.v[0].processes, 3);
	assert_string_equal(b.cloud[0], "aws");
	assert_known(b.v[0].host_cpus, 2);
	assert_known(b.v[0].host_memory_bytes, 8000000000);
	assert_true(b.v[0].price_known);
	assert_true(b.v[0].price_per_hour == 0.25);
	/* seq 8: nothing known but its interval */
	assert_string_equal(b.boot[1], "(null)");
	assert_int_equal(b.v[1].start_ns, T0 + 160 * SEC);
	assert_int_equal(b.v[1].end_ns, T0 + 220 * SEC);
	assert_unknown(b.v[1].beat);
	assert_unknown(b.v[1].cpus);
	assert_unknown(b.v[1].cpu_busy_ns);
	assert_unknown(b.v[1].mem_total_bytes);
	assert_unknown(b.v[1].net_rx_bytes);
	assert_unknown(b.v[1].runs);
	assert_unknown(b.v[1].processes);
	assert_string_equal(b.cloud[1], "(null)");
	assert_unknown(b.v[1].host_cpus);
	assert_false(b.v[1].price_known);
	/* H2's straddles the start */
	assert_int_equal(b.v[4].start_ns, T0 + 50 * SEC);
	assert_known(b.v[4].cpus, 64);
	assert_string_equal(b.cloud[4], "gcp");
	assert_true(b.v[4].price_known && b.v[4].price_per_hour == 3.0);
	/* from the beginning: seq 5 too, first */
	memset(&b, 0, sizeof(b));
	assert_int_equal(store_sweep_beats(lk->s, 0, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 6);
	assert_int_equal(b.v[0].seq, 5);
	/* after the last end: none */
	memset(&b, 0, sizeof(b));
	assert_int_equal(store_sweep_beats(lk->s, T0 + 280 * SEC, keep_beat, &b), STORE_OK);
	assert_int_equal(b.n, 0);
}

/* Processes read back, with copies of the strings the tests look at. */
struct procs {
	size_t n;
	struct store_sweep_process v[16];
	char host[16][33], boot[16][33], exe[16][32], tool[16][16], argv[16][64];
};

static int keep_process(void *ctx, const struct store_sweep_process *p)
{
	struct procs *o = ctx;

	assert_true(o->n < 16);
	o->v[o->n] = *p;
	keep_text(o->host[o->n], sizeof(o->host[0]), p->host_id);
	keep_text(o->boot[o->n], sizeof(o->boot[0]), p->boot_id);
	keep_text(o->exe[o->n], sizeof(o->exe[0]), p->exe);
	keep_text(o->tool[o->n], sizeof(o->tool[0]), p->tool);
	keep_text(o->argv[o->n], sizeof(o->argv[0]), p->argv_json);
	o->v[o->n].host_id = o->v[o->n].boot_id = o->v[o->n].exe = o->v[o->n].tool = o->v[o->n].argv_json = NULL;
	o->n++;
	return 0;
}

static const struct store_sweep_process *proc_of(const struct procs *o, const char *boot, int64_t tgid)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strncmp(o->boot[i], boot, 2) && o->v[i].tgid == tgid)
			return &o->v[i];
	fail_msg("no process %s/%lld", boot, (long long)tgid);
	return NULL;
}

static void the_processes_alive_after_the_start_are_read_in_order(void **state)
{
	struct lake *lk = *state;
	struct procs o = { 0 };
	/* by host, boot, start, pid: B1's P2 P1 P5 P6 P11 P7, B2's P8 P9, H2's P10 */
	static const char *const boots[] = { "b1", "b1", "b1", "b1", "b1", "b1", "b2", "b2", "b3" };
	static const int64_t tgids[] = { 101, 100, 104, 105, 99, 106, 100, 200, 100 };

	assert_int_equal(store_sweep_processes(lk->s, SINCE, keep_process, &o), STORE_OK);
	assert_int_equal(o.n, 9);
	for (size_t i = 0; i < o.n; i++) {
		assert_int_equal(strncmp(o.boot[i], boots[i], 2), 0);
		assert_int_equal(o.v[i].tgid, tgids[i]);
		assert_string_equal(o.host[i], i < 8 ? "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" : "cccccccccccccccccccccccccccccccc");
	}
	/* from the beginning: P3 and P4 too, in their places */
	memset(&o, 0, sizeof(o));
	assert_int_equal(store_sweep_processes(lk->s, 0, keep_process, &o), STORE_OK);
	assert_int_equal(o.n, 11);
	assert_int_equal(o.v[2].tgid, 102);
	assert_int_equal(o.v[3].tgid, 103);
	/* after every exit, the alive ones only */
	memset(&o, 0, sizeof(o));
	assert_int_equal(store_sweep_processes(lk->s, T0 + 300 * SEC, keep_process, &o), STORE_OK);
	assert_int_equal(o.n, 7);
	for (size_t i = 0; i < o.n; i++)
		assert_unknown(o.v[i].end_real_ns);
}

static void each_process_has_its_newest_sample_cpu_and_run(void **state)
{
	struct lake *lk = *state;
	struct procs o = { 0 };
	const struct store_sweep_process *p;

	assert_int_equal(store_sweep_processes(lk->s, SINCE, keep_process, &o), STORE_OK);
	/* P1: alive, run 1's root; its newest sample is seq 3 at 200 s, though inserted first */
	p = proc_of(&o, "b1", 100);
	assert_string_equal(o.exe[1], "/usr/bin/nextflow");
	assert_string_equal(o.tool[1], "nextflow");
	assert_string_equal(o.argv[1], "[\"nextflow\",\"run\",\"x\"]");
	assert_int_equal(p->start_ns, 10 * SEC);
	assert_known(p->ppid, 1);
	assert_known(p->parent_start_ns, 0);
	assert_known(p->start_real_ns, T0 + 10 * SEC);
	assert_unknown(p->end_real_ns);
	assert_known(p->run_id, 1);
	assert_true(p->run_root);
	assert_known(p->last_sample_ns, T0 + 200 * SEC);
	assert_known(p->sample_runtime_ns, 7 * SEC);
	assert_known(p->sample_rss_bytes, 120000000);
	assert_known(p->cpu_ns, 7 * SEC);
	/* P2: exited after the start; CPU from its exit record, not its sample */
	p = proc_of(&o, "b1", 101);
	assert_known(p->end_real_ns, T0 + 150 * SEC);
	assert_known(p->parent_start_ns, 10 * SEC);
	assert_known(p->run_id, 1);
	assert_false(p->run_root);
	assert_known(p->last_sample_ns, T0 + 60 * SEC);
	assert_known(p->sample_runtime_ns, 1 * SEC);
	assert_known(p->sample_rss_bytes, 10000000);
	assert_known(p->cpu_ns, 3 * SEC);
	/* P5: no sample, argv not JSON, no run */
	p = proc_of(&o, "b1", 104);
	assert_string_equal(o.argv[2], "(null)");
	assert_string_equal(o.tool[2], "jupyter");
	assert_unknown(p->ppid);
	assert_unknown(p->parent_start_ns);
	assert_unknown(p->run_id);
	assert_false(p->run_root);
	assert_unknown(p->last_sample_ns);
	assert_unknown(p->sample_runtime_ns);
	assert_unknown(p->sample_rss_bytes);
	assert_unknown(p->cpu_ns);
	/* P6: real time from its exit's offset (T0 + 10 s); its runtime reads negative: utime + stime */
	p = proc_of(&o, "b1", 105);
	assert_unknown(p->start_real_ns);
	assert_known(p->end_real_ns, T0 + 300 * SEC);
	assert_known(p->last_sample_ns, T0 + 110 * SEC);
	assert_known(p->sample_runtime_ns, 2 * SEC);
	assert_known(p->cpu_ns, 3 * SEC);
	/* P11: nothing but its start */
	p = proc_of(&o, "b1", 99);
	assert_string_equal(o.exe[4], "(null)");
	assert_string_equal(o.argv[4], "(null)");
	assert_known(p->start_real_ns, T0 + 60 * SEC);
	assert_unknown(p->cpu_ns);
	/* P7: a sample, but no offset to put it in real time; its RSS reads negative */
	p = proc_of(&o, "b1", 106);
	assert_unknown(p->start_real_ns);
	assert_unknown(p->last_sample_ns);
	assert_known(p->sample_runtime_ns, 1 * SEC);
	assert_unknown(p->sample_rss_bytes);
	assert_known(p->cpu_ns, 1 * SEC);
	assert_known(p->run_id, 1);
	assert_false(p->run_root);
	/* P8: run 2's root on boot B2 (offset T0 + 499 s); its sample has utime and stime only */
	p = proc_of(&o, "b2", 100);
	assert_true(p->run_root);
	assert_known(p->run_id, 2);
	assert_known(p->last_sample_ns, T0 + 509 * SEC);
	assert_unknown(p->sample_runtime_ns);
	assert_known(p->sample_rss_bytes, 5000000);
	assert_known(p->cpu_ns, 3 * SEC);
	/* P9: run 3's key names its pid with another start */
	p = proc_of(&o, "b2", 200);
	assert_known(p->run_id, 3);
	assert_false(p->run_root);
	/* P10: run 4's key names its boot, pid and start, but run 4 is another host's */
	p = proc_of(&o, "b3", 100);
	assert_false(p->run_root);
	assert_unknown(p->run_id);
}

static void the_newest_word_of_a_lake_made_by_hand(void **state)
{
	struct lake *lk = *state;
	int64_t now = 0;

	/* H1's seq 7 ends at T0+280, after every batch (the latest at T0+250) */
	assert_int_equal(store_sweep_newest(lk->s, &now), STORE_OK);
	assert_int_equal(now, T0 + 280 * SEC);
}

static int stop_at_two(void *ctx, const struct store_sweep_process *p)
{
	int *calls = ctx;

	(void)p;
	return ++*calls == 2 ? 42 : 0;
}

static int stop_at_once(void *ctx, const struct store_beat *b)
{
	int *calls = ctx;

	(void)b;
	++*calls;
	return -7;
}

static void a_callback_stops_the_walk_with_its_value(void **state)
{
	struct lake *lk = *state;
	int calls = 0;

	assert_int_equal(store_sweep_processes(lk->s, 0, stop_at_two, &calls), 42);
	assert_int_equal(calls, 2);
	calls = 0;
	assert_int_equal(store_sweep_beats(lk->s, 0, stop_at_once, &calls), -7);
	assert_int_equal(calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(heartbeats_are_stored_with_every_figure, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_bad_host_record_is_noted_counted_and_stores_nothing, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(numbers_of_the_wrong_type_or_range_are_null, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(what_the_processor_did_not_know_is_null, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_heartbeat_sent_again_is_stored_once, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_5_lake_is_upgraded_and_takes_step_allocations, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(a_version_4_lake_is_upgraded_keeping_its_rows_and_takes_heartbeats, setup,
						lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(the_newest_word_is_the_latest_beat_end_or_batch, setup, lake_fixture_teardown),
		cmocka_unit_test_setup_teardown(the_beats_ending_after_the_start_are_read_by_host_then_start, setup_lake,
						teardown_lake),
		cmocka_unit_test_setup_teardown(the_processes_alive_after_the_start_are_read_in_order, setup_lake,
						teardown_lake),
		cmocka_unit_test_setup_teardown(each_process_has_its_newest_sample_cpu_and_run, setup_lake, teardown_lake),
		cmocka_unit_test_setup_teardown(the_newest_word_of_a_lake_made_by_hand, setup_lake, teardown_lake),
		cmocka_unit_test_setup_teardown(a_callback_stops_the_walk_with_its_value, setup_lake, teardown_lake),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
