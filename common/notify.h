/* SPDX-License-Identifier: Apache-2.0 */
/*
 * systemd's readiness and watchdog protocol (sd_notify(3)) without
 * libsystemd: one datagram socket, connected to $NOTIFY_SOCKET while the
 * daemon may still create sockets, written to with write() afterwards -
 * which both sandboxes allow. Without $NOTIFY_SOCKET every call is a no-op.
 */
#ifndef TRACER_COMMON_NOTIFY_H
#define TRACER_COMMON_NOTIFY_H

#include <stdint.h>

struct notify {
	int fd;                  /* -1: not started by systemd with Type=notify */
	uint64_t watchdog_ns;    /* WatchdogSec= as $WATCHDOG_USEC says, for this pid; 0: none */
	uint64_t next_watchdog;  /* CLOCK_MONOTONIC ns of the next WATCHDOG=1 */
};

/*
 * Before the sandbox: connect to $NOTIFY_SOCKET (a path, or '@' for the
 * abstract namespace) and read $WATCHDOG_USEC/$WATCHDOG_PID. 0, also when
 * there is nothing to notify; -errno (logged) when the socket is given but
 * cannot be reached.
 */
int notify_open(struct notify *n);

/* Send one message ("READY=1", "STOPPING=1", "STATUS=..."). */
void notify_send(struct notify *n, const char *msg);

/* WATCHDOG=1 when half the watchdog interval has passed since the last one. */
void notify_watchdog(struct notify *n, uint64_t now_mono_ns);

#endif /* TRACER_COMMON_NOTIFY_H */
