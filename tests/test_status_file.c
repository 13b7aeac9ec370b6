/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status file (status/status.c, schema tracer.status.v1) and the
 * strict JSON reader under it (status/json_parse.c): what the processor
 * writes reads back the same; a missing key, a key of the wrong type, a
 * number beyond 64 bits, another schema and a truncated file are refused
 * with the key named; keys the reader does not know are ignored, and those
 * added to v1 later may be missing (an older processor's file); the JSON
 * reader refuses what RFC 8259 does not allow.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_parse.h"
#include "status.h"

/* A status with every figure distinct, and strings that need escaping. */
static void sample(struct status *s)
{
	uint64_t *u = (uint64_t *)(void *)&s->spool;

	memset(s, 0, sizeof(*s));
	s->time_ns = 1764072000123456789ULL;
	s->pid = 4242;
	s->ring.attached = true;
	s->ring.attaches = 3;
	s->ring.generation = 0x1234abcd5678ef01ULL;
	s->ring.records = 987654;
	s->ring.lost = 7;
	s->ring.released_pos = 1ULL << 40;
	for (size_t i = 0; i < sizeof(s->spool) / sizeof(*u); i++)
		u[i] = 100 + i;
	s->upload.enabled = true;
	snprintf(s->upload.url, sizeof(s->upload.url), "https://a.example:8750/v1/batches,https://ingest.example:8750/v1/batches");
	snprintf(s->upload.url_in_use, sizeof(s->upload.url_in_use), "https://ingest.example:8750/v1/batches");
	snprintf(s->upload.failed_url, sizeof(s->upload.failed_url), "https://a.example:8750/v1/batches");
	s->upload.failovers = 99;
	s->upload.batches_acked = 11;
	s->upload.records_acked = 22;
	s->upload.bytes_sent = 33;
	s->upload.attempts = 44;
	s->upload.retries = 55;
	s->upload.http_4xx = 66;
	s->upload.http_5xx = 77;
	s->upload.net_errors = 88;
	s->upload.last_http_status = 503;
	snprintf(s->upload.last_error, sizeof(s->upload.last_error), "HTTP 503: {\"error\":\"busy\\now\"}\x1b[31m");
	s->upload.pending_records = UINT64_MAX;
	s->heartbeat.beats = 12;
}

/* The file's text for s, NUL-terminated, in a buffer the caller frees. */
static char *formatted(const struct status *s)
{
	char *buf = malloc(STATUS_FILE_MAX + 1);
	size_t len = 0;

	assert_non_null(buf);
	assert_int_equal(status_format(s, buf, STATUS_FILE_MAX, &len), 0);
	buf[len] = 0;
	return buf;
}

/* text with the first occurrence of from replaced by to. */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to);
	char *out = malloc(n + 1);

	if (!at)
		fail_msg("'%s' is not in %s", from, text);
	assert_non_null(out);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

/* status_parse refuses text with e and a message that holds want; *s untouched. */
static void refused(const char *text, enum status_error e, const char *want)
{
	struct status s, before;
	char err[256];
	enum status_error got;

	memset(&s, 0x5a, sizeof(s));
	memcpy(&before, &s, sizeof(s));
	got = status_parse(text, strlen(text), &s, err, sizeof(err));
	if (got != e || !strstr(err, want))
		fail_msg("got %d \"%s\", want %d \"%s\" for %.200s", got, got ? err : "", e, want, text);
	assert_memory_equal(&s, &before, sizeof(s));
}

/* ---- status files ------------------------------------------------------ */

static void what_is_written_reads_back_the_same(void **state)
{
	struct status in, out;
	char *text, err[256];

	(void)state;
	sample(&in);
	text = formatted(&in);
	assert_int_equal(text[strlen(text) - 1], '\n');
	assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* one line */
	assert_int_equal(status_parse(text, strlen(text), &out, err, sizeof(err)), STATUS_OK);
	assert_memory_equal(&in, &out, sizeof(in));
	free(text);
}

