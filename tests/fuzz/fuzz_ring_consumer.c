/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the consumer decoding arbitrary ring bytes.
 *
 * The processor treats every byte the collector shares as untrusted: record
 * headers, lengths, types, loss markers and the producer position itself.
 * This target builds a ring with a valid header (so ring_consumer_init_mem
 * accepts it) and everything else from the input, then drives ring_next()
 * and checks, with abort(), that every record it returns lies inside the
 * data region, has a known type, and that the consumer's position and
 * counters stay consistent. The ring is allocated with exactly
 * RING_PAGE_SIZE + data_size bytes so ASan sees any read past its end.
 *
 * Input layout (short inputs read as zeros):
 *   [0]      order selector: RING_MIN_ORDER + 0..2
 *   [1]      flags, see FL_*
 *   [2]      producer_pos mode (bits 0-1), consumer_pos mode (bits 2-3),
 *            mid-loop producer_pos mode (bits 4-5), header corruption
 *            selector (bits 4-7, the same byte read another way)
 *   [3..4]   loop iteration at which the producer position changes
 *   [5..12]  producer_pos raw      [13..20] consumer_pos raw
 *   [21..28] mid-loop producer_pos raw
 *   [29..36] known user types mask [37..44] header corruption value
 *   [45..]   data region bytes (repeated or zero-filled)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FL_REPEAT 0x01u     /* repeat the data bytes instead of zero-filling */
#define FL_MUTATE 0x02u     /* change producer_pos midway */
#define FL_REFILL 0x04u     /* ... and overwrite the data region as well */
#define FL_RESTART 0x08u    /* release and re-attach the consumer midway */
#define FL_BAD_HEADER 0x10u /* first check a corrupted header is refused */
#define FL_HUGE_POS 0x20u   /* place positions near 2^64 */

#define PREFIX_LEN 45u

struct input {
	const uint8_t *p;
	size_t n;
};

static uint64_t get_u64(const struct input *in, size_t at, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		if (at + i < in->n)
			v |= (uint64_t)in->p[at + i] << (8 * i);
	return v;
}

static uint64_t align_down(uint64_t v)
{
	return v & ~(uint64_t)(RING_ALIGN - 1);
}

/* Producer position: arbitrary, or small, or near 2^64, aligned or not. */
static uint64_t pick_prod(unsigned mode, uint64_t raw, uint64_t size, bool huge)
{
	uint64_t base = huge ? UINT64_MAX - 4 * size : 0;

	switch (mode & 3) {
	case 0:
		return raw;
	case 1:
		return base + align_down(raw % (4 * size));
	case 2:
		return base + raw % (4 * size);
	default:
		return align_down(raw);
	}
}

/* Consumer position relative to prod: arbitrary, valid, near-valid, ahead. */
static uint64_t pick_cons(unsigned mode, uint64_t raw, uint64_t prod, uint64_t size)
{
	switch (mode & 3) {
	case 0:
		return raw;
	case 1:
		return prod - align_down(raw % (size + 1));
	case 2:
		return prod - raw % (size + 64);
	default:
		return prod + raw % 64;
	}
}

/* A new producer position relative to where the consumer is. */
static uint64_t pick_mid(unsigned mode, uint64_t raw, uint64_t cpos, uint64_t size)
{
	switch (mode & 3) {
	case 0:
		return raw;
	case 1:
		return cpos + align_down(raw % (size + 1));
	case 2:
		return cpos + raw % (2 * size) - size;
	default:
		return align_down(cpos) + align_down(raw % (size + 1));
	}
}

static void fill_data(unsigned char *dst, uint64_t len, const struct input *in, size_t from,
		      bool repeat)
{
	size_t avail = from < in->n ? in->n - from : 0;

	memset(dst, 0, len);
	if (!avail)
		return;
	for (uint64_t off = 0; off < len; off += avail) {
		uint64_t chunk = len - off < avail ? len - off : avail;

		memcpy(dst + off, in->p + from, chunk);
		if (!repeat)
			break;
	}
}

/* An invariant; on violation name it (the line says which) and abort for libFuzzer. */
#define check(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
			abort();                                                         \
		}                                                                        \
	} while (0)

/*
 * A corrupted header, a short or oversized mapping length, or NULL arguments
 * must be refused without reading past what was passed.
 */
