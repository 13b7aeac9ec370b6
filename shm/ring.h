/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-producer single-consumer ring of variable-length records shared
 * between two processes. Layout: include/ring_layout.h. Trust boundary and
 * memory ordering: docs/ring.md.
 *
 * Producer (collector):                 Consumer (processor):
 *   ring_producer_create()                ring_handover_recv()
 *   ring_handover_send()  ---- fds --->   ring_consumer_attach()
 *   loop: ring_write() / ring_reserve()   loop: ring_next() ...
 *         + ring_commit(); ring_notify()        ring_release(); ring_wait()
 *
 * Errors are negative errno values.
 */
#ifndef TRACER_SHM_RING_H
#define TRACER_SHM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ring_layout.h"

struct ring_producer {
	struct ring_prod_page *hdr;          /* shared, ours */
	unsigned char *data;                 /* shared, ours */
	const struct ring_cons_page *cons;   /* shared, written by the consumer: untrusted */
	uint64_t size;                       /* data region bytes, 2^order */
	uint64_t mask;
	uint64_t pos;                        /* authoritative producer position */
	uint64_t reserved_end;               /* position after the reserved record, 0 if none */
	uint64_t cons_seen;                  /* last consumer position that passed validation */
	uint64_t last_wake_pos;              /* producer position at the last futex wake */
	uint64_t pending_mask;               /* types with drops not yet reported in-band */
	uint64_t pending_count[RING_MAX_TYPES];
	uint64_t pending_since[RING_MAX_TYPES];
	uint64_t drops[RING_MAX_TYPES];      /* authoritative totals, mirrored to hdr->drops */
	uint64_t drops_total;
	uint64_t bad_consumer_pos;
	uint64_t lost_markers;
	uint64_t oversize;
	uint64_t records;                    /* records committed (markers and padding excluded) */
	uint64_t wakeups;
	int ring_fd;                         /* memfd: header + data, sealed FUTURE_WRITE */
	int cons_fd;                         /* memfd: consumer page */
	size_t ring_map_len;
};

/* Create both memfds, map them, seal them. order: log2 of the data size. */
int ring_producer_create(struct ring_producer *p, unsigned order, uint64_t generation);
void ring_producer_destroy(struct ring_producer *p);

/*
 * Initialise a producer over caller-owned memory instead of memfds (tests,
 * fuzzing). ring_mem holds RING_PAGE_SIZE + 2^order bytes, zeroed;
 * cons_page may hold anything.
 */
int ring_producer_init_mem(struct ring_producer *p, void *ring_mem, unsigned order,
			   const struct ring_cons_page *cons_page, uint64_t generation);

/*
 * Reserve room for a record of len payload bytes of the given type and
 * return where to write the payload, or NULL when it does not fit (the
 * record is then dropped and counted; errno is ENOSPC, or EMSGSIZE when it
 * can never fit, or EINVAL for a bad type). Never blocks. The record is
 * invisible to the consumer until ring_commit(). One reservation at a time.
 */
void *ring_reserve(struct ring_producer *p, unsigned type, uint32_t len);
void ring_commit(struct ring_producer *p);

/* ring_reserve + copy + ring_commit. Returns 0 or a negative errno. */
int ring_write(struct ring_producer *p, unsigned type, const void *payload, uint32_t len);

/*
 * Would a record of len payload bytes fit now? Refreshes the consumer
 * position if the cached one says no. Counts nothing: for producers that
 * prefer to wait (benchmarks, lossless tests), never for the collector.
 */
bool ring_has_room(struct ring_producer *p, uint32_t len);

/* Largest payload ring_reserve accepts for this ring. */
uint32_t ring_max_payload(const struct ring_producer *p);

/* Wake the consumer if it sleeps and something was committed since the last wake. */
void ring_notify(struct ring_producer *p);

void ring_producer_heartbeat(struct ring_producer *p, uint64_t now_ns);
/* The consumer's heartbeat word, as written by it: compare, never trust. */
uint64_t ring_producer_peer_heartbeat(const struct ring_producer *p);

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

uint64_t ring_now_ns(void); /* CLOCK_MONOTONIC */

#endif /* TRACER_SHM_RING_H */
