/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report's writer (view/html.c): hostile strings planted in each
 * context the page puts host text in stay text. Inside the run-data
 * script element nothing can end the element ("</script"), open a comment
 * ("<!--"), break a JavaScript line (U+2028, U+2029) or carry ill-formed
 * UTF-8; in the <title> no markup survives. The page has its
 * Content-Security-Policy first, with the sha256 of the very <style> and
 * <script> it carries, and names no URL: one file, nothing to fetch.
 *
 * The page's data (view/html_data.c), known answers: a process's columns,
 * its parent through a reused pid, the tools and steps summed, the
 * resource chart's slices, each cap and the counts that say what it left
 * out; hostile strings come back the same; a text that is not a JSON
 * object, or not valid JSON (bytes that are not UTF-8 in an argv), is
 * refused with where, and no file is made.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "html.h"
#include "html_data.h"
#include "json_parse.h"

/* What one escaping function made of s, NUL-terminated, in o. */
static void escaped(struct obuf *o, void (*put)(struct obuf *, const char *, size_t), const char *s)
{
	obuf_init_mem(o, 1 << 16);
	put(o, s, strlen(s));
	obuf_putc(o, 0);
	assert_int_equal(o->err, 0);
}

static void script_json_escapes_what_could_end_the_element_or_open_a_comment(void **state)
{
	struct obuf o;

	(void)state;
	escaped(&o, html_put_script_json, "[\"</script><img src=x onerror=alert(1)>\",\"<!--\",\"a&b\",\"</SCRIPT \"]");
	assert_string_equal(o.buf, "[\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\","
				   "\"\\u003c!--\",\"a\\u0026b\",\"\\u003c/SCRIPT \"]");
	obuf_free(&o);
}

static void script_json_escapes_line_separators_and_keeps_other_utf8(void **state)
{
	struct obuf o;

	(void)state;
	escaped(&o, html_put_script_json, "[\"a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]");
	assert_string_equal(o.buf, "[\"a\\u2028b\\u2029c\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]");
	obuf_free(&o);
}

static void script_json_replaces_ill_formed_utf8_and_escapes_controls(void **state)
{
	struct obuf o;

	(void)state;
	/* A stray continuation, a bad second byte, a truncated sequence, an overlong '/', a surrogate. */
	escaped(&o, html_put_script_json, "[\"\x80|\xc3\x28|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\x01\x7f\"]\n");
	assert_string_equal(o.buf, "[\"\\ufffd|\\ufffd(|\\ufffd\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
				   "\\u0001\\u007f\"]\n");
	obuf_free(&o);
}

static void html_text_escapes_markup_quotes_and_bad_bytes(void **state)
{
	struct obuf o;

	(void)state;
	escaped(&o, html_put_text, "</title><b>\"x\"&'y'\nz\xff\x1b");
	assert_string_equal(o.buf, "&lt;/title&gt;&lt;b&gt;&quot;x&quot;&amp;&#39;y&#39; z\xef\xbf\xbd\xef\xbf\xbd");
	obuf_free(&o);
}

/* The page of a report into memory, NUL-terminated. */
static char *page_of(const char *json, const char *title, size_t *len)
{
	struct obuf o;

	obuf_init_mem(&o, 1 << 24);
	assert_int_equal(html_write_report(&o, json, strlen(json), title), 0);
	obuf_putc(&o, 0);
	*len = o.len - 1;
	return o.buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strcasestr(p, needle)); p++)
		n++;
	return n;
}

/* The text between open (its end) and the next close, as a new string. */
static char *between(const char *page, const char *open, const char *close)
{
	const char *a = strstr(page, open), *b;

	assert_non_null(a);
	a += strlen(open);
	b = strstr(a, close);
	assert_non_null(b);
	return strndup(a, (size_t)(b - a));
}

/* "'sha256-BASE64'" of text, as a CSP source. */
static void csp_hash(const char *text, char *out, size_t outlen)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char b64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL)];

	crypto_hash_sha256(h, (const unsigned char *)text, strlen(text));
	sodium_bin2base64(b64, sizeof(b64), h, sizeof(h), sodium_base64_VARIANT_ORIGINAL);
	snprintf(out, outlen, "'sha256-%s'", b64);
}

/*
 * A report whose strings carry what could end the data element, open a comment, break a line or come from
 * bytes that were not UTF-8 (which the processor's writer has made U+FFFD): in the command, which the data
 * copies, and in a process's argv, tool and executable, which it lists.
 */
static const char hostile[] =
	"{\"schema\":\"tracer.run.v1\",\"command\":[\"</script><img src=x onerror=alert(1)>\",\"<!--<script>\","
	"\"\\\"'<b>\",\"a\\nb\",\"\xe2\x80\xa8\",\"\xef\xbf\xbd\\ufffd\"],\"start_ns\":1000,\"end_ns\":5000,"
	"\"processes\":[{\"pid\":7,\"start_ns\":1000,\"end_ns\":4000,\"exe\":\"/bin/</script>\","
	"\"argv\":[\"</script><img src=x onerror=alert(1)>\",\"<!--\",\"\xe2\x80\xa9\"],\"tool\":\"<b>cat\\\"'\","
	"\"step\":null,\"exit_code\":0,\"signal\":0}],\"steps\":[],\"signals\":[]}";

