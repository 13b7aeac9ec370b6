/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What runs cost (analysis/prices.c, analysis/cost.c), against answers
 * computed by hand: the price table's strict reading (each refusal names
 * its line), lookups, the reserved / used / idle split of a run, the
 * overlap split of runs sharing a host, unpriced runs left unpriced, the
 * groupings, and instance rightsizing with its saving per run and month.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cost.h"

#define GiB (1ull << 30)
#define H 3600000000000LL          /* an hour in ns */
#define DAY (24 * H)
#define T0 1700000000000000000LL   /* 2023-11-14, any time will do */

#define HEAD "# source: a test table, invented prices\n# date: 2024-06-01\n" \
	     "cloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour\n"

static const char table_csv[] = HEAD
	"aws,m6i.4xlarge,us-east-1,16,64,0.768,\n"        /* line 4 */
	"aws,m6i.xlarge,us-east-1,4,16,0.192,0.08\n"
	"aws,c6i.xlarge,us-east-1,4,8,0.17,\n"
	"aws,m6i.large,us-east-1,2,8,0.096,\n"
	"aws,c6i.large,us-east-1,2,4,0.085,0.034\n"
	"aws,c9.tiny,us-east-1,2,2,0.05,\n"               /* invented: cheaper, but 2 GiB is too small for 3.45 */
	"aws,t3.medium,us-east-1,2,4,0.0416,0.0125\n"     /* big enough, cheaper, but burstable */
	"aws,t3.small,us-east-1,2,2,0.0208,\n"
	"aws,m7g.medium,us-east-1,1,4,0.0408,\n"          /* cheaper, but one vCPU */
	"aws,m6i.large,eu-west-1,2,8,0.107,\n"            /* line 13 */
	"gcp,n2-standard-4,us-central1,4,16,0.194236,\n"; /* line 14 */

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void load(struct price_table *t)
{
	char err[256];

	assert_int_equal(price_table_parse(table_csv, strlen(table_csv), t, err, sizeof(err)), 0);
}

/* ---- the table ------------------------------------------------------------- */

