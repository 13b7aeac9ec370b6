/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ring behaviour in one process, over plain memory: layout, wrap and
 * padding, drops and loss markers, corrupt input on the consumer side,
 * hostile consumer positions on the producer side, resume, wakeup rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ring.h"

#define T_A (RING_REC_FIRST_USER + 0)
#define T_B (RING_REC_FIRST_USER + 1)
#define T_C (RING_REC_FIRST_USER + 5)
#define ALL_USER_TYPES (~0ULL)
#define CANARY 0xa5

static const unsigned char zeros[4096];

/* A ring over heap memory, with a guard area after the data region. */
struct fixture {
	unsigned char *mem;
	size_t ring_len;
	struct ring_cons_page *cp;
	struct ring_producer p;
	struct ring_consumer c;
};

static struct fixture *fixture_new(unsigned order)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->ring_len = RING_PAGE_SIZE + ((size_t)1 << order);
	f->mem = aligned_alloc(RING_PAGE_SIZE, f->ring_len + RING_PAGE_SIZE);
	assert_non_null(f->mem);
	memset(f->mem, 0, f->ring_len);
	memset(f->mem + f->ring_len, CANARY, RING_PAGE_SIZE);
	f->cp = aligned_alloc(RING_PAGE_SIZE, sizeof(*f->cp));
	assert_non_null(f->cp);
	memset(f->cp, 0, sizeof(*f->cp));
	assert_int_equal(ring_producer_init_mem(&f->p, f->mem, order, f->cp, 7), 0);
	assert_int_equal(ring_consumer_init_mem(&f->c, f->mem, f->ring_len, f->cp, ALL_USER_TYPES), 0);
	return f;
}

static void fixture_free(struct fixture *f)
{
	for (size_t i = 0; i < RING_PAGE_SIZE; i++)
		assert_int_equal(f->mem[f->ring_len + i], CANARY); /* nothing written past the data region */
	free(f->mem);
	free(f->cp);
	free(f);
}

static void fill(unsigned char *buf, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed * 131 + i * 7);
}

static void put(struct fixture *f, unsigned type, uint32_t len, uint32_t seed)
{
	unsigned char buf[8192];

	assert_true(len <= sizeof(buf));
	fill(buf, len, seed);
	assert_int_equal(ring_write(&f->p, type, buf, len), 0);
}

/* Next record must be a user record of this type, length and content. */
static void expect(struct fixture *f, unsigned type, uint32_t len, uint32_t seed)
{
	unsigned char buf[8192];
	struct ring_view v;

	assert_int_equal(ring_next(&f->c, &v), 1);
	assert_int_equal(v.type, type);
	assert_int_equal(v.len, len);
	fill(buf, len, seed);
	assert_memory_equal(v.payload, buf, len);
}

static void expect_lost(struct fixture *f, unsigned type, uint64_t count, uint64_t since_pos)
{
	struct ring_view v;

	assert_int_equal(ring_next(&f->c, &v), 1);
	assert_int_equal(v.type, RING_REC_LOST);
	assert_int_equal(v.lost.type, type);
	assert_int_equal(v.lost.count, count);
	assert_int_equal(v.lost.since_pos, since_pos);
}

static void expect_empty(struct fixture *f)
{
	struct ring_view v;

	assert_int_equal(ring_next(&f->c, &v), 0);
}

static void records_round_trip_in_order_with_their_bytes(void **state)
{
	struct fixture *f = fixture_new(16);
	static const uint32_t lens[] = { 0, 1, 7, 8, 9, 63, 64, 65, 1000, 4096 };

	(void)state;
	for (unsigned i = 0; i < 10; i++)
		put(f, T_A + (i % 3), lens[i], i);
	for (unsigned i = 0; i < 10; i++)
		expect(f, T_A + (i % 3), lens[i], i);
	expect_empty(f);
	assert_int_equal(f->c.records, 10);
	assert_int_equal(f->p.records, 10);
	assert_int_equal(f->p.drops_total, 0);
	fixture_free(f);
}

static void records_are_8_byte_aligned_with_8_byte_headers(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	assert_int_equal(ring_rec_size(0), 8);
	assert_int_equal(ring_rec_size(1), 16);
	assert_int_equal(ring_rec_size(8), 16);
	assert_int_equal(ring_rec_size(9), 24);
	put(f, T_A, 5, 1);
	assert_int_equal(f->p.pos, 16);
	assert_int_equal(__atomic_load_n(&f->p.hdr->producer_pos, __ATOMIC_ACQUIRE), 16);
	fixture_free(f);
}

