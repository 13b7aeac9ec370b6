/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A run as OTLP/JSON (view/otlp.c, issue 28), on a lake made by hand
 * (store_open for the schema, rows INSERTed with sqlite3): every request
 * strict JSON in OTLP/JSON's forms (hex ids, int64 as strings); the tree
 * (the root, steps under it, processes under their step or the root);
 * events on the process, step or root their signal names; a process of
 * another host under its own resource; argv only when asked; the same
 * ids on a second export and other ids for another run; a run cut into
 * several whole requests; a sender's failure stops the export.
 * tests/e2e/test_export_otlp.sh parses what a real run gives against the
 * official protobuf definitions.
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
#include <sqlite3.h>

#include "json_parse.h"
#include "otlp.h"
#include "store.h"

#define HOST "0123456789abcdef0123456789abcdef"
#define HOST2 "1123456789abcdef0123456789abcdef"
#define BOOT "fedcba9876543210fedcba9876543210"
#define NPROC 10 /* run 1's processes: 100 (step a), 101..108 (step b), 300 (HOST2, no step) */

/*
 * Run 1: steps a (failed) and b; process 100 in a, OOM-killed, with a hostile argv and cwd; 101..108 in b;
 * 300 on HOST2, in no step. Signals: oom_kill of 100 (its process), stalled of step b with a pid no process
 * has (its step), failed of the run (the root). Run 2: the same rows' shape under another run key.
 */
static const char fill_sql[] =
	"INSERT INTO runs (run_id, host_id, boot_id, seq, batch_hash, run_key, pipeline, engine, state, "
	"start_ns, end_ns, exit_code, host_name, host_cloud, host_instance_type, command) VALUES "
	"(1, '" HOST "', '" BOOT "', 1, 'h1', 'BOOT-1-1', 'snakemake:/w/Snakefile', 'snakemake', 'failed', "
	"1700000000000000000, 1700000100000000000, 1, 'node1', 'aws', 'm5.large', '[\"snakemake\",\"-c2\"]'), "
	"(2, '" HOST "', '" BOOT "', 2, 'h2', 'BOOT-2-2', 'snakemake:/w/Snakefile', 'snakemake', 'succeeded', "
	"1700000200000000000, 1700000300000000000, 0, 'node1', NULL, NULL, NULL);\n"
	"INSERT INTO steps (run_id, idx, step_id, name, tools, start_ns, end_ns, failed, exit_code, state) VALUES "
	"(1, 0, 'a', 'align', '[\"bwa\"]', 1700000001000000000, 1700000050000000000, 1, 137, 'failed'), "
	"(1, 1, 'b', 'sort', '[]', 1700000051000000000, 1700000090000000000, 0, 0, 'succeeded'), "
	"(2, 0, 'a', 'align', '[]', 1700000201000000000, 1700000250000000000, 0, 0, 'succeeded');\n"
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, ppid, exe, argv, cwd, "
	"exit_ts_ns, exit_code, signal, oom_killed, utime_ns, stime_ns, runtime_ns, peak_rss_bytes, run_id, step, "
	"tool) VALUES "
	"('" HOST "', '" BOOT "', 100, 5000, 1700000001000000000, 1700000040000000000, 1, '/usr/bin/bwa', "
	"'[\"bwa\",\"q\\\"uote\",\"\\u0001\"]', CAST(X'2f746d702fff' AS TEXT), 40000, NULL, 9, 1, 3000, 1000, "
	"4000000000, 52428800, 1, 'a', 'bwa'), "
	"('" HOST2 "', '" BOOT "', 300, 9000, 1700000002000000000, 1700000003000000000, 1, '/usr/bin/job', "
	"'[\"job\"]', '/w', 10000, 0, 0, 0, 1, 0, 5000000, 6000000, 1, NULL, NULL), "
	"('" HOST "', '" BOOT "', 100, 5001, 1700000201000000000, 1700000240000000000, 1, '/usr/bin/bwa', "
	"'[\"bwa\"]', '/w', 40000, 0, 0, 0, 3000, 1000, 4000000000, 52428800, 2, 'a', 'bwa');\n"
	"WITH RECURSIVE n(i) AS (SELECT 101 UNION ALL SELECT i + 1 FROM n WHERE i < 108) "
	"INSERT INTO processes (host_id, boot_id, tgid, start_ns, start_real_ns, end_real_ns, ppid, exe, run_id, "
	"step, tool, exit_code) SELECT '" HOST "', '" BOOT "', i, i * 1000, 1700000051000000000 + i, "
	"1700000089000000000, 1, '/usr/bin/samtools', 1, 'b', 'samtools', 0 FROM n;\n"
	"INSERT INTO signals (host_id, boot_id, seq, run_id, source, kind, pid, start_ns, step, tool, detail) VALUES "
	"('" HOST "', '" BOOT "', 10, 1, 'live', 'oom_kill', 100, 5000, 'a', 'bwa', '{\"kind\":\"oom_kill\"}'), "
	"('" HOST "', '" BOOT "', 11, 1, 'live', 'stalled', 4242, 1, 'b', 'samtools', NULL), "
	"('" HOST "', '" BOOT "', 12, 1, 'live', 'failed', 1, 1, NULL, 'snakemake', NULL);\n";

