/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tracer-ingest binary: a bad command line, a keys file it cannot use
 * or a lake it cannot open are refused with a message saying what to do
 * and a non-zero exit; it serves on exactly the address given, says which
 * port on stderr and on --ready-fd, reloads the keys file on SIGHUP (all
 * or nothing: a file with an error, named by file:line:column, leaves the
 * keys in force), and stops cleanly on SIGTERM.
 *
 * TLS: --tls-key without --tls-cert (and the like) exits 2; a certificate
 * or key it cannot use, or a key that is not the certificate's, exits 1
 * naming the file; with --client-ca, a client without a certificate that
 * CA signed is refused in the handshake (and plain HTTP closed), under the
 * seccomp filter, while one with such a certificate is served.
 *
 * As systemd runs it: --config takes the port, the lake and the keys from
 * tracer.conf, --set and explicit options win over the file, a bad file is
 * named by FILE:LINE; READY=1 reaches $NOTIFY_SOCKET only once the port
 * answers, WATCHDOG=1 follows $WATCHDOG_USEC, STOPPING=1 comes with
 * SIGTERM. Confined: /proc shows the seccomp filters and no_new_privs
 * (started as root: another uid, no capability, the new lake given to
 * that user), and a batch, a reload, a restart on its own lake, a lake
 * another process holds and a clean stop all work under the filter (a
 * syscall it does not allow would kill the process: SIGSYS); where it
 * cannot install its filter, it does not run. Two ingests on one lake
 * (upload_url's failover) store every batch sent to both at once, once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "daemon_harness.h"
#include "skip.h"
#include "test_ingest_helpers.h"

static char ingest_bin[PATH_MAX];

struct fixture {
	char dir[64], db[96], keys[96], log[96], conf[96];
	struct batch_secret_key a, b;
	pid_t pid, other_pid;      /* other_pid: a second ingest on the same lake, or 0 */
	unsigned port;
	const char *notify_socket; /* NOTIFY_SOCKET for the ingest, or NULL */
	const char *watchdog_usec; /* WATCHDOG_USEC for the ingest, or NULL */
};

/* As root the ingest runs as another user (nobody here, tracer-ingest need not exist); as anyone else, as itself. */
static bool as_root(void)
{
	return geteuid() == 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

struct child_env {
	const struct fixture *fx;
	int ready_fd;
};

/* In the child, before exec: systemd's variables as the test set them, the ready pipe as fd 3. */
static int ingest_child(void *arg)
{
	const struct child_env *c = arg;

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	if (c->fx->notify_socket)
		setenv("NOTIFY_SOCKET", c->fx->notify_socket, 1);
	if (c->fx->watchdog_usec)
		setenv("WATCHDOG_USEC", c->fx->watchdog_usec, 1);
	if (c->ready_fd == 3)
		fcntl(3, F_SETFD, 0); /* keep it across exec */
	else if (c->ready_fd >= 0 && dup2(c->ready_fd, 3) == 3)
		close(c->ready_fd);
	return 0;
}

/* Start tracer-ingest with args (NULL-terminated), stderr into fx->log; ready_fd: the write end to pass, or -1. */
static pid_t spawn(struct fixture *fx, const char *const *args, int ready_fd)
{
	const char *argv[24] = { ingest_bin };
	struct child_env c = { fx, ready_fd };
	struct daemon_io io = DAEMON_IO;
	size_t n = 1;

	while (args[n - 1] && n < 23) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	io.stderr_path = fx->log;
	io.in_child = ingest_child;
	io.arg = &c;
	return daemon_start(argv, &io);
}

/* Exit status of a run that must end by itself within a few seconds. */
static int run_to_end(struct fixture *fx, const char *const *args, char *log, size_t cap)
{
	pid_t pid = spawn(fx, args, -1);
	int status = daemon_wait(pid, 5000);

	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("tracer-ingest did not exit");
	}
	daemon_read_file(fx->log, log, cap);
	return daemon_exit_code(status);
}

static void keys_file(struct fixture *fx, const struct batch_secret_key *k, const char *extra_line)
{
	char line[256], text[1024];

	assert_int_equal(batch_public_line(k, NULL, line, sizeof(line)), 0);
	snprintf(text, sizeof(text), "# test keys\n%s\n%s", line, extra_line ? extra_line : "");
	write_file(fx->keys, text, 0644);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_ingest_main.XXXXXX");
	/* 0755: started as root, the ingest reads the keys file on SIGHUP as the user it dropped to */
	if (batch_crypto_init() || !mkdtemp(fx->dir) || chmod(fx->dir, 0755)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	snprintf(fx->keys, sizeof(fx->keys), "%s/keys", fx->dir);
	snprintf(fx->log, sizeof(fx->log), "%s/stderr", fx->dir);
	snprintf(fx->conf, sizeof(fx->conf), "%s/tracer.conf", fx->dir);
	batch_key_generate(&fx->a);
	batch_key_generate(&fx->b);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->pid > 0) {
		kill(fx->pid, SIGKILL);
		waitpid(fx->pid, NULL, 0);
	}
	if (fx->other_pid > 0) {
		kill(fx->other_pid, SIGKILL);
		waitpid(fx->other_pid, NULL, 0);
	}
	rm_tree(fx->dir);
	free(fx);
	return 0;
}

/* ---- refusing to start ----------------------------------------------------- */

static void bad_command_line_says_what_is_wanted_and_exits_2(void **state)
{
	struct fixture *fx = *state;
	const char *none[] = { NULL };
	const char *bad_number[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
				     "--max-connections", "lots", NULL };
	const char *extra[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "more", NULL };
	const char *bad_listen[] = { "--listen", "localhost:80", "--db", fx->db, "--keys", fx->keys, NULL };
	char log[4096];

	keys_file(fx, &fx->a, NULL);
	assert_int_equal(run_to_end(fx, none, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--listen, --db and --keys are required"));
	assert_int_equal(run_to_end(fx, bad_number, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--max-connections lots: want a whole number"));
	assert_int_equal(run_to_end(fx, extra, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "unexpected argument 'more'"));
	assert_int_equal(run_to_end(fx, bad_listen, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "numeric address"));
}

/* Numbers are digits only (common/parse.h): strtoull took "+5" and " 5" before. */
static void number_options_refuse_a_sign_or_a_blank(void **state)
{
	struct fixture *fx = *state;
	const char *const values[] = { "+5", " 5", "-5", "5 ", "0x5", "" };
	char log[4096], want[64];

	keys_file(fx, &fx->a, NULL);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
				       "--max-connections", values[i], NULL };

		assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 2);
		snprintf(want, sizeof(want), "--max-connections %s: want a whole number", values[i]);
		if (!strstr(log, want))
			fail_msg("'%s' not refused as it should be: %s", values[i], log);
	}
}

static void unusable_keys_or_lake_say_what_to_do_and_exit_1(void **state)
{
	struct fixture *fx = *state;
	char nodir[128], log[4096];
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, NULL };
	const char *bad_db[] = { "--listen", "127.0.0.1:0", "--db", nodir, "--keys", fx->keys, NULL };

	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "cannot open"));
	keys_file(fx, &fx->a, "tracer-public-key-v1 0011 AAAA\n");
	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "/keys:3:22: the key id is not 16 hex digits"));
	keys_file(fx, &fx->a, NULL);
	chmod(fx->keys, 0666);
	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "chmod go-w"));
	chmod(fx->keys, 0644);
	snprintf(nodir, sizeof(nodir), "%s/no/such/dir/lake.db", fx->dir);
	assert_int_equal(run_to_end(fx, bad_db, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "check that its directory exists"));
}

