/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shared-memory ring: producer and consumer sides.
 *
 * Memory ordering, in one place (each load/store below names its pair):
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
 */
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define RING_PROD_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)
#define RING_CONS_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define RING_BUILTIN_TYPES ((1ULL << RING_REC_PAD) | (1ULL << RING_REC_LOST))

uint64_t ring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool ring_heartbeat_stale(uint64_t hb_ns, uint64_t now_ns, uint64_t max_age_ns)
{
	if (hb_ns > now_ns)
		return true;
	return now_ns - hb_ns > max_age_ns;
}

/* ------------------------------------------------------------------ */
/* Producer                                                           */
/* ------------------------------------------------------------------ */

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

void ring_producer_destroy(struct ring_producer *p)
{
	if (p->ring_fd >= 0) {
		munmap(p->hdr, p->ring_map_len);
		munmap((void *)(uintptr_t)p->cons, RING_PAGE_SIZE);
		close(p->ring_fd);
		close(p->cons_fd);
	}
	memset(p, 0, sizeof(*p));
	p->ring_fd = -1;
	p->cons_fd = -1;
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

uint64_t ring_producer_peer_heartbeat(const struct ring_producer *p)
{
	return __atomic_load_n(&p->cons->heartbeat_ns, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Consumer                                                           */
/* ------------------------------------------------------------------ */

static int consumer_check_header(const struct ring_prod_page *h, size_t ring_len, uint64_t *size)
{
	uint64_t data_size = h->data_size;

	if (h->magic != RING_MAGIC || h->version != RING_VERSION || h->page_size != RING_PAGE_SIZE ||
	    h->max_types != RING_MAX_TYPES)
		return -EPROTO;
	if (data_size < (1ULL << RING_MIN_ORDER) || data_size > (1ULL << RING_MAX_ORDER) ||
	    (data_size & (data_size - 1)) || ring_len != RING_PAGE_SIZE + data_size)
		return -EPROTO;
	*size = data_size;
	return 0;
}

int ring_consumer_init_mem(struct ring_consumer *c, const void *ring_mem, size_t ring_len,
			   struct ring_cons_page *cons_page, uint64_t known_types)
{
	const struct ring_prod_page *h = ring_mem;
	uint64_t size, prod;
	int err;

	memset(c, 0, sizeof(*c));
	if (!ring_mem || !cons_page || ring_len < RING_PAGE_SIZE)
		return -EINVAL;
	err = consumer_check_header(h, ring_len, &size);
	if (err)
		return err;
	c->hdr = h;
	c->data = (const unsigned char *)ring_mem + RING_PAGE_SIZE;
	c->cpage = cons_page;
	c->size = size;
	c->mask = size - 1;
	c->generation = h->generation;
	c->known_types = (known_types & ~((1ULL << RING_REC_FIRST_USER) - 1)) | RING_BUILTIN_TYPES;
	/* Resume where the previous consumer of this ring released. */
	c->pos = __atomic_load_n(&cons_page->consumer_pos, __ATOMIC_RELAXED);
	prod = __atomic_load_n(&h->producer_pos, __ATOMIC_ACQUIRE); /* C1 */
	if (c->pos > prod || prod - c->pos > size || (c->pos & (RING_ALIGN - 1))) {
		c->resets++;
		c->pos = prod & ~(uint64_t)(RING_ALIGN - 1); /* positions we index with stay aligned */
		__atomic_store_n(&cons_page->consumer_pos, c->pos, __ATOMIC_RELEASE);
	}
	c->prod_seen = c->pos;
	__atomic_store_n(&cons_page->consumer_pid, (uint32_t)getpid(), __ATOMIC_RELAXED);
	return 0;
}

static int check_seals(int fd, int want)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0)
		return -errno;
	return (seals & want) == want ? 0 : -EPERM;
}

static int fd_size(int fd, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)RING_PAGE_SIZE)
		return -EPROTO;
	*len = (size_t)st.st_size;
	return 0;
}

int ring_consumer_attach(struct ring_consumer *c, int ring_fd, int cons_fd, uint64_t known_types)
{
	size_t ring_len = 0, cons_len = 0;
	void *ring_map, *cons_map;
	int err;

	/*
	 * The seals protect us too: an unsealed file could be truncated under
	 * our mapping (SIGBUS). Refuse anything that is not sealed as promised.
	 */
	err = check_seals(ring_fd, RING_PROD_SEALS);
	if (!err)
		err = check_seals(cons_fd, RING_CONS_SEALS);
	if (!err)
		err = fd_size(ring_fd, &ring_len);
	if (!err)
		err = fd_size(cons_fd, &cons_len);
	if (err)
		return err;
	if (cons_len != RING_PAGE_SIZE || ring_len > RING_PAGE_SIZE + (1ULL << RING_MAX_ORDER))
		return -EPROTO;
	ring_map = mmap(NULL, ring_len, PROT_READ, MAP_SHARED, ring_fd, 0);
	if (ring_map == MAP_FAILED)
		return -errno;
	cons_map = mmap(NULL, RING_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, cons_fd, 0);
	if (cons_map == MAP_FAILED) {
		err = -errno;
		munmap(ring_map, ring_len);
		return err;
	}
	err = ring_consumer_init_mem(c, ring_map, ring_len, cons_map, known_types);
	if (err) {
		munmap(ring_map, ring_len);
		munmap(cons_map, RING_PAGE_SIZE);
		return err;
	}
	c->ring_map = ring_map;
	c->ring_map_len = ring_len;
	c->cons_map = cons_map;
	return 0;
}

void ring_consumer_detach(struct ring_consumer *c)
{
	if (c->ring_map) {
		munmap(c->ring_map, c->ring_map_len);
		munmap(c->cons_map, RING_PAGE_SIZE);
	}
	memset(c, 0, sizeof(*c));
}

