/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signed batches (include/batch_format.h): built and signed by the
 * processor, verified and opened by the ingest. Keys (Ed25519, libsodium)
 * and their files.
 *
 * Errors are an enum with a name for each (batch_strerror), so the ingest
 * can log exactly why it refused a batch.
 */
#ifndef TRACER_COMMON_BATCH_H
#define TRACER_COMMON_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch_format.h"

enum batch_err {
	BATCH_OK = 0,
	BATCH_E_SHORT = -1,        /* fewer bytes than a header and a signature */
	BATCH_E_MAGIC = -2,        /* not a batch */
	BATCH_E_VERSION = -3,      /* a version or header length this build does not know */
	BATCH_E_LENGTH = -4,       /* header_len + body_len + signature != the bytes received */
	BATCH_E_TOO_BIG = -5,      /* over BATCH_MAX_WIRE or BATCH_MAX_RAW */
	BATCH_E_UNKNOWN_KEY = -6,  /* key_id not enrolled (HTTP 403) */
	BATCH_E_WRONG_HOST = -7,   /* key enrolled for another host (HTTP 403) */
	BATCH_E_SIGNATURE = -8,    /* signature does not verify */
	BATCH_E_DIGEST = -9,       /* body_digest does not match the body */
	BATCH_E_COMPRESSION = -10, /* unknown method, or the body does not inflate to raw_len */
	BATCH_E_FRAME = -11,       /* a frame is malformed: bad length, crc, seq order or out of range */
	BATCH_E_COUNT = -12,       /* nrecords or the seq range disagree with the frames */
	BATCH_E_NOMEM = -13,
	BATCH_E_INTERNAL = -14,    /* libsodium or zlib failed where it cannot */
};

const char *batch_strerror(int err);

/* libsodium's sodium_init, once per process (safe to call again). 0 or -1. */
int batch_crypto_init(void);

/* ---- keys ---------------------------------------------------------- */

struct batch_secret_key {
	uint8_t key_id[BATCH_KEY_ID_LEN];
	uint8_t public_key[BATCH_PUBKEY_LEN];
	uint8_t secret_key[64];   /* libsodium's: seed || public key */
};

void batch_key_generate(struct batch_secret_key *k);
void batch_key_id(const uint8_t public_key[BATCH_PUBKEY_LEN], uint8_t key_id[BATCH_KEY_ID_LEN]);
/* Wipe a secret key from memory (sodium_memzero). */
void batch_key_wipe(struct batch_secret_key *k);

/*
 * Secret key file: one line "tracer-secret-key-v1 KEYID_HEX SECRET_BASE64\n"
 * (base64 of the 64-byte secret key), mode 0600. Writing refuses to
 * replace an existing file. Reading checks that the key id matches the
 * key, and refuses a file that group or others can read.
 * 0 or -errno; on -EINVAL a message naming the file and the problem in err.
 */
int batch_key_write(const char *path, const struct batch_secret_key *k);
int batch_key_read(const char *path, struct batch_secret_key *k, char *err, size_t errlen);

/*
 * Public key line, for enrolment: "tracer-public-key-v1 KEYID_HEX PUBLIC_BASE64 [HOST_ID_HEX]".
 * The ingest's keys file holds such lines (and comments, '#', and blank lines).
 */
int batch_public_line(const struct batch_secret_key *k, const uint8_t *host_id, char *out, size_t outlen);

#define BATCH_MACHINE_ID_PATH "/etc/machine-id"              /* the host id, unless the config gives one */
#define BATCH_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id" /* this boot's id: names the clock of ts_ns */

/*
 * A 128-bit id from a file holding 32 hex digits, dashes allowed:
 * BATCH_MACHINE_ID_PATH (the host id) or BATCH_BOOT_ID_PATH.
 * 0, -errno, or -EINVAL when the file holds something else.
 */
int batch_read_id_file(const char *path, uint8_t id[16]);

/* ---- building (processor) ------------------------------------------ */

struct batch_identity {
	uint8_t host_id[BATCH_HOST_ID_LEN];
	uint8_t boot_id[BATCH_BOOT_ID_LEN];
};

struct batch_build {
	uint64_t batch_seq;
	uint64_t first_seq, last_seq;
	uint32_t nrecords;
	uint64_t created_ns;
	int64_t mono_to_real_ns;
	uint8_t prev_hash[BATCH_HASH_LEN];
	int compression;              /* enum batch_compression */
	uint64_t stream;              /* the spool's id (include/batch_format.h) */
};

/*
 * Sign frames (raw_len bytes, as spool_read returns them) into out
 * (header, compressed body, signature); *outlen its length, hash the
 * batch hash. out must hold batch_max_wire(raw_len) bytes.
 */
size_t batch_max_wire(size_t raw_len);
int batch_seal(const struct batch_secret_key *k, const struct batch_identity *id, const struct batch_build *b,
	       const void *frames, size_t raw_len, void *out, size_t outcap, size_t *outlen,
	       uint8_t hash[BATCH_HASH_LEN]);

/* ---- verifying and opening (ingest) -------------------------------- */

/* Looks up an enrolled key by id: 0 and the key and the host it is bound to (all zeros: any host), or -1. */
typedef int (*batch_key_lookup_fn)(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN],
				   uint8_t public_key[BATCH_PUBKEY_LEN], uint8_t bound_host[BATCH_HOST_ID_LEN]);

/*
 * Check a batch as received, before anything else looks at it: magic,
 * version, lengths, the key (enrolled, bound to this host), the signature
 * over header and body, the body digest. Only then: hdr filled, hash the
 * batch hash. BATCH_OK or a batch_err.
 */
int batch_verify(const void *wire, size_t len, batch_key_lookup_fn lookup, void *ctx, struct batch_header *hdr,
		 uint8_t hash[BATCH_HASH_LEN]);

/*
 * A verified batch's frames: inflate the body into a new buffer (*frames,
 * free() it; raw_len bytes) and check every frame (lengths, crc, seqs
 * increasing within first..last, count). BATCH_OK or a batch_err.
 */
int batch_open(const void *wire, size_t len, const struct batch_header *hdr, uint8_t **frames, size_t *raw_len);

/* Walk checked frames: returns the frame at *off and advances, or NULL at the end. */
const struct tr_frame *batch_next_frame(const uint8_t *frames, size_t raw_len, size_t *off);

/* zlib crc32 of a frame (header span and payload), as frame.h defines it. */
uint32_t frame_crc(const struct tr_frame *f, const void *payload);

#endif /* TRACER_COMMON_BATCH_H */
