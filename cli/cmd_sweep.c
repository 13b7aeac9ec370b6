/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer sweep: where compute is wasted - idle hosts, idle time inside
 * runs, workers stuck idle, forgotten interactive sessions, idle processes
 * holding memory - each with its evidence and its cost (docs/sweep.md).
 *
 *   tracer sweep --db FILE [--since DURATION] [--prices FILE] [--json]
 *
 * The window is the DURATION before the lake's newest word from any host
 * (default: tracer.conf's sweep_window, 14 days); the thresholds are
 * tracer.conf's sweep_* keys (--config FILE, else /etc/tracer/tracer.conf
 * when it exists, else the defaults: the anchors' values). Hosts are priced
 * as tracer cost prices them: their price_per_hour, else the price table.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_sweep.h"
#include "config.h"
#include "json.h"
#include "parse.h"
#include "prices_file.h"
#include "sweep.h"
#include "sweep_input.h"
#include "textout.h"

#define NS_PER_S 1000000000.0

struct sweep_opts {
	const char *db, *prices, *config;
	int64_t since_ns;            /* 0: the config's sweep_window */
	bool json;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer sweep --db FILE [--since DURATION] [--prices FILE] [--config FILE] [--json]\n"
		   "Where compute was wasted in the window before the lake's newest word (default: sweep_window,\n"
		   "14 days): idle hosts (GCP's and AWS's rules), idle time inside runs, workers stuck idle,\n"
		   "forgotten interactive sessions, idle processes holding memory; each with its evidence and\n"
		   "cost (docs/sweep.md). Thresholds: tracer.conf's sweep_* keys (--config FILE, else\n"
		   "/etc/tracer/tracer.conf if it exists). --prices: a price table (default: the installed one).\n");
}

/* A duration as tracer.conf takes it ("36h", "90m", "2.5s"), or whole days ("14d"). 0 or -1. */
static int parse_days(const char *s, uint64_t *ns)
{
	size_t n = strlen(s);
	uint64_t days;

	if (n > 1 && s[n - 1] == 'd') {
		char digits[24];

		if (n - 1 >= sizeof(digits))
			return -1;
		memcpy(digits, s, n - 1);
		digits[n - 1] = 0;
		if (parse_u64(digits, 100000, &days))
			return -1;
		*ns = days * 86400 * PARSE_NS_PER_S;
		return 0;
	}
	return parse_duration(s, PARSE_UNITS, ns) == PARSE_OK ? 0 : -1;
}

