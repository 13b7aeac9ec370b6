/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: arbitrary records through the whole processor pipeline
 * - decode (untrusted bytes), process table (bounded, in any order, with
 * hostile pids, start times and parent links), sweep, and both report
 * writers - with abort() on a broken invariant: the JSON report must be
 * valid JSON, the summary must hold no control character but newlines,
 * the table must stay within its bound.
 *
 * Input:
 *   [0]     flags: bit 0 run mode (root pid from [1..2]), bits 1-3 table size
 *           (1 << (2 * n) entries, 1..16384), bit 4 sweep every 8 records,
 *           bit 5 a 4 KiB image budget (argv dropped, earlier images not kept)
 *   [1..2]  root pid (little endian)
 *   [3..10] CLOCK_MONOTONIC to CLOCK_REALTIME offset
 *   then records: [type][len lo][len hi][len bytes]; the type byte's low 6
 *   bits are the ring type; bit 6 asks for a valid header (type, version)
 *   and bit 7 for consistent exec lengths, so that mutations also reach the
 *   code behind the decoder. A short last record takes what is left.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "proctab.h"
#include "records.h"
#include "report.h"
#include "session.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PREFIX 11u
#define FIX_HEADER 0x40u
#define FIX_EXEC 0x80u

static struct session s;

/* ---- JSON validity ------------------------------------------------------ */

struct jp {
	const char *s;
	size_t n, i;
	int depth;
};

static int jvalue(struct jp *p);

static void jws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\n' || p->s[p->i] == '\t' || p->s[p->i] == '\r'))
		p->i++;
}

static int jstring(struct jp *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return 0;
	for (p->i++; p->i < p->n;) {
		unsigned char c = (unsigned char)p->s[p->i];
		size_t len;

		if (c == '"') {
			p->i++;
			return 1;
		}
		if (c < 0x20 || c == 0x7f)
			return 0;
		if (c == '\\') {
			if (++p->i >= p->n)
				return 0;
			c = (unsigned char)p->s[p->i++];
			if (c == 'u') {
				if (p->n - p->i < 4)
					return 0;
				p->i += 4;
			} else if (!c || !strchr("\"\\/bfnrt", c)) {
				return 0;
			}
			continue;
		}
		len = json_utf8_len((const unsigned char *)p->s + p->i, p->n - p->i);
		if (len == 0)
			return 0;
		p->i += len;
	}
	return 0;
}

static int jcontainer(struct jp *p, char close, int object)
{
	if (++p->depth > JSON_MAX_DEPTH)
		return 0;
	p->i++;
	jws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return 1;
	}
	for (;;) {
		jws(p);
		if (object) {
			if (!jstring(p))
				return 0;
			jws(p);
			if (p->i >= p->n || p->s[p->i++] != ':')
				return 0;
		}
		if (!jvalue(p))
			return 0;
		jws(p);
		if (p->i >= p->n)
			return 0;
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i++] != close)
			return 0;
		p->depth--;
		return 1;
	}
}

static int jvalue(struct jp *p)
{
	size_t start;

	jws(p);
	if (p->i >= p->n)
		return 0;
	switch (p->s[p->i]) {
	case '{': return jcontainer(p, '}', 1);
	case '[': return jcontainer(p, ']', 0);
	case '"': return jstring(p);
	case 't': p->i += 4; return p->i <= p->n && !memcmp(p->s + p->i - 4, "true", 4);
	case 'f': p->i += 5; return p->i <= p->n && !memcmp(p->s + p->i - 5, "false", 5);
	case 'n': p->i += 4; return p->i <= p->n && !memcmp(p->s + p->i - 4, "null", 4);
	default:
		start = p->i;
		if (p->s[p->i] == '-')
			p->i++;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		return p->i > start && p->s[p->i - 1] != '-';
	}
}