/* ---- serving --------------------------------------------------------------- */

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/* The files of make_pki's PKI (pki: its directory) that a client uses, name "client", "rogue" or NULL (none). */
static void tls_client(CURL *c, const char *pki, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/ca.pem", pki);
	curl_easy_setopt(c, CURLOPT_CAINFO, path); /* libcurl copies the strings it is given */
	if (!name)
		return;
	snprintf(path, sizeof(path), "%s/%s.pem", pki, name);
	curl_easy_setopt(c, CURLOPT_SSLCERT, path);
	snprintf(path, sizeof(path), "%s/%s.key", pki, name);
	curl_easy_setopt(c, CURLOPT_SSLKEY, path);
}

/* POST a batch of three samples; over HTTPS with make_pki's client certificate when pki is not NULL. */
static long post_batch_to(unsigned port, const char *pki, const struct batch_secret_key *k, uint8_t host_n,
			  uint64_t first)
{
	uint8_t host[BATCH_HOST_ID_LEN];
	struct frames f = { 0 };
	struct sealed s;
	char url[64];
	long status = 0;
	CURL *c = curl_easy_init();

	host_id_of(host, host_n);
	for (uint64_t i = 0; i < 3; i++) {
		struct tr_sample smp = encode_sample(first + i, 9, 1, 1, i, 1, i);

		assert_true(frames_add(&f, first + i, TR_SAMPLE, &smp, sizeof(smp)));
	}
	assert_int_equal(seal_frames(k, host, 1, NULL, BATCH_COMP_ZLIB, &f, &s), 0);
	snprintf(url, sizeof(url), "%s://127.0.0.1:%u/v1/batches", pki ? "https" : "http", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (pki)
		tls_client(c, pki, "client");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, s.wire);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s.len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	free(s.wire);
	frames_free(&f);
	return status;
}

static long post_batch(unsigned port, const struct batch_secret_key *k, uint8_t host_n, uint64_t first)
{
	return post_batch_to(port, NULL, k, host_n, first);
}

/* Start with args (which must hold "--ready-fd 3"); fx->port from --ready-fd, and the same port in the log line. */
static void start_args(struct fixture *fx, const char *const *args)
{
	char line[64], log[4096], expect[64];
	int ready[2];
	ssize_t n;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	fx->pid = spawn(fx, args, ready[1]);
	close(ready[1]);
	n = daemon_ready(ready[0], 10000, line, sizeof(line)); /* -1: nothing within 10 s */
	close(ready[0]);
	assert_true(n > 0);
	assert_int_equal(sscanf(line, "ready %u\n", &fx->port), 1);
	assert_true(fx->port > 0);
	daemon_read_file(fx->log, log, sizeof(log));
	snprintf(expect, sizeof(expect), "<6>listening on 127.0.0.1:%u\n", fx->port);
	assert_non_null(strstr(log, expect));
}

/* Start serving with the options of old; as root it runs as nobody then (no tracer-ingest user here). */
static void start_server(struct fixture *fx)
{
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--ready-fd", "3",
			       "--timeout", "2", NULL };

	start_args(fx, args);
}

