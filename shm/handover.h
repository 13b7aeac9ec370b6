/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handing the ring's memfds from producer to consumer over a Unix stream
 * socket (SCM_RIGHTS), after checking who the peer is (SO_PEERCRED).
 * The consumer keeps the connection open: end-of-file on it tells it the
 * producer is gone, and a restarted consumer connects again to get the
 * same ring back.
 */
#ifndef TRACER_SHM_HANDOVER_H
#define TRACER_SHM_HANDOVER_H

#include <sys/types.h>

#include "ring.h"

#define HANDOVER_ANY_UID ((uid_t)-1)

/*
 * Send the ring to the peer on conn_fd if its uid is allowed_uid (or any
 * uid with HANDOVER_ANY_UID). -EPERM, with nothing sent, otherwise.
 */
int ring_handover_send(int conn_fd, const struct ring_producer *p, uid_t allowed_uid);

/*
 * Receive the ring on conn_fd from a peer whose uid is producer_uid (or
 * anyone with HANDOVER_ANY_UID) and attach to it. Waits at most timeout_ms
 * for the message.
 */
int ring_handover_recv(int conn_fd, struct ring_consumer *c, uid_t producer_uid, uint64_t known_types,
		       int timeout_ms);

/* Non-blocking listening socket at path (replacing any old one), with the given mode. */
int handover_listen(const char *path, mode_t mode);
/* Connected socket to path. */
int handover_connect(const char *path);

#endif /* TRACER_SHM_HANDOVER_H */
