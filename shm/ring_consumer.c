/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shared-memory ring: the consumer side (tracer-processor). Every byte
 * of the ring is untrusted here. The memory ordering of both sides (P1-P3,
 * C1-C3, named at each load and store below) is drawn in ring_producer.c.
 */
#include "ring_consumer.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_BUILTIN_TYPES ((1ULL << RING_REC_PAD) | (1ULL << RING_REC_LOST))

bool ring_heartbeat_stale(uint64_t hb_ns, uint64_t now_ns, uint64_t max_age_ns)
{
	if (hb_ns > now_ns)
		return true;
	return now_ns - hb_ns > max_age_ns;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

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