/* Wait until the log holds text (a reload's outcome), at most 5 s. */
static void wait_log(struct fixture *fx, const char *text, unsigned nth)
{
	char log[8192];

	for (int i = 0; i < 500; i++) {
		const char *p = log;
		unsigned seen = 0;

		daemon_read_file(fx->log, log, sizeof(log));
		while ((p = strstr(p, text)) != NULL) {
			seen++;
			p++;
		}
		if (seen >= nth)
			return;
		usleep(10000);
	}
	fail_msg("no '%s' in the log", text);
}

static void serves_the_port_it_reports_and_stops_cleanly_on_sigterm(void **state)
{
	struct fixture *fx = *state;
	int status = 0;

	keys_file(fx, &fx->a, NULL);
	start_server(fx);
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 1), 200);
	status = daemon_stop(fx->pid, SIGTERM, 5000);
	fx->pid = 0;
	assert_int_not_equal(status, -1); /* it stopped within 5 s */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	wait_log(fx, "batches stored 1,", 1);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 3);
}

static void sighup_reloads_the_keys_file_all_or_nothing(void **state)
{
	struct fixture *fx = *state;
	char line_b[256], extra[512];

	keys_file(fx, &fx->a, NULL);
	start_server(fx);
	assert_int_equal(post_batch(fx->port, &fx->b, 2, 1), 403);
	/* b added, but the file has an error on line 4: nothing changes */
	assert_int_equal(batch_public_line(&fx->b, NULL, line_b, sizeof(line_b)), 0);
	snprintf(extra, sizeof(extra), "%s\nnot-a-key-line\n", line_b);
	keys_file(fx, &fx->a, extra);
	assert_int_equal(kill(fx->pid, SIGHUP), 0);
	wait_log(fx, "keys not reloaded", 1);
	wait_log(fx, "/keys:4:1: expected", 1);
	assert_int_equal(post_batch(fx->port, &fx->b, 2, 1), 403);
	assert_int_equal(post_batch(fx->port, &fx->a, 3, 1), 200);
	/* fixed: b signs from now on */
	snprintf(extra, sizeof(extra), "%s\n", line_b);
	keys_file(fx, &fx->a, extra);
	assert_int_equal(kill(fx->pid, SIGHUP), 0);
	wait_log(fx, "keys reloaded", 1);
	assert_int_equal(post_batch(fx->port, &fx->b, 2, 1), 200);
}

/* ---- as systemd runs it: --config, readiness, the sandbox ------------------- */

/* SIGTERM, then an exit of its own with status 0 within 5 s (not a kill: SIGSYS would be the seccomp filter). */
static void stop_cleanly(struct fixture *fx)
{
	int status = daemon_stop(fx->pid, SIGTERM, 5000);

	fx->pid = 0;
	if (status == -1)
		fail_msg("tracer-ingest did not stop within 5 s of SIGTERM");
	if (WIFSIGNALED(status))
		fail_msg("tracer-ingest was killed by signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGSYS ? ": a syscall its seccomp filter does not allow" : "");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The HTTP status of GET path. */
static long http_get(unsigned port, const char *path)
{
	char url[128];
	long status = 0;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

struct zeros {
	size_t left;
};

static size_t read_zeros(char *buf, size_t size, size_t n, void *ctx)
{
	struct zeros *z = ctx;
	size_t k = size * n < z->left ? size * n : z->left;

	memset(buf, 0, k);
	z->left -= k;
	return k;
}

/* POST len zero bytes to /v1/batches, announced (Content-Length) or chunked; the HTTP status. */
static long post_zeros(unsigned port, size_t len, bool chunked)
{
	struct zeros z = { .left = len };
	struct curl_slist *h = chunked ? curl_slist_append(NULL, "Transfer-Encoding: chunked") : NULL;
	char url[64];
	long status = 0;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/batches", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_zeros);
	curl_easy_setopt(c, CURLOPT_READDATA, &z);
	if (chunked)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	else
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_perform(c); /* a 413 may close the connection while curl still sends */
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return status;
}

/* The value of one line of /proc/PID/status ("Seccomp" gives "2"), or "" when the kernel has no such line. */
static void proc_status(pid_t pid, const char *key, char *out, size_t cap)
{
	char path[64], text[4096], want[64];
	const char *p;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	daemon_read_file(path, text, sizeof(text));
	snprintf(want, sizeof(want), "\n%s:\t", key);
	out[0] = 0;
	p = strstr(text, want);
	if (!p)
		return;
	p += strlen(want);
	while (p[n] && p[n] != '\n' && n < cap - 1)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
}

static uid_t uid_of(const char *name)
{
	struct passwd *pw = getpwnam(name);

	assert_non_null(pw);
	return pw->pw_uid;
}

static void config_file(struct fixture *fx, const char *text)
{
	write_file(fx->conf, text, 0644);
}

static void config_gives_the_port_the_lake_and_the_keys(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--config", fx->conf, "--ready-fd", "3", as_root() ? "--user" : NULL, "nobody", NULL };
	char conf[1024], log[4096], expect[256];

	keys_file(fx, &fx->a, NULL);
	snprintf(conf, sizeof(conf), "# the ingest's part of tracer.conf\ningest_listen = 127.0.0.1:0\n"
		 "ingest_db = %s\ningest_keys = %s   # enrolment\ningest_timeout = 1.5s\n", fx->db, fx->keys);
	config_file(fx, conf);
	start_args(fx, args);
	daemon_read_file(fx->log, log, sizeof(log));
	snprintf(expect, sizeof(expect), "<6>lake %s, 1 keys from %s\n", fx->db, fx->keys);
	assert_non_null(strstr(log, expect));
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 1), 200);
	assert_int_equal(http_get(fx->port, "/v1/health"), 200);
	stop_cleanly(fx);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 3);
}

