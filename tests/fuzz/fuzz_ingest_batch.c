/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: a request body through ingest_batch (what
 * POST /v1/batches calls) into an in-memory lake, emptied before each
 * input, one test key enrolled, with abort() on a broken invariant.
 *
 * The first byte picks the mode:
 *   even: the rest is the body as sent, unsigned by us (everything before
 *         the signature check, and whatever a forged or damaged batch does);
 *   odd:  the rest is a list of records, [type][len lo][len hi][flags]
 *         [payload len bytes]..., that the harness frames (seqs from 1, a
 *         skipped seq where flags bit 0 says so), signs with the test key
 *         and sends, so the code past the signature (inflate, frames,
 *         decoder, every table, the run report's and the live records'
 *         JSON, a report merging into a live run) gets the bytes.
 *         With flags bit 1 a kernel record's header gets its right type
 *         and version, so the decoder's deeper checks are reached.
 *
 * Invariants: every reply is one of the statuses the API documents, with
 * a NUL-terminated JSON object of the length given; a well-framed batch
 * signed by an enrolled key is always stored (200), every record new the
 * first time; sent again it is a duplicate and stores nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../test_ingest_helpers.h"
#include "ingest.h"
#include "keys.h"
#include "store.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 64

static struct batch_secret_key test_key;
static struct keyring test_keys;
/*
 * One in-memory lake for the whole run (opening one and preparing its
 * statements costs more than a run), emptied before each input through a
 * second connection to the same shared-cache database, so that every
 * input starts from an empty lake.
 */
#define LAKE_URI "file:fuzz_ingest_lake?mode=memory&cache=shared"
static struct store *lake;
static sqlite3 *wiper;

static void wipe_lake(void)
{
	static const char sql[] =
		"DELETE FROM hosts; DELETE FROM keys; DELETE FROM batches; DELETE FROM gaps; DELETE FROM records;"
		"DELETE FROM processes; DELETE FROM samples; DELETE FROM files; DELETE FROM cgroups;"
		"DELETE FROM signals; DELETE FROM agent_counters; DELETE FROM losses; DELETE FROM runs;"
		"DELETE FROM steps; DELETE FROM run_processes;";

	CHECK(sqlite3_exec(wiper, sql, NULL, NULL, NULL) == SQLITE_OK);
}

/* The same key every run, so that seeds signed with it stay valid. */
static void init_once(void)
{
	static const uint8_t seed[crypto_sign_SEEDBYTES] = "tracer-ingest-fuzz-key-seed-0001";
	static int done;
	char line[256];

	if (done)
		return;
	CHECK(batch_crypto_init() == 0);
	crypto_sign_seed_keypair(test_key.public_key, test_key.secret_key, seed);
	batch_key_id(test_key.public_key, test_key.key_id);
	CHECK(batch_public_line(&test_key, NULL, line, sizeof(line)) == 0);
	CHECK(keys_parse(&test_keys, "fuzz", line, strlen(line), NULL, 0) == 0);
	CHECK(store_open(&lake, LAKE_URI, false, line, sizeof(line)) == STORE_OK);
	CHECK(sqlite3_open_v2(LAKE_URI, &wiper, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) == SQLITE_OK);
	done = 1;
}

static void check_reply(const struct ingest_reply *r)
{
	static const unsigned ok[] = { 200, 400, 403, 413, 500, 503 };
	bool known = false;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		known |= r->status == ok[i];
	CHECK(known);
	CHECK(r->len < sizeof(r->body));
	CHECK(strlen(r->body) == r->len);
	CHECK(r->body[0] == '{');
}

/* New types go at the end: a seed's type byte keeps its meaning. */
static const uint16_t types[] = { TR_EXEC, TR_FORK, TR_EXIT, TR_OOM, TR_CGROUP, TR_SAMPLE, TR_FILE,
				  TR_COUNTERS, TR_END, TL_RUN_REPORT, TL_KEY_ANNOUNCE, TL_LOSS, 7, 999, TL_RUN,
				  TL_TOOLS, TL_HOST };

/* Records from the input into frames; false if there are none. */
static bool build_frames(const uint8_t *p, size_t n, struct frames *f)
{
	uint64_t seq = 1;
	uint8_t buf[4096];

	while (n >= 4 && f->n < MAX_RECORDS) {
		uint16_t type = types[p[0] % (sizeof(types) / sizeof(types[0]))];
		uint32_t len = (uint32_t)(p[1] | (p[2] << 8)) % sizeof(buf);
		uint8_t flags = p[3];

		p += 4;
		n -= 4;
		if (len > n)
			len = (uint32_t)n;
		memcpy(buf, p, len);
		if ((flags & 2) && len >= sizeof(struct tr_hdr) && type < TL_RUN_REPORT) {
			struct tr_hdr h = encode_hdr(type, 1000 + seq);

			memcpy(buf, &h, sizeof(h));
		}
		seq += flags & 1; /* a seq the spool lost */
		CHECK(frames_add(f, seq++, type, buf, len));
		p += len;
		n -= len;
	}
	return f->n > 0;
}

static unsigned field(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	return p ? (unsigned)strtoul(p + strlen(key), NULL, 10) : ~0u;
}

static void signed_records(struct ingest *ig, const uint8_t *p, size_t n)
{
	static const uint8_t host[BATCH_HOST_ID_LEN] = { 1, 2, 3 };
	struct frames f = { 0 };
	struct ingest_reply r;
	struct sealed s;

	if (!build_frames(p, n, &f)) {
		frames_free(&f);
		return;
	}
	CHECK(seal_frames(&test_key, host, 1, NULL, (p[0] & 1) ? BATCH_COMP_ZLIB : BATCH_COMP_NONE, &f, &s) == 0);
	ingest_batch(ig, s.wire, s.len, NULL, "fuzz", &r);
	check_reply(&r);
	CHECK(r.status == 200);
	CHECK(strstr(r.body, "\"status\":\"stored\""));
	CHECK(field(r.body, "\"new\":") == f.n);
	ingest_batch(ig, s.wire, s.len, NULL, "fuzz", &r);
	check_reply(&r);
	CHECK(r.status == 200 && strstr(r.body, "\"status\":\"duplicate\""));
	free(s.wire);
	frames_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keyring kr = { 0 };
	struct ingest ig;
	struct ingest_reply r;

	init_once();
	if (size < 1)
		return 0;
	wipe_lake();
	kr.v = malloc(test_keys.n * sizeof(*kr.v));
	CHECK(kr.v != NULL);
	memcpy(kr.v, test_keys.v, test_keys.n * sizeof(*kr.v));
	kr.n = test_keys.n;
	CHECK(ingest_init(&ig, lake, &kr) == 0);
	ig.quiet = true;
	if (data[0] & 1) {
		signed_records(&ig, data + 1, size - 1);
	} else {
		ingest_batch(&ig, data + 1, size - 1, (data[0] & 2) ? "00" : NULL, "fuzz", &r);
		check_reply(&r);
	}
	ingest_destroy(&ig);
	return 0;
}