static void the_table_is_read_and_sorted_by_type_then_region(void **state)
{
	struct price_table t;
	char err[256];

	(void)state;
	assert_int_equal(price_table_parse(table_csv, strlen(table_csv), &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 11);
	assert_string_equal(t.source, "a test table, invented prices");
	assert_string_equal(t.date, "2024-06-01");
	assert_string_equal(t.rows[0].instance_type, "c6i.large");
	assert_string_equal(t.rows[1].instance_type, "c6i.xlarge");
	assert_string_equal(t.rows[4].instance_type, "m6i.large");
	assert_string_equal(t.rows[4].region, "eu-west-1"); /* before us-east-1 */
	assert_int_equal(t.rows[4].line, 13);
	assert_string_equal(t.rows[5].region, "us-east-1");
	assert_int_equal(t.rows[5].line, 7);
	assert_string_equal(t.rows[10].instance_type, "t3.small");
	assert_int_equal(t.rows[9].memory_bytes, 4 * GiB);
	assert_int_equal(t.rows[9].vcpus, 2);
	assert_true(t.rows[9].on_demand_per_hour == 0.0416 && t.rows[9].spot_per_hour == 0.0125);
	assert_true(t.rows[10].spot_per_hour == -1); /* empty: none */
	assert_string_equal(t.rows[8].cloud, "gcp");
	price_table_free(&t);
	assert_null(t.rows);
	price_table_free(&t); /* twice is harmless */
}

static void crlf_blank_lines_comments_and_a_bom_are_tolerated(void **state)
{
	static const char csv[] = "\xef\xbb\xbf# a price table\r\n\r\n#source : list prices\r\n"
				  "# note: anything\r\n#  date:2024-02-29\r\n"
				  "cloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour\r\n"
				  "\r\n   \r\n# a comment among rows\r\n"
				  "aws, m6i.large ,us-east-1,2,8,0.096,\r\n"
				  "aws,t3.medium,us-east-1,2,0.5,0,0"; /* no newline at the end */
	struct price_table t;
	char err[256];

	(void)state;
	assert_int_equal(price_table_parse(csv, sizeof(csv) - 1, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.source, "list prices");
	assert_string_equal(t.date, "2024-02-29");
	assert_string_equal(t.rows[0].instance_type, "m6i.large"); /* blanks around fields trimmed */
	assert_int_equal(t.rows[1].memory_bytes, GiB / 2);
	assert_true(t.rows[1].on_demand_per_hour == 0 && t.rows[1].spot_per_hour == 0);
	price_table_free(&t);
}

/* The message for csv, which must be refused. */
static const char *refusal(const char *csv, size_t len)
{
	static char err[256];
	struct price_table t;

	memset(&t, 0xa5, sizeof(t));
	assert_int_equal(price_table_parse(csv, len, &t, err, sizeof(err)), -EINVAL);
	assert_null(t.rows); /* left empty */
	assert_int_equal(t.n, 0);
	assert_true(err[0] != 0);
	return err;
}

#define REFUSED(csv) refusal(csv, sizeof(csv) - 1)

static void refusals_name_the_line_and_what_to_fix(void **state)
{
	const char *e;

	(void)state;
	e = REFUSED("# source: x\ncloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,spot_usd_per_hour\n");
	assert_non_null(strstr(e, "line 2: no '# date: YYYY-MM-DD' line above the header"));
	e = REFUSED("# date: 2024-06-01\n\ncloud,instance_type,region,vcpus,memory_gib,on_demand_usd_per_hour,"
		    "spot_usd_per_hour\n");
	assert_non_null(strstr(e, "line 3: no '# source: ...' line"));
	e = REFUSED("# source: x\n# date: 2024-13-01\n");
	assert_non_null(strstr(e, "line 2: '# date:' must be the day the prices are from, as YYYY-MM-DD"));
	e = REFUSED("# source: x\n# date: 2023-02-29\n"); /* not a leap year */
	assert_non_null(strstr(e, "line 2:"));
	e = REFUSED("# source: x\n# date: 2024-06-01\ncloud,type,region,vcpus,memory_gib,price,spot\n");
	assert_non_null(strstr(e, "line 3: the header must be exactly cloud,instance_type,region,"));
	e = REFUSED("# source: x\n# date: 2024-06-01\n");
	assert_non_null(strstr(e, "no header line"));
	assert_non_null(strstr(e, "in its 2 lines"));
	e = REFUSED("");
	assert_non_null(strstr(e, "no header line"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,four,8,0.096,\n");
	assert_non_null(strstr(e, "line 4: vcpus 'four' must be a whole number from 1 to 100000"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,0,8,0.096,\n");
	assert_non_null(strstr(e, "line 4: vcpus '0'"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,0.096,\naws,x,us-east-1,2,0,0.096,\n");
	assert_non_null(strstr(e, "line 5: memory_gib '0' must be a number above 0"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,-0.096,\n");
	assert_non_null(strstr(e, "line 4: on_demand_usd_per_hour '-0.096' must be a number from 0"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,1e3,\n"); /* no exponents, no locale */
	assert_non_null(strstr(e, "line 4: on_demand_usd_per_hour '1e3'"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,0.096,nan\n");
	assert_non_null(strstr(e, "line 4: spot_usd_per_hour 'nan' must be a number from 0 to 100000, or empty"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,0.096\n");
	assert_non_null(strstr(e, "line 4: 6 fields where a row has 7"));
	e = REFUSED(HEAD "aws,\"m6i.large\",us-east-1,2,8,0.096,\n");
	assert_non_null(strstr(e, "line 4: a quote"));
	e = REFUSED(HEAD "aws,m6i large,us-east-1,2,8,0.096,\n");
	assert_non_null(strstr(e, "line 4: instance_type 'm6i large' may hold only letters, digits"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,0.096,\naws,m6i.large,eu-west-1,2,8,0.107,\n"
			 "aws,m6i.xlarge,us-east-1,4,16,0.192,\naws,m6i.large,us-east-1,2,8,0.1,\n"
			 "aws,m6i.large,us-east-1,2,8,0.2,\n");
	assert_non_null(strstr(e, "line 7: m6i.large in us-east-1 is already on line 4; keep one row per type and region"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2,8,0.096,\n# date: 2025-01-01\n");
	assert_non_null(strstr(e, "line 5: '# date:' belongs above the header line"));
	e = REFUSED("# source: x\n# source: y\n");
	assert_non_null(strstr(e, "line 2: a second '# source:' line"));
	e = REFUSED(HEAD "aws,m6i.large,us-east-1,2\0,8,0.096,\n");
	assert_non_null(strstr(e, "line 4: a NUL byte"));
	/* too big: refused before a byte is read */
	e = refusal("", PRICE_TABLE_MAX_BYTES + 1ul);
	assert_non_null(strstr(e, "more than the 16 MiB"));
}

/*
 * The shipped table (data/prices.csv, read from the source tree as the
 * tests run there) parses, and its figures are the shape list prices
 * have: every row between $0.01 and $0.10 per vCPU-hour, at least 1 GiB
 * per vCPU. A slip of a digit in transcription fails here.
 */
static void the_shipped_table_parses_and_looks_like_prices(void **state)
{
	static char buf[1 << 16];
	FILE *f = fopen("data/prices.csv", "r");
	struct price_table t;
	char err[256];
	size_t len;

	(void)state;
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	assert_true(len > 0 && len < sizeof(buf));
	fclose(f);
	assert_int_equal(price_table_parse(buf, len, &t, err, sizeof(err)), 0);
	assert_true(t.n >= 80);
	assert_string_equal(t.date, "2024-06-01");
	assert_non_null(strstr(t.source, "AWS"));
	for (size_t i = 0; i < t.n; i++) {
		const struct price_row *r = &t.rows[i];
		double per_vcpu = r->on_demand_per_hour / r->vcpus;

		assert_true(per_vcpu > 0.01 && per_vcpu < 0.10);
		assert_true(r->memory_bytes >= (uint64_t)r->vcpus * GiB);
		assert_true(r->spot_per_hour < 0); /* left empty: see the file's notes */
	}
	assert_true(price_lookup(&t, "m6i.xlarge", "us-east-1")->on_demand_per_hour == 0.192);
	assert_true(price_lookup(&t, "m6i.xlarge", NULL)->on_demand_per_hour == 0.192); /* cheaper than eu-west-1 */
	assert_true(price_lookup(&t, "n2-standard-4", "us-central1")->on_demand_per_hour == 0.194236);
	assert_int_equal(price_lookup(&t, "Standard_E4s_v5", "eastus")->memory_bytes, 32 * GiB);
	price_table_free(&t);
}

static void lookup_takes_the_region_or_the_cheapest(void **state)
{
	struct price_table t;

	(void)state;
	load(&t);
	assert_true(price_lookup(&t, "m6i.large", "eu-west-1")->on_demand_per_hour == 0.107);
	assert_true(price_lookup(&t, "m6i.large", "us-east-1")->on_demand_per_hour == 0.096);
	assert_string_equal(price_lookup(&t, "m6i.large", NULL)->region, "us-east-1"); /* 0.096 < 0.107 */
	assert_null(price_lookup(&t, "m6i.large", "ap-south-1"));
	assert_null(price_lookup(&t, "m6i.larg", NULL));
	assert_null(price_lookup(&t, NULL, NULL));
	assert_null(price_lookup(NULL, "m6i.large", NULL));
	assert_string_equal(price_lookup(&t, "t3.small", NULL)->instance_type, "t3.small"); /* the last row */
	assert_string_equal(price_lookup(&t, "c6i.large", NULL)->instance_type, "c6i.large"); /* the first */
	price_table_free(&t);
}

static void burstable_types_are_known_by_name(void **state)
{
	(void)state;
	assert_true(price_burstable("t3.medium") && price_burstable("t3a.large") && price_burstable("t4g.nano"));
	assert_true(price_burstable("Standard_B2s") && price_burstable("e2-medium") && price_burstable("f1-micro"));
	assert_false(price_burstable("t2d-standard-4")); /* GCP's Tau: not burstable */
	assert_false(price_burstable("trn1.2xlarge") || price_burstable("e2-standard-2") || price_burstable("m6i.large"));
	assert_false(price_burstable("t") || price_burstable("") || price_burstable(NULL));
}

static void a_configured_price_wins_over_the_table(void **state)
{
	struct price_table t;
	struct an_run r = { .host = { .cloud = "aws", .instance_type = "m6i.large", .region = "eu-west-1",
				      .price_per_hour = 0.5 } };
	enum cost_price_source src;

	(void)state;
	load(&t);
	assert_true(cost_run_price(&r, &t, &src) == 0.5 && src == COST_PRICE_CONFIG);
	r.host.price_per_hour = -1;
	assert_true(cost_run_price(&r, &t, &src) == 0.107 && src == COST_PRICE_TABLE);
	assert_string_equal(cost_price_source_name(src), "table");
	r.host.region = NULL; /* unknown region: the cheapest the table has */
	assert_true(cost_run_price(&r, &t, &src) == 0.096 && src == COST_PRICE_TABLE);
	r.host.cloud = "gcp"; /* not an aws type on a gcp host */
	assert_true(cost_run_price(&r, &t, &src) < 0 && src == COST_PRICE_NONE);
	r.host.cloud = "aws";
	assert_true(cost_run_price(&r, NULL, &src) < 0 && src == COST_PRICE_NONE);
	r.host.instance_type = "x9.huge";
	assert_true(cost_run_price(&r, &t, &src) < 0 && src == COST_PRICE_NONE);
	r.host.price_per_hour = NAN; /* not a price */
	assert_true(cost_run_price(&r, &t, &src) < 0 && src == COST_PRICE_NONE);
	price_table_free(&t);
}

static void by_names_round_trip(void **state)
{
	enum cost_by b;

	(void)state;
	for (int i = COST_BY_RUN; i <= COST_BY_USER; i++) {
		assert_int_equal(cost_by_parse(cost_by_name((enum cost_by)i), &b), 0);
		assert_int_equal(b, i);
	}
	assert_string_equal(cost_by_name(COST_BY_TOOL), "tool");
	assert_int_equal(cost_by_parse("tools", &b), -EINVAL);
	assert_int_equal(cost_by_parse(NULL, &b), -EINVAL);
}

/* ---- the cost of runs ------------------------------------------------------ */

/*
 * One run on a host at $0.20/h with 4 vCPUs and 16 GiB, for 2 h. Rates:
 * CPU 0.20 / 2 / 4 = $0.025 per core-hour, memory 0.20 / 2 / 16 =
 * $0.00625 per GiB-hour.
 *   align [0, 1 h): 2 core-hours, 4 GiB -> 2 x 0.025 + 4 x 1 x 0.00625 = 0.075
 *   sort  [0.5, 1.5 h): 1 core-hour, 8 GiB -> 0.025 + 8 x 1 x 0.00625 = 0.075
 * reserved 2 h x 0.20 = 0.40; used 0.15; the tasks cover [0, 1.5 h) of
 * 2 h, so idle = 0.25 x 0.40 = 0.10. Each step held 1 h of the tasks' 2 h:
 * 0.20 of the reserved each.
 */
static const struct an_step split_steps[] = {
	{ .run = 0, .name = "align", .tools = "bwa, samtools", .start_ns = T0, .end_ns = T0 + H,
	  .cpu_ns = 2 * H, .peak_mem_bytes = 4 * GiB },
	{ .run = 0, .name = "sort", .tools = "samtools", .start_ns = T0 + H / 2, .end_ns = T0 + 3 * H / 2,
	  .cpu_ns = H, .peak_mem_bytes = 8 * GiB },
};

static const struct an_run split_run = {
	.lake_id = 7, .pipeline = "rnaseq", .label = "run-a", .state = "succeeded", .user = "ana",
	.start_ns = T0, .end_ns = T0 + 2 * H,
	.host = { .host_id = "h1", .cpus = 4, .memory_bytes = 16 * GiB, .price_per_hour = 0.20 },
	.step_first = 0, .step_n = 2,
};

static void a_run_costs_reserved_used_and_idle(void **state)
{
	struct an_input in = { .runs = &split_run, .nruns = 1, .steps = split_steps, .nsteps = 2 };
	struct cost_report r;

	(void)state;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.lines[0].key, "run-a");
	assert_int_equal(r.lines[0].run, 0);
	assert_int_equal(r.lines[0].runs, 1);
	assert_int_equal(r.lines[0].tasks, 2);
	assert_true(near(r.lines[0].hours, 2));
	assert_true(near(r.lines[0].reserved_usd, 0.40));
	assert_true(near(r.lines[0].used_usd, 0.15));
	assert_true(near(r.lines[0].idle_usd, 0.10));
	assert_true(near(r.reserved_usd, 0.40) && near(r.used_usd, 0.15) && near(r.idle_usd, 0.10));
	assert_int_equal(r.runs, 1);
	assert_int_equal(r.unpriced_runs, 0);
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, NULL, COST_BY_STEP, -1, &r), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.lines[0].key, "rnaseq / align"); /* equal cost: by key */
	assert_string_equal(r.lines[1].key, "rnaseq / sort");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r.lines[i].tasks, 1);
		assert_int_equal(r.lines[i].run, -1);
		assert_true(near(r.lines[i].hours, 1));
		assert_true(near(r.lines[i].reserved_usd, 0.20));
		assert_true(near(r.lines[i].used_usd, 0.075));
		assert_true(r.lines[i].idle_usd == 0);
	}
	assert_true(near(r.reserved_usd, 0.40)); /* totals are the runs' */
	cost_report_free(&r);
}

static const struct cost_line *line_of(const struct cost_report *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->lines[i].key, key))
			return &r->lines[i];
	fail_msg("no line %s", key);
	return NULL;
}

/*
 * A head on a login node (3 h) whose two steps are cluster jobs. align was submitted at 0, queued 1 h, ran
 * [1, 2 h) on node n1 ($1.60/h, 16 vCPUs, 64 GiB: $0.05 per CPU-hour, $0.0125 per GiB-hour) holding 4
 * CPUs and 8 GiB: 4 CPU-hours, 8 GiB-hours, 4 x 0.05 + 8 x 0.0125 = $0.30 (its hour in the queue would
 * have made it $0.60). index ran [2.5, 3 h) on a node without a price, holding 1 CPU and 2 GiB: 0.5
 * CPU-hours and 1 GiB-hour, unpriced.
 */
static const struct an_step job_steps[] = {
	{ .run = 0, .name = "align", .tools = "bwa", .start_ns = T0 + H, .end_ns = T0 + 2 * H, .submitted_ns = T0,
	  .cpu_limit = 4, .mem_limit_bytes = 8 * GiB,
	  .job_host = { .host_id = "n1", .cpus = 16, .memory_bytes = 64 * GiB, .price_per_hour = 1.60 } },
	{ .run = 0, .name = "index", .tools = "samtools", .start_ns = T0 + 5 * H / 2, .end_ns = T0 + 3 * H,
	  .submitted_ns = T0 + 2 * H, .cpu_limit = 1, .mem_limit_bytes = 2 * GiB,
	  .job_host = { .host_id = "n2", .price_per_hour = -1 } },
};

static const struct an_run job_run = {
	.lake_id = 9, .pipeline = "wf", .label = "head", .state = "succeeded", .user = "ana",
	.start_ns = T0, .end_ns = T0 + 3 * H,
	.host = { .host_id = "login", .cpus = 2, .memory_bytes = 8 * GiB, .price_per_hour = 0.10 },
	.step_first = 0, .step_n = 2,
};

static void cluster_jobs_reserve_their_allocation_on_their_nodes_not_their_queue_time(void **state)
{
	struct an_input in = { .runs = &job_run, .nruns = 1, .steps = job_steps, .nsteps = 2 };
	struct cost_report r;
	const struct cost_line *l;

	(void)state;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0);
	assert_int_equal(r.n, 1);
	assert_true(near(r.lines[0].reserved_usd, 0.30)); /* the login node's 3 h at $0.10 */
	assert_true(near(r.lines[0].job_cpu_hours, 4.5));
	assert_true(near(r.lines[0].job_gib_hours, 9));
	assert_true(near(r.lines[0].jobs_reserved_usd, 0.30)); /* the priced job's; index has no price */
	assert_true(near(r.job_cpu_hours, 4.5) && near(r.job_gib_hours, 9) && near(r.jobs_reserved_usd, 0.30));
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, NULL, COST_BY_STEP, -1, &r), 0);
	l = line_of(&r, "wf / align");
	assert_true(near(l->hours, 1)); /* on the node, not in the queue */
	assert_true(near(l->job_cpu_hours, 4) && near(l->job_gib_hours, 8) && near(l->jobs_reserved_usd, 0.30));
	l = line_of(&r, "wf / index");
	assert_true(near(l->hours, 0.5));
	assert_true(near(l->job_cpu_hours, 0.5) && near(l->job_gib_hours, 1));
	assert_true(l->jobs_reserved_usd < 0);
	cost_report_free(&r);

	/* a run without jobs reserves nothing on other nodes */
	in.runs = &split_run;
	in.steps = split_steps;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0);
	assert_true(r.lines[0].job_cpu_hours == 0 && r.lines[0].job_gib_hours == 0 && r.jobs_reserved_usd == 0);
	cost_report_free(&r);
}

/*
 * Host h2 at $1/h: X [0, 2 h), W [0.5, 1 h), Y [1, 3 h); Z on h3 [1, 2 h).
 *   [0, 0.5)  X alone         X 0.5
 *   [0.5, 1)  X and W         X 0.25, W 0.25
 *   [1, 2)    X and Y         X 0.5,  Y 0.5
 *   [2, 3)    Y alone         Y 1
 * X 1.25 h, W 0.25 h, Y 1.5 h: 3 h, the host's 3 h charged once. Z is
 * alone on its host: 1 h. X's task covers [0, 1 h) of its 2 h: idle
 * 0.5 x 1.25 = 0.625; W and Y ran no task: all idle. The host's size is
 * unknown (no vCPUs, no memory, no table row): the used cost is unknown.
 */
static const struct an_step overlap_steps[] = {
	{ .run = 0, .name = "a", .tools = "", .start_ns = T0, .end_ns = T0 + H },
};

static const struct an_run overlap_runs[] = {
	{ .label = "X", .pipeline = "p", .user = "ana", .start_ns = T0, .end_ns = T0 + 2 * H,
	  .host = { .host_id = "h2", .price_per_hour = 1 }, .step_first = 0, .step_n = 1 },
	{ .label = "W", .pipeline = "p", .user = "ana", .start_ns = T0 + H / 2, .end_ns = T0 + H,
	  .host = { .host_id = "h2", .price_per_hour = 1 } },
	{ .label = "Y", .pipeline = "p", .user = "ana", .start_ns = T0 + H, .end_ns = T0 + 3 * H,
	  .host = { .host_id = "h2", .price_per_hour = 1 } },
	{ .label = "Z", .pipeline = "p", .user = "ana", .start_ns = T0 + H, .end_ns = T0 + 2 * H,
	  .host = { .host_id = "h3", .price_per_hour = 1 } },
};

static void overlapping_runs_of_a_host_split_its_time(void **state)
{
	struct an_input in = { .runs = overlap_runs, .nruns = 4, .steps = overlap_steps, .nsteps = 1 };
	struct cost_report r;

	(void)state;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0);
	assert_int_equal(r.n, 4);
	assert_string_equal(r.lines[0].key, "Y"); /* 1.5, then 1.25, 1, 0.25 */
	assert_string_equal(r.lines[1].key, "X");
	assert_string_equal(r.lines[2].key, "Z");
	assert_string_equal(r.lines[3].key, "W");
	assert_true(near(line_of(&r, "X")->reserved_usd, 1.25));
	assert_true(near(line_of(&r, "X")->hours, 1.25));
	assert_true(near(line_of(&r, "W")->reserved_usd, 0.25));
	assert_true(near(line_of(&r, "Y")->reserved_usd, 1.5));
	assert_true(near(line_of(&r, "Z")->reserved_usd, 1));
	assert_true(near(line_of(&r, "X")->idle_usd, 0.625));
	assert_true(near(line_of(&r, "Y")->idle_usd, 1.5));
	assert_true(line_of(&r, "X")->used_usd < 0); /* unknown, not zero */
	assert_int_equal(line_of(&r, "X")->used_unknown_runs, 1);
	assert_true(near(r.reserved_usd, 4));
	assert_int_equal(r.used_unknown_runs, 4);
	assert_true(r.used_usd == 0);
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, NULL, COST_BY_HOST, -1, &r), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.lines[0].key, "h2");
	assert_int_equal(r.lines[0].runs, 3);
	assert_true(near(r.lines[0].hours, 3) && near(r.lines[0].reserved_usd, 3));
	assert_true(near(r.lines[0].idle_usd, 0.625 + 0.25 + 1.5));
	assert_string_equal(r.lines[1].key, "h3");
	assert_true(near(r.lines[1].reserved_usd, 1));
	cost_report_free(&r);

	/* one run alone still pays its share, not the whole overlap */
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, 2, &r), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.lines[0].key, "Y");
	assert_true(near(r.lines[0].reserved_usd, 1.5) && near(r.reserved_usd, 1.5));
	assert_int_equal(r.runs, 1);
	cost_report_free(&r);
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, 4, &r), -EINVAL);
}

/*
 * A run [0, 4 h) at $0.25/h: reserved 1.0. Tasks [0, 1 h), [0.5, 1.5 h)
 * (overlapping: together 1.5 h), one from 3 h with no end (it lasted as
 * long as the run: 1 h) and one with no start (no time): covered 2.5 h of
 * 4, idle 1.5 / 4 x 1.0 = 0.375.
 */
static void idle_is_the_time_no_task_ran(void **state)
{
	static const struct an_step steps[] = {
		{ .run = 0, .name = "a", .start_ns = T0, .end_ns = T0 + H },
		{ .run = 0, .name = "b", .start_ns = T0 + H / 2, .end_ns = T0 + 3 * H / 2 },
		{ .run = 0, .name = "c", .start_ns = T0 + 3 * H, .end_ns = 0, .running = true },
		{ .run = 0, .name = "d", .start_ns = 0, .end_ns = T0 + 2 * H },
	};
	static const struct an_run run = { .label = "r", .start_ns = T0, .end_ns = T0 + 4 * H,
					   .host = { .host_id = "h", .price_per_hour = 0.25 }, .step_n = 4 };
	struct an_input in = { .runs = &run, .nruns = 1, .steps = steps, .nsteps = 4 };
	struct cost_report r;

	(void)state;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_PIPELINE, -1, &r), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.lines[0].key, "(none)"); /* no pipeline */
	assert_true(near(r.lines[0].reserved_usd, 1.0));
	assert_true(near(r.lines[0].idle_usd, 0.375));
	cost_report_free(&r);
}

