/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-ingest: receives signed batches over HTTP and stores them in the
 * lake. docs/lake.md describes the API, the limits, the keys file, the
 * schema, how to run it and its sandbox.
 *
 * Threads: libmicrohttpd's polling thread serves requests and writes the
 * lake; this thread waits for signals (blocked everywhere, taken with
 * sigtimedwait): SIGHUP reloads the keys file, SIGTERM/SIGINT stop.
 *
 * Start-up, in this order: options (and tracer.conf with --config);
 * systemd's notify socket; the keys file, the lake, the TLS files and the
 * listening socket (all that may need root: a port below 1024, files only
 * root reads);
 * then confine(): priv_drop() and the start-up seccomp filter; then
 * libmicrohttpd's thread, which inherits both; then the serving filter
 * on every thread; then "ready" on --ready-fd and READY=1 to systemd.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "clock.h"
#include "config.h"
#include "daemon_args.h"
#include "ingest.h"
#include "keys.h"
#include "notify.h"
#include "priv.h"
#include "serve.h"
#include "ingest_sandbox.h"
#include "server.h"
#include "store.h"

/* The user of systemd/tracer.sysusers and the unit; started as root, the ingest becomes it. */
#define INGEST_DEFAULT_USER "tracer-ingest"
/* Started as root by hand with the old options, without --user, where tracer-ingest does not exist. */
#define INGEST_FALLBACK_USER "nobody"

/* Options given on the command line: they win over the config file. */
enum {
	EXPLICIT_LISTEN = 1u << 0,
	EXPLICIT_DB = 1u << 1,
	EXPLICIT_KEYS = 1u << 2,
	EXPLICIT_MAX_BODY = 1u << 3,
	EXPLICIT_MAX_CONN = 1u << 4,
	EXPLICIT_TIMEOUT = 1u << 5,
	EXPLICIT_TLS_CERT = 1u << 6,
	EXPLICIT_TLS_KEY = 1u << 7,
	EXPLICIT_CLIENT_CA = 1u << 8,
};

struct options {
	struct server_config server;
	const char *db;
	const char *keys;
	struct daemon_args args;       /* the options tracer-web has too: --user (NULL: the default), --config... */
	unsigned explicit;             /* EXPLICIT_* */
	bool daemon;                   /* --config or --set: tracer.conf's keys give what the options do not */
	uint64_t retention_ns;         /* lake_retention, lake_retention_runs (lake/maintain.c) */
	uint64_t runs_retention_ns;
};

/* Who the ingest runs as once it serves. */
struct identity {
	uid_t uid;
	gid_t gid;
	const char *name;
};

static void usage(FILE *f)
{
	uint64_t body = 0, conns = 0, timeout_ns = 0;

	/* The defaults of the options tracer.conf also has are its keys' (common/config.c). */
	config_key_number("ingest_max_body", &body, NULL, NULL);
	config_key_number("ingest_max_connections", &conns, NULL, NULL);
	config_key_number("ingest_timeout", &timeout_ns, NULL, NULL);
	fprintf(f,
		"usage: tracer-ingest --listen ADDR:PORT --db FILE --keys FILE [options]\n"
		"       tracer-ingest --config FILE [--set KEY=VALUE]... [options]\n"
		"  --listen ADDR:PORT      address to serve on, exactly (127.0.0.1:8443, [::1]:8443; port 0: any free)\n"
		"  --db FILE               the lake (SQLite; created if missing)\n"
		"  --keys FILE             enrolled public keys, one 'tracer-public-key-v1 ...' line each\n"
		"  --max-body BYTES        largest batch accepted (default %llu, at most %u)\n"
		"  --max-connections N     connections at once (default %llu)\n"
		"  --max-per-ip N          connections at once from one address (default %u)\n"
		"  --timeout S             close a connection idle this long (default %u; a whole request gets %ux)\n"
		"  --max-memory BYTES      request bodies held in memory at once (default %u)\n"
		"  --tls-cert FILE         serve HTTPS only, with this certificate, then any intermediates (PEM)\n"
		"  --tls-key FILE          the certificate's private key (PEM, unencrypted); with --tls-cert\n"
		"  --client-ca FILE        with TLS: refuse, in the handshake, a client without a certificate that\n"
		"                          this CA (PEM) signed\n"
		"  --ready-fd FD           write \"ready PORT\\n\" to FD once serving, then close it\n"
		"  --user NAME|UID         started as root: the user to run as once the port, lake and keys are open\n"
		"                          (default " INGEST_DEFAULT_USER "); never root\n"
		"  --config FILE           take ingest_listen, ingest_db, ingest_keys, ingest_max_body,\n"
		"                          ingest_max_connections, ingest_timeout, ingest_tls_cert, ingest_tls_key\n"
		"                          and ingest_client_ca from FILE (docs/config.md); the options above, when\n"
		"                          given, win over it\n"
		"  --set KEY=VALUE         override one key of FILE (or of the defaults, without --config)\n"
		"  --help                  this text, on standard output\n"
		"  --version               the version and commit\n"
		"signals: SIGHUP reloads the keys file (all or nothing), SIGTERM/SIGINT stop\n",
		(unsigned long long)body, BATCH_MAX_WIRE, (unsigned long long)conns, SERVER_DEFAULT_PER_IP,
		server_timeout_s(timeout_ns), SERVER_REQUEST_DEADLINE_FACTOR, SERVER_DEFAULT_MEMORY);
}

