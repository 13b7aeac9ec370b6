/* SPDX-License-Identifier: Apache-2.0 */
#include "web_server.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "assets.h"
#include "clock.h"
#include "config.h"
#include "netlisten.h"
#include "parse.h"
#include "sweep_input.h"

#define LISTEN_BACKLOG 64
#define CONN_MEMORY (64u << 10)
#define STREAM_BUF 4096

/* Scripts, styles and requests of this origin only; no frames, no forms, no plugins, no base. */
static const char CSP[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
			  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct web {
	struct MHD_Daemon *d;          /* NULL until web_serve */
	int listen_fd;                 /* ours until web_serve hands it to libmicrohttpd */
	struct store *st;              /* under lock */
	struct auth auth;
	struct web_config c;
	struct api_sweep sweep;        /* c.sweep's thresholds, the price table */
	pthread_mutex_t lock;          /* the store and stats */
	struct api_web_stats stats;
	atomic_bool stopping;
	uint16_t port;
	char address[80];
};

/* ---- answers ------------------------------------------------------------------- */

static void secure_headers(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r)
{
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result answer_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
								 MHD_RESPMEM_MUST_COPY);

	if (r)
		secure_headers(r, "text/plain; charset=utf-8");
	if (r && (status == MHD_HTTP_UNAUTHORIZED))
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"tracer-web\"");
	if (r && status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return queue(conn, status, r);
}

static void count(struct web *w, uint64_t *counter)
{
	pthread_mutex_lock(&w->lock);
	(*counter)++;
	pthread_mutex_unlock(&w->lock);
}

/* o's text (malloc'd, handed over) as the answer, or the error rc stands for. */
static enum MHD_Result answer_json(struct web *w, struct MHD_Connection *conn, struct obuf *o, int rc,
				   const char *what, const char *type)
{
	struct MHD_Response *r;

	if (!rc && o->err)
		rc = o->err;
	if (rc) {
		obuf_free(o);
		if (rc == API_E_NOT_FOUND) {
			count(w, &w->stats.not_found);
			return answer_text(conn, MHD_HTTP_NOT_FOUND, "no such run, pipeline or host in the lake\n");
		}
		if (rc == API_E_BAD_ARG)
			return answer_text(conn, MHD_HTTP_BAD_REQUEST,
					   "tracer-web: since= wants a duration such as 14d, 36h or 90m; host= a host id\n");
		count(w, &w->stats.errors);
		pthread_mutex_lock(&w->lock);
		if (rc == -ENOMEM || rc == -EIO)
			fprintf(stderr, "<3>%s: %s\n", what, strerror(-rc));
		else
			fprintf(stderr, "<3>%s: %s: %s\n", what, store_strerror(rc), store_last_error(w->st));
		pthread_mutex_unlock(&w->lock);
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "the lake could not be read: see tracer-web's log\n");
	}
	r = MHD_create_response_from_buffer(o->len, o->buf ? o->buf : (void *)(uintptr_t)"",
					    o->buf ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		obuf_free(o);
		return MHD_NO;
	}
	secure_headers(r, type);
	return queue(conn, MHD_HTTP_OK, r);
}

/* ---- access ----------------------------------------------------------------------- */

struct query_copy {
	char *out;
	size_t len, cap;
	bool overflow;
};

static void put_encoded(struct query_copy *q, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
			     c == '_' || c == '.' || c == '~';

		if (q->len + 4 >= q->cap) {
			q->overflow = true;
			return;
		}
		if (plain) {
			q->out[q->len++] = (char)c;
		} else {
			q->out[q->len++] = '%';
			q->out[q->len++] = hex[c >> 4];
			q->out[q->len++] = hex[c & 15];
		}
	}
}

