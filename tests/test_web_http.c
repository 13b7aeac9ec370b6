/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's HTTP side (web/web_server.c, web/api.c) over real loopback
 * HTTP, against a lake made by hand (store_open for the schema, rows
 * INSERTed with sqlite3, the same lake then opened read-only as the
 * daemon opens it):
 *   access     no token 401 (with WWW-Authenticate), a wrong one 403, the
 *              Bearer header and the cookie 200; ?token= sets an HttpOnly
 *              SameSite=Strict cookie and 303s to the page without it; a
 *              wrong ?token= is 403 and sets nothing; /metrics and the
 *              event stream are behind the same check
 *   headers    every answer, refusals included, carries the CSP, nosniff
 *              and no-store
 *   read-only  POST, PUT, DELETE: 405 with Allow
 *   API        the runs newest first, filtered by pipeline, host prefix and
 *              state; a run's report; a pipeline's history; hosts with
 *              their losses and gaps; 404 for what is not there; a
 *              pipeline name with quotes, angle brackets and a newline comes
 *              back as the same string, escaped JSON
 *   stream     a running run: an update at once; the row changed by
 *              another connection (as the ingest would): another update;
 *              the run finished: an update, "end", and the stream closes
 *   metrics    per-host and lake lines in Prometheus' text format, named by its conventions (a build
 *              info, counters _total); per pipeline: runs and steps by state, step durations as a
 *              histogram (cumulative buckets, ended steps only); pipelines and step names capped (the
 *              rest as "other"), a Nextflow task's hash and tag taken off, hostile names escaped, cut
 *              and hashed; a pipeline really named "other" not the folded series; steps by class
 *              as the pipeline page's (tracer tune's) profiles have them
 *   activity   a host's heartbeats, oldest first, rates from their sums,
 *              null where the beat did not say; 404 for a host with none,
 *              400 for a window that cannot be; 12,001 beats come back as
 *              3,001 buckets of 4; a beat's cores and memory used no more
 *              than its CPUs and memory, the beats clamped counted
 *   within     a run's page data no more than its host's CPUs and memory
 *              (the host from the run's row, in the rebuilt report), the
 *              slices clamped counted; no host known, nothing clamped
 *   sweep      tracer sweep --json's document, byte for byte, with the
 *              thresholds the server was given (an idle host found)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "auth.h"
#include "web_server.h"
#include "store.h"
#include "sweep_input.h"
#include "sweep_json.h"
#include "tmpdir.h"
#include "version.h"

#define TOKEN "test-token-0123456789abcdef"
#define H1 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define H2 "cccccccccccccccccccccccccccccccc"
#define H3 "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define T0 "1700000000000000000"
#define SWEEP_MIN_OBSERVED_NS 20000000000LL /* the fixture's: H2's 30 s of idle beats make a finding */

/* Pipeline 'p<"x">\n' has runs 1 (succeeded) and 3 (running); run 2 is another pipeline's, on H2. */
static const char lake_sql[] =
	"BEGIN;"
	"INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns, batches, records, last_batch_hash) VALUES "
	"('" H1 "', " T0 ", " T0 "+9000000000, 7, 100, 'h1'), ('" H2 "', " T0 ", " T0 ", 1, 5, NULL);"
	"INSERT INTO batches (hash, host_id, key_id, boot_id, batch_seq, first_seq, last_seq, nrecords, compression, "
	"body_len, raw_len, wire_len, created_ns, mono_to_real_ns, prev_hash, chain, received_ns) VALUES "
	"('h1', '" H1 "', 'k', 'b', 7, 90, 100, 11, 0, 1, 1, 1, " T0 "+8000000000, 0, 'x', 'linked', "
	T0 "+8250000000);"
	"INSERT INTO gaps (host_id, from_seq, to_seq, found_ns, batch_hash, filled) VALUES ('" H1 "', 10, 19, 0, 'h1', 4);"
	"INSERT INTO losses (host_id, seq, reason, first_seq, last_seq, records, bytes) VALUES "
	"('" H1 "', 50, 'evicted', 1, 3, 3, 300), ('" H1 "', 51, 'ring', 0, 0, 12, 0);"
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, engine, state, start_ns, "
	"end_ns, command, processes, steps, update_seq, last_update_ns, host_instance_type, host_cpus, "
	"host_memory_bytes) VALUES "
	"(1, '" H1 "', 'b', 1, 'x', 'B-1-1', 'p<\"x\">\n', 'snakemake', 'succeeded', " T0 ", " T0 "+10000000000, "
	"'[\"snakemake\",\"</script><img src=x onerror=alert(1)>\"]', 1, 1, 3, " T0 "+10000000000, "
	"'m<\"x\">', 2, 2000000000),"
	"(2, '" H2 "', 'b', 1, 'x', 'B-2-1', 'other', 'nextflow', 'failed', " T0 "+1000000000, " T0 "+2000000000, "
	"NULL, 0, 0, NULL, NULL, NULL, NULL, NULL),"
	"(3, '" H1 "', 'b', 2, 'x', 'B-3-1', 'p<\"x\">\n', 'snakemake', 'running', " T0 "+20000000000, NULL, "
	"'[\"snakemake\"]', 2, 1, 1, " T0 "+21000000000, NULL, NULL, NULL);"
	"INSERT INTO steps (run_id, idx, step_id, name, engine, state, start_ns, end_ns, processes, peak_rss_bytes) "
	"VALUES (1, 0, 's1', 'align', 'snakemake', 'succeeded', " T0 ", " T0 "+5000000000, 1, 3000000000),"
	"(3, 0, 's1', 'align', 'snakemake', 'running', " T0 "+20000000000, NULL, 2, NULL);"
	/* Run 1, on a host of 2 CPUs: two processes of a second whose CPU time says 1.6 s each (3.2 cores). */
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, exit_ts_ns, exit_code, "
	"signal, utime_ns, stime_ns, runtime_ns, run_id, step, tool) VALUES "
	"('" H1 "', 'b', 500, 1, " T0 ", " T0 "+1000000000, 2, 0, 0, 1600000000, 0, 1600000000, 1, 's1', 'bwa'),"
	"('" H1 "', 'b', 501, 1, " T0 ", " T0 "+1000000000, 2, 0, 0, 1600000000, 0, 1600000000, 1, 's1', 'bwa');"
	/* H1: a busy beat, one that said nothing, 10 s unheard (a gap), a lighter one; H2: 30 s idle, the
	 * lake's newest word at T0+30 s. */
	"INSERT INTO heartbeats (host_id, seq, start_ns, end_ns, cpus, cpu_busy_ns, mem_total_bytes, "
	"mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes) VALUES "
	"('" H1 "', 11, " T0 "-30000000000, " T0 "-20000000000, 4, 20000000000, 8000000000, 1000000000, 10000, "
	"5000, 1, 2, 3),"
	"('" H1 "', 12, " T0 "-20000000000, " T0 "-10000000000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL),"
	"('" H1 "', 13, " T0 ", " T0 "+10000000000, 4, 5000000000, 8000000000, 2000000000, 0, 0, 0, 0, 1),"
	"('" H2 "', 1, " T0 ", " T0 "+10000000000, 2, 0, 4000000000, 100000000, 0, 0, 0, 0, 0),"
	"('" H2 "', 2, " T0 "+10000000000, " T0 "+20000000000, 2, 0, 4000000000, 100000000, 0, 0, 0, 0, 0),"
	"('" H2 "', 3, " T0 "+20000000000, " T0 "+30000000000, 2, 0, 4000000000, 100000000, 0, 0, 0, 0, 0);"
	"COMMIT;";

struct fixture {
	struct dir dir;          /* first: dir_teardown frees the struct through it */
	char lake[96];
	struct store *st;
	struct web *w;
	uint16_t port;
};

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s", msg);
	sqlite3_close(db);
}