/*
 * Three runs of one pipeline: one priced from the table (m6i.xlarge in
 * us-east-1, $0.192/h, 4 vCPUs and 16 GiB from the row: CPU 0.192/2/4 =
 * 0.024, memory 0.192/2/16 = 0.006; one task of 1 core-hour, 2 GiB, 1 h:
 * 0.024 + 0.012 = 0.036), one on a type the table lacks and no configured
 * price, one still running.
 */
static void an_unpriced_run_is_reported_without_a_price(void **state)
{
	static const struct an_step steps[] = {
		{ .run = 0, .name = "s", .start_ns = T0, .end_ns = T0 + H, .cpu_ns = H, .peak_mem_bytes = 2 * GiB },
		{ .run = 1, .name = "s", .start_ns = T0, .end_ns = T0 + H, .cpu_ns = H, .peak_mem_bytes = 2 * GiB },
	};
	static const struct an_run runs[] = {
		{ .label = "priced", .pipeline = "p", .start_ns = T0, .end_ns = T0 + H, .step_first = 0, .step_n = 1,
		  .host = { .host_id = "a", .cloud = "aws", .instance_type = "m6i.xlarge", .region = "us-east-1",
			    .price_per_hour = -1 } },
		{ .label = "unpriced", .pipeline = "p", .start_ns = T0, .end_ns = T0 + H, .step_first = 1, .step_n = 1,
		  .host = { .host_id = "b", .cloud = "aws", .instance_type = "x9.huge", .region = "us-east-1",
			    .cpus = 8, .memory_bytes = 32 * GiB, .price_per_hour = -1 } },
		{ .label = "running", .pipeline = "p", .start_ns = T0, .end_ns = 0,
		  .host = { .host_id = "c", .price_per_hour = 1 } },
	};
	struct an_input in = { .runs = runs, .nruns = 3, .steps = steps, .nsteps = 2 };
	struct price_table t;
	struct cost_report r;

	(void)state;
	load(&t);
	assert_int_equal(cost_compute(&in, &t, COST_BY_RUN, -1, &r), 0);
	assert_int_equal(r.n, 2); /* the running run is not costed */
	assert_string_equal(r.lines[0].key, "priced");
	assert_true(near(r.lines[0].reserved_usd, 0.192));
	assert_true(near(r.lines[0].used_usd, 0.036));
	assert_true(near(r.lines[0].idle_usd, 0));
	assert_string_equal(r.lines[1].key, "unpriced");
	assert_true(r.lines[1].reserved_usd < 0 && r.lines[1].used_usd < 0 && r.lines[1].idle_usd < 0);
	assert_int_equal(r.lines[1].unpriced_runs, 1);
	assert_true(near(r.lines[1].hours, 1)); /* the time is known, the price is not */
	assert_int_equal(r.runs, 2);
	assert_int_equal(r.unpriced_runs, 1);
	assert_int_equal(r.unfinished_runs, 1);
	assert_true(near(r.reserved_usd, 0.192) && near(r.used_usd, 0.036));
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, &t, COST_BY_PIPELINE, -1, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.lines[0].runs, 2);
	assert_int_equal(r.lines[0].unpriced_runs, 1);
	assert_true(near(r.lines[0].reserved_usd, 0.192)); /* the priced part only */
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0); /* no table: nothing priced */
	assert_int_equal(r.unpriced_runs, 2);
	assert_true(r.reserved_usd == 0);
	cost_report_free(&r);
	price_table_free(&t);
}

