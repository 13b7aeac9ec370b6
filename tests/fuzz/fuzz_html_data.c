/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the HTML report's data (view/html_data.c) from any
 * text, with abort() on a broken invariant. The report it reads came from
 * the processor or the lake, which a host fed.
 *
 * Invariants: html_data_write returns 0 or -EINVAL; refused, it says why
 * in a printable line and writes nothing. A text the strict reader takes
 * whole, an object whose processes, steps and signals are arrays (or
 * null, or absent), is never refused. Accepted, the data is strict JSON,
 * an object of schema tracer.page.v1 whose counts stay within the caps,
 * whose process columns are all as long as the processes listed, every
 * index in them naming a string or a row (a parent never itself), every
 * argv row listed once and in order; and escaped for the script element
 * it has no '<', '>', '&' or U+2028/U+2029 left.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "html.h"
#include "html_data.h"
#include "json.h"
#include "json_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct json_node *nodes_for(size_t len, uint32_t *cap)
{
	struct json_node *n;

	*cap = (uint32_t)(len / 2 + 16);
	n = calloc(*cap, sizeof(*n));
	CHECK(n != NULL);
	return n;
}

/* Would the strict reader take the text whole, as a report this should read? */
static bool reads_whole(const char *text, size_t size)
{
	static const char *const arrays[] = { "processes", "steps", "signals" };
	struct json_doc d;
	uint32_t cap;
	struct json_node *nodes = nodes_for(size * 2, &cap);
	bool ok = json_parse(&d, text, size, nodes, cap) == 0 && json_root(&d)->type == JSON_OBJECT;

	for (size_t k = 0; ok && k < 3; k++) {
		const struct json_node *m = json_member(&d, json_root(&d), arrays[k]);

		ok = !m || m->type == JSON_ARRAY || m->type == JSON_NULL;
	}
	free(nodes);
	return ok;
}

static uint64_t member_u64(const struct json_doc *d, const struct json_node *obj, const char *name)
{
	uint64_t v = 0;

	CHECK(json_get_u64(json_member(d, obj, name), &v) == 0);
	return v;
}

/* Each entry of a column an integer in [lo, hi), or null when nullable. */
static void check_column(const struct json_doc *d, const struct json_node *col, uint32_t rows, long long lo,
			 long long hi, bool nullable)
{
	CHECK(col && col->type == JSON_ARRAY && col->count == rows);
	for (const struct json_node *c = json_first(d, col); c; c = json_next(d, c)) {
		long long v;

		if (c->type == JSON_NULL) {
			CHECK(nullable);
			continue;
		}
		CHECK(c->type == JSON_NUMBER);
		v = strtoll(d->text + c->start, NULL, 10);
		CHECK(v >= lo && v < hi);
	}
}

static void check_data(const char *out, size_t len)
{
	static const char *const cols[] = { "pid", "start_us", "dur_us", "status", "cpu_us", "rss_kib" };
	struct json_doc d;
	uint32_t cap, rows, nstr, k = 0;
	struct json_node *nodes = nodes_for(len, &cap);
	const struct json_node *root, *counts, *procs, *argv;
	char schema[32];

	CHECK(json_parse(&d, out, len, nodes, cap) == 0);
	root = json_root(&d);
	CHECK(root->type == JSON_OBJECT);
	CHECK(json_get_string(&d, json_member(&d, root, "schema"), schema, sizeof(schema), NULL) == 0);
	CHECK(!strcmp(schema, HTML_DATA_SCHEMA));
	counts = json_member(&d, root, "counts");
	rows = (uint32_t)member_u64(&d, counts, "processes_listed");
	CHECK(rows <= member_u64(&d, counts, "processes") && rows <= HTML_DATA_MAX_PROCESSES);
	CHECK(member_u64(&d, counts, "steps_listed") <= HTML_DATA_MAX_STEPS);
	CHECK(member_u64(&d, counts, "signals_listed") <= HTML_DATA_MAX_SIGNALS);
	CHECK(member_u64(&d, counts, "argv_listed") <= HTML_DATA_MAX_ARGV);
	CHECK(json_member(&d, root, "steps")->count == member_u64(&d, counts, "steps_listed"));
	CHECK(json_member(&d, root, "step_stats")->count == member_u64(&d, counts, "steps_listed"));
	CHECK(json_member(&d, root, "signals")->count == member_u64(&d, counts, "signals_listed"));
	CHECK(json_member(&d, root, "tools")->count == member_u64(&d, counts, "tools_listed"));
	nstr = json_member(&d, root, "strings")->count;
	procs = json_member(&d, root, "processes");
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
		check_column(&d, json_member(&d, procs, cols[c]), rows, c == 3 ? -0x80000000ll : 0, 1ll << 62, true);
	check_column(&d, json_member(&d, procs, "tool"), rows, -1, nstr, false);
	check_column(&d, json_member(&d, procs, "step"), rows, -1, nstr, false);
	check_column(&d, json_member(&d, procs, "exe"), rows, -1, nstr, false);
	check_column(&d, json_member(&d, procs, "parent"), rows, -1, rows, false);
	for (const struct json_node *c = json_first(&d, json_member(&d, procs, "parent")); c; c = json_next(&d, c), k++)
		CHECK(strtoll(out + c->start, NULL, 10) != (long long)k);
	argv = json_member(&d, root, "argv");
	CHECK(argv->count == member_u64(&d, counts, "argv_listed"));
	{
		long long last = -1;

		for (const struct json_node *a = json_first(&d, argv); a; a = json_next(&d, a)) {
			const struct json_node *row = json_first(&d, a);
			long long r;

			CHECK(a->type == JSON_ARRAY && a->count == 2 && row->type == JSON_NUMBER);
			r = strtoll(out + row->start, NULL, 10);
			CHECK(r > last && r < rows && json_next(&d, row)->type == JSON_ARRAY);
			last = r;
		}
	}
	free(nodes);
}

static void check_escaped(const char *out, size_t len)
{
	struct obuf o;

	obuf_init_mem(&o, (size_t)1 << 30);
	html_put_script_json(&o, out, len);
	CHECK(o.err == 0);
	for (size_t i = 0; i < o.len; i++) {
		CHECK(o.buf[i] != '<' && o.buf[i] != '>' && o.buf[i] != '&');
		CHECK(!(i + 2 < o.len && (unsigned char)o.buf[i] == 0xe2 && (unsigned char)o.buf[i + 1] == 0x80 &&
			((unsigned char)o.buf[i + 2] == 0xa8 || (unsigned char)o.buf[i + 2] == 0xa9)));
	}
	obuf_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct obuf o;
	char err[160];
	int rc;

	obuf_init_mem(&o, (size_t)1 << 30);
	memset(err, 'X', sizeof(err));
	rc = html_data_write(&o, text, size, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		size_t n = strnlen(err, sizeof(err));

		CHECK(n > 0 && n < sizeof(err));
		for (size_t i = 0; i < n; i++)
			CHECK(err[i] >= 0x20 && err[i] < 0x7f);
		CHECK(o.len == 0);
		CHECK(!reads_whole(text, size));
	} else {
		check_data(o.buf, o.len);
		check_escaped(o.buf, o.len);
	}
	obuf_free(&o);
	return 0;
}
