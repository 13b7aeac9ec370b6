/* SPDX-License-Identifier: Apache-2.0 */
/* The sweep's input from the lake (view/sweep_input.h). */
#include "sweep_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"
#include "parse.h"

#define CMDLINE_MAX 256    /* bytes of a process's command line kept as evidence */
#define ARGV_NODES 4096    /* values of an argv array read (a longer one: its first words) */

/* What a process needs beyond its sw_process to find its parent. */
struct proc_key {
	const char *boot;          /* its boot id (in si->strings) */
	int64_t start_mono;        /* its start, CLOCK_MONOTONIC of its boot */
	int64_t parent_start;      /* its parent's (from its fork record), -1 unknown */
};

struct loader {
	struct sweep_input *si;
	struct proc_key *keys;     /* per process */
	size_t capkeys;
	struct json_node *nodes;   /* ARGV_NODES, for reading argv */
	int err;
};

/* ---- owned strings ---------------------------------------------------------------- */

static const char *keep(struct sweep_input *si, const char *s, size_t len)
{
	char *c;

	if (!s)
		return NULL;
	if (si->nstrings == si->capstrings) {
		size_t cap = si->capstrings ? si->capstrings * 2 : 1024;
		char **v = realloc(si->strings, cap * sizeof(*v));

		if (!v)
			return NULL;
		si->strings = v;
		si->capstrings = cap;
	}
	c = malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = 0;
	si->strings[si->nstrings++] = c;
	return c;
}

static const char *keep_str(struct loader *l, const char *s)
{
	const char *c;

	if (!s)
		return NULL;
	c = keep(l->si, s, strlen(s));
	if (!c)
		l->err = -ENOMEM;
	return c;
}

