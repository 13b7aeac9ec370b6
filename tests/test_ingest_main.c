/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tracer-ingest binary: a bad command line, a keys file it cannot use
 * or a lake it cannot open are refused with a message saying what to do
 * and a non-zero exit; it serves on exactly the address given, says which
 * port on stderr and on --ready-fd, reloads the keys file on SIGHUP (all
 * or nothing: a file with an error, named by file:line:column, leaves the
 * keys in force), and stops cleanly on SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "test_ingest_helpers.h"

static char ingest_bin[PATH_MAX];

struct fixture {
	char dir[64], db[96], keys[96], log[96];
	struct batch_secret_key a, b;
	pid_t pid;
	unsigned port;
};

static int find_ingest(void)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *const rel[] = { "/../tracer-ingest", "/../../tracer-ingest" };

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (int i = 0; i < 2; i++) {
		snprintf(ingest_bin, sizeof(ingest_bin), "%s%s", self, rel[i]);
		if (access(ingest_bin, X_OK) == 0)
			return 0;
	}
	return -1;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void read_file(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? 0 : read(fd, out, cap - 1);

	out[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* Start tracer-ingest with args (NULL-terminated), stderr into fx->log; ready_fd: the write end to pass, or -1. */
static pid_t spawn(struct fixture *fx, const char *const *args, int ready_fd)
{
	const char *argv[24] = { ingest_bin };
	size_t n = 1;
	pid_t pid;

	while (args[n - 1] && n < 23) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int log = open(fx->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(log, 2);
		if (ready_fd == 3)
			fcntl(3, F_SETFD, 0); /* keep it across exec */
		else if (ready_fd >= 0 && dup2(ready_fd, 3) == 3)
			close(ready_fd);
		execv(ingest_bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return pid;
}

/* Exit status of a run that must end by itself within a few seconds. */
static int run_to_end(struct fixture *fx, const char *const *args, char *log, size_t cap)
{
	pid_t pid = spawn(fx, args, -1);
	int status = 0;

	for (int i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("tracer-ingest did not exit");
	}
	read_file(fx->log, log, cap);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
	if (batch_crypto_init() || !mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->db, sizeof(fx->db), "%s/lake.db", fx->dir);
	snprintf(fx->keys, sizeof(fx->keys), "%s/keys", fx->dir);
	snprintf(fx->log, sizeof(fx->log), "%s/stderr", fx->dir);
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

static long post_batch(unsigned port, const struct batch_secret_key *k, uint8_t host_n, uint64_t first)
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
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/batches", port);
	curl_easy_setopt(c, CURLOPT_URL, url);
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

/* Start serving; fx->port from --ready-fd, and the same port in the log line. */
static void start_server(struct fixture *fx)
{
	const char *args[] = { "--listen", "127.0.0.1:0", "--db", fx->db, "--keys", fx->keys, "--ready-fd", "3",
			       "--timeout", "2", NULL };
	struct pollfd p;
	char line[64] = "", log[4096], expect[64];
	int ready[2];
	ssize_t n;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	fx->pid = spawn(fx, args, ready[1]);
	close(ready[1]);
	p = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	n = read(ready[0], line, sizeof(line) - 1);
	close(ready[0]);
	assert_true(n > 0);
	line[n] = 0;
	assert_int_equal(sscanf(line, "ready %u\n", &fx->port), 1);
	assert_true(fx->port > 0);
	read_file(fx->log, log, sizeof(log));
	snprintf(expect, sizeof(expect), "<6>listening on 127.0.0.1:%u\n", fx->port);
	assert_non_null(strstr(log, expect));
}

/* Wait until the log holds text (a reload's outcome), at most 5 s. */
static void wait_log(struct fixture *fx, const char *text, unsigned nth)
{
	char log[8192];

	for (int i = 0; i < 500; i++) {
		const char *p = log;
		unsigned seen = 0;

		read_file(fx->log, log, sizeof(log));
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
	assert_int_equal(kill(fx->pid, SIGTERM), 0);
	for (int i = 0; i < 500 && waitpid(fx->pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	fx->pid = 0;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bad_command_line_says_what_is_wanted_and_exits_2, setup, teardown),
		cmocka_unit_test_setup_teardown(unusable_keys_or_lake_say_what_to_do_and_exit_1, setup, teardown),
		cmocka_unit_test_setup_teardown(serves_the_port_it_reports_and_stops_cleanly_on_sigterm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sighup_reloads_the_keys_file_all_or_nothing, setup, teardown),
	};
	int rc;

	if (find_ingest()) {
		fprintf(stderr, "skipped: no tracer-ingest next to the test binaries: run 'make all' first\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
