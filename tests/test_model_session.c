/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One record in, its effect out: refused records are counted by reason and
 * change nothing else, counters and end records feed the loss accounting,
 * and every kind of loss reaches the report's "dropped".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "encode.h"
#include "report.h"
#include "session.h"

static struct session *new_session(uint32_t max, uint32_t root)
{
	struct session *s = malloc(sizeof(*s));

	assert_non_null(s);
	assert_int_equal(session_init(s, max, root, 3), 0);
	return s;
}

static void free_session(struct session *s)
{
	session_free(s);
	free(s);
}

static int feed(struct session *s, unsigned type, const void *rec, size_t len)
{
	return session_record(s, type, rec, (uint32_t)len, NULL);
}

static void refused_records_are_counted_by_reason_and_change_nothing(void **state)
{
	struct session *s = new_session(8, 0);
	struct tr_fork f = encode_fork(1, 10, 1, 11, 2);
	struct tr_exit x = encode_exit(2, 11, 2, 10, 0);
	_Alignas(8) unsigned char e[DECODE_MAX_LEN];
	size_t n = encode_exec(e, sizeof(e), 3, 12, 10, 3, "/bin/x", NULL);

	(void)state;
	assert_true(feed(s, TR_FORK, &f, sizeof(f) - 1) < 0);     /* length */
	assert_true(feed(s, TR_EXIT, &f, sizeof(f)) < 0);         /* length (a fork filed as an exit) */
	x.hdr.version = 9;
	assert_int_equal(feed(s, TR_EXIT, &x, sizeof(x)), -EPROTO); /* version */
	e[sizeof(struct tr_exec) + 2] = 0;                        /* early NUL in the path */
	assert_int_equal(feed(s, TR_EXEC, e, n), -EBADMSG);
	assert_int_equal(feed(s, 40, e, n), -EPROTONOSUPPORT);     /* type */
	assert_int_equal(s->st.records, 5);
	assert_int_equal(s->st.decode_errors, 5);
	assert_int_equal(s->st.decode_by_error[DECODE_ERR_LENGTH], 2);
	assert_int_equal(s->st.decode_by_error[DECODE_ERR_VERSION], 1);
	assert_int_equal(s->st.decode_by_error[DECODE_ERR_PATH], 1);
	assert_int_equal(s->st.decode_by_error[DECODE_ERR_TYPE], 1);
	assert_int_equal(s->tab.used, 0);
	free_session(s);
}

static void good_records_reach_the_process_table(void **state)
{
	struct session *s = new_session(8, 0);
	struct tr_fork f = encode_fork(1, 10, 1, 11, 2);
	struct tr_exit x = encode_exit(2, 11, 2, 10, 0);
	struct proc *done = NULL;

	(void)state;
	assert_int_equal(feed(s, TR_FORK, &f, sizeof(f)), 0);
	assert_int_equal(session_record(s, TR_EXIT, &x, sizeof(x), &done), 0);
	assert_non_null(done);
	assert_int_equal(done->tgid, 11);
	assert_int_equal(s->tab.used, 1);
	assert_int_equal(s->st.decode_errors, 0);
	free_session(s);
}

static void latest_counters_record_gives_the_drop_totals(void **state)
{
	struct session *s = new_session(8, 0);
	struct tr_counters c = encode_counters(1, 2, 3);

	(void)state;
	c.ring_drops[TR_EXEC] = 4;
	c.records_copied = 100;
	assert_int_equal(feed(s, TR_COUNTERS, &c, sizeof(c)), 0);
	assert_int_equal(s->st.kernel_drops, 5);
	assert_int_equal(s->st.ring_drops, 4);
	c = encode_counters(2, 7, 3); /* running totals: the newer record replaces, never adds */
	assert_int_equal(feed(s, TR_COUNTERS, &c, sizeof(c)), 0);
	assert_int_equal(s->st.kernel_drops, 10);
	assert_int_equal(s->st.ring_drops, 0);
	c.kernel_drops[TR_FORK] = UINT64_MAX; /* hostile totals saturate */
	assert_int_equal(feed(s, TR_COUNTERS, &c, sizeof(c)), 0);
	assert_int_equal(s->st.kernel_drops, UINT64_MAX);
	free_session(s);
}

static void end_record_marks_the_end(void **state)
{
	struct session *s = new_session(8, 0);
	struct tr_end e = encode_end(5, 1234);

	(void)state;
	assert_false(s->st.end_seen);
	assert_int_equal(feed(s, TR_END, &e, sizeof(e)), 0);
	assert_true(s->st.end_seen);
	assert_int_equal(s->st.records_copied, 1234);
	free_session(s);
}

static void every_loss_reaches_dropped(void **state)
{
	struct session *s = new_session(1, 0);
	struct tr_counters c = encode_counters(1, 2, 0);
	struct tr_fork f1 = encode_fork(1, 10, 1, 11, 2), f2 = encode_fork(1, 10, 1, 12, 3);
	struct report_agent a = { .ring_drops = 10, .ring_resets = 1 }; /* what the ring said */

	(void)state;
	assert_int_equal(feed(s, TR_COUNTERS, &c, sizeof(c)), 0);    /* 2 kernel drops */
	assert_int_equal(feed(s, TR_FORK, &f1, sizeof(f1)), 0);
	assert_int_equal(feed(s, TR_FORK, &f2, sizeof(f2)), -ENOSPC); /* 1 turned away by the bound */
	assert_true(feed(s, TR_FORK, &f2, 3) < 0);                   /* 1 undecodable */
	report_agent_from_session(&a, s);
	assert_int_equal(a.table_full, 1);
	assert_int_equal(a.decode_errors, 1);
	assert_int_equal(a.kernel_drops, 2);
	assert_int_equal(a.ring_drops, 10); /* the ring's own figure is larger than the counters': kept */
	assert_int_equal(report_dropped(&a), 2 + 10 + 1 + 1 + 1);
	free_session(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused_records_are_counted_by_reason_and_change_nothing),
		cmocka_unit_test(good_records_reach_the_process_table),
		cmocka_unit_test(latest_counters_record_gives_the_drop_totals),
		cmocka_unit_test(end_record_marks_the_end),
		cmocka_unit_test(every_loss_reaches_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
