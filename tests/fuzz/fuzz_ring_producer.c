/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the producer facing an arbitrary consumer page.
 *
 * The collector's only input from the processor is the consumer page
 * (consumer_pos, sleeping). This target runs a script of producer
 * operations taken from the input, with the consumer page rewritten between
 * them to arbitrary, hostile or well-behaved values, and checks with abort():
 *   - the producer position only grows, is published, and never gets more
 *     than the ring size ahead of the consumer position it validated, which
 *     must be one the consumer page really held;
 *   - reservations lie inside the data region, at the producer position;
 *   - every write is either committed (records + 1) or dropped and counted
 *     once, in the right counter (EINVAL for a bad type counts nothing);
 *   - the header mirrors of every counter match the producer's own;
 *   - a trusted shadow consumer (its own consumer page, reading after every
 *     operation) decodes the ring without a single -EBADMSG, finds every
 *     committed record intact in order, and loss markers that add up to the
 *     drop counters;
 *   - at the end, a consumer attached over the real consumer page, resumed
 *     from a record boundary the producer published, decodes the rest.
 *
 * Input: [0] order selector (RING_MIN_ORDER + 0..1), then operations, each
 * an opcode byte and its arguments (short inputs read as zeros).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 2000u
#define MAX_RECS (2 * MAX_OPS) /* an operation commits at most two records */
#define USER_TYPES (RING_MAX_TYPES - RING_REC_FIRST_USER)
#define DEEP_CHECK_EVERY 256u

/* An invariant; on violation name it (the line says which) and abort for libFuzzer. */
#define check(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
			abort();                                                         \
		}                                                                        \
	} while (0)

struct reader {
	const uint8_t *p;
	size_t n, at;
};

static uint64_t get(struct reader *r, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++, r->at++)
		if (r->at < r->n)
			v |= (uint64_t)r->p[r->at] << (8 * i);
	return v;
}

/* A committed user record, as the shadow consumer must find it. */
struct rec {
	uint64_t pos;
	uint32_t len;
	uint32_t seq;
	unsigned type;
};

/* Counters a failed or refused write may or may not change. */
struct counters {
	uint64_t pos, drops[RING_MAX_TYPES], drops_total, oversize, records, lost_markers;
};

struct harness {
	struct ring_producer p;
	unsigned char *mem;          /* header page + data region, exactly */
	struct ring_cons_page *cp;   /* the consumer page the producer reads */
	struct ring_cons_page *scp;  /* the shadow consumer's own page */
	struct ring_cons_page *dcp;  /* for the periodic deep checks */
	struct ring_consumer sc;     /* trusted shadow consumer */
	size_t ring_len;
	uint64_t size;
	struct rec recs[MAX_RECS];   /* every committed user record, by position */
	size_t nrecs, next_rec;      /* next_rec: the next one the shadow expects */
	uint64_t ends[MAX_OPS];      /* producer position after each operation: boundaries */
	size_t nends;
	size_t ncons_set;            /* values written to consumer_pos */
	uint64_t marker_total[RING_MAX_TYPES]; /* total of the last marker seen per type */
	uint64_t marker_pos[RING_MAX_TYPES];   /* position of the last marker seen, + 1 */
	uint64_t exact_mask;         /* types whose every marker the shadow saw */
	uint64_t markers_seen;
	bool resynced;               /* the shadow had to skip overwritten records */
	uint32_t seq;
	unsigned char scratch[1u << 14]; /* payload source, larger than any accepted record */
};

static unsigned char pattern(uint32_t seq, uint64_t i)
{
	return (unsigned char)(seq * 157u + i * 7u + (i >> 8));
}

static void fill_pattern(unsigned char *dst, uint32_t len, uint32_t seq)
{
	for (uint32_t i = 0; i < len; i++)
		dst[i] = pattern(seq, i);
}

