/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The consumer side of the shared-memory ring (tracer-processor): it maps
 * what the producer handed over (handover_consumer.h) and reads records,
 * treating every byte as untrusted. Layout: include/ring_layout.h; the
 * producer side: ring_producer.h; trust boundary and memory ordering:
 * docs/ring.md and ring_producer.c.
 *
 *   ring_handover_recv() -> ring_consumer_attach()
 *   loop: ring_next() ... ring_release(); ring_wait()
 *
 * Errors are negative errno values.
 */
#ifndef TRACER_SHM_RING_CONSUMER_H
#define TRACER_SHM_RING_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring_common.h"

struct ring_consumer {
	const struct ring_prod_page *hdr;    /* shared, read-only mapping */
	const unsigned char *data;
	struct ring_cons_page *cpage;        /* shared, ours */
	uint64_t size;
	uint64_t mask;
	uint64_t generation;
	uint64_t known_types;                /* bit t set: type t is accepted */
	uint64_t pos;                        /* next position to read */
	uint64_t prod_seen;                  /* producer position from the last acquire load */
	uint64_t records;                    /* user records returned */
	uint64_t lost[RING_MAX_TYPES];       /* sums of in-band loss markers */
	uint64_t lost_total;
	uint64_t resets;                     /* corrupt ring detected, skipped to producer */
	uint64_t bytes_discarded;            /* bytes skipped by resets */
	uint64_t bad_prod;                   /* last impossible producer position (counted once) */
	bool bad_prod_valid;
	void *ring_map;                      /* for munmap, NULL for init_mem */
	size_t ring_map_len;
	void *cons_map;
};

/* A record as returned by ring_next(): valid until ring_release(). */
struct ring_view {
	unsigned type;
	uint32_t len;
	uint64_t pos;                        /* ring position of the record header */
	const void *payload;                 /* inside the read-only mapping */
	struct ring_lost lost;               /* decoded copy when type == RING_REC_LOST */
};

/*
 * Map the two fds received from the producer, check their seals, size and
 * header, and resume from the consumer position stored in the consumer
 * page (so a restarted consumer loses nothing it had not released).
 * known_types: mask of user types this consumer accepts (ring types are
 * always accepted).
 */
int ring_consumer_attach(struct ring_consumer *c, int ring_fd, int cons_fd, uint64_t known_types);
void ring_consumer_detach(struct ring_consumer *c);

/* Same over caller-owned memory of ring_len bytes (tests, fuzzing). */
int ring_consumer_init_mem(struct ring_consumer *c, const void *ring_mem, size_t ring_len,
			   struct ring_cons_page *cons_page, uint64_t known_types);

/*
 * Next record. Returns 1 and fills *v, 0 when the ring is empty, or
 * -EBADMSG when a corrupt header or position was found: the consumer then
 * skipped to the producer position (a counted reset) and may carry on.
 * Padding is skipped; RING_REC_LOST markers are returned (and summed in
 * c->lost) so the caller learns of losses in-band.
 */
int ring_next(struct ring_consumer *c, struct ring_view *v);

/* Tell the producer everything returned so far may be overwritten. */
void ring_release(struct ring_consumer *c);

/*
 * Release only up to pos (a ring_view.pos or the c->pos of an earlier
 * moment): the records from pos on stay in the ring, and a consumer that
 * attaches after this one dies reads them again. Clamped to what was read.
 */
void ring_release_to(struct ring_consumer *c, uint64_t pos);

/*
 * Sleep until the producer commits and notifies, or timeout_ms passes
 * (negative: no timeout). Returns 1 when there is data, 0 on timeout or
 * spurious wakeup, negative errno on error.
 */
int ring_wait(struct ring_consumer *c, int timeout_ms);

void ring_consumer_heartbeat(struct ring_consumer *c, uint64_t now_ns);
uint64_t ring_consumer_peer_heartbeat(const struct ring_consumer *c);
/* Producer position as last published; for progress displays and draining. */
uint64_t ring_consumer_producer_pos(const struct ring_consumer *c);

/* true when hb is older than max_age_ns at now_ns (or from the future). */
bool ring_heartbeat_stale(uint64_t hb_ns, uint64_t now_ns, uint64_t max_age_ns);

#endif /* TRACER_SHM_RING_CONSUMER_H */
