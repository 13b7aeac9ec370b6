/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uploader (delivery/upload.c) against a real HTTP server on
 * 127.0.0.1 (libmicrohttpd, in this process, answering what each test
 * asks) and a real spool: a 2xx acknowledges the batch (the spool's ledger
 * moves); a 503 with Retry-After is retried no sooner than it says; a 400
 * quarantines the batch and the next one follows; a refused connection is
 * a network error, retried; the same batch is retried with the same bytes
 * and Idempotency-Key; the ingest's reply is logged printable; the backoff ceiling doubles up to its maximum and
 * Retry-After is read as seconds or as an HTTP date.
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
	unsigned requests;
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

	(void)cls, (void)url, (void)method, (void)version, (void)data;
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
	srv.last_len = b->len;
	key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
	snprintf(srv.last_key, sizeof(srv.last_key), "%s", key ? key : "");
	const char *reply = srv.reply ? srv.reply : "{}";

	r = MHD_create_response_from_buffer(strlen(reply), (void *)(uintptr_t)reply, MHD_RESPMEM_MUST_COPY);
	if (srv.retry_after)
		MHD_add_response_header(r, "Retry-After", srv.retry_after);
	rc = MHD_queue_response(c, srv.status, r);
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
	uc.url = f->url;
	if (spool_open(&f->s, &sc) || upload_open(&f->u, &uc, f->s, &f->key, &f->id, 42)) {
		spool_close(f->s);
		free(f);
		return -1;
	}
	srv.status = 200;
	srv.retry_after = NULL;
	srv.reply = NULL;
	srv.requests = 0;
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
	struct upload_config uc = { .url = "http://127.0.0.1:1/v1/batches", .tls_verify = true,
				    .connect_timeout_ns = SEC, .transfer_timeout_ns = SEC, .retry_base_ns = 50000000ULL,
				    .retry_max_ns = 200000000ULL, .batch_records = 10, .compression = BATCH_COMP_ZLIB };

	upload_close(f->u);
	assert_int_equal(upload_open(&f->u, &uc, f->s, &f->key, &f->id, 7), 0);
	append(f, 3);
	POLL_UNTIL(f, stats(f).net_errors >= 3, 5 * SEC);
	assert_true(stats(f).net_errors >= 3);
	assert_true(stats(f).retries >= 3);
	assert_int_equal(stats(f).acked_seq, 0);
	assert_int_equal(stats(f).last_http_status, 0);
	assert_true(stats(f).last_error[0] != 0);
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
