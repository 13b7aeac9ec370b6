/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's HTTP side (libmicrohttpd, a thread per connection, so that
 * a run's event stream can wait for the lake to change without holding
 * anyone else up). Read-only: GET and HEAD only.
 *
 *   /                 runs.html      the runs, live and finished
 *   /run?id=N         run.html       one run, live over its event stream
 *   /pipeline?name=P  pipeline.html  a pipeline's history
 *   /hosts            hosts.html     agent health per host, activity and sweep findings
 *   /static/NAME      the pages' scripts and styles (web/assets.h)
 *   /api/...          the JSON API (web/api.h, docs/web.md)
 *   /api/runs/N/events  Server-Sent Events: the run's row changed
 *   /metrics          Prometheus text
 *
 * Every request needs the token (web/auth.h): 401 without one, 403 with
 * a wrong one; "?token=" on a page sets the cookie and redirects (303) to
 * the same page without it. Every answer carries a Content-Security-Policy
 * that allows this origin's scripts, styles and requests and nothing else.
 *
 * The lake is one read-only connection, used by one request at a time
 * (a mutex): the dashboard's reads are short, and SQLite's connection is
 * not to be shared by threads at once.
 */
#ifndef TRACER_WEB_WEB_SERVER_H
#define TRACER_WEB_WEB_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "auth.h"
#include "store.h"

#define WEB_DEFAULT_CONNECTIONS 64u  /* at once, event streams included */
#define WEB_DEFAULT_PER_IP 32u
#define WEB_DEFAULT_TIMEOUT_S 60u    /* a connection idle this long is closed (streams ping every 15 s) */
#define WEB_STREAM_POLL_MS 1000u     /* how often a stream looks at its run */
#define WEB_STREAM_PING_S 15u
#define WEB_JSON_MAX ((size_t)1 << 30) /* one answer, at most */

struct web_config {
	const char *listen;              /* "ADDR:PORT", "[ADDR6]:PORT" */
	unsigned max_connections;        /* 0: WEB_DEFAULT_CONNECTIONS */
	unsigned timeout_s;              /* 0: WEB_DEFAULT_TIMEOUT_S */
	/* /api/sweep: tracer.conf's sweep_* thresholds and sweep_window (docs/sweep.md), as tracer sweep's */
	const struct sw_config *sweep;   /* copied; NULL: sw_config_default() */
	int64_t sweep_window_ns;         /* when ?since= is not given; 0: sweep_window's default */
};

struct web;

/* Bind and listen (no thread yet): 0, or -errno with err saying what failed and what to do. */
int web_listen(struct web **out, const struct web_config *c, struct store *st, const struct auth *a, char *err,
	       size_t errlen);
/* The lake, once opened (after the privilege drop that follows web_listen). */
void web_set_store(struct web *w, struct store *st);
/*
 * The price table /api/sweep prices hosts with, loaded once at start, and
 * its path (both the caller's, alive until web_stop; NULL: none).
 */
void web_set_prices(struct web *w, const struct price_table *table, const char *path);
/* Start serving (libmicrohttpd's threads inherit the caller's credentials and filters). */
int web_serve(struct web *w, char *err, size_t errlen);
uint16_t web_port(const struct web *w);
const char *web_address(const struct web *w);
void web_get_stats(struct web *w, struct api_web_stats *s);
/* Stop: event streams end within WEB_STREAM_POLL_MS; then every thread is joined. */
void web_stop(struct web *w);

#endif /* TRACER_WEB_WEB_SERVER_H */
