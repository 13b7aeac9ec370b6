/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON of the lake's reads, in C (read_json.h). What SQLite's json1
 * gave is the reference: tests/test_lake_pg_reads.c checks the two agree.
 */
#include "read_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most a joined string may hold: the column's own text is far less (json_parse takes < 4 GiB). */
#define JOIN_MAX (1u << 30)

int lake_json_parse(struct lake_json *j, const char *text, size_t len)
{
	/* A value takes a byte and a separator: len / 2 + 2 nodes always do; most texts need far fewer. */
	uint64_t most = (uint64_t)len / 2 + 2, want = j->cap ? j->cap : 64;

	if (len >= UINT32_MAX)
		return -EINVAL;
	for (;;) {
		if (want > most)
			want = most;
		if (want > j->cap) {
			struct json_node *n = realloc(j->nodes, (size_t)want * sizeof(*n));

			if (!n)
				return -ENOMEM;
			j->nodes = n;
			j->cap = (uint32_t)want;
		}
		if (!json_parse(&j->doc, text, len, j->nodes, j->cap))
			return 0;
		if (j->doc.err != JSON_E_TOO_MANY || j->cap >= most)
			return -EINVAL;
		want = (uint64_t)j->cap * 4;
	}
}

const char *lake_json_valid(struct lake_json *j, const char *text, size_t len)
{
	return text && !lake_json_parse(j, text, len) ? text : NULL;
}

void lake_json_minify(struct obuf *o, const char *text, size_t len)
{
	size_t from = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (c == '\\')
				i++; /* the escaped character: never the string's end */
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			obuf_put(o, text + from, i - from);
			from = i + 1;
		}
	}
	obuf_put(o, text + from, len - from);
}

static const struct json_node *each_first(const struct json_doc *d);
static const struct json_node *each_next(const struct json_doc *d, const struct json_node *n);

/* A number that is not an int64 as SQLite prints a REAL ("%!.15g": 150.0, 1.0e+15, Inf). */
static void put_real(struct lake_json *j, const struct json_node *n)
{
	const char *raw = j->doc.text + n->start;
	char buf[48], *e;
	double x;
	int rc = json_get_double(&j->doc, n, &x);

	if (rc == -ERANGE && n->len > JSON_NUMBER_TEXT_MAX) {
		obuf_put(&j->out, raw, n->len); /* a text SQLite would read too: rarer than rare, kept as written */
		return;
	}
	if (rc) {
		obuf_puts(&j->out, *raw == '-' ? "-Inf" : "Inf");
		return;
	}
	if (x == 0)
		x = 0; /* -0.0 prints as 0.0 */
	snprintf(buf, sizeof(buf), "%.15g", x);
	e = strchr(buf, 'e');
	if (strchr(buf, '.')) {
		obuf_puts(&j->out, buf);
	} else if (e) {
		obuf_put(&j->out, buf, (size_t)(e - buf));
		obuf_puts(&j->out, ".0");
		obuf_puts(&j->out, e);
	} else {
		obuf_puts(&j->out, buf);
		obuf_puts(&j->out, ".0");
	}
}

/* One value as group_concat saw json_each's value column; false for null (no value: no separator). */
static bool put_value(struct lake_json *j, const struct json_node *n)
{
	int64_t v;

	switch (n->type) {
	case JSON_NULL:
		return false;
	case JSON_BOOL:
		obuf_putc(&j->out, n->boolean ? '1' : '0');
		return true;
	case JSON_NUMBER:
		if (!json_get_i64(n, &v))
			obuf_printf(&j->out, "%" PRId64, v);
		else
			put_real(j, n);
		return true;
	case JSON_STRING:
		if (!n->escaped) {
			obuf_put(&j->out, j->doc.text + n->start, n->len);
		} else {
			/* decoded it is no longer than as written; room made first, then written in place */
			size_t len = 0, at = j->out.len;

			obuf_put(&j->out, j->doc.text + n->start, n->len);
			obuf_putc(&j->out, '\0');
			if (!j->out.err && json_get_string(&j->doc, n, j->out.buf + at, n->len + 1, &len) == 0)
				j->out.len = at + len;
		}
		return true;
	default:
		lake_json_minify(&j->out, j->doc.text + n->start, n->len);
		return true;
	}
}

const char *lake_json_join(struct lake_json *j, const char *text, size_t len, const char *sep)
{
	const struct json_node *n;
	bool any = false;
	int rc;

	if (!j->out.max)
		obuf_init_mem(&j->out, JOIN_MAX);
	j->out.len = 0;
	j->out.err = 0;
	rc = text ? lake_json_parse(j, text, len) : -EINVAL;
	if (rc == -ENOMEM)
		return NULL;
	if (!rc) {
		for (n = each_first(&j->doc); n; n = each_next(&j->doc, n)) {
			size_t mark = j->out.len;

			if (any)
				obuf_puts(&j->out, sep);
			if (put_value(j, n))
				any = true;
			else
				j->out.len = mark;
		}
	}
	obuf_putc(&j->out, '\0');
	return j->out.err ? NULL : j->out.buf;
}