/* Mostly valid user types; sometimes ring types, type 0 or out of range. */
static unsigned pick_type(uint8_t b)
{
	static const unsigned bad[] = { 0, RING_REC_PAD, RING_REC_LOST, RING_REC_FIRST_USER - 1,
					RING_MAX_TYPES, 0xffff, 0x10000 + RING_REC_FIRST_USER,
					~0u };

	if (b < 0xe0)
		return RING_REC_FIRST_USER + b % USER_TYPES;
	return bad[b % 8];
}

static bool type_ok(unsigned t)
{
	return t >= RING_REC_FIRST_USER && t < RING_MAX_TYPES;
}

/* Mostly small lengths; sometimes around the maximum, sometimes huge. */
static uint32_t pick_len(struct reader *r, uint32_t max)
{
	uint8_t mode = (uint8_t)get(r, 1);
	uint32_t v = (uint32_t)get(r, 2);

	switch (mode % 8) {
	case 4:
		return v % (max + 1);
	case 5:
		return mode & 0x80 ? max - v % 16 : max + v % 16;
	case 6:
		return (uint32_t)(v | get(r, 2) << 16);
	case 7:
		return UINT32_MAX - v % 16;
	default:
		return v % 64;
	}
}

static void snap(const struct ring_producer *p, struct counters *s)
{
	s->pos = p->pos;
	memcpy(s->drops, p->drops, sizeof(s->drops));
	s->drops_total = p->drops_total;
	s->oversize = p->oversize;
	s->records = p->records;
	s->lost_markers = p->lost_markers;
}

static void check_nothing_counted(const struct ring_producer *p, const struct counters *s)
{
	check(p->drops_total == s->drops_total && p->oversize == s->oversize);
	check(memcmp(p->drops, s->drops, sizeof(s->drops)) == 0);
	check(p->records == s->records);
}

/* A refused record: counted once, as a drop of its type, or not at all for EINVAL. */
static void check_refused(const struct ring_producer *p, const struct counters *s, int err,
			  unsigned type, uint32_t len)
{
	check(p->records == s->records);
	if (!type_ok(type)) {
		check(err == EINVAL);
		check_nothing_counted(p, s);
		check(p->pos == s->pos);
		return;
	}
	check(err == (len > ring_max_payload(p) ? EMSGSIZE : ENOSPC));
	check(p->drops_total == s->drops_total + 1 && p->drops[type] == s->drops[type] + 1);
	for (unsigned t = 0; t < RING_MAX_TYPES; t++)
		check(t == type || p->drops[t] == s->drops[t]);
	check(p->oversize == s->oversize + (err == EMSGSIZE));
	if (err == EMSGSIZE) /* refused before anything was written */
		check(p->pos == s->pos && p->lost_markers == s->lost_markers);
	check(p->pending_mask >> type & 1);
}

static void record_committed(struct harness *h, unsigned type, uint32_t len, uint32_t seq)
{
	struct rec *r = &h->recs[h->nrecs++];

	check(h->nrecs <= MAX_RECS);
	r->pos = h->p.pos - ring_rec_size(len);
	r->len = len;
	r->seq = seq;
	r->type = type;
	check(h->nrecs == 1 || r->pos >= h->recs[h->nrecs - 2].pos + ring_rec_size(h->recs[h->nrecs - 2].len));
}

static void check_user_record(const struct rec *r, const struct ring_view *v)
{
	const unsigned char *pl = v->payload;

	check(v->pos == r->pos && v->type == r->type && v->len == r->len);
	for (uint32_t i = 0; i < r->len; i++)
		check(pl[i] == pattern(r->seq, i));
}

static void check_marker(struct harness *h, const struct ring_view *v)
{
	const struct ring_lost *m = &v->lost;
	uint64_t bit = 1ULL << m->type;

	check(type_ok(m->type) && m->zero == 0 && m->count >= 1 && m->count <= m->total);
	check(m->since_pos <= v->pos && m->total <= h->p.drops[m->type]);
	/* The drops it reports happened after the previous marker of its type. */
	check(m->since_pos >= h->marker_pos[m->type]);
	if (h->exact_mask & bit)
		check(m->total == h->marker_total[m->type] + m->count);
	h->exact_mask |= bit;
	h->marker_total[m->type] = m->total;
	h->marker_pos[m->type] = v->pos + 1;
	h->markers_seen++;
}

