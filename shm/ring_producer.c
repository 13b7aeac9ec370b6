/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shared-memory ring: the producer side (tracer-collector). The
 * consumer side is ring_consumer.c; the processor links that, the
 * collector links this.
 *
 * Memory ordering, in one place for both sides (each load/store names its pair):
 *  P1  producer: record bytes, then store-release hdr->producer_pos
 *  C1  consumer: load-acquire hdr->producer_pos, then read record bytes  (pairs with P1)
 *  C2  consumer: read record bytes, then store-release cpage->consumer_pos
 *  P2  producer: load-acquire cpage->consumer_pos, then overwrite bytes  (pairs with C2)
 *  Wakeup (a Dekker pair, both sides need a full fence):
 *  C3  consumer: store sleeping = 1; fence; load producer_pos; futex_wait(wake_seq)
 *  P3  producer: store producer_pos (P1); fence; load sleeping; bump wake_seq; futex_wake
 *  Either the consumer sees the new producer_pos and does not sleep, or the
 *  producer sees sleeping and wakes it; futex_wait re-checks wake_seq so a
 *  wake between C3's load and the wait is not missed.
 *
 * What the producer reads from the consumer's page: consumer_pos (only in
 * producer_free(), validated there, never used to index memory) and
 * sleeping (only in ring_notify(), only tested against 0).
 */
#include "ring_producer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void producer_init_header(struct ring_producer *p, unsigned order, uint64_t generation)
{
	struct ring_prod_page *h = p->hdr;

	p->size = 1ULL << order;
	p->mask = p->size - 1;
	h->magic = RING_MAGIC;
	h->version = RING_VERSION;
	h->page_size = RING_PAGE_SIZE;
	h->data_size = p->size;
	h->generation = generation;
	h->producer_pid = (uint32_t)getpid();
	h->max_types = RING_MAX_TYPES;
	h->created_ns = realtime_ns();
	h->heartbeat_ns = ring_now_ns();
}

int ring_producer_init_mem(struct ring_producer *p, void *ring_mem, unsigned order,
			   const struct ring_cons_page *cons_page, uint64_t generation)
{
	if (order < RING_MIN_ORDER || order > RING_MAX_ORDER || !ring_mem || !cons_page)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->hdr = ring_mem;
	p->data = (unsigned char *)ring_mem + RING_PAGE_SIZE;
	p->cons = cons_page;
	p->ring_fd = -1;
	p->cons_fd = -1;
	producer_init_header(p, order, generation);
	return 0;
}

static int memfd_new(const char *name, size_t len, void **map)
{
	int fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL) /* kernels before 6.3 do not know MFD_NOEXEC_SEAL */
		fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0)
		goto fail;
	/* MAP_POPULATE: allocate every page now, so no later fault can fail. */
	*map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (*map == MAP_FAILED)
		goto fail;
	return fd;
fail:;
	int err = -errno;

	close(fd);
	return err;
}

int ring_producer_create(struct ring_producer *p, unsigned order, uint64_t generation)
{
	void *ring_map = NULL, *cons_map = NULL;
	size_t ring_len;
	int ring_fd, cons_fd, err;

	if (order < RING_MIN_ORDER || order > RING_MAX_ORDER)
		return -EINVAL;
	ring_len = RING_PAGE_SIZE + ((size_t)1 << order);
	ring_fd = memfd_new("tracer-ring", ring_len, &ring_map);
	if (ring_fd < 0)
		return ring_fd;
	cons_fd = memfd_new("tracer-ring-consumer", RING_PAGE_SIZE, &cons_map);
	if (cons_fd < 0) {
		err = cons_fd;
		goto fail_ring;
	}
	/*
	 * Trust boundary: after these seals the consumer can neither change the
	 * size of either file (no SIGBUS in the producer) nor obtain a writable
	 * mapping of the ring (FUTURE_WRITE spares our existing mapping only).
	 * F_SEAL_SEAL stops it from adding F_SEAL_WRITE-style seals later.
	 */
	if (fcntl(ring_fd, F_ADD_SEALS, RING_PROD_SEALS) < 0 ||
	    fcntl(cons_fd, F_ADD_SEALS, RING_CONS_SEALS) < 0) {
		err = -errno;
		goto fail_cons;
	}
	err = ring_producer_init_mem(p, ring_map, order, cons_map, generation);
	if (err)
		goto fail_cons;
	p->ring_fd = ring_fd;
	p->cons_fd = cons_fd;
	p->ring_map_len = ring_len;
	return 0;

fail_cons:
	munmap(cons_map, RING_PAGE_SIZE);
	close(cons_fd);
fail_ring:
	munmap(ring_map, ring_len);
	close(ring_fd);
	return err;
}