static int consumer_reset(struct ring_consumer *c, uint64_t prod)
{
	c->resets++;
	c->bytes_discarded += prod > c->pos ? prod - c->pos : 0;
	c->pos = prod;
	c->prod_seen = prod;
	return -EBADMSG;
}

/*
 * Refresh prod_seen: 0, or -EBADMSG when the producer position is impossible
 * (a counted reset to it), or -EAGAIN when it is the same impossible value
 * as last time (already counted: the ring looks empty until it changes).
 */
static int consumer_refresh(struct ring_consumer *c)
{
	/* C1: pairs with the producer's store-release (P1): record bytes below are visible. */
	uint64_t prod = __atomic_load_n(&c->hdr->producer_pos, __ATOMIC_ACQUIRE);

	if (prod < c->pos || prod - c->pos > c->size || (prod & (RING_ALIGN - 1))) {
		if (c->bad_prod_valid && prod == c->bad_prod)
			return -EAGAIN;
		c->bad_prod = prod;
		c->bad_prod_valid = true;
		return consumer_reset(c, prod & ~(uint64_t)(RING_ALIGN - 1));
	}
	c->prod_seen = prod;
	return 0;
}

static int decode_lost(struct ring_consumer *c, struct ring_view *v)
{
	struct ring_lost m;

	if (v->len != sizeof(m))
		return -EBADMSG;
	memcpy(&m, v->payload, sizeof(m));
	if (m.type < RING_REC_FIRST_USER || m.type >= RING_MAX_TYPES || m.zero ||
	    m.since_pos > v->pos || m.count == 0 || m.count > m.total)
		return -EBADMSG;
	v->lost = m;
	c->lost[m.type] += m.count;
	c->lost_total += m.count;
	return 0;
}

int ring_next(struct ring_consumer *c, struct ring_view *v)
{
	for (;;) {
		struct ring_rec_hdr h;
		uint64_t off, avail, total;

		if (c->pos == c->prod_seen) {
			int rc = consumer_refresh(c);

			if (rc)
				return rc == -EAGAIN ? 0 : rc;
			if (c->pos == c->prod_seen)
				return 0;
		}
		off = c->pos & c->mask;
		avail = c->prod_seen - c->pos;
		/*
		 * Trust boundary (the other direction): the header is copied once,
		 * then checked; every read below stays inside [off, off + total),
		 * which the checks keep inside the data region and the published
		 * part of the ring.
		 */
		if (avail < sizeof(h) || off > c->size - sizeof(h)) /* unreachable while pos is aligned */
			return consumer_reset(c, c->prod_seen);
		memcpy(&h, c->data + off, sizeof(h));
		total = ring_rec_size(h.len);
		if (h.zero || h.type >= RING_MAX_TYPES ||
		    !(c->known_types & (1ULL << h.type)) || h.len > c->size ||
		    total > avail || total > c->size - off ||
		    (h.type == RING_REC_PAD && off + total != c->size))
			return consumer_reset(c, c->prod_seen);
		c->pos += total;
		if (h.type == RING_REC_PAD)
			continue;
		v->type = h.type;
		v->len = h.len;
		v->pos = c->pos - total;
		v->payload = c->data + off + sizeof(h);
		if (h.type == RING_REC_LOST)
			return decode_lost(c, v) ? consumer_reset(c, c->prod_seen) : 1;
		c->records++;
		return 1;
	}
}

void ring_release(struct ring_consumer *c)
{
	/* C2: our reads of released records before the position; pairs with P2. */
	__atomic_store_n(&c->cpage->consumer_pos, c->pos, __ATOMIC_RELEASE);
}

void ring_release_to(struct ring_consumer *c, uint64_t pos)
{
	if (pos > c->pos || pos < c->cpage->consumer_pos) /* never ahead of what was read, never back */
		pos = pos > c->pos ? c->pos : c->cpage->consumer_pos;
	/* C2 as in ring_release: our reads of the records before pos happen before the store. */
	__atomic_store_n(&c->cpage->consumer_pos, pos, __ATOMIC_RELEASE);
}

int ring_wait(struct ring_consumer *c, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;
	uint32_t seq;
	long rc;

	if (c->pos != c->prod_seen)
		return 1;
	seq = __atomic_load_n(&c->hdr->wake_seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->cpage->sleeping, 1, __ATOMIC_RELAXED);
	/* C3: sleeping store before the producer_pos load; pairs with P3's fence. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->hdr->producer_pos, __ATOMIC_ACQUIRE) != c->pos) {
		__atomic_store_n(&c->cpage->sleeping, 0, __ATOMIC_RELAXED);
		return 1;
	}
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	/* Shared futex on a read-only mapping: FUTEX_WAIT only needs read access. */
	rc = futex((uint32_t *)(uintptr_t)&c->hdr->wake_seq, FUTEX_WAIT, seq, tsp);
	__atomic_store_n(&c->cpage->sleeping, 0, __ATOMIC_RELAXED);
	if (rc < 0 && errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR)
		return -errno;
	return __atomic_load_n(&c->hdr->producer_pos, __ATOMIC_ACQUIRE) != c->pos;
}

void ring_consumer_heartbeat(struct ring_consumer *c, uint64_t now_ns)
{
	__atomic_store_n(&c->cpage->heartbeat_ns, now_ns, __ATOMIC_RELAXED);
}

uint64_t ring_consumer_peer_heartbeat(const struct ring_consumer *c)
{
	return __atomic_load_n(&c->hdr->heartbeat_ns, __ATOMIC_RELAXED);
}

uint64_t ring_consumer_producer_pos(const struct ring_consumer *c)
{
	return __atomic_load_n(&c->hdr->producer_pos, __ATOMIC_ACQUIRE);
}