static void reserved_record_is_invisible_until_commit(void **state)
{
	struct fixture *f = fixture_new(12);
	unsigned char *dst;

	(void)state;
	dst = ring_reserve(&f->p, T_A, 16);
	assert_non_null(dst);
	fill(dst, 16, 3);
	expect_empty(f);
	assert_null(ring_reserve(&f->p, T_A, 16)); /* one reservation at a time */
	assert_int_equal(errno, EINVAL);
	ring_commit(&f->p);
	expect(f, T_A, 16, 3);
	assert_int_equal(f->p.drops_total, 0);
	fixture_free(f);
}

static void wrap_writes_padding_to_the_end_and_restarts_at_offset_zero(void **state)
{
	struct fixture *f = fixture_new(12); /* 4096-byte data region */
	const struct ring_rec_hdr *pad;
	const uint64_t pad_off = 4 * ring_rec_size(900); /* 3648: 448 bytes left */

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		put(f, T_A, 900, i);
	for (unsigned i = 0; i < 4; i++)
		expect(f, T_A, 900, i);
	ring_release(&f->c);
	/* 1000 bytes do not fit in the 448 left before the end. */
	put(f, T_B, 1000, 9);
	pad = (const void *)(f->p.data + pad_off);
	assert_int_equal(pad->type, RING_REC_PAD);
	assert_int_equal(pad->len, 4096 - pad_off - 8);
	assert_int_equal(((const struct ring_rec_hdr *)f->p.data)->type, T_B);
	assert_int_equal(f->p.pos, 4096 + ring_rec_size(1000));
	expect(f, T_B, 1000, 9);
	expect_empty(f);
	fixture_free(f);
}

static void record_that_exactly_fills_the_tail_needs_no_padding(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		put(f, T_A, 1024 - 8, i); /* the fourth ends exactly at the end of the region */
	for (unsigned i = 0; i < 4; i++)
		expect(f, T_A, 1024 - 8, i);
	ring_release(&f->c);
	assert_int_equal(f->p.pos, 4096);
	put(f, T_A, 8, 9);
	assert_int_equal(((const struct ring_rec_hdr *)f->p.data)->type, T_A);
	expect(f, T_A, 8, 9);
	fixture_free(f);
}

static void many_wraps_keep_every_record_intact(void **state)
{
	struct fixture *f = fixture_new(12);
	uint32_t seed_w = 0, seed_r = 0;

	(void)state;
	for (unsigned round = 0; round < 2000; round++) {
		uint32_t len = (round * 37) % 700;

		put(f, T_A, len, seed_w++);
		if (round % 3 == 2) {
			for (unsigned k = 0; k < 3; k++) {
				uint32_t l = ((round - 2 + k) * 37) % 700;

				expect(f, T_A, l, seed_r++);
			}
			ring_release(&f->c);
		}
	}
	assert_true(f->p.pos > 100 * 4096); /* wrapped many times */
	assert_int_equal(f->p.drops_total, 0);
	fixture_free(f);
}

static void full_ring_drops_and_counts_each_type_exactly(void **state)
{
	struct fixture *f = fixture_new(12);
	unsigned ok = 0, dropped_a = 0, dropped_b = 0;

	(void)state;
	/* 120-byte payloads take 128 bytes: exactly 32 fill 4096 bytes. */
	for (unsigned i = 0; i < 50; i++) {
		unsigned t = i % 2 ? T_B : T_A;
		int rc = ring_write(&f->p, t, zeros, 120);

		if (rc == 0)
			ok++;
		else {
			assert_int_equal(rc, -ENOSPC);
			if (t == T_A)
				dropped_a++;
			else
				dropped_b++;
		}
	}
	assert_int_equal(ok, 4096 / 128);
	assert_int_equal(dropped_a + dropped_b, 50 - ok);
	assert_int_equal(f->p.drops[T_A], dropped_a);
	assert_int_equal(f->p.drops[T_B], dropped_b);
	assert_int_equal(f->p.hdr->drops[T_A], dropped_a);
	assert_int_equal(f->p.hdr->drops[T_B], dropped_b);
	assert_int_equal(f->p.hdr->drops_total, 50 - ok);
	assert_int_equal(f->p.hdr->drops[T_C], 0);
	assert_int_equal(f->p.hdr->bad_consumer_pos, 0);
	fixture_free(f);
}