struct fx {
	char dir[64], db[96];
	struct store *st;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	sqlite3 *db = NULL;
	char err[256], *msg = NULL;
	int rc;

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_view_otlp.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof(f->db), "%s/lake.db", f->dir);
	if (store_open(&f->st, f->db, false, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	store_close(f->st);
	if (sqlite3_open(f->db, &db) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(db, fill_sql, NULL, NULL, &msg);
	if (rc)
		fprintf(stderr, "fill: %s\n", msg);
	sqlite3_free(msg);
	sqlite3_close(db);
	if (rc || store_open(&f->st, f->db, true, err, sizeof(err)))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* ---- the requests, parsed -------------------------------------------------------------------- */

#define SPANS_MAX 64
#define NODES 8192

struct span {
	char trace[33], id[17], parent[17], name[64], host[40];
	char events[4][32];
	unsigned nevents;
	bool error, has_argv;
	long long pid;          /* process.pid, -1 if none */
};

struct got {
	char *req[16];
	size_t len[16], nreq;
	struct span s[SPANS_MAX];
	size_t n;
	int fail_at;            /* the sender fails on this request (1-based), 0: never */
};

static void get_str(const struct json_doc *d, const struct json_node *obj, const char *name, char *buf, size_t cap)
{
	const struct json_node *n = json_member(d, obj, name);

	buf[0] = 0;
	if (n)
		assert_int_equal(json_get_string(d, n, buf, cap, NULL), 0);
}

static bool is_hex(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* An attribute's value object, or NULL. */
static const struct json_node *attr(const struct json_doc *d, const struct json_node *obj, const char *key)
{
	const struct json_node *list = json_member(d, obj, "attributes");
	char k[96];

	for (const struct json_node *a = list ? json_first(d, list) : NULL; a; a = json_next(d, a)) {
		get_str(d, a, "key", k, sizeof(k));
		if (!strcmp(k, key))
			return json_member(d, a, "value");
	}
	return NULL;
}

/* Every int64 in OTLP/JSON is a decimal string. */
static void check_int_strings(const struct json_doc *d, const struct json_node *n)
{
	for (const struct json_node *c = json_first(d, n); c; c = json_next(d, c)) {
		char key[64] = "";

		if (n->type == JSON_OBJECT)
			assert_int_equal(json_get_key(d, c, key, sizeof(key), NULL), 0);
		if (!strcmp(key, "intValue") || !strcmp(key, "startTimeUnixNano") || !strcmp(key, "endTimeUnixNano") ||
		    !strcmp(key, "timeUnixNano"))
			assert_int_equal(c->type, JSON_STRING);
		if (c->type == JSON_OBJECT || c->type == JSON_ARRAY)
			check_int_strings(d, c);
	}
}

static void take_span(struct got *g, const struct json_doc *d, const struct json_node *sp, const char *host)
{
	struct span *s = &g->s[g->n++];
	const struct json_node *v, *ev, *st;
	char buf[32];

	assert_true(g->n <= SPANS_MAX);
	memset(s, 0, sizeof(*s));
	get_str(d, sp, "traceId", s->trace, sizeof(s->trace));
	get_str(d, sp, "spanId", s->id, sizeof(s->id));
	get_str(d, sp, "parentSpanId", s->parent, sizeof(s->parent));
	get_str(d, sp, "name", s->name, sizeof(s->name));
	snprintf(s->host, sizeof(s->host), "%s", host);
	assert_true(is_hex(s->trace, 32));
	assert_true(is_hex(s->id, 16));
	assert_true(!s->parent[0] || is_hex(s->parent, 16));
	s->pid = -1;
	if ((v = attr(d, sp, "process.pid"))) {
		get_str(d, v, "intValue", buf, sizeof(buf));
		s->pid = atoll(buf);
	}
	s->has_argv = attr(d, sp, "process.command_args") != NULL;
	for (ev = (v = json_member(d, sp, "events")) ? json_first(d, v) : NULL; ev && s->nevents < 4; ev = json_next(d, ev))
		get_str(d, ev, "name", s->events[s->nevents++], sizeof(s->events[0]));
	if ((st = json_member(d, sp, "status"))) {
		uint64_t code;

		assert_int_equal(json_get_u64(json_member(d, st, "code"), &code), 0);
		s->error = code == 2;
	}
}

static int collect(void *ctx, const char *json, size_t len, size_t spans)
{
	static struct json_node nodes[NODES];
	struct got *g = ctx;
	struct json_doc d;
	const struct json_node *rs, *r, *ss, *sp;
	size_t before = g->n;

	assert_true(g->nreq < 16);
	if (g->fail_at && (int)g->nreq + 1 == g->fail_at)
		return 7;
	g->req[g->nreq] = malloc(len);
	assert_non_null(g->req[g->nreq]);
	memcpy(g->req[g->nreq], json, len);
	g->len[g->nreq++] = len;
	assert_int_equal(json_parse(&d, json, len, nodes, NODES), 0);
	check_int_strings(&d, json_root(&d));
	rs = json_member(&d, json_root(&d), "resourceSpans");
	assert_non_null(rs);
	for (r = json_first(&d, rs); r; r = json_next(&d, r)) {
		const struct json_node *hid = attr(&d, json_member(&d, r, "resource"), "host.id");
		char host[40];

		assert_non_null(hid);
		get_str(&d, hid, "stringValue", host, sizeof(host));
		for (ss = json_first(&d, json_member(&d, r, "scopeSpans")); ss; ss = json_next(&d, ss))
			for (sp = json_first(&d, json_member(&d, ss, "spans")); sp; sp = json_next(&d, sp))
				take_span(g, &d, sp, host);
	}
	assert_int_equal(g->n - before, spans);
	return 0;
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->nreq; i++)
		free(g->req[i]);
	memset(g, 0, sizeof(*g));
}

struct runs {
	struct store_run r;
	int (*then)(struct fx *f, const struct store_run *r, void *arg);
	struct fx *f;
	void *arg;
	int rc;
};

/* otlp_run on run name (the store_run lives only in its callback). */
static int on_run(void *ctx, const struct store_run *r)
{
	struct runs *x = ctx;

	x->rc = x->then(x->f, r, x->arg);
	return 0;
}

struct call {
	struct otlp_options o;
	struct got *g;
	char err[256];
};

static int do_export(struct fx *f, const struct store_run *r, void *arg)
{
	struct call *c = arg;

	return otlp_run(f->st, r, &c->o, collect, c->g, c->err, sizeof(c->err));
}

static int export(struct fx *f, const char *run, struct otlp_options o, struct got *g, char *err)
{
	struct call c = { .o = o, .g = g };
	struct runs x = { .then = do_export, .f = f, .arg = &c };

	assert_int_equal(store_run(f->st, run, on_run, &x), 0);
	if (err)
		strcpy(err, c.err);
	return x.rc;
}

static const struct span *by_pid(const struct got *g, long long pid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->s[i].pid == pid)
			return &g->s[i];
	return NULL;
}

static const struct span *by_name(const struct got *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->s[i].name, name) && g->s[i].pid < 0)
			return &g->s[i];
	return NULL;
}

