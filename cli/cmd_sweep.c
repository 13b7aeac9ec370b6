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
#include <limits.h>
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
#include "sweep_json.h"
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
		   "forgotten interactive sessions, idle processes holding memory, steps whose CPU or memory\n"
		   "limit was far above their use; each with its evidence and cost (docs/sweep.md).\n"
		   "Thresholds: tracer.conf's sweep_* keys (--config FILE, else /etc/tracer/tracer.conf if it\n"
		   "exists). --prices: a price table (default: the installed one).\n");
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
			if (sweep_parse_window(optarg, &ns)) {
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

/* The tracer.sweep.v1 document (view/sweep_json.h), as tracer-web's /api/sweep writes it, on stdout. */
static int emit_json(const struct sweep_input *si, const struct sw_config *c, const char *prices,
		     const struct sw_finding *f, size_t n)
{
	char buf[64 << 10];
	struct obuf o;
	struct json j;
	int err;

	fflush(stdout);
	obuf_init_fd(&o, STDOUT_FILENO, buf, sizeof(buf));
	json_init(&j, &o);
	sweep_json_write(&j, si, c, prices, f, n);
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
		const char *h = sweep_finding_host(si, &f[i]);
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
	char err[1024], prices[PATH_MAX], shown[512];
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
	if (price_table_choose(o.prices, &table, prices, sizeof(prices), &have_table))
		return 1;
	if (store_open(&st, o.db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer sweep: %s\n", err);
		price_table_free(&table);
		return 1;
	}
	/* from here on, messages name the lake as store_display_name() shows it: a URI's password starred */
	store_display_name(o.db, shown, sizeof(shown));
	o.db = shown;
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
