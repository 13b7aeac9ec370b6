/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web: a read-only web dashboard over the lake (docs/web.md): the
 * runs, live and finished; a run's report, updating live; a pipeline's
 * history; agent health per host; the same data as JSON; /metrics.
 *
 * Start-up, in this order: options (and tracer.conf with --config: also the
 * sweep's thresholds and window, for /api/sweep); the
 * token file; the listening socket (a port below 1024 needs root); the
 * privilege drop (started as root: to --user, else to the lake's owner,
 * never root); the lake, opened read-only as that user; the price table,
 * loaded once (for /api/sweep; the run pages' analysis reads it again per
 * request); the sandbox
 * (Landlock: read-only beneath the lake's and the price table's
 * directories; seccomp); libmicrohttpd's threads, which inherit it; then
 * "ready PORT" on --ready-fd and READY=1 to systemd. This thread then
 * waits for SIGTERM or SIGINT.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "clock.h"
#include "config.h"
#include "daemon_args.h"
#include "notify.h"
#include "prices_file.h"
#include "priv.h"
#include "serve.h"
#include "web_server.h"
#include "store.h"
#include "sweep_input.h"
#include "testtrigger.h"
#include "web_sandbox.h"

enum { EXPLICIT_LISTEN = 1u << 0, EXPLICIT_DB = 1u << 1, EXPLICIT_TOKEN = 1u << 2 };

struct options {
	struct web_config web;
	struct sw_config sweep;          /* web.sweep points to it */
	struct daemon_args args;         /* the options tracer-ingest has too */
	const char *db, *token_file;
	unsigned explicit;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracer-web --db FILE --listen ADDR:PORT --token-file FILE [options]\n"
		"       tracer-web --config FILE [--set KEY=VALUE]... [options]\n"
		"A read-only web dashboard over the lake FILE (docs/web.md).\n"
		"  --db FILE               the lake tracer-ingest writes (opened read-only)\n"
		"  --listen ADDR:PORT      address to serve on, exactly (127.0.0.1:8760, [::1]:8760; port 0: any free)\n"
		"  --token-file FILE       the token a browser or client must show (mode 0600; make one with\n"
		"                          openssl rand -hex 32 > FILE); open http://ADDR:PORT/?token=TOKEN once\n"
		"  --max-connections N     connections at once, event streams included (default %u)\n"
		"  --ready-fd FD           write \"ready PORT\\n\" to FD once serving, then close it\n"
		"  --user NAME|UID         started as root: the user to run as (default: the lake's owner); never root\n"
		"  --config FILE           take web_listen, ingest_db and web_token_file from FILE (docs/config.md);\n"
		"                          the options above, when given, win over it; /api/sweep takes its\n"
		"                          sweep_window and sweep_* thresholds (default: tracer sweep's)\n"
		"  --set KEY=VALUE         override one key of FILE (or of the defaults, without --config)\n"
		"  --help                  this text, on standard output\n"
		"  --version               the version and commit\n"
		"signals: SIGTERM/SIGINT stop\n",
		WEB_DEFAULT_CONNECTIONS);
}

enum { OPT_MAX_CONN = DAEMON_OPT_OWN, OPT_TOKEN };

static const struct option web_opts[] = {
	{ "token-file", required_argument, NULL, OPT_TOKEN },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
	{ NULL, 0, NULL, 0 },
};

/* One of tracer-web's own options (common/daemon_args.c takes the shared ones). */
static int parse_option(void *ctx, int opt, const char *arg)
{
	struct options *o = ctx;
	unsigned long long v = 0;

	switch (opt) {
	case OPT_TOKEN: o->token_file = arg; o->explicit |= EXPLICIT_TOKEN; return 0;
	case OPT_MAX_CONN:
		if (daemon_parse_number("tracer-web", "--max-connections", arg, 2, 4096, &v))
			return -1;
		o->web.max_connections = (unsigned)v;
		return 0;
	default: return -1;
	}
}

/*
 * --config / --set: tracer.conf's keys fill in what the command line did
 * not give. The sweep's thresholds and window come from it too, else from
 * the defaults, as tracer sweep takes them.
 */
static int apply_config(struct options *o)
{
	static struct tracer_config cfg; /* the options point into it */
	static char listen[CONFIG_LISTEN_HOST_MAX + 16];

	bool from_file = o->args.config || o->args.nsets;

	if (!from_file)
		config_defaults(&cfg);
	else if (config_from_options(&cfg, o->args.config, geteuid() == 0, o->args.sets, o->args.nsets))
		return -1;
	sweep_config_from(&cfg, &o->sweep);
	o->web.sweep = &o->sweep;
	o->web.sweep_window_ns = (int64_t)cfg.sweep_window_ns;
	if (!from_file)
		return 0;
	if (!(o->explicit & EXPLICIT_LISTEN)) {
		serve_format_listen(&cfg.web_listen, listen, sizeof(listen));
		o->web.listen = listen;
	}
	if (!(o->explicit & EXPLICIT_DB))
		o->db = cfg.ingest_db;
	if (!(o->explicit & EXPLICIT_TOKEN))
		o->token_file = cfg.web_token_file;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	struct daemon_cli cli = { "tracer-web", web_opts, usage, parse_option, NULL };

	memset(o, 0, sizeof(*o));
	cli.ctx = o;
	if (daemon_args_parse(&cli, argc, argv, &o->args))
		return -1;
	o->web.listen = o->args.listen;
	o->db = o->args.db;
	o->explicit |= (o->args.listen ? EXPLICIT_LISTEN : 0) | (o->args.db ? EXPLICIT_DB : 0);
	if (apply_config(o))
		return -1;
	return daemon_require(&cli, o->web.listen && o->db && o->token_file,
			      "--db, --listen and --token-file are required (or --config FILE)");
}

