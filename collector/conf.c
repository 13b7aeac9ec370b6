/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.conf for the collector (conf.h), read as root before the sandbox.
 * The line syntax, the checks of the collector's seven keys and every
 * message are those of the general parser (common/config.c), which the
 * collector does not link; a line that sets another component's key is
 * skipped once it has the form "key = ...", since that component checks it.
 */
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

#define WHY_MAX 240 /* what is wrong with one value, and what is expected */
#define MS PARSE_NS_PER_MS
#define SEC PARSE_NS_PER_S
#define MIB (1024ULL * 1024)
#define GIB (1024 * MIB)

_Static_assert(PATH_MAX == 4096, "the messages say 4095 bytes");

enum key_type { PATH, USER, UINT, BYTES, DURATION };

struct conf_key {
	const char *name;
	enum key_type type;
	size_t offset, size;  /* of the field in struct collector_conf */
	uint64_t min, max;    /* integer, size (bytes, a power of two), duration (ns) */
	bool empty_ok;        /* path: empty means none */
	const char *expected; /* the parenthesis of a message, as common/config.c words it */
};

#define FIELD(f) offsetof(struct collector_conf, f), sizeof(((struct collector_conf *)0)->f)
#define USER_EXPECTED "a user name (letters, digits, '.', '_', '-'; at most 32 bytes) or uid, not root"

static const struct conf_key keys[] = {
	{ "runtime_dir", PATH, FIELD(runtime_dir), 0, 0, false, "an absolute path of at most 4095 bytes" },
	{ "collector_user", USER, FIELD(collector_user), 0, 0, false, USER_EXPECTED },
	{ "processor_user", USER, FIELD(processor_user), 0, 0, false, USER_EXPECTED },
	{ "rules", PATH, FIELD(rules), 0, 0, true, "an absolute path of at most 4095 bytes, or empty for none" },
	{ "sample_interval", DURATION, FIELD(sample_interval_ns), 100 * MS, 60 * SEC, false,
	  "a duration from 100ms to 60s: a number with ms, s, m or h; no unit: seconds" },
	{ "ring_order", UINT, FIELD(ring_order), 16, 30, false, "an integer from 16 to 30" },
	{ "kernel_buffer", BYTES, FIELD(kernel_buffer), MIB, GIB, false,
	  "a size from 1MiB to 1GiB, a power of two: an integer and B, K/KiB, M/MiB, G/GiB or T/TiB, all binary" },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

void conf_defaults(struct collector_conf *c)
{
	*c = (struct collector_conf){ .runtime_dir = "/run/tracer", .collector_user = "65533",
				      .processor_user = "tracer", .sample_interval_ns = SEC, .ring_order = 22,
				      .kernel_buffer = 16 * MIB };
}

/* The collector's key named by s[0..len), or NULL: another component's, or none at all. */
static const struct conf_key *find_key(const char *s, size_t len)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len && !memcmp(keys[i].name, s, len))
			return &keys[i];
	return NULL;
}

