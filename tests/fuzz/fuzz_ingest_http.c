/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary bytes as everything one client sends to
 * tracer-ingest's HTTP server, with abort() on a broken invariant.
 *
 * The server is the real one (server_start: libmicrohttpd, its own
 * polling thread) over a real ingest, a keys file read with
 * keys_load_file and an in-memory SQLite lake; it starts once per process
 * on 127.0.0.1, port 0, with limits small enough for the fuzzer's inputs
 * to cross them (MAX_BODY, CONN_MEMORY, a 1 s idle timeout). Each input
 * is one connection: the bytes written, the write side shut, and every
 * byte of the answer read until the server closes.
 *
 * Input: the bytes a client sends (requests, pipelined or not; anything).
 *
 * Invariants:
 *   - the server closes every connection within its idle timeout and a
 *     little more (CLOSE_WITHIN_MS), whatever was sent: after its input
 *     the client sends nothing, not even slowly;
 *   - what it sends is a sequence of whole HTTP/1.x responses: a status
 *     line with a status the API documents (or libmicrohttpd's own for a
 *     request it cannot parse), printable header lines, a body as long as
 *     its Content-Length (none for HEAD) and, for the server's own JSON
 *     answers, a JSON object;
 *   - never 503: one connection at a time and max_memory == max_body, so
 *     a 503 means a request's memory reservation was not given back;
 *   - everything the server logs (stderr, captured) is printable ASCII in
 *     lines with a syslog prefix, whatever the client's bytes;
 *   - once closed, the connection's descriptor is closed in the server
 *     too (the process holds as many as before the input);
 *   - nothing leaks (LeakSanitizer, at the end and when an input's
 *     allocations do not balance).
 *
 * Every input starts from an empty lake (wiped through a second
 * connection to the same shared-cache database, as fuzz_ingest_batch
 * does), so that a signed batch in the input is stored, not found a
 * duplicate of an earlier input's.
 *
 * Seeds: TRACER_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/fuzz_ingest_http
 * writes them into DIR and exits (tests/fuzz/corpus/fuzz_ingest_http/ was
 * written so): real signed batches (the keys below, fixed seeds) posted
 * with Content-Length, chunked, pipelined, with an Idempotency-Key or
 * Expect: 100-continue; refusals (403 not enrolled or another host, 400
 * tampered, 413 announced and streamed); health, bad methods and paths,
 * HTTP/1.0, oversized and malformed headers, garbage.
 * TRACER_FUZZ_HTTP_DUMP=1 prints every answer and how long it took.
 *
 * Not reached here: the whole-request deadline (a client trickling bytes)
 * and the memory budget shared between connections (503), which need
 * time or several connections; test_ingest_http covers the timeouts.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "../test_ingest_helpers.h"
#include "ingest.h"
#include "keys.h"
#include "server.h"
#include "store.h"
#include "fuzz_check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY 4096u       /* the server's --max-body: inputs of a few KiB cross it */
#define CONN_MEMORY 8192u    /* libmicrohttpd's pool per connection: headers larger than this are refused */
#define TIMEOUT_S 1u         /* idle timeout; the whole-request deadline is SERVER_REQUEST_DEADLINE_FACTOR times it */
#define CLOSE_WITHIN_MS ((TIMEOUT_S + 2) * 1000) /* it sends nothing after its input: the idle timeout applies */
#define HALF_CLOSE_WAIT_MS 20
#define ANSWER_MAX (1u << 20)
#define LAKE_URI "file:fuzz_ingest_http_lake?mode=memory&cache=shared"

static const uint8_t any_seed[crypto_sign_SEEDBYTES] = "tracer-ingest-fuzz-key-seed-0001";  /* any host */
static const uint8_t bound_seed[crypto_sign_SEEDBYTES] = "tracer-ingest-fuzz-key-seed-0002"; /* host 1 only */
static const uint8_t stranger_seed[crypto_sign_SEEDBYTES] = "tracer-ingest-fuzz-key-seed-0003"; /* not enrolled */

