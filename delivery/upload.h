/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Upload: durable spool records, in signed batches, to the ingest over
 * HTTP(S) with libcurl's multi interface, driven from the processor's loop
 * so that uploading never holds up the ring.
 *
 * One batch is in flight at a time (the chain of prev_hash is in order).
 * It is retried with the same bytes - the same hash, which is also its
 * Idempotency-Key - until an ingest takes it:
 *   2xx                 acknowledged: spool_ack, the next batch
 *   408, 425, 429, 5xx,
 *   network errors      that URL rests (exponential backoff with full jitter,
 *                       at least Retry-After when the ingest sends it) and
 *                       the batch goes at once to the next URL not resting,
 *                       or waits for the first whose rest ends; forever
 *   other 4xx           refused for good: quarantined (spool_quarantine) and
 *                       counted; not sent elsewhere (the ingests of a lake
 *                       check the same keys: it would be refused again)
 *   1xx, 3xx            as a network error, logged (a misconfigured URL should not lose data)
 * With several URLs, batches keep going to the one that took the last; one
 * that failed is tried again only once the one in use fails and its own
 * rest is over. The lake stores a batch once whichever of its ingests it
 * came through (by its hash, then by (host, seq)), so a batch that reached
 * two (a reply lost, an ingest killed after its commit) is stored once.
 * A batch is sealed once batch_records durable records wait, or the
 * oldest has waited batch_interval; with twice batch_records or more
 * waiting it takes up to four times as many (within an 8 MiB read), and
 * the next batch follows its predecessor's acknowledgement at once.
 */
#ifndef TRACER_DELIVERY_UPLOAD_H
#define TRACER_DELIVERY_UPLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "batch.h"
#include "spool.h"

#define UPLOAD_URLS_MAX 8 /* ingests of one lake, tried in turn */

struct upload_config {
	const char *urls[UPLOAD_URLS_MAX]; /* http:// or https://, in the order they are tried */
	unsigned nurls;                  /* 1..UPLOAD_URLS_MAX */
	const char *ca_file;             /* NULL: the system's CAs */
	const char *client_cert, *client_key; /* NULL: none */
	bool tls_verify;                 /* verify the peer and its name (default: true) */
	uint64_t connect_timeout_ns;
	uint64_t transfer_timeout_ns;
	uint64_t retry_base_ns;          /* first backoff ceiling (0: 500 ms) */
	uint64_t retry_max_ns;           /* largest backoff ceiling */
	uint32_t batch_records;
	uint64_t batch_interval_ns;
	int compression;                 /* enum batch_compression */
	int64_t mono_to_real_ns;         /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the batch header */
};

struct upload_stats {
	uint64_t batches_acked, records_acked, bytes_sent;
	uint64_t batches_quarantined, records_quarantined;
	uint64_t attempts, retries, http_4xx, http_5xx, net_errors;
	uint64_t failovers;              /* a batch sent on to another URL after a failure */
	const char *url_in_use;          /* where batches go: the URL that took the last, or is tried next */
	const char *failed_url;          /* the last URL that failed (NULL: none since start) */
	uint64_t acked_seq;              /* everything <= this is in the lake */
	uint64_t in_flight_first, in_flight_last; /* 0, 0: none */
	long last_http_status;           /* 0: none yet, or a network error */
	char last_error[128];
	uint64_t last_ack_ns;            /* CLOCK_MONOTONIC of the last acknowledgement (0: none) */
	uint64_t next_attempt_ns;        /* CLOCK_MONOTONIC of the next retry (0: none waiting) */
};

struct uploader;

/* Call once, before any thread or sandbox: libcurl's global set-up. 0 or -1. */
int upload_global_init(void);

/*
 * 0, or -errno with a message. s, k, id and the URLs must outlive the
 * uploader; the chain (last batch number and hash) and the acknowledged
 * position come from the spool's ledger.
 */
int upload_open(struct uploader **out, const struct upload_config *c, struct spool *s,
		const struct batch_secret_key *k, const struct batch_identity *id, uint64_t seed);
void upload_close(struct uploader *u);

/* Seal, send, retry, acknowledge, without blocking. now_ns: CLOCK_MONOTONIC. 0, or -errno when the spool failed. */
int upload_poll(struct uploader *u, uint64_t now_ns);

/* A transfer is under way: the loop should give curl its sockets (upload_wait) rather than sleep. */
bool upload_busy(const struct uploader *u);

/* Wait up to timeout_ms for curl's sockets. */
void upload_wait(struct uploader *u, int timeout_ms);

void upload_get_stats(const struct uploader *u, struct upload_stats *st);

/*
 * Key rotation: once the batch that holds record announce_seq (a
 * TL_KEY_ANNOUNCE of next, signed with the current key) is acknowledged,
 * sign with next and call on_switch(ctx). next must outlive the uploader.
 */
void upload_rotate(struct uploader *u, const struct batch_secret_key *next, uint64_t announce_seq,
		   void (*on_switch)(void *ctx), void *ctx);

/* The backoff ceiling before attempt n (0-based): min(max, base * 2^n). Exposed for tests. */
uint64_t upload_backoff_ceiling(uint64_t base_ns, uint64_t max_ns, unsigned attempt);

/* Retry-After (delta seconds, or an HTTP date relative to now_real_s) in ns; 0 when absent or unreadable. */
uint64_t upload_parse_retry_after(const char *value, int64_t now_real_s);

#endif /* TRACER_DELIVERY_UPLOAD_H */