static void loss_is_reported_in_band_per_type_at_the_next_write(void **state)
{
	struct fixture *f = fixture_new(12);
	uint64_t since;

	(void)state;
	for (unsigned i = 0; i < 32; i++)
		put(f, T_A, 120, i);
	since = f->p.pos;
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	assert_int_equal(ring_write(&f->p, T_C, zeros, 120), -ENOSPC);
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	for (unsigned i = 0; i < 32; i++)
		expect(f, T_A, 120, i);
	expect_empty(f); /* nothing announced before there is room */
	ring_release(&f->c);
	put(f, T_B, 10, 77);
	expect_lost(f, T_A, 2, since);
	expect_lost(f, T_C, 1, since);
	expect(f, T_B, 10, 77);
	expect_empty(f);
	assert_int_equal(f->c.lost[T_A], 2);
	assert_int_equal(f->c.lost[T_C], 1);
	assert_int_equal(f->c.lost_total, 3);
	assert_int_equal(f->p.hdr->lost_markers, 2);
	/* Markers were delivered: another write carries none. */
	put(f, T_B, 10, 78);
	expect(f, T_B, 10, 78);
	fixture_free(f);
}

static void markers_that_do_not_fit_keep_accumulating(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;
	uint64_t lost = 0;

	(void)state;
	for (unsigned i = 0; i < 32; i++)
		put(f, T_A, 120, i);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	/* Free one slot: 128 bytes, room for a marker (40) but not marker + record. */
	expect(f, T_A, 120, 0);
	ring_release(&f->c);
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	/* The marker made it in; the record that followed is the next loss. */
	assert_int_equal(ring_next(&f->c, &v), 1);
	while (v.type != RING_REC_LOST) {
		assert_int_equal(v.type, T_A);
		assert_int_equal(ring_next(&f->c, &v), 1);
	}
	assert_int_equal(v.lost.count, 5);
	assert_int_equal(v.lost.total, 5);
	lost += v.lost.count;
	expect_empty(f);
	ring_release(&f->c);
	put(f, T_B, 1, 1);
	assert_int_equal(ring_next(&f->c, &v), 1);
	assert_int_equal(v.type, RING_REC_LOST);
	assert_int_equal(v.lost.count, 1);
	assert_int_equal(v.lost.total, 6);
	lost += v.lost.count;
	assert_int_equal(lost, f->p.hdr->drops[T_A]);
	expect(f, T_B, 1, 1);
	fixture_free(f);
}

static void oversize_record_is_refused_counted_and_reported(void **state)
{
	struct fixture *f = fixture_new(12);
	static unsigned char big[4096];

	(void)state;
	/* (4096 - 49 markers x 40 bytes) / 2, aligned down, minus the header. */
	assert_int_equal(ring_max_payload(&f->p), 1056);
	assert_int_equal(ring_write(&f->p, T_A, big, 1057), -EMSGSIZE);
	assert_int_equal(ring_write(&f->p, T_A, big, 1056), 0);
	assert_int_equal(f->p.hdr->oversize, 1);
	assert_int_equal(f->p.hdr->drops[T_A], 1);
	expect_lost(f, T_A, 1, 0);
	fixture_free(f);
}

/* Found by fuzz_ring_producer: pending markers must not stop a drained ring taking a largest record. */
static void drained_ring_takes_a_largest_record_with_markers_pending(void **state)
{
	static unsigned char big[4096];

	(void)state;
	for (uint32_t first = 0; first <= 1056; first += 8) {
		struct fixture *f = fixture_new(12);
		struct ring_view v;

		put(f, T_A, first, 1); /* start the next write at a different offset each time */
		for (unsigned t = RING_REC_FIRST_USER; t < RING_MAX_TYPES; t++)
			assert_int_equal(ring_write(&f->p, t, big, 1057), -EMSGSIZE); /* 48 markers pending */
		while (ring_next(&f->c, &v) == 1)
			;
		ring_release(&f->c);
		assert_true(ring_has_room(&f->p, 1056));
		assert_int_equal(ring_write(&f->p, T_B, big, 1056), 0);
		fixture_free(f);
	}
}