static struct {
	struct batch_secret_key any, bound, stranger;
	uint8_t host1[BATCH_HOST_ID_LEN], host2[BATCH_HOST_ID_LEN];
	struct store *lake;
	sqlite3 *wiper;
	struct ingest ig;
	struct server *srv;
	struct sockaddr_in addr;
	char *log;            /* the server's stderr (open_memstream) */
	size_t log_len;
	int fds;              /* descriptors open between inputs */
	bool dump;            /* TRACER_FUZZ_HTTP_DUMP: print every answer */
	uint8_t answer[ANSWER_MAX];
} g;

/* ---- set-up ---------------------------------------------------------------- */

static void key_from_seed(struct batch_secret_key *k, const uint8_t seed[crypto_sign_SEEDBYTES])
{
	crypto_sign_seed_keypair(k->public_key, k->secret_key, seed);
	batch_key_id(k->public_key, k->key_id);
}

/* The keys file as an operator writes it (mode 0600), read by the ingest's own loader, then removed. */
static void load_keys(struct keyring *kr)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], path[300], any[256], bound[256], text[600], err[512];
	int fd;

	snprintf(dir, sizeof(dir), "%s/fuzz_ingest_http.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/keys", dir);
	CHECK(batch_public_line(&g.any, NULL, any, sizeof(any)) == 0);
	CHECK(batch_public_line(&g.bound, g.host1, bound, sizeof(bound)) == 0);
	snprintf(text, sizeof(text), "# fuzz_ingest_http\n%s\n%s\n", any, bound);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	if (keys_load_file(kr, path, err, sizeof(err))) {
		dprintf(2, "keys_load_file: %s\n", err);
		abort();
	}
	CHECK(kr->n == 2);
	unlink(path);
	rmdir(dir);
}

static void write_seeds(const char *dir);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct server_config c = { .listen = "127.0.0.1:0", .max_body = MAX_BODY, .max_memory = MAX_BODY,
				   .timeout_s = TIMEOUT_S, .conn_memory = CONN_MEMORY };
	const char *seeds = getenv("TRACER_FUZZ_WRITE_SEEDS");
	struct keyring kr;
	char err[512];

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	CHECK(batch_crypto_init() == 0);
	key_from_seed(&g.any, any_seed);
	key_from_seed(&g.bound, bound_seed);
	key_from_seed(&g.stranger, stranger_seed);
	host_id_of(g.host1, 1);
	host_id_of(g.host2, 2);
	if (seeds) {
		write_seeds(seeds);
		exit(0);
	}
	load_keys(&kr);
	CHECK(store_open(&g.lake, LAKE_URI, false, err, sizeof(err)) == STORE_OK);
	CHECK(sqlite3_open_v2(LAKE_URI, &g.wiper, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) == SQLITE_OK);
	CHECK(ingest_init(&g.ig, g.lake, &kr) == 0);
	/*
	 * The server's log, kept to be checked: glibc's stderr is an ordinary
	 * variable. libFuzzer and the sanitizers write to fd 2, not through it.
	 */
	stderr = open_memstream(&g.log, &g.log_len);
	CHECK(stderr != NULL);
	if (server_start(&g.srv, &c, &g.ig, err, sizeof(err))) {
		dprintf(2, "server_start: %s\n", err);
		abort();
	}
	g.addr.sin_family = AF_INET;
	g.addr.sin_port = htons(server_port(g.srv));
	g.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g.fds = fuzz_count_fds();
	g.dump = getenv("TRACER_FUZZ_HTTP_DUMP") != NULL;
	return 0;
}

static void wipe_lake(void)
{
	static const char sql[] =
		"DELETE FROM hosts; DELETE FROM keys; DELETE FROM batches; DELETE FROM gaps; DELETE FROM records;"
		"DELETE FROM processes; DELETE FROM samples; DELETE FROM files; DELETE FROM cgroups;"
		"DELETE FROM signals; DELETE FROM agent_counters; DELETE FROM losses; DELETE FROM runs;"
		"DELETE FROM steps; DELETE FROM run_processes;";

	CHECK(sqlite3_exec(g.wiper, sql, NULL, NULL, NULL) == SQLITE_OK);
}

