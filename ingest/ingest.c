/* SPDX-License-Identifier: Apache-2.0 */
#include "ingest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "batch.h"
#include "clock.h"

#define HEX_HOST (2 * BATCH_HOST_ID_LEN + 1)
#define HEX_KEY (2 * BATCH_KEY_ID_LEN + 1)
#define HEX_HASH (2 * BATCH_HASH_LEN + 1)

int ingest_init(struct ingest *ig, struct store *store, struct keyring *keys)
{
	memset(ig, 0, sizeof(*ig));
	if (pthread_mutex_init(&ig->keys_lock, NULL))
		return -ENOMEM;
	ig->store = store;
	ig->keys = *keys;
	*keys = (struct keyring){ 0 };
	return 0;
}

void ingest_destroy(struct ingest *ig)
{
	keys_free(&ig->keys);
	pthread_mutex_destroy(&ig->keys_lock);
}

void ingest_set_keys(struct ingest *ig, struct keyring *keys)
{
	struct keyring old;

	pthread_mutex_lock(&ig->keys_lock);
	old = ig->keys;
	ig->keys = *keys;
	ig->stats.key_reloads++;
	pthread_mutex_unlock(&ig->keys_lock);
	*keys = (struct keyring){ 0 };
	keys_free(&old);
}

int ingest_key_lookup(void *ctx, const uint8_t key_id[BATCH_KEY_ID_LEN], uint8_t public_key[BATCH_PUBKEY_LEN],
		      uint8_t bound_host[BATCH_HOST_ID_LEN])
{
	struct ingest *ig = ctx;
	const struct key_entry *e;
	int found;

	pthread_mutex_lock(&ig->keys_lock);
	e = keys_find(&ig->keys, key_id);
	found = e != NULL;
	if (e) {
		memcpy(public_key, e->public_key, BATCH_PUBKEY_LEN);
		memcpy(bound_host, e->host_id, BATCH_HOST_ID_LEN); /* zeros when unbound */
	}
	pthread_mutex_unlock(&ig->keys_lock);
	if (found)
		return 0;
	/* A key the lake enrolled by rotation is bound to its host, always. */
	return store_rotation_key(ig->store, key_id, public_key, bound_host) == STORE_OK ? 0 : -1;
}

/* ---- replies and logs ----------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static void reply(struct ingest_reply *r, unsigned status, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->body, sizeof(r->body), fmt, ap);
	va_end(ap);
	r->status = status;
	r->len = n < 0 ? 0 : (size_t)n < sizeof(r->body) ? (size_t)n : sizeof(r->body) - 1;
}

/*
 * Who a refused batch says it is: the host and key of its header, read at
 * their fixed offsets. Before the signature is checked these are claims,
 * and the log says so; nothing else of the bytes is looked at.
 */
static void claimed_ids(const void *body, size_t len, char host[HEX_HOST], char key[HEX_KEY])
{
	struct batch_header h;

	snprintf(host, HEX_HOST, "?");
	snprintf(key, HEX_KEY, "?");
	if (!body || len < sizeof(h))
		return;
	memcpy(&h, body, sizeof(h));
	if (memcmp(h.magic, BATCH_MAGIC, sizeof(h.magic)))
		return;
	sodium_bin2hex(host, HEX_HOST, h.host_id, sizeof(h.host_id));
	sodium_bin2hex(key, HEX_KEY, h.key_id, sizeof(h.key_id));
}

static void log_refusal(const struct ingest *ig, unsigned status, const char *reason, const char *peer,
			const char *host, const char *key, bool verified)
{
	if (ig->quiet)
		return;
	fprintf(stderr, "<4>refused batch from %s: %s %s, key %s: %s (HTTP %u)\n", peer ? peer : "?",
		verified ? "host" : "claimed host", host, key, reason, status);
}

/* Log and answer a refusal; verified: the batch's checked header, or NULL (then the ids are claims). */
static void refuse(struct ingest *ig, unsigned status, const char *reason, const char *peer, const void *body,
		   size_t len, const struct batch_header *verified, struct ingest_reply *r)
{
	char host[HEX_HOST], key[HEX_KEY];

	if (verified) {
		sodium_bin2hex(host, sizeof(host), verified->host_id, sizeof(verified->host_id));
		sodium_bin2hex(key, sizeof(key), verified->key_id, sizeof(verified->key_id));
	} else {
		claimed_ids(body, len, host, key);
	}
	ig->stats.refused++;
	log_refusal(ig, status, reason, peer, host, key, verified != NULL);
	reply(r, status, "{\"status\":\"refused\",\"error\":\"%s\"}\n", reason);
}

void ingest_refuse(struct ingest *ig, unsigned status, const char *reason, const char *peer, const void *body,
		   size_t len, struct ingest_reply *r)
{
	refuse(ig, status, reason, peer, body, len, NULL, r);
}

static unsigned batch_err_status(int err)
{
	switch (err) {
	case BATCH_E_UNKNOWN_KEY:
	case BATCH_E_WRONG_HOST: return 403;
	case BATCH_E_TOO_BIG: return 413;
	case BATCH_E_NOMEM: return 503;
	case BATCH_E_INTERNAL: return 500;
	default: return 400;
	}
}

