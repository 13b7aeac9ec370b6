/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict JSON reader (json_parse.h): one recursive-descent pass that
 * checks every byte and records where each value lies; strings are decoded
 * only when read, from text this pass has already checked.
 */
#include "json_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct parser {
	struct json_doc *d;
	struct json_node *nodes;
	uint32_t cap;
	const unsigned char *s;
	size_t len, pos;
};

const char *json_parse_error_name(enum json_parse_error e)
{
	switch (e) {
	case JSON_OK: return "no error";
	case JSON_E_END: return "the text ends before the value does";
	case JSON_E_TOKEN: return "unexpected character";
	case JSON_E_NUMBER: return "a number not in JSON's form";
	case JSON_E_CONTROL: return "a control character inside a string";
	case JSON_E_ESCAPE: return "an escape JSON does not have";
	case JSON_E_SURROGATE: return "a \\u surrogate not in a pair";
	case JSON_E_UTF8: return "bytes that are not UTF-8";
	case JSON_E_DUPLICATE: return "two members of one object with the same name";
	case JSON_E_TRAILING: return "text after the value";
	case JSON_E_DEPTH: return "nested too deep";
	case JSON_E_TOO_MANY: return "too many values";
	case JSON_E_TOO_LONG: return "too long";
	}
	return "unknown error";
}

const char *json_type_name(enum json_type t)
{
	switch (t) {
	case JSON_NULL: return "null";
	case JSON_BOOL: return "a boolean";
	case JSON_NUMBER: return "a number";
	case JSON_STRING: return "a string";
	case JSON_ARRAY: return "an array";
	case JSON_OBJECT: return "an object";
	}
	return "unknown";
}

/* ------------------------------------------------------------------ */
/* Decoding strings the parse has checked                             */
/* ------------------------------------------------------------------ */

/* The bytes a checked string's text decodes to, one at a time. */
struct str_iter {
	const char *s;
	uint32_t i, end;
	unsigned char pending[4];
	unsigned npending, ipending;
};

static unsigned hex_value(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

static unsigned hex4(const char *s)
{
	return hex_value(s[0]) << 12 | hex_value(s[1]) << 8 | hex_value(s[2]) << 4 | hex_value(s[3]);
}

static unsigned utf8_encode(uint32_t cp, unsigned char out[4])
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The next decoded byte, or -1 at the end. */
static int iter_next(struct str_iter *it)
{
	uint32_t cp;
	char e;

	if (it->ipending < it->npending)
		return it->pending[it->ipending++];
	if (it->i >= it->end)
		return -1;
	if (it->s[it->i] != '\\')
		return (unsigned char)it->s[it->i++];
	e = it->s[it->i + 1];
	it->i += 2;
	switch (e) {
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case 'u': break;
	default: return (unsigned char)e; /* " \ / */
	}
	cp = hex4(it->s + it->i);
	it->i += 4;
	if (cp >= 0xd800 && cp <= 0xdbff) { /* the parse saw its low half follow */
		cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(it->s + it->i + 2) - 0xdc00);
		it->i += 6;
	}
	it->npending = utf8_encode(cp, it->pending);
	it->ipending = 1;
	return it->pending[0];
}

static struct str_iter iter_of(const struct json_doc *d, uint32_t start, uint32_t len)
{
	return (struct str_iter){ .s = d->text, .i = start, .end = start + len };
}

static int decode(struct str_iter it, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;
	int c;

	while ((c = iter_next(&it)) >= 0) {
		if (n + 1 >= cap)
			return -ENOSPC;
		buf[n++] = (char)c;
	}
	if (cap == 0)
		return -ENOSPC;
	buf[n] = 0;
	if (len)
		*len = n;
	return 0;
}

/* Do two checked strings decode to the same bytes? */
static bool same_text(const struct json_doc *d, uint32_t a, uint32_t alen, bool aesc, uint32_t b, uint32_t blen,
		      bool besc)
{
	struct str_iter x = iter_of(d, a, alen), y = iter_of(d, b, blen);
	int cx, cy;

	if (!aesc && !besc)
		return alen == blen && !memcmp(d->text + a, d->text + b, alen);
	do {
		cx = iter_next(&x);
		cy = iter_next(&y);
	} while (cx == cy && cx >= 0);
	return cx == cy;
}

/* ------------------------------------------------------------------ */
/* The parse                                                          */
/* ------------------------------------------------------------------ */

static int fail_at(struct parser *p, size_t at, enum json_parse_error e)
{
	p->d->err = e;
	p->d->err_at = at;
	return -EINVAL;
}