enum {
	OPT_KEYS = DAEMON_OPT_OWN,
	OPT_MAX_BODY,
	OPT_MAX_CONN,
	OPT_MAX_PER_IP,
	OPT_TIMEOUT,
	OPT_MAX_MEMORY,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_CLIENT_CA,
};

static const struct option ingest_opts[] = {
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
	{ "max-per-ip", required_argument, NULL, OPT_MAX_PER_IP },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "client-ca", required_argument, NULL, OPT_CLIENT_CA },
	{ NULL, 0, NULL, 0 },
};

static int parse_number(const char *opt, const char *s, unsigned long long min, unsigned long long max,
			unsigned long long *out)
{
	return daemon_parse_number("tracer-ingest", opt, s, min, max, out);
}

/* One of the ingest's own options (common/daemon_args.c takes the shared ones). */
static int parse_option(void *ctx, int opt, const char *arg)
{
	struct options *o = ctx;
	unsigned long long v = 0;
	int rc = 0;

	switch (opt) {
	case OPT_KEYS: o->keys = arg; o->explicit |= EXPLICIT_KEYS; break;
	case OPT_TLS_CERT: o->server.tls_cert = arg; o->explicit |= EXPLICIT_TLS_CERT; break;
	case OPT_TLS_KEY: o->server.tls_key = arg; o->explicit |= EXPLICIT_TLS_KEY; break;
	case OPT_CLIENT_CA: o->server.client_ca = arg; o->explicit |= EXPLICIT_CLIENT_CA; break;
	case OPT_MAX_BODY:
		rc = parse_number("--max-body", arg, sizeof(struct batch_header) + BATCH_SIG_LEN, BATCH_MAX_WIRE, &v);
		o->server.max_body = (size_t)v;
		o->explicit |= EXPLICIT_MAX_BODY;
		break;
	case OPT_MAX_CONN:
		rc = parse_number("--max-connections", arg, 1, 100000, &v);
		o->server.max_connections = (unsigned)v;
		o->explicit |= EXPLICIT_MAX_CONN;
		break;
	case OPT_MAX_PER_IP:
		rc = parse_number("--max-per-ip", arg, 1, 100000, &v);
		o->server.max_per_ip = (unsigned)v;
		break;
	case OPT_TIMEOUT:
		rc = parse_number("--timeout", arg, 1, 3600, &v);
		o->server.timeout_s = (unsigned)v;
		o->explicit |= EXPLICIT_TIMEOUT;
		break;
	case OPT_MAX_MEMORY:
		rc = parse_number("--max-memory", arg, 1u << 20, 1ull << 40, &v);
		o->server.max_memory = (size_t)v;
		break;
	default: return -1;
	}
	return rc;
}


/*
 * --config / --set: the file, then the --set overrides, then the whole
 * checked (config.c's messages: FILE:LINE:COLUMN: key '...': ...); the
 * ingest's keys fill in what the command line did not give. Started as
 * root, the file decides which files root opens and creates (the lake,
 * the keys): it must then be root's alone, as for the collector.
 */