/*
 * Restart the shadow at the first known record boundary at or after from:
 * used when the producer legitimately overwrote what the shadow had not read
 * (the consumer page claimed it consumed it), and for the deep checks.
 */
static uint64_t boundary_at_or_after(const struct harness *h, uint64_t from)
{
	uint64_t best = h->p.pos;

	for (size_t i = h->nrecs; i-- > 0 && h->recs[i].pos >= from;)
		best = h->recs[i].pos < best ? h->recs[i].pos : best;
	for (size_t i = h->nends; i-- > 0 && h->ends[i] >= from;)
		best = h->ends[i] < best ? h->ends[i] : best;
	return best;
}

static size_t first_rec_at_or_after(const struct harness *h, uint64_t pos)
{
	size_t i = h->nrecs;

	while (i > 0 && h->recs[i - 1].pos >= pos)
		i--;
	return i;
}

/*
 * Decode [from, producer position) with a consumer over cons_page and check
 * it finds exactly the committed user records from there, no corruption.
 */
static void decode_from(struct harness *h, struct ring_cons_page *cons_page, uint64_t from)
{
	struct ring_consumer c;
	struct ring_view v;
	size_t next = first_rec_at_or_after(h, from);
	int rc;

	check(h->p.pos - from <= h->size && from % RING_ALIGN == 0);
	__atomic_store_n(&cons_page->consumer_pos, from, __ATOMIC_RELEASE);
	check(ring_consumer_init_mem(&c, h->mem, h->ring_len, cons_page, ~0ULL) == 0);
	check(c.pos == from && c.resets == 0);
	while ((rc = ring_next(&c, &v)) == 1) {
		if (v.type == RING_REC_LOST)
			continue;
		check(next < h->nrecs);
		check_user_record(&h->recs[next++], &v);
	}
	check(rc == 0 && c.resets == 0 && c.pos == h->p.pos && next == h->nrecs);
	ring_release(&c);
}

/* The shadow reads everything committed by the last operation. */
static void shadow_drain(struct harness *h)
{
	struct ring_view v;
	int rc;

	if (h->p.pos - h->sc.pos > h->size) {
		/* The producer overwrote records the shadow had not read: a consumer page
		 * claiming them consumed allows that. Resume at the oldest intact boundary. */
		uint64_t b = boundary_at_or_after(h, h->p.pos - h->size);

		__atomic_store_n(&h->scp->consumer_pos, b, __ATOMIC_RELEASE);
		check(ring_consumer_init_mem(&h->sc, h->mem, h->ring_len, h->scp, ~0ULL) == 0);
		check(h->sc.pos == b);
		h->next_rec = first_rec_at_or_after(h, b);
		h->exact_mask = 0;
		h->resynced = true;
	}
	while ((rc = ring_next(&h->sc, &v)) == 1) {
		if (v.type == RING_REC_LOST) {
			check_marker(h, &v);
			continue;
		}
		check(h->next_rec < h->nrecs);
		check_user_record(&h->recs[h->next_rec++], &v);
	}
	check(rc == 0); /* never -EBADMSG: the producer writes only well-formed records */
	check(h->sc.pos == h->p.pos && h->next_rec == h->nrecs && h->sc.resets == 0);
	ring_release(&h->sc);
}