/* Most bytes loss markers can take: one per user type, plus padding before one. */
#define MARKERS_MAX_BYTES \
	((RING_MAX_TYPES - RING_REC_FIRST_USER + 1) * ring_rec_size(sizeof(struct ring_lost)))

uint32_t ring_max_payload(const struct ring_producer *p)
{
	/*
	 * A drained ring must take any record it accepts, from any offset: every
	 * pending marker (MARKERS_MAX_BYTES), then padding shorter than the
	 * record, then the record. So a record may use half of what is left.
	 */
	uint64_t max = ((p->size - MARKERS_MAX_BYTES) / 2) & ~(uint64_t)(RING_ALIGN - 1);

	max -= sizeof(struct ring_rec_hdr);
	return max > UINT32_MAX - RING_ALIGN ? UINT32_MAX - RING_ALIGN : (uint32_t)max;
}

/*
 * Free bytes, from the cached consumer position if that suffices for need,
 * else from a fresh, validated read of the consumer's word. This is the only
 * place the producer reads consumer_pos.
 */
static uint64_t producer_free(struct ring_producer *p, uint64_t need)
{
	uint64_t free = p->size - (p->pos - p->cons_seen);
	uint64_t c;

	if (free >= need)
		return free;
	/* P2: pairs with the consumer's store-release in ring_release (C2). */
	c = __atomic_load_n(&p->cons->consumer_pos, __ATOMIC_ACQUIRE);
	/*
	 * Trust boundary: c is whatever the consumer wrote. Valid values lie in
	 * [pos - size, pos]. Anything else (ahead of us, too far behind) means a
	 * broken or hostile consumer: treat the ring as full, count it, and keep
	 * the last valid value. c is never used to index memory.
	 */
	if (c > p->pos || p->pos - c > p->size) {
		p->bad_consumer_pos++;
		__atomic_store_n(&p->hdr->bad_consumer_pos, p->bad_consumer_pos, __ATOMIC_RELAXED);
		return 0;
	}
	p->cons_seen = c;
	return p->size - (p->pos - c);
}

static void write_hdr(struct ring_producer *p, uint64_t pos, unsigned type, uint32_t len)
{
	struct ring_rec_hdr h = { .len = len, .type = (uint16_t)type, .zero = 0 };

	memcpy(p->data + (pos & p->mask), &h, sizeof(h));
}

static void publish(struct ring_producer *p)
{
	/* P1: record bytes before the position; pairs with C1 in ring_next. */
	__atomic_store_n(&p->hdr->producer_pos, p->pos, __ATOMIC_RELEASE);
}

/*
 * Reserve total bytes at p->pos without loss bookkeeping. Writes a padding
 * record first when the record would cross the end of the data region; the
 * padding is kept even if the record then does not fit, so a stream of
 * large records cannot stay stuck near the end. Returns the record offset,
 * or -1 when there is no room.
 */
static int64_t reserve_raw(struct ring_producer *p, uint64_t total, bool *advanced)
{
	uint64_t off = p->pos & p->mask;
	uint64_t tail = p->size - off;

	if (total > tail) {
		if (producer_free(p, tail) < tail)
			return -1;
		write_hdr(p, p->pos, RING_REC_PAD, (uint32_t)(tail - sizeof(struct ring_rec_hdr)));
		p->pos += tail;
		*advanced = true;
		off = 0;
	}
	if (producer_free(p, total) < total)
		return -1;
	return (int64_t)off;
}

static void count_drop(struct ring_producer *p, unsigned type)
{
	uint64_t bit = 1ULL << type;

	if (!(p->pending_mask & bit)) {
		p->pending_mask |= bit;
		p->pending_since[type] = p->pos;
		p->pending_count[type] = 0;
	}
	p->pending_count[type]++;
	p->drops[type]++;
	p->drops_total++;
	__atomic_store_n(&p->hdr->drops[type], p->drops[type], __ATOMIC_RELAXED);
	__atomic_store_n(&p->hdr->drops_total, p->drops_total, __ATOMIC_RELAXED);
}

