/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handing the ring's memfds from the producer to the consumer over a Unix
 * stream socket (SCM_RIGHTS), after checking who the peer is
 * (SO_PEERCRED): the producer's half. The consumer keeps the connection
 * open: end-of-file on it tells it the producer is gone, and a restarted
 * consumer connects again to get the same ring back (handover_consumer.h).
 */
#ifndef TRACER_SHM_HANDOVER_PRODUCER_H
#define TRACER_SHM_HANDOVER_PRODUCER_H

#include <sys/types.h>

#include "handover_peer.h"
#include "ring_producer.h"

/*
 * Send the ring to the peer on conn_fd if its uid is allowed_uid (or any
 * uid with HANDOVER_ANY_UID). -EPERM, with nothing sent, otherwise.
 */
int ring_handover_send(int conn_fd, const struct ring_producer *p, uid_t allowed_uid);

/* Non-blocking listening socket at path (replacing any old one), with the given mode. */
int handover_listen(const char *path, mode_t mode);

#endif /* TRACER_SHM_HANDOVER_PRODUCER_H */
