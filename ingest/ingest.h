/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One request body in, one HTTP status and JSON reply out: what
 * `POST /v1/batches` does, without HTTP (server.c calls it; so do the
 * fuzzer and the tests).
 *
 * Order, and why: the signature is checked (batch_verify) before anything
 * of the batch is believed or parsed; a batch the lake already has is
 * answered "duplicate" before it is inflated; only then is it opened
 * (batch_open: inflate, every frame checked) and stored in one
 * transaction (store_batch).
 *
 * The keys: the keys file's (replaced whole on reload, under a lock: the
 * HTTP thread verifies while the main thread reloads), then the keys the
 * lake enrolled by rotation.
 */
#ifndef TRACER_INGEST_INGEST_H
#define TRACER_INGEST_INGEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch_format.h"
#include "keys.h"
#include "store.h"

#define INGEST_REPLY_MAX 512

struct ingest_stats {
	uint64_t requests;
	uint64_t stored;          /* batches stored */
	uint64_t duplicates;      /* batches already stored */
	uint64_t records_new;
	uint64_t records_duplicate;
	uint64_t refused;         /* every refusal, whatever the reason */
	uint64_t refused_by_batch_err[16]; /* indexed by -batch_err */
	uint64_t store_errors;
	uint64_t key_reloads;
};

struct ingest {
	struct store *store;
	pthread_mutex_t keys_lock; /* guards keys: reloaded by the main thread, read by the HTTP thread */
	struct keyring keys;
	struct ingest_stats stats;
	bool quiet;                /* no refusal logs (the fuzzer) */
};

struct ingest_reply {
	unsigned status;           /* HTTP status */
	char body[INGEST_REPLY_MAX]; /* JSON, NUL-terminated */
	size_t len;
};

/* The ingest takes ownership of keys (moved: *keys is emptied). */
int ingest_init(struct ingest *ig, struct store *store, struct keyring *keys);
void ingest_destroy(struct ingest *ig);

/* Replace the keys file's keys with *keys (moved); the old ones are freed. */
void ingest_set_keys(struct ingest *ig, struct keyring *keys);

/*
 * Handle one batch body. idempotency_key: the header's value or NULL.
 * peer: the client's address, for logs. Always fills r. Refusals are
 * logged once on stderr with the host (when the batch is far enough
 * along to say), the key id and the reason.
 */
void ingest_batch(struct ingest *ig, const void *body, size_t len, const char *idempotency_key, const char *peer,
		  struct ingest_reply *r);

/* A refusal decided outside ingest_batch (size, memory, time): reply and log line alike. */
void ingest_refuse(struct ingest *ig, unsigned status, const char *reason, const char *peer,
		   const void *body, size_t len, struct ingest_reply *r);

/* The key lookup batch_verify calls (ctx: struct ingest). */
int ingest_key_lookup(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t public_key[BATCH_PUBKEY_LEN],
		      uint8_t bound_host[BATCH_HOST_ID_LEN]);

#endif /* TRACER_INGEST_INGEST_H */
