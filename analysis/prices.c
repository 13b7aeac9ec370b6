/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The price table (docs/cost.md): a dated CSV of on-demand (and spot)
 * prices per instance type and region, read strictly. The text is
 * hostile until proven otherwise: bounded in bytes, rows and line length,
 * names limited to a safe alphabet, numbers by our own strict decimal
 * reader (no locale, no exponent, no sign, no inf or nan), and every
 * refusal names its line and says what to write instead.
 */
#include "cost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsort.h"
#include "parse.h"

#define PRICE_HEADER "cloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour"
#define PRICE_FIELDS 7
#define PRICE_LINE_MAX 1024      /* a row is ~60 characters: anything this long is not one */
#define PRICE_NAME_MAX 63
#define PRICE_MAX_VCPUS 100000
#define PRICE_MAX_GIB 1048576.0  /* 1 PiB: keeps GiB x 2^30 well inside 64 bits */
#define PRICE_MAX_USD 100000.0   /* per hour; the dearest instance costs a few hundred */
#define PRICE_DECIMAL_DIGITS 9   /* integer and fraction digits, each */

_Static_assert(sizeof(struct price_row) <= HSORT_MAX_SIZE, "rows are sorted in place by hsort");

struct parser {
	uint32_t line;
	char *err;
	size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!p->err || p->errlen == 0)
		return -EINVAL;
	if (p->line)
		n = snprintf(p->err, p->errlen, "line %u: ", p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A field as a message may show it: at most 40 characters, anything not printable ASCII as '?'. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i = 0;

	for (; s[i] && i + 4 < size && i < 40; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i] && i + 4 <= size) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = 0;
	return buf;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* s[0..n) without the blanks at either end. */
