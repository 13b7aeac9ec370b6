/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Upload: see upload.h. One easy handle, reused so that the connections to
 * the ingests are kept alive; one batch in flight, to one URL at a time.
 *
 * States of the batch in hand:
 *   none       -> sealed    durable records waited long enough, or enough of them
 *   sealed     -> sending   the transfer is added to the multi handle
 *   sending    -> none      acknowledged (2xx) or quarantined (permanent 4xx)
 *   sending    -> waiting   retryable failure: that URL rests; the next one
 *                           (or the first rested) chosen, next_attempt_ns set
 *   waiting    -> sending   next_attempt_ns passed (same bytes, same hash)
 */
#include "upload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "clock.h"
#include "parse.h"

#define READ_BUF_MIN (8u << 20)       /* frames read for one batch; grows for one large frame */
#define BACKLOG_FACTOR 4u             /* records per batch, times batch_records, when a backlog waits */
#define DEFAULT_RETRY_BASE_NS 500000000ULL
#define RETRY_AFTER_MAX_NS (3600ULL * 1000000000ULL)
#define REPLY_KEEP 256                /* bytes of the ingest's reply kept for the log */
#define HEX_HASH (BATCH_HASH_LEN * 2 + 1)

enum batch_state { B_NONE, B_SEALED, B_SENDING, B_WAITING };

/* One of upload_url's URLs, and whether it may be tried now. */
struct target {
	const char *url;
	unsigned fails;               /* in a row: the exponent of its backoff */
	uint64_t rest_until_ns;       /* not tried before this (CLOCK_MONOTONIC) */
};

/* A sealed batch: the frames read for it, its bytes on the wire, its header's numbers, its hash. */
struct slot {
	uint8_t *raw, *wire;
	size_t raw_cap, wire_cap, wire_len;
	struct batch_build b;
	uint8_t hash[BATCH_HASH_LEN];
};

struct uploader {
	struct upload_config c;
	struct spool *spool;
	const struct batch_secret_key *key;
	const struct batch_identity *id;
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	char idem[64 + HEX_HASH];
	/* the batch in hand (cur), and with a backlog the one after it, sealed while cur is in flight */
	enum batch_state state;
	struct slot slots[2];
	struct slot *cur, *next;
	bool has_next;
	uint64_t retry_after_ns;      /* from the last reply's Retry-After */
	/* where batches go: targets[in_use]; acked_by took the last (UPLOAD_URLS_MAX: none yet) */
	struct target targets[UPLOAD_URLS_MAX];
	unsigned ntargets, in_use, acked_by;
	char reply[REPLY_KEEP];
	size_t reply_len;
	/* the chain and progress */
	uint64_t acked_seq;
	uint64_t batch_seq;           /* last acknowledged batch */
	uint8_t prev_hash[BATCH_HASH_LEN];
	uint64_t pending_since_ns;    /* when durable unsent records were first seen (0: none) */
	uint64_t rng;
	/* key rotation: after the batch holding switch_seq is acknowledged, sign with next_key */
	const struct batch_secret_key *next_key;
	uint64_t switch_seq;
	void (*on_switch)(void *ctx);
	void *switch_ctx;
	struct upload_stats st;
};

int upload_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK && batch_crypto_init() == 0 ? 0 : -1;
}

uint64_t upload_backoff_ceiling(uint64_t base_ns, uint64_t max_ns, unsigned attempt)
{
	uint64_t c = base_ns;

	for (unsigned i = 0; i < attempt && c < max_ns; i++)
		c = c > UINT64_MAX / 2 ? UINT64_MAX : c * 2;
	return c < max_ns ? c : max_ns;
}

