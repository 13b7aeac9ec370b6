/* SPDX-License-Identifier: Apache-2.0 */
#include "keys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "batch.h"
#include "readfile.h"

#define WORDS_MAX 5 /* one more than a line may hold, to say "unexpected text" */

struct word {
	const char *s;
	size_t len;
	unsigned col; /* 1-based byte column */
};

struct parser {
	const char *source;
	char *err;
	size_t errlen;
	unsigned line;
};

__attribute__((format(printf, 4, 5))) static int fail(const struct parser *ps, unsigned col, int rc,
						      const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (!ps->err || ps->errlen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->line)
		snprintf(ps->err, ps->errlen, "%s:%u:%u: %s", ps->source, ps->line, col, msg);
	else
		snprintf(ps->err, ps->errlen, "%s: %s", ps->source, msg);
	return rc;
}

/* Split a line into at most WORDS_MAX words separated by spaces or tabs; returns how many. */
static unsigned split_words(const char *s, size_t len, struct word *w)
{
	unsigned n = 0;
	size_t i = 0;

	while (i < len && n < WORDS_MAX) {
		size_t start;

		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		w[n++] = (struct word){ s + start, i - start, (unsigned)start + 1 };
	}
	return n;
}

/* Exactly 2 * n hex digits into n bytes. */
static int hex_exact(const struct word *w, uint8_t *out, size_t n)
{
	size_t got = 0;

	if (w->len != 2 * n)
		return -1;
	if (sodium_hex2bin(out, n, w->s, w->len, NULL, &got, NULL) || got != n)
		return -1;
	return 0;
}

/* base64 (standard alphabet, padded as batch_public_line writes it, or unpadded) of exactly n bytes. */
static int base64_exact(const struct word *w, uint8_t *out, size_t n)
{
	size_t got = 0;
	int variant = (w->len % 4 == 0) ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING;
	const char *end = NULL;

	if (sodium_base642bin(out, n, w->s, w->len, NULL, &got, &end, variant) || got != n || end != w->s + w->len)
		return -1;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(((const struct key_entry *)a)->key_id, ((const struct key_entry *)b)->key_id, BATCH_KEY_ID_LEN);
}

/* One non-blank, non-comment line into *e. */
static int parse_key_line(const struct parser *ps, const char *s, size_t len, struct key_entry *e)
{
	struct word w[WORDS_MAX];
	uint8_t id[BATCH_KEY_ID_LEN];
	unsigned n = split_words(s, len, w);

	if (w[0].len != strlen(KEYS_PUBLIC_TAG) || memcmp(w[0].s, KEYS_PUBLIC_TAG, w[0].len))
		return fail(ps, w[0].col, -EINVAL, "expected \"" KEYS_PUBLIC_TAG " KEYID PUBLIC_KEY [HOST_ID]\" "
			    "(the line 'tracer keygen' prints)");
	if (n < 3)
		return fail(ps, (unsigned)len + 1, -EINVAL, "missing %s", n < 2 ? "the key id and the key" : "the key");
	if (n > 4)
		return fail(ps, w[4].col, -EINVAL, "unexpected text after the host id");
	memset(e, 0, sizeof(*e));
	e->line = ps->line;
	if (hex_exact(&w[1], e->key_id, sizeof(e->key_id)))
		return fail(ps, w[1].col, -EINVAL, "the key id is not %zu hex digits", 2 * sizeof(e->key_id));
	if (base64_exact(&w[2], e->public_key, sizeof(e->public_key)))
		return fail(ps, w[2].col, -EINVAL, "the public key is not base64 of %zu bytes", sizeof(e->public_key));
	batch_key_id(e->public_key, id);
	if (memcmp(id, e->key_id, sizeof(id))) {
		char hex[2 * BATCH_KEY_ID_LEN + 1];

		sodium_bin2hex(hex, sizeof(hex), id, sizeof(id));
		return fail(ps, w[1].col, -EINVAL, "the key id does not belong to this key (its id is %s)", hex);
	}
	if (n == 4) {
		if (hex_exact(&w[3], e->host_id, sizeof(e->host_id)))
			return fail(ps, w[3].col, -EINVAL, "the host id is not %zu hex digits (as in /etc/machine-id)",
				    2 * sizeof(e->host_id));
		e->bound = true;
	}
	return 0;
}

/* Bytes that have no business in a keys file: a binary or a damaged file. */
static int check_line_bytes(const struct parser *ps, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(ps, (unsigned)i + 1, -EINVAL, "control character 0x%02x", c);
	}
	return 0;
}

static bool blank_or_comment(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == len || s[i] == '#';
}