/* ---- one connection ------------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The server's end of our connection (it runs in this process): the socket with our addresses swapped. */
static int server_end(int fd)
{
	struct sockaddr_in me, a, b;
	socklen_t len = sizeof(me);
	struct dirent *e;
	DIR *d;
	int found = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &len))
		return -1;
	d = opendir("/proc/self/fd");
	CHECK(d != NULL);
	while (found < 0 && (e = readdir(d)) != NULL) {
		int n = atoi(e->d_name);
		socklen_t la = sizeof(a), lb = sizeof(b);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || n == fd || n == dirfd(d) ||
		    getsockname(n, (struct sockaddr *)&a, &la) || la != sizeof(a) || a.sin_family != AF_INET ||
		    getpeername(n, (struct sockaddr *)&b, &lb) || lb != sizeof(b))
			continue;
		if (a.sin_port == g.addr.sin_port && a.sin_addr.s_addr == g.addr.sin_addr.s_addr &&
		    b.sin_port == me.sin_port && b.sin_addr.s_addr == me.sin_addr.s_addr)
			found = n;
	}
	closedir(d);
	return found;
}

/* Has the server read every byte we sent (or closed its end, once it had one)? */
static bool all_taken(int fd, bool *accepted)
{
	int unacked = 0, queued = 0, end;

	if (ioctl(fd, SIOCOUTQ, &unacked) || unacked > 0)
		return false;
	end = server_end(fd);
	if (end < 0)
		return *accepted; /* closed already, or not accepted yet */
	*accepted = true;
	return ioctl(end, SIOCINQ, &queued) == 0 && queued == 0;
}

/*
 * Send data, shut the write side, read until the server closes: the bytes
 * it answered. Aborts when it keeps the connection past its limits.
 *
 * The write side is shut only once the server has read every byte sent
 * (or HALF_CLOSE_WAIT_MS have passed: it stopped reading): libmicrohttpd
 * 0.9.75's edge-triggered epoll loop misses an end-of-file that arrives
 * together with the last bytes of a request (it reads them, gets less than
 * it asked for, and waits for an edge that never comes), and then holds
 * the connection until the idle timeout. That costs a client who closes
 * so fast a second of its own connection slot, nothing more (the timeout
 * itself is tested in test_ingest_http); a fuzzer, every second input.
 */
static size_t exchange(const uint8_t *data, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int64_t deadline = now_ms() + CLOSE_WITHIN_MS, half_close_at = 0;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	enum { WRITING, DRAINING, SHUT } state = WRITING;
	size_t sent = 0, got = 0;
	bool accepted = false;

	CHECK(fd >= 0);
	if (connect(fd, (const struct sockaddr *)&g.addr, sizeof(g.addr)) < 0)
		CHECK(errno == EINPROGRESS);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN | (state == WRITING ? POLLOUT : 0) };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			dprintf(2, "invariant failed: the server kept the connection open %u ms after the input "
				   "(%zu of %zu bytes taken, %zu answered)\n", CLOSE_WITHIN_MS, sent, size, got);
			abort();
		}
		if (state == DRAINING) {
			if (all_taken(fd, &accepted) || now_ms() >= half_close_at) {
				shutdown(fd, SHUT_WR);
				state = SHUT;
			} else {
				left = 0; /* look again soon */
				usleep(20);
			}
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if (state == WRITING && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = sent < size ? send(fd, data + sent, size - sent, MSG_NOSIGNAL) : 0;
			if (n > 0)
				sent += (size_t)n;
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				state = SHUT; /* the server stopped reading (closed, reset): read what it said */
			} else if (sent == size) {
				state = DRAINING;
				half_close_at = now_ms() + HALF_CLOSE_WAIT_MS;
			}
		}
		if (!(p.revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		n = recv(fd, g.answer + got, sizeof(g.answer) - got, 0);
		if (n > 0) {
			got += (size_t)n;
			CHECK(got < sizeof(g.answer)); /* a few KiB of requests cannot need a MiB of answers */
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break; /* closed (reset: the server closed with our bytes unread; all it sent came first) */
	}
	/* No TIME_WAIT left behind: loopback ports last the whole run. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	return got;
}

/* ---- what came back --------------------------------------------------------------- */

static bool is_http(const uint8_t *p, size_t n)
{
	return n >= 7 && !memcmp(p, "HTTP/1.", 7);
}

/* Statuses the server's own handler answers with (server.c, ingest.c): JSON bodies. */
static bool ours(unsigned status)
{
	return status == 200 || status == 400 || status == 403 || status == 404 || status == 405 ||
	       status == 413 || status == 500;
}

/* Statuses libmicrohttpd answers with itself, for requests it cannot hand to us. */
static bool library_status(unsigned status)
{
	return status == 400 || status == 413 || status == 414 || status == 417 || status == 431 ||
	       status == 500 || status == 501 || status == 505;
}

/* Header value (case-insensitive name) in the block [p, end), as a number; -1 when absent. */
static int64_t header_number(const char *p, const char *end, const char *name)
{
	size_t nlen = strlen(name);

	for (const char *line = p; line < end;) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > nlen && !strncasecmp(line, name, nlen) && line[nlen] == ':') {
			char *stop;
			long long v = strtoll(line + nlen + 1, &stop, 10);

			CHECK(stop <= eol && v >= 0);
			return v;
		}
		line = eol + 2;
	}
	return -1;
}