static int setup(void **state)
{
	static struct sw_config sweep;
	struct fixture *f = calloc(1, sizeof(*f));
	struct web_config c = { .listen = "127.0.0.1:0", .sweep = &sweep };
	struct store *w = NULL;
	struct auth a;
	char err[512];

	if (!f)
		return -1;
	*state = f; /* teardown frees it, whatever fails below */
	sw_config_default(&sweep);
	sweep.gcp_min_observed_ns = SWEEP_MIN_OBSERVED_NS;
	if (!mkdtemp(strcpy(f->dir.path, "/tmp/test_web_http.XXXXXX")))
		return -1;
	snprintf(f->lake, sizeof(f->lake), "%s/lake.db", f->dir.path);
	if (store_open(&w, f->lake, false, err, sizeof(err)))
		return -1;
	store_close(w);
	exec_sql(f->lake, lake_sql);
	if (store_open(&f->st, f->lake, true, err, sizeof(err)) || auth_set(&a, TOKEN, strlen(TOKEN), err, sizeof(err)))
		return -1;
	if (web_listen(&f->w, &c, f->st, &a, err, sizeof(err)) || web_serve(f->w, err, sizeof(err)))
		return -1;
	f->port = web_port(f->w);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	web_stop(f->w);
	store_close(f->st);
	return dir_teardown(state);
}

/* ---- a small HTTP client ---------------------------------------------------- */

static int connect_to(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void send_request(int fd, const char *method, const char *path, const char *extra)
{
	char req[2048];
	int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s\r\n", method,
			 path, extra ? extra : "");

	assert_int_equal(write(fd, req, (size_t)n), n);
}

