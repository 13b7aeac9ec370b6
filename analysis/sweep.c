/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer sweep (issue 17): where compute is wasted (docs/sweep.md).
 *
 *   idle_host_gcp   Google Cloud's idle-VM recommender: under 0.03 vCPU
 *                   for 97% of the observed time and under 2,000 B/s in
 *                   and 1,000 B/s out for 95% of it, over at least a day;
 *   idle_host_aws   AWS Trusted Advisor's "Low Utilization Amazon EC2
 *                   Instances": daily CPU <= 10% and network <= 5 MB on 4
 *                   or more of the last 14 days;
 *   run_idle        a run held its host while none of its steps ran
 *                   (before the first, between two, after the last);
 *   worker_idle     a run's root alive, everything under it ended, idle;
 *   session_idle    Jupyter, RStudio or a shell under sshd/tmux/screen
 *                   that nothing in it used for hours;
 *   process_idle_memory  a long-lived idle process holding memory;
 *   reserved_unused a step whose CPU or memory limit was far above what
 *                   it used, for long enough to matter.
 *
 * Observed time only: where a host sent no beats nothing is known, and
 * nothing is counted idle. Pure: no I/O, no clock, no global state.
 */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hsort.h"

#define NS_PER_S 1e9
#define NS_PER_HOUR 3.6e12
#define SW_AWS_MAX_WINDOW_DAYS 3660u  /* ten years of days: the per-host day table's bound */
#define NO_HOST UINT32_MAX

static const char *const kind_names[SW_KINDS] = {
	"idle_host_gcp", "idle_host_aws", "run_idle", "worker_idle", "session_idle", "process_idle_memory",
	"reserved_unused",
};

void sw_config_default(struct sw_config *c)
{
	/* Google Cloud, "Idle VM recommendations" (How detection of idle VM instances works). */
	c->gcp_cpu_cores = 0.03;
	c->gcp_cpu_share = 0.97;
	c->gcp_rx_bytes_per_s = 2000;
	c->gcp_tx_bytes_per_s = 1000;
	c->gcp_net_share = 0.95;
	c->gcp_min_observed_ns = 86400LL * 1000000000LL;
	/* AWS Trusted Advisor, "Low Utilization Amazon EC2 Instances". */
	c->aws_cpu_percent = 10;
	c->aws_net_bytes = 5000000;
	c->aws_days = 4;
	c->aws_window_days = 14;
	c->aws_day_ns = 86400LL * 1000000000LL;
	/* Ours (docs/sweep.md says why each). */
	c->run_idle_min_ns = 300LL * 1000000000LL;
	c->worker_idle_ns = 3600LL * 1000000000LL;
	c->session_idle_ns = 4 * 3600LL * 1000000000LL;
	c->idle_proc_age_ns = 24 * 3600LL * 1000000000LL;
	c->idle_proc_idle_ns = 6 * 3600LL * 1000000000LL;
	c->idle_proc_rss_bytes = 1ull << 30;
	c->reserved_min_ns = 600LL * 1000000000LL;
	c->reserved_cpu_share = 0.25;
	c->reserved_mem_share = 0.25;
	c->reserved_min_cores = 1;
	c->reserved_min_bytes = 1ull << 30;
}

const char *sw_kind_name(enum sw_kind k)
{
	return (unsigned)k < SW_KINDS ? kind_names[k] : "unknown";
}

/* ---- helpers ---------------------------------------------------------------- */

struct flist {
	struct sw_finding *v;
	size_t n, cap;
};

/*
 * A new finding over [start, end), observed over that span, with nothing
 * else known yet (shares NaN, no run, no process, no step, no price);
 * NULL: out of memory.
 */
static struct sw_finding *flist_add(struct flist *l, enum sw_kind kind, uint32_t host, int64_t start, int64_t end)
{
	struct sw_finding *f;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct sw_finding *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->host = host;
	f->start_ns = start;
	f->end_ns = end;
	f->observed_s = (double)(end - start) / NS_PER_S;
	f->run_id = -1;
	f->proc = -1;
	f->step = -1;
	f->idle_share_cpu = f->idle_share_net = NAN;
	f->cpu_limit = f->cpu_used = NAN;
	f->cost_usd = -1;
	f->price_per_hour = -1;
	f->price_source = COST_PRICE_NONE;
	return f;
}

/* price x hours x share; < 0 when the price or the share (< 0) is unknown. */
static void set_cost(struct sw_finding *f, double hours, double share)
{
	f->cost_usd = f->price_per_hour >= 0 && share >= 0 ? f->price_per_hour * hours * share : -1;
}

static void price_host(const struct sw_host *h, const struct price_table *table, struct sw_finding *f)
{
	f->price_per_hour = cost_host_price(&h->host, table, &f->price_source);
}

/* The host's memory: its MemTotal as its identity gave it, else its newest beat's; 0 unknown. */
static uint64_t host_memory(const struct sw_host *h)
{
	if (h->host.memory_bytes)
		return h->host.memory_bytes;
	for (size_t i = h->nbeats; i-- > 0;)
		if (h->beats[i].mem_total_bytes)
			return h->beats[i].mem_total_bytes;
	return 0;
}

/* A share of the host's memory, at most 1; < 0 when the host's memory is unknown. */
static double memory_share(uint64_t bytes, uint64_t total)
{
	double s;

	if (!total)
		return -1;
	s = (double)bytes / (double)total;
	return s > 1 ? 1 : s;
}

/* A duration as "5.0 h", "12.5 min" or "45 s". */
static const char *dur_str(int64_t ns, char *buf, size_t len)
{
	if (ns >= 3600000000000LL)
		snprintf(buf, len, "%.1f h", (double)ns / NS_PER_HOUR);
	else if (ns >= 60000000000LL)
		snprintf(buf, len, "%.1f min", (double)ns / 6e10);
	else
		snprintf(buf, len, "%.0f s", (double)ns / NS_PER_S);
	return buf;
}

/*
 * A share as a percentage rounded down to 0.1: 96.96% shows as 96.9%, never
 * as the 97.0% it did not reach (the epsilon absorbs 0.97's binary error).
 */