/* "120" (seconds) or an HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT"). */
uint64_t upload_parse_retry_after(const char *v, int64_t now_real_s)
{
	struct tm tm;
	const char *end;
	size_t n;
	uint64_t s;
	enum parse_error rc;
	time_t t;

	while (*v == ' ' || *v == '\t')
		v++;
	rc = parse_u64_prefix(v, &n, &s);
	if (rc != PARSE_E_SYNTAX) {
		for (end = v + n; *end == ' ' || *end == '\t' || *end == '\r' || *end == '\n';)
			end++;
		if (*end)
			return 0;
		if (rc == PARSE_E_RANGE || s > RETRY_AFTER_MAX_NS / 1000000000ULL)
			return RETRY_AFTER_MAX_NS; /* very long: as long as we ever wait */
		return s * 1000000000ULL;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end)
		return 0;
	t = timegm(&tm);
	if (t == (time_t)-1 || t <= now_real_s)
		return 0;
	if ((uint64_t)(t - now_real_s) > RETRY_AFTER_MAX_NS / 1000000000ULL)
		return RETRY_AFTER_MAX_NS;
	return (uint64_t)(t - now_real_s) * 1000000000ULL;
}

static uint64_t next_random(struct uploader *u)
{
	/* xorshift64*: jitter only, not a secret */
	u->rng ^= u->rng >> 12;
	u->rng ^= u->rng << 25;
	u->rng ^= u->rng >> 27;
	return u->rng * 2685821657736338717ULL;
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct uploader *u = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	char v[64];

	if (len > sizeof(name) - 1 && len - (sizeof(name) - 1) < sizeof(v) && !strncasecmp(buf, name, sizeof(name) - 1)) {
		memcpy(v, buf + sizeof(name) - 1, len - (sizeof(name) - 1));
		v[len - (sizeof(name) - 1)] = 0;
		u->retry_after_ns = upload_parse_retry_after(v, (int64_t)time(NULL));
	}
	return len;
}

/*
 * The start of the ingest's reply, for the log and the status file: the
 * ingest is on the other side of the network, so its bytes are made
 * printable here (a newline in them could forge a log line).
 */
static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct uploader *u = arg;
	size_t len = size * n, room = sizeof(u->reply) - 1 - u->reply_len, keep = len < room ? len : room;

	for (size_t i = 0; i < keep; i++) {
		char c = buf[i];

		u->reply[u->reply_len + i] = c >= 0x20 && c < 0x7f ? c : c == '\n' || c == '\r' || c == '\t' ? ' ' : '?';
	}
	u->reply_len += keep;
	u->reply[u->reply_len] = 0;
	return len; /* read it all, keep the start */
}

static int set_options(struct uploader *u)
{
	const struct upload_config *c = &u->c;
	CURL *e = u->easy;
	int bad = 0;

	bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, u->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_HEADERDATA, u) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, u) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout_ns / 1000000ULL)) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->transfer_timeout_ns / 1000000ULL)) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c->tls_verify ? 1L : 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c->tls_verify ? 2L : 0L) != CURLE_OK;
	if (c->ca_file)
		bad |= curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file) != CURLE_OK;
	if (c->client_cert)
		bad |= curl_easy_setopt(e, CURLOPT_SSLCERT, c->client_cert) != CURLE_OK;
	if (c->client_key)
		bad |= curl_easy_setopt(e, CURLOPT_SSLKEY, c->client_key) != CURLE_OK;
	return bad ? -EINVAL : 0;
}

int upload_open(struct uploader **out, const struct upload_config *c, struct spool *s,
		const struct batch_secret_key *k, const struct batch_identity *id, uint64_t seed)
{
	struct uploader *u;
	struct spool_stats ss;

	if (c->nurls == 0 || c->nurls > UPLOAD_URLS_MAX)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->c = *c;
	for (unsigned i = 0; i < c->nurls; i++)
		u->targets[i].url = c->urls[i];
	u->ntargets = c->nurls;
	u->acked_by = UPLOAD_URLS_MAX;
	if (!u->c.retry_base_ns)
		u->c.retry_base_ns = DEFAULT_RETRY_BASE_NS;
	if (u->c.retry_max_ns < u->c.retry_base_ns)
		u->c.retry_max_ns = u->c.retry_base_ns;
	if (!u->c.batch_records)
		u->c.batch_records = 1;
	u->spool = s;
	u->key = k;
	u->id = id;
	u->rng = seed | 1;
	spool_get_stats(s, &ss);
	u->acked_seq = ss.acked_seq;
	u->batch_seq = ss.ledger.batch_seq;
	memcpy(u->prev_hash, ss.ledger.prev_hash, sizeof(u->prev_hash));
	for (int i = 0; i < 2; i++) {
		struct slot *sl = &u->slots[i];

		sl->raw_cap = READ_BUF_MIN;
		sl->raw = malloc(sl->raw_cap);
		sl->wire_cap = batch_max_wire(sl->raw_cap);
		sl->wire = malloc(sl->wire_cap);
	}
	u->cur = &u->slots[0];
	u->next = &u->slots[1];
	u->multi = curl_multi_init();
	u->easy = curl_easy_init();
	if (!u->slots[0].raw || !u->slots[0].wire || !u->slots[1].raw || !u->slots[1].wire || !u->multi || !u->easy) {
		upload_close(u);
		return -ENOMEM;
	}
	if (set_options(u)) {
		fprintf(stderr, "<3>upload: libcurl refused the upload's options (is this libcurl built with TLS?)\n");
		upload_close(u);
		return -EINVAL;
	}
	*out = u;
	return 0;
}

