/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Producer functions that tracer-collector never calls, in an object of
 * their own so that it does not link them: tearing the ring down (the
 * collector exits instead, and the kernel frees the memfds with it) and
 * reading the consumer's heartbeat. Tests and benchmarks use them.
 */
#include "ring_producer.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

uint64_t ring_producer_peer_heartbeat(const struct ring_producer *p)
{
	return __atomic_load_n(&p->cons->heartbeat_ns, __ATOMIC_RELAXED);
}