static int apply_config(struct options *o)
{
	static struct tracer_config cfg; /* ~50 KiB of paths; the options point into it */
	static char listen[CONFIG_LISTEN_HOST_MAX + 16];

	if (!o->args.config && !o->args.nsets)
		return 0;
	if (config_from_options(&cfg, o->args.config, geteuid() == 0, o->args.sets, o->args.nsets))
		return -1;
	o->daemon = true;
	if (!(o->explicit & EXPLICIT_LISTEN)) {
		serve_format_listen(&cfg.ingest_listen, listen, sizeof(listen));
		o->server.listen = listen;
	}
	if (!(o->explicit & EXPLICIT_DB))
		o->db = cfg.ingest_db;
	if (!(o->explicit & EXPLICIT_KEYS))
		o->keys = cfg.ingest_keys;
	if (!(o->explicit & EXPLICIT_MAX_BODY))
		o->server.max_body = (size_t)cfg.ingest_max_body;
	if (!(o->explicit & EXPLICIT_MAX_CONN))
		o->server.max_connections = cfg.ingest_max_connections;
	if (!(o->explicit & EXPLICIT_TIMEOUT)) /* whole seconds for libmicrohttpd: "1.5s" is 2 s */
		o->server.timeout_s = server_timeout_s(cfg.ingest_timeout_ns);
	if (!(o->explicit & EXPLICIT_TLS_CERT) && cfg.ingest_tls_cert[0])
		o->server.tls_cert = cfg.ingest_tls_cert;
	if (!(o->explicit & EXPLICIT_TLS_KEY) && cfg.ingest_tls_key[0])
		o->server.tls_key = cfg.ingest_tls_key;
	if (!(o->explicit & EXPLICIT_CLIENT_CA) && cfg.ingest_client_ca[0])
		o->server.client_ca = cfg.ingest_client_ca;
	o->retention_ns = cfg.lake_retention_ns;
	o->runs_retention_ns = cfg.lake_retention_runs_ns;
	return 0;
}