void upload_close(struct uploader *u)
{
	if (!u)
		return;
	if (u->multi && u->easy && u->state == B_SENDING)
		curl_multi_remove_handle(u->multi, u->easy);
	if (u->easy)
		curl_easy_cleanup(u->easy);
	if (u->multi)
		curl_multi_cleanup(u->multi);
	curl_slist_free_all(u->headers);
	for (int i = 0; i < 2; i++) {
		free(u->slots[i].raw);
		free(u->slots[i].wire);
	}
	free(u);
}

static int grow(uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *n = realloc(*buf, want);

	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = want;
	return 0;
}

/*
 * Read durable records after from_seq and sign them into sl as batch
 * number batch_seq after the batch whose hash is prev. most: records at
 * most. 1: sealed, 0: nothing durable after from_seq, -errno.
 */
static int seal_into(struct uploader *u, struct slot *sl, uint64_t from_seq, uint32_t most, uint64_t batch_seq,
		     const uint8_t prev[BATCH_HASH_LEN])
{
	struct spool_span span;
	int rc;

	for (;;) {
		rc = spool_read(u->spool, from_seq, most, sl->raw, sl->raw_cap, &span);
		if (rc != -ENOBUFS)
			break;
		/* One frame larger than the buffer (a run report): make room for it alone. */
		if (sl->raw_cap >= TR_FRAME_SIZE(TR_FRAME_MAX_PAYLOAD) ||
		    grow(&sl->raw, &sl->raw_cap, TR_FRAME_SIZE(TR_FRAME_MAX_PAYLOAD)))
			return -ENOMEM;
	}
	if (rc <= 0)
		return rc;
	if (batch_max_wire(span.bytes) > sl->wire_cap && grow(&sl->wire, &sl->wire_cap, batch_max_wire(span.bytes)))
		return -ENOMEM;
	sl->b = (struct batch_build){
		.batch_seq = batch_seq,
		.first_seq = span.first_seq,
		.last_seq = span.last_seq,
		.nrecords = span.nrecords,
		.created_ns = real_ns(),
		.mono_to_real_ns = u->c.mono_to_real_ns,
		.compression = u->c.compression,
		.stream = spool_stream(u->spool),
	};
	memcpy(sl->b.prev_hash, prev, sizeof(sl->b.prev_hash));
	rc = batch_seal(u->key, u->id, &sl->b, sl->raw, span.bytes, sl->wire, sl->wire_cap, &sl->wire_len, sl->hash);
	if (rc) {
		fprintf(stderr, "<3>upload: cannot seal records %llu..%llu: %s\n", (unsigned long long)span.first_seq,
			(unsigned long long)span.last_seq, batch_strerror(rc));
		return -EIO;
	}
	return 1;
}

/*
 * With a backlog (the ingest was away, or cannot keep up) the cost per
 * batch - a round trip, the ledger's fsyncs, the lake's commit - is paid
 * for up to BACKLOG_FACTOR times as many records, within the read buffer.
 */
static uint32_t batch_size(const struct uploader *u, uint64_t after_seq)
{
	uint64_t durable = spool_durable_seq(u->spool), backlog = durable > after_seq ? durable - after_seq : 0;

	return backlog >= 2ULL * u->c.batch_records && u->c.batch_records <= UINT32_MAX / BACKLOG_FACTOR ?
		       u->c.batch_records * BACKLOG_FACTOR : u->c.batch_records;
}

