/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A signed batch: what the processor POSTs and the ingest verifies. The
 * one definition of its bytes.
 *
 *   +----------------------+------------------------------+-----------+
 *   | struct batch_header  | body (body_len bytes)        | signature |
 *   |  (header_len bytes)  | frames, compressed or not    | 64 bytes  |
 *   +----------------------+------------------------------+-----------+
 *
 * signature: Ed25519 (libsodium crypto_sign_detached) over header || body,
 * by the key named key_id. The ingest reads only key_id and the lengths
 * before it has checked the signature; nothing is decompressed or decoded
 * before. body_digest: BLAKE2b-256 (crypto_generichash, 32 bytes, no key)
 * of the body as sent. The body, once decompressed, is raw_len bytes of
 * frames (include/frame.h) with seqs first_seq..last_seq, nrecords of
 * them, in order; a seq may be missing only where records were evicted or
 * quarantined (the processor says so in a TL_LOSS record).
 *
 * The batch hash: BLAKE2b-256 of all the bytes (header, body, signature).
 * Each batch carries its predecessor's hash (prev_hash, zeros for a
 * stream's first batch or after the spool lost its ledger), so the lake can
 * tell a chain from a replay or a splice. batch_seq counts a stream's
 * batches from 1.
 *
 * The stream: one spool's id (a host may have several: the daemons', each
 * tracer run's). Record seqs, batch numbers and the chain are a stream's;
 * the lake stores each (host, stream, seq) once. Version 1 headers (176
 * bytes, without stream) are still accepted: their stream is 0, which is
 * also what an upgraded spool of version 1 keeps.
 *
 * Key id: the first 8 bytes of BLAKE2b-256 of the 32-byte public key.
 * Integers little-endian.
 */
#ifndef TRACER_BATCH_FORMAT_H
#define TRACER_BATCH_FORMAT_H

#include <stdint.h>

#include "frame.h"

#define BATCH_MAGIC "TRBATCH1" /* 8 bytes, no NUL */
#define BATCH_VERSION 2
#define BATCH_HEADER_V1_LEN 176 /* version 1: the header without stream */

enum batch_compression {
	BATCH_COMP_NONE = 0,
	BATCH_COMP_ZLIB = 1, /* zlib stream (RFC 1950) */
};

#define BATCH_SIG_LEN 64
#define BATCH_HASH_LEN 32
#define BATCH_KEY_ID_LEN 8
#define BATCH_PUBKEY_LEN 32
#define BATCH_HOST_ID_LEN 16
#define BATCH_BOOT_ID_LEN 16
#define BATCH_MAX_RAW (64u << 20)  /* decompressed body, at most */
#define BATCH_MAX_WIRE (32u << 20) /* header + body + signature as sent, at most */

struct batch_header {
	uint8_t magic[8];                        /* BATCH_MAGIC */
	uint16_t version;                        /* BATCH_VERSION */
	uint16_t compression;                    /* enum batch_compression */
	uint32_t header_len;                     /* sizeof(struct batch_header) */
	uint8_t host_id[BATCH_HOST_ID_LEN];      /* /etc/machine-id, or the configured host id */
	uint8_t key_id[BATCH_KEY_ID_LEN];        /* the signing key */
	uint8_t boot_id[BATCH_BOOT_ID_LEN];      /* /proc/sys/kernel/random/boot_id: names the clock of ts_ns */
	uint64_t batch_seq;                      /* this host's batch number, from 1 */
	uint64_t first_seq;                      /* record seqs, inclusive */
	uint64_t last_seq;
	uint32_t nrecords;
	uint32_t body_len;                       /* bytes of body as sent */
	uint32_t raw_len;                        /* bytes of frames after decompression */
	uint32_t flags;                          /* 0 */
	uint64_t created_ns;                     /* CLOCK_REALTIME when signed */
	int64_t mono_to_real_ns;                 /* CLOCK_REALTIME - CLOCK_MONOTONIC on the host when signed */
	uint8_t prev_hash[BATCH_HASH_LEN];
	uint8_t body_digest[BATCH_HASH_LEN];
	/* version 2 */
	uint64_t stream;                         /* the spool's id, 1..2^63-1 (0: a version 1 spool) */
};

_Static_assert(sizeof(struct batch_header) == 184, "batch header layout");
_Static_assert(__builtin_offsetof(struct batch_header, stream) == BATCH_HEADER_V1_LEN, "version 1 is a prefix");
_Static_assert(__builtin_offsetof(struct batch_header, key_id) == 32, "key_id at a fixed offset");

#endif /* TRACER_BATCH_FORMAT_H */