static void set_and_given_options_win_over_the_file(void **state)
{
	struct fixture *fx = *state;
	char conf[1024], file_db[128], set_db[128], set_db_arg[160], missing_keys[128];
	const char *args[] = { "--config", fx->conf, "--set", set_db_arg, "--set", "ingest_max_body=1MiB",
			       "--keys", fx->keys, "--ready-fd", "3", as_root() ? "--user" : NULL, "nobody", NULL };

	keys_file(fx, &fx->a, NULL);
	snprintf(file_db, sizeof(file_db), "%s/file.db", fx->dir);
	snprintf(set_db, sizeof(set_db), "%s/set.db", fx->dir);
	snprintf(set_db_arg, sizeof(set_db_arg), "ingest_db=%s", set_db);
	snprintf(missing_keys, sizeof(missing_keys), "%s/no-such-keys", fx->dir);
	snprintf(conf, sizeof(conf), "ingest_listen = 127.0.0.1:0\ningest_db = %s\ningest_keys = %s\n"
		 "ingest_max_body = 2MiB\n", file_db, missing_keys);
	config_file(fx, conf);
	start_args(fx, args); /* it starts: --keys won over the file's missing keys file */
	/* 1.5 MiB: under the file's 2 MiB, over --set's 1 MiB */
	assert_int_equal(post_zeros(fx->port, 3u << 19, false), 413);
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 1), 200);
	stop_cleanly(fx);
	assert_int_equal(sql_int(set_db, "SELECT count(*) FROM records"), 3);
	assert_int_equal(access(file_db, F_OK), -1);
}

