/* SPDX-License-Identifier: Apache-2.0 */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Output buffer                                                      */
/* ------------------------------------------------------------------ */

void obuf_init_fd(struct obuf *o, int fd, char *storage, size_t cap)
{
	*o = (struct obuf){ .buf = storage, .cap = cap, .fd = fd };
}

void obuf_init_mem(struct obuf *o, size_t max)
{
	*o = (struct obuf){ .fd = -1, .owned = true, .max = max };
}

void obuf_free(struct obuf *o)
{
	if (o->owned)
		free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

int obuf_flush(struct obuf *o)
{
	size_t off = 0;

	if (o->fd < 0)
		return o->err;
	while (!o->err && off < o->len) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	o->len = 0;
	return o->err;
}

static bool mem_grow(struct obuf *o, size_t need)
{
	size_t cap = o->cap ? o->cap : 4096;
	char *b;

	if (need > o->max) {
		o->err = -EFBIG;
		return false;
	}
	while (cap < need)
		cap *= 2;
	if (cap > o->max)
		cap = o->max;
	b = realloc(o->buf, cap);
	if (!b) {
		o->err = -ENOMEM;
		return false;
	}
	o->buf = b;
	o->cap = cap;
	return true;
}

void obuf_put(struct obuf *o, const char *s, size_t n)
{
	while (n && !o->err) {
		size_t room = o->cap - o->len, k;

		if (room == 0) {
			if (o->fd >= 0)
				obuf_flush(o);
			else
				mem_grow(o, o->len + n);
			continue;
		}
		k = n < room ? n : room;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

void obuf_puts(struct obuf *o, const char *s)
{
	obuf_put(o, s, strlen(s));
}

void obuf_putc(struct obuf *o, char c)
{
	obuf_put(o, &c, 1);
}

void obuf_printf(struct obuf *o, const char *fmt, ...)
{
	char tmp[512], *big;
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_end(again);
		o->err = o->err ? o->err : -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(tmp)) { /* numbers and short names, the usual case */
		va_end(again);
		obuf_put(o, tmp, (size_t)n);
		return;
	}
	/* Longer: formatted again into a buffer its size, never cut. */
	big = malloc((size_t)n + 1);
	if (!big) {
		va_end(again);
		o->err = o->err ? o->err : -ENOMEM;
		return;
	}
	vsnprintf(big, (size_t)n + 1, fmt, again);
	va_end(again);
	obuf_put(o, big, (size_t)n);
	free(big);
}

/* ------------------------------------------------------------------ */
/* Strings                                                            */
/* ------------------------------------------------------------------ */

/* Well-formed sequences: Table 3-7 of the Unicode standard. */
size_t json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c, lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlongs */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void json_put_string(struct obuf *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0; /* bytes at s[i - run .. i) that need no escaping */

	obuf_putc(o, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = json_utf8_len(s + i, n - i);

		if (len > 1 || (len == 1 && c >= 0x20 && c != 0x7f && c != '"' && c != '\\')) {
			i += len;
			run += len;
			continue;
		}
		obuf_put(o, str + i - run, run);
		run = 0;
		if (len == 0) {
			obuf_put(o, "\xef\xbf\xbd", 3); /* U+FFFD for each byte that is not UTF-8 */
		} else if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			obuf_put(o, e, 2);
		} else {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

			obuf_put(o, e, 6);
		}
		i++;
	}
	obuf_put(o, str + n - run, run);
	obuf_putc(o, '"');
}

/* ------------------------------------------------------------------ */
/* Writer                                                             */
/* ------------------------------------------------------------------ */

void json_init(struct json *j, struct obuf *o)
{
	memset(j, 0, sizeof(*j));
	j->o = o;
}

static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		obuf_putc(j->o, ',');
	j->need_comma[j->depth] = true;
}

static void open_container(struct json *j, char c)
{
	before_value(j);
	obuf_putc(j->o, c);
	if (j->depth + 1 >= JSON_MAX_DEPTH) {
		j->o->err = j->o->err ? j->o->err : -E2BIG; /* a bug in the caller, not in the data */
		return;
	}
	j->need_comma[++j->depth] = false;
}

static void close_container(struct json *j, char c)
{
	obuf_putc(j->o, c);
	if (j->depth > 0)
		j->depth--;
}

void json_object_begin(struct json *j)
{
	open_container(j, '{');
}

void json_object_end(struct json *j)
{
	close_container(j, '}');
}

void json_array_begin(struct json *j)
{
	open_container(j, '[');
}

void json_array_end(struct json *j)
{
	close_container(j, ']');
}

void json_key(struct json *j, const char *key)
{
	before_value(j);
	json_put_string(j->o, key, strlen(key));
	obuf_putc(j->o, ':');
	j->after_key = true;
}

void json_string_n(struct json *j, const char *s, size_t n)
{
	before_value(j);
	json_put_string(j->o, s, n);
}

void json_string(struct json *j, const char *s)
{
	if (!s)
		json_null(j);
	else
		json_string_n(j, s, strlen(s));
}

void json_u64(struct json *j, uint64_t v)
{
	before_value(j);
	obuf_printf(j->o, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, int64_t v)
{
	before_value(j);
	obuf_printf(j->o, "%lld", (long long)v);
}

void json_bool(struct json *j, bool v)
{
	before_value(j);
	obuf_puts(j->o, v ? "true" : "false");
}

void json_null(struct json *j)
{
	before_value(j);
	obuf_puts(j->o, "null");
}

void json_raw(struct json *j, const char *text, size_t n)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t off = 0;

	before_value(j);
	while (off < n) {
		unsigned char c = p[off];
		size_t k = c >= 0x80 ? json_utf8_len(p + off, n - off) : 1;

		if (k == 0) {
			obuf_puts(j->o, "\\ufffd");
			k = 1;
		} else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
			obuf_printf(j->o, "\\u%04x", c);
		} else {
			obuf_put(j->o, text + off, k);
		}
		off += k;
	}
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_u64_or_null(struct json *j, const char *key, bool known, uint64_t v)
{
	json_key(j, key);
	if (known)
		json_u64(j, v);
	else
		json_null(j);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_kv_bool_or_null(struct json *j, const char *key, bool known, bool v)
{
	json_key(j, key);
	if (known)
		json_bool(j, v);
	else
		json_null(j);
}

void json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}

void json_kv_double(struct json *j, const char *key, double v)
{
	char buf[64];

	json_key(j, key);
	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	snprintf(buf, sizeof(buf), "%.9g", v);
	json_raw(j, buf, strlen(buf));
}