/* Grow v (of elem bytes each, *cap of them) to hold n + 1. */
static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	nv = realloc(*v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* ---- hosts and beats ------------------------------------------------------------------ */

static long host_index(const struct sweep_input *si, const char *host_id)
{
	for (size_t i = si->nhosts; i-- > 0;) /* the walks come by host: the newest is the likeliest */
		if (!strcmp(si->hosts[i].host_id, host_id))
			return (long)i;
	return -1;
}

static long host_add(struct loader *l, const char *host_id)
{
	struct sweep_input *si = l->si;
	struct sw_host *h;
	long i = host_index(si, host_id);

	if (i >= 0)
		return i;
	if (grow((void **)&si->hosts, &si->caps[0], si->nhosts, sizeof(*si->hosts))) {
		l->err = -ENOMEM;
		return -1;
	}
	h = &si->hosts[si->nhosts];
	memset(h, 0, sizeof(*h));
	h->host_id = keep_str(l, host_id);
	h->host.host_id = h->host_id;
	h->host.price_per_hour = -1;
	return l->err ? -1 : (long)si->nhosts++;
}

static uint64_t known_u64(struct store_int v)
{
	return v.known && v.v > 0 ? (uint64_t)v.v : 0;
}

static int on_beat(void *ctx, const struct store_beat *b)
{
	struct loader *l = ctx;
	struct sweep_input *si = l->si;
	struct sw_host *h;
	struct sw_beat *w;
	long hi = host_add(l, b->host_id);

	if (hi < 0)
		return 1;
	h = &si->hosts[hi];
	/* The identity and price of its newest beat (the walk goes by start time). */
	h->host.cloud = keep_str(l, b->cloud);
	h->host.instance_type = keep_str(l, b->instance_type);
	h->host.region = keep_str(l, b->region);
	h->host.cpus = (uint32_t)known_u64(b->host_cpus);
	h->host.memory_bytes = known_u64(b->host_memory_bytes);
	h->host.price_per_hour = b->price_known ? b->price_per_hour : -1;
	if (l->err)
		return 1;
	/* A beat without its CPU or network figures cannot be judged: its time is unknown, not idle. */
	if (!b->cpu_busy_ns.known || !b->net_rx_bytes.known || !b->net_tx_bytes.known || !b->cpus.known)
		return 0;
	if (grow((void **)&si->beats, &si->caps[1], si->nbeats, sizeof(*si->beats))) {
		l->err = -ENOMEM;
		return 1;
	}
	w = &si->beats[si->nbeats++];
	w->start_ns = b->start_ns;
	w->end_ns = b->end_ns;
	w->cpu_busy_ns = known_u64(b->cpu_busy_ns);
	w->cpus = (uint32_t)known_u64(b->cpus);
	w->mem_total_bytes = known_u64(b->mem_total_bytes);
	w->mem_used_bytes = known_u64(b->mem_used_bytes);
	w->net_rx_bytes = known_u64(b->net_rx_bytes);
	w->net_tx_bytes = known_u64(b->net_tx_bytes);
	w->runs = (uint32_t)known_u64(b->runs);
	w->steps = (uint32_t)known_u64(b->steps);
	w->processes = (uint32_t)known_u64(b->processes);
	/* Host of the beat: hosts come one after another, so its beats are consecutive. */
	if (!h->nbeats)
		h->beats = (const struct sw_beat *)(uintptr_t)(si->nbeats - 1); /* an index until the end */
	h->nbeats++;
	return 0;
}

/* ---- processes ------------------------------------------------------------------------ */

/* argv[0]'s base name, and the words joined by spaces (at most CMDLINE_MAX bytes), from a JSON array. */
static void argv_words(struct loader *l, const char *json, const char **base, const char **cmdline)
{
	char line[CMDLINE_MAX + 1];
	struct json_doc d;
	size_t n = 0;
	bool first = true;

	*base = *cmdline = NULL;
	if (!json || json_parse(&d, json, strlen(json), l->nodes, ARGV_NODES) || json_root(&d)->type != JSON_ARRAY)
		return;
	for (const struct json_node *w = json_first(&d, json_root(&d)); w; w = json_next(&d, w)) {
		char word[CMDLINE_MAX + 1];
		size_t wl;

		if (json_get_string(&d, w, word, sizeof(word), &wl))
			continue; /* not a string, or longer than the line: the rest still tells */
		if (first) {
			const char *slash = strrchr(word, '/');

			*base = keep_str(l, slash ? slash + 1 : word);
			first = false;
		}
		if (n && n < CMDLINE_MAX)
			line[n++] = ' ';
		for (size_t k = 0; k < wl && n < CMDLINE_MAX; k++)
			line[n++] = word[k];
	}
	line[n] = 0;
	if (n)
		*cmdline = keep(l->si, line, n);
}

static int on_process(void *ctx, const struct store_sweep_process *p)
{
	struct loader *l = ctx;
	struct sweep_input *si = l->si;
	struct sw_process *w;
	long hi = host_add(l, p->host_id);
	size_t i = si->nprocs;

	if (hi < 0)
		return 1;
	if (!p->start_real_ns.known) /* no real time: nothing to judge it by */
		return 0;
	if (grow((void **)&si->procs, &si->caps[2], i, sizeof(*si->procs)) ||
	    grow((void **)&l->keys, &l->capkeys, i, sizeof(*l->keys))) {
		l->err = -ENOMEM;
		return 1;
	}
	w = &si->procs[i];
	memset(w, 0, sizeof(*w));
	w->host = (uint32_t)hi;
	w->pid = p->tgid;
	w->ppid = p->ppid.known ? p->ppid.v : -1;
	w->parent = -1;
	w->exe = keep_str(l, p->exe);
	w->tool = keep_str(l, p->tool);
	argv_words(l, p->argv_json, &w->argv0_base, &w->cmdline);
	w->start_ns = p->start_real_ns.v;
	w->end_ns = p->end_real_ns.known ? p->end_real_ns.v : 0;
	w->last_active_ns = p->last_sample_ns.known ? p->last_sample_ns.v : w->start_ns;
	w->cpu_ns = known_u64(p->cpu_ns);
	w->rss_bytes = known_u64(p->sample_rss_bytes);
	w->run_id = p->run_id.known ? p->run_id.v : -1;
	w->run_root = p->run_root;
	l->keys[i].boot = keep_str(l, p->boot_id ? p->boot_id : "");
	l->keys[i].parent_start = p->parent_start_ns.known ? p->parent_start_ns.v : -1;
	l->keys[i].start_mono = p->start_ns;
	if (l->err)
		return 1;
	si->nprocs++;
	return 0;
}

/* Order of processes for finding parents: host, boot, pid, start (qsort_r's context: the loader). */
static int by_key(const void *a, const void *b, void *ctx)
{
	const struct loader *l = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct sw_process *p = &l->si->procs[i], *q = &l->si->procs[j];
	int c;

	if (p->host != q->host)
		return p->host < q->host ? -1 : 1;
	c = strcmp(l->keys[i].boot, l->keys[j].boot);
	if (c)
		return c;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return l->keys[i].start_mono < l->keys[j].start_mono ? -1 : l->keys[i].start_mono > l->keys[j].start_mono;
}

/* Where (host, boot, pid) compares against process m. */
static int cmp_owner(const struct loader *l, size_t m, uint32_t host, const char *boot, int64_t pid)
{
	const struct sw_process *p = &l->si->procs[m];
	int c;

	if (p->host != host)
		return p->host < host ? -1 : 1;
	c = strcmp(l->keys[m].boot, boot);
	if (c)
		return c;
	return p->pid < pid ? -1 : p->pid > pid;
}

/*
 * Each process's parent: the process of the same host and boot with its
 * ppid as pid that started last no later than it (exactly at the start its
 * fork record names, when known): pids are reused.
 */
static int link_parents(struct loader *l)
{
	struct sweep_input *si = l->si;
	size_t *ord = malloc((si->nprocs ? si->nprocs : 1) * sizeof(*ord));

	if (!ord)
		return -ENOMEM;
	for (size_t i = 0; i < si->nprocs; i++)
		ord[i] = i;
	qsort_r(ord, si->nprocs, sizeof(*ord), by_key, l);
	for (size_t i = 0; i < si->nprocs; i++) {
		struct sw_process *c = &si->procs[i];
		const struct proc_key *k = &l->keys[i];
		size_t lo = 0, hi = si->nprocs;

		if (c->ppid < 0)
			continue;
		while (lo < hi) { /* the first of (host, boot, ppid) in ord */
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_owner(l, ord[mid], c->host, k->boot, c->ppid) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < si->nprocs && !cmp_owner(l, ord[lo], c->host, k->boot, c->ppid); lo++) {
			size_t j = ord[lo];

			if (j == i || l->keys[j].start_mono > k->start_mono)
				break;
			if (k->parent_start < 0 || l->keys[j].start_mono == k->parent_start)
				c->parent = (int64_t)j;
		}
	}
	free(ord);
	return 0;
}

/* ---- the whole ------------------------------------------------------------------------------ */

int sweep_input_load(struct store *s, int64_t since_ns, int64_t now_ns, struct sweep_input *out, char *err,
		     size_t errlen)
{
	struct loader l = { .si = out };
	int rc;

	memset(out, 0, sizeof(*out));
	l.nodes = malloc(ARGV_NODES * sizeof(*l.nodes));
	if (!l.nodes) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!now_ns) {
		rc = store_sweep_newest(s, &now_ns);
		if (rc)
			snprintf(err, errlen, "%s", rc == STORE_E_NOT_FOUND ? "the lake holds no batch yet: nothing to sweep" :
					  store_last_error(s));
		if (rc) {
			free(l.nodes);
			return -1;
		}
	}
	if (tune_input_load(s, NULL, 0, &out->runs, err, errlen)) {
		free(l.nodes);
		sweep_input_free(out);
		return -1;
	}
	rc = store_sweep_beats(s, since_ns, on_beat, &l);
	if (!rc && !l.err)
		rc = store_sweep_processes(s, since_ns, on_process, &l);
	if (!rc && !l.err)
		l.err = link_parents(&l);
	free(l.keys);
	free(l.nodes);
	if (rc || l.err) {
		if (l.err)
			snprintf(err, errlen, "%s", strerror(-l.err));
		else
			snprintf(err, errlen, "%s: %s", store_strerror(rc), store_last_error(s));
		sweep_input_free(out);
		return -1;
	}
	/* The beats' indexes into pointers, now that the array has stopped moving. */
	for (size_t h = 0; h < out->nhosts; h++)
		out->hosts[h].beats = out->hosts[h].nbeats ? out->beats + (uintptr_t)out->hosts[h].beats : NULL;
	out->in.hosts = out->hosts;
	out->in.nhosts = out->nhosts;
	out->in.procs = out->procs;
	out->in.nprocs = out->nprocs;
	out->in.runs = &out->runs.in;
	out->in.since_ns = since_ns;
	out->in.now_ns = now_ns;
	return 0;
}