/* Invariants after every operation. */
static void check_state(struct harness *h, const struct counters *before, uint64_t cons_seen_before)
{
	const struct ring_producer *p = &h->p;
	const struct ring_prod_page *hdr = p->hdr;
	uint64_t sum = 0;

	check(p->pos >= before->pos && p->pos % RING_ALIGN == 0);
	check(__atomic_load_n(&hdr->producer_pos, __ATOMIC_ACQUIRE) == p->pos); /* all published */
	check(p->reserved_end == 0);
	check(p->cons_seen <= p->pos && p->pos - p->cons_seen <= h->size);
	if (p->cons_seen != cons_seen_before) /* taken from the page, just now */
		check(p->cons_seen == h->cp->consumer_pos);
	for (unsigned t = 0; t < RING_MAX_TYPES; t++) {
		check(hdr->drops[t] == p->drops[t]);
		check(type_ok(t) || (p->drops[t] == 0 && !(p->pending_mask >> t & 1)));
		if ((p->pending_mask >> t & 1))
			check(p->pending_count[t] >= 1 && p->pending_since[t] <= p->pos);
		sum += p->drops[t];
	}
	check(sum == p->drops_total && hdr->drops_total == p->drops_total);
	check(hdr->bad_consumer_pos == p->bad_consumer_pos && hdr->oversize == p->oversize);
	check(hdr->lost_markers == p->lost_markers && hdr->wakeups == p->wakeups);
	check(p->records == h->nrecs);
	check(p->lost_markers >= before->lost_markers);
	shadow_drain(h);
	/* Markers seen plus drops still pending account for every drop. */
	for (unsigned t = RING_REC_FIRST_USER; t < RING_MAX_TYPES; t++) {
		uint64_t pending = (p->pending_mask >> t & 1) ? p->pending_count[t] : 0;

		if (h->exact_mask >> t & 1)
			check(h->marker_total[t] + pending == p->drops[t]);
	}
	if (!h->resynced)
		check(h->markers_seen == p->lost_markers);
	h->ends[h->nends++] = p->pos;
}

static void set_consumer_pos(struct harness *h, uint64_t v)
{
	__atomic_store_n(&h->cp->consumer_pos, v, __ATOMIC_RELEASE);
	h->ncons_set++;
}

/* (a) consumer_pos: arbitrary, or relative to the producer, or a real boundary. */
static void op_consumer_pos(struct harness *h, struct reader *r)
{
	uint8_t kind = (uint8_t)get(r, 1);
	uint64_t k = get(r, 2), pos = h->p.pos, size = h->size;

	switch (kind % 10) {
	case 0:
		set_consumer_pos(h, k | get(r, 6) << 16);
		break;
	case 1:
		set_consumer_pos(h, pos - k * RING_ALIGN); /* behind, valid up to size */
		break;
	case 2:
		set_consumer_pos(h, pos + k); /* ahead */
		break;
	case 3:
		set_consumer_pos(h, pos - size - k); /* too far behind unless k == 0 */
		break;
	case 4:
		set_consumer_pos(h, pos - size + k);
		break;
	case 5:
		set_consumer_pos(h, pos - k); /* unaligned */
		break;
	case 6: /* a record boundary the producer published: a well-behaved consumer */
		set_consumer_pos(h, h->nrecs ? h->recs[h->nrecs - 1 - k % h->nrecs].pos : 0);
		break;
	case 7:
		set_consumer_pos(h, h->nends ? h->ends[h->nends - 1 - k % h->nends] : 0);
		break;
	case 8:
		set_consumer_pos(h, pos); /* drained */
		break;
	default:
		set_consumer_pos(h, h->p.cons_seen + k * RING_ALIGN); /* moving forward */
		break;
	}
}

/*
 * (c) ring_write. A ring drained by a valid consumer position with no loss
 * marker pending must take any record up to ring_max_payload().
 */
