/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report's writer (view/html.c): hostile strings planted in each
 * context the page puts host text in stay text. Inside the run-data
 * script element nothing can end the element ("</script"), open a comment
 * ("<!--"), break a JavaScript line (U+2028, U+2029) or carry ill-formed
 * UTF-8; in the <title> no markup survives. The page has its
 * Content-Security-Policy first, with the sha256 of the very <style> and
 * <script> it carries, and names no URL: one file, nothing to fetch.
 */
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

static const char hostile[] =
	"{\"command\":[\"</script><img src=x onerror=alert(1)>\",\"<!--<script>\",\"\\\"'<b>\",\"a\\nb\","
	"\"\xe2\x80\xa8\",\"\xff\xfe\"],\"steps\":[],\"signals\":[]}";

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
	assert_non_null(strstr(data, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"));
	assert_non_null(strstr(data, "\\u2028"));
	assert_non_null(strstr(data, "\\ufffd\\ufffd"));
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
	char path[] = "/tmp/test_html.XXXXXX";
	int fd = mkstemp(path);
	size_t len;
	char *page = page_of(hostile, "t", &len), *got = malloc(len + 1);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(html_write_file(path, hostile, strlen(hostile), "t", -1, -1, "test_html"), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(got, 1, len + 1, f), len);
	fclose(f);
	assert_memory_equal(got, page, len);
	assert_int_equal(html_write_file("/nonexistent-dir/x.html", hostile, 1, "t", -1, -1, "test_html"), -1);
	unlink(path);
	free(got);
	free(page);
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
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