static void invalid_types_are_refused_without_counting(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	assert_int_equal(ring_write(&f->p, RING_REC_PAD, "x", 1), -EINVAL);
	assert_int_equal(ring_write(&f->p, RING_REC_LOST, "x", 1), -EINVAL);
	assert_int_equal(ring_write(&f->p, 0, "x", 1), -EINVAL);
	assert_int_equal(ring_write(&f->p, RING_MAX_TYPES, "x", 1), -EINVAL);
	assert_int_equal(f->p.drops_total, 0);
	assert_int_equal(f->p.pos, 0);
	fixture_free(f);
}

/* Corrupt the header of the next unread record, check the reset, and that reading goes on. */
static void corrupt_and_expect_reset(size_t field_off, const void *bytes, size_t n)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;
	uint64_t prod;

	put(f, T_A, 100, 1);
	put(f, T_A, 100, 2);
	memcpy(f->p.data + field_off, bytes, n);
	prod = f->p.pos;
	assert_int_equal(ring_next(&f->c, &v), -EBADMSG);
	assert_int_equal(f->c.resets, 1);
	assert_int_equal(f->c.bytes_discarded, prod);
	assert_int_equal(f->c.pos, prod);
	expect_empty(f);
	put(f, T_B, 5, 3);
	expect(f, T_B, 5, 3);
	fixture_free(f);
}

static void corrupt_length_resets_the_consumer(void **state)
{
	uint32_t huge = 0xfffffff0u, beyond = 1000, unaligned_tail = 4090;

	(void)state;
	corrupt_and_expect_reset(0, &huge, 4);
	corrupt_and_expect_reset(0, &beyond, 4); /* past what was published */
	corrupt_and_expect_reset(0, &unaligned_tail, 4);
}

static void unknown_or_zero_type_resets_the_consumer(void **state)
{
	uint16_t zero = 0, unknown = RING_MAX_TYPES, reserved = 3, nonzero = 1;

	(void)state;
	corrupt_and_expect_reset(4, &zero, 2);
	corrupt_and_expect_reset(4, &unknown, 2);
	corrupt_and_expect_reset(4, &reserved, 2);
	corrupt_and_expect_reset(6, &nonzero, 2); /* the must-be-zero half */
}

static void padding_that_does_not_reach_the_end_resets_the_consumer(void **state)
{
	struct ring_rec_hdr pad = { .len = 8, .type = RING_REC_PAD };

	(void)state;
	corrupt_and_expect_reset(0, &pad, sizeof(pad));
}

static void type_not_in_the_consumers_mask_resets_it(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;

	(void)state;
	assert_int_equal(ring_consumer_init_mem(&f->c, f->mem, f->ring_len, f->cp, 1ULL << T_A), 0);
	put(f, T_A, 1, 1);
	put(f, T_B, 1, 1);
	expect(f, T_A, 1, 1);
	assert_int_equal(ring_next(&f->c, &v), -EBADMSG);
	assert_int_equal(f->c.resets, 1);
	fixture_free(f);
}

static void malformed_loss_marker_resets_the_consumer(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_lost m = { .type = T_A, .count = 5, .since_pos = 0, .total = 2 }; /* count > total */
	struct ring_rec_hdr h = { .len = sizeof(m), .type = RING_REC_LOST };
	struct ring_view v;

	(void)state;
	put(f, T_A, sizeof(m), 0);
	memcpy(f->p.data, &h, sizeof(h));
	memcpy(f->p.data + 8, &m, sizeof(m));
	assert_int_equal(ring_next(&f->c, &v), -EBADMSG);
	assert_int_equal(f->c.lost_total, 0);
	fixture_free(f);
}

static void impossible_producer_positions_reset_the_consumer(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;
	static const uint64_t bad[] = { 4, 4096 * 3, UINT64_MAX - 7 };

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		uint64_t before = f->c.resets;

		f->c.pos = f->c.prod_seen = 0;
		f->p.hdr->producer_pos = bad[i];
		assert_int_equal(ring_next(&f->c, &v), -EBADMSG);
		assert_int_equal(f->c.resets, before + 1);
		assert_true(f->c.pos <= bad[i]);
		/* The same impossible value again is not a new reset: the ring just looks empty. */
		if (bad[i] & 7) {
			assert_int_equal(ring_next(&f->c, &v), 0);
			assert_int_equal(f->c.resets, before + 1);
		}
	}
	fixture_free(f);
}