/* Read until the server closes or timeout_ms passes without a byte; returns the bytes (malloc'd). */
static char *read_all(int fd, int timeout_ms, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	struct pollfd p = { fd, POLLIN, 0 };

	assert_non_null(buf);
	for (;;) {
		ssize_t r;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		if (n + 4096 > cap) {
			char *more = realloc(buf, cap * 2);

			assert_non_null(more);
			buf = more;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

struct reply {
	int status;
	char *text;              /* the whole answer */
	const char *body;
};

static struct reply request(struct fixture *f, const char *method, const char *path, const char *extra)
{
	struct reply r = { 0 };
	size_t len;
	int fd = connect_to(f->port);

	send_request(fd, method, path, extra);
	r.text = read_all(fd, 10000, &len);
	close(fd);
	assert_int_equal(sscanf(r.text, "HTTP/1.1 %d", &r.status), 1);
	r.body = strstr(r.text, "\r\n\r\n");
	assert_non_null(r.body);
	r.body += 4;
	return r;
}

static struct reply get(struct fixture *f, const char *path)
{
	return request(f, "GET", path, "Authorization: Bearer " TOKEN "\r\n");
}

static void has(const struct reply *r, const char *text)
{
	if (!strstr(r->text, text))
		fail_msg("no \"%s\" in:\n%s", text, r->text);
}

static void has_secure_headers(const struct reply *r)
{
	has(r, "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self';");
	has(r, "X-Content-Type-Options: nosniff");
	has(r, "Cache-Control: no-store");
}

/* ---- access ------------------------------------------------------------------ */

static void refused_without_the_token(void **state)
{
	static const char *const paths[] = { "/", "/run?id=1", "/api/runs", "/api/runs/3/events", "/metrics",
					     "/static/report.js", "/nothing" };
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct reply r = request(f, "GET", paths[i], NULL);

		assert_int_equal(r.status, 401);
		has(&r, "WWW-Authenticate: Bearer");
		has_secure_headers(&r);
		free(r.text);
		r = request(f, "GET", paths[i], "Authorization: Bearer test-token-0123456789abcdeX\r\n");
		assert_int_equal(r.status, 403);
		free(r.text);
		r = request(f, "GET", paths[i], "Cookie: tracer_token=wrong-token-0123456789abcdef\r\n");
		assert_int_equal(r.status, 403);
		free(r.text);
	}
}

static void token_in_the_address_sets_a_cookie(void **state)
{
	struct fixture *f = *state;
	struct reply r = request(f, "GET", "/run?id=3&token=" TOKEN "&x=a%20b%3C", NULL);

	assert_int_equal(r.status, 303);
	has(&r, "Set-Cookie: tracer_token=" TOKEN "; Path=/; HttpOnly; SameSite=Strict");
	has(&r, "Location: /run?id=3&x=a%20b%3C\r\n");
	free(r.text);
	r = request(f, "GET", "/elsewhere?token=" TOKEN, NULL); /* not a page: back to the runs */
	assert_int_equal(r.status, 303);
	has(&r, "Location: /\r\n");
	free(r.text);
	r = request(f, "GET", "/?token=not-the-token-0123456789", NULL);
	assert_int_equal(r.status, 403);
	assert_null(strstr(r.text, "Set-Cookie"));
	free(r.text);
	r = request(f, "GET", "/api/runs", "Cookie: a=b; tracer_token=" TOKEN "\r\n");
	assert_int_equal(r.status, 200);
	free(r.text);
}

static void read_only(void **state)
{
	static const char *const methods[] = { "POST", "PUT", "DELETE", "PATCH" };
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		struct reply r = request(f, methods[i], "/api/runs",
					 "Authorization: Bearer " TOKEN "\r\nContent-Length: 0\r\n");

		assert_int_equal(r.status, 405);
		has(&r, "Allow: GET, HEAD");
		free(r.text);
	}
}

/* ---- the API -------------------------------------------------------------------- */

static void runs_newest_first_and_filtered(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/runs");
	const char *r3, *r2, *r1;

	assert_int_equal(r.status, 200);
	has(&r, "Content-Type: application/json");
	has_secure_headers(&r);
	has(&r, "\"schema\":\"tracer.web.runs.v1\",\"matching\":3");
	r3 = strstr(r.body, "\"run_id\":3");
	r2 = strstr(r.body, "\"run_id\":2");
	r1 = strstr(r.body, "\"run_id\":1");
	assert_true(r3 && r2 && r1 && r3 < r2 && r2 < r1);
	/* the pipeline's name, every byte of it, as JSON escapes it */
	has(&r, "\"pipeline\":\"p<\\\"x\\\">\\u000a\"");
	has(&r, "\"filters\":{\"pipelines\":[");
	free(r.text);
	r = get(f, "/api/runs?pipeline=p%3C%22x%22%3E%0A&state=running");
	has(&r, "\"matching\":1");
	has(&r, "\"run_id\":3");
	free(r.text);
	r = get(f, "/api/runs?host=cccc");
	has(&r, "\"matching\":1");
	has(&r, "\"run_id\":2");
	free(r.text);
	r = get(f, "/api/runs?limit=1");
	has(&r, "\"matching\":3");
	assert_null(strstr(r.body, "\"run_id\":2"));
	free(r.text);
}

static void one_run_and_what_is_not_there(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/runs/1");

	assert_int_equal(r.status, 200);
	has(&r, "\"schema\":\"tracer.run.v1\"");
	has(&r, "\"command\":[\"snakemake\",\"</script><img src=x onerror=alert(1)>\"]");
	has(&r, "\"steps\":[{\"id\":\"s1\",\"name\":\"align\"");
	free(r.text);
	r = get(f, "/api/runs/1/page"); /* the HTML report's data (view/html_data.h), argv still a string */
	assert_int_equal(r.status, 200);
	has(&r, "{\"schema\":\"tracer.page.v1\"");
	has(&r, "\"</script><img src=x onerror=alert(1)>\"");
	free(r.text);
	static const char *const missing[] = { "/api/runs/4", "/api/runs/99999999999999999999", "/api/runs/x",
					       "/api/runs/1/nothing", "/api/pipeline?name=none", "/api/pipeline",
					       "/api/nothing", "/static/runs.html", "/static/../web/main.c" };
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		r = get(f, missing[i]);
		if (r.status != 404)
			fail_msg("%s: %d, not 404", missing[i], r.status);
		has_secure_headers(&r);
		free(r.text);
	}
}

/*
 * Issue 25: a run of a 2-CPU host whose processes' CPU times sum to 3.2 cores over their second, and whose
 * step says a peak of 3 GB on a host of 2 GB. The rebuilt report names the host (from the run's row, its
 * text escaped); the page data clamps the chart's slices to it and counts them, and the step's peak.
 */
static void a_runs_page_stays_within_its_host(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/runs/1/page");

	assert_int_equal(r.status, 200);
	/* 200 slices of 50 ms: the first second's 20 at 2 cores (1e8 ns of CPU each), not 3.2 */
	has(&r, "\"resources\":{\"bins\":200,\"bin_ns\":50000000.000,\"cpu_ns\":[100000000,100000000,");
	has(&r, ",100000000,0,0,");
	assert_null(strstr(r.body, "160000000"));
	has(&r, "\"host_cpus\":2,\"host_memory_bytes\":2000000000,\"cpu_clamped\":20,\"rss_clamped\":0}");
	has(&r, "\"peak_rss_bytes\":2000000000,\"peak_rss_clamped\":true}");
	free(r.text);
	r = get(f, "/api/runs/1");
	assert_int_equal(r.status, 200);
	has(&r, "\"host\":{\"name\":null,\"cloud\":null,\"instance_type\":\"m<\\\"x\\\">\",\"instance_id\":null,"
		"\"region\":null,"
		"\"cpus\":2,\"memory_bytes\":2000000000}");
	free(r.text);
	/* run 3's row names no host (as a lake before the host columns): no host, nothing clamped */
	r = get(f, "/api/runs/3");
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, "\"host\":{"));
	free(r.text);
	r = get(f, "/api/runs/3/page");
	has(&r, "\"host_cpus\":null,\"host_memory_bytes\":null,\"cpu_clamped\":0,\"rss_clamped\":0}");
	free(r.text);
}

