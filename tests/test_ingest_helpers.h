/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the ingest tests share: frames built the way the processor's spool
 * writes them (include/frame.h), records with the kernel's layouts
 * (include/records.h, records/encode.h), batches sealed with
 * common/batch.c, temporary directories, and a few SQLite queries against
 * the real lake file. Header-only; no cmocka here, so the fuzzer can use
 * it too.
 */
#ifndef TRACER_TESTS_INGEST_HELPERS_H
#define TRACER_TESTS_INGEST_HELPERS_H

#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "batch.h"
#include "encode.h"
#include "frame.h"
#include "lake.h"
#include "records.h"

/* ---- frames ------------------------------------------------------------- */

struct frames {
	uint8_t *buf;
	size_t len, cap;
	uint32_t n;
	uint64_t first, last;
	uint64_t stream; /* the stream they are sealed in (kept by frames_reset) */
};

static inline void frames_reset(struct frames *f)
{
	f->len = 0;
	f->n = 0;
	f->first = f->last = 0;
}

static inline void frames_free(struct frames *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* Append one frame with its ring position (src_pos, src_gen); false when out of memory. */
static inline bool frames_add_src(struct frames *f, uint64_t seq, uint64_t src_pos, uint32_t src_gen, uint16_t type,
				  const void *payload, uint32_t len)
{
	struct tr_frame h = { .seq = seq, .src_pos = src_pos, .src_gen = src_gen, .type = type, .len = len };
	size_t size = TR_FRAME_SIZE(len);

	if (f->len + size > f->cap) {
		size_t cap = f->cap ? f->cap : 4096;
		uint8_t *nb;

		while (cap < f->len + size)
			cap *= 2;
		nb = realloc(f->buf, cap);
		if (!nb)
			return false;
		f->buf = nb;
		f->cap = cap;
	}
	memset(f->buf + f->len, 0, size);
	if (len)
		memcpy(f->buf + f->len + TR_FRAME_HDR, payload, len);
	h.crc = frame_crc(&h, f->buf + f->len + TR_FRAME_HDR);
	memcpy(f->buf + f->len, &h, sizeof(h));
	f->len += size;
	if (f->n++ == 0)
		f->first = seq;
	f->last = seq;
	return true;
}

/* A processor record (no ring position). */
static inline bool frames_add(struct frames *f, uint64_t seq, uint16_t type, const void *payload, uint32_t len)
{
	return frames_add_src(f, seq, 0, 0, type, payload, len);
}

/* ---- records ------------------------------------------------------------ */

static inline struct tr_fork make_fork(uint64_t ts, uint32_t parent, uint64_t parent_start, uint32_t child,
				       uint64_t child_start)
{
	struct tr_fork r;

	memset(&r, 0, sizeof(r));
	r.hdr = encode_hdr(TR_FORK, ts);
	r.parent_tgid = parent;
	r.parent_start_ns = parent_start;
	r.child_tgid = child;
	r.child_start_ns = child_start;
	r.uid = 1000;
	return r;
}

/* An exit with every figure set to something recognisable: base + its position. */
static inline struct tr_exit make_exit(uint64_t ts, uint32_t tgid, uint64_t start, uint32_t ppid, uint32_t raw_status,
				       uint64_t base)
{
	struct tr_exit r;

	memset(&r, 0, sizeof(r));
	r.hdr = encode_hdr(TR_EXIT, ts);
	r.pid = tgid;
	r.tgid = tgid;
	r.ppid = ppid;
	r.exit_code = raw_status;
	r.start_ns = start;
	r.cgroup_id = 7;
	r.utime_ns = base + 1;
	r.stime_ns = base + 2;
	r.runtime_ns = base + 3;
	r.maxrss_bytes = base + 4;
	r.read_bytes = base + 5;
	r.write_bytes = base + 6;
	r.rchar = base + 8;
	r.wchar = base + 9;
	r.nvcsw = base + 12;
	r.run_delay_ns = base + 16;
	r.nr_threads = 1;
	r.net_tx_bytes = base + 20;
	r.net_rx_bytes = base + 21;
	r.iowait_ns = base + 22;
	r.state_flags = TR_PSTATE_TRACED;
	encode_comm(r.comm, "samtools");
	return r;
}

static inline struct tr_oom make_oom(uint64_t ts, uint32_t pid, uint64_t anon_kb)
{
	struct tr_oom r;

	memset(&r, 0, sizeof(r));
	r.hdr = encode_hdr(TR_OOM, ts);
	r.pid = pid;
	r.uid = 1000;
	r.anon_rss_kb = anon_kb;
	r.total_vm_kb = anon_kb * 2;
	r.memcg_limit_bytes = 1 << 30;
	return r;
}

/* ---- batches ------------------------------------------------------------ */

struct sealed {
	uint8_t *wire;
	size_t len;
	uint8_t hash[BATCH_HASH_LEN];
};

/* Seal frames as batch batch_seq of host, in boot boot. 0 or a batch_err. */
static inline int seal_frames_boot(const struct batch_secret_key *k, const uint8_t host[BATCH_HOST_ID_LEN],
				   const uint8_t boot[BATCH_BOOT_ID_LEN], uint64_t batch_seq, const uint8_t *prev_hash,
				   int compression, const struct frames *f, struct sealed *out)
{
	struct batch_identity id;
	struct batch_build b;
	size_t cap = batch_max_wire(f->len);
	int rc;

	memcpy(id.host_id, host, sizeof(id.host_id));
	memcpy(id.boot_id, boot, sizeof(id.boot_id));
	memset(&b, 0, sizeof(b));
	b.batch_seq = batch_seq;
	b.first_seq = f->first;
	b.last_seq = f->last;
	b.nrecords = f->n;
	b.created_ns = 1700000000000000000ull;
	b.mono_to_real_ns = 1600000000000000000ll;
	b.compression = compression;
	b.stream = f->stream;
	if (prev_hash)
		memcpy(b.prev_hash, prev_hash, sizeof(b.prev_hash));
	out->wire = malloc(cap);
	if (!out->wire)
		return BATCH_E_NOMEM;
	rc = batch_seal(k, &id, &b, f->buf, f->len, out->wire, cap, &out->len, out->hash);
	if (rc) {
		free(out->wire);
		out->wire = NULL;
	}
	return rc;
}

/* The boot id the tests' batches have unless they say otherwise: host with its first byte flipped. */
static inline void default_boot_of(const uint8_t host[BATCH_HOST_ID_LEN], uint8_t boot[BATCH_BOOT_ID_LEN])
{
	_Static_assert(BATCH_BOOT_ID_LEN == BATCH_HOST_ID_LEN, "a boot id made from a host id");
	memcpy(boot, host, BATCH_BOOT_ID_LEN);
	boot[0] ^= 0xff;
}

/* Seal frames as batch batch_seq of host (in its default boot). 0 or a batch_err. */
static inline int seal_frames(const struct batch_secret_key *k, const uint8_t host[BATCH_HOST_ID_LEN],
			      uint64_t batch_seq, const uint8_t *prev_hash, int compression, const struct frames *f,
			      struct sealed *out)
{
	uint8_t boot[BATCH_BOOT_ID_LEN];

	default_boot_of(host, boot);
	return seal_frames_boot(k, host, boot, batch_seq, prev_hash, compression, f, out);
}

/* A host id unique to n. */
static inline void host_id_of(uint8_t host[BATCH_HOST_ID_LEN], uint8_t n)
{
	host[0] = n;
	for (unsigned i = 1; i < BATCH_HOST_ID_LEN; i++)
		host[i] = (uint8_t)(0xa0 + i);
}

/* ---- files -------------------------------------------------------------- */

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- SQLite, for checking what the lake holds ---------------------------- */

/* The first column of the first row as an integer; -1 if there is no row, -2 on error. */
static inline int64_t sql_int(const char *db_path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = -2;

	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		int rc = sqlite3_step(st);

		v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : rc == SQLITE_DONE ? -1 : -2;
	} else {
		fprintf(stderr, "sql_int: %s: %s\n", sql, sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The first column of the first row as text into out ("" if none or NULL). */
static inline void sql_text_of(const char *db_path, const char *sql, char *out, size_t outlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	out[0] = 0;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
	} else {
		fprintf(stderr, "sql_text: %s: %s\n", sql, sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

#endif /* TRACER_TESTS_INGEST_HELPERS_H */