static void the_file_keeps_the_v1_key_order(void **state)
{
	struct status s;
	char *text;

	(void)state;
	sample(&s);
	text = formatted(&s);
	assert_non_null(strstr(text, "{\"schema\":\"tracer.status.v1\",\"time_ns\":1764072000123456789,\"pid\":4242,"
				     "\"ring\":{\"attached\":true,\"attaches\":3,"));
	assert_non_null(strstr(text, "\"spool\":{\"next_seq\":100,\"durable_seq\":101,\"acked_seq\":102,"));
	assert_non_null(strstr(text, "\"recovery_ns\":115},\"upload\":{\"enabled\":true,"));
	assert_non_null(strstr(text, "\"pending_records\":18446744073709551615},\"heartbeat\":{\"beats\":12}}\n"));
	free(text);
}

static void the_first_line_is_read_and_a_stale_tail_after_it_ignored(void **state)
{
	struct status in, out;
	char *text, *longer, err[256];

	(void)state;
	sample(&in);
	text = formatted(&in);
	/* A shorter file rewritten in place over a longer one, read before the truncate. */
	longer = malloc(strlen(text) + 64);
	assert_non_null(longer);
	sprintf(longer, "%s\"last_error\":\"an older, longer one\"}}\n", text);
	assert_int_equal(status_parse(longer, strlen(longer), &out, err, sizeof(err)), STATUS_OK);
	assert_memory_equal(&in, &out, sizeof(in));
	free(longer);
	free(text);
}

static void unknown_keys_are_ignored(void **state)
{
	struct status in, out;
	char *text, *more, *evenmore, err[256];

	(void)state;
	sample(&in);
	text = formatted(&in);
	more = replaced(text, "\"pid\":4242,", "\"pid\":4242,\"host\":{\"name\":\"a\",\"cpus\":[1,2.5,-3e2,null]},");
	evenmore = replaced(more, "\"retries\":", "\"retry_ceiling_ns\":1e9,\"retries\":");
	assert_int_equal(status_parse(evenmore, strlen(evenmore), &out, err, sizeof(err)), STATUS_OK);
	assert_memory_equal(&in, &out, sizeof(in));
	free(evenmore);
	free(more);
	free(text);
}

static void a_missing_key_is_named(void **state)
{
	struct status s;
	char *text, *t;

	(void)state;
	sample(&s);
	text = formatted(&s);
	t = replaced(text, "\"acked_seq\":102,", "");
	refused(t, STATUS_E_MISSING, "key \"spool.acked_seq\" is missing");
	free(t);
	t = replaced(text, "\"pid\":4242,", "");
	refused(t, STATUS_E_MISSING, "key \"pid\" is missing");
	free(t);
	t = replaced(text, "\"ring\":", "\"rings\":");
	refused(t, STATUS_E_MISSING, "key \"ring\" is missing");
	free(t);
	free(text);
}

/* Keys added to v1 after its first release: a processor started before the upgrade writes none of them. */
static void keys_added_later_may_be_missing(void **state)
{
	struct status in, out;
	char *text, *t1, *t2, *t3, *t4, err[256];

	(void)state;
	sample(&in);
	text = formatted(&in);
	t1 = replaced(text, "\"url_in_use\":\"https://ingest.example:8750/v1/batches\",", "");
	t2 = replaced(t1, "\"failovers\":99,", "");
	t3 = replaced(t2, "\"failed_url\":\"https://a.example:8750/v1/batches\",", "");
	t4 = replaced(t3, ",\"heartbeat\":{\"beats\":12}", ""); /* the whole section: added later */
	assert_int_equal(status_parse(t4, strlen(t4), &out, err, sizeof(err)), STATUS_OK);
	memset(in.upload.url_in_use, 0, sizeof(in.upload.url_in_use));
	memset(in.upload.failed_url, 0, sizeof(in.upload.failed_url));
	in.upload.failovers = 0;
	in.heartbeat.beats = 0;
	assert_memory_equal(&in, &out, sizeof(in));
	free(t4);
	free(t3);
	t3 = replaced(text, "\"beats\":12", "\"beats\":true");
	refused(t3, STATUS_E_TYPE, "key \"heartbeat.beats\" is a boolean, not a whole number"); /* there: checked */
	free(t3);
	t3 = replaced(text, "\"failovers\":99", "\"failovers\":\"99\"");
	refused(t3, STATUS_E_TYPE, "key \"upload.failovers\" is a string, not a whole number"); /* there: checked */
	free(t3);
	free(t2);
	free(t1);
	free(text);
}