void sweep_input_free(struct sweep_input *si)
{
	for (size_t i = 0; i < si->nstrings; i++)
		free(si->strings[i]);
	free(si->strings);
	free(si->hosts);
	free(si->beats);
	free(si->procs);
	tune_input_free(&si->runs);
	memset(si, 0, sizeof(*si));
}

int sweep_parse_window(const char *s, uint64_t *ns)
{
	size_t n = strlen(s);
	uint64_t v = 0;

	if (n > 1 && n < 24 && s[n - 1] == 'd') { /* days ("14d", "1.5d"): a window, not a tracer.conf duration */
		char number[24];

		memcpy(number, s, n - 1);
		number[n - 1] = 0;
		if (parse_duration(number, 0, &v) || v > (uint64_t)INT64_MAX / 2 / 86400)
			return -1;
		v *= 86400; /* a number of seconds read as nanoseconds: as many days */
	} else if (parse_duration(s, PARSE_UNITS, &v)) {
		return -1;
	}
	if (v == 0 || v > (uint64_t)INT64_MAX / 2)
		return -1;
	*ns = v;
	return 0;
}

void sweep_config_from(const struct tracer_config *cfg, struct sw_config *c)
{
	sw_config_default(c);
	c->gcp_cpu_cores = cfg->sweep_gcp_cpu_millicores / 1000.0;
	c->gcp_cpu_share = cfg->sweep_gcp_cpu_percent / 100.0;
	c->gcp_rx_bytes_per_s = cfg->sweep_gcp_rx_bytes_per_s;
	c->gcp_tx_bytes_per_s = cfg->sweep_gcp_tx_bytes_per_s;
	c->gcp_net_share = cfg->sweep_gcp_net_percent / 100.0;
	c->gcp_min_observed_ns = (int64_t)cfg->sweep_gcp_min_observed_ns;
	c->aws_cpu_percent = cfg->sweep_aws_cpu_percent;
	c->aws_net_bytes = cfg->sweep_aws_net_bytes;
	c->aws_days = cfg->sweep_aws_days;
	c->aws_window_days = cfg->sweep_aws_window_days;
	c->aws_day_ns = (int64_t)cfg->sweep_day_ns;
	c->run_idle_min_ns = (int64_t)cfg->sweep_run_idle_min_ns;
	c->worker_idle_ns = (int64_t)cfg->sweep_worker_idle_ns;
	c->session_idle_ns = (int64_t)cfg->sweep_session_idle_ns;
	c->idle_proc_age_ns = (int64_t)cfg->sweep_idle_process_age_ns;
	c->idle_proc_idle_ns = (int64_t)cfg->sweep_idle_process_idle_ns;
	c->idle_proc_rss_bytes = cfg->sweep_idle_process_rss;
	c->reserved_min_ns = (int64_t)cfg->sweep_reserved_min_ns;
	c->reserved_cpu_share = cfg->sweep_reserved_cpu_percent / 100.0;
	c->reserved_mem_share = cfg->sweep_reserved_memory_percent / 100.0;
	c->reserved_min_cores = cfg->sweep_reserved_min_cpu_millicores / 1000.0;
	c->reserved_min_bytes = cfg->sweep_reserved_min_memory;
}