/* ---- the tests ------------------------------------------------------------------------------- */

static void a_run_is_a_tree_of_its_steps_and_processes(void **state)
{
	struct fx *f = *state;
	struct got g = { 0 };
	const struct span *root, *a, *b, *p;

	assert_int_equal(export(f, "1", (struct otlp_options){ .version = "t" }, &g, NULL), 0);
	assert_int_equal(g.nreq, 1);
	assert_int_equal(g.n, 1 + 2 + NPROC);
	root = by_name(&g, "snakemake:/w/Snakefile");
	a = by_name(&g, "align");
	b = by_name(&g, "sort");
	assert_non_null(root);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(root->parent, "");
	assert_true(root->error); /* the run failed */
	assert_string_equal(a->parent, root->id);
	assert_true(a->error);
	assert_string_equal(b->parent, root->id);
	assert_false(b->error);
	for (size_t i = 0; i < g.n; i++) {
		assert_string_equal(g.s[i].trace, root->trace);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(g.s[i].id, g.s[k].id);
	}
	p = by_pid(&g, 100);
	assert_string_equal(p->parent, a->id);
	assert_true(p->error); /* OOM-killed */
	assert_string_equal(p->name, "bwa");
	for (long long pid = 101; pid <= 108; pid++)
		assert_string_equal(by_pid(&g, pid)->parent, b->id);
	p = by_pid(&g, 300);
	assert_string_equal(p->parent, root->id); /* no step */
	assert_string_equal(p->host, HOST2);
	assert_string_equal(p->name, "job");
	assert_string_equal(by_pid(&g, 100)->host, HOST);
	assert_string_equal(root->host, HOST);
	got_free(&g);
}