static void a_key_of_the_wrong_type_is_named(void **state)
{
	struct status s;
	char *text, *t;

	(void)state;
	sample(&s);
	text = formatted(&s);
	t = replaced(text, "\"attached\":true", "\"attached\":\"true\"");
	refused(t, STATUS_E_TYPE, "key \"ring.attached\" is a string, not a boolean");
	free(t);
	t = replaced(text, "\"records\":987654", "\"records\":\"987654\"");
	refused(t, STATUS_E_TYPE, "key \"ring.records\" is a string, not a whole number");
	free(t);
	t = replaced(text, "\"segments\":103", "\"segments\":-1");
	refused(t, STATUS_E_TYPE, "key \"spool.segments\" is not a whole number from 0 to 18446744073709551615");
	free(t);
	t = replaced(text, "\"segments\":103", "\"segments\":1.5");
	refused(t, STATUS_E_TYPE, "spool.segments");
	free(t);
	t = replaced(text, "\"segments\":103", "\"segments\":1e3");
	refused(t, STATUS_E_TYPE, "spool.segments");
	free(t);
	t = replaced(text, "\"url\":\"https://a.example:8750/v1/batches,https://ingest.example:8750/v1/batches\"",
		     "\"url\":null");
	refused(t, STATUS_E_TYPE, "key \"upload.url\" is null, not a string");
	free(t);
	t = replaced(text, "\"upload\":{", "\"upload\":[],\"x\":{");
	refused(t, STATUS_E_TYPE, "key \"upload\" is an array, not an object");
	free(t);
	free(text);
}

static void huge_numbers_are_refused_not_wrapped(void **state)
{
	struct status s, out;
	char *text, *t, err[256];

	(void)state;
	sample(&s);
	text = formatted(&s);
	t = replaced(text, "\"pending_records\":18446744073709551615", "\"pending_records\":18446744073709551616");
	refused(t, STATUS_E_VALUE, "key \"upload.pending_records\" is larger than 18446744073709551615");
	free(t);
	t = replaced(text, "\"time_ns\":1764072000123456789", "\"time_ns\":99999999999999999999999999999999999");
	refused(t, STATUS_E_VALUE, "key \"time_ns\" is larger than");
	free(t);
	/* The largest is taken exactly. */
	assert_int_equal(status_parse(text, strlen(text), &out, err, sizeof(err)), STATUS_OK);
	assert_true(out.upload.pending_records == UINT64_MAX);
	free(text);
}

static void strings_too_long_or_with_a_nul_are_refused(void **state)
{
	struct status s;
	char *text, *t, *long_url = malloc(STATUS_URL_MAX + 16);

	(void)state;
	assert_non_null(long_url);
	sample(&s);
	text = formatted(&s);
	memset(long_url, 'a', STATUS_URL_MAX);
	long_url[STATUS_URL_MAX] = 0;
	t = replaced(text, "https://ingest.example:8750/v1/batches", long_url);
	refused(t, STATUS_E_VALUE, "key \"upload.url\" is longer than 2047 bytes");
	free(t);
	t = replaced(text, "https://ingest.example:8750/v1/batches", "http://a\\u0000b");
	refused(t, STATUS_E_VALUE, "key \"upload.url\" holds a NUL character");
	free(t);
	free(long_url);
	free(text);
}

static void another_schema_is_refused(void **state)
{
	struct status s;
	char *text, *t;

	(void)state;
	sample(&s);
	text = formatted(&s);
	t = replaced(text, "tracer.status.v1", "tracer.status.v2");
	refused(t, STATUS_E_SCHEMA, "schema \"tracer.status.v2\", not tracer.status.v1");
	free(t);
	t = replaced(text, "\"schema\":\"tracer.status.v1\",", "");
	refused(t, STATUS_E_SCHEMA, "no \"schema\" key");
	free(t);
	t = replaced(text, "\"schema\":\"tracer.status.v1\"", "\"schema\":1");
	refused(t, STATUS_E_SCHEMA, "\"schema\" is a number");
	free(t);
	t = replaced(text, "tracer.status.v1", "tracer.status.v1\\u0000");
	refused(t, STATUS_E_SCHEMA, "not tracer.status.v1");
	free(t);
	refused("[1,2]\n", STATUS_E_SCHEMA, "not a JSON object but an array");
	refused("{\"schema\":\"tracer.run.v1\",\"run_id\":\"x\"}\n", STATUS_E_SCHEMA, "schema \"tracer.run.v1\"");
	free(text);
}