static void bad_config_is_named_by_file_and_line_and_exits_2(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--config", fx->conf, NULL };
	const char *bad_set[] = { "--config", fx->conf, "--set", "ingest_listen=nowhere", NULL };
	char none[128], log[4096], expect[256];
	const char *missing[] = { "--config", none, NULL };

	keys_file(fx, &fx->a, NULL);
	config_file(fx, "# line 1\ningest_listen = 127.0.0.1:0\ningest_max_connections = lots\n");
	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 2);
	snprintf(expect, sizeof(expect), "%s:3:", fx->conf);
	assert_non_null(strstr(log, expect));
	assert_non_null(strstr(log, "key 'ingest_max_connections'"));

	config_file(fx, "ingest_lisen = 127.0.0.1:0\n");
	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 2);
	snprintf(expect, sizeof(expect), "%s:1:", fx->conf);
	assert_non_null(strstr(log, expect));
	assert_non_null(strstr(log, "did you mean 'ingest_listen'?"));

	config_file(fx, "ingest_listen = 127.0.0.1:0\n");
	assert_int_equal(run_to_end(fx, bad_set, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--set ingest_listen=nowhere: key 'ingest_listen'"));

	chmod(fx->conf, 0666); /* anyone could reconfigure it */
	assert_int_equal(run_to_end(fx, args, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "chmod o-w"));

	snprintf(none, sizeof(none), "%s/no-such.conf", fx->dir);
	assert_int_equal(run_to_end(fx, missing, log, sizeof(log)), 2);
	assert_non_null(strstr(log, none));
	assert_int_equal(access(fx->db, F_OK), -1); /* nothing was started */
}

/* Never root; only root changes user. */
static void the_user_it_runs_as_is_never_root(void **state)
{
	struct fixture *fx = *state;
	const char *as_uid0[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--user", "0", NULL };
	char log[4096];

	keys_file(fx, &fx->a, NULL);
	assert_int_equal(run_to_end(fx, as_uid0, log, sizeof(log)), 1);
	assert_non_null(strstr(log, as_root() ? "--user 0 is root" : "only root can change user"));
	assert_int_equal(access(fx->db, F_OK), -1);
}

/* As root with --config, it runs as tracer-ingest (or --user): a missing tracer-ingest is named. */
static void as_root_a_missing_tracer_ingest_user_is_named(void **state)
{
	struct fixture *fx = *state;
	const char *daemon[] = { "--config", fx->conf, NULL };
	char conf[1024], log[4096];

	if (!as_root())
		TEST_SKIP("needs root: only root changes user");
	if (getpwnam("tracer-ingest"))
		TEST_SKIP("a user tracer-ingest exists here: the refusal for a missing one cannot be seen");
	keys_file(fx, &fx->a, NULL);
	snprintf(conf, sizeof(conf), "ingest_listen = 127.0.0.1:0\ningest_db = %s\ningest_keys = %s\n", fx->db,
		 fx->keys);
	config_file(fx, conf);
	assert_int_equal(run_to_end(fx, daemon, log, sizeof(log)), 1);
	assert_non_null(strstr(log, "user tracer-ingest (whom the ingest runs as) does not exist: create it"));
	assert_non_null(strstr(log, "or pass --user NAME"));
	assert_int_equal(access(fx->db, F_OK), -1);
}

/* A datagram on fd within ms milliseconds, NUL-terminated; its length, or -1. */
static ssize_t notify_recv(int fd, char *buf, size_t cap, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -1;
	n = recv(fd, buf, cap - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static void ready_reaches_notify_socket_once_the_port_answers(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--ready-fd", "3", NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[256], line[64];
	int ready[2], fd, watchdogs = 0;
	ssize_t n;

	keys_file(fx, &fx->a, NULL);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", fx->dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fx->notify_socket = sa.sun_path;
	fx->watchdog_usec = "200000"; /* WATCHDOG=1 every 0.1 s */
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	fx->pid = spawn(fx, args, ready[1]);
	close(ready[1]);

	/* The first message is READY=1; by then the ready line is written and the port answers HTTP. */
	assert_true(notify_recv(fd, msg, sizeof(msg), 10000) > 0);
	assert_string_equal(msg, "READY=1");
	n = daemon_ready(ready[0], 0, line, sizeof(line)); /* already there: -1 if not */
	close(ready[0]);
	assert_true(n > 0);
	assert_int_equal(sscanf(line, "ready %u\n", &fx->port), 1);
	assert_int_equal(http_get(fx->port, "/v1/health"), 200);

	for (int i = 0; i < 20 && watchdogs < 3; i++)
		if (notify_recv(fd, msg, sizeof(msg), 1000) > 0 && !strcmp(msg, "WATCHDOG=1"))
			watchdogs++;
	assert_int_equal(watchdogs, 3);

	assert_int_equal(kill(fx->pid, SIGTERM), 0);
	do
		assert_true(notify_recv(fd, msg, sizeof(msg), 5000) > 0);
	while (!strcmp(msg, "WATCHDOG=1"));
	assert_string_equal(msg, "STOPPING=1");
	close(fd);
	fx->notify_socket = fx->watchdog_usec = NULL;
	{
		int status = 0;

		assert_int_equal(waitpid(fx->pid, &status, 0), fx->pid);
		fx->pid = 0;
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

/* A connection that sends nothing is closed by the server (--timeout 1) within 5 s: true. */
static bool idle_connection_is_closed(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;
	bool closed;

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	closed = poll(&p, 1, 5000) == 1 && read(fd, &c, 1) == 0;
	close(fd);
	return closed;
}

static void runs_confined_and_still_serves_reloads_and_stops(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--timeout", "1",
			       "--ready-fd", "3", as_root() ? "--user" : NULL, "nobody", NULL };
	char v[128], want_uid[64], line_b[256], extra[512];
	uid_t uid = as_root() ? uid_of("nobody") : getuid();
	struct stat st;

	keys_file(fx, &fx->a, NULL);
	start_args(fx, args);
	proc_status(fx->pid, "Seccomp", v, sizeof(v));
	assert_string_equal(v, "2");
	proc_status(fx->pid, "Seccomp_filters", v, sizeof(v));
	if (v[0]) /* Linux 5.9+: the start-up filter and the serving filter */
		assert_string_equal(v, "2");
	proc_status(fx->pid, "NoNewPrivs", v, sizeof(v));
	assert_string_equal(v, "1");
	proc_status(fx->pid, "Uid", v, sizeof(v));
	snprintf(want_uid, sizeof(want_uid), "%u\t%u\t%u\t%u", (unsigned)uid, (unsigned)uid, (unsigned)uid,
		 (unsigned)uid);
	assert_string_equal(v, want_uid);
	proc_status(fx->pid, "CapEff", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	proc_status(fx->pid, "CapPrm", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	if (as_root()) {
		proc_status(fx->pid, "CapBnd", v, sizeof(v));
		assert_string_equal(v, "0000000000000000");
		/* the new lake belongs to the user it runs as: the unit, as that user, can open it later */
		assert_int_equal(stat(fx->db, &st), 0);
		assert_int_equal(st.st_uid, uid);
	}

	/* Serving under the filter: batches, refusals, a chunked body grown as it streams, an idle connection cut. */
	for (uint64_t i = 0; i < 20; i++)
		assert_int_equal(post_batch(fx->port, &fx->a, 1, 1 + 3 * i), 200);
	assert_int_equal(post_batch(fx->port, &fx->b, 2, 1), 403);
	assert_int_equal(http_get(fx->port, "/nothing/here"), 404);
	assert_int_equal(post_zeros(fx->port, 3u << 19, true), 400);
	assert_true(idle_connection_is_closed(fx->port));

	/* A reload under the filter: b signs from now on. */
	assert_int_equal(batch_public_line(&fx->b, NULL, line_b, sizeof(line_b)), 0);
	snprintf(extra, sizeof(extra), "%s\n", line_b);
	keys_file(fx, &fx->a, extra);
	assert_int_equal(kill(fx->pid, SIGHUP), 0);
	wait_log(fx, "keys reloaded", 1);
	assert_int_equal(post_batch(fx->port, &fx->b, 2, 1), 200);
	assert_int_equal(kill(fx->pid, 0), 0);
	stop_cleanly(fx);
	wait_log(fx, "batches stored 21,", 1);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 63);
}

/*
 * Restarted on its own lake, after a clean stop removed the -wal file: the
 * first batch then makes SQLite fsync the lake's directory (an openat of
 * it), under the filter. As root the directory is given to the user the
 * ingest runs as, so that its stop can remove the -wal file as it does
 * under the unit.
 */
static void restarted_on_its_lake_stores_under_the_filter(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--ready-fd", "3",
			       as_root() ? "--user" : NULL, "nobody", NULL };
	char wal[128];

	if (as_root())
		assert_int_equal(chown(fx->dir, uid_of("nobody"), (gid_t)-1), 0);
	keys_file(fx, &fx->a, NULL);
	start_args(fx, args);
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 1), 200);
	stop_cleanly(fx);
	snprintf(wal, sizeof(wal), "%s-wal", fx->db);
	assert_int_equal(access(wal, F_OK), -1); /* removed at the stop: the restart creates it anew */
	start_args(fx, args);
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 4), 200);
	assert_int_equal(post_batch(fx->port, &fx->a, 2, 1), 200);
	stop_cleanly(fx);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 9);
}

