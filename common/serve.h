/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two HTTP daemons (tracer-ingest, tracer-web) do alike around
 * serving: the listening address from tracer.conf, the ready line on
 * --ready-fd, and the main thread's wait for signals with systemd's
 * watchdog kept fed. Not linked into the collector.
 */
#ifndef TRACER_COMMON_SERVE_H
#define TRACER_COMMON_SERVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "notify.h"

/* "ADDR:PORT" / "[ADDR6]:PORT" from a tracer.conf listen key, as net_parse_listen reads it. */
void serve_format_listen(const struct config_listen *l, char *out, size_t outlen);
/* "ready PORT\n" on ready_fd (< 0: none), which is then closed; a failed write is logged. */
void serve_announce_ready(int ready_fd, uint16_t port);
/*
 * Take the signals of set (blocked on every thread) one at a time, sending
 * WATCHDOG=1 often enough for WatchdogSec=; on SIGHUP call on_hup (NULL:
 * ignore it); on SIGTERM or SIGINT send STOPPING=1, log it and return.
 */
void serve_wait_for_stop(const sigset_t *set, struct notify *nt, void (*on_hup)(void *ctx), void *ctx);

#endif /* TRACER_COMMON_SERVE_H */
