/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader (delivery/upload.c) against a real HTTP server on
 * 127.0.0.1 (libmicrohttpd, in this process, answering what each test
 * asks) and a real spool: a 2xx acknowledges the batch (the spool's ledger
 * moves); a 503 with Retry-After is retried no sooner than it says; a 400
 * quarantines the batch and the next one follows; a refused connection is
 * a network error, retried; the same batch is retried with the same bytes
 * and Idempotency-Key; the ingest's reply is logged printable; the backoff ceiling doubles up to its maximum and
 * Retry-After is read as seconds or as an HTTP date. With several URLs (the
 * server's paths stand for ingests): a refused connection or a 503 sends
 * the same bytes to the next URL at once, which then keeps the batches; a
 * 400 is not sent elsewhere; with every URL failing each rests in turn.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <microhttpd.h>

#include "ring.h"
#include "skip.h"
#include "spool.h"
#include "upload.h"

#define SEC 1000000000ULL

/* What the server answers next, and what it saw. */
static struct {
	struct MHD_Daemon *d;
	uint16_t port;
	unsigned status;           /* to answer */
	const char *retry_after;   /* header to add, or NULL */
	const char *reply;         /* body to answer with, or NULL: "{}" */
	const char *down_path;     /* requests to this path get 503 and Retry-After: 60, whatever status says */
	unsigned requests;
	unsigned to_a, to_b;       /* requests to /a and to /b */
	char last_key[128];        /* Idempotency-Key of the last request */
	size_t last_len;
} srv;

struct body {
	size_t len;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *data, size_t *size, void **state)
{
	struct MHD_Response *r;
	struct body *b = *state;
	const char *key;
	enum MHD_Result rc;

	(void)cls, (void)method, (void)version, (void)data;
	if (!b) {
		*state = calloc(1, sizeof(struct body));
		return *state ? MHD_YES : MHD_NO;
	}
	if (*size) {
		b->len += *size;
		*size = 0;
		return MHD_YES;
	}
	srv.requests++;
	srv.to_a += !strcmp(url, "/a");
	srv.to_b += !strcmp(url, "/b");
	srv.last_len = b->len;
	key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
	snprintf(srv.last_key, sizeof(srv.last_key), "%s", key ? key : "");
	const char *reply = srv.reply ? srv.reply : "{}";

	bool down = srv.down_path && !strcmp(url, srv.down_path);

	r = MHD_create_response_from_buffer(strlen(reply), (void *)(uintptr_t)reply, MHD_RESPMEM_MUST_COPY);
	if (srv.retry_after || down)
		MHD_add_response_header(r, "Retry-After", down ? "60" : srv.retry_after);
	rc = MHD_queue_response(c, down ? 503 : srv.status, r);
	MHD_destroy_response(r);
	return rc;
}

static void done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	free(*state);
	*state = NULL;
}

struct fix {
	char dir[64], spool_dir[96], url[96];
	struct spool *s;
	struct uploader *u;
	struct batch_secret_key key;
	struct batch_identity id;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct spool_config sc = { 0 };
	struct upload_config uc = {
		.tls_verify = true, .connect_timeout_ns = 2 * SEC, .transfer_timeout_ns = 5 * SEC,
		.retry_base_ns = 100000000ULL, .retry_max_ns = 400000000ULL, .batch_records = 10,
		.batch_interval_ns = 0, .compression = BATCH_COMP_ZLIB,
	};

	if (!f || upload_global_init() ||
	    (snprintf(f->dir, sizeof(f->dir), "/tmp/tracer-test-upload.XXXXXX"), !mkdtemp(f->dir))) {
		free(f);
		return -1;
	}
	snprintf(f->spool_dir, sizeof(f->spool_dir), "%s/spool", f->dir);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u/v1/batches", srv.port);
	sc.dir = f->spool_dir;
	sc.fsync_interval_ns = 1000000ULL;
	batch_key_generate(&f->key);
	uc.urls[0] = f->url;
	uc.nurls = 1;
	if (spool_open(&f->s, &sc) || upload_open(&f->u, &uc, f->s, &f->key, &f->id, 42)) {
		spool_close(f->s);
		free(f);
		return -1;
	}
	srv.status = 200;
	srv.retry_after = NULL;
	srv.reply = NULL;
	srv.down_path = NULL;
	srv.requests = srv.to_a = srv.to_b = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	char cmd[128];

