/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-ingest's HTTP side, for real: the server on 127.0.0.1 (port 0),
 * a real lake file, batches sealed with common/batch.c and POSTed with
 * libcurl. A good batch is stored (200); the same batch again is a
 * duplicate (200) and changes nothing; a changed byte is 400; a key not
 * enrolled, or enrolled for another host, is 403; a body over the limit
 * is 413 whether its length is announced or streamed; a client that
 * stalls is cut off by the timeout while others are served; other paths
 * and methods are 404 and 405; reloaded and announced keys take effect
 * at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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
#include <curl/curl.h>
#include <sodium.h>

#include "ingest.h"
#include "keys.h"
#include "server.h"
#include "store.h"
#include "test_ingest_helpers.h"

#define MAX_BODY (1u << 20)
#define TIMEOUT_S 1

/* One server for the whole file; each test uses its own host ids. */
static struct {
	char dir[64], db[96];
	struct store *st;
	struct ingest ig;
	struct server *srv;
	char base[64];
	struct batch_secret_key bound_key;   /* enrolled for host 1 only */
	struct batch_secret_key any_key;     /* enrolled for any host */
	struct batch_secret_key stranger;    /* not enrolled */
	uint8_t host1[BATCH_HOST_ID_LEN];
} g;

struct response {
	long status;
	char body[2048];
	size_t len;
};

/* ---- keys ---------------------------------------------------------------- */

static void keys_text(char *out, size_t outlen, const struct batch_secret_key *extra)
{
	char a[256], b[256], c[256] = "";

	assert_int_equal(batch_public_line(&g.bound_key, g.host1, a, sizeof(a)), 0);
	assert_int_equal(batch_public_line(&g.any_key, NULL, b, sizeof(b)), 0);
	if (extra)
		assert_int_equal(batch_public_line(extra, NULL, c, sizeof(c)), 0);
	snprintf(out, outlen, "# enrolled hosts\n%s\n\n%s\n%s\n", a, b, c);
}

static int setup(void **state)
{
	struct server_config c = { .listen = "127.0.0.1:0", .max_body = MAX_BODY, .timeout_s = TIMEOUT_S };
	struct keyring kr;
	char err[512], text[1024];

	(void)state;
	if (batch_crypto_init() || curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	snprintf(g.dir, sizeof(g.dir), "/tmp/test_ingest_http.XXXXXX");
	if (!mkdtemp(g.dir))
		return -1;
	snprintf(g.db, sizeof(g.db), "%s/lake.db", g.dir);
	batch_key_generate(&g.bound_key);
	batch_key_generate(&g.any_key);
	batch_key_generate(&g.stranger);
	host_id_of(g.host1, 1);
	keys_text(text, sizeof(text), NULL);
	if (keys_parse(&kr, "keys", text, strlen(text), err, sizeof(err)) || kr.n != 2) {
		fprintf(stderr, "keys_parse: %s\n", err);
		return -1;
	}
	if (store_open(&g.st, g.db, false, err, sizeof(err)) || ingest_init(&g.ig, g.st, &kr)) {
		fprintf(stderr, "store_open: %s\n", err);
		return -1;
	}
	if (server_start(&g.srv, &c, &g.ig, err, sizeof(err))) {
		fprintf(stderr, "server_start: %s\n", err);
		return -1;
	}
	snprintf(g.base, sizeof(g.base), "http://127.0.0.1:%u", server_port(g.srv));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	server_stop(g.srv);
	ingest_destroy(&g.ig);
	store_close(g.st);
	rm_tree(g.dir);
	curl_global_cleanup();
	return 0;
}

/* ---- requests --------------------------------------------------------------- */

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
	struct response *r = ctx;
	size_t k = size * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, p, k < room ? k : room);
	r->len += k < room ? k : room;
	r->body[r->len] = 0;
	return k;
}

struct upload {
	const uint8_t *p;
	size_t len, off;
};

static size_t feed(char *buf, size_t size, size_t n, void *ctx)
{
	struct upload *u = ctx;
	size_t k = size * n;

	if (k > u->len - u->off)
		k = u->len - u->off;
	memcpy(buf, u->p + u->off, k);
	u->off += k;
	return k;
}

/*
 * method: "GET", "POST", ... path: sent as it is (curl would squash "/../").
 * body NULL: none. chunked: stream it without a Content-Length. idem: an
 * Idempotency-Key header or NULL. CURLcode.
 */
