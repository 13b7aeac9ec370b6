/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Step memory: the sweep over spans (known answers), the spans a process's
 * samples and exit give, and whether a step has a memory cgroup to itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "encode.h"
#include "hsort.h"
#include "proctab.h"
#include "series.h"
#include "stepmem.h"
#include "steps.h"

#define MIB (UINT64_C(1) << 20)

static uint64_t peak_of(const struct mem_span *v, size_t n)
{
	struct mem_event ev[64];

	assert_true(2 * n <= 64);
	return mem_spans_peak(v, n, ev);
}

static void one_after_the_other_is_the_larger_side_by_side_the_sum(void **state)
{
	const struct mem_span seq[] = { { 10, 20, 100 * MIB }, { 20, 30, 100 * MIB } };
	const struct mem_span par[] = { { 10, 20, 100 * MIB }, { 15, 30, 100 * MIB } };
	const struct mem_span three[] = { { 0, 100, 10 }, { 10, 20, 5 }, { 30, 40, 7 }, { 35, 36, 1 }, { 50, 60, 3 } };

	(void)state;
	/* an end at 20 and a start at 20 do not overlap */
	assert_int_equal(peak_of(seq, 2), 100 * MIB);
	assert_int_equal(peak_of(par, 2), 200 * MIB);
	assert_int_equal(peak_of(three, 5), 10 + 7 + 1);
}

static void empty_and_degenerate_spans_count_nothing(void **state)
{
	const struct mem_span v[] = { { 5, 5, 100 }, { 9, 3, 100 }, { 1, 2, 0 } };

	(void)state;
	assert_int_equal(peak_of(v, 0), 0);
	assert_int_equal(peak_of(v, 3), 0);
}

static void huge_figures_do_not_overflow(void **state)
{
	const struct mem_span v[] = { { 0, 10, UINT64_MAX }, { 0, 10, UINT64_MAX }, { 0, 10, UINT64_MAX } };

	(void)state;
	assert_int_equal(peak_of(v, 3), 3 * (UINT64_C(1) << 50));
}

/* A process started at `start`, exec'd at start + 1, exited at `end` with its image's peak. */
static struct proc *proc_at(struct proctab *t, uint32_t pid, uint64_t start, uint64_t end, uint64_t peak)
{
	struct tr_exit x = encode_exit(end, pid, start, 1, 0);
	struct proc *p;

	x.image_peak_rss_bytes = peak;
	x.maxrss_bytes = peak;
	assert_int_equal(proctab_exit(t, &x, end, &p), 0);
	p->image_ts_ns = start + 1;
	return p;
}

static void sample(struct proctab *t, struct proc *p, uint64_t ts, uint64_t rss, uint64_t hwm)
{
	struct tr_sample s = encode_sample(ts, p->tgid, p->start_ns, 1, ts, rss, 0);

	s.hiwater_rss_bytes = hwm;
	assert_int_equal(proctab_sample(t, &s, ts), 0);
}

static void unsampled_process_holds_its_peak_over_its_image_life(void **state)
{
	struct proctab t;
	struct mem_span sp[4];
	struct proc *p;

	(void)state;
	assert_int_equal(proctab_init(&t, 64, 0, 1), 0);
	p = proc_at(&t, 200, 1000, 2000, 48 * MIB);
	assert_int_equal(mem_proc_spans(p, 5000, sp), 1);
	assert_int_equal(sp[0].t0, 1001);
	assert_int_equal(sp[0].t1, 2000);
	assert_int_equal(sp[0].bytes, 48 * MIB);
	proctab_free(&t);
}

/*
 * A process that peaks at 1 GiB early and then holds 100 MiB: its spans
 * put the peak where VmHWM rose and the resident set elsewhere, so a
 * second process that peaks later does not add to its old peak.
 */