static void hostile_data_cannot_end_the_data_element(void **state)
{
	size_t len;
	char *page = page_of(hostile, "</title><script>alert(1)</script>", &len);
	char *data = between(page, "<script type=\"application/json\" id=\"run-data\">", "</script>");

	(void)state;
	/* The page's own two script elements end, nothing else; no comment opens anywhere. */
	assert_int_equal(count(page, "</script"), 2);
	assert_int_equal(count(page, "<script"), 2);
	assert_int_equal(count(page, "<!--"), 0);
	assert_int_equal(count(page, "<img"), 0);
	assert_null(strchr(data, '<'));
	assert_null(strchr(data, '>'));
	assert_null(strstr(data, "\xe2\x80\xa8"));
	assert_null(strstr(data, "\xe2\x80\xa9"));
	assert_non_null(strstr(data, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"));
	assert_non_null(strstr(data, "\\u2028"));
	assert_non_null(strstr(data, "\\u2029"));
	assert_non_null(strstr(data, "\xef\xbf\xbd\\ufffd"));
	assert_non_null(strstr(data, "\"/bin/\\u003c/script\\u003e\""));
	/* The data once, the title as text. */
	assert_int_equal(count(page, "id=\"run-data\""), 1);
	assert_non_null(strstr(page, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>"));
	free(data);
	free(page);
}

static void csp_comes_first_and_hashes_the_pages_own_style_and_script(void **state)
{
	size_t len;
	char *page = page_of(hostile, "t", &len);
	char *css = between(page, "<style>", "</style>");
	char *js = between(page, "<script>", "</script>");
	char *csp = between(page, "<meta http-equiv=\"Content-Security-Policy\" content=\"", "\"");
	char want[128];

	(void)state;
	assert_true(strstr(page, "Content-Security-Policy") < strstr(page, "<style>"));
	assert_non_null(strstr(csp, "default-src 'none'"));
	assert_non_null(strstr(csp, "img-src data:"));
	csp_hash(css, want, sizeof(want));
	assert_non_null(strstr(csp, want));
	csp_hash(js, want, sizeof(want));
	assert_non_null(strstr(csp, want));
	assert_null(strstr(csp, "unsafe"));
	/* The script builds the page from text: no markup parser, no eval. */
	assert_null(strstr(js, "innerHTML"));
	assert_null(strstr(js, "outerHTML"));
	assert_null(strstr(js, "insertAdjacentHTML"));
	assert_null(strstr(js, "document.write"));
	assert_null(strstr(js, "eval("));
	assert_null(strstr(js, "Function("));
	free(csp);
	free(js);
	free(css);
	free(page);
}

static void page_names_no_url_but_the_svg_namespace(void **state)
{
	size_t len;
	char *page = page_of(hostile, "t", &len);
	const char *svg_ns = "http://www.w3.org/2000/svg";
	size_t urls = count(page, "http://") + count(page, "https://") + count(page, "ftp://") + count(page, "ws://") +
		      count(page, "wss://") + count(page, "src=\"") + count(page, "href=");

	(void)state;
	assert_int_equal(urls, count(page, svg_ns));
	assert_int_equal(count(page, svg_ns), 1);
	free(page);
}

static void the_file_holds_the_same_page(void **state)
{
	char path[] = "/tmp/test_view_html.XXXXXX";
	int fd = mkstemp(path);
	size_t len;
	char *page = page_of(hostile, "t", &len), *got = malloc(len + 1);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(html_write_file(path, hostile, strlen(hostile), "t", -1, -1, "test_view_html"), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(got, 1, len + 1, f), len);
	fclose(f);
	assert_memory_equal(got, page, len);
	assert_int_equal(html_write_file("/nonexistent-dir/x.html", hostile, strlen(hostile), "t", -1, -1, "test_view_html"),
			 -1);
	unlink(path);
	free(got);
	free(page);
}

/* ---- the page's data -------------------------------------------------------------------------------- */

/* html_data_write's output, and that output parsed (strictly: it must be JSON). */
struct data {
	char *text;
	size_t len;
	struct json_doc d;
	struct json_node *nodes;
};

static void data_of(const char *json, size_t len, struct data *p)
{
	struct obuf o;
	char err[160];
	uint32_t cap;
	int rc;

	obuf_init_mem(&o, 1u << 30);
	rc = html_data_write(&o, json, len, err, sizeof(err));
	if (rc)
		fail_msg("html_data_write: %d: %s", rc, err);
	obuf_putc(&o, 0);
	p->text = o.buf;
	p->len = o.len - 1;
	cap = (uint32_t)(p->len / 2 + 16); /* each value takes a byte and a separator */
	p->nodes = calloc(cap, sizeof(*p->nodes));
	assert_non_null(p->nodes);
	rc = json_parse(&p->d, p->text, p->len, p->nodes, cap);
	if (rc)
		fail_msg("the data is not JSON: %s at %zu", json_parse_error_name(p->d.err), p->d.err_at);
}

static void data_free(struct data *p)
{
	free(p->text);
	free(p->nodes);
}

/* The value at a path of member names and array indexes, "processes.pid.3"; NULL: none. */
static const struct json_node *at(const struct data *p, const char *path)
{
	const struct json_node *n = json_root(&p->d);
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *part = strtok_r(buf, ".", &save); part && n; part = strtok_r(NULL, ".", &save)) {
		if (n->type == JSON_ARRAY) {
			long k = strtol(part, NULL, 10);

			for (n = json_first(&p->d, n); n && k > 0; k--)
				n = json_next(&p->d, n);
		} else {
			n = json_member(&p->d, n, part);
		}
	}
	return n;
}

static uint64_t u64_at(const struct data *p, const char *path)
{
	uint64_t v = 0;

	if (json_get_u64(at(p, path), &v))
		fail_msg("%s is not a whole number >= 0", path);
	return v;
}

/* A number that may be negative (status, parent). */
static long long i64_at(const struct data *p, const char *path)
{
	const struct json_node *n = at(p, path);

	if (!n || n->type != JSON_NUMBER)
		fail_msg("%s is not a number", path);
	return strtoll(p->text + n->start, NULL, 10);
}

static bool null_at(const struct data *p, const char *path)
{
	const struct json_node *n = at(p, path);

	return n && n->type == JSON_NULL;
}

static const char *str_at(const struct data *p, const char *path, char *buf, size_t cap)
{
	if (json_get_string(&p->d, at(p, path), buf, cap, NULL))
		fail_msg("%s is not a string", path);
	return buf;
}

static uint32_t len_at(const struct data *p, const char *path)
{
	const struct json_node *n = at(p, path);

	assert_non_null(n);
	return n->count;
}

/* strings[] of the index at path. */
static const char *string_of(const struct data *p, const char *path, char *buf, size_t cap)
{
	char sp[32];

	snprintf(sp, sizeof(sp), "strings.%llu", (unsigned long long)u64_at(p, path));
	return str_at(p, sp, buf, cap);
}

#define T0 "1000000000000"
static const char five[] =
	"{\"schema\":\"tracer.run.v1\",\"command\":[\"sh\",\"x\"],\"exit_code\":3,\"start_ns\":" T0 ","
	"\"end_ns\":1000000300000,\"host\":{\"cpus\":4},\"extra\":{\"never\":[\"copied\"]},"
	"\"processes\":[\n"
	" {\"pid\":10,\"ppid\":1,\"start_ns\":" T0 ",\"end_ns\":1000000300000,\"exe\":\"/bin/sh\","
	"  \"argv\":[\"sh\",\"x\"],"
	"  \"tool\":\"sh\",\"step\":null,\"exit_code\":3,\"signal\":0,\"oom_killed\":false,\"cpu_user_ns\":1200,"
	"  \"cpu_sys_ns\":300,\"peak_rss_bytes\":4097,\"files\":[{\"path\":\"/etc/passwd\",\"mode\":\"r\"}],"
	"  \"series\":null},\n"
	" {\"pid\":11,\"ppid\":10,\"start_ns\":1000000000500,\"end_ns\":1000000100000,\"exe\":\"/bin/true\","
	"  \"argv\":[\"true\"],\"tool\":\"true\",\"step\":\"s1\",\"exit_code\":null,\"signal\":9,\"oom_killed\":true,"
	"  \"cpu_ns\":2000,\"peak_rss_bytes\":1024},\n"
	" {\"pid\":10,\"ppid\":11,\"start_ns\":1000000150000,\"end_ns\":null,\"tool\":\"sleep\",\"step\":\"s1\","
	"  \"exit_code\":null,\"signal\":null},\n"
	" {\"pid\":13,\"ppid\":10,\"start_ns\":1000000200000,\"end_ns\":1000000250000,\"tool\":\"yes\",\"step\":null,"
	"  \"exit_code\":null,\"signal\":13},\n"
	" {\"pid\":14,\"ppid\":10,\"start_ns\":1000000000100,\"end_ns\":1000000000999,\"tool\":\"true\","
	"  \"exit_code\":0,"
	"  \"signal\":0}],\n"
	"\"steps\":[{\"id\":\"s1\",\"name\":\"one\",\"start_ns\":1000000000500,\"end_ns\":null,\"tools\":[\"true\"]}],"
	"\"signals\":[{\"kind\":\"oom_kill\",\"pid\":11,\"step\":\"s1\",\"tool\":\"true\"}]}";

static void data_lists_processes_in_columns_with_their_parents(void **state)
{
	struct data p;
	char buf[64];

	(void)state;
	data_of(five, strlen(five), &p);
	assert_string_equal(str_at(&p, "schema", buf, sizeof(buf)), HTML_DATA_SCHEMA);
	assert_int_equal(u64_at(&p, "t0_ns"), 1000000000000ull);
	assert_int_equal(u64_at(&p, "span_ns"), 300000);
	/* The report's own members as they were; the one the page does not show, and every file, left out. */
	assert_int_equal(u64_at(&p, "report.exit_code"), 3);
	assert_int_equal(u64_at(&p, "report.host.cpus"), 4);
	assert_string_equal(str_at(&p, "report.command.1", buf, sizeof(buf)), "x");
	assert_null(at(&p, "report.extra"));
	assert_null(strstr(p.text, "/etc/passwd"));
	assert_null(strstr(p.text, "never"));
	assert_int_equal(len_at(&p, "processes.pid"), 5);
	/* pid 10 twice: 13 started after the second one, 14 before it. */
	assert_int_equal(i64_at(&p, "processes.parent.0"), -1);
	assert_int_equal(i64_at(&p, "processes.parent.1"), 0);
	assert_int_equal(i64_at(&p, "processes.parent.2"), 1);
	assert_int_equal(i64_at(&p, "processes.parent.3"), 2);
	assert_int_equal(i64_at(&p, "processes.parent.4"), 0);
	/* Microseconds since t0, the end rounded up: a process of 899 ns lasts 1 us. */
	assert_int_equal(u64_at(&p, "processes.start_us.2"), 150);
	assert_int_equal(u64_at(&p, "processes.dur_us.0"), 300);
	assert_int_equal(u64_at(&p, "processes.dur_us.3"), 50);
	assert_int_equal(u64_at(&p, "processes.dur_us.4"), 1);
	assert_true(null_at(&p, "processes.dur_us.2"));
	/* How each ended: an exit code, minus a signal, null while it runs. */
	assert_int_equal(i64_at(&p, "processes.status.0"), 3);
	assert_int_equal(i64_at(&p, "processes.status.1"), -9);
	assert_true(null_at(&p, "processes.status.2"));
	assert_int_equal(i64_at(&p, "processes.status.3"), -13);
	assert_int_equal(u64_at(&p, "oom.0"), 1);
	assert_int_equal(len_at(&p, "oom"), 1);
	/* CPU from user + system when cpu_ns is missing; memory in KiB rounded up. */
	assert_int_equal(u64_at(&p, "processes.cpu_us.0"), 2);
	assert_int_equal(u64_at(&p, "processes.rss_kib.0"), 5);
	assert_int_equal(u64_at(&p, "processes.rss_kib.1"), 1);
	assert_true(null_at(&p, "processes.rss_kib.2"));
	assert_string_equal(string_of(&p, "processes.tool.1", buf, sizeof(buf)), "true");
	assert_string_equal(string_of(&p, "processes.step.2", buf, sizeof(buf)), "s1");
	assert_string_equal(string_of(&p, "processes.exe.0", buf, sizeof(buf)), "/bin/sh");
	assert_int_equal(i64_at(&p, "processes.step.0"), -1);
	assert_int_equal(i64_at(&p, "processes.exe.2"), -1);
	/* Every argv (under the cap), by row. */
	assert_int_equal(len_at(&p, "argv"), 2);
	assert_int_equal(u64_at(&p, "argv.1.0"), 1);
	assert_string_equal(str_at(&p, "argv.1.1.0", buf, sizeof(buf)), "true");
	/* Tools over every process: SIGPIPE is no failure, SIGKILL is. Ordered by CPU time. */
	assert_int_equal(len_at(&p, "tools"), 4);
	assert_string_equal(str_at(&p, "tools.0.tool", buf, sizeof(buf)), "true");
	assert_int_equal(u64_at(&p, "tools.0.processes"), 2);
	assert_int_equal(u64_at(&p, "tools.0.failed"), 1);
	assert_int_equal(u64_at(&p, "tools.0.cpu_ns"), 2000);
	assert_int_equal(u64_at(&p, "tools.0.wall_ns"), 99500 + 899);
	assert_int_equal(u64_at(&p, "tools.0.peak_rss_bytes"), 1024);
	assert_string_equal(str_at(&p, "tools.3.tool", buf, sizeof(buf)), "yes");
	assert_int_equal(u64_at(&p, "tools.3.failed"), 0);
	assert_true(null_at(&p, "tools.3.peak_rss_bytes"));
	/* The step, whole, and its processes summed. */
	assert_string_equal(str_at(&p, "steps.0.name", buf, sizeof(buf)), "one");
	assert_int_equal(u64_at(&p, "step_stats.0.processes"), 2);
	assert_int_equal(u64_at(&p, "step_stats.0.failed"), 1);
	assert_int_equal(u64_at(&p, "step_stats.0.running"), 1);
	assert_int_equal(u64_at(&p, "step_stats.0.cpu_ns"), 2000);
	assert_string_equal(str_at(&p, "signals.0.kind", buf, sizeof(buf)), "oom_kill");
	assert_int_equal(u64_at(&p, "counts.processes"), 5);
	assert_int_equal(u64_at(&p, "counts.processes_listed"), 5);
	data_free(&p);
}

static void data_keeps_hostile_strings_the_same(void **state)
{
	struct data p;
	char buf[128];

	(void)state;
	data_of(hostile, strlen(hostile), &p);
	assert_string_equal(str_at(&p, "report.command.0", buf, sizeof(buf)), "</script><img src=x onerror=alert(1)>");
	assert_string_equal(str_at(&p, "report.command.2", buf, sizeof(buf)), "\"'<b>");
	assert_string_equal(str_at(&p, "report.command.3", buf, sizeof(buf)), "a\nb");
	assert_string_equal(str_at(&p, "report.command.4", buf, sizeof(buf)), "\xe2\x80\xa8");
	assert_string_equal(str_at(&p, "report.command.5", buf, sizeof(buf)), "\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(str_at(&p, "argv.0.1.0", buf, sizeof(buf)), "</script><img src=x onerror=alert(1)>");
	assert_string_equal(str_at(&p, "argv.0.1.1", buf, sizeof(buf)), "<!--");
	assert_string_equal(str_at(&p, "argv.0.1.2", buf, sizeof(buf)), "\xe2\x80\xa9");
	assert_string_equal(string_of(&p, "processes.tool.0", buf, sizeof(buf)), "<b>cat\"'");
	assert_string_equal(string_of(&p, "processes.exe.0", buf, sizeof(buf)), "/bin/</script>");
	data_free(&p);
}

static void data_slices_cpu_and_memory_over_the_run(void **state)
{
	/* 200 slices of 1 us. A: 400 us of CPU and 4 KiB over the whole run; B: a sample at the middle, 300 us
	 * of CPU by then, 8 KiB, 400 us in all. */
	static const char two[] =
		"{\"start_ns\":" T0 ",\"end_ns\":1000000200000,\"processes\":["
		"{\"pid\":1,\"start_ns\":" T0 ",\"end_ns\":1000000200000,\"cpu_ns\":400000,\"peak_rss_bytes\":4096},"
		"{\"pid\":2,\"start_ns\":" T0 ",\"end_ns\":1000000200000,\"cpu_ns\":400000,\"peak_rss_bytes\":9000,"
		" \"series\":{\"t_ns\":[1000000100000],\"cpu_ns\":[300000],\"rss_bytes\":[8192],\"samples\":1}}]}";
	struct data p;
	char path[64];

	(void)state;
	data_of(two, strlen(two), &p);
	assert_int_equal(u64_at(&p, "resources.bins"), HTML_DATA_BINS);
	assert_int_equal(len_at(&p, "resources.cpu_ns"), HTML_DATA_BINS);
	for (int k = 0; k < HTML_DATA_BINS; k++) {
		snprintf(path, sizeof(path), "resources.cpu_ns.%d", k);
		assert_int_equal(u64_at(&p, path), 2000 + (k < 100 ? 3000 : 1000));
		snprintf(path, sizeof(path), "resources.rss_bytes.%d", k);
		assert_int_equal(u64_at(&p, path), 4096 + 8192);
	}
	/* 5 cores, but no host said how many it has: nothing to clamp to. */
	assert_true(null_at(&p, "resources.host_cpus"));
	assert_int_equal(u64_at(&p, "resources.cpu_clamped"), 0);
	data_free(&p);
}

/*
 * Issue 25: a 2-CPU host whose chart said 3.13 cores. Two processes sampled 0.1 s apart while their CPU
 * time grew by 0.16 s each (the sample's instant and its reading jitter): 1.6 cores each, 3.2 in the ten
 * slices of that interval, on a host of 2 CPUs. Their resident sets, held until the next sample and summed,
 * are 1.2 GB where the host has 1 GB; a short process claims a 3 GB peak (the rule holds whatever a host
 * sends). Slices of 10 ms over 2 s.
 */
#define SMEAR_HEAD "{\"start_ns\":" T0 ",\"end_ns\":1002000000000,\"host\":"
#define SMEAR_TAIL                                                                                       \
	",\"processes\":["                                                                                    \
	"{\"pid\":1,\"tool\":\"a\",\"start_ns\":" T0 ",\"end_ns\":1002000000000,\"cpu_ns\":2000000000,"       \
	" \"peak_rss_bytes\":600000000,\"series\":{\"t_ns\":[1001000000000,1001100000000],"                   \
	" \"cpu_ns\":[1000000000,1160000000],\"rss_bytes\":[600000000,300000000]}},"                          \
	"{\"pid\":2,\"tool\":\"a\",\"start_ns\":" T0 ",\"end_ns\":1002000000000,\"cpu_ns\":2000000000,"       \
	" \"peak_rss_bytes\":600000000,\"series\":{\"t_ns\":[1001000000000,1001100000000],"                   \
	" \"cpu_ns\":[1000000000,1160000000],\"rss_bytes\":[600000000,300000000]}},"                          \
	"{\"pid\":3,\"tool\":\"big\",\"start_ns\":1001950000000,\"end_ns\":1002000000000,"                    \
	" \"peak_rss_bytes\":3000000000}],"                                                                   \
	"\"steps\":[{\"id\":\"s1\",\"peak_rss_bytes\":1500000000},{\"id\":\"s2\",\"peak_rss_bytes\":500000000},"  \
	"{\"id\":\"s3\"}]}"

static void data_clamps_cores_and_memory_to_the_hosts_and_counts_the_slices(void **state)
{
	static const char smeared[] = SMEAR_HEAD "{\"cpus\":2,\"memory_bytes\":1000000000}" SMEAR_TAIL;
	struct data p;
	char path[64], buf[32];

	(void)state;
	data_of(smeared, strlen(smeared), &p);
	/* CPU: 2 cores up to 1.0 s (exactly the host's: no clamp), 3.2 to 1.1 s (clamped to 2), then the 0.84 s
	 * left of each over 0.9 s. */
	for (int k = 0; k < HTML_DATA_BINS; k++) {
		uint64_t cpu = k < 110 ? 20000000 : 18666667;

		snprintf(path, sizeof(path), "resources.cpu_ns.%d", k);
		if (u64_at(&p, path) != cpu)
			fail_msg("%s: %llu, not %llu", path, (unsigned long long)u64_at(&p, path), (unsigned long long)cpu);
	}
	/* Memory: 1.2 GB up to the first sample's slice (clamped to 1 GB), then 600 MB; the 3 GB peak of the
	 * last 50 ms clamped too. */
	for (int k = 0; k < HTML_DATA_BINS; k++) {
		uint64_t rss = k <= 100 || k >= 195 ? 1000000000 : 600000000;

		snprintf(path, sizeof(path), "resources.rss_bytes.%d", k);
		if (u64_at(&p, path) != rss)
			fail_msg("%s: %llu, not %llu", path, (unsigned long long)u64_at(&p, path), (unsigned long long)rss);
	}
	assert_int_equal(u64_at(&p, "resources.host_cpus"), 2);
	assert_int_equal(u64_at(&p, "resources.host_memory_bytes"), 1000000000);
	assert_int_equal(u64_at(&p, "resources.cpu_clamped"), 10);
	assert_int_equal(u64_at(&p, "resources.rss_clamped"), 101 + 5);
	/* A step's concurrent peak (its processes' samples summed) and a tool's peak: the host's at most. */
	assert_int_equal(u64_at(&p, "step_stats.0.peak_rss_bytes"), 1000000000);
	assert_true(at(&p, "step_stats.0.peak_rss_clamped")->boolean);
	assert_int_equal(u64_at(&p, "step_stats.1.peak_rss_bytes"), 500000000);
	assert_false(at(&p, "step_stats.1.peak_rss_clamped")->boolean);
	assert_true(null_at(&p, "step_stats.2.peak_rss_bytes"));
	assert_false(at(&p, "step_stats.2.peak_rss_clamped")->boolean);
	assert_string_equal(str_at(&p, "tools.1.tool", buf, sizeof(buf)), "big");
	assert_int_equal(u64_at(&p, "tools.1.peak_rss_bytes"), 1000000000);
	assert_true(at(&p, "tools.1.peak_rss_clamped")->boolean);
	assert_int_equal(u64_at(&p, "tools.0.peak_rss_bytes"), 600000000);
	assert_false(at(&p, "tools.0.peak_rss_clamped")->boolean);
	/* The step as the report has it, whole: only the figures the page draws are clamped. */
	assert_int_equal(u64_at(&p, "steps.0.peak_rss_bytes"), 1500000000);
	data_free(&p);
}

/* The same run from a host whose capacity is not known (an old lake): nothing clamped, nothing counted. */
static void data_clamps_nothing_when_the_hosts_capacity_is_unknown(void **state)
{
	static const char *const hosts[] = { "{\"cpus\":null,\"memory_bytes\":null}", "null", "{}", "\"a-name\"" };
	char text[2048], path[64];
	struct data p;

	(void)state;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		snprintf(text, sizeof(text), "%s%s%s", SMEAR_HEAD, hosts[i], SMEAR_TAIL);
		data_of(text, strlen(text), &p);
		assert_true(null_at(&p, "resources.host_cpus"));
		assert_true(null_at(&p, "resources.host_memory_bytes"));
		assert_int_equal(u64_at(&p, "resources.cpu_clamped"), 0);
		assert_int_equal(u64_at(&p, "resources.rss_clamped"), 0);
		snprintf(path, sizeof(path), "resources.cpu_ns.%d", 105);
		assert_int_equal(u64_at(&p, path), 32000000);
		snprintf(path, sizeof(path), "resources.rss_bytes.%d", 0);
		assert_int_equal(u64_at(&p, path), 1200000000);
		assert_int_equal(u64_at(&p, "step_stats.0.peak_rss_bytes"), 1500000000);
		assert_false(at(&p, "step_stats.0.peak_rss_clamped")->boolean);
		assert_int_equal(u64_at(&p, "tools.1.peak_rss_bytes"), 3000000000);
		data_free(&p);
	}
}

/* A report of n processes, each "{...}" from fmt(k) into o. */
static void processes_of(struct obuf *o, unsigned n, void (*one)(struct obuf *, unsigned))
{
	obuf_puts(o, "\"processes\":[");
	for (unsigned k = 0; k < n; k++) {
		if (k)
			obuf_putc(o, ',');
		one(o, k);
	}
	obuf_putc(o, ']');
}

/* Rows 3 and 7 fail; the others live longer the later they come. */
static void argv_process(struct obuf *o, unsigned k)
{
	obuf_printf(o, "{\"pid\":%u,\"start_ns\":" T0 ",\"end_ns\":%llu,\"argv\":[\"p%u\"],\"tool\":\"t%u\","
		       "\"cpu_ns\":%u,\"exit_code\":%d,\"signal\":0,\"step\":\"s%u\"}",
		    k + 100, 1000000000000ull + 1000ull * (k + 1), k, k, k, k == 3 || k == 7, k % 7);
}

static void data_caps_what_it_carries_and_counts_the_rest(void **state)
{
	unsigned nproc = HTML_DATA_MAX_ARGV + 100, nsteps = HTML_DATA_MAX_STEPS + 1, nsig = HTML_DATA_MAX_SIGNALS + 1;
	struct obuf o;
	struct data p;
	char buf[32];

	(void)state;
	obuf_init_mem(&o, 1u << 30);
	obuf_puts(&o, "{");
	processes_of(&o, nproc, argv_process);
	obuf_puts(&o, ",\"steps\":[");
	for (unsigned k = 0; k < nsteps; k++)
		obuf_printf(&o, "%s{\"id\":\"s%u\",\"start_ns\":" T0 "}", k ? "," : "", k);
	obuf_puts(&o, "],\"signals\":[");
	for (unsigned k = 0; k < nsig; k++)
		obuf_printf(&o, "%s{\"kind\":\"%s\",\"step\":\"s%u\"}", k ? "," : "",
			    k == 0 ? "stalled" : k == nsig - 1 ? "slower_than_usual" : "failed", k == 0 ? 1 : k % 3);
	obuf_puts(&o, "]}");
	assert_int_equal(o.err, 0);
	data_of(o.buf, o.len, &p);
	obuf_free(&o);

	assert_int_equal(u64_at(&p, "counts.processes"), nproc);
	assert_int_equal(u64_at(&p, "counts.processes_listed"), nproc);
	/* Command lines: the two that failed first, then the longest-lived; in row order. */
	assert_int_equal(u64_at(&p, "counts.argv"), nproc);
	assert_int_equal(u64_at(&p, "counts.argv_listed"), HTML_DATA_MAX_ARGV);
	assert_int_equal(len_at(&p, "argv"), HTML_DATA_MAX_ARGV);
	assert_int_equal(u64_at(&p, "argv.0.0"), 3);
	assert_int_equal(u64_at(&p, "argv.1.0"), 7);
	assert_int_equal(u64_at(&p, "argv.2.0"), nproc - (HTML_DATA_MAX_ARGV - 2));
	assert_string_equal(str_at(&p, "argv.0.1.0", buf, sizeof(buf)), "p3");
	snprintf(buf, sizeof(buf), "argv.%d.0", HTML_DATA_MAX_ARGV - 1);
	assert_int_equal(u64_at(&p, buf), nproc - 1);
	/* Tools: the most CPU first, the rest counted. */
	assert_int_equal(u64_at(&p, "counts.tools"), nproc);
	assert_int_equal(u64_at(&p, "counts.tools_listed"), HTML_DATA_MAX_TOOLS);
	assert_int_equal(len_at(&p, "tools"), HTML_DATA_MAX_TOOLS);
	snprintf(buf, sizeof(buf), "t%u", nproc - 1);
	{
		char got[32];

		assert_string_equal(str_at(&p, "tools.0.tool", got, sizeof(got)), buf);
	}
	/* Steps and signals, the first of each; step 1 stalled, step 2 slower than usual (a signal left out). */
	assert_int_equal(u64_at(&p, "counts.steps"), nsteps);
	assert_int_equal(u64_at(&p, "counts.steps_listed"), HTML_DATA_MAX_STEPS);
	assert_int_equal(len_at(&p, "steps"), HTML_DATA_MAX_STEPS);
	assert_int_equal(len_at(&p, "step_stats"), HTML_DATA_MAX_STEPS);
	assert_int_equal(u64_at(&p, "counts.signals"), nsig);
	assert_int_equal(u64_at(&p, "counts.signals_listed"), HTML_DATA_MAX_SIGNALS);
	assert_int_equal(len_at(&p, "signals"), HTML_DATA_MAX_SIGNALS);
	assert_false(at(&p, "step_stats.0.flagged")->boolean);
	assert_true(at(&p, "step_stats.1.flagged")->boolean);
	assert_true(at(&p, "step_stats.2.flagged")->boolean);
	assert_false(at(&p, "step_stats.3.flagged")->boolean);
	/* Every process named its step: s0..s6, by row % 7. */
	assert_int_equal(u64_at(&p, "step_stats.1.processes"), (nproc + 5) / 7);
	assert_int_equal(u64_at(&p, "step_stats.7.processes"), 0);
	data_free(&p);
}

static void bare_process(struct obuf *o, unsigned k)
{
	obuf_printf(o, "{\"pid\":%u,\"tool\":\"t\"}", k);
}

static void data_lists_at_most_its_cap_of_processes_and_counts_them_all(void **state)
{
	struct obuf o, out;
	char err[160], want[128];

	(void)state;
	obuf_init_mem(&o, 1u << 30);
	obuf_putc(&o, '{');
	processes_of(&o, HTML_DATA_MAX_PROCESSES + 1, bare_process);
	obuf_putc(&o, '}');
	obuf_init_mem(&out, 1u << 30);
	assert_int_equal(html_data_write(&out, o.buf, o.len, err, sizeof(err)), 0);
	obuf_putc(&out, 0);
	snprintf(want, sizeof(want), "\"counts\":{\"processes\":%d,\"processes_listed\":%d,",
		 HTML_DATA_MAX_PROCESSES + 1, HTML_DATA_MAX_PROCESSES);
	assert_non_null(strstr(out.buf, want));
	snprintf(want, sizeof(want), "\"tools\":[{\"tool\":\"t\",\"processes\":%d,", HTML_DATA_MAX_PROCESSES + 1);
	assert_non_null(strstr(out.buf, want));
	snprintf(want, sizeof(want), ",%d],\"parent\":", HTML_DATA_MAX_PROCESSES - 1);
	assert_non_null(strstr(out.buf, want));
	obuf_free(&o);
	obuf_free(&out);
}

static void data_refuses_what_is_not_a_report_object(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "", "not a JSON object" },
		{ "  \n", "not a JSON object" },
		{ "[]", "not a JSON object" },
		{ "null", "not a JSON object" },
		{ "\"{}\"", "not a JSON object" },
		{ "{", "no member name" },
		{ "{\"steps\":[}", "not valid JSON" },
		{ "{}x", "text after it" },
		{ "{\"processes\":[],\"processes\":[]}", "two members \"processes\"" },
		{ "{\"st\\u0065ps\":[],\"steps\":[]}", "two members \"steps\"" },
		{ "{\"steps\":5}", "\"steps\" is not an array" },
		{ "{\"processes\":[{\"pid\":01}]}", "a number not in JSON's form" },
		{ "{\"processes\":[{\"pid\":1,\"pid\":2}]}", "two members of one object" },
		{ "{\"command\":[\"a\",]}", "not valid JSON" },
		{ "{\"processes\":[{\"pid\":1}", "no ',' or ']'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct obuf o;
		char err[160];

		obuf_init_mem(&o, 1u << 20);
		err[0] = 'X';
		assert_int_equal(html_data_write(&o, bad[i].text, strlen(bad[i].text), err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: \"%s\", not \"%s\"", bad[i].text, err, bad[i].says);
		assert_int_equal(o.len, 0); /* nothing written */
		obuf_free(&o);
	}
}

static void data_refuses_bytes_that_are_not_utf8_in_an_argv_and_says_where(void **state)
{
	static const char bad[] = "{\"processes\":[{\"pid\":1,\"argv\":[\"ok\",\"a\xc3\x28</script>\"]}]}";
	char path[] = "/tmp/test_view_html.XXXXXX", err[160], *where;
	struct obuf o;
	int fd = mkstemp(path);

	(void)state;
	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(html_data_write(&o, bad, strlen(bad), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not UTF-8"));
	where = strstr(err, "at byte ");
	assert_non_null(where);
	assert_int_equal(strtoul(where + 8, NULL, 10), strstr(bad, "\xc3\x28") - bad);
	assert_int_equal(o.len, 0);
	obuf_free(&o);
	/* Through the page: refused, and no page made. */
	obuf_init_mem(&o, 1u << 20);
	assert_int_equal(html_write_report(&o, bad, strlen(bad), "t"), -EINVAL);
	assert_int_equal(o.len, 0);
	obuf_free(&o);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(html_write_file(path, bad, strlen(bad), "t", -1, -1, "test_view_html"), -1);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(script_json_escapes_what_could_end_the_element_or_open_a_comment),
		cmocka_unit_test(script_json_escapes_line_separators_and_keeps_other_utf8),
		cmocka_unit_test(script_json_replaces_ill_formed_utf8_and_escapes_controls),
		cmocka_unit_test(html_text_escapes_markup_quotes_and_bad_bytes),
		cmocka_unit_test(hostile_data_cannot_end_the_data_element),
		cmocka_unit_test(csp_comes_first_and_hashes_the_pages_own_style_and_script),
		cmocka_unit_test(page_names_no_url_but_the_svg_namespace),
		cmocka_unit_test(the_file_holds_the_same_page),
		cmocka_unit_test(data_lists_processes_in_columns_with_their_parents),
		cmocka_unit_test(data_keeps_hostile_strings_the_same),
		cmocka_unit_test(data_slices_cpu_and_memory_over_the_run),
		cmocka_unit_test(data_clamps_cores_and_memory_to_the_hosts_and_counts_the_slices),
		cmocka_unit_test(data_clamps_nothing_when_the_hosts_capacity_is_unknown),
		cmocka_unit_test(data_caps_what_it_carries_and_counts_the_rest),
		cmocka_unit_test(data_lists_at_most_its_cap_of_processes_and_counts_them_all),
		cmocka_unit_test(data_refuses_what_is_not_a_report_object),
		cmocka_unit_test(data_refuses_bytes_that_are_not_utf8_in_an_argv_and_says_where),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
