/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared-memory ring between tracer-collector (producer) and
 * tracer-processor (consumer): the one definition of its bytes.
 *
 * Two memfds cross the process boundary (SCM_RIGHTS over a Unix socket):
 *
 *   ring memfd -- sealed SHRINK | GROW | FUTURE_WRITE | SEAL
 *   +--------------------------------+ 0
 *   | struct ring_prod_page (4 KiB)  |  written only by the producer
 *   +--------------------------------+ RING_PAGE_SIZE
 *   | data region, 2^order bytes     |  records, 8-byte aligned
 *   +--------------------------------+ RING_PAGE_SIZE + 2^order
 *   The consumer can only map it read-only: FUTURE_WRITE refuses new
 *   writable shared mappings, mprotect(PROT_WRITE), write() and hole
 *   punching, and SHRINK makes truncation (hence SIGBUS) impossible.
 *
 *   consumer memfd -- sealed SHRINK | GROW | SEAL
 *   +--------------------------------+ 0
 *   | struct ring_cons_page (4 KiB)  |  written only by the consumer
 *   +--------------------------------+ RING_PAGE_SIZE
 *   Everything in it is untrusted by the producer.
 *
 * Positions are byte counts that only ever grow (64 bits: at 10 GB/s they
 * wrap after 58 years) and are masked with (data_size - 1) only when
 * indexing. A record never straddles the end of the data region: when it
 * would, the producer first writes a RING_REC_PAD record up to the end.
 *
 * A record:
 *   +--------+--------+--------+----------------------+---------+
 *   | len:32 | type:16| zero:16| payload (len bytes)  | to 8 B  |
 *   +--------+--------+--------+----------------------+---------+
 *   and occupies ring_rec_size(len) = align8(8 + len) bytes.
 */
#ifndef TRACER_RING_LAYOUT_H
#define TRACER_RING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define RING_MAGIC 0x31474e4952524354ULL /* "TCRRING1" in little endian */
#define RING_VERSION 1u
#define RING_PAGE_SIZE 4096u
#define RING_CACHELINE 64u
#define RING_ALIGN 8u

/* The data region is 2^order bytes. */
#define RING_MIN_ORDER 12u     /* 4 KiB */
#define RING_MAX_ORDER 30u     /* 1 GiB */
#define RING_DEFAULT_ORDER 22u /* 4 MiB */

/*
 * Record types are below RING_MAX_TYPES so that drop counters can be kept
 * per type in a fixed array. Type 0 is never valid, so zeroed memory is
 * never mistaken for a record. Types below RING_REC_FIRST_USER belong to
 * the ring itself; the rest are defined by the record layouts built on it.
 */
#define RING_MAX_TYPES 64u
enum ring_rec_type {
	RING_REC_INVALID = 0,
	RING_REC_PAD = 1,  /* filler up to the end of the data region */
	RING_REC_LOST = 2, /* payload: struct ring_lost */
	RING_REC_FIRST_USER = 16,
};

struct ring_rec_hdr {
	uint32_t len;  /* payload bytes, excluding this header */
	uint16_t type; /* enum ring_rec_type or a user type < RING_MAX_TYPES */
	uint16_t zero; /* must be 0: catches garbage and future flags */
};

/*
 * In-band loss report, written at the next successful write after drops:
 * "count records of type were lost, the first at producer position
 * since_pos". total is the producer's running total for that type, so a
 * consumer that missed a marker (it cannot, but a reset can) still
 * reconciles with the header counters.
 */
struct ring_lost {
	uint32_t type;
	uint32_t zero;
	uint64_t count;
	uint64_t since_pos;
	uint64_t total;
};