static void pipeline_history_and_hosts(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/pipeline?name=p%3C%22x%22%3E%0A");
	const char *a, *b;

	assert_int_equal(r.status, 200);
	has(&r, "\"schema\":\"tracer.web.pipeline.v1\"");
	a = strstr(r.body, "\"run_id\":1");
	b = strstr(r.body, "\"run_id\":3");
	assert_true(a && b && a < b); /* oldest first */
	has(&r, "\"duration_s\":10,");
	has(&r, "\"recommendations\":[");
	free(r.text);
	r = get(f, "/api/pipelines");
	has(&r, "{\"pipeline\":\"p<\\\"x\\\">\\u000a\",\"runs\":2,\"last_run_id\":3");
	free(r.text);
	r = get(f, "/api/hosts");
	assert_int_equal(r.status, 200);
	has(&r, "\"host\":\"" H1 "\"");
	has(&r, "\"lag_s\":0.25,");
	has(&r, "\"gaps\":1,\"missing_records\":6,");
	has(&r, "\"losses\":{\"evicted\":3,\"quarantined\":0,\"corrupt\":0,\"ring\":12}");
	has(&r, "\"runs\":2,\"running_runs\":1");
	free(r.text);
}

static size_t count_of(const char *s, const char *what);

static void metrics(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/metrics");
	char info[512];

	assert_int_equal(r.status, 200);
	has(&r, "Content-Type: text/plain; version=0.0.4");
	has(&r, "# TYPE tracer_host_batches_total counter\n");
	has(&r, "tracer_host_batches_total{host=\"" H1 "\"} 7\n");
	has(&r, "tracer_host_lost_records_total{host=\"" H1 "\"} 15\n");
	has(&r, "tracer_host_missing_records{host=\"" H1 "\"} 6\n");
	has(&r, "tracer_lake_runs{state=\"running\"} 1\n");
	has(&r, "tracer_lake_runs{state=\"failed\"} 1\n");
	/* the conventions: a build info; drops since a collector started are counters (they reset with it) */
	/* ... naming this build: common/version.o's strings, which every binary's --version prints */
	snprintf(info, sizeof(info), "# TYPE tracer_build_info gauge\ntracer_build_info{version=\"%s\",commit=\"%s\"} 1\n",
		 tracer_version, tracer_commit);
	has(&r, info);
	has(&r, "# TYPE tracer_host_kernel_drops_total counter\n");
	has(&r, "# TYPE tracer_host_ring_drops_total counter\n");
	assert_null(strstr(r.body, "tracer_host_kernel_drops "));
	assert_null(strstr(r.body, "# TYPE tracer_host_ring_drops gauge"));
	/* per pipeline: the hostile name escaped; a pipeline really named "other" is not the folded series */
	has(&r, "# TYPE tracer_pipeline_runs gauge\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"p<\\\"x\\\">\\n\",state=\"succeeded\"} 1\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"p<\\\"x\\\">\\n\",state=\"running\"} 1\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"other~");
	assert_null(strstr(r.body, "pipeline=\"other\""));
	has(&r, "tracer_pipeline_steps{pipeline=\"p<\\\"x\\\">\\n\",state=\"running\"} 1\n");
	has(&r, "tracer_pipeline_steps{pipeline=\"p<\\\"x\\\">\\n\",state=\"succeeded\"} 1\n");
	/* the ended step (5 s) only: the running one is in no bucket */
	has(&r, "# TYPE tracer_step_duration_seconds histogram\n");
	has(&r, "tracer_step_duration_seconds_bucket{pipeline=\"p<\\\"x\\\">\\n\",step=\"align\",le=\"1\"} 0\n");
	has(&r, "tracer_step_duration_seconds_bucket{pipeline=\"p<\\\"x\\\">\\n\",step=\"align\",le=\"5\"} 1\n");
	has(&r, "tracer_step_duration_seconds_bucket{pipeline=\"p<\\\"x\\\">\\n\",step=\"align\",le=\"+Inf\"} 1\n");
	has(&r, "tracer_step_duration_seconds_sum{pipeline=\"p<\\\"x\\\">\\n\",step=\"align\"} 5\n");
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"p<\\\"x\\\">\\n\",step=\"align\"} 1\n");
	/* steps by class: align's is tracer tune's, as the pipeline page has it (its 3 GB peak on 2 GB: memory) */
	has(&r, "# TYPE tracer_pipeline_class_steps gauge\n");
	has(&r, "tracer_pipeline_class_steps{pipeline=\"p<\\\"x\\\">\\n\",class=\"memory\"} 1\n");
	has(&r, "tracer_pipeline_class_steps{pipeline=\"p<\\\"x\\\">\\n\",class=\"compute\"} 0\n");
	assert_int_equal(count_of(r.body, "tracer_pipeline_class_steps{"), 2 * 6);
	free(r.text);
	r = get(f, "/api/pipeline?name=p%3C%22x%22%3E%0A");
	assert_int_equal(r.status, 200);
	has(&r, "{\"step\":\"align\",\"runs\":1,\"class\":\"memory\",");
	free(r.text);
}

/* Every line of an exposition a comment or a sample of ours: a raw newline in a label would start another. */
static void lines_are_samples(const char *body)
{
	for (const char *l = body; *l; l = strchr(l, '\n') + 1) {
		if (strncmp(l, "# ", 2) && strncmp(l, "tracer_", 7))
			fail_msg("a line that is no sample: %.80s", l);
		if (!strchr(l, '\n'))
			fail_msg("an unterminated line: %.80s", l);
	}
}

static void append(char *buf, size_t cap, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *at, cap - *at, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap - *at);
	*at += (size_t)n;
}

#define HOSTILE_E 200 /* the hostile pipeline's "é"s after its 7 bytes: 407 bytes, cut at 120 */