static void samples_place_the_peak_where_the_high_water_mark_rose(void **state)
{
	struct proctab t;
	struct mem_span sp[16];
	struct mem_event ev[32];
	struct proc *a, *b;
	size_t n;

	(void)state;
	assert_int_equal(proctab_init(&t, 64, 0, 1), 0);
	a = proc_at(&t, 200, 0, 10000, 1024 * MIB);
	sample(&t, a, 1000, 1024 * MIB, 1024 * MIB);
	sample(&t, a, 2000, 100 * MIB, 1024 * MIB);
	sample(&t, a, 3000, 100 * MIB, 1024 * MIB);
	n = mem_proc_spans(a, 20000, sp);
	assert_int_equal(n, 4);
	assert_int_equal(sp[0].bytes, 1024 * MIB); /* [1, 1000): VmHWM reached by the first sample */
	assert_int_equal(sp[1].bytes, 1024 * MIB); /* [1000, 2000): the larger resident set */
	assert_int_equal(sp[2].bytes, 100 * MIB);  /* [2000, 3000) */
	assert_int_equal(sp[3].bytes, 100 * MIB);  /* [3000, 10000): exit peak not above VmHWM */
	b = proc_at(&t, 201, 4000, 6000, 1024 * MIB);
	n += mem_proc_spans(b, 20000, sp + n);
	assert_int_equal(mem_spans_peak(sp, n, ev), 1124 * MIB);
	/* a peak above every sampled VmHWM happened after the last sample */
	a->exit.image_peak_rss_bytes = 2048 * MIB;
	n = mem_proc_spans(a, 20000, sp);
	assert_int_equal(sp[n - 1].bytes, 2048 * MIB);
	proctab_free(&t);
}

static void samples_of_an_earlier_image_are_not_this_ones(void **state)
{
	struct proctab t;
	struct mem_span sp[8];
	struct proc *p;

	(void)state;
	assert_int_equal(proctab_init(&t, 64, 0, 1), 0);
	p = proc_at(&t, 200, 0, 10000, 8 * MIB);
	sample(&t, p, 1000, 400 * MIB, 400 * MIB); /* before the exec below: the engine's copy */
	p->image_ts_ns = 2000;
	assert_int_equal(mem_proc_spans(p, 20000, sp), 1);
	assert_int_equal(sp[0].bytes, 8 * MIB);
	proctab_free(&t);
}

static void peak_source_says_exact_sampled_or_rusage(void **state)
{
	struct proctab t;
	enum proc_peak_source src;
	struct proc *p;

	(void)state;
	assert_int_equal(proctab_init(&t, 64, 0, 1), 0);
	p = proc_at(&t, 200, 0, 10000, 8 * MIB);
	p->exit.maxrss_bytes = 400 * MIB;
	assert_int_equal(proc_peak_rss(p, &src), 8 * MIB);
	assert_int_equal(src, PEAK_EXIT);
	assert_string_equal(proc_peak_source_name(src), "exit");
	p->exit.flags |= TR_EXIT_NO_IMAGE_PEAK;
	assert_int_equal(proc_peak_rss(p, &src), 400 * MIB);
	assert_int_equal(src, PEAK_RUSAGE);
	p->sampled_hwm_bytes = 12 * MIB;
	assert_int_equal(proc_peak_rss(p, &src), 12 * MIB);
	assert_int_equal(src, PEAK_SAMPLED);
	proctab_free(&t);
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

static void hsort_orders_like_qsort_without_asking_the_kernel(void **state)
{
	uint64_t v[1000], w[1000], x = 88172645463325252ULL;

	(void)state;
	for (size_t i = 0; i < 1000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = w[i] = x % 300; /* many equal keys */
	}
	hsort(v, 1000, sizeof(v[0]), u64_cmp);
	qsort(w, 1000, sizeof(w[0]), u64_cmp);
	assert_memory_equal(v, w, sizeof(v));
	hsort(v, 0, sizeof(v[0]), u64_cmp);
	hsort(v, 1, sizeof(v[0]), u64_cmp);
	assert_memory_equal(v, w, sizeof(v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_after_the_other_is_the_larger_side_by_side_the_sum),
		cmocka_unit_test(empty_and_degenerate_spans_count_nothing),
		cmocka_unit_test(huge_figures_do_not_overflow),
		cmocka_unit_test(unsampled_process_holds_its_peak_over_its_image_life),
		cmocka_unit_test(samples_place_the_peak_where_the_high_water_mark_rose),
		cmocka_unit_test(samples_of_an_earlier_image_are_not_this_ones),
		cmocka_unit_test(peak_source_says_exact_sampled_or_rusage),
		cmocka_unit_test(hsort_orders_like_qsort_without_asking_the_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
