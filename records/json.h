/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output buffer and a small streaming JSON writer.
 *
 * struct obuf collects output either for a file descriptor (fixed buffer,
 * flushed with write() when full: no stdio, nothing to allocate, fine
 * under seccomp) or in memory (grows with realloc: tests, fuzzing). The
 * first error sticks and is returned by obuf_flush.
 *
 * Strings are always valid JSON and valid UTF-8 whatever the input bytes:
 * '"' and '\' are escaped, every control character (U+0000-U+001F and
 * U+007F) becomes \u00XX, and every byte that does not start or continue
 * a well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF) is replaced by U+FFFD.
 */
#ifndef TRACER_RECORDS_JSON_H
#define TRACER_RECORDS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct obuf {
	char *buf;
	size_t len, cap;
	int fd;      /* -1: in memory */
	int err;     /* first error, negative errno */
	bool owned;  /* buf was allocated here */
	size_t max;  /* in memory: most bytes kept (then -EFBIG) */
};

/* Output to fd through a caller-provided buffer. */
void obuf_init_fd(struct obuf *o, int fd, char *storage, size_t cap);
/* Output into memory, at most max bytes. */
void obuf_init_mem(struct obuf *o, size_t max);
void obuf_free(struct obuf *o);
/* Write out what is buffered (fd mode). Returns 0 or the first error. */
int obuf_flush(struct obuf *o);

void obuf_put(struct obuf *o, const char *s, size_t n);
void obuf_puts(struct obuf *o, const char *s);
void obuf_putc(struct obuf *o, char c);
void obuf_printf(struct obuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Length of the well-formed UTF-8 sequence starting s (n bytes available), 0 if none. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* A quoted, escaped JSON string of n bytes of s. */
void json_put_string(struct obuf *o, const char *s, size_t n);

#define JSON_MAX_DEPTH 16

/* Streaming writer: commas between members and elements are its business. */
struct json {
	struct obuf *o;
	unsigned depth;
	bool after_key;
	bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, struct obuf *o);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s);            /* NULL writes null */
void json_string_n(struct json *j, const char *s, size_t n);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/*
 * One whole JSON value that is already JSON text, checked by whoever made
 * it (the lake's stored JSON, accepted by SQLite's json_valid): copied,
 * but with this writer's guarantees kept, which valid JSON alone does not
 * give: a control character or DEL becomes \u00XX and a byte that is not
 * well-formed UTF-8 becomes \ufffd (in valid JSON both can only be inside
 * strings); tab, newline and carriage return (whitespace between tokens)
 * are kept.
 */
void json_raw(struct json *j, const char *text, size_t n);

/* Members: "key": value. */
void json_kv_string(struct json *j, const char *key, const char *s); /* NULL: null */
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_u64_or_null(struct json *j, const char *key, bool known, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_bool_or_null(struct json *j, const char *key, bool known, bool v);
void json_kv_null(struct json *j, const char *key);
/* A number with 9 significant digits; NaN or an infinity: null (JSON has neither). */
void json_kv_double(struct json *j, const char *key, double v);

#endif /* TRACER_RECORDS_JSON_H */