/*
 * 22 new pipelines q00 .. q21 (newest last) and the fixture's two: the 20 newest by name, q00, q01 and the
 * fixture's folded into "other". q21 has 52 step names ending one after the other: the 50 newest by name,
 * s00 and s01 as "other". q20 is Nextflow's: two tasks of ALIGN (3 s and 100 s, their hashes and tags taken
 * off) are one series, their buckets cumulative; its step named with a quote, backslash and newline is
 * escaped. q18's name is hostile: escaped, its byte that is not UTF-8 replaced, cut with a hash added.
 */
static void metrics_pipelines_capped_and_escaped(void **state)
{
	struct fixture *f = *state;
	size_t cap = 1 << 16, at = 0;
	char *sql = malloc(cap), line[1024];
	struct reply r;

	assert_non_null(sql);
	append(sql, cap, &at, "BEGIN;");
	for (int i = 0; i < 22; i++) {
		char name[128];

		if (i == 18)
			snprintf(name, sizeof(name), "'h\\b\"c' || char(10) || CAST(X'FF' AS TEXT) || replace(printf("
				 "'%%.%dc', 'x'), 'x', 'é')", HOSTILE_E);
		else
			snprintf(name, sizeof(name), "'q%02d'", i);
		append(sql, cap, &at, "INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, "
		       "engine, state, start_ns) VALUES (%d, '" H1 "', 'b', %d, 'x', 'B-%d-1', %s, '%s', 'succeeded', "
		       T0 "+%d000000000);", 10 + i, 100 + i, 10 + i, name, i == 20 ? "nextflow" : "snakemake", 100 + i);
	}
	for (int k = 0; k < 52; k++) /* q21: s00 ended first */
		append(sql, cap, &at, "INSERT INTO steps (run_id, idx, step_id, name, state, start_ns, end_ns) VALUES "
		       "(31, %d, 'k%d', 's%02d', 'succeeded', " T0 ", " T0 "+%d000000000);", k, k, k, 10 + k);
	append(sql, cap, &at, "INSERT INTO steps (run_id, idx, step_id, name, state, start_ns, end_ns) VALUES "
	       "(30, 0, 'n0', '[ab/cdef01] ALIGN (1)', 'succeeded', " T0 ", " T0 "+3000000000),"
	       "(30, 1, 'n1', '[12/345678] ALIGN (sample 2)', 'failed', " T0 ", " T0 "+100000000000),"
	       "(30, 2, 'n2', 'st\"ep\\' || char(10), 'succeeded', " T0 ", " T0 "+1000000000),"
	       "(30, 3, 'n3', 'ALIGN (3)', 'running', " T0 ", NULL);COMMIT;");
	assert_true(at < cap);
	exec_sql(f->lake, sql);
	free(sql);
	r = get(f, "/metrics");
	assert_int_equal(r.status, 200);
	lines_are_samples(r.body);
	/* 20 pipelines by name and "other": five step states each */
	assert_int_equal(count_of(r.body, "tracer_pipeline_steps{"), 21 * 5);
	/* classes for the 20 by name only */
	assert_int_equal(count_of(r.body, "tracer_pipeline_class_steps{"), 20 * 6);
	assert_null(strstr(r.body, "tracer_pipeline_class_steps{pipeline=\"other\""));
	has(&r, "tracer_pipeline_runs{pipeline=\"q21\",state=\"succeeded\"} 1\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"q02\",state=\"succeeded\"} 1\n");
	assert_null(strstr(r.body, "pipeline=\"q01\""));
	assert_null(strstr(r.body, "pipeline=\"q00\""));
	assert_null(strstr(r.body, "pipeline=\"p<"));
	has(&r, "tracer_pipeline_runs{pipeline=\"other\",state=\"running\"} 1\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"other\",state=\"succeeded\"} 3\n");
	has(&r, "tracer_pipeline_runs{pipeline=\"other\",state=\"failed\"} 1\n");
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"other\",step=\"other\"} 1\n"); /* the fixture's align */
	/* q21's step names: 50, then the rest as one */
	assert_int_equal(count_of(r.body, "tracer_step_duration_seconds_count{pipeline=\"q21\","), 51);
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"q21\",step=\"s51\"} 1\n");
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"q21\",step=\"s02\"} 1\n");
	assert_null(strstr(r.body, "step=\"s01\""));
	assert_null(strstr(r.body, "step=\"s00\""));
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"q21\",step=\"other\"} 2\n");
	has(&r, "tracer_step_duration_seconds_sum{pipeline=\"q21\",step=\"other\"} 21\n"); /* 10 s + 11 s */
	has(&r, "tracer_pipeline_steps{pipeline=\"q21\",state=\"succeeded\"} 52\n");
	/* Nextflow's ALIGN: 3 s and 100 s, cumulative; the running task in no bucket but in the states */
	static const char *const le[][2] = { { "1", "0" }, { "5", "1" }, { "15", "1" }, { "60", "1" }, { "300", "2" },
					      { "900", "2" }, { "3600", "2" }, { "14400", "2" }, { "86400", "2" },
					      { "+Inf", "2" } };
	for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++) {
		snprintf(line, sizeof(line),
			 "tracer_step_duration_seconds_bucket{pipeline=\"q20\",step=\"ALIGN\",le=\"%s\"} %s\n",
			 le[i][0], le[i][1]);
		has(&r, line);
	}
	has(&r, "tracer_step_duration_seconds_sum{pipeline=\"q20\",step=\"ALIGN\"} 103\n");
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"q20\",step=\"ALIGN\"} 2\n");
	has(&r, "tracer_pipeline_steps{pipeline=\"q20\",state=\"running\"} 1\n");
	has(&r, "tracer_pipeline_steps{pipeline=\"q20\",state=\"failed\"} 1\n");
	has(&r, "tracer_step_duration_seconds_count{pipeline=\"q20\",step=\"st\\\"ep\\\\\\n\"} 1\n");
	/* q18: escaped, U+FFFD for the byte 0xff, 56 whole "é" (7 + 112 bytes <= 120), a hash of the whole */
	at = (size_t)snprintf(line, sizeof(line), "tracer_pipeline_runs{pipeline=\"h\\\\b\\\"c\\n\xef\xbf\xbd");
	for (int i = 0; i < 56; i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, "é");
	snprintf(line + at, sizeof(line) - at, "~");
	has(&r, line);
	{
		const char *h = strstr(r.body, line) + strlen(line);

		for (int i = 0; i < 8; i++)
			assert_non_null(strchr("0123456789abcdef", h[i]));
		assert_int_equal(strncmp(h + 8, "\",state=\"succeeded\"} 1\n", 23), 0);
	}
	free(r.text);
}