static bool header_has(const char *p, const char *end, const char *text)
{
	return memmem(p, (size_t)(end - p), text, strlen(text)) != NULL;
}

/* One response at p (n bytes left); returns its length. */
static size_t check_response(const uint8_t *p, size_t n)
{
	const uint8_t *eoh = memmem(p, n, "\r\n\r\n", 4);
	const char *h = (const char *)p, *hend;
	const uint8_t *body;
	unsigned status;
	size_t avail;
	int64_t clen;

	CHECK(is_http(p, n));
	CHECK(eoh != NULL);
	CHECK(n >= 13 && (p[7] == '0' || p[7] == '1') && p[8] == ' ' && p[12] == ' ');
	CHECK(p[9] >= '1' && p[9] <= '5' && p[10] >= '0' && p[10] <= '9' && p[11] >= '0' && p[11] <= '9');
	status = (unsigned)(p[9] - '0') * 100 + (unsigned)(p[10] - '0') * 10 + (unsigned)(p[11] - '0');
	/* every header byte printable, lines ending in CRLF only */
	for (const uint8_t *q = p; q < eoh; q++)
		CHECK((*q >= 0x20 && *q < 0x7f) || (*q == '\r' && q[1] == '\n') || (*q == '\n' && q[-1] == '\r'));
	body = eoh + 4;
	avail = n - (size_t)(body - p);
	if (status == 100)
		return (size_t)(body - p);
	CHECK(status != 503);
	hend = (const char *)eoh + 2;
	clen = header_number(h, hend, "Content-Length");
	CHECK(clen >= 0);
	if ((size_t)clen <= avail && ((size_t)clen == avail || is_http(body + clen, avail - (size_t)clen))) {
		if (header_has(h, hend, "\r\nContent-Type: application/json\r\n")) {
			CHECK(ours(status));
			CHECK(clen >= 3 && body[0] == '{' && body[clen - 2] == '}' && body[clen - 1] == '\n');
			for (int64_t i = 0; i < clen - 1; i++)
				CHECK(body[i] >= 0x20 && body[i] < 0x7f);
			if (status == 200)
				CHECK(memmem(body, (size_t)clen, "\"status\":\"ok\"", 13) ||
				      memmem(body, (size_t)clen, "\"status\":\"stored\"", 17) ||
				      memmem(body, (size_t)clen, "\"status\":\"duplicate\"", 20));
			if (status == 405)
				CHECK(header_has(h, hend, "\r\nAllow: "));
		} else {
			CHECK(library_status(status));
		}
		return (size_t)(body - p) + (size_t)clen;
	}
	/*
	 * libmicrohttpd 0.9.75 (Debian 12) sends the status line and headers
	 * of some of its own refusals twice, the first time with no body (a
	 * Content-Length it cannot parse or beyond 2^64 - 1: 400, 413): its
	 * defect, on requests no client sends, and it closes the connection
	 * after it. Nothing of ours runs; the copy that follows is checked as
	 * any response.
	 */
	if (library_status(status) && avail >= (size_t)(body - p) && !memcmp(body, p, (size_t)(body - p)))
		return (size_t)(body - p);
	/* HEAD: the headers say how long the body would be; none follows */
	CHECK(avail == 0 || is_http(body, avail));
	if (header_has(h, hend, "\r\nContent-Type: application/json\r\n"))
		CHECK(status == 200 || status == 404 || status == 405);
	else
		CHECK(library_status(status));
	return (size_t)(body - p);
}

