/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-ingest's seccomp allowlists (docs/lake.md, "The sandbox"): two
 * filters, stacked, default action kill the process, built by
 * common/scfilter.h's sc_install() with SC_TSYNC (every thread,
 * libmicrohttpd's included), masked argument comparisons (no PROT_EXEC)
 * and an errno answer (clone3).
 *
 *   sandbox_ingest_startup   after priv_drop(), before libmicrohttpd's
 *                            thread exists: serving, plus starting that
 *                            one thread;
 *   sandbox_ingest_serving   once the thread runs: serving only, synced
 *                            onto every thread. No thread, socket, exec,
 *                            signal handler or name change after this.
 *
 * A PostgreSQL lake adds its connection's calls (socket of its family,
 * connect, poll) and, before the first filter, a Landlock ruleset that
 * lets TCP connect() reach the server's port only and bind() nothing (a
 * Unix socket lake: no TCP at all).
 */
#ifndef TRACER_INGEST_SANDBOX_H
#define TRACER_INGEST_SANDBOX_H

#include <stdint.h>

/*
 * The lake's connection (a PostgreSQL lake: store_remote()), which the
 * filters let the ingest make again after the server dropped it: a stream
 * socket of that family only, polled; family 0: an SQLite file, no socket.
 */
struct ingest_lake_net {
	int family;    /* AF_UNIX, AF_INET, AF_INET6, or 0 */
	uint16_t port; /* TCP: the only port connect() may reach (Landlock) */
};

/* 0, or -errno (logged). */
int sandbox_ingest_startup(const struct ingest_lake_net *net);
int sandbox_ingest_serving(const struct ingest_lake_net *net);

#endif /* TRACER_INGEST_SANDBOX_H */