static int parse_opts(int argc, char **argv, struct sweep_opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },     { "since", required_argument, NULL, 's' },
		{ "prices", required_argument, NULL, 'P' }, { "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },         { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t ns;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->db = optarg; break;
		case 'P': o->prices = optarg; break;
		case 'c': o->config = optarg; break;
		case 'j': o->json = true; break;
		case 's':
			if (parse_days(optarg, &ns) || ns == 0 || ns > (uint64_t)INT64_MAX / 2) {
				fprintf(stderr, "tracer sweep: --since %s: want a duration such as 14d, 36h, 90m\n", optarg);
				return 2;
			}
			o->since_ns = (int64_t)ns;
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (!o->db || optind < argc) {
		fprintf(stderr, "tracer sweep: %s\n", o->db ? "unexpected argument" : "--db FILE is required");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The thresholds: tracer.conf's sweep_* keys (the defaults are the anchors'). */
static int load_config(const struct sweep_opts *o, struct sw_config *c, int64_t *window_ns)
{
	static struct tracer_config cfg;
	const char *path = o->config;

	if (!path && access(CONFIG_DEFAULT_PATH, R_OK) == 0)
		path = CONFIG_DEFAULT_PATH;
	if (config_from_options(&cfg, path, false, NULL, 0))
		return 1;
	sweep_config_from(&cfg, c);
	*window_ns = (int64_t)cfg.sweep_window_ns;
	return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

static const char *host_name(const struct sweep_input *si, uint32_t h)
{
	return h < si->in.nhosts ? si->in.hosts[h].host_id : NULL;
}

static void json_cost(struct json *j, const struct sw_finding *f)
{
	json_key(j, "cost");
	json_object_begin(j);
	json_kv_double(j, "usd", f->cost_usd >= 0 ? f->cost_usd : NAN);
	json_kv_double(j, "price_per_hour", f->price_per_hour >= 0 ? f->price_per_hour : NAN);
	json_kv_string(j, "price_source", cost_price_source_name(f->price_source));
	json_object_end(j);
}

static void json_evidence(struct json *j, const struct sweep_input *si, const struct sw_finding *f)
{
	const struct sw_process *p = f->proc >= 0 ? &si->in.procs[f->proc] : NULL;

	json_key(j, "evidence");
	json_object_begin(j);
	json_kv_string(j, "text", f->evidence);
	json_kv_double(j, "observed_s", f->observed_s);
	if (f->kind == SW_IDLE_HOST_GCP) {
		json_kv_double(j, "cpu_idle_share", f->idle_share_cpu);
		json_kv_double(j, "net_idle_share", f->idle_share_net);
	}
	if (f->kind == SW_IDLE_HOST_AWS) {
		json_kv_u64(j, "low_days", f->low_days);
		json_kv_u64(j, "days", f->days);
	}
	if (f->rss_bytes)
		json_kv_u64(j, "rss_bytes", f->rss_bytes);
	if (p) {
		json_key(j, "process");
		json_object_begin(j);
		json_key(j, "pid");
		json_i64(j, p->pid);
		json_kv_string(j, "exe", p->exe);
		json_kv_string(j, "tool", p->tool);
		json_kv_string(j, "command", p->cmdline);
		json_key(j, "start_ns");
		json_i64(j, p->start_ns);
		json_key(j, "last_active_ns");
		json_i64(j, p->last_active_ns);
		json_object_end(j);
	}
	json_object_end(j);
}

static int emit_json(const struct sweep_input *si, const struct sw_config *c, const char *prices,
		     const struct sw_finding *f, size_t n)
{
	char buf[64 << 10];
	struct obuf o;
	struct json j;
	double total = 0;
	int err;

	fflush(stdout);
	obuf_init_fd(&o, STDOUT_FILENO, buf, sizeof(buf));
	json_init(&j, &o);
	json_object_begin(&j);
	json_kv_string(&j, "schema", "tracer.sweep.v1");
	json_key(&j, "since_ns");
	json_i64(&j, si->in.since_ns);
	json_key(&j, "now_ns");
	json_i64(&j, si->in.now_ns);
	json_kv_string(&j, "prices_file", prices);
	json_key(&j, "thresholds");
	json_object_begin(&j);
	json_kv_double(&j, "gcp_cpu_cores", c->gcp_cpu_cores);
	json_kv_double(&j, "gcp_cpu_share", c->gcp_cpu_share);
	json_kv_double(&j, "gcp_rx_bytes_per_s", c->gcp_rx_bytes_per_s);
	json_kv_double(&j, "gcp_tx_bytes_per_s", c->gcp_tx_bytes_per_s);
	json_kv_double(&j, "gcp_net_share", c->gcp_net_share);
	json_kv_double(&j, "gcp_min_observed_s", (double)c->gcp_min_observed_ns / NS_PER_S);
	json_kv_double(&j, "aws_cpu_percent", c->aws_cpu_percent);
	json_kv_u64(&j, "aws_net_bytes", c->aws_net_bytes);
	json_kv_u64(&j, "aws_days", c->aws_days);
	json_kv_u64(&j, "aws_window_days", c->aws_window_days);
	json_kv_double(&j, "aws_day_s", (double)c->aws_day_ns / NS_PER_S);
	json_kv_double(&j, "run_idle_min_s", (double)c->run_idle_min_ns / NS_PER_S);
	json_kv_double(&j, "worker_idle_s", (double)c->worker_idle_ns / NS_PER_S);
	json_kv_double(&j, "session_idle_s", (double)c->session_idle_ns / NS_PER_S);
	json_kv_double(&j, "idle_process_age_s", (double)c->idle_proc_age_ns / NS_PER_S);
	json_kv_double(&j, "idle_process_idle_s", (double)c->idle_proc_idle_ns / NS_PER_S);
	json_kv_u64(&j, "idle_process_rss_bytes", c->idle_proc_rss_bytes);
	json_object_end(&j);
	json_key(&j, "hosts");
	json_array_begin(&j);
	for (size_t h = 0; h < si->in.nhosts; h++) {
		const struct sw_host *sh = &si->in.hosts[h];
		double observed = 0;

		for (size_t b = 0; b < sh->nbeats; b++)
			observed += (double)(sh->beats[b].end_ns - sh->beats[b].start_ns) / NS_PER_S;
		json_object_begin(&j);
		json_kv_string(&j, "host", sh->host_id);
		json_kv_u64(&j, "beats", sh->nbeats);
		json_kv_double(&j, "observed_s", observed);
		json_kv_string(&j, "instance_type", sh->host.instance_type);
		json_kv_string(&j, "region", sh->host.region);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "findings");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "kind", sw_kind_name(f[i].kind));
		json_kv_string(&j, "host", host_name(si, f[i].host));
		json_key(&j, "start_ns");
		json_i64(&j, f[i].start_ns);
		json_key(&j, "end_ns");
		json_i64(&j, f[i].end_ns);
		json_kv_double(&j, "duration_s", (double)(f[i].end_ns - f[i].start_ns) / NS_PER_S);
		json_key(&j, "run_id");
		if (f[i].run_id >= 0)
			json_i64(&j, f[i].run_id);
		else
			json_null(&j);
		json_evidence(&j, si, &f[i]);
		json_cost(&j, &f[i]);
		json_object_end(&j);
		if (f[i].cost_usd > 0)
			total += f[i].cost_usd;
	}
	json_array_end(&j);
	json_kv_double(&j, "total_cost_usd", total);
	json_object_end(&j);
	obuf_putc(&o, '\n');
	err = obuf_flush(&o);
	if (err)
		fprintf(stderr, "tracer sweep: cannot write the output: %s\n", strerror(-err));
	return err ? 1 : 0;
}