	upload_close(f->u);
	spool_close(f->s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void append(struct fix *f, unsigned n)
{
	uint64_t seq;

	for (unsigned i = 0; i < n; i++)
		assert_int_equal(spool_append(f->s, 21, 0, 1, 64 * (i + 1), "a sample", 8, &seq), 0);
	assert_int_equal(spool_sync(f->s), 0);
}

/* Drive the uploader until cond holds, for at most limit_ns. */
#define POLL_UNTIL(f, cond, limit_ns)                                                 \
	do {                                                                          \
		uint64_t end_ = ring_now_ns() + (limit_ns);                          \
		while (!(cond) && ring_now_ns() < end_) {                            \
			assert_int_equal(upload_poll((f)->u, ring_now_ns()), 0);     \
			upload_wait((f)->u, 5);                                       \
		}                                                                     \
	} while (0)

static struct upload_stats stats(const struct fix *f)
{
	struct upload_stats st;

	upload_get_stats(f->u, &st);
	return st;
}

static void acknowledged_batch_moves_the_ledger(void **state)
{
	struct fix *f = *state;
	struct spool_stats ss;

	append(f, 25);
	POLL_UNTIL(f, stats(f).acked_seq == 25, 5 * SEC);
	assert_int_equal(stats(f).acked_seq, 25);
	/* 25 waiting is a backlog (>= 2 x batch_records): one batch of up to 4 x 10 takes them all */
	assert_int_equal(stats(f).batches_acked, 1);
	assert_int_equal(stats(f).last_http_status, 200);
	spool_get_stats(f->s, &ss);
	assert_int_equal(ss.acked_seq, 25);
	assert_int_equal(ss.ledger.batch_seq, 1);
	append(f, 5); /* below the backlog: batch_interval 0 sends what waits */
	POLL_UNTIL(f, stats(f).acked_seq == 30, 5 * SEC);
	assert_int_equal(stats(f).batches_acked, 2);
	assert_int_equal(strncmp(srv.last_key, "", 1) != 0, 1); /* an Idempotency-Key was sent */
	assert_int_equal(strlen(srv.last_key), 64);
}

static void retry_after_is_honoured_and_the_same_bytes_are_sent_again(void **state)
{
	struct fix *f = *state;
	uint64_t t0;
	char first_key[128];
	size_t first_len;

	srv.status = 503;
	srv.retry_after = "2";
	append(f, 5);
	t0 = ring_now_ns();
	POLL_UNTIL(f, srv.requests >= 1 && stats(f).retries >= 1, 5 * SEC);
	assert_int_equal(stats(f).http_5xx, 1);
	assert_true(stats(f).next_attempt_ns >= t0 + 2 * SEC - 100000000ULL);
	snprintf(first_key, sizeof(first_key), "%s", srv.last_key);
	first_len = srv.last_len;
	srv.status = 200;
	srv.retry_after = NULL;
	POLL_UNTIL(f, stats(f).acked_seq == 5, 5 * SEC);
	assert_int_equal(stats(f).acked_seq, 5);
	assert_true(ring_now_ns() - t0 >= 2 * SEC - 100000000ULL); /* not before Retry-After */
	assert_string_equal(srv.last_key, first_key);
	assert_int_equal(srv.last_len, first_len);
}

static void permanent_refusal_quarantines_and_the_next_batch_follows(void **state)
{
	struct fix *f = *state;
	struct spool_stats ss;

	srv.status = 400;
	append(f, 10);
	POLL_UNTIL(f, stats(f).batches_quarantined == 1, 5 * SEC);
	assert_int_equal(stats(f).batches_quarantined, 1);
	assert_int_equal(stats(f).records_quarantined, 10);
	spool_get_stats(f->s, &ss);
	assert_int_equal(ss.ledger.quarantined_batches, 1);
	assert_int_equal(ss.acked_seq, 10);
	srv.status = 200;
	append(f, 10);
	POLL_UNTIL(f, stats(f).acked_seq == 20, 5 * SEC);
	assert_int_equal(stats(f).batches_acked, 1);
}

/* The ingest's reply reaches the log and the status file printable: its newlines cannot forge a log line. */
static void refusal_text_is_kept_printable(void **state)
{
	struct fix *f = *state;
	struct upload_stats st;
	const char *e = st.last_error;

	srv.status = 400;
	srv.reply = "{\"status\":\"refused\"}\n<0>forged line\x1b[2J\r\n";
	append(f, 3);
	POLL_UNTIL(f, stats(f).batches_quarantined == 1, 5 * SEC);
	st = stats(f);
	assert_non_null(strstr(e, "HTTP 400: {\"status\":\"refused\"} <0>forged line?[2J"));
	for (size_t i = 0; e[i]; i++)
		assert_true(e[i] >= 0x20 && e[i] < 0x7f);
}

static void refused_connection_is_a_network_error_retried_with_backoff(void **state)
{
	struct fix *f = *state;
	struct upload_config uc = { .urls = { "http://127.0.0.1:1/v1/batches" }, .nurls = 1, .tls_verify = true,
				    .connect_timeout_ns = SEC, .transfer_timeout_ns = SEC, .retry_base_ns = 50000000ULL,
				    .retry_max_ns = 200000000ULL, .batch_records = 10, .compression = BATCH_COMP_ZLIB };

	uint64_t seen = 0, due = 0, end;

	upload_close(f->u);
	assert_int_equal(upload_open(&f->u, &uc, f->s, &f->key, &f->id, 7), 0);
	append(f, 3);
	/* Each failure schedules the next try within its backoff ceiling (50, 100, 200, 200 ms), after now,
	 * and the next try waits for it: a retry at once, or before it was due, fails here. */
	end = ring_now_ns() + 5 * SEC;
	while (seen < 4 && ring_now_ns() < end) {
		uint64_t now = ring_now_ns();
		struct upload_stats st;

		assert_int_equal(upload_poll(f->u, now), 0);
		upload_wait(f->u, 5);
		st = stats(f);
		if (st.net_errors == seen)
			continue;
		assert_int_equal(st.net_errors, seen + 1);
		assert_true(now >= due);
		assert_true(st.next_attempt_ns > now);
		assert_true(st.next_attempt_ns <= now + upload_backoff_ceiling(uc.retry_base_ns, uc.retry_max_ns,
										(unsigned)seen));
		due = st.next_attempt_ns;
		seen++;
	}
	assert_int_equal(seen, 4);
	assert_true(stats(f).retries >= 3);
	assert_int_equal(stats(f).acked_seq, 0);
	assert_int_equal(stats(f).last_http_status, 0);
	assert_true(stats(f).last_error[0] != 0);
}

/* The uploader reopened on the spool with urls (a base of 50 ms, at most 200 ms, between tries of one URL). */
static void reopen(struct fix *f, const char *const *urls, unsigned n)
{
	struct upload_config uc = { .nurls = n, .tls_verify = true, .connect_timeout_ns = SEC,
				    .transfer_timeout_ns = SEC, .retry_base_ns = 50000000ULL, .retry_max_ns = 200000000ULL,
				    .batch_records = 10, .compression = BATCH_COMP_ZLIB };

	for (unsigned i = 0; i < n; i++)
		uc.urls[i] = urls[i];
	upload_close(f->u);
	assert_int_equal(upload_open(&f->u, &uc, f->s, &f->key, &f->id, 7), 0);
}

static void a_refused_connection_sends_the_batch_to_the_next_url_which_keeps_the_batches(void **state)
{
	struct fix *f = *state;
	char b[96];
	const char *urls[] = { "http://127.0.0.1:1/v1/batches", b };

	snprintf(b, sizeof(b), "http://127.0.0.1:%u/b", srv.port);
	reopen(f, urls, 2);
	assert_string_equal(stats(f).url_in_use, urls[0]);
	append(f, 5);
	POLL_UNTIL(f, stats(f).acked_seq == 5, 5 * SEC);
	assert_int_equal(stats(f).acked_seq, 5);
	assert_int_equal(stats(f).net_errors, 1);
	assert_int_equal(stats(f).failovers, 1);
	assert_string_equal(stats(f).failed_url, urls[0]);
	assert_string_equal(stats(f).url_in_use, b);
	/* The URL that works keeps the batches: the one that failed is not tried again. */
	for (unsigned i = 0; i < 3; i++) {
		append(f, 5);
		POLL_UNTIL(f, stats(f).acked_seq == 10 + 5 * i, 5 * SEC);
	}
	assert_int_equal(stats(f).acked_seq, 20);
	assert_int_equal(stats(f).batches_acked, 4);
	assert_int_equal(srv.to_b, 4);
	assert_int_equal(stats(f).net_errors, 1);
	assert_int_equal(stats(f).attempts, 5);
}

static void a_503_sends_the_same_bytes_to_the_next_url_at_once(void **state)
{
	struct fix *f = *state;
	char a[96], b[96];
	const char *urls[] = { a, b };
	uint64_t t0;

	snprintf(a, sizeof(a), "http://127.0.0.1:%u/a", srv.port);
	snprintf(b, sizeof(b), "http://127.0.0.1:%u/b", srv.port);
	reopen(f, urls, 2);
	srv.down_path = "/a"; /* Retry-After: 60 */
	append(f, 5);
	t0 = ring_now_ns();
	POLL_UNTIL(f, stats(f).acked_seq == 5, 5 * SEC);
	assert_int_equal(stats(f).acked_seq, 5);
	assert_true(ring_now_ns() - t0 < 10 * SEC); /* not after /a's Retry-After: at once, at /b */
	assert_int_equal(srv.to_a, 1);
	assert_int_equal(srv.to_b, 1);
	assert_int_equal(stats(f).http_5xx, 1);
	assert_int_equal(stats(f).failovers, 1);
	assert_int_equal(stats(f).batches_acked, 1);
	assert_string_equal(stats(f).url_in_use, b);
}

/* A batch refused for good is refused by every ingest of the lake: quarantined, not sent to the next URL. */
static void a_permanent_refusal_is_not_sent_to_the_next_url(void **state)
{
	struct fix *f = *state;
	char a[96], b[96];
	const char *urls[] = { a, b };

	snprintf(a, sizeof(a), "http://127.0.0.1:%u/a", srv.port);
	snprintf(b, sizeof(b), "http://127.0.0.1:%u/b", srv.port);
	reopen(f, urls, 2);
	srv.status = 403;
	append(f, 5);
	POLL_UNTIL(f, stats(f).batches_quarantined == 1, 5 * SEC);
	assert_int_equal(stats(f).batches_quarantined, 1);
	assert_int_equal(srv.to_a, 1);
	assert_int_equal(srv.to_b, 0);
	assert_int_equal(stats(f).failovers, 0);
	assert_string_equal(stats(f).url_in_use, a);
}

/* Every URL failing: each rests for its own backoff, and the batch goes round them; none is abandoned. */
static void with_every_url_down_each_is_retried_in_turn(void **state)
{
	struct fix *f = *state;
	char a[96], b[96];
	const char *urls[] = { a, b };

	snprintf(a, sizeof(a), "http://127.0.0.1:%u/a", srv.port);
	snprintf(b, sizeof(b), "http://127.0.0.1:%u/b", srv.port);
	reopen(f, urls, 2);
	srv.status = 503;
	append(f, 3);
	POLL_UNTIL(f, srv.to_a >= 3 && srv.to_b >= 3, 5 * SEC);
	assert_true(srv.to_a >= 3 && srv.to_b >= 3);
	assert_true(stats(f).failovers >= 1);
	assert_int_equal(stats(f).acked_seq, 0);
	srv.status = 200;
	POLL_UNTIL(f, stats(f).acked_seq == 3, 5 * SEC);
	assert_int_equal(stats(f).acked_seq, 3);
	assert_int_equal(stats(f).batches_acked, 1);
}

static void urls_are_one_to_eight(void **state)
{
	struct fix *f = *state;
	struct uploader *u = NULL;
	struct upload_config uc = { .nurls = 0, .batch_records = 10, .compression = BATCH_COMP_ZLIB };

	assert_int_equal(upload_open(&u, &uc, f->s, &f->key, &f->id, 7), -EINVAL);
	uc.nurls = UPLOAD_URLS_MAX + 1;
	assert_int_equal(upload_open(&u, &uc, f->s, &f->key, &f->id, 7), -EINVAL);
	assert_null(u);
}

static void backoff_ceiling_doubles_up_to_its_maximum(void **state)
{
	(void)state;
	assert_int_equal(upload_backoff_ceiling(100, 1000, 0), 100);
	assert_int_equal(upload_backoff_ceiling(100, 1000, 1), 200);
	assert_int_equal(upload_backoff_ceiling(100, 1000, 3), 800);
	assert_int_equal(upload_backoff_ceiling(100, 1000, 4), 1000);
	assert_int_equal(upload_backoff_ceiling(100, 1000, 200), 1000);
	assert_int_equal(upload_backoff_ceiling(UINT64_MAX / 2 + 1, UINT64_MAX, 5), UINT64_MAX);
}

static void retry_after_reads_seconds_and_http_dates(void **state)
{
	(void)state;
	assert_int_equal(upload_parse_retry_after(" 120\r\n", 0), 120 * SEC);
	assert_int_equal(upload_parse_retry_after("0", 0), 0);
	assert_int_equal(upload_parse_retry_after("99999999999999999999", 0), 3600 * SEC); /* capped */
	assert_int_equal(upload_parse_retry_after("12abc", 0), 0);
	assert_int_equal(upload_parse_retry_after("soon", 0), 0);
	/* Wed, 21 Oct 2026 07:28:00 GMT is 1792567680 */
	assert_int_equal(upload_parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT\r\n", 1792567680 - 30), 30 * SEC);
	assert_int_equal(upload_parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT", 1792567680 + 5), 0); /* past */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(acknowledged_batch_moves_the_ledger, setup, teardown),
		cmocka_unit_test_setup_teardown(retry_after_is_honoured_and_the_same_bytes_are_sent_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(permanent_refusal_quarantines_and_the_next_batch_follows, setup,
						teardown),
		cmocka_unit_test_setup_teardown(refusal_text_is_kept_printable, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_connection_is_a_network_error_retried_with_backoff, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_refused_connection_sends_the_batch_to_the_next_url_which_keeps_the_batches,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_503_sends_the_same_bytes_to_the_next_url_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(a_permanent_refusal_is_not_sent_to_the_next_url, setup, teardown),
		cmocka_unit_test_setup_teardown(with_every_url_down_each_is_retried_in_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(urls_are_one_to_eight, setup, teardown),
		cmocka_unit_test(backoff_ceiling_doubles_up_to_its_maximum),
		cmocka_unit_test(retry_after_reads_seconds_and_http_dates),
	};
	const union MHD_DaemonInfo *info;
	int rc;

	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	srv.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, NULL,
				 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				 MHD_OPTION_END);
	if (!srv.d)
		return test_skip_all("cannot start an HTTP server on a free port of 127.0.0.1");
	info = MHD_get_daemon_info(srv.d, MHD_DAEMON_INFO_BIND_PORT);
	srv.port = info ? info->port : 0;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	MHD_stop_daemon(srv.d);
	return rc;
}