/* The next batch after the acknowledged ones, or the one sealed ahead. 1: sealed, 0: nothing, -errno. */
static int seal_next(struct uploader *u)
{
	int rc;

	if (u->has_next) {
		struct slot *t = u->cur;

		u->cur = u->next;
		u->next = t;
		u->has_next = false;
		rc = 1;
	} else {
		rc = seal_into(u, u->cur, u->acked_seq, batch_size(u, u->acked_seq), u->batch_seq + 1, u->prev_hash);
	}
	if (rc == 1)
		u->state = B_SEALED;
	return rc;
}

/*
 * While the batch in hand is with the ingest, sign the one after it - only
 * with a backlog, so that batching at low rates stays as configured.
 */
static int seal_ahead(struct uploader *u)
{
	uint64_t after = u->cur->b.last_seq;
	int rc;

	if (u->has_next || spool_durable_seq(u->spool) < after + 2ULL * u->c.batch_records)
		return 0;
	rc = seal_into(u, u->next, after, batch_size(u, after), u->cur->b.batch_seq + 1, u->cur->hash);
	if (rc < 0)
		return rc;
	u->has_next = rc == 1;
	return 0;
}

static int start_transfer(struct uploader *u)
{
	char hex[HEX_HASH];
	struct curl_slist *h;

	sodium_bin2hex(hex, sizeof(hex), u->cur->hash, sizeof(u->cur->hash));
	snprintf(u->idem, sizeof(u->idem), "Idempotency-Key: %s", hex);
	/* This batch's headers; "Expect:" turns off the 100-continue round trip. */
	curl_slist_free_all(u->headers);
	u->headers = NULL;
	h = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	if (h)
		u->headers = h;
	h = h ? curl_slist_append(h, "Expect:") : NULL;
	h = h ? curl_slist_append(h, u->idem) : NULL;
	if (!h)
		return -ENOMEM;
	u->reply_len = 0;
	u->reply[0] = 0;
	u->retry_after_ns = 0;
	u->errbuf[0] = 0;
	if (curl_easy_setopt(u->easy, CURLOPT_URL, u->targets[u->in_use].url) != CURLE_OK ||
	    curl_easy_setopt(u->easy, CURLOPT_HTTPHEADER, u->headers) != CURLE_OK ||
	    curl_easy_setopt(u->easy, CURLOPT_POSTFIELDS, u->cur->wire) != CURLE_OK ||
	    curl_easy_setopt(u->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)u->cur->wire_len) != CURLE_OK ||
	    curl_multi_add_handle(u->multi, u->easy) != CURLM_OK)
		return -EIO;
	u->state = B_SENDING;
	u->st.attempts++;
	u->st.in_flight_first = u->cur->b.first_seq;
	u->st.in_flight_last = u->cur->b.last_seq;
	return 0;
}

/*
 * The URL in use did not take the batch: it rests for its backoff (at
 * least Retry-After), and the batch goes at once to the next URL whose
 * rest is over, in the list's order, or else waits for the one whose rest
 * ends first. With one URL this is a retry of it after its backoff.
 */
static void fail_over(struct uploader *u, uint64_t now_ns)
{
	struct target *t = &u->targets[u->in_use];
	uint64_t ceiling = upload_backoff_ceiling(u->c.retry_base_ns, u->c.retry_max_ns, t->fails);
	uint64_t delay = next_random(u) % (ceiling + 1); /* full jitter */
	unsigned next = u->in_use;

	if (delay < u->retry_after_ns)
		delay = u->retry_after_ns;
	t->fails++;
	t->rest_until_ns = now_ns + delay;
	u->st.failed_url = t->url;
	for (unsigned i = 1; i <= u->ntargets; i++) {
		unsigned j = (u->in_use + i) % u->ntargets;

		if (u->targets[j].rest_until_ns <= now_ns) {
			next = j;
			break;
		}
		if (u->targets[j].rest_until_ns < u->targets[next].rest_until_ns)
			next = j;
	}
	u->st.failovers += next != u->in_use;
	u->in_use = next;
	u->st.retries++;
	u->st.next_attempt_ns = u->targets[next].rest_until_ns > now_ns ? u->targets[next].rest_until_ns : now_ns;
	u->state = B_WAITING;
}

