/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Receiving the ring's memfds from the producer (handover_producer.h): the
 * consumer's half. It checks the producer's uid (SO_PEERCRED), takes every
 * descriptor that arrived so that none leaks, and attaches only to the real
 * message with exactly the ring's two sealed memfds.
 */
#ifndef TRACER_SHM_HANDOVER_CONSUMER_H
#define TRACER_SHM_HANDOVER_CONSUMER_H

#include <stdint.h>
#include <sys/types.h>

#include "handover_peer.h"
#include "ring_consumer.h"

/*
 * Receive the ring on conn_fd from a peer whose uid is producer_uid (or
 * anyone with HANDOVER_ANY_UID) and attach to it. Waits at most timeout_ms
 * for the message.
 */
int ring_handover_recv(int conn_fd, struct ring_consumer *c, uid_t producer_uid, uint64_t known_types,
		       int timeout_ms);

/* Connected socket to path. */
int handover_connect(const char *path);

#endif /* TRACER_SHM_HANDOVER_CONSUMER_H */