static int fail(struct parser *p, enum json_parse_error e)
{
	return fail_at(p, p->pos, e);
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len &&
	       (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int new_node(struct parser *p, enum json_type t, uint32_t *idx)
{
	if (p->d->n == p->cap)
		return fail(p, JSON_E_TOO_MANY);
	*idx = p->d->n++;
	p->nodes[*idx] = (struct json_node){ .type = (uint8_t)t, .start = (uint32_t)p->pos };
	return 0;
}

static bool is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* A \uXXXX at s[i]: its code unit, or an error (the text ends: JSON_E_END). */
static int unicode_escape(struct parser *p, size_t i, unsigned *cu)
{
	for (size_t k = 2; k < 6; k++) {
		if (i + k >= p->len)
			return fail_at(p, p->len, JSON_E_END);
		if (!is_hex(p->s[i + k]))
			return fail_at(p, i, JSON_E_ESCAPE);
	}
	*cu = hex4((const char *)p->s + i + 2);
	return 0;
}

/* The string at p->pos (its opening quote): checked; its text's offset and length; p->pos past its end. */
static int scan_string(struct parser *p, uint32_t *start, uint32_t *len, bool *escaped)
{
	size_t i = p->pos + 1;
	unsigned hi, lo;
	int rc;

	*escaped = false;
	for (;;) {
		unsigned char c;

		if (i >= p->len)
			return fail_at(p, p->len, JSON_E_END);
		c = p->s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return fail_at(p, i, JSON_E_CONTROL);
		if (c >= 0x80) {
			size_t n = json_utf8_len(p->s + i, p->len - i);

			if (!n)
				return fail_at(p, i, JSON_E_UTF8);
			i += n;
			continue;
		}
		if (c != '\\') {
			i++;
			continue;
		}
		*escaped = true;
		if (i + 1 >= p->len)
			return fail_at(p, p->len, JSON_E_END);
		if (p->s[i + 1] != 'u') {
			if (!memchr("\"\\/bfnrt", p->s[i + 1], 8))
				return fail_at(p, i, JSON_E_ESCAPE);
			i += 2;
			continue;
		}
		if ((rc = unicode_escape(p, i, &hi)) != 0)
			return rc;
		if (hi >= 0xdc00 && hi <= 0xdfff)
			return fail_at(p, i, JSON_E_SURROGATE);
		if (hi >= 0xd800 && hi <= 0xdbff) { /* its low half must follow at once */
			for (size_t k = 6; k < 8; k++) {
				if (i + k >= p->len)
					return fail_at(p, p->len, JSON_E_END);
				if (p->s[i + k] != (k == 6 ? '\\' : 'u'))
					return fail_at(p, i, JSON_E_SURROGATE);
			}
			if ((rc = unicode_escape(p, i + 6, &lo)) != 0)
				return rc;
			if (lo < 0xdc00 || lo > 0xdfff)
				return fail_at(p, i, JSON_E_SURROGATE);
			i += 6;
		}
		i += 6;
	}
	*start = (uint32_t)(p->pos + 1);
	*len = (uint32_t)(i - p->pos - 1);
	p->pos = i + 1;
	return 0;
}

static size_t digits_at(const struct parser *p, size_t i)
{
	size_t n = 0;

	while (i + n < p->len && p->s[i + n] >= '0' && p->s[i + n] <= '9')
		n++;
	return n;
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, and the value when it is a whole number >= 0. */
static int scan_number(struct parser *p, struct json_node *n)
{
	size_t i = p->pos, int_digits, k;
	bool whole = true, negative = p->s[i] == '-';

	i += negative;
	int_digits = digits_at(p, i);
	if (int_digits == 0)
		return fail_at(p, i, i >= p->len ? JSON_E_END : JSON_E_NUMBER);
	if (p->s[i] == '0' && int_digits > 1)
		return fail_at(p, i, JSON_E_NUMBER);
	i += int_digits;
	if (i < p->len && p->s[i] == '.') {
		if ((k = digits_at(p, i + 1)) == 0)
			return fail_at(p, i + 1, i + 1 >= p->len ? JSON_E_END : JSON_E_NUMBER);
		i += 1 + k;
		whole = false;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if ((k = digits_at(p, i)) == 0)
			return fail_at(p, i, i >= p->len ? JSON_E_END : JSON_E_NUMBER);
		i += k;
		whole = false;
	}
	n->number = JSON_NUM_OTHER;
	if (whole) {
		uint64_t m = 0;
		bool fits = true;

		for (size_t d = 0; d < int_digits; d++) {
			unsigned digit = (unsigned)(p->s[p->pos + negative + d] - '0');

			if (m > (UINT64_MAX - digit) / 10) {
				fits = false;
				break;
			}
			m = m * 10 + digit;
		}
		if (!negative) {
			n->number = fits ? JSON_NUM_U64 : JSON_NUM_HUGE;
			n->u64 = fits ? m : 0;
		} else if (fits && m <= (uint64_t)INT64_MAX + 1) {
			n->number = JSON_NUM_NEG; /* -2^63..0: the magnitude in u64 */
			n->u64 = m;
		}
	}
	n->len = (uint32_t)(i - p->pos);
	p->pos = i;
	return 0;
}

static int literal(struct parser *p, const char *word, struct json_node *n)
{
	size_t wl = strlen(word);

	for (size_t k = 0; k < wl; k++) {
		if (p->pos + k >= p->len)
			return fail_at(p, p->len, JSON_E_END);
		if (p->s[p->pos + k] != (unsigned char)word[k])
			return fail_at(p, p->pos, JSON_E_TOKEN);
	}
	n->len = (uint32_t)wl;
	p->pos += wl;
	return 0;
}

static int parse_value(struct parser *p, unsigned depth, uint32_t *idx);

/* After an element or member: ',' (another follows) or the closing bracket. 1 at the close, 0 after ','. */
static int separator(struct parser *p, char close)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, JSON_E_END);
	if (p->s[p->pos] == (unsigned char)close) {
		p->pos++;
		return 1;
	}
	if (p->s[p->pos] != ',')
		return fail(p, JSON_E_TOKEN);
	p->pos++;
	skip_ws(p);
	return 0;
}

/* Link child after *last under parent. */
static void append(struct parser *p, uint32_t parent, uint32_t *last, uint32_t child)
{
	if (*last)
		p->nodes[*last].next = child;
	else
		p->nodes[parent].first = child;
	*last = child;
	p->nodes[parent].count++;
}

static int parse_array(struct parser *p, unsigned depth, uint32_t self)
{
	uint32_t last = 0, child;
	int rc;

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == ']') {
		p->pos++;
		return 0;
	}
	for (;;) {
		if ((rc = parse_value(p, depth + 1, &child)) != 0)
			return rc;
		append(p, self, &last, child);
		if ((rc = separator(p, ']')) != 0)
			return rc < 0 ? rc : 0;
	}
}

