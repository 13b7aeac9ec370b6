/* SPDX-License-Identifier: Apache-2.0 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "batch_format.h"
#include "clock.h"
#include "config.h"
#include "netlisten.h"
#include "parse.h"
#include "tls.h"

#define LISTEN_BACKLOG 128
#define FIRST_CHUNK (64u << 10)   /* buffer for a body of unknown length, grown by doubling */
#define IDEMPOTENCY_MAX 128       /* bytes of an Idempotency-Key header kept (a valid one has 64) */
#define PEER_MAX 64

struct server {
	struct MHD_Daemon *d;      /* NULL until server_serve */
	int listen_fd;             /* ours until server_serve hands it to libmicrohttpd; then -1 */
	struct ingest *ig;
	struct server_config c;   /* defaults filled in */
	struct tls_files tls;     /* read by server_listen; cert NULL: plain HTTP */
	uint16_t port;
	char address[PEER_MAX + 8];
	/* Touched by the HTTP thread only (one internal polling thread). */
	size_t memory;            /* body bytes reserved by requests in flight */
	struct server_stats stats;
};

/* One POST /v1/batches in progress. */
struct request {
	uint8_t *buf;
	size_t len, cap;          /* cap: bytes reserved against the memory budget */
	uint64_t deadline_ns;     /* CLOCK_MONOTONIC */
	size_t received;          /* body bytes received, kept or not */
	bool refused;             /* reply below is final; the rest of the body is dropped */
	struct ingest_reply reply;
	char peer[PEER_MAX];
	char idem[IDEMPOTENCY_MAX + 1];
	bool has_idem;
};

/* ---- address -------------------------------------------------------------- */

static int listen_on(struct server *s, char *err, size_t errlen)
{
	return net_listen(s->c.listen, LISTEN_BACKLOG, s->address, sizeof(s->address), &s->port, err, errlen);
}

/* ---- responses ------------------------------------------------------------ */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, const char *body, size_t len,
			       const char *header, const char *value)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								    MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (header)
		MHD_add_response_header(resp, header, value);
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result respond_reply(struct MHD_Connection *conn, const struct ingest_reply *r)
{
	return respond(conn, r->status, r->body, r->len, r->status == 503 ? MHD_HTTP_HEADER_RETRY_AFTER : NULL, "1");
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, const char *json,
				    const char *header, const char *value)
{
	return respond(conn, status, json, strlen(json), header, value);
}

/* ---- the memory budget ------------------------------------------------------ */

static bool reserve(struct server *s, size_t n)
{
	if (n > s->c.max_memory - s->memory)
		return false;
	s->memory += n;
	if (s->memory > s->stats.peak_memory)
		s->stats.peak_memory = s->memory;
	return true;
}

static void request_free(struct server *s, struct request *rq)
{
	s->memory -= rq->cap;
	free(rq->buf);
	free(rq);
}

/* Refuse now; the rest of the body is read and dropped (a response cannot be queued mid-upload). */
static void refuse_late(struct server *s, struct request *rq, unsigned status, const char *reason)
{
	ingest_refuse(s->ig, status, reason, rq->peer, rq->buf, rq->len, &rq->reply);
	s->memory -= rq->cap;
	free(rq->buf);
	rq->buf = NULL;
	rq->len = rq->cap = 0;
	rq->refused = true;
}

/* ---- POST /v1/batches ------------------------------------------------------- */

/* Content-Length as a number; false when absent (chunked) or not a plain number. */
static bool content_length(struct MHD_Connection *conn, uint64_t *len)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return v && parse_u64(v, UINT64_MAX, len) == PARSE_OK;
}

static void peer_of(struct MHD_Connection *conn, char *out, size_t outlen)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	net_format_addr(ci ? ci->client_addr : NULL, out, outlen, false);
}

static struct request *request_new(struct server *s, struct MHD_Connection *conn)
{
	struct request *rq = calloc(1, sizeof(*rq));
	const char *idem;

	if (!rq)
		return NULL;
	peer_of(conn, rq->peer, sizeof(rq->peer));
	rq->deadline_ns = mono_ns() + (uint64_t)s->c.timeout_s * SERVER_REQUEST_DEADLINE_FACTOR * 1000000000ull;
	idem = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Idempotency-Key");
	if (idem) {
		rq->has_idem = true;
		/* An over-long one is kept cut: it then matches no hash, as it should not. */
		snprintf(rq->idem, sizeof(rq->idem), "%s", idem);
	}
	return rq;
}

