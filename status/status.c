/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer.status.v1, written and read from one table of its keys: the
 * writer walks it to write every key in order, the reader walks it to
 * find every key, so the two cannot disagree on a name, a section or a
 * type. docs/status.md documents the same table.
 */
#include "status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "json_parse.h"

#define STATUS_MAX_NODES 512u /* values in a status file read, at most (v1 has 47) */

enum field_type { F_U64, F_BOOL, F_STRING };

struct field {
	const char *section; /* NULL: a key of the top-level object */
	const char *key;
	enum field_type type;
	size_t offset, size; /* of the field in struct status */
	bool added;          /* added to v1 later: a file of an older processor lacks it (read as 0 or "") */
};

/* The field f of struct status, which must have type T: a table entry naming the wrong field fails to compile. */
#define FIELD(f, T)                                                                                     \
	.offset = offsetof(struct status, f) + 0 * sizeof(char[_Generic(((struct status *)0)->f, T: 1, default: -1)]), \
	.size = sizeof(((struct status *)0)->f)
#define U64(sec, k, f) { sec, k, F_U64, FIELD(f, uint64_t) }
#define BOOL(sec, k, f) { sec, k, F_BOOL, FIELD(f, bool) }
#define STRING(sec, k, f) { sec, k, F_STRING, FIELD(f, char *) }
#define U64_ADDED(sec, k, f) { sec, k, F_U64, FIELD(f, uint64_t), true }
#define STRING_ADDED(sec, k, f) { sec, k, F_STRING, FIELD(f, char *), true }