static double pct_down(double share)
{
	return floor(share * 1000 + 1e-6) / 10;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The part of [s, e) inside [lo, hi); false when nothing is. */
static bool clip(int64_t s, int64_t e, int64_t lo, int64_t hi, int64_t *cs, int64_t *ce)
{
	*cs = s > lo ? s : lo;
	*ce = e < hi ? e : hi;
	return *ce > *cs;
}

/* ---- checks ------------------------------------------------------------------- */

static bool share_ok(double x)
{
	return isfinite(x) && x >= 0 && x <= 1;
}

static bool nonneg_ok(double x)
{
	return isfinite(x) && x >= 0;
}

static int check_config(const struct sw_config *c)
{
	if (!nonneg_ok(c->gcp_cpu_cores) || !share_ok(c->gcp_cpu_share) || !nonneg_ok(c->gcp_rx_bytes_per_s) ||
	    !nonneg_ok(c->gcp_tx_bytes_per_s) || !share_ok(c->gcp_net_share) || c->gcp_min_observed_ns < 0)
		return -EINVAL;
	if (!nonneg_ok(c->aws_cpu_percent) || c->aws_cpu_percent > 100 || c->aws_days == 0 ||
	    c->aws_window_days == 0 || c->aws_window_days > SW_AWS_MAX_WINDOW_DAYS || c->aws_day_ns <= 0 ||
	    c->aws_day_ns > INT64_MAX / 2 / (int64_t)(SW_AWS_MAX_WINDOW_DAYS + 1))
		return -EINVAL;
	if (c->run_idle_min_ns <= 0 || c->worker_idle_ns <= 0 || c->session_idle_ns <= 0 ||
	    c->idle_proc_age_ns <= 0 || c->idle_proc_idle_ns <= 0)
		return -EINVAL;
	if (c->reserved_min_ns <= 0 || !share_ok(c->reserved_cpu_share) || !share_ok(c->reserved_mem_share) ||
	    !nonneg_ok(c->reserved_min_cores))
		return -EINVAL;
	return 0;
}

static bool range_ok(uint32_t first, uint32_t n, size_t size)
{
	return first <= size && n <= size - first;
}

static int check_input(const struct sw_input *in)
{
	if ((in->nhosts && !in->hosts) || (in->nprocs && !in->procs) || in->nhosts >= NO_HOST ||
	    in->nprocs >= UINT32_MAX || in->now_ns <= 0 || in->since_ns > in->now_ns)
		return -EINVAL;
	for (size_t i = 0; i < in->nhosts; i++)
		if (in->hosts[i].nbeats && !in->hosts[i].beats)
			return -EINVAL;
	for (size_t i = 0; i < in->nprocs; i++) {
		const struct sw_process *p = &in->procs[i];

		if (p->host >= in->nhosts || p->parent < -1 || p->parent >= (int64_t)in->nprocs ||
		    p->parent == (int64_t)i)
			return -EINVAL;
	}
	if (in->runs) {
		const struct an_input *a = in->runs;

		if ((a->nruns && !a->runs) || (a->nsteps && !a->steps))
			return -EINVAL;
		for (size_t i = 0; i < a->nruns; i++)
			if (!range_ok(a->runs[i].step_first, a->runs[i].step_n, a->nsteps))
				return -EINVAL;
	}
	return 0;
}

/* ---- 1. idle host, Google Cloud's idle-VM recommender -------------------------------------- */

/*
 * Anchor: Google Cloud, "Idle VM recommendations"
 * (cloud.google.com/compute/docs/instances/idle-vm-recommendations-overview):
 * a VM is idle when over the observation period (1 to 14 days) its CPU
 * stayed under 0.03 vCPU for 97% of the time and it received under 2,000
 * B/s and sent under 1,000 B/s for 95% of it. Here per beat: cores = busy / duration, rates = bytes /
 * duration; the shares are of the observed time (the beats' durations
 * inside [since, now]), never of the gaps between them.
 */
static int rule_gcp(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		    uint32_t hi, struct flist *out)
{
	const struct sw_host *h = &in->hosts[hi];
	int64_t observed = 0, cpu_idle = 0, net_idle = 0, first = INT64_MAX, last = INT64_MIN;
	char obs[32], span[32];
	struct sw_finding *f;
	double cpu_share, net_share;

	for (size_t i = 0; i < h->nbeats; i++) {
		const struct sw_beat *b = &h->beats[i];
		int64_t dur = b->end_ns - b->start_ns, s, e;
		double secs = (double)dur / NS_PER_S;

		if (dur <= 0 || !clip(b->start_ns, b->end_ns, in->since_ns, in->now_ns, &s, &e))
			continue;
		first = s < first ? s : first;
		last = e > last ? e : last;
		observed += e - s;
		if ((double)b->cpu_busy_ns / (double)dur < c->gcp_cpu_cores)
			cpu_idle += e - s;
		if ((double)b->net_rx_bytes / secs < c->gcp_rx_bytes_per_s &&
		    (double)b->net_tx_bytes / secs < c->gcp_tx_bytes_per_s)
			net_idle += e - s;
	}
	if (observed <= 0 || observed < c->gcp_min_observed_ns)
		return 0;
	cpu_share = (double)cpu_idle / (double)observed;
	net_share = (double)net_idle / (double)observed;
	if (cpu_share < c->gcp_cpu_share || net_share < c->gcp_net_share)
		return 0;
	f = flist_add(out, SW_IDLE_HOST_GCP, hi, first, last);
	if (!f)
		return -ENOMEM;
	f->idle_share_cpu = cpu_share;
	f->idle_share_net = net_share;
	f->observed_s = (double)observed / NS_PER_S;
	price_host(h, table, f);
	set_cost(f, (double)observed / NS_PER_HOUR, 1);
	snprintf(f->evidence, sizeof(f->evidence),
		 "cpu under %g cores %.1f%% of %s observed (%.1f%% needed), network under %g B/s in and "
		 "%g B/s out %.1f%% (%.1f%% needed), from beats spanning %s",
		 c->gcp_cpu_cores, pct_down(cpu_share), dur_str(observed, obs, sizeof(obs)),
		 c->gcp_cpu_share * 100, c->gcp_rx_bytes_per_s, c->gcp_tx_bytes_per_s, pct_down(net_share),
		 c->gcp_net_share * 100, dur_str(last - first, span, sizeof(span)));
	return 0;
}

/* ---- 2. idle host, AWS Trusted Advisor ----------------------------------------------------- */

struct aws_day {
	int64_t covered;            /* ns of the day beats covered */
	double busy_ns;             /* CPU busy, summed over CPUs */
	double cap_ns;              /* CPUs x covered time */
	double net_bytes;           /* received + sent, as observed */
};

/* Spread one beat over the days it touches, its figures taken as even over its length. */
static void aws_spread(const struct sw_beat *b, uint32_t cpus, int64_t s, int64_t e, int64_t first_day,
		       int64_t day, struct aws_day *days)
{
	double dur = (double)(b->end_ns - b->start_ns);

	for (int64_t k = floor_div(s, day); k * day < e; k++) {
		int64_t ds, de;
		double frac;
		struct aws_day *d = &days[k - first_day];

		if (!clip(s, e, k * day, (k + 1) * day, &ds, &de))
			continue;
		frac = (double)(de - ds) / dur;
		d->covered += de - ds;
		d->busy_ns += (double)b->cpu_busy_ns * frac;
		d->cap_ns += (double)cpus * (double)(de - ds);
		d->net_bytes += ((double)b->net_rx_bytes + (double)b->net_tx_bytes) * frac;
	}
}

/*
 * Anchor: AWS Trusted Advisor, "Low Utilization Amazon EC2 Instances"
 * (docs.aws.amazon.com/awssupport/latest/user/cost-optimization-checks.html): an
 * instance whose daily average CPU was 10% or less and network I/O 5 MB or
 * less on 4 or more of the last 14 days. Days are aws_day_ns slices aligned
 * to the epoch (UTC days); the window is the aws_window_days whole days
 * before the one holding now, cut at since. A day is judged when beats
 * cover at least half of it; its bytes are those observed, not scaled up.
 */
static int rule_aws(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		    uint32_t hi, struct aws_day *days, struct flist *out)
{
	const struct sw_host *h = &in->hosts[hi];
	int64_t day = c->aws_day_ns, last_day = floor_div(in->now_ns, day);
	int64_t first_day = last_day - c->aws_window_days, lo, end = last_day * day;
	int64_t low_covered = 0, all_covered = 0, span_s = 0, span_e = 0;
	uint32_t ndays = 0, nlow = 0;
	double max_cpu = 0, max_net = 0;
	char obs[32];
	struct sw_finding *f;

	lo = first_day * day > in->since_ns ? first_day * day : in->since_ns;
	memset(days, 0, c->aws_window_days * sizeof(*days));
	for (size_t i = 0; i < h->nbeats; i++) {
		const struct sw_beat *b = &h->beats[i];
		uint32_t cpus = b->cpus ? b->cpus : h->host.cpus;
		int64_t s, e;

		/* without a CPU count a beat's busy time is no percentage: it covers nothing */
		if (b->end_ns <= b->start_ns || !cpus || !clip(b->start_ns, b->end_ns, lo, end, &s, &e))
			continue;
		aws_spread(b, cpus, s, e, first_day, day, days);
	}
	for (uint32_t k = 0; k < c->aws_window_days; k++) {
		const struct aws_day *d = &days[k];
		double cpu;

		if (d->covered < day - d->covered) /* less than half the day observed */
			continue;
		ndays++;
		all_covered += d->covered;
		cpu = d->busy_ns / d->cap_ns;
		if (cpu > c->aws_cpu_percent / 100 || d->net_bytes > (double)c->aws_net_bytes)
			continue;
		if (!nlow++)
			span_s = (first_day + k) * day;
		span_e = (first_day + k + 1) * day;
		low_covered += d->covered;
		max_cpu = cpu > max_cpu ? cpu : max_cpu;
		max_net = d->net_bytes > max_net ? d->net_bytes : max_net;
	}
	if (nlow < c->aws_days)
		return 0;
	f = flist_add(out, SW_IDLE_HOST_AWS, hi, span_s > lo ? span_s : lo, span_e);
	if (!f)
		return -ENOMEM;
	f->low_days = nlow;
	f->days = ndays;
	f->observed_s = (double)all_covered / NS_PER_S;
	price_host(h, table, f);
	set_cost(f, (double)low_covered / NS_PER_HOUR, 1);
	snprintf(f->evidence, sizeof(f->evidence),
		 "%u of the %u days observed in the last %u were low (CPU at most %g%% of the host's CPUs and "
		 "network at most %g MB a day; the busiest of them %.1f%% and %.2f MB), %s of them observed",
		 nlow, ndays, c->aws_window_days, c->aws_cpu_percent, (double)c->aws_net_bytes / 1e6,
		 max_cpu * 100, max_net / 1e6, dur_str(low_covered, obs, sizeof(obs)));
	return 0;
}

/* ---- 3. idle time inside a run ------------------------------------------------------------- */

/* A stretch where steps of a run ran: the step that started it and the one that ended last in it. */
struct busy {
	int64_t s, e;
	uint32_t first_step, last_step;
};

static int busy_cmp(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	if (x->s != y->s)
		return (x->s > y->s) - (x->s < y->s);
	return (x->first_step > y->first_step) - (x->first_step < y->first_step);
}

static const char *step_name(const struct an_step *t)
{
	if (t->name && t->name[0])
		return t->name;
	return t->step_id && t->step_id[0] ? t->step_id : "?";
}

/* "run #7 (wf-a)": its number, and its label when it has one other than that number ("#7"). */
static const char *run_str(const struct an_run *r, char *buf, size_t len)
{
	char num[24];

	snprintf(num, sizeof(num), "#%lld", (long long)r->lake_id);
	if (r->label && r->label[0] && strcmp(r->label, num))
		snprintf(buf, len, "run %s (%s)", num, r->label);
	else
		snprintf(buf, len, "run %s", num);
	return buf;
}

/* A host's id: its own, else its identity's; "" unknown. */
static const char *host_id(const struct sw_host *h)
{
	if (h->host_id)
		return h->host_id;
	return h->host.host_id ? h->host.host_id : "";
}

/* The hosts' indices by host id, for a run's host. */
static int host_id_cmp(const void *a, const void *b, void *ctx)
{
	const struct sw_host *hosts = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(host_id(&hosts[x]), host_id(&hosts[y]));

	return c ? c : (x > y) - (x < y);
}

static uint32_t host_of_run(const struct sw_input *in, const uint32_t *by_id, const char *id)
{
	size_t lo = 0, hi = in->nhosts;

	if (!id || !id[0])
		return NO_HOST;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(host_id(&in->hosts[by_id[mid]]), id);

		if (c == 0)
			return by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NO_HOST;
}

struct run_gap {
	int64_t s, e;
	const struct an_step *before, *after; /* NULL: the run's start (before), its end (after) */
};

static int add_run_gap(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		       uint32_t ri, uint32_t host, const struct run_gap *g, struct flist *out)
{
	const struct an_run *r = &in->runs->runs[ri];
	char len[32], run[160];
	struct sw_finding *f;
	int64_t s, e;

	if (!clip(g->s, g->e, in->since_ns, in->now_ns, &s, &e) || e - s < c->run_idle_min_ns)
		return 0;
	f = flist_add(out, SW_RUN_IDLE, host, s, e);
	if (!f)
		return -ENOMEM;
	f->run_id = r->lake_id;
	f->price_per_hour = cost_run_price(r, table, &f->price_source);
	set_cost(f, (double)(e - s) / NS_PER_HOUR, 1);
	dur_str(e - s, len, sizeof(len));
	run_str(r, run, sizeof(run));
	if (g->before && g->after)
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s held its host with no step running for %s, from the end of step '%s' to the start of "
			 "step '%s'", run, len, step_name(g->before), step_name(g->after));
	else if (g->after)
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s held its host for %s from its start before its first step '%s' started", run, len,
			 step_name(g->after));
	else
		snprintf(f->evidence, sizeof(f->evidence), "%s held its host for %s after its last step '%s' ended, until %s",
			 run, len, step_name(g->before), r->end_ns > 0 ? "the run ended" : "now (it is still running)");
	return 0;
}

