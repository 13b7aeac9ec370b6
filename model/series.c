/* SPDX-License-Identifier: Apache-2.0 */
#include "series.h"

#include <stdlib.h>
#include <string.h>

void series_point_from_sample(struct series_point *pt, const struct tr_sample *s)
{
	*pt = (struct series_point){
		.ts_ns = s->hdr.ts_ns,
		.runtime_ns = s->runtime_ns,
		.rss_bytes = s->rss_bytes,
		.hwm_bytes = s->hiwater_rss_bytes,
		.read_bytes = s->read_bytes,
		.write_bytes = s->write_bytes,
		.rchar = s->rchar,
		.wchar = s->wchar,
		.net_tx_bytes = s->net_tx_bytes,
		.net_rx_bytes = s->net_rx_bytes,
		.iowait_ns = s->iowait_ns,
		.reclaim_ns = s->reclaim_ns,
	};
}

bool series_progressed(const struct series_point *a, const struct series_point *b)
{
	return a->runtime_ns != b->runtime_ns || a->read_bytes != b->read_bytes || a->write_bytes != b->write_bytes ||
	       a->rchar != b->rchar || a->wchar != b->wchar || a->net_tx_bytes != b->net_tx_bytes ||
	       a->net_rx_bytes != b->net_rx_bytes;
}

/* Rate of a counter over dt ns, per second; counters only grow, anything else counts as 0. */
static uint64_t rate(uint64_t from, uint64_t to, uint64_t dt_ns, uint64_t scale)
{
	uint64_t d = to > from ? to - from : 0;

	if (dt_ns == 0)
		return 0;
	/* d * scale / dt without overflow for any realistic d (scale <= 1e9, d < 2^34 per second) */
	return (uint64_t)((long double)d * scale / dt_ns);
}

static void update_peaks(struct series_peaks *pk, const struct series_point *a, const struct series_point *b)
{
	uint64_t dt = b->ts_ns > a->ts_ns ? b->ts_ns - a->ts_ns : 0;
	uint64_t v;

	if (b->rss_bytes > pk->rss_bytes)
		pk->rss_bytes = b->rss_bytes;
	if (dt == 0)
		return;
	if ((v = rate(a->runtime_ns, b->runtime_ns, dt, 1000)) > pk->cpu_millicores)
		pk->cpu_millicores = v;
	if ((v = rate(a->read_bytes, b->read_bytes, dt, 1000000000ULL)) > pk->read_bps)
		pk->read_bps = v;
	if ((v = rate(a->write_bytes, b->write_bytes, dt, 1000000000ULL)) > pk->write_bps)
		pk->write_bps = v;
	if ((v = rate(a->net_tx_bytes, b->net_tx_bytes, dt, 1000000000ULL)) > pk->net_tx_bps)
		pk->net_tx_bps = v;
	if ((v = rate(a->net_rx_bytes, b->net_rx_bytes, dt, 1000000000ULL)) > pk->net_rx_bps)
		pk->net_rx_bps = v;
}

/* Full: keep every other point (the newest always stays), double the spacing. */
static void downsample(struct proc_series *s)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < s->n; i += 2)
		s->points[j++] = s->points[i];
	if (s->points[j - 1].ts_ns != s->points[s->n - 1].ts_ns)
		s->points[j - 1] = s->points[s->n - 1];
	s->n = j;
	if (s->n >= 2) {
		uint64_t span = s->points[s->n - 1].ts_ns - s->points[0].ts_ns;

		s->min_step_ns = span / (s->n - 1);
	}
}

static bool ensure_room(struct proc_series **sp, uint64_t *bytes, uint64_t budget)
{
	struct proc_series *s = *sp, *ns;
	uint32_t cap = s ? s->cap : 0, ncap;

	if (s && s->n < s->cap)
		return true;
	if (s && s->cap >= SERIES_MAX_POINTS) {
		downsample(s);
		return true;
	}
	ncap = cap ? cap * 2 : SERIES_FIRST_CAP;
	if (*bytes - (s ? series_bytes(cap) : 0) + series_bytes(ncap) > budget) {
		/*
		 * No room for points: a process without a series still gets its
		 * header (the newest two samples, the peaks), outside the budget -
		 * the live figures and totals read them (bounded by the table).
		 */
		if (!s && (ns = calloc(1, series_bytes(0))) != NULL) {
			*bytes += series_bytes(0);
			*sp = ns;
		}
		return false;
	}
	ns = realloc(s, series_bytes(ncap));
	if (!ns)
		return false;
	if (!s)
		memset(ns, 0, sizeof(*ns));
	*bytes += series_bytes(ncap) - (s ? series_bytes(cap) : 0);
	ns->cap = ncap;
	*sp = ns;
	return true;
}

bool series_add(struct proc_series **sp, const struct series_point *pt, uint64_t *bytes, uint64_t budget)
{
	struct proc_series *s;
	bool room = ensure_room(sp, bytes, budget);

	s = *sp;
	if (!s)
		return false;
	if (s->samples)
		update_peaks(&s->peaks, &s->last, pt);
	else if (pt->rss_bytes > s->peaks.rss_bytes)
		s->peaks.rss_bytes = pt->rss_bytes;
	s->samples++;
	s->prev = s->last;
	s->last = *pt;
	if (!room)
		return false;
	/* After downsampling the newest point floats: it moves until it is a spacing past the one before. */
	if (s->n >= 2 && s->min_step_ns && pt->ts_ns - s->points[s->n - 2].ts_ns < s->min_step_ns) {
		s->points[s->n - 1] = *pt;
		return true;
	}
	s->points[s->n++] = *pt;
	return true;
}

void series_free(struct proc_series *s, uint64_t *bytes)
{
	if (!s)
		return;
	*bytes -= series_bytes(s->cap);
	free(s);
}
