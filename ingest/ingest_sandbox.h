/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-ingest's seccomp allowlists (docs/lake.md, "The sandbox"): two
 * filters, stacked, default action kill the process. libseccomp directly
 * rather than priv_seccomp_allow_args(): the filters need
 * SCMP_FLTATR_CTL_TSYNC (every thread, libmicrohttpd's included), masked
 * argument comparisons (no PROT_EXEC) and an errno answer (clone3).
 *
 *   sandbox_ingest_startup   after priv_drop(), before libmicrohttpd's
 *                            thread exists: serving, plus starting that
 *                            one thread;
 *   sandbox_ingest_serving   once the thread runs: serving only, synced
 *                            onto every thread. No thread, socket, exec,
 *                            signal handler or name change after this.
 */
#ifndef TRACER_INGEST_SANDBOX_H
#define TRACER_INGEST_SANDBOX_H

/* 0, or -errno (logged). */
int sandbox_ingest_startup(void);
int sandbox_ingest_serving(void);

#endif /* TRACER_INGEST_SANDBOX_H */
