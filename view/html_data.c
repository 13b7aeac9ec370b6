/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report's data from a tracer.run.v1 report (html_data.h).
 *
 * One pass over the text: its top-level object is walked here (braces,
 * names, commas), every value in it read by the strict reader
 * (json_parse), the processes, steps and signals one element at a time,
 * so that the nodes held are those of one element. What the page lists
 * of each process goes into a row; tools and steps are summed as they
 * come; the rest is worked out from the rows, then written.
 *
 * This walk of the outer levels finds where each value ends by counting
 * brackets outside strings; that is not a check, json_parse is: a value
 * the count got wrong does not parse, and the text is refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "html_data.h"
#include "json_parse.h"

#define NO_INDEX UINT32_MAX

struct span {
	uint32_t off, len; /* in the report's text */
};

/* A distinct string of the report: its text between the quotes, as written. */
struct str {
	struct span s;
	uint32_t tool; /* its tools[] entry, NO_INDEX: not yet a tool */
	uint32_t step; /* its stats[] entry, NO_INDEX: not yet a step */
};

struct tool_agg {
	uint32_t name; /* strings[] index; NO_INDEX: null; NO_INDEX - 1: "(more tools)" */
	uint64_t n, failed, cpu_ns, wall_ns, peak;
	bool peak_known;
};
#define TOOL_MORE (NO_INDEX - 1)

struct step_stat {
	uint64_t n, failed, running, cpu_ns;
	bool flagged;
};

enum { K_PID = 1, K_PPID = 2, K_START = 4, K_END = 8, K_CPU = 16, K_RSS = 32, K_STATUS = 64 };

/* A listed process. */
struct row {
	uint64_t pid, ppid, start, end, cpu_ns, rss;
	int64_t status;             /* exit code, or minus the signal */
	struct span argv, series;   /* len 0: none */
	uint32_t tool, step, exe;   /* strings[] index, NO_INDEX: null */
	int32_t parent;             /* rows[] index, -1: none listed */
	uint8_t known;              /* K_* */
	bool oom, failed, argv_kept;
};

/* The report's own members the page shows, copied as they are. */
static const char *const copied[] = { "schema", "command", "exit_code", "signal", "state", "start_ns", "end_ns",
				      "uid", "host", "agent", "run", "tune", "last_update_ns", "queue" };
#define NCOPIED (sizeof(copied) / sizeof(copied[0]))
enum { M_PROCESSES = NCOPIED, M_STEPS, M_SIGNALS, NMEMBERS };

struct hd {
	const char *text;
	size_t len;
	char *err;
	size_t errlen;
	struct json_node *nodes;
	uint32_t ncap;

	struct str *str; /* strings, and their hash (index + 1; 0: empty) */
	uint32_t nstr, str_cap, *slot, nslot;
	uint64_t seed;   /* the hash's, random: a host cannot choose names that collide */

	struct row *rows;
	uint32_t nrows, rows_cap;
	uint64_t procs_total;

	struct tool_agg *tools;
	uint32_t ntools, tools_cap, tool_null, tool_more; /* the last two: tools[] index or NO_INDEX */
	uint32_t *tool_order; /* tools[] by CPU time */
	struct step_stat *stats;
	uint32_t nstats, stats_cap;

	struct span steps[HTML_DATA_MAX_STEPS];
	uint32_t step_stat[HTML_DATA_MAX_STEPS]; /* each listed step's stats[] entry, NO_INDEX: it has no id */
	uint64_t step_peak[HTML_DATA_MAX_STEPS]; /* each listed step's peak_rss_bytes, UINT64_MAX: none */
	uint32_t nsteps;
	uint64_t steps_total;
	struct span signals[HTML_DATA_MAX_SIGNALS];
	uint32_t nsignals;
	uint64_t signals_total;

	struct span member[NMEMBERS];
	bool has[NMEMBERS];
	uint64_t lo, hi; /* the span so far, absolute ns */
	bool lo_known, hi_known;
	uint64_t t0, dur; /* the span as written: [t0, t0 + dur] */
	uint64_t argv_total, argv_listed;
	/* The host's capacity, from the report's "host" (0: not known, nothing is clamped): what no figure
	 * of the page may go beyond (docs/html.md, "Within the host"). */
	uint64_t host_cpus, host_mem;
};