/*
 * By tool: the first tool of each task ("bwa, samtools" is bwa's). By
 * user: ana's split run ($0.40) and a 1 h run at $0.20; ben's 1 h at
 * $0.50; a run with no user.
 */
static void tools_and_users_group_their_tasks_and_runs(void **state)
{
	struct an_step steps[3];
	struct an_run runs[4];
	struct an_input in = { .runs = runs, .nruns = 4, .steps = steps, .nsteps = 3 };
	struct cost_report r;

	(void)state;
	memcpy(steps, split_steps, sizeof(split_steps));
	steps[2] = (struct an_step){ .run = 1, .name = "qc", .tools = "", .start_ns = T0, .end_ns = T0 + H };
	runs[0] = split_run;
	runs[1] = (struct an_run){ .label = "b", .user = "ana", .start_ns = T0, .end_ns = T0 + H, .step_first = 2,
				   .step_n = 1, .host = { .host_id = "x", .price_per_hour = 0.20 } };
	runs[2] = (struct an_run){ .label = "c", .user = "ben", .start_ns = T0, .end_ns = T0 + H, .step_first = 3,
				   .host = { .host_id = "y", .price_per_hour = 0.50 } };
	runs[3] = (struct an_run){ .label = "d", .start_ns = T0, .end_ns = T0 + H, .step_first = 3,
				   .host = { .host_id = "z", .price_per_hour = 0.01 } };

	assert_int_equal(cost_compute(&in, NULL, COST_BY_TOOL, -1, &r), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.lines[0].key, "(none)"); /* qc ran no known tool: all of b's 0.20 */
	assert_true(near(r.lines[0].reserved_usd, 0.20));
	assert_string_equal(r.lines[1].key, "bwa");
	assert_string_equal(r.lines[2].key, "samtools");
	assert_true(near(r.lines[1].reserved_usd, 0.20) && near(r.lines[1].used_usd, 0.075));
	assert_int_equal(r.lines[2].tasks, 1);
	assert_int_equal(r.lines[2].runs, 1);
	cost_report_free(&r);

	assert_int_equal(cost_compute(&in, NULL, COST_BY_USER, -1, &r), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.lines[0].key, "ana");
	assert_int_equal(r.lines[0].runs, 2);
	assert_int_equal(r.lines[0].tasks, 3);
	assert_true(near(r.lines[0].reserved_usd, 0.60));
	assert_string_equal(r.lines[1].key, "ben");
	assert_true(near(r.lines[1].reserved_usd, 0.50));
	assert_string_equal(r.lines[2].key, "(unknown)");
	assert_true(near(r.reserved_usd, 1.11));
	cost_report_free(&r);
}