static void trim(const char **s, size_t *n)
{
	while (*n && is_blank(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_blank((*s)[*n - 1]))
		(*n)--;
}

enum dec_error { DEC_OK = 0, DEC_SYNTAX, DEC_RANGE };

/*
 * A decimal number: digits, optionally a point and digits ("16", "0.192",
 * "0.5"); at most 9 digits either side. No sign, exponent, blank, inf or
 * nan; independent of the locale. The value is the integer part plus the
 * fraction's digits over its power of ten: each exact in a double, so
 * "0.192" reads as the double nearest 0.192.
 */
static enum dec_error parse_decimal(const char *s, double max, double *out)
{
	uint64_t ip = 0, fp = 0, scale = 1;
	size_t i = 0, nd;
	double v;

	for (nd = 0; s[i] >= '0' && s[i] <= '9'; i++, nd++) {
		if (nd >= PRICE_DECIMAL_DIGITS)
			return DEC_RANGE;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (nd == 0)
		return DEC_SYNTAX;
	if (s[i] == '.') {
		i++;
		for (nd = 0; s[i] >= '0' && s[i] <= '9'; i++, nd++) {
			if (nd >= PRICE_DECIMAL_DIGITS)
				return DEC_SYNTAX;
			fp = fp * 10 + (uint64_t)(s[i] - '0');
			scale *= 10;
		}
		if (nd == 0)
			return DEC_SYNTAX;
	}
	if (s[i])
		return DEC_SYNTAX;
	v = (double)ip + (double)fp / (double)scale;
	if (v > max)
		return DEC_RANGE;
	*out = v;
	return DEC_OK;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-';
}

static int check_name(struct parser *p, const char *what, const char *s)
{
	size_t n = strlen(s);
	char b[48];

	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return fail(p, "%s '%s' may hold only letters, digits, '.', '_' and '-'", what,
				    shown(s, b, sizeof(b)));
	if (n == 0 || n > PRICE_NAME_MAX)
		return fail(p, "%s must be 1 to %d characters long (it is %zu)", what, PRICE_NAME_MAX, n);
	return 0;
}

static bool leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* YYYY-MM-DD, a day that exists. */
static bool valid_date(const char *s, size_t n)
{
	static const unsigned days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y = 0, m = 0, d = 0;

	if (n != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (size_t i = 0; i < 10; i++) {
		if (i == 4 || i == 7)
			continue;
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (i < 4)
			y = y * 10 + (unsigned)(s[i] - '0');
		else if (i < 7)
			m = m * 10 + (unsigned)(s[i] - '0');
		else
			d = d * 10 + (unsigned)(s[i] - '0');
	}
	if (y < 1970 || m < 1 || m > 12 || d < 1)
		return false;
	return d <= days[m - 1] + (m == 2 && leap(y));
}

/*
 * A comment line: "# source: TEXT" and "# date: YYYY-MM-DD" are taken
 * (once each, above the header); any other comment is ignored.
 */
static int read_comment(struct parser *p, const char *s, size_t n, bool after_header, struct price_table *t)
{
	static const char *const keys[] = { "source", "date" };
	size_t k;

	s++;
	n--;
	trim(&s, &n);
	for (k = 0; k < 2; k++) {
		size_t kl = strlen(keys[k]), i = kl;

		if (n < kl || memcmp(s, keys[k], kl) != 0)
			continue;
		while (i < n && is_blank(s[i]))
			i++;
		if (i < n && s[i] == ':')
			break;
	}
	if (k == 2)
		return 0; /* a comment */
	if (after_header)
		return fail(p, "'# %s:' belongs above the header line; move it up", keys[k]);
	s += strlen(keys[k]);
	n -= strlen(keys[k]);
	trim(&s, &n);
	s++; /* the colon */
	n--;
	trim(&s, &n);
	if (k == 0) {
		if (t->source[0])
			return fail(p, "a second '# source:' line; keep one");
		if (n == 0)
			return fail(p, "'# source:' is empty; say where the prices come from");
		if (n >= sizeof(t->source))
			return fail(p, "'# source:' is %zu characters, more than %zu; shorten it", n, sizeof(t->source) - 1);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return fail(p, "'# source:' holds a control character; write plain text");
		memcpy(t->source, s, n);
		t->source[n] = 0;
		return 0;
	}
	if (t->date[0])
		return fail(p, "a second '# date:' line; keep one");
	if (!valid_date(s, n))
		return fail(p, "'# date:' must be the day the prices are from, as YYYY-MM-DD (e.g. 2024-06-01)");
	memcpy(t->date, s, n);
	t->date[n] = 0;
	return 0;
}

/* Split a row (NUL-terminated, in a buffer of our own) at its commas; the fields trimmed. */
static size_t split(char *s, char *fields[], size_t max)
{
	size_t n = 0;

	for (;;) {
		char *comma = strchr(s, ','), *f = s, *end;

		if (comma)
			*comma = 0;
		while (is_blank(*f))
			f++;
		end = f + strlen(f);
		while (end > f && is_blank(end[-1]))
			*--end = 0;
		if (n < max)
			fields[n] = f;
		n++;
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static char *keep(struct price_table *t, size_t *used, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = t->strings + *used;

	memcpy(d, s, n);
	*used += n;
	return d;
}

static int read_row(struct parser *p, char *line, struct price_table *t, size_t *cap, size_t *used)
{
	static const char *const names[] = { "cloud", "instance_type", "region" };
	char *f[PRICE_FIELDS], b[48];
	struct price_row r = { .line = p->line };
	size_t nf;
	uint64_t vcpus;
	double gib;
	int rc;

	if (strchr(line, '"'))
		return fail(p, "a quote (\"); fields are never quoted in this table (none needs a comma): remove it");
	nf = split(line, f, PRICE_FIELDS);
	if (nf != PRICE_FIELDS)
		return fail(p, "%zu fields where a row has %d: %s", nf, PRICE_FIELDS, PRICE_HEADER);
	for (size_t i = 0; i < 3; i++)
		if ((rc = check_name(p, names[i], f[i])))
			return rc;
	if (parse_u64(f[3], PRICE_MAX_VCPUS, &vcpus) != PARSE_OK || vcpus < 1)
		return fail(p, "vcpus '%s' must be a whole number from 1 to %d", shown(f[3], b, sizeof(b)),
			    PRICE_MAX_VCPUS);
	if (parse_decimal(f[4], PRICE_MAX_GIB, &gib) != DEC_OK || !(gib > 0))
		return fail(p, "memory_gib '%s' must be a number above 0 and at most %.0f, in GiB (e.g. 16 or 0.5)",
			    shown(f[4], b, sizeof(b)), PRICE_MAX_GIB);
	if (parse_decimal(f[5], PRICE_MAX_USD, &r.on_demand_per_hour) != DEC_OK)
		return fail(p, "on_demand_usd_per_hour '%s' must be a number from 0 to %.0f, USD per hour (e.g. 0.192)",
			    shown(f[5], b, sizeof(b)), PRICE_MAX_USD);
	r.spot_per_hour = -1;
	if (f[6][0] && parse_decimal(f[6], PRICE_MAX_USD, &r.spot_per_hour) != DEC_OK)
		return fail(p, "spot_usd_per_hour '%s' must be a number from 0 to %.0f, or empty when there is none",
			    shown(f[6], b, sizeof(b)), PRICE_MAX_USD);
	if (t->n == PRICE_TABLE_MAX_ROWS)
		return fail(p, "more than %d rows; keep the types and regions you run on", PRICE_TABLE_MAX_ROWS);
	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct price_row *rows;

		if (ncap > PRICE_TABLE_MAX_ROWS)
			ncap = PRICE_TABLE_MAX_ROWS;
		rows = realloc(t->rows, ncap * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		*cap = ncap;
	}
	r.vcpus = (uint32_t)vcpus;
	r.memory_bytes = (uint64_t)(gib * 1073741824.0 + 0.5);
	/* Each name is followed by a comma in the text: the names of all rows fit in its length. */
	r.cloud = keep(t, used, f[0]);
	r.instance_type = keep(t, used, f[1]);
	r.region = keep(t, used, f[2]);
	t->rows[t->n++] = r;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct price_row *x = a, *y = b;
	int c = strcmp(x->instance_type, y->instance_type);

	if (c == 0)
		c = strcmp(x->region, y->region);
	if (c == 0)
		c = (x->line > y->line) - (x->line < y->line);
	return c;
}

/* Sorted by type, region and line: the repeat of a type and region on the earliest line, if any. */
static int check_duplicates(struct parser *p, const struct price_table *t)
{
	const struct price_row *first = NULL, *again = NULL;

	for (size_t i = 1; i < t->n; i++) {
		const struct price_row *a = &t->rows[i - 1], *b = &t->rows[i];

		if (strcmp(a->instance_type, b->instance_type) || strcmp(a->region, b->region))
			continue;
		/* b is the second of its group when a starts it */
		if (i >= 2 && !strcmp(t->rows[i - 2].instance_type, b->instance_type) &&
		    !strcmp(t->rows[i - 2].region, b->region))
			continue;
		if (!again || b->line < again->line) {
			first = a;
			again = b;
		}
	}
	if (!again)
		return 0;
	p->line = again->line;
	return fail(p, "%s in %s is already on line %u; keep one row per type and region", again->instance_type,
		    again->region, first->line);
}

static void table_init(struct price_table *t)
{
	memset(t, 0, sizeof(*t));
}

/* The lines of the text, one by one: comments, the header, the rows. */
static int parse_lines(struct parser *p, const char *text, size_t len, struct price_table *t)
{
	char buf[PRICE_LINE_MAX + 1];
	size_t pos = 0, cap = 0, used = 0;
	bool header = false;
	int rc;

	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		pos = 3; /* a UTF-8 byte order mark, as spreadsheets write */
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		pos += n + (nl != NULL);
		p->line++;
		if (n && s[n - 1] == '\r')
			n--;
		if (memchr(s, 0, n))
			return fail(p, "a NUL byte; the table must be text");
		trim(&s, &n);
		if (n == 0)
			continue;
		if (s[0] == '#') {
			if ((rc = read_comment(p, s, n, header, t)))
				return rc;
			continue;
		}
		if (n > PRICE_LINE_MAX)
			return fail(p, "longer than %d characters; a row is one type in one region", PRICE_LINE_MAX);
		memcpy(buf, s, n);
		buf[n] = 0;
		if (header) {
			if ((rc = read_row(p, buf, t, &cap, &used)))
				return rc;
			continue;
		}
		if (!t->source[0])
			return fail(p, "no '# source: ...' line above the header; add one saying where the prices come from");
		if (!t->date[0])
			return fail(p, "no '# date: YYYY-MM-DD' line above the header; add the day the prices are from");
		if (strcmp(buf, PRICE_HEADER))
			return fail(p, "the header must be exactly %s", PRICE_HEADER);
		header = true;
	}
	if (!header) {
		uint32_t lines = p->line;

		p->line = 0;
		return fail(p, "no header line (%s) in its %u lines; a price table starts with '# source:', '# date:' "
			       "and that header", PRICE_HEADER, lines);
	}
	return 0;
}

int price_table_parse(const char *text, size_t len, struct price_table *out, char *err, size_t errlen)
{
	struct parser p = { .err = err, .errlen = errlen };
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!out)
		return -EINVAL;
	table_init(out);
	if (!text && len)
		return fail(&p, "no text");
	if (len > PRICE_TABLE_MAX_BYTES)
		return fail(&p, "the table is %zu bytes, more than the %u MiB a price table may have", len,
			    PRICE_TABLE_MAX_BYTES >> 20);
	out->strings = malloc(len + 1);
	if (!out->strings)
		return -ENOMEM;
	rc = parse_lines(&p, text ? text : "", len, out);
	if (rc == 0) {
		hsort(out->rows, out->n, sizeof(*out->rows), row_cmp);
		rc = check_duplicates(&p, out);
	}
	if (rc) {
		price_table_free(out);
		if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory reading the price table");
	}
	return rc;
}

void price_table_free(struct price_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->strings);
	table_init(t);
}

const struct price_row *price_lookup(const struct price_table *t, const char *instance_type, const char *region)
{
	const struct price_row *best = NULL;
	size_t lo = 0, hi;

	if (!t || !instance_type)
		return NULL;
	/* the first row of the type: rows are sorted by type, then region */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->rows[mid].instance_type, instance_type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n && !strcmp(t->rows[i].instance_type, instance_type); i++) {
		const struct price_row *r = &t->rows[i];

		if (region) {
			if (!strcmp(r->region, region))
				return r;
		} else if (!best || r->on_demand_per_hour < best->on_demand_per_hour) {
			best = r; /* ties: the region first by name */
		}
	}
	return best;
}

bool price_burstable(const char *type)
{
	static const char *const shared_core[] = { "e2-micro", "e2-small", "e2-medium", "f1-micro", "g1-small" };
	size_t i = 2;

	if (!type)
		return false;
	if (type[0] == 't' && type[1] >= '1' && type[1] <= '9') {
		while ((type[i] >= 'a' && type[i] <= 'z') || (type[i] >= '0' && type[i] <= '9'))
			i++;
		if (type[i] == '.')
			return true; /* AWS t1, t2, t3, t3a, t4g (GCP's t2d-standard-4 is not one) */
	}
	if (!strncmp(type, "Standard_B", 10))
		return true; /* Azure B-series */
	for (i = 0; i < sizeof(shared_core) / sizeof(shared_core[0]); i++)
		if (!strcmp(type, shared_core[i]))
			return true;
	return false;
}
