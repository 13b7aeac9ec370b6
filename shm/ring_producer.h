/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer side of the shared-memory ring (tracer-collector): it
 * creates and seals the memory, writes records, and reads one word the
 * consumer writes, its position, validated where it is read. Layout:
 * include/ring_layout.h; the consumer side: ring_consumer.h; trust boundary
 * and memory ordering: docs/ring.md and ring_producer.c.
 *
 *   ring_producer_create()
 *   ring_handover_send()  ---- fds ---> the consumer (handover_producer.h)
 *   loop: ring_write() or ring_reserve() + ring_commit(); ring_notify()
 *
 * Errors are negative errno values.
 */
#ifndef TRACER_SHM_RING_PRODUCER_H
#define TRACER_SHM_RING_PRODUCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring_common.h"

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
 * prefer to wait (benchmarks, lossless tests, the collector's end record),
 * never in the collector's copy loop.
 */
bool ring_has_room(struct ring_producer *p, uint32_t len);

/* Largest payload ring_reserve accepts for this ring. */
uint32_t ring_max_payload(const struct ring_producer *p);

/* Wake the consumer if it sleeps and something was committed since the last wake. */
void ring_notify(struct ring_producer *p);

void ring_producer_heartbeat(struct ring_producer *p, uint64_t now_ns);
/* The consumer's heartbeat word, as written by it: compare, never trust. */
uint64_t ring_producer_peer_heartbeat(const struct ring_producer *p);

#endif /* TRACER_SHM_RING_PRODUCER_H */