/* ---- instance rightsizing -------------------------------------------------- */

/* A run's timeline: n points, cores[i % ncores], mem at its peak on one of them. */
static void timeline(struct an_point *p, size_t n, int64_t start, const double *cores, size_t ncores,
		     uint64_t peak)
{
	for (size_t i = 0; i < n; i++) {
		p[i].t_ns = start + (int64_t)i * 60000000000LL;
		p[i].cores = cores[i % ncores];
		p[i].mem_bytes = i == n / 2 ? peak : peak / 3;
	}
}

/*
 * "variants": three runs of 2 h on m6i.4xlarge (16 vCPUs, 64 GiB,
 * $0.768/h), days 0, 5 and 10 (the last ends at day 10: a 10-day span).
 * Each run's 20 points: 18 at 1.0 core, one at 2.03, one spike at 7.5. All
 * 60 sorted: ranks 1-54 are 1.0, 55-57 2.03, 58-60 7.5; the p95 is rank
 * ceil(57) = 57: 2.03 cores -> ceil(2.03 - 0.05) = 2 CPUs. Memory 3 GiB at
 * peak x 1.15 = 3.45 GiB = 3704409292.8 bytes -> 3704409293. Cheaper
 * than c6i.large (2 vCPUs, 4 GiB, $0.085): c9.tiny ($0.05) has 2 GiB,
 * m7g.medium ($0.0408) one vCPU, and t3.medium ($0.0416) has the size but
 * is burstable. c6i.large fits. Per run: (0.768 - 0.085) x 2 h = $1.366;
 * 3 runs in 10 days = 9 a month: $12.294 a month.
 *
 * "align": two 1 h runs on m6i.xlarge ($0.192), 3 h apart (a span under
 * a day counts as a day: 60 a month), at 3.5-3.9 cores and 5 GiB: 4 CPUs,
 * 5.75 GiB. c6i.xlarge (4 vCPUs, 8 GiB, $0.17) fits for less than
 * m6i.xlarge: 0.022 a run, 1.32 a month.
 *
 * "tiny": on t3.small already, needing 1 CPU (0.5 cores) and 1.15 GiB:
 * nothing cheaper fits (m7g.medium, $0.0408, is the cheapest that is not
 * burstable): it stays, saving 0. "qc": the same needs on a host whose
 * type is unknown (aws us-east-1): m7g.medium, the saving unknown.
 */