/* A value as written, minified (a string's node spans the text between its quotes). */
static void put_raw(struct obuf *o, const struct json_doc *d, const struct json_node *n)
{
	if (n->type == JSON_STRING) {
		obuf_putc(o, '"');
		obuf_put(o, d->text + n->start, n->len);
		obuf_putc(o, '"');
		return;
	}
	lake_json_minify(o, d->text + n->start, n->len);
}

/* A member's name as written is name: what SQLite's path '$.name' matched (the raw text, not decoded). */
static bool key_is(const struct json_doc *d, const struct json_node *m, const char *name)
{
	size_t n = strlen(name);

	return m->key_len == n && !memcmp(d->text + m->key_start, name, n);
}

/* The values json_each gave for a text: an array's elements, an object's members, a scalar itself. */
static const struct json_node *each_first(const struct json_doc *d)
{
	const struct json_node *root = json_root(d);

	return root->type == JSON_ARRAY || root->type == JSON_OBJECT ? json_first(d, root) : root;
}

static const struct json_node *each_next(const struct json_doc *d, const struct json_node *n)
{
	return n == json_root(d) ? NULL : json_next(d, n);
}

/* The report's "signals" (its own, when an array) with the ones added after them. */
static void put_signals(struct obuf *o, const struct json_doc *rep, const struct json_node *own,
			const struct json_doc *added)
{
	bool any = false;

	obuf_putc(o, '[');
	for (const struct json_node *n = own && own->type == JSON_ARRAY ? json_first(rep, own) : NULL; n;
	     n = json_next(rep, n), any = true) {
		if (any)
			obuf_putc(o, ',');
		put_raw(o, rep, n);
	}
	for (const struct json_node *n = added ? each_first(added) : NULL; n; n = each_next(added, n), any = true) {
		if (any)
			obuf_putc(o, ',');
		put_raw(o, added, n);
	}
	obuf_putc(o, ']');
}

static void put_state(struct obuf *o, const char *state)
{
	if (state)
		json_put_string(o, state, strlen(state));
	else
		obuf_puts(o, "null");
}

int lake_json_report(struct obuf *o, const char *payload, size_t len, const char *state, const char *signals,
		     const char *tune)
{
	struct lake_json p = { 0 }, sig = { 0 }, tn = { 0 };
	const struct json_node *rep = NULL;
	bool has_state = false, has_signals = false, has_tune = false, first = true;
	int rc = lake_json_parse(&p, payload, len);

	if (!rc && json_root(&p.doc)->type == JSON_OBJECT)
		for (const struct json_node *m = json_first(&p.doc, json_root(&p.doc)); m && !rep;
		     m = json_next(&p.doc, m))
			if (key_is(&p.doc, m, "report"))
				rep = m;
	if (rc != -ENOMEM && (!rep || rep->type != JSON_OBJECT))
		rc = -ENOENT;
	if (!rc && signals)
		rc = lake_json_parse(&sig, signals, strlen(signals));
	if (!rc && tune)
		rc = lake_json_parse(&tn, tune, strlen(tune));
	if (rc)
		goto out;
	obuf_putc(o, '{');
	for (const struct json_node *m = json_first(&p.doc, rep); m; m = json_next(&p.doc, m), first = false) {
		if (!first)
			obuf_putc(o, ',');
		obuf_putc(o, '"');
		obuf_put(o, p.doc.text + m->key_start, m->key_len);
		obuf_puts(o, "\":");
		if (!has_state && key_is(&p.doc, m, "state")) {
			has_state = true;
			put_state(o, state);
		} else if (!has_signals && key_is(&p.doc, m, "signals")) {
			has_signals = true;
			put_signals(o, &p.doc, m, signals ? &sig.doc : NULL);
		} else if (tune && !has_tune && key_is(&p.doc, m, "tune")) {
			has_tune = true;
			put_raw(o, &tn.doc, json_root(&tn.doc));
		} else {
			put_raw(o, &p.doc, m);
		}
	}
	if (!has_state) {
		obuf_puts(o, first ? "\"state\":" : ",\"state\":");
		put_state(o, state);
	}
	if (!has_signals) {
		obuf_puts(o, ",\"signals\":");
		put_signals(o, &p.doc, NULL, signals ? &sig.doc : NULL);
	}
	if (tune && !has_tune) {
		obuf_puts(o, ",\"tune\":");
		put_raw(o, &tn.doc, json_root(&tn.doc));
	}
	obuf_putc(o, '}');
	rc = o->err;
out:
	lake_json_free(&p);
	lake_json_free(&sig);
	lake_json_free(&tn);
	return rc;
}

void lake_json_free(struct lake_json *j)
{
	free(j->nodes);
	obuf_free(&j->out);
	*j = (struct lake_json){ 0 };
}
