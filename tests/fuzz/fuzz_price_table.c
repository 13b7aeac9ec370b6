/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: reading a price table (analysis/prices.c), then
 * costing a few runs priced from it and fitting their instances
 * (analysis/cost.c), with abort() on a broken invariant.
 *
 * Input: the CSV text, as a user's --prices file would be.
 *
 * Invariants: price_table_parse returns 0, -EINVAL with a message, or
 * -ENOMEM, and a refused table is left empty; an accepted one has a source
 * and a YYYY-MM-DD date, at most PRICE_TABLE_MAX_ROWS rows sorted by type
 * and region with no repeat, names of the safe alphabet, figures within
 * their bounds; price_lookup finds every row, and the cheapest region is
 * no dearer than any; a message never overruns a short buffer; the cost
 * of runs on its types is finite, unpriced only as -1, and the runs' lines
 * add up to the totals; a fitted type fits; nothing leaks (LeakSanitizer).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define H 3600000000000LL
#define T0 1700000000000000000LL

static bool safe_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
			return false;
	return true;
}

static void check_table(const struct price_table *t)
{
	CHECK(t->n <= PRICE_TABLE_MAX_ROWS);
	CHECK(t->source[0] && strlen(t->source) < sizeof(t->source));
	CHECK(strlen(t->date) == 10 && t->date[4] == '-' && t->date[7] == '-');
	for (size_t i = 0; i < t->n; i++) {
		const struct price_row *r = &t->rows[i], *cheapest;

		CHECK(safe_name(r->cloud) && safe_name(r->instance_type) && safe_name(r->region));
		CHECK(r->vcpus >= 1 && r->vcpus <= 100000);
		CHECK(r->memory_bytes > 0);
		CHECK(isfinite(r->on_demand_per_hour) && r->on_demand_per_hour >= 0 && r->on_demand_per_hour <= 100000);
		CHECK(r->spot_per_hour == -1 || (r->spot_per_hour >= 0 && r->spot_per_hour <= 100000));
		CHECK(r->line >= 1);
		if (i > 0) {
			int c = strcmp(t->rows[i - 1].instance_type, r->instance_type);

			CHECK(c < 0 || (c == 0 && strcmp(t->rows[i - 1].region, r->region) < 0));
		}
		CHECK(price_lookup(t, r->instance_type, r->region) == r);
		cheapest = price_lookup(t, r->instance_type, NULL);
		CHECK(cheapest && cheapest->on_demand_per_hour <= r->on_demand_per_hour);
	}
}

static void check_report(const struct cost_report *r, enum cost_by by)
{
	double sum = 0;

	CHECK(isfinite(r->reserved_usd) && r->reserved_usd >= 0);
	CHECK(isfinite(r->used_usd) && r->used_usd >= 0);
	CHECK(isfinite(r->idle_usd) && r->idle_usd >= 0 && r->idle_usd <= r->reserved_usd * (1 + 1e-9) + 1e-9);
	CHECK(r->unpriced_runs <= r->runs);
	for (size_t i = 0; i < r->n; i++) {
		const struct cost_line *l = &r->lines[i];

		CHECK(l->key && l->key[0]);
		CHECK(l->reserved_usd == -1 || (isfinite(l->reserved_usd) && l->reserved_usd >= 0));
		CHECK(l->used_usd == -1 || (isfinite(l->used_usd) && l->used_usd >= 0));
		CHECK(isfinite(l->hours) && l->hours >= 0);
		CHECK(i == 0 || r->lines[i - 1].reserved_usd >= l->reserved_usd);
		if (l->reserved_usd > 0)
			sum += l->reserved_usd;
	}
	if (by != COST_BY_STEP && by != COST_BY_TOOL)
		CHECK(fabs(sum - r->reserved_usd) <= 1e-6 * (1 + r->reserved_usd));
}