static int request(const char *method, const char *path, const void *body, size_t len, bool chunked,
		   const char *idem, struct response *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct upload u = { body, len, 0 };
	char url[128], hdr[200];
	int rc;

	assert_non_null(c);
	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "%s%s", g.base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	h = curl_slist_append(h, "Content-Type: application/octet-stream");
	if (idem) {
		snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", idem);
		h = curl_slist_append(h, hdr);
	}
	if (chunked) {
		h = curl_slist_append(h, "Transfer-Encoding: chunked");
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, feed);
		curl_easy_setopt(c, CURLOPT_READDATA, &u);
	} else if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "POST") || !body)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc = (int)curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc;
}

static long post(const struct sealed *s, struct response *r)
{
	assert_int_equal(request("POST", "/v1/batches", s->wire, s->len, false, NULL, r), CURLE_OK);
	return r->status;
}

/* ---- batches ------------------------------------------------------------------ */

static void samples(struct frames *f, uint64_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct tr_sample s = encode_sample(first + i, 4242, 900, 1, first + i, 1 << 20, first + i);

		assert_true(frames_add(f, first + i, TR_SAMPLE, &s, sizeof(s)));
	}
}

static void seal_samples(const struct batch_secret_key *k, const uint8_t *host, uint64_t first, uint32_t n,
			 struct sealed *s)
{
	struct frames f = { 0 };

	samples(&f, first, n);
	assert_int_equal(seal_frames(k, host, 1, NULL, BATCH_COMP_ZLIB, &f, s), 0);
	frames_free(&f);
}

static int64_t records_of(const uint8_t *host)
{
	char sql[160], hex[2 * BATCH_HOST_ID_LEN + 1];

	sodium_bin2hex(hex, sizeof(hex), host, BATCH_HOST_ID_LEN);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM records WHERE host_id = '%s'", hex);
	return sql_int(g.db, sql);
}

/* ---- the tests ------------------------------------------------------------------ */