static void instances_are_fitted_to_what_the_runs_used(void **state)
{
	static const double var_cores[20] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 2.03, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7.5 };
	static const double align_cores[] = { 3.5, 3.9 };
	static const double small_cores[] = { 0.5 };
	static const struct an_host m16 = { .host_id = "big", .cloud = "aws", .instance_type = "m6i.4xlarge",
					    .region = "us-east-1", .cpus = 16, .memory_bytes = 64 * GiB,
					    .price_per_hour = -1 };
	static const struct an_host m4 = { .host_id = "m4", .cloud = "aws", .instance_type = "m6i.xlarge",
					   .region = "us-east-1", .cpus = 4, .memory_bytes = 16 * GiB,
					   .price_per_hour = -1 };
	static const struct an_host t3 = { .host_id = "t3", .cloud = "aws", .instance_type = "t3.small",
					   .region = "us-east-1", .price_per_hour = -1 };
	static const struct an_host anon = { .host_id = "q", .cloud = "aws", .region = "us-east-1",
					     .price_per_hour = -1 };
	const int64_t var_start[3] = { T0, T0 + 5 * DAY, T0 + 10 * DAY - 2 * H };
	struct an_point pts[3 * 20 + 2 * 10 + 2 * 5];
	struct an_run runs[8];
	struct an_input in = { .runs = runs, .nruns = 8, .timeline = pts, .npoints = sizeof(pts) / sizeof(pts[0]) };
	struct price_table t;
	struct cost_fit *f;
	size_t n, at = 0;

	(void)state;
	load(&t);
	memset(runs, 0, sizeof(runs));
	for (int i = 0; i < 3; i++) {
		runs[i] = (struct an_run){ .pipeline = "variants", .start_ns = var_start[i],
					   .end_ns = var_start[i] + 2 * H, .host = m16, .point_first = (uint32_t)at,
					   .point_n = 20 };
		timeline(pts + at, 20, var_start[i], var_cores, 20, 3 * GiB);
		at += 20;
	}
	for (int i = 0; i < 2; i++) {
		runs[3 + i] = (struct an_run){ .pipeline = "align", .start_ns = T0 + 3 * i * H,
					       .end_ns = T0 + (3 * i + 1) * H, .host = m4,
					       .point_first = (uint32_t)at, .point_n = 10 };
		timeline(pts + at, 10, T0, align_cores, 2, 5 * GiB);
		at += 10;
	}
	runs[5] = (struct an_run){ .pipeline = "tiny", .start_ns = T0, .end_ns = T0 + H, .host = t3,
				   .point_first = (uint32_t)at, .point_n = 5 };
	timeline(pts + at, 5, T0, small_cores, 1, GiB);
	at += 5;
	runs[6] = (struct an_run){ .pipeline = "qc", .start_ns = T0, .end_ns = T0 + H, .host = anon,
				   .point_first = (uint32_t)at, .point_n = 5 };
	timeline(pts + at, 5, T0, small_cores, 1, GiB);
	at += 5;
	runs[7] = (struct an_run){ .pipeline = "variants", .start_ns = T0 + 11 * DAY, .end_ns = 0, .host = m16 };
	assert_int_equal(at, in.npoints);

	assert_int_equal(cost_fit_instances(&in, &t, NULL, &f, &n), 0);
	assert_int_equal(n, 4);

	assert_string_equal(f[0].pipeline, "variants");
	assert_int_equal(f[0].runs, 3); /* the running one is left out */
	assert_true(f[0].need_cores == 2.03);
	assert_int_equal(f[0].cpus_needed, 2);
	assert_int_equal(f[0].need_mem_bytes, 3704409293ull);
	assert_string_equal(f[0].current_type, "m6i.4xlarge");
	assert_string_equal(f[0].current->instance_type, "m6i.4xlarge");
	assert_string_equal(f[0].best->instance_type, "c6i.large");
	assert_true(f[0].current_fits);
	assert_true(f[0].best_spot_cheaper); /* 0.034 < 0.085 */
	assert_true(near(f[0].mean_wall_hours, 2));
	assert_true(near(f[0].saving_per_run_usd, 1.366));
	assert_true(near(f[0].runs_per_month, 9));
	assert_true(near(f[0].saving_per_month_usd, 12.294));
	assert_non_null(strstr(f[0].why, "p95 2.03 cores, peak 3.00 GiB of 16 vCPUs and 64.0 GiB; needs 2 vCPUs, 3.45 GiB"));
	assert_non_null(strstr(f[0].why, "c6i.large ($0.0850/h) fits for less than m6i.4xlarge ($0.7680/h)"));

	assert_string_equal(f[1].pipeline, "align");
	assert_int_equal(f[1].cpus_needed, 4);
	assert_string_equal(f[1].best->instance_type, "c6i.xlarge"); /* compute-shaped: the c family */
	assert_false(f[1].best_spot_cheaper);                        /* no spot price */
	assert_true(near(f[1].saving_per_run_usd, 0.022));
	assert_true(near(f[1].runs_per_month, 60));
	assert_true(near(f[1].saving_per_month_usd, 1.32));

	assert_string_equal(f[2].pipeline, "tiny");
	assert_int_equal(f[2].cpus_needed, 1);
	assert_true(f[2].best == f[2].current);
	assert_true(f[2].saving_per_run_usd == 0 && f[2].saving_per_month_usd == 0);
	assert_non_null(strstr(f[2].why, "t3.small is the cheapest that fits"));

	assert_string_equal(f[3].pipeline, "qc");
	assert_null(f[3].current_type);
	assert_null(f[3].current);
	assert_string_equal(f[3].best->instance_type, "m7g.medium");
	assert_true(f[3].saving_per_run_usd < 0 && f[3].saving_per_month_usd < 0); /* unknown */
	assert_non_null(strstr(f[3].why, "needs 1 vCPU, 1.15 GiB; m7g.medium ($0.0408/h) fits (the host's type is unknown)"));
	free(f);

	assert_int_equal(cost_fit_instances(&in, &t, "align", &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].pipeline, "align");
	free(f);

	/* no table: the needs, but no type */
	assert_int_equal(cost_fit_instances(&in, NULL, "variants", &f, &n), 0);
	assert_int_equal(n, 1);
	assert_null(f[0].best);
	assert_int_equal(f[0].cpus_needed, 2);
	assert_true(f[0].saving_per_run_usd < 0);
	assert_non_null(strstr(f[0].why, "no price table"));
	free(f);
	price_table_free(&t);
}

