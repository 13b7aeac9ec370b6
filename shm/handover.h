/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handing the ring's memfds from producer to consumer over a Unix stream
 * socket (SCM_RIGHTS), after checking who the peer is (SO_PEERCRED).
 * The consumer keeps the connection open: end-of-file on it tells it the
 * producer is gone, and a restarted consumer connects again to get the
 * same ring back.
 *
 * Both halves: handover_producer.h (the collector includes only that) and
 * handover_consumer.h; what they share is in handover_peer.h.
 */
#ifndef TRACER_SHM_HANDOVER_H
#define TRACER_SHM_HANDOVER_H

#include "handover_consumer.h"
#include "handover_producer.h"
#include "ring.h"

#endif /* TRACER_SHM_HANDOVER_H */