/*
 * A retryable failure at the URL in use, logged the first time and every
 * 16th in a row (a URL down for hours would fill the log), then failed over.
 * why: a hint for the log, or "".
 */
static void retry(struct uploader *u, uint64_t now_ns, const char *why)
{
	const struct target *from = &u->targets[u->in_use];
	bool say = (from->fails & 15) == 0;

	fail_over(u, now_ns);
	if (!say)
		return;
	if (&u->targets[u->in_use] == from)
		fprintf(stderr, "<4>upload: records %llu..%llu to %s: %s%s (retrying)\n",
			(unsigned long long)u->cur->b.first_seq, (unsigned long long)u->cur->b.last_seq, from->url,
			u->st.last_error, why);
	else
		fprintf(stderr, "<4>upload: records %llu..%llu to %s: %s%s (trying %s)\n",
			(unsigned long long)u->cur->b.first_seq, (unsigned long long)u->cur->b.last_seq, from->url,
			u->st.last_error, why, u->targets[u->in_use].url);
}

void upload_rotate(struct uploader *u, const struct batch_secret_key *next, uint64_t announce_seq,
		   void (*on_switch)(void *ctx), void *ctx)
{
	u->next_key = next;
	u->switch_seq = announce_seq;
	u->on_switch = on_switch;
	u->switch_ctx = ctx;
}

/* The lake has the announcement: it knows the new key from now on. */
static void maybe_switch_key(struct uploader *u)
{
	if (!u->next_key || u->switch_seq < u->cur->b.first_seq || u->switch_seq > u->cur->b.last_seq)
		return;
	u->key = u->next_key;
	u->next_key = NULL;
	fprintf(stderr, "<5>upload: the lake has the new key's announcement: signing with it from now on\n");
	if (u->on_switch)
		u->on_switch(u->switch_ctx);
}

static void done_batch(struct uploader *u, uint64_t now_ns)
{
	struct target *t = &u->targets[u->in_use];

	t->fails = 0;
	if (u->ntargets > 1 && u->acked_by != u->in_use)
		fprintf(stderr, "<5>upload: %s took records %llu..%llu: batches go there from now on\n", t->url,
			(unsigned long long)u->cur->b.first_seq, (unsigned long long)u->cur->b.last_seq);
	u->acked_by = u->in_use;
	maybe_switch_key(u);
	u->acked_seq = u->cur->b.last_seq;
	u->batch_seq = u->cur->b.batch_seq;
	memcpy(u->prev_hash, u->cur->hash, sizeof(u->prev_hash));
	u->state = B_NONE;
	u->pending_since_ns = 0;
	u->st.acked_seq = u->acked_seq;
	u->st.in_flight_first = u->st.in_flight_last = 0;
	u->st.next_attempt_ns = 0;
	u->st.last_ack_ns = now_ns;
}