static int fail(struct hd *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct hd *h, const char *fmt, ...)
{
	va_list ap;

	if (h->err && h->errlen) {
		va_start(ap, fmt);
		vsnprintf(h->err, h->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int no_memory(struct hd *h)
{
	if (h->err && h->errlen)
		snprintf(h->err, h->errlen, "out of memory");
	return -ENOMEM;
}

/* Room for one more of *n items of size sz in *v (capacity *cap). 0 or -ENOMEM. */
static int grow(void **v, uint32_t n, uint32_t *cap, size_t sz)
{
	uint32_t want;
	void *p;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 64;
	if (want < *cap || !(p = reallocarray(*v, want, sz)))
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Strings                                                            */
/* ------------------------------------------------------------------ */

static int rehash(struct hd *h)
{
	uint32_t n = h->nslot ? h->nslot * 2 : 1024, *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nstr; i++) {
		uint32_t k = (uint32_t)hash_bytes(h->seed, h->text + h->str[i].s.off, h->str[i].s.len) & (n - 1);

		while (slot[k])
			k = (k + 1) & (n - 1);
		slot[k] = i + 1;
	}
	free(h->slot);
	h->slot = slot;
	h->nslot = n;
	return 0;
}

/*
 * The strings[] index of a string node's text (at base in the report),
 * added when new; NO_INDEX when HTML_DATA_MAX_STRINGS are taken. The same
 * string written two ways (escaped, not) is two entries: harmless.
 */
static int intern(struct hd *h, size_t base, const struct json_node *n, uint32_t *idx)
{
	const char *s = h->text + base + n->start;
	uint32_t k;

	*idx = NO_INDEX;
	if ((h->nstr + 1) * 2 > h->nslot && rehash(h))
		return -ENOMEM;
	for (k = (uint32_t)hash_bytes(h->seed, s, n->len) & (h->nslot - 1); h->slot[k]; k = (k + 1) & (h->nslot - 1)) {
		const struct str *e = &h->str[h->slot[k] - 1];

		if (e->s.len == n->len && !memcmp(h->text + e->s.off, s, n->len)) {
			*idx = h->slot[k] - 1;
			return 0;
		}
	}
	if (h->nstr >= HTML_DATA_MAX_STRINGS)
		return 0;
	if (grow((void **)&h->str, h->nstr, &h->str_cap, sizeof(*h->str)))
		return -ENOMEM;
	h->str[h->nstr] = (struct str){ .s = { (uint32_t)(base + n->start), n->len }, .tool = NO_INDEX,
					.step = NO_INDEX };
	h->slot[k] = h->nstr + 1;
	*idx = h->nstr++;
	return 0;
}

/* The stats[] entry of the step whose id is strings[idx], made when new; NO_INDEX: none (no id). */
static int step_of(struct hd *h, uint32_t idx, uint32_t *stat)
{
	*stat = NO_INDEX;
	if (idx == NO_INDEX)
		return 0;
	if (h->str[idx].step == NO_INDEX) {
		if (grow((void **)&h->stats, h->nstats, &h->stats_cap, sizeof(*h->stats)))
			return -ENOMEM;
		h->stats[h->nstats] = (struct step_stat){ 0 };
		h->str[idx].step = h->nstats++;
	}
	*stat = h->str[idx].step;
	return 0;
}

static int new_tool(struct hd *h, uint32_t name, uint32_t *t)
{
	if (grow((void **)&h->tools, h->ntools, &h->tools_cap, sizeof(*h->tools)))
		return -ENOMEM;
	h->tools[h->ntools] = (struct tool_agg){ .name = name };
	*t = h->ntools++;
	return 0;
}

/* The tools[] entry of a process's tool: strings[idx]; null; or "(more tools)" when not interned. */
static int tool_of(struct hd *h, bool named, uint32_t idx, uint32_t *t)
{
	uint32_t *at = !named ? &h->tool_null : idx == NO_INDEX ? &h->tool_more : &h->str[idx].tool;

	if (*at == NO_INDEX && new_tool(h, !named ? NO_INDEX : idx == NO_INDEX ? TOOL_MORE : idx, at))
		return -ENOMEM;
	*t = *at;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

static void skip_ws(const struct hd *h, size_t *i)
{
	while (*i < h->len && (h->text[*i] == ' ' || h->text[*i] == '\t' || h->text[*i] == '\n' || h->text[*i] == '\r'))
		(*i)++;
}

static bool delimiter(char c)
{
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':';
}

/*
 * Where the value at pos ends, and a bound on how many values it holds
 * (each value but the first follows a '[', a '{' or a ','). -1 when the
 * text ends first.
 */
static int value_end(const struct hd *h, size_t pos, size_t *end, uint64_t *values)
{
	const char *t = h->text;
	uint64_t depth = 0, n = 1;
	size_t i = pos;

	if (i >= h->len)
		return -1;
	if (t[i] != '[' && t[i] != '{' && t[i] != '"') {
		while (i < h->len && !delimiter(t[i]))
			i++;
		*end = i;
		*values = 1;
		return 0;
	}
	for (; i < h->len; i++) {
		char c = t[i];

		if (c == '"') {
			for (i++; i < h->len && t[i] != '"'; i++)
				if (t[i] == '\\')
					i++;
			if (i >= h->len)
				return -1;
			if (depth == 0) {
				*end = i + 1;
				*values = n;
				return 0;
			}
		} else if (c == '[' || c == '{') {
			depth++;
			n++;
		} else if (c == ',') {
			n++;
		} else if ((c == ']' || c == '}') && --depth == 0) {
			*end = i + 1;
			*values = n;
			return 0;
		}
	}
	return -1;
}

/* The value at *pos, parsed into d (its text starts there); *pos past it. what names it in an error. */
static int parse_at(struct hd *h, size_t *pos, struct json_doc *d, const char *what, uint64_t nth)
{
	size_t end;
	uint64_t values;
	uint32_t cap;

	if (value_end(h, *pos, &end, &values))
		return fail(h, "the report ends inside %s (element %" PRIu64 ")", what, nth);
	cap = values < HTML_DATA_MAX_NODES ? (uint32_t)values : HTML_DATA_MAX_NODES;
	if (cap > h->ncap) {
		uint32_t want = h->ncap * 2 > cap ? h->ncap * 2 : cap;
		struct json_node *p;

		if (want > HTML_DATA_MAX_NODES)
			want = HTML_DATA_MAX_NODES;
		if (!(p = reallocarray(h->nodes, want, sizeof(*p))))
			return no_memory(h);
		h->nodes = p;
		h->ncap = want;
	}
	if (json_parse(d, h->text + *pos, end - *pos, h->nodes, cap)) {
		if (d->err == JSON_E_TOO_MANY)
			return fail(h, "%s (element %" PRIu64 ") has more than %u values", what, nth,
				    HTML_DATA_MAX_NODES);
		return fail(h, "the report is not valid JSON: %s at byte %zu (in %s)", json_parse_error_name(d->err),
			    *pos + d->err_at, what);
	}
	*pos = end;
	return 0;
}

static bool get_u64(const struct json_node *n, uint64_t *v)
{
	return json_get_u64(n, v) == 0;
}

static void widen(struct hd *h, bool a_known, uint64_t a, bool b_known, uint64_t b)
{
	if (a_known) {
		if (!h->lo_known || a < h->lo)
			h->lo = a;
		if (!h->hi_known || a > h->hi)
			h->hi = a;
		h->lo_known = h->hi_known = true;
	}
	if (b_known && (!h->hi_known || b > h->hi)) {
		h->hi = b;
		h->hi_known = true;
	}
}

/* What one process element says, as far as the page cares. */
struct proc_fields {
	struct row r;
	bool tool_named;
	uint64_t exit_code, sig, cpu_user, cpu_sys;
	bool exit_known, sig_known, user_known, sys_known;
};

/* The members of a process the page reads. */
enum pkey { P_PID, P_PPID, P_START, P_END, P_EXIT, P_SIGNAL, P_OOM, P_CPU, P_USER, P_SYS, P_RSS, P_TOOL, P_STEP,
	    P_EXE, P_ARGV, P_SERIES, P_OTHER };

static enum pkey process_key(const struct json_doc *d, const struct json_node *c)
{
#define KEY(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *name;
		size_t len;
	} names[P_OTHER] = { KEY("pid"), KEY("ppid"), KEY("start_ns"), KEY("end_ns"), KEY("exit_code"), KEY("signal"),
			     KEY("oom_killed"), KEY("cpu_ns"), KEY("cpu_user_ns"), KEY("cpu_sys_ns"), KEY("peak_rss_bytes"),
			     KEY("tool"), KEY("step"), KEY("exe"), KEY("argv"), KEY("series") };
#undef KEY
	char buf[24];
	const char *k = d->text + c->key_start;
	size_t n = c->key_len;

	if (c->key_escaped) { /* rare: a writer that escapes plain names */
		if (json_get_key(d, c, buf, sizeof(buf), &n))
			return P_OTHER;
		k = buf;
	}
	/* Lengths first: most of a process's 70 members match no name, and are turned away in a compare. */
	for (int i = 0; i < P_OTHER; i++)
		if (names[i].len == n && !memcmp(names[i].name, k, n))
			return (enum pkey)i;
	return P_OTHER;
}

static int read_process(struct hd *h, const struct json_doc *d, size_t base, struct proc_fields *f, bool listed)
{
	struct row *r = &f->r;
	int rc = 0;

	for (const struct json_node *c = json_first(d, json_root(d)); c && !rc; c = json_next(d, c)) {
		switch (process_key(d, c)) {
		case P_PID: r->known |= get_u64(c, &r->pid) ? K_PID : 0; break;
		case P_PPID: r->known |= get_u64(c, &r->ppid) ? K_PPID : 0; break;
		case P_START: r->known |= get_u64(c, &r->start) ? K_START : 0; break;
		case P_END: r->known |= get_u64(c, &r->end) ? K_END : 0; break;
		case P_EXIT: f->exit_known = get_u64(c, &f->exit_code) && f->exit_code <= INT32_MAX; break;
		case P_SIGNAL: f->sig_known = get_u64(c, &f->sig) && f->sig <= INT32_MAX; break;
		case P_OOM: r->oom = c->type == JSON_BOOL && c->boolean; break;
		case P_CPU: r->known |= get_u64(c, &r->cpu_ns) ? K_CPU : 0; break;
		case P_USER: f->user_known = get_u64(c, &f->cpu_user); break;
		case P_SYS: f->sys_known = get_u64(c, &f->cpu_sys); break;
		case P_RSS: r->known |= get_u64(c, &r->rss) ? K_RSS : 0; break;
		case P_TOOL:
			if (c->type == JSON_STRING) {
				f->tool_named = true;
				rc = intern(h, base, c, &r->tool);
			}
			break;
		case P_STEP:
			if (c->type == JSON_STRING)
				rc = intern(h, base, c, &r->step);
			break;
		case P_EXE:
			if (listed && c->type == JSON_STRING)
				rc = intern(h, base, c, &r->exe);
			break;
		case P_ARGV:
			if (listed && c->type == JSON_ARRAY)
				r->argv = (struct span){ (uint32_t)(base + c->start), c->len };
			break;
		case P_SERIES:
			if (listed && c->type == JSON_OBJECT)
				r->series = (struct span){ (uint32_t)(base + c->start), c->len };
			break;
		case P_OTHER: break;
		}
	}
	return rc;
}

/* One element of "processes": summed into its tool and its step, listed while there is room. */
static int on_process(struct hd *h, const struct json_doc *d, size_t base)
{
	bool listed = h->nrows < HTML_DATA_MAX_PROCESSES;
	struct proc_fields f = { .r = { .tool = NO_INDEX, .step = NO_INDEX, .exe = NO_INDEX, .parent = -1 } };
	struct row *r = &f.r;
	uint32_t t, s;

	h->procs_total++;
	if (json_root(d)->type != JSON_OBJECT)
		return 0;
	if (read_process(h, d, base, &f, listed))
		return no_memory(h);
	if (!(r->known & K_CPU) && (f.user_known || f.sys_known)) {
		r->cpu_ns = (f.user_known ? f.cpu_user : 0) + (f.sys_known ? f.cpu_sys : 0);
		r->known |= K_CPU;
	}
	if (f.exit_known) {
		r->status = (int64_t)f.exit_code;
		r->known |= K_STATUS;
	} else if (f.sig_known && f.sig) {
		r->status = -(int64_t)f.sig;
		r->known |= K_STATUS;
	}
	/* As the page always judged a process: SIGPIPE is how a writer ends when its reader is done. */
	r->failed = r->oom || (f.exit_known && f.exit_code) || (f.sig_known && f.sig && f.sig != 13);
	widen(h, r->known & K_START, r->start, r->known & K_END, r->end);

	if (tool_of(h, f.tool_named, r->tool, &t) || step_of(h, r->step, &s))
		return no_memory(h);
	h->tools[t].n++;
	h->tools[t].failed += r->failed;
	h->tools[t].cpu_ns += r->known & K_CPU ? r->cpu_ns : 0;
	if ((r->known & (K_START | K_END)) == (K_START | K_END) && r->end > r->start)
		h->tools[t].wall_ns += r->end - r->start;
	if (r->known & K_RSS && (!h->tools[t].peak_known || r->rss > h->tools[t].peak)) {
		h->tools[t].peak = r->rss;
		h->tools[t].peak_known = true;
	}
	if (s != NO_INDEX) {
		h->stats[s].n++;
		h->stats[s].failed += r->failed;
		h->stats[s].running += !(r->known & K_END);
		h->stats[s].cpu_ns += r->known & K_CPU ? r->cpu_ns : 0;
	}
	if (!listed)
		return 0;
	if (grow((void **)&h->rows, h->nrows, &h->rows_cap, sizeof(*h->rows)))
		return no_memory(h);
	h->rows[h->nrows++] = *r;
	return 0;
}

/* One element of "steps": listed whole while there is room; its id made a step for the stats. */
static int on_step(struct hd *h, const struct json_doc *d, size_t base)
{
	const struct json_node *root = json_root(d), *c;
	uint64_t a = 0, b = 0;
	uint32_t idx = NO_INDEX, s = NO_INDEX;
	bool a_known, b_known;

	h->steps_total++;
	if (root->type != JSON_OBJECT)
		return 0;
	c = json_member(d, root, "id");
	if (c && c->type == JSON_STRING && (intern(h, base, c, &idx) || step_of(h, idx, &s)))
		return no_memory(h);
	a_known = get_u64(json_member(d, root, "start_ns"), &a);
	b_known = get_u64(json_member(d, root, "end_ns"), &b);
	widen(h, a_known, a, b_known, b);
	if (h->nsteps < HTML_DATA_MAX_STEPS) {
		uint64_t peak;

		h->steps[h->nsteps] = (struct span){ (uint32_t)base, root->len };
		h->step_peak[h->nsteps] = get_u64(json_member(d, root, "peak_rss_bytes"), &peak) ? peak : UINT64_MAX;
		h->step_stat[h->nsteps++] = s;
	}
	return 0;
}

/* One element of "signals": listed whole while there is room; "stalled" and "slower_than_usual" flag a step. */
static int on_signal(struct hd *h, const struct json_doc *d, size_t base)
{
	const struct json_node *root = json_root(d), *c;
	char kind[24];
	uint32_t idx, s;

	h->signals_total++;
	if (root->type != JSON_OBJECT)
		return 0;
	if (h->nsignals < HTML_DATA_MAX_SIGNALS)
		h->signals[h->nsignals++] = (struct span){ (uint32_t)base, root->len };
	if (json_get_string(d, json_member(d, root, "kind"), kind, sizeof(kind), NULL) ||
	    (strcmp(kind, "stalled") && strcmp(kind, "slower_than_usual")))
		return 0;
	c = json_member(d, root, "step");
	if (!c || c->type != JSON_STRING)
		return 0;
	if (intern(h, base, c, &idx) || step_of(h, idx, &s))
		return no_memory(h);
	if (s != NO_INDEX)
		h->stats[s].flagged = true;
	return 0;
}

typedef int (*element_fn)(struct hd *h, const struct json_doc *d, size_t base);

/* The array at *pos (null: none), each element parsed and given to fn; *pos past it. */
static int walk_array(struct hd *h, size_t *pos, const char *what, element_fn fn)
{
	struct json_doc d;
	uint64_t nth = 0;
	size_t i = *pos;
	int rc;

	if (i >= h->len)
		return fail(h, "the report ends before \"%s\"", what);
	if (h->len - i >= 4 && !memcmp(h->text + i, "null", 4)) {
		*pos = i + 4;
		return 0;
	}
	if (h->text[i] != '[')
		return fail(h, "\"%s\" is not an array (byte %zu)", what, i);
	i++;
	skip_ws(h, &i);
	if (i < h->len && h->text[i] == ']') {
		*pos = i + 1;
		return 0;
	}
	for (;; nth++) {
		size_t base = i;

		if ((rc = parse_at(h, &i, &d, what, nth)) != 0 || (rc = fn(h, &d, base)) != 0)
			return rc;
		skip_ws(h, &i);
		if (i < h->len && h->text[i] == ']') {
			*pos = i + 1;
			return 0;
		}
		if (i >= h->len || h->text[i] != ',')
			return fail(h, "the report is not valid JSON: no ',' or ']' at byte %zu (in %s)", i, what);
		i++;
		skip_ws(h, &i);
	}
}

/* Which member the page takes a name for: copied[] index, M_*, or -1. */
static int member_of(const char *name)
{
	static const char *const arrays[] = { "processes", "steps", "signals" };

	for (size_t k = 0; k < NCOPIED; k++)
		if (!strcmp(name, copied[k]))
			return (int)k;
	for (size_t k = 0; k < 3; k++)
		if (!strcmp(name, arrays[k]))
			return M_PROCESSES + (int)k;
	return -1;
}

/* The host's CPUs and memory, when the report's "host" is an object that says them (docs/processor.md). */
static void read_host(struct hd *h, const struct json_doc *d)
{
	const struct json_node *root = json_root(d);
	uint64_t v;

	if (root->type != JSON_OBJECT)
		return;
	if (get_u64(json_member(d, root, "cpus"), &v) && v <= UINT32_MAX)
		h->host_cpus = v;
	if (get_u64(json_member(d, root, "memory_bytes"), &v))
		h->host_mem = v;
}

static int read_member(struct hd *h, int m, size_t *pos, const char *name)
{
	static const element_fn fns[] = { on_process, on_step, on_signal };
	struct json_doc d;
	size_t at = *pos;
	int rc;

	if (m >= M_PROCESSES) {
		if ((rc = walk_array(h, pos, name, fns[m - M_PROCESSES])) != 0)
			return rc;
	} else if ((rc = parse_at(h, pos, &d, name, 0)) != 0) {
		return rc;
	}
	if (m >= 0)
		h->member[m] = (struct span){ (uint32_t)at, (uint32_t)(*pos - at) };
	if (m >= 0 && !strcmp(name, "host"))
		read_host(h, &d);
	if (m >= 0 && (!strcmp(name, "start_ns") || !strcmp(name, "end_ns"))) {
		uint64_t v;
		bool known = get_u64(json_root(&d), &v);

		if (name[0] == 's')
			widen(h, known, v, false, 0);
		else
			widen(h, false, 0, known, v);
	}
	return 0;
}

/* The report's top-level object, every value read; members of the same name refused where the page reads them. */
static int read_report(struct hd *h)
{
	struct json_doc d;
	size_t i = 0;
	int rc;

	skip_ws(h, &i);
	if (i >= h->len || h->text[i] != '{')
		return fail(h, "the report is not a JSON object (byte %zu)", i);
	i++;
	skip_ws(h, &i);
	if (i < h->len && h->text[i] == '}')
		i++;
	else
		for (;;) {
			char name[24];
			int m;

			if (i >= h->len || h->text[i] != '"')
				return fail(h, "the report is not valid JSON: no member name at byte %zu", i);
			if ((rc = parse_at(h, &i, &d, "a member name", 0)) != 0)
				return rc;
			if (json_get_string(&d, json_root(&d), name, sizeof(name), NULL))
				name[0] = 0;
			m = member_of(name);
			if (m >= 0 && h->has[m])
				return fail(h, "the report has two members \"%s\"", name);
			if (m >= 0)
				h->has[m] = true;
			skip_ws(h, &i);
			if (i >= h->len || h->text[i] != ':')
				return fail(h, "the report is not valid JSON: no ':' at byte %zu", i);
			i++;
			skip_ws(h, &i);
			if ((rc = read_member(h, m, &i, m >= 0 ? name : "a member")) != 0)
				return rc;
			skip_ws(h, &i);
			if (i < h->len && h->text[i] == '}') {
				i++;
				break;
			}
			if (i >= h->len || h->text[i] != ',')
				return fail(h, "the report is not valid JSON: no ',' or '}' at byte %zu", i);
			i++;
			skip_ws(h, &i);
		}
	skip_ws(h, &i);
	if (i < h->len)
		return fail(h, "the report is not valid JSON: text after it at byte %zu", i);
	return 0;
}

/* ------------------------------------------------------------------ */
/* What follows from the rows                                         */
/* ------------------------------------------------------------------ */

/* The span, as the page always took it: start and end widened; 1 ms when it has no length. */
static void run_span(struct hd *h)
{
	h->t0 = h->lo_known ? h->lo : 0;
	h->dur = h->hi_known && h->hi > h->t0 ? h->hi - h->t0 : 1000000;
}

static int by_pid_start(const void *a, const void *b, void *ctx)
{
	const struct row *rows = ctx, *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
	uint64_t xs = x->known & K_START ? x->start : 0, ys = y->known & K_START ? y->start : 0;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Each row's parent: among the listed processes with its ppid as pid, the latest that started no later. */
static int find_parents(struct hd *h)
{
	uint32_t *idx = malloc(((size_t)h->nrows + 1) * sizeof(*idx)), n = 0;

	if (!idx)
		return no_memory(h);
	for (uint32_t i = 0; i < h->nrows; i++)
		if (h->rows[i].known & K_PID)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), by_pid_start, h->rows);
	for (uint32_t i = 0; i < h->nrows; i++) {
		struct row *r = &h->rows[i];
		uint32_t lo = 0, hi = n;
		int32_t best = -1;

		if (!(r->known & K_PPID) || (r->known & K_PID && r->ppid == r->pid))
			continue;
		while (lo < hi) { /* the first with pid >= ppid */
			uint32_t mid = lo + (hi - lo) / 2;

			if (h->rows[idx[mid]].pid < r->ppid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && h->rows[idx[lo]].pid == r->ppid; lo++) {
			const struct row *p = &h->rows[idx[lo]];

			if (idx[lo] == i)
				continue;
			if (r->known & K_START && p->known & K_START && p->start > r->start)
				break;
			best = (int32_t)idx[lo];
		}
		r->parent = best;
	}
	free(idx);
	return 0;
}

/* How long a row lived, to the span's end when it has not ended. */
static uint64_t lifetime(const struct hd *h, const struct row *r)
{
	uint64_t a = r->known & K_START ? r->start : h->t0, b = r->known & K_END ? r->end : h->t0 + h->dur;

	return b > a ? b - a : 0;
}

static int by_argv_priority(const void *a, const void *b, void *ctx)
{
	const struct hd *h = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct row *x = &h->rows[i], *y = &h->rows[j];
	bool xb = x->oom || (x->known & K_STATUS && x->status), yb = y->oom || (y->known & K_STATUS && y->status);
	uint64_t xl, yl;

	if (xb != yb)
		return xb ? -1 : 1;
	xl = lifetime(h, x);
	yl = lifetime(h, y);
	if (xl != yl)
		return xl > yl ? -1 : 1;
	return i < j ? -1 : 1;
}

/* Which rows carry their command line: those that ended badly first, then the longest-lived. */
static int choose_argv(struct hd *h)
{
	uint32_t *idx = malloc(((size_t)h->nrows + 1) * sizeof(*idx)), n = 0;

	if (!idx)
		return no_memory(h);
	for (uint32_t i = 0; i < h->nrows; i++)
		if (h->rows[i].argv.len)
			idx[n++] = i;
	h->argv_total = n;
	if (n > HTML_DATA_MAX_ARGV)
		qsort_r(idx, n, sizeof(*idx), by_argv_priority, h);
	for (uint32_t i = 0; i < n && i < HTML_DATA_MAX_ARGV; i++)
		h->rows[idx[i]].argv_kept = true;
	h->argv_listed = n < HTML_DATA_MAX_ARGV ? n : HTML_DATA_MAX_ARGV;
	free(idx);
	return 0;
}

/* The resource chart's slices: CPU time and resident memory, summed over the listed processes. */
struct bins {
	double w, cpu[HTML_DATA_BINS], rss[HTML_DATA_BINS], held[HTML_DATA_BINS];
	uint32_t cpu_clamped, rss_clamped; /* slices that went beyond the host and were clamped to it */
};

static int bin_of(const struct bins *b, double t)
{
	double k = t / b->w;

	return k < 0 ? 0 : k >= HTML_DATA_BINS - 1 ? HTML_DATA_BINS - 1 : (int)k;
}

/* v spread over [a, b] (ns since t0), each slice its share of the overlap. */
static void spread(struct bins *bs, double a, double b, double v)
{
	int ka = bin_of(bs, a), kb = bin_of(bs, b);

	if (ka == kb || b <= a) {
		bs->cpu[ka] += v;
		return;
	}
	for (int k = ka; k <= kb; k++) {
		double lo = a > k * bs->w ? a : k * bs->w, hi = b < (k + 1) * bs->w ? b : (k + 1) * bs->w;

		if (k == kb)
			hi = b; /* the last slice takes what lies beyond the span's end (rounding) */
		if (hi > lo)
			bs->cpu[k] += v * (hi - lo) / (b - a);
	}
}

/* A resident set of r held over [a, b]: each slice keeps the largest this process had in it. */
static void hold(struct bins *bs, double a, double b, double r)
{
	for (int k = bin_of(bs, a), kb = bin_of(bs, b); k <= kb; k++)
		if (r > bs->held[k])
			bs->held[k] = r;
}

static double rel(const struct hd *h, uint64_t t)
{
	return t > h->t0 ? (double)(t - h->t0) : 0;
}

/*
 * A process's series: its CPU between samples (the report's figures are
 * cumulative), its resident set at each held until the next. How many
 * points it had (0: none usable), or -ENOMEM.
 */
static int bin_series(struct hd *h, const struct row *r, struct bins *bs, double a, double b)
{
	const struct json_node *root, *t, *c, *m;
	struct json_doc d;
	size_t pos = r->series.off;
	double prev_t = a, last_rss = -1;
	uint64_t prev_cpu = 0;
	int points = 0, rc;

	if ((rc = parse_at(h, &pos, &d, "a series", 0)) != 0)
		return rc; /* it parsed as part of its process: only memory can fail */
	root = json_root(&d);
	t = json_first(&d, json_member(&d, root, "t_ns"));
	c = json_first(&d, json_member(&d, root, "cpu_ns"));
	m = json_first(&d, json_member(&d, root, "rss_bytes"));
	for (; t; t = json_next(&d, t), c = json_next(&d, c), m = json_next(&d, m)) {
		uint64_t tv, cv, mv;
		double at;

		if (!get_u64(t, &tv))
			continue;
		at = rel(h, tv);
		if (at < prev_t)
			at = prev_t;
		if (at > b)
			at = b;
		if (c && get_u64(c, &cv) && cv >= prev_cpu) {
			spread(bs, prev_t, at, (double)(cv - prev_cpu));
			prev_cpu = cv;
		}
		if (m && get_u64(m, &mv)) {
			hold(bs, prev_t, at, (double)mv);
			last_rss = (double)mv;
		}
		prev_t = at;
		points++;
	}
	if (!points)
		return 0;
	if (r->known & K_CPU && r->cpu_ns > prev_cpu)
		spread(bs, prev_t, b, (double)(r->cpu_ns - prev_cpu));
	if (last_rss >= 0)
		hold(bs, prev_t, b, last_rss);
	return points;
}

/*
 * No slice beyond the host: its CPUs times the slice's length, its memory.
 * The sums smear: a process's CPU between two samples is spread over the
 * time between their instants, which jitter against the readings (a
 * reading late by 10 ms in a 100 ms interval is 10 % more cores), and each
 * process's slice holds its own largest resident set, at its own instants,
 * shared pages counted in each. Physically the host did no more than it
 * has: clamp there, and count the slices, which the legend says. A slice
 * above by no more than rounding (1e-9) is not counted. Unknown host: as
 * summed.
 */
static void clamp_to_host(const struct hd *h, struct bins *bs)
{
	double cpu_cap = (double)h->host_cpus * bs->w, mem_cap = (double)h->host_mem;

	for (int k = 0; k < HTML_DATA_BINS; k++) {
		if (h->host_cpus && bs->cpu[k] > cpu_cap) {
			if (bs->cpu[k] > cpu_cap * (1 + 1e-9))
				bs->cpu_clamped++;
			bs->cpu[k] = (double)(uint64_t)cpu_cap; /* whole ns, so that the figure written is no more */
		}
		if (h->host_mem && bs->rss[k] > mem_cap) {
			if (bs->rss[k] > mem_cap * (1 + 1e-9))
				bs->rss_clamped++;
			bs->rss[k] = mem_cap;
		}
	}
}

static int bin_rows(struct hd *h, struct bins *bs)
{
	memset(bs, 0, sizeof(*bs));
	bs->w = (double)h->dur / HTML_DATA_BINS;
	for (uint32_t i = 0; i < h->nrows; i++) {
		const struct row *r = &h->rows[i];
		double a = r->known & K_START ? rel(h, r->start) : 0;
		double b = r->known & K_END ? rel(h, r->end) : (double)h->dur;
		int ka = bin_of(bs, a), kb = bin_of(bs, b), got = 0;

		if (b < a)
			b = a;
		for (int k = ka; k <= kb; k++)
			bs->held[k] = 0;
		if (r->series.len && (got = bin_series(h, r, bs, a, b)) < 0)
			return got;
		if (!got) { /* no samples: its CPU evenly over its life, its peak held */
			if (r->known & K_CPU)
				spread(bs, a, b, (double)r->cpu_ns);
			if (r->known & K_RSS)
				hold(bs, a, b, (double)r->rss);
		}
		for (int k = ka; k <= kb; k++)
			bs->rss[k] += bs->held[k];
	}
	clamp_to_host(h, bs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

static void put_u64(struct obuf *o, uint64_t v)
{
	char b[24];
	int i = sizeof(b);

	do
		b[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	obuf_put(o, b + i, sizeof(b) - (size_t)i);
}

static void put_i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		obuf_putc(o, '-');
		put_u64(o, -(uint64_t)v);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* Checked JSON text, without the whitespace outside its strings. */
static void put_min(struct obuf *o, const char *s, size_t n)
{
	size_t from = 0;
	bool in = false;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (in) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in = false;
		} else if (c == '"') {
			in = true;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			obuf_put(o, s + from, i - from);
			from = i + 1;
		}
	}
	obuf_put(o, s + from, n - from);
}

static void put_span(struct obuf *o, const struct hd *h, struct span s)
{
	put_min(o, h->text + s.off, s.len);
}

static void put_str(struct obuf *o, const struct hd *h, uint32_t idx)
{
	if (idx == NO_INDEX) {
		obuf_puts(o, "null");
		return;
	}
	obuf_putc(o, '"');
	obuf_put(o, h->text + h->str[idx].s.off, h->str[idx].s.len);
	obuf_putc(o, '"');
}

static void comma(struct obuf *o, uint64_t i)
{
	if (i)
		obuf_putc(o, ',');
}

enum col { C_PID, C_PARENT, C_START, C_DUR, C_TOOL, C_STEP, C_EXE, C_STATUS, C_CPU, C_RSS, NCOLS };
static const char *const col_names[NCOLS] = { "pid", "parent", "start_us", "dur_us", "tool", "step",
					      "exe", "status", "cpu_us", "rss_kib" };

static void put_index(struct obuf *o, uint32_t idx)
{
	if (idx == NO_INDEX)
		obuf_puts(o, "-1");
	else
		put_u64(o, idx);
}

static void put_cell(struct obuf *o, const struct hd *h, const struct row *r, enum col c)
{
	uint64_t s = r->known & K_START ? (r->start - h->t0) / 1000 : 0;

	switch (c) {
	case C_PID: r->known & K_PID ? put_u64(o, r->pid) : obuf_puts(o, "null"); return;
	case C_PARENT: put_i64(o, r->parent); return;
	case C_START: r->known & K_START ? put_u64(o, s) : obuf_puts(o, "null"); return;
	case C_DUR:
		/* The end rounded up to a microsecond, from the start rounded down: a 300 ns process lasts 1 us. */
		if ((r->known & (K_START | K_END)) == (K_START | K_END) && r->end >= r->start)
			put_u64(o, (r->end - h->t0 + 999) / 1000 - s);
		else
			obuf_puts(o, "null");
		return;
	case C_TOOL: put_index(o, r->tool); return;
	case C_STEP: put_index(o, r->step); return;
	case C_EXE: put_index(o, r->exe); return;
	case C_STATUS: r->known & K_STATUS ? put_i64(o, r->status) : obuf_puts(o, "null"); return;
	case C_CPU: r->known & K_CPU ? put_u64(o, (r->cpu_ns + 500) / 1000) : obuf_puts(o, "null"); return;
	case C_RSS: r->known & K_RSS ? put_u64(o, r->rss / 1024 + (r->rss % 1024 != 0)) : obuf_puts(o, "null"); return;
	case NCOLS: break;
	}
}

static void write_processes(struct obuf *o, const struct hd *h)
{
	uint64_t k = 0;

	obuf_puts(o, ",\"processes\":{");
	for (int c = 0; c < NCOLS; c++) {
		obuf_printf(o, "%s\"%s\":[", c ? "," : "", col_names[c]);
		for (uint32_t i = 0; i < h->nrows; i++) {
			comma(o, i);
			put_cell(o, h, &h->rows[i], (enum col)c);
		}
		obuf_putc(o, ']');
	}
	obuf_puts(o, "},\"oom\":[");
	for (uint32_t i = 0; i < h->nrows; i++)
		if (h->rows[i].oom) {
			comma(o, k++);
			put_u64(o, i);
		}
	obuf_puts(o, "],\"argv\":[");
	k = 0;
	for (uint32_t i = 0; i < h->nrows; i++)
		if (h->rows[i].argv_kept) {
			comma(o, k++);
			obuf_putc(o, '[');
			put_u64(o, i);
			obuf_putc(o, ',');
			put_span(o, h, h->rows[i].argv);
			obuf_putc(o, ']');
		}
	obuf_putc(o, ']');
}

static int by_cpu(const void *a, const void *b, void *ctx)
{
	const struct tool_agg *t = ctx, *x = &t[*(const uint32_t *)a], *y = &t[*(const uint32_t *)b];

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The tools table's rows, by CPU time: tool_order[0 .. min(ntools, HTML_DATA_MAX_TOOLS)). */
static int order_tools(struct hd *h)
{
	if (!(h->tool_order = malloc(((size_t)h->ntools + 1) * sizeof(*h->tool_order))))
		return no_memory(h);
	for (uint32_t i = 0; i < h->ntools; i++)
		h->tool_order[i] = i;
	qsort_r(h->tool_order, h->ntools, sizeof(*h->tool_order), by_cpu, h->tools);
	return 0;
}

/* Bytes of memory, the host's at most (when known). */
static uint64_t host_mem_at_most(const struct hd *h, uint64_t v)
{
	return h->host_mem && v > h->host_mem ? h->host_mem : v;
}

static void write_tools(struct obuf *o, const struct hd *h)
{
	uint32_t n = h->ntools < HTML_DATA_MAX_TOOLS ? h->ntools : HTML_DATA_MAX_TOOLS;

	obuf_puts(o, ",\"tools\":[");
	for (uint32_t i = 0; i < n; i++) {
		const struct tool_agg *t = &h->tools[h->tool_order[i]];

		comma(o, i);
		obuf_puts(o, "{\"tool\":");
		if (t->name == TOOL_MORE)
			obuf_puts(o, "\"(more tools)\"");
		else
			put_str(o, h, t->name);
		obuf_puts(o, ",\"processes\":");
		put_u64(o, t->n);
		obuf_puts(o, ",\"failed\":");
		put_u64(o, t->failed);
		obuf_puts(o, ",\"cpu_ns\":");
		put_u64(o, t->cpu_ns);
		obuf_puts(o, ",\"wall_ns\":");
		put_u64(o, t->wall_ns);
		obuf_puts(o, ",\"peak_rss_bytes\":");
		t->peak_known ? put_u64(o, host_mem_at_most(h, t->peak)) : obuf_puts(o, "null");
		obuf_puts(o, t->peak_known && host_mem_at_most(h, t->peak) < t->peak ? ",\"peak_rss_clamped\":true}" :
										   ",\"peak_rss_clamped\":false}");
	}
	obuf_putc(o, ']');
}

static void write_steps(struct obuf *o, const struct hd *h)
{
	obuf_puts(o, ",\"steps\":[");
	for (uint32_t i = 0; i < h->nsteps; i++) {
		comma(o, i);
		put_span(o, h, h->steps[i]);
	}
	obuf_puts(o, "],\"step_stats\":[");
	for (uint32_t i = 0; i < h->nsteps; i++) {
		static const struct step_stat none;
		const struct step_stat *s = h->step_stat[i] == NO_INDEX ? &none : &h->stats[h->step_stat[i]];

		comma(o, i);
		obuf_puts(o, "{\"processes\":");
		put_u64(o, s->n);
		obuf_puts(o, ",\"failed\":");
		put_u64(o, s->failed);
		obuf_puts(o, ",\"running\":");
		put_u64(o, s->running);
		obuf_puts(o, ",\"cpu_ns\":");
		put_u64(o, s->cpu_ns);
		obuf_puts(o, s->flagged ? ",\"flagged\":true" : ",\"flagged\":false");
		/* The step's concurrent peak: its processes' resident sets summed, each sampled at its own
		 * instant, shared pages in each; the page shows it, the host's at most. */
		obuf_puts(o, ",\"peak_rss_bytes\":");
		if (h->step_peak[i] == UINT64_MAX) {
			obuf_puts(o, "null,\"peak_rss_clamped\":false}");
		} else {
			put_u64(o, host_mem_at_most(h, h->step_peak[i]));
			obuf_puts(o, host_mem_at_most(h, h->step_peak[i]) < h->step_peak[i] ? ",\"peak_rss_clamped\":true}" :
											 ",\"peak_rss_clamped\":false}");
		}
	}
	obuf_puts(o, "],\"signals\":[");
	for (uint32_t i = 0; i < h->nsignals; i++) {
		comma(o, i);
		put_span(o, h, h->signals[i]);
	}
	obuf_putc(o, ']');
}

static void put_known(struct obuf *o, uint64_t v)
{
	if (v)
		put_u64(o, v);
	else
		obuf_puts(o, "null");
}

static void write_resources(struct obuf *o, const struct hd *h, const struct bins *bs)
{
	obuf_printf(o, ",\"resources\":{\"bins\":%d,\"bin_ns\":%.3f,\"cpu_ns\":[", HTML_DATA_BINS, bs->w);
	for (int k = 0; k < HTML_DATA_BINS; k++) {
		comma(o, (uint64_t)k);
		put_u64(o, (uint64_t)(bs->cpu[k] + 0.5));
	}
	obuf_puts(o, "],\"rss_bytes\":[");
	for (int k = 0; k < HTML_DATA_BINS; k++) {
		comma(o, (uint64_t)k);
		put_u64(o, (uint64_t)(bs->rss[k] + 0.5));
	}
	obuf_puts(o, "],\"host_cpus\":");
	put_known(o, h->host_cpus);
	obuf_puts(o, ",\"host_memory_bytes\":");
	put_known(o, h->host_mem);
	obuf_puts(o, ",\"cpu_clamped\":");
	put_u64(o, bs->cpu_clamped);
	obuf_puts(o, ",\"rss_clamped\":");
	put_u64(o, bs->rss_clamped);
	obuf_putc(o, '}');
}

static void put_count(struct obuf *o, const char *name, uint64_t v, bool first)
{
	obuf_printf(o, "%s\"%s\":", first ? "" : ",", name);
	put_u64(o, v);
}

static void write_all(struct obuf *o, const struct hd *h, const struct bins *bs)
{
	bool first = true;

	obuf_puts(o, "{\"schema\":\"" HTML_DATA_SCHEMA "\",\"report\":{");
	for (size_t k = 0; k < NCOPIED; k++) {
		if (!h->has[k])
			continue;
		obuf_printf(o, "%s\"%s\":", first ? "" : ",", copied[k]);
		put_span(o, h, h->member[k]);
		first = false;
	}
	obuf_puts(o, "},");
	put_count(o, "t0_ns", h->t0, true);
	put_count(o, "span_ns", h->dur, false);
	obuf_puts(o, ",\"counts\":{");
	put_count(o, "processes", h->procs_total, true);
	put_count(o, "processes_listed", h->nrows, false);
	put_count(o, "steps", h->steps_total, false);
	put_count(o, "steps_listed", h->nsteps, false);
	put_count(o, "signals", h->signals_total, false);
	put_count(o, "signals_listed", h->nsignals, false);
	put_count(o, "argv", h->argv_total, false);
	put_count(o, "argv_listed", h->argv_listed, false);
	put_count(o, "tools", h->ntools, false);
	put_count(o, "tools_listed", h->ntools < HTML_DATA_MAX_TOOLS ? h->ntools : HTML_DATA_MAX_TOOLS, false);
	obuf_puts(o, "},\"caps\":{");
	put_count(o, "processes", HTML_DATA_MAX_PROCESSES, true);
	put_count(o, "steps", HTML_DATA_MAX_STEPS, false);
	put_count(o, "signals", HTML_DATA_MAX_SIGNALS, false);
	put_count(o, "argv", HTML_DATA_MAX_ARGV, false);
	put_count(o, "tools", HTML_DATA_MAX_TOOLS, false);
	obuf_putc(o, '}');
	write_steps(o, h);
	obuf_puts(o, ",\"strings\":[");
	for (uint32_t i = 0; i < h->nstr; i++) {
		comma(o, i);
		put_str(o, h, i);
	}
	obuf_putc(o, ']');
	write_processes(o, h);
	write_tools(o, h);
	write_resources(o, h, bs);
	obuf_putc(o, '}');
}

int html_data_write(struct obuf *o, const char *json, size_t len, char *err, size_t errlen)
{
	struct hd *h = calloc(1, sizeof(*h));
	struct bins *bs = malloc(sizeof(*bs));
	int rc;

	if (err && errlen)
		err[0] = 0;
	if (!h || !bs) {
		free(h);
		free(bs);
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*h = (struct hd){ .text = json, .len = len, .err = err, .errlen = errlen, .tool_null = NO_INDEX,
			  .tool_more = NO_INDEX, .seed = hash_seed_random() };
	if (len >= UINT32_MAX)
		rc = fail(h, "the report is 4 GiB or more");
	else if ((rc = read_report(h)) == 0) {
		run_span(h);
		if ((rc = find_parents(h)) == 0 && (rc = choose_argv(h)) == 0 && (rc = order_tools(h)) == 0 &&
		    (rc = bin_rows(h, bs)) == 0) {
			write_all(o, h, bs);
			rc = o->err;
		}
	}
	free(h->nodes);
	free(h->str);
	free(h->slot);
	free(h->rows);
	free(h->tools);
	free(h->tool_order);
	free(h->stats);
	free(h);
	free(bs);
	return rc;
}