static void op_write(struct harness *h, struct reader *r)
{
	struct ring_producer *p = &h->p;
	unsigned type = pick_type((uint8_t)get(r, 1));
	uint32_t len = pick_len(r, ring_max_payload(p));
	bool drained = h->cp->consumer_pos == p->pos && !p->pending_mask;
	uint32_t seq = ++h->seq;
	struct counters s;
	int rc;

	if (len <= sizeof(h->scratch))
		fill_pattern(h->scratch, len, seq);
	snap(p, &s);
	rc = ring_write(p, type, h->scratch, len);
	if (rc == 0) {
		check(type_ok(type) && len <= ring_max_payload(p));
		check(p->records == s.records + 1 && p->pos > s.pos);
		check(p->drops_total == s.drops_total && p->pending_mask == 0);
		record_committed(h, type, len, seq);
		return;
	}
	check_refused(p, &s, -rc, type, len);
	check(!(drained && type_ok(type) && len <= ring_max_payload(p)));
}

/* (d) ring_reserve + write in place + ring_commit; sometimes a second reserve first. */
static void op_reserve(struct harness *h, struct reader *r)
{
	struct ring_producer *p = &h->p;
	uint8_t flags = (uint8_t)get(r, 1);
	unsigned type = pick_type((uint8_t)get(r, 1));
	uint32_t len = pick_len(r, ring_max_payload(p));
	uint32_t seq = ++h->seq;
	uintptr_t lo = (uintptr_t)p->data, hi = lo + h->size, at;
	struct counters s;
	unsigned char *dst;
	uint64_t end;

	snap(p, &s);
	errno = 0;
	dst = ring_reserve(p, type, len);
	if (!dst) {
		check_refused(p, &s, errno, type, len);
		check(p->reserved_end == 0);
		snap(p, &s);
		ring_commit(p); /* nothing reserved: a no-op */
		check(p->pos == s.pos && p->records == s.records);
		return;
	}
	at = (uintptr_t)dst;
	check(type_ok(type) && len <= ring_max_payload(p));
	check(at >= lo + sizeof(struct ring_rec_hdr) && at <= hi && len <= hi - at);
	check(at - lo - sizeof(struct ring_rec_hdr) == (p->pos & p->mask));
	check(p->reserved_end == p->pos + ring_rec_size(len));
	check(__atomic_load_n(&p->hdr->producer_pos, __ATOMIC_ACQUIRE) <= p->pos);
	end = p->reserved_end;
	if (flags & 1) { /* one reservation at a time: refused, counted nowhere */
		struct counters s2;

		snap(p, &s2);
		errno = 0;
		check(ring_reserve(p, RING_REC_FIRST_USER, 8) == NULL && errno == EINVAL);
		check_nothing_counted(p, &s2);
		check(p->reserved_end == end && p->pos == s2.pos);
	}
	fill_pattern(dst, len, seq);
	ring_commit(p);
	check(p->pos == end && p->reserved_end == 0 && p->records == s.records + 1);
	record_committed(h, type, len, seq);
}

/* (e) ring_notify: wakes only a sleeping consumer, once per new data. */
static void op_notify(struct harness *h)
{
	struct ring_producer *p = &h->p;
	uint64_t wakeups = p->wakeups, last = p->last_wake_pos;
	uint32_t seq = p->hdr->wake_seq;
	bool expect = p->pos != last && h->cp->sleeping != 0;

	ring_notify(p);
	check(p->wakeups == wakeups + expect && p->hdr->wake_seq == seq + expect);
	check(p->last_wake_pos == (expect ? p->pos : last));
}

/*
 * (f) ring_has_room: counts nothing; when it says yes, the write succeeds.
 * On a drained ring it must say yes to any length ring_max_payload()
 * allows: a producer that waits for room would otherwise wait forever.
 */
static void op_has_room(struct harness *h, struct reader *r)
{
	struct ring_producer *p = &h->p;
	uint8_t flags = (uint8_t)get(r, 1);
	uint32_t len = pick_len(r, ring_max_payload(p));
	bool drained = h->cp->consumer_pos == p->pos;
	struct counters s;
	bool room;

	snap(p, &s);
	room = ring_has_room(p, len);
	check_nothing_counted(p, &s);
	check(p->pos == s.pos && p->lost_markers == s.lost_markers);
	check(!room || len <= ring_max_payload(p));
	check(room || !drained || len > ring_max_payload(p));
	if (room && (flags & 1)) {
		unsigned type = RING_REC_FIRST_USER + flags / 2 % USER_TYPES;
		uint32_t seq = ++h->seq;

		fill_pattern(h->scratch, len, seq);
		check(ring_write(p, type, h->scratch, len) == 0);
		record_committed(h, type, len, seq);
	}
}