/* Every key but "schema", in the order the file has them; a section's keys together. */
static const struct field fields[] = {
	U64(NULL, "time_ns", time_ns),
	U64(NULL, "pid", pid),

	BOOL("ring", "attached", ring.attached),
	U64("ring", "attaches", ring.attaches),
	U64("ring", "generation", ring.generation),
	U64("ring", "records", ring.records),
	U64("ring", "lost", ring.lost),
	U64("ring", "released_pos", ring.released_pos),

	U64("spool", "next_seq", spool.next_seq),
	U64("spool", "durable_seq", spool.durable_seq),
	U64("spool", "acked_seq", spool.acked_seq),
	U64("spool", "segments", spool.segments),
	U64("spool", "bytes_on_disk", spool.bytes_on_disk),
	U64("spool", "records_appended", spool.records_appended),
	U64("spool", "fsyncs", spool.fsyncs),
	U64("spool", "records_skipped_after_restart", spool.records_skipped_after_restart),
	U64("spool", "evicted_records", spool.evicted_records),
	U64("spool", "evicted_bytes", spool.evicted_bytes),
	U64("spool", "corrupt_frames", spool.corrupt_frames),
	U64("spool", "torn_bytes", spool.torn_bytes),
	U64("spool", "ledger_resets", spool.ledger_resets),
	U64("spool", "quarantined_batches", spool.quarantined_batches),
	U64("spool", "quarantined_records", spool.quarantined_records),
	U64("spool", "recovery_ns", spool.recovery_ns),

	BOOL("upload", "enabled", upload.enabled),
	STRING("upload", "url", upload.url),
	STRING_ADDED("upload", "url_in_use", upload.url_in_use),
	U64("upload", "batches_acked", upload.batches_acked),
	U64("upload", "records_acked", upload.records_acked),
	U64("upload", "bytes_sent", upload.bytes_sent),
	U64("upload", "attempts", upload.attempts),
	U64("upload", "retries", upload.retries),
	U64("upload", "http_4xx", upload.http_4xx),
	U64("upload", "http_5xx", upload.http_5xx),
	U64("upload", "net_errors", upload.net_errors),
	U64_ADDED("upload", "failovers", upload.failovers),
	STRING_ADDED("upload", "failed_url", upload.failed_url),
	U64("upload", "last_http_status", upload.last_http_status),
	STRING("upload", "last_error", upload.last_error),
	U64("upload", "pending_records", upload.pending_records),

	U64_ADDED("heartbeat", "beats", heartbeat.beats),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

const char *status_error_name(enum status_error e)
{
	switch (e) {
	case STATUS_OK: return "no error";
	case STATUS_E_INCOMPLETE: return "incomplete";
	case STATUS_E_JSON: return "not JSON";
	case STATUS_E_SCHEMA: return "not a " STATUS_SCHEMA " file";
	case STATUS_E_MISSING: return "a key is missing";
	case STATUS_E_TYPE: return "a key has the wrong type";
	case STATUS_E_VALUE: return "a value out of range";
	}
	return "unknown error";
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

static bool same_section(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void write_fields(struct obuf *o, const struct status *s)
{
	const char *section = NULL;
	struct json j;

	json_init(&j, o);
	json_object_begin(&j);
	json_kv_string(&j, "schema", STATUS_SCHEMA);
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct field *f = &fields[i];
		const char *p = (const char *)s + f->offset;
		uint64_t u;
		bool b;

		if (!same_section(f->section, section)) {
			if (section)
				json_object_end(&j);
			section = f->section;
			json_key(&j, section); /* the table keeps top-level keys first */
			json_object_begin(&j);
		}
		switch (f->type) {
		case F_U64:
			memcpy(&u, p, sizeof(u));
			json_kv_u64(&j, f->key, u);
			break;
		case F_BOOL:
			memcpy(&b, p, sizeof(b));
			json_kv_bool(&j, f->key, b);
			break;
		case F_STRING: json_kv_string(&j, f->key, p); break;
		}
	}
	if (section)
		json_object_end(&j);
	json_object_end(&j);
	obuf_putc(o, '\n');
}

int status_format(const struct status *s, char *buf, size_t cap, size_t *len)
{
	struct obuf o;
	int rc = 0;

	obuf_init_mem(&o, STATUS_FILE_MAX);
	write_fields(&o, s);
	if (o.err || o.len > cap)
		rc = -ENOSPC;
	else
		memcpy(buf, o.buf, o.len);
	*len = rc ? 0 : o.len;
	obuf_free(&o);
	return rc;
}

int status_write(int fd, const struct status *s)
{
	struct obuf o;
	int rc = 0;

	obuf_init_mem(&o, STATUS_FILE_MAX);
	write_fields(&o, s);
	if (o.err) {
		rc = o.err;
	} else {
		ssize_t n = pwrite(fd, o.buf, o.len, 0);

		if (n < 0)
			rc = -errno;
		else if ((size_t)n != o.len)
			rc = -EIO;
		else if (ftruncate(fd, (off_t)o.len))
			rc = -errno;
	}
	obuf_free(&o);
	return rc;
}

void status_shown(const char *s, char *out, size_t cap)
{
	struct obuf o;
	size_t n = 0;

	if (cap == 0)
		return;
	obuf_init_mem(&o, 6 * STATUS_URL_MAX + 2); /* every byte an escape at most, and the quotes */
	json_put_string(&o, s, strlen(s));
	if (!o.err && o.len >= 2) {
		n = o.len - 2 < cap - 1 ? o.len - 2 : cap - 1;
		memcpy(out, o.buf + 1, n);
	}
	out[n] = 0;
	obuf_free(&o);
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

__attribute__((format(printf, 4, 5))) static enum status_error say(char *err, size_t errlen, enum status_error e,
								   const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

/* Text from the file, for a message: printable ASCII, at most 40 bytes, "..." after. */
static const char *printable(const char *s, char buf[48])
{
	size_t n = strlen(s), i;

	for (i = 0; i < n && i < 40; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + i, n > 40 ? "..." : "");
	return buf;
}

static enum status_error check_schema(const struct json_doc *d, const struct json_node *root, char *err, size_t errlen)
{
	const struct json_node *n = json_member(d, root, "schema");
	char v[64], b[48];
	size_t len = 0;
	int rc;

	if (!root || root->type != JSON_OBJECT)
		return say(err, errlen, STATUS_E_SCHEMA, "not a JSON object but %s: not a status file",
			   json_type_name(root ? (enum json_type)root->type : JSON_NULL));
	if (!n)
		return say(err, errlen, STATUS_E_SCHEMA, "no \"schema\" key: not a status file");
	if (n->type != JSON_STRING)
		return say(err, errlen, STATUS_E_SCHEMA, "\"schema\" is %s, not a string: not a status file",
			   json_type_name((enum json_type)n->type));
	rc = json_get_string(d, n, v, sizeof(v), &len);
	if (rc || len != strlen(STATUS_SCHEMA) || strcmp(v, STATUS_SCHEMA))
		return say(err, errlen, STATUS_E_SCHEMA, "schema \"%s\", not " STATUS_SCHEMA,
			   rc ? "(longer than 63 bytes)" : printable(v, b));
	return STATUS_OK;
}

static const char *type_wanted(enum field_type t)
{
	return t == F_U64 ? "a whole number" : t == F_BOOL ? "a boolean" : "a string";
}

/* One key of the table, from its section's object (or the root), into s. */
static enum status_error read_field(const struct json_doc *d, const struct json_node *obj, const struct field *f,
				    struct status *s, char *err, size_t errlen)
{
	const struct json_node *n = json_member(d, obj, f->key);
	char *p = (char *)s + f->offset, name[64];
	size_t len;
	uint64_t u;
	bool b;
	int rc;

	snprintf(name, sizeof(name), "%s%s%s", f->section ? f->section : "", f->section ? "." : "", f->key);
	if (!n && f->added)
		return STATUS_OK;
	if (!n)
		return say(err, errlen, STATUS_E_MISSING, "key \"%s\" is missing", name);
	switch (f->type) {
	case F_U64:
		rc = json_get_u64(n, &u);
		if (rc == -ERANGE)
			return say(err, errlen, STATUS_E_VALUE, "key \"%s\" is larger than %llu", name,
				   (unsigned long long)UINT64_MAX);
		if (rc && n->type == JSON_NUMBER)
			return say(err, errlen, STATUS_E_TYPE, "key \"%s\" is not a whole number from 0 to %llu", name,
				   (unsigned long long)UINT64_MAX);
		if (!rc)
			memcpy(p, &u, sizeof(u));
		break;
	case F_BOOL:
		rc = json_get_bool(n, &b);
		if (!rc)
			memcpy(p, &b, sizeof(b));
		break;
	case F_STRING:
		rc = json_get_string(d, n, p, f->size, &len);
		if (rc == -ENOSPC)
			return say(err, errlen, STATUS_E_VALUE, "key \"%s\" is longer than %zu bytes", name, f->size - 1);
		if (!rc && strlen(p) != len)
			return say(err, errlen, STATUS_E_VALUE, "key \"%s\" holds a NUL character", name);
		break;
	}
	if (rc)
		return say(err, errlen, STATUS_E_TYPE, "key \"%s\" is %s, not %s", name,
			   json_type_name((enum json_type)n->type), type_wanted(f->type));
	return STATUS_OK;
}

enum status_error status_parse(const char *text, size_t len, struct status *s, char *err, size_t errlen)
{
	struct json_node nodes[STATUS_MAX_NODES];
	const char *nl = memchr(text, '\n', len);
	const struct json_node *root;
	struct json_doc d;
	struct status tmp;
	enum status_error e;

	if (!nl)
		return say(err, errlen, STATUS_E_INCOMPLETE, "no end of line: empty, or being written");
	if ((size_t)(nl - text) > STATUS_FILE_MAX)
		return say(err, errlen, STATUS_E_JSON, "a line longer than %u bytes", STATUS_FILE_MAX);
	if (json_parse(&d, text, (size_t)(nl - text), nodes, STATUS_MAX_NODES))
		return say(err, errlen, STATUS_E_JSON, "not valid JSON at byte %zu: %s", d.err_at,
			   json_parse_error_name(d.err));
	root = json_root(&d);
	e = check_schema(&d, root, err, errlen);
	if (e)
		return e;
	memset(&tmp, 0, sizeof(tmp));
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct field *f = &fields[i];
		const struct json_node *obj = f->section ? json_member(&d, root, f->section) : root;

		if (f->section && !obj && f->added)
			continue; /* a section added later: an older processor's file has none */
		if (f->section && !obj)
			return say(err, errlen, STATUS_E_MISSING, "key \"%s\" is missing", f->section);
		if (obj->type != JSON_OBJECT)
			return say(err, errlen, STATUS_E_TYPE, "key \"%s\" is %s, not an object", f->section,
				   json_type_name((enum json_type)obj->type));
		e = read_field(&d, obj, f, &tmp, err, errlen);
		if (e)
			return e;
	}
	memcpy(s, &tmp, sizeof(tmp));
	return STATUS_OK;
}