static void check_answer(size_t len)
{
	for (size_t off = 0; off < len;)
		off += check_response(g.answer + off, len - off);
}

/* Every log line: "<N>" then printable ASCII; the client's bytes never reach it raw. */
static void check_log(void)
{
	flockfile(stderr); /* the server thread writes through it */
	fflush(stderr);
	for (size_t i = 0; i < g.log_len; i++) {
		bool line_start = i == 0 || g.log[i - 1] == '\n';

		if (line_start) {
			CHECK(i + 3 <= g.log_len && g.log[i] == '<' && g.log[i + 1] >= '0' && g.log[i + 1] <= '7' &&
			      g.log[i + 2] == '>');
		}
		if (g.log[i] != '\n' && !(g.log[i] >= 0x20 && g.log[i] < 0x7f)) {
			dprintf(2, "invariant failed: unprintable byte 0x%02x in the server's log: %.*s\n",
				(unsigned char)g.log[i], (int)g.log_len, g.log);
			abort();
		}
	}
	CHECK(g.log_len == 0 || g.log[g.log_len - 1] == '\n');
	fseeko(stderr, 0, SEEK_SET);
	funlockfile(stderr);
}

/* The server closes its end right after ours shows end-of-file; give its thread a moment. */
static void check_fds(void)
{
	int64_t deadline = now_ms() + 2000;
	int n;

	while ((n = fuzz_count_fds()) != g.fds && now_ms() < deadline)
		usleep(50);
	if (n != g.fds) {
		dprintf(2, "invariant failed: %d descriptors open after the connection closed, %d before\n", n, g.fds);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;

	int64_t t0;

	wipe_lake();
	t0 = now_ms();
	len = exchange(data, size);
	if (g.dump)
		dprintf(2, "---- %zu bytes in, %zu answered in %lld ms:\n%.*s\n----\n", size, len,
			(long long)(now_ms() - t0), (int)len, (const char *)g.answer);
	check_answer(len);
	check_fds();
	check_log();
	return 0;
}

/* ---- seeds ----------------------------------------------------------------------- */

struct text {
	uint8_t *p;
	size_t len;
};

static void add(struct text *t, const void *p, size_t n)
{
	t->p = realloc(t->p, t->len + n);
	CHECK(t->p != NULL);
	memcpy(t->p + t->len, p, n);
	t->len += n;
}

__attribute__((format(printf, 2, 3))) static void addf(struct text *t, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	CHECK(n >= 0 && (size_t)n < sizeof(buf));
	add(t, buf, (size_t)n);
}

static void save(const char *dir, const char *name, struct text *t)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(fwrite(t->p, 1, t->len, f) == t->len);
	CHECK(fclose(f) == 0);
	free(t->p);
	t->p = NULL;
	t->len = 0;
}

