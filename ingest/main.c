/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-ingest: receives signed batches over HTTP and stores them in the
 * lake. docs/lake.md describes the API, the limits, the keys file and the
 * schema.
 *
 * Threads: libmicrohttpd's polling thread serves requests and writes the
 * lake; this thread waits for signals (blocked everywhere, taken with
 * sigwaitinfo): SIGHUP reloads the keys file, SIGTERM/SIGINT stop.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "ingest.h"
#include "keys.h"
#include "server.h"
#include "store.h"

struct options {
	struct server_config server;
	const char *db;
	const char *keys;
	int ready_fd;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracer-ingest --listen ADDR:PORT --db FILE --keys FILE [options]\n"
		"  --listen ADDR:PORT      address to serve on, exactly (127.0.0.1:8443, [::1]:8443; port 0: any free)\n"
		"  --db FILE               the lake (SQLite; created if missing)\n"
		"  --keys FILE             enrolled public keys, one 'tracer-public-key-v1 ...' line each\n"
		"  --max-body BYTES        largest batch accepted (default and most: %u)\n"
		"  --max-connections N     connections at once (default %u)\n"
		"  --max-per-ip N          connections at once from one address (default %u)\n"
		"  --timeout S             close a connection idle this long (default %u; a whole request gets %ux)\n"
		"  --max-memory BYTES      request bodies held in memory at once (default %u)\n"
		"  --ready-fd FD           write \"ready PORT\\n\" to FD once serving, then close it\n"
		"signals: SIGHUP reloads --keys (all or nothing), SIGTERM/SIGINT stop\n",
		BATCH_MAX_WIRE, SERVER_DEFAULT_CONNECTIONS, SERVER_DEFAULT_PER_IP, SERVER_DEFAULT_TIMEOUT_S,
		SERVER_REQUEST_DEADLINE_FACTOR, SERVER_DEFAULT_MEMORY);
}

/* A whole number in [min, max]; 0 or -1 with a message. */
static int parse_number(const char *opt, const char *s, unsigned long long min, unsigned long long max,
			unsigned long long *out)
{
	char *end = NULL;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || *out < min || *out > max) {
		fprintf(stderr, "tracer-ingest: %s %s: want a whole number from %llu to %llu\n", opt, s, min, max);
		return -1;
	}
	return 0;
}

enum { OPT_MAX_BODY = 256, OPT_MAX_CONN, OPT_MAX_PER_IP, OPT_TIMEOUT, OPT_MAX_MEMORY, OPT_READY_FD };