static void signals_are_events_of_the_process_step_or_root_they_name(void **state)
{
	struct fx *f = *state;
	struct got g = { 0 };
	const struct span *p, *b, *root;

	assert_int_equal(export(f, "1", (struct otlp_options){ 0 }, &g, NULL), 0);
	p = by_pid(&g, 100);
	b = by_name(&g, "sort");
	root = by_name(&g, "snakemake:/w/Snakefile");
	assert_int_equal(p->nevents, 1);
	assert_string_equal(p->events[0], "oom_kill");
	assert_int_equal(b->nevents, 1); /* its pid is no process of the run: its step */
	assert_string_equal(b->events[0], "stalled");
	assert_int_equal(root->nevents, 1);
	assert_string_equal(root->events[0], "failed");
	assert_int_equal(by_name(&g, "align")->nevents, 0);
	got_free(&g);
}

static void argv_only_when_asked_and_hostile_bytes_stay_json(void **state)
{
	struct fx *f = *state;
	struct got g = { 0 };

	assert_int_equal(export(f, "1", (struct otlp_options){ 0 }, &g, NULL), 0);
	for (size_t i = 0; i < g.n; i++)
		assert_false(g.s[i].has_argv);
	assert_null(memmem(g.req[0], g.len[0], "q\\\"uote", 7));
	got_free(&g);
	assert_int_equal(export(f, "1", (struct otlp_options){ .with_argv = true }, &g, NULL), 0);
	assert_true(by_pid(&g, 100)->has_argv);
	assert_non_null(memmem(g.req[0], g.len[0], "{\"stringValue\":\"q\\\"uote\"}", 25));
	assert_non_null(memmem(g.req[0], g.len[0], "\\u0001", 6));
	assert_non_null(memmem(g.req[0], g.len[0], "\"/tmp/\xef\xbf\xbd\"", 9)); /* 0xff: U+FFFD */
	got_free(&g);
}