/* A small batch of a process's life: fork, exec, samples, exit. */
static void seal(const struct batch_secret_key *k, const uint8_t *host, int compression, struct sealed *s)
{
	static const char *const args[] = { "samtools", "sort", "-o", "out.bam", "in.bam", NULL };
	struct frames f = { 0 };
	struct tr_fork fk = make_fork(1000, 100, 10, 4242, 900);
	struct tr_exit ex = make_exit(9000, 4242, 900, 100, 0, 1000);
	uint8_t exec[1024];
	size_t elen = encode_exec(exec, sizeof(exec), 2000, 4242, 100, 900, "/usr/bin/samtools", args);
	uint64_t seq = 1;

	CHECK(elen > 0);
	CHECK(frames_add(&f, seq++, TR_FORK, &fk, sizeof(fk)));
	CHECK(frames_add(&f, seq++, TR_EXEC, exec, (uint32_t)elen));
	for (uint32_t i = 0; i < 3; i++) {
		struct tr_sample sm = encode_sample(3000 + i, 4242, 900, 100, 1000 * i, 1 << 20, 4096 * i);

		CHECK(frames_add(&f, seq++, TR_SAMPLE, &sm, sizeof(sm)));
	}
	CHECK(frames_add(&f, seq++, TR_EXIT, &ex, sizeof(ex)));
	CHECK(seal_frames(k, host, 1, NULL, compression, &f, s) == 0);
	CHECK(s->len < MAX_BODY);
	frames_free(&f);
}

static void post_head(struct text *t, size_t len, const char *extra)
{
	addf(t, "POST /v1/batches HTTP/1.1\r\nHost: ingest.example:8443\r\nUser-Agent: tracer-processor\r\n"
		"Content-Type: application/octet-stream\r\nContent-Length: %zu\r\n%s\r\n", len, extra);
}

static void post(struct text *t, const struct sealed *s, const char *extra)
{
	post_head(t, s->len, extra);
	add(t, s->wire, s->len);
}

static void chunked(struct text *t, const struct sealed *s, size_t piece, const char *trailer)
{
	addf(t, "POST /v1/batches HTTP/1.1\r\nHost: ingest\r\nContent-Type: application/octet-stream\r\n"
		"Transfer-Encoding: chunked\r\n\r\n");
	for (size_t off = 0; off < s->len; off += piece) {
		size_t n = s->len - off < piece ? s->len - off : piece;

		addf(t, "%zx\r\n", n);
		add(t, s->wire + off, n);
		addf(t, "\r\n");
	}
	addf(t, "0\r\n%s\r\n", trailer);
}