static void a_truncated_or_empty_file_is_refused(void **state)
{
	struct status s;
	char *text;

	(void)state;
	sample(&s);
	text = formatted(&s);
	refused("", STATUS_E_INCOMPLETE, "no end of line");
	/* Cut anywhere before its newline: being written (or a crash mid-write). */
	for (size_t cut = 0; cut < strlen(text); cut += 7) {
		char *t = strndup(text, cut);

		assert_non_null(t);
		refused(t, STATUS_E_INCOMPLETE, "no end of line");
		free(t);
	}
	/* Cut, then a newline: a damaged file. */
	text[strlen(text) / 2] = '\n';
	refused(text, STATUS_E_JSON, "not valid JSON at byte");
	refused("\n", STATUS_E_JSON, "the text ends before the value does");
	free(text);
}

static void shown_strings_are_escaped_as_in_the_file(void **state)
{
	char out[64];

	(void)state;
	status_shown("HTTP 400: {\"error\":\"a\\b\"}", out, sizeof(out));
	assert_string_equal(out, "HTTP 400: {\\\"error\\\":\\\"a\\\\b\\\"}");
	status_shown("\x1b[31mred\x7f", out, sizeof(out));
	assert_string_equal(out, "\\u001b[31mred\\u007f");
	status_shown("https://ingest.example/v1", out, sizeof(out));
	assert_string_equal(out, "https://ingest.example/v1");
	status_shown("0123456789", out, 5);
	assert_string_equal(out, "0123");
}

/* ---- the JSON reader --------------------------------------------------- */

#define NODES 64

static int parse(const char *text, struct json_doc *d, struct json_node *nodes)
{
	return json_parse(d, text, strlen(text), nodes, NODES);
}

static void json_refused(const char *text, enum json_parse_error e)
{
	struct json_node nodes[NODES];
	struct json_doc d;

	if (parse(text, &d, nodes) != -EINVAL || d.err != e)
		fail_msg("'%s': error %d (%s), want %d (%s)", text, d.err, json_parse_error_name(d.err), e,
			 json_parse_error_name(e));
	assert_null(json_root(&d));
}

static void json_accepts_what_rfc8259_allows(void **state)
{
	static const char *const ok[] = {
		"0", "-0", "1.5", "-1.5e+10", "1E-3", "true", "false", "null", "\"\"", "[]", "{}",
		" \t\r\n{ \"a\" : [ 1 , { } , [ ] ] } \n", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"",
		"\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", "{\"a\":1,\"b\":2}", "\"\x7f\"",
	};
	struct json_node nodes[NODES];
	struct json_doc d;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (parse(ok[i], &d, nodes))
			fail_msg("'%s' refused: %s at %zu", ok[i], json_parse_error_name(d.err), d.err_at);
}

static void json_refuses_what_rfc8259_does_not(void **state)
{
	(void)state;
	json_refused("", JSON_E_END);
	json_refused("  ", JSON_E_END);
	json_refused("{\"a\":1", JSON_E_END);
	json_refused("{\"a\":", JSON_E_END);
	json_refused("\"abc", JSON_E_END);
	json_refused("[1,2", JSON_E_END);
	json_refused("tru", JSON_E_END);
	json_refused("{\"a\":1,}", JSON_E_TOKEN);
	json_refused("[1,]", JSON_E_TOKEN);
	json_refused("{a:1}", JSON_E_TOKEN);
	json_refused("{'a':1}", JSON_E_TOKEN);
	json_refused("// c\n1", JSON_E_TOKEN);
	json_refused("NaN", JSON_E_TOKEN);
	json_refused("+1", JSON_E_TOKEN);
	json_refused("truth", JSON_E_TOKEN);
	json_refused("truex", JSON_E_TRAILING);
	json_refused("trUe", JSON_E_TOKEN);
	json_refused("01", JSON_E_NUMBER);
	json_refused("1.", JSON_E_END);
	json_refused("1.x", JSON_E_NUMBER);
	json_refused("-", JSON_E_END);
	json_refused("-a", JSON_E_NUMBER);
	json_refused("1e", JSON_E_END);
	json_refused("1e+", JSON_E_END);
	json_refused("\"a\tb\"", JSON_E_CONTROL);
	json_refused("\"a\nb\"", JSON_E_CONTROL);
	json_refused("\"\\x41\"", JSON_E_ESCAPE);
	json_refused("\"\\u12g4\"", JSON_E_ESCAPE);
	json_refused("\"\\ud800\"", JSON_E_SURROGATE);
	json_refused("\"\\udc00\"", JSON_E_SURROGATE);
	json_refused("\"\\ud800\\u0041\"", JSON_E_SURROGATE);
	json_refused("\"\xc3\"", JSON_E_UTF8);
	json_refused("\"\xed\xa0\x80\"", JSON_E_UTF8);
	json_refused("\"\xc0\xaf\"", JSON_E_UTF8);
	json_refused("{\"a\":1,\"a\":2}", JSON_E_DUPLICATE);
	json_refused("{\"a\":1,\"\\u0061\":2}", JSON_E_DUPLICATE);
	json_refused("1 2", JSON_E_TRAILING);
	json_refused("{}}", JSON_E_TRAILING);
	json_refused("[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", JSON_E_DEPTH);
}