/* ---- driving ----------------------------------------------------------- */

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Make the record's header (and exec lengths) valid on request, from a private copy. */
static void fix_up(uint8_t *rec, uint32_t len, unsigned type, unsigned flags)
{
	if ((flags & FIX_HEADER) && len >= sizeof(struct tr_hdr)) {
		struct tr_hdr h;

		memcpy(&h, rec, sizeof(h));
		h.type = (__u16)type;
		h.version = RECORDS_VERSION;
		memcpy(rec, &h, sizeof(h));
	}
	if ((flags & FIX_EXEC) && type == TR_EXEC && len > sizeof(struct tr_exec)) {
		struct tr_exec e;
		uint32_t room = len - (uint32_t)sizeof(e);

		memcpy(&e, rec, sizeof(e));
		e.path_len = 1 + e.path_len % (room < TR_PATH_MAX ? room : TR_PATH_MAX);
		e.argv_len = room - e.path_len;
		if (e.argv_true_len < e.argv_len)
			e.argv_true_len = e.argv_len;
		for (uint32_t i = 0; i + 1 < e.path_len; i++)
			if (!rec[sizeof(e) + i])
				rec[sizeof(e) + i] = '/';
		rec[sizeof(e) + e.path_len - 1] = 0;
		memcpy(rec, &e, sizeof(e));
	}
}

static void check_outputs(const struct report_input *in)
{
	struct obuf o;
	struct jp p;

	obuf_init_mem(&o, 64u << 20);
	CHECK(report_json(&o, &s.tab, in) == 0);
	p = (struct jp){ .s = o.buf, .n = o.len };
	CHECK(jvalue(&p));
	jws(&p);
	CHECK(p.i == o.len);
	obuf_free(&o);

	obuf_init_mem(&o, 64u << 20);
	CHECK(report_summary(&o, &s.tab, in) == 0);
	for (size_t i = 0; i < o.len; i++)
		CHECK((unsigned char)o.buf[i] >= 0x20 || o.buf[i] == '\n');
	obuf_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rec[DECODE_MAX_LEN + 64];
	static const char *const cmd[] = { "fuzz", "\x1b[1m", "\xff" };
	struct report_input in = { .command = cmd, .ncommand = 3, .exit_known = true, .exit_code = 1 };
	uint8_t flags = size > 0 ? data[0] : 0;
	uint32_t root = (flags & 1) && size >= 3 ? (uint32_t)get_le(data + 1, 2) : 0;
	uint32_t max = 1u << (2 * ((flags >> 1) & 7));
	unsigned n = 0;

	if (size < PREFIX)
		return 0;
	in.mono_to_real_ns = get_le(data + 3, 8);
	if (session_init(&s, max, root, 42))
		abort();
	if (flags & 0x20)
		s.tab.image_budget = 4096;
	for (size_t at = PREFIX; at + 3 <= size; n++) {
		unsigned tb = data[at], type = tb & 63;
		uint32_t len = (uint32_t)get_le(data + at + 1, 2);

		at += 3;
		if (len > size - at)
			len = (uint32_t)(size - at);
		if (len > sizeof(rec))
			len = sizeof(rec);
		memcpy(rec, data + at, len);
		at += len;
		fix_up(rec, len, type, tb);
		session_record(&s, type, rec, len, NULL);
		CHECK(s.tab.used <= s.tab.max);
		/* Over the budget only path-and-tool images are added: at most one per process. */
		CHECK(s.tab.image_bytes <= s.tab.image_budget +
			(uint64_t)s.tab.used * (sizeof(struct proc_image) + TR_PATH_MAX + TOOL_NAME_MAX + 2));
		if ((flags & 0x10) && n % 8 == 7)
			proctab_sweep(&s.tab);
	}
	report_agent_from_session(&in.agent, &s);
	check_outputs(&in);
	proctab_sweep(&s.tab);
	CHECK(s.tab.used <= s.tab.max);
	session_free(&s);
	CHECK(s.tab.image_bytes == 0); /* every image freed exactly once */
	return 0;
}