/* Write pending loss markers, lowest type first. false if one did not fit. */
static bool write_lost_markers(struct ring_producer *p, bool *advanced)
{
	const uint64_t total = ring_rec_size(sizeof(struct ring_lost));

	while (p->pending_mask) {
		unsigned t = (unsigned)__builtin_ctzll(p->pending_mask);
		struct ring_lost m = {
			.type = t,
			.count = p->pending_count[t],
			.since_pos = p->pending_since[t],
			.total = p->drops[t],
		};
		int64_t off = reserve_raw(p, total, advanced);

		if (off < 0)
			return false;
		write_hdr(p, p->pos, RING_REC_LOST, sizeof(m));
		memcpy(p->data + off + sizeof(struct ring_rec_hdr), &m, sizeof(m));
		p->pos += total;
		*advanced = true;
		p->pending_mask &= ~(1ULL << t);
		p->lost_markers++;
		__atomic_store_n(&p->hdr->lost_markers, p->lost_markers, __ATOMIC_RELAXED);
	}
	return true;
}

void *ring_reserve(struct ring_producer *p, unsigned type, uint32_t len)
{
	uint64_t total = ring_rec_size(len);
	bool advanced = false;
	int64_t off;

	if (type < RING_REC_FIRST_USER || type >= RING_MAX_TYPES || p->reserved_end) {
		errno = EINVAL;
		return NULL;
	}
	if (len > ring_max_payload(p)) {
		p->oversize++;
		__atomic_store_n(&p->hdr->oversize, p->oversize, __ATOMIC_RELAXED);
		count_drop(p, type);
		errno = EMSGSIZE;
		return NULL;
	}
	if (p->pending_mask && !write_lost_markers(p, &advanced))
		goto drop;
	off = reserve_raw(p, total, &advanced);
	if (off < 0)
		goto drop;
	write_hdr(p, p->pos, type, len);
	p->reserved_end = p->pos + total;
	return p->data + off + sizeof(struct ring_rec_hdr);

drop:
	count_drop(p, type);
	if (advanced) /* markers or padding made it: let the consumer have them */
		publish(p);
	errno = ENOSPC;
	return NULL;
}

void ring_commit(struct ring_producer *p)
{
	if (!p->reserved_end)
		return;
	p->pos = p->reserved_end;
	p->reserved_end = 0;
	p->records++;
	publish(p);
}

int ring_write(struct ring_producer *p, unsigned type, const void *payload, uint32_t len)
{
	void *dst = ring_reserve(p, type, len);

	if (!dst)
		return -errno;
	memcpy(dst, payload, len);
	ring_commit(p);
	return 0;
}

/* Bytes a write of len would consume now: pending markers, padding, the record. */
static uint64_t write_cost(const struct ring_producer *p, uint32_t len)
{
	const uint64_t marker = ring_rec_size(sizeof(struct ring_lost));
	uint64_t pos = p->pos;

	for (int n = __builtin_popcountll(p->pending_mask); n > 0; n--) {
		if (marker > p->size - (pos & p->mask))
			pos += p->size - (pos & p->mask);
		pos += marker;
	}
	if (ring_rec_size(len) > p->size - (pos & p->mask))
		pos += p->size - (pos & p->mask);
	return pos + ring_rec_size(len) - p->pos;
}

bool ring_has_room(struct ring_producer *p, uint32_t len)
{
	uint64_t need;

	if (len > ring_max_payload(p))
		return false;
	need = write_cost(p, len);
	return producer_free(p, need) >= need;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

void ring_notify(struct ring_producer *p)
{
	uint32_t sleeping;

	if (p->pos == p->last_wake_pos)
		return; /* nothing new since the last wake: a consumer stuck "sleeping" costs nothing */
	/* P3: our producer_pos store before the sleeping load; pairs with C3's fence. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Trust boundary: the second and last word read from the consumer; only tested against 0. */
	sleeping = __atomic_load_n(&p->cons->sleeping, __ATOMIC_RELAXED);
	if (!sleeping)
		return;
	p->last_wake_pos = p->pos;
	__atomic_fetch_add(&p->hdr->wake_seq, 1, __ATOMIC_RELEASE);
	/* Shared (not _PRIVATE) futex: the waiter is another process. Never blocks. */
	futex(&p->hdr->wake_seq, FUTEX_WAKE, INT_MAX, NULL);
	p->wakeups++;
	__atomic_store_n(&p->hdr->wakeups, p->wakeups, __ATOMIC_RELAXED);
}

void ring_producer_heartbeat(struct ring_producer *p, uint64_t now_ns)
{
	__atomic_store_n(&p->hdr->heartbeat_ns, now_ns, __ATOMIC_RELAXED);
}
