/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP side of tracer-ingest (libmicrohttpd):
 *
 *   POST /v1/batches   one signed batch (ingest_batch)
 *   GET  /v1/health    200 {"status":"ok"}
 *   other methods 405 (with Allow), other paths 404
 *
 * One internal polling thread serves every connection (epoll), so a
 * client that is slow to send holds a connection slot and nothing else;
 * everything below runs on that thread, including the lake's
 * transactions (SQLite has one writer anyway). Limits, each refusing
 * with a status and a log line rather than growing:
 *   connections        max_connections in all, max_per_ip from one address
 *   idle time          timeout_s without a byte: connection closed
 *   whole request      REQUEST_DEADLINE_FACTOR x timeout_s from the headers to the last byte
 *   body               max_body bytes: 413 from Content-Length before reading,
 *                      else counted as it streams (chunked)
 *   bodies in memory   max_memory bytes across all requests in flight: 503
 *   per-connection     conn_memory for headers and parsing (libmicrohttpd's pool)
 *
 * With tls_cert and tls_key: HTTPS only (libmicrohttpd's TLS, GnuTLS). With
 * client_ca too, a client must present a certificate that chains to it:
 * libmicrohttpd given a trust list only asks for one (a client without, or
 * with any other, would be served), so a GnuTLS verify callback on each
 * connection, installed before its handshake, checks it there: without
 * one, or with one that does not verify, the handshake fails with an alert
 * and no byte of a request is read.
 */
#ifndef TRACER_INGEST_SERVER_H
#define TRACER_INGEST_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ingest.h"

/* max_body, max_connections, timeout_s: tracer.conf's ingest_* keys say their defaults (docs/config.md). */
#define SERVER_DEFAULT_PER_IP 16u
#define SERVER_DEFAULT_MEMORY (256u << 20)
#define SERVER_DEFAULT_CONN_MEMORY (64u << 10)
#define SERVER_REQUEST_DEADLINE_FACTOR 10u

struct server_config {
	const char *listen;        /* "ADDR:PORT", "[ADDR6]:PORT"; port 0: the kernel picks one */
	size_t max_body;           /* 0: ingest_max_body's default; at most BATCH_MAX_WIRE */
	unsigned max_connections;  /* 0: ingest_max_connections's default */
	unsigned max_per_ip;       /* 0: default */
	unsigned timeout_s;        /* 0: ingest_timeout's default */
	size_t max_memory;         /* 0: default */
	size_t conn_memory;        /* 0: default */
	const char *tls_cert;      /* PEM: HTTPS with it and tls_key; NULL: plain HTTP */
	const char *tls_key;       /* PEM, unencrypted */
	const char *client_ca;     /* PEM: clients need a certificate it signed; NULL: none asked for */
};

/* What the server refused, by cause (read them from the HTTP thread or after stop). */
struct server_stats {
	uint64_t too_big;          /* 413 */
	uint64_t no_memory;        /* 503: memory budget */
	uint64_t too_slow;         /* whole-request deadline passed */
	uint64_t not_found;        /* 404 */
	uint64_t bad_method;       /* 405 */
	uint64_t timeouts;         /* connections closed for idling (libmicrohttpd) */
	uint64_t tls_refused;      /* TLS handshakes failed for the client's certificate (client_ca) */
	uint64_t peak_memory;      /* most body bytes held at once */
};

struct server;

/* A duration as the whole seconds libmicrohttpd takes, rounded up ("1.5s" is 2 s). */
unsigned server_timeout_s(uint64_t ns);

/* Read the TLS files, bind, listen and serve. 0, or -errno with err saying what failed and what to do. */
int server_start(struct server **out, const struct server_config *c, struct ingest *ig, char *err, size_t errlen);

/*
 * server_start in two steps, for tracer-ingest's privilege drop between
 * them: server_listen reads the TLS files (perhaps only root can) and
 * binds and listens (a port below 1024 needs root or CAP_NET_BIND_SERVICE),
 * and starts no thread; server_serve starts
 * libmicrohttpd's thread on that socket (the thread inherits the caller's
 * credentials and seccomp filter). Same returns as server_start;
 * server_stop frees either state.
 */
int server_listen(struct server **out, const struct server_config *c, struct ingest *ig, char *err, size_t errlen);
int server_serve(struct server *s, char *err, size_t errlen);
/* The port actually bound (after port 0). */
uint16_t server_port(const struct server *s);
/* The address as "ADDR:PORT" with the bound port. */
const char *server_address(const struct server *s);
void server_get_stats(const struct server *s, struct server_stats *st);
/* Stop serving (connections closed, requests in flight dropped) and free. NULL is fine. */
void server_stop(struct server *s);

#endif /* TRACER_INGEST_SERVER_H */
