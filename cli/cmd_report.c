/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer report: what the lake holds about runs, read through the lake's
 * own module (lake/store.h), read-only.
 *
 *   tracer report --db FILE         one line per run: id, host, start, duration, exit code, command
 *   tracer report --db FILE RUN     that run's summary as tracer run printed it, then its signals
 *
 * RUN is the number in the first column, or the pipeline's run id.
 * Everything printed came from a host: control characters are shown as
 * '?', so a command line cannot drive the terminal.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd_report.h"
#include "store.h"

#define HOST_SHORT 12 /* hex digits of a host id in the list, as git shortens hashes */

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer report --db FILE [RUN]\n"
		   "Lists the runs in the lake FILE (the --db of tracer-ingest); with RUN (a number from the\n"
		   "list, or the pipeline's run id), prints that run's summary and its signals.\n");
}

/* s with control characters shown as '?' (but newlines and tabs when multiline). */
static void put_clean(const char *s, bool multiline)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && !(multiline && (c == '\n' || c == '\t'))) || c == 0x7f)
			c = '?';
		putchar(c);
	}
}

static void format_time(char *out, size_t outlen, bool known, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!known || !gmtime_r(&t, &tm)) {
		snprintf(out, outlen, "-");
		return;
	}
	strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm);
}

static void format_duration(char *out, size_t outlen, const struct store_run *r)
{
	if (!r->has_start || !r->has_end || r->end_ns < r->start_ns)
		snprintf(out, outlen, "-");
	else
		snprintf(out, outlen, "%.1fs", (double)(r->end_ns - r->start_ns) / 1e9);
}

static int print_run_line(void *ctx, const struct store_run *r)
{
	char start[32], dur[32], exit_code[24];
	int *rows = ctx;

	if ((*rows)++ == 0)
		printf("%-5s %-*s %-19s %10s %5s  %s\n", "RUN", HOST_SHORT, "HOST", "START (UTC)", "DURATION", "EXIT",
		       "COMMAND");
	format_time(start, sizeof(start), r->has_start, r->start_ns);
	format_duration(dur, sizeof(dur), r);
	if (r->has_exit)
		snprintf(exit_code, sizeof(exit_code), "%" PRId64, r->exit_code);
	else
		snprintf(exit_code, sizeof(exit_code), "-");
	printf("%-5" PRId64 " %-*.*s %-19s %10s %5s  ", r->run_id, HOST_SHORT, HOST_SHORT, r->host_id, start, dur,
	       exit_code);
	put_clean(r->command, false);
	putchar('\n');
	return 0;
}

static int print_signal(void *ctx, const struct store_signal *sig)
{
	int *n = ctx;

	if ((*n)++ == 0)
		printf("\nsignals:\n");
	printf("  ");
	put_clean(sig->kind, false);
	if (sig->has_pid)
		printf(" pid %" PRId64, sig->pid);
	if (sig->step) {
		printf(" step ");
		put_clean(sig->step, false);
	}
	if (sig->tool) {
		printf(" tool ");
		put_clean(sig->tool, false);
	}
	if (sig->detail) {
		printf("  ");
		put_clean(sig->detail, false);
	}
	putchar('\n');
	return 0;
}

struct one_run {
	int64_t run_id;
	bool found;
};

static int print_summary(void *ctx, const struct store_run *r)
{
	struct one_run *o = ctx;

	if (o->found)
		return 0; /* a pipeline run id named several runs: the first */
	o->found = true;
	o->run_id = r->run_id;
	if (r->summary) {
		put_clean(r->summary, true);
		if (r->summary[0] && r->summary[strlen(r->summary) - 1] != '\n')
			putchar('\n');
	} else {
		printf("(the report of run %" PRId64 " carried no summary)\n", r->run_id);
	}
	return 0;
}

static int show_run(struct store *st, const char *db, const char *name)
{
	struct one_run o = { 0 };
	int n = 0, rc = store_run(st, name, print_summary, &o);

	if (rc == STORE_E_NOT_FOUND) {
		fprintf(stderr, "tracer report: no run '%s' in %s (tracer report --db %s lists them)\n", name, db, db);
		return 1;
	}
	if (!rc)
		rc = store_run_signals(st, o.run_id, print_signal, &n);
	if (rc) {
		fprintf(stderr, "tracer report: %s: %s: %s\n", db, store_strerror(rc), store_last_error(st));
		return 1;
	}
	if (n == 0)
		printf("\nsignals: none\n");
	return 0;
}

static int list_runs(struct store *st, const char *db)
{
	int rows = 0, rc = store_runs(st, print_run_line, &rows);

	if (rc) {
		fprintf(stderr, "tracer report: %s: %s: %s\n", db, store_strerror(rc), store_last_error(st));
		return 1;
	}
	if (rows == 0)
		printf("no runs in %s yet\n", db);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db = NULL, *run = NULL;
	struct store *st = NULL;
	char err[1024];
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'd') {
			db = optarg;
		} else if (opt == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		run = argv[optind++];
	if (!db || optind < argc) {
		fprintf(stderr, "tracer report: %s\n", db ? "one RUN at most" : "--db FILE is required");
		usage(stderr);
		return 2;
	}
	if (store_open(&st, db, true, err, sizeof(err))) {
		fprintf(stderr, "tracer report: %s\n", err);
		return 1;
	}
	rc = run ? show_run(st, db, run) : list_runs(st, db);
	store_close(st);
	return rc;
}