static void ids_are_the_same_on_a_second_export_and_differ_between_runs(void **state)
{
	struct fx *f = *state;
	struct got g1 = { 0 }, g2 = { 0 }, g3 = { 0 };

	assert_int_equal(export(f, "1", (struct otlp_options){ 0 }, &g1, NULL), 0);
	assert_int_equal(export(f, "1", (struct otlp_options){ 0 }, &g2, NULL), 0);
	assert_int_equal(g1.len[0], g2.len[0]);
	assert_memory_equal(g1.req[0], g2.req[0], g1.len[0]);
	assert_int_equal(export(f, "2", (struct otlp_options){ 0 }, &g3, NULL), 0);
	assert_int_equal(g3.n, 1 + 1 + 1);
	assert_string_not_equal(g3.s[0].trace, g1.s[0].trace);
	/* the same step id and pid in another run: other span ids */
	assert_string_not_equal(by_name(&g3, "align")->id, by_name(&g1, "align")->id);
	assert_string_not_equal(by_pid(&g3, 100)->id, by_pid(&g1, 100)->id);
	got_free(&g1);
	got_free(&g2);
	got_free(&g3);
}

static void a_big_run_goes_in_several_whole_requests(void **state)
{
	struct fx *f = *state;
	struct got g = { 0 }, whole = { 0 };

	assert_int_equal(export(f, "1", (struct otlp_options){ .spans_per_request = 3 }, &g, NULL), 0);
	assert_int_equal(g.nreq, (1 + 2 + NPROC + 2) / 3); /* 13 spans, 3 a request: 5 requests */
	assert_int_equal(g.n, 1 + 2 + NPROC);
	assert_int_equal(export(f, "1", (struct otlp_options){ 0 }, &whole, NULL), 0);
	for (size_t i = 0; i < whole.n; i++) { /* the same spans, the same ids, however cut */
		bool found = false;

		for (size_t k = 0; k < g.n; k++)
			found |= !strcmp(g.s[k].id, whole.s[i].id) && !strcmp(g.s[k].parent, whole.s[i].parent);
		assert_true(found);
	}
	got_free(&g);
	got_free(&whole);
}

static void a_failing_sender_stops_the_export_with_its_status(void **state)
{
	struct fx *f = *state;
	struct got g = { .fail_at = 2 };
	char err[256];

	assert_int_equal(export(f, "1", (struct otlp_options){ .spans_per_request = 3 }, &g, err), 7);
	assert_int_equal(g.nreq, 1); /* the first went; the second failed; no third */
	got_free(&g);
}

static void results_follow_states(void **state)
{
	(void)state;
	assert_string_equal(otlp_result("succeeded"), "success");
	assert_string_equal(otlp_result("failed"), "failure");
	assert_string_equal(otlp_result("lost"), "error");
	assert_null(otlp_result("running"));
	assert_null(otlp_result(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_run_is_a_tree_of_its_steps_and_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(signals_are_events_of_the_process_step_or_root_they_name, setup, teardown),
		cmocka_unit_test_setup_teardown(argv_only_when_asked_and_hostile_bytes_stay_json, setup, teardown),
		cmocka_unit_test_setup_teardown(ids_are_the_same_on_a_second_export_and_differ_between_runs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_big_run_goes_in_several_whole_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(a_failing_sender_stops_the_export_with_its_status, setup, teardown),
		cmocka_unit_test(results_follow_states),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