/* Producer side: what a hostile consumer page can and cannot do. */
static void set_cons(struct fixture *f, uint64_t pos)
{
	__atomic_store_n(&f->cp->consumer_pos, pos, __ATOMIC_RELEASE);
}

static void consumer_position_ahead_of_producer_is_treated_as_full(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	for (unsigned i = 0; i < 32; i++)
		put(f, T_A, 120, i); /* full; the cached position is now stale */
	set_cons(f, f->p.pos + 8);
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	assert_int_equal(f->p.hdr->bad_consumer_pos, 1);
	set_cons(f, UINT64_MAX);
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	assert_int_equal(f->p.hdr->bad_consumer_pos, 2);
	assert_int_equal(f->p.cons_seen, 0); /* still the last valid value */
	assert_int_equal(f->p.drops[T_A], 2);
	/* A valid position again: the producer carries on. */
	set_cons(f, f->p.pos);
	put(f, T_A, 120, 99);
	fixture_free(f);
}

static void consumer_position_further_behind_than_the_ring_is_treated_as_full(void **state)
{
	struct fixture *f = fixture_new(12);
	uint64_t pos;

	(void)state;
	for (unsigned round = 0; round < 100; round++) { /* move the producer well past one lap */
		set_cons(f, f->p.pos);
		put(f, T_A, 120, round);
	}
	pos = f->p.pos;
	set_cons(f, pos);
	for (unsigned i = 0; i < 32; i++)
		put(f, T_A, 120, i);
	set_cons(f, f->p.pos - 4096 - 8); /* one record further back than possible */
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	assert_int_equal(f->p.hdr->bad_consumer_pos, 1);
	set_cons(f, f->p.pos - 4096); /* exactly one ring behind: valid, and full */
	assert_int_equal(ring_write(&f->p, T_A, zeros, 120), -ENOSPC);
	assert_int_equal(f->p.hdr->bad_consumer_pos, 1);
	fixture_free(f);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Random and alternating consumer positions: the producer never writes
 * outside the data region (canary + ASan), never moves backwards, never
 * has more than one ring in flight relative to a position it accepted,
 * and every write returns without waiting.
 */
static void hostile_consumer_positions_leave_the_producer_correct_and_bounded(void **state)
{
	struct fixture *f = fixture_new(12);
	uint64_t seed = 0x9e3779b97f4a7c15ULL, last_pos = 0, ok = 0, failed = 0;

	(void)state;
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t r = xorshift(&seed), v;
		int rc;

		switch (i % 4) {
		case 0: v = r; break;                                   /* random */
		case 1: v = f->p.pos + 8 + (r & 0xfff8); break;         /* ahead */
		case 2: v = f->p.pos - f->p.size - 8 - (r & 0xff8); break; /* far behind */
		default: v = f->p.pos - (r % (f->p.size / 8 + 1)) * 8; break; /* valid */
		}
		if ((r >> 20) & 1) /* alternate with a consumer that has read everything */
			v = f->p.pos;
		set_cons(f, v);
		__atomic_store_n(&f->cp->sleeping, (uint32_t)(r >> 32), __ATOMIC_RELAXED);
		rc = ring_write(&f->p, T_A + (unsigned)(r % 3), zeros, (uint32_t)((r >> 8) % 300));
		if (rc == 0)
			ok++;
		else
			failed++;
		ring_notify(&f->p);
		assert_true(f->p.pos >= last_pos);
		assert_true(f->p.pos - f->p.cons_seen <= f->p.size);
		last_pos = f->p.pos;
	}
	assert_true(ok > 1000);
	assert_true(failed > 1000);
	assert_int_equal(f->p.drops_total, failed);
	assert_true(f->p.bad_consumer_pos > 0);
	fixture_free(f);
}

