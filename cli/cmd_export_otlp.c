/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer export otlp: the lake's runs as OpenTelemetry traces, POSTed in
 * the OTLP/HTTP JSON encoding to ENDPOINT/v1/traces (docs/export.md,
 * "OpenTelemetry traces"). A run is sent once it has ended; with --state
 * FILE, each run sent is written down there (fsync'd) once the endpoint
 * has taken all of it, so that the next invocation, or --follow after a
 * restart, neither skips nor repeats one. Retried: 429, 502, 503 and 504
 * (after Retry-After when the answer has one, else an exponential backoff
 * with jitter) and a failed connection; any other answer is reported with
 * its text, and the run is not retried.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "cmd_export_otlp.h"
#include "json_parse.h"
#include "notify.h"
#include "otlp.h"
#include "readfile.h"
#include "store.h"
#include "sweep_input.h"
#include "version.h"


#define HEADERS_MAX 32
#define BODY_SHOWN 512                 /* bytes of an answer's body kept to show */
#define BACKOFF_FIRST_NS (1 * PARSE_NS_PER_S)
#define BACKOFF_MAX_NS (60 * PARSE_NS_PER_S)
#define RETRY_AFTER_MAX_S 3600         /* a longer Retry-After is taken as this */

struct options {
	const char *db, *endpoint, *state, *ca_file, *run;
	const char *headers[HEADERS_MAX];
	unsigned nheaders;
	int64_t since_ns;                  /* 0: every run */
	uint64_t interval_ns, timeout_ns;
	unsigned retries;                  /* without --follow: retries of a request before giving up */
	bool follow, with_argv;
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracer export otlp --db LAKE --endpoint URL [--since DURATION] [--follow --state FILE]\n"
		   "                          [--header K=V]... [--with-argv] [--run RUN] [--state FILE]\n"
		   "                          [--interval DURATION] [--timeout DURATION] [--retries N] [--ca-file F]\n"
		   "  Each ended run of the lake as an OpenTelemetry trace, POSTed as OTLP/HTTP JSON to URL/v1/traces\n"
		   "  (URL as in OTEL_EXPORTER_OTLP_ENDPOINT). --since 14d: runs started in the last 14 days.\n"
		   "  --state FILE: the runs sent, kept so that the next export or a restart repeats none.\n"
		   "  --follow: keep going, sending each run when it ends (--interval, default 5s, between looks).\n"
		   "  --with-argv: send command lines (redacted, as the lake holds them). --run RUN: that run only.\n");
}

/* ---- the state file: the trace ids of the runs sent ------------------------------------------------ */

struct sent {
	char (*ids)[2 * OTLP_TRACE_ID_LEN + 1];
	size_t n, cap;
	int fd;                            /* appended to; -1 without --state */
	const char *path;
};

static int id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool sent_has(const struct sent *s, const char *hex)
{
	return s->n && bsearch(hex, s->ids, s->n, sizeof(*s->ids), id_cmp);
}

static int sent_add(struct sent *s, const char *hex)
{
	size_t i = 0;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		void *v = realloc(s->ids, cap * sizeof(*s->ids));

		if (!v)
			return -ENOMEM;
		s->ids = v;
		s->cap = cap;
	}
	while (i < s->n && strcmp(s->ids[i], hex) < 0)
		i++;
	memmove(&s->ids[i + 1], &s->ids[i], (s->n - i) * sizeof(*s->ids));
	memcpy(s->ids[i], hex, sizeof(*s->ids));
	s->n++;
	return 0;
}

