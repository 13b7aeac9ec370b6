/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-producer single-consumer ring of variable-length records shared
 * between two processes. Layout: include/ring_layout.h. Trust boundary and
 * memory ordering: docs/ring.md.
 *
 * Producer (collector, ring_producer.h): Consumer (processor, ring_consumer.h):
 *   ring_producer_create()                ring_handover_recv()
 *   ring_handover_send()  ---- fds --->   ring_consumer_attach()
 *   loop: ring_write() / ring_reserve()   loop: ring_next() ...
 *         + ring_commit(); ring_notify()        ring_release(); ring_wait()
 *
 * The two sides are separate files so that each program links only its
 * own: the collector includes ring_producer.h, never this header (the
 * audit table in docs/security.md is computed from what it links). The
 * processor, tests and benchmarks may include this one: a header links
 * nothing, and they link the objects of the functions they call.
 *
 * Errors are negative errno values.
 */
#ifndef TRACER_SHM_RING_H
#define TRACER_SHM_RING_H

#include "ring_consumer.h"
#include "ring_producer.h"

#endif /* TRACER_SHM_RING_H */