static void restarted_consumer_resumes_from_its_last_released_position(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;

	(void)state;
	for (unsigned i = 0; i < 10; i++)
		put(f, T_A, 40, i);
	for (unsigned i = 0; i < 4; i++)
		expect(f, T_A, 40, i);
	ring_release(&f->c);
	expect(f, T_A, 40, 4); /* read but not released: must come again */
	expect(f, T_A, 40, 5);
	/* A new consumer over the same pages. */
	assert_int_equal(ring_consumer_init_mem(&f->c, f->mem, f->ring_len, f->cp, ALL_USER_TYPES), 0);
	for (unsigned i = 4; i < 10; i++)
		expect(f, T_A, 40, i);
	assert_int_equal(ring_next(&f->c, &v), 0);
	fixture_free(f);
}

static void consumer_page_with_impossible_position_resumes_at_producer(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	put(f, T_A, 40, 1);
	f->cp->consumer_pos = 1ULL << 40;
	assert_int_equal(ring_consumer_init_mem(&f->c, f->mem, f->ring_len, f->cp, ALL_USER_TYPES), 0);
	assert_int_equal(f->c.resets, 1);
	assert_int_equal(f->c.pos, f->p.pos);
	fixture_free(f);
}

/* Found by fuzz_ring_consumer: a reset on attach must land on an aligned position. */
static void reset_on_attach_to_an_unaligned_producer_position_stays_aligned(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_view v;

	(void)state;
	f->p.hdr->producer_pos = 4095;
	f->cp->consumer_pos = 8192;
	assert_int_equal(ring_consumer_init_mem(&f->c, f->mem, f->ring_len, f->cp, ALL_USER_TYPES), 0);
	assert_int_equal(f->c.pos % 8, 0);
	assert_int_equal(f->cp->consumer_pos % 8, 0);
	f->p.hdr->producer_pos = 4096;
	assert_true(ring_next(&f->c, &v) <= 1); /* and under ASan: no read past the region */
	fixture_free(f);
}

static void bad_ring_header_is_refused(void **state)
{
	struct fixture *f = fixture_new(12);
	struct ring_consumer c;

	(void)state;
	assert_int_equal(ring_consumer_init_mem(&c, f->mem, f->ring_len - 8, f->cp, 0), -EPROTO);
	f->p.hdr->data_size = 3000;
	assert_int_equal(ring_consumer_init_mem(&c, f->mem, f->ring_len, f->cp, 0), -EPROTO);
	f->p.hdr->data_size = 4096;
	f->p.hdr->version = 99;
	assert_int_equal(ring_consumer_init_mem(&c, f->mem, f->ring_len, f->cp, 0), -EPROTO);
	f->p.hdr->version = RING_VERSION;
	f->p.hdr->magic ^= 1;
	assert_int_equal(ring_consumer_init_mem(&c, f->mem, f->ring_len, f->cp, 0), -EPROTO);
	f->p.hdr->magic ^= 1;
	assert_int_equal(ring_consumer_init_mem(&c, f->mem, f->ring_len, f->cp, 0), 0);
	assert_int_equal(ring_producer_init_mem(&f->p, f->mem, 11, f->cp, 1), -EINVAL);
	assert_int_equal(ring_producer_init_mem(&f->p, f->mem, 31, f->cp, 1), -EINVAL);
	fixture_free(f);
}

static void notify_wakes_only_a_sleeping_consumer_and_only_for_new_data(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	ring_notify(&f->p); /* nothing written */
	assert_int_equal(f->p.hdr->wake_seq, 0);
	put(f, T_A, 1, 1);
	ring_notify(&f->p); /* consumer awake */
	assert_int_equal(f->p.hdr->wake_seq, 0);
	f->cp->sleeping = 1;
	ring_notify(&f->p);
	assert_int_equal(f->p.hdr->wake_seq, 1);
	ring_notify(&f->p); /* still "sleeping", but nothing new: no syscall */
	ring_notify(&f->p);
	assert_int_equal(f->p.hdr->wake_seq, 1);
	assert_int_equal(f->p.hdr->wakeups, 1);
	put(f, T_A, 1, 2);
	ring_notify(&f->p);
	assert_int_equal(f->p.hdr->wake_seq, 2);
	fixture_free(f);
}

static void wait_returns_at_once_when_data_is_there_and_times_out_when_not(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	assert_int_equal(ring_wait(&f->c, 10), 0);
	assert_int_equal(f->cp->sleeping, 0);
	put(f, T_A, 1, 1);
	assert_int_equal(ring_wait(&f->c, -1), 1);
	assert_int_equal(f->cp->sleeping, 0);
	expect(f, T_A, 1, 1);
	fixture_free(f);
}