/*
 * Another connection holds the lake's write lock for a while (a sqlite3
 * shell, a checkpoint by a reader): the ingest waits (SQLite's busy
 * handler sleeps, under the filter) and then stores the batch.
 */
static void a_busy_lake_is_waited_for_under_the_filter(void **state)
{
	struct fixture *fx = *state;
	int locked[2];
	pid_t holder;
	char c = 0;
	int status = 0;

	keys_file(fx, &fx->a, NULL);
	start_server(fx);
	assert_int_equal(pipe2(locked, O_CLOEXEC), 0);
	holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		sqlite3 *db = NULL;
		int ok = sqlite3_open(fx->db, &db) == SQLITE_OK && sqlite3_busy_timeout(db, 5000) == SQLITE_OK &&
			 sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;

		if (write(locked[1], ok ? "1" : "0", 1) != 1 || !ok)
			_exit(1);
		usleep(700000);
		_exit(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : 1);
	}
	close(locked[1]);
	assert_int_equal(read(locked[0], &c, 1), 1);
	close(locked[0]);
	assert_int_equal(c, '1');
	assert_int_equal(post_batch(fx->port, &fx->a, 1, 1), 200); /* waits for the holder's COMMIT */
	assert_int_equal(waitpid(holder, &status, 0), holder);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	stop_cleanly(fx);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 3);
}

/* A POST of s to port, added to m; its handle. */
static CURL *post_async(CURLM *m, unsigned port, const struct sealed *s)
{
	CURL *c = curl_easy_init();
	char url[64];

	assert_non_null(c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/batches", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, s->wire);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	assert_int_equal(curl_multi_add_handle(m, c), CURLM_OK);
	return c;
}

/*
 * Two ingests on one lake, as upload_url's failover uses them, each batch
 * of four hosts' chains posted to both at the same moment (a batch that
 * reached two ingests: its reply lost, or an ingest killed after its
 * commit). SQLite's WAL and busy timeout make one ingest wait for the
 * other's commit, under the filter; both answer 200 (stored, or
 * duplicate), and the lake has each batch once, each record once, every
 * chain linked.
 */
static void two_ingests_on_one_lake_store_a_batch_sent_to_both_once(void **state)
{
	enum { HOSTS = 4, BATCHES = 25, RECORDS = 3 };
	struct fixture *fx = *state;
	uint8_t prev[HOSTS][BATCH_HASH_LEN];
	unsigned ports[2];
	CURLM *m = curl_multi_init();

	assert_non_null(m);
	keys_file(fx, &fx->a, NULL);
	start_server(fx);
	fx->other_pid = fx->pid;
	ports[0] = fx->port;
	start_server(fx);
	ports[1] = fx->port;
	for (unsigned b = 0; b < BATCHES; b++) {
		struct sealed s[HOSTS];
		CURL *c[HOSTS][2];
		int running = 1;

		for (unsigned h = 0; h < HOSTS; h++) {
			uint8_t host[BATCH_HOST_ID_LEN];
			struct frames f = { 0 };

			host_id_of(host, (uint8_t)(h + 1));
			for (uint64_t i = 1; i <= RECORDS; i++) {
				uint64_t seq = b * RECORDS + i;
				struct tr_sample smp = encode_sample(seq, 9, 1, 1, seq, 1, seq);

				assert_true(frames_add(&f, seq, TR_SAMPLE, &smp, sizeof(smp)));
			}
			assert_int_equal(seal_frames(&fx->a, host, b + 1, b ? prev[h] : NULL, BATCH_COMP_ZLIB, &f, &s[h]), 0);
			memcpy(prev[h], s[h].hash, sizeof(prev[h]));
			frames_free(&f);
			for (unsigned i = 0; i < 2; i++)
				c[h][i] = post_async(m, ports[(h + i) % 2], &s[h]);
		}
		while (running) {
			assert_int_equal(curl_multi_perform(m, &running), CURLM_OK);
			if (running)
				assert_int_equal(curl_multi_poll(m, NULL, 0, 1000, NULL), CURLM_OK);
		}
		for (unsigned h = 0; h < HOSTS; h++) {
			for (unsigned i = 0; i < 2; i++) {
				long status = 0;

				curl_easy_getinfo(c[h][i], CURLINFO_RESPONSE_CODE, &status);
				assert_int_equal(status, 200);
				curl_multi_remove_handle(m, c[h][i]);
				curl_easy_cleanup(c[h][i]);
			}
			free(s[h].wire);
		}
	}
	curl_multi_cleanup(m);
	stop_cleanly(fx);
	fx->pid = fx->other_pid;
	fx->other_pid = 0;
	stop_cleanly(fx);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM batches"), HOSTS * BATCHES);
	assert_int_equal(sql_int(fx->db, "SELECT count(DISTINCT hash) FROM batches"), HOSTS * BATCHES);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM batches WHERE chain = 'broken'"), 0);
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), HOSTS * BATCHES * RECORDS);
	assert_int_equal(sql_int(fx->db, "SELECT sum(records_duplicate) FROM batches"), 0);
}