/* Every query argument but the token, again URL-encoded. */
static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct query_copy *q = cls;
	char sep;

	(void)kind;
	if (!strcmp(key, "token"))
		return MHD_YES;
	if (q->len + 2 >= q->cap) {
		q->overflow = true;
		return MHD_NO;
	}
	sep = q->len ? '&' : '?';
	q->out[q->len++] = sep;
	put_encoded(q, key);
	if (value) {
		if (q->len + 2 >= q->cap) {
			q->overflow = true;
			return MHD_NO;
		}
		q->out[q->len++] = '=';
		put_encoded(q, value);
	}
	return MHD_YES;
}

/* The pages a browser opens, and the page each is drawn by. */
static const struct {
	const char *path, *page;
} pages[] = { { "/", "runs.html" }, { "/run", "run.html" }, { "/pipeline", "pipeline.html" },
	      { "/hosts", "hosts.html" } };

/*
 * ?token= that is right: the cookie, and 303 to the same page without it,
 * so that the token leaves the address bar and the history. The place
 * redirected to is one of the pages (else /) with the other arguments
 * URL-encoded again: nothing of the request can point it elsewhere.
 */
static enum MHD_Result set_cookie(struct MHD_Connection *conn, const char *url, const char *token)
{
	char query[2048], location[2200], cookie[AUTH_TOKEN_MAX + 96];
	struct query_copy q = { query, 0, sizeof(query), false };
	struct MHD_Response *r;
	const char *path = "/";

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (!strcmp(url, pages[i].path))
			path = pages[i].path;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
	query[q.overflow ? 0 : q.len] = 0;
	snprintf(location, sizeof(location), "%s%s", path, query);
	snprintf(cookie, sizeof(cookie), AUTH_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", token);
	r = MHD_create_response_from_buffer(0, (void *)(uintptr_t)"", MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	secure_headers(r, "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, location);
	return queue(conn, MHD_HTTP_SEE_OTHER, r);
}

/* *go_on when the request may go on; else the answer (a refusal, the cookie) is queued. */
static enum MHD_Result check_access(struct web *w, struct MHD_Connection *conn, const char *url, bool *go_on)
{
	const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	const char *hdr, *token;
	enum auth_result res;
	size_t len = 0;

	*go_on = false;
	if (q) {
		res = auth_check(&w->auth, q, strlen(q));
		if (res == AUTH_OK)
			return set_cookie(conn, url, q);
	} else {
		hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		token = auth_from_headers(hdr, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE),
					  &len);
		res = auth_check(&w->auth, token, len);
		if (res == AUTH_OK) {
			*go_on = true;
			return MHD_YES;
		}
	}
	if (res == AUTH_NONE) {
		count(w, &w->stats.unauthorized);
		return answer_text(conn, MHD_HTTP_UNAUTHORIZED,
				   "tracer-web: a token is needed. Open /?token=TOKEN once (the token is in the file "
				   "tracer-web's --token-file names), or send \"Authorization: Bearer TOKEN\".\n");
	}
	count(w, &w->stats.forbidden);
	return answer_text(conn, MHD_HTTP_FORBIDDEN, "tracer-web: that token is not the one.\n");
}

/* ---- the event stream of a run ------------------------------------------------------- */

struct stream {
	struct web *w;
	int64_t run_id;
	struct api_run_status last;
	bool started, end_queued;
	uint64_t last_send_ns;
	char buf[STREAM_BUF];
	size_t len, off;
};

static void stream_event(struct stream *s, const char *event, const struct api_run_status *st)
{
	struct obuf o;
	struct json j;
	int n;

	obuf_init_mem(&o, STREAM_BUF / 2);
	json_init(&j, &o);
	if (st)
		api_run_status_json(&j, st);
	else
		json_null(&j);
	n = snprintf(s->buf + s->len, sizeof(s->buf) - s->len, "event: %s\ndata: %.*s\n\n", event,
		     o.err ? 4 : (int)o.len, o.err ? "null" : o.buf);
	if (n > 0 && (size_t)n < sizeof(s->buf) - s->len)
		s->len += (size_t)n;
	obuf_free(&o);
}

/* Look at the run: what to send now, if anything, into s->buf. */
static void stream_poll(struct stream *s)
{
	struct api_run_status now;
	int rc;

	pthread_mutex_lock(&s->w->lock);
	rc = api_run_status(s->w->st, s->run_id, &now);
	pthread_mutex_unlock(&s->w->lock);
	s->len = s->off = 0;
	if (rc) { /* the run is not there (any more), or the lake failed: the stream ends */
		stream_event(s, "end", NULL);
		s->end_queued = true;
	} else if (!s->started || !api_run_status_same(&now, &s->last)) {
		if (!s->started)
			s->len = (size_t)snprintf(s->buf, sizeof(s->buf), "retry: 2000\n\n");
		stream_event(s, "update", &now);
		s->last = now;
		s->started = true;
		if (now.final) {
			stream_event(s, "end", &now);
			s->end_queued = true;
		}
	} else if (mono_ns() - s->last_send_ns >= (uint64_t)WEB_STREAM_PING_S * 1000000000ull) {
		s->len = (size_t)snprintf(s->buf, sizeof(s->buf), ": ping\n\n");
	}
	if (s->len)
		s->last_send_ns = mono_ns();
}

/* Wait one poll interval, in steps, so that a stop is seen soon. */
static void stream_wait(const struct stream *s)
{
	struct timespec step = { 0, 100 * 1000000L };

	for (unsigned waited = 0; waited < WEB_STREAM_POLL_MS && !atomic_load(&s->w->stopping); waited += 100)
		nanosleep(&step, NULL);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct stream *s = cls;

	(void)pos;
	for (;;) {
		if (s->off < s->len) {
			size_t n = s->len - s->off < max ? s->len - s->off : max;

			memcpy(out, s->buf + s->off, n);
			s->off += n;
			return (ssize_t)n;
		}
		if (s->end_queued || atomic_load(&s->w->stopping))
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->started)
			stream_wait(s);
		if (atomic_load(&s->w->stopping))
			return MHD_CONTENT_READER_END_OF_STREAM;
		stream_poll(s);
	}
}

static void stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&s->w->lock);
	s->w->stats.streams_open--;
	pthread_mutex_unlock(&s->w->lock);
	free(s);
}

