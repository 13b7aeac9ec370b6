/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What both ends of the ring's handover share (handover_producer.c,
 * handover_consumer.c): who the peer is (SO_PEERCRED), and the socket's
 * address.
 */
#ifndef TRACER_SHM_HANDOVER_PEER_H
#define TRACER_SHM_HANDOVER_PEER_H

#include <sys/types.h>
#include <sys/un.h>

#define HANDOVER_ANY_UID ((uid_t)-1)

/* 0 if the peer on fd runs as uid want (or want is HANDOVER_ANY_UID), -EPERM if not, or -errno. */
int handover_check_peer(int fd, uid_t want);

/* sa for path: 0, or -ENAMETOOLONG when path is empty or does not fit. */
int handover_addr(struct sockaddr_un *sa, const char *path);

#endif /* TRACER_SHM_HANDOVER_PEER_H */