/* ---- a host's activity ---------------------------------------------------------- */

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void activity_oldest_first_with_nulls(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/hosts/activity?host=" H1);
	const char *b11, *b12, *b13;

	assert_int_equal(r.status, 200);
	has(&r, "Content-Type: application/json");
	/* the default window: the day before the lake's newest word (H2's last beat's end, T0+30 s) */
	has(&r, "{\"schema\":\"tracer.web.activity.v1\",\"host\":\"" H1 "\",\"since_ns\":1699913630000000000,"
		"\"now_ns\":1700000030000000000,\"bucketed\":false,\"cpu_clamped\":0,\"mem_clamped\":0,\"beats\":[");
	b11 = strstr(r.body, "{\"start_ns\":1699999970000000000,\"end_ns\":1699999980000000000,\"cpu_cores\":2,"
			     "\"cpus\":4,\"mem_used_bytes\":1000000000,\"mem_total_bytes\":8000000000,"
			     "\"net_rx_bytes_per_s\":1000,\"net_tx_bytes_per_s\":500,\"runs\":1,\"steps\":2,"
			     "\"processes\":3}");
	b12 = strstr(r.body, "{\"start_ns\":1699999980000000000,\"end_ns\":1699999990000000000,\"cpu_cores\":null,"
			     "\"cpus\":null,\"mem_used_bytes\":null,\"mem_total_bytes\":null,"
			     "\"net_rx_bytes_per_s\":null,\"net_tx_bytes_per_s\":null,\"runs\":null,\"steps\":null,"
			     "\"processes\":null}");
	b13 = strstr(r.body, "{\"start_ns\":1700000000000000000,\"end_ns\":1700000010000000000,\"cpu_cores\":0.5,");
	if (!b11 || !b12 || !b13 || !(b11 < b12 && b12 < b13))
		fail_msg("beats not as inserted, oldest first:\n%s", r.body);
	assert_int_equal(count_of(r.body, "\"start_ns\""), 3);
	free(r.text);
	/* H1's beats all end before the last 15 s: none in the window, but the host is known */
	r = get(f, "/api/hosts/activity?host=" H1 "&since=15s");
	assert_int_equal(r.status, 200);
	has(&r, "\"since_ns\":1700000015000000000,");
	has(&r, "\"cpu_clamped\":0,\"mem_clamped\":0,\"beats\":[]}");
	free(r.text);
	static const char *const windows[] = { "36h", "90m", "14d", "1.5d" };
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		char path[160];

		snprintf(path, sizeof(path), "/api/hosts/activity?host=" H2 "&since=%s", windows[i]);
		r = get(f, path);
		if (r.status != 200 || !strstr(r.body, "\"cpu_cores\":0,"))
			fail_msg("%s: %d\n%s", path, r.status, r.body);
		free(r.text);
	}
	r = get(f, "/api/hosts/activity?host=" H2 "&since=90m");
	has(&r, "\"since_ns\":1699994630000000000,");
	free(r.text);
}

static void activity_refusals(void **state)
{
	static const char *const bad[] = { "/api/hosts/activity", "/api/hosts/activity?host=",
					   "/api/hosts/activity?host=" H1 "&since=x", "/api/hosts/activity?host=" H1 "&since=0",
					   "/api/hosts/activity?host=" H1 "&since=-1h", "/api/hosts/activity?host=" H1 "&since=2w",
					   "/api/hosts/activity?host=" H1 "&since=999999999d", "/api/sweep?since=" };
	struct fixture *f = *state;
	struct reply r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = get(f, bad[i]);
		if (r.status != 400)
			fail_msg("%s: %d, not 400", bad[i], r.status);
		has_secure_headers(&r);
		free(r.text);
	}
	/* a host the lake has batches from but no beat of, and one it never heard of */
	exec_sql(f->lake, "INSERT INTO hosts (host_id, first_seen_ns, last_seen_ns, batches, records) "
			  "VALUES ('" H3 "', " T0 ", " T0 ", 1, 1)");
	static const char *const missing[] = { "/api/hosts/activity?host=" H3,
					       "/api/hosts/activity?host=dddddddddddddddddddddddddddddddd",
					       "/api/hosts/activity?host=%3Cx%3E" };
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		r = get(f, missing[i]);
		if (r.status != 404)
			fail_msg("%s: %d, not 404", missing[i], r.status);
		free(r.text);
	}
}

/*
 * A beat whose busy time says more cores than the host had online (its interval measured apart from its
 * readings) and one whose memory used says more than its total: each the host's, counted; a beat that does
 * not say its CPUs is not clamped (to what?), one exactly at them not counted.
 */