static void heartbeats_are_visible_to_the_other_side(void **state)
{
	struct fixture *f = fixture_new(12);

	(void)state;
	ring_producer_heartbeat(&f->p, 1000);
	ring_consumer_heartbeat(&f->c, 2000);
	assert_int_equal(ring_consumer_peer_heartbeat(&f->c), 1000);
	assert_int_equal(ring_producer_peer_heartbeat(&f->p), 2000);
	assert_false(ring_heartbeat_stale(1000, 1500, 600));
	assert_true(ring_heartbeat_stale(1000, 1700, 600));
	assert_true(ring_heartbeat_stale(3000, 1700, 600)); /* from the future: not trusted */
	fixture_free(f);
}

static void has_room_never_promises_room_that_is_not_there(void **state)
{
	struct fixture *f = fixture_new(12);
	static unsigned char buf[600];
	uint64_t seed = 42, said_yes = 0, said_no = 0;

	(void)state;
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t r = xorshift(&seed);
		uint32_t len = (uint32_t)(r % sizeof(buf));
		bool room = ring_has_room(&f->p, len);
		int rc = ring_write(&f->p, T_A + (unsigned)(r % 2), buf, len);

		if (room) {
			assert_int_equal(rc, 0);
			said_yes++;
		} else {
			said_no++;
		}
		if (r % 7 == 0) {
			struct ring_view v;

			while (ring_next(&f->c, &v) == 1)
				;
			ring_release(&f->c);
		}
	}
	assert_true(said_yes > 1000 && said_no > 1000); /* both branches exercised */
	assert_int_equal(f->c.lost_total + f->p.pending_count[T_A] * !!(f->p.pending_mask & (1ULL << T_A)) +
				 f->p.pending_count[T_B] * !!(f->p.pending_mask & (1ULL << T_B)),
			 f->p.drops_total);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_round_trip_in_order_with_their_bytes),
		cmocka_unit_test(records_are_8_byte_aligned_with_8_byte_headers),
		cmocka_unit_test(reserved_record_is_invisible_until_commit),
		cmocka_unit_test(wrap_writes_padding_to_the_end_and_restarts_at_offset_zero),
		cmocka_unit_test(record_that_exactly_fills_the_tail_needs_no_padding),
		cmocka_unit_test(many_wraps_keep_every_record_intact),
		cmocka_unit_test(full_ring_drops_and_counts_each_type_exactly),
		cmocka_unit_test(loss_is_reported_in_band_per_type_at_the_next_write),
		cmocka_unit_test(markers_that_do_not_fit_keep_accumulating),
		cmocka_unit_test(oversize_record_is_refused_counted_and_reported),
		cmocka_unit_test(drained_ring_takes_a_largest_record_with_markers_pending),
		cmocka_unit_test(invalid_types_are_refused_without_counting),
		cmocka_unit_test(corrupt_length_resets_the_consumer),
		cmocka_unit_test(unknown_or_zero_type_resets_the_consumer),
		cmocka_unit_test(padding_that_does_not_reach_the_end_resets_the_consumer),
		cmocka_unit_test(type_not_in_the_consumers_mask_resets_it),
		cmocka_unit_test(malformed_loss_marker_resets_the_consumer),
		cmocka_unit_test(impossible_producer_positions_reset_the_consumer),
		cmocka_unit_test(consumer_position_ahead_of_producer_is_treated_as_full),
		cmocka_unit_test(consumer_position_further_behind_than_the_ring_is_treated_as_full),
		cmocka_unit_test(hostile_consumer_positions_leave_the_producer_correct_and_bounded),
		cmocka_unit_test(restarted_consumer_resumes_from_its_last_released_position),
		cmocka_unit_test(consumer_page_with_impossible_position_resumes_at_producer),
		cmocka_unit_test(reset_on_attach_to_an_unaligned_producer_position_stays_aligned),
		cmocka_unit_test(bad_ring_header_is_refused),
		cmocka_unit_test(notify_wakes_only_a_sleeping_consumer_and_only_for_new_data),
		cmocka_unit_test(wait_returns_at_once_when_data_is_there_and_times_out_when_not),
		cmocka_unit_test(heartbeats_are_visible_to_the_other_side),
		cmocka_unit_test(has_room_never_promises_room_that_is_not_there),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