static void check_bad_header(unsigned char *mem, uint64_t size, struct ring_cons_page *cp,
			     unsigned sel, uint64_t val)
{
	struct ring_prod_page *h = (struct ring_prod_page *)mem;
	struct ring_prod_page saved = *h;
	size_t ring_len = RING_PAGE_SIZE + size;
	const void *ring = mem;
	struct ring_cons_page *cons = cp;
	unsigned char *small = NULL;
	struct ring_consumer c;
	int rc;

	switch (sel % 12) {
	case 0:
		h->magic ^= val | 1;
		break;
	case 1:
		h->version = (uint32_t)val == RING_VERSION ? ~RING_VERSION : (uint32_t)val;
		break;
	case 2:
		h->page_size = (uint32_t)val == RING_PAGE_SIZE ? 0 : (uint32_t)val;
		break;
	case 3:
		h->max_types = (uint32_t)val == RING_MAX_TYPES ? 0 : (uint32_t)val;
		break;
	case 4:
		h->data_size = val == size ? size + 8 : val;
		break;
	case 5:
		h->data_size = size * 2;
		break;
	case 6:
		h->data_size = size / 2;
		break;
	case 7:
		ring_len -= 1 + val % size;
		break;
	case 8:
		ring_len += 1 + val % size; /* claims more than the header says: refused */
		break;
	case 9:
		/* Shorter than a header page: must be refused before the header is read. */
		ring_len = (size_t)(val % (RING_PAGE_SIZE / RING_CACHELINE)) * RING_CACHELINE;
		small = aligned_alloc(RING_CACHELINE, ring_len ? ring_len : RING_CACHELINE);
		check(small != NULL);
		memcpy(small, mem, ring_len);
		ring = small;
		break;
	case 10:
		ring = NULL;
		break;
	default:
		cons = NULL;
		break;
	}
	rc = ring_consumer_init_mem(&c, ring, ring_len, cons, val);
	check(rc == -EPROTO || rc == -EINVAL);
	check(c.hdr == NULL && c.data == NULL);
	free(small);
	*h = saved;
}

struct tally {
	uint64_t lost[RING_MAX_TYPES];
	uint64_t lost_total;
	uint64_t records;
	uint64_t resets;
	uint64_t discarded;
};