/* The ingest answered, or the transfer failed. 0, or -errno from the spool. */
static int finish_transfer(struct uploader *u, CURLcode res, uint64_t now_ns)
{
	long status = 0;
	int rc;

	curl_multi_remove_handle(u->multi, u->easy);
	if (res != CURLE_OK) {
		u->st.net_errors++;
		u->st.last_http_status = 0;
		snprintf(u->st.last_error, sizeof(u->st.last_error), "%.120s", u->errbuf[0] ? u->errbuf : curl_easy_strerror(res));
		retry(u, now_ns, "");
		return 0;
	}
	curl_easy_getinfo(u->easy, CURLINFO_RESPONSE_CODE, &status);
	u->st.last_http_status = status;
	if (status >= 200 && status < 300) {
		rc = spool_ack(u->spool, u->cur->b.last_seq, u->cur->b.batch_seq, u->cur->hash);
		if (rc)
			return rc;
		u->st.batches_acked++;
		u->st.records_acked += u->cur->b.nrecords;
		u->st.bytes_sent += u->cur->wire_len;
		u->st.last_error[0] = 0;
		done_batch(u, now_ns);
		return 0;
	}
	snprintf(u->st.last_error, sizeof(u->st.last_error), "HTTP %ld: %.100s", status, u->reply);
	if (status >= 400 && status < 500 && status != 408 && status != 425 && status != 429) {
		u->st.http_4xx++;
		u->targets[u->in_use].fails = 0; /* it answered: the batch is at fault, not the URL */
		fprintf(stderr, "<3>upload: %s refused records %llu..%llu for good (%s): quarantined in the spool, "
				"counted\n", u->targets[u->in_use].url, (unsigned long long)u->cur->b.first_seq,
			(unsigned long long)u->cur->b.last_seq, u->st.last_error);
		rc = spool_quarantine(u->spool, u->cur->wire, u->cur->wire_len, u->cur->b.batch_seq, u->cur->b.first_seq, u->cur->b.last_seq,
				      u->cur->b.nrecords);
		if (rc)
			return rc;
		u->st.batches_quarantined++;
		u->st.records_quarantined += u->cur->b.nrecords;
		if (u->next_key && u->switch_seq >= u->cur->b.first_seq && u->switch_seq <= u->cur->b.last_seq)
			fprintf(stderr, "<3>upload: the batch announcing the new key was refused: the old key stays in "
					"use (restart the processor to announce it again)\n");
		/* The chain goes on from the last batch the lake has: what was sealed after this one is not it. */
		u->acked_seq = u->cur->b.last_seq;
		u->has_next = false;
		u->state = B_NONE;
		u->pending_since_ns = 0;
		u->st.acked_seq = u->acked_seq;
		u->st.in_flight_first = u->st.in_flight_last = 0;
		return 0;
	}
	if (status >= 500)
		u->st.http_5xx++;
	else
		u->st.http_4xx += status >= 400;
	retry(u, now_ns, status < 400 ? " - is upload_url the ingest's /v1/batches?" : "");
	return 0;
}

static bool batch_due(struct uploader *u, uint64_t now_ns)
{
	uint64_t durable = spool_durable_seq(u->spool);

	if (durable <= u->acked_seq) {
		u->pending_since_ns = 0;
		return false;
	}
	if (!u->pending_since_ns)
		u->pending_since_ns = now_ns;
	return durable - u->acked_seq >= u->c.batch_records || now_ns - u->pending_since_ns >= u->c.batch_interval_ns;
}

static int poll_once(struct uploader *u, uint64_t now_ns)
{
	int running = 0, left, rc;
	CURLMsg *m;

	if (u->state == B_NONE && batch_due(u, now_ns)) {
		rc = seal_next(u);
		if (rc < 0)
			return rc;
	}
	if (u->state == B_WAITING && now_ns >= u->st.next_attempt_ns)
		u->state = B_SEALED;
	if (u->state == B_SEALED) {
		rc = start_transfer(u);
		if (rc) {
			fprintf(stderr, "<3>upload: cannot start a transfer: %s\n", strerror(-rc));
			fail_over(u, now_ns);
		}
	}
	if (u->state != B_SENDING)
		return 0;
	curl_multi_perform(u->multi, &running);
	rc = seal_ahead(u); /* the request is out: sign the next batch while the ingest stores this one */
	if (rc)
		return rc;
	while ((m = curl_multi_info_read(u->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		rc = finish_transfer(u, m->data.result, now_ns);
		if (rc)
			return rc;
	}
	return 0;
}

int upload_poll(struct uploader *u, uint64_t now_ns)
{
	/*
	 * An acknowledgement frees the way for the next batch, a failure sends
	 * the batch to the next URL: now, not at the next loop turn.
	 */
	for (int round = 0; round < 4; round++) {
		uint64_t acked = u->st.batches_acked + u->st.batches_quarantined;
		int rc = poll_once(u, now_ns);

		if (rc || (u->st.batches_acked + u->st.batches_quarantined == acked &&
			   !(u->state == B_WAITING && u->st.next_attempt_ns <= now_ns)))
			return rc;
	}
	return 0;
}

bool upload_busy(const struct uploader *u)
{
	return u->state == B_SENDING;
}

void upload_wait(struct uploader *u, int timeout_ms)
{
	int n;

	curl_multi_poll(u->multi, NULL, 0, timeout_ms, &n);
}

void upload_get_stats(const struct uploader *u, struct upload_stats *st)
{
	*st = u->st;
	st->acked_seq = u->acked_seq;
	st->url_in_use = u->targets[u->in_use].url;
}