/* A type too small for what the runs held: the next that fits, at no saving. */
static void a_type_too_small_is_told_what_fits(void **state)
{
	static const double cores[] = { 1.0 };
	struct an_point pts[4];
	struct an_run run = { .pipeline = "big", .start_ns = T0, .end_ns = T0 + H, .point_n = 4,
			      .host = { .host_id = "s", .cloud = "aws", .instance_type = "m6i.large",
					.region = "us-east-1", .price_per_hour = -1 } };
	struct an_input in = { .runs = &run, .nruns = 1, .timeline = pts, .npoints = 4 };
	struct price_table t;
	struct cost_fit *f;
	size_t n;

	(void)state;
	load(&t);
	/* 8 GiB x 1.15 = 9.2 GiB: over m6i.large's 8; m6i.xlarge (16 GiB, $0.192) is the cheapest that fits */
	timeline(pts, 4, T0, cores, 1, 8 * GiB);
	assert_int_equal(cost_fit_instances(&in, &t, NULL, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_false(f[0].current_fits);
	assert_string_equal(f[0].best->instance_type, "m6i.xlarge");
	assert_true(f[0].saving_per_run_usd == 0);
	assert_non_null(strstr(f[0].why, "m6i.large ($0.0960/h) is too small: m6i.xlarge ($0.1920/h) fits"));
	free(f);
	price_table_free(&t);
}

static void inconsistent_input_is_refused(void **state)
{
	struct an_run run = { .start_ns = T0, .end_ns = T0 + H, .step_first = 1, .step_n = 1 };
	struct an_input in = { .runs = &run, .nruns = 1 };
	struct cost_report r;
	struct cost_fit *f;
	size_t n;

	(void)state;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), -EINVAL); /* steps past the array */
	assert_int_equal(cost_compute(&in, NULL, (enum cost_by)42, -1, &r), -EINVAL);
	assert_int_equal(cost_fit_instances(&in, NULL, NULL, &f, &n), -EINVAL);
	run.step_first = 0;
	run.step_n = 0;
	run.point_n = 3;
	assert_int_equal(cost_fit_instances(&in, NULL, NULL, &f, &n), -EINVAL);
	run.point_n = 0;
	assert_int_equal(cost_compute(&in, NULL, COST_BY_RUN, -1, &r), 0);
	cost_report_free(&r);
	assert_int_equal(cost_fit_instances(&in, NULL, NULL, &f, &n), 0);
	assert_int_equal(n, 0); /* no pipeline, no timeline */
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_table_is_read_and_sorted_by_type_then_region),
		cmocka_unit_test(crlf_blank_lines_comments_and_a_bom_are_tolerated),
		cmocka_unit_test(refusals_name_the_line_and_what_to_fix),
		cmocka_unit_test(the_shipped_table_parses_and_looks_like_prices),
		cmocka_unit_test(lookup_takes_the_region_or_the_cheapest),
		cmocka_unit_test(burstable_types_are_known_by_name),
		cmocka_unit_test(a_configured_price_wins_over_the_table),
		cmocka_unit_test(by_names_round_trip),
		cmocka_unit_test(a_run_costs_reserved_used_and_idle),
		cmocka_unit_test(cluster_jobs_reserve_their_allocation_on_their_nodes_not_their_queue_time),
		cmocka_unit_test(overlapping_runs_of_a_host_split_its_time),
		cmocka_unit_test(idle_is_the_time_no_task_ran),
		cmocka_unit_test(an_unpriced_run_is_reported_without_a_price),
		cmocka_unit_test(tools_and_users_group_their_tasks_and_runs),
		cmocka_unit_test(instances_are_fitted_to_what_the_runs_used),
		cmocka_unit_test(a_type_too_small_is_told_what_fits),
		cmocka_unit_test(inconsistent_input_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
