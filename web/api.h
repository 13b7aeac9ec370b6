/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's JSON API (docs/web.md, "JSON API"): each call reads the lake
 * through its read calls (lake/store.h) and writes one JSON document
 * through records/json.h's writer, which escapes every string a host sent.
 * The pages are drawn in the browser from exactly these documents.
 *
 * Returns: 0; API_E_NOT_FOUND (no such run, pipeline or host: 404); -ENOMEM;
 * -EIO; or a store_err (the lake failed: 500, logged with store_last_error).
 * API_E_BAD_ARG (400) is the router's, for an argument that cannot be.
 */
#ifndef TRACER_WEB_API_H
#define TRACER_WEB_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "json.h"
#include "store.h"
#include "sweep.h"

#define API_E_NOT_FOUND (-1000)
#define API_E_BAD_ARG (-1001)
#define API_RUNS_DEFAULT 200     /* runs in a list when the request says no limit */
#define API_RUNS_MAX 5000
#define API_HISTORY_RUNS 100     /* a pipeline's newest runs its page shows */
#define API_FILTER_VALUES 500    /* distinct pipelines (hosts, states) the filters offer, at most */

/* /api/runs: NULL or "" for no filter; host matches a prefix of the host id. */
struct api_runs_query {
	const char *pipeline, *host, *state;
	uint32_t limit;          /* 0: API_RUNS_DEFAULT */
};

int api_runs(struct store *st, struct json *j, const struct api_runs_query *q);
/* /api/runs/ID: the run's tracer.run.v1 report with its analysis, as tracer report --json writes it. */
int api_run(struct store *st, struct json *j, int64_t run_id);
/* /api/runs/ID/page: what the run page draws (view/html_data.h: the HTML report's data), into o. */
int api_run_page(struct store *st, struct obuf *o, int64_t run_id);
#define API_REPORT_MAX ((size_t)4 << 30) /* a run's report, held while its page data is made */
/* /api/pipelines and /api/pipeline?name=P. */
int api_pipelines(struct store *st, struct json *j);
int api_pipeline(struct store *st, struct json *j, const char *name);
/* /api/hosts; now_ns: CLOCK_REALTIME. */
int api_hosts(struct store *st, struct json *j, int64_t now_ns);

/* /api/hosts/activity: a host's heartbeats, at most this many (more: bucketed), by default over the last day. */
#define API_ACTIVITY_BEATS 5000
#define API_ACTIVITY_WINDOW_NS (24 * 3600 * 1000000000LL)
/*
 * The host's heartbeats that end in the window_ns before the lake's newest
 * word, oldest first (tracer.web.activity.v1); API_E_NOT_FOUND when the lake
 * has no beat of the host at all.
 */
int api_host_activity(struct store *st, struct json *j, const char *host, int64_t window_ns);

/* /api/sweep: tracer sweep --json's document with these (tracer.conf's, loaded once at start). */
struct api_sweep {
	struct sw_config thresholds;        /* sweep_* */
	const struct price_table *table;    /* NULL: none */
	const char *prices_file;            /* the table's path; NULL: none */
};
/* Over the window_ns before the lake's newest word; API_E_NOT_FOUND when the lake has no word yet. */
int api_sweep(struct store *st, struct json *j, const struct api_sweep *s, int64_t window_ns);

/* What the event stream of a run watches: a change of any of these is an update. */
struct api_run_status {
	int64_t run_id;
	char state[16];
	struct store_int update_seq, last_update_ns, processes, steps, end_ns;
	bool final;              /* its state will not change: succeeded, failed, lost */
};
int api_run_status(struct store *st, int64_t run_id, struct api_run_status *s);
bool api_run_status_same(const struct api_run_status *a, const struct api_run_status *b);
void api_run_status_json(struct json *j, const struct api_run_status *s);

/* The web server's own counters, for /metrics. */
struct api_web_stats {
	uint64_t requests, unauthorized, forbidden, not_found, errors, streams_open;
};
/*
 * /metrics' bounds on what hosts name (docs/web.md): step names per pipeline (the most recently ended first;
 * the rest as step "other"), and a label value's bytes (longer: cut, with a hash of the whole). The
 * pipelines' cap is the lake's, STORE_WEB_PIPELINES_MAX.
 */
#define API_METRICS_STEPS_MAX 50
#define API_METRICS_LABEL_MAX 120
/* /metrics: Prometheus text format 0.0.4. */
int api_metrics(struct store *st, struct obuf *o, const struct api_web_stats *w, int64_t now_ns);

#endif /* TRACER_WEB_API_H */