__attribute__((format(printf, 4, 5))) static int report(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Text from the file or a command line, for a message: printable ASCII, at most 40 bytes, "..." after. */
static const char *shown(const char *s, size_t len, char buf[48])
{
	size_t n = len < 40 ? len : 40, i;

	for (i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + i, len > 40 ? "..." : "");
	return buf;
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

/* What is wrong with the bytes of a value or line, or 0 if it is UTF-8 text: the offset in *at. */
static int check_text(const char *s, size_t len, size_t *at, char *w, size_t wlen)
{
	size_t bad = utf8_invalid_at((const unsigned char *)s, len);

	for (*at = 0; *at < bad; (*at)++) {
		unsigned char c = (unsigned char)s[*at];

		if (c == '\r')
			return report(w, wlen, -EINVAL, "a carriage return inside a line (text: a carriage return only "
							"before a line's newline)");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return report(w, wlen, -EINVAL, "control character 0x%02x (text, one key = value per line)", c);
	}
	if (bad == len)
		return 0;
	return report(w, wlen, -EINVAL, "byte 0x%02x is not UTF-8 (UTF-8 text)", (unsigned char)s[bad]);
}

/* ------------------------------------------------------------------ */
/* Values                                                             */
/* ------------------------------------------------------------------ */

/* Blanks at s[*i...], within n bytes (SIZE_MAX: up to the NUL of a value). */
static void skip_blanks(const char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
}

static int not_valid(const struct conf_key *k, const char *v, const char *what, char *w, size_t wlen)
{
	char b[48];

	return report(w, wlen, -EINVAL, "'%s' %s (%s)", shown(v, strlen(v), b), what, k->expected);
}

/* The number kinds, through common/parse.h (as the general parser); the messages are its. */
static int parse_uint(const struct conf_key *k, const char *v, uint64_t *out, char *w, size_t wlen)
{
	enum parse_error rc = parse_u64(v, UINT64_MAX, out);

	if (rc == PARSE_E_SYNTAX)
		return not_valid(k, v, "is not a whole number", w, wlen);
	if (rc || *out < k->min || *out > k->max)
		return not_valid(k, v, "is out of range", w, wlen);
	return 0;
}

static int parse_bytes(const struct conf_key *k, const char *v, uint64_t *out, char *w, size_t wlen)
{
	enum parse_error rc = parse_size(v, out);
	const char *unit = v + parse_size_unit_at(v);
	char b[48], ub[48];

	if (rc == PARSE_E_SYNTAX)
		return not_valid(k, v, "is not a size", w, wlen);
	if (rc == PARSE_E_UNIT)
		return report(w, wlen, -EINVAL, "'%s' has an unknown unit '%s' (%s)", shown(v, strlen(v), b),
			      shown(unit, strlen(unit), ub), k->expected);
	if (rc || *out < k->min || *out > k->max)
		return not_valid(k, v, "is out of range", w, wlen);
	if (*out & (*out - 1)) /* kernel_buffer, the one size here, is a power of two */
		return not_valid(k, v, "is not a power of two", w, wlen);
	return 0;
}

static int parse_duration_value(const struct conf_key *k, const char *v, uint64_t *out, char *w, size_t wlen)
{
	switch (parse_duration(v, PARSE_UNITS, out)) {
	case PARSE_OK: break;
	case PARSE_E_SYNTAX: return not_valid(k, v, "is not a duration", w, wlen);
	case PARSE_E_FRACTION: return not_valid(k, v, "has more than 9 digits after the point", w, wlen);
	case PARSE_E_POINT: return not_valid(k, v, "has no digit after the point", w, wlen);
	case PARSE_E_UNIT: return not_valid(k, v, "has an unknown unit", w, wlen);
	case PARSE_E_SUB_NS: return not_valid(k, v, "is finer than a nanosecond", w, wlen);
	case PARSE_E_RANGE: return not_valid(k, v, "is out of range", w, wlen);
	}
	if (*out < k->min || *out > k->max)
		return not_valid(k, v, "is out of range", w, wlen);
	return 0;
}

/* A path, or a user name as useradd takes it (or a uid) that is not root: the daemons run as it to give root up. */
static int check_string(const struct conf_key *k, const char *v, char *w, size_t wlen)
{
	size_t len = strlen(v), n, digits;
	uint64_t uid;

	if (len >= k->size)
		return report(w, wlen, -EINVAL, "value of %zu bytes is too long (%s)", len, k->expected);
	if (len == 0)
		return k->empty_ok ? 0 : report(w, wlen, -EINVAL, "empty value (%s)", k->expected);
	if (k->type == PATH)
		return v[0] == '/' ? 0 : not_valid(k, v, "is not an absolute path", w, wlen);
	n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	digits = strspn(v, "0123456789");
	if (v[n] || v[0] == '-')
		return not_valid(k, v, "is not a user name or uid", w, wlen);
	if (!strcmp(v, "root") || (digits == n && strspn(v, "0") == n))
		return not_valid(k, v, "is root: the daemons run as this user to give root up", w, wlen);
	if (digits == n && (n > 10 || parse_u64(v, 0xfffffffeULL, &uid)))
		return not_valid(k, v, "is not a valid uid", w, wlen);
	return 0;
}

/* Set key k from v (decoded, UTF-8 without control characters). The field is written only if v is valid. */
static int set_value(const struct conf_key *k, struct collector_conf *c, const char *v, char *w, size_t wlen)
{
	char *field = (char *)c + k->offset;
	uint64_t u64 = 0;
	uint32_t u32;
	int rc;

	if (k->type == PATH || k->type == USER) {
		rc = check_string(k, v, w, wlen);
		if (!rc)
			strcpy(field, v); /* fits: checked above */
		return rc;
	}
	rc = k->type == UINT ? parse_uint(k, v, &u64, w, wlen)
	     : k->type == BYTES ? parse_bytes(k, v, &u64, w, wlen) : parse_duration_value(k, v, &u64, w, wlen);
	u32 = (uint32_t)u64; /* an integer's max is within uint32_t */
	if (!rc)
		memcpy(field, k->type == UINT ? (void *)&u32 : (void *)&u64, k->size);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Lines                                                              */
/* ------------------------------------------------------------------ */

struct parser {
	const char *name;
	char *err;
	size_t errlen;
	unsigned line;
	unsigned lines[NKEYS];    /* the line each key was set on, 0: not yet */
	char value[PATH_MAX + 1]; /* a decoded value: the longest path and one byte more, to say it is too long */
};

__attribute__((format(printf, 3, 4))) static int fail(struct parser *ps, size_t col, const char *fmt, ...)
{
	char msg[WHY_MAX + 120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return report(ps->err, ps->errlen, -EINVAL, "%s:%u:%zu: %s", ps->name, ps->line, col + 1, msg);
}

/* The value after the '=' (s[i...]): quoted or bare, up to a comment; into ps->value, NUL-terminated. */
static int parse_value(struct parser *ps, const struct conf_key *k, const char *s, size_t n, size_t i)
{
	size_t vlen = 0, start = i;

	if (i < n && s[i] == '"') {
		for (i++; i < n && s[i] != '"'; i++, vlen++) {
			if (s[i] == '\\' && (i + 1 >= n || (s[i + 1] != '"' && s[i + 1] != '\\')))
				return fail(ps, i, "key '%s': only \\\" and \\\\ may follow a backslash in quotes", k->name);
			i += s[i] == '\\';
			if (vlen < sizeof(ps->value) - 1)
				ps->value[vlen] = s[i];
		}
		if (i++ >= n)
			return fail(ps, start, "key '%s': quote not closed on this line (a value ends with its line)", k->name);
		skip_blanks(s, n, &i);
		if (i < n && s[i] != '#')
			return fail(ps, i, "key '%s': text after the closing quote (a comment starts with #)", k->name);
	} else {
		size_t end = start;

		for (; end < n && s[end] != '#'; end++)
			if (s[end] == '"')
				return fail(ps, end, "key '%s': a quote inside a bare value (quote the whole value: "
						     "\"a \\\"b\\\"\")", k->name);
		while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		vlen = end - start;
		memcpy(ps->value, s + start, vlen < sizeof(ps->value) ? vlen : sizeof(ps->value) - 1);
	}
	if (vlen >= sizeof(ps->value))
		return fail(ps, start, "key '%s': value of %zu bytes is too long (at most %zu bytes)", k->name, vlen,
			    (k->type == PATH || k->type == USER ? k->size : sizeof(ps->value)) - 1);
	ps->value[vlen] = 0;
	return 0;
}

static int parse_line(struct parser *ps, struct collector_conf *c, const char *s, size_t n)
{
	const struct conf_key *k;
	size_t i = 0, key_at, key_len;
	char w[WHY_MAX], b[48];

	if (check_text(s, n, &i, w, sizeof(w)))
		return fail(ps, i, "%s", w);
	i = 0;
	skip_blanks(s, n, &i);
	if (i == n || s[i] == '#')
		return 0;
	key_at = i;
	while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '=' && s[i] != '#')
		i++;
	key_len = i - key_at;
	skip_blanks(s, n, &i);
	if (i == n || s[i] != '=') {
		const char *hash = memchr(s + key_at, '#', n - key_at);
		size_t end = hash ? (size_t)(hash - s) : n;

		while (end > key_at && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		return fail(ps, key_at, "'%s' is not a setting: no '=' (key = value)", shown(s + key_at, end - key_at, b));
	}
	if (key_len == 0)
		return fail(ps, key_at, "no key before '=' (key = value)");
	k = find_key(s + key_at, key_len);
	if (!k)
		return 0; /* another component's key (or none's): the programs that read it check it */
	if (ps->lines[k - keys])
		return fail(ps, key_at, "key '%s': set twice, on line %u and on line %u (each key at most once)", k->name,
			    ps->lines[k - keys], ps->line);
	i++;
	skip_blanks(s, n, &i);
	if (parse_value(ps, k, s, n, i))
		return -EINVAL;
	if (set_value(k, c, ps->value, w, sizeof(w)))
		return fail(ps, i, "key '%s': %s", k->name, w);
	ps->lines[k - keys] = ps->line;
	return 0;
}

int conf_parse(struct collector_conf *c, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { .name = name, .err = err, .errlen = errlen };
	struct collector_conf next;
	const char *p = text, *end = text + len;
	int rc = 0;

	if (len > CONF_FILE_MAX)
		return report(err, errlen, -EINVAL, "%s: %zu bytes, larger than %u KiB (a config file is a few KiB)",
			      name, len, CONF_FILE_MAX / 1024);
	conf_defaults(&next);
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3; /* a byte order mark, as some editors write */
	while (p < end && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		ps.line++;
		rc = parse_line(&ps, &next, p, n && p[n - 1] == '\r' ? n - 1 : n); /* CRLF */
		p = nl ? nl + 1 : end;
	}
	if (!rc)
		*c = next;
	return rc;
}

int conf_set_arg(struct collector_conf *c, const char *key_value, char *err, size_t errlen)
{
	const char *eq = strchr(key_value, '=');
	const struct conf_key *k = eq ? find_key(key_value, (size_t)(eq - key_value)) : NULL;
	char w[WHY_MAX], b[48];
	size_t at;

	if (!eq)
		return report(err, errlen, -EINVAL, "'%s' has no '=' (key=value)", shown(key_value, strlen(key_value), b));
	if (k && (check_text(eq + 1, strlen(eq + 1), &at, w, sizeof(w)) || set_value(k, c, eq + 1, w, sizeof(w))))
		return report(err, errlen, -EINVAL, "key '%s': %s", k->name, w);
	return 0; /* set, or another component's key */
}

/* ------------------------------------------------------------------ */
/* The file                                                           */
/* ------------------------------------------------------------------ */

/* Who may write the file (and its directory) decides what root does: refuse others. */
static int check_owner(const char *path, const char *what, const struct stat *st, char *err, size_t errlen)
{
	unsigned mode = (unsigned)st->st_mode & 07777;

	if (st->st_mode & S_IWOTH)
		return report(err, errlen, -EPERM, "%s: %s is writable by anyone (mode %04o): anyone could "
						  "reconfigure tracer (chmod o-w %s)", path, what, mode, what);
	if (st->st_uid != 0)
		return report(err, errlen, -EPERM, "%s: %s is owned by uid %u, not root: only root may be able to "
						  "change it (chown root %s)", path, what, (unsigned)st->st_uid, what);
	if (st->st_mode & S_IWGRP)
		return report(err, errlen, -EPERM, "%s: %s is writable by its group (mode %04o): only root may be "
						  "able to change it (chmod g-w %s)", path, what, mode, what);
	return 0;
}

/* The file (open as fd) and its directory: what they are and who may write them. */
static int check_file(int fd, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash || slash == path ? 1 : (size_t)(slash - path);
	struct stat st, dst;
	char dir[PATH_MAX];
	int rc;

	if (fstat(fd, &st))
		return report(err, errlen, -errno, "%s: cannot stat: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return report(err, errlen, -EISDIR, "%s: is a directory (give the config file's path, e.g. "
						   "/etc/tracer/tracer.conf)", path);
	if (!S_ISREG(st.st_mode))
		return report(err, errlen, -EINVAL, "%s: not a regular file (the config is a plain text file)", path);
	if (st.st_size > (off_t)CONF_FILE_MAX)
		return report(err, errlen, -EFBIG, "%s: %lld bytes, larger than %u KiB (a config file is a few KiB: "
						  "is this the right file?)", path, (long long)st.st_size, CONF_FILE_MAX / 1024);
	rc = check_owner(path, path, &st, err, errlen);
	if (rc)
		return rc;
	if (n >= sizeof(dir))
		return report(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	memcpy(dir, slash ? path : ".", n); /* "/tracer.conf" lives in "/" */
	dir[n] = 0;
	if (stat(dir, &dst))
		return report(err, errlen, -errno, "%s: cannot stat its directory %s: %s", path, dir, strerror(errno));
	return check_owner(path, dir, &dst, err, errlen);
}

int conf_load(struct collector_conf *c, const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO put in its place must not hang the collector; check_file refuses it. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0 && errno == ENOENT)
		return report(err, errlen, -ENOENT, "%s: no such file (create it: docs/tracer.conf.example has every "
						    "key with its default)", path);
	if (fd < 0 && errno == EACCES)
		return report(err, errlen, -EACCES, "%s: permission denied (the file must be readable by whoever reads "
						    "it: chmod a+r %s, or run as root)", path, path);
	if (fd < 0)
		return report(err, errlen, -errno, "%s: cannot open: %s", path, strerror(errno));
	rc = check_file(fd, path, err, errlen);
	if (!rc && !(buf = malloc(CONF_FILE_MAX + 1)))
		rc = report(err, errlen, -ENOMEM, "%s: out of memory", path);
	/* One byte more than allowed: a file that grew since fstat is caught too. */
	while (!rc && len <= CONF_FILE_MAX &&
	       ((n = read(fd, buf + len, CONF_FILE_MAX + 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	if (!rc && n < 0)
		rc = report(err, errlen, -errno, "%s: cannot read: %s", path, strerror(errno));
	else if (!rc && len > CONF_FILE_MAX)
		rc = report(err, errlen, -EFBIG, "%s: larger than %u KiB (a config file is a few KiB: is this the "
						 "right file?)", path, CONF_FILE_MAX / 1024);
	else if (!rc)
		rc = conf_parse(c, path, buf, len, err, errlen);
	free(buf);
	close(fd);
	return rc;
}

int conf_from_options(struct collector_conf *c, const char *path, const char *const *sets, unsigned nsets)
{
	char err[PATH_MAX + 256];
	int rc;

	conf_defaults(c);
	err[0] = 0;
	if (path && (rc = conf_load(c, path, err, sizeof(err))) != 0) {
		fprintf(stderr, "<3>%s\n", err[0] ? err : strerror(-rc));
		return -1;
	}
	for (unsigned i = 0; i < nsets; i++)
		if (conf_set_arg(c, sets[i], err, sizeof(err))) {
			fprintf(stderr, "<3>--set %s: %s\n", sets[i], err);
			return -1;
		}
	return 0;
}