/*
 * A run held its host from its start to its end (a running run: to now).
 * Its steps' intervals (a running step: to the run's end), clipped to the
 * run, are merged; what is left - before the first step, between two,
 * after the last - is idle when at least run_idle_min_ns (and inside the
 * window). A run without any step with a start is skipped: nothing tells
 * its work from its waiting. Anchor: the idle share of docs/cost.md
 * ("Idle cost"), here as the spans themselves.
 */
static int rule_run(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		    uint32_t ri, const uint32_t *by_id, struct busy *busy, struct flist *out)
{
	const struct an_run *r = &in->runs->runs[ri];
	const struct an_step *steps = in->runs->steps + r->step_first;
	int64_t rs = r->start_ns, re = r->end_ns > 0 ? r->end_ns : in->now_ns;
	uint32_t host = host_of_run(in, by_id, r->host.host_id);
	struct run_gap g;
	size_t n = 0, m = 0;
	int rc = 0;

	if (rs <= 0 || re <= rs)
		return 0;
	for (uint32_t j = 0; j < r->step_n; j++) {
		const struct an_step *t = &steps[j];
		int64_t e = t->end_ns > 0 ? t->end_ns : re;

		if (t->start_ns <= 0 || !clip(t->start_ns, e, rs, re, &busy[n].s, &busy[n].e))
			continue;
		busy[n].first_step = busy[n].last_step = j;
		n++;
	}
	if (n == 0)
		return 0;
	hsort(busy, n, sizeof(*busy), busy_cmp);
	/* merge in place: busy[0..m) are the stretches, in order */
	for (size_t i = 1; i < n; i++) {
		struct busy *cur = &busy[m];

		if (busy[i].s > cur->e) {
			busy[++m] = busy[i];
		} else if (busy[i].e > cur->e) {
			cur->e = busy[i].e;
			cur->last_step = busy[i].last_step;
		}
	}
	m++;
	g = (struct run_gap){ .s = rs, .e = busy[0].s, .before = NULL, .after = &steps[busy[0].first_step] };
	rc = add_run_gap(in, c, table, ri, host, &g, out);
	for (size_t i = 1; i < m && !rc; i++) {
		g = (struct run_gap){ .s = busy[i - 1].e, .e = busy[i].s, .before = &steps[busy[i - 1].last_step],
				      .after = &steps[busy[i].first_step] };
		rc = add_run_gap(in, c, table, ri, host, &g, out);
	}
	if (!rc) {
		g = (struct run_gap){ .s = busy[m - 1].e, .e = re, .before = &steps[busy[m - 1].last_step],
				      .after = NULL };
		rc = add_run_gap(in, c, table, ri, host, &g, out);
	}
	return rc;
}