static enum MHD_Result begin_batch(struct server *s, struct MHD_Connection *conn, void **con_cls)
{
	struct ingest_reply r;
	struct request *rq;
	uint64_t clen = 0;
	bool known = content_length(conn, &clen);
	size_t want = known ? (size_t)clen : FIRST_CHUNK;
	char peer[PEER_MAX];

	peer_of(conn, peer, sizeof(peer));
	if (known && clen > s->c.max_body) {
		s->stats.too_big++;
		ingest_refuse(s->ig, 413, "body larger than --max-body", peer, NULL, 0, &r);
		return respond_reply(conn, &r);
	}
	if (want > s->c.max_body)
		want = s->c.max_body;
	rq = request_new(s, conn);
	if (rq && want && reserve(s, want)) {
		rq->cap = want;
		rq->buf = malloc(want);
	}
	if (!rq || (want && !rq->buf)) {
		if (rq)
			request_free(s, rq);
		s->stats.no_memory++;
		ingest_refuse(s->ig, 503, "too many bodies in memory (--max-memory); retry later", peer, NULL, 0, &r);
		return respond_reply(conn, &r);
	}
	*con_cls = rq;
	return MHD_YES;
}

/* Room for n more bytes: grow (chunked bodies) within the body limit and the memory budget. */
static int make_room(struct server *s, struct request *rq, size_t n)
{
	size_t need = rq->len + n, cap = rq->cap ? rq->cap : FIRST_CHUNK;
	uint8_t *nb;

	if (need > s->c.max_body)
		return 413;
	if (need <= rq->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > s->c.max_body)
		cap = s->c.max_body;
	if (!reserve(s, cap - rq->cap))
		return 503;
	nb = realloc(rq->buf, cap);
	if (!nb) {
		s->memory -= cap - rq->cap;
		return 503;
	}
	rq->buf = nb;
	rq->cap = cap;
	return 0;
}

static enum MHD_Result receive(struct server *s, struct request *rq, const char *data, size_t *size)
{
	size_t n = *size;
	int refuse;

	*size = 0;
	rq->received += n;
	if (mono_ns() > rq->deadline_ns) {
		s->stats.too_slow++;
		if (!rq->refused)
			refuse_late(s, rq, 408, "request not complete within its deadline: connection closed");
		return MHD_NO;
	}
	if (rq->refused) /* read and dropped; whoever sends twice the limit regardless is cut off */
		return rq->received > 2 * s->c.max_body ? MHD_NO : MHD_YES;
	refuse = make_room(s, rq, n);
	if (refuse == 413) {
		s->stats.too_big++;
		refuse_late(s, rq, 413, "body larger than --max-body");
	} else if (refuse) {
		s->stats.no_memory++;
		refuse_late(s, rq, 503, "too many bodies in memory (--max-memory); retry later");
	}
	if (refuse)
		return MHD_YES;
	memcpy(rq->buf + rq->len, data, n);
	rq->len += n;
	return MHD_YES;
}

static enum MHD_Result finish_batch(struct server *s, struct MHD_Connection *conn, struct request *rq)
{
	if (!rq->refused)
		ingest_batch(s->ig, rq->buf, rq->len, rq->has_idem ? rq->idem : NULL, rq->peer, &rq->reply);
	return respond_reply(conn, &rq->reply);
}

/* ---- client certificates (client_ca) ---------------------------------------- */

/* Refused in the handshake: counted, logged, and the alert that tells the client why. */
static int refuse_client(struct server *s, struct MHD_Connection *conn, gnutls_session_t session,
			 gnutls_alert_description_t alert, const char *why, const char *detail)
{
	char peer[PEER_MAX];

	s->stats.tls_refused++;
	peer_of(conn, peer, sizeof(peer));
	fprintf(stderr, "<5>refused the TLS client %s: %s%s\n", peer, why, detail);
	gnutls_alert_send(session, GNUTLS_AL_FATAL, alert); /* best effort: the connection closes anyway */
	return -1;
}

/*
 * GnuTLS calls this in the handshake once the client's Certificate
 * message is in (TLS 1.2 and 1.3; libmicrohttpd keeps no session cache
 * and issues no tickets, so no handshake is a resumption that skips it).
 * Not 0: the handshake fails. The chain must lead to client_ca (the
 * credentials' trust list), be within its dates and, where the
 * certificate names its purposes, allow TLS client authentication.
 */