/* Every returned record, and the consumer state after each call. */
static void check_next(const struct ring_consumer *c, int rc, const struct ring_view *v,
		       uint64_t pos_before, uint64_t prod, uint64_t known, const unsigned char *dr,
		       uint64_t size, struct tally *t)
{
	check(c->pos <= c->prod_seen && c->prod_seen - c->pos <= size);
	check(c->records == t->records + (rc == 1 && v->type != RING_REC_LOST));
	if (rc == -EBADMSG) {
		check(c->resets == t->resets + 1);
		check(c->pos == c->prod_seen);
	} else {
		check(c->resets == t->resets);
	}
	/* A reset discards at most what it skipped; nothing else discards. */
	if (rc == -EBADMSG)
		check(c->bytes_discarded - t->discarded <= (c->pos > pos_before ? c->pos - pos_before : 0));
	else
		check(c->bytes_discarded == t->discarded);
	t->discarded = c->bytes_discarded;
	t->resets = c->resets;
	t->records = c->records;
	if (rc == 0) {
		/*
		 * Empty: caught up with the position just loaded (padding may have
		 * been skipped), or that position is impossible and was already
		 * counted as a reset when first seen.
		 */
		check(c->pos == c->prod_seen && c->pos >= pos_before);
		check(c->prod_seen == prod || prod < c->pos || prod - c->pos > size ||
		      prod % RING_ALIGN != 0);
		check(c->pos == pos_before || (c->pos & (size - 1)) == 0); /* padding ends the region */
		return;
	}
	if (rc != 1) {
		check(rc == -EBADMSG);
		return;
	}
	uint64_t rsize = ring_rec_size(v->len);
	uintptr_t lo = (uintptr_t)dr, hi = lo + size, pl = (uintptr_t)v->payload;

	check(v->type == RING_REC_LOST ||
	      (v->type >= RING_REC_FIRST_USER && v->type < RING_MAX_TYPES && (known >> v->type & 1)));
	check(pl >= lo + sizeof(struct ring_rec_hdr) && pl <= hi && v->len <= hi - pl);
	check(pl - lo == (v->pos & (size - 1)) + sizeof(struct ring_rec_hdr));
	check(v->pos % RING_ALIGN == 0); /* records start 8-aligned */
	check(v->pos >= pos_before && v->pos + rsize == c->pos);
	/* Only padding is skipped, and padding always runs to the end of the data region. */
	check(v->pos == pos_before || (v->pos & (size - 1)) == 0);
	if (v->type != RING_REC_LOST)
		return;
	struct ring_lost m;

	check(v->len == sizeof(m));
	memcpy(&m, v->payload, sizeof(m));
	check(memcmp(&m, &v->lost, sizeof(m)) == 0);
	check(m.type >= RING_REC_FIRST_USER && m.type < RING_MAX_TYPES && m.zero == 0);
	check(m.count >= 1 && m.count <= m.total && m.since_pos <= v->pos);
	t->lost[m.type] += m.count;
	t->lost_total += m.count;
	check(c->lost[m.type] == t->lost[m.type] && c->lost_total == t->lost_total);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct input in = { data, size };
	const unsigned order = RING_MIN_ORDER + (unsigned)(get_u64(&in, 0, 1) % 3);
	const unsigned flags = (unsigned)get_u64(&in, 1, 1);
	const unsigned modes = (unsigned)get_u64(&in, 2, 1);
	const uint64_t dsize = 1ULL << order;
	const uint64_t known = get_u64(&in, 29, 8);
	const uint64_t max_iter = dsize / 8 + 16;
	const uint64_t mut_iter = get_u64(&in, 3, 2) % max_iter;
	const size_t ring_len = RING_PAGE_SIZE + dsize;
	unsigned char *mem = aligned_alloc(RING_CACHELINE, ring_len);
	struct ring_cons_page *cp = aligned_alloc(RING_CACHELINE, sizeof(*cp));
	struct ring_prod_page *h = (struct ring_prod_page *)mem;
	unsigned char *dr = mem + RING_PAGE_SIZE;
	struct tally t = { 0 };
	struct ring_consumer c;
	struct ring_view v;
	uint64_t prod;

	check(mem != NULL && cp != NULL);
	memset(h, 0, sizeof(*h));
	memset(cp, 0, sizeof(*cp));
	h->magic = RING_MAGIC;
	h->version = RING_VERSION;
	h->page_size = RING_PAGE_SIZE;
	h->data_size = dsize;
	h->max_types = RING_MAX_TYPES;
	h->generation = get_u64(&in, 37, 8);
	prod = pick_prod(modes, get_u64(&in, 5, 8), dsize, flags & FL_HUGE_POS);
	h->producer_pos = prod;
	cp->consumer_pos = pick_cons(modes >> 2, get_u64(&in, 13, 8), prod, dsize);
	fill_data(dr, dsize, &in, PREFIX_LEN, flags & FL_REPEAT);

	if (flags & FL_BAD_HEADER)
		check_bad_header(mem, dsize, cp, modes >> 4, get_u64(&in, 37, 8));

	check(ring_consumer_init_mem(&c, mem, ring_len, cp, known) == 0);
	check(c.size == dsize && c.pos == c.prod_seen && c.generation == h->generation);
	check(c.pos <= prod && prod - c.pos <= dsize);
	check(cp->consumer_pos == c.pos);
	t.resets = c.resets; /* init counts a refused consumer position as a reset */
	t.discarded = c.bytes_discarded;

	for (uint64_t i = 0; i < max_iter; i++) {
		uint64_t before = c.pos;
		int rc;

		if ((flags & FL_MUTATE) && i == mut_iter) {
			prod = pick_mid(modes >> 4, get_u64(&in, 21, 8), c.pos, dsize);
			h->producer_pos = prod;
			if (flags & FL_REFILL) /* the producer wrote over the ring meanwhile */
				fill_data(dr, dsize, &in, PREFIX_LEN + (size_t)(get_u64(&in, 21, 1) % 64),
					  true);
		}
		if ((flags & FL_RESTART) && i == mut_iter / 2) {
			ring_release(&c);
			check(cp->consumer_pos == c.pos);
			check(ring_consumer_init_mem(&c, mem, ring_len, cp, known) == 0);
			check(c.pos <= prod && prod - c.pos <= dsize);
			memset(&t, 0, sizeof(t));
			t.resets = c.resets;
			t.discarded = c.bytes_discarded;
			before = c.pos;
		}
		memset(&v, 0, sizeof(v));
		rc = ring_next(&c, &v);
		check_next(&c, rc, &v, before, prod, known, dr, dsize, &t);
		if (rc == 0 && (!(flags & FL_MUTATE) || i > mut_iter))
			break;
	}
	check(ring_consumer_producer_pos(&c) == prod);
	ring_release(&c);
	check(cp->consumer_pos == c.pos);

	free(cp);
	free(mem);
	return 0;
}