static void text_span(char *out, size_t len, double s)
{
	if (s < 120)
		snprintf(out, len, "%.0f s", s);
	else if (s < 2 * 3600)
		snprintf(out, len, "%.0f min", s / 60);
	else if (s < 2 * 86400)
		snprintf(out, len, "%.1f h", s / 3600);
	else
		snprintf(out, len, "%.1f d", s / 86400);
}

static void emit_text(const char *db, const struct sweep_input *si, const char *prices, const struct sw_finding *f,
		      size_t n)
{
	char start[32], span[32];
	double total = 0;
	size_t unpriced = 0;

	printf("sweep of %s: %zu host%s", db, si->in.nhosts, si->in.nhosts == 1 ? "" : "s");
	format_time(start, sizeof(start), (struct store_int){ .known = true, .v = si->in.since_ns });
	printf(", since %s UTC", start);
	text_span(span, sizeof(span), (double)(si->in.now_ns - si->in.since_ns) / NS_PER_S);
	printf(" (%s)\n", span);
	if (!n) {
		printf("no waste found (the rules and their thresholds: docs/sweep.md)\n");
		return;
	}
	printf("\n%-20s %-12s %-19s %10s %10s  %s\n", "KIND", "HOST", "FROM (UTC)", "SPAN", "COST", "EVIDENCE");
	for (size_t i = 0; i < n; i++) {
		const char *h = host_name(si, f[i].host);
		char cost[32];

		format_time(start, sizeof(start), (struct store_int){ .known = true, .v = f[i].start_ns });
		text_span(span, sizeof(span), (double)(f[i].end_ns - f[i].start_ns) / NS_PER_S);
		if (f[i].cost_usd >= 0.01 || f[i].cost_usd == 0)
			snprintf(cost, sizeof(cost), "$%.2f", f[i].cost_usd);
		else if (f[i].cost_usd > 0)
			snprintf(cost, sizeof(cost), "$%.4f", f[i].cost_usd);
		else
			snprintf(cost, sizeof(cost), "unpriced");
		printf("%-20s %-12.12s %-19s %10s %10s  ", sw_kind_name(f[i].kind), h ? h : "-", start, span, cost);
		put_clean(f[i].evidence, false);
		putchar('\n');
		if (f[i].cost_usd > 0)
			total += f[i].cost_usd;
		else if (f[i].cost_usd < 0)
			unpriced++;
	}
	printf("\n%zu finding%s, $%.*f in all", n, n == 1 ? "" : "s", total > 0 && total < 0.01 ? 4 : 2, total);
	if (unpriced)
		printf(" (%zu unpriced: set instance_type and region, or price_per_hour, in the host's tracer.conf; "
		       "price table %s)", unpriced, prices ? prices : "none found");
	putchar('\n');
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_opts o = { 0 };
	struct price_table table = { 0 };
	struct sweep_input si;
	struct sw_finding *f = NULL;
	struct sw_config c;
	struct store *st = NULL;
	char err[1024], prices[PATH_MAX];
	bool have_table = false;
	int64_t window_ns = 0, now_ns = 0;
	size_t n = 0;
	int rc = parse_opts(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (load_config(&o, &c, &window_ns))
		return 1;
	if (o.since_ns)
		window_ns = o.since_ns;
	if (o.prices) {
		snprintf(prices, sizeof(prices), "%s", o.prices);
		if (price_table_load(prices, &table))
			return 1;
		have_table = true;
	} else {
		int found = cost_default_table(&table, prices, sizeof(prices));

		if (found < 0)
			return 1;
		have_table = found == 1;
	}
	if (store_open(&st, o.db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer sweep: %s\n", err);
		price_table_free(&table);
		return 1;
	}
	rc = store_sweep_newest(st, &now_ns);
	if (rc) {
		fprintf(stderr, "tracer sweep: %s: %s: %s\n", o.db, store_strerror(rc), store_last_error(st));
		rc = 1;
	} else if (sweep_input_load(st, now_ns - window_ns, now_ns, &si, err, sizeof(err))) {
		fprintf(stderr, "tracer sweep: %s: %s\n", o.db, err);
		rc = 1;
	}
	store_close(st);
	if (!rc) {
		rc = sw_sweep(&si.in, &c, have_table ? &table : NULL, &f, &n);
		if (rc)
			fprintf(stderr, "tracer sweep: %s\n", strerror(-rc));
		else if (o.json)
			rc = emit_json(&si, &c, have_table ? prices : NULL, f, n);
		else
			emit_text(o.db, &si, have_table ? prices : NULL, f, n);
		sweep_input_free(&si);
	}
	free(f);
	price_table_free(&table);
	return rc ? 1 : 0;
}