static bool hex_id(const char *s, size_t n)
{
	if (n != 2 * OTLP_TRACE_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * Open (create) the state file and read the ids in it: a line per run, its trace id in hex, then a blank and
 * "sent" or "refused". A last line without its newline (a write cut short) is cut off: that run was not
 * written down, so it is sent again. Any other line that is not of that form is an error: not our file.
 */
static int sent_open(struct sent *s, const char *path)
{
	struct stat sb;
	char *text = NULL;
	size_t len, kept;
	ssize_t n;
	int rc = 0;

	s->path = path;
	s->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (s->fd < 0 || fstat(s->fd, &sb)) {
		fprintf(stderr, "tracer export otlp: --state %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || (unsigned long long)sb.st_size > READ_MAX_EXPORT_STATE) {
		fprintf(stderr, "tracer export otlp: --state %s: not a regular file of at most %u bytes\n", path,
			READ_MAX_EXPORT_STATE);
		return -1;
	}
	text = malloc((size_t)sb.st_size + 1);
	n = text ? read_fd_bounded(s->fd, text, (size_t)sb.st_size) : -ENOMEM; /* at offset 0: just opened */
	if (n < 0) {
		fprintf(stderr, "tracer export otlp: --state %s: %s\n", path,
			n == -EFBIG ? "it grew while read (another exporter on it?)" : strerror((int)-n));
		free(text);
		return -1;
	}
	len = (size_t)n;
	for (kept = len; kept && text[kept - 1] != '\n'; kept--)
		;
	for (size_t at = 0, line = 1; !rc && at < kept; line++) {
		char *nl = memchr(text + at, '\n', kept - at), *sp = memchr(text + at, ' ', (size_t)(nl - (text + at)));
		char hex[2 * OTLP_TRACE_ID_LEN + 1];

		if (!sp || !hex_id(text + at, (size_t)(sp - (text + at))) ||
		    !((nl - sp == 5 && !memcmp(sp, " sent", 5)) || (nl - sp == 8 && !memcmp(sp, " refused", 8)))) {
			fprintf(stderr, "tracer export otlp: --state %s: line %zu is not \"TRACEID sent|refused\"\n", path,
				line);
			rc = -1;
			break;
		}
		memcpy(hex, text + at, sizeof(hex) - 1);
		hex[sizeof(hex) - 1] = 0;
		if (!sent_has(s, hex) && sent_add(s, hex))
			rc = -1;
		at = (size_t)(nl - text) + 1;
	}
	free(text);
	if (!rc && kept < len && ftruncate(s->fd, (off_t)kept)) {
		fprintf(stderr, "tracer export otlp: --state %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	if (!rc && kept < len)
		fprintf(stderr, "tracer export otlp: --state %s: a last line cut short was dropped\n", path);
	return rc;
}

/* Written down for good (fsync) before the run counts as sent. */
static int sent_record(struct sent *s, const char *hex, bool refused)
{
	char line[2 * OTLP_TRACE_ID_LEN + 16];
	int n = snprintf(line, sizeof(line), "%s %s\n", hex, refused ? "refused" : "sent");

	if (sent_add(s, hex))
		return -1;
	if (s->fd < 0)
		return 0;
	if (write(s->fd, line, (size_t)n) != n || fsync(s->fd)) {
		fprintf(stderr, "tracer export otlp: --state %s: %s\n", s->path, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/* ---- HTTP -------------------------------------------------------------------------------------------- */

struct answer {
	char body[BODY_SHOWN + 1];
	size_t len;
	long retry_after_s;               /* -1: none */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t take = size * n;

	if (take > BODY_SHOWN - a->len)
		take = BODY_SHOWN - a->len;
	memcpy(a->body + a->len, p, take);
	a->len += take;
	a->body[a->len] = 0;
	return size * n;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110, 10.2.3). */
static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n;
	char v[64];

	if (len > 12 && !strncasecmp(p, "Retry-After:", 12) && len - 12 < sizeof(v)) {
		char *end;
		long s;

		memcpy(v, p + 12, len - 12);
		v[len - 12] = 0;
		v[strcspn(v, "\r\n")] = 0;
		s = strtol(v, &end, 10);
		if (end != v && !*end && s >= 0)
			a->retry_after_s = s;
		else if (curl_getdate(v + strspn(v, " \t"), NULL) > 0)
			a->retry_after_s = (long)(curl_getdate(v + strspn(v, " \t"), NULL) - time(NULL));
		if (a->retry_after_s < 0)
			a->retry_after_s = 0;
		if (a->retry_after_s > RETRY_AFTER_MAX_S)
			a->retry_after_s = RETRY_AFTER_MAX_S;
	}
	return len;
}

/* An answer's text, fit for a terminal: printable ASCII, the rest as '?'. */
static void shown_text(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

struct sender {
	const struct options *o;
	CURL *curl;
	struct curl_slist *headers;
	char url[2048];
	uint64_t requests, retries;
	bool refused;                     /* the endpoint refused the current run for good */
};

static bool retryable(long code)
{
	return code == 429 || code == 502 || code == 503 || code == 504;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / PARSE_NS_PER_S), (long)(ns % PARSE_NS_PER_S) };

	while (!stopping && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A partial success (a 2xx that rejected spans) is said, not retried: the spec says the same request fails again. */
static void partial_success(const struct answer *a)
{
	struct json_node nodes[32];
	struct json_doc d;
	const struct json_node *ps, *rej;
	char text[BODY_SHOWN + 1];

	if (!a->len || json_parse(&d, a->body, a->len, nodes, 32) || !(ps = json_member(&d, json_root(&d),
											 "partialSuccess")))
		return;
	if ((rej = json_member(&d, ps, "rejectedSpans")) && !(rej->len == 1 && a->body[rej->start] == '0')) {
		memcpy(text, a->body, a->len + 1);
		shown_text(text);
		fprintf(stderr, "tracer export otlp: the endpoint took the request but rejected spans: %s\n", text);
	}
}

/* One request, retried as the spec says. 0: taken; 1: refused for good (or given up); -1: stopping. */
static int post(void *ctx, const char *json, size_t len, size_t spans)
{
	struct sender *s = ctx;
	uint64_t backoff = BACKOFF_FIRST_NS;

	(void)spans;
	for (unsigned attempt = 0;; attempt++) {
		struct answer a = { .retry_after_s = -1 };
		long code = 0;
		CURLcode cc;
		uint64_t wait;

		if (stopping)
			return -1;
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, json);
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, &a);
		curl_easy_setopt(s->curl, CURLOPT_HEADERDATA, &a);
		cc = curl_easy_perform(s->curl);
		s->requests++;
		if (cc == CURLE_OK)
			curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
		if (cc == CURLE_OK && code >= 200 && code < 300) {
			partial_success(&a);
			return 0;
		}
		shown_text(a.body);
		if (cc == CURLE_OK && !retryable(code)) {
			fprintf(stderr, "tracer export otlp: %s answered %ld: %s\n", s->url, code, a.body);
			s->refused = true;
			return 1;
		}
		if (!s->o->follow && attempt >= s->o->retries) {
			fprintf(stderr, "tracer export otlp: %s: giving up after %u retries: %s\n", s->url, attempt,
				cc == CURLE_OK ? a.body : curl_easy_strerror(cc));
			return 1;
		}
		/* full jitter over the backoff, unless the endpoint said how long */
		wait = a.retry_after_s >= 0 ? (uint64_t)a.retry_after_s * PARSE_NS_PER_S :
					      backoff / 2 + (uint64_t)random() % (backoff / 2 + 1);
		if (cc == CURLE_OK)
			fprintf(stderr, "tracer export otlp: %s answered %ld%s; retrying in %.1f s\n", s->url, code,
				a.retry_after_s >= 0 ? " with Retry-After" : "", (double)wait / PARSE_NS_PER_S);
		else
			fprintf(stderr, "tracer export otlp: %s: %s; retrying in %.1f s\n", s->url,
				curl_easy_strerror(cc), (double)wait / PARSE_NS_PER_S);
		s->retries++;
		pause_ns(wait);
		backoff = backoff >= BACKOFF_MAX_NS / 2 ? BACKOFF_MAX_NS : backoff * 2;
	}
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Headers from the environment, as the OpenTelemetry SDKs take them: "k1=v1,k2=v2", each value
 * percent-decoded, blanks around names and values dropped (a place for a token that the command line, which
 * any user may read in /proc, is not). A malformed list is an error, not half applied.
 */
static int env_headers(struct sender *s, const char *var)
{
	const char *v = getenv(var), *p = v;

	while (p && *p) {
		const char *end = p + strcspn(p, ","), *eq = memchr(p, '=', (size_t)(end - p));
		char line[2048];
		size_t n = 0;

		if (!eq)
			goto bad;
		const char *name_end = eq;

		while (p < eq && (*p == ' ' || *p == '\t'))
			p++;
		while (name_end > p && (name_end[-1] == ' ' || name_end[-1] == '\t'))
			name_end--;
		if ((size_t)(name_end - p) >= sizeof(line) / 2 || memchr(p, ' ', (size_t)(name_end - p)) ||
		    memchr(p, '\t', (size_t)(name_end - p)))
			goto bad;
		memcpy(line, p, (size_t)(name_end - p));
		n = (size_t)(name_end - p);
		if (!n || memchr(line, ':', n))
			goto bad;
		line[n++] = ':';
		line[n++] = ' ';
		while (eq + 1 < end && (eq[1] == ' ' || eq[1] == '\t'))
			eq++;
		for (const char *c = eq + 1; c < end; c++) {
			int hi, lo;
			char ch = *c;

			if (ch == '%') {
				if (end - c < 3 || (hi = hex_digit(c[1])) < 0 || (lo = hex_digit(c[2])) < 0)
					goto bad;
				ch = (char)(hi << 4 | lo);
				c += 2;
			}
			if (ch == '\r' || ch == '\n' || ch == 0 || n >= sizeof(line) - 1)
				goto bad;
			line[n++] = ch;
		}
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		line[n] = 0;
		if (!(s->headers = curl_slist_append(s->headers, line)))
			return -1;
		p = *end ? end + 1 : end;
	}
	return 0;
bad:
	fprintf(stderr, "tracer export otlp: %s: want name=value pairs separated by commas (values percent-encoded)\n",
		var);
	return -1;
}

static int sender_init(struct sender *s, const struct options *o)
{
	size_t n = strlen(o->endpoint);
	char agent[128];

	while (n && o->endpoint[n - 1] == '/')
		n--;
	if (strncmp(o->endpoint, "http://", 7) && strncmp(o->endpoint, "https://", 8)) {
		fprintf(stderr, "tracer export otlp: --endpoint %s: want an http:// or https:// URL\n", o->endpoint);
		return -1;
	}
	if (snprintf(s->url, sizeof(s->url), "%.*s/v1/traces", (int)n, o->endpoint) >= (int)sizeof(s->url)) {
		fprintf(stderr, "tracer export otlp: --endpoint: too long\n");
		return -1;
	}
	s->o = o;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(s->curl = curl_easy_init()))
		return -1;
	s->headers = curl_slist_append(NULL, "Content-Type: application/json");
	for (unsigned i = 0; s->headers && i < o->nheaders; i++) {
		const char *eq = strchr(o->headers[i], '=');
		char line[1024];

		if (!eq || eq == o->headers[i] || strpbrk(o->headers[i], "\r\n:") ||
		    snprintf(line, sizeof(line), "%.*s: %s", (int)(eq - o->headers[i]), o->headers[i], eq + 1) >=
			    (int)sizeof(line)) {
			fprintf(stderr, "tracer export otlp: --header %s: want NAME=VALUE (no ':' in the name, no line "
					"break, under 1 KiB)\n", o->headers[i]);
			return -1;
		}
		s->headers = curl_slist_append(s->headers, line);
	}
	if (!s->headers || env_headers(s, "OTEL_EXPORTER_OTLP_HEADERS") ||
	    env_headers(s, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"))
		return -1;
	curl_easy_setopt(s->curl, CURLOPT_URL, s->url);
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(s->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)(o->timeout_ns / 1000000));
	curl_easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->timeout_ns / 1000000));
	curl_easy_setopt(s->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	snprintf(agent, sizeof(agent), "tracer/%s", tracer_version);
	curl_easy_setopt(s->curl, CURLOPT_USERAGENT, agent); /* curl keeps a copy */
	if (o->ca_file)
		curl_easy_setopt(s->curl, CURLOPT_CAINFO, o->ca_file);
	return 0;
}

static void sender_free(struct sender *s)
{
	curl_slist_free_all(s->headers);
	if (s->curl)
		curl_easy_cleanup(s->curl);
	curl_global_cleanup();
}

/* ---- the runs -------------------------------------------------------------------------------------- */

struct pass {
	const struct options *o;
	struct store *st;
	struct sender *sender;
	struct sent *sent;
	int64_t *ids;                      /* runs to look at, by lake number */
	size_t n, cap;
	int64_t since_ns;                  /* real time; 0: any */
	unsigned exported, refused, failed;
	int err;                           /* a read or the state file failed */
};

static bool ended(const struct store_run *r)
{
	return r->state && strcmp(r->state, "running") && r->end_ns.known && r->end_ns.v > 0;
}

static int collect(void *ctx, const struct store_run *r)
{
	struct pass *p = ctx;

	if (!ended(r) || (p->since_ns && (!r->start_ns.known || r->start_ns.v < p->since_ns)))
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		int64_t *v = realloc(p->ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->ids = v;
		p->cap = cap;
	}
	p->ids[p->n++] = r->run_id;
	return 0;
}

static int export_one(void *ctx, const struct store_run *r)
{
	struct pass *p = ctx;
	struct otlp_options oo = { .with_argv = p->o->with_argv, .version = tracer_version };
	uint8_t id[OTLP_TRACE_ID_LEN];
	char hex[2 * OTLP_TRACE_ID_LEN + 1], err[512];
	int rc;

	if (!ended(r))
		return 0;
	otlp_trace_id(r, id);
	for (size_t i = 0; i < OTLP_TRACE_ID_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (sent_has(p->sent, hex))
		return 0;
	p->sender->refused = false;
	rc = otlp_run(p->st, r, &oo, post, p->sender, err, sizeof(err));
	if (rc < 0 && stopping)
		return -1;
	if (rc > 0 || rc < 0) {
		if (rc < 0)
			fprintf(stderr, "tracer export otlp: %s\n", err);
		if (p->sender->refused) { /* the same bytes would be refused again: written down, not retried */
			p->refused++;
			if (sent_record(p->sent, hex, true))
				p->err = -1;
		} else {
			p->failed++;
		}
		return p->err;
	}
	p->exported++;
	if (sent_record(p->sent, hex, false)) /* written down first: whoever reads the line can count on it */
		return p->err = -1;
	printf("run %" PRId64 " (%s): trace %s\n", r->run_id, r->pipeline ? r->pipeline : r->state, hex);
	fflush(stdout);
	return 0;
}

/* One look at the lake: every ended run not sent yet. 0, or non-zero when a read or the state file failed. */
static int export_pass(struct pass *p)
{
	char name[24];
	int rc;

	p->n = 0;
	if (p->o->since_ns) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		p->since_ns = (int64_t)now.tv_sec * PARSE_NS_PER_S + now.tv_nsec - p->o->since_ns;
	}
	rc = p->o->run ? store_run(p->st, p->o->run, collect, p) : store_runs(p->st, collect, p);
	if (rc) {
		fprintf(stderr, "tracer export otlp: reading the lake's runs failed (%d)\n", rc);
		return rc;
	}
	for (size_t i = 0; i < p->n && !stopping && !p->err; i++) {
		snprintf(name, sizeof(name), "%" PRId64, p->ids[i]);
		rc = store_run(p->st, name, export_one, p);
		if (rc && rc != STORE_E_NOT_FOUND && !stopping && !p->err) {
			fprintf(stderr, "tracer export otlp: reading run %s failed (%d)\n", name, rc);
			return rc;
		}
	}
	return p->err;
}

static int parse_duration_opt(const char *name, const char *v, uint64_t *ns)
{
	if (sweep_parse_window(v, ns) || !*ns) {
		fprintf(stderr, "tracer export otlp: %s %s: want a duration such as 14d, 36h, 90m, 5s\n", name, v);
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },       { "endpoint", required_argument, NULL, 'e' },
		{ "since", required_argument, NULL, 's' },    { "follow", no_argument, NULL, 'f' },
		{ "header", required_argument, NULL, 'H' },   { "with-argv", no_argument, NULL, 'a' },
		{ "state", required_argument, NULL, 'S' },    { "interval", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },  { "retries", required_argument, NULL, 'r' },
		{ "ca-file", required_argument, NULL, 'c' },  { "run", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	uint64_t ns;
	char *end;
	int opt;

	*o = (struct options){ .interval_ns = 5 * PARSE_NS_PER_S, .timeout_ns = 10 * PARSE_NS_PER_S, .retries = 5 };
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->db = optarg; break;
		case 'e': o->endpoint = optarg; break;
		case 'f': o->follow = true; break;
		case 'a': o->with_argv = true; break;
		case 'S': o->state = optarg; break;
		case 'c': o->ca_file = optarg; break;
		case 'R': o->run = optarg; break;
		case 'H':
			if (o->nheaders == HEADERS_MAX) {
				fprintf(stderr, "tracer export otlp: at most %d --header\n", HEADERS_MAX);
				return 2;
			}
			o->headers[o->nheaders++] = optarg;
			break;
		case 's':
			if (parse_duration_opt("--since", optarg, &ns))
				return 2;
			o->since_ns = (int64_t)ns;
			break;
		case 'i':
			if (parse_duration_opt("--interval", optarg, &o->interval_ns))
				return 2;
			break;
		case 't':
			if (parse_duration_opt("--timeout", optarg, &o->timeout_ns))
				return 2;
			break;
		case 'r':
			errno = 0;
			o->retries = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || o->retries > 100) {
				fprintf(stderr, "tracer export otlp: --retries %s: want 0..100\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (!o->endpoint)
		o->endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!o->db || !o->endpoint || optind < argc || (o->follow && !o->state)) {
		fprintf(stderr, "tracer export otlp: %s\n", !o->db ? "--db LAKE is required" :
			!o->endpoint ? "--endpoint URL (or OTEL_EXPORTER_OTLP_ENDPOINT) is required" : optind < argc ? "unexpected arguments" :
			"--follow wants --state FILE (where it keeps which runs it sent)");
		usage(stderr);
		return 2;
	}
	return 0;
}

int cmd_export_otlp(int argc, char **argv)
{
	struct options o;
	struct sender sender = { 0 };
	struct sent sent = { .fd = -1 };
	struct pass p = { .o = &o, .sender = &sender, .sent = &sent };
	struct sigaction sa = { .sa_handler = on_stop };
	struct notify nt = { .fd = -1 };
	bool ready = false;
	char err[1024];
	int rc = parse_options(argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	if ((o.state && sent_open(&sent, o.state)) || sender_init(&sender, &o)) {
		rc = 1;
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.follow && notify_open(&nt)) { /* Type=notify (systemd/tracer-export-otlp.service.in) */
		rc = 1;
		goto out;
	}
	do {
		if (!p.st && store_open(&p.st, o.db, true, err, sizeof(err))) {
			fprintf(stderr, "tracer export otlp: %s\n", err);
			p.st = NULL;
			if (!o.follow) {
				rc = 1;
				break;
			}
		} else if (export_pass(&p)) {
			if (p.err || !o.follow) { /* the state file failed: going on would repeat runs */
				rc = 1;
				break;
			}
			store_close(p.st); /* a lake that failed a read is opened afresh (a PostgreSQL restart) */
			p.st = NULL;
		}
		if (o.follow && p.st && !ready) { /* the lake opened and read once */
			notify_send(&nt, "READY=1");
			ready = true;
		}
		if (o.follow)
			pause_ns(o.interval_ns);
	} while (o.follow && !stopping);
	if (!rc && (p.failed || p.refused))
		rc = 1;
	fprintf(stderr, "tracer export otlp: %u runs sent, %u refused, %u not sent; %" PRIu64 " requests, %" PRIu64
			" retries\n", p.exported, p.refused, p.failed, sender.requests, sender.retries);
out:
	if (nt.fd >= 0)
		close(nt.fd);
	if (p.st)
		store_close(p.st);
	free(p.ids);
	free(sent.ids);
	if (sent.fd >= 0)
		close(sent.fd);
	sender_free(&sender);
	return rc;
}