static void activity_clamped_to_the_hosts_cpus_and_memory(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	exec_sql(f->lake, "INSERT INTO heartbeats (host_id, seq, start_ns, end_ns, cpus, cpu_busy_ns, "
			  "mem_total_bytes, mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes) VALUES "
			  "('" H3 "', 1, " T0 ", " T0 "+10000000000, 2, 25000000000, 4000000000, 5000000000, 0, 0, 0, 0, 0),"
			  "('" H3 "', 2, " T0 "+10000000000, " T0 "+20000000000, NULL, 30000000000, NULL, 5000000000, 0, 0, "
			  "0, 0, 0),"
			  "('" H3 "', 3, " T0 "+20000000000, " T0 "+30000000000, 2, 20000000000, 4000000000, 4000000000, 0, "
			  "0, 0, 0, 0)");
	r = get(f, "/api/hosts/activity?host=" H3);
	assert_int_equal(r.status, 200);
	has(&r, "\"bucketed\":false,\"cpu_clamped\":1,\"mem_clamped\":1,\"beats\":[");
	has(&r, "{\"start_ns\":1700000000000000000,\"end_ns\":1700000010000000000,\"cpu_cores\":2,\"cpus\":2,"
		"\"mem_used_bytes\":4000000000,\"mem_total_bytes\":4000000000,");
	has(&r, "{\"start_ns\":1700000010000000000,\"end_ns\":1700000020000000000,\"cpu_cores\":3,\"cpus\":null,"
		"\"mem_used_bytes\":5000000000,\"mem_total_bytes\":null,");
	has(&r, "{\"start_ns\":1700000020000000000,\"end_ns\":1700000030000000000,\"cpu_cores\":2,\"cpus\":2,");
	free(r.text);
}

/* 12,001 one-second beats: 5,000 at most come back, as buckets of 4 beats (the last of 1). */
static void activity_bucketed(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	const char *last;

	exec_sql(f->lake, "BEGIN; INSERT INTO heartbeats (host_id, seq, start_ns, end_ns, cpus, cpu_busy_ns, "
			  "mem_total_bytes, mem_used_bytes, net_rx_bytes, net_tx_bytes, runs, steps, processes) "
			  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) "
			  "SELECT '" H3 "', i, " T0 " + i * 1000000000, " T0 " + (i + 1) * 1000000000, 2, 500000000, "
			  "4000000000, 1000 + i, 4 * i, 0, 0, 0, i % 3 FROM n; COMMIT;");
	r = get(f, "/api/hosts/activity?host=" H3);
	assert_int_equal(r.status, 200);
	has(&r, "\"now_ns\":1700012001000000000,\"bucketed\":true,\"cpu_clamped\":0,\"mem_clamped\":0,\"beats\":[");
	assert_int_equal(count_of(r.body, "\"start_ns\""), 3001);
	/* the first bucket: beats 0-3; CPU and network averaged over them, memory and counts their largest */
	has(&r, "\"beats\":[{\"start_ns\":1700000000000000000,\"end_ns\":1700000004000000000,\"cpu_cores\":0.5,"
		"\"cpus\":2,\"mem_used_bytes\":1003,\"mem_total_bytes\":4000000000,\"net_rx_bytes_per_s\":6,"
		"\"net_tx_bytes_per_s\":0,\"runs\":0,\"steps\":0,\"processes\":2},"
		"{\"start_ns\":1700000004000000000,\"end_ns\":1700000008000000000,");
	last = strstr(r.body, "{\"start_ns\":1700012000000000000,\"end_ns\":1700012001000000000,\"cpu_cores\":0.5,");
	assert_non_null(last);
	assert_null(strstr(last + 1, "{\"start_ns\""));
	free(r.text);
	/* within 5,000 beats of the window: each as it is */
	r = get(f, "/api/hosts/activity?host=" H3 "&since=5000s");
	has(&r, "\"bucketed\":false,");
	assert_int_equal(count_of(r.body, "\"start_ns\""), 5000);
	free(r.text);
	r = get(f, "/api/hosts/activity?host=" H3 "&since=5001s");
	has(&r, "\"bucketed\":true,");
	assert_int_equal(count_of(r.body, "\"start_ns\""), 2501);
	free(r.text);
}

/* ---- the sweep -------------------------------------------------------------------- */

/* What tracer sweep --json writes for the fixture's lake and thresholds, no price table, over window_ns. */
static char *sweep_document(struct fixture *f, int64_t window_ns, size_t *len)
{
	struct store *st = NULL;
	struct sweep_input si;
	struct sw_finding *fs = NULL;
	struct sw_config c;
	struct obuf o;
	struct json j;
	char err[512];
	int64_t now_ns;
	size_t n = 0;

	sw_config_default(&c);
	c.gcp_min_observed_ns = SWEEP_MIN_OBSERVED_NS;
	assert_int_equal(store_open(&st, f->lake, true, err, sizeof(err)), 0);
	assert_int_equal(store_sweep_newest(st, &now_ns), 0);
	assert_int_equal(sweep_input_load(st, now_ns - window_ns, now_ns, &si, err, sizeof(err)), 0);
	store_close(st);
	assert_int_equal(sw_sweep(&si.in, &c, NULL, &fs, &n), 0);
	obuf_init_mem(&o, 1 << 20);
	json_init(&j, &o);
	sweep_json_write(&j, &si, &c, NULL, fs, n);
	assert_int_equal(o.err, 0);
	free(fs);
	sweep_input_free(&si);
	*len = o.len;
	return o.buf;
}

