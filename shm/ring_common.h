/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What both sides of the shared-memory ring agree on beyond its bytes
 * (include/ring_layout.h): the seals each memfd carries, and the clock of
 * the heartbeats. The producer (ring_producer.c) adds these seals; the
 * consumer (ring_consumer.c) refuses a file without them.
 */
#ifndef TRACER_SHM_RING_COMMON_H
#define TRACER_SHM_RING_COMMON_H

#include <fcntl.h>
#include <stdint.h>
#include <time.h>

#include "ring_layout.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

/* The ring memfd: no resize, no new writable mapping (the producer's own stays), no more seals. */
#define RING_PROD_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)
/* The consumer page's memfd: no resize (no SIGBUS in the producer), no more seals. */
#define RING_CONS_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* CLOCK_MONOTONIC in ns: heartbeats, and the callers' own timing. */
static inline uint64_t ring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* TRACER_SHM_RING_COMMON_H */