static int verify_client(gnutls_session_t session)
{
	struct MHD_Connection *conn = gnutls_session_get_ptr(session);
	struct server *s = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context;
	gnutls_typed_vdata_st purpose = { GNUTLS_DT_KEY_PURPOSE_OID,
					  (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_CLIENT, 0 };
	gnutls_datum_t status_text = { NULL, 0 };
	unsigned status = 0;
	int rc = gnutls_certificate_verify_peers(session, &purpose, 1, &status);

	if (rc == 0 && status == 0)
		return 0;
	if (rc == GNUTLS_E_NO_CERTIFICATE_FOUND)
		return refuse_client(s, conn, session, gnutls_protocol_get_version(session) == GNUTLS_TLS1_3 ?
				     GNUTLS_A_CERTIFICATE_REQUIRED : GNUTLS_A_HANDSHAKE_FAILURE,
				     "no client certificate (--client-ca: one it signed is required)", "");
	if (rc == 0 && gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &status_text, 0) == 0)
		while (status_text.size && status_text.data[status_text.size - 1] == ' ') /* it ends ". " */
			status_text.data[--status_text.size] = 0;
	rc = refuse_client(s, conn, session, GNUTLS_A_BAD_CERTIFICATE,
			   "its certificate does not verify against --client-ca: ",
			   rc ? gnutls_strerror(rc) : status_text.data ? (const char *)status_text.data : "?");
	gnutls_free(status_text.data);
	return rc;
}

/* A new connection, before its handshake: its client certificate is to be checked in it. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;

	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		abort(); /* a TLS connection without a session: serving it would skip the check */
	*socket_context = cls;
	gnutls_session_set_ptr(ci->tls_session, conn); /* what libmicrohttpd sets it to, for verify_client */
	/* REQUEST, not REQUIRE: without a certificate, verify_client still runs, and says so */
	gnutls_certificate_server_set_request(ci->tls_session, GNUTLS_CERT_REQUEST);
	gnutls_session_set_verify_function(ci->tls_session, verify_client);
}

/* ---- routing ---------------------------------------------------------------- */

/* A refused method or path, once, with the client's words made printable (they could hold escapes). */
static void log_route_refusal(struct MHD_Connection *conn, unsigned status, const char *method, const char *url)
{
	char peer[PEER_MAX], m[24], u[128];
	size_t i;

	peer_of(conn, peer, sizeof(peer));
	for (i = 0; i < sizeof(m) - 1 && method[i]; i++)
		m[i] = method[i] > 0x20 && method[i] < 0x7f ? method[i] : '?';
	m[i] = 0;
	for (i = 0; i < sizeof(u) - 1 && url[i]; i++)
		u[i] = url[i] > 0x20 && url[i] < 0x7f ? url[i] : '?';
	u[i] = 0;
	fprintf(stderr, "<5>refused %s %s%s from %s (HTTP %u)\n", m, u, url[i] ? "..." : "", peer, status);
}

static enum MHD_Result route(struct server *s, struct MHD_Connection *conn, const char *url, const char *method,
			     void **con_cls)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);

	if (!strcmp(url, "/v1/health")) {
		if (get)
			return respond_text(conn, 200, "{\"status\":\"ok\"}\n", NULL, NULL);
		s->stats.bad_method++;
		log_route_refusal(conn, 405, method, url);
		return respond_text(conn, 405, "{\"status\":\"refused\",\"error\":\"method not allowed\"}\n",
				    MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	}
	if (!strcmp(url, "/v1/batches")) {
		if (!strcmp(method, MHD_HTTP_METHOD_POST))
			return begin_batch(s, conn, con_cls);
		s->stats.bad_method++;
		log_route_refusal(conn, 405, method, url);
		return respond_text(conn, 405, "{\"status\":\"refused\",\"error\":\"method not allowed\"}\n",
				    MHD_HTTP_HEADER_ALLOW, "POST");
	}
	s->stats.not_found++;
	log_route_refusal(conn, 404, method, url);
	return respond_text(conn, 404, "{\"status\":\"refused\",\"error\":\"no such resource\"}\n", NULL, NULL);
}