static void run_script(struct harness *h, struct reader *r)
{
	for (unsigned ops = 0; ops < MAX_OPS && r->at < r->n; ops++) {
		struct counters before;
		uint64_t cons_seen = h->p.cons_seen;
		uint8_t op = (uint8_t)get(r, 1);

		snap(&h->p, &before);
		switch (op % 8) {
		case 0:
			op_consumer_pos(h, r);
			break;
		case 1:
			__atomic_store_n(&h->cp->sleeping, (uint32_t)get(r, 4), __ATOMIC_RELAXED);
			break;
		case 2:
		case 3:
			op_write(h, r);
			break;
		case 4:
			op_reserve(h, r);
			break;
		case 5:
			op_notify(h);
			break;
		case 6:
			op_has_room(h, r);
			break;
		default: {
			uint64_t hb = get(r, 8);

			ring_producer_heartbeat(&h->p, hb);
			check(h->p.hdr->heartbeat_ns == hb);
			check(ring_producer_peer_heartbeat(&h->p) == h->cp->heartbeat_ns);
			break;
		}
		}
		check_state(h, &before, cons_seen);
		if (ops % DEEP_CHECK_EVERY == DEEP_CHECK_EVERY - 1) /* what the producer protects */
			decode_from(h, h->dcp, boundary_at_or_after(h, h->p.cons_seen));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = { data, size, 0 };
	const unsigned order = RING_MIN_ORDER + (unsigned)(get(&r, 1) & 1);
	struct harness *h = calloc(1, sizeof(*h));
	uint64_t from;

	check(h != NULL);
	h->size = 1ULL << order;
	h->ring_len = RING_PAGE_SIZE + h->size;
	h->mem = aligned_alloc(RING_CACHELINE, h->ring_len);
	h->cp = aligned_alloc(RING_CACHELINE, sizeof(*h->cp));
	h->scp = aligned_alloc(RING_CACHELINE, sizeof(*h->scp));
	h->dcp = aligned_alloc(RING_CACHELINE, sizeof(*h->dcp));
	check(h->mem != NULL && h->cp != NULL && h->scp != NULL && h->dcp != NULL);
	memset(h->mem, 0, h->ring_len);
	memset(h->cp, 0, sizeof(*h->cp));
	memset(h->scp, 0, sizeof(*h->scp));
	memset(h->dcp, 0, sizeof(*h->dcp));
	h->exact_mask = ~0ULL; /* no marker missed yet: every total is known (zero) */
	check(ring_producer_init_mem(&h->p, h->mem, order, h->cp, 1) == 0);
	check(ring_consumer_init_mem(&h->sc, h->mem, h->ring_len, h->scp, ~0ULL) == 0);
	check(ring_max_payload(&h->p) > 0 && ring_max_payload(&h->p) <= h->size / 2 - sizeof(struct ring_rec_hdr));

	run_script(h, &r);

	/*
	 * The real consumer page, set to a published record boundary the producer
	 * has not overwritten (the consumer's last one if it was such a boundary),
	 * must resume cleanly and decode every record after it.
	 */
	from = boundary_at_or_after(h, h->p.pos > h->size ? h->p.pos - h->size : 0);
	if (h->ncons_set && h->cp->consumer_pos >= from && h->cp->consumer_pos <= h->p.pos &&
	    boundary_at_or_after(h, h->cp->consumer_pos) == h->cp->consumer_pos)
		from = h->cp->consumer_pos;
	decode_from(h, h->cp, from);

	free(h->dcp);
	free(h->scp);
	free(h->cp);
	free(h->mem);
	free(h);
	return 0;
}