/* In the child: what SystemCallFilter= without seccomp does to the service: seccomp() fails EPERM. */
static int without_seccomp(void *arg)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	(void)arg;
	if (!ctx || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 0) || seccomp_load(ctx))
		return 99;
	return 0;
}

/*
 * Where the seccomp() syscall is refused (a service manager's filter:
 * systemd 252's @system-service does not list it), the ingest does not
 * run unconfined: it stops, saying how to allow it.
 */
static void refuses_to_run_without_its_filter(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { ingest_bin, "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
			       as_root() ? "--user" : NULL, "nobody", NULL };
	struct daemon_io io = DAEMON_IO;
	char log[4096];
	pid_t pid;
	int status;

	keys_file(fx, &fx->a, NULL);
	io.stderr_path = fx->log;
	io.in_child = without_seccomp;
	pid = daemon_start(argv, &io);
	status = daemon_wait(pid, 5000);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("tracer-ingest ran on without its seccomp filter");
	}
	daemon_read_file(fx->log, log, sizeof(log));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(log, "the seccomp() syscall is refused here"));
	assert_non_null(strstr(log, "SystemCallFilter=seccomp"));
	assert_null(strstr(log, "listening on"));
}

/* ---- TLS ------------------------------------------------------------------- */

/*
 * A throwaway PKI in DIR/pki (openssl, P-256 keys: quick): ca.pem;
 * server.pem (for 127.0.0.1) and server.key, root's alone; client.pem and
 * client.key, signed by ca; rogue.pem and rogue.key, signed by another CA;
 * other.key, a key of no certificate here.
 */
static void make_pki(const struct fixture *fx, char *pki, size_t cap)
{
	static const char script[] =
		"set -e; mkdir pki; cd pki; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
		"openssl req -x509 $k -keyout ca.key -out ca.pem -days 2 -subj '/CN=test CA'\n"
		"openssl req -x509 $k -keyout other-ca.key -out other-ca.pem -days 2 -subj '/CN=another CA'\n"
		"printf 'subjectAltName=IP:127.0.0.1\\n' > server.ext\n"
		"for n in server:ca client:ca rogue:other-ca; do\n"
		"  openssl req $k -keyout ${n%:*}.key -out ${n%:*}.csr -subj /CN=${n%:*}\n"
		"  openssl x509 -req -in ${n%:*}.csr -CA ${n#*:}.pem -CAkey ${n#*:}.key -CAcreateserial -days 2 "
		"$([ ${n%:*} = server ] && echo -extfile server.ext) -out ${n%:*}.pem\n"
		"done\n"
		"openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out other.key\n"
		"chmod 600 server.key; chmod 644 *.pem client.key rogue.key\n";
	char cmd[sizeof(script) + 128];

	snprintf(cmd, sizeof(cmd), "cd '%s' && { %s} > pki.log 2>&1", fx->dir, script);
	if (system(cmd) != 0)
		fail_msg("openssl could not make the test certificates (make deps installs it): see %s/pki.log", fx->dir);
	snprintf(pki, cap, "%s/pki", fx->dir);
}