static enum MHD_Result answer_stream(struct web *w, struct MHD_Connection *conn, int64_t run_id)
{
	struct api_run_status st;
	struct MHD_Response *r;
	struct stream *s;
	int rc;

	pthread_mutex_lock(&w->lock);
	rc = api_run_status(w->st, run_id, &st);
	pthread_mutex_unlock(&w->lock);
	if (rc) {
		struct obuf none = { 0 };

		return answer_json(w, conn, &none, rc, "event stream", "");
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return MHD_NO;
	s->w = w;
	s->run_id = run_id;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BUF, stream_read, s, stream_free);
	if (!r) {
		free(s);
		return MHD_NO;
	}
	pthread_mutex_lock(&w->lock);
	w->stats.streams_open++;
	pthread_mutex_unlock(&w->lock);
	secure_headers(r, "text/event-stream");
	MHD_add_response_header(r, "X-Accel-Buffering", "no"); /* nginx: pass events on as they come */
	return queue(conn, MHD_HTTP_OK, r);
}

/* ---- routes ------------------------------------------------------------------------------- */

static const struct web_asset *asset(const char *name)
{
	for (size_t i = 0; i < web_nassets; i++)
		if (!strcmp(web_assets[i].name, name))
			return &web_assets[i];
	return NULL;
}

static enum MHD_Result answer_asset(struct MHD_Connection *conn, const struct web_asset *a)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(a->len, (void *)(uintptr_t)a->data,
								 MHD_RESPMEM_PERSISTENT);

	if (r)
		secure_headers(r, a->type);
	return queue(conn, MHD_HTTP_OK, r);
}