/*
 * A step's allocation against its use. CPU: the cores it used at its
 * busiest (p95 of its samples; without samples its average, cpu_ns over its
 * wall time) against its CPU limit; memory: its concurrent peak against its
 * memory limit. A resource is reserved but unused when the step used at
 * most the configured share of it and left at least the configured amount.
 * The step must have run reserved_min_ns inside the window. Cost: the
 * unused part as a share of the host (the larger of CPUs and memory, as a
 * scheduler packs by the scarcer), times the host's price, over the span.
 */
static int rule_reserved(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
			 uint32_t ri, const uint32_t *by_id, struct flist *out)
{
	const struct an_run *r = &in->runs->runs[ri];
	uint32_t host = host_of_run(in, by_id, r->host.host_id);

	for (uint32_t j = 0; j < r->step_n; j++) {
		uint32_t k = r->step_first + j;
		const struct an_step *t = &in->runs->steps[k];
		int64_t e = t->end_ns > 0 ? t->end_ns : in->now_ns, s, ce;
		double wall = (double)(e - t->start_ns) / NS_PER_S, used, share = -1;
		bool cpu = false, mem = false;
		char len[32], lim[32], use[32], what[192] = "", run[160];
		struct sw_finding *f;

		if (t->start_ns <= 0 || e <= t->start_ns || !clip(t->start_ns, e, in->since_ns, in->now_ns, &s, &ce) ||
		    ce - s < c->reserved_min_ns)
			continue;
		used = t->cores_known ? t->cores_p95 : (double)t->cpu_ns / NS_PER_S / wall;
		if (t->cpu_limit > 0 && used <= c->reserved_cpu_share * t->cpu_limit &&
		    t->cpu_limit - used >= c->reserved_min_cores) {
			cpu = true;
			if (r->host.cpus)
				share = (t->cpu_limit - used) / r->host.cpus;
		}
		if (t->mem_limit_bytes && (double)t->peak_mem_bytes <= c->reserved_mem_share * (double)t->mem_limit_bytes &&
		    t->mem_limit_bytes - t->peak_mem_bytes >= c->reserved_min_bytes) {
			double m = memory_share(t->mem_limit_bytes - t->peak_mem_bytes, r->host.memory_bytes);

			mem = true;
			share = m > share ? m : share;
		}
		if (!cpu && !mem)
			continue;
		f = flist_add(out, SW_RESERVED_UNUSED, host, s, ce);
		if (!f)
			return -ENOMEM;
		f->run_id = r->lake_id;
		f->step = k;
		f->cpu_unused = cpu;
		f->mem_unused = mem;
		f->cpu_limit = t->cpu_limit > 0 ? t->cpu_limit : NAN;
		f->cpu_used = used;
		f->mem_limit_bytes = t->mem_limit_bytes;
		f->mem_used_bytes = t->peak_mem_bytes;
		f->price_per_hour = cost_run_price(r, table, &f->price_source);
		set_cost(f, (double)(ce - s) / NS_PER_HOUR, share > 1 ? 1 : share);
		if (cpu)
			snprintf(what, sizeof(what), "%.2f of its %.2f CPUs (%s)", used, t->cpu_limit,
				 t->cores_known ? "p95 of its samples" : "its average");
		if (mem)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s of its %s memory limit",
				 cpu ? " and " : "", an_bytes_str(t->peak_mem_bytes, use, sizeof(use)),
				 an_bytes_str(t->mem_limit_bytes, lim, sizeof(lim)));
		snprintf(f->evidence, sizeof(f->evidence), "step '%s' of %s used at most %s over %s", step_name(t),
			 run_str(r, run, sizeof(run)), what, dur_str(ce - s, len, sizeof(len)));
	}
	return 0;
}