static void tls_options_without_their_pair_say_so_and_exit_2(void **state)
{
	struct fixture *fx = *state;
	const char *key_alone[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
				    "--tls-key", "/k.pem", NULL };
	const char *cert_alone[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
				     "--tls-cert", "/c.pem", NULL };
	const char *ca_alone[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys,
				   "--client-ca", "/ca.pem", NULL };
	const char *from_file[] = { "--config", fx->conf, NULL };
	char log[4096], conf[512];

	keys_file(fx, &fx->a, NULL);
	assert_int_equal(run_to_end(fx, key_alone, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--tls-key without --tls-cert: give both"));
	assert_int_equal(run_to_end(fx, cert_alone, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--tls-cert without --tls-key: give both"));
	assert_int_equal(run_to_end(fx, ca_alone, log, sizeof(log)), 2);
	assert_non_null(strstr(log, "--client-ca without --tls-cert: client certificates are checked in the TLS "
				    "handshake: give --tls-cert and --tls-key too"));
	snprintf(conf, sizeof(conf), "ingest_listen = 127.0.0.1:0\ningest_db = %s\ningest_keys = %s\n"
		 "ingest_client_ca = /ca.pem\n", fx->db, fx->keys);
	config_file(fx, conf);
	assert_int_equal(run_to_end(fx, from_file, log, sizeof(log)), 2);
	assert_non_null(strstr(log, ":4:1: key 'ingest_client_ca': set without ingest_tls_cert"));
	assert_int_equal(access(fx->db, F_OK), -1); /* nothing was started */
}

/* tracer-ingest with --tls-cert DIR/cert, --tls-key DIR/key and, unless NULL, --client-ca DIR/ca: its exit status. */
static int run_tls(struct fixture *fx, const char *pki, const char *cert, const char *key, const char *ca, char *log,
		   size_t cap)
{
	char c[256], k[256], a[256];
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--tls-cert", c,
			       "--tls-key", k, ca ? "--client-ca" : NULL, a, NULL };

	snprintf(c, sizeof(c), "%s/%s", pki, cert);
	snprintf(k, sizeof(k), "%s/%s", pki, key);
	snprintf(a, sizeof(a), "%s/%s", pki, ca ? ca : "");
	return run_to_end(fx, args, log, cap);
}

static void unusable_tls_files_are_named_and_exit_1(void **state)
{
	struct fixture *fx = *state;
	char pki[128], log[4096], want[512];

	keys_file(fx, &fx->a, NULL);
	make_pki(fx, pki, sizeof(pki));
	assert_int_equal(run_tls(fx, pki, "none.pem", "server.key", NULL, log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "--tls-cert %s/none.pem: cannot open: No such file or directory (give a PEM file", pki);
	assert_non_null(strstr(log, want));
	assert_int_equal(run_tls(fx, pki, "server.pem", "other.key", NULL, log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "--tls-key %s/other.key does not match the certificate in --tls-cert %s/server.pem: "
		 "give the private key that certificate was issued for", pki, pki);
	assert_non_null(strstr(log, want));
	assert_int_equal(run_tls(fx, pki, "server.key", "server.key", NULL, log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "--tls-cert %s/server.key: no PEM certificate in it", pki);
	assert_non_null(strstr(log, want));
	assert_int_equal(run_tls(fx, pki, "server.pem", "server.pem", NULL, log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "--tls-key %s/server.pem: no unencrypted PEM private key in it", pki);
	assert_non_null(strstr(log, want));
	assert_int_equal(run_tls(fx, pki, "server.pem", "server.key", "client.key", log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "--client-ca %s/client.key: no PEM certificate in it", pki);
	assert_non_null(strstr(log, want));
	assert_null(strstr(log, "listening on"));
}

/* GET /v1/health over HTTPS with make_pki's certificate name (NULL: none): the HTTP status, 0 for none. */
static long https_health(unsigned port, const char *pki, const char *name, CURLcode *res)
{
	char url[64];
	long status = 0;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "https://127.0.0.1:%u/v1/health", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	tls_client(c, pki, name);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	*res = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

/* Plain HTTP to the TLS port: curl's result (the handshake fails on it; no answer). */
static CURLcode plain_health(unsigned port)
{
	char url[64];
	CURLcode res;
	CURL *c = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/health", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	res = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return res;
}

static void client_ca_refuses_clients_in_the_handshake_under_the_filter(void **state)
{
	struct fixture *fx = *state;
	const char *args[] = { "--config", fx->conf, "--ready-fd", "3", as_root() ? "--user" : NULL, "nobody", NULL };
	char pki[128], conf[1024], log[8192];
	CURLcode res;

	keys_file(fx, &fx->a, NULL);
	make_pki(fx, pki, sizeof(pki));
	snprintf(conf, sizeof(conf), "ingest_listen = 127.0.0.1:0\ningest_db = %s\ningest_keys = %s\n"
		 "ingest_tls_cert = %s/server.pem\ningest_tls_key = %s/server.key\ningest_client_ca = %s/ca.pem\n",
		 fx->db, fx->keys, pki, pki, pki);
	config_file(fx, conf);
	start_args(fx, args);

	assert_int_equal(https_health(fx->port, pki, NULL, &res), 0);
	assert_int_not_equal(res, CURLE_OK);
	assert_int_equal(https_health(fx->port, pki, "rogue", &res), 0);
	assert_int_not_equal(res, CURLE_OK);
	assert_int_not_equal(plain_health(fx->port), CURLE_OK);
	assert_int_equal(https_health(fx->port, pki, "client", &res), 200);
	assert_int_equal(post_batch_to(fx->port, pki, &fx->a, 1, 1), 200);
	stop_cleanly(fx);
	daemon_read_file(fx->log, log, sizeof(log));
	assert_non_null(strstr(log, "<5>refused the TLS client 127.0.0.1: no client certificate (--client-ca: one it "
				    "signed is required)\n"));
	assert_non_null(strstr(log, "<5>refused the TLS client 127.0.0.1: its certificate does not verify against "
				    "--client-ca: "));
	assert_non_null(strstr(log, "TLS clients refused 2\n"));
	assert_int_equal(sql_int(fx->db, "SELECT count(*) FROM records"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bad_command_line_says_what_is_wanted_and_exits_2, setup, teardown),
		cmocka_unit_test_setup_teardown(number_options_refuse_a_sign_or_a_blank, setup, teardown),
		cmocka_unit_test_setup_teardown(unusable_keys_or_lake_say_what_to_do_and_exit_1, setup, teardown),
		cmocka_unit_test_setup_teardown(serves_the_port_it_reports_and_stops_cleanly_on_sigterm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sighup_reloads_the_keys_file_all_or_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(config_gives_the_port_the_lake_and_the_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(set_and_given_options_win_over_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_config_is_named_by_file_and_line_and_exits_2, setup, teardown),
		cmocka_unit_test_setup_teardown(the_user_it_runs_as_is_never_root, setup, teardown),
		cmocka_unit_test_setup_teardown(as_root_a_missing_tracer_ingest_user_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(ready_reaches_notify_socket_once_the_port_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_confined_and_still_serves_reloads_and_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(restarted_on_its_lake_stores_under_the_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(a_busy_lake_is_waited_for_under_the_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(two_ingests_on_one_lake_store_a_batch_sent_to_both_once, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_to_run_without_its_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(tls_options_without_their_pair_say_so_and_exit_2, setup, teardown),
		cmocka_unit_test_setup_teardown(unusable_tls_files_are_named_and_exit_1, setup, teardown),
		cmocka_unit_test_setup_teardown(client_ca_refuses_clients_in_the_handshake_under_the_filter, setup,
						teardown),
	};
	int rc;

	if (daemon_find("tracer-ingest", ingest_bin, sizeof(ingest_bin)))
		return test_skip_all("no tracer-ingest next to the test binaries: run 'make all' first");
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