/* Page written by the producer; read-only for the consumer. */
struct ring_prod_page {
	/* Line 0: set once at creation, never changed. */
	_Alignas(RING_CACHELINE) uint64_t magic;
	uint32_t version;
	uint32_t page_size;   /* RING_PAGE_SIZE: offset of the data region */
	uint64_t data_size;   /* 2^order */
	uint64_t generation;  /* new for every producer start */
	uint32_t producer_pid;
	uint32_t max_types;   /* RING_MAX_TYPES */
	uint64_t created_ns;  /* CLOCK_REALTIME */

	/* Line 1: the hot word, stored (release) once per committed record. */
	_Alignas(RING_CACHELINE) uint64_t producer_pos;

	/* Line 2: wakeup and liveness. */
	_Alignas(RING_CACHELINE) uint32_t wake_seq; /* futex word */
	uint32_t zero0;
	uint64_t heartbeat_ns; /* CLOCK_MONOTONIC of the producer's last tick */
	uint64_t wakeups;      /* futex wakes issued */

	/* Line 3: counters, written on the slow paths only. */
	_Alignas(RING_CACHELINE) uint64_t drops_total;
	uint64_t bad_consumer_pos; /* consumer positions refused as invalid */
	uint64_t lost_markers;     /* RING_REC_LOST records written */
	uint64_t oversize;         /* records larger than the ring accepts */

	/* Lines 4..11: per-type drop counters, running totals. */
	_Alignas(RING_CACHELINE) uint64_t drops[RING_MAX_TYPES];

	uint8_t reserved[RING_PAGE_SIZE - 12 * RING_CACHELINE];
};

/* Page written by the consumer; untrusted by the producer. */
struct ring_cons_page {
	/* Line 0: everything before it has been consumed (store-release). */
	_Alignas(RING_CACHELINE) uint64_t consumer_pos;
	/* Line 1: non-zero while the consumer waits on wake_seq. */
	_Alignas(RING_CACHELINE) uint32_t sleeping;
	/* Line 2: liveness, for status displays only. */
	_Alignas(RING_CACHELINE) uint64_t heartbeat_ns;
	uint32_t consumer_pid;
	uint8_t reserved[RING_PAGE_SIZE - 2 * RING_CACHELINE - 12];
};

/* Handover message sent with the two memfds (SCM_RIGHTS). */
#define RING_HANDOVER_MAGIC 0x52444e4852524354ULL /* "TCRRHNDR" */
struct ring_handover_msg {
	uint64_t magic;
	uint32_t version;
	uint32_t page_size;
	uint64_t data_size;
	uint64_t generation;
};

_Static_assert(sizeof(struct ring_rec_hdr) == 8, "record header is 8 bytes");
_Static_assert(sizeof(struct ring_lost) == 32, "lost marker layout");
_Static_assert(sizeof(struct ring_prod_page) == RING_PAGE_SIZE, "producer page size");
_Static_assert(sizeof(struct ring_cons_page) == RING_PAGE_SIZE, "consumer page size");
_Static_assert(offsetof(struct ring_prod_page, producer_pos) == 64, "producer_pos on its own line");
_Static_assert(offsetof(struct ring_prod_page, wake_seq) == 128, "wake word on line 2");
_Static_assert(offsetof(struct ring_prod_page, drops_total) == 192, "counters on line 3");
_Static_assert(offsetof(struct ring_prod_page, drops) == 256, "drop counters from line 4");
_Static_assert(offsetof(struct ring_cons_page, sleeping) == 64, "sleeping flag on its own line");
_Static_assert(offsetof(struct ring_cons_page, heartbeat_ns) == 128, "consumer heartbeat on line 2");
_Static_assert(sizeof(struct ring_handover_msg) == 32, "handover message layout");
_Static_assert(RING_MAX_TYPES <= 64, "type masks are 64-bit");

/* Bytes a record with a payload of len bytes occupies in the data region. */
static inline uint64_t ring_rec_size(uint64_t len)
{
	return (sizeof(struct ring_rec_hdr) + len + RING_ALIGN - 1) & ~(uint64_t)(RING_ALIGN - 1);
}

#endif /* TRACER_RING_LAYOUT_H */