static int rules_runs(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		      struct flist *out)
{
	const struct an_input *a = in->runs;
	uint32_t *by_id = malloc((in->nhosts + 1) * sizeof(*by_id)), most = 0;
	struct busy *busy;
	int rc = 0;

	if (!by_id)
		return -ENOMEM;
	for (size_t i = 0; i < in->nhosts; i++)
		by_id[i] = (uint32_t)i;
	/* const dropped for hsort_r's context only: host_id_cmp reads the hosts */
	hsort_r(by_id, in->nhosts, sizeof(*by_id), host_id_cmp, (void *)(uintptr_t)in->hosts);
	for (size_t i = 0; i < a->nruns; i++)
		most = a->runs[i].step_n > most ? a->runs[i].step_n : most;
	busy = malloc(((size_t)most + 1) * sizeof(*busy));
	if (!busy) {
		free(by_id);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->nruns && !rc; i++) {
		rc = rule_run(in, c, table, (uint32_t)i, by_id, busy, out);
		if (!rc)
			rc = rule_reserved(in, c, table, (uint32_t)i, by_id, out);
	}
	free(busy);
	free(by_id);
	return rc;
}

/* ---- processes: their subtrees ------------------------------------------------------------- */

#define FLAG_WORKER 1u
#define FLAG_SESSION 2u

/* What a process's subtree (it and every descendant) did, folded up from the leaves. */
struct sub {
	int64_t last;               /* the newest activity in it: a last sample, a start or an end */
	uint32_t who;               /* the process that did it */
	uint32_t depth;             /* ancestors above it; UINT32_MAX not yet known */
	uint32_t descendants;
	uint64_t rss;               /* resident, summed over its processes alive at now */
	bool live_descendant;       /* a descendant alive at now */
	uint8_t flags;              /* FLAG_*: reported as */
};

static bool alive(const struct sw_process *p, int64_t now)
{
	return (p->end_ns == 0 || p->end_ns > now) && p->start_ns <= now;
}

/* A process's own newest activity: its newest sample, its start, or its end once it ended. */
static int64_t activity(const struct sw_process *p, int64_t now)
{
	int64_t a = p->last_active_ns > p->start_ns ? p->last_active_ns : p->start_ns;

	if (p->end_ns > 0 && p->end_ns <= now && p->end_ns > a)
		a = p->end_ns;
	return a;
}

/* Every process's depth; -EINVAL when parents loop. stack: nprocs entries. */
static int depths(const struct sw_input *in, struct sub *sub, uint32_t *stack)
{
	for (size_t i = 0; i < in->nprocs; i++)
		sub[i].depth = UINT32_MAX;
	for (size_t i = 0; i < in->nprocs; i++) {
		int64_t j = (int64_t)i;
		size_t n = 0;
		uint32_t d;

		while (j >= 0 && sub[j].depth == UINT32_MAX) {
			if (n == in->nprocs)
				return -EINVAL; /* a walk longer than the table: the parents loop */
			stack[n++] = (uint32_t)j;
			j = in->procs[j].parent;
		}
		d = j < 0 ? 0 : sub[j].depth + 1;
		while (n)
			sub[stack[--n]].depth = d++;
	}
	return 0;
}

static int deeper_first(const void *a, const void *b, void *ctx)
{
	const struct sub *sub = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sub[x].depth != sub[y].depth)
		return sub[x].depth > sub[y].depth ? -1 : 1;
	return (x > y) - (x < y);
}