static void health_is_200(void **state)
{
	struct response r;

	(void)state;
	assert_int_equal(request("GET", "/v1/health", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"ok\""));
	assert_int_equal(request("HEAD", "/v1/health", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
}

static void wrong_method_is_405_and_unknown_path_is_404(void **state)
{
	struct response r;

	(void)state;
	assert_int_equal(request("GET", "/v1/batches", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 405);
	assert_int_equal(request("PUT", "/v1/batches", "x", 1, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 405);
	assert_int_equal(request("DELETE", "/v1/health", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 405);
	/* Paths are matched exactly: no dot segment is resolved, so this is no way to /v1/health. */
	assert_int_equal(request("GET", "/v1/batches/../health", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	assert_int_equal(request("POST", "/v2/batches", "x", 1, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	assert_int_equal(request("GET", "/", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 404);
}

static void good_batch_is_stored_200(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct response r;
	struct sealed s;

	(void)state;
	host_id_of(host, 10);
	seal_samples(&g.any_key, host, 1, 20, &s);
	assert_int_equal(post(&s, &r), 200);
	assert_non_null(strstr(r.body, "\"status\":\"stored\""));
	assert_non_null(strstr(r.body, "\"new\":20,"));
	assert_non_null(strstr(r.body, "\"duplicate\":0,"));
	assert_int_equal(records_of(host), 20);
	free(s.wire);
}

static void replayed_batch_is_200_duplicate_and_the_records_table_unchanged(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct response r;
	struct sealed s;
	int64_t count, crcs;

	(void)state;
	host_id_of(host, 11);
	seal_samples(&g.any_key, host, 1, 30, &s);
	assert_int_equal(post(&s, &r), 200);
	count = sql_int(g.db, "SELECT count(*) FROM records");
	crcs = sql_int(g.db, "SELECT sum(crc) FROM records");
	assert_int_equal(post(&s, &r), 200);
	assert_non_null(strstr(r.body, "\"status\":\"duplicate\""));
	assert_int_equal(sql_int(g.db, "SELECT count(*) FROM records"), count);
	assert_int_equal(sql_int(g.db, "SELECT sum(crc) FROM records"), crcs);
	assert_int_equal(records_of(host), 30);
	free(s.wire);
	/* re-formed around what is stored: only the new ones, and the reply says how many of each */
	seal_samples(&g.any_key, host, 21, 20, &s);
	assert_int_equal(post(&s, &r), 200);
	assert_non_null(strstr(r.body, "\"new\":10,"));
	assert_non_null(strstr(r.body, "\"duplicate\":10,"));
	assert_int_equal(records_of(host), 40);
	free(s.wire);
}

static void tampered_body_is_400(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct response r;
	struct sealed s;
	size_t where[] = { 8 + 4, 40, sizeof(struct batch_header) + 3, 0, 0 };

	(void)state;
	host_id_of(host, 12);
	seal_samples(&g.any_key, host, 1, 10, &s);
	where[3] = s.len - 1;             /* the signature */
	where[4] = s.len / 2;             /* the body */
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		s.wire[where[i]] ^= 0x20;
		assert_int_equal(post(&s, &r), 400);
		assert_non_null(strstr(r.body, "\"status\":\"refused\""));
		s.wire[where[i]] ^= 0x20;
	}
	/* cut short, and nothing at all */
	assert_int_equal(request("POST", "/v1/batches", s.wire, s.len - 1, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	assert_int_equal(request("POST", "/v1/batches", "", 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	assert_int_equal(records_of(host), 0);
	assert_int_equal(post(&s, &r), 200); /* the untouched bytes still go through */
	free(s.wire);
}

static void signed_batch_with_malformed_frames_is_400(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct frames f = { 0 };
	struct response r;
	struct sealed s;

	(void)state;
	host_id_of(host, 13);
	samples(&f, 1, 2);
	f.buf[TR_FRAME_HDR + 1] ^= 1; /* a payload byte: the frame's crc no longer matches */
	assert_int_equal(seal_frames(&g.any_key, host, 1, NULL, BATCH_COMP_ZLIB, &f, &s), 0);
	assert_int_equal(post(&s, &r), 400);
	assert_non_null(strstr(r.body, "frame"));
	free(s.wire);
	frames_free(&f);
	assert_int_equal(records_of(host), 0);
}

static void key_not_enrolled_is_403(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct response r;
	struct sealed s;

	(void)state;
	host_id_of(host, 14);
	seal_samples(&g.stranger, host, 1, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	assert_non_null(strstr(r.body, "not enrolled"));
	assert_int_equal(records_of(host), 0);
	free(s.wire);
}

static void key_enrolled_for_another_host_is_403(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct response r;
	struct sealed s;

	(void)state;
	host_id_of(host, 15);
	seal_samples(&g.bound_key, host, 1, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	assert_non_null(strstr(r.body, "another host"));
	assert_int_equal(records_of(host), 0);
	free(s.wire);
	seal_samples(&g.bound_key, g.host1, 1, 5, &s);
	assert_int_equal(post(&s, &r), 200);
	free(s.wire);
}

static void idempotency_key_must_be_the_batch_hash(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	char hex[2 * BATCH_HASH_LEN + 1];
	struct response r;
	struct sealed s;

	(void)state;
	host_id_of(host, 16);
	seal_samples(&g.any_key, host, 1, 5, &s);
	assert_int_equal(request("POST", "/v1/batches", s.wire, s.len, false, "00ff", &r), CURLE_OK);
	assert_int_equal(r.status, 400);
	assert_int_equal(records_of(host), 0);
	sodium_bin2hex(hex, sizeof(hex), s.hash, sizeof(s.hash));
	assert_int_equal(request("POST", "/v1/batches", s.wire, s.len, false, hex, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, hex));
	free(s.wire);
}

static void oversized_body_is_413_announced_or_streamed(void **state)
{
	size_t len = 2 * MAX_BODY;
	uint8_t *big = calloc(1, len);
	struct server_stats st0, st1;
	struct response r;

	(void)state;
	assert_non_null(big);
	server_get_stats(g.srv, &st0);
	assert_int_equal(request("POST", "/v1/batches", big, len, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 413);
	assert_int_equal(request("POST", "/v1/batches", big, len, true, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 413);
	server_get_stats(g.srv, &st1);
	assert_int_equal(st1.too_big - st0.too_big, 2);
	/* nothing of either is held: the budget is back where it was */
	assert_true(st1.peak_memory <= 2 * MAX_BODY);
	free(big);
	/* a good batch streamed in chunks is fine */
	{
		uint8_t host[BATCH_HOST_ID_LEN];
		struct sealed s;

		host_id_of(host, 17);
		seal_samples(&g.any_key, host, 1, 50, &s);
		assert_int_equal(request("POST", "/v1/batches", s.wire, s.len, true, NULL, &r), CURLE_OK);
		assert_int_equal(r.status, 200);
		assert_int_equal(records_of(host), 50);
		free(s.wire);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_raw(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(server_port(g.srv)) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Seconds until the server closes fd (reading whatever it sends), at most limit. */
static double wait_closed(int fd, double limit)
{
	double t0 = now_s();
	char buf[512];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)(limit * 1000)) <= 0)
			return limit + 1;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return now_s() - t0;
		if (now_s() - t0 > limit)
			return limit + 1;
	}
}

static void stalled_client_is_cut_off_by_the_timeout_while_another_is_served(void **state)
{
	static const char headers[] = "POST /v1/batches HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\n"
				      "Content-Length: 5000\r\n\r\n";
	static const char half_headers[] = "POST /v1/batches HTTP/1.1\r\nHost: te";
	uint8_t host[BATCH_HOST_ID_LEN];
	struct server_stats st0, st1;
	struct response r;
	struct sealed s;
	double t0, waited;
	int body_staller = connect_raw(), header_staller = connect_raw();

	(void)state;
	server_get_stats(g.srv, &st0);
	t0 = now_s();
	assert_int_equal(send(body_staller, headers, sizeof(headers) - 1, 0), (ssize_t)sizeof(headers) - 1);
	assert_int_equal(send(body_staller, "TRBATCH1", 8, 0), 8);
	assert_int_equal(send(header_staller, half_headers, sizeof(half_headers) - 1, 0),
			 (ssize_t)sizeof(half_headers) - 1);
	/* meanwhile another client is served at once */
	host_id_of(host, 18);
	seal_samples(&g.any_key, host, 1, 10, &s);
	assert_int_equal(post(&s, &r), 200);
	assert_true(now_s() - t0 < TIMEOUT_S);
	free(s.wire);
	/* both stallers are cut off after about the timeout, not kept */
	waited = wait_closed(body_staller, TIMEOUT_S + 4);
	assert_true(waited <= TIMEOUT_S + 3);
	assert_true(now_s() - t0 >= TIMEOUT_S * 0.9);
	assert_true(wait_closed(header_staller, TIMEOUT_S + 4) <= TIMEOUT_S + 3);
	close(body_staller);
	close(header_staller);
	for (int i = 0; i < 100; i++) {
		server_get_stats(g.srv, &st1);
		if (st1.timeouts > st0.timeouts)
			break;
		usleep(10000);
	}
	assert_true(st1.timeouts > st0.timeouts);
	/* and the server still serves */
	assert_int_equal(request("GET", "/v1/health", NULL, 0, false, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
}

static void announced_key_signs_for_its_host_from_the_next_batch_on(void **state)
{
	struct batch_secret_key next;
	struct tl_key_announce a;
	uint8_t other[BATCH_HOST_ID_LEN];
	struct frames f = { 0 };
	struct response r;
	struct sealed s;

	(void)state;
	batch_key_generate(&next);
	seal_samples(&next, g.host1, 100, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	free(s.wire);
	memset(&a, 0, sizeof(a));
	memcpy(a.new_key_id, next.key_id, sizeof(a.new_key_id));
	memcpy(a.new_public_key, next.public_key, sizeof(a.new_public_key));
	assert_true(frames_add(&f, 50, TL_KEY_ANNOUNCE, &a, sizeof(a)));
	assert_int_equal(seal_frames(&g.bound_key, g.host1, 2, NULL, BATCH_COMP_NONE, &f, &s), 0);
	frames_free(&f);
	assert_int_equal(post(&s, &r), 200);
	assert_non_null(strstr(r.body, "\"keys_enrolled\":1"));
	free(s.wire);
	seal_samples(&next, g.host1, 100, 5, &s);
	assert_int_equal(post(&s, &r), 200);
	free(s.wire);
	host_id_of(other, 19);
	seal_samples(&next, other, 100, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	free(s.wire);
}

static void reloaded_keys_take_effect_at_once(void **state)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct keyring kr;
	struct response r;
	struct sealed s;
	char text[1024];

	(void)state;
	host_id_of(host, 20);
	seal_samples(&g.stranger, host, 1, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	keys_text(text, sizeof(text), &g.stranger);
	assert_int_equal(keys_parse(&kr, "keys", text, strlen(text), NULL, 0), 0);
	ingest_set_keys(&g.ig, &kr);
	assert_int_equal(post(&s, &r), 200);
	free(s.wire);
	keys_text(text, sizeof(text), NULL);
	assert_int_equal(keys_parse(&kr, "keys", text, strlen(text), NULL, 0), 0);
	ingest_set_keys(&g.ig, &kr);
	seal_samples(&g.stranger, host, 6, 5, &s);
	assert_int_equal(post(&s, &r), 403);
	free(s.wire);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(health_is_200),
		cmocka_unit_test(wrong_method_is_405_and_unknown_path_is_404),
		cmocka_unit_test(good_batch_is_stored_200),
		cmocka_unit_test(replayed_batch_is_200_duplicate_and_the_records_table_unchanged),
		cmocka_unit_test(tampered_body_is_400),
		cmocka_unit_test(signed_batch_with_malformed_frames_is_400),
		cmocka_unit_test(key_not_enrolled_is_403),
		cmocka_unit_test(key_enrolled_for_another_host_is_403),
		cmocka_unit_test(idempotency_key_must_be_the_batch_hash),
		cmocka_unit_test(oversized_body_is_413_announced_or_streamed),
		cmocka_unit_test(stalled_client_is_cut_off_by_the_timeout_while_another_is_served),
		cmocka_unit_test(announced_key_signs_for_its_host_from_the_next_batch_on),
		cmocka_unit_test(reloaded_keys_take_effect_at_once),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