static void sweep_is_tracer_sweeps_document(void **state)
{
	struct fixture *f = *state;
	struct reply r = get(f, "/api/sweep");
	size_t len;
	char *want = sweep_document(f, 336 * 3600 * 1000000000LL, &len); /* sweep_window's default: 14 days */

	assert_int_equal(r.status, 200);
	has(&r, "Content-Type: application/json");
	has(&r, "{\"schema\":\"tracer.sweep.v1\",\"since_ns\":1698790430000000000,\"now_ns\":1700000030000000000,"
		"\"prices_file\":null,\"thresholds\":{\"gcp_cpu_cores\":0.03,");
	has(&r, "\"gcp_min_observed_s\":20,");
	/* H2: idle all its 30 s, by Google's rule with the server's 20 s minimum; unpriced */
	has(&r, "\"findings\":[{\"kind\":\"idle_host_gcp\",\"host\":\"" H2 "\",\"start_ns\":1700000000000000000,"
		"\"end_ns\":1700000030000000000,\"duration_s\":30,\"run_id\":null,");
	has(&r, "\"cost\":{\"usd\":null,\"price_per_hour\":null,\"price_source\":");
	assert_int_equal(count_of(r.body, "\"kind\":"), 1);
	if (strlen(r.body) != len || memcmp(r.body, want, len))
		fail_msg("/api/sweep:\n%s\ntracer sweep --json:\n%.*s", r.body, (int)len, want);
	free(want);
	free(r.text);
	/* ?since=: the window; the 20 s before now hold too little of H2 for the rule */
	r = get(f, "/api/sweep?since=20s");
	want = sweep_document(f, 20000000000LL, &len);
	assert_int_equal(r.status, 200);
	has(&r, "\"since_ns\":1700000010000000000,");
	if (strlen(r.body) != len || memcmp(r.body, want, len))
		fail_msg("/api/sweep?since=20s:\n%s\ntracer sweep --json:\n%.*s", r.body, (int)len, want);
	free(want);
	free(r.text);
}

static void sweep_of_an_empty_lake(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	exec_sql(f->lake, "BEGIN; DELETE FROM heartbeats; DELETE FROM hosts; COMMIT;");
	r = get(f, "/api/sweep");
	assert_int_equal(r.status, 404);
	free(r.text);
	r = get(f, "/api/hosts/activity?host=" H1);
	assert_int_equal(r.status, 404);
	free(r.text);
}

/* ---- the event stream --------------------------------------------------------- */

/* Read from a stream until text appears (or 10 s pass); the bytes so far, appended to acc. */
static bool stream_until(int fd, char *acc, size_t cap, const char *text)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!strstr(acc, text)) {
		struct pollfd p = { fd, POLLIN, 0 };
		size_t n = strlen(acc);
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10 || n + 1 >= cap)
			return false;
		if (poll(&p, 1, 500) <= 0)
			continue;
		r = read(fd, acc + n, cap - n - 1);
		if (r <= 0)
			return strstr(acc, text) != NULL;
		acc[n + (size_t)r] = 0;
	}
	return true;
}

/* Whether the server closes fd (read gives 0) within ms; what it sends meanwhile is added to acc. */
static bool closed_within(int fd, char *acc, size_t cap, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		size_t n = strlen(acc);
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms || n + 1 >= cap)
			return false;
		if (poll(&p, 1, 100) <= 0)
			continue;
		r = read(fd, acc + n, cap - n - 1);
		if (r == 0)
			return true;
		if (r < 0)
			return false;
		acc[n + (size_t)r] = 0;
	}
}

static void stream_follows_the_run(void **state)
{
	struct fixture *f = *state;
	static char acc[1 << 16];
	int fd = connect_to(f->port);

	acc[0] = 0;
	send_request(fd, "GET", "/api/runs/3/events", "Authorization: Bearer " TOKEN "\r\n");
	assert_true(stream_until(fd, acc, sizeof(acc), "\"update_seq\":1,"));
	assert_non_null(strstr(acc, "Content-Type: text/event-stream"));
	assert_non_null(strstr(acc, "event: update\ndata: {\"run_id\":3,\"state\":\"running\""));
	/* The ingest stores the run's next live record: another update. */
	exec_sql(f->lake, "UPDATE runs SET update_seq = 2, processes = 5 WHERE run_id = 3");
	assert_true(stream_until(fd, acc, sizeof(acc), "\"update_seq\":2,\"last_update_ns\":1700000021000000000,"
						       "\"processes\":5"));
	assert_null(strstr(acc, "event: end"));
	exec_sql(f->lake, "UPDATE runs SET update_seq = 3, state = 'succeeded', end_ns = " T0 "+30000000000 "
			  "WHERE run_id = 3");
	assert_true(stream_until(fd, acc, sizeof(acc), "event: end\n"));
	assert_non_null(strstr(acc, "\"state\":\"succeeded\""));
	/* and the server ends it (the last chunk) and closes it (Connection: close), at once */
	assert_true(closed_within(fd, acc, sizeof(acc), 2000));
	assert_non_null(strstr(acc, "\r\n0\r\n\r\n"));
	close(fd);
	/* a finished run's stream: one update, then the end at once, closed */
	fd = connect_to(f->port);
	acc[0] = 0;
	send_request(fd, "GET", "/api/runs/1/events", "Authorization: Bearer " TOKEN "\r\n");
	assert_true(stream_until(fd, acc, sizeof(acc), "event: end\n"));
	assert_true(closed_within(fd, acc, sizeof(acc), 2000));
	close(fd);
	/* no such run: 404, not a stream */
	struct reply r = get(f, "/api/runs/77/events");
	assert_int_equal(r.status, 404);
	free(r.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(refused_without_the_token, setup, teardown),
		cmocka_unit_test_setup_teardown(token_in_the_address_sets_a_cookie, setup, teardown),
		cmocka_unit_test_setup_teardown(read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_newest_first_and_filtered, setup, teardown),
		cmocka_unit_test_setup_teardown(one_run_and_what_is_not_there, setup, teardown),
		cmocka_unit_test_setup_teardown(a_runs_page_stays_within_its_host, setup, teardown),
		cmocka_unit_test_setup_teardown(pipeline_history_and_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(metrics_pipelines_capped_and_escaped, setup, teardown),
		cmocka_unit_test_setup_teardown(stream_follows_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(activity_oldest_first_with_nulls, setup, teardown),
		cmocka_unit_test_setup_teardown(activity_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(activity_bucketed, setup, teardown),
		cmocka_unit_test_setup_teardown(activity_clamped_to_the_hosts_cpus_and_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(sweep_is_tracer_sweeps_document, setup, teardown),
		cmocka_unit_test_setup_teardown(sweep_of_an_empty_lake, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