static int subtrees(const struct sw_input *in, struct sub *sub)
{
	uint32_t *order = malloc((in->nprocs + 1) * sizeof(*order));
	int rc;

	if (!order)
		return -ENOMEM;
	rc = depths(in, sub, order);
	if (rc) {
		free(order);
		return rc;
	}
	for (size_t i = 0; i < in->nprocs; i++) {
		const struct sw_process *p = &in->procs[i];

		sub[i].last = activity(p, in->now_ns);
		sub[i].who = (uint32_t)i;
		sub[i].rss = alive(p, in->now_ns) ? p->rss_bytes : 0;
		order[i] = (uint32_t)i;
	}
	hsort_r(order, in->nprocs, sizeof(*order), deeper_first, sub);
	/* children before their parents: each subtree is whole when folded into its parent */
	for (size_t k = 0; k < in->nprocs; k++) {
		uint32_t i = order[k];
		int64_t par = in->procs[i].parent;

		if (par < 0)
			continue;
		if (sub[i].last > sub[par].last) {
			sub[par].last = sub[i].last;
			sub[par].who = sub[i].who;
		}
		sub[par].rss = sub[par].rss > UINT64_MAX - sub[i].rss ? UINT64_MAX : sub[par].rss + sub[i].rss;
		sub[par].live_descendant |= sub[i].live_descendant || alive(&in->procs[i], in->now_ns);
		sub[par].descendants += 1 + sub[i].descendants;
	}
	free(order);
	return 0;
}

static const char *base_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* What to call a process: its tool, its argv[0], its executable's name. */
static const char *proc_name(const struct sw_process *p)
{
	if (p->tool && p->tool[0])
		return p->tool;
	if (p->argv0_base && p->argv0_base[0])
		return p->argv0_base;
	return p->exe && base_of(p->exe)[0] ? base_of(p->exe) : "?";
}

/* ---- 4. a worker stuck idle ----------------------------------------------------------------- */

/*
 * A run's root (the engine, the batch worker) alive at now, with every
 * process under it ended (or none), and neither it nor any of them active
 * for worker_idle_ns: the run holds the host and nothing can work. Anchor:
 * the idle tail of rule 3 (docs/cost.md's idle cost) for a run that never
 * ends: no step runs and none can start, since nothing under the root is
 * left to start one. The hour is ours (docs/sweep.md).
 */
/* A finding about process i of in, from start to now. */
static struct sw_finding *proc_finding(struct flist *out, enum sw_kind kind, const struct sw_input *in, uint32_t i,
				       int64_t start)
{
	struct sw_finding *f = flist_add(out, kind, in->procs[i].host, start, in->now_ns);

	if (f) {
		f->run_id = in->procs[i].run_id;
		f->proc = i;
	}
	return f;
}

static int rule_worker(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		       struct sub *sub, uint32_t i, struct flist *out)
{
	const struct sw_process *p = &in->procs[i], *w;
	int64_t idle = in->now_ns - sub[i].last;
	struct sw_finding *f;
	char len[32];

	if (!p->run_root || !alive(p, in->now_ns) || sub[i].live_descendant || idle < c->worker_idle_ns)
		return 0;
	f = proc_finding(out, SW_WORKER_IDLE, in, i, sub[i].last);
	if (!f)
		return -ENOMEM;
	sub[i].flags |= FLAG_WORKER;
	f->rss_bytes = p->rss_bytes;
	price_host(&in->hosts[p->host], table, f);
	set_cost(f, (double)idle / NS_PER_HOUR, 1);
	dur_str(idle, len, sizeof(len));
	w = &in->procs[sub[i].who];
	if (sub[i].descendants == 0)
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s (pid %lld), the root of run #%lld, is alive with no process under it and has been "
			 "idle for %s",
			 proc_name(p), (long long)p->pid, (long long)p->run_id, len);
	else
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s (pid %lld), the root of run #%lld, is alive and idle for %s: the %u %s under it "
			 "ended, the newest activity was %s's (pid %lld)",
			 proc_name(p), (long long)p->pid, (long long)p->run_id, len, sub[i].descendants,
			 sub[i].descendants == 1 ? "process" : "processes", proc_name(w), (long long)w->pid);
	return 0;
}

/* ---- 5. a forgotten interactive session ------------------------------------------------------ */

enum session { SESSION_NONE = 0, SESSION_JUPYTER, SESSION_KERNEL, SESSION_RSTUDIO, SESSION_SHELL };

/* name is word, or word then ':' or ' ' (argv[0] "sshd: alice@pts/0", "tmux: server"). */
static bool name_is(const char *name, const char *word)
{
	size_t n = strlen(word);

	return name && !strncasecmp(name, word, n) && (name[n] == 0 || name[n] == ':' || name[n] == ' ');
}

static bool starts(const char *name, const char *prefix)
{
	return name && !strncmp(name, prefix, strlen(prefix));
}

/* The names a process goes by: its executable's, its tool's, its argv[0]'s (a login shell's "-bash": bash). */
static void names_of(const struct sw_process *p, const char *names[3])
{
	names[0] = base_of(p->exe);
	names[1] = p->tool;
	names[2] = p->argv0_base && p->argv0_base[0] == '-' ? p->argv0_base + 1 : p->argv0_base;
}

/* Jupyter's commands: jupyter, jupyter-lab, jupyter-notebook, jupyter-server (not jupyter_stats.py). */
static bool jupyter_name(const char *name, size_t len)
{
	return len >= 7 && !strncmp(name, "jupyter", 7) && (len == 7 || name[7] == '-');
}

/* A Python command line running Jupyter: "-m ipykernel_launcher", "-m jupyterlab", a jupyter-* script. */
static enum session python_session(const char *cmdline)
{
	static const char *const kernels[] = { "ipykernel_launcher", "ipykernel" };
	static const char *const servers[] = { "jupyter", "jupyterlab", "notebook", "jupyter_server", "nbclassic" };
	const char *t = cmdline, *next;
	bool module = false;

