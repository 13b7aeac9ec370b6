/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ingest's enrolment list: which public keys may sign batches, and
 * for which host. Parsed from the keys file, one key a line:
 *
 *   # comment
 *   tracer-public-key-v1 KEYID_HEX PUBLIC_BASE64 [HOST_ID_HEX]
 *
 * (the line `batch_public_line` prints). The key id must be the key's
 * (batch_key_id); with a host id the key signs for that host only. A load
 * is all or nothing: on any error the keyring handed in is untouched and
 * err says "FILE:LINE:COLUMN: what is wrong".
 */
#ifndef TRACER_INGEST_KEYS_H
#define TRACER_INGEST_KEYS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch_format.h"

#define KEYS_MAX 65536               /* keys a file may hold (more is an error, not a silent drop) */
#define KEYS_LINE_MAX 1024           /* bytes of one line */
#define KEYS_PUBLIC_TAG "tracer-public-key-v1"

struct key_entry {
	uint8_t key_id[BATCH_KEY_ID_LEN];
	uint8_t public_key[BATCH_PUBKEY_LEN];
	uint8_t host_id[BATCH_HOST_ID_LEN]; /* all zeros: any host */
	bool bound;                          /* host_id names the one host it signs for */
	unsigned line;                       /* where it was enrolled */
};

struct keyring {
	struct key_entry *v; /* sorted by key_id */
	size_t n;
};

/*
 * Parse text (len bytes) named source (for messages) into a new keyring
 * *out. 0, -EINVAL (syntax, err says where), -E2BIG (more than KEYS_MAX
 * keys or a line longer than KEYS_LINE_MAX) or -ENOMEM. On error *out is
 * not touched. err may be NULL.
 */
int keys_parse(struct keyring *out, const char *source, const char *text, size_t len, char *err, size_t errlen);

/*
 * Read and parse the file at path. Also refuses a file that is not
 * regular (-EINVAL), larger than READ_MAX_INGEST_KEYS (common/readfile.h;
 * -E2BIG), or that group or others can write (-EPERM: whoever can write it
 * can enrol a key). -errno from open/read with err naming the file and
 * what to do. Opened with READ_OPEN_FLAGS, which the ingest's seccomp
 * filter allows exactly.
 */
int keys_load_file(struct keyring *out, const char *path, char *err, size_t errlen);

/* The entry for key_id, or NULL. Binary search. */
const struct key_entry *keys_find(const struct keyring *kr, const uint8_t key_id[BATCH_KEY_ID_LEN]);

void keys_free(struct keyring *kr);

#endif /* TRACER_INGEST_KEYS_H */