/* Four runs on the table's first types: two overlapping on one host, one unpriced, one configured. */
static void cost_some_runs(const struct price_table *t)
{
	struct an_run runs[4];
	struct an_step steps[4];
	struct an_point pts[8];
	struct an_input in = { .runs = runs, .nruns = 4, .steps = steps, .nsteps = 4, .timeline = pts,
			       .npoints = 8 };
	struct cost_report rep;
	struct cost_fit *fits;
	size_t n;

	memset(runs, 0, sizeof(runs));
	memset(steps, 0, sizeof(steps));
	for (int i = 0; i < 4; i++) {
		const struct price_row *row = t->n ? &t->rows[(size_t)i % t->n] : NULL;

		runs[i].pipeline = i < 3 ? "p" : "q";
		runs[i].label = "r";
		runs[i].user = i % 2 ? "ana" : NULL;
		runs[i].start_ns = T0 + i * H / 2;
		runs[i].end_ns = runs[i].start_ns + 2 * H;
		runs[i].host.host_id = i < 2 ? "h" : "g";
		runs[i].host.cloud = row ? row->cloud : NULL;
		runs[i].host.instance_type = i == 2 ? "not-in-the-table" : row ? row->instance_type : NULL;
		runs[i].host.region = row ? row->region : NULL;
		runs[i].host.price_per_hour = i == 3 ? 0.5 : -1;
		runs[i].step_first = (uint32_t)i;
		runs[i].step_n = 1;
		runs[i].point_first = (uint32_t)(2 * i);
		runs[i].point_n = 2;
		steps[i] = (struct an_step){ .run = (uint32_t)i, .name = "s", .tools = "a, b",
					     .start_ns = runs[i].start_ns, .end_ns = runs[i].start_ns + H,
					     .cpu_ns = (uint64_t)H, .peak_mem_bytes = 1ull << 30 };
		pts[2 * i] = (struct an_point){ .t_ns = runs[i].start_ns, .cores = 1.5, .mem_bytes = 1ull << 30 };
		pts[2 * i + 1] = (struct an_point){ .t_ns = runs[i].end_ns, .cores = 3.2, .mem_bytes = 3ull << 30 };
	}
	for (int by = COST_BY_RUN; by <= COST_BY_USER; by++) {
		CHECK(cost_compute(&in, t, (enum cost_by)by, -1, &rep) == 0);
		check_report(&rep, (enum cost_by)by);
		cost_report_free(&rep);
	}
	CHECK(cost_compute(&in, t, COST_BY_STEP, 1, &rep) == 0);
	CHECK(rep.n <= 1);
	cost_report_free(&rep);
	CHECK(cost_fit_instances(&in, t, NULL, &fits, &n) == 0);
	CHECK(n == 2);
	for (size_t i = 0; i < n; i++) {
		CHECK(fits[i].cpus_needed == 4); /* p95 of {1.5, 3.2, ...} is 3.2 */
		CHECK(!fits[i].best ||
		      (fits[i].best->vcpus >= fits[i].cpus_needed && fits[i].best->memory_bytes >= fits[i].need_mem_bytes));
		CHECK(fits[i].saving_per_run_usd == -1 || fits[i].saving_per_run_usd >= 0);
		CHECK(strlen(fits[i].why) < sizeof(fits[i].why));
	}
	free(fits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct price_table t;
	char err[256], tiny[8];
	int rc;

	err[0] = 0;
	rc = price_table_parse((const char *)data, size, &t, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc) {
		CHECK(err[0] && strlen(err) < sizeof(err));
		CHECK(t.n == 0 && t.rows == NULL && t.strings == NULL);
		/* a short buffer, and none, take the same refusal */
		memset(tiny, 'x', sizeof(tiny));
		CHECK(price_table_parse((const char *)data, size, &t, tiny, sizeof(tiny)) == rc);
		CHECK(memchr(tiny, 0, sizeof(tiny)) != NULL);
		CHECK(price_table_parse((const char *)data, size, &t, NULL, 0) == rc);
		price_table_free(&t);
		return 0;
	}
	check_table(&t);
	cost_some_runs(&t);
	price_table_free(&t);
	return 0;
}