	if (!cmdline)
		return SESSION_NONE;
	t += strcspn(t, " ");          /* argv[0], the interpreter */
	for (; *t; t = next) {
		size_t len;

		t += strspn(t, " ");
		len = strcspn(t, " ");
		next = t + len;
		if (len == 0)
			break;
		if (module) {
			for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
				if (len == strlen(kernels[k]) && !strncmp(t, kernels[k], len))
					return SESSION_KERNEL;
			for (size_t k = 0; k < sizeof(servers) / sizeof(servers[0]); k++)
				if (len == strlen(servers[k]) && !strncmp(t, servers[k], len))
					return SESSION_JUPYTER;
			return SESSION_NONE;
		}
		if (len == 2 && !strncmp(t, "-m", 2)) {
			module = true;
		} else if (len == 2 && !strncmp(t, "-c", 2)) {
			return SESSION_NONE;
		} else if (t[0] != '-') {
			/* the script: its name, after the last '/' within the token */
			const char *b = t;

			for (const char *q = t; q < next; q++)
				if (*q == '/')
					b = q + 1;
			return jupyter_name(b, (size_t)(next - b)) ? SESSION_JUPYTER : SESSION_NONE;
		}
	}
	return SESSION_NONE;
}

/* The session a process is by its names alone (a shell: before its ancestors are looked at). */
static enum session session_by_name(const struct sw_process *p)
{
	const char *names[3];
	bool python = false;

	names_of(p, names);
	for (int k = 0; k < 3; k++) {
		const char *n = names[k];

		if (!n)
			continue;
		if (jupyter_name(n, strlen(n)))
			return SESSION_JUPYTER;
		if (name_is(n, "rstudio-server") || name_is(n, "rsession"))
			return SESSION_RSTUDIO;
		if (name_is(n, "bash") || name_is(n, "zsh") || name_is(n, "sh") || name_is(n, "fish"))
			return SESSION_SHELL;
		python = python || starts(n, "python");
	}
	return python ? python_session(p->cmdline) : SESSION_NONE;
}

/* The ancestor that makes a shell interactive (sshd, tmux, screen), its name; NULL none. */
static const char *shell_host(const struct sw_input *in, const struct sub *sub, uint32_t i)
{
	static const char *const hosts[] = { "sshd", "tmux", "screen" };
	int64_t j = in->procs[i].parent;

	for (uint32_t d = 0; j >= 0 && d < sub[i].depth; d++, j = in->procs[j].parent) {
		const char *names[3];

		names_of(&in->procs[j], names);
		for (int k = 0; k < 3; k++)
			for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
				if (name_is(names[k], hosts[h]))
					return hosts[h];
	}
	return NULL;
}

static enum session session_of(const struct sw_input *in, const struct sub *sub, uint32_t i, const char **via)
{
	enum session s = session_by_name(&in->procs[i]);

	*via = NULL;
	if (s == SESSION_SHELL) {
		*via = shell_host(in, sub, i);
		if (!*via)
			return SESSION_NONE;
	}
	return s;
}

/* Whether an ancestor of i alive at now is a session itself: then i is part of that one. */
static bool under_session(const struct sw_input *in, const struct sub *sub, uint32_t i)
{
	int64_t j = in->procs[i].parent;
	const char *via;

	for (uint32_t d = 0; j >= 0 && d < sub[i].depth; d++, j = in->procs[j].parent)
		if (alive(&in->procs[j], in->now_ns) && session_of(in, sub, (uint32_t)j, &via) != SESSION_NONE)
			return true;
	return false;
}

static const char *session_what(enum session s)
{
	switch (s) {
	case SESSION_JUPYTER:
		return "Jupyter server";
	case SESSION_KERNEL:
		return "Jupyter kernel";
	case SESSION_RSTUDIO:
		return "RStudio session";
	case SESSION_SHELL:
		return "shell";
	case SESSION_NONE:
		break;
	}
	return "session";
}

/*
 * An interactive server or shell alive at now that neither it nor any
 * process under it used for session_idle_ns: Jupyter (jupyter-*,
 * python -m ipykernel_launcher / jupyterlab / notebook), RStudio
 * (rstudio-server, rsession), or bash/zsh/sh/fish under sshd, tmux or
 * screen. Reported once, at its top-most such process. Anchor:
 * jupyterhub-idle-culler (shuts down a server idle for --timeout, 600 s by
 * default) and RStudio Server's session-timeout-minutes (suspends an idle
 * session); our 4 h is longer on purpose: we report, we do not end it.
 * Cost: its subtree's resident memory as a share of the host's.
 */
static int rule_session(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
			struct sub *sub, uint32_t i, struct flist *out)
{
	const struct sw_process *p = &in->procs[i];
	const struct sw_host *h = &in->hosts[p->host];
	int64_t idle = in->now_ns - sub[i].last;
	uint64_t mem = host_memory(h);
	char len[32], held[32], total[32], via_s[32] = "", cmd[136] = "", under[64] = "";
	const char *via;
	enum session s;
	struct sw_finding *f;

	if (!alive(p, in->now_ns) || idle < c->session_idle_ns)
		return 0;
	s = session_of(in, sub, i, &via);
	if (s == SESSION_NONE || under_session(in, sub, i))
		return 0;
	f = proc_finding(out, SW_SESSION_IDLE, in, i, sub[i].last);
	if (!f)
		return -ENOMEM;
	sub[i].flags |= FLAG_SESSION;
	f->rss_bytes = sub[i].rss;
	price_host(h, table, f);
	set_cost(f, (double)idle / NS_PER_HOUR, memory_share(sub[i].rss, mem));
	if (via)
		snprintf(via_s, sizeof(via_s), " under %s", via);
	if (p->cmdline && p->cmdline[0])
		snprintf(cmd, sizeof(cmd), " ('%.120s')", p->cmdline);
	if (sub[i].descendants)
		snprintf(under, sizeof(under), ", the %u %s under it at least as long", sub[i].descendants,
			 sub[i].descendants == 1 ? "process" : "processes");
	an_bytes_str(sub[i].rss, held, sizeof(held));
	if (mem)
		an_bytes_str(mem, total, sizeof(total));
	else
		snprintf(total, sizeof(total), "unknown");
	snprintf(f->evidence, sizeof(f->evidence),
		 "%s %s (pid %lld)%s%s has been idle for %s%s, holding %s of the host's %s memory",
		 session_what(s), proc_name(p), (long long)p->pid, via_s, cmd, dur_str(idle, len, sizeof(len)),
		 under, held, total);
	return 0;
}

