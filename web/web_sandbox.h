/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracer-web's confinement (docs/web.md, "The sandbox"), applied after the
 * privilege drop, once the lake is open and before libmicrohttpd's threads
 * exist, so that they inherit it:
 *   Landlock  every file: read only, and only beneath the lake's directory
 *             and the price table's; no TCP bind or connect (ABI 4+)
 *   seccomp   serving's syscalls, thread creation (a thread per connection)
 *             and read-only opens only; kill on anything else
 * The lake's connection was opened read-only (SQLITE_OPEN_READONLY) before;
 * its -shm file, the readers' lock table, stays mapped as SQLite opened it.
 */
#ifndef TRACER_WEB_SANDBOX_H
#define TRACER_WEB_SANDBOX_H

/* 0, or -errno (logged). lake: the lake's path; prices: the price table's (NULL: none). */
int web_sandbox(const char *lake, const char *prices);

#endif /* TRACER_WEB_SANDBOX_H */
