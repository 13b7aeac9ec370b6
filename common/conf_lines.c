/* SPDX-License-Identifier: Apache-2.0 */
/* tracer.conf's line layer (common/conf_lines.h). */
#include "conf_lines.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"
#include "readfile.h"

int conf_report(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

const char *conf_shown(const char *s, size_t len, char buf[48])
{
	size_t n = len < 40 ? len : 40, i;

	for (i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + i, len > 40 ? "..." : "");
	return buf;
}

int conf_number(enum conf_number_kind kind, const char *v, uint64_t min, uint64_t max, const char *ex,
		uint64_t *out, char *w, size_t wlen)
{
	enum parse_error rc = kind == CONF_UINT ? parse_u64(v, UINT64_MAX, out)
			      : kind == CONF_DURATION ? parse_duration(v, PARSE_UNITS, out) : parse_size(v, out);
	const char *what = NULL, *unit = v + parse_size_unit_at(v);
	char b[48], ub[48];

	switch (rc) {
	case PARSE_OK: break;
	case PARSE_E_SYNTAX:
		what = kind == CONF_UINT ? "is not a whole number" : kind == CONF_DURATION ? "is not a duration"
											     : "is not a size";
		break;
	case PARSE_E_UNIT:
		if (kind != CONF_DURATION) /* a size's unit is shown: the units are many and alike */
			return conf_report(w, wlen, -EINVAL, "'%s' has an unknown unit '%s' (%s)",
					   conf_shown(v, strlen(v), b), conf_shown(unit, strlen(unit), ub), ex);
		what = "has an unknown unit";
		break;
	case PARSE_E_FRACTION: what = "has more than 9 digits after the point"; break;
	case PARSE_E_POINT: what = "has no digit after the point"; break;
	case PARSE_E_SUB_NS: what = "is finer than a nanosecond"; break;
	case PARSE_E_RANGE: what = "is out of range"; break;
	}
	if (!what && (*out < min || *out > max))
		what = "is out of range";
	else if (!what && kind == CONF_BYTES_POW2 && (*out & (*out - 1)))
		what = "is not a power of two";
	return what ? conf_report(w, wlen, -EINVAL, "'%s' %s (%s)", conf_shown(v, strlen(v), b), what, ex) : 0;
}

void conf_skip_blanks(const char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
}

/* Offset of the first byte that is not part of valid UTF-8 (no overlongs, surrogates or > U+10FFFF), or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i], lo = 0x80, hi = 0xbf;
		/* n: the continuation bytes the lead byte c announces; 4: c cannot lead */
		size_t n = c < 0x80 ? 0 : c < 0xc2 ? 4 : c <= 0xdf ? 1 : c <= 0xef ? 2 : c <= 0xf4 ? 3 : 4;

		if (n == 4)
			return i;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
		else if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* > U+10FFFF */
		if (n && (i + n >= len || s[i + 1] < lo || s[i + 1] > hi)) /* cut short, or a bad first continuation */
			return i;
		for (size_t j = 2; j <= n; j++)
			if (s[i + j] < 0x80 || s[i + j] > 0xbf)
				return i;
		i += n + 1;
	}
	return len;
}

int conf_check_text(const char *s, size_t len, size_t *at, char *w, size_t wlen)
{
	size_t bad = utf8_invalid_at((const unsigned char *)s, len);

	for (*at = 0; *at < bad; (*at)++) {
		unsigned char c = (unsigned char)s[*at];

		if (c == '\r')
			return conf_report(w, wlen, -EINVAL, "a carriage return inside a line (text: a carriage return "
							     "only before a line's newline)");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return conf_report(w, wlen, -EINVAL, "control character 0x%02x (text, one key = value per line)",
					   c);
	}
	if (bad == len)
		return 0;
	return conf_report(w, wlen, -EINVAL, "byte 0x%02x is not UTF-8 (UTF-8 text)", (unsigned char)s[bad]);
}