static void json_is_bounded_by_its_nodes_and_depth(void **state)
{
	struct json_node few[4], nodes[NODES];
	struct json_doc d;
	char deep[2 * (JSON_PARSE_MAX_DEPTH + 1)];

	(void)state;
	assert_int_equal(json_parse(&d, "[1,2,3]", 7, few, 4), 0);
	assert_int_equal(json_root(&d)->count, 3);
	assert_int_equal(json_parse(&d, "[1,2,3,4]", 9, few, 4), -EINVAL);
	assert_int_equal(d.err, JSON_E_TOO_MANY);
	/* JSON_PARSE_MAX_DEPTH levels are taken; one more is refused. */
	memset(deep, '[', JSON_PARSE_MAX_DEPTH);
	memset(deep + JSON_PARSE_MAX_DEPTH, ']', JSON_PARSE_MAX_DEPTH);
	assert_int_equal(json_parse(&d, deep, 2 * JSON_PARSE_MAX_DEPTH, nodes, NODES), 0);
	memset(deep, '[', JSON_PARSE_MAX_DEPTH + 1);
	memset(deep + JSON_PARSE_MAX_DEPTH + 1, ']', JSON_PARSE_MAX_DEPTH + 1);
	assert_int_equal(json_parse(&d, deep, sizeof(deep), nodes, NODES), -EINVAL);
	assert_int_equal(d.err, JSON_E_DEPTH);
	assert_int_equal(d.err_at, JSON_PARSE_MAX_DEPTH);
}

