/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the status file's reader (status_parse) and the strict
 * JSON reader under it (json_parse), with abort() on a broken invariant.
 * The file is written by the processor, which runs with less privilege
 * than whoever runs `tracer status`.
 *
 * Input: the bytes of a status file, read as they are and with a newline
 * after them (most inputs have none, and would stop at "incomplete").
 *
 * Invariants, JSON: a parse returns 0 or -EINVAL with an error and its
 * offset within the text; a refused text leaves nothing to read. An
 * accepted one: every node's text lies inside the input, children come
 * after their parent and are counted, strings decode to well-formed UTF-8
 * no longer than their text, whole numbers are the digits' value; written
 * back as JSON (canonical: no whitespace, strings re-escaped) it parses
 * again and writes the same bytes.
 * Status: a verdict of the enum, a printable message, *s untouched on
 * error; an accepted status written by status_format reads back equal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "json.h"
#include "json_parse.h"
#include "status.h"

#define NODES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[STATUS_FILE_MAX + 1]; /* a decoded string; a formatted status */

static void check_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = json_utf8_len((const unsigned char *)s + i, n - i);

		CHECK(k > 0);
		i += k;
	}
}

/* The canonical text of node n into o; its strings checked on the way. */
static void write_canonical(struct obuf *o, const struct json_doc *d, const struct json_node *n)
{
	size_t len;

	CHECK((size_t)n->start + n->len <= d->len);
	switch ((enum json_type)n->type) {
	case JSON_NULL: obuf_puts(o, "null"); return;
	case JSON_BOOL: obuf_puts(o, n->boolean ? "true" : "false"); return;
	case JSON_NUMBER: {
		uint64_t v;
		int rc = json_get_u64(n, &v);

		obuf_put(o, d->text + n->start, n->len);
		if (rc == 0) { /* a whole number's value is its digits' */
			char digits[24];

			snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
			CHECK(n->len == strlen(digits) && !memcmp(d->text + n->start, digits, n->len));
		}
		return;
	}
	case JSON_STRING:
		CHECK(json_get_string(d, n, scratch, sizeof(scratch), &len) == 0 || n->len >= sizeof(scratch));
		if (n->len >= sizeof(scratch))
			return;
		CHECK(len <= n->len);
		check_utf8(scratch, len);
		json_put_string(o, scratch, len);
		return;
	case JSON_ARRAY:
	case JSON_OBJECT: {
		uint32_t count = 0;

		obuf_putc(o, n->type == JSON_ARRAY ? '[' : '{');
		for (const struct json_node *c = json_first(d, n); c; c = json_next(d, c)) {
			CHECK(c > n && c < d->nodes + d->n);
			if (count++)
				obuf_putc(o, ',');
			if (n->type == JSON_OBJECT) {
				CHECK(json_get_key(d, c, scratch, sizeof(scratch), &len) == 0 || c->key_len >= sizeof(scratch));
				if (c->key_len >= sizeof(scratch))
					return;
				CHECK(len <= c->key_len);
				check_utf8(scratch, len);
				CHECK(json_member(d, n, scratch) == c || memchr(scratch, 0, len)); /* found by its name */
				json_put_string(o, scratch, len);
				obuf_putc(o, ':');
			}
			write_canonical(o, d, c);
		}
		CHECK(count == n->count);
		obuf_putc(o, n->type == JSON_ARRAY ? ']' : '}');
		return;
	}
	}
	CHECK(!"a node of no type");
}

static void fuzz_json(const char *text, size_t size)
{
	static struct json_node nodes[NODES], again[NODES];
	struct json_doc d, d2;
	struct obuf a, b;
	int rc = json_parse(&d, text, size, nodes, NODES);

	CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		CHECK(d.err != JSON_OK && d.err_at <= size);
		CHECK(json_root(&d) == NULL);
		return;
	}
	CHECK(d.n >= 1 && d.n <= NODES);
	obuf_init_mem(&a, 1 << 22);
	obuf_init_mem(&b, 1 << 22);
	write_canonical(&a, &d, json_root(&d));
	if (!a.err) {
		CHECK(json_parse(&d2, a.buf, a.len, again, NODES) == 0);
		CHECK(d2.n == d.n);
		write_canonical(&b, &d2, json_root(&d2));
		CHECK(!b.err && a.len == b.len && !memcmp(a.buf, b.buf, a.len));
	}
	obuf_free(&a);
	obuf_free(&b);
}

static void fuzz_status(const char *text, size_t size)
{
	static struct status s, before, again;
	char err[128];
	size_t len;
	enum status_error e;

	memset(&s, 0xa5, sizeof(s));
	memcpy(&before, &s, sizeof(s));
	memset(err, 'X', sizeof(err));
	e = status_parse(text, size, &s, err, sizeof(err));
	CHECK(e >= STATUS_OK && e <= STATUS_E_VALUE);
	if (e) {
		size_t n = strnlen(err, sizeof(err));

		CHECK(n > 0 && n < sizeof(err));
		for (size_t i = 0; i < n; i++)
			CHECK(err[i] >= 0x20 && err[i] < 0x7f);
		CHECK(!memcmp(&s, &before, sizeof(s)));
		return;
	}
	CHECK(memchr(s.upload.url, 0, sizeof(s.upload.url)) && memchr(s.upload.last_error, 0, sizeof(s.upload.last_error)));
	CHECK(memchr(s.upload.url_in_use, 0, sizeof(s.upload.url_in_use)) &&
	      memchr(s.upload.failed_url, 0, sizeof(s.upload.failed_url)));
	CHECK(status_format(&s, scratch, sizeof(scratch), &len) == 0);
	CHECK(status_parse(scratch, len, &again, err, sizeof(err)) == STATUS_OK);
	/* Equal field by field: the padding of the two copies may differ. */
	CHECK(s.time_ns == again.time_ns && s.pid == again.pid && s.ring.attached == again.ring.attached);
	CHECK(!memcmp(&s.ring.attaches, &again.ring.attaches, sizeof(uint64_t) * 5));
	CHECK(!memcmp(&s.spool, &again.spool, sizeof(s.spool)));
	CHECK(s.upload.enabled == again.upload.enabled && !strcmp(s.upload.url, again.upload.url));
	CHECK(!strcmp(s.upload.last_error, again.upload.last_error));
	CHECK(!strcmp(s.upload.url_in_use, again.upload.url_in_use) && !strcmp(s.upload.failed_url, again.upload.failed_url));
	CHECK(s.upload.failovers == again.upload.failovers);
	CHECK(s.upload.batches_acked == again.upload.batches_acked && s.upload.net_errors == again.upload.net_errors);
	CHECK(s.upload.last_http_status == again.upload.last_http_status);
	CHECK(s.upload.pending_records == again.upload.pending_records);
	CHECK(s.heartbeat.beats == again.heartbeat.beats);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);

	CHECK(copy != NULL);
	memcpy(copy, data, size);
	copy[size] = '\n';
	fuzz_json((const char *)data, size);
	fuzz_status((const char *)data, size);
	fuzz_status(copy, size + 1);
	free(copy);
	return 0;
}