/* TLS takes a certificate and its key; a client CA is for the TLS handshake. 0, or -1 with a message. */
static int check_tls(const struct server_config *c)
{
	if (!c->tls_cert != !c->tls_key) {
		fprintf(stderr, "tracer-ingest: %s without %s: give both (the server's certificate and its private key, "
			"PEM) for HTTPS, or neither for plain HTTP\n", c->tls_cert ? "--tls-cert" : "--tls-key",
			c->tls_cert ? "--tls-key" : "--tls-cert");
		return -1;
	}
	if (c->client_ca && !c->tls_cert) {
		fprintf(stderr, "tracer-ingest: --client-ca without --tls-cert: client certificates are checked in the "
			"TLS handshake: give --tls-cert and --tls-key too\n");
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	struct daemon_cli cli = { "tracer-ingest", ingest_opts, usage, parse_option, NULL };
	struct daemon_args *a = &o->args;

	memset(o, 0, sizeof(*o));
	cli.ctx = o;
	/* tracer.conf's keys only (--set lake_retention=...): their defaults without it */
	config_key_number("lake_retention", &o->retention_ns, NULL, NULL);
	config_key_number("lake_retention_runs", &o->runs_retention_ns, NULL, NULL);
	if (daemon_args_parse(&cli, argc, argv, a))
		return -1;
	o->server.listen = a->listen;
	o->db = a->db;
	o->explicit |= (a->listen ? EXPLICIT_LISTEN : 0) | (a->db ? EXPLICIT_DB : 0);
	if (apply_config(o))
		return -1;
	if (daemon_require(&cli, o->server.listen && o->db && o->keys, "--listen, --db and --keys are required"))
		return -1;
	return check_tls(&o->server);
}

/* Note the file's keys in the lake's keys table: which key signed a batch stays answerable. */
static void note_keys(struct store *st, const struct keyring *kr)
{
	uint64_t now = real_ns();

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


/* SIGHUP: the keys file again (serve_wait_for_stop's on_hup). */
struct hup_ctx {
	struct ingest *ig;
	const char *keys;
};

static void on_hup(void *ctx)
{
	const struct hup_ctx *h = ctx;

	reload_keys(h->ig, h->keys);
}

static void log_totals(const struct ingest *ig, const struct server_stats *ss)
{
	fprintf(stderr, "<6>batches stored %llu, duplicate %llu, refused %llu; records new %llu, duplicate %llu; "
		"store errors %llu; too big %llu, no memory %llu, too slow %llu, idle timeouts %llu, "
		"TLS clients refused %llu\n",
		(unsigned long long)ig->stats.stored, (unsigned long long)ig->stats.duplicates,
		(unsigned long long)ig->stats.refused, (unsigned long long)ig->stats.records_new,
		(unsigned long long)ig->stats.records_duplicate, (unsigned long long)ig->stats.store_errors,
		(unsigned long long)ss->too_big, (unsigned long long)ss->no_memory, (unsigned long long)ss->too_slow,
		(unsigned long long)ss->timeouts, (unsigned long long)ss->tls_refused);
}

/*
 * Who the ingest runs as once it serves. Started as root: --user, else
 * tracer-ingest (the unit's user, made by systemd/tracer.sysusers); never
 * root. With only the old options (tests, the demo), where tracer-ingest
 * does not exist, nobody, said once. Not root: itself (only root can
 * change user; --user, if given, must name the user it runs as).
 */
static int resolve_user(const struct options *o, struct identity *id)
{
	const char *name = o->args.user ? o->args.user : INGEST_DEFAULT_USER;
	int rc;

	if (geteuid() != 0) {
		id->uid = getuid();
		id->gid = getgid();
		id->name = NULL;
		if (!o->args.user)
			return 0;
		rc = priv_lookup_user(o->args.user, &id->uid, &id->gid);
		if (rc || id->uid != getuid()) {
			fprintf(stderr, "<3>--user %s: only root can change user, and this runs as uid %u: start it as "
				"root, or as that user without --user\n", o->args.user, (unsigned)getuid());
			return -1;
		}
		id->gid = getgid();
		return 0;
	}
	rc = priv_lookup_user(name, &id->uid, &id->gid);
	if (rc == -ENOENT && !o->args.user && !o->daemon) {
		fprintf(stderr, "<5>started as root and user " INGEST_DEFAULT_USER " does not exist: running as "
			INGEST_FALLBACK_USER " (create " INGEST_DEFAULT_USER " or pass --user NAME)\n");
		name = INGEST_FALLBACK_USER;
		rc = priv_lookup_user(name, &id->uid, &id->gid);
	}
	if (rc == -ENOENT && !o->args.user) {
		fprintf(stderr, "<3>started as root, and user " INGEST_DEFAULT_USER " (whom the ingest runs as) does "
			"not exist: create it (systemd-sysusers with systemd/tracer.sysusers, or useradd --system "
			INGEST_DEFAULT_USER ") or pass --user NAME\n");
		return -1;
	}
	if (rc) {
		fprintf(stderr, "<3>--user %s: %s (give an existing user name or a uid)\n", name,
			rc == -ENOENT ? "no such user" : strerror(-rc));
		return -1;
	}
	if (id->uid == 0 || id->gid == 0) {
		fprintf(stderr, "<3>--user %s is root (uid or gid 0): give an unprivileged user for the ingest to "
			"run as\n", name);
		return -1;
	}
	id->name = name;
	return 0;
}

/*
 * Started as root: a new lake is created owned by the user the ingest
 * will run as (running as root, SQLite gives the -wal and -shm files the
 * database's owner), so that the same lake works when the unit, which
 * runs as that user from the start, opens it later. An existing lake is
 * left as it is; any failure here is store_open's to report.
 */
static void create_lake_as(const char *path, const struct identity *id)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (fchown(fd, id->uid, id->gid))
		fprintf(stderr, "<4>cannot give the new lake %s to uid %u: %s\n", path, (unsigned)id->uid,
			strerror(errno));
	close(fd);
}

/*
 * The order of demotion, once all that may need root is open (the
 * listening socket, the lake with its -wal and -shm, the keys file read,
 * systemd's notify socket connected): priv_drop() - as root, capabilities,
 * groups, gid, uid; for anyone, no_new_privs and not dumpable - then the
 * start-up seccomp filter. Both before libmicrohttpd's thread exists, so
 * that it inherits them (capability sets and no_new_privs are per thread).
 */
static int confine(const struct options *o, const struct identity *id, const struct ingest_lake_net *net)
{
	if (priv_drop(id->uid, id->gid))
		return -1;
	if (id->name)
		fprintf(stderr, "<6>running as %s (uid %u)\n", id->name, (unsigned)id->uid);
	if (access(o->keys, R_OK))
		fprintf(stderr, "<4>%s: not readable as uid %u (%s): SIGHUP cannot reload it; make it readable by "
			"that user (chmod o+r, or its group)\n", o->keys, (unsigned)id->uid, strerror(errno));
	return sandbox_ingest_startup(net) ? -1 : 0;
}

/* Serve until SIGTERM or SIGINT, then stop the server: 0. On failure 1, srv left to the caller to stop. */
static int serve(struct server *srv, struct ingest *ig, const struct options *o, const sigset_t *set,
		 struct notify *nt, const struct ingest_lake_net *net)
{
	struct server_stats ss;
	char err[512];

	if (server_serve(srv, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		return 1;
	}
	/* libmicrohttpd's thread runs: from here on, serving's syscalls only, on every thread. */
	if (sandbox_ingest_serving(net))
		return 1;
	if (o->server.tls_cert)
		fprintf(stderr, "<6>TLS: certificate %s; %s%s\n", o->server.tls_cert,
			o->server.client_ca ? "clients need a certificate signed by " : "no client certificate asked for",
			o->server.client_ca ? o->server.client_ca : "");
	fprintf(stderr, "<6>listening on %s\n", server_address(srv));
	serve_announce_ready(o->args.ready_fd, server_port(srv));
	notify_send(nt, "READY=1");
	serve_wait_for_stop(set, nt, on_hup, &(struct hup_ctx){ ig, o->keys });
	server_get_stats(srv, &ss);
	server_stop(srv);
	log_totals(ig, &ss);
	return 0;
}

/*
 * The lake's upkeep once now (PostgreSQL's partitions of the days around today, what is past retention gone),
 * then store_batch() does it hourly. A failure is not fatal: the next batch tries again.
 */
static void upkeep(struct store *st, const struct options *o)
{
	struct store_upkeep up;

	store_set_retention(st, o->retention_ns, o->runs_retention_ns);
	if (store_maintain(st, real_ns(), &up)) {
		fprintf(stderr, "<4>lake upkeep failed (the next batch tries again): %s\n", store_last_error(st));
		return;
	}
	fprintf(stderr, "<6>lake upkeep: retention %" PRIu64 " h (runs %" PRIu64 " h)%s; %" PRIu64
		" partitions dropped, %" PRIu64 " rows deleted\n", o->retention_ns / 3600000000000u,
		o->runs_retention_ns / 3600000000000u, up.skipped ? ", another ingest's turn" : "",
		up.partitions_dropped, up.rows_deleted);
}

/* The keys file, the lake, the TLS files and the listening socket, in that order: 0, or the exit status. */
static int open_all(const struct options *o, const struct identity *id, struct ingest *ig, struct server **srv,
		    struct ingest_lake_net *net)
{
	struct keyring kr = { 0 };
	struct store *st = NULL;
	char err[512], name[512];

	if (load_keys(o->keys, &kr))
		return 1;
	if (geteuid() == 0 && !store_is_uri(o->db))
		create_lake_as(o->db, id);
	if (store_open(&st, o->db, false, err, sizeof(err))) {
		fprintf(stderr, "<3>lake: %s\n", err);
		keys_free(&kr);
		return 1;
	}
	if (store_remote(st, &net->family, &net->port)) {
		fprintf(stderr, "<3>lake: cannot tell how the PostgreSQL connection reaches the server: %s\n",
			strerror(errno));
		keys_free(&kr);
		store_close(st);
		return 1;
	}
	note_keys(st, &kr);
	upkeep(st, o);
	if (kr.n == 0)
		fprintf(stderr, "<4>%s enrols no key: every batch will be refused until keys are added (then SIGHUP)\n",
			o->keys);
	store_display_name(o->db, name, sizeof(name));
	fprintf(stderr, "<6>lake %s, %zu keys from %s\n", name, kr.n, o->keys);
	if (ingest_init(ig, st, &kr)) {
		keys_free(&kr);
		store_close(st);
		return 1;
	}
	if (server_listen(srv, &o->server, ig, err, sizeof(err))) {
		fprintf(stderr, "<3>%s\n", err);
		ingest_destroy(ig);
		store_close(st);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct server *srv = NULL;
	struct identity id;
	struct options o;
	struct notify nt;
	struct ingest ig;
	struct ingest_lake_net net = { 0 };
	sigset_t set;
	int rc;

	if (parse_args(argc, argv, &o))
		return 2;
	/* Before anything that restricts sockets: it connects to $NOTIFY_SOCKET (nothing without it). */
	notify_open(&nt);
	/* Blocked before the HTTP thread starts, so that it inherits the mask and only this thread takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The time zone, now: libmicrohttpd's Date header would otherwise read /etc/localtime in the sandbox. */
	tzset();
	if (resolve_user(&o, &id))
		return 1;
	if (batch_crypto_init()) {
		fprintf(stderr, "<3>libsodium failed to initialise\n");
		return 1;
	}
	rc = open_all(&o, &id, &ig, &srv, &net);
	if (rc)
		return rc;
	rc = confine(&o, &id, &net) ? 1 : serve(srv, &ig, &o, &set, &nt, &net);
	if (rc)
		server_stop(srv); /* not serving: close the socket */
	ingest_destroy(&ig);
	store_close(ig.store);
	return rc;
}