/* "/api/runs/123", "/api/runs/123/page": the number and what follows it ("" or "/page"). */
static bool run_path(const char *url, int64_t *id, const char **rest)
{
	static const char prefix[] = "/api/runs/";
	char digits[21];
	size_t n = 0;
	uint64_t v;

	if (strncmp(url, prefix, sizeof(prefix) - 1))
		return false;
	url += sizeof(prefix) - 1;
	while (url[n] >= '0' && url[n] <= '9' && n < sizeof(digits) - 1)
		n++;
	if (!n || n >= sizeof(digits) - 1)
		return false;
	memcpy(digits, url, n);
	digits[n] = 0;
	if (parse_u64(digits, INT64_MAX, &v))
		return false;
	*id = (int64_t)v;
	*rest = url + n;
	return true;
}

static const char *arg(struct MHD_Connection *conn, const char *key)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

/* ?since=DURATION ("14d", "36h", "90m"), else dflt: false when it is not a window there can be. */
static bool since_arg(struct MHD_Connection *conn, int64_t dflt, int64_t *ns)
{
	const char *s = arg(conn, "since");
	uint64_t v;

	*ns = dflt;
	if (!s)
		return true;
	if (sweep_parse_window(s, &v))
		return false;
	*ns = (int64_t)v;
	return true;
}

static enum MHD_Result route_api(struct web *w, struct MHD_Connection *conn, const char *url)
{
	struct obuf o;
	struct json j;
	const char *rest = "";
	int64_t id = 0;
	int rc = API_E_NOT_FOUND;

	if (run_path(url, &id, &rest) && !strcmp(rest, "/events"))
		return answer_stream(w, conn, id);
	obuf_init_mem(&o, WEB_JSON_MAX);
	json_init(&j, &o);
	pthread_mutex_lock(&w->lock);
	if (!strcmp(url, "/api/runs")) {
		struct api_runs_query q = { arg(conn, "pipeline"), arg(conn, "host"), arg(conn, "state"), 0 };
		const char *limit = arg(conn, "limit");
		uint64_t v = 0;

		if (limit && !parse_u64(limit, API_RUNS_MAX, &v))
			q.limit = (uint32_t)v;
		rc = api_runs(w->st, &j, &q);
	} else if (run_path(url, &id, &rest) && !strcmp(rest, "")) {
		rc = api_run(w->st, &j, id);
	} else if (run_path(url, &id, &rest) && !strcmp(rest, "/page")) {
		rc = api_run_page(w->st, &o, id);
	} else if (!strcmp(url, "/api/pipelines")) {
		rc = api_pipelines(w->st, &j);
	} else if (!strcmp(url, "/api/pipeline")) {
		rc = api_pipeline(w->st, &j, arg(conn, "name"));
	} else if (!strcmp(url, "/api/hosts")) {
		rc = api_hosts(w->st, &j, (int64_t)real_ns());
	} else if (!strcmp(url, "/api/hosts/activity")) {
		const char *host = arg(conn, "host");
		int64_t window;

		if (!host || !*host || !since_arg(conn, API_ACTIVITY_WINDOW_NS, &window))
			rc = API_E_BAD_ARG;
		else
			rc = api_host_activity(w->st, &j, host, window);
	} else if (!strcmp(url, "/api/sweep")) {
		int64_t window;

		rc = since_arg(conn, w->c.sweep_window_ns, &window) ? api_sweep(w->st, &j, &w->sweep, window)
								       : API_E_BAD_ARG;
	}
	pthread_mutex_unlock(&w->lock);
	return answer_json(w, conn, &o, rc, url, "application/json");
}

static enum MHD_Result route(struct web *w, struct MHD_Connection *conn, const char *url)
{
	const struct web_asset *a;

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (!strcmp(url, pages[i].path) && (a = asset(pages[i].page)))
			return answer_asset(conn, a);
	if (!strncmp(url, "/static/", 8) && (a = asset(url + 8)) && !strstr(a->name, ".html"))
		return answer_asset(conn, a);
	if (!strncmp(url, "/api/", 5))
		return route_api(w, conn, url);
	if (!strcmp(url, "/metrics")) {
		struct api_web_stats ws;
		struct obuf o;
		int rc;

		obuf_init_mem(&o, WEB_JSON_MAX);
		pthread_mutex_lock(&w->lock);
		ws = w->stats;
		rc = api_metrics(w->st, &o, &ws, (int64_t)real_ns());
		pthread_mutex_unlock(&w->lock);
		return answer_json(w, conn, &o, rc, url, "text/plain; version=0.0.4; charset=utf-8");
	}
	count(w, &w->stats.not_found);
	return answer_text(conn, MHD_HTTP_NOT_FOUND, "tracer-web: no such page\n");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct web *w = cls;
	bool go_on;
	enum MHD_Result rc;