static int parse_object(struct parser *p, unsigned depth, uint32_t self)
{
	uint32_t last = 0, child, kstart, klen;
	bool kesc;
	size_t key_at;
	int rc;

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		return 0;
	}
	for (;;) {
		if (p->pos >= p->len)
			return fail(p, JSON_E_END);
		if (p->s[p->pos] != '"')
			return fail(p, JSON_E_TOKEN);
		key_at = p->pos;
		if ((rc = scan_string(p, &kstart, &klen, &kesc)) != 0)
			return rc;
		for (uint32_t c = p->nodes[self].first; c; c = p->nodes[c].next)
			if (same_text(p->d, p->nodes[c].key_start, p->nodes[c].key_len, p->nodes[c].key_escaped, kstart,
				      klen, kesc))
				return fail_at(p, key_at, JSON_E_DUPLICATE);
		skip_ws(p);
		if (p->pos >= p->len)
			return fail(p, JSON_E_END);
		if (p->s[p->pos] != ':')
			return fail(p, JSON_E_TOKEN);
		p->pos++;
		skip_ws(p);
		if ((rc = parse_value(p, depth + 1, &child)) != 0)
			return rc;
		p->nodes[child].key_start = kstart;
		p->nodes[child].key_len = klen;
		p->nodes[child].key_escaped = kesc;
		append(p, self, &last, child);
		if ((rc = separator(p, '}')) != 0)
			return rc < 0 ? rc : 0;
	}
}

/* The value at p->pos (whitespace before it skipped). */
static int parse_value(struct parser *p, unsigned depth, uint32_t *idx)
{
	struct json_node *n;
	uint32_t start, len;
	bool esc;
	int rc;

	if (p->pos >= p->len)
		return fail(p, JSON_E_END);
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		if (depth >= JSON_PARSE_MAX_DEPTH)
			return fail(p, JSON_E_DEPTH);
		if ((rc = new_node(p, p->s[p->pos] == '{' ? JSON_OBJECT : JSON_ARRAY, idx)) != 0)
			return rc;
		rc = p->s[p->pos] == '{' ? parse_object(p, depth, *idx) : parse_array(p, depth, *idx);
		if (!rc)
			p->nodes[*idx].len = (uint32_t)(p->pos - p->nodes[*idx].start);
		return rc;
	case '"':
		if ((rc = new_node(p, JSON_STRING, idx)) != 0 || (rc = scan_string(p, &start, &len, &esc)) != 0)
			return rc;
		n = &p->nodes[*idx];
		n->start = start;
		n->len = len;
		n->escaped = esc;
		return 0;
	case 't':
	case 'f':
		if ((rc = new_node(p, JSON_BOOL, idx)) != 0)
			return rc;
		n = &p->nodes[*idx];
		n->boolean = p->s[p->pos] == 't';
		return literal(p, n->boolean ? "true" : "false", n);
	case 'n':
		if ((rc = new_node(p, JSON_NULL, idx)) != 0)
			return rc;
		return literal(p, "null", &p->nodes[*idx]);
	default:
		if (p->s[p->pos] != '-' && (p->s[p->pos] < '0' || p->s[p->pos] > '9'))
			return fail(p, JSON_E_TOKEN);
		if ((rc = new_node(p, JSON_NUMBER, idx)) != 0)
			return rc;
		return scan_number(p, &p->nodes[*idx]);
	}
}