static int parse_option(struct options *o, int opt, const char *arg)
{
	unsigned long long v = 0;
	int rc = 0;

	switch (opt) {
	case 'l': o->server.listen = arg; break;
	case 'd': o->db = arg; break;
	case 'k': o->keys = arg; break;
	case OPT_MAX_BODY:
		rc = parse_number("--max-body", arg, sizeof(struct batch_header) + BATCH_SIG_LEN, BATCH_MAX_WIRE, &v);
		o->server.max_body = (size_t)v;
		break;
	case OPT_MAX_CONN:
		rc = parse_number("--max-connections", arg, 1, 100000, &v);
		o->server.max_connections = (unsigned)v;
		break;
	case OPT_MAX_PER_IP:
		rc = parse_number("--max-per-ip", arg, 1, 100000, &v);
		o->server.max_per_ip = (unsigned)v;
		break;
	case OPT_TIMEOUT:
		rc = parse_number("--timeout", arg, 1, 3600, &v);
		o->server.timeout_s = (unsigned)v;
		break;
	case OPT_MAX_MEMORY:
		rc = parse_number("--max-memory", arg, 1u << 20, 1ull << 40, &v);
		o->server.max_memory = (size_t)v;
		break;
	case OPT_READY_FD:
		rc = parse_number("--ready-fd", arg, 0, 1 << 20, &v);
		o->ready_fd = (int)v;
		break;
	default: return -1;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "db", required_argument, NULL, 'd' },
		{ "keys", required_argument, NULL, 'k' },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
		{ "max-per-ip", required_argument, NULL, OPT_MAX_PER_IP },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "ready-fd", required_argument, NULL, OPT_READY_FD },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->ready_fd = -1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			exit(0);
		}
		if (opt == '?' || parse_option(o, opt, optarg)) {
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tracer-ingest: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (!o->server.listen || !o->db || !o->keys) {
		fprintf(stderr, "tracer-ingest: --listen, --db and --keys are required\n");
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Note the file's keys in the lake's keys table: which key signed a batch stays answerable. */
static void note_keys(struct store *st, const struct keyring *kr)
{
	uint64_t now = ingest_now_ns();

	for (size_t i = 0; i < kr->n; i++) {
		const struct key_entry *e = &kr->v[i];

		if (store_note_file_key(st, e->key_id, e->public_key, e->bound ? e->host_id : NULL, now))
			fprintf(stderr, "<4>cannot note key %zu of the keys file in the lake: %s\n", i,
				store_last_error(st));
	}
}

static int load_keys(const char *path, struct keyring *kr)
{
	char err[512];
	int rc = keys_load_file(kr, path, err, sizeof(err));

	if (rc)
		fprintf(stderr, "<3>keys: %s\n", err);
	return rc;
}

/* SIGHUP: all or nothing; on error the keys in force stay. */
static void reload_keys(struct ingest *ig, const char *path)
{
	struct keyring kr = { 0 };
	size_t n;

	if (load_keys(path, &kr)) {
		fprintf(stderr, "<3>keys not reloaded: the previous %zu keys stay in force\n", ig->keys.n);
		return;
	}
	n = kr.n;
	ingest_set_keys(ig, &kr);
	fprintf(stderr, "<6>keys reloaded from %s: %zu keys\n", path, n);
}

static void announce_ready(struct server *srv, int ready_fd)
{
	char line[32];
	int n;

	fprintf(stderr, "<6>listening on %s\n", server_address(srv));
	if (ready_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "ready %u\n", server_port(srv));
	if (write(ready_fd, line, (size_t)n) != n)
		fprintf(stderr, "<4>--ready-fd %d: %s\n", ready_fd, strerror(errno));
	close(ready_fd);
}

static void wait_for_stop(struct ingest *ig, const char *keys_path, const sigset_t *set)
{
	for (;;) {
		int sig = sigwaitinfo(set, NULL);

		if (sig == SIGHUP) {
			reload_keys(ig, keys_path);
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			fprintf(stderr, "<6>stopping (%s)\n", strsignal(sig));
			return;
		}
	}
}

static void log_totals(const struct ingest *ig, const struct server_stats *ss)
{
	fprintf(stderr, "<6>batches stored %llu, duplicate %llu, refused %llu; records new %llu, duplicate %llu; "
		"store errors %llu; too big %llu, no memory %llu, too slow %llu, idle timeouts %llu\n",
		(unsigned long long)ig->stats.stored, (unsigned long long)ig->stats.duplicates,
		(unsigned long long)ig->stats.refused, (unsigned long long)ig->stats.records_new,
		(unsigned long long)ig->stats.records_duplicate, (unsigned long long)ig->stats.store_errors,
		(unsigned long long)ss->too_big, (unsigned long long)ss->no_memory, (unsigned long long)ss->too_slow,
		(unsigned long long)ss->timeouts);
}

static int serve(const struct options *o, struct ingest *ig)
{
	struct server *srv = NULL;
	struct server_stats ss;
	char err[512];
	sigset_t set;

	/* Blocked before the HTTP thread starts, so that it inherits the mask and only this thread takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (server_start(&srv, &o->server, ig, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 1;
	}
	announce_ready(srv, o->ready_fd);
	wait_for_stop(ig, o->keys, &set);
	server_get_stats(srv, &ss);
	server_stop(srv);
	log_totals(ig, &ss);
	return 0;
}

int main(int argc, char **argv)
{
	struct keyring kr = { 0 };
	struct store *st = NULL;
	struct options o;
	struct ingest ig;
	char err[512];
	int rc;

	if (parse_args(argc, argv, &o))
		return 2;
	if (batch_crypto_init()) {
		fprintf(stderr, "<3>libsodium failed to initialise\n");
		return 1;
	}
	if (load_keys(o.keys, &kr))
		return 1;
	if (store_open(&st, o.db, false, err, sizeof(err))) {
		fprintf(stderr, "<3>lake: %s\n", err);
		keys_free(&kr);
		return 1;
	}
	note_keys(st, &kr);
	if (kr.n == 0)
		fprintf(stderr, "<4>%s enrols no key: every batch will be refused until keys are added (then SIGHUP)\n",
			o.keys);
	fprintf(stderr, "<6>lake %s, %zu keys from %s\n", o.db, kr.n, o.keys);
	if (ingest_init(&ig, st, &kr)) {
		keys_free(&kr);
		store_close(st);
		return 1;
	}
	rc = serve(&o, &ig);
	ingest_destroy(&ig);
	store_close(st);
	return rc;
}