/*
 * libmicrohttpd calls this after the headers (no state yet: route), for
 * each piece of body (receive), and once more at the end (finish).
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq)
		return route(s, conn, url, method, con_cls);
	if (*upload_data_size)
		return receive(s, rq, upload_data, upload_data_size);
	return finish_batch(s, conn, rq);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct request *rq = *con_cls;

	(void)conn;
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) {
		s->stats.timeouts++;
		fprintf(stderr, "<4>closed connection from %s: nothing received for %u s (--timeout)\n",
			rq ? rq->peer : "?", s->c.timeout_s);
	}
	if (rq)
		request_free(s, rq);
	*con_cls = NULL;
}

/* ---- life ------------------------------------------------------------------- */

unsigned server_timeout_s(uint64_t ns)
{
	return (unsigned)((ns + 999999999ull) / 1000000000ull);
}

/* What the caller left 0; the settings tracer.conf has take its defaults (common/config.c). */
static void fill_defaults(struct server_config *c)
{
	uint64_t v = 0;

	if (!c->max_body && config_key_number("ingest_max_body", &v, NULL, NULL) == 0)
		c->max_body = (size_t)v;
	if (!c->max_body || c->max_body > BATCH_MAX_WIRE)
		c->max_body = BATCH_MAX_WIRE;
	if (!c->max_connections && config_key_number("ingest_max_connections", &v, NULL, NULL) == 0)
		c->max_connections = (unsigned)v;
	if (!c->max_per_ip)
		c->max_per_ip = SERVER_DEFAULT_PER_IP;
	if (!c->timeout_s && config_key_number("ingest_timeout", &v, NULL, NULL) == 0)
		c->timeout_s = server_timeout_s(v);
	if (!c->max_memory)
		c->max_memory = SERVER_DEFAULT_MEMORY;
	if (!c->conn_memory)
		c->conn_memory = SERVER_DEFAULT_CONN_MEMORY;
}

int server_listen(struct server **out, const struct server_config *c, struct ingest *ig, char *err, size_t errlen)
{
	struct server *s = calloc(1, sizeof(*s));
	int fd;

	if (!s)
		return -ENOMEM;
	s->c = *c;
	s->ig = ig;
	s->listen_fd = -1;
	fill_defaults(&s->c);
	/* Read now: they may be readable only as root, or only before the sandbox. */
	fd = c->tls_cert ? tls_files_load(&s->tls, c->tls_cert, c->tls_key, c->client_ca, err, errlen) : 0;
	if (fd == 0)
		fd = listen_on(s, err, errlen);
	if (fd < 0) {
		tls_files_free(&s->tls);
		free(s);
		return fd;
	}
	s->listen_fd = fd;
	*out = s;
	return 0;
}

/* libmicrohttpd's TLS options for the files server_listen read (none for plain HTTP), END-terminated. */
static void tls_options(struct server *s, struct MHD_OptionItem o[5])
{
	size_t n = 0;

	if (s->tls.cert) {
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls.cert };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls.key };
	}
	if (s->tls.client_ca) {
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, s->tls.client_ca };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s };
	}
	o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
}

int server_serve(struct server *s, char *err, size_t errlen)
{
	struct MHD_OptionItem tls[5];

	tls_options(s, tls);
	s->d = MHD_start_daemon(MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				(s->tls.cert ? MHD_USE_TLS : 0), 0, NULL, NULL,
				handle, s, MHD_OPTION_EXTERNAL_LOGGER, net_http_log, s, /* first: it covers the options' own errors */
				MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->c.max_connections,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)s->c.max_per_ip,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->c.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)s->c.conn_memory,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!s->d) {
		snprintf(err, errlen, "cannot start the HTTP server on %s (libmicrohttpd refused the options)",
			 s->address);
		return -EIO;
	}
	s->listen_fd = -1; /* libmicrohttpd's now: MHD_stop_daemon closes it */
	return 0;
}

int server_start(struct server **out, const struct server_config *c, struct ingest *ig, char *err, size_t errlen)
{
	struct server *s = NULL;
	int rc = server_listen(&s, c, ig, err, errlen);

	if (rc)
		return rc;
	rc = server_serve(s, err, errlen);
	if (rc) {
		server_stop(s);
		return rc;
	}
	*out = s;
	return 0;
}

uint16_t server_port(const struct server *s)
{
	return s->port;
}

const char *server_address(const struct server *s)
{
	return s->address;
}

void server_get_stats(const struct server *s, struct server_stats *st)
{
	*st = s->stats;
}

void server_stop(struct server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d); /* closes the listening socket too */
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	tls_files_free(&s->tls);
	free(s);
}