/* ---- 6. a long-lived idle process holding memory ---------------------------------------------- */

static bool in_reported_session(const struct sw_input *in, const struct sub *sub, uint32_t i)
{
	int64_t j = (int64_t)i;

	for (uint32_t d = 0; j >= 0 && d <= sub[i].depth; d++, j = in->procs[j].parent)
		if (sub[j].flags & FLAG_SESSION)
			return true;
	return false;
}

/*
 * Alive at now, started idle_proc_age_ns ago or more, neither it nor a
 * process under it active for idle_proc_idle_ns, holding at least
 * idle_proc_rss_bytes resident; not a worker or session reported above (nor
 * inside one). "Idle" counts the processes under it: a parent waiting on a
 * working child is part of that work. Anchor: ours; memory is billed by
 * what is held (the used cost of docs/cost.md prices peak GiB-hours), and
 * memory held by a process that does nothing is memory a smaller instance
 * would not need.
 */
static int rule_idle_proc(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
			  const struct sub *sub, uint32_t i, struct flist *out)
{
	const struct sw_process *p = &in->procs[i];
	const struct sw_host *h = &in->hosts[p->host];
	int64_t idle = in->now_ns - sub[i].last;
	uint64_t mem = host_memory(h);
	char len[32], age[32], held[32], total[32], cmd[136] = "";
	struct sw_finding *f;

	if (!alive(p, in->now_ns) || p->start_ns <= 0 || in->now_ns - p->start_ns < c->idle_proc_age_ns ||
	    idle < c->idle_proc_idle_ns || p->rss_bytes < c->idle_proc_rss_bytes || (sub[i].flags & FLAG_WORKER) ||
	    in_reported_session(in, sub, i))
		return 0;
	f = proc_finding(out, SW_PROCESS_IDLE_MEMORY, in, i, sub[i].last);
	if (!f)
		return -ENOMEM;
	f->rss_bytes = p->rss_bytes;
	price_host(h, table, f);
	set_cost(f, (double)idle / NS_PER_HOUR, memory_share(p->rss_bytes, mem));
	if (p->cmdline && p->cmdline[0])
		snprintf(cmd, sizeof(cmd), " ('%.120s')", p->cmdline);
	an_bytes_str(p->rss_bytes, held, sizeof(held));
	if (mem)
		an_bytes_str(mem, total, sizeof(total));
	else
		snprintf(total, sizeof(total), "unknown");
	snprintf(f->evidence, sizeof(f->evidence),
		 "%s (pid %lld)%s holds %s of the host's %s memory, alive for %s and idle for %s",
		 proc_name(p), (long long)p->pid, cmd, held, total,
		 dur_str(in->now_ns - p->start_ns, age, sizeof(age)), dur_str(idle, len, sizeof(len)));
	return 0;
}

static int rules_procs(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
		       struct flist *out)
{
	struct sub *sub = calloc(in->nprocs + 1, sizeof(*sub));
	int rc;

	if (!sub)
		return -ENOMEM;
	rc = subtrees(in, sub);
	/* in this order: a worker or a session reported is not reported again as an idle process */
	for (size_t i = 0; i < in->nprocs && !rc; i++)
		rc = rule_worker(in, c, table, sub, (uint32_t)i, out);
	for (size_t i = 0; i < in->nprocs && !rc; i++)
		rc = rule_session(in, c, table, sub, (uint32_t)i, out);
	for (size_t i = 0; i < in->nprocs && !rc; i++)
		rc = rule_idle_proc(in, c, table, sub, (uint32_t)i, out);
	free(sub);
	return rc;
}

/* ---- all of them ------------------------------------------------------------------------ */

/* Most costly first, unpriced (< 0) last; then by start, kind, host, run, process. */
static int finding_cmp(const void *a, const void *b, void *ctx)
{
	const struct sw_finding *v = ctx, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	bool px = x->cost_usd >= 0, py = y->cost_usd >= 0;

	if (px != py)
		return px ? -1 : 1;
	if (px && x->cost_usd != y->cost_usd)
		return x->cost_usd > y->cost_usd ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

static int sorted(struct flist *l, struct sw_finding **out, size_t *n)
{
	size_t *order;
	struct sw_finding *v;

	if (l->n == 0)
		return 0;
	order = malloc(l->n * sizeof(*order));
	v = malloc(l->n * sizeof(*v));
	if (!order || !v) {
		free(order);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++)
		order[i] = i;
	hsort_r(order, l->n, sizeof(*order), finding_cmp, l->v);
	for (size_t i = 0; i < l->n; i++)
		v[i] = l->v[order[i]];
	free(order);
	*out = v;
	*n = l->n;
	return 0;
}

int sw_sweep(const struct sw_input *in, const struct sw_config *c, const struct price_table *table,
	     struct sw_finding **out, size_t *n)
{
	struct flist l = { 0 };
	struct aws_day *days;
	int rc = 0;

	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	if (!in || !c || check_config(c) || check_input(in))
		return -EINVAL;
	days = malloc(c->aws_window_days * sizeof(*days));
	if (!days)
		return -ENOMEM;
	for (size_t h = 0; h < in->nhosts && !rc; h++) {
		rc = rule_gcp(in, c, table, (uint32_t)h, &l);
		if (!rc)
			rc = rule_aws(in, c, table, (uint32_t)h, days, &l);
	}
	free(days);
	if (!rc && in->runs)
		rc = rules_runs(in, c, table, &l);
	if (!rc)
		rc = rules_procs(in, c, table, &l);
	if (!rc)
		rc = sorted(&l, out, n);
	free(l.v);
	return rc;
}