	(void)version;
	(void)upload_data;
	if (!*con_cls) { /* the headers are in: answer once the (ignored) body, if any, is */
		*con_cls = w;
		count(w, &w->stats.requests);
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "tracer-web is read-only: GET and HEAD only\n");
	rc = check_access(w, conn, url, &go_on);
	if (!go_on)
		return rc;
	return route(w, conn, url);
}

/* ---- life ------------------------------------------------------------------------------------ */

int web_listen(struct web **out, const struct web_config *c, struct store *st, const struct auth *a, char *err,
	       size_t errlen)
{
	struct web *w = calloc(1, sizeof(*w));
	int fd;

	*out = NULL;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->c = *c;
	if (!w->c.max_connections)
		w->c.max_connections = WEB_DEFAULT_CONNECTIONS;
	if (!w->c.timeout_s)
		w->c.timeout_s = WEB_DEFAULT_TIMEOUT_S;
	if (!w->c.sweep_window_ns) {
		uint64_t def = 0;

		config_key_number("sweep_window", &def, NULL, NULL); /* the table of defaults (common/config.c) */
		w->c.sweep_window_ns = (int64_t)def;
	}
	if (c->sweep)
		w->sweep.thresholds = *c->sweep;
	else
		sw_config_default(&w->sweep.thresholds);
	w->c.sweep = NULL; /* the copy above is what serves */
	w->st = st;
	w->auth = *a;
	pthread_mutex_init(&w->lock, NULL);
	fd = net_listen(c->listen, LISTEN_BACKLOG, w->address, sizeof(w->address), &w->port, err, errlen);
	if (fd < 0) {
		pthread_mutex_destroy(&w->lock);
		free(w);
		return fd;
	}
	w->listen_fd = fd;
	*out = w;
	return 0;
}

int web_serve(struct web *w, char *err, size_t errlen)
{
	unsigned per_ip = w->c.max_connections < WEB_DEFAULT_PER_IP ? w->c.max_connections : WEB_DEFAULT_PER_IP;

	w->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
					MHD_USE_ERROR_LOG,
				0, NULL, NULL, handle, w, MHD_OPTION_EXTERNAL_LOGGER, net_http_log, w,
				MHD_OPTION_LISTEN_SOCKET, w->listen_fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)w->c.max_connections,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_ip,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)w->c.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY, MHD_OPTION_END);
	if (!w->d) {
		snprintf(err, errlen, "cannot start the HTTP server on %s (libmicrohttpd refused the options)",
			 w->address);
		return -EIO;
	}
	w->listen_fd = -1; /* libmicrohttpd's now */
	return 0;
}

void web_set_store(struct web *w, struct store *st)
{
	w->st = st;
}

void web_set_prices(struct web *w, const struct price_table *table, const char *path)
{
	w->sweep.table = table;
	w->sweep.prices_file = table ? path : NULL;
}

uint16_t web_port(const struct web *w)
{
	return w->port;
}

const char *web_address(const struct web *w)
{
	return w->address;
}

void web_get_stats(struct web *w, struct api_web_stats *s)
{
	pthread_mutex_lock(&w->lock);
	*s = w->stats;
	pthread_mutex_unlock(&w->lock);
}

void web_stop(struct web *w)
{
	if (!w)
		return;
	atomic_store(&w->stopping, true);
	if (w->d)
		MHD_stop_daemon(w->d);
	if (w->listen_fd >= 0)
		close(w->listen_fd);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