int json_parse(struct json_doc *d, const char *text, size_t len, struct json_node *nodes, uint32_t cap)
{
	struct parser p = { .d = d, .nodes = nodes, .cap = cap, .s = (const unsigned char *)text, .len = len };
	uint32_t root;
	int rc;

	*d = (struct json_doc){ .text = text, .len = len, .nodes = nodes };
	if (len >= UINT32_MAX)
		return fail_at(&p, 0, JSON_E_TOO_LONG);
	skip_ws(&p);
	rc = parse_value(&p, 0, &root);
	if (!rc) {
		skip_ws(&p);
		if (p.pos < len)
			rc = fail(&p, JSON_E_TRAILING);
	}
	if (rc)
		d->n = 0; /* nothing of a failed parse is to be read */
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

const struct json_node *json_root(const struct json_doc *d)
{
	return d->n ? &d->nodes[0] : NULL;
}

const struct json_node *json_first(const struct json_doc *d, const struct json_node *n)
{
	return n && (n->type == JSON_ARRAY || n->type == JSON_OBJECT) && n->first ? &d->nodes[n->first] : NULL;
}

const struct json_node *json_next(const struct json_doc *d, const struct json_node *child)
{
	return child && child->next ? &d->nodes[child->next] : NULL;
}

const struct json_node *json_member(const struct json_doc *d, const struct json_node *obj, const char *name)
{
	size_t nlen = strlen(name);

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (const struct json_node *c = json_first(d, obj); c; c = json_next(d, c)) {
		struct str_iter it = iter_of(d, c->key_start, c->key_len);
		size_t k = 0;
		int ch;

		if (!c->key_escaped && c->key_len != nlen)
			continue;
		while ((ch = iter_next(&it)) >= 0 && k < nlen && ch == (unsigned char)name[k])
			k++;
		if (ch < 0 && k == nlen)
			return c;
	}
	return NULL;
}

int json_get_u64(const struct json_node *n, uint64_t *v)
{
	if (!n || n->type != JSON_NUMBER || n->number == JSON_NUM_OTHER || n->number == JSON_NUM_NEG)
		return -EINVAL;
	if (n->number == JSON_NUM_HUGE)
		return -ERANGE;
	*v = n->u64;
	return 0;
}

int json_get_i64(const struct json_node *n, int64_t *v)
{
	if (!n || n->type != JSON_NUMBER || n->number == JSON_NUM_OTHER)
		return -EINVAL;
	if (n->number == JSON_NUM_HUGE || (n->number == JSON_NUM_U64 && n->u64 > (uint64_t)INT64_MAX))
		return -ERANGE;
	/* -2^63 has no positive counterpart: negate in unsigned arithmetic, then convert */
	*v = n->number == JSON_NUM_NEG ? (int64_t)(0 - n->u64) : (int64_t)n->u64;
	return 0;
}

int json_get_double(const struct json_doc *d, const struct json_node *n, double *v)
{
	char buf[JSON_NUMBER_TEXT_MAX + 1];
	char *end;
	double x;

	if (!n || n->type != JSON_NUMBER)
		return -EINVAL;
	if (n->len > JSON_NUMBER_TEXT_MAX)
		return -ERANGE;
	memcpy(buf, d->text + n->start, n->len);
	buf[n->len] = '\0';
	errno = 0;
	x = strtod(buf, &end);
	/* strtod reads JSON's number grammar whole (it is a subset of C's); past a double's range it says ERANGE */
	if (end != buf + n->len)
		return -EINVAL;
	if (errno == ERANGE && (x == HUGE_VAL || x == -HUGE_VAL))
		return -ERANGE;
	*v = x;
	return 0;
}

int json_get_bool(const struct json_node *n, bool *v)
{
	if (!n || n->type != JSON_BOOL)
		return -EINVAL;
	*v = n->boolean;
	return 0;
}

int json_get_string(const struct json_doc *d, const struct json_node *n, char *buf, size_t cap, size_t *len)
{
	if (!n || n->type != JSON_STRING)
		return -EINVAL;
	return decode(iter_of(d, n->start, n->len), buf, cap, len);
}

int json_get_key(const struct json_doc *d, const struct json_node *member, char *buf, size_t cap, size_t *len)
{
	return decode(iter_of(d, member->key_start, member->key_len), buf, cap, len);
}