/* Two entries with one key id: refuse, naming both lines. The array is sorted. */
static int check_duplicates(struct parser *ps, const struct key_entry *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (memcmp(v[i - 1].key_id, v[i].key_id, BATCH_KEY_ID_LEN))
			continue;
		ps->line = v[i - 1].line > v[i].line ? v[i - 1].line : v[i].line;
		return fail(ps, 1, -EINVAL, "key enrolled twice (also on line %u)",
			    v[i - 1].line < v[i].line ? v[i - 1].line : v[i].line);
	}
	return 0;
}

static int grow(struct key_entry **v, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	struct key_entry *nv;

	if (need <= *cap)
		return 0;
	if (ncap > KEYS_MAX)
		ncap = KEYS_MAX;
	nv = realloc(*v, ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static int parse_lines(struct parser *ps, const char *text, size_t len, struct key_entry **v, size_t *n)
{
	size_t off = 0, cap = 0;

	while (off < len) {
		const char *s = text + off;
		const char *nl = memchr(s, '\n', len - off);
		size_t l = nl ? (size_t)(nl - s) : len - off;
		int rc;

		off += l + (nl != NULL);
		ps->line++;
		if (l && s[l - 1] == '\r')
			l--; /* a file edited on Windows */
		if (l > KEYS_LINE_MAX)
			return fail(ps, KEYS_LINE_MAX + 1, -E2BIG, "line longer than %u bytes", KEYS_LINE_MAX);
		rc = check_line_bytes(ps, s, l);
		if (rc)
			return rc;
		if (blank_or_comment(s, l))
			continue;
		if (*n == KEYS_MAX)
			return fail(ps, 1, -E2BIG, "more than %u keys", KEYS_MAX);
		if (grow(v, &cap, *n + 1))
			return fail(ps, 1, -ENOMEM, "out of memory");
		rc = parse_key_line(ps, s, l, &(*v)[*n]);
		if (rc)
			return rc;
		(*n)++;
	}
	return 0;
}

int keys_parse(struct keyring *out, const char *source, const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { .source = source ? source : "<keys>", .err = err, .errlen = errlen };
	struct key_entry *v = NULL;
	size_t n = 0;
	int rc;

	if (err && errlen)
		err[0] = 0;
	rc = parse_lines(&ps, text, len, &v, &n);
	if (!rc && n > 1) {
		qsort(v, n, sizeof(*v), key_cmp);
		rc = check_duplicates(&ps, v, n);
	}
	if (rc) {
		free(v);
		return rc;
	}
	out->v = v;
	out->n = n;
	return 0;
}

/* After the read: the file's owner decides who can enrol a key. */
static int check_keys_file(const struct parser *ps, ssize_t n, const struct stat *st)
{
	if (n == -EINVAL)
		return fail(ps, 0, -EINVAL, "not a regular file");
	if (n == -EFBIG || n >= 0) { /* st is the file's: its mode counts first */
		if (st->st_mode & (S_IWGRP | S_IWOTH))
			return fail(ps, 0, -EPERM, "group or others can write it, and so enrol keys: chmod go-w it");
		if (n == -EFBIG)
			return fail(ps, 0, -E2BIG, "larger than %u bytes", READ_MAX_INGEST_KEYS);
		return 0;
	}
	if (n == -ENOMEM)
		return fail(ps, 0, -ENOMEM, "out of memory");
	return fail(ps, 0, (int)n, "cannot open: %s (give the enrolment list with --keys FILE)", strerror((int)-n));
}

int keys_load_file(struct keyring *out, const char *path, char *err, size_t errlen)
{
	struct parser ps = { .source = path, .err = err, .errlen = errlen };
	struct stat st;
	char *text;
	ssize_t n = read_file_alloc(AT_FDCWD, path, 0, READ_MAX_INGEST_KEYS, &text, &st);
	int rc = check_keys_file(&ps, n, &st);

	if (!rc)
		rc = keys_parse(out, path, text, (size_t)n, err, errlen);
	free(text);
	return rc;
}

const struct key_entry *keys_find(const struct keyring *kr, const uint8_t key_id[BATCH_KEY_ID_LEN])
{
	struct key_entry k = { .line = 0 };

	if (!kr || kr->n == 0)
		return NULL;
	memcpy(k.key_id, key_id, sizeof(k.key_id));
	return bsearch(&k, kr->v, kr->n, sizeof(k), key_cmp);
}

void keys_free(struct keyring *kr)
{
	if (!kr)
		return;
	free(kr->v);
	kr->v = NULL;
	kr->n = 0;
}