static void refuse_batch(struct ingest *ig, int err, const char *peer, const void *body, size_t len,
			 const struct batch_header *verified, struct ingest_reply *r)
{
	size_t slots = sizeof(ig->stats.refused_by_batch_err) / sizeof(ig->stats.refused_by_batch_err[0]);

	if (-err > 0 && (size_t)-err < slots)
		ig->stats.refused_by_batch_err[-err]++;
	refuse(ig, batch_err_status(err), batch_strerror(err), peer, body, len, verified, r);
}

/* ---- the request ---------------------------------------------------------- */

/* NULL or absent: fine. Else it must be the batch's hash, in hex (either case). */
static bool idempotency_ok(const char *key, const uint8_t hash[BATCH_HASH_LEN])
{
	uint8_t bin[BATCH_HASH_LEN];
	size_t n = 0;

	if (!key)
		return true;
	if (strlen(key) != 2 * BATCH_HASH_LEN ||
	    sodium_hex2bin(bin, sizeof(bin), key, strlen(key), NULL, &n, NULL) || n != sizeof(bin))
		return false;
	return sodium_memcmp(bin, hash, sizeof(bin)) == 0;
}

static void reply_stored(struct ingest_reply *r, const char *hash, const char *host, const struct store_result *s)
{
	reply(r, 200,
	      "{\"status\":\"stored\",\"batch\":\"%s\",\"host\":\"%s\",\"records\":%u,\"new\":%u,\"duplicate\":%u,"
	      "\"conflicting\":%u,\"gaps\":%u,\"unknown\":%u,\"undecodable\":%u,\"bad_run_reports\":%u,"
	      "\"runs\":%u,\"keys_enrolled\":%u,\"keys_refused\":%u,\"bad_live_records\":%u}\n",
	      hash, host, s->records, s->new_records, s->dup_records, s->conflicts, s->gaps, s->unknown, s->undecodable,
	      s->bad_reports, s->runs, s->keys_enrolled, s->keys_refused, s->bad_live_records);
}

static void store_failed(struct ingest *ig, int err, const char *peer, const char *host, struct ingest_reply *r)
{
	unsigned status = err == STORE_E_BUSY ? 503 : 500;

	ig->stats.store_errors++;
	if (!ig->quiet)
		fprintf(stderr, "<3>cannot store batch from %s (host %s): %s: %s (HTTP %u; the sender will retry)\n",
			peer ? peer : "?", host, store_strerror(err), store_last_error(ig->store), status);
	reply(r, status, "{\"status\":\"error\",\"error\":\"%s\"}\n", store_strerror(err));
}

/* A verified batch: duplicate, or opened and stored. */
static void open_and_store(struct ingest *ig, const void *body, size_t len, const struct batch_header *h,
			   const uint8_t hash[BATCH_HASH_LEN], const char *peer, struct ingest_reply *r)
{
	char hash_hex[HEX_HASH], host[HEX_HOST];
	struct store_result res;
	uint8_t *frames = NULL;
	size_t raw_len = 0;
	int rc;

	sodium_bin2hex(hash_hex, sizeof(hash_hex), hash, BATCH_HASH_LEN);
	sodium_bin2hex(host, sizeof(host), h->host_id, sizeof(h->host_id));
	rc = store_batch_exists(ig->store, hash);
	if (rc == 0) {
		rc = batch_open(body, len, h, &frames, &raw_len);
		if (rc) {
			refuse_batch(ig, rc, peer, body, len, h, r);
			return;
		}
		rc = store_batch(ig->store, h, hash, frames, raw_len, len, real_ns(), &res);
		free(frames);
		if (rc == STORE_OK && !res.duplicate) {
			ig->stats.stored++;
			ig->stats.records_new += res.new_records;
			ig->stats.records_duplicate += res.dup_records;
			reply_stored(r, hash_hex, host, &res);
			return;
		}
		rc = rc == STORE_OK ? 1 : rc;
	}
	if (rc < 0) {
		store_failed(ig, rc, peer, host, r);
		return;
	}
	ig->stats.duplicates++;
	reply(r, 200, "{\"status\":\"duplicate\",\"batch\":\"%s\",\"host\":\"%s\"}\n", hash_hex, host);
}

void ingest_batch(struct ingest *ig, const void *body, size_t len, const char *idempotency_key, const char *peer,
		  struct ingest_reply *r)
{
	uint8_t hash[BATCH_HASH_LEN];
	struct batch_header h;
	int rc;

	ig->stats.requests++;
	rc = batch_verify(body, len, ingest_key_lookup, ig, &h, hash);
	if (rc) {
		refuse_batch(ig, rc, peer, body, len, NULL, r);
		return;
	}
	if (!idempotency_ok(idempotency_key, hash)) {
		refuse(ig, 400, "Idempotency-Key is not the batch's hash (hex BLAKE2b-256 of the body)", peer, body,
		       len, &h, r);
		return;
	}
	open_and_store(ig, body, len, &h, hash, peer, r);
}