/* ------------------------------------------------------------------ */
/* Lines                                                              */
/* ------------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int fail(struct conf_lines *cl, size_t col, const char *fmt, ...)
{
	char msg[CONF_WHY_MAX + 120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return conf_report(cl->err, cl->errlen, -EINVAL, "%s:%u:%zu: %s", cl->name, cl->line, col + 1, msg);
}

/* The value after the '=' (s[i...]): quoted or bare, up to a comment; into cl->value, NUL-terminated. */
static int parse_value(struct conf_lines *cl, const char *key, size_t max, const char *s, size_t n, size_t i)
{
	size_t vlen = 0, start = i;

	if (i < n && s[i] == '"') {
		for (i++; i < n && s[i] != '"'; i++, vlen++) {
			if (s[i] == '\\' && (i + 1 >= n || (s[i + 1] != '"' && s[i + 1] != '\\')))
				return fail(cl, i, "key '%s': only \\\" and \\\\ may follow a backslash in quotes", key);
			i += s[i] == '\\';
			if (vlen < sizeof(cl->value) - 1)
				cl->value[vlen] = s[i];
		}
		if (i++ >= n)
			return fail(cl, start, "key '%s': quote not closed on this line (a value ends with its line)", key);
		conf_skip_blanks(s, n, &i);
		if (i < n && s[i] != '#')
			return fail(cl, i, "key '%s': text after the closing quote (a comment starts with #)", key);
	} else {
		size_t end = start;

		for (; end < n && s[end] != '#'; end++)
			if (s[end] == '"')
				return fail(cl, end, "key '%s': a quote inside a bare value (quote the whole value: "
						     "\"a \\\"b\\\"\")", key);
		while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		vlen = end - start;
		memcpy(cl->value, s + start, vlen < sizeof(cl->value) ? vlen : sizeof(cl->value) - 1);
	}
	if (vlen >= sizeof(cl->value))
		return fail(cl, start, "key '%s': value of %zu bytes is too long (at most %zu bytes)", key, vlen, max);
	cl->value[vlen] = 0;
	return 0;
}

static int parse_line(struct conf_lines *cl, const char *s, size_t n)
{
	size_t i = 0, key_at, key_len, max = 0;
	const char *key = NULL;
	char w[CONF_WHY_MAX], b[48];
	int k;

	if (conf_check_text(s, n, &i, w, sizeof(w)))
		return fail(cl, i, "%s", w);
	i = 0;
	conf_skip_blanks(s, n, &i);
	if (i == n || s[i] == '#')
		return 0;
	key_at = i;
	while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '=' && s[i] != '#')
		i++;
	key_len = i - key_at;
	conf_skip_blanks(s, n, &i);
	if (i == n || s[i] != '=') {
		const char *hash = memchr(s + key_at, '#', n - key_at);
		size_t end = hash ? (size_t)(hash - s) : n;

		while (end > key_at && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		return fail(cl, key_at, "'%s' is not a setting: no '=' (key = value)",
			    conf_shown(s + key_at, end - key_at, b));
	}
	if (key_len == 0)
		return fail(cl, key_at, "no key before '=' (key = value)");
	k = cl->find(cl->ctx, s + key_at, key_len, &key, &max, w, sizeof(w));
	if (k == -ENOENT)
		return 0; /* another component's key: the programs that read it check it */
	if (k < 0)
		return fail(cl, key_at, "%s", w);
	if (cl->lines[k])
		return fail(cl, key_at, "key '%s': set twice, on line %u and on line %u (each key at most once)", key,
			    cl->lines[k], cl->line);
	i++;
	conf_skip_blanks(s, n, &i);
	if (parse_value(cl, key, max, s, n, i))
		return -EINVAL;
	if (cl->set(cl->ctx, k, cl->value, w, sizeof(w)))
		return fail(cl, i, "key '%s': %s", key, w);
	cl->lines[k] = cl->line;
	return 0;
}