/*
 * Who to run as. Not root: itself. Root: --user, else the owner of the
 * lake (who can read it; the ingest's user); never root, whose lake
 * needs --user and a lake that user can read.
 */
static int resolve_user(const struct options *o, uid_t *uid, gid_t *gid)
{
	struct stat sb;
	int rc;

	if (geteuid() != 0) {
		*uid = getuid();
		*gid = getgid();
		if (o->args.user) {
			uid_t u;
			gid_t g;

			if (priv_lookup_user(o->args.user, &u, &g) || u != *uid) {
				fprintf(stderr, "<3>--user %s: only root can change user: start tracer-web as root, or as that "
					"user without --user\n", o->args.user);
				return -1;
			}
		}
		return 0;
	}
	if (o->args.user) {
		rc = priv_lookup_user(o->args.user, uid, gid);
		if (rc) {
			fprintf(stderr, "<3>--user %s: %s (give an existing user name or a uid)\n", o->args.user,
				rc == -ENOENT ? "no such user" : strerror(-rc));
			return -1;
		}
	} else if (store_is_uri(o->db)) {
		fprintf(stderr, "<3>started as root on a PostgreSQL lake: pass --user NAME (the unprivileged user "
			"tracer-web runs as; the lake's own user is the URI's)\n");
		return -1;
	} else if (stat(o->db, &sb)) {
		fprintf(stderr, "<3>lake %s: %s (tracer-ingest creates it: start tracer-ingest first, or give --db "
			"the path of an existing lake)\n", o->db, strerror(errno));
		return -1;
	} else {
		*uid = sb.st_uid;
		*gid = sb.st_gid;
	}
	if (*uid == 0 || *gid == 0) {
		fprintf(stderr, "<3>tracer-web does not run as root, and %s: pass --user NAME (a user who can read "
			"the lake %s)\n", o->args.user ? "--user names root" : "the lake belongs to root", o->db);
		return -1;
	}
	return 0;
}



/*
 * The default price table, kept for /api/sweep, and its path for the
 * sandbox (the run pages' analysis reads it again per request); path ""
 * and t empty if none, or if it was refused (said on stderr).
 */
static void find_prices(struct price_table *t, char *path, size_t len)
{
	if (cost_default_table(t, path, len) != 1) {
		price_table_free(t);
		path[0] = 0;
	}
}

static int run(const struct options *o, const sigset_t *set, struct notify *nt)
{
	struct web *w = NULL;
	struct store *st = NULL;
	int lake_family = 0;
	uint16_t lake_port = 0;
	struct price_table table = { 0 };
	struct api_web_stats ws;
	struct auth a;
	char err[1024], prices[PATH_MAX], shown[512];
	uid_t uid;
	gid_t gid;

	if (auth_load(&a, o->token_file, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 1;
	}
	if (resolve_user(o, &uid, &gid))
		return 1;
	if (web_listen(&w, &o->web, NULL, &a, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 1;
	}
	sodium_memzero(&a, sizeof(a));
	/* Before the lake is opened: SQLite creates the -shm file as whoever opens the lake first. */
	if (priv_drop(uid, gid)) {
		web_stop(w);
		return 1;
	}
	if (store_open(&st, o->db, true, err, sizeof(err))) {
		fprintf(stderr, "<3>lake: %s (tracer-web runs as uid %u, who must be able to read it)\n", err,
			(unsigned)uid);
		web_stop(w);
		return 1;
	}
	if (store_remote(st, &lake_family, &lake_port) || (!lake_family && web_lake_fds_readonly(o->db))) {
		web_stop(w);
		store_close(st);
		return 1;
	}
	web_set_store(w, st);
	find_prices(&table, prices, sizeof(prices));
	web_set_prices(w, prices[0] ? &table : NULL, prices);
	store_display_name(o->db, shown, sizeof(shown));
	fprintf(stderr, "<6>lake %s (read-only) as uid %u; price table %s\n", shown, (unsigned)uid,
		prices[0] ? prices : "none found");
	err[0] = 0;
	if (web_sandbox(o->db, prices[0] ? prices : NULL, lake_family, lake_port)) {
		web_stop(w);
		store_close(st);
		price_table_free(&table);
		return 1;
	}
	TEST_TRIGGER("tracer-web", O_RDONLY | O_CLOEXEC);
	if (web_serve(w, err, sizeof(err))) {
		if (err[0])
			fprintf(stderr, "<3>%s\n", err);
		web_stop(w);
		store_close(st);
		price_table_free(&table);
		return 1;
	}
	fprintf(stderr, "<6>serving the dashboard on http://%s/ (open /?token=TOKEN once)\n", web_address(w));
	serve_announce_ready(o->args.ready_fd, web_port(w));
	notify_send(nt, "READY=1");
	serve_wait_for_stop(set, nt, NULL, NULL);
	web_get_stats(w, &ws);
	web_stop(w);
	store_close(st);
	price_table_free(&table);
	fprintf(stderr, "<6>requests %llu; refused %llu without a token, %llu with a wrong one; errors %llu\n",
		(unsigned long long)ws.requests, (unsigned long long)ws.unauthorized,
		(unsigned long long)ws.forbidden, (unsigned long long)ws.errors);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct notify nt;
	sigset_t set;

	if (parse_args(argc, argv, &o))
		return 2;
	notify_open(&nt);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	tzset();
	if (sodium_init() < 0) {
		fprintf(stderr, "<3>libsodium failed to initialise\n");
		return 1;
	}
	return run(&o, &set, &nt);
}