static void json_reads_values_of_their_type_only(void **state)
{
	static const char text[] = "{\"n\":18446744073709551615,\"big\":18446744073709551616,\"neg\":-1,\"f\":0.5,"
				   "\"s\":\"a\\u00e9\\ud83d\\ude00\\n\",\"b\":false,\"z\":null,\"k\\u0065y\":7}";
	struct json_node nodes[NODES];
	struct json_doc d;
	const struct json_node *root;
	char buf[32];
	uint64_t v;
	size_t len;
	bool b;

	(void)state;
	assert_int_equal(parse(text, &d, nodes), 0);
	root = json_root(&d);
	assert_int_equal(json_get_u64(json_member(&d, root, "n"), &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(json_get_u64(json_member(&d, root, "big"), &v), -ERANGE);
	assert_int_equal(json_get_u64(json_member(&d, root, "neg"), &v), -EINVAL);
	assert_int_equal(json_get_u64(json_member(&d, root, "f"), &v), -EINVAL);
	assert_int_equal(json_get_u64(json_member(&d, root, "s"), &v), -EINVAL);
	assert_int_equal(json_get_string(&d, json_member(&d, root, "s"), buf, sizeof(buf), &len), 0);
	assert_string_equal(buf, "a\xc3\xa9\xf0\x9f\x98\x80\n");
	assert_int_equal(len, 8);
	assert_int_equal(json_get_string(&d, json_member(&d, root, "s"), buf, 8, &len), -ENOSPC);
	assert_int_equal(json_get_string(&d, json_member(&d, root, "n"), buf, sizeof(buf), &len), -EINVAL);
	assert_int_equal(json_get_bool(json_member(&d, root, "b"), &b), 0);
	assert_false(b);
	assert_int_equal(json_get_bool(json_member(&d, root, "z"), &b), -EINVAL);
	assert_int_equal(json_get_u64(json_member(&d, root, "key"), &v), 0); /* found by its decoded name */
	assert_int_equal(v, 7);
	assert_null(json_member(&d, root, "ke"));
	assert_null(json_member(&d, root, "keys"));
	assert_null(json_member(&d, json_member(&d, root, "n"), "x"));
}

/* Signed whole numbers and doubles: the full int64 range, nothing wrapped, nothing but numbers. */
static void json_reads_signed_numbers_and_doubles(void **state)
{
	static const char text[] = "{\"min\":-9223372036854775808,\"under\":-9223372036854775809,"
				   "\"max\":9223372036854775807,\"over\":9223372036854775808,\"m0\":-0,"
				   "\"neg\":-42,\"f\":-1.5e3,\"e\":2E-2,\"inf\":1e999,\"tiny\":1e-999,\"s\":\"1\","
				   "\"long\":1.00000000000000000000000000000000000000000000000000000000000000001}";
	struct json_node nodes[NODES];
	struct json_doc d;
	const struct json_node *root;
	int64_t i = 1;
	uint64_t u;
	double x = 1;

	(void)state;
	assert_int_equal(parse(text, &d, nodes), 0);
	root = json_root(&d);
	assert_int_equal(json_get_i64(json_member(&d, root, "min"), &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(json_get_i64(json_member(&d, root, "under"), &i), -EINVAL); /* past -2^63: no whole value */
	assert_int_equal(json_get_i64(json_member(&d, root, "max"), &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(json_get_i64(json_member(&d, root, "over"), &i), -ERANGE);
	assert_int_equal(json_get_u64(json_member(&d, root, "over"), &u), 0); /* a u64 still */
	assert_int_equal(json_get_i64(json_member(&d, root, "m0"), &i), 0);
	assert_int_equal(i, 0);
	assert_int_equal(json_get_u64(json_member(&d, root, "m0"), &u), -EINVAL);
	assert_int_equal(json_get_i64(json_member(&d, root, "neg"), &i), 0);
	assert_int_equal(i, -42);
	assert_int_equal(json_get_u64(json_member(&d, root, "neg"), &u), -EINVAL);
	assert_int_equal(json_get_i64(json_member(&d, root, "f"), &i), -EINVAL);
	assert_int_equal(json_get_i64(json_member(&d, root, "s"), &i), -EINVAL);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "f"), &x), 0);
	assert_true(x == -1500.0);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "e"), &x), 0);
	assert_true(x == 0.02);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "neg"), &x), 0);
	assert_true(x == -42.0);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "inf"), &x), -ERANGE);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "tiny"), &x), 0); /* the nearest double: 0 */
	assert_true(x == 0.0);
	assert_int_equal(json_get_double(&d, json_member(&d, root, "long"), &x), -ERANGE); /* too long to read */
	assert_int_equal(json_get_double(&d, json_member(&d, root, "s"), &x), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_is_written_reads_back_the_same),
		cmocka_unit_test(the_file_keeps_the_v1_key_order),
		cmocka_unit_test(the_first_line_is_read_and_a_stale_tail_after_it_ignored),
		cmocka_unit_test(unknown_keys_are_ignored),
		cmocka_unit_test(a_missing_key_is_named),
		cmocka_unit_test(keys_added_later_may_be_missing),
		cmocka_unit_test(a_key_of_the_wrong_type_is_named),
		cmocka_unit_test(huge_numbers_are_refused_not_wrapped),
		cmocka_unit_test(strings_too_long_or_with_a_nul_are_refused),
		cmocka_unit_test(another_schema_is_refused),
		cmocka_unit_test(a_truncated_or_empty_file_is_refused),
		cmocka_unit_test(shown_strings_are_escaped_as_in_the_file),
		cmocka_unit_test(json_accepts_what_rfc8259_allows),
		cmocka_unit_test(json_refuses_what_rfc8259_does_not),
		cmocka_unit_test(json_is_bounded_by_its_nodes_and_depth),
		cmocka_unit_test(json_reads_values_of_their_type_only),
		cmocka_unit_test(json_reads_signed_numbers_and_doubles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