int conf_lines_parse(struct conf_lines *cl, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int rc = 0;

	if (len > READ_MAX_CONFIG)
		return conf_report(cl->err, cl->errlen, -EINVAL, "%s: %zu bytes, larger than %u KiB (a config file is "
				   "a few KiB)", cl->name, len, READ_MAX_CONFIG / 1024);
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3; /* a byte order mark, as some editors write */
	while (p < end && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		cl->line++;
		rc = parse_line(cl, p, n && p[n - 1] == '\r' ? n - 1 : n); /* CRLF */
		p = nl ? nl + 1 : end;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* The file                                                           */
/* ------------------------------------------------------------------ */

/* Who may write the file (and its directory) decides what root does: refuse others. */
static int check_owner(const char *path, const char *what, const struct stat *st, bool root_owned, char *err,
		       size_t errlen)
{
	unsigned mode = (unsigned)st->st_mode & 07777;

	if (st->st_mode & S_IWOTH)
		return conf_report(err, errlen, -EPERM, "%s: %s is writable by anyone (mode %04o): anyone could "
							"reconfigure tracer (chmod o-w %s)", path, what, mode, what);
	if (root_owned && st->st_uid != 0)
		return conf_report(err, errlen, -EPERM, "%s: %s is owned by uid %u, not root: only root may be able "
							"to change it (chown root %s)", path, what, (unsigned)st->st_uid, what);
	if (root_owned && (st->st_mode & S_IWGRP))
		return conf_report(err, errlen, -EPERM, "%s: %s is writable by its group (mode %04o): only root may "
							"be able to change it (chmod g-w %s)", path, what, mode, what);
	return 0;
}

/* What read_file_bounded() refused (rc < 0), said for tracer.conf; st is the file's, zero if it was not opened. */
static int read_error(const char *path, int rc, const struct stat *st, char *err, size_t errlen)
{
	if (rc == -ENOENT && !st->st_mode)
		return conf_report(err, errlen, rc, "%s: no such file (create it: docs/tracer.conf.example has every "
						    "key with its default)", path);
	if (rc == -EACCES && !st->st_mode)
		return conf_report(err, errlen, rc, "%s: permission denied (the file must be readable by whoever reads "
						    "it: chmod a+r %s, or run as root)", path, path);
	if (!st->st_mode)
		return conf_report(err, errlen, rc, "%s: cannot open: %s", path, strerror(-rc));
	if (rc == -EINVAL && S_ISDIR(st->st_mode))
		return conf_report(err, errlen, -EISDIR, "%s: is a directory (give the config file's path, e.g. "
							 "/etc/tracer/tracer.conf)", path);
	if (rc == -EINVAL && !S_ISREG(st->st_mode))
		return conf_report(err, errlen, rc, "%s: not a regular file (the config is a plain text file)", path);
	if (rc == -EFBIG && st->st_size > (off_t)READ_MAX_CONFIG)
		return conf_report(err, errlen, rc, "%s: %lld bytes, larger than %u KiB (a config file is a few KiB: "
						    "is this the right file?)", path, (long long)st->st_size,
				   READ_MAX_CONFIG / 1024);
	if (rc == -EFBIG) /* it grew since its fstat */
		return conf_report(err, errlen, rc, "%s: larger than %u KiB (a config file is a few KiB: is this the "
						    "right file?)", path, READ_MAX_CONFIG / 1024);
	return conf_report(err, errlen, rc, "%s: cannot read: %s", path, strerror(-rc));
}

int conf_lines_load(const char *path, bool root_owned,
		    int (*parse)(void *ctx, const char *name, const char *text, size_t len, char *err, size_t errlen),
		    void *ctx, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash || slash == path ? 1 : (size_t)(slash - path);
	struct stat st = { 0 }, dst;
	char dir[PATH_MAX];
	char *text = malloc(READ_MAX_CONFIG + 1);
	ssize_t got;
	int rc;

	if (!text)
		return conf_report(err, errlen, -ENOMEM, "%s: out of memory", path);
	got = read_file_bounded(AT_FDCWD, path, 0, text, READ_MAX_CONFIG, &st);
	rc = got < 0 ? read_error(path, (int)got, &st, err, errlen) : check_owner(path, path, &st, root_owned, err,
										   errlen);
	if (!rc && root_owned && n >= sizeof(dir))
		rc = conf_report(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	if (!rc && root_owned) {
		memcpy(dir, slash ? path : ".", n); /* "/tracer.conf" lives in "/" */
		dir[n] = 0;
		if (stat(dir, &dst))
			rc = conf_report(err, errlen, -errno, "%s: cannot stat its directory %s: %s", path, dir,
					 strerror(errno));
		else
			rc = check_owner(path, dir, &dst, true, err, errlen);
	}
	if (!rc)
		rc = parse(ctx, path, text, (size_t)got, err, errlen);
	free(text);
	return rc;
}