static void write_seeds(const char *dir)
{
	static const char health[] = "GET /v1/health HTTP/1.1\r\nHost: ingest\r\n\r\n";
	struct sealed any, zlib, bound_other, stranger;
	char hex[2 * BATCH_HASH_LEN + 1], idem[120];
	struct text t = { 0 };
	uint8_t junk[256];

	seal(&g.any, g.host2, BATCH_COMP_NONE, &any);
	seal(&g.any, g.host2, BATCH_COMP_ZLIB, &zlib);
	seal(&g.bound, g.host2, BATCH_COMP_ZLIB, &bound_other);
	seal(&g.stranger, g.host2, BATCH_COMP_ZLIB, &stranger);
	sodium_bin2hex(hex, sizeof(hex), zlib.hash, sizeof(zlib.hash));

	post(&t, &zlib, "");
	save(dir, "post_batch_200", &t);
	post(&t, &any, "Connection: close\r\n");
	save(dir, "post_batch_uncompressed_connection_close", &t);
	snprintf(idem, sizeof(idem), "Idempotency-Key: %s\r\n", hex);
	post(&t, &zlib, idem);
	save(dir, "post_batch_idempotency_key", &t);
	post(&t, &zlib, "Idempotency-Key: 00ff\r\n");
	save(dir, "post_batch_wrong_idempotency_key_400", &t);
	post(&t, &zlib, "");
	post(&t, &zlib, "");
	add(&t, health, sizeof(health) - 1);
	save(dir, "pipelined_stored_duplicate_health", &t);
	chunked(&t, &zlib, 100, "");
	save(dir, "chunked_batch_200", &t);
	chunked(&t, &zlib, 7, "X-Trailer: yes\r\n");
	save(dir, "chunked_small_pieces_trailer", &t);
	post(&t, &zlib, "Expect: 100-continue\r\n");
	save(dir, "expect_100_continue", &t);
	post(&t, &bound_other, "");
	save(dir, "post_key_bound_to_another_host_403", &t);
	post(&t, &stranger, "");
	save(dir, "post_key_not_enrolled_403", &t);
	zlib.wire[zlib.len / 2] ^= 0x20;
	post(&t, &zlib, "");
	zlib.wire[zlib.len / 2] ^= 0x20;
	save(dir, "post_tampered_400", &t);
	post_head(&t, zlib.len + 100, "");
	add(&t, zlib.wire, zlib.len);
	save(dir, "post_body_shorter_than_content_length", &t);
	post_head(&t, 99999999999ull, "");
	add(&t, "TRBATCH1", 8);
	save(dir, "post_content_length_over_max_body_413", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n");
	save(dir, "post_content_length_overflows", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nabcdefg");
	save(dir, "post_two_content_lengths", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "5\r\nabcde\r\n0\r\n\r\n");
	save(dir, "post_content_length_and_chunked", &t);
	{
		struct sealed big = { 0 };

		big.len = MAX_BODY + 600;
		big.wire = calloc(1, big.len);
		CHECK(big.wire != NULL);
		memcpy(big.wire, "TRBATCH1", 8);
		chunked(&t, &big, 1000, "");
		save(dir, "chunked_over_max_body_413", &t);
		free(big.wire);
	}
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n");
	save(dir, "chunked_bad_size", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "ffffffffffffffff;ext=1\r\nabc");
	save(dir, "chunked_huge_size", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
	save(dir, "post_empty_body_400", &t);
	add(&t, health, sizeof(health) - 1);
	save(dir, "get_health_200", &t);
	addf(&t, "HEAD /v1/health HTTP/1.1\r\nHost: x\r\n\r\nHEAD /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n");
	save(dir, "head_health_and_404", &t);
	addf(&t, "GET /v1/health HTTP/1.0\r\n\r\n");
	save(dir, "http10_health", &t);
	addf(&t, "GET /v1/health?verbose=1&x=%%00%%0a HTTP/1.1\r\nHost: x\r\n\r\n");
	save(dir, "health_query_string", &t);
	addf(&t, "GET /v1/batches HTTP/1.1\r\nHost: x\r\n\r\nDELETE /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
		 "BREW /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
	save(dir, "bad_methods_405", &t);
	addf(&t, "GET /v1/batches/../health HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"
		 "POST /v2/batches HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"
		 "GET /\x1b[31mred\x07 HTTP/1.1\r\nHost: x\r\n\r\n");
	save(dir, "unknown_paths_404_escape_in_url", &t);
	addf(&t, "GET /v1/health HTTP/1.1\r\n");
	for (int i = 0; i < 160; i++)
		addf(&t, "X-Header-%03d: %040d\r\n", i, i);
	addf(&t, "\r\n");
	save(dir, "headers_over_conn_memory", &t);
	addf(&t, "GET /");
	for (int i = 0; i < 900; i++)
		addf(&t, "aaaaaaaaaa");
	addf(&t, " HTTP/1.1\r\nHost: x\r\n\r\n");
	save(dir, "url_over_conn_memory", &t);
	addf(&t, "GET /v1/health HTTP/2.0\r\nHost: x\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n"
		 "Bad header line\r\n\r\n");
	save(dir, "bad_version_bad_header", &t);
	addf(&t, "GET /v1/health HTTP/1.1\nHost: x\n\n");
	save(dir, "bare_newlines", &t);
	addf(&t, "GET /v1/health HTTP/1.1\r\nHost: x\r\n folded: continuation\r\n\r\n");
	save(dir, "folded_header", &t);
	addf(&t, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	save(dir, "http2_preface", &t);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	add(&t, junk, sizeof(junk));
	save(dir, "garbage", &t);
	addf(&t, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Len");
	save(dir, "headers_cut_short", &t);
	free(any.wire);
	free(zlib.wire);
	free(bound_other.wire);
	free(stranger.wire);
}
